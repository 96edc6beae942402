//! MCP resources through real clients: rmcp's (over stdio and Streamable HTTP) and
//! the official Python SDK. Templates and the bounded, paged list; a read of every
//! kind after its data was made through tools, answering what the read tool answers;
//! a subscription notified when its task changes through a tool; bad URIs refused
//! with JSON-RPC errors naming what is wrong.

use std::sync::{Arc, Mutex};

use rmcp::model::{
    CallToolRequestParams, ErrorCode, PaginatedRequestParams, ReadResourceRequestParams,
    ResourceContents, ResourceUpdatedNotificationParam, SubscribeRequestParams,
    UnsubscribeRequestParams,
};
use rmcp::service::{NotificationContext, RunningService, ServiceError};
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};

use crate::code::Repo;
use crate::harness::{eventually, Cairn, HttpServer, TempDir, Transport};

/// The text of the resource `uri`, parsed.
async fn read<H: ClientHandler>(c: &RunningService<RoleClient, H>, uri: &str) -> Value {
    let r = c
        .read_resource(ReadResourceRequestParams::new(uri))
        .await
        .unwrap_or_else(|e| panic!("resources/read {uri}: {e}"));
    assert_eq!(r.contents.len(), 1, "{r:?}");
    match &r.contents[0] {
        ResourceContents::TextResourceContents {
            uri: got,
            mime_type,
            text,
            ..
        } => {
            assert_eq!(got, uri);
            assert_eq!(mime_type.as_deref(), Some("application/json"));
            serde_json::from_str(text).expect("the content is JSON")
        }
        other => panic!("{uri}: not text: {other:?}"),
    }
}

/// The JSON-RPC error a read of `uri` answers.
async fn read_err<H: ClientHandler>(
    c: &RunningService<RoleClient, H>,
    uri: &str,
) -> rmcp::ErrorData {
    match c.read_resource(ReadResourceRequestParams::new(uri)).await {
        Err(ServiceError::McpError(e)) => e,
        other => panic!("resources/read {uri} should fail: {other:?}"),
    }
}

/// A tool call's `data`, which must succeed, through any client.
async fn ok<H: ClientHandler>(c: &RunningService<RoleClient, H>, tool: &str, args: Value) -> Value {
    let mut p = CallToolRequestParams::new(tool.to_string());
    if let Value::Object(m) = args.clone() {
        p = p.with_arguments(m);
    }
    let r = c.call_tool(p).await.expect("tools/call");
    let env = r.structured_content.expect("structuredContent");
    assert_eq!(env["success"], json!(true), "{tool} {args}: {env:#}");
    env["data"].clone()
}

