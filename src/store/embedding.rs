//! Stored vectors (`embeddings`) and the registry of the texts that get one.
//!
//! A [`Source`] names a table, its id column, the SQL expression of the text to embed
//! and of the owning project; the semantic layer embeds every row of every registered
//! source. A row needs a vector when it has none (never embedded, or its text changed
//! and a trigger deleted the old one) or when its vector came from another embedder; a
//! thorough pass (`cairn reindex`) also compares text hashes, so a missed trigger cannot
//! leave a stale vector behind. Vectors are BLOBs of little-endian f32 (see
//! `embed::vector`); this module stores bytes and knows nothing of models.

use sqlx::AssertSqlSafe;

use crate::store::Result;
use crate::store::{Conn, Flag};

/// One kind of embeddable row. The fields are SQL fragments written in this module (never
/// user input): `text` and `project` are expressions over the table aliased `s`.
#[derive(Debug, Clone, Copy)]
pub struct Source {
    /// Stored in `embeddings.source`; stable, lower-case, singular (`atom`).
    pub name: &'static str,
    pub table: &'static str,
    pub id: &'static str,
    /// The text to embed, e.g. `s.name || '\n' || s.knowledge` (a newline). NULL or empty text
    /// rows are skipped.
    pub text: &'static str,
    pub project: &'static str,
}

pub const ENTITY: Source = Source {
    name: "entity",
    table: "code_entities",
    id: "id",
    text: "s.description",
    project: "s.project_id",
};
pub const REFERENCE: Source = Source {
    name: "reference",
    table: "code_references",
    id: "id",
    text: "s.description",
    project: "s.project_id",
};
/// A RELATED_TO edge has no id column: its row id is `from:to`, which is why `id` is a
/// fragment spliced after `s.` rather than a bare column name.
pub const RELATION: Source = Source {
    name: "relation",
    table: "code_relations",
    id: "from_id || ':' || s.to_id",
    text: "s.note",
    project: "(SELECT project_id FROM code_entities WHERE id = s.from_id)",
};
pub const ATOM: Source = Source {
    name: "atom",
    table: "graph_atoms",
    id: "id",
    text: "s.name || '\n' || s.knowledge",
    project: "s.project_id",
};
pub const MOLECULE: Source = Source {
    name: "molecule",
    table: "graph_molecules",
    id: "id",
    text: "s.name || '\n' || s.knowledge",
    project: "s.project_id",
};

/// Ontology classes: preferred term, alternative terms and definition (properties and
/// individuals have no text to embed), so that a paraphrase finds its class.
pub const ONTOLOGY_CLASS: Source = Source {
    name: "ontology_class",
    table: "ontology_entities",
    id: "id",
    text: "CASE WHEN s.kind = 'class' THEN COALESCE(s.preferred_term, '') || '\n' || \
           COALESCE(s.alt_terms, '') || '\n' || COALESCE(s.definition, '') END",
    project: "s.project_id",
};

/// The alive memory's atoms (statements; migration 0013). The memory is one per
/// database, so its vectors are stored under one tenant, `memory`, rather than a
/// project; a statement never changes, so it needs no staleness trigger.
pub const MEMORY_ATOM: Source = Source {
    name: "memory_atom",
    table: "memory_atoms",
    id: "id",
    text: "s.statement",
    project: "'memory'",
};

/// Tasks and features (title or name, summary, description; migration 0018), under
/// one tenant, `tasks`: a task may belong to no project, and one snapshot then serves
/// every task search, which keeps the rows its filters allow.
pub const TASK: Source = Source {
    name: "task",
    table: "tasks",
    id: "id",
    text: "s.title || '\n' || s.summary || COALESCE('\n' || s.description, '')",
    project: "'tasks'",
};
pub const FEATURE: Source = Source {
    name: "feature",
    table: "features",
    id: "id",
    text: "s.name || '\n' || s.summary || COALESCE('\n' || s.description, '')",
    project: "'tasks'",
};
/// The tenant of [`TASK`] and [`FEATURE`] vectors.
pub const TASKS_TENANT: &str = "tasks";

