//! Reflection: the prompt that asks an agent to turn session diaries into rules (the
//! reflection instruction, unchanged, with the answer's shape and the chosen entries),
//! the reader of the agent's JSON answer, and the validator gate that decides, rule
//! by rule: refused (cites no diary entry, or an unknown one), duplicate of an
//! existing rule (adds SUPPORTS and evidence instead of a copy), contradiction of an
//! ACTIVE rule (a new DRAFT linked CONTRADICTS), or a new DRAFT Rule. Knows nothing
//! of the store or the embedder: vectors, when there are any, arrive as numbers.
//!
//! Contradiction is tested deterministically on the wording: both statements are
//! lower-cased, `n't` read as `not`, punctuation dropped; the negating words
//! (`never`, `not`, `avoid`, `stop`) set the polarity by their parity and are
//! removed with the intensifiers (`always`, `do`, `does`, `must`, `should`,
//! `please`); two rules contradict when what remains is the same and the
//! polarities differ: "Always run clippy" / "Never run clippy", "Use X" / "Don't use
//! X", "When X, do Y" / "When X, never Y".

use std::collections::HashSet;
use std::fmt;

use time::OffsetDateTime;

use super::claim::normalise_statement;
use super::model::{
    AtomDetails, AtomId, Context, DiaryEntry, DiaryEntryId, Enforcement, Level, MemoryAtom,
    MemoryStatus, RuleFields, Severity, SubjectId,
};
use super::raw::{parse_json_at, pos_of, Json, JsonValue, ParseError, Pos};
use super::validate::{MAX_STATEMENT, MAX_TAG, MAX_TEXT};
use super::wire::{format_time, parse_uuid, wire_enum};

/// The reflection instruction (docs/memory.md), word for word as it was designed:
/// it is the product's prompt.
pub const INSTRUCTION: &str = "Analyze this session diary and extract actionable rules.
For each pattern you identify:
1. Formulate as an imperative rule (\"Always...\", \"Never...\", \"When X, do Y\")
2. Categorize (testing, debugging, git, architecture, etc.)
3. Assess scope (global, workspace, language, framework)
4. Provide reasoning for why this is valuable

Output format: JSON array of proposed rules";

/// The shape of the answer, appended to the instruction.
pub const ANSWER_SHAPE: &str = "Answer with the JSON array only. Each rule is an object:
{\"rule\": \"Always ...\", \"category\": \"testing\", \"scope\": \"global | workspace | language | framework\", \"reasoning\": \"why this is valuable\", \"diaryEntryIds\": [\"the id of every diary entry below the rule comes from\"]}
A rule that cites no diary entry is refused.";

/// Cosine similarity at or above which two rules are the same rule.
pub const DEFAULT_DUPLICATE_COSINE: f32 = 0.92;

wire_enum! {
    /// How widely a reflected rule applies.
    pub enum ReflectionScope ("scope") {
        /// Everywhere.
        Global = "global",
        /// In the current project.
        Workspace = "workspace",
        /// For one programming language.
        Language = "language",
        /// For one framework.
        Framework = "framework",
    }
}

fn entry_block(e: &DiaryEntry, out: &mut String) {
    out.push_str(&format!(
        "## Diary entry {} ({}",
        e.id,
        format_time(e.recorded_at)
    ));
    if let Some(s) = &e.session {
        out.push_str(&format!(", {s}"));
    }
    out.push_str(")\n");
    for (title, items) in [
        ("Accomplishments", &e.accomplishments),
        ("Decisions", &e.decisions),
        ("Challenges", &e.challenges),
        ("Key learnings", &e.learnings),
    ] {
        if items.is_empty() {
            continue;
        }
        out.push_str(title);
        out.push_str(":\n");
        for i in items {
            out.push_str("- ");
            out.push_str(&i.replace('\n', " "));
            out.push('\n');
        }
    }
}

/// The reflection prompt for the chosen diary entries: the instruction, the answer's
/// shape, then each entry under its id.
pub fn render_prompt(entries: &[DiaryEntry]) -> String {
    let mut out = String::with_capacity(1024);
    out.push_str(INSTRUCTION);
    out.push_str("\n\n");
    out.push_str(ANSWER_SHAPE);
    out.push_str("\n\n# Session diary\n");
    for e in entries {
        out.push('\n');
        entry_block(e, &mut out);
    }
    out
}

/// A rule the agent proposed, read and checked.
#[derive(Debug, Clone, PartialEq)]
pub struct ProposedRule {
    /// The imperative rule.
    pub rule: String,
    /// Its category, lower case (`testing`).
    pub category: String,
    /// How widely it applies.
    pub scope: ReflectionScope,
    /// Why it is valuable.
    pub reasoning: String,
    /// The diary entries it cites.
    pub diary_entry_ids: Vec<DiaryEntryId>,
    /// Where it starts in the answer.
    pub at: Pos,
}

/// A problem with one proposed rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    /// The rule's index in the array.
    pub index: usize,
    /// The field, by its wire name.
    pub field: String,
    /// Where.
    pub at: Pos,
    /// What is wrong and what to send.
    pub message: String,
}

impl fmt::Display for RuleError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "[{}].{} at {}: {}",
            self.index, self.field, self.at, self.message
        )
    }
}

