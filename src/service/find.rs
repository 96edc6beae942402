//! `find`: one text query over every kind Cairn holds (tasks and features, knowledge
//! atoms and molecules, code entities and references, memory atoms, ontology
//! classes), ranked together. The query is embedded once; every kind's candidates go
//! through the ranking core (`service::ranking`) with that vector and the same
//! floor, so each hit's score is the same fusion of the same two parts (the cosine
//! to the query, BM25 relative to its list's best) whatever its kind, and the answer
//! is one list by that score, not per-kind lists put end to end.
//!
//! Nothing here knows MCP: the tool builds the answer and names the reading tools.

use std::collections::HashMap;

use crate::domain::ItemKind;
use crate::error::{Error, Result};
use crate::service::bm25::Doc;
use crate::service::ranking::{rank_docs, Ask, Hit, Mode, Rank};
use crate::service::semantic::{self, Snapshot};
use crate::service::task_ranking;
use crate::service::App;
use crate::store::embedding::ONTOLOGY_CLASS;
use crate::store::semantic::Fts;
use crate::store::{code, graph, item, memory, ontology, project};

/// The kinds `find` searches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Tasks and features.
    Tasks,
    Atoms,
    Molecules,
    Entities,
    References,
    Memory,
    /// Ontology classes.
    Classes,
}

impl Kind {
    pub const ALL: [Kind; 7] = [
        Kind::Tasks,
        Kind::Atoms,
        Kind::Molecules,
        Kind::Entities,
        Kind::References,
        Kind::Memory,
        Kind::Classes,
    ];

    /// The toolset whose tools read this kind.
    pub fn toolset(self) -> &'static str {
        match self {
            Kind::Tasks => "tasks",
            Kind::Atoms | Kind::Molecules => "graph",
            Kind::Entities | Kind::References => "code",
            Kind::Memory => "memory",
            Kind::Classes => "ontology",
        }
    }
}

/// What one hit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HitKind {
    Task,
    Feature,
    Atom,
    Molecule,
    Entity,
    Reference,
    Memory,
    Class,
}

/// One hit: what it is, its text and the parts of its score.
pub struct Found {
    pub kind: HitKind,
    pub id: String,
    /// The project it belongs to (none for memory, or a task outside projects).
    pub project_id: Option<String>,
    /// Name, title, statement or preferred term.
    pub name: String,
    /// The rest of its text (summary, knowledge, description, definition).
    pub text: String,
    /// A class's IRI; a reference's holding entity.
    pub key: Option<String>,
    pub hit: Hit,
}

pub struct FindReq {
    pub query: String,
    pub kinds: Vec<Kind>,
    pub project_id: Option<String>,
    pub limit: usize,
}

pub struct FindOut {
    pub hits: Vec<Found>,
    /// Ranked hits past `limit`.
    pub more: usize,
    /// Candidates only their meaning found, below the floor.
    pub below_min_score: usize,
    pub embedder: &'static str,
    /// Texts not embedded yet (matched by their words only).
    pub not_embedded: u64,
}

/// The cosine a row no word of the query matched needs, for every kind alike (the
/// floor of code `search` and graph search).
pub const MIN_COSINE: f32 = 0.3;

/// Memory statuses `find` answers: the alive ones, as `recall` without history.
const ALIVE: [&str; 4] = ["ACTIVE", "NEEDS_REVIEW", "CONTESTED", "PROPOSED"];

/// Every hit of every kind asked, best first (ties by cosine, then id).
pub async fn find(app: &App, r: FindReq) -> Result<FindOut> {
    let projects: Vec<String> = {
        let mut c = app.store.read().await?;
        match &r.project_id {
            Some(p) => {
                if !project::exists(&mut c, p).await? {
                    return Err(Error::not_found("project", p.clone()));
                }
                vec![p.clone()]
            }
            None => {
                let s = project::Search {
                    query: None,
                    tags: &[],
                    limit: i64::MAX,
                    offset: 0,
                };
                project::search(&mut c, &s)
                    .await?
                    .0
                    .into_iter()
                    .map(|p| p.id)
                    .collect()
            }
        }
    };
    let qv = semantic::embed_query(app, &r.query).await?;
    let ask = Ask {
        text: &r.query,
        qvec: &qv.vector,
        min_score: MIN_COSINE,
    };
    let wants = |k: Kind| r.kinds.contains(&k);
    let mut out = FindOut {
        hits: Vec::new(),
        more: 0,
        below_min_score: 0,
        embedder: qv.embedder,
        not_embedded: 0,
    };
    let n = r.limit;
    let per_project = [
        Kind::Atoms,
        Kind::Molecules,
        Kind::Entities,
        Kind::References,
        Kind::Classes,
    ]
    .into_iter()
    .any(wants);
    for p in projects.iter().filter(|_| per_project) {
        let snap = semantic::snapshot(app, p).await?;
        out.not_embedded += snap.not_embedded;
        if wants(Kind::Atoms) || wants(Kind::Molecules) {
            graph_kinds(app, &snap, p, &ask, &r.kinds, n, &mut out).await?;
        }
        if wants(Kind::Entities) || wants(Kind::References) {
            code_kinds(app, &snap, p, &ask, &r.kinds, n, &mut out).await?;
        }
        if wants(Kind::Classes) {
            classes(app, &snap, p, &ask, n, &mut out).await?;
        }
    }
    if wants(Kind::Tasks) {
        tasks(app, r.project_id.as_deref(), &ask, n, &mut out).await?;
    }
    if wants(Kind::Memory) {
        memories(app, &ask, n, &mut out).await?;
    }
    out.hits.sort_by(|a, b| {
        b.hit
            .fused
            .total_cmp(&a.hit.fused)
            .then(b.hit.vector.total_cmp(&a.hit.vector))
            .then(a.id.cmp(&b.id))
    });
    out.more = out.hits.len().saturating_sub(n);
    out.hits.truncate(n);
    Ok(out)
}

