//! The VFS the store opens its files with: SQLite's own, except that the frames a
//! commit appends to the WAL reach the file in one write instead of two per page.
//!
//! SQLite writes each WAL frame as two calls, its 24-byte header and then the page, so
//! an atom create (eight pages) made sixteen `pwrite`s, and the kernel's per-call work
//! (entering the call, locking the inode, preparing each page of the page cache twice,
//! as a frame straddles two) was half of what SQLite spent on the commit. Here a WAL
//! file collects consecutive writes in a buffer and hands them on at once:
//!
//! - when the commit frame's page arrives (its header carries the database size,
//!   which only a commit frame's does). Until that commit is published, later writes
//!   (SQLite rewriting checksums of frames it overwrote in place) go straight through;
//! - when the buffer reaches [`LIMIT`] (a large transaction spilling its cache);
//! - before any other call on the WAL file (a read, a sync, a size, a close);
//! - before every shared-memory lock change and barrier on its database file. SQLite
//!   publishes a commit by writing the WAL index header around a barrier, and ends a
//!   write transaction, committed or rolled back, by releasing the write lock: so
//!   nothing is left in a buffer once another connection, in this process or another,
//!   may read the frames or write over them.
//!
//! Handing the writes on is always safe (it only completes writes SQLite already
//! made, in their order); holding them is what the rules above bound.
//!
//! A WAL file also has its disk space reserved ahead of its writes, [`RESERVE`] at a
//! time (`fallocate` keeping the file's size, on Linux). Space the file system had to
//! find at the first write of each page (delayed allocation) made those writes wait
//! for the checkpoint's syncs of the same file, which allocate it: a few milliseconds,
//! about once per thousand pages. A reservation changes no byte and no size SQLite or
//! another process sees; where it fails, writes go on as before.
//!
//! Every other file, and every other operation, is passed through.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::mem::size_of;
use std::ptr;

use libsqlite3_sys as ffi;

/// The name connections open the store's files with.
pub const NAME: &CStr = c"cairn";

/// The buffer is written out when it holds this much, so a large transaction does
/// not gather its whole WAL in memory.
const LIMIT: usize = 1 << 20;

/// The largest piece handed to the unix VFS in one write: it handles one write of up
/// to 128 KiB (it masks a larger count to its low 17 bits).
const CHUNK: usize = 64 << 10;

/// How much WAL space is reserved at a time, in bytes: about 230 atom creates.
const RESERVE: i64 = 8 << 20;

/// A WAL frame header's size (SQLite's `WAL_FRAME_HDRSIZE`).
const FRAME_HEADER: c_int = 24;

/// Registers the VFS (once per process); false if SQLite has no default VFS to
/// build it on, and connections then use SQLite's own.
pub fn register() -> bool {
    static REGISTERED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *REGISTERED.get_or_init(|| {
        // SAFETY: asking SQLite for its default VFS, which lives as long as the
        // process; the copy made from it is leaked, so it lives as long too, as a
        // registered VFS must. The default VFS's own functions, copied with it,
        // read nothing of the VFS object but `pAppData`, which only `xOpen` uses,
        // and ours calls it with the default VFS.
        unsafe {
            let real = ffi::sqlite3_vfs_find(ptr::null());
            if real.is_null() {
                return false;
            }
            let mut vfs = *real;
            vfs.szOsFile = (size_of::<File>() + (*real).szOsFile as usize) as c_int;
            vfs.zName = NAME.as_ptr();
            vfs.pNext = ptr::null_mut();
            vfs.pAppData = real as *mut c_void;
            vfs.xOpen = Some(open);
            let vfs = Box::leak(Box::new(vfs));
            ffi::sqlite3_vfs_register(vfs, 0) == ffi::SQLITE_OK
        }
    })
}