/// Each element of the answer: a rule, or everything wrong with it.
pub type RuleResult = Result<ProposedRule, Vec<RuleError>>;

/// Finds the JSON in an answer: the inside of its first fenced block if it has one
/// (agents like fences), else the whole text.
fn json_span(text: &str) -> (usize, usize) {
    let Some(open) = text.find("```") else {
        return (0, text.len());
    };
    let after = open + 3;
    let body = text
        .get(after..)
        .and_then(|r| r.find('\n'))
        .map_or(after, |n| after + n + 1);
    let close = text
        .get(body..)
        .and_then(|r| r.find("```"))
        .map_or(text.len(), |n| body + n);
    (body, close)
}

fn text_field(
    j: &Json,
    index: usize,
    name: &str,
    max: usize,
    errs: &mut Vec<RuleError>,
) -> Option<String> {
    let err = |at: Pos, message: String| RuleError {
        index,
        field: name.to_string(),
        at,
        message,
    };
    match j.get(name) {
        None
        | Some(Json {
            value: JsonValue::Null,
            ..
        }) => {
            errs.push(err(j.at, format!("missing: send `{name}` as a text")));
            None
        }
        Some(Json {
            value: JsonValue::Text(s),
            at,
        }) => {
            let t = s.trim();
            if t.is_empty() {
                errs.push(err(*at, "is empty".into()));
                None
            } else if t.len() > max {
                errs.push(err(
                    *at,
                    format!("is {} bytes: send at most {max}", t.len()),
                ));
                None
            } else {
                Some(t.to_string())
            }
        }
        Some(other) => {
            errs.push(err(other.at, "must be a text".into()));
            None
        }
    }
}

