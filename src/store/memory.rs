//! The alive memory's rows: subjects and their names, evidence references, memory
//! atoms (never the knowledge graph's atoms: every table is `memory_*`), edges and
//! diary entries (migration 0013). Rows go in and out as plain columns; the service
//! turns them into the domain's values and back, encoding the few list and field
//! columns (tags, a type's own fields) with [`codec`], the stored form's own.
//!
//! An atom's statement, value, subject and context are written by [`insert_atom`]
//! and never again: the updates below move its life fields only, each bumping its
//! version. The one-current-atom-per-claim-key rule is the database's
//! (`memory_atoms_one_current`): a write that would make two current is refused
//! with [`Error::Duplicate`], whichever process makes it.

use futures::TryStreamExt;
use sqlx::{AssertSqlSafe, FromRow};

use crate::store::{lock, placeholders, Conn, Error, Flag, Result};

mod edges;
pub use edges::*;

mod subjects;
pub use subjects::*;

mod neighbours;
pub use neighbours::*;

pub mod codec;

/// The tenant the memory's vectors and full-text rows are stored under: the memory
/// is one per database, not one per project.
pub const TENANT: &str = "memory";

/// The statuses that hold a claim key.
pub const HOLDING: &[&str] = &["ACTIVE", "NEEDS_REVIEW", "CONTESTED"];

/// Turns a unique-index failure into [`Error::Duplicate`] naming `what`.
fn unique(
    r: std::result::Result<sqlx::any::AnyQueryResult, sqlx::Error>,
    entity: &'static str,
    name: impl FnOnce() -> String,
) -> Result<()> {
    match r {
        Ok(_) => Ok(()),
        Err(sqlx::Error::Database(db)) if db.is_unique_violation() => Err(Error::Duplicate {
            entity,
            name: name(),
        }),
        Err(e) => Err(e.into()),
    }
}

/// The rows of `select` (a statement up to its `WHERE`) whose `id` is among `ids`,
/// 500 ids a statement (SQLite's bound parameters are limited); `tail` follows the
/// list (an `ORDER BY`, which then holds within each 500).
async fn by_ids<T>(conn: &mut Conn, select: &str, tail: &str, ids: &[String]) -> Result<Vec<T>>
where
    T: for<'r> FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
{
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let sql = format!("{select} WHERE id IN ({}){tail}", placeholders(chunk.len()));
        let mut q = sqlx::query_as(AssertSqlSafe(sql));
        for id in chunk {
            q = q.bind(id);
        }
        out.extend(q.fetch_all(conn.db()).await?);
    }
    Ok(out)
}

// ---------------------------------------------------------------------------
// References

#[derive(Debug, Clone)]
pub struct ReferenceRow {
    pub id: String,
    pub ref_type: String,
    pub title: Option<String>,
    pub uri: Option<String>,
    pub authors: String,
    pub published_at: Option<String>,
    pub retrieved_at: String,
    pub snippet: Option<String>,
    pub hash: Option<String>,
    pub created_at: String,
}

crate::store::from_row!(ReferenceRow {
    id,
    ref_type,
    title,
    uri,
    authors,
    published_at,
    retrieved_at,
    snippet,
    hash,
    created_at
});

const REFERENCE_COLS: &str =
    "id, ref_type, title, uri, authors, published_at, retrieved_at, snippet, hash, created_at";

