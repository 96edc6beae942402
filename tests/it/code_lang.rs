//! The `code` toolset on Python, C and TypeScript through real language servers (pylsp,
//! clangd, typescript-language-server, installed by `scripts/test.sh`): name paths,
//! moved code followed, renames suggested, names several symbols carry refused.

use serde_json::{json, Value};

use crate::code::{id, Code, Repo};
use crate::harness::{Cairn, TempDir};

/// Two classes that each have a `send`, as in a real HTTP library.
pub const ADAPTERS: &str = "import os


class BaseAdapter:
    def send(self, request):
        raise NotImplementedError

    def close(self):
        pass


class HTTPAdapter(BaseAdapter):
    def __init__(self, retries=3):
        self.retries = retries

    def send(self, request, stream=False):
        conn = self.get(request)
        for e in range(3):
            x = e
        return conn


DEFAULT_RETRIES = 3
";

/// A server whose config file names `servers` (`py = \"pylsp\"` lines), bound to `repo`.
pub async fn with_servers(repo: Repo, servers: &str) -> (TempDir, Code) {
    if servers.contains("\"pylsp\"") {
        crate::harness::need("pylsp", "Debian's python3-pylsp");
    }
    let dir = TempDir::new();
    let cfg = dir.path().join("config.toml");
    std::fs::write(&cfg, format!("[lsp]\n{servers}\n")).unwrap();
    let c = Cairn::on(
        &dir.path().join("c.db"),
        &["--config", cfg.to_str().unwrap()],
    )
    .await;
    (dir, Code::bind(c, repo).await)
}

/// Domain "App" (text on `doc`) ← Namespace "lib" (code on `symbol` of `path`).
pub async fn spine(k: &Code, doc: &str, path: &str, symbol: &str) -> String {
    let d = id(&k
        .entity(
            "App",
            "core",
            &[],
            json!([{"command":"add","kind":"text","documentPath":doc,"startLine":1,"endLine":1}]),
        )
        .await);
    id(&k
        .entity(
            "lib",
            "module",
            &[&d],
            json!([{"command":"add","kind":"code","documentPath":path,"lspSymbol":symbol}]),
        )
        .await)
}

pub fn add(k: &Code, parent: &str, name: &str, cmd: Value) -> Value {
    json!({"projectId":k.pid,"name":name,"description":format!("{name} does things"),
           "categoryIds":[k.cat("method")],"parentIds":[parent],"commands":[cmd]})
}

fn lines(r: &Value) -> (i64, i64) {
    (
        r["startLine"].as_i64().unwrap(),
        r["endLine"].as_i64().unwrap(),
    )
}

