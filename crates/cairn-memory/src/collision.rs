//! Collisions: what happens when several atoms claim one key. The rule is
//! deterministic, written once in [`RULE`] for the tool description to quote, and
//! answers with the exact status changes and edges to write. Nothing is overwritten:
//! a loser keeps its row, SUPERSEDED, with a SUPERSEDES edge from the winner.
//!
//! The atoms on a key are its *holders* (ACTIVE, NEEDS_REVIEW, CONTESTED) and its
//! *candidates* (DRAFT or PROPOSED atoms whose evidence would make them ACTIVE, see
//! `promotion`). A DRAFT or PROPOSED atom whose evidence is not enough yet waits
//! beside the key without competing, unless it says what another atom already says.
//!
//! When the old atom wins against a newcomer, the newcomer is recorded SUPERSEDED
//! (retired at once) rather than CONTESTED: the rule has decided, CONTESTED means
//! undecided, and a CONTESTED atom would ask someone to settle what is settled. The
//! newcomer stays in history, findable with `includeHistory`.
//!
//! Confidence is compared as of each atom's last validation, not decayed: time
//! passing alone must not decide a contradiction.

use std::collections::{BTreeMap, BTreeSet};

use time::OffsetDateTime;

use super::change::{supersedes, Action, ActionKind, Change};
use super::evidence::Strength;
use super::model::{
    AtomId, Confirmation, DecisionStatus, EdgeKind, MemoryAtom, MemoryAtomType, MemoryEdge,
    MemoryStatus, NodeRef, RefType, ReferenceId,
};
use super::promotion::{reach, EvidenceFacts, Reach, Standing};
use super::wire::format_time;

/// The collision rule as a literal, so `manage_memory`'s description (built with
/// `concat!`) quotes it rather than a copy that could drift.
#[macro_export]
macro_rules! memory_collision_rule {
    () => {
        "One ACTIVE atom per claim key (type, predicate, about, context): the same value (case, \
spaces aside) SUPPORTS it; another wins by stronger evidence (ADR, PR, commit… > doc, url, \
ticket > chat, diary > none), later validFrom, higher confidence, the loser SUPERSEDED; a tie: \
both CONTESTED (CONTRADICTS) until a Decision or resolve picks one."
    };
}

/// The collision rule, as the tool description states it.
pub const RULE: &str = memory_collision_rule!();

/// How a claim ranks against another on its key: evidence, then validity start,
/// then confidence in hundredths. Compared field by field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Rank {
    /// The strongest reference.
    pub strength: Strength,
    /// When it starts to hold; None sorts first (earliest).
    pub valid_from: Option<OffsetDateTime>,
    /// Confidence at the last validation, in hundredths.
    pub confidence: i64,
}

/// An atom as the collision rule sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Contender {
    /// The atom.
    pub id: AtomId,
    /// Its type.
    pub atom_type: MemoryAtomType,
    /// Its status now.
    pub status: MemoryStatus,
    /// Its claim, folded (`claim::claim_value`).
    pub value: String,
    /// Its evidence: references by FROM_SOURCE or SUPPORTS.
    pub references: Vec<(ReferenceId, RefType)>,
    /// World validity start.
    pub valid_from: Option<OffsetDateTime>,
    /// Confidence at the last validation.
    pub confidence: f64,
    /// When it was recorded.
    pub recorded_at: OffsetDateTime,
    /// Whether it names an author.
    pub has_author: bool,
    /// Its explicit confirmation.
    pub confirmation: Option<Confirmation>,
    /// A Decision's own status.
    pub decision_status: Option<DecisionStatus>,
    /// Atoms it is already linked to by CONTRADICTS, in either direction.
    pub contradicts: Vec<AtomId>,
}

