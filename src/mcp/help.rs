//! A tool explained to a person at the shell (`cairn tools NAME`, `cairn call NAME
//! --help`): its description and parameters, read from the JSON Schema the tool
//! publishes over MCP, so the shell shows the contract an agent sees; and the tool
//! names that come close to a mistyped one. Knows no store, no service, no terminal.

use serde_json::{Map, Value};

use crate::mcp::schema::{Effect, ToolDef};

/// Lines are wrapped at this many characters: readable in any terminal.
const WIDTH: usize = 80;

/// The help text of one tool: name, toolset and effect, the description, then one
/// entry per parameter (name, type or enum values, whether required, description).
pub fn describe(def: &ToolDef) -> String {
    let effect = match def.effect {
        Effect::ReadOnly => "read-only",
        Effect::Additive => "writes, never overwrites",
        Effect::Destructive => "may overwrite or delete",
    };
    // A write that can be repeated with the same arguments says so (tools/list leaves
    // it out: `schema::ToolDef::to_tool`).
    let again = if def.idempotent && def.effect != Effect::ReadOnly {
        ", safe to repeat"
    } else {
        ""
    };
    let mut out = format!(
        "{} ({} toolset; {effect}{again})\n\n",
        def.name, def.toolset
    );
    wrap_into(&mut out, def.description, "  ", "  ");
    let schema = def.input_schema();
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let empty = Map::new();
    let props = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    if props.is_empty() {
        out.push_str("\nNo parameters.\n");
    } else {
        out.push_str("\nParameters:\n");
    }
    // Parameters in the order the tool declares them, which puts the important first
    // (the schema's map is sorted by name).
    let width = def.params.iter().map(|p| p.0.len()).max().unwrap_or(0);
    for p in def.params {
        let Some(spec) = props.get(p.0) else { continue };
        let mut head = type_of(spec);
        if required.contains(&p.0) {
            head.push_str(", required");
        }
        let first = format!("  {:<width$}  ", p.0);
        let rest = " ".repeat(first.len());
        wrap_into(&mut out, &head, &first, &rest);
        if let Some(d) = spec.get("description").and_then(Value::as_str) {
            wrap_into(&mut out, d, &rest, &rest);
        }
        if let Some(d) = bounds(spec) {
            wrap_into(&mut out, &d, &rest, &rest);
        }
        for line in shapes(spec) {
            wrap_into(&mut out, &line, &format!("{rest}- "), &format!("{rest}  "));
        }
    }
    out.push_str(&format!(
        "\nRun it: cairn call {} '{{…}}' (the arguments as one JSON object)\n",
        def.name
    ));
    out
}

