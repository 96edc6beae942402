//! Review and decay: per atom type, how often an atom must be checked again and how
//! its confidence fades while nobody checks it; and what validating it resets. Time
//! is always the caller's `now`. Knows nothing of keys, evidence or the store.
//!
//! Confidence decays in whole days from the atom's validation anchor (the latest of
//! its recording, its last validation and, for Know-how, its last successful test):
//!
//! ```text
//! c(t) = max(floor, c0 · 0.5^(d / halfLife))     d = whole days since the anchor
//! ```
//!
//! where `c0` is the confidence at the last validation; a `c0` already below the
//! floor is left as it is (decay never raises), and the result is rounded to three
//! decimals. Counting whole days makes a curator run a moment after another find
//! nothing to change, and the rounding keeps stored values stable.

use std::fmt;

use time::{Duration, OffsetDateTime};

use super::model::{MemoryAtom, MemoryAtomType, MemoryStatus};

/// How one atom type is reviewed and decays.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ReviewPolicy {
    /// Days from the anchor to the next review; None: never reviewed by time.
    pub review_days: Option<u32>,
    /// Days for confidence to halve; None: never decays.
    pub half_life_days: Option<u32>,
    /// Decay stops here.
    pub floor: f64,
    /// Review when something it DEPENDS_ON changes.
    pub on_dependency_change: bool,
    /// Review no later than `validTo` (time-bound facts).
    pub review_by_valid_to: bool,
}

const fn periodic(review: u32, half_life: Option<u32>, floor: f64) -> ReviewPolicy {
    ReviewPolicy {
        review_days: Some(review),
        half_life_days: half_life,
        floor,
        on_dependency_change: false,
        review_by_valid_to: false,
    }
}

/// The policy of a type; `time_bound` matters for Facts only (a Fact is time-bound
/// when it has a `validTo`).
///
/// The decay classes (docs/memory.md). Assumptions are checked monthly and halve in
/// a month: uncertain, so reviewed often. Decisions never decay nor come up by
/// time: they change by supersession or deprecation. Best-practice and Convention
/// come up every 180 days and fade slowly; Know-how likewise, and also when a
/// DEPENDS_ON target changes. Identity atoms come up yearly and fade slowest (people
/// change slowly). Rules, Patterns and AntiPatterns come up yearly without fading
/// (they rarely expire). A timeless Fact comes up yearly without fading; a
/// time-bound one every
/// 90 days and by its `validTo`, fading. Causes behave like a weaker Assumption.
pub fn policy(atom_type: MemoryAtomType, time_bound: bool) -> ReviewPolicy {
    use MemoryAtomType as T;
    match atom_type {
        T::Fact if time_bound => ReviewPolicy {
            review_by_valid_to: true,
            ..periodic(90, Some(180), 0.2)
        },
        T::Fact => periodic(365, None, 0.0),
        T::Assumption => periodic(30, Some(30), 0.1),
        T::Decision => ReviewPolicy {
            review_days: None,
            ..periodic(0, None, 0.0)
        },
        T::Rule | T::Pattern | T::AntiPattern => periodic(365, None, 0.0),
        T::Convention | T::BestPractice => periodic(180, Some(365), 0.3),
        T::KnowHow => ReviewPolicy {
            on_dependency_change: true,
            ..periodic(180, Some(365), 0.3)
        },
        T::Trait | T::Style | T::Strength | T::Preference => periodic(365, Some(730), 0.3),
        T::Cause => periodic(90, Some(180), 0.1),
    }
}

/// The policy that applies to an atom.
pub fn policy_of(atom: &MemoryAtom) -> ReviewPolicy {
    policy(atom.atom_type(), atom.valid_to.is_some())
}

