//! The store: the database (a SQLite file, or a PostgreSQL database), its
//! migrations, the write-transaction rule and the repositories. All SQL in Cairn
//! lives under this module; services see [`Store`], [`Conn`], [`Tx`], the repository
//! functions and [`Error`], never a sqlx type (see ARCHITECTURE.md, "The store
//! seam"). Nothing here knows about MCP.

pub mod code;
pub mod dependency;
pub mod embedding;
mod error;
pub mod file;
pub mod foreign;
pub mod graph;
pub mod item;
pub mod lock;
pub mod memory;
mod migrations;
pub mod ontology;
mod pg_params;
pub mod pipeline;
pub mod project;
mod rows;
pub mod section;
pub mod semantic;
pub mod tag;
pub mod template;
pub mod transfer;
mod writer;

use std::ops::{Deref, DerefMut};
use std::path::Path;
use std::str::FromStr;
use std::time::Duration;

use sqlx::any::{AnyConnectOptions, AnyPoolOptions};
use sqlx::pool::PoolConnection;
use sqlx::{Any, AnyConnection, AnyPool, ConnectOptions, Executor};

pub use dialect::Flag;
pub use error::{Error, Result};
use migrations::{MIGRATOR, PG_MIGRATOR};
pub(crate) use rows::from_row;

mod dialect;

/// The lock every PostgreSQL write transaction takes first (an arbitrary key, "cairn"
/// in ASCII): see [`Store::write`].
const WRITE_LOCK: i64 = 0x63_61_69_72_6e;

/// Which database a store is on, and how its write transactions begin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Backend {
    Sqlite,
    /// `lock_ms`: how long a write waits for the write lock (the busy timeout).
    Postgres {
        lock_ms: u128,
    },
}

impl Backend {
    fn pg(self) -> bool {
        matches!(self, Backend::Postgres { .. })
    }

    /// The statement beginning a write transaction. SQLite's `IMMEDIATE` takes the
    /// write lock at once; PostgreSQL's writers take theirs next
    /// ([`Backend::take_write_lock`]).
    fn write_begin(self) -> &'static str {
        match self {
            Backend::Sqlite => "BEGIN IMMEDIATE",
            Backend::Postgres { .. } => "BEGIN ISOLATION LEVEL READ COMMITTED",
        }
    }

    /// The statement beginning a read transaction that sees one snapshot. SQLite's
    /// deferred `BEGIN` takes its snapshot at the first read (in WAL mode, writers go
    /// on beside it); PostgreSQL's `REPEATABLE READ` at the first statement, and
    /// `READ ONLY` makes a write slipped into a read an error, not a surprise.
    fn snapshot_begin(self) -> &'static str {
        match self {
            Backend::Sqlite => "BEGIN",
            Backend::Postgres { .. } => "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY",
        }
    }

    /// On PostgreSQL, the first statement of every write transaction: how long it
    /// may wait for a lock (the busy timeout, for this transaction only: the
    /// migrator's own lock must not give up on a slow migration), then the write
    /// lock itself. Nothing on SQLite, whose `BEGIN IMMEDIATE` took it.
    async fn take_write_lock(self, tx: &mut AnyConnection) -> Result<()> {
        if let Backend::Postgres { lock_ms } = self {
            sqlx::raw_sql(sqlx::AssertSqlSafe(format!(
                "SET LOCAL lock_timeout = {lock_ms}; SELECT pg_advisory_xact_lock({WRITE_LOCK})"
            )))
            .execute(tx)
            .await?;
        }
        Ok(())
    }
}

/// Whether `db` (a `--db` value) names a PostgreSQL database rather than a file.
pub fn is_url(db: &str) -> bool {
    db.starts_with("postgres://") || db.starts_with("postgresql://")
}

/// `db` as it may be printed: a URL's password (`user:password@`, or a
/// `password=` parameter) replaced by `***` ([`crate::redact::url`]).
pub fn shown(db: &str) -> String {
    crate::redact::url(db)
}

/// How a store is opened; the defaults suit one agent's server.
#[derive(Debug, Clone)]
pub struct Options {
    /// How long a write waits for another connection's write lock before it fails
    /// with [`Error::Busy`].
    pub busy_timeout: Duration,
    /// The most pages the file may hold; a write past it fails with [`Error::Full`],
    /// as on a full disk. `None`: SQLite's own limit. (SQLite only.)
    pub max_pages: Option<u64>,
    /// Connections the pool keeps at most. `None`: 8 on SQLite (one writer at a time,
    /// readers beside it in WAL mode), 16 on PostgreSQL (a server many agents share
    /// over HTTP reads in parallel; four such servers stay well inside PostgreSQL's
    /// default of 100 connections).
    pub connections: Option<u32>,
}

