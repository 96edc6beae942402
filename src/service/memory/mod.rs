//! The alive memory's use cases, on the pure core `domain::memory`: each loads the
//! rows a rule needs inside one transaction (`BEGIN IMMEDIATE` for writes), asks the
//! core what to do, and writes the core's actions as they come. The core decides
//! (collisions, promotion, decay, identity, the curator's plan, recall's order, the
//! reflection gate); this module only carries decisions out.
//!
//! In reading order: this file (rows into values and back, the clock, subject
//! references, the writer of actions); `atoms` (remember, validate, deprecate,
//! archive, resolve, evidence, links; get and list); `subjects`; `recall` (and the
//! memory a task gets); `curator`; `diary` (entries, the reflection prompt, ingest).
//!
//! Nothing here knows MCP, JSON or sqlx: field values arrive as the core's `Raw`
//! tree, and the store keeps lists and a type's fields as text in its own stored
//! form (`store::memory::codec`), read back as written, not re-validated.

pub mod atoms;
pub mod curator;
pub mod diary;
mod exchange;
pub(crate) mod project_subject;
pub mod recall;
pub mod subjects;

use std::collections::HashMap;

use time::OffsetDateTime;

use crate::domain::field::Field;
use crate::domain::id;
use crate::domain::memory::change::{Action, ActionKind, Change};
use crate::domain::memory::claim::{normalise_statement, Predicate};
use crate::domain::memory::collision::Contender;
use crate::domain::memory::decay::next_review;
use crate::domain::memory::identity::normalise_name;
use crate::domain::memory::model::{
    AtomId, AtomValue, Confirmation, Context, DecisionStatus, EdgeKind, Level, MemoryAtom,
    MemoryAtomType, MemoryEdge, MemoryStatus, NodeRef, RefType, Reference, ReferenceId, Subject,
    SubjectDetails, SubjectId, SubjectKind,
};
use crate::domain::memory::wire::{format_time, parse_time};
use crate::error::{Error, Result};
use crate::store::memory::{
    self as store, codec, AtomChange, AtomRow, EdgeRow, NameRow, SubjectRow,
};
use crate::store::Conn;

pub use crate::store::memory::TENANT;

mod writer;
pub(crate) use writer::Writer;

/// A fresh id as the core's 128-bit value.
pub(crate) fn fresh() -> u128 {
    let s = id::new_id();
    uuid::Uuid::parse_str(&s).map(|u| u.as_u128()).unwrap_or(0)
}

/// `t` as stored and answered: RFC 3339 UTC with milliseconds.
pub fn stamp(t: OffsetDateTime) -> String {
    format_time(t)
}

fn corrupt(what: &str, id: &str, why: impl std::fmt::Display) -> Error {
    Error::Internal(format!("stored {what} {id} cannot be read: {why}"))
}

/// Reads a stored time. Cairn writes `YYYY-MM-DDTHH:MM:SS.mmmZ`, read here digit by
/// digit (a curator pass reads half a million of them); anything else goes through
/// the full RFC 3339 reader.
fn read_time(s: &str) -> std::result::Result<OffsetDateTime, crate::domain::memory::wire::BadTime> {
    let b = s.as_bytes();
    let shape = b.len() == 24
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':'
        && b[19] == b'.'
        && b[23] == b'Z';
    if shape {
        let n = |r: std::ops::Range<usize>| -> Option<u32> {
            let mut v = 0u32;
            for &c in b.get(r)? {
                if !c.is_ascii_digit() {
                    return None;
                }
                v = v * 10 + u32::from(c - b'0');
            }
            Some(v)
        };
        let parts = (
            n(0..4),
            n(5..7),
            n(8..10),
            n(11..13),
            n(14..16),
            n(17..19),
            n(20..23),
        );
        if let (Some(y), Some(mo), Some(d), Some(h), Some(mi), Some(se), Some(ms)) = parts {
            let date = time::Month::try_from(mo as u8)
                .ok()
                .and_then(|m| time::Date::from_calendar_date(y as i32, m, d as u8).ok());
            if let Some(t) = date.and_then(|d| {
                d.with_hms_milli(h as u8, mi as u8, se as u8, ms as u16)
                    .ok()
            }) {
                return Ok(t.assume_utc());
            }
        }
    }
    parse_time(s)
}