impl Contender {
    /// The contender for an atom with the given evidence and CONTRADICTS links.
    pub fn of(
        atom: &MemoryAtom,
        references: Vec<(ReferenceId, RefType)>,
        contradicts: Vec<AtomId>,
    ) -> Contender {
        Contender {
            id: atom.id,
            atom_type: atom.atom_type(),
            status: atom.status,
            value: super::claim::claim_value(atom.value.as_ref(), &atom.statement),
            references,
            valid_from: atom.valid_from,
            confidence: atom.validated_confidence,
            recorded_at: atom.recorded_at,
            has_author: atom.author.is_some(),
            confirmation: atom.confirmation.clone(),
            decision_status: atom.details.decision().map(|d| d.decision_status),
            contradicts,
        }
    }

    fn standing(&self, evidence: EvidenceFacts) -> Standing<'_> {
        Standing {
            atom_type: self.atom_type,
            decision_status: self.decision_status,
            has_author: self.has_author,
            confirmation: self.confirmation.as_ref(),
            evidence,
        }
    }
}

/// An accepted, ACTIVE Decision on the same predicate, subject and context as a key
/// of another type: it settles a contest on that key.
#[derive(Debug, Clone, PartialEq)]
pub struct Resolver {
    /// The Decision atom.
    pub id: AtomId,
    /// Its claim, folded.
    pub value: String,
}

/// Atoms sharing one claim, with the one that represents them.
struct Cluster<'a> {
    rep: &'a Contender,
    members: Vec<&'a Contender>,
    reach: Reach,
    rank: Rank,
}

impl Cluster<'_> {
    fn competes(&self) -> bool {
        self.rep.status.holds_key() || self.reach.status == MemoryStatus::Active
    }
}

fn confidence_hundredths(c: f64) -> i64 {
    (c * 100.0).round() as i64
}

/// Groups contenders by claim. The representative of a claim is its holder if it has
/// one (the existing atom keeps its place), else the best ranked, then the earliest
/// recorded, then the lowest id; its evidence is the union of the members', as it
/// will be once the duplicates' references support it.
fn clusters(group: &[Contender]) -> Vec<Cluster<'_>> {
    let mut by_value: BTreeMap<&str, Vec<&Contender>> = BTreeMap::new();
    for c in group {
        by_value.entry(c.value.as_str()).or_default().push(c);
    }
    let mut out = Vec::with_capacity(by_value.len());
    for (_, mut members) in by_value {
        let evidence = EvidenceFacts::of(members.iter().flat_map(|m| m.references.iter().copied()));
        let own_rank = |m: &Contender| Rank {
            strength: EvidenceFacts::of(m.references.iter().copied()).strength,
            valid_from: m.valid_from,
            confidence: confidence_hundredths(m.confidence),
        };
        members.sort_by(|a, b| {
            b.status
                .holds_key()
                .cmp(&a.status.holds_key())
                .then_with(|| own_rank(b).cmp(&own_rank(a)))
                .then_with(|| a.recorded_at.cmp(&b.recorded_at))
                .then_with(|| a.id.cmp(&b.id))
        });
        let Some(rep) = members.first().copied() else {
            continue;
        };
        let reach = reach(&rep.standing(evidence));
        let rank = Rank {
            strength: evidence.strength,
            valid_from: rep.valid_from,
            confidence: confidence_hundredths(rep.confidence),
        };
        out.push(Cluster {
            rep,
            members,
            reach,
            rank,
        });
    }
    // Clusters in the order their representatives were recorded, so ties and the
    // order of actions never depend on the values' spelling.
    out.sort_by(|a, b| {
        a.rep
            .recorded_at
            .cmp(&b.rep.recorded_at)
            .then(a.rep.id.cmp(&b.rep.id))
    });
    out
}

fn set_status(c: &Contender, to: MemoryStatus, now: OffsetDateTime) -> Option<Change> {
    (c.status != to).then_some(Change::SetStatus {
        atom: c.id,
        from: c.status,
        to,
        at: now,
    })
}

/// Says why `w` beats `l`, naming the first criterion that differs.
fn why_wins(w: &Rank, l: &Rank) -> String {
    if w.strength != l.strength {
        format!("stronger evidence ({} over {})", w.strength, l.strength)
    } else if w.valid_from != l.valid_from {
        let t = |v: Option<OffsetDateTime>| v.map_or_else(|| "none".to_string(), format_time);
        format!(
            "later validFrom ({} over {})",
            t(w.valid_from),
            t(l.valid_from)
        )
    } else {
        format!(
            "higher confidence ({:.2} over {:.2})",
            w.confidence as f64 / 100.0,
            l.confidence as f64 / 100.0
        )
    }
}

