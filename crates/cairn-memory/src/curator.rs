//! The curator: one deterministic pass over a snapshot of the memory (subjects with
//! aliases, atoms, references, edges) that says what to change and why, with no
//! model in the loop. `plan` is the dry run; `apply` replays a plan on a snapshot, as
//! the service replays it on the store; planning again right after finds nothing.
//! Knows no SQL: the caller loads the snapshot and writes the actions.
//!
//! The pass, in order (each step sees what the earlier ones decided):
//! 1. resolve subject identity: merge duplicates, move their atoms and edges;
//! 2. deprecate Decisions marked `deprecated` (and `rejected` ones holding a key);
//! 3. settle each key among Decisions, then among the other atoms (duplicates
//!    folded, winners promoted, losers superseded, ties contested, contests resolved
//!    by an accepted Decision on the same predicate, subject and context), and move
//!    DRAFTs with any evidence to PROPOSED;
//! 4. bring stored claim keys in line with the atoms;
//! 5. schedule a review for ACTIVE atoms that have none;
//! 6. age: ACTIVE atoms past their review, or whose DEPENDS_ON target changed since
//!    their last validation, become NEEDS_REVIEW; confidence decays.

use std::collections::{BTreeMap, HashMap, HashSet};

use time::OffsetDateTime;

use super::change::{Action, ActionKind, Change};
use super::claim::{normalise_statement, write_key, ClaimKey};
use super::collision::{on_new, settle, Contender, NewAtomPlan, Outcome, Resolver};
use super::decay::{effective_confidence, next_review, policy_of};
use super::identity::merge_plan;
use super::model::{
    AtomDetails, AtomId, Context, DecisionStatus, EdgeKind, MemoryAtom, MemoryAtomType, MemoryEdge,
    MemoryStatus, NodeRef, RefType, Reference, ReferenceId, Subject, SubjectId,
};
use super::wire::format_time;

/// Everything the curator looks at.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    /// All subjects, merged ones included.
    pub subjects: Vec<Subject>,
    /// All atoms, history included.
    pub atoms: Vec<MemoryAtom>,
    /// All references.
    pub references: Vec<Reference>,
    /// All edges held as rows.
    pub edges: Vec<MemoryEdge>,
}

/// Positions of rows by id, kept in step with the snapshot while changes apply.
struct Index {
    atoms: HashMap<AtomId, usize>,
    subjects: HashMap<SubjectId, usize>,
    edges: HashMap<MemoryEdge, usize>,
}

impl Index {
    fn of(s: &Snapshot) -> Index {
        Index {
            atoms: s.atoms.iter().enumerate().map(|(i, a)| (a.id, i)).collect(),
            subjects: s
                .subjects
                .iter()
                .enumerate()
                .map(|(i, x)| (x.id, i))
                .collect(),
            edges: s.edges.iter().enumerate().map(|(i, e)| (*e, i)).collect(),
        }
    }
}

fn atom_mut<'a>(s: &'a mut Snapshot, ix: &Index, id: AtomId) -> Option<&'a mut MemoryAtom> {
    ix.atoms.get(&id).and_then(|i| s.atoms.get_mut(*i))
}

fn subject_mut<'a>(s: &'a mut Snapshot, ix: &Index, id: SubjectId) -> Option<&'a mut Subject> {
    ix.subjects.get(&id).and_then(|i| s.subjects.get_mut(*i))
}

fn add_edge(s: &mut Snapshot, ix: &mut Index, e: MemoryEdge) {
    if let std::collections::hash_map::Entry::Vacant(v) = ix.edges.entry(e) {
        v.insert(s.edges.len());
        s.edges.push(e);
    }
}

fn remove_edge(s: &mut Snapshot, ix: &mut Index, e: &MemoryEdge) {
    if let Some(i) = ix.edges.remove(e) {
        s.edges.swap_remove(i);
        if let Some(moved) = s.edges.get(i) {
            ix.edges.insert(*moved, i);
        }
    }
}

