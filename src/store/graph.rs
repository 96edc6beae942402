//! Molecules, atoms and their changelog. Paths and related lists are stored as JSON
//! text, as `migrations/0002_graph.sql` lays them out; they are parsed here so callers
//! see plain vectors.

use std::collections::HashMap;

use serde_json::{json, Value};
use sqlx::{AssertSqlSafe, FromRow};

use crate::domain::graph::{Atom, AtomPaths, ChangelogEntry, Molecule, NodeKind, Related};
use crate::store::item::like_pattern;
use crate::store::{lock, placeholders, Conn, Flag};
use crate::store::{Error, Result};

pub fn table(kind: NodeKind) -> lock::Table {
    match kind {
        NodeKind::Atom => lock::ATOMS,
        NodeKind::Molecule => lock::MOLECULES,
    }
}

fn related_to_json(r: &[Related], key: &str) -> String {
    Value::Array(
        r.iter()
            .map(|x| json!({ key: x.id, "reason": x.reason }))
            .collect(),
    )
    .to_string()
}

/// Parses a stored related list; a row written by another tool with a bad list reads
/// as empty rather than failing every query that touches it.
fn related_from_json(s: &str, key: &str) -> Vec<Related> {
    let Ok(Value::Array(a)) = serde_json::from_str::<Value>(s) else {
        return vec![];
    };
    a.iter()
        .filter_map(|v| {
            Some(Related {
                id: v.get(key)?.as_str()?.to_string(),
                reason: v
                    .get("reason")
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
            })
        })
        .collect()
}

fn paths_from_json(s: &str) -> Vec<String> {
    serde_json::from_str::<Vec<String>>(s).unwrap_or_default()
}

struct AtomRow {
    id: String,
    project_id: String,
    molecule_id: Option<String>,
    name: String,
    paths: String,
    knowledge: String,
    related_atoms: String,
    created_by_task_id: String,
    last_task_id: String,
    version: i64,
    created_at: String,
    updated_at: String,
}

crate::store::from_row!(AtomRow {
    id,
    project_id,
    molecule_id,
    name,
    paths,
    knowledge,
    related_atoms,
    created_by_task_id,
    last_task_id,
    version,
    created_at,
    updated_at
});

