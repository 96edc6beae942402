//! The code ontology: the entity tree by scope (Domain > Feature > Namespace), the
//! entities of any scope a page at a time, one entity with its references, and, on
//! demand (they read git and ask a language server), the documents whose references
//! changed and one document's analysis with each reference's staleness.

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::domain::code::{EntityFilter, Reference, Scope};
use crate::domain::Project;
use crate::error::{Error, Result};
use crate::service::code::{self, analysis, overview};
use crate::web::html::{enc, esc, excerpt, link, pager};
use crate::web::page::{Req, PAGE};

pub async fn render(req: &Req<'_>, project: &Project, base: &str) -> Result<String> {
    let app = req.app;
    let mut b = String::from("<h1>Code</h1>");
    let ov = match overview::overview(app, &project.id, None).await {
        Ok(o) => o,
        Err(Error::InvalidOperation { message, .. }) => {
            let _ = write!(
                b,
                "<p class=\"mut\">{}</p><p class=\"mut\">An agent binds a git repository with \
                 <code>init_project</code> (<code>projectId</code>, <code>repoPath</code>).</p>",
                esc(&message)
            );
            return Ok(b);
        }
        Err(e) => return Err(e),
    };
    let counts: Vec<String> = ov
        .by_scope
        .iter()
        .map(|(s, n)| format!("{n} {}", s.as_str()))
        .collect();
    let _ = write!(
        b,
        "<p class=\"mut\">Repository <code>{}</code> · {} · {} references</p>",
        esc(&ov.repo_path),
        counts.join(", "),
        ov.references
    );
    let _ = write!(
        b,
        "<form class=\"box\" id=\"analyze-form\" method=\"get\" action=\"{}\">\
         <label for=\"analyze\"><strong>Analyze a document</strong> <span class=\"mut\">its references' \
         staleness and its untracked symbols (reads git and asks the language server)</span></label> \
         <input id=\"analyze\" type=\"text\" name=\"analyze\" size=\"50\" value=\"{}\" spellcheck=\"false\"> \
         <button type=\"submit\">Analyze</button> {}</form>",
        esc(base),
        esc(req.param("analyze").unwrap_or("")),
        link(
            &format!("{base}?changes=1#changes"),
            "Check every reference against the working tree"
        )
    );

    if let Some(path) = req.param("analyze").filter(|p| !p.trim().is_empty()) {
        analyze(req, &mut b, &project.id, path.trim(), base).await?;
    }
    if let Some(id) = req.param("entity") {
        entity(req, &mut b, id, base).await?;
    }
    if req.param("changes").is_some() {
        changes(req, &mut b, &project.id, base).await?;
    }

    // The tree of the upper scopes, from the overview.
    b.push_str("<h2>Entity tree</h2>");
    if ov.nodes.is_empty() {
        b.push_str("<p class=\"mut\">No Domain, Feature or Namespace entity yet.</p>");
    } else {
        let mut children: HashMap<&str, Vec<usize>> = HashMap::new();
        let mut roots = Vec::new();
        let known: std::collections::HashSet<&str> =
            ov.nodes.iter().map(|n| n.entity.id.as_str()).collect();
        for (i, n) in ov.nodes.iter().enumerate() {
            let parents: Vec<&str> = n
                .parents
                .iter()
                .map(String::as_str)
                .filter(|p| known.contains(p))
                .collect();
            if parents.is_empty() {
                roots.push(i);
            }
            for p in parents {
                children.entry(p).or_default().push(i);
            }
        }
        b.push_str("<div class=\"tree\">");
        tree(&mut b, &ov.nodes, &roots, &children, base, 0);
        b.push_str("</div>");
    }

    // Entities of one scope, a page at a time.
    let scope = req
        .param("scope")
        .and_then(|s| {
            Scope::ALL
                .iter()
                .copied()
                .find(|x| x.as_str().eq_ignore_ascii_case(s))
        })
        .unwrap_or(Scope::Component);
    let offset = req.offset("offset");
    let (ents, total) = code::find_entities(
        app,
        &EntityFilter {
            project_id: &project.id,
            scope: Some(scope),
            category_id: None,
            parent_id: None,
            document_path: None,
            name: None,
            limit: PAGE,
            offset,
        },
    )
    .await?;
    let _ = write!(b, "<h2 id=\"entities\">Entities</h2><form method=\"get\" action=\"{}#entities\">Scope <select name=\"scope\">", esc(base));
    for s in Scope::ALL {
        let _ = write!(
            b,
            "<option{}>{}</option>",
            if s == scope { " selected" } else { "" },
            s.as_str()
        );
    }
    let _ = write!(b, "</select> <button type=\"submit\">Show</button> <span class=\"mut\">{total} {}</span></form>", scope.as_str());
    b.push_str("<table><tr><th>Entity</th><th>Categories</th><th>Description</th></tr>");
    for (e, cats) in &ents {
        let cats: Vec<String> = cats.iter().map(|c| esc(&c.name)).collect();
        let _ = write!(
            b,
            "<tr data-filter><td>{}</td><td>{}</td><td>{}</td></tr>",
            link(&format!("{base}?entity={}", enc(&e.id)), &esc(&e.name)),
            cats.join(", "),
            esc(&excerpt(&e.description, 200))
        );
    }
    b.push_str("</table>");
    b.push_str(&pager(
        &format!("{base}?scope={}", scope.as_str()),
        "offset",
        offset,
        PAGE,
        ents.len(),
        total,
    ));

    if !ov.key_files.is_empty() {
        b.push_str("<h2>Documents with the most references</h2><table><tr><th>Document</th><th>References</th><th></th></tr>");
        for (path, n) in &ov.key_files {
            let _ = write!(
                b,
                "<tr data-filter><td><code>{}</code></td><td>{n}</td><td>{}</td></tr>",
                esc(path),
                link(&analyze_link(base, path), "analyze")
            );
        }
        b.push_str("</table>");
    }
    Ok(b)
}