/// Every source the semantic layer embeds (migrations 0005 and 0014 give the project
/// sources their staleness triggers; a memory statement never changes): entities and
/// references (description), RELATED_TO notes, atoms and molecules (name + knowledge),
/// ontology classes (terms + definition), memory atoms (statement), tasks and
/// features (migration 0018).
pub const SOURCES: &[Source] = &[
    ENTITY,
    REFERENCE,
    RELATION,
    ATOM,
    MOLECULE,
    ONTOLOGY_CLASS,
    MEMORY_ATOM,
    TASK,
    FEATURE,
];

/// A row that needs a vector, with the text to embed.
#[derive(Debug, Clone)]
pub struct Pending {
    pub row_id: String,
    pub project_id: String,
    pub text: String,
}

crate::store::from_row!(Pending {
    row_id,
    project_id,
    text
});

/// A vector to write.
#[derive(Debug, Clone)]
pub struct NewEmbedding<'a> {
    pub source: &'a str,
    pub row_id: &'a str,
    pub project_id: &'a str,
    pub model: &'a str,
    pub dim: usize,
    /// Encoded with `embed::vector::to_blob`.
    pub vector: &'a [u8],
    pub text_hash: &'a str,
    pub truncated: bool,
    pub embedded_at: &'a str,
}

/// A stored vector as search loads it.
#[derive(Debug, Clone)]
pub struct Stored {
    pub source: String,
    pub row_id: String,
    pub vector: Vec<u8>,
    pub truncated: bool,
}

crate::store::from_row!(Stored {
    source,
    row_id,
    vector,
    truncated: flag
});

struct Candidate {
    row_id: String,
    project_id: String,
    text: String,
    model: Option<String>,
    text_hash: Option<String>,
}

crate::store::from_row!(Candidate {
    row_id,
    project_id,
    text,
    model,
    text_hash
});

/// How hard [`pending`] looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    /// Rows without a vector or with another model's: an indexed anti-join, cheap enough
    /// to run before every search.
    Missing,
    /// Also rows whose text no longer matches the stored hash (reads every text).
    Thorough,
    /// Every row, whatever it has (`cairn reindex --all`).
    All,
}

/// The rows of `src` that need a vector from `model`, optionally in one project.
/// `hash` is the text fingerprint used for [`Check::Thorough`].
pub async fn pending(
    conn: &mut Conn,
    src: &Source,
    model: &str,
    project: Option<&str>,
    check: Check,
    hash: impl Fn(&str) -> String,
) -> Result<Vec<Pending>> {
    let mut sql = format!(
        "SELECT s.{id} AS row_id, {project} AS project_id, {text} AS text, e.model AS model, e.text_hash AS text_hash \
         FROM {table} s LEFT JOIN embeddings e ON e.source = ? AND e.row_id = s.{id} \
         WHERE {text} IS NOT NULL AND {text} <> ''",
        id = src.id,
        project = src.project,
        text = src.text,
        table = src.table,
    );
    if check == Check::Missing {
        sql.push_str(" AND (e.row_id IS NULL OR e.model <> ?)");
    }
    if project.is_some() {
        sql.push_str(&format!(" AND {} = ?", src.project));
    }
    sql.push_str(&format!(" ORDER BY s.{}", src.id));
    let mut q = sqlx::query_as::<_, Candidate>(AssertSqlSafe(sql)).bind(src.name);
    if check == Check::Missing {
        q = q.bind(model);
    }
    if let Some(p) = project {
        q = q.bind(p);
    }
    let rows = q.fetch_all(conn.db()).await?;
    Ok(rows
        .into_iter()
        .filter(|c| match check {
            Check::All => true,
            Check::Missing => true,
            Check::Thorough => {
                c.model.as_deref() != Some(model)
                    || c.text_hash.as_deref() != Some(hash(&c.text).as_str())
            }
        })
        .map(|c| Pending {
            row_id: c.row_id,
            project_id: c.project_id,
            text: c.text,
        })
        .collect())
}

