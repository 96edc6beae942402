//! The one place Cairn turns a path an agent gave into a file in a user's repository,
//! for reading or for writing.
//!
//! A path is checked as text first ([`relative`]: relative, no `..`, not into `.git`),
//! then resolved against the repository's real directory one component at a time. A
//! symbolic link met on the way is followed only when what it points at is inside the
//! repository and outside `.git`; a write never goes through a link as its last
//! component, never replaces a file Cairn did not write unless the caller says so,
//! and creates no directory before the whole path has passed. The final open refuses
//! links itself (`O_NOFOLLOW`), and a written file replaces the old one by rename,
//! so a link planted after the check is neither followed nor written through.
//!
//! Knows nothing of the store, of MCP or of which tool asked; its errors say what is
//! wrong with the path, and the caller names the parameter.

use std::ffi::OsStr;
use std::io::Write as _;
use std::os::unix::fs::OpenOptionsExt as _;
use std::path::{Component, Path, PathBuf};

/// Why a path was refused or could not be used.
#[derive(Debug, thiserror::Error)]
pub enum PathError {
    /// The text of the path is unusable (absolute, `..`, empty, NUL, into `.git`).
    #[error("{0}")]
    Invalid(String),
    /// Resolving the path leaves the repository or enters `.git`.
    #[error("{0}")]
    Escapes(String),
    /// A write would go through a link, replace something Cairn did not write, or
    /// replace a directory.
    #[error("{0}")]
    Refused(String),
    /// The file system said no (permissions, a full disk, ...).
    #[error("{0}")]
    Io(String),
}

/// A repository-relative path as an agent gave it, checked and normalized: forward
/// slashes, no empty or `.` segments; refused when absolute, when it climbs with
/// `..`, when it names nothing or when any segment is `.git` (in any case, since a
/// case-insensitive file system would find the same directory).
pub fn relative(raw: &str) -> Result<String, PathError> {
    let s = raw.trim();
    if s.is_empty() {
        return Err(PathError::Invalid("must not be empty".into()));
    }
    if s.contains('\0') {
        return Err(PathError::Invalid("contains a NUL byte".into()));
    }
    let s = s.replace('\\', "/");
    if s.starts_with('/') || s.chars().nth(1) == Some(':') {
        return Err(PathError::Invalid(format!(
            "'{}' is absolute; give a path relative to the repository root",
            clip(&s, 80)
        )));
    }
    let mut parts = Vec::new();
    for seg in s.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                return Err(PathError::Invalid(
                    "'..' is not allowed: paths stay inside the repository".into(),
                ))
            }
            p if p.eq_ignore_ascii_case(".git") => {
                return Err(PathError::Invalid("points into .git".into()))
            }
            p => parts.push(p),
        }
    }
    if parts.is_empty() {
        return Err(PathError::Invalid("names no file".into()));
    }
    Ok(parts.join("/"))
}

fn clip(s: &str, max: usize) -> String {
    if s.chars().count() <= max {
        return s.to_string();
    }
    let mut t: String = s.chars().take(max).collect();
    t.push('…');
    t
}

/// What a write may replace when the file already exists.
#[derive(Debug, Clone, Copy)]
pub enum Replace<'a> {
    /// Only a file holding this line, which Cairn writes into every file of its own.
    IfMarked(&'a str),
    /// Any regular file: the caller asked for it explicitly.
    Any,
}

/// A repository's working tree, by its real (canonical) directory.
#[derive(Debug, Clone)]
pub struct RepoFs {
    root: PathBuf,
}

impl RepoFs {
    /// The repository at `root`, which must be an existing directory.
    pub fn new(root: &Path) -> Result<RepoFs, PathError> {
        let root = root
            .canonicalize()
            .map_err(|e| PathError::Io(format!("cannot open {}: {e}", root.display())))?;
        if !root.is_dir() {
            return Err(PathError::Io(format!(
                "{} is not a directory",
                root.display()
            )));
        }
        Ok(RepoFs { root })
    }

