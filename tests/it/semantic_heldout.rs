//! Search quality on text nobody here wrote: zlib's API reference (`zlib.h` from
//! Debian's `zlib1g-dev`, installed by `scripts/test.sh`) parsed at test time into one
//! entity per documented function, struct and constant, its doc comment as description,
//! and the held-out queries of `fixtures/retrieval/zlib_queries.txt`. The header's prose
//! is never copied into this repository; only the queries and expected names are ours.
//! The queries are kept out of any tuning (the ranking is tuned on
//! `fixtures/retrieval` only): this test reports, it does not steer.

use std::collections::HashMap;

use serde_json::json;

use crate::code::{id, Repo};
use crate::harness::{Cairn, TempDir, TEST_CONFIG};
use crate::semantic::{measure, parse_queries, Quality};

const QUERIES: &str = include_str!("../../fixtures/retrieval/zlib_queries.txt");

/// Where the header is read from: `$CAIRN_TEST_ZLIB_H`, else the system's.
fn header_path() -> std::path::PathBuf {
    std::env::var_os("CAIRN_TEST_ZLIB_H")
        .map(Into::into)
        .unwrap_or_else(|| "/usr/include/zlib.h".into())
}

/// One documented item of the header.
#[derive(Debug, Clone)]
pub struct Api {
    pub name: String,
    /// `function`, `struct` or `constant` (the default category it gets).
    pub kind: &'static str,
    /// The header's section the item sits in (`basic functions`, `constants`, …).
    pub section: String,
    /// 1-based lines of the declaration.
    pub start: usize,
    pub end: usize,
    pub doc: String,
}

/// A `/* … */` comment: byte span, whether it starts a line, its text unwrapped.
struct Comment {
    start: usize,
    end: usize,
    alone: bool,
    text: String,
}

fn unwrap_comment(body: &str) -> String {
    body.lines()
        .map(|l| l.trim().trim_start_matches('*').trim())
        .collect::<Vec<_>>()
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

fn comments(src: &str) -> Vec<Comment> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(s) = src[at..].find("/*").map(|i| i + at) {
        let Some(e) = src[s + 2..].find("*/").map(|i| i + s + 2) else {
            break;
        };
        let line_start = src[..s].rfind('\n').map_or(0, |i| i + 1);
        out.push(Comment {
            start: s,
            end: e + 2,
            alone: src[line_start..s].trim().is_empty(),
            text: unwrap_comment(&src[s + 2..e]),
        });
        at = e + 2;
    }
    out
}

fn line_of(src: &str, byte: usize) -> usize {
    src[..byte].matches('\n').count() + 1
}

fn last_ident(s: &str) -> Option<String> {
    let t = s.trim_end();
    let start = t
        .rfind(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |i| i + 1);
    let w = &t[start..];
    (!w.is_empty()).then(|| w.to_string())
}

