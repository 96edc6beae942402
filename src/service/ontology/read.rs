//! The read path: discovery (keywords, and the semantic layer when the words alone
//! do not name a class), a note enriched with the reasoner's view, validated graph
//! queries, and bounded traversals. Every call reads the served index of the
//! project's synced ontology.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{served, today, Served};
use crate::config::OntologySettings;
use crate::domain::field::{Field, Tool};
use crate::domain::ontology::ofn::write_axiom;
use crate::domain::ontology::quality::{self, QualityReport};
use crate::domain::ontology::{Axiom, EntityKind, Page, Sourced};
use crate::domain::ontology_index::discover::{self, Found, Matched, Options, Seed};
use crate::domain::ontology_index::prop::{self, IRI, PREFERRED_TERM};
use crate::domain::ontology_index::Index;
use crate::domain::ontology_index::NODE_KEYS;
use crate::domain::ontology_query::{
    execute, traverse as walk, ErrorKind, Limits, QueryError, QueryOutcome, Subgraph,
    TraverseDirection, TraverseOptions,
};
use crate::error::{Details, Error, Result};
use crate::service::{semantic, App};
use crate::store::embedding::ONTOLOGY_CLASS;
use crate::store::ontology as db;
use crate::store::semantic::Fts;

/// Semantic seeds need at least this cosine similarity to the query.
const SEMANTIC_MIN: f32 = 0.35;
/// Semantic seeds taken at most.
const SEMANTIC_SEEDS: usize = 5;
/// Keyword seeds taken at most.
const KEYWORD_SEEDS: usize = 50;

/// The entity a name means in the served ontology, or NOT_FOUND with the nearest.
pub fn entity<'a>(ix: &'a Index, name: &str, what: &'static str) -> Result<&'a str> {
    ix.resolve(name).ok_or_else(|| {
        let nearest = ix.nearest(name);
        let hint = if nearest.is_empty() {
            format!("find it with {}", Tool::OntologyDiscover)
        } else {
            format!("nearest: {}", nearest.join(", "))
        };
        Error::NotFoundNear {
            entity: what,
            id: name.to_string(),
            message: format!("{what} {name} not found in the synced ontology; {hint}"),
            nearest,
        }
    })
}

/// What discovery answered.
pub struct Discovered {
    pub served: Arc<Served>,
    pub found: Vec<Found>,
    /// Whether the semantic layer was asked (the words alone named no class), and
    /// the embedder that ran.
    pub semantic: Option<&'static str>,
}

/// `ontology_discover`: seeds by keyword, by meaning when no class is named outright,
/// then the discovery (docs/ontology.md, discovery).
pub async fn discover(
    app: &App,
    project_id: &str,
    query: &str,
    limit: usize,
    domain: Option<String>,
) -> Result<Discovered> {
    let (_, s) = served(app, project_id).await?;
    let (s2, q2) = (s.clone(), query.to_string());
    let mut seeds: Vec<Seed> = pool("searching the terms", move || {
        s2.index
            .terms
            .search(&q2, KEYWORD_SEEDS)
            .into_iter()
            .map(|(iri, score)| Seed {
                iri: iri.to_string(),
                score,
                matched: Matched::Keyword,
            })
            .collect()
    })
    .await?;
    // The words name no class outright: ask the semantic layer too, so that a
    // paraphrase finds its class.
    let mut semantic_by = None;
    if seeds.first().is_none_or(|b| b.score < 1.0) && !s.index.terms.is_empty() {
        let q = semantic::embed_query(app, query).await?;
        let snap = semantic::snapshot(app, project_id).await?;
        let keep = |_: &str| true;
        let hits = semantic::rank(
            app,
            &snap,
            project_id,
            semantic::Rank {
                source: ONTOLOGY_CLASS.name,
                // Unused in vector mode: the keyword side is this toolset's own.
                index: Fts::Entities,
                query,
                qvec: &q.vector,
                mode: semantic::Mode::Vector,
                min_score: SEMANTIC_MIN,
                prefix: false,
                keep: &keep,
                lexical: None,
                vectors: None,
            },
            SEMANTIC_SEEDS,
        )
        .await?
        .hits;
        let ids: Vec<String> = hits.iter().map(|h| h.row_id.clone()).collect();
        let iris = {
            let mut c = app.store.read().await?;
            db::iris_of(&mut c, &ids).await?
        };
        for h in hits {
            if let Some((_, iri)) = iris.iter().find(|(id, _)| *id == h.row_id) {
                if !seeds.iter().any(|x| &x.iri == iri) {
                    seeds.push(Seed {
                        iri: iri.clone(),
                        score: h.vector.clamp(0.0, 1.0),
                        matched: Matched::Semantic,
                    });
                }
            }
        }
        semantic_by = Some(q.embedder);
    }
    let opts = Options {
        limit,
        domain,
        today: today().0,
    };
    let s2 = s.clone();
    let found = pool("discovering", move || {
        discover::discover(&s2.index, &seeds, &opts)
    })
    .await?;
    Ok(Discovered {
        served: s,
        found,
        semantic: semantic_by,
    })
}

