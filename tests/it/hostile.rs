//! Hostile input through MCP, over stdio and HTTP: documents, queries and arguments
//! nested 100,000 levels deep, queries built to eat memory or time, documents past
//! the size bound (as text, as a path, as a page in the repository), a few hundred
//! random ones. Every answer is an envelope naming what stopped it (the parameter,
//! the file and line, the setting of the config file), and the server stays up.
//! And one session's expensive call leaves the others' calls answered.

use serde_json::{json, Value};

use crate::code::Repo;
use crate::harness::{Cairn, HttpServer, TempDir, Transport};
use crate::ontology::fixture_pages;

/// A server with the fixture ontology attached and synced, on a config file of
/// `settings` (lines under `[ontology]`).
struct Onto {
    c: Cairn,
    repo: Repo,
    project: String,
    _dir: TempDir,
}

impl Onto {
    async fn new(t: Transport, settings: &str) -> Onto {
        let repo = Repo::new();
        for (f, text) in fixture_pages() {
            repo.write(&format!("pages/{f}"), &text);
        }
        repo.commit("the fixture ontology");
        let dir = TempDir::new();
        let config = dir.path().join("config.toml");
        std::fs::write(&config, format!("[ontology]\n{settings}\n")).unwrap();
        let config = config.to_str().unwrap().to_string();
        let c = Cairn::on_via(t, &dir.path().join("cairn.db"), &["--config", &config]).await;
        let project = c.project("Hostile").await;
        let o = Onto {
            c,
            repo,
            project,
            _dir: dir,
        };
        o.ok(
            "manage_ontology",
            json!({"operation": "attach", "repoPath": o.repo.root()}),
        )
        .await;
        o.ok("manage_ontology", json!({"operation": "sync"})).await;
        o
    }

    fn with(&self, mut args: Value) -> Value {
        args["projectId"] = json!(self.project);
        args
    }

    async fn ok(&self, tool: &str, args: Value) -> Value {
        self.c.ok(tool, self.with(args)).await
    }

    async fn err(&self, tool: &str, args: Value, code: &str) -> Value {
        self.c.err(tool, self.with(args), code).await
    }

    async fn call(&self, tool: &str, args: Value) -> Value {
        self.c.call(tool, self.with(args)).await
    }

    /// The server still answers, with the ontology it had.
    async fn still_up(&self) {
        let d = self
            .ok(
                "ontology_query",
                json!({"cypher": "MATCH (c:OwlClass) RETURN count(c) AS n"}),
            )
            .await;
        assert!(d["rows"][0][0].as_i64().unwrap() > 60, "{d}");
    }
}

const N: usize = 100_000;

fn deep_ofn() -> String {
    format!(
        "Prefix(ai:=<urn:cairn:ai:>)\nOntology(\nDeclaration(Class(ai:Deep))\nSubClassOf(ai:Deep\n{}ai:Deep{})\n)\n",
        "ObjectSomeValuesFrom(ai:hasPart ".repeat(N),
        ")".repeat(N)
    )
}

