//! Memory over time and by relevance, through MCP: decay over simulated time and validation restoring it, hybrid recall by meaning and words within a budget, a recall before the vectors exist saying how many are missing, a found turn read with the turns beside it.

use serde_json::json;

use crate::harness::{Cairn, TempDir};
use crate::memory::{remember, s};

#[tokio::test]
async fn decay_over_simulated_time_and_validation_restores() {
    let c = Cairn::start().await;
    let a = remember(
        &c,
        "2025-01-01T00:00:00Z",
        json!({"type":"Assumption","statement":"Payments peak under 200 rps","predicate":"peak_rps","value":200,
               "about":"Service:payments","confidence":0.8,"validationMethod":"check the dashboard"}),
        json!([{"refType":"url","uri":"https://grafana/payments"}]),
    )
    .await;
    assert_eq!(a["atom"]["status"], "ACTIVE");
    assert_eq!(a["atom"]["nextReviewAt"], "2025-01-31T00:00:00.000Z");
    let d = remember(
        &c,
        "2024-01-01T00:00:00Z",
        json!({"type":"Decision","statement":"Payments run on Postgres","predicate":"database","value":"postgres",
               "about":"Service:payments","decidedAt":"2024-01-01","rationale":"transactions"}),
        json!([{"refType":"ADR","uri":"docs/adr/0001.md"}]),
    )
    .await;
    assert_eq!(d["atom"]["status"], "ACTIVE");
    assert!(
        d["atom"].get("nextReviewAt").is_none(),
        "a Decision is never reviewed by time"
    );
    let did = s(&d["atom"]["id"]);
    let aid = s(&a["atom"]["id"]);

    // 45 days later, unvalidated: NEEDS_REVIEW, confidence 0.8 * 0.5^(45/30).
    let now = "2025-02-15T00:00:00Z";
    let plan = c
        .ok("curate_memory", json!({"operation":"plan","now":now}))
        .await;
    let run = c
        .ok(
            "curate_memory",
            json!({"operation":"run","now":now,"fingerprint":plan["fingerprint"]}),
        )
        .await;
    assert_eq!(run["actions"], plan["actions"]);
    for act in run["actions"].as_array().unwrap() {
        let text = act["changes"].to_string();
        assert!(
            !text.contains(&did),
            "the year-old Decision is untouched: {act}"
        );
    }
    let got = c
        .ok("query_memory", json!({"operation":"get","id":aid}))
        .await;
    assert_eq!(got["atom"]["status"], "NEEDS_REVIEW");
    let expected = (0.8f64 * 0.5f64.powf(45.0 / 30.0) * 1000.0).round() / 1000.0;
    assert_eq!(got["atom"]["confidence"], json!(expected));
    assert_eq!(got["atom"]["validatedConfidence"], 0.8);
    assert!(s(&got["atom"]["statusReason"]).contains("review was due"));
    let dec = c
        .ok("query_memory", json!({"operation":"get","id":did}))
        .await;
    assert_eq!(dec["atom"]["status"], "ACTIVE");
    assert_eq!(dec["atom"]["confidence"], d["atom"]["confidence"]);
    assert_eq!(dec["atom"]["version"], d["atom"]["version"]);
    // In the review queue, first.
    let q = c
        .ok("curate_memory", json!({"operation":"queue","now":now}))
        .await;
    assert_eq!(q["items"][0]["id"], json!(aid));

    // Validating restores it and reschedules from the validation.
    let v = c
        .ok("manage_memory", json!({"operation":"validate","id":aid,"version":got["atom"]["version"],"now":"2025-02-16T00:00:00Z"}))
        .await;
    assert_eq!(v["atom"]["status"], "ACTIVE");
    assert_eq!(v["atom"]["confidence"], 0.8);
    assert_eq!(v["atom"]["nextReviewAt"], "2025-03-18T00:00:00.000Z");
    assert_eq!(v["atom"]["lastValidatedAt"], "2025-02-16T00:00:00.000Z");
    // Nothing left to do at that time.
    let p = c
        .ok(
            "curate_memory",
            json!({"operation":"plan","now":"2025-02-16T00:00:00Z"}),
        )
        .await;
    assert_eq!(p["total"], 0, "{p:#}");
    // Retired atoms cannot be validated.
    let dep = c
        .ok("manage_memory", json!({"operation":"deprecate","id":aid,"version":v["atom"]["version"],"reason":"replaced by autoscaling","now":"2025-02-17T00:00:00Z"}))
        .await;
    assert_eq!(dep["atom"]["status"], "DEPRECATED");
    c.err(
        "manage_memory",
        json!({"operation":"validate","id":aid,"version":dep["atom"]["version"]}),
        "INVALID_OPERATION",
    )
    .await;
    c.stop().await;
}

