//! Tags on any entity, one row per (entity, tag).

use std::collections::HashMap;

use sqlx::AssertSqlSafe;

use crate::store::Result;
use crate::store::{placeholders, Conn};

/// Replaces the tags of one entity.
pub async fn set(
    conn: &mut Conn,
    entity_type: &str,
    entity_id: &str,
    tags: &[String],
) -> Result<()> {
    sqlx::query("DELETE FROM tags WHERE entity_id = ?")
        .bind(entity_id)
        .execute(conn.db())
        .await?;
    for t in tags {
        sqlx::query("INSERT INTO tags (entity_type, entity_id, tag) VALUES (?, ?, ?) ON CONFLICT DO NOTHING")
            .bind(entity_type)
            .bind(entity_id)
            .bind(t)
            .execute(conn.db())
            .await?;
    }
    Ok(())
}

/// Tags of many entities at once, each list sorted.
pub async fn load(conn: &mut Conn, ids: &[&str]) -> Result<HashMap<String, Vec<String>>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for chunk in ids.chunks(500) {
        let sql = format!(
            "SELECT entity_id, tag FROM tags WHERE entity_id IN ({}) ORDER BY tag",
            placeholders(chunk.len())
        );
        let mut q = sqlx::query_as::<_, (String, String)>(AssertSqlSafe(sql));
        for id in chunk {
            q = q.bind(*id);
        }
        for (id, tag) in q.fetch_all(conn.db()).await? {
            out.entry(id).or_default().push(tag);
        }
    }
    Ok(out)
}

pub async fn of(conn: &mut Conn, id: &str) -> Result<Vec<String>> {
    Ok(
        sqlx::query_scalar("SELECT tag FROM tags WHERE entity_id = ? ORDER BY tag")
            .bind(id)
            .fetch_all(conn.db())
            .await?,
    )
}

/// Every tag with its count per entity type, optionally for one entity type.
pub async fn list(
    conn: &mut Conn,
    entity_type: Option<&str>,
) -> Result<Vec<(String, String, i64)>> {
    let rows = match entity_type {
        Some(t) => {
            sqlx::query_as(
                "SELECT tag, entity_type, COUNT(*) FROM tags WHERE entity_type = ? GROUP BY tag, entity_type ORDER BY tag, entity_type",
            )
            .bind(t)
            .fetch_all(conn.db())
            .await?
        }
        None => {
            sqlx::query_as("SELECT tag, entity_type, COUNT(*) FROM tags GROUP BY tag, entity_type ORDER BY tag, entity_type")
                .fetch_all(conn.db())
                .await?
        }
    };
    Ok(rows)
}

/// Entities carrying `tag`: (entity_type, entity_id, name or title).
pub async fn usage(conn: &mut Conn, tag: &str) -> Result<Vec<(String, String, Option<String>)>> {
    Ok(sqlx::query_as(
        "SELECT t.entity_type, t.entity_id, COALESCE(p.name, f.name, k.title, s.title, m.name) FROM tags t \
         LEFT JOIN projects p ON p.id = t.entity_id LEFT JOIN features f ON f.id = t.entity_id \
         LEFT JOIN tasks k ON k.id = t.entity_id LEFT JOIN sections s ON s.id = t.entity_id \
         LEFT JOIN templates m ON m.id = t.entity_id WHERE t.tag = ? ORDER BY t.entity_type, t.entity_id",
    )
    .bind(tag)
    .fetch_all(conn.db())
    .await?)
}

/// Renames `old` to `new` everywhere; an entity that had both keeps one.
pub async fn rename(conn: &mut Conn, old: &str, new: &str) -> Result<u64> {
    sqlx::query("INSERT INTO tags (entity_type, entity_id, tag) SELECT entity_type, entity_id, ? FROM tags WHERE tag = ? ON CONFLICT DO NOTHING")
        .bind(new)
        .bind(old)
        .execute(conn.db())
        .await?;
    let done = sqlx::query("DELETE FROM tags WHERE tag = ?")
        .bind(old)
        .execute(conn.db())
        .await?;
    Ok(done.rows_affected())
}
