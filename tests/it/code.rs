//! The `code` toolset through MCP, against a real git repository built by each test
//! and a real language server (clangd, installed by `scripts/test.sh`) on C sources.

use std::collections::HashMap;
use std::path::Path;
use std::process::Command;

use serde_json::{json, Value};

use crate::harness::{Cairn, TempDir};

/// A throwaway git repository with an identity of its own (no global config needed).
pub struct Repo {
    pub dir: TempDir,
}

impl Repo {
    pub fn new() -> Repo {
        let r = Repo {
            dir: TempDir::new(),
        };
        r.git(&["init", "-q", "-b", "main"]);
        r
    }
    pub fn path(&self) -> &Path {
        self.dir.path()
    }
    pub fn root(&self) -> String {
        self.path().to_string_lossy().into_owned()
    }
    pub fn git(&self, args: &[&str]) -> String {
        let out = Command::new("git")
            .current_dir(self.path())
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .output()
            .expect("git runs");
        assert!(
            out.status.success(),
            "git {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
    pub fn write(&self, rel: &str, text: &str) {
        let p = self.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }
    pub fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path().join(rel)).unwrap()
    }
    pub fn commit(&self, msg: &str) {
        self.git(&["add", "-A"]);
        self.git(&["commit", "-q", "-m", msg]);
    }
    /// Replaces line `n` (1-based) of a file with `lines` (several or none).
    pub fn splice(&self, rel: &str, n: usize, remove: usize, lines: &[&str]) {
        let text = self.read(rel);
        let mut v: Vec<String> = text.lines().map(str::to_string).collect();
        let tail = v.split_off(n - 1);
        v.extend(lines.iter().map(|s| s.to_string()));
        v.extend(tail.into_iter().skip(remove));
        self.write(rel, &(v.join("\n") + "\n"));
    }
}

/// A C file of `n` functions `f0..f{n-1}`, each 5 lines, after a 2-line header:
/// function i spans lines 3 + 6i ..= 7 + 6i.
pub fn c_source(n: usize) -> String {
    let mut s = String::from("#include <stdio.h>\n\n");
    for i in 0..n {
        s.push_str(&format!(
            "int f{i}(int a) {{\n    int b = a + {i};\n    b = b * 2;\n    return b;\n}}\n\n"
        ));
    }
    s
}

pub fn f_lines(i: i64) -> (i64, i64) {
    (3 + 6 * i, 7 + 6 * i)
}

const DOC: &str =
    "# Shop\n\nIntro.\n\n## Design\n\nThe design.\nMore design.\n\n## Plan\n\nSteps.\n";

/// A server, a repository with `src/calc.c` (6 functions) and `docs/design.md`,
/// committed, and a project bound to it.
pub struct Code {
    pub c: Cairn,
    pub repo: Repo,
    pub pid: String,
    pub cats: HashMap<String, String>,
}

impl Code {
    pub async fn start() -> Code {
        crate::harness::need("clangd", "Debian's clangd");
        let repo = Repo::new();
        repo.write("src/calc.c", &c_source(6));
        repo.write("docs/design.md", DOC);
        repo.commit("init");
        let c = Cairn::start().await;
        Code::bind(c, repo).await
    }

    pub async fn bind(c: Cairn, repo: Repo) -> Code {
        let d = c
            .ok(
                "init_project",
                json!({"name":"Shop","repoPath":repo.root()}),
            )
            .await;
        let cats = d["categories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                (
                    c["name"].as_str().unwrap().to_string(),
                    c["id"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        Code {
            c,
            repo,
            pid: d["projectId"].as_str().unwrap().to_string(),
            cats,
        }
    }

    pub fn cat(&self, name: &str) -> &str {
        &self.cats[name]
    }

    /// Creates an entity that must succeed; returns its data.
    pub async fn entity(&self, name: &str, cat: &str, parents: &[&str], cmds: Value) -> Value {
        self.c
            .ok(
                "create_entity",
                json!({"projectId":self.pid,"name":name,"description":format!("{name} does things"),
                       "categoryIds":[self.cat(cat)],"parentIds":parents,"commands":cmds}),
            )
            .await["entity"]
            .clone()
    }

    /// Domain "Shop" ← Feature "Pricing" ← Namespace "calc"; returns their ids.
    pub async fn spine(&self) -> (String, String, String) {
        let text = |a: i64, b: i64| json!([{"command":"add","kind":"text","documentPath":"docs/design.md","startLine":a,"endLine":b}]);
        let d = id(&self.entity("Shop", "core", &[], text(1, 3)).await);
        let f = id(&self
            .entity("Pricing", "capability", &[&d], text(5, 8))
            .await);
        let n = id(&self
            .entity("calc", "module", &[&f], json!([{"command":"add","kind":"code","documentPath":"src/calc.c","lspSymbol":"f0"}]))
            .await);
        (d, f, n)
    }

    /// A Unit entity on function `f{i}` under `parent`.
    pub async fn unit(&self, i: usize, parent: &str) -> Value {
        self.entity(
            &format!("f{i}"),
            "function",
            &[parent],
            json!([{"command":"add","kind":"code","documentPath":"src/calc.c","lspSymbol":format!("f{i}"),"description":format!("function {i}")}]),
        )
        .await
    }

    pub async fn analyze(&self, path: &str) -> Value {
        self.c
            .ok(
                "analyze_document",
                json!({"projectId":self.pid,"documentPath":path}),
            )
            .await
    }
}

/// The id of category `name` in an `init_project` answer (`d`), as JSON.
pub fn category(d: &Value, name: &str) -> Value {
    d["categories"]
        .as_array()
        .and_then(|cs| cs.iter().find(|c| c["name"] == name))
        .unwrap_or_else(|| panic!("no category {name} in {d}"))["id"]
        .clone()
}

pub fn id(v: &Value) -> String {
    v["id"].as_str().expect("id").to_string()
}

fn tracked<'a>(a: &'a Value, sym: &str) -> &'a Value {
    a["tracked"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["lspSymbol"] == json!(sym))
        .unwrap_or_else(|| panic!("{sym} not tracked: {a:#}"))
}

