//! Graph values turned into the JSON agents read, by hand, so a rename in the domain
//! cannot silently change the public answer.

use serde_json::{json, Map, Value};

use crate::domain::graph::{Atom, ChangelogEntry, Molecule};
use crate::service::context::{Context, ContextAtom, ContextMolecule, Hints, Omitted, TaskContext};
use crate::service::graph::{Node, NodeView, Resolved};

pub fn entry(e: &ChangelogEntry) -> Value {
    json!({
        "id": e.id,
        "parentType": e.parent_type.as_str(),
        "parentId": e.parent_id,
        "taskId": e.task_id,
        "summary": e.summary,
        "createdAt": e.created_at,
    })
}

/// A changelog entry inside its parent: the parent is implied.
fn inline_entry(e: &ChangelogEntry) -> Value {
    json!({ "taskId": e.task_id, "summary": e.summary, "createdAt": e.created_at })
}

fn related(r: &[Resolved], key: &str) -> Value {
    Value::Array(
        r.iter()
            .map(|(x, name)| {
                let mut m = Map::new();
                m.insert(key.into(), json!(x.id));
                match name {
                    Some(n) => {
                        m.insert("name".into(), json!(n));
                    }
                    // The target was deleted after the link was written.
                    None => {
                        m.insert("missing".into(), json!(true));
                    }
                }
                m.insert("reason".into(), json!(x.reason));
                Value::Object(m)
            })
            .collect(),
    )
}

/// An atom's stored fields; its knowledge text only if `knowledge`.
fn atom_fields(a: &Atom, knowledge: bool) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("id".into(), json!(a.id));
    m.insert("projectId".into(), json!(a.project_id));
    m.insert("moleculeId".into(), json!(a.molecule_id));
    m.insert("name".into(), json!(a.name));
    m.insert("paths".into(), json!(a.paths));
    if knowledge {
        m.insert("knowledge".into(), json!(a.knowledge));
    }
    m.insert("createdByTaskId".into(), json!(a.created_by_task_id));
    m.insert("lastTaskId".into(), json!(a.last_task_id));
    m.insert("version".into(), json!(a.version));
    m.insert("createdAt".into(), json!(a.created_at));
    m.insert("updatedAt".into(), json!(a.updated_at));
    m
}

/// A molecule's stored fields; its knowledge text only if `knowledge`.
fn molecule_fields(x: &Molecule, knowledge: bool) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("id".into(), json!(x.id));
    m.insert("projectId".into(), json!(x.project_id));
    m.insert("name".into(), json!(x.name));
    if knowledge {
        m.insert("knowledge".into(), json!(x.knowledge));
    }
    m.insert("createdByTaskId".into(), json!(x.created_by_task_id));
    m.insert("lastTaskId".into(), json!(x.last_task_id));
    m.insert("version".into(), json!(x.version));
    m.insert("createdAt".into(), json!(x.created_at));
    m.insert("updatedAt".into(), json!(x.updated_at));
    m
}

pub fn node_name(n: &Node) -> &str {
    match n {
        Node::Atom(a) => &a.name,
        Node::Molecule(m) => &m.name,
    }
}

/// A node as a write answers it: its stored fields, related ids unresolved, and the
/// knowledge's size instead of its text. The caller sent that text (or the part it
/// appended); echoing it back would cost an agent its tokens again on every write,
/// up to 32 KB for an append to a full atom. `get` reads it.
pub fn bare_node(n: &Node) -> Value {
    let (mut m, knowledge) = match n {
        Node::Atom(a) => (bare_atom(a), &a.knowledge),
        Node::Molecule(x) => (bare_molecule(x), &x.knowledge),
    };
    m.insert("knowledgeBytes".into(), json!(knowledge.len()));
    Value::Object(m)
}

fn bare_atom(a: &Atom) -> Map<String, Value> {
    let mut m = atom_fields(a, false);
    m.insert(
        "relatedAtoms".into(),
        Value::Array(
            a.related
                .iter()
                .map(|r| json!({"atomId": r.id, "reason": r.reason}))
                .collect(),
        ),
    );
    m
}

fn bare_molecule(x: &Molecule) -> Map<String, Value> {
    let mut m = molecule_fields(x, false);
    m.insert(
        "relatedMolecules".into(),
        Value::Array(
            x.related
                .iter()
                .map(|r| json!({"moleculeId": r.id, "reason": r.reason}))
                .collect(),
        ),
    );
    m
}

/// A node as `get` and `search` answer it: related names resolved, changelog inline,
/// and for a molecule `get` its member atoms in brief.
pub fn node(v: &NodeView, with_members: bool) -> Value {
    let mut m = match &v.node {
        Node::Atom(a) => {
            let mut m = atom_fields(a, true);
            m.insert("relatedAtoms".into(), related(&v.related, "atomId"));
            m
        }
        Node::Molecule(x) => {
            let mut m = molecule_fields(x, true);
            m.insert("relatedMolecules".into(), related(&v.related, "moleculeId"));
            if with_members {
                m.insert(
                    "atoms".into(),
                    Value::Array(
                        v.members
                            .iter()
                            .map(|a| json!({ "id": a.id, "name": a.name, "paths": a.paths, "version": a.version }))
                            .collect(),
                    ),
                );
            }
            m
        }
    };
    m.insert(
        "changelog".into(),
        Value::Array(v.changelog.iter().map(inline_entry).collect()),
    );
    Value::Object(m)
}

