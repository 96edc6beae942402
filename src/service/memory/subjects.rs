//! Subjects: the things atoms are about or scoped to, shared by every project in the
//! file. Creating one with a name (or alias) that identity resolution folds onto an
//! existing subject of the same kind answers that subject, which gains the new
//! spelling as an alias, instead of making a second; `merge` joins two a human knows
//! are one; `uses` records Project USES Lib, from which usage facts are derived when
//! read (never stored, so removing an edge removes the fact).

use std::collections::HashMap;

use time::OffsetDateTime;

use crate::domain::field::Field;
use crate::domain::memory::change::{Action, ActionKind, Change};
use crate::domain::memory::identity::{merge_plan_for, normalise_name};
use crate::domain::memory::model::{
    AtomId, EdgeKind, MemoryEdge, NodeRef, Subject, SubjectDetails, SubjectId, SubjectKind,
};
use crate::domain::memory::raw::Raw;
use crate::domain::memory::recall::{usage_facts, UsageFact};
use crate::domain::memory::validate::{self, subject_detail_fields, Known};
use crate::domain::memory::wire::loose_eq;
use crate::error::{Error, Result};
use crate::service::App;
use crate::store::memory::{self as store, NameRow};
use crate::store::Conn;

use super::{
    edge_from_row, fresh, load_subject, load_subject_at, load_subjects, resolve_ref, stamp,
    subject_from_row, subject_to_row, survivor, SubjectRef, Writer,
};

/// Writes a new subject and its names.
pub(crate) async fn insert(c: &mut Conn, s: &Subject) -> Result<()> {
    let row = subject_to_row(s, 1);
    store::insert_subject(c, &row).await.map_err(|e| match e {
        crate::store::Error::Duplicate { name, .. } => Error::invariant(format!(
            "orchestrator project {name} is already linked to another Project subject: update that one, or merge them"
        )),
        other => other.into(),
    })?;
    store::add_name(
        c,
        &NameRow {
            subject_id: row.id.clone(),
            name: s.name.clone(),
            norm: normalise_name(&s.name),
            is_alias: false,
        },
    )
    .await?;
    for a in &s.aliases {
        store::add_name(
            c,
            &NameRow {
                subject_id: row.id.clone(),
                name: a.clone(),
                norm: normalise_name(a),
                is_alias: true,
            },
        )
        .await?;
    }
    Ok(())
}

/// The fields that name other subjects, which accept `Kind:name` as well as ids.
const REF_FIELDS: &[&str] = &["org", "maintainer"];

/// Replaces `Kind:name` references in subject fields by the ids they resolve to
/// (created when absent), and checks that ids exist; checks an orchestrator project.
async fn resolve_fields(
    c: &mut Conn,
    input: &mut [(String, Raw)],
    now: OffsetDateTime,
    created: &mut Vec<Subject>,
) -> Result<HashMap<SubjectId, SubjectKind>> {
    let mut kinds = HashMap::new();
    for (k, v) in input.iter_mut() {
        if REF_FIELDS.iter().any(|f| loose_eq(f, k)) {
            if let Raw::Text(t) = v {
                let Some(r) = SubjectRef::parse(t) else {
                    continue; // validation names the field
                };
                let row = resolve_ref(c, &r, true, now, created).await?;
                let id = SubjectId::parse(&row.id).map_err(|e| Error::Internal(e.to_string()))?;
                if let Ok(kind) = SubjectKind::parse(&row.kind) {
                    kinds.insert(id, kind);
                }
                *t = row.id;
            }
        }
        if loose_eq(k, "orchestratorProject") {
            if let Raw::Text(t) = v {
                if let Ok(p) = crate::domain::id::parse("orchestratorProject", t) {
                    if !crate::store::project::exists(c, &p).await? {
                        return Err(Error::not_found("project", p));
                    }
                    *t = p;
                }
            }
        }
    }
    Ok(kinds)
}

