//! The response envelope every tool answers with:
//! `{success, message, data?, error?: {code, details?}, metadata: {timestamp, version}}`.
//! A failure's text (what went wrong and what to do next) is its `message`, said
//! once: `error` carries what a program branches on, the code and the details.

use serde_json::{json, Map, Value};

use crate::domain::container::Dependency;
use crate::domain::now;
use crate::error::{Details, Error};

/// A successful tool answer before it is wrapped.
pub struct Reply {
    pub message: String,
    pub data: Value,
    /// Set when the call stopped part-way (a command run): answered as a failure
    /// that still carries `data` (what ran, what failed, what was skipped).
    pub partial: Option<Error>,
}

impl Reply {
    pub fn new(message: impl Into<String>, data: Value) -> Self {
        Reply {
            message: message.into(),
            data,
            partial: None,
        }
    }

    /// A call that stopped on `e` after doing some of its work, reported in `data`.
    pub fn partial(e: Error, data: Value) -> Self {
        Reply {
            message: e.to_string(),
            data,
            partial: Some(e),
        }
    }
}

fn metadata() -> Value {
    json!({ "timestamp": now(), "version": env!("CARGO_PKG_VERSION") })
}

pub fn success(r: Reply) -> Value {
    let mut m = Map::new();
    m.insert("success".into(), Value::Bool(true));
    m.insert("message".into(), Value::String(r.message));
    if !r.data.is_null() {
        m.insert("data".into(), r.data);
    }
    m.insert("metadata".into(), metadata());
    Value::Object(m)
}

pub fn failure(e: &Error) -> Value {
    let mut err = Map::new();
    err.insert("code".into(), Value::String(e.code().into()));
    if let Some(d) = details(e) {
        err.insert("details".into(), d);
    }
    json!({ "success": false, "message": e.to_string(), "error": Value::Object(err), "metadata": metadata() })
}

/// A partial failure: the call stopped on `e` but some work is reported in `data`.
pub fn failure_with_data(e: &Error, data: Value) -> Value {
    let mut v = failure(e);
    if let Some(m) = v.as_object_mut() {
        m.insert("data".into(), data);
    }
    v
}

/// An error's `details`: what it carries, by the wire's names.
pub fn details(e: &Error) -> Option<Value> {
    Some(match e {
        Error::Validation {
            parameter: Some(p), ..
        } => json!({ "parameter": p }),
        Error::Validation {
            parameter: None, ..
        } => return None,
        Error::NotFound { entity, id } => json!({ "entity": entity, "id": id }),
        Error::NotFoundNear {
            entity,
            id,
            nearest,
            ..
        } => json!({ "entity": entity, "id": id, "nearest": nearest }),
        Error::ValidationDetails {
            parameter, details, ..
        } => {
            let mut v = facts(details);
            if let Some(m) = v.as_object_mut() {
                m.insert("parameter".into(), Value::String(parameter.clone()));
            }
            v
        }
        Error::Conflict {
            entity,
            id,
            current,
            sent,
            ..
        } => json!({ "entity": entity, "id": id, "currentVersion": current, "sentVersion": sent }),
        Error::Invariant { details, .. }
        | Error::InvalidOperation { details, .. }
        | Error::Blocked { details, .. } => return details.as_ref().map(facts),
        Error::Forbidden { agent, .. } => {
            json!({ "agent": agent, "role": "read", "retryable": false })
        }
        Error::Busy => json!({ "retryable": true }),
        Error::StorageFull | Error::ReadOnly => json!({ "retryable": false }),
        Error::Unexpected(i) => json!({ "errorId": i.id() }),
    })
}

fn facts(d: &Details) -> Value {
    match d {
        Details::CycleThrough { parent_id } => json!({ "parentId": parent_id }),
        Details::LastReference {
            entity_id,
            reference_id,
        } => json!({ "entityId": entity_id, "referenceId": reference_id }),
        Details::SymbolMissing {
            symbol,
            document_path,
            symbols,
        } => json!({ "symbol": symbol, "documentPath": document_path, "symbols": symbols }),
        Details::SymbolAmbiguous {
            symbol,
            document_path,
            candidates,
        } => json!({
            "symbol": symbol, "documentPath": document_path,
            "candidates": candidates.iter().map(|(p, a, b, k)| json!({
                "namePath": p, "startLine": a, "endLine": b, "kindName": k,
            })).collect::<Vec<_>>(),
        }),
        Details::AnchorMissing {
            anchor,
            document_path,
        } => json!({ "anchor": anchor, "documentPath": document_path }),
        Details::DocumentMissing { document_path } => {
            json!({ "documentPath": document_path, "staleReason": "document_missing" })
        }
        Details::AttachedEntities(list) => json!({
            "attachedEntities": list.iter().map(|(id, name)| json!({ "id": id, "name": name })).collect::<Vec<_>>()
        }),
        Details::CategoryExists { category_id } => json!({ "categoryId": category_id }),
        Details::Children(list) => json!({
            "children": list.iter().map(|(id, name, scope)| json!({ "id": id, "name": name, "scope": scope })).collect::<Vec<_>>()
        }),
        Details::OpenTasks(n) => json!({ "openTasks": n }),
        Details::Status(s) => json!({ "status": s.as_str() }),
        Details::Blockers(b) => json!({ "blockers": blockers(b) }),
        Details::Stranded(groups) => {
            let mut m = Map::new();
            for (group, count, to) in groups {
                m.insert(
                    group.clone(),
                    json!({ "count": count, "wouldMoveTo": to.as_str() }),
                );
            }
            json!({ "stranded": m })
        }
        Details::MoleculeProject {
            molecule_project_id,
            project_id,
        } => json!({ "moleculeProjectId": molecule_project_id, "projectId": project_id }),
        Details::RelatedProject { id, project_id } => json!({ "id": id, "projectId": project_id }),
        Details::Sections { missing, foreign } => {
            json!({ "missing": missing, "notSectionsOfEntity": foreign })
        }
        Details::Contents { features, tasks } => json!({ "features": features, "tasks": tasks }),
        Details::Query(e, limit) => crate::mcp::ontology::view::query_error(e, *limit),
        Details::Inconsistent(c) => crate::mcp::ontology::view::clash(c),
        Details::Quality {
            score,
            min,
            missing,
        } => json!({
            "qualityScore": round2(*score),
            "minProposalQuality": round2(*min),
            "missing": missing.iter().map(|(tier, field)| json!({"tier": tier, "field": field})).collect::<Vec<_>>(),
        }),
        Details::Problems(ps) => {
            json!({ "problems": ps.iter().map(crate::mcp::ontology::view::problem).collect::<Vec<_>>() })
        }
    }
}

/// A score as the wire shows it: two decimals.
pub fn round2(x: f32) -> f64 {
    (f64::from(x) * 100.0).round() / 100.0
}

/// Open blockers as an agent reads them: the blocking item (or `NO_OP`), its name,
/// status and the reason given.
pub fn blockers(b: &[Dependency]) -> Vec<Value> {
    b.iter()
        .map(|e| match &e.from_id {
            Some(f) => json!({ "id": f, "name": e.other_name, "status": e.other_status, "reason": e.reason }),
            None => json!({ "id": "NO_OP", "reason": e.reason }),
        })
        .collect()
}
