//! A project named by its name or by a path inside its repository wherever a tool
//! takes `projectId`: the same answers as by id, an ambiguous name refused with its
//! candidates, an unknown one NOT_FOUND saying what to send.

use serde_json::json;

use crate::code::Repo;
use crate::harness::Cairn;

#[tokio::test]
async fn a_project_is_named_by_id_name_or_a_path_in_its_repository() {
    let repo = Repo::new();
    repo.write("src/deep/lib.c", "int f(void) { return 0; }\n");
    repo.commit("init");
    let c = Cairn::start().await;
    let d = c
        .ok(
            "init_project",
            json!({"name":"Ledger","repoPath":repo.root()}),
        )
        .await;
    let pid = d["projectId"].as_str().unwrap().to_string();
    let feature = c.feature(&pid, "Core").await;
    c.task(json!({"title":"Post entries","projectId":pid,"featureId":feature}))
        .await;

    // By name (any case) and by a subdirectory of the repository: the project's tasks.
    let subdir = repo.path().join("src/deep").to_string_lossy().into_owned();
    for name in [pid.as_str(), "Ledger", "ledger", &repo.root(), &subdir] {
        let s = c
            .ok(
                "query_container",
                json!({"operation":"search","containerType":"task","projectId":name}),
            )
            .await;
        assert_eq!(s["total"], 1, "{name}: {s:#}");
        assert_eq!(s["items"][0]["projectId"], json!(pid), "{name}");
    }
    // Other toolsets read the same names: the code, graph and memory tools.
    let o = c
        .ok("project_overview", json!({"projectId":"Ledger"}))
        .await;
    assert!(o.is_object());
    c.ok(
        "query_graph",
        json!({"operation":"context","projectId":subdir,"paths":["src/deep/lib.c"]}),
    )
    .await;
    c.ok(
        "query_memory",
        json!({"operation":"recall","projectId":"Ledger"}),
    )
    .await;

    // Unknown: NOT_FOUND saying what to send.
    let e = c
        .err(
            "query_container",
            json!({"operation":"search","containerType":"task","projectId":"Nope"}),
            "NOT_FOUND",
        )
        .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("query_container overview"),
        "{e}"
    );
    let e = c
        .err(
            "project_overview",
            json!({"projectId":"/nowhere/at/all"}),
            "NOT_FOUND",
        )
        .await;
    assert!(
        e["message"].as_str().unwrap().contains("init_project"),
        "{e}"
    );

    // Ambiguous: two projects called the same, refused with both.
    let a = c.project("Twin").await;
    let b = c.project("twin").await;
    let e = c
        .err(
            "query_container",
            json!({"operation":"search","containerType":"task","projectId":"TWIN"}),
            "VALIDATION_ERROR",
        )
        .await;
    let m = e["message"].as_str().unwrap();
    assert!(m.contains(&a) && m.contains(&b), "{m}");
    // The exact spelling still names one.
    c.ok(
        "query_container",
        json!({"operation":"search","containerType":"task","projectId":"Twin"}),
    )
    .await;
    drop(repo);
    c.stop().await;
}
