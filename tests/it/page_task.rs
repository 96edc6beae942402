//! The page's task view, the tasks without a project and the memory view's
//! confidences, in headless Chromium over WebDriver (the browser of `page.rs`): the
//! board links a card to its task, whose page shows its sections as text (capped),
//! its dependencies with their statuses, its blockers with the NO_OP reason and the
//! refusal `advance` answers, and its briefing; a standalone task is listed on the
//! list of projects; the memory view shows each atom's decayed confidence and its
//! validation and review dates. With `CAIRN_PAGE_SHOTS=DIR` the test writes
//! `board.png`, `task.png`, `projects.png` and `memory.png` there for a person to look at.

use serde_json::{json, Value};
use time::format_description::well_known::Rfc3339;
use time::{Duration, OffsetDateTime};

use crate::harness::{id_of, Cairn, Transport};
use crate::page::{base, get, knowledge_fixture, Browser};

/// `days` ago, as the memory tools' `now` takes it.
fn days_ago(days: i64) -> String {
    (OffsetDateTime::now_utc() - Duration::days(days))
        .format(&Rfc3339)
        .unwrap()
}

/// Writes a screenshot where `CAIRN_PAGE_SHOTS` says, when it says.
async fn shot(b: &Browser, name: &str) {
    let png = b.screenshot().await;
    assert!(png.starts_with(b"\x89PNG"), "a PNG");
    if let Some(dir) = std::env::var_os("CAIRN_PAGE_SHOTS") {
        let dir = std::path::PathBuf::from(dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(name), &png).unwrap();
    }
}

/// The texts of every element `css` selects.
async fn texts(b: &Browser, css: &str) -> Vec<String> {
    let v = b
        .cmd(
            reqwest::Method::POST,
            "/elements",
            Some(json!({"using":"css selector","value":css})),
        )
        .await;
    let mut out = Vec::new();
    for e in v.as_array().unwrap() {
        let id = e["element-6066-11e4-a52e-4f735466cecf"].as_str().unwrap();
        let t = b
            .cmd(reqwest::Method::GET, &format!("/element/{id}/text"), None)
            .await;
        out.push(t.as_str().unwrap().to_string());
    }
    out
}

async fn remember(c: &Cairn, now: &str, atom: Value) {
    c.ok(
        "manage_memory",
        json!({"operation":"remember","now":now,"atom":atom,
               "sources":[{"refType":"doc","uri":"docs/payments.md"}]}),
    )
    .await;
}

