//! Validation: turns the fields a caller sent (keys, raw values) into a typed atom,
//! subject, reference or diary entry, or into every error found, each naming its
//! field by its camelCase key (an atom's common ones are in `keys`) and saying what
//! to send. Field names are
//! matched loosely (`decided_at` finds `decidedAt`); unknown names are errors that
//! list the names the type takes. Knows the subjects and atoms that exist only
//! through the lookups it is given.
//!
//! Common atom fields: `type` and `statement` (≤ 4 KB) required; `predicate`
//! (normalised `snake_case`, ≤ 128), `value` (text ≤ 1 KB, number or boolean; needs a
//! predicate) or `valueSubject` (a subject id), `about`, `context` (a Project, Org,
//! Person or Stack id, or `global`), `title` (≤ 255), `summary` (≤ 4 KB), `notes`
//! (≤ 32 KB), `tags` (≤ 50 of ≤ 64), `confidence` (0..1, default 0.5), `importance`
//! (low, med, high; default med), `validFrom` before `validTo`, `reviewIntervalDays`
//! (1..3650), `author`, `confirmedBy` (a name: an explicit confirmation).
//!
//! | type | required | optional |
//! |---|---|---|
//! | Fact | factKind | observedCount, firstObservedAt ≤ lastObservedAt |
//! | Assumption | validationMethod | riskIfWrong, owner, deadline |
//! | Decision | decidedAt, rationale | decisionStatus (default proposed; `accepted` needs a decision-grade reference or confirmedBy), decisionMakers (Person/Org ids), alternatives, consequences, reviewTrigger, enforcement |
//! | Rule | severity | enforcement, exceptions, owner |
//! | Convention | area | examplesGood, examplesBad, severity (default should), owner |
//! | Best-practice | goal | applicability, tradeoffs, evidenceQuality |
//! | Know-how | steps (≥ 1) | inputs, outputs, toolsRequired (subject ids), examples, lastTestedAt |
//! | Pattern | problem, solution | patternContext, forces, tradeoffs, examples |
//! | AntiPattern | symptoms (≥ 1) | whyItHappens, consequences, refactoringPath |
//! | Trait, Style, Strength, Preference | polarity, and `about` a Person or Org | stability, observations |
//! | Cause | causeKind, and effectAtom or effectSubject | mechanism, evidenceQuality |

use std::fmt;

use time::OffsetDateTime;

use super::claim::{ClaimKey, Predicate};
use super::keys;
use super::model::{
    AntiPatternFields, ArtifactFields, AssumptionFields, AtomDetails, AtomId, AtomValue,
    BestPracticeFields, CauseFields, CauseKind, Confirmation, Context, ConventionArea,
    ConventionFields, DecisionFields, DecisionStatus, DiaryEntry, DiaryEntryId, Effect,
    Enforcement, FactFields, FactKind, IdentityFields, KnowHowFields, Level, MemoryAtom,
    MemoryAtomType, MemoryStatus, OrgFields, PatternFields, PersonFields, Polarity, ProjectFields,
    ProjectStatus, RefType, Reference, ReferenceId, RuleFields, Severity, StackFields, StackScope,
    Subject, SubjectDetails, SubjectId, SubjectKind, TemplateFields,
};
use super::promotion::{may_accept, EvidenceFacts, Standing};
use super::raw::Raw;
use super::wire::{loose_eq, parse_time, parse_uuid, UnknownValue};

mod written;
pub use written::*;

mod subject;
pub use subject::*;

mod fields;
use fields::Fields;

/// Longest statement, in bytes.
pub const MAX_STATEMENT: usize = 4096;
/// Longest text value, in bytes: a value is a literal; prose goes in the statement.
pub const MAX_VALUE: usize = 1024;
/// Longest name or title.
pub const MAX_NAME: usize = 255;
/// Longest summary or snippet.
pub const MAX_SUMMARY: usize = 4096;
/// Longest notes, rationale or other free text.
pub const MAX_TEXT: usize = 32 * 1024;
/// Most tags, and longest tag.
pub const MAX_TAGS: usize = 50;
/// Longest tag.
pub const MAX_TAG: usize = 64;
/// Most items in any other list.
pub const MAX_ITEMS: usize = 100;
/// Default confidence when none is sent.
pub const DEFAULT_CONFIDENCE: f64 = 0.5;

