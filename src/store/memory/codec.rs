//! The stored form of the memory's own fields: an atom's type-specific fields and a
//! subject's kind-specific fields, each kept as one JSON text column, and the lists
//! (tags, authors, a diary entry's items) kept as JSON arrays.
//!
//! The form is the store's, not the wire's: the structs below are its whole
//! definition, written and read with `serde_json`, and a row is read back as it was
//! written, never re-checked against the input limits. A limit tightened later (a
//! statement's length, a list's size) refuses new input only; every stored atom stays
//! readable. Each object carries `v`, the version of its form ([`VERSION`]); rows
//! written before the field existed have none and read as version 0, whose members
//! are the same. A change of form bumps [`VERSION`] and reads each older one.
//!
//! Enum values and ids are stored in their canonical spelling (`as_wire`, the dashed
//! UUID) and read with the core's parsers; times as RFC 3339 UTC with milliseconds.
//! A text that does not decode is an [`Error::Corrupt`] naming what was wrong and
//! where (serde_json's line and column), never a panic.

use std::fmt;
use std::marker::PhantomData;

use serde::de::{self, Deserializer, Visitor};
use serde::{Deserialize, Serialize, Serializer};
use time::OffsetDateTime;

use crate::domain::memory::model::{
    AntiPatternFields, ArtifactFields, AssumptionFields, AtomDetails, AtomId, BestPracticeFields,
    CauseFields, CauseKind, ConventionArea, ConventionFields, DecisionFields, DecisionStatus,
    Effect, Enforcement, FactFields, FactKind, IdentityFields, KnowHowFields, Level,
    MemoryAtomType, OrgFields, PatternFields, PersonFields, Polarity, ProjectFields, ProjectStatus,
    RuleFields, Severity, StackFields, StackScope, SubjectDetails, SubjectId, SubjectKind,
    TemplateFields,
};
use crate::domain::memory::wire::{format_time, parse_time};
use crate::store::{Error, Result};

/// The version of the stored form this Cairn writes, and the newest it reads.
pub const VERSION: u32 = 1;

/// A value stored as one string: its canonical spelling, read back by its parser.
trait Spelled: Sized {
    /// What the string must be, for errors.
    const WHAT: &'static str;
    fn spell(&self) -> String;
    fn read(s: &str) -> std::result::Result<Self, String>;
}

macro_rules! spelled_enum {
    ($($t:ty),+ $(,)?) => {$(
        impl Spelled for $t {
            const WHAT: &'static str = stringify!($t);
            fn spell(&self) -> String {
                self.as_wire().to_string()
            }
            fn read(s: &str) -> std::result::Result<Self, String> {
                <$t>::parse(s).map_err(|e| e.to_string())
            }
        }
    )+};
}

spelled_enum!(
    FactKind,
    Level,
    DecisionStatus,
    Enforcement,
    Severity,
    ConventionArea,
    Polarity,
    CauseKind,
    ProjectStatus,
    StackScope,
);

macro_rules! spelled_id {
    ($($t:ty),+ $(,)?) => {$(
        impl Spelled for $t {
            const WHAT: &'static str = "a UUID";
            fn spell(&self) -> String {
                self.to_string()
            }
            fn read(s: &str) -> std::result::Result<Self, String> {
                <$t>::parse(s).map_err(|e| e.to_string())
            }
        }
    )+};
}

spelled_id!(SubjectId, AtomId);

impl Spelled for OffsetDateTime {
    const WHAT: &'static str = "an RFC 3339 time";
    fn spell(&self) -> String {
        format_time(*self)
    }
    fn read(s: &str) -> std::result::Result<Self, String> {
        parse_time(s).map_err(|e| e.to_string())
    }
}

/// A [`Spelled`] value in a stored struct.
struct S<T>(T);

impl<T: Spelled> Serialize for S<T> {
    fn serialize<Z: Serializer>(&self, z: Z) -> std::result::Result<Z::Ok, Z::Error> {
        z.serialize_str(&self.0.spell())
    }
}

impl<'de, T: Spelled> Deserialize<'de> for S<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct V<T>(PhantomData<T>);
        impl<'v, T: Spelled> Visitor<'v> for V<T> {
            type Value = S<T>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                write!(f, "{} as a string", T::WHAT)
            }
            fn visit_str<E: de::Error>(self, s: &str) -> std::result::Result<S<T>, E> {
                T::read(s).map(S).map_err(E::custom)
            }
        }
        d.deserialize_str(V(PhantomData))
    }
}

fn opt<T: Spelled + Copy>(v: &Option<T>) -> Option<S<T>> {
    v.map(S)
}

