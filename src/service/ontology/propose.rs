//! Proposals and hypothetical axioms, checked by the reasoner before anything is
//! written.
//!
//! A proposal (create or amend) is turned into its page, resolved against the synced
//! ontology, checked for consistency against the saturated ontology plus (minus) its
//! axioms without changing the base, and scored; all of that runs before any lock is
//! taken. Then one write transaction reserves the domain's next term id (`AI-0851`:
//! two proposals in two processes never share one, since `BEGIN IMMEDIATE` orders
//! them), writes the final page, checks it reads back to the same axioms, commits it
//! on the branch `ontology/{agentType}-{proposalId}` with git plumbing (the user's
//! HEAD, index and working tree untouched), and stages the proposal row; if the
//! transaction does not commit, the branch is removed. The git work inside the
//! transaction is a few plumbing commands (tens of milliseconds), the price of never
//! staging a branch without its row nor a row without its branch. A GitHub push, when
//! configured, comes after, outside the transaction.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::{git_of, served, today};
use crate::domain::id::new_id;
use crate::domain::now;
use crate::domain::ontology::diff::unified_diff;
use crate::domain::ontology::draft::{self, ClassDraft};
use crate::domain::ontology::entity::{key_rank, keys, read_entry, split_terms, RELATIONSHIPS};
use crate::domain::ontology::expr::looks_like_iri;
use crate::domain::ontology::page::{file_name, title_from_file};
use crate::domain::ontology::quality::{self, QualityReport};
use crate::domain::ontology::records::{ProposalFile, ProposalRecord, ProposalState, Repo};
use crate::domain::ontology::{
    classification_diff, Axiom, Classification, EntityKind, Page, Problem, Sourced,
};
use crate::domain::ontology_index::Index;
use crate::error::{Clash, Details, Error, Result};
use crate::git::Signature;
use crate::service::App;
use crate::store::ontology as db;

use super::read::{cite, entity};

/// Who proposes, and why (the spec's `AgentContext`).
#[derive(Debug, Clone)]
pub struct AgentContext {
    pub agent_id: String,
    pub agent_type: String,
    pub task_description: String,
    pub session_id: Option<String>,
    pub confidence: f32,
}

/// A new class (the spec's `NoteProposal`).
#[derive(Debug, Clone, Default)]
pub struct NoteProposal {
    pub preferred_term: String,
    pub definition: String,
    /// Derived from the domain and the preferred term when absent.
    pub owl_class: Option<String>,
    pub physicality: String,
    pub role: String,
    pub domain: String,
    pub is_subclass_of: Vec<String>,
    /// (relationship key, targets).
    pub relationships: Vec<(String, Vec<String>)>,
    pub alt_terms: Vec<String>,
}

/// Changes to an existing page (the spec's `NoteAmendment`).
#[derive(Debug, Clone, Default)]
pub struct Amendment {
    pub add_relationships: Vec<(String, Vec<String>)>,
    pub remove_relationships: Vec<(String, Vec<String>)>,
    pub definition: Option<String>,
    pub quality_score: Option<f32>,
    pub add_alt_terms: Vec<String>,
    /// Other fields; an empty value removes the field.
    pub custom_fields: Vec<(String, String)>,
}

/// The page key of a relationship, however it was spelled (`has-part`, `hasPart`,
/// `HAS_PART`, `core:hasPart`); `is-subclass-of` too when `parents` allows it.
pub fn rel_key(raw: &str, parents: bool) -> Option<&'static str> {
    let norm: String = raw
        .trim()
        .trim_start_matches("core:")
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_lowercase();
    if parents && ["issubclassof", "subclassof", "parent", "parents"].contains(&norm.as_str()) {
        return Some(keys::IS_SUBCLASS_OF);
    }
    RELATIONSHIPS
        .iter()
        .map(|(k, _)| *k)
        .find(|k| k.replace('-', "") == norm)
}

/// What the reasoner says about a change.
#[derive(Debug, Clone)]
pub struct Checked {
    pub consistent_before: bool,
    pub consistent: bool,
    pub newly_unsatisfiable: Vec<String>,
    pub gained: Vec<(String, String)>,
    pub lost: Vec<(String, String)>,
    /// Set when the change makes a consistent ontology inconsistent or a class
    /// unsatisfiable: what breaks and the asserted axioms that cause it.
    pub clash: Option<Clash>,
    pub elapsed: Duration,
    /// The classification after the change (for explaining what it gained).
    pub after: Classification,
}

