//! MCP resources: what an agent or a person attaches to a conversation, named by
//! `cairn://` URIs (the README's "Resources" lists them). A resource's content is the
//! answer of the read tool its kind names, run through the same handler (so the
//! same checks, the same services, the same JSON), capped in size with what was cut
//! said; `resources/list` offers a bounded set (projects, then recently changed
//! tasks), paged. Subscriptions and their notifications are in [`subscribe`].

pub mod subscribe;

use rmcp::model::{
    ListResourceTemplatesResult, ListResourcesResult, ReadResourceResult, Resource,
    ResourceContents, ResourceTemplate,
};
use rmcp::ErrorData as McpError;
use serde_json::{json, Map, Value};

use crate::domain::text::clip;
use crate::mcp::{read_tool, Registry};
use crate::service::App;

/// Every resource URI starts so.
pub const SCHEME: &str = "cairn://";

/// The longest URI read: ids are 36 characters, an IRI a few hundred.
const URI_MAX: usize = 4096;

/// The most characters of content a read answers (about 16,000 tokens); past it the
/// content's longest lists lose their last items, then long texts are clipped, and
/// `truncated` says what went.
pub const CONTENT_MAX: usize = 64 * 1024;

/// What content is served as: the read tool's `data`, compact JSON.
const MIME: &str = "application/json";

/// `resources/list`: at most this many projects, then this many tasks, a page at a time.
const LIST_PROJECTS: i64 = 100;
const LIST_TASKS: i64 = 200;
const LIST_PAGE: i64 = 50;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Project,
    Task,
    Atom,
    Memory,
    Class,
    Entity,
}

/// One kind of resource: its URI's path segment, the toolset that serves it, its
/// template and what it holds.
struct KindDef {
    kind: Kind,
    segment: &'static str,
    toolset: &'static str,
    template: &'static str,
    title: &'static str,
    description: &'static str,
    /// The call that reads the whole, named when the content was cut.
    whole: &'static str,
}

const KINDS: &[KindDef] = &[
    KindDef {
        kind: Kind::Project,
        segment: "project",
        toolset: "tasks",
        template: "cairn://project/{id}",
        title: "Project overview",
        description: "A project with its features and their task counts, and its tasks without a feature (query_container overview)",
        whole: "query_container overview (containerType project, id)",
    },
    KindDef {
        kind: Kind::Task,
        segment: "task",
        toolset: "tasks",
        template: "cairn://task/{id}",
        title: "Task",
        description: "A task with its sections (query_container get, includeSections)",
        whole: "query_container get (containerType task, id, includeSections)",
    },
    KindDef {
        kind: Kind::Atom,
        segment: "atom",
        toolset: "graph",
        template: "cairn://atom/{id}",
        title: "Knowledge atom",
        description: "A knowledge atom: its globs, knowledge and changelog (query_graph get)",
        whole: "query_graph get (entityType atom, id)",
    },
    KindDef {
        kind: Kind::Memory,
        segment: "memory",
        toolset: "memory",
        template: "cairn://memory/{id}",
        title: "Memory atom",
        description: "A memory atom with its evidence, edges and history (query_memory get)",
        whole: "query_memory get (id)",
    },
    KindDef {
        kind: Kind::Class,
        segment: "class",
        toolset: "ontology",
        template: "cairn://class/{projectId}/{iri}",
        title: "Ontology class",
        description: "An ontology class, property or individual with its inferred axioms (ontology_read); \
                      projectId is the project's id or name, iri its IRI, term id or term, percent-encoded",
        whole: "ontology_read (projectId, iri)",
    },
    KindDef {
        kind: Kind::Entity,
        segment: "entity",
        toolset: "code",
        template: "cairn://entity/{id}",
        title: "Code entity",
        description: "A code entity with its references at the lines their code is at now, its categories and edges (get_entity)",
        whole: "get_entity (entityId), analyze_document for a reference's document",
    },
];

fn served(reg: &Registry) -> impl Iterator<Item = &'static KindDef> + '_ {
    KINDS
        .iter()
        .filter(|k| reg.toolsets.iter().any(|t| t == k.toolset))
}

/// What a URI names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Target {
    pub kind: Kind,
    /// The id (for a class: the project, as given).
    pub id: String,
    /// A class's IRI, term id or term, decoded.
    pub iri: Option<String>,
}

