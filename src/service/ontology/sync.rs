//! Attaching an ontology repository to a project, syncing it, and its status.
//!
//! A sync reads the pages at the base branch's head through git (`ls-tree`, then
//! `cat-file` of the blobs it does not hold yet; never the working tree), resolves
//! them with the core (`load_pages`), classifies the result, and writes in one
//! transaction only what changed: new, changed and removed pages, entities whose
//! fields changed, the axioms of pages whose axioms changed, the problems met, the
//! commit read, and the state of open proposals (merged when the base branch has
//! their commit or their pages, rejected when their branch is gone or their pull
//! request was closed). A page that does not parse is a problem with its file and
//! line; the rest is imported. Everything is computed before the transaction opens;
//! inside it the stored pages are checked to be the ones the work was based on
//! (another process may have synced meanwhile), and the work is redone if not.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::Path;
use std::sync::Arc;

use super::{git_of, repo, Served};
use crate::domain::field::Field;
use crate::domain::id::new_id;
use crate::domain::now;
use crate::domain::ontology::entity::keys;
use crate::domain::ontology::model::{Loaded, LoadedPage};
use crate::domain::ontology::ofn::write_axiom;
use crate::domain::ontology::records::{
    AxiomRecord, EntityRecord, PageRecord, PageState, ProblemRecord, ProposalRecord, ProposalState,
    Repo,
};
use crate::domain::ontology::{EntityKind, Problem};
use crate::domain::ontology_index::{domain_of, Index};
use crate::error::{Error, Result};
use crate::git::{self, GitCli, TreeFile};
use crate::repo_fs;
use crate::service::App;
use crate::store::{self, ontology as db};

/// What `attach` is given.
pub struct Attach {
    pub project_id: String,
    pub repo_path: String,
    pub pages_dir: Option<String>,
    pub base_branch: Option<String>,
    pub github_owner: Option<String>,
    pub github_name: Option<String>,
    /// The binding's version, required to change an existing binding.
    pub version: Option<i64>,
}

/// The binding, whether it was new, and the base branch's head.
pub struct Attached {
    pub repo: Repo,
    pub created: bool,
    pub head: String,
}

/// A repository-relative folder (`""`/`.` for the root), checked as `repo_fs` checks
/// every path and as git's paths are checked (it is handed to git as a pathspec and
/// prefixes every page path a proposal writes into an index).
pub fn pages_dir(raw: &str) -> Result<String> {
    let bad = |e: String| Error::validation(Field::PagesDir, e);
    git::check_text(raw).map_err(bad)?;
    let t = raw.trim();
    if t.is_empty() || t == "." || t == "./" {
        return Ok(String::new());
    }
    let dir = repo_fs::relative(t).map_err(|e| bad(e.to_string()))?;
    git::check_path(&dir).map_err(bad)?;
    Ok(dir)
}

