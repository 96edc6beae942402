//! The VFS the store opens its files with: SQLite's own, except that the frames a
//! commit appends to the WAL reach the file in one write instead of two per page.
//!
//! SQLite writes each WAL frame as two calls, its 24-byte header and then the page, so
//! an atom create (eight pages) made sixteen `pwrite`s, and the kernel's per-call work
//! (entering the call, locking the inode, preparing each page of the page cache twice,
//! as a frame straddles two) was half of what SQLite spent on the commit. Here a WAL
//! file collects consecutive writes in a buffer and writes them at once when the
//! commit frame's page arrives (its header carries the database size, which only a
//! commit frame does), when the buffer reaches [`LIMIT`], and before any other
//! operation on the file (a read, a sync, a size, a close). SQLite makes a commit
//! visible to other connections only after its frames are written, by updating the
//! WAL index in shared memory, and that happens after the last frame's write returns:
//! so no reader, in this process or another, can look for a frame still in the
//! buffer, and what a killed process loses is only a commit it had not finished,
//! as before. Every other file, and every other operation, is passed through.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::mem::size_of;
use std::ptr;

use libsqlite3_sys as ffi;

/// The name connections open the store's files with.
pub const NAME: &CStr = c"cairn";

/// The buffer is written out when it holds this much, so a large transaction does
/// not gather its whole WAL in memory.
const LIMIT: usize = 1 << 20;

/// The largest piece handed to the unix VFS in one write.
const CHUNK: usize = 64 << 10;

/// A WAL frame header's size (SQLite's `WAL_FRAME_HDRSIZE`).
const FRAME_HEADER: c_int = 24;

/// Registers the VFS (once per process); false if SQLite has no default VFS to
/// build it on, and connections then use SQLite's own.
pub fn register() -> bool {
    static REGISTERED: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *REGISTERED.get_or_init(|| {
        // SAFETY: asking SQLite for its default VFS, which lives as long as the
        // process; the copy made from it is leaked, so it lives as long too, as a
        // registered VFS must.
        unsafe {
            let real = ffi::sqlite3_vfs_find(ptr::null());
            if real.is_null() {
                return false;
            }
            let mut vfs = *real;
            vfs.szOsFile = (size_of::<File>() + (*real).szOsFile as usize) as c_int;
            vfs.zName = NAME.as_ptr();
            vfs.pNext = ptr::null_mut();
            // SQLite's own functions take the VFS for this; ours takes it from here.
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
    /// Consecutive writes not yet made, and the file offset of their first byte.
    pending: Vec<u8>,
    start: i64,
    /// The last write was a commit frame's header: its page ends the commit.
    commit: bool,
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
    // default VFS's `xOpen` is called with that VFS, as it expects.
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
        ptr::write(
            f,
            File {
                base: ffi::sqlite3_file { pMethods: &METHODS },
                real,
                wal: flags & ffi::SQLITE_OPEN_WAL != 0,
                pending: Vec::new(),
                start: 0,
                commit: false,
            },
        );
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
        let mut rc = ffi::SQLITE_OK;
        let mut at = self.start;
        // In pieces of at most CHUNK: SQLite's unix VFS handles one write of up to
        // 128 KiB (it masks a larger count to its low 17 bits).
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
        // Cleared even on failure: SQLite abandons the commit, and these bytes must
        // not reach the file later.
        self.pending.clear();
        if self.pending.capacity() > LIMIT {
            self.pending.shrink_to(4 * CHUNK);
        }
        rc
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
        if !f.wal {
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
        if f.commit || f.pending.len() >= LIMIT {
            return f.flush();
        }
        ffi::SQLITE_OK
    }
}

/// Generates a method that writes out the buffer, then passes the call through.
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
after_flush!(truncate, xTruncate, (size: i64), ffi::SQLITE_IOERR_TRUNCATE);
after_flush!(sync, xSync, (flags: c_int), ffi::SQLITE_IOERR_FSYNC);
after_flush!(file_size, xFileSize, (size: *mut i64), ffi::SQLITE_IOERR_FSTAT);
after_flush!(lock, xLock, (level: c_int), ffi::SQLITE_IOERR_LOCK);
after_flush!(unlock, xUnlock, (level: c_int), ffi::SQLITE_IOERR_UNLOCK);
after_flush!(check_reserved, xCheckReservedLock, (out: *mut c_int), ffi::SQLITE_IOERR_CHECKRESERVEDLOCK);
after_flush!(file_control, xFileControl, (op: c_int, arg: *mut c_void), ffi::SQLITE_NOTFOUND);
after_flush!(shm_map, xShmMap, (page: c_int, size: c_int, extend: c_int, out: *mut *mut c_void), ffi::SQLITE_IOERR_SHMMAP);
after_flush!(shm_lock, xShmLock, (offset: c_int, n: c_int, flags: c_int), ffi::SQLITE_IOERR_SHMLOCK);
after_flush!(shm_unmap, xShmUnmap, (delete: c_int), ffi::SQLITE_OK);
after_flush!(unfetch, xUnfetch, (offset: i64, page: *mut c_void), ffi::SQLITE_OK);

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

unsafe extern "C" fn shm_barrier(file: *mut ffi::sqlite3_file) {
    // SAFETY: as above.
    unsafe {
        let (_, real) = parts(file);
        if let Some(m) = real!(real, xShmBarrier) {
            m(real);
        }
    }
}

unsafe extern "C" fn close(file: *mut ffi::sqlite3_file) -> c_int {
    // SAFETY: SQLite closes an open file once and uses it no more: the `File` is
    // dropped here, after the default VFS's file is closed.
    unsafe {
        let f = file as *mut File;
        let flushed = (*f).flush();
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

static METHODS: ffi::sqlite3_io_methods = ffi::sqlite3_io_methods {
    iVersion: 3,
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
};

#[cfg(test)]
mod tests {
    use sqlx::sqlite::SqliteConnectOptions;
    use sqlx::ConnectOptions;

    use crate::store::{Arg, Store, TestDir};

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
