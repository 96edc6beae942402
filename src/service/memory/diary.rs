//! Diary entries (what a session or a task accomplished, decided, met and learned)
//! and reflection: the prompt that carries the reflection instruction with chosen
//! entries, and the ingest of the rules an agent answers, through the core's
//! validator gate. A rule must cite a diary entry; a duplicate of a known rule adds
//! its entries as evidence (SUPPORTS) instead of a copy; one that contradicts an
//! ACTIVE rule is drafted and linked CONTRADICTS; the rest become DRAFT Rule atoms.
//! Each cited entry is evidence as a `diary` reference (`cairn:diary/<id>`), one per
//! entry, shared by every rule that cites it.

use std::collections::{HashMap, HashSet};

use time::OffsetDateTime;

use crate::domain::field::Field;
use crate::domain::memory::model::{
    AtomId, DiaryEntry, DiaryEntryId, EdgeKind, MemoryAtomType, MemoryEdge, NodeRef, RefType,
    ReferenceId, SubjectId,
};
use crate::domain::memory::raw::Raw;
use crate::domain::memory::reflection::{
    gate, parse_rules, render_prompt, ExistingRule, GateContext, ReflectionScope, RuleError,
    SameBy, Verdict, DEFAULT_DUPLICATE_COSINE,
};
use crate::domain::memory::validate;
use crate::domain::memory::wire::{format_time, parse_time};
use crate::error::{Error, Result};
use crate::service::App;
use crate::store::memory::{self as store, AtomFilter, DiaryRow, ReferenceRow};

/// Which diary entries to list: by session, task, project, and since when. The
/// store's filter, named here so that `mcp` reaches it through the service.
pub use crate::store::memory::DiaryFilter;
use crate::store::Conn;

use super::{
    asking_project, atom_from_row, atom_to_row, decode_list, edge_to_row, encode_list, fresh,
    group_key, stamp, Writer,
};

/// A diary entry with where it was written.
#[derive(Debug, Clone)]
pub struct Entry {
    pub entry: DiaryEntry,
    pub project_id: Option<String>,
    pub task_id: Option<String>,
}

fn entry_from_row(r: &DiaryRow) -> Result<Entry> {
    let bad = |e: &dyn std::fmt::Display| {
        Error::Internal(format!("stored diary entry {} cannot be read: {e}", r.id))
    };
    Ok(Entry {
        entry: DiaryEntry {
            id: DiaryEntryId::parse(&r.id).map_err(|e| bad(&e))?,
            recorded_at: parse_time(&r.recorded_at).map_err(|e| bad(&e))?,
            session: r.session.clone(),
            accomplishments: decode_list("diary entry", &r.id, &r.accomplishments)?,
            decisions: decode_list("diary entry", &r.id, &r.decisions)?,
            challenges: decode_list("diary entry", &r.id, &r.challenges)?,
            learnings: decode_list("diary entry", &r.id, &r.learnings)?,
        },
        project_id: r.project_id.clone(),
        task_id: r.task_id.clone(),
    })
}

/// Writes a diary entry from its fields (`session`, `accomplishments`, `decisions`,
/// `challenges`, `learnings`), for a task (whose project it takes) or a project.
pub async fn write(
    app: &App,
    fields: Vec<(String, Raw)>,
    task_id: Option<String>,
    project_id: Option<String>,
    now: OffsetDateTime,
) -> Result<Entry> {
    let mut tx = app.store.write().await?;
    let mut project = project_id;
    if let Some(t) = &task_id {
        let p = store::task_project(&mut tx, t)
            .await?
            .ok_or_else(|| Error::not_found("task", t.clone()))?;
        match (&project, p) {
            (Some(a), Some(b)) if *a != b => {
                return Err(Error::invariant(format!(
                    "task {t} belongs to project {b}, not {a}: send one of them, or the task's own project"
                )))
            }
            (None, b) => project = b,
            _ => {}
        }
    }
    if let Some(p) = &project {
        if !crate::store::project::exists(&mut tx, p).await? {
            return Err(Error::not_found("project", p.clone()));
        }
    }
    let e = validate::diary_entry(&fields, DiaryEntryId(fresh()), now)
        .map_err(|e| super::atoms::validation("entry", e))?;
    store::insert_diary(
        &mut tx,
        &DiaryRow {
            id: e.id.to_string(),
            project_id: project.clone(),
            task_id: task_id.clone(),
            session: e.session.clone(),
            accomplishments: encode_list(&e.accomplishments),
            decisions: encode_list(&e.decisions),
            challenges: encode_list(&e.challenges),
            learnings: encode_list(&e.learnings),
            recorded_at: stamp(e.recorded_at),
            created_at: crate::domain::now(),
        },
    )
    .await?;
    tx.commit().await?;
    Ok(Entry {
        entry: e,
        project_id: project,
        task_id,
    })
}

