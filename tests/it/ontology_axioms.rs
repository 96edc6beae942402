//! Proposals that state any axiom the reasoner takes, in the shape
//! `ontology_validate` takes: an equivalence with an intersection and an
//! existential, a sub-property, a property assertion, written on the proposed
//! class's page, checked before staging, shown in the diff, and read back by a sync
//! after the branch is merged; bad expressions refused naming their field.

use serde_json::{json, Value};

use crate::ontology_fidelity::Blank;

const PANTRY: &str = "Prefix(b:=<http://example.org/pantry#>)\nOntology(\n\
    Declaration(Class(b:BakedGood))\nDeclaration(Class(b:Flour))\nDeclaration(Class(b:RyeFlour))\n\
    Declaration(Class(b:Pumpernickel))\nDeclaration(Class(b:Scone))\n\
    Declaration(ObjectProperty(b:hasIngredient))\nDeclaration(ObjectProperty(b:madeFrom))\n\
    Declaration(NamedIndividual(b:loaf1))\nDeclaration(NamedIndividual(b:sack1))\n\
    AnnotationAssertion(rdfs:label b:BakedGood \"Baked Good\")\n\
    SubClassOf(b:RyeFlour b:Flour)\n\
    SubClassOf(b:Pumpernickel ObjectIntersectionOf(b:BakedGood ObjectSomeValuesFrom(b:hasIngredient b:RyeFlour)))\n\
    SubClassOf(b:Scone ObjectIntersectionOf(b:BakedGood ObjectSomeValuesFrom(b:madeFrom b:Flour)))\n\
    ClassAssertion(b:BakedGood b:loaf1)\nClassAssertion(b:RyeFlour b:sack1)\n)\n";

fn agent() -> Value {
    json!({"agentType": "coder", "taskDescription": "bread in the pantry", "confidence": 0.8})
}

/// A create proposal for a class under Baked Good with these axioms.
fn create(term: &str, axioms: Value) -> Value {
    json!({"operation": "create", "agentContext": agent(), "preferredTerm": term,
           "definition": format!("{term}: a baked good defined by what goes into it."),
           "domain": "b", "isSubclassOf": ["Baked Good"], "physicality": "PhysicalEntity",
           "role": "Artifact", "axioms": axioms})
}

/// A file of a proposal's branch.
fn on_branch(b: &Blank, p: &Value, path: &str) -> String {
    let branch = p["branch"].as_str().unwrap();
    b.repo.git(&["show", &format!("{branch}:{path}")])
}

fn merge(b: &Blank, p: &Value) {
    b.repo
        .git(&["merge", "-q", "--ff-only", p["branch"].as_str().unwrap()]);
}

fn gained(p: &Value, sub: &str, sup: &str) -> bool {
    p.to_string()
        .contains(&json!({"sub": sub, "sup": sup}).to_string())
}