fn list<T: Spelled + Copy>(v: &[T]) -> Vec<S<T>> {
    v.iter().copied().map(S).collect()
}

fn un<T>(v: Option<S<T>>) -> Option<T> {
    v.map(|s| s.0)
}

fn unlist<T>(v: Vec<S<T>>) -> Vec<T> {
    v.into_iter().map(|s| s.0).collect()
}

/// A Fact's fields.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Fact {
    #[serde(default)]
    v: u32,
    fact_kind: S<FactKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    observed_count: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    first_observed_at: Option<S<OffsetDateTime>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_observed_at: Option<S<OffsetDateTime>>,
}

/// An Assumption's fields.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Assumption {
    #[serde(default)]
    v: u32,
    validation_method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    risk_if_wrong: Option<S<Level>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    deadline: Option<S<OffsetDateTime>>,
}

/// A Decision's fields but its status, which moves and is the row's `decision_status` column.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Decision {
    #[serde(default)]
    v: u32,
    decided_at: S<OffsetDateTime>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    decision_makers: Vec<S<SubjectId>>,
    rationale: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    alternatives: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    consequences: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    review_trigger: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    enforcement: Option<S<Enforcement>>,
}

/// A Rule's fields.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Rule {
    #[serde(default)]
    v: u32,
    severity: S<Severity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    enforcement: Option<S<Enforcement>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    exceptions: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
}

/// A Convention's fields.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Convention {
    #[serde(default)]
    v: u32,
    area: S<ConventionArea>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    examples_good: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    examples_bad: Vec<String>,
    severity: S<Severity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    owner: Option<String>,
}

/// A Best-practice's fields.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct BestPractice {
    #[serde(default)]
    v: u32,
    goal: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    applicability: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tradeoffs: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    evidence_quality: Option<S<Level>>,
}

/// A Know-how's fields.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct KnowHow {
    #[serde(default)]
    v: u32,
    #[serde(default)]
    steps: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    inputs: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    outputs: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tools_required: Vec<S<SubjectId>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    examples: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    last_tested_at: Option<S<OffsetDateTime>>,
}

/// A Pattern's fields.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Pattern {
    #[serde(default)]
    v: u32,
    problem: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pattern_context: Option<String>,
    solution: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    forces: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tradeoffs: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    examples: Vec<String>,
}

/// An AntiPattern's fields.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct AntiPattern {
    #[serde(default)]
    v: u32,
    #[serde(default)]
    symptoms: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    why_it_happens: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    consequences: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    refactoring_path: Option<String>,
}

/// A Trait's, Style's, Strength's or Preference's fields.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Identity {
    #[serde(default)]
    v: u32,
    polarity: S<Polarity>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    stability: Option<S<Level>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    observations: Vec<String>,
}

/// A Cause's fields: its effect is an atom or a subject, one of the two.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Cause {
    #[serde(default)]
    v: u32,
    cause_kind: S<CauseKind>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    effect_atom: Option<S<AtomId>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    effect_subject: Option<S<SubjectId>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    mechanism: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    evidence_quality: Option<S<Level>>,
}

/// An Org's fields.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Org {
    #[serde(default)]
    v: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    domain: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    units: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    policies_index: Option<String>,
}

/// A Project's fields but its orchestrator project, which is the row's `orchestrator_project_id` column (cleared when that project goes); rows of version 0 may hold `orchestratorProject`, ignored.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Project {
    #[serde(default)]
    v: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    status: Option<S<ProjectStatus>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    start_date: Option<S<OffsetDateTime>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    end_date: Option<S<OffsetDateTime>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    org: Option<S<SubjectId>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    repo_links: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    docs_links: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    domain: Option<String>,
}

/// A Person's fields.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Person {
    #[serde(default)]
    v: u32,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    roles: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    org: Option<S<SubjectId>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    teams: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    handles: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timezone: Option<String>,
}

/// A Tool's, Lib's, Service's, Model's or Dataset's fields.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Artifact {
    #[serde(default)]
    v: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    ecosystem: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    category: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    repo: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    homepage: Option<String>,
}

/// A Stack's fields.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Stack {
    #[serde(default)]
    v: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    scope: Option<S<StackScope>>,
}

/// A Template's fields.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct Template {
    #[serde(default)]
    v: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    purpose: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    location: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    inputs: Vec<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    outputs: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    version: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    maintainer: Option<S<SubjectId>>,
}

/// The version a stored struct was written in.
trait Versioned {
    fn v(&self) -> u32;
}

