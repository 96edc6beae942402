//! The composed reads of projects, features and tasks: a container with the parts
//! asked for (its sections, a task's graph context and memory, the task counts under
//! a project or feature), the overviews (every project with its task counts, a
//! project's features and tasks, a feature's tasks, a task's sections), and a
//! project's task board (the page's first view), one task for the page's task view,
//! and the tasks no project holds. Each runs in
//! one read transaction (`Store::snapshot`), so its parts agree with each other
//! even while another process writes, and each part is one query or a few for the
//! whole answer, never one per row. The caller (the tool, the page) words the
//! answer.

use std::collections::HashMap;

use time::OffsetDateTime;

use crate::domain::container::Dependency as Edge;
use crate::domain::{ContainerType, Item, ItemKind, Project, Section, Status};
use crate::error::Result;
use crate::service::brief::{self, Brief};
use crate::service::containers::{get_in, Container};
use crate::service::context::{self, TaskContext};
use crate::service::memory::recall::{self, TaskMemory};
use crate::service::{workflow, App};
use crate::store::{dependency, item, project, section, Conn};

/// The parts a get reads beside the container. A part that does not apply to the
/// container's type (graph context and memory are a task's) is not read.
#[derive(Default)]
pub struct Want {
    pub sections: bool,
    /// A task's graph context, with these options.
    pub graph: Option<context::Options>,
    /// A task's memory, within [`recall::TASK_MEMORY_TOKENS`].
    pub memory: bool,
}

/// A container and the parts asked for.
pub struct Got {
    pub container: Container,
    pub sections: Option<Vec<Section>>,
    pub graph: Option<TaskContext>,
    pub memory: Option<TaskMemory>,
    /// Task counts by status under a project or a feature.
    pub counts: Option<Vec<(String, i64)>>,
}

/// Container `id` of type `ct` with the parts `want` names, in one read.
pub async fn get(app: &App, ct: ContainerType, id: &str, want: &Want) -> Result<Got> {
    let mut tx = app.store.snapshot().await?;
    let c = &mut *tx;
    let container = get_in(c, ct, id).await?;
    let sections = match want.sections {
        true => Some(section::list(c, id, &[], &[]).await?),
        false => None,
    };
    let task = match &container {
        Container::Item(t) if ct == ContainerType::Task => Some(t),
        _ => None,
    };
    let graph = match (task, &want.graph) {
        (Some(t), Some(o)) => Some(context::for_task_in(app, c, t, o).await?),
        _ => None,
    };
    let memory = match (task, want.memory) {
        (Some(t), true) => Some(
            recall::for_task_in(c, t, recall::TASK_MEMORY_TOKENS, OffsetDateTime::now_utc())
                .await?,
        ),
        _ => None,
    };
    let counts = match &container {
        Container::Project(p) => Some(item::task_counts(c, "project_id", &p.id).await?),
        Container::Item(f) if ct == ContainerType::Feature => {
            Some(item::task_counts(c, "feature_id", &f.id).await?)
        }
        Container::Item(_) => None,
    };
    tx.commit().await?;
    Ok(Got {
        container,
        sections,
        graph,
        memory,
        counts,
    })
}

/// An overview, read in one transaction.
pub enum Overview {
    /// Projects (at most [`PROJECTS_MAX`], oldest first) with their task counts, and
    /// how many there are.
    Projects(Vec<(Project, Vec<(String, i64)>)>, i64),
    /// A project, its features and all its tasks (oldest first).
    Project {
        project: Project,
        features: Vec<Item>,
        tasks: Vec<Item>,
    },
    /// A feature and its tasks (oldest first).
    Feature { feature: Item, tasks: Vec<Item> },
    /// A task and its sections.
    Task { task: Item, sections: Vec<Section> },
}

/// Projects an overview of every project lists at most.
pub const PROJECTS_MAX: i64 = 500;

async fn children(
    c: &mut Conn,
    kind: ItemKind,
    project_id: Option<&str>,
    feature_id: Option<&str>,
) -> Result<Vec<Item>> {
    let f = item::Filter {
        project_id,
        feature_id,
        ..Default::default()
    };
    Ok(item::search(c, kind, &f, i64::MAX, 0).await?.0)
}