fn one_rule(j: &Json, index: usize) -> RuleResult {
    let mut errs = Vec::new();
    if !matches!(j.value, JsonValue::Map(_)) {
        return Err(vec![RuleError {
            index,
            field: String::new(),
            at: j.at,
            message: "must be an object with rule, category, scope, reasoning, diaryEntryIds"
                .into(),
        }]);
    }
    let rule = text_field(j, index, "rule", MAX_STATEMENT, &mut errs);
    let category = text_field(j, index, "category", MAX_TAG, &mut errs).map(|c| c.to_lowercase());
    let scope =
        text_field(j, index, "scope", MAX_TAG, &mut errs).and_then(
            |s| match ReflectionScope::parse(&s) {
                Ok(v) => Some(v),
                Err(e) => {
                    let at = j.get("scope").map_or(j.at, |v| v.at);
                    errs.push(RuleError {
                        index,
                        field: "scope".into(),
                        at,
                        message: e.to_string(),
                    });
                    None
                }
            },
        );
    let reasoning = text_field(j, index, "reasoning", MAX_TEXT, &mut errs);
    let mut ids = Vec::new();
    match j.get("diaryEntryIds") {
        None
        | Some(Json {
            value: JsonValue::Null,
            ..
        }) => {}
        Some(Json {
            value: JsonValue::List(items),
            ..
        }) => {
            for (k, item) in items.iter().enumerate() {
                match &item.value {
                    JsonValue::Text(s) => match parse_uuid(s) {
                        Ok(v) => {
                            if !ids.contains(&DiaryEntryId(v)) {
                                ids.push(DiaryEntryId(v));
                            }
                        }
                        Err(e) => errs.push(RuleError {
                            index,
                            field: format!("diaryEntryIds[{k}]"),
                            at: item.at,
                            message: e.to_string(),
                        }),
                    },
                    _ => errs.push(RuleError {
                        index,
                        field: format!("diaryEntryIds[{k}]"),
                        at: item.at,
                        message: "must be a diary entry id (a UUID text)".into(),
                    }),
                }
            }
        }
        Some(other) => errs.push(RuleError {
            index,
            field: "diaryEntryIds".into(),
            at: other.at,
            message: "must be a list of diary entry ids".into(),
        }),
    }
    match (rule, category, scope, reasoning) {
        (Some(rule), Some(category), Some(scope), Some(reasoning)) if errs.is_empty() => {
            Ok(ProposedRule {
                rule,
                category,
                scope,
                reasoning,
                diary_entry_ids: ids,
                at: j.at,
            })
        }
        _ => Err(errs),
    }
}

/// Reads the agent's answer: a JSON array (bare or in a fenced block) of rules. A
/// text that is not such an array fails whole, with the place; a rule that is
/// malformed fails alone, with its field and place. Extra fields are ignored, so one
/// chatty field does not lose a rule.
pub fn parse_rules(text: &str) -> Result<Vec<RuleResult>, ParseError> {
    let (start, end) = json_span(text);
    let j = parse_json_at(text, pos_of(text, start), end)?;
    match &j.value {
        JsonValue::List(items) => Ok(items
            .iter()
            .enumerate()
            .map(|(i, r)| one_rule(r, i))
            .collect()),
        _ => Err(ParseError {
            at: j.at,
            message: "expected a JSON array of rules".into(),
        }),
    }
}

/// A rule's wording reduced for the contradiction test: its core and whether it is
/// negative.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stance {
    /// The words that remain once negations and intensifiers are removed.
    pub core: String,
    /// Whether an odd number of negating words was removed.
    pub negative: bool,
}

/// The stance of a statement (see the module comment).
pub fn stance(statement: &str) -> Stance {
    let expanded = statement
        .to_lowercase()
        .replace("n't", " not")
        .replace("n’t", " not");
    let norm = normalise_statement(&expanded);
    let mut negative = false;
    let mut core: Vec<&str> = Vec::new();
    for w in norm.split(' ') {
        match w {
            "never" | "not" | "avoid" | "stop" => negative = !negative,
            "always" | "do" | "does" | "must" | "should" | "please" => {}
            // `don't` became `do not`, `won't` `wo not`, `can't` `ca not`.
            "wo" | "ca" => {}
            _ => core.push(w),
        }
    }
    Stance {
        core: core.join(" "),
        negative,
    }
}

/// An existing Rule atom the gate compares against.
#[derive(Debug, Clone, Copy)]
pub struct ExistingRule<'a> {
    /// The atom.
    pub id: AtomId,
    /// Its statement.
    pub statement: &'a str,
    /// Its status (retired ones are ignored).
    pub status: MemoryStatus,
    /// Its embedding, if the caller has one.
    pub vector: Option<&'a [f32]>,
}

