//! The curator, deterministic and without a model: one pass of the core's
//! `curator::plan` over the whole memory (merge subjects one in identity, deprecate
//! closed Decisions, settle every key, bring stored keys in line, schedule reviews,
//! age and decay). A dry run answers the plan; a run makes the same plan under the
//! write lock and writes exactly it, so planning again at the same `now` finds
//! nothing. A run may name the dry run's fingerprint: a plan that changed since is
//! refused instead of written blind.

use std::collections::BTreeMap;
use std::time::Instant;

use time::OffsetDateTime;

use crate::domain::memory::change::{Action, ActionKind};
use crate::domain::memory::curator::{plan, summary, Snapshot};
use crate::domain::memory::model::{MemoryAtom, RefType, Reference, ReferenceId};
use crate::error::{Error, Result};
use crate::service::App;
use crate::store::memory as store;
use crate::store::Conn;

use super::{atom_from_row, edge_from_row, stamp, subject_from_row, Writer};

/// A curator pass: its plan, and whether it was written.
pub struct Pass {
    pub actions: Vec<Action>,
    pub summary: BTreeMap<ActionKind, usize>,
    /// FNV-1a of the plan's text: equal plans, equal fingerprints.
    pub fingerprint: String,
    pub written: bool,
    /// Atoms, subjects and edges looked at.
    pub atoms: usize,
    pub subjects: usize,
    pub edges: usize,
    /// Milliseconds spent loading, planning and writing.
    pub timings: (u128, u128, u128),
}

/// The whole memory as the curator sees it.
async fn load(c: &mut Conn) -> Result<Snapshot> {
    let names = store::names(c, None).await?;
    let subjects = store::all_subjects(c)
        .await?
        .iter()
        .map(|r| subject_from_row(r, &names))
        .collect::<Result<Vec<_>>>()?;
    let mut atoms: Vec<MemoryAtom> = Vec::new();
    let mut bad: Option<Error> = None;
    store::each_atom(c, |r| match atom_from_row(&r) {
        Ok(a) => atoms.push(a),
        Err(e) => {
            bad.get_or_insert(e);
        }
    })
    .await?;
    if let Some(e) = bad {
        return Err(e);
    }
    let epoch = OffsetDateTime::UNIX_EPOCH;
    let mut references = Vec::new();
    for (id, t) in store::all_reference_types(c).await? {
        let (Ok(id), Ok(t)) = (ReferenceId::parse(&id), RefType::parse(&t)) else {
            continue;
        };
        // The curator weighs a reference by its type only.
        references.push(Reference {
            id,
            ref_type: t,
            title: None,
            uri: None,
            authors: vec![],
            published_at: None,
            retrieved_at: epoch,
            snippet: None,
            hash: None,
        });
    }
    let mut edges = Vec::new();
    store::each_edge(c, |r| {
        if let Ok(e) = edge_from_row(&r) {
            edges.push(e);
        }
    })
    .await?;
    Ok(Snapshot {
        subjects,
        atoms,
        references,
        edges,
    })
}

fn fingerprint(actions: &[Action]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for a in actions {
        for b in a.to_string().bytes().chain(std::iter::once(b'\n')) {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{h:016x}")
}

/// One curator pass at `now`: the plan (`run` false), or the plan written (`run`
/// true, refused with CONFLICT when `expect` names another plan's fingerprint).
pub async fn pass(app: &App, now: OffsetDateTime, run: bool, expect: Option<&str>) -> Result<Pass> {
    let t0 = Instant::now();
    let mut tx = if run {
        app.store.write().await?
    } else {
        app.store.snapshot().await?
    };
    let snap = load(&mut tx).await?;
    let t1 = Instant::now();
    let actions = plan(&snap, now);
    let fp = fingerprint(&actions);
    let t2 = Instant::now();
    let (atoms, subjects, edges) = (snap.atoms.len(), snap.subjects.len(), snap.edges.len());
    if run {
        if let Some(e) = expect {
            if e != fp {
                return Err(Error::InvalidOperation {
                    message: format!(
                        "the plan changed since the dry run (fingerprint {fp}, you sent {e}): the memory was written meanwhile; \
                         dry-run again, read the plan, then run with its fingerprint"
                    ),
                    details: None,
                });
            }
        }
        let mut w = Writer::new(&mut tx, now);
        w.atoms = snap.atoms.into_iter().map(|a| (a.id, a)).collect();
        w.actions(&actions).await?;
        tx.commit().await?;
    } else {
        tx.commit().await?;
    }
    let t3 = Instant::now();
    Ok(Pass {
        summary: summary(&actions),
        fingerprint: fp,
        written: run,
        atoms,
        subjects,
        edges,
        actions,
        timings: (
            (t1 - t0).as_millis(),
            (t2 - t1).as_millis(),
            (t3 - t2).as_millis(),
        ),
    })
}

/// A page of the review queue.
pub struct Queue {
    pub items: Vec<(MemoryAtom, i64, Option<String>)>,
    pub total: i64,
}

/// The atoms that want a person's or an agent's attention: due for review,
/// contested, waiting for evidence, or ACTIVE with a review within `within_days`.
pub async fn queue(
    app: &App,
    now: OffsetDateTime,
    within_days: i64,
    limit: i64,
    offset: i64,
) -> Result<Queue> {
    let due = now + time::Duration::days(within_days);
    let mut c = app.store.read().await?;
    let (rows, total) = store::review_queue(&mut c, &stamp(due), limit, offset).await?;
    let mut items = Vec::new();
    for r in &rows {
        items.push((atom_from_row(r)?, r.version, r.status_reason.clone()));
    }
    Ok(Queue { items, total })
}