pub async fn attach(app: &App, a: Attach) -> Result<Attached> {
    let settings = &app.config.ontology;
    let path = Path::new(&a.repo_path);
    if !path.is_absolute() {
        return Err(Error::validation(
            Field::RepoPath,
            "must be an absolute path to a git work tree",
        ));
    }
    let dir = pages_dir(a.pages_dir.as_deref().unwrap_or("pages"))?;
    let base = a
        .base_branch
        .clone()
        .unwrap_or_else(|| settings.github_base_branch.clone());
    git::check_branch(&base).map_err(|e| Error::validation(Field::BaseBranch, e))?;
    let git = GitCli::open(path).await?;
    let Some(head) = git.branch_commit(&base).await? else {
        return Err(Error::validation(
            Field::BaseBranch,
            format!(
                "the repository at {} has no branch '{base}': name an existing branch",
                git.root().display()
            ),
        ));
    };
    let (owner, name) = match (a.github_owner, a.github_name) {
        (None, None) => (
            settings.github_repo_owner.clone(),
            settings.github_repo_name.clone(),
        ),
        (Some(o), Some(n)) => (Some(o), Some(n)),
        (Some(_), None) => {
            return Err(Error::validation(
                Field::GithubName,
                format!("is required with {}", Field::GithubOwner),
            ))
        }
        (None, Some(_)) => {
            return Err(Error::validation(
                Field::GithubOwner,
                format!("is required with {}", Field::GithubName),
            ))
        }
    };
    for (k, v) in [(Field::GithubOwner, &owner), (Field::GithubName, &name)] {
        if let Some(v) = v {
            if !crate::github::valid_name(v) {
                return Err(Error::validation(
                    k,
                    format!("'{v}' is not a GitHub name (letters, digits, '-', '_', '.')"),
                ));
            }
        }
    }
    let ts = now();
    let mut tx = app.store.write().await?;
    if !store::project::exists(&mut tx, &a.project_id).await? {
        return Err(Error::not_found("project", a.project_id));
    }
    let mut repo = Repo {
        id: new_id(),
        project_id: a.project_id.clone(),
        repo_path: git.root().to_string_lossy().into_owned(),
        pages_dir: dir,
        base_branch: base,
        github_owner: owner,
        github_name: name,
        synced_commit: None,
        synced_at: None,
        version: 1,
        created_at: ts.clone(),
        updated_at: ts.clone(),
    };
    let created = match db::repo_of(&mut tx, &a.project_id).await? {
        None => {
            db::insert_repo(&mut tx, &repo).await?;
            true
        }
        Some(old) => {
            let Some(v) = a.version else {
                return Err(Error::invalid(format!(
                    "project {} already has an ontology repository ({}, at version {}): pass version to change it",
                    a.project_id, old.repo_path, old.version
                )));
            };
            repo.id = old.id;
            repo.created_at = old.created_at;
            repo.synced_commit = old
                .synced_commit
                .filter(|_| old.repo_path == repo.repo_path && old.pages_dir == repo.pages_dir);
            repo.synced_at = old.synced_at;
            repo.version = db::update_repo(&mut tx, &repo, v).await?;
            false
        }
    };
    tx.commit().await?;
    Ok(Attached {
        repo,
        created,
        head,
    })
}

/// Counts of rows a sync wrote.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Changes {
    pub added: usize,
    pub changed: usize,
    pub removed: usize,
    pub unchanged: usize,
}

/// What a sync did.
pub struct SyncReport {
    pub commit: String,
    pub previous: Option<String>,
    pub pages: Changes,
    pub entities: Changes,
    /// Pages whose axioms were rewritten.
    pub axiom_pages: usize,
    pub axioms: usize,
    /// Ordinary Logseq pages (no OntologyBlock).
    pub plain_pages: usize,
    pub problems: Vec<Problem>,
    /// Proposals whose state changed: (id, state).
    pub decided: Vec<(String, ProposalState)>,
    /// Proposals whose pull request could not be read (id, why).
    pub unreachable: Vec<(String, String)>,
    pub served: Arc<Served>,
}

/// A markdown file at the commit, read or not.
struct File {
    tree: TreeFile,
    /// `None` when the blob is stored already (its text comes from the store).
    text: Option<std::result::Result<String, String>>,
}

/// A sync's computed outcome, before anything is written.
struct Plan {
    based_on: Vec<(String, String, i64)>,
    pages: Vec<(String, String, String, PageState, Option<String>)>,
    entities: Vec<EntityRecord>,
    axioms: HashMap<String, Vec<AxiomRecord>>,
    problems: Vec<Problem>,
    plain: usize,
    /// `None` when no page changed since the last sync: nothing is read, classified
    /// or rewritten, and the cached index stays valid.
    index: Option<Index>,
}

fn is_page(f: &TreeFile) -> bool {
    f.path.to_ascii_lowercase().ends_with(".md")
}