#[tokio::test]
async fn a_task_page_shows_sections_dependencies_blockers_and_briefing_in_a_real_browser() {
    let c = Cairn::start_on(Transport::Http).await;
    let p = c.project("Checkout service").await;
    c.ok("manage_subject", json!({"operation":"create","subject":{"kind":"Project","name":"checkout-service","orchestratorProject":p}})).await;
    let f = c.feature(&p, "Card payments").await;
    let adapter = id_of(&c.task(json!({"title":"Payment provider adapter","projectId":p,"featureId":f,"priority":"HIGH","complexity":5})).await);
    let ship = id_of(&c.task(json!({"title":"Ship card checkout behind a flag","projectId":p,"featureId":f,"priority":"HIGH","complexity":3,
        "summary":"Turn the flag on for 5% of carts.","description":"Roll out in three steps; watch the <refund> rate."})).await);
    let announce = id_of(
        &c.task(json!({"title":"Announce card payments","projectId":p,"priority":"LOW"}))
            .await,
    );
    c.ok(
        "block",
        json!({"containerType":"task","id":ship,"version":1,"blockedBy":[adapter,"NO_OP"],
                         "blockedReason":"waiting for the provider's sandbox keys"}),
    )
    .await;
    let v = c.version("task", &announce).await;
    c.ok(
        "block",
        json!({"containerType":"task","id":announce,"version":v,"blockedBy":[ship]}),
    )
    .await;
    // More sections than the page shows: the first 20, the rest counted.
    c.ok(
        "manage_sections",
        json!({"operation":"add","entityType":"TASK","entityId":ship,"title":"Context Files",
        "usageDescription":"files","content":"src/api/v2/refunds.rs\n"}),
    )
    .await;
    c.ok(
        "manage_sections",
        json!({"operation":"add","entityType":"TASK","entityId":ship,"title":"Plan",
        "content":"1. <b>not bold</b> flag on\n2. watch refunds"}),
    )
    .await;
    for i in 0..20 {
        c.ok(
            "manage_sections",
            json!({"operation":"add","entityType":"TASK","entityId":ship,
            "title":format!("Note {i:02}"),"content":format!("note number {i}")}),
        )
        .await;
    }
    knowledge_fixture(&c, &p).await;
    // Memory in different states of life: a Rule recorded today (no decay), a
    // Convention recorded 200 days ago (decayed, past its review), an Assumption ten
    // days old, a time-bound Fact fifty days old.
    remember(&c, &days_ago(0), json!({"type":"Rule","severity":"must","statement":"Money moves through the ledger only","confidence":0.9,"context":"Project:checkout-service"})).await;
    remember(&c, &days_ago(200), json!({"type":"Convention","statement":"Handlers log the request id","area":"naming","confidence":0.8,"context":"Project:checkout-service"})).await;
    remember(&c, &days_ago(10), json!({"type":"Assumption","statement":"The provider retries webhooks for a day","confidence":0.6,
        "validationMethod":"read the provider's docs","context":"Project:checkout-service"})).await;
    remember(&c, &days_ago(50), json!({"type":"Fact","factKind":"observed","statement":"Timeouts come from the provider's sandbox",
        "confidence":0.7,"validTo":days_ago(-365),"context":"Project:checkout-service"})).await;
    // Tasks no project holds: one standalone, one of a feature without a project.
    let lone = id_of(
        &c.task(json!({"title":"Rotate the signing keys <now>","priority":"HIGH"}))
            .await,
    );
    let orphan_feature = c
        .ok(
            "manage_container",
            json!({"operation":"create","containerType":"feature","name":"Loose ends"}),
        )
        .await["feature"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    c.task(json!({"title":"Tidy the old cron jobs","featureId":orphan_feature}))
        .await;

    let s = base(&c);
    let b = Browser::start().await;
    b.go(&format!("{s}/p/{p}/board")).await;
    let card = b.text("article.blocked").await;
    assert!(
        card.contains("outside Cairn (waiting for the provider's sandbox keys)"),
        "the NO_OP reason on the card: {card}"
    );
    shot(&b, "board.png").await;
    let link = b.find("article.blocked .t a").await;
    b.cmd(
        reqwest::Method::POST,
        &format!("/element/{link}/click"),
        Some(json!({})),
    )
    .await;
    assert!(
        b.current_url().await.ends_with(&format!("/task/{ship}")),
        "{}",
        b.current_url().await
    );
    assert!(b.title().await.starts_with("Task — Ship card checkout"));
    let sections = b.text("#sections").await;
    assert!(
        sections.contains("Plan") && sections.contains("1. <b>not bold</b> flag on"),
        "a section's markup is text: {sections}"
    );
    assert!(
        sections.contains("Note 17") && !sections.contains("Note 18"),
        "{sections}"
    );
    assert!(sections.contains("2 more sections not shown"), "{sections}");
    let deps = b.text("#dependencies").await;
    assert!(
        deps.contains("Payment provider adapter NEW")
            && deps.contains("Announce card payments NEW"),
        "{deps}"
    );
    let blockers = b.text("#blockers").await;
    assert!(
        blockers.contains("Payment provider adapter")
            && blockers.contains("NO_OP outside Cairn: waiting for the provider's sandbox keys"),
        "{blockers}"
    );
    let advance = b.text("#advance").await;
    assert!(
        advance.contains("BLOCKED") && advance.contains("sandbox keys"),
        "the workflow's own refusal: {advance}"
    );
    let briefing = b.text("#briefing").await;
    assert!(
        briefing.contains("API handlers") && briefing.contains("src/api/v2/refunds.rs"),
        "{briefing}"
    );
    assert!(
        briefing.contains("Handlers log the request id"),
        "the project's memory: {briefing}"
    );
    assert!(b
        .text("#description")
        .await
        .contains("watch the <refund> rate"));
    // The whole task in one picture: a window as tall as the page, then back.
    let rect = |h: i64| Some(json!({"width":1280,"height":h}));
    b.cmd(reqwest::Method::POST, "/window/rect", rect(2600))
        .await;
    shot(&b, "task.png").await;
    b.cmd(reqwest::Method::POST, "/window/rect", rect(900))
        .await;

    // The list of projects lists the tasks no project holds, linked to their view.
    b.go(&format!("{s}/")).await;
    shot(&b, "projects.png").await;
    let loose = texts(&b, "tr.standalone-task").await.join("\n");
    assert!(
        loose.contains("Rotate the signing keys <now>") && loose.contains("Tidy the old cron jobs"),
        "{loose}"
    );
    assert!(loose.contains("Loose ends"), "its feature named: {loose}");
    b.go(&format!("{s}/task/{lone}")).await;
    assert!(b.text("main").await.contains("no project"));

    // The memory view: the confidence now, decayed by type and age, with the dates.
    b.go(&format!("{s}/p/{p}/memory")).await;
    let rows = texts(&b, "tr.memory-atom").await;
    let row = |words: &str| {
        rows.iter()
            .find(|r| r.contains(words))
            .unwrap_or_else(|| panic!("no row {words}: {rows:?}"))
            .clone()
    };
    let conf: Vec<String> = texts(&b, "td.confidence").await;
    let mut distinct = conf.clone();
    distinct.sort();
    distinct.dedup();
    assert!(distinct.len() >= 4, "{conf:?}");
    assert!(row("ledger only").contains("0.90"), "{rows:?}");
    // 0.8 · 0.5^(200/365) = 0.547, past its 180-day review.
    let convention = row("request id");
    assert!(
        convention.contains("0.55 of 0.80") && convention.contains("overdue"),
        "{convention}"
    );
    assert!(
        convention.contains(&days_ago(200)[..10]),
        "validated then: {convention}"
    );
    // 0.6 · 0.5^(10/30) = 0.476; 0.7 · 0.5^(50/180) = 0.578.
    assert!(row("retries webhooks").contains("0.48 of 0.60"), "{rows:?}");
    assert!(row("sandbox").contains("0.58 of 0.70"), "{rows:?}");
    assert!(!row("retries webhooks").contains("overdue"), "{rows:?}");
    shot(&b, "memory.png").await;
    b.quit().await;
    c.stop().await;
}

#[tokio::test]
async fn a_task_page_answers_bad_ids_with_a_clear_page_and_shows_agent_text_as_text() {
    let c = Cairn::start_on(Transport::Http).await;
    let p = c.project("P").await;
    let f = c.feature(&p, "F").await;
    let t = id_of(
        &c.task(json!({"title":"<script>alert(1)</script>","projectId":p}))
            .await,
    );
    c.ok("manage_sections", json!({"operation":"add","entityType":"TASK","entityId":t,"title":"<img src=x onerror=alert(2)>",
        "content":"<iframe src=\"javascript:alert(3)\"></iframe>"})).await;
    // More blockers than the page lists: the first 50, the rest counted.
    let mut many = Vec::new();
    for i in 0..55 {
        many.push(id_of(
            &c.task(json!({"title":format!("blocker {i:02}"),"projectId":p}))
                .await,
        ));
    }
    c.ok(
        "block",
        json!({"containerType":"task","id":t,"version":1,"blockedBy":many[..50]}),
    )
    .await;
    let v = c.version("task", &t).await;
    c.ok(
        "block",
        json!({"containerType":"task","id":t,"version":v,"blockedBy":many[50..]}),
    )
    .await;
    let s = base(&c);
    let (status, _, html) = get(&format!("{s}/task/{t}"), &[]).await;
    assert_eq!(status, 200, "{html}");
    let listed = |id: &str| {
        html.split(&format!("id=\"{id}\""))
            .nth(1)
            .unwrap()
            .split("</ul>")
            .next()
            .unwrap()
            .matches("<li>")
            .count()
    };
    assert_eq!((listed("blockers"), listed("deps-in")), (50, 50));
    assert!(
        html.contains("5 more blockers not shown") && html.contains("5 more edges not shown"),
        "{html}"
    );
    assert_eq!(
        html.matches("<script").count(),
        1,
        "only the page's own: {html}"
    );
    assert!(
        !html.contains("<img src=x") && !html.contains("<iframe"),
        "{html}"
    );
    assert!(html.contains("&lt;iframe src=&quot;javascript:alert(3)&quot;&gt;"));
    for (path, want) in [
        ("/task/not-an-id".to_string(), 400),
        (
            "/task/0190f0f0-0000-7000-8000-000000000000".to_string(),
            404,
        ),
        (format!("/task/{f}"), 404),
        (format!("/task/{t}/extra"), 404),
    ] {
        let (status, _, html) = get(&format!("{s}{path}"), &[]).await;
        assert_eq!(status, want, "{path}: {html}");
        assert!(html.contains("class=\"err\""), "{path}: {html}");
    }
    c.stop().await;
}
