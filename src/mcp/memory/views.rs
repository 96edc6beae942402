//! The memory's values as the JSON agents read, written by hand so a rename in the
//! core cannot silently change an answer. Absent optional fields are left out; times
//! are RFC 3339 UTC with milliseconds.

use std::collections::HashMap;

use serde_json::{json, Map, Number, Value};

use crate::domain::memory::change::Action;
use crate::domain::memory::model::{
    AtomValue, Context, MemoryAtom, MemoryEdge, NodeRef, Reference, Subject, SubjectDetails,
    SubjectId, SubjectKind,
};
use crate::domain::memory::raw::Raw;
use crate::domain::memory::recall::{ScopeMatch, UsageFact};
use crate::domain::memory::validate::{detail_fields, subject_detail_fields};
use crate::domain::memory::wire::format_time;
use crate::service::memory::diary::Entry;

pub type Names = HashMap<SubjectId, (SubjectKind, String)>;

/// A raw value as JSON.
pub fn raw(v: &Raw) -> Value {
    match v {
        Raw::Null => Value::Null,
        Raw::Bool(b) => Value::Bool(*b),
        Raw::Number(n) => {
            if n.fract() == 0.0 && n.abs() < 9e15 {
                json!(*n as i64)
            } else {
                Number::from_f64(*n).map_or(Value::Null, Value::Number)
            }
        }
        Raw::Text(s) => Value::String(s.clone()),
        Raw::List(l) => Value::Array(l.iter().map(raw).collect()),
        Raw::Map(m) => Value::Object(m.iter().map(|(k, v)| (k.clone(), raw(v))).collect()),
    }
}

/// JSON arguments as the core's raw tree.
pub fn to_raw(v: &Value) -> Raw {
    match v {
        Value::Null => Raw::Null,
        Value::Bool(b) => Raw::Bool(*b),
        Value::Number(n) => Raw::Number(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => Raw::Text(s.clone()),
        Value::Array(a) => Raw::List(a.iter().map(to_raw).collect()),
        Value::Object(m) => Raw::Map(m.iter().map(|(k, v)| (k.clone(), to_raw(v))).collect()),
    }
}

/// An object's members as the core's named fields.
pub fn fields(m: &Map<String, Value>) -> Vec<(String, Raw)> {
    m.iter().map(|(k, v)| (k.clone(), to_raw(v))).collect()
}

fn subject_ref(id: SubjectId, names: &Names) -> Value {
    match names.get(&id) {
        Some((kind, name)) => json!({ "id": id.to_string(), "kind": kind.as_wire(), "name": name }),
        None => json!({ "id": id.to_string() }),
    }
}

fn context(c: Context, names: &Names) -> Value {
    match c {
        Context::Global => json!("global"),
        Context::In(s) => subject_ref(s, names),
    }
}

fn put_value(m: &mut Map<String, Value>, v: &Option<AtomValue>, names: &Names) {
    match v {
        None => {}
        Some(AtomValue::Text(t)) => {
            m.insert("value".into(), json!(t));
        }
        Some(AtomValue::Number(n)) => {
            m.insert("value".into(), raw(&Raw::Number(*n)));
        }
        Some(AtomValue::Bool(b)) => {
            m.insert("value".into(), json!(b));
        }
        Some(AtomValue::Subject(s)) => {
            m.insert("valueSubject".into(), subject_ref(*s, names));
        }
    }
}

fn put_opt(m: &mut Map<String, Value>, k: &str, v: &Option<String>) {
    if let Some(s) = v {
        m.insert(k.into(), json!(s));
    }
}

fn put_time(m: &mut Map<String, Value>, k: &str, v: Option<time::OffsetDateTime>) {
    if let Some(t) = v {
        m.insert(k.into(), json!(format_time(t)));
    }
}

/// The few fields an agent needs to use an atom: for lists and recall.
pub fn atom_brief(a: &MemoryAtom, version: i64, names: &Names) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("id".into(), json!(a.id.to_string()));
    m.insert("type".into(), json!(a.atom_type().as_wire()));
    m.insert("statement".into(), json!(a.statement));
    if let Some(p) = &a.predicate {
        m.insert("predicate".into(), json!(p.as_str()));
    }
    put_value(&mut m, &a.value, names);
    if let Some(s) = a.about {
        m.insert("about".into(), subject_ref(s, names));
    }
    m.insert("context".into(), context(a.context, names));
    m.insert("status".into(), json!(a.status.as_wire()));
    m.insert("confidence".into(), json!(a.confidence));
    put_time(&mut m, "nextReviewAt", a.next_review_at);
    m.insert("version".into(), json!(version));
    m
}

