//! Tool arguments arrive as raw JSON and are validated here into typed values, so a
//! wrong type, an unknown enum value or an unknown parameter becomes a
//! `VALIDATION_ERROR` that names the parameter (instead of a JSON-RPC error).

use serde_json::{Map, Value};

use crate::domain::container::{clip, normalize_tags};
use crate::domain::id;
use crate::error::{Error, Result};
use crate::mcp::schema::{Ty, P};

/// Names and titles: 1–255 characters.
pub const NAME_MAX: usize = 255;
/// Summaries: 4 KB.
pub const SUMMARY_MAX: usize = 4 * 1024;
/// Descriptions and knowledge: 32 KB.
pub const TEXT_MAX: usize = 32 * 1024;
/// Section content: 64 KB.
pub const CONTENT_MAX: usize = 64 * 1024;
/// Search queries: 1 KB.
pub const QUERY_MAX: usize = 1024;
/// Any comma-separated list parameter.
const LIST_MAX: usize = 64 * 1024;

/// Largest string any ordinary parameter accepts; fields with tighter bounds check
/// them in their handler.
pub const STRING_MAX: usize = CONTENT_MAX;
/// Largest small JSON document (patterns, related lists).
pub const JSON_MAX: usize = 64 * 1024;
/// Largest object parameter (a memory atom's fields: a statement, notes and a
/// rationale may each be long).
pub const OBJ_MAX: usize = 256 * 1024;
/// Largest string for a parameter holding a bulk JSON document.
pub const BULK_MAX: usize = 8 * 1024 * 1024;
/// How deep an argument may nest (arrays and objects inside each other). serde_json
/// reads at most 128 levels of a whole message (the stdio guard and the HTTP front
/// answer past that, naming the argument when they can find it); every walk of an
/// argument after that (the NUL check, sizes, the handlers' readers, the memory's
/// raw values) recurses once per level, and no tool takes anything near this deep.
pub const DEPTH_MAX: usize = 32;

/// How deep `v` nests (1 for a scalar), measured with a loop: arguments arrive from
/// outside, and the measure is what stops the recursion of everything after it.
pub fn depth(v: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        deepest = deepest.max(d);
        match v {
            Value::Array(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Object(m) => stack.extend(m.values().map(|i| (i, d + 1))),
            _ => {}
        }
    }
    deepest
}

/// The refusal of an argument nested past [`DEPTH_MAX`].
pub fn too_deep(k: &str, levels: Option<usize>) -> Error {
    let how = levels
        .map(|n| format!("{n} levels"))
        .unwrap_or_else(|| "more than 128 levels".into());
    Error::validation(
        clip(k, 60),
        format!("nests {how} deep (arrays and objects); at most {DEPTH_MAX} are read: send a flatter value"),
    )
}

/// JSON text held in a string argument, read and checked for depth like an
/// argument: the outer error refuses it as too deep, the inner one is serde's, for
/// the caller to word.
fn parse_json(k: &str, s: &str) -> Result<std::result::Result<Value, serde_json::Error>> {
    match serde_json::from_str::<Value>(s) {
        Ok(v) => match depth(&v) {
            d if d > DEPTH_MAX => Err(too_deep(k, Some(d))),
            _ => Ok(Ok(v)),
        },
        Err(e) if e.to_string().contains("recursion limit") => Err(too_deep(k, None)),
        Err(e) => Ok(Err(e)),
    }
}

