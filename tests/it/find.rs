//! Finding through MCP with the real model and the one ranking core: memory `recall`
//! ranks the atom that answers a question first among many about one subject
//! (relevance before status and recency) and without a query keeps the documented
//! order; a plain question finds the knowledge atom that answers it, and `minScore`
//! says what it hid; an exact name is first in every mode of `search`.

use serde_json::{json, Value};

use crate::harness::Cairn;

/// Twenty statements about one service; the questions below each answer by one.
const LEDGER: [&str; 20] = [
    "The ledger service stores amounts as integer cents, never as floating point numbers",
    "The ledger service runs on PostgreSQL 16 with logical replication to a standby",
    "Ledger entries are immutable: a mistake is corrected by posting a new reversing entry",
    "The ledger service exposes a gRPC API on port 7443",
    "Reconciliation of the ledger against the bank statements runs every night at 02:00 UTC",
    "The ledger service is owned by the payments platform team",
    "Ledger balances are cached in Redis for thirty seconds",
    "Every ledger write needs an idempotency key from the caller, so a retried request is applied once",
    "The ledger service ships its logs to Loki, which keeps them for 14 days",
    "Currency conversion in the ledger uses exchange rates fetched hourly from the ECB",
    "The ledger service is deployed by Argo CD from the main branch",
    "A ledger account can be closed only once its balance is zero",
    "Backups of the ledger database are taken every six hours and kept for 35 days",
    "Load tests show the ledger sustains 4,000 writes per second",
    "Signing in to the ledger admin console requires a hardware security key",
    "The ledger service is written in Go 1.22",
    "Ledger exports reach the data warehouse through Kafka Connect",
    "Alerts about the ledger page the on-call engineer through PagerDuty",
    "The ledger rejects transactions dated more than seven days in the past",
    "Feature flags of the ledger are managed in LaunchDarkly",
];

/// Questions in other words than their answer's, and the answer's index.
const QUESTIONS: [(&str, usize); 8] = [
    (
        "how is money represented so that rounding errors cannot creep in",
        0,
    ),
    ("what do we do when a posted entry turns out to be wrong", 2),
    (
        "how do we avoid recording a payment twice when a client retries",
        7,
    ),
    ("how long do we keep database backups", 12),
    ("what language is the ledger written in", 15),
    ("how far back may a transaction be dated", 18),
    ("who gets alerted when the ledger is down", 17),
    ("how fast can the ledger accept writes", 13),
];

fn statements(r: &Value) -> Vec<String> {
    r["atoms"]
        .as_array()
        .unwrap_or_else(|| panic!("no atoms: {r}"))
        .iter()
        .map(|a| a["statement"].as_str().unwrap_or_default().to_string())
        .collect()
}

/// Remembers the ledger's statements an hour apart: the answers are the oldest, and
/// every other one PROPOSED (from a chat), so neither recency nor status puts them
/// first; only the question can.
async fn ledger(c: &Cairn) {
    let answers: Vec<usize> = QUESTIONS.iter().map(|q| q.1).collect();
    let mut order: Vec<usize> = answers.clone();
    order.extend((0..LEDGER.len()).filter(|i| !answers.contains(i)));
    for (n, &i) in order.iter().enumerate() {
        let proposed = answers
            .iter()
            .position(|&a| a == i)
            .is_some_and(|p| p % 2 == 0);
        let (kind, source) = if proposed {
            (
                "reported",
                json!([{"refType":"chat","title":format!("standup {n}")}]),
            )
        } else {
            (
                "observed",
                json!([{"refType":"doc","uri":format!("docs/ledger/{i}.md")}]),
            )
        };
        c.ok(
            "manage_memory",
            json!({"operation":"remember","now":format!("2025-09-01T{:02}:00:00Z", n),
                   "atom":{"type":"Fact","statement":LEDGER[i],"about":"Service:ledger","factKind":kind},
                   "sources":source}),
        )
        .await;
    }
}