fn apply_change(s: &mut Snapshot, ix: &mut Index, c: &Change) {
    match c {
        Change::MergeSubject {
            from,
            into,
            aliases,
        } => {
            if let Some(f) = subject_mut(s, ix, *from) {
                f.merged_into = Some(*into);
            }
            if let Some(t) = subject_mut(s, ix, *into) {
                for a in aliases {
                    if !t.aliases.contains(a) && *a != t.name {
                        t.aliases.push(a.clone());
                    }
                }
            }
        }
        Change::MoveAbout { atom, from, to } => {
            if let Some(a) = atom_mut(s, ix, *atom) {
                if a.about == Some(*from) {
                    a.about = Some(*to);
                }
            }
        }
        Change::MoveContext { atom, from, to } => {
            if let Some(a) = atom_mut(s, ix, *atom) {
                if a.context == Context::In(*from) {
                    a.context = Context::In(*to);
                }
            }
        }
        Change::RepointSubjectField {
            subject,
            field,
            from,
            to,
        } => {
            if let Some(x) = subject_mut(s, ix, *subject) {
                for (f, r) in x.subject_refs_mut() {
                    if f == *field && *r == *from {
                        *r = *to;
                    }
                }
            }
        }
        Change::MoveEdge { from, to } => {
            remove_edge(s, ix, from);
            add_edge(s, ix, *to);
        }
        Change::DropEdge(e) => remove_edge(s, ix, e),
        Change::AddEdge(e) => add_edge(s, ix, *e),
        Change::SetStatus { atom, to, at, .. } => {
            if let Some(a) = atom_mut(s, ix, *atom) {
                a.status = *to;
                if to.is_retired() && a.retired_at.is_none() {
                    a.retired_at = Some((*at).max(a.recorded_at));
                }
            }
        }
        Change::SetDecisionStatus { atom, to, .. } => {
            if let Some(a) = atom_mut(s, ix, *atom) {
                if let AtomDetails::Decision(d) = &mut a.details {
                    d.decision_status = *to;
                }
            }
        }
        Change::SetResolution { atom, text } => {
            if let Some(a) = atom_mut(s, ix, *atom) {
                a.resolution = Some(text.clone());
            }
        }
        Change::SetClaimKey { atom, to, .. } => {
            if let Some(a) = atom_mut(s, ix, *atom) {
                a.claim_key = to.clone();
            }
        }
        Change::SetNextReview { atom, to, .. } => {
            if let Some(a) = atom_mut(s, ix, *atom) {
                a.next_review_at = *to;
            }
        }
        Change::SetConfidence { atom, to, .. } => {
            if let Some(a) = atom_mut(s, ix, *atom) {
                a.confidence = *to;
            }
        }
    }
}

fn apply_all(s: &mut Snapshot, ix: &mut Index, plan: &[Action]) {
    for a in plan {
        for c in &a.changes {
            apply_change(s, ix, c);
        }
    }
}

/// The snapshot after a plan's changes, applied in order: what the store holds once
/// the service has written them.
pub fn apply(snapshot: &Snapshot, plan: &[Action]) -> Snapshot {
    let mut s = snapshot.clone();
    let mut ix = Index::of(&s);
    apply_all(&mut s, &mut ix, plan);
    s
}

/// What an atom competes with: its claim key, or for an atom without a predicate,
/// its type, normalised statement, subject and context. Borrows the predicate, as
/// the curator builds one per atom.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum GroupKey<'a> {
    Claim(MemoryAtomType, &'a str, Option<SubjectId>, Context),
    Statement(MemoryAtomType, String, Option<SubjectId>, Context),
}

fn group_key(a: &MemoryAtom) -> GroupKey<'_> {
    match &a.predicate {
        Some(p) => GroupKey::Claim(a.atom_type(), p.as_str(), a.about, a.context),
        None => GroupKey::Statement(
            a.atom_type(),
            normalise_statement(&a.statement),
            a.about,
            a.context,
        ),
    }
}

/// Evidence and contradiction links per atom.
struct Links {
    evidence: HashMap<AtomId, Vec<(ReferenceId, RefType)>>,
    contradicts: HashMap<AtomId, Vec<AtomId>>,
}

/// The links of the atoms in `wanted` (all atoms when None).
fn links(s: &Snapshot, wanted: Option<&HashSet<AtomId>>) -> Links {
    let types: HashMap<ReferenceId, RefType> =
        s.references.iter().map(|r| (r.id, r.ref_type)).collect();
    let want = |a: &AtomId| wanted.is_none_or(|w| w.contains(a));
    let mut evidence: HashMap<AtomId, Vec<(ReferenceId, RefType)>> = HashMap::new();
    let mut contradicts: HashMap<AtomId, Vec<AtomId>> = HashMap::new();
    for e in &s.edges {
        match (e.from, e.kind, e.to) {
            (NodeRef::Atom(a), EdgeKind::FromSource, NodeRef::Reference(r))
            | (NodeRef::Reference(r), EdgeKind::Supports, NodeRef::Atom(a))
                if want(&a) =>
            {
                if let Some(t) = types.get(&r) {
                    evidence.entry(a).or_default().push((r, *t));
                }
            }
            (NodeRef::Atom(a), EdgeKind::Contradicts, NodeRef::Atom(b)) => {
                if want(&a) {
                    contradicts.entry(a).or_default().push(b);
                }
                if want(&b) {
                    contradicts.entry(b).or_default().push(a);
                }
            }
            _ => {}
        }
    }
    for v in evidence.values_mut() {
        v.sort();
        v.dedup();
    }
    for v in contradicts.values_mut() {
        v.sort();
        v.dedup();
    }
    Links {
        evidence,
        contradicts,
    }
}

