//! The alive memory's nouns: subjects (the things in the world), memory atoms (the
//! statements about them, one struct of fields per atom type), evidence references,
//! diary entries, edges and statuses, with their wire spellings and the two time axes.
//! It holds no rules beyond the predicates on time; it knows no SQL, MCP or JSON, and
//! these atoms are not the knowledge graph's glob atoms.

use time::OffsetDateTime;

use super::claim::Predicate;
use super::wire::{id_type, wire_enum};

mod subject;
pub use subject::*;

id_type!(
    /// A memory atom's id (a UUID held as its 128-bit value).
    AtomId
);
id_type!(
    /// A subject's id.
    SubjectId
);
id_type!(
    /// An evidence reference's id.
    ReferenceId
);
id_type!(
    /// A diary entry's id.
    DiaryEntryId
);

wire_enum! {
    /// What a subject is: a context (where statements apply) or an artifact (what
    /// statements are about).
    pub enum SubjectKind ("subject kind") {
        /// An organisation (context).
        Org = "Org",
        /// A project (context); may point at an orchestrator project.
        Project = "Project",
        /// A person (context; identity atoms are about people and orgs).
        Person = "Person",
        /// A tool (artifact).
        Tool = "Tool",
        /// A library (artifact).
        Lib = "Lib",
        /// A set of tools and libraries used together (artifact; may scope atoms).
        Stack = "Stack",
        /// A project template (artifact).
        Template = "Template",
        /// A running system or service (artifact).
        Service = "Service",
        /// A machine-learning model (artifact).
        Model = "Model",
        /// A data set (artifact).
        Dataset = "Dataset",
    }
}

impl SubjectKind {
    /// Org, Project and Person are contexts; the rest are artifacts.
    pub fn is_context(self) -> bool {
        matches!(
            self,
            SubjectKind::Org | SubjectKind::Project | SubjectKind::Person
        )
    }

    /// Whether an atom may be scoped to a subject of this kind (`IN_CONTEXT`): the
    /// three contexts and a Stack (docs/memory.md, subjects and contexts).
    pub fn can_scope(self) -> bool {
        self.is_context() || self == SubjectKind::Stack
    }
}

wire_enum! {
    /// The type of a memory atom.
    pub enum MemoryAtomType ("atom type") {
        /// Descriptive: something true, durable or time-bound.
        Fact = "Fact",
        /// Descriptive: something believed that must be validated.
        Assumption = "Assumption",
        /// Prescriptive: an organisational commitment.
        Decision = "Decision",
        /// Prescriptive: an enforceable constraint.
        Rule = "Rule",
        /// Prescriptive: a soft rule for consistency.
        Convention = "Convention",
        /// Prescriptive: a recommendation to re-verify.
        BestPractice = "Best-practice",
        /// Procedural: how to do something.
        KnowHow = "Know-how",
        /// Conceptual: a recurring solution.
        Pattern = "Pattern",
        /// Conceptual: a recurring mistake.
        AntiPattern = "AntiPattern",
        /// Identity: a character trait of a person or org.
        Trait = "Trait",
        /// Identity: a working style.
        Style = "Style",
        /// Identity: a strength.
        Strength = "Strength",
        /// Identity: a preference.
        Preference = "Preference",
        /// Causal: an explanation of an effect.
        Cause = "Cause",
    }
}

impl MemoryAtomType {
    /// Trait, Style, Strength and Preference describe a person or an org.
    pub fn is_identity(self) -> bool {
        matches!(
            self,
            MemoryAtomType::Trait
                | MemoryAtomType::Style
                | MemoryAtomType::Strength
                | MemoryAtomType::Preference
        )
    }
}

