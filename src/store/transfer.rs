//! `cairn export` and `cairn import`: everything a database holds as JSON lines, one
//! file per table, and back, on either backend. The format is the store's own (a row
//! is an object of its columns, named as the schema names them), so a SQLite file
//! moves to PostgreSQL and back with every id, timestamp and version as it was.
//!
//! What is written: every table of user state ([`TABLES`]). What is not: what the
//! database rebuilds from those rows ([`REBUILT`]): vectors (embedded again by the
//! next search or `cairn reindex`), full-text rows (written by the triggers on
//! insert, or by the searches' catch-up, whose marks start again at nothing), the
//! generation counters and each atom's `gen` (set by the triggers and the insert), the atoms'
//! tombstones. Rows are written in creation order (`rowid`) and inserted in it, so
//! what orders by creation reads the same order after an import; the rowids
//! themselves are not carried (PostgreSQL's differ from SQLite's anyway).
//!
//! An import is one write transaction into an empty database: a bad line (its file
//! and number named), a count that disagrees with the manifest or a row the
//! database refuses leaves nothing behind. The store does not know the wire's
//! names; this format is the tables', not the tools'.

use std::fs::File;
use std::io::{BufRead, BufReader, BufWriter, Read, Write};
use std::path::{Path, PathBuf};

use futures::TryStreamExt;
use serde_json::Value;
use sqlx::Row;

use super::{Conn, Error, Store};

/// The version of the format this Cairn writes, and the newest it reads.
pub const FORMAT: u64 = 1;
/// The manifest's file name in an export's directory.
pub const MANIFEST: &str = "manifest.json";
/// The longest line (one row) an import reads: past any row Cairn writes (a tool
/// call's arguments are at most 16 MiB, an ontology page is bounded by its sync).
pub const MAX_LINE: usize = 32 << 20;
/// The longest manifest an import reads.
const MAX_MANIFEST: u64 = 1 << 20;

/// A column's type, as both backends read and write it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ty {
    Text,
    Int,
    Real,
}

/// One exported table: its name (the file is `NAME.jsonl`), its columns (a `#`
/// after a name marks an integer, a `~` a float, the rest are text), the order its
/// rows are written in, and the columns the database sets itself on insert.
struct Table {
    name: &'static str,
    cols: &'static str,
    order: &'static str,
    /// Columns the schema has and the export leaves out, each with the SQL an
    /// import sets it with (`@N` being the N-th exported column).
    rebuilt: &'static [(&'static str, &'static str)],
}

const fn t(name: &'static str, cols: &'static str) -> Table {
    Table {
        name,
        cols,
        order: "rowid",
        rebuilt: &[],
    }
}