/// Settles every atom competing for one key (or, for atoms without a predicate,
/// sharing one statement): duplicates fold into their claim's representative, ties
/// become CONTESTED, the rest are superseded by the winner, the winner becomes ACTIVE,
/// and atoms that do not compete yet move from DRAFT to PROPOSED when they may.
/// `resolver` is an accepted Decision on the same predicate, subject and context.
///
/// The actions come in writing order: duplicates, losers, then the winner, so the key
/// never has two ACTIVE atoms between two writes.
pub fn settle(
    group: &[Contender],
    resolver: Option<&Resolver>,
    now: OffsetDateTime,
) -> Vec<Action> {
    let cl = clusters(group);
    let mut actions = Vec::new();

    // Duplicates: same claim, folded into the representative.
    for c in &cl {
        let mut known: BTreeSet<ReferenceId> = c.rep.references.iter().map(|r| r.0).collect();
        for m in c.members.iter().skip(1) {
            let mut changes = Vec::new();
            changes.extend(set_status(m, MemoryStatus::Superseded, now));
            changes.push(supersedes(c.rep.id, m.id));
            for (r, _) in &m.references {
                if known.insert(*r) {
                    changes.push(Change::AddEdge(MemoryEdge::new(
                        NodeRef::Reference(*r),
                        EdgeKind::Supports,
                        NodeRef::Atom(c.rep.id),
                    )));
                }
            }
            actions.push(Action {
                kind: ActionKind::MergeDuplicate,
                changes,
                reason: format!(
                    "says what atom {} says; its evidence now supports that atom",
                    c.rep.id
                ),
            });
        }
    }

    let (competing, waiting): (Vec<&Cluster<'_>>, Vec<&Cluster<'_>>) =
        cl.iter().partition(|c| c.competes());

    // Atoms that do not compete yet only move from DRAFT to PROPOSED.
    for c in &waiting {
        if c.rep.status == MemoryStatus::Draft && c.reach.status == MemoryStatus::Proposed {
            actions.extend(
                set_status(c.rep, MemoryStatus::Proposed, now).map(|ch| Action {
                    kind: ActionKind::Promote,
                    changes: vec![ch],
                    reason: c.reach.reason.clone(),
                }),
            );
        }
    }
    if competing.is_empty() {
        return actions;
    }

    let best = competing.iter().map(|c| c.rank).max();
    let top: Vec<&Cluster<'_>> = competing
        .iter()
        .copied()
        .filter(|c| Some(c.rank) == best)
        .collect();

    // A Decision on the key picks the claim that says what it says; if none does and
    // the claims are tied, the Decision itself supersedes them all.
    if let Some(d) = resolver {
        if let Some(w) = competing.iter().copied().find(|c| c.rep.value == d.value) {
            let others: Vec<_> = competing
                .iter()
                .copied()
                .filter(|c| c.rep.id != w.rep.id)
                .collect();
            if !others.is_empty() || w.rep.status == MemoryStatus::Contested {
                return finish_resolution(actions, w, &others, d, now);
            }
        } else if top.len() > 1 {
            for c in &competing {
                let mut changes = Vec::new();
                changes.extend(set_status(c.rep, MemoryStatus::Superseded, now));
                changes.push(supersedes(d.id, c.rep.id));
                actions.push(Action {
                    kind: ActionKind::Resolve,
                    changes,
                    reason: format!("decision {} settles the contest with another value", d.id),
                });
            }
            return actions;
        }
    }

    if let [w] = top.as_slice() {
        for l in competing.iter().filter(|c| c.rep.id != w.rep.id) {
            let mut changes = Vec::new();
            changes.extend(set_status(l.rep, MemoryStatus::Superseded, now));
            changes.push(supersedes(w.rep.id, l.rep.id));
            actions.push(Action {
                kind: ActionKind::Supersede,
                changes,
                reason: format!(
                    "atom {} wins the key: {}",
                    w.rep.id,
                    why_wins(&w.rank, &l.rank)
                ),
            });
        }
        actions.extend(promote_winner(w, competing.len() > 1, now));
        return actions;
    }

    // A tie: every tied claim is CONTESTED and linked to the others; claims below the
    // tie lose to the first of it.
    let first = top.first().map(|c| c.rep.id);
    for l in competing.iter().filter(|c| Some(c.rank) != best) {
        if let Some(f) = first {
            let mut changes = Vec::new();
            changes.extend(set_status(l.rep, MemoryStatus::Superseded, now));
            changes.push(supersedes(f, l.rep.id));
            actions.push(Action {
                kind: ActionKind::Supersede,
                changes,
                reason: format!("loses to the tied claims on its key, first atom {f}"),
            });
        }
    }
    let mut changes = Vec::new();
    for (i, c) in top.iter().enumerate() {
        changes.extend(set_status(c.rep, MemoryStatus::Contested, now));
        for earlier in top.iter().take(i) {
            let linked = c.rep.contradicts.contains(&earlier.rep.id)
                || earlier.rep.contradicts.contains(&c.rep.id);
            if !linked {
                changes.push(Change::AddEdge(MemoryEdge::new(
                    NodeRef::Atom(c.rep.id),
                    EdgeKind::Contradicts,
                    NodeRef::Atom(earlier.rep.id),
                )));
            }
        }
    }
    if !changes.is_empty() {
        actions.push(Action {
            kind: ActionKind::Contest,
            changes,
            reason: "different values with equal evidence, validFrom and confidence: a Decision or an explicit choice must settle it".into(),
        });
    }
    actions
}