fn invalid(msg: String) -> McpError {
    McpError::invalid_params(msg, None)
}

/// The URI as a message shows it.
fn shown(uri: &str) -> String {
    clip(uri, 120)
}

/// `uri` parsed against the kinds `reg` serves; an error names what is wrong.
pub fn parse(reg: &Registry, uri: &str) -> Result<Target, McpError> {
    if uri.len() > URI_MAX {
        return Err(invalid(format!(
            "the resource URI is {} bytes; at most {URI_MAX}",
            uri.len()
        )));
    }
    let kinds: Vec<&str> = served(reg).map(|k| k.segment).collect();
    let Some(rest) = uri.strip_prefix(SCHEME) else {
        return Err(invalid(format!(
            "'{}' is not a Cairn resource: its URI starts with {SCHEME} (resources/templates/list names the forms)",
            shown(uri)
        )));
    };
    let (segment, tail) = rest.split_once('/').unwrap_or((rest, ""));
    let Some(def) = KINDS.iter().find(|k| k.segment == segment) else {
        return Err(invalid(format!(
            "'{}': no resource kind '{}'; served: {}",
            shown(uri),
            clip(segment, 40),
            kinds.join(", ")
        )));
    };
    if !kinds.contains(&def.segment) {
        return Err(invalid(format!(
            "'{}': {} resources need the {} toolset, which this server does not serve (--toolsets)",
            shown(uri),
            def.segment,
            def.toolset
        )));
    }
    if def.kind == Kind::Class {
        let (project, iri) = tail.split_once('/').unwrap_or((tail, ""));
        let (project, iri) = (decode(project), decode(iri));
        if project.trim().is_empty() || iri.trim().is_empty() {
            return Err(invalid(format!(
                "'{}': a class is {} (the project's id or name, then the IRI percent-encoded)",
                shown(uri),
                def.template
            )));
        }
        return Ok(Target {
            kind: def.kind,
            id: project,
            iri: Some(iri),
        });
    }
    match crate::domain::id::parse("id", tail) {
        Ok(id) => Ok(Target {
            kind: def.kind,
            id,
            iri: None,
        }),
        Err(_) => Err(invalid(format!(
            "'{}': '{}' is not a {} id (a UUID); the form is {}",
            shown(uri),
            clip(tail, 60),
            def.segment,
            def.template
        ))),
    }
}

/// Percent escapes decoded (invalid UTF-8 replaced); `+` stays, as in a URI's path.
fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = (b[i] == b'%' && i + 2 < b.len())
            .then(|| std::str::from_utf8(&b[i + 1..i + 3]).ok())
            .flatten()
            .and_then(|h| u8::from_str_radix(h, 16).ok());
        match hex {
            Some(v) => {
                out.push(v);
                i += 3;
            }
            None => {
                out.push(b[i]);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn def_of(kind: Kind) -> &'static KindDef {
    // Every kind has its row.
    KINDS.iter().find(|k| k.kind == kind).unwrap_or(&KINDS[0])
}

/// The read tool's envelope as a resource's data, or the JSON-RPC error saying why
/// not: a resource that does not exist is `-32002` (resource not found), what the tool
/// refuses `-32602`, anything else (a busy or full store) an internal error; `data`
/// carries the tool's code and details.
fn data_of(uri: &str, env: Value) -> Result<Value, McpError> {
    if env["success"] == json!(true) {
        return Ok(env["data"].clone());
    }
    let code = env["error"]["code"].as_str().unwrap_or("INTERNAL_ERROR");
    let message = format!(
        "{}: {}",
        shown(uri),
        env["message"].as_str().unwrap_or("the read failed")
    );
    let mut data = json!({ "uri": uri, "code": code });
    if let Some(d) = env["error"].get("details") {
        data["details"] = d.clone();
    }
    Err(match code {
        "NOT_FOUND" => McpError::resource_not_found(message, Some(data)),
        // What the read tool refuses of what the URI asks (an ontology not attached).
        "VALIDATION_ERROR" | "INVALID_OPERATION" => McpError::invalid_params(message, Some(data)),
        _ => McpError::internal_error(message, Some(data)),
    })
}

/// The resource's content as data, before the cap.
async fn content(app: &App, reg: &Registry, uri: &str, t: &Target) -> Result<Value, McpError> {
    let args = |v: Value| -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    };
    let (tool, a) = match t.kind {
        Kind::Project => (
            "query_container",
            json!({"operation": "overview", "containerType": "project", "id": t.id}),
        ),
        Kind::Task => (
            "query_container",
            json!({"operation": "get", "containerType": "task", "id": t.id, "includeSections": true}),
        ),
        Kind::Atom => (
            "query_graph",
            json!({"operation": "get", "entityType": "atom", "id": t.id}),
        ),
        Kind::Memory => ("query_memory", json!({"operation": "get", "id": t.id})),
        Kind::Class => (
            "ontology_read",
            json!({"projectId": t.id, "iri": t.iri.clone().unwrap_or_default()}),
        ),
        Kind::Entity => {
            let env = match crate::mcp::code::entity_resource(app, &t.id).await {
                Ok(data) => json!({"success": true, "data": data}),
                Err(e) => crate::mcp::envelope::failure(&e),
            };
            return data_of(uri, env);
        }
    };
    data_of(uri, read_tool(app, reg, tool, args(a)).await)
}