    /// The repository's real directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Whether a real path lies inside the repository and outside its `.git`.
    fn admits(&self, real: &Path) -> bool {
        match real.strip_prefix(&self.root) {
            Ok(rest) => !matches!(
                rest.components().next(),
                Some(Component::Normal(c)) if is_git(c)
            ),
            Err(_) => false,
        }
    }

    /// Resolves `rel` (already [`relative`]) for reading: the real path of the file it
    /// names, `None` when nothing is there (a dangling link included). Links are
    /// followed only to places inside the repository and outside `.git`.
    pub fn resolve(&self, rel: &str) -> Result<Option<PathBuf>, PathError> {
        let rel = relative(rel)?;
        let mut cur = self.root.clone();
        for seg in rel.split('/') {
            let next = cur.join(seg);
            let meta = match std::fs::symlink_metadata(&next) {
                Ok(m) => m,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(PathError::Io(format!("cannot read {rel}: {e}"))),
            };
            cur = if meta.file_type().is_symlink() {
                match next.canonicalize() {
                    Ok(real) if self.admits(&real) => real,
                    Ok(_) => {
                        return Err(PathError::Escapes(format!(
                            "{rel} resolves outside the repository (or into .git) through a symbolic link"
                        )))
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                    Err(e) => return Err(PathError::Io(format!("cannot resolve {rel}: {e}"))),
                }
            } else {
                next
            };
        }
        Ok(Some(cur))
    }

    /// The bytes of the regular file `rel` names; `None` when nothing is there.
    pub fn read(&self, rel: &str) -> Result<Option<Vec<u8>>, PathError> {
        self.read_at_most(rel, u64::MAX)
    }

    /// [`RepoFs::read`] of a file of at most `max` bytes: a larger one is refused
    /// before it is read (and one that grows while read is cut at the bound and
    /// refused), so a caller's memory is its own to bound.
    pub fn read_at_most(&self, rel: &str, max: u64) -> Result<Option<Vec<u8>>, PathError> {
        use std::io::Read as _;
        let Some(p) = self.resolve(rel)? else {
            return Ok(None);
        };
        if !p.is_file() {
            return Err(PathError::Refused(format!("{rel} is not a file")));
        }
        let io = |e: std::io::Error| PathError::Io(format!("cannot read {rel}: {e}"));
        let f = std::fs::File::open(&p).map_err(io)?;
        let len = f.metadata().map_err(io)?.len();
        let too_big =
            |n: u64| PathError::Refused(format!("{rel} is {n} bytes, at most {max} are read"));
        if len > max {
            return Err(too_big(len));
        }
        let mut out = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        f.take(max.saturating_add(1))
            .read_to_end(&mut out)
            .map_err(io)?;
        if out.len() as u64 > max {
            return Err(too_big(out.len() as u64));
        }
        Ok(Some(out))
    }

    /// Writes `bytes` to `rel` (already [`relative`]), creating missing directories
    /// inside the repository once the whole path has passed, and replacing an existing
    /// file only as `replace` allows. The file is written beside its target and renamed
    /// over it, so a reader never sees half of it.
    pub fn write(&self, rel: &str, bytes: &[u8], replace: Replace<'_>) -> Result<(), PathError> {
        let rel = relative(rel)?;
        let segs: Vec<&str> = rel.split('/').collect();
        let (name, dirs) = match segs.split_last() {
            Some(x) => x,
            None => return Err(PathError::Invalid("names no file".into())),
        };
        // Walk the directories that exist, following only links that stay inside;
        // the first missing one and everything after it are to be created.
        let mut cur = self.root.clone();
        let mut missing: Vec<&str> = Vec::new();
        for seg in dirs {
            if !missing.is_empty() {
                missing.push(seg);
                continue;
            }
            let next = cur.join(seg);
            match std::fs::symlink_metadata(&next) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => missing.push(seg),
                Err(e) => return Err(PathError::Io(format!("cannot read {rel}: {e}"))),
                Ok(m) if m.file_type().is_symlink() => match next.canonicalize() {
                    Ok(real) if self.admits(&real) && real.is_dir() => cur = real,
                    Ok(real) if self.admits(&real) => {
                        return Err(PathError::Refused(format!("{seg} in {rel} is not a directory")))
                    }
                    _ => {
                        return Err(PathError::Escapes(format!(
                            "{rel} resolves outside the repository (or into .git) through the symbolic link {seg}"
                        )))
                    }
                },
                Ok(m) if m.is_dir() => cur = next,
                Ok(_) => return Err(PathError::Refused(format!("{seg} in {rel} is not a directory"))),
            }
        }
        let target = cur.join(name);
        if missing.is_empty() {
            match std::fs::symlink_metadata(&target) {
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(PathError::Io(format!("cannot read {rel}: {e}"))),
                Ok(m) if m.file_type().is_symlink() => {
                    return Err(PathError::Refused(format!(
                        "{rel} is a symbolic link; Cairn does not write through links"
                    )))
                }
                Ok(m) if m.is_dir() => {
                    return Err(PathError::Refused(format!("{rel} is a directory")))
                }
                Ok(m) if !m.is_file() => {
                    return Err(PathError::Refused(format!("{rel} is not a regular file")))
                }
                Ok(_) => self.check_replace(&target, &rel, replace)?,
            }
        }
        // Every check passed: create what is missing, one directory at a time, each
        // refusing to exist already (a link planted meanwhile makes it fail).
        for seg in &missing {
            cur = cur.join(seg);
            std::fs::create_dir(&cur)
                .map_err(|e| PathError::Io(format!("cannot create the directory of {rel}: {e}")))?;
        }
        let target = cur.join(name);
        let tmp = cur.join(format!(
            ".{name}.{}.cairn-tmp",
            uuid::Uuid::new_v4().simple()
        ));
        let written = (|| {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .custom_flags(libc::O_NOFOLLOW)
                .open(&tmp)?;
            f.write_all(bytes)?;
            f.sync_all()
        })();
        if let Err(e) = written {
            let _ = std::fs::remove_file(&tmp);
            return Err(PathError::Io(format!("cannot write {rel}: {e}")));
        }
        // rename replaces a link at the target by the file, never writing through it.
        std::fs::rename(&tmp, &target).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            PathError::Io(format!("cannot write {rel}: {e}"))
        })
    }

    fn check_replace(
        &self,
        target: &Path,
        rel: &str,
        replace: Replace<'_>,
    ) -> Result<(), PathError> {
        let Replace::IfMarked(marker) = replace else {
            return Ok(());
        };
        // Cairn's own files are small; a large file is not one of them.
        let ours = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(libc::O_NOFOLLOW)
            .open(target)
            .and_then(|f| {
                let mut text = String::new();
                std::io::Read::read_to_string(&mut std::io::Read::take(f, 4 << 20), &mut text)
                    .map(|_| text)
            })
            .map(|text| text.lines().any(|l| l.trim_end() == marker))
            .unwrap_or(false);
        if ours {
            Ok(())
        } else {
            Err(PathError::Refused(format!(
                "{rel} exists and was not written by Cairn; choose another path, or pass overwrite: true to replace it"
            )))
        }
    }
}