/// The winner of a key: ACTIVE (and an open Decision accepted).
fn promote_winner(w: &Cluster<'_>, had_rivals: bool, now: OffsetDateTime) -> Option<Action> {
    let mut changes = Vec::new();
    let to = match w.rep.status {
        MemoryStatus::NeedsReview => MemoryStatus::NeedsReview,
        _ => MemoryStatus::Active,
    };
    let moved = set_status(w.rep, to, now);
    let accept = moved.is_some()
        && to == MemoryStatus::Active
        && w.rep.decision_status == Some(DecisionStatus::Proposed);
    changes.extend(moved);
    if accept {
        changes.push(Change::SetDecisionStatus {
            atom: w.rep.id,
            from: DecisionStatus::Proposed,
            to: DecisionStatus::Accepted,
        });
    }
    if changes.is_empty() {
        return None;
    }
    let (kind, reason) = match w.rep.status {
        MemoryStatus::Contested => (
            ActionKind::Resolve,
            "no longer tied: the evidence now decides".to_string(),
        ),
        _ if had_rivals => (
            ActionKind::Promote,
            format!("{}, and it wins its key", w.reach.reason),
        ),
        _ => (ActionKind::Promote, w.reach.reason.clone()),
    };
    Some(Action {
        kind,
        changes,
        reason,
    })
}

fn finish_resolution(
    mut actions: Vec<Action>,
    w: &Cluster<'_>,
    others: &[&Cluster<'_>],
    d: &Resolver,
    now: OffsetDateTime,
) -> Vec<Action> {
    for l in others {
        let mut changes = Vec::new();
        changes.extend(set_status(l.rep, MemoryStatus::Superseded, now));
        changes.push(supersedes(w.rep.id, l.rep.id));
        actions.push(Action {
            kind: ActionKind::Resolve,
            changes,
            reason: format!("decision {} chose the value of atom {}", d.id, w.rep.id),
        });
    }
    let mut changes = Vec::new();
    changes.extend(set_status(w.rep, MemoryStatus::Active, now));
    changes.push(Change::SetResolution {
        atom: w.rep.id,
        text: format!("chosen by decision {}", d.id),
    });
    actions.push(Action {
        kind: ActionKind::Resolve,
        changes,
        reason: format!("decision {} chose this value", d.id),
    });
    actions
}

/// Why an explicit resolution was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResolveError {
    /// The chosen atom is not among the key's atoms.
    NotInGroup(AtomId),
    /// The chosen atom is not CONTESTED: there is nothing to resolve.
    NotContested(AtomId, MemoryStatus),
}