/// An indexed source of one tenant: its vectors' name, its full-text index and
/// whether its words match as stemmed prefixes (as its own search matches them).
struct Src<'a>(&'a str, &'static str, Fts, bool);

/// One indexed source ranked against `ask`.
async fn ranked(
    app: &App,
    snap: &Snapshot,
    Src(tenant, source, index, prefix): Src<'_>,
    ask: &Ask<'_>,
    n: usize,
    out: &mut FindOut,
) -> Result<Vec<Hit>> {
    let keep = |_: &str| true;
    let r = semantic::rank(
        app,
        snap,
        tenant,
        Rank {
            source,
            index,
            query: ask.text,
            qvec: ask.qvec,
            mode: Mode::Hybrid,
            min_score: ask.min_score,
            prefix,
            keep: &keep,
            lexical: None,
            vectors: None,
        },
        n,
    )
    .await?;
    out.below_min_score += r.below_min_score;
    Ok(r.hits)
}

async fn graph_kinds(
    app: &App,
    snap: &Snapshot,
    p: &str,
    ask: &Ask<'_>,
    kinds: &[Kind],
    n: usize,
    out: &mut FindOut,
) -> Result<()> {
    let (atoms, molecules) = {
        let mut c = app.store.read().await?;
        graph::load_project(&mut c, p).await?
    };
    if kinds.contains(&Kind::Atoms) && !atoms.is_empty() {
        let by: HashMap<&str, _> = atoms.iter().map(|a| (a.id.as_str(), a)).collect();
        // Graph search's lexical side: stemmed prefixes.
        for h in ranked(app, snap, Src(p, "atom", Fts::Atoms, true), ask, n, out).await? {
            if let Some(a) = by.get(h.row_id.as_str()) {
                out.hits.push(Found {
                    kind: HitKind::Atom,
                    id: a.id.clone(),
                    project_id: Some(p.to_string()),
                    name: a.name.clone(),
                    text: a.knowledge.clone(),
                    key: None,
                    hit: h,
                });
            }
        }
    }
    if kinds.contains(&Kind::Molecules) && !molecules.is_empty() {
        let by: HashMap<&str, _> = molecules.iter().map(|m| (m.id.as_str(), m)).collect();
        for h in ranked(
            app,
            snap,
            Src(p, "molecule", Fts::Molecules, true),
            ask,
            n,
            out,
        )
        .await?
        {
            if let Some(m) = by.get(h.row_id.as_str()) {
                out.hits.push(Found {
                    kind: HitKind::Molecule,
                    id: m.id.clone(),
                    project_id: Some(p.to_string()),
                    name: m.name.clone(),
                    text: m.knowledge.clone(),
                    key: None,
                    hit: h,
                });
            }
        }
    }
    Ok(())
}

async fn code_kinds(
    app: &App,
    snap: &Snapshot,
    p: &str,
    ask: &Ask<'_>,
    kinds: &[Kind],
    n: usize,
    out: &mut FindOut,
) -> Result<()> {
    if kinds.contains(&Kind::Entities) {
        let hits = ranked(
            app,
            snap,
            Src(p, "entity", Fts::Entities, false),
            ask,
            n,
            out,
        )
        .await?;
        let ids: Vec<String> = hits.iter().map(|h| h.row_id.clone()).collect();
        let rows = {
            let mut c = app.store.read().await?;
            code::entities_by_ids(&mut c, &ids).await?
        };
        let mut by: HashMap<String, _> = rows.into_iter().map(|e| (e.id.clone(), e)).collect();
        for h in hits {
            if let Some(e) = by.remove(&h.row_id) {
                out.hits.push(Found {
                    kind: HitKind::Entity,
                    id: e.id,
                    project_id: Some(p.to_string()),
                    name: e.name,
                    text: e.description,
                    key: None,
                    hit: h,
                });
            }
        }
    }
    if kinds.contains(&Kind::References) {
        let hits = ranked(
            app,
            snap,
            Src(p, "reference", Fts::References, false),
            ask,
            n,
            out,
        )
        .await?;
        let ids: Vec<String> = hits.iter().map(|h| h.row_id.clone()).collect();
        let (rows, holders) = {
            let mut c = app.store.read().await?;
            (
                code::references_by_ids(&mut c, &ids).await?,
                crate::store::semantic::holders(&mut c, &ids).await?,
            )
        };
        let mut by: HashMap<String, _> = rows.into_iter().map(|x| (x.id.clone(), x)).collect();
        for h in hits {
            if let Some(x) = by.remove(&h.row_id) {
                let holder = holders
                    .iter()
                    .find(|(rid, _, _)| *rid == x.id)
                    .map(|(_, id, _)| id.clone());
                out.hits.push(Found {
                    kind: HitKind::Reference,
                    name: format!("{}:{}-{}", x.document_path, x.start_line, x.end_line),
                    id: x.id,
                    project_id: Some(p.to_string()),
                    text: x.description,
                    key: holder,
                    hit: h,
                });
            }
        }
    }
    Ok(())
}

