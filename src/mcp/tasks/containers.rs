//! `query_container` and `manage_container`: projects, features and tasks.

use serde_json::{json, Value};

use crate::domain::{ContainerType, ItemKind, Priority, Status};
use crate::error::{Error, Result};
use crate::mcp::args::{Args, QUERY_MAX, SUMMARY_MAX, TEXT_MAX};
use crate::mcp::envelope::Reply;
use crate::mcp::graph::views;
use crate::mcp::json;
use crate::mcp::schema::{Effect, ToolDef, Ty, P};
use crate::service::composed::{self, Overview};
use crate::service::containers::{self, Container, NewContainer, Page, SearchQuery};
use crate::service::context;
use crate::service::App;

const CONTAINER: Ty = Ty::Enum(&["project", "feature", "task"]);

pub const QUERY_CONTAINER: ToolDef = ToolDef {
    name: "query_container",
    title: "Query container",
    toolset: "tasks",
    description: "Projects, features, tasks: get (id), search (filters), overview (a project's features, a feature's tasks, all projects).",
    params: &[
        P("operation", Ty::Enum(&["get", "search", "overview"]), ""),
        P("containerType", CONTAINER, ""),
        P("id", Ty::Id, ""),
        P("query", Ty::Str, ""),
        P("status", Ty::StrOrList, ""),
        P("priority", Ty::Str, ""),
        P("tags", Ty::StrOrList, ""),
        P("projectId", Ty::Id, ""),
        P("featureId", Ty::Id, ""),
        P("limit", Ty::Int, ""),
        P("offset", Ty::Int, ""),
        P("includeSections", Ty::Bool, ""),
        P("includeGraphContext", Ty::Bool, "Task get: its files' atoms"),
        P("maxTokens", Ty::Int, "0 = all"),
        P("includeMemory", Ty::Bool, "Task get: its memory"),
        P("brief", Ty::Bool, "Task get: what to know first"),
    ],
    required: &["operation", "containerType"],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const MANAGE_CONTAINER: ToolDef = ToolDef {
    name: "manage_container",
    title: "Manage container",
    toolset: "tasks",
    description: "Write a project, feature or task (tasks have a title, others a name); status moves by advance, revert, terminate.",
    params: &[
        P("operation", Ty::Enum(&["create", "update", "delete"]), ""),
        P("containerType", CONTAINER, ""),
        P("id", Ty::Id, ""),
        P("name", Ty::Str, ""),
        P("title", Ty::Str, ""),
        P("summary", Ty::Str, ""),
        P("description", Ty::Str, ""),
        P("priority", Ty::Str, "HIGH, MEDIUM (default), LOW"),
        P("projectId", Ty::Id, ""),
        P("featureId", Ty::Id, ""),
        P("complexity", Ty::Int, "1-10, default 5"),
        P("tags", Ty::StrOrList, "Replaces on update"),
        P("relatedTo", Ty::StrOrList, ""),
        P("version", Ty::Int, ""),
        P("cascade", Ty::Bool, "Delete with children"),
    ],
    required: &["operation", "containerType"],
    effect: Effect::Destructive,
    idempotent: false,
    read_ops: &[],
};

pub fn container_type(a: &Args) -> Result<ContainerType> {
    let s = a.req_choice("containerType", &["project", "feature", "task"])?;
    ContainerType::parse(s).ok_or_else(|| Error::validation("containerType", "unknown"))
}

pub fn priority(a: &Args) -> Result<Option<Priority>> {
    match a.str("priority", 64)? {
        None => Ok(None),
        Some(s) => Priority::parse(&s).map(Some).ok_or_else(|| {
            Error::validation("priority", format!("'{s}' is not one of HIGH, MEDIUM, LOW"))
        }),
    }
}

fn statuses(a: &Args, kind: Option<ItemKind>) -> Result<Vec<Status>> {
    let Some(list) = a.list("status")? else {
        return Ok(vec![]);
    };
    let Some(kind) = kind else {
        return Err(Error::validation("status", "projects have no status"));
    };
    list.iter()
        .map(|s| {
            Status::parse(s)
                .filter(|st| Status::all_for(kind).contains(st))
                .ok_or_else(|| {
                    let names: Vec<&str> =
                        Status::all_for(kind).iter().map(|s| s.as_str()).collect();
                    Error::validation(
                        "status",
                        format!(
                            "'{s}' is not a {} status: {}",
                            kind.as_str(),
                            names.join(", ")
                        ),
                    )
                })
        })
        .collect()
}

pub fn container_json(c: &Container) -> Value {
    match c {
        Container::Project(p) => json::project(p),
        Container::Item(i) => json::item(i),
    }
}

pub async fn query(app: &App, a: Args) -> Result<Reply> {
    let op = a.req_choice("operation", &["get", "search", "overview"])?;
    let ct = container_type(&a)?;
    match op {
        "get" if a.bool("brief")?.unwrap_or(false) => {
            if ct != ContainerType::Task {
                return Err(Error::validation("brief", "applies to tasks only"));
            }
            a.forbid(
                &["includeSections", "includeGraphContext", "includeMemory"],
                "with brief (it holds them)",
            )?;
            let id = a.req_id("id")?;
            let max = match a.int("maxTokens", 0, 10_000_000)? {
                None => Some(super::brief::DEFAULT_TOKENS),
                Some(0) => None,
                Some(n) => Some(n as usize),
            };
            let b = crate::service::brief::brief(app, &id).await?;
            Ok(super::brief::reply(&b, max))
        }
        "get" => {
            let id = a.req_id("id")?;
            // The arguments are judged after the read, as they always were: a
            // container that does not exist is NOT_FOUND whatever else was sent.
            let (parts, judged) = match get_parts(app, &a, ct) {
                Ok(w) => (w, Ok(())),
                Err(e) => (composed::Want::default(), Err(e)),
            };
            let got = composed::get(app, ct, &id, &parts).await?;
            judged?;
            let mut data = json!({ ct.as_str(): container_json(&got.container) });
            if let Some(sections) = &got.sections {
                let s: Vec<Value> = sections.iter().map(|s| json::section(s, true)).collect();
                data["sections"] = Value::Array(s);
            }
            let mut budget = None;
            if let Some(tc) = &got.graph {
                data["graphContext"] = views::task_context(tc);
                budget = tc
                    .context
                    .as_ref()
                    .and_then(|c| c.budget.as_ref())
                    .map(|b| b.max_tokens);
            }
            if let Some(m) = &got.memory {
                data["memory"] = crate::mcp::memory::task_memory(m);
            }
            if let Some(counts) = &got.counts {
                data["taskCounts"] = json::counts(counts);
            }
            let mut r = Reply::new(format!("{} {id}", ct.as_str()), data);
            if let Some(max) = budget {
                // The budget bounds the whole answer: the task, its sections and
                // memory, and the graph context that gives way.
                views::fit_context(&mut r, max, true, "");
            }
            Ok(r)
        }
        "search" => {
            a.forbid(&["maxTokens"], "to search")?;
            let (limit, offset) = a.page(20)?;
            let q = SearchQuery {
                query: a.str("query", QUERY_MAX)?.filter(|s| !s.is_empty()),
                statuses: statuses(&a, ct.item_kind())?,
                priority: priority(&a)?,
                tags: a.tags("tags")?.unwrap_or_default(),
                project_id: a.id("projectId")?,
                feature_id: a.id("featureId")?,
                limit,
                offset,
            };
            if ct == ContainerType::Project {
                a.forbid(&["priority", "projectId", "featureId"], "to projects")?;
            }
            if ct == ContainerType::Feature {
                a.forbid(&["featureId"], "to features")?;
            }
            let (items, total): (Vec<Value>, i64) = match containers::search(app, ct, &q).await? {
                Page::Projects(p, t) => (p.iter().map(json::project).collect(), t),
                Page::Items(i, t) => (i.iter().map(json::item).collect(), t),
                Page::Ranked(i, t) => (
                    i.iter()
                        .map(|(it, h)| {
                            let mut v = json::item(it);
                            v["score"] = crate::mcp::find::round(h.fused);
                            v["why"] = crate::mcp::find::why(h);
                            v
                        })
                        .collect(),
                    t,
                ),
            };
            let n = items.len();
            Ok(Reply::new(
                format!("{n} of {total} {}(s)", ct.as_str()),
                json!({ "items": items, "total": total, "limit": limit, "offset": offset, "hasMore": offset + (n as i64) < total }),
            ))
        }
        _ => {
            a.forbid(&["maxTokens"], "to overview")?;
            overview(app, &a, ct).await
        }
    }
}

/// The parts a get asks for, judged in the order they always were (the first wrong
/// one is the answer).
fn get_parts(app: &App, a: &Args, ct: ContainerType) -> Result<composed::Want> {
    let sections = a.bool("includeSections")?.unwrap_or(false);
    let graph_context = a.bool("includeGraphContext")?.unwrap_or(false);
    if a.has("maxTokens") && !graph_context {
        return Err(Error::validation(
            "maxTokens",
            "is the budget of includeGraphContext: send includeGraphContext: true with it",
        ));
    }
    let graph = if graph_context {
        if ct != ContainerType::Task {
            return Err(Error::validation(
                "includeGraphContext",
                "applies to tasks only",
            ));
        }
        Some(context::Options {
            changelog_limit: 5,
            // As query_graph context: a budget by default, 0 for everything.
            max_tokens: match a.int("maxTokens", 0, 10_000_000)? {
                None => Some(context::DEFAULT_TOKENS),
                Some(0) => None,
                Some(n) => Some(n),
            },
        })
    } else {
        None
    };
    let memory = a.bool("includeMemory")?.unwrap_or(false);
    if memory {
        if ct != ContainerType::Task {
            return Err(Error::validation("includeMemory", "applies to tasks only"));
        }
        if !app.config.toolsets.iter().any(|t| t == "memory") {
            return Err(Error::validation(
                "includeMemory",
                "needs the memory toolset, which this server does not serve",
            ));
        }
    }
    Ok(composed::Want {
        sections,
        graph,
        memory,
    })
}

async fn overview(app: &App, a: &Args, ct: ContainerType) -> Result<Reply> {
    let id = a.id("id")?;
    if id.is_none() && ct != ContainerType::Project {
        return Err(Error::validation(
            "id",
            "is required for a feature or task overview",
        ));
    }
    match composed::overview(app, ct, id.as_deref()).await? {
        Overview::Projects(ps, total) => {
            let out: Vec<Value> = ps
                .iter()
                .map(|(p, counts)| {
                    json!({ "id": p.id, "name": p.name, "summary": p.summary, "version": p.version,
                    "taskCounts": json::counts(counts) })
                })
                .collect();
            Ok(Reply::new(
                format!("{total} project(s)"),
                json!({ "projects": out, "total": total }),
            ))
        }
        Overview::Project {
            project: p,
            features,
            tasks,
        } => {
            let fs: Vec<Value> = features
                .iter()
                .map(|f| {
                    let mine: Vec<(String, i64)> = count_by_status(
                        tasks
                            .iter()
                            .filter(|t| t.feature_id.as_deref() == Some(&f.id)),
                    );
                    let mut v = json::item_ref(f);
                    v["priority"] = json!(f.priority.as_str());
                    v["taskCounts"] = json::counts(&mine);
                    v
                })
                .collect();
            let loose: Vec<Value> = tasks
                .iter()
                .filter(|t| t.feature_id.is_none())
                .map(json::item_ref)
                .collect();
            Ok(Reply::new(
                format!(
                    "project {}: {} feature(s), {} task(s)",
                    p.name,
                    features.len(),
                    tasks.len()
                ),
                json!({ "project": json::project(&p), "features": fs, "tasksWithoutFeature": loose,
                        "taskCounts": json::counts(&count_by_status(tasks.iter())) }),
            ))
        }
        Overview::Feature { feature: it, tasks } => {
            let ts: Vec<Value> = tasks
                .iter()
                .map(|t| {
                    let mut v = json::item_ref(t);
                    v["priority"] = json!(t.priority.as_str());
                    v["complexity"] = json!(t.complexity);
                    v
                })
                .collect();
            Ok(Reply::new(
                format!("feature {}: {} task(s)", it.name, tasks.len()),
                json!({ "feature": json::item(&it), "tasks": ts, "taskCounts": json::counts(&count_by_status(tasks.iter())) }),
            ))
        }
        Overview::Task { task: it, sections } => {
            let s: Vec<Value> = sections
                .iter()
                .map(|s| json!({ "id": s.id, "title": s.title, "ordinal": s.ordinal }))
                .collect();
            Ok(Reply::new(
                format!("task {}", it.name),
                json!({ "task": json::item(&it), "sections": s }),
            ))
        }
    }
}

fn count_by_status<'a>(items: impl Iterator<Item = &'a crate::domain::Item>) -> Vec<(String, i64)> {
    let mut m: std::collections::BTreeMap<&'static str, i64> = Default::default();
    for i in items {
        *m.entry(i.status.as_str()).or_default() += 1;
    }
    m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

fn fields(a: &Args, ct: ContainerType, creating: bool) -> Result<NewContainer> {
    let name = match ct {
        ContainerType::Task => a.name("title")?.or(a.name("name")?),
        _ => a.name("name")?.or(a.name("title")?),
    };
    let name = match (name, creating) {
        (Some(n), _) => n,
        (None, true) => {
            let k = if ct == ContainerType::Task {
                "title"
            } else {
                "name"
            };
            return Err(Error::validation(
                k,
                format!("is required to create a {}", ct.as_str()),
            ));
        }
        (None, false) => String::new(),
    };
    if ct == ContainerType::Project {
        a.forbid(
            &["priority", "complexity", "projectId", "featureId"],
            "to projects",
        )?;
    }
    if ct == ContainerType::Feature {
        a.forbid(&["complexity", "featureId"], "to features")?;
    }
    Ok(NewContainer {
        name,
        summary: a.str("summary", SUMMARY_MAX)?,
        description: a.str("description", TEXT_MAX)?,
        priority: priority(a)?,
        complexity: a.int("complexity", 1, 10)?,
        project_id: a.id("projectId")?,
        feature_id: a.id("featureId")?,
        tags: a.tags("tags")?,
        related_to: a.ids("relatedTo", 50)?.unwrap_or_default(),
    })
}

pub async fn manage(app: &App, a: Args) -> Result<Reply> {
    let op = a.req_choice("operation", &["create", "update", "delete"])?;
    let ct = container_type(&a)?;
    match op {
        "create" => {
            a.forbid(&["id", "version", "cascade"], "to create")?;
            let n = fields(&a, ct, true)?;
            let c = containers::create(app, ct, n).await?;
            Ok(Reply::new(
                format!("{} created", ct.as_str()),
                json!({ ct.as_str(): container_json(&c) }),
            ))
        }
        "update" => {
            let id = a.req_id("id")?;
            let version = a.req_version("for update")?;
            a.forbid(&["cascade"], "to update")?;
            let p = fields(&a, ct, false)?;
            let (c, touched) = containers::update(app, ct, &id, version, p).await?;
            let mut data = json!({ ct.as_str(): container_json(&c) });
            if !touched.is_empty() {
                data["updated"] = json::touched(&touched);
            }
            Ok(Reply::new(
                format!("{} updated to version {}", ct.as_str(), c.version()),
                data,
            ))
        }
        _ => {
            let id = a.req_id("id")?;
            let d = containers::delete(
                app,
                ct,
                &id,
                a.version()?,
                a.bool("cascade")?.unwrap_or(false),
            )
            .await?;
            Ok(Reply::new(
                format!("{} {id} deleted", ct.as_str()),
                json!({ "id": id, "deleted": true, "deletedFeatures": d.features, "deletedTasks": d.tasks }),
            ))
        }
    }
}
