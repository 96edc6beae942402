//! The `code` toolset's semantic tools (`search` and `query`, docs/code.md): parameters
//! parsed and bounded here, answers built by hand from `service::semantic` and
//! `service::query` values.

use serde_json::{json, Value};

use crate::domain::code::Scope;
use crate::error::{Error, Result};
use crate::mcp::args::{Args, QUERY_MAX};
use crate::mcp::envelope::Reply;
use crate::mcp::schema::{Effect, ToolDef, Ty, P};
use crate::service::query::{self, QueryReq, Strategy, EDGE_KINDS};
use crate::service::semantic::{self, Hit, Mode, SearchReq, Target};
use crate::service::App;

pub const SEARCH: ToolDef = ToolDef {
    name: "search",
    title: "Search code memory",
    toolset: "code",
    description:
        "Rank entities and references by meaning and words (score 1: the name is the query).",
    params: &[
        P("projectId", Ty::Id, ""),
        P("query", Ty::Str, ""),
        P("target", Ty::Enum(Target::NAMES), ""),
        P("limit", Ty::Int, "Per target, max 100"),
        P("minScore", Ty::Num, "Default 0.3"),
        P("scope", Ty::Enum(Scope::NAMES), ""),
        P("mode", Ty::Enum(Mode::NAMES), "Default hybrid"),
    ],
    required: &["projectId", "query"],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const QUERY: ToolDef = ToolDef {
    name: "query",
    title: "Query subgraph",
    toolset: "code",
    description:
        "The subgraph relevant around entityId, or the best match of semanticQuery, ranked.",
    params: &[
        P("entityId", Ty::Id, ""),
        P("semanticQuery", Ty::Str, ""),
        P("projectId", Ty::Id, "With semanticQuery alone"),
        P("maxNodes", Ty::Int, "Default 50"),
        P("maxTokens", Ty::Int, ""),
        P("minRelevance", Ty::Num, "Default 0.3"),
        P(
            "scoringStrategy",
            Ty::Enum(Strategy::NAMES),
            "Default global",
        ),
        P("relationshipTypes", Ty::List, "Only these"),
    ],
    required: &[],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

fn text(a: &Args, k: &str) -> Result<Option<String>> {
    match a.str(k, QUERY_MAX)? {
        Some(s) if s.trim().is_empty() => Err(Error::validation(k, "must not be empty")),
        other => Ok(other),
    }
}

fn scores(h: &Hit) -> (f64, f64, f64) {
    let r = |x: f64| (x * 10_000.0).round() / 10_000.0;
    (r(h.fused), r(f64::from(h.vector)), r(h.lexical))
}

/// What an answer's message says of texts not embedded yet.
fn not_embedded(n: u64) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(
            "; {n} text(s) of the project not embedded yet: matched by their words only \
             until the server embeds them in the background (search again later)"
        )
    }
}

/// What an answer's message says of the candidates `minScore` hid: only their
/// meaning matched, and not closely enough (so "no hit" is never "nothing known").
pub(crate) fn below_min_score(n: usize, min_score: f32) -> String {
    if n == 0 {
        String::new()
    } else {
        format!(
            "; {n} more matched by meaning only, below minScore {min_score} (lower it to see them)"
        )
    }
}

pub async fn search(app: &App, a: Args) -> Result<Reply> {
    let pid = a.req_id("projectId")?;
    let query = text(&a, "query")?.ok_or_else(|| Error::validation("query", "is required"))?;
    let target = a
        .choice("target", Target::NAMES)?
        .and_then(Target::parse)
        .unwrap_or(Target::All);
    let limit = a.int("limit", 1, 100)?.unwrap_or(20) as usize;
    let min_score = a.num("minScore", -1.0, 1.0)?.unwrap_or(0.3) as f32;
    let scope = a.choice("scope", Scope::NAMES)?.and_then(Scope::parse);
    if scope.is_some() && target == Target::References {
        return Err(Error::validation(
            "scope",
            "filters entities: use target entities or all",
        ));
    }
    let mode = a
        .choice("mode", Mode::NAMES)?
        .and_then(Mode::parse)
        .unwrap_or(Mode::Hybrid);
    let out = semantic::search(
        app,
        SearchReq {
            project_id: pid,
            query,
            target,
            limit,
            min_score,
            scope,
            mode,
        },
    )
    .await?;
    let entities: Vec<Value> = out
        .entities
        .iter()
        .map(|h| {
            let (f, v, l) = scores(&h.hit);
            json!({
                "id": h.entity.id, "name": h.entity.name, "description": h.entity.description,
                "scope": h.entity.scope.as_str(), "categories": h.categories,
                "score": f, "vectorScore": v, "lexicalScore": l,
            })
        })
        .collect();
    let references: Vec<Value> = out
        .references
        .iter()
        .map(|h| {
            let (f, v, l) = scores(&h.hit);
            json!({
                "id": h.reference.id,
                "entityId": h.entity.as_ref().map(|e| e.0.clone()),
                "entityName": h.entity.as_ref().map(|e| e.1.clone()),
                "documentPath": h.reference.document_path,
                "startLine": h.reference.start_line, "endLine": h.reference.end_line,
                "description": h.reference.description,
                "score": f, "vectorScore": v, "lexicalScore": l,
            })
        })
        .collect();
    let mut data = json!({
        "entities": entities,
        "references": references,
        "embedder": out.embedder,
        "queryTruncated": out.query_truncated,
        "mode": Mode::NAMES[match mode { Mode::Hybrid => 0, Mode::Lexical => 1, Mode::Vector => 2 }],
    });
    if let Some(why) = out.fallback_reason {
        data["fallbackReason"] = json!(why);
    }
    data["notEmbedded"] = json!(out.not_embedded);
    data["belowMinScore"] = json!(out.below_min_score);
    Ok(Reply::new(
        format!(
            "{} entit(ies), {} reference(s) ({}){}{}",
            out.entities.len(),
            out.references.len(),
            out.embedder,
            below_min_score(out.below_min_score, min_score),
            not_embedded(out.not_embedded)
        ),
        data,
    ))
}