impl Default for Options {
    fn default() -> Options {
        Options {
            busy_timeout: Duration::from_secs(10),
            max_pages: None,
            connections: None,
        }
    }
}

/// The database and the pool of connections on it.
#[derive(Clone)]
pub struct Store {
    pool: AnyPool,
    /// Where write transactions run: on SQLite a pool of its own holding one
    /// connection, on PostgreSQL `pool` itself. SQLite drops a connection's whole
    /// page cache when it begins a transaction on a file another connection has
    /// written since, and sqlx lends its idle connections in turn: writes spread over
    /// the pool each began on a cold cache and read back every page they touched
    /// (about twenty reads of the file per atom create). Writes take turns anyway
    /// (one write lock per file), so one connection loses nothing, and its cache
    /// stays warm from write to write. `None` on PostgreSQL, whose writes run on
    /// `pool` (it keeps no cache per connection to lose).
    writer: Option<writer::Writer>,
    backend: Backend,
}

impl Store {
    /// Opens and migrates the database `db` names: a PostgreSQL URL
    /// (`postgres://…`, the database created when missing and the role may), or
    /// else a SQLite file (created if needed, for this user only, never its
    /// directory: see `file`). A failure says
    /// what is wrong in terms an operator can act on: a missing or unwritable
    /// directory, a read-only file, an unreachable server, a database migrated by a
    /// newer Cairn.
    pub async fn open(db: &Path, o: &Options) -> Result<Store> {
        sqlx::any::install_default_drivers();
        match db.to_str() {
            Some(url) if is_url(url) => open_postgres(url, o).await,
            _ => open_sqlite(db, o).await,
        }
    }

    /// A connection for reads outside a transaction.
    pub async fn read(&self) -> Result<Conn> {
        Ok(Conn {
            held: Held::Pooled(self.pool.acquire().await?),
            backend: self.backend,
        })
    }

    /// Begins a write transaction; dropped without [`Tx::commit`], it rolls back.
    ///
    /// One write transaction runs at a time on a database, whichever server holds
    /// it. On SQLite that is `BEGIN IMMEDIATE` (the write lock taken at the start).
    /// On PostgreSQL it is a transaction-scoped advisory lock taken first: every
    /// guarantee the repositories and the workflow rules were written against
    /// carries over unchanged (no lost update, no write skew between a rule's check
    /// and its write, no serialization failure to retry), and reads never wait for
    /// it. `SERIALIZABLE` with retries would let independent writes overlap, but
    /// each use case would then have to be safe to replay, and writes here take
    /// milliseconds. A writer waits for the lock up to the busy timeout
    /// (`lock_timeout`), then fails with [`Error::Busy`] as on SQLite.
    pub async fn write(&self) -> Result<Tx> {
        if let Some(w) = &self.writer {
            return Ok(Tx(Conn {
                held: Held::Writer(w.begin(self.backend.write_begin()).await?),
                backend: self.backend,
            }));
        }
        let mut tx = self.pool.begin_with(self.backend.write_begin()).await?;
        self.backend.take_write_lock(&mut tx).await?;
        Ok(Tx(Conn {
            held: Held::Tx(tx),
            backend: self.backend,
        }))
    }

    /// A write of one statement that needs nothing read before it to hold still: on
    /// SQLite the writer's connection outside a transaction, where the statement is
    /// a transaction of its own (SQLite takes the write lock for it as `BEGIN
    /// IMMEDIATE` would, waiting up to the busy timeout, and commits it at its end),
    /// which saves the BEGIN and the COMMIT, each a trip to the connection's thread.
    /// On PostgreSQL a write transaction as [`Store::write`] begins, so that the one
    /// lock every writer takes is taken here too. [`Tx::commit`] ends either.
    pub async fn write_one(&self) -> Result<Tx> {
        let Some(w) = &self.writer else {
            return self.write().await;
        };
        Ok(Tx(Conn {
            held: Held::Writer(w.lend().await?),
            backend: self.backend,
        }))
    }