impl From<AtomRow> for Atom {
    fn from(r: AtomRow) -> Atom {
        Atom {
            paths: paths_from_json(&r.paths),
            related: related_from_json(&r.related_atoms, "atomId"),
            id: r.id,
            project_id: r.project_id,
            molecule_id: r.molecule_id,
            name: r.name,
            knowledge: r.knowledge,
            created_by_task_id: r.created_by_task_id,
            last_task_id: r.last_task_id,
            version: r.version,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

struct MoleculeRow {
    id: String,
    project_id: String,
    name: String,
    knowledge: String,
    related_molecules: String,
    created_by_task_id: String,
    last_task_id: String,
    version: i64,
    created_at: String,
    updated_at: String,
}

crate::store::from_row!(MoleculeRow {
    id,
    project_id,
    name,
    knowledge,
    related_molecules,
    created_by_task_id,
    last_task_id,
    version,
    created_at,
    updated_at
});

impl From<MoleculeRow> for Molecule {
    fn from(r: MoleculeRow) -> Molecule {
        Molecule {
            related: related_from_json(&r.related_molecules, "moleculeId"),
            id: r.id,
            project_id: r.project_id,
            name: r.name,
            knowledge: r.knowledge,
            created_by_task_id: r.created_by_task_id,
            last_task_id: r.last_task_id,
            version: r.version,
            created_at: r.created_at,
            updated_at: r.updated_at,
        }
    }
}

const ATOM_COLS: &str = "id, project_id, molecule_id, name, paths, knowledge, related_atoms, \
                         created_by_task_id, last_task_id, version, created_at, updated_at";
const MOLECULE_COLS: &str = "id, project_id, name, knowledge, related_molecules, \
                             created_by_task_id, last_task_id, version, created_at, updated_at";

/// The columns an atom's insert writes, and its values for `a`'s binds below: the
/// row carries the generation its insert trigger is about to reach, so the trigger
/// need not rewrite it.
macro_rules! atom_insert {
    () => {
        "INSERT INTO graph_atoms (id, project_id, molecule_id, name, paths, knowledge, \
     related_atoms, created_by_task_id, last_task_id, version, created_at, updated_at, gen) \
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, 1, ?10, ?11, \
     COALESCE((SELECT generation FROM graph_generations WHERE project_id = ?2), 0) + 1"
    };
}
const ATOM_INSERT: &str = atom_insert!();

/// Runs `sql` (an [`ATOM_INSERT`], perhaps with a `WHERE`) with `a`'s fields bound;
/// answers whether it wrote the row.
async fn write_atom(conn: &mut Conn, sql: &'static str, a: &Atom) -> Result<bool> {
    let done = sqlx::query(sql)
        .bind(&a.id)
        .bind(&a.project_id)
        .bind(&a.molecule_id)
        .bind(&a.name)
        .bind(json!(a.paths).to_string())
        .bind(&a.knowledge)
        .bind(related_to_json(&a.related, "atomId"))
        .bind(&a.created_by_task_id)
        .bind(&a.last_task_id)
        .bind(&a.created_at)
        .bind(&a.updated_at)
        .execute(conn.db())
        .await?;
    Ok(done.rows_affected() == 1)
}

/// Inserts `a`. Its project, creating task and molecule are the caller's to check in
/// the same transaction.
pub async fn insert_atom(conn: &mut Conn, a: &Atom) -> Result<()> {
    write_atom(conn, ATOM_INSERT, a).await?;
    Ok(())
}

/// Inserts `a` as a create does, in the same statement as the checks of what it
/// refers to: its project and creating task exist, and its molecule, when it names
/// one, exists in its project. Answers false, writing nothing, when a check fails
/// ([`create_refs`] then says which). One statement where a check and an insert were
/// two: each is a trip to the connection's worker thread, and the checks' reads are
/// the insert's own. Run in the write transaction, as the checks need.
pub async fn create_atom(conn: &mut Conn, a: &Atom) -> Result<bool> {
    const CHECKED: &str = concat!(
        atom_insert!(),
        " WHERE EXISTS (SELECT 1 FROM projects WHERE id = ?2) \
           AND EXISTS (SELECT 1 FROM tasks WHERE id = ?8) \
           AND (?3 IS NULL OR EXISTS (SELECT 1 FROM graph_molecules WHERE id = ?3 AND project_id = ?2))"
    );
    write_atom(conn, CHECKED, a).await
}

/// Writes the fields of `a` over the stored row, claiming `expected` and moving the
/// version and `updated_at`, in one statement that also stamps the row with the
/// generation its trigger reaches (`migrations/0020_atom_update_stamps_itself.sql`).
pub async fn update_atom(conn: &mut Conn, a: &Atom, expected: i64) -> Result<i64> {
    let done = sqlx::query(
        "UPDATE graph_atoms SET molecule_id = ?, name = ?, paths = ?, knowledge = ?, related_atoms = ?, \
         last_task_id = ?, version = version + 1, updated_at = ?, \
         gen = COALESCE((SELECT generation FROM graph_generations WHERE project_id = graph_atoms.project_id), 0) + 1 \
         WHERE id = ? AND version = ?",
    )
    .bind(&a.molecule_id)
    .bind(&a.name)
    .bind(json!(a.paths).to_string())
    .bind(&a.knowledge)
    .bind(related_to_json(&a.related, "atomId"))
    .bind(&a.last_task_id)
    .bind(&a.updated_at)
    .bind(&a.id)
    .bind(expected)
    .execute(conn.db())
    .await?;
    if done.rows_affected() == 1 {
        return Ok(expected + 1);
    }
    Err(lock::miss(conn, lock::ATOMS, &a.id, expected).await)
}

/// What an atom's rewrite sets: each field given replaces the stored one, the rest
/// stay.
pub struct Rewrite<'a> {
    pub name: Option<&'a str>,
    pub paths: Option<&'a [String]>,
    pub knowledge: Option<&'a str>,
    pub last_task_id: &'a str,
    pub updated_at: &'a str,
}

/// An atom update as one statement, its checks inside it: the atom `id` at version
/// `expected` and the task `w.last_task_id` exist. Answers the atom as written, or
/// `None`, writing nothing, when a check fails (the caller's full update then says
/// which). The row is stamped with its generation as [`update_atom`] stamps it. One
/// statement where a read, a write and the transaction around them were four, each
/// a trip to the connection's worker thread.
pub async fn rewrite_atom(
    conn: &mut Conn,
    id: &str,
    expected: i64,
    w: &Rewrite<'_>,
) -> Result<Option<Atom>> {
    let row: Option<AtomRow> = sqlx::query_as(AssertSqlSafe(format!(
        "UPDATE graph_atoms SET name = COALESCE(?1, name), paths = COALESCE(?2, paths), \
         knowledge = COALESCE(?3, knowledge), last_task_id = ?4, version = version + 1, updated_at = ?5, \
         gen = COALESCE((SELECT generation FROM graph_generations WHERE project_id = graph_atoms.project_id), 0) + 1 \
         WHERE id = ?6 AND version = ?7 AND EXISTS (SELECT 1 FROM tasks WHERE id = ?4) \
         RETURNING {ATOM_COLS}"
    )))
    .bind(w.name)
    .bind(w.paths.map(|p| json!(p).to_string()))
    .bind(w.knowledge)
    .bind(w.last_task_id)
    .bind(w.updated_at)
    .bind(id)
    .bind(expected)
    .fetch_optional(conn.db())
    .await?;
    Ok(row.map(Atom::from))
}

/// The atom `id` for an update, and whether task `task_id` exists: what an update
/// checks before it writes, in one statement.
pub async fn atom_for_update(
    conn: &mut Conn,
    id: &str,
    task_id: &str,
) -> Result<Option<(Atom, bool)>> {
    struct Row {
        atom: AtomRow,
        task: bool,
    }
    impl<'r> FromRow<'r, sqlx::any::AnyRow> for Row {
        fn from_row(row: &'r sqlx::any::AnyRow) -> std::result::Result<Self, sqlx::Error> {
            use sqlx::Row as _;
            Ok(Row {
                atom: AtomRow::from_row(row)?,
                task: row.try_get::<Flag, _>("task")?.0,
            })
        }
    }
    let r: Option<Row> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT {ATOM_COLS}, EXISTS (SELECT 1 FROM tasks WHERE id = ?) AS task \
         FROM graph_atoms WHERE id = ?"
    )))
    .bind(task_id)
    .bind(id)
    .fetch_optional(conn.db())
    .await?;
    Ok(r.map(|r| (Atom::from(r.atom), r.task)))
}

