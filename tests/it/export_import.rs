//! `cairn export` and `cairn import` at the shell: a SQLite database filled through
//! the tools of every toolset moves to PostgreSQL (`$CAIRN_TEST_PG`) and back into
//! a new SQLite file, and the read tools answer the same (ids, versions, text) at
//! every step while the exported files stay byte for byte the same; and what a bad
//! export or a used database gets.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Output;

use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::ServiceExt;
use serde_json::{json, Value};

use crate::harness::{cli, data_home, default_config, model_dir, postgres, Cairn, TempDir, BIN};

/// `cairn --db DB ARGS…` where DB is exactly `db` (a file, or a URL), whatever
/// backend the suite runs on.
fn at(db: &OsString, home: &Path, args: &[&str]) -> Output {
    std::process::Command::new(BIN)
        .env_remove("CAIRN_CONFIG")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
        .env("XDG_DATA_HOME", home)
        .env_remove("CAIRN_DB")
        .env("CAIRN_MODEL_DIR", model_dir())
        .arg("--db")
        .arg(db)
        .arg("--config")
        .arg(default_config())
        .args(args)
        .output()
        .expect("run cairn")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// `at` that must succeed.
fn at_ok(db: &OsString, home: &Path, args: &[&str]) {
    let out = at(db, home, args);
    assert!(
        out.status.success(),
        "cairn {args:?}: {}",
        text(&out.stderr)
    );
}

/// A server on exactly `db`.
async fn serve(db: &OsString, home: &Path, file: &Path) -> Cairn {
    let (db, home) = (db.clone(), home.to_path_buf());
    let cmd = tokio::process::Command::new(BIN).configure(|c| {
        c.arg("--db")
            .arg(&db)
            .arg("--config")
            .arg(default_config())
            .arg("serve")
            .env_remove("CAIRN_CONFIG")
            .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
            .env("XDG_DATA_HOME", &home)
            .env_remove("CAIRN_DB")
            .env("CAIRN_MODEL_DIR", model_dir());
    });
    let client =
        ().serve(TokioChildProcess::new(cmd).expect("spawn cairn"))
            .await
            .expect("MCP initialize");
    Cairn::from_client(client, file)
}

/// Every file of an export directory, by name, as bytes.
fn files(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut v: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .expect("an export directory")
        .map(|e| {
            let e = e.unwrap();
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// What the fill made, for the reads.
struct Made {
    project: String,
    feature: String,
    tasks: Vec<String>,
    atom: String,
    molecule: String,
    old_memory: String,
    new_memory: String,
    entity: String,
    code_project: String,
}

/// Fills the database behind `c` through the tools: tasks with sections,
/// dependencies and tags, a task moved along, graph atoms and a molecule with a
/// changelog, memory atoms of which one supersedes another, a diary entry, and
/// code entities with references in a real repository.
async fn fill(c: Cairn, repo: crate::code::Repo) -> (crate::code::Code, Made) {
    let project = c.project("Store").await;
    let feature = c.feature(&project, "Checkout").await;
    let mut tasks = Vec::new();
    for (i, title) in ["Price the cart", "Charge the card", "Email the receipt"]
        .iter()
        .enumerate()
    {
        let t = c
            .task(
                json!({"title":title,"projectId":project,"featureId":feature,
                         "summary":format!("step {i} of checkout"),"tags":"checkout,backend",
                         "priority":(["HIGH","MEDIUM","LOW"][i]),"complexity":(i + 2)}),
            )
            .await;
        tasks.push(crate::harness::id_of(&t));
    }
    c.ok(
        "manage_sections",
        json!({"operation":"add","entityType":"TASK","entityId":tasks[0],"title":"Context Files",
               "usageDescription":"files","content":"src/cart.rs\nsrc/price/\n"}),
    )
    .await;
    c.ok(
        "manage_sections",
        json!({"operation":"add","entityType":"TASK","entityId":tasks[0],"title":"Plan",
               "usageDescription":"how","content":"Sum the lines, then the tax."}),
    )
    .await;
    c.ok(
        "manage_dependency",
        json!({"operation":"create","fromId":tasks[0],"toId":tasks[1],"type":"BLOCKS"}),
    )
    .await;
    c.ok(
        "manage_dependency",
        json!({"operation":"create","fromId":tasks[1],"toId":tasks[2],"type":"RELATES_TO"}),
    )
    .await;
    c.advance("task", &tasks[0]).await;
    c.ok(
        "manage_template",
        json!({"operation":"create","name":"Bug","targetEntityType":"TASK","tags":"bugs"}),
    )
    .await;

    let molecule = c
        .ok(
            "manage_graph",
            json!({"operation":"create","entityType":"molecule","projectId":project,"name":"Payments",
                   "knowledge":"Money moves through the gateway.","createdByTaskId":tasks[0]}),
        )
        .await["molecule"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let atom = c
        .ok(
            "manage_graph",
            json!({"operation":"create","entityType":"atom","projectId":project,"name":"Cart pricing",
                   "paths":"[\"src/cart.rs\",\"src/price/**\"]","knowledge":"Prices are cents, never floats.",
                   "createdByTaskId":tasks[0],"moleculeId":molecule}),
        )
        .await["atom"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    c.ok(
        "manage_graph",
        json!({"operation":"update","entityType":"atom","id":atom,"version":1,"lastTaskId":tasks[0],
               "knowledge":"Prices are integer cents, never floats; tax rounds half up."}),
    )
    .await;
    c.ok(
        "manage_changelog",
        json!({"operation":"append","parentType":"atom","parentId":atom,"taskId":tasks[0],
               "summary":"tax rounding written down"}),
    )
    .await;

    let remember = |now: &str, value: &str, from: &str| {
        json!({"operation":"remember","now":now,"atom":{"type":"Assumption",
               "statement":format!("The card gateway's API version is {value}"),"predicate":"api_version",
               "value":value,"about":"Service:gateway","confidence":0.7,
               "validationMethod":"read the gateway's changelog","validFrom":from},
               "sources":[{"refType":"release_notes","uri":format!("https://gateway.example/v{value}")}]})
    };
    let old = c
        .ok(
            "manage_memory",
            remember("2025-11-14T10:00:00Z", "2024-06", "2025-11-01"),
        )
        .await;
    let new = c
        .ok(
            "manage_memory",
            remember("2025-12-10T10:00:00Z", "2025-01", "2025-12-01"),
        )
        .await;
    c.ok(
        "manage_memory",
        json!({"operation":"remember","now":"2025-12-11T10:00:00Z","atom":{"type":"Convention",
               "statement":"Amounts are integer cents in every service","area":"naming",
               "context":format!("Project:{project}")}}),
    )
    .await;
    c.ok(
        "manage_diary",
        json!({"operation":"write","projectId":project,"taskId":tasks[0],
               "accomplishments":"priced the cart","learnings":"cents, not floats"}),
    )
    .await;

    let code = crate::code::Code::bind(c, repo).await;
    let text = |a: i64, b: i64| json!([{"command":"add","kind":"text","documentPath":"docs/design.md","startLine":a,"endLine":b}]);
    let domain = crate::harness::id_of(&code.entity("Shop", "core", &[], text(1, 3)).await);
    let entity = crate::harness::id_of(
        &code
            .entity("Pricing", "capability", &[&domain], text(5, 8))
            .await,
    );
    let code_project = code.pid.clone();
    let made = Made {
        project,
        feature,
        tasks,
        atom,
        molecule,
        old_memory: old["atom"]["id"].as_str().unwrap().to_string(),
        new_memory: new["atom"]["id"].as_str().unwrap().to_string(),
        entity,
        code_project,
    };
    (code, made)
}

/// The answers of the read tools over what `fill` made, each tool's `data`.
async fn answers(c: &Cairn, m: &Made) -> Vec<(String, Value)> {
    let mut calls: Vec<(&str, Value)> = vec![
        (
            "query_container",
            json!({"operation":"overview","containerType":"project"}),
        ),
        (
            "query_container",
            json!({"operation":"overview","containerType":"project","id":m.project}),
        ),
        (
            "query_container",
            json!({"operation":"overview","containerType":"feature","id":m.feature}),
        ),
        (
            "query_container",
            json!({"operation":"get","containerType":"project","id":m.project}),
        ),
        (
            "query_container",
            json!({"operation":"get","containerType":"feature","id":m.feature}),
        ),
        (
            "query_container",
            json!({"operation":"search","containerType":"task","projectId":m.project,"query":"card"}),
        ),
        (
            "query_sections",
            json!({"entityType":"TASK","entityId":m.tasks[0]}),
        ),
        (
            "query_dependencies",
            json!({"containerType":"task","id":m.tasks[1]}),
        ),
        ("list_tags", json!({})),
        ("get_next_task", json!({"projectId":m.project})),
        ("get_blocked_tasks", json!({"projectId":m.project})),
        ("query_templates", json!({"operation":"list"})),
        (
            "query_graph",
            json!({"operation":"get","entityType":"atom","id":m.atom}),
        ),
        (
            "query_graph",
            json!({"operation":"get","entityType":"molecule","id":m.molecule}),
        ),
        (
            "query_graph",
            json!({"operation":"context","projectId":m.project,"paths":"src/price/tax.rs"}),
        ),
        (
            "query_graph",
            json!({"operation":"search","entityType":"atom","projectId":m.project,"query":"cents"}),
        ),
        (
            "manage_changelog",
            json!({"operation":"search","parentType":"atom","parentId":m.atom}),
        ),
        ("query_memory", json!({"operation":"get","id":m.old_memory})),
        (
            "query_memory",
            json!({"operation":"get","id":m.new_memory,"includeHistory":true}),
        ),
        (
            "query_memory",
            json!({"operation":"recall","projectId":m.project,"query":"gateway api version"}),
        ),
        (
            "query_memory",
            json!({"operation":"list","includeHistory":true}),
        ),
        ("manage_diary", json!({"operation":"list"})),
        ("get_entity", json!({"entityId":m.entity})),
        ("find_entities", json!({"projectId":m.code_project})),
        ("project_overview", json!({"projectId":m.code_project})),
        (
            "find",
            json!({"query":"integer cents","projectId":m.project}),
        ),
    ];
    for t in &m.tasks {
        calls.push((
            "query_container",
            json!({"operation":"get","containerType":"task","id":t}),
        ));
    }
    let mut out = Vec::new();
    for (tool, args) in calls {
        let data = c.ok(tool, args.clone()).await;
        out.push((format!("{tool} {args}"), data));
    }
    out
}

fn same(a: &[(String, Value)], b: &[(String, Value)], what: &str) {
    assert_eq!(a.len(), b.len());
    for ((call, x), (_, y)) in a.iter().zip(b) {
        assert_eq!(x, y, "{what}: {call} answers differently");
    }
}

#[tokio::test]
async fn a_sqlite_database_moves_to_postgresql_and_back_unchanged() {
    let dir = TempDir::new();
    let home = data_home(&dir.path().join("first.db"));
    let file = |name: &str| dir.path().join(name);
    let os = |p: PathBuf| OsString::from(p);
    let repo = crate::code::Repo::new();
    repo.write(
        "docs/design.md",
        "# Shop\n\nIntro.\n\n## Design\n\nThe design.\nMore design.\n\n## Plan\n\nSteps.\n",
    );
    repo.commit("init");

    let first = os(file("first.db"));
    let c = serve(&first, &home, &file("first.db")).await;
    let (code, made) = fill(c, repo).await;
    let before = answers(&code.c, &made).await;
    let crate::code::Code { c, repo, .. } = code;
    c.stop().await;
    let out1 = file("export-1");
    at_ok(&first, &home, &["export", out1.to_str().unwrap()]);

    // The middle of the trip: PostgreSQL when the suite has one, else another file.
    let middle = match postgres() {
        Some(base) => os(crate::pg_url::database_for(&base, &file("middle.db"), "t_").into()),
        None => {
            eprintln!("no $CAIRN_TEST_PG: the trip's middle is a SQLite file, not PostgreSQL");
            os(file("middle.db"))
        }
    };
    at_ok(&middle, &home, &["import", out1.to_str().unwrap()]);
    let c = serve(&middle, &home, &file("middle.db")).await;
    let mid = answers(&c, &made).await;
    c.stop().await;
    same(&before, &mid, "after the import into the middle");
    let out2 = file("export-2");
    at_ok(&middle, &home, &["export", out2.to_str().unwrap()]);
    assert_eq!(files(&out1), files(&out2), "the middle's export differs");

    let last = os(file("last.db"));
    at_ok(&last, &home, &["import", out2.to_str().unwrap()]);
    let c = serve(&last, &home, &file("last.db")).await;
    let after = answers(&c, &made).await;
    c.stop().await;
    same(&before, &after, "back in SQLite");
    let out3 = file("export-3");
    at_ok(&last, &home, &["export", out3.to_str().unwrap()]);
    assert_eq!(files(&out1), files(&out3), "the last export differs");

    // The trip kept what the reads show: a superseded memory and its successor.
    let old = &before
        .iter()
        .find(|(call, _)| call.contains(&made.old_memory))
        .unwrap()
        .1;
    assert_eq!(old["atom"]["status"], "SUPERSEDED", "{old:#}");
    drop(repo);
}

/// A copy of the export in `from` at `to`, with `change` applied to its files.
fn altered(from: &Path, to: &Path, change: impl FnOnce(&Path)) {
    std::fs::create_dir(to).unwrap();
    for (name, bytes) in files(from) {
        std::fs::write(to.join(name), bytes).unwrap();
    }
    change(to);
}

/// Line `n` (1-based) of `file` replaced by `line`.
fn replace_line(file: &Path, n: usize, line: &str) {
    let text = std::fs::read_to_string(file).unwrap();
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines[n - 1] = line.to_string();
    std::fs::write(file, lines.join("\n") + "\n").unwrap();
}

#[test]
fn bad_exports_are_refused_by_file_and_line_and_leave_nothing_behind() {
    let dir = TempDir::new();
    let src = dir.path().join("src.db");
    let p = crate::harness::cli_ok(
        &src,
        "manage_container",
        r#"{"operation":"create","containerType":"project","name":"Shop"}"#,
    );
    let pid = p["data"]["project"]["id"].as_str().unwrap().to_string();
    for title in ["a", "b", "c"] {
        crate::harness::cli_ok(
            &src,
            "manage_container",
            &json!({"operation":"create","containerType":"task","title":title,"projectId":pid})
                .to_string(),
        );
    }
    let good = dir.path().join("good");
    let out = cli(&src, &["export", good.to_str().unwrap()]);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let lines = std::fs::read_to_string(good.join("tasks.jsonl")).unwrap();
    assert_eq!(lines.lines().count(), 3);

    // An export never writes into a directory that holds files.
    let again = cli(&src, &["export", good.to_str().unwrap()]);
    assert_eq!(again.status.code(), Some(1));
    assert!(
        text(&again.stderr).contains("is not empty"),
        "{}",
        text(&again.stderr)
    );
    let orphan = dir.path().join("no/such/parent");
    let e = cli(&src, &["export", orphan.to_str().unwrap()]);
    assert!(
        text(&e.stderr).contains("its parent directory must exist"),
        "{}",
        text(&e.stderr)
    );

    let target = dir.path().join("target.db");
    let refused = |name: &str, change: &dyn Fn(&Path), says: &[&str]| {
        let bad = dir.path().join(name);
        altered(&good, &bad, |d| change(d));
        let out = cli(&target, &["import", bad.to_str().unwrap()]);
        let err = text(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{name}: {err}");
        for s in says {
            assert!(err.contains(s), "{name}: '{err}' should say '{s}'");
        }
    };
    let tasks = |d: &Path| d.join("tasks.jsonl");
    let third = lines.lines().nth(2).unwrap().to_string();
    refused(
        "truncated",
        &|d| {
            let text = std::fs::read(tasks(d)).unwrap();
            std::fs::write(tasks(d), &text[..text.len() - 20]).unwrap();
        },
        &["tasks.jsonl line 3", "truncated"],
    );
    refused(
        "corrupt",
        &|d| replace_line(&tasks(d), 2, "{\"id\": nonsense"),
        &["tasks.jsonl line 2", "not a JSON object"],
    );
    refused(
        "wrong-type",
        &|d| {
            replace_line(
                &tasks(d),
                3,
                &third.replace("\"version\":1", "\"version\":\"1\""),
            )
        },
        &["tasks.jsonl line 3", "version must be a whole number"],
    );
    refused(
        "unknown-column",
        &|d| {
            replace_line(
                &tasks(d),
                1,
                &third.replace("{\"id\"", "{\"colour\":\"red\",\"id\""),
            )
        },
        &["tasks.jsonl line 1", "tasks has no column colour"],
    );
    refused(
        "duplicate",
        &|d| replace_line(&tasks(d), 1, &third),
        &["tasks.jsonl line 3", "the database refused the row"],
    );
    refused(
        "missing-row",
        &|d| {
            let text = std::fs::read_to_string(tasks(d)).unwrap();
            let kept: Vec<&str> = text.lines().take(2).collect();
            std::fs::write(tasks(d), kept.join("\n") + "\n").unwrap();
        },
        &["tasks.jsonl holds 2 rows where the manifest says 3"],
    );
    refused(
        "missing-file",
        &|d| std::fs::remove_file(tasks(d)).unwrap(),
        &["tasks.jsonl", "every table of an export has its file"],
    );
    refused(
        "stranger",
        &|d| std::fs::write(d.join("notes.txt"), "hello").unwrap(),
        &["notes.txt is no file of an export"],
    );
    refused(
        "newer",
        &|d| {
            let m = std::fs::read_to_string(d.join("manifest.json")).unwrap();
            std::fs::write(
                d.join("manifest.json"),
                m.replace("\"format\": 1", "\"format\": 2"),
            )
            .unwrap();
        },
        &["manifest.json", "format 2", "reads format 1 and older"],
    );
    refused(
        "no-manifest",
        &|d| std::fs::remove_file(d.join("manifest.json")).unwrap(),
        &["manifest.json", "did not finish"],
    );
    // A line past the cap is refused at the cap, without reading it all.
    refused(
        "huge",
        &|d| std::fs::write(tasks(d), vec![b'x'; (32 << 20) + 10]).unwrap(),
        &["tasks.jsonl line 1", "longer than 32 MiB"],
    );
    let missing = cli(
        &target,
        &["import", dir.path().join("nowhere").to_str().unwrap()],
    );
    assert_eq!(missing.status.code(), Some(1));
    assert!(
        text(&missing.stderr).contains("nowhere does not exist"),
        "{}",
        text(&missing.stderr)
    );

    // None of those left a row: the good export goes in whole, once.
    let ok = cli(&target, &["import", good.to_str().unwrap()]);
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    assert!(
        text(&ok.stderr).contains("import: tasks 3"),
        "{}",
        text(&ok.stderr)
    );
    let twice = cli(&target, &["import", good.to_str().unwrap()]);
    assert_eq!(twice.status.code(), Some(3), "{}", text(&twice.stderr));
    let err = text(&twice.stderr);
    assert!(
        err.contains("not empty") && err.contains("3 tasks"),
        "{err}"
    );
    let got = crate::harness::cli_ok(
        &target,
        "query_container",
        &json!({"operation":"get","containerType":"project","id":pid}).to_string(),
    );
    assert_eq!(got["data"]["project"]["name"], "Shop");
}
