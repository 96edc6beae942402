//! Unit tests of `validate`.

use super::super::wire::at;
use super::*;

const ZOD: SubjectId = SubjectId(0x20d);
const ORG: SubjectId = SubjectId(0x0a9);
const ANA: SubjectId = SubjectId(0xa4a);
const EFFECT: AtomId = AtomId(0xeff);

fn kinds(id: SubjectId) -> Option<SubjectKind> {
    match id {
        ZOD => Some(SubjectKind::Lib),
        ORG => Some(SubjectKind::Org),
        ANA => Some(SubjectKind::Person),
        _ => None,
    }
}

fn atoms(id: AtomId) -> bool {
    id == EFFECT
}

fn ctx(evidence: EvidenceFacts) -> AtomContext<'static> {
    AtomContext {
        known: Known {
            subject: &kinds,
            atom: &atoms,
        },
        evidence,
        now: at("2025-11-14"),
    }
}

fn input(pairs: &[(&str, Raw)]) -> Vec<(String, Raw)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.clone()))
        .collect()
}

fn t(s: &str) -> Raw {
    Raw::text(s)
}

fn fields_of(e: &ValidationErrors) -> Vec<&str> {
    e.0.iter().map(|e| e.field.as_str()).collect()
}

#[test]
fn the_zod_assumption_validates_with_a_key() {
    let a = atom(
        &input(&[
            ("type", t("assumption")),
            ("statement", t("Zod's latest version is 4.2")),
            ("predicate", t("Latest Version")),
            ("value", t("4.2")),
            ("about", t(&ZOD.to_string())),
            ("confidence", Raw::Number(0.7)),
            ("validation_method", t("npm view zod version")),
            ("tags", Raw::texts(&["zod", "zod", "versions"])),
        ]),
        AtomId(1),
        &ctx(EvidenceFacts::default()),
    )
    .unwrap();
    assert_eq!(a.status, MemoryStatus::Draft);
    assert_eq!(
        a.predicate.as_ref().map(|p| p.as_str()),
        Some("latest_version")
    );
    assert_eq!(a.tags, ["zod", "versions"]);
    assert_eq!(
        a.claim_key.as_deref(),
        Some("Assumption|latest_version|00000000-0000-0000-0000-00000000020d|global")
    );
    // The details read back the same from their wire form.
    let mut again: Vec<(String, Raw)> = detail_fields(&a.details)
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
    again.push(("type".into(), t("Assumption")));
    again.push(("statement".into(), t("x")));
    let b = atom(&again, AtomId(2), &ctx(EvidenceFacts::default())).unwrap();
    assert_eq!(a.details, b.details);
}

#[test]
fn a_decision_without_decided_at_names_the_field_and_all_errors_come_together() {
    let e = atom(
        &input(&[
            ("type", t("Decision")),
            ("statement", t("Zod is the default validation library")),
            ("confidence", Raw::Number(1.5)),
            ("colour", t("blue")),
        ]),
        AtomId(1),
        &ctx(EvidenceFacts::default()),
    )
    .unwrap_err();
    assert_eq!(
        fields_of(&e),
        ["confidence", "decidedAt", "rationale", "colour"]
    );
    let decided = e.0.iter().find(|e| e.field == "decidedAt").unwrap();
    assert_eq!(
        decided.message,
        "required for a Decision: send when it was decided, ISO 8601 (2025-10-14)"
    );
    assert!(
        e.0[3].message.contains("it takes type, statement"),
        "{}",
        e.0[3].message
    );
    assert!(e.0[3].message.contains("decidedAt"), "{}", e.0[3].message);
}

