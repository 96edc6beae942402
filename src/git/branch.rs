//! Reading a branch through git, and committing beside the user's work.
//!
//! The ontology toolset reads pages at a branch's head (never the working tree) and
//! writes proposals as commits on their own branches with plumbing only: blobs from
//! text (one `fast-import` stream), trees of the folders written (`mktree`),
//! `commit-tree`, `update-ref`. The user's HEAD, index and working tree are never touched, and no
//! hook runs (see `run`).

use std::collections::{BTreeMap, BTreeSet, HashMap};
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

/// The folders a commit writes files into: each folder's new files (name, blob),
/// and every folder on the way to them.
#[derive(Default)]
struct Folders {
    files: HashMap<String, Vec<(String, String)>>,
    /// Every folder above a file (`""` the root excluded), as a path.
    folders: BTreeSet<String>,
}

impl Folders {
    fn add(&mut self, path: &str, blob: &str) {
        let (dir, name) = path.rsplit_once('/').unwrap_or(("", path));
        self.files
            .entry(dir.to_string())
            .or_default()
            .push((name.to_string(), blob.to_string()));
        let mut at = dir;
        while !at.is_empty() {
            self.folders.insert(at.to_string());
            at = at.rsplit_once('/').map(|(d, _)| d).unwrap_or("");
        }
    }

    /// The names of `dir`'s subfolders that hold new files.
    fn children<'a>(&'a self, dir: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.folders.iter().filter_map(move |f| {
            let rest = if dir.is_empty() {
                f.as_str()
            } else {
                f.strip_prefix(dir)?.strip_prefix('/')?
            };
            (!rest.contains('/')).then_some(rest)
        })
    }
}

/// The object id of an `ls-tree` record that is a tree; `None` for anything else
/// (a file a new folder replaces).
fn tree_entry(rec: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(rec);
    let (meta, _) = text.split_once('\t')?;
    let mut f = meta.split(' ');
    let (_, kind, id) = (f.next()?, f.next()?, f.next()?);
    (kind == "tree").then(|| id.to_string())
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

    /// Commits `files` (path, text) on top of `parent` and creates branch `name` at
    /// the commit; fails when the branch exists. HEAD, the index and the working
    /// tree are untouched, and no index is built: the texts become blobs in one
    /// `git fast-import` stream (as given: no filters), each folder the files are in
    /// (and each folder above it) becomes a tree with `git mktree`, its other
    /// entries as `parent` has them, and `commit-tree` and `update-ref` finish. An
    /// import of 100,000 pages once spent most of its git time building a
    /// temporary index of them; fast-import's own trees look names up one by one,
    /// which is slower still for 100,000 files in one folder. Every path and id is
    /// checked before git sees it.
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
        let (parent, message, by) = (parent.to_string(), message.to_string(), by.clone());
        self.blocking(move |g| {
            let blobs = g.write_blobs_now(&files)?;
            let mut dirs = Folders::default();
            for ((path, _), blob) in files.iter().zip(&blobs) {
                dirs.add(path, blob);
            }
            let tree = g.write_tree(&dirs, "", &parent)?;
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
            let commit = String::from_utf8_lossy(&out).trim().to_string();
            oid(&commit)?;
            g.plumbing(
                &[
                    "update-ref",
                    "-m",
                    "cairn: ontology proposal",
                    &branch,
                    &commit,
                    NO_COMMIT,
                ],
                &[],
                None,
            )?;
            Ok(Committed {
                commit,
                files,
                blobs,
            })
        })
        .await
    }

    /// Stores texts as blobs, returning their ids in order: one `git fast-import`
    /// stream into one pack (a few loose objects when there are few), no file per
    /// text; `get-mark` answers each blob's id on its output.
    fn write_blobs_now(&self, files: &[(String, String)]) -> Result<Vec<String>> {
        if files.is_empty() {
            return Ok(Vec::new());
        }
        let size: usize = files.iter().map(|(_, t)| t.len() + 56).sum();
        let mut input = Vec::with_capacity(size);
        for (i, (_, t)) in files.iter().enumerate() {
            input
                .extend_from_slice(format!("blob\nmark :{}\ndata {}\n", i + 1, t.len()).as_bytes());
            input.extend_from_slice(t.as_bytes());
            input.push(b'\n');
        }
        for i in 0..files.len() {
            input.extend_from_slice(format!("get-mark :{}\n", i + 1).as_bytes());
        }
        input.extend_from_slice(b"done\n");
        // (Its heap's trim threshold, which this stream needs raised, is set for every
        // git process: `run::command`.)
        let out = self.plumbing(&["fast-import", "--quiet", "--done"], &[], Some(input))?;
        let ids: Vec<String> = String::from_utf8_lossy(&out)
            .lines()
            .map(|l| l.trim().to_string())
            .collect();
        if ids.len() != files.len() || ids.iter().any(|id| check_oid(id).is_err()) {
            return Err(Error::Internal(format!(
                "git fast-import answered {} ids for {} texts",
                ids.len(),
                files.len()
            )));
        }
        Ok(ids)
    }

    /// The tree of folder `dir` (`""`: the root) with `dirs`' files written into it:
    /// `was` (the folder's tree in the parent, or the parent commit for the root;
    /// `None` for a new folder) with each new file's entry, and each changed
    /// subfolder's new tree, over whatever entry had its name.
    fn write_tree(&self, dirs: &Folders, dir: &str, was: &str) -> Result<String> {
        let mut entries: BTreeMap<Vec<u8>, Vec<u8>> = BTreeMap::new();
        if !was.is_empty() {
            let out = self.plumbing(&["ls-tree", "-z", "--end-of-options", was], &[], None)?;
            for rec in out.split(|&b| b == 0).filter(|r| !r.is_empty()) {
                // `<mode> SP <type> SP <object> TAB <name>`
                if let Some(tab) = rec.iter().position(|&b| b == b'\t') {
                    entries.insert(rec[tab + 1..].to_vec(), rec.to_vec());
                }
            }
        }
        if let Some(files) = dirs.files.get(dir) {
            for (name, blob) in files {
                entries.insert(
                    name.as_bytes().to_vec(),
                    format!("100644 blob {blob}\t{name}").into_bytes(),
                );
            }
        }
        for sub in dirs.children(dir) {
            let path = if dir.is_empty() {
                sub.to_string()
            } else {
                format!("{dir}/{sub}")
            };
            let old = entries
                .get(sub.as_bytes())
                .and_then(|e| tree_entry(e))
                .unwrap_or_default();
            let tree = self.write_tree(dirs, &path, &old)?;
            entries.insert(
                sub.as_bytes().to_vec(),
                format!("040000 tree {tree}\t{sub}").into_bytes(),
            );
        }
        let mut input = Vec::new();
        for e in entries.values() {
            input.extend_from_slice(e);
            input.push(0);
        }
        let out = self.plumbing(&["mktree", "-z"], &[], Some(input))?;
        let tree = String::from_utf8_lossy(&out).trim().to_string();
        oid(&tree)?;
        Ok(tree)
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
