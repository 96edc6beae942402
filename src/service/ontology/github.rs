//! Proposals on GitHub: the token from the environment (the variable the settings
//! name), a proposal pushed as a branch and a pull request through the REST API, and
//! a pull request's state read back by a sync. The token is read when a call needs
//! it and dropped after; it is never stored, logged or put in an answer. Curl runs
//! on tokio's blocking pool, never inside a write transaction; what GitHub answers
//! is checked before it is kept (a pull request's URL: `https://` on the configured
//! `github_web_url` host).

use crate::domain::ontology::records::{ProposalFile, ProposalRecord, Repo};
use crate::error::{Error, Result};
use crate::github::{check_pull_url, Curl, Http, PullState};
use crate::service::App;

/// A pull request opened for a proposal.
pub struct Pushed {
    pub number: i64,
    /// Its URL, when GitHub's answer passed the check.
    pub url: Option<String>,
    /// Why the URL was not kept.
    pub note: Option<String>,
}

/// Runs curl work on the blocking pool.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> std::result::Result<T, String> + Send + 'static,
) -> Result<std::result::Result<T, String>> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Internal(format!("calling GitHub: {e}")))
}

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
    f: impl FnOnce(&crate::github::Repo<'_>) -> std::result::Result<T, String>,
) -> std::result::Result<T, String> {
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
/// body. Answers the pull request (or why the push failed).
pub async fn push(
    app: &App,
    repo: &Repo,
    p: &ProposalRecord,
    files: &[ProposalFile],
    title: &str,
) -> Result<std::result::Result<Pushed, String>> {
    let (app, repo, p, files, title) = (
        app.clone(),
        repo.clone(),
        p.clone(),
        files.to_vec(),
        title.to_string(),
    );
    blocking(move || push_now(&app, &repo, &p, &files, &title)).await
}

fn push_now(
    app: &App,
    repo: &Repo,
    p: &ProposalRecord,
    files: &[ProposalFile],
    title: &str,
) -> std::result::Result<Pushed, String> {
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
        let (number, url) = gh.create_pull(title, &p.branch, &repo.base_branch, &p.report)?;
        Ok(
            match check_pull_url(&url, &app.config.ontology.github_web_url) {
                Ok(()) => Pushed {
                    number,
                    url: Some(url),
                    note: None,
                },
                Err(why) => Pushed {
                    number,
                    url: None,
                    note: Some(why),
                },
            },
        )
    })
}

/// A pushed proposal's pull request state (or why it could not be read).
pub async fn pull_state(
    app: &App,
    repo: &Repo,
    number: i64,
) -> Result<std::result::Result<PullState, String>> {
    let (app, repo) = (app.clone(), repo.clone());
    blocking(move || with_repo(&app, &repo, |gh| gh.pull_state(number))).await
}