/// What a create answered: the subject, and whether it is new.
pub struct Created {
    pub subject: Subject,
    pub version: i64,
    pub created: bool,
    /// Names added to an existing subject (the spelling sent, its aliases).
    pub added_aliases: Vec<String>,
    /// Fields sent that the existing subject answered lacked, now set on it.
    pub filled: Vec<String>,
    /// The orchestrator project the subject was linked to by this call.
    pub linked: Option<String>,
    /// Subjects created for `Kind:name` references in its fields.
    pub also_created: Vec<Subject>,
}

/// Creates a subject from its fields (`kind`, `name`, `aliases`, the kind's fields),
/// or answers the existing subject of that kind that one of its names folds onto.
/// A Project subject stands for the orchestrator project sent, or else for the one
/// project its name names: that project's subject is answered when it has one, an
/// unlinked one of the same name is linked, and a new one is linked.
pub async fn create(
    app: &App,
    mut input: Vec<(String, Raw)>,
    now: OffsetDateTime,
) -> Result<Created> {
    let mut tx = app.store.write().await?;
    let mut also = Vec::new();
    let kinds = resolve_fields(&mut tx, &mut input, now, &mut also).await?;
    let mut s = {
        let known_subject = |id: SubjectId| kinds.get(&id).copied();
        let no_atom = |_: AtomId| false;
        let known = Known {
            subject: &known_subject,
            atom: &no_atom,
        };
        validate::subject(&input, SubjectId(fresh()), &known, now)
            .map_err(|e| super::atoms::validation("subject", e))?
    };
    let mut project = match &s.details {
        SubjectDetails::Project(f) => f
            .orchestrator_project
            .map(|u| uuid::Uuid::from_u128(u).to_string()),
        _ => None,
    };
    if s.kind == SubjectKind::Project && project.is_none() {
        if let [p] = crate::service::projects::named(&mut tx, &s.name)
            .await?
            .as_slice()
        {
            project = Some(p.id.clone());
        }
    }
    if let Some(p) = &project {
        if let Some(row) = store::subject_of_project(&mut tx, p).await? {
            let c = answer_existing(&mut tx, &row.id, &s, &input, None, now, also).await?;
            tx.commit().await?;
            return Ok(c);
        }
    }
    // Identity at the door: a name that folds onto a subject of the same kind is
    // that subject (a Project subject linked to another project is not).
    for n in std::iter::once(&s.name).chain(s.aliases.iter()) {
        let norm = normalise_name(n);
        if norm.is_empty() {
            continue;
        }
        for f in store::subjects_named(&mut tx, s.kind.as_wire(), &norm).await? {
            let Some(row) = survivor(&mut tx, &f.id).await? else {
                continue;
            };
            if project.is_some() && row.orchestrator_project_id.is_some() {
                continue;
            }
            let c = answer_existing(&mut tx, &row.id, &s, &input, project.as_deref(), now, also)
                .await?;
            tx.commit().await?;
            return Ok(c);
        }
    }
    if let Some(p) = &project {
        if s.details == SubjectDetails::None {
            s.details = SubjectDetails::Project(Default::default());
        }
        if let SubjectDetails::Project(f) = &mut s.details {
            f.orchestrator_project = uuid::Uuid::parse_str(p).ok().map(|u| u.as_u128());
        }
    }
    let linked = project;
    insert(&mut tx, &s).await?;
    tx.commit().await?;
    Ok(Created {
        subject: s,
        version: 1,
        created: true,
        added_aliases: vec![],
        filled: vec![],
        linked,
        also_created: also,
    })
}

