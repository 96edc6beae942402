//! Security and robustness checks through the interfaces an agent uses:
//! paths that try to leave the repository, raw protocol lines that must each get an
//! answer, and storage failures answered with a code an agent can act on.

use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::json;

use crate::code::Code;
use crate::harness::TempDir;

/// Every entry under `dir`, recursively, as sorted relative paths.
fn tree(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            if p.is_dir() && !p.is_symlink() {
                stack.push(p);
            }
        }
    }
    out.sort();
    out
}

#[tokio::test]
async fn project_overview_never_writes_outside_the_repository_or_over_foreign_files() {
    let k = Code::start().await;
    let outside = TempDir::new();
    let decoy = outside.path().join("decoy.txt");
    std::fs::write(&decoy, b"decoy bytes\n\x00\x01").unwrap();
    let git_config = std::fs::read(k.repo.path().join(".git/config")).unwrap();
    let source = std::fs::read(k.repo.path().join("src/calc.c")).unwrap();
    symlink(&decoy, k.repo.path().join("ov.md")).unwrap();
    symlink(
        outside.path().join("created.md"),
        k.repo.path().join("dangling.md"),
    )
    .unwrap();
    symlink(
        k.repo.path().join(".git/config"),
        k.repo.path().join("cfg.md"),
    )
    .unwrap();
    symlink(outside.path(), k.repo.path().join("linkdir")).unwrap();
    let before = tree(outside.path());

    for (path, why) in [
        ("ov.md", "symbolic link"),
        ("dangling.md", "symbolic link"),
        ("cfg.md", "symbolic link"),
        ("linkdir/new/deep/x.md", "outside the repository"),
        ("src/calc.c", "not written by Cairn"),
        (".git/x.md", ".git"),
    ] {
        let e =
            k.c.err(
                "project_overview",
                json!({"projectId":k.pid,"outputPath":path}),
                "VALIDATION_ERROR",
            )
            .await;
        assert_eq!(e["details"]["parameter"], "outputPath", "{path}: {e}");
        let msg = e["message"].as_str().unwrap();
        assert!(msg.contains(why), "{path}: {msg}");
    }
    assert_eq!(std::fs::read(&decoy).unwrap(), b"decoy bytes\n\x00\x01");
    assert_eq!(tree(outside.path()), before, "nothing appeared outside");
    assert_eq!(
        std::fs::read(k.repo.path().join(".git/config")).unwrap(),
        git_config
    );
    assert_eq!(
        std::fs::read(k.repo.path().join("src/calc.c")).unwrap(),
        source
    );
    assert!(std::fs::symlink_metadata(k.repo.path().join("ov.md"))
        .unwrap()
        .is_symlink());

    // An overview Cairn wrote is replaced by the next one; a foreign file only on request.
    k.c.ok(
        "project_overview",
        json!({"projectId":k.pid,"outputPath":"docs/new/OVERVIEW.md"}),
    )
    .await;
    k.c.ok(
        "project_overview",
        json!({"projectId":k.pid,"outputPath":"docs/new/OVERVIEW.md"}),
    )
    .await;
    k.repo.write("NOTES.md", "mine\n");
    k.c.ok(
        "project_overview",
        json!({"projectId":k.pid,"outputPath":"NOTES.md","overwrite":true}),
    )
    .await;
    assert!(k
        .repo
        .read("NOTES.md")
        .starts_with("# Project Overview: Shop"));
}

#[tokio::test]
async fn a_reference_through_a_link_out_of_the_repository_is_refused() {
    let k = Code::start().await;
    let outside = TempDir::new();
    std::fs::write(outside.path().join("secret.md"), "# Secret\n\nline\n").unwrap();
    symlink(
        outside.path().join("secret.md"),
        k.repo.path().join("docs/leak.md"),
    )
    .unwrap();
    let e = k
        .c
        .err(
            "create_entity",
            json!({"projectId":k.pid,"name":"Leak","description":"x","categoryIds":[k.cat("core")],
                   "commands":[{"command":"add","kind":"text","documentPath":"docs/leak.md","startLine":1,"endLine":1}]}),
            "VALIDATION_ERROR",
        )
        .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("outside the repository"),
        "{e}"
    );
}

