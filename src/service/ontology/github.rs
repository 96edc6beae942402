//! Proposals on GitHub: the token from the environment (the variable the settings
//! name), a proposal pushed as a branch and a pull request through the REST API, and
//! a pull request's state read back by a sync. The token is read when a call needs
//! it and dropped after; it is never stored, logged or put in an answer.

use crate::domain::ontology::records::{ProposalFile, ProposalRecord, Repo};
use crate::github::{Curl, Http, PullState};
use crate::service::App;

/// The token, when the variable the settings name holds one.
pub fn token(app: &App) -> Option<String> {
    std::env::var(&app.config.ontology.github_token_env)
        .ok()
        .map(|t| t.trim().to_string())
        .filter(|t| !t.is_empty())
}

fn with_repo<T>(
    app: &App,
    repo: &Repo,
    f: impl FnOnce(&crate::github::Repo<'_>) -> Result<T, String>,
) -> Result<T, String> {
    let Some((owner, name)) = repo.github() else {
        return Err("no GitHub repository is configured for this project".into());
    };
    let Some(token) = token(app) else {
        return Err(format!(
            "no GitHub token: set the environment variable {} for the server",
            app.config.ontology.github_token_env
        ));
    };
    let http = Curl::default();
    let gh = crate::github::Repo {
        http: &http as &dyn Http,
        api: &app.config.ontology.github_api_url,
        owner,
        name,
        token: &token,
    };
    f(&gh)
}

/// Pushes a proposal: its files committed on the base branch's head on GitHub, the
/// proposal's branch created there, and a pull request opened with the report as its
/// body. Answers the pull request's number and URL. Blocking (curl): call it from the
/// blocking pool.
pub fn push(
    app: &App,
    repo: &Repo,
    p: &ProposalRecord,
    files: &[ProposalFile],
    title: &str,
) -> Result<(i64, String), String> {
    with_repo(app, repo, |gh| {
        let base = gh.branch_sha(&repo.base_branch)?;
        let base_tree = gh.commit_tree(&base)?;
        let mut entries: Vec<(String, String)> = Vec::with_capacity(files.len());
        for f in files {
            entries.push((f.path.clone(), gh.create_blob(&f.content)?));
        }
        let refs: Vec<(&str, &str)> = entries
            .iter()
            .map(|(p, s)| (p.as_str(), s.as_str()))
            .collect();
        let tree = gh.create_tree(&base_tree, &refs)?;
        let commit = gh.create_commit(title, &tree, &base)?;
        gh.create_branch(&p.branch, &commit)?;
        gh.create_pull(title, &p.branch, &repo.base_branch, &p.report)
    })
}

/// A pushed proposal's pull request state. Blocking (curl).
pub fn pull_state(app: &App, repo: &Repo, number: i64) -> Result<PullState, String> {
    with_repo(app, repo, |gh| gh.pull_state(number))
}
