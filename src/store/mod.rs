//! The store: the database file, its migrations, the write-transaction rule and the
//! repositories. All SQL in Cairn lives under this module; services see [`Store`],
//! [`Conn`], [`Tx`], the repository functions and [`Error`], never a sqlx type, so a
//! second backend fills this module alone (see ARCHITECTURE.md, "The store seam").
//! Nothing here knows about MCP.

pub mod code;
pub mod dependency;
pub mod embedding;
mod error;
pub mod graph;
pub mod item;
pub mod lock;
pub mod memory;
pub mod ontology;
pub mod pipeline;
pub mod project;
pub mod section;
pub mod semantic;
pub mod tag;
pub mod template;

use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::pool::PoolConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqliteConnection, SqlitePool};

pub use error::{quoted, Error, Result};

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// How a store is opened; the defaults suit one agent's server.
#[derive(Debug, Clone)]
pub struct Options {
    /// How long a write waits for another connection's write lock before it fails
    /// with [`Error::Busy`].
    pub busy_timeout: Duration,
    /// The most pages the file may hold; a write past it fails with [`Error::Full`],
    /// as on a full disk. `None`: SQLite's own limit.
    pub max_pages: Option<u64>,
    /// Connections the pool keeps at most: SQLite takes one writer at a time, and
    /// readers run beside it in WAL mode.
    pub connections: u32,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            busy_timeout: Duration::from_secs(10),
            max_pages: None,
            connections: 8,
        }
    }
}

/// The database file and the pool of connections on it.
#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
}

impl Store {
    /// Opens (creating the file if needed, never its directory) and migrates the
    /// database at `path`. A failure says what is wrong in terms an operator can act
    /// on: a missing or unwritable directory, a read-only file, a database migrated
    /// by a newer Cairn.
    pub async fn open(path: &Path, o: &Options) -> Result<Store> {
        let mut opts = SqliteConnectOptions::from_str("sqlite://")
            .map_err(|e| Error::Internal(e.to_string()))?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // WAL with NORMAL: a killed process loses nothing it acknowledged; only a
            // power cut can drop the last commits.
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(o.busy_timeout)
            .foreign_keys(true);
        if let Some(n) = o.max_pages {
            opts = opts.pragma("max_page_count", n.to_string());
        }
        let pool = SqlitePoolOptions::new()
            .max_connections(o.connections.max(1))
            .min_connections(0)
            // A connection taken from the pool is used at once; a broken one fails
            // that call, which is answered, rather than costing every call a ping.
            .test_before_acquire(false)
            .connect_lazy_with(opts);
        // Two servers starting on a fresh file race twice. Switching the new file to
        // WAL needs it alone, and SQLite answers the loser SQLITE_BUSY at once,
        // without waiting out busy_timeout; and the loser of the migration sees the
        // winner's tables. Both succeed on a later attempt.
        let mut attempt = 0;
        loop {
            let raced = match MIGRATOR.run(&pool).await {
                Ok(()) => break,
                Err(e) => opening(path, &pool, e).await,
            };
            if attempt == 6 || !matches!(raced, Error::Busy | Error::Raced(_)) {
                pool.close().await;
                return Err(raced);
            }
            attempt += 1;
            tracing::debug!(error = %raced, attempt, "opening the file raced, retrying");
            tokio::time::sleep(Duration::from_millis(50 * attempt)).await;
        }
        Ok(Store { pool })
    }

    /// A connection for reads outside a transaction.
    pub async fn read(&self) -> Result<Conn> {
        Ok(Conn(Held::Pooled(self.pool.acquire().await?)))
    }

    /// Begins a write transaction (`BEGIN IMMEDIATE`: the write lock is taken at the
    /// start, so two processes cannot interleave a read-modify-write). Dropped
    /// without [`Tx::commit`], it rolls back.
    pub async fn write(&self) -> Result<Tx> {
        Ok(Tx(Conn(Held::Tx(
            self.pool.begin_with("BEGIN IMMEDIATE").await?,
        ))))
    }

    /// Begins a read transaction (deferred `BEGIN`): its reads see one snapshot of
    /// the file even while another process writes.
    pub async fn snapshot(&self) -> Result<Tx> {
        Ok(Tx(Conn(Held::Tx(self.pool.begin().await?))))
    }

    /// Closes the file at the end of a session: later calls fail, and the pool's
    /// connections close. When they are the last on the file, SQLite copies what is
    /// left of the WAL into the database and removes it.
    pub async fn close(&self) {
        self.pool.close().await;
    }
}