    /// Begins a read transaction: its reads see one snapshot of the database even
    /// while another process writes (SQLite's deferred `BEGIN`; PostgreSQL's
    /// `REPEATABLE READ READ ONLY`). A composed read (a get with its parts, an
    /// overview, a briefing, a recall) runs in one, passing it (as `&mut Conn`) to
    /// each part.
    pub async fn snapshot(&self) -> Result<Tx> {
        let tx = self.pool.begin_with(self.backend.snapshot_begin()).await?;
        Ok(Tx(Conn {
            held: Held::Tx(tx),
            backend: self.backend,
        }))
    }

    /// Writes a consistent copy of the SQLite database to `to`, a file that must not
    /// exist yet (SQLite's `VACUUM INTO`: one read transaction, so writers on other
    /// connections and processes go on, and the copy holds every committed write
    /// up to its start, compacted). Readable by this user only, like the database.
    /// PostgreSQL databases are copied with `pg_dump`.
    pub async fn backup(&self, to: &Path) -> Result<()> {
        if self.backend.pg() {
            return Err(Error::Open(
                "a PostgreSQL database is backed up with pg_dump".into(),
            ));
        }
        if to.exists() {
            return Err(Error::Open(format!(
                "{} exists; name a new file (a backup never overwrites)",
                to.display()
            )));
        }
        let target = to
            .to_str()
            .ok_or_else(|| Error::Open(format!("{} is not valid UTF-8", to.display())))?;
        sqlx::query("VACUUM INTO ?")
            .bind(target)
            .execute(&mut *self.pool.acquire().await?)
            .await?;
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(to, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| Error::Open(format!("cannot restrict {}: {e}", to.display())))?;
        Ok(())
    }

    /// Whether the database answers and holds every migration this build has
    /// (`/ready`): `None` when it does, else why not.
    pub async fn unready(&self) -> Option<String> {
        let migrator = if self.backend.pg() {
            &PG_MIGRATOR
        } else {
            &MIGRATOR
        };
        let latest = migrator.iter().map(|m| m.version).max().unwrap_or(0);
        let applied: std::result::Result<Option<i64>, sqlx::Error> =
            sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
                .fetch_one(&self.pool)
                .await;
        match applied {
            Err(e) => Some(format!("the database does not answer: {e}")),
            Ok(v) if v.unwrap_or(0) < latest => Some(format!(
                "the database is at migration {}, this build needs {latest}",
                v.unwrap_or(0)
            )),
            Ok(_) => None,
        }
    }

    /// The database's size in bytes (SQLite: its pages; PostgreSQL: the database's).
    pub async fn size_bytes(&self) -> Result<i64> {
        let sql = if self.backend.pg() {
            "SELECT pg_database_size(current_database())"
        } else {
            "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size()"
        };
        Ok(sqlx::query_scalar(sql).fetch_one(&self.pool).await?)
    }

    /// Closes the store at the end of a session: later calls fail, and the pool's
    /// connections close. On SQLite, when they are the last on the file, SQLite
    /// copies what is left of the WAL into the database and removes it.
    pub async fn close(&self) {
        if let Some(w) = &self.writer {
            w.close().await;
        }
        self.pool.close().await;
    }
}