#[test]
fn a_decision_may_say_accepted_only_with_its_proof() {
    let base = [
        ("type", t("Decision")),
        ("statement", t("Zod is the default validation library")),
        ("predicate", t("default_validation_lib")),
        ("valueSubject", t(&ZOD.to_string())),
        ("about", t(&ZOD.to_string())),
        ("context", t(&ORG.to_string())),
        ("decidedAt", t("2025-10-14")),
        ("rationale", t("consistency and ecosystem fit")),
        ("decisionStatus", t("accepted")),
    ];
    let e = atom(&input(&base), AtomId(1), &ctx(EvidenceFacts::default())).unwrap_err();
    assert_eq!(fields_of(&e), ["decisionStatus"]);
    let adr = EvidenceFacts::of([(ReferenceId(1), RefType::Adr)]);
    let d = atom(&input(&base), AtomId(1), &ctx(adr)).unwrap();
    assert_eq!(d.value, Some(AtomValue::Subject(ZOD)));
    assert_eq!(d.context, Context::In(ORG));
    let mut confirmed = base.to_vec();
    confirmed.push(("confirmedBy", t("Ana (CTO)")));
    let d = atom(
        &input(&confirmed),
        AtomId(1),
        &ctx(EvidenceFacts::default()),
    )
    .unwrap();
    assert_eq!(d.confirmation.map(|c| c.by), Some("Ana (CTO)".to_string()));
}

#[test]
fn every_type_names_its_missing_required_fields() {
    let want: &[(&str, &[&str])] = &[
        ("Fact", &["factKind"]),
        ("Assumption", &["validationMethod"]),
        ("Decision", &["decidedAt", "rationale"]),
        ("Rule", &["severity"]),
        ("Convention", &["area"]),
        ("Best-practice", &["goal"]),
        ("Know-how", &["steps"]),
        ("Pattern", &["problem", "solution"]),
        ("AntiPattern", &["symptoms"]),
        ("Trait", &["polarity", "about"]),
        ("Style", &["polarity", "about"]),
        ("Strength", &["polarity", "about"]),
        ("Preference", &["polarity", "about"]),
        ("Cause", &["causeKind", "effectAtom"]),
    ];
    assert_eq!(want.len(), MemoryAtomType::ALL.len());
    for (ty, fields) in want {
        let e = atom(
            &input(&[("type", t(ty)), ("statement", t("s"))]),
            AtomId(1),
            &ctx(EvidenceFacts::default()),
        )
        .unwrap_err();
        assert_eq!(fields_of(&e), *fields, "{ty}");
        assert!(
            e.0.iter().all(|x| x.message.starts_with("required for")),
            "{ty}: {e}"
        );
    }
}

#[test]
fn enums_bounds_dates_and_references_are_checked() {
    let long = "x".repeat(MAX_STATEMENT + 1);
    let e = atom(
        &input(&[
            ("type", t("Rule")),
            ("statement", t(&long)),
            ("severity", t("sometimes")),
            ("enforcement", t("ci")),
            ("predicate", t("é")),
            ("value", t("v")),
            ("validFrom", t("2025-12-01")),
            ("validTo", t("2025-11-01")),
            (
                "tags",
                Raw::List(vec![t(&"t".repeat(65)), Raw::Number(1.0)]),
            ),
            ("about", t(&SubjectId(0x999).to_string())),
            ("context", t(&ZOD.to_string())),
        ]),
        AtomId(1),
        &ctx(EvidenceFacts::default()),
    )
    .unwrap_err();
    assert_eq!(
        fields_of(&e),
        [
            "statement",
            "predicate",
            "about",
            "context",
            "tags[0]",
            "tags[1]",
            "validTo",
            "severity"
        ]
    );
    let sev = e.0.iter().find(|e| e.field == "severity").unwrap();
    assert_eq!(
        sev.message,
        "unknown severity `sometimes`: send one of must, should, may"
    );
    let ctxe = e.0.iter().find(|e| e.field == "context").unwrap();
    assert!(
        ctxe.message
            .contains("is a Lib; a context must be a Project or Org or Person or Stack"),
        "{}",
        ctxe.message
    );

    let e = atom(
        &input(&[
            ("type", t("Fact")),
            ("statement", t("s")),
            ("factKind", t("observed")),
            ("value", t("3")),
        ]),
        AtomId(1),
        &ctx(EvidenceFacts::default()),
    )
    .unwrap_err();
    assert_eq!(fields_of(&e), ["predicate"]);
    let e = atom(
        &input(&[("statement", t("s"))]),
        AtomId(1),
        &ctx(EvidenceFacts::default()),
    )
    .unwrap_err();
    assert!(e.0[0].message.contains("Best-practice, Know-how"), "{e}");
    // A misspelt type does not turn its fields into unknown ones.
    let e = atom(
        &input(&[
            ("type", t("Desicion")),
            ("statement", t("s")),
            ("decidedAt", t("2025-10-14")),
        ]),
        AtomId(1),
        &ctx(EvidenceFacts::default()),
    )
    .unwrap_err();
    assert_eq!(fields_of(&e), ["type"]);
}