impl std::fmt::Display for ResolveError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ResolveError::NotInGroup(a) => write!(
                f,
                "atom {a} does not claim this key: choose one of the CONTESTED atoms on it"
            ),
            ResolveError::NotContested(a, s) => write!(
                f,
                "atom {a} is {s}, not CONTESTED: only a contest can be resolved"
            ),
        }
    }
}

impl std::error::Error for ResolveError {}

/// An explicit choice ends a contest: `winner` becomes ACTIVE with its resolution
/// naming who chose, and every other holder of the key is superseded by it.
pub fn resolve(
    group: &[Contender],
    winner: AtomId,
    by: &str,
    now: OffsetDateTime,
) -> Result<Vec<Action>, ResolveError> {
    let w = group
        .iter()
        .find(|c| c.id == winner)
        .ok_or(ResolveError::NotInGroup(winner))?;
    if w.status != MemoryStatus::Contested {
        return Err(ResolveError::NotContested(winner, w.status));
    }
    let mut actions = Vec::new();
    for l in group
        .iter()
        .filter(|c| c.id != winner && c.status.holds_key())
    {
        let mut changes = Vec::new();
        changes.extend(set_status(l, MemoryStatus::Superseded, now));
        changes.push(supersedes(winner, l.id));
        actions.push(Action {
            kind: ActionKind::Resolve,
            changes,
            reason: format!("{by} chose atom {winner}"),
        });
    }
    let mut changes = Vec::new();
    changes.extend(set_status(w, MemoryStatus::Active, now));
    changes.push(Change::SetResolution {
        atom: winner,
        text: format!("chosen by {by}"),
    });
    actions.push(Action {
        kind: ActionKind::Resolve,
        changes,
        reason: format!("{by} chose this atom"),
    });
    Ok(actions)
}

/// What to do with a new atom, given the atoms already holding its key.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// Same claim as `into`: do not insert the new atom.
    Duplicate {
        /// The atom it duplicates.
        into: AtomId,
    },
    /// Insert the new atom as DRAFT, then apply the changes (which move it on).
    Insert {
        /// The status it ends with once the changes are applied.
        status: MemoryStatus,
    },
}

/// The answer for a new atom: its outcome, and the actions to apply in order. The
/// service inserts the atom as DRAFT when the outcome is `Insert` (a DRAFT never
/// touches the unique index), then writes the changes in order.
#[derive(Debug, Clone, PartialEq)]
pub struct NewAtomPlan {
    /// Insert or not.
    pub outcome: Outcome,
    /// What to write, in order.
    pub actions: Vec<Action>,
}

/// Decides a new atom against the holders of its key (or, for an atom without a
/// predicate, the holders of its statement). `new` is the atom as it will be
/// inserted: DRAFT, with its references.
pub fn on_new(
    holders: &[Contender],
    new: &Contender,
    resolver: Option<&Resolver>,
    now: OffsetDateTime,
) -> NewAtomPlan {
    let mut new = new.clone();
    new.status = MemoryStatus::Draft;
    let mut group: Vec<Contender> = holders
        .iter()
        .filter(|h| h.status.holds_key())
        .cloned()
        .collect();
    group.push(new.clone());
    let actions = settle(&group, resolver, now);
    let dup_of = group
        .iter()
        .filter(|h| h.id != new.id && h.value == new.value)
        .map(|h| h.id)
        .next();
    if let Some(into) = dup_of {
        // The new atom is not written: drop the changes that would touch it.
        let touches_new = |c: &Change| match c {
            Change::SetStatus { atom, .. } => *atom == new.id,
            Change::AddEdge(e) => e.to == NodeRef::Atom(new.id) || e.from == NodeRef::Atom(new.id),
            _ => false,
        };
        let actions = actions
            .into_iter()
            .filter_map(|mut a| {
                a.changes.retain(|c| !touches_new(c));
                (!a.changes.is_empty()).then_some(a)
            })
            .collect();
        return NewAtomPlan {
            outcome: Outcome::Duplicate { into },
            actions,
        };
    }
    let mut status = MemoryStatus::Draft;
    for a in &actions {
        for c in &a.changes {
            if let Change::SetStatus { atom, to, .. } = c {
                if *atom == new.id {
                    status = *to;
                }
            }
        }
    }
    NewAtomPlan {
        outcome: Outcome::Insert { status },
        actions,
    }
}