/// The text of the resource `uri` names, as `resources/read` answers it.
pub async fn text(app: &App, reg: &Registry, uri: &str) -> Result<String, McpError> {
    let t = parse(reg, uri)?;
    let mut data = content(app, reg, uri, &t).await?;
    cap(&mut data, CONTENT_MAX, def_of(t.kind).whole);
    Ok(data.to_string())
}

/// `resources/read`.
pub async fn read(app: &App, reg: &Registry, uri: &str) -> Result<ReadResourceResult, McpError> {
    let text = text(app, reg, uri).await?;
    Ok(ReadResourceResult::new(vec![
        ResourceContents::TextResourceContents {
            uri: uri.to_string(),
            mime_type: Some(MIME.into()),
            text,
            meta: None,
        },
    ]))
}

/// `resources/templates/list`: one template per kind served.
pub fn templates(reg: &Registry) -> ListResourceTemplatesResult {
    ListResourceTemplatesResult::with_all_items(
        served(reg)
            .map(|k| {
                ResourceTemplate::new(k.template, k.segment)
                    .with_title(k.title)
                    .with_description(k.description)
                    .with_mime_type(MIME)
            })
            .collect(),
    )
}

/// `resources/list`: the projects, then the tasks most recently changed, each list
/// capped, [`LIST_PAGE`] at a time; the cursor is the offset this server gave.
pub async fn list(
    app: &App,
    reg: &Registry,
    cursor: Option<&str>,
) -> Result<ListResourcesResult, McpError> {
    if !reg.toolsets.iter().any(|t| t == "tasks") {
        return Ok(ListResourcesResult::with_all_items(vec![]));
    }
    let offset = match cursor {
        None => 0,
        Some(c) => c
            .parse::<i64>()
            .ok()
            .filter(|n| (0..=LIST_PROJECTS + LIST_TASKS).contains(n))
            .ok_or_else(|| {
                invalid(format!(
                    "cursor '{}' is not one this server gave: send the nextCursor of the last page",
                    clip(c, 40)
                ))
            })?,
    };
    let (projects, tasks, total) =
        crate::service::containers::listing(app, LIST_PROJECTS, LIST_TASKS, offset, LIST_PAGE)
            .await
            .map_err(|e| McpError::internal_error(e.to_string(), None))?;
    let mut out: Vec<Resource> = projects
        .iter()
        .map(|p| {
            Resource::new(format!("{SCHEME}project/{}", p.id), p.name.clone())
                .with_title(format!("Project {}", clip(&p.name, 80)))
                .with_description(clip(&p.summary, 200))
                .with_mime_type(MIME)
        })
        .collect();
    out.extend(tasks.iter().map(|t| {
        Resource::new(format!("{SCHEME}task/{}", t.id), t.name.clone())
            .with_title(format!("Task {}", clip(&t.name, 80)))
            .with_description(format!("{}: {}", t.status.as_str(), clip(&t.summary, 200)))
            .with_mime_type(MIME)
    }));
    let next = offset + out.len() as i64;
    let mut r = ListResourcesResult::with_all_items(out);
    if next < total {
        r.next_cursor = Some(next.to_string());
    }
    Ok(r)
}

