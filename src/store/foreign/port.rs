//! The task-orchestrator port's SQLite file, opened read-only beside Cairn's own
//! database and read whole into plain rows (`read_port`); its JSON columns decoded.

use std::path::Path;
use std::str::FromStr;

use sqlx::sqlite::{SqliteConnectOptions, SqliteConnection, SqliteRow};
use sqlx::{AssertSqlSafe, Connection, Row as _};

use super::Unreadable;

/// Every table of the port's schema that an import carries, in the port's order.
#[derive(Debug, Default)]
pub struct PortRows {
    /// `_meta.schema_id`: `task-orchestrator-v3` for the schema read here.
    pub schema_id: Option<String>,
    /// `_pipeline_config.config_json`: the port's pipelines as JSON, when it kept them.
    pub pipelines: Option<String>,
    pub projects: Vec<PortRow>,
    pub features: Vec<PortRow>,
    pub tasks: Vec<PortRow>,
    pub sections: Vec<PortRow>,
    pub templates: Vec<PortRow>,
    pub template_sections: Vec<PortRow>,
    pub tags: Vec<PortRow>,
    pub molecules: Vec<PortRow>,
    pub atoms: Vec<PortRow>,
    pub changelog: Vec<PortRow>,
}

/// One row of the port: its table, its rowid (for messages) and its columns, each
/// text, an integer or NULL as SQLite stored it.
#[derive(Debug, Clone)]
pub struct PortRow {
    pub table: &'static str,
    pub rowid: i64,
    pub cols: Vec<(String, PortValue)>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum PortValue {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl PortRow {
    pub fn get(&self, col: &str) -> Option<&PortValue> {
        self.cols.iter().find(|(c, _)| c == col).map(|(_, v)| v)
    }
}

/// The tables read, each with the order its rows are kept in (the port's own reading
/// order, so an import writes them in that order too).
const TABLES: &[(&str, &str)] = &[
    ("projects", "created_at, id"),
    ("features", "created_at, id"),
    ("tasks", "created_at, id"),
    ("sections", "entity_id, ordinal, id"),
    ("templates", "created_at, id"),
    ("template_sections", "template_id, ordinal, id"),
    ("entity_tags", "entity_id, tag"),
    ("graph_molecules", "created_at, id"),
    ("graph_atoms", "created_at, id"),
    ("graph_changelog", "created_at, id"),
];

/// Reads the port's database at `path`, refusing a file past `max_bytes` or a table
/// past `max_rows` before reading its rows. The file is opened read-only: nothing in
/// it changes, whatever happens here.
pub async fn read_port(
    path: &Path,
    max_bytes: u64,
    max_rows: i64,
) -> std::result::Result<PortRows, Unreadable> {
    let shown = path.display().to_string();
    super::checked_file(path, &shown, max_bytes)?;
    let opts = SqliteConnectOptions::from_str("sqlite:")
        .map_err(|e| Unreadable(e.to_string()))?
        .filename(path)
        .read_only(true)
        .create_if_missing(false);
    let mut c = SqliteConnection::connect_with(&opts)
        .await
        .map_err(|e| Unreadable(format!("cannot open {shown} as a SQLite database: {e}")))?;
    let not_port = |e: sqlx::Error| {
        Unreadable(format!(
            "{shown} is not a task-orchestrator database (its tables could not be read: {e})"
        ))
    };
    let tables: Vec<String> =
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'")
            .fetch_all(&mut c)
            .await
            .map_err(not_port)?;
    let mut missing: Vec<&str> = TABLES
        .iter()
        .map(|(t, _)| *t)
        .chain(["_meta"])
        .filter(|t| !tables.iter().any(|x| x == t))
        .collect();
    missing.sort_unstable();
    if !missing.is_empty() {
        return Err(Unreadable(format!(
            "{shown} is not a task-orchestrator database of the schema Cairn reads \
             (task-orchestrator-v3): it lacks the tables {}",
            missing.join(", ")
        )));
    }
    let mut out = PortRows {
        schema_id: sqlx::query_scalar("SELECT value FROM _meta WHERE key = 'schema_id'")
            .fetch_optional(&mut c)
            .await
            .map_err(not_port)?,
        ..Default::default()
    };
    if tables.iter().any(|t| t == "_pipeline_config") {
        out.pipelines = sqlx::query_scalar(
            "SELECT config_json FROM _pipeline_config ORDER BY rowid DESC LIMIT 1",
        )
        .fetch_optional(&mut c)
        .await
        .map_err(not_port)?;
    }
    for (table, order) in TABLES {
        let n: i64 = sqlx::query_scalar(AssertSqlSafe(format!("SELECT COUNT(*) FROM {table}")))
            .fetch_one(&mut c)
            .await
            .map_err(not_port)?;
        if n > max_rows {
            return Err(Unreadable(format!(
                "{shown}: table {table} holds {n} rows, past the import limit of {max_rows}"
            )));
        }
        let rows: Vec<SqliteRow> = sqlx::query(AssertSqlSafe(format!(
            "SELECT rowid AS rowid_, * FROM {table} ORDER BY {order}"
        )))
        .fetch_all(&mut c)
        .await
        .map_err(not_port)?;
        let read = rows
            .iter()
            .map(|r| port_row(table, r, &shown))
            .collect::<std::result::Result<Vec<_>, _>>()?;
        let slot = match *table {
            "projects" => &mut out.projects,
            "features" => &mut out.features,
            "tasks" => &mut out.tasks,
            "sections" => &mut out.sections,
            "templates" => &mut out.templates,
            "template_sections" => &mut out.template_sections,
            "entity_tags" => &mut out.tags,
            "graph_molecules" => &mut out.molecules,
            "graph_atoms" => &mut out.atoms,
            _ => &mut out.changelog,
        };
        *slot = read;
    }
    let _ = c.close().await;
    Ok(out)
}

fn port_row(
    table: &'static str,
    r: &SqliteRow,
    shown: &str,
) -> std::result::Result<PortRow, Unreadable> {
    use sqlx::{Column, TypeInfo, ValueRef};
    let mut rowid = 0;
    let mut cols = Vec::with_capacity(r.len());
    for (i, col) in r.columns().iter().enumerate() {
        let raw = r
            .try_get_raw(i)
            .map_err(|e| Unreadable(format!("{shown}: table {table}: {e}")))?;
        let bad = |e: sqlx::Error| {
            Unreadable(format!(
                "{shown}: table {table}, row {rowid}, column {}: {e}",
                col.name()
            ))
        };
        let v = if raw.is_null() {
            PortValue::Null
        } else {
            match raw.type_info().name() {
                "INTEGER" => PortValue::Int(r.try_get(i).map_err(bad)?),
                "REAL" => PortValue::Real(r.try_get(i).map_err(bad)?),
                "TEXT" => PortValue::Text(r.try_get(i).map_err(bad)?),
                other => {
                    return Err(Unreadable(format!(
                        "{shown}: table {table}, row {rowid}, column {}: a {other} value, \
                         where the port writes text or integers",
                        col.name()
                    )))
                }
            }
        };
        if col.name() == "rowid_" {
            if let PortValue::Int(n) = v {
                rowid = n;
            }
            continue;
        }
        cols.push((col.name().to_string(), v));
    }
    Ok(PortRow { table, rowid, cols })
}

/// A JSON array of strings, as the port keeps `blocked_by`, `related_to` and `paths`.
pub fn strings(text: &str) -> std::result::Result<Vec<String>, String> {
    serde_json::from_str::<Vec<String>>(text)
        .map_err(|e| format!("not a JSON array of strings: {e}"))
}

/// Which of the port's lists of related nodes a column holds.
#[derive(Debug, Clone, Copy)]
pub enum Related {
    Atoms,
    Molecules,
}

/// A JSON array of `{atomId | moleculeId: id, reason}` objects, as the port keeps
/// related atoms and molecules: each as (id, reason).
pub fn related(text: &str, of: Related) -> std::result::Result<Vec<(String, String)>, String> {
    let key = match of {
        Related::Atoms => "atomId",
        Related::Molecules => "moleculeId",
    };
    let v: Vec<serde_json::Map<String, serde_json::Value>> =
        serde_json::from_str(text).map_err(|e| format!("not a JSON array of objects: {e}"))?;
    v.iter()
        .map(|o| {
            let id = o
                .get(key)
                .and_then(|x| x.as_str())
                .ok_or_else(|| format!("an entry lacks its {key}"))?;
            let reason = o.get("reason").and_then(|x| x.as_str()).unwrap_or("");
            Ok((id.to_string(), reason.to_string()))
        })
        .collect()
}
