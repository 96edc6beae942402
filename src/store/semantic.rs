//! SQL of the semantic layer: full-text (FTS5, BM25) lookups, the per-project
//! generation counter that tells a cache whether it is current, and the edge lists
//! `query` walks. Callers pass an FTS5 expression they built from quoted tokens
//! (`service::semantic::fts_expr`); nothing here interprets user text.

use sqlx::{AssertSqlSafe, Row};

use crate::store::Result;
use crate::store::{Conn, Flag};

/// One full-text index of migration 0005.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fts {
    Entities,
    References,
    Atoms,
    Molecules,
    /// Memory atoms' statements (all under the `memory` tenant).
    MemoryAtoms,
}

impl Fts {
    fn table(self) -> &'static str {
        match self {
            Fts::Entities => "code_entities_fts",
            Fts::References => "code_references_fts",
            Fts::Atoms => "graph_atoms_fts",
            Fts::Molecules => "graph_molecules_fts",
            Fts::MemoryAtoms => "memory_atoms_fts",
        }
    }
}

/// The project's generation: it grows with every write that changes texts, edges,
/// attachments or vectors (0 when nothing was ever written). It is the sum of three
/// counters the triggers bump: the semantic one (code rows, edges), the graph one
/// (atoms and molecules, which bump no other, see migration 0010) and the vector one
/// (migration 0015).
pub async fn generation(conn: &mut Conn, project_id: &str) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COALESCE((SELECT generation FROM semantic_generations WHERE project_id = ?1), 0) \
         + COALESCE((SELECT generation FROM graph_generations WHERE project_id = ?1), 0) \
         + COALESCE((SELECT generation FROM vector_generations WHERE project_id = ?1), 0)",
    )
    .bind(project_id)
    .fetch_one(conn.db())
    .await?)
}

/// The project's generation without its vectors: it grows with every write that
/// changes texts, edges or attachments, and not with vectors written, so what is
/// built from rows alone (the entity graph `query` walks) outlives a background pass.
pub async fn rows_generation(conn: &mut Conn, project_id: &str) -> Result<i64> {
    Ok(sqlx::query_scalar(
        "SELECT COALESCE((SELECT generation FROM semantic_generations WHERE project_id = ?1), 0) \
         + COALESCE((SELECT generation FROM graph_generations WHERE project_id = ?1), 0)",
    )
    .bind(project_id)
    .fetch_one(conn.db())
    .await?)
}

/// Above this many rows a lexical query reads every match directly.
const WINDOW_MAX: i64 = 1000;