/// Cuts `data` to at most `max` characters of compact JSON: the last items of the
/// largest lists first (lists inside a list's items are left whole), then texts
/// longer than [`CLIP`] clipped; `truncated` says what went and where the whole is.
pub fn cap(data: &mut Value, max: usize, whole: &str) {
    let total = data.to_string().chars().count();
    if total <= max {
        return;
    }
    // Room for the note itself.
    let goal = max.saturating_sub(1024);
    let mut lists: Vec<(String, Vec<usize>)> = Vec::new();
    top_lists(data, String::new(), &mut lists);
    let mut size = total;
    let mut omitted: Vec<(String, usize)> = Vec::new();
    let mut keep: Vec<usize> = lists.iter().map(|(_, s)| s.len()).collect();
    while size > goal {
        let largest = (0..lists.len())
            .filter(|&i| keep[i] > 0)
            .max_by_key(|&i| lists[i].1[..keep[i]].iter().sum::<usize>());
        let Some(i) = largest else { break };
        keep[i] -= 1;
        size = size.saturating_sub(lists[i].1[keep[i]] + 1);
    }
    for (i, (at, sizes)) in lists.iter().enumerate() {
        if keep[i] < sizes.len() {
            if let Some(a) = data.pointer_mut(at).and_then(Value::as_array_mut) {
                a.truncate(keep[i]);
            }
            omitted.push((at.clone(), sizes.len() - keep[i]));
        }
    }
    let mut clipped = Vec::new();
    if data.to_string().chars().count() > goal {
        clip_texts(data, String::new(), &mut clipped);
    }
    let note = json!({
        "maxChars": max,
        "omitted": omitted.iter().map(|(at, n)| json!({"at": at, "items": n})).collect::<Vec<_>>(),
        "clipped": clipped.iter().take(20).collect::<Vec<_>>(),
        "clippedCount": clipped.len(),
        "whole": whole,
    });
    match data {
        Value::Object(m) => {
            m.insert("truncated".into(), note);
        }
        other => {
            *other = json!({ "value": other.take(), "truncated": note });
        }
    }
}

/// Texts longer than this are clipped when cutting lists was not enough.
const CLIP: usize = 2048;

/// The lists of `v` not inside another list, by JSON pointer, with each item's size.
fn top_lists(v: &Value, at: String, out: &mut Vec<(String, Vec<usize>)>) {
    match v {
        Value::Array(a) => out.push((
            at,
            a.iter().map(|x| x.to_string().chars().count()).collect(),
        )),
        Value::Object(m) => {
            for (k, x) in m {
                top_lists(
                    x,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        _ => {}
    }
}

fn clip_texts(v: &mut Value, at: String, out: &mut Vec<String>) {
    match v {
        Value::String(s) if s.chars().count() > CLIP => {
            *s = format!("{}…", s.chars().take(CLIP).collect::<String>());
            out.push(at);
        }
        Value::Array(a) => {
            for (i, x) in a.iter_mut().enumerate() {
                clip_texts(x, format!("{at}/{i}"), out);
            }
        }
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                clip_texts(
                    x,
                    format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")),
                    out,
                );
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percent_escapes_decode_and_a_stray_percent_stays() {
        assert_eq!(decode("mv%3ARobot"), "mv:Robot");
        assert_eq!(decode("a%2Fb%"), "a/b%");
        assert_eq!(decode("100%zz"), "100%zz");
    }

    #[test]
    fn a_capped_answer_fits_and_says_what_went() {
        let mut v = json!({
            "task": {"id": "x"},
            "sections": (0..200).map(|i| json!({"n": i, "content": "y".repeat(1000)})).collect::<Vec<_>>(),
        });
        cap(&mut v, 64 * 1024, "the tool");
        assert!(v.to_string().len() <= 64 * 1024, "{}", v.to_string().len());
        let omitted = v["truncated"]["omitted"][0].clone();
        assert_eq!(omitted["at"], json!("/sections"));
        let kept = v["sections"].as_array().unwrap().len();
        assert_eq!(kept + omitted["items"].as_u64().unwrap() as usize, 200);
        let mut long = json!({"text": "z".repeat(100_000)});
        cap(&mut long, 10_000, "the tool");
        assert!(long.to_string().len() <= 10_000);
        assert_eq!(long["truncated"]["clipped"], json!(["/text"]));
    }
}
