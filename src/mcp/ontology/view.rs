//! JSON views of the ontology toolset's answers and error details, written by hand so
//! a rename in the domain cannot silently change the wire.

use serde_json::{json, Map, Value};

use crate::domain::ontology::records::ProposalRecord;
use crate::domain::ontology::Problem;
use crate::domain::ontology::Sourced;
use crate::domain::ontology_index::discover::Found;
use crate::domain::ontology_index::Index;
use crate::domain::ontology_query::{NameProblem, Position, QueryError, Repair};
use crate::domain::ontology_query::{NodeId, Value as QValue};
use crate::error::Clash;
use crate::mcp::envelope::round2;
use crate::service::ontology::axioms::Validated;
use crate::service::ontology::interop::Imported;
use crate::service::ontology::propose::{Checked, Proposed};
use crate::service::ontology::read::{Answered, Note, Traversal};
use crate::service::ontology::sync::{Attached, Changes, Status, SyncReport};

pub fn position(p: &Position) -> Value {
    json!({ "line": p.line, "column": p.column, "offset": p.offset })
}

pub fn repair(r: &Repair) -> Value {
    json!({ "kind": r.kind.as_str(), "from": r.from, "to": r.to, "position": position(&r.position) })
}

fn name_problem(p: &NameProblem) -> Value {
    let mut v = json!({
        "kind": p.kind.as_str(),
        "name": p.name,
        "nearest": p.suggestions,
    });
    if let Some(pos) = &p.position {
        v["position"] = position(pos);
    }
    if p.ambiguous {
        v["ambiguous"] = Value::Bool(true);
    }
    v
}

/// A refused query: its kind, where, the unknown names with their nearest known
/// ones, the repairs made before it failed, the text positions refer to, and for a
/// query a bound stopped, which setting (`[ontology]` in the config file) and its
/// value.
pub fn query_error(e: &QueryError, limit: Option<(&str, u64)>) -> Value {
    let mut m = Map::new();
    m.insert("kind".into(), Value::String(e.kind.as_str().into()));
    if let Some((setting, value)) = limit {
        m.insert(
            "limit".into(),
            json!({ "setting": format!("[ontology] {setting}"), "value": value }),
        );
    }
    if let Some(p) = &e.position {
        m.insert("position".into(), position(p));
    }
    if !e.details.problems.is_empty() {
        m.insert(
            "unknownNames".into(),
            Value::Array(e.details.problems.iter().map(name_problem).collect()),
        );
    }
    if !e.details.repairs.is_empty() {
        m.insert(
            "repairs".into(),
            Value::Array(e.details.repairs.iter().map(repair).collect()),
        );
    }
    if !e.details.query.is_empty() {
        m.insert("query".into(), Value::String(e.details.query.clone()));
    }
    Value::Object(m)
}

/// An axiom of a justification: its text and the page line it is on.
pub fn cited(axiom: &str, file: &str, line: usize) -> Value {
    json!({ "axiom": axiom, "page": file, "line": line })
}

pub fn clash(c: &Clash) -> Value {
    json!({
        "consistent": c.consistent,
        "unsatisfiable": c.unsatisfiable,
        "explanation": c.justification.iter().map(|(a, f, l)| cited(a, f, *l)).collect::<Vec<_>>(),
    })
}

pub fn problem(p: &Problem) -> Value {
    let mut v = json!({ "file": p.file, "line": p.line, "message": p.message });
    if p.column > 0 {
        v["column"] = json!(p.column);
    }
    v
}

/// The first `n` characters of a text, with `…` when cut.
fn summary(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        return s.to_string();
    }
    let mut t: String = s.chars().take(n).collect();
    t.push('…');
    t
}

fn definition(ix: &Index, iri: &str) -> String {
    ix.ontology
        .entity(iri)
        .and_then(|e| e.meta.definition())
        .unwrap_or_default()
        .to_string()
}