/// The best `limit` rows of one project matching `expr`, best first, with a positive
/// BM25 score (bigger is better; a name match weighs four times a body match). Ties go
/// to the row written first (the lower rowid) so the order is deterministic. Call it
/// outside a read transaction: the atoms' index is first brought up to date, which
/// writes when atoms changed.
pub async fn lexical(
    conn: &mut Conn,
    index: Fts,
    project_id: &str,
    expr: &str,
    limit: i64,
) -> Result<Vec<(String, f64)>> {
    if index == Fts::Atoms {
        catch_up_atoms(conn, project_id).await?;
    }
    if index == Fts::MemoryAtoms {
        crate::store::memory::catch_up_search(conn).await?;
    }
    let t = index.table();
    if conn.pg() {
        return lexical_pg(conn, t, project_id, expr, limit).await;
    }
    let whole = |limit: i64| {
        let sql = format!(
            "SELECT row_id, -bm25({t}, 4.0, 1.0) AS score FROM {t} WHERE {t} MATCH ? AND project_id = ? \
             ORDER BY score DESC, rowid LIMIT ?"
        );
        sqlx::query_as::<_, (String, f64)>(AssertSqlSafe(sql))
            .bind(expr.to_string())
            .bind(project_id.to_string())
            .bind(limit)
    };
    // A caller that wants every match (graph search pages through them) reads them
    // all anyway: no window.
    if limit > WINDOW_MAX {
        return Ok(whole(limit).fetch_all(conn.db()).await?);
    }
    // First the best rows of the whole index by BM25 alone, which FTS5 computes from
    // its index and the rows' sizes without reading their stored columns; then
    // `row_id` and `project_id` of those rows only. Reading both columns of every
    // match made a query whose words match a third of 20,000 rows cost twice as much.
    // Ties go to the lower rowid in both, so the window is a prefix of the whole
    // order: exact whenever it holds `limit` rows of the project.
    let wide = (limit * 2).max(64);
    let best: Vec<(i64, f64)> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT rowid, -bm25({t}, 4.0, 1.0) AS score FROM {t} WHERE {t} MATCH ? \
         ORDER BY score DESC, rowid LIMIT ?"
    )))
    .bind(expr)
    .bind(wide)
    .fetch_all(conn.db())
    .await?;
    if best.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT rowid, row_id, project_id FROM {t} WHERE rowid IN ({})",
        crate::store::placeholders(best.len())
    );
    let mut q = sqlx::query_as::<_, (i64, String, String)>(AssertSqlSafe(sql));
    for (rowid, _) in &best {
        q = q.bind(rowid);
    }
    let names: std::collections::HashMap<i64, (String, String)> = q
        .fetch_all(conn.db())
        .await?
        .into_iter()
        .map(|(r, id, p)| (r, (id, p)))
        .collect();
    let n = usize::try_from(limit).unwrap_or(0);
    let mut out: Vec<(String, f64)> = best
        .iter()
        .filter_map(|(r, score)| match names.get(r) {
            Some((id, p)) if p == project_id => Some((id.clone(), *score)),
            _ => None,
        })
        .take(n)
        .collect();
    // A full window may have cut rows of this project that other projects' rows
    // outranked: then the whole query. (The two statements above are not one
    // snapshot: a row deleted and another written between them can lend its rowid,
    // and so its score, to the newcomer for this one answer; rare, and only an order.)
    if best.len() as i64 == wide && out.len() < n {
        out = whole(limit).fetch_all(conn.db()).await?;
    }
    Ok(out)
}

/// FTS5's BM25 constants (its defaults).
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// [`lexical`] on PostgreSQL: the index's `doc` (a `tsvector`, the name's words
/// weighted `A`) finds the rows through its GIN index, and their BM25 is computed
/// here as FTS5 computes it, from the same statistics (the number of rows and their
/// mean length over the whole index, each phrase's row count, a row's weighted term
/// frequency and length), so both backends rank alike. A phrase's frequency in a
/// row is that of its rarest word there (FTS5 counts the phrase itself).
async fn lexical_pg(
    conn: &mut Conn,
    t: &str,
    project_id: &str,
    expr: &str,
    limit: i64,
) -> Result<Vec<(String, f64)>> {
    let (phrases, all) = fts_phrases(expr);
    if phrases.is_empty() {
        return Ok(Vec::new());
    }
    let tsq: Vec<String> = phrases.iter().map(Phrase::tsquery).collect();
    let query = tsq.join(if all { " & " } else { " | " });
    // The statistics and each phrase's row count, in one statement.
    let mut sql = String::from("SELECT count(*), COALESCE(SUM(len), 0)::BIGINT");
    for _ in &tsq {
        sql.push_str(&format!(
            ", (SELECT count(*) FROM {t} WHERE doc @@ to_tsquery('simple', ?))"
        ));
    }
    sql.push_str(&format!(" FROM {t}"));
    let mut q = sqlx::query(AssertSqlSafe(sql));
    for p in &tsq {
        q = q.bind(p);
    }
    let stats = q.fetch_one(conn.db()).await?;
    let n: i64 = stats.try_get(0)?;
    let total: i64 = stats.try_get(1)?;
    let avg = if n > 0 { total as f64 / n as f64 } else { 1.0 };
    let idf: Vec<f64> = (0..phrases.len())
        .map(|i| {
            let df: i64 = stats.try_get(i + 2).unwrap_or(0);
            (((n - df) as f64 + 0.5) / (df as f64 + 0.5)).ln().max(1e-6)
        })
        .collect();
    let rows: Vec<(i64, String, String, i64)> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT rowid, row_id, doc::text, len FROM {t} \
          WHERE project_id = ? AND doc @@ to_tsquery('simple', ?)"
    )))
    .bind(project_id)
    .bind(&query)
    .fetch_all(conn.db())
    .await?;
    let mut scored: Vec<(i64, String, f64)> = rows
        .into_iter()
        .map(|(rowid, id, doc, len)| {
            let terms = parse_tsvector(&doc);
            let norm = K1 * (1.0 - B + B * len as f64 / avg);
            let score = phrases
                .iter()
                .zip(&idf)
                .map(|(p, idf)| {
                    let f = p.frequency(&terms);
                    idf * f * (K1 + 1.0) / (f + norm)
                })
                .sum::<f64>();
            (rowid, id, score)
        })
        .collect();
    scored.sort_by(|a, b| b.2.total_cmp(&a.2).then(a.0.cmp(&b.0)));
    scored.truncate(usize::try_from(limit).unwrap_or(0));
    Ok(scored.into_iter().map(|(_, id, s)| (id, s)).collect())
}