/// Every table of user state, parents before the rows that reference them.
/// (`memory_subjects.merged_into` names a subject that may come later: it is
/// written after every subject is in.)
const TABLES: &[Table] = &[
    t(
        "projects",
        "id name summary description version# created_at updated_at",
    ),
    t(
        "features",
        "id project_id name summary description status priority# status_reason version# \
         created_at updated_at",
    ),
    t(
        "tasks",
        "id project_id feature_id title summary description status priority# complexity# \
         status_reason version# created_at updated_at",
    ),
    t(
        "dependencies",
        "id item_type from_id to_id type reason created_at",
    ),
    t(
        "sections",
        "id entity_type entity_id title usage_description content content_format ordinal# \
         version# created_at updated_at",
    ),
    t(
        "templates",
        "id name description target_entity_type is_built_in# is_protected# is_enabled# \
         created_by version# created_at updated_at",
    ),
    t(
        "template_sections",
        "id template_id title usage_description content_sample content_format is_required# \
         ordinal#",
    ),
    // WITHOUT ROWID in SQLite: its key is the order.
    Table {
        name: "tags",
        cols: "entity_type entity_id tag",
        order: "entity_id, tag",
        rebuilt: &[],
    },
    t("workflow_pipelines", "kind states version# updated_at"),
    t(
        "graph_molecules",
        "id project_id name knowledge related_molecules created_by_task_id last_task_id \
         version# created_at updated_at",
    ),
    Table {
        // The generation the atom's insert reaches, as `store::graph` stamps it
        // (`@2` is the project), so the search's catch-up indexes it.
        rebuilt: &[(
            "gen",
            "COALESCE((SELECT generation FROM graph_generations WHERE project_id = @2), 0) + 1",
        )],
        ..t(
            "graph_atoms",
            "id project_id molecule_id name paths knowledge related_atoms created_by_task_id \
             last_task_id version# created_at updated_at",
        )
    },
    t(
        "graph_changelog",
        "id parent_type parent_id task_id summary created_at",
    ),
    t(
        "code_repos",
        "id project_id repo_path version# created_at updated_at",
    ),
    t(
        "code_categories",
        "id project_id scope name description version# created_at updated_at",
    ),
    t(
        "code_entities",
        "id project_id name description scope version# created_at updated_at",
    ),
    t("code_entity_categories", "entity_id category_id"),
    t("code_belongs", "child_id parent_id created_at"),
    t(
        "code_references",
        "id project_id kind document_path start_line# end_line# lsp_symbol lsp_kind# anchor \
         description content_type commit_sha blob_sha version# created_at updated_at",
    ),
    t("code_attachments", "entity_id reference_id created_at"),
    t("code_relations", "from_id to_id note created_at"),
    t("code_links", "from_id to_id link_type created_at"),
    t(
        "memory_subjects",
        "id kind name title summary tags details orchestrator_project_id merged_into version# \
         created_at updated_at",
    ),
    t("memory_subject_names", "subject_id name norm is_alias#"),
    t(
        "memory_references",
        "id ref_type title uri authors published_at retrieved_at snippet hash created_at",
    ),
    t(
        "memory_atoms",
        "id atom_type statement predicate value_kind value about_id context_id claim_key \
         group_key status status_reason confidence~ validated_confidence~ importance title \
         summary notes resolution tags author confirmed_by confirmed_at valid_from valid_to \
         recorded_at retired_at last_validated_at next_review_at review_interval_days# \
         decision_status details version# updated_at",
    ),
    t(
        "memory_edges",
        "from_kind from_id kind to_kind to_id created_at",
    ),
    t(
        "memory_diary",
        "id project_id task_id session accomplishments decisions challenges learnings \
         recorded_at created_at",
    ),
    t(
        "ontology_repos",
        "id project_id repo_path pages_dir base_branch github_owner github_name synced_commit \
         synced_at version# created_at updated_at",
    ),
    t(
        "ontology_pages",
        "id project_id path blob_sha content iri state version# created_at updated_at",
    ),
    t(
        "ontology_entities",
        "id project_id page_id iri kind term_id preferred_term domain status definition \
         alt_terms physicality role maturity quality_score~ authority_score~ last_updated \
         line# version# created_at updated_at",
    ),
    t("ontology_axioms", "page_id project_id seq# line# kind ofn"),
    t(
        "ontology_problems",
        "project_id seq# file line# col# message",
    ),
    t(
        "ontology_proposals",
        "id project_id operation state target_iri term_id agent_id agent_type session_id \
         task_description confidence~ branch commit_sha base_commit new_subsumptions# \
         quality_score~ tier_coverage report diff pr_number# pr_url push_error decided_at \
         version# created_at updated_at",
    ),
    t(
        "ontology_proposal_files",
        "proposal_id path blob_sha content",
    ),
    t("ontology_term_counters", "project_id domain next#"),
];

/// The tables an export leaves out, because the database rebuilds them from the
/// rest (the module's doc says how). A table in neither list fails an export, so a
/// table a later migration adds is never left out unnoticed.
pub const REBUILT: &[&str] = &[
    "embeddings",
    "semantic_generations",
    "vector_generations",
    "graph_generations",
    "ontology_generations",
    "graph_tombstones",
    "search_indexed",
    "memory_search_indexed",
    "code_entities_fts",
    "code_references_fts",
    "code_relations_fts",
    "graph_atoms_fts",
    "graph_molecules_fts",
    "memory_atoms_fts",
];