/// The file object SQLite allocates (`szOsFile` bytes): ours first, the default VFS's
/// right after it.
#[repr(C)]
struct File {
    base: ffi::sqlite3_file,
    real: *mut ffi::sqlite3_file,
    /// Only a WAL file collects its writes.
    wal: bool,
    /// A database file's open WAL file, or a WAL file's database file: the two of one
    /// connection, linked so the database file's shared-memory calls flush the WAL.
    peer: *mut File,
    /// Consecutive writes not yet made, and the file offset of their first byte.
    pending: Vec<u8>,
    start: i64,
    /// The last write was a commit frame's header: its page ends the commit.
    commit: bool,
    /// The commit's frames are out and it is not yet published: writes go straight
    /// through.
    through: bool,
    /// A WAL file's own descriptor for reserving its space; `None` for other files,
    /// and once a reservation failed.
    space: Option<std::fs::File>,
    /// The WAL file's bytes from 0 up to this offset have space reserved (as far as
    /// this connection knows: a truncation by another process makes writes find
    /// their space again as they did without reservations).
    reserved: i64,
}

unsafe extern "C" fn open(
    vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    // SAFETY: SQLite hands a block of `szOsFile` bytes, aligned for any of its
    // objects: a `File` and then the default VFS's file object fit in it. The
    // default VFS's `xOpen` is called with that VFS, as it expects. A WAL file's
    // name is the one `sqlite3_database_file_object` takes, and the database file it
    // answers is open for as long as its WAL file is.
    unsafe {
        let real_vfs = (*vfs).pAppData as *mut ffi::sqlite3_vfs;
        let f = file as *mut File;
        let real = (file as *mut u8).add(size_of::<File>()) as *mut ffi::sqlite3_file;
        let Some(real_open) = (*real_vfs).xOpen else {
            (*file).pMethods = ptr::null();
            return ffi::SQLITE_ERROR;
        };
        let rc = real_open(real_vfs, name, real, flags, out_flags);
        if rc != ffi::SQLITE_OK || (*real).pMethods.is_null() {
            // SQLite calls no method, not even xClose, on a file whose open failed.
            (*file).pMethods = ptr::null();
            return if rc == ffi::SQLITE_OK {
                ffi::SQLITE_ERROR
            } else {
                rc
            };
        }
        let wal = flags & ffi::SQLITE_OPEN_WAL != 0;
        ptr::write(
            f,
            File {
                base: ffi::sqlite3_file {
                    pMethods: methods((*(*real).pMethods).iVersion),
                },
                real,
                wal,
                peer: ptr::null_mut(),
                pending: Vec::new(),
                start: 0,
                commit: false,
                through: false,
                space: None,
                reserved: 0,
            },
        );
        if wal {
            let db = ffi::sqlite3_database_file_object(name);
            if !db.is_null() && is_ours((*db).pMethods) {
                let db = db as *mut File;
                (*db).peer = f;
                (*f).peer = db;
                (*f).space = reservable(CStr::from_ptr(name));
            } else {
                // Without its database file's calls there is no safe moment to hold
                // writes back: every write goes straight through.
                (*f).wal = false;
            }
        }
        ffi::SQLITE_OK
    }
}

/// The `File` SQLite passes to a method, and the default VFS's file inside it.
///
/// # Safety
/// `file` must have been opened by [`open`] and not closed.
unsafe fn parts<'a>(file: *mut ffi::sqlite3_file) -> (&'a mut File, *mut ffi::sqlite3_file) {
    // SAFETY: per the contract, `file` is a live `File`.
    let f = unsafe { &mut *(file as *mut File) };
    let real = f.real;
    (f, real)
}

/// The default VFS's method `$m` of the file `real`.
macro_rules! real {
    ($real:expr, $m:ident) => {
        (*(*$real).pMethods).$m
    };
}

