//! `query`: a budgeted subgraph around one entity, grown best-first by relevance to a
//! query (docs/code.md, best-first query).
//!
//! Decisions: a node enters when its raw relevance (cosine to the query; through a
//! RELATED_TO edge with a note, the mean of the note's and the target's similarity) is
//! ≥ `minRelevance`; the budget-scaled score `relevance × global × branch / cost` only
//! orders the frontier, and is recomputed when a node is popped so the order follows
//! the budget as it fills. A branch is the subtree under one neighbour of the root,
//! with `maxTokens / 4` as its budget for `branch_penalty`. Tokens are estimated as
//! characters / 4 of what the answer shows (node, its references, its edges to nodes
//! already in); a node that would overflow `maxTokens` is skipped, so the answer never
//! exceeds it. A root larger than the budget comes back alone with its text cut, marked
//! `truncated`.
//!
//! Irrelevant nodes are passed through, not dead ends (bridges): a node below
//! `minRelevance` is not admitted for itself, but the walk looks past it, through at
//! most two such nodes in a row (a Namespace and a Component between a Feature and its
//! Units), for relevant ones. A relevant node found that way is a frontier entry with
//! its path: admitting it admits the path's nodes with it (marked `bridge`), all or
//! nothing, its cost counting every node and edge added, so the subgraph stays
//! connected around the root and within both budgets. Seeding relevant nodes found
//! anywhere as extra roots was the alternative; it answers nodes with no path to the
//! root, which a subgraph around an entity should not.
//!
//! The project's entities and edges are held in memory per project generation (see
//! `semantic::Cache`), so a query reads nothing but the generation counter when
//! nothing changed.

use std::cmp::Ordering;
use std::collections::{BinaryHeap, HashMap, HashSet};
use std::sync::Arc;

use crate::domain::code::Entity;
use crate::domain::field::Field;
use crate::error::{Error, Result};
use crate::service::code::analysis::{current_lines, Recorded};
use crate::service::code_graph::{GEdge, Graph, RefSummary};
use crate::service::semantic::{self, Mode, Rank, Snapshot};
use crate::service::App;
use crate::store::code as cstore;
use crate::store::semantic::{self as sstore, Fts};

/// Edge kinds a `relationshipTypes` filter may name.
pub const EDGE_KINDS: &[&str] = &[
    "BELONGS_TO",
    "RELATED_TO",
    "CALLS",
    "IMPORTS",
    "IMPLEMENTS",
    "INSTANTIATES",
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Strategy {
    Global,
    BranchPenalty,
}

impl Strategy {
    pub const NAMES: &'static [&'static str] = &["global", "branch_penalty"];
    pub fn parse(s: &str) -> Option<Strategy> {
        match s.to_ascii_lowercase().as_str() {
            "global" => Some(Strategy::Global),
            "branch_penalty" => Some(Strategy::BranchPenalty),
            _ => None,
        }
    }
}

async fn graph(app: &App, project: &str) -> Result<Arc<Graph>> {
    let mut tx = app.store.snapshot().await?;
    // Vectors written (by a background pass, say) leave the graph as it is.
    let generation = sstore::rows_generation(&mut tx, project).await?;
    if let Some(g) = app.semantic.graph(project, generation) {
        return Ok(g);
    }
    let entities = cstore::entities_of_project(&mut tx, project).await?;
    let by_id: HashMap<String, usize> = entities
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.clone(), i))
        .collect();
    let mut edges = Vec::new();
    for (child, parent) in cstore::belongs_of_project(&mut tx, project).await? {
        if let (Some(&f), Some(&t)) = (by_id.get(&child), by_id.get(&parent)) {
            edges.push(GEdge {
                from: f,
                to: t,
                kind: "BELONGS_TO".into(),
                note: None,
            });
        }
    }
    for e in sstore::edges_of_project(&mut tx, project).await? {
        if let (Some(&f), Some(&t)) = (by_id.get(&e.from_id), by_id.get(&e.to_id)) {
            edges.push(GEdge {
                from: f,
                to: t,
                kind: e.kind,
                note: e.note,
            });
        }
    }
    let refs_by_id: HashMap<String, RefSummary> = cstore::references_of_project(&mut tx, project)
        .await?
        .into_iter()
        .map(|r| {
            (
                r.id.clone(),
                RefSummary {
                    id: r.id,
                    document_path: r.document_path,
                    start_line: r.start_line,
                    end_line: r.end_line,
                    description: r.description,
                    blob_sha: r.blob_sha,
                },
            )
        })
        .collect();
    let mut refs = vec![Vec::new(); entities.len()];
    let mut att = cstore::attachments_of_project(&mut tx, project).await?;
    att.sort();
    for (rid, eid) in att {
        if let (Some(&i), Some(r)) = (by_id.get(&eid), refs_by_id.get(&rid)) {
            refs[i].push(r.clone());
        }
    }
    tx.commit().await?;
    let mut adj = vec![Vec::new(); entities.len()];
    for (k, e) in edges.iter().enumerate() {
        adj[e.from].push(k);
        adj[e.to].push(k);
    }
    let g = Arc::new(Graph {
        generation,
        entities,
        refs,
        edges,
        adj,
        by_id,
    });
    app.semantic.put_graph(project, g.clone());
    Ok(g)
}

