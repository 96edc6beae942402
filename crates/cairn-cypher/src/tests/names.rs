//! Unknown names: the hint each gets, and the repairs made when one name is clearly
//! meant.

use super::*;

fn repaired(f: &Fixture, q: &str) -> QueryOutcome {
    let out = run(f, q);
    assert!(!out.repairs.is_empty(), "{q}: nothing was repaired");
    out
}

fn refused(f: &Fixture, q: &str, limits: &Limits) -> QueryError {
    let e = execute(&f.graph, &f.schema, q, limits).expect_err(q);
    assert_eq!(e.kind, ErrorKind::UnknownName, "{q}: {e}");
    e
}

#[test]
fn a_misspelled_relationship_type_is_repaired_and_reported() {
    let f = fixture();
    let q = "MATCH (a:OwlClass)-[:HAS_PRT]->(p) RETURN count(*)";
    let out = repaired(&f, q);
    assert_eq!(out.rows, [[Value::Int(5)]]);
    let r = &out.repairs[0];
    assert_eq!(
        (r.kind, r.from.as_str(), r.to.as_str()),
        (NameKind::RelationshipType, "HAS_PRT", "HAS_PART")
    );
    assert_eq!((r.position.line, r.position.column), (1, 22));
    assert_eq!(
        out.query,
        "MATCH (a:OwlClass)-[:HAS_PART]->(p) RETURN count(*)"
    );
}

#[test]
fn case_and_separator_differences_repair_first() {
    let f = fixture();
    for (q, from, to) in [
        (
            "MATCH (a)-[:has_part]->(p) RETURN count(*)",
            "has_part",
            "HAS_PART",
        ),
        (
            "MATCH (a)-[:hasPart]->(p) RETURN count(*)",
            "hasPart",
            "HAS_PART",
        ),
        (
            "MATCH (a:owlclass)-[:HAS_PART]->(p) RETURN count(*)",
            "owlclass",
            "OwlClass",
        ),
        (
            "MATCH (a:OwlClass) WHERE a.qualityscore > 2 RETURN count(*)",
            "qualityscore",
            "qualityScore",
        ),
    ] {
        let out = repaired(&f, q);
        assert_eq!(
            (out.repairs[0].from.as_str(), out.repairs[0].to.as_str()),
            (from, to),
            "{q}"
        );
    }
}

#[test]
fn typos_in_labels_and_keys_are_repaired() {
    let f = fixture();
    let out = repaired(
        &f,
        "MATCH (n:OwlClas {iri: 'ai:Agent'}) RETURN n.preferedTerm",
    );
    assert_eq!(out.rows, [[Value::from("AI Agent")]]);
    let pairs: Vec<(&str, &str)> = out
        .repairs
        .iter()
        .map(|r| (r.from.as_str(), r.to.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [("OwlClas", "OwlClass"), ("preferedTerm", "preferredTerm")],
        "both in one round, in text order"
    );
    let out = repaired(&f, "MATCH (a)-[:REQIURES]->(b) RETURN count(*)");
    assert_eq!(out.rows, [[Value::Int(4)]]);
}

#[test]
fn a_misspelled_local_name_is_repaired_to_its_iri() {
    let f = fixture();
    let out = repaired(&f, "MATCH (n:VisionTransfomer) RETURN n.iri");
    assert_eq!(out.repairs[0].to, "ai:VisionTransformer");
    assert_eq!(out.query, "MATCH (n:`ai:VisionTransformer`) RETURN n.iri");
    assert_eq!(rows(&f, &out.query), ["ai:VisionTransformer"]);
    // Written with its prefix and no backticks: the two parts are read as one.
    let out = repaired(&f, "MATCH (n:ai:VisionTransfomer) RETURN n.iri");
    assert_eq!(out.repairs[0].from, "ai:VisionTransfomer");
    assert_eq!(out.rows.len(), 1);
}

#[test]
fn an_ambiguous_local_name_lists_its_iris_and_is_not_repaired() {
    let f = fixture();
    let e = refused(&f, "MATCH (n:Agent) RETURN n", &Limits::default());
    let p = &e.details.problems[0];
    assert!(p.ambiguous);
    assert_eq!(p.suggestions, ["ai:Agent", "bc:Agent", "mv:Agent"]);
    assert_eq!(p.repair, None);
    assert!(e.message.contains("ai:Agent, bc:Agent, mv:Agent"), "{e}");
    assert!(e.details.repairs.is_empty());
}

#[test]
fn two_near_names_hint_both_and_repair_neither() {
    let f = fixture();
    // A name as near to one type as to another is only hinted.
    let mut schema = f.schema.clone();
    schema.add(NameKind::RelationshipType, "HAS_PARENT");
    schema.add(NameKind::RelationshipType, "HAS_PATENT");
    let e = execute(
        &f.graph,
        &schema,
        "MATCH (a)-[:HAS_PAMENT]->(b) RETURN a",
        &Limits::default(),
    )
    .unwrap_err();
    assert_eq!(e.kind, ErrorKind::UnknownName);
    assert_eq!(e.details.problems[0].repair, None);
    let s = &e.details.problems[0].suggestions;
    assert_eq!(
        s[..2],
        ["HAS_PARENT".to_string(), "HAS_PATENT".to_string()],
        "{s:?}"
    );
}

#[test]
fn a_far_name_gets_hints_or_none_but_no_repair() {
    let f = fixture();
    let e = refused(&f, "MATCH (n:Banana) RETURN n", &Limits::default());
    assert_eq!(e.details.problems[0].repair, None);
    assert_eq!(e.details.problems[0].kind, NameKind::Label);
    let e = refused(
        &f,
        "MATCH (n)-[:CONTAINS_PIECE]->(m) RETURN n",
        &Limits::default(),
    );
    assert_eq!(e.details.problems[0].kind, NameKind::RelationshipType);
    assert_eq!(e.details.problems[0].repair, None);
}

#[test]
fn one_unrepairable_name_leaves_every_name_as_written() {
    let f = fixture();
    let e = refused(
        &f,
        "MATCH (n:OwlClas)-[:ZZZ_QQQ]->(m)\nRETURN n.preferedTerm",
        &Limits::default(),
    );
    let names: Vec<&str> = e.details.problems.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["OwlClas", "ZZZ_QQQ", "preferedTerm"]);
    assert_eq!(
        e.details.problems[0].repair.as_deref(),
        Some("OwlClass"),
        "the hint still names the fix"
    );
    let p = e.details.problems[2].position.unwrap();
    assert_eq!((p.line, p.column), (2, 10));
    assert!(e.details.repairs.is_empty());
}

