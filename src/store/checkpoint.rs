//! WAL checkpoints run beside the writes instead of inside them.
//!
//! By default SQLite checkpoints from inside the commit that takes the WAL past 1,000
//! pages, and with `synchronous=NORMAL` a checkpoint syncs the WAL and the database
//! file. So one commit in about two hundred waited tens of milliseconds for those
//! syncs on behalf of all of them: more than half of what a single-row insert cost on
//! average. Here every store connection reports its commits to [`committed`], which
//! wakes one task each time the WAL grows by [`FILL`] pages; the task checkpoints on a
//! connection of its own while the writes go on, and once the writes pause it makes
//! the last pass that lets the WAL start over. The syncs are SQLite's own, in the same
//! order, so what survives a crash or a power cut is unchanged.

use std::ffi::{c_char, c_int, c_void};
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::time::Duration;

use libsqlite3_sys as ffi;
use sqlx::sqlite::SqliteConnectOptions;
use tokio::sync::{Mutex, Notify};

use super::Conn;

/// WAL growth, in pages, after which a commit asks for a checkpoint pass
/// (SQLite's own automatic checkpoint uses the same figure).
const FILL: c_int = 1000;

/// WAL size past which the committing connection checkpoints itself, in RESTART
/// mode: writes have not paused long enough for the task's last pass (one process
/// writing without a break, or two taking turns). RESTART waits for the writer and
/// readers of the moment, copies everything and leaves the WAL to start over, so it
/// stays bounded whatever the other processes do. That commit waits for two syncs
/// (here 30 to 40 ms in all), once per ceiling's worth of writes: 32,768 pages of
/// 4 KiB, 128 MiB, is about 3,600 atom creates without a pause.
pub(super) const CEILING: c_int = 32 * 1024;

/// The WAL file's largest size, in bytes, kept when the WAL starts over: the ceiling's
/// pages (4 KiB, SQLite's default, which the store keeps), each with its 24-byte
/// frame header, and the 32-byte file header. A WAL that
/// two processes pushed past the ceiling is cut back to it.
pub const WAL_FILE_LIMIT: i64 = CEILING as i64 * (4096 + 24) + 32;

/// How long the writes must pause before the last pass, the one that lets the WAL
/// start over.
const QUIET: Duration = Duration::from_millis(20);

/// What the commit hook of every connection of one store shares with its task.
pub struct Checkpoints {
    wake: Notify,
    /// Commits seen by the hook: a pass that saw none begin while it ran has copied
    /// the whole WAL.
    commits: AtomicU64,
    /// How many FILLs the WAL held at the last commit.
    filled: AtomicI32,
    /// Whether the WAL held CEILING pages or more at the last commit.
    over: AtomicBool,
    /// The task's own connection, opened on its first pass; `close` takes it.
    conn: Mutex<Option<Conn>>,
    /// Set by `close`: no pass opens a connection again.
    closed: AtomicBool,
}

impl Checkpoints {
    /// Starts the checkpoint task for the database `opts` opens. The state lives for
    /// the rest of the process: connections hold a raw pointer to it and may outlive
    /// any owner we could give it (one small allocation per opened store).
    /// Outside a tokio runtime there is no task to run them: `None`, and the
    /// connections keep SQLite's own checkpoints.
    pub fn start(opts: SqliteConnectOptions) -> Option<&'static Checkpoints> {
        let rt = tokio::runtime::Handle::try_current().ok()?;
        let cp: &'static Checkpoints = Box::leak(Box::new(Checkpoints {
            wake: Notify::new(),
            commits: AtomicU64::new(0),
            filled: AtomicI32::new(0),
            over: AtomicBool::new(false),
            conn: Mutex::new(None),
            closed: AtomicBool::new(false),
        }));
        rt.spawn(async move {
            loop {
                cp.wake.notified().await;
                // One pass per fill while writes go on, each copying what the WAL
                // gained since the last; then, once the writes pause for QUIET, the
                // pass that copies the rest. A pass with no commit beside it has
                // copied the whole WAL, so the next commit rewinds it instead of
                // growing the file.
                loop {
                    let before = cp.commits.load(Ordering::Relaxed);
                    if !cp.pass(&opts).await {
                        break;
                    }
                    if cp.commits.load(Ordering::Relaxed) == before {
                        break;
                    }
                    loop {
                        let seen = cp.commits.load(Ordering::Relaxed);
                        tokio::select! {
                            _ = cp.wake.notified() => break,
                            _ = tokio::time::sleep(QUIET) => {
                                if cp.commits.load(Ordering::Relaxed) == seen {
                                    break;
                                }
                            }
                        }
                    }
                }
            }
        });
        Some(cp)
    }

    /// One PASSIVE checkpoint: it takes no lock a writer or reader waits on, and is a
    /// no-op while another process checkpoints. False if it could not run.
    async fn pass(&self, opts: &SqliteConnectOptions) -> bool {
        let mut conn = self.conn.lock().await;
        if self.closed.load(Ordering::Relaxed) {
            return false;
        }
        if conn.is_none() {
            match super::connect(opts, None).await {
                Ok(c) => *conn = Some(c),
                Err(e) => {
                    tracing::warn!(error = %e, "checkpoint connection not opened");
                    return false;
                }
            }
        }
        let Some(c) = conn.as_mut() else { return false };
        if let Err(e) = sqlx::query("PRAGMA wal_checkpoint(PASSIVE)")
            .execute(&mut *c)
            .await
        {
            tracing::debug!(error = %e, "checkpoint failed; the next fill retries");
            *conn = None;
            return false;
        }
        true
    }

    /// Closes the task's connection and keeps it closed: part of closing the store,
    /// so that SQLite, on the last connection's close, copies what is left of the WAL
    /// and removes the file.
    pub async fn close(&self) {
        let mut conn = self.conn.lock().await;
        self.closed.store(true, Ordering::Relaxed);
        if let Some(c) = conn.take() {
            if let Err(e) = sqlx::Connection::close(c).await {
                tracing::debug!(error = %e, "checkpoint connection not closed cleanly");
            }
        }
    }

    /// Whether the WAL was at its ceiling at the last commit, so the next commit must
    /// checkpoint inline.
    pub fn over_ceiling(&self) -> bool {
        self.over.load(Ordering::Relaxed)
    }

    /// Counts a commit that left `pages` in the WAL, waking the task once per FILL;
    /// true if the WAL is at its ceiling.
    pub(super) fn note(&self, pages: c_int) -> bool {
        self.commits.fetch_add(1, Ordering::Relaxed);
        let over = pages >= CEILING;
        self.over.store(over, Ordering::Relaxed);
        if over {
            return true;
        }
        if pages >= FILL {
            // Once per FILL pages: a commit adds only a few, so the quotient changes
            // on the commit that crosses the next multiple (a large one may skip one,
            // and the next crossing asks instead).
            let last = self.filled.swap(pages / FILL, Ordering::Relaxed);
            if last != pages / FILL {
                self.wake.notify_one();
            }
        } else {
            self.filled.store(0, Ordering::Relaxed);
        }
        false
    }

    /// The pointer [`committed`] receives as its first argument.
    pub fn as_hook_arg(&'static self) -> *mut c_void {
        self as *const Checkpoints as *mut c_void
    }
}

