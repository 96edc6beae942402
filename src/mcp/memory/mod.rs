//! The `memory` toolset (docs/memory.md): `manage_memory`,
//! `query_memory`, `manage_subject`, `curate_memory` and `manage_diary`, plus the
//! memory a task gets (`includeMemory`), the hint `advance` gives when a task closes,
//! and the reflection prompt. Handlers check raw arguments, call one service and
//! answer JSON built by hand (`views`).

pub mod views;

use serde_json::{json, Value};
use time::OffsetDateTime;

use crate::domain::memory::collision::RULE;
use crate::domain::memory::model::{EdgeKind, MemoryAtomType, MemoryStatus, SubjectKind};
use crate::domain::memory::wire::parse_time;
use crate::domain::{Item, ItemKind, Status};
use crate::error::{Error, Result};
use crate::mcp::args::{Args, NAME_MAX, QUERY_MAX, STRING_MAX, SUMMARY_MAX};
use crate::mcp::envelope::Reply;
use crate::mcp::schema::{Effect, ToolDef, Ty, P};
use crate::service::memory::atoms::{self, Kept, ListQuery, Remember, Source, LINKABLE};
use crate::service::memory::diary::{self, DiaryFilter, Ingested};
use crate::service::memory::recall::{self as mrecall, RecallReq};
use crate::service::memory::{curator, subjects};
use crate::service::App;

mod manage_diary;
use manage_diary::*;

mod manage_subject;
use manage_subject::*;

/// The clock of one call (ISO 8601), for simulations and tests: accepted, unpublished.
const NOW: P = P("now", Ty::Unlisted, "");

pub const MANAGE_MEMORY: ToolDef = ToolDef {
    name: "manage_memory",
    title: "Manage memory",
    toolset: "memory",
    description: concat!(
        "Write memory atoms (typed statements about subjects); a change is a new atom. ",
        cairn_memory::memory_collision_rule!(),
        " ",
        "ACTIVE needs a doc-grade source, 3 sources or confirmedBy."
    ),
    params: &[
        P("operation", Ty::Enum(&["remember", "validate", "deprecate", "archive", "resolve", "evidence", "link", "unlink"]), ""),
        P("atom", Ty::Object, "{type, statement, predicate, value|valueSubject, about, context|global, confidence, \
          validFrom, validTo, notes, tags} and its type's fields (Decision decidedAt+rationale, Rule severity, …: a refusal names them); \
          subjects by id or Kind:name"),
        P("sources", Ty::Objects(&[]), "[{refType, uri|title, snippet, publishedAt}] or [{id}]"),
        P("supersedes", Ty::Id, ""),
        P("id", Ty::Id, ""),
        P("version", Ty::Int, ""),
        P("confidence", Ty::Num, ""),
        P("confirmedBy", Ty::Str, ""),
        P("reason", Ty::Str, ""),
        P("resolvedBy", Ty::Str, ""),
        P("kind", Ty::Enum(&["FROM_SOURCE", "AUTHORED_BY", "SUPPORTS", "CONTRADICTS", "DEPENDS_ON", "CAUSES", "CAUSED_BY", "BLOCKED_BY", "RELATED"]), ""),
        P("to", Ty::Id, ""),
        NOW,
    ],
    required: &["operation"],
    effect: Effect::Destructive,
    idempotent: false,
    read_ops: &[],
};