#[tokio::test]
async fn recall_puts_the_atom_that_answers_a_question_first() {
    let c = Cairn::start().await;
    ledger(&c).await;
    let mut wrong = Vec::new();
    for (q, answer) in QUESTIONS {
        let r = c
            .ok(
                "query_memory",
                json!({"operation":"recall","query":q,"about":"Service:ledger","now":"2025-09-02T00:00:00Z"}),
            )
            .await;
        let got = statements(&r);
        if got.first().map(String::as_str) != Some(LEDGER[answer]) {
            wrong.push(format!("{q} → {:?}", &got[..got.len().min(3)]));
        }
        // Each hit says how relevant the query found it, best first.
        let rel: Vec<f64> = r["atoms"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a["relevance"].as_f64().expect("relevance per hit"))
            .collect();
        assert!(
            rel.windows(2).all(|w| w[0] >= w[1] - 0.011),
            "{q}: relevance out of order {rel:?}"
        );
        assert!(
            rel.first().is_some_and(|&x| x < 1.0),
            "{q}: a fused relevance below 1, not a saturated score: {rel:?}"
        );
    }
    assert!(wrong.is_empty(), "not first:\n{}", wrong.join("\n"));
    c.stop().await;
}

#[tokio::test]
async fn recall_without_a_query_keeps_status_then_recency() {
    let c = Cairn::start().await;
    ledger(&c).await;
    let r = c
        .ok(
            "query_memory",
            json!({"operation":"recall","about":"Service:ledger","now":"2025-09-02T00:00:00Z"}),
        )
        .await;
    let statuses: Vec<&str> = r["atoms"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a["status"].as_str().unwrap())
        .collect();
    assert_eq!(statuses.len(), 20, "{r:#}");
    let first_proposed = statuses.iter().position(|s| *s == "PROPOSED").unwrap();
    assert!(
        statuses[first_proposed..].iter().all(|s| *s == "PROPOSED"),
        "ACTIVE first: {statuses:?}"
    );
    assert!(
        r["atoms"][0].get("relevance").is_none(),
        "no query, no relevance: {r:#}"
    );
    // Among the ACTIVE ones the most recently validated leads: the last remembered.
    assert_eq!(statements(&r)[0], LEDGER[19], "{r:#}");
    c.stop().await;
}

/// Knowledge atoms of an HTTP client, and questions in plain words with the atom
/// that answers each.
const CLIENT: [(&str, &str); 10] = [
    ("Redirect handling", "Responses with a 3xx status are followed automatically, at most 30 hops; the Authorization header is dropped when the host changes."),
    ("Connection pooling", "HTTPAdapter keeps a pool of urllib3 connections per host, ten by default."),
    ("Retries", "Failed connections are retried by urllib3's Retry, configured through HTTPAdapter(max_retries=...)."),
    ("Timeouts", "No request gives up waiting unless a timeout is passed; a tuple sets the connect and read limits separately."),
    ("Cookies", "A Session keeps cookies across requests in a RequestsCookieJar."),
    ("Proxies", "Proxy servers come from the proxies argument or the HTTP_PROXY and HTTPS_PROXY environment variables."),
    ("TLS verification", "Certificates are verified against certifi's bundle; verify=False disables the check and warns."),
    ("Streaming downloads", "stream=True defers reading the body; iter_content then yields it in chunks, so a large file never sits in memory whole."),
    ("Authentication", "Basic and digest authentication are AuthBase subclasses attached to a request."),
    ("Encoding detection", "Response.text decodes the body with the charset the headers name, else one charset_normalizer guesses."),
];

const ASKED: [(&str, &str); 5] = [
    ("how are redirects handled", "Redirect handling"),
    (
        "what happens when the server takes too long to answer",
        "Timeouts",
    ),
    ("where do proxy settings come from", "Proxies"),
    ("is the server's certificate checked", "TLS verification"),
    (
        "how do I download a big file without loading all of it",
        "Streaming downloads",
    ),
];

fn names(r: &Value) -> Vec<String> {
    r["items"]
        .as_array()
        .unwrap_or_else(|| panic!("no items: {r}"))
        .iter()
        .map(|a| a["name"].as_str().unwrap_or_default().to_string())
        .collect()
}

