//! `validate_graph`: the integrity checks (docs/code.md, graph integrity), entities
//! without references and non-Domain entities without parents included; `fix` deletes
//! what is safe to delete (references attached to nothing).

use std::collections::{HashMap, HashSet};

use crate::domain::code::Scope;
use crate::domain::field::Tool;
use crate::error::Result;
use crate::service::code::ctx;
use crate::service::App;
use crate::store::code as db;

/// Every check, in report order. `orphaned_document` never fires: documents exist
/// only through references here, so a document without one cannot be stored.
pub const CHECKS: &[&str] = &[
    "orphaned_reference",
    "orphaned_document",
    "dangling_reference",
    "missing_classification",
    "missing_parent",
    "scope_depth_violation",
    "multiple_category_scopes",
    "belongs_to_cycle",
    "invalid_category_scope",
    "stale_commit",
    "entity_without_references",
];

#[derive(Debug, Clone)]
pub struct Issue {
    pub kind: &'static str,
    pub error: bool,
    pub entity_id: Option<String>,
    pub reference_id: Option<String>,
    pub message: String,
    pub fixable: bool,
    pub fixed: bool,
}

fn issue(
    kind: &'static str,
    error: bool,
    entity: Option<&str>,
    reference: Option<&str>,
    message: String,
) -> Issue {
    Issue {
        kind,
        error,
        entity_id: entity.map(str::to_string),
        reference_id: reference.map(str::to_string),
        message,
        fixable: false,
        fixed: false,
    }
}