pub const QUERY_MEMORY: ToolDef = ToolDef {
    name: "query_memory",
    title: "Query memory",
    toolset: "memory",
    description: "Read memory atoms: recall (what projectId, else Global only, should know; ACTIVE first, Project > Stack > Org > Global), get, list.",
    params: &[
        P("operation", Ty::Enum(&["recall", "get", "list"]), ""),
        P("id", Ty::Id, ""),
        P("projectId", Ty::Id, ""),
        P("query", Ty::Str, ""),
        P("about", Ty::List, "Subject ids or Kind:name"),
        P("types", Ty::List, ""),
        P("status", Ty::Str, ""),
        P("predicate", Ty::Str, ""),
        P("key", Ty::Str, ""),
        P("asOf", Ty::Str, ""),
        P("validAt", Ty::Str, ""),
        P("includeHistory", Ty::Bool, ""),
        P("maxTokens", Ty::Int, ""),
        P("minScore", Ty::Num, "Default 0.25"),
        P("limit", Ty::Int, ""),
        P("offset", Ty::Int, ""),
        NOW,
    ],
    required: &["operation"],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const MANAGE_SUBJECT: ToolDef = ToolDef {
    name: "manage_subject",
    title: "Manage subjects",
    toolset: "memory",
    description: "Subjects (Org, Project, Person, Tool, Lib, Service…) shared by all projects, by id or Kind:name; create answers an existing one.",
    params: &[
        P("operation", Ty::Enum(&["create", "update", "alias", "merge", "uses", "unuse", "get", "list"]), ""),
        P("id", Ty::Str, ""),
        P("subject", Ty::Object, ""),
        P("version", Ty::Int, ""),
        P("aliases", Ty::List, ""),
        P("into", Ty::Str, ""),
        P("target", Ty::Str, ""),
        P("kind", Ty::Str, ""),
        P("query", Ty::Str, ""),
        P("minProjects", Ty::Int, ""),
        P("limit", Ty::Int, ""),
        P("offset", Ty::Int, ""),
        NOW,
    ],
    required: &["operation"],
    effect: Effect::Destructive,
    idempotent: false,
    read_ops: &["get", "list"],
};

pub const CURATE_MEMORY: ToolDef = ToolDef {
    name: "curate_memory",
    title: "Curate memory",
    toolset: "memory",
    description: "Merges, promotion, reviews, decay: plan (dry run), run (the plan's fingerprint; refused if changed), queue (atoms due).",
    params: &[
        P("operation", Ty::Enum(&["plan", "run", "queue"]), ""),
        P("fingerprint", Ty::Str, ""),
        P("withinDays", Ty::Int, ""),
        P("limit", Ty::Int, "Default 50"),
        P("offset", Ty::Int, ""),
        NOW,
    ],
    required: &["operation"],
    effect: Effect::Destructive,
    idempotent: false,
    read_ops: &["plan", "queue"],
};

pub const MANAGE_DIARY: ToolDef = ToolDef {
    name: "manage_diary",
    title: "Manage diary",
    toolset: "memory",
    description: "Write an entry, list, reflect (the prompt), ingest (its answer as DRAFT rules; duplicates add evidence).",
    params: &[
        P("operation", Ty::Enum(&["write", "list", "reflect", "ingest"]), ""),
        P("session", Ty::Str, ""),
        P("taskId", Ty::Id, ""),
        P("projectId", Ty::Id, ""),
        P("accomplishments", Ty::List, ""),
        P("decisions", Ty::List, ""),
        P("challenges", Ty::List, ""),
        P("learnings", Ty::List, ""),
        P("ids", Ty::List, ""),
        P("since", Ty::Str, ""),
        P("rules", Ty::Json, "The prompt's JSON array, or text holding it"),
        P("limit", Ty::Int, ""),
        P("offset", Ty::Int, ""),
        NOW,
    ],
    required: &["operation"],
    effect: Effect::Additive,
    idempotent: false,
    read_ops: &["list", "reflect"],
};

pub const TOOLS: &[&ToolDef] = &[
    &MANAGE_MEMORY,
    &QUERY_MEMORY,
    &MANAGE_SUBJECT,
    &CURATE_MEMORY,
    &MANAGE_DIARY,
];

/// The collision rule is stated once, in the core, and quoted in the description:
/// a test keeps them equal.
pub fn rule_is_quoted() -> bool {
    MANAGE_MEMORY.description.contains(RULE)
}

pub async fn call(app: &App, name: &str, a: Args) -> Option<Result<Reply>> {
    Some(match name {
        "manage_memory" => manage_memory(app, a).await,
        "query_memory" => query_memory(app, a).await,
        "manage_subject" => manage_subject(app, a).await,
        "curate_memory" => curate_memory(app, a).await,
        "manage_diary" => manage_diary(app, a).await,
        _ => return None,
    })
}

fn time_arg(a: &Args, k: &str) -> Result<Option<OffsetDateTime>> {
    match a.str(k, 64)? {
        None => Ok(None),
        Some(s) => parse_time(&s)
            .map(Some)
            .map_err(|e| Error::validation(k, e.to_string())),
    }
}

/// The clock of this call: `now` when given, else the system's.
fn now(a: &Args) -> Result<OffsetDateTime> {
    Ok(time_arg(a, "now")?.unwrap_or_else(OffsetDateTime::now_utc))
}

fn sources(a: &Args) -> Result<Vec<Source>> {
    let Some(list) = a.objects("sources", 100)? else {
        return Ok(vec![]);
    };
    list.into_iter()
        .enumerate()
        .map(|(i, m)| {
            if m.len() == 1 {
                if let Some(Value::String(id)) = m.get("id") {
                    return Ok(Source::Existing(crate::domain::id::parse(format!("sources[{i}].id"), id)?));
                }
            }
            if m.contains_key("id") {
                return Err(Error::validation(
                    format!("sources[{i}].id"),
                    "cites an existing reference alone: send {\"id\": …} without other fields, or a new reference without id",
                ));
            }
            Ok(Source::New(views::fields(&m)))
        })
        .collect()
}

fn status_list(a: &Args, k: &str) -> Result<Vec<MemoryStatus>> {
    a.list(k)?
        .unwrap_or_default()
        .iter()
        .map(|s| MemoryStatus::parse(s).map_err(|e| Error::validation(k, e.to_string())))
        .collect()
}

fn type_list(a: &Args) -> Result<Vec<MemoryAtomType>> {
    a.list("types")?
        .unwrap_or_default()
        .iter()
        .map(|s| MemoryAtomType::parse(s).map_err(|e| Error::validation("types", e.to_string())))
        .collect()
}

async fn written(app: &App, w: &atoms::Written, message: String) -> Result<Reply> {
    let ids: Vec<_> = w
        .atom
        .about
        .into_iter()
        .chain(w.atom.context.subject())
        .chain(match &w.atom.value {
            Some(crate::domain::memory::model::AtomValue::Subject(s)) => Some(*s),
            _ => None,
        })
        .collect();
    // The names the write resolved answer it; others are read.
    let names = if ids.iter().all(|i| w.names.contains_key(i)) {
        w.names.clone()
    } else {
        subjects::names(app, &ids).await?
    };
    let mut data = json!({
        "atom": views::atom(&w.atom, w.version, &names),
        "actions": views::actions(&w.actions),
    });
    if let Kept::Duplicate(into) = &w.kept {
        data["duplicateOf"] = json!(into.to_string());
    }
    if !w.created_subjects.is_empty() {
        data["createdSubjects"] = Value::Array(
            w.created_subjects
                .iter()
                .map(views::subject_brief)
                .collect(),
        );
    }
    if !w.references.is_empty() {
        data["references"] = Value::Array(w.references.iter().map(views::reference).collect());
    }
    Ok(Reply::new(message, data))
}

async fn manage_memory(app: &App, a: Args) -> Result<Reply> {
    let ops = [
        "remember",
        "validate",
        "deprecate",
        "archive",
        "resolve",
        "evidence",
        "link",
        "unlink",
    ];
    let op = a.req_choice("operation", &ops)?;
    let now = now(&a)?;
    let only = |allowed: &[&str]| -> Result<()> {
        let all = [
            "atom",
            "sources",
            "supersedes",
            "id",
            "version",
            "confidence",
            "confirmedBy",
            "reason",
            "resolvedBy",
            "kind",
            "to",
        ];
        let extra: Vec<&str> = all
            .iter()
            .copied()
            .filter(|k| !allowed.contains(k))
            .collect();
        a.forbid(&extra, &format!("to {op}"))
    };
    match op {
        "remember" => {
            only(&["atom", "sources", "supersedes"])?;
            let atom = a.object("atom")?.ok_or_else(|| {
                Error::validation("atom", "is required to remember: {type, statement, …}")
            })?;
            let w = atoms::remember(
                app,
                Remember {
                    fields: views::fields(&atom),
                    sources: sources(&a)?,
                    supersedes: a.id("supersedes")?,
                    now,
                },
            )
            .await?;
            let msg = match &w.kept {
                Kept::Duplicate(into) => {
                    format!("same claim as atom {into}: its sources now support it, no new atom")
                }
                Kept::Inserted => format!("atom {} recorded {}", w.atom.id, w.atom.status),
            };
            written(app, &w, msg).await
        }
        "validate" => {
            only(&["id", "version", "confidence", "confirmedBy"])?;
            let id = a.req_id("id")?;
            let v = a.req_version("to validate")?;
            let by = a.str("confirmedBy", NAME_MAX)?.filter(|s| !s.is_empty());
            let w =
                atoms::validate_atom(app, &id, v, a.num("confidence", 0.0, 1.0)?, by, now).await?;
            written(
                app,
                &w,
                format!(
                    "atom {id} validated: {} at confidence {}",
                    w.atom.status, w.atom.confidence
                ),
            )
            .await
        }
        "deprecate" | "archive" => {
            only(&["id", "version", "reason"])?;
            let id = a.req_id("id")?;
            let v = a.req_version(&format!("to {op}"))?;
            let to = if op == "archive" {
                MemoryStatus::Archived
            } else {
                MemoryStatus::Deprecated
            };
            let reason = a.str("reason", SUMMARY_MAX)?.filter(|s| !s.is_empty());
            let w = atoms::retire(app, &id, v, to, reason, now).await?;
            written(app, &w, format!("atom {id} is {to}")).await
        }
        "resolve" => {
            only(&["id", "version", "resolvedBy"])?;
            let id = a.req_id("id")?;
            let v = a.req_version("to resolve")?;
            let by = a
                .str("resolvedBy", NAME_MAX)?
                .filter(|s| !s.is_empty())
                .ok_or_else(|| {
                    Error::validation("resolvedBy", "is required to resolve: who chose this atom")
                })?;
            let w = atoms::resolve(app, &id, v, &by, now).await?;
            written(app, &w, format!("atom {id} is ACTIVE, chosen by {by}")).await
        }
        "evidence" => {
            only(&["id", "sources"])?;
            let id = a.req_id("id")?;
            let s = sources(&a)?;
            if s.is_empty() {
                return Err(Error::validation(
                    "sources",
                    "is required for evidence: the references to add",
                ));
            }
            let w = atoms::add_evidence(app, &id, &s, now).await?;
            written(
                app,
                &w,
                format!(
                    "{} source(s) added to atom {id}: {}",
                    w.references.len(),
                    w.atom.status
                ),
            )
            .await
        }
        _ => {
            only(&["id", "kind", "to"])?;
            let id = a.req_id("id")?;
            let to = a.req_id("to")?;
            let names: Vec<&'static str> = LINKABLE.iter().map(|k| k.as_wire()).collect();
            let kind = a.req_choice("kind", &names)?;
            let kind =
                EdgeKind::parse(kind).map_err(|e| Error::validation("kind", e.to_string()))?;
            let on = op == "link";
            let (changed, actions) = atoms::link(app, &id, kind, &to, on, now).await?;
            let msg = match (on, changed) {
                (true, true) => format!("{id} {kind} {to} added"),
                (true, false) => format!("{id} {kind} {to} was there already"),
                (false, true) => format!("{id} {kind} {to} removed"),
                (false, false) => format!("there was no {id} {kind} {to}"),
            };
            Ok(Reply::new(
                msg,
                json!({ "changed": changed, "actions": views::actions(&actions) }),
            ))
        }
    }
}

async fn query_memory(app: &App, a: Args) -> Result<Reply> {
    let op = a.req_choice("operation", &["recall", "get", "list"])?;
    match op {
        "get" => {
            a.forbid(
                &[
                    "query",
                    "about",
                    "types",
                    "status",
                    "predicate",
                    "key",
                    "asOf",
                    "validAt",
                    "maxTokens",
                    "minScore",
                    "limit",
                    "offset",
                    "projectId",
                ],
                "to get",
            )?;
            let id = a.req_id("id")?;
            let v = atoms::get(app, &id).await?;
            let mut data = json!({
                "atom": views::atom(&v.atom, v.version, &v.subjects),
                "strength": v.strength.as_str(),
                "evidence": v.evidence.iter().map(views::reference).collect::<Vec<_>>(),
                "edges": v.edges.iter().map(|e| views::edge(e, &v.subjects)).collect::<Vec<_>>(),
                "history": v.history.iter().map(|(h, ver)| Value::Object(views::atom_brief(h, *ver, &v.subjects))).collect::<Vec<_>>(),
                "onKey": v.on_key.iter().map(|(h, ver)| Value::Object(views::atom_brief(h, *ver, &v.subjects))).collect::<Vec<_>>(),
            });
            if let Some(r) = &v.status_reason {
                data["atom"]["statusReason"] = json!(r);
            }
            Ok(Reply::new(
                format!("{} {} ({})", v.atom.atom_type(), id, v.atom.status),
                data,
            ))
        }
        "list" => {
            a.forbid(
                &[
                    "query",
                    "asOf",
                    "validAt",
                    "maxTokens",
                    "minScore",
                    "projectId",
                    "id",
                ],
                "to list",
            )?;
            let (limit, offset) = a.page(20)?;
            let q = ListQuery {
                statuses: status_list(&a, "status")?,
                types: type_list(&a)?,
                about: a.list("about")?.unwrap_or_default(),
                predicate: a.str("predicate", 256)?.filter(|s| !s.is_empty()),
                claim_key: a.str("key", 1024)?.filter(|s| !s.is_empty()),
                include_history: a.bool("includeHistory")?.unwrap_or(false),
                limit,
                offset,
            };
            let p = atoms::list(app, q).await?;
            let n = p.items.len() as i64;
            let items: Vec<Value> = p
                .items
                .iter()
                .map(|(x, v)| Value::Object(views::atom_brief(x, *v, &p.subjects)))
                .collect();
            Ok(Reply::new(
                format!("{n} of {} atom(s)", p.total),
                json!({ "items": items, "total": p.total, "limit": limit, "offset": offset, "hasMore": offset + n < p.total }),
            ))
        }
        _ => {
            a.forbid(&["id", "status", "predicate", "key", "offset"], "to recall")?;
            let r = RecallReq {
                query: a.str("query", QUERY_MAX)?.filter(|s| !s.is_empty()),
                about: a.list("about")?.unwrap_or_default(),
                types: type_list(&a)?,
                project: a.id("projectId")?,
                as_of: time_arg(&a, "asOf")?,
                valid_at: time_arg(&a, "validAt")?,
                include_history: a.bool("includeHistory")?.unwrap_or(false),
                max_tokens: a.int("maxTokens", 1, 10_000_000)?.map(|n| n as usize),
                limit: a.int("limit", 1, 500)?.unwrap_or(20) as usize,
                min_score: a
                    .num("minScore", -1.0, 1.0)?
                    .map_or(mrecall::DEFAULT_MIN_SCORE, |v| v as f32),
                now: now(&a)?,
            };
            let floor = r.min_score;
            let max = r.max_tokens;
            let out = mrecall::recall(app, r).await?;
            let mut m = recall_message(&out);
            m.push_str(&crate::mcp::code::semantic::below_min_score(
                out.below_min_score,
                floor,
            ));
            let mut reply = Reply::new(m, recalled(&out));
            if let Some(max) = max {
                fit_recall(&mut reply, max);
            }
            Ok(reply)
        }
    }
}

/// Fits a recall's answer into `max` tokens as served: atoms are shed from the end
/// (the answer is best first) and summarised under `omitted`.
fn fit_recall(r: &mut Reply, max: usize) {
    use crate::mcp::budget::{fit, Shed, Summary};
    let sheds = [Shed {
        at: "/atoms",
        rank: |_, _| 0.0,
        brief: |a| json!({ "id": a["id"], "type": a["type"] }),
        keep_first: 0,
        summary: "atoms",
    }];
    let summary = Summary {
        at: "/omitted",
        counts: "count",
        next: "query_memory get (id) for one; recall again with a larger maxTokens, or narrower query, about or types",
        estimate: Some("/tokens"),
        capped: &[],
        fetch: &[],
    };
    let message = |d: &Value| {
        let n = d["atoms"].as_array().map_or(0, Vec::len);
        let mut m = format!("{n} atom(s), {} tokens", d["tokens"]);
        let left = d["leftOut"].as_u64().unwrap_or(0)
            + d["omitted"]["count"]["atoms"].as_u64().unwrap_or(0);
        if left > 0 {
            m.push_str(&format!("; {left} more left out"));
        }
        m
    };
    fit(r, max, &sheds, &summary, &message, &|_, _| {});
}

fn recall_message(r: &mrecall::Recalled) -> String {
    let mut m = format!("{} atom(s), {} tokens", r.hits.len(), r.tokens);
    if r.left_out > 0 {
        m.push_str(&format!("; {} more left out", r.left_out));
    }
    m
}

/// A recall's answer as JSON.
pub fn recalled(r: &mrecall::Recalled) -> Value {
    let atoms: Vec<Value> = r
        .hits
        .iter()
        .map(|h| {
            let mut m = views::atom_brief(&h.atom, h.version, &r.subjects);
            m.insert("scope".into(), json!(views::scope(h.scope)));
            m.insert("score".into(), json!((h.score * 1000.0).round() / 1000.0));
            if r.embedder.is_some() {
                // The query's part of the order (its first key).
                m.insert(
                    "relevance".into(),
                    json!((h.relevance * 1000.0).round() / 1000.0),
                );
                if let Some(by) = &h.lifted_by {
                    // The relevance is partly the neighbour's (service::memory::exchange).
                    m.insert("liftedBy".into(), json!(by));
                }
            }
            m.insert("evidence".into(), json!(h.strength.as_str()));
            Value::Object(m)
        })
        .collect();
    let mut v = json!({ "atoms": atoms, "tokens": r.tokens, "leftOut": r.left_out });
    if let Some(s) = &r.asker {
        v["project"] = views::subject_brief(s);
    }
    if let Some(n) = &r.note {
        v["note"] = json!(n);
    }
    if !r.usage.is_empty() {
        v["derivedFacts"] = Value::Array(r.usage.iter().map(views::usage).collect());
    }
    if r.not_embedded > 0 {
        // Said, so an agent knows the ranking may miss what was just remembered.
        v["notEmbedded"] = json!(r.not_embedded);
    }
    if let Some(e) = r.embedder {
        v["embedder"] = json!(e);
        v["belowMinScore"] = json!(r.below_min_score);
    }
    v
}

async fn curate_memory(app: &App, a: Args) -> Result<Reply> {
    let op = a.req_choice("operation", &["plan", "run", "queue"])?;
    let now = now(&a)?;
    let (limit, offset) = (
        a.int("limit", 0, 100_000)?.unwrap_or(50),
        a.int("offset", 0, i64::from(i32::MAX))?.unwrap_or(0),
    );
    match op {
        "queue" => {
            a.forbid(&["fingerprint"], "to queue")?;
            let within = a.int("withinDays", 0, 3650)?.unwrap_or(7);
            let q = curator::queue(app, now, within, limit.max(1), offset).await?;
            let n = q.items.len() as i64;
            let ids: Vec<_> = q
                .items
                .iter()
                .flat_map(|(x, _, _)| x.about.into_iter().chain(x.context.subject()))
                .collect();
            let names = subjects::names(app, &ids).await?;
            let items: Vec<Value> = q
                .items
                .iter()
                .map(|(x, v, why)| {
                    let mut m = views::atom_brief(x, *v, &names);
                    if let Some(w) = why {
                        m.insert("statusReason".into(), json!(w));
                    }
                    Value::Object(m)
                })
                .collect();
            Ok(Reply::new(
                format!("{n} of {} atom(s) need attention", q.total),
                json!({ "items": items, "total": q.total, "limit": limit, "offset": offset, "hasMore": offset + n < q.total }),
            ))
        }
        _ => {
            a.forbid(&["withinDays"], &format!("to {op}"))?;
            let run = op == "run";
            if !run {
                a.forbid(&["fingerprint"], "to plan")?;
            }
            let fp = a.str("fingerprint", 64)?.filter(|s| !s.is_empty());
            let p = curator::pass(app, now, run, fp.as_deref()).await?;
            let total = p.actions.len();
            let shown: Vec<Value> = p
                .actions
                .iter()
                .skip(offset as usize)
                .take(limit as usize)
                .map(views::action)
                .collect();
            let mut summary = serde_json::Map::new();
            for (k, n) in &p.summary {
                summary.insert(k.as_str().into(), json!(n));
            }
            let verb = if run { "performed" } else { "would take" };
            Ok(Reply::new(
                format!(
                    "the curator {verb} {total} action(s) over {} atoms",
                    p.atoms
                ),
                json!({
                    "written": p.written,
                    "fingerprint": p.fingerprint,
                    "summary": summary,
                    "total": total,
                    "actions": shown,
                    "offset": offset,
                    "hasMore": (offset as usize) + shown.len() < total,
                    "looked": { "atoms": p.atoms, "subjects": p.subjects, "edges": p.edges },
                    "ms": { "load": p.timings.0, "plan": p.timings.1, "write": p.timings.2 },
                }),
            ))
        }
    }
}

/// `includeMemory` on a task get: the ACTIVE atoms relevant to the task, as read by
/// the get's one transaction (`service::composed`).
pub fn task_memory(m: &mrecall::TaskMemory) -> Value {
    let mut v = recalled(&m.recalled);
    v["maxTokens"] = json!(mrecall::TASK_MEMORY_TOKENS);
    v["namedSubjects"] = Value::Array(m.named.iter().map(views::subject_brief).collect());
    v
}

/// `memoryHints` on an advance that closes a task: a diary entry to write, and the
/// atoms about what the task touched, with the versions a validation needs.
pub async fn closing_hints(app: &App, task: &Item) -> Result<Option<Value>> {
    if task.kind != ItemKind::Task || task.status != Status::Closed {
        return Ok(None);
    }
    let m = mrecall::for_task(app, task, 400, OffsetDateTime::now_utc()).await?;
    let mut v = json!({
        "message": "Task completed. Consider a diary entry, and remembering what you learned.",
        "suggestedActions": [
            "manage_diary write: accomplishments, decisions, challenges, learnings of this task (taskId)",
            "manage_memory remember: facts, decisions and rules you learned, with sources",
            "manage_memory validate: atoms below you confirmed still hold"
        ],
        "diaryEntry": { "operation": "write", "taskId": task.id, "session": task.name },
    });
    if !m.recalled.hits.is_empty() {
        v["atoms"] = Value::Array(
            m.recalled
                .hits
                .iter()
                .map(|h| json!({ "id": h.atom.id.to_string(), "statement": h.atom.statement, "status": h.atom.status.as_wire(), "version": h.version }))
                .collect(),
        );
    }
    Ok(Some(v))
}

/// The reflection prompt (`cairn-reflection`): the reflection instruction with the
/// entries named by `ids` (comma-separated), or the newest `limit` of `session`.
pub async fn reflection_prompt(
    app: &App,
    ids: Option<&str>,
    session: Option<&str>,
    limit: Option<&str>,
) -> Result<String> {
    let ids: Vec<String> = match ids {
        Some(s) => s
            .split(',')
            .map(str::trim)
            .filter(|x| !x.is_empty())
            .map(|x| crate::domain::id::parse("ids", x))
            .collect::<Result<_, _>>()?,
        None => vec![],
    };
    let limit = match limit {
        Some(l) => l
            .trim()
            .parse::<i64>()
            .ok()
            .filter(|n| (1..=200).contains(n))
            .ok_or_else(|| Error::validation("limit", "must be a whole number from 1 to 200"))?,
        None => 10,
    };
    let f = DiaryFilter {
        session: session.map(str::to_string).filter(|s| !s.is_empty()),
        ..Default::default()
    };
    let for_session = f.session.is_some();
    let entries = diary::chosen(app, &ids, f, limit).await?;
    // Nothing to reflect on yet is no malformed request: the prompt says what to
    // write first.
    if entries.is_empty() {
        return Ok(format!(
            "There are no diary entries{} to reflect on yet. Write one first, at the end of a \
             session: manage_diary {{\"operation\":\"write\",\"session\":\"…\",\"projectId\":\"…\",\
             \"accomplishments\":[\"…\"],\"learnings\":[\"…\"]}}; then ask for this prompt again.",
            if for_session { " for that session" } else { "" }
        ));
    }
    Ok(diary::prompt(&entries))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_collision_rule_is_quoted_word_for_word() {
        assert!(super::rule_is_quoted());
    }

    /// The README's review-and-decay and evidence tables are the core's, rendered.
    #[test]
    fn the_readme_tables_are_the_cores() {
        let readme = include_str!("../../../README.md");
        for table in [
            crate::domain::memory::decay::markdown_table(),
            crate::domain::memory::evidence::markdown_table(),
        ] {
            assert!(
                readme.contains(&table),
                "README.md lacks the table:\n{table}"
            );
        }
    }
}
