//! The `graph` toolset: `query_graph`, `manage_graph` and `manage_changelog`, with the
//! parameter names and enums of the TypeScript port so its skills work unchanged.

pub mod views;

use serde_json::{json, Value};

use crate::domain::graph::{NodeKind, Related};
use crate::domain::id;
use crate::error::{Error, Result};
use crate::mcp::args::{Args, JSON_MAX, QUERY_MAX, SUMMARY_MAX};
use crate::mcp::envelope::Reply;
use crate::mcp::schema::{Effect, ToolDef, Ty, P};
use crate::service::context::{self, Options};
use crate::service::graph::{
    self, KnowledgeMode, NewNode, Node, Patch, SearchQuery, KNOWLEDGE_MAX,
};
use crate::service::App;

const NODE: Ty = Ty::Enum(&["atom", "molecule"]);

pub const QUERY_GRAPH: ToolDef = ToolDef {
    name: "query_graph",
    title: "Query graph",
    toolset: "graph",
    description: "Knowledge graph: context (atoms and molecules whose globs match paths you will touch, most specific first), get, search.",
    params: &[
        P("operation", Ty::Enum(&["get", "search", "context"]), ""),
        P("entityType", NODE, ""),
        P("id", Ty::Id, ""),
        P("projectId", Ty::Id, ""),
        P("paths", Ty::StrOrList, "context: ≤ 500"),
        P("query", Ty::Str, ""),
        P("minScore", Ty::Num, "Default 0.3"),
        P("moleculeId", Ty::Id, ""),
        P("orphansOnly", Ty::Bool, ""),
        P("includeChangelog", Ty::Bool, "Default true"),
        P("changelogLimit", Ty::Int, "Default 5"),
        P("limit", Ty::Int, ""),
        P("offset", Ty::Int, ""),
        P("maxTokens", Ty::Int, "context; 0 = all"),
    ],
    required: &["operation"],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const MANAGE_GRAPH: ToolDef = ToolDef {
    name: "manage_graph",
    title: "Manage graph",
    toolset: "graph",
    description: "Write atoms (knowledge of the files 1-20 globs match: * within a directory, ** across) and molecules (groups of atoms).",
    params: &[
        P("operation", Ty::Enum(&["create", "update", "delete"]), ""),
        P("entityType", NODE, ""),
        P("id", Ty::Id, ""),
        P("projectId", Ty::Id, ""),
        P("name", Ty::Str, ""),
        P("paths", Ty::Json, "e.g. [\"src/pay/**\",\"src/pay-*.ts\"]"),
        P("knowledge", Ty::Str, "≤ 32 KB"),
        P("knowledgeMode", Ty::Enum(&["overwrite", "append"]), ""),
        P("moleculeId", Ty::Str, "\"\" detaches"),
        P("relatedAtoms", Ty::Json, "[{atomId, reason}]"),
        P("relatedMolecules", Ty::Json, "[{moleculeId, reason}]"),
        P("createdByTaskId", Ty::Id, ""),
        P("lastTaskId", Ty::Id, ""),
        P("version", Ty::Int, ""),
        P("cascade", Ty::Bool, "Delete a molecule's atoms too"),
    ],
    required: &["operation", "entityType"],
    effect: Effect::Destructive,
    idempotent: false,
    read_ops: &[],
};

pub const MANAGE_CHANGELOG: ToolDef = ToolDef {
    name: "manage_changelog",
    title: "Manage changelog",
    toolset: "graph",
    description:
        "An atom's or molecule's history: append (taskId, summary of what changed and why), search.",
    params: &[
        P("operation", Ty::Enum(&["append", "search"]), ""),
        P("parentType", NODE, ""),
        P("parentId", Ty::Id, ""),
        P("taskId", Ty::Id, ""),
        P("summary", Ty::Str, ""),
        P("limit", Ty::Int, ""),
        P("offset", Ty::Int, ""),
    ],
    required: &["operation", "parentType", "parentId"],
    effect: Effect::Additive,
    idempotent: false,
    read_ops: &["search"],
};

pub const TOOLS: &[&ToolDef] = &[&QUERY_GRAPH, &MANAGE_GRAPH, &MANAGE_CHANGELOG];

pub async fn call(app: &App, name: &str, a: Args) -> Option<Result<Reply>> {
    Some(match name {
        "query_graph" => query(app, a).await,
        "manage_graph" => manage(app, a).await,
        "manage_changelog" => changelog(app, a).await,
        _ => return None,
    })
}

fn node_kind(a: &Args, k: &str) -> Result<NodeKind> {
    let s = a.req_choice(k, &["atom", "molecule"])?;
    NodeKind::parse(s).ok_or_else(|| Error::validation(k, "unknown"))
}

/// `changelogLimit` when `includeChangelog` is on (the default), else 0.
fn changelog_limit(a: &Args) -> Result<i64> {
    let n = a.int("changelogLimit", 0, 100)?.unwrap_or(5);
    Ok(if a.bool("includeChangelog")?.unwrap_or(true) {
        n
    } else {
        0
    })
}

/// Paths for `context`: an array, or comma- or newline-separated.
fn request_paths(a: &Args) -> Result<Vec<String>> {
    let Some(out) = a.list_within("paths", 512 * 1024)? else {
        return Err(Error::validation(
            "paths",
            "is required for context: the file paths you will touch, as an array or comma- or newline-separated",
        ));
    };
    if out.is_empty() {
        return Err(Error::validation("paths", "names no path"));
    }
    if let Some(long) = out.iter().find(|p| p.len() > 4096) {
        return Err(Error::validation(
            "paths",
            format!("a path of {} bytes is longer than 4096", long.len()),
        ));
    }
    Ok(out)
}

async fn query(app: &App, a: Args) -> Result<Reply> {
    let op = a.req_choice("operation", &["get", "search", "context"])?;
    match op {
        "get" => {
            a.forbid(
                &[
                    "paths",
                    "maxTokens",
                    "query",
                    "orphansOnly",
                    "limit",
                    "offset",
                ],
                "to get",
            )?;
            let kind = node_kind(&a, "entityType")?;
            let id = a.req_id("id")?;
            let v = graph::get(app, kind, &id, changelog_limit(&a)?).await?;
            let name = views::node_name(&v.node);
            Ok(Reply::new(
                format!("{} {name}", kind.as_str()),
                json!({ kind.as_str(): views::node(&v, true) }),
            ))
        }
        "search" => {
            a.forbid(&["paths", "maxTokens", "id"], "to search")?;
            let kind = node_kind(&a, "entityType")?;
            if kind == NodeKind::Molecule {
                a.forbid(&["moleculeId", "orphansOnly"], "to molecules")?;
            }
            let (limit, offset) = a.page(20)?;
            let q = SearchQuery {
                project_id: a.id("projectId")?,
                molecule_id: a.id("moleculeId")?,
                orphans_only: a.bool("orphansOnly")?.unwrap_or(false),
                query: a.str("query", QUERY_MAX)?.filter(|s| !s.is_empty()),
                changelog_limit: changelog_limit(&a)?,
                limit,
                offset,
                min_score: a.num("minScore", -1.0, 1.0)?.map(|v| v as f32),
            };
            if q.min_score.is_some() && q.query.is_none() {
                return Err(Error::validation(
                    "minScore",
                    "filters a search by text: give query too",
                ));
            }
            if q.project_id.is_none() && q.molecule_id.is_none() {
                return Err(Error::validation(
                    "projectId",
                    "is required for search (or give moleculeId)",
                ));
            }
            if q.orphans_only && q.molecule_id.is_some() {
                return Err(Error::validation(
                    "orphansOnly",
                    "cannot be combined with moleculeId: orphans have no molecule",
                ));
            }
            let found = graph::search_counted(app, kind, &q).await?;
            let (n, total) = (found.items.len() as i64, found.total);
            let items: Vec<Value> = found.items.iter().map(|v| views::node(v, false)).collect();
            let mut data = json!({ "items": items, "total": total, "limit": limit, "offset": offset, "hasMore": offset + n < total });
            let floor = q.min_score.unwrap_or(graph::GRAPH_MIN_COSINE);
            if q.query.is_some() {
                data["belowMinScore"] = json!(found.below_min_score);
            }
            Ok(Reply::new(
                format!(
                    "{n} of {total} {}(s){}",
                    kind.as_str(),
                    crate::mcp::code::semantic::below_min_score(found.below_min_score, floor)
                ),
                data,
            ))
        }
        _ => {
            a.forbid(
                &[
                    "id",
                    "query",
                    "moleculeId",
                    "orphansOnly",
                    "limit",
                    "offset",
                ],
                "to context",
            )?;
            let project_id = a
                .id("projectId")?
                .ok_or_else(|| Error::validation("projectId", "is required for context"))?;
            let paths = request_paths(&a)?;
            let opts = Options {
                changelog_limit: changelog_limit(&a)?,
                // A budget by default; 0 asks for everything.
                max_tokens: match a.int("maxTokens", 0, 10_000_000)? {
                    None => Some(context::DEFAULT_TOKENS),
                    Some(0) => None,
                    Some(n) => Some(n),
                },
            };
            let c = context::context(app, &project_id, &paths, &opts).await?;
            if let Some((_, why)) = c.refused_paths.first() {
                let more = c.refused_paths.len() - 1;
                return Err(Error::validation(
                    "paths",
                    if more > 0 {
                        format!("{why} ({more} more path(s) like it)")
                    } else {
                        why.clone()
                    },
                ));
            }
            let mut r = Reply::new(views::context_message(&c), views::context(&c));
            if let Some(b) = &c.budget {
                views::fit_context(&mut r, b.max_tokens, false, &views::context_cover(&c));
            }
            Ok(r)
        }
    }
}

/// A related list: a JSON array (or a string holding one) of `{<key>, reason}`; a bare
/// id string is accepted as an entry without a reason.
fn related(a: &Args, param: &str, key: &str) -> Result<Option<Vec<Related>>> {
    let Some(v) = a.json(param, JSON_MAX)? else {
        return Ok(None);
    };
    let Value::Array(items) = v else {
        return Err(Error::validation(
            param,
            format!("must be a JSON array of {{\"{key}\": \"…\", \"reason\": \"…\"}}"),
        ));
    };
    if items.len() > graph::RELATED_MAX {
        return Err(Error::validation(
            param,
            format!(
                "{} entries given, at most {} allowed",
                items.len(),
                graph::RELATED_MAX
            ),
        ));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, it) in items.iter().enumerate() {
        let (raw_id, reason) = match it {
            Value::String(s) => (s.as_str(), ""),
            Value::Object(o) => {
                let Some(Value::String(s)) = o.get(key) else {
                    return Err(Error::validation(
                        param,
                        format!("entry {i} has no \"{key}\" string"),
                    ));
                };
                let reason = match o.get("reason") {
                    None | Some(Value::Null) => "",
                    Some(Value::String(r)) => r.as_str(),
                    Some(_) => {
                        return Err(Error::validation(
                            param,
                            format!("entry {i}: reason must be a string"),
                        ))
                    }
                };
                (s.as_str(), reason)
            }
            _ => {
                return Err(Error::validation(
                    param,
                    format!("entry {i} must be an object {{\"{key}\", \"reason\"}}"),
                ))
            }
        };
        if reason.len() > 1024 {
            return Err(Error::validation(
                param,
                format!("entry {i}: reason is longer than 1024 bytes"),
            ));
        }
        out.push(Related {
            id: id::parse(param, raw_id)?,
            reason: reason.trim().to_string(),
        });
    }
    Ok(Some(out))
}

/// Patterns: a JSON array of strings (or a string holding one).
fn patterns(a: &Args) -> Result<Option<Vec<String>>> {
    let Some(v) = a.json("paths", JSON_MAX).map_err(|_| {
        Error::validation(
            "paths",
            "must be a JSON array of glob patterns, e.g. [\"src/payments/**\", \"docs/payments.md\"]",
        )
    })?
    else {
        return Ok(None);
    };
    match v {
        Value::Array(items) => items
            .into_iter()
            .enumerate()
            .map(|(i, x)| match x {
                Value::String(s) => Ok(s),
                _ => Err(Error::validation(
                    "paths",
                    format!("entry {i} is not a string"),
                )),
            })
            .collect::<Result<Vec<_>>>()
            .map(Some),
        _ => Err(Error::validation(
            "paths",
            "must be a JSON array of glob patterns, e.g. [\"src/payments/**\"]",
        )),
    }
}

fn knowledge(a: &Args) -> Result<Option<String>> {
    a.str("knowledge", KNOWLEDGE_MAX)
}

/// `moleculeId` on manage_graph: an id, or "" / "null" / "none" to detach.
fn molecule_ref(a: &Args) -> Result<Option<Option<String>>> {
    match a.str("moleculeId", 64)? {
        None => Ok(None),
        Some(s)
            if s.is_empty() || s.eq_ignore_ascii_case("null") || s.eq_ignore_ascii_case("none") =>
        {
            Ok(Some(None))
        }
        Some(s) => Ok(Some(Some(id::parse("moleculeId", &s)?))),
    }
}

async fn manage(app: &App, a: Args) -> Result<Reply> {
    let op = a.req_choice("operation", &["create", "update", "delete"])?;
    let kind = node_kind(&a, "entityType")?;
    if kind == NodeKind::Molecule {
        a.forbid(&["paths", "moleculeId", "relatedAtoms"], "to molecules")?;
    } else {
        a.forbid(&["relatedMolecules"], "to atoms")?;
    }
    let related_key = match kind {
        NodeKind::Atom => ("relatedAtoms", "atomId"),
        NodeKind::Molecule => ("relatedMolecules", "moleculeId"),
    };
    match op {
        "create" => {
            a.forbid(
                &["id", "version", "cascade", "lastTaskId", "knowledgeMode"],
                "to create",
            )?;
            let name = a.name("name")?.ok_or_else(|| {
                Error::validation("name", format!("is required to create a {}", kind.as_str()))
            })?;
            let project_id = a
                .id("projectId")?
                .ok_or_else(|| Error::validation("projectId", "is required to create"))?;
            let created_by = a.id("createdByTaskId")?.ok_or_else(|| {
                Error::validation(
                    "createdByTaskId",
                    "is required to create: the task that made you record this knowledge",
                )
            })?;
            let n = NewNode {
                project_id,
                name,
                knowledge: knowledge(&a)?.unwrap_or_default(),
                paths: patterns(&a)?,
                molecule_id: molecule_ref(&a)?.flatten(),
                related: related(&a, related_key.0, related_key.1)?.unwrap_or_default(),
                created_by_task_id: created_by,
            };
            let node = graph::create(app, kind, n).await?;
            Ok(Reply::new(
                format!("{} created", kind.as_str()),
                json!({ kind.as_str(): views::bare_node(&node) }),
            ))
        }
        "update" => {
            a.forbid(&["cascade", "projectId", "createdByTaskId"], "to update")?;
            let id = a.req_id("id")?;
            let version = a.req_version("for update")?;
            let last = a.id("lastTaskId")?.ok_or_else(|| {
                Error::validation(
                    "lastTaskId",
                    "is required for update: the task making the change",
                )
            })?;
            let mode = match a.choice("knowledgeMode", &["overwrite", "append"])? {
                Some("append") => KnowledgeMode::Append,
                _ => KnowledgeMode::Overwrite,
            };
            let k = knowledge(&a)?;
            if mode == KnowledgeMode::Append && k.as_deref().is_none_or(str::is_empty) {
                return Err(Error::validation(
                    "knowledge",
                    "is required with knowledgeMode=append: the text to append",
                ));
            }
            let p = Patch {
                name: a.name("name")?,
                knowledge: k,
                mode,
                paths: patterns(&a)?,
                molecule_id: molecule_ref(&a)?,
                related: related(&a, related_key.0, related_key.1)?,
                last_task_id: last,
            };
            if p.name.is_none()
                && p.knowledge.is_none()
                && p.paths.is_none()
                && p.molecule_id.is_none()
                && p.related.is_none()
            {
                return Err(Error::validation(
                    "operation",
                    "update changes nothing: give name, knowledge, paths, moleculeId or a related list",
                ));
            }
            let node = graph::update(app, kind, &id, version, p).await?;
            let v = match &node {
                Node::Atom(x) => x.version,
                Node::Molecule(x) => x.version,
            };
            Ok(Reply::new(
                format!("{} updated to version {v}", kind.as_str()),
                json!({ kind.as_str(): views::bare_node(&node) }),
            ))
        }
        _ => {
            let id = a.req_id("id")?;
            let version = a.req_version("for delete")?;
            if kind == NodeKind::Atom {
                a.forbid(&["cascade"], "to atoms")?;
            }
            let d = graph::delete(
                app,
                kind,
                &id,
                version,
                a.bool("cascade")?.unwrap_or(false),
                a.id("lastTaskId")?.as_deref(),
            )
            .await?;
            let mut data = json!({ "id": id, "deleted": true });
            let mut msg = format!("{} {id} deleted", kind.as_str());
            if kind == NodeKind::Molecule {
                data["deletedAtoms"] = json!(d.deleted_atoms);
                data["orphanedAtoms"] = json!(d.orphaned_atoms);
                if !d.deleted_atoms.is_empty() {
                    msg.push_str(&format!(" with {} atom(s)", d.deleted_atoms.len()));
                }
                if !d.orphaned_atoms.is_empty() {
                    msg.push_str(&format!(
                        "; {} atom(s) are now orphans",
                        d.orphaned_atoms.len()
                    ));
                }
            }
            Ok(Reply::new(msg, data))
        }
    }
}

async fn changelog(app: &App, a: Args) -> Result<Reply> {
    let op = a.req_choice("operation", &["append", "search"])?;
    let kind = node_kind(&a, "parentType")?;
    let parent = a.req_id("parentId")?;
    match op {
        "append" => {
            a.forbid(&["limit", "offset"], "to append")?;
            let task = a
                .id("taskId")?
                .ok_or_else(|| Error::validation("taskId", "is required to append"))?;
            let summary = a.req_str("summary", SUMMARY_MAX)?;
            let e = graph::append_changelog(app, kind, &parent, &task, summary).await?;
            Ok(Reply::new(
                format!("changelog entry added to {} {parent}", kind.as_str()),
                json!({ "entry": views::entry(&e) }),
            ))
        }
        _ => {
            a.forbid(&["taskId", "summary"], "to search")?;
            let (limit, offset) = a.page(20)?;
            let (entries, total) = graph::changelog(app, kind, &parent, limit, offset).await?;
            let n = entries.len() as i64;
            Ok(Reply::new(
                format!("{n} of {total} entries"),
                json!({ "items": entries.iter().map(views::entry).collect::<Vec<_>>(), "total": total,
                        "limit": limit, "offset": offset, "hasMore": offset + n < total }),
            ))
        }
    }
}
