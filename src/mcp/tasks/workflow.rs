//! Workflow tools: next/blocked work, state, dependencies, and the transitions
//! advance, revert, terminate, block, unblock, sync.

use serde_json::{json, Value};

use crate::domain::ItemKind;
use crate::error::{Error, Result};
use crate::mcp::args::{Args, SUMMARY_MAX};
use crate::mcp::envelope::blockers as blockers_json;
use crate::mcp::envelope::Reply;
use crate::mcp::graph::views;
use crate::mcp::json;
use crate::mcp::schema::{Effect, ToolDef, Ty, P};
use crate::mcp::tasks::containers::priority;
use crate::service::workflow::{self, Blocker, NextFilter, Transition};
use crate::service::{context, dependencies, App};

const KIND: Ty = Ty::Enum(&["task", "feature"]);

const fn transition(
    name: &'static str,
    title: &'static str,
    description: &'static str,
    params: &'static [P],
    required: &'static [&'static str],
    effect: Effect,
) -> ToolDef {
    ToolDef {
        name,
        title,
        toolset: "tasks",
        description,
        params,
        required,
        effect,
        idempotent: false,
        read_ops: &[],
    }
}

const REQ: &[&str] = &["containerType", "id", "version"];
const REQ_BLOCK: &[&str] = &["containerType", "id", "version", "blockedBy"];