/// The command objects an array of `oneOf` objects takes, one line each:
/// `command: add | …; kind, documentPath, lspSymbol?, …` (`?`: optional).
fn shapes(spec: &Value) -> Vec<String> {
    let Some(alts) = spec
        .get("items")
        .and_then(|i| i.get("oneOf"))
        .and_then(Value::as_array)
    else {
        return Vec::new();
    };
    alts.iter()
        .filter_map(|alt| {
            let props = alt.get("properties")?.as_object()?;
            let required: Vec<&str> = alt
                .get("required")
                .and_then(Value::as_array)
                .map(|a| a.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let commands: Vec<&str> = props
                .get("command")?
                .get("enum")?
                .as_array()?
                .iter()
                .filter_map(Value::as_str)
                .collect();
            let fields: Vec<String> = props
                .keys()
                .filter(|k| *k != "command")
                .map(|k| {
                    if required.contains(&k.as_str()) {
                        k.clone()
                    } else {
                        format!("{k}?")
                    }
                })
                .collect();
            Some(format!(
                "command: {}; {}",
                commands.join(" | "),
                fields.join(", ")
            ))
        })
        .collect()
}

/// A parameter's type in words: enum values, a format, alternatives, array items.
/// A parameter's `default` and `maximum`, in the words its description had before the
/// schema said them as keywords (`schema::keywords`): "Default 2, max 5".
fn bounds(spec: &Value) -> Option<String> {
    let mut parts = Vec::new();
    if let Some(d) = spec.get("default") {
        let d = d.as_str().map_or_else(|| d.to_string(), str::to_string);
        parts.push(format!("Default {d}"));
    }
    if let Some(m) = spec.get("maximum") {
        parts.push(format!(
            "{} {m}",
            if parts.is_empty() { "Max" } else { "max" }
        ));
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

fn type_of(spec: &Value) -> String {
    if let Some(values) = spec.get("enum").and_then(Value::as_array) {
        let names: Vec<String> = values
            .iter()
            .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
            .collect();
        return format!("one of {}", names.join(" | "));
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(alts) = spec.get(key).and_then(Value::as_array) {
            // Variants of one type (command objects told apart by a field) read as
            // that type once.
            // An alternative without a type has the one said beside `oneOf`.
            let typed = |alt: &Value| match (alt.get("type"), spec.get("type")) {
                (None, Some(t)) => {
                    let mut alt = alt.clone();
                    alt["type"] = t.clone();
                    type_of(&alt)
                }
                _ => type_of(alt),
            };
            let mut words: Vec<String> = Vec::new();
            for w in alts.iter().map(typed) {
                if !words.contains(&w) {
                    words.push(w);
                }
            }
            return words.join(" or ");
        }
    }
    let Some(ty) = spec.get("type") else {
        return "any JSON value".to_string();
    };
    if let Some(types) = ty.as_array() {
        // `"type": ["array", "string"]`: each type read with the rest of the schema.
        let words: Vec<String> = types
            .iter()
            .map(|t| {
                let mut one = spec.clone();
                one["type"] = t.clone();
                type_of(&one)
            })
            .collect();
        return words.join(" or ");
    }
    match ty.as_str() {
        Some("string") => match spec.get("format").and_then(Value::as_str) {
            Some(f) => format!("string ({f})"),
            None => "string".to_string(),
        },
        Some("array") => match spec.get("items") {
            Some(items) => format!("array of {}", plural(&type_of(items))),
            None => "array".to_string(),
        },
        Some(t) => t.to_string(),
        // Neither a name nor a list (read above): show it as it is.
        None => ty.to_string(),
    }
}

/// "string" → "strings", for "array of strings"; longer phrases stay as they are.
fn plural(word: &str) -> String {
    if word.chars().all(|c| c.is_ascii_alphabetic()) {
        format!("{word}s")
    } else {
        word.to_string()
    }
}

/// Appends `text` wrapped at [`WIDTH`], the first line after `first`, the others
/// after `rest`. A word longer than a line stays whole.
fn wrap_into(out: &mut String, text: &str, first: &str, rest: &str) {
    let mut line = first.to_string();
    let mut empty = true;
    for word in text.split_whitespace() {
        if !empty && line.chars().count() + 1 + word.chars().count() > WIDTH {
            out.push_str(line.trim_end());
            out.push('\n');
            line = rest.to_string();
            empty = true;
        }
        if !empty {
            line.push(' ');
        }
        line.push_str(word);
        empty = false;
    }
    out.push_str(line.trim_end());
    out.push('\n');
}

/// The names among `names` close to `typed`, nearest first, at most five: those that
/// contain it or are contained in it (`template` finds `query_templates`), and those
/// a few edits away (`get_next_tsk`). Case and `-` for `_` do not count.
pub fn close_names<'a>(typed: &str, names: &[&'a str]) -> Vec<&'a str> {
    // A name is at most a few dozen characters; a longer input is no typo of one.
    let typed: String = typed
        .chars()
        .take(64)
        .map(|c| {
            if c == '-' {
                '_'
            } else {
                c.to_ascii_lowercase()
            }
        })
        .collect();
    let width = typed.chars().count();
    let mut scored: Vec<(usize, &str)> = names
        .iter()
        .filter_map(|&n| {
            let d = strsim::levenshtein(&typed, n);
            let contains = width >= 3 && (n.contains(&typed) || typed.contains(n));
            (contains || d <= (width / 3).max(2)).then_some((d, n))
        })
        .collect();
    scored.sort();
    scored.into_iter().take(5).map(|(_, n)| n).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::schema::{Ty, P};

    const NAMES: &[&str] = &[
        "query_templates",
        "manage_template",
        "apply_template",
        "get_next_task",
        "get_next_feature",
        "query",
        "search",
    ];

    #[test]
    fn close_names_find_typos_and_parts() {
        assert_eq!(close_names("get_next_tsk", NAMES), ["get_next_task"]);
        assert_eq!(close_names("Get-Next-Task", NAMES), ["get_next_task"]);
        let t = close_names("template", NAMES);
        assert_eq!(t.len(), 3, "{t:?}");
        assert!(t.contains(&"query_templates") && t.contains(&"apply_template"));
        assert_eq!(close_names("serch", NAMES), ["search"]);
        assert!(close_names("frobnicate", NAMES).is_empty());
        assert!(close_names("", NAMES).len() <= 5);
        assert!(close_names(&"x".repeat(10_000), NAMES).is_empty());
    }

    #[test]
    fn describe_names_types_enums_and_required_in_declared_order() {
        const DEF: ToolDef = ToolDef {
            name: "demo",
            title: "Demo",
            toolset: "tasks",
            description: "Demonstrates the help text.",
            params: &[
                P("operation", Ty::Enum(&["get", "list"]), "Default list"),
                P("id", Ty::Id, ""),
                P("tags", Ty::StrOrList, "Tags to match, every one of them, in a description long enough to be wrapped onto a second line"),
                P("commands", Ty::Objects(&[]), ""),
            ],
            required: &["id"],
            effect: Effect::ReadOnly,
            idempotent: true,
            read_ops: &[],
        };
        let text = describe(&DEF);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "demo (tasks toolset; read-only)");
        assert!(lines.iter().all(|l| l.chars().count() <= WIDTH), "{text}");
        let at = |p: &str| lines.iter().position(|l| l.starts_with(p)).unwrap();
        assert!(at("  operation ") < at("  id ") && at("  id ") < at("  tags "));
        assert!(text.contains("one of get | list\n"), "{text}");
        // The default the schema says as a keyword reads as the description said it.
        assert!(text.contains("Default list\n"), "{text}");
        assert!(text.contains("  id         string, required\n"), "{text}");
        assert!(text.contains("array or string\n"), "{text}");
        assert!(text.contains("  commands   array\n"), "{text}");
        assert!(text.contains("in a description long enough"), "{text}");
    }
}
