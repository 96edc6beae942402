//! Staging a checked proposal: its term id, its pages read back, its commit and
//! branch, its row; then its pull request.
//!
//! The order keeps git and curl out of every write transaction (on PostgreSQL a
//! write transaction holds the one write lock of every server on the database):
//!
//! 1. the domain's next term id (`AI-0851`) is reserved in a short write
//!    transaction of its own, so two proposals in two processes never share one; a
//!    proposal that fails after this leaves its id unused, as a rejected one does;
//! 2. the pages are written with it and must read back as the very pages that were
//!    checked: a field whose text would read as more (a line break, a second
//!    property) is refused, naming the field;
//! 3. blobs (one `fast-import` stream), trees (`mktree`), a commit and the branch
//!    `ontology/{agentType}-{proposalId}` are written with git plumbing on the
//!    blocking pool, no transaction open (the user's HEAD, index and working tree
//!    untouched);
//! 4. the proposal row is staged in one write transaction; when that fails, the
//!    branch is removed.
//!
//! Steps 3 and 4 run as a task of their own, which a caller going away (a cancelled
//! call, a closed connection) does not stop, so no branch outlives a proposal that
//! was not staged and no row names a branch that was not made; only a process
//! killed between the two leaves a branch that no row names. A GitHub push, when
//! configured, comes after, outside any transaction.

use super::git_of;
use super::github::Pushed;
use super::propose::{AgentContext, Change, Checked, Proposed};
use crate::domain::field::{Field, Tool};
use crate::domain::id::new_id;
use crate::domain::now;
use crate::domain::ontology::diff::unified_diff;
use crate::domain::ontology::entity::{keys, RELATIONSHIPS};
use crate::domain::ontology::quality::{self, QualityReport};
use crate::domain::ontology::records::{ProposalFile, ProposalRecord, ProposalState, Repo};
use crate::domain::ontology::Page;
use crate::error::{Error, Result};
use crate::git::{check_branch, check_path, GitCli, Signature};
use crate::service::App;
use crate::store::ontology as db;

/// The pull request body (docs/ontology.md, the pull request body): the task, the
/// affected classes, the consistency report, the quality assessment and the diff.
pub fn report(
    operation: &str,
    agent: &AgentContext,
    affected: &[(String, String)],
    c: &Checked,
    q: Option<&QualityReport>,
    diff: &str,
) -> String {
    let mut s = format!(
        "## Proposed Change\n\n{}\n\n**Action**: {operation}\n**Agent**: {} ({})\n\n",
        agent.task_description.trim(),
        agent.agent_type,
        agent.agent_id
    );
    s.push_str("## Affected Classes\n\n| IRI | Change |\n|-----|--------|\n");
    for (iri, what) in affected {
        s.push_str(&format!("| {iri} | {} |\n", what.replace('|', "\\|")));
    }
    s.push_str("\n## Consistency Report\n\n");
    match &c.clash {
        None if c.consistent || !c.consistent_before => {
            if c.consistent {
                s.push_str("✅ **Consistent** — no logical contradictions introduced\n");
            } else {
                s.push_str("⚠️ **The base ontology is already inconsistent**; this change adds no new contradiction\n");
            }
            s.push_str(&format!(
                "- New subsumptions inferred: {}\n",
                c.gained.len()
            ));
            if !c.lost.is_empty() {
                s.push_str(&format!(
                    "- Subsumptions no longer inferred: {}\n",
                    c.lost.len()
                ));
            }
        }
        _ => {
            s.push_str("❌ **Inconsistent** — staged because reject_inconsistent is off\n");
            if let Some(cl) = &c.clash {
                let why: Vec<String> = cl
                    .justification
                    .iter()
                    .map(|(a, f, l)| format!("`{a}` ({f}:{l})"))
                    .collect();
                s.push_str(&format!("- Explanation: {}\n", why.join("; ")));
            }
        }
    }
    s.push_str("\n## Quality Assessment\n\n");
    match q {
        Some(q) => s.push_str(&format!(
            "- Quality Score: {:.2}/1.0\n- Agent Confidence: {:.2}/1.0\n- Tier Coverage: {}\n",
            q.score,
            agent.confidence,
            q.coverage()
        )),
        None => s.push_str(&format!(
            "- Agent Confidence: {:.2}/1.0\n",
            agent.confidence
        )),
    }
    // GitHub refuses bodies past 65,536 characters; the branch holds the whole change.
    let cut = match diff.char_indices().nth(DIFF_IN_REPORT) {
        Some((i, _)) => format!(
            "{}\n… (cut at {DIFF_IN_REPORT} characters: the branch holds the whole change)\n",
            &diff[..i]
        ),
        None => diff.to_string(),
    };
    s.push_str(&format!("\n## Diff\n\n```diff\n{cut}```\n"));
    s
}