/// A phrase of an FTS5 expression: its words, lower-case, and whether the last is a
/// prefix.
#[derive(Debug, PartialEq)]
struct Phrase {
    words: Vec<String>,
    prefix: bool,
}

impl Phrase {
    /// The phrase as `to_tsquery('simple', …)` reads it: adjacent words, the last
    /// a prefix when it is one. The words hold letters and digits only.
    fn tsquery(&self) -> String {
        let mut out = String::from("(");
        for (i, w) in self.words.iter().enumerate() {
            if i > 0 {
                out.push_str(" <-> ");
            }
            out.push('\'');
            out.push_str(w);
            out.push('\'');
            if self.prefix && i + 1 == self.words.len() {
                out.push_str(":*");
            }
        }
        out.push(')');
        out
    }

    /// How often the phrase occurs in a row, a name occurrence weighing 4 (FTS5's
    /// `bm25(t, 4.0, 1.0)`): that of its rarest word.
    fn frequency(&self, terms: &[(String, f64)]) -> f64 {
        self.words
            .iter()
            .enumerate()
            .map(|(i, w)| {
                let last = i + 1 == self.words.len();
                terms
                    .iter()
                    .filter(|(l, _)| l == w || (self.prefix && last && l.starts_with(w.as_str())))
                    .map(|(_, f)| f)
                    .sum::<f64>()
            })
            .reduce(f64::min)
            .unwrap_or(0.0)
    }
}

/// The phrases of an FTS5 expression as `service::semantic::fts_tokens` builds them
/// (`"word"` or `"word"*`, joined by ` AND ` or ` OR `), and whether they are
/// joined by AND. A phrase's text is split into words as FTS5's `unicode61`
/// tokenizer (and the PostgreSQL schema's `cairn_words`) splits it.
fn fts_phrases(expr: &str) -> (Vec<Phrase>, bool) {
    let mut phrases = Vec::new();
    let mut chars = expr.chars().peekable();
    let mut all = true;
    while let Some(c) = chars.next() {
        if c != '"' {
            if c == 'O' && chars.peek() == Some(&'R') {
                all = false;
            }
            continue;
        }
        let text = quoted(&mut chars, '"');
        let prefix = chars.peek() == Some(&'*');
        let words: Vec<String> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .collect();
        if !words.is_empty() {
            phrases.push(Phrase { words, prefix });
        }
    }
    (phrases, all)
}

