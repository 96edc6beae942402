//! The knowledge graph: a box where a person pastes paths and reads the `context`
//! answer an agent would get, the molecules (a page at a time, each with its first
//! atoms), and the atoms with their globs (a page at a time, all of them, one
//! molecule's, or the orphans).

use std::fmt::Write as _;

use crate::domain::graph::{Atom, NodeKind};
use crate::domain::Project;
use crate::error::{Error, Result};
use crate::service::context::{self, ContextAtom, Options};
use crate::service::graph::{self, Node, SearchQuery};
use crate::web::html::{enc, esc, excerpt, link, pager};
use crate::web::page::{Req, PAGE};

/// Atoms shown under each molecule in the molecule list.
const ATOMS_PER_MOLECULE: i64 = 5;

/// The same default budget as `query_graph` context.
const DEFAULT_TOKENS: i64 = 4000;

pub async fn render(req: &Req<'_>, project: &Project, base: &str) -> Result<String> {
    let mut b = String::from("<h1>Knowledge</h1>");
    let paths_raw = req.param("paths").unwrap_or("");
    let _ = write!(
        b,
        "<form class=\"box\" id=\"context-form\" method=\"get\" action=\"{}\">\
         <label for=\"paths\"><strong>What do I need to know before touching these files?</strong> \
         <span class=\"mut\">Paste paths, one per line or comma-separated.</span></label>\
         <textarea id=\"paths\" name=\"paths\" spellcheck=\"false\">{}</textarea>\
         <p><button type=\"submit\">Show context</button></p></form>",
        esc(base),
        esc(paths_raw)
    );
    let paths: Vec<String> = paths_raw
        .split(['\n', ','])
        .map(|p| p.trim().trim_end_matches('\r').to_string())
        .filter(|p| !p.is_empty())
        .collect();
    if !paths.is_empty() {
        b.push_str("<section id=\"context-answer\">");
        let answer = context::context(
            req.app,
            &project.id,
            &paths,
            &Options {
                changelog_limit: 3,
                max_tokens: Some(DEFAULT_TOKENS),
            },
        )
        .await;
        match answer {
            Ok(c) => context_html(&mut b, &c),
            Err(e @ (Error::Validation { .. } | Error::InvalidOperation { .. })) => {
                let _ = write!(b, "<p class=\"err\">{}</p>", esc(&e.to_string()));
            }
            Err(e) => return Err(e),
        }
        b.push_str("</section>");
    }

    // Molecules.
    let moffset = req.offset("moffset");
    let (mols, mtotal) = graph::search(
        req.app,
        NodeKind::Molecule,
        &SearchQuery {
            project_id: Some(project.id.clone()),
            molecule_id: None,
            orphans_only: false,
            query: None,
            changelog_limit: 0,
            limit: PAGE,
            offset: moffset,
            min_score: None,
        },
    )
    .await?;
    let _ = write!(b, "<h2>Molecules <span class=\"mut\">{mtotal}</span></h2>");
    if mols.is_empty() && moffset == 0 {
        b.push_str("<p class=\"mut\">No molecule yet.</p>");
    } else {
        b.push_str("<table><tr><th>Molecule</th><th>Knowledge</th><th>Atoms</th></tr>");
    }
    for m in &mols {
        let Node::Molecule(m) = &m.node else { continue };
        let (atoms, total) =
            atoms_of(req, &project.id, Some(&m.id), false, 0, ATOMS_PER_MOLECULE).await?;
        let names: Vec<String> = atoms.iter().map(|a| esc(&a.name)).collect();
        let _ = write!(
            b,
            "<tr data-filter class=\"molecule\"><td><strong>{}</strong></td><td>{}</td>\
             <td>{}<div class=\"mut\">{}{}</div></td></tr>",
            esc(&m.name),
            esc(&excerpt(&m.knowledge, 240)),
            link(
                &format!("{base}?molecule={}#atoms", enc(&m.id)),
                &format!("{total} atom{}", if total == 1 { "" } else { "s" })
            ),
            names.join(", "),
            if total > atoms.len() as i64 {
                ", …"
            } else {
                ""
            }
        );
    }
    if !mols.is_empty() {
        b.push_str("</table>");
    }
    b.push_str(&pager(base, "moffset", moffset, PAGE, mols.len(), mtotal));

    // Atoms: all, one molecule's, or the orphans.
    let which = req.param("molecule").unwrap_or("");
    let (molecule, orphans, title) = match which {
        "" => (None, false, "Atoms".to_string()),
        "none" => (None, true, "Atoms in no molecule".to_string()),
        id => {
            let id = crate::domain::id::parse("molecule", id)?;
            let v = graph::get(req.app, NodeKind::Molecule, &id, 0).await?;
            let name = match &v.node {
                Node::Molecule(m) if m.project_id == project.id => m.name.clone(),
                _ => return Err(Error::not_found("molecule", id)),
            };
            (Some(id), false, format!("Atoms of {name}"))
        }
    };
    let offset = req.offset("offset");
    let (atoms, total) =
        atoms_of(req, &project.id, molecule.as_deref(), orphans, offset, PAGE).await?;
    let _ = write!(
        b,
        "<h2 id=\"atoms\">{} <span class=\"mut\">{total}</span></h2><p class=\"mut\">Show: \
         {} · {}</p>",
        esc(&title),
        link(&format!("{base}#atoms"), "all"),
        link(&format!("{base}?molecule=none#atoms"), "in no molecule")
    );
    b.push_str("<table><tr><th>Atom</th><th>Globs</th><th>Knowledge</th></tr>");
    for a in &atoms {
        let _ = write!(
            b,
            "<tr data-filter class=\"atom\"><td><strong>{}</strong></td><td>{}</td><td>{}</td></tr>",
            esc(&a.name),
            globs(&a.paths),
            esc(&excerpt(&a.knowledge, 300))
        );
    }
    b.push_str("</table>");
    let page_base = match which {
        "" => base.to_string(),
        w => format!("{base}?molecule={}", enc(w)),
    };
    b.push_str(&pager(
        &page_base,
        "offset",
        offset,
        PAGE,
        atoms.len(),
        total,
    ));
    Ok(b)
}

