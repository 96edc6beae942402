//! What leaves Cairn as it came in, through MCP on ontologies written here: an OFN
//! document's namespaces (kept in the repository's prefix map, read back by every
//! sync), exports written to a file instead of the answer, and hypothetical axioms
//! of every kind the reasoner takes.

use serde_json::{json, Value};

use crate::ontology_fidelity::{class_page, Blank};

const BAKERY: &str = "Prefix(ex:=<http://example.org/bakery#>)\n\
    Prefix(:=<http://example.org/bakery/crumbs#>)\n\
    Ontology(<http://example.org/bakery>\n\
    Declaration(Class(ex:Bread))\nDeclaration(Class(ex:Rye))\nDeclaration(Class(:Crumb))\n\
    Declaration(ObjectProperty(ex:hasCrumb))\n\
    AnnotationAssertion(rdfs:label ex:Rye \"Rye\")\n\
    SubClassOf(ex:Rye ex:Bread)\n\
    SubClassOf(ex:Bread ObjectSomeValuesFrom(ex:hasCrumb :Crumb))\n)\n";

/// The document an export wrote, by the path it answered.
fn exported(b: &Blank, e: &Value) -> String {
    let path = e["path"].as_str().unwrap();
    if path.starts_with('/') {
        std::fs::read_to_string(path).unwrap()
    } else {
        b.repo.read(path)
    }
}

async fn export(b: &Blank) -> String {
    let e = b
        .ok("manage_ontology", json!({"operation": "export"}))
        .await;
    exported(b, &e)
}

#[tokio::test]
async fn an_imported_documents_namespaces_survive_export_and_sync() {
    let b = Blank::new().await;
    b.import(BAKERY).await;
    // The prefix map is a page the ontologist can read and edit.
    let map = b.repo.read("pages/Prefixes.md");
    assert!(
        map.contains("prefix:: ex: <http://example.org/bakery#>")
            && map.contains("prefix:: : <http://example.org/bakery/crumbs#>"),
        "{map}"
    );
    let ofn = export(&b).await;
    assert!(!ofn.contains("urn:cairn:ex"), "{ofn}");
    assert!(
        ofn.contains("Prefix(ex:=<http://example.org/bakery#>)")
            && ofn.contains("Prefix(:=<http://example.org/bakery/crumbs#>)")
            && ofn.contains("SubClassOf(ex:Rye ex:Bread)")
            && ofn.contains("Declaration(Class(:Crumb))"),
        "{ofn}"
    );
    // Another project on the same repository reads the map back with its first sync.
    let other = b.c.project("Bakery Two").await;
    b.c.ok(
        "manage_ontology",
        json!({"projectId": other, "operation": "attach", "repoPath": b.repo.root()}),
    )
    .await;
    let s =
        b.c.ok(
            "manage_ontology",
            json!({"projectId": other, "operation": "sync"}),
        )
        .await;
    assert_eq!(s["problemCount"], json!(0), "{s:#}");
    let e =
        b.c.ok(
            "manage_ontology",
            json!({"projectId": other, "operation": "export"}),
        )
        .await;
    assert!(
        exported(&b, &e).contains("Prefix(ex:=<http://example.org/bakery#>)"),
        "{e:#}"
    );
    // An edit of the map moves the IRIs; a bad line is a problem with its place.
    b.repo.write(
        "pages/Prefixes.md",
        &map.replace("http://example.org/bakery#", "https://bakery.example/ns#")
            .replace(
                "prefix:: : ",
                "prefix:: owl: <http://example.org/not-owl#>\n    - prefix:: : ",
            ),
    );
    b.repo.commit("the bakery moved");
    let s = b.sync().await;
    assert_eq!(s["problemCount"], json!(1), "{s:#}");
    assert!(s.to_string().contains("owl: is always"), "{s:#}");
    let ofn = export(&b).await;
    assert!(
        ofn.contains("Prefix(ex:=<https://bakery.example/ns#>)") && ofn.contains("ex:Rye"),
        "{ofn}"
    );
    b.c.stop().await;
}

