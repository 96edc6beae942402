//! Knowledge-graph use cases: creating, changing and deleting atoms and molecules
//! with their rules (docs/graph.md: the same-project rule, the glob rules, versions), the
//! changelog, and the reads behind `query_graph` get and search.

use std::collections::{HashMap, HashSet};

use crate::domain::field::Field;
use crate::domain::glob::{Glob, MAX_PATTERNS};
use crate::domain::graph::{append_knowledge, Atom, ChangelogEntry, Molecule, NodeKind, Related};
use crate::domain::{id, now, ItemKind};
use crate::error::{Details, Error, Result};
use crate::service::App;
use crate::store::graph::{self, Filter};
use crate::store::{item, lock, project, Conn};

/// Knowledge is bounded at 32 KB, appended text included.
pub const KNOWLEDGE_MAX: usize = 32 * 1024;
/// Related lists hold at most this many entries.
pub const RELATED_MAX: usize = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnowledgeMode {
    Overwrite,
    Append,
}

/// Fields of a create; which apply depends on the node kind.
pub struct NewNode {
    pub project_id: String,
    pub name: String,
    pub knowledge: String,
    pub paths: Option<Vec<String>>,
    pub molecule_id: Option<String>,
    pub related: Vec<Related>,
    pub created_by_task_id: String,
}

/// Fields of an update; `None` leaves a field as it is. `molecule_id: Some(None)`
/// detaches an atom from its molecule.
pub struct Patch {
    pub name: Option<String>,
    pub knowledge: Option<String>,
    pub mode: KnowledgeMode,
    pub paths: Option<Vec<String>>,
    pub molecule_id: Option<Option<String>>,
    pub related: Option<Vec<Related>>,
    pub last_task_id: String,
}

/// Checks an atom's patterns: 1–20 valid, relative globs without `..`, at most 512
/// characters each. An empty list breaks the atom's boundary: an invariant, not a typo.
pub fn check_paths(paths: &[String]) -> Result<Vec<String>> {
    if paths.is_empty() {
        return Err(Error::invariant(
            "an atom needs at least one path pattern: an atom without paths has no boundary",
        ));
    }
    if paths.len() > MAX_PATTERNS {
        return Err(Error::validation(
            Field::Paths,
            format!(
                "{} patterns given, at most {MAX_PATTERNS} allowed",
                paths.len()
            ),
        ));
    }
    let mut out: Vec<String> = Vec::with_capacity(paths.len());
    for p in paths {
        let g = Glob::parse(p).map_err(|e| Error::validation(Field::Paths, e))?;
        if !out.contains(&g.text) {
            out.push(g.text);
        }
    }
    Ok(out)
}

async fn require_task(c: &mut Conn, param: Field, task_id: &str) -> Result<()> {
    if !item::exists(c, ItemKind::Task, task_id).await? {
        return Err(task_missing(param, task_id));
    }
    Ok(())
}

fn task_missing(param: Field, task_id: &str) -> Error {
    Error::NotFound {
        entity: "task",
        id: format!("{task_id} (given as {param})"),
    }
}

async fn require_project(c: &mut Conn, project_id: &str) -> Result<()> {
    if !project::exists(c, project_id).await? {
        return Err(Error::not_found("project", project_id));
    }
    Ok(())
}

fn cross_project_molecule(molecule_id: &str, its_project: &str, project_id: &str) -> Error {
    Error::Invariant {
        message: format!(
            "molecule {molecule_id} belongs to project {its_project}, not {project_id}: an atom and its molecule share a project"
        ),
        details: Some(Details::MoleculeProject {
            molecule_project_id: its_project.to_string(),
            project_id: project_id.to_string(),
        }),
    }
}