async fn open_sqlite(path: &Path, o: &Options) -> Result<Store> {
    // The Any driver opens a file from a URL, which carries the file and its creation
    // only; the connection's settings are made on every new connection by the
    // statements below, none of which touches the file. What can fail on the file
    // (creating it, switching it to WAL) is done first on a connection of its own
    // (`prepare_file`), whose errors come back at once: the pool would retry a
    // failing setup until its timeout.
    let opts = AnyConnectOptions::from_str(&sqlite_url(path))
        .map_err(|e| Error::Open(format!("cannot open {}: {e}", path.display())))?;
    let busy_ms = o.busy_timeout.as_millis();
    let max_pages = o.max_pages;
    let pool = sqlite_pool(o.connections.unwrap_or(8).max(1), busy_ms, max_pages)
        .connect_lazy_with(opts.clone());
    // A writer waits for the writer's connection as it would for the write lock: up
    // to the busy timeout (at least the time to open the connection, as on
    // PostgreSQL), then `Error::Busy`, which a timed-out acquire maps to.
    let wait = o.busy_timeout.max(Duration::from_secs(5));
    let writer = writer::Writer::new(
        sqlite_pool(1, busy_ms, max_pages)
            .acquire_timeout(wait)
            .connect_lazy_with(opts.clone()),
        wait,
    );
    // Two servers starting on a fresh file race twice. Switching the new file to
    // WAL needs it alone, and SQLite answers the loser SQLITE_BUSY at once,
    // without waiting out busy_timeout; and the loser of the migration sees the
    // winner's tables. Both succeed on a later attempt.
    // A new file is this user's only; SQLite would make it 0644 (less the umask).
    file::create_private(path);
    let mut attempt = 0;
    loop {
        let raced = match prepare_file(&opts, busy_ms).await {
            Err(e) => opening(path, &pool, sqlx::migrate::MigrateError::Execute(e)).await,
            Ok(()) => match MIGRATOR.run(&pool).await {
                Ok(()) => break,
                Err(e) => opening(path, &pool, e).await,
            },
        };
        if attempt == 6 || !matches!(raced, Error::Busy | Error::Raced(_)) {
            pool.close().await;
            writer.close().await;
            return Err(raced);
        }
        attempt += 1;
        tracing::debug!(error = %raced, attempt, "opening the file raced, retrying");
        tokio::time::sleep(Duration::from_millis(50 * attempt)).await;
    }
    file::warn_if_shared(path);
    Ok(Store {
        pool,
        writer: Some(writer),
        backend: Backend::Sqlite,
    })
}

/// The options of a pool of at most `n` connections on a SQLite file, each set up
/// as every connection of a store is.
fn sqlite_pool(n: u32, busy_ms: u128, max_pages: Option<u64>) -> AnyPoolOptions {
    AnyPoolOptions::new()
        .max_connections(n)
        .min_connections(0)
        // A connection taken from the pool is used at once; a broken one fails
        // that call, which is answered, rather than costing every call a ping.
        .test_before_acquire(false)
        .after_release(|c, _| Box::pin(reusable(c, Backend::Sqlite)))
        .after_connect(move |c, _| {
            Box::pin(async move {
                c.execute(sqlx::AssertSqlSafe(format!(
                    "PRAGMA busy_timeout = {busy_ms}"
                )))
                .await?;
                // WAL (set on the file by `prepare_file`) with NORMAL: a killed
                // process loses nothing it acknowledged; only a power cut can drop
                // the last commits.
                c.execute("PRAGMA synchronous = NORMAL").await?;
                c.execute("PRAGMA foreign_keys = ON").await?;
                if let Some(n) = max_pages {
                    c.execute(sqlx::AssertSqlSafe(format!("PRAGMA max_page_count = {n}")))
                        .await?;
                }
                Ok(())
            })
        })
}

/// `path` as the Any driver's URL names it: absolute, in its directory's canonical
/// form (a URL parser would fold `a/../b` itself, differently when `a` is a link),
/// and every byte but letters, digits and `/._-~` percent-encoded (`%` included,
/// which the driver decodes), with `mode=rwc` to create a missing file.
fn sqlite_url(path: &Path) -> String {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let full = match (std::fs::canonicalize(dir), path.file_name()) {
        (Ok(d), Some(f)) => d.join(f),
        // The directory is missing (opening fails and says so) or the path ends
        // in `..`: as given, made absolute.
        _ => std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf()),
    };
    let mut url = String::from("sqlite://");
    for &b in full.as_os_str().as_encoded_bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'.' | b'_' | b'-' | b'~' => {
                url.push(b as char)
            }
            _ => url.push_str(&format!("%{b:02X}")),
        }
    }
    url.push_str("?mode=rwc");
    url
}

/// Creates the file when missing and switches it to WAL (a setting the file keeps),
/// on a connection of its own, closed after. (Through the same driver as the pool:
/// sqlx's SQLite connection used directly is a second copy of its code to load.)
async fn prepare_file(
    opts: &AnyConnectOptions,
    busy_ms: u128,
) -> std::result::Result<(), sqlx::Error> {
    use sqlx::Connection;
    let mut c = opts.connect().await?;
    c.execute(sqlx::AssertSqlSafe(format!(
        "PRAGMA busy_timeout = {busy_ms}"
    )))
    .await?;
    c.execute("PRAGMA journal_mode = WAL").await?;
    c.close().await
}