fn context_atom(a: &ContextAtom, with_specificity: bool) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(a.atom.id));
    m.insert("name".into(), json!(a.atom.name));
    m.insert("knowledge".into(), json!(a.atom.knowledge));
    m.insert("paths".into(), json!(a.atom.paths));
    m.insert(
        "matchedPaths".into(),
        Value::Array(a.matched.iter().map(|(p, _)| json!(p)).collect()),
    );
    let mut by = Map::new();
    for (p, pats) in &a.matched {
        by.insert(p.clone(), json!(pats));
    }
    m.insert("matchedBy".into(), Value::Object(by));
    m.insert("relatedAtoms".into(), related(&a.related, "atomId"));
    m.insert(
        "changelog".into(),
        Value::Array(a.changelog.iter().map(inline_entry).collect()),
    );
    if with_specificity {
        m.insert("specificity".into(), json!(a.specificity));
    }
    m.insert("version".into(), json!(a.atom.version));
    Value::Object(m)
}

fn context_molecule(cm: &ContextMolecule, with_specificity: bool) -> Value {
    let mut m = Map::new();
    m.insert("id".into(), json!(cm.molecule.id));
    m.insert("name".into(), json!(cm.molecule.name));
    if cm.knowledge_omitted {
        m.insert("knowledgeOmitted".into(), json!(true));
    } else {
        m.insert("knowledge".into(), json!(cm.molecule.knowledge));
        m.insert(
            "relatedMolecules".into(),
            related(&cm.related, "moleculeId"),
        );
    }
    m.insert("version".into(), json!(cm.molecule.version));
    m.insert(
        "atoms".into(),
        Value::Array(
            cm.atoms
                .iter()
                .map(|a| context_atom(a, with_specificity))
                .collect(),
        ),
    );
    Value::Object(m)
}

fn omitted(o: &[Omitted]) -> Value {
    Value::Array(
        o.iter()
            .map(|x| json!({ "id": x.id, "name": x.name, "specificity": x.specificity }))
            .collect(),
    )
}

fn atom_rank(a: &Value) -> f64 {
    a["specificity"].as_f64().unwrap_or(0.0)
}

fn atom_brief(a: &Value) -> Value {
    json!({ "id": a["id"], "name": a["name"], "specificity": a["specificity"] })
}

/// How to fetch what a context's budget left out.
const CONTEXT_NEXT: &str =
    "query_graph get (entityType atom, id) for one; context again with a larger maxTokens \
                            (0 = all) or fewer paths";

/// The lists a context answer sheds to fit its budget (at the answer's root, or under
/// `graphContext` on a task's get), and where it says what it left out.
pub fn context_budget(
    under_task: bool,
) -> ([crate::mcp::budget::Shed; 2], crate::mcp::budget::Summary) {
    use crate::mcp::budget::{Shed, Summary};
    let (mol, orphan, at, est) = if under_task {
        (
            "/graphContext/molecules/*/atoms",
            "/graphContext/orphanAtoms",
            "/graphContext/budget",
            "/graphContext/budget/estimatedTokens",
        )
    } else {
        (
            "/molecules/*/atoms",
            "/orphanAtoms",
            "/budget",
            "/budget/estimatedTokens",
        )
    };
    let shed = |at| Shed {
        at,
        rank: |a, _| atom_rank(a),
        brief: atom_brief,
        keep_first: 0,
        summary: "omittedAtoms",
    };
    (
        [shed(mol), shed(orphan)],
        Summary {
            at,
            counts: "omittedCount",
            next: CONTEXT_NEXT,
            estimate: Some(est),
            capped: &["omittedMoleculeKnowledge"],
            fetch: &[],
        },
    )
}

/// Fits a context answer (or a task's get carrying one) into `max_tokens`; `cover` is
/// the context's [`context_cover`], for the message of a context answer.
pub fn fit_context(
    r: &mut crate::mcp::envelope::Reply,
    max_tokens: usize,
    under_task: bool,
    cover: &str,
) {
    let (sheds, summary) = context_budget(under_task);
    let fixed = r.message.clone();
    let message = |d: &Value| -> String {
        if under_task {
            fixed.clone()
        } else {
            context_message_of(d, cover)
        }
    };
    crate::mcp::budget::fit(r, max_tokens, &sheds, &summary, &message, &|_, _| {});
}