/// Parses the header into its documented items (the first of each name wins).
pub fn parse(src: &str) -> Vec<Api> {
    let cs = comments(src);
    let in_comment = |p: usize| cs.iter().find(|c| c.start < p && p < c.end);
    // Sections: a short comment alone on an indented line.
    let sections: Vec<(usize, String)> = cs
        .iter()
        .filter(|c| {
            let ls = src[..c.start].rfind('\n').map_or(0, |i| i + 1);
            c.alone && c.start - ls >= 8 && !c.text.contains('.') && c.text.len() < 40
        })
        .map(|c| (c.start, c.text.clone()))
        .collect();
    let section_at = |p: usize| {
        sections
            .iter()
            .rev()
            .find(|(s, _)| *s < p)
            .map_or("types".to_string(), |(_, t)| t.clone())
    };
    let mut out: Vec<Api> = Vec::new();
    let push = |a: Api, out: &mut Vec<Api>| {
        if !a.doc.is_empty() && !out.iter().any(|b| b.name == a.name) {
            out.push(a);
        }
    };

    // Functions: `ZEXTERN … name OF((…));` or `Z_ARG((…));`, outside a comment (the doc
    // is the comment alone on a later line, shared by declarations in a row) or opening
    // one (the doc is the rest of that comment).
    struct Decl {
        name: String,
        start: usize,
        end: usize,
        doc: Option<String>,
    }
    let mut decls: Vec<Decl> = Vec::new();
    let mut at = 0;
    while let Some(p) = src[at..].find("ZEXTERN").map(|i| i + at) {
        at = p + 7;
        let open = ["OF((", "Z_ARG(("]
            .iter()
            .filter_map(|k| src[p..].find(k))
            .min()
            .map(|i| i + p);
        let (Some(open), Some(close)) = (open, src[p..].find("));").map(|i| i + p + 3)) else {
            continue;
        };
        let Some(name) = last_ident(&src[p..open]) else {
            continue;
        };
        let doc = in_comment(p).map(|c| unwrap_comment(&src[close..c.end - 2]));
        decls.push(Decl {
            name,
            start: p,
            end: close,
            doc,
        });
    }
    // Resolve the shared docs from the last declaration backwards.
    let mut next_doc: Option<String> = None;
    for i in (0..decls.len()).rev() {
        if decls[i].doc.is_some() {
            next_doc = None;
            continue;
        }
        let after = &src[decls[i].end..];
        let rest = after.trim_start();
        let gap = &after[..after.len() - rest.len()];
        let doc = if rest.starts_with("/*") && gap.contains('\n') {
            cs.iter()
                .find(|c| c.start == decls[i].end + gap.len())
                .map(|c| c.text.clone())
        } else if rest.starts_with("ZEXTERN") && gap.contains('\n') {
            next_doc.clone()
        } else {
            None
        };
        decls[i].doc = doc.clone();
        next_doc = doc;
    }
    for d in decls {
        let Some(doc) = d.doc else { continue };
        push(
            Api {
                section: section_at(d.start),
                start: line_of(src, d.start),
                end: line_of(src, d.end),
                name: d.name,
                kind: "function",
                doc,
            },
            &mut out,
        );
    }

    // Structs: `typedef struct x_s { … } x;`, described by the comment right above
    // and by their fields' comments.
    let mut at = 0;
    while let Some(p) = src[at..].find("\ntypedef struct ").map(|i| i + at + 1) {
        at = p + 1;
        let (Some(open), Some(close)) = (src[p..].find('{'), src[p..].find("\n}")) else {
            continue;
        };
        let (open, close) = (open + p, close + p + 1);
        let Some(semi) = src[close..].find(';').map(|i| i + close) else {
            continue;
        };
        let Some(name) = last_ident(&src[close + 1..semi]) else {
            continue;
        };
        let above = cs
            .iter()
            .find(|c| c.alone && c.end <= p && src[c.end..p].trim().is_empty())
            .map(|c| c.text.clone())
            .unwrap_or_default();
        let mut fields = Vec::new();
        for c in cs.iter().filter(|c| open < c.start && c.end < close) {
            let line_start = src[..c.start].rfind('\n').map_or(0, |i| i + 1);
            if let Some(f) = src[line_start..c.start]
                .rfind(';')
                .and_then(|i| last_ident(&src[line_start..line_start + i]))
            {
                fields.push(format!("{f}: {}", c.text));
            }
        }
        let doc = format!("{above} Fields: {}.", fields.join("; "));
        push(
            Api {
                name,
                kind: "struct",
                section: "types".into(),
                start: line_of(src, p),
                end: line_of(src, semi),
                doc: doc.trim().to_string(),
            },
            &mut out,
        );
    }

    // Constants: runs of `#define NAME value` lines; each gets its own trailing comment
    // and the comment on the line right after the run.
    let lines: Vec<&str> = src.lines().collect();
    let mut i = 0;
    while i < lines.len() {
        let mut run = Vec::new();
        while let Some(l) = lines.get(i).filter(|l| l.starts_with("#define ")) {
            let rest = &l[8..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            let trailing = l
                .find("/*")
                .and_then(|s| l.find("*/").map(|e| unwrap_comment(&l[s + 2..e])))
                .unwrap_or_default();
            if !rest[name.len()..].starts_with('(') && !name.is_empty() {
                run.push((name, i + 1, trailing));
            }
            i += 1;
        }
        if run.is_empty() {
            i += 1;
            continue;
        }
        let group = match lines.get(i) {
            Some(l) if l.trim_start().starts_with("/*") => {
                let mut body = String::new();
                while let Some(l) = lines.get(i) {
                    body.push_str(l);
                    body.push('\n');
                    i += 1;
                    if l.contains("*/") {
                        break;
                    }
                }
                let s = body.find("/*").unwrap_or(0) + 2;
                let e = body.rfind("*/").unwrap_or(body.len());
                unwrap_comment(&body[s..e.max(s)])
            }
            _ => String::new(),
        };
        let byte = src
            .match_indices('\n')
            .nth(run[0].1.saturating_sub(2))
            .map_or(0, |x| x.0);
        for (name, line, trailing) in run {
            let doc = format!("{trailing} {group}").trim().to_string();
            push(
                Api {
                    name,
                    kind: "constant",
                    section: section_at(byte),
                    start: line,
                    end: line,
                    doc,
                },
                &mut out,
            );
        }
    }
    out
}

#[test]
fn the_header_parses_into_documented_items() {
    let Ok(src) = std::fs::read_to_string(header_path()) else {
        panic!(
            "{} is missing: run scripts/test.sh (it installs zlib1g-dev)",
            header_path().display()
        );
    };
    let api = parse(&src);
    let get = |n: &str| {
        api.iter()
            .find(|a| a.name == n)
            .unwrap_or_else(|| panic!("{n} not parsed"))
    };
    assert!(api.len() >= 100, "{} items", api.len());
    assert_eq!(get("deflate").kind, "function");
    assert_eq!(get("deflate").section, "basic functions");
    assert!(
        get("deflateInit").doc.starts_with("Initializes"),
        "{:?}",
        get("deflateInit")
    );
    assert_eq!(get("gzclose_r").doc, get("gzclose_w").doc);
    assert!(get("z_stream").doc.contains("next_in: next input byte"));
    assert!(get("gz_header").doc.contains("RFC 1952"));
    assert_eq!(get("Z_FINISH").section, "constants");
    assert!(get("Z_ASCII").doc.starts_with("for compatibility"));
    assert!(api
        .iter()
        .all(|a| a.name != "ZLIB_VERSION" && a.name != "zError"));
    assert!(api
        .iter()
        .all(|a| !a.doc.contains("*/") && a.start <= a.end));
}

/// A server whose project holds the header's items: a Domain, one Namespace per
/// section, a Component per struct and a Unit per function and constant, each with a
/// code reference to its lines of `zlib.h` (no language server: the lines are given).
async fn load(c: &Cairn, repo: &Repo, src: &str) -> (String, HashMap<String, String>) {
    repo.write("zlib.h", src);
    repo.commit("zlib.h");
    let d = c
        .ok(
            "init_project",
            json!({"name":"zlib","repoPath":repo.root()}),
        )
        .await;
    let pid = d["projectId"].as_str().unwrap().to_string();
    let cat = |n: &str| {
        d["categories"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == n)
            .unwrap()["id"]
            .as_str()
            .unwrap()
            .to_string()
    };
    let lines = src.lines().count();
    let create = |name: String,
                  category: &str,
                  parent: Option<&String>,
                  desc: String,
                  a: usize,
                  b: usize| {
        // Anchored by lines alone: the section names are labels that need not occur in
        // the lines, and no language server reads a header here.
        let mut cmd = json!({"command":"add","kind":"code","documentPath":"zlib.h",
                             "startLine":a,"endLine":b,"description":format!("{name} in zlib.h")});
        if category == "core" {
            // A Domain takes text references.
            cmd["kind"] = json!("text");
        }
        let parents: Vec<&String> = parent.into_iter().collect();
        json!({"projectId":pid,"name":name,"description":desc,"categoryIds":[cat(category)],
               "parentIds":parents,"commands":[cmd]})
    };
    let mut ids = HashMap::new();
    let domain = c
        .ok(
            "create_entity",
            create(
                "zlib".into(),
                "core",
                None,
                "The zlib compression library's public interface.".into(),
                1,
                lines,
            ),
        )
        .await;
    ids.insert("zlib".to_string(), id(&domain["entity"]));
    for a in parse(src) {
        if !ids.contains_key(&a.section) {
            let e = c
                .ok(
                    "create_entity",
                    create(
                        a.section.clone(),
                        "module",
                        ids.get("zlib"),
                        format!("zlib.h, part: {}", a.section),
                        a.start,
                        a.end,
                    ),
                )
                .await;
            ids.insert(a.section.clone(), id(&e["entity"]));
        }
        let e = c
            .ok(
                "create_entity",
                create(
                    a.name.clone(),
                    a.kind,
                    ids.get(&a.section),
                    a.doc.clone(),
                    a.start,
                    a.end,
                ),
            )
            .await;
        ids.insert(a.name, id(&e["entity"]));
    }
    (pid, ids)
}

#[tokio::test]
async fn heldout_zlib_recall_hybrid_beats_each_single_mode() {
    let src = std::fs::read_to_string(header_path()).unwrap_or_else(|e| {
        panic!(
            "{}: {e}: run scripts/test.sh (it installs zlib1g-dev)",
            header_path().display()
        )
    });
    let tmp = TempDir::new();
    let cfg = tmp.path().join("config.toml");
    // No language server for the header: its lines are given.
    std::fs::write(&cfg, format!("{TEST_CONFIG}[lsp]\nh = \"\"\n")).unwrap();
    let c = Cairn::on(
        &tmp.path().join("cairn.db"),
        &["--config", cfg.to_str().unwrap()],
    )
    .await;
    let repo = Repo::new();
    let (pid, ids) = load(&c, &repo, &src).await;
    let queries = parse_queries(QUERIES);
    assert!(queries.len() >= 30);
    let mut q: HashMap<&str, Quality> = HashMap::new();
    let mut misses = Vec::new();
    for mode in ["hybrid", "lexical", "vector"] {
        q.insert(
            mode,
            measure(&c, &pid, &ids, &queries, mode, &mut misses).await,
        );
    }
    println!("zlib.h ({} entities, {} queries)", ids.len(), queries.len());
    for m in ["hybrid", "lexical", "vector"] {
        println!("{m:<8} {}", q[m]);
    }
    for m in &misses {
        println!("hybrid miss: {m}");
    }
    let (h, l, v) = (q["hybrid"], q["lexical"], q["vector"]);
    assert!(
        h.recall > l.recall && h.recall > v.recall,
        "hybrid {h} lexical {l} vector {v}"
    );
    c.stop().await;
}
