//! Validation: turns the fields a caller sent (wire names, raw values) into a typed
//! atom, subject, reference or diary entry, or into every error found, each naming
//! its field by its camelCase wire name and saying what to send. Field names are
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

/// Reads named raw fields once each, collecting errors.
struct Fields<'a> {
    input: &'a [(String, Raw)],
    used: Vec<bool>,
    errors: Vec<FieldError>,
    /// What is being validated, for messages (`a Decision`).
    what: String,
}

impl<'a> Fields<'a> {
    fn new(input: &'a [(String, Raw)], what: impl Into<String>) -> Fields<'a> {
        Fields {
            input,
            used: vec![false; input.len()],
            errors: Vec::new(),
            what: what.into(),
        }
    }

    fn err(&mut self, field: &str, message: impl Into<String>) {
        self.errors.push(FieldError::new(field, message));
    }

    /// The value of `name`, Null counting as absent.
    fn raw(&mut self, name: &str) -> Option<&'a Raw> {
        let mut found = None;
        for (i, (k, v)) in self.input.iter().enumerate() {
            if loose_eq(k, name) {
                if self.used.get(i) == Some(&true) {
                    continue;
                }
                if let Some(u) = self.used.get_mut(i) {
                    *u = true;
                }
                if found.is_some() {
                    self.err(name, "given twice: send it once");
                } else {
                    found = Some(v);
                }
            }
        }
        match found {
            Some(Raw::Null) | None => None,
            v => v,
        }
    }

    fn required(&mut self, name: &str, hint: &str) {
        let msg = format!("required for {}: send {hint}", self.what);
        self.err(name, msg);
    }

    fn text(&mut self, name: &str, max: usize) -> Option<String> {
        match self.raw(name)? {
            Raw::Text(s) => {
                let t = s.trim();
                if t.is_empty() {
                    self.err(name, "is empty: send some text or leave it out");
                    None
                } else if t.len() > max {
                    self.err(name, format!("is {} bytes: send at most {max}", t.len()));
                    None
                } else {
                    Some(t.to_string())
                }
            }
            other => {
                let m = format!("must be a text, not {}", other.shape());
                self.err(name, m);
                None
            }
        }
    }

    fn req_text(&mut self, name: &str, max: usize, hint: &str) -> Option<String> {
        let present = self
            .input
            .iter()
            .any(|(k, v)| loose_eq(k, name) && *v != Raw::Null);
        let v = self.text(name, max);
        if !present {
            self.required(name, hint);
        }
        v
    }

    fn enumeration<T>(
        &mut self,
        name: &str,
        parse: fn(&str) -> Result<T, UnknownValue>,
    ) -> Option<T> {
        match self.raw(name)? {
            Raw::Text(s) => match parse(s) {
                Ok(v) => Some(v),
                Err(e) => {
                    self.err(name, e.to_string());
                    None
                }
            },
            other => {
                let m = format!("must be a text, not {}", other.shape());
                self.err(name, m);
                None
            }
        }
    }

    fn req_enum<T>(
        &mut self,
        name: &str,
        parse: fn(&str) -> Result<T, UnknownValue>,
        allowed: &[&str],
    ) -> Option<T> {
        let present = self
            .input
            .iter()
            .any(|(k, v)| loose_eq(k, name) && *v != Raw::Null);
        let v = self.enumeration(name, parse);
        if !present {
            self.required(name, &format!("one of {}", allowed.join(", ")));
        }
        v
    }

    fn number(&mut self, name: &str) -> Option<f64> {
        match self.raw(name)? {
            Raw::Number(n) if n.is_finite() => Some(*n),
            other => {
                let m = format!("must be a number, not {}", other.shape());
                self.err(name, m);
                None
            }
        }
    }

    fn integer(&mut self, name: &str, min: u64, max: u64) -> Option<u64> {
        let n = self.number(name)?;
        if n.fract() != 0.0 || n < min as f64 || n > max as f64 {
            self.err(name, format!("must be a whole number from {min} to {max}"));
            return None;
        }
        Some(n as u64)
    }