fn contender(a: &MemoryAtom, l: &Links) -> Contender {
    Contender::of(
        a,
        l.evidence.get(&a.id).cloned().unwrap_or_default(),
        l.contradicts.get(&a.id).cloned().unwrap_or_default(),
    )
}

/// Decisions that are out of the game: rejected or deprecated.
fn closed_decision(a: &MemoryAtom) -> bool {
    matches!(
        a.details.decision().map(|d| d.decision_status),
        Some(DecisionStatus::Rejected | DecisionStatus::Deprecated)
    )
}

/// A Decision marked deprecated leaves the living memory; one marked rejected may
/// stay as a DRAFT or PROPOSED record, but not hold its key.
fn deprecations(s: &Snapshot, now: OffsetDateTime) -> Vec<Action> {
    s.atoms
        .iter()
        .filter(|a| !a.status.is_retired())
        .filter_map(|a| {
            let ds = a.details.decision()?.decision_status;
            let out = match ds {
                DecisionStatus::Deprecated => true,
                DecisionStatus::Rejected => a.status.holds_key(),
                _ => false,
            };
            out.then(|| Action {
                kind: ActionKind::Deprecate,
                changes: vec![Change::SetStatus {
                    atom: a.id,
                    from: a.status,
                    to: MemoryStatus::Deprecated,
                    at: now,
                }],
                reason: format!("its decisionStatus is {ds}"),
            })
        })
        .collect()
}