/// How a duplicate was recognised.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SameBy {
    /// The same normalised statement.
    Statement,
    /// Vectors this close.
    Cosine(f32),
}

/// The gate's verdict on one proposed rule.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Not ingested.
    Refused {
        /// Why.
        reason: String,
    },
    /// The same as an existing rule: add its diary entries as evidence (SUPPORTS) of
    /// that rule, write no new atom.
    Duplicate {
        /// The existing rule.
        of: AtomId,
        /// How it was recognised.
        by: SameBy,
        /// The diary entries to add as evidence.
        evidence: Vec<DiaryEntryId>,
    },
    /// The same as an earlier rule of this answer: its entries join that one's.
    DuplicateInBatch {
        /// The earlier rule's index.
        of: usize,
        /// The diary entries to add.
        evidence: Vec<DiaryEntryId>,
    },
    /// Contradicts ACTIVE rules: write a DRAFT linked CONTRADICTS to each.
    Contradicts {
        /// The ACTIVE rules it contradicts.
        atoms: Vec<AtomId>,
        /// The rule to write.
        draft: DraftRule,
    },
    /// A new DRAFT Rule.
    Draft(DraftRule),
}

/// A rule to write as a DRAFT Rule atom.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftRule {
    /// The rule as proposed.
    pub rule: ProposedRule,
}

impl DraftRule {
    /// The DRAFT Rule atom for this rule: severity `should` (one session's lesson is
    /// advice until confirmed), enforcement manual, the reasoning as notes, tagged
    /// with its category and `scope:<scope>`; a `workspace` rule is scoped to the
    /// asking project, the others are Global. Its evidence (the cited diary entries
    /// as `diary` references) is the caller's to link.
    pub fn to_atom(
        &self,
        id: AtomId,
        project: Option<SubjectId>,
        now: OffsetDateTime,
    ) -> MemoryAtom {
        let r = &self.rule;
        let context = match (r.scope, project) {
            (ReflectionScope::Workspace, Some(p)) => Context::In(p),
            _ => Context::Global,
        };
        MemoryAtom {
            id,
            details: AtomDetails::Rule(RuleFields {
                severity: Severity::Should,
                enforcement: Some(Enforcement::Manual),
                exceptions: None,
                owner: None,
            }),
            statement: r.rule.clone(),
            predicate: None,
            value: None,
            about: None,
            context,
            status: MemoryStatus::Draft,
            confidence: 0.5,
            validated_confidence: 0.5,
            importance: Level::Med,
            title: None,
            summary: None,
            notes: Some(r.reasoning.clone()),
            resolution: None,
            tags: vec![r.category.clone(), format!("scope:{}", r.scope)],
            author: Some("reflection".into()),
            confirmation: None,
            valid_from: None,
            valid_to: None,
            recorded_at: now,
            retired_at: None,
            last_validated_at: None,
            next_review_at: None,
            review_interval_days: None,
            claim_key: None,
        }
    }
}

fn cosine(a: &[f32], b: &[f32]) -> Option<f32> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    let (mut dot, mut na, mut nb) = (0.0f32, 0.0f32, 0.0f32);
    for (x, y) in a.iter().zip(b) {
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    (na > 0.0 && nb > 0.0).then(|| dot / (na.sqrt() * nb.sqrt()))
}

/// What the gate compares proposals with.
pub struct GateContext<'a> {
    /// Whether a diary entry exists.
    pub known_entry: &'a dyn Fn(DiaryEntryId) -> bool,
    /// Existing Rule atoms.
    pub existing: &'a [ExistingRule<'a>],
    /// One vector per proposal, in order, when the caller embeds them.
    pub vectors: Option<&'a [Vec<f32>]>,
    /// Cosine at or above which two rules are one.
    pub duplicate_cosine: f32,
}

