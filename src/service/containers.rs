//! Projects, features and tasks: create, read, update, delete, search, overview.

use crate::domain::field::Field;
use crate::domain::{id, now, ContainerType, Item, ItemKind, Priority, Project, Status, Touched};
use crate::error::{Details, Error, Result};
use crate::service::App;
use crate::store::{dependency, item, lock, project, Conn};

/// Fields of a new container; which apply depends on the type.
#[derive(Debug, Default)]
pub struct NewContainer {
    pub name: String,
    pub summary: Option<String>,
    pub description: Option<String>,
    pub priority: Option<Priority>,
    pub complexity: Option<i64>,
    pub project_id: Option<String>,
    pub feature_id: Option<String>,
    pub tags: Option<Vec<String>>,
    pub related_to: Vec<String>,
}

/// Changes to a container; `None` leaves a field as it is.
pub type Patch = NewContainer;

pub enum Container {
    Project(Project),
    Item(Item),
}

impl Container {
    pub fn version(&self) -> i64 {
        match self {
            Container::Project(p) => p.version,
            Container::Item(i) => i.version,
        }
    }
}

pub async fn create(app: &App, ct: ContainerType, n: NewContainer) -> Result<Container> {
    let ts = now();
    let Some(kind) = ct.item_kind() else {
        if !n.related_to.is_empty() {
            return Err(Error::validation(
                Field::RelatedTo,
                format!(
                    "projects have no dependencies; {} applies to features and tasks",
                    Field::RelatedTo
                ),
            ));
        }
        let p = Project {
            id: id::new_id(),
            name: n.name,
            summary: n.summary.unwrap_or_default(),
            description: n.description,
            tags: n.tags.unwrap_or_default(),
            version: 1,
            created_at: ts.clone(),
            updated_at: ts,
        };
        let mut tx = app.store.write().await?;
        project::insert(&mut tx, &p).await?;
        crate::service::memory::project_subject::for_new_project(&mut tx, &p.id, &p.name).await?;
        tx.commit().await?;
        return Ok(Container::Project(p));
    };
    let related_to = n.related_to;
    let mut it = Item {
        kind,
        id: id::new_id(),
        project_id: n.project_id,
        feature_id: n.feature_id,
        name: n.name,
        summary: n.summary.unwrap_or_default(),
        description: n.description,
        status: Status::New,
        priority: n.priority.unwrap_or(Priority::Medium),
        complexity: if kind == ItemKind::Task {
            Some(n.complexity.unwrap_or(5))
        } else {
            None
        },
        status_reason: None,
        tags: n.tags.unwrap_or_default(),
        blocked_by: vec![],
        version: 1,
        created_at: ts.clone(),
        updated_at: ts,
    };
    let mut tx = app.store.write().await?;
    let (project_id, feature_id) =
        placement(&mut tx, kind, it.project_id.take(), it.feature_id.take()).await?;
    it.project_id = project_id;
    it.feature_id = feature_id;
    // The write lock has been held since `placement` saw the project and feature.
    item::insert(&mut tx, &it).await?;
    relate(&mut tx, kind, &it.id, &related_to).await?;
    tx.commit().await?;
    Ok(Container::Item(it))
}

/// Checks the project and feature a feature or task is placed under, and derives a
/// task's project from its feature.
async fn placement(
    tx: &mut Conn,
    kind: ItemKind,
    project_id: Option<String>,
    feature_id: Option<String>,
) -> Result<(Option<String>, Option<String>)> {
    if kind == ItemKind::Feature && feature_id.is_some() {
        return Err(Error::validation(
            Field::FeatureId,
            format!(
                "a feature cannot belong to a feature; give {}",
                Field::ProjectId
            ),
        ));
    }
    if let Some(p) = &project_id {
        if !project::exists(tx, p).await? {
            return Err(Error::not_found("project", p.clone()));
        }
    }
    match feature_id {
        None => Ok((project_id, None)),
        Some(f) => {
            let feature = item::require(tx, ItemKind::Feature, &f).await?;
            if let (Some(given), Some(actual)) = (&project_id, &feature.project_id) {
                if given != actual {
                    return Err(Error::invariant(format!(
                        "feature {f} belongs to project {actual}, not {given}: omit {} or give the feature's project",
                        Field::ProjectId
                    )));
                }
            }
            Ok((feature.project_id.or(project_id), Some(f)))
        }
    }
}

/// Adds RELATES_TO edges from `id` to each of `others` (same kind, must exist).
async fn relate(tx: &mut Conn, kind: ItemKind, id: &str, others: &[String]) -> Result<()> {
    let ts = now();
    for other in others {
        if other == id {
            return Err(Error::validation(
                Field::RelatedTo,
                "an item cannot relate to itself",
            ));
        }
        item::require(tx, kind, other).await?;
        let eid = id::new_id();
        dependency::insert(
            tx,
            &dependency::NewEdge {
                id: &eid,
                kind,
                from_id: Some(id),
                to_id: other,
                edge_type: "RELATES_TO",
                reason: None,
                now: &ts,
            },
        )
        .await?;
    }
    Ok(())
}

