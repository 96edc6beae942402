//! One task (`/task/{id}`, linked from the board's cards and the list of tasks
//! without a project): its fields, the edges into and out of
//! it with each other end's status, its open blockers with the refusal `advance`
//! would answer now (a NO_OP blocker with the reason given when it was blocked), its
//! briefing, compactly, and its sections. All of it from one read (`composed::task_view`), each
//! list capped and the rest counted.

use std::fmt::Write as _;

use crate::domain::container::Dependency as Edge;
use crate::error::Result;
use crate::service::brief::Note;
use crate::service::composed::{self, TaskView};
use crate::web::html::{enc, esc, excerpt, link};
use crate::web::page::Req;

/// Sections shown, at most, and the characters of each.
pub const SECTIONS_MAX: usize = 20;
pub const SECTION_CHARS: usize = 2_000;
/// Edges shown per direction, at most.
pub const EDGES_MAX: usize = 50;
/// Items shown per part of the briefing, at most.
pub const BRIEF_MAX: usize = 10;
/// Characters of the description shown.
const DESCRIPTION_CHARS: usize = 4_000;

/// The task view: its title for the layout, its project (id, name) when it has one,
/// and the body.
pub async fn render(req: &Req<'_>, id: &str) -> Result<(String, Option<(String, String)>, String)> {
    let id = crate::domain::id::parse("task", id)?;
    let TaskView {
        brief,
        dependencies,
        dependents,
        state,
        names,
    } = composed::task_view(req.app, &id).await?;
    let t = &brief.task;
    let mut b = String::new();
    let _ = write!(
        b,
        "<h1 id=\"task\">{}</h1><p><span class=\"badge\">{}</span> {} priority{}",
        esc(&t.name),
        t.status.as_str(),
        t.priority.as_str(),
        t.complexity
            .map(|c| format!(", complexity {c}"))
            .unwrap_or_default()
    );
    let mut wher = Vec::new();
    if let Some(f) = t.feature_id.as_ref() {
        wher.push(format!(
            "feature {}",
            esc(names.get(f).map_or(f.as_str(), String::as_str))
        ));
    }
    let project = t.project_id.as_ref().map(|p| {
        (
            p.clone(),
            names.get(p).cloned().unwrap_or_else(|| p.clone()),
        )
    });
    match &project {
        Some((p, name)) => wher.push(format!(
            "project {}",
            link(&format!("/p/{}/board", enc(p)), &esc(name))
        )),
        None => wher.push("no project".into()),
    }
    let _ = write!(
        b,
        " · {} · version {} · updated {}</p>",
        wher.join(" · "),
        t.version,
        esc(&t.updated_at)
    );
    if !t.tags.is_empty() {
        let tags: Vec<String> = t
            .tags
            .iter()
            .map(|g| format!("<code>{}</code>", esc(g)))
            .collect();
        let _ = write!(b, "<p class=\"mut\">tags {}</p>", tags.join(" "));
    }
    if !t.summary.is_empty() {
        let _ = write!(b, "<p id=\"summary\">{}</p>", esc(&t.summary));
    }
    if let Some(d) = t.description.as_deref().filter(|d| !d.trim().is_empty()) {
        let _ = write!(
            b,
            "<pre id=\"description\">{}</pre>",
            esc(&excerpt(d, DESCRIPTION_CHARS))
        );
    }

    // Where it stands: the refusal is the workflow's own, word for word.
    b.push_str("<section class=\"box\" id=\"workflow\"><h2>Workflow</h2>");
    let _ = write!(
        b,
        "<p class=\"mut\">pipeline {}</p>",
        esc(&state.pipeline.join(" → "))
    );
    if !state.blockers.is_empty() {
        b.push_str("<ul id=\"blockers\">");
        for e in state.blockers.iter().take(EDGES_MAX) {
            let _ = write!(
                b,
                "<li><span class=\"badge b-blocked\">Blocked</span> by {}</li>",
                other_end(e, true)
            );
        }
        b.push_str("</ul>");
        more(&mut b, state.blockers.len(), EDGES_MAX, "blockers");
    }
    match (&state.advance_refused, state.next) {
        (Some(e), _) => {
            let _ = write!(
                b,
                "<p id=\"advance\">Advance answers <code>{}</code>: <span class=\"err\">{}</span></p>",
                esc(e.code()),
                esc(&e.to_string())
            );
        }
        (None, Some(n)) => {
            let _ = write!(
                b,
                "<p id=\"advance\">Advance moves it to <strong>{}</strong>.</p>",
                n.as_str()
            );
        }
        (None, None) => b.push_str("<p id=\"advance\" class=\"mut\">Nothing to advance to.</p>"),
    }
    b.push_str("</section>");

    // Dependencies both ways, each other end with its status.
    b.push_str("<section class=\"box\" id=\"dependencies\"><h2>Dependencies</h2>");
    if dependencies.is_empty() && dependents.is_empty() {
        b.push_str("<p class=\"mut\">None.</p>");
    }
    edges(
        &mut b,
        "Blocked by / related from",
        "deps-in",
        &dependencies,
        true,
    );
    edges(
        &mut b,
        "Blocks / related to",
        "deps-out",
        &dependents,
        false,
    );
    b.push_str("</section>");

    // The briefing, as `brief` composes it: a line per item, the first few per part.
    b.push_str("<section class=\"box\" id=\"briefing\"><h2>Briefing</h2><dl>");
    let knowledge: Vec<String> = brief
        .knowledge
        .iter()
        .map(|k| {
            format!(
                "{}{} <span class=\"mut\">{}</span>",
                esc(&k.atom.name),
                k.molecule
                    .as_ref()
                    .map(|(_, m)| format!(" <span class=\"mut\">in {}</span>", esc(m)))
                    .unwrap_or_default(),
                esc(&k.paths.join(", "))
            )
        })
        .collect();
    part(&mut b, "Knowledge", &knowledge);
    if !brief.unmatched_paths.is_empty() {
        let gaps: Vec<String> = brief
            .unmatched_paths
            .iter()
            .map(|p| format!("<code>{}</code>", esc(p)))
            .collect();
        part(&mut b, "No atom covers", &gaps);
    }
    let code: Vec<String> = brief
        .code
        .iter()
        .map(|c| {
            let stale = c.references.iter().filter(|r| r.reason.is_some()).count();
            format!(
                "{} <span class=\"mut\">{} reference(s){}</span>",
                esc(&c.entity.name),
                c.references.len(),
                if stale > 0 {
                    format!(", {stale} stale")
                } else {
                    String::new()
                }
            )
        })
        .collect();
    part(&mut b, "Code", &code);
    let memory: Vec<String> = brief
        .memory
        .iter()
        .map(|h| {
            format!(
                "{} <span class=\"mut\">{}</span>",
                esc(&excerpt(&h.atom.statement, 200)),
                esc(h.atom.atom_type().as_wire())
            )
        })
        .collect();
    part(&mut b, "Memory", &memory);
    let classes: Vec<String> = brief
        .classes
        .iter()
        .map(|c| format!("<code>{}</code>", esc(c)))
        .collect();
    part(&mut b, "Ontology", &classes);
    b.push_str("</dl>");
    if !brief.notes.is_empty() {
        b.push_str("<ul class=\"mut\">");
        for (p, n) in &brief.notes {
            let text = match n {
                Note::Text(t) => t.clone(),
                Note::NoRepository => "no repository is bound to the project".into(),
                Note::FirstFiles { read, of } => {
                    format!("only the first {read} of {of} files read")
                }
            };
            let _ = write!(b, "<li>{p}: {}</li>", esc(&excerpt(&text, 300)));
        }
        b.push_str("</ul>");
    }
    b.push_str("</section>");
    // Sections, as text: their content is whatever an agent wrote, never markup.
    let _ = write!(
        b,
        "<section class=\"box\" id=\"sections\"><h2>Sections <span class=\"mut\">{}</span></h2>",
        brief.sections.len()
    );
    for s in brief.sections.iter().take(SECTIONS_MAX) {
        let _ = write!(
            b,
            "<article class=\"section\"><h3>{}</h3>{}<pre>{}</pre></article>",
            esc(&s.title),
            if s.usage_description.is_empty() {
                String::new()
            } else {
                format!("<p class=\"mut\">{}</p>", esc(&s.usage_description))
            },
            esc(&excerpt(&s.content, SECTION_CHARS))
        );
    }
    more(&mut b, brief.sections.len(), SECTIONS_MAX, "sections");
    if brief.sections.is_empty() {
        b.push_str("<p class=\"mut\">No section.</p>");
    }
    b.push_str("</section>");

    Ok((format!("Task — {}", t.name), project, b))
}

