//! Proposals and hypothetical axioms, checked by the reasoner before anything is
//! written.
//!
//! A proposal (create or amend) is turned into its page, resolved against the synced
//! ontology, checked for consistency against the saturated ontology plus (minus) its
//! axioms without changing the base, and scored; all of that runs before any lock is
//! taken. Every field an agent gives becomes one line of the page or is refused
//! (`VALIDATION_ERROR` naming it): prose (a definition, a custom field's value) has
//! its whitespace runs, line breaks included, folded to one space; every other field
//! must hold no line break or control character. The page must then read back as
//! the page checked, to the same axioms. [`super::stage`] reserves the term id,
//! commits the page on its branch and stages the row.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use super::axioms::{stated, AxiomInput, OnPage};
use super::stage::{commit, reads_back};
use super::{served, today};
use crate::domain::field::Field;
use crate::domain::ontology::draft::{self, ClassDraft};
use crate::domain::ontology::entity::{key_rank, keys, read_entry, split_terms, RELATIONSHIPS};
use crate::domain::ontology::expr::looks_like_iri;
use crate::domain::ontology::page::{file_name, title_from_file};
use crate::domain::ontology::quality::{self, QualityReport};
use crate::domain::ontology::records::{ProposalFile, ProposalRecord};
use crate::domain::ontology::{
    classification_diff, Axiom, Classification, EntityKind, Page, Problem, Sourced,
};
use crate::domain::ontology_index::Index;
use crate::error::{Clash, Details, Error, Result};
use crate::service::App;
use crate::store::ontology as db;

use super::read::{cite, entity};
pub use super::stage::push_again;

/// Refuses a field that would not be one line of a page: a line break as CommonMark
/// reads one (LF, CR), a Unicode line separator, or another control character.
pub(super) fn one_line(parameter: impl std::fmt::Display, value: &str) -> Result<()> {
    match draft::not_one_line(value) {
        None => Ok(()),
        Some(c) => Err(Error::validation(
            parameter,
            format!(
                "holds U+{:04X} (a line break or control character); a page property is one line, so send it without one",
                c as u32
            ),
        )),
    }
}

/// [`one_line`] for each of `values`.
fn each_one_line<'a>(parameter: Field, values: impl IntoIterator<Item = &'a String>) -> Result<()> {
    values.into_iter().try_for_each(|v| one_line(parameter, v))
}

/// Who proposes, and why (`AgentContext`, docs/ontology.md, proposals).
#[derive(Debug, Clone)]
pub struct AgentContext {
    pub agent_id: String,
    pub agent_type: String,
    pub task_description: String,
    pub session_id: Option<String>,
    /// As given: a decimal such as 0.8 is kept and answered as 0.8.
    pub confidence: f64,
}

/// A new class (`NoteProposal`, docs/ontology.md, proposals).
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
    /// Further axioms, in the shape `ontology_validate` takes ([`AxiomInput`]); an
    /// empty subject is the new class.
    pub axioms: Vec<AxiomInput>,
}

/// Changes to an existing page (`NoteAmendment`, docs/ontology.md, proposals).
#[derive(Debug, Clone, Default)]
pub struct Amendment {
    pub add_relationships: Vec<(String, Vec<String>)>,
    pub remove_relationships: Vec<(String, Vec<String>)>,
    pub definition: Option<String>,
    pub quality_score: Option<f32>,
    pub add_alt_terms: Vec<String>,
    /// Other fields; an empty value removes the field.
    pub custom_fields: Vec<(String, String)>,
    /// Axioms to add, in the shape `ontology_validate` takes; an empty subject is the
    /// amended entity.
    pub add_axioms: Vec<AxiomInput>,
}

/// The page key of a relationship, however it was spelled (`has-part`, `hasPart`,
/// `HAS_PART`, `core:hasPart`), or of disjointness (`disjointWith`,
/// `owl:disjointWith`); `is-subclass-of` too when `parents` allows it.
pub fn rel_key(raw: &str, parents: bool) -> Option<&'static str> {
    let norm: String = raw
        .trim()
        .trim_start_matches("core:")
        .trim_start_matches("owl:")
        .chars()
        .filter(|c| c.is_alphanumeric())
        .collect::<String>()
        .to_lowercase();
    if parents && ["issubclassof", "subclassof", "parent", "parents"].contains(&norm.as_str()) {
        return Some(keys::IS_SUBCLASS_OF);
    }
    if norm == "disjointwith" {
        return Some(keys::DISJOINT_WITH);
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

pub(super) fn problems_error(parameter: impl std::fmt::Display, ps: Vec<Problem>) -> Error {
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
        parameter: parameter.to_string(),
        details: Details::Problems(ps),
    }
}