/// Decides each proposed rule, in order (see the module comment): refused when it
/// cites no diary entry or an unknown one; a contradiction when its stance opposes
/// an ACTIVE rule's; a duplicate when its normalised statement equals an existing
/// rule's or its vector is close enough to one of the same polarity; a duplicate of
/// an earlier proposal of the same answer likewise; otherwise a new DRAFT.
pub fn gate(proposals: &[ProposedRule], ctx: &GateContext<'_>) -> Vec<Verdict> {
    let live: Vec<(ExistingRule<'_>, String, Stance)> = ctx
        .existing
        .iter()
        .filter(|e| !e.status.is_retired())
        .map(|e| (*e, normalise_statement(e.statement), stance(e.statement)))
        .collect();
    let mut accepted: Vec<(usize, String, Stance)> = Vec::new();
    let mut out = Vec::with_capacity(proposals.len());
    for (i, p) in proposals.iter().enumerate() {
        if p.diary_entry_ids.is_empty() {
            out.push(Verdict::Refused {
                reason: "cites no diary entry: name the diaryEntryIds the rule comes from".into(),
            });
            continue;
        }
        let unknown: Vec<String> = p
            .diary_entry_ids
            .iter()
            .filter(|d| !(ctx.known_entry)(**d))
            .map(|d| d.to_string())
            .collect();
        if !unknown.is_empty() {
            out.push(Verdict::Refused {
                reason: format!("cites unknown diary entries: {}", unknown.join(", ")),
            });
            continue;
        }
        let norm = normalise_statement(&p.rule);
        let st = stance(&p.rule);
        let vector = ctx.vectors.and_then(|v| v.get(i)).map(|v| v.as_slice());
        let contradicted: Vec<AtomId> = live
            .iter()
            .filter(|(e, _, s)| {
                e.status == MemoryStatus::Active && s.core == st.core && s.negative != st.negative
            })
            .map(|(e, _, _)| e.id)
            .collect();
        let evidence = p.diary_entry_ids.clone();
        if !contradicted.is_empty() {
            accepted.push((i, norm, st));
            out.push(Verdict::Contradicts {
                atoms: contradicted,
                draft: DraftRule { rule: p.clone() },
            });
            continue;
        }
        if let Some((e, _, _)) = live.iter().find(|(_, n, _)| *n == norm) {
            out.push(Verdict::Duplicate {
                of: e.id,
                by: SameBy::Statement,
                evidence,
            });
            continue;
        }
        let close = vector.and_then(|v| {
            live.iter()
                .filter(|(_, _, s)| s.negative == st.negative)
                .filter_map(|(e, _, _)| Some((e.id, cosine(v, e.vector?)?)))
                .filter(|(_, c)| *c >= ctx.duplicate_cosine)
                .max_by(|a, b| a.1.total_cmp(&b.1))
        });
        if let Some((of, c)) = close {
            out.push(Verdict::Duplicate {
                of,
                by: SameBy::Cosine(c),
                evidence,
            });
            continue;
        }
        let earlier = accepted.iter().find(|(j, n, s)| {
            *n == norm
                || (s.negative == st.negative
                    && vector
                        .zip(ctx.vectors.and_then(|v| v.get(*j)))
                        .and_then(|(a, b)| cosine(a, b))
                        .is_some_and(|c| c >= ctx.duplicate_cosine))
        });
        if let Some((j, _, _)) = earlier {
            out.push(Verdict::DuplicateInBatch { of: *j, evidence });
            continue;
        }
        accepted.push((i, norm, st));
        out.push(Verdict::Draft(DraftRule { rule: p.clone() }));
    }
    out
}

/// The diary entries a verdict asks the caller to link as evidence.
pub fn cited(v: &Verdict) -> HashSet<DiaryEntryId> {
    match v {
        Verdict::Refused { .. } => HashSet::new(),
        Verdict::Duplicate { evidence, .. } | Verdict::DuplicateInBatch { evidence, .. } => {
            evidence.iter().copied().collect()
        }
        Verdict::Contradicts { draft, .. } | Verdict::Draft(draft) => {
            draft.rule.diary_entry_ids.iter().copied().collect()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::wire::at;
    use super::*;

    const E1: DiaryEntryId = DiaryEntryId(0xe1);
    const E2: DiaryEntryId = DiaryEntryId(0xe2);

    fn entry(id: DiaryEntryId) -> DiaryEntry {
        DiaryEntry {
            id,
            recorded_at: at("2025-11-14T10:00:00Z"),
            session: Some("task 42".into()),
            accomplishments: vec!["added the memory core".into()],
            decisions: vec![],
            challenges: vec!["clippy failed in CI twice".into()],
            learnings: vec!["run clippy before pushing".into()],
        }
    }

    #[test]
    fn the_prompt_keeps_the_spec_text_and_lists_the_entries() {
        let p = render_prompt(&[entry(E1), entry(E2)]);
        assert!(p.starts_with("Analyze this session diary and extract actionable rules.\nFor each pattern you identify:\n1. Formulate as an imperative rule (\"Always...\", \"Never...\", \"When X, do Y\")"));
        assert!(p.contains(
            "Output format: JSON array of proposed rules\n\nAnswer with the JSON array only."
        ));
        assert!(p.contains("diaryEntryIds"));
        assert!(p.contains(&format!("## Diary entry {E1} (2025-11-14T10:00:00.000Z, task 42)\nAccomplishments:\n- added the memory core\nChallenges:")));
        assert!(p.contains(&E2.to_string()));
        assert!(!p.contains("Decisions:\n"));
    }

    fn answer(rules: &[(&str, &str, &[DiaryEntryId])]) -> String {
        let items: Vec<String> = rules
            .iter()
            .map(|(rule, scope, ids)| {
                let ids: Vec<String> = ids.iter().map(|i| format!("\"{i}\"")).collect();
                format!(
                    "  {{\"rule\": \"{rule}\", \"category\": \"Git\", \"scope\": \"{scope}\", \"reasoning\": \"saves a CI round\", \"diaryEntryIds\": [{}], \"confidence\": 0.8}}",
                    ids.join(", ")
                )
            })
            .collect();
        format!(
            "Here are the rules:\n```json\n[\n{}\n]\n```\n",
            items.join(",\n")
        )
    }

    #[test]
    fn answers_parse_with_places_and_per_rule_errors() {
        let text = answer(&[("Always run clippy before pushing", "global", &[E1])]);
        let rules = parse_rules(&text).unwrap();
        let r = rules[0].as_ref().unwrap();
        assert_eq!(r.category, "git");
        assert_eq!(r.scope, ReflectionScope::Global);
        assert_eq!(r.diary_entry_ids, [E1]);
        assert_eq!((r.at.line, r.at.column), (4, 3));

        let text = "[{\"rule\": \"x\", \"category\": \"git\", \"scope\": \"galaxy\", \"reasoning\": \"r\", \"diaryEntryIds\": [\"nope\"]}, 3]";
        let rules = parse_rules(text).unwrap();
        let e = rules[0].as_ref().unwrap_err();
        assert_eq!(
            e.iter().map(|e| e.field.as_str()).collect::<Vec<_>>(),
            ["scope", "diaryEntryIds[0]"]
        );
        assert!(e[0]
            .message
            .contains("global, workspace, language, framework"));
        assert_eq!(e[0].at.column, 44);
        assert!(rules[1].is_err());
        let e = parse_rules("```json\n[{\"rule\": }]\n```").unwrap_err();
        assert_eq!((e.at.line, e.at.column), (2, 11));
        assert!(parse_rules("{\"rule\": \"x\"}")
            .unwrap_err()
            .message
            .contains("array"));
    }

    #[test]
    fn stances_find_opposites() {
        let a = stance("Always run clippy before pushing.");
        let b = stance("Never run clippy before pushing");
        assert_eq!(a.core, b.core);
        assert_ne!(a.negative, b.negative);
        assert_eq!(
            stance("Use unwrap in tests").core,
            stance("Don't use unwrap in tests").core
        );
        assert!(stance("Don't use unwrap in tests").negative);
        assert!(!stance("When a test is flaky, do not ignore it, never").negative);
        assert_eq!(
            stance("When CI fails, do rerun locally").core,
            stance("When CI fails, never rerun locally").core
        );
        assert_ne!(stance("Use zod").core, stance("Use yup").core);
    }

    #[test]
    fn the_gate_refuses_merges_links_and_drafts() {
        let text = answer(&[
            ("Always run clippy before pushing", "global", &[E1]),
            (
                "Never squash merge release branches",
                "workspace",
                &[E1, E2],
            ),
            ("Prefer small commits", "global", &[]),
            (
                "Write the changelog entry first",
                "global",
                &[DiaryEntryId(0x99)],
            ),
            ("Keep PRs under 400 lines", "global", &[E2]),
            ("keep PRs under 400 lines!", "global", &[E1]),
            ("Pin toolchains in CI", "global", &[E2]),
        ]);
        let proposals: Vec<ProposedRule> = parse_rules(&text)
            .unwrap()
            .into_iter()
            .map(|r| r.unwrap())
            .collect();
        let existing = [
            ExistingRule {
                id: AtomId(1),
                statement: "always run clippy before pushing",
                status: MemoryStatus::Proposed,
                vector: None,
            },
            ExistingRule {
                id: AtomId(2),
                statement: "Always squash merge release branches",
                status: MemoryStatus::Active,
                vector: None,
            },
            ExistingRule {
                id: AtomId(3),
                statement: "Pin the toolchain version in CI",
                status: MemoryStatus::Active,
                vector: Some(&[1.0, 0.0, 0.1]),
            },
            ExistingRule {
                id: AtomId(4),
                statement: "Keep PRs under 400 lines",
                status: MemoryStatus::Superseded,
                vector: None,
            },
        ];
        let vectors: Vec<Vec<f32>> = vec![vec![0.0, 1.0, 0.0]; 6]
            .into_iter()
            .chain([vec![1.0, 0.0, 0.12]])
            .collect();
        let known = |d: DiaryEntryId| d == E1 || d == E2;
        let v = gate(
            &proposals,
            &GateContext {
                known_entry: &known,
                existing: &existing,
                vectors: Some(&vectors),
                duplicate_cosine: DEFAULT_DUPLICATE_COSINE,
            },
        );
        assert!(
            matches!(&v[0], Verdict::Duplicate { of: AtomId(1), by: SameBy::Statement, evidence } if evidence == &[E1])
        );
        assert!(matches!(&v[1], Verdict::Contradicts { atoms, .. } if atoms == &[AtomId(2)]));
        assert!(
            matches!(&v[2], Verdict::Refused { reason } if reason.contains("cites no diary entry"))
        );
        assert!(
            matches!(&v[3], Verdict::Refused { reason } if reason.contains("unknown diary entries"))
        );
        assert!(matches!(&v[4], Verdict::Draft(_)));
        assert!(matches!(&v[5], Verdict::DuplicateInBatch { of: 4, .. }));
        assert!(
            matches!(&v[6], Verdict::Duplicate { of: AtomId(3), by: SameBy::Cosine(c), .. } if *c > 0.99)
        );
        assert_eq!(cited(&v[1]), [E1, E2].into_iter().collect());

        let Verdict::Contradicts { draft, .. } = &v[1] else {
            panic!()
        };
        let a = draft.to_atom(AtomId(10), Some(SubjectId(7)), at("2025-11-15"));
        assert_eq!(a.status, MemoryStatus::Draft);
        assert_eq!(a.context, Context::In(SubjectId(7)));
        assert_eq!(a.tags, ["git", "scope:workspace"]);
        assert!(matches!(
            a.details,
            AtomDetails::Rule(RuleFields {
                severity: Severity::Should,
                ..
            })
        ));
    }
}