/// Up to `limit` rows of `src` with no vector from `model` (none, or another
/// model's), optionally in one project, in id order from after the id `after`: what
/// one embedding batch takes. A caller going through a backlog passes the last id of
/// its previous batch, so each batch reads past what is done instead of over it.
pub async fn pending_some(
    conn: &mut Conn,
    src: &Source,
    model: &str,
    project: Option<&str>,
    after: Option<&str>,
    limit: usize,
) -> Result<Vec<Pending>> {
    let mut sql = format!(
        "SELECT s.{id} AS row_id, {project} AS project_id, {text} AS text \
         FROM {table} s LEFT JOIN embeddings e ON e.source = ? AND e.row_id = s.{id} \
         WHERE {text} IS NOT NULL AND {text} <> '' AND (e.row_id IS NULL OR e.model <> ?)",
        id = src.id,
        project = src.project,
        text = src.text,
        table = src.table,
    );
    if project.is_some() {
        sql.push_str(&format!(" AND {} = ?", src.project));
    }
    if after.is_some() {
        sql.push_str(&format!(" AND s.{} > ?", src.id));
    }
    sql.push_str(&format!(" ORDER BY s.{} LIMIT ?", src.id));
    let mut q = sqlx::query_as::<_, Pending>(AssertSqlSafe(sql))
        .bind(src.name)
        .bind(model);
    if let Some(p) = project {
        q = q.bind(p);
    }
    if let Some(a) = after {
        q = q.bind(a);
    }
    Ok(q.bind(limit as i64).fetch_all(conn.db()).await?)
}

/// How many rows of `src` in `project` have no vector from `model` (none, or another
/// model's): what [`Check::Missing`] would find, counted without reading the texts.
pub async fn count_pending(
    conn: &mut Conn,
    src: &Source,
    model: &str,
    project: &str,
) -> Result<u64> {
    let sql = format!(
        "SELECT count(*) FROM {table} s LEFT JOIN embeddings e ON e.source = ? AND e.row_id = s.{id} \
         WHERE {text} IS NOT NULL AND {text} <> '' AND (e.row_id IS NULL OR e.model <> ?) AND {project} = ?",
        id = src.id,
        project = src.project,
        text = src.text,
        table = src.table,
    );
    let n: i64 = sqlx::query_scalar(AssertSqlSafe(sql))
        .bind(src.name)
        .bind(model)
        .bind(project)
        .fetch_one(conn.db())
        .await?;
    Ok(n.max(0) as u64)
}

/// How many rows of `src`, in every project, wait for a vector: none from `model`,
/// or, before a model is loaded (`None`), none at all.
pub async fn count_waiting(conn: &mut Conn, src: &Source, model: Option<&str>) -> Result<u64> {
    let sql = format!(
        "SELECT count(*) FROM {table} s LEFT JOIN embeddings e ON e.source = ? AND e.row_id = s.{id} \
         WHERE {text} IS NOT NULL AND {text} <> '' AND (e.row_id IS NULL{other})",
        id = src.id,
        text = src.text,
        table = src.table,
        other = if model.is_some() { " OR e.model <> ?" } else { "" },
    );
    let mut q = sqlx::query_scalar::<_, i64>(AssertSqlSafe(sql)).bind(src.name);
    if let Some(m) = model {
        q = q.bind(m);
    }
    Ok(q.fetch_one(conn.db()).await?.max(0) as u64)
}

/// Whether some row of `src` (any project) has no vector at all: asked before any
/// model is loaded, so it cannot name one.
pub async fn any_without_vector(conn: &mut Conn, src: &Source) -> Result<bool> {
    let sql = format!(
        "SELECT EXISTS (SELECT 1 FROM {table} s LEFT JOIN embeddings e ON e.source = ? AND e.row_id = s.{id} \
         WHERE {text} IS NOT NULL AND {text} <> '' AND e.row_id IS NULL)",
        id = src.id,
        text = src.text,
        table = src.table,
    );
    Ok(sqlx::query_scalar::<_, Flag>(AssertSqlSafe(sql))
        .bind(src.name)
        .fetch_one(conn.db())
        .await?
        .0)
}

