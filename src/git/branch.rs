//! Reading a branch through git, and committing beside the user's work.
//!
//! The ontology toolset reads pages at a branch's head (never the working tree) and
//! writes proposals as commits on their own branches with plumbing only: blobs, tree
//! and commit from text in one `fast-import` stream, then `update-ref`. The user's HEAD, index and working tree are never touched, and no
//! hook runs (see `run`).

use std::ffi::OsStr;

use super::run::{run, run_raw};
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

/// A commit made by [`GitCli::commit_branch`]: its id, and the files it was given
/// with each text's blob id, in order.
#[derive(Debug)]
pub struct Committed {
    pub commit: String,
    pub files: Vec<(String, String)>,
    pub blobs: Vec<String>,
}

/// Who a commit is by.
#[derive(Debug, Clone)]
pub struct Signature {
    pub name: String,
    pub email: String,
}

/// The `fast-import` stream of [`GitCli::commit_branch`]: a blob per text (marks
/// `1..=n`), the commit on `scratch` (mark `n + 1`) from `parent` with a file per
/// text, then every mark's id asked back, in order.
fn import_stream(
    scratch: &str,
    parent: &str,
    files: &[(String, String)],
    message: &str,
    by: &Signature,
) -> Vec<u8> {
    let size: usize = files.iter().map(|(p, t)| t.len() + 2 * p.len() + 80).sum();
    let mut s = Vec::with_capacity(size + message.len() + 200);
    for (i, (_, text)) in files.iter().enumerate() {
        s.extend_from_slice(format!("blob\nmark :{}\ndata {}\n", i + 1, text.len()).as_bytes());
        s.extend_from_slice(text.as_bytes());
        s.push(b'\n');
    }
    let n = files.len() + 1;
    // commit-tree, which made these commits before, drops '<', '>' and line
    // breaks from a name and an address; so does this (fast-import would refuse them).
    let plain = |t: &str| -> String {
        t.chars()
            .filter(|c| !matches!(c, '<' | '>') && !c.is_control())
            .collect()
    };
    s.extend_from_slice(
        format!(
            "commit {scratch}\nmark :{n}\ncommitter {} <{}> now\ndata {}\n",
            plain(&by.name).trim(),
            plain(&by.email).trim(),
            message.len()
        )
        .as_bytes(),
    );
    s.extend_from_slice(message.as_bytes());
    s.extend_from_slice(format!("\nfrom {parent}\n").as_bytes());
    for (i, (path, _)) in files.iter().enumerate() {
        // Quoted, so a path starting with '"' or holding spaces is one path: the
        // checked paths hold no backslash or control character, only '"' needs
        // escaping.
        s.extend_from_slice(
            format!("M 100644 :{} \"{}\"\n", i + 1, path.replace('"', "\\\"")).as_bytes(),
        );
    }
    s.push(b'\n');
    for i in 1..=n {
        s.extend_from_slice(format!("get-mark :{i}\n").as_bytes());
    }
    s.extend_from_slice(b"done\n");
    s
}

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

    /// Commits `files` (path, text) on top of `parent` and creates branch `name` at
    /// the commit; fails when the branch exists. The texts (as given: no filters),
    /// the tree (`parent`'s, with each file written as a regular file over whatever
    /// was at its path) and the commit go through one `git fast-import` stream: no
    /// index is built and no file is written per text (an import of 100,000 pages
    /// once spent most of its git time building a temporary index). fast-import
    /// writes the commit under a scratch ref of its own; one `update-ref`
    /// transaction then creates the branch and removes the scratch ref. HEAD, the
    /// index and the working tree are untouched. Every path and id is checked
    /// before git sees it.
    pub async fn commit_branch(
        &self,
        name: &str,
        parent: &str,
        files: Vec<(String, String)>,
        message: &str,
        by: &Signature,
    ) -> Result<Committed> {
        let branch = branch_ref(name)?;
        oid(parent)?;
        for (path, _) in &files {
            check_path(path)
                .map_err(|e| invalid(&format!("the path '{}'", path.escape_debug()), e))?;
        }
        let scratch = format!("refs/cairn/staging/{}", crate::domain::id::new_id());
        let input = import_stream(&scratch, parent, &files, message, by);
        self.blocking(move |g| {
            let out = g.plumbing(&["fast-import", "--quiet", "--done", "--date-format=now"], &[], Some(input))?;
            let mut ids: Vec<String> = String::from_utf8_lossy(&out)
                .lines()
                .map(|l| l.trim().to_string())
                .collect();
            if ids.len() != files.len() + 1 || ids.iter().any(|id| check_oid(id).is_err()) {
                return Err(Error::Internal(format!(
                    "git fast-import answered {} ids for {} texts and their commit",
                    ids.len(),
                    files.len()
                )));
            }
            let commit = ids.pop().unwrap_or_default();
            let moves = format!("create {branch} {commit}\ndelete {scratch} {commit}\n");
            let made = g.plumbing(
                &["update-ref", "-m", "cairn: ontology proposal", "--stdin"],
                &[],
                Some(moves.into_bytes()),
            );
            if let Err(e) = made {
                // The branch exists (or the ref could not be written): the scratch
                // ref must not stay behind.
                let gone = g.plumbing(&["update-ref", "-d", &scratch, &commit], &[], None);
                if let Err(undo) = gone {
                    tracing::error!(scratch = %scratch, error = %undo, "could not remove a scratch ref");
                }
                return Err(e);
            }
            Ok(Committed {
                commit,
                files,
                blobs: ids,
            })
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
