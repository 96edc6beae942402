//! Dependency edges between items of one kind: BLOCKS and RELATES_TO, and the NO_OP
//! blocker (`from_id` NULL) for something outside Cairn.

use sqlx::AssertSqlSafe;

use crate::domain::container::Dependency;
use crate::domain::ItemKind;
use crate::store::item::table;
use crate::store::Conn;
use crate::store::Result;

/// An edge row as read, before it becomes a [`Dependency`].
struct EdgeRow {
    id: String,
    from_id: Option<String>,
    to_id: String,
    kind: String,
    reason: Option<String>,
    created_at: String,
    other_name: Option<String>,
    other_status: Option<String>,
}

crate::store::from_row!(EdgeRow { id, from_id, to_id, kind: col "type", reason, created_at, other_name, other_status });

impl From<EdgeRow> for Dependency {
    fn from(r: EdgeRow) -> Dependency {
        Dependency {
            id: r.id,
            from_id: r.from_id,
            to_id: r.to_id,
            kind: r.kind,
            reason: r.reason,
            created_at: r.created_at,
            other_name: r.other_name,
            other_status: r.other_status,
        }
    }
}

pub struct NewEdge<'a> {
    pub id: &'a str,
    pub kind: ItemKind,
    pub from_id: Option<&'a str>,
    pub to_id: &'a str,
    pub edge_type: &'a str,
    pub reason: Option<&'a str>,
    pub now: &'a str,
}

/// Inserts an edge; false when the same edge already exists.
pub async fn insert(conn: &mut Conn, e: &NewEdge<'_>) -> Result<bool> {
    let done = sqlx::query(
        "INSERT INTO dependencies (id, item_type, from_id, to_id, type, reason, created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
    )
    .bind(e.id)
    .bind(e.kind.as_str())
    .bind(e.from_id)
    .bind(e.to_id)
    .bind(e.edge_type)
    .bind(e.reason)
    .bind(e.now)
    .execute(conn.db())
    .await?;
    Ok(done.rows_affected() == 1)
}

/// Sets the reason of the NO_OP blocker of `to_id` (block called again with NO_OP).
pub async fn set_noop_reason(conn: &mut Conn, to_id: &str, reason: &str) -> Result<()> {
    sqlx::query("UPDATE dependencies SET reason = ? WHERE to_id = ? AND from_id IS NULL AND type = 'BLOCKS'")
        .bind(reason)
        .bind(to_id)
        .execute(conn.db())
        .await?;
    Ok(())
}

/// The reasons of the NO_OP blockers of the items among `ids`, in one query per 500
/// ids: what a board's cards say blocks them outside Cairn.
pub async fn noop_reasons(conn: &mut Conn, ids: &[String]) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for chunk in ids.chunks(500) {
        let sql = format!(
            "SELECT to_id, reason FROM dependencies WHERE from_id IS NULL AND type = 'BLOCKS' \
             AND reason IS NOT NULL AND to_id IN ({})",
            crate::store::placeholders(chunk.len())
        );
        let mut q = sqlx::query_as::<_, (String, String)>(AssertSqlSafe(sql));
        for id in chunk {
            q = q.bind(id);
        }
        out.extend(q.fetch_all(conn.db()).await?);
    }
    Ok(out)
}

pub async fn get(
    conn: &mut Conn,
    id: &str,
) -> Result<Option<(String, Option<String>, String, String)>> {
    Ok(
        sqlx::query_as("SELECT item_type, from_id, to_id, type FROM dependencies WHERE id = ?")
            .bind(id)
            .fetch_optional(conn.db())
            .await?,
    )
}

pub async fn delete(conn: &mut Conn, id: &str) -> Result<bool> {
    Ok(sqlx::query("DELETE FROM dependencies WHERE id = ?")
        .bind(id)
        .execute(conn.db())
        .await?
        .rows_affected()
        == 1)
}