fn because(axioms: &[Sourced]) -> Vec<Value> {
    axioms
        .iter()
        .map(|s| {
            cited(
                &crate::domain::ontology::ofn::write_axiom(&s.axiom),
                &s.origin.file,
                s.origin.line,
            )
        })
        .collect()
}

/// A class as a task's briefing names it: enough to recognise it, `ontology_read`
/// for the rest.
pub fn class_brief(ix: &Index, iri: &str) -> Value {
    json!({
        "iri": iri,
        "preferredTerm": ix.term(iri),
        "definitionSummary": summary(&definition(ix, iri), 200),
    })
}

/// A discovered class: a `DiscoveryResult` (docs/ontology.md, discovery), with how it
/// was found.
pub fn found(ix: &Index, f: &Found) -> Value {
    let rels: Vec<Value> = ix
        .node(&f.iri)
        .map(|n| ix.relationships(n))
        .unwrap_or_default()
        .into_iter()
        .take(20)
        .map(|(t, to)| json!({ "relType": t, "targetIri": to, "targetTerm": ix.term(to) }))
        .collect();
    json!({
        "iri": f.iri,
        "preferredTerm": ix.term(&f.iri),
        "definitionSummary": summary(&definition(ix, &f.iri), 200),
        "relevanceScore": round2(f.relevance),
        "keywordMatch": round2(f.keyword),
        "qualityScore": round2(f.quality),
        "authorityScore": round2(f.authority),
        "domain": f.domain,
        "relationships": rels,
        "whelkInferred": f.inferred_only,
        "matchedBy": f.found_by.as_str(),
        "via": f.via,
        "hops": f.hops,
    })
}

/// An `EnrichedNote` (docs/ontology.md, reading).
pub fn note(n: &Note) -> Value {
    let ix = &n.served.index;
    let e = ix.ontology.entity(&n.iri);
    let meta = |k: &str| {
        e.and_then(|e| e.meta.get(k))
            .map(str::trim)
            .filter(|v| !v.is_empty())
            .map(str::to_string)
    };
    use crate::domain::ontology::entity::keys;
    let axioms: Vec<Value> = n
        .axioms
        .iter()
        .map(|a| {
            let mut v = json!({ "axiomType": a.kind, "subject": a.subject, "object": a.object, "isInferred": a.inferred });
            if let Some((f, l)) = &a.at {
                v["page"] = json!(f);
                v["line"] = json!(l);
            }
            if !a.because.is_empty() {
                v["explanation"] = Value::Array(because(&a.because));
            }
            v
        })
        .collect();
    let related: Vec<Value> = n
        .related
        .iter()
        .map(|r| {
            json!({
                "iri": r.iri,
                "preferredTerm": ix.term(&r.iri),
                "relationshipType": r.rel_type,
                "direction": if r.outgoing { "outgoing" } else { "incoming" },
                "inferred": r.inferred,
                "summary": summary(&definition(ix, &r.iri), 150),
            })
        })
        .collect();
    let mut v = json!({
        "iri": n.iri,
        "kind": match n.kind {
            crate::domain::ontology::EntityKind::Class => "class",
            crate::domain::ontology::EntityKind::ObjectProperty => "property",
            crate::domain::ontology::EntityKind::Individual => "individual",
        },
        "termId": meta(keys::TERM_ID),
        "preferredTerm": ix.term(&n.iri),
        "page": n.path,
        "markdownContent": n.markdown,
        "ontologyMetadata": {
            "owlClass": n.iri,
            "physicality": meta(keys::PHYSICALITY),
            "role": meta(keys::ROLE),
            "domain": crate::domain::ontology_index::domain_of(&ix.ontology, &n.iri),
            "qualityScore": e.and_then(|e| e.meta.quality_score()).map(round2),
            "authorityScore": e.and_then(|e| e.meta.authority_score()).map(round2),
            "maturity": meta(keys::MATURITY),
            "status": meta(keys::STATUS),
            "parentClasses": n.parents,
        },
        "axioms": axioms,
        "relatedNotes": related,
        "schemaContext": n.schema_context,
    });
    if let Some(q) = &n.quality {
        v["quality"] = quality(q);
    }
    if let Some(why) = &n.unsatisfiable {
        v["unsatisfiable"] = json!({ "explanation": because(why) });
    }
    v
}

