//! One connection driven on the calling thread, for writes that are a single
//! self-checking statement (the common creates).
//!
//! sqlx runs each connection on a worker thread of its own: every statement is a
//! message to that thread and an answer back, two thread wake-ups that cost about as
//! much as a one-row insert itself on a small machine. This connection skips them: it
//! is plain SQLite, called where the tool call runs. It never waits: its busy timeout
//! is zero, and any failure (another writer holds the lock, the WAL is at its
//! ceiling, any error) answers `None`, so the caller runs the same statement through
//! sqlx, which waits its turn and names what went wrong. A failed statement in
//! autocommit has written nothing, so the retry is safe.

use std::ffi::{c_char, c_int, CStr, CString};
use std::path::Path;
use std::ptr::{self, NonNull};

use libsqlite3_sys as ffi;

use super::checkpoint::{self, Checkpoints};
use super::vfs;

/// A value bound to a statement's parameter.
#[derive(Clone, Copy, Debug)]
pub enum Arg<'a> {
    Text(&'a str),
    Int(i64),
    Null,
}

impl<'a> From<&'a str> for Arg<'a> {
    fn from(s: &'a str) -> Self {
        Arg::Text(s)
    }
}

impl<'a> From<&'a String> for Arg<'a> {
    fn from(s: &'a String) -> Self {
        Arg::Text(s)
    }
}

impl<'a> From<Option<&'a str>> for Arg<'a> {
    fn from(s: Option<&'a str>) -> Self {
        s.map_or(Arg::Null, Arg::Text)
    }
}

impl From<i64> for Arg<'_> {
    fn from(i: i64) -> Self {
        Arg::Int(i)
    }
}

/// The connection and its prepared statements, keyed by their SQL text.
pub struct Direct {
    db: NonNull<ffi::sqlite3>,
    statements: Vec<(&'static str, NonNull<ffi::sqlite3_stmt>)>,
    checkpoints: Option<&'static Checkpoints>,
}

// SAFETY: the connection is opened in SQLite's multi-thread mode, where one connection
// may move between threads as long as two never use it at once; the store keeps it
// behind a mutex.
unsafe impl Send for Direct {}

impl Direct {
    /// Opens the existing, migrated database at `path` with the store's settings;
    /// `None` if it cannot (the store then uses sqlx alone).
    pub fn open(path: &Path, checkpoints: Option<&'static Checkpoints>) -> Option<Direct> {
        let name = CString::new(path.to_str()?).ok()?;
        let mut db = ptr::null_mut();
        // SAFETY: a valid C string and out-pointer; the VFS name is a static C string.
        let rc = unsafe {
            ffi::sqlite3_open_v2(
                name.as_ptr(),
                &mut db,
                ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_NOMUTEX,
                if vfs::register() {
                    vfs::NAME.as_ptr()
                } else {
                    ptr::null()
                },
            )
        };
        // Even a failed open hands back a handle to close.
        let d = Direct {
            db: NonNull::new(db)?,
            statements: Vec::new(),
            checkpoints,
        };
        if rc != ffi::SQLITE_OK {
            tracing::debug!(error = d.message(), "direct connection not opened");
            return None;
        }
        let settings = format!(
            "PRAGMA foreign_keys = ON; PRAGMA synchronous = NORMAL; PRAGMA journal_size_limit = {};",
            checkpoint::WAL_FILE_LIMIT
        );
        let settings = CString::new(settings).ok()?;
        // SAFETY: the handle is open and ours; a valid C string, no callback.
        let rc = unsafe {
            ffi::sqlite3_exec(
                d.db.as_ptr(),
                settings.as_ptr(),
                None,
                ptr::null_mut(),
                ptr::null_mut(),
            )
        };
        if rc != ffi::SQLITE_OK {
            tracing::debug!(error = d.message(), "direct connection settings refused");
            return None;
        }
        if let Some(cp) = checkpoints {
            // SAFETY: as in `store::connect`: the hook matches the callback type and
            // its argument is a `Checkpoints` that is never freed.
            unsafe {
                ffi::sqlite3_wal_hook(
                    d.db.as_ptr(),
                    Some(checkpoint::committed_beside),
                    cp.as_hook_arg(),
                );
            }
        }
        Some(d)
    }

