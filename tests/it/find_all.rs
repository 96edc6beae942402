//! `find` through MCP with the real model, over a project with all five toolsets
//! populated (tasks, graph atoms and molecules, code entities and references in a
//! real git repository, the fixture ontology, memory): a question in other words
//! than its answer's finds that answer first whatever its kind, each hit's `read`
//! call reads it in full, `kinds` narrows, a bad kind names the valid ones, and the
//! answer stays within `maxTokens`. Also `query_container search` ranked by the core.

use serde_json::{json, Value};

use crate::code::{id, Repo};
use crate::harness::{Cairn, TempDir, TEST_CONFIG};

struct World {
    c: Cairn,
    project: String,
    _dir: TempDir,
    _repos: (Repo, Repo),
}

const TASKS: [(&str, &str); 4] = [
    (
        "Back off exponentially between webhook delivery attempts",
        "A failed webhook POST is attempted again after 1, 2, 4 and 8 minutes before it is dropped.",
    ),
    (
        "Dark mode for the settings page",
        "Follow the operating system's colour scheme.",
    ),
    (
        "Export invoices as CSV",
        "Accountants want a spreadsheet of last month's invoices.",
    ),
    (
        "Upgrade the ORM to version 5",
        "The old version is no longer maintained.",
    ),
];

const ATOMS: [(&str, &str); 3] = [
    (
        "Redirect handling",
        "Responses with a 3xx status are followed automatically, at most 30 hops; the Authorization header is dropped when the host changes.",
    ),
    (
        "TLS verification",
        "Certificates are verified against certifi's bundle; verify=False disables the check and warns.",
    ),
    (
        "Streaming downloads",
        "stream=True defers reading the body; iter_content then yields it in chunks.",
    ),
];

const MEMORY: [&str; 3] = [
    "The ledger service stores amounts as integer cents, never as floating point numbers",
    "Alerts about the ledger page the on-call engineer through PagerDuty",
    "The ledger service is written in Go 1.22",
];

const ENTITIES: [(&str, &str); 3] = [
    ("PoolManager", "Hands out HTTP connection pools by host."),
    (
        "CookieJar",
        "Keeps the cookies a server set and sends them back on later requests to it.",
    ),
    ("Tokenizer", "Splits source text into lexical tokens."),
];

async fn world() -> World {
    let code = Repo::new();
    for (name, _) in ENTITIES {
        code.write(&format!("{name}.py"), &format!("class {name}:\n    pass\n"));
    }
    code.git(&["add", "-A"]);
    code.git(&["commit", "-qm", "code"]);
    let onto = Repo::new();
    for (f, t) in crate::ontology::fixture_pages() {
        onto.write(&format!("pages/{f}"), &t);
    }
    onto.commit("the fixture ontology");
    let dir = TempDir::new();
    let cfg = dir.path().join("config.toml");
    std::fs::write(&cfg, format!("{TEST_CONFIG}[lsp]\npy = \"\"\n")).unwrap();
    let c = Cairn::on(
        &dir.path().join("cairn.db"),
        &["--config", cfg.to_str().unwrap()],
    )
    .await;
    let d = c
        .ok(
            "init_project",
            json!({"name":"client","repoPath":code.root()}),
        )
        .await;
    let project = d["projectId"].as_str().unwrap().to_string();
    let cat = crate::code::category(&d, "class");
    let domain = crate::code::category(&d, "core");
    let root = c
        .ok(
            "create_entity",
            json!({"projectId":project,"name":"HTTP client","description":"Sends HTTP requests.","categoryIds":[domain],
                   "commands":[{"command":"add","kind":"text","documentPath":"PoolManager.py","startLine":1,"endLine":2,"description":"the client"}]}),
        )
        .await;
    for (name, description) in ENTITIES {
        c.ok(
            "create_entity",
            json!({"projectId":project,"name":name,"description":description,"categoryIds":[cat],"parentIds":[id(&root["entity"])],
                   "commands":[{"command":"add","kind":"code","documentPath":format!("{name}.py"),"lspSymbol":name,
                                "startLine":1,"endLine":2,"description":format!("the {name} class")}]}),
        )
        .await;
    }
    c.ok(
        "manage_ontology",
        json!({"projectId": project, "operation": "attach", "repoPath": onto.root()}),
    )
    .await;
    c.ok(
        "manage_ontology",
        json!({"projectId": project, "operation": "sync"}),
    )
    .await;
    let mut task = String::new();
    for (title, summary) in TASKS {
        task = id(&c
            .task(json!({"title":title,"summary":summary,"projectId":project}))
            .await);
    }
    for (i, (name, knowledge)) in ATOMS.iter().enumerate() {
        c.ok(
            "manage_graph",
            json!({"operation":"create","entityType":"atom","projectId":project,"name":name,
                   "paths":[format!("src/client/part{i}/**")],"knowledge":knowledge,"createdByTaskId":task}),
        )
        .await;
    }
    c.ok(
        "manage_graph",
        json!({"operation":"create","entityType":"molecule","projectId":project,"name":"Billing",
               "knowledge":"Invoices, payment capture and refunds: everything that moves a customer's money.",
               "createdByTaskId":task}),
    )
    .await;
    for s in MEMORY {
        c.ok(
            "manage_memory",
            json!({"operation":"remember","now":"2025-09-01T10:00:00Z",
                   "atom":{"type":"Fact","statement":s,"about":"Service:ledger","factKind":"observed"},
                   "sources":[{"refType":"doc","uri":"docs/ledger.md"}]}),
        )
        .await;
    }
    World {
        c,
        project,
        _dir: dir,
        _repos: (code, onto),
    }
}

