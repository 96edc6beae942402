//! A task's briefing: what an agent needs before it starts, in one read composed of
//! the toolsets' own reads. The task and its sections; the knowledge atoms covering
//! its Context Files (`context::for_task`); the code entities with references in those
//! files, each reference judged for staleness (`code::analysis::analyze`); the ACTIVE
//! memory for its project, the subjects its text names (`memory::recall::for_task`)
//! and the atoms that mention its files; the ontology classes its title and
//! description name (a run of its words is a class's term). The knowledge, code and
//! memory parts are ordered by the ranking core ([`ranking::rank`], hybrid) with the
//! task's title and description as the query, what it does not place (no vector yet,
//! no word in common) following in the part's own order; the classes by
//! `ontology::read::discover` on the same query (its relevance), then in the order
//! the text names them; the sections keep their own order. A part of a toolset the
//! server does not serve, or that has nothing for the task, is empty with a note
//! saying why. Trimming to a budget is the caller's (it measures the served text).

use std::collections::{HashMap, HashSet};

use time::OffsetDateTime;

use crate::domain::code::Entity;
use crate::domain::graph::Atom;
use crate::domain::memory::model::{MemoryStatus, SubjectId, SubjectKind};
use crate::domain::{Item, ItemKind, Section};
use crate::error::{Error, Result};
use crate::service::code::analysis::{self, Staleness};
use crate::service::context::{self, Options};
use crate::service::memory::recall::{self, RecallHit, RecallReq};
use crate::service::ontology::{read as onto, Served};
use crate::service::ranking::{self, Mode, Rank};
use crate::service::semantic::{self, Snapshot};
use crate::service::{containers, App};
use crate::store::memory::TENANT;
use crate::store::semantic::Fts;
use crate::store::Conn;

/// The classes discovery is asked for, to order those the text names.
const CLASSES_MAX: usize = 20;
/// Memory atoms mentioning the task's files, at most.
const FILE_ATOMS_MAX: usize = 50;

/// Why a part has nothing, or less than it might. The caller words the ones that
/// call for another tool.
#[derive(Debug, Clone, PartialEq)]
pub enum Note {
    /// Said as it is.
    Text(String),
    /// The project has no repository bound, so no code is read.
    NoRepository,
    /// Only the first `read` of the task's `of` files were read.
    FirstFiles { read: usize, of: usize },
}

/// Context Files paths whose code references are judged, at most (each costs a diff).
const CODE_PATHS_MAX: usize = 100;

/// One knowledge atom covering the task's files.
pub struct KnowledgeAtom {
    pub atom: Atom,
    /// The molecule it belongs to: (id, name).
    pub molecule: Option<(String, String)>,
    /// The Context Files paths it covers.
    pub paths: Vec<String>,
}

/// One code entity holding references in the task's files, with each judged.
pub struct CodeEntity {
    pub entity: Entity,
    pub references: Vec<Staleness>,
}

