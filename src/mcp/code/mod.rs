//! The `code` toolset (docs/code.md): a project's repository, taxonomy, entities run
//! through commands, references, staleness analysis, graph validation, and the
//! semantic `search` and `query` (in `semantic`).

pub mod commands;
pub mod semantic;
pub mod track;
pub mod view;

use serde_json::{json, Value};

use crate::domain::code::{EntityFilter, Scope};
use crate::error::{Error, Result};
use crate::mcp::args::{Args, QUERY_MAX, TEXT_MAX};
use crate::mcp::envelope::Reply;
use crate::mcp::schema::{Effect, ToolDef, Ty, P};
use crate::service::code::{self as svc, analysis, entity, overview, refs, validate};
use crate::service::App;

const SCOPE: Ty = Ty::Enum(Scope::NAMES);
const PROJECT: P = P("projectId", Ty::Id, "");
const COMMANDS_DOC: &str = "In order, up to the first failure";

/// A repository-relative path from parameter `k`, checked as text (`repo_fs::relative`).
pub(crate) fn repo_path(k: &str, raw: &str) -> Result<String> {
    crate::repo_fs::relative(raw).map_err(|e| Error::validation(k, e.to_string()))
}

pub const INIT_PROJECT: ToolDef = ToolDef {
    name: "init_project",
    title: "Attach repository",
    toolset: "code",
    description: "Bind a git repository, once, to projectId or a new project called name, with default categories.",
    params: &[
        P("name", Ty::Str, ""),
        P("repoPath", Ty::Str, "Absolute"),
        P("description", Ty::Str, ""),
        P("projectId", Ty::Id, ""),
    ],
    required: &["repoPath"],
    effect: Effect::Additive,
    idempotent: false,
    read_ops: &[],
};

pub const PROJECT_OVERVIEW: ToolDef = ToolDef {
    name: "project_overview",
    title: "Project overview",
    toolset: "code",
    description: "Start here: categories, Domain, Feature and Namespace entities, counts.",
    params: &[
        PROJECT,
        P("outputPath", Ty::Str, "Also as markdown there"),
        P("overwrite", Ty::Bool, "A file not Cairn's"),
        P("includeDescriptions", Ty::Bool, ""),
    ],
    required: &["projectId"],
    effect: Effect::Additive,
    idempotent: true,
    read_ops: &[],
};

pub const CREATE_CATEGORY: ToolDef = ToolDef {
    name: "create_category",
    title: "Create category",
    toolset: "code",
    description: "Add a category at a scope (each scope has defaults).",
    params: &[
        PROJECT,
        P("name", Ty::Str, ""),
        P("scope", SCOPE, ""),
        P("description", Ty::Str, ""),
    ],
    required: &["projectId", "name", "scope"],
    effect: Effect::Additive,
    idempotent: false,
    read_ops: &[],
};

pub const CREATE_ENTITY: ToolDef = ToolDef {
    name: "create_entity",
    title: "Create entity",
    toolset: "code",
    description: "An entity at its categories' scope under higher-scope parentIds (none: Domain only); commands start with an add: text for Domain/Feature, code for Component/Unit, either for Namespace.",
    params: &[
        PROJECT,
        P("name", Ty::Str, ""),
        P("description", Ty::Str, ""),
        P("categoryIds", Ty::List, "Ids or names"),
        P("parentIds", Ty::List, ""),
        P("commands", Ty::Objects(commands::ENTITY_SHAPES), COMMANDS_DOC),
    ],
    required: &["projectId", "name", "description", "categoryIds", "commands"],
    effect: Effect::Additive,
    idempotent: false,
    read_ops: &[],
};

pub const UPDATE_ENTITY: ToolDef = ToolDef {
    name: "update_entity",
    title: "Update entity",
    toolset: "code",
    description: "Change an entity (lists replace) and run create_entity's commands; its last reference goes only after an add.",
    params: &[
        P("entityId", Ty::Id, ""),
        P("version", Ty::Int, ""),
        P("name", Ty::Str, ""),
        P("description", Ty::Str, ""),
        P("categoryIds", Ty::List, ""),
        P("parentIds", Ty::List, ""),
        P("commands", Ty::Objects(&[]), ""),
    ],
    required: &["entityId", "version"],
    effect: Effect::Destructive,
    idempotent: false,
    read_ops: &[],
};