/// A create answered by an existing subject `id`: the names sent become its aliases,
/// the fields sent that it lacks are set (none it has is changed), and `link` (an
/// orchestrator project) links it when it is not linked yet.
async fn answer_existing(
    tx: &mut Conn,
    id: &str,
    sent: &Subject,
    input: &[(String, Raw)],
    link: Option<&str>,
    now: OffsetDateTime,
    also: Vec<Subject>,
) -> Result<Created> {
    let (existing, version) = load_subject(tx, id).await?;
    let mut added = Vec::new();
    for a in std::iter::once(&sent.name).chain(sent.aliases.iter()) {
        if *a != existing.name && !existing.aliases.contains(a) && !added.contains(a) {
            added.push(a.clone());
        }
    }
    let mut has: Vec<&str> = subject_detail_fields(&existing.details)
        .into_iter()
        .map(|(k, _)| k)
        .collect();
    if existing.title.is_some() {
        has.push("title");
    }
    if existing.summary.is_some() {
        has.push("summary");
    }
    if !existing.tags.is_empty() {
        has.push("tags");
    }
    let mut fill: Vec<(String, Raw)> = input
        .iter()
        .filter(|(k, _)| {
            !["kind", "name", "aliases"].iter().any(|f| loose_eq(f, k))
                && !has.iter().any(|h| loose_eq(h, k))
        })
        .cloned()
        .collect();
    let linked_now = match link {
        Some(p) if !has.contains(&"orchestratorProject") => {
            if !fill.iter().any(|(k, _)| loose_eq(k, "orchestratorProject")) {
                fill.push(("orchestratorProject".into(), Raw::text(p)));
            }
            Some(p.to_string())
        }
        _ => None,
    };
    let filled: Vec<String> = fill.iter().map(|(k, _)| k.clone()).collect();
    if !fill.is_empty() {
        update_tx(tx, id, version, fill, now).await?;
    }
    for a in &added {
        store::add_name(
            tx,
            &NameRow {
                subject_id: id.to_string(),
                name: a.clone(),
                norm: normalise_name(a),
                is_alias: true,
            },
        )
        .await?;
    }
    if !added.is_empty() {
        store::touch_subject(tx, id, &stamp(now)).await?;
    }
    let (subject, v) = load_subject(tx, id).await?;
    Ok(Created {
        subject,
        version: v,
        created: false,
        added_aliases: added,
        filled,
        linked: linked_now,
        also_created: also,
    })
}

/// Changes a subject's fields (`name`, `title`, `summary`, `tags`, the kind's
/// fields; `aliases` are added). A new name keeps the old one as an alias.
pub async fn update(
    app: &App,
    id: &str,
    version: i64,
    input: Vec<(String, Raw)>,
    now: OffsetDateTime,
) -> Result<(Subject, i64)> {
    let mut tx = app.store.write().await?;
    let out = update_tx(&mut tx, id, version, input, now).await?;
    tx.commit().await?;
    Ok(out)
}