/// One part of the briefing: its first [`BRIEF_MAX`] lines (HTML already escaped).
fn part(b: &mut String, label: &str, lines: &[String]) {
    let _ = write!(
        b,
        "<dt>{label} <span class=\"mut\">{}</span></dt>",
        lines.len()
    );
    if lines.is_empty() {
        b.push_str("<dd class=\"mut\">nothing</dd>");
        return;
    }
    for l in lines.iter().take(BRIEF_MAX) {
        let _ = write!(b, "<dd>{l}</dd>");
    }
    if lines.len() > BRIEF_MAX {
        let _ = write!(
            b,
            "<dd class=\"mut more\">{} more</dd>",
            lines.len() - BRIEF_MAX
        );
    }
}

/// A list of edges, the first [`EDGES_MAX`], the rest counted.
fn edges(b: &mut String, label: &str, id: &str, list: &[Edge], incoming: bool) {
    if list.is_empty() {
        return;
    }
    let _ = write!(b, "<h3>{label}</h3><ul id=\"{id}\">");
    for e in list.iter().take(EDGES_MAX) {
        let _ = write!(
            b,
            "<li><code>{}</code> {}</li>",
            esc(&e.kind),
            other_end(e, incoming)
        );
    }
    b.push_str("</ul>");
    more(b, list.len(), EDGES_MAX, "edges");
}

/// The end of `e` that is not this task: linked, with its status; or the NO_OP
/// blocker with its reason.
fn other_end(e: &Edge, incoming: bool) -> String {
    let other = if incoming {
        e.from_id.as_deref()
    } else {
        Some(e.to_id.as_str())
    };
    match other {
        Some(id) => format!(
            "{} <span class=\"badge\">{}</span>",
            link(
                &format!("/task/{}", enc(id)),
                &esc(e.other_name.as_deref().unwrap_or(id))
            ),
            esc(e.other_status.as_deref().unwrap_or("?"))
        ),
        None => format!(
            "<code>NO_OP</code> outside Cairn: <span class=\"reason\">{}</span>",
            esc(e.reason.as_deref().unwrap_or("no reason given"))
        ),
    }
}

/// "N more {what}" when `total` passes `shown`.
fn more(b: &mut String, total: usize, shown: usize, what: &str) {
    if total > shown {
        let _ = write!(
            b,
            "<p class=\"mut more\">{} more {what} not shown</p>",
            total - shown
        );
    }
}
