//! Memory atoms: `remember` (a new statement meets the atoms on its claim key and the
//! collision rule decides), the life changes (`validate`, `deprecate`, `archive`,
//! `resolve` a contest), evidence and links, and the reads (`get` with the history
//! chain, `list`). An atom's statement and value never change: a change is a new
//! atom that supersedes the old one.

use std::collections::{HashMap, HashSet};

use time::OffsetDateTime;

use crate::domain::field::{Field, Tool};
use crate::domain::memory::change::{Action, ActionKind, Change};
use crate::domain::memory::claim::ClaimKey;
use crate::domain::memory::collision::{
    on_new, resolve as resolve_contest, settle, Contender, Outcome, Resolver,
};
use crate::domain::memory::decay::revalidate;
use crate::domain::memory::evidence::{strength, strength_of, Strength};
use crate::domain::memory::model::{
    AtomDetails, AtomId, Confirmation, DecisionStatus, EdgeKind, MemoryAtom, MemoryAtomType,
    MemoryEdge, MemoryStatus, NodeRef, RefType, Reference, ReferenceId, Subject, SubjectId,
    SubjectKind,
};
use crate::domain::memory::promotion::EvidenceFacts;
use crate::domain::memory::raw::Raw;
use crate::domain::memory::validate::{self, AtomContext, Known};
use crate::domain::memory::wire::loose_eq;
use crate::error::{Error, Result};
use crate::service::App;
use crate::store::memory::{self as store, AtomChange, AtomFilter, ReferenceRow};
use crate::store::Conn;

use super::{
    atom_from_row, contenders, edge_from_row, edge_to_row, fresh, group_key, load_atom,
    load_atom_at, reference_from_row, resolve_ref, stamp, SubjectRef, Writer,
};

mod read;
pub use read::*;

/// A source an atom cites: an existing reference, or a new one's fields.
#[derive(Debug, Clone)]
pub enum Source {
    Existing(String),
    New(Vec<(String, Raw)>),
}

/// How a remember ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Kept {
    /// The atom was written (its status says how it fared on its key).
    Inserted,
    /// It says what this current atom says: no new atom, its evidence supports that one.
    Duplicate(AtomId),
}

/// What a write answered: the atom as it is now, and every action taken, in order.
pub struct Written {
    pub atom: MemoryAtom,
    pub version: i64,
    pub kept: Kept,
    pub actions: Vec<Action>,
    /// Subjects created for `Kind:name` references.
    pub created_subjects: Vec<Subject>,
    /// References the atom cites (new or found).
    pub references: Vec<Reference>,
    /// Kinds and names of the subjects its fields named, for the answer.
    pub names: HashMap<SubjectId, (SubjectKind, String)>,
}

/// The fields of an atom that name subjects (ids or `Kind:name`).
const SUBJECT_FIELDS: &[&str] = &["about", "valueSubject", "effectSubject"];
const SUBJECT_LISTS: &[&str] = &["decisionMakers", "toolsRequired"];

/// Replaces subject references in an atom's fields by the ids of the subjects they
/// name (following merges; `Kind:name` creates a missing subject), and answers the
/// kinds of every subject named. An id that names nothing is NOT_FOUND.
async fn resolve_subjects(
    c: &mut Conn,
    input: &mut [(String, Raw)],
    now: OffsetDateTime,
    created: &mut Vec<Subject>,
) -> Result<HashMap<SubjectId, (SubjectKind, String)>> {
    let mut kinds = HashMap::new();
    for (k, v) in input.iter_mut() {
        let is_one = SUBJECT_FIELDS.iter().any(|f| loose_eq(f, k))
            || (loose_eq(k, "context")
                && !matches!(v, Raw::Text(t) if t.trim().eq_ignore_ascii_case("global")));
        if is_one {
            if let Raw::Text(t) = v {
                resolve_one(c, t, &mut kinds, created, now).await?;
            }
        } else if SUBJECT_LISTS.iter().any(|f| loose_eq(f, k)) {
            match v {
                Raw::Text(t) => resolve_one(c, t, &mut kinds, created, now).await?,
                Raw::List(items) => {
                    for it in items.iter_mut() {
                        if let Raw::Text(t) = it {
                            resolve_one(c, t, &mut kinds, created, now).await?;
                        }
                    }
                }
                _ => {}
            }
        } else if loose_eq(k, "effectAtom") {
            if let Raw::Text(t) = v {
                if let Ok(id) = crate::domain::id::parse("effectAtom", t) {
                    if store::atom(c, &id).await?.is_none() {
                        return Err(Error::not_found("memory atom", id));
                    }
                    *t = id;
                }
            }
        }
    }
    Ok(kinds)
}

