//! Workflow rules through the tools: pipelines, refusals, blocking, roll-ups, sync,
//! and the order of next work. The tests that need one server run over stdio and over
//! Streamable HTTP (`over_stdio::…`, `over_http::…`): the same bodies, both transports.

use serde_json::{json, Value};

use crate::harness::{id_of, Cairn, TempDir, Transport};

async fn advance_walks_the_default_pipeline_and_bumps_versions(t: Transport) {
    let c = Cairn::start_on(t).await;
    let t = c.task(json!({"title":"T"})).await;
    let id = id_of(&t);
    assert_eq!(t["status"], "NEW");
    assert_eq!(t["version"], 1);
    let d = c
        .ok(
            "advance",
            json!({"containerType":"task","id":id,"version":1}),
        )
        .await;
    assert_eq!(
        (d["previousStatus"].as_str(), d["newStatus"].as_str()),
        (Some("NEW"), Some("ACTIVE"))
    );
    assert_eq!(d["task"]["version"], 2);
    let d = c
        .ok(
            "advance",
            json!({"containerType":"task","id":id,"version":2}),
        )
        .await;
    assert_eq!(d["newStatus"], "CLOSED");
    // Terminal: advance and revert are refused.
    let e = c
        .err(
            "advance",
            json!({"containerType":"task","id":id,"version":3}),
            "INVALID_OPERATION",
        )
        .await;
    assert!(e["message"].as_str().unwrap().contains("terminal"));
    c.err(
        "revert",
        json!({"containerType":"task","id":id,"version":3}),
        "INVALID_OPERATION",
    )
    .await;
    c.stop().await;
}