/// A raw `cairn serve` session: the lines go in as given, answers come out as JSON.
struct Raw {
    child: tokio::process::Child,
    stdin: tokio::process::ChildStdin,
    lines: tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
    _dir: TempDir,
}

impl Raw {
    async fn start() -> Raw {
        let dir = TempDir::new();
        let (child, stdin, lines) = crate::harness::serve_piped(&dir.path().join("raw.db"));
        let mut r = Raw {
            child,
            stdin,
            lines,
            _dir: dir,
        };
        r.send(br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#).await;
        assert_eq!(r.next().await["id"], json!(0));
        r.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#)
            .await;
        r
    }

    async fn send(&mut self, line: &[u8]) {
        use tokio::io::AsyncWriteExt;
        self.stdin.write_all(line).await.unwrap();
        self.stdin.write_all(b"\n").await.unwrap();
        self.stdin.flush().await.unwrap();
    }

    async fn next(&mut self) -> serde_json::Value {
        let line = tokio::time::timeout(std::time::Duration::from_secs(20), self.lines.next_line())
            .await
            .expect("an answer within 20 s")
            .unwrap()
            .expect("the server stays up");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("answer is JSON ({e}): {line}"))
    }
}

#[tokio::test]
async fn every_raw_line_gets_an_answer_and_the_session_goes_on() {
    let mut r = Raw::start().await;
    // Nested past serde's limit outside the arguments: no request Cairn can read.
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":106,"method":"tools/call","params":{{"name":"get_next_task","_meta":{{"x":{}1{}}}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let mut huge = br#"{"jsonrpc":"2.0","id":108,"method":"tools/call","params":{"name":"get_next_task","arguments":{"x":""#.to_vec();
    huge.extend(std::iter::repeat_n(b'a', 17 << 20));
    huge.extend_from_slice(br#""}}}"#);
    let cases: Vec<(Vec<u8>, i64, serde_json::Value)> = vec![
        // Cut short: the id is read all the same.
        (br#"{"jsonrpc":"2.0","id":101,"method":"tools/call","params":{"name":"get_ne"#.to_vec(), -32700, json!(101)),
        (b"\xff\xfe\xfd not utf-8".to_vec(), -32700, json!(null)),
        (b"{\"jsonrpc\":\"2.0\",\"id\":103,\"method\":\"ping\",\"params\":{\"x\":\"a\x01b\"}}".to_vec(), -32700, json!(103)),
        (br#"{"jsonrpc":"2.0","id":104,"method":"ping","params":{"x":"\ud800"}}"#.to_vec(), -32700, json!(104)),
        (br#"{"jsonrpc":"2.0","id":1e400,"method":"ping"}"#.to_vec(), -32600, json!(null)),
        (deep.into_bytes(), -32600, json!(106)),
        (br#"{"jsonrpc":"2.0","id":109,"method":"tools/call","params":{"name":"get_next_task","arguments":[1,2]}}"#.to_vec(), -32602, json!(109)),
        (br#"{"jsonrpc":"2.0","id":110,"method":"tools/call","params":{"name":"get_next_task","arguments":"{}"}}"#.to_vec(), -32602, json!(110)),
        (br#"{"jsonrpc":"2.0","id":111,"method":"tools/call"}"#.to_vec(), -32602, json!(111)),
        (huge, -32600, json!(108)),
    ];
    for (i, (line, code, id)) in cases.into_iter().enumerate() {
        r.send(&line).await;
        let a = r.next().await;
        assert_eq!(a["error"]["code"], json!(code), "case {i}: {a}");
        assert_eq!(
            a.get("id").cloned().unwrap_or(json!(null)),
            id,
            "case {i}: {a}"
        );
        assert!(!a["error"]["message"].as_str().unwrap_or("").is_empty());
        // The next request is answered as usual.
        let ping = 1000 + i as i64;
        r.send(format!(r#"{{"jsonrpc":"2.0","id":{ping},"method":"ping"}}"#).as_bytes())
            .await;
        let p = r.next().await;
        assert_eq!(p["id"], json!(ping), "after case {i}: {p}");
        assert!(p.get("result").is_some(), "after case {i}: {p}");
    }
    // Lines the guard leaves to rmcp's own rules (a notification no one knows, one
    // whose params are no object, a method no one serves): the request gets its
    // error, the notifications nothing, and the ping after them its answer.
    r.send(br#"{"jsonrpc":"2.0","method":"notifications/no_such","params":5}"#)
        .await;
    r.send(br#"{"jsonrpc":"2.0","method":"cairn/unheard","params":[1]}"#)
        .await;
    r.send(br#"{"jsonrpc":"2.0","id":120,"method":"no/such/method","params":7}"#)
        .await;
    r.send(br#"{"jsonrpc":"2.0","id":121,"method":"ping"}"#)
        .await;
    let (a, b) = (r.next().await, r.next().await);
    let (unknown, ping) = if a["id"] == json!(121) {
        (b, a)
    } else {
        (a, b)
    };
    assert!(unknown["error"]["code"].is_i64(), "{unknown}");
    assert!(ping.get("result").is_some(), "{ping}");
    // Inside an argument: the tool's refusal, naming it.
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":107,"method":"tools/call","params":{{"name":"get_next_task","arguments":{{"x":{}1{}}}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    r.send(deep.as_bytes()).await;
    let a = r.next().await;
    assert_eq!(a["id"], json!(107), "{a}");
    let env = &a["result"]["structuredContent"];
    assert_eq!(env["error"]["code"], json!("VALIDATION_ERROR"), "{a}");
    assert_eq!(env["error"]["details"]["parameter"], json!("x"), "{a}");
    r.child.kill().await.unwrap();
}

#[tokio::test]
async fn a_nul_byte_or_an_integer_out_of_range_is_a_validation_error() {
    let c = crate::harness::Cairn::start().await;
    let p = c.project("Nul").await;
    for (tool, args, param) in [
        (
            "query_graph",
            json!({"operation":"search","entityType":"atom","projectId":p,"query":"pay\u{0}ments"}),
            "query",
        ),
        (
            "search",
            json!({"projectId":p,"query":"retry\u{0}"}),
            "query",
        ),
        (
            "query",
            json!({"projectId":p,"semanticQuery":"a\u{0}b"}),
            "semanticQuery",
        ),
        (
            "manage_container",
            json!({"operation":"create","containerType":"task","title":"t","tags":"a\u{0}"}),
            "tags",
        ),
    ] {
        let e = c.err(tool, args, "VALIDATION_ERROR").await;
        assert_eq!(e["details"]["parameter"], param, "{tool}: {e}");
        assert!(e["message"].as_str().unwrap().contains("NUL"), "{e}");
    }
    let e = c
        .err(
            "query_container",
            json!({"operation":"search","containerType":"task","limit":18446744073709551615u64}),
            "VALIDATION_ERROR",
        )
        .await;
    let m = e["message"].as_str().unwrap();
    assert!(m.contains("out of range") && m.contains("from 1 to"), "{m}");
    c.stop().await;
}

/// `cairn` with a config file of `toml` on `db`.
fn config(dir: &Path, toml: &str) -> String {
    let p = dir.join("cairn.toml");
    std::fs::write(&p, toml).unwrap();
    p.to_string_lossy().into_owned()
}

/// Writes atoms of 30 KB until the store refuses one; returns that error and how many
/// went in.
async fn fill(c: &crate::harness::Cairn) -> (serde_json::Value, usize) {
    let p = c.project("Full").await;
    let t = crate::harness::id_of(&c.task(json!({"title":"t","projectId":p})).await);
    let knowledge = "x".repeat(30_000);
    for n in 0..10_000 {
        let env = c
            .call(
                "manage_graph",
                json!({"operation":"create","entityType":"atom","projectId":p,"createdByTaskId":t,
                       "name":format!("a{n}"),"paths":format!("[\"src/m{n}/**\"]"),"knowledge":knowledge}),
            )
            .await;
        if env["success"] != json!(true) {
            // The error, with the envelope's text beside it (the wire says it once).
            let mut e = env["error"].clone();
            e["message"] = env["message"].clone();
            return (e, n);
        }
    }
    panic!("the store never filled up");
}

#[tokio::test]
async fn a_full_database_answers_storage_full_and_keeps_what_it_had() {
    // The database's own size limit: SQLite answers SQLITE_FULL as on a full disk.
    if !crate::harness::sqlite_only("max_db_mib, a SQLite file's page limit") {
        return;
    }
    let dir = TempDir::new();
    let db = dir.path().join("full.db");
    let cfg = config(dir.path(), "max_db_mib = 2\n");
    let c = crate::harness::Cairn::on(&db, &["--config", &cfg]).await;
    let (e, written) = fill(&c).await;
    assert_eq!(e["code"], "STORAGE_FULL", "{e}");
    assert_eq!(e["details"]["retryable"], json!(false), "{e}");
    assert!(e["message"].as_str().unwrap().contains("free space"), "{e}");
    assert!(written > 5, "only {written} atoms fit");
    // Reads go on, and everything written before is there.
    let found = c
        .ok("query_graph", json!({"operation":"search","entityType":"atom","projectId":c.ok("query_container", json!({"operation":"search","containerType":"project"})).await["items"][0]["id"],"limit":1}))
        .await;
    assert_eq!(found["total"], json!(written));
    c.stop().await;
}

/// A real full disk, where the test may mount a tiny file system (as root).
#[tokio::test]
async fn a_full_disk_answers_storage_full() {
    if !crate::harness::sqlite_only("a full disk under the SQLite file") {
        return;
    }
    let dir = TempDir::new();
    let mnt = dir.path().join("tiny");
    std::fs::create_dir_all(&mnt).unwrap();
    let mounted = std::process::Command::new("mount")
        .args(["-t", "tmpfs", "-o", "size=3m", "tmpfs"])
        .arg(&mnt)
        .output()
        .is_ok_and(|o| o.status.success());
    if !mounted {
        // No tiny file system here: the size-limit test covers the code path.
        eprintln!(
            "a_full_disk_answers_storage_full: cannot mount a tmpfs here; covered by max_db_mib"
        );
        return;
    }
    struct Unmount(std::path::PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = std::process::Command::new("umount")
                .arg("-l")
                .arg(&self.0)
                .status();
        }
    }
    let _guard = Unmount(mnt.clone());
    let c = crate::harness::Cairn::on(&mnt.join("cairn.db"), &[]).await;
    let (e, _) = fill(&c).await;
    assert_eq!(e["code"], "STORAGE_FULL", "{e}");
    assert_eq!(e["details"]["retryable"], json!(false), "{e}");
    c.stop().await;
}

#[tokio::test]
async fn a_lock_held_past_the_busy_timeout_answers_storage_busy_then_the_retry_succeeds() {
    use sqlx::Connection;
    let dir = TempDir::new();
    let db = dir.path().join("busy.db");
    let cfg = config(dir.path(), "busy_timeout_ms = 300\n");
    let c = crate::harness::Cairn::on(&db, &["--config", &cfg]).await;
    let p = c.project("Busy").await;
    // Another process's writer, holding the write lock: SQLite's, or on PostgreSQL
    // the advisory lock every write transaction takes first.
    let mut other = crate::harness::sql(&db).await;
    let held = if crate::harness::postgres().is_some() {
        let mut t = other.begin().await.unwrap();
        sqlx::query("SELECT pg_advisory_xact_lock(426836062830)")
            .execute(&mut *t)
            .await
            .unwrap();
        t
    } else {
        let mut t = other.begin_with("BEGIN IMMEDIATE").await.unwrap();
        sqlx::query("UPDATE projects SET name = name")
            .execute(&mut *t)
            .await
            .unwrap();
        t
    };
    let args = json!({"operation":"create","containerType":"task","title":"t","projectId":p});
    let e = c
        .err("manage_container", args.clone(), "STORAGE_BUSY")
        .await;
    assert_eq!(e["details"]["retryable"], json!(true), "{e}");
    assert!(e["message"].as_str().unwrap().contains("retry"), "{e}");
    held.rollback().await.unwrap();
    c.ok("manage_container", args).await;
    c.stop().await;
}

/// `cairn call` as an unprivileged user when the tests run as root (root writes
/// anywhere), so file permissions mean what they say.
pub(crate) fn call_as_user(db: &Path, tool: &str, args: &str) -> std::process::Output {
    let mut cmd = if running_as_root() {
        let mut c = std::process::Command::new("setpriv");
        c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "--"])
            .arg(crate::harness::BIN);
        c
    } else {
        std::process::Command::new(crate::harness::BIN)
    };
    cmd.env_remove("CAIRN_CONFIG")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
        .env_remove("CAIRN_DB")
        .arg("--db")
        .arg(crate::harness::db_arg(db))
        .args(["call", tool, args])
        .output()
        .expect("run cairn")
}

fn running_as_root() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .map(|l| l.split_whitespace().nth(2) == Some("0"))
        })
        .unwrap_or(false)
}

#[tokio::test]
async fn opening_failures_name_the_path_and_the_cause() {
    use std::os::unix::fs::PermissionsExt;
    if !crate::harness::sqlite_only("a database file's permissions") {
        return;
    }
    let dir = TempDir::new();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // A directory this user cannot write.
    let locked = dir.path().join("locked");
    std::fs::create_dir(&locked).unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o555)).unwrap();
    let out = call_as_user(&locked.join("cairn.db"), "list_tags", "{}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("permission denied") && err.contains(&*locked.to_string_lossy()),
        "{err}"
    );
    assert!(!err.contains("code: 14"), "{err}");
    // A read-only database file in a writable directory: reads work, a write says why
    // it cannot be made.
    let open = dir.path().join("open");
    std::fs::create_dir(&open).unwrap();
    let ro = open.join("ro.db");
    crate::harness::cli_ok(&ro, "list_tags", "{}");
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o444)).unwrap();
    assert!(call_as_user(&ro, "list_tags", "{}").status.success());
    let out = call_as_user(
        &ro,
        "manage_container",
        r#"{"operation":"create","containerType":"project","name":"x"}"#,
    );
    let env: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(env["error"]["code"], "STORAGE_READ_ONLY", "{env}");
    assert_eq!(env["error"]["details"]["retryable"], json!(false), "{env}");
    // A read-only file in a read-only directory: it cannot even be opened.
    std::fs::set_permissions(&open, std::fs::Permissions::from_mode(0o555)).unwrap();
    let _ = std::fs::remove_file(open.join("ro.db-shm"));
    let out = call_as_user(&ro, "list_tags", "{}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("permission denied") && err.contains("read-only"),
        "{err}"
    );
    assert!(!err.contains("1544") && !err.contains("code:"), "{err}");
}

/// A database migrated by a newer Cairn (its schema has a migration this one does
/// not know) is refused, naming the versions and what to do; on either backend.
#[tokio::test]
async fn a_database_migrated_by_a_newer_cairn_is_refused() {
    let dir = TempDir::new();
    let newer = dir.path().join("newer.db");
    crate::harness::cli_ok(&newer, "list_tags", "{}");
    let checksum = if crate::harness::postgres().is_some() {
        "'\\x00'::bytea"
    } else {
        "x'00'"
    };
    let mut c = crate::harness::sql(&newer).await;
    sqlx::query(sqlx::AssertSqlSafe(format!(
        "INSERT INTO _sqlx_migrations (version, description, success, checksum, execution_time) \
         VALUES (9999, 'from the future', TRUE, {checksum}, 0)"
    )))
    .execute(&mut c)
    .await
    .unwrap();
    let out = crate::harness::cli(&newer, &["call", "list_tags", "{}"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        err.contains("newer Cairn") && err.contains("9999") && err.contains("up to"),
        "{err}"
    );
}

/// A PostgreSQL URL whose server cannot be reached: an error naming the URL, its
/// password hidden, and what to check.
#[test]
fn an_unreachable_postgres_server_is_named_without_its_password() {
    let out = std::process::Command::new(crate::harness::BIN)
        .env_remove("CAIRN_CONFIG")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
        .args([
            "--db",
            "postgres://cairn:s3cret@localhost/cairn?host=/nonexistent-cairn-socket",
            "call",
            "list_tags",
            "{}",
        ])
        .output()
        .unwrap();
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot reach the PostgreSQL server"), "{err}");
    assert!(
        err.contains("postgres://cairn:***@localhost/cairn"),
        "{err}"
    );
    assert!(!err.contains("s3cret"), "{err}");
}