async fn open_postgres(url: &str, o: &Options) -> Result<Store> {
    let shown = shown(url);
    pg_params::known_parameters(url).map_err(|why| {
        // Without its query: a parameter the driver does not know may be anything.
        let head = crate::redact::url(url.split_once('?').map_or(url, |(h, _)| h));
        Error::Open(format!("the database URL {head}?… {why}"))
    })?;
    let backend = Backend::Postgres {
        // At least 1 ms: PostgreSQL reads a lock_timeout of 0 as "wait forever".
        lock_ms: o.busy_timeout.as_millis().max(1),
    };
    let opts = AnyConnectOptions::from_str(url)
        .map_err(|e| Error::Open(format!("cannot read the database URL {shown}: {e}")))?;
    create_database(url, &shown).await?;
    let pool = AnyPoolOptions::new()
        .max_connections(o.connections.unwrap_or(16).max(1))
        .min_connections(0)
        .acquire_timeout(o.busy_timeout.max(Duration::from_secs(5)))
        .after_release(move |c, _| Box::pin(reusable(c, backend)))
        .connect_lazy_with(opts);
    // Servers starting together serialize here: sqlx's PostgreSQL migrator holds an
    // advisory lock while it applies migrations.
    if let Err(e) = PG_MIGRATOR.run(&pool).await {
        let err = pg_opening(&shown, &pool, e).await;
        pool.close().await;
        return Err(err);
    }
    warn_of_collation(&pool, &shown).await;
    // Writers share the pool: PostgreSQL keeps no cache per connection to lose.
    Ok(Store {
        writer: None,
        pool,
        backend,
    })
}

/// Whether a connection coming back to the pool may be lent again: only when no
/// transaction is open on it. A transaction that ended on an error (its BEGIN, a
/// statement, its COMMIT or its ROLLBACK failed, or it was dropped after one) can
/// leave a connection in a state nobody knows. SQLite rolls a whole transaction back
/// by itself on some errors (a full disk among them); the ROLLBACK sqlx then sends
/// for the dropped transaction fails, and sqlx goes on counting a transaction that
/// no longer exists, so every later BEGIN on that connection would fail. Such a
/// connection is closed instead (sqlx closes it when this answers `false`, and opens
/// a new one when the pool needs it). This hook sees every connection a [`Conn`] or a
/// [`Tx`] gives back, whichever way it ended.
async fn reusable(
    c: &mut AnyConnection,
    backend: Backend,
) -> std::result::Result<bool, sqlx::Error> {
    use sqlx::Connection;
    // Outside a transaction (a read, a committed write): nothing to wait for.
    if !c.is_in_transaction() {
        return Ok(true);
    }
    if backend == Backend::Sqlite {
        // The ROLLBACK of a dropped transaction is queued on the connection's worker
        // thread, which counts it once it ran; a ping, queued behind it, returns then.
        c.ping().await?;
    }
    // (On PostgreSQL, sqlx counts a dropped transaction's ROLLBACK when it queues it;
    // the pool's own ping after this hook sends it and sees whether the server is
    // still there.)
    let clean = !c.is_in_transaction();
    if !clean {
        tracing::warn!(
            "a database connection was left inside a transaction that failed; it is closed and \
             a new one will be opened"
        );
    }
    Ok(clean)
}

/// Says, once at start, when the database's character type is not a UTF-8 one:
/// full-text search then reads letters beyond ASCII as separators.
async fn warn_of_collation(pool: &AnyPool, shown: &str) {
    let ctype: Option<String> = sqlx::query_scalar(
        "SELECT datctype::text FROM pg_database WHERE datname = current_database()",
    )
    .fetch_optional(pool)
    .await
    .ok()
    .flatten();
    if let Some(c) = ctype.filter(|c| !c.to_ascii_lowercase().contains("utf")) {
        tracing::warn!(
            db = %shown,
            ctype = %c,
            "the database's LC_CTYPE is not UTF-8: full-text search will treat letters beyond \
             ASCII as separators; create it with LOCALE 'C.UTF-8' (see the README)"
        );
    }
}

