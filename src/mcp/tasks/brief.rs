//! `query_container get` with `brief: true`: a task's briefing as JSON, held to
//! `maxTokens` as served.
//!
//! The trimming rule (one for every part): each part is a list, best first; when the
//! answer is over budget the items furthest down their lists go first, across parts
//! in turn, so that every part keeps its best items for as long as any other part
//! keeps items placed as high (round-robin by rank). Among items placed equally, the
//! ontology's goes first, then code's, memory's, knowledge's, and a section last. The
//! task itself, the knowledge gaps and the notes are never shed. What went is counted
//! per part under `budget.omittedCount`, its first few named, and `budget.next` names,
//! per part that lost items, the call that fetches them.

use serde_json::{json, Map, Value};

use crate::mcp::budget::{fit, Shed, Summary};
use crate::mcp::envelope::Reply;
use crate::mcp::json;
use crate::service::brief::{Brief, Note};

/// The budget when the caller names none.
pub const DEFAULT_TOKENS: usize = 4000;

/// The parts in their tie order for shedding (the first goes first), with the call
/// that fetches what a part lost.
const PARTS: [(&str, &str); 5] = [
    (
        "ontology",
        "ontology_discover (projectId, query) or ontology_read (iri)",
    ),
    (
        "code",
        "analyze_document (projectId, documentPath) per file, get_entity (id)",
    ),
    (
        "memory",
        "query_memory recall (projectId, query) or get (id)",
    ),
    (
        "knowledge",
        "query_graph context (projectId, paths: the task's Context Files)",
    ),
    (
        "sections",
        "query_sections (entityType TASK, entityId: the task's id)",
    ),
];

fn place(_: &Value, k: usize) -> f64 {
    -(k as f64)
}

fn brief_of(v: &Value) -> Value {
    let mut m = Map::new();
    for k in ["id", "iri", "name", "title"] {
        if let Some(x) = v.get(k) {
            m.insert(k.into(), x.clone());
        }
    }
    Value::Object(m)
}

fn sheds() -> [Shed; 5] {
    let shed = |at, summary| Shed {
        at,
        rank: place,
        brief: brief_of,
        keep_first: 0,
        summary,
    };
    [
        shed("/ontology", "ontology"),
        shed("/code", "code"),
        shed("/memory", "memory"),
        shed("/knowledge", "knowledge"),
        shed("/sections", "sections"),
    ]
}

const SUMMARY: Summary = Summary {
    at: "/budget",
    counts: "omittedCount",
    next: "",
    estimate: Some("/budget/estimatedTokens"),
    capped: &[],
    fetch: &PARTS,
};

/// The message, from the answer as sent.
fn message(d: &Value) -> String {
    let n = |k: &str| d[k].as_array().map_or(0, Vec::len);
    let stale: usize = d["code"].as_array().map_or(0, |a| {
        a.iter()
            .map(|e| e["staleReferences"].as_u64().unwrap_or(0) as usize)
            .sum()
    });
    let mut s = format!(
        "brief of task {}: {} section(s), {} knowledge atom(s), {} code entit(ies) ({stale} stale reference(s)), {} memory atom(s), {} ontology class(es)",
        d["task"]["title"].as_str().unwrap_or(""),
        n("sections"),
        n("knowledge"),
        n("code"),
        n("memory"),
        n("ontology")
    );
    let left: u64 = d["budget"]["omittedCount"]
        .as_object()
        .map_or(0, |m| m.values().filter_map(Value::as_u64).sum());
    if left > 0 {
        s.push_str(&format!(
            "; {left} left out to stay within {} tokens (budget.next)",
            d["budget"]["maxTokens"]
        ));
    }
    s
}

/// The briefing as served within `max` tokens (`None`: everything).
pub fn reply(b: &Brief, max: Option<usize>) -> Reply {
    let sections: Vec<Value> = b
        .sections
        .iter()
        .map(
            |s| json!({ "id": s.id, "title": s.title, "content": s.content, "version": s.version }),
        )
        .collect();
    let knowledge: Vec<Value> = b
        .knowledge
        .iter()
        .map(|k| {
            let mut v = json!({ "id": k.atom.id, "name": k.atom.name, "knowledge": k.atom.knowledge,
                                "paths": k.paths, "version": k.atom.version });
            if let Some((id, name)) = &k.molecule {
                v["molecule"] = json!({ "id": id, "name": name });
            }
            v
        })
        .collect();
    let code: Vec<Value> = b
        .code
        .iter()
        .map(|e| {
            let refs: Vec<Value> = e
                .references
                .iter()
                .map(|s| {
                    let r = &s.reference;
                    let mut v = json!({ "id": r.id, "documentPath": r.document_path,
                                        "startLine": s.now.0, "endLine": s.now.1 });
                    if let Some(sym) = &r.lsp_symbol {
                        v["lspSymbol"] = json!(sym);
                    }
                    if let Some(why) = s.reason {
                        v["staleReason"] = json!(why);
                    }
                    v
                })
                .collect();
            let stale = e.references.iter().filter(|s| s.reason.is_some()).count();
            json!({ "id": e.entity.id, "name": e.entity.name, "scope": e.entity.scope.as_str(),
                    "description": e.entity.description, "references": refs, "staleReferences": stale })
        })
        .collect();
    let memory: Vec<Value> = b
        .memory
        .iter()
        .map(|h| {
            let mut m = crate::mcp::memory::views::atom_brief(&h.atom, h.version, &b.subjects);
            // All ACTIVE: the status says nothing here.
            m.remove("status");
            m.insert(
                "scope".into(),
                json!(crate::mcp::memory::views::scope(h.scope)),
            );
            Value::Object(m)
        })
        .collect();
    let ontology: Vec<Value> = match &b.ontology {
        Some(s) => b
            .classes
            .iter()
            .map(|iri| crate::mcp::ontology::view::class_brief(&s.index, iri))
            .collect(),
        None => vec![],
    };
    let mut data = json!({
        "task": json::item(&b.task),
        "sections": sections,
        "knowledge": knowledge,
        "code": code,
        "memory": memory,
        "ontology": ontology,
    });
    if !b.unmatched_paths.is_empty() {
        data["knowledgeGaps"] = json!(b.unmatched_paths);
    }
    if !b.notes.is_empty() {
        let mut notes = Map::new();
        for (part, n) in &b.notes {
            // Notes that call for another tool name it.
            let n = &match n {
                Note::Text(t) => t.clone(),
                Note::NoRepository => {
                    "the project has no repository bound (init_project with repoPath)".into()
                }
                Note::FirstFiles { read, of } => {
                    format!(
                        "the first {read} of {of} files were read: analyze_document for the rest"
                    )
                }
            };
            match notes.get_mut(*part) {
                Some(Value::String(s)) => {
                    s.push_str("; ");
                    s.push_str(n);
                }
                _ => {
                    notes.insert(part.to_string(), json!(n));
                }
            }
        }
        data["notes"] = Value::Object(notes);
    }
    data["budget"] = json!({ "maxTokens": max.unwrap_or(0), "estimatedTokens": 0 });
    let mut r = Reply::new(String::new(), data);
    fit(
        &mut r,
        max.unwrap_or(usize::MAX),
        &sheds(),
        &SUMMARY,
        &message,
        &|_, _| {},
    );
    r
}
