//! The git adapter: HEAD, blobs, diff hunks and renames, read with the `git` command
//! line behind the small [`Git`] trait. Knows nothing of entities or the store.
//!
//! Every call runs `git -C <root>` with a fixed argument list (paths after `--`), so
//! no agent-given text is ever interpreted as an option.

use std::collections::HashMap;
use std::ffi::OsStr;
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
    let (ok, out, err) = run_raw(root, args, &[], stdin.map(|s| s.as_bytes().to_vec()))?;
    Ok((ok, String::from_utf8_lossy(&out).into_owned(), err))
}

impl GitCli {
    /// The hunks turning blob `old` into `new`, when an earlier diff of this
    /// repository left them in the cache; no process is run.
    pub fn cached_diff(&self, old: &str, new: &str) -> Option<Vec<Hunk>> {
        if old == new {
            return Some(vec![]);
        }
        let key = (self.root.clone(), old.to_string(), new.to_string());
        DIFFS.lock().ok().and_then(|m| m.get(&key).cloned())
    }
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

// ---- Reading a branch through git, and committing beside the user's work ----
//
// The ontology toolset reads pages at a branch's head (never the working tree) and
// writes proposals as commits on their own branches with plumbing only: blobs from
// text, a tree built in a temporary index (GIT_INDEX_FILE), `commit-tree`,
// `update-ref`. The user's HEAD, index and working tree are never touched, and no
// hook runs.

/// A file of a tree: its path from the repository's root, blob id and mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeFile {
    pub path: String,
    pub blob: String,
    pub mode: String,
}

/// Who a commit is by.
#[derive(Debug, Clone)]
pub struct Signature {
    pub name: String,
    pub email: String,
}

/// Runs git with extra environment, feeding `stdin` from another thread (so a large
/// input never deadlocks against a large output), and answers raw bytes.
fn run_raw(
    root: &Path,
    args: &[&str],
    env: &[(&str, &OsStr)],
    stdin: Option<Vec<u8>>,
) -> Result<(bool, Vec<u8>, String)> {
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
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd
        .spawn()
        .map_err(|e| Error::Internal(format!("cannot run git: {e}")))?;
    let writer = match (stdin, child.stdin.take()) {
        (Some(input), Some(mut w)) => Some(std::thread::spawn(move || w.write_all(&input))),
        _ => None,
    };
    let out = child
        .wait_with_output()
        .map_err(|e| Error::Internal(format!("git failed: {e}")))?;
    if let Some(w) = writer {
        match w.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) if !out.status.success() => {
                tracing::debug!(error = %e, "git closed its input early")
            }
            Ok(Err(e)) => return Err(Error::Internal(format!("writing to git: {e}"))),
            Err(_) => return Err(Error::Internal("writing to git panicked".into())),
        }
    }
    Ok((
        out.status.success(),
        out.stdout,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    ))
}

/// A directory of scratch files, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new() -> Result<Scratch> {
        let p = std::env::temp_dir().join(format!("cairn-git-{}", crate::domain::id::new_id()));
        std::fs::create_dir_all(&p)
            .map_err(|e| Error::Internal(format!("cannot create {}: {e}", p.display())))?;
        Ok(Scratch(p))
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

const NO_COMMIT: &str = "0000000000000000000000000000000000000000";

impl GitCli {
    fn plumbing(
        &self,
        args: &[&str],
        env: &[(&str, &OsStr)],
        stdin: Option<Vec<u8>>,
    ) -> Result<Vec<u8>> {
        let (ok, out, err) = run_raw(&self.root, args, env, stdin)?;
        if !ok {
            return Err(Error::Internal(format!(
                "git {} failed: {}",
                args.join(" "),
                err.trim()
            )));
        }
        Ok(out)
    }

    /// Whether `name` is a valid branch name (`git check-ref-format --branch`).
    pub fn valid_branch_name(&self, name: &str) -> Result<bool> {
        if name.starts_with('-') {
            return Ok(false);
        }
        let (ok, _, _) = run(&self.root, &["check-ref-format", "--branch", name], None)?;
        Ok(ok)
    }

    /// The commit a local branch points at; `None` when there is no such branch.
    pub fn branch_commit(&self, branch: &str) -> Result<Option<String>> {
        let rev = format!("refs/heads/{branch}^{{commit}}");
        let (ok, out, _) = run(
            &self.root,
            &["rev-parse", "--verify", "--quiet", "--end-of-options", &rev],
            None,
        )?;
        Ok(ok.then(|| out.trim().to_string()).filter(|s| !s.is_empty()))
    }

