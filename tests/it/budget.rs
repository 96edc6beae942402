//! `maxTokens` bounds the whole answer as served, through MCP: the envelope's compact
//! JSON text, characters / 4, lists of what was left out included (a count, the first
//! few, how to fetch them), and the estimate each answer reports is that size.

use serde_json::{json, Value};

use crate::harness::{id_of, Cairn};

/// The tokens of an answer as the server sent it (its text content is the compact
/// JSON of this envelope).
fn served(env: &Value) -> usize {
    env.to_string().chars().count().div_ceil(4)
}

/// A project with 300 atoms, ten over each of 30 directories, and a task whose
/// Context Files name one file in each.
async fn three_hundred_atoms(c: &Cairn) -> (String, String, Vec<String>) {
    let project = c.project("Big").await;
    let task = id_of(
        &c.task(json!({"title":"Touch everything","projectId":project}))
            .await,
    );
    let molecule = c
        .ok(
            "manage_graph",
            json!({"operation":"create","entityType":"molecule","projectId":project,"name":"Core",
                   "knowledge":"The core modules.","createdByTaskId":task}),
        )
        .await["molecule"]["id"]
        .clone();
    for i in 0..300 {
        let d = i % 30;
        // Deeper patterns are more specific: a third of the atoms are kept first.
        let pattern = match i / 30 % 3 {
            0 => format!("src/m{d}/**"),
            1 => format!("src/m{d}/*.rs"),
            _ => "src/**".to_string(),
        };
        let mut a = json!({"operation":"create","entityType":"atom","projectId":project,"name":format!("Atom {i}"),
                           "paths":json!([pattern]).to_string(),
                           "knowledge":format!("What atom {i} knows about module {d}: {}", "details ".repeat(20)),
                           "createdByTaskId":task});
        if i % 2 == 0 {
            a["moleculeId"] = molecule.clone();
        }
        c.ok("manage_graph", a).await;
    }
    let paths: Vec<String> = (0..30).map(|d| format!("src/m{d}/lib.rs")).collect();
    (project, task, paths)
}

fn kept_atoms(ctx: &Value) -> usize {
    let len = |v: &Value| v.as_array().map_or(0, Vec::len);
    ctx["molecules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| len(&m["atoms"]))
        .sum::<usize>()
        + len(&ctx["orphanAtoms"])
}

#[tokio::test]
async fn graph_context_holds_its_budget_as_served_with_omitted_atoms_summarised() {
    let c = Cairn::start().await;
    let (project, task, paths) = three_hundred_atoms(&c).await;
    for max in [None, Some(1000), Some(4000), Some(16000)] {
        let mut args = json!({"operation":"context","projectId":project,"paths":paths.join(",")});
        if let Some(m) = max {
            args["maxTokens"] = json!(m);
        }
        let env = c.call("query_graph", args).await;
        assert_eq!(env["success"], true, "{env:#}");
        let budget = max.unwrap_or(4000);
        let size = served(&env);
        assert!(size <= budget, "{max:?}: {size} tokens served");
        let d = &env["data"];
        assert_eq!(d["budget"]["estimatedTokens"], json!(size), "{max:?}");
        let kept = kept_atoms(d);
        let omitted = d["budget"]["omittedCount"]["omittedAtoms"]
            .as_u64()
            .unwrap() as usize;
        assert_eq!(kept + omitted, 300, "{max:?}: every atom kept or counted");
        assert!(d["budget"]["omittedAtoms"].as_array().unwrap().len() <= 5);
        if omitted > 0 {
            assert!(d["budget"]["next"].as_str().unwrap().contains("maxTokens"));
            // The most specific atoms are the ones kept.
            let spec = |a: &Value| a["specificity"].as_u64().unwrap();
            let min_kept = d["molecules"][0]["atoms"]
                .as_array()
                .unwrap()
                .iter()
                .chain(d["orphanAtoms"].as_array().unwrap())
                .map(spec)
                .min()
                .unwrap_or(u64::MAX);
            let max_left = d["budget"]["omittedAtoms"]
                .as_array()
                .unwrap()
                .iter()
                .map(spec)
                .max()
                .unwrap();
            assert!(
                min_kept >= max_left,
                "{max:?}: kept {min_kept} < left {max_left}"
            );
        }
        if max == Some(16000) {
            assert!(kept > 100, "a larger budget keeps more: {kept}");
        }
        assert!(
            env["message"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{kept} atom(s)")),
            "{}",
            env["message"]
        );
    }
    // Everything, on request.
    let all = c
        .ok(
            "query_graph",
            json!({"operation":"context","projectId":project,"paths":paths.join(","),"maxTokens":0}),
        )
        .await;
    assert_eq!(kept_atoms(&all), 300);

    // A task's get holds the same budget over its whole answer.
    let body = paths
        .iter()
        .map(|p| format!("- {p}"))
        .collect::<Vec<_>>()
        .join("\n");
    c.ok(
        "manage_sections",
        json!({"operation":"add","entityType":"TASK","entityId":task,"title":"Context Files","content":body}),
    )
    .await;
    for max in [1000, 4000, 16000] {
        let env = c
            .call(
                "query_container",
                json!({"operation":"get","containerType":"task","id":task,"includeSections":true,
                       "includeGraphContext":true,"maxTokens":max}),
            )
            .await;
        assert_eq!(env["success"], true, "{env:#}");
        let size = served(&env);
        assert!(size <= max, "task get at {max}: {size}");
        let gc = &env["data"]["graphContext"];
        assert_eq!(gc["budget"]["estimatedTokens"], json!(size));
        let omitted = gc["budget"]["omittedCount"]["omittedAtoms"]
            .as_u64()
            .unwrap() as usize;
        assert_eq!(kept_atoms(gc) + omitted, 300);
    }
    c.stop().await;
}

#[tokio::test]
async fn recall_holds_its_budget_as_served() {
    let c = Cairn::start().await;
    for i in 0..120 {
        c.ok(
            "manage_memory",
            json!({"operation":"remember","now":"2025-09-01T00:00:00Z",
                   "atom":{"type":"Fact","statement":format!("Service {i} answers within {} milliseconds under load, {}", i * 10, "as measured ".repeat(8)),
                           "about":format!("Service:s{i}"),"factKind":"observed"},
                   "sources":[{"refType":"doc","uri":format!("docs/s{i}.md")}]}),
        )
        .await;
    }
    for max in [1000, 4000, 16000] {
        let env = c
            .call(
                "query_memory",
                json!({"operation":"recall","maxTokens":max,"limit":500}),
            )
            .await;
        assert_eq!(env["success"], true, "{env:#}");
        let size = served(&env);
        assert!(size <= max, "recall at {max}: {size}");
        let d = &env["data"];
        assert_eq!(d["tokens"], json!(size), "{max}");
        let kept = d["atoms"].as_array().unwrap().len();
        let shed = d["omitted"]["count"]["atoms"].as_u64().unwrap_or(0) as usize;
        let left = d["leftOut"].as_u64().unwrap() as usize;
        assert_eq!(kept + shed + left, 120, "{max}: {d:#}");
        if shed > 0 {
            assert!(d["omitted"]["atoms"].as_array().unwrap().len() <= 5);
            assert!(d["omitted"]["next"].is_string());
        }
        if max == 16000 {
            assert!(kept > 40, "{kept}");
        }
    }
    c.stop().await;
}