/// An atom with every field.
pub fn atom(a: &MemoryAtom, version: i64, names: &Names) -> Value {
    let mut m = atom_brief(a, version, names);
    m.insert("validatedConfidence".into(), json!(a.validated_confidence));
    m.insert("importance".into(), json!(a.importance.as_wire()));
    put_opt(&mut m, "title", &a.title);
    put_opt(&mut m, "summary", &a.summary);
    put_opt(&mut m, "notes", &a.notes);
    put_opt(&mut m, "resolution", &a.resolution);
    if !a.tags.is_empty() {
        m.insert("tags".into(), json!(a.tags));
    }
    put_opt(&mut m, "author", &a.author);
    if let Some(c) = &a.confirmation {
        m.insert("confirmedBy".into(), json!(c.by));
        m.insert("confirmedAt".into(), json!(format_time(c.at)));
    }
    put_time(&mut m, "validFrom", a.valid_from);
    put_time(&mut m, "validTo", a.valid_to);
    put_time(&mut m, "recordedAt", Some(a.recorded_at));
    put_time(&mut m, "retiredAt", a.retired_at);
    put_time(&mut m, "lastValidatedAt", a.last_validated_at);
    if let Some(d) = a.review_interval_days {
        m.insert("reviewIntervalDays".into(), json!(d));
    }
    put_opt(&mut m, "claimKey", &a.claim_key);
    let f: Map<String, Value> = detail_fields(&a.details)
        .iter()
        .map(|(k, v)| (k.to_string(), raw(v)))
        .collect();
    m.insert("fields".into(), Value::Object(f));
    Value::Object(m)
}

pub fn subject(s: &Subject, version: i64) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(s.id.to_string()));
    m.insert("kind".into(), json!(s.kind.as_wire()));
    m.insert("name".into(), json!(s.name));
    m.insert("aliases".into(), json!(s.aliases));
    put_opt(&mut m, "title", &s.title);
    put_opt(&mut m, "summary", &s.summary);
    if !s.tags.is_empty() {
        m.insert("tags".into(), json!(s.tags));
    }
    if !matches!(s.details, SubjectDetails::None) {
        let f: Map<String, Value> = subject_detail_fields(&s.details)
            .iter()
            .map(|(k, v)| (k.to_string(), raw(v)))
            .collect();
        if !f.is_empty() {
            m.insert("fields".into(), Value::Object(f));
        }
    }
    if let Some(into) = s.merged_into {
        m.insert("mergedInto".into(), json!(into.to_string()));
    }
    m.insert("version".into(), json!(version));
    m.insert("createdAt".into(), json!(format_time(s.created_at)));
    m.insert("updatedAt".into(), json!(format_time(s.updated_at)));
    Value::Object(m)
}

pub fn subject_brief(s: &Subject) -> Value {
    json!({ "id": s.id.to_string(), "kind": s.kind.as_wire(), "name": s.name })
}

pub fn reference(r: &Reference) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(r.id.to_string()));
    m.insert("refType".into(), json!(r.ref_type.as_wire()));
    put_opt(&mut m, "title", &r.title);
    put_opt(&mut m, "uri", &r.uri);
    if !r.authors.is_empty() {
        m.insert("authors".into(), json!(r.authors));
    }
    put_time(&mut m, "publishedAt", r.published_at);
    put_time(&mut m, "retrievedAt", Some(r.retrieved_at));
    put_opt(&mut m, "snippet", &r.snippet);
    put_opt(&mut m, "hash", &r.hash);
    m.insert(
        "strength".into(),
        json!(crate::domain::memory::evidence::strength(r.ref_type).as_str()),
    );
    Value::Object(m)
}

pub fn action(a: &Action) -> Value {
    json!({
        "kind": a.kind.as_str(),
        "reason": a.reason,
        "changes": a.changes.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
    })
}

pub fn actions(a: &[Action]) -> Value {
    Value::Array(a.iter().map(action).collect())
}

fn node(n: &NodeRef, names: &Names) -> Value {
    match n {
        NodeRef::Atom(a) => json!({ "atom": a.to_string() }),
        NodeRef::Subject(s) => {
            let mut v = subject_ref(*s, names);
            v["node"] = json!("subject");
            v
        }
        NodeRef::Reference(r) => json!({ "reference": r.to_string() }),
    }
}

pub fn edge(e: &MemoryEdge, names: &Names) -> Value {
    json!({ "from": node(&e.from, names), "kind": e.kind.as_wire(), "to": node(&e.to, names) })
}

pub fn scope(s: ScopeMatch) -> &'static str {
    match s {
        ScopeMatch::Project => "project",
        ScopeMatch::Near => "near",
        ScopeMatch::Org => "org",
        ScopeMatch::Global => "global",
    }
}

pub fn usage(f: &UsageFact) -> Value {
    json!({
        "subject": f.subject.to_string(),
        "predicate": f.predicate,
        "statement": f.statement,
        "projects": f.projects.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
        "count": f.projects.len(),
        "derived": true,
    })
}

pub fn entry(e: &Entry) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(e.entry.id.to_string()));
    put_opt(&mut m, "session", &e.entry.session);
    put_opt(&mut m, "taskId", &e.task_id);
    put_opt(&mut m, "projectId", &e.project_id);
    for (k, v) in [
        ("accomplishments", &e.entry.accomplishments),
        ("decisions", &e.entry.decisions),
        ("challenges", &e.entry.challenges),
        ("learnings", &e.entry.learnings),
    ] {
        if !v.is_empty() {
            m.insert(k.into(), json!(v));
        }
    }
    m.insert("recordedAt".into(), json!(format_time(e.entry.recorded_at)));
    Value::Object(m)
}