#[tokio::test]
async fn a_proposal_states_an_equivalence_with_an_expression_and_it_classifies() {
    let b = Blank::new().await;
    b.import(PANTRY).await;
    let p = b
        .ok(
            "ontology_propose",
            create(
                "Bread",
                json!([{"axiomType": "EquivalentClasses",
                        "object": "b:BakedGood and (b:hasIngredient some b:Flour)"}]),
            ),
        )
        .await;
    let line = "owl:equivalentClass:: b:BakedGood and (b:hasIngredient some b:Flour)";
    let page = on_branch(&b, &p, "pages/Bread.md");
    assert!(page.contains(line), "{page}");
    assert!(
        p["diff"]
            .as_str()
            .unwrap()
            .contains(&format!("+    - {line}")),
        "{p:#}"
    );
    // Checked before staging: Pumpernickel has rye flour, a flour, so it is a bread.
    assert!(gained(&p, "b:Pumpernickel", "b:Bread"), "{p:#}");
    merge(&b, &p);
    let s = b.sync().await;
    assert_eq!(s["problemCount"], json!(0), "{s:#}");
    let r = b
        .ok("ontology_read", json!({"iri": "b:Pumpernickel"}))
        .await;
    assert!(r.to_string().contains("b:Bread"), "{r:#}");
    let r = b.ok("ontology_read", json!({"iri": "b:Bread"})).await;
    assert!(
        r.to_string().contains("b:hasIngredient some b:Flour"),
        "{r:#}"
    );

    // A property axiom stated on a class page: made from is a kind of having an
    // ingredient, so a scone (made from flour) is a bread.
    let p = b
        .ok(
            "ontology_propose",
            json!({"operation": "amend", "agentContext": agent(), "iri": "b:Bread",
                   "axioms": [{"axiomType": "SubObjectPropertyOf", "subject": "b:madeFrom",
                               "object": "b:hasIngredient"}]}),
        )
        .await;
    let line = "owl:axiom:: b:madeFrom SubPropertyOf b:hasIngredient";
    assert!(on_branch(&b, &p, "pages/Bread.md").contains(line), "{p:#}");
    assert!(p["diff"].as_str().unwrap().contains(line), "{p:#}");
    assert!(gained(&p, "b:Scone", "b:Bread"), "{p:#}");
    merge(&b, &p);
    let s = b.sync().await;
    assert_eq!(s["problemCount"], json!(0), "{s:#}");
    let r = b.ok("ontology_read", json!({"iri": "b:Scone"})).await;
    assert!(r.to_string().contains("b:Bread"), "{r:#}");

    // An individual's property assertion: this loaf has rye flour in it.
    let p = b
        .ok(
            "ontology_propose",
            json!({"operation": "amend", "agentContext": agent(), "iri": "b:Bread",
                   "axioms": [{"axiomType": "ObjectPropertyAssertion", "subject": "b:loaf1",
                               "property": "b:hasIngredient", "object": "b:sack1"}]}),
        )
        .await;
    let line = "owl:axiom:: b:loaf1 Facts b:hasIngredient b:sack1";
    assert!(on_branch(&b, &p, "pages/Bread.md").contains(line), "{p:#}");
    merge(&b, &p);
    let s = b.sync().await;
    assert_eq!(s["problemCount"], json!(0), "{s:#}");
    let v = b
        .ok(
            "ontology_query",
            json!({"cypher": "MATCH (i)-[:INSTANCE_OF]->(c) WHERE i.iri = 'b:loaf1' RETURN c.iri"}),
        )
        .await;
    assert!(v.to_string().contains("b:Bread"), "{v:#}");
    b.c.stop().await;
}

#[tokio::test]
async fn a_proposed_axiom_that_breaks_the_ontology_or_does_not_parse_is_refused() {
    let b = Blank::new().await;
    b.import(PANTRY).await;
    // Disjoint from its own parent: unsatisfiable, refused as validate reports it.
    let e = b
        .err(
            "ontology_propose",
            create(
                "Stone Loaf",
                json!([{"axiomType": "DisjointClasses", "object": "b:BakedGood"}]),
            ),
            "INVARIANT_VIOLATION",
        )
        .await;
    assert!(e.to_string().contains("b:StoneLoaf"), "{e:#}");
    let v = b
        .ok(
            "ontology_validate",
            json!({"axioms": [{"axiomType": "DisjointClasses", "subject": "b:Pumpernickel",
                               "object": "b:BakedGood"}]}),
        )
        .await;
    assert_eq!(v["newlyUnsatisfiable"], json!(["b:Pumpernickel"]), "{v:#}");
    // Bad expressions, the same refusal from both tools, naming the field.
    let cases = [
        (
            json!({"axiomType": "EquivalentClasses", "object": "b:BakedGood and (b:hasIngredient some"}),
            "axioms[0].object",
        ),
        (
            json!({"axiomType": "SubClassOf", "object": "b:BakedGood or b:Flour"}),
            "axioms[0].object",
        ),
        (
            json!({"axiomType": "SubObjectPropertyOf", "subject": "b:madeFrom o", "object": "b:hasIngredient"}),
            "axioms[0].subject",
        ),
        (
            json!({"axiomType": "EquivalentClasses", "object": "b:Nowhere and b:Flour"}),
            "axioms[0]",
        ),
        (
            json!({"axiomType": "Equivalence", "object": "b:Flour"}),
            "axioms[0].axiomType",
        ),
    ];
    for (axiom, parameter) in cases {
        let e = b
            .err(
                "ontology_propose",
                create("Odd Loaf", json!([axiom.clone()])),
                "VALIDATION_ERROR",
            )
            .await;
        assert_eq!(e["details"]["parameter"], json!(parameter), "{e:#}");
        let mut hypothesis = axiom.clone();
        hypothesis["subject"] = hypothesis
            .get("subject")
            .cloned()
            .unwrap_or(json!("b:Scone"));
        let e = b
            .err(
                "ontology_validate",
                json!({"axioms": [hypothesis]}),
                "VALIDATION_ERROR",
            )
            .await;
        assert_eq!(e["details"]["parameter"], json!(parameter), "{e:#}");
    }
    // Nothing was staged.
    let l = b
        .ok("manage_ontology", json!({"operation": "proposals"}))
        .await;
    assert!(!l.to_string().contains("Odd Loaf"), "{l:#}");
    b.c.stop().await;
}
