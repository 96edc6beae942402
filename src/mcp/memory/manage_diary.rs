//! manage_diary: diary entries written, listed and reflected on, and reflected rules ingested.

use super::*;

pub(super) fn diary_filter(a: &Args) -> Result<DiaryFilter> {
    Ok(DiaryFilter {
        session: a.str("session", NAME_MAX)?.filter(|s| !s.is_empty()),
        task_id: a.id("taskId")?,
        project_id: a.id("projectId")?,
        since: time_arg(a, "since")?.map(crate::service::memory::stamp),
    })
}

pub(super) async fn manage_diary(app: &App, a: Args) -> Result<Reply> {
    let op = a.req_choice("operation", &["write", "list", "reflect", "ingest"])?;
    let now = now(&a)?;
    let parts = ["accomplishments", "decisions", "challenges", "learnings"];
    match op {
        "write" => {
            a.forbid(&["ids", "since", "rules", "limit", "offset"], "to write")?;
            let mut fields = Vec::new();
            if let Some(s) = a.str("session", NAME_MAX * 4)? {
                fields.push((
                    "session".to_string(),
                    crate::domain::memory::raw::Raw::Text(s),
                ));
            }
            for p in parts {
                if let Some(l) = a.list(p)? {
                    fields.push((p.to_string(), crate::domain::memory::raw::Raw::texts(&l)));
                }
            }
            let e = diary::write(app, fields, a.id("taskId")?, a.id("projectId")?, now).await?;
            Ok(Reply::new(
                format!("diary entry {} written", e.entry.id),
                json!({ "entry": views::entry(&e) }),
            ))
        }
        "list" => {
            a.forbid(&["ids", "rules"], "to list")?;
            a.forbid(&parts, "to list")?;
            let (limit, offset) = a.page(20)?;
            let (items, total) = diary::list(app, diary_filter(&a)?, limit, offset).await?;
            let n = items.len() as i64;
            Ok(Reply::new(
                format!("{n} of {total} diary entries"),
                json!({ "items": items.iter().map(views::entry).collect::<Vec<_>>(), "total": total, "limit": limit,
                        "offset": offset, "hasMore": offset + n < total }),
            ))
        }
        "reflect" => {
            a.forbid(&["rules", "offset"], "to reflect")?;
            a.forbid(&parts, "to reflect")?;
            let ids = a.ids("ids", 200)?.unwrap_or_default();
            let limit = a.int("limit", 1, 200)?.unwrap_or(10);
            let entries = diary::chosen(app, &ids, diary_filter(&a)?, limit).await?;
            if entries.is_empty() {
                return Err(Error::not_found(
                    "diary entry",
                    "matching the filter (write entries with manage_diary write before reflecting)",
                ));
            }
            Ok(Reply::new(
                format!(
                    "reflection prompt over {} entries: answer it, then ingest the rules",
                    entries.len()
                ),
                json!({ "prompt": diary::prompt(&entries), "entryIds": entries.iter().map(|e| e.entry.id.to_string()).collect::<Vec<_>>() }),
            ))
        }
        _ => {
            a.forbid(
                &["ids", "since", "session", "taskId", "limit", "offset"],
                "to ingest",
            )?;
            a.forbid(&parts, "to ingest")?;
            // The array itself, or text holding it (the prompt's answer as written).
            let text = match a.get("rules") {
                Some(v @ Value::Array(_)) => Some(v.to_string()),
                _ => a.raw_str("rules", STRING_MAX)?,
            }
            .filter(|s| !s.trim().is_empty())
            .ok_or_else(|| {
                Error::validation(
                    "rules",
                    "is required: the JSON array of rules the reflection prompt asked for",
                )
            })?;
            let project = a.id("projectId")?;
            let r = diary::ingest(app, &text, project.as_deref(), now).await?;
            let mut counts = std::collections::BTreeMap::<&str, usize>::new();
            let rules: Vec<Value> = r
                .rules
                .iter()
                .enumerate()
                .map(|(i, x)| {
                    let (verdict, mut v) = match x {
                        Ingested::Invalid(errs) => ("invalid", json!({ "errors": errs.iter().map(|e| e.to_string()).collect::<Vec<_>>() })),
                        Ingested::Refused(why) => ("refused", json!({ "reason": why })),
                        Ingested::Duplicate { of, by } => {
                            let by = match by {
                                crate::domain::memory::reflection::SameBy::Statement => json!("statement"),
                                crate::domain::memory::reflection::SameBy::Cosine(c) => json!({ "cosine": c }),
                            };
                            ("duplicate", json!({ "of": of.to_string(), "by": by }))
                        }
                        Ingested::DuplicateInBatch { of, atom } => {
                            ("duplicate", json!({ "ofRule": of, "of": atom.map(|a| a.to_string()) }))
                        }
                        Ingested::Contradicts { atom, contradicts } => (
                            "contradicts",
                            json!({ "atomId": atom.to_string(), "contradicts": contradicts.iter().map(|c| c.to_string()).collect::<Vec<_>>() }),
                        ),
                        Ingested::Drafted(atom) => ("drafted", json!({ "atomId": atom.to_string() })),
                    };
                    *counts.entry(verdict).or_insert(0) += 1;
                    v["index"] = json!(i);
                    v["verdict"] = json!(verdict);
                    v
                })
                .collect();
            let summary: Vec<String> = counts.iter().map(|(k, n)| format!("{n} {k}")).collect();
            Ok(Reply::new(
                format!("{} rule(s): {}", r.rules.len(), summary.join(", ")),
                json!({ "rules": rules, "embedder": r.embedder }),
            ))
        }
    }
}
