//! Several server processes on one database (a SQLite file, or one PostgreSQL
//! database when the suite runs there), and servers killed mid-burst.

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
    tokio::join!(bump(&a, &id, per_side), bump(&b, &id, per_side));
    let t = b.get("task", &id).await;
    assert_eq!(
        t["description"],
        json!((2 * per_side).to_string()),
        "an increment was lost"
    );
    a.stop().await;
    b.stop().await;
}

/// Read-modify-write of a task's description as a counter, `times` times, retrying
/// on CONFLICT (the only failure allowed).
async fn bump(c: &Cairn, id: &str, times: i64) {
    let mut done = 0;
    while done < times {
        let t = c.get("task", id).await;
        let n: i64 = t["description"].as_str().unwrap_or("0").parse().unwrap();
        let r = c
            .call("manage_container", json!({"operation":"update","containerType":"task","id":id,"version":t["version"],"description":(n + 1).to_string()}))
            .await;
        if r["success"] == json!(true) {
            done += 1;
        } else {
            assert_eq!(r["error"]["code"], "CONFLICT", "{r}");
        }
    }
}

/// Four servers on one database, all reading the same tasks and writing them naming
/// the version they read: exactly one write per version wins and the three others
/// answer CONFLICT with the current version; then read-modify-write loops retrying
/// on CONFLICT from all four lose no increment.
#[tokio::test]
async fn four_servers_updating_the_same_tasks_lose_no_write() {
    let dir = TempDir::new();
    let db = dir.path().join("four.db");
    let mut servers = Vec::new();
    for _ in 0..4 {
        servers.push(Cairn::on(&db, &[]).await);
    }
    let ids = [
        id_of(
            &servers[0]
                .task(json!({"title":"one","description":"0"}))
                .await,
        ),
        id_of(
            &servers[1]
                .task(json!({"title":"two","description":"0"}))
                .await,
        ),
    ];
    for round in 0..15 {
        for id in &ids {
            let v = servers[round % 4].version("task", id).await;
            let calls = servers.iter().enumerate().map(|(i, c)| {
                c.call(
                    "manage_container",
                    json!({"operation":"update","containerType":"task","id":id,"version":v,"summary":format!("s{i} r{round}")}),
                )
            });
            let answers = futures::future::join_all(calls).await;
            let wins = answers
                .iter()
                .filter(|r| r["success"] == json!(true))
                .count();
            assert_eq!(wins, 1, "one write wins at version {v}: {answers:?}");
            for r in answers.iter().filter(|r| r["success"] != json!(true)) {
                assert_eq!(r["error"]["code"], "CONFLICT", "{r}");
                assert_eq!(r["error"]["details"]["currentVersion"], json!(v + 1), "{r}");
            }
        }
    }
    let per_server = 10;
    let loops = servers
        .iter()
        .flat_map(|c| ids.iter().map(move |id| bump(c, id, per_server)));
    futures::future::join_all(loops).await;
    for id in &ids {
        let t = servers[3].get("task", id).await;
        assert_eq!(
            t["description"],
            json!((4 * per_server).to_string()),
            "an increment was lost"
        );
        assert_eq!(t["version"], json!(1 + 15 + 4 * per_server));
    }
    for c in servers {
        c.stop().await;
    }
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

/// A small seeded generator, so a failing kill point can be replayed.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        (z ^ (z >> 31)) % n
    }
}

/// Whether a thread of `pid` is inside a write or a sync of the main database file
/// `db` right now. In WAL mode only a checkpoint writes that file, so this is "the
/// server is checkpointing". Read from /proc: the open descriptor naming the file,
/// and each thread's current system call with its first argument.
fn checkpointing(pid: u32, db: &std::path::Path) -> bool {
    // pwrite64, fsync and fdatasync.
    #[cfg(target_arch = "x86_64")]
    const CALLS: [u64; 3] = [18, 74, 75];
    #[cfg(target_arch = "aarch64")]
    const CALLS: [u64; 3] = [68, 82, 83];
    let Ok(fds) = std::fs::read_dir(format!("/proc/{pid}/fd")) else {
        return false;
    };
    let db_fds: Vec<u64> = fds
        .flatten()
        .filter(|e| std::fs::read_link(e.path()).is_ok_and(|t| t == db))
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) else {
        return false;
    };
    tasks.flatten().any(|t| {
        let Ok(sc) = std::fs::read_to_string(t.path().join("syscall")) else {
            return false;
        };
        let mut parts = sc.split_whitespace();
        let (Some(nr), Some(fd)) = (parts.next(), parts.next()) else {
            return false;
        };
        let fd = u64::from_str_radix(fd.trim_start_matches("0x"), 16).unwrap_or(u64::MAX);
        nr.parse::<u64>().is_ok_and(|n| CALLS.contains(&n)) && db_fds.contains(&fd)
    })
}

