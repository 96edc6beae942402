//! A task's briefing (`query_container get` with `brief: true`) through MCP, on a
//! project with every toolset populated: a git repository bound to it (code entities,
//! one reference made stale by an edit) that also holds the fixture ontology, atoms
//! on its Context Files, memory in the project's scope, about a subject the task
//! names, mentioning its file, and in another project's scope (which must not
//! appear). The answer holds each part, best first, within 1k, 4k and 16k tokens as
//! served, and counts what it left out per part.

use serde_json::{json, Value};

use crate::code::Repo;
use crate::harness::Cairn;
use crate::ontology::fixture_pages;

const NOW: &str = "2026-01-05T00:00:00Z";

/// A C file of `n` functions `g0..`, each 5 lines after a 2-line header.
fn chain_source(n: usize) -> String {
    let mut s = String::from("#include <zlib.h>\n\n");
    for i in 0..n {
        s.push_str(&format!(
            "int g{i}(int a) {{\n    int b = a + {i};\n    b = b * 2;\n    return b;\n}}\n\n"
        ));
    }
    s
}

struct World {
    c: Cairn,
    repo: Repo,
    task: String,
    pid: String,
}

async fn remember(c: &Cairn, atom: Value) -> Value {
    let d = c
        .ok(
            "manage_memory",
            json!({"operation":"remember","now":NOW,"atom":atom,
                   "sources":[{"refType":"doc","uri":"docs/notes.md"}]}),
        )
        .await;
    d["atom"].clone()
}

async fn world() -> World {
    let repo = Repo::new();
    repo.write("src/chain.c", &chain_source(8));
    repo.write("src/net.c", "int net(void) { return 0; }\n");
    repo.write("docs/other.md", "# Other\n\nText.\n");
    for (f, t) in fixture_pages() {
        repo.write(&format!("pages/{f}"), &t);
    }
    repo.commit("init");
    let c = Cairn::start().await;
    let d = c
        .ok(
            "init_project",
            json!({"name":"Chain","repoPath":repo.root()}),
        )
        .await;
    let pid = d["projectId"].as_str().unwrap().to_string();
    let cat = |name: &str| crate::code::category(&d, name);
    c.ok(
        "manage_ontology",
        json!({"projectId":pid,"operation":"attach","repoPath":repo.root()}),
    )
    .await;
    c.ok(
        "manage_ontology",
        json!({"projectId":pid,"operation":"sync"}),
    )
    .await;

    // Code: a Domain entity on a document elsewhere, two Units on src/chain.c (one
    // to go stale).
    let dom = c
        .ok(
            "create_entity",
            json!({"projectId":pid,"name":"other doc","description":"Unrelated documentation","categoryIds":[cat("core")],
                   "commands":[{"command":"add","kind":"text","documentPath":"docs/other.md","startLine":1,"endLine":3}]}),
        )
        .await["entity"]["id"]
        .clone();
    let entity = |name: &str, desc: &str, a: i64, b: i64| {
        json!({"projectId":pid,"name":name,"description":desc,"categoryIds":[cat("function")],"parentIds":[dom],
               "commands":[{"command":"add","kind":"code","documentPath":"src/chain.c","startLine":a,"endLine":b}]})
    };
    c.ok(
        "create_entity",
        entity(
            "g0 checksum",
            "Computes the block header checksum with crc32",
            3,
            7,
        ),
    )
    .await;
    c.ok(
        "create_entity",
        entity(
            "g1 logger",
            "Formats a log line for the node's console",
            9,
            13,
        ),
    )
    .await;
    // An edit inside g0: its reference is stale (lines_changed).
    repo.splice("src/chain.c", 5, 1, &["    b = b * 3;"]);
    repo.commit("change g0");

    // The task: its Context Files name the file with atoms and one without.
    let t = c
        .task(json!({"title":"Checksum every block header with zlib crc32","projectId":pid,
                     "description":"The consensus protocol rejects a block whose block header checksum does not match. Compute it with zlib's crc32."}))
        .await;
    // Knowledge: one atom about the task's subject, many others on the same file.
    let task = t["id"].as_str().unwrap().to_string();
    let atom = |name: &str, knowledge: &str| {
        json!({"operation":"create","entityType":"atom","projectId":pid,"name":name,
               "paths":["src/chain.c"],"knowledge":knowledge,"createdByTaskId":task})
    };
    c.ok(
        "manage_graph",
        atom(
            "Header checksum rules",
            "The block header checksum is crc32 over the header bytes, stored big-endian; a mismatch rejects the block.",
        ),
    )
    .await;
    for i in 0..24 {
        c.ok(
            "manage_graph",
            atom(
                &format!("Chain note {i}"),
                &format!("Function g{} keeps its arithmetic in plain ints; logging in module {i} goes through the console writer, which buffers {i} lines before flushing them to standard error.", i % 8),
            ),
        )
        .await;
    }

    // Memory: the project's own, about zlib (named by the task), about its file,
    // and another project's (must not appear).
    c.project("Other").await;
    remember(&c, json!({"type":"Convention","statement":"Block header checksums are crc32 from zlib, stored big-endian","area":"naming","context":"Project:Chain"})).await;
    for i in 0..16 {
        remember(&c, json!({"type":"Convention","statement":format!("Console log lines of module {i} are key=value pairs in lower case"),"area":"naming","context":"Project:Chain"})).await;
    }
    remember(&c, json!({"type":"Fact","statement":"zlib's crc32 is table-driven and needs no initialisation","about":"Lib:zlib","factKind":"observed"})).await;
    remember(&c, json!({"type":"Fact","statement":"src/chain.c is formatted by clang-format with the repository's style","factKind":"observed"})).await;
    remember(&c, json!({"type":"Convention","statement":"Other project: block headers are hashed with sha256","area":"naming","context":"Project:Other"})).await;
    remember(&c, json!({"type":"Fact","statement":"zlib is vendored under third_party in the Other project","about":"Lib:zlib","factKind":"observed","context":"Project:Other"})).await;

    c.ok(
        "manage_sections",
        json!({"operation":"add","entityType":"TASK","entityId":task,"title":"Context Files",
               "usageDescription":"files","content":"src/chain.c\nsrc/net.c\n"}),
    )
    .await;
    for i in 0..6 {
        c.ok(
            "manage_sections",
            json!({"operation":"add","entityType":"TASK","entityId":task,"title":format!("Step {i}"),
                   "usageDescription":"a step","content":format!("Step {i}: {}", "read the header, compute, compare. ".repeat(20))}),
        )
        .await;
    }
    World { c, repo, task, pid }
}