/// A page link to an entity: its page's title (as Logseq links it), else its IRI.
fn link_name(ix: &Index, iri: &str) -> String {
    // A title a file name spells with a line break (`%0A`) is linked by its IRI.
    ix.page_of(iri)
        .map(title_from_file)
        .filter(|t| draft::not_one_line(t).is_none())
        .unwrap_or_else(|| iri.to_string())
}

/// Resolves the targets an agent named (IRIs, terms, titles) to page link names.
fn targets(ix: &Index, parameter: Field, names: &[String]) -> Result<Vec<String>> {
    each_one_line(parameter, names)?;
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
            Field::AgentContext,
            "agentType must be 1-64 letters, digits, '-', '_' or '.' (it names the branch)",
        ));
    }
    // Both go into the commit message.
    one_line(format!("{}.agentId", Field::AgentContext), &a.agent_id)?;
    if let Some(s) = &a.session_id {
        one_line(format!("{}.sessionId", Field::AgentContext), s)?;
    }
    if !(0.0..=1.0).contains(&a.confidence) {
        return Err(Error::validation(
            Field::AgentContext,
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
        parameter: Field::Proposal.to_string(),
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
            Field::Domain,
            "must be a short prefix of letters and digits, like ai",
        ));
    }
    let term = p.preferred_term.trim().to_string();
    one_line(Field::PreferredTerm, &term)?;
    one_line(Field::Definition, &draft::one_line(&p.definition))?;
    one_line(Field::Physicality, &p.physicality)?;
    one_line(Field::Role, &p.role)?;
    each_one_line(Field::AltTerms, &p.alt_terms)?;
    if let Some(c) = &p.owl_class {
        one_line(Field::OwlClass, c)?;
    }
    let iri = p
        .owl_class
        .clone()
        .map(|c| c.trim().to_string())
        .unwrap_or_else(|| iri_for(&domain, &term));
    if !looks_like_iri(&iri) {
        return Err(Error::validation(
            Field::OwlClass,
            format!("'{iri}' is not an IRI like {domain}:VisionTransformer"),
        ));
    }
    if iri.split_once(':').map(|(d, _)| d) != Some(domain.as_str()) {
        return Err(Error::validation(
            Field::OwlClass,
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
            "{iri} exists already{at}: propose an amendment with iri instead"
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
        .map_err(|e| Error::validation(Field::PreferredTerm, e.to_string()))?;
    {
        let mut c = app.store.read().await?;
        if db::page_path_taken(&mut c, project_id, &path).await? {
            return Err(Error::invalid(format!(
                "{path} exists already: choose another preferred term"
            )));
        }
    }
    let (mut relationships, mut disjoint_with) = (Vec::new(), Vec::new());
    for (k, ts) in &p.relationships {
        let key = rel_key(k, false).ok_or_else(|| {
            Error::validation(
                Field::Relationships,
                format!("'{k}' is not one of has-part, requires, enables, bridges-to, relates-to, disjointWith"),
            )
        })?;
        let ts = targets(ix, Field::Relationships, ts)?;
        if key == keys::DISJOINT_WITH {
            disjoint_with.extend(ts);
        } else {
            relationships.push((key.to_string(), ts));
        }
    }
    let parents = targets(ix, Field::IsSubclassOf, &p.is_subclass_of)?;
    let on = OnPage {
        kind: EntityKind::Class,
        iri: &iri,
        path: &path,
        title: &term,
    };
    let lines = axiom_lines(ix, &on, &p.axioms)?;
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
            disjoint_with: disjoint_with.clone(),
            axioms: lines.clone(),
        }
        .to_page()
    };
    // Checked with a placeholder id of the right shape; the reserved one changes no
    // axiom and no score.
    let page = make(&format!("{}-0000", domain.to_uppercase()));
    reads_back("create", &path, &page)?;
    let axioms = page_axioms(ix, &path, &page)?;
    let q = quality::assess(&page);
    let min = app.config.ontology.min_proposal_quality;
    if q.check(min).is_err() {
        return Err(refuse_quality(&q, min));
    }
    // A class joins its domain's hierarchy; only a domain's first class may stand alone.
    let domain_has_classes = ix
        .ontology
        .iris(EntityKind::Class)
        .any(|c| crate::domain::ontology_index::domain_of(&ix.ontology, c) == domain);
    if parents.is_empty() && domain_has_classes {
        return Err(Error::validation(
            Field::IsSubclassOf,
            format!("is required: the domain {domain} has classes already; name the one this class is a kind of"),
        ));
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
            round_trip(ix, "create", &p2, &page, &axioms)?;
            Ok(vec![(p2.clone(), page)])
        },
    )
    .await
}