pub const GET_NEXT_TASK: ToolDef = ToolDef {
    name: "get_next_task",
    title: "Next task",
    toolset: "tasks",
    description: "NEW and unblocked, by priority (HIGH first), lower complexity, age.",
    params: &[
        P("projectId", Ty::Id, ""),
        P("featureId", Ty::Id, ""),
        P("priority", Ty::Str, ""),
    ],
    required: &[],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const GET_BLOCKED_TASKS: ToolDef = ToolDef {
    name: "get_blocked_tasks",
    title: "Blocked tasks",
    toolset: "tasks",
    description: "Blocked open tasks, with blockers.",
    params: &[P("projectId", Ty::Id, ""), P("featureId", Ty::Id, "")],
    required: &[],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const GET_NEXT_FEATURE: ToolDef = ToolDef {
    name: "get_next_feature",
    title: "Next feature",
    toolset: "tasks",
    description: "Unblocked, ACTIVE before NEW, by priority, age.",
    params: &[P("projectId", Ty::Id, ""), P("priority", Ty::Str, "")],
    required: &[],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const GET_BLOCKED_FEATURES: ToolDef = ToolDef {
    name: "get_blocked_features",
    title: "Blocked features",
    toolset: "tasks",
    description: "Blocked open features, with blockers.",
    params: &[P("projectId", Ty::Id, "")],
    required: &[],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const QUERY_WORKFLOW_STATE: ToolDef = ToolDef {
    name: "query_workflow_state",
    title: "Workflow state",
    toolset: "tasks",
    description: "An item's pipeline state, and why advance or revert would be refused.",
    params: &[P("containerType", KIND, ""), P("id", Ty::Id, "")],
    required: &["containerType", "id"],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const QUERY_DEPENDENCIES: ToolDef = ToolDef {
    name: "query_dependencies",
    title: "Query dependencies",
    toolset: "tasks",
    description: "An item's dependencies (its blockers) and dependents.",
    params: &[
        P("id", Ty::Id, ""),
        P("containerType", KIND, ""),
        P(
            "direction",
            Ty::Enum(&["dependencies", "dependents", "both"]),
            "",
        ),
    ],
    required: &["id", "containerType"],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const MANAGE_DEPENDENCY: ToolDef = ToolDef {
    name: "manage_dependency",
    title: "Manage dependency",
    toolset: "tasks",
    description: "create: fromId BLOCKS (default) or RELATES_TO toId, no cycle. delete: id, or fromId, toId, type.",
    params: &[
        P("operation", Ty::Enum(&["create", "delete"]), ""),
        P("id", Ty::Id, ""),
        P("fromId", Ty::Id, ""),
        P("toId", Ty::Id, ""),
        P("containerType", KIND, ""),
        P("type", Ty::Enum(&["BLOCKS", "RELATES_TO"]), ""),
    ],
    required: &["operation"],
    effect: Effect::Destructive,
    idempotent: false,
    read_ops: &[],
};

const TRANSITION_PARAMS: &[P] = &[
    P("containerType", KIND, ""),
    P("id", Ty::Id, ""),
    P("version", Ty::Int, ""),
];

pub const ADVANCE: ToolDef = transition(
    "advance",
    "Advance item",
    "Next pipeline state (default NEW → ACTIVE → CLOSED); refused if blocked or terminal. A feature follows its tasks.",
    TRANSITION_PARAMS,
    REQ,
    Effect::Destructive,
);

pub const REVERT: ToolDef = transition(
    "revert",
    "Revert item",
    "One step back; refused at NEW, when blocked or terminal.",
    TRANSITION_PARAMS,
    REQ,
    Effect::Destructive,
);

pub const TERMINATE: ToolDef = transition(
    "terminate",
    "Terminate item",
    "End an item as WILL_NOT_IMPLEMENT; what it blocked stays blocked.",
    &[
        P("containerType", KIND, ""),
        P("id", Ty::Id, ""),
        P("version", Ty::Int, ""),
        P("reason", Ty::Str, ""),
    ],
    REQ,
    Effect::Destructive,
);

pub const BLOCK: ToolDef = transition(
    "block",
    "Block item",
    "Blocked by items of its type, or NO_OP (outside Cairn; blockedReason required).",
    &[
        P("containerType", KIND, ""),
        P("id", Ty::Id, ""),
        P("version", Ty::Int, ""),
        P("blockedBy", Ty::StrOrList, "Ids or NO_OP"),
        P("blockedReason", Ty::Str, ""),
    ],
    REQ_BLOCK,
    Effect::Additive,
);

pub const UNBLOCK: ToolDef = transition(
    "unblock",
    "Unblock item",
    "Remove blockers from an item.",
    &[
        P("containerType", KIND, ""),
        P("id", Ty::Id, ""),
        P("version", Ty::Int, ""),
        P("blockedBy", Ty::StrOrList, "Ids or NO_OP"),
    ],
    REQ_BLOCK,
    Effect::Destructive,
);

pub const SYNC: ToolDef = ToolDef {
    name: "sync",
    title: "Sync pipelines",
    toolset: "tasks",
    description: "Apply the config file's pipelines; refused while rows are in a dropped state, unless override moves them back.",
    params: &[P("override", Ty::Bool, "")],
    required: &[],
    effect: Effect::Destructive,
    idempotent: true,
    read_ops: &[],
};

fn kind(a: &Args) -> Result<ItemKind> {
    Ok(match a.req_choice("containerType", &["task", "feature"])? {
        "task" => ItemKind::Task,
        _ => ItemKind::Feature,
    })
}

fn next_filter(a: &Args) -> Result<NextFilter> {
    Ok(NextFilter {
        project_id: a.id("projectId")?,
        feature_id: if a.has("featureId") {
            a.id("featureId")?
        } else {
            None
        },
        priority: if a.has("priority") {
            priority(a)?
        } else {
            None
        },
    })
}

pub async fn next_task(app: &App, a: Args) -> Result<Reply> {
    match workflow::next_task(app, &next_filter(&a)?).await? {
        Some(t) => Ok(Reply::new(
            format!("next task: {}", t.name),
            json!({ "task": json::item(&t) }),
        )),
        None => Ok(Reply::new(
            "no NEW unblocked task matches",
            json!({ "task": null }),
        )),
    }
}

pub async fn next_feature(app: &App, a: Args) -> Result<Reply> {
    match workflow::next_feature(app, &next_filter(&a)?).await? {
        Some(f) => Ok(Reply::new(
            format!("next feature: {}", f.name),
            json!({ "feature": json::item(&f) }),
        )),
        None => Ok(Reply::new(
            "no ACTIVE or NEW unblocked feature matches",
            json!({ "feature": null }),
        )),
    }
}

pub async fn blocked(app: &App, a: Args, k: ItemKind) -> Result<Reply> {
    let rows = workflow::blocked(app, k, &next_filter(&a)?).await?;
    let out: Vec<Value> = rows
        .iter()
        .map(|(it, b)| {
            let mut v = json::item_ref(it);
            v["priority"] = json!(it.priority.as_str());
            v["blockedBy"] = Value::Array(blockers_json(b));
            v
        })
        .collect();
    let key = if k == ItemKind::Task {
        "tasks"
    } else {
        "features"
    };
    Ok(Reply::new(
        format!("{} blocked {key}", out.len()),
        json!({ key: out }),
    ))
}

pub async fn state(app: &App, a: Args) -> Result<Reply> {
    let k = kind(&a)?;
    let id = a.req_id("id")?;
    let s = workflow::state(app, k, &id).await?;
    let refusal = |e: &Option<Error>| {
        e.as_ref().map_or(
            Value::Null,
            |e| json!({ "code": e.code(), "message": e.to_string() }),
        )
    };
    Ok(Reply::new(
        format!("{} {id} is {}", k.as_str(), s.item.status.as_str()),
        json!({
            "id": id,
            "containerType": k.as_str(),
            "status": s.item.status.as_str(),
            "version": s.item.version,
            "pipeline": s.pipeline,
            "terminal": s.item.status.is_terminal(),
            "nextStatus": s.next.map(|x| x.as_str()),
            "previousStatus": s.previous.map(|x| x.as_str()),
            "blocked": !s.blockers.is_empty(),
            "blockers": blockers_json(&s.blockers),
            "canAdvance": s.advance_refused.is_none(),
            "advanceRefused": refusal(&s.advance_refused),
            "canRevert": s.revert_refused.is_none(),
            "revertRefused": refusal(&s.revert_refused),
        }),
    ))
}

pub async fn dependencies(app: &App, a: Args) -> Result<Reply> {
    let k = kind(&a)?;
    let id = a.req_id("id")?;
    let dir = a
        .choice("direction", &["dependencies", "dependents", "both"])?
        .unwrap_or("both");
    let (inc, out) = dependencies::list(app, k, &id).await?;
    let mut data = json!({ "id": id });
    if dir != "dependents" {
        data["dependencies"] = Value::Array(inc.iter().map(|e| json::edge(e, true)).collect());
    }
    if dir != "dependencies" {
        data["dependents"] = Value::Array(out.iter().map(|e| json::edge(e, false)).collect());
    }
    Ok(Reply::new(
        format!("{} dependencies, {} dependents", inc.len(), out.len()),
        data,
    ))
}

pub async fn manage_dependency(app: &App, a: Args) -> Result<Reply> {
    let op = a.req_choice("operation", &["create", "delete"])?;
    let k = match a
        .choice("containerType", &["task", "feature"])?
        .unwrap_or("task")
    {
        "task" => ItemKind::Task,
        _ => ItemKind::Feature,
    };
    let t = a
        .choice("type", &["BLOCKS", "RELATES_TO"])?
        .unwrap_or("BLOCKS");
    if op == "create" {
        a.forbid(&["id"], "to create (give fromId and toId)")?;
        let from = a.req_id("fromId")?;
        let to = a.req_id("toId")?;
        let (e, touched) = dependencies::create(app, k, &from, &to, t).await?;
        let mut data = json!({ "dependency": json::edge(&e, true) });
        if !touched.is_empty() {
            data["updated"] = json::touched(&touched);
        }
        return Ok(Reply::new(format!("{from} {t} {to}"), data));
    }
    match a.id("id")? {
        Some(id) => {
            let touched = dependencies::delete(app, Some(&id), None).await?;
            let mut data = json!({ "id": id, "deleted": true });
            if !touched.is_empty() {
                data["updated"] = json::touched(&touched);
            }
            Ok(Reply::new(format!("dependency {id} deleted"), data))
        }
        None => {
            let from = a.req_id("fromId")?;
            let to = a.req_id("toId")?;
            let touched = dependencies::delete(app, None, Some((k, &from, &to, t))).await?;
            let mut data = json!({ "fromId": from, "toId": to, "type": t, "deleted": true });
            if !touched.is_empty() {
                data["updated"] = json::touched(&touched);
            }
            Ok(Reply::new(format!("{from} {t} {to} deleted"), data))
        }
    }
}

fn transition_json(t: &Transition) -> Value {
    let key = t.item.kind.as_str();
    let mut v = json!({
        key: json::item(&t.item),
        "previousStatus": t.from.as_str(),
        "newStatus": t.item.status.as_str(),
    });
    if !t.unblocked.is_empty() {
        v["unblocked"] = Value::Array(t.unblocked.iter().map(json::item_ref).collect());
    }
    if !t.still_blocked.is_empty() {
        v["stillBlocked"] = Value::Array(t.still_blocked.iter().map(json::item_ref).collect());
    }
    if let Some((f, from)) = &t.feature {
        v["featureTransition"] = json!({ "feature": json::item_ref(f), "previousStatus": from.as_str(), "newStatus": f.status.as_str() });
    }
    if t.open_tasks > 0 {
        v["openTasks"] = json!(t.open_tasks);
    }
    v
}

fn transition_message(verb: &str, t: &Transition) -> String {
    let mut m = format!(
        "{} {} {verb}: {} → {}",
        t.item.kind.as_str(),
        t.item.id,
        t.from.as_str(),
        t.item.status.as_str()
    );
    if let Some((f, from)) = &t.feature {
        m.push_str(&format!(
            "; feature {} {} → {}",
            f.id,
            from.as_str(),
            f.status.as_str()
        ));
    }
    if !t.unblocked.is_empty() {
        m.push_str(&format!("; {} item(s) unblocked", t.unblocked.len()));
    }
    if !t.still_blocked.is_empty() {
        m.push_str(&format!(
            "; {} dependent(s) stay blocked",
            t.still_blocked.len()
        ));
    }
    m
}

pub async fn advance(app: &App, a: Args) -> Result<Reply> {
    let (k, id, v) = (kind(&a)?, a.req_id("id")?, a.req_version("to advance")?);
    let t = workflow::advance(app, k, &id, v).await?;
    let mut data = transition_json(&t);
    // The hint reads the graph after the move committed: a failure to read it must not
    // turn a successful advance into an error, so it is logged and left out.
    if app.config.toolsets.iter().any(|s| s == "graph") {
        match context::hints(app, &t.item).await {
            Ok(Some(h)) => data["graphHints"] = views::hints(&h),
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, task = %t.item.id, "graph hints unavailable"),
        }
    }
    if app.config.toolsets.iter().any(|s| s == "memory") {
        match crate::mcp::memory::closing_hints(app, &t.item).await {
            Ok(Some(h)) => data["memoryHints"] = h,
            Ok(None) => {}
            Err(e) => tracing::warn!(error = %e, task = %t.item.id, "memory hints unavailable"),
        }
    }
    Ok(Reply::new(transition_message("advanced", &t), data))
}

pub async fn revert(app: &App, a: Args) -> Result<Reply> {
    let (k, id, v) = (kind(&a)?, a.req_id("id")?, a.req_version("to revert")?);
    let t = workflow::revert(app, k, &id, v).await?;
    Ok(Reply::new(
        transition_message("reverted", &t),
        transition_json(&t),
    ))
}

pub async fn terminate(app: &App, a: Args) -> Result<Reply> {
    let (k, id, v) = (kind(&a)?, a.req_id("id")?, a.req_version("to terminate")?);
    let reason = a.str("reason", SUMMARY_MAX)?.filter(|s| !s.is_empty());
    let t = workflow::terminate(app, k, &id, v, reason.as_deref()).await?;
    Ok(Reply::new(
        transition_message("terminated", &t),
        transition_json(&t),
    ))
}

fn blockers(a: &Args) -> Result<Vec<Blocker>> {
    let raw = a
        .list("blockedBy")?
        .ok_or_else(|| Error::validation("blockedBy", "is required: ids, or \"NO_OP\""))?;
    if raw.is_empty() {
        return Err(Error::validation(
            "blockedBy",
            "must name at least one blocker",
        ));
    }
    if raw.len() > 50 {
        return Err(Error::validation(
            "blockedBy",
            format!("{} blockers given, at most 50 allowed", raw.len()),
        ));
    }
    raw.iter()
        .map(|s| {
            if s.eq_ignore_ascii_case("NO_OP") {
                Ok(Blocker::NoOp)
            } else {
                Ok(Blocker::Item(crate::domain::id::parse("blockedBy", s)?))
            }
        })
        .collect()
}

fn block_json(it: &crate::domain::Item, open: &[crate::domain::container::Dependency]) -> Value {
    json!({ it.kind.as_str(): json::item(it), "blocked": !open.is_empty(), "blockers": blockers_json(open) })
}

pub async fn block(app: &App, a: Args) -> Result<Reply> {
    let (k, id, v) = (kind(&a)?, a.req_id("id")?, a.req_version("to block")?);
    let by = blockers(&a)?;
    let reason = a
        .str("blockedReason", SUMMARY_MAX)?
        .filter(|s| !s.is_empty());
    let (it, open) = workflow::block(app, k, &id, v, &by, reason.as_deref()).await?;
    Ok(Reply::new(
        format!("{} {id} blocked by {} blocker(s)", k.as_str(), open.len()),
        block_json(&it, &open),
    ))
}

pub async fn unblock(app: &App, a: Args) -> Result<Reply> {
    let (k, id, v) = (kind(&a)?, a.req_id("id")?, a.req_version("to unblock")?);
    let by = blockers(&a)?;
    let (it, open) = workflow::unblock(app, k, &id, v, &by).await?;
    let msg = if open.is_empty() {
        format!("{} {id} is unblocked", k.as_str())
    } else {
        format!("{} {id} still has {} blocker(s)", k.as_str(), open.len())
    };
    Ok(Reply::new(msg, block_json(&it, &open)))
}

pub async fn sync(app: &App, a: Args) -> Result<Reply> {
    let over = a.bool("override")?.unwrap_or(false);
    let wanted = app.config.reload_pipelines()?;
    let reports = workflow::sync(app, &wanted, over).await?;
    let mut data = json!({});
    let mut changed = 0;
    for r in &reports {
        if r.before != r.after {
            changed += 1;
        }
        data[r.kind.as_str()] = json!({
            "before": r.before,
            "after": r.after,
            "moved": r.moved.iter().map(|(f, t, n)| json!({ "from": f.as_str(), "to": t.as_str(), "count": n })).collect::<Vec<_>>(),
        });
    }
    let msg = if changed == 0 {
        "pipelines already match the configuration".to_string()
    } else {
        format!("{changed} pipeline(s) applied")
    };
    Ok(Reply::new(msg, data))
}
