//! The vocabulary of decisions: each rule of the memory answers with actions, an
//! action being a short reason and the exact changes to write, in order. The service
//! writes them as they come; the curator's `apply` replays them on a snapshot. Knows
//! nothing of SQL: a change names rows by id and says what the field becomes.
//!
//! Order matters for the store's one-ACTIVE-per-key index: within a plan, a change
//! that takes an atom out of ACTIVE comes before one that makes another atom ACTIVE on
//! the same key, and claim-key rewrites come after every status change.

use std::fmt;

use time::OffsetDateTime;

use super::model::{
    AtomId, DecisionStatus, EdgeKind, MemoryEdge, MemoryStatus, NodeRef, SubjectId,
};
use super::wire::format_time;

/// One write.
#[derive(Debug, Clone, PartialEq)]
pub enum Change {
    /// `from` is merged into `into` (it keeps its row with `merged_into` set);
    /// `aliases` are added to `into`.
    MergeSubject {
        /// The subject merged away.
        from: SubjectId,
        /// The survivor.
        into: SubjectId,
        /// Names the survivor gains, exact spellings.
        aliases: Vec<String>,
    },
    /// An atom's ABOUT moves to the surviving subject.
    MoveAbout {
        /// The atom.
        atom: AtomId,
        /// The old subject.
        from: SubjectId,
        /// The survivor.
        to: SubjectId,
    },
    /// An atom's IN_CONTEXT moves to the surviving subject.
    MoveContext {
        /// The atom.
        atom: AtomId,
        /// The old subject.
        from: SubjectId,
        /// The survivor.
        to: SubjectId,
    },
    /// A subject's field pointing at a merged subject points at the survivor.
    RepointSubjectField {
        /// The subject holding the field.
        subject: SubjectId,
        /// The field's wire name (`org`, `maintainer`).
        field: &'static str,
        /// The old subject.
        from: SubjectId,
        /// The survivor.
        to: SubjectId,
    },
    /// An edge is replaced by the same edge with a merged end repointed.
    MoveEdge {
        /// The edge as it was.
        from: MemoryEdge,
        /// The edge as it becomes.
        to: MemoryEdge,
    },
    /// An edge is removed because repointing it would duplicate another or join a
    /// subject to itself.
    DropEdge(MemoryEdge),
    /// An edge is added.
    AddEdge(MemoryEdge),
    /// An atom's status moves; entering a retired status sets `retired_at` to `at`.
    SetStatus {
        /// The atom.
        atom: AtomId,
        /// The status it had.
        from: MemoryStatus,
        /// The status it gets.
        to: MemoryStatus,
        /// When.
        at: OffsetDateTime,
    },
    /// A Decision's own status moves (to `accepted` when it becomes ACTIVE).
    SetDecisionStatus {
        /// The atom.
        atom: AtomId,
        /// The decision status it had.
        from: DecisionStatus,
        /// The decision status it gets.
        to: DecisionStatus,
    },
    /// How a conflict was resolved is recorded on the winner.
    SetResolution {
        /// The atom.
        atom: AtomId,
        /// The resolution.
        text: String,
    },
    /// The stored claim key (the unique index column) is rewritten.
    SetClaimKey {
        /// The atom.
        atom: AtomId,
        /// The column as it was.
        from: Option<String>,
        /// The column as it becomes.
        to: Option<String>,
    },
    /// The next review date is set.
    SetNextReview {
        /// The atom.
        atom: AtomId,
        /// The date it had.
        from: Option<OffsetDateTime>,
        /// The date it gets.
        to: Option<OffsetDateTime>,
    },
    /// The current confidence moves (decay); the validated confidence stays.
    SetConfidence {
        /// The atom.
        atom: AtomId,
        /// The confidence it had.
        from: f64,
        /// The confidence it gets.
        to: f64,
    },
}

fn node(n: &NodeRef) -> String {
    match n {
        NodeRef::Atom(a) => format!("atom {a}"),
        NodeRef::Subject(s) => format!("subject {s}"),
        NodeRef::Reference(r) => format!("reference {r}"),
    }
}

fn edge(e: &MemoryEdge) -> String {
    format!("{} {} {}", node(&e.from), e.kind.as_wire(), node(&e.to))
}

