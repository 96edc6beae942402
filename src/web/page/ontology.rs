//! The domain ontology: the attached repository and its sync, the classes a page at a
//! time (filtered by words in their IRI or terms) with their direct parents in the
//! reasoner's taxonomy, one class in full (`?iri=`: definition, asserted and inferred
//! axioms with what each inference follows from, related notes, the page), and the
//! proposals waiting for a human.

use std::fmt::Write as _;

use crate::domain::ontology::records::ProposalState;
use crate::domain::ontology::EntityKind;
use crate::domain::Project;
use crate::error::{Error, Result};
use crate::service::ontology::{self, read, sync};
use crate::web::html::{enc, esc, excerpt, link, pager};
use crate::web::page::{Req, PAGE};

/// Problems of the last sync listed on the page (the rest are counted).
const PROBLEMS_SHOWN: usize = 10;

pub async fn render(req: &Req<'_>, project: &Project, base: &str) -> Result<String> {
    let mut b = String::from("<h1>Ontology</h1>");
    let status = match sync::status(req.app, &project.id).await {
        Ok(s) => s,
        Err(Error::InvalidOperation { .. } | Error::Validation { .. }) => {
            b.push_str(
                "<p class=\"mut\">No ontology repository. An agent attaches one with \
                 <code>manage_ontology</code> (<code>operation: attach</code>, <code>repoPath</code>), \
                 then <code>operation: sync</code>.</p>",
            );
            return Ok(b);
        }
        Err(e) => return Err(e),
    };
    let repo = &status.repo;
    let _ = write!(
        b,
        "<p class=\"mut\"><code>{}</code> · pages in <code>{}</code> · branch <code>{}</code> · synced {}</p>",
        esc(&repo.repo_path),
        esc(if repo.pages_dir.is_empty() { "/" } else { &repo.pages_dir }),
        esc(&repo.base_branch),
        match (&repo.synced_commit, &repo.synced_at) {
            (Some(c), Some(at)) => format!("<code>{}</code> at {}", esc(&excerpt(c, 12)), esc(at)),
            _ => "never".to_string(),
        }
    );
    if let (Some(head), Some(synced)) = (&status.head, &repo.synced_commit) {
        if head != synced {
            b.push_str(
                "<p class=\"err\">The base branch moved since the last sync: sync to see it.</p>",
            );
        }
    }
    if !status.problems.is_empty() {
        let _ = write!(
            b,
            "<details><summary class=\"err\">{} page problem{} at the last sync</summary><ul>",
            status.problems.len(),
            if status.problems.len() == 1 { "" } else { "s" }
        );
        for p in status.problems.iter().take(PROBLEMS_SHOWN) {
            let _ = write!(
                b,
                "<li><code>{}:{}</code> {}</li>",
                esc(&p.file),
                p.line,
                esc(&p.message)
            );
        }
        b.push_str("</ul></details>");
    }
    if repo.synced_commit.is_none() {
        b.push_str("<p class=\"mut\">Not synced yet: an agent calls <code>manage_ontology</code> with <code>operation: sync</code>.</p>");
        proposals(req, project, base, &mut b).await?;
        return Ok(b);
    }
    if let Some(iri) = req.param("iri").filter(|s| !s.trim().is_empty()) {
        class(req, project, base, iri, &mut b).await?;
    }
    classes(req, project, base, &mut b).await?;
    proposals(req, project, base, &mut b).await?;
    Ok(b)
}