#[cfg(test)]
mod tests {
    use super::super::wire::at;
    use super::*;

    fn c(id: u128, status: MemoryStatus, value: &str, refs: &[RefType]) -> Contender {
        Contender {
            id: AtomId(id),
            atom_type: MemoryAtomType::Assumption,
            status,
            value: value.into(),
            references: refs
                .iter()
                .enumerate()
                .map(|(i, r)| (ReferenceId(id * 100 + i as u128), *r))
                .collect(),
            valid_from: None,
            confidence: 0.7,
            recorded_at: at("2025-11-01") + time::Duration::seconds(id as i64),
            has_author: false,
            confirmation: None,
            decision_status: None,
            contradicts: vec![],
        }
    }

    fn statuses(actions: &[Action]) -> Vec<(u128, MemoryStatus)> {
        actions
            .iter()
            .flat_map(|a| &a.changes)
            .filter_map(|c| match c {
                Change::SetStatus { atom, to, .. } => Some((atom.0, *to)),
                _ => None,
            })
            .collect()
    }

    fn edges(actions: &[Action]) -> Vec<(u128, EdgeKind, u128)> {
        actions
            .iter()
            .flat_map(|a| &a.changes)
            .filter_map(|c| match c {
                Change::AddEdge(MemoryEdge {
                    from: NodeRef::Atom(f),
                    kind,
                    to: NodeRef::Atom(t),
                }) => Some((f.0, *kind, t.0)),
                _ => None,
            })
            .collect()
    }

    const NOW: &str = "2025-12-01";

    #[test]
    fn the_same_value_is_a_duplicate_that_adds_support() {
        let old = c(1, MemoryStatus::Active, "4.2", &[RefType::ReleaseNotes]);
        let new = c(2, MemoryStatus::Draft, "4.2", &[RefType::Chat]);
        let plan = on_new(&[old], &new, None, at(NOW));
        assert_eq!(plan.outcome, Outcome::Duplicate { into: AtomId(1) });
        let changes: Vec<_> = plan.actions.iter().flat_map(|a| &a.changes).collect();
        assert_eq!(
            changes,
            [&Change::AddEdge(MemoryEdge::new(
                NodeRef::Reference(ReferenceId(200)),
                EdgeKind::Supports,
                NodeRef::Atom(AtomId(1))
            ))]
        );
    }

    #[test]
    fn stronger_evidence_wins_whichever_is_new() {
        // The new one is stronger: it supersedes the old.
        let old = c(
            1,
            MemoryStatus::Active,
            "4.1",
            &[RefType::Chat, RefType::Chat, RefType::Chat],
        );
        let new = c(2, MemoryStatus::Draft, "4.2", &[RefType::ReleaseNotes]);
        let plan = on_new(std::slice::from_ref(&old), &new, None, at(NOW));
        assert_eq!(
            plan.outcome,
            Outcome::Insert {
                status: MemoryStatus::Active
            }
        );
        assert_eq!(
            statuses(&plan.actions),
            [(1, MemoryStatus::Superseded), (2, MemoryStatus::Active)]
        );
        assert_eq!(edges(&plan.actions), [(2, EdgeKind::Supersedes, 1)]);
        assert!(plan.actions[0]
            .reason
            .contains("stronger evidence (strong over anecdotal)"));

        // The old one is stronger: the newcomer is recorded SUPERSEDED by it.
        let old = c(1, MemoryStatus::Active, "4.2", &[RefType::ReleaseNotes]);
        let new = c(2, MemoryStatus::Draft, "4.1", &[RefType::Doc]);
        let plan = on_new(&[old], &new, None, at(NOW));
        assert_eq!(
            plan.outcome,
            Outcome::Insert {
                status: MemoryStatus::Superseded
            }
        );
        assert_eq!(statuses(&plan.actions), [(2, MemoryStatus::Superseded)]);
        assert_eq!(edges(&plan.actions), [(1, EdgeKind::Supersedes, 2)]);
    }