impl File {
    /// Writes out what the buffer holds.
    unsafe fn flush(&mut self) -> c_int {
        if self.pending.is_empty() {
            return ffi::SQLITE_OK;
        }
        self.commit = false;
        self.reserve(self.start + self.pending.len() as i64);
        let mut rc = ffi::SQLITE_OK;
        let mut at = self.start;
        for piece in self.pending.chunks(CHUNK) {
            // SAFETY: `real` is the open file behind this one; `piece` is at most
            // CHUNK bytes.
            rc = unsafe {
                match real!(self.real, xWrite) {
                    Some(w) => w(
                        self.real,
                        piece.as_ptr() as *const c_void,
                        piece.len() as c_int,
                        at,
                    ),
                    None => ffi::SQLITE_IOERR_WRITE,
                }
            };
            if rc != ffi::SQLITE_OK {
                break;
            }
            at += piece.len() as i64;
        }
        // Cleared even on failure: SQLite abandons the transaction, and these bytes
        // must not reach the file later.
        self.pending.clear();
        if self.pending.capacity() > LIMIT {
            self.pending.shrink_to(4 * CHUNK);
        }
        rc
    }

    /// Reserves the WAL file's space up to `end` and on to the next multiple of
    /// RESERVE, unless already done.
    fn reserve(&mut self, end: i64) {
        if end <= self.reserved {
            return;
        }
        let Some(space) = &self.space else { return };
        let to = (end + RESERVE - 1) / RESERVE * RESERVE;
        if reserve_space(space, self.reserved, to - self.reserved) {
            self.reserved = to;
        } else {
            self.space = None;
        }
    }

    /// For a database file: writes out its WAL file's buffer and ends the WAL's
    /// straight-through stretch; called before any shared-memory lock change or
    /// barrier, the points where other connections may look at the WAL.
    unsafe fn flush_peer(&mut self) -> c_int {
        if self.wal || self.peer.is_null() {
            return ffi::SQLITE_OK;
        }
        // SAFETY: a database file's peer is its open WAL file (unlinked when either
        // closes), used on this connection's thread like this file.
        let w = unsafe { &mut *self.peer };
        w.through = false;
        // SAFETY: as above.
        unsafe { w.flush() }
    }
}

unsafe extern "C" fn write(
    file: *mut ffi::sqlite3_file,
    data: *const c_void,
    amount: c_int,
    offset: i64,
) -> c_int {
    // SAFETY: SQLite calls methods on open files only, with `amount` readable bytes
    // at `data`.
    unsafe {
        let (f, real) = parts(file);
        if !f.wal || f.through {
            if f.wal {
                f.reserve(offset + i64::from(amount));
            }
            return match real!(real, xWrite) {
                Some(w) => w(real, data, amount, offset),
                None => ffi::SQLITE_IOERR_WRITE,
            };
        }
        // A write that does not continue the buffer (SQLite rewriting a frame of the
        // transaction in place) goes after what the buffer holds.
        if !f.pending.is_empty() && offset != f.start + f.pending.len() as i64 {
            let rc = f.flush();
            if rc != ffi::SQLITE_OK {
                return rc;
            }
        }
        if f.pending.is_empty() {
            f.start = offset;
        }
        let bytes = std::slice::from_raw_parts(data as *const u8, amount.max(0) as usize);
        f.pending.extend_from_slice(bytes);
        if amount == FRAME_HEADER {
            // Bytes 4..8 of a frame header: the database size after a commit, zero in
            // every other frame.
            f.commit = bytes[4..8] != [0; 4];
            return ffi::SQLITE_OK;
        }
        if f.commit {
            f.through = true;
            return f.flush();
        }
        if f.pending.len() >= LIMIT {
            return f.flush();
        }
        ffi::SQLITE_OK
    }
}

/// Generates a method that writes out the file's buffer, then passes the call
/// through.
macro_rules! after_flush {
    ($name:ident, $m:ident, ($($arg:ident: $ty:ty),*), $missing:expr) => {
        unsafe extern "C" fn $name(file: *mut ffi::sqlite3_file $(, $arg: $ty)*) -> c_int {
            // SAFETY: SQLite calls methods on open files only; the arguments are
            // passed through as it gave them.
            unsafe {
                let (f, real) = parts(file);
                let rc = f.flush();
                if rc != ffi::SQLITE_OK {
                    return rc;
                }
                match real!(real, $m) {
                    Some(m) => m(real $(, $arg)*),
                    None => $missing,
                }
            }
        }
    };
}

