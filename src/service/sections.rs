//! Sections on projects, features and tasks.

use std::collections::HashSet;

use crate::domain::field::Field;
use crate::domain::{id, now, ContainerType, Section};
use crate::error::{Details, Error, Result};
use crate::service::App;
use crate::store::{item, lock, project, section, Conn};

#[derive(Debug, Default, Clone)]
pub struct NewSection {
    pub title: String,
    pub usage_description: Option<String>,
    pub content: Option<String>,
    pub content_format: Option<String>,
    pub ordinal: Option<i64>,
    pub tags: Option<Vec<String>>,
}

pub type Patch = NewSection;

pub async fn require_entity(c: &mut Conn, ct: ContainerType, id: &str) -> Result<()> {
    let found = match ct.item_kind() {
        None => project::exists(c, id).await?,
        Some(kind) => item::get(c, kind, id).await?.is_some(),
    };
    if found {
        Ok(())
    } else {
        Err(Error::not_found(ct.as_str(), id))
    }
}

async fn insert_all(
    c: &mut Conn,
    ct: ContainerType,
    entity_id: &str,
    new: Vec<NewSection>,
) -> Result<Vec<Section>> {
    require_entity(c, ct, entity_id).await?;
    let mut next = section::next_ordinal(c, entity_id).await?;
    let ts = now();
    let mut out = Vec::with_capacity(new.len());
    for n in new {
        let ordinal = match n.ordinal {
            Some(o) => o,
            None => {
                next += 1;
                next - 1
            }
        };
        next = next.max(ordinal + 1);
        let s = Section {
            id: id::new_id(),
            entity_type: ct.upper().to_string(),
            entity_id: entity_id.to_string(),
            title: n.title,
            usage_description: n.usage_description.unwrap_or_default(),
            content: n.content.unwrap_or_default(),
            content_format: n.content_format.unwrap_or_else(|| "MARKDOWN".into()),
            ordinal,
            tags: n.tags.unwrap_or_default(),
            version: 1,
            created_at: ts.clone(),
            updated_at: ts.clone(),
        };
        section::insert(c, &s).await?;
        out.push(s);
    }
    Ok(out)
}

/// Adds a template's sections to an entity, skipping those whose title (in any
/// case) the entity already has, so applying a template twice adds nothing the
/// second time. Answers (added, titles skipped).
pub async fn add_missing(
    app: &App,
    ct: ContainerType,
    entity_id: &str,
    new: Vec<NewSection>,
) -> Result<(Vec<Section>, Vec<String>)> {
    let mut tx = app.store.write().await?;
    require_entity(&mut tx, ct, entity_id).await?;
    let have: Vec<String> = section::list(&mut tx, entity_id, &[], &[])
        .await?
        .into_iter()
        .map(|s| s.title.to_lowercase())
        .collect();
    let (fresh, skipped): (Vec<NewSection>, Vec<NewSection>) = new
        .into_iter()
        .partition(|n| !have.contains(&n.title.to_lowercase()));
    let out = insert_all(&mut tx, ct, entity_id, fresh).await?;
    tx.commit().await?;
    Ok((out, skipped.into_iter().map(|n| n.title).collect()))
}

/// Adds sections to an entity, all or none.
pub async fn add(
    app: &App,
    ct: ContainerType,
    entity_id: &str,
    new: Vec<NewSection>,
) -> Result<Vec<Section>> {
    let mut tx = app.store.write().await?;
    let out = insert_all(&mut tx, ct, entity_id, new).await?;
    tx.commit().await?;
    Ok(out)
}

pub async fn update(app: &App, id: &str, version: i64, p: Patch) -> Result<Section> {
    let mut tx = app.store.write().await?;
    let mut s = section::require(&mut tx, id).await?;
    if !p.title.is_empty() {
        s.title = p.title;
    }
    if let Some(u) = p.usage_description {
        s.usage_description = u;
    }
    if let Some(c) = p.content {
        s.content = c;
    }
    if let Some(f) = p.content_format {
        s.content_format = f;
    }
    if let Some(o) = p.ordinal {
        s.ordinal = o;
    }
    if let Some(t) = p.tags {
        s.tags = t;
    }
    s.updated_at = now();
    s.version = section::update(&mut tx, &s, version).await?;
    tx.commit().await?;
    Ok(s)
}

pub async fn delete(app: &App, ids: &[String], version: Option<i64>) -> Result<()> {
    let mut tx = app.store.write().await?;
    for id in ids {
        lock::delete(&mut tx, lock::SECTIONS, id, version).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Puts an entity's sections in the given order; the ids must be exactly its sections.
pub async fn reorder(
    app: &App,
    ct: ContainerType,
    entity_id: &str,
    ordered: &[String],
) -> Result<Vec<Section>> {
    let mut tx = app.store.write().await?;
    require_entity(&mut tx, ct, entity_id).await?;
    let current = section::list(&mut tx, entity_id, &[], &[]).await?;
    let have: HashSet<&str> = current.iter().map(|s| s.id.as_str()).collect();
    let given: HashSet<&str> = ordered.iter().map(String::as_str).collect();
    let missing: Vec<&str> = have.difference(&given).copied().collect();
    let foreign: Vec<&str> = given.difference(&have).copied().collect();
    if !missing.is_empty() || !foreign.is_empty() || given.len() != ordered.len() {
        return Err(Error::InvalidOperation {
            message: format!(
                "{} must list each section of {} {entity_id} exactly once ({} missing, {} not its sections, {} repeated)",
                Field::OrderedIds,
                ct.as_str(),
                missing.len(),
                foreign.len(),
                ordered.len() - given.len()
            ),
            details: Some(Details::Sections {
                missing: missing.iter().map(|s| s.to_string()).collect(),
                foreign: foreign.iter().map(|s| s.to_string()).collect(),
            }),
        });
    }
    let ts = now();
    for (i, id) in ordered.iter().enumerate() {
        section::set_ordinal(&mut tx, id, i as i64, &ts).await?;
    }
    let out = section::list(&mut tx, entity_id, &[], &[]).await?;
    tx.commit().await?;
    Ok(out)
}

pub async fn list(
    app: &App,
    ct: ContainerType,
    entity_id: &str,
    tags: &[String],
    ids: &[String],
) -> Result<Vec<Section>> {
    let mut c = app.store.read().await?;
    require_entity(&mut c, ct, entity_id).await?;
    Ok(section::list(&mut c, entity_id, tags, ids).await?)
}