    /// The files under `dir` (`""`: the whole tree) at `commit`, recursively.
    pub fn tree_files(&self, commit: &str, dir: &str) -> Result<Vec<TreeFile>> {
        let mut args = vec!["ls-tree", "-r", "-z", "--full-tree", commit];
        if !dir.is_empty() {
            args.extend(["--", dir]);
        }
        let out = self.plumbing(&args, &[], None)?;
        let mut files = Vec::new();
        for rec in out.split(|&b| b == 0).filter(|r| !r.is_empty()) {
            let rec = String::from_utf8_lossy(rec);
            // `<mode> SP <type> SP <object> TAB <path>`
            let Some((meta, path)) = rec.split_once('\t') else {
                continue;
            };
            let mut f = meta.split(' ');
            let (Some(mode), Some(kind), Some(blob)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            if kind == "blob" {
                files.push(TreeFile {
                    path: path.to_string(),
                    blob: blob.to_string(),
                    mode: mode.to_string(),
                });
            }
        }
        Ok(files)
    }

    /// The contents of blobs, in the order asked (`git cat-file --batch`).
    pub fn read_blobs(&self, ids: &[&str]) -> Result<Vec<Vec<u8>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let input: String = ids.iter().map(|id| format!("{id}\n")).collect();
        let out = self.plumbing(&["cat-file", "--batch"], &[], Some(input.into_bytes()))?;
        let mut blobs = Vec::with_capacity(ids.len());
        let mut at = 0;
        for id in ids {
            let nl = out[at..].iter().position(|&b| b == b'\n').map(|i| at + i);
            let Some(nl) = nl else {
                return Err(Error::Internal(format!("git cat-file: no answer for {id}")));
            };
            let header = String::from_utf8_lossy(&out[at..nl]).to_string();
            let size: usize = match header.split(' ').collect::<Vec<_>>().as_slice() {
                [_, "blob", size] => size
                    .parse()
                    .map_err(|_| Error::Internal(format!("git cat-file: {header}")))?,
                _ => {
                    return Err(Error::Internal(format!(
                        "git cat-file: {id} is not a blob ({header})"
                    )))
                }
            };
            let start = nl + 1;
            let end = start + size;
            let Some(body) = out.get(start..end) else {
                return Err(Error::Internal(format!("git cat-file: {id} cut short")));
            };
            blobs.push(body.to_vec());
            at = end + 1;
        }
        Ok(blobs)
    }

    /// Stores texts as blobs (as given: no filters), returning their ids.
    pub fn write_blobs(&self, texts: &[&str]) -> Result<Vec<String>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        let scratch = Scratch::new()?;
        let mut paths = String::new();
        for (i, t) in texts.iter().enumerate() {
            let p = scratch.0.join(format!("{i}"));
            std::fs::write(&p, t.as_bytes())
                .map_err(|e| Error::Internal(format!("cannot write {}: {e}", p.display())))?;
            paths.push_str(&p.to_string_lossy());
            paths.push('\n');
        }
        let out = self.plumbing(
            &["hash-object", "-w", "--no-filters", "--stdin-paths"],
            &[],
            Some(paths.into_bytes()),
        )?;
        let ids: Vec<String> = String::from_utf8_lossy(&out)
            .lines()
            .map(|l| l.trim().to_string())
            .collect();
        if ids.len() != texts.len() {
            return Err(Error::Internal(format!(
                "git hash-object answered {} ids for {} texts",
                ids.len(),
                texts.len()
            )));
        }
        Ok(ids)
    }

    /// A commit whose tree is `parent`'s with `files` (path, blob id) written, made in a
    /// temporary index: HEAD, the index and the working tree are untouched.
    pub fn commit_files(
        &self,
        parent: &str,
        files: &[(&str, &str)],
        message: &str,
        by: &Signature,
    ) -> Result<String> {
        let scratch = Scratch::new()?;
        let index = scratch.0.join("index");
        let env: Vec<(&str, &OsStr)> = vec![("GIT_INDEX_FILE", index.as_os_str())];
        self.plumbing(&["read-tree", "--end-of-options", parent], &env, None)?;
        let mut info = String::new();
        for (path, blob) in files {
            info.push_str(&format!("100644 {blob}\t{path}\n"));
        }
        self.plumbing(
            &["update-index", "--add", "--index-info"],
            &env,
            Some(info.into_bytes()),
        )?;
        let tree = String::from_utf8_lossy(&self.plumbing(&["write-tree"], &env, None)?)
            .trim()
            .to_string();
        let who: Vec<(&str, &OsStr)> = vec![
            ("GIT_AUTHOR_NAME", OsStr::new(&by.name)),
            ("GIT_AUTHOR_EMAIL", OsStr::new(&by.email)),
            ("GIT_COMMITTER_NAME", OsStr::new(&by.name)),
            ("GIT_COMMITTER_EMAIL", OsStr::new(&by.email)),
        ];
        let out = self.plumbing(
            &[
                "commit-tree",
                "--no-gpg-sign",
                &tree,
                "-p",
                parent,
                "-F",
                "-",
            ],
            &who,
            Some(message.as_bytes().to_vec()),
        )?;
        Ok(String::from_utf8_lossy(&out).trim().to_string())
    }

    /// Creates branch `name` at `commit`; fails when the branch exists.
    pub fn create_branch(&self, name: &str, commit: &str) -> Result<()> {
        let r = format!("refs/heads/{name}");
        self.plumbing(
            &[
                "update-ref",
                "-m",
                "cairn: ontology proposal",
                &r,
                commit,
                NO_COMMIT,
            ],
            &[],
            None,
        )?;
        Ok(())
    }

    /// Removes branch `name` if it still points at `commit` (undoing a branch made for
    /// a write that did not commit).
    pub fn delete_branch(&self, name: &str, commit: &str) -> Result<()> {
        let r = format!("refs/heads/{name}");
        self.plumbing(&["update-ref", "-d", &r, commit], &[], None)?;
        Ok(())
    }

    /// True when commit `a` is an ancestor of (or is) commit `b`.
    pub fn is_ancestor(&self, a: &str, b: &str) -> Result<bool> {
        let (ok, _, err) = run(&self.root, &["merge-base", "--is-ancestor", a, b], None)?;
        if !ok && !err.trim().is_empty() {
            // An unknown commit (a proposal's commit pruned away) is no ancestor.
            tracing::debug!(error = %err.trim(), "git merge-base");
        }
        Ok(ok)
    }
}