/// Runs `f` on the blocking pool: work over a whole ontology (a search of its
/// terms, an expansion, a query, a walk) must not hold up other sessions' calls.
async fn pool<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(|e| Error::Internal(format!("{what}: {e}")))
}

/// An axiom about the note's entity, asserted on a page or inferred.
pub struct NoteAxiom {
    pub kind: &'static str,
    pub subject: String,
    pub object: String,
    pub inferred: bool,
    /// Where it is asserted (file, line).
    pub at: Option<(String, usize)>,
    /// For an inferred one: the asserted axioms it follows from.
    pub because: Vec<Sourced>,
}

/// A note related to the read one.
pub struct Related {
    pub iri: String,
    pub rel_type: String,
    pub outgoing: bool,
    pub inferred: bool,
}

/// `ontology_read`'s answer.
pub struct Note {
    pub served: Arc<Served>,
    pub iri: String,
    pub kind: EntityKind,
    pub path: Option<String>,
    pub markdown: String,
    pub parents: Vec<String>,
    pub axioms: Vec<NoteAxiom>,
    pub related: Vec<Related>,
    /// For an unsatisfiable class: why.
    pub unsatisfiable: Option<Vec<Sourced>>,
    pub quality: Option<QualityReport>,
    pub schema_context: String,
}

/// Inferred direct parents explained at most: each explanation is a small
/// saturation, then one more per axiom it tries to drop (tens of milliseconds at
/// 10,000 classes); the other inferred superclasses follow from these and the
/// asserted ones.
const EXPLAINED: usize = 3;

fn axiom_parts(a: &Axiom) -> (&'static str, String, String) {
    use crate::domain::ontology::expr::write_expr;
    let x = |c: &crate::domain::ontology::ClassExpr| write_expr(c, &|n: &String| n.clone());
    match a {
        Axiom::SubClassOf(l, r) => ("SubClassOf", x(l), x(r)),
        Axiom::EquivalentClasses(v) => (
            "EquivalentClasses",
            v.first().map(x).unwrap_or_default(),
            v.iter().skip(1).map(x).collect::<Vec<_>>().join(", "),
        ),
        Axiom::DisjointClasses(v) => (
            "DisjointClasses",
            v.first().map(x).unwrap_or_default(),
            v.iter().skip(1).map(x).collect::<Vec<_>>().join(", "),
        ),
        Axiom::SubObjectPropertyOf(ch, q) => ("SubObjectPropertyOf", ch.join(" o "), q.clone()),
        Axiom::TransitiveObjectProperty(p) => {
            ("TransitiveObjectProperty", p.clone(), String::new())
        }
        Axiom::ReflexiveObjectProperty(p) => ("ReflexiveObjectProperty", p.clone(), String::new()),
        Axiom::ObjectPropertyDomain(p, c) => ("ObjectPropertyDomain", p.clone(), x(c)),
        Axiom::ObjectPropertyRange(p, c) => ("ObjectPropertyRange", p.clone(), x(c)),
        Axiom::ClassAssertion(c, i) => ("ClassAssertion", i.clone(), x(c)),
        Axiom::ObjectPropertyAssertion(p, a, b) => {
            ("ObjectPropertyAssertion", a.clone(), format!("{p} {b}"))
        }
    }
}

/// `ontology_read`: the page, its metadata, its asserted and inferred axioms, the
/// notes related both ways, and a short schema context.
pub async fn read(app: &App, project_id: &str, name: &str) -> Result<Note> {
    let (_, s) = served(app, project_id).await?;
    let ix = &s.index;
    let iri = entity(ix, name, "entity")?.to_string();
    let kind = ix
        .ontology
        .entity(&iri)
        .map(|e| e.kind)
        .unwrap_or(EntityKind::Class);
    let path = ix.page_of(&iri).map(str::to_string);
    let markdown = match &path {
        Some(p) => {
            let mut c = app.store.read().await?;
            db::page_at(&mut c, project_id, p)
                .await?
                .map(|(_, t)| t)
                .unwrap_or_default()
        }
        None => String::new(),
    };
    // Explanations are saturations: off the thread that serves calls.
    let s2 = s.clone();
    tokio::task::spawn_blocking(move || note_of(s2, iri, kind, path, markdown))
        .await
        .map_err(|e| Error::Internal(format!("reading a note: {e}")))
}