/// One problem with one field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    /// The field's wire name (`decidedAt`, `tags[3]`, `[2].scope`).
    pub field: String,
    /// What is wrong and what to send instead.
    pub message: String,
}

impl FieldError {
    /// An error on a field.
    pub fn new(field: impl Into<String>, message: impl Into<String>) -> FieldError {
        FieldError {
            field: field.into(),
            message: message.into(),
        }
    }
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.field, self.message)
    }
}

/// Every problem found in one input, in the order of the fields checked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValidationErrors(pub Vec<FieldError>);

impl ValidationErrors {
    /// Whether `field` has an error.
    pub fn has(&self, field: &str) -> bool {
        self.0.iter().any(|e| e.field == field)
    }
}

impl fmt::Display for ValidationErrors {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            write!(f, "{e}")?;
        }
        Ok(())
    }
}

impl std::error::Error for ValidationErrors {}

/// Looks up what already exists, for checks that need it.
pub struct Known<'a> {
    /// The kind of a subject, or None when there is no such subject.
    pub subject: &'a dyn Fn(SubjectId) -> Option<SubjectKind>,
    /// Whether an atom exists.
    pub atom: &'a dyn Fn(AtomId) -> bool,
}

/// Checks a subject reference: it exists and is of an allowed kind.
fn check_subject(
    f: &mut Fields<'_>,
    known: &Known<'_>,
    field: &str,
    id: u128,
    allowed: &[SubjectKind],
    role: &str,
) -> Option<SubjectId> {
    let id = SubjectId(id);
    match (known.subject)(id) {
        None => {
            f.err(
                field,
                format!("no subject {id}: create it first, or send an existing subject's id"),
            );
            None
        }
        Some(k) if !allowed.is_empty() && !allowed.contains(&k) => {
            let names: Vec<&str> = allowed.iter().map(|k| k.as_wire()).collect();
            f.err(
                field,
                format!(
                    "subject {id} is a {k}; {role} must be a {}",
                    names.join(" or ")
                ),
            );
            None
        }
        Some(_) => Some(id),
    }
}

/// The type-specific field names of an atom type.
pub fn type_fields(t: MemoryAtomType) -> &'static [&'static str] {
    use MemoryAtomType as T;
    match t {
        T::Fact => &[
            "factKind",
            "observedCount",
            "firstObservedAt",
            "lastObservedAt",
        ],
        T::Assumption => &["validationMethod", "riskIfWrong", "owner", "deadline"],
        T::Decision => &[
            "decisionStatus",
            "decidedAt",
            "decisionMakers",
            "rationale",
            "alternatives",
            "consequences",
            "reviewTrigger",
            "enforcement",
        ],
        T::Rule => &["severity", "enforcement", "exceptions", "owner"],
        T::Convention => &["area", "examplesGood", "examplesBad", "severity", "owner"],
        T::BestPractice => &["goal", "applicability", "tradeoffs", "evidenceQuality"],
        T::KnowHow => &[
            "steps",
            "inputs",
            "outputs",
            "toolsRequired",
            "examples",
            "lastTestedAt",
        ],
        T::Pattern => &[
            "problem",
            "patternContext",
            "solution",
            "forces",
            "tradeoffs",
            "examples",
        ],
        T::AntiPattern => &[
            "symptoms",
            "whyItHappens",
            "consequences",
            "refactoringPath",
        ],
        T::Trait | T::Style | T::Strength | T::Preference => {
            &["polarity", "stability", "observations"]
        }
        T::Cause => &[
            "causeKind",
            "effectAtom",
            "effectSubject",
            "mechanism",
            "evidenceQuality",
        ],
    }
}

fn a_or_an(t: MemoryAtomType) -> String {
    let w = t.as_wire();
    let vowel = w.starts_with(['A', 'E', 'I', 'O', 'U']);
    format!("{} {w}", if vowel { "an" } else { "a" })
}

/// What atom validation needs besides the fields.
pub struct AtomContext<'a> {
    /// What exists.
    pub known: Known<'a>,
    /// The evidence the atom arrives with (for a Decision sent as `accepted`).
    pub evidence: EvidenceFacts,
    /// Now: the recording time, and a confirmation's time.
    pub now: OffsetDateTime,
}