/// An import nested 100,000 levels deep is refused naming `ofn` and the line, a
/// query nested past the bound naming `cypher`, and the server answers on.
async fn deep_documents_and_queries_are_refused_naming_the_parameter(t: Transport) {
    let o = Onto::new(t, "").await;
    let e = o
        .err(
            "manage_ontology",
            json!({"operation": "import", "ofn": deep_ofn()}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "ofn", "{e}");
    // The first problem is what stopped the reading, with its line.
    let first = &e["details"]["problems"][0];
    assert_eq!(first["line"], 5, "{e}");
    let what = first["message"].as_str().unwrap();
    assert!(what.contains("nests more than 128"), "{e}");
    // The same document as a file of the repository, by `path`.
    o.repo.write("deep.ofn", &deep_ofn());
    let e = o
        .err(
            "manage_ontology",
            json!({"operation": "import", "path": "deep.ofn"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "path", "{e}");
    let what = e["message"].as_str().unwrap();
    assert!(what.contains("nests more than 128"), "{e}");
    for cypher in [
        format!("RETURN {}1{}", "(".repeat(400), ")".repeat(400)),
        format!("RETURN {}1{}", "[".repeat(400), "]".repeat(400)),
        format!("RETURN {}true", "NOT ".repeat(200)),
        format!("MATCH (n) WHERE {}true RETURN n", "NOT (".repeat(150)),
    ] {
        let e = o
            .err(
                "ontology_query",
                json!({ "cypher": cypher }),
                "VALIDATION_ERROR",
            )
            .await;
        assert_eq!(e["details"]["parameter"], "cypher", "{e}");
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("nesting deeper than 100"),
            "{e}"
        );
    }
    o.still_up().await;
}

/// Queries built to grow a value or the rows past every bound stop at one, and say
/// which: its setting in the config file and its value.
async fn hostile_queries_stop_at_a_named_limit(t: Transport) {
    let o = Onto::new(t, "query_memory_mib = 4\nmax_query_bindings = 200000").await;
    let doubling = |start: &str, step: &str, n: usize| {
        format!("WITH {start} AS s {}RETURN size(s)", step.repeat(n))
    };
    let memory = [
        // A 269-byte query that would build a gigabyte: a string doubled.
        doubling("'0123456789abcdef'", "WITH s + s AS s ", 26),
        doubling("[1, 2, 3, 4]", "WITH s + s AS s ", 40),
        doubling("['x']", "WITH [s, s] + s AS s ", 30),
        doubling("{a: 'xxxxxxxxxxxxxxxx'}", "WITH {a: s, b: s} AS s ", 30),
        "MATCH (c:OwlClass) WITH collect(c.definition) AS d UNWIND d AS x UNWIND d AS y \
         WITH x, y, d RETURN count(*)"
            .to_string(),
    ];
    for q in &memory {
        let e = o
            .err("ontology_query", json!({ "cypher": q }), "VALIDATION_ERROR")
            .await;
        let d = &e["details"];
        assert_eq!(d["kind"], "memory budget exceeded", "{q}: {e}");
        assert_eq!(d["limit"]["setting"], "[ontology] query_memory_mib", "{e}");
        assert_eq!(d["limit"]["value"], 4, "{e}");
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("query_memory_mib = 4"),
            "{e}"
        );
    }
    let nested = doubling("1", "WITH [s] AS s ", 40);
    let e = o
        .err(
            "ontology_query",
            json!({ "cypher": nested }),
            "VALIDATION_ERROR",
        )
        .await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("nested more than 32"),
        "{e}"
    );
    for q in [
        "MATCH (a), (b), (c) RETURN count(*)",
        "MATCH (a:OwlClass) WITH collect(a) AS ns UNWIND ns AS x UNWIND ns AS y UNWIND ns AS z RETURN count(*)",
        "UNWIND [0,1,2,3,4,5,6,7,8,9] AS a UNWIND [0,1,2,3,4,5,6,7,8,9] AS b UNWIND [0,1,2,3,4,5,6,7,8,9] AS c \
         UNWIND [0,1,2,3,4,5,6,7,8,9] AS d UNWIND [0,1,2,3,4,5,6,7,8,9] AS e UNWIND [0,1,2,3,4,5,6,7,8,9] AS f RETURN count(*)",
    ] {
        let e = o
            .err("ontology_query", json!({ "cypher": q }), "VALIDATION_ERROR")
            .await;
        assert_eq!(e["details"]["limit"]["setting"], "[ontology] max_query_bindings", "{q}: {e}");
        assert_eq!(e["details"]["limit"]["value"], 200000);
    }
    o.still_up().await;
}