    fn time(&mut self, name: &str) -> Option<OffsetDateTime> {
        match self.raw(name)? {
            Raw::Text(s) => match parse_time(s) {
                Ok(t) => Some(t),
                Err(e) => {
                    self.err(name, e.to_string());
                    None
                }
            },
            other => {
                let m = format!(
                    "must be an ISO 8601 text (2025-10-14), not {}",
                    other.shape()
                );
                self.err(name, m);
                None
            }
        }
    }

    fn uuid(&mut self, name: &str) -> Option<u128> {
        match self.raw(name)? {
            Raw::Text(s) => match parse_uuid(s) {
                Ok(v) => Some(v),
                Err(e) => {
                    self.err(name, e.to_string());
                    None
                }
            },
            other => {
                let m = format!("must be an id (a UUID text), not {}", other.shape());
                self.err(name, m);
                None
            }
        }
    }

    /// A list of texts; a single text is read as a list of one.
    fn texts(&mut self, name: &str, max_items: usize, max_len: usize) -> Vec<String> {
        let items: Vec<&Raw> = match self.raw(name) {
            None => return Vec::new(),
            Some(Raw::List(l)) => l.iter().collect(),
            Some(t @ Raw::Text(_)) => vec![t],
            Some(other) => {
                let m = format!("must be a list of texts, not {}", other.shape());
                self.err(name, m);
                return Vec::new();
            }
        };
        if items.len() > max_items {
            self.err(
                name,
                format!("has {} items: send at most {max_items}", items.len()),
            );
            return Vec::new();
        }
        let mut out = Vec::with_capacity(items.len());
        for (i, r) in items.into_iter().enumerate() {
            let field = format!("{name}[{i}]");
            match r {
                Raw::Text(s) if s.trim().is_empty() => self.err(&field, "is empty: send some text"),
                Raw::Text(s) if s.trim().len() > max_len => self.err(
                    &field,
                    format!("is {} bytes: send at most {max_len}", s.trim().len()),
                ),
                Raw::Text(s) => out.push(s.trim().to_string()),
                other => {
                    let m = format!("must be a text, not {}", other.shape());
                    self.err(&field, m);
                }
            }
        }
        out
    }

    fn uuids(&mut self, name: &str) -> Vec<u128> {
        let items: Vec<&Raw> = match self.raw(name) {
            None => return Vec::new(),
            Some(Raw::List(l)) => l.iter().collect(),
            Some(t @ Raw::Text(_)) => vec![t],
            Some(other) => {
                let m = format!("must be a list of ids, not {}", other.shape());
                self.err(name, m);
                return Vec::new();
            }
        };
        if items.len() > MAX_ITEMS {
            self.err(
                name,
                format!("has {} items: send at most {MAX_ITEMS}", items.len()),
            );
            return Vec::new();
        }
        let mut out = Vec::new();
        for (i, r) in items.into_iter().enumerate() {
            let field = format!("{name}[{i}]");
            match r {
                Raw::Text(s) => match parse_uuid(s) {
                    Ok(v) => out.push(v),
                    Err(e) => self.err(&field, e.to_string()),
                },
                other => {
                    let m = format!("must be an id, not {}", other.shape());
                    self.err(&field, m);
                }
            }
        }
        out
    }

    fn tags(&mut self) -> Vec<String> {
        let tags = self.texts("tags", MAX_TAGS, MAX_TAG);
        let mut out: Vec<String> = Vec::with_capacity(tags.len());
        for t in tags {
            if !out.contains(&t) {
                out.push(t);
            }
        }
        out
    }

    /// Reports the names nobody read, listing the ones this input takes.
    fn finish(mut self, allowed: &[&str]) -> Vec<FieldError> {
        for (i, (k, _)) in self.input.iter().enumerate() {
            if self.used.get(i) != Some(&true) && !allowed.iter().any(|a| loose_eq(a, k)) {
                let msg = format!(
                    "unknown field for {}: it takes {}",
                    self.what,
                    allowed.join(", ")
                );
                self.errors.push(FieldError::new(k.clone(), msg));
            }
        }
        self.errors
    }
}

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

