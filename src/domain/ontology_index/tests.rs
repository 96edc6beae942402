//! The fixture ontology served as a graph: labels by subsumption, the taxonomy's
//! inferred flags, relationship types from existentials and assertions, keyword
//! matching, and discovery's expansion and flags.

use super::discover::{days, discover, FoundBy, Matched, Options, Seed};
use super::*;
use crate::domain::ontology::model::load_pages;
use crate::domain::ontology_query::{execute, Limits};

fn fixture() -> Index {
    let dir = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/ontology/pages");
    let mut files: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .map(|p| {
            (
                format!("pages/{}", p.file_name().unwrap().to_string_lossy()),
                std::fs::read_to_string(&p).unwrap(),
            )
        })
        .collect();
    files.sort();
    let l = load_pages(files.iter().map(|(f, t)| (f.as_str(), t.as_str())));
    assert!(l.problems.is_empty(), "{:?}", l.problems);
    Index::build(l.ontology)
}

fn rows(ix: &Index, q: &str) -> Vec<String> {
    let out = execute(&ix.graph, &ix.schema, q, &Limits::default())
        .unwrap_or_else(|e| panic!("{q}: {e}"));
    out.rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|v| v.to_string().trim_matches('"').to_string())
                .collect::<Vec<_>>()
                .join(" | ")
        })
        .collect()
}

#[test]
fn rel_types_are_upper_snake_local_names() {
    assert_eq!(rel_type("core:hasPart"), "HAS_PART");
    assert_eq!(rel_type("core:bridgesTo"), "BRIDGES_TO");
    assert_eq!(rel_type("ai:processes"), "PROCESSES");
    assert_eq!(rel_type("<http://x.org/o#runsOn2D>"), "RUNS_ON2_D");
    assert_eq!(rel_type("ex:part-of"), "PART_OF");
}

#[test]
fn classes_carry_their_superclasses_as_labels_and_the_taxonomy_its_flags() {
    let ix = fixture();
    // Transformer is an Accelerated Model only by inference (has part o requires).
    assert!(rows(&ix, "MATCH (n:`ai:AcceleratedModel`) RETURN n.iri")
        .contains(&"ai:Transformer".to_string()));
    let flags = rows(
        &ix,
        "MATCH (c {iri: 'ai:ImageClassifier'})-[r:SUBCLASS_OF]->(p) RETURN p.iri, r.inferred ORDER BY p.iri",
    );
    // Its direct parent Vision Model follows from the domain of `processes` and the
    // definition of Vision Model; no axiom states it.
    assert!(
        flags.contains(&"ai:VisionModel | true".to_string()),
        "{flags:?}"
    );
    let asserted = rows(
        &ix,
        "MATCH ({iri: 'ai:VisionTransformer'})-[r:SUBCLASS_OF]->(p) RETURN p.iri, r.inferred",
    );
    assert!(
        asserted.contains(&"ai:Transformer | false".to_string()),
        "{asserted:?}"
    );
    // Existentials become typed relationships; aliases resolve property names.
    let parts = rows(
        &ix,
        "MATCH ({iri: 'ai:Transformer'})-[:HAS_PART]->(p) RETURN p.iri ORDER BY p.iri",
    );
    assert_eq!(parts.len(), 3, "{parts:?}");
    assert_eq!(
        rows(
            &ix,
            "MATCH ({iri: 'ai:Transformer'})-[:hasPart]->(p) RETURN count(p)"
        ),
        vec!["3"]
    );
    assert_eq!(
        rows(
            &ix,
            "MATCH (i:Individual {iri: 'ai:GPT4'})-[:INSTANCE_OF]->(t) RETURN t.iri"
        ),
        vec!["ai:LargeLanguageModel"]
    );
    assert!(ix.graph.node_count() >= 92);
}

#[test]
fn names_resolve_by_iri_term_id_term_title_and_local_name() {
    let ix = fixture();
    assert_eq!(
        ix.resolve("ai:VisionTransformer"),
        Some("ai:VisionTransformer")
    );
    assert_eq!(ix.resolve("AI-0023"), Some("ai:VisionTransformer"));
    assert_eq!(
        ix.resolve("vision transformer"),
        Some("ai:VisionTransformer")
    );
    assert_eq!(
        ix.resolve("[[Vision Transformer]]"),
        Some("ai:VisionTransformer")
    );
    assert_eq!(
        ix.resolve("VisionTransformer"),
        Some("ai:VisionTransformer")
    );
    assert_eq!(ix.resolve("ViT-B/16"), Some("ai:ViTB16"));
    assert_eq!(ix.resolve("ai:VisionTransfomer"), None);
    assert!(ix
        .nearest("ai:VisionTransfomer")
        .contains(&"ai:VisionTransformer".to_string()));
}

#[test]
fn keyword_matching_prefers_the_whole_term() {
    let ix = fixture();
    let hits = ix.terms.search("transformers", 5);
    assert_eq!(hits[0], ("ai:Transformer", 1.0));
    assert!(
        hits.iter()
            .any(|(i, s)| *i == "ai:VisionTransformer" && (*s - 0.75).abs() < 1e-6),
        "{hits:?}"
    );
    assert_eq!(
        ix.terms.search("ViT", 1)[0].0,
        "ai:VisionTransformer",
        "alternative terms match"
    );
    assert_eq!(
        ix.terms.search("AI-0023", 1)[0],
        ("ai:VisionTransformer", 1.0)
    );
    assert!(ix.terms.search("zzzz qqqq", 5).is_empty());
    assert!(ix.terms.search("", 5).is_empty());
}

#[test]
fn discovery_expands_the_taxonomy_and_flags_inference() {
    let ix = fixture();
    let today = days("2026-02-11").unwrap();
    let seeds = vec![Seed {
        iri: "ai:AcceleratedModel".into(),
        score: 1.0,
        matched: Matched::Keyword,
    }];
    let found = discover(
        &ix,
        &seeds,
        &Options {
            limit: 100,
            domain: None,
            today,
        },
    );
    let get = |iri: &str| found.iter().find(|f| f.iri == iri);
    let first = &found[0];
    assert_eq!(first.iri, "ai:AcceleratedModel");
    assert_eq!(first.found_by, FoundBy::Keyword);
    assert!(!first.inferred_only);
    // Below it only through the reasoner.
    let t = get("ai:Transformer").expect("the transformer is inferred below");
    assert!(t.inferred_only, "{t:?}");
    assert_eq!(t.found_by, FoundBy::Hierarchy);
    // Its asserted parent.
    assert!(!get("ai:MachineLearningModel").unwrap().inferred_only);
    // Relationship fan-out, and the score's parts.
    let gpu = get("ai:GPUAccelerator").expect("requires some GPU Accelerator");
    assert_eq!(gpu.found_by, FoundBy::Relationship);
    assert!(
        (first.relevance
            - (0.4 + first.quality * 0.3 + first.authority * 0.2 + first.recency * 0.1))
            .abs()
            < 1e-5
    );
    assert_eq!(first.recency, 1.0);
    let ai_only = discover(
        &ix,
        &seeds,
        &Options {
            limit: 100,
            domain: Some("bc".into()),
            today,
        },
    );
    assert!(ai_only.iter().all(|f| f.domain == "bc"));
    let few = discover(
        &ix,
        &seeds,
        &Options {
            limit: 2,
            domain: None,
            today,
        },
    );
    assert_eq!(few.len(), 2);
}