/// Diary entries, newest first.
pub async fn list(app: &App, f: DiaryFilter, limit: i64, offset: i64) -> Result<(Vec<Entry>, i64)> {
    let mut c = app.store.read().await?;
    let (rows, total) = store::list_diary(&mut c, &f, limit, offset).await?;
    Ok((
        rows.iter().map(entry_from_row).collect::<Result<_>>()?,
        total,
    ))
}

/// The entries a reflection covers: those named, else the newest `limit` matching
/// the filter; oldest first, as a diary reads.
pub async fn chosen(app: &App, ids: &[String], f: DiaryFilter, limit: i64) -> Result<Vec<Entry>> {
    let mut c = app.store.read().await?;
    let rows = if ids.is_empty() {
        store::list_diary(&mut c, &f, limit, 0).await?.0
    } else {
        let rows = store::diary_by_ids(&mut c, ids).await?;
        if let Some(missing) = ids.iter().find(|i| !rows.iter().any(|r| &r.id == *i)) {
            return Err(Error::not_found("diary entry", missing.clone()));
        }
        rows
    };
    let mut out: Vec<Entry> = rows.iter().map(entry_from_row).collect::<Result<_>>()?;
    out.sort_by(|a, b| {
        a.entry
            .recorded_at
            .cmp(&b.entry.recorded_at)
            .then(a.entry.id.cmp(&b.entry.id))
    });
    Ok(out)
}

/// The reflection prompt for the chosen entries (the reflection instruction, the
/// answer's shape, then each entry under its id).
pub fn prompt(entries: &[Entry]) -> String {
    let e: Vec<DiaryEntry> = entries.iter().map(|x| x.entry.clone()).collect();
    render_prompt(&e)
}

/// The gate's decision on one proposed rule, as written.
#[derive(Debug, Clone)]
pub enum Ingested {
    /// Not read: what is wrong with it.
    Invalid(Vec<RuleError>),
    Refused(String),
    /// Added as evidence to an existing rule.
    Duplicate {
        of: AtomId,
        by: SameBy,
    },
    /// Added as evidence to the rule drafted from an earlier one of this answer.
    DuplicateInBatch {
        of: usize,
        atom: Option<AtomId>,
    },
    /// Drafted and linked CONTRADICTS to these ACTIVE rules.
    Contradicts {
        atom: AtomId,
        contradicts: Vec<AtomId>,
    },
    Drafted(AtomId),
}

/// Adds each cited entry's reference as SUPPORTS of `atom`.
async fn support(
    c: &mut Conn,
    refs: &HashMap<DiaryEntryId, ReferenceId>,
    evidence: &[DiaryEntryId],
    atom: AtomId,
    now: &str,
) -> Result<()> {
    for d in evidence {
        if let Some(r) = refs.get(d) {
            let e = MemoryEdge::new(
                NodeRef::Reference(*r),
                EdgeKind::Supports,
                NodeRef::Atom(atom),
            );
            store::insert_edge(c, &edge_to_row(&e), now).await?;
        }
    }
    Ok(())
}

/// What an ingest did, rule by rule, in the answer's order.
pub struct Ingest {
    pub rules: Vec<Ingested>,
    pub embedder: &'static str,
}