/// Inserts `m`; its project and creating task are the caller's to check.
pub async fn insert_molecule(conn: &mut Conn, m: &Molecule) -> Result<()> {
    sqlx::query(
        "INSERT INTO graph_molecules (id, project_id, name, knowledge, related_molecules, \
         created_by_task_id, last_task_id, version, created_at, updated_at) \
         VALUES (?, ?, ?, ?, ?, ?, ?, 1, ?, ?)",
    )
    .bind(&m.id)
    .bind(&m.project_id)
    .bind(&m.name)
    .bind(&m.knowledge)
    .bind(related_to_json(&m.related, "moleculeId"))
    .bind(&m.created_by_task_id)
    .bind(&m.last_task_id)
    .bind(&m.created_at)
    .bind(&m.updated_at)
    .execute(conn.db())
    .await?;
    Ok(())
}

pub async fn update_molecule(conn: &mut Conn, m: &Molecule, expected: i64) -> Result<i64> {
    let v = lock::bump(conn, lock::MOLECULES, &m.id, expected, &m.updated_at).await?;
    sqlx::query(
        "UPDATE graph_molecules SET name = ?, knowledge = ?, related_molecules = ?, last_task_id = ? WHERE id = ?",
    )
    .bind(&m.name)
    .bind(&m.knowledge)
    .bind(related_to_json(&m.related, "moleculeId"))
    .bind(&m.last_task_id)
    .bind(&m.id)
    .execute(conn.db())
    .await?;
    Ok(v)
}

/// One row by id; shared by atoms and molecules.
async fn by_id<R, T>(conn: &mut Conn, kind: NodeKind, cols: &str, id: &str) -> Result<Option<T>>
where
    R: for<'r> FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
    T: From<R>,
{
    let sql = format!("SELECT {cols} FROM {} WHERE id = ?", table(kind).name);
    let r: Option<R> = sqlx::query_as(AssertSqlSafe(sql))
        .bind(id)
        .fetch_optional(conn.db())
        .await?;
    Ok(r.map(T::from))
}

pub async fn get_atom(conn: &mut Conn, id: &str) -> Result<Option<Atom>> {
    by_id::<AtomRow, Atom>(conn, NodeKind::Atom, ATOM_COLS, id).await
}

