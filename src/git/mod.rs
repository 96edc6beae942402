//! The git adapter: HEAD, blobs, diff hunks and renames for the code toolset; a
//! branch's tree and blobs, blobs written, commits made beside the user's work and
//! proposal branches for the ontology toolset ([`branch`]). Knows nothing of
//! entities, pages or the store.
//!
//! Three rules hold for every call:
//! - it runs on tokio's blocking pool: the methods are `async` and each runs its
//!   processes in `spawn_blocking`, so a slow git never holds an async worker (no
//!   other way to run git is public);
//! - every path, branch name and object id it is handed passes [`check`] first, and
//!   a path is never given as an option (after `--`, or on standard input);
//! - every process is built by [`run::command`]: no hook, no user config, no
//!   program named in the repository's config, no network (that module says how).

mod branch;
mod check;
mod run;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{LazyLock, Mutex};

pub use branch::{Signature, TreeFile};
pub use check::{check_branch, check_oid, check_path, check_text};

use crate::domain::code::Hunk;
use crate::error::{Error, Result};
use crate::repo_fs::RepoFs;
use run::run;

type DiffKey = (PathBuf, String, String);

/// Diffs between blob pairs, per repository; cleared when it reaches `DIFF_CACHE`.
static DIFFS: LazyLock<Mutex<HashMap<DiffKey, Vec<Hunk>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
const DIFF_CACHE: usize = 1024;

/// The `git` command line on one work tree.
#[derive(Debug, Clone)]
pub struct GitCli {
    root: PathBuf,
}

/// An object id checked before it reaches git, as the adapter's error.
fn oid(id: &str) -> Result<()> {
    check_oid(id).map_err(Error::invalid)
}