#[tokio::test]
async fn hybrid_recall_finds_statements_by_meaning_and_words_within_a_budget() {
    let c = Cairn::start().await;
    let facts = [
        "Background jobs retry three times with exponential backoff",
        "The checkout page renders prices in the buyer's currency",
        "Database migrations run before the application starts",
        "Session cookies expire after thirty minutes of inactivity",
    ];
    for (i, f) in facts.iter().enumerate() {
        remember(
            &c,
            "2025-08-01T00:00:00Z",
            json!({"type":"Fact","statement":f,"about":"Service:shop","factKind":"observed"}),
            json!([{"refType":"doc","uri":format!("https://wiki/{i}")}]),
        )
        .await;
    }
    let r = c
        .ok(
            "query_memory",
            json!({"operation":"recall","query":"how long until an idle login times out"}),
        )
        .await;
    assert_eq!(r["atoms"][0]["statement"], facts[3], "{r:#}");
    assert!(r["embedder"].is_string());
    let r = c
        .ok(
            "query_memory",
            json!({"operation":"recall","query":"migrations"}),
        )
        .await;
    assert_eq!(r["atoms"][0]["statement"], facts[2]);
    // A budget keeps the best and counts the rest.
    let env = c
        .call(
            "query_memory",
            json!({"operation":"recall","about":"Service:shop","maxTokens":400}),
        )
        .await;
    let r = &env["data"];
    let kept = r["atoms"].as_array().unwrap().len();
    let shed = r["omitted"]["count"]["atoms"].as_u64().unwrap_or(0);
    assert!((1..4).contains(&kept), "{r:#}");
    assert_eq!(
        kept as u64 + shed + r["leftOut"].as_u64().unwrap(),
        4,
        "{r:#}"
    );
    let served = env.to_string().chars().count().div_ceil(4);
    assert!(served <= 400, "{served}");
    assert_eq!(r["tokens"], json!(served));
    c.stop().await;
}

/// A text recall that could not wait for vectors says how many statements it ranked
/// by their words only, and still finds them by their words.
#[tokio::test]
async fn a_recall_before_the_vectors_exist_says_how_many_are_missing() {
    let dir = TempDir::new();
    let cfg = dir.path().join("config.toml");
    std::fs::write(&cfg, "embed_wait_ms = 0\nembed_idle_ms = 3600000\n").unwrap();
    let c = Cairn::on(
        &dir.path().join("m.db"),
        &["--config", cfg.to_str().unwrap()],
    )
    .await;
    for (i, what) in [
        "webhooks retry five times",
        "invoices are immutable",
        "payments settle nightly",
    ]
    .iter()
    .enumerate()
    {
        remember(
            &c,
            "2025-10-01T00:00:00Z",
            json!({"type":"Fact","statement":format!("The billing service: {what}"),"predicate":format!("rule_{i}"),"value":"yes","about":"Service:billing","factKind":"observed"}),
            json!([{"refType":"doc","uri":"docs/billing.md"}]),
        )
        .await;
    }
    let r = c
        .ok(
            "query_memory",
            json!({"operation":"recall","query":"webhooks retry","now":"2025-10-02T00:00:00Z"}),
        )
        .await;
    assert_eq!(r["notEmbedded"], json!(3), "{r:#}");
    assert!(
        r.to_string().contains("webhooks retry five times"),
        "found by its words: {r:#}"
    );
    c.stop().await;
}

/// One exchange between a developer and an agent: each question's answer is the turn
/// after it, in other words than the question's.
const EXCHANGE: [&str; 10] = [
    "The nightly export of invoices failed again at 01:10.",
    "It ran out of disk on the worker; I moved its scratch files to the data volume.",
    "Which database do the monthly reports read from?",
    "ClickHouse, one node on the analytics host, loaded from the primary every night.",
    "Who approves a change to the tax rules?",
    "Marta from finance signs off on every change to them before it is merged.",
    "Should we keep the old CSV endpoint for partners?",
    "Yes: two of them still call it, so it stays until March.",
    "The dashboard shows a p99 latency of 800 ms for the invoice list.",
    "An index on customer and issue date brought it down to 40 ms.",
];

/// A recall's statements with their relevance, for a failure's message.
fn brief(r: &serde_json::Value) -> String {
    r["atoms"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| format!("{} {} {}\n", a["relevance"], a["id"], a["statement"]))
        .collect()
}