/// The molecule exists and lives in `project_id`.
async fn check_molecule(c: &mut Conn, molecule_id: &str, project_id: &str) -> Result<()> {
    let found = graph::projects_of(c, NodeKind::Molecule, &[molecule_id.to_string()]).await?;
    match found.get(molecule_id) {
        None => Err(Error::not_found("molecule", molecule_id)),
        Some(p) if p != project_id => Err(cross_project_molecule(molecule_id, p, project_id)),
        Some(_) => Ok(()),
    }
}

/// Every related id exists in `project_id`, is not `self_id`, and appears once.
async fn check_related(
    c: &mut Conn,
    kind: NodeKind,
    param: Field,
    related: &[Related],
    project_id: &str,
    self_id: Option<&str>,
) -> Result<()> {
    if related.len() > RELATED_MAX {
        return Err(Error::validation(
            param,
            format!(
                "{} entries given, at most {RELATED_MAX} allowed",
                related.len()
            ),
        ));
    }
    let mut seen: Vec<&str> = Vec::new();
    for r in related {
        if Some(r.id.as_str()) == self_id {
            return Err(Error::validation(
                param,
                format!("{} {} cannot be related to itself", kind.as_str(), r.id),
            ));
        }
        if seen.contains(&r.id.as_str()) {
            return Err(Error::validation(
                param,
                format!("{} is listed twice", r.id),
            ));
        }
        seen.push(&r.id);
    }
    let ids: Vec<String> = related.iter().map(|r| r.id.clone()).collect();
    let found = graph::projects_of(c, kind, &ids).await?;
    for id in &ids {
        match found.get(id) {
            None => {
                return Err(Error::NotFound {
                    entity: kind.as_str(),
                    id: format!("{id} (in {param})"),
                })
            }
            Some(p) if p != project_id => {
                return Err(Error::Invariant {
                    message: format!(
                        "{} {id} in {param} belongs to project {p}, not {project_id}: related {}s share a project",
                        kind.as_str(),
                        kind.as_str()
                    ),
                    details: Some(Details::RelatedProject {
                        id: id.clone(),
                        project_id: p.clone(),
                    }),
                })
            }
            Some(_) => {}
        }
    }
    Ok(())
}

pub enum Node {
    Atom(Atom),
    Molecule(Molecule),
}

/// Inserts a new atom or molecule; false when what it refers to is missing (or its
/// molecule is another project's), for the caller to say which.
async fn insert(c: &mut Conn, node: &Node) -> Result<bool> {
    match node {
        // An atom's checks run inside its insert (one statement, `create_atom`).
        Node::Atom(a) => Ok(graph::create_atom(c, a).await?),
        Node::Molecule(m) => {
            let (project, task, _) =
                graph::create_refs(c, &m.project_id, &m.created_by_task_id, None).await?;
            if project && task {
                graph::insert_molecule(c, m).await?;
            }
            Ok(project && task)
        }
    }
}

