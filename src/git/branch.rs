//! Reading a branch through git, and committing beside the user's work.
//!
//! The ontology toolset reads pages at a branch's head (never the working tree) and
//! writes proposals as commits on their own branches with plumbing only: blobs from
//! text (one `fast-import` stream), a tree built in a temporary index (`GIT_INDEX_FILE`), `commit-tree`,
//! `update-ref`. The user's HEAD, index and working tree are never touched, and no
//! hook runs (see `run`).

use std::ffi::OsStr;

use super::run::{run, run_raw, Scratch};
use super::{check_branch, check_oid, check_path, GitCli};
use crate::error::{Error, Result};

/// A file of a tree: its path from the repository's root, blob id and mode.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeFile {
    pub path: String,
    pub blob: String,
    pub mode: String,
    /// The blob's size in bytes, so a reader can refuse a huge one unread.
    pub size: u64,
}

/// Who a commit is by.
#[derive(Debug, Clone)]
pub struct Signature {
    pub name: String,
    pub email: String,
}

const NO_COMMIT: &str = "0000000000000000000000000000000000000000";

fn invalid(what: &str, why: String) -> Error {
    Error::invalid(format!("{what} {why}"))
}

fn branch_ref(name: &str) -> Result<String> {
    check_branch(name).map_err(Error::invalid)?;
    Ok(format!("refs/heads/{name}"))
}