fn time_col(what: &str, id: &str, s: &Option<String>) -> Result<Option<OffsetDateTime>> {
    s.as_deref()
        .map(|t| read_time(t).map_err(|e| corrupt(what, id, e)))
        .transpose()
}

/// A list of texts as stored (the store's codec).
pub(crate) fn encode_list(items: &[String]) -> String {
    codec::encode_list(items)
}

/// A stored list, or why the row holding it cannot be read.
pub(crate) fn decode_list(what: &str, id: &str, s: &str) -> Result<Vec<String>> {
    codec::decode_list(s).map_err(|e| corrupt(what, id, e))
}

fn parse_atom_id(s: &str) -> Result<AtomId> {
    AtomId::parse(s).map_err(|e| corrupt("atom id", s, e))
}

fn parse_subject_id(s: &str) -> Result<SubjectId> {
    SubjectId::parse(s).map_err(|e| corrupt("subject id", s, e))
}

fn parse_reference_id(s: &str) -> Result<ReferenceId> {
    ReferenceId::parse(s).map_err(|e| corrupt("reference id", s, e))
}

/// The group an atom competes in: its claim key, or for an atom without a predicate
/// its type, subject, context and normalised statement (`#` first, so it never
/// equals a claim key).
pub(crate) fn group_key(a: &MemoryAtom) -> String {
    let mut out = String::new();
    // The stored claim key may lag a merge; the group follows the atom's fields.
    if crate::domain::memory::claim::write_key(a, &mut out) {
        return out;
    }
    let about = a.about.map_or("-".to_string(), |s| s.to_string());
    let ctx = match a.context {
        Context::Global => "global".to_string(),
        Context::In(s) => s.to_string(),
    };
    format!(
        "#{}|{about}|{ctx}|{}",
        a.atom_type().as_wire(),
        normalise_statement(&a.statement)
    )
}

/// A stored atom as the core's value.
pub(crate) fn atom_from_row(r: &AtomRow) -> Result<MemoryAtom> {
    let id = parse_atom_id(&r.id)?;
    let what = "memory atom";
    let atom_type = MemoryAtomType::parse(&r.atom_type).map_err(|e| corrupt(what, &r.id, e))?;
    let about = r.about_id.as_deref().map(parse_subject_id).transpose()?;
    let context = match r.context_id.as_deref() {
        None => Context::Global,
        Some(s) => Context::In(parse_subject_id(s)?),
    };
    let decision_status = r
        .decision_status
        .as_deref()
        .map(DecisionStatus::parse)
        .transpose()
        .map_err(|e| corrupt(what, &r.id, e))?;
    let details = codec::decode_atom(atom_type, &r.details, decision_status)
        .map_err(|e| corrupt(what, &r.id, e))?;
    let predicate = r
        .predicate
        .as_deref()
        .map(Predicate::normalise)
        .transpose()
        .map_err(|e| corrupt(what, &r.id, e))?;
    let value = match (r.value_kind.as_deref(), r.value.as_deref()) {
        (Some("text"), Some(v)) => Some(AtomValue::Text(v.to_string())),
        (Some("number"), Some(v)) => {
            Some(AtomValue::Number(v.parse().map_err(|_| {
                corrupt(what, &r.id, "its value is no number")
            })?))
        }
        (Some("bool"), Some(v)) => Some(AtomValue::Bool(v == "true")),
        (Some("subject"), Some(v)) => Some(AtomValue::Subject(parse_subject_id(v)?)),
        _ => None,
    };
    let confirmation = match (&r.confirmed_by, time_col(what, &r.id, &r.confirmed_at)?) {
        (Some(by), Some(at)) => Some(Confirmation { by: by.clone(), at }),
        _ => None,
    };
    Ok(MemoryAtom {
        id,
        details,
        statement: r.statement.clone(),
        predicate,
        value,
        about,
        context,
        status: MemoryStatus::parse(&r.status).map_err(|e| corrupt(what, &r.id, e))?,
        confidence: r.confidence,
        validated_confidence: r.validated_confidence,
        importance: Level::parse(&r.importance).map_err(|e| corrupt(what, &r.id, e))?,
        title: r.title.clone(),
        summary: r.summary.clone(),
        notes: r.notes.clone(),
        resolution: r.resolution.clone(),
        tags: decode_list(what, &r.id, &r.tags)?,
        author: r.author.clone(),
        confirmation,
        valid_from: time_col(what, &r.id, &r.valid_from)?,
        valid_to: time_col(what, &r.id, &r.valid_to)?,
        recorded_at: read_time(&r.recorded_at).map_err(|e| corrupt(what, &r.id, e))?,
        retired_at: time_col(what, &r.id, &r.retired_at)?,
        last_validated_at: time_col(what, &r.id, &r.last_validated_at)?,
        next_review_at: time_col(what, &r.id, &r.next_review_at)?,
        review_interval_days: r.review_interval_days.map(|d| d.clamp(0, 3650) as u32),
        claim_key: r.claim_key.clone(),
    })
}

