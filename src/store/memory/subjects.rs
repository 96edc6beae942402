//! Subjects and their names.

use super::*;

#[derive(Debug, Clone)]
pub struct SubjectRow {
    pub id: String,
    pub kind: String,
    pub name: String,
    pub title: Option<String>,
    pub summary: Option<String>,
    pub tags: String,
    pub details: String,
    pub orchestrator_project_id: Option<String>,
    pub merged_into: Option<String>,
    pub version: i64,
    pub created_at: String,
    pub updated_at: String,
}

crate::store::from_row!(SubjectRow {
    id,
    kind,
    name,
    title,
    summary,
    tags,
    details,
    orchestrator_project_id,
    merged_into,
    version,
    created_at,
    updated_at
});

const SUBJECT_COLS: &str =
    "id, kind, name, title, summary, tags, details, orchestrator_project_id, \
                            merged_into, version, created_at, updated_at";

/// One name of a subject (its name or an alias) with its normal form.
#[derive(Debug, Clone)]
pub struct NameRow {
    pub subject_id: String,
    pub name: String,
    pub norm: String,
    pub is_alias: bool,
}

crate::store::from_row!(NameRow {
    subject_id,
    name,
    norm,
    is_alias: flag
});

pub async fn insert_subject(conn: &mut Conn, s: &SubjectRow) -> Result<()> {
    let r = sqlx::query(
        "INSERT INTO memory_subjects (id, kind, name, title, summary, tags, details, orchestrator_project_id, \
         merged_into, version, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
    )
    .bind(&s.id)
    .bind(&s.kind)
    .bind(&s.name)
    .bind(&s.title)
    .bind(&s.summary)
    .bind(&s.tags)
    .bind(&s.details)
    .bind(&s.orchestrator_project_id)
    .bind(&s.merged_into)
    .bind(&s.created_at)
    .bind(&s.updated_at)
    .execute(conn.db())
    .await;
    unique(r, "Project subject for orchestrator project", || {
        s.orchestrator_project_id.clone().unwrap_or_default()
    })
}

/// Rewrites a subject's mutable columns after a checked version bump.
pub async fn update_subject(conn: &mut Conn, s: &SubjectRow, expected: i64) -> Result<i64> {
    let v = lock::bump(conn, lock::MEMORY_SUBJECTS, &s.id, expected, &s.updated_at).await?;
    let r = sqlx::query(
        "UPDATE memory_subjects SET name = ?, title = ?, summary = ?, tags = ?, details = ?, \
         orchestrator_project_id = ? WHERE id = ?",
    )
    .bind(&s.name)
    .bind(&s.title)
    .bind(&s.summary)
    .bind(&s.tags)
    .bind(&s.details)
    .bind(&s.orchestrator_project_id)
    .bind(&s.id)
    .execute(conn.db())
    .await;
    unique(r, "Project subject for orchestrator project", || {
        s.orchestrator_project_id.clone().unwrap_or_default()
    })?;
    Ok(v)
}

/// Records that `id` was merged into `into` (a consequence of identity resolution:
/// touched, not checked).
pub async fn set_merged_into(conn: &mut Conn, id: &str, into: &str, now: &str) -> Result<()> {
    lock::touch(conn, lock::MEMORY_SUBJECTS, id, now).await?;
    sqlx::query("UPDATE memory_subjects SET merged_into = ? WHERE id = ?")
        .bind(into)
        .bind(id)
        .execute(conn.db())
        .await?;
    Ok(())
}

/// Rewrites the kind's fields of a subject changed as a consequence of a merge.
pub async fn set_subject_details(
    conn: &mut Conn,
    id: &str,
    details: &str,
    now: &str,
) -> Result<()> {
    lock::touch(conn, lock::MEMORY_SUBJECTS, id, now).await?;
    sqlx::query("UPDATE memory_subjects SET details = ? WHERE id = ?")
        .bind(details)
        .bind(id)
        .execute(conn.db())
        .await?;
    Ok(())
}

/// Bumps a subject's version and `updated_at` (a name added).
pub async fn touch_subject(conn: &mut Conn, id: &str, now: &str) -> Result<i64> {
    lock::touch(conn, lock::MEMORY_SUBJECTS, id, now).await
}

pub async fn subject(conn: &mut Conn, id: &str) -> Result<Option<SubjectRow>> {
    let sql = format!("SELECT {SUBJECT_COLS} FROM memory_subjects WHERE id = ?");
    Ok(sqlx::query_as(AssertSqlSafe(sql))
        .bind(id)
        .fetch_optional(conn.db())
        .await?)
}

pub async fn subjects_by_ids(conn: &mut Conn, ids: &[String]) -> Result<Vec<SubjectRow>> {
    by_ids(
        conn,
        &format!("SELECT {SUBJECT_COLS} FROM memory_subjects"),
        "",
        ids,
    )
    .await
}

/// Every subject, merged ones included, in creation order.
pub async fn all_subjects(conn: &mut Conn) -> Result<Vec<SubjectRow>> {
    let sql = format!("SELECT {SUBJECT_COLS} FROM memory_subjects ORDER BY created_at, id");
    Ok(sqlx::query_as(AssertSqlSafe(sql))
        .fetch_all(conn.db())
        .await?)
}

/// The live Project subject pointing at an orchestrator project.
pub async fn subject_of_project(conn: &mut Conn, project_id: &str) -> Result<Option<SubjectRow>> {
    let sql = format!(
        "SELECT {SUBJECT_COLS} FROM memory_subjects WHERE orchestrator_project_id = ? AND merged_into IS NULL"
    );
    Ok(sqlx::query_as(AssertSqlSafe(sql))
        .bind(project_id)
        .fetch_optional(conn.db())
        .await?)
}