pub async fn require_atom(conn: &mut Conn, id: &str) -> Result<Atom> {
    get_atom(conn, id)
        .await?
        .ok_or_else(|| Error::not_found("atom", id))
}

pub async fn get_molecule(conn: &mut Conn, id: &str) -> Result<Option<Molecule>> {
    by_id::<MoleculeRow, Molecule>(conn, NodeKind::Molecule, MOLECULE_COLS, id).await
}

pub async fn require_molecule(conn: &mut Conn, id: &str) -> Result<Molecule> {
    get_molecule(conn, id)
        .await?
        .ok_or_else(|| Error::not_found("molecule", id))
}

/// Atoms of a molecule, by name.
pub async fn members(conn: &mut Conn, molecule_id: &str) -> Result<Vec<Atom>> {
    let rows: Vec<AtomRow> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT {ATOM_COLS} FROM graph_atoms WHERE molecule_id = ? ORDER BY name, id"
    )))
    .bind(molecule_id)
    .fetch_all(conn.db())
    .await?;
    Ok(rows.into_iter().map(Atom::from).collect())
}

/// The project each of `ids` belongs to, for the ids that exist.
pub async fn projects_of(
    conn: &mut Conn,
    kind: NodeKind,
    ids: &[String],
) -> Result<HashMap<String, String>> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let sql = format!(
        "SELECT id, project_id FROM {} WHERE id IN ({})",
        table(kind).name,
        placeholders(ids.len())
    );
    let mut q = sqlx::query_as::<_, (String, String)>(AssertSqlSafe(sql));
    for id in ids {
        q = q.bind(id);
    }
    Ok(q.fetch_all(conn.db()).await?.into_iter().collect())
}

/// What a create refers to, read in one statement (each statement is a trip to the
/// connection's worker thread): whether the project and the task exist, and the
/// project of the molecule, when one is named and exists.
pub async fn create_refs(
    conn: &mut Conn,
    project_id: &str,
    task_id: &str,
    molecule_id: Option<&str>,
) -> Result<(bool, bool, Option<String>)> {
    let (project, task, molecule): (Flag, Flag, Option<String>) = sqlx::query_as(
        "SELECT EXISTS (SELECT 1 FROM projects WHERE id = ?), EXISTS (SELECT 1 FROM tasks WHERE id = ?), \
         (SELECT project_id FROM graph_molecules WHERE id = ?)",
    )
    .bind(project_id)
    .bind(task_id)
    .bind(molecule_id)
    .fetch_one(conn.db())
    .await?;
    Ok((project.0, task.0, molecule))
}

/// The names of those of `ids` that exist.
pub async fn names_of(
    conn: &mut Conn,
    kind: NodeKind,
    ids: &[String],
) -> Result<HashMap<String, String>> {
    if ids.is_empty() {
        return Ok(HashMap::new());
    }
    let sql = format!(
        "SELECT id, name FROM {} WHERE id IN ({})",
        table(kind).name,
        placeholders(ids.len())
    );
    let mut q = sqlx::query_as::<_, (String, String)>(AssertSqlSafe(sql));
    for id in ids {
        q = q.bind(id);
    }
    Ok(q.fetch_all(conn.db()).await?.into_iter().collect())
}

/// What a search may filter on.
pub struct Filter<'a> {
    pub project_id: Option<&'a str>,
    pub molecule_id: Option<&'a str>,
    pub orphans_only: bool,
    pub query: Option<&'a str>,
}

fn where_clause(f: &Filter<'_>, binds: &mut Vec<String>, atoms: bool) -> String {
    let mut w = Vec::new();
    if let Some(p) = f.project_id {
        w.push("project_id = ?");
        binds.push(p.to_string());
    }
    if atoms {
        if let Some(m) = f.molecule_id {
            w.push("molecule_id = ?");
            binds.push(m.to_string());
        }
        if f.orphans_only {
            w.push("molecule_id IS NULL");
        }
    }
    if let Some(q) = f.query {
        // Every word must appear in the name or the knowledge (or the patterns).
        for word in q.split_whitespace().take(16) {
            let p = like_pattern(word);
            if atoms {
                w.push("(name LIKE ? ESCAPE '\\' OR knowledge LIKE ? ESCAPE '\\' OR paths LIKE ? ESCAPE '\\')");
                binds.push(p.clone());
            } else {
                w.push("(name LIKE ? ESCAPE '\\' OR knowledge LIKE ? ESCAPE '\\')");
            }
            binds.push(p.clone());
            binds.push(p);
        }
    }
    if w.is_empty() {
        String::new()
    } else {
        format!(" WHERE {}", w.join(" AND "))
    }
}