fn quality(q: &crate::domain::ontology::quality::QualityReport) -> Value {
    let missing: Vec<Value> = q
        .tiers
        .iter()
        .flat_map(|t| {
            t.missing
                .iter()
                .map(move |m| json!({ "tier": t.tier, "field": m }))
        })
        .collect();
    json!({ "score": round2(q.score), "tierCoverage": q.coverage(), "missing": missing })
}

/// A node of the query graph as an answer shows it.
fn node(ix: &Index, n: NodeId) -> Value {
    let g = &ix.graph;
    let s = |k: &str| match g.property(n, k) {
        Some(QValue::String(x)) => Value::String(x.clone()),
        _ => Value::Null,
    };
    json!({ "iri": s("iri"), "preferredTerm": s("preferredTerm"), "kind": s("kind") })
}

/// A value a query returned.
pub fn value(ix: &Index, v: &QValue) -> Value {
    match v {
        QValue::Null => Value::Null,
        QValue::Bool(b) => Value::Bool(*b),
        QValue::Int(i) => json!(i),
        QValue::Float(x) => serde_json::Number::from_f64(*x)
            .map(Value::Number)
            .unwrap_or(Value::Null),
        QValue::String(s) => Value::String(s.clone()),
        QValue::List(items) => Value::Array(items.iter().map(|x| value(ix, x)).collect()),
        QValue::Node(n) => node(ix, *n),
        QValue::Relationship(e) => {
            let g = &ix.graph;
            let (from, to) = g
                .endpoints(*e)
                .map(|(a, b)| (ix.iri(a).to_string(), ix.iri(b).to_string()))
                .unwrap_or_default();
            let mut r = json!({ "type": g.rel_type(*e), "from": from, "to": to });
            if let Some(QValue::Bool(b)) = g.edge_property(*e, "inferred") {
                r["inferred"] = Value::Bool(*b);
            }
            r
        }
        QValue::Map(m) => Value::Object(m.iter().map(|(k, x)| (k.clone(), value(ix, x))).collect()),
    }
}

pub fn answer(a: &Answered) -> Value {
    let ix = &a.served.index;
    let o = &a.outcome;
    let rows: Vec<Value> = o
        .rows
        .iter()
        .map(|r| Value::Array(r.iter().map(|v| value(ix, v)).collect()))
        .collect();
    json!({
        "columns": o.columns,
        "rows": rows,
        "rowCount": o.rows.len(),
        "truncated": o.truncated,
        "repairs": o.repairs.iter().map(repair).collect::<Vec<_>>(),
        "notes": o.notes,
        "query": o.query,
        "elapsedMs": round2(a.elapsed.as_secs_f32() * 1000.0),
    })
}

pub fn traversal(t: &Traversal) -> Value {
    let ix = &t.served.index;
    let nodes: Vec<Value> = t
        .subgraph
        .nodes
        .iter()
        .map(|r| {
            let mut v = node(ix, r.node);
            v["depth"] = json!(r.depth);
            v
        })
        .collect();
    let edges: Vec<Value> = t
        .subgraph
        .edges
        .iter()
        .map(|&e| value(ix, &QValue::Relationship(e)))
        .collect();
    json!({ "start": t.start, "nodes": nodes, "edges": edges, "truncated": t.subgraph.truncated, "notes": t.subgraph.notes })
}