pub async fn create(app: &App, kind: NodeKind, n: NewNode) -> Result<Node> {
    // Rules the request alone decides come before any database work.
    let paths = match (kind, &n.paths) {
        (NodeKind::Atom, Some(p)) => check_paths(p)?,
        (NodeKind::Atom, None) => {
            return Err(Error::validation(
                Field::Paths,
                "is required to create an atom: a JSON array of glob patterns, e.g. [\"src/payments/**\"]",
            ))
        }
        (NodeKind::Molecule, _) => vec![],
    };
    let ts = now();
    let node = match kind {
        NodeKind::Atom => Node::Atom(Atom {
            id: id::new_id(),
            project_id: n.project_id,
            molecule_id: n.molecule_id,
            name: n.name,
            paths,
            knowledge: n.knowledge,
            related: n.related,
            last_task_id: n.created_by_task_id.clone(),
            created_by_task_id: n.created_by_task_id,
            version: 1,
            created_at: ts.clone(),
            updated_at: ts,
        }),
        NodeKind::Molecule => Node::Molecule(Molecule {
            id: id::new_id(),
            project_id: n.project_id,
            name: n.name,
            knowledge: n.knowledge,
            related: n.related,
            last_task_id: n.created_by_task_id.clone(),
            created_by_task_id: n.created_by_task_id,
            version: 1,
            created_at: ts.clone(),
            updated_at: ts,
        }),
    };
    // Every rule is checked here, in the write transaction that inserts.
    let (project_id, task_id, molecule_id, related) = match &node {
        Node::Atom(a) => (
            &a.project_id,
            &a.created_by_task_id,
            a.molecule_id.as_deref(),
            &a.related,
        ),
        Node::Molecule(m) => (&m.project_id, &m.created_by_task_id, None, &m.related),
    };
    // An atom relating to none is one statement, its checks inside it: on SQLite it
    // runs as its own transaction (`Store::write_one`), without a BEGIN and a COMMIT
    // around it.
    let mut tx = if related.is_empty() && kind == NodeKind::Atom {
        app.store.write_one().await?
    } else {
        app.store.write().await?
    };
    // The write lock has been held from the start: what the insert saw is there still.
    if !insert(&mut tx, &node).await? {
        return Err(refused_create(&mut tx, project_id, task_id, molecule_id).await);
    }
    let param = match kind {
        NodeKind::Atom => Field::RelatedAtoms,
        NodeKind::Molecule => Field::RelatedMolecules,
    };
    // After the insert, in its transaction (a refusal rolls it back): the errors of
    // the project, task and molecule come first, as before, and a new id is in no list.
    check_related(&mut tx, kind, param, related, project_id, None).await?;
    tx.commit().await?;
    Ok(node)
}

/// Why a create's insert wrote nothing: its project, its task or its molecule
/// (missing, or another project's), asked on the connection that refused it (in its
/// write transaction, when it has one).
async fn refused_create(
    tx: &mut Conn,
    project_id: &str,
    task_id: &str,
    molecule_id: Option<&str>,
) -> Error {
    let (project, task, molecule_project) =
        match graph::create_refs(tx, project_id, task_id, molecule_id).await {
            Ok(refs) => refs,
            Err(e) => return e.into(),
        };
    if !project {
        return Error::not_found("project", project_id);
    }
    if !task {
        return Error::NotFound {
            entity: "task",
            id: format!("{task_id} (given as {})", Field::CreatedByTaskId),
        };
    }
    match (molecule_id, molecule_project) {
        (Some(m), None) => Error::not_found("molecule", m),
        (Some(m), Some(p)) if p != project_id => cross_project_molecule(m, &p, project_id),
        _ => Error::Internal("a create was refused although what it names exists".into()),
    }
}

fn new_knowledge(old: &str, p: &Patch, ts: &str) -> Result<Option<String>> {
    let Some(k) = &p.knowledge else {
        return Ok(None);
    };
    let next = match p.mode {
        KnowledgeMode::Overwrite => k.clone(),
        KnowledgeMode::Append => append_knowledge(old, k, ts, &p.last_task_id),
    };
    if next.len() > KNOWLEDGE_MAX {
        return Err(Error::validation(
            Field::Knowledge,
            format!(
                "appending makes the knowledge {} bytes, at most {KNOWLEDGE_MAX} allowed: overwrite it with a condensed version",
                next.len()
            ),
        ));
    }
    Ok(Some(next))
}

/// An atom update that needs no read to check it (no molecule or related list
/// given, knowledge overwritten if given, valid paths if given) as one statement;
/// `None` when it is no such update or its statement wrote nothing, for the full
/// update to run, with its checks in their order and its errors.
async fn rewrite(
    app: &App,
    kind: NodeKind,
    id: &str,
    version: i64,
    p: &Patch,
    ts: &str,
) -> Result<Option<Atom>> {
    let simple = kind == NodeKind::Atom
        && p.molecule_id.is_none()
        && p.related.is_none()
        && (p.knowledge.is_none() || p.mode == KnowledgeMode::Overwrite);
    if !simple {
        return Ok(None);
    }
    let paths = match p.paths.as_deref().map(check_paths).transpose() {
        Ok(paths) => paths,
        // Refused by the full update, after the checks that come before it.
        Err(_) => return Ok(None),
    };
    let w = graph::Rewrite {
        name: p.name.as_deref(),
        paths: paths.as_deref(),
        knowledge: p.knowledge.as_deref(),
        last_task_id: &p.last_task_id,
        updated_at: ts,
    };
    let mut tx = app.store.write_one().await?;
    let Some(a) = graph::rewrite_atom(&mut tx, id, version, &w).await? else {
        return Ok(None);
    };
    tx.commit().await?;
    Ok(Some(a))
}