/// What a new database already holds (the built-in templates, their sections and
/// tags, the default pipelines): an import deletes it, in this order, and loads the
/// export's rows in its place, whatever the export did with them.
const SEEDED: &[&str] = &[
    "DELETE FROM tags WHERE entity_type = 'TEMPLATE'",
    "DELETE FROM template_sections",
    "DELETE FROM templates",
    "DELETE FROM workflow_pipelines",
];

impl Table {
    fn columns(&self) -> impl Iterator<Item = (&'static str, Ty)> {
        self.cols.split_whitespace().map(|c| {
            if let Some(n) = c.strip_suffix('#') {
                (n, Ty::Int)
            } else if let Some(n) = c.strip_suffix('~') {
                (n, Ty::Real)
            } else {
                (c, Ty::Text)
            }
        })
    }

    fn file(&self) -> String {
        format!("{}.jsonl", self.name)
    }

    fn select(&self) -> String {
        let cols: Vec<&str> = self.columns().map(|(n, _)| n).collect();
        format!(
            "SELECT {} FROM {} ORDER BY {}",
            cols.join(", "),
            self.name,
            self.order
        )
    }

    /// The insert of `rows` rows, numbered `?1…` row after row; a rebuilt column's
    /// `@N` is the row's N-th exported column.
    fn insert(&self, rows: usize) -> String {
        let n = self.columns().count();
        let mut cols: Vec<&str> = self.columns().map(|(c, _)| c).collect();
        cols.extend(self.rebuilt.iter().map(|(c, _)| *c));
        let mut sql = format!("INSERT INTO {} ({}) VALUES ", self.name, cols.join(", "));
        for r in 0..rows {
            let mut values: Vec<String> = (1..=n).map(|i| format!("?{}", r * n + i)).collect();
            for (_, expr) in self.rebuilt {
                let mut e = (*expr).to_string();
                for d in (1..=n).rev() {
                    e = e.replace(&format!("@{d}"), &format!("?{}", r * n + d));
                }
                values.push(e);
            }
            sql.push_str(if r == 0 { "(" } else { ", (" });
            sql.push_str(&values.join(", "));
            sql.push(')');
        }
        sql
    }

    /// How many rows one insert carries: few statements, within both backends'
    /// limits on parameters.
    fn batch(&self) -> usize {
        (20_000 / self.columns().count()).clamp(1, 500)
    }

    fn has_real(&self) -> bool {
        self.columns().any(|(_, ty)| ty == Ty::Real)
    }
}