/// A page of live subjects, optionally of one kind and with a name or alias whose
/// normal form starts with `norm_prefix`; with the total.
pub async fn list_subjects(
    conn: &mut Conn,
    kind: Option<&str>,
    norm_prefix: Option<&str>,
    limit: i64,
    offset: i64,
) -> Result<(Vec<SubjectRow>, i64)> {
    let mut filter = String::from("s.merged_into IS NULL");
    if kind.is_some() {
        filter.push_str(" AND s.kind = ?");
    }
    if norm_prefix.is_some() {
        filter.push_str(
            " AND EXISTS (SELECT 1 FROM memory_subject_names n WHERE n.subject_id = s.id \
             AND n.norm >= ? AND n.norm < ? || '\u{10FFFF}')",
        );
    }
    let count_sql = format!("SELECT COUNT(*) FROM memory_subjects s WHERE {filter}");
    let page_sql = format!(
        "SELECT {} FROM memory_subjects s WHERE {filter} ORDER BY s.name, s.id LIMIT ? OFFSET ?",
        SUBJECT_COLS
            .split(", ")
            .map(|c| format!("s.{c}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let mut c = sqlx::query_scalar::<_, i64>(AssertSqlSafe(count_sql));
    let mut q = sqlx::query_as::<_, SubjectRow>(AssertSqlSafe(page_sql));
    if let Some(k) = kind {
        c = c.bind(k);
        q = q.bind(k);
    }
    if let Some(p) = norm_prefix {
        c = c.bind(p).bind(p);
        q = q.bind(p).bind(p);
    }
    let total = c.fetch_one(conn.db()).await?;
    let rows = q.bind(limit).bind(offset).fetch_all(conn.db()).await?;
    Ok((rows, total))
}

pub async fn add_name(conn: &mut Conn, n: &NameRow) -> Result<()> {
    sqlx::query(
        "INSERT INTO memory_subject_names (subject_id, name, norm, is_alias) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
    )
    .bind(&n.subject_id)
    .bind(&n.name)
    .bind(&n.norm)
    .bind(Flag(n.is_alias))
    .execute(conn.db())
    .await?;
    Ok(())
}

/// Turns a subject's former name into an alias (a rename keeps the old name).
pub async fn demote_name(conn: &mut Conn, subject_id: &str) -> Result<()> {
    sqlx::query("UPDATE memory_subject_names SET is_alias = 1 WHERE subject_id = ?")
        .bind(subject_id)
        .execute(conn.db())
        .await?;
    Ok(())
}

/// The names of some subjects (all of them when `ids` is None).
pub async fn names(conn: &mut Conn, ids: Option<&[String]>) -> Result<Vec<NameRow>> {
    match ids {
        None => Ok(sqlx::query_as(
            "SELECT subject_id, name, norm, is_alias FROM memory_subject_names ORDER BY subject_id, is_alias, name",
        )
        .fetch_all(conn.db())
        .await?),
        Some(ids) => {
            let mut out = Vec::new();
            for chunk in ids.chunks(500) {
                let sql = format!(
                    "SELECT subject_id, name, norm, is_alias FROM memory_subject_names WHERE subject_id IN ({}) \
                     ORDER BY subject_id, is_alias, name",
                    placeholders(chunk.len())
                );
                let mut q = sqlx::query_as(AssertSqlSafe(sql));
                for id in chunk {
                    q = q.bind(id);
                }
                out.extend(q.fetch_all(conn.db()).await?);
            }
            Ok(out)
        }
    }
}

/// The subjects of `kind` with a name or alias of normal form `norm`, oldest first
/// (merged ones included: the caller follows them to their survivor).
pub async fn subjects_named(conn: &mut Conn, kind: &str, norm: &str) -> Result<Vec<SubjectRow>> {
    // The names' index finds the few candidates; the kind inside an expression keeps
    // SQLite from scanning every subject of the kind instead (its usual unary `+` is
    // no operator on text in PostgreSQL).
    let sql = format!(
        "SELECT {} FROM memory_subjects s WHERE s.kind || '' = ? AND s.id IN \
         (SELECT subject_id FROM memory_subject_names WHERE norm = ?) ORDER BY s.created_at, s.id",
        SUBJECT_COLS
            .split(", ")
            .map(|c| format!("s.{c}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    Ok(sqlx::query_as(AssertSqlSafe(sql))
        .bind(kind)
        .bind(norm)
        .fetch_all(conn.db())
        .await?)
}

/// The subjects merged directly into `id`.
pub async fn merged_into(conn: &mut Conn, id: &str) -> Result<Vec<String>> {
    Ok(
        sqlx::query_scalar("SELECT id FROM memory_subjects WHERE merged_into = ? ORDER BY id")
            .bind(id)
            .fetch_all(conn.db())
            .await?,
    )
}

/// Live subjects having one of the normal forms `norms` as a name or alias (for
/// finding the subjects a text names).
pub async fn subjects_with_norms(conn: &mut Conn, norms: &[String]) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for chunk in norms.chunks(500) {
        let sql = format!(
            "SELECT DISTINCT s.id FROM memory_subject_names n JOIN memory_subjects s ON s.id = n.subject_id \
             WHERE n.norm IN ({}) AND s.merged_into IS NULL ORDER BY s.id",
            placeholders(chunk.len())
        );
        let mut q = sqlx::query_scalar(AssertSqlSafe(sql));
        for n in chunk {
            q = q.bind(n);
        }
        out.extend(q.fetch_all(conn.db()).await?);
    }
    Ok(out)
}