/// The overview of container `id` of type `ct`, or of every project (`id` absent,
/// `ct` a project).
pub async fn overview(app: &App, ct: ContainerType, id: Option<&str>) -> Result<Overview> {
    let mut tx = app.store.snapshot().await?;
    let c = &mut *tx;
    let o = match id {
        None => {
            let s = project::Search {
                query: None,
                tags: &[],
                limit: PROJECTS_MAX,
                offset: 0,
            };
            let (projects, total) = project::search(c, &s).await?;
            let ids: Vec<String> = projects.iter().map(|p| p.id.clone()).collect();
            let mut counts = item::task_counts_of(c, "project_id", &ids).await?;
            let rows = projects
                .into_iter()
                .map(|p| {
                    let mine = counts.remove(&p.id).unwrap_or_default();
                    (p, mine)
                })
                .collect();
            Overview::Projects(rows, total)
        }
        Some(id) => match get_in(c, ct, id).await? {
            Container::Project(p) => Overview::Project {
                features: children(c, ItemKind::Feature, Some(&p.id), None).await?,
                tasks: children(c, ItemKind::Task, Some(&p.id), None).await?,
                project: p,
            },
            Container::Item(f) if f.kind == ItemKind::Feature => Overview::Feature {
                tasks: children(c, ItemKind::Task, None, Some(&f.id)).await?,
                feature: f,
            },
            Container::Item(t) => Overview::Task {
                sections: section::list(c, &t.id, &[], &[]).await?,
                task: t,
            },
        },
    };
    tx.commit().await?;
    Ok(o)
}

/// A project's task board: the next task, the features, a page of tasks per status,
/// the names of every item a card or row names (its feature, its blockers), and
/// the task counts of the features on show.
pub struct Board {
    pub next: Option<Item>,
    pub features: Vec<Item>,
    /// Per status shown: its page of tasks, how many it has, the page's offset.
    pub columns: Vec<(Status, Vec<Item>, i64, i64)>,
    pub names: HashMap<String, String>,
    /// Task counts by status of the features `features_shown` selects.
    pub counts: HashMap<String, Vec<(String, i64)>>,
    /// The reason given for the NO_OP blocker of each card or row that has one.
    pub outside: HashMap<String, String>,
}

/// Blockers off the page whose names a board looks up, at most.
const BLOCKERS_MAX: usize = 200;

/// The board of `project_id` in one read: `offset` gives each status column's page
/// offset, `features_shown` the features whose task counts are read. A status with
/// no task is shown only when it is in the task pipeline.
pub async fn board(
    app: &App,
    project_id: &str,
    page: i64,
    offset: impl Fn(Status) -> i64,
    features_shown: std::ops::Range<usize>,
) -> Result<Board> {
    let mut tx = app.store.snapshot().await?;
    let c = &mut *tx;
    let next = item::ordered(
        c,
        ItemKind::Task,
        &item::Filter {
            project_id: Some(project_id),
            statuses: &[Status::New],
            blocked: Some(false),
            ..Default::default()
        },
        1,
    )
    .await?
    .pop();
    // Features are few next to tasks: all of them, for the table and for naming the
    // feature on each card.
    let features = children(c, ItemKind::Feature, Some(project_id), None).await?;
    let mut names: HashMap<String, String> = features
        .iter()
        .map(|f| (f.id.clone(), f.name.clone()))
        .collect();
    let pipeline = &app.config.pipelines.task.states;
    let mut columns = Vec::new();
    for s in Status::all_for(ItemKind::Task) {
        let at = offset(s);
        let f = item::Filter {
            project_id: Some(project_id),
            statuses: &[s],
            ..Default::default()
        };
        let (rows, total) = item::search(c, ItemKind::Task, &f, page, at).await?;
        if total == 0 && !pipeline.contains(&s) {
            continue;
        }
        for t in &rows {
            names.insert(t.id.clone(), t.name.clone());
        }
        columns.push((s, rows, total, at));
    }
    // Blockers not on the page: their names in one query, a bounded number of them.
    let mut missing: Vec<String> = columns
        .iter()
        .flat_map(|(_, rows, _, _)| rows.iter())
        .chain(features.iter())
        .flat_map(|i| i.blocked_by.iter())
        .filter(|b| *b != "NO_OP" && !names.contains_key(*b))
        .cloned()
        .collect();
    missing.sort();
    missing.dedup();
    missing.truncate(BLOCKERS_MAX);
    names.extend(item::names_of(c, &missing).await?);
    let noop: Vec<String> = columns
        .iter()
        .flat_map(|(_, rows, _, _)| rows.iter())
        .chain(features.iter())
        .filter(|i| i.blocked_by.iter().any(|b| b == "NO_OP"))
        .map(|i| i.id.clone())
        .collect();
    let outside = dependency::noop_reasons(c, &noop)
        .await?
        .into_iter()
        .collect();
    let shown: Vec<String> = features
        .get(features_shown.start.min(features.len())..features_shown.end.min(features.len()))
        .unwrap_or_default()
        .iter()
        .map(|f| f.id.clone())
        .collect();
    let counts = item::task_counts_of(c, "feature_id", &shown).await?;
    tx.commit().await?;
    Ok(Board {
        next,
        features,
        columns,
        names,
        counts,
        outside,
    })
}