fn check_type(k: &str, ty: Ty, v: &Value) -> Result<()> {
    let wrong = |want: &str| {
        Err(Error::validation(
            k,
            format!("expected {want}, got {}", type_name(v)),
        ))
    };
    let sized = |s: &str, max: usize| {
        if s.len() > max {
            Err(Error::validation(
                k,
                format!("{} bytes given, at most {max} allowed", s.len()),
            ))
        } else {
            Ok(())
        }
    };
    match (ty, v) {
        (Ty::Str | Ty::Unlisted, Value::String(s)) => sized(s, STRING_MAX),
        (Ty::Bulk, Value::String(s)) => sized(s, BULK_MAX),
        (Ty::Bulk, Value::Array(_)) => sized(&v.to_string(), BULK_MAX),
        // The handler knows the configured bound; a transport's own (a stdio line,
        // an HTTP body) has held it to a few MiB already.
        (Ty::Doc, Value::String(_)) => Ok(()),
        (Ty::Json, Value::String(s)) => sized(s, JSON_MAX),
        (Ty::Json, Value::Array(_) | Value::Object(_)) => sized(&v.to_string(), JSON_MAX),
        (Ty::Id, Value::String(s)) => Ok(id::parse(k, s).map(|_| ())?),
        (Ty::Int, Value::Number(n))
            if n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0) =>
        {
            Ok(())
        }
        (Ty::Num, Value::Number(_)) => Ok(()),
        (Ty::Bool, Value::Bool(_)) => Ok(()),
        (Ty::Enum(values), Value::String(s)) => {
            if values.iter().any(|x| x.eq_ignore_ascii_case(s.trim())) {
                Ok(())
            } else {
                Err(Error::validation(
                    k,
                    format!("'{}' is not one of {}", clip(s, 40), values.join(", ")),
                ))
            }
        }
        (Ty::StrOrList | Ty::List, Value::String(s)) => sized(s, STRING_MAX),
        (Ty::StrOrList | Ty::List, Value::Array(items)) => {
            if items.iter().all(|i| i.is_string()) {
                sized(&v.to_string(), STRING_MAX)
            } else {
                wrong("an array of strings")
            }
        }
        (Ty::Objects(_), Value::Array(items)) => {
            if items.iter().all(|i| i.is_object()) {
                sized(&v.to_string(), BULK_MAX)
            } else {
                wrong("an array of objects")
            }
        }
        (Ty::Objects(_), _) => wrong("an array of objects"),
        (Ty::Object, Value::Object(_)) => sized(&v.to_string(), OBJ_MAX),
        (Ty::Object, Value::String(s)) => match parse_json(k, s)? {
            Ok(Value::Object(_)) => sized(s, OBJ_MAX),
            _ => wrong("an object"),
        },
        (Ty::Object, _) => wrong("an object"),
        (Ty::Str | Ty::Bulk | Ty::Doc | Ty::Id | Ty::StrOrList | Ty::Unlisted, _) => {
            wrong("a string")
        }
        (Ty::List, _) => wrong("an array of strings"),
        (Ty::Json, _) => wrong("a JSON array, or a string holding one"),
        (Ty::Int, _) => wrong("an integer"),
        (Ty::Num, _) => wrong("a number"),
        (Ty::Bool, _) => wrong("true or false"),
        (Ty::Enum(_), _) => wrong("a string"),
    }
}

pub struct Args {
    map: Map<String, Value>,
}

/// Moves each `(old, new)` parameter of `map` to its published name: old names stay
/// accepted for agents written against them, and one name is published per idea.
/// Giving both names with different values is refused.
pub fn unalias(map: &mut Map<String, Value>, aliases: &[(&str, &str)]) -> Result<()> {
    for (old, new) in aliases {
        let Some(v) = map.remove(*old) else {
            continue;
        };
        match map.get(*new) {
            Some(w) if *w != v => {
                return Err(Error::validation(
                    new,
                    format!("'{old}' (its older name) names another value: give '{new}' alone"),
                ))
            }
            Some(_) => {}
            None => {
                map.insert((*new).to_string(), v);
            }
        }
    }
    Ok(())
}

/// Whether any string in `v`, at any depth, holds a NUL character. SQLite's full-text
/// search reads one as the end of its query, and no text Cairn keeps needs one.
fn holds_nul(v: &Value) -> bool {
    match v {
        Value::String(s) => s.contains('\0'),
        Value::Array(a) => a.iter().any(holds_nul),
        Value::Object(m) => m.iter().any(|(k, v)| k.contains('\0') || holds_nul(v)),
        _ => false,
    }
}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

