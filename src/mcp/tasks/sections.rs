//! `query_sections` and `manage_sections`: titled blocks of content on containers.

use serde_json::{json, Value};

use crate::domain::{ContainerType, ContentFormat};
use crate::error::{Error, Result};
use crate::mcp::args::{Args, CONTENT_MAX, SUMMARY_MAX};
use crate::mcp::envelope::Reply;
use crate::mcp::json;
use crate::mcp::schema::{Effect, ToolDef, Ty, P};
use crate::service::sections::{self, NewSection};
use crate::service::App;

const ENTITY: Ty = Ty::Enum(&["PROJECT", "FEATURE", "TASK"]);
/// At most this many sections in one bulk call.
const BULK_MAX: usize = 100;

pub const QUERY_SECTIONS: ToolDef = ToolDef {
    name: "query_sections",
    title: "Query sections",
    toolset: "tasks",
    description: "A container's sections in order; includeContent=false: titles only.",
    params: &[
        P("entityType", ENTITY, ""),
        P("entityId", Ty::Id, ""),
        P("includeContent", Ty::Bool, "Default true"),
        P("tags", Ty::StrOrList, ""),
        P("sectionIds", Ty::StrOrList, ""),
    ],
    required: &["entityType", "entityId"],
    effect: Effect::ReadOnly,
    idempotent: true,
    read_ops: &[],
};

pub const MANAGE_SECTIONS: ToolDef = ToolDef {
    name: "manage_sections",
    title: "Manage sections",
    toolset: "tasks",
    description: "Write sections, all or nothing: add, update, updateText, delete (sectionId), reorder (orderedIds), bulkCreate, bulkDelete.",
    params: &[
        P("operation", Ty::Enum(&["add", "update", "updateText", "delete", "reorder", "bulkCreate", "bulkDelete"]), ""),
        P("entityType", ENTITY, ""),
        P("entityId", Ty::Id, ""),
        P("sectionId", Ty::Id, ""),
        P("title", Ty::Str, ""),
        P("usageDescription", Ty::Str, ""),
        P("content", Ty::Str, ""),
        P("contentFormat", Ty::Enum(&ContentFormat::NAMES), ""),
        P("tags", Ty::StrOrList, ""),
        P("ordinal", Ty::Int, ""),
        P("version", Ty::Int, ""),
        P("orderedIds", Ty::StrOrList, ""),
        P("sections", Ty::Bulk, "JSON array of add's fields"),
        P("sectionIds", Ty::StrOrList, ""),
    ],
    required: &["operation"],
    effect: Effect::Destructive,
    idempotent: false,
    read_ops: &[],
};

fn entity(a: &Args) -> Result<(ContainerType, String)> {
    let t = a.req_choice("entityType", &["PROJECT", "FEATURE", "TASK"])?;
    let ct = ContainerType::parse(t).ok_or_else(|| Error::validation("entityType", "unknown"))?;
    Ok((ct, a.req_id("entityId")?))
}

fn format_of(a: &Args) -> Result<Option<String>> {
    Ok(a.choice("contentFormat", &ContentFormat::NAMES)?
        .map(str::to_string))
}

pub async fn query(app: &App, a: Args) -> Result<Reply> {
    let (ct, id) = entity(&a)?;
    let include = a.bool("includeContent")?.unwrap_or(true);
    let tags = a.tags("tags")?.unwrap_or_default();
    let ids = a.ids("sectionIds", 500)?.unwrap_or_default();
    let list = sections::list(app, ct, &id, &tags, &ids).await?;
    let out: Vec<Value> = list.iter().map(|s| json::section(s, include)).collect();
    Ok(Reply::new(
        format!("{} section(s)", out.len()),
        json!({ "sections": out }),
    ))
}

/// The fields of one element of a `sections` array.
const BULK_ITEM: &[P] = &[
    P("title", Ty::Str, ""),
    P("usageDescription", Ty::Str, ""),
    P("content", Ty::Str, ""),
    P("contentFormat", Ty::Enum(&ContentFormat::NAMES), ""),
    P("ordinal", Ty::Int, ""),
    P("tags", Ty::StrOrList, ""),
];

/// One element of a `sections` JSON array for bulkCreate.
fn bulk_item(i: usize, v: &Value) -> Result<NewSection> {
    let param = format!("sections[{i}]");
    let Value::Object(m) = v else {
        return Err(Error::validation(
            &param,
            "expected an object with title and content",
        ));
    };
    let a = Args::new(Some(m.clone()), BULK_ITEM)
        .map_err(|e| Error::validation(&param, e.to_string()))?;
    let wrap = |e: Error| Error::validation(&param, e.to_string());
    Ok(NewSection {
        title: a
            .name("title")
            .map_err(wrap)?
            .ok_or_else(|| Error::validation(&param, "title is required"))?,
        usage_description: a.str("usageDescription", SUMMARY_MAX).map_err(wrap)?,
        content: a.raw_str("content", CONTENT_MAX).map_err(wrap)?,
        content_format: format_of(&a).map_err(wrap)?,
        ordinal: a.int("ordinal", 0, 1_000_000).map_err(wrap)?,
        tags: a.tags("tags").map_err(wrap)?,
    })
}

