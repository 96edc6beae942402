//! Command objects of `create_entity`, `update_entity` and `alter_references`: flat
//! objects with a `command` field, each checked like tool arguments (unknown fields,
//! wrong types, bounds), with errors naming `commands[i].field`.

use serde_json::{Map, Value};

use crate::domain::code::{valid_anchor, RefKind, LINK_TYPES};
use crate::error::{Error, Result};
use crate::mcp::args::{Args, NAME_MAX, TEXT_MAX};
use crate::mcp::code::repo_path;
use crate::mcp::schema::{Shape, Ty, P};
use crate::service::code::entity::Command;
use crate::service::code::refs::{NewRef, RefCommand, RefUpdate};

/// Most commands one call may carry.
pub const MAX_COMMANDS: usize = 500;

const ENTITY_COMMANDS: &[&str] = &[
    "add", "attach", "unattach", "relate", "unrelate", "link", "unlink",
];
const LINK: Ty = Ty::Enum(LINK_TYPES);

const ADD: &[P] = &[
    P("command", Ty::Str, ""),
    P("kind", Ty::Enum(&["code", "text"]), ""),
    P("documentPath", Ty::Str, ""),
    P(
        "lspSymbol",
        Ty::Str,
        "code: name path (Class/method) or a label in the lines",
    ),
    P("startLine", Ty::Int, "text; code without lspSymbol"),
    P("endLine", Ty::Int, ""),
    P("anchor", Ty::Str, "text: a markdown heading"),
    P("description", Ty::Str, ""),
];
const REF_ID: &[P] = &[P("command", Ty::Str, ""), P("referenceId", Ty::Id, "")];
/// The edge commands share one shape (a schema per verb would repeat `entityId`);
/// what applies to one verb only is checked by its handler.
const EDGE: &[P] = &[
    P("command", Ty::Str, ""),
    P("entityId", Ty::Id, ""),
    P("note", Ty::Str, "relate"),
    P("linkType", LINK, "link, unlink: required"),
];
/// `update` and `delete` share one shape; delete takes no more than its two fields.
const REFERENCE: &[P] = &[
    P("command", Ty::Str, ""),
    P("referenceId", Ty::Id, ""),
    P("version", Ty::Int, ""),
    P("startLine", Ty::Int, "update"),
    P("endLine", Ty::Int, ""),
    P("anchor", Ty::Str, ""),
    P("lspSymbol", Ty::Str, ""),
    P("description", Ty::Str, ""),
];

/// The command objects of `create_entity` and `update_entity`, as their schema
/// publishes them.
pub const ENTITY_SHAPES: &[Shape] = &[
    Shape {
        commands: &["add"],
        fields: ADD,
        required: &["kind", "documentPath"],
    },
    Shape {
        commands: &["attach", "unattach"],
        fields: REF_ID,
        required: &["referenceId"],
    },
    Shape {
        commands: &["relate", "unrelate", "link", "unlink"],
        fields: EDGE,
        required: &["entityId"],
    },
];

/// The command objects of `alter_references`.
pub const REFERENCE_SHAPES: &[Shape] = &[Shape {
    commands: &["update", "delete"],
    fields: REFERENCE,
    required: &["referenceId", "version"],
}];

/// Re-names a validation error's parameter as `commands[i].<parameter>`.
fn at(i: usize, e: Error) -> Error {
    match e {
        Error::Validation {
            message,
            parameter: Some(p),
        } => {
            let rest = message
                .strip_prefix(&format!("parameter '{p}': "))
                .unwrap_or(&message)
                .to_string();
            Error::validation(format!("commands[{i}].{p}"), rest)
        }
        other => other,
    }
}