after_flush!(read, xRead, (buf: *mut c_void, amount: c_int, offset: i64), ffi::SQLITE_IOERR_READ);
after_flush!(truncate_file, xTruncate, (size: i64), ffi::SQLITE_IOERR_TRUNCATE);
after_flush!(sync, xSync, (flags: c_int), ffi::SQLITE_IOERR_FSYNC);
after_flush!(file_size, xFileSize, (size: *mut i64), ffi::SQLITE_IOERR_FSTAT);
after_flush!(lock, xLock, (level: c_int), ffi::SQLITE_IOERR_LOCK);
after_flush!(unlock, xUnlock, (level: c_int), ffi::SQLITE_IOERR_UNLOCK);
after_flush!(check_reserved, xCheckReservedLock, (out: *mut c_int), ffi::SQLITE_IOERR_CHECKRESERVEDLOCK);
after_flush!(file_control, xFileControl, (op: c_int, arg: *mut c_void), ffi::SQLITE_NOTFOUND);
after_flush!(shm_map, xShmMap, (page: c_int, size: c_int, extend: c_int, out: *mut *mut c_void), ffi::SQLITE_IOERR_SHMMAP);
after_flush!(shm_unmap, xShmUnmap, (delete: c_int), ffi::SQLITE_OK);
after_flush!(unfetch, xUnfetch, (offset: i64, page: *mut c_void), ffi::SQLITE_OK);

/// A truncation frees the reserved space past the new size with the rest.
unsafe extern "C" fn truncate(file: *mut ffi::sqlite3_file, size: i64) -> c_int {
    // SAFETY: as for the methods above.
    unsafe {
        let rc = truncate_file(file, size);
        let (f, _) = parts(file);
        f.reserved = f.reserved.min(size);
        rc
    }
}

/// A second descriptor on the WAL file `name`, for reserving its space (where
/// `reserve_space` cannot, its first refusal drops it). Closing it (with the `File`)
/// releases no lock: closing any descriptor of a file drops the process's POSIX locks
/// on it, but SQLite takes none on a WAL file, only on the database and shared-memory
/// files.
fn reservable(name: &CStr) -> Option<std::fs::File> {
    use std::os::unix::ffi::OsStrExt;
    let path = std::ffi::OsStr::from_bytes(name.to_bytes());
    std::fs::OpenOptions::new().write(true).open(path).ok()
}

/// Allocates `len` bytes of `file` from `offset` without changing its size or
/// content; false if the file system would not.
#[cfg(target_os = "linux")]
fn reserve_space(file: &std::fs::File, offset: i64, len: i64) -> bool {
    use std::os::fd::AsRawFd;
    // SAFETY: an open descriptor; fallocate reads nothing from our memory.
    unsafe { libc::fallocate(file.as_raw_fd(), libc::FALLOC_FL_KEEP_SIZE, offset, len) == 0 }
}

#[cfg(not(target_os = "linux"))]
fn reserve_space(_: &std::fs::File, _: i64, _: i64) -> bool {
    false
}

unsafe extern "C" fn shm_lock(
    file: *mut ffi::sqlite3_file,
    offset: c_int,
    n: c_int,
    flags: c_int,
) -> c_int {
    // SAFETY: as for the methods above.
    unsafe {
        let (f, real) = parts(file);
        let rc = f.flush_peer();
        // A failed write fails a lock being taken; a lock being released (the end of
        // a transaction, whose frames are abandoned if it did not commit) is released
        // all the same.
        if rc != ffi::SQLITE_OK && flags & ffi::SQLITE_SHM_LOCK != 0 {
            return rc;
        }
        match real!(real, xShmLock) {
            Some(m) => m(real, offset, n, flags),
            None => ffi::SQLITE_IOERR_SHMLOCK,
        }
    }
}

