//! Projects, features and tasks: create, read, update, delete, search, overview.

use serde_json::{json, Value};

use crate::harness::{id_of, Cairn};

#[tokio::test]
async fn create_get_update_with_versions_and_ids_in_either_form() {
    let c = Cairn::start().await;
    let p = c.project("Shop").await;
    let t = c.task(json!({"title":"Checkout","summary":"s","description":"d","priority":"high","complexity":3,"tags":"UI, payments ,ui","projectId":p})).await;
    assert_eq!(t["priority"], "HIGH");
    assert_eq!(t["tags"], json!(["payments", "ui"]));
    let id = id_of(&t);
    // Ids are accepted without dashes and answered canonical.
    let bare = id.replace('-', "").to_uppercase();
    let got = c
        .ok(
            "query_container",
            json!({"operation":"get","containerType":"task","id":bare}),
        )
        .await;
    assert_eq!(got["task"]["id"], json!(id));
    let up = c.ok("manage_container", json!({"operation":"update","containerType":"task","id":id,"version":1,"title":"Checkout v2","tags":"ui"})).await;
    assert_eq!(up["task"]["title"], "Checkout v2");
    assert_eq!(up["task"]["version"], 2);
    assert_eq!(up["task"]["summary"], "s", "fields not given are kept");
    assert_eq!(up["task"]["tags"], json!(["ui"]));
    c.stop().await;
}

