//! Optimistic locking: the one helper every repository uses to change or delete a
//! versioned row.
//!
//! The caller names the version it read; the write is `WHERE id = ? AND version = ?`
//! and bumps it. Zero rows affected means the row is gone (`NOT_FOUND`) or newer
//! (`CONFLICT`, with the current version). Runs inside the caller's `BEGIN IMMEDIATE`
//! transaction, so the claim and the field updates that follow commit together.

use sqlx::AssertSqlSafe;

use crate::store::Conn;
use crate::store::{Error, Result};

/// A versioned table and the noun its rows are called in messages.
#[derive(Debug, Clone, Copy)]
pub struct Table {
    pub name: &'static str,
    pub entity: &'static str,
    /// The column that names a row to a person, for messages.
    pub label: &'static str,
}

pub const PROJECTS: Table = Table {
    name: "projects",
    entity: "project",
    label: "name",
};
pub const FEATURES: Table = Table {
    name: "features",
    entity: "feature",
    label: "name",
};
pub const TASKS: Table = Table {
    name: "tasks",
    entity: "task",
    label: "title",
};
pub const SECTIONS: Table = Table {
    name: "sections",
    entity: "section",
    label: "title",
};
pub const TEMPLATES: Table = Table {
    name: "templates",
    entity: "template",
    label: "name",
};

pub const ATOMS: Table = Table {
    name: "graph_atoms",
    entity: "atom",
    label: "name",
};
pub const MOLECULES: Table = Table {
    name: "graph_molecules",
    entity: "molecule",
    label: "name",
};
// The code toolset's versioned tables.
pub const CODE_REPOS: Table = Table {
    name: "code_repos",
    entity: "repository",
    label: "repo_path",
};
pub const CODE_CATEGORIES: Table = Table {
    name: "code_categories",
    entity: "category",
    label: "name",
};
pub const CODE_ENTITIES: Table = Table {
    name: "code_entities",
    entity: "entity",
    label: "name",
};
pub const CODE_REFERENCES: Table = Table {
    name: "code_references",
    entity: "reference",
    label: "document_path",
};

// The ontology toolset's versioned tables.
pub const ONTOLOGY_REPOS: Table = Table {
    name: "ontology_repos",
    entity: "ontology repository",
    label: "repo_path",
};
pub const ONTOLOGY_PAGES: Table = Table {
    name: "ontology_pages",
    entity: "ontology page",
    label: "path",
};
pub const ONTOLOGY_ENTITIES: Table = Table {
    name: "ontology_entities",
    entity: "ontology entity",
    label: "iri",
};
pub const ONTOLOGY_PROPOSALS: Table = Table {
    name: "ontology_proposals",
    entity: "proposal",
    label: "target_iri",
};

// The memory toolset's versioned tables (references, edges and diary entries are
// written once and never changed, so they carry no version).
pub const MEMORY_SUBJECTS: Table = Table {
    name: "memory_subjects",
    entity: "subject",
    label: "name",
};
pub const MEMORY_ATOMS: Table = Table {
    name: "memory_atoms",
    entity: "memory atom",
    label: "statement",
};

/// Claims the row at `expected` and bumps its version; returns the new version.
pub async fn bump(conn: &mut Conn, t: Table, id: &str, expected: i64, now: &str) -> Result<i64> {
    let sql = format!(
        "UPDATE {} SET version = version + 1, updated_at = ? WHERE id = ? AND version = ?",
        t.name
    );
    let done = sqlx::query(AssertSqlSafe(sql))
        .bind(now)
        .bind(id)
        .bind(expected)
        .execute(conn.db())
        .await?;
    if done.rows_affected() == 1 {
        return Ok(expected + 1);
    }
    Err(miss(conn, t, id, expected).await)
}

/// Bumps the version of a row changed as a consequence of another write (a feature
/// moved by its tasks): no caller read it, so no version is checked.
pub async fn touch(conn: &mut Conn, t: Table, id: &str, now: &str) -> Result<i64> {
    let sql = format!(
        "UPDATE {} SET version = version + 1, updated_at = ? WHERE id = ? RETURNING version",
        t.name
    );
    let v: Option<i64> = sqlx::query_scalar(AssertSqlSafe(sql))
        .bind(now)
        .bind(id)
        .fetch_optional(conn.db())
        .await?;
    v.ok_or_else(|| Error::not_found(t.entity, id))
}

/// Deletes the row, checking `expected` when the caller gave one.
pub async fn delete(conn: &mut Conn, t: Table, id: &str, expected: Option<i64>) -> Result<()> {
    let done = match expected {
        Some(v) => {
            let sql = format!("DELETE FROM {} WHERE id = ? AND version = ?", t.name);
            sqlx::query(AssertSqlSafe(sql))
                .bind(id)
                .bind(v)
                .execute(conn.db())
                .await?
        }
        None => {
            let sql = format!("DELETE FROM {} WHERE id = ?", t.name);
            sqlx::query(AssertSqlSafe(sql))
                .bind(id)
                .execute(conn.db())
                .await?
        }
    };
    if done.rows_affected() == 1 {
        return Ok(());
    }
    Err(miss(conn, t, id, expected.unwrap_or(0)).await)
}

/// Checks that `id` exists at `expected` without changing it (used before work that
/// must not start on a stale read).
pub async fn check(conn: &mut Conn, t: Table, id: &str, expected: i64) -> Result<()> {
    match current(conn, t, id).await? {
        Some((current, name)) => check_read(t, id, current, name, expected),
        None => Err(Error::not_found(t.entity, id)),
    }
}

/// [`check`] of a row the caller has read in its transaction, at version `current`.
pub fn check_read(
    t: Table,
    id: &str,
    current: i64,
    name: Option<String>,
    expected: i64,
) -> Result<()> {
    if current == expected {
        return Ok(());
    }
    Err(Error::Conflict {
        entity: t.entity,
        id: id.to_string(),
        name,
        current,
        sent: expected,
    })
}

/// The row's version and name, when it exists.
async fn current(conn: &mut Conn, t: Table, id: &str) -> Result<Option<(i64, Option<String>)>> {
    let sql = format!("SELECT version, {} FROM {} WHERE id = ?", t.label, t.name);
    Ok(sqlx::query_as(AssertSqlSafe(sql))
        .bind(id)
        .fetch_optional(conn.db())
        .await?)
}

/// The error of a claim of `sent` that wrote nothing: the row is gone or newer.
pub async fn miss(conn: &mut Conn, t: Table, id: &str, sent: i64) -> Error {
    match current(conn, t, id).await {
        Ok(Some((current, name))) => Error::Conflict {
            entity: t.entity,
            id: id.to_string(),
            name,
            current,
            sent,
        },
        Ok(None) => Error::not_found(t.entity, id),
        Err(e) => e,
    }
}