#[tokio::test]
async fn a_second_document_is_read_with_the_repositorys_prefixes() {
    let b = Blank::new().await;
    b.import(BAKERY).await;
    // `ex:` means another namespace here, and `bk:` the repository's `ex:`.
    let doc = "Prefix(ex:=<http://other.example/grain#>)\n\
        Prefix(bk:=<http://example.org/bakery#>)\nPrefix(mill:=<http://mill.example/#>)\n\
        Ontology(\nDeclaration(Class(ex:Oat))\nDeclaration(Class(bk:Wheat))\n\
        Declaration(Class(mill:Stone))\n\
        SubClassOf(bk:Wheat bk:Bread)\nSubClassOf(ex:Oat mill:Stone)\n)\n";
    b.import(doc).await;
    let map = b.repo.read("pages/Prefixes.md");
    assert!(
        map.contains("prefix:: mill: <http://mill.example/#>"),
        "{map}"
    );
    assert!(
        !map.contains("bk:") && !map.contains("other.example"),
        "{map}"
    );
    let ofn = export(&b).await;
    assert!(
        ofn.contains("SubClassOf(ex:Wheat ex:Bread)")
            && ofn.contains("SubClassOf(<http://other.example/grain#Oat> mill:Stone)"),
        "{ofn}"
    );
    let r = b.ok("ontology_read", json!({"iri": "ex:Wheat"})).await;
    assert!(r.to_string().contains("ex:Bread"), "{r:#}");
    b.c.stop().await;
}

#[tokio::test]
async fn an_export_goes_to_a_file_and_inline_only_when_asked_and_it_fits() {
    let b = Blank::new().await;
    b.import(BAKERY).await;
    let e = b
        .ok("manage_ontology", json!({"operation": "export"}))
        .await;
    let path = e["path"].as_str().unwrap();
    assert!(
        path.starts_with(b.dir.path().to_str().unwrap()) && path.ends_with(".ofn"),
        "{e:#}"
    );
    let text = std::fs::read_to_string(path).unwrap();
    assert_eq!(e["bytes"], json!(text.len()), "{e:#}");
    assert_eq!(
        (&e["classes"], &e["properties"], &e["axioms"]),
        (&json!(3), &json!(1), &json!(2)),
        "{e:#}"
    );
    assert!(e.get("ofn").is_none(), "{e:#}");
    let e = b
        .ok(
            "manage_ontology",
            json!({"operation": "export", "inline": true}),
        )
        .await;
    assert_eq!(e["ofn"].as_str(), Some(text.as_str()), "{e:#}");
    let e = b
        .ok(
            "manage_ontology",
            json!({"operation": "export", "inline": true, "maxTokens": 60}),
        )
        .await;
    assert!(e.get("ofn").is_none(), "{e:#}");
    assert!(
        e["inline"].as_str().unwrap().contains("over maxTokens 60"),
        "{e:#}"
    );
    // In the repository: a path of its own, replaced by the next export.
    for _ in 0..2 {
        let e = b
            .ok(
                "manage_ontology",
                json!({"operation": "export", "path": "exports/bakery.ofn"}),
            )
            .await;
        assert_eq!(e["path"], json!("exports/bakery.ofn"), "{e:#}");
        assert_eq!(b.repo.read("exports/bakery.ofn"), text);
    }
    // Never outside the repository, through a link, over a file Cairn did not
    // write, or into anything but an OFN file.
    let outside = crate::harness::TempDir::new();
    std::os::unix::fs::symlink(outside.path(), format!("{}/out", b.repo.root())).unwrap();
    b.repo.write("mine.ofn", "Ontology()\n");
    for bad in [
        "../bakery.ofn",
        "/tmp/bakery.ofn",
        "out/bakery.ofn",
        ".git/bakery.ofn",
        "mine.ofn",
        "pages/Rye.md",
    ] {
        let e = b
            .err(
                "manage_ontology",
                json!({"operation": "export", "path": bad}),
                "VALIDATION_ERROR",
            )
            .await;
        assert_eq!(e["details"]["parameter"], json!("path"), "{bad}: {e:#}");
    }
    assert_eq!(std::fs::read_dir(outside.path()).unwrap().count(), 0);
    assert_eq!(b.repo.read("mine.ofn"), "Ontology()\n");
    b.c.stop().await;
}