pub async fn update(app: &App, kind: NodeKind, id: &str, version: i64, p: Patch) -> Result<Node> {
    let ts = now();
    if let Some(a) = rewrite(app, kind, id, version, &p, &ts).await? {
        return Ok(Node::Atom(a));
    }
    let mut tx = app.store.write().await?;
    let node = match kind {
        NodeKind::Atom => {
            // The atom, its version and the task checked in one read, in the order
            // the molecule's checks below keep.
            let (mut a, task) = graph::atom_for_update(&mut tx, id, &p.last_task_id)
                .await?
                .ok_or_else(|| Error::not_found("atom", id))?;
            lock::check_read(lock::ATOMS, id, a.version, Some(a.name.clone()), version)?;
            if !task {
                return Err(task_missing(Field::LastTaskId, &p.last_task_id));
            }
            if let Some(paths) = &p.paths {
                a.paths = check_paths(paths)?;
            }
            if let Some(m) = &p.molecule_id {
                if let Some(m) = m {
                    check_molecule(&mut tx, m, &a.project_id).await?;
                }
                a.molecule_id = m.clone();
            }
            if let Some(r) = p.related.clone() {
                check_related(
                    &mut tx,
                    kind,
                    Field::RelatedAtoms,
                    &r,
                    &a.project_id,
                    Some(id),
                )
                .await?;
                a.related = r;
            }
            if let Some(k) = new_knowledge(&a.knowledge, &p, &ts)? {
                a.knowledge = k;
            }
            if let Some(n) = p.name {
                a.name = n;
            }
            a.last_task_id = p.last_task_id;
            a.updated_at = ts;
            a.version = graph::update_atom(&mut tx, &a, version).await?;
            Node::Atom(a)
        }
        NodeKind::Molecule => {
            let mut m = graph::require_molecule(&mut tx, id).await?;
            lock::check(&mut tx, lock::MOLECULES, id, version).await?;
            require_task(&mut tx, Field::LastTaskId, &p.last_task_id).await?;
            if let Some(r) = p.related.clone() {
                check_related(
                    &mut tx,
                    kind,
                    Field::RelatedMolecules,
                    &r,
                    &m.project_id,
                    Some(id),
                )
                .await?;
                m.related = r;
            }
            if let Some(k) = new_knowledge(&m.knowledge, &p, &ts)? {
                m.knowledge = k;
            }
            if let Some(n) = p.name {
                m.name = n;
            }
            m.last_task_id = p.last_task_id;
            m.updated_at = ts;
            m.version = graph::update_molecule(&mut tx, &m, version).await?;
            Node::Molecule(m)
        }
    };
    tx.commit().await?;
    Ok(node)
}

/// What a delete removed or detached.
pub struct Deleted {
    /// Member atoms deleted with their molecule (cascade).
    pub deleted_atoms: Vec<String>,
    /// Member atoms left without a molecule (no cascade).
    pub orphaned_atoms: Vec<String>,
}