fn list(d: &Value, k: &str) -> Vec<Value> {
    d[k].as_array()
        .unwrap_or_else(|| panic!("{k}: {d:#}"))
        .clone()
}

fn texts(d: &Value, k: &str, field: &str) -> Vec<String> {
    list(d, k)
        .iter()
        .map(|v| v[field].as_str().unwrap_or("").to_string())
        .collect()
}

#[tokio::test]
async fn a_briefing_holds_every_part_ranked_within_its_budget() {
    let w = world().await;
    let c = &w.c;
    let get = |max: Option<i64>| {
        let mut a = json!({"operation":"get","containerType":"task","id":w.task,"brief":true});
        if let Some(m) = max {
            a["maxTokens"] = json!(m);
        }
        a
    };

    // Everything (maxTokens 0): what each part holds in full.
    let full = c.ok("query_container", get(Some(0))).await;
    assert_eq!(full["task"]["id"], json!(w.task));
    let plain = c
        .ok(
            "query_container",
            json!({"operation":"get","containerType":"task","id":w.task,"includeSections":true}),
        )
        .await;
    assert_eq!(
        texts(&full, "sections", "id"),
        texts(&plain, "sections", "id"),
        "the sections in their order"
    );
    let knowledge = texts(&full, "knowledge", "name");
    assert_eq!(knowledge.len(), 25);
    assert_eq!(knowledge[0], "Header checksum rules", "{knowledge:?}");
    assert_eq!(full["knowledgeGaps"], json!(["src/net.c"]));

    let code = list(&full, "code");
    let names: Vec<&str> = code.iter().map(|e| e["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["g0 checksum", "g1 logger"], "{code:#?}");
    assert_eq!(code[0]["references"][0]["staleReason"], "lines_changed");
    assert_eq!(code[0]["staleReferences"], 1);
    assert!(code[1]["references"][0].get("staleReason").is_none());

    let memory = texts(&full, "memory", "statement");
    assert_eq!(
        memory[0], "Block header checksums are crc32 from zlib, stored big-endian",
        "{memory:#?}"
    );
    for want in [
        "zlib's crc32 is table-driven and needs no initialisation",
        "src/chain.c is formatted by clang-format with the repository's style",
        "Console log lines of module 3 are key=value pairs in lower case",
    ] {
        assert!(memory.iter().any(|m| m == want), "{want}: {memory:#?}");
    }
    assert!(
        !memory.iter().any(|m| m.contains("Other project")),
        "{memory:#?}"
    );
    assert_eq!(memory.len(), 19, "{memory:#?}");

    // The classes the text names, and no other.
    let mut classes = texts(&full, "ontology", "preferredTerm");
    classes.sort();
    assert_eq!(classes, ["Block", "Block Header", "Consensus Protocol"]);
    let totals: Vec<(&str, usize)> = ["sections", "knowledge", "code", "memory", "ontology"]
        .iter()
        .map(|k| (*k, list(&full, k).len()))
        .collect();
    assert!(full["budget"].get("omittedCount").is_none_or(|o| o
        .as_object()
        .unwrap()
        .values()
        .all(|n| n == 0)));

    // The default is 4000 tokens.
    let env = c.call("query_container", get(None)).await;
    assert_eq!(env["data"]["budget"]["maxTokens"], 4000);
    // The sizes of the default answers, for the record (`--nocapture`).
    let context = c
        .call(
            "query_graph",
            json!({"operation":"context","projectId":"Chain","paths":["src/chain.c","src/net.c"]}),
        )
        .await;
    let recall = c
        .call(
            "query_memory",
            json!({"operation":"recall","projectId":"Chain","query":"block header checksum"}),
        )
        .await;
    for (what, e) in [("brief", &env), ("context", &context), ("recall", &recall)] {
        let n = e.to_string().chars().count();
        eprintln!(
            "default answer {what}: {n} characters, {} tokens",
            n.div_ceil(4)
        );
    }

    for max in [1000usize, 4000, 16000] {
        let env = c.call("query_container", get(Some(max as i64))).await;
        assert_eq!(env["success"], json!(true), "{env:#}");
        let served = env.to_string().chars().count();
        assert!(served.div_ceil(4) <= max, "{max}: {served} characters");
        let d = &env["data"];
        assert_eq!(d["budget"]["estimatedTokens"], json!(served.div_ceil(4)));
        assert_eq!(d["task"]["id"], json!(w.task));
        let mut left = 0;
        for (part, total) in &totals {
            let kept = list(d, part).len();
            assert!(kept >= 1, "{max}: {part} empty: {d:#}");
            let omitted = d["budget"]["omittedCount"][part].as_u64().unwrap_or(0) as usize;
            assert_eq!(kept + omitted, *total, "{max}: {part}: {d:#}");
            if omitted > 0 {
                left += omitted;
                assert!(d["budget"]["next"][part].is_string(), "{max}: {part}");
                let named = d["budget"][part].as_array().unwrap();
                assert!(!named.is_empty() && named.len() <= 5, "{max}: {part}");
            } else {
                assert!(d["budget"]["next"].get(*part).is_none(), "{max}: {part}");
            }
            // What stayed is the head of the full list: trimming keeps the best.
            let full_part = list(&full, part);
            assert_eq!(&list(d, part)[..], &full_part[..kept], "{max}: {part}");
        }
        if max < 16000 {
            assert!(left > 0, "{max}: nothing left out");
        }
        // Round-robin by rank: no part is more than one item shorter than another
        // that could have kept more.
        let kept: Vec<(usize, usize)> =
            totals.iter().map(|(p, t)| (list(d, p).len(), *t)).collect();
        for (k, t) in &kept {
            for (k2, _) in &kept {
                if k < t {
                    assert!(*k2 <= k + 1, "{max}: {kept:?}");
                }
            }
        }
        let msg = env["message"].as_str().unwrap();
        assert!(msg.starts_with("brief of task "), "{msg}");
    }

    // Refusals: not a task, and what the briefing already holds.
    let e = c
        .err(
            "query_container",
            json!({"operation":"get","containerType":"project","id":w.pid,"brief":true}),
            "VALIDATION_ERROR",
        )
        .await;
    assert!(e["message"].as_str().unwrap().contains("brief"), "{e}");
    c.err(
        "query_container",
        json!({"operation":"get","containerType":"task","id":w.task,"brief":true,"includeMemory":true}),
        "VALIDATION_ERROR",
    )
    .await;
    drop(w.repo);
    w.c.stop().await;
}

/// A project with no repository bound: the briefing's code part is empty and its
/// note names the call that binds one.
#[tokio::test]
async fn a_briefing_without_a_repository_says_how_to_bind_one() {
    let c = Cairn::start().await;
    let p = c.project("Unbound").await;
    let t = crate::harness::id_of(
        &c.task(json!({"title":"Tune the parser","projectId":p}))
            .await,
    );
    let b = c
        .ok(
            "query_container",
            json!({"operation":"get","containerType":"task","id":t,"brief":true}),
        )
        .await;
    let note = b["notes"]["code"].as_str().unwrap_or_default();
    assert!(
        note.contains("no repository bound") && note.contains("init_project with repoPath"),
        "{b:#}"
    );
    c.stop().await;
}