/// Reads the pages at `commit` and builds everything the sync will write.
async fn plan(app: &App, repo: &Repo, git: &GitCli, commit: &str) -> Result<Plan> {
    let tree = git.tree_files(commit, &repo.pages_dir).await?;
    let stored = {
        let mut c = app.store.read().await?;
        db::pages(&mut c, &repo.project_id).await?
    };
    let known: HashMap<&str, &PageRecord> = stored.iter().map(|p| (p.path.as_str(), p)).collect();
    let mut problems = Vec::new();
    let mut files: Vec<File> = Vec::new();
    for t in tree.into_iter().filter(is_page) {
        if repo_fs::relative(&t.path).ok().as_deref() != Some(t.path.as_str())
            || git::check_path(&t.path).is_err()
        {
            problems.push(Problem {
                file: t.path.clone(),
                line: 0,
                column: 0,
                message: "the path is not a plain repository path; the page is skipped".into(),
            });
            continue;
        }
        if t.mode == "120000" {
            problems.push(Problem {
                file: t.path.clone(),
                line: 0,
                column: 0,
                message: "a symbolic link, not a page; skipped".into(),
            });
            continue;
        }
        // Read unread: a page of hundreds of megabytes is content anyone with a pull
        // request can commit.
        let max = app.config.ontology.max_document;
        if t.size > max {
            problems.push(Problem {
                file: t.path.clone(),
                line: 0,
                column: 0,
                message: format!(
                    "the page is {} bytes, at most {max} are read (max_document_mib in [ontology] of the config file); skipped",
                    t.size
                ),
            });
            continue;
        }
        files.push(File {
            tree: t,
            text: None,
        });
    }
    let need: Vec<usize> = (0..files.len())
        .filter(|&i| {
            known
                .get(files[i].tree.path.as_str())
                .is_none_or(|p| p.blob_sha != files[i].tree.blob)
        })
        .collect();
    let based_on: Vec<(String, String, i64)> = stored
        .iter()
        .map(|p| (p.path.clone(), p.blob_sha.clone(), p.version))
        .collect();
    if need.is_empty() && files.len() == stored.len() && repo.synced_commit.is_some() {
        return Ok(Plan {
            based_on,
            pages: Vec::new(),
            entities: Vec::new(),
            axioms: HashMap::new(),
            problems,
            plain: 0,
            index: None,
        });
    }
    let ids: Vec<&str> = need.iter().map(|&i| files[i].tree.blob.as_str()).collect();
    let blobs = git.read_blobs(&ids).await?;
    for (&i, bytes) in need.iter().zip(blobs) {
        files[i].text = Some(
            String::from_utf8(bytes).map_err(|_| "the page is not UTF-8 text; skipped".to_string()),
        );
    }
    let mut texts: HashMap<String, String> = HashMap::new();
    if files.iter().any(|f| f.text.is_none()) {
        let mut c = app.store.read().await?;
        let wanted: HashSet<&str> = files
            .iter()
            .filter(|f| f.text.is_none())
            .map(|f| f.tree.path.as_str())
            .collect();
        for (p, t) in db::page_texts(&mut c, &repo.project_id).await? {
            if wanted.contains(p.as_str()) {
                texts.insert(p, t);
            }
        }
    }
    for f in &mut files {
        match f.text.take() {
            Some(Ok(t)) => {
                texts.insert(f.tree.path.clone(), t);
            }
            Some(Err(why)) => {
                problems.push(Problem {
                    file: f.tree.path.clone(),
                    line: 0,
                    column: 0,
                    message: why,
                });
                f.text = Some(Err(String::new()));
            }
            None if !texts.contains_key(&f.tree.path) => {
                // Stored with this blob a moment ago, gone now: another sync removed
                // it; read it from git.
                let b = git.read_blobs(&[f.tree.blob.as_str()]).await?;
                let t = b
                    .into_iter()
                    .next()
                    .map(String::from_utf8)
                    .and_then(|r| r.ok())
                    .unwrap_or_default();
                texts.insert(f.tree.path.clone(), t);
            }
            None => {}
        }
    }
    let sources: Vec<(String, String)> = files
        .iter()
        .filter_map(|f| {
            texts
                .get(&f.tree.path)
                .map(|t| (f.tree.path.clone(), t.clone()))
        })
        .collect();
    let blobs_of: HashMap<String, String> = files
        .iter()
        .map(|f| (f.tree.path.clone(), f.tree.blob.clone()))
        .collect();
    let unreadable: HashSet<String> = files
        .iter()
        .filter(|f| matches!(f.text, Some(Err(_))))
        .map(|f| f.tree.path.clone())
        .collect();
    // Parsing every page, classifying and writing the axioms' rows take time in
    // proportion to the repository: the blocking pool's, before any transaction.
    tokio::task::spawn_blocking(move || {
        let Loaded {
            ontology,
            pages,
            problems: loaded,
            skipped,
        } = super::load_texts(&sources);
        let index = Index::build(ontology);
        problems.extend(loaded.iter().cloned());
        build_plan(
            (pages, loaded, skipped),
            index,
            problems,
            texts,
            blobs_of,
            unreadable,
            based_on,
        )
    })
    .await
    .map_err(|e| Error::Internal(format!("loading the pages: {e}")))
}

