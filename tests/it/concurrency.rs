//! Two server processes on one database file, and a server killed mid-burst.

use std::process::Stdio;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::harness::{id_of, Cairn, TempDir, BIN};

#[tokio::test]
async fn two_servers_updating_one_task_never_lose_a_write() {
    let dir = TempDir::new();
    let db = dir.path().join("shared.db");
    let a = Cairn::on(&db, &[]).await;
    let b = Cairn::on(&db, &[]).await;
    let id = id_of(&a.task(json!({"title":"contended","summary":"0"})).await);
    let rounds = 40;
    let (mut wins_a, mut wins_b) = (0, 0);
    for round in 0..rounds {
        // Both read the same version, then both write naming it.
        let (ta, tb) = tokio::join!(a.get("task", &id), b.get("task", &id));
        assert_eq!(ta["version"], tb["version"]);
        let v = ta["version"].as_i64().unwrap();
        let up = |who: &str| json!({"operation":"update","containerType":"task","id":id,"version":v,"summary":format!("{who}{round}")});
        let (ra, rb) = tokio::join!(
            a.call("manage_container", up("a")),
            b.call("manage_container", up("b"))
        );
        let ok = [&ra, &rb]
            .iter()
            .filter(|r| r["success"] == json!(true))
            .count();
        assert_eq!(ok, 1, "exactly one write wins at version {v}: {ra} / {rb}");
        let loser = if ra["success"] == json!(true) {
            wins_a += 1;
            &rb
        } else {
            wins_b += 1;
            &ra
        };
        assert_eq!(loser["error"]["code"], "CONFLICT");
        assert_eq!(loser["error"]["details"]["currentVersion"], json!(v + 1));
    }
    assert_eq!(wins_a + wins_b, rounds);
    assert_eq!(a.version("task", &id).await, 1 + rounds);

    // Read-modify-write with retry on CONFLICT from both sides: every increment lands.
    let per_side = 25;
    async fn bump(c: &Cairn, id: String, per_side: i64) -> i64 {
        {
            let mut done = 0;
            let mut conflicts = 0;
            while done < per_side {
                let t = c.get("task", &id).await;
                let n: i64 = t["description"].as_str().unwrap_or("0").parse().unwrap();
                let r = c
                    .call("manage_container", json!({"operation":"update","containerType":"task","id":id,"version":t["version"],"description":(n + 1).to_string()}))
                    .await;
                if r["success"] == json!(true) {
                    done += 1;
                } else {
                    assert_eq!(r["error"]["code"], "CONFLICT", "{r}");
                    conflicts += 1;
                }
            }
            conflicts
        }
    }
    let (_ca, _cb) = tokio::join!(
        bump(&a, id.clone(), per_side),
        bump(&b, id.clone(), per_side)
    );
    let t = b.get("task", &id).await;
    assert_eq!(
        t["description"],
        json!((2 * per_side).to_string()),
        "an increment was lost"
    );
    a.stop().await;
    b.stop().await;
}

/// Two servers creating tasks and atoms on one file at once, several calls in flight
/// each: a create that finds the other process writing waits its turn, so every one
/// succeeds and lands once.
#[tokio::test]
async fn two_servers_creating_at_once_lose_no_create() {
    let dir = TempDir::new();
    let db = dir.path().join("creates.db");
    let a = Cairn::on(&db, &[]).await;
    let b = Cairn::on(&db, &[]).await;
    let project = a.project("Shared").await;
    let task = id_of(&a.task(json!({"title":"Map","projectId":project})).await);
    let (streams, per_stream) = (4, 30);
    async fn stream(c: &Cairn, project: &str, task: &str, tag: String, n: usize) {
        for i in 0..n {
            c.task(json!({"title":format!("{tag} {i}"),"projectId":project}))
                .await;
            c.ok("manage_graph", json!({"operation":"create","entityType":"atom","projectId":project,
                "name":format!("{tag} {i}"),"paths":format!("[\"src/{tag}/{i}/**\"]"),"createdByTaskId":task}))
                .await;
        }
    }
    let mut calls = Vec::new();
    for (side, c) in [("a", &a), ("b", &b)] {
        for s in 0..streams {
            calls.push(stream(c, &project, &task, format!("{side}{s}"), per_stream));
        }
    }
    futures::future::join_all(calls).await;
    let each = 2 * streams * per_stream;
    let tasks = b
        .ok(
            "query_container",
            json!({"operation":"search","containerType":"task","projectId":project,"limit":1}),
        )
        .await;
    assert_eq!(tasks["total"], json!(each + 1), "{tasks}");
    let atoms = a
        .ok(
            "query_graph",
            json!({"operation":"search","entityType":"atom","projectId":project,"limit":1}),
        )
        .await;
    assert_eq!(atoms["total"], json!(each), "{atoms}");
    a.stop().await;
    b.stop().await;
}