const COMMON_ATOM_FIELDS: &[&str] = &[
    "type",
    "statement",
    "predicate",
    "value",
    "valueSubject",
    "about",
    "context",
    "title",
    "summary",
    "notes",
    "tags",
    "confidence",
    "importance",
    "validFrom",
    "validTo",
    "reviewIntervalDays",
    "author",
    "confirmedBy",
];

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
            if about.is_none() && !f.errors.iter().any(|e| e.field == "about") {
                let msg = format!(
                    "required for {}: send the id of the Person or Org it describes",
                    a_or_an(t)
                );
                f.err("about", msg);
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
        .any(|(k, v)| loose_eq(k, "type") && *v != Raw::Null);
    let atom_type = f.enumeration("type", MemoryAtomType::parse);
    if !type_present {
        let m = format!("required: send one of {}", MemoryAtomType::WIRE.join(", "));
        f.err("type", m);
    }
    if let Some(t) = atom_type {
        f.what = a_or_an(t);
    }
    let statement = f.req_text("statement", MAX_STATEMENT, "the statement in a sentence");
    let predicate = match f.raw("predicate") {
        None => None,
        Some(Raw::Text(s)) => match Predicate::normalise(s) {
            Ok(p) => Some(p),
            Err(e) => {
                f.err("predicate", e.to_string());
                None
            }
        },
        Some(other) => {
            let m = format!("must be a text, not {}", other.shape());
            f.err("predicate", m);
            None
        }
    };
    let has_predicate = input
        .iter()
        .any(|(k, v)| loose_eq(k, "predicate") && *v != Raw::Null);
    let mut value = match f.raw("value") {
        None => None,
        Some(Raw::Text(s)) if s.trim().is_empty() => {
            f.err("value", "is empty: send the value or leave it out");
            None
        }
        Some(Raw::Text(s)) if s.trim().len() > MAX_VALUE => {
            f.err(
                "value",
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
            f.err("value", m);
            None
        }
    };
    let value_given = input
        .iter()
        .any(|(k, v)| loose_eq(k, "value") && *v != Raw::Null);
    if let Some(s) = f.uuid("valueSubject") {
        if value_given {
            f.err("valueSubject", "send value or valueSubject, not both");
        } else if let Some(s) =
            check_subject(&mut f, &ctx.known, "valueSubject", s, &[], "the value")
        {
            value = Some(AtomValue::Subject(s));
        }
    }
    let value_any = value_given
        || input
            .iter()
            .any(|(k, v)| loose_eq(k, "valueSubject") && *v != Raw::Null);
    if value_any && !has_predicate {
        f.err(
            "predicate",
            "required with a value: send the key the value is for, e.g. latest_version",
        );
    }
    let about = f.uuid("about").and_then(|s| {
        let kinds: &[SubjectKind] = match atom_type {
            Some(t) if t.is_identity() => &[SubjectKind::Person, SubjectKind::Org],
            _ => &[],
        };
        check_subject(
            &mut f,
            &ctx.known,
            "about",
            s,
            kinds,
            "what an identity atom is about",
        )
    });
    let context = match f.raw("context") {
        None => Some(Context::Global),
        Some(Raw::Text(s)) if s.trim().eq_ignore_ascii_case("global") => Some(Context::Global),
        Some(Raw::Text(s)) => match parse_uuid(s) {
            Ok(v) => check_subject(
                &mut f,
                &ctx.known,
                "context",
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
                f.err("context", format!("{e}, or `global`"));
                None
            }
        },
        Some(other) => {
            let m = format!("must be a subject id or `global`, not {}", other.shape());
            f.err("context", m);
            None
        }
    };
    let title = f.text("title", MAX_NAME);
    let summary = f.text("summary", MAX_SUMMARY);
    let notes = f.text("notes", MAX_TEXT);
    let tags = f.tags();
    let confidence = match f.number("confidence") {
        Some(c) if (0.0..=1.0).contains(&c) => c,
        Some(c) => {
            f.err(
                "confidence",
                format!("is {c}: send a number from 0 to 1 (0.7 for fairly sure)"),
            );
            DEFAULT_CONFIDENCE
        }
        None => DEFAULT_CONFIDENCE,
    };
    let importance = f
        .enumeration("importance", Level::parse)
        .unwrap_or(Level::Med);
    let valid_from = f.time("validFrom");
    let valid_to = f.time("validTo");
    if let (Some(a), Some(b)) = (valid_from, valid_to) {
        if b <= a {
            f.err(
                "validTo",
                "must be after validFrom: the statement holds from validFrom until validTo",
            );
        }
    }
    let review_interval_days = f.integer("reviewIntervalDays", 1, 3650).map(|d| d as u32);
    let author = f.text("author", MAX_NAME);
    let confirmation = f
        .text("confirmedBy", MAX_NAME)
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
                        "accepted needs a decision-grade reference (ADR, policy, PR, meeting note) or confirmedBy naming who confirmed; send proposed otherwise",
                    );
                }
            }
            d
        }
        None => None,
    };
    let mut allowed: Vec<&str> = COMMON_ATOM_FIELDS.to_vec();
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
            "type",
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