pub async fn insert_reference(conn: &mut Conn, r: &ReferenceRow) -> Result<()> {
    sqlx::query(
        "INSERT INTO memory_references (id, ref_type, title, uri, authors, published_at, retrieved_at, snippet, hash, created_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&r.id)
    .bind(&r.ref_type)
    .bind(&r.title)
    .bind(&r.uri)
    .bind(&r.authors)
    .bind(&r.published_at)
    .bind(&r.retrieved_at)
    .bind(&r.snippet)
    .bind(&r.hash)
    .bind(&r.created_at)
    .execute(conn.db())
    .await?;
    Ok(())
}

/// The oldest reference of this type at this URI, if any: a source cited twice is
/// one reference.
pub async fn reference_at(
    conn: &mut Conn,
    ref_type: &str,
    uri: &str,
) -> Result<Option<ReferenceRow>> {
    let sql = format!(
        "SELECT {REFERENCE_COLS} FROM memory_references WHERE uri = ? AND ref_type = ? ORDER BY created_at, id LIMIT 1"
    );
    Ok(sqlx::query_as(AssertSqlSafe(sql))
        .bind(uri)
        .bind(ref_type)
        .fetch_optional(conn.db())
        .await?)
}

pub async fn references_by_ids(conn: &mut Conn, ids: &[String]) -> Result<Vec<ReferenceRow>> {
    by_ids(
        conn,
        &format!("SELECT {REFERENCE_COLS} FROM memory_references"),
        " ORDER BY created_at, id",
        ids,
    )
    .await
}

/// Every reference's id and type (what the curator weighs evidence with).
pub async fn all_reference_types(conn: &mut Conn) -> Result<Vec<(String, String)>> {
    Ok(sqlx::query_as("SELECT id, ref_type FROM memory_references")
        .fetch_all(conn.db())
        .await?)
}

// ---------------------------------------------------------------------------
// Atoms

#[derive(Debug, Clone)]
pub struct AtomRow {
    pub id: String,
    pub atom_type: String,
    pub statement: String,
    pub predicate: Option<String>,
    pub value_kind: Option<String>,
    pub value: Option<String>,
    pub about_id: Option<String>,
    pub context_id: Option<String>,
    pub claim_key: Option<String>,
    pub group_key: String,
    pub status: String,
    pub status_reason: Option<String>,
    pub confidence: f64,
    pub validated_confidence: f64,
    pub importance: String,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub notes: Option<String>,
    pub resolution: Option<String>,
    pub tags: String,
    pub author: Option<String>,
    pub confirmed_by: Option<String>,
    pub confirmed_at: Option<String>,
    pub valid_from: Option<String>,
    pub valid_to: Option<String>,
    pub recorded_at: String,
    pub retired_at: Option<String>,
    pub last_validated_at: Option<String>,
    pub next_review_at: Option<String>,
    pub review_interval_days: Option<i64>,
    pub decision_status: Option<String>,
    pub details: String,
    pub version: i64,
    pub updated_at: String,
}

crate::store::from_row!(AtomRow {
    id,
    atom_type,
    statement,
    predicate,
    value_kind,
    value,
    about_id,
    context_id,
    claim_key,
    group_key,
    status,
    status_reason,
    confidence,
    validated_confidence,
    importance,
    title,
    summary,
    notes,
    resolution,
    tags,
    author,
    confirmed_by,
    confirmed_at,
    valid_from,
    valid_to,
    recorded_at,
    retired_at,
    last_validated_at,
    next_review_at,
    review_interval_days,
    decision_status,
    details,
    version,
    updated_at
});

const ATOM_COLS: &str = "id, atom_type, statement, predicate, value_kind, value, about_id, context_id, claim_key, \
     group_key, status, status_reason, confidence, validated_confidence, importance, title, summary, notes, resolution, \
     tags, author, confirmed_by, confirmed_at, valid_from, valid_to, recorded_at, retired_at, last_validated_at, \
     next_review_at, review_interval_days, decision_status, details, version, updated_at";

fn atom_cols(alias: &str) -> String {
    ATOM_COLS
        .split(", ")
        .map(|c| format!("{alias}.{}", c.trim()))
        .collect::<Vec<_>>()
        .join(", ")
}

/// Inserts a new atom at version 1. A current status on a key that already has a
/// current atom fails with [`Error::Duplicate`].
pub async fn insert_atom(conn: &mut Conn, a: &AtomRow) -> Result<()> {
    let r = sqlx::query(
        "INSERT INTO memory_atoms (id, atom_type, statement, predicate, value_kind, value, about_id, context_id, claim_key, \
         group_key, status, status_reason, confidence, validated_confidence, importance, title, summary, notes, resolution, \
         tags, author, confirmed_by, confirmed_at, valid_from, valid_to, recorded_at, retired_at, last_validated_at, \
         next_review_at, review_interval_days, decision_status, details, version, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?)",
    )
    .bind(&a.id)
    .bind(&a.atom_type)
    .bind(&a.statement)
    .bind(&a.predicate)
    .bind(&a.value_kind)
    .bind(&a.value)
    .bind(&a.about_id)
    .bind(&a.context_id)
    .bind(&a.claim_key)
    .bind(&a.group_key)
    .bind(&a.status)
    .bind(&a.status_reason)
    .bind(a.confidence)
    .bind(a.validated_confidence)
    .bind(&a.importance)
    .bind(&a.title)
    .bind(&a.summary)
    .bind(&a.notes)
    .bind(&a.resolution)
    .bind(&a.tags)
    .bind(&a.author)
    .bind(&a.confirmed_by)
    .bind(&a.confirmed_at)
    .bind(&a.valid_from)
    .bind(&a.valid_to)
    .bind(&a.recorded_at)
    .bind(&a.retired_at)
    .bind(&a.last_validated_at)
    .bind(&a.next_review_at)
    .bind(a.review_interval_days)
    .bind(&a.decision_status)
    .bind(&a.details)
    .bind(&a.updated_at)
    .execute(conn.db())
    .await;
    unique(r, "current atom on claim key", || {
        a.claim_key.clone().unwrap_or_default()
    })
}

pub async fn atom(conn: &mut Conn, id: &str) -> Result<Option<AtomRow>> {
    let sql = format!("SELECT {ATOM_COLS} FROM memory_atoms WHERE id = ?");
    Ok(sqlx::query_as(AssertSqlSafe(sql))
        .bind(id)
        .fetch_optional(conn.db())
        .await?)
}

pub async fn atoms_by_ids(conn: &mut Conn, ids: &[String]) -> Result<Vec<AtomRow>> {
    by_ids(
        conn,
        &format!("SELECT {ATOM_COLS} FROM memory_atoms"),
        "",
        ids,
    )
    .await
}

/// The atoms of one group (claim key or statement group) not yet retired: what a new
/// atom or a settlement competes with. `holding_only` keeps those that hold the key.
pub async fn group(conn: &mut Conn, group_key: &str, holding_only: bool) -> Result<Vec<AtomRow>> {
    let statuses: &[&str] = if holding_only {
        HOLDING
    } else {
        &["ACTIVE", "NEEDS_REVIEW", "CONTESTED", "DRAFT", "PROPOSED"]
    };
    let sql = format!(
        "SELECT {ATOM_COLS} FROM memory_atoms WHERE group_key = ? AND status IN ({}) ORDER BY recorded_at, id",
        placeholders(statuses.len())
    );
    let mut q = sqlx::query_as(AssertSqlSafe(sql)).bind(group_key);
    for s in statuses {
        q = q.bind(*s);
    }
    Ok(q.fetch_all(conn.db()).await?)
}

/// ACTIVE accepted Decisions on one claim key (the Decision's key for a predicate,
/// subject and context: a resolution for the keys of other types).
pub async fn accepted_decisions(conn: &mut Conn, decision_key: &str) -> Result<Vec<AtomRow>> {
    let sql = format!(
        "SELECT {ATOM_COLS} FROM memory_atoms WHERE group_key = ? AND status = 'ACTIVE' \
         AND atom_type = 'Decision' AND decision_status = 'accepted' ORDER BY recorded_at, id"
    );
    Ok(sqlx::query_as(AssertSqlSafe(sql))
        .bind(decision_key)
        .fetch_all(conn.db())
        .await?)
}

/// Which of `keys` have live atoms (any status but retired): the keys of other
/// types on a Decision's predicate, subject and context that it may settle.
pub async fn live_groups(conn: &mut Conn, keys: &[String]) -> Result<Vec<String>> {
    if keys.is_empty() {
        return Ok(vec![]);
    }
    let sql = format!(
        "SELECT DISTINCT group_key FROM memory_atoms WHERE group_key IN ({}) \
         AND status IN ('ACTIVE', 'NEEDS_REVIEW', 'CONTESTED', 'DRAFT', 'PROPOSED') ORDER BY group_key",
        placeholders(keys.len())
    );
    let mut q = sqlx::query_scalar(AssertSqlSafe(sql));
    for k in keys {
        q = q.bind(k);
    }
    Ok(q.fetch_all(conn.db()).await?)
}

/// Streams every atom (history included) to `each`, in recording order.
pub async fn each_atom(conn: &mut Conn, mut each: impl FnMut(AtomRow)) -> Result<()> {
    let sql = format!("SELECT {ATOM_COLS} FROM memory_atoms ORDER BY recorded_at, id");
    let mut rows = sqlx::query_as::<_, AtomRow>(AssertSqlSafe(sql)).fetch(conn.db());
    while let Some(r) = rows.try_next().await? {
        each(r);
    }
    Ok(())
}

/// Filters for listing atoms; every given filter applies.
#[derive(Debug, Clone, Default)]
pub struct AtomFilter {
    pub statuses: Vec<String>,
    pub types: Vec<String>,
    pub about: Vec<String>,
    /// Context subjects; `global` includes atoms with none.
    pub contexts: Vec<String>,
    pub global: bool,
    pub predicate: Option<String>,
    pub claim_key: Option<String>,
    /// Atoms recorded at or before, and not retired at (`asOf`).
    pub believed_at: Option<String>,
    /// Only these ids.
    pub ids: Option<Vec<String>>,
}

fn filter_sql(f: &AtomFilter, binds: &mut Vec<String>) -> String {
    let mut w: Vec<String> = Vec::new();
    // Given ids, the primary key finds the rows; the other filters only check them
    // (a column inside an expression keeps SQLite from scanning another index
    // instead; SQLite's usual unary `+` is no operator on text in PostgreSQL).
    let p = if f.ids.is_some() { " || ''" } else { "" };
    let mut list = |col: &str, vals: &[String], binds: &mut Vec<String>| {
        if !vals.is_empty() {
            w.push(format!("{col} IN ({})", placeholders(vals.len())));
            binds.extend(vals.iter().cloned());
        }
    };
    list(&format!("a.status{p}"), &f.statuses, binds);
    list(&format!("a.atom_type{p}"), &f.types, binds);
    list(&format!("a.about_id{p}"), &f.about, binds);
    if let Some(ids) = &f.ids {
        if ids.is_empty() {
            w.push("1 = 0".into());
        } else {
            list("a.id", ids, binds);
        }
    }
    if !f.contexts.is_empty() || f.global {
        let mut alts = Vec::new();
        if !f.contexts.is_empty() {
            alts.push(format!(
                "a.context_id IN ({})",
                placeholders(f.contexts.len())
            ));
            binds.extend(f.contexts.iter().cloned());
        }
        if f.global {
            alts.push(format!("a.context_id{p} IS NULL"));
        }
        w.push(format!("({})", alts.join(" OR ")));
    }
    if let Some(p) = &f.predicate {
        w.push("a.predicate = ?".into());
        binds.push(p.clone());
    }
    if let Some(k) = &f.claim_key {
        w.push("a.claim_key = ?".into());
        binds.push(k.clone());
    }
    if let Some(t) = &f.believed_at {
        w.push("a.recorded_at <= ? AND (a.retired_at IS NULL OR a.retired_at > ?)".into());
        binds.push(t.clone());
        binds.push(t.clone());
    }
    if w.is_empty() {
        "1 = 1".into()
    } else {
        w.join(" AND ")
    }
}

/// A page of atoms matching `f`, newest first, with the total.
pub async fn list_atoms(
    conn: &mut Conn,
    f: &AtomFilter,
    limit: i64,
    offset: i64,
) -> Result<(Vec<AtomRow>, i64)> {
    let mut binds = Vec::new();
    let w = filter_sql(f, &mut binds);
    let count = format!("SELECT COUNT(*) FROM memory_atoms a WHERE {w}");
    let mut c = sqlx::query_scalar::<_, i64>(AssertSqlSafe(count));
    for b in &binds {
        c = c.bind(b);
    }
    let total = c.fetch_one(conn.db()).await?;
    let sql = format!(
        "SELECT {} FROM memory_atoms a WHERE {w} ORDER BY a.recorded_at DESC, a.id DESC LIMIT ? OFFSET ?",
        atom_cols("a")
    );
    let mut q = sqlx::query_as::<_, AtomRow>(AssertSqlSafe(sql));
    for b in &binds {
        q = q.bind(b);
    }
    let rows = q.bind(limit).bind(offset).fetch_all(conn.db()).await?;
    Ok((rows, total))
}

/// Atoms matching `f`, at most `limit`, the most recently validated first (what a
/// recall without text ranks).
pub async fn candidates(conn: &mut Conn, f: &AtomFilter, limit: i64) -> Result<Vec<AtomRow>> {
    let mut binds = Vec::new();
    let w = filter_sql(f, &mut binds);
    let sql = format!(
        "SELECT {} FROM memory_atoms a WHERE {w} \
         ORDER BY COALESCE(a.last_validated_at, a.recorded_at) DESC, a.id LIMIT ?",
        atom_cols("a")
    );
    let mut q = sqlx::query_as::<_, AtomRow>(AssertSqlSafe(sql));
    for b in &binds {
        q = q.bind(b);
    }
    Ok(q.bind(limit).fetch_all(conn.db()).await?)
}

/// How many atoms of each status there are about a subject (or in its context).
pub async fn counts_about(conn: &mut Conn, subject_id: &str) -> Result<Vec<(String, i64)>> {
    Ok(sqlx::query_as(
        "SELECT status, COUNT(*) FROM memory_atoms WHERE about_id = ?1 OR context_id = ?1 GROUP BY status ORDER BY status",
    )
    .bind(subject_id)
    .fetch_all(conn.db())
    .await?)
}

/// A life-field change to one atom, made as a consequence of a rule (touched: the
/// version moves, no version is checked). `status_from`, when given, must be the
/// atom's status: the plan was made on what this transaction read, so a mismatch is
/// a fault, reported as NOT_FOUND of the atom in that state.
#[derive(Debug, Clone, Default)]
pub struct AtomChange {
    pub status: Option<(String, String)>,
    pub retired_at: Option<String>,
    pub status_reason: Option<Option<String>>,
    pub decision_status: Option<String>,
    pub resolution: Option<String>,
    pub claim_key: Option<Option<String>>,
    pub group_key: Option<String>,
    pub next_review_at: Option<Option<String>>,
    pub confidence: Option<f64>,
    pub validated_confidence: Option<f64>,
    pub last_validated_at: Option<String>,
    pub confirmed: Option<(String, String)>,
    pub about_id: Option<(String, String)>,
    pub context_id: Option<(String, String)>,
}

/// Applies `c` to atom `id`, bumping its version; `expected` checks the version the
/// caller read (None: a consequence, not checked). Answers the new version.
pub async fn change_atom(
    conn: &mut Conn,
    id: &str,
    expected: Option<i64>,
    c: &AtomChange,
    now: &str,
) -> Result<i64> {
    // A caller's change claims the version it read first; a consequence of a rule
    // bumps it in the same statement as the change (one write per change, which is
    // what a curator pass over many atoms is made of).
    let checked = match expected {
        Some(e) => Some(lock::bump(conn, lock::MEMORY_ATOMS, id, e, now).await?),
        None => None,
    };
    enum B {
        Text(Option<String>),
        Num(f64),
    }
    let mut sets: Vec<&str> = Vec::new();
    let mut binds: Vec<B> = Vec::new();
    let mut guard: Vec<(&str, String)> = Vec::new();
    let mut set = |col: &'static str, b: B, sets: &mut Vec<&str>| {
        sets.push(col);
        binds.push(b);
    };
    if let Some((from, to)) = &c.status {
        set("status = ?", B::Text(Some(to.clone())), &mut sets);
        guard.push(("status", from.clone()));
    }
    if let Some(r) = &c.retired_at {
        set(
            "retired_at = COALESCE(retired_at, ?)",
            B::Text(Some(r.clone())),
            &mut sets,
        );
    }
    if let Some(r) = &c.status_reason {
        set("status_reason = ?", B::Text(r.clone()), &mut sets);
    }
    if let Some(d) = &c.decision_status {
        set("decision_status = ?", B::Text(Some(d.clone())), &mut sets);
    }
    if let Some(r) = &c.resolution {
        set("resolution = ?", B::Text(Some(r.clone())), &mut sets);
    }
    if let Some(k) = &c.claim_key {
        set("claim_key = ?", B::Text(k.clone()), &mut sets);
    }
    if let Some(g) = &c.group_key {
        set("group_key = ?", B::Text(Some(g.clone())), &mut sets);
    }
    if let Some(n) = &c.next_review_at {
        set("next_review_at = ?", B::Text(n.clone()), &mut sets);
    }
    if let Some(x) = c.confidence {
        set("confidence = ?", B::Num(x), &mut sets);
    }
    if let Some(x) = c.validated_confidence {
        set("validated_confidence = ?", B::Num(x), &mut sets);
    }
    if let Some(t) = &c.last_validated_at {
        set("last_validated_at = ?", B::Text(Some(t.clone())), &mut sets);
    }
    if let Some((by, at)) = &c.confirmed {
        set("confirmed_by = ?", B::Text(Some(by.clone())), &mut sets);
        set("confirmed_at = ?", B::Text(Some(at.clone())), &mut sets);
    }
    if let Some((from, to)) = &c.about_id {
        set("about_id = ?", B::Text(Some(to.clone())), &mut sets);
        guard.push(("about_id", from.clone()));
    }
    if let Some((from, to)) = &c.context_id {
        set("context_id = ?", B::Text(Some(to.clone())), &mut sets);
        guard.push(("context_id", from.clone()));
    }
    if checked.is_none() {
        sets.push("version = version + 1");
        sets.push("updated_at = ?");
        binds.push(B::Text(Some(now.to_string())));
    }
    if sets.is_empty() {
        return checked.ok_or_else(|| Error::Internal("an atom change without changes".into()));
    }
    let mut sql = format!("UPDATE memory_atoms SET {} WHERE id = ?", sets.join(", "));
    for (col, _) in &guard {
        sql.push_str(&format!(" AND {col} = ?"));
    }
    sql.push_str(" RETURNING version");
    let mut q = sqlx::query(AssertSqlSafe(sql));
    for b in binds {
        q = match b {
            B::Text(t) => q.bind(t),
            B::Num(x) => q.bind(x),
        };
    }
    q = q.bind(id);
    for (_, g) in &guard {
        q = q.bind(g.clone());
    }
    let r = q.fetch_optional(conn.db()).await;
    let key = c.claim_key.clone().flatten();
    match r {
        Ok(Some(row)) => match checked {
            Some(v) => Ok(v),
            None => Ok(sqlx::Row::try_get::<i64, _>(&row, 0)?),
        },
        Ok(None) => match sqlx::query_scalar::<_, i64>("SELECT 1 FROM memory_atoms WHERE id = ?")
            .bind(id)
            .fetch_optional(conn.db())
            .await?
        {
            None => Err(Error::not_found("memory atom", id)),
            Some(_) => Err(Error::Internal(format!(
                "atom {id} is not in the state the plan was made on"
            ))),
        },
        Err(sqlx::Error::Database(db)) if db.is_unique_violation() => Err(Error::Duplicate {
            entity: "current atom on claim key",
            name: key.unwrap_or_else(|| id.to_string()),
        }),
        Err(e) => Err(e.into()),
    }
}