/// A `tsvector`'s text (`'word':1A,4 'other':2`) as (lexeme, weighted frequency):
/// a position weighted `A` (a name's) counts 4, any other 1.
fn parse_tsvector(doc: &str) -> Vec<(String, f64)> {
    let mut out = Vec::new();
    let mut chars = doc.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '\'' {
            continue;
        }
        let lexeme = quoted(&mut chars, '\'');
        let mut positions = String::new();
        if chars.peek() == Some(&':') {
            chars.next();
            while let Some(c) = chars.next_if(|c| !c.is_whitespace()) {
                positions.push(c);
            }
        }
        let f = if positions.is_empty() {
            1.0
        } else {
            positions
                .split(',')
                .map(|p| if p.ends_with('A') { 4.0 } else { 1.0 })
                .sum()
        };
        out.push((lexeme, f));
    }
    out
}

/// The rest of a string quoted by `q` whose opening quote was just read, a doubled
/// `q` standing for one (as both FTS5 and `tsvector` texts quote).
fn quoted(chars: &mut std::iter::Peekable<std::str::Chars<'_>>, q: char) -> String {
    let mut text = String::new();
    while let Some(c) = chars.next() {
        if c == q && chars.next_if_eq(&q).is_none() {
            break;
        }
        text.push(c);
    }
    text
}