/// A filtered page of rows by name, and the total count; shared by atoms and
/// molecules, which differ only in table, columns and row type.
async fn page<R, T>(
    conn: &mut Conn,
    kind: NodeKind,
    cols: &str,
    f: &Filter<'_>,
    limit: i64,
    offset: i64,
) -> Result<(Vec<T>, i64)>
where
    R: for<'r> FromRow<'r, sqlx::any::AnyRow> + Send + Unpin,
    T: From<R>,
{
    let t = table(kind).name;
    let mut binds = Vec::new();
    let w = where_clause(f, &mut binds, kind == NodeKind::Atom);
    let mut count =
        sqlx::query_scalar::<_, i64>(AssertSqlSafe(format!("SELECT COUNT(*) FROM {t}{w}")));
    for b in &binds {
        count = count.bind(b);
    }
    let total = count.fetch_one(conn.db()).await?;
    let sql = format!("SELECT {cols} FROM {t}{w} ORDER BY name, id LIMIT ? OFFSET ?");
    let mut q = sqlx::query_as::<_, R>(AssertSqlSafe(sql));
    for b in &binds {
        q = q.bind(b);
    }
    let rows = q.bind(limit).bind(offset).fetch_all(conn.db()).await?;
    Ok((rows.into_iter().map(T::from).collect(), total))
}

/// A page of atoms by name, and the total count.
pub async fn search_atoms(
    conn: &mut Conn,
    f: &Filter<'_>,
    limit: i64,
    offset: i64,
) -> Result<(Vec<Atom>, i64)> {
    page::<AtomRow, Atom>(conn, NodeKind::Atom, ATOM_COLS, f, limit, offset).await
}

/// A page of molecules by name, and the total count.
pub async fn search_molecules(
    conn: &mut Conn,
    f: &Filter<'_>,
    limit: i64,
    offset: i64,
) -> Result<(Vec<Molecule>, i64)> {
    page::<MoleculeRow, Molecule>(conn, NodeKind::Molecule, MOLECULE_COLS, f, limit, offset).await
}

/// Every atom and molecule of a project: what the context matcher is built from.
pub async fn load_project(conn: &mut Conn, project_id: &str) -> Result<(Vec<Atom>, Vec<Molecule>)> {
    // In name order, as the project index gives it; ties are put in id order here.
    // Asked of SQLite, the id tiebreak copies every row, knowledge included, through
    // a temporary b-tree to sort it.
    let mut atoms: Vec<AtomRow> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT {ATOM_COLS} FROM graph_atoms WHERE project_id = ? ORDER BY name"
    )))
    .bind(project_id)
    .fetch_all(conn.db())
    .await?;
    atoms.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    let molecules: Vec<MoleculeRow> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT {MOLECULE_COLS} FROM graph_molecules WHERE project_id = ? ORDER BY name, id"
    )))
    .bind(project_id)
    .fetch_all(conn.db())
    .await?;
    Ok((
        atoms.into_iter().map(Atom::from).collect(),
        molecules.into_iter().map(Molecule::from).collect(),
    ))
}

struct AtomPathsRow {
    id: String,
    molecule_id: Option<String>,
    name: String,
    paths: String,
}

crate::store::from_row!(AtomPathsRow {
    id,
    molecule_id,
    name,
    paths
});

impl From<AtomPathsRow> for AtomPaths {
    fn from(r: AtomPathsRow) -> AtomPaths {
        AtomPaths {
            paths: paths_from_json(&r.paths),
            id: r.id,
            molecule_id: r.molecule_id,
            name: r.name,
        }
    }
}