const KITCHEN: &str = "Prefix(k:=<http://example.org/kitchen#>)\nOntology(\n\
    Declaration(Class(k:Bread))\nDeclaration(Class(k:Cheese))\nDeclaration(Class(k:Toastie))\n\
    Declaration(Class(k:Rye))\nDeclaration(Class(k:Wheat))\nDeclaration(Class(k:Maslin))\n\
    Declaration(Class(k:Vegan))\nDeclaration(Class(k:Cheesy))\n\
    Declaration(Class(k:Crust))\nDeclaration(Class(k:Loaf))\nDeclaration(Class(k:Bakery))\n\
    Declaration(Class(k:OfBakery))\n\
    Declaration(ObjectProperty(k:hasFilling))\nDeclaration(ObjectProperty(k:partOf))\n\
    Declaration(NamedIndividual(k:lunch))\nDeclaration(NamedIndividual(k:cheddar))\n\
    SubClassOf(k:Toastie ObjectIntersectionOf(k:Bread ObjectSomeValuesFrom(k:hasFilling k:Cheese)))\n\
    SubClassOf(k:Rye k:Bread)\nSubClassOf(k:Wheat k:Bread)\n\
    SubClassOf(k:Maslin k:Rye)\nSubClassOf(k:Maslin k:Wheat)\n\
    EquivalentClasses(k:Cheesy ObjectSomeValuesFrom(k:hasFilling k:Cheese))\n\
    DisjointClasses(k:Cheesy k:Vegan)\n\
    ClassAssertion(k:Vegan k:lunch)\nClassAssertion(k:Cheese k:cheddar)\n\
    SubClassOf(k:Crust ObjectSomeValuesFrom(k:partOf k:Loaf))\n\
    SubClassOf(k:Loaf ObjectSomeValuesFrom(k:partOf k:Bakery))\n\
    EquivalentClasses(k:OfBakery ObjectSomeValuesFrom(k:partOf k:Bakery))\n)\n";

/// `ontology_validate` on these axioms.
async fn validate(b: &Blank, axioms: Value) -> Value {
    b.ok("ontology_validate", json!({ "axioms": axioms })).await
}

fn gained(v: &Value, sub: &str, sup: &str) -> bool {
    v["gained"]
        .as_array()
        .unwrap()
        .iter()
        .any(|g| g["sub"] == json!(sub) && g["sup"] == json!(sup))
}

#[tokio::test]
async fn hypotheses_take_every_axiom_the_reasoner_does() {
    let b = Blank::new().await;
    b.import(KITCHEN).await;
    // Equivalence with a class expression.
    let v = validate(
        &b,
        json!([{"axiomType": "EquivalentClasses", "subject": "k:Sandwich",
                "object": "k:Bread and (k:hasFilling some k:Cheese)"}]),
    )
    .await;
    assert!(gained(&v, "k:Toastie", "k:Sandwich"), "{v:#}");
    // Disjointness, a property's characteristics, domain and range.
    let v = validate(
        &b,
        json!([{"axiomType": "DisjointClasses", "subject": "k:Rye", "object": "k:Wheat"}]),
    )
    .await;
    assert_eq!(v["newlyUnsatisfiable"], json!(["k:Maslin"]), "{v:#}");
    let v = validate(
        &b,
        json!([{"axiomType": "TransitiveObjectProperty", "subject": "k:partOf"}]),
    )
    .await;
    assert!(gained(&v, "k:Crust", "k:OfBakery"), "{v:#}");
    let v = validate(
        &b,
        json!([{"axiomType": "ObjectPropertyDomain", "subject": "k:hasFilling", "object": "k:Bread"},
               {"axiomType": "ObjectPropertyRange", "subject": "k:partOf", "object": "k:Loaf"}]),
    )
    .await;
    assert!(gained(&v, "k:Cheesy", "k:Bread"), "{v:#}");
    assert!(
        v["axioms"]
            .to_string()
            .contains("ObjectPropertyRange(k:partOf k:Loaf)"),
        "{v:#}"
    );
    // A property assertion: the vegan lunch with cheese in it.
    let v = validate(
        &b,
        json!([{"axiomType": "ObjectPropertyAssertion", "subject": "k:lunch", "property": "k:hasFilling", "object": "k:cheddar"}]),
    )
    .await;
    assert_eq!(v["consistent"], json!(false), "{v:#}");
    assert!(v["clash"].to_string().contains("k:Vegan"), "{v:#}");
    let v = validate(
        &b,
        json!([{"axiomType": "ObjectPropertyAssertion", "subject": "k:cheddar", "property": "k:partOf", "object": "k:lunch"}]),
    )
    .await;
    assert_eq!(v["consistent"], json!(true), "{v:#}");
    b.c.stop().await;
}