const COMMON_SUBJECT_FIELDS: &[&str] = &["kind", "name", "aliases", "title", "summary", "tags"];

/// The kind-specific field names of a subject kind.
pub fn subject_fields(k: SubjectKind) -> &'static [&'static str] {
    use SubjectKind as K;
    match k {
        K::Org => &["domain", "units", "policiesIndex"],
        K::Project => &[
            "status",
            "startDate",
            "endDate",
            "org",
            "repoLinks",
            "docsLinks",
            "domain",
            "orchestratorProject",
        ],
        K::Person => &["roles", "org", "teams", "handles", "timezone"],
        K::Tool | K::Lib | K::Service | K::Model | K::Dataset => {
            &["ecosystem", "category", "repo", "homepage"]
        }
        K::Stack => &["description", "scope"],
        K::Template => &[
            "purpose",
            "location",
            "inputs",
            "outputs",
            "version",
            "maintainer",
        ],
    }
}

/// Validates a new subject's fields (`kind` and `name` required, `aliases` ≤ 50 of
/// ≤ 255, and the fields of its kind) and builds it, created at `now`.
pub fn subject(
    input: &[(String, Raw)],
    id: SubjectId,
    known: &Known<'_>,
    now: OffsetDateTime,
) -> Result<Subject, ValidationErrors> {
    let mut f = Fields::new(input, "a subject");
    let present = input
        .iter()
        .any(|(k, v)| loose_eq(k, "kind") && *v != Raw::Null);
    let kind = f.enumeration("kind", SubjectKind::parse);
    if !present {
        let m = format!("required: send one of {}", SubjectKind::WIRE.join(", "));
        f.err("kind", m);
    }
    if let Some(k) = kind {
        f.what = format!("a {k}");
    }
    let name = f.req_text("name", MAX_NAME, "its canonical name");
    let mut aliases: Vec<String> = Vec::new();
    for a in f.texts("aliases", MAX_TAGS, MAX_NAME) {
        if !aliases.contains(&a) && Some(&a) != name.as_ref() {
            aliases.push(a);
        }
    }
    let title = f.text("title", MAX_NAME);
    let summary = f.text("summary", MAX_SUMMARY);
    let tags = f.tags();
    let org_kinds = [SubjectKind::Org];
    let details = match kind {
        None => SubjectDetails::None,
        Some(SubjectKind::Org) => SubjectDetails::Org(OrgFields {
            domain: f.text("domain", MAX_NAME),
            units: f.texts("units", MAX_ITEMS, MAX_NAME),
            policies_index: f.text("policiesIndex", MAX_SUMMARY),
        }),
        Some(SubjectKind::Project) => {
            let start_date = f.time("startDate");
            let end_date = f.time("endDate");
            if let (Some(a), Some(b)) = (start_date, end_date) {
                if b < a {
                    f.err("endDate", "is before startDate: send a later date");
                }
            }
            let org = f
                .uuid("org")
                .and_then(|o| check_subject(&mut f, known, "org", o, &org_kinds, "org"));
            SubjectDetails::Project(ProjectFields {
                status: f.enumeration("status", ProjectStatus::parse),
                start_date,
                end_date,
                org,
                repo_links: f.texts("repoLinks", MAX_ITEMS, MAX_SUMMARY),
                docs_links: f.texts("docsLinks", MAX_ITEMS, MAX_SUMMARY),
                domain: f.text("domain", MAX_NAME),
                orchestrator_project: f.uuid("orchestratorProject"),
            })
        }
        Some(SubjectKind::Person) => {
            let org = f
                .uuid("org")
                .and_then(|o| check_subject(&mut f, known, "org", o, &org_kinds, "org"));
            SubjectDetails::Person(PersonFields {
                roles: f.texts("roles", MAX_ITEMS, MAX_NAME),
                org,
                teams: f.texts("teams", MAX_ITEMS, MAX_NAME),
                handles: f.texts("handles", MAX_ITEMS, MAX_NAME),
                timezone: f.text("timezone", MAX_NAME),
            })
        }
        Some(SubjectKind::Stack) => SubjectDetails::Stack(StackFields {
            description: f.text("description", MAX_SUMMARY),
            scope: f.enumeration("scope", StackScope::parse),
        }),
        Some(SubjectKind::Template) => {
            let maintainer = f.uuid("maintainer").and_then(|m| {
                check_subject(
                    &mut f,
                    known,
                    "maintainer",
                    m,
                    &[SubjectKind::Person, SubjectKind::Org],
                    "the maintainer",
                )
            });
            SubjectDetails::Template(TemplateFields {
                purpose: f.text("purpose", MAX_SUMMARY),
                location: f.text("location", MAX_SUMMARY),
                inputs: f.texts("inputs", MAX_ITEMS, MAX_SUMMARY),
                outputs: f.texts("outputs", MAX_ITEMS, MAX_SUMMARY),
                version: f.text("version", MAX_NAME),
                maintainer,
            })
        }
        Some(_) => SubjectDetails::Artifact(ArtifactFields {
            ecosystem: f.text("ecosystem", MAX_NAME),
            category: f.text("category", MAX_NAME),
            repo: f.text("repo", MAX_SUMMARY),
            homepage: f.text("homepage", MAX_SUMMARY),
        }),
    };
    let mut allowed: Vec<&str> = COMMON_SUBJECT_FIELDS.to_vec();
    match kind {
        Some(k) => allowed.extend_from_slice(subject_fields(k)),
        None => {
            for k in SubjectKind::ALL {
                for f in subject_fields(*k) {
                    if !allowed.contains(f) {
                        allowed.push(f);
                    }
                }
            }
        }
    }
    let errors = f.finish(&allowed);
    match (errors.is_empty(), kind, name) {
        (true, Some(kind), Some(name)) => Ok(Subject {
            id,
            kind,
            name,
            aliases,
            title,
            summary,
            tags,
            created_at: now,
            updated_at: now,
            merged_into: None,
            details,
        }),
        (_, _, _) => Err(ValidationErrors(errors)),
    }
}

