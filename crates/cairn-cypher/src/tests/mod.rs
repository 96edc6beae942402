//! Tests of the whole path, text to rows, against a small hand-built ontology
//! served as the module documentation describes it.

mod bounds;
mod fuzz;
mod names;
mod queries;
mod refusals;
mod twin;

use std::collections::{BTreeSet, HashMap};

use super::*;

/// A class: IRI, preferred term, direct asserted parents, quality, status,
/// maturity, alternative terms.
type Class = (
    &'static str,
    &'static str,
    &'static [&'static str],
    f64,
    &'static str,
    &'static str,
    &'static [&'static str],
);

const CLASSES: &[Class] = &[
    (
        "ai:AIConcept",
        "AI Concept",
        &[],
        0.7,
        "approved",
        "mature",
        &[],
    ),
    (
        "ai:MachineLearning",
        "Machine Learning",
        &["ai:AIConcept"],
        0.95,
        "approved",
        "mature",
        &["ML"],
    ),
    (
        "ai:NeuralNetwork",
        "Neural Network",
        &["ai:MachineLearning"],
        0.9,
        "approved",
        "mature",
        &["NN", "ANN"],
    ),
    (
        "ai:Transformer",
        "Transformer",
        &["ai:NeuralNetwork"],
        0.92,
        "approved",
        "mature",
        &[],
    ),
    (
        "ai:ComputerVisionModel",
        "Computer Vision Model",
        &["ai:MachineLearning"],
        0.8,
        "approved",
        "mature",
        &[],
    ),
    (
        "ai:VisionTransformer",
        "Vision Transformer",
        &["ai:Transformer"],
        0.85,
        "approved",
        "emerging",
        &["ViT"],
    ),
    (
        "ai:LanguageModel",
        "Language Model",
        &["ai:Transformer"],
        0.88,
        "approved",
        "mature",
        &["LM"],
    ),
    (
        "ai:LargeLanguageModel",
        "Large Language Model",
        &["ai:LanguageModel"],
        0.93,
        "approved",
        "emerging",
        &["LLM"],
    ),
    (
        "ai:AttentionMechanism",
        "Attention Mechanism",
        &["ai:AIConcept"],
        0.75,
        "approved",
        "mature",
        &[],
    ),
    (
        "ai:SelfAttention",
        "Self-Attention",
        &["ai:AttentionMechanism"],
        0.7,
        "draft",
        "emerging",
        &[],
    ),
    (
        "ai:Embedding",
        "Embedding",
        &["ai:AIConcept"],
        0.6,
        "approved",
        "mature",
        &["Vector Embedding"],
    ),
    (
        "ai:TrainingData",
        "Training Data",
        &["ai:AIConcept"],
        0.5,
        "draft",
        "mature",
        &[],
    ),
    (
        "ai:Agent",
        "AI Agent",
        &["ai:AIConcept"],
        0.8,
        "approved",
        "emerging",
        &["Autonomous Agent"],
    ),
    (
        "bc:BlockchainConcept",
        "Blockchain Concept",
        &[],
        0.7,
        "approved",
        "mature",
        &[],
    ),
    (
        "bc:Ledger",
        "Ledger",
        &["bc:BlockchainConcept"],
        0.65,
        "approved",
        "mature",
        &[],
    ),
    (
        "bc:DistributedLedger",
        "Distributed Ledger",
        &["bc:Ledger"],
        0.8,
        "approved",
        "mature",
        &["DLT"],
    ),
    (
        "bc:Blockchain",
        "Blockchain",
        &["bc:DistributedLedger"],
        0.97,
        "approved",
        "mature",
        &[],
    ),
    (
        "bc:Block",
        "Block",
        &["bc:BlockchainConcept"],
        0.6,
        "approved",
        "mature",
        &[],
    ),
    (
        "bc:SmartContract",
        "Smart Contract",
        &["bc:BlockchainConcept"],
        0.9,
        "approved",
        "mature",
        &[],
    ),
    (
        "bc:Consensus",
        "Consensus Mechanism",
        &["bc:BlockchainConcept"],
        0.85,
        "approved",
        "mature",
        &[],
    ),
    (
        "bc:ProofOfStake",
        "Proof of Stake",
        &["bc:Consensus"],
        0.8,
        "approved",
        "mature",
        &["PoS"],
    ),
    (
        "bc:ProofOfWork",
        "Proof of Work",
        &["bc:Consensus"],
        0.8,
        "approved",
        "mature",
        &["PoW"],
    ),
    (
        "bc:Token",
        "Token",
        &["bc:BlockchainConcept"],
        0.75,
        "draft",
        "emerging",
        &[],
    ),
    (
        "bc:Agent",
        "Blockchain Agent",
        &["bc:BlockchainConcept"],
        0.4,
        "draft",
        "emerging",
        &[],
    ),
    (
        "mv:MetaverseConcept",
        "Metaverse Concept",
        &[],
        0.7,
        "approved",
        "emerging",
        &[],
    ),
    (
        "mv:VirtualWorld",
        "Virtual World",
        &["mv:MetaverseConcept"],
        0.9,
        "approved",
        "emerging",
        &[],
    ),
    (
        "mv:Avatar",
        "Avatar",
        &["mv:MetaverseConcept"],
        0.85,
        "approved",
        "emerging",
        &[],
    ),
    (
        "mv:Agent",
        "Metaverse Agent",
        &["mv:Avatar"],
        0.55,
        "draft",
        "emerging",
        &["NPC"],
    ),
    (
        "mv:DigitalTwin",
        "Digital Twin",
        &["mv:MetaverseConcept"],
        0.88,
        "approved",
        "mature",
        &[],
    ),
    (
        "mv:DigitalAsset",
        "Digital Asset",
        &["mv:MetaverseConcept"],
        0.7,
        "approved",
        "emerging",
        &[],
    ),
    (
        "mv:NFT",
        "Non-Fungible Token",
        &["mv:DigitalAsset"],
        0.8,
        "approved",
        "emerging",
        &["NFT"],
    ),
    (
        "mv:VirtualEconomy",
        "Virtual Economy",
        &["mv:MetaverseConcept"],
        0.6,
        "draft",
        "emerging",
        &[],
    ),
    (
        "mv:Headset",
        "XR Headset",
        &["mv:MetaverseConcept"],
        0.65,
        "approved",
        "mature",
        &["HMD"],
    ),
];

