//! Promotion: how far an atom's evidence lets it go, DRAFT → PROPOSED → ACTIVE, and
//! the stricter gate for accepting a Decision. Knows nothing of claim keys: whether
//! an atom that may be ACTIVE actually becomes so is the collision rule's call.
//!
//! | to | when |
//! |---|---|
//! | PROPOSED | it has at least one reference, or an author, or a confirmation |
//! | ACTIVE | it is confirmed by a named person; or its evidence is documented or stronger (doc, url, ticket and up); or it has 3 or more distinct references of any kind (repeated observation) |
//! | ACTIVE (Decision) | only a decision-grade reference (ADR, policy, PR, meeting note) or a named confirmation; the decision is then `accepted`. A rejected or deprecated decision goes no further than PROPOSED |

use std::collections::BTreeSet;

use super::evidence::{decision_grade, strength, Strength};
use super::model::{
    AtomDetails, Confirmation, DecisionStatus, MemoryAtom, MemoryAtomType, MemoryStatus, RefType,
    ReferenceId,
};

/// Evidence at or above this strength makes an atom ACTIVE.
pub const ACTIVE_STRENGTH: Strength = Strength::Documented;
/// This many distinct references of any kind make an atom ACTIVE.
pub const CORROBORATION: usize = 3;

/// What an atom's references amount to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct EvidenceFacts {
    /// The strongest reference's strength.
    pub strength: Strength,
    /// How many distinct references.
    pub distinct: usize,
    /// Whether one of them can accept a Decision.
    pub decision_grade: bool,
}

impl EvidenceFacts {
    /// Sums up references given as (id, type); a reference listed twice counts once.
    pub fn of<I: IntoIterator<Item = (ReferenceId, RefType)>>(refs: I) -> EvidenceFacts {
        let mut seen = BTreeSet::new();
        let mut f = EvidenceFacts::default();
        for (id, t) in refs {
            if seen.insert(id) {
                f.strength = f.strength.max(strength(t));
                f.decision_grade |= decision_grade(t);
            }
        }
        f.distinct = seen.len();
        f
    }
}

/// What promotion needs to know of an atom.
#[derive(Debug, Clone, Copy)]
pub struct Standing<'a> {
    /// Its type.
    pub atom_type: MemoryAtomType,
    /// A Decision's own status.
    pub decision_status: Option<DecisionStatus>,
    /// Whether it names an author.
    pub has_author: bool,
    /// Its explicit confirmation.
    pub confirmation: Option<&'a Confirmation>,
    /// Its evidence.
    pub evidence: EvidenceFacts,
}

impl<'a> Standing<'a> {
    /// The standing of an atom with the given evidence.
    pub fn of(atom: &'a MemoryAtom, evidence: EvidenceFacts) -> Standing<'a> {
        Standing {
            atom_type: atom.atom_type(),
            decision_status: match &atom.details {
                AtomDetails::Decision(d) => Some(d.decision_status),
                _ => None,
            },
            has_author: atom.author.is_some(),
            confirmation: atom.confirmation.as_ref(),
            evidence,
        }
    }
}

/// The furthest status the evidence allows, with the reason in a few words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reach {
    /// DRAFT, PROPOSED or ACTIVE.
    pub status: MemoryStatus,
    /// Why, e.g. `confirmed by Ana`, `documented evidence`.
    pub reason: String,
}

/// How far an atom may be promoted (the table above).
pub fn reach(s: &Standing<'_>) -> Reach {
    let r = |status, reason: String| Reach { status, reason };
    let ev = s.evidence;
    if s.atom_type == MemoryAtomType::Decision {
        let open = matches!(
            s.decision_status,
            None | Some(DecisionStatus::Proposed) | Some(DecisionStatus::Accepted)
        );
        if open {
            if let Some(c) = s.confirmation {
                return r(
                    MemoryStatus::Active,
                    format!("decision confirmed by {}", c.by),
                );
            }
            if ev.decision_grade {
                return r(
                    MemoryStatus::Active,
                    "decision backed by an ADR, policy, PR or meeting note".into(),
                );
            }
        }
    } else {
        if let Some(c) = s.confirmation {
            return r(MemoryStatus::Active, format!("confirmed by {}", c.by));
        }
        if ev.strength >= ACTIVE_STRENGTH {
            return r(MemoryStatus::Active, format!("{} evidence", ev.strength));
        }
        if ev.distinct >= CORROBORATION {
            return r(
                MemoryStatus::Active,
                format!("{} independent references", ev.distinct),
            );
        }
    }
    if ev.distinct > 0 {
        r(MemoryStatus::Proposed, "has a reference".into())
    } else if s.has_author {
        r(MemoryStatus::Proposed, "has an author".into())
    } else if let Some(c) = s.confirmation {
        r(MemoryStatus::Proposed, format!("confirmed by {}", c.by))
    } else {
        r(MemoryStatus::Draft, "no evidence yet".into())
    }
}