/// What `load_pages` said besides the ontology: the pages that parsed (with the
/// entity each declares), the problems, the plain pages.
type PageReport = (Vec<LoadedPage>, Vec<Problem>, Vec<String>);

fn build_plan(
    (parsed_pages, _, skipped): PageReport,
    index: Index,
    problems: Vec<Problem>,
    texts: HashMap<String, String>,
    blobs_of: HashMap<String, String>,
    unreadable: HashSet<String>,
    based_on: Vec<(String, String, i64)>,
) -> Plan {
    let parsed: HashMap<&str, Option<&String>> = parsed_pages
        .iter()
        .map(|p| (p.file.as_str(), p.iri.as_ref()))
        .collect();
    let plain: HashSet<&str> = skipped.iter().map(String::as_str).collect();
    let mut pages = Vec::new();
    for (path, blob) in &blobs_of {
        let (state, iri) = if unreadable.contains(path) {
            (PageState::Error, None)
        } else if plain.contains(path.as_str()) {
            (PageState::Plain, None)
        } else {
            match parsed.get(path.as_str()) {
                Some(Some(iri))
                    if index
                        .ontology
                        .entity(iri)
                        .and_then(|e| e.origin.as_ref())
                        .is_some_and(|o| &o.file == path) =>
                {
                    (PageState::Entity, Some((*iri).clone()))
                }
                // A block naming an entity another page describes already, or one
                // that did not read: reported among the problems.
                _ => (PageState::Error, None),
            }
        };
        let text = texts.get(path).cloned().unwrap_or_default();
        pages.push((path.clone(), blob.clone(), text, state, iri));
    }
    pages.sort_by(|a, b| a.0.cmp(&b.0));
    let o = &index.ontology;
    let mut entities = Vec::new();
    for (iri, e) in &o.entities {
        let m = &e.meta;
        let get = |k: &str| {
            m.get(k)
                .map(str::trim)
                .filter(|v| !v.is_empty())
                .map(str::to_string)
        };
        entities.push(EntityRecord {
            id: String::new(),
            // Filled with the page's row id when written.
            page_id: e.origin.as_ref().map(|o| o.file.clone()),
            iri: iri.clone(),
            kind: match e.kind {
                EntityKind::Class => "class",
                EntityKind::ObjectProperty => "property",
                EntityKind::Individual => "individual",
            }
            .into(),
            term_id: get(keys::TERM_ID),
            preferred_term: get(keys::PREFERRED_TERM),
            domain: Some(domain_of(o, iri)).filter(|d| !d.is_empty()),
            status: get(keys::STATUS),
            definition: get(keys::DEFINITION),
            alt_terms: Some(m.alt_terms().join(", ")).filter(|s| !s.is_empty()),
            physicality: get(keys::PHYSICALITY),
            role: get(keys::ROLE),
            maturity: get(keys::MATURITY),
            quality_score: m.quality_score().map(f64::from),
            authority_score: m.authority_score().map(f64::from),
            last_updated: get(keys::LAST_UPDATED),
            line: e.origin.as_ref().map(|o| o.line as i64),
            version: 0,
        });
    }
    let mut axioms: HashMap<String, Vec<AxiomRecord>> = HashMap::new();
    for s in &o.axioms {
        let ofn = write_axiom(&s.axiom);
        let kind = ofn.split('(').next().unwrap_or_default().to_string();
        axioms
            .entry(s.origin.file.clone())
            .or_default()
            .push(AxiomRecord {
                line: s.origin.line as i64,
                kind,
                ofn,
            });
    }
    Plan {
        based_on,
        pages,
        entities,
        axioms,
        problems,
        plain: plain.len(),
        index: Some(index),
    }
}

