//! Evidence strength: how much a kind of reference counts when two claims compete, and
//! which references may accept a Decision. An atom's strength is that of its strongest
//! reference. Knows nothing of atoms' statuses or keys.
//!
//! | strength | reference types | why |
//! |---|---|---|
//! | 3 strong | ADR, policy, PR, commit, release_notes, meeting_note | a recorded act of the team or the upstream project, reviewed or dated |
//! | 2 documented | doc, url, ticket | written down, but anyone may write it and it ages unseen |
//! | 1 anecdotal | chat, diary | said in passing, or an agent's own session notes |
//! | 0 none | (no reference) | |
//!
//! The tiers rank ADR, policy, PR, commit and release notes above docs and URLs, and
//! those above chat and none (docs/memory.md, evidence). A meeting note joins the top
//! tier because it records a decision; a ticket sits with docs (a written
//! request, not a record of what was done); a diary entry sits with chat. Chat ranks
//! above no reference at all, so that any source lifts a DRAFT.
//!
//! Accepting a Decision needs more than strength: only ADR, policy, PR and
//! meeting_note are *decision-grade* (docs/memory.md), since a commit or release
//! notes show what happened, not that it was decided.

use std::fmt;

use super::model::RefType;

/// How strong a body of evidence is; ordered weakest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Default)]
pub enum Strength {
    /// No reference.
    #[default]
    None,
    /// Chat or diary.
    Anecdotal,
    /// Docs, URLs, tickets.
    Documented,
    /// ADR, policy, PR, commit, release notes, meeting notes.
    Strong,
}

impl Strength {
    /// The tier as a number, 0 (none) to 3 (strong).
    pub fn rank(self) -> u8 {
        match self {
            Strength::None => 0,
            Strength::Anecdotal => 1,
            Strength::Documented => 2,
            Strength::Strong => 3,
        }
    }

    /// The tier as a fraction of the strongest, for blending into a score.
    pub fn fraction(self) -> f64 {
        f64::from(self.rank()) / 3.0
    }

    /// The tier's name.
    pub fn as_str(self) -> &'static str {
        match self {
            Strength::None => "none",
            Strength::Anecdotal => "anecdotal",
            Strength::Documented => "documented",
            Strength::Strong => "strong",
        }
    }
}

impl fmt::Display for Strength {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The strength of one kind of reference (the table above).
pub fn strength(ref_type: RefType) -> Strength {
    match ref_type {
        RefType::Adr
        | RefType::Policy
        | RefType::Pr
        | RefType::Commit
        | RefType::ReleaseNotes
        | RefType::MeetingNote => Strength::Strong,
        RefType::Doc | RefType::Url | RefType::Ticket => Strength::Documented,
        RefType::Chat | RefType::Diary => Strength::Anecdotal,
    }
}

/// The strength of a body of evidence: that of its strongest reference.
pub fn strength_of<I: IntoIterator<Item = RefType>>(refs: I) -> Strength {
    refs.into_iter().map(strength).max().unwrap_or_default()
}

/// Whether a reference of this kind can accept a Decision (ADR, policy, PR, meeting
/// note).
pub fn decision_grade(ref_type: RefType) -> bool {
    matches!(
        ref_type,
        RefType::Adr | RefType::Policy | RefType::Pr | RefType::MeetingNote
    )
}

/// The strength table as markdown rows (header included), for the README.
pub fn markdown_table() -> String {
    let mut out =
        String::from("| reference type | strength | accepts a Decision |\n|---|---|---|\n");
    for t in RefType::ALL {
        let s = strength(*t);
        out.push_str(&format!(
            "| {} | {} {} | {} |\n",
            t.as_wire(),
            s.rank(),
            s,
            if decision_grade(*t) { "yes" } else { "no" }
        ));
    }
    out.push_str("| (none) | 0 none | no |\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_order_holds() {
        let top = [
            RefType::Adr,
            RefType::Policy,
            RefType::Pr,
            RefType::Commit,
            RefType::ReleaseNotes,
        ];
        for t in top {
            assert!(strength(t) > strength(RefType::Doc));
            assert!(strength(t) > strength(RefType::Url));
        }
        assert!(strength(RefType::Url) > strength(RefType::Chat));
        assert!(strength(RefType::Chat) > Strength::None);
        assert_eq!(strength(RefType::MeetingNote), Strength::Strong);
        assert_eq!(strength(RefType::Ticket), Strength::Documented);
        assert_eq!(strength(RefType::Diary), Strength::Anecdotal);
    }

    #[test]
    fn an_atom_is_as_strong_as_its_strongest_reference() {
        assert_eq!(strength_of([]), Strength::None);
        assert_eq!(
            strength_of([RefType::Chat, RefType::Doc]),
            Strength::Documented
        );
        assert_eq!(
            strength_of([RefType::Chat, RefType::Commit, RefType::Url]),
            Strength::Strong
        );
    }

    #[test]
    fn only_the_spec_list_accepts_decisions() {
        let grade: Vec<_> = RefType::ALL
            .iter()
            .filter(|t| decision_grade(**t))
            .collect();
        assert_eq!(
            grade,
            [
                &RefType::Adr,
                &RefType::Policy,
                &RefType::Pr,
                &RefType::MeetingNote
            ]
        );
        let table = markdown_table();
        assert!(table.contains("| ADR | 3 strong | yes |"), "{table}");
        assert!(table.contains("| commit | 3 strong | no |"), "{table}");
        assert_eq!(table.lines().count(), 2 + RefType::ALL.len() + 1);
    }
}
