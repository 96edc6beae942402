//! Issue-driven security and robustness checks through the interfaces an agent uses:
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
    symlink(outside.path().join("created.md"), k.repo.path().join("dangling.md")).unwrap();
    symlink(k.repo.path().join(".git/config"), k.repo.path().join("cfg.md")).unwrap();
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
        let e = k
            .c
            .err(
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
    assert_eq!(std::fs::read(k.repo.path().join(".git/config")).unwrap(), git_config);
    assert_eq!(std::fs::read(k.repo.path().join("src/calc.c")).unwrap(), source);
    assert!(std::fs::symlink_metadata(k.repo.path().join("ov.md")).unwrap().is_symlink());

    // An overview Cairn wrote is replaced by the next one; a foreign file only on request.
    k.c.ok("project_overview", json!({"projectId":k.pid,"outputPath":"docs/new/OVERVIEW.md"}))
        .await;
    k.c.ok("project_overview", json!({"projectId":k.pid,"outputPath":"docs/new/OVERVIEW.md"}))
        .await;
    k.repo.write("NOTES.md", "mine\n");
    k.c.ok(
        "project_overview",
        json!({"projectId":k.pid,"outputPath":"NOTES.md","overwrite":true}),
    )
    .await;
    assert!(k.repo.read("NOTES.md").starts_with("# Project Overview: Shop"));
}

#[tokio::test]
async fn a_reference_through_a_link_out_of_the_repository_is_refused() {
    let k = Code::start().await;
    let outside = TempDir::new();
    std::fs::write(outside.path().join("secret.md"), "# Secret\n\nline\n").unwrap();
    symlink(outside.path().join("secret.md"), k.repo.path().join("docs/leak.md")).unwrap();
    let e = k
        .c
        .err(
            "create_entity",
            json!({"projectId":k.pid,"name":"Leak","description":"x","categoryIds":[k.cat("core")],
                   "commands":[{"command":"add","kind":"text","documentPath":"docs/leak.md","startLine":1,"endLine":1}]}),
            "VALIDATION_ERROR",
        )
        .await;
    assert!(e["message"].as_str().unwrap().contains("outside the repository"), "{e}");
}
