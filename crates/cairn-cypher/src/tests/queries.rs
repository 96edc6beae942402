//! Queries and the rows they must answer, covering every construct of the subset.

use super::*;

/// (query, expected rows). Rows without ORDER BY are in match order: nodes in
/// insertion order, a node's relationships in insertion order.
pub(super) const CASES: &[(&str, &[&str])] = &[
    // Labels, subsumption through superclass labels, aliases, prefixes.
    ("MATCH (n:OwlClass) RETURN count(*) AS classes", &["33"]),
    (
        "MATCH (n:`ai:Transformer`) RETURN n.iri ORDER BY n.iri",
        &["ai:GPT4", "ai:LanguageModel", "ai:LargeLanguageModel", "ai:Transformer", "ai:VisionTransformer"],
    ),
    ("MATCH (n:OwlClass:Transformer) RETURN count(n)", &["4"]),
    ("MATCH (n:OwlClass:ai:Transformer) RETURN count(n)", &["4"]),
    (
        "MATCH (n:`bc:Consensus`|`mv:Avatar`) RETURN n.iri ORDER BY n.iri",
        &["bc:Consensus", "bc:ProofOfStake", "bc:ProofOfWork", "mv:Agent", "mv:Avatar"],
    ),
    ("MATCH (n {iri: 'bc:Blockchain'}) RETURN n.preferredTerm, n.termId", &["Blockchain | BC-0017"]),
    // Relationships: direction, alternatives, undirected, multiple hops.
    (
        "MATCH (a:OwlClass)-[:HAS_PART]->(p) RETURN a.iri, p.iri ORDER BY a.iri, p.iri",
        &[
            "ai:Transformer | ai:Embedding",
            "ai:Transformer | ai:SelfAttention",
            "bc:Blockchain | bc:Block",
            "mv:VirtualWorld | mv:Avatar",
            "mv:VirtualWorld | mv:VirtualEconomy",
        ],
    ),
    (
        "MATCH (p)<-[:HAS_PART]-(a {iri: 'ai:Transformer'}) RETURN p.iri",
        &["ai:SelfAttention", "ai:Embedding"],
    ),
    (
        "MATCH (a {iri: 'ai:Agent'})-[r]-(b) RETURN type(r), b.iri ORDER BY type(r), b.iri",
        &[
            "BRIDGES_TO | mv:Avatar",
            "ENABLES | ai:LargeLanguageModel",
            "REQUIRES | ai:LargeLanguageModel",
            "SUBCLASS_OF | ai:AIConcept",
        ],
    ),
    (
        "MATCH (a)-[:REQUIRES|ENABLES]->(b) RETURN a.iri, b.iri ORDER BY a.iri, b.iri",
        &[
            "ai:Agent | ai:LargeLanguageModel",
            "ai:LargeLanguageModel | ai:Agent",
            "ai:LargeLanguageModel | ai:TrainingData",
            "bc:Blockchain | bc:Consensus",
            "bc:SmartContract | bc:Token",
            "mv:VirtualWorld | mv:Headset",
        ],
    ),
    (
        "MATCH (w:Individual)-[:RUNS_ON]->(c)-[:INSTANCE_OF]->(t) RETURN w.iri, c.iri, t.preferredTerm",
        &["mv:Decentraland | bc:Ethereum | Blockchain"],
    ),
    (
        "MATCH (a)-[:REQUIRES]->(b)-[:ENABLES]->(a) RETURN a.iri, b.iri",
        &["ai:Agent | ai:LargeLanguageModel"],
    ),
    // Variable length.
    (
        "MATCH (c {iri: 'ai:LargeLanguageModel'})-[:SUBCLASS_OF*]->(a) RETURN a.iri ORDER BY a.iri",
        &["ai:AIConcept", "ai:LanguageModel", "ai:MachineLearning", "ai:NeuralNetwork", "ai:Transformer"],
    ),
    (
        "MATCH (c {iri: 'ai:VisionTransformer'})-[:SUBCLASS_OF*2]->(a) RETURN a.iri ORDER BY a.iri",
        &["ai:MachineLearning", "ai:NeuralNetwork"],
    ),
    (
        "MATCH ({iri: 'ai:VisionTransformer'})-[r:SUBCLASS_OF*1..2]->(a) RETURN size(r), a.iri ORDER BY size(r), a.iri",
        &["1 | ai:ComputerVisionModel", "1 | ai:Transformer", "2 | ai:MachineLearning", "2 | ai:NeuralNetwork"],
    ),
    (
        "MATCH ({iri: 'bc:Consensus'})<-[:SUBCLASS_OF*0..1]-(s) RETURN s.iri ORDER BY s.iri",
        &["bc:Consensus", "bc:ProofOfStake", "bc:ProofOfWork"],
    ),
    (
        "MATCH (a {iri: 'ai:Agent'})-[:REQUIRES|ENABLES*]-(b) RETURN DISTINCT b.iri ORDER BY b.iri",
        &["ai:Agent", "ai:LargeLanguageModel", "ai:TrainingData"],
    ),
    // Relationship properties and label tests on relationships.
    (
        "MATCH (a)-[r:SUBCLASS_OF {inferred: true}]->(b) RETURN a.iri, b.iri",
        &["ai:VisionTransformer | ai:ComputerVisionModel", "mv:NFT | bc:Token"],
    ),
    ("MATCH (a)-[r:SUBCLASS_OF]->(b) WHERE r.inferred RETURN count(*)", &["2"]),
    (
        "MATCH (a:OwlClass)-[r:SUBCLASS_OF]->(b) WHERE r:SUBCLASS_OF AND a.iri = 'mv:NFT' RETURN b.iri, r.inferred",
        &["mv:DigitalAsset | false", "bc:Token | true"],
    ),
    // WHERE: boolean operators, comparisons, null tests, lists, strings, labels.
    (
        "MATCH (n:OwlClass) WHERE n.domain = 'bc' AND NOT n.status = 'draft' AND n.qualityScore > 0.8 RETURN n.iri ORDER BY n.iri",
        &["bc:Blockchain", "bc:Consensus", "bc:SmartContract"],
    ),
    (
        "MATCH (n:OwlClass) WHERE (n.domain = 'mv' XOR n.maturity = 'mature') AND n.qualityScore >= 0.88 RETURN n.iri ORDER BY n.iri",
        &[
            "ai:LanguageModel",
            "ai:MachineLearning",
            "ai:NeuralNetwork",
            "ai:Transformer",
            "bc:Blockchain",
            "bc:SmartContract",
            "mv:VirtualWorld",
        ],
    ),
    (
        "MATCH (n:OwlClass) WHERE n.qualityScore < 0.6 AND n.domain <> 'mv' RETURN n.iri, n.qualityScore ORDER BY n.qualityScore",
        &["bc:Agent | 0.4", "ai:TrainingData | 0.5"],
    ),
    (
        "MATCH (n:`mv:MetaverseConcept`) WHERE n.altTerms IS NOT NULL RETURN n.iri, n.altTerms ORDER BY n.iri",
        &["mv:Agent | [NPC]", "mv:Headset | [HMD]", "mv:NFT | [NFT]"],
    ),
    ("MATCH (n:OwlClass) WHERE n.altTerms IS NULL RETURN count(*)", &["20"]),
    ("MATCH (n:OwlClass) WHERE n.altTerms = null RETURN count(*)", &["0"]),
    (
        "MATCH (n) WHERE n.iri IN ['ai:Agent', 'mv:Agent', 'xx:None'] RETURN n.preferredTerm ORDER BY n.preferredTerm",
        &["AI Agent", "Metaverse Agent"],
    ),
    (
        "MATCH (n:OwlClass) WHERE n.preferredTerm STARTS WITH 'Proof' OR n.preferredTerm ENDS WITH 'Twin' OR n.definition CONTAINS 'Self-' RETURN n.iri ORDER BY n.iri",
        &["ai:SelfAttention", "bc:ProofOfStake", "bc:ProofOfWork", "mv:DigitalTwin"],
    ),
    (
        "MATCH (n:OwlClass) WHERE n:`bc:Consensus` AND NOT n:`bc:ProofOfWork` RETURN n.iri ORDER BY n.iri",
        &["bc:Consensus", "bc:ProofOfStake"],
    ),
    (
        "MATCH (n:OwlClass WHERE n.qualityScore > 0.92)-[:SUBCLASS_OF]->(p) RETURN n.iri, p.iri ORDER BY n.iri",
        &[
            "ai:LargeLanguageModel | ai:LanguageModel",
            "ai:MachineLearning | ai:AIConcept",
            "bc:Blockchain | bc:DistributedLedger",
        ],
    ),
    // A property map naming a variable bound further along the pattern.
    ("MATCH (a:OwlClass {domain: b.domain})-[:HAS_PART]->(b) RETURN count(*)", &["5"]),
    // Individuals.
    (
        "MATCH (i:Individual)-[:INSTANCE_OF]->(c) RETURN i.iri, c.iri",
        &[
            "ai:GPT4 | ai:LargeLanguageModel",
            "bc:Ethereum | bc:Blockchain",
            "bc:Bitcoin | bc:Blockchain",
            "mv:Decentraland | mv:VirtualWorld",
        ],
    ),
    ("MATCH (i:Individual:`bc:Ledger`) RETURN i.iri", &["bc:Ethereum", "bc:Bitcoin"]),
    // Projection: DISTINCT, aggregates, functions, ORDER BY, SKIP, LIMIT.
    ("MATCH (n:OwlClass) RETURN DISTINCT n.domain AS d", &["ai", "bc", "mv"]),
    (
        "MATCH (n:`mv:MetaverseConcept`:OwlClass) OPTIONAL MATCH (n)-[:HAS_PART]->(p) RETURN n.iri, count(p) AS parts, count(*) AS rows ORDER BY parts DESC, n.iri LIMIT 3",
        &["mv:VirtualWorld | 2 | 2", "mv:Agent | 0 | 1", "mv:Avatar | 0 | 1"],
    ),
    (
        "MATCH (c:OwlClass)-[:SUBCLASS_OF]->(p) RETURN count(p) AS edges, count(DISTINCT p) AS parents",
        &["32 | 15"],
    ),
    (
        "MATCH ({iri: 'ai:Transformer'})-[:HAS_PART]->(p) RETURN collect(p.preferredTerm) AS parts",
        &["[Self-Attention, Embedding]"],
    ),
    ("MATCH (n:OwlClass) RETURN collect(DISTINCT n.maturity) AS m", &["[mature, emerging]"]),
    (
        "MATCH (n {iri: 'ai:VisionTransformer'}) RETURN labels(n)",
        &["[OwlClass, ai:VisionTransformer, ai:AIConcept, ai:ComputerVisionModel, ai:MachineLearning, ai:NeuralNetwork, ai:Transformer]"],
    ),
    (
        "MATCH (a {iri: 'mv:Avatar'})-[r]->(b {iri: 'ai:Agent'}) RETURN type(r), startNode(r).iri, endNode(r).iri",
        &["BRIDGES_TO | mv:Avatar | ai:Agent"],
    ),
    (
        "MATCH (n:OwlClass) WHERE n.maturity = 'mature' AND n.qualityScore >= 0.85 RETURN n.domain, n.iri ORDER BY n.domain DESC, n.qualityScore ASC, n.iri",
        &[
            "mv | mv:DigitalTwin",
            "bc | bc:Consensus",
            "bc | bc:SmartContract",
            "bc | bc:Blockchain",
            "ai | ai:LanguageModel",
            "ai | ai:NeuralNetwork",
            "ai | ai:Transformer",
            "ai | ai:MachineLearning",
        ],
    ),
    (
        "MATCH (n:OwlClass) RETURN n.iri ORDER BY n.iri SKIP 2 LIMIT 3",
        &["ai:AttentionMechanism", "ai:ComputerVisionModel", "ai:Embedding"],
    ),
    ("MATCH (n:OwlClass) RETURN n.iri SKIP 30", &["mv:NFT", "mv:VirtualEconomy", "mv:Headset"]),
    ("MATCH (n:OwlClass) RETURN n.iri LIMIT 0", &[]),
    (
        "MATCH (n:OwlClass) RETURN n.domain, count(*) ORDER BY count(*) DESC, n.domain",
        &["ai | 13", "bc | 11", "mv | 9"],
    ),
    (
        "MATCH (n:OwlClass) WHERE n.domain = 'bc' RETURN min(n.qualityScore) AS lo, max(n.qualityScore) AS hi, sum(1) AS n, min(n.iri) AS first, avg(n.authorityScore) AS a",
        &["0.4 | 0.97 | 11 | bc:Agent | 0.5"],
    ),
    ("MATCH (n {iri: 'nope'}) RETURN count(*) AS c, collect(n) AS l, sum(n.qualityScore) AS s", &["0 | [] | 0"]),
    (
        "MATCH (n {iri: 'ai:Embedding'}) RETURN size(keys(n)), properties(n).termId, n.altTerms",
        &["13 | AI-0011 | [Vector Embedding]"],
    ),
    // WITH, UNWIND, several MATCH clauses.
    (
        "MATCH (c:OwlClass)-[:SUBCLASS_OF]->(p) WITH p, count(c) AS kids WHERE kids > 2 RETURN p.iri, kids ORDER BY kids DESC, p.iri",
        &["bc:BlockchainConcept | 6", "mv:MetaverseConcept | 6", "ai:AIConcept | 5"],
    ),
    (
        "MATCH (n:OwlClass) WITH DISTINCT n.domain AS d ORDER BY d DESC LIMIT 2 RETURN collect(d) AS ds",
        &["[mv, bc]"],
    ),
    (
        "UNWIND ['mv', 'bc'] AS d MATCH (n:OwlClass {domain: d}) RETURN d, count(n) AS classes",
        &["mv | 9", "bc | 11"],
    ),
    (
        "MATCH (a {iri: 'mv:Avatar'}), (b {iri: 'ai:Agent'}) MATCH (a)-[r:BRIDGES_TO]->(b) RETURN type(r), a.preferredTerm, b.preferredTerm",
        &["BRIDGES_TO | Avatar | AI Agent"],
    ),
    (
        "MATCH (v {iri: 'mv:VirtualWorld'}) OPTIONAL MATCH (v)-[:BRIDGES_TO]->(x) RETURN v.iri, x",
        &["mv:VirtualWorld | null"],
    ),
    (
        "MATCH (v {iri: 'mv:VirtualWorld'}) OPTIONAL MATCH (v)-[:HAS_PART]->(p) WHERE p.qualityScore > 0.8 RETURN v.iri, p.iri",
        &["mv:VirtualWorld | mv:Avatar"],
    ),
    (
        "MATCH (v {iri: 'mv:VirtualWorld'}) OPTIONAL MATCH (v)-[:HAS_PART]->(p) WHERE p.qualityScore > 0.9 RETURN v.iri, p.iri",
        &["mv:VirtualWorld | null"],
    ),
    // Expressions without a graph.
    (
        "RETURN toUpper('ab') AS u, size([1, 2, 3]) AS s, 7 / 2 AS i, 7.0 / 2 AS f, 2 ^ 3 AS p, 7 % 3 AS m, coalesce(null, 'x') AS c, 'a' + 'b' AS cat, [1] + [2] AS l, -(3 - 5) AS neg, toLower('ÄB') AS low, toString(2.5) AS ts",
        &["AB | 3 | 3 | 3.5 | 8 | 1 | x | ab | [1, 2] | 2 | äb | 2.5"],
    ),
    ("RETURN 1 IN [1, null] AS a, 2 IN [1, null] AS b, null = null AS c, NOT null AS d", &["true | null | null | null"]),
];