    #[test]
    fn then_the_later_valid_from_then_the_higher_confidence() {
        let mut old = c(1, MemoryStatus::Active, "4.2", &[RefType::ReleaseNotes]);
        old.valid_from = Some(at("2025-11-14"));
        let mut new = c(2, MemoryStatus::Draft, "4.3", &[RefType::ReleaseNotes]);
        new.valid_from = Some(at("2025-12-01"));
        let plan = on_new(std::slice::from_ref(&old), &new, None, at(NOW));
        assert_eq!(
            plan.outcome,
            Outcome::Insert {
                status: MemoryStatus::Active
            }
        );
        assert!(
            plan.actions[0].reason.contains("later validFrom"),
            "{}",
            plan.actions[0].reason
        );

        // A missing validFrom counts as earliest.
        new.valid_from = None;
        let plan = on_new(std::slice::from_ref(&old), &new, None, at(NOW));
        assert_eq!(
            plan.outcome,
            Outcome::Insert {
                status: MemoryStatus::Superseded
            }
        );

        new.valid_from = old.valid_from;
        new.confidence = 0.9;
        let plan = on_new(std::slice::from_ref(&old), &new, None, at(NOW));
        assert_eq!(
            plan.outcome,
            Outcome::Insert {
                status: MemoryStatus::Active
            }
        );
        assert!(plan.actions[0]
            .reason
            .contains("higher confidence (0.90 over 0.70)"));

        // Less than a hundredth apart is equal.
        new.confidence = 0.701;
        let plan = on_new(&[old], &new, None, at(NOW));
        assert_eq!(
            plan.outcome,
            Outcome::Insert {
                status: MemoryStatus::Contested
            }
        );
    }

    #[test]
    fn a_tie_contests_both_and_a_decision_resolves_it() {
        let old = c(1, MemoryStatus::Active, "4.2", &[RefType::Doc]);
        let new = c(2, MemoryStatus::Draft, "4.3", &[RefType::Url]);
        let plan = on_new(std::slice::from_ref(&old), &new, None, at(NOW));
        assert_eq!(
            plan.outcome,
            Outcome::Insert {
                status: MemoryStatus::Contested
            }
        );
        assert_eq!(
            statuses(&plan.actions),
            [(1, MemoryStatus::Contested), (2, MemoryStatus::Contested)]
        );
        assert_eq!(edges(&plan.actions), [(2, EdgeKind::Contradicts, 1)]);
        assert_eq!(plan.actions[0].kind, ActionKind::Contest);

        // Settling the same pair again changes nothing.
        let mut a = old.clone();
        a.status = MemoryStatus::Contested;
        let mut b = new.clone();
        b.status = MemoryStatus::Contested;
        b.contradicts = vec![AtomId(1)];
        assert!(settle(&[a.clone(), b.clone()], None, at(NOW)).is_empty());

        // A Decision on the key choosing 4.3.
        let d = Resolver {
            id: AtomId(9),
            value: "4.3".into(),
        };
        let acts = settle(&[a.clone(), b.clone()], Some(&d), at(NOW));
        assert_eq!(
            statuses(&acts),
            [(1, MemoryStatus::Superseded), (2, MemoryStatus::Active)]
        );
        assert_eq!(edges(&acts), [(2, EdgeKind::Supersedes, 1)]);
        assert!(acts.iter().all(|a| a.kind == ActionKind::Resolve));
        assert!(acts.iter().flat_map(|a| &a.changes).any(|c| matches!(c, Change::SetResolution { atom: AtomId(2), text } if text.contains("decision"))));

        // A Decision choosing neither supersedes both.
        let d = Resolver {
            id: AtomId(9),
            value: "5.0".into(),
        };
        let acts = settle(&[a.clone(), b.clone()], Some(&d), at(NOW));
        assert_eq!(
            statuses(&acts),
            [(1, MemoryStatus::Superseded), (2, MemoryStatus::Superseded)]
        );
        assert_eq!(
            edges(&acts),
            [(9, EdgeKind::Supersedes, 1), (9, EdgeKind::Supersedes, 2)]
        );

        // An explicit choice.
        let acts = resolve(&[a.clone(), b.clone()], AtomId(1), "Ana", at(NOW)).unwrap();
        assert_eq!(
            statuses(&acts),
            [(2, MemoryStatus::Superseded), (1, MemoryStatus::Active)]
        );
        assert_eq!(
            resolve(&[a.clone(), b], AtomId(7), "Ana", at(NOW)),
            Err(ResolveError::NotInGroup(AtomId(7)))
        );
        let act = c(3, MemoryStatus::Active, "x", &[]);
        assert!(matches!(
            resolve(&[act], AtomId(3), "Ana", at(NOW)),
            Err(ResolveError::NotContested(..))
        ));
    }