wire_enum! {
    /// Where an atom is in its life.
    pub enum MemoryStatus ("status") {
        /// Extracted by an agent, not trusted yet.
        Draft = "DRAFT",
        /// A candidate with some evidence or an author, awaiting validation.
        Proposed = "PROPOSED",
        /// The current best-known statement for its key.
        Active = "ACTIVE",
        /// Has a credible contradiction of equal standing.
        Contested = "CONTESTED",
        /// Replaced by another atom (`SUPERSEDES`); kept for history.
        Superseded = "SUPERSEDED",
        /// No longer recommended or true; kept for history.
        Deprecated = "DEPRECATED",
        /// Low retrieval priority; searchable with history.
        Archived = "ARCHIVED",
        /// Was ACTIVE and is due for review.
        NeedsReview = "NEEDS_REVIEW",
    }
}

impl MemoryStatus {
    /// Superseded, deprecated and archived atoms are history: no longer believed.
    pub fn is_retired(self) -> bool {
        matches!(
            self,
            MemoryStatus::Superseded | MemoryStatus::Deprecated | MemoryStatus::Archived
        )
    }

    /// The statuses that hold a claim key's slot: ACTIVE, NEEDS_REVIEW (an ACTIVE atom
    /// whose review is due) and CONTESTED (one of a tie awaiting resolution).
    pub fn holds_key(self) -> bool {
        matches!(
            self,
            MemoryStatus::Active | MemoryStatus::NeedsReview | MemoryStatus::Contested
        )
    }
}

wire_enum! {
    /// The kinds of edge in the memory graph.
    pub enum EdgeKind ("edge kind") {
        /// Atom → the subject it is about (held on the atom, part of its key).
        About = "ABOUT",
        /// Atom → the context subject it applies in (held on the atom; none = Global).
        InContext = "IN_CONTEXT",
        /// Atom → a reference it was taken from.
        FromSource = "FROM_SOURCE",
        /// Atom → the Person subject who wrote it.
        AuthoredBy = "AUTHORED_BY",
        /// Atom or reference → an atom it corroborates.
        Supports = "SUPPORTS",
        /// Atom → an atom it disagrees with.
        Contradicts = "CONTRADICTS",
        /// Atom → the atom it replaces.
        Supersedes = "SUPERSEDES",
        /// Atom → an atom or subject it relies on (a change triggers review).
        DependsOn = "DEPENDS_ON",
        /// Atom → an atom it causes.
        Causes = "CAUSES",
        /// Atom → an atom that causes it.
        CausedBy = "CAUSED_BY",
        /// Atom → an atom blocking it.
        BlockedBy = "BLOCKED_BY",
        /// Atom → a related atom or subject.
        Related = "RELATED",
        /// Subject → a subject it uses (Project USES Lib, Stack USES Tool).
        Uses = "USES",
    }
}

wire_enum! {
    /// The kind of source a reference points at; its evidence strength is in
    /// `evidence.rs`.
    pub enum RefType ("reference type") {
        /// An architecture decision record.
        Adr = "ADR",
        /// A policy document.
        Policy = "policy",
        /// A pull or merge request.
        Pr = "PR",
        /// A commit.
        Commit = "commit",
        /// Release notes or a changelog.
        ReleaseNotes = "release_notes",
        /// Minutes of a meeting.
        MeetingNote = "meeting_note",
        /// Documentation.
        Doc = "doc",
        /// Any other web page.
        Url = "url",
        /// An issue tracker ticket.
        Ticket = "ticket",
        /// A chat message or conversation.
        Chat = "chat",
        /// A session diary entry in Cairn.
        Diary = "diary",
    }
}

wire_enum! {
    /// A three-step level (importance, risk if wrong, stability, evidence quality).
    pub enum Level ("level") {
        /// Low.
        Low = "low",
        /// Medium.
        Med = "med",
        /// High.
        High = "high",
    }
}

wire_enum! {
    /// How binding a rule or convention is.
    pub enum Severity ("severity") {
        /// Required.
        Must = "must",
        /// Expected unless there is a reason.
        Should = "should",
        /// Optional.
        May = "may",
    }
}

