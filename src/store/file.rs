//! The SQLite file on the file system: whether its directory can be reached, why
//! the file cannot be opened or written (in words an operator can act on), and its
//! mode. A database Cairn creates is the user's own (`0600`, whatever the umask;
//! SQLite gives its `-wal` and `-shm` the database file's mode); Cairn never changes
//! the mode of a file or directory it did not create, and says so at start when the
//! database can be read by other users.

use std::io::ErrorKind;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

/// What the file system says of a directory a database is to be in.
#[derive(Debug, PartialEq, Eq)]
pub enum Dir {
    /// It exists and this user can enter it.
    Usable,
    /// It does not exist.
    Missing,
    /// It exists (or may), but cannot be used: the sentence says why.
    Unusable(String),
}

/// Whether this user can reach and enter `dir`. A directory on the way that this
/// user may not search (no `x` for it) is named: the file system then answers
/// "permission denied" for everything below it, which is not "does not exist".
pub fn dir(dir: &Path) -> Dir {
    match std::fs::metadata(dir) {
        Ok(m) if !m.is_dir() => Dir::Unusable(format!("{} is not a directory", dir.display())),
        // Entering a directory is what resolving `dir/.` needs.
        Ok(_) => match std::fs::metadata(dir.join(".")) {
            Err(e) if e.kind() == ErrorKind::PermissionDenied => {
                Dir::Unusable(cannot_enter(dir, dir))
            }
            _ => Dir::Usable,
        },
        Err(e) if e.kind() == ErrorKind::NotFound => Dir::Missing,
        Err(e) if e.kind() == ErrorKind::PermissionDenied => match closed_ancestor(dir) {
            Some(a) => Dir::Unusable(cannot_enter(&a, dir)),
            None => Dir::Unusable(format!(
                "permission denied: this user cannot reach {}",
                dir.display()
            )),
        },
        Err(e) if e.kind() == ErrorKind::NotADirectory => Dir::Unusable(format!(
            "{} cannot be a directory: a part of that path is a file",
            dir.display()
        )),
        Err(e) => Dir::Unusable(format!("{} cannot be read: {e}", dir.display())),
    }
}

/// The nearest directory above `dir` that exists and that this user cannot enter.
fn closed_ancestor(dir: &Path) -> Option<PathBuf> {
    let abs = std::path::absolute(dir).ok()?;
    abs.ancestors().skip(1).find_map(|a| {
        let entered = std::fs::metadata(a.join("."));
        (std::fs::metadata(a).is_ok()
            && entered.is_err_and(|e| e.kind() == ErrorKind::PermissionDenied))
        .then(|| a.to_path_buf())
    })
}

fn cannot_enter(closed: &Path, dir: &Path) -> String {
    if closed == dir {
        format!(
            "permission denied: this user cannot enter the directory {} (it needs the search \
             permission, x, for this user)",
            dir.display()
        )
    } else {
        format!(
            "permission denied: this user cannot enter {}, so {} cannot be reached (a directory on \
             the way needs the search permission, x, for this user)",
            closed.display(),
            dir.display()
        )
    }
}

/// The directory `path` is in.
fn parent(path: &Path) -> &Path {
    path.parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// Creates the database file, empty, readable and writable by this user only, when
/// it does not exist (SQLite reads an empty file as an empty database, and creates
/// its `-wal` and `-shm` with this file's mode). Any failure is left to SQLite's
/// opening, whose error [`why_unopenable`] explains.
pub(super) fn create_private(path: &Path) {
    use std::os::unix::fs::OpenOptionsExt;
    let made = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
    if let Ok(f) = made {
        // The umask may have taken bits from 0600 (never added any): set it exactly.
        let _ = f.set_permissions(std::fs::Permissions::from_mode(0o600));
    }
}

/// Says once, at start, when the database file can be read or written by other
/// users than its owner (a file made by an older Cairn, or under a loose umask):
/// Cairn does not change the mode of a file it did not create.
pub(super) fn warn_if_shared(path: &Path) {
    let Ok(m) = std::fs::metadata(path) else {
        return;
    };
    let mode = m.permissions().mode() & 0o777;
    if mode & 0o077 != 0 {
        tracing::warn!(
            db = %path.display(),
            mode = %format!("{mode:04o}"),
            "the database can be read by other users than its owner; unless that is meant, \
             chmod 600 it and its -wal and -shm files"
        );
    }
}

/// Why SQLite could not open `path`, from what the file system shows.
pub(super) fn why_unopenable(path: &Path) -> String {
    let dir = parent(path);
    match self::dir(dir) {
        Dir::Missing => format!(
            "the directory {} does not exist; create it, or point --db at a file in an existing directory",
            dir.display()
        ),
        Dir::Unusable(why) => why,
        Dir::Usable if path.is_dir() => {
            format!("{} is a directory, not a database file", path.display())
        }
        Dir::Usable if std::fs::metadata(path).is_ok_and(|m| m.permissions().readonly()) => format!(
            "permission denied: the file is read-only and this user cannot create files in {} \
             (SQLite needs the -wal and -shm files beside it)",
            dir.display()
        ),
        Dir::Usable => format!(
            "permission denied: this user cannot create or open files in {} (SQLite needs the file and its -wal and -shm beside it)",
            dir.display()
        ),
    }
}

/// Which of `path` and its directory looks unwritable.
pub(super) fn why_unwritable(path: &Path) -> String {
    let ro = |p: &Path| std::fs::metadata(p).is_ok_and(|m| m.permissions().readonly());
    let dir = parent(path);
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

#[cfg(test)]
mod tests {
    use super::{create_private, dir, Dir};
    use crate::store::TestDir;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_new_database_file_is_this_users_only_whatever_it_is_in() {
        let d = TestDir::new("mode");
        std::fs::set_permissions(&d.0, std::fs::Permissions::from_mode(0o755)).unwrap();
        let db = d.0.join("c.db");
        create_private(&db);
        assert_eq!(
            std::fs::metadata(&db).unwrap().permissions().mode() & 0o777,
            0o600
        );
        // An existing file keeps its mode, and the directory keeps its own.
        std::fs::set_permissions(&db, std::fs::Permissions::from_mode(0o640)).unwrap();
        create_private(&db);
        assert_eq!(
            std::fs::metadata(&db).unwrap().permissions().mode() & 0o777,
            0o640
        );
        assert_eq!(
            std::fs::metadata(&d.0).unwrap().permissions().mode() & 0o777,
            0o755
        );
    }

    #[test]
    fn a_directory_is_missing_usable_or_not_a_directory() {
        let d = TestDir::new("dir");
        assert_eq!(dir(&d.0), Dir::Usable);
        assert_eq!(dir(&d.0.join("nope")), Dir::Missing);
        std::fs::write(d.0.join("f"), "").unwrap();
        assert!(matches!(dir(&d.0.join("f")), Dir::Unusable(m) if m.contains("not a directory")));
        assert!(matches!(dir(&d.0.join("f/sub")), Dir::Unusable(m) if m.contains("is a file")));
    }
}
