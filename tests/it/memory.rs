//! The `memory` toolset through MCP: the Zod example of docs/memory.md, collisions
//! and their resolution, the curator's dry run and run, identity merges, two servers
//! racing on one claim key, reflection through the gate, the memory a task gets.
//! Decay and recall are in `memory_recall.rs`, bad input in `memory_input.rs`.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::harness::{id_of, Cairn, TempDir};

pub(crate) fn s(v: &Value) -> String {
    v.as_str()
        .unwrap_or_else(|| panic!("not a string: {v}"))
        .to_string()
}

pub(crate) async fn subject(c: &Cairn, fields: Value) -> Value {
    c.ok(
        "manage_subject",
        json!({"operation":"create","subject":fields}),
    )
    .await["subject"]
        .clone()
}

pub(crate) async fn remember(c: &Cairn, now: &str, atom: Value, sources: Value) -> Value {
    c.ok(
        "manage_memory",
        json!({"operation":"remember","now":now,"atom":atom,"sources":sources}),
    )
    .await
}

pub(crate) fn assumption(value: &str, valid_from: &str) -> Value {
    json!({"type":"Assumption","statement":format!("Zod's latest version is {value}"),"predicate":"latest_version",
           "value":value,"about":"Lib:zod","confidence":0.7,"validationMethod":"npm view zod version","validFrom":valid_from})
}

pub(crate) fn release(tag: &str) -> Value {
    json!([{"refType":"release_notes","uri":format!("https://github.com/colinhacks/zod/releases/tag/v{tag}")}])
}

pub(crate) fn values(atoms: &Value) -> Vec<(String, String)> {
    atoms
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (s(&a["value"]), s(&a["status"])))
        .collect()
}