macro_rules! versioned {
    ($($t:ident),+ $(,)?) => {$(
        impl Versioned for $t {
            fn v(&self) -> u32 {
                self.v
            }
        }
    )+};
}

versioned!(
    Fact,
    Assumption,
    Decision,
    Rule,
    Convention,
    BestPractice,
    KnowHow,
    Pattern,
    AntiPattern,
    Identity,
    Cause,
    Org,
    Project,
    Person,
    Artifact,
    Stack,
    Template,
);

fn corrupt(what: &str, why: impl fmt::Display) -> Error {
    Error::Corrupt(format!("{what}: {why}"))
}

/// Reads one stored struct, refusing a form newer than this Cairn knows.
fn read<'a, T: Deserialize<'a> + Versioned>(text: &'a str) -> Result<T> {
    let x: T = serde_json::from_str(text).map_err(|e| corrupt("its fields", e))?;
    if x.v() > VERSION {
        return Err(corrupt(
            "its fields",
            format!(
                "they are in stored form v{}, written by a newer Cairn (this one reads up to v{VERSION}): upgrade Cairn",
                x.v()
            ),
        ));
    }
    Ok(x)
}

/// The text of a stored struct. `serde_json` fails only on a map whose keys are not
/// strings, or on a `Serialize` that fails; these structs have neither.
fn text<T: Serialize>(x: &T) -> String {
    serde_json::to_string(x).unwrap_or_default()
}

/// An atom's type-specific fields as stored (its decision status apart: see
/// [`decode_atom`]).
pub fn encode_atom(d: &AtomDetails) -> String {
    let v = VERSION;
    match d {
        AtomDetails::Fact(x) => text(&Fact {
            v,
            fact_kind: S(x.fact_kind),
            observed_count: x.observed_count,
            first_observed_at: opt(&x.first_observed_at),
            last_observed_at: opt(&x.last_observed_at),
        }),
        AtomDetails::Assumption(x) => text(&Assumption {
            v,
            validation_method: x.validation_method.clone(),
            risk_if_wrong: opt(&x.risk_if_wrong),
            owner: x.owner.clone(),
            deadline: opt(&x.deadline),
        }),
        AtomDetails::Decision(x) => text(&Decision {
            v,
            decided_at: S(x.decided_at),
            decision_makers: list(&x.decision_makers),
            rationale: x.rationale.clone(),
            alternatives: x.alternatives.clone(),
            consequences: x.consequences.clone(),
            review_trigger: x.review_trigger.clone(),
            enforcement: opt(&x.enforcement),
        }),
        AtomDetails::Rule(x) => text(&Rule {
            v,
            severity: S(x.severity),
            enforcement: opt(&x.enforcement),
            exceptions: x.exceptions.clone(),
            owner: x.owner.clone(),
        }),
        AtomDetails::Convention(x) => text(&Convention {
            v,
            area: S(x.area),
            examples_good: x.examples_good.clone(),
            examples_bad: x.examples_bad.clone(),
            severity: S(x.severity),
            owner: x.owner.clone(),
        }),
        AtomDetails::BestPractice(x) => text(&BestPractice {
            v,
            goal: x.goal.clone(),
            applicability: x.applicability.clone(),
            tradeoffs: x.tradeoffs.clone(),
            evidence_quality: opt(&x.evidence_quality),
        }),
        AtomDetails::KnowHow(x) => text(&KnowHow {
            v,
            steps: x.steps.clone(),
            inputs: x.inputs.clone(),
            outputs: x.outputs.clone(),
            tools_required: list(&x.tools_required),
            examples: x.examples.clone(),
            last_tested_at: opt(&x.last_tested_at),
        }),
        AtomDetails::Pattern(x) => text(&Pattern {
            v,
            problem: x.problem.clone(),
            pattern_context: x.pattern_context.clone(),
            solution: x.solution.clone(),
            forces: x.forces.clone(),
            tradeoffs: x.tradeoffs.clone(),
            examples: x.examples.clone(),
        }),
        AtomDetails::AntiPattern(x) => text(&AntiPattern {
            v,
            symptoms: x.symptoms.clone(),
            why_it_happens: x.why_it_happens.clone(),
            consequences: x.consequences.clone(),
            refactoring_path: x.refactoring_path.clone(),
        }),
        AtomDetails::Trait(x)
        | AtomDetails::Style(x)
        | AtomDetails::Strength(x)
        | AtomDetails::Preference(x) => text(&Identity {
            v,
            polarity: S(x.polarity),
            stability: opt(&x.stability),
            observations: x.observations.clone(),
        }),
        AtomDetails::Cause(x) => {
            let (effect_atom, effect_subject) = match x.effect {
                Effect::Atom(a) => (Some(S(a)), None),
                Effect::Subject(s) => (None, Some(S(s))),
            };
            text(&Cause {
                v,
                cause_kind: S(x.cause_kind),
                effect_atom,
                effect_subject,
                mechanism: x.mechanism.clone(),
                evidence_quality: opt(&x.evidence_quality),
            })
        }
    }
}