/// A context's message from its answer as sent, after the budget shed what it had to.
fn context_message_of(d: &Value, cover: &str) -> String {
    let len = |v: &Value| v.as_array().map_or(0, Vec::len);
    let mols = d["molecules"].as_array().map_or(&[][..], |v| v.as_slice());
    let atoms: usize =
        mols.iter().map(|m| len(&m["atoms"])).sum::<usize>() + len(&d["orphanAtoms"]);
    let mut s = format!(
        "{atoms} atom(s) in {} molecule(s) cover {cover}",
        mols.len()
    );
    let unmatched = len(&d["unmatchedPaths"]);
    if unmatched > 0 {
        s.push_str(&format!("; {unmatched} unmatched (knowledge gaps)"));
    }
    let left: u64 = d["budget"]["omittedCount"]
        .as_object()
        .map_or(0, |m| m.values().filter_map(Value::as_u64).sum());
    if left > 0 {
        s.push_str(&format!(
            "; {left} item(s) left out to stay within {} tokens (budget.omittedCount, budget.next)",
            d["budget"]["maxTokens"]
        ));
    }
    s
}

pub fn context(c: &Context) -> Value {
    let with_spec = c.budget.is_some();
    let mut m = Map::new();
    m.insert(
        "molecules".into(),
        Value::Array(
            c.molecules
                .iter()
                .map(|x| context_molecule(x, with_spec))
                .collect(),
        ),
    );
    m.insert(
        "orphanAtoms".into(),
        Value::Array(
            c.orphan_atoms
                .iter()
                .map(|a| context_atom(a, with_spec))
                .collect(),
        ),
    );
    m.insert("unmatchedPaths".into(), json!(c.unmatched_paths));
    if !c.refused_paths.is_empty() {
        m.insert(
            "refusedPaths".into(),
            Value::Array(
                c.refused_paths
                    .iter()
                    .map(|(p, why)| json!({ "path": p, "reason": why }))
                    .collect(),
            ),
        );
    }
    if !c.near_misses.is_empty() {
        let mut nm = Map::new();
        for (p, misses) in &c.near_misses {
            nm.insert(
                p.clone(),
                Value::Array(
                    misses
                        .iter()
                        .map(|x| json!({ "atomId": x.atom_id, "atomName": x.atom_name, "pattern": x.pattern }))
                        .collect(),
                ),
            );
        }
        m.insert("nearMisses".into(), Value::Object(nm));
    }
    if let Some(b) = &c.budget {
        m.insert(
            "budget".into(),
            json!({
                "maxTokens": b.max_tokens,
                "estimatedTokens": b.estimated_tokens,
                "omittedAtoms": omitted(&b.omitted_atoms),
                "omittedMoleculeKnowledge": omitted(&b.omitted_molecule_knowledge),
            }),
        );
    }
    Value::Object(m)
}

pub fn context_message(c: &Context) -> String {
    let atoms: usize =
        c.molecules.iter().map(|m| m.atoms.len()).sum::<usize>() + c.orphan_atoms.len();
    let mut s = format!(
        "{atoms} atom(s) in {} molecule(s) cover {}",
        c.molecules.len(),
        context_cover(c)
    );
    if !c.unmatched_paths.is_empty() {
        s.push_str(&format!(
            "; {} unmatched (knowledge gaps)",
            c.unmatched_paths.len()
        ));
    }
    s
}

/// "N of M path(s)": how many of the paths asked about some atom covers.
pub fn context_cover(c: &Context) -> String {
    let total = c.paths.len()
        + c.unmatched_paths
            .iter()
            .filter(|p| !c.paths.contains(p))
            .count();
    format!("{} of {total} path(s)", total - c.unmatched_paths.len())
}

/// `graphHints` on `advance`, in the port's words (docs/graph.md, graph hints on
/// advance), plus the atoms the task's Context
/// Files touch (with the version an update needs) and the paths no atom covers.
pub fn hints(h: &Hints) -> Value {
    let mut v = json!({
        "message": "Task completed. Consider updating the knowledge graph.",
        "suggestedActions": [
            "Update atom knowledge for areas affected by this task",
            "Update atom paths if files were moved or new directories created",
            "Append changelog entries for significant changes"
        ],
    });
    if !h.atoms.is_empty() {
        v["matchedAtoms"] = Value::Array(
            h.atoms
                .iter()
                .map(|(id, name, version)| json!({ "id": id, "name": name, "version": version }))
                .collect(),
        );
    }
    if !h.unmatched_paths.is_empty() {
        v["unmatchedPaths"] = json!(h.unmatched_paths);
        if let Some(a) = v["suggestedActions"].as_array_mut() {
            a.push(json!(
                "Create atoms for unmatchedPaths: areas with no knowledge yet"
            ));
        }
    }
    v
}

/// `graphContext` on a task `get`: the paths read from its Context Files and what the
/// graph knows about them.
pub fn task_context(tc: &TaskContext) -> Value {
    let mut v = match &tc.context {
        Some(c) => context(c),
        None => json!({ "molecules": [], "orphanAtoms": [], "unmatchedPaths": [] }),
    };
    v["paths"] = json!(tc.paths);
    if let Some(n) = &tc.note {
        v["note"] = json!(n);
    }
    v
}
