//! Templates and their section blueprints.

use sqlx::AssertSqlSafe;

use crate::domain::section::TemplateFilter;
use crate::domain::{Template, TemplateSection};
use crate::store::{lock, placeholders, tag, Conn, Flag};
use crate::store::{Error, Result};

struct Row {
    id: String,
    name: String,
    description: String,
    target_entity_type: String,
    is_built_in: bool,
    is_protected: bool,
    is_enabled: bool,
    created_by: Option<String>,
    version: i64,
    created_at: String,
    updated_at: String,
}

crate::store::from_row!(Row {
    id,
    name,
    description,
    target_entity_type,
    is_built_in: flag,
    is_protected: flag,
    is_enabled: flag,
    created_by,
    version,
    created_at,
    updated_at
});

impl Row {
    fn into_template(self, tags: Vec<String>) -> Template {
        Template {
            id: self.id,
            name: self.name,
            description: self.description,
            target_entity_type: self.target_entity_type,
            is_built_in: self.is_built_in,
            is_protected: self.is_protected,
            is_enabled: self.is_enabled,
            created_by: self.created_by,
            tags,
            version: self.version,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

struct SectionRow {
    id: String,
    template_id: String,
    title: String,
    usage_description: String,
    content_sample: String,
    content_format: String,
    is_required: bool,
    ordinal: i64,
}

crate::store::from_row!(SectionRow {
    id,
    template_id,
    title,
    usage_description,
    content_sample,
    content_format,
    is_required: flag,
    ordinal
});

const COLS: &str =
    "id, name, description, target_entity_type, is_built_in, is_protected, is_enabled, created_by, version, created_at, updated_at";

pub async fn insert(conn: &mut Conn, t: &Template) -> Result<()> {
    let done = sqlx::query(
        "INSERT INTO templates (id, name, description, target_entity_type, is_built_in, is_protected, is_enabled, \
         created_by, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?) ON CONFLICT DO NOTHING",
    )
    .bind(&t.id)
    .bind(&t.name)
    .bind(&t.description)
    .bind(&t.target_entity_type)
    .bind(Flag(t.is_built_in))
    .bind(Flag(t.is_protected))
    .bind(Flag(t.is_enabled))
    .bind(&t.created_by)
    .bind(&t.created_at)
    .bind(&t.updated_at)
    .execute(conn.db())
    .await?;
    if done.rows_affected() == 0 {
        return Err(Error::Duplicate {
            entity: "template",
            name: t.name.clone(),
        });
    }
    tag::set(conn, "TEMPLATE", &t.id, &t.tags).await
}

pub async fn get(conn: &mut Conn, id: &str) -> Result<Option<Template>> {
    let row: Option<Row> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT {COLS} FROM templates WHERE id = ?"
    )))
    .bind(id)
    .fetch_optional(conn.db())
    .await?;
    match row {
        Some(r) => {
            let t = tag::of(conn, id).await?;
            Ok(Some(r.into_template(t)))
        }
        None => Ok(None),
    }
}

pub async fn require(conn: &mut Conn, id: &str) -> Result<Template> {
    get(conn, id)
        .await?
        .ok_or_else(|| Error::not_found("template", id))
}

pub async fn list(conn: &mut Conn, f: &TemplateFilter<'_>) -> Result<Vec<Template>> {
    let mut w = vec!["1 = 1".to_string()];
    let mut binds: Vec<String> = Vec::new();
    if let Some(t) = f.target {
        w.push("target_entity_type = ?".into());
        binds.push(t.into());
    }
    if let Some(b) = f.built_in {
        w.push(format!("is_built_in = {}", i64::from(b)));
    }
    if let Some(b) = f.enabled {
        w.push(format!("is_enabled = {}", i64::from(b)));
    }
    if !f.tags.is_empty() {
        w.push(format!(
            "id IN (SELECT entity_id FROM tags WHERE tag IN ({}))",
            placeholders(f.tags.len())
        ));
        binds.extend(f.tags.iter().cloned());
    }
    let sql = format!(
        "SELECT {COLS} FROM templates WHERE {} ORDER BY is_built_in DESC, name",
        w.join(" AND ")
    );
    let mut q = sqlx::query_as::<_, Row>(AssertSqlSafe(sql));
    for b in &binds {
        q = q.bind(b);
    }
    let rows = q.fetch_all(conn.db()).await?;
    let ids: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    let mut all = if ids.is_empty() {
        Default::default()
    } else {
        tag::load(conn, &ids).await?
    };
    Ok(rows
        .into_iter()
        .map(|r| {
            let t = all.remove(&r.id).unwrap_or_default();
            r.into_template(t)
        })
        .collect())
}

pub async fn update(conn: &mut Conn, t: &Template, expected: Option<i64>) -> Result<i64> {
    let v = match expected {
        Some(v) => lock::bump(conn, lock::TEMPLATES, &t.id, v, &t.updated_at).await?,
        None => lock::touch(conn, lock::TEMPLATES, &t.id, &t.updated_at).await?,
    };
    let clash: Option<String> =
        sqlx::query_scalar("SELECT id FROM templates WHERE name = ? AND id <> ?")
            .bind(&t.name)
            .bind(&t.id)
            .fetch_optional(conn.db())
            .await?;
    if clash.is_some() {
        return Err(Error::Duplicate {
            entity: "template",
            name: t.name.clone(),
        });
    }
    sqlx::query("UPDATE templates SET name = ?, description = ?, target_entity_type = ?, is_protected = ?, is_enabled = ? WHERE id = ?")
        .bind(&t.name)
        .bind(&t.description)
        .bind(&t.target_entity_type)
        .bind(Flag(t.is_protected))
        .bind(Flag(t.is_enabled))
        .bind(&t.id)
        .execute(conn.db())
        .await?;
    tag::set(conn, "TEMPLATE", &t.id, &t.tags).await?;
    Ok(v)
}

pub async fn sections(conn: &mut Conn, template_id: &str) -> Result<Vec<TemplateSection>> {
    let rows: Vec<SectionRow> = sqlx::query_as(
        "SELECT id, template_id, title, usage_description, content_sample, content_format, is_required, ordinal \
         FROM template_sections WHERE template_id = ? ORDER BY ordinal, id",
    )
    .bind(template_id)
    .fetch_all(conn.db())
    .await?;
    Ok(rows
        .into_iter()
        .map(|r| TemplateSection {
            id: r.id,
            template_id: r.template_id,
            title: r.title,
            usage_description: r.usage_description,
            content_sample: r.content_sample,
            content_format: r.content_format,
            is_required: r.is_required,
            ordinal: r.ordinal,
        })
        .collect())
}

pub async fn add_section(conn: &mut Conn, s: &TemplateSection) -> Result<()> {
    sqlx::query(
        "INSERT INTO template_sections (id, template_id, title, usage_description, content_sample, content_format, is_required, \
         ordinal) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&s.id)
    .bind(&s.template_id)
    .bind(&s.title)
    .bind(&s.usage_description)
    .bind(&s.content_sample)
    .bind(&s.content_format)
    .bind(Flag(s.is_required))
    .bind(s.ordinal)
    .execute(conn.db())
    .await?;
    Ok(())
}

pub async fn next_section_ordinal(conn: &mut Conn, template_id: &str) -> Result<i64> {
    let max: Option<i64> =
        sqlx::query_scalar("SELECT MAX(ordinal) FROM template_sections WHERE template_id = ?")
            .bind(template_id)
            .fetch_one(conn.db())
            .await?;
    Ok(max.map_or(0, |m| m + 1))
}
