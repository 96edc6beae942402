//! An agent's session replayed through rmcp's client (the real MCP client, as an
//! agent's host drives Cairn), with the latency of every call kind: p50 and p99.
//!
//! The session is fixed (a seeded script), so every run makes the same calls: a
//! project planned into features and tasks with sections and dependencies, work
//! picked with `get_next_task` and moved along, the knowledge graph read with
//! `query_graph context` under a token budget and written back, each task's briefing,
//! code entities anchored to a real git repository (one by one, then a file's rest in
//! bulk) and checked for staleness after edits, and hybrid search, `find` and
//! subgraph queries. The first search pays for loading the model
//! and embedding the backlog; it is reported on its own row. Also measured here:
//! creates per second through the same client, one call at a time.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};

use crate::client::bin;
use crate::{ms, row, Dir, Seeded};

type Client = RunningService<RoleClient, ()>;

const PRIORITIES: [&str; 3] = ["HIGH", "MEDIUM", "LOW"];

async fn start(db: &Path, model: Option<&Path>) -> Client {
    let db = db.to_path_buf();
    let model = model.map(Path::to_path_buf);
    let cmd = tokio::process::Command::new(bin()).configure(|c| {
        c.arg("--db").arg(crate::client::db_arg(&db)).arg("serve");
        c.env_remove("CAIRN_CONFIG")
            .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
            .env_remove("CAIRN_DB");
        if let Some(m) = &model {
            c.env("CAIRN_MODEL_DIR", m);
        }
    });
    let (t, _) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::inherit())
        .spawn()
        .expect("spawn cairn");
    ().serve(t).await.expect("initialize")
}

/// Calls a tool that must succeed; answers its `data`.
async fn call(c: &Client, tool: &str, args: Value) -> Value {
    let mut p = CallToolRequestParams::new(tool.to_string());
    if let Value::Object(m) = args {
        p = p.with_arguments(m);
    }
    let r = c.call_tool(p).await.expect("tools/call");
    let env = r.structured_content.expect("structured content");
    assert_eq!(env["success"], json!(true), "{tool}: {env}");
    env["data"].clone()
}

/// Latencies per call kind.
#[derive(Default)]
struct Kinds(BTreeMap<String, Vec<Duration>>);

impl Kinds {
    async fn timed(&mut self, c: &Client, kind: &str, tool: &str, args: Value) -> Value {
        let t = Instant::now();
        let v = call(c, tool, args).await;
        self.0
            .entry(kind.to_string())
            .or_default()
            .push(t.elapsed());
        v
    }
}

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=b",
            "-c",
            "user.email=b@b",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("git")
        .status
        .success();
    assert!(ok, "git {args:?}");
}

/// A repository of 40 Python modules and a design document. Code references give a
/// symbol and its lines: with a Python server on PATH (pylsp, pyright) the server
/// resolves the symbol, without one the lines are the anchor and `track_declarations`
/// reports the files as served by none.
fn repository(dir: &Path) {
    git(dir, &["init", "-q", "-b", "main"]);
    for m in 0..40 {
        let mut s = String::new();
        for f in 0..12 {
            s.push_str(&format!(
                "def handler_{m}_{f}(event):\n    \"\"\"Handle event kind {f} of module {m}: validate, retry with backoff, publish.\"\"\"\n    return publish(validate(event), retries=3)\n\n"
            ));
        }
        let p = dir.join(format!("src/svc{}/mod{m}.py", m % 8));
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, s).unwrap();
    }
    std::fs::create_dir_all(dir.join("docs")).unwrap();
    std::fs::write(
        dir.join("docs/design.md"),
        "# Design\n\nEvents flow from the gateway to handlers.\n\n## Retries\n\nBackoff doubles, at most 3.\n",
    )
    .unwrap();
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "init"]);
}

pub fn run(model: Option<&Path>) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(session(model));
}

