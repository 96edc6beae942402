//! Every tool's `title` and `outputSchema`, held to by the official SDKs themselves:
//! the Python SDK (target/py-mcp) and the TypeScript SDK (target/ts-mcp, both
//! installed by `scripts/test.sh`) call tools of every toolset over HTTP, successes
//! and failures, answers a `maxTokens` shed among them, and each client checks the
//! answer's `structuredContent` against the tool's `outputSchema` as it receives it
//! (a mismatch fails the call, so the script, so the test).

use serde_json::{json, Value};

use crate::code::Repo;
use crate::harness::{id_of, Cairn, HttpServer, TempDir};

/// A server with every toolset on a project holding a bound repository, an attached
/// ontology, a task, an atom and a subject; and the calls the SDKs make, each with
/// whether it succeeds.
struct World {
    s: HttpServer,
    calls: Vec<Value>,
    /// How many tools the server lists.
    tools: usize,
    _dirs: (TempDir, Repo, Repo),
}

async fn world() -> World {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let code = Repo::new();
    code.write("README.md", "# Payments\n\nHow payments are taken.\n");
    code.write("src/pay.c", &crate::code::c_source(2));
    code.commit("payments");
    let onto = Repo::new();
    for (f, t) in crate::ontology::fixture_pages() {
        onto.write(&format!("pages/{f}"), &t);
    }
    onto.commit("the fixture ontology");
    let s = HttpServer::start(&db, &["--toolsets", "all"], &[], &[]).await;
    let c = Cairn::from_client(s.client(None).await, &db);
    let p = c.project("SDK").await;
    c.ok(
        "init_project",
        json!({"projectId": p, "repoPath": code.root()}),
    )
    .await;
    c.ok(
        "manage_ontology",
        json!({"projectId": p, "operation": "attach", "repoPath": onto.root()}),
    )
    .await;
    c.ok(
        "manage_ontology",
        json!({"projectId": p, "operation": "sync"}),
    )
    .await;
    let task = c
        .task(json!({"projectId": p, "title": "Take payments", "summary": "Card payments"}))
        .await;
    let t = id_of(&task);
    let atom = c
        .ok(
            "manage_graph",
            json!({"operation": "create", "entityType": "atom", "projectId": p, "name": "Payments",
                   "paths": "[\"src/**\"]", "knowledge": "Payments are taken in src/pay.c; retries are idempotent.",
                   "createdByTaskId": t}),
        )
        .await;
    let a = id_of(&atom["atom"]);
    c.ok(
        "manage_subject",
        json!({"operation": "create", "subject": {"kind": "Lib", "name": "Zod"}}),
    )
    .await;
    let missing = "00000000-0000-7000-8000-000000000000";
    let call = |tool: &str, args: Value, ok: bool| json!({"tool": tool, "args": args, "ok": ok});
    let calls = vec![
        // tasks
        call(
            "query_container",
            json!({"operation": "get", "containerType": "project", "id": p}),
            true,
        ),
        call(
            "query_container",
            json!({"operation": "overview", "containerType": "project"}),
            true,
        ),
        call(
            "query_container",
            json!({"operation": "get", "containerType": "task", "id": t, "includeGraphContext": true, "maxTokens": 120}),
            true,
        ),
        call(
            "query_container",
            json!({"operation": "get", "containerType": "task", "id": "nope"}),
            false,
        ),
        call(
            "manage_container",
            json!({"operation": "create", "containerType": "task", "projectId": p, "title": "From an SDK"}),
            true,
        ),
        call(
            "manage_container",
            json!({"operation": "update", "containerType": "task", "id": t, "version": 999, "title": "x"}),
            false,
        ),
        call("get_next_task", json!({"projectId": p}), true),
        call(
            "query_workflow_state",
            json!({"containerType": "task", "id": t}),
            true,
        ),
        call(
            "advance",
            json!({"containerType": "task", "id": t, "version": 999}),
            false,
        ),
        call(
            "query_dependencies",
            json!({"containerType": "task", "id": t}),
            true,
        ),
        call(
            "query_sections",
            json!({"entityType": "TASK", "entityId": t}),
            true,
        ),
        call("query_templates", json!({}), true),
        call("list_tags", json!({}), true),
        // graph
        call(
            "query_graph",
            json!({"operation": "context", "projectId": p, "paths": ["src/pay.c"]}),
            true,
        ),
        // A budget below the frame: the answer is that frame.
        call(
            "query_graph",
            json!({"operation": "context", "projectId": p, "paths": ["src/pay.c"], "maxTokens": 30}),
            true,
        ),
        call(
            "query_graph",
            json!({"operation": "get", "entityType": "atom", "id": a}),
            true,
        ),
        call(
            "manage_changelog",
            json!({"operation": "search", "parentType": "atom", "parentId": a}),
            true,
        ),
        call(
            "manage_graph",
            json!({"operation": "update", "entityType": "atom", "id": missing, "version": 1, "name": "x"}),
            false,
        ),
        // code
        call("project_overview", json!({"projectId": p}), true),
        call("find_entities", json!({"projectId": p}), true),
        call("analyze_document", json!({"projectId": p}), true),
        call("search", json!({"projectId": p, "query": "payments"}), true),
        call("get_entity", json!({"entityId": missing}), false),
        call(
            "create_entity",
            json!({"projectId": p, "name": "Payments"}),
            false,
        ),
        // ontology
        call(
            "ontology_discover",
            json!({"projectId": p, "query": "part"}),
            true,
        ),
        call(
            "ontology_query",
            json!({"projectId": p, "cypher": "MATCH (c:OwlClass) RETURN c.iri LIMIT 3"}),
            true,
        ),
        call(
            "ontology_query",
            json!({"projectId": p, "cypher": "CREATE (x:OwlClass)"}),
            false,
        ),
        call(
            "ontology_read",
            json!({"projectId": p, "iri": "no-such-class-anywhere"}),
            false,
        ),
        call(
            "manage_ontology",
            json!({"projectId": p, "operation": "status"}),
            true,
        ),
        // memory
        call(
            "manage_memory",
            json!({"operation": "remember", "atom": {"type": "Decision", "statement": "Zod validates input",
                   "predicate": "validation_lib", "valueSubject": "Lib:zod", "about": "Lib:zod",
                   "decidedAt": "2025-10-14", "rationale": "one library"},
                   "sources": [{"refType": "ADR", "uri": "docs/adr/0007.md"}]}),
            true,
        ),
        call(
            "manage_memory",
            json!({"operation": "remember", "atom": {"type": "Nope"}}),
            false,
        ),
        call(
            "query_memory",
            json!({"operation": "recall", "projectId": p, "query": "validation"}),
            true,
        ),
        call("query_memory", json!({"operation": "list"}), true),
        call(
            "manage_subject",
            json!({"operation": "get", "id": "Lib:zod"}),
            true,
        ),
        call("curate_memory", json!({"operation": "plan"}), true),
        call("manage_diary", json!({"operation": "list"}), true),
        // every toolset
        call("find", json!({"query": "payments", "projectId": p}), true),
        call(
            "find",
            json!({"query": "payments", "projectId": p, "maxTokens": 100}),
            true,
        ),
        call("find", json!({"query": ""}), false),
    ];
    // Each call as the harness's client sees it, so a call listed with the wrong outcome
    // is named here rather than by a script.
    let mut wrong = Vec::new();
    for k in &calls {
        let env = c.call(k["tool"].as_str().unwrap(), k["args"].clone()).await;
        if env["success"] != k["ok"] {
            wrong.push(format!("{k}: {env}"));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    let tools = c.tools().await.len();
    World {
        s,
        calls,
        tools,
        _dirs: (dir, code, onto),
    }
}

/// What a script printed: one JSON line per call (tool, isError, error code), after a
/// line counting the tools it saw titled and with an output schema.
fn check(stdout: &str, calls: &[Value], tools: usize) {
    let mut lines = stdout.lines();
    assert_eq!(
        lines.next(),
        Some(format!("tools {tools}").as_str()),
        "{stdout}"
    );
    let seen: Vec<Value> = lines.map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(seen.len(), calls.len(), "{stdout}");
    for (k, s) in calls.iter().zip(&seen) {
        assert_eq!(s["tool"], k["tool"], "{stdout}");
        assert_eq!(s["isError"], json!(k["ok"] != json!(true)), "{k}: {s}");
    }
}

fn sdk_calls(dir: &std::path::Path, calls: &[Value]) -> String {
    let path = dir.join("calls.json");
    std::fs::write(&path, serde_json::to_string(calls).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

/// The Python SDK checks a success's `structuredContent` in `call_tool` and skips a
/// failure's (`isError`): the script has the SDK check those too, with the same
/// `validate_tool_result`, so every answer is checked.
const PYTHON: &str = r#"
import asyncio, json, sys
from mcp import ClientSession
import mcp.client.streamable_http as sh
connect = getattr(sh, "streamable_http_client", None) or sh.streamablehttp_client

async def main(url, calls):
    calls = json.load(open(calls))
    async with connect(url) as streams:
        async with ClientSession(streams[0], streams[1]) as s:
            await s.initialize()
            tools = (await s.list_tools()).tools
            print("tools", len([t for t in tools if t.title and t.output_schema]), flush=True)
            for c in calls:
                r = await s.call_tool(c["tool"], c["args"])
                sc = r.structured_content
                assert sc is not None, c
                if r.is_error:
                    await s.validate_tool_result(c["tool"], r)
                code = (sc.get("error") or {}).get("code")
                print(json.dumps({"tool": c["tool"], "isError": bool(r.is_error), "code": code}), flush=True)

asyncio.run(main(sys.argv[1], sys.argv[2]))
"#;

/// The TypeScript SDK checks every `structuredContent`, failures' too, in `callTool`
/// against the schema `listTools` gave it, and throws on a mismatch.
const TYPESCRIPT: &str = r#"
import fs from "node:fs";
const [sdk, url, callsPath] = process.argv.slice(2);
const { Client } = await import(`${sdk}/dist/esm/client/index.js`);
const { StreamableHTTPClientTransport } = await import(`${sdk}/dist/esm/client/streamableHttp.js`);
const calls = JSON.parse(fs.readFileSync(callsPath, "utf8"));
const client = new Client({ name: "cairn-sdk-output", version: "0" });
await client.connect(new StreamableHTTPClientTransport(new URL(url)));
const { tools } = await client.listTools();
console.log(`tools ${tools.filter((t) => t.title && t.outputSchema).length}`);
for (const c of calls) {
  const r = await client.callTool({ name: c.tool, arguments: c.args });
  if (!r.structuredContent) throw new Error(`${c.tool}: no structuredContent`);
  const code = r.structuredContent.error?.code ?? null;
  console.log(JSON.stringify({ tool: c.tool, isError: !!r.isError, code }));
}
await client.close();
"#;

/// The TypeScript SDK's package directory, when `scripts/test.sh` installed it.
fn ts_sdk() -> Option<std::path::PathBuf> {
    let p = std::env::var_os("CAIRN_TEST_TS_MCP")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/ts-mcp")
        })
        .join("node_modules/@modelcontextprotocol/sdk");
    p.join("package.json").exists().then_some(p)
}

#[tokio::test]
async fn the_python_sdk_validates_every_answer_against_its_tools_output_schema() {
    let Some(python) = crate::http::python_mcp() else {
        eprintln!("the Python MCP SDK is not installed (scripts/test.sh installs it); skipped");
        return;
    };
    let w = world().await;
    let dir = TempDir::new();
    let calls = sdk_calls(dir.path(), &w.calls);
    let (stdout, _) =
        crate::http::run_python(&python, dir.path(), PYTHON, &[&w.s.mcp_url(), &calls]).await;
    check(&stdout, &w.calls, w.tools);
}

#[tokio::test]
async fn the_typescript_sdk_validates_every_answer_against_its_tools_output_schema() {
    let Some(sdk) = ts_sdk() else {
        eprintln!("the TypeScript MCP SDK is not installed (scripts/test.sh installs it); skipped");
        return;
    };
    let w = world().await;
    let dir = TempDir::new();
    let calls = sdk_calls(dir.path(), &w.calls);
    let script = dir.path().join("client.mjs");
    std::fs::write(&script, TYPESCRIPT).unwrap();
    let out = tokio::process::Command::new("node")
        .arg(&script)
        .args([sdk.to_str().unwrap(), &w.s.mcp_url(), &calls])
        .output()
        .await
        .expect("run node");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    check(&stdout, &w.calls, w.tools);
}