/// A new atom's row.
pub(crate) fn atom_to_row(a: &MemoryAtom, now: &str) -> AtomRow {
    let (value_kind, value) = match &a.value {
        None => (None, None),
        Some(AtomValue::Text(t)) => (Some("text"), Some(t.clone())),
        Some(AtomValue::Number(n)) => (Some("number"), Some(format!("{n}"))),
        Some(AtomValue::Bool(b)) => (Some("bool"), Some(b.to_string())),
        Some(AtomValue::Subject(s)) => (Some("subject"), Some(s.to_string())),
    };
    let decision_status = a
        .details
        .decision()
        .map(|d| d.decision_status.as_wire().to_string());
    AtomRow {
        id: a.id.to_string(),
        atom_type: a.atom_type().as_wire().to_string(),
        statement: a.statement.clone(),
        predicate: a.predicate.as_ref().map(|p| p.as_str().to_string()),
        value_kind: value_kind.map(str::to_string),
        value,
        about_id: a.about.map(|s| s.to_string()),
        context_id: a.context.subject().map(|s| s.to_string()),
        claim_key: a.claim_key.clone(),
        group_key: group_key(a),
        status: a.status.as_wire().to_string(),
        status_reason: None,
        confidence: a.confidence,
        validated_confidence: a.validated_confidence,
        importance: a.importance.as_wire().to_string(),
        title: a.title.clone(),
        summary: a.summary.clone(),
        notes: a.notes.clone(),
        resolution: a.resolution.clone(),
        tags: encode_list(&a.tags),
        author: a.author.clone(),
        confirmed_by: a.confirmation.as_ref().map(|c| c.by.clone()),
        confirmed_at: a.confirmation.as_ref().map(|c| stamp(c.at)),
        valid_from: a.valid_from.map(stamp),
        valid_to: a.valid_to.map(stamp),
        recorded_at: stamp(a.recorded_at),
        retired_at: a.retired_at.map(stamp),
        last_validated_at: a.last_validated_at.map(stamp),
        next_review_at: a.next_review_at.map(stamp),
        review_interval_days: a.review_interval_days.map(i64::from),
        decision_status,
        details: codec::encode_atom(&a.details),
        version: 1,
        updated_at: now.to_string(),
    }
}

/// A stored subject as the core's value (its names come from `names`).
pub(crate) fn subject_from_row(r: &SubjectRow, names: &[NameRow]) -> Result<Subject> {
    let what = "subject";
    let kind = SubjectKind::parse(&r.kind).map_err(|e| corrupt(what, &r.id, e))?;
    let mut details =
        codec::decode_subject(kind, &r.details).map_err(|e| corrupt(what, &r.id, e))?;
    // The column is the truth for the orchestrator link: it is cleared when the
    // project goes.
    if kind == SubjectKind::Project
        && details == SubjectDetails::None
        && r.orchestrator_project_id.is_some()
    {
        details = SubjectDetails::Project(Default::default());
    }
    if let SubjectDetails::Project(p) = &mut details {
        p.orchestrator_project = r
            .orchestrator_project_id
            .as_deref()
            .and_then(|s| uuid::Uuid::parse_str(s).ok())
            .map(|u| u.as_u128());
    }
    Ok(Subject {
        id: parse_subject_id(&r.id)?,
        kind,
        name: r.name.clone(),
        aliases: names
            .iter()
            .filter(|n| n.subject_id == r.id && n.is_alias)
            .map(|n| n.name.clone())
            .collect(),
        title: r.title.clone(),
        summary: r.summary.clone(),
        tags: decode_list(what, &r.id, &r.tags)?,
        created_at: parse_time(&r.created_at).map_err(|e| corrupt(what, &r.id, e))?,
        updated_at: parse_time(&r.updated_at).map_err(|e| corrupt(what, &r.id, e))?,
        merged_into: r.merged_into.as_deref().map(parse_subject_id).transpose()?,
        details,
    })
}