wire_enum! {
    /// How a rule is enforced.
    pub enum Enforcement ("enforcement") {
        /// By people, in review.
        Manual = "manual",
        /// By a tool outside CI.
        Automated = "automated",
        /// By a linter.
        Lint = "lint",
        /// By continuous integration.
        Ci = "CI",
    }
}

wire_enum! {
    /// Where a fact comes from.
    pub enum FactKind ("fact kind") {
        /// Seen directly.
        Observed = "observed",
        /// Computed from other statements or edges.
        Derived = "derived",
        /// Told by someone or something.
        Reported = "reported",
    }
}

wire_enum! {
    /// A decision's own state, beside the atom's status.
    pub enum DecisionStatus ("decision status") {
        /// Put forward, not yet accepted.
        Proposed = "proposed",
        /// Accepted: needs a strong reference or a named confirmation.
        Accepted = "accepted",
        /// Turned down (kept as a record).
        Rejected = "rejected",
        /// Withdrawn; the atom becomes DEPRECATED.
        Deprecated = "deprecated",
    }
}

wire_enum! {
    /// How a cause relates to its effect.
    pub enum CauseKind ("cause kind") {
        /// The root cause.
        Root = "root",
        /// One contributing cause.
        Contributing = "contributing",
        /// Observed together, not shown to cause.
        Correlational = "correlational",
    }
}

wire_enum! {
    /// How strongly an identity atom holds.
    pub enum Polarity ("polarity") {
        /// Strongly.
        Strong = "strong",
        /// Moderately.
        Medium = "medium",
        /// Weakly.
        Weak = "weak",
    }
}

wire_enum! {
    /// What a convention governs.
    pub enum ConventionArea ("convention area") {
        /// Names of things.
        Naming = "naming",
        /// Code formatting.
        Formatting = "formatting",
        /// Where files go.
        RepoLayout = "repo_layout",
        /// Documentation.
        Docs = "docs",
        /// How tests are written.
        TestingStyle = "testing_style",
    }
}

wire_enum! {
    /// A Project subject's state.
    pub enum ProjectStatus ("project status") {
        /// Being worked on.
        Active = "active",
        /// On hold.
        Paused = "paused",
        /// Finished or abandoned.
        Archived = "archived",
    }
}

wire_enum! {
    /// How widely a Stack applies.
    pub enum StackScope ("stack scope") {
        /// Across an org.
        Org = "org",
        /// Within one project.
        Project = "project",
    }
}

/// An atom's value: a typed literal or a subject.
#[derive(Debug, Clone, PartialEq)]
pub enum AtomValue {
    /// Text, e.g. a version `4.2`.
    Text(String),
    /// A number.
    Number(f64),
    /// A yes/no.
    Bool(bool),
    /// A subject, e.g. the library chosen by a decision.
    Subject(SubjectId),
}

/// Who confirmed an atom, and when: an explicit confirmation promotes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confirmation {
    /// The person (or role) who confirmed; never empty.
    pub by: String,
    /// When.
    pub at: OffsetDateTime,
}

/// What a Cause explains.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effect {
    /// Another atom.
    Atom(AtomId),
    /// A subject.
    Subject(SubjectId),
}

/// The type-specific fields of an atom (docs/memory.md, atom types), one struct per type.
///
/// An enum of structs rather than a validated field map: the rules (`decay`,
/// `promotion`, `collision`) match on it exhaustively, so a new type cannot be
/// forgotten, and a required field is a plain field, not a lookup that might miss.
/// The field map survives at the edges only: `validate` reads one, and
/// [`AtomDetails::fields`] writes one back for the store and the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum AtomDetails {
    /// Fact.
    Fact(FactFields),
    /// Assumption.
    Assumption(AssumptionFields),
    /// Decision.
    Decision(DecisionFields),
    /// Rule.
    Rule(RuleFields),
    /// Convention.
    Convention(ConventionFields),
    /// Best-practice.
    BestPractice(BestPracticeFields),
    /// Know-how.
    KnowHow(KnowHowFields),
    /// Pattern.
    Pattern(PatternFields),
    /// AntiPattern.
    AntiPattern(AntiPatternFields),
    /// Trait.
    Trait(IdentityFields),
    /// Style.
    Style(IdentityFields),
    /// Strength.
    Strength(IdentityFields),
    /// Preference.
    Preference(IdentityFields),
    /// Cause.
    Cause(CauseFields),
}