pub async fn query_tool(app: &App, a: Args) -> Result<Reply> {
    let entity_id = a.id("entityId")?;
    let semantic_query = text(&a, "semanticQuery")?;
    let project_id = a.id("projectId")?;
    let kinds = match a.list("relationshipTypes")? {
        None => None,
        Some(l) => {
            let mut out = Vec::new();
            for k in l {
                let up = k.trim().to_ascii_uppercase();
                if !EDGE_KINDS.contains(&up.as_str()) {
                    return Err(Error::validation(
                        "relationshipTypes",
                        format!(
                            "'{}' is not one of {}",
                            k.chars().take(40).collect::<String>(),
                            EDGE_KINDS.join(", ")
                        ),
                    ));
                }
                out.push(up);
            }
            Some(out)
        }
    };
    let req = QueryReq {
        project_id,
        entity_id,
        semantic_query,
        max_nodes: a.int("maxNodes", 1, 1000)?.unwrap_or(50) as usize,
        max_tokens: a.int("maxTokens", 1, 1_000_000)?.unwrap_or(4000) as usize,
        min_relevance: a.num("minRelevance", -1.0, 1.0)?.unwrap_or(0.3) as f32,
        strategy: a
            .choice("scoringStrategy", Strategy::NAMES)?
            .and_then(Strategy::parse)
            .unwrap_or(Strategy::Global),
        kinds,
    };
    let req_max = req.max_tokens;
    let out = query::query(app, req).await?;
    let r4 = |x: f32| (f64::from(x) * 10_000.0).round() / 10_000.0;
    let nodes: Vec<Value> = out
        .nodes
        .iter()
        .map(|n| {
            let mut v = json!({
                "id": n.entity.id, "name": n.entity.name, "description": n.entity.description,
                "scope": n.entity.scope.as_str(), "relevance": r4(n.relevance),
                "references": n.references.iter().map(|r| json!({
                    "id": r.id, "documentPath": r.document_path, "startLine": r.start_line,
                    "endLine": r.end_line, "description": r.description,
                })).collect::<Vec<_>>(),
            });
            if n.truncated {
                v["truncated"] = json!(true);
            }
            if n.bridge {
                v["bridge"] = json!(true);
            }
            v
        })
        .collect();
    let edges: Vec<Value> = out
        .edges
        .iter()
        .map(|e| {
            let mut v = json!({
                "fromId": e.from_id, "toId": e.to_id, "relationship": e.kind, "relevance": r4(e.relevance),
            });
            if let Some(n) = &e.note {
                v["note"] = json!(n);
            }
            v
        })
        .collect();
    let root_name = out.root.name.clone();
    let tail = not_embedded(out.not_embedded);
    let message = move |d: &Value| {
        format!(
            "{} node(s), {} edge(s), ~{} tokens from {root_name}{tail}",
            d["nodes"].as_array().map_or(0, Vec::len),
            d["edges"].as_array().map_or(0, Vec::len),
            d["stats"]["estimatedTokens"],
        )
    };
    let max = req_max;
    let mut r = Reply::new(
        String::new(),
        json!({
            "rootEntity": { "id": out.root.id, "name": out.root.name, "scope": out.root.scope.as_str() },
            "startedFrom": out.started_from.map_or("", crate::mcp::names::field),
            "nodes": nodes,
            "edges": edges,
            "truncated": out.truncated,
            "embedder": out.embedder,
            "queryTruncated": out.query_truncated,
            "stats": {
                "nodesVisited": out.nodes_visited,
                "nodesPruned": out.nodes_pruned,
                "estimatedTokens": out.estimated_tokens,
                "notEmbedded": out.not_embedded,
            },
        }),
    );
    // The walk kept its nodes' texts within the budget; the whole answer is held to
    // it here, the last node admitted going first (no node admitted earlier reaches
    // the root through it), the root never.
    let sheds = [crate::mcp::budget::Shed {
        at: "/nodes",
        rank: |_, _| 0.0,
        brief: |n| json!({ "id": n["id"], "name": n["name"] }),
        keep_first: 1,
        summary: "nodes",
    }];
    let summary = crate::mcp::budget::Summary {
        at: "/omitted",
        counts: "count",
        next: "query again with a larger maxTokens, or from one of these nodes",
        estimate: Some("/stats/estimatedTokens"),
        capped: &[],
        fetch: &[],
    };
    crate::mcp::budget::fit(&mut r, max, &sheds, &summary, &message, &|d, gone| {
        let ids: Vec<&Value> = gone.iter().map(|n| &n["id"]).collect();
        if let Some(e) = d["edges"].as_array_mut() {
            e.retain(|e| !ids.contains(&&e["fromId"]) && !ids.contains(&&e["toId"]));
        }
    });
    Ok(r)
}
