//! Embedding in the background, through MCP: a server that only writes never loads the model, which writes wake the background, reindex under the generation triggers, progress to a client that asks (and none to one that does not), the first search after an import answering at once, two servers embedding one file.

use crate::code::Repo;
use crate::harness::{model_dir, transport, Cairn, TempDir, BIN, TEST_CONFIG};
use crate::semantic::branch_fixture;
use rmcp::model::{CallToolRequestParams, ProgressNotificationParam};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};
use std::io::Write;
use std::process::{Command, Stdio};

/// Speaks raw JSON-RPC to `cairn serve` so the test can read its stderr.
fn serve_raw(db: &std::path::Path, calls: &[Value]) -> (String, String) {
    serve_raw_then(db, calls, After::Idle(std::time::Duration::ZERO))
}

/// What a raw server does after its last answer, before its input closes.
enum After<'a> {
    /// Stays idle this long: to show that something does *not* happen meanwhile.
    Idle(std::time::Duration),
    /// Runs until its log has a line holding this text (a minute at most).
    Logged(&'a str),
}

/// [`serve_raw`], the server left running after the last answer as `after` says.
fn serve_raw_then(db: &std::path::Path, calls: &[Value], after: After<'_>) -> (String, String) {
    let mut child = Command::new(BIN)
        .arg("--db")
        .arg(crate::harness::db_arg(db))
        .arg("serve")
        .env_remove("CAIRN_CONFIG")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
        .env("CAIRN_MODEL_DIR", model_dir())
        .env("CAIRN_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn cairn");
    let mut stdin = child.stdin.take().unwrap();
    // The log is read as it comes, so a line can be waited for.
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let reader = {
        let log = log.clone();
        let stderr = std::io::BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            for line in std::io::BufRead::lines(stderr).map_while(Result::ok) {
                let mut l = log.lock().unwrap();
                l.push_str(&line);
                l.push('\n');
            }
        })
    };
    let mut msgs = vec![
        json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    ];
    for (i, c) in calls.iter().enumerate() {
        msgs.push(json!({"jsonrpc":"2.0","id":i + 1,"method":"tools/call","params":c}));
    }
    for m in msgs {
        writeln!(stdin, "{m}").unwrap();
    }
    stdin.flush().unwrap();
    // Read until every call is answered, then close the input so the server stops.
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut out = String::new();
    let mut answered = 0;
    while answered < calls.len() {
        let mut line = String::new();
        if std::io::BufRead::read_line(&mut stdout, &mut line).unwrap() == 0 {
            break;
        }
        if serde_json::from_str::<Value>(&line)
            .is_ok_and(|v| v["id"].as_u64().is_some_and(|i| i >= 1))
        {
            answered += 1;
        }
        out.push_str(&line);
    }
    match after {
        After::Idle(idle) => std::thread::sleep(idle),
        After::Logged(text) => {
            crate::harness::eventually_blocking(text, 60, || log.lock().unwrap().contains(text))
        }
    }
    drop(stdin);
    child.wait().unwrap();
    reader.join().unwrap();
    let log = log.lock().unwrap().clone();
    (out, log)
}

#[test]
fn a_server_that_only_writes_never_loads_the_model() {
    let tmp = TempDir::new();
    let db = tmp.path().join("cairn.db");
    let writes = [
        json!({"name":"manage_container","arguments":{"operation":"create","containerType":"project","name":"P"}}),
        json!({"name":"query_container","arguments":{"operation":"search","containerType":"project"}}),
    ];
    let (out, err) = serve_raw(&db, &writes);
    assert!(
        err.contains("server stopped") && err.contains("never loaded"),
        "{err}"
    );
    let pid = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|v| v["id"] == 1)
        .and_then(|v| {
            v["result"]["structuredContent"]["data"]["project"]["id"]
                .as_str()
                .map(str::to_string)
        })
        .unwrap_or_else(|| panic!("no project id in {out}"));
    // A server that searches does load it.
    let (_, err) = serve_raw(
        &db,
        &[json!({"name":"search","arguments":{"projectId":pid,"query":"x"}})],
    );
    assert!(
        err.contains("server stopped") && !err.contains("never loaded"),
        "{err}"
    );
}