#[tokio::test]
async fn a_plain_question_finds_the_atom_that_answers_it_and_a_floor_says_what_it_hid() {
    let c = Cairn::start().await;
    let project = c.project("Client").await;
    let task = crate::harness::id_of(
        &c.task(json!({"title":"Write down the client","projectId":project}))
            .await,
    );
    for (i, (name, knowledge)) in CLIENT.iter().enumerate() {
        c.ok(
            "manage_graph",
            json!({"operation":"create","entityType":"atom","projectId":project,"name":name,
                   "paths":[format!("src/client/part{i}/**")],"knowledge":knowledge,"createdByTaskId":task}),
        )
        .await;
    }
    let search =
        |q: &str| json!({"operation":"search","entityType":"atom","projectId":project,"query":q});
    let mut wrong = Vec::new();
    for (q, want) in ASKED {
        let r = c.ok("query_graph", search(q)).await;
        let got = names(&r);
        if got.first().map(String::as_str) != Some(want) {
            wrong.push(format!("{q} → {got:?}"));
        }
        assert_eq!(r["total"].as_u64(), Some(got.len() as u64), "{r}");
    }
    assert!(wrong.is_empty(), "not first:\n{}", wrong.join("\n"));
    // A floor no meaning reaches keeps the atoms a word matched, and says how many
    // others it hid.
    let mut a = search("how are redirects handled");
    a["minScore"] = json!(0.99);
    let r = c.ok("query_graph", a).await;
    assert_eq!(names(&r), ["Redirect handling"], "{r:#}");
    let hid = r["belowMinScore"].as_u64().unwrap();
    assert!(hid >= 5, "{r:#}");
    // No atom holds a word of this one.
    let mut a = search("why is everything so slow");
    a["minScore"] = json!(0.99);
    let env = c.call("query_graph", a).await;
    assert_eq!(env["data"]["items"], json!([]), "{env:#}");
    assert!(
        env["message"].as_str().unwrap().contains("below minScore"),
        "an empty page says a threshold hid the rest: {env:#}"
    );
    // minScore filters a text search only.
    c.err(
        "query_graph",
        json!({"operation":"search","entityType":"atom","projectId":project,"minScore":0.5}),
        "VALIDATION_ERROR",
    )
    .await;
    c.stop().await;
}

/// An entity named by the query is first in every mode of `search`, even when its
/// description shares no meaning with its name.
#[tokio::test]
async fn an_exact_name_is_found_in_every_search_mode() {
    use crate::code::{id, Repo};
    use crate::harness::{TempDir, TEST_CONFIG};
    let repo = Repo::new();
    let files = [
        ("HTTPAdapter", "Mounted per URL prefix; holds the pool."),
        (
            "Session",
            "Keeps cookies and settings across requests to adapters.",
        ),
        (
            "BaseAdapter",
            "The interface every transport adapter implements.",
        ),
        ("PoolManager", "Hands out HTTP connection pools by host."),
        ("adapter_for", "Picks the HTTP adapter mounted for a URL."),
    ];
    for (name, _) in files {
        repo.write(&format!("{name}.py"), &format!("class {name}:\n    pass\n"));
    }
    repo.git(&["add", "-A"]);
    repo.git(&["commit", "-qm", "client"]);
    let tmp = TempDir::new();
    let cfg = tmp.path().join("config.toml");
    std::fs::write(&cfg, format!("{TEST_CONFIG}[lsp]\npy = \"\"\n")).unwrap();
    let c = Cairn::on(
        &tmp.path().join("cairn.db"),
        &["--config", cfg.to_str().unwrap()],
    )
    .await;
    let d = c
        .ok(
            "init_project",
            json!({"name":"client","repoPath":repo.root()}),
        )
        .await;
    let pid = d["projectId"].as_str().unwrap().to_string();
    let cat = crate::code::category(&d, "class");
    let domain = crate::code::category(&d, "core");
    let root = c
        .ok(
            "create_entity",
            json!({"projectId":pid,"name":"HTTP client","description":"Sends HTTP requests.","categoryIds":[domain],
                   "commands":[{"command":"add","kind":"text","documentPath":"Session.py","startLine":1,"endLine":2,"description":"the client"}]}),
        )
        .await;
    for (name, description) in files {
        c.ok(
            "create_entity",
            json!({"projectId":pid,"name":name,"description":description,"categoryIds":[cat],"parentIds":[id(&root["entity"])],
                   "commands":[{"command":"add","kind":"code","documentPath":format!("{name}.py"),"lspSymbol":name,
                                "startLine":1,"endLine":2,"description":name}]}),
        )
        .await;
    }
    for mode in ["hybrid", "lexical", "vector"] {
        for q in ["HTTPAdapter", "http adapter", "class HTTPAdapter"] {
            let r = c
                .ok(
                    "search",
                    json!({"projectId":pid,"query":q,"target":"entities","mode":mode,"minScore":0.9}),
                )
                .await;
            assert_eq!(r["entities"][0]["name"], "HTTPAdapter", "{mode} {q}: {r:#}");
            assert_eq!(r["entities"][0]["score"], 1.0, "{mode} {q}: {r:#}");
        }
    }
    c.stop().await;
}