async fn send(stdin: &mut tokio::process::ChildStdin, v: Value) {
    let mut line = v.to_string();
    line.push('\n');
    stdin.write_all(line.as_bytes()).await.unwrap();
}

#[tokio::test]
async fn sigkill_mid_burst_keeps_every_acknowledged_write_and_a_sound_file() {
    let dir = TempDir::new();
    let db = dir.path().join("crash.db");
    let mut child = tokio::process::Command::new(BIN)
        .arg("--db")
        .arg(&db)
        .arg("serve")
        .env_remove("CAIRN_CONFIG")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    send(&mut stdin, json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"crash-test","version":"0"}}})).await;
    lines.next_line().await.unwrap().unwrap();
    send(
        &mut stdin,
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    )
    .await;
    // Pipeline many creates; read acknowledgements for a while, then kill mid-stream.
    let total = 600;
    for i in 1..=total {
        send(&mut stdin, json!({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":"manage_container","arguments":{"operation":"create","containerType":"task","title":format!("t{i}")}}})).await;
    }
    let mut acked = Vec::new();
    while acked.len() < 250 {
        let line = lines.next_line().await.unwrap().expect("server answered");
        let v: Value = serde_json::from_str(&line).unwrap();
        if let Some(env) = v["result"]["structuredContent"].as_object() {
            assert_eq!(env["success"], json!(true));
            acked.push(env["data"]["task"]["id"].as_str().unwrap().to_string());
        }
    }
    child.start_kill().unwrap();
    child.wait().await.unwrap();

    // The file opens, passes integrity_check, and holds every acknowledged task.
    let env = crate::harness::cli_ok(
        &db,
        "query_container",
        r#"{"operation":"search","containerType":"task","limit":1}"#,
    );
    let stored = env["data"]["total"].as_i64().unwrap();
    assert!(
        stored >= acked.len() as i64 && stored <= total,
        "stored {stored}, acknowledged {}",
        acked.len()
    );
    let check = integrity_check(&db).await;
    assert_eq!(check, "ok");
    let c = Cairn::on(&db, &[]).await;
    for id in &acked {
        c.ok(
            "query_container",
            json!({"operation":"get","containerType":"task","id":id}),
        )
        .await;
    }
    c.stop().await;
}

async fn integrity_check(db: &std::path::Path) -> String {
    use sqlx::sqlite::SqliteConnectOptions;
    use sqlx::ConnectOptions;
    let mut conn = SqliteConnectOptions::new()
        .filename(db)
        .connect()
        .await
        .unwrap();
    let (r,): (String,) = sqlx::query_as("PRAGMA integrity_check")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    r
}

/// Two processes opening a file that does not exist yet race to create it, switch it
/// to WAL and migrate it; both must open it.
#[tokio::test]
async fn two_processes_starting_on_a_new_file_both_open_it() {
    for round in 0..8 {
        let dir = TempDir::new();
        let db = dir.path().join("fresh.db");
        let start = || {
            tokio::process::Command::new(BIN)
                .env_remove("CAIRN_CONFIG")
                .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
                .arg("--db")
                .arg(&db)
                .args(["call", "list_tags", "{}"])
                .output()
        };
        let (a, b) = tokio::join!(start(), start());
        for out in [a.unwrap(), b.unwrap()] {
            assert!(
                out.status.success(),
                "round {round}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