/// Checks the base classification minus `removed` plus `added`; the base is not
/// changed. An already inconsistent base is reported, and nothing is blamed on the
/// change.
pub fn check(base: &Classification, removed: &[Axiom], added: &[Sourced]) -> Checked {
    let t = Instant::now();
    let after = if removed.is_empty() {
        base.with_axioms(added)
    } else {
        base.without_axioms(removed).with_axioms(added)
    };
    compare(base, after, t)
}

/// What changed from `base` to `after` (a classification of the changed ontology),
/// `t` being when the work started.
pub fn compare(base: &Classification, after: Classification, t: Instant) -> Checked {
    let d = classification_diff(base, &after);
    let worse = d.consistent.0 && (!d.consistent.1 || !d.newly_unsatisfiable.is_empty());
    let clash = worse.then(|| {
        let j = if !after.is_consistent() {
            after.explain_inconsistency()
        } else {
            d.newly_unsatisfiable
                .first()
                .and_then(|c| after.explain_unsatisfiable(c))
        };
        Clash {
            consistent: after.is_consistent(),
            unsatisfiable: d.newly_unsatisfiable.clone(),
            justification: j
                .map(|j| j.axioms.iter().map(cite).collect())
                .unwrap_or_default(),
        }
    });
    Checked {
        consistent_before: d.consistent.0,
        consistent: d.consistent.1,
        newly_unsatisfiable: d.newly_unsatisfiable,
        gained: d.gained,
        lost: d.lost,
        clash,
        elapsed: t.elapsed(),
        after,
    }
}

/// A refusal for axioms that break the ontology.
fn inconsistent(c: &Clash, what: &str) -> Error {
    let why = if !c.consistent {
        "makes the ontology inconsistent".to_string()
    } else {
        format!("makes {} unsatisfiable", c.unsatisfiable.join(", "))
    };
    let because: Vec<String> = c
        .justification
        .iter()
        .map(|(a, f, l)| format!("{a} ({f}:{l})"))
        .collect();
    Error::Invariant {
        message: format!(
            "{what} {why}, because of: {}; change the proposal so these axioms no longer clash",
            because.join("; ")
        ),
        details: Some(Details::Inconsistent(Box::new(c.clone()))),
    }
}

pub(super) fn problems_error(parameter: &str, ps: Vec<Problem>) -> Error {
    let first = ps.first().map(|p| p.message.clone()).unwrap_or_default();
    Error::ValidationDetails {
        message: format!(
            "parameter '{parameter}': {first}{}",
            if ps.len() > 1 {
                format!(" (and {} more)", ps.len() - 1)
            } else {
                String::new()
            }
        ),
        parameter: parameter.into(),
        details: Details::Problems(ps),
    }
}

/// A page link to an entity: its page's title (as Logseq links it), else its IRI.
fn link_name(ix: &Index, iri: &str) -> String {
    ix.page_of(iri)
        .map(title_from_file)
        .unwrap_or_else(|| iri.to_string())
}

/// Resolves the targets an agent named (IRIs, terms, titles) to page link names.
fn targets(ix: &Index, parameter: &str, names: &[String]) -> Result<Vec<String>> {
    names
        .iter()
        .map(|n| {
            let iri =
                entity(ix, n, "class").map_err(|e| Error::validation(parameter, e.to_string()))?;
            Ok(link_name(ix, iri))
        })
        .collect()
}

/// What a proposal answers.
pub struct Proposed {
    pub proposal: ProposalRecord,
    pub files: Vec<ProposalFile>,
    pub checked: Checked,
    pub quality: Option<QualityReport>,
    /// Staged although it breaks the ontology (`reject_inconsistent` is off).
    pub staged_inconsistent: bool,
}

/// The checked change a proposal is about to commit.
pub(super) struct Change {
    pub operation: &'static str,
    pub target_iri: Option<String>,
    /// (IRI, what changes) for the report's table.
    pub affected: Vec<(String, String)>,
    pub checked: Checked,
    pub quality: Option<QualityReport>,
    /// The text each path had at the base commit (`None`: a new file).
    pub before: HashMap<String, Option<String>>,
}

/// The spec's pull request body: the task, the affected classes, the consistency
/// report, the quality assessment and the diff.
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

