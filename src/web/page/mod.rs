//! The read-only page at `/`: server-rendered HTML, one view per served toolset.
//!
//! Every view reads through `service` (never SQL), shows long lists a page at a time
//! ([`PAGE`] rows), and escapes everything it prints (`html::esc`). A view is a row
//! of [`VIEWS`] plus an arm of `project_view`; the navigation shows a view only when
//! its toolset is served.

mod board;
mod code;
mod knowledge;
mod memory;
mod ontology;
mod task;

use std::fmt::Write as _;

use http::StatusCode;

use crate::error::Error;
use crate::service::containers::{self, Container, Page as Rows, SearchQuery};
use crate::service::App;
use crate::web::html::{enc, esc, excerpt, layout, link, pager, NavItem};

/// Rows shown at once in any list.
pub const PAGE: i64 = 50;

/// One view of a project: the toolset it shows, its URL segment, its label.
pub struct View {
    pub toolset: &'static str,
    pub slug: &'static str,
    pub label: &'static str,
}

/// The views, in navigation order.
pub const VIEWS: &[View] = &[
    View {
        toolset: "tasks",
        slug: "board",
        label: "Board",
    },
    View {
        toolset: "graph",
        slug: "knowledge",
        label: "Knowledge",
    },
    View {
        toolset: "code",
        slug: "code",
        label: "Code",
    },
    View {
        toolset: "ontology",
        slug: "ontology",
        label: "Ontology",
    },
    View {
        toolset: "memory",
        slug: "memory",
        label: "Memory",
    },
];

/// What a page request answers: a status and HTML, or a redirect.
pub enum Answer {
    Html(StatusCode, String),
    Redirect(String),
}

/// The request as the views see it.
pub struct Req<'a> {
    /// The named agent whose token (or its cookie) opened the page.
    pub agent: Option<&'a crate::service::agent::Agent>,
    pub app: &'a App,
    /// The toolsets this server serves.
    pub toolsets: &'a [String],
    pub query: Vec<(String, String)>,
    pub nonce: &'a str,
}

impl Req<'_> {
    /// The last value of query parameter `k`.
    pub fn param(&self, k: &str) -> Option<&str> {
        self.query
            .iter()
            .rev()
            .find(|(n, _)| n == k)
            .map(|(_, v)| v.as_str())
    }

    /// A non-negative offset parameter (0 when absent or unreadable).
    pub fn offset(&self, k: &str) -> i64 {
        self.param(k)
            .and_then(|v| v.parse::<i64>().ok())
            .unwrap_or(0)
            .clamp(0, i64::MAX / 2)
    }

    fn serves(&self, toolset: &str) -> bool {
        self.toolsets.iter().any(|t| t == toolset)
    }

    fn served(&self) -> impl Iterator<Item = &'static View> + '_ {
        VIEWS
            .iter()
            .filter(|v| self.toolsets.iter().any(|t| t == v.toolset))
    }
}

/// Renders the page at `path` (the query already parsed into `req`).
pub async fn render(req: &Req<'_>, path: &str) -> Answer {
    let segs: Vec<&str> = path
        .trim_matches('/')
        .split('/')
        .filter(|s| !s.is_empty())
        .collect();
    let out = match segs.as_slice() {
        [] => projects(req).await,
        ["p", id] => match req.served().next() {
            Some(v) => return Answer::Redirect(format!("/p/{}/{}", enc(id), v.slug)),
            None => Err(Error::not_found("view", "any")),
        },
        ["p", id, slug] => project_view(req, id, slug).await,
        ["task", id] if req.serves("tasks") => task_view(req, id).await,
        _ => Err(Error::NotFound {
            entity: "page",
            id: excerpt(path, 200),
        }),
    };
    match out {
        Ok((title, project, body)) => {
            let nav = project
                .as_ref()
                .map(|(name, items)| (name.as_str(), items.as_slice()));
            Answer::Html(
                StatusCode::OK,
                layout(req.nonce, &title, nav, req.agent, &body),
            )
        }
        Err(e) => {
            let status = match &e {
                Error::NotFound { .. } | Error::NotFoundNear { .. } => StatusCode::NOT_FOUND,
                Error::Validation { .. } | Error::ValidationDetails { .. } => {
                    StatusCode::BAD_REQUEST
                }
                // Its cause is in the log already, beside the id the page shows.
                Error::Unexpected(_) => StatusCode::INTERNAL_SERVER_ERROR,
                _ => StatusCode::CONFLICT,
            };
            let body = format!(
                "<h1>{}</h1><p class=\"err\">{}</p><p>{}</p>",
                status.canonical_reason().unwrap_or("Error"),
                esc(&e.to_string()),
                link("/", "All projects")
            );
            Answer::Html(status, layout(req.nonce, "Error", None, req.agent, &body))
        }
    }
}

type Rendered = (String, Option<(String, Vec<NavItem>)>, String);