async fn update_tx(
    tx: &mut Conn,
    id: &str,
    version: i64,
    mut input: Vec<(String, Raw)>,
    now: OffsetDateTime,
) -> Result<(Subject, i64)> {
    let cur = load_subject_at(tx, id, version).await?;
    if let Some(m) = cur.merged_into {
        return Err(Error::invalid(format!(
            "subject {id} was merged into {m}: update {m} instead"
        )));
    }
    if let Some((_, k)) = input.iter().find(|(k, _)| loose_eq(k, "kind")) {
        if !matches!(k, Raw::Text(t) if SubjectKind::parse(t) == Ok(cur.kind)) {
            return Err(Error::validation(
                format!("{}.kind", Field::Subject),
                format!(
                    "a subject's kind never changes (this one is a {}): create another subject",
                    cur.kind
                ),
            ));
        }
    }
    let mut also = Vec::new();
    let kinds = resolve_fields(tx, &mut input, now, &mut also).await?;
    // The current fields, overlaid by the ones sent.
    let mut merged: Vec<(String, Raw)> = vec![
        ("kind".into(), Raw::text(cur.kind.as_wire())),
        ("name".into(), Raw::text(&cur.name)),
    ];
    if let Some(t) = &cur.title {
        merged.push(("title".into(), Raw::text(t)));
    }
    if let Some(t) = &cur.summary {
        merged.push(("summary".into(), Raw::text(t)));
    }
    if !cur.tags.is_empty() {
        merged.push(("tags".into(), Raw::texts(&cur.tags)));
    }
    for (k, v) in subject_detail_fields(&cur.details) {
        merged.push((k.to_string(), v));
    }
    let mut aliases_sent = Vec::new();
    for (k, v) in input {
        if loose_eq(&k, "kind") {
            continue;
        }
        if loose_eq(&k, "aliases") {
            aliases_sent.push(v);
            continue;
        }
        merged.retain(|(m, _)| !loose_eq(m, &k));
        merged.push((k, v));
    }
    let mut next = {
        let known_subject = |sid: SubjectId| kinds.get(&sid).copied().or(Some(SubjectKind::Org));
        let no_atom = |_: AtomId| false;
        let known = Known {
            subject: &known_subject,
            atom: &no_atom,
        };
        validate::subject(&merged, cur.id, &known, now)
            .map_err(|e| super::atoms::validation("subject", e))?
    };
    next.created_at = cur.created_at;
    next.updated_at = now;
    next.aliases = cur.aliases.clone();
    let row = subject_to_row(&next, version);
    let v = store::update_subject(tx, &row, version)
        .await
        .map_err(|e| match e {
            crate::store::Error::Duplicate { name, .. } => Error::invariant(format!(
                "orchestrator project {name} is already linked to another Project subject"
            )),
            other => other.into(),
        })?;
    if next.name != cur.name {
        store::demote_name(tx, id).await?;
        store::add_name(
            tx,
            &NameRow {
                subject_id: id.to_string(),
                name: next.name.clone(),
                norm: normalise_name(&next.name),
                is_alias: false,
            },
        )
        .await?;
    }
    for raw in aliases_sent {
        let names = match raw {
            Raw::Text(t) => vec![t],
            Raw::List(l) => l
                .into_iter()
                .filter_map(|r| match r {
                    Raw::Text(t) => Some(t),
                    _ => None,
                })
                .collect(),
            _ => {
                return Err(Error::validation(
                    format!("{}.aliases", Field::Subject),
                    "must be a list of names",
                ))
            }
        };
        add_aliases(tx, id, &names).await?;
    }
    let (s, _) = load_subject(tx, id).await?;
    Ok((s, v))
}

async fn add_aliases(c: &mut Conn, id: &str, names: &[String]) -> Result<Vec<String>> {
    let mut added = Vec::new();
    for (i, n) in names.iter().enumerate() {
        let n = n.trim();
        if n.is_empty() || n.len() > validate::MAX_NAME {
            return Err(Error::validation(
                format!("aliases[{i}]"),
                "must be a name of 1 to 255 bytes",
            ));
        }
        if normalise_name(n).is_empty() {
            return Err(Error::validation(
                format!("aliases[{i}]"),
                "has no letters or digits",
            ));
        }
        store::add_name(
            c,
            &NameRow {
                subject_id: id.to_string(),
                name: n.to_string(),
                norm: normalise_name(n),
                is_alias: true,
            },
        )
        .await?;
        added.push(n.to_string());
    }
    Ok(added)
}

/// What `alias` answered: the subject, and other live subjects of its kind that one
/// of its names now folds onto (the curator merges them; `merge` does it now).
pub struct Aliased {
    pub subject: Subject,
    pub version: i64,
    pub same_name_as: Vec<Subject>,
}

