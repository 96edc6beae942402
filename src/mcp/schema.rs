//! Compact tool definitions: a tool is a name, a title, a description, typed
//! parameters and annotations, turned into the JSON Schema published by `tools/list`,
//! with the schema of the envelope every tool answers as its `outputSchema`.
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
    /// An array of strings or one string (comma-separated or JSON), published as
    /// the port publishes it: the port's tools.
    StrOrList,
    /// The same values as `StrOrList`, published as an array: Cairn's own tools, which
    /// have no port to match, say the list they take in 10 characters fewer (a string
    /// holding one is still read).
    List,
    /// A string holding a bulk JSON document (larger bound than `Str`).
    Bulk,
    /// A document's text (an OFN import), bounded by its handler with the size the
    /// configuration sets for documents, whichever parameter carries them.
    Doc,
    /// A small JSON document (a list of patterns or links), given as a string holding
    /// it (as the port publishes it) or as the JSON value itself.
    Json,
    /// An array of objects (command lists), each of one of these shapes (none: any
    /// object); each object is checked by its handler.
    Objects(&'static [Shape]),
    /// One JSON object (a map of lists, a context, a memory atom's fields), or a string
    /// holding one; its fields are checked by its handler.
    Object,
    /// A string accepted but not published: the clock of a call (`now`, ISO 8601),
    /// for simulations and tests (docs/memory.md). No agent needs it, so no agent
    /// pays for it in every tools/list.
    Unlisted,
}

/// One shape of the command objects an `Objects` parameter takes: the `command` values
/// it answers to, its other fields, and which of them (besides `command`) it needs.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    pub commands: &'static [&'static str],
    pub fields: &'static [P],
    pub required: &'static [&'static str],
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
    /// A short title for people (MCP's `title`: a client's tool picker shows it).
    pub title: &'static str,
    pub toolset: &'static str,
    pub description: &'static str,
    pub params: &'static [P],
    pub required: &'static [&'static str],
    pub effect: Effect,
    /// The same call twice leaves what one leaves (`cairn tools NAME` says so).
    pub idempotent: bool,
    /// The operations of a tool that writes (`effect` not `ReadOnly`) that only
    /// read, so a read token may call them (`manage_subject get`); each is one of
    /// the tool's `operation` values (a test holds it).
    pub read_ops: &'static [&'static str],
}

impl ToolDef {
    /// Whether a call of this tool with `operation` may write: what a read token is
    /// refused (README, "Named agents").
    pub fn writes(&self, operation: Option<&str>) -> bool {
        self.effect != Effect::ReadOnly && !operation.is_some_and(|op| self.read_ops.contains(&op))
    }

    pub fn input_schema(&self) -> Map<String, Value> {
        let mut s = properties(self.params);
        if !self.required.is_empty() {
            s.insert("required".into(), json!(self.required));
        }
        s
    }

    pub fn to_tool(&self) -> Tool {
        // Only `readOnlyHint`, the hint clients act on (a read runs without asking):
        // every hint is paid for in every agent's context, 52 tools over, and what the
        // others would say (a write that only adds, or can be repeated) is MCP's
        // cautious default left unsaid. `cairn tools NAME` still says each tool's effect.
        let mut ann = ToolAnnotations::new();
        if self.effect == Effect::ReadOnly {
            ann = ann.read_only(true);
        }
        let tool = Tool::new(self.name, self.description, Arc::new(self.input_schema()))
            .with_title(self.title)
            .with_raw_output_schema(output_schema());
        // No hint at all: no `annotations` either (`{}` would cost 17 characters).
        if ann == ToolAnnotations::new() {
            tool
        } else {
            tool.with_annotations(ann)
        }
    }
}

/// Every tool's `outputSchema`: the envelope (`mcp::envelope`) is every tool's
/// `structuredContent`, failures included, and always an object. Its fields go unsaid
/// here: the server's instructions name them once, and saying them in the schema
/// (33 characters for `required` alone) would be paid in tools/list again for each of
/// 52 tools, which the budget (tests/it/tools_meta.rs) has no room for. The official SDKs check every answer against it (tests/it/sdk_output.rs).
pub fn output_schema() -> Arc<Map<String, Value>> {
    static SCHEMA: std::sync::OnceLock<Arc<Map<String, Value>>> = std::sync::OnceLock::new();
    SCHEMA
        .get_or_init(|| {
            let mut m = Map::new();
            m.insert("type".into(), json!("object"));
            Arc::new(m)
        })
        .clone()
}