/// The note of an entity of the served ontology.
fn note_of(
    s: Arc<Served>,
    iri: String,
    kind: EntityKind,
    path: Option<String>,
    markdown: String,
) -> Note {
    let ix = &s.index;
    let c = &ix.classification;
    let mut axioms: Vec<NoteAxiom> = ix
        .ontology
        .axioms
        .iter()
        .filter(|a| path.as_deref() == Some(a.origin.file.as_str()))
        .map(|a| {
            let (kind, subject, object) = axiom_parts(&a.axiom);
            NoteAxiom {
                kind,
                subject,
                object,
                inferred: false,
                at: Some((a.origin.file.clone(), a.origin.line)),
                because: Vec::new(),
            }
        })
        .collect();
    let mut explained = 0;
    if kind == EntityKind::Class {
        let direct = c.direct_parents(&iri);
        for sup in c.superclasses(&iri).iter().filter(|x| !x.asserted) {
            let because = if explained < EXPLAINED && direct.contains(&sup.sup) {
                explained += 1;
                c.explain_subsumption(&iri, sup.sup)
                    .map(|j| j.axioms)
                    .unwrap_or_default()
            } else {
                Vec::new()
            };
            axioms.push(NoteAxiom {
                kind: "SubClassOf",
                subject: iri.clone(),
                object: sup.sup.to_string(),
                inferred: true,
                at: None,
                because,
            });
        }
    } else if kind == EntityKind::Individual {
        for t in c.types(&iri) {
            let told = ix.ontology.axioms.iter().any(|a| {
                matches!(&a.axiom, Axiom::ClassAssertion(crate::domain::ontology::ClassExpr::Class(x), i) if x == t && *i == iri)
            });
            if !told {
                axioms.push(NoteAxiom {
                    kind: "ClassAssertion",
                    subject: iri.clone(),
                    object: t.to_string(),
                    inferred: true,
                    at: None,
                    because: Vec::new(),
                });
            }
        }
    }
    let unsatisfiable =
        (kind == EntityKind::Class && c.is_satisfiable(&iri) == Some(false)).then(|| {
            c.explain_unsatisfiable(&iri)
                .map(|j| j.axioms)
                .unwrap_or_default()
        });
    let mut related = Vec::new();
    if let Some(n) = ix.node(&iri) {
        let g = &ix.graph;
        for (edges, outgoing) in [(g.out_edges(n), true), (g.in_edges(n), false)] {
            for &e in edges {
                let (Some(t), Some((a, b))) = (g.rel_type(e), g.endpoints(e)) else {
                    continue;
                };
                let other = if outgoing { b } else { a };
                let inferred = matches!(
                    g.edge_property(e, "inferred"),
                    Some(crate::domain::ontology_query::Value::Bool(true))
                );
                related.push(Related {
                    iri: ix.iri(other).to_string(),
                    rel_type: t.to_string(),
                    outgoing,
                    inferred,
                });
            }
        }
    }
    let parents = c
        .direct_parents(&iri)
        .into_iter()
        .filter(|p| ix.ontology.entity(p).is_some())
        .map(str::to_string)
        .collect();
    let quality = (kind == EntityKind::Class)
        .then(|| Page::parse(&markdown).ok().map(|p| quality::assess(&p)))
        .flatten();
    let schema_context = schema_context(ix, &iri);
    Note {
        iri,
        kind,
        path,
        markdown,
        parents,
        axioms,
        related,
        unsatisfiable,
        quality,
        schema_context,
        served: s.clone(),
    }
}

/// A few lines an agent can write queries from: the labels, relationship types and
/// property keys in use, and two queries about this entity.
pub fn schema_context(ix: &Index, iri: &str) -> String {
    let g = &ix.graph;
    let mut types: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for n in g.node_ids() {
        for &e in g.out_edges(n) {
            if let Some(t) = g.rel_type(e) {
                *types.entry(t).or_default() += 1;
            }
        }
    }
    let classes = ix.ontology.iris(EntityKind::Class).count();
    let individuals = ix.ontology.iris(EntityKind::Individual).count();
    let types: Vec<String> = types.iter().map(|(t, n)| format!("{t} ({n})")).collect();
    let local = crate::domain::ontology::model::local_name(iri).unwrap_or_else(|| iri.to_string());
    format!(
        "Nodes: :OwlClass ({classes}), :Individual ({individuals}), :ObjectProperty; every class is also labelled with its own IRI \
         and each superclass's (asserted or inferred), e.g. :`{iri}`. Relationships: {}; SUBCLASS_OF and INSTANCE_OF carry \
         `{inferred}`. Keys: {keys}. Examples: MATCH (c:`{iri}`) RETURN c.{IRI}, c.{PREFERRED_TERM} | \
         MATCH (c {{{IRI}: '{iri}'}})-[r]-(o) RETURN type(r), o.{IRI} | local names work as labels when unambiguous: (c:{local}).",
        types.join(", "),
        inferred = prop::INFERRED,
        keys = NODE_KEYS
            .iter()
            .filter(|k| ![prop::KIND, prop::PAGE, prop::UNSATISFIABLE].contains(*k))
            .copied()
            .collect::<Vec<_>>()
            .join(", ")
    )
}