async fn resolve_one(
    c: &mut Conn,
    t: &mut String,
    kinds: &mut HashMap<SubjectId, (SubjectKind, String)>,
    created: &mut Vec<Subject>,
    now: OffsetDateTime,
) -> Result<()> {
    let Some(r) = SubjectRef::parse(t) else {
        return Ok(()); // validation names the field
    };
    let row = resolve_ref(c, &r, true, now, created).await?;
    if let (Ok(id), Ok(kind)) = (SubjectId::parse(&row.id), SubjectKind::parse(&row.kind)) {
        kinds.insert(id, (kind, row.name.clone()));
    }
    *t = row.id;
    Ok(())
}

/// Writes (or finds) the references an atom cites. A new reference with the type
/// and URI of one already recorded is that one: sources are shared, not copied.
pub(crate) async fn record_sources(
    c: &mut Conn,
    sources: &[Source],
    now: OffsetDateTime,
) -> Result<Vec<Reference>> {
    let mut out: Vec<Reference> = Vec::new();
    for (i, s) in sources.iter().enumerate() {
        let r = match s {
            Source::Existing(id) => {
                let rows = store::references_by_ids(c, std::slice::from_ref(id)).await?;
                let row = rows
                    .first()
                    .ok_or_else(|| Error::not_found("reference", id.clone()))?;
                reference_from_row(row)?
            }
            Source::New(fields) => {
                let r = validate::reference(fields, ReferenceId(fresh()), now).map_err(|e| {
                    let first = e.0.first().map(|f| f.field.clone()).unwrap_or_default();
                    Error::Validation {
                        message: e
                            .0
                            .iter()
                            .map(|f| format!("sources[{i}].{}: {}", f.field, f.message))
                            .collect::<Vec<_>>()
                            .join("; "),
                        parameter: Some(format!("sources[{i}].{first}")),
                    }
                })?;
                let existing = match &r.uri {
                    Some(u) => store::reference_at(c, r.ref_type.as_wire(), u).await?,
                    None => None,
                };
                match existing {
                    Some(row) => reference_from_row(&row)?,
                    None => {
                        store::insert_reference(
                            c,
                            &ReferenceRow {
                                id: r.id.to_string(),
                                ref_type: r.ref_type.as_wire().into(),
                                title: r.title.clone(),
                                uri: r.uri.clone(),
                                authors: super::encode_list(&r.authors),
                                published_at: r.published_at.map(stamp),
                                retrieved_at: stamp(r.retrieved_at),
                                snippet: r.snippet.clone(),
                                hash: r.hash.clone(),
                                created_at: stamp(now),
                            },
                        )
                        .await?;
                        r
                    }
                }
            }
        };
        if !out.iter().any(|x| x.id == r.id) {
            out.push(r);
        }
    }
    Ok(out)
}

pub(crate) fn validation(param: &str, e: validate::ValidationErrors) -> Error {
    let first =
        e.0.first()
            .map(|f| format!("{param}.{}", f.field))
            .unwrap_or_else(|| param.to_string());
    Error::Validation {
        message: e
            .0
            .iter()
            .map(|f| format!("{param}.{}: {}", f.field, f.message))
            .collect::<Vec<_>>()
            .join("; "),
        parameter: Some(first),
    }
}