fn is_git(c: &OsStr) -> bool {
    c.to_str().is_some_and(|s| s.eq_ignore_ascii_case(".git"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    struct Dir(PathBuf);
    impl Drop for Dir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    fn dir() -> Dir {
        let d =
            std::env::temp_dir().join(format!("cairn-repofs-{}", uuid::Uuid::now_v7().simple()));
        std::fs::create_dir_all(d.join("repo/.git")).unwrap();
        std::fs::create_dir_all(d.join("outside")).unwrap();
        Dir(d)
    }

    #[test]
    fn relative_paths_are_normalized_and_checked() {
        assert_eq!(relative("./a//b/c.md").unwrap(), "a/b/c.md");
        assert_eq!(relative("a\\b").unwrap(), "a/b");
        for bad in [
            "",
            "/etc/passwd",
            "C:/x",
            "../x",
            "a/../../x",
            ".git/config",
            "a/.GIT/x",
            "a\0b",
            ".",
        ] {
            assert!(relative(bad).is_err(), "{bad:?} must be refused");
        }
    }

    #[test]
    fn a_write_never_follows_a_link_or_replaces_a_foreign_file() {
        let d = dir();
        let repo = d.0.join("repo");
        let decoy = d.0.join("outside/decoy");
        std::fs::write(&decoy, "decoy").unwrap();
        symlink(&decoy, repo.join("ov.md")).unwrap();
        symlink(d.0.join("outside/none"), repo.join("dangling.md")).unwrap();
        symlink(repo.join(".git"), repo.join("g")).unwrap();
        symlink(d.0.join("outside"), repo.join("linkdir")).unwrap();
        std::fs::write(repo.join("main.c"), "int main;").unwrap();
        let fs = RepoFs::new(&repo).unwrap();
        let mark = Replace::IfMarked("<!-- m -->");
        assert!(matches!(
            fs.write("ov.md", b"x", mark),
            Err(PathError::Refused(_))
        ));
        assert!(matches!(
            fs.write("dangling.md", b"x", Replace::Any),
            Err(PathError::Refused(_))
        ));
        assert!(matches!(
            fs.write("g/config", b"x", Replace::Any),
            Err(PathError::Escapes(_))
        ));
        assert!(matches!(
            fs.write("linkdir/new/deep/x.md", b"x", mark),
            Err(PathError::Escapes(_))
        ));
        assert!(matches!(
            fs.write("main.c", b"x", mark),
            Err(PathError::Refused(_))
        ));
        assert_eq!(std::fs::read_to_string(&decoy).unwrap(), "decoy");
        assert!(!d.0.join("outside/none").exists());
        assert!(!d.0.join("outside/new").exists());
        assert_eq!(
            std::fs::read_to_string(repo.join("main.c")).unwrap(),
            "int main;"
        );
        // A new file, then replacing it because it carries the marker, then `Any`.
        fs.write("docs/a/b.md", b"one\n<!-- m -->\n", mark).unwrap();
        fs.write("docs/a/b.md", b"two\n<!-- m -->\n", mark).unwrap();
        assert_eq!(
            std::fs::read_to_string(repo.join("docs/a/b.md")).unwrap(),
            "two\n<!-- m -->\n"
        );
        fs.write("main.c", b"replaced", Replace::Any).unwrap();
        assert_eq!(
            std::fs::read_to_string(repo.join("main.c")).unwrap(),
            "replaced"
        );
    }

    #[test]
    fn a_read_follows_links_only_inside_the_repository() {
        let d = dir();
        let repo = d.0.join("repo");
        std::fs::write(d.0.join("outside/secret"), "s").unwrap();
        std::fs::write(repo.join("a.c"), "a").unwrap();
        symlink(repo.join("a.c"), repo.join("b.c")).unwrap();
        symlink(d.0.join("outside/secret"), repo.join("c.c")).unwrap();
        std::fs::write(repo.join(".git/config"), "[core]").unwrap();
        symlink(repo.join(".git/config"), repo.join("d.c")).unwrap();
        let fs = RepoFs::new(&repo).unwrap();
        assert_eq!(fs.read("b.c").unwrap().unwrap(), b"a");
        assert!(matches!(fs.read("c.c"), Err(PathError::Escapes(_))));
        assert!(matches!(fs.read("d.c"), Err(PathError::Escapes(_))));
        assert!(fs.read("missing.c").unwrap().is_none());
    }
}