/// A query that would run for minutes stops at `query_timeout_ms` and says so.
async fn a_long_query_stops_at_its_deadline_and_names_it(t: Transport) {
    let o = Onto::new(t, "query_timeout_ms = 300\nmax_query_bindings = 1000000000").await;
    let e = o
        .err(
            "ontology_query",
            json!({"cypher": "MATCH (a), (b), (c), (d), (e) RETURN count(*)"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["kind"], "deadline exceeded", "{e}");
    assert_eq!(
        e["details"]["limit"]["setting"],
        "[ontology] query_timeout_ms"
    );
    assert_eq!(e["details"]["limit"]["value"], 300);
    o.still_up().await;
}

/// One bound for a document, whichever parameter carries it, set by
/// `max_document_mib`: an OFN text, an OFN file, a page in the repository.
async fn documents_past_the_size_bound_are_refused_whichever_way_they_come(t: Transport) {
    let o = Onto::new(t, "max_document_mib = 1").await;
    let big = format!(
        "Prefix(ai:=<urn:cairn:ai:>)\nOntology(\n{})\n",
        "Declaration(Class(ai:Padding))\n".repeat(40_000)
    );
    assert!(big.len() > 1 << 20);
    let e = o
        .err(
            "manage_ontology",
            json!({"operation": "import", "ofn": big}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "ofn");
    assert!(
        e["message"].as_str().unwrap().contains("max_document_mib"),
        "{e}"
    );
    o.repo.write("big.ofn", &big);
    let e = o
        .err(
            "manage_ontology",
            json!({"operation": "import", "path": "big.ofn"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], "path");
    assert!(
        e["message"].as_str().unwrap().contains("max_document_mib"),
        "{e}"
    );
    // A page of the repository past the bound is a sync problem, unread.
    let mut page = fixture_pages()
        .into_iter()
        .find(|(f, _)| f == "Vision Transformer.md")
        .unwrap()
        .1;
    page.push_str(&"- padding\n".repeat(120_000));
    o.repo.write("pages/Vision Transformer.md", &page);
    o.repo.commit("a huge page");
    let s = o.ok("manage_ontology", json!({"operation": "sync"})).await;
    let problems = s["problems"].as_array().unwrap();
    assert!(
        problems
            .iter()
            .any(|p| p["file"] == "pages/Vision Transformer.md"
                && p["message"].as_str().unwrap().contains("max_document_mib")),
        "{s:#}"
    );
    assert!(s["pages"]["unchanged"].as_i64().unwrap() > 80, "{s:#}");
    o.still_up().await;
}

/// A committed page nested 100,000 levels deep is a sync problem with its file and
/// line; the rest of the repository imports, and a later sync still works.
async fn a_deep_page_is_a_sync_problem_and_the_rest_imports(t: Transport) {
    let o = Onto::new(t, "").await;
    let page = format!(
        "- Deep Class\n  - ### OntologyBlock\n    - ontology:: true\n    - term-id:: AI-9999\n    - owl:class:: ai:DeepClass\n    - owl:subClassOf:: {}ai:Transformer{}\n",
        "(".repeat(N),
        ")".repeat(N)
    );
    o.repo.write("pages/Deep Class.md", &page);
    let chain = format!(
        "- Chain Class\n  - ### OntologyBlock\n    - owl:class:: ai:ChainClass\n    - owl:equivalentClass:: {}ai:Transformer\n",
        "core:hasPart some ".repeat(N)
    );
    o.repo.write("pages/Chain Class.md", &chain);
    o.repo.commit("deep pages");
    let s = o.ok("manage_ontology", json!({"operation": "sync"})).await;
    let problems = s["problems"].as_array().unwrap();
    for (file, line) in [("pages/Deep Class.md", 6), ("pages/Chain Class.md", 4)] {
        assert!(
            problems.iter().any(|p| p["file"] == file
                && p["line"] == line
                && p["message"]
                    .as_str()
                    .unwrap()
                    .contains("nests more than 64")),
            "{file}: {s:#}"
        );
    }
    o.still_up().await;
    let e = o
        .err("ontology_read", json!({"iri": "ai:DeepClass"}), "NOT_FOUND")
        .await;
    assert!(e["message"].is_string());
    // The page fixed, the next sync reads it.
    o.repo.write(
        "pages/Deep Class.md",
        &page.replace(&"(".repeat(N), "").replace(&")".repeat(N), ""),
    );
    o.repo.commit("fixed");
    o.ok("manage_ontology", json!({"operation": "sync"})).await;
    o.ok("ontology_read", json!({"iri": "ai:DeepClass"})).await;
}

/// A few hundred random and mutated documents, queries and arguments through the
/// real server: every answer is an envelope (the harness checks its shape), and the
/// server is up at the end.
async fn hundreds_of_hostile_inputs_get_envelopes(t: Transport) {
    let o = Onto::new(t, "query_timeout_ms = 500").await;
    let mut rng = fastrand::Rng::with_seed(0x4057_11E5);
    let mut next = |n: usize| rng.usize(..n.max(1));
    let export = o
        .ok(
            "manage_ontology",
            json!({"operation": "export", "inline": true, "maxTokens": 10_000_000}),
        )
        .await["ofn"]
        .as_str()
        .unwrap()
        .to_string();
    let queries = [
        "MATCH (c:OwlClass)-[:SUBCLASS_OF*1..3]->(p) RETURN c.iri, p.iri LIMIT 20",
        "MATCH (c:OwlClass) WHERE c.qualityScore > 0.5 RETURN c.preferredTerm ORDER BY c.preferredTerm",
        "MATCH (a)-[r]->(b) RETURN type(r), count(*)",
        "WITH 'abc' AS s WITH s + s AS s RETURN s",
    ];
    let specials = "()[]{}<>:,'\"`*|.-+\n ";
    let mut answers = 0;
    for round in 0..300 {
        let (tool, args) = match round % 3 {
            0 => {
                let mut chars: Vec<char> = export.chars().collect();
                let start = next(chars.len().saturating_sub(3_000));
                chars = chars[start..(start + 3_000).min(chars.len())].to_vec();
                for _ in 0..1 + next(5) {
                    let at = next(chars.len());
                    let c = specials.chars().nth(next(specials.len())).unwrap();
                    chars.insert(at, c);
                }
                let text: String = chars.into_iter().collect();
                (
                    "manage_ontology",
                    json!({"operation": "import", "ofn": text}),
                )
            }
            1 => {
                let mut q: Vec<char> = queries[next(queries.len())].chars().collect();
                for _ in 0..1 + next(3) {
                    let at = next(q.len());
                    match next(3) {
                        0 => {
                            q.remove(at);
                        }
                        1 => q.insert(at, specials.chars().nth(next(specials.len())).unwrap()),
                        _ => {
                            let c = q[at];
                            for _ in 0..next(30) {
                                q.insert(at, c);
                            }
                        }
                    }
                }
                (
                    "ontology_query",
                    json!({"cypher": q.into_iter().collect::<String>()}),
                )
            }
            _ => {
                // A JSON argument of random shape and depth where a string or an
                // object belongs.
                let mut v = json!("x");
                for _ in 0..next(60) {
                    v = if next(2) == 0 {
                        json!([v])
                    } else {
                        json!({"k": v})
                    };
                }
                let key = ["iri", "query", "axioms", "agentContext", "cypher"][next(5)];
                let tool = match key {
                    "iri" => "ontology_read",
                    "query" => "ontology_discover",
                    "axioms" => "ontology_validate",
                    "agentContext" => "ontology_propose",
                    _ => "ontology_query",
                };
                let mut args = if tool == "ontology_propose" {
                    json!({"operation": "create"})
                } else {
                    json!({})
                };
                args[key] = v;
                (tool, args)
            }
        };
        let env = o.call(tool, args).await;
        assert!(env["success"].is_boolean(), "{env}");
        answers += 1;
    }
    assert_eq!(answers, 300);
    o.still_up().await;
}

over_both_transports!(
    deep_documents_and_queries_are_refused_naming_the_parameter,
    hostile_queries_stop_at_a_named_limit,
    a_long_query_stops_at_its_deadline_and_names_it,
    documents_past_the_size_bound_are_refused_whichever_way_they_come,
    a_deep_page_is_a_sync_problem_and_the_rest_imports,
    hundreds_of_hostile_inputs_get_envelopes,
);

/// A `tools/call` whose argument nests 100,000 levels (past what serde reads) as a
/// raw line on stdin: the tool's refusal naming the argument, then the next line is
/// answered.
#[tokio::test]
async fn a_json_argument_nested_100000_deep_is_refused_naming_it_over_stdio() {
    use tokio::io::AsyncWriteExt;
    let dir = TempDir::new();
    let (mut child, mut stdin, mut lines) = crate::harness::serve_piped(&dir.path().join("raw.db"));
    let init = r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;
    let inited = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    stdin
        .write_all(format!("{init}\n{inited}\n").as_bytes())
        .await
        .unwrap();
    let hello: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(hello["id"], 0, "{hello}");
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"ontology_validate","arguments":{{"projectId":"x","axioms":{}1{}}}}}}}"#,
        "[".repeat(N),
        "]".repeat(N)
    );
    let ping = r#"{"jsonrpc":"2.0","id":8,"method":"ping"}"#;
    stdin
        .write_all(format!("{deep}\n{ping}\n").as_bytes())
        .await
        .unwrap();
    let first: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(first["id"], 7, "{first}");
    let env = &first["result"]["structuredContent"];
    assert_eq!(first["result"]["isError"], true, "{first}");
    assert_eq!(env["error"]["code"], "VALIDATION_ERROR", "{first}");
    assert_eq!(env["error"]["details"]["parameter"], "axioms", "{first}");
    let second: Value = serde_json::from_str(&lines.next_line().await.unwrap().unwrap()).unwrap();
    assert_eq!(second["id"], 8, "{second}");
    assert!(second.get("result").is_some(), "{second}");
    drop(stdin);
    let _ = child.wait().await;
}