#[tokio::test]
async fn only_code_and_graph_writes_wake_the_background_and_it_loads_the_model_only_then() {
    // Texts waiting for vectors, written by a server whose background never ran.
    let tmp = TempDir::new();
    let db = tmp.path().join("cairn.db");
    let cfg = tmp.path().join("config.toml");
    std::fs::write(&cfg, format!("{TEST_CONFIG}embed_idle_ms = 3600000\n")).unwrap();
    let w = Cairn::on(&db, &["--config", cfg.to_str().unwrap()]).await;
    let repo = Repo::new();
    let (pid, _) = branch_fixture(&w, &repo).await;
    w.stop().await;
    // Task writes, then three idle seconds (the background waits one): no model.
    let idle = std::time::Duration::from_secs(3);
    let tasks = [
        json!({"name":"manage_container","arguments":{"operation":"create","containerType":"feature","name":"F","projectId":pid}}),
    ];
    let (out, err) = serve_raw_then(&db, &tasks, After::Idle(idle));
    assert!(out.contains("\"isError\":false"), "{out}");
    assert!(
        err.contains("server stopped") && err.contains("never loaded"),
        "{err}"
    );
    // A write of the code toolset: the background loads the model for the texts
    // waiting, in time (waited for in its log).
    let code = [
        json!({"name":"create_category","arguments":{"projectId":pid,"name":"adapter","scope":"Component"}}),
    ];
    let (out, err) = serve_raw_then(&db, &code, After::Logged("embedding model loaded"));
    assert!(out.contains("\"isError\":false"), "{out}");
    assert!(
        err.contains("server stopped") && !err.contains("never loaded"),
        "{err}"
    );
}

#[tokio::test]
async fn regression_reindex_all_upserts_vectors_under_generation_triggers() {
    // An upsert into `embeddings` made the generation trigger's INSERT OR IGNORE fail
    // with UNIQUE (the outer statement's conflict handling wins inside triggers).
    let repo = Repo::new();
    let c = Cairn::start().await;
    let (pid, _) = branch_fixture(&c, &repo).await;
    c.ok("search", json!({"projectId":pid,"query":"invoice"}))
        .await;
    let db = c.db.clone();
    let out = Command::new(BIN)
        .arg("--db")
        .arg(crate::harness::db_arg(&db))
        .arg("--model-dir")
        .arg("/nonexistent/cairn-model")
        .args(["reindex", "--all"])
        .env_remove("CAIRN_CONFIG")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
        .output()
        .expect("run cairn reindex");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The server still searches, now over the other embedder's vectors re-embedded.
    let r = c
        .ok("search", json!({"projectId":pid,"query":"invoice"}))
        .await;
    assert!(!r["entities"].as_array().unwrap().is_empty(), "{r}");
    c.stop().await;
}

/// Records the progress notifications a client receives.
#[derive(Clone, Default)]
struct Listener(std::sync::Arc<std::sync::Mutex<Vec<ProgressNotificationParam>>>);

impl ClientHandler for Listener {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push(params);
    }
}

