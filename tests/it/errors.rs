//! Errors say what happened, to whom it concerns. An internal failure answers
//! `INTERNAL_ERROR` with a short message and an id; the cause (the database's text,
//! SQL, file paths) is only in the server's log, on the line with that id. The
//! failures are made under a running server from the test's own connection to its
//! database: triggers that fail a statement or a COMMIT, a table renamed away. And a
//! database directory that exists but cannot be entered says permission denied.

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};

use crate::harness::{Cairn, HttpServer, TempDir, Transport};

/// What a server wrote on stderr, line by line.
type Log = Arc<Mutex<Vec<String>>>;

/// A server on `db` over `t` whose stderr the test reads.
async fn logged(t: Transport, db: &Path) -> (Cairn, Log) {
    match t {
        Transport::Http => {
            let server = HttpServer::start(
                db,
                &[
                    "--config",
                    &crate::harness::default_config().to_string_lossy(),
                ],
                &[],
                &[],
            )
            .await;
            let log = server.stderr.clone();
            let client = server.client(None).await;
            let mut c = Cairn::from_client(client, db);
            c.http = Some(server);
            (c, log)
        }
        Transport::Stdio => {
            use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
            use rmcp::ServiceExt;
            use tokio::io::AsyncBufReadExt;
            let cfg = crate::harness::default_config().to_path_buf();
            let db_arg = crate::harness::db_arg(db);
            let cmd = tokio::process::Command::new(crate::harness::BIN).configure(|c| {
                c.arg("--db")
                    .arg(&db_arg)
                    .arg("--config")
                    .arg(&cfg)
                    .arg("serve")
                    .env_remove("CAIRN_CONFIG")
                    .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
                    .env_remove("CAIRN_DB")
                    .env("CAIRN_MODEL_DIR", crate::harness::model_dir());
            });
            let (transport, stderr) = TokioChildProcess::builder(cmd)
                .stderr(std::process::Stdio::piped())
                .spawn()
                .expect("spawn cairn");
            let log: Log = Arc::default();
            let keep = log.clone();
            let mut lines = tokio::io::BufReader::new(stderr.expect("piped stderr")).lines();
            tokio::spawn(async move {
                while let Ok(Some(line)) = lines.next_line().await {
                    eprintln!("[cairn stdio] {line}");
                    keep.lock().unwrap().push(line);
                }
            });
            let client = ().serve(transport).await.expect("MCP initialize");
            (Cairn::from_client(client, db), log)
        }
    }
}