pub struct QueryReq {
    pub project_id: Option<String>,
    pub entity_id: Option<String>,
    pub semantic_query: Option<String>,
    pub max_nodes: usize,
    pub max_tokens: usize,
    pub min_relevance: f32,
    pub strategy: Strategy,
    /// Upper-case edge kinds; `None`: all.
    pub kinds: Option<Vec<String>>,
}

pub struct Node {
    pub entity: Entity,
    pub relevance: f32,
    pub references: Vec<RefSummary>,
    /// The root's text was cut to fit the budget.
    pub truncated: bool,
    /// Below `minRelevance`: in the subgraph only to connect a relevant node to it.
    pub bridge: bool,
}

pub struct OutEdge {
    pub from_id: String,
    pub to_id: String,
    pub kind: String,
    pub note: Option<String>,
    pub relevance: f32,
}

pub struct QueryOut {
    pub root: Entity,
    /// How the root was chosen: by the entity's id or by a semantic query.
    pub started_from: Option<Field>,
    pub nodes: Vec<Node>,
    pub edges: Vec<OutEdge>,
    pub nodes_visited: usize,
    pub nodes_pruned: usize,
    pub estimated_tokens: usize,
    pub truncated: bool,
    pub embedder: &'static str,
    pub query_truncated: bool,
    /// The project's texts still without a vector (their relevance counts as 0).
    pub not_embedded: u64,
}

fn tokens(chars: usize) -> usize {
    chars.div_ceil(4)
}

fn node_cost(e: &Entity, refs: &[RefSummary]) -> usize {
    // id, name, scope, description, relevance and the JSON around them; each reference
    // with its id, path, lines and description.
    let r: usize = refs
        .iter()
        .map(|r| 36 + r.document_path.len() + r.description.len() + 80)
        .sum();
    tokens(36 + e.name.len() + e.scope.as_str().len() + e.description.len() + NODE_JSON + r)
}

fn edge_cost(e: &GEdge) -> usize {
    tokens(72 + e.kind.len() + e.note.as_ref().map_or(0, String::len) + 80)
}

/// Characters of JSON keys and punctuation around a node's fields (measured on the
/// answer's compact JSON, rounded up).
const NODE_JSON: usize = 100;

/// How many irrelevant nodes in a row the walk may pass through to reach a relevant
/// one: a Namespace and a Component between a Feature and a Unit.
const BRIDGE_DEPTH: usize = 2;

