//! Use cases of the `ontology` toolset (docs/ontology.md): attaching a project's ontology
//! repository and syncing it ([`sync`]), the read path ([`read`]: discover, read,
//! query, traverse), proposals and hypothetical axioms checked by the reasoner
//! ([`propose`]; the one shape of an axiom they take, [`axioms`]), a checked proposal's term id, commit, branch and row ([`stage`]),
//! OWL functional syntax in and out ([`interop`]), and pull requests on GitHub
//! ([`github`]).
//!
//! A synced ontology is served from an [`Index`] (classification, query graph,
//! keyword index) built from the stored page texts and cached per project; a cached
//! index is reused only while the project's ontology generation (moved by every
//! page row a sync writes, from any process) is the one it was built at.
//!
//! Git and GitHub work (processes, on the blocking pool) never happens inside a
//! write transaction (see [`stage`] for how a proposal keeps its branch and its row
//! together without one). Nothing here knows MCP or SQL.

pub mod axioms;
pub mod github;
pub mod interop;
pub mod propose;
pub mod read;
pub mod stage;
pub mod sync;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use crate::domain::field::{Field, Tool};
use crate::domain::ontology::load::{load_read, read_page, Loaded};
use crate::domain::ontology::records::Repo;
use crate::domain::ontology_index::Index;
use crate::error::{Error, Result};
use crate::git::GitCli;
use crate::service::App;
use crate::store::{self, ontology as db};

/// `load_pages` of `(file, text)`s with the pages read on every core (the names
/// are resolved on one, in the order given).
pub(crate) fn load_texts(texts: &[(String, String)]) -> Loaded {
    use rayon::prelude::*;
    load_read(texts.par_iter().map(|(f, t)| read_page(f, t)).collect())
}

/// A synced ontology as calls read it, and the generation it was built at.
pub struct Served {
    pub generation: i64,
    pub index: Index,
}

/// Per-process cache of served ontologies, checked against each project's
/// generation before every reuse, so it is never trusted blindly.
#[derive(Default)]
pub struct Cache {
    map: Mutex<HashMap<String, Arc<Served>>>,
}

impl Cache {
    fn get(&self, project: &str, generation: i64) -> Option<Arc<Served>> {
        let m = self.map.lock().ok()?;
        m.get(project)
            .filter(|s| s.generation == generation)
            .cloned()
    }

    fn put(&self, project: &str, s: Arc<Served>) {
        if let Ok(mut m) = self.map.lock() {
            // Keep the newest: a slower rebuild must not replace a later one.
            let newer = m
                .get(project)
                .is_some_and(|old| old.generation > s.generation);
            if !newer {
                m.insert(project.to_string(), s);
            }
        }
    }
}

/// The repository attached to a project, or an error telling the agent what to do.
pub async fn repo(app: &App, project_id: &str) -> Result<Repo> {
    let mut c = app.store.read().await?;
    match db::repo_of(&mut c, project_id).await? {
        Some(r) => Ok(r),
        None if !store::project::exists(&mut c, project_id).await? => Err(Error::not_found("project", project_id)),
        None => Err(Error::invalid(format!(
            "project {project_id} has no ontology repository: call {} with operation attach and {} first",
            Tool::ManageOntology,
            Field::RepoPath
        ))),
    }
}

/// The git work tree of an attached repository, checked to still be there (and its
/// pages folder to be one git can be handed, whatever an older Cairn stored).
pub fn git_of(repo: &Repo) -> Result<GitCli> {
    let root = PathBuf::from(&repo.repo_path);
    if !root.is_dir() {
        return Err(Error::invalid(format!(
            "the ontology repository of project {} is gone from {}: attach it again",
            repo.project_id, repo.repo_path
        )));
    }
    if !repo.pages_dir.is_empty() {
        if let Err(e) = crate::git::check_path(&repo.pages_dir) {
            return Err(Error::invalid(format!(
                "the pages folder attached to project {} {e}: attach again with another {}",
                repo.project_id,
                Field::PagesDir
            )));
        }
    }
    Ok(GitCli::at(&root))
}

/// The served ontology of a synced project: the cached index while the project's
/// generation is unchanged, else one rebuilt from the stored pages (generation and
/// pages read in one snapshot, the rebuild on the blocking pool).
pub async fn served(app: &App, project_id: &str) -> Result<(Repo, Arc<Served>)> {
    let repo = repo(app, project_id).await?;
    if repo.synced_commit.is_none() {
        return Err(Error::invalid(format!(
            "the ontology of project {project_id} was never synced: call {} with operation sync first",
            Tool::ManageOntology
        )));
    }
    let generation = {
        let mut c = app.store.read().await?;
        db::generation(&mut c, project_id).await?
    };
    if let Some(s) = app.ontology.get(project_id, generation) {
        return Ok((repo, s));
    }
    let (generation, texts) = {
        let mut tx = app.store.snapshot().await?;
        let g = db::generation(&mut tx, project_id).await?;
        let texts = db::page_texts(&mut tx, project_id).await?;
        tx.commit().await?;
        (g, texts)
    };
    let index = tokio::task::spawn_blocking(move || {
        let loaded = load_texts(&texts);
        Index::build(loaded.ontology)
    })
    .await
    .map_err(|e| Error::Internal(format!("building the ontology index: {e}")))?;
    let s = Arc::new(Served { generation, index });
    app.ontology.put(project_id, s.clone());
    Ok((repo, s))
}

/// Today, as days since 1970-01-01 (for recency) and as `YYYY-MM-DD` (for pages).
pub fn today() -> (i64, String) {
    let now = time::OffsetDateTime::now_utc();
    let d = now.date();
    let epoch = time::Date::from_calendar_date(1970, time::Month::January, 1)
        .map(|e| e.to_julian_day())
        .unwrap_or(0);
    let text = format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day());
    (i64::from(d.to_julian_day() - epoch), text)
}