/// Validates a new reference (`refType` required; `title` or `uri` required;
/// `retrievedAt` defaults to `now`).
pub fn reference(
    input: &[(String, Raw)],
    id: ReferenceId,
    now: OffsetDateTime,
) -> Result<Reference, ValidationErrors> {
    let mut f = Fields::new(input, "a reference");
    let ref_type = f.req_enum("refType", RefType::parse, RefType::WIRE);
    let title = f.text("title", MAX_NAME);
    let uri = f.text("uri", 2048);
    let title_given = input
        .iter()
        .any(|(k, v)| (loose_eq(k, "title") || loose_eq(k, "uri")) && *v != Raw::Null);
    if !title_given {
        f.err(
            "uri",
            "a reference needs a uri or a title: send where it is, or what it is called",
        );
    }
    let r = Reference {
        id,
        ref_type: ref_type.unwrap_or(RefType::Chat),
        title,
        uri,
        authors: f.texts("authors", MAX_ITEMS, MAX_NAME),
        published_at: f.time("publishedAt"),
        retrieved_at: f.time("retrievedAt").unwrap_or(now),
        snippet: f.text("snippet", MAX_SUMMARY),
        hash: f.text("hash", 128),
    };
    let errors = f.finish(&[
        "refType",
        "title",
        "uri",
        "authors",
        "publishedAt",
        "retrievedAt",
        "snippet",
        "hash",
    ]);
    if errors.is_empty() {
        Ok(r)
    } else {
        Err(ValidationErrors(errors))
    }
}