fn new_section(a: &Args, creating: bool) -> Result<NewSection> {
    let title = a.name("title")?;
    if creating && title.is_none() {
        return Err(Error::validation("title", "is required to add a section"));
    }
    Ok(NewSection {
        title: title.unwrap_or_default(),
        usage_description: a.str("usageDescription", SUMMARY_MAX)?,
        content: a.raw_str("content", CONTENT_MAX)?,
        content_format: format_of(a)?,
        ordinal: a.int("ordinal", 0, 1_000_000)?,
        tags: a.tags("tags")?,
    })
}

pub async fn manage(app: &App, a: Args) -> Result<Reply> {
    let ops = [
        "add",
        "update",
        "updateText",
        "delete",
        "reorder",
        "bulkCreate",
        "bulkDelete",
    ];
    let op = a.req_choice("operation", &ops)?;
    match op {
        "add" => {
            let (ct, id) = entity(&a)?;
            let n = new_section(&a, true)?;
            let mut s = sections::add(app, ct, &id, vec![n]).await?;
            let s = s
                .pop()
                .ok_or_else(|| Error::Internal("section not created".into()))?;
            Ok(Reply::new(
                "section added",
                json!({ "section": json::section(&s, true) }),
            ))
        }
        "update" | "updateText" => {
            let id = a.req_id("sectionId")?;
            let version = a.req_version("for update")?;
            let p = if op == "updateText" {
                a.forbid(
                    &[
                        "title",
                        "usageDescription",
                        "contentFormat",
                        "ordinal",
                        "tags",
                    ],
                    "to updateText (content only)",
                )?;
                let content = a
                    .raw_str("content", CONTENT_MAX)?
                    .ok_or_else(|| Error::validation("content", "is required"))?;
                NewSection {
                    content: Some(content),
                    ..Default::default()
                }
            } else {
                new_section(&a, false)?
            };
            let s = sections::update(app, &id, version, p).await?;
            Ok(Reply::new(
                format!("section updated to version {}", s.version),
                json!({ "section": json::section(&s, true) }),
            ))
        }
        "delete" => {
            let id = a.req_id("sectionId")?;
            sections::delete(app, std::slice::from_ref(&id), a.version()?).await?;
            Ok(Reply::new(
                format!("section {id} deleted"),
                json!({ "id": id, "deleted": true }),
            ))
        }
        "bulkDelete" => {
            let ids = a
                .ids("sectionIds", BULK_MAX)?
                .filter(|v| !v.is_empty())
                .ok_or_else(|| Error::validation("sectionIds", "is required"))?;
            sections::delete(app, &ids, None).await?;
            Ok(Reply::new(
                format!("{} section(s) deleted", ids.len()),
                json!({ "ids": ids, "deleted": ids.len() }),
            ))
        }
        "reorder" => {
            let (ct, id) = entity(&a)?;
            let ordered = a
                .ids("orderedIds", 1000)?
                .ok_or_else(|| Error::validation("orderedIds", "is required"))?;
            let list = sections::reorder(app, ct, &id, &ordered).await?;
            let out: Vec<Value> = list.iter().map(|s| json!({ "id": s.id, "title": s.title, "ordinal": s.ordinal, "version": s.version })).collect();
            Ok(Reply::new("sections reordered", json!({ "sections": out })))
        }
        _ => {
            let (ct, id) = entity(&a)?;
            let raw = a
                .json("sections", crate::mcp::args::BULK_MAX)?
                .ok_or_else(|| Error::validation("sections", "is required"))?;
            let Value::Array(items) = raw else {
                return Err(Error::validation(
                    "sections",
                    "expected a JSON array of section objects",
                ));
            };
            if items.is_empty() || items.len() > BULK_MAX {
                return Err(Error::validation(
                    "sections",
                    format!("{} sections given, 1 to {BULK_MAX} allowed", items.len()),
                ));
            }
            let new = items
                .iter()
                .enumerate()
                .map(|(i, v)| bulk_item(i, v))
                .collect::<Result<Vec<_>>>()?;
            let list = sections::add(app, ct, &id, new).await?;
            let out: Vec<Value> = list.iter().map(|s| json::section(s, false)).collect();
            Ok(Reply::new(
                format!("{} section(s) created", out.len()),
                json!({ "sections": out }),
            ))
        }
    }
}