/// How many rows of each table an export wrote or an import read, in [`TABLES`]'
/// order.
#[derive(Debug, Default)]
pub struct Counts(pub Vec<(&'static str, u64)>);

impl Counts {
    pub fn total(&self) -> u64 {
        self.0.iter().map(|(_, n)| n).sum()
    }
}

/// Why an export or an import did not happen.
#[derive(Debug, thiserror::Error)]
pub enum Failure {
    /// The directory or its files cannot be used; the message names the file (and
    /// the line) and what to do.
    #[error("{0}")]
    Refused(String),
    /// The database to import into holds rows already.
    #[error("{0}")]
    NotEmpty(String),
    #[error(transparent)]
    Store(#[from] Error),
}

impl From<sqlx::Error> for Failure {
    fn from(e: sqlx::Error) -> Self {
        Failure::Store(e.into())
    }
}

fn refused(m: impl Into<String>) -> Failure {
    Failure::Refused(m.into())
}

impl Store {
    /// Writes every table of user state into `dir` (a new or empty directory) from
    /// one consistent read, then the manifest. A failed export removes what it
    /// wrote, so a directory with a manifest is a whole export.
    pub async fn export(&self, dir: &Path) -> Result<Counts, Failure> {
        let created = prepare_export_dir(dir)?;
        let mut written: Vec<PathBuf> = Vec::new();
        let done = self.export_into(dir, &mut written).await;
        if done.is_err() {
            for f in &written {
                let _ = std::fs::remove_file(f);
            }
            if created {
                let _ = std::fs::remove_dir(dir);
            }
        }
        done
    }

    async fn export_into(&self, dir: &Path, written: &mut Vec<PathBuf>) -> Result<Counts, Failure> {
        let mut tx = self.snapshot().await?;
        check_schema(&mut tx).await?;
        let mut counts = Counts::default();
        for table in TABLES {
            let path = dir.join(table.file());
            let file = new_file(&path)?;
            written.push(path.clone());
            let mut out = BufWriter::new(file);
            let n = write_rows(&mut tx, table, &mut out)
                .await
                .map_err(|e| match e {
                    Failure::Refused(m) => refused(format!("{}: {m}", path.display())),
                    other => other,
                })?;
            finish(out, &path)?;
            counts.0.push((table.name, n));
        }
        tx.rollback().await?;
        let path = dir.join(MANIFEST);
        let file = new_file(&path)?;
        written.push(path.clone());
        let mut out = BufWriter::new(file);
        out.write_all(manifest(&counts).as_bytes())
            .map_err(|e| refused(format!("cannot write {}: {e}", path.display())))?;
        finish(out, &path)?;
        Ok(counts)
    }

    /// Loads the export in `dir` into this database, which must be empty, in one
    /// write transaction.
    pub async fn import(&self, dir: &Path) -> Result<Counts, Failure> {
        let expected = read_manifest(dir)?;
        let mut tx = self.write().await?;
        check_schema(&mut tx).await?;
        check_empty(&mut tx).await?;
        for sql in SEEDED {
            sqlx::query(*sql).execute(tx.db()).await?;
        }
        let mut counts = Counts::default();
        for (table, want) in TABLES.iter().zip(&expected) {
            let path = dir.join(table.file());
            let n = read_rows(&mut tx, table, &path).await?;
            if n != *want {
                return Err(refused(format!(
                    "{} holds {n} rows where the manifest says {want}: the export is \
                     incomplete or was changed; export again",
                    path.display()
                )));
            }
            counts.0.push((table.name, n));
        }
        tx.commit().await?;
        Ok(counts)
    }
}

/// Makes `dir` ready for an export: created (this user's only) when missing, in a
/// directory that exists; used when it exists and is empty. Whether it was created.
fn prepare_export_dir(dir: &Path) -> Result<bool, Failure> {
    match std::fs::read_dir(dir) {
        Ok(mut entries) => {
            if entries.next().is_some() {
                return Err(refused(format!(
                    "{} is not empty; name a new directory (an export never overwrites)",
                    dir.display()
                )));
            }
            Ok(false)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            use std::os::unix::fs::DirBuilderExt;
            std::fs::DirBuilder::new()
                .mode(0o700)
                .create(dir)
                .map_err(|e| {
                    refused(format!(
                        "cannot create {}: {e} (its parent directory must exist)",
                        dir.display()
                    ))
                })?;
            Ok(true)
        }
        Err(e) => Err(refused(format!("cannot use {}: {e}", dir.display()))),
    }
}

/// A new file, readable by this user only (an export holds everything the
/// database does).
fn new_file(path: &Path) -> Result<File, Failure> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)
        .map_err(|e| refused(format!("cannot create {}: {e}", path.display())))
}

fn finish(out: BufWriter<File>, path: &Path) -> Result<(), Failure> {
    let file = out
        .into_inner()
        .map_err(|e| refused(format!("cannot write {}: {}", path.display(), e.error())))?;
    file.sync_all()
        .map_err(|e| refused(format!("cannot write {}: {e}", path.display())))
}

/// The manifest: the format, the Cairn that wrote it, what it leaves out, and the
/// rows of each table. Written by hand so that the same rows give the same bytes.
fn manifest(counts: &Counts) -> String {
    let mut s = format!(
        "{{\n  \"format\": {FORMAT},\n  \"cairn\": {},\n  \"rebuilt\": [",
        Value::from(env!("CARGO_PKG_VERSION"))
    );
    for (i, name) in REBUILT.iter().enumerate() {
        s.push_str(if i == 0 { "" } else { ", " });
        s.push_str(&Value::from(*name).to_string());
    }
    s.push_str("],\n  \"counts\": {\n");
    for (i, (name, n)) in counts.0.iter().enumerate() {
        let sep = if i + 1 == counts.0.len() { "" } else { "," };
        s.push_str(&format!("    {}: {n}{sep}\n", Value::from(*name)));
    }
    s.push_str("  }\n}\n");
    s
}

/// The row counts the manifest in `dir` promises, in [`TABLES`]' order, once the
/// directory holds exactly the files of an export this Cairn reads.
fn read_manifest(dir: &Path) -> Result<Vec<u64>, Failure> {
    if !dir.is_dir() {
        return Err(refused(if dir.exists() {
            format!(
                "{} is not a directory; name the directory `cairn export` wrote",
                dir.display()
            )
        } else {
            format!(
                "{} does not exist; name the directory `cairn export` wrote",
                dir.display()
            )
        }));
    }
    let path = dir.join(MANIFEST);
    let mut text = String::new();
    File::open(&path)
        .and_then(|f| f.take(MAX_MANIFEST + 1).read_to_string(&mut text))
        .map_err(|e| {
            refused(format!(
                "cannot read {}: {e} (an export's directory holds it; an export that \
                 did not finish has none)",
                path.display()
            ))
        })?;
    if text.len() as u64 > MAX_MANIFEST {
        return Err(refused(format!(
            "{} is larger than {MAX_MANIFEST} bytes: not a manifest `cairn export` wrote",
            path.display()
        )));
    }
    let bad = |why: String| refused(format!("{}: {why}", path.display()));
    let v: Value = serde_json::from_str(&text).map_err(|e| bad(format!("not JSON ({e})")))?;
    let format = v
        .get("format")
        .and_then(Value::as_u64)
        .ok_or_else(|| bad("no \"format\" number".into()))?;
    let writer = v
        .get("cairn")
        .and_then(Value::as_str)
        .unwrap_or("an unknown version");
    if format > FORMAT {
        return Err(bad(format!(
            "written by Cairn {writer} in format {format}; this Cairn ({}) reads format \
             {FORMAT} and older: import it with a Cairn as new as the one that wrote it",
            env!("CARGO_PKG_VERSION")
        )));
    }
    if format == 0 {
        return Err(bad("format 0 does not exist".into()));
    }
    let counts = v
        .get("counts")
        .and_then(Value::as_object)
        .ok_or_else(|| bad("no \"counts\" object".into()))?;
    if let Some(k) = counts
        .keys()
        .find(|k| !TABLES.iter().any(|t| t.name == k.as_str()))
    {
        return Err(bad(format!("counts a kind this Cairn does not know: {k}")));
    }
    let mut want = Vec::with_capacity(TABLES.len());
    for table in TABLES {
        let n = counts
            .get(table.name)
            .and_then(Value::as_u64)
            .ok_or_else(|| bad(format!("no count of {}", table.name)))?;
        want.push(n);
    }
    let entries = std::fs::read_dir(dir)
        .map_err(|e| refused(format!("cannot list {}: {e}", dir.display())))?;
    for entry in entries {
        let entry = entry.map_err(|e| refused(format!("cannot list {}: {e}", dir.display())))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name != MANIFEST && !TABLES.iter().any(|t| t.file() == name) {
            return Err(refused(format!(
                "{} is no file of an export (this Cairn would not read it): remove it \
                 or name the export's own directory",
                entry.path().display()
            )));
        }
    }
    Ok(want)
}

/// Fails when the schema holds a table or a column that [`TABLES`] and [`REBUILT`]
/// do not account for, or lacks one they name: an export must carry all of it.
async fn check_schema(conn: &mut Conn) -> Result<(), Failure> {
    let pg = conn.pg();
    let names: Vec<String> = if pg {
        sqlx::query_scalar(
            "SELECT table_name::text FROM information_schema.tables \
              WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'",
        )
        .fetch_all(conn.db())
        .await?
    } else {
        sqlx::query_scalar("SELECT name FROM sqlite_master WHERE type = 'table'")
            .fetch_all(conn.db())
            .await?
    };
    for name in &names {
        let known = TABLES.iter().any(|t| t.name == name)
            || REBUILT.contains(&name.as_str())
            || name.starts_with("sqlite_")
            || name == "_sqlx_migrations"
            // FTS5's own tables behind each full-text index (SQLite).
            || REBUILT
                .iter()
                .any(|r| r.ends_with("_fts") && name.starts_with(&format!("{r}_")));
        if !known {
            return Err(Error::Internal(format!(
                "the table {name} is neither exported nor rebuilt; this Cairn cannot export it"
            ))
            .into());
        }
    }
    for table in TABLES {
        let mut have: Vec<String> = if pg {
            sqlx::query_scalar(
                "SELECT column_name::text FROM information_schema.columns \
                  WHERE table_schema = current_schema() AND table_name = ?",
            )
            .bind(table.name)
            .fetch_all(conn.db())
            .await?
        } else {
            sqlx::query_scalar("SELECT name FROM pragma_table_info(?)")
                .bind(table.name)
                .fetch_all(conn.db())
                .await?
        };
        have.retain(|c| c != "rowid" && !table.rebuilt.iter().any(|(r, _)| r == c));
        have.sort();
        let mut want: Vec<&str> = table.columns().map(|(n, _)| n).collect();
        want.sort();
        if have != want {
            return Err(Error::Internal(format!(
                "the table {} has the columns {have:?}, the export knows {want:?}",
                table.name
            ))
            .into());
        }
    }
    Ok(())
}

/// Refuses a database that holds anything a new one does not.
async fn check_empty(conn: &mut Conn) -> Result<(), Failure> {
    let mut held = Vec::new();
    for table in TABLES {
        // What a new database holds does not count (`SEEDED`).
        let sql = match table.name {
            "templates" => "SELECT COUNT(*) FROM templates WHERE is_built_in = 0".to_string(),
            "tags" => "SELECT COUNT(*) FROM tags WHERE entity_type <> 'TEMPLATE' \
                       OR entity_id NOT IN (SELECT id FROM templates WHERE is_built_in = 1)"
                .to_string(),
            "template_sections" | "workflow_pipelines" => continue,
            n => format!("SELECT COUNT(*) FROM {n}"),
        };
        let n: i64 = sqlx::query_scalar(sqlx::AssertSqlSafe(sql))
            .fetch_one(conn.db())
            .await?;
        if n > 0 {
            held.push(format!("{n} {}", table.name.replace('_', " ")));
        }
    }
    if held.is_empty() {
        return Ok(());
    }
    Err(Failure::NotEmpty(format!(
        "the database is not empty (it holds {}): an import loads into an empty \
         database only; name a new SQLite file with --db, or an empty PostgreSQL database",
        held.join(", ")
    )))
}

/// Writes `table`'s rows as JSON lines, each an object of its columns in the
/// table's order; how many.
async fn write_rows(conn: &mut Conn, table: &Table, out: &mut impl Write) -> Result<u64, Failure> {
    let cols: Vec<(&str, Ty)> = table.columns().collect();
    let sql = table.select();
    let mut rows = sqlx::query(sqlx::AssertSqlSafe(sql)).fetch(conn.db());
    let mut n = 0u64;
    let mut line = String::new();
    while let Some(row) = rows.try_next().await.map_err(Error::from)? {
        line.clear();
        line.push('{');
        for (i, (name, ty)) in cols.iter().enumerate() {
            if i > 0 {
                line.push(',');
            }
            line.push_str(&Value::from(*name).to_string());
            line.push(':');
            let v = match ty {
                Ty::Text => row.try_get::<Option<String>, _>(i).map(Value::from),
                Ty::Int => row.try_get::<Option<i64>, _>(i).map(Value::from),
                Ty::Real => row.try_get::<Option<f64>, _>(i).map(|f| match f {
                    Some(f) => serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number),
                    None => Value::Null,
                }),
            }
            .map_err(|e| Error::Corrupt(format!("{}.{name}: {e}", table.name)))?;
            line.push_str(&v.to_string());
        }
        line.push_str("}\n");
        out.write_all(line.as_bytes())
            .map_err(|e| refused(format!("cannot write: {e}")))?;
        n += 1;
    }
    Ok(n)
}