/// Updates a container; answers it and the rows the update changed besides it (the
/// tasks a moved feature took along).
pub async fn update(
    app: &App,
    ct: ContainerType,
    id: &str,
    version: i64,
    p: Patch,
) -> Result<(Container, Vec<Touched>)> {
    let mut tx = app.store.write().await?;
    let mut touched = Vec::new();
    let ts = now();
    let out = match ct.item_kind() {
        None => {
            if !p.related_to.is_empty() {
                return Err(Error::validation(
                    Field::RelatedTo,
                    format!(
                        "projects have no dependencies; {} applies to features and tasks",
                        Field::RelatedTo
                    ),
                ));
            }
            let mut cur = project::get(&mut tx, id)
                .await?
                .ok_or_else(|| Error::not_found("project", id))?;
            if !p.name.is_empty() {
                cur.name = p.name;
            }
            if let Some(s) = p.summary {
                cur.summary = s;
            }
            if let Some(d) = p.description {
                cur.description = Some(d);
            }
            if let Some(t) = p.tags {
                cur.tags = t;
            }
            cur.updated_at = ts;
            cur.version = project::update(&mut tx, &cur, version).await?;
            Container::Project(cur)
        }
        Some(kind) => {
            let mut cur = item::require(&mut tx, kind, id).await?;
            let moved = p.project_id.is_some() || p.feature_id.is_some();
            if moved {
                let project_id = p.project_id.or(if p.feature_id.is_some() {
                    None
                } else {
                    cur.project_id.clone()
                });
                let (pid, fid) = placement(
                    &mut tx,
                    kind,
                    project_id,
                    p.feature_id.or(cur.feature_id.clone()),
                )
                .await?;
                cur.project_id = pid;
                cur.feature_id = fid;
            }
            if !p.name.is_empty() {
                cur.name = p.name;
            }
            if let Some(s) = p.summary {
                cur.summary = s;
            }
            if let Some(d) = p.description {
                cur.description = Some(d);
            }
            if let Some(pr) = p.priority {
                cur.priority = pr;
            }
            if let Some(c) = p.complexity {
                if kind == ItemKind::Feature {
                    return Err(Error::validation(
                        Field::Complexity,
                        "complexity applies to tasks only",
                    ));
                }
                cur.complexity = Some(c);
            }
            if let Some(t) = p.tags {
                cur.tags = t;
            }
            cur.updated_at = ts;
            cur.version = item::update(&mut tx, &cur, version).await?;
            if kind == ItemKind::Feature && moved {
                let moved = item::move_feature_tasks(
                    &mut tx,
                    &cur.id,
                    cur.project_id.as_deref(),
                    &cur.updated_at,
                )
                .await?;
                touched.extend(moved.into_iter().map(|(id, version)| Touched {
                    entity: "task",
                    id,
                    version,
                }));
            }
            relate(&mut tx, kind, &cur.id, &p.related_to).await?;
            Container::Item(cur)
        }
    };
    tx.commit().await?;
    Ok((out, touched))
}

/// What a delete removed besides the container itself.
#[derive(Debug, Default)]
pub struct Deleted {
    pub features: i64,
    pub tasks: i64,
}

pub async fn delete(
    app: &App,
    ct: ContainerType,
    id: &str,
    version: Option<i64>,
    cascade: bool,
) -> Result<Deleted> {
    let mut tx = app.store.write().await?;
    let mut d = Deleted::default();
    let table = match ct {
        ContainerType::Project => {
            d.features = item::count_children(&mut tx, "features", "project_id", id).await?;
            d.tasks = item::count_children(&mut tx, "tasks", "project_id", id).await?;
            lock::PROJECTS
        }
        ContainerType::Feature => {
            d.tasks = item::count_children(&mut tx, "tasks", "feature_id", id).await?;
            lock::FEATURES
        }
        ContainerType::Task => lock::TASKS,
    };
    if (d.features > 0 || d.tasks > 0) && !cascade {
        // Check existence and version first so the caller hears about those before
        // being told to cascade.
        if let Some(v) = version {
            lock::check(&mut tx, table, id, v).await?;
        }
        return Err(Error::InvalidOperation {
            message: format!(
                "{} {id} still holds {} feature(s) and {} task(s): pass cascade=true to delete them too",
                ct.as_str(),
                d.features,
                d.tasks
            ),
            details: Some(Details::Contents {
                features: d.features,
                tasks: d.tasks,
            }),
        });
    }
    lock::delete(&mut tx, table, id, version).await?;
    tx.commit().await?;
    Ok(d)
}

pub async fn get(app: &App, ct: ContainerType, id: &str) -> Result<Container> {
    let mut c = app.store.read().await?;
    get_in(&mut c, ct, id).await
}

pub async fn get_in(c: &mut Conn, ct: ContainerType, id: &str) -> Result<Container> {
    match ct.item_kind() {
        None => Ok(Container::Project(
            project::get(c, id)
                .await?
                .ok_or_else(|| Error::not_found("project", id))?,
        )),
        Some(kind) => Ok(Container::Item(item::require(c, kind, id).await?)),
    }
}