/// Reads back an atom's type-specific fields as [`encode_atom`] (or an older Cairn)
/// wrote them. `decision_status` is the row's column (a Decision's status moves; a
/// row without one is `proposed`, the default it was recorded with).
pub fn decode_atom(
    t: MemoryAtomType,
    text: &str,
    decision_status: Option<DecisionStatus>,
) -> Result<AtomDetails> {
    use MemoryAtomType as M;
    let identity = |text: &str| -> Result<IdentityFields> {
        let x: Identity = read(text)?;
        Ok(IdentityFields {
            polarity: x.polarity.0,
            stability: un(x.stability),
            observations: x.observations,
        })
    };
    Ok(match t {
        M::Fact => {
            let x: Fact = read(text)?;
            AtomDetails::Fact(FactFields {
                fact_kind: x.fact_kind.0,
                observed_count: x.observed_count,
                first_observed_at: un(x.first_observed_at),
                last_observed_at: un(x.last_observed_at),
            })
        }
        M::Assumption => {
            let x: Assumption = read(text)?;
            AtomDetails::Assumption(AssumptionFields {
                validation_method: x.validation_method,
                risk_if_wrong: un(x.risk_if_wrong),
                owner: x.owner,
                deadline: un(x.deadline),
            })
        }
        M::Decision => {
            let x: Decision = read(text)?;
            AtomDetails::Decision(DecisionFields {
                decision_status: decision_status.unwrap_or(DecisionStatus::Proposed),
                decided_at: x.decided_at.0,
                decision_makers: unlist(x.decision_makers),
                rationale: x.rationale,
                alternatives: x.alternatives,
                consequences: x.consequences,
                review_trigger: x.review_trigger,
                enforcement: un(x.enforcement),
            })
        }
        M::Rule => {
            let x: Rule = read(text)?;
            AtomDetails::Rule(RuleFields {
                severity: x.severity.0,
                enforcement: un(x.enforcement),
                exceptions: x.exceptions,
                owner: x.owner,
            })
        }
        M::Convention => {
            let x: Convention = read(text)?;
            AtomDetails::Convention(ConventionFields {
                area: x.area.0,
                examples_good: x.examples_good,
                examples_bad: x.examples_bad,
                severity: x.severity.0,
                owner: x.owner,
            })
        }
        M::BestPractice => {
            let x: BestPractice = read(text)?;
            AtomDetails::BestPractice(BestPracticeFields {
                goal: x.goal,
                applicability: x.applicability,
                tradeoffs: x.tradeoffs,
                evidence_quality: un(x.evidence_quality),
            })
        }
        M::KnowHow => {
            let x: KnowHow = read(text)?;
            AtomDetails::KnowHow(KnowHowFields {
                steps: x.steps,
                inputs: x.inputs,
                outputs: x.outputs,
                tools_required: unlist(x.tools_required),
                examples: x.examples,
                last_tested_at: un(x.last_tested_at),
            })
        }
        M::Pattern => {
            let x: Pattern = read(text)?;
            AtomDetails::Pattern(PatternFields {
                problem: x.problem,
                pattern_context: x.pattern_context,
                solution: x.solution,
                forces: x.forces,
                tradeoffs: x.tradeoffs,
                examples: x.examples,
            })
        }
        M::AntiPattern => {
            let x: AntiPattern = read(text)?;
            AtomDetails::AntiPattern(AntiPatternFields {
                symptoms: x.symptoms,
                why_it_happens: x.why_it_happens,
                consequences: x.consequences,
                refactoring_path: x.refactoring_path,
            })
        }
        M::Trait => AtomDetails::Trait(identity(text)?),
        M::Style => AtomDetails::Style(identity(text)?),
        M::Strength => AtomDetails::Strength(identity(text)?),
        M::Preference => AtomDetails::Preference(identity(text)?),
        M::Cause => {
            let x: Cause = read(text)?;
            let effect = match (un(x.effect_atom), un(x.effect_subject)) {
                (Some(a), None) => Effect::Atom(a),
                (None, Some(s)) => Effect::Subject(s),
                _ => {
                    return Err(corrupt(
                        "its fields",
                        "a Cause holds one of effectAtom and effectSubject",
                    ))
                }
            };
            AtomDetails::Cause(CauseFields {
                cause_kind: x.cause_kind.0,
                effect,
                mechanism: x.mechanism,
                evidence_quality: un(x.evidence_quality),
            })
        }
    })
}