    /// Runs one statement in autocommit and answers the rows it changed, or `None`
    /// when it did not complete: nothing was written, and the caller should run it
    /// through sqlx instead.
    pub fn execute(&mut self, sql: &'static str, args: &[Arg]) -> Option<u64> {
        // Past the WAL's ceiling a commit must checkpoint inline, waiting for readers:
        // a wait this connection does not make on the caller's thread.
        if self.checkpoints.is_some_and(|c| c.over_ceiling()) {
            return None;
        }
        let stmt = self.statement(sql)?.as_ptr();
        // SAFETY: `stmt` is a live statement of this connection, used by this thread
        // alone. Text is bound without a copy (SQLITE_STATIC); the bindings are
        // cleared before returning, while every `&str` in `args` is still alive.
        unsafe {
            if ffi::sqlite3_bind_parameter_count(stmt) as usize != args.len() {
                tracing::debug!(
                    sql,
                    given = args.len(),
                    "direct statement: wrong argument count"
                );
                return None;
            }
            let mut rc = ffi::SQLITE_OK;
            for (i, a) in args.iter().enumerate() {
                let at = i as c_int + 1;
                rc = match *a {
                    Arg::Text(s) => match c_int::try_from(s.len()) {
                        Ok(len) => ffi::sqlite3_bind_text(
                            stmt,
                            at,
                            s.as_ptr() as *const c_char,
                            len,
                            ffi::SQLITE_STATIC(),
                        ),
                        Err(_) => ffi::SQLITE_TOOBIG,
                    },
                    Arg::Int(v) => ffi::sqlite3_bind_int64(stmt, at, v),
                    Arg::Null => ffi::sqlite3_bind_null(stmt, at),
                };
                if rc != ffi::SQLITE_OK {
                    break;
                }
            }
            if rc == ffi::SQLITE_OK {
                rc = ffi::sqlite3_step(stmt);
            }
            let changed = ffi::sqlite3_changes64(self.db.as_ptr());
            ffi::sqlite3_reset(stmt);
            ffi::sqlite3_clear_bindings(stmt);
            if rc == ffi::SQLITE_DONE {
                return u64::try_from(changed).ok();
            }
            // Busy is the expected refusal (another writer); anything else is for the
            // sqlx path to meet again and report.
            if rc & 0xff != ffi::SQLITE_BUSY {
                tracing::debug!(code = rc, error = self.message(), "direct statement failed");
            }
            None
        }
    }

    /// The prepared statement for `sql`, prepared on first use and kept (keyed by the
    /// text's address: the same text at two addresses is prepared twice, harmlessly).
    fn statement(&mut self, sql: &'static str) -> Option<NonNull<ffi::sqlite3_stmt>> {
        if let Some((_, s)) = self.statements.iter().find(|(q, _)| ptr::eq(*q, sql)) {
            return Some(*s);
        }
        let len = c_int::try_from(sql.len()).ok()?;
        let mut stmt = ptr::null_mut();
        // SAFETY: the handle is open; `sql` is valid UTF-8 of `len` bytes that
        // SQLite reads only during the call.
        let rc = unsafe {
            ffi::sqlite3_prepare_v3(
                self.db.as_ptr(),
                sql.as_ptr() as *const c_char,
                len,
                ffi::SQLITE_PREPARE_PERSISTENT,
                &mut stmt,
                ptr::null_mut(),
            )
        };
        if rc != ffi::SQLITE_OK {
            tracing::debug!(error = self.message(), "direct statement not prepared");
            return None;
        }
        let stmt = NonNull::new(stmt)?;
        // A statement that returns rows (`RETURNING`) has written by its first step;
        // failing it over to sqlx then would write twice. None is run here.
        // SAFETY: a live statement, finalized once if refused.
        if unsafe { ffi::sqlite3_column_count(stmt.as_ptr()) } != 0 {
            unsafe { ffi::sqlite3_finalize(stmt.as_ptr()) };
            tracing::debug!(sql, "direct statements must not return rows");
            return None;
        }
        self.statements.push((sql, stmt));
        Some(stmt)
    }