pub async fn delete(
    app: &App,
    kind: NodeKind,
    id: &str,
    version: i64,
    cascade: bool,
    last_task_id: Option<&str>,
) -> Result<Deleted> {
    let mut tx = app.store.write().await?;
    if let Some(t) = last_task_id {
        require_task(&mut tx, Field::LastTaskId, t).await?;
    }
    let t = graph::table(kind);
    lock::check(&mut tx, t, id, version).await?;
    let mut d = Deleted {
        deleted_atoms: vec![],
        orphaned_atoms: vec![],
    };
    if kind == NodeKind::Molecule {
        if cascade {
            d.deleted_atoms = graph::delete_members(&mut tx, id).await?;
        } else {
            d.orphaned_atoms = graph::orphan_members(&mut tx, id, last_task_id, &now()).await?;
        }
    }
    lock::delete(&mut tx, t, id, Some(version)).await?;
    tx.commit().await?;
    Ok(d)
}

pub async fn append_changelog(
    app: &App,
    kind: NodeKind,
    parent_id: &str,
    task_id: &str,
    summary: String,
) -> Result<ChangelogEntry> {
    let mut tx = app.store.write().await?;
    match kind {
        NodeKind::Atom => {
            graph::require_atom(&mut tx, parent_id).await?;
        }
        NodeKind::Molecule => {
            graph::require_molecule(&mut tx, parent_id).await?;
        }
    }
    require_task(&mut tx, Field::TaskId, task_id).await?;
    let e = ChangelogEntry {
        id: id::new_id(),
        parent_type: kind,
        parent_id: parent_id.to_string(),
        task_id: task_id.to_string(),
        summary,
        created_at: now(),
    };
    graph::insert_changelog(&mut tx, &e).await?;
    tx.commit().await?;
    Ok(e)
}

pub async fn changelog(
    app: &App,
    kind: NodeKind,
    parent_id: &str,
    limit: i64,
    offset: i64,
) -> Result<(Vec<ChangelogEntry>, i64)> {
    let mut c = app.store.read().await?;
    let exists = match kind {
        NodeKind::Atom => graph::get_atom(&mut c, parent_id).await?.is_some(),
        NodeKind::Molecule => graph::get_molecule(&mut c, parent_id).await?.is_some(),
    };
    if !exists {
        return Err(Error::not_found(kind.as_str(), parent_id));
    }
    Ok(graph::changelog(&mut c, kind, parent_id, limit, offset).await?)
}

/// A related entry with the name of what it points at (`None` when that was deleted).
pub type Resolved = (Related, Option<String>);

/// One atom or molecule as `get` and `search` answer it.
pub struct NodeView {
    pub node: Node,
    pub related: Vec<Resolved>,
    pub changelog: Vec<ChangelogEntry>,
    /// Molecules: their member atoms, by name.
    pub members: Vec<Atom>,
}

async fn names(c: &mut Conn, kind: NodeKind, ids: Vec<String>) -> Result<HashMap<String, String>> {
    Ok(graph::names_of(c, kind, &ids).await?)
}

async fn resolve(c: &mut Conn, kind: NodeKind, r: &[Related]) -> Result<Vec<Resolved>> {
    let n = names(c, kind, r.iter().map(|x| x.id.clone()).collect()).await?;
    Ok(r.iter()
        .map(|x| (x.clone(), n.get(&x.id).cloned()))
        .collect())
}

pub async fn get(app: &App, kind: NodeKind, id: &str, changelog_limit: i64) -> Result<NodeView> {
    let mut c = app.store.read().await?;
    let (node, related, members) = match kind {
        NodeKind::Atom => {
            let a = graph::require_atom(&mut c, id).await?;
            let r = resolve(&mut c, kind, &a.related).await?;
            (Node::Atom(a), r, vec![])
        }
        NodeKind::Molecule => {
            let m = graph::require_molecule(&mut c, id).await?;
            let r = resolve(&mut c, kind, &m.related).await?;
            let members = graph::members(&mut c, id).await?;
            (Node::Molecule(m), r, members)
        }
    };
    let changelog = if changelog_limit > 0 {
        graph::changelog(&mut c, kind, id, changelog_limit, 0)
            .await?
            .0
    } else {
        vec![]
    };
    Ok(NodeView {
        node,
        related,
        changelog,
        members,
    })
}

