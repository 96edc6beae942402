//! The stores Cairn imports from, as far as reading them goes: the task-orchestrator
//! port's SQLite file (`port`, opened read-only beside Cairn's own database) and the
//! MCP memory server's JSON-lines file (`memory_file`), each read whole into plain
//! records, with the file, table, row or line named when something is wrong; and the
//! writes an import needs that no repository makes (a row's version set to the one it
//! had in the source, the ids and names already taken). What the records mean and
//! whether they are acceptable is `service::foreign`'s.

pub mod memory_file;
pub mod port;

use sqlx::AssertSqlSafe;

use crate::store::{lock, placeholders, Conn, Result};

/// Why a source could not be read: a sentence naming the file, and the table, row
/// and column, or the line, when one of them is at fault.
#[derive(Debug)]
pub struct Unreadable(pub String);

/// The file an import reads: it exists, is a file, and is within `max_bytes`.
fn checked_file(
    path: &std::path::Path,
    shown: &str,
    max_bytes: u64,
) -> std::result::Result<(), Unreadable> {
    let meta =
        std::fs::metadata(path).map_err(|e| Unreadable(format!("cannot read {shown}: {e}")))?;
    if !meta.is_file() {
        return Err(Unreadable(format!("{shown} is not a file")));
    }
    if meta.len() > max_bytes {
        return Err(Unreadable(format!(
            "{shown} is {} bytes, past the import limit of {max_bytes}",
            meta.len()
        )));
    }
    Ok(())
}

/// Sets the version of row `id` of `t` to the one it had in the source; the
/// repositories' inserts start every row at 1.
pub async fn set_version(conn: &mut Conn, t: lock::Table, id: &str, version: i64) -> Result<()> {
    sqlx::query(AssertSqlSafe(format!(
        "UPDATE {} SET version = ? WHERE id = ?",
        t.name
    )))
    .bind(version)
    .bind(id)
    .execute(conn.db())
    .await?;
    Ok(())
}

/// The ids among `ids` that rows of `table` already hold.
pub async fn taken(conn: &mut Conn, table: &str, ids: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for chunk in ids.chunks(500) {
        let sql = format!(
            "SELECT id FROM {table} WHERE id IN ({}) ORDER BY id",
            placeholders(chunk.len())
        );
        let mut q = sqlx::query_scalar::<_, String>(AssertSqlSafe(sql));
        for id in chunk {
            q = q.bind(id);
        }
        out.extend(q.fetch_all(conn.db()).await?);
    }
    Ok(out)
}

/// The names among `names` that templates already hold, with their ids.
pub async fn template_names(conn: &mut Conn, names: &[String]) -> Result<Vec<(String, String)>> {
    let mut out = Vec::new();
    for chunk in names.chunks(500) {
        let sql = format!(
            "SELECT name, id FROM templates WHERE name IN ({}) ORDER BY name",
            placeholders(chunk.len())
        );
        let mut q = sqlx::query_as::<_, (String, String)>(AssertSqlSafe(sql));
        for n in chunk {
            q = q.bind(n);
        }
        out.extend(q.fetch_all(conn.db()).await?);
    }
    Ok(out)
}