#[tokio::test]
async fn a_bad_hypothesis_says_what_is_accepted() {
    let b = Blank::new().await;
    b.import(KITCHEN).await;
    for (axiom, parameter) in [
        (
            json!({"axiomType": "SameIndividual", "subject": "k:lunch", "object": "k:cheddar"}),
            "axioms[0].axiomType",
        ),
        (
            json!({"axiomType": "ObjectPropertyAssertion", "subject": "k:lunch", "object": "k:cheddar"}),
            "axioms[0].property",
        ),
        (
            json!({"axiomType": "TransitiveObjectProperty", "subject": "k:partOf", "object": "k:Loaf"}),
            "axioms[0].object",
        ),
        (
            json!({"axiomType": "SubClassOf", "subject": "k:Rye"}),
            "axioms[0].object",
        ),
        (
            json!({"axiomType": "SubClassOf", "subject": "k:Rye", "object": "k:Bread", "note": "x"}),
            "axioms[0].note",
        ),
    ] {
        let e = b
            .err(
                "ontology_validate",
                json!({ "axioms": [axiom] }),
                "VALIDATION_ERROR",
            )
            .await;
        assert_eq!(e["details"]["parameter"], json!(parameter), "{e:#}");
        let m = e["message"].as_str().unwrap();
        assert!(
            m.contains("ObjectPropertyAssertion") && m.contains("DisjointClasses"),
            "{m}"
        );
    }
    // An individual no page declares is named in the refusal.
    let e = b
        .err(
            "ontology_validate",
            json!({ "axioms": [{"axiomType": "ObjectPropertyAssertion", "subject": "k:lunch",
                                "property": "k:hasFilling", "object": "k:Nobody"}] }),
            "VALIDATION_ERROR",
        )
        .await;
    assert!(e["message"].as_str().unwrap().contains("k:Nobody"), "{e:#}");
    b.c.stop().await;
}

#[tokio::test]
async fn a_proposal_states_disjointness() {
    let b = Blank::new().await;
    b.repo
        .write("pages/Bread.md", &class_page("Bread", "k:Bread", &[]));
    b.repo.write(
        "pages/Rye.md",
        &class_page("Rye", "k:Rye", &["is-subclass-of:: [[Bread]]"]),
    );
    b.repo.write(
        "pages/Wheat.md",
        &class_page("Wheat", "k:Wheat", &["is-subclass-of:: [[Bread]]"]),
    );
    b.repo.write(
        "pages/Maslin.md",
        &class_page(
            "Maslin",
            "k:Maslin",
            &["is-subclass-of:: [[Rye]], [[Wheat]]"],
        ),
    );
    b.repo.commit("breads");
    b.sync().await;
    let agent =
        json!({"agentType": "coder", "taskDescription": "disjoint breads", "confidence": 0.8});
    let create = |term: &str, parent: &str, disjoint: &str| {
        json!({"operation": "create", "agentContext": agent, "preferredTerm": term,
               "definition": format!("A bread of its own kind, never a {disjoint} at once."),
               "domain": "k", "isSubclassOf": [parent], "physicality": "PhysicalEntity", "role": "Artifact",
               "relationships": {"disjointWith": [disjoint]}})
    };
    let p = b
        .ok("ontology_propose", create("Spelt", "Bread", "Rye"))
        .await;
    let page = b.repo.git(&[
        "show",
        &format!("{}:pages/Spelt.md", p["branch"].as_str().unwrap()),
    ]);
    assert!(page.contains("owl:disjointWith:: [[Rye]]"), "{page}");
    // Disjoint from its own parent: unsatisfiable, refused with the cause.
    let e = b
        .err(
            "ontology_propose",
            create("Odd Rye", "Rye", "Rye"),
            "INVARIANT_VIOLATION",
        )
        .await;
    assert!(e.to_string().contains("k:OddRye"), "{e:#}");
    // An amendment that makes Maslin unsatisfiable is refused too.
    let e = b
        .err(
            "ontology_propose",
            json!({"operation": "amend", "agentContext": agent, "iri": "k:Rye",
                   "addRelationships": {"disjointWith": ["Wheat"]}}),
            "INVARIANT_VIOLATION",
        )
        .await;
    assert!(e.to_string().contains("k:Maslin"), "{e:#}");
    b.c.stop().await;
}
