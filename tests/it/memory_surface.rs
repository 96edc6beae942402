//! The memory toolset where an agent first meets it, through MCP: values compared as
//! the collision rule states, lists sent as lists, the reflection prompt before any
//! diary entry exists.

use serde_json::{json, Value};

use crate::harness::Cairn;

async fn remember(c: &Cairn, now: &str, atom: Value, uri: &str) -> Value {
    c.ok(
        "manage_memory",
        json!({"operation":"remember","now":now,"atom":atom,"sources":[{"refType":"doc","uri":uri}]}),
    )
    .await
}

/// `10 MB` and `10mb` are one value ("ignoring case and spaces"): the second is no
/// new atom, and neither is CONTESTED.
#[tokio::test]
async fn claim_values_compare_ignoring_case_and_spaces() {
    let c = Cairn::start().await;
    let fact = |v: &str| {
        json!({"type":"Fact","statement":format!("The upload limit is {v}"),"predicate":"upload_limit",
               "value":v,"about":"Service:uploads","factKind":"reported","confidence":0.6})
    };
    let a = remember(&c, "2025-03-01T00:00:00Z", fact("10 MB"), "https://wiki/a").await;
    assert_eq!(a["atom"]["status"], "ACTIVE", "{a:#}");
    for (i, v) in ["10mb", " 10 Mb ", "10\u{a0}MB"].iter().enumerate() {
        let b = remember(
            &c,
            "2025-03-02T00:00:00Z",
            fact(v),
            &format!("https://wiki/b{i}"),
        )
        .await;
        assert_eq!(b["duplicateOf"], a["atom"]["id"], "{v}: {b:#}");
    }
    let got = c
        .ok(
            "query_memory",
            json!({"operation":"get","id":a["atom"]["id"]}),
        )
        .await;
    assert_ne!(got["atom"]["status"], "CONTESTED", "{got:#}");
    assert_eq!(got["evidence"].as_array().unwrap().len(), 4, "{got:#}");
    let other = remember(&c, "2025-03-03T00:00:00Z", fact("10 GB"), "https://wiki/c").await;
    assert_ne!(other["atom"]["id"], a["atom"]["id"]);
    // A different value is a different claim.
    assert!(other.get("duplicateOf").is_none(), "{other:#}");
    c.stop().await;
}

/// `ingest` takes the reflection prompt's own answer, a JSON array, as the array
/// itself (the schema says so) or as text holding it.
#[tokio::test]
async fn ingest_takes_the_rules_as_an_array() {
    let c = Cairn::start().await;
    let tools = c.tools().await;
    let schema = |tool: &str, p: &str| {
        let t = tools.iter().find(|t| t.name == tool).unwrap();
        serde_json::to_value(&t.input_schema).unwrap()["properties"][p]["type"].clone()
    };
    assert_eq!(schema("manage_diary", "rules"), json!(["array", "string"]));
    assert_eq!(schema("manage_graph", "paths"), json!(["array", "string"]));
    let e = c
        .ok(
            "manage_diary",
            json!({"operation":"write","session":"s1","accomplishments":["shipped"],"learnings":["pin the toolchain"]}),
        )
        .await["entry"]["id"]
        .clone();
    let rules = json!([{"rule":"Always pin the Rust toolchain version","category":"tooling","scope":"global",
                        "reasoning":"reproducible builds","diaryEntryIds":[e]}]);
    let r = c
        .ok("manage_diary", json!({"operation":"ingest","rules":rules}))
        .await;
    assert_eq!(r["rules"][0]["verdict"], "drafted", "{r:#}");
    let again = c
        .ok(
            "manage_diary",
            json!({"operation":"ingest","rules":rules.to_string()}),
        )
        .await;
    assert_eq!(again["rules"][0]["verdict"], "duplicate", "{again:#}");
    c.stop().await;
}

/// The reflection prompt before any diary entry exists says what to write first
/// (no protocol error).
#[tokio::test]
async fn the_reflection_prompt_with_no_entries_says_what_to_write() {
    let c = Cairn::start().await;
    let p = c
        .client
        .get_prompt(rmcp::model::GetPromptRequestParams::new("cairn-reflection"))
        .await
        .expect("prompts/get answers");
    let text = serde_json::to_value(&p.messages[0]).unwrap()["content"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.contains("no diary entries") && text.contains("manage_diary"),
        "{text}"
    );
    c.stop().await;
}