/// A subject's row (version and merge as given).
pub(crate) fn subject_to_row(s: &Subject, version: i64) -> SubjectRow {
    let orchestrator = match &s.details {
        SubjectDetails::Project(p) => p
            .orchestrator_project
            .map(|u| uuid::Uuid::from_u128(u).to_string()),
        _ => None,
    };
    SubjectRow {
        id: s.id.to_string(),
        kind: s.kind.as_wire().to_string(),
        name: s.name.clone(),
        title: s.title.clone(),
        summary: s.summary.clone(),
        tags: encode_list(&s.tags),
        details: codec::encode_subject(&s.details),
        orchestrator_project_id: orchestrator,
        merged_into: s.merged_into.map(|m| m.to_string()),
        version,
        created_at: stamp(s.created_at),
        updated_at: stamp(s.updated_at),
    }
}

/// A stored reference as the core's value.
pub(crate) fn reference_from_row(r: &store::ReferenceRow) -> Result<Reference> {
    let what = "reference";
    Ok(Reference {
        id: parse_reference_id(&r.id)?,
        ref_type: RefType::parse(&r.ref_type).map_err(|e| corrupt(what, &r.id, e))?,
        title: r.title.clone(),
        uri: r.uri.clone(),
        authors: decode_list(what, &r.id, &r.authors)?,
        published_at: time_col(what, &r.id, &r.published_at)?,
        retrieved_at: parse_time(&r.retrieved_at).map_err(|e| corrupt(what, &r.id, e))?,
        snippet: r.snippet.clone(),
        hash: r.hash.clone(),
    })
}

fn node_kind_str(n: &NodeRef) -> (&'static str, String) {
    match n {
        NodeRef::Atom(a) => ("atom", a.to_string()),
        NodeRef::Subject(s) => ("subject", s.to_string()),
        NodeRef::Reference(r) => ("reference", r.to_string()),
    }
}

pub(crate) fn edge_to_row(e: &MemoryEdge) -> EdgeRow {
    let (fk, fid) = node_kind_str(&e.from);
    let (tk, tid) = node_kind_str(&e.to);
    EdgeRow {
        from_kind: fk.into(),
        from_id: fid,
        kind: e.kind.as_wire().into(),
        to_kind: tk.into(),
        to_id: tid,
    }
}

fn node(kind: &str, id: &str) -> Result<NodeRef> {
    Ok(match kind {
        "atom" => NodeRef::Atom(parse_atom_id(id)?),
        "subject" => NodeRef::Subject(parse_subject_id(id)?),
        "reference" => NodeRef::Reference(parse_reference_id(id)?),
        other => return Err(corrupt("edge end", id, format!("unknown kind {other}"))),
    })
}

pub(crate) fn edge_from_row(r: &EdgeRow) -> Result<MemoryEdge> {
    Ok(MemoryEdge::new(
        node(&r.from_kind, &r.from_id)?,
        EdgeKind::parse(&r.kind).map_err(|e| corrupt("edge", &r.from_id, e))?,
        node(&r.to_kind, &r.to_id)?,
    ))
}

/// One atom with its version, or NOT_FOUND.
pub(crate) async fn load_atom(c: &mut Conn, id: &str) -> Result<(MemoryAtom, AtomRow)> {
    let row = store::atom(c, id)
        .await?
        .ok_or_else(|| Error::not_found("memory atom", id))?;
    Ok((atom_from_row(&row)?, row))
}