/// The most diff characters a report holds.
const DIFF_IN_REPORT: usize = 50_000;

fn agent_branch(agent: &AgentContext, id: &str) -> String {
    format!("ontology/{}-{id}", agent.agent_type)
}

/// The parameter an agent gave a page property through, for `operation`; `None`
/// is a line outside the block (the title).
fn parameter_for(operation: &str, key: Option<&str>) -> Field {
    let create = operation == "create";
    match (operation, key) {
        ("import", _) => Field::Ofn,
        (_, None) if create => Field::PreferredTerm,
        (_, None) => Field::Iri,
        (_, Some(k)) => match k {
            keys::PREFERRED_TERM => Field::PreferredTerm,
            keys::DEFINITION => Field::Definition,
            keys::OWL_CLASS => Field::OwlClass,
            keys::PHYSICALITY => Field::Physicality,
            keys::ROLE => Field::Role,
            keys::SOURCE_DOMAIN => Field::Domain,
            keys::ALT_TERMS => Field::AltTerms,
            keys::QUALITY_SCORE if !create => Field::QualityScore,
            keys::IS_SUBCLASS_OF if create => Field::IsSubclassOf,
            k if create && RELATIONSHIPS.iter().any(|(r, _)| *r == k) => Field::Relationships,
            k if k == keys::IS_SUBCLASS_OF || RELATIONSHIPS.iter().any(|(r, _)| *r == k) => {
                Field::AddRelationships
            }
            _ if create => Field::Proposal,
            _ => Field::CustomFields,
        },
    }
}

/// The property (`Some(key)`) or other line (`None`) the 1-based `line` of
/// `page.write()` holds, counting the page's own lines.
fn element_at(page: &Page, line: usize) -> Option<&str> {
    let mut at = page.head.len() + 1 + page.heading_extra.len();
    if line <= at {
        return None;
    }
    for p in &page.props {
        at += 1 + p.extra.len();
        if line <= at {
            return Some(&p.key);
        }
    }
    None
}

/// The first property of `page` that `again` (the page read back) does not hold as
/// written; `None` when the lines before the block differ.
fn first_difference<'a>(page: &'a Page, again: &Page) -> Option<&'a str> {
    if page.head != again.head || page.heading != again.heading {
        return None;
    }
    let n = page.props.len().max(again.props.len());
    (0..n)
        .find(|&i| page.props.get(i) != again.props.get(i))
        .and_then(|i| page.props.get(i).or(page.props.last()))
        .map(|p| p.key.as_str())
}

/// The text of a page a proposal writes at `path`, once it is known to read back as
/// the very page that was checked. A page that would not (a value holding a line
/// break reads as more lines, a title that reads as the block's heading) is a
/// `VALIDATION_ERROR` naming the parameter its text came from.
pub(super) fn reads_back(operation: &str, path: &str, page: &Page) -> Result<String> {
    if let Err(e) = check_path(path) {
        return Err(Error::validation(
            parameter_for(operation, None),
            format!("the page's path '{}' {e}", path.escape_debug()),
        ));
    }
    let broken = |key: Option<&str>, why: String| {
        let what = key
            .map(|k| format!("its {k} property"))
            .unwrap_or_else(|| "its title".into());
        Error::validation(
            parameter_for(operation, key),
            format!(
                "{path} would not read back as the page that was checked ({what}: {why}); \
                 give each field as one line of text, without line breaks or control characters"
            ),
        )
    };
    // A line break inside a property adds lines of its own: name that property
    // before anything reads the text.
    let one_line = |s: &str| !s.contains(['\n', '\r']);
    if !page
        .head
        .iter()
        .chain(&page.heading_extra)
        .chain(&page.tail)
        .all(|l| one_line(l))
    {
        return Err(broken(None, "a line break".into()));
    }
    if let Some(p) = page
        .props
        .iter()
        .find(|p| !one_line(&p.key) || !one_line(&p.value) || !p.extra.iter().all(|l| one_line(l)))
    {
        return Err(broken(Some(&p.key), "a line break".into()));
    }
    let text = page.write();
    match Page::parse(&text) {
        Ok(again) if again == *page => Ok(text),
        Ok(again) => Err(broken(
            first_difference(page, &again),
            "it reads as different properties".into(),
        )),
        Err(e) => Err(broken(element_at(page, e.line), e.message)),
    }
}