pub struct SearchQuery {
    pub query: Option<String>,
    pub statuses: Vec<Status>,
    pub priority: Option<Priority>,
    pub tags: Vec<String>,
    pub project_id: Option<String>,
    pub feature_id: Option<String>,
    pub limit: i64,
    pub offset: i64,
}

pub enum Page {
    Projects(Vec<Project>, i64),
    Items(Vec<Item>, i64),
    /// Tasks or features a text query ranked (`service::task_ranking`), each with the
    /// parts of its score.
    Ranked(Vec<(Item, crate::service::ranking::Hit)>, i64),
}

/// Search: with a query that has words, every row the other filters allow is ranked
/// against it (`service::task_ranking`), best first, then paged; `total` counts the
/// ranked rows. Without one, in creation order.
pub async fn search(app: &App, ct: ContainerType, q: &SearchQuery) -> Result<Page> {
    use crate::service::task_ranking as tr;
    let text = match q.query.as_deref() {
        Some(t) if tr::has_terms(t) => t,
        _ => return filtered(app, ct, q).await,
    };
    let all = SearchQuery {
        query: None,
        statuses: q.statuses.clone(),
        priority: q.priority,
        tags: q.tags.clone(),
        project_id: q.project_id.clone(),
        feature_id: q.feature_id.clone(),
        limit: i64::MAX,
        offset: 0,
    };
    let (offset, limit) = (q.offset.max(0) as usize, q.limit.max(0) as usize);
    match filtered(app, ct, &all).await? {
        Page::Projects(rows, _) => {
            let ranked = tr::rank_projects(rows, text);
            let total = ranked.len() as i64;
            Ok(Page::Projects(
                ranked.into_iter().skip(offset).take(limit).collect(),
                total,
            ))
        }
        Page::Items(rows, _) => {
            let qv = crate::service::semantic::embed_query(app, text).await?;
            let ask = crate::service::ranking::Ask {
                text,
                qvec: &qv.vector,
                min_score: tr::TASK_MIN_COSINE,
            };
            let n = rows.len();
            let ranked = tr::rank_items(app, rows, &ask, n).await?;
            let total = ranked.len() as i64;
            Ok(Page::Ranked(
                ranked.into_iter().skip(offset).take(limit).collect(),
                total,
            ))
        }
        ranked @ Page::Ranked(_, _) => Ok(ranked),
    }
}

/// Rows by the filters alone (a query as a substring of name, summary or
/// description), in creation order. One read transaction: the page and its total
/// agree.
async fn filtered(app: &App, ct: ContainerType, q: &SearchQuery) -> Result<Page> {
    let mut tx = app.store.snapshot().await?;
    let page = filtered_in(&mut tx, ct, q).await?;
    tx.commit().await?;
    Ok(page)
}

async fn filtered_in(c: &mut Conn, ct: ContainerType, q: &SearchQuery) -> Result<Page> {
    match ct.item_kind() {
        None => {
            let s = project::Search {
                query: q.query.as_deref(),
                tags: &q.tags,
                limit: q.limit,
                offset: q.offset,
            };
            let (rows, total) = project::search(c, &s).await?;
            Ok(Page::Projects(rows, total))
        }
        Some(kind) => {
            let f = item::Filter {
                project_id: q.project_id.as_deref(),
                feature_id: q.feature_id.as_deref(),
                statuses: &q.statuses,
                priority: q.priority,
                tags: &q.tags,
                query: q.query.as_deref(),
                blocked: None,
                without_project: false,
            };
            let (rows, total) = item::search(c, kind, &f, q.limit, q.offset).await?;
            Ok(Page::Items(rows, total))
        }
    }
}

/// What `resources/list` offers, one page of it in one read: the first
/// `projects_max` projects (oldest first), then the `tasks_max` tasks most recently
/// changed; `offset` and `limit` page that sequence. Answers the page and the
/// sequence's length.
pub async fn listing(
    app: &App,
    projects_max: i64,
    tasks_max: i64,
    offset: i64,
    limit: i64,
) -> Result<(Vec<Project>, Vec<Item>, i64)> {
    let mut tx = app.store.snapshot().await?;
    let s = project::Search {
        query: None,
        tags: &[],
        limit: 0,
        offset: 0,
    };
    let (_, projects_total) = project::search(&mut tx, &s).await?;
    let tasks_total = item::count_tasks(&mut tx).await?;
    let n_projects = projects_total.min(projects_max);
    let total = n_projects + tasks_total.min(tasks_max);
    let end = (offset + limit).min(total);
    let mut projects = Vec::new();
    if offset < n_projects {
        let s = project::Search {
            query: None,
            tags: &[],
            limit: end.min(n_projects) - offset,
            offset,
        };
        projects = project::search(&mut tx, &s).await?.0;
    }
    let from = offset.max(n_projects) - n_projects;
    let to = end - n_projects;
    let tasks = if to > from {
        item::recent_tasks(&mut tx, to - from, from).await?
    } else {
        Vec::new()
    };
    tx.commit().await?;
    Ok((projects, tasks, total))
}