/// What the context matcher is built from: every atom's id, name, molecule and
/// patterns (by name, then id) and every molecule. An atom's knowledge, most of its
/// row, is left out: a call reads it for the atoms it matches ([`atoms_by_ids`]).
pub async fn load_matcher(
    conn: &mut Conn,
    project_id: &str,
) -> Result<(Vec<AtomPaths>, Vec<Molecule>)> {
    // Name order from the project index; ties put in id order here (see load_project).
    let mut atoms: Vec<AtomPathsRow> = sqlx::query_as(
        "SELECT id, molecule_id, name, paths FROM graph_atoms WHERE project_id = ? ORDER BY name",
    )
    .bind(project_id)
    .fetch_all(conn.db())
    .await?;
    atoms.sort_by(|a, b| (&a.name, &a.id).cmp(&(&b.name, &b.id)));
    let molecules = molecules_of(conn, project_id).await?;
    Ok((atoms.into_iter().map(AtomPaths::from).collect(), molecules))
}

/// The atoms of `ids` that exist, in no particular order: one statement per 500 ids.
pub async fn atoms_by_ids(conn: &mut Conn, ids: &[&str]) -> Result<Vec<Atom>> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(500) {
        let sql = format!(
            "SELECT {ATOM_COLS} FROM graph_atoms WHERE id IN ({})",
            placeholders(chunk.len())
        );
        let mut q = sqlx::query_as::<_, AtomRow>(AssertSqlSafe(sql));
        for id in chunk {
            q = q.bind(*id);
        }
        out.extend(q.fetch_all(conn.db()).await?.into_iter().map(Atom::from));
    }
    Ok(out)
}

/// Atoms written after generation `since`, as the matcher keeps them: what a cached
/// matcher lacks. At most `limit`: past that many the caller rebuilds instead.
pub async fn atoms_since(
    conn: &mut Conn,
    project_id: &str,
    since: i64,
    limit: i64,
) -> Result<Vec<AtomPaths>> {
    let rows: Vec<AtomPathsRow> = sqlx::query_as(
        "SELECT id, molecule_id, name, paths FROM graph_atoms WHERE project_id = ? AND gen > ? LIMIT ?",
    )
    .bind(project_id)
    .bind(since)
    .bind(limit)
    .fetch_all(conn.db())
    .await?;
    Ok(rows.into_iter().map(AtomPaths::from).collect())
}

/// Atoms deleted after generation `since`.
pub async fn deleted_since(conn: &mut Conn, project_id: &str, since: i64) -> Result<Vec<String>> {
    Ok(
        sqlx::query_scalar("SELECT atom_id FROM graph_tombstones WHERE project_id = ? AND gen > ?")
            .bind(project_id)
            .bind(since)
            .fetch_all(conn.db())
            .await?,
    )
}

/// Every molecule of a project, by name.
pub async fn molecules_of(conn: &mut Conn, project_id: &str) -> Result<Vec<Molecule>> {
    let rows: Vec<MoleculeRow> = sqlx::query_as(AssertSqlSafe(format!(
        "SELECT {MOLECULE_COLS} FROM graph_molecules WHERE project_id = ? ORDER BY name, id"
    )))
    .bind(project_id)
    .fetch_all(conn.db())
    .await?;
    Ok(rows.into_iter().map(Molecule::from).collect())
}

/// The project's graph generation: bumped by triggers on every atom or molecule write.
pub async fn generation(conn: &mut Conn, project_id: &str) -> Result<i64> {
    Ok(project_generation(conn, project_id).await?.unwrap_or(0))
}

/// The project's graph generation, or `None` when the project does not exist: one
/// statement answers both, where a context call used to ask them apart.
pub async fn project_generation(conn: &mut Conn, project_id: &str) -> Result<Option<i64>> {
    let (exists, generation): (Flag, Option<i64>) = sqlx::query_as(
        "SELECT EXISTS (SELECT 1 FROM projects WHERE id = ?1), \
         (SELECT generation FROM graph_generations WHERE project_id = ?1)",
    )
    .bind(project_id)
    .fetch_one(conn.db())
    .await?;
    Ok(exists.0.then_some(generation.unwrap_or(0)))
}

/// Detaches every atom of a molecule, touching each (version, `updated_at`, and
/// `last_task_id` when a task is named). Returns the ids detached.
pub async fn orphan_members(
    conn: &mut Conn,
    molecule_id: &str,
    last_task_id: Option<&str>,
    now: &str,
) -> Result<Vec<String>> {
    let ids: Vec<String> =
        sqlx::query_scalar("SELECT id FROM graph_atoms WHERE molecule_id = ? ORDER BY name, id")
            .bind(molecule_id)
            .fetch_all(conn.db())
            .await?;
    for id in &ids {
        lock::touch(conn, lock::ATOMS, id, now).await?;
        sqlx::query(
            "UPDATE graph_atoms SET molecule_id = NULL, last_task_id = COALESCE(?, last_task_id) WHERE id = ?",
        )
        .bind(last_task_id)
        .bind(id)
        .execute(conn.db())
        .await?;
    }
    Ok(ids)
}