/// What a failed open means, for the operator: the sqlx error of the migration
/// (which opens the first connection) turned into a sentence naming the path.
async fn opening(path: &Path, pool: &SqlitePool, e: sqlx::migrate::MigrateError) -> Error {
    use sqlx::migrate::MigrateError;
    let shown = path.display();
    // A migration that failed although the file now records it applied lost a race:
    // another process applied it meanwhile (each migration is one transaction, its
    // record with it), so this attempt left nothing and the next starts after it. A
    // migration that fails with nobody having applied it is a real failure, reported.
    if let MigrateError::ExecuteMigration(sqlx::Error::Database(db), v) = &e {
        let applied: Option<i64> = sqlx::query_scalar(
            "SELECT version FROM _sqlx_migrations WHERE version = ? AND success",
        )
        .bind(*v)
        .fetch_optional(pool)
        .await
        .ok()
        .flatten();
        if applied.is_some() {
            return Error::Raced(db.message().to_string());
        }
    }
    match e {
        MigrateError::VersionMissing(v) => {
            let known = MIGRATOR.iter().map(|m| m.version).max().unwrap_or(0);
            let newest: Option<i64> =
                sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
                    .fetch_one(pool)
                    .await
                    .ok()
                    .flatten();
            Error::Open(format!(
                "{shown} was migrated by a newer Cairn: its schema is at version {} (it has migration {v}), \
                 this cairn {} knows versions up to {known}; upgrade cairn, or point --db at another file",
                newest.unwrap_or(v),
                env!("CARGO_PKG_VERSION"),
            ))
        }
        // Outside a migration (the bookkeeping table itself), the loser of the race
        // meets the winner's work half-way: the table created, the version recorded.
        MigrateError::Execute(sqlx::Error::Database(db))
            if ["already exists", "no such table", "_sqlx_migrations"]
                .iter()
                .any(|m| db.message().contains(m)) =>
        {
            Error::Raced(db.message().to_string())
        }
        MigrateError::Execute(e) | MigrateError::ExecuteMigration(e, _) => {
            match Error::from(e) {
                Error::Internal(m) => Error::Open(format!("cannot open {shown}: {m}")),
                Error::ReadOnly => Error::Open(format!(
                    "cannot write {shown}: permission denied ({}); Cairn writes the file and its -wal and -shm \
                     beside it, so both the file and its directory must be writable by this user",
                    why_unwritable(path)
                )),
                Error::CantOpen => Error::Open(format!(
                    "cannot open {shown}: {}",
                    why_unopenable(path)
                )),
                other => other,
            }
        }
        other => Error::Open(format!("cannot migrate {shown}: {other}")),
    }
}

/// Why SQLite could not open `path`, from what the file system shows.
fn why_unopenable(path: &Path) -> String {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    match std::fs::metadata(dir) {
        Err(_) => format!(
            "the directory {} does not exist; create it, or point --db at a file in an existing directory",
            dir.display()
        ),
        Ok(m) if !m.is_dir() => format!("{} is not a directory", dir.display()),
        Ok(_) if path.is_dir() => format!("{} is a directory, not a database file", path.display()),
        Ok(_) if std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly()) => format!(
            "permission denied: the file is read-only and this user cannot create files in {} \
             (SQLite needs the -wal and -shm files beside it)",
            dir.display()
        ),
        Ok(_) => format!(
            "permission denied: this user cannot create or open files in {} (SQLite needs the file and its -wal and -shm beside it)",
            dir.display()
        ),
    }
}

/// Which of `path` and its directory looks unwritable.
fn why_unwritable(path: &Path) -> String {
    let ro = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.permissions().readonly());
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if ro(path) {
        format!("the file {} is read-only", path.display())
    } else if ro(dir) {
        format!("the directory {} is read-only", dir.display())
    } else {
        format!(
            "the file {} or its directory is not writable",
            path.display()
        )
    }
}

/// A connection lent by the store, outside a transaction or holding one; it goes
/// back to the pool when dropped. Repositories take `&mut Conn`; a [`Tx`] derefs to
/// one.
pub struct Conn(Held);

enum Held {
    Pooled(PoolConnection<Sqlite>),
    Tx(sqlx::Transaction<'static, Sqlite>),
}

impl Conn {
    /// The SQLite connection underneath, for the repositories of this module only.
    fn db(&mut self) -> &mut SqliteConnection {
        match &mut self.0 {
            Held::Pooled(c) => c,
            Held::Tx(t) => t,
        }
    }
}

/// A transaction. Dropped without [`Tx::commit`], it rolls back.
pub struct Tx(Conn);

impl Tx {
    pub async fn commit(self) -> Result<()> {
        match self.0 .0 {
            Held::Tx(t) => Ok(t.commit().await?),
            Held::Pooled(_) => Ok(()),
        }
    }

    /// Rolls back now (dropping the transaction does it too, a moment later).
    pub async fn rollback(self) -> Result<()> {
        match self.0 .0 {
            Held::Tx(t) => Ok(t.rollback().await?),
            Held::Pooled(_) => Ok(()),
        }
    }
}

impl Deref for Tx {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        &self.0
    }
}

impl DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut Conn {
        &mut self.0
    }
}

/// A fresh directory for a unit test's database files, removed when dropped.
#[cfg(test)]
pub struct TestDir(pub std::path::PathBuf);

#[cfg(test)]
impl TestDir {
    pub fn new(tag: &str) -> TestDir {
        let dir =
            std::env::temp_dir().join(format!("cairn-{tag}-{}", uuid::Uuid::now_v7().simple()));
        std::fs::create_dir_all(&dir).expect("create a test directory");
        TestDir(dir)
    }

    /// A store on a new file in this directory.
    pub async fn store(&self) -> Store {
        Store::open(&self.0.join("t.db"), &Options::default())
            .await
            .expect("open a test store")
    }
}

#[cfg(test)]
impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// SQL `IN (?, ?, …)` placeholder list for `n` values.
pub fn placeholders(n: usize) -> String {
    let mut s = String::with_capacity(n * 3);
    for i in 0..n {
        if i > 0 {
            s.push_str(", ");
        }
        s.push('?');
    }
    s
}