unsafe extern "C" fn shm_barrier(file: *mut ffi::sqlite3_file) {
    // SAFETY: as for the methods above.
    unsafe {
        let (f, real) = parts(file);
        // The buffer is empty here in practice (a commit's frames are written when
        // its last page arrives, and what follows goes straight through); this call
        // cannot report a failure, so it is logged.
        let rc = f.flush_peer();
        if rc != ffi::SQLITE_OK {
            tracing::error!(code = rc, "a WAL write failed at a shared-memory barrier");
        }
        if let Some(m) = real!(real, xShmBarrier) {
            m(real);
        }
    }
}

unsafe extern "C" fn fetch(
    file: *mut ffi::sqlite3_file,
    offset: i64,
    amount: c_int,
    out: *mut *mut c_void,
) -> c_int {
    // SAFETY: as for the methods above; without a real `xFetch` the answer is "no
    // mapping", which SQLite handles by reading.
    unsafe {
        let (f, real) = parts(file);
        let rc = f.flush();
        if rc != ffi::SQLITE_OK {
            return rc;
        }
        match real!(real, xFetch) {
            Some(m) => m(real, offset, amount, out),
            None => {
                *out = ptr::null_mut();
                ffi::SQLITE_OK
            }
        }
    }
}

unsafe extern "C" fn sector_size(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: as above.
    unsafe {
        let (_, real) = parts(file);
        real!(real, xSectorSize).map_or(4096, |m| m(real))
    }
}

unsafe extern "C" fn device_characteristics(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: as above.
    unsafe {
        let (_, real) = parts(file);
        real!(real, xDeviceCharacteristics).map_or(0, |m| m(real))
    }
}

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: SQLite closes an open file once and uses it no more: the link from its
    // peer is cut, and the `File` dropped after the default VFS's file is closed.
    unsafe {
        let f = file as *mut File;
        let flushed = (*f).flush();
        if !(*f).peer.is_null() {
            (*(*f).peer).peer = ptr::null_mut();
        }
        let real = (*f).real;
        let rc = real!(real, xClose).map_or(ffi::SQLITE_OK, |m| m(real));
        ptr::drop_in_place(f);
        if flushed != ffi::SQLITE_OK {
            flushed
        } else {
            rc
        }
    }
}

/// This VFS's methods at each version of the interface: a file answers the version of
/// the file it wraps, so SQLite asks it for no more than that file can do.
static METHODS: [ffi::sqlite3_io_methods; 3] = [with_version(1), with_version(2), with_version(3)];

const fn with_version(v: c_int) -> ffi::sqlite3_io_methods {
    ffi::sqlite3_io_methods {
        iVersion: v,
        xClose: Some(close),
        xRead: Some(read),
        xWrite: Some(write),
        xTruncate: Some(truncate),
        xSync: Some(sync),
        xFileSize: Some(file_size),
        xLock: Some(lock),
        xUnlock: Some(unlock),
        xCheckReservedLock: Some(check_reserved),
        xFileControl: Some(file_control),
        xSectorSize: Some(sector_size),
        xDeviceCharacteristics: Some(device_characteristics),
        xShmMap: Some(shm_map),
        xShmLock: Some(shm_lock),
        xShmBarrier: Some(shm_barrier),
        xShmUnmap: Some(shm_unmap),
        xFetch: Some(fetch),
        xUnfetch: Some(unfetch),
    }
}

fn methods(version: c_int) -> &'static ffi::sqlite3_io_methods {
    &METHODS[(version.clamp(1, 3) - 1) as usize]
}

fn is_ours(m: *const ffi::sqlite3_io_methods) -> bool {
    METHODS.iter().any(|x| ptr::eq(x, m))
}

#[cfg(test)]
mod tests {
    use std::ffi::{CStr, CString};
    use std::path::Path;