/// Remembers [`EXCHANGE`] in a new Project subject, `minutes` apart; answers the
/// subject's id and the atoms' ids in order.
async fn exchange(c: &Cairn, name: &str, minutes: u32) -> (String, Vec<String>) {
    let p = crate::memory::subject(c, json!({"kind":"Project","name":name})).await;
    let pid = s(&p["id"]);
    let mut ids = Vec::new();
    for (i, text) in EXCHANGE.iter().enumerate() {
        let at = 60 * 8 + i as u32 * minutes;
        let now = format!(
            "2025-10-{:02}T{:02}:{:02}:00Z",
            1 + at / 1440,
            at / 60 % 24,
            at % 60
        );
        let a = remember(
            c,
            &now,
            json!({"type":"Fact","statement":text,"context":pid,"factKind":"reported"}),
            json!([{"refType":"chat","title":format!("{name} turn {i}")}]),
        )
        .await;
        ids.push(s(&a["atom"]["id"]));
    }
    (pid, ids)
}

/// A found turn is read with the turns beside it in its exchange: the answer after a
/// question the query matched is recalled and lifted toward the question (`liftedBy`
/// names it), even when its own words and meaning are too far to be found; it stays
/// below the question, and ranks no lower than the same answer recorded hours from
/// its question, which nothing lifts.
#[tokio::test]
async fn recall_reads_a_found_turn_with_the_turns_beside_it() {
    let c = Cairn::start().await;
    let (near, near_ids) = exchange(&c, "Invoices", 2).await;
    let (far, far_ids) = exchange(&c, "Invoices, hours apart", 180).await;
    let ask = |project: String, q: &'static str| {
        let c = &c;
        async move {
            c.ok(
                "query_memory",
                json!({"operation":"recall","projectId":project,"query":q,"limit":10,"now":"2025-10-05T00:00:00Z"}),
            )
            .await
        }
    };
    for (q, answer) in [
        ("which database do the monthly reports read from", 3),
        ("who approves a change to the tax rules", 5),
        ("is the old CSV endpoint for partners kept", 7),
    ] {
        let pos = |r: &serde_json::Value, id: &str| {
            r["atoms"]
                .as_array()
                .unwrap()
                .iter()
                .position(|a| a["id"] == json!(id))
                .unwrap_or_else(|| panic!("{q}: {id} not recalled: {}", brief(r)))
        };
        let r = ask(near.clone(), q).await;
        let (a, question) = (&near_ids[answer], &near_ids[answer - 1]);
        let hit = &r["atoms"][pos(&r, a)];
        assert_eq!(hit["liftedBy"], json!(question), "{q}: {r:#}");
        let rel = |id: &str| r["atoms"][pos(&r, id)]["relevance"].as_f64().unwrap();
        assert!(rel(a) < rel(question), "{q}: below what lifted it: {r:#}");
        // Hours from its question the answer is its own: unlifted, and found only as
        // far as its words and meaning reach (often not at all).
        let f = ask(far.clone(), q).await;
        let far_at = f["atoms"]
            .as_array()
            .unwrap()
            .iter()
            .position(|x| x["id"] == json!(far_ids[answer]));
        if let Some(i) = far_at {
            let far_hit = &f["atoms"][i];
            assert!(
                far_hit.get("liftedBy").is_none(),
                "{q}: hours apart: {}",
                brief(&f)
            );
            assert!(
                hit["relevance"].as_f64() > far_hit["relevance"].as_f64(),
                "{q}: lifted above its own relevance: {}\n{}",
                brief(&r),
                brief(&f)
            );
            assert!(pos(&r, a) <= i, "{q}: no lower than unlifted");
        }
        assert!(
            pos(&r, a) <= 2,
            "{q}: the answer beside the question: {}",
            brief(&r)
        );
    }
    // A Global exchange is read the same way, in a recall whose other seeds are the
    // project's: one statement reads the neighbours of both kinds.
    let turn = |at: &'static str, text: &'static str| {
        let c = &c;
        async move {
            let a = remember(
                c,
                at,
                json!({"type":"Fact","statement":text,"context":"global","factKind":"reported"}),
                json!([{"refType":"chat","title":text}]),
            )
            .await;
            s(&a["atom"]["id"])
        }
    };
    let question = turn(
        "2025-10-02T09:00:00Z",
        "Which runner builds the release binaries?",
    )
    .await;
    let answer = turn(
        "2025-10-02T09:02:00Z",
        "The self-hosted machine in rack four, tagged release.",
    )
    .await;
    let r = ask(
        near.clone(),
        "which runner builds the release binaries, and the nightly export of invoices",
    )
    .await;
    let atoms = r["atoms"].as_array().unwrap();
    assert!(
        atoms.iter().any(|a| a["id"] == json!(question)),
        "{}",
        brief(&r)
    );
    let hit = atoms
        .iter()
        .find(|a| a["id"] == json!(answer))
        .unwrap_or_else(|| panic!("the Global answer is not recalled: {}", brief(&r)));
    assert_eq!(hit["liftedBy"], json!(question), "{r:#}");
    assert!(
        atoms.iter().any(|a| near_ids.contains(&s(&a["id"]))),
        "the project's turns are seeds too: {}",
        brief(&r)
    );
    c.stop().await;
}
