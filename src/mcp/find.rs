//! `find`: one search over every kind the served toolsets hold, ranked together
//! (`service::find`), each hit with the tool call that reads it in full, the whole
//! answer within `maxTokens` (`mcp::budget`). Served with any toolset.

use serde_json::{json, Map, Value};

use crate::error::{Error, Result};
use crate::mcp::args::{Args, QUERY_MAX};
use crate::mcp::budget::{self, Shed, Summary};
use crate::mcp::envelope::Reply;
use crate::mcp::schema::{Effect, ToolDef, Ty, P};
use crate::service::find::{self, FindReq, Found, HitKind, Kind};
use crate::service::ranking::Hit;
use crate::service::App;

/// The toolset name `find` is listed under: served whatever toolsets are.
pub const ANY: &str = "any";

/// The wire names of [`Kind`], in [`Kind::ALL`]'s order.
const KIND_NAMES: [&str; 7] = [
    "tasks",
    "atoms",
    "molecules",
    "entities",
    "references",
    "memory",
    "classes",
];

pub const FIND: ToolDef = ToolDef {
    name: "find",
    title: "Find anything",
    toolset: ANY,
    description: "Search every kind at once, ranked together; each hit names the call reading it.",
    params: &[
        P("query", Ty::Str, ""),
        P(
            "kinds",
            Ty::List,
            "tasks (with features), atoms, molecules, entities, references, memory, classes",
        ),
        P("projectId", Ty::Id, ""),
        P("limit", Ty::Int, "Max 100"),
        P("maxTokens", Ty::Int, "Default 2000"),
    ],
    required: &["query"],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub static TOOLS: &[&ToolDef] = &[&FIND];

/// A score as answers show it: four decimals.
pub fn round(x: f64) -> Value {
    json!((x * 10_000.0).round() / 10_000.0)
}

/// The parts of a hit's score (`service::ranking::fuse`): the cosine to the query,
/// BM25 relative to its list's best, whether every query word matched; an exact
/// name says so.
pub fn why(h: &Hit) -> Value {
    let mut v = json!({
        "vector": round(f64::from(h.vector)),
        "lexical": round(h.words),
        "allWords": h.all_words,
    });
    if h.exact {
        v["exact"] = json!(true);
    }
    v
}

fn kinds(a: &Args, served: &[String]) -> Result<Vec<Kind>> {
    let is_served = |k: Kind| served.iter().any(|t| t == k.toolset());
    let Some(asked) = a.list("kinds")? else {
        return Ok(Kind::ALL.into_iter().filter(|&k| is_served(k)).collect());
    };
    let mut out = Vec::new();
    for w in asked {
        let w = w.trim().to_ascii_lowercase();
        let Some(i) = KIND_NAMES.iter().position(|n| *n == w) else {
            return Err(Error::validation(
                "kinds",
                format!(
                    "'{}' is not a kind; valid kinds: {}",
                    w.chars().take(40).collect::<String>(),
                    KIND_NAMES.join(", ")
                ),
            ));
        };
        let k = Kind::ALL[i];
        if !is_served(k) {
            return Err(Error::validation(
                "kinds",
                format!(
                    "{w} needs the {} toolset, which this server does not serve",
                    k.toolset()
                ),
            ));
        }
        if !out.contains(&k) {
            out.push(k);
        }
    }
    if out.is_empty() {
        return Err(Error::validation(
            "kinds",
            format!("name at least one of {}", KIND_NAMES.join(", ")),
        ));
    }
    Ok(out)
}

fn args(pairs: &[(&str, &str)]) -> Value {
    let mut m = Map::new();
    for (k, v) in pairs {
        m.insert((*k).to_string(), json!(v));
    }
    Value::Object(m)
}

/// The call that reads a hit in full.
fn read(f: &Found) -> Value {
    let pid = f.project_id.as_deref().unwrap_or_default();
    let (tool, a) = match f.kind {
        HitKind::Task | HitKind::Feature => {
            let ct = if f.kind == HitKind::Task {
                "task"
            } else {
                "feature"
            };
            (
                "query_container",
                args(&[("operation", "get"), ("containerType", ct), ("id", &f.id)]),
            )
        }
        HitKind::Atom => (
            "query_graph",
            args(&[("operation", "get"), ("entityType", "atom"), ("id", &f.id)]),
        ),
        HitKind::Molecule => (
            "query_graph",
            args(&[
                ("operation", "get"),
                ("entityType", "molecule"),
                ("id", &f.id),
            ]),
        ),
        HitKind::Entity => ("get_entity", args(&[("entityId", &f.id)])),
        HitKind::Reference => match &f.key {
            Some(holder) => ("get_entity", args(&[("entityId", holder)])),
            None => (
                "find_entities",
                args(&[("projectId", pid), ("documentPath", &f.name)]),
            ),
        },
        HitKind::Memory => ("query_memory", args(&[("operation", "get"), ("id", &f.id)])),
        HitKind::Class => (
            "ontology_read",
            args(&[
                ("projectId", pid),
                ("iri", f.key.as_deref().unwrap_or(&f.id)),
            ]),
        ),
    };
    json!({ "tool": tool, "args": a })
}

fn kind_name(k: HitKind) -> &'static str {
    match k {
        HitKind::Task => "task",
        HitKind::Feature => "feature",
        HitKind::Atom => "atom",
        HitKind::Molecule => "molecule",
        HitKind::Entity => "entity",
        HitKind::Reference => "reference",
        HitKind::Memory => "memory",
        HitKind::Class => "class",
    }
}

