//! The SQLite store: opening and migrating the database file, the write-transaction
//! rule and the repositories. All SQL in Cairn lives under this module, so another
//! backend can follow by replacing it; nothing here knows about MCP.

mod checkpoint;
pub mod code;
pub mod dependency;
mod direct;
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
mod vfs;

use std::ffi::c_int;
use std::ops::{Deref, DerefMut};
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePoolOptions, SqliteSynchronous,
    SqliteTransactionManager,
};
use sqlx::{ConnectOptions, SqlitePool};
use sqlx_core::transaction::TransactionManager;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::{Error, Result};
use checkpoint::Checkpoints;
pub use direct::Arg;
use direct::Direct;

pub use sqlx::SqliteConnection as Conn;

static MIGRATOR: sqlx::migrate::Migrator = sqlx::migrate!("./migrations");

/// How many connections the store lends at once: SQLite takes one writer at a time,
/// and a few readers cover an agent's concurrent calls.
const CONNECTIONS: usize = 4;

/// The database file and the connections it lends.
///
/// The store keeps its own connections rather than borrowing from sqlx's pool,
/// for two costs that pool adds to every call: it pings each connection it takes
/// back (one more trip to the connection's worker thread per call), and it hands
/// out its idle connections in turn, so each call lands on a connection whose page
/// cache the previous call's write has invalidated. Here a returned connection goes
/// on a stack and the next call takes the one used last, warm.
#[derive(Clone)]
pub struct Store {
    path: PathBuf,
    opts: SqliteConnectOptions,
    checkpoints: Option<&'static Checkpoints>,
    idle: Arc<Mutex<Vec<Conn>>>,
    permits: Arc<Semaphore>,
    /// The connection for single-statement writes on the caller's thread, opened on
    /// the first such write (see [`direct`]).
    direct: Arc<Mutex<Slot>>,
    /// A pool on the same file for bulk tools (benchmark seeding); it opens nothing
    /// until used.
    pool: SqlitePool,
}

impl Store {
    /// Opens (creating if needed) and migrates the database at `path`.
    pub async fn open(path: &Path) -> Result<Store> {
        configure_sqlite();
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
            .foreign_keys(true)
            // Checkpoints wait for a pause in the writes (`checkpoint`), so a burst
            // grows the WAL file up to its ceiling (128 MiB of pages). When the WAL
            // starts over the file keeps that size: rewriting pages the system
            // already holds is cheaper than cutting the file and growing it again,
            // page by new page, which cost a long burst of atom creates 13%. SQLite
            // deletes the file when the last connection closes.
            .pragma("journal_size_limit", checkpoint::WAL_FILE_LIMIT.to_string());
        let opts = if vfs::register() {
            opts.vfs(vfs::NAME.to_str().unwrap_or_default())
        } else {
            opts
        };
        let checkpoints = Checkpoints::start(opts.clone());
        // Two servers starting on a fresh file race twice. Switching the new file to
        // WAL needs it alone, and SQLite answers the loser SQLITE_BUSY at once,
        // without waiting out busy_timeout; and the loser of the migration sees the
        // winner's tables. Both succeed on a later attempt.
        let mut attempt = 0;
        let conn = loop {
            let raced = match connect(&opts, checkpoints).await {
                Ok(mut c) => match MIGRATOR.run(&mut c).await {
                    Ok(()) => break c,
                    Err(e) => Error::from(e),
                },
                Err(e @ Error::Busy) => e,
                Err(e) => return Err(e),
            };
            if attempt == 6 {
                return Err(raced);
            }
            attempt += 1;
            tracing::debug!(error = %raced, attempt, "opening the file raced, retrying");
            tokio::time::sleep(Duration::from_millis(50 * attempt)).await;
        };
        let pool = SqlitePoolOptions::new()
            .max_connections(2)
            .min_connections(0)
            .connect_lazy_with(opts.clone());
        Ok(Store {
            path: path.to_path_buf(),
            opts,
            checkpoints,
            idle: Arc::new(Mutex::new(vec![conn])),
            permits: Arc::new(Semaphore::new(CONNECTIONS)),
            direct: Arc::new(Mutex::new(Slot::Unopened)),
            pool,
        })
    }