// ---------------------------------------------------------------------------
// Diary

#[derive(Debug, Clone)]
pub struct DiaryRow {
    pub id: String,
    pub project_id: Option<String>,
    pub task_id: Option<String>,
    pub session: Option<String>,
    pub accomplishments: String,
    pub decisions: String,
    pub challenges: String,
    pub learnings: String,
    pub recorded_at: String,
    pub created_at: String,
}

crate::store::from_row!(DiaryRow {
    id,
    project_id,
    task_id,
    session,
    accomplishments,
    decisions,
    challenges,
    learnings,
    recorded_at,
    created_at
});

const DIARY_COLS: &str =
    "id, project_id, task_id, session, accomplishments, decisions, challenges, learnings, recorded_at, created_at";

pub async fn insert_diary(conn: &mut Conn, d: &DiaryRow) -> Result<()> {
    sqlx::query(
        "INSERT INTO memory_diary (id, project_id, task_id, session, accomplishments, decisions, challenges, learnings, \
         recorded_at, created_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    )
    .bind(&d.id)
    .bind(&d.project_id)
    .bind(&d.task_id)
    .bind(&d.session)
    .bind(&d.accomplishments)
    .bind(&d.decisions)
    .bind(&d.challenges)
    .bind(&d.learnings)
    .bind(&d.recorded_at)
    .bind(&d.created_at)
    .execute(conn.db())
    .await?;
    Ok(())
}

pub async fn diary_by_ids(conn: &mut Conn, ids: &[String]) -> Result<Vec<DiaryRow>> {
    by_ids(
        conn,
        &format!("SELECT {DIARY_COLS} FROM memory_diary"),
        " ORDER BY recorded_at, id",
        ids,
    )
    .await
}

/// Diary filters; every given one applies.
#[derive(Debug, Clone, Default)]
pub struct DiaryFilter {
    pub session: Option<String>,
    pub task_id: Option<String>,
    pub project_id: Option<String>,
    pub since: Option<String>,
}

/// A page of diary entries, newest first, with the total.
pub async fn list_diary(
    conn: &mut Conn,
    f: &DiaryFilter,
    limit: i64,
    offset: i64,
) -> Result<(Vec<DiaryRow>, i64)> {
    let mut w = vec!["1 = 1"];
    let mut binds: Vec<&String> = Vec::new();
    if let Some(s) = &f.session {
        w.push("session = ?");
        binds.push(s);
    }
    if let Some(t) = &f.task_id {
        w.push("task_id = ?");
        binds.push(t);
    }
    if let Some(p) = &f.project_id {
        w.push("project_id = ?");
        binds.push(p);
    }
    if let Some(s) = &f.since {
        w.push("recorded_at >= ?");
        binds.push(s);
    }
    let w = w.join(" AND ");
    let mut c = sqlx::query_scalar::<_, i64>(AssertSqlSafe(format!(
        "SELECT COUNT(*) FROM memory_diary WHERE {w}"
    )));
    for b in &binds {
        c = c.bind(*b);
    }
    let total = c.fetch_one(conn.db()).await?;
    let mut q = sqlx::query_as::<_, DiaryRow>(AssertSqlSafe(format!(
        "SELECT {DIARY_COLS} FROM memory_diary WHERE {w} ORDER BY recorded_at DESC, id DESC LIMIT ? OFFSET ?"
    )));
    for b in &binds {
        q = q.bind(*b);
    }
    let rows = q.bind(limit).bind(offset).fetch_all(conn.db()).await?;
    Ok((rows, total))
}

/// Whether a task exists, and its project (diary entries name both).
pub async fn task_project(conn: &mut Conn, task_id: &str) -> Result<Option<Option<String>>> {
    let r: Option<(Option<String>,)> = sqlx::query_as("SELECT project_id FROM tasks WHERE id = ?")
        .bind(task_id)
        .fetch_optional(conn.db())
        .await?;
    Ok(r.map(|x| x.0))
}

/// The review queue: atoms due for review, contested, or waiting for evidence
/// (PROPOSED, DRAFT), and ACTIVE atoms whose review falls before `due_before`;
/// most urgent first, with the total.
pub async fn review_queue(
    conn: &mut Conn,
    due_before: &str,
    limit: i64,
    offset: i64,
) -> Result<(Vec<AtomRow>, i64)> {
    const WHERE: &str = "status IN ('NEEDS_REVIEW', 'CONTESTED', 'PROPOSED', 'DRAFT') \
                         OR (status = 'ACTIVE' AND next_review_at <= ?)";
    let total: i64 = sqlx::query_scalar(AssertSqlSafe(format!(
        "SELECT COUNT(*) FROM memory_atoms WHERE {WHERE}"
    )))
    .bind(due_before)
    .fetch_one(conn.db())
    .await?;
    let sql = format!(
        "SELECT {ATOM_COLS} FROM memory_atoms WHERE {WHERE} ORDER BY \
         CASE status WHEN 'NEEDS_REVIEW' THEN 0 WHEN 'CONTESTED' THEN 1 WHEN 'ACTIVE' THEN 2 WHEN 'PROPOSED' THEN 3 ELSE 4 END, \
         COALESCE(next_review_at, recorded_at), id LIMIT ? OFFSET ?"
    );
    let rows = sqlx::query_as(AssertSqlSafe(sql))
        .bind(due_before)
        .bind(limit)
        .bind(offset)
        .fetch_all(conn.db())
        .await?;
    Ok((rows, total))
}

/// Brings the statements' full-text index up to the newest atom (migration 0013): a
/// read when nothing was added since, else one write transaction adding the rows
/// above the mark. Called by `semantic::lexical` before a memory search, outside a
/// transaction.
pub async fn catch_up_search(conn: &mut Conn) -> Result<()> {
    const MARKS: &str = "SELECT (SELECT upto FROM memory_search_indexed WHERE id = 1), \
                         COALESCE((SELECT MAX(rowid) FROM memory_atoms), 0)";
    let (upto, newest): (i64, i64) = sqlx::query_as(MARKS).fetch_one(conn.db()).await?;
    if upto >= newest {
        return Ok(());
    }
    let mut tx = conn.begin_write().await?;
    // Read again under the write lock: another catch-up may have run meanwhile.
    let (upto, newest): (i64, i64) = sqlx::query_as(MARKS).fetch_one(tx.db()).await?;
    if upto < newest {
        sqlx::query(
            "INSERT INTO memory_atoms_fts (rowid, name, body, row_id, project_id) \
             SELECT rowid, COALESCE(title, '') || ' ' || COALESCE(predicate, ''), statement, id, 'memory' \
               FROM memory_atoms WHERE rowid > ?1 AND rowid <= ?2",
        )
        .bind(upto)
        .bind(newest)
        .execute(tx.db())
        .await?;
        sqlx::query("UPDATE memory_search_indexed SET upto = ? WHERE id = 1")
            .bind(newest)
            .execute(tx.db())
            .await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Changes the status of many atoms at once, each from `from` (the state the plan
/// read) to `to`, with its own reason and, when given, its new confidence; entering
/// a retired status sets `retired_at` once. Answers (id, new version) for each; an atom not in `from` fails the whole
/// call, as does a second current atom on a key.
pub async fn set_statuses(
    conn: &mut Conn,
    from: &str,
    to: &str,
    retired_at: Option<&str>,
    rows: &[(String, String, Option<f64>)],
    now: &str,
) -> Result<Vec<(String, i64)>> {
    let mut out = Vec::with_capacity(rows.len());
    for chunk in rows.chunks(300) {
        let values = vec!["(?, ?, ?)"; chunk.len()].join(", ");
        let sql = format!(
            "WITH v(id, reason, c) AS (VALUES {values}) \
             UPDATE memory_atoms SET status = ?, status_reason = v.reason, \
             confidence = COALESCE(v.c, memory_atoms.confidence), \
             retired_at = COALESCE(retired_at, ?), version = version + 1, updated_at = ? \
             FROM v WHERE memory_atoms.id = v.id AND memory_atoms.status = ? \
             RETURNING memory_atoms.id, memory_atoms.version"
        );
        let mut q = sqlx::query_as::<_, (String, i64)>(AssertSqlSafe(sql));
        for (id, reason, c) in chunk {
            q = q.bind(id).bind(reason).bind(*c);
        }
        let r = q
            .bind(to)
            .bind(retired_at)
            .bind(now)
            .bind(from)
            // A confidence may be NULL: see `dialect::Db` on optional floats.
            .persistent(false)
            .fetch_all(conn.db())
            .await;
        let done = match r {
            Ok(d) => d,
            Err(sqlx::Error::Database(db)) if db.is_unique_violation() => {
                return Err(Error::Duplicate {
                    entity: "current atom on claim key",
                    name: format!("one of {} atoms made {to}", chunk.len()),
                })
            }
            Err(e) => return Err(e.into()),
        };
        if done.len() != chunk.len() {
            return Err(Error::Internal(format!(
                "{} of {} atoms are not {from}, the state the plan was made on",
                chunk.len() - done.len(),
                chunk.len()
            )));
        }
        out.extend(done);
    }
    Ok(out)
}

/// Sets the current confidence of many atoms at once (decay).
pub async fn set_confidences(
    conn: &mut Conn,
    rows: &[(String, f64)],
    now: &str,
) -> Result<Vec<(String, i64)>> {
    let mut out = Vec::with_capacity(rows.len());
    for chunk in rows.chunks(400) {
        let values = vec!["(?, ?)"; chunk.len()].join(", ");
        let sql = format!(
            "WITH v(id, c) AS (VALUES {values}) \
             UPDATE memory_atoms SET confidence = v.c, version = version + 1, updated_at = ? \
             FROM v WHERE memory_atoms.id = v.id RETURNING memory_atoms.id, memory_atoms.version"
        );
        let mut q = sqlx::query_as::<_, (String, i64)>(AssertSqlSafe(sql));
        for (id, c) in chunk {
            q = q.bind(id).bind(*c);
        }
        let done = q.bind(now).fetch_all(conn.db()).await?;
        if done.len() != chunk.len() {
            return Err(Error::not_found(
                "memory atom",
                format!("{} of {}", chunk.len() - done.len(), chunk.len()),
            ));
        }
        out.extend(done);
    }
    Ok(out)
}

/// Sets the next review date of many atoms at once.
pub async fn set_next_reviews(
    conn: &mut Conn,
    rows: &[(String, Option<String>)],
    now: &str,
) -> Result<Vec<(String, i64)>> {
    let mut out = Vec::with_capacity(rows.len());
    for chunk in rows.chunks(400) {
        let values = vec!["(?, ?)"; chunk.len()].join(", ");
        let sql = format!(
            "WITH v(id, t) AS (VALUES {values}) \
             UPDATE memory_atoms SET next_review_at = v.t, version = version + 1, updated_at = ? \
             FROM v WHERE memory_atoms.id = v.id RETURNING memory_atoms.id, memory_atoms.version"
        );
        let mut q = sqlx::query_as::<_, (String, i64)>(AssertSqlSafe(sql));
        for (id, t) in chunk {
            q = q.bind(id).bind(t);
        }
        let done = q.bind(now).fetch_all(conn.db()).await?;
        if done.len() != chunk.len() {
            return Err(Error::not_found(
                "memory atom",
                format!("{} of {}", chunk.len() - done.len(), chunk.len()),
            ));
        }
        out.extend(done);
    }
    Ok(out)
}

/// The atoms of several groups (see [`group`]).
pub async fn groups(conn: &mut Conn, keys: &[String], holding_only: bool) -> Result<Vec<AtomRow>> {
    let statuses: &[&str] = if holding_only {
        HOLDING
    } else {
        &["ACTIVE", "NEEDS_REVIEW", "CONTESTED", "DRAFT", "PROPOSED"]
    };
    let sql = format!(
        "SELECT {ATOM_COLS} FROM memory_atoms WHERE group_key IN ({}) AND status IN ({}) ORDER BY recorded_at, id",
        placeholders(keys.len()),
        placeholders(statuses.len())
    );
    let mut q = sqlx::query_as(AssertSqlSafe(sql));
    for k in keys {
        q = q.bind(k);
    }
    for s in statuses {
        q = q.bind(*s);
    }
    Ok(q.fetch_all(conn.db()).await?)
}