/// Twenty (or more) servers on one file, each killed (SIGKILL) at a random point of a burst of
/// task and atom creates, two of them while SQLite checkpoints the WAL into the
/// database: every start recovers the file, which stays sound, and every create any
/// of them acknowledged is there at the end.
#[tokio::test]
async fn sigkill_at_random_points_keeps_every_acknowledged_write_and_a_sound_file() {
    let dir = TempDir::new();
    let db = dir.path().join("crash.db");
    let project = crate::harness::cli_ok(
        &db,
        "manage_container",
        r#"{"operation":"create","containerType":"project","name":"Crash"}"#,
    )["data"]["project"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let task = crate::harness::cli_ok(
        &db,
        "manage_container",
        &json!({"operation":"create","containerType":"task","title":"anchor","projectId":project})
            .to_string(),
    )["data"]["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut rng = Rng(20_261_125);
    let (mut tasks, mut atoms) = (Vec::new(), Vec::new());
    let mut in_checkpoint = 0;
    let knowledge = "k".repeat(24_000);
    // Rounds 6 and 13 wait for a checkpoint; the probe samples system calls, so under
    // load it can miss one: up to eight more checkpoint rounds then make up the two.
    // PostgreSQL has no checkpoint of Cairn's to land in: twenty rounds at random
    // points, the server's connections dropped with it.
    let sqlite = crate::harness::postgres().is_none();
    for round in 0..28 {
        if round >= 20 && (in_checkpoint >= 2 || !sqlite) {
            break;
        }
        let mut child = tokio::process::Command::new(BIN)
            .arg("--db")
            .arg(crate::harness::db_arg(&db))
            .arg("serve")
            .env_remove("CAIRN_CONFIG")
            .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let pid = child.id().unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        send(&mut stdin, json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"crash-test","version":"0"}}})).await;
        lines.next_line().await.unwrap().unwrap();
        send(
            &mut stdin,
            json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        )
        .await;
        // Two rounds wait for a checkpoint: their atoms are large, so the WAL
        // reaches SQLite's checkpoint threshold (1,000 pages) within the burst.
        let at_checkpoint = sqlite && (round == 6 || round == 13 || round >= 20);
        let total = if at_checkpoint { 800 } else { 300 };
        let writer = tokio::spawn({
            let (project, task, knowledge) = (project.clone(), task.clone(), knowledge.clone());
            async move {
                for i in 1..=total {
                    let args = if i % 2 == 0 {
                        json!({"operation":"create","containerType":"task","title":format!("r{round} t{i}")})
                    } else {
                        let k = if at_checkpoint {
                            knowledge.as_str()
                        } else {
                            "short"
                        };
                        json!({"operation":"create","entityType":"atom","projectId":project,"createdByTaskId":task,
                               "name":format!("r{round} a{i}"),"paths":format!("[\"src/r{round}/a{i}/**\"]"),"knowledge":k})
                    };
                    let tool = if i % 2 == 0 {
                        "manage_container"
                    } else {
                        "manage_graph"
                    };
                    let msg = json!({"jsonrpc":"2.0","id":i,"method":"tools/call","params":{"name":tool,"arguments":args}});
                    let mut line = msg.to_string();
                    line.push('\n');
                    if stdin.write_all(line.as_bytes()).await.is_err() {
                        break;
                    }
                }
                stdin
            }
        });
        let wait_for = if at_checkpoint {
            total
        } else {
            1 + rng.below(200) as i64
        };
        let mut acked = 0;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            if at_checkpoint && checkpointing(pid, &db) {
                in_checkpoint += 1;
                break;
            }
            if acked >= wait_for || std::time::Instant::now() > deadline {
                break;
            }
            // Short waits, so the checkpoint probe runs between answers.
            let next =
                tokio::time::timeout(std::time::Duration::from_micros(200), lines.next_line())
                    .await;
            let Ok(line) = next else { continue };
            let Some(line) = line.unwrap() else { break };
            let v: Value = serde_json::from_str(&line).unwrap();
            let env = &v["result"]["structuredContent"];
            assert_eq!(env["success"], json!(true), "round {round}: {v}");
            if let Some(id) = env["data"]["task"]["id"].as_str() {
                tasks.push(id.to_string());
            } else if let Some(id) = env["data"]["atom"]["id"].as_str() {
                atoms.push(id.to_string());
            }
            acked += 1;
        }
        child.start_kill().unwrap();
        child.wait().await.unwrap();
        let _ = writer.await;
        if sqlite {
            assert_eq!(integrity_check(&db).await, "ok", "round {round}");
        }
    }
    if sqlite {
        assert_eq!(in_checkpoint, 2, "two kills landed inside a checkpoint");
    }
    assert!(
        tasks.len() + atoms.len() > 20,
        "the servers acknowledged creates"
    );

    let c = Cairn::on(&db, &[]).await;
    for id in &tasks {
        c.ok(
            "query_container",
            json!({"operation":"get","containerType":"task","id":id}),
        )
        .await;
    }
    for id in &atoms {
        c.ok(
            "query_graph",
            json!({"operation":"get","entityType":"atom","id":id}),
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
                .arg(crate::harness::db_arg(&db))
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
