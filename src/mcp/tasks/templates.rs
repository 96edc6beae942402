//! `query_templates`, `manage_template`, `apply_template`, and the tag tools.

use serde_json::{json, Value};

use crate::domain::section::TemplateFilter as Filter;
use crate::domain::{ContainerType, ContentFormat, TemplateSection};
use crate::error::{Error, Result};
use crate::mcp::args::{Args, CONTENT_MAX, SUMMARY_MAX, TEXT_MAX};
use crate::mcp::envelope::Reply;
use crate::mcp::json;
use crate::mcp::schema::{Effect, ToolDef, Ty, P};
use crate::service::templates::{self, NewTemplate};
use crate::service::{tags, App};

const TARGETS: [&str; 3] = ["PROJECT", "FEATURE", "TASK"];

pub const QUERY_TEMPLATES: ToolDef = ToolDef {
    name: "query_templates",
    title: "Query templates",
    toolset: "tasks",
    description: "Section blueprints: get (id), list (default; by the filters).",
    params: &[
        P("operation", Ty::Enum(&["get", "list"]), ""),
        P("id", Ty::Id, ""),
        P("includeSections", Ty::Bool, ""),
        P("targetEntityType", Ty::Str, ""),
        P("isBuiltIn", Ty::Bool, ""),
        P("isEnabled", Ty::Bool, ""),
        P("tags", Ty::StrOrList, ""),
    ],
    // The port requires `operation`; Cairn lists when it is left out, so every call the
    // port accepts is still accepted and `query_templates {}` answers the templates.
    required: &[],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const MANAGE_TEMPLATE: ToolDef = ToolDef {
    name: "manage_template",
    title: "Manage templates",
    toolset: "tasks",
    description: "Create (name, targetEntityType), update, delete, enable, disable (built-ins: disable only), addSection.",
    params: &[
        P("operation", Ty::Enum(&["create", "update", "delete", "enable", "disable", "addSection"]), ""),
        P("id", Ty::Id, ""),
        P("name", Ty::Str, ""),
        P("description", Ty::Str, ""),
        P("targetEntityType", Ty::Str, ""),
        P("isBuiltIn", Ty::Bool, "Only false"),
        P("isProtected", Ty::Bool, ""),
        P("createdBy", Ty::Str, ""),
        P("tags", Ty::StrOrList, ""),
        P("title", Ty::Str, ""),
        P("usageDescription", Ty::Str, ""),
        P("contentSample", Ty::Str, ""),
        P("contentFormat", Ty::Str, ""),
        P("isRequired", Ty::Bool, ""),
        P("ordinal", Ty::Int, ""),
        P("version", Ty::Int, ""),
    ],
    required: &["operation"],
    effect: Effect::Destructive,
    idempotent: false,
    read_ops: &[],
};

pub const APPLY_TEMPLATE: ToolDef = ToolDef {
    name: "apply_template",
    title: "Apply template",
    toolset: "tasks",
    description: "Add an enabled template's sections to a container, but titles it has.",
    params: &[
        P("templateId", Ty::Id, ""),
        P("entityType", Ty::Enum(&TARGETS), ""),
        P("entityId", Ty::Id, ""),
    ],
    required: &["templateId", "entityType", "entityId"],
    effect: Effect::Additive,
    idempotent: true,
    read_ops: &[],
};

pub const LIST_TAGS: ToolDef = ToolDef {
    name: "list_tags",
    title: "List tags",
    toolset: "tasks",
    description: "Tags in use, counted per entity type.",
    params: &[P("entityType", Ty::Str, "")],
    required: &[],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const GET_TAG_USAGE: ToolDef = ToolDef {
    name: "get_tag_usage",
    title: "Tag usage",
    toolset: "tasks",
    description: "Every item carrying a tag.",
    params: &[P("tag", Ty::Str, "")],
    required: &["tag"],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const RENAME_TAG: ToolDef = ToolDef {
    name: "rename_tag",
    title: "Rename tag",
    toolset: "tasks",
    description: "Rename a tag everywhere, merging where both are held.",
    params: &[
        P("oldTag", Ty::Str, ""),
        P("newTag", Ty::Str, ""),
        P("dryRun", Ty::Bool, ""),
    ],
    required: &["oldTag", "newTag"],
    effect: Effect::Destructive,
    idempotent: true,
    read_ops: &[],
};

fn target(a: &Args) -> Result<Option<String>> {
    Ok(a.choice("targetEntityType", &TARGETS)?.map(str::to_string))
}

pub async fn query(app: &App, a: Args) -> Result<Reply> {
    match a.choice("operation", &["get", "list"])?.unwrap_or("list") {
        "get" => {
            let id = a.req_id("id")?;
            let (t, s) = templates::get(app, &id).await?;
            let mut data = json!({ "template": json::template(&t) });
            if a.bool("includeSections")?.unwrap_or(false) {
                data["sections"] = Value::Array(s.iter().map(json::template_section).collect());
            }
            Ok(Reply::new(format!("template {}", t.name), data))
        }
        _ => {
            let tags = a.tags("tags")?.unwrap_or_default();
            let target = target(&a)?;
            let f = Filter {
                target: target.as_deref(),
                built_in: a.bool("isBuiltIn")?,
                enabled: a.bool("isEnabled")?,
                tags: &tags,
            };
            let list = templates::list(app, &f).await?;
            let out: Vec<Value> = list.iter().map(json::template).collect();
            Ok(Reply::new(
                format!("{} template(s)", out.len()),
                json!({ "templates": out }),
            ))
        }
    }
}

pub async fn manage(app: &App, a: Args) -> Result<Reply> {
    let op = a.req_choice(
        "operation",
        &[
            "create",
            "update",
            "delete",
            "enable",
            "disable",
            "addSection",
        ],
    )?;
    if a.bool("isBuiltIn")? == Some(true) {
        return Err(Error::validation(
            "isBuiltIn",
            "only Cairn ships built-in templates; leave it out or false",
        ));
    }
    if op != "addSection" {
        a.forbid(
            &[
                "title",
                "usageDescription",
                "contentSample",
                "contentFormat",
                "isRequired",
                "ordinal",
            ],
            "except to addSection",
        )?;
    }
    let fields = |creating: bool| -> Result<NewTemplate> {
        let name = a.name("name")?;
        if creating && name.is_none() {
            return Err(Error::validation(
                "name",
                "is required to create a template",
            ));
        }
        Ok(NewTemplate {
            name: name.unwrap_or_default(),
            description: a.str("description", TEXT_MAX)?,
            target: target(&a)?,
            is_protected: a.bool("isProtected")?,
            created_by: a.name("createdBy")?,
            tags: a.tags("tags")?,
        })
    };
    match op {
        "create" => {
            a.forbid(&["id", "version"], "to create")?;
            let t = templates::create(app, fields(true)?).await?;
            Ok(Reply::new(
                "template created",
                json!({ "template": json::template(&t) }),
            ))
        }
        "update" => {
            let id = a.req_id("id")?;
            let t = templates::update(app, &id, a.version()?, fields(false)?).await?;
            Ok(Reply::new(
                format!("template updated to version {}", t.version),
                json!({ "template": json::template(&t) }),
            ))
        }
        "delete" => {
            let id = a.req_id("id")?;
            templates::delete(app, &id, a.version()?).await?;
            Ok(Reply::new(
                format!("template {id} deleted"),
                json!({ "id": id, "deleted": true }),
            ))
        }
        "enable" | "disable" => {
            let id = a.req_id("id")?;
            let on = op == "enable";
            let t = templates::modify(app, &id, a.version()?, |t| {
                t.is_enabled = on;
                Ok(())
            })
            .await?;
            Ok(Reply::new(
                format!("template {}d", op),
                json!({ "template": json::template(&t) }),
            ))
        }
        _ => {
            let id = a.req_id("id")?;
            let s = TemplateSection {
                id: String::new(),
                template_id: id.clone(),
                title: a
                    .name("title")?
                    .ok_or_else(|| Error::validation("title", "is required for addSection"))?,
                usage_description: a.str("usageDescription", SUMMARY_MAX)?.unwrap_or_default(),
                content_sample: a.raw_str("contentSample", CONTENT_MAX)?.unwrap_or_default(),
                content_format: a
                    .choice("contentFormat", &ContentFormat::NAMES)?
                    .unwrap_or("MARKDOWN")
                    .to_string(),
                is_required: a.bool("isRequired")?.unwrap_or(false),
                ordinal: a.int("ordinal", 0, 1_000_000)?.unwrap_or(-1),
            };
            let (s, version) = templates::add_section(app, &id, s).await?;
            Ok(Reply::new(
                format!("template section added; the template is at version {version}"),
                json!({ "section": json::template_section(&s), "templateVersion": version }),
            ))
        }
    }
}

pub async fn apply(app: &App, a: Args) -> Result<Reply> {
    let tid = a.req_id("templateId")?;
    let ct = ContainerType::parse(a.req_choice("entityType", &TARGETS)?)
        .ok_or_else(|| Error::validation("entityType", "unknown"))?;
    let eid = a.req_id("entityId")?;
    let (created, skipped) = templates::apply(app, &tid, ct, &eid).await?;
    let out: Vec<Value> = created.iter().map(|s| json::section(s, true)).collect();
    let mut data = json!({ "sections": out });
    let mut message = format!("{} section(s) added", out.len());
    if !skipped.is_empty() {
        message.push_str(&format!(
            "; {} already present, skipped: {}",
            skipped.len(),
            skipped.join(", ")
        ));
        data["skipped"] = json!(skipped);
    }
    Ok(Reply::new(message, data))
}

fn tag_arg(a: &Args, k: &str) -> Result<String> {
    let raw = a.req_str(k, 256)?;
    let mut t = crate::domain::container::normalize_tags(k, &[raw])?;
    t.pop()
        .ok_or_else(|| Error::validation(k, "must not be empty"))
}

pub async fn list_tags(app: &App, a: Args) -> Result<Reply> {
    let et = a.choice(
        "entityType",
        &["PROJECT", "FEATURE", "TASK", "SECTION", "TEMPLATE"],
    )?;
    let rows = tags::list(app, et).await?;
    let mut out: Vec<Value> = Vec::new();
    for (tag, et, n) in rows {
        match out.last_mut() {
            Some(last) if last["tag"] == json!(tag) => {
                last["count"] = json!(last["count"].as_i64().unwrap_or(0) + n);
                last["byType"][et] = json!(n);
            }
            _ => out.push(json!({ "tag": tag, "count": n, "byType": { et: n } })),
        }
    }
    Ok(Reply::new(
        format!("{} tag(s)", out.len()),
        json!({ "tags": out }),
    ))
}

pub async fn tag_usage(app: &App, a: Args) -> Result<Reply> {
    let t = tag_arg(&a, "tag")?;
    let rows = tags::usage(app, &t).await?;
    let out: Vec<Value> = rows
        .iter()
        .map(|(et, id, name)| json!({ "entityType": et, "id": id, "name": name }))
        .collect();
    Ok(Reply::new(
        format!("tag '{t}' is on {} entit(ies)", out.len()),
        json!({ "tag": t, "entities": out }),
    ))
}

pub async fn rename_tag(app: &App, a: Args) -> Result<Reply> {
    let old = tag_arg(&a, "oldTag")?;
    let new = tag_arg(&a, "newTag")?;
    let dry = a.bool("dryRun")?.unwrap_or(false);
    let rows = tags::rename(app, &old, &new, dry).await?;
    let out: Vec<Value> = rows
        .iter()
        .map(|(et, id, name)| json!({ "entityType": et, "id": id, "name": name }))
        .collect();
    let verb = if dry { "would rename" } else { "renamed" };
    Ok(Reply::new(
        format!("{verb} '{old}' to '{new}' on {} entit(ies)", out.len()),
        json!({ "oldTag": old, "newTag": new, "dryRun": dry, "affected": out.len(), "entities": out }),
    ))
}