/// One task as the page's task view shows it, read in one transaction: its briefing
/// (the task, its sections and the parts `brief` composes), the edges into it and out
/// of it (each with the other end's name and status), and where it stands in its
/// pipeline with the refusal `advance` would answer now.
pub struct TaskView {
    pub brief: Brief,
    pub dependencies: Vec<Edge>,
    pub dependents: Vec<Edge>,
    pub state: workflow::State,
    /// The names of its project and feature, when it has them.
    pub names: HashMap<String, String>,
}

/// Task `id` for the page, in one read: `brief::brief_in`, the edges,
/// `workflow::state_in` and the two names share one state of the database.
pub async fn task_view(app: &App, id: &str) -> Result<TaskView> {
    let mut tx = app.store.snapshot().await?;
    let c = &mut *tx;
    let brief = brief::brief_in(app, c, id).await?;
    let t = &brief.task;
    let dependencies = dependency::incoming(c, ItemKind::Task, &t.id).await?;
    let dependents = dependency::outgoing(c, ItemKind::Task, &t.id).await?;
    let state = workflow::state_in(c, ItemKind::Task, &t.id).await?;
    let mut names: HashMap<String, String> = HashMap::new();
    if let Some(f) = &t.feature_id {
        names.extend(item::names_of(c, std::slice::from_ref(f)).await?);
    }
    if let Some(p) = &t.project_id {
        if let Container::Project(p) = get_in(c, ContainerType::Project, p).await? {
            names.insert(p.id, p.name);
        }
    }
    tx.commit().await?;
    Ok(TaskView {
        brief,
        dependencies,
        dependents,
        state,
        names,
    })
}

/// Tasks without a project, a page at a time (oldest first), how many there are, and the names of the features they belong to.
pub struct Unowned {
    pub tasks: Vec<Item>,
    pub total: i64,
    pub names: HashMap<String, String>,
}

/// The tasks no project holds (standalone, or of a feature without a project), in
/// one read.
pub async fn unowned(app: &App, page: i64, offset: i64) -> Result<Unowned> {
    let mut tx = app.store.snapshot().await?;
    let c = &mut *tx;
    let f = item::Filter {
        without_project: true,
        ..Default::default()
    };
    let (tasks, total) = item::search(c, ItemKind::Task, &f, page, offset).await?;
    let mut features: Vec<String> = tasks.iter().filter_map(|t| t.feature_id.clone()).collect();
    features.sort();
    features.dedup();
    let names = item::names_of(c, &features).await?.into_iter().collect();
    tx.commit().await?;
    Ok(Unowned {
        tasks,
        total,
        names,
    })
}