/// SQLite's WAL hook: called on the committing connection's thread after each commit,
/// with the number of pages now in the WAL. Replaces the automatic checkpoint.
///
/// # Safety
/// `arg` must come from [`Checkpoints::as_hook_arg`]; SQLite passes the connection and
/// schema name it was registered on.
pub unsafe extern "C" fn committed(
    arg: *mut c_void,
    db: *mut ffi::sqlite3,
    schema: *const c_char,
    pages: c_int,
) -> c_int {
    // SAFETY: `arg` points to a leaked, never freed `Checkpoints` (see `start`).
    let cp = unsafe { &*(arg as *const Checkpoints) };
    if cp.note(pages) {
        // SAFETY: SQLite's own automatic checkpoint calls this same function from
        // this same hook, with the connection and schema it was handed.
        unsafe {
            ffi::sqlite3_wal_checkpoint_v2(
                db,
                schema,
                ffi::SQLITE_CHECKPOINT_RESTART,
                std::ptr::null_mut(),
                std::ptr::null_mut(),
            );
        }
    }
    ffi::SQLITE_OK
}

/// The WAL hook of the direct connection (`store::direct`), which runs on the tool
/// call's own thread: it reports commits like [`committed`] but never checkpoints
/// inline. That connection writes nothing once the WAL is at its ceiling, leaving the
/// inline checkpoint to a connection that may wait.
///
/// # Safety
/// As for [`committed`].
pub unsafe extern "C" fn committed_beside(
    arg: *mut c_void,
    _db: *mut ffi::sqlite3,
    _schema: *const c_char,
    pages: c_int,
) -> c_int {
    // SAFETY: as in `committed`.
    let cp = unsafe { &*(arg as *const Checkpoints) };
    cp.note(pages);
    ffi::SQLITE_OK
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::Store;

    /// (frames in the WAL, frames of it already copied), without copying any.
    async fn wal(store: &Store) -> (i64, i64) {
        let mut c = store.read().await.unwrap();
        let (_, log, done): (i64, i64, i64) = sqlx::query_as("PRAGMA wal_checkpoint(NOOP)")
            .fetch_one(&mut *c)
            .await
            .unwrap();
        (log, done)
    }

    async fn write(store: &Store, n: usize) {
        for _ in 0..n {
            let mut c = store.read().await.unwrap();
            sqlx::query(
                "INSERT INTO projects (id, name, summary, version, created_at, updated_at) \
                 VALUES (?1, 'p', '', 1, 'x', 'x')",
            )
            .bind(crate::domain::id::new_id())
            .execute(&mut *c)
            .await
            .unwrap();
        }
    }

    #[tokio::test]
    async fn the_wal_is_copied_beside_the_writes_and_starts_over_after_them() {
        let dir = crate::store::TestDir::new("checkpoint");
        let store = Store::open(&dir.0.join("c.db")).await.unwrap();
        // Each insert commits a few pages: past FILL, well short of CEILING.
        let mut log = 0;
        for _ in 0..40 {
            write(&store, 50).await;
            log = wal(&store).await.0;
            if log > i64::from(FILL) + 200 {
                break;
            }
        }
        // SQLite's inline checkpoint would have rewound the WAL at FILL.
        assert!(
            log > i64::from(FILL) + 200 && log < i64::from(CEILING),
            "the WAL holds {log} frames"
        );
        // No commit waited for the copy: the task copies the whole WAL once the
        // writes pause.
        let mut copied = (0, 0);
        for _ in 0..500 {
            tokio::time::sleep(Duration::from_millis(10)).await;
            copied = wal(&store).await;
            if copied.1 == copied.0 {
                break;
            }
        }
        assert_eq!(
            copied.1, copied.0,
            "the WAL was not wholly copied: {copied:?}"
        );
        assert!(
            copied.0 >= log,
            "the WAL rewound inside a commit: {copied:?}"
        );
        // So the next commit starts the WAL over instead of growing the file.
        write(&store, 1).await;
        let after = wal(&store).await;
        assert!(after.0 < 20, "the WAL did not start over: {after:?}");
    }
}
