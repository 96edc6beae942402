//! The atoms recorded just before and just after an atom in its context: the
//! previous and next turn of one exchange, which recall reads a found atom with
//! (`service::memory::exchange`). Served by `memory_atoms_context_recorded`.

use super::*;

/// The atom recorded last before `(at, id)` and first after it in `context` (None:
/// Global), each only if recorded within `[lo, hi]` (timestamps in the stored form):
/// `(previous, next)`.
pub async fn recorded_beside(
    conn: &mut Conn,
    context: Option<&str>,
    id: &str,
    at: &str,
    lo: &str,
    hi: &str,
) -> Result<(Option<String>, Option<String>)> {
    // `context_id = ?` and `IS NULL` both use the index; a NULL-safe comparison
    // would not on PostgreSQL.
    let ctx = if context.is_some() {
        "context_id = ?"
    } else {
        "context_id IS NULL"
    };
    let sql = format!(
        "SELECT 'p', id FROM (SELECT id FROM memory_atoms WHERE {ctx} AND recorded_at >= ? \
           AND (recorded_at < ? OR (recorded_at = ? AND id < ?)) \
           ORDER BY recorded_at DESC, id DESC LIMIT 1) p \
         UNION ALL \
         SELECT 'n', id FROM (SELECT id FROM memory_atoms WHERE {ctx} AND recorded_at <= ? \
           AND (recorded_at > ? OR (recorded_at = ? AND id > ?)) \
           ORDER BY recorded_at, id LIMIT 1) n"
    );
    let mut q = sqlx::query_as::<_, (String, String)>(AssertSqlSafe(sql));
    for bound in [lo, hi] {
        if let Some(c) = context {
            q = q.bind(c);
        }
        q = q.bind(bound).bind(at).bind(at).bind(id);
    }
    let rows = q.fetch_all(conn.db()).await?;
    let pick = |side: &str| rows.iter().find(|r| r.0 == side).map(|r| r.1.clone());
    Ok((pick("p"), pick("n")))
}