fn details(
    f: &mut Fields<'_>,
    t: MemoryAtomType,
    about: Option<SubjectId>,
    known: &Known<'_>,
) -> Option<AtomDetails> {
    use MemoryAtomType as T;
    let d = match t {
        T::Fact => {
            let fact_kind = f.req_enum("factKind", FactKind::parse, FactKind::WIRE);
            let observed_count = f.integer("observedCount", 0, u64::from(u32::MAX));
            let first = f.time("firstObservedAt");
            let last = f.time("lastObservedAt");
            if let (Some(a), Some(b)) = (first, last) {
                if b < a {
                    f.err(
                        "lastObservedAt",
                        "is before firstObservedAt: send a later time",
                    );
                }
            }
            AtomDetails::Fact(FactFields {
                fact_kind: fact_kind?,
                observed_count,
                first_observed_at: first,
                last_observed_at: last,
            })
        }
        T::Assumption => {
            let validation_method = f.req_text(
                "validationMethod",
                MAX_SUMMARY,
                "how to confirm it (validationMethod)",
            );
            AtomDetails::Assumption(AssumptionFields {
                validation_method: validation_method?,
                risk_if_wrong: f.enumeration("riskIfWrong", Level::parse),
                owner: f.text("owner", MAX_NAME),
                deadline: f.time("deadline"),
            })
        }
        T::Decision => {
            let decision_status = f
                .enumeration("decisionStatus", DecisionStatus::parse)
                .unwrap_or(DecisionStatus::Proposed);
            let present = f
                .input
                .iter()
                .any(|(k, v)| loose_eq(k, "decidedAt") && *v != Raw::Null);
            let decided_at = f.time("decidedAt");
            if !present {
                f.required("decidedAt", "when it was decided, ISO 8601 (2025-10-14)");
            }
            let rationale = f.req_text("rationale", MAX_TEXT, "why it was decided (rationale)");
            let makers = f.uuids("decisionMakers");
            let mut decision_makers = Vec::new();
            for (i, m) in makers.into_iter().enumerate() {
                let field = format!("decisionMakers[{i}]");
                decision_makers.extend(check_subject(
                    f,
                    known,
                    &field,
                    m,
                    &[SubjectKind::Person, SubjectKind::Org],
                    "a decision maker",
                ));
            }
            AtomDetails::Decision(DecisionFields {
                decision_status,
                decided_at: decided_at?,
                decision_makers,
                rationale: rationale?,
                alternatives: f.texts("alternatives", MAX_ITEMS, MAX_SUMMARY),
                consequences: f.texts("consequences", MAX_ITEMS, MAX_SUMMARY),
                review_trigger: f.text("reviewTrigger", MAX_SUMMARY),
                enforcement: f.enumeration("enforcement", Enforcement::parse),
            })
        }
        T::Rule => {
            let severity = f.req_enum("severity", Severity::parse, Severity::WIRE);
            AtomDetails::Rule(RuleFields {
                severity: severity?,
                enforcement: f.enumeration("enforcement", Enforcement::parse),
                exceptions: f.text("exceptions", MAX_TEXT),
                owner: f.text("owner", MAX_NAME),
            })
        }
        T::Convention => {
            let area = f.req_enum("area", ConventionArea::parse, ConventionArea::WIRE);
            AtomDetails::Convention(ConventionFields {
                area: area?,
                examples_good: f.texts("examplesGood", MAX_ITEMS, MAX_SUMMARY),
                examples_bad: f.texts("examplesBad", MAX_ITEMS, MAX_SUMMARY),
                severity: f
                    .enumeration("severity", Severity::parse)
                    .unwrap_or(Severity::Should),
                owner: f.text("owner", MAX_NAME),
            })
        }
        T::BestPractice => {
            let goal = f.req_text("goal", MAX_SUMMARY, "why it exists (goal)");
            AtomDetails::BestPractice(BestPracticeFields {
                goal: goal?,
                applicability: f.text("applicability", MAX_SUMMARY),
                tradeoffs: f.text("tradeoffs", MAX_SUMMARY),
                evidence_quality: f.enumeration("evidenceQuality", Level::parse),
            })
        }
        T::KnowHow => {
            let present = f
                .input
                .iter()
                .any(|(k, v)| loose_eq(k, "steps") && *v != Raw::Null);
            let steps = f.texts("steps", MAX_ITEMS, MAX_SUMMARY);
            if !present {
                f.required("steps", "the steps, a list of texts in order");
            } else if steps.is_empty() && !f.errors.iter().any(|e| e.field.starts_with("steps")) {
                f.err("steps", "is empty: send at least one step");
            }
            let tools = f.uuids("toolsRequired");
            let mut tools_required = Vec::new();
            for (i, t) in tools.into_iter().enumerate() {
                let field = format!("toolsRequired[{i}]");
                tools_required.extend(check_subject(f, known, &field, t, &[], "a required tool"));
            }
            AtomDetails::KnowHow(KnowHowFields {
                steps,
                inputs: f.texts("inputs", MAX_ITEMS, MAX_SUMMARY),
                outputs: f.texts("outputs", MAX_ITEMS, MAX_SUMMARY),
                tools_required,
                examples: f.texts("examples", MAX_ITEMS, MAX_SUMMARY),
                last_tested_at: f.time("lastTestedAt"),
            })
        }
        T::Pattern => {
            let problem = f.req_text("problem", MAX_TEXT, "the problem it solves");
            let solution = f.req_text("solution", MAX_TEXT, "the solution");
            AtomDetails::Pattern(PatternFields {
                problem: problem?,
                pattern_context: f.text("patternContext", MAX_TEXT),
                solution: solution?,
                forces: f.texts("forces", MAX_ITEMS, MAX_SUMMARY),
                tradeoffs: f.text("tradeoffs", MAX_SUMMARY),
                examples: f.texts("examples", MAX_ITEMS, MAX_SUMMARY),
            })
        }
        T::AntiPattern => {
            let present = f
                .input
                .iter()
                .any(|(k, v)| loose_eq(k, "symptoms") && *v != Raw::Null);
            let symptoms = f.texts("symptoms", MAX_ITEMS, MAX_SUMMARY);
            if !present {
                f.required("symptoms", "how to recognise it, a list of texts");
            }
            AtomDetails::AntiPattern(AntiPatternFields {
                symptoms,
                why_it_happens: f.text("whyItHappens", MAX_TEXT),
                consequences: f.texts("consequences", MAX_ITEMS, MAX_SUMMARY),
                refactoring_path: f.text("refactoringPath", MAX_TEXT),
            })
        }
        T::Trait | T::Style | T::Strength | T::Preference => {
            let polarity = f.req_enum("polarity", Polarity::parse, Polarity::WIRE);
            if about.is_none() && !f.errors.iter().any(|e| e.field == keys::ABOUT) {
                let msg = format!(
                    "required for {}: send the id of the Person or Org it describes",
                    a_or_an(t)
                );
                f.err(keys::ABOUT, msg);
            }
            let fields = IdentityFields {
                polarity: polarity?,
                stability: f.enumeration("stability", Level::parse),
                observations: f.texts("observations", MAX_ITEMS, MAX_SUMMARY),
            };
            match t {
                T::Trait => AtomDetails::Trait(fields),
                T::Style => AtomDetails::Style(fields),
                T::Strength => AtomDetails::Strength(fields),
                _ => AtomDetails::Preference(fields),
            }
        }
        T::Cause => {
            let cause_kind = f.req_enum("causeKind", CauseKind::parse, CauseKind::WIRE);
            let ea = f.uuid("effectAtom");
            let es = f.uuid("effectSubject");
            let effect = match (ea, es) {
                (Some(a), None) => {
                    if (known.atom)(AtomId(a)) {
                        Some(Effect::Atom(AtomId(a)))
                    } else {
                        f.err(
                            "effectAtom",
                            format!("no atom {}: send an existing atom's id", AtomId(a)),
                        );
                        None
                    }
                }
                (None, Some(s)) => check_subject(f, known, "effectSubject", s, &[], "the effect")
                    .map(Effect::Subject),
                (Some(_), Some(_)) => {
                    f.err(
                        "effectSubject",
                        "send effectAtom or effectSubject, not both",
                    );
                    None
                }
                (None, None) => {
                    if !f.errors.iter().any(|e| e.field.starts_with("effect")) {
                        f.required("effectAtom", "what it explains: effectAtom (an atom id) or effectSubject (a subject id)");
                    }
                    None
                }
            };
            AtomDetails::Cause(CauseFields {
                cause_kind: cause_kind?,
                effect: effect?,
                mechanism: f.text("mechanism", MAX_TEXT),
                evidence_quality: f.enumeration("evidenceQuality", Level::parse),
            })
        }
    };
    Some(d)
}

