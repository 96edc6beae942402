//! The `ontology` toolset through MCP, on a real git repository holding the
//! hand-written fixture ontology (`fixtures/ontology/pages`): sync, the read tools,
//! validated queries, proposals as branches (the user's HEAD, index and working tree
//! untouched), two processes reserving term ids, the GitHub flow against a loopback
//! server that answers the REST endpoints used, merges, OFN in and out.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::code::Repo;
use crate::harness::{Cairn, TempDir};

/// The fixture's pages, by file name.
pub(crate) fn fixture_pages() -> Vec<(String, String)> {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/ontology/pages");
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                p.file_name().unwrap().to_string_lossy().into_owned(),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    v.sort();
    v
}

/// A repository with the fixture committed on `main`, a server, a project with the
/// repository attached and synced.
struct Onto {
    c: Cairn,
    repo: Repo,
    project: String,
    _dir: TempDir,
}

impl Onto {
    async fn new() -> Onto {
        Onto::with(&[], &[]).await
    }

    async fn with(extra: &[&str], env: &[(&str, &str)]) -> Onto {
        let repo = Repo::new();
        for (f, t) in fixture_pages() {
            repo.write(&format!("pages/{f}"), &t);
        }
        repo.write("README.md", "The ontology.\n");
        repo.commit("the fixture ontology");
        let dir = TempDir::new();
        let c = Cairn::on_env(&dir.path().join("cairn.db"), extra, env).await;
        let project = c.project("Ontology").await;
        c.ok(
            "manage_ontology",
            json!({"projectId": project, "operation": "attach", "repoPath": repo.root()}),
        )
        .await;
        let s = c
            .ok(
                "manage_ontology",
                json!({"projectId": project, "operation": "sync"}),
            )
            .await;
        assert_eq!(s["pages"]["added"], json!(92), "{s:#}");
        assert_eq!(s["problemCount"], json!(0), "{s:#}");
        Onto {
            c,
            repo,
            project,
            _dir: dir,
        }
    }

    async fn ok(&self, tool: &str, mut args: Value) -> Value {
        args["projectId"] = json!(self.project);
        self.c.ok(tool, args).await
    }

    async fn err(&self, tool: &str, mut args: Value, code: &str) -> Value {
        args["projectId"] = json!(self.project);
        self.c.err(tool, args, code).await
    }

    async fn sync(&self) -> Value {
        self.ok("manage_ontology", json!({"operation": "sync"}))
            .await
    }

    /// A query's rows as `a | b` lines (nodes by IRI).
    async fn rows(&self, q: &str) -> Vec<String> {
        let d = self.ok("ontology_query", json!({ "cypher": q })).await;
        rows_of(&d)
    }
}

fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(m) if m.contains_key("iri") => m["iri"].as_str().unwrap_or("").to_string(),
        Value::Array(a) => format!("[{}]", a.iter().map(cell).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

fn rows_of(d: &Value) -> Vec<String> {
    d["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(cell)
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect()
}

fn agent() -> Value {
    json!({"agentType": "coder", "agentId": "agent-7", "taskDescription": "The task needs a class for Swin.", "confidence": 0.8})
}

pub(crate) fn swin() -> Value {
    json!({
        "operation": "create",
        "agentContext": agent(),
        "preferredTerm": "Swin Transformer",
        "definition": "A hierarchical vision transformer that computes self-attention within shifted windows.",
        "domain": "ai",
        "physicality": "VirtualEntity",
        "role": "Artifact",
        "isSubclassOf": ["Vision Transformer"],
        "relationships": {"has-part": ["ai:SelfAttention"]},
        "altTerms": ["Swin"],
    })
}

/// (query, expected rows) over the fixture, each checked against its pages by hand.
const QUERIES: &[(&str, &[&str])] = &[
    ("MATCH (n:OwlClass) RETURN count(*)", &["79"]),
    ("MATCH (n:Individual) RETURN count(n)", &["6"]),
    (
        "MATCH (p:ObjectProperty) RETURN p.iri ORDER BY p.iri",
        &["ai:processes", "core:bridgesTo", "core:enables", "core:hasPart", "core:relatesTo", "core:requires", "mv:represents"],
    ),
    ("MATCH (n:OwlClass {domain: 'bc'}) RETURN count(n)", &["25"]),
    (
        "MATCH (n:`ai:Transformer`) RETURN n.iri ORDER BY n.iri",
        &["ai:GPT4", "ai:LargeLanguageModel", "ai:Transformer", "ai:ViTB16", "ai:VisionLanguageModel", "ai:VisionTransformer"],
    ),
    ("MATCH (n:OwlClass:Transformer) RETURN count(n)", &["4"]),
    ("MATCH (c {iri: 'bc:Blockchain'}) RETURN c.preferredTerm, c.termId", &["Blockchain | BC-0002"]),
    (
        "MATCH ({iri: 'ai:Transformer'})-[:HAS_PART]->(p) RETURN p.iri ORDER BY p.iri",
        &["ai:FeedForwardNetwork", "ai:MultiHeadAttention", "ai:PositionalEncoding"],
    ),
    (
        "MATCH (a)-[:BRIDGES_TO]->(b) RETURN a.iri, b.iri ORDER BY a.iri",
        &["mv:Metaverse | bc:Blockchain", "mv:VirtualLand | bc:NonFungibleToken"],
    ),
    (
        "MATCH ({iri: 'bc:SmartContract'})-[r]->(b) RETURN type(r), b.iri ORDER BY type(r), b.iri",
        &["ENABLES | bc:DecentralizedApplication", "REQUIRES | bc:Blockchain", "SUBCLASS_OF | mv:SoftwareApplication"],
    ),
    (
        "MATCH ({iri: 'ai:LargeLanguageModel'})-[:SUBCLASS_OF*]->(a) RETURN DISTINCT a.iri ORDER BY a.iri",
        &["ai:AcceleratedModel", "ai:LanguageModel", "ai:MachineLearningModel", "ai:NeuralNetwork", "ai:Transformer", "mv:VirtualEntity"],
    ),
    ("MATCH ({iri: 'bc:ProofOfWork'})-[:SUBCLASS_OF*2]->(a) RETURN a.iri", &["bc:Protocol"]),
    (
        "MATCH (s)-[:SUBCLASS_OF]->({iri: 'bc:ConsensusProtocol'}) RETURN s.iri ORDER BY s.iri",
        &["bc:ByzantineFaultTolerance", "bc:ProofOfStake", "bc:ProofOfWork"],
    ),
    (
        "MATCH ({iri: 'ai:Transformer'})-[r:SUBCLASS_OF]->(p) RETURN p.iri, r.inferred ORDER BY p.iri",
        &["ai:AcceleratedModel | true", "ai:NeuralNetwork | false"],
    ),
    (
        "MATCH (i:Individual)-[r:INSTANCE_OF]->(c) RETURN i.iri, c.iri, r.inferred ORDER BY i.iri",
        &[
            "ai:GPT4 | ai:LargeLanguageModel | false",
            "ai:ViTB16 | ai:VisionTransformer | false",
            "bc:BitcoinNetwork | bc:ProofOfWorkBlockchain | true",
            "bc:EthereumMainnet | bc:Blockchain | false",
            "mv:AssemblyLineHall1 | mv:PhysicalAsset | false",
            "mv:FactoryTwin01 | mv:DigitalTwin | false",
        ],
    ),
    ("MATCH (w:Individual)-[:REPRESENTS]->(x) RETURN w.iri, x.iri", &["mv:FactoryTwin01 | mv:AssemblyLineHall1"]),
    (
        "MATCH (a)-[:REQUIRES]->(b)-[:REQUIRES]->(c) RETURN a.iri, c.iri ORDER BY a.iri, c.iri",
        // Proof-of-Work Blockchain's definition (Blockchain and requires some Proof of
        // Work) is served as an edge too.
        &[
            "bc:ProofOfWorkBlockchain | bc:HashFunction",
            "bc:Token | bc:Blockchain",
            "bc:Transaction | bc:HashFunction",
            "bc:Wallet | bc:HashFunction",
        ],
    ),
    (
        "MATCH (c:OwlClass) WHERE c.preferredTerm STARTS WITH 'Proof' RETURN c.iri ORDER BY c.iri",
        &["bc:ProofOfStake", "bc:ProofOfWork", "bc:ProofOfWorkBlockchain"],
    ),
    (
        "MATCH (c:OwlClass) WHERE c.preferredTerm CONTAINS 'Token' RETURN c.preferredTerm ORDER BY c.preferredTerm",
        &["Fungible Token", "Non-Fungible Token", "Token"],
    ),
    ("MATCH (c:OwlClass) WHERE 'ViT' IN c.altTerms RETURN c.iri", &["ai:VisionTransformer"]),
    ("MATCH (c:OwlClass) RETURN c.domain AS d, count(*) AS n ORDER BY d", &["ai | 30", "bc | 25", "mv | 24"]),
    ("MATCH (c:OwlClass) WHERE c.termId = 'MV-0009' RETURN c.iri", &["mv:DigitalTwin"]),
    (
        "MATCH (c:`mv:PhysicalEntity`:OwlClass) RETURN c.iri ORDER BY c.iri",
        &["ai:GPUAccelerator", "mv:DisplayPanel", "mv:HeadMountedDisplay", "mv:PhysicalAsset", "mv:PhysicalEntity", "mv:Sensor", "mv:XRDevice"],
    ),
    (
        "MATCH ({iri: 'ai:MachineLearningModel'})<-[:SUBCLASS_OF]-(s) RETURN s.iri ORDER BY s.iri",
        &["ai:AcceleratedModel", "ai:GenerativeModel", "ai:LanguageModel", "ai:NeuralNetwork", "ai:VisionModel"],
    ),
    (
        "MATCH (c:OwlClass) WHERE c.iri IN ['ai:Transformer', 'bc:Block'] RETURN c.preferredTerm ORDER BY c.preferredTerm",
        &["Block", "Transformer"],
    ),
    (
        "MATCH (a {iri: 'bc:Blockchain'})-[:HAS_PART*2..]->(b) RETURN b.iri ORDER BY b.iri",
        &["bc:BlockHeader", "bc:MerkleTree", "bc:Transaction"],
    ),
    ("MATCH (c:OwlClass) WITH c.domain AS d, count(*) AS n WHERE n > 24 RETURN d ORDER BY d", &["ai", "bc"]),
    ("UNWIND ['ai:Transformer', 'bc:Token'] AS i MATCH (c {iri: i}) RETURN c.termId", &["AI-0008", "BC-0021"]),
    ("MATCH (c:OwlClass) RETURN c.iri ORDER BY c.iri SKIP 2 LIMIT 2", &["ai:AttentionMechanism", "ai:Backpropagation"]),
    ("OPTIONAL MATCH (c {iri: 'zz:None'}) RETURN c", &["null"]),
    (
        "MATCH (p)-[:SUB_PROPERTY_OF]->(q) RETURN p.iri, q.iri ORDER BY p.iri",
        &["core:bridgesTo | core:relatesTo", "core:enables | core:relatesTo"],
    ),
    ("MATCH (c:OwlClass) WHERE c.unsatisfiable RETURN count(c)", &["0"]),
    (
        "MATCH (c:ai:VisionTransformer) RETURN c.preferredTerm ORDER BY c.preferredTerm",
        &["ViT-B/16", "Vision Transformer"],
    ),
    ("MATCH (c:OwlClass:VisionTransformer) RETURN c.termId", &["AI-0023"]),
    ("MATCH ({iri: 'ai:Transformer'})-[:hasPart]->(p) RETURN count(p)", &["3"]),
    ("MATCH ({iri: 'mv:Metaverse'})-[:`core:bridgesTo`]->(b) RETURN b.iri", &["bc:Blockchain"]),
    (
        "MATCH (c:OwlClass)-[:REQUIRES]->(g {iri: 'ai:GPUAccelerator'}) RETURN collect(c.iri)",
        &["[ai:AcceleratedModel, ai:AttentionMechanism]"],
    ),
];

#[tokio::test]
async fn queries_answer_their_rows_over_the_fixture() {
    let o = Onto::new().await;
    assert!(QUERIES.len() >= 30);
    for (q, want) in QUERIES {
        let got = o.rows(q).await;
        assert_eq!(got, *want, "{q}");
    }
    // Nodes and relationships come back as compact objects.
    let d = o.ok("ontology_query", json!({"cypher": "MATCH (a {iri: 'bc:Block'})-[r:HAS_PART]->(b) RETURN a, r, b ORDER BY b.iri LIMIT 1"})).await;
    assert_eq!(d["columns"], json!(["a", "r", "b"]));
    assert_eq!(
        d["rows"][0][0],
        json!({"iri": "bc:Block", "preferredTerm": "Block", "kind": "class"})
    );
    assert_eq!(
        d["rows"][0][1],
        json!({"type": "HAS_PART", "from": "bc:Block", "to": "bc:BlockHeader", "inferred": false})
    );
    o.c.stop().await;
}

#[tokio::test]
async fn misspellings_are_repaired_or_answered_with_the_nearest_names() {
    let o = Onto::new().await;
    // (query, expected rows after repair, (written, read as)).
    let repaired: &[(&str, &[&str], (&str, &str))] = &[
        (
            "MATCH (c:OwlClass:Transfomer) RETURN count(c)",
            &["4"],
            ("Transfomer", "ai:Transformer"),
        ),
        (
            "MATCH (c:owlclass) RETURN count(c)",
            &["79"],
            ("owlclass", "OwlClass"),
        ),
        (
            "MATCH ({iri: 'ai:Transformer'})-[:HAS_PRT]->(p) RETURN count(p)",
            &["3"],
            ("HAS_PRT", "HAS_PART"),
        ),
        (
            "MATCH ({iri: 'ai:Transformer'})-[:has_part]->(p) RETURN count(p)",
            &["3"],
            ("has_part", "HAS_PART"),
        ),
        (
            "MATCH (c {iri: 'bc:Block'}) RETURN c.preferedTerm",
            &["Block"],
            ("preferedTerm", "preferredTerm"),
        ),
        (
            "MATCH (c {iri: 'bc:Block'}) RETURN c.termID",
            &["BC-0004"],
            ("termID", "termId"),
        ),
        (
            "MATCH (c:OwlClass:Blokchain) RETURN count(c)",
            &["2"],
            ("Blokchain", "bc:Blockchain"),
        ),
        (
            "MATCH ({iri: 'bc:ProofOfWork'})-[:SUBCLASSOF]->(p) RETURN p.iri",
            &["bc:ConsensusProtocol"],
            ("SUBCLASSOF", "SUBCLASS_OF"),
        ),
        (
            "MATCH (i:Individul) RETURN count(i)",
            &["6"],
            ("Individul", "Individual"),
        ),
        (
            "MATCH (c:ProofOfStak) RETURN c.iri",
            &["bc:ProofOfStake"],
            ("ProofOfStak", "bc:ProofOfStake"),
        ),
        (
            "MATCH (c:OwlClass {iri: 'ai:Algorithm'}) RETURN c.qualitySCore",
            &["0.85"],
            ("qualitySCore", "qualityScore"),
        ),
    ];
    for (q, want, (from, to)) in repaired {
        let d = o.ok("ontology_query", json!({ "cypher": q })).await;
        assert_eq!(rows_of(&d), *want, "{q}");
        let r = &d["repairs"][0];
        assert_eq!(
            (r["from"].as_str().unwrap(), r["to"].as_str().unwrap()),
            (*from, *to),
            "{q}: {d:#}"
        );
        assert!(r["position"]["column"].as_u64().unwrap() > 1, "{q}");
        assert_ne!(d["query"], json!(q), "the query as run is reported");
    }
    // A name with no clear meaning: refused with where it is and the nearest names.
    let e = o
        .err(
            "ontology_query",
            json!({"cypher": "MATCH (c:Zzyzx) RETURN c"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], json!("cypher"));
    assert_eq!(e["details"]["kind"], json!("unknown name"));
    assert_eq!(
        e["details"]["position"],
        json!({"line": 1, "column": 10, "offset": 9})
    );
    assert_eq!(e["details"]["unknownNames"][0]["name"], json!("Zzyzx"));
    let e = o
        .err(
            "ontology_query",
            json!({"cypher": "MATCH (c)-[:HAS_PART]->(d)\nWHERE d:Proof RETURN d.iri"}),
            "VALIDATION_ERROR",
        )
        .await;
    let nearest = &e["details"]["unknownNames"][0]["nearest"];
    assert!(
        nearest
            .as_array()
            .unwrap()
            .contains(&json!("bc:ProofOfWork")),
        "{e:#}"
    );
    assert!(
        nearest
            .as_array()
            .unwrap()
            .contains(&json!("bc:ProofOfStake")),
        "two are as near: none is chosen"
    );
    assert_eq!(e["details"]["position"]["line"], json!(2));
    o.c.stop().await;

    // Without repairs (max_query_repair = 0), a misspelling is a hint.
    let dir = TempDir::new();
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        "[ontology]\nmax_query_repair = 0\nmax_query_rows = 5\n",
    )
    .unwrap();
    let o = Onto::with(&["--config", cfg.to_str().unwrap()], &[]).await;
    // Rows are bounded (the answer says it was cut), and so is the work.
    let d = o
        .ok(
            "ontology_query",
            json!({"cypher": "MATCH (c:OwlClass) RETURN c.iri ORDER BY c.iri"}),
        )
        .await;
    assert_eq!(
        (d["rowCount"].clone(), d["truncated"].clone()),
        (json!(5), json!(true))
    );
    assert_eq!(d["rows"][0][0], json!("ai:AcceleratedModel"));
    let e = o
        .err(
            "ontology_query",
            json!({"cypher": "MATCH (a), (b), (c), (d) RETURN count(*)"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["kind"], json!("too many bindings"), "{e:#}");
    let e = o
        .err(
            "ontology_query",
            json!({"cypher": "MATCH (c:Transfomer) RETURN c"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(
        e["details"]["unknownNames"][0]["nearest"][0],
        json!("ai:Transformer"),
        "{e:#}"
    );
    assert!(
        e["message"].as_str().unwrap().contains("line 1, column 10"),
        "{e:#}"
    );
    o.c.stop().await;
}

#[tokio::test]
async fn writing_clauses_and_garbage_are_refused_without_harm() {
    let o = Onto::new().await;
    for q in [
        "CREATE (n:OwlClass {iri: 'ai:X'})",
        "MERGE (n:OwlClass {iri: 'ai:X'}) RETURN n",
        "MATCH (n:OwlClass) SET n.status = 'approved'",
        "MATCH (n:OwlClass) DELETE n",
        "MATCH (n:OwlClass) DETACH DELETE n",
        "MATCH (n:OwlClass) REMOVE n.status",
        "CALL db.labels()",
        "LOAD CSV FROM 'file:///x.csv' AS row RETURN row",
        "FOREACH (x IN [1, 2] | CREATE (:T {v: x}))",
        "INSERT (n:OwlClass)",
    ] {
        let e = o
            .err("ontology_query", json!({ "cypher": q }), "VALIDATION_ERROR")
            .await;
        assert_eq!(e["details"]["kind"], json!("read-only"), "{q}: {e:#}");
        assert!(e["details"]["position"]["line"].is_u64(), "{q}");
    }
    // Bytes that are no query, and a query over the 1 KB bound.
    let mut seed: u64 = 0x9E37_79B9_7F4A_7C15;
    for _ in 0..25 {
        let text: String = (0..40)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                char::from_u32((seed % 0x2FF) as u32 + 1).unwrap_or('?')
            })
            .collect();
        let env =
            o.c.call(
                "ontology_query",
                json!({"projectId": o.project, "cypher": text}),
            )
            .await;
        assert_eq!(
            env["error"]["code"],
            json!("VALIDATION_ERROR"),
            "{text:?}: {env:#}"
        );
    }
    let long = format!("MATCH (n) WHERE n.iri = '{}' RETURN n", "x".repeat(1100));
    let e = o
        .err(
            "ontology_query",
            json!({ "cypher": long }),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], json!("cypher"));
    // The server still answers.
    assert_eq!(o.rows("MATCH (n:OwlClass) RETURN count(n)").await, ["79"]);
    o.c.stop().await;
}

#[tokio::test]
async fn discover_read_and_traverse_serve_the_reasoners_view() {
    let o = Onto::new().await;
    let d = o
        .ok(
            "ontology_discover",
            json!({"query": "accelerated model", "limit": 40}),
        )
        .await;
    let results = d["results"].as_array().unwrap();
    assert_eq!(results[0]["iri"], json!("ai:AcceleratedModel"));
    assert_eq!(results[0]["matchedBy"], json!("keyword"));
    assert_eq!(
        d["semantic"],
        Value::Null,
        "the words name a class: no need for the model"
    );
    let gpu = results
        .iter()
        .find(|r| r["iri"] == json!("ai:GPUAccelerator"))
        .expect("requires some GPU Accelerator");
    assert_eq!(gpu["matchedBy"], json!("relationship"));
    for r in results {
        let s = r["relevanceScore"].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&s));
    }
    let scores: Vec<f64> = results
        .iter()
        .map(|r| r["relevanceScore"].as_f64().unwrap())
        .collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "{scores:?}");
    // Image Classifier is a Vision Model only by inference (the domain of `processes`
    // and the definition of Vision Model): above it, only the reasoner leads.
    let d = o
        .ok("ontology_discover", json!({"query": "image classifier"}))
        .await;
    let get = |iri: &str| {
        d["results"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["iri"] == json!(iri))
            .cloned()
            .unwrap_or(Value::Null)
    };
    assert_eq!(d["results"][0]["iri"], json!("ai:ImageClassifier"));
    assert_eq!(get("ai:ImageClassifier")["whelkInferred"], json!(false));
    assert_eq!(
        (
            get("ai:VisionModel")["whelkInferred"].clone(),
            get("ai:VisionModel")["matchedBy"].clone()
        ),
        (json!(true), json!("hierarchy"))
    );
    assert_eq!(get("ai:MachineLearningModel")["whelkInferred"], json!(true));
    assert_eq!(
        get("mv:VirtualEntity")["whelkInferred"],
        json!(false),
        "Image Data's asserted parents lead there too"
    );
    // Domain filter and limit.
    let d = o
        .ok(
            "ontology_discover",
            json!({"query": "token", "domain": "bc", "limit": 3}),
        )
        .await;
    assert_eq!(d["count"], json!(3));
    assert!(d["results"]
        .as_array()
        .unwrap()
        .iter()
        .all(|r| r["domain"] == json!("bc")));
    assert_eq!(d["results"][0]["iri"], json!("bc:Token"));
    // The default limit is the setting's.
    let d = o.ok("ontology_discover", json!({"query": "model"})).await;
    assert_eq!(d["count"], json!(20));

    let n = o.ok("ontology_read", json!({"iri": "Transformer"})).await;
    assert_eq!(n["iri"], json!("ai:Transformer"));
    assert_eq!(n["termId"], json!("AI-0008"));
    assert!(
        n["markdownContent"]
            .as_str()
            .unwrap()
            .contains("## Why it matters"),
        "the page in full"
    );
    assert_eq!(
        n["ontologyMetadata"]["parentClasses"],
        json!(["ai:AcceleratedModel", "ai:NeuralNetwork"])
    );
    let inferred = n["axioms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["object"] == json!("ai:AcceleratedModel"))
        .unwrap();
    assert_eq!(inferred["isInferred"], json!(true));
    let why: Vec<&str> = inferred["explanation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["axiom"].as_str().unwrap())
        .collect();
    assert!(
        why.contains(
            &"SubObjectPropertyOf(ObjectPropertyChain(core:hasPart core:requires) core:requires)"
        ),
        "{why:?}"
    );
    let asserted = n["axioms"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["object"] == json!("ai:NeuralNetwork"))
        .unwrap();
    assert_eq!(
        (asserted["isInferred"].clone(), asserted["page"].clone()),
        (json!(false), json!("pages/Transformer.md"))
    );
    let rel = n["relatedNotes"].as_array().unwrap();
    assert!(
        rel.iter()
            .any(|r| r["iri"] == json!("ai:LargeLanguageModel")
                && r["direction"] == json!("incoming"))
    );
    assert!(
        rel.iter()
            .any(|r| r["relationshipType"] == json!("HAS_PART")
                && r["direction"] == json!("outgoing"))
    );
    assert!(n["schemaContext"].as_str().unwrap().contains("HAS_PART"));
    assert!(n["quality"]["tierCoverage"].is_string());
    // Unknown names are NOT_FOUND with the nearest ones.
    let e = o
        .err(
            "ontology_read",
            json!({"iri": "ai:Transfomer"}),
            "NOT_FOUND",
        )
        .await;
    assert!(
        e["details"]["nearest"]
            .as_array()
            .unwrap()
            .contains(&json!("ai:Transformer")),
        "{e:#}"
    );

    let t = o
        .ok("ontology_traverse", json!({"startIri": "bc:Blockchain", "depth": 2, "relationshipTypes": ["HAS_PART"], "direction": "outgoing"}))
        .await;
    let mut nodes: Vec<(String, u64)> = t["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| {
            (
                n["iri"].as_str().unwrap().to_string(),
                n["depth"].as_u64().unwrap(),
            )
        })
        .collect();
    nodes.sort();
    assert_eq!(
        nodes,
        [
            ("bc:Block".into(), 1),
            ("bc:BlockHeader".into(), 2),
            ("bc:Blockchain".into(), 0),
            ("bc:Transaction".into(), 2)
        ]
    );
    assert_eq!(t["edges"].as_array().unwrap().len(), 3);
    let t = o
        .ok(
            "ontology_traverse",
            json!({"startIri": "bc:Blockchain", "relationshipTypes": "has_prt"}),
        )
        .await;
    assert!(
        t["notes"][0].as_str().unwrap().contains("HAS_PART"),
        "{t:#}"
    );
    let e = o
        .err(
            "ontology_traverse",
            json!({"startIri": "bc:Blockchain", "depth": 6}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], json!("depth"));
    let e = o
        .err(
            "ontology_traverse",
            json!({"startIri": "bc:Blockchain", "relationshipTypes": ["OWNS_A_YACHT"]}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(
        e["details"]["unknownNames"][0]["name"],
        json!("OWNS_A_YACHT")
    );
    o.c.stop().await;
}

#[tokio::test]
async fn validate_checks_hypothetical_axioms_and_changes_nothing() {
    let o = Onto::new().await;
    let v = o
        .ok("ontology_validate", json!({"axioms": [{"axiomType": "SubClassOf", "subject": "mv:DigitalTwin", "object": "Physical Asset"}]}))
        .await;
    assert_eq!(v["consistent"], json!(false));
    assert_eq!(v["clash"]["unsatisfiable"], json!(["mv:DigitalTwin"]));
    let why: Vec<&str> = v["clash"]["explanation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["axiom"].as_str().unwrap())
        .collect();
    assert_eq!(why.len(), 6, "{why:?}");
    assert!(why.contains(&"DisjointClasses(mv:VirtualEntity mv:PhysicalEntity)"));
    assert!(why.contains(&"SubClassOf(mv:DigitalTwin mv:PhysicalAsset)"));
    // A new class under a defined one: what it would gain, explained.
    let v = o
        .ok(
            "ontology_validate",
            json!({"axioms": [
                {"axiomType": "SubClassOf", "subject": "ai:SatelliteImageModel", "object": "ai:NeuralNetwork"},
                {"axiomType": "SubClassOf", "subject": "ai:SatelliteImageModel", "object": "ai:processes some ai:ImageData"},
            ]}),
        )
        .await;
    assert_eq!(v["consistent"], json!(true));
    let gained: Vec<(String, String)> = v["gained"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["sub"].as_str().unwrap().into(),
                g["sup"].as_str().unwrap().into(),
            )
        })
        .collect();
    assert!(
        gained.contains(&("ai:SatelliteImageModel".into(), "ai:VisionModel".into())),
        "{gained:?}"
    );
    // The inferred direct parent is explained, the hypothesis's axioms cited by their
    // place in the call.
    let explained = v["explained"].as_array().unwrap();
    assert_eq!(explained.len(), 1, "{v:#}");
    assert_eq!(explained[0]["sup"], json!("ai:VisionModel"));
    let why: Vec<(&str, &str)> = explained[0]["explanation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| (x["axiom"].as_str().unwrap(), x["page"].as_str().unwrap()))
        .collect();
    assert!(
        why.iter()
            .any(|(a, _)| a.starts_with("EquivalentClasses(ai:VisionModel")),
        "{why:?}"
    );
    assert!(why.iter().any(|(_, p)| *p == "axioms[1]"), "{why:?}");
    let e = o
        .err("ontology_validate", json!({"axioms": [{"axiomType": "SubClassOf", "subject": "ai:X", "object": "[[No Such Page]]"}]}), "VALIDATION_ERROR")
        .await;
    assert!(
        e["details"]["problems"][0]["message"]
            .as_str()
            .unwrap()
            .contains("names no page"),
        "{e:#}"
    );
    let e = o
        .err(
            "ontology_validate",
            json!({"axioms": [{"axiomType": "Owns", "subject": "ai:X", "object": "ai:Y"}]}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], json!("axioms[0].axiomType"));
    // Nothing changed.
    assert_eq!(
        o.rows("MATCH (c:OwlClass) WHERE c.unsatisfiable RETURN count(c)")
            .await,
        ["0"]
    );
    o.c.stop().await;
}

#[tokio::test]
async fn sync_reads_the_branch_incrementally_and_reports_broken_pages() {
    let o = Onto::new().await;
    // Nothing changed: nothing rewritten.
    let s = o.sync().await;
    assert_eq!(
        s["pages"],
        json!({"added": 0, "changed": 0, "removed": 0, "unchanged": 92})
    );
    assert_eq!(s["entities"]["unchanged"], json!(92));
    assert_eq!(s["axiomPagesRewritten"], json!(0));
    // A commit that edits a page, adds one, removes one, adds a broken page and a
    // plain Logseq page.
    let r = &o.repo;
    let t = r.read("pages/Transformer.md").replace(
        "instead of recurrence",
        "instead of recurrence or convolution",
    );
    r.write("pages/Transformer.md", &t);
    r.write(
        "pages/Capsule Network.md",
        "- Capsule Network\n  - ### OntologyBlock\n    - ontology:: true\n    - term-id:: AI-0040\n    - preferred-term:: Capsule Network\n    - source-domain:: ai\n    - last-updated:: 2026-02-11\n    - definition:: A network of capsules.\n    - owl:class:: ai:CapsuleNetwork\n    - is-subclass-of:: [[Neural Network]]\n    - quality-score:: 0.9\n    - authority-score:: 0.8\n",
    );
    r.git(&["rm", "-q", "pages/Virtual Land.md"]);
    r.write(
        "pages/Broken.md",
        "- Broken\n  - ### OntologyBlock\n    - owl:class:: not an iri\n",
    );
    r.write("pages/Journal.md", "- just notes\n");
    r.commit("edit, add, remove");
    // Uncommitted edits are not read: only the branch is.
    r.write(
        "pages/Block.md",
        &r.read("pages/Block.md")
            .replace("definition::", "definition:: UNCOMMITTED"),
    );
    r.write(
        "pages/Draft.md",
        "- Draft\n  - ### OntologyBlock\n    - owl:class:: ai:Draft\n",
    );
    let s = o.sync().await;
    assert_eq!(
        s["pages"],
        json!({"added": 3, "changed": 1, "removed": 1, "unchanged": 90}),
        "{s:#}"
    );
    assert_eq!(s["entities"]["added"], json!(1));
    assert_eq!(s["entities"]["changed"], json!(1));
    assert_eq!(s["entities"]["removed"], json!(1));
    assert_eq!(s["plainPages"], json!(1));
    let problems = s["problems"].as_array().unwrap();
    assert_eq!(problems.len(), 1, "{s:#}");
    assert_eq!(
        (problems[0]["file"].clone(), problems[0]["line"].clone()),
        (json!("pages/Broken.md"), json!(3))
    );
    // Virtual Land (which bridged to NFTs) is gone with its page.
    assert_eq!(
        o.rows("MATCH (a)-[:BRIDGES_TO]->(b) RETURN count(*)").await,
        ["1"]
    );
    o.err(
        "ontology_read",
        json!({"iri": "mv:VirtualLand"}),
        "NOT_FOUND",
    )
    .await;
    let d = o
        .ok("ontology_discover", json!({"query": "capsule network"}))
        .await;
    assert_eq!(d["results"][0]["iri"], json!("ai:CapsuleNetwork"));
    let n = o.ok("ontology_read", json!({"iri": "bc:Block"})).await;
    assert!(!n["markdownContent"]
        .as_str()
        .unwrap()
        .contains("UNCOMMITTED"));
    o.err("ontology_read", json!({"iri": "ai:Draft"}), "NOT_FOUND")
        .await;
    let st = o
        .ok("manage_ontology", json!({"operation": "status"}))
        .await;
    assert_eq!(st["behind"], json!(false));
    assert_eq!(st["problemCount"], json!(1));
    assert_eq!(st["entities"]["class"], json!(79));
    // The next commit moves the head: status says a sync is due.
    r.commit("uncommitted edits committed");
    let st = o
        .ok("manage_ontology", json!({"operation": "status"}))
        .await;
    assert_eq!(st["behind"], json!(true));
    o.c.stop().await;
}

#[tokio::test]
async fn a_sync_by_another_process_is_seen_on_the_next_call() {
    let o = Onto::new().await;
    let b = Cairn::on(&o.c.db, &[]).await;
    assert_eq!(o.rows("MATCH (c:OwlClass) RETURN count(c)").await, ["79"]);
    o.repo.write(
        "pages/Capsule Network.md",
        "- Capsule Network\n  - ### OntologyBlock\n    - owl:class:: ai:CapsuleNetwork\n    - is-subclass-of:: [[Neural Network]]\n",
    );
    o.repo.commit("a class");
    b.ok(
        "manage_ontology",
        json!({"projectId": o.project, "operation": "sync"}),
    )
    .await;
    assert_eq!(
        o.rows("MATCH (c:OwlClass) RETURN count(c)").await,
        ["80"],
        "the cached index was checked, not trusted"
    );
    b.stop().await;
    o.c.stop().await;
}

/// The repository's state the user owns: HEAD, the branch it names, the index, the
/// working tree's status and the contents of its files.
fn user_state(r: &Repo) -> (String, String, String, String, String) {
    (
        r.git(&["rev-parse", "HEAD"]),
        r.git(&["symbolic-ref", "HEAD"]),
        r.git(&["ls-files", "-s"]),
        r.git(&["status", "--porcelain=v1", "-uall"]),
        r.read("pages/Transformer.md") + &r.read("scratch.txt"),
    )
}

#[tokio::test]
async fn a_proposal_is_one_commit_on_its_own_branch_and_leaves_the_user_alone() {
    let o = Onto::new().await;
    let r = &o.repo;
    // A user in the middle of work: a staged change, an unstaged one, an untracked file.
    r.write("README.md", "The ontology, staged.\n");
    r.git(&["add", "README.md"]);
    r.write(
        "pages/Transformer.md",
        &(r.read("pages/Transformer.md") + "- unstaged note\n"),
    );
    r.write("scratch.txt", "untracked\n");
    let before = user_state(r);
    let main = r.git(&["rev-parse", "main"]).trim().to_string();
    let p = o.ok("ontology_propose", swin()).await;
    assert_eq!(
        user_state(r),
        before,
        "HEAD, index and working tree untouched"
    );
    assert_eq!(p["state"], json!("staged"));
    assert_eq!(
        p["termId"],
        json!("AI-0031"),
        "one past the highest AI term id"
    );
    let branch = p["branch"].as_str().unwrap().to_string();
    let id = p["proposalId"].as_str().unwrap();
    assert_eq!(branch, format!("ontology/coder-{id}"));
    assert_eq!(
        r.git(&["rev-list", "--count", &format!("main..{branch}")])
            .trim(),
        "1"
    );
    assert_eq!(r.git(&["rev-parse", &format!("{branch}^")]).trim(), main);
    assert_eq!(
        r.git(&["diff", "--name-only", "main", &branch]).trim(),
        "pages/Swin Transformer.md"
    );
    let page = r.git(&["show", &format!("{branch}:pages/Swin Transformer.md")]);
    assert_eq!(page, p["markdown"].as_str().unwrap());
    assert!(
        page.contains("    - term-id:: AI-0031\n")
            && page.contains("    - is-subclass-of:: [[Vision Transformer]]\n"),
        "{page}"
    );
    assert!(
        page.contains("    - has-part:: [[Self-Attention]]\n")
            && page.contains("    - status:: agent-proposed\n")
    );
    assert!(p["diff"]
        .as_str()
        .unwrap()
        .contains("+++ b/pages/Swin Transformer.md"));
    assert_eq!(p["consistency"]["consistent"], json!(true));
    assert!(p["consistency"]["gained"]
        .as_array()
        .unwrap()
        .contains(&json!({"sub": "ai:SwinTransformer", "sup": "ai:AcceleratedModel"})));
    assert_eq!(p["quality"]["tierCoverage"], json!("10/10 · 5/5 · 0/4"));
    // Not in the ontology until a human merges it.
    o.err(
        "ontology_read",
        json!({"iri": "ai:SwinTransformer"}),
        "NOT_FOUND",
    )
    .await;
    let list = o
        .ok(
            "manage_ontology",
            json!({"operation": "proposals", "state": "staged"}),
        )
        .await;
    assert_eq!(list["total"], json!(1));
    // A second proposal, whose branch the reviewer deletes.
    let mut other = swin();
    other["preferredTerm"] = json!("Perceiver");
    other["definition"] =
        json!("A transformer that attends from a small latent array to large inputs.");
    other["isSubclassOf"] = json!(["ai:Transformer"]);
    let q = o.ok("ontology_propose", other).await;
    assert_eq!(q["termId"], json!("AI-0032"));
    // The human merges the first and deletes the second.
    r.git(&["reset", "-q", "--hard"]);
    r.git(&["clean", "-q", "-fd"]);
    r.git(&[
        "merge",
        "-q",
        "--no-ff",
        "-m",
        "Merge the Swin proposal",
        &branch,
    ]);
    r.git(&["branch", "-q", "-D", q["branch"].as_str().unwrap()]);
    let s = o.sync().await;
    let decided: HashMap<String, String> = s["proposals"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| {
            (
                x["proposalId"].as_str().unwrap().to_string(),
                x["state"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(decided.get(id).map(String::as_str), Some("merged"));
    assert_eq!(
        decided
            .get(q["proposalId"].as_str().unwrap())
            .map(String::as_str),
        Some("rejected")
    );
    let d = o.ok("ontology_discover", json!({"query": "swin"})).await;
    assert_eq!(
        d["results"][0]["iri"],
        json!("ai:SwinTransformer"),
        "every agent sees the merged class"
    );
    let n = o.ok("ontology_read", json!({"iri": "AI-0031"})).await;
    assert_eq!(n["iri"], json!("ai:SwinTransformer"));
    let merged = o
        .ok(
            "manage_ontology",
            json!({"operation": "proposals", "state": "merged"}),
        )
        .await;
    assert!(merged["proposals"][0]["decidedAt"].is_string());
    // A term id is never handed out twice, even after a merge.
    let mut third = swin();
    third["preferredTerm"] = json!("Masked Autoencoder");
    third["definition"] =
        json!("A vision model pre-trained by reconstructing masked image patches.");
    let t = o.ok("ontology_propose", third).await;
    assert_eq!(t["termId"], json!("AI-0033"));
    o.c.stop().await;
}

#[tokio::test]
async fn amendments_change_only_their_lines_and_refusals_say_why() {
    let dir = TempDir::new();
    let cfg = dir.path().join("config.toml");
    std::fs::write(&cfg, "[ontology]\nmin_proposal_quality = 0.7\n").unwrap();
    let o = Onto::with(&["--config", cfg.to_str().unwrap()], &[]).await;
    let a = o
        .ok(
            "ontology_propose",
            json!({"operation": "amend", "agentContext": agent(), "targetIri": "ai:Transformer",
                   "addRelationships": {"requires": ["GPU Accelerator"]}, "removeRelationships": {"has-part": ["Positional Encoding"]},
                   "altTerms": ["Attention model"], "customFields": {"example": "BERT"}}),
        )
        .await;
    let diff = a["diff"].as_str().unwrap();
    assert!(diff.contains("-    - has-part:: [[Multi-Head Attention]], [[Feed-Forward Network]], [[Positional Encoding]]"), "{diff}");
    assert!(
        diff.contains("+    - has-part:: [[Multi-Head Attention]], [[Feed-Forward Network]]"),
        "{diff}"
    );
    assert!(
        diff.contains("+    - requires:: [[GPU Accelerator]]"),
        "{diff}"
    );
    assert!(diff.contains("+    - example:: BERT"), "{diff}");
    let md = a["markdown"].as_str().unwrap();
    assert!(
        md.contains("- ## Why it matters\n"),
        "prose outside the block is kept"
    );
    assert_eq!(a["termId"], Value::Null);
    // The planted clash: refused, explained, nothing staged.
    let e = o
        .err(
            "ontology_propose",
            json!({"operation": "amend", "agentContext": agent(), "targetIri": "Digital Twin", "addRelationships": {"is-subclass-of": ["Physical Asset"]}}),
            "INVARIANT_VIOLATION",
        )
        .await;
    assert_eq!(e["details"]["consistent"], json!(false));
    let pages: Vec<&str> = e["details"]["explanation"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["page"].as_str().unwrap())
        .collect();
    assert_eq!(pages.len(), 6, "{e:#}");
    assert!(
        pages.contains(&"pages/Virtual Entity.md") && pages.contains(&"pages/Factory Twin 01.md"),
        "{pages:?}"
    );
    assert!(e["message"]
        .as_str()
        .unwrap()
        .contains("DisjointClasses(mv:VirtualEntity mv:PhysicalEntity)"));
    // Too little: refused with what is missing.
    let e = o
        .err(
            "ontology_propose",
            json!({"operation": "create", "agentContext": agent(), "preferredTerm": "Bare Idea", "definition": "Something.", "domain": "ai"}),
            "VALIDATION_ERROR",
        )
        .await;
    let missing: Vec<&str> = e["details"]["missing"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["field"].as_str().unwrap())
        .collect();
    assert!(
        missing.contains(&"owl:physicality") && missing.contains(&"is-subclass-of"),
        "{missing:?}"
    );
    // "Something." is no definition: it counts as missing.
    assert!(
        missing
            .iter()
            .any(|m| m.starts_with("definition (at least 6 words")),
        "{missing:?}"
    );
    assert_eq!(e["details"]["qualityScore"], json!(0.54));
    assert_eq!(e["details"]["minProposalQuality"], json!(0.7));
    // Names that resolve nowhere, classes that exist, bad contexts.
    let mut bad = swin();
    bad["isSubclassOf"] = json!(["Vision Transfomer"]);
    let e = o.err("ontology_propose", bad, "VALIDATION_ERROR").await;
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("ai:VisionTransformer"),
        "the nearest name is offered: {e:#}"
    );
    let mut dup = swin();
    dup["preferredTerm"] = json!("Transformer");
    o.err("ontology_propose", dup, "INVALID_OPERATION").await;
    let mut ctx = swin();
    ctx["agentContext"] = json!({"agentType": "../x", "taskDescription": "t"});
    let e = o.err("ontology_propose", ctx, "VALIDATION_ERROR").await;
    assert_eq!(e["details"]["parameter"], json!("agentContext"));
    let mut ctx = swin();
    ctx["agentContext"] = json!({"agentType": "coder"});
    let e = o.err("ontology_propose", ctx, "VALIDATION_ERROR").await;
    assert_eq!(
        e["details"]["parameter"],
        json!("agentContext.taskDescription")
    );
    let e = o
        .err(
            "ontology_propose",
            json!({"operation": "amend", "agentContext": agent(), "targetIri": "ai:Transformer", "customFields": {"owl:class": "ai:Other"}}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], json!("customFields"));
    o.err(
        "ontology_propose",
        json!({"operation": "amend", "agentContext": agent(), "targetIri": "ai:Transformer"}),
        "INVALID_OPERATION",
    )
    .await;
    let list = o
        .ok("manage_ontology", json!({"operation": "proposals"}))
        .await;
    assert_eq!(
        list["total"],
        json!(1),
        "only the good amendment was staged"
    );
    o.c.stop().await;
}

#[tokio::test]
async fn two_processes_proposing_at_once_get_distinct_term_ids() {
    let o = Onto::new().await;
    let b = Cairn::on(&o.c.db, &[]).await;
    let mut calls = Vec::new();
    for (i, term) in [
        "Swin Transformer",
        "Perceiver",
        "Masked Autoencoder",
        "Mixture of Experts",
    ]
    .iter()
    .enumerate()
    {
        let mut p = swin();
        p["projectId"] = json!(o.project);
        p["preferredTerm"] = json!(term);
        p["definition"] = json!(format!("{term}: a transformer variant, number {i}."));
        calls.push(p);
    }
    let (r1, r2, r3, r4) = tokio::join!(
        o.c.ok("ontology_propose", calls[0].clone()),
        b.ok("ontology_propose", calls[1].clone()),
        o.c.ok("ontology_propose", calls[2].clone()),
        b.ok("ontology_propose", calls[3].clone()),
    );
    let mut ids: Vec<String> = [r1, r2, r3, r4]
        .iter()
        .map(|r| r["termId"].as_str().unwrap().to_string())
        .collect();
    ids.sort();
    assert_eq!(ids, ["AI-0031", "AI-0032", "AI-0033", "AI-0034"]);
    let branches = o.repo.git(&["branch", "--list", "ontology/*"]);
    assert_eq!(branches.lines().count(), 4, "{branches}");
    b.stop().await;
    o.c.stop().await;
}

/// A request the fake GitHub received: method, path, headers (lower-case names), body.
pub(crate) type Request = (String, String, HashMap<String, String>, String);

/// A loopback server answering the GitHub REST endpoints a proposal uses, recording
/// every request. A pull request it opens has the URL `pull_url` holds.
pub(crate) struct FakeGitHub {
    pub(crate) url: String,
    pub(crate) requests: Arc<Mutex<Vec<Request>>>,
    pub(crate) merged: Arc<Mutex<bool>>,
    pub(crate) pull_url: Arc<Mutex<String>>,
}

impl FakeGitHub {
    pub(crate) fn start() -> FakeGitHub {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(Mutex::new(Vec::new()));
        let merged = Arc::new(Mutex::new(false));
        let pull_url = Arc::new(Mutex::new(
            "https://github.com/acme/onto/pull/7".to_string(),
        ));
        let (log, state, answer_url) = (requests.clone(), merged.clone(), pull_url.clone());
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut s) = stream else { continue };
                let mut r = BufReader::new(s.try_clone().unwrap());
                let mut line = String::new();
                if r.read_line(&mut line).is_err() {
                    continue;
                }
                let mut parts = line.split_whitespace();
                let (method, path) = (
                    parts.next().unwrap_or("").to_string(),
                    parts.next().unwrap_or("").to_string(),
                );
                let mut headers = HashMap::new();
                loop {
                    let mut h = String::new();
                    if r.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                        break;
                    }
                    if let Some((k, v)) = h.split_once(':') {
                        headers.insert(k.trim().to_lowercase(), v.trim().to_string());
                    }
                }
                let len: usize = headers
                    .get("content-length")
                    .and_then(|v| v.parse().ok())
                    .unwrap_or(0);
                let mut body = vec![0u8; len];
                let _ = r.read_exact(&mut body);
                let body = String::from_utf8_lossy(&body).into_owned();
                let n = log.lock().unwrap().len();
                let (status, answer) = match (method.as_str(), path.as_str()) {
                    ("GET", "/repos/acme/onto/git/ref/heads/main") => (
                        200,
                        json!({"ref": "refs/heads/main", "object": {"sha": "b45e", "type": "commit"}}),
                    ),
                    ("GET", "/repos/acme/onto/git/commits/b45e") => {
                        (200, json!({"sha": "b45e", "tree": {"sha": "7ree"}}))
                    }
                    ("POST", "/repos/acme/onto/git/blobs") => {
                        (201, json!({"sha": format!("b10b{n}")}))
                    }
                    ("POST", "/repos/acme/onto/git/trees") => (201, json!({"sha": "7ree2"})),
                    ("POST", "/repos/acme/onto/git/commits") => (201, json!({"sha": "c0m1"})),
                    ("POST", "/repos/acme/onto/git/refs") => {
                        (201, json!({"ref": "x", "object": {"sha": "c0m1"}}))
                    }
                    ("POST", "/repos/acme/onto/pulls") => (
                        201,
                        json!({"number": 7, "html_url": *answer_url.lock().unwrap()}),
                    ),
                    ("GET", "/repos/acme/onto/pulls/7") => {
                        let m = *state.lock().unwrap();
                        (
                            200,
                            json!({"number": 7, "state": if m { "closed" } else { "open" }, "merged": m}),
                        )
                    }
                    _ => (404, json!({"message": "Not Found"})),
                };
                log.lock().unwrap().push((method, path, headers, body));
                let text = answer.to_string();
                let _ = write!(
                    s,
                    "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                    text.len()
                );
            }
        });
        FakeGitHub {
            url,
            requests,
            merged,
            pull_url,
        }
    }
}

#[tokio::test]
async fn with_github_configured_a_proposal_becomes_a_pull_request() {
    let gh = FakeGitHub::start();
    let dir = TempDir::new();
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!(
            "[ontology]\ngithub_api_url = \"{}\"\ngithub_token_env = \"CAIRN_TEST_GITHUB\"\n",
            gh.url
        ),
    )
    .unwrap();
    let token = "ghp_s3cr3t-token-never-stored";
    let o = Onto::with(
        &["--config", cfg.to_str().unwrap()],
        &[("CAIRN_TEST_GITHUB", token)],
    )
    .await;
    let v = o
        .ok("manage_ontology", json!({"operation": "status"}))
        .await["version"]
        .clone();
    o.ok(
        "manage_ontology",
        json!({"operation": "attach", "repoPath": o.repo.root(), "githubOwner": "acme", "githubName": "onto", "version": v}),
    )
    .await;
    let p = o.ok("ontology_propose", swin()).await;
    assert_eq!(p["state"], json!("pushed"), "{p:#}");
    assert_eq!(
        p["pullRequest"],
        json!({"number": 7, "url": "https://github.com/acme/onto/pull/7"})
    );
    let branch = p["branch"].as_str().unwrap();
    let reqs = gh.requests.lock().unwrap().clone();
    let calls: Vec<(String, String)> = reqs
        .iter()
        .map(|(m, p, _, _)| (m.clone(), p.clone()))
        .collect();
    assert_eq!(
        calls,
        [
            ("GET", "/repos/acme/onto/git/ref/heads/main"),
            ("GET", "/repos/acme/onto/git/commits/b45e"),
            ("POST", "/repos/acme/onto/git/blobs"),
            ("POST", "/repos/acme/onto/git/trees"),
            ("POST", "/repos/acme/onto/git/commits"),
            ("POST", "/repos/acme/onto/git/refs"),
            ("POST", "/repos/acme/onto/pulls"),
        ]
        .map(|(m, p)| (m.to_string(), p.to_string()))
    );
    for (_, path, headers, body) in &reqs {
        assert_eq!(
            headers.get("authorization").map(String::as_str),
            Some(&*format!("Bearer {token}")),
            "{path}"
        );
        assert!(!body.contains(token) && !path.contains(token));
    }
    let body = |i: usize| -> Value { serde_json::from_str(&reqs[i].3).unwrap() };
    assert_eq!(body(2)["content"], p["markdown"]);
    assert_eq!(
        body(3),
        json!({"base_tree": "7ree", "tree": [{"path": "pages/Swin Transformer.md", "mode": "100644", "type": "blob", "sha": "b10b2"}]})
    );
    assert_eq!(body(4)["parents"], json!(["b45e"]));
    assert_eq!(body(4)["tree"], json!("7ree2"));
    assert_eq!(
        body(5),
        json!({"ref": format!("refs/heads/{branch}"), "sha": "c0m1"})
    );
    let pr = body(6);
    assert_eq!(
        (pr["head"].as_str(), pr["base"].as_str()),
        (Some(branch), Some("main"))
    );
    let text = pr["body"].as_str().unwrap();
    for part in [
        "## Proposed Change\n\nThe task needs a class for Swin.\n",
        "**Action**: create\n**Agent**: coder (agent-7)",
        "## Affected Classes\n\n| IRI | Change |\n|-----|--------|\n| ai:SwinTransformer | new class under Vision Transformer |",
        "## Consistency Report\n\n✅ **Consistent** — no logical contradictions introduced\n- New subsumptions inferred: ",
        "## Quality Assessment\n\n- Quality Score: 0.90/1.0\n- Agent Confidence: 0.80/1.0\n- Tier Coverage: 10/10 · 5/5 · 0/4\n",
        "## Diff\n\n```diff\n--- /dev/null\n+++ b/pages/Swin Transformer.md\n",
        "+    - owl:class:: ai:SwinTransformer\n",
    ] {
        assert!(text.contains(part), "the body lacks {part:?}:\n{text}");
    }
    // The token is in no stored byte.
    drop(reqs);
    // (On PostgreSQL there is no file to read; the same code stores the rows.)
    if crate::harness::postgres().is_none() {
        let db = std::fs::read(&o.c.db).unwrap();
        assert!(!db.windows(token.len()).any(|w| w == token.as_bytes()));
    }
    // The reviewer merges on GitHub: the next sync marks it merged, and once the base
    // branch has it (a pull here), the class is everyone's.
    *gh.merged.lock().unwrap() = true;
    let s = o.sync().await;
    assert_eq!(
        s["proposals"],
        json!([{"proposalId": p["proposalId"], "state": "merged"}])
    );
    o.err(
        "ontology_read",
        json!({"iri": "ai:SwinTransformer"}),
        "NOT_FOUND",
    )
    .await;
    o.repo.git(&["merge", "-q", "--ff-only", branch]);
    o.sync().await;
    let d = o.ok("ontology_discover", json!({"query": "Swin"})).await;
    assert_eq!(d["results"][0]["iri"], json!("ai:SwinTransformer"));
    o.c.stop().await;
}

#[tokio::test]
async fn without_a_token_the_proposal_stays_staged_and_can_be_pushed_later() {
    let o = Onto::new().await;
    let v = o
        .ok("manage_ontology", json!({"operation": "status"}))
        .await["version"]
        .clone();
    o.ok("manage_ontology", json!({"operation": "attach", "repoPath": o.repo.root(), "githubOwner": "acme", "githubName": "onto", "version": v})).await;
    let p = o.ok("ontology_propose", swin()).await;
    assert_eq!(p["state"], json!("staged"));
    assert!(
        p["pushError"].as_str().unwrap().contains("GITHUB_TOKEN"),
        "{p:#}"
    );
    let again = o
        .ok(
            "manage_ontology",
            json!({"operation": "push", "proposalId": p["proposalId"]}),
        )
        .await;
    assert_eq!(again["proposal"]["state"], json!("staged"));
    // Attaching again needs the version read; a wrong one is a conflict.
    o.err(
        "manage_ontology",
        json!({"operation": "attach", "repoPath": o.repo.root()}),
        "INVALID_OPERATION",
    )
    .await;
    o.err(
        "manage_ontology",
        json!({"operation": "attach", "repoPath": o.repo.root(), "version": 1}),
        "CONFLICT",
    )
    .await;
    o.c.stop().await;
}

#[tokio::test]
async fn ofn_exports_load_in_horned_owl_and_imports_become_a_proposal() {
    use horned_owl::model::{Component, RcStr};
    use horned_owl::ontology::set::SetOntology;
    let o = Onto::new().await;
    let e = o
        .ok("manage_ontology", json!({"operation": "export"}))
        .await;
    let text = e["ofn"].as_str().unwrap();
    let mut r = std::io::BufReader::new(text.as_bytes());
    let (ont, _): (SetOntology<RcStr>, _) =
        horned_owl::io::ofn::reader::read(&mut r, Default::default())
            .expect("horned-owl reads the export");
    let classes = ont
        .iter()
        .filter(|c| matches!(c.component, Component::DeclareClass(_)))
        .count();
    assert_eq!(classes, 79);
    assert_eq!(e["classes"], json!(79));
    // The export imported into an empty repository gives back the same ontology.
    let empty = Repo::new();
    empty.write("pages/.keep", "");
    empty.commit("empty");
    let p2 = o.c.project("Copy").await;
    o.c.ok(
        "manage_ontology",
        json!({"projectId": p2, "operation": "attach", "repoPath": empty.root()}),
    )
    .await;
    o.c.ok(
        "manage_ontology",
        json!({"projectId": p2, "operation": "sync"}),
    )
    .await;
    let im =
        o.c.ok(
            "manage_ontology",
            json!({"projectId": p2, "operation": "import", "ofn": text}),
        )
        .await;
    assert_eq!(im["newPages"], json!(92));
    assert_eq!(im["skipped"], json!([]));
    assert_eq!(im["operation"], json!("import"));
    empty.git(&["merge", "-q", "--ff-only", im["branch"].as_str().unwrap()]);
    let s =
        o.c.ok(
            "manage_ontology",
            json!({"projectId": p2, "operation": "sync"}),
        )
        .await;
    assert_eq!(
        (s["classes"].clone(), s["problemCount"].clone()),
        (json!(79), json!(0)),
        "{s:#}"
    );
    assert_eq!(s["proposals"][0]["state"], json!("merged"));
    let q =
        o.c.ok(
            "ontology_query",
            json!({"projectId": p2, "cypher": "MATCH (n:`ai:AcceleratedModel`) RETURN count(n)"}),
        )
        .await;
    let q0 = o
        .ok(
            "ontology_query",
            json!({"cypher": "MATCH (n:`ai:AcceleratedModel`) RETURN count(n)"}),
        )
        .await;
    assert_eq!(q["rows"], q0["rows"], "the same classification");
    // A document with constructs outside EL, read from the repository: reported with
    // their lines, the rest proposed; an existing class's page keeps its prose.
    o.repo.write(
        "import/extra.ofn",
        "Prefix(ai:=<urn:cairn:ai:>)\nPrefix(rdfs:=<http://www.w3.org/2000/01/rdf-schema#>)\nOntology(\n\
         Declaration(Class(ai:Transformer))\nDeclaration(Class(ai:StateSpaceModel))\nDeclaration(Class(ai:NeuralNetwork))\n\
         AnnotationAssertion(rdfs:label ai:StateSpaceModel \"State Space Model\")\n\
         SubClassOf(ai:StateSpaceModel ai:NeuralNetwork)\nSubClassOf(ai:StateSpaceModel ObjectUnionOf(ai:Transformer ai:NeuralNetwork))\n\
         Declaration(Class(ai:AcceleratedModel))\nSubClassOf(ai:Transformer ai:AcceleratedModel)\n)\n",
    );
    o.repo.commit("an OFN file");
    let im = o
        .ok(
            "manage_ontology",
            json!({"operation": "import", "path": "import/extra.ofn"}),
        )
        .await;
    assert_eq!(im["skipped"].as_array().unwrap().len(), 1, "{im:#}");
    assert_eq!(im["skipped"][0]["line"], json!(9));
    assert!(im["skipped"][0]["message"]
        .as_str()
        .unwrap()
        .contains("ObjectUnionOf"));
    assert_eq!(
        (im["newPages"].clone(), im["updatedPages"].clone()),
        (json!(1), json!(1))
    );
    let branch = im["branch"].as_str().unwrap();
    let page = o
        .repo
        .git(&["show", &format!("{branch}:pages/State Space Model.md")]);
    assert!(
        page.contains("owl:class:: ai:StateSpaceModel")
            && page.contains("is-subclass-of:: [[Neural Network]]"),
        "{page}"
    );
    let t = o
        .repo
        .git(&["show", &format!("{branch}:pages/Transformer.md")]);
    assert!(
        t.contains("    - is-subclass-of:: [[Neural Network]], [[Accelerated Model]]\n"),
        "{t}"
    );
    assert!(
        t.contains("- ## Why it matters") && t.contains("term-id:: AI-0008"),
        "the rest of the page stays: {t}"
    );
    // The branch starts at the synced commit, which its check was made against.
    let changed = o.repo.git(&[
        "diff",
        "--name-only",
        im["baseCommit"].as_str().unwrap(),
        branch,
    ]);
    assert_eq!(changed.lines().count(), 2, "{changed}");
    let e = o
        .err(
            "manage_ontology",
            json!({"operation": "import", "ofn": "Ontology(\nSubClassOf(a:B"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], json!("ofn"));
    o.err(
        "manage_ontology",
        json!({"operation": "import", "path": "../etc/passwd"}),
        "VALIDATION_ERROR",
    )
    .await;
    o.c.stop().await;
}

#[tokio::test]
async fn a_paraphrase_finds_its_class_through_the_semantic_layer() {
    let o = Onto::new().await;
    for (q, want) in [
        (
            "classifying photographs by cutting them into patches",
            "ai:VisionTransformer",
        ),
        (
            "a ledger replicated across many computers that agree on its contents",
            "bc:Blockchain",
        ),
        (
            "teaching a network by sending errors backwards through its layers",
            "ai:Backpropagation",
        ),
    ] {
        let d = o
            .ok("ontology_discover", json!({"query": q, "limit": 5}))
            .await;
        assert_eq!(d["semantic"], json!("all-minilm-l6-v2"), "{d:#}");
        assert_eq!(d["results"][0]["iri"], json!(want), "{q}: {d:#}");
        assert_eq!(d["results"][0]["matchedBy"], json!("semantic"));
    }
    o.c.stop().await;
}

#[tokio::test]
async fn bad_arguments_name_their_parameter() {
    let o = Onto::new().await;
    for (tool, args, param) in [
        (
            "ontology_discover",
            json!({"query": "x".repeat(1025)}),
            "query",
        ),
        ("ontology_discover", json!({"query": "  "}), "query"),
        (
            "ontology_discover",
            json!({"query": "x", "limit": 0}),
            "limit",
        ),
        ("ontology_read", json!({"iri": "x".repeat(300)}), "iri"),
        (
            "ontology_propose",
            json!({"operation": "create", "agentContext": "coder"}),
            "agentContext",
        ),
        (
            "ontology_propose",
            json!({"operation": "create", "agentContext": agent(), "preferredTerm": "X", "definition": "d", "domain": "A I"}),
            "domain",
        ),
        (
            "ontology_propose",
            json!({"operation": "create", "agentContext": agent(), "preferredTerm": "x".repeat(256), "definition": "d", "domain": "ai"}),
            "preferredTerm",
        ),
        (
            "ontology_propose",
            json!({"operation": "create", "agentContext": agent(), "preferredTerm": "X", "definition": "d", "domain": "ai", "altTerms": vec!["a"; 51]}),
            "altTerms",
        ),
        (
            "ontology_propose",
            json!({"operation": "create", "agentContext": agent(), "preferredTerm": "X", "definition": "d", "domain": "ai", "relationships": {"owns": ["ai:Transformer"]}}),
            "relationships",
        ),
        (
            "ontology_propose",
            json!({"operation": "create", "agentContext": agent(), "targetIri": "ai:X"}),
            "iri",
        ),
        (
            "ontology_propose",
            json!({"operation": "amend", "agentContext": agent(), "targetIri": "ai:Transformer", "qualityScore": 2}),
            "qualityScore",
        ),
        ("ontology_validate", json!({"axioms": []}), "axioms"),
        (
            "manage_ontology",
            json!({"operation": "sync", "ofn": "x"}),
            "ofn",
        ),
        (
            "manage_ontology",
            json!({"operation": "attach", "repoPath": "relative/path"}),
            "repoPath",
        ),
        (
            "manage_ontology",
            json!({"operation": "proposals", "state": "lost"}),
            "state",
        ),
    ] {
        let e = o.err(tool, args.clone(), "VALIDATION_ERROR").await;
        assert_eq!(
            e["details"]["parameter"],
            json!(param),
            "{tool} {args}: {e:#}"
        );
    }
    // An unknown project, and a project without a repository.
    let missing = "0192f000-0000-7000-8000-00000000e0e0";
    o.c.err(
        "ontology_discover",
        json!({"projectId": missing, "query": "x"}),
        "NOT_FOUND",
    )
    .await;
    let bare = o.c.project("Bare").await;
    let e =
        o.c.err(
            "ontology_query",
            json!({"projectId": bare, "cypher": "MATCH (n) RETURN n"}),
            "INVALID_OPERATION",
        )
        .await;
    assert!(e["message"].as_str().unwrap().contains("attach"), "{e:#}");
    // Deleting the project removes its ontology.
    o.c.ok(
        "manage_container",
        json!({"operation": "delete", "containerType": "project", "id": o.project}),
    )
    .await;
    o.c.err(
        "manage_ontology",
        json!({"projectId": o.project, "operation": "status"}),
        "NOT_FOUND",
    )
    .await;
    o.c.stop().await;
}
