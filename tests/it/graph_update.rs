//! An atom's update through MCP: what it keeps of the fields it is not given, and
//! its refusals in the order its checks run (the one-statement rewrite and the full
//! update answer alike).

use serde_json::{json, Value};

use crate::graph::Fixture;
use crate::harness::id_of;

#[tokio::test]
async fn an_update_keeps_what_it_does_not_set_and_refuses_in_the_checks_order() {
    let f = Fixture::new().await;
    let a = f
        .atom(
            "Hooks",
            &["src/hooks/**", "lib/hooks.ts"],
            None,
            "Retries twice.",
        )
        .await;
    let id = id_of(&a);
    let up = |v: i64, set: Value| {
        let mut x = json!({"operation":"update","entityType":"atom","id":id,"version":v,"lastTaskId":f.task});
        for (k, val) in set.as_object().unwrap() {
            x[k] = val.clone();
        }
        x
    };
    // The name alone: knowledge and patterns stay.
    let u =
        f.c.ok("manage_graph", up(1, json!({"name":"Webhooks"})))
            .await;
    assert_eq!(u["atom"]["version"], json!(2));
    let got = f.get_atom(&id).await;
    assert_eq!(got["name"], json!("Webhooks"));
    assert_eq!(got["knowledge"], json!("Retries twice."));
    assert_eq!(got["paths"], json!(["src/hooks/**", "lib/hooks.ts"]));
    // Patterns alone, repeated ones kept once: the context follows them.
    let p = json!(["src/webhooks/**", "src/webhooks/**"]).to_string();
    f.c.ok("manage_graph", up(2, json!({"paths":p}))).await;
    let got = f.get_atom(&id).await;
    assert_eq!(got["paths"], json!(["src/webhooks/**"]));
    assert_eq!(got["name"], json!("Webhooks"));
    assert_eq!(got["knowledge"], json!("Retries twice."));
    let ctx = f.context("src/webhooks/in.ts,src/hooks/old.ts").await;
    assert!(ctx.to_string().contains("Webhooks"), "{ctx:#}");
    // Knowledge alone, then the refusals, each in the order the checks run: the
    // atom, its version, the task, the patterns.
    f.c.ok(
        "manage_graph",
        up(3, json!({"knowledge":"Retries three times."})),
    )
    .await;
    assert_eq!(
        f.get_atom(&id).await["knowledge"],
        json!("Retries three times.")
    );
    let bad = json!(["/etc/**"]).to_string();
    let missing = "01a00000-0000-7000-8000-000000000000";
    let mut gone = up(4, json!({"paths":bad}));
    gone["id"] = json!(missing);
    f.c.err("manage_graph", gone, "NOT_FOUND").await;
    let e =
        f.c.err(
            "manage_graph",
            up(1, json!({"lastTaskId":missing,"paths":bad})),
            "CONFLICT",
        )
        .await;
    assert_eq!(e["details"]["currentVersion"], json!(4));
    let e =
        f.c.err(
            "manage_graph",
            up(4, json!({"lastTaskId":missing,"paths":bad})),
            "NOT_FOUND",
        )
        .await;
    assert!(e.to_string().contains("lastTaskId"), "{e:#}");
    let e =
        f.c.err(
            "manage_graph",
            up(4, json!({"paths":bad})),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], json!("paths"));
    // Nothing refused was written.
    let got = f.get_atom(&id).await;
    assert_eq!(got["version"], json!(4));
    assert_eq!(got["paths"], json!(["src/webhooks/**"]));
    f.c.stop().await;
}
