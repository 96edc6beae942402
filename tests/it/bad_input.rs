//! A sweep of every tool with bad input: wrong types, unknown enum values, malformed
//! ids, missing required fields, unknown parameters and 1 MB strings. Each answer is a
//! VALIDATION_ERROR envelope naming the parameter, and the server stays up.

use serde_json::{json, Map, Value};

use crate::harness::Cairn;

fn wrong_type(spec: &Value) -> Value {
    match spec["type"].as_str() {
        Some("integer") | Some("number") => json!("seven"),
        Some("boolean") => json!("yes"),
        Some("string") => json!(12345),
        _ => json!(42),
    }
}

#[tokio::test]
async fn every_tool_refuses_bad_input_with_a_validation_envelope() {
    let c = Cairn::start().await;
    let big = "x".repeat(1024 * 1024);
    let tools = c.tools().await;
    let mut calls = 0;
    for tool in &tools {
        let name = tool.name.to_string();
        let schema = serde_json::to_value(tool.input_schema.as_ref()).unwrap();
        let props = schema["properties"].as_object().unwrap().clone();
        let required: Vec<String> = schema["required"]
            .as_array()
            .map(|a| a.iter().map(|v| v.as_str().unwrap().to_string()).collect())
            .unwrap_or_default();
        let expect = |env: &Value, param: &str, what: &str| {
            assert_eq!(env["success"], json!(false), "{name} {what} {param}: {env}");
            assert_eq!(
                env["error"]["code"],
                json!("VALIDATION_ERROR"),
                "{name} {what} {param}: {env}"
            );
        };
        if !required.is_empty() {
            let env = c.call(&name, json!({})).await;
            expect(&env, "", "missing required");
            calls += 1;
        }
        let env = c.call(&name, json!({"definitelyNotAParameter": 1})).await;
        expect(&env, "definitelyNotAParameter", "unknown parameter");
        assert_eq!(
            env["error"]["details"]["parameter"],
            json!("definitelyNotAParameter")
        );
        for (param, spec) in &props {
            let mut cases: Vec<(&str, Value)> = vec![("wrong type", wrong_type(spec))];
            if spec.get("enum").is_some() {
                cases.push(("unknown enum", json!("NOT_A_VALUE")));
            }
            if spec["format"] == json!("uuid") {
                cases.push(("malformed id", json!("not-a-uuid")));
                cases.push((
                    "uuid with junk",
                    json!("0192f000-0000-7000-8000-000000000001; DROP TABLE tasks"),
                ));
            }
            if spec["type"] == json!("string") || spec.get("anyOf").is_some() {
                cases.push(("1 MB string", json!(big)));
            }
            if spec["type"] == json!("integer") {
                cases.push(("negative integer", json!(-1)));
            }
            for (what, bad) in cases {
                let mut args = Map::new();
                args.insert(param.clone(), bad);
                let env = c.call(&name, Value::Object(args)).await;
                calls += 1;
                if what == "negative integer"
                    && (param == "offset" || param == "ordinal" || param == "complexity")
                {
                    // Out of range is refused too, but a missing required field may be named first.
                    assert_eq!(env["success"], json!(false), "{name} {param}: {env}");
                    continue;
                }
                expect(&env, param, what);
                // Bulk documents (sections, an OFN import) may be that large.
                let bulk = param == "sections" || param == "ofn";
                if !(what == "1 MB string" && bulk) && what != "negative integer" {
                    assert_eq!(
                        env["error"]["details"]["parameter"],
                        json!(param),
                        "{name} {what} names {param}: {env}"
                    );
                }
            }
        }
    }
    assert!(calls > 200, "sweep made only {calls} calls");
    // Still up and answering.
    let p = c.project("still here").await;
    assert_eq!(p.len(), 36);
    c.stop().await;
}

#[tokio::test]
async fn oversized_fields_are_refused_and_nothing_is_half_written() {
    let c = Cairn::start().await;
    let long_name = "n".repeat(256);
    let e = c
        .err(
            "manage_container",
            json!({"operation":"create","containerType":"project","name":long_name}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "name");
    let e = c.err("manage_container", json!({"operation":"create","containerType":"project","name":"ok","summary":"s".repeat(4097)}), "VALIDATION_ERROR").await;
    assert_eq!(e["details"]["parameter"], "summary");
    let e = c.err("manage_container", json!({"operation":"create","containerType":"project","name":"ok","description":"d".repeat(32 * 1024 + 1)}), "VALIDATION_ERROR").await;
    assert_eq!(e["details"]["parameter"], "description");
    let e = c
        .err(
            "query_container",
            json!({"operation":"search","containerType":"task","query":"q".repeat(1025)}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "query");
    let e = c
        .err(
            "manage_container",
            json!({"operation":"create","containerType":"task","title":"t","complexity":11}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "complexity");
    let e = c
        .err(
            "manage_container",
            json!({"operation":"create","containerType":"project","name":"   "}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "name");
    // None of these left a row behind.
    let all = c
        .ok(
            "query_container",
            json!({"operation":"search","containerType":"project"}),
        )
        .await;
    assert_eq!(all["total"], 0);
    let all = c
        .ok(
            "query_container",
            json!({"operation":"search","containerType":"task"}),
        )
        .await;
    assert_eq!(all["total"], 0);
    c.stop().await;
}