/// Deletes every atom of a molecule (their changelog goes with them, by trigger).
pub async fn delete_members(conn: &mut Conn, molecule_id: &str) -> Result<Vec<String>> {
    let ids: Vec<String> =
        sqlx::query_scalar("DELETE FROM graph_atoms WHERE molecule_id = ? RETURNING id")
            .bind(molecule_id)
            .fetch_all(conn.db())
            .await?;
    Ok(ids)
}

struct ChangelogRow {
    id: String,
    parent_type: String,
    parent_id: String,
    task_id: String,
    summary: String,
    created_at: String,
}

crate::store::from_row!(ChangelogRow {
    id,
    parent_type,
    parent_id,
    task_id,
    summary,
    created_at
});

impl From<ChangelogRow> for ChangelogEntry {
    fn from(r: ChangelogRow) -> Self {
        ChangelogEntry {
            id: r.id,
            parent_type: NodeKind::parse(&r.parent_type).unwrap_or(NodeKind::Atom),
            parent_id: r.parent_id,
            task_id: r.task_id,
            summary: r.summary,
            created_at: r.created_at,
        }
    }
}

pub async fn insert_changelog(conn: &mut Conn, e: &ChangelogEntry) -> Result<()> {
    sqlx::query(
        "INSERT INTO graph_changelog (id, parent_type, parent_id, task_id, summary, created_at) VALUES (?, ?, ?, ?, ?, ?)",
    )
    .bind(&e.id)
    .bind(e.parent_type.as_str())
    .bind(&e.parent_id)
    .bind(&e.task_id)
    .bind(&e.summary)
    .bind(&e.created_at)
    .execute(conn.db())
    .await?;
    Ok(())
}

/// A page of one parent's history, newest first, and the total count. Ids are time
/// ordered, so they break ties between entries written in the same millisecond.
pub async fn changelog(
    conn: &mut Conn,
    kind: NodeKind,
    parent_id: &str,
    limit: i64,
    offset: i64,
) -> Result<(Vec<ChangelogEntry>, i64)> {
    let total: i64 = sqlx::query_scalar(
        "SELECT COUNT(*) FROM graph_changelog WHERE parent_type = ? AND parent_id = ?",
    )
    .bind(kind.as_str())
    .bind(parent_id)
    .fetch_one(conn.db())
    .await?;
    let rows: Vec<ChangelogRow> = sqlx::query_as(
        "SELECT id, parent_type, parent_id, task_id, summary, created_at FROM graph_changelog \
         WHERE parent_type = ? AND parent_id = ? ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
    )
    .bind(kind.as_str())
    .bind(parent_id)
    .bind(limit)
    .bind(offset)
    .fetch_all(conn.db())
    .await?;
    Ok((rows.into_iter().map(ChangelogEntry::from).collect(), total))
}

/// The newest `n` entries of each of `ids`, in one query.
pub async fn recent_changelog(
    conn: &mut Conn,
    kind: NodeKind,
    ids: &[&str],
    n: i64,
) -> Result<HashMap<String, Vec<ChangelogEntry>>> {
    let mut out: HashMap<String, Vec<ChangelogEntry>> = HashMap::new();
    if ids.is_empty() || n <= 0 {
        return Ok(out);
    }
    for chunk in ids.chunks(500) {
        let sql = format!(
            "SELECT id, parent_type, parent_id, task_id, summary, created_at FROM ( \
               SELECT *, ROW_NUMBER() OVER (PARTITION BY parent_id ORDER BY created_at DESC, id DESC) AS rn \
               FROM graph_changelog WHERE parent_type = ? AND parent_id IN ({})) AS ranked \
             WHERE rn <= ? ORDER BY parent_id, created_at DESC, id DESC",
            placeholders(chunk.len())
        );
        let mut q = sqlx::query_as::<_, ChangelogRow>(AssertSqlSafe(sql)).bind(kind.as_str());
        for id in chunk {
            q = q.bind(*id);
        }
        for r in q.bind(n).fetch_all(conn.db()).await? {
            out.entry(r.parent_id.clone()).or_default().push(r.into());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