fn reference_of(e: &Value) -> String {
    e["referenceIds"][0].as_str().unwrap().to_string()
}

#[tokio::test]
async fn init_project_binds_repositories_and_refuses_what_is_not_one() {
    let k = Code::start().await;
    assert_eq!(k.cats.len(), 3 + 2 + 3 + 6 + 5, "default categories");
    let o = k.c.ok("project_overview", json!({"projectId":k.pid})).await;
    assert_eq!(o["stats"]["domains"], 0);
    assert_eq!(o["categories"].as_array().unwrap().len(), 19);
    // Not a work tree, relative path, a second repository for one project.
    let plain = TempDir::new();
    let e =
        k.c.err(
            "init_project",
            json!({"name":"x","repoPath":plain.path().to_string_lossy()}),
            "INVALID_OPERATION",
        )
        .await;
    assert!(e["message"].as_str().unwrap().contains("git init"), "{e}");
    let e =
        k.c.err(
            "init_project",
            json!({"name":"x","repoPath":"rel/path"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "repoPath");
    k.c.err(
        "init_project",
        json!({"projectId":k.pid,"repoPath":k.repo.root()}),
        "INVALID_OPERATION",
    )
    .await;
    // An existing tasks project takes a repository.
    let p = k.c.project("Existing").await;
    let d =
        k.c.ok(
            "init_project",
            json!({"projectId":p,"repoPath":k.repo.root()}),
        )
        .await;
    assert_eq!(d["projectId"], json!(p));
    assert_eq!(d["createdProject"], false);
    // A project without a repository says how to bind one.
    let q = k.c.project("Bare").await;
    let e =
        k.c.err("find_entities", json!({"projectId":q}), "INVALID_OPERATION")
            .await;
    assert!(e["message"].as_str().unwrap().contains("init_project"));
    // Categories: new ones, duplicates refused.
    let c =
        k.c.ok(
            "create_category",
            json!({"projectId":k.pid,"name":"entrypoint","scope":"Unit"}),
        )
        .await;
    assert_eq!(c["category"]["scope"], "Unit");
    k.c.err(
        "create_category",
        json!({"projectId":k.pid,"name":"Entrypoint","scope":"unit"}),
        "INVALID_OPERATION",
    )
    .await;
    k.c.stop().await;
}

#[tokio::test]
async fn code_references_take_their_range_from_clangd_and_symbols_are_validated() {
    let k = Code::start().await;
    let (_, _, ns) = k.spine().await;
    let u = k.unit(2, &ns).await;
    let g = k.c.ok("get_entity", json!({"entityId":id(&u)})).await;
    let r = &g["references"][0];
    assert_eq!(
        (
            r["startLine"].as_i64().unwrap(),
            r["endLine"].as_i64().unwrap()
        ),
        f_lines(2)
    );
    assert_eq!(r["lspKind"], 12, "function");
    assert_eq!(r["contentType"], "code:c");
    assert_eq!(r["commitSha"].as_str().unwrap().len(), 40);
    assert_eq!(g["parents"][0]["id"], json!(ns));
    // An unknown symbol: the first add fails, so nothing is kept.
    let env = k
        .c
        .call(
            "create_entity",
            json!({"projectId":k.pid,"name":"ghost","description":"d","categoryIds":[k.cat("function")],"parentIds":[ns],
                   "commands":[{"command":"add","kind":"code","documentPath":"src/calc.c","lspSymbol":"nope"}]}),
        )
        .await;
    assert_eq!(env["success"], false);
    assert_eq!(env["error"]["code"], "INVALID_OPERATION");
    assert!(
        env["message"]
            .as_str()
            .unwrap()
            .contains("Symbol 'nope' not found in src/calc.c"),
        "{env}"
    );
    assert!(env["error"]["details"]["symbols"]
        .as_array()
        .unwrap()
        .contains(&json!("f5")));
    assert_eq!(env["data"]["entity"], Value::Null);
    assert_eq!(env["data"]["failed"]["index"], 0);
    let found =
        k.c.ok("find_entities", json!({"projectId":k.pid,"name":"ghost"}))
            .await;
    assert_eq!(found["total"], 0, "nothing kept");
    // Untracked symbols: the functions nobody references yet.
    let a = k.analyze("src/calc.c").await;
    let untracked: Vec<&str> = a["untracked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(untracked, vec!["f1", "f3", "f4", "f5"]);
    assert_eq!(a["summary"]["untrackedCount"], 4);
    assert_eq!(a["summary"]["trackedCount"], 2);
    assert_eq!(a["untracked"][0]["kindName"], "function");
    assert_eq!(a["documentType"], "code");
    // No language server for the language: a manual range is required and used.
    k.repo.write(
        "tools/build.lua",
        "local x = 1\nlocal function go()\n  return x\nend\n",
    );
    k.repo.commit("lua");
    let e = k
        .c
        .err(
            "create_entity",
            json!({"projectId":k.pid,"name":"go","description":"d","categoryIds":[k.cat("function")],"parentIds":[ns],
                   "commands":[{"command":"add","kind":"code","documentPath":"tools/build.lua","lspSymbol":"go"}]}),
            "VALIDATION_ERROR",
        )
        .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("no language server"),
        "{e}"
    );
    let lua = k
        .c
        .ok(
            "create_entity",
            json!({"projectId":k.pid,"name":"go","description":"d","categoryIds":[k.cat("function")],"parentIds":[ns],
                   "commands":[{"command":"add","kind":"code","documentPath":"tools/build.lua","lspSymbol":"go","startLine":2,"endLine":4}]}),
        )
        .await;
    assert_eq!(lua["executed"][0]["reference"]["startLine"], 2);
    assert_eq!(lua["executed"][0]["reference"]["contentType"], "code:lua");
    k.c.stop().await;
}

#[tokio::test]
async fn staleness_reasons_at_line_level_with_suggested_ranges() {
    let k = Code::start().await;
    let (_, feat, ns) = k.spine().await;
    let units: Vec<Value> = units_on(&k, &ns, &[1, 2, 3, 4]).await;
    let design = k
        .entity("Design doc", "directory", &[&feat], json!([{"command":"add","kind":"text","documentPath":"docs/design.md","startLine":5,"endLine":8,"anchor":"## Design"}]))
        .await;
    let clean = k.analyze("src/calc.c").await;
    assert_eq!(clean["summary"]["staleCount"], 0);
    assert!(clean["diffHunks"].as_array().unwrap().is_empty());
    let changed = k.c.ok("analyze_document", json!({"projectId":k.pid})).await;
    assert_eq!(changed["files"], json!([]));

    // Committed edit inside f2; uncommitted edits: two lines above f1 (shift
    // everything below), f3 renamed (symbol_missing), f4 untouched.
    let (s2, _) = f_lines(2);
    k.repo
        .splice("src/calc.c", (s2 + 2) as usize, 1, &["    b = b * 3;"]);
    k.repo.commit("change f2");
    k.repo.splice("src/calc.c", 2, 0, &["/* a */", "/* b */"]);
    let text = k
        .repo
        .read("src/calc.c")
        .replace("int f3(", "int f3_renamed(");
    k.repo.write("src/calc.c", &text);
    let a = k.analyze("src/calc.c").await;
    let t1 = tracked(&a, "f1");
    assert_eq!(t1["isStale"], false, "{t1:#}");
    let (s1, e1) = f_lines(1);
    // Moved, not changed: served where it is now.
    assert_eq!(
        (&t1["startLine"], &t1["endLine"]),
        (&json!(s1 + 2), &json!(e1 + 2))
    );
    assert_eq!(t1["movedFrom"], json!({"startLine": s1, "endLine": e1}));
    assert!(t1.get("suggestedRange").is_none());
    let t2 = tracked(&a, "f2");
    assert_eq!(t2["isStale"], true);
    assert_eq!(t2["staleReason"], "lines_changed");
    assert_eq!(t2["affectedHunks"].as_array().unwrap().len(), 1);
    let t3 = tracked(&a, "f3");
    assert_eq!(t3["staleReason"], "symbol_missing");
    // The rename is suggested: the function whose body reads most like f3's.
    assert_eq!(t3["suggestedSymbol"]["namePath"], "f3_renamed", "{t3:#}");
    let t4 = tracked(&a, "f4");
    assert_eq!(t4["isStale"], false);
    assert!(t4["movedFrom"].is_object());
    assert_eq!(a["summary"]["staleCount"], 2);
    assert!(a["diffHunks"][0]["context"]
        .as_str()
        .unwrap()
        .contains("+/* a */"));
    // The renamed function now shows up untracked.
    assert!(a["untracked"]
        .as_array()
        .unwrap()
        .iter()
        .any(|s| s["name"] == "f3_renamed"));
    let changed = k.c.ok("analyze_document", json!({"projectId":k.pid})).await;
    assert_eq!(changed["files"][0]["documentPath"], "src/calc.c");
    // f2 (edited) and f3 (its first line renamed) by lines; symbols need analyze_document.
    assert_eq!(changed["files"][0]["staleCount"], 2);
    // Asked again with nothing changed, it answers the same from the diffs it knows;
    // after another edit (f3's name back), from the new text.
    let again = k.c.ok("analyze_document", json!({"projectId":k.pid})).await;
    assert_eq!(again["files"], changed["files"]);
    let renamed = k.repo.read("src/calc.c");
    k.repo
        .write("src/calc.c", &renamed.replace("int f3_renamed(", "int f3("));
    let after = k.c.ok("analyze_document", json!({"projectId":k.pid})).await;
    assert_eq!(after["files"][0]["staleCount"], 1, "{after}");
    k.repo.write("src/calc.c", &renamed);

    // One alter_references call repairs the shifted reference at HEAD.
    let r1 = reference_of(&units[0]);
    let up =
        k.c.ok(
            "alter_references",
            json!({"projectId":k.pid,"commands":[{"command":"update","id":r1,"version":1}]}),
        )
        .await;
    assert_eq!(
        up["executed"][0]["reference"]["startLine"],
        s1 + 2,
        "range from clangd"
    );
    assert_eq!(up["executed"][0]["reference"]["version"], 2);
    assert_eq!(up["commitSha"].as_str().unwrap().len(), 40);
    let a = k.analyze("src/calc.c").await;
    let t1 = tracked(&a, "f1");
    assert_eq!(
        (t1["isStale"].clone(), t1.get("movedFrom")),
        (json!(false), None)
    );
    // A stale version is a conflict naming the current one.
    let e =
        k.c.err(
            "alter_references",
            json!({"projectId":k.pid,"commands":[{"command":"update","id":r1,"version":1}]}),
            "CONFLICT",
        )
        .await;
    assert_eq!(e["details"]["currentVersion"], 2);

    // Text: the heading vanishes → anchor_missing; an edit above only shifts.
    let doc = k
        .repo
        .read("docs/design.md")
        .replace("## Design", "## Architecture");
    k.repo.write("docs/design.md", &doc);
    let a = k.analyze("docs/design.md").await;
    assert_eq!(a["documentType"], "text");
    let t = a["tracked"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["anchor"] == "## Design")
        .unwrap()
        .clone();
    assert_eq!(t["staleReason"], "anchor_missing", "{t:#}");
    assert_eq!(t["entityId"], json!(id(&design)));

    // Rename (committed): document_missing with renamedTo; delete: without.
    k.repo
        .git(&["mv", "docs/design.md", "docs/architecture.md"]);
    k.repo.commit("rename doc");
    let a = k.analyze("docs/design.md").await;
    assert_eq!(a["exists"], false);
    for t in a["tracked"].as_array().unwrap() {
        assert_eq!(t["staleReason"], "document_missing");
        assert_eq!(t["renamedTo"], "docs/architecture.md");
    }
    k.repo.git(&["rm", "-q", "docs/architecture.md"]);
    k.repo.commit("delete doc");
    let a = k.analyze("docs/design.md").await;
    assert_eq!(tracked_any(&a)["staleReason"], "document_missing");
    assert!(tracked_any(&a).get("renamedTo").is_none());
    let changed = k.c.ok("analyze_document", json!({"projectId":k.pid})).await;
    let doc = changed["files"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["documentPath"] == "docs/design.md")
        .unwrap();
    assert_eq!(doc["missing"], true);
    // Updating a reference whose file is gone says what to do.
    let rid = reference_of(&design);
    let e =
        k.c.err(
            "alter_references",
            json!({"projectId":k.pid,"commands":[{"command":"update","id":rid,"version":1}]}),
            "INVALID_OPERATION",
        )
        .await;
    assert_eq!(e["details"]["staleReason"], "document_missing");
    k.c.stop().await;
}

fn tracked_any(a: &Value) -> &Value {
    &a["tracked"][0]
}

async fn units_on(k: &Code, parent: &str, which: &[usize]) -> Vec<Value> {
    let mut v = Vec::new();
    for i in which {
        v.push(k.unit(*i, parent).await);
    }
    v
}

#[tokio::test]
async fn reference_on_a_dirty_tree_has_an_exact_baseline() {
    let k = Code::start().await;
    let (_, _, ns) = k.spine().await;
    // Uncommitted edit above f5 before the reference is made.
    k.repo.splice("src/calc.c", 2, 0, &["/* dirty */"]);
    let u = k.unit(5, &ns).await;
    let g = k.c.ok("get_entity", json!({"entityId":id(&u)})).await;
    let (s5, _) = f_lines(5);
    assert_eq!(g["references"][0]["startLine"], s5 + 1);
    // Nothing changed since the reference was read: not stale, nothing shifted.
    let a = k.analyze("src/calc.c").await;
    let t = tracked(&a, "f5");
    assert_eq!(t["isStale"], false);
    assert!(t.get("movedFrom").is_none(), "{t:#}");
    // Committing the same text changes nothing either.
    k.repo.commit("dirty");
    let a = k.analyze("src/calc.c").await;
    assert_eq!(tracked(&a, "f5")["isStale"], false);
    assert!(tracked(&a, "f5").get("movedFrom").is_none());
    // An edit below the reference neither stales nor shifts it.
    let len = k.repo.read("src/calc.c").lines().count();
    k.repo
        .splice("src/calc.c", len + 1, 0, &["int tail(void) { return 0; }"]);
    let a = k.analyze("src/calc.c").await;
    assert_eq!(tracked(&a, "f5")["isStale"], false);
    assert!(tracked(&a, "f5").get("movedFrom").is_none());
    assert_eq!(tracked(&a, "f5")["affectedHunks"], json!([]));
    assert!(!a["diffHunks"].as_array().unwrap().is_empty());
    k.c.stop().await;
}

#[tokio::test]
async fn commands_run_in_order_and_stop_at_the_first_failure() {
    let k = Code::start().await;
    let (dom, _, ns) = k.spine().await;
    let a = k.unit(1, &ns).await;
    let b = k.unit(2, &ns).await;
    let ghost = "0192f000-0000-7000-8000-0000000000ee";
    let env =
        k.c.call(
            "update_entity",
            json!({"entityId":id(&a),"version":1,"description":"new text","commands":[
                {"command":"relate","entityId":id(&b),"note":"shares the accumulator"},
                {"command":"link","entityId":id(&b),"linkType":"CALLS"},
                {"command":"attach","referenceId":ghost},
                {"command":"link","entityId":id(&b),"linkType":"IMPORTS"}
            ]}),
        )
        .await;
    assert_eq!(env["success"], false);
    assert_eq!(env["error"]["code"], "NOT_FOUND");
    let d = &env["data"];
    assert_eq!(d["executed"].as_array().unwrap().len(), 2);
    assert_eq!(d["failed"]["index"], 2);
    assert_eq!(d["failed"]["command"]["command"], "attach");
    assert_eq!(d["skipped"][0]["index"], 3);
    assert_eq!(d["entity"]["description"], "new text");
    // What ran stays.
    let g = k.c.ok("get_entity", json!({"entityId":id(&a)})).await;
    let rel: Vec<(&str, &str)> = g["relations"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["type"].as_str().unwrap(),
                r["direction"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(rel, vec![("RELATED_TO", "out"), ("CALLS", "out")]);
    assert_eq!(g["relations"][0]["note"], "shares the accumulator");
    assert_eq!(g["entity"]["version"], 2);
    let gb = k.c.ok("get_entity", json!({"entityId":id(&b)})).await;
    assert_eq!(
        gb["relations"].as_array().unwrap().len(),
        2,
        "seen from the other end too"
    );

    // The last reference cannot be unattached, unless another was attached first in the same call.
    let ra = reference_of(&a);
    let rb = reference_of(&b);
    let env = k
        .c
        .call("update_entity", json!({"entityId":id(&a),"version":2,"commands":[{"command":"unattach","referenceId":ra}]}))
        .await;
    assert_eq!(env["error"]["code"], "INVALID_OPERATION");
    assert!(env["message"].as_str().unwrap().contains("last"));
    // Nothing took effect, so nothing was written: the version to retry with is still 2.
    let same = k.c.ok("get_entity", json!({"entityId":id(&a)})).await;
    assert_eq!(same["entity"]["version"], 2);
    let ok = k
        .c
        .ok(
            "update_entity",
            json!({"entityId":id(&a),"version":2,"commands":[{"command":"attach","referenceId":rb},{"command":"unattach","referenceId":ra}]}),
        )
        .await;
    assert_eq!(ok["entity"]["referenceIds"], json!([rb]));
    // The shared reference cannot be deleted while attached; the orphan can.
    let e =
        k.c.err(
            "alter_references",
            json!({"projectId":k.pid,"commands":[{"command":"delete","id":rb,"version":1}]}),
            "INVALID_OPERATION",
        )
        .await;
    let names: Vec<&str> = e["details"]["attachedEntities"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["f1", "f2"]);
    let v = k.c.ok("validate_graph", json!({"projectId":k.pid})).await;
    assert_eq!(v["summary"]["byType"]["orphaned_reference"], 1);
    let env = k
        .c
        .call(
            "alter_references",
            json!({"projectId":k.pid,"commands":[{"command":"delete","id":ra,"version":1},{"command":"delete","id":ra,"version":1}]}),
        )
        .await;
    assert_eq!(env["data"]["executed"].as_array().unwrap().len(), 1);
    assert_eq!(env["error"]["code"], "NOT_FOUND");
    // Unrelate/unlink; link only between Component/Unit entities.
    let ver = k.c.ok("get_entity", json!({"entityId":id(&a)})).await["entity"]["version"]
        .as_i64()
        .unwrap();
    k.c.ok(
        "update_entity",
        json!({"entityId":id(&a),"version":ver,"commands":[{"command":"unrelate","entityId":id(&b)},{"command":"unlink","entityId":id(&b),"linkType":"CALLS"}]}),
    )
    .await;
    let env = k
        .c
        .call("update_entity", json!({"entityId":id(&a),"version":ver + 1,"commands":[{"command":"link","entityId":dom,"linkType":"CALLS"}]}))
        .await;
    assert_eq!(env["error"]["code"], "INVALID_OPERATION");
    k.c.stop().await;
}

#[tokio::test]
async fn queries_overview_validation_and_project_delete() {
    let k = Code::start().await;
    let (dom, feat, ns) = k.spine().await;
    let u1 = k.unit(1, &ns).await;
    k.unit(2, &ns).await;
    let by_scope =
        k.c.ok("find_entities", json!({"projectId":k.pid,"scope":"Unit"}))
            .await;
    assert_eq!(by_scope["total"], 2);
    let kids =
        k.c.ok("find_entities", json!({"projectId":k.pid,"parentId":ns}))
            .await;
    assert_eq!(kids["total"], 2);
    let by_cat =
        k.c.ok(
            "find_entities",
            json!({"projectId":k.pid,"categoryId":k.cat("capability")}),
        )
        .await;
    assert_eq!(by_cat["items"][0]["id"], json!(feat));
    let in_doc =
        k.c.ok(
            "find_entities",
            json!({"projectId":k.pid,"documentPath":"./src/calc.c","limit":2}),
        )
        .await;
    assert_eq!(
        (in_doc["total"].as_i64(), in_doc["hasMore"].as_bool()),
        (Some(3), Some(true))
    );
    let de =
        k.c.ok(
            "find_entities",
            json!({"projectId":k.pid,"documentPath":"src/calc.c"}),
        )
        .await;
    assert_eq!(de["items"].as_array().unwrap().len(), 3);
    assert_eq!(de["items"][0]["name"], "calc", "Namespace before Units");
    // Each with its references in that document.
    for e in de["items"].as_array().unwrap() {
        let refs = e["references"].as_array().unwrap();
        assert!(!refs.is_empty(), "{e:#}");
        assert!(
            refs.iter().all(|r| r["documentPath"] == "src/calc.c"),
            "{e:#}"
        );
    }
    // Overview with a markdown file written inside the repository only.
    let o =
        k.c.ok(
            "project_overview",
            json!({"projectId":k.pid,"outputPath":"docs/OVERVIEW.md","includeDescriptions":true}),
        )
        .await;
    assert_eq!(
        o["stats"],
        json!({"domains":1,"features":1,"namespaces":1,"components":0,"units":2,"references":5})
    );
    assert_eq!(o["domains"][0]["id"], json!(dom));
    assert_eq!(o["features"][0]["parentId"], json!(dom));
    assert_eq!(o["skillPath"], "docs/OVERVIEW.md");
    let md = k.repo.read("docs/OVERVIEW.md");
    assert!(md.starts_with("# Project Overview: Shop"), "{md}");
    assert!(
        md.contains("## Features")
            && md.contains("Pricing")
            && md.contains("`src/calc.c` (3 reference(s))")
    );
    let e =
        k.c.err(
            "project_overview",
            json!({"projectId":k.pid,"outputPath":"../escape.md"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "outputPath");
    k.c.err(
        "find_entities",
        json!({"projectId":k.pid,"documentPath":"/abs"}),
        "VALIDATION_ERROR",
    )
    .await;

    // validate_graph: a clean graph, then an orphan (fixable) and a commit gone from history.
    let v = k.c.ok("validate_graph", json!({"projectId":k.pid})).await;
    assert_eq!(v["valid"], true, "{v:#}");
    assert_eq!(v["summary"]["checks"].as_array().unwrap().len(), 11);
    // Re-anchor f1's reference on a commit that is then dropped from history.
    k.repo.git(&["checkout", "-q", "-b", "side"]);
    k.repo.write("side.txt", "x\n");
    k.repo.commit("side");
    let r1 = reference_of(&u1);
    k.c.ok(
        "alter_references",
        json!({"projectId":k.pid,"commands":[{"command":"update","id":r1,"version":1}]}),
    )
    .await;
    k.repo.git(&["checkout", "-q", "main"]);
    k.repo.git(&["branch", "-q", "-D", "side"]);
    k.repo.git(&["reflog", "expire", "--expire=now", "--all"]);
    k.repo.git(&["gc", "-q", "--prune=now"]);
    let v1 = k.c.ok("get_entity", json!({"entityId":id(&u1)})).await["entity"]["version"]
        .as_i64()
        .unwrap();
    let extra = k
        .c
        .ok(
            "update_entity",
            json!({"entityId":id(&u1),"version":v1,"commands":[{"command":"add","kind":"code","documentPath":"src/calc.c","lspSymbol":"f5"},{"command":"unattach","referenceId":r1}]}),
        )
        .await;
    assert_eq!(extra["executed"].as_array().unwrap().len(), 2);
    let v =
        k.c.ok(
            "validate_graph",
            json!({"projectId":k.pid,"issueType":"stale_commit"}),
        )
        .await;
    assert_eq!(v["issues"][0]["referenceId"], json!(r1), "{v:#}");
    assert_eq!(v["summary"]["byType"]["orphaned_reference"], 1);
    let v =
        k.c.ok(
            "validate_graph",
            json!({"projectId":k.pid,"fix":true,"limit":1}),
        )
        .await;
    assert_eq!(v["summary"]["fixed"], 1);
    assert_eq!(v["pagination"]["returned"], 1);
    let v = k.c.ok("validate_graph", json!({"projectId":k.pid})).await;
    assert_eq!(v["valid"], true, "{v:#}");

    // Deleting the project removes everything it owns.
    k.c.ok(
        "manage_container",
        json!({"operation":"delete","containerType":"project","id":k.pid,"cascade":true}),
    )
    .await;
    k.c.err("get_entity", json!({"entityId":id(&u1)}), "NOT_FOUND")
        .await;
    k.c.err("find_entities", json!({"projectId":k.pid}), "NOT_FOUND")
        .await;
    k.c.stop().await;
}

#[tokio::test]
async fn language_servers_time_out_fail_clearly_and_can_be_configured() {
    crate::harness::need("clangd", "Debian's clangd");
    let dir = TempDir::new();
    let cfg = dir.path().join("config.toml");
    // `cat` answers nothing useful and never exits: the request must time out. The
    // deadline leaves clangd room to start on a loaded machine, and this clangd lives
    // long enough to answer once and then dies.
    std::fs::write(
        &cfg,
        "lsp_timeout_ms = 2500\n[lsp]\nc = \"cat\"\npy = [\"/nonexistent/pyls\"]\n\
         h = [\"timeout\", \"7\", \"clangd\", \"--background-index=false\"]\n",
    )
    .unwrap();
    let repo = Repo::new();
    repo.write("a.c", "int main(void) { return 0; }\n");
    repo.write("b.py", "def f():\n    return 1\n");
    repo.write(
        "c.h",
        "int one(void) { return 1; }\nint two(void) { return 2; }\n",
    );
    repo.commit("init");
    let c = Cairn::on(
        &dir.path().join("c.db"),
        &["--config", cfg.to_str().unwrap()],
    )
    .await;
    let k = Code::bind(c, repo).await;
    let dom = k
        .entity("App", "core", &[], json!([{"command":"add","kind":"text","documentPath":"b.py","startLine":1,"endLine":2}]))
        .await;
    let started = std::time::Instant::now();
    let add = |path: &str| {
        json!({"projectId":k.pid,"name":"m","description":"d","categoryIds":[k.cat("module")],"parentIds":[id(&dom)],
               "commands":[{"command":"add","kind":"code","documentPath":path,"lspSymbol":"main"}]})
    };
    let e =
        k.c.err("create_entity", add("a.c"), "INVALID_OPERATION")
            .await;
    assert!(
        e["message"].as_str().unwrap().contains("did not answer"),
        "{e}"
    );
    assert!(started.elapsed().as_secs() < 10);
    // The server is restarted on the next call (and times out again, still clearly).
    let e =
        k.c.err("create_entity", add("a.c"), "INVALID_OPERATION")
            .await;
    assert!(
        e["message"].as_str().unwrap().contains("did not answer"),
        "{e}"
    );
    let e =
        k.c.err("create_entity", add("b.py"), "INVALID_OPERATION")
            .await;
    assert!(
        e["message"].as_str().unwrap().contains("cannot be started"),
        "{e}"
    );
    // A server that dies (this clangd lives 7 s) is restarted on the next call.
    let ok = k.c.ok("create_entity", json!({"projectId":k.pid,"name":"one","description":"d","categoryIds":[k.cat("module")],"parentIds":[id(&dom)],
        "commands":[{"command":"add","kind":"code","documentPath":"c.h","lspSymbol":"one"}]})).await;
    assert_eq!(ok["executed"][0]["reference"]["startLine"], 1);
    crate::harness::eventually("the short-lived clangd exits", 60, || {
        !running(&["timeout", "7", "clangd", "--background-index=false"])
    })
    .await;
    let ok = k.c.ok("create_entity", json!({"projectId":k.pid,"name":"two","description":"d","categoryIds":[k.cat("module")],"parentIds":[id(&dom)],
        "commands":[{"command":"add","kind":"code","documentPath":"c.h","lspSymbol":"two"}]})).await;
    assert_eq!(ok["executed"][0]["reference"]["startLine"], 2);
    // Analysis still answers from git alone and says why symbols are missing.
    let a =
        k.c.ok(
            "analyze_document",
            json!({"projectId":k.pid,"documentPath":"a.c"}),
        )
        .await;
    assert!(a["lspError"].as_str().unwrap().contains("did not answer"));
    k.c.stop().await;
}

/// One name per idea: an entity's id is `entityId`, a reference's `referenceId`,
/// wherever a tool names one; the older names stay accepted. The command objects are
/// described in the schema, with what each needs.
#[tokio::test]
async fn entity_and_reference_ids_have_one_published_name_and_commands_a_schema() {
    let k = Code::start().await;
    let (dom, _, ns) = k.spine().await;
    let by_new = k.c.ok("get_entity", json!({"entityId":dom})).await;
    let by_old = k.c.ok("get_entity", json!({"id":dom})).await;
    assert_eq!(by_new["entity"]["id"], by_old["entity"]["id"]);
    let e =
        k.c.err(
            "get_entity",
            json!({"id":dom,"entityId":ns}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "entityId");
    let u = k.unit(1, &ns).await;
    let r = reference_of(&u);
    k.c.ok(
        "alter_references",
        json!({"projectId":k.pid,"commands":[{"command":"update","referenceId":r,"version":1}]}),
    )
    .await;
    let tools = k.c.tools().await;
    let schema = |name: &str| {
        serde_json::to_value(tools.iter().find(|t| t.name == name).unwrap()).unwrap()["inputSchema"]
            ["properties"]["commands"]["items"]["oneOf"]
            .clone()
    };
    for shape in schema("alter_references").as_array().unwrap() {
        let req = shape["required"].as_array().unwrap();
        assert!(
            req.contains(&json!("version")) && req.contains(&json!("referenceId")),
            "{shape}"
        );
    }
    let add = schema("create_entity")
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["properties"]["command"]["enum"] == json!(["add"]))
        .cloned()
        .unwrap();
    assert_eq!(add["properties"]["kind"]["enum"], json!(["code", "text"]));
    assert_eq!(add["required"], json!(["command", "kind", "documentPath"]));
}

/// Categories are named by id or by name, so an agent need not look ids up first.
#[tokio::test]
async fn category_ids_accept_category_names() {
    let k = Code::start().await;
    let text = json!([{"command":"add","kind":"text","documentPath":"docs/design.md","startLine":1,"endLine":3}]);
    let d = k
        .c
        .ok(
            "create_entity",
            json!({"projectId":k.pid,"name":"Shop","description":"the shop","categoryIds":["Core"],"commands":text}),
        )
        .await;
    let got =
        k.c.ok("get_entity", json!({"entityId":d["entity"]["id"]}))
            .await;
    assert_eq!(got["categories"][0]["name"], "core", "{got}");
    let e = k
        .c
        .err(
            "create_entity",
            json!({"projectId":k.pid,"name":"X","description":"x","categoryIds":"nope","commands":text}),
            "NOT_FOUND",
        )
        .await;
    assert!(e["message"].as_str().unwrap().contains("core"), "{e}");
}

/// Whether a process runs with exactly this command line (read from `/proc`).
fn running(argv: &[&str]) -> bool {
    let want = argv.join("\0") + "\0";
    std::fs::read_dir("/proc").is_ok_and(|dir| {
        dir.flatten()
            .any(|e| std::fs::read(e.path().join("cmdline")).is_ok_and(|c| c == want.as_bytes()))
    })
}