#[tokio::test]
async fn the_zod_example_end_to_end() {
    let c = Cairn::start().await;
    let acme = subject(&c, json!({"kind":"Org","name":"Acme"})).await;
    let other = subject(&c, json!({"kind":"Org","name":"Globex"})).await;
    let project = c.project("Checkout").await;
    let checkout = subject(
        &c,
        json!({"kind":"Project","name":"checkout","org":acme["id"],"orchestratorProject":project}),
    )
    .await;
    let billing = subject(
        &c,
        json!({"kind":"Project","name":"billing","org":other["id"]}),
    )
    .await;

    // Identity at the door: zod, Zod and colinhacks/zod are one subject.
    let zod = subject(&c, json!({"kind":"Lib","name":"Zod","ecosystem":"ts"})).await;
    for name in ["zod", "colinhacks/zod", "https://github.com/colinhacks/zod"] {
        let d = c
            .ok(
                "manage_subject",
                json!({"operation":"create","subject":{"kind":"Lib","name":name}}),
            )
            .await;
        assert_eq!(d["created"], json!(false), "{name}");
        assert_eq!(d["subject"]["id"], zod["id"], "{name}");
    }
    let z = c
        .ok("manage_subject", json!({"operation":"get","id":"Lib:ZOD"}))
        .await;
    assert_eq!(z["subject"]["id"], zod["id"]);
    let aliases: HashSet<String> = z["subject"]["aliases"]
        .as_array()
        .unwrap()
        .iter()
        .map(s)
        .collect();
    assert!(
        aliases.contains("colinhacks/zod") && aliases.contains("zod"),
        "{aliases:?}"
    );

    // 4.2 is believed from mid-November; 4.3 arrives in December and supersedes it.
    let a42 = remember(
        &c,
        "2025-11-14T10:00:00Z",
        assumption("4.2", "2025-11-01"),
        release("4.2.0"),
    )
    .await;
    assert_eq!(a42["atom"]["status"], "ACTIVE", "{a42:#}");
    assert_eq!(a42["atom"]["nextReviewAt"], "2025-12-14T10:00:00.000Z");
    let a43 = remember(
        &c,
        "2025-12-10T10:00:00Z",
        assumption("4.3", "2025-12-01"),
        release("4.3.0"),
    )
    .await;
    assert_eq!(a43["atom"]["status"], "ACTIVE");
    let reasons: Vec<String> = a43["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| s(&a["reason"]))
        .collect();
    assert!(
        reasons.iter().any(|r| r.contains("later validFrom")),
        "{reasons:?}"
    );

    // History chain: 4.2 SUPERSEDED by 4.3; the old statement is intact.
    let g = c
        .ok(
            "query_memory",
            json!({"operation":"get","id":a43["atom"]["id"]}),
        )
        .await;
    assert_eq!(
        values(&g["history"]),
        [
            ("4.2".into(), "SUPERSEDED".into()),
            ("4.3".into(), "ACTIVE".into())
        ]
    );
    assert!(g["edges"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["kind"] == "SUPERSEDES"
            && e["from"]["atom"] == a43["atom"]["id"]
            && e["to"]["atom"] == a42["atom"]["id"]));
    let old = c
        .ok(
            "query_memory",
            json!({"operation":"get","id":a42["atom"]["id"]}),
        )
        .await;
    assert_eq!(old["atom"]["statement"], "Zod's latest version is 4.2");
    assert_eq!(old["atom"]["retiredAt"], "2025-12-10T10:00:00.000Z");
    assert_eq!(old["evidence"][0]["refType"], "release_notes");

    // asOf a day before 4.3 was learned answers 4.2; now answers 4.3; validAt a
    // date before 4.3 held in the world answers 4.2 only with history.
    let r = c
        .ok(
            "query_memory",
            json!({"operation":"recall","about":"Lib:zod","asOf":"2025-12-09T10:00:00Z"}),
        )
        .await;
    assert_eq!(values(&r["atoms"]), [("4.2".into(), "SUPERSEDED".into())]);
    let r = c
        .ok(
            "query_memory",
            json!({"operation":"recall","about":["Lib:zod"]}),
        )
        .await;
    assert_eq!(values(&r["atoms"]), [("4.3".into(), "ACTIVE".into())]);
    let r = c
        .ok("query_memory", json!({"operation":"recall","about":["Lib:zod"],"validAt":"2025-11-20","includeHistory":true}))
        .await;
    assert_eq!(values(&r["atoms"]), [("4.2".into(), "SUPERSEDED".into())]);

    // The Decision scoped to Acme: answered for Acme's project, not for Globex's.
    let d = remember(
        &c,
        "2025-10-14T09:00:00Z",
        json!({"type":"Decision","statement":"Zod is the default validation library","predicate":"default_validation_lib",
               "valueSubject":"Lib:zod","about":"Lib:zod","context":acme["id"],"decidedAt":"2025-10-14",
               "rationale":"consistency and ecosystem fit","enforcement":"lint"}),
        json!([{"refType":"ADR","uri":"docs/adr/0007-validation.md"}]),
    )
    .await;
    assert_eq!(d["atom"]["status"], "ACTIVE");
    assert_eq!(d["atom"]["fields"]["decisionStatus"], "accepted");
    assert_eq!(d["atom"]["valueSubject"]["name"], "Zod");
    let mine = c
        .ok(
            "query_memory",
            json!({"operation":"recall","projectId":project,"about":["Lib:zod"]}),
        )
        .await;
    let got: Vec<(String, String)> = mine["atoms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| (s(&a["type"]), s(&a["scope"])))
        .collect();
    assert_eq!(
        got,
        [
            ("Decision".into(), "org".into()),
            ("Assumption".into(), "global".into())
        ]
    );
    assert_eq!(mine["project"]["id"], checkout["id"]);
    let theirs = c
        .ok(
            "query_memory",
            json!({"operation":"recall","projectId":billing["id"],"about":["Lib:zod"]}),
        )
        .await;
    assert!(
        theirs["atoms"]
            .as_array()
            .unwrap()
            .iter()
            .all(|a| a["type"] != "Decision"),
        "{theirs:#}"
    );

    // "Used in 3 projects", derived from three USES edges, gone when one goes.
    let mut users = Vec::new();
    for n in ["p1", "p2", "p3"] {
        let p = subject(&c, json!({"kind":"Project","name":n,"org":acme["id"]})).await;
        c.ok(
            "manage_subject",
            json!({"operation":"uses","id":p["id"],"target":"Lib:zod"}),
        )
        .await;
        users.push(p);
    }
    let z = c
        .ok("manage_subject", json!({"operation":"get","id":zod["id"]}))
        .await;
    assert_eq!(
        z["derivedFacts"][0]["statement"],
        "Zod is used in 3 projects"
    );
    assert_eq!(z["derivedFacts"][0]["count"], 3);
    let l = c
        .ok(
            "manage_subject",
            json!({"operation":"list","minProjects":3}),
        )
        .await;
    assert_eq!(l["items"].as_array().unwrap().len(), 1);
    assert_eq!(l["items"][0]["derivedFacts"][0]["count"], 3);
    let r = c
        .ok(
            "query_memory",
            json!({"operation":"recall","about":["Lib:zod"]}),
        )
        .await;
    assert_eq!(r["derivedFacts"][0]["count"], 3);
    c.ok(
        "manage_subject",
        json!({"operation":"unuse","id":users[2]["id"],"target":zod["id"]}),
    )
    .await;
    let l = c
        .ok(
            "manage_subject",
            json!({"operation":"list","minProjects":3}),
        )
        .await;
    assert_eq!(l["total"], 0);
    let z = c
        .ok("manage_subject", json!({"operation":"get","id":zod["id"]}))
        .await;
    assert_eq!(
        z["derivedFacts"][0]["statement"],
        "Zod is used in 2 projects"
    );
    c.stop().await;
}

#[tokio::test]
async fn an_equal_contradiction_is_contested_until_a_decision_or_a_choice_resolves_it() {
    let c = Cairn::start().await;
    let fact = |v: &str| {
        json!({"type":"Fact","statement":format!("The API gateway timeout is {v}"),"predicate":"gateway_timeout",
               "value":v,"about":"Service:gateway","factKind":"reported","confidence":0.6})
    };
    let doc = |u: &str| json!([{"refType":"doc","uri":u}]);
    let a = remember(
        &c,
        "2025-03-01T00:00:00Z",
        fact("30s"),
        doc("https://wiki/a"),
    )
    .await;
    assert_eq!(a["atom"]["status"], "ACTIVE");
    let b = remember(
        &c,
        "2025-03-02T00:00:00Z",
        fact("60s"),
        doc("https://wiki/b"),
    )
    .await;
    assert_eq!(b["atom"]["status"], "CONTESTED", "{b:#}");
    let a_now = c
        .ok(
            "query_memory",
            json!({"operation":"get","id":a["atom"]["id"]}),
        )
        .await;
    assert_eq!(a_now["atom"]["status"], "CONTESTED");
    assert!(a_now["edges"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["kind"] == "CONTRADICTS"));
    // The same value again is no new atom: its source supports the existing one.
    let dup = remember(
        &c,
        "2025-03-03T00:00:00Z",
        fact(" 60S "),
        doc("https://wiki/c"),
    )
    .await;
    assert_eq!(dup["duplicateOf"], b["atom"]["id"]);
    assert_eq!(dup["atom"]["id"], b["atom"]["id"]);
    let key = s(&b["atom"]["claimKey"]);
    let all = c
        .ok(
            "query_memory",
            json!({"operation":"list","key":key,"includeHistory":true}),
        )
        .await;
    assert_eq!(all["total"], 2);

    // A Decision on the same predicate, subject and context settles it.
    let d = remember(
        &c,
        "2025-03-04T00:00:00Z",
        json!({"type":"Decision","statement":"The gateway timeout is 60s","predicate":"gateway_timeout","value":"60s",
               "about":"Service:gateway","decidedAt":"2025-03-04","rationale":"long uploads","confirmedBy":"Ana (CTO)"}),
        json!([]),
    )
    .await;
    assert_eq!(d["atom"]["status"], "ACTIVE");
    let kinds: Vec<String> = d["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| s(&a["kind"]))
        .collect();
    assert!(kinds.contains(&"resolve".to_string()), "{kinds:?}");
    let l = c
        .ok(
            "query_memory",
            json!({"operation":"list","key":key,"includeHistory":true}),
        )
        .await;
    let st: HashSet<(String, String)> = values(&l["items"]).into_iter().collect();
    assert_eq!(
        st,
        HashSet::from([
            ("60s".into(), "ACTIVE".into()),
            ("30s".into(), "SUPERSEDED".into())
        ])
    );
    let won = c
        .ok(
            "query_memory",
            json!({"operation":"get","id":b["atom"]["id"]}),
        )
        .await;
    assert!(s(&won["atom"]["resolution"]).contains("decision"));

    // An explicit choice settles another contest.
    let f2 = |v: &str| {
        json!({"type":"Fact","statement":format!("The default region is {v}"),"predicate":"default_region","value":v,
               "about":"Service:gateway","factKind":"reported"})
    };
    let x = remember(
        &c,
        "2025-04-01T00:00:00Z",
        f2("eu-west-1"),
        doc("https://wiki/x"),
    )
    .await;
    let y = remember(
        &c,
        "2025-04-01T00:00:00Z",
        f2("us-east-1"),
        doc("https://wiki/y"),
    )
    .await;
    assert_eq!(y["atom"]["status"], "CONTESTED");
    let x = c
        .ok(
            "query_memory",
            json!({"operation":"get","id":x["atom"]["id"]}),
        )
        .await;
    let e = c
        .err(
            "manage_memory",
            json!({"operation":"resolve","id":x["atom"]["id"],"version":x["atom"]["version"]}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "resolvedBy");
    let stale = c
        .err(
            "manage_memory",
            json!({"operation":"resolve","id":x["atom"]["id"],"version":1,"resolvedBy":"Ops"}),
            "CONFLICT",
        )
        .await;
    assert_eq!(stale["details"]["currentVersion"], x["atom"]["version"]);
    let r = c
        .ok("manage_memory", json!({"operation":"resolve","id":x["atom"]["id"],"version":x["atom"]["version"],"resolvedBy":"Ops"}))
        .await;
    assert_eq!(r["atom"]["status"], "ACTIVE");
    assert_eq!(r["atom"]["resolution"], "chosen by Ops");
    let y = c
        .ok(
            "query_memory",
            json!({"operation":"get","id":y["atom"]["id"]}),
        )
        .await;
    assert_eq!(y["atom"]["status"], "SUPERSEDED");
    // Resolving what is not contested is refused.
    c.err("manage_memory", json!({"operation":"resolve","id":y["atom"]["id"],"version":y["atom"]["version"],"resolvedBy":"Ops"}), "INVALID_OPERATION")
        .await;
    c.stop().await;
}

#[tokio::test]
async fn the_curator_runs_exactly_its_dry_run_and_then_finds_nothing() {
    let c = Cairn::start().await;
    let t0 = "2025-05-01T00:00:00Z";
    let zod = subject(&c, json!({"kind":"Lib","name":"Zod"})).await;
    let dev = subject(&c, json!({"kind":"Lib","name":"zodjs"})).await;
    assert_ne!(zod["id"], dev["id"]);
    let lic = |about: &Value| json!({"type":"Fact","statement":"Zod is MIT licensed","predicate":"license","value":"MIT","about":about,"factKind":"observed"});
    let on_zod = remember(
        &c,
        t0,
        lic(&zod["id"]),
        json!([{"refType":"doc","uri":"https://zod.dev/license"}]),
    )
    .await;
    let on_dev = remember(
        &c,
        t0,
        lic(&dev["id"]),
        json!([{"refType":"url","uri":"https://npmjs.com/zodjs"}]),
    )
    .await;
    let usage = remember(
        &c,
        t0,
        json!({"type":"Know-how","statement":"Parse input with schema.safeParse and map issues to 400s","about":dev["id"],"steps":["define the schema","safeParse","map issues"]}),
        json!([]),
    )
    .await;
    let draft = c
        .ok("manage_memory", json!({"operation":"remember","now":t0,"atom":{"type":"Pattern","statement":"Schemas live beside their handlers","problem":"drift","solution":"co-locate","author":"agent-7"}}))
        .await;
    assert_eq!(draft["atom"]["status"], "PROPOSED");
    assert_eq!(on_zod["atom"]["status"], "ACTIVE");
    assert_eq!(on_dev["atom"]["status"], "ACTIVE");
    // `zodjs` gains the alias `zod`: now both subjects fold to one name.
    let al = c
        .ok(
            "manage_subject",
            json!({"operation":"alias","id":dev["id"],"version":dev["version"],"aliases":["zod"]}),
        )
        .await;
    assert_eq!(al["sameNameAs"][0]["id"], zod["id"]);

    let now = "2025-06-01T00:00:00Z";
    let plan = c
        .ok(
            "curate_memory",
            json!({"operation":"plan","now":now,"limit":1000}),
        )
        .await;
    let kinds: HashSet<String> = plan["actions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| s(&a["kind"]))
        .collect();
    for k in ["merge_subjects", "merge_duplicate", "assign_key"] {
        assert!(kinds.contains(k), "{k} missing from {kinds:?}");
    }
    assert_eq!(plan["written"], false);
    // The dry run changed nothing.
    let again = c
        .ok(
            "curate_memory",
            json!({"operation":"plan","now":now,"limit":1000}),
        )
        .await;
    assert_eq!(again["actions"], plan["actions"]);
    assert_eq!(again["fingerprint"], plan["fingerprint"]);
    // A wrong fingerprint is refused, the right one runs exactly the plan.
    c.err(
        "curate_memory",
        json!({"operation":"run","now":now,"fingerprint":"0000000000000000"}),
        "INVALID_OPERATION",
    )
    .await;
    let run = c
        .ok(
            "curate_memory",
            json!({"operation":"run","now":now,"fingerprint":plan["fingerprint"],"limit":1000}),
        )
        .await;
    assert_eq!(run["written"], true);
    assert_eq!(run["actions"], plan["actions"]);
    assert_eq!(run["summary"], plan["summary"]);
    let after = c
        .ok("curate_memory", json!({"operation":"plan","now":now}))
        .await;
    assert_eq!(after["total"], 0, "{after:#}");

    // Every atom that was about zodjs is about Zod now; zodjs is merged, its names kept.
    for id in [
        &on_zod["atom"]["id"],
        &on_dev["atom"]["id"],
        &usage["atom"]["id"],
    ] {
        let a = c
            .ok("query_memory", json!({"operation":"get","id":id}))
            .await;
        assert_eq!(a["atom"]["about"]["id"], zod["id"], "{a:#}");
    }
    let z = c
        .ok("manage_subject", json!({"operation":"get","id":zod["id"]}))
        .await;
    let aliases: Vec<String> = z["subject"]["aliases"]
        .as_array()
        .unwrap()
        .iter()
        .map(s)
        .collect();
    assert!(aliases.contains(&"zodjs".to_string()), "{aliases:?}");
    let d = c
        .ok("manage_subject", json!({"operation":"get","id":dev["id"]}))
        .await;
    assert_eq!(d["subject"]["mergedInto"], zod["id"]);
    assert_eq!(d["survivor"]["id"], zod["id"]);
    // One license claim ACTIVE, the other folded into it with its evidence.
    let l = c
        .ok(
            "query_memory",
            json!({"operation":"list","predicate":"license","includeHistory":true}),
        )
        .await;
    let st: Vec<String> = l["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| s(&a["status"]))
        .collect();
    assert_eq!(st.iter().filter(|x| *x == "ACTIVE").count(), 1, "{st:?}");
    assert_eq!(
        st.iter().filter(|x| *x == "SUPERSEDED").count(),
        1,
        "{st:?}"
    );
    let survivor = l["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["status"] == "ACTIVE")
        .unwrap();
    let g = c
        .ok(
            "query_memory",
            json!({"operation":"get","id":survivor["id"]}),
        )
        .await;
    assert_eq!(g["evidence"].as_array().unwrap().len(), 2, "{g:#}");

    // An explicit merge for names that do not fold.
    let zd = subject(&c, json!({"kind":"Lib","name":"zod.dev"})).await;
    remember(&c, now, json!({"type":"Fact","statement":"zod.dev documents v4","about":zd["id"],"factKind":"observed"}), json!([]))
        .await;
    let m = c
        .ok("manage_subject", json!({"operation":"merge","id":zd["id"],"version":zd["version"],"into":"Lib:zod","now":now}))
        .await;
    assert!(m["subject"]["aliases"]
        .as_array()
        .unwrap()
        .contains(&json!("zod.dev")));
    let r = c
        .ok(
            "query_memory",
            json!({"operation":"list","about":"Lib:zod","includeHistory":true}),
        )
        .await;
    assert_eq!(r["total"], 4);
    c.err(
        "manage_subject",
        json!({"operation":"merge","id":zd["id"],"version":2,"into":zod["id"]}),
        "INVALID_OPERATION",
    )
    .await;
    let tool = subject(&c, json!({"kind":"Tool","name":"zod-cli"})).await;
    c.err(
        "manage_subject",
        json!({"operation":"merge","id":tool["id"],"version":1,"into":zod["id"]}),
        "INVALID_OPERATION",
    )
    .await;
    c.stop().await;
}

#[tokio::test]
async fn two_servers_racing_on_one_claim_key_keep_one_current_atom_and_lose_none() {
    let dir = TempDir::new();
    let db = dir.path().join("race.db");
    // What is tested is that no write is lost, not how long 200 writes queue for the
    // write lock: on a loaded machine the last of them may wait past the default 10 s.
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!("{}busy_timeout_ms = 120000\n", crate::harness::TEST_CONFIG),
    )
    .unwrap();
    let args = ["--config", cfg.to_str().unwrap()];
    let a = Cairn::on(&db, &args).await;
    let b = Cairn::on(&db, &args).await;
    subject(&a, json!({"kind":"Service","name":"queue"})).await;
    let refs = ["chat", "doc", "commit"];
    let call = |i: usize| {
        json!({"operation":"remember","now":format!("2025-07-01T00:{:02}:{:02}Z", i / 60, i % 60),
               "atom":{"type":"Fact","statement":format!("The queue holds {i} jobs"),"predicate":"queue_depth",
                       "value":i,"about":"Service:queue","factKind":"observed","confidence":((i % 7) as f64) / 10.0},
               "sources":[{"refType":refs[i % 3],"uri":format!("https://evidence/{i}")}]})
    };
    async fn burst(c: &Cairn, calls: Vec<Value>) -> Vec<Value> {
        futures::future::join_all(calls.into_iter().map(|a| c.call("manage_memory", a))).await
    }
    let (ra, rb) = tokio::join!(
        burst(&a, (0..200).step_by(2).map(call).collect()),
        burst(&b, (1..200).step_by(2).map(call).collect())
    );
    let mut ids = HashSet::new();
    for r in ra.iter().chain(rb.iter()) {
        assert_eq!(r["success"], json!(true), "{r:#}");
        ids.insert(s(&r["data"]["atom"]["id"]));
    }
    assert_eq!(ids.len(), 200, "every remember wrote its own atom");
    let key = s(&ra[0]["data"]["atom"]["claimKey"]);
    let l = a
        .ok(
            "query_memory",
            json!({"operation":"list","key":key,"includeHistory":true,"limit":500}),
        )
        .await;
    assert_eq!(l["total"], 200, "no atom lost");
    let listed: HashSet<String> = l["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| s(&x["id"]))
        .collect();
    assert_eq!(listed, ids);
    let current = l["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["status"] == "ACTIVE" || x["status"] == "NEEDS_REVIEW")
        .count();
    assert!(current <= 1, "{current} current atoms on one key");
    let contested = l["items"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|x| x["status"] == "CONTESTED")
        .count();
    assert!(
        current == 1 || contested >= 2,
        "the key is held: {current} current, {contested} contested"
    );
    let count = |st: &str| {
        l["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|x| x["status"] == st)
            .count()
    };
    // Chat alone makes a claim PROPOSED, beside the key; the rest competed.
    assert_eq!(count("PROPOSED"), 67);
    assert!(
        count("SUPERSEDED") > 100,
        "{} superseded",
        count("SUPERSEDED")
    );
    a.stop().await;
    b.stop().await;
}

#[tokio::test]
async fn reflection_merges_links_drafts_and_refuses() {
    let c = Cairn::start().await;
    let project = c.project("Tooling").await;
    let ps = subject(
        &c,
        json!({"kind":"Project","name":"tooling","orchestratorProject":project}),
    )
    .await;
    let w = |session: &str, learnings: Value| json!({"operation":"write","session":session,"projectId":project,"accomplishments":["shipped the CLI"],"learnings":learnings});
    let e1 = c
        .ok(
            "manage_diary",
            w(
                "s1",
                json!(["clippy catches real bugs", "pin the toolchain"]),
            ),
        )
        .await["entry"]
        .clone();
    let e2 = c
        .ok(
            "manage_diary",
            w(
                "s2",
                json!("commit messages are easier to scan when conventional"),
            ),
        )
        .await["entry"]
        .clone();
    let clippy = c
        .ok("manage_memory", json!({"operation":"remember","atom":{"type":"Rule","statement":"Always run clippy before pushing","severity":"must","confirmedBy":"Lead"}}))
        .await;
    assert_eq!(clippy["atom"]["status"], "ACTIVE");
    let commits = c
        .ok("manage_memory", json!({"operation":"remember","atom":{"type":"Rule","statement":"Use conventional commit messages","severity":"should"},"sources":[{"refType":"chat","title":"standup"}]}))
        .await;
    assert_eq!(commits["atom"]["status"], "PROPOSED");

    // The prompt carries the reflection instruction and the chosen entries.
    let p = c
        .client
        .get_prompt(
            rmcp::model::GetPromptRequestParams::new("cairn-reflection").with_arguments(
                serde_json::from_value(
                    json!({"ids": format!("{},{}", s(&e1["id"]), s(&e2["id"]))}),
                )
                .unwrap(),
            ),
        )
        .await
        .expect("prompts/get cairn-reflection");
    let text = serde_json::to_value(&p.messages[0]).unwrap()["content"]["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        text.starts_with("Analyze this session diary and extract actionable rules."),
        "{text}"
    );
    assert!(text.contains("Output format: JSON array of proposed rules"));
    assert!(
        text.contains(&s(&e1["id"])) && text.contains("pin the toolchain"),
        "{text}"
    );
    let via_tool = c
        .ok(
            "manage_diary",
            json!({"operation":"reflect","ids":[e1["id"], e2["id"]]}),
        )
        .await;
    assert_eq!(via_tool["prompt"], json!(text));

    let rules = json!([
        {"rule":"Use conventional commit messages.","category":"git","scope":"global","reasoning":"scannable history","diaryEntryIds":[e2["id"]]},
        {"rule":"Never run clippy before pushing","category":"tooling","scope":"workspace","reasoning":"it is slow","diaryEntryIds":[e1["id"]]},
        {"rule":"Always pin the Rust toolchain version","category":"tooling","scope":"workspace","reasoning":"reproducible builds","diaryEntryIds":[e1["id"], e2["id"]]},
        {"rule":"Always write the test first","category":"testing","scope":"global","reasoning":"design pressure","diaryEntryIds":[]},
        {"rule":"Keep PRs small","scope":"global","reasoning":"review speed","diaryEntryIds":[e1["id"]]}
    ]);
    let answer = format!("Here are the rules:\n```json\n{rules}\n```");
    let r = c
        .ok(
            "manage_diary",
            json!({"operation":"ingest","rules":answer,"projectId":project}),
        )
        .await;
    let v: Vec<String> = r["rules"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| s(&x["verdict"]))
        .collect();
    assert_eq!(
        v,
        ["duplicate", "contradicts", "drafted", "refused", "invalid"],
        "{r:#}"
    );
    assert_eq!(r["rules"][0]["of"], commits["atom"]["id"]);
    assert_eq!(r["rules"][1]["contradicts"], json!([clippy["atom"]["id"]]));
    assert!(s(&r["rules"][3]["reason"]).contains("cites no diary entry"));
    assert!(r["rules"][4]["errors"][0]
        .as_str()
        .unwrap()
        .contains("category"));

    // The duplicate added evidence, no copy.
    let g = c
        .ok(
            "query_memory",
            json!({"operation":"get","id":commits["atom"]["id"]}),
        )
        .await;
    assert!(
        g["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e["refType"] == "diary"),
        "{g:#}"
    );
    let all = c
        .ok(
            "query_memory",
            json!({"operation":"list","types":"Rule","includeHistory":true}),
        )
        .await;
    assert_eq!(all["total"], 4);
    // The contradiction is a DRAFT linked to the ACTIVE rule, scoped to the project.
    let x = c
        .ok(
            "query_memory",
            json!({"operation":"get","id":r["rules"][1]["atomId"]}),
        )
        .await;
    assert_eq!(x["atom"]["status"], "DRAFT");
    assert_eq!(x["atom"]["context"]["id"], ps["id"]);
    assert!(x["edges"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["kind"] == "CONTRADICTS" && e["to"]["atom"] == clippy["atom"]["id"]));
    // The new rule is a DRAFT Rule citing both entries.
    let d = c
        .ok(
            "query_memory",
            json!({"operation":"get","id":r["rules"][2]["atomId"]}),
        )
        .await;
    assert_eq!(d["atom"]["status"], "DRAFT");
    assert_eq!(d["atom"]["type"], "Rule");
    assert_eq!(d["evidence"].as_array().unwrap().len(), 2);

    // A text that is no JSON array is refused whole, with the place.
    let e = c
        .err(
            "manage_diary",
            json!({"operation":"ingest","rules":"[{\"rule\": }]"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "rules");
    assert!(s(&e["message"]).contains("line 1 column"), "{e}");
    c.stop().await;
}

#[tokio::test]
async fn a_task_gets_its_memory_and_closing_it_suggests_a_diary_entry() {
    let c = Cairn::start().await;
    let project = c.project("Shop").await;
    let ps = subject(
        &c,
        json!({"kind":"Project","name":"shop","orchestratorProject":project}),
    )
    .await;
    remember(
        &c,
        "2025-09-01T00:00:00Z",
        json!({"type":"Convention","statement":"API handlers return problem+json errors","area":"naming","context":ps["id"]}),
        json!([{"refType":"doc","uri":"docs/errors.md"}]),
    )
    .await;
    remember(
        &c,
        "2025-09-01T00:00:00Z",
        json!({"type":"Fact","statement":"Zod's safeParse never throws","about":"Lib:zod","factKind":"observed"}),
        json!([{"refType":"doc","uri":"https://zod.dev/basics"}]),
    )
    .await;
    remember(
        &c,
        "2025-09-01T00:00:00Z",
        json!({"type":"Fact","statement":"Redis runs in cluster mode","about":"Service:redis","factKind":"observed"}),
        json!([{"refType":"doc","uri":"https://wiki/redis"}]),
    )
    .await;
    let task = c
        .task(json!({"projectId":project,"title":"Validate checkout input with Zod","summary":"reject bad payloads"}))
        .await;
    let tid = id_of(&task);
    let g = c
        .ok(
            "query_container",
            json!({"operation":"get","containerType":"task","id":tid,"includeMemory":true}),
        )
        .await;
    let st: Vec<String> = g["memory"]["atoms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| s(&a["statement"]))
        .collect();
    assert_eq!(st.len(), 2, "{g:#}");
    assert!(st.contains(&"API handlers return problem+json errors".to_string()));
    assert!(st.contains(&"Zod's safeParse never throws".to_string()));
    assert_eq!(g["memory"]["namedSubjects"][0]["name"], "zod");
    assert_eq!(g["memory"]["project"]["id"], ps["id"]);
    c.err(
        "query_container",
        json!({"operation":"get","containerType":"project","id":project,"includeMemory":true}),
        "VALIDATION_ERROR",
    )
    .await;
    c.advance("task", &tid).await;
    let done = c.advance("task", &tid).await;
    assert_eq!(done["memoryHints"]["diaryEntry"]["taskId"], json!(tid));
    assert_eq!(done["memoryHints"]["atoms"].as_array().unwrap().len(), 2);
    let e = c
        .ok("manage_diary", json!({"operation":"write","taskId":tid,"accomplishments":"validated checkout input","learnings":["safeParse keeps handlers total"]}))
        .await;
    assert_eq!(e["entry"]["projectId"], json!(project));
    let l = c
        .ok("manage_diary", json!({"operation":"list","taskId":tid}))
        .await;
    assert_eq!(l["total"], 1);
    c.stop().await;
}