/// `ontology_query`'s answer: the outcome and the index its nodes belong to.
pub struct Answered {
    pub served: Arc<Served>,
    pub outcome: QueryOutcome,
    pub elapsed: Duration,
}

/// A refused query, as the validation error the agent fixes; a query a bound
/// stopped says which setting of the config file sets it, and its value.
pub fn query_refused(e: QueryError, set: &OntologySettings) -> Error {
    let limit = crate::config::query_limit(set, e.kind);
    let mut message = format!("parameter 'cypher': {}", located(&e));
    if let Some((setting, value)) = limit {
        message.push_str(&format!(
            " (the limit is {setting} = {value} in [ontology] of the config file)"
        ));
    }
    Error::ValidationDetails {
        message,
        parameter: Field::Cypher.to_string(),
        details: Details::Query(Box::new(e), limit),
    }
}

/// A query error's message with its place in front (once: a name's message already
/// starts with it).
fn located(e: &QueryError) -> String {
    match e.position {
        Some(p) if !e.message.starts_with("line ") => format!("{p}: {}", e.message),
        _ => e.message.clone(),
    }
}

/// `ontology_query`: parse, validate (repairing clear misspellings), run, within the
/// settings' row and time bounds.
pub async fn query(app: &App, project_id: &str, text: &str) -> Result<Answered> {
    let (_, s) = served(app, project_id).await?;
    let set = &app.config.ontology;
    let limits = Limits {
        max_rows: set.max_query_rows,
        max_bindings: set.max_query_bindings,
        max_bytes: set.query_memory,
        max_repair: set.max_query_repair,
        deadline: Some(Instant::now() + set.query_timeout),
        ..Limits::default()
    };
    let (s2, text) = (s.clone(), text.to_string());
    let started = Instant::now();
    let out = tokio::task::spawn_blocking(move || {
        execute(&s2.index.graph, &s2.index.schema, &text, &limits)
    })
    .await
    .map_err(|e| Error::Internal(format!("running a query: {e}")))?;
    match out {
        Ok(outcome) => Ok(Answered {
            served: s,
            outcome,
            elapsed: started.elapsed(),
        }),
        Err(e) => Err(query_refused(e, set)),
    }
}

/// The subgraph `ontology_read` answers given a depth.
pub struct Traversal {
    pub served: Arc<Served>,
    pub start: String,
    pub subgraph: Subgraph,
}

/// Nodes a traversal answers at most.
pub const TRAVERSE_MAX_NODES: usize = 200;

/// `ontology_read` with a depth: the subgraph within `depth` hops of `start`.
pub async fn traverse(
    app: &App,
    project_id: &str,
    start: &str,
    depth: usize,
    types: Option<Vec<String>>,
    direction: TraverseDirection,
) -> Result<Traversal> {
    let max = app.config.ontology.max_traverse_depth;
    if depth > max {
        return Err(Error::validation(
            Field::Depth,
            format!("{depth} is deeper than max_traverse_depth ({max})"),
        ));
    }
    let (_, s) = served(app, project_id).await?;
    let iri = entity(&s.index, start, "entity")?.to_string();
    let node = s
        .index
        .node(&iri)
        .ok_or_else(|| Error::not_found("entity", iri.clone()))?;
    let opts = TraverseOptions {
        depth,
        rel_types: types,
        direction,
        max_nodes: TRAVERSE_MAX_NODES,
    };
    let s2 = s.clone();
    let walked = pool("walking the graph", move || {
        walk(&s2.index.graph, &s2.index.schema, node, &opts)
    })
    .await?;
    let subgraph = walked.map_err(|e| {
        // The core's refusal of the types it was given says what they name; the
        // option is named here, as the caller sent it.
        let f = Field::RelationshipTypes;
        let message = match e.kind {
            ErrorKind::UnknownName => format!("parameter '{f}': {f} {}", located(&e)),
            _ => format!("parameter '{f}': {}", located(&e)),
        };
        Error::ValidationDetails {
            message,
            parameter: f.to_string(),
            details: Details::Query(Box::new(e), None),
        }
    })?;
    Ok(Traversal {
        served: s,
        start: iri,
        subgraph,
    })
}

/// An asserted axiom as an explanation cites it: OFN text, file, line.
pub fn cite(s: &Sourced) -> (String, String, usize) {
    (write_axiom(&s.axiom), s.origin.file.clone(), s.origin.line)
}
