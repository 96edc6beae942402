//! Memory edges: the typed links between atoms, subjects and references.

use super::*;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EdgeRow {
    pub from_kind: String,
    pub from_id: String,
    pub kind: String,
    pub to_kind: String,
    pub to_id: String,
}

crate::store::from_row!(EdgeRow {
    from_kind,
    from_id,
    kind,
    to_kind,
    to_id
});

/// Adds an edge; answers false when it was there already.
pub async fn insert_edge(conn: &mut Conn, e: &EdgeRow, now: &str) -> Result<bool> {
    let r = sqlx::query(
        "INSERT INTO memory_edges (from_kind, from_id, kind, to_kind, to_id, created_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
    )
    .bind(&e.from_kind)
    .bind(&e.from_id)
    .bind(&e.kind)
    .bind(&e.to_kind)
    .bind(&e.to_id)
    .bind(now)
    .execute(conn.db())
    .await?;
    Ok(r.rows_affected() == 1)
}

/// Removes an edge; answers false when there was none.
pub async fn delete_edge(conn: &mut Conn, from_id: &str, kind: &str, to_id: &str) -> Result<bool> {
    let r = sqlx::query("DELETE FROM memory_edges WHERE from_id = ? AND kind = ? AND to_id = ?")
        .bind(from_id)
        .bind(kind)
        .bind(to_id)
        .execute(conn.db())
        .await?;
    Ok(r.rows_affected() == 1)
}

/// Edges touching any of `ids` at either end, optionally of some kinds only.
pub async fn edges_touching(
    conn: &mut Conn,
    ids: &[String],
    kinds: &[&str],
) -> Result<Vec<EdgeRow>> {
    let mut out = Vec::new();
    for chunk in ids.chunks(400) {
        let p = placeholders(chunk.len());
        let mut sql = format!(
            "SELECT from_kind, from_id, kind, to_kind, to_id FROM memory_edges WHERE (from_id IN ({p}) OR to_id IN ({p}))"
        );
        if !kinds.is_empty() {
            sql.push_str(&format!(" AND kind IN ({})", placeholders(kinds.len())));
        }
        sql.push_str(" ORDER BY created_at, from_id, kind, to_id");
        let mut q = sqlx::query_as(AssertSqlSafe(sql));
        for id in chunk.iter().chain(chunk.iter()) {
            q = q.bind(id);
        }
        for k in kinds {
            q = q.bind(*k);
        }
        let rows: Vec<EdgeRow> = q.fetch_all(conn.db()).await?;
        for r in rows {
            if !out.contains(&r) {
                out.push(r);
            }
        }
    }
    Ok(out)
}

/// The evidence of some atoms: (atom, reference, reference type) for each
/// FROM_SOURCE edge and each SUPPORTS edge from a reference.
pub async fn evidence_of(
    conn: &mut Conn,
    atom_ids: &[String],
) -> Result<Vec<(String, String, String)>> {
    let mut out = Vec::new();
    for chunk in atom_ids.chunks(400) {
        let p = placeholders(chunk.len());
        let sql = format!(
            "SELECT e.from_id, r.id, r.ref_type FROM memory_edges e JOIN memory_references r ON r.id = e.to_id \
              WHERE e.kind = 'FROM_SOURCE' AND e.from_id IN ({p}) \
             UNION SELECT e.to_id, r.id, r.ref_type FROM memory_edges e JOIN memory_references r ON r.id = e.from_id \
              WHERE e.kind = 'SUPPORTS' AND e.to_id IN ({p})"
        );
        let mut q = sqlx::query_as(AssertSqlSafe(sql));
        for id in chunk.iter().chain(chunk.iter()) {
            q = q.bind(id);
        }
        out.extend(q.fetch_all(conn.db()).await?);
    }
    Ok(out)
}

/// Streams every edge to `each`.
pub async fn each_edge(conn: &mut Conn, mut each: impl FnMut(EdgeRow)) -> Result<()> {
    let mut rows = sqlx::query_as::<_, EdgeRow>(
        "SELECT from_kind, from_id, kind, to_kind, to_id FROM memory_edges ORDER BY created_at, from_id, kind, to_id",
    )
    .fetch(conn.db());
    while let Some(r) = rows.try_next().await? {
        each(r);
    }
    Ok(())
}

/// The subjects `id` USES.
pub async fn uses_of(conn: &mut Conn, id: &str) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT to_id FROM memory_edges WHERE from_id = ? AND kind = 'USES' ORDER BY to_id",
    )
    .bind(id)
    .fetch_all(conn.db())
    .await?)
}

/// Every USES edge.
pub async fn uses_edges(conn: &mut Conn) -> Result<Vec<EdgeRow>> {
    Ok(sqlx::query_as(
        "SELECT from_kind, from_id, kind, to_kind, to_id FROM memory_edges WHERE kind = 'USES' ORDER BY from_id, to_id",
    )
    .fetch_all(conn.db())
    .await?)
}

/// What kind of node an id is: `atom`, `subject` or `reference`.
pub async fn node_kind(conn: &mut Conn, id: &str) -> Result<Option<&'static str>> {
    let k: Option<String> = sqlx::query_scalar(
        "SELECT 'atom' FROM memory_atoms WHERE id = ?1 UNION ALL SELECT 'subject' FROM memory_subjects WHERE id = ?1 \
         UNION ALL SELECT 'reference' FROM memory_references WHERE id = ?1 LIMIT 1",
    )
    .bind(id)
    .fetch_optional(conn.db())
    .await?;
    Ok(match k.as_deref() {
        Some("atom") => Some("atom"),
        Some("subject") => Some("subject"),
        Some("reference") => Some("reference"),
        _ => None,
    })
}