/// Adds names to a subject.
pub async fn alias(
    app: &App,
    id: &str,
    version: i64,
    names: &[String],
    now: OffsetDateTime,
) -> Result<Aliased> {
    if names.len() > validate::MAX_TAGS {
        return Err(Error::validation(
            Field::Aliases,
            format!(
                "{} names given, at most {} allowed",
                names.len(),
                validate::MAX_TAGS
            ),
        ));
    }
    let mut tx = app.store.write().await?;
    let cur = load_subject_at(&mut tx, id, version).await?;
    if let Some(m) = cur.merged_into {
        return Err(Error::invalid(format!(
            "subject {id} was merged into {m}: add names to {m}"
        )));
    }
    add_aliases(&mut tx, id, names).await?;
    let v = crate::store::lock::bump(
        &mut tx,
        crate::store::lock::MEMORY_SUBJECTS,
        id,
        version,
        &stamp(now),
    )
    .await?;
    let (s, _) = load_subject(&mut tx, id).await?;
    let mut same = Vec::new();
    for n in std::iter::once(&s.name).chain(s.aliases.iter()) {
        for r in store::subjects_named(&mut tx, s.kind.as_wire(), &normalise_name(n)).await? {
            if r.id != id
                && r.merged_into.is_none()
                && !same.iter().any(|x: &Subject| x.id.to_string() == r.id)
            {
                let (o, _) = load_subject(&mut tx, &r.id).await?;
                same.push(o);
            }
        }
    }
    tx.commit().await?;
    Ok(Aliased {
        subject: s,
        version: v,
        same_name_as: same,
    })
}

/// What a merge did.
pub struct Merged {
    pub into: Subject,
    pub version: i64,
    pub actions: Vec<Action>,
}

/// Merges subject `id` into `into` (same kind): `id`'s names become `into`'s aliases,
/// every atom about or scoped to it moves, its edges move, the subject fields naming
/// it point at `into`; keys the move joined are settled at once by the collision
/// rule and their stored claim keys rewritten. `id` keeps its row, merged.
pub async fn merge(
    app: &App,
    id: &str,
    version: i64,
    into: &str,
    now: OffsetDateTime,
) -> Result<Merged> {
    let mut tx = app.store.write().await?;
    let from = load_subject_at(&mut tx, id, version).await?;
    let (target, _) = load_subject(&mut tx, into).await?;
    let all_rows = store::all_subjects(&mut tx).await?;
    let names = store::names(&mut tx, None).await?;
    let subjects: Vec<Subject> = all_rows
        .iter()
        .map(|r| subject_from_row(r, &names))
        .collect::<Result<_>>()?;
    let ids = vec![from.id.to_string(), target.id.to_string()];
    let mut filter = store::AtomFilter {
        about: vec![from.id.to_string()],
        ..Default::default()
    };
    let mut atoms: Vec<crate::domain::memory::model::MemoryAtom> =
        store::candidates(&mut tx, &filter, i64::MAX)
            .await?
            .iter()
            .map(super::atom_from_row)
            .collect::<Result<_>>()?;
    filter.about.clear();
    filter.contexts = vec![from.id.to_string()];
    for r in store::candidates(&mut tx, &filter, i64::MAX).await? {
        let a = super::atom_from_row(&r)?;
        if !atoms.iter().any(|x| x.id == a.id) {
            atoms.push(a);
        }
    }
    let edges: Vec<MemoryEdge> = store::edges_touching(&mut tx, &ids, &[])
        .await?
        .iter()
        .map(edge_from_row)
        .collect::<Result<_>>()?;
    let plan = merge_plan_for(from.id, target.id, &subjects, &atoms, &edges)
        .map_err(|e| Error::invalid(e.to_string()))?;
    let mut w = Writer::new(&mut tx, now);
    w.know(atoms.clone());
    w.actions(&plan).await?;
    let mut actions = plan;
    // Settle the keys the move joined, then bring stored keys in line.
    let moved: Vec<AtomId> = atoms.iter().map(|a| a.id).collect();
    let settled = settle_groups_of(&mut w, &moved, now).await?;
    actions.extend(settled);
    let keys = assign_keys(&mut w, &moved).await?;
    actions.extend(keys);
    let sched = w.schedule(&actions).await?;
    actions.extend(sched);
    let (into_s, into_v) = load_subject(&mut tx, into).await?;
    tx.commit().await?;
    Ok(Merged {
        into: into_s,
        version: into_v,
        actions,
    })
}

