//! Code-ontology values turned into the JSON agents read, by hand (field names are
//! the toolset's, in camelCase), so a domain rename cannot silently change an answer.

use serde_json::{json, Map, Value};

use crate::domain::code::{Category, Entity, Hunk, Reference};
use crate::domain::container::clip;
use crate::lsp::{kind_name, name_path, Symbol};
use crate::service::code::analysis::Staleness;

pub fn category(c: &Category) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(c.id));
    m.insert("name".into(), json!(c.name));
    m.insert("scope".into(), json!(c.scope.as_str()));
    if let Some(d) = &c.description {
        m.insert("description".into(), json!(d));
    }
    m.insert("version".into(), json!(c.version));
    Value::Object(m)
}

pub fn entity(e: &Entity) -> Value {
    json!({
        "id": e.id, "projectId": e.project_id, "name": e.name, "description": e.description,
        "scope": e.scope.as_str(), "version": e.version, "createdAt": e.created_at, "updatedAt": e.updated_at
    })
}

/// A short entity for lists: id, name, scope, version.
pub fn entity_ref(e: &Entity) -> Value {
    json!({ "id": e.id, "name": e.name, "scope": e.scope.as_str(), "version": e.version })
}

pub fn summary(e: &Entity, full: bool) -> Value {
    json!({
        "id": e.id, "name": e.name, "scope": e.scope.as_str(),
        "description": if full { e.description.clone() } else { clip(&e.description, 160) },
    })
}

pub fn reference(r: &Reference) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(r.id));
    m.insert("kind".into(), json!(r.kind.as_str()));
    m.insert("documentPath".into(), json!(r.document_path));
    m.insert("startLine".into(), json!(r.start_line));
    m.insert("endLine".into(), json!(r.end_line));
    if let Some(s) = &r.lsp_symbol {
        m.insert("lspSymbol".into(), json!(s));
    }
    if let Some(k) = r.lsp_kind {
        m.insert("lspKind".into(), json!(k));
    }
    if let Some(a) = &r.anchor {
        m.insert("anchor".into(), json!(a));
    }
    m.insert("description".into(), json!(r.description));
    m.insert("contentType".into(), json!(r.content_type));
    m.insert("commitSha".into(), json!(r.commit_sha));
    m.insert("blobSha".into(), json!(r.blob_sha));
    m.insert("version".into(), json!(r.version));
    m.insert("createdAt".into(), json!(r.created_at));
    m.insert("updatedAt".into(), json!(r.updated_at));
    Value::Object(m)
}

pub fn hunk(h: &Hunk, with_text: bool) -> Value {
    let mut v = json!({
        "oldStart": h.old_start, "oldLines": h.old_lines, "newStart": h.new_start, "newLines": h.new_lines
    });
    if with_text {
        v["context"] = json!(clip(&h.text, 2000));
    }
    v
}

pub fn symbol(s: &Symbol) -> Value {
    let mut v = json!({
        "name": s.name, "kind": s.kind, "kindName": kind_name(s.kind),
        "startLine": s.start_line, "endLine": s.end_line
    });
    if s.path.len() > 1 {
        v["namePath"] = json!(name_path(s));
    }
    v
}

/// A tracked reference in an analysis, with its holders and staleness.
pub fn tracked(s: &Staleness, holders: &[(String, String, String)], diffs: bool) -> Value {
    let r = &s.reference;
    let mut m = Map::new();
    m.insert("id".into(), json!(r.id));
    m.insert("kind".into(), json!(r.kind.as_str()));
    // One `entityId` per reference, the field agents first read; a shared reference
    // lists its other holders too.
    let first = holders.first();
    m.insert("entityId".into(), json!(first.map(|h| &h.0)));
    m.insert("entityName".into(), json!(first.map(|h| &h.1)));
    if holders.len() > 1 {
        m.insert(
            "entities".into(),
            Value::Array(
                holders
                    .iter()
                    .map(|(id, name, _)| json!({"id": id, "name": name}))
                    .collect(),
            ),
        );
    }
    m.insert("startLine".into(), json!(s.now.0));
    m.insert("endLine".into(), json!(s.now.1));
    if s.moved() {
        m.insert(
            "movedFrom".into(),
            json!({"startLine": r.start_line, "endLine": r.end_line}),
        );
    }
    if let Some(x) = &r.lsp_symbol {
        m.insert("lspSymbol".into(), json!(x));
    }
    if let Some(x) = &r.anchor {
        m.insert("anchor".into(), json!(x));
    }
    m.insert("referenceCommit".into(), json!(r.commit_sha));
    m.insert("version".into(), json!(r.version));
    m.insert("isStale".into(), json!(s.reason.is_some()));
    if let Some(reason) = s.reason {
        m.insert("staleReason".into(), json!(reason));
    }
    if let Some(t) = &s.renamed_to {
        m.insert("renamedTo".into(), json!(t));
    }
    if let Some((p, a, b, score)) = &s.suggested_symbol {
        m.insert(
            "suggestedSymbol".into(),
            json!({"namePath": p, "startLine": a, "endLine": b,
                   "similarity": (f64::from(*score) * 100.0).round() / 100.0}),
        );
    }
    if let Some((a, b)) = s.suggested {
        m.insert(
            "suggestedRange".into(),
            json!({"startLine": a, "endLine": b}),
        );
    }
    if diffs {
        m.insert(
            "affectedHunks".into(),
            Value::Array(s.affected.iter().map(|h| hunk(h, false)).collect()),
        );
    }
    Value::Object(m)
}
