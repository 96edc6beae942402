//! The git adapter: HEAD, blobs, diff hunks and renames, read with the `git` command
//! line behind the small [`Git`] trait. Knows nothing of entities or the store.
//!
//! Every call runs `git -C <root>` with a fixed argument list (paths after `--`), so
//! no agent-given text is ever interpreted as an option.

use std::collections::HashMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::{LazyLock, Mutex};

use crate::domain::code::Hunk;
use crate::error::{Error, Result};
use crate::repo_fs::RepoFs;

/// What the code toolset needs from a repository.
pub trait Git {
    /// The repository's top-level directory.
    fn root(&self) -> &Path;
    /// The commit HEAD points at.
    fn head(&self) -> Result<String>;
    /// Stores `text`, read from the working-tree file `path`, as a blob and returns
    /// its id (`git hash-object -w`, with the filters git applies to `path`). The text
    /// is the one Cairn read through `repo_fs`, so git never opens a path itself.
    fn store_blob(&self, path: &str, text: &str) -> Result<String>;
    /// Blob ids of working-tree files without storing them; `None` for a missing file.
    fn blob_ids(&self, paths: &[&str]) -> Result<Vec<Option<String>>>;
    /// Zero-context hunks turning blob `old` into blob `new`.
    fn diff_blobs(&self, old: &str, new: &str) -> Result<Vec<Hunk>>;
    /// Where `path` went between `commit` and the working tree, when git sees a rename.
    fn renamed_to(&self, commit: &str, path: &str) -> Result<Option<String>>;
    /// Which of `shas` name commits present in the repository.
    fn commits_exist(&self, shas: &[&str]) -> Result<Vec<bool>>;
}

type DiffKey = (PathBuf, String, String);

/// Diffs between blob pairs, per repository; cleared when it reaches `DIFF_CACHE`.
static DIFFS: LazyLock<Mutex<HashMap<DiffKey, Vec<Hunk>>>> =
    LazyLock::new(|| Mutex::new(HashMap::new()));
const DIFF_CACHE: usize = 1024;

/// The `git` command line on one work tree.
pub struct GitCli {
    root: PathBuf,
}

fn run(root: &Path, args: &[&str], stdin: Option<&str>) -> Result<(bool, String, String)> {
    let mut cmd = Command::new("git");
    cmd.arg("-C")
        .arg(root)
        .args(["-c", "core.quotepath=off"])
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        });
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::Internal(format!("cannot run git: {e}")))?;
    if let (Some(input), Some(mut w)) = (stdin, child.stdin.take()) {
        // Inputs are small lists of ids and paths; git reads them before answering.
        w.write_all(input.as_bytes())
            .map_err(|e| Error::Internal(format!("writing to git: {e}")))?;
    }
    let out = child
        .wait_with_output()
        .map_err(|e| Error::Internal(format!("git failed: {e}")))?;
    Ok((
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

impl GitCli {
    /// Opens the work tree containing `path`; an `INVALID_OPERATION` when it is none.
    pub fn open(path: &Path) -> Result<GitCli> {
        if !path.is_dir() {
            return Err(Error::invalid(format!(
                "{} is not a directory: give the path of a git work tree",
                path.display()
            )));
        }
        let (ok, out, err) = run(path, &["rev-parse", "--show-toplevel"], None)?;
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
}

impl Git for GitCli {
    fn root(&self) -> &Path {
        &self.root
    }

    fn head(&self) -> Result<String> {
        let (ok, out, _) = run(&self.root, &["rev-parse", "--verify", "-q", "HEAD"], None)?;
        if !ok {
            return Err(Error::invalid(format!(
                "the repository at {} has no commit yet: commit once, then reference its files",
                self.root.display()
            )));
        }
        Ok(out.trim().to_string())
    }

    fn store_blob(&self, path: &str, text: &str) -> Result<String> {
        let by_path = format!("--path={path}");
        let args = ["hash-object", "-w", "--stdin", by_path.as_str()];
        let (ok, out, err) = run(&self.root, &args, Some(text))?;
        if !ok {
            return Err(Error::Internal(format!("git hash-object: {}", err.trim())));
        }
        Ok(out.trim().to_string())
    }

    fn blob_ids(&self, paths: &[&str]) -> Result<Vec<Option<String>>> {
        // Only files that resolve inside the repository are hashed: a link to a file
        // outside reads as a missing document.
        let fs = RepoFs::new(&self.root).ok();
        let present: Vec<&str> = paths
            .iter()
            .copied()
            .filter(|p| {
                fs.as_ref()
                    .and_then(|fs| fs.resolve(p).ok().flatten())
                    .is_some_and(|real| real.is_file())
            })
            .collect();
        let mut ids = std::collections::HashMap::new();
        if !present.is_empty() {
            let input = present.join("\n") + "\n";
            let (ok, out, err) = run(&self.root, &["hash-object", "--stdin-paths"], Some(&input))?;
            if !ok {
                return Err(Error::Internal(format!("git hash-object: {}", err.trim())));
            }
            for (p, id) in present.iter().zip(out.lines()) {
                ids.insert(*p, id.trim().to_string());
            }
        }
        Ok(paths.iter().map(|p| ids.get(p).cloned()).collect())
    }

    fn diff_blobs(&self, old: &str, new: &str) -> Result<Vec<Hunk>> {
        if old == new {
            return Ok(vec![]);
        }
        // Blobs never change, so neither does their diff: repeated analyses of an
        // edited file reuse it instead of running git again.
        let key = (self.root.clone(), old.to_string(), new.to_string());
        if let Some(h) = DIFFS.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return Ok(h);
        }
        let out = self.git(&["diff", "--no-color", "--no-ext-diff", "-U0", old, new])?;
        let hunks = parse_hunks(&out);
        if let Ok(mut m) = DIFFS.lock() {
            if m.len() >= DIFF_CACHE {
                m.clear();
            }
            m.insert(key, hunks.clone());
        }
        Ok(hunks)
    }

    fn renamed_to(&self, commit: &str, path: &str) -> Result<Option<String>> {
        // Commit → working tree, tracked files (a rename must be at least staged).
        let (ok, out, _) = run(
            &self.root,
            &["diff", "--no-color", "-M", "--name-status", "-z", commit],
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
    }

    fn commits_exist(&self, shas: &[&str]) -> Result<Vec<bool>> {
        if shas.is_empty() {
            return Ok(vec![]);
        }
        let input: String = shas.iter().map(|s| format!("{s}^{{commit}}\n")).collect();
        let (_, out, _) = run(&self.root, &["cat-file", "--batch-check"], Some(&input))?;
        Ok(out.lines().map(|l| !l.ends_with("missing")).collect())
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
