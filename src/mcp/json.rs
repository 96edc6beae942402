//! Domain values turned into the JSON agents read, by hand, so a rename in the domain
//! cannot silently change the public answer. Absent optional fields are left out.

use serde_json::{json, Map, Value};

use crate::domain::container::Dependency as Edge;
use crate::domain::{Item, ItemKind, Project, Section, Template, TemplateSection, Touched};

fn put_opt(m: &mut Map<String, Value>, k: &str, v: &Option<String>) {
    if let Some(s) = v {
        m.insert(k.into(), Value::String(s.clone()));
    }
}

pub fn project(p: &Project) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(p.id));
    m.insert("name".into(), json!(p.name));
    m.insert("summary".into(), json!(p.summary));
    put_opt(&mut m, "description", &p.description);
    m.insert("tags".into(), json!(p.tags));
    m.insert("version".into(), json!(p.version));
    m.insert("createdAt".into(), json!(p.created_at));
    m.insert("updatedAt".into(), json!(p.updated_at));
    Value::Object(m)
}

pub fn item(i: &Item) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(i.id));
    put_opt(&mut m, "projectId", &i.project_id);
    let name_key = match i.kind {
        ItemKind::Task => {
            put_opt(&mut m, "featureId", &i.feature_id);
            "title"
        }
        ItemKind::Feature => "name",
    };
    m.insert(name_key.into(), json!(i.name));
    m.insert("summary".into(), json!(i.summary));
    put_opt(&mut m, "description", &i.description);
    m.insert("status".into(), json!(i.status.as_str()));
    put_opt(&mut m, "statusReason", &i.status_reason);
    m.insert("priority".into(), json!(i.priority.as_str()));
    if let Some(c) = i.complexity {
        m.insert("complexity".into(), json!(c));
    }
    m.insert("tags".into(), json!(i.tags));
    if !i.blocked_by.is_empty() {
        m.insert("blockedBy".into(), json!(i.blocked_by));
    }
    m.insert("version".into(), json!(i.version));
    m.insert("createdAt".into(), json!(i.created_at));
    m.insert("updatedAt".into(), json!(i.updated_at));
    Value::Object(m)
}

/// A short reference to an item, for lists inside other answers.
pub fn item_ref(i: &Item) -> Value {
    let name_key = if i.kind == ItemKind::Task {
        "title"
    } else {
        "name"
    };
    let mut v =
        json!({ "id": i.id, name_key: i.name, "status": i.status.as_str(), "version": i.version });
    if !i.blocked_by.is_empty() {
        v["blockedBy"] = json!(i.blocked_by);
    }
    v
}

pub fn section(s: &Section, include_content: bool) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(s.id));
    m.insert("entityType".into(), json!(s.entity_type));
    m.insert("entityId".into(), json!(s.entity_id));
    m.insert("title".into(), json!(s.title));
    m.insert("usageDescription".into(), json!(s.usage_description));
    if include_content {
        m.insert("content".into(), json!(s.content));
    }
    m.insert("contentFormat".into(), json!(s.content_format));
    m.insert("ordinal".into(), json!(s.ordinal));
    m.insert("tags".into(), json!(s.tags));
    m.insert("version".into(), json!(s.version));
    m.insert("createdAt".into(), json!(s.created_at));
    m.insert("updatedAt".into(), json!(s.updated_at));
    Value::Object(m)
}

pub fn template(t: &Template) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(t.id));
    m.insert("name".into(), json!(t.name));
    m.insert("description".into(), json!(t.description));
    m.insert("targetEntityType".into(), json!(t.target_entity_type));
    m.insert("isBuiltIn".into(), json!(t.is_built_in));
    m.insert("isProtected".into(), json!(t.is_protected));
    m.insert("isEnabled".into(), json!(t.is_enabled));
    put_opt(&mut m, "createdBy", &t.created_by);
    m.insert("tags".into(), json!(t.tags));
    m.insert("version".into(), json!(t.version));
    m.insert("createdAt".into(), json!(t.created_at));
    m.insert("updatedAt".into(), json!(t.updated_at));
    Value::Object(m)
}

pub fn template_section(s: &TemplateSection) -> Value {
    json!({
        "id": s.id,
        "title": s.title,
        "usageDescription": s.usage_description,
        "contentSample": s.content_sample,
        "contentFormat": s.content_format,
        "isRequired": s.is_required,
        "ordinal": s.ordinal,
    })
}

/// A dependency edge; `other` names the end that is not the item asked about.
pub fn edge(e: &Edge, other_is_from: bool) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(e.id));
    m.insert(
        "fromId".into(),
        e.from_id.as_ref().map_or(json!("NO_OP"), |f| json!(f)),
    );
    m.insert("toId".into(), json!(e.to_id));
    m.insert("type".into(), json!(e.kind));
    put_opt(&mut m, "reason", &e.reason);
    if other_is_from && e.from_id.is_none() {
        // A NO_OP blocker has no other end to describe.
    } else {
        put_opt(&mut m, "otherName", &e.other_name);
        put_opt(&mut m, "otherStatus", &e.other_status);
    }
    m.insert("createdAt".into(), json!(e.created_at));
    Value::Object(m)
}

pub fn counts(rows: &[(String, i64)]) -> Value {
    let mut m = Map::new();
    let mut total = 0;
    for (k, n) in rows {
        m.insert(k.clone(), json!(n));
        total += n;
    }
    m.insert("total".into(), json!(total));
    Value::Object(m)
}

/// Rows a write changed besides the one named, with their new versions.
pub fn touched(t: &[Touched]) -> Value {
    Value::Array(
        t.iter()
            .map(|x| json!({ "entity": x.entity, "id": x.id, "version": x.version }))
            .collect(),
    )
}
