//! Text search over tasks, features and projects through the ranking core
//! (`service::ranking`): the rows the other filters allow are the candidates, their
//! lexical list is BM25 over name (title) and summary + description
//! (`service::bm25`), their vectors those of the `tasks` tenant (tasks and features
//! are embedded like every other source, see `store::embedding::TASK`), fused as
//! every search fuses. Projects have no vectors: they are ranked by their words.

use crate::domain::{Item, Project};
use crate::error::Result;
use crate::service::bm25::{self, Doc};
use crate::service::ranking::{rank_docs, Ask, Hit};
use crate::service::semantic;
use crate::service::App;
use crate::store::embedding::{FEATURE, TASK, TASKS_TENANT};

/// The cosine a task or feature no word of the query matched needs: the floor of
/// code `search` and graph search.
pub const TASK_MIN_COSINE: f32 = 0.3;

/// The query has words a lexical list can use (not only stop words or punctuation).
pub fn has_terms(query: &str) -> bool {
    !crate::service::ranking::query_terms(query).is_empty()
}

fn body(summary: &str, description: Option<&str>) -> String {
    match description {
        Some(d) if !d.is_empty() => format!("{summary}\n{d}"),
        _ => summary.to_string(),
    }
}

/// Tasks and features ranked against `ask` (its vector embedded by the caller), best
/// first, at most `limit`.
pub async fn rank_items(
    app: &App,
    items: Vec<Item>,
    ask: &Ask<'_>,
    limit: usize,
) -> Result<Vec<(Item, Hit)>> {
    if items.is_empty() {
        return Ok(Vec::new());
    }
    let snap = semantic::snapshot(app, TASKS_TENANT).await?;
    let bodies: Vec<String> = items
        .iter()
        .map(|i| body(&i.summary, i.description.as_deref()))
        .collect();
    let mut out: Vec<(Item, Hit)> = Vec::new();
    let mut by_id: std::collections::HashMap<String, Item> =
        std::collections::HashMap::with_capacity(items.len());
    let mut hits: Vec<Hit> = Vec::new();
    for (source, kind) in [
        (TASK.name, crate::domain::ItemKind::Task),
        (FEATURE.name, crate::domain::ItemKind::Feature),
    ] {
        let docs: Vec<Doc<'_>> = items
            .iter()
            .zip(&bodies)
            .filter(|(i, _)| i.kind == kind)
            .map(|(i, b)| Doc {
                id: &i.id,
                name: &i.name,
                body: b,
            })
            .collect();
        if docs.is_empty() {
            continue;
        }
        hits.extend(
            rank_docs(app, &snap, TASKS_TENANT, source, &docs, ask, limit)
                .await?
                .hits,
        );
    }
    for i in items {
        by_id.insert(i.id.clone(), i);
    }
    hits.sort_by(|a, b| {
        b.fused
            .total_cmp(&a.fused)
            .then(b.vector.total_cmp(&a.vector))
            .then(a.row_id.cmp(&b.row_id))
    });
    for h in hits.into_iter().take(limit) {
        if let Some(i) = by_id.remove(&h.row_id) {
            out.push((i, h));
        }
    }
    Ok(out)
}

/// Projects ranked by their words alone (BM25 over name, summary + description).
pub fn rank_projects(projects: Vec<Project>, query: &str) -> Vec<Project> {
    let bodies: Vec<String> = projects
        .iter()
        .map(|p| body(&p.summary, p.description.as_deref()))
        .collect();
    let docs: Vec<Doc<'_>> = projects
        .iter()
        .zip(&bodies)
        .map(|(p, b)| Doc {
            id: &p.id,
            name: &p.name,
            body: b,
        })
        .collect();
    let (hits, _) = bm25::rank(&docs, query, docs.len());
    let order: Vec<String> = hits.into_iter().map(|h| h.0).collect();
    let mut by_id: std::collections::HashMap<String, Project> =
        projects.into_iter().map(|p| (p.id.clone(), p)).collect();
    order.iter().filter_map(|id| by_id.remove(id)).collect()
}