/// Whether a Decision may say `accepted`: it needs a decision-grade reference or a
/// confirmation naming who confirmed. Other atoms always pass.
pub fn may_accept(s: &Standing<'_>) -> bool {
    s.decision_status != Some(DecisionStatus::Accepted)
        || s.confirmation.is_some()
        || s.evidence.decision_grade
}

#[cfg(test)]
mod tests {
    use super::super::wire::at;
    use super::*;

    fn standing(t: MemoryAtomType, refs: &[RefType]) -> Standing<'static> {
        Standing {
            atom_type: t,
            decision_status: (t == MemoryAtomType::Decision).then_some(DecisionStatus::Proposed),
            has_author: false,
            confirmation: None,
            evidence: EvidenceFacts::of(
                refs.iter()
                    .enumerate()
                    .map(|(i, r)| (ReferenceId(i as u128), *r)),
            ),
        }
    }

    #[test]
    fn evidence_moves_an_atom_up_step_by_step() {
        let t = MemoryAtomType::Assumption;
        assert_eq!(reach(&standing(t, &[])).status, MemoryStatus::Draft);
        let mut s = standing(t, &[]);
        s.has_author = true;
        assert_eq!(reach(&s).status, MemoryStatus::Proposed);
        assert_eq!(
            reach(&standing(t, &[RefType::Chat])).status,
            MemoryStatus::Proposed
        );
        assert_eq!(
            reach(&standing(t, &[RefType::Url])).status,
            MemoryStatus::Active
        );
        assert_eq!(
            reach(&standing(t, &[RefType::ReleaseNotes])).reason,
            "strong evidence"
        );
        let three = [RefType::Chat, RefType::Diary, RefType::Chat];
        let r = reach(&standing(t, &three));
        assert_eq!(r.status, MemoryStatus::Active);
        assert_eq!(r.reason, "3 independent references");
        let c = Confirmation {
            by: "Ana".into(),
            at: at("2025-01-01"),
        };
        let mut s = standing(t, &[]);
        s.confirmation = Some(&c);
        assert_eq!(
            reach(&s),
            Reach {
                status: MemoryStatus::Active,
                reason: "confirmed by Ana".into()
            }
        );
    }

    #[test]
    fn the_same_reference_twice_counts_once() {
        let f = EvidenceFacts::of([
            (ReferenceId(1), RefType::Chat),
            (ReferenceId(1), RefType::Chat),
        ]);
        assert_eq!(f.distinct, 1);
    }

    #[test]
    fn a_decision_needs_a_decision_grade_reference_or_a_named_confirmation() {
        let d = MemoryAtomType::Decision;
        assert_eq!(
            reach(&standing(d, &[RefType::Commit])).status,
            MemoryStatus::Proposed
        );
        assert_eq!(
            reach(&standing(d, &[RefType::Doc, RefType::Url, RefType::Chat])).status,
            MemoryStatus::Proposed
        );
        assert_eq!(
            reach(&standing(d, &[RefType::Adr])).status,
            MemoryStatus::Active
        );
        assert_eq!(
            reach(&standing(d, &[RefType::MeetingNote])).status,
            MemoryStatus::Active
        );
        let c = Confirmation {
            by: "CTO".into(),
            at: at("2025-01-01"),
        };
        let mut s = standing(d, &[]);
        s.confirmation = Some(&c);
        assert_eq!(reach(&s).status, MemoryStatus::Active);
        s.decision_status = Some(DecisionStatus::Rejected);
        assert_eq!(reach(&s).status, MemoryStatus::Proposed);

        let mut s = standing(d, &[RefType::Commit]);
        s.decision_status = Some(DecisionStatus::Accepted);
        assert!(!may_accept(&s));
        s.evidence = EvidenceFacts::of([(ReferenceId(9), RefType::Pr)]);
        assert!(may_accept(&s));
    }
}