#[tokio::test]
async fn a_search_that_embeds_a_backlog_reports_progress_to_a_client_that_asks() {
    let repo = Repo::new();
    // Written by one server (whose background never runs), searched by another.
    let tmp = TempDir::new();
    let cfg = tmp.path().join("config.toml");
    std::fs::write(&cfg, format!("{TEST_CONFIG}embed_idle_ms = 3600000\n")).unwrap();
    let w = Cairn::on(
        &tmp.path().join("cairn.db"),
        &["--config", cfg.to_str().unwrap()],
    )
    .await;
    let (pid, ids) = branch_fixture(&w, &repo).await;
    let listener = Listener::default();
    let client = listener
        .clone()
        .serve(transport(&w.db, &[]))
        .await
        .expect("MCP initialize");
    // rmcp's client puts a progressToken in every request's _meta.
    let p = CallToolRequestParams::new("search").with_arguments(
        json!({"projectId":pid,"query":"render invoices"})
            .as_object()
            .unwrap()
            .clone(),
    );
    let r = client.call_tool(p).await.expect("tools/call");
    let env = r.structured_content.expect("structuredContent");
    assert_eq!(env["success"], json!(true), "{env:#}");
    assert_eq!(env["data"]["embedder"], "all-minilm-l6-v2");
    assert_eq!(env["data"]["notEmbedded"], 0, "{env:#}");
    // Notifications are sent before the answer, but the client handles them on tasks
    // of its own: wait (boundedly) for the one that completes the backlog.
    let done = |n: &ProgressNotificationParam| n.total.is_some_and(|t| t == n.progress);
    for _ in 0..200 {
        if listener.0.lock().unwrap().iter().any(done) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let seen = listener.0.lock().unwrap().clone();
    assert!(!seen.is_empty(), "no progress notification");
    assert!(seen
        .iter()
        .all(|n| n.progress_token == seen[0].progress_token));
    assert!(
        seen.windows(2).all(|w| w[1].progress > w[0].progress),
        "progress must increase: {seen:?}"
    );
    let last = seen.last().unwrap();
    assert!(
        done(last),
        "the last notification completes the backlog: {seen:?}"
    );
    // Every entity and every reference of the fixture was embedded.
    assert!(last.progress >= 2.0 * ids.len() as f64, "{seen:?}");
    assert!(seen
        .iter()
        .all(|n| n.message.as_deref().is_some_and(|m| !m.is_empty())));
    let _ = client.cancel().await;
    w.stop().await;
}

#[tokio::test]
async fn a_call_without_a_progress_token_gets_no_progress_notifications() {
    // The same backlog and a model to load, once without a token and once with one
    // (raw JSON-RPC, so the wire itself is read).
    for token in [None, Some("p-1")] {
        let repo = Repo::new();
        let tmp = TempDir::new();
        let db = tmp.path().join("cairn.db");
        let w = Cairn::on(&db, &[]).await;
        let (pid, _) = branch_fixture(&w, &repo).await;
        w.stop().await;
        let mut call =
            json!({"name":"search","arguments":{"projectId":pid,"query":"render invoices"}});
        if let Some(t) = token {
            call["_meta"] = json!({ "progressToken": t });
        }
        let (out, _) = serve_raw(&db, &[call]);
        let msgs: Vec<Value> = out
            .lines()
            .filter_map(|l| serde_json::from_str::<Value>(l).ok())
            .collect();
        let answer = msgs
            .iter()
            .position(|v| v["id"] == 1)
            .unwrap_or_else(|| panic!("no answer in {out}"));
        assert_eq!(
            msgs[answer]["result"]["structuredContent"]["success"],
            json!(true),
            "{out}"
        );
        let progress: Vec<usize> = (0..msgs.len())
            .filter(|&i| msgs[i]["method"] == "notifications/progress")
            .collect();
        match token {
            None => assert!(progress.is_empty(), "{out}"),
            Some(t) => {
                assert!(!progress.is_empty(), "{out}");
                // All before the answer, all for the token asked with.
                assert!(progress.iter().all(|&i| i < answer), "{out}");
                assert!(progress
                    .iter()
                    .all(|&i| msgs[i]["params"]["progressToken"] == t));
            }
        }
    }
}

#[tokio::test]
async fn regression_first_search_after_an_import_answers_at_once_and_counts_what_waits() {
    // Regression: the first search embedded every text written before it, so a
    // large import made it stall for minutes. Now a search waits at most embed_wait_ms
    // (0 here) and says how many texts have no vector yet; the background embeds them
    // while the server is idle, and later searches find them by meaning.
    const N: usize = 300;
    let tmp = TempDir::new();
    let db = tmp.path().join("cairn.db");
    let repo = Repo::new();
    repo.write("docs/notes.md", &"# notes\n".repeat(10));
    repo.commit("notes");
    // The import, by a server whose background never runs (idle for an hour first).
    let cfg = tmp.path().join("import.toml");
    std::fs::write(&cfg, "embed_wait_ms = 0\nembed_idle_ms = 3600000\n").unwrap();
    let c = Cairn::on(&db, &["--config", cfg.to_str().unwrap()]).await;
    let d = c
        .ok(
            "init_project",
            json!({"name":"Import","repoPath":repo.root()}),
        )
        .await;
    let pid = d["projectId"].as_str().unwrap().to_string();
    let core = crate::code::category(&d, "core");
    let words = [
        "ledger", "invoice", "queue", "worker", "cache", "token", "schema", "report",
    ];
    for i in 0..N {
        let (name, desc) = if i == N / 2 {
            (
                "gzip_seek".to_string(),
                "Moves the read position to an offset inside a compressed file.".to_string(),
            )
        } else {
            (
                format!("part_{i}"),
                format!(
                    "Keeps the {} of the {} number {i}.",
                    words[i % 8],
                    words[(i / 8) % 8]
                ),
            )
        };
        c.ok(
            "create_entity",
            json!({"projectId":pid,"name":name,"description":desc,"categoryIds":[core],
                   "commands":[{"command":"add","kind":"text","documentPath":"docs/notes.md",
                                "startLine":1,"endLine":2,"description":format!("notes on {name}")}]}),
        )
        .await;
    }
    // The first search answers without embedding anything, and counts every text.
    let env = c
        .call("search", json!({"projectId":pid,"query":"jump to a position in a compressed file","target":"entities"}))
        .await;
    assert_eq!(env["success"], true, "{env:#}");
    let data = &env["data"];
    assert_eq!(data["notEmbedded"], json!(2 * N), "{data:#}");
    assert!(
        env["message"].as_str().unwrap().contains(&format!(
            "{} text(s) of the project not embedded yet",
            2 * N
        )),
        "{env:#}"
    );
    // Meanwhile rows are found by their words, their cosine unknown (0).
    let r = c
        .ok(
            "search",
            json!({"projectId":pid,"query":"gzip_seek","target":"entities"}),
        )
        .await;
    assert_eq!(r["entities"][0]["name"], "gzip_seek", "{r:#}");
    assert_eq!(r["entities"][0]["vectorScore"], 0.0, "{r:#}");
    // `query` says so too.
    let r = c
        .ok(
            "query",
            json!({"projectId":pid,"semanticQuery":"gzip_seek"}),
        )
        .await;
    assert_eq!(r["stats"]["notEmbedded"], json!(2 * N), "{r:#}");
    c.stop().await;

    // A server whose background runs after 100 ms of idleness: its first search
    // still answers at once; then, while the test waits between searches, the
    // background embeds, each search sees fewer texts waiting, and at the end the
    // entity is found by meaning.
    std::fs::write(&cfg, "embed_wait_ms = 0\nembed_idle_ms = 100\n").unwrap();
    let c = Cairn::on(&db, &["--config", cfg.to_str().unwrap()]).await;
    let q = json!({"projectId":pid,"query":"jump to a position in a compressed file","target":"entities","limit":3});
    let mut left = c.ok("search", q.clone()).await["notEmbedded"]
        .as_u64()
        .unwrap();
    assert_eq!(left, 2 * N as u64);
    let mut polls = 0;
    while left > 0 {
        polls += 1;
        assert!(polls <= 600, "the background stalled at {left} texts");
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let now = c.ok("search", q.clone()).await["notEmbedded"]
            .as_u64()
            .unwrap();
        assert!(now <= left, "{now} > {left}: nothing else writes");
        left = now;
    }
    let r = c.ok("search", q.clone()).await;
    assert_eq!(r["entities"][0]["name"], "gzip_seek", "{r:#}");
    assert!(
        r["entities"][0]["vectorScore"].as_f64().unwrap() > 0.3,
        "{r:#}"
    );
    println!(
        "background embedded {} texts over {polls} polls of 1 s",
        2 * N
    );
    c.stop().await;
}

#[tokio::test]
async fn two_servers_embedding_one_file_in_the_background_leave_one_current_vector_per_text() {
    // Both servers embed whatever has no vector while idle, the same rows at times:
    // the embeddings table is keyed by (source, row id), so the second write replaces
    // the first. At the end a thorough reindex finds nothing missing or stale.
    const N: usize = 60;
    let tmp = TempDir::new();
    let db = tmp.path().join("cairn.db");
    let cfg = tmp.path().join("config.toml");
    std::fs::write(&cfg, "embed_wait_ms = 0\nembed_idle_ms = 50\n").unwrap();
    let a = Cairn::on(&db, &["--config", cfg.to_str().unwrap()]).await;
    let b = Cairn::on(&db, &["--config", cfg.to_str().unwrap()]).await;
    let repo = Repo::new();
    repo.write("docs/notes.md", &"# notes\n".repeat(10));
    repo.commit("notes");
    let d = a
        .ok("init_project", json!({"name":"Two","repoPath":repo.root()}))
        .await;
    let pid = d["projectId"].as_str().unwrap().to_string();
    let core = crate::code::category(&d, "core");
    for i in 0..N {
        // Half the writes through each server, so both schedule their background.
        let w = if i % 2 == 0 { &a } else { &b };
        w.ok(
            "create_entity",
            json!({"projectId":pid,"name":format!("area_{i}"),"description":format!("Owns the billing rules of region {i}."),
                   "categoryIds":[core],"commands":[{"command":"add","kind":"text","documentPath":"docs/notes.md",
                   "startLine":1,"endLine":2,"description":format!("notes {i}")}]}),
        )
        .await;
    }
    let q = json!({"projectId":pid,"query":"billing rules of a region","target":"entities"});
    for (polls, s) in [&a, &b].into_iter().enumerate() {
        let mut left = s.ok("search", q.clone()).await["notEmbedded"]
            .as_u64()
            .unwrap();
        let mut n = 0;
        while left > 0 {
            n += 1;
            assert!(n <= 600, "server {polls}: the background stalled at {left}");
            tokio::time::sleep(std::time::Duration::from_millis(500)).await;
            left = s.ok("search", q.clone()).await["notEmbedded"]
                .as_u64()
                .unwrap();
        }
        let r = s.ok("search", q.clone()).await;
        assert!(
            r["entities"][0]["vectorScore"].as_f64().unwrap() > 0.3,
            "{r:#}"
        );
    }
    a.stop().await;
    b.stop().await;
    let out = Command::new(BIN)
        .arg("--db")
        .arg(crate::harness::db_arg(&db))
        .arg("--model-dir")
        .arg(model_dir())
        .arg("reindex")
        .env_remove("CAIRN_CONFIG")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
        .output()
        .expect("run cairn reindex");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert!(
        err.contains("reindex: 0 embedded with all-minilm-l6-v2"),
        "{err}"
    );
}
