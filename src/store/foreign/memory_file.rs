//! The official MCP memory server's `memory.json`: one JSON object a line, an entity
//! (`{"type":"entity","name","entityType","observations":[…]}`) or a relation
//! (`{"type":"relation","from","to","relationType"}`), read whole into records that
//! keep their line numbers. Blank lines are skipped, as the server skips them; any
//! other line that is not one of the two shapes is refused with its number.

use std::path::Path;

use serde_json::{Map, Value};

use super::Unreadable;

/// One record of the file and the line it was on (1-based).
#[derive(Debug, Clone, PartialEq)]
pub struct Line {
    pub line: usize,
    pub record: Record,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Record {
    Entity {
        name: String,
        entity_type: String,
        observations: Vec<String>,
    },
    Relation {
        from: String,
        to: String,
        relation_type: String,
    },
}

/// Reads `path`, refusing a file past `max_bytes`, a line past `max_line_bytes`, or
/// more than `max_records` records before anything is kept.
pub fn read(
    path: &Path,
    max_bytes: u64,
    max_line_bytes: usize,
    max_records: usize,
) -> Result<Vec<Line>, Unreadable> {
    let shown = path.display().to_string();
    super::checked_file(path, &shown, max_bytes)?;
    let bytes = std::fs::read(path).map_err(|e| Unreadable(format!("cannot read {shown}: {e}")))?;
    let text = std::str::from_utf8(&bytes).map_err(|e| {
        let line = bytes[..e.valid_up_to()]
            .iter()
            .filter(|b| **b == b'\n')
            .count()
            + 1;
        Unreadable(format!("{shown}, line {line}: not UTF-8 text"))
    })?;
    parse(text, &shown, max_line_bytes, max_records)
}

fn parse(
    text: &str,
    shown: &str,
    max_line_bytes: usize,
    max_records: usize,
) -> Result<Vec<Line>, Unreadable> {
    let mut out = Vec::new();
    for (i, raw) in text.split('\n').enumerate() {
        let n = i + 1;
        let at = |why: String| Unreadable(format!("{shown}, line {n}: {why}"));
        let l = raw.trim();
        if l.is_empty() {
            continue;
        }
        if l.len() > max_line_bytes {
            return Err(at(format!(
                "{} bytes, past the limit of {max_line_bytes} for one line",
                l.len()
            )));
        }
        if out.len() == max_records {
            return Err(at(format!(
                "more than {max_records} records, the import limit"
            )));
        }
        // serde_json refuses nesting past 128 levels by itself.
        let v: Value = serde_json::from_str(l).map_err(|e| at(format!("not JSON: {e}")))?;
        let Value::Object(o) = v else {
            return Err(at("not a JSON object".into()));
        };
        let record = match o.get("type").and_then(Value::as_str) {
            Some("entity") => Record::Entity {
                name: text_of(&o, "name").map_err(at)?,
                entity_type: text_of(&o, "entityType").map_err(at)?,
                observations: match o.get("observations") {
                    None | Some(Value::Null) => Vec::new(),
                    Some(Value::Array(a)) => a
                        .iter()
                        .enumerate()
                        .map(|(j, x)| {
                            x.as_str()
                                .map(str::to_string)
                                .ok_or_else(|| at(format!("observations[{j}] is not a string")))
                        })
                        .collect::<Result<_, _>>()?,
                    Some(_) => return Err(at("observations is not an array".into())),
                },
            },
            Some("relation") => Record::Relation {
                from: text_of(&o, "from").map_err(at)?,
                to: text_of(&o, "to").map_err(at)?,
                relation_type: text_of(&o, "relationType").map_err(at)?,
            },
            Some(other) => {
                return Err(at(format!(
                    "type '{}' is neither entity nor relation",
                    crate::domain::text::clip(other, 40)
                )))
            }
            None => return Err(at("no \"type\" (entity or relation)".into())),
        };
        out.push(Line { line: n, record });
    }
    Ok(out)
}

fn text_of(o: &Map<String, Value>, key: &str) -> Result<String, String> {
    match o.get(key) {
        Some(Value::String(s)) if !s.trim().is_empty() => Ok(s.clone()),
        Some(Value::String(_)) => Err(format!("\"{key}\" is empty")),
        Some(_) => Err(format!("\"{key}\" is not a string")),
        None => Err(format!("no \"{key}\"")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_are_named() {
        let ok = "{\"type\":\"entity\",\"name\":\"A\",\"entityType\":\"person\",\"observations\":[\"x\"]}\n\n{\"type\":\"relation\",\"from\":\"A\",\"to\":\"A\",\"relationType\":\"knows\"}";
        let r = parse(ok, "m.json", 1000, 10).unwrap();
        assert_eq!(r.len(), 2);
        assert_eq!(r[1].line, 3);
        let e = |t: &str| parse(t, "m.json", 1000, 10).unwrap_err().0;
        assert_eq!(
            e("\n{"),
            "m.json, line 2: not JSON: EOF while parsing an object at line 1 column 1"
        );
        assert!(e("{\"type\":\"entity\",\"name\":\"A\"}").contains("line 1: no \"entityType\""));
        assert!(e("{\"type\":\"thing\"}").contains("neither entity nor relation"));
        assert!(e("[1]").contains("not a JSON object"));
        assert!(parse(ok, "m.json", 1000, 1)
            .unwrap_err()
            .0
            .contains("line 3: more than 1"));
    }
}