impl AtomDetails {
    /// The atom type these fields belong to.
    pub fn atom_type(&self) -> MemoryAtomType {
        match self {
            AtomDetails::Fact(_) => MemoryAtomType::Fact,
            AtomDetails::Assumption(_) => MemoryAtomType::Assumption,
            AtomDetails::Decision(_) => MemoryAtomType::Decision,
            AtomDetails::Rule(_) => MemoryAtomType::Rule,
            AtomDetails::Convention(_) => MemoryAtomType::Convention,
            AtomDetails::BestPractice(_) => MemoryAtomType::BestPractice,
            AtomDetails::KnowHow(_) => MemoryAtomType::KnowHow,
            AtomDetails::Pattern(_) => MemoryAtomType::Pattern,
            AtomDetails::AntiPattern(_) => MemoryAtomType::AntiPattern,
            AtomDetails::Trait(_) => MemoryAtomType::Trait,
            AtomDetails::Style(_) => MemoryAtomType::Style,
            AtomDetails::Strength(_) => MemoryAtomType::Strength,
            AtomDetails::Preference(_) => MemoryAtomType::Preference,
            AtomDetails::Cause(_) => MemoryAtomType::Cause,
        }
    }

    /// A Decision's fields.
    pub fn decision(&self) -> Option<&DecisionFields> {
        match self {
            AtomDetails::Decision(d) => Some(d),
            _ => None,
        }
    }
}

/// Fact fields.
#[derive(Debug, Clone, PartialEq)]
pub struct FactFields {
    /// observed, derived or reported (required).
    pub fact_kind: FactKind,
    /// How many times it was seen, when aggregated.
    pub observed_count: Option<u64>,
    /// First seen.
    pub first_observed_at: Option<OffsetDateTime>,
    /// Last seen.
    pub last_observed_at: Option<OffsetDateTime>,
}

/// Assumption fields.
#[derive(Debug, Clone, PartialEq)]
pub struct AssumptionFields {
    /// How to confirm it (required: an assumption nobody can check is noise).
    pub validation_method: String,
    /// What it costs to be wrong.
    pub risk_if_wrong: Option<Level>,
    /// Who should validate it.
    pub owner: Option<String>,
    /// When it must be checked by.
    pub deadline: Option<OffsetDateTime>,
}

/// Decision fields.
#[derive(Debug, Clone, PartialEq)]
pub struct DecisionFields {
    /// proposed, accepted, rejected or deprecated.
    pub decision_status: DecisionStatus,
    /// When it was decided (required).
    pub decided_at: OffsetDateTime,
    /// Person or Org subjects who decided.
    pub decision_makers: Vec<SubjectId>,
    /// Why (required).
    pub rationale: String,
    /// The options not taken.
    pub alternatives: Vec<String>,
    /// Positive and negative consequences.
    pub consequences: Vec<String>,
    /// When to revisit (`revisit when scaling to X`).
    pub review_trigger: Option<String>,
    /// How it is enforced, if at all.
    pub enforcement: Option<Enforcement>,
}

/// Rule fields.
#[derive(Debug, Clone, PartialEq)]
pub struct RuleFields {
    /// must, should or may (required).
    pub severity: Severity,
    /// How it is enforced.
    pub enforcement: Option<Enforcement>,
    /// Conditions and process for exceptions.
    pub exceptions: Option<String>,
    /// Who maintains it.
    pub owner: Option<String>,
}