/// Validates a diary entry (`accomplishments`, `decisions`, `challenges`,
/// `learnings`: lists of texts, at least one item in all; `session` optional).
pub fn diary_entry(
    input: &[(String, Raw)],
    id: DiaryEntryId,
    now: OffsetDateTime,
) -> Result<DiaryEntry, ValidationErrors> {
    let mut f = Fields::new(input, "a diary entry");
    let e = DiaryEntry {
        id,
        recorded_at: now,
        session: f.text("session", MAX_NAME),
        accomplishments: f.texts("accomplishments", MAX_ITEMS, MAX_SUMMARY),
        decisions: f.texts("decisions", MAX_ITEMS, MAX_SUMMARY),
        challenges: f.texts("challenges", MAX_ITEMS, MAX_SUMMARY),
        learnings: f.texts("learnings", MAX_ITEMS, MAX_SUMMARY),
    };
    let empty = e.accomplishments.is_empty()
        && e.decisions.is_empty()
        && e.challenges.is_empty()
        && e.learnings.is_empty();
    if empty && f.errors.is_empty() {
        f.err(
            "learnings",
            "the entry is empty: send at least one accomplishment, decision, challenge or learning",
        );
    }
    let errors = f.finish(&[
        "session",
        "accomplishments",
        "decisions",
        "challenges",
        "learnings",
    ]);
    if errors.is_empty() {
        Ok(e)
    } else {
        Err(ValidationErrors(errors))
    }
}

/// Reads back the type-specific fields of a stored atom (as [`detail_fields`] wrote
/// them): the same checks as on input, except that the subjects and atoms they name
/// are taken as they are (they existed when the atom was recorded; a subject merged
/// since still resolves through its survivor). `decision_status`, which moves, is the
/// stored column's, not the fields'.
pub fn stored_details(
    t: MemoryAtomType,
    about: Option<SubjectId>,
    fields: &[(String, Raw)],
    decision_status: Option<DecisionStatus>,
) -> Result<AtomDetails, ValidationErrors> {
    let any_subject = |_: SubjectId| Some(SubjectKind::Person);
    let any_atom = |_: AtomId| true;
    let known = Known {
        subject: &any_subject,
        atom: &any_atom,
    };
    let mut f = Fields::new(fields, a_or_an(t));
    // An identity atom's `about` is checked against its kind on input only.
    let about = about.or(Some(SubjectId(0)));
    let d = details(&mut f, t, about, &known);
    let errors = f.finish(type_fields(t));
    match d {
        Some(mut d) if errors.is_empty() => {
            if let (AtomDetails::Decision(x), Some(s)) = (&mut d, decision_status) {
                x.decision_status = s;
            }
            Ok(d)
        }
        _ => Err(ValidationErrors(errors)),
    }
}