/// Decides the state of open proposals against the base branch at `commit`.
async fn decisions(
    app: &App,
    repo: &Repo,
    git: &GitCli,
    commit: &str,
    at_base: &HashMap<String, String>,
) -> Result<(Vec<(ProposalRecord, ProposalState)>, Vec<(String, String)>)> {
    let open = {
        let mut c = app.store.read().await?;
        let (rows, _) = db::proposals(
            &mut c,
            &repo.project_id,
            &[ProposalState::Staged, ProposalState::Pushed],
            10_000,
            0,
        )
        .await?;
        let mut out = Vec::with_capacity(rows.len());
        for p in rows {
            let files = db::proposal_blobs(&mut c, &p.id).await?;
            out.push((p, files));
        }
        out
    };
    let mut decided = Vec::new();
    let mut unreachable = Vec::new();
    for (p, files) in open {
        let landed = !files.is_empty()
            && files
                .iter()
                .all(|(path, blob)| at_base.get(path) == Some(blob));
        if landed || git.is_ancestor(&p.commit_sha, commit).await? {
            decided.push((p, ProposalState::Merged));
            continue;
        }
        if let (Some(n), ProposalState::Pushed) = (p.pr_number, p.state) {
            match super::github::pull_state(app, repo, n).await? {
                Ok(crate::github::PullState::Merged) => {
                    decided.push((p, ProposalState::Merged));
                    continue;
                }
                Ok(crate::github::PullState::Closed) => {
                    decided.push((p, ProposalState::Rejected));
                    continue;
                }
                Ok(crate::github::PullState::Open) => continue,
                Err(why) => unreachable.push((p.id.clone(), why)),
            }
        }
        if git.branch_commit(&p.branch).await?.is_none() {
            decided.push((p, ProposalState::Rejected));
        }
    }
    Ok((decided, unreachable))
}

/// Syncs the project's ontology from its base branch.
pub async fn sync(app: &App, project_id: &str) -> Result<SyncReport> {
    for _attempt in 0..3 {
        let repo = repo(app, project_id).await?;
        let git = git_of(&repo)?;
        let Some(commit) = git.branch_commit(&repo.base_branch).await? else {
            return Err(Error::invalid(format!(
                "the ontology repository has no branch '{}' any more: attach again with {}",
                repo.base_branch,
                Field::BaseBranch
            )));
        };
        let plan = plan(app, &repo, &git, &commit).await?;
        let at_base: HashMap<String, String> = plan
            .pages
            .iter()
            .map(|p| (p.0.clone(), p.1.clone()))
            .collect();
        let (decide, unreachable) = decisions(app, &repo, &git, &commit, &at_base).await?;
        if let Some(report) = write(app, &repo, &commit, plan, decide, unreachable).await? {
            return Ok(report);
        }
    }
    Err(Error::Busy)
}