/// Subsumptions the reasoner inferred (they carry `inferred: true`).
const INFERRED: &[(&str, &str)] = &[
    ("mv:NFT", "bc:Token"),
    ("ai:VisionTransformer", "ai:ComputerVisionModel"),
];

/// Existential restrictions of class pages, as typed edges.
const RELATIONS: &[(&str, &str, &str)] = &[
    ("ai:Transformer", "HAS_PART", "ai:SelfAttention"),
    ("ai:Transformer", "HAS_PART", "ai:Embedding"),
    ("ai:LargeLanguageModel", "REQUIRES", "ai:TrainingData"),
    ("ai:Agent", "REQUIRES", "ai:LargeLanguageModel"),
    ("ai:LargeLanguageModel", "ENABLES", "ai:Agent"),
    ("ai:Embedding", "RELATES_TO", "ai:AttentionMechanism"),
    ("bc:Blockchain", "HAS_PART", "bc:Block"),
    ("bc:Blockchain", "REQUIRES", "bc:Consensus"),
    ("bc:SmartContract", "ENABLES", "bc:Token"),
    ("mv:VirtualWorld", "HAS_PART", "mv:Avatar"),
    ("mv:VirtualWorld", "HAS_PART", "mv:VirtualEconomy"),
    ("mv:VirtualWorld", "REQUIRES", "mv:Headset"),
    ("mv:VirtualEconomy", "BRIDGES_TO", "bc:Blockchain"),
    ("mv:Avatar", "BRIDGES_TO", "ai:Agent"),
];

/// Individuals and their asserted type.
const INDIVIDUALS: &[(&str, &str)] = &[
    ("ai:GPT4", "ai:LargeLanguageModel"),
    ("bc:Ethereum", "bc:Blockchain"),
    ("bc:Bitcoin", "bc:Blockchain"),
    ("mv:Decentraland", "mv:VirtualWorld"),
];

/// Property assertions between individuals.
const ASSERTIONS: &[(&str, &str, &str)] = &[("mv:Decentraland", "RUNS_ON", "bc:Ethereum")];

pub(crate) struct Fixture {
    pub graph: PropertyGraph,
    pub schema: Schema,
    pub ids: HashMap<&'static str, NodeId>,
}

fn ancestors(
    iri: &str,
    parents: &HashMap<&str, Vec<&'static str>>,
    out: &mut BTreeSet<&'static str>,
) {
    for p in parents.get(iri).into_iter().flatten() {
        if out.insert(p) {
            ancestors(p, parents, out);
        }
    }
}

