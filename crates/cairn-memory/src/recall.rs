//! Recall: orders the atoms a search found for an asking project (docs/memory.md,
//! recall order: ACTIVE first, then scope Project > Org > Global, then recent validation,
//! confidence and evidence), by the caller's text relevance first when a text query
//! found them; filters by
//! `asOf` and `validAt`; keeps the best within a token budget and counts what it
//! left out. Also derives the aggregate facts of `USES` edges ("used in ≥ 3
//! projects"). Knows nothing of search: relevance arrives as a number.
//!
//! With a text query the order is the relevance first, in bands of
//! [`RELEVANCE_BAND`] (an atom that answers the question outranks one that merely
//! shares its subject, whatever their status), then within a band the order below.
//! Without one it is: status tier, then scope tier, then a score. Status and scope are
//! categories, so they sort outright. Recency, confidence and evidence are
//! continuous, and sorting on them one after another would let a validation one
//! second newer beat any confidence; so they are blended with the relevance into
//! one score, weighted in that order of importance (validation, confidence, evidence):
//!
//! ```text
//! score = 0.55·relevance + 0.20·recency + 0.15·confidence + 0.10·evidence
//! recency = 0.5^(days since the last validation / 90)
//! confidence = decayed to now (see decay); evidence = strength tier / 3
//! ```
//!
//! Status tiers: ACTIVE, NEEDS_REVIEW, CONTESTED, PROPOSED; DRAFT, SUPERSEDED,
//! DEPRECATED and ARCHIVED only with `includeHistory`. With `asOf`, the atoms
//! believed then are returned whatever their status now, and one retired since
//! ranks as it did while current (ACTIVE). Scope tiers: the asking project, then
//! its nearer contexts (stacks it uses, the person asking), then its Org, then
//! Global; an atom scoped to any other context is not returned.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use time::OffsetDateTime;

use super::decay::effective_confidence;
use super::evidence::Strength;
use super::identity::canonical;
use super::model::{
    AtomId, Context, EdgeKind, MemoryAtom, MemoryEdge, MemoryStatus, NodeRef, Subject, SubjectId,
    SubjectKind,
};

/// Who is asking: the project, its Org, and nearer contexts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Asker {
    /// The asking project's subject.
    pub project: Option<SubjectId>,
    /// Its Org.
    pub org: Option<SubjectId>,
    /// Other contexts that apply: stacks the project uses, the person asking.
    pub near: Vec<SubjectId>,
}

/// How well an atom's context matches the asker; best first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ScopeMatch {
    /// Scoped to the asking project.
    Project,
    /// Scoped to a stack it uses or the person asking.
    Near,
    /// Scoped to its Org.
    Org,
    /// Applies everywhere.
    Global,
}

/// The scope match of a context, or None when it applies elsewhere.
pub fn scope_match(context: Context, asker: &Asker) -> Option<ScopeMatch> {
    match context {
        Context::Global => Some(ScopeMatch::Global),
        Context::In(s) if Some(s) == asker.project => Some(ScopeMatch::Project),
        Context::In(s) if asker.near.contains(&s) => Some(ScopeMatch::Near),
        Context::In(s) if Some(s) == asker.org => Some(ScopeMatch::Org),
        Context::In(_) => None,
    }
}

/// The weights of the score.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    /// Of the caller's text relevance (0..1).
    pub relevance: f64,
    /// Of recency.
    pub recency: f64,
    /// Of confidence.
    pub confidence: f64,
    /// Of evidence strength.
    pub evidence: f64,
    /// Days for recency to halve.
    pub recency_half_life_days: f64,
}

impl Default for Weights {
    fn default() -> Self {
        Weights {
            relevance: 0.55,
            recency: 0.20,
            confidence: 0.15,
            evidence: 0.10,
            recency_half_life_days: 90.0,
        }
    }
}

/// What to recall.
#[derive(Debug, Clone, PartialEq)]
pub struct RecallQuery {
    /// Who asks.
    pub asker: Asker,
    /// Now.
    pub now: OffsetDateTime,
    /// What Cairn believed at this time.
    pub as_of: Option<OffsetDateTime>,
    /// What held in the world at this time.
    pub valid_at: Option<OffsetDateTime>,
    /// Return drafts and retired atoms too.
    pub include_history: bool,
    /// Token budget (characters / 4); None: no limit.
    pub max_tokens: Option<usize>,
    /// Score weights.
    pub weights: Weights,
    /// Order by relevance first (a text query ranked the candidates).
    pub by_relevance: bool,
}