/// Writes a subject's kind-specific fields as wire-named raw values, the form
/// [`subject`] reads.
pub fn subject_detail_fields(d: &SubjectDetails) -> Vec<(&'static str, Raw)> {
    use super::wire::format_time;
    let mut v: Vec<(&'static str, Raw)> = Vec::new();
    let text = |v: &mut Vec<(&'static str, Raw)>, k: &'static str, s: &Option<String>| {
        if let Some(s) = s {
            v.push((k, Raw::text(s)));
        }
    };
    let list = |v: &mut Vec<(&'static str, Raw)>, k: &'static str, l: &[String]| {
        if !l.is_empty() {
            v.push((k, Raw::texts(l)));
        }
    };
    let time = |v: &mut Vec<(&'static str, Raw)>, k: &'static str, t: &Option<OffsetDateTime>| {
        if let Some(t) = t {
            v.push((k, Raw::Text(format_time(*t))));
        }
    };
    let id = |v: &mut Vec<(&'static str, Raw)>, k: &'static str, s: &Option<SubjectId>| {
        if let Some(s) = s {
            v.push((k, Raw::Text(s.to_string())));
        }
    };
    match d {
        SubjectDetails::None => {}
        SubjectDetails::Org(x) => {
            text(&mut v, "domain", &x.domain);
            list(&mut v, "units", &x.units);
            text(&mut v, "policiesIndex", &x.policies_index);
        }
        SubjectDetails::Project(x) => {
            if let Some(s) = x.status {
                v.push(("status", Raw::text(s.as_wire())));
            }
            time(&mut v, "startDate", &x.start_date);
            time(&mut v, "endDate", &x.end_date);
            id(&mut v, "org", &x.org);
            list(&mut v, "repoLinks", &x.repo_links);
            list(&mut v, "docsLinks", &x.docs_links);
            text(&mut v, "domain", &x.domain);
            if let Some(p) = x.orchestrator_project {
                v.push(("orchestratorProject", Raw::Text(SubjectId(p).to_string())));
            }
        }
        SubjectDetails::Person(x) => {
            list(&mut v, "roles", &x.roles);
            id(&mut v, "org", &x.org);
            list(&mut v, "teams", &x.teams);
            list(&mut v, "handles", &x.handles);
            text(&mut v, "timezone", &x.timezone);
        }
        SubjectDetails::Artifact(x) => {
            text(&mut v, "ecosystem", &x.ecosystem);
            text(&mut v, "category", &x.category);
            text(&mut v, "repo", &x.repo);
            text(&mut v, "homepage", &x.homepage);
        }
        SubjectDetails::Stack(x) => {
            text(&mut v, "description", &x.description);
            if let Some(s) = x.scope {
                v.push(("scope", Raw::text(s.as_wire())));
            }
        }
        SubjectDetails::Template(x) => {
            text(&mut v, "purpose", &x.purpose);
            text(&mut v, "location", &x.location);
            list(&mut v, "inputs", &x.inputs);
            list(&mut v, "outputs", &x.outputs);
            text(&mut v, "version", &x.version);
            id(&mut v, "maintainer", &x.maintainer);
        }
    }
    v
}

/// Reads back a stored subject's kind-specific fields (as [`subject_detail_fields`]
/// wrote them), taking the subjects they name as they are.
pub fn stored_subject_details(
    kind: SubjectKind,
    fields: &[(String, Raw)],
) -> Result<SubjectDetails, ValidationErrors> {
    let any_subject = |_: SubjectId| Some(SubjectKind::Org);
    let any_atom = |_: AtomId| true;
    let known = Known {
        subject: &any_subject,
        atom: &any_atom,
    };
    let mut input: Vec<(String, Raw)> = vec![
        ("kind".into(), Raw::text(kind.as_wire())),
        ("name".into(), Raw::text("stored")),
    ];
    input.extend(fields.iter().cloned());
    let epoch = OffsetDateTime::UNIX_EPOCH;
    subject(&input, SubjectId(0), &known, epoch).map(|s| s.details)
}

/// Writes an atom's type-specific fields back as wire-named raw values, the form
/// [`atom`] reads: the store can keep them in one column and the tools can answer
/// them as they were sent.
pub fn detail_fields(d: &AtomDetails) -> Vec<(&'static str, Raw)> {
    use super::wire::format_time;
    let mut v: Vec<(&'static str, Raw)> = Vec::new();
    let text = |v: &mut Vec<(&'static str, Raw)>, k: &'static str, s: &Option<String>| {
        if let Some(s) = s {
            v.push((k, Raw::text(s)));
        }
    };
    let list = |v: &mut Vec<(&'static str, Raw)>, k: &'static str, l: &[String]| {
        if !l.is_empty() {
            v.push((k, Raw::texts(l)));
        }
    };
    let time = |v: &mut Vec<(&'static str, Raw)>, k: &'static str, t: &Option<OffsetDateTime>| {
        if let Some(t) = t {
            v.push((k, Raw::Text(format_time(*t))));
        }
    };
    let wire = |s: &str| Raw::text(s);
    match d {
        AtomDetails::Fact(x) => {
            v.push(("factKind", wire(x.fact_kind.as_wire())));
            if let Some(n) = x.observed_count {
                v.push(("observedCount", Raw::Number(n as f64)));
            }
            time(&mut v, "firstObservedAt", &x.first_observed_at);
            time(&mut v, "lastObservedAt", &x.last_observed_at);
        }
        AtomDetails::Assumption(x) => {
            v.push(("validationMethod", Raw::text(&x.validation_method)));
            if let Some(r) = x.risk_if_wrong {
                v.push(("riskIfWrong", wire(r.as_wire())));
            }
            text(&mut v, "owner", &x.owner);
            time(&mut v, "deadline", &x.deadline);
        }
        AtomDetails::Decision(x) => {
            v.push(("decisionStatus", wire(x.decision_status.as_wire())));
            v.push(("decidedAt", Raw::Text(format_time(x.decided_at))));
            if !x.decision_makers.is_empty() {
                v.push((
                    "decisionMakers",
                    Raw::List(
                        x.decision_makers
                            .iter()
                            .map(|s| Raw::Text(s.to_string()))
                            .collect(),
                    ),
                ));
            }
            v.push(("rationale", Raw::text(&x.rationale)));
            list(&mut v, "alternatives", &x.alternatives);
            list(&mut v, "consequences", &x.consequences);
            text(&mut v, "reviewTrigger", &x.review_trigger);
            if let Some(e) = x.enforcement {
                v.push(("enforcement", wire(e.as_wire())));
            }
        }
        AtomDetails::Rule(x) => {
            v.push(("severity", wire(x.severity.as_wire())));
            if let Some(e) = x.enforcement {
                v.push(("enforcement", wire(e.as_wire())));
            }
            text(&mut v, "exceptions", &x.exceptions);
            text(&mut v, "owner", &x.owner);
        }
        AtomDetails::Convention(x) => {
            v.push(("area", wire(x.area.as_wire())));
            list(&mut v, "examplesGood", &x.examples_good);
            list(&mut v, "examplesBad", &x.examples_bad);
            v.push(("severity", wire(x.severity.as_wire())));
            text(&mut v, "owner", &x.owner);
        }
        AtomDetails::BestPractice(x) => {
            v.push(("goal", Raw::text(&x.goal)));
            text(&mut v, "applicability", &x.applicability);
            text(&mut v, "tradeoffs", &x.tradeoffs);
            if let Some(q) = x.evidence_quality {
                v.push(("evidenceQuality", wire(q.as_wire())));
            }
        }
        AtomDetails::KnowHow(x) => {
            v.push(("steps", Raw::texts(&x.steps)));
            list(&mut v, "inputs", &x.inputs);
            list(&mut v, "outputs", &x.outputs);
            if !x.tools_required.is_empty() {
                v.push((
                    "toolsRequired",
                    Raw::List(
                        x.tools_required
                            .iter()
                            .map(|s| Raw::Text(s.to_string()))
                            .collect(),
                    ),
                ));
            }
            list(&mut v, "examples", &x.examples);
            time(&mut v, "lastTestedAt", &x.last_tested_at);
        }
        AtomDetails::Pattern(x) => {
            v.push(("problem", Raw::text(&x.problem)));
            text(&mut v, "patternContext", &x.pattern_context);
            v.push(("solution", Raw::text(&x.solution)));
            list(&mut v, "forces", &x.forces);
            text(&mut v, "tradeoffs", &x.tradeoffs);
            list(&mut v, "examples", &x.examples);
        }
        AtomDetails::AntiPattern(x) => {
            v.push(("symptoms", Raw::texts(&x.symptoms)));
            text(&mut v, "whyItHappens", &x.why_it_happens);
            list(&mut v, "consequences", &x.consequences);
            text(&mut v, "refactoringPath", &x.refactoring_path);
        }
        AtomDetails::Trait(x)
        | AtomDetails::Style(x)
        | AtomDetails::Strength(x)
        | AtomDetails::Preference(x) => {
            v.push(("polarity", wire(x.polarity.as_wire())));
            if let Some(s) = x.stability {
                v.push(("stability", wire(s.as_wire())));
            }
            list(&mut v, "observations", &x.observations);
        }
        AtomDetails::Cause(x) => {
            v.push(("causeKind", wire(x.cause_kind.as_wire())));
            match x.effect {
                Effect::Atom(a) => v.push(("effectAtom", Raw::Text(a.to_string()))),
                Effect::Subject(s) => v.push(("effectSubject", Raw::Text(s.to_string()))),
            }
            text(&mut v, "mechanism", &x.mechanism);
            if let Some(q) = x.evidence_quality {
                v.push(("evidenceQuality", wire(q.as_wire())));
            }
        }
    }
    v
}

#[cfg(test)]
mod tests {
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
}