#[tokio::test]
async fn python_symbols_by_name_path_and_ambiguous_names_refused() {
    let repo = Repo::new();
    repo.write("adapters.py", ADAPTERS);
    repo.write("README.md", "# App\n");
    repo.commit("init");
    let (_dir, k) = with_servers(repo, "py = \"pylsp\"").await;
    let ns = spine(&k, "README.md", "adapters.py", "BaseAdapter").await;
    // A bare name two methods carry: refused, with both candidates.
    let code = |sym: &str| json!({"command":"add","kind":"code","documentPath":"adapters.py","lspSymbol":sym});
    let e =
        k.c.call("create_entity", add(&k, &ns, "send", code("send")))
            .await;
    assert_eq!(e["error"]["code"], "VALIDATION_ERROR", "{e:#}");
    let msg = e["message"].as_str().unwrap();
    assert!(
        msg.contains("BaseAdapter/send") && msg.contains("HTTPAdapter/send"),
        "{msg}"
    );
    let cands = &e["error"]["details"]["candidates"];
    assert_eq!(cands[0]["namePath"], "BaseAdapter/send", "{e:#}");
    assert_eq!(cands[0]["startLine"], 5);
    assert_eq!(cands[1]["namePath"], "HTTPAdapter/send");
    assert_eq!(cands[1]["startLine"], 16);
    assert_eq!(cands[1]["kindName"], "method");
    assert_eq!(e["data"]["entity"], Value::Null, "nothing kept");
    // Each spelling of the name path anchors the method meant.
    for q in ["HTTPAdapter/send", "HTTPAdapter.send", "HTTPAdapter::send"] {
        let ok = k.c.ok("create_entity", add(&k, &ns, q, code(q))).await;
        let r = &ok["executed"][0]["reference"];
        assert_eq!(r["startLine"], 16, "{q}: {r:#}");
        assert_eq!(
            r["lspSymbol"], "HTTPAdapter/send",
            "recorded as its name path"
        );
        assert_eq!(r["lspKind"], 6);
    }
    // A bare name one symbol carries needs no path; a line inside picks among several.
    let ok =
        k.c.ok("create_entity", add(&k, &ns, "close", code("close")))
            .await;
    assert_eq!(
        ok["executed"][0]["reference"]["lspSymbol"],
        "BaseAdapter/close"
    );
    let mut near = code("send");
    near["startLine"] = json!(6);
    let ok =
        k.c.ok("create_entity", add(&k, &ns, "base send", near))
            .await;
    assert_eq!(ok["executed"][0]["reference"]["startLine"], 5);
    // A path that names nothing lists the name paths there are.
    let e =
        k.c.err(
            "create_entity",
            add(&k, &ns, "x", code("Session/send")),
            "INVALID_OPERATION",
        )
        .await;
    let syms = e["details"]["symbols"].as_array().unwrap();
    assert!(syms.contains(&json!("HTTPAdapter/send")), "{e:#}");
    // The analysis counts the tracked method as tracked, and only it.
    let a = k.analyze("adapters.py").await;
    let untracked: Vec<&str> = a["untracked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert!(!untracked.contains(&"close"), "{untracked:?}");
    assert!(untracked.contains(&"HTTPAdapter"), "{untracked:?}");
    let init = a["untracked"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "__init__")
        .unwrap();
    assert_eq!(init["namePath"], "HTTPAdapter/__init__");
    for t in a["tracked"].as_array().unwrap() {
        assert_eq!(t["isStale"], false, "{t:#}");
    }
    k.c.stop().await;
}

#[tokio::test]
async fn c_struct_members_by_name_path_through_clangd() {
    let repo = Repo::new();
    repo.write(
        "net.c",
        "struct base {\n    int send;\n    int close;\n};\n\nstruct http {\n    int send;\n};\n\nint run(void) { return 0; }\n",
    );
    repo.write("README.md", "# App\n");
    repo.commit("init");
    let k = Code::bind(Cairn::start().await, repo).await;
    let ns = spine(&k, "README.md", "net.c", "run").await;
    let code =
        |sym: &str| json!({"command":"add","kind":"code","documentPath":"net.c","lspSymbol":sym});
    let e =
        k.c.err(
            "create_entity",
            add(&k, &ns, "send", code("send")),
            "VALIDATION_ERROR",
        )
        .await;
    let paths: Vec<&str> = e["details"]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["namePath"].as_str().unwrap())
        .collect();
    assert_eq!(paths, ["base/send", "http/send"], "{e:#}");
    for q in ["http/send", "http.send", "http::send", "/http/send"] {
        let ok = k.c.ok("create_entity", add(&k, &ns, q, code(q))).await;
        let r = &ok["executed"][0]["reference"];
        assert_eq!(lines(r), (7, 7), "{q}: {r:#}");
        assert_eq!(r["lspSymbol"], "http/send");
    }
    let g = k.c.ok("get_entity", json!({"entityId": ns})).await;
    assert_eq!(lines(&g["references"][0]), (10, 10));
    k.c.stop().await;
}

/// pylsp ends a block at column 0 of the line after it: past the file's end for a
/// class on its last line. Both it and a file without a trailing newline map to the
/// block's own last line.
#[tokio::test]
async fn python_ranges_end_on_the_last_line_of_their_block() {
    let body = ADAPTERS.trim_end_matches("\n\n\nDEFAULT_RETRIES = 3\n");
    let repo = Repo::new();
    repo.write("with_newline.py", &format!("{body}\n"));
    repo.write("without_newline.py", body);
    repo.write("README.md", "# App\n");
    repo.commit("init");
    let last = body.lines().count() as i64;
    assert_eq!(last, 20);
    let (_dir, k) = with_servers(repo, "py = \"pylsp\"").await;
    let ns = spine(&k, "README.md", "with_newline.py", "BaseAdapter").await;
    let g = k.c.ok("get_entity", json!({"entityId": ns})).await;
    assert_eq!(lines(&g["references"][0]), (4, 9), "no trailing blank line");
    for file in ["with_newline.py", "without_newline.py"] {
        for (sym, want) in [
            ("HTTPAdapter", (12, last)),
            ("HTTPAdapter/send", (16, last)),
        ] {
            let ok =
                k.c.ok(
                    "create_entity",
                    add(
                        &k,
                        &ns,
                        sym,
                        json!({"command":"add","kind":"code","documentPath":file,"lspSymbol":sym}),
                    ),
                )
                .await;
            assert_eq!(lines(&ok["executed"][0]["reference"]), want, "{file} {sym}");
        }
        let a = k.analyze(file).await;
        assert_eq!(a["summary"]["staleCount"], 0, "{a:#}");
    }
    k.c.stop().await;
}

