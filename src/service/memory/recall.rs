//! Recall: the atoms an asking project should know, best first within a token
//! budget. Candidates come from the store (by subject, type, status and the asker's
//! contexts) or, with a text query, from hybrid search over statements (the semantic
//! layer's vectors and BM25, fused); the core's `recall::rank` orders them (by the
//! query's relevance first when there is one, then ACTIVE first, then scope Project >
//! nearer contexts > Org > Global, then a blend of relevance, recent validation,
//! confidence and evidence) and keeps what fits.
//! Also the memory a task is handed (`includeMemory`).

use std::collections::{HashMap, HashSet};

use time::OffsetDateTime;

use crate::domain::field::{Field, Tool};
use crate::domain::memory::evidence::Strength;
use crate::domain::memory::identity::normalise_name;
use crate::domain::memory::model::{MemoryAtom, MemoryAtomType, Subject, SubjectId, SubjectKind};
use crate::domain::memory::recall::{rank, Asker, Candidate, RecallQuery, ScopeMatch, UsageFact};
use crate::domain::Item;
use crate::error::{Error, Result};
use crate::service::semantic::{self, Mode, Rank};
use crate::service::App;
use crate::store::memory::{self as store, AtomFilter, TENANT};
use crate::store::semantic::Fts;
use crate::store::Conn;

use super::atoms::{merged_into, strengths};
use super::{asking_project, atom_from_row, resolve_ref, stamp, SubjectRef};

/// Candidates a recall ranks at most (without a query, the most recently validated).
pub const CANDIDATES_MAX: i64 = 5_000;
/// Hits hybrid search hands to ranking.
const SEARCH_POOL: usize = 200;

/// The cosine similarity a statement no word of the query matched needs when the
/// caller names none.
pub const DEFAULT_MIN_SCORE: f32 = 0.25;

/// What to recall.
#[derive(Debug, Clone)]
pub struct RecallReq {
    pub query: Option<String>,
    /// Subjects (ids or `Kind:name`) the atoms must be about.
    pub about: Vec<String>,
    pub types: Vec<MemoryAtomType>,
    /// The asking project: a Project subject, or an orchestrator project linked to one.
    pub project: Option<String>,
    pub as_of: Option<OffsetDateTime>,
    pub valid_at: Option<OffsetDateTime>,
    pub include_history: bool,
    pub max_tokens: Option<usize>,
    pub limit: usize,
    /// Cosine similarity a text match needs.
    pub min_score: f32,
    pub now: OffsetDateTime,
}

/// One recalled atom.
pub struct RecallHit {
    pub atom: MemoryAtom,
    pub version: i64,
    pub scope: ScopeMatch,
    pub score: f64,
    /// Text relevance (1 without a query).
    pub relevance: f64,
    /// The atom of its exchange whose relevance lifted this one's
    /// (`exchange`), when one did.
    pub lifted_by: Option<String>,
    pub strength: Strength,
    pub tokens: usize,
}

/// A recall's answer.
pub struct Recalled {
    pub hits: Vec<RecallHit>,
    /// Matching atoms that did not fit the budget (or the limit).
    pub left_out: usize,
    /// Candidates dropped by status, scope or time.
    pub filtered: usize,
    pub tokens: usize,
    /// The asking project's subject, when there is one.
    pub asker: Option<Subject>,
    /// Why the asker sees less than it might.
    pub note: Option<String>,
    /// Usage facts of the subjects asked about.
    pub usage: Vec<UsageFact>,
    /// The embedder that ranked a text query.
    pub embedder: Option<&'static str>,
    /// More candidates matched than were ranked.
    pub capped: bool,
    /// Statements without a vector yet when a text query ranked (matched by their
    /// words only until the background embeds them).
    pub not_embedded: u64,
    /// Statements only their meaning matched, below `minScore`.
    pub below_min_score: usize,
    pub subjects: HashMap<SubjectId, (SubjectKind, String)>,
}

/// The asker a project subject stands for: itself, its Org, and the Stacks it uses.
async fn asker_of(c: &mut Conn, s: Option<&Subject>) -> Result<Asker> {
    let Some(s) = s else {
        return Ok(Asker::default());
    };
    let mut near = Vec::new();
    let sid = s.id.to_string();
    let uses = store::uses_of(c, &sid).await?;
    for r in store::subjects_by_ids(c, &uses).await? {
        if r.kind == SubjectKind::Stack.as_wire() {
            if let Ok(id) = SubjectId::parse(&r.id) {
                near.push(id);
            }
        }
    }
    Ok(Asker {
        project: Some(s.id),
        org: s.org(),
        near,
    })
}