    /// A connection for reads outside a transaction, or for a write that is one
    /// self-checking statement (autocommit).
    pub async fn read(&self) -> Result<Lease> {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| Error::Internal("the store is closed".into()))?;
        let warm = self.idle.lock().ok().and_then(|mut v| v.pop());
        let conn = match warm {
            Some(c) => c,
            None => connect(&self.opts, self.checkpoints).await?,
        };
        Ok(Lease {
            conn: Some(conn),
            idle: self.idle.clone(),
            _permit: permit,
        })
    }

    /// Runs `sql`, one statement that checks what it needs and writes, in autocommit;
    /// answers the rows it changed. It runs on the caller's thread when it can (see
    /// [`direct`]), else on a lent connection, waiting for the write lock like any
    /// other write.
    pub async fn write_one(&self, sql: &'static str, args: &[Arg<'_>]) -> Result<u64> {
        if let Some(n) = self.try_direct(sql, args) {
            return Ok(n);
        }
        let mut c = self.read().await?;
        Ok(query(sql, args).execute(&mut *c).await?.rows_affected())
    }

    fn try_direct(&self, sql: &'static str, args: &[Arg<'_>]) -> Option<u64> {
        // Nobody else holds it on this server's one runtime thread; a blocking-pool
        // thread that did would make this call take the sqlx path, not wait.
        let mut slot = self.direct.try_lock().ok()?;
        if let Slot::Unopened = *slot {
            *slot = match Direct::open(&self.path, self.checkpoints) {
                Some(d) => Slot::Open(d),
                None => Slot::Closed,
            };
        }
        match &mut *slot {
            Slot::Open(d) => d.execute(sql, args),
            _ => None,
        }
    }

    /// Begins a write transaction (`BEGIN IMMEDIATE`).
    pub async fn write(&self) -> Result<Tx> {
        self.begin(Some("BEGIN IMMEDIATE")).await
    }

    /// Begins a read transaction (deferred `BEGIN`): its reads see one snapshot of
    /// the file even while another process writes.
    pub async fn snapshot(&self) -> Result<Tx> {
        self.begin(None).await
    }

    async fn begin(&self, statement: Option<&'static str>) -> Result<Tx> {
        let mut lease = self.read().await?;
        SqliteTransactionManager::begin(&mut lease, statement.map(sqlx::SqlStr::from_static))
            .await?;
        Ok(Tx { lease, open: true })
    }

    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// Closes the file at the end of a session: later calls get an error, and the
    /// connections close, the checkpoint task's too. When they are the last on the
    /// file, SQLite copies what is left of the WAL into the database and removes the
    /// WAL, so a session leaves the database alone behind it, not a WAL the next
    /// start would have to read through (up to 128 MiB after a burst). A call still
    /// running keeps its connection until the process ends; a killed process leaves
    /// its WAL, which the next open replays.
    pub async fn close(&self) {
        self.permits.close();
        *self.direct.lock().unwrap_or_else(|e| e.into_inner()) = Slot::Closed;
        let idle = match self.idle.lock() {
            Ok(mut v) => std::mem::take(&mut *v),
            Err(_) => vec![],
        };
        for c in idle {
            if let Err(e) = sqlx::Connection::close(c).await {
                tracing::debug!(error = %e, "connection not closed cleanly");
            }
        }
        if let Some(cp) = self.checkpoints {
            cp.close().await;
        }
        self.pool.close().await;
    }
}

/// The direct connection's state: opened on first use, and never again once the store
/// closes or the open failed.
enum Slot {
    Unopened,
    Open(Direct),
    Closed,
}

/// SQLite's process-wide settings, made once, before the first connection opens
/// (SQLite refuses them once it is initialized; then its defaults stay).
///
/// Memory statistics off. With them on, every allocation and free inside SQLite takes
/// one process-wide mutex to keep the counts, and a read contends for it twice: the
/// connection's worker thread allocates each row's values while the calling thread
/// frees the rows already received. Loading a project of 20,000 atoms waited on that
/// mutex for a fifth of its time. Cairn never reads the counts.
fn configure_sqlite() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        // SAFETY: SQLITE_CONFIG_MEMSTATUS takes one int; called before any connection
        // of this process opens, as sqlite3_config requires, or answered MISUSE.
        let rc = unsafe {
            libsqlite3_sys::sqlite3_config(libsqlite3_sys::SQLITE_CONFIG_MEMSTATUS, 0 as c_int)
        };
        if rc != libsqlite3_sys::SQLITE_OK {
            tracing::debug!(code = rc, "SQLite was initialized before its settings");
        }
    });
}