impl Args {
    /// Wraps the raw arguments after checking every given one against the tool's
    /// parameters: unknown names (a misspelt parameter silently ignored is worse than an
    /// error), wrong JSON types, unknown enum values, malformed ids and oversized
    /// strings are refused here, before any handler logic, naming the parameter.
    pub fn new(raw: Option<Map<String, Value>>, params: &[P]) -> Result<Args> {
        let mut map = raw.unwrap_or_default();
        // An object or a list of objects may come as a string holding it (clients
        // that send every argument as text): read here, so every handler sees JSON.
        for (k, v) in map.iter_mut() {
            let Some(P(_, ty, _)) = params.iter().find(|p| p.0 == k) else {
                continue;
            };
            if let (Ty::Objects(_) | Ty::Object, Value::String(s)) = (ty, &*v) {
                if s.len() <= BULK_MAX {
                    match parse_json(k, s)? {
                        Ok(parsed @ Value::Array(_)) if matches!(ty, Ty::Objects(_)) => *v = parsed,
                        Ok(parsed @ Value::Object(_)) if matches!(ty, Ty::Object) => *v = parsed,
                        _ => {}
                    }
                }
            }
        }
        for (k, v) in &map {
            let Some(P(_, ty, _)) = params.iter().find(|p| p.0 == k) else {
                let known: Vec<&str> = params.iter().map(|p| p.0).collect();
                let hint = known
                    .iter()
                    .find(|n| n.eq_ignore_ascii_case(k))
                    .map(|n| format!(" (did you mean '{n}'?)"))
                    .unwrap_or_default();
                return Err(Error::validation(
                    clip(k, 60),
                    format!(
                        "unknown parameter{hint}; this tool takes: {}",
                        known.join(", ")
                    ),
                ));
            };
            if !v.is_null() {
                // First, so that no walk below meets a value deeper than it allows.
                let d = depth(v);
                if d > DEPTH_MAX {
                    return Err(too_deep(k, Some(d)));
                }
                check_type(k, *ty, v)?;
                if holds_nul(v) {
                    return Err(Error::validation(
                        k,
                        "contains a NUL character (\\u0000), which no Cairn text may hold: remove it",
                    ));
                }
            }
        }
        Ok(Args { map })
    }

    pub fn get(&self, k: &str) -> Option<&Value> {
        self.map.get(k).filter(|v| !v.is_null())
    }

    pub fn has(&self, k: &str) -> bool {
        self.get(k).is_some()
    }

