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
        r.send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#).await;
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
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":106,"method":"tools/call","params":{{"name":"get_next_task","arguments":{{"x":{}1{}}}}}}}"#,
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
        assert_eq!(a.get("id").cloned().unwrap_or(json!(null)), id, "case {i}: {a}");
        assert!(!a["error"]["message"].as_str().unwrap_or("").is_empty());
        // The next request is answered as usual.
        let ping = 1000 + i as i64;
        r.send(format!(r#"{{"jsonrpc":"2.0","id":{ping},"method":"ping"}}"#).as_bytes())
            .await;
        let p = r.next().await;
        assert_eq!(p["id"], json!(ping), "after case {i}: {p}");
        assert!(p.get("result").is_some(), "after case {i}: {p}");
    }
    r.child.kill().await.unwrap();
}