/// A task's briefing, each list best first.
pub struct Brief {
    pub task: Item,
    pub sections: Vec<Section>,
    /// The paths its Context Files name.
    pub paths: Vec<String>,
    pub knowledge: Vec<KnowledgeAtom>,
    /// Context Files paths no atom covers (knowledge gaps).
    pub unmatched_paths: Vec<String>,
    pub code: Vec<CodeEntity>,
    pub memory: Vec<RecallHit>,
    /// Names of the subjects the memory atoms refer to.
    pub subjects: HashMap<SubjectId, (SubjectKind, String)>,
    /// The IRIs of the classes the task names.
    pub classes: Vec<String>,
    /// The served ontology the classes are read from.
    pub ontology: Option<std::sync::Arc<Served>>,
    /// Per part, why it has nothing (or less than it might).
    pub notes: Vec<(&'static str, Note)>,
}

/// The query every part is ranked by: the task's title and description (its summary
/// when it has no description).
fn query_of(t: &Item) -> String {
    let body = match t.description.as_deref().map(str::trim) {
        Some(d) if !d.is_empty() => d,
        _ => t.summary.trim(),
    };
    format!("{} {body}", t.name).trim().to_string()
}

/// `ids` in the ranking core's order for `query` (within `source`), then those it did
/// not place, in their given order.
async fn order(
    app: &App,
    snap: &Snapshot,
    project: &str,
    (source, index, prefix): (&'static str, Fts, bool),
    query: &str,
    qvec: &[f32],
    ids: &[String],
) -> Result<Vec<String>> {
    if ids.len() < 2 {
        return Ok(ids.to_vec());
    }
    let allowed: HashSet<&str> = ids.iter().map(String::as_str).collect();
    let keep = |id: &str| allowed.contains(id);
    let ranked = ranking::rank(
        app,
        snap,
        project,
        Rank {
            source,
            index,
            query,
            qvec,
            mode: Mode::Hybrid,
            // Every candidate already belongs to the task; the ranking only orders.
            min_score: 0.0,
            prefix,
            keep: &keep,
            lexical: None,
            vectors: None,
        },
        ids.len(),
    )
    .await?;
    let mut out: Vec<String> = Vec::with_capacity(ids.len());
    for h in ranked.hits {
        if !out.contains(&h.row_id) {
            out.push(h.row_id);
        }
    }
    for id in ids {
        if !out.contains(id) {
            out.push(id.clone());
        }
    }
    Ok(out)
}

fn served(app: &App, toolset: &str) -> bool {
    app.config.toolsets.iter().any(|t| t == toolset)
}

/// Whether a Context Files entry names one file (not a folder or a pattern).
fn one_file(p: &str) -> bool {
    !p.ends_with('/') && !p.contains(['*', '?', '[', '{'])
}

/// Most words a class's term may have to be found named in a text.
const TERM_WORDS: usize = 5;

/// The classes a text names: each run of up to [`TERM_WORDS`] of its words that is a
/// class's preferred or alternative term (ignoring case; a plural's `s` dropped), in
/// the order the text names them.
fn named_classes(ix: &crate::domain::ontology_index::Index, text: &str) -> Vec<String> {
    use crate::domain::ontology::EntityKind;
    let words: Vec<&str> = text
        .split(|c: char| !(c.is_alphanumeric() || c == '-'))
        .filter(|w| !w.is_empty())
        .take(2_000)
        .collect();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    // Longest run first; the words of a match name nothing else (`consensus protocol`
    // is not also `protocol`).
    while i < words.len() {
        let mut step = 1;
        for n in (1..=TERM_WORDS.min(words.len() - i)).rev() {
            let run = words[i..i + n].join(" ");
            let mut hit = None;
            for cand in [run.as_str(), run.strip_suffix('s').unwrap_or("")] {
                let Some(iri) = ix.resolve(cand).filter(|_| !cand.is_empty()) else {
                    continue;
                };
                let Some(e) = ix
                    .ontology
                    .entity(iri)
                    .filter(|e| e.kind == EntityKind::Class)
                else {
                    continue;
                };
                let said = cand.to_lowercase();
                let terms = e
                    .meta
                    .preferred_term()
                    .map(str::to_string)
                    .into_iter()
                    .chain(e.meta.alt_terms());
                if terms.map(|t| t.trim().to_lowercase()).any(|t| t == said) {
                    hit = Some(iri.to_string());
                    break;
                }
            }
            if let Some(iri) = hit {
                if !out.contains(&iri) {
                    out.push(iri);
                }
                step = n;
                break;
            }
        }
        i += step;
    }
    out
}

/// The briefing of task `id`, in one read transaction: every row it answers (the
/// task, its sections, the knowledge atoms, the code references and entities, the
/// memory atoms and subjects, the project's repository and ontology bindings) comes
/// from one state of the database. What only orders those rows (the ranking's
/// indexes) or reads outside the database (git, the language server, the served
/// ontology, each checked against its generation) runs beside it.
pub async fn brief(app: &App, id: &str) -> Result<Brief> {
    let mut tx = app.store.snapshot().await?;
    let b = brief_in(app, &mut tx, id).await?;
    tx.commit().await?;
    Ok(b)
}

/// [`brief`] on `c`, for a read that composes it with others (the page's task view).
pub async fn brief_in(app: &App, c: &mut Conn, id: &str) -> Result<Brief> {
    let task = match containers::get_in(c, crate::domain::ContainerType::Task, id).await? {
        containers::Container::Item(t) if t.kind == ItemKind::Task => t,
        _ => return Err(Error::not_found("task", id)),
    };
    let sections = crate::store::section::list(c, &task.id, &[], &[]).await?;
    let query = query_of(&task);
    let qvec = semantic::embed_query(app, &query).await?.vector;
    let mut notes: Vec<(&'static str, Note)> = Vec::new();

    // Knowledge: the atoms covering the Context Files, most relevant first.
    let opts = Options {
        changelog_limit: 0,
        max_tokens: None,
    };
    let tc = context::for_task_in(app, c, &task, &opts).await?;
    if let Some(n) = tc.note.clone() {
        notes.push(("knowledge", Note::Text(n)));
    }
    let paths = tc.paths.clone();
    let mut knowledge = Vec::new();
    let mut unmatched_paths = Vec::new();
    let project = task.project_id.clone();
    let snap = match &project {
        Some(p) => Some(semantic::snapshot(app, p).await?),
        None => None,
    };
    if let (Some(c), Some(p), Some(snap)) = (tc.context, &project, &snap) {
        unmatched_paths = c.unmatched_paths;
        let mut by_id: HashMap<String, KnowledgeAtom> = HashMap::new();
        let mut ids = Vec::new();
        for m in c.molecules {
            for a in m.atoms {
                ids.push(a.atom.id.clone());
                let k = KnowledgeAtom {
                    molecule: Some((m.molecule.id.clone(), m.molecule.name.clone())),
                    paths: a.matched.iter().map(|(p, _)| p.clone()).collect(),
                    atom: a.atom,
                };
                by_id.insert(k.atom.id.clone(), k);
            }
        }
        for a in c.orphan_atoms {
            ids.push(a.atom.id.clone());
            let k = KnowledgeAtom {
                molecule: None,
                paths: a.matched.iter().map(|(p, _)| p.clone()).collect(),
                atom: a.atom,
            };
            by_id.insert(k.atom.id.clone(), k);
        }
        let source = (crate::store::embedding::ATOM.name, Fts::Atoms, true);
        for id in order(app, snap, p, source, &query, &qvec, &ids).await? {
            knowledge.extend(by_id.remove(&id));
        }
    }

    // Code: the entities holding references in the Context Files, with staleness.
    let mut code = Vec::new();
    match (&project, &snap) {
        _ if !served(app, "code") => {}
        (Some(p), Some(snap)) => {
            let bound = crate::store::code::repo_of(c, p).await?.is_some();
            if !bound {
                notes.push(("code", Note::NoRepository));
            } else {
                code = code_part(
                    app,
                    c,
                    p,
                    snap,
                    &paths,
                    (query.as_str(), qvec.as_slice()),
                    &mut notes,
                )
                .await?;
            }
        }
        _ => {}
    }

    // Memory: ACTIVE atoms for the project, the subjects the task names, its files.
    let mut memory = Vec::new();
    let mut subjects = HashMap::new();
    if served(app, "memory") {
        let now = OffsetDateTime::now_utc();
        let tm = recall::for_task_in(c, &task, usize::MAX, now).await?;
        if let Some(n) = tm.recalled.note.clone() {
            notes.push(("memory", Note::Text(n)));
        }
        subjects.extend(tm.recalled.subjects);
        let mut hits: Vec<RecallHit> = tm.recalled.hits;
        let files: Vec<&str> = paths
            .iter()
            .filter(|p| one_file(p))
            .map(String::as_str)
            .collect();
        if let (Some(p), false) = (&project, files.is_empty()) {
            // Words of the paths, not their meaning: an atom about a file names it.
            let r = recall::recall_in(
                app,
                c,
                RecallReq {
                    query: Some(files.join(" ")),
                    about: vec![],
                    types: vec![],
                    project: Some(p.clone()),
                    as_of: None,
                    valid_at: None,
                    include_history: false,
                    max_tokens: None,
                    limit: FILE_ATOMS_MAX,
                    min_score: 1.1,
                    now,
                },
            )
            .await?;
            subjects.extend(r.subjects);
            for h in r.hits {
                if !hits.iter().any(|x| x.atom.id == h.atom.id) {
                    hits.push(h);
                }
            }
        }
        hits.retain(|h| h.atom.status == MemoryStatus::Active);
        let ids: Vec<String> = hits.iter().map(|h| h.atom.id.to_string()).collect();
        let msnap = semantic::snapshot(app, TENANT).await?;
        let source = (
            crate::store::embedding::MEMORY_ATOM.name,
            Fts::MemoryAtoms,
            false,
        );
        let ordered = order(app, &msnap, TENANT, source, &query, &qvec, &ids).await?;
        let mut by_id: HashMap<String, RecallHit> = hits
            .into_iter()
            .map(|h| (h.atom.id.to_string(), h))
            .collect();
        for id in ordered {
            memory.extend(by_id.remove(&id));
        }
    }

    // Ontology: the classes the title and description name.
    let mut classes = Vec::new();
    let mut ontology = None;
    if let (true, Some(p)) = (served(app, "ontology"), &project) {
        let synced = crate::store::ontology::repo_of(c, p)
            .await?
            .is_some_and(|r| r.synced_commit.is_some());
        if synced {
            let d = onto::discover(app, p, &query, CLASSES_MAX, None).await?;
            let named = named_classes(&d.served.index, &query);
            // Discovery's order first (its relevance), then by where the text names them.
            classes = d
                .found
                .iter()
                .map(|f| f.iri.clone())
                .filter(|iri| named.contains(iri))
                .collect();
            for iri in named {
                if !classes.contains(&iri) {
                    classes.push(iri);
                }
            }
            ontology = Some(d.served);
        }
    }

    Ok(Brief {
        task,
        sections,
        paths,
        knowledge,
        unmatched_paths,
        code,
        memory,
        subjects,
        classes,
        ontology,
        notes,
    })
}

/// The code part: every Context Files path that names one file, analysed; its
/// references grouped by the entities holding them, entities in ranked order.
async fn code_part(
    app: &App,
    c: &mut Conn,
    project: &str,
    snap: &Snapshot,
    paths: &[String],
    (query, qvec): (&str, &[f32]),
    notes: &mut Vec<(&'static str, Note)>,
) -> Result<Vec<CodeEntity>> {
    let mut refs: HashMap<String, Vec<Staleness>> = HashMap::new();
    let mut ids: Vec<String> = Vec::new();
    let files: Vec<&String> = paths.iter().filter(|p| one_file(p)).collect();
    if files.len() > CODE_PATHS_MAX {
        notes.push((
            "code",
            Note::FirstFiles {
                read: CODE_PATHS_MAX,
                of: files.len(),
            },
        ));
    }
    for path in files.into_iter().take(CODE_PATHS_MAX) {
        let a = match analysis::analyze_in(app, c, project, path, false).await {
            Ok(a) => a,
            // A path the code toolset cannot read (outside the repository, not text)
            // says so and leaves the other files their part.
            Err(Error::Validation { message, .. })
            | Err(Error::ValidationDetails { message, .. })
            | Err(Error::InvalidOperation { message, .. }) => {
                notes.push(("code", Note::Text(format!("{path}: {message}"))));
                continue;
            }
            Err(e) => return Err(e),
        };
        for s in a.tracked {
            for (eid, _, _) in a.holders.get(&s.reference.id).into_iter().flatten() {
                if !ids.contains(eid) {
                    ids.push(eid.clone());
                }
                refs.entry(eid.clone()).or_default().push(s.clone());
            }
        }
    }
    let entities = crate::store::code::entities_by_ids(c, &ids).await?;
    let mut by_id: HashMap<String, Entity> =
        entities.into_iter().map(|e| (e.id.clone(), e)).collect();
    let source = (crate::store::embedding::ENTITY.name, Fts::Entities, false);
    let mut out = Vec::new();
    for id in order(app, snap, project, source, query, qvec, &ids).await? {
        if let Some(entity) = by_id.remove(&id) {
            out.push(CodeEntity {
                references: refs.remove(&id).unwrap_or_default(),
                entity,
            });
        }
    }
    Ok(out)
}