/// Creates the database `url` names when it does not exist, so that `--db
/// postgres://host/cairn` is all a first start needs (given a role that may create
/// databases; otherwise the message says to create it). The database itself is
/// tried first: a role may connect to it and to nothing else.
async fn create_database(url: &str, shown: &str) -> Result<()> {
    use sqlx::Connection;
    match sqlx::AnyConnection::connect(url).await {
        Ok(c) => {
            let _ = c.close().await;
            return Ok(());
        }
        // 3D000: no such database; created below.
        Err(sqlx::Error::Database(db)) if db.code().as_deref() == Some("3D000") => {}
        Err(e) => {
            return Err(Error::Open(format!(
                "cannot reach the PostgreSQL server of {shown}: {e}; check the host, port, user \
                 and password in the URL"
            )))
        }
    }
    match create_utf8_database(url).await {
        Ok(()) => Ok(()),
        // Another server created it a moment ago.
        Err(sqlx::Error::Database(db))
            if matches!(db.code().as_deref(), Some("42P04") | Some("23505")) =>
        {
            Ok(())
        }
        Err(e) => Err(Error::Open(format!(
            "the database of {shown} does not exist and cannot be created ({e}); create it \
             (createdb, or CREATE DATABASE) or grant this role CREATEDB"
        ))),
    }
}

/// `CREATE DATABASE`, from the server's maintenance database, with a UTF-8 encoding
/// and the C.UTF-8 locale (bytewise order, Unicode letters) where the server has it,
/// else with the server's defaults.
async fn create_utf8_database(url: &str) -> std::result::Result<(), sqlx::Error> {
    use sqlx::postgres::{PgConnectOptions, PgConnection};
    use sqlx::Connection;
    let target = PgConnectOptions::from_str(url)?;
    let name = target
        .get_database()
        .ok_or_else(|| sqlx::Error::Configuration("the URL names no database".into()))?
        .replace('"', "\"\"");
    let mut c = PgConnection::connect_with(&target.clone().database("postgres")).await?;
    let utf8 =
        format!("CREATE DATABASE \"{name}\" TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C.UTF-8'");
    let made = match c.execute(sqlx::AssertSqlSafe(utf8)).await {
        // No such locale on this server (or a server too old for LOCALE).
        Err(sqlx::Error::Database(db))
            if matches!(
                db.code().as_deref(),
                Some("22023") | Some("42601") | Some("0A000")
            ) =>
        {
            c.execute(sqlx::AssertSqlSafe(format!("CREATE DATABASE \"{name}\"")))
                .await
                .map(|_| ())
        }
        other => other.map(|_| ()),
    };
    let _ = c.close().await;
    made
}

/// What a failed PostgreSQL migration means, for the operator.
async fn pg_opening(shown: &str, pool: &AnyPool, e: sqlx::migrate::MigrateError) -> Error {
    use sqlx::migrate::MigrateError;
    match e {
        MigrateError::VersionMissing(v) => newer(shown, pool, &PG_MIGRATOR, v, "database").await,
        other => Error::Open(format!("cannot migrate {shown}: {other}")),
    }
}

/// The message for a database whose schema has migration `v`, which `migrator`
/// (this Cairn's) does not know: a newer Cairn migrated it.
async fn newer(
    shown: &str,
    pool: &AnyPool,
    migrator: &sqlx::migrate::Migrator,
    v: i64,
    what: &str,
) -> Error {
    let known = migrator.iter().map(|m| m.version).max().unwrap_or(0);
    let newest: Option<i64> =
        sqlx::query_scalar("SELECT MAX(version) FROM _sqlx_migrations WHERE success")
            .fetch_one(pool)
            .await
            .ok()
            .flatten();
    Error::Open(format!(
        "{shown} was migrated by a newer Cairn: its schema is at version {} (it has migration {v}), \
         this cairn {} knows versions up to {known}; upgrade cairn, or point --db at another {what}",
        newest.unwrap_or(v),
        env!("CARGO_PKG_VERSION"),
    ))
}

/// What a failed open means, for the operator: the sqlx error of the migration
/// (which opens the first connection) turned into a sentence naming the path.
async fn opening(path: &Path, pool: &AnyPool, e: sqlx::migrate::MigrateError) -> Error {
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
            newer(&shown.to_string(), pool, &MIGRATOR, v, "file").await
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
                    file::why_unwritable(path)
                )),
                Error::CantOpen => Error::Open(format!(
                    "cannot open {shown}: {}",
                    file::why_unopenable(path)
                )),
                other => other,
            }
        }
        other => Error::Open(format!("cannot migrate {shown}: {other}")),
    }
}

/// A connection lent by the store, outside a transaction or holding one; it goes
/// back to the pool when dropped. Repositories take `&mut Conn`; a [`Tx`] derefs to
/// one.
pub struct Conn {
    held: Held,
    backend: Backend,
}