fn opt_time(t: &Option<OffsetDateTime>) -> String {
    t.map_or_else(|| "none".to_string(), format_time)
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Change::MergeSubject {
                from,
                into,
                aliases,
            } => {
                write!(f, "merge subject {from} into {into}")?;
                if !aliases.is_empty() {
                    write!(f, " (aliases + {})", aliases.join(", "))?;
                }
                Ok(())
            }
            Change::MoveAbout { atom, from, to } => {
                write!(f, "atom {atom} ABOUT {from} → {to}")
            }
            Change::MoveContext { atom, from, to } => {
                write!(f, "atom {atom} IN_CONTEXT {from} → {to}")
            }
            Change::RepointSubjectField {
                subject,
                field,
                from,
                to,
            } => {
                write!(f, "subject {subject} {field} {from} → {to}")
            }
            Change::MoveEdge { from, to } => write!(f, "edge {} → {}", edge(from), edge(to)),
            Change::DropEdge(e) => write!(f, "drop edge {}", edge(e)),
            Change::AddEdge(e) => write!(f, "add edge {}", edge(e)),
            Change::SetStatus { atom, from, to, .. } => write!(f, "atom {atom} {from} → {to}"),
            Change::SetDecisionStatus { atom, from, to } => {
                write!(f, "atom {atom} decisionStatus {from} → {to}")
            }
            Change::SetResolution { atom, text } => write!(f, "atom {atom} resolution: {text}"),
            Change::SetClaimKey { atom, from, to } => write!(
                f,
                "atom {atom} claim key {} → {}",
                from.as_deref().unwrap_or("none"),
                to.as_deref().unwrap_or("none")
            ),
            Change::SetNextReview { atom, from, to } => write!(
                f,
                "atom {atom} nextReviewAt {} → {}",
                opt_time(from),
                opt_time(to)
            ),
            Change::SetConfidence { atom, from, to } => {
                write!(f, "atom {atom} confidence {from} → {to}")
            }
        }
    }
}

/// What an action does, in one word (for grouping and counting a dry run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ActionKind {
    /// Subjects found to be one are merged; their atoms and edges move.
    MergeSubjects,
    /// A Decision marked deprecated leaves ACTIVE.
    Deprecate,
    /// An atom saying what another already says is folded into it.
    MergeDuplicate,
    /// An atom moves up (DRAFT → PROPOSED → ACTIVE).
    Promote,
    /// A claim beats another on its key.
    Supersede,
    /// Claims tie on their key: both CONTESTED.
    Contest,
    /// A contest ends by a Decision or an explicit choice.
    Resolve,
    /// The stored claim key is brought in line.
    AssignKey,
    /// A review date is set.
    ScheduleReview,
    /// An atom is due for review.
    NeedsReview,
    /// Confidence fades.
    Decay,
}

impl ActionKind {
    /// The kind's wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ActionKind::MergeSubjects => "merge_subjects",
            ActionKind::Deprecate => "deprecate",
            ActionKind::MergeDuplicate => "merge_duplicate",
            ActionKind::Promote => "promote",
            ActionKind::Supersede => "supersede",
            ActionKind::Contest => "contest",
            ActionKind::Resolve => "resolve",
            ActionKind::AssignKey => "assign_key",
            ActionKind::ScheduleReview => "schedule_review",
            ActionKind::NeedsReview => "needs_review",
            ActionKind::Decay => "decay",
        }
    }
}

/// One decision: what to write and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Action {
    /// What it does, in one word.
    pub kind: ActionKind,
    /// The writes, in order.
    pub changes: Vec<Change>,
    /// Why, in a short sentence.
    pub reason: String,
}

impl fmt::Display for Action {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.kind.as_str(), self.reason)?;
        for c in &self.changes {
            write!(f, "\n  - {c}")?;
        }
        Ok(())
    }
}

/// A SUPERSEDES edge from the winner to the loser.
pub(crate) fn supersedes(winner: AtomId, loser: AtomId) -> Change {
    Change::AddEdge(MemoryEdge::new(
        NodeRef::Atom(winner),
        EdgeKind::Supersedes,
        NodeRef::Atom(loser),
    ))
}