/// Brings the project's part of the atoms' full-text index up to the project's graph
/// generation (migration 0011): removes the rows of atoms deleted since the generation
/// it reflects, writes the rows of atoms written since, and moves its mark, in one
/// write transaction. A read, and no write, when no atom changed: molecule writes
/// move the generation too, and leave the mark behind rather than take the write
/// lock to move it.
async fn catch_up_atoms(conn: &mut Conn, project_id: &str) -> Result<()> {
    const MARKS: &str = "SELECT COALESCE((SELECT gen FROM search_indexed WHERE project_id = ?1), 0), \
                         COALESCE((SELECT generation FROM graph_generations WHERE project_id = ?1), 0)";
    let (indexed, current): (i64, i64) = sqlx::query_as(MARKS)
        .bind(project_id)
        .fetch_one(conn.db())
        .await?;
    if indexed == current {
        return Ok(());
    }
    let changed: Flag = sqlx::query_scalar(
        "SELECT EXISTS (SELECT 1 FROM graph_atoms WHERE project_id = ?1 AND gen > ?2) \
             OR EXISTS (SELECT 1 FROM graph_tombstones WHERE project_id = ?1 AND gen > ?2)",
    )
    .bind(project_id)
    .bind(indexed)
    .fetch_one(conn.db())
    .await?;
    if !changed.0 {
        return Ok(());
    }
    let mut tx = conn.begin_write().await?;
    // Read again under the write lock: another catch-up may have run meanwhile.
    let (since, current): (i64, i64) = sqlx::query_as(MARKS)
        .bind(project_id)
        .fetch_one(tx.db())
        .await?;
    if since != current {
        sqlx::query(
            "DELETE FROM graph_atoms_fts \
              WHERE rowid IN (SELECT row FROM graph_tombstones WHERE project_id = ?1 AND gen > ?2) \
                AND project_id = ?1 \
                AND EXISTS (SELECT 1 FROM graph_tombstones t WHERE t.project_id = ?1 AND t.gen > ?2 \
                               AND t.row = graph_atoms_fts.rowid AND t.atom_id = graph_atoms_fts.row_id)",
        )
        .bind(project_id)
        .bind(since)
        .execute(tx.db())
        .await?;
        // PostgreSQL has no INSERT OR REPLACE: the upsert names the key it replaces.
        sqlx::query(if tx.pg() {
            "INSERT INTO graph_atoms_fts (rowid, name, body, row_id, project_id) \
             SELECT rowid, name || ' ' || paths, knowledge, id, project_id FROM graph_atoms \
              WHERE project_id = ?1 AND gen > ?2 \
             ON CONFLICT (rowid) DO UPDATE SET name = excluded.name, body = excluded.body, \
                row_id = excluded.row_id, project_id = excluded.project_id"
        } else {
            "INSERT OR REPLACE INTO graph_atoms_fts (rowid, name, body, row_id, project_id) \
             SELECT rowid, name || ' ' || paths, knowledge, id, project_id FROM graph_atoms \
              WHERE project_id = ?1 AND gen > ?2"
        })
        .bind(project_id)
        .bind(since)
        .execute(tx.db())
        .await?;
        sqlx::query(
            "INSERT INTO search_indexed (project_id, gen) VALUES (?1, ?2) \
             ON CONFLICT (project_id) DO UPDATE SET gen = excluded.gen",
        )
        .bind(project_id)
        .bind(current)
        .execute(tx.db())
        .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Hands `each` the (id, scope, name) of every entity of a project, in id order,
/// without collecting them.
pub async fn each_entity(
    conn: &mut Conn,
    project_id: &str,
    mut each: impl FnMut(&str, &str, &str),
) -> Result<()> {
    use futures::TryStreamExt;
    let mut rows =
        sqlx::query("SELECT id, scope, name FROM code_entities WHERE project_id = ? ORDER BY id")
            .bind(project_id)
            .fetch(conn.db());
    while let Some(row) = rows.try_next().await? {
        each(row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
    }
    Ok(())
}

/// How many vectors of one project `model` made (what [`each_vector`] will hand over).
pub async fn count_vectors(conn: &mut Conn, project_id: &str, model: &str) -> Result<usize> {
    let (n,): (i64,) =
        sqlx::query_as("SELECT count(*) FROM embeddings WHERE project_id = ? AND model = ?")
            .bind(project_id)
            .bind(model)
            .fetch_one(conn.db())
            .await?;
    Ok(n.max(0) as usize)
}

/// A RELATED_TO edge or a code link of a project.
#[derive(Debug, Clone)]
pub struct EdgeRow {
    pub from_id: String,
    pub to_id: String,
    /// `RELATED_TO`, `CALLS`, `IMPORTS`, `IMPLEMENTS`, `INSTANTIATES`.
    pub kind: String,
    pub note: Option<String>,
}

crate::store::from_row!(EdgeRow {
    from_id,
    to_id,
    kind,
    note
});

/// Every RELATED_TO edge and code link between entities of a project.
pub async fn edges_of_project(conn: &mut Conn, project_id: &str) -> Result<Vec<EdgeRow>> {
    Ok(sqlx::query_as(
        "SELECT r.from_id, r.to_id, 'RELATED_TO' AS kind, r.note FROM code_relations r \
           JOIN code_entities e ON e.id = r.from_id WHERE e.project_id = ?1 \
         UNION ALL SELECT l.from_id, l.to_id, l.link_type, NULL FROM code_links l \
           JOIN code_entities e ON e.id = l.from_id WHERE e.project_id = ?1 \
         ORDER BY 1, 2, 3",
    )
    .bind(project_id)
    .fetch_all(conn.db())
    .await?)
}

/// The first entity (by name, then id) each reference is attached to, for the
/// references a search returns: (reference id, entity id, entity name).
pub async fn holders(
    conn: &mut Conn,
    reference_ids: &[String],
) -> Result<Vec<(String, String, String)>> {
    if reference_ids.is_empty() {
        return Ok(Vec::new());
    }
    let sql = format!(
        "SELECT a.reference_id, e.id, e.name FROM code_attachments a JOIN code_entities e ON e.id = a.entity_id \
         WHERE a.reference_id IN ({}) ORDER BY a.reference_id, e.name, e.id",
        crate::store::placeholders(reference_ids.len())
    );
    let mut q = sqlx::query_as(AssertSqlSafe(sql));
    for id in reference_ids {
        q = q.bind(id);
    }
    Ok(q.fetch_all(conn.db()).await?)
}

/// Streams the vectors of one project made by `model`, in (source, row id) order,
/// handing each row to `each` as borrowed values: loading 40,000 vectors then
/// allocates nothing per row beyond what `each` keeps.
pub async fn each_vector(
    conn: &mut Conn,
    project_id: &str,
    model: &str,
    mut each: impl FnMut(&str, &str, &[u8]),
) -> Result<()> {
    use futures::TryStreamExt;
    let mut rows = sqlx::query(
        "SELECT source, row_id, vector FROM embeddings WHERE project_id = ? AND model = ? ORDER BY source, row_id",
    )
    .bind(project_id)
    .bind(model)
    .fetch(conn.db());
    while let Some(row) = rows.try_next().await? {
        each(row.try_get(0)?, row.try_get(1)?, row.try_get(2)?);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    #[test]
    fn fts_phrases_read_what_fts_tokens_builds() {
        let (p, all) = super::fts_phrases(r#""Inflate"* AND "crc32_combine" AND "say ""hi""""#);
        assert!(all);
        assert_eq!(p.len(), 3);
        assert_eq!(p[0].tsquery(), "('inflate':*)");
        assert_eq!(p[1].tsquery(), "('crc32' <-> 'combine')");
        assert_eq!(p[2].words, ["say", "hi"]);
        let (_, all) = super::fts_phrases(r#""a" OR "b""#);
        assert!(!all);
    }

    #[test]
    fn a_tsvector_reads_as_weighted_frequencies() {
        let t = super::parse_tsvector("'crc32':1A,5 'it''s':2,3,4 'z':7A,9A");
        assert_eq!(
            t,
            [
                ("crc32".to_string(), 5.0),
                ("it's".to_string(), 3.0),
                ("z".to_string(), 8.0)
            ]
        );
    }

    use super::*;
    use crate::store::TestDir;

    /// The windowed lexical query answers what the plain one does, for a project
    /// whose rows rank high, one whose rows are buried under another's, and ties.
    #[tokio::test]
    async fn the_window_answers_what_the_whole_query_does() {
        let dir = TestDir::new("lexical-window");
        let store = dir.store().await;
        let mut c = store.read().await.unwrap();
        let mut rowid = 0;
        for (project, n, body) in [
            ("big", 900, "retry retry ledger worker"),
            ("small", 40, "retry the ledger once"),
            ("tied", 300, "retry ledger"),
        ] {
            for i in 0..n {
                rowid += 1;
                sqlx::query("INSERT INTO code_entities_fts (rowid, name, body, row_id, project_id) VALUES (?, ?, ?, ?, ?)")
                    .bind(rowid)
                    .bind(format!("e{i}"))
                    .bind(format!("{body} {}", if i % 7 == 0 { "retry" } else { "" }))
                    .bind(format!("{project}-{i:04}"))
                    .bind(project)
                    .execute(c.db())
                    .await
                    .unwrap();
            }
        }
        for project in ["big", "small", "tied", "none"] {
            for expr in [
                "\"retry\"",
                "\"retry\" OR \"worker\"",
                "\"ledger\" AND \"once\"",
            ] {
                for limit in [1_i64, 10, 200] {
                    let got = lexical(&mut c, Fts::Entities, project, expr, limit)
                        .await
                        .unwrap();
                    let want: Vec<(String, f64)> = sqlx::query_as(
                        "SELECT row_id, -bm25(code_entities_fts, 4.0, 1.0) AS score FROM code_entities_fts \
                         WHERE code_entities_fts MATCH ? AND project_id = ? ORDER BY score DESC, rowid LIMIT ?",
                    )
                    .bind(expr)
                    .bind(project)
                    .bind(limit)
                    .fetch_all(c.db())
                    .await
                    .unwrap();
                    assert_eq!(got, want, "{project} {expr} {limit}");
                }
            }
        }
    }
}