/// Writes (or replaces) the vector of a row of `src` whose text is still `text`;
/// answers false, writing nothing, when the text changed (or the row went) since it
/// was read. Embedding runs outside any transaction, in the background or in another
/// process, so without this check a vector of the old text could land after the
/// write that changed it (whose trigger removed the old vector) and stay.
pub async fn upsert_current(
    conn: &mut Conn,
    src: &Source,
    e: &NewEmbedding<'_>,
    text: &str,
) -> Result<bool> {
    let sql = format!(
        "INSERT INTO embeddings (source, row_id, project_id, model, dim, vector, text_hash, truncated, embedded_at) \
         SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9 FROM {table} s WHERE s.{id} = ?2 AND {text} = ?10 \
         ON CONFLICT (source, row_id) DO UPDATE SET project_id = excluded.project_id, model = excluded.model, \
         dim = excluded.dim, vector = excluded.vector, text_hash = excluded.text_hash, \
         truncated = excluded.truncated, embedded_at = excluded.embedded_at",
        id = src.id,
        text = src.text,
        table = src.table,
    );
    let done = sqlx::query(AssertSqlSafe(sql))
        .bind(e.source)
        .bind(e.row_id)
        .bind(e.project_id)
        .bind(e.model)
        .bind(e.dim as i64)
        .bind(e.vector)
        .bind(e.text_hash)
        .bind(Flag(e.truncated))
        .bind(e.embedded_at)
        .bind(text)
        .execute(conn.db())
        .await?;
    Ok(done.rows_affected() > 0)
}

/// Removes the vectors of `src` whose row is gone or whose text is now empty (a
/// safety net behind the delete triggers); answers how many.
pub async fn prune(conn: &mut Conn, src: &Source) -> Result<u64> {
    let sql = format!(
        "DELETE FROM embeddings WHERE source = ? AND row_id NOT IN \
         (SELECT s.{id} FROM {table} s WHERE {text} IS NOT NULL AND {text} <> '')",
        id = src.id,
        table = src.table,
        text = src.text,
    );
    Ok(sqlx::query(AssertSqlSafe(sql))
        .bind(src.name)
        .execute(conn.db())
        .await?
        .rows_affected())
}

/// Removes one row's vector (when its text changes outside a trigger's reach).
pub async fn remove(conn: &mut Conn, source: &str, row_id: &str) -> Result<()> {
    sqlx::query("DELETE FROM embeddings WHERE source = ? AND row_id = ?")
        .bind(source)
        .bind(row_id)
        .execute(conn.db())
        .await?;
    Ok(())
}

/// The vectors of one project made by `model`, optionally of some sources only, in a
/// stable order (source, row id).
pub async fn of_project(
    conn: &mut Conn,
    project_id: &str,
    model: &str,
    sources: &[&str],
) -> Result<Vec<Stored>> {
    let mut sql = String::from(
        "SELECT source, row_id, vector, truncated FROM embeddings WHERE project_id = ? AND model = ?",
    );
    if !sources.is_empty() {
        sql.push_str(&format!(
            " AND source IN ({})",
            crate::store::placeholders(sources.len())
        ));
    }
    sql.push_str(" ORDER BY source, row_id");
    let mut q = sqlx::query_as::<_, Stored>(AssertSqlSafe(sql))
        .bind(project_id)
        .bind(model);
    for s in sources {
        q = q.bind(*s);
    }
    Ok(q.fetch_all(conn.db()).await?)
}

/// Counts of stored vectors per model (for `cairn reindex`'s summary).
pub async fn count_by_model(conn: &mut Conn) -> Result<Vec<(String, i64)>> {
    Ok(
        sqlx::query_as("SELECT model, COUNT(*) FROM embeddings GROUP BY model ORDER BY model")
            .fetch_all(conn.db())
            .await?,
    )
}