/// The classes a page at a time, with a filter box.
async fn classes(req: &Req<'_>, project: &Project, base: &str, b: &mut String) -> Result<()> {
    let (_, served) = ontology::served(req.app, &project.id).await?;
    let ix = &served.index;
    let q = req.param("q").unwrap_or("").trim().to_string();
    let words = q.to_lowercase();
    let unsat: std::collections::HashSet<&str> =
        ix.classification.unsatisfiable().into_iter().collect();
    // Words in the IRI, the preferred term or an alternative term.
    let named = |iri: &str| {
        iri.to_lowercase().contains(&words)
            || ix.term(iri).to_lowercase().contains(&words)
            || ix.ontology.entity(iri).is_some_and(|e| {
                e.meta
                    .alt_terms()
                    .iter()
                    .any(|t| t.to_lowercase().contains(&words))
            })
    };
    let matching: Vec<&String> = ix
        .ontology
        .iris(EntityKind::Class)
        .filter(|iri| words.is_empty() || named(iri))
        .collect();
    let offset = req.offset("offset");
    let _ = write!(
        b,
        "<h2 id=\"classes\">Classes <span class=\"mut\">{}</span></h2>\
         <form method=\"get\" action=\"{}#classes\"><input name=\"q\" value=\"{}\" placeholder=\"words in an IRI or term\"> \
         <button type=\"submit\">Filter</button></form>",
        matching.len(),
        esc(base),
        esc(&q)
    );
    b.push_str("<table><tr><th>Class</th><th>Term</th><th>Parents</th><th>Definition</th></tr>");
    // A class opened from the list keeps the list's filter and page.
    let mut here = format!("{base}?");
    if !q.is_empty() {
        here.push_str(&format!("q={}&", enc(&q)));
    }
    if offset > 0 {
        here.push_str(&format!("offset={offset}&"));
    }
    let start = usize::try_from(offset)
        .unwrap_or(usize::MAX)
        .min(matching.len());
    let shown = &matching[start..(start + PAGE as usize).min(matching.len())];
    for iri in shown {
        let def = ix
            .ontology
            .entity(iri)
            .and_then(|e| e.meta.definition())
            .unwrap_or("");
        let parents: Vec<String> = ix
            .classification
            .direct_parents(iri)
            .into_iter()
            .map(|p| format!("<code>{}</code>", esc(p)))
            .collect();
        let _ = write!(
            b,
            "<tr data-filter class=\"class\"><td>{}{}</td><td>{}</td><td>{}</td><td>{}</td></tr>",
            link(
                &format!("{here}iri={}#class", enc(iri)),
                &format!("<code>{}</code>", esc(iri))
            ),
            if unsat.contains(iri.as_str()) {
                " <span class=\"badge b-stale\">unsatisfiable</span>"
            } else {
                ""
            },
            esc(&ix.term(iri)),
            parents.join(" "),
            esc(&excerpt(def, 200))
        );
    }
    b.push_str("</table>");
    let mut page_base = base.to_string();
    for (k, v) in [("q", q.as_str()), ("iri", req.param("iri").unwrap_or(""))] {
        if !v.is_empty() {
            page_base.push(if page_base.contains('?') { '&' } else { '?' });
            page_base.push_str(&format!("{k}={}", enc(v)));
        }
    }
    b.push_str(&pager(
        &page_base,
        "offset",
        offset,
        PAGE,
        shown.len(),
        matching.len() as i64,
    ));
    Ok(())
}