/// Reserves the domain's next term id in a write transaction of its own: one past
/// the highest of the synced pages and of every id reserved before.
async fn reserve_term(app: &App, project_id: &str, domain: &str) -> Result<String> {
    let prefix = domain.to_uppercase();
    let mut tx = app.store.write().await?;
    let floor = db::max_term_number(&mut tx, project_id, &prefix)
        .await?
        .unwrap_or(0)
        + 1;
    let n = db::reserve_term(&mut tx, project_id, &prefix, floor).await?;
    tx.commit().await?;
    Ok(format!("{prefix}-{n:04}"))
}

/// Commits a checked change as a proposal (see the module documentation). `render`
/// writes the pages with the reserved term id (when `term_domain` asks for one).
pub(super) async fn commit(
    app: &App,
    repo: &Repo,
    agent: &AgentContext,
    change: Change,
    term_domain: Option<String>,
    render: impl FnOnce(Option<&str>) -> Result<Vec<(String, Page)>>,
) -> Result<Proposed> {
    let git = git_of(repo)?;
    let Some(base) = repo.synced_commit.clone() else {
        return Err(Error::invalid(format!(
            "the ontology was never synced: call {} with operation sync first",
            Tool::ManageOntology
        )));
    };
    let id = new_id();
    let branch = agent_branch(agent, &id);
    if let Err(e) = check_branch(&branch) {
        return Err(Error::validation(
            Field::AgentContext,
            format!("agentType '{}' cannot name a branch: {e}", agent.agent_type),
        ));
    }
    let term_id = match &term_domain {
        Some(d) => Some(reserve_term(app, &repo.project_id, d).await?),
        None => None,
    };
    let pages = render(term_id.as_deref())?;
    // Every page read back, diffed and reported: an import's may be thousands, so
    // on the blocking pool (and, as everything here, outside any transaction).
    let who = agent.clone();
    let (change, files, diff, body) = tokio::task::spawn_blocking(move || -> Result<_> {
        use rayon::prelude::*;
        // Page by page on every core, in order: the first page refused is named.
        let texts: Vec<Result<String>> = pages
            .par_iter()
            .map(|(path, page)| reads_back(change.operation, path, page))
            .collect();
        let mut files: Vec<(String, String)> = Vec::with_capacity(pages.len());
        for ((path, _), text) in pages.into_iter().zip(texts) {
            files.push((path, text?));
        }
        let diffs: Vec<String> = files
            .par_iter()
            .map(|(path, text)| {
                let old = change.before.get(path).and_then(|o| o.as_deref());
                let from = if old.is_some() {
                    format!("a/{path}")
                } else {
                    "/dev/null".into()
                };
                unified_diff(old.unwrap_or(""), text, &from, &format!("b/{path}"), 3)
            })
            .collect();
        let diff = diffs.concat();
        let body = report(
            change.operation,
            &who,
            &change.affected,
            &change.checked,
            change.quality.as_ref(),
            &diff,
        );
        Ok((change, files, diff, body))
    })
    .await
    .map_err(|e| Error::Internal(format!("writing a proposal's pages: {e}")))??;
    let title = match (&change.target_iri, change.operation) {
        (Some(iri), op) => format!("Ontology: {op} {iri}"),
        (None, op) => format!("Ontology: {op}"),
    };
    let message = format!(
        "{title}\n\n{}\n\nProposed by {} ({}).\n",
        agent.task_description.trim(),
        agent.agent_type,
        agent.agent_id
    );
    let by = Signature {
        name: format!("Cairn ({})", agent.agent_type),
        email: "cairn@localhost".into(),
    };
    let ts = now();
    let record = ProposalRecord {
        id,
        project_id: repo.project_id.clone(),
        operation: change.operation.into(),
        state: ProposalState::Staged,
        target_iri: change.target_iri.clone(),
        term_id,
        agent_id: agent.agent_id.clone(),
        agent_type: agent.agent_type.clone(),
        session_id: agent.session_id.clone(),
        task_description: agent.task_description.clone(),
        confidence: agent.confidence,
        branch,
        commit_sha: String::new(),
        base_commit: base,
        new_subsumptions: change.checked.gained.len() as i64,
        quality_score: change.quality.as_ref().map(|q| quality::decimal(q.score)),
        tier_coverage: change.quality.as_ref().map(|q| q.coverage()),
        report: body,
        diff,
        pr_number: None,
        pr_url: None,
        push_error: None,
        decided_at: None,
        version: 1,
        created_at: ts.clone(),
        updated_at: ts,
    };
    let job = tokio::spawn(write_and_stage(
        app.clone(),
        git,
        record,
        files,
        message,
        by,
    ));
    let (record, files) = job
        .await
        .map_err(|e| Error::Internal(format!("staging a proposal: {e}")))??;
    let staged_inconsistent = change.checked.clash.is_some();
    let mut proposed = Proposed {
        proposal: record,
        files,
        checked: change.checked,
        quality: change.quality,
        staged_inconsistent,
    };
    if repo.github().is_some() {
        push(app, repo, &mut proposed.proposal, &proposed.files).await?;
    }
    Ok(proposed)
}