pub async fn validate(app: &App, project_id: &str, fix: bool) -> Result<Vec<Issue>> {
    let c = ctx(app, project_id).await?;
    let mut conn = app.store.read().await?;
    let ents = db::entities_of_project(&mut conn, project_id).await?;
    let refs = db::references_of_project(&mut conn, project_id).await?;
    let att = db::attachments_of_project(&mut conn, project_id).await?;
    let belongs = db::belongs_of_project(&mut conn, project_id).await?;
    let classes = db::classifications_of_project(&mut conn, project_id).await?;
    drop(conn);
    let by_id: HashMap<&str, &crate::domain::code::Entity> =
        ents.iter().map(|e| (e.id.as_str(), e)).collect();
    let attached: HashSet<&str> = att.iter().map(|a| a.0.as_str()).collect();
    let holding: HashSet<&str> = att.iter().map(|a| a.1.as_str()).collect();
    let mut out = Vec::new();

    let paths: Vec<&str> = {
        let mut p: Vec<&str> = refs.iter().map(|r| r.document_path.as_str()).collect();
        p.sort_unstable();
        p.dedup();
        p
    };
    let present: HashSet<&str> = paths
        .iter()
        .zip(c.git.blob_ids(&paths).await?)
        .filter(|(_, b)| b.is_some())
        .map(|(p, _)| *p)
        .collect();
    let commits: Vec<&str> = {
        let mut v: Vec<&str> = refs.iter().map(|r| r.commit_sha.as_str()).collect();
        v.sort_unstable();
        v.dedup();
        v
    };
    let known: HashSet<&str> = commits
        .iter()
        .zip(c.git.commits_exist(&commits).await?)
        .filter(|(_, ok)| *ok)
        .map(|(s, _)| *s)
        .collect();
    for r in &refs {
        if !attached.contains(r.id.as_str()) {
            let mut i = issue(
                "orphaned_reference",
                false,
                None,
                Some(&r.id),
                format!(
                    "reference {} ({}:{}) is attached to no entity",
                    r.id, r.document_path, r.start_line
                ),
            );
            i.fixable = true;
            out.push(i);
        } else if !present.contains(r.document_path.as_str()) {
            out.push(issue(
                "dangling_reference",
                false,
                None,
                Some(&r.id),
                format!(
                    "{} is gone from the working tree: {} tells whether it was renamed",
                    r.document_path,
                    Tool::AnalyzeDocument
                ),
            ));
        }
        if !known.contains(r.commit_sha.as_str()) {
            out.push(issue(
                "stale_commit",
                false,
                None,
                Some(&r.id),
                format!("commit {} of reference {} is not in the repository: {} update re-anchors it at HEAD", r.commit_sha, r.id, Tool::AlterReferences),
            ));
        }
    }
    let mut scopes_of: HashMap<&str, HashSet<&str>> = HashMap::new();
    for (e, s) in &classes {
        scopes_of.entry(e.as_str()).or_default().insert(s.as_str());
    }
    let mut parents_of: HashMap<&str, Vec<&str>> = HashMap::new();
    for (ch, p) in &belongs {
        parents_of.entry(ch.as_str()).or_default().push(p.as_str());
    }
    for e in &ents {
        let name = &e.name;
        match scopes_of.get(e.id.as_str()) {
            None => out.push(issue(
                "missing_classification",
                true,
                Some(&e.id),
                None,
                format!("entity '{name}' has no category"),
            )),
            Some(s) if s.len() > 1 => out.push(issue(
                "multiple_category_scopes",
                true,
                Some(&e.id),
                None,
                format!("entity '{name}' has categories at {} scopes", s.len()),
            )),
            Some(s) => {
                if s.iter().any(|x| Scope::parse(x) != Some(e.scope)) {
                    out.push(issue(
                        "invalid_category_scope",
                        true,
                        Some(&e.id),
                        None,
                        format!(
                            "entity '{name}' is {} but its categories are not",
                            e.scope.as_str()
                        ),
                    ));
                }
            }
        }
        if e.scope != Scope::Domain && !parents_of.contains_key(e.id.as_str()) {
            out.push(issue(
                "missing_parent",
                true,
                Some(&e.id),
                None,
                format!("{} entity '{name}' has no parent", e.scope.as_str()),
            ));
        }
        if !holding.contains(e.id.as_str()) {
            out.push(issue(
                "entity_without_references",
                true,
                Some(&e.id),
                None,
                format!(
                    "entity '{name}' has no reference: add one with {}",
                    Tool::UpdateEntity
                ),
            ));
        }
        for p in parents_of
            .get(e.id.as_str())
            .map(Vec::as_slice)
            .unwrap_or(&[])
        {
            if let Some(pe) = by_id.get(p) {
                if pe.scope.depth() >= e.scope.depth() {
                    out.push(issue(
                        "scope_depth_violation",
                        true,
                        Some(&e.id),
                        None,
                        format!(
                            "'{name}' ({}) belongs to '{}' ({})",
                            e.scope.as_str(),
                            pe.name,
                            pe.scope.as_str()
                        ),
                    ));
                }
            }
        }
    }
    // Cycles: walk up from every entity; meeting the start again is a cycle.
    for e in &ents {
        let mut seen = HashSet::new();
        let mut stack: Vec<&str> = parents_of.get(e.id.as_str()).cloned().unwrap_or_default();
        while let Some(p) = stack.pop() {
            if p == e.id {
                out.push(issue(
                    "belongs_to_cycle",
                    true,
                    Some(&e.id),
                    None,
                    format!("'{}' is its own ancestor", e.name),
                ));
                break;
            }
            if seen.insert(p) {
                stack.extend(parents_of.get(p).cloned().unwrap_or_default());
            }
        }
    }
    out.sort_by_key(|i| {
        CHECKS
            .iter()
            .position(|c| *c == i.kind)
            .unwrap_or(usize::MAX)
    });
    if fix && out.iter().any(|i| i.fixable) {
        let mut tx = app.store.write().await?;
        for i in out.iter_mut().filter(|i| i.fixable) {
            if let Some(r) = &i.reference_id {
                // Re-checked inside the transaction: another writer may have attached it.
                if db::entities_of_reference(&mut tx, r).await?.is_empty() {
                    db::delete_reference(&mut tx, r).await?;
                    i.fixed = true;
                }
            }
        }
        tx.commit().await?;
    }
    Ok(out)
}