/// Settles the groups the given atoms (as the writer knows them now) compete in.
pub(crate) async fn settle_groups_of(
    w: &mut Writer<'_>,
    ids: &[AtomId],
    now: OffsetDateTime,
) -> Result<Vec<Action>> {
    let mut groups: Vec<String> = Vec::new();
    for id in ids {
        if let Some(a) = w.atoms.get(id) {
            if a.status.is_retired() {
                continue;
            }
            let g = super::group_key(a);
            if !groups.contains(&g) {
                groups.push(g);
            }
        }
    }
    let mut out = Vec::new();
    for g in groups {
        out.extend(super::atoms::settle_group(w, &g, now).await?);
    }
    Ok(out)
}

/// Rewrites the stored claim keys of atoms whose fields moved.
async fn assign_keys(w: &mut Writer<'_>, ids: &[AtomId]) -> Result<Vec<Action>> {
    let mut out = Vec::new();
    for id in ids {
        let Some(a) = w.atoms.get(id) else { continue };
        let mut k = String::new();
        let keyed = crate::domain::memory::claim::write_key(a, &mut k);
        let to = keyed.then_some(k);
        if to != a.claim_key {
            out.push(Action {
                kind: ActionKind::AssignKey,
                changes: vec![Change::SetClaimKey {
                    atom: *id,
                    from: a.claim_key.clone(),
                    to,
                }],
                reason: "its subject was merged: the key follows".into(),
            });
        }
    }
    w.actions(&out).await?;
    Ok(out)
}

/// Adds (`on`) or removes a USES edge from `user` to `target`.
pub async fn uses(
    app: &App,
    user: &str,
    target: &str,
    on: bool,
    now: OffsetDateTime,
) -> Result<bool> {
    let mut tx = app.store.write().await?;
    let u = survivor(&mut tx, user)
        .await?
        .ok_or_else(|| Error::not_found("subject", user))?;
    let t = survivor(&mut tx, target)
        .await?
        .ok_or_else(|| Error::not_found("subject", target))?;
    if u.id == t.id {
        return Err(Error::invariant("a subject does not use itself"));
    }
    let e = MemoryEdge::new(
        NodeRef::Subject(SubjectId::parse(&u.id).map_err(|e| Error::Internal(e.to_string()))?),
        EdgeKind::Uses,
        NodeRef::Subject(SubjectId::parse(&t.id).map_err(|e| Error::Internal(e.to_string()))?),
    );
    let row = super::edge_to_row(&e);
    let changed = if on {
        store::insert_edge(&mut tx, &row, &stamp(now)).await?
    } else {
        store::delete_edge(&mut tx, &row.from_id, &row.kind, &row.to_id).await?
    };
    tx.commit().await?;
    Ok(changed)
}

/// A subject as `get` answers it.
pub struct SubjectView {
    pub subject: Subject,
    pub version: i64,
    /// Where a merged subject's id leads now.
    pub survivor: Option<Subject>,
    pub uses: Vec<Subject>,
    pub used_by: Vec<Subject>,
    /// Usage facts derived from USES edges, never stored (docs/memory.md, usage facts).
    pub usage: Option<UsageFact>,
    /// Atoms about it or scoped to it, by status.
    pub atom_counts: Vec<(String, i64)>,
}