fn analyze_link(base: &str, path: &str) -> String {
    format!("{base}?analyze={}#analysis", enc(path))
}

fn tree(
    b: &mut String,
    nodes: &[overview::Node],
    level: &[usize],
    children: &HashMap<&str, Vec<usize>>,
    base: &str,
    depth: usize,
) {
    // The upper scopes are three deep; the bound guards against a malformed graph.
    if depth > 8 {
        return;
    }
    b.push_str("<ul>");
    for &i in level {
        let n = &nodes[i];
        let _ = write!(
            b,
            "<li data-filter><span class=\"scope\">{}</span>{}",
            n.entity.scope.as_str(),
            link(
                &format!("{base}?entity={}#entity", enc(&n.entity.id)),
                &esc(&n.entity.name)
            )
        );
        if let Some(kids) = children.get(n.entity.id.as_str()) {
            tree(b, nodes, kids, children, base, depth + 1);
        }
        b.push_str("</li>");
    }
    b.push_str("</ul>");
}

async fn entity(req: &Req<'_>, b: &mut String, id: &str, base: &str) -> Result<()> {
    let id = crate::domain::id::parse("entity", id)?;
    let v = code::get_entity(req.app, &id).await?;
    let _ = write!(
        b,
        "<section id=\"entity\" class=\"box\"><h2>{} <span class=\"mut\">{}</span></h2>",
        esc(&v.entity.name),
        v.entity.scope.as_str()
    );
    if !v.entity.description.is_empty() {
        let _ = write!(b, "<pre>{}</pre>", esc(&v.entity.description));
    }
    let entity_link = |e: &crate::domain::code::Entity| {
        format!(
            "{} <span class=\"scope\">{}</span>",
            link(
                &format!("{base}?entity={}#entity", enc(&e.id)),
                &esc(&e.name)
            ),
            e.scope.as_str()
        )
    };
    if !v.categories.is_empty() {
        let cats: Vec<String> = v.categories.iter().map(|c| esc(&c.name)).collect();
        let _ = write!(b, "<p>Categories: {}</p>", cats.join(", "));
    }
    if !v.parents.is_empty() {
        let p: Vec<String> = v.parents.iter().map(entity_link).collect();
        let _ = write!(b, "<p>Belongs to: {}</p>", p.join(", "));
    }
    if !v.children.is_empty() {
        let c: Vec<String> = v.children.iter().take(200).map(entity_link).collect();
        let _ = write!(
            b,
            "<p>Children ({}): {}</p>",
            v.children.len(),
            c.join(", ")
        );
    }
    for e in &v.edges {
        let _ = write!(
            b,
            "<p class=\"mut\">{} {}</p>",
            esc(&e.kind),
            entity_link(&e.other)
        );
    }
    b.push_str("<table><tr><th>Reference</th><th>Lines</th><th>Recorded at</th><th></th></tr>");
    // Lines where the code is now, when it only moved since it was recorded.
    let now = analysis::current_of(req.app, &v.entity.project_id, &v.references).await;
    for (r, now) in v.references.iter().zip(now) {
        let (from, to) = now.unwrap_or((r.start_line, r.end_line));
        let _ = write!(
            b,
            "<tr><td>{}</td><td>{from}–{to}</td><td class=\"mut\"><code>{}</code></td><td>{}</td></tr>",
            reference_name(r),
            esc(&excerpt(&r.commit_sha, 10)),
            link(&analyze_link(base, &r.document_path), "analyze")
        );
    }
    b.push_str("</table></section>");
    Ok(())
}

