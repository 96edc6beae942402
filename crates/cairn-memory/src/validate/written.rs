//! An atom's or subject's own fields written back in the input's form, named as
//! [`atom`] and [`subject`] read them: what the tools answer, and what an update
//! merges the fields it is sent into before validating the whole again. The store
//! keeps its own form (Cairn's `store::memory::codec`), not this one.

use super::*;
use crate::wire::format_time;

/// Writes a subject's kind-specific fields as wire-named raw values, the form
/// [`subject`] reads.
pub fn subject_detail_fields(d: &SubjectDetails) -> Vec<(&'static str, Raw)> {
    let mut v = Written::default();
    match d {
        SubjectDetails::None => {}
        SubjectDetails::Org(x) => {
            v.text("domain", &x.domain);
            v.list("units", &x.units);
            v.text("policiesIndex", &x.policies_index);
        }
        SubjectDetails::Project(x) => {
            if let Some(s) = x.status {
                v.push(("status", Raw::text(s.as_wire())));
            }
            v.time("startDate", &x.start_date);
            v.time("endDate", &x.end_date);
            v.id("org", &x.org);
            v.list("repoLinks", &x.repo_links);
            v.list("docsLinks", &x.docs_links);
            v.text("domain", &x.domain);
            if let Some(p) = x.orchestrator_project {
                v.push(("orchestratorProject", Raw::Text(SubjectId(p).to_string())));
            }
        }
        SubjectDetails::Person(x) => {
            v.list("roles", &x.roles);
            v.id("org", &x.org);
            v.list("teams", &x.teams);
            v.list("handles", &x.handles);
            v.text("timezone", &x.timezone);
        }
        SubjectDetails::Artifact(x) => {
            v.text("ecosystem", &x.ecosystem);
            v.text("category", &x.category);
            v.text("repo", &x.repo);
            v.text("homepage", &x.homepage);
        }
        SubjectDetails::Stack(x) => {
            v.text("description", &x.description);
            if let Some(s) = x.scope {
                v.push(("scope", Raw::text(s.as_wire())));
            }
        }
        SubjectDetails::Template(x) => {
            v.text("purpose", &x.purpose);
            v.text("location", &x.location);
            v.list("inputs", &x.inputs);
            v.list("outputs", &x.outputs);
            v.text("version", &x.version);
            v.id("maintainer", &x.maintainer);
        }
    }
    v.0
}

/// Writes an atom's type-specific fields back as wire-named raw values, the form
/// [`atom`] reads: the tools answer them as they were sent.
pub fn detail_fields(d: &AtomDetails) -> Vec<(&'static str, Raw)> {
    let mut v = Written::default();
    let wire = |s: &str| Raw::text(s);
    match d {
        AtomDetails::Fact(x) => {
            v.push(("factKind", wire(x.fact_kind.as_wire())));
            if let Some(n) = x.observed_count {
                v.push(("observedCount", Raw::Number(n as f64)));
            }
            v.time("firstObservedAt", &x.first_observed_at);
            v.time("lastObservedAt", &x.last_observed_at);
        }
        AtomDetails::Assumption(x) => {
            v.push(("validationMethod", Raw::text(&x.validation_method)));
            if let Some(r) = x.risk_if_wrong {
                v.push(("riskIfWrong", wire(r.as_wire())));
            }
            v.text("owner", &x.owner);
            v.time("deadline", &x.deadline);
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
            v.list("alternatives", &x.alternatives);
            v.list("consequences", &x.consequences);
            v.text("reviewTrigger", &x.review_trigger);
            if let Some(e) = x.enforcement {
                v.push(("enforcement", wire(e.as_wire())));
            }
        }
        AtomDetails::Rule(x) => {
            v.push(("severity", wire(x.severity.as_wire())));
            if let Some(e) = x.enforcement {
                v.push(("enforcement", wire(e.as_wire())));
            }
            v.text("exceptions", &x.exceptions);
            v.text("owner", &x.owner);
        }
        AtomDetails::Convention(x) => {
            v.push(("area", wire(x.area.as_wire())));
            v.list("examplesGood", &x.examples_good);
            v.list("examplesBad", &x.examples_bad);
            v.push(("severity", wire(x.severity.as_wire())));
            v.text("owner", &x.owner);
        }
        AtomDetails::BestPractice(x) => {
            v.push(("goal", Raw::text(&x.goal)));
            v.text("applicability", &x.applicability);
            v.text("tradeoffs", &x.tradeoffs);
            if let Some(q) = x.evidence_quality {
                v.push(("evidenceQuality", wire(q.as_wire())));
            }
        }
        AtomDetails::KnowHow(x) => {
            v.push(("steps", Raw::texts(&x.steps)));
            v.list("inputs", &x.inputs);
            v.list("outputs", &x.outputs);
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
            v.list("examples", &x.examples);
            v.time("lastTestedAt", &x.last_tested_at);
        }
        AtomDetails::Pattern(x) => {
            v.push(("problem", Raw::text(&x.problem)));
            v.text("patternContext", &x.pattern_context);
            v.push(("solution", Raw::text(&x.solution)));
            v.list("forces", &x.forces);
            v.text("tradeoffs", &x.tradeoffs);
            v.list("examples", &x.examples);
        }
        AtomDetails::AntiPattern(x) => {
            v.push(("symptoms", Raw::texts(&x.symptoms)));
            v.text("whyItHappens", &x.why_it_happens);
            v.list("consequences", &x.consequences);
            v.text("refactoringPath", &x.refactoring_path);
        }
        AtomDetails::Trait(x)
        | AtomDetails::Style(x)
        | AtomDetails::Strength(x)
        | AtomDetails::Preference(x) => {
            v.push(("polarity", wire(x.polarity.as_wire())));
            if let Some(s) = x.stability {
                v.push(("stability", wire(s.as_wire())));
            }
            v.list("observations", &x.observations);
        }
        AtomDetails::Cause(x) => {
            v.push(("causeKind", wire(x.cause_kind.as_wire())));
            match x.effect {
                Effect::Atom(a) => v.push(("effectAtom", Raw::Text(a.to_string()))),
                Effect::Subject(s) => v.push(("effectSubject", Raw::Text(s.to_string()))),
            }
            v.text("mechanism", &x.mechanism);
            if let Some(q) = x.evidence_quality {
                v.push(("evidenceQuality", wire(q.as_wire())));
            }
        }
    }
    v.0
}

/// The wire-named raw fields being written: optional ones only when present.
#[derive(Default)]
struct Written(Vec<(&'static str, Raw)>);

impl Written {
    fn push(&mut self, field: (&'static str, Raw)) {
        self.0.push(field);
    }
    fn text(&mut self, k: &'static str, s: &Option<String>) {
        if let Some(s) = s {
            self.push((k, Raw::text(s)));
        }
    }
    fn list(&mut self, k: &'static str, l: &[String]) {
        if !l.is_empty() {
            self.push((k, Raw::texts(l)));
        }
    }
    fn time(&mut self, k: &'static str, t: &Option<OffsetDateTime>) {
        if let Some(t) = t {
            self.push((k, Raw::Text(format_time(*t))));
        }
    }
    fn id(&mut self, k: &'static str, s: &Option<SubjectId>) {
        if let Some(s) = s {
            self.push((k, Raw::Text(s.to_string())));
        }
    }
}