/// Steps 3 and 4 of the module documentation: the git objects and the branch, then
/// the row, the branch removed again when the row is not staged.
async fn write_and_stage(
    app: App,
    git: GitCli,
    mut record: ProposalRecord,
    files: Vec<(String, String)>,
    message: String,
    by: Signature,
) -> Result<(ProposalRecord, Vec<ProposalFile>)> {
    let made = git
        .commit_branch(&record.branch, &record.base_commit, files, &message, &by)
        .await?;
    record.commit_sha = made.commit;
    let files: Vec<ProposalFile> = made
        .files
        .into_iter()
        .zip(made.blobs)
        .map(|((path, content), blob_sha)| ProposalFile {
            path,
            blob_sha,
            content,
        })
        .collect();
    let staged = async {
        let mut tx = app.store.write().await?;
        db::insert_proposal(&mut tx, &record, &files).await?;
        tx.commit().await
    }
    .await;
    if let Err(e) = staged {
        if let Err(undo) = git.delete_branch(&record.branch, &record.commit_sha).await {
            tracing::error!(branch = %record.branch, error = %undo, "could not remove the branch of a proposal that was not staged");
        }
        return Err(e.into());
    }
    Ok((record, files))
}

/// Pushes a staged proposal to GitHub and records the pull request (or why the push
/// failed: the proposal stays staged, and `push_again` may retry). A pull request
/// URL that fails the check is not kept; the answer's `pushError` says why.
pub async fn push(
    app: &App,
    repo: &Repo,
    p: &mut ProposalRecord,
    files: &[ProposalFile],
) -> Result<()> {
    let title = match &p.target_iri {
        Some(iri) => format!("Ontology: {} {iri}", p.operation),
        None => format!("Ontology: {}", p.operation),
    };
    let pushed = super::github::push(app, repo, p, files, &title).await?;
    let ts = now();
    let mut tx = app.store.write().await?;
    let v = match &pushed {
        Ok(Pushed { number, url, note }) => {
            db::record_push(
                &mut tx,
                &p.id,
                p.version,
                Some((*number, url.as_deref())),
                note.as_deref(),
                &ts,
            )
            .await?
        }
        Err(why) => db::record_push(&mut tx, &p.id, p.version, None, Some(why), &ts).await?,
    };
    tx.commit().await?;
    p.version = v;
    p.updated_at = ts;
    match pushed {
        Ok(Pushed { number, url, note }) => {
            if let Some(why) = &note {
                tracing::warn!(proposal = %p.id, "{why}");
            }
            p.state = ProposalState::Pushed;
            p.pr_number = Some(number);
            p.pr_url = url;
            p.push_error = note;
        }
        Err(why) => {
            tracing::warn!(proposal = %p.id, error = %why, "push to GitHub failed");
            p.push_error = Some(why);
        }
    }
    Ok(())
}

/// Pushes a staged proposal to GitHub again (after a failed push, or once a token
/// is set). Answers the proposal as it stands after the attempt.
pub async fn push_again(app: &App, project_id: &str, proposal_id: &str) -> Result<ProposalRecord> {
    let repo = super::repo(app, project_id).await?;
    if repo.github().is_none() {
        return Err(Error::invalid(format!(
            "no GitHub repository is configured: attach again with {} and {}",
            Field::GithubOwner,
            Field::GithubName
        )));
    }
    let (record, files) = {
        let mut c = app.store.read().await?;
        let p = db::proposal(&mut c, proposal_id)
            .await?
            .filter(|p| p.project_id == project_id);
        let Some(p) = p else {
            return Err(Error::not_found("proposal", proposal_id));
        };
        let files = db::proposal_files(&mut c, &p.id).await?;
        (p, files)
    };
    if record.state != ProposalState::Staged {
        return Err(Error::invalid(format!(
            "proposal {proposal_id} is {}, not staged: only a staged proposal is pushed",
            record.state.as_str()
        )));
    }
    let mut record = record;
    push(app, &repo, &mut record, &files).await?;
    Ok(record)
}