/// Characters a hit's summary keeps.
const SUMMARY_CHARS: usize = 160;

/// One line: the name, then the first line of the rest of its text, cut short.
fn summary(f: &Found) -> String {
    let first = f.text.lines().map(str::trim).find(|l| !l.is_empty());
    let name = f.name.lines().next().unwrap_or_default().trim();
    let line = match first {
        Some(t) if f.kind != HitKind::Memory => format!("{name} — {t}"),
        _ => name.to_string(),
    };
    if line.chars().count() <= SUMMARY_CHARS {
        line
    } else {
        let mut s: String = line.chars().take(SUMMARY_CHARS - 1).collect();
        s.push('…');
        s
    }
}

pub async fn call(app: &App, served: &[String], a: Args) -> Result<Reply> {
    let query = a.req_str("query", QUERY_MAX)?;
    if query.trim().is_empty() {
        return Err(Error::validation("query", "must not be empty"));
    }
    let kinds = kinds(&a, served)?;
    let limit = a.int("limit", 1, 100)?.unwrap_or(20) as usize;
    let max = a.int("maxTokens", 100, 1_000_000)?.unwrap_or(2000) as usize;
    let out = find::find(
        app,
        FindReq {
            query,
            kinds: kinds.clone(),
            project_id: a.id("projectId")?,
            limit,
        },
    )
    .await?;
    let hits: Vec<Value> = out
        .hits
        .iter()
        .map(|f| {
            json!({
                "kind": kind_name(f.kind), "id": f.id, "summary": summary(f),
                "score": round(f.hit.fused), "why": why(&f.hit), "read": read(f),
            })
        })
        .collect();
    let mut data = json!({ "hits": hits, "embedder": out.embedder });
    if out.more > 0 {
        data["more"] = json!(out.more);
    }
    if out.below_min_score > 0 {
        data["belowMinScore"] = json!(out.below_min_score);
    }
    if out.not_embedded > 0 {
        data["notEmbedded"] = json!(out.not_embedded);
    }
    let searched: Vec<&str> = kinds
        .iter()
        .filter_map(|k| Kind::ALL.iter().position(|x| x == k).map(|i| KIND_NAMES[i]))
        .collect();
    let searched = searched.join(", ");
    let (below, embedder) = (out.below_min_score, out.embedder);
    let message = move |d: &Value| {
        let mut m = format!(
            "{} hit(s) in {searched} ({embedder})",
            d["hits"].as_array().map_or(0, Vec::len)
        );
        if below > 0 {
            m.push_str(&format!(
                "; {below} more matched by meaning only, below {}",
                find::MIN_COSINE
            ));
        }
        m
    };
    let mut r = Reply::new(String::new(), data);
    let sheds = [Shed {
        at: "/hits",
        rank: |v, _| v["score"].as_f64().unwrap_or(0.0),
        brief: |v| json!({ "kind": v["kind"], "id": v["id"] }),
        keep_first: 0,
        summary: "hits",
    }];
    let s = Summary {
        at: "/omitted",
        counts: "count",
        next: "ask again with a larger maxTokens, fewer kinds or a smaller limit",
        fetch: &[],
        estimate: None,
        capped: &[],
    };
    budget::fit(&mut r, max, &sheds, &s, &message, &|_, _| {});
    Ok(r)
}