#[tokio::test]
async fn placement_rules_for_features_and_tasks() {
    let c = Cairn::start().await;
    let p1 = c.project("A").await;
    let p2 = c.project("B").await;
    let f = c.feature(&p1, "F").await;
    let e = c.err("manage_container", json!({"operation":"create","containerType":"task","title":"x","featureId":f,"projectId":p2}), "INVARIANT_VIOLATION").await;
    assert!(e["message"]
        .as_str()
        .unwrap()
        .contains("belongs to project"));
    c.err("manage_container", json!({"operation":"create","containerType":"task","title":"x","projectId":"0192f000-0000-7000-8000-0000000000aa"}), "NOT_FOUND").await;
    c.err(
        "manage_container",
        json!({"operation":"create","containerType":"feature","name":"x","featureId":f}),
        "VALIDATION_ERROR",
    )
    .await;
    c.err(
        "manage_container",
        json!({"operation":"create","containerType":"project","name":"x","priority":"HIGH"}),
        "VALIDATION_ERROR",
    )
    .await;
    let e = c
        .err(
            "manage_container",
            json!({"operation":"create","containerType":"task"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "title");
    // Moving a feature to another project moves its tasks, and bumps them: an agent
    // still holding a moved task's old version gets a conflict, not a silent write.
    let t = id_of(&c.task(json!({"title":"t","featureId":f})).await);
    let held = c.version("task", &t).await;
    c.ok(
        "manage_container",
        json!({"operation":"update","containerType":"feature","id":f,"version":1,"projectId":p2}),
    )
    .await;
    let moved = c.get("task", &t).await;
    assert_eq!(moved["projectId"], json!(p2));
    assert_eq!(moved["version"], json!(held + 1));
    let e = c
        .err(
            "manage_container",
            json!({"operation":"update","containerType":"task","id":t,"version":held,"summary":"stale"}),
            "CONFLICT",
        )
        .await;
    assert_eq!(e["details"]["currentVersion"], json!(held + 1));
    c.stop().await;
}

#[tokio::test]
async fn delete_needs_cascade_for_children_and_checks_a_given_version() {
    let c = Cairn::start().await;
    let p = c.project("P").await;
    let f = c.feature(&p, "F").await;
    let t = id_of(&c.task(json!({"title":"t","featureId":f})).await);
    c.ok(
        "manage_sections",
        json!({"operation":"add","entityType":"TASK","entityId":t,"title":"Notes","content":"x"}),
    )
    .await;
    let e = c
        .err(
            "manage_container",
            json!({"operation":"delete","containerType":"project","id":p}),
            "INVALID_OPERATION",
        )
        .await;
    assert_eq!(e["details"], json!({"features":1,"tasks":1}));
    c.err(
        "manage_container",
        json!({"operation":"delete","containerType":"project","id":p,"version":9,"cascade":true}),
        "CONFLICT",
    )
    .await;
    let d = c.ok("manage_container", json!({"operation":"delete","containerType":"project","id":p,"version":1,"cascade":true})).await;
    assert_eq!(
        (d["deletedFeatures"].as_i64(), d["deletedTasks"].as_i64()),
        (Some(1), Some(1))
    );
    c.err(
        "query_container",
        json!({"operation":"get","containerType":"task","id":t}),
        "NOT_FOUND",
    )
    .await;
    c.err(
        "query_sections",
        json!({"entityType":"TASK","entityId":t}),
        "NOT_FOUND",
    )
    .await;
    let tags = c.ok("list_tags", json!({"entityType":"SECTION"})).await;
    assert!(tags["tags"].as_array().unwrap().is_empty());
    c.err(
        "manage_container",
        json!({"operation":"delete","containerType":"project","id":p}),
        "NOT_FOUND",
    )
    .await;
    c.stop().await;
}

#[tokio::test]
async fn search_filters_and_pages() {
    let c = Cairn::start().await;
    let p = c.project("P").await;
    for i in 0..5 {
        let pr = if i % 2 == 0 { "HIGH" } else { "LOW" };
        c.task(json!({"title":format!("task {i} 100%_done"),"priority":pr,"projectId":p,"tags":if i < 2 {"api"} else {"web"}})).await;
    }
    let all = c
        .ok(
            "query_container",
            json!({"operation":"search","containerType":"task","projectId":p,"limit":2}),
        )
        .await;
    assert_eq!(all["total"], 5);
    assert_eq!(all["items"].as_array().unwrap().len(), 2);
    assert_eq!(all["hasMore"], true);
    let page3 = c
        .ok(
            "query_container",
            json!({"operation":"search","containerType":"task","projectId":p,"limit":2,"offset":4}),
        )
        .await;
    assert_eq!(page3["items"].as_array().unwrap().len(), 1);
    let high = c
        .ok(
            "query_container",
            json!({"operation":"search","containerType":"task","priority":"HIGH"}),
        )
        .await;
    assert_eq!(high["total"], 3);
    let api = c
        .ok(
            "query_container",
            json!({"operation":"search","containerType":"task","tags":"api"}),
        )
        .await;
    assert_eq!(api["total"], 2);
    let q = c
        .ok(
            "query_container",
            json!({"operation":"search","containerType":"task","query":"task 3"}),
        )
        .await;
    // Ranked: every task holds a word of the query, the one holding both first.
    assert_eq!(q["total"], 5);
    assert_eq!(q["items"][0]["title"], "task 3 100%_done", "{q:#}");
    // LIKE wildcards in the query are literal.
    let pct = c
        .ok(
            "query_container",
            json!({"operation":"search","containerType":"task","query":"0%_d"}),
        )
        .await;
    assert_eq!(pct["total"], 5);
    let none = c
        .ok(
            "query_container",
            json!({"operation":"search","containerType":"task","query":"%"}),
        )
        .await;
    assert_eq!(none["total"], 5);
    let new = c
        .ok(
            "query_container",
            json!({"operation":"search","containerType":"task","status":"NEW,ACTIVE"}),
        )
        .await;
    assert_eq!(new["total"], 5);
    c.err(
        "query_container",
        json!({"operation":"search","containerType":"task","status":"DONE"}),
        "VALIDATION_ERROR",
    )
    .await;
    c.stop().await;
}

#[tokio::test]
async fn overview_of_projects_features_and_all() {
    let c = Cairn::start().await;
    let p = c.project("P").await;
    let f = c.feature(&p, "F").await;
    let t = id_of(&c.task(json!({"title":"a","featureId":f})).await);
    c.task(json!({"title":"loose","projectId":p})).await;
    c.advance("task", &t).await;
    let o = c
        .ok(
            "query_container",
            json!({"operation":"overview","containerType":"project","id":p}),
        )
        .await;
    assert_eq!(
        o["features"][0]["taskCounts"],
        json!({"ACTIVE":1,"total":1})
    );
    assert_eq!(o["tasksWithoutFeature"][0]["title"], "loose");
    assert_eq!(o["taskCounts"]["total"], 2);
    let o = c
        .ok(
            "query_container",
            json!({"operation":"overview","containerType":"feature","id":f}),
        )
        .await;
    assert_eq!(o["tasks"][0]["status"], "ACTIVE");
    let o = c
        .ok(
            "query_container",
            json!({"operation":"overview","containerType":"project"}),
        )
        .await;
    assert_eq!(o["projects"][0]["taskCounts"]["total"], 2);
    let g = c
        .ok(
            "query_container",
            json!({"operation":"get","containerType":"project","id":p}),
        )
        .await;
    assert_eq!(g["taskCounts"]["NEW"], 1);
    c.stop().await;
}

/// Every list parameter takes a JSON array, a string holding one, or the port's
/// comma-separated string; answers use arrays.
#[tokio::test]
async fn list_parameters_take_arrays_json_strings_and_commas() {
    let c = Cairn::start().await;
    let p = c.project("Lists").await;
    let other = id_of(&c.task(json!({"title":"other","projectId":p})).await);
    for (i, tags) in [
        json!(["ui", "api"]),
        json!("[\"ui\",\"api\"]"),
        json!("ui, api"),
    ]
    .into_iter()
    .enumerate()
    {
        let t = c
            .task(json!({"title":format!("t{i}"),"projectId":p,"tags":tags,"relatedTo":[other]}))
            .await;
        assert_eq!(t["tags"], json!(["api", "ui"]), "{tags}");
    }
    for status in [
        json!(["NEW", "ACTIVE"]),
        json!("[\"NEW\"]"),
        json!("NEW,ACTIVE"),
    ] {
        let s = c
            .ok(
                "query_container",
                json!({"operation":"search","containerType":"task","projectId":p,"tags":["ui"],"status":status}),
            )
            .await;
        assert_eq!(s["total"], json!(3), "{status}");
    }
    // Sections: ids as an array.
    let sec = c
        .ok(
            "manage_sections",
            json!({"operation":"bulkCreate","entityType":"TASK","entityId":other,
                   "sections":[{"title":"A","content":"a"},{"title":"B","content":"b"}]}),
        )
        .await;
    let ids: Vec<Value> = sec["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["id"].clone())
        .collect();
    c.ok(
        "manage_sections",
        json!({"operation":"reorder","entityType":"TASK","entityId":other,"orderedIds":[ids[1], ids[0]]}),
    )
    .await;
    let got = c
        .ok(
            "query_sections",
            json!({"entityType":"TASK","entityId":other,"sectionIds":ids}),
        )
        .await;
    assert_eq!(got["sections"][0]["title"], "B");
    // A list that is neither.
    let e = c
        .err(
            "query_container",
            json!({"operation":"search","containerType":"task","tags":{"a":1}}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "tags");
    c.stop().await;
}