/// One rule for code references: a language server's symbol gives the range; without
/// a server the lines are the anchor and a symbol only labels them (checked to occur
/// in them).
#[tokio::test]
async fn code_references_without_a_language_server_take_lines_and_a_checked_label() {
    let repo = Repo::new();
    repo.write("adapters.py", ADAPTERS);
    repo.write(
        "tools/build.lua",
        "local x = 1\nlocal function go()\n  return x\nend\n",
    );
    repo.write("README.md", "# App\n");
    repo.commit("init");
    let (_dir, k) = with_servers(repo, "py = \"pylsp\"").await;
    let ns = spine(&k, "README.md", "adapters.py", "BaseAdapter").await;
    let lua = |extra: Value| {
        let mut c = json!({"command":"add","kind":"code","documentPath":"tools/build.lua"});
        c.as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        c
    };
    // No server: a symbol alone cannot be placed.
    let e =
        k.c.err(
            "create_entity",
            add(&k, &ns, "go", lua(json!({"lspSymbol":"go"}))),
            "VALIDATION_ERROR",
        )
        .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("no language server handles tools/build.lua"),
        "{e}"
    );
    // A label that is not in the lines given is refused; one that is labels them.
    let e =
        k.c.err(
            "create_entity",
            add(
                &k,
                &ns,
                "go",
                lua(json!({"lspSymbol":"go","startLine":1,"endLine":1})),
            ),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "lspSymbol", "{e}");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("does not occur in lines 1-1"),
        "{e}"
    );
    let ok =
        k.c.ok(
            "create_entity",
            add(
                &k,
                &ns,
                "go",
                lua(json!({"lspSymbol":"build/go","startLine":2,"endLine":4})),
            ),
        )
        .await;
    let r = &ok["executed"][0]["reference"];
    assert_eq!(
        (lines(r), r["lspSymbol"].clone()),
        ((2, 4), json!("build/go"))
    );
    // Lines alone do too, with or without a server.
    let ok =
        k.c.ok(
            "create_entity",
            add(&k, &ns, "x", lua(json!({"startLine":1,"endLine":1}))),
        )
        .await;
    assert_eq!(lines(&ok["executed"][0]["reference"]), (1, 1));
    let ok = k
        .c
        .ok(
            "create_entity",
            add(&k, &ns, "imports", json!({"command":"add","kind":"code","documentPath":"adapters.py","startLine":1,"endLine":1})),
        )
        .await;
    let r = &ok["executed"][0]["reference"];
    assert_eq!((lines(r), r.get("lspSymbol")), ((1, 1), None));
    // Neither: refused before anything runs.
    let e =
        k.c.err(
            "create_entity",
            add(&k, &ns, "none", lua(json!({"startLine":2}))),
            "VALIDATION_ERROR",
        )
        .await;
    assert!(e["message"].as_str().unwrap().contains("lspSymbol"), "{e}");
    // Re-anchoring a labelled reference to lines without its label is refused.
    let g = k.c.ok("get_entity", json!({"entityId": id(&k.c.ok("find_entities", json!({"projectId":k.pid,"name":"go"})).await["items"][0])})).await;
    let rid = g["references"][0]["id"].as_str().unwrap().to_string();
    let e = k
        .c
        .err(
            "alter_references",
            json!({"projectId":k.pid,"commands":[{"command":"update","referenceId":rid,"version":1,"startLine":1,"endLine":1}]}),
            "VALIDATION_ERROR",
        )
        .await;
    assert!(
        e["message"].as_str().unwrap().contains("does not occur"),
        "{e}"
    );
    k.c.stop().await;
}

fn tracked<'a>(a: &'a Value, sym: &str) -> &'a Value {
    a["tracked"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["lspSymbol"] == json!(sym))
        .unwrap_or_else(|| panic!("{sym} not tracked: {a:#}"))
}

/// The 1-based number of the line of `text` that starts with `prefix`.
fn line_of(text: &str, prefix: &str) -> i64 {
    text.lines()
        .position(|l| l.starts_with(prefix))
        .expect(prefix) as i64
        + 1
}