fn contexts_of(a: &Asker) -> Vec<String> {
    a.project
        .into_iter()
        .chain(a.near.iter().copied())
        .chain(a.org)
        .map(|s| s.to_string())
        .collect()
}

/// Recalls atoms for an asker, in one read transaction: the candidates, their
/// evidence and the subjects named come from one state of the memory (the ranking's
/// indexes only order them).
pub async fn recall(app: &App, r: RecallReq) -> Result<Recalled> {
    let mut tx = app.store.snapshot().await?;
    let out = recall_in(app, &mut tx, r).await?;
    tx.commit().await?;
    Ok(out)
}

/// [`recall`] inside the caller's read `c` (a snapshot).
pub async fn recall_in(app: &App, c: &mut Conn, r: RecallReq) -> Result<Recalled> {
    let (asker_subject, mut note) = match &r.project {
        None => (
            None,
            Some(format!("no {}: only Global atoms apply", Field::ProjectId)),
        ),
        Some(p) => match asking_project(c, p).await? {
            Some(s) => (Some(s), None),
            None => (
                None,
                Some(format!(
                    "orchestrator project {p} has no Project subject: only Global atoms apply; link one with \
                     {} create (kind Project, orchestratorProject)",
                    Tool::ManageSubject
                )),
            ),
        },
    };
    let asker = asker_of(c, asker_subject.as_ref()).await?;
    let mut about = Vec::new();
    let mut about_ids = Vec::new();
    for s in &r.about {
        let rf = SubjectRef::parse(s).ok_or_else(|| {
            Error::validation(
                Field::About,
                format!("'{s}' is neither a subject id nor Kind:name (Lib:zod)"),
            )
        })?;
        let row = resolve_ref(c, &rf, false, r.now, &mut Vec::new()).await?;
        if let Ok(id) = SubjectId::parse(&row.id) {
            about_ids.push(id);
        }
        about.push(row.id.clone());
        about.extend(merged_into(c, &row.id).await?);
    }
    let statuses: Vec<String> = if r.as_of.is_some() || r.include_history {
        vec![]
    } else {
        ["ACTIVE", "NEEDS_REVIEW", "CONTESTED", "PROPOSED"]
            .iter()
            .map(|s| s.to_string())
            .collect()
    };
    let mut filter = AtomFilter {
        statuses,
        types: r.types.iter().map(|t| t.as_wire().to_string()).collect(),
        about,
        contexts: contexts_of(&asker),
        global: true,
        believed_at: r.as_of.map(stamp),
        ..Default::default()
    };
    let mut relevance: HashMap<String, f64> = HashMap::new();
    let mut embedder = None;
    let mut capped = false;
    let mut not_embedded = 0;
    let mut below_min_score = 0;
    let mut lifted_by = HashMap::new();
    let rows = match r.query.as_deref().filter(|q| !q.trim().is_empty()) {
        None => {
            let rows = store::candidates(c, &filter, CANDIDATES_MAX + 1).await?;
            capped = rows.len() as i64 > CANDIDATES_MAX;
            rows.into_iter().take(CANDIDATES_MAX as usize).collect()
        }
        Some(q) => {
            let narrowed = !filter.about.is_empty() || !filter.types.is_empty();
            let allowed: Option<HashSet<String>> = if narrowed {
                Some(
                    store::candidates(c, &filter, i64::MAX)
                        .await?
                        .into_iter()
                        .map(|r| r.id)
                        .collect(),
                )
            } else {
                None
            };
            let snap = semantic::snapshot(app, TENANT).await?;
            not_embedded = snap.not_embedded;
            let qv = semantic::embed_query(app, q).await?;
            embedder = Some(qv.embedder);
            let keep = |id: &str| allowed.as_ref().is_none_or(|a| a.contains(id));
            let ranked = semantic::rank(
                app,
                &snap,
                TENANT,
                Rank {
                    source: "memory_atom",
                    index: Fts::MemoryAtoms,
                    query: q,
                    qvec: &qv.vector,
                    mode: Mode::Hybrid,
                    min_score: r.min_score,
                    prefix: false,
                    keep: &keep,
                    lexical: None,
                    vectors: None,
                },
                SEARCH_POOL,
            )
            .await?;
            below_min_score = ranked.below_min_score;
            let hits = ranked.hits;
            // The fused score is the query's relevance, 0 to 1, the order's first key.
            for h in &hits {
                relevance.insert(h.row_id.clone(), h.fused.clamp(0.0, 1.0));
            }
            filter.ids = Some(hits.iter().map(|h| h.row_id.clone()).collect());
            let mut rows = store::candidates(c, &filter, SEARCH_POOL as i64).await?;
            lifted_by = super::exchange::lift(c, &rows, &mut relevance).await?;
            let found: HashSet<&str> = hits.iter().map(|h| h.row_id.as_str()).collect();
            let added: Vec<String> = lifted_by
                .keys()
                .filter(|id| !found.contains(id.as_str()))
                .cloned()
                .collect();
            if !added.is_empty() {
                let n = added.len() as i64;
                filter.ids = Some(added);
                rows.extend(store::candidates(c, &filter, n).await?);
            }
            rows
        }
    };
    let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
    let strength = strengths(c, &ids).await?;
    let mut atoms = Vec::with_capacity(rows.len());
    let mut versions = Vec::with_capacity(rows.len());
    for row in &rows {
        atoms.push(atom_from_row(row)?);
        versions.push(row.version);
    }
    let cands: Vec<Candidate<'_>> = atoms
        .iter()
        .zip(&rows)
        .map(|(a, row)| Candidate {
            atom: a,
            relevance: relevance.get(&row.id).copied().unwrap_or(1.0),
            strength: strength.get(&row.id).copied().unwrap_or_default(),
        })
        .collect();
    let mut q = RecallQuery::new(asker.clone(), r.now);
    q.as_of = r.as_of;
    q.valid_at = r.valid_at;
    q.include_history = r.include_history;
    q.max_tokens = r.max_tokens;
    q.by_relevance = embedder.is_some();
    let ranked = rank(&cands, &q);
    let by_id: HashMap<_, usize> = atoms.iter().enumerate().map(|(i, a)| (a.id, i)).collect();
    let mut hits = Vec::new();
    let total = ranked.hits.len() + ranked.left_out;
    for h in ranked.hits.iter().take(r.limit) {
        let Some(&i) = by_id.get(&h.id) else { continue };
        let a = &atoms[i];
        hits.push(RecallHit {
            atom: a.clone(),
            version: versions[i],
            scope: h.scope,
            score: h.score,
            relevance: cands[i].relevance,
            lifted_by: lifted_by.remove(&a.id.to_string()),
            strength: cands[i].strength,
            tokens: h.tokens,
        });
    }
    let tokens = hits.iter().map(|h| h.tokens).sum();
    let left_out = total - hits.len();
    let usage = super::subjects::usage_of(c, &about_ids).await?;
    let mut sids: Vec<SubjectId> = hits
        .iter()
        .flat_map(|h| h.atom.about.into_iter().chain(h.atom.context.subject()))
        .collect();
    sids.extend(about_ids.iter().copied());
    let subjects = super::subjects::names_of(c, &sids).await?;
    if capped {
        note = Some(format!(
            "more than {CANDIDATES_MAX} atoms match: the {CANDIDATES_MAX} most recently validated were ranked; \
             narrow with about, types or query"
        ));
    }
    Ok(Recalled {
        hits,
        left_out,
        filtered: ranked.filtered,
        tokens,
        asker: asker_subject,
        note,
        usage,
        embedder,
        capped,
        not_embedded,
        below_min_score,
        subjects,
    })
}