#[tokio::test]
async fn every_kind_reads_as_its_tool_answers() {
    // The code toolset's project, bound to a repository with a document.
    let repo = Repo::new();
    repo.write(
        "docs/design.md",
        "# Shop\n\nIntro.\n\n## Design\n\nThe design.\nMore design.\n\n## Plan\n",
    );
    repo.commit("init");
    let c = Cairn::start().await;
    let bound = c
        .ok(
            "init_project",
            json!({"name":"Shop","repoPath":repo.root()}),
        )
        .await;
    let pid = bound["projectId"].as_str().unwrap().to_string();
    let cat = crate::code::category(&bound, "core");
    let entity = c
        .ok(
            "create_entity",
            json!({"projectId":pid,"name":"Design","description":"The design section","categoryIds":[cat],
                   "commands":[{"command":"add","kind":"text","documentPath":"docs/design.md","startLine":5,"endLine":8}]}),
        )
        .await["entity"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // Two lines above the section: its code is now at lines 7-10.
    repo.splice("docs/design.md", 1, 0, &["Preface.", ""]);

    let task = c
        .task(json!({"projectId":pid,"title":"Price the cart","summary":"Sum the lines"}))
        .await;
    let tid = task["id"].as_str().unwrap().to_string();
    c.ok(
        "manage_sections",
        json!({"operation":"add","entityType":"TASK","entityId":tid,"title":"Plan","content":"Sum, then tax"}),
    )
    .await;
    let atom = c
        .ok(
            "manage_graph",
            json!({"operation":"create","entityType":"atom","projectId":pid,"name":"Docs",
                   "paths":"[\"docs/**\"]","knowledge":"The design lives in docs/","createdByTaskId":tid}),
        )
        .await["atom"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let memory = c
        .ok(
            "manage_memory",
            json!({"operation":"remember","now":"2025-07-01T00:00:00Z","atom":{"type":"Pattern",
                   "statement":"Schemas live beside their handlers","problem":"drift","solution":"co-locate","author":"agent-7"}}),
        )
        .await["atom"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    // The ontology, in a project of its own, named in the URI by its name.
    let onto = Repo::new();
    for (f, t) in crate::ontology::fixture_pages() {
        onto.write(&format!("pages/{f}"), &t);
    }
    onto.commit("the fixture ontology");
    let opid = c.project("Ontology").await;
    c.ok(
        "manage_ontology",
        json!({"projectId":opid,"operation":"attach","repoPath":onto.root()}),
    )
    .await;
    c.ok(
        "manage_ontology",
        json!({"projectId":opid,"operation":"sync"}),
    )
    .await;

    // Templates: one per kind, every toolset being served.
    let templates = c.client.list_all_resource_templates().await.unwrap();
    let forms: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert_eq!(
        forms,
        [
            "cairn://project/{id}",
            "cairn://task/{id}",
            "cairn://atom/{id}",
            "cairn://memory/{id}",
            "cairn://class/{projectId}/{iri}",
            "cairn://entity/{id}",
        ]
    );
    assert!(templates
        .iter()
        .all(|t| t.mime_type.as_deref() == Some("application/json")
            && t.description.as_deref().is_some_and(|d| !d.is_empty())));

    // The list: the projects, then the task.
    let listed = c.client.list_all_resources().await.unwrap();
    let uris: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    assert_eq!(
        uris,
        [
            format!("cairn://project/{pid}"),
            format!("cairn://project/{opid}"),
            format!("cairn://task/{tid}"),
        ]
    );
    assert_eq!(listed[2].name, "Price the cart");

    // Each read is its tool's data.
    let project = read(&c.client, &format!("cairn://project/{pid}")).await;
    let tool = c
        .ok(
            "query_container",
            json!({"operation":"overview","containerType":"project","id":pid}),
        )
        .await;
    assert_eq!(project, tool);
    assert_eq!(project["tasksWithoutFeature"][0]["id"], json!(tid));

    let t = read(&c.client, &format!("cairn://task/{tid}")).await;
    let tool = c
        .ok(
            "query_container",
            json!({"operation":"get","containerType":"task","id":tid,"includeSections":true}),
        )
        .await;
    assert_eq!(t, tool);
    assert_eq!(t["sections"][0]["content"], json!("Sum, then tax"));

    let a = read(&c.client, &format!("cairn://atom/{atom}")).await;
    let tool = c
        .ok(
            "query_graph",
            json!({"operation":"get","entityType":"atom","id":atom}),
        )
        .await;
    assert_eq!(a, tool);

    let m = read(&c.client, &format!("cairn://memory/{memory}")).await;
    assert_eq!(m["atom"]["id"], json!(memory));
    assert_eq!(
        m["atom"]["statement"],
        json!("Schemas live beside their handlers")
    );
    assert!(m["history"].is_array() && m["evidence"].is_array(), "{m:#}");

    let class = read(&c.client, "cairn://class/Ontology/ai%3AAcceleratedModel").await;
    let tool = c
        .ok(
            "ontology_read",
            json!({"projectId":opid,"iri":"ai:AcceleratedModel"}),
        )
        .await;
    assert_eq!(class, tool);

    let e = read(&c.client, &format!("cairn://entity/{entity}")).await;
    let r = &e["references"][0];
    assert_eq!(
        (r["startLine"].clone(), r["endLine"].clone()),
        (json!(5), json!(8))
    );
    assert_eq!(
        (r["currentStartLine"].clone(), r["currentEndLine"].clone()),
        (json!(7), json!(10)),
        "{e:#}"
    );
    let mut tool = c.ok("get_entity", json!({"entityId":entity})).await;
    let mut served = e.clone();
    for x in served["references"].as_array_mut().unwrap() {
        let m = x.as_object_mut().unwrap();
        m.remove("currentStartLine");
        m.remove("currentEndLine");
    }
    tool.as_object_mut().unwrap().remove("truncated");
    assert_eq!(served, tool);

    // Bad URIs: what is wrong, named; a resource that is not there, not found.
    let none = uuid::Uuid::now_v7().to_string();
    let e = read_err(&c.client, "https://example.com/x").await;
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(e.message.contains("cairn://"), "{e:?}");
    let e = read_err(&c.client, &format!("cairn://tusk/{none}")).await;
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(
        e.message.contains("'tusk'") && e.message.contains("task"),
        "{e:?}"
    );
    let e = read_err(&c.client, "cairn://task/42").await;
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(
        e.message.contains("'42' is not a task id") && e.message.contains("cairn://task/{id}"),
        "{e:?}"
    );
    let e = read_err(&c.client, &format!("cairn://task/{none}")).await;
    assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND, "{e:?}");
    assert!(e.message.contains(&none), "{e:?}");
    assert_eq!(e.data.as_ref().unwrap()["code"], json!("NOT_FOUND"));
    let e = read_err(&c.client, "cairn://class/Ontology").await;
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(e.message.contains("{projectId}/{iri}"), "{e:?}");
    let e = read_err(&c.client, "cairn://class/Nowhere/ai%3AAcceleratedModel").await;
    assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND, "{e:?}");
    // A project without an ontology: refused as the tool refuses it, no internal error.
    let e = read_err(&c.client, "cairn://class/Shop/ai%3AAcceleratedModel").await;
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{e:?}");
    assert!(e.message.contains("has no ontology repository"), "{e:?}");
    assert_eq!(e.data.as_ref().unwrap()["code"], json!("INVALID_OPERATION"));
    let long = format!("cairn://task/{}", "a".repeat(5000));
    let e = read_err(&c.client, &long).await;
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(e.message.contains("at most 4096"), "{e:?}");
    c.stop().await;
}

#[tokio::test]
async fn kinds_follow_the_toolsets_and_the_list_pages_recent_tasks_first() {
    let dir = TempDir::new();
    let c = Cairn::on(&dir.path().join("cairn.db"), &["--toolsets", "tasks"]).await;
    let templates = c.client.list_all_resource_templates().await.unwrap();
    let forms: Vec<&str> = templates.iter().map(|t| t.uri_template.as_str()).collect();
    assert_eq!(forms, ["cairn://project/{id}", "cairn://task/{id}"]);
    let e = read_err(&c.client, &format!("cairn://atom/{}", uuid::Uuid::now_v7())).await;
    assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
    assert!(e.message.contains("graph toolset"), "{e:?}");

    let p = c.project("Many").await;
    let mut ids = Vec::new();
    for i in 0..55 {
        ids.push(crate::harness::id_of(
            &c.task(json!({"projectId":p,"title":format!("Task {i}")}))
                .await,
        ));
    }
    // The oldest task changed last comes first after the project.
    let v = c.version("task", &ids[0]).await;
    c.ok(
        "manage_container",
        json!({"operation":"update","containerType":"task","id":ids[0],"version":v,"summary":"touched"}),
    )
    .await;
    let first = c.client.list_resources(None).await.unwrap();
    assert_eq!(first.resources.len(), 50);
    assert_eq!(first.resources[0].uri, format!("cairn://project/{p}"));
    assert_eq!(first.resources[1].uri, format!("cairn://task/{}", ids[0]));
    assert_eq!(first.resources[2].uri, format!("cairn://task/{}", ids[54]));
    let cursor = first.next_cursor.clone().expect("a second page");
    let second = c
        .client
        .list_resources(Some(
            PaginatedRequestParams::default().with_cursor(Some(cursor)),
        ))
        .await
        .unwrap();
    assert_eq!(second.resources.len(), 6);
    assert!(second.next_cursor.is_none());
    assert_eq!(second.resources[5].uri, format!("cairn://task/{}", ids[1]));
    // A read past the cap loses the last sections and says so.
    for i in 0..3 {
        c.ok(
            "manage_sections",
            json!({"operation":"add","entityType":"TASK","entityId":ids[1],"title":format!("Big {i}"),
                   "content":"w ".repeat(20_000)}),
        )
        .await;
    }
    let big = c
        .client
        .read_resource(ReadResourceRequestParams::new(format!(
            "cairn://task/{}",
            ids[1]
        )))
        .await
        .unwrap();
    let ResourceContents::TextResourceContents { text, .. } = &big.contents[0] else {
        panic!("text content")
    };
    assert!(text.chars().count() <= 64 * 1024, "{}", text.len());
    let big: Value = serde_json::from_str(text).unwrap();
    let cut = &big["truncated"];
    assert_eq!(cut["maxChars"], json!(65536));
    assert_eq!(cut["omitted"][0]["at"], json!("/sections"), "{cut}");
    let kept = big["sections"].as_array().unwrap().len() as u64;
    assert_eq!(kept + cut["omitted"][0]["items"].as_u64().unwrap(), 3);
    assert!(
        cut["whole"]
            .as_str()
            .unwrap()
            .contains("query_container get"),
        "{cut}"
    );

    let bad = c
        .client
        .list_resources(Some(
            PaginatedRequestParams::default().with_cursor(Some("x".into())),
        ))
        .await;
    match bad {
        Err(ServiceError::McpError(e)) => {
            assert_eq!(e.code, ErrorCode::INVALID_PARAMS);
            assert!(e.message.contains("cursor 'x'"), "{e:?}");
        }
        other => panic!("a bad cursor should fail: {other:?}"),
    }
    c.stop().await;
}

/// A client that keeps the URIs of `notifications/resources/updated` it hears.
#[derive(Clone, Default)]
struct Heard(Arc<Mutex<Vec<String>>>);

impl ClientHandler for Heard {
    async fn on_resource_updated(
        &self,
        params: ResourceUpdatedNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push(params.uri);
    }
}

impl Heard {
    fn count(&self, uri: &str) -> usize {
        self.0.lock().unwrap().iter().filter(|u| *u == uri).count()
    }
}

async fn a_subscriber_hears_of_its_task_changing(t: Transport) {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let heard = Heard::default();
    let extra = ["--toolsets", "tasks"];
    let (c, _http) = match t {
        Transport::Stdio => (
            heard
                .clone()
                .serve(crate::harness::transport(&db, &extra))
                .await
                .expect("initialize"),
            None,
        ),
        Transport::Http => {
            let s = HttpServer::start(&db, &extra, &[], &[]).await;
            let c = heard
                .clone()
                .serve(s.transport(None))
                .await
                .expect("initialize");
            (c, Some(s))
        }
    };
    let caps = c
        .peer_info()
        .unwrap()
        .capabilities
        .resources
        .clone()
        .unwrap();
    assert_eq!(caps.subscribe, Some(true));

    let p = ok(
        &c,
        "manage_container",
        json!({"operation":"create","containerType":"project","name":"Sub"}),
    )
    .await["project"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let task = ok(
        &c,
        "manage_container",
        json!({"operation":"create","containerType":"task","projectId":p,"title":"Watched"}),
    )
    .await["task"]
        .clone();
    let tid = task["id"].as_str().unwrap().to_string();
    let uri = format!("cairn://task/{tid}");
    #[allow(deprecated)]
    c.subscribe(SubscribeRequestParams::new(&uri))
        .await
        .expect("resources/subscribe");
    // A write that leaves the task as it was is no change to it.
    ok(
        &c,
        "manage_container",
        json!({"operation":"create","containerType":"task","projectId":p,"title":"Other"}),
    )
    .await;
    ok(
        &c,
        "manage_container",
        json!({"operation":"update","containerType":"task","id":tid,"version":task["version"],"summary":"now watched"}),
    )
    .await;
    eventually("the task's update notification", 30, || {
        heard.count(&uri) == 1
    })
    .await;
    let now = read(&c, &uri).await;
    assert_eq!(now["task"]["summary"], json!("now watched"));
    // A section added changes the task's resource too.
    ok(
        &c,
        "manage_sections",
        json!({"operation":"add","entityType":"TASK","entityId":tid,"title":"Notes","content":"n"}),
    )
    .await;
    eventually("the section's notification", 30, || heard.count(&uri) == 2).await;

    // Unsubscribed, the task's changes are not heard; the project's, subscribed to
    // after them, are, so the task's would have come first.
    #[allow(deprecated)]
    c.unsubscribe(UnsubscribeRequestParams::new(&uri))
        .await
        .expect("resources/unsubscribe");
    let puri = format!("cairn://project/{p}");
    #[allow(deprecated)]
    c.subscribe(SubscribeRequestParams::new(&puri))
        .await
        .unwrap();
    let v = read(&c, &uri).await["task"]["version"].clone();
    ok(
        &c,
        "manage_container",
        json!({"operation":"update","containerType":"task","id":tid,"version":v,"title":"Renamed"}),
    )
    .await;
    eventually("the project's notification", 30, || heard.count(&puri) == 1).await;
    assert_eq!(heard.count(&uri), 2, "{:?}", heard.0.lock().unwrap());
    // A write by another process is heard too, at the next look.
    let (db2, p2) = (db.clone(), p.clone());
    tokio::task::spawn_blocking(move || {
        crate::harness::cli_ok(
            &db2,
            "manage_container",
            &json!({"operation":"create","containerType":"task","projectId":p2,"title":"From the shell"})
                .to_string(),
        )
    })
    .await
    .unwrap();
    eventually("the other process's write", 30, || heard.count(&puri) == 2).await;

    // A subscription to what is not there is refused as its read is.
    #[allow(deprecated)]
    let e = c
        .subscribe(SubscribeRequestParams::new(format!(
            "cairn://task/{}",
            uuid::Uuid::now_v7()
        )))
        .await;
    match e {
        Err(ServiceError::McpError(e)) => assert_eq!(e.code, ErrorCode::RESOURCE_NOT_FOUND),
        other => panic!("should fail: {other:?}"),
    }
    let _ = c.cancel().await;
}

crate::over_both_transports!(a_subscriber_hears_of_its_task_changing);

const PYTHON_CLIENT: &str = r#"
import asyncio, json, sys, warnings
warnings.simplefilter("ignore")
from mcp import ClientSession, types
from mcp.shared.exceptions import MCPError
import mcp.client.streamable_http as sh
connect = getattr(sh, "streamable_http_client", None) or sh.streamablehttp_client

async def main(url):
    updated = asyncio.Queue()
    async def on_message(m):
        m = getattr(m, "root", m)
        if isinstance(m, types.ResourceUpdatedNotification):
            await updated.put(m.params.uri)
    async with connect(url) as streams:
        async with ClientSession(streams[0], streams[1], message_handler=on_message) as s:
            await s.initialize()
            t = await s.list_resource_templates()
            print("templates", " ".join(x.uri_template for x in t.resource_templates), flush=True)
            made = await s.call_tool("manage_container", {"operation": "create", "containerType": "project", "name": "Py"})
            pid = made.structured_content["data"]["project"]["id"]
            made = await s.call_tool("manage_container", {"operation": "create", "containerType": "task", "projectId": pid, "title": "From Python"})
            task = made.structured_content["data"]["task"]
            uri = "cairn://task/" + task["id"]
            listed = await s.list_resources()
            print("listed", " ".join(r.uri for r in listed.resources), flush=True)
            r = await s.read_resource(uri)
            print("read", r.contents[0].mime_type, json.loads(r.contents[0].text)["task"]["title"], flush=True)
            await s.subscribe_resource(uri)
            await s.call_tool("manage_container", {"operation": "update", "containerType": "task", "id": task["id"], "version": task["version"], "title": "Changed"})
            got = await asyncio.wait_for(updated.get(), 30)
            print("updated", got, flush=True)
            try:
                await s.read_resource("cairn://task/not-an-id")
                print("bad read answered", flush=True)
            except MCPError as e:
                print("error", e.code, e.message, flush=True)

asyncio.run(main(sys.argv[1]))
"#;

#[tokio::test]
async fn the_python_sdk_lists_reads_subscribes_and_hears() {
    let Some(python) = crate::http::python_mcp() else {
        eprintln!("the Python MCP SDK is not installed (scripts/test.sh installs it); skipped");
        return;
    };
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let s = HttpServer::start(&db, &["--toolsets", "tasks"], &[], &[]).await;
    let (stdout, stderr) =
        crate::http::run_python(&python, dir.path(), PYTHON_CLIENT, &[&s.mcp_url()]).await;
    let line = |p: &str| {
        stdout
            .lines()
            .find(|l| l.starts_with(p))
            .unwrap_or_else(|| panic!("no '{p}' line: {stdout}\n{stderr}"))
            .to_string()
    };
    assert_eq!(
        line("templates"),
        "templates cairn://project/{id} cairn://task/{id}"
    );
    let listed = line("listed");
    assert!(
        listed.contains("cairn://project/") && listed.contains("cairn://task/"),
        "{listed}"
    );
    assert_eq!(line("read"), "read application/json From Python");
    let updated = line("updated");
    assert!(updated.starts_with("updated cairn://task/"), "{updated}");
    assert!(
        listed.contains(&updated["updated ".len()..]),
        "{listed} {updated}"
    );
    let error = line("error");
    assert!(
        error.starts_with("error -32602 ") && error.contains("'not-an-id' is not a task id"),
        "{error}"
    );
}