/// Relevances closer than this are one band: a text query's order falls back to
/// status, scope and the blended score between atoms it cannot tell apart.
pub const RELEVANCE_BAND: f64 = 0.01;

impl RecallQuery {
    /// A query for an asker at `now` with the defaults.
    pub fn new(asker: Asker, now: OffsetDateTime) -> RecallQuery {
        RecallQuery {
            asker,
            now,
            as_of: None,
            valid_at: None,
            include_history: false,
            max_tokens: None,
            weights: Weights::default(),
            by_relevance: false,
        }
    }
}

/// An atom the search found, with its relevance and evidence.
#[derive(Debug, Clone, Copy)]
pub struct Candidate<'a> {
    /// The atom.
    pub atom: &'a MemoryAtom,
    /// Text relevance from the hybrid search, 0..1 (1 when there was no text).
    pub relevance: f64,
    /// Its evidence strength.
    pub strength: Strength,
}

/// One recalled atom.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit {
    /// The atom.
    pub id: AtomId,
    /// Its status tier (0 = ACTIVE).
    pub status_tier: u8,
    /// Its scope match.
    pub scope: ScopeMatch,
    /// Its blended score.
    pub score: f64,
    /// What it costs of the budget.
    pub tokens: usize,
}

/// The answer of a recall.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Recall {
    /// Best first.
    pub hits: Vec<Hit>,
    /// Matching atoms that did not fit the budget.
    pub left_out: usize,
    /// Candidates not returned at all (status, scope or time).
    pub filtered: usize,
    /// Tokens used.
    pub tokens: usize,
}

/// Tokens every hit costs besides its statement: id, type, status, confidence.
pub const HIT_OVERHEAD_TOKENS: usize = 12;

/// What an atom costs of a budget: its statement's characters / 4, rounded up, plus
/// [`HIT_OVERHEAD_TOKENS`].
pub fn tokens(atom: &MemoryAtom) -> usize {
    atom.statement.chars().count().div_ceil(4) + HIT_OVERHEAD_TOKENS
}

fn status_tier(s: MemoryStatus, include_history: bool) -> Option<u8> {
    match s {
        MemoryStatus::Active => Some(0),
        MemoryStatus::NeedsReview => Some(1),
        MemoryStatus::Contested => Some(2),
        MemoryStatus::Proposed => Some(3),
        _ if !include_history => None,
        MemoryStatus::Draft => Some(4),
        MemoryStatus::Superseded => Some(5),
        MemoryStatus::Deprecated => Some(6),
        MemoryStatus::Archived => Some(7),
    }
}