pub struct SearchQuery {
    pub project_id: Option<String>,
    pub molecule_id: Option<String>,
    pub orphans_only: bool,
    pub query: Option<String>,
    pub changelog_limit: i64,
    pub limit: i64,
    pub offset: i64,
    /// With `query`: the cosine a row no word matched needs (default
    /// [`GRAPH_MIN_COSINE`]).
    pub min_score: Option<f32>,
}

/// A search's page, its total, and the candidates `min_score` hid.
pub struct Searched {
    pub items: Vec<NodeView>,
    pub total: i64,
    pub below_min_score: usize,
}

pub async fn search(app: &App, kind: NodeKind, q: &SearchQuery) -> Result<(Vec<NodeView>, i64)> {
    let s = search_counted(app, kind, q).await?;
    Ok((s.items, s.total))
}

/// [`search`], also counting what the cosine floor hid.
pub async fn search_counted(app: &App, kind: NodeKind, q: &SearchQuery) -> Result<Searched> {
    let mut c = app.store.read().await?;
    if let Some(p) = &q.project_id {
        require_project(&mut c, p).await?;
    }
    if let Some(m) = &q.molecule_id {
        graph::require_molecule(&mut c, m).await?;
    }
    if let Some(text) = q.query.as_deref() {
        return hybrid_search(app, c, kind, q, text).await;
    }
    let (items, total) = listed(c, kind, q).await?;
    Ok(Searched {
        items,
        total,
        below_min_score: 0,
    })
}

/// A search without text: the filters alone, paged in the store.
async fn listed(mut c: Conn, kind: NodeKind, q: &SearchQuery) -> Result<(Vec<NodeView>, i64)> {
    let f = Filter {
        project_id: q.project_id.as_deref(),
        molecule_id: q.molecule_id.as_deref(),
        orphans_only: q.orphans_only,
        query: q.query.as_deref(),
    };
    let (nodes, total): (Vec<(Node, Vec<Related>)>, i64) = match kind {
        NodeKind::Atom => {
            let (a, t) = graph::search_atoms(&mut c, &f, q.limit, q.offset).await?;
            (
                a.into_iter()
                    .map(|a| {
                        let r = a.related.clone();
                        (Node::Atom(a), r)
                    })
                    .collect(),
                t,
            )
        }
        NodeKind::Molecule => {
            let (m, t) = graph::search_molecules(&mut c, &f, q.limit, q.offset).await?;
            (
                m.into_iter()
                    .map(|m| {
                        let r = m.related.clone();
                        (Node::Molecule(m), r)
                    })
                    .collect(),
                t,
            )
        }
    };
    views_of(&mut c, kind, nodes, total, q.changelog_limit).await
}