/// The holders of a group (atoms on the key that are current or contested), minus
/// closed Decisions, which hold nothing.
async fn holders(c: &mut Conn, group: &str, except: Option<AtomId>) -> Result<Vec<MemoryAtom>> {
    let rows = store::group(c, group, true).await?;
    let mut out = Vec::new();
    for r in &rows {
        let a = atom_from_row(r)?;
        if Some(a.id) == except || closed_decision(&a) {
            continue;
        }
        out.push(a);
    }
    Ok(out)
}

fn closed_decision(a: &MemoryAtom) -> bool {
    matches!(
        a.details.decision().map(|d| d.decision_status),
        Some(DecisionStatus::Rejected | DecisionStatus::Deprecated)
    )
}

/// The holders of a new atom's group and the accepted Decision that would settle a
/// contest on it, read in one statement (the commonest write reads nothing else).
async fn holders_and_resolver(
    c: &mut Conn,
    a: &MemoryAtom,
    group: &str,
    except: Option<AtomId>,
) -> Result<(Vec<MemoryAtom>, Option<Resolver>)> {
    let decision_key = match ClaimKey::of(a) {
        Some(k) if a.atom_type() != MemoryAtomType::Decision => {
            Some(k.with_type(MemoryAtomType::Decision).canonical())
        }
        _ => None,
    };
    let mut keys = vec![group.to_string()];
    keys.extend(decision_key.clone());
    let mut held = Vec::new();
    let mut resolver = None;
    for r in store::groups(c, &keys, true).await? {
        let x = atom_from_row(&r)?;
        if Some(&r.group_key) == decision_key.as_ref() {
            let accepted = x.status == MemoryStatus::Active
                && x.details.decision().map(|d| d.decision_status)
                    == Some(DecisionStatus::Accepted);
            if accepted && resolver.is_none() {
                resolver = Some(Resolver {
                    id: x.id,
                    value: crate::domain::memory::claim::claim_value(
                        x.value.as_ref(),
                        &x.statement,
                    ),
                });
            }
        } else if Some(x.id) != except && !closed_decision(&x) {
            held.push(x);
        }
    }
    Ok((held, resolver))
}

/// An accepted ACTIVE Decision on the same predicate, subject and context as `a`,
/// of another type: it settles contests on `a`'s key.
async fn resolver_for(c: &mut Conn, a: &MemoryAtom) -> Result<Option<Resolver>> {
    if a.atom_type() == MemoryAtomType::Decision {
        return Ok(None);
    }
    let Some(key) = ClaimKey::of(a) else {
        return Ok(None);
    };
    let dk = key.with_type(MemoryAtomType::Decision).canonical();
    Ok(match store::accepted_decisions(c, &dk).await?.first() {
        Some(r) => {
            let d = atom_from_row(r)?;
            Some(Resolver {
                id: d.id,
                value: crate::domain::memory::claim::claim_value(d.value.as_ref(), &d.statement),
            })
        }
        None => None,
    })
}

/// What `remember` takes.
pub struct Remember {
    /// The atom's fields (the validator's wire names).
    pub fields: Vec<(String, Raw)>,
    pub sources: Vec<Source>,
    /// An atom the new one explicitly replaces.
    pub supersedes: Option<String>,
    pub now: OffsetDateTime,
}