/// The same over HTTP, as a raw POST; and through rmcp's client over both
/// transports, an argument 40 levels deep (which serde reads) is refused by the
/// tool the same way.
#[tokio::test]
async fn a_json_argument_nested_too_deep_is_refused_naming_it_over_http() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let server = HttpServer::start(&db, &[], &[], &[]).await;
    let deep = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"ontology_validate","arguments":{{"axioms":{}1{}}}}}}}"#,
        "[{\"a\":".repeat(N / 2),
        "}]".repeat(N / 2)
    );
    let resp = reqwest::Client::new()
        .post(server.mcp_url())
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(deep)
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status().as_u16(), 200);
    let v: Value = resp.json().await.unwrap();
    assert_eq!(v["id"], 7, "{v}");
    assert_eq!(
        v["result"]["structuredContent"]["error"]["details"]["parameter"], "axioms",
        "{v}"
    );
    for t in [Transport::Stdio, Transport::Http] {
        let c = Cairn::on_via(t, &db, &[]).await;
        let mut v = json!(1);
        for _ in 0..40 {
            v = json!([v]);
        }
        let e = c
            .err(
                "ontology_validate",
                json!({ "axioms": v }),
                "VALIDATION_ERROR",
            )
            .await;
        assert_eq!(e["details"]["parameter"], "axioms", "{e}");
        assert!(e["message"].as_str().unwrap().contains("41 levels"), "{e}");
        c.project("Still answering").await;
    }
}