/// Every project, a page at a time, each linking to its first view.
async fn projects(req: &Req<'_>) -> crate::error::Result<Rendered> {
    let offset = req.offset("offset");
    let q = SearchQuery {
        query: None,
        statuses: vec![],
        priority: None,
        tags: vec![],
        project_id: None,
        feature_id: None,
        limit: PAGE,
        offset,
    };
    let Rows::Projects(rows, total) =
        containers::search(req.app, crate::domain::ContainerType::Project, &q).await?
    else {
        return Err(Error::Internal("a project search answered items".into()));
    };
    let mut b = String::from("<h1>Projects</h1>");
    if rows.is_empty() && offset == 0 {
        b.push_str(
            "<p class=\"mut\">No project yet. An agent creates one with \
             <code>manage_container</code> (<code>operation: create</code>, \
             <code>containerType: project</code>).</p>",
        );
    }
    let first = req.served().next().map_or("board", |v| v.slug);
    b.push_str("<table><tr><th>Project</th><th>Summary</th><th>Updated</th></tr>");
    for p in &rows {
        let _ = write!(
            b,
            "<tr data-filter><td>{}</td><td>{}</td><td class=\"mut\">{}</td></tr>",
            link(&format!("/p/{}/{first}", enc(&p.id)), &esc(&p.name)),
            esc(&excerpt(&p.summary, 200)),
            esc(&p.updated_at)
        );
    }
    b.push_str("</table>");
    b.push_str(&pager("/", "offset", offset, PAGE, rows.len(), total));
    if req.serves("tasks") {
        unowned(req, &mut b).await?;
    }
    Ok(("Projects".into(), None, b))
}

/// The tasks no project holds (standalone, or of a feature without a project): no
/// board has them, so the list of projects does, each linked to its task view.
async fn unowned(req: &Req<'_>, b: &mut String) -> crate::error::Result<()> {
    let offset = req.offset("standalone");
    let u = crate::service::composed::unowned(req.app, PAGE, offset).await?;
    if u.total == 0 {
        return Ok(());
    }
    let _ = write!(
        b,
        "<h2 id=\"standalone\">Tasks without a project <span class=\"mut\">{}</span></h2>\
         <table><tr><th>Task</th><th>Status</th><th>Priority</th><th>Feature</th><th>Summary</th></tr>",
        u.total
    );
    for t in &u.tasks {
        let _ = write!(
            b,
            "<tr data-filter class=\"standalone-task{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            if t.blocked_by.is_empty() { "" } else { " blocked" },
            link(&format!("/task/{}", enc(&t.id)), &esc(&t.name)),
            t.status.as_str(),
            t.priority.as_str(),
            esc(t.feature_id.as_ref().and_then(|f| u.names.get(f)).map_or("", String::as_str)),
            esc(&excerpt(&t.summary, 160))
        );
    }
    b.push_str("</table>");
    b.push_str(&pager(
        "/",
        "standalone",
        offset,
        PAGE,
        u.tasks.len(),
        u.total,
    ));
    Ok(())
}

/// One task, under its project's navigation when it has a project.
async fn task_view(req: &Req<'_>, id: &str) -> crate::error::Result<Rendered> {
    let (title, project, body) = task::render(req, id).await?;
    let nav = project.map(|(pid, name)| {
        let items = req
            .served()
            .map(|v| NavItem {
                label: v.label,
                href: format!("/p/{}/{}", enc(&pid), v.slug),
                current: false,
            })
            .collect();
        (name, items)
    });
    Ok((title, nav, body))
}

async fn project_view(req: &Req<'_>, id: &str, slug: &str) -> crate::error::Result<Rendered> {
    let id = crate::domain::id::parse("project", id)?;
    let Container::Project(project) =
        containers::get(req.app, crate::domain::ContainerType::Project, &id).await?
    else {
        return Err(Error::not_found("project", &id));
    };
    let Some(view) = req.served().find(|v| v.slug == slug) else {
        return Err(Error::NotFound {
            entity: "view",
            id: excerpt(slug, 80),
        });
    };
    let nav: Vec<NavItem> = req
        .served()
        .map(|v| NavItem {
            label: v.label,
            href: format!("/p/{}/{}", enc(&id), v.slug),
            current: v.slug == view.slug,
        })
        .collect();
    let base = format!("/p/{}/{}", enc(&id), view.slug);
    let body = match view.slug {
        "board" => board::render(req, &project, &base).await?,
        "knowledge" => knowledge::render(req, &project, &base).await?,
        "code" => code::render(req, &project, &base).await?,
        "ontology" => ontology::render(req, &project, &base).await?,
        "memory" => memory::render(req, &project, &base).await?,
        other => {
            return Err(Error::Internal(format!("view {other} has no renderer")));
        }
    };
    Ok((
        format!("{} — {}", view.label, project.name),
        Some((project.name.clone(), nav)),
        body,
    ))
}