/// A named agent's atom names the agent as its author (README, "Named agents"):
/// set when the fields name none, refused when they name someone else, so the
/// author of a row written over HTTP is always the token that wrote it.
fn authored_by(fields: &mut Vec<(String, Raw)>, name: &str) -> Result<()> {
    use crate::domain::memory::keys::AUTHOR;
    match fields.iter_mut().find(|(k, _)| k == AUTHOR) {
        Some((_, Raw::Text(given))) if given.trim() == name => Ok(()),
        Some((_, v @ Raw::Null)) => {
            *v = Raw::Text(name.to_string());
            Ok(())
        }
        Some(_) => Err(Error::Validation {
            message: format!(
                "atom.{AUTHOR}: the author is the agent whose token wrote the atom, {name}: \
                 drop {AUTHOR} (who said it belongs in sources or notes)"
            ),
            parameter: Some(format!("atom.{AUTHOR}")),
        }),
        None => {
            fields.push((AUTHOR.to_string(), Raw::Text(name.to_string())));
            Ok(())
        }
    }
}

/// Records a new atom. Its claim key's holders are read under the write lock and the
/// core's collision rule decides: the same value is a duplicate (its sources support
/// the existing atom), a stronger claim supersedes, a weaker one is recorded
/// superseded, a tie contests both. An accepted Decision then settles contests on the
/// same predicate, subject and context. Everything in one transaction.
pub async fn remember(app: &App, mut r: Remember) -> Result<Written> {
    if let Some(name) = app.author() {
        authored_by(&mut r.fields, name)?;
    }
    let mut tx = app.store.write().await?;
    let w = remember_in(&mut tx, r).await?;
    tx.commit().await?;
    Ok(w)
}

/// `remember` inside the caller's write transaction (an import writes many in one).
pub(crate) async fn remember_in(tx: &mut Conn, r: Remember) -> Result<Written> {
    let now = r.now;
    let mut created = Vec::new();
    let mut fields = r.fields;
    let kinds = resolve_subjects(&mut *tx, &mut fields, now, &mut created).await?;
    let refs = record_sources(&mut *tx, &r.sources, now).await?;
    let evidence = EvidenceFacts::of(refs.iter().map(|x| (x.id, x.ref_type)));
    let id = AtomId(fresh());
    let atom = {
        let known_subject = |id: SubjectId| kinds.get(&id).map(|k| k.0);
        let any_atom = |_: AtomId| true;
        let ctx = AtomContext {
            known: Known {
                subject: &known_subject,
                atom: &any_atom,
            },
            evidence,
            now,
        };
        validate::atom(&fields, id, &ctx).map_err(|e| validation("atom", e))?
    };
    let replaced = match &r.supersedes {
        None => None,
        Some(s) => {
            let (old, _) = load_atom(&mut *tx, s).await?;
            if old.status.is_retired() {
                return Err(Error::invalid(format!(
                    "atom {s} is {} already: supersede the atom that holds its place now ({} get shows its history)",
                    old.status,
                    Tool::QueryMemory
                )));
            }
            Some(old)
        }
    };
    let group = group_key(&atom);
    let (held, resolver) =
        holders_and_resolver(&mut *tx, &atom, &group, replaced.as_ref().map(|a| a.id)).await?;
    let held_c = contenders(&mut *tx, &held).await?;
    let new_c = Contender::of(
        &atom,
        refs.iter().map(|x| (x.id, x.ref_type)).collect(),
        vec![],
    );
    let decided = on_new(&held_c, &new_c, resolver.as_ref(), now);
    let now_s = stamp(now);
    let mut actions: Vec<Action> = Vec::new();
    let names = kinds;
    let mut w = Writer::new(&mut *tx, now);
    w.know(held.iter().cloned());
    if let Some(old) = &replaced {
        w.know([old.clone()]);
    }
    let (kept, subject_id) = match decided.outcome {
        Outcome::Duplicate { into } => {
            if let Some(old) = &replaced {
                let a = supersede_action(
                    into,
                    old,
                    now,
                    "replaced by the atom that says the same (supersedes)",
                );
                w.action(&a).await?;
                actions.push(a);
            }
            w.actions(&decided.actions).await?;
            actions.extend(decided.actions);
            (Kept::Duplicate(into), into)
        }
        Outcome::Insert { .. } => {
            // The new atom is written once, as the rules leave it, after the rest.
            w.know([atom.clone()]);
            w.pending = Some(id);
            for rf in &refs {
                let e = MemoryEdge::new(
                    NodeRef::Atom(id),
                    EdgeKind::FromSource,
                    NodeRef::Reference(rf.id),
                );
                store::insert_edge(w.c, &edge_to_row(&e), &now_s).await?;
            }
            if let Some(old) = &replaced {
                let a = supersede_action(id, old, now, "replaced by a new atom (supersedes)");
                w.action(&a).await?;
                actions.push(a);
            }
            w.actions(&decided.actions).await?;
            actions.extend(decided.actions);
            (Kept::Inserted, id)
        }
    };
    let sched = w.schedule(&actions).await?;
    actions.extend(sched);
    w.insert_pending().await?;
    // An accepted Decision settles the other keys on its predicate, subject and
    // context.
    if let Some(a) = w.atoms.get(&subject_id).cloned() {
        if a.status == MemoryStatus::Active
            && a.details.decision().map(|d| d.decision_status) == Some(DecisionStatus::Accepted)
        {
            let more = settle_siblings(&mut w, &a, now).await?;
            actions.extend(more);
        }
    }
    let known = match (&kept, w.atoms.get(&subject_id), w.versions.get(&subject_id)) {
        (Kept::Inserted, Some(a), Some(v)) => Some((a.clone(), *v)),
        _ => None,
    };
    let (atom, version) = match known {
        Some(x) => x,
        None => {
            let (a, row) = load_atom(&mut *tx, &subject_id.to_string()).await?;
            (a, row.version)
        }
    };
    Ok(Written {
        atom,
        version,
        kept,
        actions,
        created_subjects: created,
        references: refs,
        names,
    })
}