/// Reads an agent's reflection answer and runs each rule through the gate, writing
/// the outcome in one transaction. `project` (a Project subject or an orchestrator
/// project linked to one) scopes `workspace` rules.
pub async fn ingest(
    app: &App,
    text: &str,
    project: Option<&str>,
    now: OffsetDateTime,
) -> Result<Ingest> {
    let parsed = parse_rules(text).map_err(|e| {
        Error::validation(
            Field::Rules,
            format!("is not a JSON array of rules at {}: {} (send the array the reflection prompt asks for)", e.at, e.message),
        )
    })?;
    let mut proposals = Vec::new();
    let mut index_of = Vec::new();
    for (i, r) in parsed.iter().enumerate() {
        if let Ok(p) = r {
            // A scope that names nothing is refused: stored as Global, the rule
            // would hold in every project.
            if p.scope == ReflectionScope::Workspace && project.is_none() {
                return Err(Error::validation(
                    format!("{}[{i}].scope", Field::Rules),
                    format!(
                        "is workspace, which needs {p} (the project the rule holds in): send {p}, \
                         or scope global for a rule that holds everywhere",
                        p = Field::ProjectId
                    ),
                ));
            }
            proposals.push(p.clone());
            index_of.push(i);
        }
    }
    // Vectors: the proposals', and the live rules' (embedding what lacks one).
    let snap = crate::service::semantic::snapshot(app, super::TENANT).await?;
    let e = crate::service::embedding::embedder(app).await?;
    let embedder = e.id();
    let vecs = crate::service::embedding::embed_texts(
        e,
        proposals.iter().map(|p| p.rule.clone()).collect(),
    )
    .await?;
    let vectors: Vec<Vec<f32>> = vecs.into_iter().map(|v| v.vector).collect();

    let mut tx = app.store.write().await?;
    let project_subject: Option<SubjectId> = match project {
        Some(p) => match asking_project(&mut tx, p).await? {
            Some(s) => Some(s.id),
            // A project from before every project had its subject gets it now.
            None => super::project_subject::id_ref(&mut tx, p, true, now, &mut Vec::new())
                .await?
                .map(|r| SubjectId::parse(&r.id).map_err(|e| Error::Internal(e.to_string())))
                .transpose()?,
        },
        None => None,
    };
    let f = AtomFilter {
        types: vec![MemoryAtomType::Rule.as_wire().into()],
        statuses: ["ACTIVE", "NEEDS_REVIEW", "CONTESTED", "PROPOSED", "DRAFT"]
            .iter()
            .map(|s| s.to_string())
            .collect(),
        ..Default::default()
    };
    let rows = store::candidates(&mut tx, &f, i64::MAX).await?;
    let mut live = Vec::new();
    for r in &rows {
        live.push(atom_from_row(r)?);
    }
    let live_vecs: Vec<Option<Vec<f32>>> = live
        .iter()
        .map(|a| snap.vector("memory_atom", &a.id.to_string()))
        .collect();
    let existing: Vec<ExistingRule<'_>> = live
        .iter()
        .zip(&live_vecs)
        .map(|(a, v)| ExistingRule {
            id: a.id,
            statement: &a.statement,
            status: a.status,
            vector: v.as_deref(),
        })
        .collect();
    let cited: Vec<String> = {
        let mut s: Vec<String> = proposals
            .iter()
            .flat_map(|p| p.diary_entry_ids.iter().map(|d| d.to_string()))
            .collect();
        s.sort();
        s.dedup();
        s
    };
    let entries: HashMap<DiaryEntryId, Entry> = store::diary_by_ids(&mut tx, &cited)
        .await?
        .iter()
        .map(entry_from_row)
        .collect::<Result<Vec<_>>>()?
        .into_iter()
        .map(|e| (e.entry.id, e))
        .collect();
    let known: HashSet<DiaryEntryId> = entries.keys().copied().collect();
    let known_entry = |d: DiaryEntryId| known.contains(&d);
    let verdicts = gate(
        &proposals,
        &GateContext {
            known_entry: &known_entry,
            existing: &existing,
            vectors: Some(&vectors),
            duplicate_cosine: DEFAULT_DUPLICATE_COSINE,
        },
    );

    let now_s = stamp(now);
    // One `diary` reference per cited entry.
    let mut refs: HashMap<DiaryEntryId, ReferenceId> = HashMap::new();
    for d in verdicts
        .iter()
        .flat_map(crate::domain::memory::reflection::cited)
    {
        if refs.contains_key(&d) {
            continue;
        }
        let uri = format!("cairn:diary/{d}");
        let id = match store::reference_at(&mut tx, RefType::Diary.as_wire(), &uri).await? {
            Some(r) => ReferenceId::parse(&r.id).map_err(|e| Error::Internal(e.to_string()))?,
            None => {
                let e = entries.get(&d);
                let title = match e.and_then(|e| e.entry.session.clone()) {
                    Some(s) => format!("Diary entry of {s}"),
                    None => "Diary entry".to_string(),
                };
                let id = ReferenceId(fresh());
                store::insert_reference(
                    &mut tx,
                    &ReferenceRow {
                        id: id.to_string(),
                        ref_type: RefType::Diary.as_wire().into(),
                        title: Some(title),
                        uri: Some(uri),
                        authors: String::new(),
                        published_at: e.map(|e| format_time(e.entry.recorded_at)),
                        retrieved_at: now_s.clone(),
                        snippet: None,
                        hash: None,
                        created_at: now_s.clone(),
                    },
                )
                .await?;
                id
            }
        };
        refs.insert(d, id);
    }
    let mut out: Vec<Ingested> = parsed
        .iter()
        .map(|r| match r {
            Err(errs) => Ingested::Invalid(errs.clone()),
            Ok(_) => Ingested::Refused(String::new()),
        })
        .collect();
    let mut drafted: HashMap<usize, AtomId> = HashMap::new();
    let mut supported: Vec<AtomId> = Vec::new();
    for (k, v) in verdicts.into_iter().enumerate() {
        let i = index_of[k];
        let result = match v {
            Verdict::Refused { reason } => Ingested::Refused(reason),
            Verdict::Duplicate { of, by, evidence } => {
                support(&mut tx, &refs, &evidence, of, &now_s).await?;
                supported.push(of);
                Ingested::Duplicate { of, by }
            }
            Verdict::DuplicateInBatch { of, evidence } => {
                let atom = drafted.get(&of).copied();
                if let Some(a) = atom {
                    support(&mut tx, &refs, &evidence, a, &now_s).await?;
                }
                Ingested::DuplicateInBatch {
                    of: index_of[of],
                    atom,
                }
            }
            Verdict::Contradicts { atoms, draft } => {
                let id = AtomId(fresh());
                let mut a = draft.to_atom(id, project_subject, now);
                a.claim_key = None;
                let mut row = atom_to_row(&a, &now_s);
                row.group_key = group_key(&a);
                store::insert_atom(&mut tx, &row).await?;
                for d in &draft.rule.diary_entry_ids {
                    if let Some(r) = refs.get(d) {
                        let e = MemoryEdge::new(
                            NodeRef::Atom(id),
                            EdgeKind::FromSource,
                            NodeRef::Reference(*r),
                        );
                        store::insert_edge(&mut tx, &edge_to_row(&e), &now_s).await?;
                    }
                }
                for other in &atoms {
                    let e = MemoryEdge::new(
                        NodeRef::Atom(id),
                        EdgeKind::Contradicts,
                        NodeRef::Atom(*other),
                    );
                    store::insert_edge(&mut tx, &edge_to_row(&e), &now_s).await?;
                }
                drafted.insert(k, id);
                Ingested::Contradicts {
                    atom: id,
                    contradicts: atoms,
                }
            }
            Verdict::Draft(draft) => {
                let id = AtomId(fresh());
                let a = draft.to_atom(id, project_subject, now);
                store::insert_atom(&mut tx, &atom_to_row(&a, &now_s)).await?;
                for d in &draft.rule.diary_entry_ids {
                    if let Some(r) = refs.get(d) {
                        let e = MemoryEdge::new(
                            NodeRef::Atom(id),
                            EdgeKind::FromSource,
                            NodeRef::Reference(*r),
                        );
                        store::insert_edge(&mut tx, &edge_to_row(&e), &now_s).await?;
                    }
                }
                drafted.insert(k, id);
                Ingested::Drafted(id)
            }
        };
        if let Some(slot) = out.get_mut(i) {
            *slot = result;
        }
    }
    // Support may promote an existing rule (three independent sessions make it
    // ACTIVE): its key is settled now.
    let mut w = Writer::new(&mut tx, now);
    for a in supported {
        if let Some(atom) = live.iter().find(|x| x.id == a) {
            super::atoms::settle_group(&mut w, &group_key(atom), now).await?;
        }
    }
    tx.commit().await?;
    Ok(Ingest {
        rules: out,
        embedder,
    })
}