/// Settles the groups of Decisions (`decisions` true) or of every other type.
fn settle_groups(s: &Snapshot, now: OffsetDateTime, decisions: bool) -> Vec<Action> {
    let mut groups: HashMap<GroupKey<'_>, Vec<&MemoryAtom>> = HashMap::new();
    for a in &s.atoms {
        if a.status.is_retired() || closed_decision(a) {
            continue;
        }
        if (a.atom_type() == MemoryAtomType::Decision) != decisions {
            continue;
        }
        groups.entry(group_key(a)).or_default().push(a);
    }
    // A lone atom that already holds its key has nothing to settle; the rest are
    // settled in the order of their lowest atom id, whatever the snapshot's order.
    let mut todo: Vec<(GroupKey<'_>, Vec<&MemoryAtom>)> = groups
        .into_iter()
        .filter(|(_, m)| {
            !matches!(m.as_slice(), [a] if matches!(a.status, MemoryStatus::Active | MemoryStatus::NeedsReview))
        })
        .collect();
    todo.sort_by_key(|(_, m)| m.iter().map(|a| a.id).min());
    let wanted: HashSet<AtomId> = todo
        .iter()
        .flat_map(|(_, m)| m.iter().map(|a| a.id))
        .collect();
    let l = links(s, Some(&wanted));
    let resolvers: HashMap<(&str, Option<SubjectId>, Context), Resolver> = if decisions {
        HashMap::new()
    } else {
        s.atoms
            .iter()
            .filter(|a| {
                a.status == MemoryStatus::Active
                    && a.details.decision().map(|d| d.decision_status)
                        == Some(DecisionStatus::Accepted)
            })
            .filter_map(|a| {
                let p = a.predicate.as_ref()?;
                let value = super::claim::claim_value(a.value.as_ref(), &a.statement);
                Some((
                    (p.as_str(), a.about, a.context),
                    Resolver { id: a.id, value },
                ))
            })
            .collect()
    };
    let mut out = Vec::new();
    for (key, members) in todo {
        let resolver = match &key {
            GroupKey::Claim(_, p, about, context) => resolvers.get(&(*p, *about, *context)),
            GroupKey::Statement(..) => None,
        };
        let contenders: Vec<Contender> = members.iter().map(|a| contender(a, &l)).collect();
        out.extend(settle(&contenders, resolver, now));
    }
    out
}

fn assign_keys(s: &Snapshot) -> Vec<Action> {
    let mut buf = String::with_capacity(128);
    s.atoms
        .iter()
        .filter_map(|a| {
            let keyed = write_key(a, &mut buf);
            let same = match &a.claim_key {
                Some(k) => keyed && *k == buf,
                None => !keyed,
            };
            (!same).then(|| Action {
                kind: ActionKind::AssignKey,
                changes: vec![Change::SetClaimKey {
                    atom: a.id,
                    from: a.claim_key.clone(),
                    to: keyed.then(|| buf.clone()),
                }],
                reason: "the stored key no longer matches the atom's type, predicate, subject and context".into(),
            })
        })
        .collect()
}

fn schedule(s: &Snapshot) -> Vec<Action> {
    s.atoms
        .iter()
        .filter(|a| a.status == MemoryStatus::Active && a.next_review_at.is_none())
        .filter_map(|a| {
            let due = next_review(a, a.validation_anchor())?;
            Some(Action {
                kind: ActionKind::ScheduleReview,
                changes: vec![Change::SetNextReview {
                    atom: a.id,
                    from: None,
                    to: Some(due),
                }],
                reason: format!("{} atoms are reviewed on a schedule", a.atom_type()),
            })
        })
        .collect()
}

fn age(s: &Snapshot, now: OffsetDateTime) -> Vec<Action> {
    let mut depends: HashMap<AtomId, Vec<NodeRef>> = HashMap::new();
    for e in &s.edges {
        if let (NodeRef::Atom(a), EdgeKind::DependsOn) = (e.from, e.kind) {
            depends.entry(a).or_default().push(e.to);
        }
    }
    for v in depends.values_mut() {
        v.sort();
    }
    // Only the targets of DEPENDS_ON edges are looked up.
    let targets: HashSet<NodeRef> = depends.values().flatten().copied().collect();
    let atoms: HashMap<AtomId, &MemoryAtom> = s
        .atoms
        .iter()
        .filter(|a| targets.contains(&NodeRef::Atom(a.id)))
        .map(|a| (a.id, a))
        .collect();
    let subjects: HashMap<SubjectId, &Subject> = s
        .subjects
        .iter()
        .filter(|x| targets.contains(&NodeRef::Subject(x.id)))
        .map(|x| (x.id, x))
        .collect();
    let mut out = Vec::new();
    for a in &s.atoms {
        if a.status.is_retired() {
            continue;
        }
        let policy = policy_of(a);
        if a.status == MemoryStatus::Active {
            let anchor = a.validation_anchor();
            let mut why = None;
            if let Some(due) = a.next_review_at.filter(|t| *t <= now) {
                why = Some(format!("its review was due {}", format_time(due)));
            } else if policy.on_dependency_change {
                why = depends
                    .get(&a.id)
                    .into_iter()
                    .flatten()
                    .find_map(|n| match n {
                        NodeRef::Atom(t) => atoms.get(t).and_then(|t| {
                            t.retired_at
                                .filter(|r| *r > anchor)
                                .map(|r| (t.id.to_string(), r))
                        }),
                        NodeRef::Subject(t) => subjects
                            .get(t)
                            .filter(|t| t.updated_at > anchor)
                            .map(|t| (t.name.clone(), t.updated_at)),
                        NodeRef::Reference(_) => None,
                    })
                    .map(|(what, when)| {
                        format!("it depends on {what}, which changed {}", format_time(when))
                    });
            }
            if let Some(reason) = why {
                out.push(Action {
                    kind: ActionKind::NeedsReview,
                    changes: vec![Change::SetStatus {
                        atom: a.id,
                        from: a.status,
                        to: MemoryStatus::NeedsReview,
                        at: now,
                    }],
                    reason,
                });
            }
        }
        if policy.half_life_days.is_some() {
            let c = effective_confidence(a, now);
            if c != a.confidence {
                out.push(Action {
                    kind: ActionKind::Decay,
                    changes: vec![Change::SetConfidence {
                        atom: a.id,
                        from: a.confidence,
                        to: c,
                    }],
                    reason: format!(
                        "{} days since its last validation",
                        (now - a.validation_anchor()).whole_days().max(0)
                    ),
                });
            }
        }
    }
    out
}

/// The curator's plan for a snapshot at `now`: every action it would take, in the
/// order to write them. Applying it and planning again at the same `now` gives
/// nothing.
pub fn plan(snapshot: &Snapshot, now: OffsetDateTime) -> Vec<Action> {
    let mut work = snapshot.clone();
    let mut ix = Index::of(&work);
    let mut out = Vec::new();
    let mut step = |work: &mut Snapshot, ix: &mut Index, actions: Vec<Action>| {
        apply_all(work, ix, &actions);
        out.extend(actions);
    };
    let a = merge_plan(&work.subjects, &work.atoms, &work.edges);
    step(&mut work, &mut ix, a);
    let a = deprecations(&work, now);
    step(&mut work, &mut ix, a);
    let a = settle_groups(&work, now, true);
    step(&mut work, &mut ix, a);
    let a = settle_groups(&work, now, false);
    step(&mut work, &mut ix, a);
    let a = assign_keys(&work);
    step(&mut work, &mut ix, a);
    let a = schedule(&work);
    step(&mut work, &mut ix, a);
    let a = age(&work, now);
    step(&mut work, &mut ix, a);
    out
}

/// How many actions of each kind a plan holds, for a dry run's summary.
pub fn summary(plan: &[Action]) -> BTreeMap<ActionKind, usize> {
    let mut m = BTreeMap::new();
    for a in plan {
        *m.entry(a.kind).or_insert(0) += 1;
    }
    m
}

/// Checks the invariants a settled snapshot keeps: at most one ACTIVE atom per claim
/// key, and every edge joining ends its kind allows. Returns what is wrong.
pub fn check(s: &Snapshot) -> Vec<String> {
    let mut problems = Vec::new();
    let mut active: HashSet<String> = HashSet::new();
    for a in &s.atoms {
        if a.status == MemoryStatus::Active {
            if let Some(k) = ClaimKey::of(a) {
                let k = k.canonical();
                if !active.insert(k.clone()) {
                    problems.push(format!("two ACTIVE atoms on {k}"));
                }
            }
        }
    }
    for e in &s.edges {
        if !e.allowed() {
            problems.push(format!("edge {e:?} joins ends its kind does not allow"));
        }
    }
    problems
}

/// The model of the service's `remember`: the new atom's key holders are found, the
/// collision rule decides, and the decision is written (the new atom inserted as
/// DRAFT with FROM_SOURCE edges to `sources` unless it is a duplicate, then the
/// actions in order). Scans the snapshot, where the store would use its index.
pub fn remember(
    snapshot: &mut Snapshot,
    atom: MemoryAtom,
    sources: &[ReferenceId],
    now: OffsetDateTime,
) -> NewAtomPlan {
    let types: HashMap<ReferenceId, RefType> = snapshot
        .references
        .iter()
        .map(|r| (r.id, r.ref_type))
        .collect();
    let key = group_key(&atom);
    let resolver = match &key {
        GroupKey::Claim(t, p, about, context) => snapshot
            .atoms
            .iter()
            .find(|d| {
                d.status == MemoryStatus::Active
                    && d.details.decision().map(|x| x.decision_status)
                        == Some(DecisionStatus::Accepted)
                    && d.atom_type() != *t
                    && d.predicate.as_ref().map(|x| x.as_str()) == Some(*p)
                    && d.about == *about
                    && d.context == *context
            })
            .map(|d| Resolver {
                id: d.id,
                value: super::claim::claim_value(d.value.as_ref(), &d.statement),
            }),
        GroupKey::Statement(..) => None,
    };
    let l = links(snapshot, None);
    let holders: Vec<Contender> = snapshot
        .atoms
        .iter()
        .filter(|a| a.status.holds_key() && !closed_decision(a) && group_key(a) == key)
        .map(|a| contender(a, &l))
        .collect();
    let refs: Vec<(ReferenceId, RefType)> = sources
        .iter()
        .filter_map(|r| types.get(r).map(|t| (*r, *t)))
        .collect();
    let new = Contender::of(&atom, refs, Vec::new());
    let decided = on_new(&holders, &new, resolver.as_ref(), now);
    let mut ix = Index::of(snapshot);
    if let Outcome::Insert { .. } = decided.outcome {
        let id = atom.id;
        ix.atoms.insert(id, snapshot.atoms.len());
        snapshot.atoms.push(MemoryAtom {
            status: MemoryStatus::Draft,
            ..atom
        });
        for r in sources {
            add_edge(
                snapshot,
                &mut ix,
                MemoryEdge::new(
                    NodeRef::Atom(id),
                    EdgeKind::FromSource,
                    NodeRef::Reference(*r),
                ),
            );
        }
    }
    apply_all(snapshot, &mut ix, &decided.actions);
    decided
}

#[cfg(test)]
mod tests;
