//! The atoms recorded just before and just after an atom in its context: the
//! previous and next turn of one exchange, which recall reads a found atom with
//! (`service::memory::exchange`). Served by `memory_atoms_context_recorded`.

use super::*;

/// One atom whose neighbours are asked for: its context (None: Global), id and
/// recording time, and the window `[lo, hi]` they must be recorded in (timestamps in
/// the stored form).
pub struct Seed<'a> {
    pub context: Option<&'a str>,
    pub id: &'a str,
    pub at: &'a str,
    pub lo: &'a str,
    pub hi: &'a str,
}

/// Per seed, in order, the atom recorded last before it and first after it in its
/// context, each only if recorded within its window: `(previous, next)`. One
/// statement for every seed (a `UNION ALL` of one indexed seek per side), so recall
/// pays one round trip, not two dozen.
pub async fn recorded_beside(
    conn: &mut Conn,
    seeds: &[Seed<'_>],
) -> Result<Vec<(Option<String>, Option<String>)>> {
    if seeds.is_empty() {
        return Ok(Vec::new());
    }
    let mut sql = String::new();
    for (i, seed) in seeds.iter().enumerate() {
        // `context_id = ?` and `IS NULL` both use the index; a NULL-safe comparison
        // would not on PostgreSQL.
        let ctx = if seed.context.is_some() {
            "context_id = ?"
        } else {
            "context_id IS NULL"
        };
        if i > 0 {
            sql.push_str(" UNION ALL ");
        }
        sql.push_str(&format!(
            "SELECT '{i}p', id FROM (SELECT id FROM memory_atoms WHERE {ctx} AND recorded_at >= ? \
               AND (recorded_at < ? OR (recorded_at = ? AND id < ?)) \
               ORDER BY recorded_at DESC, id DESC LIMIT 1) p{i} \
             UNION ALL \
             SELECT '{i}n', id FROM (SELECT id FROM memory_atoms WHERE {ctx} AND recorded_at <= ? \
               AND (recorded_at > ? OR (recorded_at = ? AND id > ?)) \
               ORDER BY recorded_at, id LIMIT 1) n{i}"
        ));
    }
    let mut q = sqlx::query_as::<_, (String, String)>(AssertSqlSafe(sql));
    for seed in seeds {
        for bound in [seed.lo, seed.hi] {
            if let Some(c) = seed.context {
                q = q.bind(c);
            }
            q = q.bind(bound).bind(seed.at).bind(seed.at).bind(seed.id);
        }
    }
    let rows = q.fetch_all(conn.db()).await?;
    let pick = |tag: String| rows.iter().find(|r| r.0 == tag).map(|r| r.1.clone());
    Ok((0..seeds.len())
        .map(|i| (pick(format!("{i}p")), pick(format!("{i}n"))))
        .collect())
}