    use sqlx::sqlite::SqliteConnectOptions;
    use sqlx::ConnectOptions;

    use super::*;
    use crate::store::{Arg, Store, TestDir};

    /// A bare connection, on this VFS or SQLite's own, for driving SQLite through the
    /// moments that matter (a spill, a rollback, a rewrite) one statement at a time.
    struct Raw(*mut ffi::sqlite3);

    impl Raw {
        fn open(path: &Path, ours: bool) -> Raw {
            assert!(register());
            let name = CString::new(path.to_str().unwrap()).unwrap();
            let mut db = ptr::null_mut();
            // SAFETY: valid C strings and out-pointer.
            let rc = unsafe {
                ffi::sqlite3_open_v2(
                    name.as_ptr(),
                    &mut db,
                    ffi::SQLITE_OPEN_READWRITE | ffi::SQLITE_OPEN_CREATE,
                    if ours { NAME.as_ptr() } else { ptr::null() },
                )
            };
            assert_eq!(rc, ffi::SQLITE_OK);
            let c = Raw(db);
            c.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = NORMAL; PRAGMA busy_timeout = 5000; PRAGMA wal_autocheckpoint = 0");
            c
        }

        fn exec(&self, sql: &str) {
            let sql = CString::new(sql).unwrap();
            // SAFETY: an open handle and a valid C string.
            let rc = unsafe {
                ffi::sqlite3_exec(self.0, sql.as_ptr(), None, ptr::null_mut(), ptr::null_mut())
            };
            // SAFETY: the handle is open; the message is copied at once.
            let msg = unsafe { CStr::from_ptr(ffi::sqlite3_errmsg(self.0)) };
            assert_eq!(rc, ffi::SQLITE_OK, "{sql:?}: {msg:?}");
        }

        /// The first column of the first row, as text.
        fn text(&self, sql: &str) -> String {
            let sql = CString::new(sql).unwrap();
            let mut st = ptr::null_mut();
            // SAFETY: an open handle, a valid C string; the statement is finalized
            // before returning and its text copied out before that.
            unsafe {
                assert_eq!(
                    ffi::sqlite3_prepare_v2(self.0, sql.as_ptr(), -1, &mut st, ptr::null_mut()),
                    ffi::SQLITE_OK
                );
                let rc = ffi::sqlite3_step(st);
                let out = if rc == ffi::SQLITE_ROW {
                    CStr::from_ptr(ffi::sqlite3_column_text(st, 0) as *const c_char)
                        .to_string_lossy()
                        .into_owned()
                } else {
                    format!("step failed: {rc}")
                };
                ffi::sqlite3_finalize(st);
                out
            }
        }
    }

    impl Drop for Raw {
        fn drop(&mut self) {
            // SAFETY: no statement is left open; closed once.
            unsafe { ffi::sqlite3_close(self.0) };
        }
    }

    const TABLE: &str = "CREATE TABLE t (id INTEGER PRIMARY KEY, tag TEXT, x BLOB)";
    const SUMMARY: &str =
        "SELECT count(*) || ' rows, tags ' || group_concat(DISTINCT tag) FROM (SELECT tag FROM t ORDER BY id)";

    /// The files as a process killed now would leave them, opened by a new connection
    /// (which replays the WAL as recovery does).
    fn as_after_a_kill(path: &Path, dir: &Path) -> Raw {
        std::fs::create_dir_all(dir).unwrap();
        let copy = dir.join("copy.db");
        std::fs::copy(path, &copy).unwrap();
        std::fs::copy(path.with_extension("db-wal"), copy.with_extension("db-wal")).unwrap();
        Raw::open(&copy, false)
    }