/// Writes a plan in one transaction; `None` when the stored pages changed since the
/// plan was made (another sync ran): the caller plans again.
async fn write(
    app: &App,
    repo: &Repo,
    commit: &str,
    plan: Plan,
    decide: Vec<(ProposalRecord, ProposalState)>,
    unreachable: Vec<(String, String)>,
) -> Result<Option<SyncReport>> {
    let pid = repo.project_id.as_str();
    let ts = now();
    let mut tx = app.store.write().await?;
    let stored = db::pages(&mut tx, pid).await?;
    let now_based: Vec<(String, String, i64)> = stored
        .iter()
        .map(|p| (p.path.clone(), p.blob_sha.clone(), p.version))
        .collect();
    if now_based != plan.based_on {
        tx.rollback().await?;
        return Ok(None);
    }
    let Some(current) = db::repo_of(&mut tx, pid).await? else {
        return Err(Error::invalid(format!(
            "project {pid}'s ontology repository was detached during the sync"
        )));
    };
    if current.repo_path != repo.repo_path || current.pages_dir != repo.pages_dir {
        tx.rollback().await?;
        return Ok(None);
    }
    let Some(index) = plan.index else {
        return unchanged(app, repo, commit, tx, &stored, decide, unreachable)
            .await
            .map(Some);
    };
    let mut pages = Changes::default();
    let by_path: HashMap<&str, &PageRecord> = stored.iter().map(|p| (p.path.as_str(), p)).collect();
    let mut page_id: HashMap<String, String> = HashMap::new();
    // New rows are gathered and written a few hundred to a statement (a sync of
    // 100,000 pages spent most of its time in one statement per row).
    let new_ids: Vec<String> = plan
        .pages
        .iter()
        .map(|p| match by_path.get(p.0.as_str()) {
            Some(_) => String::new(),
            None => new_id(),
        })
        .collect();
    let mut new_pages = Vec::new();
    for ((path, blob, text, state, iri), id) in plan.pages.iter().zip(&new_ids) {
        let row = db::NewPage {
            id: "",
            project_id: pid,
            path,
            blob_sha: blob,
            content: text,
            iri: iri.as_deref(),
            state: *state,
            now: &ts,
        };
        match by_path.get(path.as_str()) {
            Some(old) if old.blob_sha == *blob && old.state == *state && old.iri == *iri => {
                pages.unchanged += 1;
                page_id.insert(path.clone(), old.id.clone());
            }
            Some(old) => {
                db::update_page(&mut tx, &db::NewPage { id: &old.id, ..row }, old.version).await?;
                pages.changed += 1;
                page_id.insert(path.clone(), old.id.clone());
            }
            None => {
                new_pages.push(db::NewPage { id, ..row });
                pages.added += 1;
                page_id.insert(path.clone(), id.clone());
            }
        }
    }
    db::insert_pages(&mut tx, &new_pages).await?;
    // Entities, by IRI.
    let mut entities = Changes::default();
    let old_entities: HashMap<String, EntityRecord> = db::entities(&mut tx, pid)
        .await?
        .into_iter()
        .map(|e| (e.iri.clone(), e))
        .collect();
    let kept: HashSet<&str> = plan.entities.iter().map(|e| e.iri.as_str()).collect();
    let mut new_entities = Vec::new();
    for e in &plan.entities {
        let mut e = e.clone();
        e.page_id = e.page_id.as_ref().and_then(|f| page_id.get(f)).cloned();
        match old_entities.get(&e.iri) {
            Some(old) if old.same_fields(&e) => entities.unchanged += 1,
            Some(old) => {
                e.id = old.id.clone();
                e.version = old.version;
                db::update_entity(&mut tx, &e, &ts).await?;
                entities.changed += 1;
            }
            None => {
                e.id = new_id();
                new_entities.push(e);
                entities.added += 1;
            }
        }
    }
    db::insert_entities(&mut tx, pid, &new_entities, &ts).await?;
    for (iri, old) in &old_entities {
        if !kept.contains(iri.as_str()) {
            db::delete_entity(&mut tx, &old.id, old.version).await?;
            entities.removed += 1;
        }
    }
    // Axioms, per page.
    let mut old_axioms: HashMap<String, Vec<AxiomRecord>> = HashMap::new();
    for (page, a) in db::axioms(&mut tx, pid).await? {
        old_axioms.entry(page).or_default().push(a);
    }
    let mut axiom_count = 0;
    let mut rewritten: Vec<(&str, &[AxiomRecord])> = Vec::new();
    for (path, id) in &page_id {
        let want = plan.axioms.get(path).map(Vec::as_slice).unwrap_or(&[]);
        axiom_count += want.len();
        let have = old_axioms.get(id).map(Vec::as_slice).unwrap_or(&[]);
        if want != have {
            rewritten.push((id.as_str(), want));
        }
    }
    let axiom_pages = rewritten.len();
    db::replace_axioms_of(&mut tx, pid, &rewritten).await?;
    // Pages gone from the branch (their axioms go with them).
    let present: HashSet<&str> = plan.pages.iter().map(|p| p.0.as_str()).collect();
    for old in &stored {
        if !present.contains(old.path.as_str()) {
            db::delete_page(&mut tx, &old.id, old.version).await?;
            pages.removed += 1;
        }
    }
    let problems: Vec<ProblemRecord> = plan
        .problems
        .iter()
        .map(|p| ProblemRecord {
            file: p.file.clone(),
            line: p.line as i64,
            column: p.column as i64,
            message: p.message.clone(),
        })
        .collect();
    db::replace_problems(&mut tx, pid, &problems).await?;
    let mut decided = Vec::new();
    for (p, state) in decide {
        db::decide(&mut tx, &p.id, p.version, state, &ts).await?;
        decided.push((p.id, state));
    }
    db::record_sync(&mut tx, &repo.id, commit, &ts).await?;
    let generation = db::generation(&mut tx, pid).await?;
    tx.commit().await?;
    let served = Arc::new(Served { generation, index });
    app.ontology.put(pid, served.clone());
    Ok(Some(SyncReport {
        commit: commit.to_string(),
        previous: repo.synced_commit.clone(),
        pages,
        entities,
        axiom_pages,
        axioms: axiom_count,
        plain_pages: plan.plain,
        problems: plan.problems,
        decided,
        unreachable,
        served,
    }))
}