/// Convention fields.
#[derive(Debug, Clone, PartialEq)]
pub struct ConventionFields {
    /// What it governs (required).
    pub area: ConventionArea,
    /// Examples to follow.
    pub examples_good: Vec<String>,
    /// Examples to avoid.
    pub examples_bad: Vec<String>,
    /// Usually `should`, the default.
    pub severity: Severity,
    /// Who maintains it.
    pub owner: Option<String>,
}

/// Best-practice fields.
#[derive(Debug, Clone, PartialEq)]
pub struct BestPracticeFields {
    /// Why it exists (required).
    pub goal: String,
    /// When it applies.
    pub applicability: Option<String>,
    /// What it costs.
    pub tradeoffs: Option<String>,
    /// How good the evidence for it is.
    pub evidence_quality: Option<Level>,
}

/// Know-how fields.
#[derive(Debug, Clone, PartialEq)]
pub struct KnowHowFields {
    /// The steps, in order (required, at least one).
    pub steps: Vec<String>,
    /// What it takes.
    pub inputs: Vec<String>,
    /// What it produces.
    pub outputs: Vec<String>,
    /// Tool or Lib subjects it needs.
    pub tools_required: Vec<SubjectId>,
    /// Links to repositories or templates.
    pub examples: Vec<String>,
    /// When it was last confirmed to work (counts as a validation for decay).
    pub last_tested_at: Option<OffsetDateTime>,
}

/// Pattern fields.
#[derive(Debug, Clone, PartialEq)]
pub struct PatternFields {
    /// The problem it solves (required).
    pub problem: String,
    /// The situation it applies in (`patternContext` on the wire, as `context` is the
    /// atom's scope).
    pub pattern_context: Option<String>,
    /// The solution (required).
    pub solution: String,
    /// The forces at play.
    pub forces: Vec<String>,
    /// What it costs.
    pub tradeoffs: Option<String>,
    /// Examples.
    pub examples: Vec<String>,
}

/// AntiPattern fields.
#[derive(Debug, Clone, PartialEq)]
pub struct AntiPatternFields {
    /// How to recognise it (required, at least one).
    pub symptoms: Vec<String>,
    /// Why people fall into it.
    pub why_it_happens: Option<String>,
    /// What it leads to.
    pub consequences: Vec<String>,
    /// How to get out.
    pub refactoring_path: Option<String>,
}

/// Fields of the identity atoms (Trait, Style, Strength, Preference), which are
/// about a Person or an Org.
#[derive(Debug, Clone, PartialEq)]
pub struct IdentityFields {
    /// strong, medium or weak (required).
    pub polarity: Polarity,
    /// How stable it is.
    pub stability: Option<Level>,
    /// Observations or feedback it rests on (the references are evidence edges).
    pub observations: Vec<String>,
}

/// Cause fields.
#[derive(Debug, Clone, PartialEq)]
pub struct CauseFields {
    /// root, contributing or correlational (required).
    pub cause_kind: CauseKind,
    /// What it explains (required: `effectAtom` or `effectSubject`).
    pub effect: Effect,
    /// The mechanism, briefly.
    pub mechanism: Option<String>,
    /// How good the evidence is.
    pub evidence_quality: Option<Level>,
}