fn supersede_action(winner: AtomId, old: &MemoryAtom, now: OffsetDateTime, why: &str) -> Action {
    Action {
        kind: ActionKind::Supersede,
        changes: vec![
            Change::SetStatus {
                atom: old.id,
                from: old.status,
                to: MemoryStatus::Superseded,
                at: now,
            },
            Change::AddEdge(MemoryEdge::new(
                NodeRef::Atom(winner),
                EdgeKind::Supersedes,
                NodeRef::Atom(old.id),
            )),
        ],
        reason: why.to_string(),
    }
}

/// Settles the groups of other types on a Decision's predicate, subject and context.
async fn settle_siblings(
    w: &mut Writer<'_>,
    d: &MemoryAtom,
    now: OffsetDateTime,
) -> Result<Vec<Action>> {
    let Some(key) = ClaimKey::of(d) else {
        return Ok(vec![]);
    };
    let keys: Vec<String> = MemoryAtomType::ALL
        .iter()
        .filter(|t| **t != d.atom_type())
        .map(|t| key.with_type(*t).canonical())
        .collect();
    let groups = store::live_groups(w.c, &keys).await?;
    let mut out = Vec::new();
    for g in groups {
        out.extend(settle_group(w, &g, now).await?);
    }
    Ok(out)
}

/// Settles one group as the curator would: every live atom on it (drafts included)
/// meets the collision rule, with an accepted Decision on the same predicate,
/// subject and context as the resolver. Writes and answers the actions.
pub(crate) async fn settle_group(
    w: &mut Writer<'_>,
    group: &str,
    now: OffsetDateTime,
) -> Result<Vec<Action>> {
    let rows = store::group(w.c, group, false).await?;
    let mut members = Vec::new();
    for r in &rows {
        let a = atom_from_row(r)?;
        if !closed_decision(&a) {
            members.push(a);
        }
    }
    // A lone current atom has nothing to settle.
    if matches!(members.as_slice(), [a] if matches!(a.status, MemoryStatus::Active | MemoryStatus::NeedsReview))
        || members.is_empty()
    {
        return Ok(vec![]);
    }
    let resolver = match members.first() {
        Some(a) if a.atom_type() != MemoryAtomType::Decision => resolver_for(w.c, a).await?,
        _ => None,
    };
    let cs = contenders(w.c, &members).await?;
    let actions = settle(&cs, resolver.as_ref(), now);
    w.know(members);
    w.actions(&actions).await?;
    let mut out = actions;
    let sched = w.schedule(&out).await?;
    out.extend(sched);
    Ok(out)
}

