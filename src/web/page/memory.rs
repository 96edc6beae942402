//! The alive memory as a project sees it: what `recall` answers for the project
//! (ACTIVE first, then its scope, its score), narrowed by words, with retired atoms on
//! request; and one atom in full (`?atom=`): its evidence, its edges, and its history
//! chain, each step linked, so a person can read what was believed before. The
//! confidence shown is the memory core's decayed one at the page's clock
//! (`decay::effective_confidence`), beside the validation it counts from and the
//! review date.

use std::collections::HashMap;
use std::fmt::Write as _;

use time::OffsetDateTime;

use crate::domain::memory::decay;
use crate::domain::memory::model::{AtomValue, MemoryAtom, NodeRef, SubjectId, SubjectKind};
use crate::domain::memory::recall::ScopeMatch;
use crate::domain::memory::wire::format_time;
use crate::domain::Project;
use crate::error::{Error, Result};
use crate::service::memory::atoms;
use crate::service::memory::recall::{self, RecallReq};
use crate::web::html::{enc, esc, excerpt, link};
use crate::web::page::{Req, PAGE};

type Names = HashMap<SubjectId, (SubjectKind, String)>;

pub async fn render(req: &Req<'_>, project: &Project, base: &str) -> Result<String> {
    let mut b = String::from("<h1>Memory</h1>");
    if let Some(id) = req.param("atom").filter(|s| !s.trim().is_empty()) {
        atom(req, base, id, &mut b).await?;
    }
    let q = req.param("q").unwrap_or("").trim().to_string();
    let history = req.param("history").is_some_and(|v| v == "1");
    // One clock for the recall and for every confidence and review date shown.
    let now = OffsetDateTime::now_utc();
    let _ = write!(
        b,
        "<form method=\"get\" action=\"{}\"><input name=\"q\" value=\"{}\" placeholder=\"recall by words\"> \
         <label><input type=\"checkbox\" name=\"history\" value=\"1\"{}> with retired atoms</label> \
         <button type=\"submit\">Recall</button></form>",
        esc(base),
        esc(&q),
        if history { " checked" } else { "" }
    );
    let r = recall::recall(
        req.app,
        RecallReq {
            query: (!q.is_empty()).then(|| q.clone()),
            about: vec![],
            types: vec![],
            project: Some(project.id.clone()),
            as_of: None,
            valid_at: None,
            include_history: history,
            max_tokens: None,
            limit: PAGE as usize,
            min_score: recall::DEFAULT_MIN_SCORE,
            now,
        },
    )
    .await;
    let r = match r {
        Ok(r) => r,
        Err(e @ Error::Validation { .. }) => {
            let _ = write!(b, "<p class=\"err\">{}</p>", esc(&e.to_string()));
            return Ok(b);
        }
        Err(e) => return Err(e),
    };
    if let Some(note) = &r.note {
        let _ = write!(b, "<p class=\"mut\">{}</p>", esc(note));
    }
    let _ = write!(
        b,
        "<h2 id=\"recall\">Recalled <span class=\"mut\">{}{}</span></h2>",
        r.hits.len(),
        if r.left_out > 0 {
            format!(", {} more not shown: narrow with words", r.left_out)
        } else {
            String::new()
        }
    );
    if r.hits.is_empty() {
        b.push_str("<p class=\"mut\">Nothing recalled. Agents remember with <code>manage_memory</code>.</p>");
        return Ok(b);
    }
    b.push_str(
        "<table><tr><th>Statement</th><th>Type</th><th>Status</th><th>About</th><th>Scope</th>\
         <th>Confidence</th><th>Validated</th><th>Review</th></tr>",
    );
    for h in &r.hits {
        let a = &h.atom;
        let _ = write!(
            b,
            "<tr data-filter class=\"memory-atom\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td>{}</tr>",
            link(&atom_href(base, a), &esc(&excerpt(&a.statement, 240))),
            esc(a.atom_type().as_wire()),
            status_badge(a),
            esc(&a.about.map(|s| name(&r.subjects, s)).unwrap_or_default()),
            scope(h.scope),
            life(a, now)
        );
    }
    b.push_str("</table>");
    Ok(b)
}

