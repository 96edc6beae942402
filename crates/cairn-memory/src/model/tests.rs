//! Unit tests of `model`.

use super::super::wire::at;
use super::*;

#[test]
fn wire_spellings_follow_the_issue_and_parse_loosely() {
    assert_eq!(MemoryAtomType::BestPractice.as_wire(), "Best-practice");
    assert_eq!(MemoryAtomType::KnowHow.as_wire(), "Know-how");
    assert_eq!(
        MemoryAtomType::parse("best_practice"),
        Ok(MemoryAtomType::BestPractice)
    );
    assert_eq!(
        MemoryAtomType::parse("antipattern"),
        Ok(MemoryAtomType::AntiPattern)
    );
    assert_eq!(
        MemoryAtomType::parse("KNOW-HOW"),
        Ok(MemoryAtomType::KnowHow)
    );
    assert_eq!(
        MemoryStatus::parse("needs review"),
        Ok(MemoryStatus::NeedsReview)
    );
    assert_eq!(EdgeKind::parse("depends_on"), Ok(EdgeKind::DependsOn));
    assert_eq!(RefType::parse("adr"), Ok(RefType::Adr));
    assert_eq!(Enforcement::parse("ci"), Ok(Enforcement::Ci));
    let e = Severity::parse("maybe").unwrap_err();
    assert_eq!(
        e.to_string(),
        "unknown severity `maybe`: send one of must, should, may"
    );
    let e = MemoryAtomType::parse("Opinion").unwrap_err();
    assert!(e.to_string().contains("Fact, Assumption, Decision"), "{e}");
    for t in MemoryAtomType::ALL {
        assert_eq!(MemoryAtomType::parse(t.as_wire()), Ok(*t));
    }
    for s in MemoryStatus::ALL {
        assert_eq!(s.to_string().parse::<MemoryStatus>(), Ok(*s));
    }
}

/// [`sample_atom`], recorded at `recorded`.
fn atom_at(recorded: OffsetDateTime) -> MemoryAtom {
    MemoryAtom {
        statement: "s".into(),
        recorded_at: recorded,
        ..sample_atom(AtomId(1))
    }
}

#[test]
fn believed_at_and_holds_at_are_half_open_intervals() {
    let mut a = atom_at(at("2025-11-14T00:00:00Z"));
    a.retired_at = Some(at("2025-12-01T00:00:00Z"));
    assert!(!a.believed_at(at("2025-11-13T23:59:00Z")));
    assert!(a.believed_at(at("2025-11-14T00:00:00Z")));
    assert!(a.believed_at(at("2025-11-30T00:00:00Z")));
    assert!(!a.believed_at(at("2025-12-01T00:00:00Z")));
    a.valid_from = Some(at("2025-01-01T00:00:00Z"));
    a.valid_to = Some(at("2026-01-01T00:00:00Z"));
    assert!(!a.holds_at(at("2024-12-31T00:00:00Z")));
    assert!(a.holds_at(at("2025-06-01T00:00:00Z")));
    assert!(!a.holds_at(at("2026-01-01T00:00:00Z")));
    a.valid_to = None;
    assert!(a.holds_at(at("2099-01-01T00:00:00Z")));
}

#[test]
fn edges_join_only_the_ends_their_kind_allows() {
    let a = NodeRef::Atom(AtomId(1));
    let b = NodeRef::Atom(AtomId(2));
    let s = NodeRef::Subject(SubjectId(3));
    let t = NodeRef::Subject(SubjectId(4));
    let r = NodeRef::Reference(ReferenceId(5));
    assert!(MemoryEdge::new(s, EdgeKind::Uses, t).allowed());
    assert!(!MemoryEdge::new(a, EdgeKind::Uses, t).allowed());
    assert!(!MemoryEdge::new(s, EdgeKind::Uses, s).allowed());
    assert!(MemoryEdge::new(r, EdgeKind::Supports, a).allowed());
    assert!(MemoryEdge::new(a, EdgeKind::Supports, b).allowed());
    assert!(!MemoryEdge::new(a, EdgeKind::Supports, r).allowed());
    assert!(MemoryEdge::new(a, EdgeKind::FromSource, r).allowed());
    assert!(MemoryEdge::new(a, EdgeKind::DependsOn, s).allowed());
    assert!(!MemoryEdge::new(a, EdgeKind::Supersedes, s).allowed());
    assert!(!MemoryEdge::new(a, EdgeKind::Contradicts, a).allowed());
}

#[test]
fn the_anchor_is_the_latest_of_recording_validation_and_test() {
    let mut a = atom_at(at("2025-01-01T00:00:00Z"));
    assert_eq!(a.validation_anchor(), at("2025-01-01T00:00:00Z"));
    a.last_validated_at = Some(at("2025-02-01T00:00:00Z"));
    a.details = AtomDetails::KnowHow(KnowHowFields {
        steps: vec!["x".into()],
        inputs: vec![],
        outputs: vec![],
        tools_required: vec![],
        examples: vec![],
        last_tested_at: Some(at("2025-03-01T00:00:00Z")),
    });
    assert_eq!(a.validation_anchor(), at("2025-03-01T00:00:00Z"));
}