/// One column's value as read from a line.
enum Cell {
    Text(Option<String>),
    Int(Option<i64>),
    Real(Option<f64>),
}

/// Reads `table`'s file and inserts its rows; how many. Every failure names the
/// file and the line.
async fn read_rows(conn: &mut Conn, table: &Table, path: &Path) -> Result<u64, Failure> {
    let file = File::open(path).map_err(|e| {
        refused(format!(
            "cannot read {}: {e} (every table of an export has its file)",
            path.display()
        ))
    })?;
    let cols: Vec<(&str, Ty)> = table.columns().collect();
    let batch = table.batch();
    let mut pending: Vec<(u64, Vec<Cell>)> = Vec::with_capacity(batch);
    let merged_into = table.name == "memory_subjects";
    let mut merges: Vec<(String, String)> = Vec::new();
    let mut input = BufReader::new(file);
    let mut buf = Vec::new();
    let mut n = 0u64;
    loop {
        buf.clear();
        let got = (&mut input)
            .take(MAX_LINE as u64 + 1)
            .read_until(b'\n', &mut buf)
            .map_err(|e| refused(format!("cannot read {}: {e}", path.display())))?;
        if got == 0 {
            break;
        }
        let at = n + 1;
        let bad = |why: String| refused(format!("{} line {at}: {why}", path.display()));
        if buf.last() != Some(&b'\n') {
            return Err(bad(if buf.len() > MAX_LINE {
                format!(
                    "longer than {} MiB, the most a row may take",
                    MAX_LINE >> 20
                )
            } else {
                "the line does not end: the file is truncated; export again".into()
            }));
        }
        buf.pop();
        let obj: serde_json::Map<String, Value> =
            serde_json::from_slice(&buf).map_err(|e| bad(format!("not a JSON object ({e})")))?;
        if let Some(k) = obj.keys().find(|k| !cols.iter().any(|(c, _)| c == k)) {
            return Err(bad(format!("{} has no column {k}", table.name)));
        }
        let mut cells = Vec::with_capacity(cols.len());
        for (name, ty) in &cols {
            let v = obj
                .get(*name)
                .ok_or_else(|| bad(format!("the column {name} is missing")))?;
            let wrong = |what: &str| bad(format!("{name} must be {what} or null, not {v}"));
            cells.push(match (ty, v) {
                (Ty::Text, Value::Null) => Cell::Text(None),
                (Ty::Int, Value::Null) => Cell::Int(None),
                (Ty::Real, Value::Null) => Cell::Real(None),
                (Ty::Text, Value::String(s)) => Cell::Text(Some(s.clone())),
                (Ty::Int, Value::Number(x)) => {
                    Cell::Int(Some(x.as_i64().ok_or_else(|| wrong("a whole number"))?))
                }
                (Ty::Real, Value::Number(x)) => {
                    Cell::Real(Some(x.as_f64().ok_or_else(|| wrong("a number"))?))
                }
                (Ty::Text, _) => return Err(wrong("a string")),
                (Ty::Int, _) => return Err(wrong("a whole number")),
                (Ty::Real, _) => return Err(wrong("a number")),
            });
        }
        if merged_into {
            // The subject it was merged into may come later: written at the end.
            let id = match &cells[0] {
                Cell::Text(Some(id)) => Some(id.clone()),
                _ => None,
            };
            let at = cols.iter().position(|(c, _)| *c == "merged_into");
            if let (Some(id), Some(Cell::Text(target))) = (id, at.map(|i| &mut cells[i])) {
                if let Some(target) = target.take() {
                    merges.push((id, target));
                }
            }
        }
        pending.push((at, cells));
        if pending.len() == batch {
            insert(conn, table, &pending, path).await?;
            pending.clear();
        }
        n += 1;
    }
    insert(conn, table, &pending, path).await?;
    for (id, target) in merges {
        sqlx::query("UPDATE memory_subjects SET merged_into = ? WHERE id = ?")
            .bind(&target)
            .bind(&id)
            .execute(conn.db())
            .await
            .map_err(|e| {
                refuse_row(e, &|why| {
                    refused(format!(
                        "{}: the subject {id} is merged into {target}: {why}",
                        path.display()
                    ))
                })
            })?;
    }
    Ok(n)
}