impl GitCli {
    /// Runs `f` on tokio's blocking pool with a copy of this handle.
    async fn blocking<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&GitCli) -> Result<T> + Send + 'static,
    {
        let me = self.clone();
        tokio::task::spawn_blocking(move || f(&me))
            .await
            .map_err(|e| Error::Internal(format!("running git: {e}")))?
    }

    fn git(&self, args: &[&str]) -> Result<String> {
        let (ok, out, err) = run(&self.root, args, None)?;
        if ok {
            Ok(out)
        } else {
            Err(Error::Internal(format!(
                "git {} failed: {}",
                args.first().copied().unwrap_or(""),
                err.trim()
            )))
        }
    }

    /// Opens the work tree containing `path`; an `INVALID_OPERATION` when it is none.
    pub async fn open(path: &Path) -> Result<GitCli> {
        if !path.is_dir() {
            return Err(Error::invalid(format!(
                "{} is not a directory: give the path of a git work tree",
                path.display()
            )));
        }
        let probe = GitCli::at(path);
        let (ok, out, err) = probe
            .blocking(|g| run(&g.root, &["rev-parse", "--show-toplevel"], None))
            .await?;
        if !ok {
            return Err(Error::invalid(format!(
                "{} is not inside a git work tree ({}): run `git init` there first",
                path.display(),
                err.trim()
            )));
        }
        Ok(GitCli {
            root: PathBuf::from(out.trim()),
        })
    }

    /// A work tree already validated by `open` (the stored repository path).
    pub fn at(root: &Path) -> GitCli {
        GitCli {
            root: root.to_path_buf(),
        }
    }

    /// The repository's top-level directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The hunks turning blob `old` into `new`, when an earlier diff of this
    /// repository left them in the cache; no process is run.
    pub fn cached_diff(&self, old: &str, new: &str) -> Option<Vec<Hunk>> {
        if old == new {
            return Some(vec![]);
        }
        let key = (self.root.clone(), old.to_string(), new.to_string());
        DIFFS.lock().ok().and_then(|m| m.get(&key).cloned())
    }

    /// The commit HEAD points at.
    pub async fn head(&self) -> Result<String> {
        let (ok, out, _) = self
            .blocking(|g| run(&g.root, &["rev-parse", "--verify", "-q", "HEAD"], None))
            .await?;
        if !ok {
            return Err(Error::invalid(format!(
                "the repository at {} has no commit yet: commit once, then reference its files",
                self.root.display()
            )));
        }
        Ok(out.trim().to_string())
    }

    /// Stores `text` (a working-tree file as Cairn read it through `repo_fs`) as a
    /// blob and returns its id (`git hash-object -w`). The bytes are stored as they
    /// are, without the filters the repository's attributes name (a filter is a
    /// program), so the blob is exactly the text references count lines in.
    pub async fn store_blob(&self, text: &str) -> Result<String> {
        let text = text.to_string();
        self.blocking(move |g| {
            let args = ["hash-object", "-w", "--no-filters", "--stdin"];
            let (ok, out, err) = run(&g.root, &args, Some(&text))?;
            if !ok {
                return Err(Error::Internal(format!("git hash-object: {}", err.trim())));
            }
            Ok(out.trim().to_string())
        })
        .await
    }

    /// Blob ids of working-tree files without storing them (hashed as
    /// [`GitCli::store_blob`] hashes); `None` for a missing file, and for a path
    /// that could not be handed to git.
    pub async fn blob_ids(&self, paths: &[&str]) -> Result<Vec<Option<String>>> {
        let paths: Vec<String> = paths.iter().map(|p| p.to_string()).collect();
        self.blocking(move |g| g.blob_ids_now(&paths)).await
    }

    fn blob_ids_now(&self, paths: &[String]) -> Result<Vec<Option<String>>> {
        // Only files that resolve inside the repository are hashed: a link to a file
        // outside reads as a missing document.
        let fs = RepoFs::new(&self.root).ok();
        let present: Vec<&str> = paths
            .iter()
            .map(String::as_str)
            .filter(|p| check_path(p).is_ok())
            .filter(|p| {
                fs.as_ref()
                    .and_then(|fs| fs.resolve(p).ok().flatten())
                    .is_some_and(|real| real.is_file())
            })
            .collect();
        let mut ids = HashMap::new();
        if !present.is_empty() {
            let input = present.join("\n") + "\n";
            let args = ["hash-object", "--no-filters", "--stdin-paths"];
            let (ok, out, err) = run(&self.root, &args, Some(&input))?;
            if !ok {
                return Err(Error::Internal(format!("git hash-object: {}", err.trim())));
            }
            for (p, id) in present.iter().zip(out.lines()) {
                ids.insert(*p, id.trim().to_string());
            }
        }
        Ok(paths.iter().map(|p| ids.get(p.as_str()).cloned()).collect())
    }

    /// Zero-context hunks turning blob `old` into blob `new`.
    pub async fn diff_blobs(&self, old: &str, new: &str) -> Result<Vec<Hunk>> {
        if old == new {
            return Ok(vec![]);
        }
        oid(old)?;
        oid(new)?;
        // Blobs never change, so neither does their diff: repeated analyses of an
        // edited file reuse it instead of running git again.
        if let Some(h) = self.cached_diff(old, new) {
            return Ok(h);
        }
        let key = (self.root.clone(), old.to_string(), new.to_string());
        let hunks = self
            .blocking(move |g| {
                let out = g.git(&[
                    "diff",
                    "--no-color",
                    "--no-ext-diff",
                    "--no-textconv",
                    "-U0",
                    &key.1,
                    &key.2,
                ])?;
                let hunks = parse_hunks(&out);
                if let Ok(mut m) = DIFFS.lock() {
                    if m.len() >= DIFF_CACHE {
                        m.clear();
                    }
                    m.insert(key, hunks.clone());
                }
                Ok(hunks)
            })
            .await?;
        Ok(hunks)
    }

    /// Where `path` went between `commit` and the index, when git sees a rename
    /// (the rename must be staged: `git mv`, or the new file added and the old one
    /// removed). The index is compared, not the working tree, so no file is read
    /// through a filter.
    pub async fn renamed_to(&self, commit: &str, path: &str) -> Result<Option<String>> {
        if oid(commit).is_err() || check_path(path).is_err() {
            return Ok(None);
        }
        let (commit, path) = (commit.to_string(), path.to_string());
        self.blocking(move |g| {
            let (ok, out, _) = run(
                &g.root,
                &[
                    "diff-index",
                    "--cached",
                    "-M",
                    "--name-status",
                    "-z",
                    &commit,
                    "--",
                ],
                None,
            )?;
            if !ok {
                return Ok(None);
            }
            let fields: Vec<&str> = out.split('\0').collect();
            let mut i = 0;
            while i < fields.len() {
                let status = fields[i];
                if status.starts_with('R') || status.starts_with('C') {
                    if let (Some(from), Some(to)) = (fields.get(i + 1), fields.get(i + 2)) {
                        if *from == path && status.starts_with('R') {
                            return Ok(Some((*to).to_string()));
                        }
                    }
                    i += 3;
                } else {
                    i += 2;
                }
            }
            Ok(None)
        })
        .await
    }

    /// Which of `shas` name commits present in the repository (a text that is no
    /// object id names none).
    pub async fn commits_exist(&self, shas: &[&str]) -> Result<Vec<bool>> {
        let wellformed: Vec<String> = shas
            .iter()
            .filter(|s| check_oid(s).is_ok())
            .map(|s| s.to_string())
            .collect();
        let found: HashMap<String, bool> = if wellformed.is_empty() {
            HashMap::new()
        } else {
            self.blocking(move |g| {
                let input: String = wellformed
                    .iter()
                    .map(|s| format!("{s}^{{commit}}\n"))
                    .collect();
                let (_, out, _) = run(&g.root, &["cat-file", "--batch-check"], Some(&input))?;
                Ok(wellformed
                    .into_iter()
                    .zip(out.lines().map(|l| !l.ends_with("missing")))
                    .collect())
            })
            .await?
        };
        Ok(shas
            .iter()
            .map(|s| found.get(*s).copied().unwrap_or(false))
            .collect())
    }
}