/// A memory atom: one statement about a subject, in a context, with its evidence
/// held as edges, its life (status, confidence, review) and its two time axes.
///
/// The statement, predicate, value, subject, context and type never change once
/// recorded: a change is a new atom that `SUPERSEDES` this one. Only the life fields
/// (status, confidence, review dates, retired_at, resolution, decision status) move.
#[derive(Debug, Clone, PartialEq)]
pub struct MemoryAtom {
    /// Stable id.
    pub id: AtomId,
    /// The type and its fields.
    pub details: AtomDetails,
    /// Human-readable statement.
    pub statement: String,
    /// Normalised key predicate (`latest_version`); atoms without one have no claim key.
    pub predicate: Option<Predicate>,
    /// The claimed value, if the statement has one.
    pub value: Option<AtomValue>,
    /// The subject it is about (ABOUT).
    pub about: Option<SubjectId>,
    /// Where it applies (IN_CONTEXT).
    pub context: Context,
    /// Where it is in its life.
    pub status: MemoryStatus,
    /// Current confidence in 0..1, decayed by the curator for types that decay.
    pub confidence: f64,
    /// Confidence as of the last validation; decay starts from it.
    pub validated_confidence: f64,
    /// low, med or high.
    pub importance: Level,
    /// Short title.
    pub title: Option<String>,
    /// Short summary.
    pub summary: Option<String>,
    /// Rationale and nuance.
    pub notes: Option<String>,
    /// How a conflict over it was resolved.
    pub resolution: Option<String>,
    /// Free tags.
    pub tags: Vec<String>,
    /// Who wrote it (an agent's or a person's name).
    pub author: Option<String>,
    /// An explicit confirmation, if any.
    pub confirmation: Option<Confirmation>,
    /// World time: holds from (None: since ever).
    pub valid_from: Option<OffsetDateTime>,
    /// World time: holds until, exclusive (None: still holds).
    pub valid_to: Option<OffsetDateTime>,
    /// Cairn time: when it was recorded (its `created_at`).
    pub recorded_at: OffsetDateTime,
    /// Cairn time: when it stopped being believed (superseded, deprecated, archived).
    pub retired_at: Option<OffsetDateTime>,
    /// Last validation (None: never validated since recording).
    pub last_validated_at: Option<OffsetDateTime>,
    /// When it must be reviewed (None: no scheduled review).
    pub next_review_at: Option<OffsetDateTime>,
    /// Overrides the type's review interval.
    pub review_interval_days: Option<u32>,
    /// The claim key as the store last wrote it (the unique index column); the
    /// curator rewrites it when it no longer matches the atom.
    pub claim_key: Option<String>,
}

impl MemoryAtom {
    /// The atom's type.
    pub fn atom_type(&self) -> MemoryAtomType {
        self.details.atom_type()
    }

    /// Whether Cairn believed this atom at `t` (`asOf`): recorded by then and not yet
    /// retired.
    pub fn believed_at(&self, t: OffsetDateTime) -> bool {
        self.recorded_at <= t && self.retired_at.is_none_or(|r| t < r)
    }

    /// Whether the statement held in the world at `t` (`validAt`): `valid_from ≤ t <
    /// valid_to`, an open end holding forever.
    pub fn holds_at(&self, t: OffsetDateTime) -> bool {
        self.valid_from.is_none_or(|f| f <= t) && self.valid_to.is_none_or(|u| t < u)
    }

    /// Decay and review count from the last validation, the last confirmation, the
    /// last successful test of a Know-how, or the recording, whichever is latest.
    pub fn validation_anchor(&self) -> OffsetDateTime {
        let tested = match &self.details {
            AtomDetails::KnowHow(k) => k.last_tested_at,
            _ => None,
        };
        let confirmed = self.confirmation.as_ref().map(|c| c.at);
        [self.last_validated_at, tested, confirmed]
            .into_iter()
            .flatten()
            .fold(self.recorded_at, |a, b| a.max(b))
    }
}

/// An evidence reference (docs/memory.md, evidence), shared between atoms.
#[derive(Debug, Clone, PartialEq)]
pub struct Reference {
    /// Stable id.
    pub id: ReferenceId,
    /// What kind of source it is.
    pub ref_type: RefType,
    /// Title.
    pub title: Option<String>,
    /// Where it is.
    pub uri: Option<String>,
    /// Who wrote it.
    pub authors: Vec<String>,
    /// When it was published.
    pub published_at: Option<OffsetDateTime>,
    /// When Cairn read it.
    pub retrieved_at: OffsetDateTime,
    /// A small excerpt or summary.
    pub snippet: Option<String>,
    /// Content fingerprint.
    pub hash: Option<String>,
}