/// Opens one connection with SQLite's query-planner stability guarantee on and, for
/// the store's own connections, commits reported to `checkpoints` (see
/// [`checkpoint`]) instead of checkpointing inline.
///
/// Without the guarantee, SQLite plans some statements around the values bound to
/// them (a bound `LIMIT ?`, a `LIKE ?` pattern) and compiles them again when those
/// values change. sqlx clears the bindings after every execution, which counts as a
/// change, so such a statement was compiled anew on every call although sqlx caches
/// it: `get_next_task` among 4,000 tasks spent 120 of its 140 µs in SQLite compiling,
/// and 22 µs in all with the guarantee on.
async fn connect(
    opts: &SqliteConnectOptions,
    checkpoints: Option<&'static Checkpoints>,
) -> Result<Conn> {
    let mut conn = opts.connect().await?;
    let mut handle = conn.lock_handle().await?;
    let db = handle.as_raw_handle().as_ptr();
    // SAFETY: the locked handle gives this thread the connection alone until it is
    // dropped, and the arguments match SQLITE_DBCONFIG_ENABLE_QPSG's documented
    // signature (int on/off, int* for the resulting setting, which may be null).
    let rc = unsafe {
        libsqlite3_sys::sqlite3_db_config(
            db,
            libsqlite3_sys::SQLITE_DBCONFIG_ENABLE_QPSG,
            1 as c_int,
            std::ptr::null_mut::<c_int>(),
        )
    };
    if let Some(cp) = checkpoints {
        // SAFETY: as above, the connection is this thread's; the hook matches
        // `sqlite3_wal_hook`'s callback type and its argument is a `Checkpoints`
        // that is never freed, so it outlives the connection.
        unsafe {
            libsqlite3_sys::sqlite3_wal_hook(db, Some(checkpoint::committed), cp.as_hook_arg());
        }
    }
    drop(handle);
    if rc != libsqlite3_sys::SQLITE_OK {
        return Err(Error::Internal(format!(
            "SQLite refused the planner setting (code {rc})"
        )));
    }
    Ok(conn)
}

/// A connection lent by the store; it goes back on the store's stack when dropped.
pub struct Lease {
    conn: Option<Conn>,
    idle: Arc<Mutex<Vec<Conn>>>,
    // Released after `drop` has put the connection back, so a waiter finds it.
    _permit: OwnedSemaphorePermit,
}

impl Deref for Lease {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        self.conn
            .as_ref()
            .expect("a lease holds its connection until dropped")
    }
}

impl DerefMut for Lease {
    fn deref_mut(&mut self) -> &mut Conn {
        self.conn
            .as_mut()
            .expect("a lease holds its connection until dropped")
    }
}

impl Drop for Lease {
    fn drop(&mut self) {
        // A statement cut off by a cancelled call, or a rollback queued by `Tx`, runs
        // on the connection's worker before anything the next borrower sends: the
        // worker takes commands in order.
        if let (Some(c), Ok(mut idle)) = (self.conn.take(), self.idle.lock()) {
            idle.push(c);
        }
    }
}

/// A transaction on a lent connection. Dropped without `commit`, it rolls back
/// (queued on the connection before it is lent again).
pub struct Tx {
    lease: Lease,
    open: bool,
}

impl Tx {
    pub async fn commit(mut self) -> Result<()> {
        SqliteTransactionManager::commit(&mut self.lease).await?;
        self.open = false;
        Ok(())
    }

    pub async fn rollback(mut self) -> Result<()> {
        SqliteTransactionManager::rollback(&mut self.lease).await?;
        self.open = false;
        Ok(())
    }
}

impl Deref for Tx {
    type Target = Conn;
    fn deref(&self) -> &Conn {
        &self.lease
    }
}

impl DerefMut for Tx {
    fn deref_mut(&mut self) -> &mut Conn {
        &mut self.lease
    }
}

impl Drop for Tx {
    fn drop(&mut self) {
        if self.open {
            SqliteTransactionManager::start_rollback(&mut self.lease);
        }
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
}

#[cfg(test)]
impl Drop for TestDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `sql` with `args` bound, for sqlx.
fn query<'q>(
    sql: &'static str,
    args: &[Arg<'q>],
) -> sqlx::query::Query<'q, sqlx::Sqlite, sqlx::sqlite::SqliteArguments> {
    let mut q = sqlx::query(sql);
    for a in args {
        q = match *a {
            Arg::Text(s) => q.bind(s),
            Arg::Int(i) => q.bind(i),
            Arg::Null => q.bind(None::<&str>),
        };
    }
    q
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