/// Subjects by id, decoded with their names.
pub(crate) async fn load_subjects(c: &mut Conn, ids: &[String]) -> Result<Vec<Subject>> {
    let rows = store::subjects_by_ids(c, ids).await?;
    let names = store::names(c, Some(ids)).await?;
    rows.iter().map(|r| subject_from_row(r, &names)).collect()
}

/// One subject, or NOT_FOUND.
pub(crate) async fn load_subject(c: &mut Conn, id: &str) -> Result<(Subject, i64)> {
    let row = store::subject(c, id)
        .await?
        .ok_or_else(|| Error::not_found("subject", id))?;
    let names = store::names(c, Some(std::slice::from_ref(&row.id))).await?;
    Ok((subject_from_row(&row, &names)?, row.version))
}

/// The atom a change names, checked to be at the version the caller read: CONFLICT
/// (with the current version and the statement) otherwise.
pub(crate) async fn load_atom_at(c: &mut Conn, id: &str, version: i64) -> Result<MemoryAtom> {
    let (a, row) = load_atom(c, id).await?;
    if row.version != version {
        return Err(Error::Conflict {
            entity: "memory atom",
            id: id.to_string(),
            name: Some(a.statement.clone()),
            current: row.version,
            sent: version,
        });
    }
    Ok(a)
}

/// The subject a change names, checked to be at the version the caller read.
pub(crate) async fn load_subject_at(c: &mut Conn, id: &str, version: i64) -> Result<Subject> {
    let (s, current) = load_subject(c, id).await?;
    if current != version {
        return Err(Error::Conflict {
            entity: "subject",
            id: id.to_string(),
            name: Some(s.name.clone()),
            current,
            sent: version,
        });
    }
    Ok(s)
}

/// Follows `merged_into` from `id` to the subject standing for it now.
pub(crate) async fn survivor(c: &mut Conn, id: &str) -> Result<Option<SubjectRow>> {
    let mut cur = match store::subject(c, id).await? {
        Some(r) => r,
        None => return Ok(None),
    };
    for _ in 0..64 {
        match cur.merged_into.clone() {
            Some(next) => match store::subject(c, &next).await? {
                Some(r) => cur = r,
                None => break,
            },
            None => break,
        }
    }
    Ok(Some(cur))
}

/// Contenders for the core's collision rule: the atoms with their evidence and the
/// CONTRADICTS links among them and others.
pub(crate) async fn contenders(c: &mut Conn, atoms: &[MemoryAtom]) -> Result<Vec<Contender>> {
    let ids: Vec<String> = atoms.iter().map(|a| a.id.to_string()).collect();
    let mut evidence: HashMap<String, Vec<(ReferenceId, RefType)>> = HashMap::new();
    for (atom, r, t) in store::evidence_of(c, &ids).await? {
        if let Ok(t) = RefType::parse(&t) {
            evidence
                .entry(atom)
                .or_default()
                .push((parse_reference_id(&r)?, t));
        }
    }
    let mut contradicts: HashMap<String, Vec<AtomId>> = HashMap::new();
    for e in store::edges_touching(c, &ids, &["CONTRADICTS"]).await? {
        if e.from_kind == "atom" && e.to_kind == "atom" {
            contradicts
                .entry(e.from_id.clone())
                .or_default()
                .push(parse_atom_id(&e.to_id)?);
            contradicts
                .entry(e.to_id.clone())
                .or_default()
                .push(parse_atom_id(&e.from_id)?);
        }
    }
    Ok(atoms
        .iter()
        .map(|a| {
            let k = a.id.to_string();
            let mut refs = evidence.remove(&k).unwrap_or_default();
            refs.sort();
            refs.dedup();
            let mut con = contradicts.remove(&k).unwrap_or_default();
            con.sort();
            con.dedup();
            Contender::of(a, refs, con)
        })
        .collect())
}

/// A reference to a subject as a caller writes it: an id, or `Kind:name`
/// (`Lib:zod`), which names the subject of that kind with that name or alias (in
/// identity's normal form), or creates it.
#[derive(Debug, Clone, PartialEq)]
pub enum SubjectRef {
    Id(String),
    Named(SubjectKind, String),
}

