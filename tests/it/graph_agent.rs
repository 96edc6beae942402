//! The graph in the agent's loop, through MCP: planning to graph hints on advance, hints absent or explained, the skills served as prompts naming real tools and parameters, the tasks and graph tools within their token budget.

use serde_json::{json, Value};

use crate::graph::Fixture;
use crate::harness::{id_of, Cairn, TempDir};

#[tokio::test]
async fn whole_agent_loop_from_planning_to_graph_hints() {
    let c = Cairn::start().await;
    let project = c.project("Shop").await;
    let feature = c.feature(&project, "Refunds").await;
    let task = c
        .task(json!({"title":"Refund webhook","featureId":feature}))
        .await;
    let task_id = id_of(&task);
    // The built-in template gives the task a Context Files section.
    c.ok("apply_template", json!({"templateId":"0192f000-0000-7000-8000-000000000001","entityType":"TASK","entityId":task_id}))
        .await;
    let secs = c
        .ok(
            "query_sections",
            json!({"entityType":"TASK","entityId":task_id}),
        )
        .await;
    let files = secs["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["title"] == json!("Context Files"))
        .expect("Context Files section")
        .clone();
    c.ok(
        "manage_sections",
        json!({"operation":"updateText","sectionId":id_of(&files),"version":files["version"],
               "content":"- `src/payments/webhook-refund.ts` (new handler)\nsrc/payments/stripe-gateway.ts:120, docs/refunds.md\n# not a path"}),
    )
    .await;
    let m = c
        .ok("manage_graph", json!({"operation":"create","entityType":"molecule","projectId":project,"name":"Payments",
                                   "knowledge":"Stripe is the only gateway","createdByTaskId":task_id}))
        .await["molecule"]
        .clone();
    let atom = c
        .ok("manage_graph", json!({"operation":"create","entityType":"atom","projectId":project,"name":"Webhooks",
                                   "moleculeId":id_of(&m),"paths":"[\"src/payments/webhook-*.ts\",\"src/payments/stripe-*.ts\"]",
                                   "knowledge":"Handlers are idempotent","createdByTaskId":task_id}))
        .await["atom"]
        .clone();
    // Discovery: the task with its graph context.
    let g = c
        .ok("query_container", json!({"operation":"get","containerType":"task","id":task_id,"includeSections":true,"includeGraphContext":true}))
        .await;
    let gc = &g["graphContext"];
    assert_eq!(
        gc["paths"],
        json!([
            "src/payments/webhook-refund.ts",
            "src/payments/stripe-gateway.ts",
            "docs/refunds.md"
        ])
    );
    assert_eq!(gc["molecules"][0]["name"], json!("Payments"));
    assert_eq!(
        gc["molecules"][0]["atoms"][0]["matchedPaths"],
        json!([
            "src/payments/webhook-refund.ts",
            "src/payments/stripe-gateway.ts"
        ])
    );
    assert_eq!(gc["unmatchedPaths"], json!(["docs/refunds.md"]));
    // Its budget: the default 4,000 tokens holds this, one token leaves the atom out
    // and says so, 0 asks for everything; alone, maxTokens is refused.
    assert_eq!(gc["budget"]["maxTokens"], json!(4000), "{gc:#}");
    let tight = c
        .ok("query_container", json!({"operation":"get","containerType":"task","id":task_id,"includeGraphContext":true,"maxTokens":1}))
        .await;
    let omitted = &tight["graphContext"]["budget"]["omittedAtoms"];
    assert_eq!(omitted[0]["name"], json!("Webhooks"), "{tight:#}");
    let all = c
        .ok("query_container", json!({"operation":"get","containerType":"task","id":task_id,"includeGraphContext":true,"maxTokens":0}))
        .await;
    assert!(
        all["graphContext"].get("budget").is_none_or(Value::is_null),
        "{all:#}"
    );
    assert_eq!(
        all["graphContext"]["molecules"][0]["atoms"][0]["name"],
        json!("Webhooks")
    );
    c.err(
        "query_container",
        json!({"operation":"get","containerType":"task","id":task_id,"maxTokens":100}),
        "VALIDATION_ERROR",
    )
    .await;
    // Without the flag there is no graph context; on a feature the flag is refused.
    let plain = c
        .ok(
            "query_container",
            json!({"operation":"get","containerType":"task","id":task_id}),
        )
        .await;
    assert!(plain.get("graphContext").is_none());
    c.err("query_container", json!({"operation":"get","containerType":"feature","id":feature,"includeGraphContext":true}), "VALIDATION_ERROR").await;
    // Execution: work, then advance to CLOSED and receive the hints.
    let started = c.advance("task", &task_id).await;
    assert!(
        started.get("graphHints").is_none(),
        "no hints before a terminal state"
    );
    let done = c.advance("task", &task_id).await;
    assert_eq!(done["newStatus"], json!("CLOSED"));
    let h = &done["graphHints"];
    assert_eq!(
        h["message"],
        json!("Task completed. Consider updating the knowledge graph.")
    );
    assert_eq!(h["suggestedActions"].as_array().unwrap().len(), 4);
    assert_eq!(h["matchedAtoms"][0]["id"], json!(id_of(&atom)));
    assert_eq!(h["unmatchedPaths"], json!(["docs/refunds.md"]));
    // Update the graph, append a changelog entry, and see it inline on the next get.
    c.ok("manage_changelog", json!({"operation":"append","parentType":"atom","parentId":id_of(&atom),"taskId":task_id,
                                    "summary":"Refund webhook added; refunds are idempotent by refund id"}))
        .await;
    let a = c
        .ok(
            "query_graph",
            json!({"operation":"get","entityType":"atom","id":id_of(&atom)}),
        )
        .await;
    assert_eq!(
        a["atom"]["changelog"][0]["summary"],
        json!("Refund webhook added; refunds are idempotent by refund id")
    );
    assert_eq!(a["atom"]["changelog"][0]["taskId"], json!(task_id));
    c.stop().await;
}

#[tokio::test]
async fn terminated_tasks_get_no_graph_hints_and_tasks_without_context_files_say_so() {
    let f = Fixture::new().await;
    let g = f
        .c
        .ok("query_container", json!({"operation":"get","containerType":"task","id":f.task,"includeGraphContext":true}))
        .await;
    assert!(g["graphContext"]["note"]
        .as_str()
        .unwrap()
        .contains("Context Files"));
    let v = f.c.version("task", &f.task).await;
    let t =
        f.c.ok(
            "terminate",
            json!({"containerType":"task","id":f.task,"version":v,"reason":"dropped"}),
        )
        .await;
    assert!(t.get("graphHints").is_none());
    // A task closed without a Context Files section still gets the port's hint.
    let t2 = id_of(&f.c.task(json!({"title":"two","projectId":f.project})).await);
    f.c.advance("task", &t2).await;
    let d = f.c.advance("task", &t2).await;
    assert!(d["graphHints"]["suggestedActions"].is_array());
    f.c.stop().await;
}

#[tokio::test]
async fn graph_hints_are_absent_when_the_graph_toolset_is_not_served() {
    let dir = TempDir::new();
    let c = Cairn::on(&dir.path().join("t.db"), &["--toolsets", "tasks"]).await;
    let t = id_of(&c.task(json!({"title":"t"})).await);
    c.advance("task", &t).await;
    let d = c.advance("task", &t).await;
    assert!(d.get("graphHints").is_none());
    c.stop().await;
}

/// Whether `v` is of the JSON type `spec` (a property's schema) declares.
fn fits_schema(spec: &Value, v: &Value) -> bool {
    if let Some(alts) = spec["anyOf"].as_array() {
        return alts.iter().any(|a| fits_schema(a, v));
    }
    match spec["type"].as_str() {
        Some("string") => v.is_string(),
        Some("integer") => v.is_i64() || v.is_u64(),
        Some("number") => v.is_number(),
        Some("boolean") => v.is_boolean(),
        Some("array") => v
            .as_array()
            .is_some_and(|a| a.iter().all(|x| fits_schema(&spec["items"], x))),
        Some("object") => v.is_object(),
        _ => true,
    }
}

/// A skill's examples run as they are written, with every `…` standing for an id
/// that does not exist: Cairn's own argument checks (command objects included) must
/// accept them, so the only failure allowed is `NOT_FOUND`.
const PLACEHOLDER: &str = "0192f000-0000-7000-8000-00000000e0e0";

#[tokio::test]
async fn skills_are_served_as_prompts_and_name_real_tools_and_parameters() {
    let c = Cairn::start().await;
    let prompts = c.client.list_all_prompts().await.expect("prompts/list");
    let mut names: Vec<String> = prompts.iter().map(|p| p.name.clone()).collect();
    names.sort();
    assert_eq!(
        names,
        vec![
            "cairn-curator",
            "cairn-discovery",
            "cairn-execution",
            "cairn-planning",
            "cairn-reflection"
        ]
    );
    // Each step's part of the code toolset, taught with an example.
    let code_tools = [
        (
            "cairn-discovery",
            &["project_overview", "search", "query"][..],
        ),
        ("cairn-planning", &["create_entity"][..]),
        (
            "cairn-execution",
            &["analyze_document", "alter_references", "update_entity"][..],
        ),
        // And each step's part of the ontology toolset.
        (
            "cairn-discovery",
            &["ontology_discover", "ontology_read", "ontology_query"][..],
        ),
        (
            "cairn-planning",
            &["ontology_validate", "ontology_propose"][..],
        ),
        (
            "cairn-execution",
            &["ontology_propose", "manage_ontology"][..],
        ),
    ];
    // Each step's part of the memory toolset, likewise.
    let memory_tools = [
        ("cairn-discovery", &["query_memory"][..]),
        ("cairn-planning", &["query_memory", "manage_memory"][..]),
        ("cairn-execution", &["manage_memory", "manage_diary"][..]),
        (
            "cairn-curator",
            &[
                "curate_memory",
                "manage_memory",
                "manage_subject",
                "manage_diary",
            ][..],
        ),
    ];
    let tools = c.tools().await;
    // The reflection prompt is rendered from the diary, not a skill (tests/it/memory.rs).
    for p in prompts.iter().filter(|p| p.name != "cairn-reflection") {
        let r = c
            .client
            .get_prompt(rmcp::model::GetPromptRequestParams::new(p.name.clone()))
            .await
            .expect("prompts/get");
        let text = serde_json::to_value(&r.messages[0]).unwrap()["content"]["text"]
            .as_str()
            .unwrap()
            .to_string();
        assert!(text.len() > 500, "{} is a real skill", p.name);
        // Every `tool` `{json}` example names a served tool, its parameters with their
        // types and enums, and the parameters it requires.
        let mut examples: Vec<(String, Value)> = Vec::new();
        for (i, _) in text.match_indices("` `{") {
            let before = &text[..i];
            let tool = &before[before.rfind('`').unwrap() + 1..];
            let json_start = i + 3;
            let end = text[json_start..].find("}`").expect("closing") + json_start + 1;
            let raw = text[json_start..end]
                .replace('…', PLACEHOLDER)
                .replace("\n", " ");
            let args: Value =
                serde_json::from_str(&raw).unwrap_or_else(|e| panic!("{}: {raw}: {e}", p.name));
            let t = tools
                .iter()
                .find(|t| t.name == tool)
                .unwrap_or_else(|| panic!("{}: no tool {tool}", p.name));
            let schema = serde_json::to_value(t.input_schema.as_ref()).unwrap();
            for (k, v) in args.as_object().unwrap() {
                let spec = &schema["properties"][k];
                assert!(spec.is_object(), "{}: {tool} has no parameter {k}", p.name);
                if let Some(e) = spec["enum"].as_array() {
                    assert!(
                        e.contains(v),
                        "{}: {tool}.{k} = {v} is not an enum value",
                        p.name
                    );
                }
                assert!(
                    fits_schema(spec, v),
                    "{}: {tool}.{k} = {v} is not a {spec}",
                    p.name
                );
            }
            for k in schema["required"].as_array().into_iter().flatten() {
                let k = k.as_str().unwrap();
                assert!(
                    args.get(k).is_some(),
                    "{}: {tool} lacks required {k}",
                    p.name
                );
            }
            examples.push((tool.to_string(), args));
        }
        assert!(
            examples.len() >= 3,
            "{}: only {} examples",
            p.name,
            examples.len()
        );
        for (skill, wanted) in code_tools.iter().chain(memory_tools.iter()) {
            if p.name == *skill {
                for w in *wanted {
                    assert!(
                        examples.iter().any(|(t, _)| t == w),
                        "{skill} has no example of {w}"
                    );
                }
            }
        }
        for (tool, args) in examples {
            let env = c.call(&tool, args.clone()).await;
            assert!(
                env["success"] == json!(true) || env["error"]["code"] == json!("NOT_FOUND"),
                "{}: {tool} {args} is refused: {env:#}",
                p.name
            );
        }
    }
    let bad = c
        .client
        .get_prompt(rmcp::model::GetPromptRequestParams::new("nope"))
        .await;
    assert!(bad.is_err());
    c.stop().await;
}

#[tokio::test]
async fn tasks_and_graph_tool_definitions_fit_the_token_budget() {
    let dir = TempDir::new();
    let c = Cairn::on(&dir.path().join("t.db"), &["--toolsets", "tasks,graph"]).await;
    let tools: Vec<Value> = c
        .tools()
        .await
        .iter()
        .map(|t| serde_json::to_value(t).unwrap())
        .collect();
    let n = tools.len();
    let chars = serde_json::to_string(&tools).unwrap().len();
    // The port's tools/list for the same 26 tools is 22,931 characters; `find`, served
    // with any toolset, is the 27th.
    assert_eq!(n, 27);
    assert!(
        chars <= 20_000,
        "tools/list is {chars} characters for {n} tools"
    );
    c.stop().await;
}