/// A frontier entry: a relevant node and the irrelevant nodes (`path`, from the side
/// already in the subgraph) that connect it.
#[derive(PartialEq)]
struct Item {
    score: f32,
    seq: usize,
    node: usize,
    branch: usize,
    path: Vec<usize>,
}
impl Eq for Item {}
impl PartialOrd for Item {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Item {
    fn cmp(&self, o: &Self) -> Ordering {
        // Max-heap on score; earlier pushes first on ties (deterministic).
        self.score.total_cmp(&o.score).then(o.seq.cmp(&self.seq))
    }
}

pub async fn query(app: &App, q: QueryReq) -> Result<QueryOut> {
    let (project, root_id) = match (&q.entity_id, &q.semantic_query, &q.project_id) {
        (Some(id), _, _) => {
            let mut c = app.store.read().await?;
            let e = cstore::entity(&mut c, id)
                .await?
                .ok_or_else(|| Error::not_found("entity", id.clone()))?;
            (e.project_id, Some(e.id))
        }
        (None, Some(_), Some(p)) => (p.clone(), None),
        (None, Some(_), None) => {
            return Err(Error::validation(
                Field::ProjectId,
                format!(
                    "is required with {} alone (the project to search for a start)",
                    Field::SemanticQuery
                ),
            ))
        }
        (None, None, _) => {
            return Err(Error::validation(
                Field::EntityId,
                format!(
                    "give {}, {} or both: there is nothing to start from",
                    Field::EntityId,
                    Field::SemanticQuery
                ),
            ))
        }
    };
    let snap = semantic::snapshot(app, &project).await?;
    let g = graph(app, &project).await?;
    // The query vector: the semantic query, else the root's stored description vector.
    let (qvec, embedder, query_truncated) = match &q.semantic_query {
        Some(text) => {
            let v = semantic::embed_query(app, text).await?;
            (v.vector, v.embedder, v.truncated)
        }
        None => {
            let rid = root_id.clone().unwrap_or_default();
            match snap.vector("entity", &rid) {
                Some(v) => (v, snap.model, false),
                None => {
                    let d = g
                        .by_id
                        .get(&rid)
                        .map(|&i| g.entities[i].description.clone())
                        .unwrap_or_default();
                    let v = semantic::embed_query(app, &d).await?;
                    (v.vector, v.embedder, v.truncated)
                }
            }
        }
    };
    let (root_id, started_from) = match root_id {
        Some(r) => (r, Field::EntityId),
        None => {
            let text = q.semantic_query.clone().unwrap_or_default();
            let all = |_: &str| true;
            let hits = semantic::rank(
                app,
                &snap,
                &project,
                Rank {
                    source: "entity",
                    index: Fts::Entities,
                    query: &text,
                    qvec: &qvec,
                    mode: Mode::Hybrid,
                    min_score: -1.0,
                    prefix: false,
                    keep: &all,
                    lexical: None,
                    vectors: None,
                },
                1,
            )
            .await?;
            let best = hits.hits.into_iter().next().ok_or_else(|| {
                Error::not_found(
                    "entity",
                    format!("best match for '{text}' in project {project}"),
                )
            })?;
            (best.row_id, Field::SemanticQuery)
        }
    };
    let root = *g
        .by_id
        .get(&root_id)
        .ok_or_else(|| Error::not_found("entity", root_id.clone()))?;
    let mut out = walk(&g, &snap, root, &qvec, &q);
    out.started_from = Some(started_from);
    out.embedder = embedder;
    out.query_truncated = query_truncated;
    out.not_embedded = snap.not_embedded;
    follow_references(app, &project, &mut out).await;
    Ok(out)
}

/// The nodes' references at the lines where their code is now, when it only moved
/// since they were recorded; the recorded lines when the repository cannot be read.
async fn follow_references(app: &App, project: &str, out: &mut QueryOut) {
    if out.nodes.iter().all(|n| n.references.is_empty()) {
        return;
    }
    let Ok(c) = crate::service::code::ctx(app, project).await else {
        return;
    };
    let now = {
        let items: Vec<Recorded> = out
            .nodes
            .iter()
            .flat_map(|n| n.references.iter())
            .map(|r| Recorded {
                path: &r.document_path,
                blob: &r.blob_sha,
                start: r.start_line,
                end: r.end_line,
            })
            .collect();
        match current_lines(&c, &items).await {
            Ok(v) => v,
            Err(e) => {
                tracing::debug!(error = %e, "query serves recorded lines");
                return;
            }
        }
    };
    let mut now = now.into_iter();
    for r in out.nodes.iter_mut().flat_map(|n| n.references.iter_mut()) {
        if let Some((a, b)) = now.next().flatten() {
            r.start_line = a;
            r.end_line = b;
        }
    }
}

fn walk(g: &Graph, snap: &Snapshot, root: usize, qvec: &[f32], q: &QueryReq) -> QueryOut {
    let allowed = |k: &str| q.kinds.as_ref().is_none_or(|ks| ks.iter().any(|x| x == k));
    // Similarities are computed when a node is first reached: a walk touches a few
    // hundred of a project's thousands of entities.
    let cells: Vec<std::cell::Cell<f32>> = vec![std::cell::Cell::new(f32::NAN); g.entities.len()];
    let sim = |i: usize| -> f32 {
        let c = &cells[i];
        if c.get().is_nan() {
            c.set(snap.cosine("entity", &g.entities[i].id, qvec));
        }
        c.get()
    };
    // Relevance of `to` reached over edge `k`.
    let via = |k: usize, to: usize| -> f32 {
        let e = &g.edges[k];
        if e.kind == "RELATED_TO" && e.note.as_deref().is_some_and(|n| !n.is_empty()) {
            let key = format!("{}:{}", g.entities[e.from].id, g.entities[e.to].id);
            match snap.similarity("relation", &key, qvec) {
                Some(s) => (s + sim(to)) / 2.0,
                None => sim(to),
            }
        } else {
            sim(to)
        }
    };
    let other = |k: usize, n: usize| {
        let e = &g.edges[k];
        if e.from == n {
            e.to
        } else {
            e.from
        }
    };
    let budget = q.max_tokens;
    let branch_budget = (budget / 4).max(1) as f32;
    let mut in_set: Vec<bool> = vec![false; g.entities.len()];
    let mut bridge: Vec<bool> = vec![false; g.entities.len()];
    let mut relevance: Vec<f32> = vec![0.0; g.entities.len()];
    let mut seen: HashSet<usize> = HashSet::new();
    let mut pruned: HashSet<usize> = HashSet::new();
    let mut order: Vec<usize> = Vec::new();
    let mut branch_tokens: HashMap<usize, usize> = HashMap::new();

    let root_e = &g.entities[root];
    let root_cost = node_cost(root_e, &g.refs[root]);
    seen.insert(root);
    relevance[root] = sim(root);
    if root_cost > budget || q.max_nodes == 0 {
        // Alone, its description cut and references dropped until it fits.
        let mut e = root_e.clone();
        let room =
            (budget * 4).saturating_sub(36 + e.name.len() + e.scope.as_str().len() + NODE_JSON);
        let cut: String = e.description.chars().take(room).collect();
        e.description = cut;
        let cost = node_cost(&e, &[]);
        return QueryOut {
            root: root_e.clone(),
            started_from: None,
            nodes: vec![Node {
                entity: e,
                relevance: sim(root),
                references: vec![],
                truncated: true,
                bridge: false,
            }],
            edges: vec![],
            nodes_visited: 1,
            nodes_pruned: 0,
            // Over the budget only when even the name does not fit.
            estimated_tokens: cost,
            truncated: true,
            embedder: "",
            query_truncated: false,
            not_embedded: 0,
        };
    }
    in_set[root] = true;
    order.push(root);
    let mut total = root_cost;

    let mut heap = BinaryHeap::new();
    let mut seq = 0usize;
    let score = |rel: f32, cost: usize, total: usize, bt: usize, strategy: Strategy| -> f32 {
        let global = 1.0 / (1.0 + total as f32 / budget as f32);
        let branch = match strategy {
            Strategy::Global => 1.0,
            Strategy::BranchPenalty => 1.0 / (1.0 + bt as f32 / branch_budget),
        };
        rel.max(0.0) * global * branch / cost.max(1) as f32
    };
    // What admitting `nodes` (in order; those already in are skipped) costs: each
    // node, and each of its edges to a node already in or earlier in `nodes`.
    let admit_cost = |nodes: &[usize], in_set: &[bool]| -> usize {
        let mut cost = 0;
        for (j, &x) in nodes.iter().enumerate() {
            cost += node_cost(&g.entities[x], &g.refs[x]);
            cost += g.adj[x]
                .iter()
                .filter(|&&k| {
                    let y = other(k, x);
                    allowed(&g.edges[k].kind) && (in_set[y] || nodes[..j].contains(&y))
                })
                .map(|&k| edge_cost(&g.edges[k]))
                .sum::<usize>();
        }
        cost
    };
    // Expands node `n` (in the set) into the frontier: each relevant neighbour, and
    // each relevant node behind at most BRIDGE_DEPTH irrelevant ones (with that path).
    let expand = |n: usize,
                  branch_of_n: Option<usize>,
                  heap: &mut BinaryHeap<Item>,
                  seq: &mut usize,
                  seen: &mut HashSet<usize>,
                  pruned: &mut HashSet<usize>,
                  relevance: &mut Vec<f32>,
                  in_set: &Vec<bool>,
                  total: usize,
                  branch_tokens: &HashMap<usize, usize>| {
        // (node to look around, the irrelevant path that led there)
        let mut stack: Vec<(usize, Vec<usize>)> = vec![(n, Vec::new())];
        while let Some((from, path)) = stack.pop() {
            for &k in &g.adj[from] {
                if !allowed(&g.edges[k].kind) {
                    continue;
                }
                let m = other(k, from);
                if in_set[m] || m == n || path.contains(&m) {
                    continue;
                }
                let rel = via(k, m);
                seen.insert(m);
                relevance[m] = relevance[m].max(rel);
                if rel < q.min_relevance {
                    pruned.insert(m);
                    if path.len() < BRIDGE_DEPTH {
                        let mut p = path.clone();
                        p.push(m);
                        stack.push((m, p));
                    }
                    continue;
                }
                let b = branch_of_n.or(path.first().copied()).unwrap_or(m);
                let mut nodes = path.clone();
                nodes.push(m);
                let cost = admit_cost(&nodes, in_set);
                let bt = branch_tokens.get(&b).copied().unwrap_or(0);
                *seq += 1;
                heap.push(Item {
                    score: score(rel, cost, total, bt, q.strategy),
                    seq: *seq,
                    node: m,
                    branch: b,
                    path: path.clone(),
                });
            }
        }
    };
    expand(
        root,
        None,
        &mut heap,
        &mut seq,
        &mut seen,
        &mut pruned,
        &mut relevance,
        &in_set,
        total,
        &branch_tokens,
    );
    while let Some(it) = heap.pop() {
        let m = it.node;
        if in_set[m] {
            continue;
        }
        // The path's nodes not in yet (another candidate may have brought some in),
        // then the node itself: admitted together or not at all.
        let mut nodes: Vec<usize> = it.path.iter().copied().filter(|&b| !in_set[b]).collect();
        nodes.push(m);
        if order.len() + nodes.len() > q.max_nodes {
            pruned.insert(m);
            continue;
        }
        let cost = admit_cost(&nodes, &in_set);
        // The score was computed when pushed; recompute with the budget as it is now
        // and requeue if the node no longer leads.
        let bt = branch_tokens.get(&it.branch).copied().unwrap_or(0);
        let now = score(relevance[m], cost, total, bt, q.strategy);
        if now + 1e-9 < it.score && heap.peek().is_some_and(|top| top.score > now) {
            seq += 1;
            heap.push(Item {
                score: now,
                seq,
                ..it
            });
            continue;
        }
        if total + cost > budget {
            pruned.insert(m);
            continue;
        }
        for &x in &nodes {
            in_set[x] = true;
            bridge[x] = x != m;
            pruned.remove(&x);
            order.push(x);
        }
        total += cost;
        *branch_tokens.entry(it.branch).or_insert(0) += cost;
        for &x in &nodes {
            expand(
                x,
                Some(it.branch),
                &mut heap,
                &mut seq,
                &mut seen,
                &mut pruned,
                &mut relevance,
                &in_set,
                total,
                &branch_tokens,
            );
        }
    }
    for &n in &order {
        pruned.remove(&n);
    }
    let mut edges = Vec::new();
    let mut est = 0usize;
    for &n in &order {
        est += node_cost(&g.entities[n], &g.refs[n]);
    }
    for (k, e) in g.edges.iter().enumerate() {
        if in_set[e.from] && in_set[e.to] && allowed(&e.kind) {
            est += edge_cost(e);
            edges.push(OutEdge {
                from_id: g.entities[e.from].id.clone(),
                to_id: g.entities[e.to].id.clone(),
                kind: e.kind.clone(),
                note: e.note.clone(),
                relevance: via(k, e.to),
            });
        }
    }
    QueryOut {
        root: g.entities[root].clone(),
        started_from: None,
        nodes: order
            .iter()
            .map(|&n| Node {
                entity: g.entities[n].clone(),
                relevance: relevance[n],
                references: g.refs[n].clone(),
                truncated: false,
                bridge: bridge[n],
            })
            .collect(),
        edges,
        nodes_visited: seen.len(),
        nodes_pruned: pruned.len(),
        estimated_tokens: est,
        truncated: false,
        embedder: "",
        query_truncated: false,
        not_embedded: 0,
    }
}
