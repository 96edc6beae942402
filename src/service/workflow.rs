//! Workflow: moving features and tasks along their pipelines, blocking, and the
//! roll-ups that follow (a feature activated by its first task, closed by its last).

use crate::domain::container::Dependency as Edge;
use crate::domain::field::{Field, Tool};
use crate::domain::{id, now, Item, ItemKind, Pipeline, Pipelines, Priority, Status};
use crate::error::{Details, Error, Result};
use crate::service::App;
use crate::store::dependency;
use crate::store::{item, lock, pipeline, Conn};

/// What a transition changed, for the answer.
#[derive(Debug)]
pub struct Transition {
    pub item: Item,
    pub from: Status,
    /// Items this one blocked that have no open blocker left.
    pub unblocked: Vec<Item>,
    /// Items this one blocks that stay blocked (it ended without CLOSED).
    pub still_blocked: Vec<Item>,
    /// The parent feature, when the transition moved it too.
    pub feature: Option<(Item, Status)>,
    /// Tasks still open under a terminated feature.
    pub open_tasks: i64,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Move {
    Advance,
    Revert,
}

pub async fn advance(app: &App, kind: ItemKind, id: &str, version: i64) -> Result<Transition> {
    step(app, kind, id, version, Move::Advance).await
}

pub async fn revert(app: &App, kind: ItemKind, id: &str, version: i64) -> Result<Transition> {
    step(app, kind, id, version, Move::Revert).await
}

async fn step(app: &App, kind: ItemKind, id: &str, version: i64, mv: Move) -> Result<Transition> {
    let mut tx = app.store.write().await?;
    let cur = item::require(&mut tx, kind, id).await?;
    if cur.version != version {
        return Err(Error::Conflict {
            entity: kind.as_str(),
            id: id.to_string(),
            name: Some(cur.name.clone()),
            current: cur.version,
            sent: version,
        });
    }
    let pipelines = pipeline::load(&mut tx).await?;
    let p = pipelines.get(kind);
    let target = match mv {
        Move::Advance => next_state(&mut tx, p, &cur).await?,
        Move::Revert => previous_state(&mut tx, p, &cur).await?,
    };
    let ts = now();
    lock::bump(&mut tx, item::table(kind), id, version, &ts).await?;
    item::set_status(&mut tx, kind, id, target, None).await?;
    let mut t = after_move(&mut tx, kind, id, cur.status, &ts).await?;
    t.from = cur.status;
    tx.commit().await?;
    Ok(t)
}

/// The state `advance` would move to, or why it is refused.
async fn next_state(c: &mut Conn, p: &Pipeline, it: &Item) -> Result<Status> {
    refuse_terminal(it, "advance")?;
    refuse_blocked(c, it, "advance").await?;
    let Some(next) = p.next(it.status) else {
        return Err(stranded(it, p));
    };
    if it.kind == ItemKind::Feature && next == Status::Closed {
        let open = item::task_statuses(c, &it.id)
            .await?
            .into_iter()
            .filter(|s| !s.is_terminal())
            .count();
        if open > 0 {
            return Err(Error::InvalidOperation {
                message: format!(
                    "feature {} has {open} task(s) not yet CLOSED or WILL_NOT_IMPLEMENT: finish or terminate them first",
                    it.id
                ),
                details: Some(Details::OpenTasks(open)),
            });
        }
    }
    Ok(next)
}

async fn previous_state(c: &mut Conn, p: &Pipeline, it: &Item) -> Result<Status> {
    refuse_terminal(it, "revert")?;
    refuse_blocked(c, it, "revert").await?;
    if !p.contains(it.status) {
        return Err(stranded(it, p));
    }
    p.previous(it.status).ok_or_else(|| {
        Error::invalid(format!(
            "{} {} is at NEW: there is no earlier state",
            it.kind.as_str(),
            it.id
        ))
    })
}

fn refuse_terminal(it: &Item, verb: &str) -> Result<()> {
    if it.status.is_terminal() {
        return Err(Error::InvalidOperation {
            message: format!(
                "{} {} is {} (terminal): it cannot {verb}",
                it.kind.as_str(),
                it.id,
                it.status.as_str()
            ),
            details: Some(Details::Status(it.status)),
        });
    }
    Ok(())
}

async fn refuse_blocked(c: &mut Conn, it: &Item, verb: &str) -> Result<()> {
    let blockers = dependency::open_blockers(c, it.kind, &it.id).await?;
    if blockers.is_empty() {
        return Ok(());
    }
    Err(Error::Blocked {
        message: format!(
            "{} \"{}\" {} is blocked by {}: close or unblock them before you {verb}",
            it.kind.as_str(),
            crate::domain::container::clip(&it.name, 60),
            it.id,
            describe_blockers(&blockers)
        ),
        details: Some(Details::Blockers(blockers)),
    })
}

fn stranded(it: &Item, p: &Pipeline) -> Error {
    Error::invalid(format!(
        "{} {} is in {}, which the {} pipeline ({}) no longer has: run sync with override=true",
        it.kind.as_str(),
        it.id,
        it.status.as_str(),
        it.kind.as_str(),
        p.names().join(" → ")
    ))
}

pub fn describe_blockers(b: &[Edge]) -> String {
    b.iter()
        .map(|e| match &e.from_id {
            Some(f) => format!(
                "{}{f} ({})",
                crate::domain::text::quoted(&e.other_name),
                e.other_status.as_deref().unwrap_or("?")
            ),
            None => format!("NO_OP ({})", e.reason.as_deref().unwrap_or("no reason")),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// Applies the consequences of `id` having just changed status, and reads it back.
async fn after_move(
    c: &mut Conn,
    kind: ItemKind,
    id: &str,
    from: Status,
    ts: &str,
) -> Result<Transition> {
    let it = item::require(c, kind, id).await?;
    let mut t = Transition {
        item: it,
        from,
        unblocked: vec![],
        still_blocked: vec![],
        feature: None,
        open_tasks: 0,
    };
    let status = t.item.status;
    if status.is_terminal() {
        // Dependents: released when this closed, still blocked when it was dropped.
        for e in dependency::outgoing(c, kind, id)
            .await?
            .into_iter()
            .filter(|e| e.kind == "BLOCKS")
        {
            let dep = item::require(c, kind, &e.to_id).await?;
            if dep.status.is_terminal() {
                continue;
            }
            let open = dependency::open_blockers(c, kind, &dep.id).await?;
            if open.is_empty() {
                t.unblocked.push(dep);
            } else {
                t.still_blocked.push(dep);
            }
        }
    }
    if kind == ItemKind::Task {
        if let Some(fid) = t.item.feature_id.clone() {
            t.feature = roll_up(c, &fid, status, ts).await?;
        }
    } else if status == Status::WillNotImplement {
        t.open_tasks = item::task_statuses(c, id)
            .await?
            .into_iter()
            .filter(|s| !s.is_terminal())
            .count() as i64;
    }
    Ok(t)
}

/// Moves a feature after one of its tasks moved: to ACTIVE when a task starts, to
/// CLOSED (or WILL_NOT_IMPLEMENT) when every task is terminal.
async fn roll_up(
    c: &mut Conn,
    feature_id: &str,
    task_status: Status,
    ts: &str,
) -> Result<Option<(Item, Status)>> {
    let f = item::require(c, ItemKind::Feature, feature_id).await?;
    if f.status.is_terminal() {
        return Ok(None);
    }
    let target = if task_status.is_terminal() {
        let all = item::task_statuses(c, feature_id).await?;
        if all.iter().all(|s| s.is_terminal()) {
            Some(if all.contains(&Status::Closed) {
                Status::Closed
            } else {
                Status::WillNotImplement
            })
        } else {
            None
        }
    } else if task_status != Status::New && f.status == Status::New {
        Some(Status::Active)
    } else {
        None
    };
    let Some(target) = target else {
        return Ok(None);
    };
    lock::touch(c, lock::FEATURES, feature_id, ts).await?;
    let reason =
        (target == Status::WillNotImplement).then_some("every task of the feature was terminated");
    item::set_status(c, ItemKind::Feature, feature_id, target, reason).await?;
    let moved = item::require(c, ItemKind::Feature, feature_id).await?;
    Ok(Some((moved, f.status)))
}

pub async fn terminate(
    app: &App,
    kind: ItemKind,
    id: &str,
    version: i64,
    reason: Option<&str>,
) -> Result<Transition> {
    let mut tx = app.store.write().await?;
    let cur = item::require(&mut tx, kind, id).await?;
    if cur.version != version {
        return Err(Error::Conflict {
            entity: kind.as_str(),
            id: id.to_string(),
            name: Some(cur.name.clone()),
            current: cur.version,
            sent: version,
        });
    }
    if cur.status.is_terminal() {
        return Err(Error::invalid(format!(
            "{} {id} is already {}",
            kind.as_str(),
            cur.status.as_str()
        )));
    }
    let ts = now();
    lock::bump(&mut tx, item::table(kind), id, version, &ts).await?;
    item::set_status(&mut tx, kind, id, Status::WillNotImplement, reason).await?;
    let t = after_move(&mut tx, kind, id, cur.status, &ts).await?;
    tx.commit().await?;
    Ok(t)
}

/// A blocker named by `block` / `unblock`: an item id, or the NO_OP blocker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Blocker {
    Item(String),
    NoOp,
}

/// Validates that `from` may BLOCK `to` (same kind, exists, not itself, not closed,
/// no cycle) and inserts the edge; false if it already existed.
pub async fn add_block(
    c: &mut Conn,
    kind: ItemKind,
    from: &str,
    to: &str,
    reason: Option<&str>,
    ts: &str,
) -> Result<bool> {
    if from == to {
        return Err(Error::invariant(format!(
            "{} {to} cannot block itself",
            kind.as_str()
        )));
    }
    let b = item::get(c, kind, from)
        .await?
        .ok_or_else(|| Error::not_found(kind.as_str(), from))?;
    if b.status == Status::Closed {
        return Err(Error::invalid(format!(
            "{} {from} is already CLOSED, so it cannot block anything",
            kind.as_str()
        )));
    }
    if dependency::reaches(c, to, from).await? {
        return Err(Error::invariant(format!(
            "{from} blocking {to} would close a cycle: {to} already blocks {from} (directly or through others)"
        )));
    }
    let eid = id::new_id();
    Ok(dependency::insert(
        c,
        &dependency::NewEdge {
            id: &eid,
            kind,
            from_id: Some(from),
            to_id: to,
            edge_type: "BLOCKS",
            reason,
            now: ts,
        },
    )
    .await?)
}

pub async fn block(
    app: &App,
    kind: ItemKind,
    id: &str,
    version: i64,
    by: &[Blocker],
    reason: Option<&str>,
) -> Result<(Item, Vec<Edge>)> {
    let mut tx = app.store.write().await?;
    let cur = item::require(&mut tx, kind, id).await?;
    if cur.status.is_terminal() {
        return Err(Error::invalid(format!(
            "{} {id} is {}: a finished item cannot be blocked",
            kind.as_str(),
            cur.status.as_str()
        )));
    }
    let ts = now();
    lock::bump(&mut tx, item::table(kind), id, version, &ts).await?;
    for b in by {
        match b {
            Blocker::Item(from) => {
                add_block(&mut tx, kind, from, id, reason, &ts).await?;
            }
            Blocker::NoOp => {
                let reason = reason.ok_or_else(|| {
                    Error::validation(
                        Field::BlockedReason,
                        format!(
                            "required with {} NO_OP: say what outside Cairn blocks this item",
                            Field::BlockedBy
                        ),
                    )
                })?;
                let eid = id::new_id();
                let fresh = dependency::insert(
                    &mut tx,
                    &dependency::NewEdge {
                        id: &eid,
                        kind,
                        from_id: None,
                        to_id: id,
                        edge_type: "BLOCKS",
                        reason: Some(reason),
                        now: &ts,
                    },
                )
                .await?;
                if !fresh {
                    dependency::set_noop_reason(&mut tx, id, reason).await?;
                }
            }
        }
    }
    let it = item::require(&mut tx, kind, id).await?;
    let open = dependency::open_blockers(&mut tx, kind, id).await?;
    tx.commit().await?;
    Ok((it, open))
}

pub async fn unblock(
    app: &App,
    kind: ItemKind,
    id: &str,
    version: i64,
    by: &[Blocker],
) -> Result<(Item, Vec<Edge>)> {
    let mut tx = app.store.write().await?;
    item::require(&mut tx, kind, id).await?;
    let ts = now();
    lock::bump(&mut tx, item::table(kind), id, version, &ts).await?;
    for b in by {
        let from = match b {
            Blocker::Item(f) => Some(f.as_str()),
            Blocker::NoOp => None,
        };
        if !dependency::delete_between(&mut tx, from, id, "BLOCKS").await? {
            return Err(Error::InvalidOperation {
                message: format!(
                    "{} does not block {} {id}: see {} for its blockers",
                    from.unwrap_or("NO_OP"),
                    kind.as_str(),
                    Tool::QueryDependencies
                ),
                details: None,
            });
        }
    }
    let it = item::require(&mut tx, kind, id).await?;
    let open = dependency::open_blockers(&mut tx, kind, id).await?;
    tx.commit().await?;
    Ok((it, open))
}

/// Where an item stands in its pipeline and what it may do next.
pub struct State {
    pub item: Item,
    pub pipeline: Vec<&'static str>,
    pub next: Option<Status>,
    pub previous: Option<Status>,
    pub blockers: Vec<Edge>,
    pub advance_refused: Option<Error>,
    pub revert_refused: Option<Error>,
}

pub async fn state(app: &App, kind: ItemKind, id: &str) -> Result<State> {
    let mut c = app.store.read().await?;
    state_in(&mut c, kind, id).await
}

/// [`state`] on `c`, for a read that composes it with others (the page's task view):
/// the refusals are those `advance` and `revert` would answer, by the same rules.
pub async fn state_in(c: &mut Conn, kind: ItemKind, id: &str) -> Result<State> {
    let it = item::require(c, kind, id).await?;
    let pipelines = pipeline::load(c).await?;
    let p = pipelines.get(kind);
    let blockers = dependency::open_blockers(c, kind, id).await?;
    let advance_refused = next_state(c, p, &it).await.err();
    let revert_refused = previous_state(c, p, &it).await.err();
    Ok(State {
        next: if it.status.is_terminal() {
            None
        } else {
            p.next(it.status)
        },
        previous: if it.status.is_terminal() {
            None
        } else {
            p.previous(it.status)
        },
        pipeline: p.names(),
        item: it,
        blockers,
        advance_refused,
        revert_refused,
    })
}

pub struct NextFilter {
    pub project_id: Option<String>,
    pub feature_id: Option<String>,
    pub priority: Option<Priority>,
}

/// The next task to start: NEW, unblocked, by priority, complexity, then age.
pub async fn next_task(app: &App, f: &NextFilter) -> Result<Option<Item>> {
    let mut c = app.store.read().await?;
    let filter = item::Filter {
        project_id: f.project_id.as_deref(),
        feature_id: f.feature_id.as_deref(),
        statuses: &[Status::New],
        priority: f.priority,
        blocked: Some(false),
        ..Default::default()
    };
    Ok(item::ordered(&mut c, ItemKind::Task, &filter, 1)
        .await?
        .pop())
}

/// The next feature to work on: ACTIVE before NEW, unblocked, by priority then age.
pub async fn next_feature(app: &App, f: &NextFilter) -> Result<Option<Item>> {
    let mut c = app.store.read().await?;
    for s in [Status::Active, Status::New] {
        let filter = item::Filter {
            project_id: f.project_id.as_deref(),
            statuses: &[s],
            priority: f.priority,
            blocked: Some(false),
            ..Default::default()
        };
        if let Some(it) = item::ordered(&mut c, ItemKind::Feature, &filter, 1)
            .await?
            .pop()
        {
            return Ok(Some(it));
        }
    }
    Ok(None)
}

/// Open items that are blocked, each with its open blockers, in work order.
pub async fn blocked(app: &App, kind: ItemKind, f: &NextFilter) -> Result<Vec<(Item, Vec<Edge>)>> {
    let mut c = app.store.read().await?;
    let open: Vec<Status> = Status::catalog(kind)
        .iter()
        .copied()
        .filter(|s| !s.is_terminal())
        .collect();
    let filter = item::Filter {
        project_id: f.project_id.as_deref(),
        feature_id: f.feature_id.as_deref(),
        statuses: &open,
        blocked: Some(true),
        ..Default::default()
    };
    let items = item::ordered(&mut c, kind, &filter, 1000).await?;
    let mut out = Vec::with_capacity(items.len());
    for it in items {
        let b = dependency::open_blockers(&mut c, kind, &it.id).await?;
        out.push((it, b));
    }
    Ok(out)
}

/// One kind's part of a sync: the pipelines before and after, and rows moved.
pub struct SyncReport {
    pub kind: ItemKind,
    pub before: Vec<&'static str>,
    pub after: Vec<&'static str>,
    pub moved: Vec<(Status, Status, u64)>,
}

/// Applies the configured pipelines. Rows in a state the new pipeline lacks would be
/// stranded: refused unless `override_`, which moves them to the nearest earlier
/// state that remains.
pub async fn sync(app: &App, wanted: &Pipelines, override_: bool) -> Result<Vec<SyncReport>> {
    let mut tx = app.store.write().await?;
    let current = pipeline::load(&mut tx).await?;
    let mut stranded: Vec<(String, i64, Status)> = Vec::new();
    for kind in [ItemKind::Feature, ItemKind::Task] {
        let want = wanted.get(kind);
        for (status, n) in item::status_counts(&mut tx, kind).await? {
            let Some(s) = Status::parse(&status) else {
                continue;
            };
            if s != Status::WillNotImplement && !want.contains(s) && n > 0 {
                stranded.push((
                    format!("{}:{}", kind.as_str(), s.as_str()),
                    n,
                    want.fallback(s),
                ));
            }
        }
    }
    if !stranded.is_empty() && !override_ {
        return Err(Error::InvalidOperation {
            message: format!(
                "the configured pipelines drop states that {} row group(s) are in: pass override=true to move them to the nearest earlier state",
                stranded.len()
            ),
            details: Some(Details::Stranded(stranded)),
        });
    }
    let ts = now();
    let mut reports = Vec::new();
    for kind in [ItemKind::Feature, ItemKind::Task] {
        let want = wanted.get(kind);
        let mut moved = Vec::new();
        for s in Status::catalog(kind) {
            if !want.contains(*s) {
                let to = want.fallback(*s);
                let n = item::move_status(&mut tx, kind, *s, to, &ts).await?;
                if n > 0 {
                    moved.push((*s, to, n));
                }
            }
        }
        pipeline::save(&mut tx, want, &ts).await?;
        reports.push(SyncReport {
            kind,
            before: current.get(kind).names(),
            after: want.names(),
            moved,
        });
    }
    tx.commit().await?;
    Ok(reports)
}

/// At start-up: applies the configured pipelines when they differ from the stored
/// ones and no row would be stranded; otherwise leaves the stored ones in force and
/// says why (the user decides with `sync`).
pub async fn apply_configured(app: &App) -> Result<()> {
    let stored = {
        let mut c = app.store.read().await?;
        pipeline::load(&mut c).await?
    };
    if stored == app.config.pipelines {
        return Ok(());
    }
    match sync(app, &app.config.pipelines, false).await {
        Ok(_) => {
            tracing::info!("applied the configured workflow pipelines");
            Ok(())
        }
        Err(e @ Error::InvalidOperation { .. }) => {
            tracing::warn!("configured pipelines not applied: {e}");
            Ok(())
        }
        Err(e) => Err(e),
    }
}