enum Held {
    Pooled(PoolConnection<Any>),
    Tx(sqlx::Transaction<'static, Any>),
    /// SQLite's writer connection, in a transaction or not (`writer`).
    Writer(writer::Lent),
}

impl Conn {
    /// The connection underneath.
    fn conn(&mut self) -> &mut AnyConnection {
        match &mut self.held {
            Held::Pooled(c) => c,
            Held::Tx(t) => t,
            Held::Writer(w) => w.conn(),
        }
    }

    /// The connection underneath, for the repositories of this module only: an
    /// executor that rewrites their SQL for PostgreSQL on its way (see `dialect`).
    fn db(&mut self) -> dialect::Db<'_> {
        let backend = self.backend;
        dialect::Db::new(self.conn(), backend)
    }

    /// Whether this connection is on PostgreSQL, for the statements written twice.
    fn pg(&self) -> bool {
        self.backend.pg()
    }

    /// Begins a write transaction on this connection (held outside a transaction),
    /// by the same rule as [`Store::write`].
    async fn begin_write(&mut self) -> Result<Nested<'_>> {
        let backend = self.backend;
        let mut tx = sqlx::Connection::begin_with(self.conn(), backend.write_begin()).await?;
        backend.take_write_lock(&mut tx).await?;
        Ok(Nested { tx, backend })
    }
}

/// A write transaction begun on a connection the caller already holds, for the
/// index catch-ups a read runs outside the caller's transaction. The same rule as
/// [`Store::write`]: one writer at a time.
pub struct Nested<'c> {
    tx: sqlx::Transaction<'c, Any>,
    backend: Backend,
}

impl Nested<'_> {
    fn db(&mut self) -> dialect::Db<'_> {
        dialect::Db::new(&mut self.tx, self.backend)
    }

    fn pg(&self) -> bool {
        self.backend.pg()
    }

    async fn commit(self) -> Result<()> {
        Ok(self.tx.commit().await?)
    }
}

/// A transaction. Dropped without [`Tx::commit`], it rolls back.
pub struct Tx(Conn);

impl Tx {
    pub async fn commit(self) -> Result<()> {
        match self.0.held {
            Held::Tx(t) => Ok(t.commit().await?),
            Held::Writer(w) => w.commit().await,
            Held::Pooled(_) => Ok(()),
        }
    }

    /// Rolls back now (dropping the transaction does it too, a moment later).
    /// Nothing of the transaction is kept even when the ROLLBACK itself fails: that
    /// happens when the transaction is gone already (SQLite rolled it back on the
    /// error the caller is handling) or the connection broke, and the pool then
    /// closes the connection (see `reusable`) rather than lend it again.
    pub async fn rollback(self) -> Result<()> {
        match self.0.held {
            Held::Tx(t) => {
                if let Err(e) = t.rollback().await {
                    tracing::debug!(error = %e, "a ROLLBACK failed; its connection is closed");
                }
                Ok(())
            }
            Held::Writer(w) => {
                if let Err(e) = w.rollback().await {
                    tracing::debug!(error = %e, "a ROLLBACK failed; its connection is closed");
                }
                Ok(())
            }
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

#[cfg(test)]
mod faults;

#[cfg(test)]
mod tests {
    use super::{shown, Options, Store, TestDir};

    #[tokio::test]
    async fn a_file_name_a_url_would_read_differently_opens_that_file() {
        let dir = TestDir::new("url");
        std::fs::create_dir_all(dir.0.join("sub")).unwrap();
        for name in ["a%41 b?#.db", "sub/../c.db"] {
            let store = Store::open(&dir.0.join(name), &Options::default())
                .await
                .unwrap();
            store.close().await;
        }
        assert!(dir.0.join("a%41 b?#.db").exists());
        assert!(!dir.0.join("aA b?#.db").exists());
        assert!(dir.0.join("c.db").exists());
    }

    #[test]
    fn a_url_is_shown_without_its_password() {
        assert_eq!(
            shown("postgres://u:pw@h/db?host=/s"),
            "postgres://u:***@h/db?host=/s"
        );
        assert_eq!(
            shown("postgres://u@h/db?sslmode=require&password=pw"),
            "postgres://u@h/db?sslmode=require&password=***"
        );
        assert_eq!(shown("/srv/cairn.db"), "/srv/cairn.db");
    }
}