fn oid(id: &str) -> Result<()> {
    check_oid(id).map_err(Error::invalid)
}

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

    /// The commit a local branch points at; `None` when there is no such branch.
    pub async fn branch_commit(&self, branch: &str) -> Result<Option<String>> {
        let rev = format!("{}^{{commit}}", branch_ref(branch)?);
        self.blocking(move |g| {
            let (ok, out, _) = run(
                &g.root,
                &["rev-parse", "--verify", "--quiet", "--end-of-options", &rev],
                None,
            )?;
            Ok(ok.then(|| out.trim().to_string()).filter(|s| !s.is_empty()))
        })
        .await
    }

    /// The files under `dir` (`""`: the whole tree) at `commit`, recursively.
    pub async fn tree_files(&self, commit: &str, dir: &str) -> Result<Vec<TreeFile>> {
        oid(commit)?;
        if !dir.is_empty() {
            check_path(dir).map_err(|e| invalid("the folder", e))?;
        }
        let (commit, dir) = (commit.to_string(), dir.to_string());
        self.blocking(move |g| {
            let mut args = vec!["ls-tree", "-r", "-z", "-l", "--full-tree", commit.as_str()];
            if !dir.is_empty() {
                args.extend(["--", dir.as_str()]);
            }
            let out = g.plumbing(&args, &[], None)?;
            let mut files = Vec::new();
            for rec in out.split(|&b| b == 0).filter(|r| !r.is_empty()) {
                let rec = String::from_utf8_lossy(rec);
                // `<mode> SP <type> SP <object> SP+ <size> TAB <path>`
                let Some((meta, path)) = rec.split_once('\t') else {
                    continue;
                };
                let mut f = meta.split_whitespace();
                let (Some(mode), Some(kind), Some(blob), Some(size)) =
                    (f.next(), f.next(), f.next(), f.next())
                else {
                    continue;
                };
                if kind == "blob" {
                    files.push(TreeFile {
                        path: path.to_string(),
                        blob: blob.to_string(),
                        mode: mode.to_string(),
                        size: size.parse().unwrap_or(u64::MAX),
                    });
                }
            }
            Ok(files)
        })
        .await
    }

    /// The contents of blobs, in the order asked (`git cat-file --batch`).
    pub async fn read_blobs(&self, ids: &[&str]) -> Result<Vec<Vec<u8>>> {
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        for id in ids {
            oid(id)?;
        }
        let ids: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
        self.blocking(move |g| g.read_blobs_now(&ids)).await
    }

    fn read_blobs_now(&self, ids: &[String]) -> Result<Vec<Vec<u8>>> {
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

    /// Stores texts as blobs (as given: no filters), returning their ids. One
    /// `git fast-import` process streams them all into one pack (a few loose objects
    /// when there are few), with no file per text: an import of 100,000 pages once
    /// spent most of its time writing a loose object and a scratch file for each.
    /// `get-mark` answers each blob's id, in order, on its output.
    pub async fn write_blobs(&self, texts: Vec<String>) -> Result<Vec<String>> {
        if texts.is_empty() {
            return Ok(Vec::new());
        }
        self.blocking(move |g| {
            let size: usize = texts.iter().map(|t| t.len() + 40).sum();
            let mut input = Vec::with_capacity(size + texts.len() * 16);
            for (i, t) in texts.iter().enumerate() {
                input.extend_from_slice(
                    format!("blob\nmark :{}\ndata {}\n", i + 1, t.len()).as_bytes(),
                );
                input.extend_from_slice(t.as_bytes());
                input.push(b'\n');
            }
            for i in 0..texts.len() {
                input.extend_from_slice(format!("get-mark :{}\n", i + 1).as_bytes());
            }
            input.extend_from_slice(b"done\n");
            let out = g.plumbing(&["fast-import", "--quiet", "--done"], &[], Some(input))?;
            let ids: Vec<String> = String::from_utf8_lossy(&out)
                .lines()
                .map(|l| l.trim().to_string())
                .collect();
            if ids.len() != texts.len() || ids.iter().any(|id| check_oid(id).is_err()) {
                return Err(Error::Internal(format!(
                    "git fast-import answered {} ids for {} texts",
                    ids.len(),
                    texts.len()
                )));
            }
            Ok(ids)
        })
        .await
    }

    /// A commit whose tree is `parent`'s with `files` (path, blob id) written as
    /// regular files, made in a temporary index: HEAD, the index and the working tree
    /// are untouched. Every path and id is checked before git sees it, so an entry
    /// of `--index-info` is exactly one file.
    pub async fn commit_files(
        &self,
        parent: &str,
        files: &[(&str, &str)],
        message: &str,
        by: &Signature,
    ) -> Result<String> {
        oid(parent)?;
        let mut info = String::new();
        for (path, blob) in files {
            check_path(path)
                .map_err(|e| invalid(&format!("the path '{}'", path.escape_debug()), e))?;
            oid(blob)?;
            info.push_str(&format!("100644 {blob}\t{path}\n"));
        }
        let (parent, message, by) = (parent.to_string(), message.to_string(), by.clone());
        self.blocking(move |g| {
            let scratch = Scratch::new()?;
            let index = scratch.0.join("index");
            let env: Vec<(&str, &OsStr)> = vec![("GIT_INDEX_FILE", index.as_os_str())];
            g.plumbing(&["read-tree", "--end-of-options", &parent], &env, None)?;
            g.plumbing(
                &["update-index", "--add", "--index-info"],
                &env,
                Some(info.into_bytes()),
            )?;
            let tree = String::from_utf8_lossy(&g.plumbing(&["write-tree"], &env, None)?)
                .trim()
                .to_string();
            let who: Vec<(&str, &OsStr)> = vec![
                ("GIT_AUTHOR_NAME", OsStr::new(&by.name)),
                ("GIT_AUTHOR_EMAIL", OsStr::new(&by.email)),
                ("GIT_COMMITTER_NAME", OsStr::new(&by.name)),
                ("GIT_COMMITTER_EMAIL", OsStr::new(&by.email)),
            ];
            let out = g.plumbing(
                &[
                    "commit-tree",
                    "--no-gpg-sign",
                    &tree,
                    "-p",
                    &parent,
                    "-F",
                    "-",
                ],
                &who,
                Some(message.into_bytes()),
            )?;
            Ok(String::from_utf8_lossy(&out).trim().to_string())
        })
        .await
    }

    /// Creates branch `name` at `commit`; fails when the branch exists.
    pub async fn create_branch(&self, name: &str, commit: &str) -> Result<()> {
        let r = branch_ref(name)?;
        oid(commit)?;
        let commit = commit.to_string();
        self.blocking(move |g| {
            g.plumbing(
                &[
                    "update-ref",
                    "-m",
                    "cairn: ontology proposal",
                    &r,
                    &commit,
                    NO_COMMIT,
                ],
                &[],
                None,
            )?;
            Ok(())
        })
        .await
    }

    /// Removes branch `name` if it still points at `commit` (undoing a branch made for
    /// a proposal that was not staged).
    pub async fn delete_branch(&self, name: &str, commit: &str) -> Result<()> {
        let r = branch_ref(name)?;
        oid(commit)?;
        let commit = commit.to_string();
        self.blocking(move |g| {
            g.plumbing(&["update-ref", "-d", &r, &commit], &[], None)?;
            Ok(())
        })
        .await
    }

    /// True when commit `a` is an ancestor of (or is) commit `b`.
    pub async fn is_ancestor(&self, a: &str, b: &str) -> Result<bool> {
        oid(a)?;
        oid(b)?;
        let (a, b) = (a.to_string(), b.to_string());
        self.blocking(move |g| {
            let (ok, _, err) = run(&g.root, &["merge-base", "--is-ancestor", &a, &b], None)?;
            if !ok && !err.trim().is_empty() {
                // An unknown commit (a proposal's commit pruned away) is no ancestor.
                tracing::debug!(error = %err.trim(), "git merge-base");
            }
            Ok(ok)
        })
        .await
    }
}