/// One class in full, as `ontology_read` answers it.
async fn class(
    req: &Req<'_>,
    project: &Project,
    base: &str,
    iri: &str,
    b: &mut String,
) -> Result<()> {
    let note = match read::read(req.app, &project.id, iri).await {
        Ok(n) => n,
        Err(e @ (Error::NotFound { .. } | Error::Validation { .. })) => {
            let _ = write!(b, "<p class=\"err\">{}</p>", esc(&e.to_string()));
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let ix = &note.served.index;
    let class_link = |iri: &str| {
        link(
            &format!("{base}?iri={}", enc(iri)),
            &format!("<code>{}</code>", esc(iri)),
        )
    };
    let _ = write!(
        b,
        "<section class=\"box\" id=\"class\"><h2>{} <span class=\"mut\">{}</span></h2>",
        esc(&ix.term(&note.iri)),
        esc(&note.iri)
    );
    if let Some(def) = ix
        .ontology
        .entity(&note.iri)
        .and_then(|e| e.meta.definition())
    {
        let _ = write!(b, "<p>{}</p>", esc(def));
    }
    if let Some(why) = &note.unsatisfiable {
        b.push_str("<p class=\"err\">Unsatisfiable, because of:</p><ul>");
        for s in why {
            let (axiom, file, line) = read::cite(s);
            let _ = write!(
                b,
                "<li><code>{}</code> <span class=\"mut\">{}:{line}</span></li>",
                esc(&axiom),
                esc(&file)
            );
        }
        b.push_str("</ul>");
    }
    if !note.parents.is_empty() {
        let parents: Vec<String> = note.parents.iter().map(|p| class_link(p)).collect();
        let _ = write!(b, "<p>Parents: {}</p>", parents.join(" "));
    }
    b.push_str("<h3>Axioms</h3><table><tr><th>Axiom</th><th>Stated</th></tr>");
    for a in &note.axioms {
        let why = if a.inferred {
            let causes: Vec<String> = a
                .because
                .iter()
                .map(|s| {
                    let (axiom, file, line) = read::cite(s);
                    format!(
                        "<code>{}</code> <span class=\"mut\">{}:{line}</span>",
                        esc(&axiom),
                        esc(&file)
                    )
                })
                .collect();
            format!(
                "inferred from {}",
                if causes.is_empty() {
                    "the taxonomy".into()
                } else {
                    causes.join("; ")
                }
            )
        } else {
            match &a.at {
                Some((file, line)) => format!("<span class=\"mut\">{}:{line}</span>", esc(file)),
                None => String::new(),
            }
        };
        let _ = write!(
            b,
            "<tr class=\"axiom{}\"><td><code>{} {} {}</code></td><td>{why}</td></tr>",
            if a.inferred { " inferred" } else { "" },
            esc(&a.subject),
            esc(a.kind),
            esc(&a.object)
        );
    }
    b.push_str("</table>");
    if !note.related.is_empty() {
        b.push_str("<h3>Related</h3><ul>");
        for r in &note.related {
            let _ = write!(
                b,
                "<li>{} <code>{}</code> {}{}</li>",
                if r.outgoing { "→" } else { "←" },
                esc(&r.rel_type),
                class_link(&r.iri),
                if r.inferred {
                    " <span class=\"mut\">(inferred)</span>"
                } else {
                    ""
                }
            );
        }
        b.push_str("</ul>");
    }
    if let Some(path) = &note.path {
        let _ = write!(
            b,
            "<details><summary>Page <code>{}</code></summary><pre>{}</pre></details>",
            esc(path),
            esc(&note.markdown)
        );
    }
    b.push_str("</section>");
    Ok(())
}

/// Proposals still waiting for a human (staged or pushed), newest first.
async fn proposals(req: &Req<'_>, project: &Project, base: &str, b: &mut String) -> Result<()> {
    let offset = req.offset("poffset");
    let open = [ProposalState::Staged, ProposalState::Pushed];
    let (rows, total) = sync::proposals(req.app, &project.id, &open, PAGE, offset).await?;
    let _ = write!(
        b,
        "<h2 id=\"proposals\">Open proposals <span class=\"mut\">{total}</span></h2>"
    );
    if rows.is_empty() && offset == 0 {
        b.push_str("<p class=\"mut\">None waiting for review.</p>");
        return Ok(());
    }
    b.push_str("<table><tr><th>Proposal</th><th>Branch</th><th>By</th><th>Quality</th><th>Created</th></tr>");
    for p in &rows {
        let target = p
            .target_iri
            .as_deref()
            .or(p.term_id.as_deref())
            .unwrap_or("");
        // A URL an earlier Cairn kept unchecked is shown as text unless it is http(s).
        let branch = match &p.pr_url {
            Some(url) => format!(
                "<code>{}</code> · {}",
                esc(&p.branch),
                link(url, &format!("pull request {}", esc(&excerpt(url, 120))))
            ),
            None => format!("<code>{}</code>", esc(&p.branch)),
        };
        let _ = write!(
            b,
            "<tr data-filter class=\"proposal\"><td>{} <code>{}</code><div class=\"mut\">{}</div></td><td>{branch}{}</td>\
             <td>{}</td><td>{}</td><td class=\"mut\">{}</td></tr>",
            esc(&p.operation),
            esc(target),
            esc(&excerpt(&p.task_description, 200)),
            p.push_error
                .as_deref()
                .map(|e| format!("<div class=\"err\">{}</div>", esc(&excerpt(e, 200))))
                .unwrap_or_default(),
            esc(&p.agent_type),
            p.quality_score.map(|q| format!("{q:.2}")).unwrap_or_default(),
            esc(&p.created_at)
        );
    }
    b.push_str("</table>");
    b.push_str(&pager(base, "poffset", offset, PAGE, rows.len(), total));
    Ok(())
}