/// Inserts `rows` (each with its line) in one statement. When the database refuses
/// it for a row's sake, the statement is undone to a savepoint and the rows are
/// inserted one by one, so the refusal names the line of the row.
async fn insert(
    conn: &mut Conn,
    table: &Table,
    rows: &[(u64, Vec<Cell>)],
    path: &Path,
) -> Result<(), Failure> {
    let one = |at: u64| move |why: String| refused(format!("{} line {at}: {why}", path.display()));
    match rows {
        [] => return Ok(()),
        [(at, cells)] => {
            return run_insert(conn, table, &[cells])
                .await
                .map_err(|e| refuse_row(e, &one(*at)))
        }
        _ => {}
    }
    sqlx::query("SAVEPOINT cairn_import")
        .execute(conn.db())
        .await?;
    let all: Vec<&Vec<Cell>> = rows.iter().map(|(_, c)| c).collect();
    match run_insert(conn, table, &all).await.map_err(Error::from) {
        Ok(()) => {}
        // Busy, full, read-only: the database's, not a row's.
        Err(e) if !matches!(e, Error::Internal(_)) => return Err(e.into()),
        Err(_) => {
            sqlx::query("ROLLBACK TO SAVEPOINT cairn_import")
                .execute(conn.db())
                .await?;
            for (at, cells) in rows {
                run_insert(conn, table, &[cells])
                    .await
                    .map_err(|e| refuse_row(e, &one(*at)))?;
            }
        }
    }
    sqlx::query("RELEASE SAVEPOINT cairn_import")
        .execute(conn.db())
        .await?;
    Ok(())
}

async fn run_insert(conn: &mut Conn, table: &Table, rows: &[&Vec<Cell>]) -> sqlx::Result<()> {
    let sql = table.insert(rows.len());
    // A statement binding an optional float runs unprepared (`dialect::Db`).
    let mut q = sqlx::query(sqlx::AssertSqlSafe(sql)).persistent(!table.has_real());
    for c in rows.iter().flat_map(|r| r.iter()) {
        q = match c {
            Cell::Text(v) => q.bind(v.as_deref()),
            Cell::Int(v) => q.bind(*v),
            Cell::Real(v) => q.bind(*v),
        };
    }
    q.execute(conn.db()).await.map(|_| ())
}

/// A row the database would not take (a broken reference, a duplicate key) is the
/// input's fault, named by its line; a busy, full or read-only database stays the
/// store's.
fn refuse_row(e: sqlx::Error, bad: &dyn Fn(String) -> Failure) -> Failure {
    match Error::from(e) {
        Error::Internal(m) => bad(format!("the database refused the row: {m}")),
        other => Failure::Store(other),
    }
}