#[test]
fn every_case_answers_its_rows() {
    let f = fixture();
    assert!(CASES.len() >= 30);
    let mut failures = Vec::new();
    for (q, expected) in CASES {
        match execute(&f.graph, &f.schema, q, &Limits::default()) {
            Ok(out) => {
                let got: Vec<String> = out
                    .rows
                    .iter()
                    .map(|r| {
                        r.iter()
                            .map(|v| show(&f.graph, v))
                            .collect::<Vec<_>>()
                            .join(" | ")
                    })
                    .collect();
                if got != *expected {
                    failures.push(format!("{q}\n  expected {expected:?}\n  got      {got:?}"));
                }
            }
            Err(e) => failures.push(format!("{q}\n  error {e}")),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases failed:\n{}",
        failures.len(),
        CASES.len(),
        failures.join("\n")
    );
}

#[test]
fn columns_are_named_by_alias_variable_or_text() {
    let f = fixture();
    let out = run(
        &f,
        "MATCH (a {iri: 'bc:Blockchain'})-[:HAS_PART]->(b) RETURN *",
    );
    assert_eq!(out.columns, ["a", "b"]);
    assert_eq!(
        rows(
            &f,
            "MATCH (a {iri: 'bc:Blockchain'})-[:HAS_PART]->(b) RETURN *"
        ),
        ["bc:Blockchain | bc:Block"]
    );
    let out = run(
        &f,
        "MATCH (n:OwlClass) RETURN n.iri, count(*) AS c, n LIMIT 1",
    );
    assert_eq!(out.columns, ["n.iri", "c", "n"]);
    assert_eq!(out.rows[0][2], Value::Node(f.ids["ai:AIConcept"]));
}

#[test]
fn without_order_by_the_order_is_the_match_order_and_repeats() {
    let f = fixture();
    let q = "MATCH (a:OwlClass)-[r]->(b) RETURN a.iri, type(r), b.iri";
    let first = rows(&f, q);
    assert_eq!(first, rows(&f, q));
    assert_eq!(first[0], "ai:MachineLearning | SUBCLASS_OF | ai:AIConcept");
}

#[test]
fn aliases_and_bounds_are_noted() {
    let f = fixture();
    let out = run(&f, "MATCH (n:Transformer) RETURN count(n)");
    assert_eq!(out.notes, ["label `Transformer` read as `ai:Transformer`"]);
    let out = run(&f, "MATCH ({iri: 'ai:Agent'})-[*]->(b) RETURN count(*)");
    assert!(
        out.notes.iter().any(|n| n.contains("capped at 10 hops")),
        "{:?}",
        out.notes
    );
}

#[test]
fn semantic_mistakes_are_named() {
    let f = fixture();
    for (q, needle) in [
        ("MATCH (n:OwlClass) RETURN nn.iri", "did you mean `n`"),
        (
            "MATCH (n:OwlClass) RETURN toUppr(n.iri)",
            "nearest: toUpper()",
        ),
        (
            "MATCH (n:OwlClass) WHERE count(n) > 1 RETURN n",
            "only appear in WITH and RETURN",
        ),
        ("MATCH (n:OwlClass) WITH n.iri RETURN 1", "needs a name"),
        (
            "MATCH (n:OwlClass) RETURN n.iri AS x, n.domain AS x",
            "two columns",
        ),
        ("MATCH (n:OwlClass) RETURN n LIMIT -1", "non-negative"),
        (
            "MATCH (n:OwlClass) RETURN n.iri, count(*) + n.qualityScore",
            "aggregate with variables",
        ),
        ("MATCH (a)-[r]->(b)-[r]->(c) RETURN a", "used twice"),
        ("MATCH (a)-[r]->(b) MATCH (r) RETURN a", "already bound"),
        ("MATCH (a)-[*11..12]->(b) RETURN a", "at most 10 hops"),
    ] {
        let e = execute(&f.graph, &f.schema, q, &Limits::default()).expect_err(q);
        assert!(e.message.contains(needle), "{q}: {e}");
        assert!(e.position.is_some(), "{q}");
    }
}

#[test]
fn type_errors_stop_with_their_position() {
    let f = fixture();
    let e = execute(
        &f.graph,
        &f.schema,
        "MATCH (n:OwlClass) WHERE n.iri RETURN n",
        &Limits::default(),
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::Evaluation);
    let e = execute(&f.graph, &f.schema, "RETURN 1 / 0", &Limits::default()).unwrap_err();
    assert_eq!(
        (e.kind, e.position.map(|p| p.column)),
        (ErrorKind::Evaluation, Some(8))
    );
    let e = execute(
        &f.graph,
        &f.schema,
        "RETURN 9223372036854775807 + 1",
        &Limits::default(),
    )
    .unwrap_err();
    assert!(e.message.contains("overflow"));
}

#[test]
fn traversal_over_the_fixture() {
    let f = fixture();
    let opts = TraverseOptions {
        depth: 1,
        rel_types: Some(vec!["HAS_PART".into(), "has_part".into()]),
        direction: TraverseDirection::Outgoing,
        max_nodes: 50,
    };
    let sub = traverse(&f.graph, &f.schema, f.ids["ai:Transformer"], &opts).unwrap();
    let names: Vec<String> = sub
        .nodes
        .iter()
        .map(|r| show(&f.graph, &Value::Node(r.node)))
        .collect();
    assert_eq!(
        names,
        ["ai:Transformer", "ai:SelfAttention", "ai:Embedding"]
    );
    assert_eq!(sub.edges.len(), 2);
    let opts = TraverseOptions {
        depth: 2,
        rel_types: Some(vec!["SUBCLASS_OF".into()]),
        direction: TraverseDirection::Incoming,
        max_nodes: 50,
    };
    let sub = traverse(&f.graph, &f.schema, f.ids["bc:BlockchainConcept"], &opts).unwrap();
    // Six children, then the grandchildren: Ledger's one, Consensus's two, and
    // the NFT, inferred under Token.
    assert_eq!(sub.nodes.len(), 1 + 6 + 4);
    assert_eq!(sub.nodes.iter().filter(|r| r.depth == 2).count(), 4);
}