/// Search with words, through the ranking core (`service::ranking`): the rows that
/// match a word of the query (as a stemmed prefix, in name or knowledge) and those
/// close in meaning (cosine ≥ `min_score`, default [`GRAPH_MIN_COSINE`]), best first,
/// then paged; the answer counts what the floor hid. The other filters (molecule,
/// orphans) narrow the candidates first.
async fn hybrid_search(
    app: &App,
    mut c: Conn,
    kind: NodeKind,
    q: &SearchQuery,
    text: &str,
) -> Result<Searched> {
    use crate::service::semantic::{self, Mode, Rank};
    use crate::store::semantic::Fts;
    let empty = Searched {
        items: Vec::new(),
        total: 0,
        below_min_score: 0,
    };
    let project = match (&q.project_id, &q.molecule_id) {
        (Some(p), _) => p.clone(),
        (None, Some(m)) => graph::require_molecule(&mut c, m).await?.project_id,
        (None, None) => return Ok(empty),
    };
    let f = Filter {
        project_id: Some(&project),
        molecule_id: q.molecule_id.as_deref(),
        orphans_only: q.orphans_only,
        query: None,
    };
    let candidates: Vec<(Node, Vec<Related>)> = match kind {
        NodeKind::Atom => graph::search_atoms(&mut c, &f, i64::MAX, 0)
            .await?
            .0
            .into_iter()
            .map(|a| {
                let r = a.related.clone();
                (Node::Atom(a), r)
            })
            .collect(),
        NodeKind::Molecule => graph::search_molecules(&mut c, &f, i64::MAX, 0)
            .await?
            .0
            .into_iter()
            .map(|m| {
                let r = m.related.clone();
                (Node::Molecule(m), r)
            })
            .collect(),
    };
    drop(c);
    if semantic::fts_tokens(text, true).is_empty() || candidates.is_empty() {
        return Ok(empty);
    }
    let id_of = |n: &Node| match n {
        Node::Atom(a) => a.id.clone(),
        Node::Molecule(m) => m.id.clone(),
    };
    let allowed: HashSet<String> = candidates.iter().map(|(n, _)| id_of(n)).collect();
    let (source, index) = match kind {
        NodeKind::Atom => ("atom", Fts::Atoms),
        NodeKind::Molecule => ("molecule", Fts::Molecules),
    };
    let qv = semantic::embed_query(app, text).await?;
    let snap = semantic::snapshot(app, &project).await?;
    let keep = |id: &str| allowed.contains(id);
    let ranked = semantic::rank(
        app,
        &snap,
        &project,
        Rank {
            source,
            index,
            query: text,
            qvec: &qv.vector,
            mode: Mode::Hybrid,
            min_score: q.min_score.unwrap_or(GRAPH_MIN_COSINE),
            prefix: true,
            keep: &keep,
            lexical: None,
            vectors: None,
        },
        allowed.len(),
    )
    .await?;
    let total = ranked.hits.len() as i64;
    let mut by_id: HashMap<String, (Node, Vec<Related>)> =
        candidates.into_iter().map(|x| (id_of(&x.0), x)).collect();
    let nodes: Vec<(Node, Vec<Related>)> = ranked
        .hits
        .iter()
        .skip(q.offset.max(0) as usize)
        .take(q.limit.max(0) as usize)
        .filter_map(|h| by_id.remove(&h.row_id))
        .collect();
    let mut c = app.store.read().await?;
    let (items, total) = views_of(&mut c, kind, nodes, total, q.changelog_limit).await?;
    Ok(Searched {
        items,
        total,
        below_min_score: ranked.below_min_score,
    })
}

/// How close in meaning a row no word of the query matched must be to be answered,
/// unless the caller names another `minScore`: the floor of code `search`.
pub const GRAPH_MIN_COSINE: f32 = 0.3;

async fn views_of(
    c: &mut Conn,
    kind: NodeKind,
    nodes: Vec<(Node, Vec<Related>)>,
    total: i64,
    changelog_limit: i64,
) -> Result<(Vec<NodeView>, i64)> {
    let all_related: Vec<String> = nodes
        .iter()
        .flat_map(|(_, r)| r.iter().map(|x| x.id.clone()))
        .collect();
    let n = names(c, kind, all_related).await?;
    let ids: Vec<&str> = nodes
        .iter()
        .map(|(node, _)| match node {
            Node::Atom(a) => a.id.as_str(),
            Node::Molecule(m) => m.id.as_str(),
        })
        .collect();
    let mut logs = graph::recent_changelog(c, kind, &ids, changelog_limit).await?;
    let views = nodes
        .into_iter()
        .map(|(node, related)| {
            let id = match &node {
                Node::Atom(a) => a.id.clone(),
                Node::Molecule(m) => m.id.clone(),
            };
            NodeView {
                related: related
                    .into_iter()
                    .map(|r| {
                        let name = n.get(&r.id).cloned();
                        (r, name)
                    })
                    .collect(),
                changelog: logs.remove(&id).unwrap_or_default(),
                node,
                members: vec![],
            }
        })
        .collect();
    Ok((views, total))
}