impl SubjectRef {
    /// Reads `Kind:name` or an id; `None` when the text is neither.
    pub fn parse(s: &str) -> Option<SubjectRef> {
        let t = s.trim();
        if let Some((k, name)) = t.split_once(':') {
            if let Ok(kind) = SubjectKind::parse(k) {
                let name = name.trim();
                if !name.is_empty() && name.len() <= 255 {
                    return Some(SubjectRef::Named(kind, name.to_string()));
                }
                return None;
            }
        }
        id::parse(Field::Subject, t).ok().map(SubjectRef::Id)
    }
}

/// Finds or creates the subject a reference names, followed to its survivor. An id
/// that names no subject is NOT_FOUND (`param` names the parameter).
pub(crate) async fn resolve_ref(
    c: &mut Conn,
    r: &SubjectRef,
    create: bool,
    now: OffsetDateTime,
    created: &mut Vec<Subject>,
) -> Result<SubjectRow> {
    match r {
        SubjectRef::Id(id) => {
            if let Some(row) = survivor(c, id).await? {
                return Ok(row);
            }
            // A project's id names its Project subject.
            project_subject::id_ref(c, id, create, now, created)
                .await?
                .ok_or_else(|| Error::not_found("subject", id.clone()))
        }
        SubjectRef::Named(kind, name) => {
            if *kind == SubjectKind::Project {
                if let Some(row) = project_subject::named_ref(c, name, create, now, created).await?
                {
                    return Ok(row);
                }
            }
            let norm = normalise_name(name);
            if let Some(found) = store::subjects_named(c, kind.as_wire(), &norm)
                .await?
                .into_iter()
                .next()
            {
                if found.merged_into.is_none() {
                    return Ok(found);
                }
                return survivor(c, &found.id)
                    .await?
                    .ok_or_else(|| Error::not_found("subject", found.id));
            }
            if !create {
                return Err(Error::not_found("subject", format!("{kind}:{name}")));
            }
            let s = Subject {
                id: SubjectId(fresh()),
                kind: *kind,
                name: name.clone(),
                aliases: vec![],
                title: None,
                summary: None,
                tags: vec![],
                created_at: now,
                updated_at: now,
                merged_into: None,
                details: SubjectDetails::None,
            };
            subjects::insert(c, &s).await?;
            created.push(s.clone());
            Ok(subject_to_row(&s, 1))
        }
    }
}

/// The subject an asking project stands for: a Project subject by id, or the Project
/// subject linked to an orchestrator project. `Ok(None)` for an orchestrator project
/// no subject links (it sees Global atoms only); NOT_FOUND for an id that is neither.
pub(crate) async fn asking_project(c: &mut Conn, id: &str) -> Result<Option<Subject>> {
    if let Some(row) = survivor(c, id).await? {
        let (s, _) = load_subject(c, &row.id).await?;
        if s.kind != SubjectKind::Project {
            return Err(Error::validation(
                Field::ProjectId,
                format!(
                    "subject {id} is a {}, not a Project: send a Project subject or an orchestrator project",
                    s.kind
                ),
            ));
        }
        return Ok(Some(s));
    }
    if let Some(row) = store::subject_of_project(c, id).await? {
        let (s, _) = load_subject(c, &row.id).await?;
        return Ok(Some(s));
    }
    if crate::store::project::exists(c, id).await? {
        return Ok(None);
    }
    Err(Error::not_found("project", id))
}

#[cfg(test)]
mod tests {
    use super::read_time;
    use crate::domain::memory::wire::{format_time, parse_time};

    #[test]
    fn stored_times_read_back_exactly_by_either_reader() {
        for t in [
            "2025-11-14T10:00:00.000Z",
            "1999-12-31T23:59:59.999Z",
            "2024-02-29T00:00:00.001Z",
        ] {
            let fast = read_time(t).unwrap();
            assert_eq!(fast, parse_time(t).unwrap());
            assert_eq!(format_time(fast), t);
        }
        // Not the stored shape, or not a date: the full reader decides.
        assert!(read_time("2025-02-30T00:00:00.000Z").is_err());
        assert_eq!(
            read_time("2025-11-14").unwrap(),
            parse_time("2025-11-14").unwrap()
        );
        assert!(read_time("2025-11-14T10:00:00.00xZ").is_err());
    }
}