/// Validates an atom at `now`: a NEEDS_REVIEW atom is ACTIVE again, its confidence
/// restored (to `confidence` when given), its review rescheduled; `confirmed_by`
/// records who confirmed it (what promotes it, a Decision included). Its key is then
/// settled, as the new standing may decide it.
pub async fn validate_atom(
    app: &App,
    id: &str,
    version: i64,
    confidence: Option<f64>,
    confirmed_by: Option<String>,
    now: OffsetDateTime,
) -> Result<Written> {
    let mut tx = app.store.write().await?;
    let mut a = load_atom_at(&mut tx, id, version).await?;
    let rv = revalidate(&a, now, confidence).map_err(|e| Error::invalid(e.to_string()))?;
    let mut ch = AtomChange {
        last_validated_at: Some(stamp(now)),
        next_review_at: Some(rv.next_review_at.map(stamp)),
        confidence: Some(rv.confidence),
        validated_confidence: Some(rv.confidence),
        ..Default::default()
    };
    if rv.status != a.status {
        ch.status = Some((a.status.as_wire().into(), rv.status.as_wire().into()));
        ch.status_reason = Some(Some("validated".into()));
    }
    if let Some(by) = &confirmed_by {
        ch.confirmed = Some((by.clone(), stamp(now)));
        a.confirmation = Some(Confirmation {
            by: by.clone(),
            at: now,
        });
    }
    store::change_atom(&mut tx, id, Some(version), &ch, &stamp(now)).await?;
    rv.apply(&mut a);
    let g = group_key(&a);
    let mut w = Writer::new(&mut tx, now);
    let actions = settle_group(&mut w, &g, now).await?;
    let (atom, row) = load_atom(&mut tx, id).await?;
    tx.commit().await?;
    Ok(Written {
        atom,
        version: row.version,
        kept: Kept::Inserted,
        actions,
        created_subjects: vec![],
        references: vec![],
        names: HashMap::new(),
    })
}

/// Retires an atom by hand: DEPRECATED (no longer true or recommended; a Decision's
/// own status becomes deprecated) or ARCHIVED (kept, out of recall unless history is
/// asked for). `reason` is recorded.
pub async fn retire(
    app: &App,
    id: &str,
    version: i64,
    to: MemoryStatus,
    reason: Option<String>,
    now: OffsetDateTime,
) -> Result<Written> {
    let mut tx = app.store.write().await?;
    let a = load_atom_at(&mut tx, id, version).await?;
    if a.status == to || (a.status.is_retired() && to != MemoryStatus::Archived) {
        return Err(Error::invalid(format!(
            "atom {id} is {} already: nothing to {}",
            a.status,
            if to == MemoryStatus::Archived {
                "archive"
            } else {
                "deprecate"
            }
        )));
    }
    let mut ch = AtomChange {
        status: Some((a.status.as_wire().into(), to.as_wire().into())),
        // Never before it was recorded, whatever clock the call gave: `asOf` reads
        // the two as an interval.
        retired_at: Some(stamp(now.max(a.recorded_at))),
        status_reason: Some(
            reason.or_else(|| Some(format!("{} by hand", to.as_wire().to_lowercase()))),
        ),
        ..Default::default()
    };
    if to == MemoryStatus::Deprecated && matches!(a.details, AtomDetails::Decision(_)) {
        ch.decision_status = Some(DecisionStatus::Deprecated.as_wire().into());
    }
    store::change_atom(&mut tx, id, Some(version), &ch, &stamp(now)).await?;
    // What held the key beside it (a contest's other side, a waiting candidate) is
    // settled at once.
    let mut w = Writer::new(&mut tx, now);
    let actions = settle_group(&mut w, &group_key(&a), now).await?;
    let (atom, row) = load_atom(&mut tx, id).await?;
    tx.commit().await?;
    Ok(Written {
        atom,
        version: row.version,
        kept: Kept::Inserted,
        actions,
        created_subjects: vec![],
        references: vec![],
        names: HashMap::new(),
    })
}