/// Ranks candidates for a query (see the module comment).
pub fn rank(candidates: &[Candidate<'_>], q: &RecallQuery) -> Recall {
    let w = q.weights;
    let mut keyed: Vec<(u64, u8, ScopeMatch, f64, usize)> = Vec::with_capacity(candidates.len());
    for (i, c) in candidates.iter().enumerate() {
        let a = c.atom;
        let tier = match q.as_of {
            Some(t) => {
                if !a.believed_at(t) {
                    continue;
                }
                if a.retired_at.is_some() {
                    Some(0)
                } else {
                    status_tier(a.status, q.include_history)
                }
            }
            None => status_tier(a.status, q.include_history),
        };
        let Some(tier) = tier else { continue };
        if q.valid_at.is_some_and(|t| !a.holds_at(t)) {
            continue;
        }
        let Some(scope) = scope_match(a.context, &q.asker) else {
            continue;
        };
        let at = q.as_of.unwrap_or(q.now);
        let days = (at - a.validation_anchor()).as_seconds_f64().max(0.0) / 86_400.0;
        let recency = (-days / w.recency_half_life_days).exp2();
        let score = w.relevance * c.relevance.clamp(0.0, 1.0)
            + w.recency * recency
            + w.confidence * effective_confidence(a, at)
            + w.evidence * c.strength.fraction();
        // Bands count down so that the sort, ascending, puts the most relevant first.
        let band = if q.by_relevance {
            u64::MAX - (c.relevance.clamp(0.0, 1.0) / RELEVANCE_BAND).round() as u64
        } else {
            0
        };
        keyed.push((band, tier, scope, score, i));
    }
    let filtered = candidates.len() - keyed.len();
    type Key = (u64, u8, ScopeMatch, f64, usize);
    let order = |x: &Key, y: &Key| {
        x.0.cmp(&y.0)
            .then(x.1.cmp(&y.1))
            .then(x.2.cmp(&y.2))
            .then(y.3.total_cmp(&x.3))
            .then_with(|| {
                let (a, b) = (candidates.get(x.4), candidates.get(y.4));
                a.map(|c| c.atom.id).cmp(&b.map(|c| c.atom.id))
            })
    };
    // A budget admits at most this many hits (each costs more than the overhead), so
    // only that many need sorting: select them first, then sort those.
    let cap = q.max_tokens.map(|t| t / (HIT_OVERHEAD_TOKENS + 1) + 1);
    match cap {
        Some(k) if k < keyed.len() => {
            keyed.select_nth_unstable_by(k, order);
            keyed.truncate(k + 1);
            keyed.sort_unstable_by(order);
        }
        _ => keyed.sort_unstable_by(order),
    }
    let matching = keyed.len().max(candidates.len() - filtered);
    let mut out = Recall {
        filtered,
        ..Recall::default()
    };
    for (n, (_, tier, scope, score, i)) in keyed.iter().enumerate() {
        let Some(c) = candidates.get(*i) else {
            continue;
        };
        let t = tokens(c.atom);
        if q.max_tokens.is_some_and(|max| out.tokens + t > max) {
            out.left_out = matching - n;
            break;
        }
        out.tokens += t;
        out.hits.push(Hit {
            id: c.atom.id,
            status_tier: *tier,
            scope: *scope,
            score: *score,
            tokens: t,
        });
    }
    out
}

/// A fact derived at read time from `USES` edges, never stored (docs/memory.md, usage facts).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UsageFact {
    /// The subject used.
    pub subject: SubjectId,
    /// The projects using it, by id.
    pub projects: Vec<SubjectId>,
    /// The predicate such a fact would have if stored: `used_in_projects_count`.
    pub predicate: &'static str,
    /// `Zod is used in 3 projects`.
    pub statement: String,
}