/// The server process's CPU time (user + system), in clock ticks.
fn cpu_ticks(pid: u32) -> u64 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    tick(11) + tick(12)
}

/// More expensive queries than the server has async workers, each in its own HTTP
/// session, running until their deadline: another session's cheap calls are all
/// answered while every expensive one still runs (had the queries run on the async
/// workers, the cheap calls would wait for the first of them to end).
#[tokio::test]
async fn an_expensive_call_leaves_other_sessions_answered() {
    let repo = Repo::new();
    for (f, text) in fixture_pages() {
        repo.write(&format!("pages/{f}"), &text);
    }
    repo.commit("the fixture ontology");
    let dir = TempDir::new();
    let config = dir.path().join("config.toml");
    std::fs::write(
        &config,
        "embed_idle_ms = 600000\n[ontology]\nquery_timeout_ms = 6000\nmax_query_bindings = 1000000000\n",
    )
    .unwrap();
    let db = dir.path().join("cairn.db");
    let server = HttpServer::start(&db, &["--config", config.to_str().unwrap()], &[], &[]).await;
    let cheap = Cairn::from_client(server.client(None).await, &db);
    let project = cheap.project("Busy").await;
    cheap
        .ok(
            "manage_ontology",
            json!({"projectId": project, "operation": "attach", "repoPath": repo.root()}),
        )
        .await;
    cheap
        .ok(
            "manage_ontology",
            json!({"projectId": project, "operation": "sync"}),
        )
        .await;
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get());
    let pid = server.child.id().unwrap();
    let before = cpu_ticks(pid);
    let mut heavy = Vec::new();
    for _ in 0..workers + 1 {
        let c = Cairn::from_client(server.client(None).await, &db);
        let p = project.clone();
        heavy.push(tokio::spawn(async move {
            let e = c
                .err(
                    "ontology_query",
                    json!({"projectId": p, "cypher": "MATCH (a), (b), (c), (d), (e) RETURN count(*)"}),
                    "VALIDATION_ERROR",
                )
                .await;
            assert_eq!(e["details"]["kind"], "deadline exceeded", "{e}");
        }));
    }
    // The expensive queries are running once the server has spent a second of CPU
    // on them (they spend nothing else).
    while cpu_ticks(pid) < before + 100 {
        assert!(
            !heavy.iter().any(|h| h.is_finished()),
            "a query ended early"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    for i in 0..5 {
        cheap
            .ok(
                "ontology_query",
                json!({"projectId": project, "cypher": format!("RETURN {i} AS n")}),
            )
            .await;
        cheap
            .ok(
                "manage_ontology",
                json!({"projectId": project, "operation": "status"}),
            )
            .await;
    }
    assert!(
        heavy.iter().all(|h| !h.is_finished()),
        "the cheap calls waited for an expensive one"
    );
    for h in heavy {
        h.await.unwrap();
    }
}