/// A diary entry: the structured summary of one session or task.
#[derive(Debug, Clone, PartialEq)]
pub struct DiaryEntry {
    /// Stable id.
    pub id: DiaryEntryId,
    /// When it was written.
    pub recorded_at: OffsetDateTime,
    /// The session or task it summarises, as the caller names it.
    pub session: Option<String>,
    /// What was completed.
    pub accomplishments: Vec<String>,
    /// Design choices made.
    pub decisions: Vec<String>,
    /// Problems met.
    pub challenges: Vec<String>,
    /// Reusable insights.
    pub learnings: Vec<String>,
}

/// One end of an edge.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum NodeRef {
    /// A memory atom.
    Atom(AtomId),
    /// A subject.
    Subject(SubjectId),
    /// An evidence reference.
    Reference(ReferenceId),
}

/// An edge held as a row. ABOUT and IN_CONTEXT live on the atom (they make its
/// claim key); [`MemoryEdge::allowed`] says which ends each kind may join.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MemoryEdge {
    /// Where it starts.
    pub from: NodeRef,
    /// What it means.
    pub kind: EdgeKind,
    /// Where it ends.
    pub to: NodeRef,
}

impl MemoryEdge {
    /// Builds an edge.
    pub fn new(from: NodeRef, kind: EdgeKind, to: NodeRef) -> Self {
        MemoryEdge { from, kind, to }
    }

    /// Whether this kind may join these kinds of ends: USES joins subjects; SUPPORTS
    /// starts at an atom or a reference; FROM_SOURCE ends at a reference; ABOUT,
    /// IN_CONTEXT and AUTHORED_BY end at a subject; DEPENDS_ON and RELATED end at an
    /// atom or a subject; the other kinds join two atoms. An edge never joins a node
    /// to itself.
    pub fn allowed(&self) -> bool {
        use NodeRef::{Atom, Reference, Subject};
        if self.from == self.to {
            return false;
        }
        match self.kind {
            EdgeKind::Uses => matches!((self.from, self.to), (Subject(_), Subject(_))),
            EdgeKind::Supports => {
                matches!((self.from, self.to), (Atom(_) | Reference(_), Atom(_)))
            }
            EdgeKind::FromSource => matches!((self.from, self.to), (Atom(_), Reference(_))),
            EdgeKind::About | EdgeKind::InContext | EdgeKind::AuthoredBy => {
                matches!((self.from, self.to), (Atom(_), Subject(_)))
            }
            EdgeKind::DependsOn | EdgeKind::Related => {
                matches!((self.from, self.to), (Atom(_), Atom(_) | Subject(_)))
            }
            EdgeKind::Contradicts
            | EdgeKind::Supersedes
            | EdgeKind::Causes
            | EdgeKind::CausedBy
            | EdgeKind::BlockedBy => matches!((self.from, self.to), (Atom(_), Atom(_))),
        }
    }
}

/// Test helper: an ACTIVE observed Fact recorded on 2025-01-01, confidence 0.5,
/// about nothing, in no context.
#[cfg(test)]
pub fn sample_atom(id: AtomId) -> MemoryAtom {
    let t = super::wire::at("2025-01-01");
    MemoryAtom {
        id,
        details: AtomDetails::Fact(FactFields {
            fact_kind: FactKind::Observed,
            observed_count: None,
            first_observed_at: None,
            last_observed_at: None,
        }),
        statement: format!("statement {id}"),
        predicate: None,
        value: None,
        about: None,
        context: Context::Global,
        status: MemoryStatus::Active,
        confidence: 0.5,
        validated_confidence: 0.5,
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
        recorded_at: t,
        retired_at: None,
        last_validated_at: None,
        next_review_at: None,
        review_interval_days: None,
        claim_key: None,
    }
}

#[cfg(test)]
mod tests;
