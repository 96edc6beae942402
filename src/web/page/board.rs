//! The task board: the next task, the features with their task counts, and the
//! tasks in one column per status (a page of [`PAGE`] cards each), blocked cards
//! marked with the names of their open blockers; each card links to its task view
//! (`task.rs`).

use std::collections::HashMap;
use std::fmt::Write as _;

use crate::domain::{Item, Project};
use crate::error::Result;
use crate::service::composed::{self, Board};
use crate::web::html::{enc, esc, excerpt, link, pager};
use crate::web::page::{Req, PAGE};

pub async fn render(req: &Req<'_>, project: &Project, base: &str) -> Result<String> {
    let foffset = req.offset("features");
    let shown = foffset.max(0) as usize..(foffset.max(0) + PAGE) as usize;
    // One read: the next task, the cards, their names and the counts agree.
    let Board {
        next,
        features,
        columns,
        names,
        counts: all,
        outside,
    } = composed::board(
        req.app,
        &project.id,
        PAGE,
        |s| req.offset(s.as_str()),
        shown,
    )
    .await?;

    let mut b = String::from("<h1>Board</h1>");
    if !project.summary.is_empty() {
        let _ = write!(b, "<p class=\"mut\">{}</p>", esc(&project.summary));
    }
    match &next {
        Some(t) => {
            let _ =
                write!(
                b,
                "<p id=\"next-task\"><span class=\"badge b-next\">Next</span><strong>{}</strong> \
                 <span class=\"mut\">{} priority{}</span></p>",
                esc(&t.name),
                t.priority.as_str(),
                t.complexity.map(|c| format!(", complexity {c}")).unwrap_or_default()
            );
        }
        None => b.push_str(
            "<p id=\"next-task\" class=\"mut\">No task to start: none is NEW and unblocked.</p>",
        ),
    }

    if !features.is_empty() {
        let shown: Vec<&Item> = features
            .iter()
            .skip(foffset as usize)
            .take(PAGE as usize)
            .collect();
        b.push_str("<h2>Features</h2><table><tr><th>Feature</th><th>Status</th><th>Priority</th><th>Tasks</th></tr>");
        for f in &shown {
            let counts: Vec<String> = all
                .get(&f.id)
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .filter(|(_, n)| *n > 0)
                .map(|(s, n)| format!("{n} {}", esc(s)))
                .collect();
            let _ = write!(
                b,
                "<tr data-filter class=\"feature{}\"><td>{}{}</td><td>{}</td><td>{}</td><td class=\"mut\">{}</td></tr>",
                if f.blocked_by.is_empty() { "" } else { " blocked" },
                esc(&f.name),
                blockers(f, &names, &outside),
                f.status.as_str(),
                f.priority.as_str(),
                counts.join(", ")
            );
        }
        b.push_str("</table>");
        b.push_str(&pager(
            base,
            "features",
            foffset,
            PAGE,
            shown.len(),
            features.len() as i64,
        ));
    }

    b.push_str("<h2>Tasks</h2><input id=\"filter\" class=\"filter\" type=\"text\" placeholder=\"Filter the cards shown (press /)\" aria-label=\"Filter\">");
    b.push_str("<div class=\"board\">");
    for (status, rows, total, offset) in &columns {
        let _ = write!(
            b,
            "<section class=\"col\" data-status=\"{s}\"><h2>{s} <span class=\"mut\">{total}</span></h2>",
            s = status.as_str()
        );
        for t in rows {
            let is_next = next.as_ref().is_some_and(|n| n.id == t.id);
            let mut class = String::from("card task");
            if !t.blocked_by.is_empty() {
                class.push_str(" blocked");
            }
            if is_next {
                class.push_str(" next");
            }
            let _ = write!(
                b,
                "<article class=\"{class}\" data-filter data-id=\"{}\">",
                esc(&t.id)
            );
            if is_next {
                b.push_str("<span class=\"badge b-next\">Next</span>");
            }
            let _ = write!(
                b,
                "<div class=\"t\">{}</div>",
                link(&format!("/task/{}", enc(&t.id)), &esc(&t.name))
            );
            let mut meta = vec![t.priority.as_str().to_string()];
            if let Some(c) = t.complexity {
                meta.push(format!("complexity {c}"));
            }
            if let Some(f) = t.feature_id.as_ref().and_then(|f| names.get(f)) {
                meta.push(format!("in {}", esc(f)));
            }
            let _ = write!(b, "<div class=\"m\">{}</div>", meta.join(" · "));
            if !t.summary.is_empty() {
                let _ = write!(
                    b,
                    "<div class=\"m\">{}</div>",
                    esc(&excerpt(&t.summary, 160))
                );
            }
            b.push_str(&blockers(t, &names, &outside));
            b.push_str("</article>");
        }
        b.push_str(&pager(
            base,
            status.as_str(),
            *offset,
            PAGE,
            rows.len(),
            *total,
        ));
        b.push_str("</section>");
    }
    b.push_str("</div>");
    Ok(b)
}

/// "Blocked by A, B" for an item with open blockers; nothing otherwise.
fn blockers(
    i: &Item,
    names: &HashMap<String, String>,
    outside: &HashMap<String, String>,
) -> String {
    if i.blocked_by.is_empty() {
        return String::new();
    }
    let list: Vec<String> = i
        .blocked_by
        .iter()
        .map(|b| {
            if b == "NO_OP" {
                // The reason lives on the NO_OP edge, given when it was blocked.
                match outside.get(&i.id) {
                    Some(r) if !r.is_empty() => format!("outside Cairn ({})", esc(r)),
                    _ => "outside Cairn".to_string(),
                }
            } else {
                match names.get(b) {
                    Some(n) => esc(n),
                    None => format!("<code>{}</code>", esc(b)),
                }
            }
        })
        .collect();
    format!(
        "<div class=\"blockers\"><span class=\"badge b-blocked\">Blocked</span> by {}</div>",
        list.join(", ")
    )
}