/// Validates a new atom's fields and builds it as a DRAFT recorded at `ctx.now`, its
/// claim key filled in. Every problem is reported, not just the first.
pub fn atom(
    input: &[(String, Raw)],
    id: AtomId,
    ctx: &AtomContext<'_>,
) -> Result<MemoryAtom, ValidationErrors> {
    let mut f = Fields::new(input, "an atom");
    let type_present = input
        .iter()
        .any(|(k, v)| loose_eq(k, keys::TYPE) && *v != Raw::Null);
    let atom_type = f.enumeration(keys::TYPE, MemoryAtomType::parse);
    if !type_present {
        let m = format!("required: send one of {}", MemoryAtomType::WIRE.join(", "));
        f.err(keys::TYPE, m);
    }
    if let Some(t) = atom_type {
        f.what = a_or_an(t);
    }
    let statement = f.req_text(
        keys::STATEMENT,
        MAX_STATEMENT,
        "the statement in a sentence",
    );
    let predicate = match f.raw(keys::PREDICATE) {
        None => None,
        Some(Raw::Text(s)) => match Predicate::normalise(s) {
            Ok(p) => Some(p),
            Err(e) => {
                f.err(keys::PREDICATE, e.to_string());
                None
            }
        },
        Some(other) => {
            let m = format!("must be a text, not {}", other.shape());
            f.err(keys::PREDICATE, m);
            None
        }
    };
    let has_predicate = input
        .iter()
        .any(|(k, v)| loose_eq(k, keys::PREDICATE) && *v != Raw::Null);
    let mut value = match f.raw(keys::VALUE) {
        None => None,
        Some(Raw::Text(s)) if s.trim().is_empty() => {
            f.err(keys::VALUE, "is empty: send the value or leave it out");
            None
        }
        Some(Raw::Text(s)) if s.trim().len() > MAX_VALUE => {
            f.err(
                keys::VALUE,
                format!(
                    "is {} bytes: send at most {MAX_VALUE}; prose belongs in the statement",
                    s.trim().len()
                ),
            );
            None
        }
        Some(Raw::Text(s)) => Some(AtomValue::Text(s.trim().to_string())),
        Some(Raw::Number(n)) if n.is_finite() => Some(AtomValue::Number(*n)),
        Some(Raw::Bool(b)) => Some(AtomValue::Bool(*b)),
        Some(other) => {
            let m = format!(
                "must be a text, number or boolean, not {}; for a subject send valueSubject",
                other.shape()
            );
            f.err(keys::VALUE, m);
            None
        }
    };
    let value_given = input
        .iter()
        .any(|(k, v)| loose_eq(k, keys::VALUE) && *v != Raw::Null);
    if let Some(s) = f.uuid(keys::VALUE_SUBJECT) {
        if value_given {
            f.err(keys::VALUE_SUBJECT, "send value or valueSubject, not both");
        } else if let Some(s) =
            check_subject(&mut f, &ctx.known, keys::VALUE_SUBJECT, s, &[], "the value")
        {
            value = Some(AtomValue::Subject(s));
        }
    }
    let value_any = value_given
        || input
            .iter()
            .any(|(k, v)| loose_eq(k, keys::VALUE_SUBJECT) && *v != Raw::Null);
    if value_any && !has_predicate {
        f.err(
            keys::PREDICATE,
            "required with a value: send the key the value is for, e.g. latest_version",
        );
    }
    let about = f.uuid(keys::ABOUT).and_then(|s| {
        let kinds: &[SubjectKind] = match atom_type {
            Some(t) if t.is_identity() => &[SubjectKind::Person, SubjectKind::Org],
            _ => &[],
        };
        check_subject(
            &mut f,
            &ctx.known,
            keys::ABOUT,
            s,
            kinds,
            "what an identity atom is about",
        )
    });
    let context = match f.raw(keys::CONTEXT) {
        None => Some(Context::Global),
        Some(Raw::Text(s)) if s.trim().eq_ignore_ascii_case("global") => Some(Context::Global),
        Some(Raw::Text(s)) => match parse_uuid(s) {
            Ok(v) => check_subject(
                &mut f,
                &ctx.known,
                keys::CONTEXT,
                v,
                &[
                    SubjectKind::Project,
                    SubjectKind::Org,
                    SubjectKind::Person,
                    SubjectKind::Stack,
                ],
                "a context",
            )
            .map(Context::In),
            Err(e) => {
                f.err(keys::CONTEXT, format!("{e}, or `global`"));
                None
            }
        },
        Some(other) => {
            let m = format!("must be a subject id or `global`, not {}", other.shape());
            f.err(keys::CONTEXT, m);
            None
        }
    };
    let title = f.text(keys::TITLE, MAX_NAME);
    let summary = f.text(keys::SUMMARY, MAX_SUMMARY);
    let notes = f.text(keys::NOTES, MAX_TEXT);
    let tags = f.tags();
    let confidence = match f.number(keys::CONFIDENCE) {
        Some(c) if (0.0..=1.0).contains(&c) => c,
        Some(c) => {
            f.err(
                keys::CONFIDENCE,
                format!("is {c}: send a number from 0 to 1 (0.7 for fairly sure)"),
            );
            DEFAULT_CONFIDENCE
        }
        None => DEFAULT_CONFIDENCE,
    };
    let importance = f
        .enumeration(keys::IMPORTANCE, Level::parse)
        .unwrap_or(Level::Med);
    let valid_from = f.time(keys::VALID_FROM);
    let valid_to = f.time(keys::VALID_TO);
    if let (Some(a), Some(b)) = (valid_from, valid_to) {
        if b <= a {
            f.err(
                keys::VALID_TO,
                "must be after validFrom: the statement holds from validFrom until validTo",
            );
        }
    }
    let review_interval_days = f
        .integer(keys::REVIEW_INTERVAL_DAYS, 1, 3650)
        .map(|d| d as u32);
    let author = f.text(keys::AUTHOR, MAX_NAME);
    let confirmation = f
        .text(keys::CONFIRMED_BY, MAX_NAME)
        .map(|by| Confirmation { by, at: ctx.now });

    let details = match atom_type {
        Some(t) => {
            let d = details(&mut f, t, about, &ctx.known);
            // A Decision may say `accepted` only with its proof.
            if let Some(AtomDetails::Decision(dec)) = &d {
                let standing = Standing {
                    atom_type: t,
                    decision_status: Some(dec.decision_status),
                    has_author: author.is_some(),
                    confirmation: confirmation.as_ref(),
                    evidence: ctx.evidence,
                };
                if !may_accept(&standing) {
                    f.err(
                        "decisionStatus",
                        format!("accepted needs a decision-grade reference (ADR, policy, PR, meeting note) or {} naming who confirmed; send proposed otherwise", keys::CONFIRMED_BY),
                    );
                }
            }
            d
        }
        None => None,
    };
    let mut allowed: Vec<&str> = keys::COMMON_ATOM_FIELDS.to_vec();
    match atom_type {
        Some(t) => allowed.extend_from_slice(type_fields(t)),
        // Without a type, which fields belong is unknown: the type's error says it all.
        None => {
            for t in MemoryAtomType::ALL {
                for f in type_fields(*t) {
                    if !allowed.contains(f) {
                        allowed.push(f);
                    }
                }
            }
        }
    }
    let errors = f.finish(&allowed);
    if !errors.is_empty() {
        return Err(ValidationErrors(errors));
    }
    let (Some(details), Some(statement), Some(context)) = (details, statement, context) else {
        return Err(ValidationErrors(vec![FieldError::new(
            keys::TYPE,
            "could not be read",
        )]));
    };
    let mut atom = MemoryAtom {
        id,
        details,
        statement,
        predicate,
        value,
        about,
        context,
        status: MemoryStatus::Draft,
        confidence,
        validated_confidence: confidence,
        importance,
        title,
        summary,
        notes,
        resolution: None,
        tags,
        author,
        confirmation,
        valid_from,
        valid_to,
        recorded_at: ctx.now,
        retired_at: None,
        last_validated_at: None,
        next_review_at: None,
        review_interval_days,
        claim_key: None,
    };
    atom.claim_key = ClaimKey::of(&atom).map(|k| k.canonical());
    Ok(atom)
}

#[cfg(test)]
mod tests;