/// A reference follows its code: lines added or removed above it move it (served at
/// its new lines by analyze_document (with and without a document) and query, not stale); an
/// edit inside stales it; with the server, a method moved elsewhere with its body
/// unchanged follows too.
#[tokio::test]
async fn python_references_follow_code_that_moves_and_go_stale_when_it_changes() {
    let repo = Repo::new();
    repo.write("adapters.py", ADAPTERS);
    repo.write("README.md", "# App\n");
    repo.commit("init");
    let (_dir, k) = with_servers(repo, "py = \"pylsp\"").await;
    let ns = spine(&k, "README.md", "adapters.py", "BaseAdapter").await;
    let code = |sym: &str| json!({"command":"add","kind":"code","documentPath":"adapters.py","lspSymbol":sym});
    let send =
        k.c.ok(
            "create_entity",
            add(&k, &ns, "send", code("HTTPAdapter/send")),
        )
        .await;
    k.c.ok(
        "create_entity",
        add(&k, &ns, "close", code("BaseAdapter/close")),
    )
    .await;
    k.c.ok(
        "create_entity",
        add(&k, &ns, "base send", code("BaseAdapter/send")),
    )
    .await;
    assert_eq!(lines(&send["executed"][0]["reference"]), (16, 20));
    let at = |a: &Value, sym: &str| lines(tracked(a, sym));

    // Ten lines added above (uncommitted): everything below moves by ten.
    let pad: Vec<String> = (0..10).map(|i| format!("# note {i}")).collect();
    let pad: Vec<&str> = pad.iter().map(String::as_str).collect();
    k.repo.splice("adapters.py", 2, 0, &pad);
    let a = k.analyze("adapters.py").await;
    let t = tracked(&a, "HTTPAdapter/send");
    assert_eq!(
        (lines(t), &t["isStale"]),
        ((26, 30), &json!(false)),
        "{t:#}"
    );
    assert_eq!(t["movedFrom"], json!({"startLine": 16, "endLine": 20}));
    assert_eq!(at(&a, "BaseAdapter/close"), (18, 19));
    assert_eq!(a["summary"]["staleCount"], 0);
    assert_eq!(a["summary"]["movedCount"], 4, "{a:#}");
    let ch = k.c.ok("analyze_document", json!({"projectId":k.pid})).await;
    assert_eq!(ch["files"][0]["staleCount"], 0, "{ch:#}");
    assert_eq!(ch["files"][0]["movedCount"], 4);
    let q =
        k.c.ok(
            "query",
            json!({"entityId": id(&send["entity"]), "minRelevance": 0.0}),
        )
        .await;
    let node = q["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|n| n["id"] == send["entity"]["id"])
        .unwrap();
    assert_eq!(lines(&node["references"][0]), (26, 30), "{node:#}");

    // Lines removed above (the import and its blank lines): moved up.
    k.repo.write(
        "adapters.py",
        ADAPTERS.strip_prefix("import os\n\n\n").unwrap(),
    );
    let a = k.analyze("adapters.py").await;
    assert_eq!(at(&a, "HTTPAdapter/send"), (13, 17));
    assert_eq!(tracked(&a, "HTTPAdapter/send")["isStale"], false);
    assert_eq!(a["summary"]["staleCount"], 0);

    // An edit inside: stale, served at its recorded lines.
    k.repo.write(
        "adapters.py",
        &ADAPTERS.replace("for e in range(3)", "for e in range(5)"),
    );
    let a = k.analyze("adapters.py").await;
    let t = tracked(&a, "HTTPAdapter/send");
    assert_eq!(
        (&t["staleReason"], lines(t)),
        (&json!("lines_changed"), (16, 20))
    );
    assert_eq!(tracked(&a, "BaseAdapter/close")["isStale"], false);

    // A method moved to another place of its class, its body unchanged: the diff
    // deletes its old lines, and the server finds it where it went.
    let moved = ADAPTERS.replace(
        "    def send(self, request):\n        raise NotImplementedError\n\n    def close(self):\n        pass\n",
        "    def close(self):\n        pass\n\n    def send(self, request):\n        raise NotImplementedError\n",
    );
    k.repo.write("adapters.py", &moved);
    let a = k.analyze("adapters.py").await;
    let removed = a["diffHunks"].as_array().unwrap().iter().any(|h| {
        let (s, n) = (
            h["oldStart"].as_i64().unwrap(),
            h["oldLines"].as_i64().unwrap(),
        );
        n > 0 && s <= 5 && 5 < s + n
    });
    assert!(removed, "the diff removes send's old lines: {a:#}");
    let t = tracked(&a, "BaseAdapter/send");
    let c = line_of(&moved, "    def send(self, request):");
    assert_eq!(
        (lines(t), &t["isStale"]),
        ((c, c + 1), &json!(false)),
        "{t:#}"
    );
    assert_eq!(t["movedFrom"], json!({"startLine": 5, "endLine": 6}));
    assert_eq!(at(&a, "BaseAdapter/close"), (5, 6));
    assert_eq!(at(&a, "HTTPAdapter/send"), (16, 20));
    k.c.stop().await;
}

/// A method renamed: its reference is stale (`symbol_missing`) and suggests the
/// declaration whose body is closest to its recorded lines, so one update re-anchors it.
#[tokio::test]
async fn python_renames_are_suggested_and_re_anchored_in_one_call() {
    let repo = Repo::new();
    repo.write("adapters.py", ADAPTERS);
    repo.write("README.md", "# App\n");
    repo.commit("init");
    let (_dir, k) = with_servers(repo, "py = \"pylsp\"").await;
    let ns = spine(&k, "README.md", "adapters.py", "BaseAdapter").await;
    let send = k
        .c
        .ok(
            "create_entity",
            add(&k, &ns, "send", json!({"command":"add","kind":"code","documentPath":"adapters.py","lspSymbol":"HTTPAdapter/send"})),
        )
        .await;
    let renamed = ADAPTERS.replace(
        "def send(self, request, stream=False)",
        "def transmit(self, request, stream=False)",
    );
    k.repo.write("adapters.py", &renamed);
    let a = k.analyze("adapters.py").await;
    let t = tracked(&a, "HTTPAdapter/send");
    assert_eq!(t["staleReason"], "symbol_missing", "{t:#}");
    let sug = &t["suggestedSymbol"];
    assert_eq!(sug["namePath"], "HTTPAdapter/transmit", "{t:#}");
    assert_eq!(lines(sug), (16, 20));
    assert!(sug["similarity"].as_f64().unwrap() > 0.8, "{sug}");
    // Not the other send: BaseAdapter/send is still there and is no candidate.
    let rid = send["executed"][0]["reference"]["id"].as_str().unwrap();
    let up = k
        .c
        .ok(
            "alter_references",
            json!({"projectId":k.pid,"commands":[{"command":"update","referenceId":rid,"version":1,"lspSymbol":"HTTPAdapter/transmit"}]}),
        )
        .await;
    let r = &up["executed"][0]["reference"];
    assert_eq!(
        (lines(r), &r["lspSymbol"]),
        ((16, 20), &json!("HTTPAdapter/transmit"))
    );
    let a = k.analyze("adapters.py").await;
    assert_eq!(tracked(&a, "HTTPAdapter/transmit")["isStale"], false);
    // A body rewritten beyond recognition suggests nothing.
    k.repo.write(
        "adapters.py",
        &renamed
            .replace("def transmit(self, request, stream=False):\n        conn = self.get(request)\n        for e in range(3):\n            x = e\n        return conn\n",
                     "def other(self):\n        return 42\n"),
    );
    let a = k.analyze("adapters.py").await;
    let t = tracked(&a, "HTTPAdapter/transmit");
    assert_eq!(t["staleReason"], "symbol_missing", "{t:#}");
    assert!(t.get("suggestedSymbol").is_none(), "{t:#}");
    k.c.stop().await;
}

/// analyze_document lists the declarations an agent would track (classes, methods,
/// functions, module constants), not locals, parameters or imports; maxTokens cuts
/// the list and says how much it left out.
#[tokio::test]
async fn python_untracked_symbols_are_declarations_within_max_tokens() {
    let mut many = String::new();
    for i in 0..60 {
        many.push_str(&format!(
            "def handler_{i}(event, retries=3):\n    conn = open(event)\n    for e in range(retries):\n        x = e\n    return conn\n\n\n"
        ));
    }
    let repo = Repo::new();
    repo.write("adapters.py", ADAPTERS);
    repo.write("handlers.py", &many);
    repo.write("README.md", "# App\n");
    repo.commit("init");
    let (_dir, k) = with_servers(repo, "py = \"pylsp\"").await;
    spine(&k, "README.md", "adapters.py", "BaseAdapter").await;
    let a = k.analyze("adapters.py").await;
    let names: Vec<&str> = a["untracked"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "send",
            "close",
            "HTTPAdapter",
            "__init__",
            "send",
            "DEFAULT_RETRIES"
        ],
        "{a:#}"
    );
    assert_eq!(a["summary"]["untrackedCount"], 6);
    assert_eq!(a["summary"]["untrackedOmitted"], 0);
    // 60 functions with their locals: 60 declarations, cut to the budget.
    let a =
        k.c.ok(
            "analyze_document",
            json!({"projectId":k.pid,"documentPath":"handlers.py"}),
        )
        .await;
    assert_eq!(a["summary"]["untrackedCount"], 60, "{}", a["summary"]);
    assert_eq!(a["untracked"].as_array().unwrap().len(), 60);
    assert!(a["untracked"]
        .as_array()
        .unwrap()
        .iter()
        .all(|s| s["kindName"] == "function"));
    let a =
        k.c.ok(
            "analyze_document",
            json!({"projectId":k.pid,"documentPath":"handlers.py","maxTokens":500}),
        )
        .await;
    let shown = a["untracked"].as_array().unwrap().len();
    let omitted = a["summary"]["untrackedOmitted"].as_u64().unwrap() as usize;
    assert!(
        shown > 5 && omitted > 0 && shown + omitted == 60,
        "{shown} + {omitted}"
    );
    assert!(a.to_string().len() <= 500 * 4, "{}", a.to_string().len());
    k.c.stop().await;
}

