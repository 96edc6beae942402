//! The SQLite file on the file system: whether its directory can be reached, and
//! why the file cannot be opened or written, in words an operator can act on.

use std::io::ErrorKind;
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
    use super::{dir, Dir};
    use crate::store::TestDir;

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