/// Everything about one subject: its fields and names, what it uses and what uses
/// it, its derived usage fact and how many atoms concern it.
pub async fn get(app: &App, id: &str) -> Result<SubjectView> {
    let mut c = app.store.snapshot().await?;
    let (s, version) = load_subject(&mut c, id).await?;
    let survivor_s = match s.merged_into {
        Some(_) => match survivor(&mut c, id).await? {
            Some(r) => Some(load_subject(&mut c, &r.id).await?.0),
            None => None,
        },
        None => None,
    };
    let edges = store::uses_edges(&mut c).await?;
    let sid = s.id.to_string();
    let out: Vec<String> = edges
        .iter()
        .filter(|e| e.from_id == sid)
        .map(|e| e.to_id.clone())
        .collect();
    let inc: Vec<String> = edges
        .iter()
        .filter(|e| e.to_id == sid)
        .map(|e| e.from_id.clone())
        .collect();
    let uses = load_subjects(&mut c, &out).await?;
    let used_by = load_subjects(&mut c, &inc).await?;
    let usage = usage_of(&mut c, &[s.id]).await?.into_iter().next();
    let atom_counts = store::counts_about(&mut c, &sid).await?;
    c.commit().await?;
    Ok(SubjectView {
        subject: s,
        version,
        survivor: survivor_s,
        uses,
        used_by,
        usage,
        atom_counts,
    })
}

/// The usage facts of some subjects (those used by at least one project): read from
/// the USES edges into them and the subjects merged into them, and their users.
pub(crate) async fn usage_of(c: &mut Conn, ids: &[SubjectId]) -> Result<Vec<UsageFact>> {
    if ids.is_empty() {
        return Ok(vec![]);
    }
    let mut targets: Vec<String> = Vec::new();
    for id in ids {
        let s = id.to_string();
        targets.extend(super::atoms::merged_into(c, &s).await?);
        targets.push(s);
    }
    let rows = store::edges_touching(c, &targets, &["USES"]).await?;
    let mut want: Vec<String> = targets.clone();
    for e in &rows {
        want.push(e.from_id.clone());
        want.push(e.to_id.clone());
    }
    want.sort();
    want.dedup();
    let mut subject_rows = store::subjects_by_ids(c, &want).await?;
    // Users merged into others count as their survivors.
    let survivors: Vec<String> = subject_rows
        .iter()
        .filter_map(|r| r.merged_into.clone())
        .collect();
    for sv in survivors {
        if let Some(r) = survivor(c, &sv).await? {
            if !subject_rows.iter().any(|x| x.id == r.id) {
                subject_rows.push(r);
            }
        }
    }
    let subjects: Vec<Subject> = subject_rows
        .iter()
        .map(|r| subject_from_row(r, &[]))
        .collect::<Result<_>>()?;
    let edges: Vec<MemoryEdge> = rows.iter().map(edge_from_row).collect::<Result<_>>()?;
    Ok(usage_facts(&subjects, &edges, 1)
        .into_iter()
        .filter(|f| ids.contains(&f.subject))
        .collect())
}

/// The subjects and USES edges usage facts are derived from.
async fn usage_world(c: &mut Conn) -> Result<(Vec<Subject>, Vec<MemoryEdge>)> {
    let rows = store::all_subjects(c).await?;
    let subjects: Vec<Subject> = rows
        .iter()
        .map(|r| subject_from_row(r, &[]))
        .collect::<Result<_>>()?;
    let edges: Vec<MemoryEdge> = store::uses_edges(c)
        .await?
        .iter()
        .map(edge_from_row)
        .collect::<Result<_>>()?;
    Ok((subjects, edges))
}

/// A page of subjects with their usage facts.
pub struct SubjectPage {
    pub items: Vec<(Subject, i64, Option<UsageFact>)>,
    pub total: i64,
}

