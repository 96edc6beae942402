//! The embedder as a person or a script sees it: `cairn embed` says which embedder runs
//! and how similar the texts are; `cairn reindex` runs on any database. The real model
//! is the one `scripts/test.sh` installs.

use std::process::Command;

use serde_json::Value;

use crate::harness::{model_dir, TempDir, BIN};

fn cairn(args: &[&str]) -> (bool, Value, String) {
    let out = Command::new(BIN)
        .args(args)
        .env_remove("CAIRN_CONFIG")
        .env_remove("CAIRN_MODEL_DIR")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
        .output()
        .expect("run cairn");
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let stderr = String::from_utf8_lossy(&out.stderr).to_string();
    let json = serde_json::from_str(&stdout).unwrap_or(Value::Null);
    (out.status.success(), json, stderr)
}

#[test]
fn real_model_ranks_paraphrases_above_unrelated_text() {
    let dir = model_dir();
    let dir = dir.to_str().expect("utf-8 path");
    let (ok, v, err) = cairn(&[
        "--model-dir",
        dir,
        "embed",
        "The cat sits on the mat.",
        "A cat is sitting on a rug.",
        "Quarterly revenue grew by ten percent.",
    ]);
    assert!(ok, "{err}");
    assert_eq!(
        v["embedder"], "all-minilm-l6-v2",
        "the tests need the model: run scripts/test.sh ({v})"
    );
    assert_eq!(v["dim"], 384);
    let sim = |i: usize, j: usize| v["similarity"][i][j].as_f64().unwrap_or(f64::NAN);
    assert!(sim(0, 1) > 0.7, "{v}");
    assert!(sim(0, 2) < 0.1, "{v}");
    assert!((sim(0, 0) - 1.0).abs() < 1e-3);
}

#[test]
fn missing_model_falls_back_to_hashing_and_says_why() {
    let (ok, v, err) = cairn(&[
        "--model-dir",
        "/nonexistent/cairn-model",
        "embed",
        "a b",
        "a c",
    ]);
    assert!(ok, "{err}");
    assert_eq!(v["embedder"], "hashing-v1");
    assert!(
        v["fallbackReason"]
            .as_str()
            .unwrap_or("")
            .contains("fetch-model"),
        "{v}"
    );
}

#[test]
fn reindex_runs_on_a_fresh_database() {
    let tmp = TempDir::new();
    let db = crate::harness::db_arg(&tmp.path().join("cairn.db"));
    let db = db.to_str().expect("utf-8 path");
    let (ok, _, err) = cairn(&[
        "--db",
        db,
        "--model-dir",
        "/nonexistent/cairn-model",
        "reindex",
    ]);
    assert!(ok, "{err}");
    assert!(err.contains("reindex: 0 embedded with hashing-v1"), "{err}");
}
