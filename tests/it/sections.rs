//! Sections: add, update, updateText, delete, reorder, bulk operations, queries.

use serde_json::json;

use crate::harness::{id_of, Cairn};

#[tokio::test]
async fn section_lifecycle() {
    let c = Cairn::start().await;
    let t = id_of(&c.task(json!({"title":"T"})).await);
    let a = c.ok("manage_sections", json!({"operation":"add","entityType":"TASK","entityId":t,"title":"A","content":"alpha","tags":"x"})).await["section"].clone();
    let b = c.ok("manage_sections", json!({"operation":"add","entityType":"TASK","entityId":t,"title":"B","content":"beta","contentFormat":"PLAIN_TEXT"})).await["section"].clone();
    assert_eq!(
        (a["ordinal"].as_i64(), b["ordinal"].as_i64()),
        (Some(0), Some(1))
    );
    let (a, b) = (id_of(&a), id_of(&b));
    let u = c
        .ok(
            "manage_sections",
            json!({"operation":"update","sectionId":a,"version":1,"title":"A2"}),
        )
        .await;
    assert_eq!(
        (
            u["section"]["title"].as_str(),
            u["section"]["content"].as_str()
        ),
        (Some("A2"), Some("alpha"))
    );
    c.err(
        "manage_sections",
        json!({"operation":"updateText","sectionId":a,"version":1,"content":"late"}),
        "CONFLICT",
    )
    .await;
    c.err(
        "manage_sections",
        json!({"operation":"updateText","sectionId":a,"version":2,"title":"no"}),
        "VALIDATION_ERROR",
    )
    .await;
    let u = c.ok("manage_sections", json!({"operation":"updateText","sectionId":a,"version":2,"content":"  kept as given  "})).await;
    assert_eq!(u["section"]["content"], "  kept as given  ");
    let r = c.ok("manage_sections", json!({"operation":"reorder","entityType":"TASK","entityId":t,"orderedIds":format!("{b},{a}")})).await;
    assert_eq!(r["sections"][0]["id"], json!(b));
    c.err(
        "manage_sections",
        json!({"operation":"reorder","entityType":"TASK","entityId":t,"orderedIds":b}),
        "INVALID_OPERATION",
    )
    .await;
    let q = c
        .ok(
            "query_sections",
            json!({"entityType":"TASK","entityId":t,"includeContent":false}),
        )
        .await;
    assert_eq!(q["sections"].as_array().unwrap().len(), 2);
    assert!(q["sections"][0].get("content").is_none());
    let q = c
        .ok(
            "query_sections",
            json!({"entityType":"TASK","entityId":t,"tags":"x"}),
        )
        .await;
    assert_eq!(q["sections"][0]["id"], json!(a));
    let q = c
        .ok(
            "query_sections",
            json!({"entityType":"TASK","entityId":t,"sectionIds":b}),
        )
        .await;
    assert_eq!(q["sections"].as_array().unwrap().len(), 1);
    let g = c
        .ok(
            "query_container",
            json!({"operation":"get","containerType":"task","id":t,"includeSections":true}),
        )
        .await;
    assert_eq!(g["sections"][0]["title"], "B");
    c.ok(
        "manage_sections",
        json!({"operation":"delete","sectionId":a}),
    )
    .await;
    c.err(
        "manage_sections",
        json!({"operation":"delete","sectionId":a}),
        "NOT_FOUND",
    )
    .await;
    c.stop().await;
}

#[tokio::test]
async fn bulk_create_and_delete_are_all_or_nothing() {
    let c = Cairn::start().await;
    let f = c.feature(&c.project("P").await, "F").await;
    let bad = json!([{"title":"ok","content":"x"},{"content":"no title"}]).to_string();
    let e = c
        .err(
            "manage_sections",
            json!({"operation":"bulkCreate","entityType":"FEATURE","entityId":f,"sections":bad}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "sections[1]");
    let q = c
        .ok(
            "query_sections",
            json!({"entityType":"FEATURE","entityId":f}),
        )
        .await;
    assert!(
        q["sections"].as_array().unwrap().is_empty(),
        "nothing written on failure"
    );
    let good = json!([{"title":"one","content":"1"},{"title":"two","content":"2","tags":["t"]}])
        .to_string();
    let d = c
        .ok(
            "manage_sections",
            json!({"operation":"bulkCreate","entityType":"FEATURE","entityId":f,"sections":good}),
        )
        .await;
    let ids: Vec<String> = d["sections"]
        .as_array()
        .unwrap()
        .iter()
        .map(id_of)
        .collect();
    assert_eq!(ids.len(), 2);
    let missing = "0192f000-0000-7000-8000-00000000abcd";
    c.err(
        "manage_sections",
        json!({"operation":"bulkDelete","sectionIds":format!("{},{missing}", ids[0])}),
        "NOT_FOUND",
    )
    .await;
    assert_eq!(
        c.ok(
            "query_sections",
            json!({"entityType":"FEATURE","entityId":f})
        )
        .await["sections"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    c.ok(
        "manage_sections",
        json!({"operation":"bulkDelete","sectionIds":ids.join(",")}),
    )
    .await;
    assert!(c
        .ok(
            "query_sections",
            json!({"entityType":"FEATURE","entityId":f})
        )
        .await["sections"]
        .as_array()
        .unwrap()
        .is_empty());
    c.err(
        "manage_sections",
        json!({"operation":"bulkCreate","entityType":"FEATURE","entityId":f,"sections":"not json"}),
        "VALIDATION_ERROR",
    )
    .await;
    c.stop().await;
}

/// An answer many times the pipe's buffer (64 KiB of quotes and backslashes grows
/// fourfold in the escaped text copy) arrives whole, its two copies equal (checked by
/// the harness on every call), while a second call shares the session.
#[tokio::test]
async fn answers_larger_than_the_pipe_arrive_whole() {
    let c = Cairn::start().await;
    let t = id_of(&c.task(json!({"title":"big"})).await);
    let content = "\"\\".repeat(32 * 1024 - 8);
    let (big, small) = tokio::join!(
        c.ok(
            "manage_sections",
            json!({"operation":"add","entityType":"TASK","entityId":t,"title":"Q","content":content}),
        ),
        c.ok("get_next_task", json!({})),
    );
    assert_eq!(big["section"]["content"], json!(content));
    assert!(small.is_object() || small.is_null(), "{small}");
    c.stop().await;
}