/// The page lines `(key, value)` that state a proposal's axioms on its page, each
/// checked and resolved on its own first so a refusal names it (`axioms[i]...`). An
/// axiom without a subject, or with the page's term or IRI as its subject, is about
/// the page's entity.
fn axiom_lines(ix: &Index, on: &OnPage, input: &[AxiomInput]) -> Result<Vec<(String, String)>> {
    let mut lines = Vec::new();
    for (i, a) in input.iter().enumerate() {
        let mut a = a.clone();
        let s = a.subject.trim();
        if s.is_empty() || s.eq_ignore_ascii_case(on.title) || s == on.iri {
            a.subject = on.iri.to_string();
        }
        let st = stated(ix, i, &a, Some(on))?;
        lines.push((st.key.to_string(), st.value));
    }
    Ok(lines)
}

/// The axioms a page states, resolved against the ontology; a name that resolves
/// nowhere refuses the proposal with the page's problems.
fn page_axioms(ix: &Index, path: &str, page: &Page) -> Result<Vec<Sourced>> {
    let entry = read_entry(page).map_err(|e| {
        problems_error(
            Field::Proposal,
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
        return Err(problems_error(Field::Proposal, problems));
    }
    Ok(axioms)
}

/// The page Cairn is about to commit reads back as the same page (see
/// [`reads_back`]) and states the axioms that were checked.
fn round_trip(
    ix: &Index,
    operation: &str,
    path: &str,
    page: &Page,
    checked: &[Sourced],
) -> Result<()> {
    let text = reads_back(operation, path, page)?;
    let page = Page::parse(&text).map_err(|e| Error::validation(Field::Proposal, e.to_string()))?;
    let again = page_axioms(ix, path, &page)?;
    let key = |v: &[Sourced]| {
        let mut a: Vec<&Axiom> = v.iter().map(|s| &s.axiom).collect();
        a.sort();
        a.into_iter().cloned().collect::<Vec<_>>()
    };
    if key(&again) != key(checked) {
        return Err(Error::validation(
            Field::Proposal,
            format!("{path} does not read back to the axioms that were checked"),
        ));
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
    if let Some(d) = &a.definition {
        one_line(Field::Definition, &draft::one_line(d))?;
    }
    each_one_line(Field::AltTerms, &a.add_alt_terms)?;
    for (k, v) in &a.custom_fields {
        one_line(Field::CustomFields, k)?;
        one_line(Field::CustomFields, &draft::one_line(v))?;
    }
    for (_, ts) in &a.remove_relationships {
        each_one_line(Field::RemoveRelationships, ts)?;
    }
    for (k, ts) in &a.add_relationships {
        let key = rel_key(k, true).ok_or_else(|| Error::validation(Field::AddRelationships, format!("'{k}' is not is-subclass-of, has-part, requires, enables, bridges-to, relates-to or disjointWith")))?;
        for t in targets(ix, Field::AddRelationships, ts)? {
            draft::add_link(&mut page, key, &t);
        }
    }
    for (k, ts) in &a.remove_relationships {
        let key = rel_key(k, true).ok_or_else(|| Error::validation(Field::RemoveRelationships, format!("'{k}' is not is-subclass-of, has-part, requires, enables, bridges-to, relates-to or disjointWith")))?;
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
                    Field::RemoveRelationships,
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
                Field::CustomFields,
                format!("'{k}' cannot be set as a custom field (identity and logical keys change through their own parameters)"),
            ));
        }
        if v.trim().is_empty() {
            page.remove(k);
        } else {
            draft::set_field(&mut page, k, v);
        }
    }
    let kind = ix
        .ontology
        .entity(&iri)
        .map_or(EntityKind::Class, |e| e.kind);
    let title = page
        .title()
        .map(str::to_string)
        .unwrap_or_else(|| title_from_file(&path));
    let on = OnPage {
        kind,
        iri: &iri,
        path: &path,
        title: &title,
    };
    for (k, v) in axiom_lines(ix, &on, &a.add_axioms)? {
        draft::add_statement(&mut page, &k, &v);
    }
    if page.write() == old {
        return Err(Error::invalid(format!(
            "the amendment changes nothing on {path}"
        )));
    }
    page.set(keys::LAST_UPDATED, &today().1, &key_rank);
    reads_back("amend", &path, &page)?;
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
        round_trip(ix, "amend", &path, &page, &checked_axioms)?;
        Ok(vec![(path, page)])
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relationship_keys_and_iris_are_normalised() {
        assert_eq!(rel_key("HAS_PART", false), Some("has-part"));
        assert_eq!(rel_key("core:bridgesTo", false), Some("bridges-to"));
        assert_eq!(rel_key("relates to", false), Some("relates-to"));
        // The proposal's field for parents is no relationship key.
        assert_eq!(rel_key(&Field::IsSubclassOf.to_string(), false), None);
        assert_eq!(rel_key("is-subclass-of", true), Some("is-subclass-of"));
        assert_eq!(rel_key("owns", true), None);
        assert_eq!(rel_key("owl:disjointWith", false), Some("owl:disjointWith"));
        assert_eq!(
            iri_for("ai", "Vision transformer (ViT-B)"),
            "ai:VisionTransformerViTB"
        );
    }
}
