//! Sections attached to projects, features and tasks, kept in `ordinal` order.

use sqlx::AssertSqlSafe;

use crate::domain::Section;
use crate::store::{lock, placeholders, tag, Conn};
use crate::store::{Error, Result};

struct Row {
    id: String,
    entity_type: String,
    entity_id: String,
    title: String,
    usage_description: String,
    content: String,
    content_format: String,
    ordinal: i64,
    version: i64,
    created_at: String,
    updated_at: String,
}

crate::store::from_row!(Row {
    id,
    entity_type,
    entity_id,
    title,
    usage_description,
    content,
    content_format,
    ordinal,
    version,
    created_at,
    updated_at
});

impl Row {
    fn into_section(self, tags: Vec<String>) -> Section {
        Section {
            id: self.id,
            entity_type: self.entity_type,
            entity_id: self.entity_id,
            title: self.title,
            usage_description: self.usage_description,
            content: self.content,
            content_format: self.content_format,
            ordinal: self.ordinal,
            tags,
            version: self.version,
            created_at: self.created_at,
            updated_at: self.updated_at,
        }
    }
}

const COLS: &str =
    "id, entity_type, entity_id, title, usage_description, content, content_format, ordinal, version, created_at, updated_at";

pub async fn insert(conn: &mut Conn, s: &Section) -> Result<()> {
    sqlx::query(
        "INSERT INTO sections (id, entity_type, entity_id, title, usage_description, content, content_format, ordinal, version, \
         created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
    )
    .bind(&s.id)
    .bind(&s.entity_type)
    .bind(&s.entity_id)
    .bind(&s.title)
    .bind(&s.usage_description)
    .bind(&s.content)
    .bind(&s.content_format)
    .bind(s.ordinal)
    .bind(&s.created_at)
    .bind(&s.updated_at)
    .execute(conn.db())
    .await?;
    if !s.tags.is_empty() {
        tag::set(conn, "SECTION", &s.id, &s.tags).await?;
    }
    Ok(())
}

pub async fn get(conn: &mut Conn, id: &str) -> Result<Option<Section>> {
    let row: Option<Row> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT {COLS} FROM sections WHERE id = ?"
    )))
    .bind(id)
    .fetch_optional(conn.db())
    .await?;
    match row {
        Some(r) => {
            let t = tag::of(conn, id).await?;
            Ok(Some(r.into_section(t)))
        }
        None => Ok(None),
    }
}

pub async fn require(conn: &mut Conn, id: &str) -> Result<Section> {
    get(conn, id)
        .await?
        .ok_or_else(|| Error::not_found("section", id))
}

/// Sections of one entity in order, optionally only those with one of `tags` or ids.
pub async fn list(
    conn: &mut Conn,
    entity_id: &str,
    tags: &[String],
    ids: &[String],
) -> Result<Vec<Section>> {
    let mut sql = format!("SELECT {COLS} FROM sections WHERE entity_id = ?");
    if !tags.is_empty() {
        sql.push_str(&format!(
            " AND id IN (SELECT entity_id FROM tags WHERE tag IN ({}))",
            placeholders(tags.len())
        ));
    }
    if !ids.is_empty() {
        sql.push_str(&format!(" AND id IN ({})", placeholders(ids.len())));
    }
    sql.push_str(" ORDER BY ordinal, created_at, id");
    let mut q = sqlx::query_as::<_, Row>(AssertSqlSafe(sql)).bind(entity_id);
    for t in tags {
        q = q.bind(t);
    }
    for i in ids {
        q = q.bind(i);
    }
    let rows = q.fetch_all(conn.db()).await?;
    let keys: Vec<&str> = rows.iter().map(|r| r.id.as_str()).collect();
    let mut all = if keys.is_empty() {
        Default::default()
    } else {
        tag::load(conn, &keys).await?
    };
    Ok(rows
        .into_iter()
        .map(|r| {
            let t = all.remove(&r.id).unwrap_or_default();
            r.into_section(t)
        })
        .collect())
}

/// The ordinal after the last section of an entity.
pub async fn next_ordinal(conn: &mut Conn, entity_id: &str) -> Result<i64> {
    let max: Option<i64> =
        sqlx::query_scalar("SELECT MAX(ordinal) FROM sections WHERE entity_id = ?")
            .bind(entity_id)
            .fetch_one(conn.db())
            .await?;
    Ok(max.map_or(0, |m| m + 1))
}

pub async fn update(conn: &mut Conn, s: &Section, expected: i64) -> Result<i64> {
    let v = lock::bump(conn, lock::SECTIONS, &s.id, expected, &s.updated_at).await?;
    sqlx::query("UPDATE sections SET title = ?, usage_description = ?, content = ?, content_format = ?, ordinal = ? WHERE id = ?")
        .bind(&s.title)
        .bind(&s.usage_description)
        .bind(&s.content)
        .bind(&s.content_format)
        .bind(s.ordinal)
        .bind(&s.id)
        .execute(conn.db())
        .await?;
    tag::set(conn, "SECTION", &s.id, &s.tags).await?;
    Ok(v)
}

/// Sets the ordinal of a section as part of a reorder, bumping its version.
pub async fn set_ordinal(conn: &mut Conn, id: &str, ordinal: i64, now: &str) -> Result<()> {
    sqlx::query(
        "UPDATE sections SET ordinal = ?, version = version + 1, updated_at = ? WHERE id = ?",
    )
    .bind(ordinal)
    .bind(now)
    .bind(id)
    .execute(conn.db())
    .await?;
    Ok(())
}