/// When an atom validated at `anchor` is next due: the anchor plus its own
/// `reviewIntervalDays` or its type's interval, and for a time-bound Fact no later
/// than its `validTo`. None when its type is never reviewed by time.
pub fn next_review(atom: &MemoryAtom, anchor: OffsetDateTime) -> Option<OffsetDateTime> {
    let p = policy_of(atom);
    let days = atom.review_interval_days.or(p.review_days)?;
    // Past the calendar's end there is no review date to give.
    let due = anchor.checked_add(Duration::days(i64::from(days)))?;
    Some(match (p.review_by_valid_to, atom.valid_to) {
        (true, Some(to)) => due.min(to),
        _ => due,
    })
}

/// Whole days from `anchor` to `now`, never negative.
fn whole_days(anchor: OffsetDateTime, now: OffsetDateTime) -> i64 {
    (now - anchor).whole_days().max(0)
}

/// Rounds to three decimals.
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

/// The formula of this module: `c0` decayed over the whole days from `anchor` to
/// `now` under `policy`. Without a half-life, or on the anchor's own day, it is `c0`
/// unchanged.
pub fn decayed(c0: f64, anchor: OffsetDateTime, now: OffsetDateTime, policy: &ReviewPolicy) -> f64 {
    let Some(half_life) = policy.half_life_days else {
        return c0;
    };
    let days = whole_days(anchor, now);
    if days == 0 || half_life == 0 || c0 <= policy.floor {
        return c0;
    }
    let exponent = days as f64 / f64::from(half_life);
    round3((c0 * (-exponent).exp2()).max(policy.floor))
}

/// An atom's confidence at `now`: its validated confidence decayed from its anchor.
pub fn effective_confidence(atom: &MemoryAtom, now: OffsetDateTime) -> f64 {
    decayed(
        atom.validated_confidence,
        atom.validation_anchor(),
        now,
        &policy_of(atom),
    )
}

/// Whether an ACTIVE atom's review is due at `now` (it should become NEEDS_REVIEW).
pub fn review_due(atom: &MemoryAtom, now: OffsetDateTime) -> bool {
    atom.status == MemoryStatus::Active && atom.next_review_at.is_some_and(|t| t <= now)
}

/// What validating an atom sets.
#[derive(Debug, Clone, PartialEq)]
pub struct Revalidation {
    /// ACTIVE for an atom that was ACTIVE or NEEDS_REVIEW; otherwise unchanged.
    pub status: MemoryStatus,
    /// `now`.
    pub last_validated_at: OffsetDateTime,
    /// Rescheduled from `now`.
    pub next_review_at: Option<OffsetDateTime>,
    /// The confidence given, else the one of the last validation.
    pub confidence: f64,
}

/// Why an atom cannot be validated.
#[derive(Debug, Clone, PartialEq)]
pub enum RevalidateError {
    /// It is history: validate a new atom that supersedes it instead.
    Retired(MemoryStatus),
    /// The confidence given is not in 0..1.
    Confidence(f64),
}

impl fmt::Display for RevalidateError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RevalidateError::Retired(s) => write!(
                f,
                "the atom is {s}: it is history and cannot be validated; record a new atom instead"
            ),
            RevalidateError::Confidence(c) => {
                write!(
                    f,
                    "confidence {c} is outside 0..1: send a number between 0 and 1"
                )
            }
        }
    }
}

impl std::error::Error for RevalidateError {}

/// Validates an atom at `now`: a NEEDS_REVIEW atom is ACTIVE again, the last
/// validation is `now`, the next review is rescheduled from it, and the confidence is
/// restored to the one given or, failing that, to the one of the last validation.
pub fn revalidate(
    atom: &MemoryAtom,
    now: OffsetDateTime,
    confidence: Option<f64>,
) -> Result<Revalidation, RevalidateError> {
    if atom.status.is_retired() {
        return Err(RevalidateError::Retired(atom.status));
    }
    let c = confidence.unwrap_or(atom.validated_confidence);
    if !(0.0..=1.0).contains(&c) {
        return Err(RevalidateError::Confidence(c));
    }
    let status = match atom.status {
        MemoryStatus::NeedsReview => MemoryStatus::Active,
        s => s,
    };
    Ok(Revalidation {
        status,
        last_validated_at: now,
        next_review_at: next_review(atom, now),
        confidence: c,
    })
}

