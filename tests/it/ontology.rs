//! The `ontology` toolset through MCP, on a real git repository holding the
//! hand-written fixture ontology (`fixtures/ontology/pages`): the read tools, validated
//! queries and their repairs, hypothetical axioms, the semantic layer, bad arguments.
//! How an ontology changes (sync, proposals, pull requests, OFN) is in
//! `ontology_changes.rs`.

use serde_json::{json, Value};

use crate::code::Repo;
use crate::harness::{Cairn, TempDir};
pub(crate) use crate::ontology_changes::FakeGitHub;

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
pub(crate) struct Onto {
    pub(crate) c: Cairn,
    pub(crate) repo: Repo,
    pub(crate) project: String,
    _dir: TempDir,
}

impl Onto {
    pub(crate) async fn new() -> Onto {
        Onto::with(&[], &[]).await
    }

    pub(crate) async fn with(extra: &[&str], env: &[(&str, &str)]) -> Onto {
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

    pub(crate) async fn ok(&self, tool: &str, mut args: Value) -> Value {
        args["projectId"] = json!(self.project);
        self.c.ok(tool, args).await
    }

    pub(crate) async fn err(&self, tool: &str, mut args: Value, code: &str) -> Value {
        args["projectId"] = json!(self.project);
        self.c.err(tool, args, code).await
    }

    pub(crate) async fn sync(&self) -> Value {
        self.ok("manage_ontology", json!({"operation": "sync"}))
            .await
    }

    /// A query's rows as `a | b` lines (nodes by IRI).
    pub(crate) async fn rows(&self, q: &str) -> Vec<String> {
        let d = self.ok("ontology_query", json!({ "cypher": q })).await;
        rows_of(&d)
    }
}

pub(crate) fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Object(m) if m.contains_key("iri") => m["iri"].as_str().unwrap_or("").to_string(),
        Value::Array(a) => format!("[{}]", a.iter().map(cell).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

pub(crate) fn rows_of(d: &Value) -> Vec<String> {
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

pub(crate) fn agent() -> Value {
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
        // The time limit far away: what is checked here is the bound on bindings,
        // which a loaded machine must not reach after the deadline.
        "[ontology]\nmax_query_repair = 0\nmax_query_rows = 5\nquery_timeout_ms = 600000\n",
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
        .ok("ontology_read", json!({"startIri": "bc:Blockchain", "depth": 2, "relationshipTypes": ["HAS_PART"], "direction": "outgoing"}))
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
            "ontology_read",
            json!({"startIri": "bc:Blockchain", "relationshipTypes": "has_prt"}),
        )
        .await;
    assert!(
        t["notes"][0].as_str().unwrap().contains("HAS_PART"),
        "{t:#}"
    );
    let e = o
        .err(
            "ontology_read",
            json!({"startIri": "bc:Blockchain", "depth": 6}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], json!("depth"));
    let e = o
        .err(
            "ontology_read",
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