async fn stale_version_is_a_conflict_carrying_the_current_version(t: Transport) {
    let c = Cairn::start_on(t).await;
    let id = id_of(&c.task(json!({"title":"T"})).await);
    c.ok(
        "advance",
        json!({"containerType":"task","id":id,"version":1}),
    )
    .await;
    let e = c
        .err(
            "advance",
            json!({"containerType":"task","id":id,"version":1}),
            "CONFLICT",
        )
        .await;
    assert_eq!(e["details"]["currentVersion"], 2);
    assert_eq!(e["details"]["sentVersion"], 1);
    assert!(e["message"].as_str().unwrap().contains("re-read"));
    let e = c
        .err(
            "manage_container",
            json!({"operation":"update","containerType":"task","id":id,"version":1,"title":"x"}),
            "CONFLICT",
        )
        .await;
    assert_eq!(e["details"]["currentVersion"], 2);
    // Version is required on transitions and updates.
    let e = c
        .err(
            "advance",
            json!({"containerType":"task","id":id}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "version");
    c.err(
        "advance",
        json!({"containerType":"task","id":"0192f000-0000-7000-8000-00000000ffff","version":1}),
        "NOT_FOUND",
    )
    .await;
    c.stop().await;
}

async fn revert_moves_back_one_step_and_refuses_at_new(t: Transport) {
    let c = Cairn::start_on(t).await;
    let id = id_of(&c.task(json!({"title":"T"})).await);
    let e = c
        .err(
            "revert",
            json!({"containerType":"task","id":id,"version":1}),
            "INVALID_OPERATION",
        )
        .await;
    assert!(e["message"].as_str().unwrap().contains("NEW"));
    c.ok(
        "advance",
        json!({"containerType":"task","id":id,"version":1}),
    )
    .await;
    let d = c
        .ok(
            "revert",
            json!({"containerType":"task","id":id,"version":2}),
        )
        .await;
    assert_eq!(d["newStatus"], "NEW");
    assert_eq!(d["task"]["version"], 3);
    c.stop().await;
}

async fn blocked_items_refuse_advance_and_revert_until_the_blocker_closes(t: Transport) {
    let c = Cairn::start_on(t).await;
    let a = id_of(&c.task(json!({"title":"blocker"})).await);
    let b = id_of(&c.task(json!({"title":"blocked"})).await);
    let d = c
        .ok(
            "block",
            json!({"containerType":"task","id":b,"version":1,"blockedBy":[a]}),
        )
        .await;
    assert_eq!(d["blocked"], true);
    let e = c
        .err(
            "advance",
            json!({"containerType":"task","id":b,"version":2}),
            "BLOCKED",
        )
        .await;
    assert_eq!(e["details"]["blockers"][0]["id"], json!(a));
    let st = c
        .ok(
            "query_workflow_state",
            json!({"containerType":"task","id":b}),
        )
        .await;
    assert_eq!(st["blocked"], true);
    assert_eq!(st["canAdvance"], false);
    assert_eq!(st["advanceRefused"]["code"], "BLOCKED");
    assert_eq!(st["nextStatus"], "ACTIVE");
    // get_next_task skips the blocked task; get_blocked_tasks lists it with its blocker.
    let n = c.ok("get_next_task", json!({})).await;
    assert_eq!(n["task"]["id"], json!(a));
    let bl = c.ok("get_blocked_tasks", json!({})).await;
    assert_eq!(bl["tasks"][0]["id"], json!(b));
    assert_eq!(bl["tasks"][0]["blockedBy"][0]["id"], json!(a));
    // The blocker reaching CLOSED releases it, and the answer says so.
    c.advance("task", &a).await;
    let d = c.advance("task", &a).await;
    assert_eq!(d["newStatus"], "CLOSED");
    assert_eq!(d["unblocked"][0]["id"], json!(b));
    let st = c
        .ok(
            "query_workflow_state",
            json!({"containerType":"task","id":b}),
        )
        .await;
    assert_eq!(st["blocked"], false);
    assert_eq!(st["canAdvance"], true);
    c.advance("task", &b).await;
    c.stop().await;
}

async fn a_terminated_blocker_does_not_release_its_dependents(t: Transport) {
    let c = Cairn::start_on(t).await;
    let a = id_of(&c.task(json!({"title":"blocker"})).await);
    let b = id_of(&c.task(json!({"title":"blocked"})).await);
    c.ok(
        "manage_dependency",
        json!({"operation":"create","fromId":a,"toId":b,"type":"BLOCKS"}),
    )
    .await;
    let d = c
        .ok(
            "terminate",
            json!({"containerType":"task","id":a,"version":1,"reason":"superseded"}),
        )
        .await;
    assert_eq!(d["newStatus"], "WILL_NOT_IMPLEMENT");
    assert_eq!(d["task"]["statusReason"], "superseded");
    assert_eq!(d["stillBlocked"][0]["id"], json!(b));
    let v = c.version("task", &b).await;
    c.err(
        "advance",
        json!({"containerType":"task","id":b,"version":v}),
        "BLOCKED",
    )
    .await;
    // Unblocking by hand releases it.
    c.ok(
        "unblock",
        json!({"containerType":"task","id":b,"version":v,"blockedBy":[a]}),
    )
    .await;
    c.advance("task", &b).await;
    c.stop().await;
}

async fn no_op_blocker_needs_a_reason_and_is_removed_by_unblock(t: Transport) {
    let c = Cairn::start_on(t).await;
    let t = id_of(&c.task(json!({"title":"waits on vendor"})).await);
    let e = c
        .err(
            "block",
            json!({"containerType":"task","id":t,"version":1,"blockedBy":"NO_OP"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "blockedReason");
    // The failed call wrote nothing: the version is unchanged.
    assert_eq!(c.version("task", &t).await, 1);
    let d = c.ok("block", json!({"containerType":"task","id":t,"version":1,"blockedBy":"NO_OP","blockedReason":"vendor API key"})).await;
    assert_eq!(d["blockers"][0]["id"], "NO_OP");
    assert_eq!(d["blockers"][0]["reason"], "vendor API key");
    c.err(
        "advance",
        json!({"containerType":"task","id":t,"version":2}),
        "BLOCKED",
    )
    .await;
    let d = c
        .ok(
            "unblock",
            json!({"containerType":"task","id":t,"version":2,"blockedBy":"NO_OP"}),
        )
        .await;
    assert_eq!(d["blocked"], false);
    c.err(
        "unblock",
        json!({"containerType":"task","id":t,"version":3,"blockedBy":"NO_OP"}),
        "INVALID_OPERATION",
    )
    .await;
    c.stop().await;
}

async fn dependency_cycles_and_self_blocks_are_refused(t: Transport) {
    let c = Cairn::start_on(t).await;
    let a = id_of(&c.task(json!({"title":"a"})).await);
    let b = id_of(&c.task(json!({"title":"b"})).await);
    let x = id_of(&c.task(json!({"title":"x"})).await);
    c.ok(
        "manage_dependency",
        json!({"operation":"create","fromId":a,"toId":b}),
    )
    .await;
    c.ok(
        "manage_dependency",
        json!({"operation":"create","fromId":b,"toId":x}),
    )
    .await;
    c.err(
        "manage_dependency",
        json!({"operation":"create","fromId":x,"toId":a}),
        "INVARIANT_VIOLATION",
    )
    .await;
    c.err(
        "manage_dependency",
        json!({"operation":"create","fromId":a,"toId":a}),
        "INVARIANT_VIOLATION",
    )
    .await;
    c.err(
        "manage_dependency",
        json!({"operation":"create","fromId":a,"toId":b}),
        "INVALID_OPERATION",
    )
    .await;
    // RELATES_TO never blocks.
    let r = c
        .ok(
            "manage_dependency",
            json!({"operation":"create","fromId":x,"toId":a,"type":"RELATES_TO"}),
        )
        .await;
    let deps = c
        .ok("query_dependencies", json!({"containerType":"task","id":a}))
        .await;
    assert_eq!(deps["dependencies"].as_array().unwrap().len(), 1);
    assert_eq!(deps["dependents"][0]["toId"], json!(b));
    c.advance("task", &a).await;
    // Delete by id and by ends.
    c.ok(
        "manage_dependency",
        json!({"operation":"delete","id":r["dependency"]["id"]}),
    )
    .await;
    c.ok(
        "manage_dependency",
        json!({"operation":"delete","fromId":b,"toId":x,"type":"BLOCKS"}),
    )
    .await;
    c.err(
        "manage_dependency",
        json!({"operation":"delete","fromId":b,"toId":x,"type":"BLOCKS"}),
        "NOT_FOUND",
    )
    .await;
    let st = c
        .ok(
            "query_workflow_state",
            json!({"containerType":"task","id":x}),
        )
        .await;
    assert_eq!(st["blocked"], false);
    c.stop().await;
}

async fn first_active_task_activates_its_feature_and_last_closed_task_closes_it(t: Transport) {
    let c = Cairn::start_on(t).await;
    let p = c.project("P").await;
    let f = c.feature(&p, "F").await;
    let t1 = c.task(json!({"title":"one","featureId":f})).await;
    assert_eq!(
        t1["projectId"],
        json!(p),
        "a task's project follows its feature"
    );
    let t1 = id_of(&t1);
    let t2 = id_of(&c.task(json!({"title":"two","featureId":f})).await);
    let d = c.advance("task", &t1).await;
    assert_eq!(d["featureTransition"]["newStatus"], "ACTIVE");
    assert_eq!(c.get("feature", &f).await["status"], "ACTIVE");
    assert_eq!(c.get("feature", &f).await["version"], 2);
    // The feature cannot close while tasks are open.
    let e = c
        .err(
            "advance",
            json!({"containerType":"feature","id":f,"version":2}),
            "INVALID_OPERATION",
        )
        .await;
    assert_eq!(e["details"]["openTasks"], 2);
    c.advance("task", &t1).await;
    assert_eq!(c.get("feature", &f).await["status"], "ACTIVE");
    let v = c.version("task", &t2).await;
    let d = c
        .ok(
            "terminate",
            json!({"containerType":"task","id":t2,"version":v,"reason":"dropped"}),
        )
        .await;
    assert_eq!(
        d["featureTransition"]["newStatus"], "CLOSED",
        "one task CLOSED: the feature closes"
    );
    c.stop().await;
}

async fn feature_whose_tasks_were_all_terminated_becomes_will_not_implement(t: Transport) {
    let c = Cairn::start_on(t).await;
    let p = c.project("P").await;
    let f = c.feature(&p, "F").await;
    let t = id_of(&c.task(json!({"title":"only","featureId":f})).await);
    let d = c
        .ok(
            "terminate",
            json!({"containerType":"task","id":t,"version":1}),
        )
        .await;
    assert_eq!(d["featureTransition"]["newStatus"], "WILL_NOT_IMPLEMENT");
    let fv = c.get("feature", &f).await;
    assert_eq!(fv["status"], "WILL_NOT_IMPLEMENT");
    c.err(
        "advance",
        json!({"containerType":"feature","id":f,"version":fv["version"]}),
        "INVALID_OPERATION",
    )
    .await;
    c.stop().await;
}

async fn next_task_orders_by_priority_then_complexity_then_age(t: Transport) {
    let c = Cairn::start_on(t).await;
    let p = c.project("P").await;
    let low = id_of(
        &c.task(json!({"title":"low","priority":"LOW","complexity":1,"projectId":p}))
            .await,
    );
    let med_hard = id_of(
        &c.task(json!({"title":"med hard","priority":"MEDIUM","complexity":8,"projectId":p}))
            .await,
    );
    let med_easy_old = id_of(
        &c.task(json!({"title":"med easy old","priority":"MEDIUM","complexity":2,"projectId":p}))
            .await,
    );
    let med_easy_new = id_of(
        &c.task(json!({"title":"med easy new","priority":"MEDIUM","complexity":2,"projectId":p}))
            .await,
    );
    let high = id_of(
        &c.task(json!({"title":"high","priority":"HIGH","complexity":9,"projectId":p}))
            .await,
    );
    let mut order = Vec::new();
    for _ in 0..5 {
        let n = c.ok("get_next_task", json!({"projectId":p})).await;
        let id = id_of(&n["task"]);
        order.push(id.clone());
        c.advance("task", &id).await; // ACTIVE: no longer NEW
    }
    assert_eq!(order, vec![high, med_easy_old, med_easy_new, med_hard, low]);
    let n = c.ok("get_next_task", json!({"projectId":p})).await;
    assert!(n["task"].is_null());
    c.stop().await;
}

async fn next_task_filters_by_feature_and_priority(t: Transport) {
    let c = Cairn::start_on(t).await;
    let p = c.project("P").await;
    let f = c.feature(&p, "F").await;
    c.task(json!({"title":"outside","priority":"HIGH","projectId":p}))
        .await;
    let inside = id_of(
        &c.task(json!({"title":"inside","priority":"LOW","featureId":f}))
            .await,
    );
    let n = c.ok("get_next_task", json!({"featureId":f})).await;
    assert_eq!(n["task"]["id"], json!(inside));
    let n = c
        .ok("get_next_task", json!({"projectId":p,"priority":"LOW"}))
        .await;
    assert_eq!(n["task"]["id"], json!(inside));
    c.stop().await;
}

async fn next_feature_prefers_active_then_new_and_skips_blocked(t: Transport) {
    let c = Cairn::start_on(t).await;
    let p = c.project("P").await;
    let new_high = c.ok("manage_container", json!({"operation":"create","containerType":"feature","name":"new high","priority":"HIGH","projectId":p})).await;
    let new_high = id_of(&new_high["feature"]);
    let active_low = c.ok("manage_container", json!({"operation":"create","containerType":"feature","name":"active low","priority":"LOW","projectId":p})).await;
    let active_low = id_of(&active_low["feature"]);
    c.advance("feature", &active_low).await;
    let n = c.ok("get_next_feature", json!({"projectId":p})).await;
    assert_eq!(n["feature"]["id"], json!(active_low));
    let v = c.version("feature", &active_low).await;
    c.ok("block", json!({"containerType":"feature","id":active_low,"version":v,"blockedBy":"NO_OP","blockedReason":"legal review"})).await;
    let n = c.ok("get_next_feature", json!({"projectId":p})).await;
    assert_eq!(n["feature"]["id"], json!(new_high));
    let b = c.ok("get_blocked_features", json!({"projectId":p})).await;
    assert_eq!(b["features"][0]["id"], json!(active_low));
    assert_eq!(b["features"][0]["blockedBy"][0]["reason"], "legal review");
    c.stop().await;
}

fn write_config(path: &std::path::Path, task_states: &str) {
    std::fs::write(
        path,
        format!(
            "[workflow]\ntask = [{task_states}]\nfeature = [\"NEW\", \"ACTIVE\", \"CLOSED\"]\n"
        ),
    )
    .unwrap();
}

#[tokio::test]
async fn configured_pipeline_applies_and_sync_refuses_to_strand_rows_without_override() {
    let dir = TempDir::new();
    let cfg = dir.path().join("config.toml");
    write_config(
        &cfg,
        r#""NEW", "ACTIVE", "TO_BE_TESTED", "READY_TO_PROD", "CLOSED""#,
    );
    let db = dir.path().join("c.db");
    let c = Cairn::on(&db, &["--config", cfg.to_str().unwrap()]).await;
    let t = id_of(&c.task(json!({"title":"T"})).await);
    c.advance("task", &t).await;
    let d = c.advance("task", &t).await;
    assert_eq!(d["newStatus"], "TO_BE_TESTED");
    let st = c
        .ok(
            "query_workflow_state",
            json!({"containerType":"task","id":t}),
        )
        .await;
    assert_eq!(
        st["pipeline"],
        json!(["NEW", "ACTIVE", "TO_BE_TESTED", "READY_TO_PROD", "CLOSED"])
    );
    assert_eq!(
        (st["previousStatus"].as_str(), st["nextStatus"].as_str()),
        (Some("ACTIVE"), Some("READY_TO_PROD"))
    );
    // Dropping TO_BE_TESTED would strand the task: refused, nothing changes.
    write_config(&cfg, r#""NEW", "ACTIVE", "CLOSED""#);
    let e = c.err("sync", json!({}), "INVALID_OPERATION").await;
    assert_eq!(e["details"]["stranded"]["task:TO_BE_TESTED"]["count"], 1);
    assert_eq!(
        e["details"]["stranded"]["task:TO_BE_TESTED"]["wouldMoveTo"],
        "ACTIVE"
    );
    assert_eq!(c.get("task", &t).await["status"], "TO_BE_TESTED");
    // With override the row moves to the nearest earlier state that remains.
    let d = c.ok("sync", json!({"override":true})).await;
    assert_eq!(
        d["task"]["moved"][0],
        json!({"from":"TO_BE_TESTED","to":"ACTIVE","count":1})
    );
    assert_eq!(c.get("task", &t).await["status"], "ACTIVE");
    let d = c.advance("task", &t).await;
    assert_eq!(d["newStatus"], "CLOSED");
    let d = c.ok("sync", json!({})).await;
    assert!(d["task"]["moved"].as_array().unwrap().is_empty());
    c.stop().await;
}

#[test]
fn an_invalid_pipeline_in_the_config_stops_start_up_with_a_clear_error() {
    let dir = TempDir::new();
    let cfg = dir.path().join("config.toml");
    for (states, expect) in [
        (r#""NEW", "CLOSED""#, "contains ACTIVE"),
        (r#""ACTIVE", "NEW", "CLOSED""#, "catalog order"),
        (
            r#""NEW", "ACTIVE", "DONE", "CLOSED""#,
            "'DONE' is not a task state",
        ),
    ] {
        write_config(&cfg, states);
        let out = std::process::Command::new(crate::harness::BIN)
            .args([
                "--config",
                cfg.to_str().unwrap(),
                "--db",
                dir.path().join("x.db").to_str().unwrap(),
                "tools",
            ])
            .output()
            .unwrap();
        assert!(!out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(expect), "{states}: {err}");
    }
}

/// An agent sees that an item is blocked, and by what, from the item alone: `get`,
/// `search` rows and overview rows carry `blockedBy` (blocker ids, or NO_OP) while a
/// blocker is open, and drop it once none is.
async fn a_blocked_item_says_so_on_get_search_and_overview(t: Transport) {
    let c = Cairn::start_on(t).await;
    let p = c.project("Blocked").await;
    let f = c.feature(&p, "F").await;
    let a = id_of(&c.task(json!({"title":"a","featureId":f})).await);
    let b = id_of(&c.task(json!({"title":"b","featureId":f})).await);
    let n = id_of(&c.task(json!({"title":"n","featureId":f})).await);
    c.ok(
        "block",
        json!({"containerType":"task","id":b,"version":1,"blockedBy":[a]}),
    )
    .await;
    c.ok(
        "manage_dependency",
        json!({"operation":"create","fromId":a,"toId":n,"type":"BLOCKS"}),
    )
    .await;
    let v = c.version("task", &n).await;
    c.ok("block", json!({"containerType":"task","id":n,"version":v,"blockedBy":"NO_OP","blockedReason":"vendor key"}))
        .await;
    assert_eq!(c.get("task", &b).await["blockedBy"], json!([a]));
    let mut on_n: Vec<String> =
        serde_json::from_value(c.get("task", &n).await["blockedBy"].clone()).unwrap();
    on_n.sort();
    let mut want = vec![a.clone(), "NO_OP".to_string()];
    want.sort();
    assert_eq!(on_n, want);
    assert!(c.get("task", &a).await.get("blockedBy").is_none());
    let rows = c
        .ok(
            "query_container",
            json!({"operation":"search","containerType":"task","projectId":p}),
        )
        .await;
    let row = |id: &str| {
        rows["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["id"] == json!(id))
            .unwrap()
            .clone()
    };
    assert_eq!(row(&b)["blockedBy"], json!([a]));
    assert!(row(&a).get("blockedBy").is_none());
    let ov = c
        .ok(
            "query_container",
            json!({"operation":"overview","containerType":"feature","id":f}),
        )
        .await;
    let t = ov["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == json!(b))
        .unwrap()
        .clone();
    assert_eq!(t["blockedBy"], json!([a]));
    // Features too.
    let g = c.feature(&p, "G").await;
    c.ok(
        "block",
        json!({"containerType":"feature","id":g,"version":1,"blockedBy":[f]}),
    )
    .await;
    assert_eq!(c.get("feature", &g).await["blockedBy"], json!([f]));
    // The blocker closing releases b; n keeps its NO_OP.
    c.advance("task", &a).await;
    c.advance("task", &a).await;
    assert!(c.get("task", &b).await.get("blockedBy").is_none());
    assert_eq!(c.get("task", &n).await["blockedBy"], json!(["NO_OP"]));
    c.stop().await;
}

/// A write that bumps another item's version answers that version, so the agent's
/// next write of that item goes through instead of meeting a CONFLICT.
async fn a_write_answers_the_versions_it_bumped_elsewhere(t: Transport) {
    let c = Cairn::start_on(t).await;
    let p = c.project("Bumps").await;
    let p2 = c.project("Elsewhere").await;
    let f = c.feature(&p, "F").await;
    let a = id_of(&c.task(json!({"title":"a","featureId":f})).await);
    let b = id_of(&c.task(json!({"title":"b","featureId":f})).await);
    let d = c
        .ok(
            "manage_dependency",
            json!({"operation":"create","fromId":a,"toId":b,"type":"BLOCKS"}),
        )
        .await;
    assert_eq!(d["updated"][0]["id"], json!(b));
    assert_eq!(d["updated"][0]["entity"], "task");
    let v = d["updated"][0]["version"].as_i64().unwrap();
    let up = c
        .ok(
            "manage_container",
            json!({"operation":"update","containerType":"task","id":b,"version":v,"summary":"now"}),
        )
        .await;
    let dep = d["dependency"]["id"].as_str().unwrap().to_string();
    let v = up["task"]["version"].as_i64().unwrap();
    let del = c
        .ok("manage_dependency", json!({"operation":"delete","id":dep}))
        .await;
    assert_eq!(del["updated"][0]["version"], json!(v + 1));
    c.ok("manage_container", json!({"operation":"update","containerType":"task","id":b,"version":v + 1,"summary":"later"}))
        .await;
    // Moving a feature answers its tasks' new versions.
    let fv = c.version("feature", &f).await;
    let mv = c
        .ok("manage_container", json!({"operation":"update","containerType":"feature","id":f,"version":fv,"projectId":p2}))
        .await;
    let moved: Vec<Value> = mv["updated"].as_array().unwrap().clone();
    assert_eq!(moved.len(), 2);
    for t in moved {
        c.ok("manage_container", json!({"operation":"update","containerType":"task","id":t["id"],"version":t["version"],"summary":"moved"}))
            .await;
    }
    // A template's section answers the template's version.
    let tpl = c
        .ok(
            "manage_template",
            json!({"operation":"create","name":"Mine","targetEntityType":"TASK"}),
        )
        .await["template"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let s = c
        .ok(
            "manage_template",
            json!({"operation":"addSection","id":tpl,"title":"Notes"}),
        )
        .await;
    let tv = s["templateVersion"].as_i64().unwrap();
    c.ok(
        "manage_template",
        json!({"operation":"update","id":tpl,"version":tv,"description":"d"}),
    )
    .await;
    c.stop().await;
}

/// Messages name the items they speak of, not only their ids.
async fn conflict_and_blocked_messages_name_the_items(t: Transport) {
    let c = Cairn::start_on(t).await;
    let a = id_of(&c.task(json!({"title":"Write the parser"})).await);
    let b = id_of(&c.task(json!({"title":"Ship the release"})).await);
    let e = c
        .err(
            "manage_container",
            json!({"operation":"update","containerType":"task","id":a,"version":7,"summary":"x"}),
            "CONFLICT",
        )
        .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("\"Write the parser\""),
        "{e}"
    );
    c.ok(
        "block",
        json!({"containerType":"task","id":b,"version":1,"blockedBy":[a]}),
    )
    .await;
    let e = c
        .err(
            "advance",
            json!({"containerType":"task","id":b,"version":2}),
            "BLOCKED",
        )
        .await;
    let m = e["message"].as_str().unwrap();
    assert!(
        m.contains("\"Ship the release\"") && m.contains("\"Write the parser\""),
        "{m}"
    );
    let e = c
        .err(
            "advance",
            json!({"containerType":"task","id":b,"version":1}),
            "CONFLICT",
        )
        .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("\"Ship the release\""),
        "{e}"
    );
    c.stop().await;
}

crate::over_both_transports!(
    advance_walks_the_default_pipeline_and_bumps_versions,
    stale_version_is_a_conflict_carrying_the_current_version,
    revert_moves_back_one_step_and_refuses_at_new,
    blocked_items_refuse_advance_and_revert_until_the_blocker_closes,
    a_terminated_blocker_does_not_release_its_dependents,
    no_op_blocker_needs_a_reason_and_is_removed_by_unblock,
    dependency_cycles_and_self_blocks_are_refused,
    first_active_task_activates_its_feature_and_last_closed_task_closes_it,
    feature_whose_tasks_were_all_terminated_becomes_will_not_implement,
    next_task_orders_by_priority_then_complexity_then_age,
    next_task_filters_by_feature_and_priority,
    next_feature_prefers_active_then_new_and_skips_blocked,
    a_blocked_item_says_so_on_get_search_and_overview,
    a_write_answers_the_versions_it_bumped_elsewhere,
    conflict_and_blocked_messages_name_the_items,
);