/// An object schema with `params` as its properties.
fn properties(params: &[P]) -> Map<String, Value> {
    let mut props = Map::new();
    for P(name, ty, desc) in params {
        let mut p = match ty {
            Ty::Unlisted => continue,
            Ty::Str | Ty::Bulk | Ty::Doc => json!({ "type": "string" }),
            // A list (of patterns, links, rules), or a string holding its JSON.
            Ty::Json => json!({ "type": ["array", "string"] }),
            // No `"format": "uuid"`: 15 characters on each of 80 parameters, and the
            // names (`projectId`) already say it; a bad id answers VALIDATION_ERROR.
            Ty::Id => json!({ "type": "string" }),
            Ty::Int => json!({ "type": "integer" }),
            Ty::Num => json!({ "type": "number" }),
            Ty::Bool => json!({ "type": "boolean" }),
            // `enum` alone says the values, so strings: `"type": "string"` beside it
            // would cost 16 characters on each of 51 parameters.
            Ty::Enum(values) => json!({ "enum": values }),
            // Any objects: their description says which fields, and an item that is not
            // an object is refused naming the parameter, so `items` would only cost.
            Ty::Objects([]) => json!({ "type": "array" }),
            Ty::Object => json!({ "type": "object" }),
            Ty::Objects(shapes) => {
                let one_of: Vec<Value> = shapes.iter().map(shape).collect();
                json!({ "type": "array", "items": { "type": "object", "oneOf": one_of } })
            }
            // A list, or a string holding one (JSON or comma-separated, as the port
            // publishes it): one schema with two types costs 19 characters less than
            // an `anyOf` of two, on each of 30 parameters. Its items go unsaid (25
            // characters each time): they are strings wherever a list is, the server's
            // instructions say how lists are given, and a non-string item is refused
            // naming the parameter.
            Ty::StrOrList => json!({ "type": ["array", "string"] }),
            Ty::List => json!({ "type": "array" }),
        };
        match keywords(ty, desc) {
            Some(k) => {
                if let Some(o) = p.as_object_mut() {
                    o.extend(k);
                }
            }
            None if !desc.is_empty() => p["description"] = Value::String((*desc).to_string()),
            None => {}
        }
        props.insert((*name).to_string(), p);
    }
    let mut s = Map::new();
    s.insert("type".into(), json!("object"));
    s.insert("properties".into(), Value::Object(props));
    s
}

/// A description that only gives a default and a bound ("Default 50", "Max 100",
/// "Default 2, max 5") said as JSON Schema's `default` and `maximum` instead: a client
/// reads them as such, and `"default":50` is 14 characters shorter than
/// `"description":"Default 50"`, on each of 20 parameters. `None`: the description is
/// published as it is. `help::describe` says them in the same words.
fn keywords(ty: &Ty, desc: &'static str) -> Option<Map<String, Value>> {
    let mut k = Map::new();
    for part in desc.split(", ") {
        if let Some(v) = part
            .strip_prefix("Default ")
            .or(part.strip_prefix("default "))
        {
            let v = match ty {
                Ty::Int => json!(v.parse::<i64>().ok()?),
                Ty::Num => json!(v.parse::<f64>().ok()?),
                Ty::Bool => json!(v.parse::<bool>().ok()?),
                Ty::Enum(values) if values.contains(&v) => json!(v),
                _ => return None,
            };
            k.insert("default".into(), v);
        } else if let Some(m) = part.strip_prefix("Max ").or(part.strip_prefix("max ")) {
            match ty {
                Ty::Int => k.insert("maximum".into(), json!(m.parse::<i64>().ok()?)),
                _ => return None,
            };
        } else {
            return None;
        }
    }
    Some(k)
}

/// One command object's schema: `command` among its values, its fields, what it needs.
fn shape(sh: &Shape) -> Value {
    let mut fields = vec![P("command", Ty::Enum(sh.commands), "")];
    fields.extend(sh.fields.iter().copied().filter(|p| p.0 != "command"));
    let mut s = properties(&fields);
    let mut required = vec!["command"];
    required.extend(sh.required.iter().copied());
    s.insert("required".into(), json!(required));
    // No `"additionalProperties": false`: 29 characters a shape, and the handler
    // refuses an unknown field by name. `"type": "object"` is said once, on the
    // array's items.
    s.remove("type");
    Value::Object(s)
}

#[cfg(test)]
mod tests {
    use super::{properties, Ty, P};
    use serde_json::json;

    /// A description of a default and a bound alone becomes JSON Schema's keywords; any
    /// other text, or a default the type cannot hold, stays a description.
    #[test]
    fn defaults_and_bounds_become_keywords_and_other_text_stays() {
        let s = properties(&[
            P("limit", Ty::Int, "Default 2, max 5"),
            P("mode", Ty::Enum(&["a", "b"]), "Default b"),
            P("score", Ty::Num, "Default 0.3"),
            P("per", Ty::Int, "Per target, max 100"),
            P("odd", Ty::Enum(&["a"]), "Default z"),
        ]);
        let p = &s["properties"];
        assert_eq!(
            p["limit"],
            json!({"type": "integer", "default": 2, "maximum": 5})
        );
        assert_eq!(p["mode"], json!({"enum": ["a", "b"], "default": "b"}));
        assert_eq!(p["score"], json!({"type": "number", "default": 0.3}));
        assert_eq!(p["per"]["description"], "Per target, max 100");
        assert_eq!(p["odd"], json!({"enum": ["a"], "description": "Default z"}));
    }
}