    /// SQLite's message for the connection's last error.
    fn message(&self) -> String {
        // SAFETY: the handle is live; SQLite returns a NUL-terminated string it owns,
        // copied out at once.
        unsafe { CStr::from_ptr(ffi::sqlite3_errmsg(self.db.as_ptr())) }
            .to_string_lossy()
            .into_owned()
    }
}

impl Drop for Direct {
    fn drop(&mut self) {
        // SAFETY: each statement is finalized once, then the handle is closed once
        // (with no statement left, so the close completes); nothing uses them after.
        unsafe {
            for (_, s) in self.statements.drain(..) {
                ffi::sqlite3_finalize(s.as_ptr());
            }
            ffi::sqlite3_close(self.db.as_ptr());
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::store::{Arg, Store, TestDir};

    const INSERT: &str =
        "INSERT INTO projects (id, name, summary, version, created_at, updated_at) \
                          VALUES (?1, ?2, '', 1, 'x', 'x')";

    async fn count(store: &Store) -> i64 {
        let mut c = store.read().await.unwrap();
        sqlx::query_scalar("SELECT count(*) FROM projects")
            .fetch_one(&mut *c)
            .await
            .unwrap()
    }

    /// While another connection holds the write lock the direct connection declines
    /// at once, writing nothing, and `write_one` waits for the lock instead.
    #[tokio::test]
    async fn a_held_write_lock_sends_the_write_the_waiting_way() {
        let dir = TestDir::new("direct");
        let store = Store::open(&dir.0.join("d.db")).await.unwrap();
        let id = crate::domain::id::new_id();
        assert_eq!(
            store.try_direct(INSERT, &[Arg::Text(&id), Arg::Text("alone")]),
            Some(1)
        );

        let tx = store.write().await.unwrap();
        let id2 = crate::domain::id::new_id();
        let args = [Arg::Text(&id2), Arg::Text("held")];
        assert_eq!(store.try_direct(INSERT, &args), None);
        let waiting = {
            let store = store.clone();
            let id2 = id2.clone();
            tokio::spawn(async move {
                store
                    .write_one(INSERT, &[Arg::Text(&id2), Arg::Text("held")])
                    .await
            })
        };
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        assert!(
            !waiting.is_finished(),
            "the write did not wait for the lock"
        );
        tx.commit().await.unwrap();
        assert_eq!(waiting.await.unwrap().unwrap(), 1);
        assert_eq!(count(&store).await, 2);
        store.close().await;
    }

    /// A statement that fails (here a duplicate key) answers `None` and leaves the
    /// connection usable; `write_one` then reports the failure as sqlx meets it.
    #[tokio::test]
    async fn a_failed_statement_is_left_to_the_sqlx_path() {
        let dir = TestDir::new("direct-fail");
        let store = Store::open(&dir.0.join("d.db")).await.unwrap();
        let id = crate::domain::id::new_id();
        let args = [Arg::Text(&id), Arg::Text("once")];
        assert_eq!(store.try_direct(INSERT, &args), Some(1));
        assert_eq!(store.try_direct(INSERT, &args), None);
        assert!(store.write_one(INSERT, &args).await.is_err());
        let other = crate::domain::id::new_id();
        assert_eq!(
            store.try_direct(INSERT, &[Arg::Text(&other), Arg::Text("next")]),
            Some(1)
        );
        // A wrong number of arguments is refused before anything runs, and so is a
        // statement returning rows: sqlx then writes it, once.
        assert_eq!(store.try_direct(INSERT, &[Arg::Text(&other)]), None);
        const RETURNING: &str =
            "INSERT INTO projects (id, name, summary, version, created_at, updated_at) \
                                 VALUES (?1, ?2, '', 1, 'x', 'x') RETURNING id";
        let third = crate::domain::id::new_id();
        let args = [Arg::Text(&third), Arg::Text("returning")];
        assert_eq!(store.try_direct(RETURNING, &args), None);
        assert_eq!(count(&store).await, 2);
        assert_eq!(store.write_one(RETURNING, &args).await.unwrap(), 1);
        assert_eq!(count(&store).await, 3);
        store.close().await;
    }

    /// Once a commit leaves the WAL at its ceiling, the next write must checkpoint
    /// inline, which may wait for readers: the direct connection leaves it to sqlx,
    /// whose commit then reports the WAL's size afresh.
    #[tokio::test]
    async fn a_wal_at_its_ceiling_sends_the_write_the_waiting_way() {
        let dir = TestDir::new("direct-ceiling");
        let store = Store::open(&dir.0.join("d.db")).await.unwrap();
        let cp = store.checkpoints.expect("a runtime, so a checkpoint task");
        cp.note(crate::store::checkpoint::CEILING);
        let id = crate::domain::id::new_id();
        let args = [Arg::Text(&id), Arg::Text("over")];
        assert_eq!(store.try_direct(INSERT, &args), None);
        assert_eq!(store.write_one(INSERT, &args).await.unwrap(), 1);
        assert!(!cp.over_ceiling());
        let next = crate::domain::id::new_id();
        assert_eq!(
            store.try_direct(INSERT, &[Arg::Text(&next), Arg::Text("under")]),
            Some(1)
        );
        store.close().await;
    }
}