/// The fixture ontology as a property graph, with a schema derived from it whose
/// local names are label aliases.
pub(crate) fn fixture() -> Fixture {
    let mut parents: HashMap<&str, Vec<&'static str>> = HashMap::new();
    for (iri, _, ps, ..) in CLASSES {
        parents.entry(iri).or_default().extend(ps.iter().copied());
    }
    for (c, p) in INFERRED {
        parents.entry(c).or_default().push(p);
    }
    let mut g = PropertyGraph::new();
    let mut ids = HashMap::new();
    for (i, (iri, term, _, quality, status, maturity, alt)) in CLASSES.iter().enumerate() {
        let mut sup = BTreeSet::new();
        ancestors(iri, &parents, &mut sup);
        let mut labels = vec!["OwlClass", iri];
        labels.extend(sup);
        let domain = iri.split(':').next().unwrap_or("");
        let mut props = vec![
            ("iri", Value::from(*iri)),
            (
                "termId",
                Value::from(format!("{}-{:04}", domain.to_uppercase(), i + 1)),
            ),
            ("preferredTerm", Value::from(*term)),
            ("domain", Value::from(domain)),
            ("status", Value::from(*status)),
            (
                "definition",
                Value::from(format!("{term}: a concept of the {domain} domain.")),
            ),
            ("qualityScore", Value::Float(*quality)),
            ("authorityScore", Value::Float(0.5)),
            ("maturity", Value::from(*maturity)),
            (
                "physicality",
                Value::from(if *iri == "mv:Headset" {
                    "physical"
                } else {
                    "virtual"
                }),
            ),
            ("role", Value::from("concept")),
            ("lastUpdated", Value::from("2026-01-15")),
        ];
        if !alt.is_empty() {
            props.push((
                "altTerms",
                Value::List(alt.iter().map(|a| Value::from(*a)).collect()),
            ));
        }
        ids.insert(*iri, g.add_node(labels, props));
    }
    let edge = |g: &mut PropertyGraph,
                a: &str,
                t: &str,
                b: &str,
                props: Vec<(&str, Value)>,
                ids: &HashMap<&str, NodeId>| {
        g.add_edge(ids[a], ids[b], t, props).unwrap();
    };
    for (iri, _, ps, ..) in CLASSES {
        for p in ps.iter() {
            edge(
                &mut g,
                iri,
                "SUBCLASS_OF",
                p,
                vec![("inferred", Value::Bool(false))],
                &ids,
            );
        }
    }
    for (c, p) in INFERRED {
        edge(
            &mut g,
            c,
            "SUBCLASS_OF",
            p,
            vec![("inferred", Value::Bool(true))],
            &ids,
        );
    }
    for (a, t, b) in RELATIONS {
        edge(&mut g, a, t, b, vec![], &ids);
    }
    for (iri, ty) in INDIVIDUALS {
        let mut sup = BTreeSet::new();
        sup.insert(*ty);
        ancestors(ty, &parents, &mut sup);
        let mut labels = vec!["Individual"];
        labels.extend(sup);
        let domain = iri.split(':').next().unwrap_or("");
        let id = g.add_node(
            labels,
            [("iri", Value::from(*iri)), ("domain", Value::from(domain))],
        );
        ids.insert(*iri, id);
        edge(&mut g, iri, "INSTANCE_OF", ty, vec![], &ids);
    }
    for (a, t, b) in ASSERTIONS {
        edge(&mut g, a, t, b, vec![], &ids);
    }
    for p in ["hasPart", "requires"] {
        g.add_node(
            ["ObjectProperty"],
            [("iri", Value::from(format!("ai:{p}")))],
        );
    }
    let mut schema = Schema::from_graph(&g);
    schema.alias_local_names(NameKind::Label, ':');
    Fixture {
        graph: g,
        schema,
        ids,
    }
}

/// A value as the expectations are written: nodes by IRI, relationships by type.
pub(crate) fn show(g: &PropertyGraph, v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Int(i) => i.to_string(),
        Value::Float(x) => format!("{x}"),
        Value::String(s) => s.clone(),
        Value::List(items) => format!(
            "[{}]",
            items
                .iter()
                .map(|i| show(g, i))
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Value::Node(n) => match g.property(*n, "iri") {
            Some(Value::String(s)) => s.clone(),
            _ => format!("node{}", n.index()),
        },
        Value::Relationship(e) => g.rel_type(*e).unwrap_or("?").to_string(),
        Value::Map(m) => format!(
            "{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{k}: {}", show(g, v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Runs `q` on `f` with default limits, panicking with the error's text.
pub(crate) fn run(f: &Fixture, q: &str) -> QueryOutcome {
    execute(&f.graph, &f.schema, q, &Limits::default()).unwrap_or_else(|e| panic!("{q}\n{e}"))
}

/// The rows of `q`, each as its values joined by " | ".
pub(crate) fn rows(f: &Fixture, q: &str) -> Vec<String> {
    run(f, q)
        .rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| show(&f.graph, v))
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect()
}

/// The tests' one seeded generator (fastrand's), so failures reproduce; the draws
/// these tests use on top of it.
pub(crate) struct Rng(fastrand::Rng);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(fastrand::Rng::with_seed(seed))
    }
    pub fn next(&mut self) -> u64 {
        self.0.u64(..)
    }

    pub fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}
