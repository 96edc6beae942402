//! Templates (built-in and custom) and tags across entities.

use serde_json::json;

use crate::harness::{id_of, Cairn};

const TASK_TEMPLATE: &str = "0192f000-0000-7000-8000-000000000001";
const FEATURE_TEMPLATE: &str = "0192f000-0000-7000-8000-000000000002";

#[tokio::test]
async fn built_in_templates_give_tasks_a_context_files_section() {
    let c = Cairn::start().await;
    let l = c
        .ok(
            "query_templates",
            json!({"operation":"list","isBuiltIn":true}),
        )
        .await;
    let names: Vec<&str> = l["templates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["Feature Plan", "Task Implementation"]);
    let g = c
        .ok(
            "query_templates",
            json!({"operation":"get","id":TASK_TEMPLATE,"includeSections":true}),
        )
        .await;
    let titles: Vec<&str> = g["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["title"].as_str().unwrap())
        .collect();
    assert_eq!(
        titles,
        vec![
            "Requirements",
            "Implementation Plan",
            "Context Files",
            "Testing Strategy"
        ]
    );
    let t = id_of(&c.task(json!({"title":"T"})).await);
    let d = c
        .ok(
            "apply_template",
            json!({"templateId":TASK_TEMPLATE,"entityType":"TASK","entityId":t}),
        )
        .await;
    assert_eq!(d["sections"].as_array().unwrap().len(), 4);
    assert_eq!(d["sections"][2]["title"], "Context Files");
    // Applying it again adds nothing and says which sections were already there.
    let again = c
        .ok(
            "apply_template",
            json!({"templateId":TASK_TEMPLATE,"entityType":"TASK","entityId":t}),
        )
        .await;
    assert_eq!(again["sections"], json!([]));
    assert_eq!(again["skipped"].as_array().unwrap().len(), 4);
    let all = c
        .ok("query_sections", json!({"entityType":"TASK","entityId":t}))
        .await;
    assert_eq!(all["sections"].as_array().unwrap().len(), 4, "{all}");
    c.err(
        "apply_template",
        json!({"templateId":FEATURE_TEMPLATE,"entityType":"TASK","entityId":t}),
        "INVALID_OPERATION",
    )
    .await;
    c.err(
        "manage_template",
        json!({"operation":"delete","id":TASK_TEMPLATE}),
        "INVALID_OPERATION",
    )
    .await;
    c.ok(
        "manage_template",
        json!({"operation":"disable","id":TASK_TEMPLATE}),
    )
    .await;
    c.err(
        "apply_template",
        json!({"templateId":TASK_TEMPLATE,"entityType":"TASK","entityId":t}),
        "INVALID_OPERATION",
    )
    .await;
    c.ok(
        "manage_template",
        json!({"operation":"enable","id":TASK_TEMPLATE}),
    )
    .await;
    c.stop().await;
}

#[tokio::test]
async fn custom_template_lifecycle() {
    let c = Cairn::start().await;
    let t = c
        .ok(
            "manage_template",
            json!({"operation":"create","name":"Bug","targetEntityType":"TASK","tags":"bugs"}),
        )
        .await;
    let id = id_of(&t["template"]);
    c.err(
        "manage_template",
        json!({"operation":"create","name":"Bug","targetEntityType":"TASK"}),
        "INVARIANT_VIOLATION",
    )
    .await;
    c.err(
        "manage_template",
        json!({"operation":"create","name":"NoTarget"}),
        "VALIDATION_ERROR",
    )
    .await;
    c.ok("manage_template", json!({"operation":"addSection","id":id,"title":"Repro","contentSample":"1. ","isRequired":true})).await;
    c.ok(
        "manage_template",
        json!({"operation":"addSection","id":id,"title":"Fix"}),
    )
    .await;
    let up = c
        .ok(
            "manage_template",
            json!({"operation":"update","id":id,"description":"for bugs","version":3}),
        )
        .await;
    assert_eq!(up["template"]["version"], 4);
    c.err(
        "manage_template",
        json!({"operation":"update","id":id,"description":"x","version":1}),
        "CONFLICT",
    )
    .await;
    let task = id_of(&c.task(json!({"title":"crash"})).await);
    let d = c
        .ok(
            "apply_template",
            json!({"templateId":id,"entityType":"TASK","entityId":task}),
        )
        .await;
    assert_eq!(d["sections"][0]["content"], "1. ");
    let l = c
        .ok("query_templates", json!({"operation":"list","tags":"bugs"}))
        .await;
    assert_eq!(l["templates"].as_array().unwrap().len(), 1);
    c.ok("manage_template", json!({"operation":"delete","id":id}))
        .await;
    c.err(
        "query_templates",
        json!({"operation":"get","id":id}),
        "NOT_FOUND",
    )
    .await;
    c.stop().await;
}

#[tokio::test]
async fn tags_list_usage_and_rename_with_dry_run() {
    let c = Cairn::start().await;
    let p = c.project("P").await;
    let a = id_of(
        &c.task(json!({"title":"a","tags":"backend,api","projectId":p}))
            .await,
    );
    let b = id_of(
        &c.task(json!({"title":"b","tags":"api-v2,api","projectId":p}))
            .await,
    );
    let l = c.ok("list_tags", json!({"entityType":"TASK"})).await;
    let api = l["tags"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tag"] == "api")
        .unwrap()
        .clone();
    assert_eq!(api["count"], 2);
    let u = c.ok("get_tag_usage", json!({"tag":"API"})).await;
    assert_eq!(u["entities"].as_array().unwrap().len(), 2);
    assert_eq!(u["entities"][0]["name"], "a");
    let d = c
        .ok(
            "rename_tag",
            json!({"oldTag":"api","newTag":"api-v2","dryRun":true}),
        )
        .await;
    assert_eq!(d["affected"], 2);
    assert_eq!(
        c.get("task", &a).await["tags"],
        json!(["api", "backend"]),
        "dry run changes nothing"
    );
    c.ok("rename_tag", json!({"oldTag":"api","newTag":"api-v2"}))
        .await;
    assert_eq!(
        c.get("task", &a).await["tags"],
        json!(["api-v2", "backend"])
    );
    assert_eq!(
        c.get("task", &b).await["tags"],
        json!(["api-v2"]),
        "merged, not duplicated"
    );
    let e = c
        .err(
            "manage_container",
            json!({"operation":"create","containerType":"task","title":"x","tags":"a".repeat(65)}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "tags");
    let many: Vec<String> = (0..51).map(|i| format!("t{i}")).collect();
    c.err(
        "manage_container",
        json!({"operation":"create","containerType":"task","title":"x","tags":many.join(",")}),
        "VALIDATION_ERROR",
    )
    .await;
    c.stop().await;
}

/// The built-in template's Context Files section names no placeholder file, so an
/// unedited task reports no knowledge gap.
#[tokio::test]
async fn regression_context_files_sample_is_no_placeholder_path() {
    let c = Cairn::start().await;
    let p = c.project("P").await;
    let t = id_of(&c.task(json!({"title":"t","projectId":p})).await);
    c.ok("apply_template", json!({"templateId":"0192f000-0000-7000-8000-000000000001","entityType":"TASK","entityId":t}))
        .await;
    let secs = c
        .ok("query_sections", json!({"entityType":"TASK","entityId":t}))
        .await;
    let files = secs["sections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["title"] == json!("Context Files"))
        .expect("Context Files section")
        .clone();
    assert!(
        !files["content"]
            .as_str()
            .unwrap_or("")
            .contains("src/example"),
        "{files:#}"
    );
    let g = c
        .ok(
            "query_container",
            json!({"operation":"get","containerType":"task","id":t,"includeGraphContext":true}),
        )
        .await;
    assert_eq!(g["graphContext"]["paths"], json!([]), "{g:#}");
    assert_eq!(g["graphContext"]["unmatchedPaths"], json!([]));
    // A section an older template filled with the placeholder reads as empty too.
    c.ok(
        "manage_sections",
        json!({"operation":"updateText","sectionId":files["id"],"version":files["version"],"content":"src/example/file.rs"}),
    )
    .await;
    let g = c
        .ok(
            "query_container",
            json!({"operation":"get","containerType":"task","id":t,"includeGraphContext":true}),
        )
        .await;
    assert_eq!(g["graphContext"]["paths"], json!([]), "{g:#}");
    c.stop().await;
}