    /// A transaction that spills frames into the buffer and then rolls back leaves
    /// nothing to be written later: another connection's commit at the same place in
    /// the WAL stays whole after the first connection touches its WAL again.
    #[test]
    fn frames_of_a_rolled_back_transaction_never_overwrite_a_later_commit() {
        let dir = TestDir::new("vfs-rollback");
        let path = dir.0.join("t.db");
        let a = Raw::open(&path, true);
        a.exec(TABLE);
        a.exec(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50) \
                INSERT INTO t (tag, x) SELECT 'base', randomblob(3000) FROM n",
        );
        let b = Raw::open(&path, true);
        let reader = Raw::open(&path, false);
        // Everything copied and the WAL emptied: the next writer starts it over.
        b.text("PRAGMA wal_checkpoint(TRUNCATE)");
        a.exec("PRAGMA cache_size = 10");
        a.exec(
            "BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) \
                INSERT INTO t (tag, x) SELECT 'rolled back', zeroblob(3000) FROM n",
        );
        a.exec("ROLLBACK");
        b.exec(
            "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) \
                INSERT INTO t (tag, x) SELECT 'b', randomblob(3000) FROM n",
        );
        assert_eq!(a.text(SUMMARY), "350 rows, tags base,b");
        assert_eq!(reader.text(SUMMARY), "350 rows, tags base,b");
        assert_eq!(reader.text("PRAGMA integrity_check"), "ok");
        let fresh = Raw::open(&path, false);
        assert_eq!(fresh.text("PRAGMA integrity_check"), "ok");
        assert_eq!(fresh.text(SUMMARY), "350 rows, tags base,b");
    }

    /// A transaction larger than the cache overwrites some of its frames in place and,
    /// after its commit frame, rewrites frame checksums: the file holds all of it
    /// when the commit is visible, so a process killed right then loses nothing, nor
    /// does a later commit by another connection.
    #[test]
    fn a_commit_whose_frames_were_rewritten_survives_a_kill() {
        let dir = TestDir::new("vfs-rewrite");
        let path = dir.0.join("t.db");
        let a = Raw::open(&path, true);
        a.exec(TABLE);
        a.exec("INSERT INTO t (tag, x) VALUES ('first', 'x')");
        a.exec("PRAGMA cache_size = 8");
        a.exec("BEGIN; WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3000) \
                INSERT INTO t (tag, x) SELECT 'big', randomblob(1000) FROM n; \
                UPDATE t SET tag = 'bigger' WHERE tag = 'big'; COMMIT");
        assert_eq!(
            Raw::open(&path, false).text(SUMMARY),
            "3001 rows, tags first,bigger"
        );
        let recovered = as_after_a_kill(&path, &dir.0.join("kill1"));
        assert_eq!(recovered.text(SUMMARY), "3001 rows, tags first,bigger");
        let b = Raw::open(&path, true);
        b.exec("INSERT INTO t (tag, x) VALUES ('later', 'y')");
        let recovered = as_after_a_kill(&path, &dir.0.join("kill2"));
        assert_eq!(
            recovered.text(SUMMARY),
            "3002 rows, tags first,bigger,later"
        );
        assert_eq!(recovered.text("PRAGMA integrity_check"), "ok");
    }

    /// A WAL file's space is reserved ahead of its writes with nothing SQLite or a
    /// reader sees changed: the file's size is its header and frames, and a reader on
    /// SQLite's own VFS finds every row. Truncating the WAL frees the space with it;
    /// the next writes reserve it again.
    #[test]
    fn a_wal_file_has_its_space_reserved_ahead_of_its_writes() {
        use std::os::unix::fs::MetadataExt;
        let dir = TestDir::new("vfs-reserve");
        let path = dir.0.join("t.db");
        let wal = path.with_extension("db-wal");
        let a = Raw::open(&path, true);
        let reader = Raw::open(&path, false);
        let reserved = || {
            let m = std::fs::metadata(&wal).unwrap();
            assert_eq!((m.len() - 32) % (4096 + 24), 0, "header and whole frames");
            assert!(m.len() < RESERVE as u64);
            if cfg!(target_os = "linux") {
                assert!(m.blocks() * 512 >= RESERVE as u64, "{m:?}");
            }
        };
        a.exec(TABLE);
        a.exec("INSERT INTO t (tag, x) VALUES ('a', randomblob(3000))");
        reserved();
        assert_eq!(reader.text(SUMMARY), "1 rows, tags a");
        a.text("PRAGMA wal_checkpoint(TRUNCATE)");
        assert_eq!(std::fs::metadata(&wal).unwrap().blocks(), 0);
        a.exec("INSERT INTO t (tag, x) VALUES ('b', randomblob(3000))");
        reserved();
        assert_eq!(reader.text(SUMMARY), "2 rows, tags a,b");
        assert_eq!(reader.text("PRAGMA integrity_check"), "ok");
        drop(a);
        drop(reader);
        let fresh = Raw::open(&path, false);
        assert_eq!(fresh.text(SUMMARY), "2 rows, tags a,b");
    }

    const INSERT: &str =
        "INSERT INTO projects (id, name, summary, version, created_at, updated_at) \
                          VALUES (?1, ?2, ?3, 1, 'x', 'x')";

    async fn scalar(c: &mut sqlx::SqliteConnection, sql: &'static str) -> i64 {
        sqlx::query_scalar(sql).fetch_one(c).await.unwrap()
    }

    /// What the store commits through this VFS is whole in the files when any other
    /// connection can see it: a reader on SQLite's own VFS finds every row after each
    /// commit, including a transaction larger than the buffer whose pages spill from a
    /// tiny cache and are written again in place, and the file checks sound.
    #[tokio::test]
    async fn every_commit_is_in_the_file_when_others_see_it() {
        let dir = TestDir::new("vfs");
        let path = dir.0.join("v.db");
        let store = Store::open(&path).await.unwrap();
        let mut plain = SqliteConnectOptions::new()
            .filename(&path)
            .connect()
            .await
            .unwrap();
        for i in 0..200 {
            let id = crate::domain::id::new_id();
            let summary = "s".repeat(i * 37);
            let args = [Arg::Text(&id), Arg::Text("small"), Arg::Text(&summary)];
            assert_eq!(store.write_one(INSERT, &args).await.unwrap(), 1);
            assert_eq!(
                scalar(&mut plain, "SELECT count(*) FROM projects").await,
                i as i64 + 1
            );
        }

        // About 6 MiB of pages in one transaction, each written twice, with room for
        // eight pages in the cache.
        let mut tx = store.write().await.unwrap();
        sqlx::query("PRAGMA cache_size = 8")
            .execute(&mut *tx)
            .await
            .unwrap();
        for _ in 0..3000 {
            sqlx::query(INSERT)
                .bind(crate::domain::id::new_id())
                .bind("large")
                .bind("l".repeat(1000))
                .execute(&mut *tx)
                .await
                .unwrap();
        }
        sqlx::query("UPDATE projects SET summary = upper(summary) WHERE name = 'large'")
            .execute(&mut *tx)
            .await
            .unwrap();
        sqlx::query("PRAGMA cache_size = -2000")
            .execute(&mut *tx)
            .await
            .unwrap();
        tx.commit().await.unwrap();
        assert_eq!(
            scalar(&mut plain, "SELECT count(*) FROM projects WHERE name = 'large' AND summary = upper(summary) AND length(summary) = 1000").await,
            3000
        );
        let check: String = sqlx::query_scalar("PRAGMA integrity_check")
            .fetch_one(&mut plain)
            .await
            .unwrap();
        assert_eq!(check, "ok");
        sqlx::Connection::close(plain).await.unwrap();
        store.close().await;

        // After the last close folded the WAL in, the file alone holds it all.
        assert!(!dir.0.join("v.db-wal").exists());
        let mut plain = SqliteConnectOptions::new()
            .filename(&path)
            .connect()
            .await
            .unwrap();
        assert_eq!(
            scalar(&mut plain, "SELECT count(*) FROM projects").await,
            3200
        );
    }
}