/// Default budget of the memory a task is handed.
pub const TASK_MEMORY_TOKENS: usize = 1_000;

/// The memory handed to a task: its project's subject and the subjects its text names.
pub struct TaskMemory {
    pub recalled: Recalled,
    /// Subjects the task's title, summary or description names.
    pub named: Vec<Subject>,
}

/// The words of a text and their pairs, in identity's normal form: what a task may
/// name subjects by (`zod`, `colinhacks/zod`, `next.js`, `React Query`).
fn candidate_names(text: &str) -> Vec<String> {
    let words: Vec<&str> = text
        .split(|c: char| {
            c.is_whitespace()
                || matches!(
                    c,
                    ',' | ';' | '(' | ')' | '[' | ']' | '`' | '"' | '\'' | '!' | '?'
                )
        })
        .map(|w| w.trim_end_matches(['.', ':']))
        .filter(|w| !w.is_empty() && w.len() <= 100)
        .take(2_000)
        .collect();
    let mut out: Vec<String> = Vec::new();
    let mut push = |n: String| {
        if !n.is_empty() && !out.contains(&n) {
            out.push(n);
        }
    };
    for (i, w) in words.iter().enumerate() {
        push(normalise_name(w));
        if let Some(next) = words.get(i + 1) {
            push(normalise_name(&format!("{w} {next}")));
        }
    }
    out
}

