//! Benchmark of the `code` toolset: `analyze_document` on a 2,000-line C file holding
//! 200 references, with clangd warm, as round trips over MCP stdio to the real
//! binary (fresh migrated database, one session, sequential calls). Prints a table.
//!
//! Run: `cargo bench --bench code` (needs `clangd` and `git` on PATH).
//!
//! Cairn keeps clangd's symbols for a document's exact text, so the first two rows
//! ask clangd nothing new; the third row edits the file before every call and so
//! measures a real clangd round trip each time.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod client;
use client::Server;
const FUNCTIONS: usize = 333; // 2 + 333 * 6 = 2,000 lines
const REFERENCES: usize = 200;
const WARMUP: usize = 5;
const SAMPLES: usize = 60;

fn git(dir: &Path, args: &[&str]) {
    let ok = Command::new("git")
        .current_dir(dir)
        .args(["-c", "user.name=b", "-c", "user.email=b@b"])
        .args(args)
        .status()
        .expect("git")
        .success();
    assert!(ok, "git {args:?}");
}

fn source() -> String {
    let mut s = String::from("#include <stdio.h>\n\n");
    for i in 0..FUNCTIONS {
        s.push_str(&format!(
            "int f{i}(int a) {{\n    int b = a + {i};\n    b = b * 2;\n    return b;\n}}\n\n"
        ));
    }
    s
}

fn stats(mut v: Vec<Duration>) -> (f64, f64, f64) {
    v.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let p = |q: f64| ms(v[((v.len() as f64 - 1.0) * q).round() as usize]);
    (p(0.5), p(0.95), ms(v[v.len() - 1]))
}

/// Round trips of `analyze_document`; `before` runs ahead of each call, untimed.
fn measure(
    s: &mut Server,
    pid: &str,
    mut before: impl FnMut(usize),
    check: impl Fn(&Value),
) -> Vec<Duration> {
    let args = json!({"projectId": pid, "documentPath": "src/big.c"});
    for i in 0..WARMUP {
        before(i);
        check(&s.call("analyze_document", args.clone()));
    }
    (0..SAMPLES)
        .map(|i| {
            before(i);
            let t = Instant::now();
            let d = s.call("analyze_document", args.clone());
            let e = t.elapsed();
            check(&d);
            e
        })
        .collect()
}

fn main() {
    let dir = std::env::temp_dir().join(format!("cairn-bench-code-{}", std::process::id()));
    let repo: PathBuf = dir.join("repo");
    std::fs::create_dir_all(repo.join("src")).expect("mkdir");
    let text = source();
    assert_eq!(text.lines().count(), 2000);
    std::fs::write(repo.join("src/big.c"), &text).expect("write");
    std::fs::write(repo.join("README.md"), "# Big\n\nA big file.\n").expect("write");
    git(&repo, &["init", "-q"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "init"]);

    let mut s = Server::start(&dir.join("cairn.db"), &[], &[]);
    let init = s.call(
        "init_project",
        json!({"name":"Big","repoPath":repo.to_string_lossy()}),
    );
    let pid = init["projectId"].as_str().expect("projectId").to_string();
    let cat = |name: &str| -> String {
        init["categories"]
            .as_array()
            .and_then(|a| a.iter().find(|c| c["name"] == json!(name)))
            .and_then(|c| c["id"].as_str())
            .expect("category")
            .to_string()
    };
    let text_ref = json!([{"command":"add","kind":"text","documentPath":"README.md","startLine":1,"endLine":3}]);
    let dom = s.call("create_entity", json!({"projectId":pid,"name":"Big","description":"d","categoryIds":[cat("core")],"commands":text_ref}));
    let dom = dom["entity"]["id"].as_str().expect("id").to_string();
    let feat = s.call("create_entity", json!({"projectId":pid,"name":"F","description":"d","categoryIds":[cat("capability")],"parentIds":[dom],"commands":text_ref}));
    let feat = feat["entity"]["id"].as_str().expect("id").to_string();
    // One Namespace entity holding 200 code references (one per function), so the
    // document carries 200 references attached to an entity.
    let adds: Vec<Value> = (0..REFERENCES)
        .map(|i| json!({"command":"add","kind":"code","documentPath":"src/big.c","lspSymbol":format!("f{i}"),"description":format!("function {i}")}))
        .collect();
    let t = Instant::now();
    let ns = s.call("create_entity", json!({"projectId":pid,"name":"big","description":"d","categoryIds":[cat("module")],"parentIds":[feat],"commands":adds}));
    let setup = t.elapsed();
    assert_eq!(ns["executed"].as_array().map(Vec::len), Some(REFERENCES));

    let clean = measure(
        &mut s,
        &pid,
        |_| {},
        |d| {
            assert_eq!(d["summary"]["trackedCount"], json!(REFERENCES));
            assert_eq!(
                d["summary"]["untrackedCount"],
                json!(FUNCTIONS - REFERENCES)
            );
        },
    );
    // An uncommitted edit inside f10 and two lines above everything: every
    // reference is diffed, one is stale, the rest get a suggestedRange.
    let mut lines: Vec<&str> = text.lines().collect();
    lines[2 + 6 * 10 + 2] = "    b = b * 3;";
    lines.insert(1, "/* edited */");
    lines.insert(1, "/* edited */");
    let edited = lines.join("\n") + "\n";
    std::fs::write(repo.join("src/big.c"), &edited).expect("write");
    let dirty = measure(
        &mut s,
        &pid,
        |_| {},
        |d| {
            assert_eq!(d["summary"]["staleCount"], json!(1));
            assert_eq!(d["summary"]["shiftedCount"], json!(REFERENCES - 1));
        },
    );
    // The file changes before every call (a trailing comment alternates), so every
    // call re-sends the text to clangd, asks it for symbols and diffs a new blob.
    let path = repo.join("src/big.c");
    let changing = measure(
        &mut s,
        &pid,
        |i| {
            let tail = format!("/* edit {} */\n", i % 2);
            std::fs::write(&path, format!("{edited}{tail}")).expect("write");
        },
        |d| assert_eq!(d["summary"]["staleCount"], json!(1)),
    );

    println!();
    println!(
        "code toolset: analyze_document, 2,000-line C file, {REFERENCES} references, clangd warm"
    );
    println!("MCP stdio round trips, {SAMPLES} samples after {WARMUP} warm-up calls (target: median <= 50 ms)");
    println!();
    println!("| case                              | median ms | p95 ms | max ms |");
    println!("|-----------------------------------|----------:|-------:|-------:|");
    for (name, v) in [
        ("clean tree (no hunks)", clean),
        ("dirty tree (2 hunks, 199 shifted)", dirty),
        ("file edited before every call", changing),
    ] {
        let (m, p95, max) = stats(v);
        println!("| {name:<33} | {m:>9.1} | {p95:>6.1} | {max:>6.1} |");
    }
    println!();
    println!(
        "setup: create_entity with {REFERENCES} add commands (each validated by clangd): {:.0} ms",
        setup.as_secs_f64() * 1000.0
    );
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}