/// Without configuration a usual server on PATH serves Python (pylsp from Debian
/// when pyright is not installed).
#[tokio::test]
async fn python_is_served_without_configuration() {
    let repo = Repo::new();
    repo.write("adapters.py", ADAPTERS);
    repo.write("README.md", "# App\n");
    repo.commit("init");
    let c = Cairn::start().await;
    let d = c
        .ok("init_project", json!({"name":"Py","repoPath":repo.root()}))
        .await;
    let servers = d["languageServers"].as_array().unwrap();
    let of = |lang: &str| {
        servers
            .iter()
            .find(|s| s["language"] == lang)
            .unwrap()
            .clone()
    };
    assert!(
        of("python")["server"].as_str().unwrap().contains("py"),
        "{servers:?}"
    );
    assert!(
        of("c")["server"].as_str().unwrap().starts_with("clangd"),
        "{servers:?}"
    );
    let go = of("go");
    assert!(
        go["server"].is_string() || go["install"].as_str().unwrap().contains("gopls"),
        "{go}"
    );
    c.stop().await;
    let k = Code::bind(Cairn::start().await, repo).await;
    let ns = spine(&k, "README.md", "adapters.py", "HTTPAdapter/send").await;
    let g = k.c.ok("get_entity", json!({"entityId": ns})).await;
    assert_eq!(lines(&g["references"][0]), (16, 20));
    let a = k.analyze("adapters.py").await;
    assert!(
        a["languageServer"].as_str().unwrap().contains("py"),
        "{a:#}"
    );
    k.c.stop().await;
}