/// Parses a zero-context unified diff into hunks (header numbers and body lines).
pub fn parse_hunks(diff: &str) -> Vec<Hunk> {
    fn range(s: &str) -> Option<(i64, i64)> {
        let (start, len) = match s.split_once(',') {
            Some((a, b)) => (a.parse().ok()?, b.parse().ok()?),
            None => (s.parse().ok()?, 1),
        };
        Some((start, len))
    }
    let mut out: Vec<Hunk> = Vec::new();
    for l in diff.lines() {
        if let Some(rest) = l.strip_prefix("@@ -") {
            let parsed = rest.split_once(" +").and_then(|(old, rest)| {
                let (new, _) = rest.split_once(" @@")?;
                Some((range(old)?, range(new)?))
            });
            if let Some(((os, ol), (ns, nl))) = parsed {
                out.push(Hunk {
                    old_start: os,
                    old_lines: ol,
                    new_start: ns,
                    new_lines: nl,
                    text: String::new(),
                });
            }
        } else if let Some(h) = out.last_mut() {
            if l.starts_with('+') || l.starts_with('-') {
                h.text.push_str(l);
                h.text.push('\n');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn hunk_headers() {
        let h = super::parse_hunks("@@ -3,0 +4,2 @@ fn x\n+a\n+b\n@@ -10 +12 @@\n-x\n+y\n");
        assert_eq!(h.len(), 2);
        assert_eq!((h[0].old_start, h[0].old_lines, h[0].new_lines), (3, 0, 2));
        assert_eq!((h[1].old_start, h[1].old_lines, h[1].new_lines), (10, 1, 1));
    }
}
