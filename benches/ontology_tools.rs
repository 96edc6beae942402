//! Benchmark of the ontology toolset through the release binary over MCP stdio: a
//! generated ontology repository of 10,000 classes (Logseq pages in a real git
//! repository: about three parents, one relationship and metadata per class, a
//! definition for one class in twenty, `has part` transitive), attached and synced,
//! then `ontology_discover`, `ontology_query`, `ontology_read` (also its subgraph),
//! `ontology_validate` and `ontology_propose` round trips (one session, sequential
//! calls, a fresh database). Prints a table.
//!
//! Run: `cargo bench --bench ontology_tools` (classification at 100,000 classes is
//! the core's: `cargo bench --bench ontology`).
//!
//! The server runs without the embedding model (`CAIRN_MODEL_DIR` points nowhere), so
//! the semantic side of discovery uses the hashing embedder: embedding 10,000
//! definitions with the model takes about ten minutes on this machine, which would
//! measure the model, not the toolset. Keyword discovery does not embed anything.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::json;

mod client;
use client::Server;

/// Classes generated (`CAIRN_BENCH_CLASSES` overrides, for a quick run).
fn classes() -> usize {
    std::env::var("CAIRN_BENCH_CLASSES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}
const DOMAINS: [&str; 3] = ["ai", "bc", "mv"];
const ADJ: [&str; 40] = [
    "Sparse",
    "Dense",
    "Adaptive",
    "Recurrent",
    "Causal",
    "Latent",
    "Hybrid",
    "Federated",
    "Quantum",
    "Spatial",
    "Temporal",
    "Neural",
    "Symbolic",
    "Distributed",
    "Secure",
    "Private",
    "Immersive",
    "Virtual",
    "Physical",
    "Digital",
    "Modular",
    "Layered",
    "Streaming",
    "Batched",
    "Robust",
    "Probabilistic",
    "Generative",
    "Discriminative",
    "Hierarchical",
    "Graph",
    "Token",
    "Ledger",
    "Consensus",
    "Cryptographic",
    "Haptic",
    "Spatial Audio",
    "Volumetric",
    "Procedural",
    "Semantic",
    "Contextual",
];
const NOUN: [&str; 50] = [
    "Encoder",
    "Decoder",
    "Transformer",
    "Network",
    "Protocol",
    "Contract",
    "Wallet",
    "Avatar",
    "Renderer",
    "Sensor",
    "Display",
    "Headset",
    "Model",
    "Classifier",
    "Regressor",
    "Tokenizer",
    "Embedding",
    "Index",
    "Cache",
    "Ledger",
    "Block",
    "Chain",
    "Oracle",
    "Bridge",
    "Validator",
    "Miner",
    "Node",
    "Shard",
    "Rollup",
    "Channel",
    "Scene",
    "Mesh",
    "Shader",
    "Texture",
    "Engine",
    "Agent",
    "Planner",
    "Policy",
    "Reward",
    "Critic",
    "Memory",
    "Attention",
    "Filter",
    "Kernel",
    "Optimizer",
    "Scheduler",
    "Dataset",
    "Pipeline",
    "Runtime",
    "World",
];
const RELS: [&str; 5] = [
    "has-part",
    "requires",
    "enables",
    "bridges-to",
    "relates-to",
];

/// The tests' and benches' one seeded generator: the same data every run.
fn seeded(seed: u64) -> fastrand::Rng {
    fastrand::Rng::with_seed(seed)
}

fn title(i: usize) -> String {
    format!(
        "{} {} {i}",
        ADJ[i % ADJ.len()],
        NOUN[(i / ADJ.len()) % NOUN.len()]
    )
}

fn iri(i: usize) -> String {
    format!("{}:C{i}", DOMAINS[i % 3])
}

/// The generated pages: (file name, text).
fn pages() -> Vec<(String, String)> {
    let mut rng = seeded(42);
    let mut out = Vec::with_capacity(classes() + 1);
    for i in 0..classes() {
        let d = DOMAINS[i % 3];
        let mut parents = Vec::new();
        if i > 0 {
            let p0 = (i - 1) / 10;
            parents.push(p0);
            for _ in 0..2 {
                let lo = p0.saturating_sub(16);
                let hi = (p0 + 16).min(i - 1);
                let p = lo + rng.usize(..=hi - lo);
                if !parents.contains(&p) {
                    parents.push(p);
                }
            }
        }
        let links: Vec<String> = parents
            .iter()
            .map(|&p| format!("[[{}]]", title(p)))
            .collect();
        let mut t = format!(
            "- {ti}\n  - ### OntologyBlock\n    - ontology:: true\n    - term-id:: {D}-{n:04}\n    - preferred-term:: {ti}\n    \
             - source-domain:: {d}\n    - status:: approved\n    - public-access:: true\n    - last-updated:: 2026-{m:02}-{dd:02}\n    \
             - definition:: A {a} {no} of the benchmark ontology, number {i}.\n    - owl:class:: {iri}\n    \
             - owl:physicality:: VirtualEntity\n    - owl:role:: Concept\n",
            ti = title(i),
            D = d.to_uppercase(),
            n = i / 3 + 1,
            m = 1 + i % 12,
            dd = 1 + i % 28,
            a = ADJ[i % ADJ.len()].to_lowercase(),
            no = NOUN[(i / ADJ.len()) % NOUN.len()].to_lowercase(),
            iri = iri(i),
        );
        if !links.is_empty() {
            t.push_str(&format!("    - is-subclass-of:: {}\n", links.join(", ")));
        }
        t.push_str(&format!(
            "    - quality-score:: 0.{}\n    - authority-score:: 0.{}\n    - maturity:: stable\n",
            50 + rng.usize(..50),
            40 + rng.usize(..60)
        ));
        if i > 0 {
            let target = rng.usize(..classes().max(1));
            t.push_str(&format!(
                "    - {}:: [[{}]]\n",
                RELS[rng.usize(..RELS.len())],
                title(target)
            ));
        }
        t.push_str(&format!(
            "    - alt-terms:: {} variant {i}\n",
            NOUN[(i / ADJ.len()) % NOUN.len()]
        ));
        if i % 20 == 0 && i > 0 {
            t.push_str(&format!(
                "    - owl:equivalentClass:: [[{}]] and (core:requires some [[{}]])\n",
                title((i - 1) / 10),
                title(rng.usize(..classes().max(1)))
            ));
        }
        out.push((format!("{}.md", title(i)), t));
    }
    out.push((
        "has part.md".into(),
        "- has part\n  - ### OntologyBlock\n    - owl:objectProperty:: core:hasPart\n    - transitive:: true\n".into(),
    ));
    out
}

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .current_dir(dir)
        .args([
            "-c",
            "user.name=bench",
            "-c",
            "user.email=bench@localhost",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .output()
        .expect("git runs");
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// p50 and p99 of samples, in ms.
fn pct(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    let at = |q: f64| ms(v[((v.len() as f64 - 1.0) * q).round() as usize]);
    (at(0.5), at(0.99))
}

struct Table(Vec<(String, String, String, String)>);

impl Table {
    fn row(&mut self, what: &str, p50: f64, p99: f64, note: impl Into<String>) {
        self.0.push((
            what.into(),
            format!("{p50:.2}"),
            format!("{p99:.2}"),
            note.into(),
        ));
    }
}

/// Times `n` calls made by `f`, and the server's CPU time per call.
fn timed(s: &mut Server, n: usize, mut f: impl FnMut(&mut Server, usize)) -> (Vec<Duration>, f64) {
    let cpu = s.cpu();
    let mut v = Vec::with_capacity(n);
    for i in 0..n {
        let t = Instant::now();
        f(s, i);
        v.push(t.elapsed());
    }
    (v, ms(s.cpu().saturating_sub(cpu)) / n as f64)
}

fn main() {
    let root: PathBuf =
        std::env::temp_dir().join(format!("cairn-bench-ontology-{}", std::process::id()));
    let repo = root.join("repo");
    std::fs::create_dir_all(repo.join("pages")).unwrap();
    let t = Instant::now();
    for (f, text) in pages() {
        std::fs::write(repo.join("pages").join(f), text).unwrap();
    }
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "generated ontology"]);
    eprintln!(
        "generated and committed {} pages in {:.1} s",
        classes(),
        t.elapsed().as_secs_f64()
    );

    let db = root.join("bench.db");
    let nowhere = root.join("no-model");
    let mut s = Server::start(
        &db,
        &[],
        &[("CAIRN_MODEL_DIR", OsStr::new(nowhere.as_os_str()))],
    );
    let mut table = Table(Vec::new());
    let p = s.call(
        "manage_container",
        json!({"operation":"create","containerType":"project","name":"Bench"}),
    )["project"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    s.call(
        "manage_ontology",
        json!({"projectId": p, "operation": "attach", "repoPath": repo.to_str().unwrap()}),
    );
    let t = Instant::now();
    let first = s.call(
        "manage_ontology",
        json!({"projectId": p, "operation": "sync"}),
    );
    let took = ms(t.elapsed());
    assert_eq!(first["classes"], json!(classes()), "{first}");
    assert_eq!(first["problemCount"], json!(0), "{first}");
    let rss_synced = s.rss_mb();
    table.row(
        "first sync (10,001 pages: read, import, classify)",
        took,
        took,
        format!("{} axioms", first["axioms"]),
    );
    let t = Instant::now();
    s.call(
        "manage_ontology",
        json!({"projectId": p, "operation": "sync"}),
    );
    let took = ms(t.elapsed());
    table.row(
        "sync, nothing changed",
        took,
        took,
        "ls-tree + compare; nothing written",
    );
    let page = repo
        .join("pages")
        .join(format!("{}.md", title(77 % classes())));
    let text = std::fs::read_to_string(&page)
        .unwrap()
        .replace("benchmark ontology", "benchmark ontology, edited");
    std::fs::write(&page, text).unwrap();
    git(&repo, &["commit", "-q", "-am", "one page edited"]);
    let t = Instant::now();
    let one = s.call(
        "manage_ontology",
        json!({"projectId": p, "operation": "sync"}),
    );
    let took = ms(t.elapsed());
    assert_eq!(one["pages"]["changed"], json!(1));
    table.row(
        "sync, one page changed",
        took,
        took,
        "re-classified, one page row written",
    );

    let mut rng = seeded(7);
    let samples = 200;
    let terms: Vec<String> = (0..samples)
        .map(|_| title(rng.usize(..classes().max(1))))
        .collect();
    // The first call after a sync builds nothing (the sync left its index cached).
    let (v, cpu) = timed(&mut s, samples, |s, i| {
        s.call_line(
            "ontology_discover",
            json!({"projectId": p, "query": terms[i]}),
        );
    });
    let (a, b) = pct(v);
    table.row(
        "ontology_discover, a class's preferred term",
        a,
        b,
        format!("{cpu:.2} ms server CPU per call; target ≤ 5 ms"),
    );
    let words: Vec<String> = (0..samples)
        .map(|i| {
            format!(
                "{} {}",
                ADJ[i % ADJ.len()].to_lowercase(),
                NOUN[i % NOUN.len()].to_lowercase()
            )
        })
        .collect();
    let (v, cpu) = timed(&mut s, samples, |s, i| {
        s.call_line(
            "ontology_discover",
            json!({"projectId": p, "query": words[i]}),
        );
    });
    let (a, b) = pct(v);
    table.row(
        "ontology_discover, two words (partial matches, semantic too)",
        a,
        b,
        format!("{cpu:.2} ms CPU; hashing embedder"),
    );

    let queries: Vec<String> = (0..samples)
        .map(|i| match i % 5 {
            0 => format!(
                "MATCH (c {{iri: '{}'}})-[:SUBCLASS_OF]->(p) RETURN p.iri, p.preferredTerm",
                iri(rng.usize(..classes().max(1)))
            ),
            1 => format!(
                "MATCH (c:`{}`) RETURN count(c)",
                iri(rng.usize(..(200.min(classes())).max(1)))
            ),
            2 => format!(
                "MATCH (a {{iri: '{}'}})-[:HAS_PART|REQUIRES|ENABLES]->(b) RETURN b.preferredTerm",
                iri(rng.usize(..classes().max(1)))
            ),
            3 => format!(
                "MATCH (c:OwlClass) WHERE c.preferredTerm STARTS WITH '{}' RETURN c.iri LIMIT 10",
                ADJ[i % ADJ.len()]
            ),
            _ => format!(
                "MATCH (c {{iri: '{}'}})-[:SUBCLASS_OF*1..3]->(a) RETURN DISTINCT a.iri",
                iri(rng.usize(..classes().max(1)))
            ),
        })
        .collect();
    let (v, cpu) = timed(&mut s, samples, |s, i| {
        s.call_line(
            "ontology_query",
            json!({"projectId": p, "cypher": queries[i]}),
        );
    });
    let (a, b) = pct(v);
    table.row(
        "ontology_query, five typical shapes",
        a,
        b,
        format!("{cpu:.2} ms CPU; target ≤ 10 ms"),
    );
    let (v, cpu) = timed(&mut s, 100, |s, _| {
        s.call_line(
            "ontology_query",
            json!({"projectId": p, "cypher": "MATCH (c {iri: 'ai:C3'}) RETURN c.preferedTerm"}),
        );
    });
    let (a, b) = pct(v);
    table.row(
        "ontology_query with a misspelling repaired",
        a,
        b,
        format!("{cpu:.2} ms CPU"),
    );
    let (v, cpu) = timed(&mut s, 100, |s, i| {
        s.call_line(
            "ontology_read",
            json!({"projectId": p, "iri": iri(i * 97 % classes()), "depth": 2}),
        );
    });
    let (a, b) = pct(v);
    table.row(
        "ontology_read, subgraph of depth 2",
        a,
        b,
        format!("{cpu:.2} ms CPU"),
    );
    let (v, cpu) = timed(&mut s, 100, |s, i| {
        s.call_line(
            "ontology_read",
            json!({"projectId": p, "iri": iri(1 + i * 89 % (classes() - 1))}),
        );
    });
    let (a, b) = pct(v);
    table.row(
        "ontology_read (with explanations)",
        a,
        b,
        format!("{cpu:.2} ms CPU"),
    );
    let (v, cpu) = timed(&mut s, 50, |s, i| {
        let ax = json!([{"axiomType": "SubClassOf", "subject": format!("ai:Hypo{i}"), "object": iri((100 + i) % classes())},
                        {"axiomType": "requires", "subject": format!("ai:Hypo{i}"), "object": iri((5000 + i) % classes())}]);
        s.call_line("ontology_validate", json!({"projectId": p, "axioms": ax}));
    });
    let (a, b) = pct(v);
    table.row(
        "ontology_validate, two axioms",
        a,
        b,
        format!("{cpu:.2} ms CPU"),
    );
    let mut checks = Vec::new();
    let (v, cpu) = timed(&mut s, 30, |s, i| {
        let d = s.call(
            "ontology_propose",
            json!({"projectId": p, "operation": "create",
                   "agentContext": {"agentType": "bench", "taskDescription": "A benchmark proposal.", "confidence": 0.7},
                   "preferredTerm": format!("Proposed Concept {i}"), "definition": "A concept the benchmark proposes to time a round trip.",
                   "domain": "ai", "physicality": "VirtualEntity", "role": "Concept",
                   "isSubclassOf": [iri((123 + i) % classes()), iri((4567 + i) % classes())], "relationships": {"has-part": [iri((12 + i) % classes())]}, "altTerms": ["PC"]}),
        );
        checks.push(Duration::from_secs_f64(
            d["consistency"]["checkMs"].as_f64().unwrap() / 1000.0,
        ));
    });
    let (a, b) = pct(v);
    table.row(
        "ontology_propose create (check, term id, git commit, row)",
        a,
        b,
        format!("{cpu:.2} ms CPU"),
    );
    let (a, b) = pct(checks);
    table.row(
        "  of which the consistency check (reasoner + diff)",
        a,
        b,
        "target ≤ 100 ms",
    );
    let rss = s.rss_mb();
    drop(s);

    println!(
        "{} classes; one stdio session, sequential calls; resident memory after the first sync: {rss_synced:.0} MB, at the end: {rss:.0} MB\n",
        classes()
    );
    println!("| measurement | p50 ms | p99 ms | notes |");
    println!("|---|---:|---:|---|");
    for (what, a, b, note) in table.0 {
        println!("| {what} | {a} | {b} | {note} |");
    }
    let _ = std::fs::remove_dir_all(&root);
}