/// TypeScript through typescript-language-server (npm, installed by
/// `scripts/test.sh`), found on PATH: name paths anchor real methods.
#[tokio::test]
async fn typescript_symbols_by_name_path() {
    crate::harness::need(
        "typescript-language-server",
        "typescript-language-server and typescript@5 from npm",
    );
    let repo = Repo::new();
    repo.write(
        "src/adapters.ts",
        "export class BaseAdapter {\n  send(request: string): string {\n    return request;\n  }\n}\n\nexport class HTTPAdapter extends BaseAdapter {\n  send(request: string): string {\n    const conn = request.trim();\n    return conn;\n  }\n}\n\nexport function retries(n: number): number {\n  return n * 2;\n}\n",
    );
    repo.write("README.md", "# App\n");
    repo.commit("init");
    let k = Code::bind(Cairn::start().await, repo).await;
    let ns = spine(&k, "README.md", "src/adapters.ts", "retries").await;
    let code = |sym: &str| json!({"command":"add","kind":"code","documentPath":"src/adapters.ts","lspSymbol":sym});
    let e =
        k.c.err(
            "create_entity",
            add(&k, &ns, "send", code("send")),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(
        e["details"]["candidates"][1]["namePath"], "HTTPAdapter/send",
        "{e:#}"
    );
    let ok =
        k.c.ok(
            "create_entity",
            add(&k, &ns, "send", code("HTTPAdapter.send")),
        )
        .await;
    assert_eq!(lines(&ok["executed"][0]["reference"]), (8, 11));
    k.c.stop().await;
}