/// Ends a contest by an explicit choice: `id` (CONTESTED) becomes ACTIVE, its
/// resolution names who chose, and every other holder of its key is superseded by it.
pub async fn resolve(
    app: &App,
    id: &str,
    version: i64,
    by: &str,
    now: OffsetDateTime,
) -> Result<Written> {
    let mut tx = app.store.write().await?;
    let a = load_atom_at(&mut tx, id, version).await?;
    let held = holders(&mut tx, &group_key(&a), None).await?;
    let cs = contenders(&mut tx, &held).await?;
    let actions = resolve_contest(&cs, a.id, by, now).map_err(|e| Error::invalid(e.to_string()))?;
    let mut w = Writer::new(&mut tx, now);
    w.know(held);
    w.actions(&actions).await?;
    let mut all = actions;
    let sched = w.schedule(&all).await?;
    all.extend(sched);
    let (atom, row) = load_atom(&mut tx, id).await?;
    tx.commit().await?;
    Ok(Written {
        atom,
        version: row.version,
        kept: Kept::Inserted,
        actions: all,
        created_subjects: vec![],
        references: vec![],
        names: HashMap::new(),
    })
}

/// Adds evidence to an atom (FROM_SOURCE to each source), then settles its key: more
/// evidence may promote it, or let it win.
pub async fn add_evidence(
    app: &App,
    id: &str,
    sources: &[Source],
    now: OffsetDateTime,
) -> Result<Written> {
    let mut tx = app.store.write().await?;
    let (a, _) = load_atom(&mut tx, id).await?;
    if a.status.is_retired() {
        return Err(Error::invalid(format!(
            "atom {id} is {}: evidence for it would change nothing; remember a new atom instead",
            a.status
        )));
    }
    let refs = record_sources(&mut tx, sources, now).await?;
    let now_s = stamp(now);
    for r in &refs {
        let e = MemoryEdge::new(
            NodeRef::Atom(a.id),
            EdgeKind::FromSource,
            NodeRef::Reference(r.id),
        );
        store::insert_edge(&mut tx, &edge_to_row(&e), &now_s).await?;
    }
    let mut w = Writer::new(&mut tx, now);
    let actions = settle_group(&mut w, &group_key(&a), now).await?;
    let (atom, row) = load_atom(&mut tx, id).await?;
    tx.commit().await?;
    Ok(Written {
        atom,
        version: row.version,
        kept: Kept::Inserted,
        actions,
        created_subjects: vec![],
        references: refs,
        names: HashMap::new(),
    })
}

/// Edge kinds `link` may add or remove: the rest are written by the rules (ABOUT,
/// IN_CONTEXT, SUPERSEDES) or by `manage_subject` (USES).
pub const LINKABLE: &[EdgeKind] = &[
    EdgeKind::FromSource,
    EdgeKind::AuthoredBy,
    EdgeKind::Supports,
    EdgeKind::Contradicts,
    EdgeKind::DependsOn,
    EdgeKind::Causes,
    EdgeKind::CausedBy,
    EdgeKind::BlockedBy,
    EdgeKind::Related,
];