impl Revalidation {
    /// Writes the result onto an atom (as the service writes the row).
    pub fn apply(&self, atom: &mut MemoryAtom) {
        atom.status = self.status;
        atom.last_validated_at = Some(self.last_validated_at);
        atom.next_review_at = self.next_review_at;
        atom.confidence = self.confidence;
        atom.validated_confidence = self.confidence;
    }
}

/// The policy table as markdown rows (header included), for the README.
pub fn markdown_table() -> String {
    let mut out = String::from(
        "| atom type | review every (days) | confidence half-life (days) | floor | also reviewed when |\n|---|---|---|---|---|\n",
    );
    let mut row = |name: &str, p: ReviewPolicy| {
        let review = p.review_days.map_or("never".to_string(), |d| d.to_string());
        let (half, floor) = match p.half_life_days {
            Some(h) => (h.to_string(), format!("{}", p.floor)),
            None => ("no decay".to_string(), "-".to_string()),
        };
        let mut also = Vec::new();
        if p.on_dependency_change {
            also.push("a DEPENDS_ON target changes");
        }
        if p.review_by_valid_to {
            also.push("validTo is reached");
        }
        let also = if also.is_empty() {
            "-".to_string()
        } else {
            also.join("; ")
        };
        out.push_str(&format!(
            "| {name} | {review} | {half} | {floor} | {also} |\n"
        ));
    };
    for t in MemoryAtomType::ALL {
        if *t == MemoryAtomType::Fact {
            row("Fact (timeless)", policy(*t, false));
            row("Fact (time-bound: has validTo)", policy(*t, true));
        } else {
            row(t.as_wire(), policy(*t, false));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::model::{AssumptionFields, AtomDetails, AtomId, Context, Level};
    use super::super::wire::at;
    use super::*;

    fn assumption(confidence: f64, recorded: &str) -> MemoryAtom {
        MemoryAtom {
            id: AtomId(1),
            details: AtomDetails::Assumption(AssumptionFields {
                validation_method: "check npm".into(),
                risk_if_wrong: None,
                owner: None,
                deadline: None,
            }),
            statement: "Zod's latest version is 4.2".into(),
            predicate: None,
            value: None,
            about: None,
            context: Context::Global,
            status: MemoryStatus::Active,
            confidence,
            validated_confidence: confidence,
            importance: Level::Med,
            title: None,
            summary: None,
            notes: None,
            resolution: None,
            tags: vec![],
            author: None,
            confirmation: None,
            valid_from: None,
            valid_to: None,
            recorded_at: at(recorded),
            retired_at: None,
            last_validated_at: Some(at(recorded)),
            next_review_at: None,
            review_interval_days: None,
            claim_key: None,
        }
    }

    #[test]
    fn an_assumption_decays_by_the_formula_in_whole_days() {
        let a = assumption(0.8, "2025-11-14");
        let p = policy_of(&a);
        assert_eq!(p.half_life_days, Some(30));
        // Less than a day later nothing has moved.
        assert_eq!(effective_confidence(&a, at("2025-11-14T23:00:00Z")), 0.8);
        // One half-life: half.
        assert_eq!(effective_confidence(&a, at("2025-12-14")), 0.4);
        // 45 days: 0.8 · 0.5^1.5, rounded.
        let want = ((0.8 * 0.5f64.powf(45.0 / 30.0)) * 1000.0).round() / 1000.0;
        assert_eq!(effective_confidence(&a, at("2025-12-29")), want);
        // Far out: the floor.
        assert_eq!(effective_confidence(&a, at("2027-01-01")), 0.1);
        // Below the floor already: untouched.
        let low = assumption(0.05, "2025-11-14");
        assert_eq!(effective_confidence(&low, at("2027-01-01")), 0.05);
    }

    #[test]
    fn a_decision_never_decays_nor_comes_up_for_review() {
        let p = policy(MemoryAtomType::Decision, false);
        assert_eq!(p.review_days, None);
        assert_eq!(p.half_life_days, None);
        assert_eq!(decayed(0.9, at("2024-01-01"), at("2026-01-01"), &p), 0.9);
    }

    #[test]
    fn review_dates_follow_the_policy_and_the_override() {
        let mut a = assumption(0.7, "2025-11-14");
        assert_eq!(next_review(&a, at("2025-11-14")), Some(at("2025-12-14")));
        a.review_interval_days = Some(7);
        assert_eq!(next_review(&a, at("2025-11-14")), Some(at("2025-11-21")));
        a.next_review_at = Some(at("2025-11-21"));
        assert!(!review_due(&a, at("2025-11-20")));
        assert!(review_due(&a, at("2025-11-21")));
        a.status = MemoryStatus::Proposed;
        assert!(!review_due(&a, at("2025-12-01")));
    }

    #[test]
    fn a_review_past_the_calendar_end_is_none_not_a_panic() {
        let a = assumption(0.7, "9999-12-31");
        assert_eq!(next_review(&a, a.recorded_at), None);
    }

    #[test]
    fn a_time_bound_fact_is_reviewed_by_its_valid_to() {
        let mut a = assumption(0.7, "2025-01-01");
        a.details = AtomDetails::Fact(super::super::model::FactFields {
            fact_kind: super::super::model::FactKind::Reported,
            observed_count: None,
            first_observed_at: None,
            last_observed_at: None,
        });
        assert_eq!(next_review(&a, at("2025-01-01")), Some(at("2026-01-01")));
        assert_eq!(policy_of(&a).half_life_days, None);
        a.valid_to = Some(at("2025-02-01"));
        assert_eq!(next_review(&a, at("2025-01-01")), Some(at("2025-02-01")));
        assert_eq!(policy_of(&a).half_life_days, Some(180));
    }

    #[test]
    fn validating_restores_active_confidence_and_schedule() {
        let mut a = assumption(0.8, "2025-11-14");
        a.status = MemoryStatus::NeedsReview;
        a.confidence = 0.4;
        let r = revalidate(&a, at("2026-01-10"), None).unwrap();
        assert_eq!(r.status, MemoryStatus::Active);
        assert_eq!(r.confidence, 0.8);
        assert_eq!(r.next_review_at, Some(at("2026-02-09")));
        r.apply(&mut a);
        assert_eq!(effective_confidence(&a, at("2026-01-10")), 0.8);
        let r = revalidate(&a, at("2026-01-11"), Some(0.95)).unwrap();
        assert_eq!(r.confidence, 0.95);
        assert!(matches!(
            revalidate(&a, at("2026-01-11"), Some(1.5)),
            Err(RevalidateError::Confidence(_))
        ));
        a.status = MemoryStatus::Superseded;
        assert!(matches!(
            revalidate(&a, at("2026-01-11"), None),
            Err(RevalidateError::Retired(MemoryStatus::Superseded))
        ));
    }

    #[test]
    fn the_table_has_a_row_per_type_and_says_what_the_issue_says() {
        let t = markdown_table();
        assert_eq!(t.lines().count(), 2 + MemoryAtomType::ALL.len() + 1);
        assert!(t.contains("| Decision | never | no decay | - | - |"), "{t}");
        assert!(t.contains("| Assumption | 30 | 30 | 0.1 | - |"), "{t}");
        assert!(t.contains("| Best-practice | 180 |"), "{t}");
        assert!(t.contains("| Convention | 180 |"), "{t}");
        assert!(
            t.contains("| Know-how | 180 | 365 | 0.3 | a DEPENDS_ON target changes |"),
            "{t}"
        );
    }
}