#[test]
fn max_repair_zero_only_hints() {
    let f = fixture();
    let limits = Limits {
        max_repair: 0,
        ..Limits::default()
    };
    let e = refused(&f, "MATCH (a)-[:HAS_PRT]->(p) RETURN p", &limits);
    assert_eq!(
        e.details.problems[0]
            .suggestions
            .first()
            .map(String::as_str),
        Some("HAS_PART")
    );
    assert!(e.to_string().contains("nearest: HAS_PART"), "{e}");
}

#[test]
fn non_ascii_names_are_hinted() {
    let mut g = PropertyGraph::new();
    let a = g.add_node(["Straße", "Kätzchen"], [("größe", Value::Int(3))]);
    let b = g.add_node(["日本語ラベル"], [("größe", Value::Int(4))]);
    g.add_edge(a, b, "GEHÖRT_ZU", [("gewicht", Value::Float(1.0))])
        .unwrap();
    let s = Schema::from_graph(&g);
    let run = |q: &str| execute(&g, &s, q, &Limits::default());
    let out = run("MATCH (n:Strasse) RETURN n.grösse").unwrap();
    let pairs: Vec<(&str, &str)> = out
        .repairs
        .iter()
        .map(|r| (r.from.as_str(), r.to.as_str()))
        .collect();
    assert_eq!(pairs, [("Strasse", "Straße"), ("grösse", "größe")]);
    assert_eq!(out.rows, [[Value::Int(3)]]);
    let out = run("MATCH (n)-[:gehört_zu]->(m:`日本語ラベ`) RETURN m.größe").unwrap();
    assert_eq!(out.rows, [[Value::Int(4)]]);
    let e = run("MATCH (n:`ÄÖÜ`)-[:`🦀`]->(m:``) RETURN n").unwrap_err();
    assert_eq!(e.kind, ErrorKind::UnknownName);
    assert_eq!(e.details.problems.len(), 3);
}

#[test]
fn a_problem_position_counts_characters_not_bytes() {
    let f = fixture();
    let e = refused(
        &f,
        "MATCH (n:OwlClass) WHERE n.iri = 'ä€' AND n.zzzqqq = 1 RETURN n",
        &Limits::default(),
    );
    let p = e.details.problems[0].position.unwrap();
    assert_eq!(
        p.column,
        "MATCH (n:OwlClass) WHERE n.iri = 'ä€' AND n."
            .chars()
            .count()
            + 1
    );
}