/// A subject's kind-specific fields as stored: the empty text when it has none (or
/// none set), as subjects have always been stored.
pub fn encode_subject(d: &SubjectDetails) -> String {
    let v = VERSION;
    let t = match d {
        SubjectDetails::None => return String::new(),
        SubjectDetails::Org(x) => text(&Org {
            v,
            domain: x.domain.clone(),
            units: x.units.clone(),
            policies_index: x.policies_index.clone(),
        }),
        SubjectDetails::Project(x) => text(&Project {
            v,
            status: opt(&x.status),
            start_date: opt(&x.start_date),
            end_date: opt(&x.end_date),
            org: opt(&x.org),
            repo_links: x.repo_links.clone(),
            docs_links: x.docs_links.clone(),
            domain: x.domain.clone(),
        }),
        SubjectDetails::Person(x) => text(&Person {
            v,
            roles: x.roles.clone(),
            org: opt(&x.org),
            teams: x.teams.clone(),
            handles: x.handles.clone(),
            timezone: x.timezone.clone(),
        }),
        SubjectDetails::Artifact(x) => text(&Artifact {
            v,
            ecosystem: x.ecosystem.clone(),
            category: x.category.clone(),
            repo: x.repo.clone(),
            homepage: x.homepage.clone(),
        }),
        SubjectDetails::Stack(x) => text(&Stack {
            v,
            description: x.description.clone(),
            scope: opt(&x.scope),
        }),
        SubjectDetails::Template(x) => text(&Template {
            v,
            purpose: x.purpose.clone(),
            location: x.location.clone(),
            inputs: x.inputs.clone(),
            outputs: x.outputs.clone(),
            version: x.version.clone(),
            maintainer: opt(&x.maintainer),
        }),
    };
    if t == format!("{{\"v\":{VERSION}}}") {
        String::new()
    } else {
        t
    }
}

/// Reads back a subject's kind-specific fields as [`encode_subject`] (or an older
/// Cairn) wrote them; the orchestrator project is the caller's, from its column.
pub fn decode_subject(kind: SubjectKind, text: &str) -> Result<SubjectDetails> {
    use SubjectKind as K;
    if text.is_empty() {
        return Ok(SubjectDetails::None);
    }
    Ok(match kind {
        K::Org => {
            let x: Org = read(text)?;
            SubjectDetails::Org(OrgFields {
                domain: x.domain,
                units: x.units,
                policies_index: x.policies_index,
            })
        }
        K::Project => {
            let x: Project = read(text)?;
            SubjectDetails::Project(ProjectFields {
                status: un(x.status),
                start_date: un(x.start_date),
                end_date: un(x.end_date),
                org: un(x.org),
                repo_links: x.repo_links,
                docs_links: x.docs_links,
                domain: x.domain,
                orchestrator_project: None,
            })
        }
        K::Person => {
            let x: Person = read(text)?;
            SubjectDetails::Person(PersonFields {
                roles: x.roles,
                org: un(x.org),
                teams: x.teams,
                handles: x.handles,
                timezone: x.timezone,
            })
        }
        K::Stack => {
            let x: Stack = read(text)?;
            SubjectDetails::Stack(StackFields {
                description: x.description,
                scope: un(x.scope),
            })
        }
        K::Template => {
            let x: Template = read(text)?;
            SubjectDetails::Template(TemplateFields {
                purpose: x.purpose,
                location: x.location,
                inputs: x.inputs,
                outputs: x.outputs,
                version: x.version,
                maintainer: un(x.maintainer),
            })
        }
        K::Tool | K::Lib | K::Service | K::Model | K::Dataset => {
            let x: Artifact = read(text)?;
            SubjectDetails::Artifact(ArtifactFields {
                ecosystem: x.ecosystem,
                category: x.category,
                repo: x.repo,
                homepage: x.homepage,
            })
        }
    })
}

/// A list of texts as stored: a JSON array, or the empty text for none.
pub fn encode_list(items: &[String]) -> String {
    if items.is_empty() {
        String::new()
    } else {
        text(&items)
    }
}

/// Reads back a list [`encode_list`] wrote.
pub fn decode_list(text: &str) -> Result<Vec<String>> {
    if text.is_empty() {
        return Ok(Vec::new());
    }
    serde_json::from_str(text).map_err(|e| corrupt("a list", e))
}