/// The ACTIVE atoms (and those due for review) relevant to a task: scoped to its
/// project's subject, or about a subject its text names (in a scope that applies to
/// the project), best first within `max_tokens`.
pub async fn for_task(
    app: &App,
    task: &Item,
    max_tokens: usize,
    now: OffsetDateTime,
) -> Result<TaskMemory> {
    let mut tx = app.store.snapshot().await?;
    let m = for_task_in(&mut tx, task, max_tokens, now).await?;
    tx.commit().await?;
    Ok(m)
}

/// [`for_task`] inside the caller's read `c` (a snapshot).
pub async fn for_task_in(
    c: &mut Conn,
    task: &Item,
    max_tokens: usize,
    now: OffsetDateTime,
) -> Result<TaskMemory> {
    let project = match &task.project_id {
        Some(p) => match store::subject_of_project(c, p).await? {
            Some(row) => Some(super::load_subject(c, &row.id).await?.0),
            None => None,
        },
        None => None,
    };
    let asker = asker_of(c, project.as_ref()).await?;
    let text = format!(
        "{} {} {}",
        task.name,
        task.summary,
        task.description.as_deref().unwrap_or("")
    );
    let norms = candidate_names(&text);
    let named_ids = store::subjects_with_norms(c, &norms).await?;
    let named_ids: Vec<String> = named_ids
        .into_iter()
        .filter(|id| Some(id.clone()) != project.as_ref().map(|p| p.id.to_string()))
        .collect();
    let named = super::load_subjects(c, &named_ids).await?;
    let current: Vec<String> = vec!["ACTIVE".into(), "NEEDS_REVIEW".into()];
    let mut rows = Vec::new();
    if let Some(p) = &project {
        let f = AtomFilter {
            statuses: current.clone(),
            contexts: vec![p.id.to_string()],
            ..Default::default()
        };
        rows.extend(store::candidates(c, &f, CANDIDATES_MAX).await?);
    }
    if !named_ids.is_empty() {
        let f = AtomFilter {
            statuses: current,
            about: named_ids.clone(),
            contexts: contexts_of(&asker),
            global: true,
            ..Default::default()
        };
        for r in store::candidates(c, &f, CANDIDATES_MAX).await? {
            if !rows.iter().any(|x: &store::AtomRow| x.id == r.id) {
                rows.push(r);
            }
        }
    }
    let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
    let strength = strengths(c, &ids).await?;
    let mut atoms = Vec::new();
    for r in &rows {
        atoms.push(atom_from_row(r)?);
    }
    let cands: Vec<Candidate<'_>> = atoms
        .iter()
        .zip(&rows)
        .map(|(a, row)| Candidate {
            atom: a,
            relevance: 1.0,
            strength: strength.get(&row.id).copied().unwrap_or_default(),
        })
        .collect();
    let mut q = RecallQuery::new(asker, now);
    q.max_tokens = Some(max_tokens);
    let ranked = rank(&cands, &q);
    let by_id: HashMap<_, usize> = atoms.iter().enumerate().map(|(i, a)| (a.id, i)).collect();
    let mut hits = Vec::new();
    for h in &ranked.hits {
        let Some(&i) = by_id.get(&h.id) else { continue };
        hits.push(RecallHit {
            atom: atoms[i].clone(),
            version: rows[i].version,
            scope: h.scope,
            score: h.score,
            relevance: 1.0,
            lifted_by: None,
            strength: cands[i].strength,
            tokens: h.tokens,
        });
    }
    let sids: Vec<SubjectId> = hits
        .iter()
        .flat_map(|h| h.atom.about.into_iter().chain(h.atom.context.subject()))
        .collect();
    let subjects = super::subjects::names_of(c, &sids).await?;
    let note = match (&task.project_id, &project) {
        (None, _) => Some("the task belongs to no project: only atoms about subjects it names apply".to_string()),
        (Some(p), None) => Some(format!(
            "project {p} has no Project subject, so no atom is scoped to it: link one with {} create \
             (kind Project, orchestratorProject)",
            Tool::ManageSubject
        )),
        _ => None,
    };
    Ok(TaskMemory {
        recalled: Recalled {
            tokens: ranked.tokens,
            left_out: ranked.left_out,
            filtered: ranked.filtered,
            hits,
            asker: project,
            note,
            usage: vec![],
            embedder: None,
            capped: false,
            not_embedded: 0,
            below_min_score: 0,
            subjects,
        },
        named,
    })
}

#[cfg(test)]
mod tests {
    use super::candidate_names;

    #[test]
    fn a_task_names_subjects_by_words_and_pairs() {
        let n = candidate_names("Validate input with Zod (colinhacks/zod); use React Query.");
        assert!(n.contains(&"zod".to_string()), "{n:?}");
        assert!(n.contains(&"react-query".to_string()), "{n:?}");
        assert!(n.contains(&"validate".to_string()));
    }
}