fn reference_name(r: &Reference) -> String {
    let what = r
        .lsp_symbol
        .as_deref()
        .or(r.anchor.as_deref())
        .unwrap_or("lines");
    format!("<code>{}</code> {}", esc(&r.document_path), esc(what))
}

async fn changes(req: &Req<'_>, b: &mut String, project: &str, base: &str) -> Result<()> {
    let (files, total_refs) = analysis::changed_files(req.app, project).await?;
    let _ = write!(
        b,
        "<section id=\"changes\"><h2>Documents whose references changed</h2><p class=\"mut\">{} of the documents holding {total_refs} references.</p>",
        files.len()
    );
    if !files.is_empty() {
        b.push_str("<table><tr><th>Document</th><th>References</th><th>Stale</th><th></th></tr>");
        for f in &files {
            let state = if f.missing {
                match &f.renamed_to {
                    Some(to) => format!("missing, renamed to <code>{}</code>", esc(to)),
                    None => "missing".to_string(),
                }
            } else {
                f.stale.to_string()
            };
            let _ = write!(
                b,
                "<tr data-filter><td><code>{}</code></td><td>{}</td><td><span class=\"badge b-stale\">{}</span></td><td>{}</td></tr>",
                esc(&f.document_path),
                f.references,
                state,
                link(&analyze_link(base, &f.document_path), "analyze")
            );
        }
        b.push_str("</table>");
    }
    b.push_str("</section>");
    Ok(())
}

async fn analyze(
    req: &Req<'_>,
    b: &mut String,
    project: &str,
    path: &str,
    _base: &str,
) -> Result<()> {
    b.push_str("<section id=\"analysis\">");
    let a = match analysis::analyze(req.app, project, path, true).await {
        Ok(a) => a,
        Err(
            e
            @ (Error::NotFound { .. } | Error::Validation { .. } | Error::InvalidOperation { .. }),
        ) => {
            let _ = write!(b, "<p class=\"err\">{}</p></section>", esc(&e.to_string()));
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let stale = a.tracked.iter().filter(|s| s.reason.is_some()).count();
    let _ = write!(
        b,
        "<h2>Analysis of <code>{}</code></h2><p class=\"mut\">{} reference{}, {stale} stale · HEAD <code>{}</code>{}</p>",
        esc(&a.document_path),
        a.tracked.len(),
        if a.tracked.len() == 1 { "" } else { "s" },
        esc(&excerpt(&a.current_commit, 10)),
        if a.exists { "" } else { " · the document is gone" }
    );
    if let Some(e) = &a.lsp_error {
        let _ = write!(b, "<p class=\"err\">Language server: {}</p>", esc(e));
    }
    if !a.tracked.is_empty() {
        b.push_str(
            "<table><tr><th>Reference</th><th>Held by</th><th>Lines</th><th>State</th></tr>",
        );
        for s in &a.tracked {
            let r = &s.reference;
            let holders: Vec<String> = a
                .holders
                .get(&r.id)
                .map(|h| {
                    h.iter()
                        .map(|(_, name, scope)| {
                            format!("{} <span class=\"scope\">{}</span>", esc(name), esc(scope))
                        })
                        .collect()
                })
                .unwrap_or_default();
            let state = match s.reason {
                None if s.moved() => format!(
                    "<span class=\"badge b-fresh\">fresh</span>moved from lines {}–{}",
                    r.start_line, r.end_line
                ),
                None => "<span class=\"badge b-fresh\">fresh</span>".to_string(),
                Some(why) => {
                    let mut t = format!("<span class=\"badge b-stale\">stale</span>{}", esc(why));
                    if let Some((from, to)) = s.suggested {
                        let _ = write!(t, " · now lines {from}–{to}?");
                    }
                    if let Some(to) = &s.renamed_to {
                        let _ = write!(t, " · renamed to <code>{}</code>", esc(to));
                    }
                    t
                }
            };
            let _ = write!(
                b,
                "<tr class=\"ref\"><td>{}</td><td>{}</td><td>{}–{}</td><td>{state}</td></tr>",
                reference_name(r),
                holders.join(", "),
                s.now.0,
                s.now.1
            );
        }
        b.push_str("</table>");
    }
    if !a.untracked.is_empty() {
        let names: Vec<String> = a
            .untracked
            .iter()
            .take(100)
            .map(|s| format!("<code>{}</code>", esc(&s.name)))
            .collect();
        let _ = write!(
            b,
            "<p>Untracked symbols ({}): {}</p>",
            a.untracked.len(),
            names.join(", ")
        );
    }
    b.push_str("</section>");
    Ok(())
}