/// A check's outcome, each of its lists cut to `n` items (the rest counted in
/// `omitted` under the list's name).
fn consistency(c: &Checked, n: usize, omitted: &mut Map<String, Value>) -> Value {
    let mut v = json!({
        "consistent": c.consistent,
        "consistentBefore": c.consistent_before,
        "newSubsumptions": c.gained.len(),
        "gained": first(&c.gained, n, "gained", omitted, pair),
        "lost": first(&c.lost, n, "lost", omitted, pair),
        "newlyUnsatisfiable": first(&c.newly_unsatisfiable, n, "newlyUnsatisfiable", omitted, |s| json!(s)),
        "checkMs": round2(c.elapsed.as_secs_f32() * 1000.0),
    });
    if let Some(cl) = &c.clash {
        v["clash"] = clash(cl);
    }
    v
}

fn pair((a, b): &(String, String)) -> Value {
    json!({ "sub": a, "sup": b })
}

/// Items a bulk answer (an import, a sync, a status) shows of each of its lists: an
/// agent reads the counts and the first problems, never a list a whole ontology long
/// (a 100,000-class import once answered 35 MB). What is left out is counted.
pub const SHOWN: usize = 10;

/// Subsumptions a single proposal's answer lists, gained and lost.
const PAIRS_SHOWN: usize = 50;

/// The first `n` of `items` as JSON; how many were left out goes in `omitted[key]`.
fn first<T>(
    items: &[T],
    n: usize,
    key: &str,
    omitted: &mut Map<String, Value>,
    view: impl Fn(&T) -> Value,
) -> Value {
    if items.len() > n {
        omitted.insert(key.to_string(), json!(items.len() - n));
    }
    Value::Array(items.iter().take(n).map(view).collect())
}

/// `omitted` on `v` when something was left out: per list, how many.
fn with_omitted(mut v: Value, omitted: Map<String, Value>) -> Value {
    if !omitted.is_empty() {
        v["omitted"] = Value::Object(omitted);
    }
    v
}

/// A proposal as `manage_ontology proposals` lists it.
pub fn proposal(p: &ProposalRecord) -> Value {
    let mut v = json!({
        "proposalId": p.id,
        "operation": p.operation,
        "state": p.state.as_str(),
        "targetIri": p.target_iri,
        "termId": p.term_id,
        "branch": p.branch,
        "commit": p.commit_sha,
        "baseCommit": p.base_commit,
        "agentType": p.agent_type,
        "agentId": p.agent_id,
        "taskDescription": p.task_description,
        "confidence": p.confidence,
        "qualityScore": p.quality_score,
        "tierCoverage": p.tier_coverage,
        "newSubsumptions": p.new_subsumptions,
        "version": p.version,
        "createdAt": p.created_at,
    });
    if let Some(n) = p.pr_number {
        v["pullRequest"] = json!({ "number": n, "url": p.pr_url });
    }
    if let Some(e) = &p.push_error {
        v["pushError"] = json!(e);
    }
    if let Some(d) = &p.decided_at {
        v["decidedAt"] = json!(d);
    }
    v
}

/// What `ontology_propose` answers: the proposal, its files and its diff; the
/// page as written (`markdown`) only when `page` is asked for, since the diff
/// already shows every line that changed.
pub fn proposed(p: &Proposed, page: bool) -> Value {
    let mut omitted = Map::new();
    let mut v = staged(p, PAIRS_SHOWN, &mut omitted);
    if let ([one], true) = (p.files.as_slice(), page) {
        v["markdown"] = json!(one.content);
    }
    v["diff"] = json!(p.proposal.diff);
    with_omitted(v, omitted)
}

/// What an OFN import answers: the proposal, how many pages it writes, the first
/// files and skipped constructs, and what was left out counted; never the diff of
/// every page (it is the proposal's commit against its `baseCommit`).
pub fn imported(im: &Imported) -> Value {
    let mut omitted = Map::new();
    let mut v = staged(&im.proposed, SHOWN, &mut omitted);
    v["newPages"] = json!(im.new_pages);
    v["updatedPages"] = json!(im.updated_pages);
    v["skippedCount"] = json!(im.skipped.len());
    v["skipped"] = first(&im.skipped, SHOWN, "skipped", &mut omitted, problem);
    with_omitted(v, omitted)
}