async fn classes(
    app: &App,
    snap: &Snapshot,
    p: &str,
    ask: &Ask<'_>,
    n: usize,
    out: &mut FindOut,
) -> Result<()> {
    let rows = {
        let mut c = app.store.read().await?;
        ontology::entities(&mut c, p).await?
    };
    let rows: Vec<_> = rows.into_iter().filter(|e| e.kind == "class").collect();
    if rows.is_empty() {
        return Ok(());
    }
    // The texts the class is embedded by: its terms and its definition.
    let names: Vec<String> = rows
        .iter()
        .map(|e| {
            let term = e.preferred_term.clone().unwrap_or_else(|| e.iri.clone());
            match &e.alt_terms {
                Some(alt) if !alt.is_empty() => format!("{term} {alt}"),
                _ => term,
            }
        })
        .collect();
    let docs: Vec<Doc<'_>> = rows
        .iter()
        .zip(&names)
        .map(|(e, name)| Doc {
            id: &e.id,
            name,
            body: e.definition.as_deref().unwrap_or(""),
        })
        .collect();
    let ranked = rank_docs(app, snap, p, ONTOLOGY_CLASS.name, &docs, ask, n).await?;
    out.below_min_score += ranked.below_min_score;
    let by: HashMap<&str, _> = rows.iter().map(|e| (e.id.as_str(), e)).collect();
    for h in ranked.hits {
        if let Some(e) = by.get(h.row_id.as_str()) {
            out.hits.push(Found {
                kind: HitKind::Class,
                id: e.id.clone(),
                project_id: Some(p.to_string()),
                name: e.preferred_term.clone().unwrap_or_else(|| e.iri.clone()),
                text: e.definition.clone().unwrap_or_default(),
                key: Some(e.iri.clone()),
                hit: h,
            });
        }
    }
    Ok(())
}

async fn tasks(
    app: &App,
    project_id: Option<&str>,
    ask: &Ask<'_>,
    n: usize,
    out: &mut FindOut,
) -> Result<()> {
    let mut items = Vec::new();
    {
        let mut c = app.store.read().await?;
        for kind in [ItemKind::Task, ItemKind::Feature] {
            let f = item::Filter {
                project_id,
                ..Default::default()
            };
            items.extend(item::search(&mut c, kind, &f, i64::MAX, 0).await?.0);
        }
    }
    for (i, h) in task_ranking::rank_items(app, items, ask, n).await? {
        out.hits.push(Found {
            kind: if i.kind == ItemKind::Task {
                HitKind::Task
            } else {
                HitKind::Feature
            },
            id: i.id,
            project_id: i.project_id,
            name: i.name,
            text: i.summary,
            key: None,
            hit: h,
        });
    }
    Ok(())
}

async fn memories(app: &App, ask: &Ask<'_>, n: usize, out: &mut FindOut) -> Result<()> {
    let snap = semantic::snapshot(app, memory::TENANT).await?;
    out.not_embedded += snap.not_embedded;
    // More than `n`: some may be retired or superseded, which `find` does not answer.
    let hits = ranked(
        app,
        &snap,
        Src(memory::TENANT, "memory_atom", Fts::MemoryAtoms, false),
        ask,
        n * 2,
        out,
    )
    .await?;
    let filter = memory::AtomFilter {
        statuses: ALIVE.iter().map(|s| s.to_string()).collect(),
        ids: Some(hits.iter().map(|h| h.row_id.clone()).collect()),
        ..Default::default()
    };
    let rows = {
        let mut c = app.store.read().await?;
        memory::candidates(&mut c, &filter, (n * 2) as i64).await?
    };
    let mut by: HashMap<String, _> = rows.into_iter().map(|r| (r.id.clone(), r)).collect();
    for h in hits {
        if let Some(a) = by.remove(&h.row_id) {
            out.hits.push(Found {
                kind: HitKind::Memory,
                id: a.id,
                project_id: None,
                name: a.statement,
                text: a.atom_type,
                key: None,
                hit: h,
            });
        }
    }
    Ok(())
}