/// Finishes a sync that found no page changed: only the open proposals' states and
/// the commit read are written; the stored problems are reported again.
async fn unchanged(
    app: &App,
    repo: &Repo,
    commit: &str,
    mut tx: crate::store::Tx,
    stored: &[PageRecord],
    decide: Vec<(ProposalRecord, ProposalState)>,
    unreachable: Vec<(String, String)>,
) -> Result<SyncReport> {
    let pid = repo.project_id.as_str();
    let ts = now();
    let mut decided = Vec::new();
    for (p, state) in decide {
        db::decide(&mut tx, &p.id, p.version, state, &ts).await?;
        decided.push((p.id, state));
    }
    if repo.synced_commit.as_deref() != Some(commit) || !decided.is_empty() {
        db::record_sync(&mut tx, &repo.id, commit, &ts).await?;
    }
    let (kinds, axioms) = db::counts(&mut tx, pid).await?;
    let problems = db::problems(&mut tx, pid).await?;
    tx.commit().await?;
    let (_, served) = super::served(app, pid).await?;
    let entities: i64 = kinds.iter().map(|(_, n)| n).sum();
    let plain = stored
        .iter()
        .filter(|p| p.state == PageState::Plain)
        .count();
    Ok(SyncReport {
        commit: commit.to_string(),
        previous: repo.synced_commit.clone(),
        pages: Changes {
            unchanged: stored.len(),
            ..Changes::default()
        },
        entities: Changes {
            unchanged: entities as usize,
            ..Changes::default()
        },
        axiom_pages: 0,
        axioms: axioms as usize,
        plain_pages: plain,
        problems: problems
            .into_iter()
            .map(|p| Problem {
                file: p.file,
                line: p.line as usize,
                column: p.column as usize,
                message: p.message,
            })
            .collect(),
        decided,
        unreachable,
        served,
    })
}

/// A project's ontology at a glance.
pub struct Status {
    pub repo: Repo,
    /// The base branch's head now (ahead of `synced_commit` when a sync is due).
    pub head: Option<String>,
    pub kinds: BTreeMap<String, i64>,
    pub axioms: i64,
    pub problems: Vec<ProblemRecord>,
    pub proposals: BTreeMap<String, i64>,
}

pub async fn status(app: &App, project_id: &str) -> Result<Status> {
    let repo = repo(app, project_id).await?;
    let head = match git_of(&repo) {
        Ok(g) => g.branch_commit(&repo.base_branch).await.ok().flatten(),
        Err(_) => None,
    };
    let mut c = app.store.read().await?;
    let (kinds, axioms) = db::counts(&mut c, project_id).await?;
    let problems = db::problems(&mut c, project_id).await?;
    let proposals = db::proposal_counts(&mut c, project_id).await?;
    Ok(Status {
        repo,
        head,
        kinds: kinds.into_iter().collect(),
        axioms,
        problems,
        proposals: proposals.into_iter().collect(),
    })
}

/// A project's proposals, newest first, optionally in some states only, and how many
/// match in all.
pub async fn proposals(
    app: &App,
    project_id: &str,
    states: &[ProposalState],
    limit: i64,
    offset: i64,
) -> Result<(Vec<ProposalRecord>, i64)> {
    repo(app, project_id).await?;
    let mut c = app.store.read().await?;
    Ok(db::proposals(&mut c, project_id, states, limit, offset).await?)
}