#[test]
fn identity_atoms_are_about_people_or_orgs_and_causes_name_their_effect() {
    let e = atom(
        &input(&[
            ("type", t("Preference")),
            ("statement", t("s")),
            ("polarity", t("strong")),
            ("about", t(&ZOD.to_string())),
        ]),
        AtomId(1),
        &ctx(EvidenceFacts::default()),
    )
    .unwrap_err();
    assert_eq!(fields_of(&e), ["about"]);
    assert!(atom(
        &input(&[
            ("type", t("Preference")),
            ("statement", t("s")),
            ("polarity", t("strong")),
            ("about", t(&ANA.to_string()))
        ]),
        AtomId(1),
        &ctx(EvidenceFacts::default()),
    )
    .is_ok());
    let e = atom(
        &input(&[
            ("type", t("Cause")),
            ("statement", t("s")),
            ("causeKind", t("root")),
            ("effectAtom", t(&AtomId(5).to_string())),
        ]),
        AtomId(1),
        &ctx(EvidenceFacts::default()),
    )
    .unwrap_err();
    assert_eq!(fields_of(&e), ["effectAtom"]);
    let c = atom(
        &input(&[
            ("type", t("Cause")),
            ("statement", t("s")),
            ("causeKind", t("root")),
            ("effectAtom", t(&EFFECT.to_string())),
        ]),
        AtomId(1),
        &ctx(EvidenceFacts::default()),
    )
    .unwrap();
    assert!(matches!(
        c.details,
        AtomDetails::Cause(CauseFields {
            effect: Effect::Atom(EFFECT),
            ..
        })
    ));
}

#[test]
fn subjects_references_and_diary_entries_validate() {
    let known = Known {
        subject: &kinds,
        atom: &atoms,
    };
    let s = subject(
        &input(&[
            ("kind", t("lib")),
            ("name", t("Zod")),
            ("aliases", Raw::texts(&["zod", "colinhacks/zod", "zod"])),
            ("ecosystem", t("ts")),
        ]),
        SubjectId(1),
        &known,
        at("2025-01-01"),
    )
    .unwrap();
    assert_eq!(s.aliases, ["zod", "colinhacks/zod"]);
    let e = subject(
        &input(&[
            ("kind", t("Project")),
            ("org", t(&ZOD.to_string())),
            ("ecosystem", t("ts")),
        ]),
        SubjectId(2),
        &known,
        at("2025-01-01"),
    )
    .unwrap_err();
    assert_eq!(fields_of(&e), ["name", "org", "ecosystem"]);
    let e = reference(
        &input(&[("refType", t("tweet"))]),
        ReferenceId(1),
        at("2025-01-01"),
    )
    .unwrap_err();
    assert_eq!(fields_of(&e), ["refType", "uri"]);
    let r = reference(
        &input(&[
            ("refType", t("release notes")),
            ("uri", t("https://github.com/colinhacks/zod/releases")),
        ]),
        ReferenceId(1),
        at("2025-01-01"),
    )
    .unwrap();
    assert_eq!(r.ref_type, RefType::ReleaseNotes);
    assert_eq!(r.retrieved_at, at("2025-01-01"));
    let e = diary_entry(
        &input(&[("session", t("s1"))]),
        DiaryEntryId(1),
        at("2025-01-01"),
    )
    .unwrap_err();
    assert_eq!(fields_of(&e), ["learnings"]);
    let d = diary_entry(
        &input(&[("learnings", t("cargo test is fast"))]),
        DiaryEntryId(1),
        at("2025-01-01"),
    )
    .unwrap();
    assert_eq!(d.learnings, ["cargo test is fast"]);
}