/// The usage facts of subjects used by at least `min_projects` distinct Project
/// subjects, following merges; none is stored, so removing an edge removes the fact.
pub fn usage_facts(
    subjects: &[Subject],
    edges: &[MemoryEdge],
    min_projects: usize,
) -> Vec<UsageFact> {
    let merged: HashMap<SubjectId, SubjectId> = subjects
        .iter()
        .filter_map(|s| s.merged_into.map(|m| (s.id, m)))
        .collect();
    let by_id: HashMap<SubjectId, &Subject> = subjects.iter().map(|s| (s.id, s)).collect();
    let mut users: BTreeMap<SubjectId, BTreeSet<SubjectId>> = BTreeMap::new();
    for e in edges {
        if let (NodeRef::Subject(p), EdgeKind::Uses, NodeRef::Subject(t)) = (e.from, e.kind, e.to) {
            let (p, t) = (canonical(p, &merged), canonical(t, &merged));
            if p != t
                && by_id
                    .get(&p)
                    .is_some_and(|s| s.kind == SubjectKind::Project)
            {
                users.entry(t).or_default().insert(p);
            }
        }
    }
    users
        .into_iter()
        .filter(|(_, ps)| ps.len() >= min_projects.max(1))
        .map(|(s, ps)| {
            let name = by_id
                .get(&s)
                .map_or_else(|| s.to_string(), |x| x.name.clone());
            let n = ps.len();
            UsageFact {
                subject: s,
                projects: ps.into_iter().collect(),
                predicate: "used_in_projects_count",
                statement: format!(
                    "{name} is used in {n} project{}",
                    if n == 1 { "" } else { "s" }
                ),
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::model::{sample_atom, ArtifactFields, SubjectDetails};
    use super::super::wire::at;
    use super::*;

    const P: SubjectId = SubjectId(1);
    const ORG: SubjectId = SubjectId(2);
    const OTHER_ORG: SubjectId = SubjectId(3);
    const STACK: SubjectId = SubjectId(4);

    fn asker() -> Asker {
        Asker {
            project: Some(P),
            org: Some(ORG),
            near: vec![STACK],
        }
    }

    fn atom(id: u128, status: MemoryStatus, context: Context) -> MemoryAtom {
        MemoryAtom {
            status,
            context,
            recorded_at: at("2025-06-01"),
            ..sample_atom(AtomId(id))
        }
    }

    fn cands(atoms: &[MemoryAtom]) -> Vec<Candidate<'_>> {
        atoms
            .iter()
            .map(|a| Candidate {
                atom: a,
                relevance: 0.5,
                strength: Strength::Documented,
            })
            .collect()
    }

    fn ids(r: &Recall) -> Vec<u128> {
        r.hits.iter().map(|h| h.id.0).collect()
    }

    #[test]
    fn active_first_then_scope_and_other_contexts_are_dropped() {
        let atoms = vec![
            atom(1, MemoryStatus::Active, Context::Global),
            atom(2, MemoryStatus::Active, Context::In(ORG)),
            atom(3, MemoryStatus::Active, Context::In(P)),
            atom(4, MemoryStatus::Contested, Context::In(P)),
            atom(5, MemoryStatus::Active, Context::In(OTHER_ORG)),
            atom(6, MemoryStatus::Superseded, Context::In(P)),
            atom(7, MemoryStatus::NeedsReview, Context::Global),
            atom(8, MemoryStatus::Active, Context::In(STACK)),
            atom(9, MemoryStatus::Draft, Context::In(P)),
        ];
        let q = RecallQuery::new(asker(), at("2025-07-01"));
        let r = rank(&cands(&atoms), &q);
        assert_eq!(ids(&r), [3, 8, 2, 1, 7, 4]);
        assert_eq!(r.filtered, 3);
        let mut q = q;
        q.include_history = true;
        let r = rank(&cands(&atoms), &q);
        assert_eq!(ids(&r), [3, 8, 2, 1, 7, 4, 9, 6]);
    }

    #[test]
    fn a_text_query_orders_by_relevance_first_then_status_and_scope() {
        let atoms = [
            atom(1, MemoryStatus::Active, Context::In(P)),
            atom(2, MemoryStatus::Proposed, Context::Global),
            atom(3, MemoryStatus::Active, Context::Global),
        ];
        let c = |r: [f64; 3]| -> Vec<Candidate<'_>> {
            atoms
                .iter()
                .zip(r)
                .map(|(atom, relevance)| Candidate {
                    atom,
                    relevance,
                    strength: Strength::Documented,
                })
                .collect()
        };
        let mut q = RecallQuery::new(asker(), at("2025-07-01"));
        let cs = c([0.4, 0.8, 0.8]);
        assert_eq!(ids(&rank(&cs, &q)), [1, 3, 2], "no query: status and scope");
        q.by_relevance = true;
        // The answer first, whatever its status; equally relevant: ACTIVE first.
        assert_eq!(ids(&rank(&cs, &q)), [3, 2, 1]);
        // Within one band, the documented order decides.
        let cs = c([0.803, 0.8, 0.798]);
        assert_eq!(ids(&rank(&cs, &q)), [1, 3, 2]);
    }

    #[test]
    fn within_a_tier_relevance_recency_confidence_and_evidence_blend() {
        let mut a = atom(1, MemoryStatus::Active, Context::Global);
        let mut b = atom(2, MemoryStatus::Active, Context::Global);
        let atoms_same = [a.clone(), b.clone()];
        // Equal on everything: id decides.
        let q = RecallQuery::new(asker(), at("2025-07-01"));
        assert_eq!(ids(&rank(&cands(&atoms_same), &q)), [1, 2]);
        // More recent validation wins.
        b.last_validated_at = Some(at("2025-06-30"));
        assert_eq!(ids(&rank(&cands(&[a.clone(), b.clone()]), &q)), [2, 1]);
        // Much higher relevance beats recency.
        let pair = [a.clone(), b.clone()];
        let c = vec![
            Candidate {
                atom: &pair[0],
                relevance: 0.9,
                strength: Strength::Documented,
            },
            Candidate {
                atom: &pair[1],
                relevance: 0.3,
                strength: Strength::Documented,
            },
        ];
        assert_eq!(ids(&rank(&c, &q)), [1, 2]);
        // Higher confidence, then stronger evidence.
        a.validated_confidence = 0.9;
        let pair = [a.clone(), atom(2, MemoryStatus::Active, Context::Global)];
        assert_eq!(ids(&rank(&cands(&pair), &q)), [1, 2]);
        let c = vec![
            Candidate {
                atom: &pair[1],
                relevance: 0.5,
                strength: Strength::Strong,
            },
            Candidate {
                atom: &atoms_same[0],
                relevance: 0.5,
                strength: Strength::None,
            },
        ];
        assert_eq!(ids(&rank(&c, &q)), [2, 1]);
    }

    #[test]
    fn as_of_and_valid_at_filter_in_their_own_time() {
        let mut old = atom(1, MemoryStatus::Superseded, Context::Global);
        old.recorded_at = at("2025-11-14");
        old.retired_at = Some(at("2025-12-02"));
        let mut new = atom(2, MemoryStatus::Active, Context::Global);
        new.recorded_at = at("2025-12-02");
        let atoms = [old, new];
        let mut q = RecallQuery::new(asker(), at("2025-12-03"));
        assert_eq!(ids(&rank(&cands(&atoms), &q)), [2]);
        q.as_of = Some(at("2025-12-01"));
        let r = rank(&cands(&atoms), &q);
        assert_eq!(ids(&r), [1]);
        assert_eq!(r.hits[0].status_tier, 0);
        q.as_of = None;
        let mut timed = atom(3, MemoryStatus::Active, Context::Global);
        timed.valid_from = Some(at("2025-01-01"));
        timed.valid_to = Some(at("2025-02-01"));
        let atoms = [timed];
        q.valid_at = Some(at("2025-01-15"));
        assert_eq!(ids(&rank(&cands(&atoms), &q)), [3]);
        q.valid_at = Some(at("2025-03-01"));
        assert!(rank(&cands(&atoms), &q).hits.is_empty());
    }

    #[test]
    fn the_budget_keeps_the_best_and_counts_the_rest() {
        let atoms: Vec<MemoryAtom> = (1..=5)
            .map(|i| MemoryAtom {
                statement: "x".repeat(40),
                ..atom(i, MemoryStatus::Active, Context::Global)
            })
            .collect();
        assert_eq!(tokens(&atoms[0]), 10 + HIT_OVERHEAD_TOKENS);
        let mut q = RecallQuery::new(asker(), at("2025-07-01"));
        q.max_tokens = Some(3 * 22 + 21);
        let r = rank(&cands(&atoms), &q);
        assert_eq!(ids(&r), [1, 2, 3]);
        assert_eq!(r.left_out, 2);
        assert_eq!(r.tokens, 66);
        q.max_tokens = Some(5);
        let r = rank(&cands(&atoms), &q);
        assert!(r.hits.is_empty());
        assert_eq!(r.left_out, 5);
    }

    fn subject(id: u128, kind: SubjectKind, name: &str) -> Subject {
        Subject {
            id: SubjectId(id),
            kind,
            name: name.into(),
            aliases: vec![],
            title: None,
            summary: None,
            tags: vec![],
            created_at: at("2025-01-01"),
            updated_at: at("2025-01-01"),
            merged_into: None,
            details: SubjectDetails::Artifact(ArtifactFields::default()),
        }
    }

    #[test]
    fn used_in_three_projects_is_derived_and_goes_with_an_edge() {
        let mut subjects = vec![
            subject(10, SubjectKind::Lib, "Zod"),
            subject(1, SubjectKind::Project, "A"),
            subject(2, SubjectKind::Project, "B"),
            subject(3, SubjectKind::Project, "C"),
            subject(4, SubjectKind::Stack, "TS stack"),
            subject(11, SubjectKind::Lib, "zod-dup"),
        ];
        let uses = |p: u128, l: u128| {
            MemoryEdge::new(
                NodeRef::Subject(SubjectId(p)),
                EdgeKind::Uses,
                NodeRef::Subject(SubjectId(l)),
            )
        };
        let mut edges = vec![
            uses(1, 10),
            uses(2, 10),
            uses(3, 10),
            uses(4, 10),
            uses(1, 10),
        ];
        let f = usage_facts(&subjects, &edges, 3);
        assert_eq!(f.len(), 1);
        assert_eq!(f[0].statement, "Zod is used in 3 projects");
        assert_eq!(f[0].projects, [SubjectId(1), SubjectId(2), SubjectId(3)]);
        edges.retain(|e| *e != uses(3, 10));
        assert!(usage_facts(&subjects, &edges, 3).is_empty());
        // An edge to a subject merged into Zod still counts for Zod.
        edges.push(uses(3, 11));
        subjects[5].merged_into = Some(SubjectId(10));
        assert_eq!(usage_facts(&subjects, &edges, 3).len(), 1);
    }
}
