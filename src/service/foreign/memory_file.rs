//! `cairn import --from mcp-memory FILE`: the official MCP memory server's graph
//! carried into the alive memory (README, "Importing from other stores"). An entity
//! is a subject (its `entityType` mapped to a subject kind), each observation a Fact
//! about it, and a relation a Fact about its `from` subject that says the relation,
//! joined to its `to` subject by a RELATED edge. Each Fact cites the file (one `doc`
//! reference, `file://` and its path), which is documented evidence: the Facts are
//! ACTIVE and recalled as the server's memory was, each reviewed in its time.
//! Every atom goes through the same
//! remember as `manage_memory` (validation, identity of subjects by name, duplicates
//! found by statement), all of them in one write transaction.

use std::collections::HashMap;
use std::path::Path;

use time::OffsetDateTime;

use crate::domain::memory::keys;
use crate::domain::memory::model::{AtomId, EdgeKind, MemoryEdge, NodeRef, SubjectId, SubjectKind};
use crate::domain::memory::promotion::EvidenceFacts;
use crate::domain::memory::raw::Raw;
use crate::domain::memory::validate::{self, AtomContext, Known};
use crate::error::{Error, Result};
use crate::service::memory::atoms::{remember_in, Kept, Remember, Source};
use crate::service::memory::{edge_to_row, fresh, group_key, resolve_ref, stamp, SubjectRef};
use crate::service::App;
use crate::store::foreign::memory_file::{self as src, Record};
use crate::store::memory as mstore;

use super::{Counts, LIMIT_BYTES, LIMIT_ROWS};

/// One line of the file at most (the server writes an entity and all of its
/// observations on one line).
const LIMIT_LINE_BYTES: usize = 4 << 20;

/// The tag every imported atom carries, so they can be found (and told apart) later.
pub const TAG: &str = "mcp-memory";

/// The subject kind of the server's usual entity types; others are named with
/// `--kind TYPE=KIND`.
fn default_kind(entity_type: &str) -> Option<SubjectKind> {
    let t = entity_type
        .trim()
        .to_lowercase()
        .replace(['_', '-', ' '], "");
    Some(match t.as_str() {
        "person" | "people" | "user" | "human" | "individual" => SubjectKind::Person,
        "organization" | "organisation" | "org" | "company" | "team" => SubjectKind::Org,
        "project" => SubjectKind::Project,
        "tool" => SubjectKind::Tool,
        "library" | "lib" | "package" | "crate" | "framework" => SubjectKind::Lib,
        "stack" => SubjectKind::Stack,
        "template" => SubjectKind::Template,
        "service" | "system" | "api" | "server" => SubjectKind::Service,
        "model" => SubjectKind::Model,
        "dataset" | "data" => SubjectKind::Dataset,
        _ => return None,
    })
}

