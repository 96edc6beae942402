//! The SQLite store: opening and migrating the database file, the write-transaction
//! rule and the repositories. All SQL in Cairn lives under this module, so another
//! backend can follow by replacing it; nothing here knows about MCP.

pub mod code;
pub mod dependency;
pub mod embedding;
pub mod graph;
pub mod item;
pub mod lock;
pub mod pipeline;
pub mod project;
pub mod section;
pub mod semantic;
pub mod tag;
pub mod template;

use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::pool::PoolConnection;
use sqlx::sqlite::{SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous};
use sqlx::{Sqlite, SqlitePool};

use crate::error::{Error, Result};

pub use sqlx::SqliteConnection as Conn;

/// A write transaction, opened with `BEGIN IMMEDIATE` so it holds the write lock from
/// its first statement: two processes can then never interleave a read-modify-write.
pub type Tx = sqlx::Transaction<'static, Sqlite>;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

#[derive(Clone)]
pub struct Store {
    pool: SqlitePool,
}

impl Store {
    /// Opens (creating if needed) and migrates the database at `path`.
    pub async fn open(path: &Path) -> Result<Store> {
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| {
                Error::Internal(format!("cannot create directory {}: {e}", dir.display()))
            })?;
        }
        let opts = SqliteConnectOptions::from_str("sqlite://")
            .map_err(Error::from)?
            .filename(path)
            .create_if_missing(true)
            .journal_mode(SqliteJournalMode::Wal)
            // WAL with NORMAL: a killed process loses nothing it acknowledged; only a
            // power cut can drop the last commits.
            .synchronous(SqliteSynchronous::Normal)
            .busy_timeout(Duration::from_secs(10))
            .foreign_keys(true);
        let pool = SqlitePoolOptions::new()
            .max_connections(4)
            .min_connections(1)
            .idle_timeout(None)
            .max_lifetime(None)
            // A pooled SQLite connection is a file handle in this process: it cannot go
            // stale the way a network connection can, and the ping before every
            // acquire cost one more trip to the connection's worker thread per call.
            .test_before_acquire(false)
            .connect_with(opts)
            .await?;
        // Two servers starting on a fresh file race to migrate; the loser sees the
        // winner's tables and succeeds on a second pass.
        let mut attempt = 0;
        loop {
            match MIGRATOR.run(&pool).await {
                Ok(()) => break,
                Err(e) if attempt < 5 => {
                    attempt += 1;
                    tracing::debug!(error = %e, attempt, "migration raced, retrying");
                    tokio::time::sleep(Duration::from_millis(50 * attempt)).await;
                }
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Store { pool })
    }

    /// Begins a write transaction (`BEGIN IMMEDIATE`).
    pub async fn write(&self) -> Result<Tx> {
        Ok(self.pool.begin_with("BEGIN IMMEDIATE").await?)
    }

    /// A connection for reads outside a transaction.
    pub async fn read(&self) -> Result<PoolConnection<Sqlite>> {
        Ok(self.pool.acquire().await?)
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
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
