//! manage_subject: subjects created, updated, merged, aliased and linked.

use super::*;

pub(super) fn subject_ref_id(a: &Args, k: &str) -> Result<String> {
    let s = a.req_str(k, NAME_MAX + 16)?;
    if crate::service::memory::SubjectRef::parse(&s).is_none() {
        return Err(Error::validation(
            k,
            format!("'{s}' is neither a subject id nor Kind:name (Lib:zod)"),
        ));
    }
    Ok(s)
}

pub(super) async fn subject_arg(app: &App, a: &Args, k: &str) -> Result<String> {
    let raw = subject_ref_id(a, k)?;
    subjects::find(app, &raw).await
}

pub(super) async fn manage_subject(app: &App, a: Args) -> Result<Reply> {
    let ops = [
        "create", "update", "alias", "merge", "uses", "unuse", "get", "list",
    ];
    let op = a.req_choice("operation", &ops)?;
    let now = now(&a)?;
    match op {
        "create" => {
            a.forbid(
                &[
                    "id",
                    "version",
                    "into",
                    "target",
                    "kind",
                    "query",
                    "minProjects",
                ],
                "to create",
            )?;
            let s = a.object("subject")?.ok_or_else(|| {
                Error::validation("subject", "is required to create: {kind, name, …}")
            })?;
            let mut fields = views::fields(&s);
            if let Some(al) = a.list("aliases")? {
                fields.push((
                    "aliases".into(),
                    crate::domain::memory::raw::Raw::texts(&al),
                ));
            }
            let c = subjects::create(app, fields, now).await?;
            let mut msg = if c.created {
                format!("{} {} created", c.subject.kind, c.subject.name)
            } else {
                format!("{} {} exists: answered it", c.subject.kind, c.subject.name)
            };
            if let Some(p) = &c.linked {
                msg.push_str(&format!(", linked to project {p}"));
            }
            if !c.filled.is_empty() {
                msg.push_str(&format!("; set {}", c.filled.join(", ")));
            }
            let mut data =
                json!({ "subject": views::subject(&c.subject, c.version), "created": c.created });
            if !c.added_aliases.is_empty() {
                data["addedAliases"] = json!(c.added_aliases);
            }
            if let Some(p) = &c.linked {
                data["linkedProject"] = json!(p);
            }
            if !c.filled.is_empty() {
                data["filled"] = json!(c.filled);
            }
            if !c.also_created.is_empty() {
                data["createdSubjects"] =
                    Value::Array(c.also_created.iter().map(views::subject_brief).collect());
            }
            Ok(Reply::new(msg, data))
        }
        "update" => {
            a.forbid(
                &["into", "target", "kind", "query", "minProjects"],
                "to update",
            )?;
            let id = subject_arg(app, &a, "id").await?;
            let v = a.req_version("to update")?;
            let mut fields = a
                .object("subject")?
                .map(|m| views::fields(&m))
                .unwrap_or_default();
            if let Some(al) = a.list("aliases")? {
                fields.push((
                    "aliases".into(),
                    crate::domain::memory::raw::Raw::texts(&al),
                ));
            }
            if fields.is_empty() {
                return Err(Error::validation(
                    "subject",
                    "update changes nothing: send subject fields or aliases",
                ));
            }
            let (s, v) = subjects::update(app, &id, v, fields, now).await?;
            Ok(Reply::new(
                format!("subject {id} updated to version {v}"),
                json!({ "subject": views::subject(&s, v) }),
            ))
        }
        "alias" => {
            a.forbid(
                &["subject", "into", "target", "kind", "query", "minProjects"],
                "to alias",
            )?;
            let id = subject_arg(app, &a, "id").await?;
            let v = a.req_version("to alias")?;
            let names = a.list("aliases")?.unwrap_or_default();
            if names.is_empty() {
                return Err(Error::validation(
                    "aliases",
                    "is required: the names to add",
                ));
            }
            let r = subjects::alias(app, &id, v, &names, now).await?;
            let mut data = json!({ "subject": views::subject(&r.subject, r.version) });
            let mut msg = format!("subject {id} has {} alias(es)", r.subject.aliases.len());
            if !r.same_name_as.is_empty() {
                data["sameNameAs"] =
                    Value::Array(r.same_name_as.iter().map(views::subject_brief).collect());
                msg.push_str(&format!(
                    "; {} other subject(s) share a name now: curate_memory run merges them (or merge)",
                    r.same_name_as.len()
                ));
            }
            Ok(Reply::new(msg, data))
        }
        "merge" => {
            a.forbid(
                &[
                    "subject",
                    "aliases",
                    "target",
                    "kind",
                    "query",
                    "minProjects",
                ],
                "to merge",
            )?;
            let id = subject_arg(app, &a, "id").await?;
            let v = a.req_version("to merge")?;
            let into = subject_arg(app, &a, "into").await?;
            let m = subjects::merge(app, &id, v, &into, now).await?;
            Ok(Reply::new(
                format!(
                    "subject {id} merged into {into}: {} action(s)",
                    m.actions.len()
                ),
                json!({ "subject": views::subject(&m.into, m.version), "actions": views::actions(&m.actions) }),
            ))
        }
        "uses" | "unuse" => {
            a.forbid(
                &[
                    "subject",
                    "aliases",
                    "into",
                    "version",
                    "kind",
                    "query",
                    "minProjects",
                ],
                &format!("to {op}"),
            )?;
            let (raw_id, raw_target) = (subject_ref_id(&a, "id")?, subject_ref_id(&a, "target")?);
            let id = subjects::find(app, &raw_id).await?;
            let target = subjects::find(app, &raw_target).await?;
            let on = op == "uses";
            let changed = subjects::uses(app, &id, &target, on, now).await?;
            let msg = match (on, changed) {
                (true, true) => format!("{id} USES {target}"),
                (true, false) => format!("{id} USES {target} already"),
                (false, true) => format!("{id} no longer USES {target}"),
                (false, false) => format!("{id} did not use {target}"),
            };
            Ok(Reply::new(msg, json!({ "changed": changed })))
        }
        "get" => {
            a.forbid(
                &[
                    "subject",
                    "aliases",
                    "into",
                    "target",
                    "version",
                    "kind",
                    "query",
                    "minProjects",
                ],
                "to get",
            )?;
            let id = subject_arg(app, &a, "id").await?;
            let g = subjects::get(app, &id).await?;
            let mut data = json!({
                "subject": views::subject(&g.subject, g.version),
                "uses": g.uses.iter().map(views::subject_brief).collect::<Vec<_>>(),
                "usedBy": g.used_by.iter().map(views::subject_brief).collect::<Vec<_>>(),
                "derivedFacts": g.usage.iter().map(views::usage).collect::<Vec<_>>(),
                "atoms": crate::mcp::json::counts(&g.atom_counts),
            });
            if let Some(s) = &g.survivor {
                data["survivor"] = views::subject_brief(s);
            }
            Ok(Reply::new(
                format!("{} {}", g.subject.kind, g.subject.name),
                data,
            ))
        }
        _ => {
            a.forbid(
                &["id", "subject", "aliases", "into", "target", "version"],
                "to list",
            )?;
            let (limit, offset) = a.page(20)?;
            let kind = a
                .str("kind", 32)?
                .map(|k| {
                    SubjectKind::parse(&k).map_err(|e| Error::validation("kind", e.to_string()))
                })
                .transpose()?;
            let min = a.int("minProjects", 1, 1_000_000)?.map(|n| n as usize);
            let p = subjects::list(
                app,
                kind,
                a.str("query", QUERY_MAX)?.as_deref(),
                min,
                limit,
                offset,
            )
            .await?;
            let n = p.items.len() as i64;
            let items: Vec<Value> = p
                .items
                .iter()
                .map(|(s, v, f)| {
                    let mut x = views::subject(s, *v);
                    if let Some(f) = f {
                        x["derivedFacts"] = json!([views::usage(f)]);
                    }
                    x
                })
                .collect();
            Ok(Reply::new(
                format!("{n} of {} subject(s)", p.total),
                json!({ "items": items, "total": p.total, "limit": limit, "offset": offset, "hasMore": offset + n < p.total }),
            ))
        }
    }
}