pub const DELETE_ENTITY: ToolDef = ToolDef {
    name: "delete_entity",
    title: "Delete entity",
    toolset: "code",
    description: "Delete a childless entity, its edges, and references only it holds.",
    params: &[P("entityId", Ty::Id, ""), P("version", Ty::Int, "")],
    required: &["entityId", "version"],
    effect: Effect::Destructive,
    idempotent: false,
    read_ops: &[],
};

pub const ALTER_REFERENCES: ToolDef = ToolDef {
    name: "alter_references",
    title: "Alter references",
    toolset: "code",
    description: "Update (re-anchor at HEAD) or delete (refused while attached) references, up to the first failure.",
    params: &[PROJECT, P("commands", Ty::Objects(commands::REFERENCE_SHAPES), "")],
    required: &["projectId", "commands"],
    effect: Effect::Destructive,
    idempotent: false,
    read_ops: &[],
};

pub const GET_ENTITY: ToolDef = ToolDef {
    name: "get_entity",
    title: "Get entity",
    toolset: "code",
    description: "One entity in full, with its edges.",
    params: &[P("entityId", Ty::Id, "")],
    required: &["entityId"],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const FIND_ENTITIES: ToolDef = ToolDef {
    name: "find_entities",
    title: "Find entities",
    toolset: "code",
    description:
        "Entities by the filters (parentId: its children); by documentPath, with their references there.",
    params: &[
        PROJECT,
        P("scope", SCOPE, ""),
        P("categoryId", Ty::Id, ""),
        P("parentId", Ty::Id, ""),
        P("documentPath", Ty::Str, ""),
        P("name", Ty::Str, "Part of the name"),
        P("limit", Ty::Int, "Default 50"),
        P("offset", Ty::Int, ""),
    ],
    required: &["projectId"],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const ANALYZE_DOCUMENT: ToolDef = ToolDef {
    name: "analyze_document",
    title: "Analyze document",
    toolset: "code",
    description: "Documents with changed references (uncommitted too); with documentPath, its references at current lines, stale ones with a fix, and untracked symbols.",
    params: &[
        PROJECT,
        P("documentPath", Ty::Str, ""),
        P("includeTracked", Ty::Bool, ""),
        P("includeUntracked", Ty::Bool, ""),
        P("includeDiffs", Ty::Bool, ""),
        P("maxTokens", Ty::Int, ""),
    ],
    required: &["projectId"],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const VALIDATE_GRAPH: ToolDef = ToolDef {
    name: "validate_graph",
    title: "Validate graph",
    toolset: "code",
    description: "Integrity checks of the entity graph; fix deletes orphans.",
    params: &[
        PROJECT,
        P("fix", Ty::Bool, ""),
        // The eleven check names are in every answer (`summary.checks`); the schema
        // need not list them again.
        P("issueType", Ty::Str, "Only this check"),
        P("limit", Ty::Int, "Default 50"),
        P("offset", Ty::Int, ""),
    ],
    required: &["projectId"],
    effect: Effect::Destructive,
    idempotent: false,
    read_ops: &[],
};

pub const TOOLS: &[&ToolDef] = &[
    &INIT_PROJECT,
    &PROJECT_OVERVIEW,
    &CREATE_CATEGORY,
    &CREATE_ENTITY,
    &track::TRACK_DECLARATIONS,
    &UPDATE_ENTITY,
    &DELETE_ENTITY,
    &ALTER_REFERENCES,
    &GET_ENTITY,
    &FIND_ENTITIES,
    &ANALYZE_DOCUMENT,
    &VALIDATE_GRAPH,
    &semantic::SEARCH,
    &semantic::QUERY,
];

/// Runs one tool of this toolset; `None` when the name is not one of its tools.
pub async fn call(app: &App, name: &str, a: Args) -> Option<Result<Reply>> {
    Some(match name {
        "init_project" => init_project(app, a).await,
        "project_overview" => project_overview(app, a).await,
        "create_category" => create_category(app, a).await,
        "create_entity" => create_entity(app, a).await,
        "update_entity" => update_entity(app, a).await,
        "delete_entity" => delete_entity(app, a).await,
        "alter_references" => alter_references(app, a).await,
        "get_entity" => get_entity(app, a).await,
        "find_entities" => find_entities(app, a).await,
        "analyze_document" => analyze_document(app, a).await,
        "track_declarations" => track::track_declarations(app, a).await,
        "validate_graph" => validate_graph(app, a).await,
        "search" => semantic::search(app, a).await,
        "query" => semantic::query_tool(app, a).await,
        _ => return None,
    })
}

fn path_arg(a: &Args, k: &str) -> Result<String> {
    repo_path(k, &a.req_str(k, 4096)?)
}

async fn init_project(app: &App, a: Args) -> Result<Reply> {
    let repo_path = a.req_str("repoPath", 4096)?;
    let project_id = a.id("projectId")?;
    let name = match (&project_id, a.name("name")?) {
        (_, Some(n)) => n,
        (Some(_), None) => String::new(),
        (None, None) => {
            return Err(Error::validation(
                "name",
                "is required unless projectId names an existing project",
            ))
        }
    };
    let description = a.raw_str("description", TEXT_MAX)?;
    let done = svc::init_project(
        app,
        svc::InitProject {
            name,
            repo_path,
            description,
            project_id,
        },
    )
    .await?;
    let cats: Vec<Value> = done.categories.iter().map(view::category).collect();
    Ok(Reply::new(
        format!(
            "repository {} attached to project {}{}",
            done.repo.repo_path,
            done.project.id,
            if done.created_project {
                " (created)"
            } else {
                ""
            }
        ),
        json!({
            "projectId": done.project.id,
            "name": done.project.name,
            "repoPath": done.repo.repo_path,
            "createdProject": done.created_project,
            "headCommit": done.head,
            "scopes": Scope::NAMES,
            "categories": cats,
            "languageServers": app.lsp.languages().into_iter().map(|(lang, ext, cmd, hint)| match cmd {
                Some(c) => json!({"language": lang, "extension": ext, "server": c}),
                None => json!({"language": lang, "extension": ext, "server": null, "install": hint}),
            }).collect::<Vec<_>>(),
        }),
    ))
}

async fn project_overview(app: &App, a: Args) -> Result<Reply> {
    let pid = a.req_id("projectId")?;
    let out = match a.str("outputPath", 4096)? {
        Some(p) => Some(overview::Output {
            path: repo_path("outputPath", &p)?,
            overwrite: a.bool("overwrite")?.unwrap_or(false),
        }),
        None => None,
    };
    let full = a.bool("includeDescriptions")?.unwrap_or(false);
    let o = overview::overview(app, &pid, out.as_ref()).await?;
    let by = |s: Scope| -> Vec<Value> {
        o.nodes
            .iter()
            .filter(|n| n.entity.scope == s)
            .map(|n| {
                let mut v = view::summary(&n.entity, full);
                v["parentId"] = json!(n.parents.first());
                v["category"] = json!(n.categories.first().map(|c| c.name.clone()));
                v
            })
            .collect()
    };
    let count = |s: Scope| {
        o.by_scope
            .iter()
            .find(|(x, _)| *x == s)
            .map(|c| c.1)
            .unwrap_or(0)
    };
    Ok(Reply::new(
        format!("overview of {}", o.project_name),
        json!({
            "projectName": o.project_name,
            "repoPath": o.repo_path,
            "categories": o.categories.iter().map(view::category).collect::<Vec<_>>(),
            "domains": by(Scope::Domain),
            "features": by(Scope::Feature),
            "namespaces": by(Scope::Namespace),
            "stats": {
                "domains": count(Scope::Domain), "features": count(Scope::Feature),
                "namespaces": count(Scope::Namespace), "components": count(Scope::Component),
                "units": count(Scope::Unit), "references": o.references,
            },
            "keyFiles": o.key_files.iter().map(|(p, n)| json!({"documentPath": p, "references": n})).collect::<Vec<_>>(),
            "skillPath": o.written,
        }),
    ))
}

async fn create_category(app: &App, a: Args) -> Result<Reply> {
    let pid = a.req_id("projectId")?;
    let name = a
        .name("name")?
        .ok_or_else(|| Error::validation("name", "is required"))?;
    let scope = Scope::parse(a.req_choice("scope", Scope::NAMES)?)
        .ok_or_else(|| Error::validation("scope", "unknown"))?;
    let c =
        svc::create_category(app, &pid, scope, &name, a.raw_str("description", TEXT_MAX)?).await?;
    Ok(Reply::new(
        format!("category '{}' created at {}", c.name, scope.as_str()),
        json!({ "category": view::category(&c) }),
    ))
}

fn required_text(a: &Args, k: &str) -> Result<String> {
    match a.raw_str(k, TEXT_MAX)? {
        Some(s) if !s.trim().is_empty() => Ok(s),
        Some(_) => Err(Error::validation(k, "must not be empty")),
        None => Err(Error::validation(k, "is required")),
    }
}

/// The `{entity, executed, failed, skipped}` answer of a command run; a failure
/// is answered as an error envelope that still carries this data.
fn run_reply(
    what: &str,
    entity: Option<Value>,
    raw: &[serde_json::Map<String, Value>],
    run: refs::Run<crate::domain::code::Reference>,
    extra: Option<(&str, Value)>,
) -> Reply {
    let executed: Vec<Value> = run
        .executed
        .iter()
        .map(|(i, r)| {
            let mut v = json!({ "index": i, "command": raw.get(*i).cloned().map(Value::Object) });
            if let Some(r) = r {
                v["referenceId"] = json!(r.id);
                v["reference"] = view::reference(r);
            }
            v
        })
        .collect();
    let failed = run.failed.as_ref().map(|(i, e)| {
        json!({
            "index": i,
            "command": raw.get(*i).cloned().map(Value::Object),
            "code": e.code(),
            "error": e.to_string(),
            "context": crate::mcp::envelope::details(e),
        })
    });
    let skipped: Vec<Value> = run
        .skipped
        .iter()
        .map(|i| json!({ "index": i, "command": raw.get(*i).cloned().map(Value::Object) }))
        .collect();
    let mut data =
        json!({ "entity": entity, "executed": executed, "failed": failed, "skipped": skipped });
    if let Some((k, v)) = extra {
        data[k] = v;
    }
    match run.failed {
        Some((i, e)) => {
            let msg = format!("{what}: command {i} failed: {e}");
            let e = match e {
                Error::Validation { parameter, .. } => Error::Validation {
                    message: msg,
                    parameter,
                },
                Error::ValidationDetails {
                    parameter, details, ..
                } => Error::ValidationDetails {
                    message: msg,
                    parameter,
                    details,
                },
                Error::NotFound { .. }
                | Error::NotFoundNear { .. }
                | Error::Conflict { .. }
                | Error::Forbidden { .. } => e,
                Error::Invariant { details, .. } => Error::Invariant {
                    message: msg,
                    details,
                },
                Error::InvalidOperation { details, .. } => Error::InvalidOperation {
                    message: msg,
                    details,
                },
                Error::Blocked { details, .. } => Error::Blocked {
                    message: msg,
                    details,
                },
                e @ (Error::Busy | Error::StorageFull | Error::ReadOnly | Error::Unexpected(_)) => {
                    e
                }
            };
            Reply::partial(e, data)
        }
        None => Reply::new(
            format!("{what}: {} command(s) executed", run.executed.len()),
            data,
        ),
    }
}

async fn create_entity(app: &App, a: Args) -> Result<Reply> {
    let pid = a.req_id("projectId")?;
    let name = a
        .name("name")?
        .ok_or_else(|| Error::validation("name", "is required"))?;
    let description = required_text(&a, "description")?;
    // Ids or names: the service resolves names within the project.
    let category_ids = a.list("categoryIds")?.unwrap_or_default();
    if category_ids.is_empty() {
        return Err(Error::validation(
            "categoryIds",
            "at least one category is required: entities cannot be unclassified",
        ));
    }
    let parent_ids = commands::id_list(&a, "parentIds")?.unwrap_or_default();
    let raw = a
        .objects("commands", commands::MAX_COMMANDS)?
        .ok_or_else(|| Error::validation("commands", "is required: at least one add command"))?;
    let cmds = commands::entity_commands(raw.clone())?;
    let out = entity::create(
        app,
        entity::NewEntity {
            project_id: pid,
            name,
            description,
            category_ids,
            parent_ids,
        },
        cmds,
    )
    .await?;
    let ent = match &out.entity {
        Some(e) => Some(entity_with_refs(app, &e.id).await?),
        None => None,
    };
    Ok(run_reply("create_entity", ent, &raw, out.run, None))
}

async fn entity_with_refs(app: &App, id: &str) -> Result<Value> {
    let v = svc::get_entity(app, id).await?;
    let mut e = view::entity(&v.entity);
    e["categories"] = json!(v.categories.iter().map(view::category).collect::<Vec<_>>());
    e["parentIds"] = json!(v.parents.iter().map(|p| p.id.clone()).collect::<Vec<_>>());
    e["referenceIds"] = json!(v
        .references
        .iter()
        .map(|r| r.id.clone())
        .collect::<Vec<_>>());
    Ok(e)
}

async fn update_entity(app: &App, a: Args) -> Result<Reply> {
    let id = a.req_id("entityId")?;
    let version = a.req_version("to update an entity")?;
    let raw = a
        .objects("commands", commands::MAX_COMMANDS)?
        .unwrap_or_default();
    let cmds = commands::entity_commands(raw.clone())?;
    let description = match a.raw_str("description", TEXT_MAX)? {
        Some(s) if s.trim().is_empty() => {
            return Err(Error::validation("description", "must not be empty"))
        }
        other => other,
    };
    let category_ids = a.list("categoryIds")?;
    if category_ids.as_ref().is_some_and(Vec::is_empty) {
        return Err(Error::validation(
            "categoryIds",
            "cannot be emptied: entities cannot be unclassified",
        ));
    }
    let out = entity::update(
        app,
        entity::EntityChange {
            id,
            version,
            name: a.name("name")?,
            description,
            category_ids,
            parent_ids: commands::id_list(&a, "parentIds")?,
        },
        cmds,
    )
    .await?;
    let ent = match &out.entity {
        Some(e) => Some(entity_with_refs(app, &e.id).await?),
        None => None,
    };
    Ok(run_reply("update_entity", ent, &raw, out.run, None))
}

async fn delete_entity(app: &App, a: Args) -> Result<Reply> {
    let id = a.req_id("entityId")?;
    let version = a.req_version("to delete an entity")?;
    let d = svc::delete_entity(app, &id, version).await?;
    Ok(Reply::new(
        format!("entity {id} deleted"),
        json!({ "id": id, "deletedReferenceIds": d.references }),
    ))
}

async fn alter_references(app: &App, a: Args) -> Result<Reply> {
    let pid = a.req_id("projectId")?;
    let raw = a
        .objects("commands", commands::MAX_COMMANDS)?
        .ok_or_else(|| Error::validation("commands", "is required"))?;
    if raw.is_empty() {
        return Err(Error::validation(
            "commands",
            "is empty: give at least one update or delete",
        ));
    }
    let cmds = commands::reference_commands(raw.clone())?;
    let (run, head) = refs::alter_references(app, &pid, &cmds).await?;
    let mut r = run_reply(
        "alter_references",
        None,
        &raw,
        run,
        Some(("commitSha", json!(head))),
    );
    if let Some(m) = r.data.as_object_mut() {
        m.remove("entity");
    }
    Ok(r)
}

async fn get_entity(app: &App, a: Args) -> Result<Reply> {
    let id = a.req_id("entityId")?;
    let v = svc::get_entity(app, &id).await?;
    Ok(Reply::new(
        format!("entity {}", v.entity.name),
        entity_view(&v),
    ))
}

/// `get_entity`'s answer; the entity's resource (`mcp::resources`) serves it too.
fn entity_view(v: &svc::EntityView) -> Value {
    let relations: Vec<Value> = v
        .edges
        .iter()
        .map(|e| {
            let mut x = json!({
                "type": e.kind, "direction": if e.outgoing { "out" } else { "in" },
                "entity": view::entity_ref(&e.other),
            });
            if let Some(n) = &e.note {
                x["note"] = json!(n);
            }
            x
        })
        .collect();
    json!({
        "entity": view::entity(&v.entity),
        "categories": v.categories.iter().map(view::category).collect::<Vec<_>>(),
        "references": v.references.iter().map(view::reference).collect::<Vec<_>>(),
        "parents": v.parents.iter().map(view::entity_ref).collect::<Vec<_>>(),
        "children": v.children.iter().map(view::entity_ref).collect::<Vec<_>>(),
        "relations": relations,
    })
}

/// An entity as its resource serves it: `get_entity`'s answer, each reference with
/// the lines its code is at now (`currentStartLine`, `currentEndLine`: the recorded
/// ones, or where the code moved since, as the page shows them).
pub async fn entity_resource(app: &App, id: &str) -> Result<Value> {
    let v = svc::get_entity(app, id).await?;
    let mut data = entity_view(&v);
    let now =
        crate::service::code::analysis::current_of(app, &v.entity.project_id, &v.references).await;
    if let Some(refs) = data["references"].as_array_mut() {
        for ((out, r), now) in refs.iter_mut().zip(&v.references).zip(now) {
            let (from, to) = now.unwrap_or((r.start_line, r.end_line));
            out["currentStartLine"] = json!(from);
            out["currentEndLine"] = json!(to);
        }
    }
    Ok(data)
}

async fn find_entities(app: &App, a: Args) -> Result<Reply> {
    let pid = a.req_id("projectId")?;
    let scope = a.choice("scope", Scope::NAMES)?.and_then(Scope::parse);
    let cat = a.id("categoryId")?;
    let parent = a.id("parentId")?;
    let doc = match a.str("documentPath", 4096)? {
        Some(p) => Some(repo_path("documentPath", &p)?),
        None => None,
    };
    let name = a.str("name", QUERY_MAX)?.filter(|s| !s.is_empty());
    let (limit, offset) = a.page(50)?;
    let f = EntityFilter {
        project_id: &pid,
        scope,
        category_id: cat.as_deref(),
        parent_id: parent.as_deref(),
        document_path: doc.as_deref(),
        name: name.as_deref(),
        limit,
        offset,
    };
    let (items, total) = svc::find_entities(app, &f).await?;
    // Entities found by their document come with their references there: one tool
    // answers both "what is in this file" and "where in it".
    let refs = match &doc {
        Some(path) => svc::document_entities(app, &pid, path).await?,
        None => Vec::new(),
    };
    let n = items.len() as i64;
    let items: Vec<Value> = items
        .iter()
        .map(|(e, cats)| {
            let mut v = view::summary(e, false);
            v["version"] = json!(e.version);
            v["categories"] = json!(cats.iter().map(|c| c.name.clone()).collect::<Vec<_>>());
            if let Some((_, mine)) = refs.iter().find(|(x, _)| x.id == e.id) {
                v["references"] = json!(mine.iter().map(view::reference).collect::<Vec<_>>());
            }
            v
        })
        .collect();
    Ok(Reply::new(
        format!("{n} of {total} entit(ies)"),
        json!({ "items": items, "total": total, "limit": limit, "offset": offset, "hasMore": offset + n < total }),
    ))
}

async fn changed_files(app: &App, a: Args) -> Result<Reply> {
    let pid = a.req_id("projectId")?;
    let (files, docs) = analysis::changed_files(app, &pid).await?;
    let items: Vec<Value> = files
        .iter()
        .map(|f| {
            let mut v = json!({
                "documentPath": f.document_path, "references": f.references,
                "staleCount": f.stale, "movedCount": f.moved, "missing": f.missing,
            });
            if let Some(t) = &f.renamed_to {
                v["renamedTo"] = json!(t);
            }
            v
        })
        .collect();
    Ok(Reply::new(
        format!("{} of {docs} referenced document(s) changed", items.len()),
        json!({ "files": items, "documentsChecked": docs }),
    ))
}

async fn analyze_document(app: &App, a: Args) -> Result<Reply> {
    // Which documents to analyze, then one of them: one tool, as an agent uses them.
    if !a.has("documentPath") {
        a.forbid(
            &[
                "includeTracked",
                "includeUntracked",
                "includeDiffs",
                "maxTokens",
            ],
            "without documentPath (they shape one document's analysis)",
        )?;
        return changed_files(app, a).await;
    }
    let pid = a.req_id("projectId")?;
    let path = path_arg(&a, "documentPath")?;
    let tracked = a.bool("includeTracked")?.unwrap_or(true);
    let untracked = a.bool("includeUntracked")?.unwrap_or(true);
    let diffs = a.bool("includeDiffs")?.unwrap_or(true);
    let max_tokens = a.int("maxTokens", 1, 10_000_000)?.unwrap_or(4000) as usize;
    let an = analysis::analyze(app, &pid, &path, untracked).await?;
    let stale = an.tracked.iter().filter(|t| t.reason.is_some()).count();
    let moved = an.tracked.iter().filter(|t| t.moved()).count();
    let none: Vec<(String, String, String)> = vec![];
    let mut ents: Vec<Value> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for t in &an.tracked {
        for (id, name, scope) in an.holders.get(&t.reference.id).unwrap_or(&none) {
            if seen.insert(id.clone()) {
                ents.push(json!({"id": id, "name": name, "scope": scope}));
            }
        }
    }
    let mut data = json!({
        "documentPath": an.document_path,
        "documentType": an.document_type,
        "currentCommit": an.current_commit,
        "exists": an.exists,
        "entities": ents,
        "summary": {
            "trackedCount": an.tracked.len(), "staleCount": stale,
            "untrackedCount": an.untracked.len(), "movedCount": moved,
        },
    });
    if tracked {
        data["tracked"] = Value::Array(
            an.tracked
                .iter()
                .map(|t| view::tracked(t, an.holders.get(&t.reference.id).unwrap_or(&none), diffs))
                .collect(),
        );
    }
    if diffs {
        data["diffHunks"] = Value::Array(an.hunks.iter().map(|h| view::hunk(h, true)).collect());
    }
    if untracked {
        // The untracked list fills what the budget leaves (characters / 4); the rest
        // is counted, not sent.
        let mut room = (max_tokens * 4).saturating_sub(data.to_string().len() + 64);
        let mut list = Vec::new();
        for s in &an.untracked {
            let v = view::symbol(s);
            let n = v.to_string().len() + 1;
            if n > room {
                break;
            }
            room -= n;
            list.push(v);
        }
        data["summary"]["untrackedOmitted"] = json!(an.untracked.len() - list.len());
        data["untracked"] = Value::Array(list);
    }
    match (&an.lsp, &an.lsp_error) {
        (_, Some(e)) => data["lspError"] = json!(e),
        (Some(cmd), None) => data["languageServer"] = json!(cmd),
        _ => {}
    }
    Ok(Reply::new(
        format!(
            "{path}: {} tracked, {stale} stale, {} untracked",
            an.tracked.len(),
            an.untracked.len()
        ),
        data,
    ))
}

async fn validate_graph(app: &App, a: Args) -> Result<Reply> {
    let pid = a.req_id("projectId")?;
    let fix = a.bool("fix")?.unwrap_or(false);
    let only = a.choice("issueType", validate::CHECKS)?;
    let (limit, offset) = a.page(50)?;
    let mut issues = validate::validate(app, &pid, fix).await?;
    let mut by_type = serde_json::Map::new();
    for i in &issues {
        let n = by_type.get(i.kind).and_then(Value::as_i64).unwrap_or(0);
        by_type.insert(i.kind.to_string(), json!(n + 1));
    }
    let total_all = issues.len();
    let errors = issues.iter().filter(|i| i.error).count();
    let fixed = issues.iter().filter(|i| i.fixed).count();
    if let Some(t) = only {
        issues.retain(|i| i.kind == t);
    }
    let total = issues.len() as i64;
    let page: Vec<Value> = issues
        .iter()
        .skip(offset as usize)
        .take(limit as usize)
        .map(|i| {
            json!({
                "type": i.kind, "severity": if i.error { "error" } else { "warning" },
                "entityId": i.entity_id, "referenceId": i.reference_id,
                "message": i.message, "fixable": i.fixable, "fixed": i.fixed,
            })
        })
        .collect();
    let n = page.len() as i64;
    Ok(Reply::new(
        format!("{total_all} issue(s), {fixed} fixed"),
        json!({
            "valid": total_all == fixed,
            "issues": page,
            "pagination": { "offset": offset, "limit": limit, "returned": n, "hasMore": offset + n < total },
            "summary": {
                "totalIssues": total_all, "byType": by_type, "errors": errors,
                "warnings": total_all - errors, "fixed": fixed, "checks": validate::CHECKS,
            },
        }),
    ))
}