/// A page of the project's atoms: all, one molecule's (a molecule of this project,
/// checked by the caller), or those in none.
async fn atoms_of(
    req: &Req<'_>,
    project: &str,
    molecule: Option<&str>,
    orphans: bool,
    offset: i64,
    limit: i64,
) -> Result<(Vec<Atom>, i64)> {
    let (views, total) = graph::search(
        req.app,
        NodeKind::Atom,
        &SearchQuery {
            // A molecule's atoms are found by the molecule alone: naming the project
            // too lets SQLite count them by scanning every atom of the project.
            project_id: molecule.is_none().then(|| project.to_string()),
            molecule_id: molecule.map(str::to_string),
            orphans_only: orphans,
            query: None,
            changelog_limit: 0,
            limit,
            offset,
            min_score: None,
        },
    )
    .await?;
    let atoms = views
        .into_iter()
        .filter_map(|v| match v.node {
            Node::Atom(a) => Some(a),
            Node::Molecule(_) => None,
        })
        .collect();
    Ok((atoms, total))
}

fn globs(paths: &[String]) -> String {
    paths
        .iter()
        .map(|p| format!("<span class=\"glob\">{}</span>", esc(p)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// The `context` answer as a person reads it: molecules with their matched atoms,
/// the atoms in no molecule, what matched nothing, near misses, and the budget.
fn context_html(b: &mut String, c: &context::Context) {
    let atoms = c.molecules.iter().map(|m| m.atoms.len()).sum::<usize>() + c.orphan_atoms.len();
    let _ = write!(
        b,
        "<h2>Context for {} path{}</h2><p class=\"mut\">{atoms} atom{} matched.</p>",
        c.paths.len(),
        if c.paths.len() == 1 { "" } else { "s" },
        if atoms == 1 { "" } else { "s" }
    );
    for m in &c.molecules {
        let _ = write!(
            b,
            "<div class=\"ctx-molecule\"><h3>{} <span class=\"mut\">molecule</span></h3>",
            esc(&m.molecule.name)
        );
        if m.knowledge_omitted {
            b.push_str("<p class=\"mut\">Knowledge left out by the token budget.</p>");
        } else if !m.molecule.knowledge.is_empty() {
            let _ = write!(b, "<pre>{}</pre>", esc(&m.molecule.knowledge));
        }
        for a in &m.atoms {
            context_atom(b, a);
        }
        b.push_str("</div>");
    }
    for a in &c.orphan_atoms {
        context_atom(b, a);
    }
    if !c.unmatched_paths.is_empty() {
        let list: Vec<String> = c
            .unmatched_paths
            .iter()
            .map(|p| format!("<code>{}</code>", esc(p)))
            .collect();
        let _ = write!(
            b,
            "<p class=\"unmatched\">Matched by no atom: {}</p>",
            list.join(", ")
        );
    }
    for (path, why) in &c.refused_paths {
        let _ = write!(
            b,
            "<p class=\"err\"><code>{}</code>: {}</p>",
            esc(path),
            esc(why)
        );
    }
    for (path, misses) in &c.near_misses {
        let list: Vec<String> = misses
            .iter()
            .map(|n| {
                format!(
                    "{} <span class=\"glob\">{}</span>",
                    esc(&n.atom_name),
                    esc(&n.pattern)
                )
            })
            .collect();
        let _ = write!(
            b,
            "<p class=\"mut\">Near misses for <code>{}</code>: {}</p>",
            esc(path),
            list.join(", ")
        );
    }
    if let Some(budget) = &c.budget {
        let left: Vec<String> = budget.omitted_atoms.iter().map(|o| esc(&o.name)).collect();
        let _ = write!(
            b,
            "<p class=\"mut\">About {} of {} tokens.{}</p>",
            budget.estimated_tokens,
            budget.max_tokens,
            if left.is_empty() {
                String::new()
            } else {
                format!(" Left out by the budget: {}.", left.join(", "))
            }
        );
    }
}

fn context_atom(b: &mut String, a: &ContextAtom) {
    let _ = write!(
        b,
        "<div class=\"ctx-atom card\"><div class=\"t\">{}</div><div>{}</div>",
        esc(&a.atom.name),
        globs(&a.atom.paths)
    );
    for (path, pats) in &a.matched {
        let pats: Vec<String> = pats.iter().map(|p| esc(p)).collect();
        let _ = write!(
            b,
            "<div class=\"m\"><code>{}</code> matched by {}</div>",
            esc(path),
            pats.join(", ")
        );
    }
    if !a.atom.knowledge.is_empty() {
        let _ = write!(b, "<pre>{}</pre>", esc(&a.atom.knowledge));
    }
    for e in &a.changelog {
        let _ = write!(
            b,
            "<div class=\"m\">{} — {}</div>",
            esc(&e.created_at),
            esc(&e.summary)
        );
    }
    b.push_str("</div>");
}