fn verb(i: usize, m: &Map<String, Value>, allowed: &[&'static str]) -> Result<&'static str> {
    let raw = match m.get("command") {
        Some(Value::String(s)) => s.trim().to_ascii_lowercase(),
        Some(_) => {
            return Err(Error::validation(
                format!("commands[{i}].command"),
                "expected a string",
            ))
        }
        None => {
            return Err(Error::validation(
                format!("commands[{i}].command"),
                format!("is required: one of {}", allowed.join(", ")),
            ))
        }
    };
    allowed.iter().copied().find(|a| *a == raw).ok_or_else(|| {
        Error::validation(
            format!("commands[{i}].command"),
            format!(
                "'{}' is not one of {}",
                crate::domain::container::clip(&raw, 40),
                allowed.join(", ")
            ),
        )
    })
}

fn line(a: &Args, k: &str) -> Result<Option<i64>> {
    a.int(k, 1, 10_000_000)
}

fn description(a: &Args) -> Result<Option<String>> {
    a.raw_str("description", TEXT_MAX)
}

fn new_ref(a: &Args) -> Result<NewRef> {
    let kind = match a.req_choice("kind", &["code", "text"])? {
        "code" => RefKind::Code,
        _ => RefKind::Text,
    };
    let path = repo_path("documentPath", &a.req_str("documentPath", 4096)?)?;
    let symbol = a.name("lspSymbol")?;
    let (start, end) = (line(a, "startLine")?, line(a, "endLine")?);
    let anchor = a.str("anchor", NAME_MAX)?.filter(|s| !s.is_empty());
    match kind {
        RefKind::Code => {
            if symbol.is_none() && (start.is_none() || end.is_none()) {
                return Err(Error::validation(
                    "lspSymbol",
                    "a code reference needs lspSymbol (a name path such as Class/method; a language server gives its range) or startLine and endLine",
                ));
            }
            a.forbid(&["anchor"], "to code references")?;
        }
        RefKind::Text => {
            a.forbid(&["lspSymbol"], "to text references")?;
            if start.is_none() {
                return Err(Error::validation(
                    "startLine",
                    "is required for a text reference",
                ));
            }
            if end.is_none() {
                return Err(Error::validation(
                    "endLine",
                    "is required for a text reference",
                ));
            }
            if let Some(an) = &anchor {
                if !valid_anchor(an) {
                    return Err(Error::validation(
                        "anchor",
                        "must be a markdown heading such as '## Design'",
                    ));
                }
            }
        }
    }
    if let (Some(s), Some(e)) = (start, end) {
        if e < s {
            return Err(Error::validation(
                "endLine",
                format!("{e} is before startLine {s}"),
            ));
        }
    }
    Ok(NewRef {
        kind,
        document_path: path,
        lsp_symbol: symbol,
        start_line: start,
        end_line: end,
        anchor,
        description: description(a)?.unwrap_or_default(),
    })
}

fn entity_id(a: &Args) -> Result<String> {
    a.req_id("entityId")
}

fn link_type(a: &Args) -> Result<&'static str> {
    a.req_choice("linkType", LINK_TYPES)
}

/// Parses `create_entity` / `update_entity` commands.
pub fn entity_commands(raw: Vec<Map<String, Value>>) -> Result<Vec<Command>> {
    raw.into_iter()
        .enumerate()
        .map(|(i, m)| {
            let v = verb(i, &m, ENTITY_COMMANDS)?;
            let params = match v {
                "add" => ADD,
                "attach" | "unattach" => REF_ID,
                _ => EDGE,
            };
            let a = Args::new(Some(m), params).map_err(|e| at(i, e))?;
            let only = match v {
                "relate" => &["linkType"][..],
                "unrelate" => &["note", "linkType"][..],
                "link" | "unlink" => &["note"][..],
                _ => &[][..],
            };
            a.forbid(only, &format!("to {v}")).map_err(|e| at(i, e))?;
            let c = match v {
                "add" => Command::Add(new_ref(&a).map_err(|e| at(i, e))?),
                "attach" => Command::Attach {
                    reference_id: a.req_id("referenceId").map_err(|e| at(i, e))?,
                },
                "unattach" => Command::Unattach {
                    reference_id: a.req_id("referenceId").map_err(|e| at(i, e))?,
                },
                "relate" => Command::Relate {
                    entity_id: entity_id(&a).map_err(|e| at(i, e))?,
                    note: a.raw_str("note", TEXT_MAX).map_err(|e| at(i, e))?,
                },
                "unrelate" => Command::Unrelate {
                    entity_id: entity_id(&a).map_err(|e| at(i, e))?,
                },
                "link" => Command::Link {
                    entity_id: entity_id(&a).map_err(|e| at(i, e))?,
                    link_type: link_type(&a).map_err(|e| at(i, e))?,
                },
                _ => Command::Unlink {
                    entity_id: entity_id(&a).map_err(|e| at(i, e))?,
                    link_type: link_type(&a).map_err(|e| at(i, e))?,
                },
            };
            Ok(c)
        })
        .collect()
}

/// Parses `alter_references` commands.
pub fn reference_commands(raw: Vec<Map<String, Value>>) -> Result<Vec<RefCommand>> {
    raw.into_iter()
        .enumerate()
        .map(|(i, mut m)| {
            let v = verb(i, &m, &["update", "delete"])?;
            // `id` is the older name of `referenceId`, as `attach` and `unattach` call it.
            crate::mcp::args::unalias(&mut m, &[("id", "referenceId")]).map_err(|e| at(i, e))?;
            let a = Args::new(Some(m), REFERENCE).map_err(|e| at(i, e))?;
            if v == "delete" {
                a.forbid(
                    &["startLine", "endLine", "anchor", "lspSymbol", "description"],
                    "to delete",
                )
                .map_err(|e| at(i, e))?;
            }
            let parse = || -> Result<RefCommand> {
                let id = a.req_id("referenceId")?;
                let version = a.req_version("for every reference command")?;
                if v == "delete" {
                    return Ok(RefCommand::Delete { id, version });
                }
                let anchor = a.str("anchor", NAME_MAX)?;
                if let Some(an) = anchor.as_deref().filter(|s| !s.is_empty()) {
                    if !valid_anchor(an) {
                        return Err(Error::validation(
                            "anchor",
                            "must be a markdown heading such as '## Design' ('' clears it)",
                        ));
                    }
                }
                Ok(RefCommand::Update(RefUpdate {
                    id,
                    version,
                    start_line: line(&a, "startLine")?,
                    end_line: line(&a, "endLine")?,
                    anchor,
                    lsp_symbol: a.name("lspSymbol")?,
                    description: description(&a)?,
                }))
            };
            parse().map_err(|e| at(i, e))
        })
        .collect()
}

/// Ids of a list parameter (categoryIds, parentIds), canonical.
pub fn id_list(a: &Args, k: &str) -> Result<Option<Vec<String>>> {
    let v = a.ids(k, 100)?;
    Ok(v.map(|mut ids| {
        let mut seen = std::collections::HashSet::new();
        ids.retain(|x| seen.insert(x.clone()));
        ids
    }))
}