    #[test]
    fn more_evidence_on_one_side_ends_a_contest() {
        let mut a = c(1, MemoryStatus::Contested, "4.2", &[RefType::Doc]);
        let mut b = c(2, MemoryStatus::Contested, "4.3", &[RefType::Doc]);
        a.contradicts = vec![AtomId(2)];
        b.contradicts = vec![AtomId(1)];
        b.references.push((ReferenceId(999), RefType::Pr));
        let acts = settle(&[a, b], None, at(NOW));
        assert_eq!(
            statuses(&acts),
            [(1, MemoryStatus::Superseded), (2, MemoryStatus::Active)]
        );
        assert_eq!(acts.last().map(|a| a.kind), Some(ActionKind::Resolve));
    }

    #[test]
    fn a_candidate_short_of_evidence_waits_beside_the_key() {
        let old = c(1, MemoryStatus::Active, "4.2", &[RefType::ReleaseNotes]);
        let new = c(2, MemoryStatus::Draft, "4.3", &[RefType::Chat]);
        let plan = on_new(&[old], &new, None, at(NOW));
        assert_eq!(
            plan.outcome,
            Outcome::Insert {
                status: MemoryStatus::Proposed
            }
        );
        assert_eq!(statuses(&plan.actions), [(2, MemoryStatus::Proposed)]);
        let lone = c(3, MemoryStatus::Draft, "x", &[]);
        let plan = on_new(&[], &lone, None, at(NOW));
        assert_eq!(
            plan,
            NewAtomPlan {
                outcome: Outcome::Insert {
                    status: MemoryStatus::Draft
                },
                actions: vec![]
            }
        );
    }

    #[test]
    fn an_accepted_decision_needs_its_grade_and_is_accepted_on_winning() {
        let mut d = c(5, MemoryStatus::Draft, "@zod", &[RefType::Adr]);
        d.atom_type = MemoryAtomType::Decision;
        d.decision_status = Some(DecisionStatus::Proposed);
        let plan = on_new(&[], &d, None, at(NOW));
        assert_eq!(
            plan.outcome,
            Outcome::Insert {
                status: MemoryStatus::Active
            }
        );
        assert!(plan.actions[0]
            .changes
            .contains(&Change::SetDecisionStatus {
                atom: AtomId(5),
                from: DecisionStatus::Proposed,
                to: DecisionStatus::Accepted
            }));
        d.references = vec![(ReferenceId(1), RefType::Commit)];
        let plan = on_new(&[], &d, None, at(NOW));
        assert_eq!(
            plan.outcome,
            Outcome::Insert {
                status: MemoryStatus::Proposed
            }
        );
    }

    #[test]
    fn the_rule_text_names_every_criterion() {
        for w in [
            "SUPPORTS",
            "stronger evidence",
            "validFrom",
            "confidence",
            "SUPERSEDED",
            "CONTESTED",
            "CONTRADICTS",
            "Decision",
        ] {
            assert!(RULE.contains(w), "{w}");
        }
    }
}
