//! `project_overview`: the taxonomy, the Domain/Feature/Namespace hierarchy and
//! counts, optionally written as a markdown overview inside the repository.

use std::fmt::Write as _;

use crate::domain::code::{Category, Entity, Scope};
use crate::domain::container::clip;
use crate::domain::field::{Field, Tool};
use crate::error::{Error, Result};
use crate::repo_fs::Replace;
use crate::service::code::{ctx, path_error};
use crate::service::App;
use crate::store::{self, code as db};

pub struct Node {
    pub entity: Entity,
    pub parents: Vec<String>,
    pub categories: Vec<Category>,
}

pub struct Overview {
    pub project_name: String,
    pub repo_path: String,
    pub categories: Vec<Category>,
    pub nodes: Vec<Node>,
    pub by_scope: Vec<(Scope, i64)>,
    pub references: i64,
    pub key_files: Vec<(String, i64)>,
    pub written: Option<String>,
}

/// Where an overview is written: a checked repository-relative path, and whether
/// a file Cairn did not write may be replaced.
pub struct Output {
    pub path: String,
    pub overwrite: bool,
}

pub async fn overview(app: &App, project_id: &str, output: Option<&Output>) -> Result<Overview> {
    let c = ctx(app, project_id).await?;
    let mut conn = app.store.read().await?;
    let project = store::project::get(&mut conn, project_id)
        .await?
        .ok_or_else(|| Error::not_found("project", project_id))?;
    let categories = db::categories(&mut conn, project_id).await?;
    let mut nodes = Vec::new();
    for e in db::entities_of_project(&mut conn, project_id).await? {
        if e.scope > Scope::Namespace && output.is_none() {
            continue;
        }
        let parents = db::parents_of(&mut conn, &e.id)
            .await?
            .into_iter()
            .map(|p| p.id)
            .collect();
        let cats = db::categories_of(&mut conn, &e.id).await?;
        nodes.push(Node {
            entity: e,
            parents,
            categories: cats,
        });
    }
    let counts = db::scope_counts(&mut conn, project_id).await?;
    let by_scope = Scope::ALL
        .iter()
        .map(|s| {
            (
                *s,
                counts
                    .iter()
                    .find(|(n, _)| n == s.as_str())
                    .map(|c| c.1)
                    .unwrap_or(0),
            )
        })
        .collect();
    let references = db::count_references(&mut conn, project_id).await?;
    let mut key_files = db::document_counts(&mut conn, project_id).await?;
    key_files.truncate(10);
    drop(conn);
    let mut o = Overview {
        project_name: project.name,
        repo_path: c.root.to_string_lossy().into_owned(),
        categories,
        nodes,
        by_scope,
        references,
        key_files,
        written: None,
    };
    if let Some(out) = output {
        let marker = marker();
        let replace = if out.overwrite {
            Replace::Any
        } else {
            Replace::IfMarked(&marker)
        };
        c.fs.write(&out.path, markdown(&o).as_bytes(), replace)
            .map_err(|e| path_error(Field::OutputPath, e))?;
        o.written = Some(out.path.clone());
        o.nodes.retain(|n| n.entity.scope <= Scope::Namespace);
    }
    Ok(o)
}

/// The last line of every overview Cairn writes: a later overview may replace a file
/// that carries it; any other file is replaced only when the caller says so.
pub fn marker() -> String {
    format!(
        "<!-- written by cairn {}: calling it again replaces this file -->",
        Tool::ProjectOverview
    )
}

fn markdown(o: &Overview) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "# Project Overview: {}\n", o.project_name);
    let of = |scope: Scope| o.nodes.iter().filter(move |n| n.entity.scope == scope);
    let _ = writeln!(s, "## Purpose\n");
    for n in of(Scope::Domain) {
        let _ = writeln!(s, "**{}**: {}\n", n.entity.name, n.entity.description);
    }
    let _ = writeln!(s, "## Features\n");
    for n in of(Scope::Feature) {
        let _ = writeln!(
            s,
            "- **{}**: {}",
            n.entity.name,
            clip(&n.entity.description, 300)
        );
    }
    let _ = writeln!(s, "\n## Architecture\n");
    for ns in of(Scope::Namespace) {
        let _ = writeln!(
            s,
            "### {}\n\n{}\n",
            ns.entity.name,
            clip(&ns.entity.description, 300)
        );
        for comp in of(Scope::Component).filter(|c| c.parents.contains(&ns.entity.id)) {
            let _ = writeln!(
                s,
                "- **{}**: {}",
                comp.entity.name,
                clip(&comp.entity.description, 200)
            );
        }
        let _ = writeln!(s);
    }
    let _ = writeln!(s, "## Entry Points\n");
    for u in of(Scope::Unit).filter(|u| {
        u.categories.iter().any(|c| {
            c.name.eq_ignore_ascii_case("entrypoint") || c.name.eq_ignore_ascii_case("entry point")
        }) || u.entity.name == "main"
    }) {
        let _ = writeln!(
            s,
            "- **{}**: {}",
            u.entity.name,
            clip(&u.entity.description, 200)
        );
    }
    let _ = writeln!(s, "\n## Key Files\n");
    for (path, n) in &o.key_files {
        let _ = writeln!(s, "- `{path}` ({n} reference(s))");
    }
    let _ = writeln!(s, "\n{}", marker());
    s
}
