//! Templates: reusable section blueprints applied to projects, features and tasks.

use crate::domain::field::Field;
use crate::domain::{id, now, ContainerType, Section, Template, TemplateSection};
use crate::error::{Error, Result};
use crate::service::sections::{self, NewSection};
use crate::service::App;
use crate::store::{lock, template};

pub async fn get(app: &App, id: &str) -> Result<(Template, Vec<TemplateSection>)> {
    let mut c = app.store.read().await?;
    let t = template::require(&mut c, id).await?;
    let s = template::sections(&mut c, id).await?;
    Ok((t, s))
}

pub async fn list(
    app: &App,
    f: &crate::domain::section::TemplateFilter<'_>,
) -> Result<Vec<Template>> {
    let mut c = app.store.read().await?;
    Ok(template::list(&mut c, f).await?)
}

#[derive(Debug, Default)]
pub struct NewTemplate {
    pub name: String,
    pub description: Option<String>,
    pub target: Option<String>,
    pub is_protected: Option<bool>,
    pub created_by: Option<String>,
    pub tags: Option<Vec<String>>,
}

pub async fn create(app: &App, n: NewTemplate) -> Result<Template> {
    let target = n.target.ok_or_else(|| {
        Error::validation(
            Field::TargetEntityType,
            "required for create: PROJECT, FEATURE or TASK",
        )
    })?;
    // A named agent's template is created by the agent: `createdBy` may repeat its
    // name, never give another (README, "Named agents").
    let created_by = match (app.author(), n.created_by) {
        (Some(name), Some(given)) if given != name => {
            return Err(Error::validation(
                Field::CreatedBy,
                format!(
                    "is the agent whose token creates the template, {name}: drop it or send {name}"
                ),
            ))
        }
        (Some(name), _) => Some(name.to_string()),
        (None, given) => given,
    };
    let ts = now();
    let t = Template {
        id: id::new_id(),
        name: n.name,
        description: n.description.unwrap_or_default(),
        target_entity_type: target,
        is_built_in: false,
        is_protected: n.is_protected.unwrap_or(false),
        is_enabled: true,
        created_by,
        tags: n.tags.unwrap_or_default(),
        version: 1,
        created_at: ts.clone(),
        updated_at: ts,
    };
    let mut tx = app.store.write().await?;
    template::insert(&mut tx, &t).await?;
    tx.commit().await?;
    Ok(t)
}

fn refuse_protected(t: &Template, verb: &str) -> Result<()> {
    if t.is_built_in || t.is_protected {
        return Err(Error::invalid(format!(
            "template '{}' is {}: it cannot be {verb}; disable it instead, or create your own",
            t.name,
            if t.is_built_in {
                "built in"
            } else {
                "protected"
            }
        )));
    }
    Ok(())
}

/// Applies `change` to a template and stores it (`version` checked when given).
pub async fn modify(
    app: &App,
    id: &str,
    version: Option<i64>,
    change: impl FnOnce(&mut Template) -> Result<()>,
) -> Result<Template> {
    let mut tx = app.store.write().await?;
    let mut t = template::require(&mut tx, id).await?;
    change(&mut t)?;
    t.updated_at = now();
    t.version = template::update(&mut tx, &t, version).await?;
    tx.commit().await?;
    Ok(t)
}

pub async fn update(app: &App, id: &str, version: Option<i64>, n: NewTemplate) -> Result<Template> {
    modify(app, id, version, |t| {
        let renames = !n.name.is_empty() && n.name != t.name;
        if renames
            || n.target
                .as_ref()
                .is_some_and(|x| *x != t.target_entity_type)
            || n.is_protected == Some(false)
        {
            refuse_protected(t, "renamed, retargeted or unprotected")?;
        }
        if !n.name.is_empty() {
            t.name = n.name;
        }
        if let Some(d) = n.description {
            t.description = d;
        }
        if let Some(x) = n.target {
            t.target_entity_type = x;
        }
        if let Some(p) = n.is_protected {
            t.is_protected = p;
        }
        if let Some(tags) = n.tags {
            t.tags = tags;
        }
        Ok(())
    })
    .await
}

pub async fn delete(app: &App, id: &str, version: Option<i64>) -> Result<()> {
    let mut tx = app.store.write().await?;
    let t = template::require(&mut tx, id).await?;
    refuse_protected(&t, "deleted")?;
    lock::delete(&mut tx, lock::TEMPLATES, id, version).await?;
    tx.commit().await?;
    Ok(())
}

/// Adds a section to a template; answers it and the template's new version.
pub async fn add_section(
    app: &App,
    template_id: &str,
    mut s: TemplateSection,
) -> Result<(TemplateSection, i64)> {
    let mut tx = app.store.write().await?;
    let t = template::require(&mut tx, template_id).await?;
    refuse_protected(&t, "changed")?;
    if s.ordinal < 0 {
        s.ordinal = template::next_section_ordinal(&mut tx, template_id).await?;
    }
    s.id = id::new_id();
    s.template_id = template_id.to_string();
    template::add_section(&mut tx, &s).await?;
    let version = lock::touch(&mut tx, lock::TEMPLATES, template_id, &now()).await?;
    tx.commit().await?;
    Ok((s, version))
}

/// Creates the template's sections on an entity, after its existing ones; a section
/// whose title the entity already has is skipped (answered by title).
pub async fn apply(
    app: &App,
    template_id: &str,
    ct: ContainerType,
    entity_id: &str,
) -> Result<(Vec<Section>, Vec<String>)> {
    let (t, blueprint) = get(app, template_id).await?;
    if !t.is_enabled {
        return Err(Error::invalid(format!(
            "template '{}' is disabled: enable it first",
            t.name
        )));
    }
    if t.target_entity_type != ct.upper() {
        return Err(Error::invalid(format!(
            "template '{}' is for {} entities, not {}",
            t.name,
            t.target_entity_type,
            ct.upper()
        )));
    }
    let new = blueprint
        .into_iter()
        .map(|b| NewSection {
            title: b.title,
            usage_description: Some(b.usage_description),
            content: Some(b.content_sample),
            content_format: Some(b.content_format),
            ordinal: None,
            tags: None,
        })
        .collect();
    sections::add_missing(app, ct, entity_id, new).await
}