async fn creates() {
    let d = Dir::new("rmcp-creates");
    let c = start(&d.0.join("c.db"), None).await;
    let p = call(
        &c,
        "manage_container",
        json!({"operation":"create","containerType":"project","name":"Rates"}),
    )
    .await["project"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let t0 = call(
        &c,
        "manage_container",
        json!({"operation":"create","containerType":"task","title":"anchor","projectId":p}),
    )
    .await["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let n = 2000;
    let t = Instant::now();
    for i in 0..n {
        call(
            &c,
            "manage_container",
            json!({"operation":"create","containerType":"task","projectId":p,
            "title":format!("Task {i}"),"summary":"Benchmark task","priority":PRIORITIES[i % 3]}),
        )
        .await;
    }
    let tasks = n as f64 / t.elapsed().as_secs_f64();
    let t = Instant::now();
    for i in 0..n {
        call(&c, "manage_graph", json!({"operation":"create","entityType":"atom","projectId":p,"createdByTaskId":t0,
            "name":format!("Area {i}"),"paths":format!("[\"src/m{}/**\",\"lib/m{i}/*.rs\"]", i % 97),
            "knowledge":crate::knowledge(i, 600)})).await;
    }
    let atoms = n as f64 / t.elapsed().as_secs_f64();
    row(
        "tasks created through rmcp's client (2,000, one at a time)",
        format!("{tasks:.0}/s"),
        "≥ 2,500/s",
    );
    row(
        "atoms created through rmcp's client (2,000, one at a time)",
        format!("{atoms:.0}/s"),
        "≥ 2,500/s",
    );
    let _ = c.cancel().await;
}

async fn session(model: Option<&Path>) {
    creates().await;
    let d = Dir::new("session");
    let repo = d.0.join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    repository(&repo);
    let c = start(&d.0.join("s.db"), model).await;
    let mut k = Kinds::default();
    let mut rng = Seeded::new(7);

    // Planning: the project, bound to the repository, three features, 30 tasks.
    let bound = k
        .timed(
            &c,
            "init_project",
            "init_project",
            json!({"name":"Events","repoPath":repo.to_string_lossy()}),
        )
        .await;
    let pid = bound["projectId"].as_str().unwrap().to_string();
    let cat = |name: &str| {
        bound["categories"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == name)
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let mut features = Vec::new();
    for f in 0..3 {
        let v = k
            .timed(&c, "manage_container create feature", "manage_container",
                json!({"operation":"create","containerType":"feature","projectId":pid,"name":format!("Feature {f}"),"summary":"Deliver the event pipeline part"}))
            .await;
        features.push(v["feature"]["id"].as_str().unwrap().to_string());
    }
    let mut tasks: Vec<String> = Vec::new();
    for i in 0..30 {
        let v = k
            .timed(&c, "manage_container create task", "manage_container",
                json!({"operation":"create","containerType":"task","featureId":features[i % 3],"title":format!("Task {i}"),
                       "summary":"Implement one handler","priority":PRIORITIES[i % 3],"complexity":1 + i % 8}))
            .await;
        let id = v["task"]["id"].as_str().unwrap().to_string();
        let tpl = k
            .timed(
                &c,
                "query_templates list",
                "query_templates",
                json!({"operation":"list","targetEntityType":"TASK"}),
            )
            .await;
        let tid = tpl["templates"][0]["id"].as_str().unwrap().to_string();
        k.timed(
            &c,
            "apply_template",
            "apply_template",
            json!({"templateId":tid,"entityType":"TASK","entityId":id}),
        )
        .await;
        if i > 0 && i % 5 == 0 {
            k.timed(&c, "manage_dependency", "manage_dependency",
                json!({"operation":"create","fromId":tasks[i - 1],"toId":id,"type":"BLOCKS","containerType":"task"}))
                .await;
        }
        tasks.push(id);
    }
    // The knowledge graph: 400 atoms over the repository's directories.
    let mut atoms = Vec::new();
    for i in 0..400 {
        let a = k.timed(&c, "manage_graph create atom", "manage_graph",
            json!({"operation":"create","entityType":"atom","projectId":pid,"createdByTaskId":tasks[i % 30],
                   "name":format!("Rule {i}"),"paths":format!("[\"src/svc{}/**\",\"src/svc{}/mod{i}.py\"]", i % 8, i % 8),
                   "knowledge":crate::knowledge(i, 400)}))
            .await;
        atoms.push(a["atom"]["id"].as_str().unwrap().to_string());
    }
    // Code entities anchored to the modules.
    let dom = k.timed(&c, "create_entity", "create_entity", json!({"projectId":pid,"name":"Events","description":"The event pipeline",
        "categoryIds":[cat("core")],"commands":[{"command":"add","kind":"text","documentPath":"docs/design.md","startLine":1,"endLine":3}]})).await
        ["entity"]["id"].as_str().unwrap().to_string();
    let feat = k.timed(&c, "create_entity", "create_entity", json!({"projectId":pid,"name":"Retries","description":"Retry with backoff",
        "categoryIds":[cat("capability")],"parentIds":[dom],"commands":[{"command":"add","kind":"text","documentPath":"docs/design.md","startLine":5,"endLine":7}]})).await
        ["entity"]["id"].as_str().unwrap().to_string();
    let mut units = Vec::new();
    let mut modules = Vec::new();
    for m in 0..40 {
        let ns = k.timed(&c, "create_entity", "create_entity", json!({"projectId":pid,"name":format!("mod{m}"),"description":format!("Handlers of module {m}"),
            "categoryIds":[cat("module")],"parentIds":[feat],"commands":[{"command":"add","kind":"text","documentPath":format!("src/svc{}/mod{m}.py", m % 8),"startLine":1,"endLine":48}]})).await
            ["entity"]["id"].as_str().unwrap().to_string();
        for f in 0..3 {
            let u = k.timed(&c, "create_entity", "create_entity", json!({"projectId":pid,"name":format!("handler_{m}_{f}"),
                "description":format!("Handles event kind {f}: validates, retries with backoff, publishes"),
                "categoryIds":[cat("function")],"parentIds":[ns],"commands":[{"command":"add","kind":"code","documentPath":format!("src/svc{}/mod{m}.py", m % 8),"lspSymbol":format!("handler_{m}_{f}"),"startLine":1 + 4 * f,"endLine":3 + 4 * f}]})).await;
            units.push(u["entity"]["id"].as_str().unwrap().to_string());
        }
        modules.push(ns);
    }
    // The rest of eight modules' handlers in bulk: one call per file.
    for (m, ns) in modules.iter().enumerate().take(8) {
        k.timed(
            &c,
            "track_declarations",
            "track_declarations",
            json!({"projectId":pid,"path":format!("src/svc{}/mod{m}.py", m % 8),
            "categoryIds":[cat("function")],"parentIds":[ns]}),
        )
        .await;
    }
    // Work: the agent picks tasks, reads them with their context, moves them along,
    // reads the graph for the files it touches, edits code and checks staleness.
    let mut first_search = None;
    for round in 0..30 {
        let next = k
            .timed(
                &c,
                "get_next_task",
                "get_next_task",
                json!({"projectId":pid}),
            )
            .await;
        let Some(t) = next["task"]["id"].as_str().map(str::to_string) else {
            break;
        };
        let got = k
            .timed(
                &c,
                "query_container get task",
                "query_container",
                json!({"operation":"get","containerType":"task","id":t,"includeSections":true}),
            )
            .await;
        let v = got["task"]["version"].as_i64().unwrap();
        k.timed(
            &c,
            "query_container get task brief",
            "query_container",
            json!({"operation":"get","containerType":"task","id":t,"brief":true}),
        )
        .await;
        k.timed(
            &c,
            "query_workflow_state",
            "query_workflow_state",
            json!({"containerType":"task","id":t}),
        )
        .await;
        let m = rng.next(40);
        let paths: Vec<String> = (0..10)
            .map(|j| format!("src/svc{}/mod{}.py", (m + j) % 8, (m + j) % 40))
            .collect();
        k.timed(
            &c,
            "query_graph context",
            "query_graph",
            json!({"operation":"context","projectId":pid,"paths":paths.join(","),"maxTokens":2000}),
        )
        .await;
        let adv = k
            .timed(
                &c,
                "advance",
                "advance",
                json!({"containerType":"task","id":t,"version":v}),
            )
            .await;
        let v = adv["task"]["version"].as_i64().unwrap_or(v + 1);
        k.timed(
            &c,
            "find_entities",
            "find_entities",
            json!({"projectId":pid,"documentPath":paths[0],"limit":10}),
        )
        .await;
        k.timed(
            &c,
            "get_entity",
            "get_entity",
            json!({"entityId":units[(m * 3) as usize]}),
        )
        .await;
        // An edit in the working tree, then the staleness checks an agent runs.
        let file = repo.join(&paths[0]);
        let mut text = std::fs::read_to_string(&file).unwrap();
        text.insert_str(0, &format!("# edited in round {round}\n"));
        std::fs::write(&file, text).unwrap();
        k.timed(
            &c,
            "analyze_document, changed files",
            "analyze_document",
            json!({"projectId":pid}),
        )
        .await;
        k.timed(
            &c,
            "analyze_document",
            "analyze_document",
            json!({"projectId":pid,"documentPath":paths[0]}),
        )
        .await;
        let q = [
            "retry with backoff",
            "publish validated events",
            "handler for event kind 2",
            "gateway events",
        ][round % 4];
        let t0 = Instant::now();
        call(&c, "search", json!({"projectId":pid,"query":q,"limit":5})).await;
        match first_search {
            None => first_search = Some(t0.elapsed()),
            Some(_) => k.0.entry("search".into()).or_default().push(t0.elapsed()),
        }
        k.timed(
            &c,
            "find",
            "find",
            json!({"projectId":pid,"query":q,"limit":10}),
        )
        .await;
        k.timed(
            &c,
            "query",
            "query",
            json!({"projectId":pid,"semanticQuery":q,"maxTokens":1500}),
        )
        .await;
        k.timed(&c, "manage_changelog append", "manage_changelog",
            json!({"operation":"append","parentType":"atom","parentId":atoms[rng.next(400) as usize],"taskId":t,
                   "summary":format!("Round {round}: handlers now retry three times")}))
            .await;
        k.timed(&c, "manage_container update task", "manage_container",
            json!({"operation":"update","containerType":"task","id":t,"version":v,"summary":"Handler implemented, tests pending"}))
            .await;
    }
    let _ = c.cancel().await;
    report(k, first_search);
}

fn report(k: Kinds, first_search: Option<Duration>) {
    let mut total = 0;
    for (kind, mut v) in k.0 {
        total += v.len();
        v.sort();
        let at = |q: f64| ms(v[((v.len() - 1) as f64 * q).round() as usize]);
        row(
            &format!("  {kind} ({} calls)", v.len()),
            format!("p50 {:.2} · p99 {:.2} ms", at(0.5), at(0.99)),
            "p99 ≤ 10 ms",
        );
    }
    if let Some(f) = first_search {
        row(
            "  first search (loads the model, embeds the backlog)",
            format!("{:.0} ms", ms(f)),
            "",
        );
    }
    row(
        "agent session through rmcp's client: calls replayed",
        format!("{total}"),
        "",
    );
}
