//! The code toolset's validation through MCP: every rule is checked before anything is written.

use serde_json::{json, Value};

use crate::code::{id, Code};

#[tokio::test]
async fn every_validation_rule_is_checked_before_anything_is_written() {
    let k = Code::start().await;
    let (dom, feat, ns) = k.spine().await;
    let u = k.unit(1, &ns).await;
    let code = |sym: &str| json!({"command":"add","kind":"code","documentPath":"src/calc.c","lspSymbol":sym});
    let text = json!({"command":"add","kind":"text","documentPath":"docs/design.md","startLine":1,"endLine":2});
    let create = |name: &str, cats: Value, parents: Value, cmds: Value| json!({"projectId":k.pid,"name":name,"description":"d","categoryIds":cats,"parentIds":parents,"commands":cmds});
    let cases: Vec<(Value, &str, &str)> = vec![
        // at least one Add
        (
            create(
                "x",
                json!([k.cat("function")]),
                json!([ns]),
                json!([{"command":"relate","entityId":dom}]),
            ),
            "VALIDATION_ERROR",
            "commands",
        ),
        (
            create("x", json!([k.cat("function")]), json!([ns]), json!([])),
            "VALIDATION_ERROR",
            "commands",
        ),
        // at least one category; one scope
        (
            create("x", json!([]), json!([ns]), json!([code("f2")])),
            "VALIDATION_ERROR",
            "categoryIds",
        ),
        (
            create(
                "x",
                json!([k.cat("function"), k.cat("struct")]),
                json!([ns]),
                json!([code("f2")]),
            ),
            "VALIDATION_ERROR",
            "categoryIds",
        ),
        // parents: required below Domain, none for Domain, scope above the child's
        (
            create(
                "x",
                json!([k.cat("function")]),
                json!([]),
                json!([code("f2")]),
            ),
            "VALIDATION_ERROR",
            "parentIds",
        ),
        (
            create(
                "x",
                json!([k.cat("core")]),
                json!([dom]),
                json!([text.clone()]),
            ),
            "VALIDATION_ERROR",
            "parentIds",
        ),
        (
            create(
                "x",
                json!([k.cat("module")]),
                json!([id(&u)]),
                json!([code("f2")]),
            ),
            "VALIDATION_ERROR",
            "parentIds",
        ),
        (
            create(
                "x",
                json!([k.cat("capability")]),
                json!([feat]),
                json!([text.clone()]),
            ),
            "VALIDATION_ERROR",
            "parentIds",
        ),
        // reference kind by scope
        (
            create(
                "x",
                json!([k.cat("capability")]),
                json!([dom]),
                json!([code("f2")]),
            ),
            "VALIDATION_ERROR",
            "commands[0].kind",
        ),
        (
            create(
                "x",
                json!([k.cat("function")]),
                json!([ns]),
                json!([text.clone()]),
            ),
            "VALIDATION_ERROR",
            "commands[0].kind",
        ),
        // link only for Component/Unit
        (
            create(
                "x",
                json!([k.cat("module")]),
                json!([feat]),
                json!([code("f2"), {"command":"link","entityId":id(&u),"linkType":"CALLS"}]),
            ),
            "VALIDATION_ERROR",
            "commands[1].command",
        ),
        // all adds in one document
        (
            create(
                "x",
                json!([k.cat("module")]),
                json!([feat]),
                json!([code("f2"), text.clone()]),
            ),
            "VALIDATION_ERROR",
            "commands[1].documentPath",
        ),
        // path shape
        (
            create(
                "x",
                json!([k.cat("function")]),
                json!([ns]),
                json!([{"command":"add","kind":"code","documentPath":"/etc/passwd","lspSymbol":"x"}]),
            ),
            "VALIDATION_ERROR",
            "commands[0].documentPath",
        ),
        (
            create(
                "x",
                json!([k.cat("function")]),
                json!([ns]),
                json!([{"command":"add","kind":"code","documentPath":"src/../../x.c","lspSymbol":"x"}]),
            ),
            "VALIDATION_ERROR",
            "commands[0].documentPath",
        ),
        // command shape
        (
            create(
                "x",
                json!([k.cat("function")]),
                json!([ns]),
                json!([{"command":"explode"}]),
            ),
            "VALIDATION_ERROR",
            "commands[0].command",
        ),
        (
            create(
                "x",
                json!([k.cat("function")]),
                json!([ns]),
                json!([{"command":"add","kind":"code","documentPath":"src/calc.c","lspSymbol":"f2","bogus":1}]),
            ),
            "VALIDATION_ERROR",
            "commands[0].bogus",
        ),
        (
            create(
                "x",
                json!([k.cat("function")]),
                json!([ns]),
                json!([{"command":"add","kind":"code","documentPath":"src/calc.c"}]),
            ),
            "VALIDATION_ERROR",
            "commands[0].lspSymbol",
        ),
        (
            create(
                "x",
                json!([k.cat("capability")]),
                json!([dom]),
                json!([{"command":"add","kind":"text","documentPath":"docs/design.md","startLine":1}]),
            ),
            "VALIDATION_ERROR",
            "commands[0].endLine",
        ),
        (
            create(
                "x",
                json!([k.cat("capability")]),
                json!([dom]),
                json!([{"command":"add","kind":"text","documentPath":"docs/design.md","startLine":1,"endLine":2,"anchor":"Design"}]),
            ),
            "VALIDATION_ERROR",
            "commands[0].anchor",
        ),
        (
            create(
                "x",
                json!([k.cat("function")]),
                json!([ns]),
                json!([{"command":"link","entityId":"nope","linkType":"CALLS"}]),
            ),
            "VALIDATION_ERROR",
            "commands[0].entityId",
        ),
        (
            create(
                "x",
                json!([k.cat("function")]),
                json!([ns]),
                json!([code("f2"), {"command":"link","entityId":id(&u),"linkType":"USES"}]),
            ),
            "VALIDATION_ERROR",
            "commands[1].linkType",
        ),
        // bounds
        (
            create(
                &"n".repeat(256),
                json!([k.cat("function")]),
                json!([ns]),
                json!([code("f2")]),
            ),
            "VALIDATION_ERROR",
            "name",
        ),
        (
            json!({"projectId":k.pid,"name":"x","description":"d".repeat(32 * 1024 + 1),"categoryIds":[k.cat("function")],"parentIds":[ns],"commands":[code("f2")]}),
            "VALIDATION_ERROR",
            "description",
        ),
        // unknown category/parent
        (
            create(
                "x",
                json!(["0192f000-0000-7000-8000-0000000000cc"]),
                json!([ns]),
                json!([code("f2")]),
            ),
            "NOT_FOUND",
            "",
        ),
    ];
    for (args, code_want, param) in cases {
        let e = k.c.err("create_entity", args.clone(), code_want).await;
        if !param.is_empty() {
            assert_eq!(e["details"]["parameter"], json!(param), "{args}: {e:#}");
        }
    }
    // A missing file and a range past the end are clear errors, not crashes.
    let env = k.c.call("create_entity", create("x", json!([k.cat("function")]), json!([ns]), json!([{"command":"add","kind":"code","documentPath":"src/gone.c","lspSymbol":"x"}]))).await;
    assert_eq!(env["error"]["code"], "NOT_FOUND");
    assert!(env["message"].as_str().unwrap().contains("src/gone.c"));
    let env = k.c.call("create_entity", create("x", json!([k.cat("capability")]), json!([dom]), json!([{"command":"add","kind":"text","documentPath":"docs/design.md","startLine":1,"endLine":999}]))).await;
    assert_eq!(env["error"]["code"], "VALIDATION_ERROR");
    assert_eq!(env["error"]["details"]["parameter"], "endLine");
    let env = k.c.call("create_entity", create("x", json!([k.cat("capability")]), json!([dom]), json!([{"command":"add","kind":"text","documentPath":"docs/design.md","startLine":1,"endLine":2,"anchor":"## Nowhere"}]))).await;
    assert_eq!(env["error"]["code"], "INVALID_OPERATION");
    // None of these wrote anything: still 4 entities.
    let all = k.c.ok("find_entities", json!({"projectId":k.pid})).await;
    assert_eq!(all["total"], 4);

    // update: version required and checked; categories replace within the rules.
    let e =
        k.c.err(
            "update_entity",
            json!({"entityId":id(&u),"name":"y"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "version");
    let e =
        k.c.err(
            "update_entity",
            json!({"entityId":id(&u),"version":7,"name":"y"}),
            "CONFLICT",
        )
        .await;
    assert_eq!(e["details"]["currentVersion"], 1);
    k.c.err(
        "update_entity",
        json!({"entityId":id(&u),"version":1,"categoryIds":[k.cat("core")]}),
        "VALIDATION_ERROR",
    )
    .await;
    k.c.err(
        "update_entity",
        json!({"entityId":id(&u),"version":1,"categoryIds":[]}),
        "VALIDATION_ERROR",
    )
    .await;
    let ok =
        k.c.ok(
            "update_entity",
            json!({"entityId":id(&u),"version":1,"categoryIds":[k.cat("method"), k.cat("test")]}),
        )
        .await;
    assert_eq!(ok["entity"]["categories"].as_array().unwrap().len(), 2);
    // A parent's parents cannot include its own descendant (scope depth forbids the cycle).
    let e =
        k.c.err(
            "update_entity",
            json!({"entityId":ns,"version":1,"parentIds":[id(&u)]}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "parentIds");
    // delete_entity refuses while children exist, then removes the leaf and its lone reference.
    let e =
        k.c.err(
            "delete_entity",
            json!({"entityId":ns,"version":1}),
            "INVALID_OPERATION",
        )
        .await;
    assert_eq!(e["details"]["children"][0]["name"], "f1");
    let d =
        k.c.ok("delete_entity", json!({"entityId":id(&u),"version":2}))
            .await;
    assert_eq!(d["deletedReferenceIds"].as_array().unwrap().len(), 1);
    k.c.err("get_entity", json!({"entityId":id(&u)}), "NOT_FOUND")
        .await;
    k.c.stop().await;
}