fn hits(r: &Value) -> &Vec<Value> {
    r["hits"]
        .as_array()
        .unwrap_or_else(|| panic!("no hits: {r:#}"))
}

#[tokio::test]
async fn find_ranks_every_kind_together_and_each_hit_reads_in_full() {
    let w = world().await;
    let c = &w.c;
    // Questions in other words than their answers', one per kind.
    let asked = [
        (
            "retry failed webhook deliveries after a pause",
            "task",
            "Back off exponentially",
        ),
        (
            "are redirects followed automatically",
            "atom",
            "Redirect handling",
        ),
        ("refunds and payment capture", "molecule", "Billing"),
        ("PoolManager", "entity", "PoolManager"),
        (
            "how is money represented so rounding cannot creep in",
            "memory",
            "integer cents",
        ),
        (
            "classifying photographs by cutting them into patches",
            "class",
            "Vision",
        ),
    ];
    let mut wrong = Vec::new();
    for (q, kind, want) in asked {
        let r = c.ok("find", json!({"query":q,"projectId":w.project})).await;
        let h = hits(&r);
        let first = &h[0];
        if first["kind"] != kind || !first["summary"].as_str().unwrap().contains(want) {
            wrong.push(format!(
                "{q} → {:?}",
                h.iter()
                    .take(3)
                    .map(|x| format!("{} {} {}", x["kind"], x["score"], x["summary"]))
                    .collect::<Vec<_>>()
            ));
            continue;
        }
        // One order for all kinds: by the fused score, each with its parts.
        let scores: Vec<f64> = h.iter().map(|x| x["score"].as_f64().unwrap()).collect();
        assert!(scores.windows(2).all(|p| p[0] >= p[1]), "{q}: {scores:?}");
        assert!(first["why"]["vector"].is_number(), "{first:#}");
        // The call the hit names reads it in full.
        let read = &first["read"];
        let full = c
            .ok(read["tool"].as_str().unwrap(), read["args"].clone())
            .await;
        assert!(
            full.to_string().contains(first["id"].as_str().unwrap())
                || (kind == "class" && full.to_string().contains("VisionTransformer")),
            "{q}: {read} read {full:#}"
        );
    }
    assert!(wrong.is_empty(), "not first:\n{}", wrong.join("\n"));
    // A reference is found by its description and read through its entity.
    let r = c
        .ok(
            "find",
            json!({"query":"the CookieJar class","kinds":"references","projectId":w.project}),
        )
        .await;
    let first = &hits(&r)[0];
    assert_eq!(first["kind"], "reference", "{r:#}");
    assert_eq!(first["read"]["tool"], "get_entity", "{r:#}");
    w.c.stop().await;
}