/// Live subjects, by kind and name prefix (in identity's normal form), or those used
/// by at least `min_projects` projects (a derived fact), paged.
pub async fn list(
    app: &App,
    kind: Option<SubjectKind>,
    query: Option<&str>,
    min_projects: Option<usize>,
    limit: i64,
    offset: i64,
) -> Result<SubjectPage> {
    let mut c = app.store.snapshot().await?;
    let norm = query.map(normalise_name).filter(|n| !n.is_empty());
    let page = match min_projects {
        Some(n) => {
            let (subjects, edges) = usage_world(&mut c).await?;
            let facts = usage_facts(&subjects, &edges, n);
            let mut hits: Vec<(SubjectId, UsageFact)> = Vec::new();
            for f in facts {
                let Some(s) = subjects.iter().find(|s| s.id == f.subject) else {
                    continue;
                };
                if kind.is_some_and(|k| k != s.kind) {
                    continue;
                }
                hits.push((s.id, f));
            }
            hits.sort_by(|a, b| {
                b.1.projects
                    .len()
                    .cmp(&a.1.projects.len())
                    .then(a.0.cmp(&b.0))
            });
            let total = hits.len() as i64;
            let ids: Vec<String> = hits
                .iter()
                .skip(offset as usize)
                .take(limit as usize)
                .map(|(id, _)| id.to_string())
                .collect();
            let loaded = load_subjects(&mut c, &ids).await?;
            let mut items = Vec::new();
            for id in &ids {
                if let Some(s) = loaded.iter().find(|s| s.id.to_string() == *id) {
                    let v = store::subject(&mut c, id).await?.map_or(1, |r| r.version);
                    let fact = hits
                        .iter()
                        .find(|(h, _)| h.to_string() == *id)
                        .map(|(_, f)| f.clone());
                    items.push((s.clone(), v, fact));
                }
            }
            SubjectPage { items, total }
        }
        None => {
            let (rows, total) = store::list_subjects(
                &mut c,
                kind.map(|k| k.as_wire()),
                norm.as_deref(),
                limit,
                offset,
            )
            .await?;
            let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
            let names = store::names(&mut c, Some(&ids)).await?;
            let sids: Vec<SubjectId> = rows
                .iter()
                .filter_map(|r| SubjectId::parse(&r.id).ok())
                .collect();
            let facts = usage_of(&mut c, &sids).await?;
            let mut items = Vec::new();
            for r in &rows {
                let s = subject_from_row(r, &names)?;
                let f = facts.iter().find(|f| f.subject == s.id).cloned();
                items.push((s, r.version, f));
            }
            SubjectPage { items, total }
        }
    };
    c.commit().await?;
    Ok(page)
}

/// The id a caller's subject reference names: an existing id as it is (a merged
/// subject included), or the subject `Kind:name` folds onto, followed to its
/// survivor. NOT_FOUND when there is none.
pub async fn find(app: &App, raw: &str) -> Result<String> {
    let r = SubjectRef::parse(raw).ok_or_else(|| {
        Error::validation(
            Field::Id,
            format!("'{raw}' is neither a subject id nor Kind:name (Lib:zod)"),
        )
    })?;
    let mut c = app.store.read().await?;
    match r {
        SubjectRef::Id(id) => match store::subject(&mut c, &id).await? {
            Some(row) => Ok(row.id),
            None => Err(Error::not_found("subject", id)),
        },
        named => Ok(resolve_ref(
            &mut c,
            &named,
            false,
            OffsetDateTime::now_utc(),
            &mut Vec::new(),
        )
        .await?
        .id),
    }
}

/// Kinds and names of subjects, for answers that show them.
pub async fn names(
    app: &App,
    ids: &[SubjectId],
) -> Result<HashMap<SubjectId, (SubjectKind, String)>> {
    let mut c = app.store.read().await?;
    names_of(&mut c, ids).await
}

/// Names of subjects by id (for answers that show an atom's subject).
pub(crate) async fn names_of(
    c: &mut Conn,
    ids: &[SubjectId],
) -> Result<HashMap<SubjectId, (SubjectKind, String)>> {
    let mut want: Vec<String> = ids.iter().map(|s| s.to_string()).collect();
    want.sort();
    want.dedup();
    let rows = store::subjects_by_ids(c, &want).await?;
    let mut out = HashMap::new();
    for r in rows {
        if let (Ok(id), Ok(kind)) = (SubjectId::parse(&r.id), SubjectKind::parse(&r.kind)) {
            out.insert(id, (kind, r.name));
        }
    }
    Ok(out)
}