/// The line of `log` naming incident `id`, waited for (stderr is read as it comes).
async fn logged_line(log: &Log, id: &str) -> String {
    for _ in 0..500 {
        if let Some(l) = log.lock().unwrap().iter().find(|l| l.contains(id)) {
            return l.clone();
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!(
        "no line of the server's log names {id}: {:?}",
        log.lock().unwrap()
    );
}

/// Checks an `INTERNAL_ERROR` answer: a short message with an id and nothing of
/// `secrets` (the cause's words, SQL, the database's path), and the log's line for
/// that id holding `cause`. Returns the id.
async fn internal(env: &Value, log: &Log, cause: &str, secrets: &[&str]) -> String {
    assert_eq!(env["error"]["code"], "INTERNAL_ERROR", "{env:#}");
    let id = env["error"]["details"]["errorId"]
        .as_str()
        .unwrap_or_else(|| panic!("no errorId: {env:#}"))
        .to_string();
    assert!(
        id.len() == 8 && id.chars().all(|c| c.is_ascii_hexdigit()),
        "{id}"
    );
    let text = serde_json::to_string(env).unwrap();
    let m = env["message"].as_str().unwrap();
    assert!(m.contains(&id) && m.len() < 160, "{m}");
    assert!(
        env["error"].get("message").is_none(),
        "the text twice: {env:#}"
    );
    for s in secrets.iter().chain(&[cause]) {
        assert!(
            !text.to_lowercase().contains(&s.to_lowercase()),
            "the answer shows {s:?}: {text}"
        );
    }
    let line = logged_line(log, &id).await;
    assert!(line.contains(cause), "the log's line for {id}: {line}");
    id
}

/// Triggers on `projects`, from the test's own connection: a project named
/// `poison-statement` fails its INSERT and (SQLite) ends the whole transaction;
/// `poison-commit` fails at COMMIT (a deferred foreign key, or a deferred constraint
/// trigger). Returns the causes each leaves in the log.
async fn poison(db: &Path) -> (&'static str, &'static str) {
    let mut c = crate::harness::sql(db).await;
    let pg = crate::harness::postgres().is_some();
    let script = if pg {
        "CREATE FUNCTION poisoned() RETURNS trigger LANGUAGE plpgsql AS \
           $$ BEGIN RAISE EXCEPTION 'poisoned by the test: %', NEW.name; END $$; \
         CREATE TRIGGER poison_statement BEFORE INSERT ON projects FOR EACH ROW \
           WHEN (NEW.name = 'poison-statement') EXECUTE FUNCTION poisoned(); \
         CREATE CONSTRAINT TRIGGER poison_commit AFTER INSERT ON projects \
           DEFERRABLE INITIALLY DEFERRED FOR EACH ROW \
           WHEN (NEW.name = 'poison-commit') EXECUTE FUNCTION poisoned();"
    } else {
        "CREATE TRIGGER poison_statement BEFORE INSERT ON projects \
           WHEN NEW.name = 'poison-statement' \
           BEGIN SELECT RAISE(ROLLBACK, 'poisoned by the test'); END; \
         CREATE TABLE poison_parent (id INTEGER PRIMARY KEY); \
         CREATE TABLE poison_child (p INTEGER REFERENCES poison_parent (id) DEFERRABLE INITIALLY DEFERRED); \
         CREATE TRIGGER poison_commit AFTER INSERT ON projects \
           WHEN NEW.name = 'poison-commit' \
           BEGIN INSERT INTO poison_child VALUES (42); END;"
    };
    sqlx::raw_sql(sqlx::AssertSqlSafe(script))
        .execute(&mut c)
        .await
        .unwrap();
    if pg {
        ("poisoned by the test", "poisoned by the test")
    } else {
        ("poisoned by the test", "FOREIGN KEY constraint failed")
    }
}

async fn internal_errors_carry_an_id_and_never_the_cause(t: Transport) {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let (c, log) = logged(t, &db).await;
    c.project("First").await;
    let (statement, commit) = poison(&db).await;
    let path = db.to_string_lossy().into_owned();
    let secrets = ["INSERT", "projects", "sqlx", "database", path.as_str()];
    let mut ids = Vec::new();
    // Each more often than the pool has connections: none is lent again inside the
    // transaction the failure left, and every other write goes on.
    for round in 0..10 {
        for (name, cause) in [("poison-statement", statement), ("poison-commit", commit)] {
            let env = c
                .call(
                    "manage_container",
                    json!({"operation":"create","containerType":"project","name":name}),
                )
                .await;
            ids.push(internal(&env, &log, cause, &secrets).await);
            c.project(&format!("fine {round} {name}")).await;
        }
    }
    ids.sort();
    ids.dedup();
    assert_eq!(ids.len(), 20, "every incident has an id of its own");

    // A table gone from under the server: a read fails the same way, and works
    // again once the table is back.
    let mut sql = crate::harness::sql(&db).await;
    sqlx::query("ALTER TABLE tags RENAME TO tags_away")
        .execute(&mut sql)
        .await
        .unwrap();
    let env = c.call("list_tags", json!({})).await;
    let gone = if crate::harness::postgres().is_some() {
        "does not exist"
    } else {
        "no such table"
    };
    internal(&env, &log, gone, &["SELECT", "tags", path.as_str()]).await;
    if let Some(http) = &c.http {
        // The page answers with the id, not the cause, too.
        sqlx::query("ALTER TABLE projects RENAME TO projects_away")
            .execute(&mut sql)
            .await
            .unwrap();
        let r = reqwest::get(format!("{}/", http.base)).await.unwrap();
        assert_eq!(r.status(), 500);
        let body = r.text().await.unwrap();
        assert!(body.contains("internal error"), "{body}");
        assert!(
            !body.contains(gone) && !body.contains("projects_away"),
            "{body}"
        );
        sqlx::query("ALTER TABLE projects_away RENAME TO projects")
            .execute(&mut sql)
            .await
            .unwrap();
    }
    sqlx::query("ALTER TABLE tags_away RENAME TO tags")
        .execute(&mut sql)
        .await
        .unwrap();
    c.ok("list_tags", json!({})).await;
    c.stop().await;
}

over_both_transports!(internal_errors_carry_an_id_and_never_the_cause);

/// A database in a directory this user cannot enter, or below one: permission
/// denied, naming the directory, never "does not exist". Run as `nobody` when the
/// tests run as root (for whom permissions do not bite).
#[test]
fn a_directory_that_cannot_be_entered_is_not_called_missing() {
    use std::os::unix::fs::PermissionsExt;
    if !crate::harness::sqlite_only("a database file's directory") {
        return;
    }
    let dir = TempDir::new();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    // Readable, not searchable: its entries can be listed, not reached.
    let closed = dir.path().join("closed");
    std::fs::create_dir_all(closed.join("sub")).unwrap();
    std::fs::set_permissions(&closed, std::fs::Permissions::from_mode(0o644)).unwrap();
    for (db, names) in [
        (closed.join("cairn.db"), closed.clone()),
        (closed.join("sub/cairn.db"), closed.clone()),
    ] {
        let out = crate::security::call_as_user(&db, "list_tags", "{}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "{err}");
        assert!(
            err.contains("permission denied") && err.contains(&*names.to_string_lossy()),
            "{}: {err}",
            db.display()
        );
        assert!(!err.contains("does not exist"), "{err}");
    }
    // A directory that is really missing still says so.
    let out = crate::security::call_as_user(&dir.path().join("nope/cairn.db"), "list_tags", "{}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("does not exist"), "{err}");
}