/// Reads, checks and imports the memory file at `path`. `kinds` maps entity types
/// (compared case-insensitively) to subject kinds, before the defaults.
pub async fn import(
    app: &App,
    path: &Path,
    kinds: &[(String, String)],
    now: OffsetDateTime,
) -> Result<Counts> {
    let shown = path.display().to_string();
    let mut chosen: HashMap<String, SubjectKind> = HashMap::new();
    for (t, k) in kinds {
        let kind = SubjectKind::parse(k).map_err(|_| {
            Error::invalid(format!(
                "--kind {t}={k}: '{k}' is not a subject kind ({})",
                SubjectKind::WIRE.join(", ")
            ))
        })?;
        chosen.insert(t.trim().to_lowercase(), kind);
    }
    let lines = src::read(path, LIMIT_BYTES, LIMIT_LINE_BYTES, LIMIT_ROWS as usize)
        .map_err(|u| Error::invalid(u.0))?;
    let kind_of = |t: &str| {
        chosen
            .get(&t.trim().to_lowercase())
            .copied()
            .or_else(|| default_kind(t))
    };
    // Every entity's kind first: an unknown type is refused with all the others.
    let mut unknown: Vec<(String, usize)> = Vec::new();
    let mut entities: HashMap<&str, (SubjectKind, usize)> = HashMap::new();
    for l in &lines {
        if let Record::Entity {
            name, entity_type, ..
        } = &l.record
        {
            if name.chars().count() > 255 {
                return Err(Error::invalid(format!(
                    "{shown}, line {}: the entity's name is {} characters, past Cairn's bound of 255 for a subject's name; nothing was written",
                    l.line,
                    name.chars().count()
                )));
            }
            match kind_of(entity_type) {
                Some(k) => {
                    entities.entry(name.as_str()).or_insert((k, l.line));
                }
                None => {
                    if !unknown
                        .iter()
                        .any(|(t, _)| t.eq_ignore_ascii_case(entity_type))
                    {
                        unknown.push((entity_type.clone(), l.line));
                    }
                }
            }
        }
    }
    if !unknown.is_empty() {
        let list: Vec<String> = unknown
            .iter()
            .map(|(t, n)| format!("'{}' (line {n})", crate::domain::text::clip(t, 40)))
            .collect();
        return Err(Error::invalid(format!(
            "{shown}: no subject kind for the entity type(s) {}; name one for each with \
             --kind TYPE=KIND (kinds: {}); nothing was written",
            list.join(", "),
            SubjectKind::WIRE.join(", ")
        )));
    }
    // Every atom cites the file it came from: one reference, shared by all of them.
    let uri = format!(
        "file://{}",
        std::fs::canonicalize(path)
            .unwrap_or_else(|_| path.to_path_buf())
            .display()
    );
    let mut tx = app.store.write().await?;
    let mut created = Vec::new();
    let mut ids: HashMap<&str, (SubjectId, SubjectKind)> = HashMap::new();
    let mut counts = Counts::default();
    let (mut atoms, mut present, mut edges) = (0usize, 0usize, 0usize);
    let at_line = |n: usize, e: Error| match e {
        Error::Validation { message, .. } => {
            Error::invalid(format!("{shown}, line {n}: {message}; nothing was written"))
        }
        Error::InvalidOperation { message, .. } => {
            Error::invalid(format!("{shown}, line {n}: {message}; nothing was written"))
        }
        other => other,
    };
    for l in &lines {
        if let Record::Entity { name, .. } = &l.record {
            if ids.contains_key(name.as_str()) {
                continue;
            }
            let (kind, _) = entities[name.as_str()];
            let row = resolve_ref(
                &mut tx,
                &SubjectRef::Named(kind, name.clone()),
                true,
                now,
                &mut created,
            )
            .await
            .map_err(|e| at_line(l.line, e))?;
            let id = SubjectId::parse(&row.id)
                .map_err(|e| Error::Internal(format!("subject {} has a bad id: {e}", row.id)))?;
            let kind = SubjectKind::parse(&row.kind).unwrap_or(kind);
            ids.insert(name.as_str(), (id, kind));
        }
    }
    for l in &lines {
        let (about, statement, to) = match &l.record {
            Record::Entity {
                name, observations, ..
            } => {
                for o in observations {
                    let kept = remember_fact(&mut tx, ids[name.as_str()], o, &uri, now)
                        .await
                        .map_err(|e| at_line(l.line, e))?;
                    match kept.1 {
                        Kept::Inserted => atoms += 1,
                        Kept::Duplicate(_) => present += 1,
                    }
                }
                continue;
            }
            Record::Relation {
                from,
                to,
                relation_type,
            } => {
                let end = |n: &str, which: &str| {
                    ids.get(n).copied().ok_or_else(|| {
                        Error::invalid(format!(
                            "{shown}, line {}: the relation's {which} '{}' is no entity of the file; nothing was written",
                            l.line,
                            crate::domain::text::clip(n, 60)
                        ))
                    })
                };
                let (f, t) = (end(from, "from")?, end(to, "to")?);
                (f, format!("{from} {relation_type} {to}"), t)
            }
        };
        let (atom, kept) = remember_fact(&mut tx, about, &statement, &uri, now)
            .await
            .map_err(|e| at_line(l.line, e))?;
        match kept {
            Kept::Inserted => atoms += 1,
            Kept::Duplicate(_) => present += 1,
        }
        let e = MemoryEdge::new(
            NodeRef::Atom(atom),
            EdgeKind::Related,
            NodeRef::Subject(to.0),
        );
        if mstore::insert_edge(&mut tx, &edge_to_row(&e), &stamp(now)).await? {
            edges += 1;
        }
    }
    tx.commit().await?;
    counts.add("subjects created", created.len());
    counts.add("subjects found", ids.len().saturating_sub(created.len()));
    counts.add("facts", atoms);
    counts.add("facts already held", present);
    counts.add("relation edges", edges);
    Ok(counts)
}

/// Remembers one reported Fact about `about`; answers the atom that holds it now
/// (the new one, or the current atom that already says it).
async fn remember_fact(
    c: &mut crate::store::Conn,
    about: (SubjectId, SubjectKind),
    statement: &str,
    source: &str,
    now: OffsetDateTime,
) -> Result<(AtomId, Kept)> {
    let fields = vec![
        (keys::TYPE.to_string(), Raw::Text("Fact".into())),
        (
            keys::STATEMENT.to_string(),
            Raw::Text(statement.to_string()),
        ),
        (keys::ABOUT.to_string(), Raw::Text(about.0.to_string())),
        // The validator matches field names loosely: this is the Fact's kind.
        ("fact_kind".to_string(), Raw::Text("reported".into())),
        (
            keys::TAGS.to_string(),
            Raw::List(vec![Raw::Text(TAG.into())]),
        ),
    ];
    // A second import of the file finds its facts held (drafts included, which
    // remember's duplicate check does not meet): the same group, the same statement.
    let probe = {
        let known_subject = |id: SubjectId| (id == about.0).then_some(about.1);
        let any_atom = |_: AtomId| true;
        let ctx = AtomContext {
            known: Known {
                subject: &known_subject,
                atom: &any_atom,
            },
            evidence: EvidenceFacts::of(std::iter::empty()),
            now,
        };
        validate::atom(&fields, AtomId(fresh()), &ctx)
            .map_err(|e| crate::service::memory::atoms::validation("atom", e))?
    };
    if let Some(row) = mstore::group(c, &group_key(&probe), false).await?.first() {
        let id = AtomId::parse(&row.id)
            .map_err(|e| Error::Internal(format!("memory atom {} has a bad id: {e}", row.id)))?;
        return Ok((id, Kept::Duplicate(id)));
    }
    let w = remember_in(
        c,
        Remember {
            fields,
            sources: vec![Source::New(vec![
                ("ref_type".to_string(), Raw::Text("doc".into())),
                (
                    keys::TITLE.to_string(),
                    Raw::Text("the MCP memory server's memory.json".into()),
                ),
                ("uri".to_string(), Raw::Text(source.to_string())),
            ])],
            supersedes: None,
            now,
        },
    )
    .await?;
    Ok((w.atom.id, w.kept))
}