/// Commits a checked change as a proposal (see the module documentation). `render`
/// writes the files with the reserved term id (when `term_domain` asks for one).
pub(super) async fn commit(
    app: &App,
    repo: &Repo,
    agent: &AgentContext,
    change: Change,
    term_domain: Option<String>,
    render: impl FnOnce(Option<&str>) -> Result<Vec<(String, String)>>,
) -> Result<Proposed> {
    let git = git_of(repo)?;
    let Some(base) = repo.synced_commit.clone() else {
        return Err(Error::invalid(
            "the ontology was never synced: call manage_ontology with operation sync first",
        ));
    };
    let id = new_id();
    let branch = agent_branch(agent, &id);
    if !git.valid_branch_name(&branch)? {
        return Err(Error::validation(
            "agentContext",
            format!("agentType '{}' cannot name a branch", agent.agent_type),
        ));
    }
    let ts = now();
    let mut tx = app.store.write().await?;
    let term_id = match &term_domain {
        Some(d) => {
            let prefix = d.to_uppercase();
            let floor = db::max_term_number(&mut tx, &repo.project_id, &prefix)
                .await?
                .unwrap_or(0)
                + 1;
            let n = db::reserve_term(&mut tx, &repo.project_id, &prefix, floor).await?;
            Some(format!("{prefix}-{n:04}"))
        }
        None => None,
    };
    let files = render(term_id.as_deref())?;
    let mut diff = String::new();
    for (path, text) in &files {
        let old = change.before.get(path).cloned().flatten();
        let from = if old.is_some() {
            format!("a/{path}")
        } else {
            "/dev/null".into()
        };
        diff.push_str(&unified_diff(
            old.as_deref().unwrap_or(""),
            text,
            &from,
            &format!("b/{path}"),
            3,
        ));
    }
    let body = report(
        change.operation,
        agent,
        &change.affected,
        &change.checked,
        change.quality.as_ref(),
        &diff,
    );
    let texts: Vec<&str> = files.iter().map(|(_, t)| t.as_str()).collect();
    let blobs = git.write_blobs(&texts)?;
    let pairs: Vec<(&str, &str)> = files
        .iter()
        .zip(&blobs)
        .map(|((p, _), b)| (p.as_str(), b.as_str()))
        .collect();
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
    let sha = git.commit_files(&base, &pairs, &message, &by)?;
    git.create_branch(&branch, &sha)?;
    let record = ProposalRecord {
        id: id.clone(),
        project_id: repo.project_id.clone(),
        operation: change.operation.into(),
        state: ProposalState::Staged,
        target_iri: change.target_iri.clone(),
        term_id,
        agent_id: agent.agent_id.clone(),
        agent_type: agent.agent_type.clone(),
        session_id: agent.session_id.clone(),
        task_description: agent.task_description.clone(),
        confidence: f64::from(agent.confidence),
        branch: branch.clone(),
        commit_sha: sha.clone(),
        base_commit: base,
        new_subsumptions: change.checked.gained.len() as i64,
        quality_score: change.quality.as_ref().map(|q| f64::from(q.score)),
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
    let files: Vec<ProposalFile> = files
        .into_iter()
        .zip(blobs)
        .map(|((path, content), blob_sha)| ProposalFile {
            path,
            blob_sha,
            content,
        })
        .collect();
    let written = async {
        db::insert_proposal(&mut tx, &record, &files).await?;
        tx.commit().await
    }
    .await;
    if let Err(e) = written {
        if let Err(undo) = git.delete_branch(&branch, &sha) {
            tracing::error!(branch = %branch, error = %undo, "could not remove the branch of a proposal that was not staged");
        }
        return Err(e.into());
    }
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

/// Pushes a staged proposal to GitHub and records the pull request (or why the push
/// failed: the proposal stays staged, and `push_again` may retry).
pub async fn push(
    app: &App,
    repo: &Repo,
    p: &mut ProposalRecord,
    files: &[ProposalFile],
) -> Result<()> {
    let (a, r, rec, fs) = (app.clone(), repo.clone(), p.clone(), files.to_vec());
    let title = match &rec.target_iri {
        Some(iri) => format!("Ontology: {} {iri}", rec.operation),
        None => format!("Ontology: {}", rec.operation),
    };
    let pushed =
        tokio::task::spawn_blocking(move || super::github::push(&a, &r, &rec, &fs, &title))
            .await
            .map_err(|e| Error::Internal(format!("pushing a proposal: {e}")))?;
    let ts = now();
    let mut tx = app.store.write().await?;
    let v = match &pushed {
        Ok((n, url)) => {
            db::record_push(&mut tx, &p.id, p.version, Some((*n, url)), None, &ts).await?
        }
        Err(why) => db::record_push(&mut tx, &p.id, p.version, None, Some(why), &ts).await?,
    };
    tx.commit().await?;
    p.version = v;
    p.updated_at = ts;
    match pushed {
        Ok((n, url)) => {
            p.state = ProposalState::Pushed;
            p.pr_number = Some(n);
            p.pr_url = Some(url);
            p.push_error = None;
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
        return Err(Error::invalid(
            "no GitHub repository is configured: attach again with githubOwner and githubName",
        ));
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

fn checked_agent(a: &AgentContext) -> Result<()> {
    let t = &a.agent_type;
    if t.is_empty()
        || t.len() > 64
        || !t
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
        || t.starts_with('.')
    {
        return Err(Error::validation(
            "agentContext",
            "agentType must be 1-64 letters, digits, '-', '_' or '.' (it names the branch)",
        ));
    }
    if !(0.0..=1.0).contains(&a.confidence) {
        return Err(Error::validation(
            "agentContext",
            "confidence must be from 0 to 1",
        ));
    }
    Ok(())
}

/// The IRI a preferred term gets in a domain: `ai:` + the term in UpperCamelCase.
pub fn iri_for(domain: &str, term: &str) -> String {
    let mut local = String::new();
    for w in term.split(|c: char| !c.is_alphanumeric()) {
        let mut cs = w.chars();
        if let Some(f) = cs.next() {
            local.extend(f.to_uppercase());
            local.push_str(cs.as_str());
        }
    }
    format!("{domain}:{local}")
}

fn refuse_quality(q: &QualityReport, min: f32) -> Error {
    let r = match q.check(min) {
        Ok(()) => return Error::Internal("refusing a page that passes".into()),
        Err(r) => r,
    };
    Error::ValidationDetails {
        message: format!("{r} fill these fields and propose again"),
        parameter: "proposal".into(),
        details: Details::Quality {
            score: r.score,
            min: r.min,
            missing: r.missing,
        },
    }
}

/// `ontology_propose` create.
pub async fn create(
    app: &App,
    project_id: &str,
    p: NoteProposal,
    agent: AgentContext,
) -> Result<Proposed> {
    checked_agent(&agent)?;
    let (repo, s) = served(app, project_id).await?;
    let ix = &s.index;
    let domain = p.domain.trim().to_lowercase();
    if domain.is_empty()
        || domain.len() > 16
        || !domain.chars().all(|c| c.is_ascii_alphanumeric())
        || !domain.starts_with(|c: char| c.is_ascii_alphabetic())
    {
        return Err(Error::validation(
            "domain",
            "must be a short prefix of letters and digits, like ai",
        ));
    }
    let term = p.preferred_term.trim().to_string();
    let iri = p
        .owl_class
        .clone()
        .map(|c| c.trim().to_string())
        .unwrap_or_else(|| iri_for(&domain, &term));
    if !looks_like_iri(&iri) {
        return Err(Error::validation(
            "owlClass",
            format!("'{iri}' is not an IRI like {domain}:VisionTransformer"),
        ));
    }
    if iri.split_once(':').map(|(d, _)| d) != Some(domain.as_str()) {
        return Err(Error::validation(
            "owlClass",
            format!("'{iri}' must be in the domain's prefix ({domain}:)"),
        ));
    }
    if let Some(e) = ix.ontology.entity(&iri) {
        let at = e
            .origin
            .as_ref()
            .map(|o| format!(" on {}", o.file))
            .unwrap_or_default();
        return Err(Error::invalid(format!(
            "{iri} exists already{at}: propose an amendment with targetIri instead"
        )));
    }
    if let Some(other) = ix.resolve(&term) {
        return Err(Error::invalid(format!(
            "'{term}' already names {other}: amend it, or choose another preferred term (links by name would be ambiguous)"
        )));
    }
    let file = file_name(&term);
    let path = if repo.pages_dir.is_empty() {
        file
    } else {
        format!("{}/{file}", repo.pages_dir)
    };
    let path = crate::repo_fs::relative(&path)
        .map_err(|e| Error::validation("preferredTerm", e.to_string()))?;
    {
        let mut c = app.store.read().await?;
        if db::page_path_taken(&mut c, project_id, &path).await? {
            return Err(Error::invalid(format!(
                "{path} exists already: choose another preferred term"
            )));
        }
    }
    let mut relationships = Vec::new();
    for (k, ts) in &p.relationships {
        let key = rel_key(k, false).ok_or_else(|| {
            Error::validation(
                "relationships",
                format!("'{k}' is not one of has-part, requires, enables, bridges-to, relates-to"),
            )
        })?;
        relationships.push((key.to_string(), targets(ix, "relationships", ts)?));
    }
    let parents = targets(ix, "isSubclassOf", &p.is_subclass_of)?;
    let date = today().1;
    let make = |term_id: &str| {
        ClassDraft {
            preferred_term: term.clone(),
            term_id: term_id.to_string(),
            domain: domain.clone(),
            status: "agent-proposed".into(),
            public_access: true,
            last_updated: date.clone(),
            definition: p.definition.clone(),
            owl_class: iri.clone(),
            physicality: p.physicality.clone(),
            role: p.role.clone(),
            parents: parents.clone(),
            authority_score: 0.5,
            maturity: "draft".into(),
            relationships: relationships.clone(),
            alt_terms: p.alt_terms.clone(),
        }
        .to_page()
    };
    // Checked with a placeholder id of the right shape; the reserved one changes no
    // axiom and no score.
    let page = make(&format!("{}-0000", domain.to_uppercase()));
    let axioms = page_axioms(ix, &path, &page)?;
    let q = quality::assess(&page);
    let min = app.config.ontology.min_proposal_quality;
    if q.check(min).is_err() {
        return Err(refuse_quality(&q, min));
    }
    let checked = checked_in_pool(&s, Vec::new(), axioms.clone()).await?;
    if let Some(c) = &checked.clash {
        if app.config.ontology.reject_inconsistent {
            return Err(inconsistent(c, &format!("the new class {iri}")));
        }
    }
    let under = if parents.is_empty() {
        String::new()
    } else {
        format!(" under {}", parents.join(", "))
    };
    let change = Change {
        operation: "create",
        target_iri: Some(iri.clone()),
        affected: vec![(iri.clone(), format!("new class{under}"))],
        checked,
        quality: Some(q),
        before: HashMap::from([(path.clone(), None)]),
    };
    let p2 = path.clone();
    commit(
        app,
        &repo,
        &agent,
        change,
        Some(domain.clone()),
        move |term_id| {
            let page = make(term_id.unwrap_or_default());
            let text = page.write();
            round_trip(ix, &p2, &text, &axioms)?;
            Ok(vec![(p2.clone(), text)])
        },
    )
    .await
}

/// The axioms a page states, resolved against the ontology; a name that resolves
/// nowhere refuses the proposal with the page's problems.
fn page_axioms(ix: &Index, path: &str, page: &Page) -> Result<Vec<Sourced>> {
    let entry = read_entry(page).map_err(|e| {
        problems_error(
            "proposal",
            vec![Problem {
                file: path.into(),
                line: e.line,
                column: e.column,
                message: e.message,
            }],
        )
    })?;
    let (axioms, problems) = ix.ontology.page_axioms(path, &entry);
    if !problems.is_empty() {
        return Err(problems_error("proposal", problems));
    }
    Ok(axioms)
}

/// The page Cairn is about to commit reads back as the same page and states the
/// axioms that were checked.
fn round_trip(ix: &Index, path: &str, text: &str, checked: &[Sourced]) -> Result<()> {
    let page = Page::parse(text)
        .map_err(|e| Error::Internal(format!("a generated page does not parse: {e}")))?;
    if page.write() != text {
        return Err(Error::Internal(format!(
            "{path} does not write back as it reads"
        )));
    }
    let again = page_axioms(ix, path, &page)?;
    let key = |v: &[Sourced]| {
        let mut a: Vec<&Axiom> = v.iter().map(|s| &s.axiom).collect();
        a.sort();
        a.into_iter().cloned().collect::<Vec<_>>()
    };
    if key(&again) != key(checked) {
        return Err(Error::Internal(format!(
            "{path} does not read back to the axioms that were checked"
        )));
    }
    Ok(())
}

/// Runs the check on the blocking pool (a reclassification can take a while).
pub(super) async fn checked_in_pool(
    s: &std::sync::Arc<super::Served>,
    removed: Vec<Axiom>,
    added: Vec<Sourced>,
) -> Result<Checked> {
    let s = s.clone();
    tokio::task::spawn_blocking(move || check(&s.index.classification, &removed, &added))
        .await
        .map_err(|e| Error::Internal(format!("checking consistency: {e}")))
}

/// `ontology_propose` amend.
pub async fn amend(
    app: &App,
    project_id: &str,
    target: &str,
    a: Amendment,
    agent: AgentContext,
) -> Result<Proposed> {
    checked_agent(&agent)?;
    let (repo, s) = served(app, project_id).await?;
    let ix = &s.index;
    let iri = entity(ix, target, "entity")?.to_string();
    let Some(path) = ix.page_of(&iri).map(str::to_string) else {
        return Err(Error::invalid(format!(
            "{iri} has no page of its own to amend"
        )));
    };
    let old = {
        let mut c = app.store.read().await?;
        db::page_at(&mut c, project_id, &path)
            .await?
            .map(|(_, t)| t)
    }
    .ok_or_else(|| Error::invalid(format!("{path} is not among the synced pages: sync first")))?;
    let mut page = Page::parse(&old)
        .map_err(|e| Error::invalid(format!("{path} does not parse ({e}): fix it in git first")))?;
    let before_q = quality::assess(&page);
    for (k, ts) in &a.add_relationships {
        let key = rel_key(k, true).ok_or_else(|| Error::validation("addRelationships", format!("'{k}' is not is-subclass-of, has-part, requires, enables, bridges-to or relates-to")))?;
        for t in targets(ix, "addRelationships", ts)? {
            draft::add_link(&mut page, key, &t);
        }
    }
    for (k, ts) in &a.remove_relationships {
        let key = rel_key(k, true).ok_or_else(|| Error::validation("removeRelationships", format!("'{k}' is not is-subclass-of, has-part, requires, enables, bridges-to or relates-to")))?;
        for t in ts {
            let name = ix
                .resolve(t)
                .map(|i| link_name(ix, i))
                .unwrap_or_else(|| t.clone());
            let gone = draft::remove_link(&mut page, key, &name)
                || ix
                    .resolve(t)
                    .is_some_and(|i| draft::remove_link(&mut page, key, i));
            if !gone {
                return Err(Error::validation(
                    "removeRelationships",
                    format!("{key} of {iri} does not list {t}"),
                ));
            }
        }
    }
    if let Some(d) = &a.definition {
        draft::set_field(&mut page, keys::DEFINITION, d);
    }
    if let Some(q) = a.quality_score {
        draft::set_field(&mut page, keys::QUALITY_SCORE, &format!("{q:.2}"));
    }
    if !a.add_alt_terms.is_empty() {
        let mut terms = split_terms(page.get(keys::ALT_TERMS).unwrap_or(""));
        for t in &a.add_alt_terms {
            if !terms.iter().any(|x| x.eq_ignore_ascii_case(t.trim())) {
                terms.push(t.trim().to_string());
            }
        }
        draft::set_field(&mut page, keys::ALT_TERMS, &terms.join(", "));
    }
    for (k, v) in &a.custom_fields {
        let k = k.trim();
        let logical = RELATIONSHIPS.iter().any(|(r, _)| *r == k)
            || [
                keys::OWL_CLASS,
                keys::OWL_OBJECT_PROPERTY,
                keys::OWL_INDIVIDUAL,
                keys::TERM_ID,
                keys::IS_SUBCLASS_OF,
                keys::SUB_CLASS_OF,
                keys::EQUIVALENT_CLASS,
                keys::DISJOINT_WITH,
                keys::AXIOM,
                keys::SUB_PROPERTY_OF,
                keys::TRANSITIVE,
                keys::REFLEXIVE,
                keys::DOMAIN,
                keys::RANGE,
                keys::PROPERTY_CHAIN,
                keys::RDF_TYPE,
                keys::FACTS,
                keys::ONTOLOGY,
            ]
            .contains(&k);
        if logical || k.is_empty() || k.contains(char::is_whitespace) || k.contains("::") {
            return Err(Error::validation(
                "customFields",
                format!("'{k}' cannot be set as a custom field (identity and logical keys change through their own parameters)"),
            ));
        }
        if v.trim().is_empty() {
            page.remove(k);
        } else {
            draft::set_field(&mut page, k, v);
        }
    }
    if page.write() == old {
        return Err(Error::invalid(format!(
            "the amendment changes nothing on {path}"
        )));
    }
    page.set(keys::LAST_UPDATED, &today().1, &key_rank);
    let text = page.write();
    let new_axioms = page_axioms(ix, &path, &page)?;
    let old_axioms: Vec<&Sourced> = ix
        .ontology
        .axioms
        .iter()
        .filter(|x| x.origin.file == path)
        .collect();
    let removed: Vec<Axiom> = old_axioms
        .iter()
        .filter(|o| !new_axioms.iter().any(|n| n.axiom == o.axiom))
        .map(|o| o.axiom.clone())
        .collect();
    let added: Vec<Sourced> = new_axioms
        .iter()
        .filter(|n| !old_axioms.iter().any(|o| o.axiom == n.axiom))
        .cloned()
        .collect();
    let q = quality::assess(&page);
    let min = app.config.ontology.min_proposal_quality;
    let is_class = ix
        .ontology
        .entity(&iri)
        .is_some_and(|e| e.kind == EntityKind::Class);
    // An amendment may leave a poor page poor, but never make a page fall below the
    // minimum.
    if is_class && q.score + f32::EPSILON < min && q.score < before_q.score {
        return Err(refuse_quality(&q, min));
    }
    let checked = checked_in_pool(&s, removed.clone(), added.clone()).await?;
    if let Some(c) = &checked.clash {
        if app.config.ontology.reject_inconsistent {
            return Err(inconsistent(c, &format!("the amendment of {iri}")));
        }
    }
    let mut what: Vec<String> = Vec::new();
    if !added.is_empty() {
        what.push(format!("{} axiom(s) added", added.len()));
    }
    if !removed.is_empty() {
        what.push(format!("{} axiom(s) removed", removed.len()));
    }
    if what.is_empty() {
        what.push("metadata".into());
    }
    let change = Change {
        operation: "amend",
        target_iri: Some(iri.clone()),
        affected: vec![(iri.clone(), what.join(", "))],
        checked,
        quality: is_class.then_some(q),
        before: HashMap::from([(path.clone(), Some(old))]),
    };
    let checked_axioms = new_axioms;
    commit(app, &repo, &agent, change, None, move |_| {
        round_trip(ix, &path, &text, &checked_axioms)?;
        Ok(vec![(path, text)])
    })
    .await
}

/// One hypothetical axiom (the spec's `AxiomInput`).
#[derive(Debug, Clone)]
pub struct AxiomInput {
    pub axiom_type: String,
    pub subject: String,
    pub object: String,
}

/// The axiom types `ontology_validate` takes.
pub const AXIOM_TYPES: &[&str] = &[
    "SubClassOf",
    "EquivalentClasses",
    "DisjointClasses",
    "SubObjectPropertyOf",
    "ClassAssertion",
    "has-part",
    "requires",
    "enables",
    "bridges-to",
    "relates-to",
];

/// What hypothetical axioms would do.
pub struct Validated {
    pub checked: Checked,
    pub axioms: Vec<Sourced>,
    /// Gained subsumptions with the asserted axioms each follows from (the first few).
    pub explained: Vec<((String, String), Vec<Sourced>)>,
}

/// Gained subsumptions explained at most. Only inferred direct parents are explained
/// (the others follow from them and from what is asserted), those of classes that
/// exist already first, being what a hypothesis changes: an explanation is a traced
/// saturation that can reach much of the ontology (hundreds of milliseconds at
/// 10,000 classes).
const VALIDATE_EXPLAINED: usize = 3;

/// A name written in a page expression: a known entity's IRI, else as given.
fn as_expr(ix: &Index, s: &str) -> String {
    match ix.resolve(s) {
        Some(iri) => iri.to_string(),
        None => s.trim().to_string(),
    }
}

/// `ontology_validate`: hypothetical axioms checked against the synced ontology.
pub async fn validate(app: &App, project_id: &str, input: Vec<AxiomInput>) -> Result<Validated> {
    let (_, s) = served(app, project_id).await?;
    let ix = &s.index;
    let mut all = Vec::new();
    for (i, a) in input.iter().enumerate() {
        let file = format!("axioms[{i}]");
        let subject = as_expr(ix, &a.subject);
        let object = as_expr(ix, &a.object);
        let t = a.axiom_type.trim();
        let named = looks_like_iri(&subject) && !subject.contains(' ');
        let (ident, key, value) = match t {
            _ if !named
                && ["SubClassOf", "EquivalentClasses", "DisjointClasses"]
                    .iter()
                    .any(|k| k.eq_ignore_ascii_case(t)) =>
            {
                let kw = if t.eq_ignore_ascii_case("SubClassOf") {
                    "SubClassOf"
                } else if t.eq_ignore_ascii_case("EquivalentClasses") {
                    "EquivalentTo"
                } else {
                    "DisjointWith"
                };
                (
                    "owl:class:: cairn:Hypothesis".to_string(),
                    keys::AXIOM,
                    format!("{subject} {kw} {object}"),
                )
            }
            _ if t.eq_ignore_ascii_case("SubClassOf") => {
                (format!("owl:class:: {subject}"), keys::SUB_CLASS_OF, object)
            }
            _ if t.eq_ignore_ascii_case("EquivalentClasses") => (
                format!("owl:class:: {subject}"),
                keys::EQUIVALENT_CLASS,
                object,
            ),
            _ if t.eq_ignore_ascii_case("DisjointClasses") => (
                format!("owl:class:: {subject}"),
                keys::DISJOINT_WITH,
                object,
            ),
            _ if t.eq_ignore_ascii_case("SubObjectPropertyOf") => (
                format!("owl:objectProperty:: {subject}"),
                keys::SUB_PROPERTY_OF,
                object,
            ),
            _ if t.eq_ignore_ascii_case("ClassAssertion") => (
                format!("owl:individual:: {subject}"),
                keys::RDF_TYPE,
                object,
            ),
            _ => match rel_key(t, false) {
                Some(k) if named => (format!("owl:class:: {subject}"), k, object),
                _ => {
                    return Err(Error::validation(
                        &format!("axioms[{i}].axiomType"),
                        format!(
                            "'{t}' is not one of {} (relationships need a named subject)",
                            AXIOM_TYPES.join(", ")
                        ),
                    ))
                }
            },
        };
        if !named && !ident.ends_with("cairn:Hypothesis") {
            return Err(Error::validation(
                &format!("axioms[{i}].subject"),
                format!("'{}' is not an IRI or a known name", a.subject.trim()),
            ));
        }
        let text =
            format!("- {file}\n  - ### OntologyBlock\n    - {ident}\n    - {key}:: {value}\n");
        let page = Page::parse(&text)
            .map_err(|e| Error::validation(&format!("axioms[{i}]"), e.to_string()))?;
        let entry =
            read_entry(&page).map_err(|e| Error::validation(&format!("axioms[{i}]"), e.message))?;
        let (axioms, problems) = ix.ontology.page_axioms(&file, &entry);
        if !problems.is_empty() {
            return Err(problems_error(&format!("axioms[{i}]"), problems));
        }
        all.extend(axioms);
    }
    let checked = checked_in_pool(&s, Vec::new(), all.clone()).await?;
    let s2 = s.clone();
    let (checked, explained) = tokio::task::spawn_blocking(move || {
        let after = &checked.after;
        let known = |c: &str| s2.index.ontology.entity(c).is_some();
        let inferred_direct = |(a, b): &&(String, String)| {
            after.direct_parents(a).contains(&b.as_str())
                && after
                    .superclasses(a)
                    .iter()
                    .any(|x| x.sup == b.as_str() && !x.asserted)
        };
        let mut pairs: Vec<&(String, String)> = checked
            .gained
            .iter()
            .filter(inferred_direct)
            .filter(|(a, _)| known(a))
            .collect();
        pairs.extend(
            checked
                .gained
                .iter()
                .filter(inferred_direct)
                .filter(|(a, _)| !known(a)),
        );
        let explained = pairs
            .into_iter()
            .take(VALIDATE_EXPLAINED)
            .map(|(a, b)| {
                let why = checked
                    .after
                    .explain_subsumption(a, b)
                    .map(|j| j.axioms)
                    .unwrap_or_default();
                ((a.clone(), b.clone()), why)
            })
            .collect();
        (checked, explained)
    })
    .await
    .map_err(|e| Error::Internal(format!("explaining subsumptions: {e}")))?;
    Ok(Validated {
        checked,
        axioms: all,
        explained,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relationship_keys_and_iris_are_normalised() {
        assert_eq!(rel_key("HAS_PART", false), Some("has-part"));
        assert_eq!(rel_key("core:bridgesTo", false), Some("bridges-to"));
        assert_eq!(rel_key("relates to", false), Some("relates-to"));
        assert_eq!(rel_key("isSubclassOf", false), None);
        assert_eq!(rel_key("is-subclass-of", true), Some("is-subclass-of"));
        assert_eq!(rel_key("owns", true), None);
        assert_eq!(
            iri_for("ai", "Vision transformer (ViT-B)"),
            "ai:VisionTransformerViTB"
        );
    }
}