/// One atom with its evidence, edges and history chain.
async fn atom(req: &Req<'_>, base: &str, id: &str, b: &mut String) -> Result<()> {
    let v = match atoms::get(req.app, id).await {
        Ok(v) => v,
        Err(
            e
            @ (Error::NotFound { .. } | Error::Validation { .. } | Error::InvalidOperation { .. }),
        ) => {
            let _ = write!(b, "<p class=\"err\">{}</p>", esc(&e.to_string()));
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let a = &v.atom;
    let _ = write!(
        b,
        "<section class=\"box\" id=\"atom\"><h2>{}</h2><p>{} · {} · confidence {} · evidence {} · version {}</p>",
        esc(&a.statement),
        esc(a.atom_type().as_wire()),
        status_badge(a),
        confidence(a, OffsetDateTime::now_utc()),
        esc(v.strength.as_str()),
        v.version
    );
    let mut facts: Vec<String> = Vec::new();
    if let Some(p) = &a.predicate {
        facts.push(format!(
            "claim <code>{}</code> = {}",
            esc(p.as_str()),
            esc(&value(&v.subjects, a))
        ));
    }
    if let Some(s) = a.about {
        facts.push(format!("about {}", esc(&name(&v.subjects, s))));
    }
    facts.push(match a.context.subject() {
        Some(s) => format!("in {}", esc(&name(&v.subjects, s))),
        None => "global".to_string(),
    });
    match &a.author {
        Some(by) => facts.push(format!(
            "recorded {} by <span class=\"author\">{}</span>",
            esc(&day(a.recorded_at)),
            esc(by)
        )),
        None => facts.push(format!("recorded {}", esc(&day(a.recorded_at)))),
    }
    if let Some(t) = a.retired_at {
        facts.push(format!("retired {}", esc(&day(t))));
    }
    if a.valid_from.is_some() || a.valid_to.is_some() {
        facts.push(format!(
            "holds {} – {}",
            esc(&a.valid_from.map(day).unwrap_or_default()),
            esc(&a.valid_to.map(day).unwrap_or_default())
        ));
    }
    if let Some(t) = a.next_review_at {
        facts.push(format!("review by {}", esc(&day(t))));
    }
    let _ = write!(b, "<p class=\"mut\">{}</p>", facts.join(" · "));
    if let Some(reason) = &v.status_reason {
        let _ = write!(b, "<p class=\"mut\">{}</p>", esc(reason));
    }
    if let Some(notes) = &a.notes {
        let _ = write!(b, "<p>{}</p>", esc(notes));
    }
    if v.history.len() > 1 {
        b.push_str("<h3>History</h3><ol class=\"history\">");
        for (h, _) in &v.history {
            let here = h.id == a.id;
            let _ = write!(
                b,
                "<li{}>{} {} <span class=\"mut\">{} – {}</span></li>",
                if here { " class=\"current\"" } else { "" },
                link(&atom_href(base, h), &esc(&excerpt(&h.statement, 200))),
                status_badge(h),
                esc(&day(h.recorded_at)),
                esc(&h.retired_at.map(day).unwrap_or_default())
            );
        }
        b.push_str("</ol>");
    }
    if !v.evidence.is_empty() {
        b.push_str("<h3>Evidence</h3><ul>");
        for r in &v.evidence {
            let label = r
                .title
                .as_deref()
                .or(r.uri.as_deref())
                .unwrap_or("(untitled)");
            let _ = write!(
                b,
                "<li><span class=\"badge\">{}</span> {}{}</li>",
                esc(r.ref_type.as_wire()),
                esc(label),
                r.snippet
                    .as_deref()
                    .map(|s| format!(" <span class=\"mut\">{}</span>", esc(&excerpt(s, 200))))
                    .unwrap_or_default()
            );
        }
        b.push_str("</ul>");
    }
    let others: Vec<_> = v
        .edges
        .iter()
        .filter(|e| e.kind.as_wire() != "SUPERSEDES" && e.kind.as_wire() != "FROM_SOURCE")
        .collect();
    if !others.is_empty() {
        b.push_str("<h3>Edges</h3><ul>");
        for e in others {
            let _ = write!(
                b,
                "<li>{} <code>{}</code> {}</li>",
                node(&v.subjects, base, e.from, &a.id.to_string()),
                esc(e.kind.as_wire()),
                node(&v.subjects, base, e.to, &a.id.to_string())
            );
        }
        b.push_str("</ul>");
    }
    if !v.on_key.is_empty() {
        b.push_str("<h3>Same claim key</h3><ul>");
        for (o, _) in &v.on_key {
            let _ = write!(
                b,
                "<li>{} {}</li>",
                link(&atom_href(base, o), &esc(&excerpt(&o.statement, 200))),
                status_badge(o)
            );
        }
        b.push_str("</ul>");
    }
    b.push_str("</section>");
    Ok(())
}

/// The three life cells of a row: the confidence now, when it was last validated
/// (the anchor decay and review count from), and when its review is due.
fn life(a: &MemoryAtom, now: OffsetDateTime) -> String {
    let due = match a.next_review_at {
        Some(t) if decay::review_due(a, now) => format!(
            "<span class=\"badge b-stale\">overdue</span>{}",
            esc(&day(t))
        ),
        Some(t) => esc(&day(t)),
        None => "never by time".to_string(),
    };
    format!(
        "<td class=\"confidence\">{}</td><td class=\"validated mut\">{}</td><td class=\"review mut\">{due}</td>",
        confidence(a, now),
        esc(&day(a.validation_anchor()))
    )
}

/// The confidence at `now` as the memory core decays it (docs/memory.md, decay
/// classes), and the validated one it decayed from when they differ.
fn confidence(a: &MemoryAtom, now: OffsetDateTime) -> String {
    let c = decay::effective_confidence(a, now);
    let p = decay::policy_of(a);
    let how = match p.half_life_days {
        Some(h) => format!("half-life {h} d, floor {:.2}", p.floor),
        None => "does not decay".to_string(),
    };
    if (c - a.validated_confidence).abs() >= 0.005 {
        format!(
            "<span title=\"{how}\">{c:.2}</span> <span class=\"mut\">of {:.2}</span>",
            a.validated_confidence
        )
    } else {
        format!("<span title=\"{how}\">{c:.2}</span>")
    }
}

fn atom_href(base: &str, a: &MemoryAtom) -> String {
    format!("{base}?atom={}#atom", enc(&a.id.to_string()))
}

fn status_badge(a: &MemoryAtom) -> String {
    let s = a.status.as_wire();
    let class = match s {
        "ACTIVE" => "b-fresh",
        "NEEDS_REVIEW" | "CONTESTED" => "b-stale",
        _ => "",
    };
    format!("<span class=\"badge {class}\">{}</span>", esc(s))
}

fn scope(s: ScopeMatch) -> &'static str {
    match s {
        ScopeMatch::Project => "project",
        ScopeMatch::Near => "stack",
        ScopeMatch::Org => "org",
        ScopeMatch::Global => "global",
    }
}

fn name(names: &Names, id: SubjectId) -> String {
    match names.get(&id) {
        Some((kind, n)) => format!("{}:{n}", kind.as_wire()),
        None => id.to_string(),
    }
}

fn value(names: &Names, a: &MemoryAtom) -> String {
    match &a.value {
        None => "(none)".to_string(),
        Some(AtomValue::Text(t)) => t.clone(),
        Some(AtomValue::Number(n)) => n.to_string(),
        Some(AtomValue::Bool(v)) => v.to_string(),
        Some(AtomValue::Subject(s)) => name(names, *s),
    }
}

/// An edge's end: an atom linked (unless it is the one shown), a subject by name.
fn node(names: &Names, base: &str, n: NodeRef, shown: &str) -> String {
    match n {
        NodeRef::Atom(id) if id.to_string() == shown => "this".to_string(),
        NodeRef::Atom(id) => link(
            &format!("{base}?atom={}#atom", enc(&id.to_string())),
            &format!("atom …{}", esc(&tail(&id.to_string()))),
        ),
        NodeRef::Subject(s) => esc(&name(names, s)),
        NodeRef::Reference(r) => format!("reference …{}", esc(&tail(&r.to_string()))),
    }
}

/// The last 12 characters of an id: its random part (a UUIDv7 starts with the time,
/// which ids written within a minute share).
fn tail(id: &str) -> String {
    let n = id.chars().count();
    id.chars().skip(n.saturating_sub(12)).collect()
}

/// The date of a time (the page needs no more).
fn day(t: OffsetDateTime) -> String {
    format_time(t).chars().take(10).collect()
}