/// Adds (`on`) or removes an edge between two nodes (atoms, subjects, references). A
/// link that brings evidence (FROM_SOURCE, a reference's SUPPORTS) settles the
/// atom's key. Answers whether the edge changed and what the rules did.
pub async fn link(
    app: &App,
    from: &str,
    kind: EdgeKind,
    to: &str,
    on: bool,
    now: OffsetDateTime,
) -> Result<(bool, Vec<Action>)> {
    if !LINKABLE.contains(&kind) {
        return Err(Error::validation(
            Field::Kind,
            format!(
                "{kind} is not linked by hand: SUPERSEDES comes from remember (supersedes) and resolve, USES from {}",
                Tool::ManageSubject
            ),
        ));
    }
    let mut tx = app.store.write().await?;
    let f = node_of(&mut tx, from).await?;
    let t = node_of(&mut tx, to).await?;
    let e = MemoryEdge::new(f, kind, t);
    if !e.allowed() {
        let name = |n: &NodeRef| match n {
            NodeRef::Atom(_) => "an atom",
            NodeRef::Subject(_) => "a subject",
            NodeRef::Reference(_) => "a reference",
        };
        return Err(Error::invariant(format!(
            "{kind} cannot join {} to {}: FROM_SOURCE goes atom → reference, SUPPORTS atom or reference → atom, \
             AUTHORED_BY atom → subject, DEPENDS_ON and RELATED atom → atom or subject, the others atom → atom",
            name(&f),
            name(&t)
        )));
    }
    let row = edge_to_row(&e);
    let changed = if on {
        store::insert_edge(&mut tx, &row, &stamp(now)).await?
    } else {
        store::delete_edge(&mut tx, &row.from_id, &row.kind, &row.to_id).await?
    };
    let mut actions = Vec::new();
    let evidence = matches!(
        (kind, f),
        (EdgeKind::FromSource, _) | (EdgeKind::Supports, NodeRef::Reference(_))
    );
    if on && changed && evidence {
        let target = match (f, t) {
            (NodeRef::Atom(a), _) if kind == EdgeKind::FromSource => Some(a),
            (_, NodeRef::Atom(a)) => Some(a),
            _ => None,
        };
        if let Some(a) = target {
            let (atom, _) = load_atom(&mut tx, &a.to_string()).await?;
            if !atom.status.is_retired() {
                let mut w = Writer::new(&mut tx, now);
                actions = settle_group(&mut w, &group_key(&atom), now).await?;
            }
        }
    }
    tx.commit().await?;
    Ok((changed, actions))
}

async fn node_of(c: &mut Conn, id: &str) -> Result<NodeRef> {
    let bad = |e: crate::domain::memory::wire::BadId| Error::Internal(e.to_string());
    Ok(match store::node_kind(c, id).await? {
        Some("atom") => NodeRef::Atom(AtomId::parse(id).map_err(bad)?),
        Some("subject") => NodeRef::Subject(SubjectId::parse(id).map_err(bad)?),
        Some(_) => NodeRef::Reference(ReferenceId::parse(id).map_err(bad)?),
        None => return Err(Error::not_found("atom, subject or reference", id)),
    })
}

/// Subjects merged into `id` (directly or through others): atoms may still name
/// them until the curator moves them.
pub(crate) async fn merged_into(c: &mut Conn, id: &str) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    let mut frontier = vec![id.to_string()];
    while let Some(cur) = frontier.pop() {
        for s in store::merged_into(c, &cur).await? {
            if !out.contains(&s) && s != id {
                out.push(s.clone());
                frontier.push(s);
            }
        }
    }
    Ok(out)
}

/// The strongest reference of each atom.
pub(crate) async fn strengths(c: &mut Conn, ids: &[String]) -> Result<HashMap<String, Strength>> {
    let mut out: HashMap<String, Strength> = HashMap::new();
    for (atom, _, t) in store::evidence_of(c, ids).await? {
        if let Ok(t) = RefType::parse(&t) {
            let s = strength(t);
            let e = out.entry(atom).or_default();
            if s > *e {
                *e = s;
            }
        }
    }
    Ok(out)
}