/// Deletes the edge from `from_id` (None: the NO_OP blocker) to `to_id` of `edge_type`.
pub async fn delete_between(
    conn: &mut Conn,
    from_id: Option<&str>,
    to_id: &str,
    edge_type: &str,
) -> Result<bool> {
    let done = sqlx::query(
        "DELETE FROM dependencies WHERE to_id = ? AND type = ? AND COALESCE(from_id, '') = ?",
    )
    .bind(to_id)
    .bind(edge_type)
    .bind(from_id.unwrap_or(""))
    .execute(conn.db())
    .await?;
    Ok(done.rows_affected() > 0)
}

/// Edges pointing at `id` (what it depends on), with the source's name and status.
pub async fn incoming(conn: &mut Conn, kind: ItemKind, id: &str) -> Result<Vec<Dependency>> {
    let name = if kind == ItemKind::Task {
        "o.title"
    } else {
        "o.name"
    };
    let sql = format!(
        "SELECT d.id, d.from_id, d.to_id, d.type, d.reason, d.created_at, {name} AS other_name, o.status AS other_status \
         FROM dependencies d LEFT JOIN {t} o ON o.id = d.from_id WHERE d.to_id = ? ORDER BY d.created_at, d.id",
        t = table(kind).name
    );
    let rows: Vec<EdgeRow> = sqlx::query_as(AssertSqlSafe(sql))
        .bind(id)
        .fetch_all(conn.db())
        .await?;
    Ok(rows.into_iter().map(Dependency::from).collect())
}

/// Edges leaving `id` (what depends on it), with the target's name and status.
pub async fn outgoing(conn: &mut Conn, kind: ItemKind, id: &str) -> Result<Vec<Dependency>> {
    let name = if kind == ItemKind::Task {
        "o.title"
    } else {
        "o.name"
    };
    let sql = format!(
        "SELECT d.id, d.from_id, d.to_id, d.type, d.reason, d.created_at, {name} AS other_name, o.status AS other_status \
         FROM dependencies d JOIN {t} o ON o.id = d.to_id WHERE d.from_id = ? ORDER BY d.created_at, d.id",
        t = table(kind).name
    );
    let rows: Vec<EdgeRow> = sqlx::query_as(AssertSqlSafe(sql))
        .bind(id)
        .fetch_all(conn.db())
        .await?;
    Ok(rows.into_iter().map(Dependency::from).collect())
}

/// The open blockers of `id`: NO_OP blockers and BLOCKS sources not yet CLOSED.
pub async fn open_blockers(conn: &mut Conn, kind: ItemKind, id: &str) -> Result<Vec<Dependency>> {
    Ok(incoming(conn, kind, id)
        .await?
        .into_iter()
        .filter(|e| {
            e.kind == "BLOCKS"
                && (e.from_id.is_none() || e.other_status.as_deref() != Some("CLOSED"))
        })
        .collect())
}

/// Whether `from_id` BLOCKS-reaches `to_id` already (so `to_id → from_id` would close a cycle).
pub async fn reaches(conn: &mut Conn, from_id: &str, to_id: &str) -> Result<bool> {
    if from_id == to_id {
        return Ok(true);
    }
    // The walk starts from the edges' column rather than from the parameter: the
    // recursion's two terms must agree on their text's collation in PostgreSQL.
    let hit: Option<i64> = sqlx::query_scalar(
        "WITH RECURSIVE r(id) AS (SELECT d.to_id FROM dependencies d WHERE d.from_id = ? AND d.type = 'BLOCKS' \
         UNION SELECT d.to_id FROM dependencies d JOIN r ON d.from_id = r.id \
         WHERE d.type = 'BLOCKS') SELECT 1 FROM r WHERE id = ? LIMIT 1",
    )
    .bind(from_id)
    .bind(to_id)
    .fetch_optional(conn.db())
    .await?;
    Ok(hit.is_some())
}