#[tokio::test]
async fn find_narrows_by_kind_refuses_a_bad_one_and_keeps_its_budget() {
    let w = world().await;
    let c = &w.c;
    let r = c
        .ok(
            "find",
            json!({"query":"the ledger","kinds":["memory","tasks"],"limit":50}),
        )
        .await;
    assert!(!hits(&r).is_empty(), "{r:#}");
    assert!(
        hits(&r)
            .iter()
            .all(|h| h["kind"] == "memory" || h["kind"] == "task" || h["kind"] == "feature"),
        "{r:#}"
    );
    let e = c
        .err(
            "find",
            json!({"query":"x","kinds":"atoms,widgets"}),
            "VALIDATION_ERROR",
        )
        .await;
    let m = e["message"].as_str().unwrap();
    assert!(
        m.contains("widgets")
            && m.contains(
                "valid kinds: tasks, atoms, molecules, entities, references, memory, classes"
            ),
        "{e:#}"
    );
    // A list published as an array takes an array or a string, nothing else.
    for bad in [json!(5), json!([1, 2]), json!({"kind": "atoms"})] {
        let e = c
            .err("find", json!({"query":"x","kinds":bad}), "VALIDATION_ERROR")
            .await;
        assert_eq!(e["details"]["parameter"], "kinds", "{e:#}");
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("an array of strings"),
            "{e:#}"
        );
    }
    // Everything near "data" in a small budget: the whole envelope fits, and what
    // went is summarised.
    let env = c
        .call(
            "find",
            json!({"query":"how data is stored and checked","limit":100,"maxTokens":400}),
        )
        .await;
    let tokens = env.to_string().chars().count().div_ceil(4);
    assert!(tokens <= 400, "{tokens}: {env:#}");
    let d = &env["data"];
    let kept = hits(d).len();
    let omitted = d["omitted"]["count"]["hits"].as_u64().unwrap_or(0) as usize;
    assert!(omitted > 0 && kept > 0, "{env:#}");
    assert!(
        d["omitted"]["hits"].as_array().unwrap().len() <= 5,
        "{env:#}"
    );
    let all = c
        .ok(
            "find",
            json!({"query":"how data is stored and checked","limit":100,"maxTokens":100000}),
        )
        .await;
    assert_eq!(hits(&all).len(), kept + omitted, "{all:#}");
    // The budget kept the best.
    assert_eq!(hits(&all)[..kept], hits(d)[..], "{env:#}");
    w.c.stop().await;
}

#[tokio::test]
async fn find_searches_only_the_served_toolsets() {
    let dir = TempDir::new();
    let c = Cairn::on(&dir.path().join("t.db"), &["--toolsets", "tasks"]).await;
    let p = c.project("Solo").await;
    c.task(json!({"title":"Rotate the signing keys every quarter","projectId":p}))
        .await;
    let r = c
        .ok("find", json!({"query":"how often do we change keys"}))
        .await;
    assert_eq!(hits(&r)[0]["kind"], "task", "{r:#}");
    let e = c
        .err(
            "find",
            json!({"query":"x","kinds":"memory"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert!(
        e["message"].as_str().unwrap().contains("memory toolset"),
        "{e:#}"
    );
    c.stop().await;
}

#[tokio::test]
async fn task_search_ranks_by_meaning_and_words() {
    let c = Cairn::start().await;
    let p = c.project("Shop").await;
    for (title, summary) in TASKS {
        c.task(json!({"title":title,"summary":summary,"projectId":p}))
            .await;
    }
    let search =
        |q: &str| json!({"operation":"search","containerType":"task","projectId":p,"query":q});
    for (q, want) in [
        ("send webhooks again when they fail", TASKS[0].0),
        ("a spreadsheet for the accountants", TASKS[2].0),
        ("a darker look for the settings screen", TASKS[1].0),
        ("ORM", TASKS[3].0),
    ] {
        let r = c.ok("query_container", search(q)).await;
        let items = r["items"].as_array().unwrap();
        assert!(!items.is_empty(), "{q}: {r:#}");
        assert_eq!(items[0]["title"], want, "{q}: {r:#}");
        assert!(items[0]["score"].as_f64().unwrap() > 0.0, "{r:#}");
        assert!(items[0]["why"]["vector"].is_number(), "{r:#}");
        assert_eq!(r["total"].as_u64(), Some(items.len() as u64), "{r:#}");
    }
    // A changed title is embedded again: the search follows it.
    let t = c.ok("query_container", search("ORM")).await["items"][0].clone();
    c.ok(
        "manage_container",
        json!({"operation":"update","containerType":"task","id":t["id"],"version":t["version"],
               "title":"Move the nightly backups to another region","summary":"Disaster recovery."}),
    )
    .await;
    let r = c
        .ok(
            "query_container",
            search("copies of our data kept far away"),
        )
        .await;
    assert_eq!(r["items"][0]["id"], t["id"], "{r:#}");
    c.stop().await;
}