/// A staged proposal's record, files, check and quality, lists cut to `n`.
fn staged(p: &Proposed, n: usize, omitted: &mut Map<String, Value>) -> Value {
    let mut v = proposal(&p.proposal);
    v["files"] = first(
        &p.files,
        n,
        "files",
        omitted,
        |f| json!({ "path": f.path, "blob": f.blob_sha }),
    );
    v["consistency"] = consistency(&p.checked, n, omitted);
    if let Some(q) = &p.quality {
        v["quality"] = quality(q);
    }
    if p.staged_inconsistent {
        v["stagedInconsistent"] = Value::Bool(true);
    }
    v
}

pub fn validated(v: &Validated) -> Value {
    let mut omitted = Map::new();
    let mut out = consistency(&v.checked, PAIRS_SHOWN, &mut omitted);
    out["explained"] = Value::Array(
        v.explained
            .iter()
            .map(|((a, b), why)| json!({ "sub": a, "sup": b, "explanation": because(why) }))
            .collect(),
    );
    out["axioms"] = Value::Array(
        v.axioms
            .iter()
            .map(|s| json!(crate::domain::ontology::ofn::write_axiom(&s.axiom)))
            .collect(),
    );
    with_omitted(out, omitted)
}

pub fn attached(a: &Attached) -> Value {
    let r = &a.repo;
    json!({
        "projectId": r.project_id,
        "repoPath": r.repo_path,
        "pagesDir": r.pages_dir,
        "baseBranch": r.base_branch,
        "github": r.github().map(|(o, n)| json!({ "owner": o, "name": n })),
        "headCommit": a.head,
        "syncedCommit": r.synced_commit,
        "created": a.created,
        "version": r.version,
    })
}

fn changes(c: &Changes) -> Value {
    json!({ "added": c.added, "changed": c.changed, "removed": c.removed, "unchanged": c.unchanged })
}

/// What a sync answers: counts, and the first [`SHOWN`] of each list.
pub fn synced(r: &SyncReport) -> Value {
    let ix = &r.served.index;
    let c = &ix.classification;
    let mut omitted = Map::new();
    let v = json!({
        "commit": r.commit,
        "previousCommit": r.previous,
        "pages": changes(&r.pages),
        "entities": changes(&r.entities),
        "axiomPagesRewritten": r.axiom_pages,
        "axioms": r.axioms,
        "plainPages": r.plain_pages,
        "classes": ix.ontology.iris(crate::domain::ontology::EntityKind::Class).count(),
        "consistent": c.is_consistent(),
        "unsatisfiable": first(&c.unsatisfiable(), SHOWN, "unsatisfiable", &mut omitted, |s| json!(s)),
        "problemCount": r.problems.len(),
        "problems": first(&r.problems, SHOWN, "problems", &mut omitted, problem),
        "proposals": first(&r.decided, SHOWN, "proposals", &mut omitted, |(id, s)| json!({ "proposalId": id, "state": s.as_str() })),
        "unreachable": first(&r.unreachable, SHOWN, "unreachable", &mut omitted, |(id, why)| json!({ "proposalId": id, "reason": why })),
    });
    with_omitted(v, omitted)
}

pub fn status(s: &Status) -> Value {
    let r = &s.repo;
    let mut omitted = Map::new();
    let v = json!({
        "repoPath": r.repo_path,
        "pagesDir": r.pages_dir,
        "baseBranch": r.base_branch,
        "github": r.github().map(|(o, n)| json!({ "owner": o, "name": n })),
        "syncedCommit": r.synced_commit,
        "syncedAt": r.synced_at,
        "headCommit": s.head,
        "behind": s.head.is_some() && s.head != r.synced_commit,
        "entities": s.kinds,
        "axioms": s.axioms,
        "problemCount": s.problems.len(),
        "problems": first(&s.problems, SHOWN, "problems", &mut omitted, |p| json!({ "file": p.file, "line": p.line, "column": p.column, "message": p.message })),
        "proposals": s.proposals,
        "version": r.version,
    });
    with_omitted(v, omitted)
}