    /// A string of at most `max` bytes, kept as given (not trimmed).
    pub fn raw_str(&self, k: &str, max: usize) -> Result<Option<String>> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => {
                if s.len() > max {
                    return Err(Error::validation(
                        k,
                        format!("{} bytes given, at most {max} allowed", s.len()),
                    ));
                }
                Ok(Some(s.clone()))
            }
            Some(v) => Err(Error::validation(
                k,
                format!("expected a string, got {}", type_name(v)),
            )),
        }
    }

    /// A string trimmed of surrounding whitespace, at most `max` bytes.
    pub fn str(&self, k: &str, max: usize) -> Result<Option<String>> {
        Ok(self.raw_str(k, max)?.map(|s| s.trim().to_string()))
    }

    pub fn req_str(&self, k: &str, max: usize) -> Result<String> {
        match self.str(k, max)? {
            Some(s) if !s.is_empty() => Ok(s),
            Some(_) => Err(Error::validation(k, "must not be empty")),
            None => Err(Error::validation(k, "is required")),
        }
    }

    /// A name or title: trimmed, 1–255 characters.
    pub fn name(&self, k: &str) -> Result<Option<String>> {
        match self.str(k, NAME_MAX * 4)? {
            None => Ok(None),
            Some(s) if s.is_empty() => Err(Error::validation(k, "must not be empty")),
            Some(s) if s.chars().count() > NAME_MAX => Err(Error::validation(
                k,
                format!(
                    "{} characters given, at most {NAME_MAX} allowed",
                    s.chars().count()
                ),
            )),
            Some(s) => Ok(Some(s)),
        }
    }

    pub fn int(&self, k: &str, min: i64, max: i64) -> Result<Option<i64>> {
        let v = match self.get(k) {
            None => return Ok(None),
            Some(v) => v,
        };
        let Value::Number(num) = v else {
            return Err(Error::validation(
                k,
                format!("expected an integer, got {}", type_name(v)),
            ));
        };
        let whole = num.as_i64().or_else(|| {
            num.as_f64()
                .filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15)
                .map(|f| f as i64)
        });
        match whole {
            Some(n) if (min..=max).contains(&n) => Ok(Some(n)),
            Some(_) => Err(Error::validation(
                k,
                format!("{num} is out of range: give an integer from {min} to {max}"),
            )),
            None if num.is_u64() || num.as_f64().is_some_and(|f| f.fract() == 0.0) => {
                Err(Error::validation(
                    k,
                    format!("{num} is out of range: give an integer from {min} to {max}"),
                ))
            }
            None => Err(Error::validation(
                k,
                format!("{num} is not a whole number: give an integer from {min} to {max}"),
            )),
        }
    }

    /// A number within `min..=max`.
    pub fn num(&self, k: &str, min: f64, max: f64) -> Result<Option<f64>> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::Number(n)) => match n.as_f64() {
                Some(f) if (min..=max).contains(&f) => Ok(Some(f)),
                _ => Err(Error::validation(
                    k,
                    format!("{n} is out of range {min}..={max}"),
                )),
            },
            Some(v) => Err(Error::validation(
                k,
                format!("expected a number, got {}", type_name(v)),
            )),
        }
    }

    pub fn req_int(&self, k: &str, min: i64, max: i64) -> Result<i64> {
        self.int(k, min, max)?
            .ok_or_else(|| Error::validation(k, "is required"))
    }

    /// The `version` a caller read (≥ 1).
    pub fn version(&self) -> Result<Option<i64>> {
        self.int("version", 1, i64::MAX)
    }

    pub fn req_version(&self, why: &str) -> Result<i64> {
        self.version()?.ok_or_else(|| {
            Error::validation(
                "version",
                format!("is required {why}: send the version you last read"),
            )
        })
    }

    pub fn bool(&self, k: &str) -> Result<Option<bool>> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(v) => Err(Error::validation(
                k,
                format!("expected true or false, got {}", type_name(v)),
            )),
        }
    }

    pub fn id(&self, k: &str) -> Result<Option<String>> {
        match self.str(k, 64)? {
            None => Ok(None),
            Some(s) => Ok(Some(id::parse(k, &s)?)),
        }
    }

    pub fn req_id(&self, k: &str) -> Result<String> {
        self.id(k)?
            .ok_or_else(|| Error::validation(k, "is required"))
    }

    /// One of `allowed` (matched case-insensitively), answered in its canonical spelling.
    pub fn choice(&self, k: &str, allowed: &[&'static str]) -> Result<Option<&'static str>> {
        match self.str(k, 64)? {
            None => Ok(None),
            Some(s) => allowed
                .iter()
                .find(|a| a.eq_ignore_ascii_case(&s))
                .copied()
                .map(Some)
                .ok_or_else(|| {
                    Error::validation(
                        k,
                        format!("'{}' is not one of {}", clip(&s, 40), allowed.join(", ")),
                    )
                }),
        }
    }

    pub fn req_choice(&self, k: &str, allowed: &[&'static str]) -> Result<&'static str> {
        self.choice(k, allowed)?.ok_or_else(|| {
            Error::validation(k, format!("is required: one of {}", allowed.join(", ")))
        })
    }

    /// A list given as a JSON array of strings, as a string holding one, or as a
    /// comma- or newline-separated string (as the port sends it).
    pub fn list(&self, k: &str) -> Result<Option<Vec<String>>> {
        self.list_within(k, LIST_MAX)
    }

    /// [`Args::list`] of at most `max` bytes in all.
    pub fn list_within(&self, k: &str, max: usize) -> Result<Option<Vec<String>>> {
        let items: Vec<Value> = match self.get(k) {
            None => return Ok(None),
            Some(Value::String(s)) => {
                if s.len() > max {
                    return Err(Error::validation(
                        k,
                        format!("{} bytes given, at most {max} allowed", s.len()),
                    ));
                }
                let t = s.trim();
                if t.starts_with('[') {
                    match serde_json::from_str::<Vec<Value>>(t) {
                        Ok(v) => v,
                        Err(e) => {
                            return Err(Error::validation(
                                k,
                                format!("looks like a JSON array but is not one ({e}); send an array of strings or a comma-separated string"),
                            ))
                        }
                    }
                } else {
                    return Ok(Some(
                        t.split([',', '\n'])
                            .map(|x| x.trim().to_string())
                            .filter(|x| !x.is_empty())
                            .collect(),
                    ));
                }
            }
            Some(Value::Array(a)) => a.clone(),
            Some(v) => {
                return Err(Error::validation(
                    k,
                    format!(
                        "expected an array of strings or a comma-separated string, got {}",
                        type_name(v)
                    ),
                ))
            }
        };
        let mut out = Vec::with_capacity(items.len());
        let mut total = 0;
        for v in &items {
            match v {
                Value::String(s) => {
                    total += s.len();
                    if total > max {
                        return Err(Error::validation(
                            k,
                            format!("list longer than {max} bytes"),
                        ));
                    }
                    let s = s.trim();
                    if !s.is_empty() {
                        out.push(s.to_string());
                    }
                }
                other => {
                    return Err(Error::validation(
                        k,
                        format!("expected strings in the list, got {}", type_name(other)),
                    ))
                }
            }
        }
        Ok(Some(out))
    }

    pub fn ids(&self, k: &str, max: usize) -> Result<Option<Vec<String>>> {
        let Some(raw) = self.list(k)? else {
            return Ok(None);
        };
        if raw.len() > max {
            return Err(Error::validation(
                k,
                format!("{} ids given, at most {max} allowed", raw.len()),
            ));
        }
        raw.iter()
            .map(|s| id::parse(k, s))
            .collect::<Result<Vec<_>, _>>()
            .map_err(Error::from)
            .map(Some)
    }

    /// Tags: comma-separated or array; normalized (trimmed, lower-cased, unique).
    pub fn tags(&self, k: &str) -> Result<Option<Vec<String>>> {
        match self.list(k)? {
            None => Ok(None),
            Some(v) => Ok(Some(normalize_tags(k, &v)?)),
        }
    }

    /// A JSON value given either as itself or as a string holding JSON.
    pub fn json(&self, k: &str, max: usize) -> Result<Option<Value>> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::String(s)) => {
                if s.len() > max {
                    return Err(Error::validation(
                        k,
                        format!("{} bytes given, at most {max} allowed", s.len()),
                    ));
                }
                parse_json(k, s)?
                    .map(Some)
                    .map_err(|e| Error::validation(k, format!("is not valid JSON: {e}")))
            }
            Some(v) => {
                let len = v.to_string().len();
                if len > max {
                    return Err(Error::validation(
                        k,
                        format!("{len} bytes given, at most {max} allowed"),
                    ));
                }
                Ok(Some(v.clone()))
            }
        }
    }

    /// An array of objects, at most `max` of them.
    pub fn objects(&self, k: &str, max: usize) -> Result<Option<Vec<Map<String, Value>>>> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::Array(a)) => {
                if a.len() > max {
                    return Err(Error::validation(
                        k,
                        format!("{} items given, at most {max} allowed", a.len()),
                    ));
                }
                a.iter()
                    .enumerate()
                    .map(|(i, v)| match v {
                        Value::Object(m) => Ok(m.clone()),
                        other => Err(Error::validation(
                            format!("{k}[{i}]"),
                            format!("expected an object, got {}", type_name(other)),
                        )),
                    })
                    .collect::<Result<Vec<_>>>()
                    .map(Some)
            }
            Some(v) => Err(Error::validation(
                k,
                format!("expected an array of objects, got {}", type_name(v)),
            )),
        }
    }

    /// An object, given as itself or as a string holding one.
    pub fn object(&self, k: &str) -> Result<Option<Map<String, Value>>> {
        match self.get(k) {
            None => Ok(None),
            Some(Value::Object(m)) => Ok(Some(m.clone())),
            Some(Value::String(s)) => match parse_json(k, s)? {
                Ok(Value::Object(m)) => Ok(Some(m)),
                _ => Err(Error::validation(k, "must be a JSON object")),
            },
            Some(v) => Err(Error::validation(
                k,
                format!("expected an object, got {}", type_name(v)),
            )),
        }
    }

    /// `limit` and `offset` with their defaults.
    pub fn page(&self, default_limit: i64) -> Result<(i64, i64)> {
        Ok((
            self.int("limit", 1, 500)?.unwrap_or(default_limit),
            self.int("offset", 0, i64::from(i32::MAX))?.unwrap_or(0),
        ))
    }

    /// Fails when any of `names` is given: they do not apply to this operation.
    pub fn forbid(&self, names: &[&str], why: &str) -> Result<()> {
        for n in names {
            if self.has(n) {
                return Err(Error::validation(n, format!("does not apply {why}")));
            }
        }
        Ok(())
    }
}
