//! Compact tool definitions: a tool is a name, a description, typed parameters and
//! annotations, turned into the JSON Schema published by `tools/list`.
//!
//! Tool definitions are paid for in tokens on every agent turn, so schemas carry
//! types, enums and short descriptions only where a name does not say enough.

use std::sync::Arc;

use rmcp::model::{Tool, ToolAnnotations};
use serde_json::{json, Map, Value};

#[derive(Debug, Clone, Copy)]
pub enum Ty {
    Str,
    /// A UUID, dashes optional.
    Id,
    Int,
    /// A JSON number (scores, thresholds).
    Num,
    Bool,
    Enum(&'static [&'static str]),
    /// An array of strings or one string.
    StrOrList,
    /// A string holding a bulk JSON document (larger bound than `Str`).
    Bulk,
    /// A small JSON document (a list of patterns or links), given as a string holding
    /// it (as the port publishes it) or as the JSON value itself.
    Json,
    /// An array of objects (command lists); each object is checked by its handler.
    Objects,
    /// One object whose fields its handler checks (a memory atom's fields); a string
    /// holding one is accepted too.
    Obj,
}

/// One parameter: name, type, description ("" for none).
#[derive(Debug, Clone, Copy)]
pub struct P(pub &'static str, pub Ty, pub &'static str);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    ReadOnly,
    /// Writes but never removes or overwrites what was there.
    Additive,
    /// May overwrite or delete.
    Destructive,
}

#[derive(Debug)]
pub struct ToolDef {
    pub name: &'static str,
    pub toolset: &'static str,
    pub description: &'static str,
    pub params: &'static [P],
    pub required: &'static [&'static str],
    pub effect: Effect,
    pub idempotent: bool,
}

impl ToolDef {
    pub fn input_schema(&self) -> Map<String, Value> {
        let mut props = Map::new();
        for P(name, ty, desc) in self.params {
            let mut p = match ty {
                Ty::Str | Ty::Bulk | Ty::Json => json!({ "type": "string" }),
                Ty::Id => json!({ "type": "string", "format": "uuid" }),
                Ty::Int => json!({ "type": "integer" }),
                Ty::Num => json!({ "type": "number" }),
                Ty::Bool => json!({ "type": "boolean" }),
                Ty::Enum(values) => json!({ "type": "string", "enum": values }),
                Ty::Objects => json!({ "type": "array", "items": { "type": "object" } }),
                Ty::Obj => json!({ "type": "object" }),
                Ty::StrOrList => {
                    json!({ "anyOf": [{ "type": "array", "items": { "type": "string" } }, { "type": "string" }] })
                }
            };
            if !desc.is_empty() {
                p["description"] = Value::String((*desc).to_string());
            }
            props.insert((*name).to_string(), p);
        }
        let mut s = Map::new();
        s.insert("type".into(), json!("object"));
        s.insert("properties".into(), Value::Object(props));
        if !self.required.is_empty() {
            s.insert("required".into(), json!(self.required));
        }
        s
    }

    pub fn to_tool(&self) -> Tool {
        let ann = ToolAnnotations::new()
            .read_only(self.effect == Effect::ReadOnly)
            .destructive(self.effect == Effect::Destructive)
            .idempotent(self.idempotent || self.effect == Effect::ReadOnly);
        Tool::new(self.name, self.description, Arc::new(self.input_schema())).with_annotations(ann)
    }
}
