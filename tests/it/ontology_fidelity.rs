//! What a round trip through Cairn keeps and what its reasoner makes of the less
//! common parts of OWL 2 EL, through MCP on ontologies written here: documents
//! imported into an empty repository, the proposal merged as a person would, the
//! branch synced, and the answers read back through the tools.

use serde_json::{json, Value};

use crate::code::Repo;
use crate::harness::{Cairn, TempDir};

/// An empty ontology repository attached to a fresh project and synced.
pub(crate) struct Blank {
    pub c: Cairn,
    pub repo: Repo,
    pub project: String,
    pub dir: TempDir,
}

impl Blank {
    pub async fn new() -> Blank {
        let repo = Repo::new();
        repo.write("pages/.keep", "");
        repo.commit("empty");
        let dir = TempDir::new();
        let c = Cairn::on_env(&dir.path().join("cairn.db"), &[], &[]).await;
        let project = c.project("Bakery").await;
        let b = Blank {
            c,
            repo,
            project,
            dir,
        };
        b.ok(
            "manage_ontology",
            json!({"operation": "attach", "repoPath": b.repo.root()}),
        )
        .await;
        b.sync().await;
        b
    }

    pub async fn ok(&self, tool: &str, mut args: Value) -> Value {
        args["projectId"] = json!(self.project);
        self.c.ok(tool, args).await
    }

    pub async fn err(&self, tool: &str, mut args: Value, code: &str) -> Value {
        args["projectId"] = json!(self.project);
        self.c.err(tool, args, code).await
    }

    pub async fn sync(&self) -> Value {
        self.ok("manage_ontology", json!({"operation": "sync"}))
            .await
    }

    /// Imports a document, merges its branch into main and syncs: the sync's answer.
    pub async fn import(&self, ofn: &str) -> Value {
        let im = self
            .ok(
                "manage_ontology",
                json!({"operation": "import", "ofn": ofn}),
            )
            .await;
        assert_eq!(im["skipped"], json!([]), "{im:#}");
        let branch = im["branch"].as_str().unwrap();
        self.repo.git(&["merge", "-q", "--ff-only", branch]);
        let s = self.sync().await;
        assert_eq!(s["problemCount"], json!(0), "{s:#}");
        s
    }

    /// A query's rows, each row's cells joined by ` | `.
    pub async fn rows(&self, q: &str) -> Vec<String> {
        let d = self.ok("ontology_query", json!({ "cypher": q })).await;
        d["rows"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                r.as_array()
                    .unwrap()
                    .iter()
                    .map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .collect::<Vec<_>>()
                    .join(" | ")
            })
            .collect()
    }
}

const UNIVERSAL: &str = "Prefix(k:=<urn:cairn:k:>)\nOntology(\n\
    Declaration(Class(k:Flour))\nDeclaration(Class(k:Bakery))\nDeclaration(Class(k:Oven))\n\
    Declaration(Class(k:Hot))\nDeclaration(Class(k:Loaf))\nDeclaration(Class(k:Rye))\n\
    Declaration(Class(k:Haunted))\nDeclaration(ObjectProperty(k:bakedIn))\n\
    Declaration(ObjectProperty(k:never))\nDeclaration(NamedIndividual(k:sack1))\n\
    SubClassOf(ObjectSomeValuesFrom(owl:topObjectProperty k:Flour) k:Bakery)\n\
    ClassAssertion(k:Flour k:sack1)\n\
    SubClassOf(ObjectSomeValuesFrom(owl:topObjectProperty k:Oven) k:Hot)\n\
    SubClassOf(k:Loaf ObjectSomeValuesFrom(k:bakedIn k:Oven))\n\
    SubClassOf(k:Rye k:Loaf)\n\
    SubObjectPropertyOf(k:never owl:bottomObjectProperty)\n)\n";

/// A class page as a person writes it, with extra property lines.
pub(crate) fn class_page(title: &str, iri: &str, lines: &[&str]) -> String {
    let mut s = format!(
        "- {title}\n  - ### OntologyBlock\n    - ontology:: true\n    - preferred-term:: {title}\n    - owl:class:: {iri}\n"
    );
    for l in lines {
        s.push_str(&format!("    - {l}\n"));
    }
    s
}

#[tokio::test]
async fn the_universal_and_the_empty_property_classify_as_owl_says() {
    let b = Blank::new().await;
    let s = b.import(UNIVERSAL).await;
    assert_eq!(s["classes"], json!(7), "{s:#}");
    // Classes a person adds by hand: one that cannot exist, and two that need a link
    // through the empty property.
    b.repo.write(
        "pages/Ghost.md",
        &class_page(
            "Ghost",
            "k:Ghost",
            &[
                "owl:subClassOf:: owl:Nothing",
                "owl:axiom:: owl:topObjectProperty some [[Ghost]] SubClassOf [[Haunted]]",
            ],
        ),
    );
    b.repo.write(
        "pages/Crumb.md",
        &class_page(
            "Crumb",
            "k:Crumb",
            &["owl:subClassOf:: owl:bottomObjectProperty some [[Loaf]]"],
        ),
    );
    b.repo.write(
        "pages/Stale.md",
        &class_page(
            "Stale",
            "k:Stale",
            &["owl:subClassOf:: k:never some [[Loaf]]"],
        ),
    );
    b.repo.commit("three classes by hand");
    let s = b.sync().await;
    assert_eq!(
        (s["classes"].clone(), s["problemCount"].clone()),
        (json!(10), json!(0)),
        "{s:#}"
    );
    // Some flour exists (sack1), so everything has the universal property to flour
    // and is a Bakery; wherever a loaf is, an oven is, so loaves are Hot; no ghost
    // can exist, so nothing is Haunted by its rule.
    let sups = |c: &str| {
        format!(
            "MATCH ({{iri: 'k:{c}'}})-[:SUBCLASS_OF*]->(p) RETURN DISTINCT p.iri ORDER BY p.iri"
        )
    };
    assert_eq!(b.rows(&sups("Rye")).await, ["k:Bakery", "k:Hot", "k:Loaf"]);
    assert_eq!(b.rows(&sups("Oven")).await, ["k:Bakery", "k:Hot"]);
    assert_eq!(b.rows(&sups("Flour")).await, ["k:Bakery"]);
    assert_eq!(b.rows(&sups("Haunted")).await, ["k:Bakery"]);
    assert_eq!(
        b.rows("MATCH (c:OwlClass) WHERE c.unsatisfiable RETURN c.iri ORDER BY c.iri")
            .await,
        ["k:Crumb", "k:Ghost", "k:Stale"]
    );
    // No page is written for the built-in properties, and the export names them.
    let files = b.repo.git(&["ls-files", "pages"]);
    assert!(!files.to_lowercase().contains("objectproperty"), "{files}");
    let e = b
        .ok(
            "manage_ontology",
            json!({"operation": "export", "inline": true, "maxTokens": 10_000_000}),
        )
        .await;
    let text = e["ofn"].as_str().unwrap();
    assert!(
        text.contains("SubObjectPropertyOf(k:never owl:bottomObjectProperty)")
            && text.contains("ObjectSomeValuesFrom(owl:topObjectProperty k:Flour)"),
        "{text}"
    );
    // The universal property below another one is refused, not misread.
    let e = b
        .err(
            "manage_ontology",
            json!({"operation": "import", "ofn": "Prefix(k:=<urn:cairn:k:>)\nOntology(\nSubObjectPropertyOf(owl:topObjectProperty k:bakedIn)\n)\n"}),
            "VALIDATION_ERROR",
        )
        .await;
    let p = &e["details"]["problems"][0];
    assert_eq!(p["line"], json!(3), "{e:#}");
    assert!(
        p["message"].as_str().unwrap().contains("not supported"),
        "{e:#}"
    );
    b.c.stop().await;
}

#[tokio::test]
async fn a_malformed_iri_is_the_callers_error_and_imports_nothing() {
    let b = Blank::new().await;
    let doc = "Prefix(k:=<urn:cairn:k:>)\nOntology(\nDeclaration(Class(k:Rye))\n\
               SubClassOf(<http://example.org/bakery#Sour Dough> k:Rye)\n)\n";
    let e = b
        .err(
            "manage_ontology",
            json!({"operation": "import", "ofn": doc}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], json!("ofn"), "{e:#}");
    let p = &e["details"]["problems"][0];
    assert_eq!(
        (p["line"].clone(), p["column"].clone()),
        (json!(4), json!(43)),
        "{e:#}"
    );
    assert!(p["message"].as_str().unwrap().contains("a space"), "{e:#}");
    // Nothing was staged: no branch, no proposal.
    assert_eq!(b.repo.git(&["branch", "--list", "ontology/*"]), "");
    let l = b
        .ok("manage_ontology", json!({"operation": "proposals"}))
        .await;
    assert_eq!(l["proposals"], json!([]), "{l:#}");
    b.c.stop().await;
}

#[tokio::test]
async fn discovery_calls_inferred_only_what_no_stated_path_reaches() {
    let b = Blank::new().await;
    b.repo
        .write("pages/Bread.md", &class_page("Bread", "k:Bread", &[]));
    b.repo
        .write("pages/Rye.md", &class_page("Rye", "k:Rye", &[]));
    // Rye Bread is defined; Pumpernickel states Bread as its parent, and the
    // reasoner puts it under Rye Bread, between the two.
    b.repo.write(
        "pages/Rye Bread.md",
        &class_page(
            "Rye Bread",
            "k:RyeBread",
            &["owl:equivalentClass:: [[Bread]] and (core:hasPart some [[Rye]])"],
        ),
    );
    b.repo.write(
        "pages/Pumpernickel.md",
        &class_page(
            "Pumpernickel",
            "k:Pumpernickel",
            &["is-subclass-of:: [[Bread]]", "has-part:: [[Rye]]"],
        ),
    );
    b.repo.commit("breads");
    let s = b.sync().await;
    assert_eq!(s["problemCount"], json!(0), "{s:#}");
    let found = |d: &Value| -> Vec<(String, bool)> {
        let mut v: Vec<(String, bool)> = d["results"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|r| r["matchedBy"] == json!("hierarchy"))
            .map(|r| {
                (
                    r["iri"].as_str().unwrap().to_string(),
                    r["whelkInferred"].as_bool().unwrap(),
                )
            })
            .collect();
        v.sort();
        v
    };
    // Up from Pumpernickel: Rye Bread only by inference; Bread, two hops up the
    // taxonomy, by the page's own is-subclass-of.
    let d = b
        .ok("ontology_discover", json!({"query": "pumpernickel"}))
        .await;
    assert_eq!(
        found(&d),
        [
            ("k:Bread".to_string(), false),
            ("k:RyeBread".to_string(), true)
        ],
        "{d:#}"
    );
    // Down from Bread: Pumpernickel is stated below it, though the taxonomy reaches
    // it through Rye Bread.
    let d = b.ok("ontology_discover", json!({"query": "bread"})).await;
    let pumpernickel = d["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["iri"] == json!("k:Pumpernickel"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(pumpernickel["whelkInferred"], json!(false), "{d:#}");
    b.c.stop().await;
}

#[tokio::test]
async fn an_import_adds_to_the_lists_a_page_has() {
    let b = Blank::new().await;
    b.repo.write(
        "pages/Rye.md",
        &class_page("Rye", "k:Rye", &["alt-terms:: Roggen, Secale"]),
    );
    b.repo
        .write("pages/Grain.md", &class_page("Grain", "k:Grain", &[]));
    b.repo
        .write("pages/Cereal.md", &class_page("Cereal", "k:Cereal", &[]));
    b.repo.write(
        "pages/Wheat.md",
        &class_page("Wheat", "k:Wheat", &["is-subclass-of:: [[Grain]]"]),
    );
    b.repo.commit("grains");
    b.sync().await;
    let doc = "Prefix(k:=<urn:cairn:k:>)\nPrefix(skos:=<http://www.w3.org/2004/02/skos/core#>)\nOntology(\n\
               Declaration(Class(k:Rye))\nDeclaration(Class(k:Wheat))\nDeclaration(Class(k:Cereal))\n\
               AnnotationAssertion(skos:altLabel k:Rye \"Rye grain\")\n\
               AnnotationAssertion(skos:altLabel k:Rye \"Roggen\")\n\
               SubClassOf(k:Wheat k:Cereal)\n)\n";
    let im = b
        .ok(
            "manage_ontology",
            json!({"operation": "import", "ofn": doc}),
        )
        .await;
    let branch = im["branch"].as_str().unwrap();
    let rye = b.repo.git(&["show", &format!("{branch}:pages/Rye.md")]);
    assert!(
        rye.contains("    - alt-terms:: Roggen, Secale, Rye grain\n"),
        "{rye}"
    );
    let wheat = b.repo.git(&["show", &format!("{branch}:pages/Wheat.md")]);
    assert!(
        wheat.contains("    - is-subclass-of:: [[Grain]], [[Cereal]]\n"),
        "{wheat}"
    );
    b.c.stop().await;
}

#[tokio::test]
async fn the_shared_relationships_need_no_page_in_an_expression() {
    let b = Blank::new().await;
    b.repo
        .write("pages/Lid.md", &class_page("Lid", "k:Lid", &[]));
    b.repo.write(
        "pages/Jar.md",
        &class_page(
            "Jar",
            "k:Jar",
            &["owl:subClassOf:: core:hasPart some [[Lid]]"],
        ),
    );
    b.repo.commit("a jar");
    let s = b.sync().await;
    assert_eq!(s["problemCount"], json!(0), "{s:#}");
    assert_eq!(
        b.rows("MATCH ({iri: 'k:Jar'})-[:HAS_PART]->(p) RETURN p.iri")
            .await,
        ["k:Lid"]
    );
    // A proposal's page is resolved the same way.
    let v = b
        .ok(
            "ontology_validate",
            json!({"axioms": [{"axiomType": "SubClassOf", "subject": "k:Lid", "object": "core:requires some [[Jar]]"}]}),
        )
        .await;
    assert_eq!(v["consistent"], json!(true), "{v:#}");
    b.c.stop().await;
}

#[tokio::test]
async fn scores_are_answered_as_the_decimals_given() {
    let b = Blank::new().await;
    b.repo.write(
        "pages/Bread.md",
        &class_page(
            "Bread",
            "k:Bread",
            &["quality-score:: 0.85", "authority-score:: 0.7"],
        ),
    );
    b.repo.commit("bread");
    b.sync().await;
    let p = b
        .ok(
            "ontology_propose",
            json!({
                "operation": "create",
                "agentContext": {"agentType": "coder", "taskDescription": "rye loaves", "confidence": 0.8},
                "preferredTerm": "Rye Bread",
                "definition": "A bread baked mostly from rye flour, dense and dark, often soured.",
                "domain": "k",
                "isSubclassOf": ["Bread"],
                "physicality": "PhysicalEntity",
                "role": "Artifact",
            }),
        )
        .await;
    let l = b
        .ok("manage_ontology", json!({"operation": "proposals"}))
        .await;
    let row = &l["proposals"][0];
    assert_eq!(row["confidence"], json!(0.8), "{l:#}");
    // The quality score reads as the short decimal it is.
    let q = row["qualityScore"].as_f64().unwrap();
    assert_eq!((q * 100.0).round() / 100.0, q, "{l:#} {p:#}");
    let r = b.ok("ontology_read", json!({"iri": "k:Bread"})).await;
    let text = r.to_string();
    assert!(
        text.contains("0.85") && text.contains("0.7") && !text.contains("0.8500000"),
        "{r:#}"
    );
    assert_eq!(
        b.rows("MATCH (c {iri: 'k:Bread'}) RETURN c.qualityScore, c.authorityScore")
            .await,
        ["0.85 | 0.7"]
    );
    b.c.stop().await;
}

#[tokio::test]
async fn the_ontology_tools_name_their_entity_iri_and_take_the_old_names() {
    let b = Blank::new().await;
    b.repo
        .write("pages/Bread.md", &class_page("Bread", "k:Bread", &[]));
    b.repo.write(
        "pages/Rye Bread.md",
        &class_page("Rye Bread", "k:RyeBread", &["is-subclass-of:: [[Bread]]"]),
    );
    b.repo.commit("breads");
    b.sync().await;
    let tools = b.c.tools().await;
    for t in ["ontology_read", "ontology_traverse", "ontology_propose"] {
        let schema =
            serde_json::to_value(&tools.iter().find(|x| x.name == t).unwrap().input_schema)
                .unwrap();
        assert!(schema["properties"].get("iri").is_some(), "{t}: {schema:#}");
        for old in ["startIri", "targetIri"] {
            assert!(schema["properties"].get(old).is_none(), "{t}: {schema:#}");
        }
    }
    let new = b
        .ok(
            "ontology_traverse",
            json!({"iri": "k:RyeBread", "depth": 1}),
        )
        .await;
    let old = b
        .ok(
            "ontology_traverse",
            json!({"startIri": "k:RyeBread", "depth": 1}),
        )
        .await;
    assert_eq!(new["nodes"], old["nodes"]);
    assert!(new.to_string().contains("k:Bread"), "{new:#}");
    let e = b
        .err(
            "ontology_traverse",
            json!({"iri": "k:RyeBread", "startIri": "k:Bread"}),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], json!("iri"), "{e:#}");
    let agent = json!({"agentType": "coder", "taskDescription": "rye", "confidence": 0.9});
    for (k, alt) in [("iri", "Roggenbrot"), ("targetIri", "Schwarzbrot")] {
        let p = b
            .ok(
                "ontology_propose",
                json!({"operation": "amend", "agentContext": agent, k: "k:RyeBread", "altTerms": [alt]}),
            )
            .await;
        let branch = p["branch"].as_str().unwrap();
        let page = b
            .repo
            .git(&["show", &format!("{branch}:pages/Rye Bread.md")]);
        assert!(page.contains(alt), "{page}");
    }
    b.c.stop().await;
}

#[tokio::test]
async fn the_quality_gate_refuses_a_thin_proposal() {
    let b = Blank::new().await;
    b.repo.write(
        "pages/Bread.md",
        &class_page("Bread", "k:Bread", &["source-domain:: k"]),
    );
    b.repo.commit("bread");
    b.sync().await;
    let agent = json!({"agentType": "coder", "taskDescription": "a class", "confidence": 0.5});
    let propose = |term: &str, def: &str, parents: Value, domain: &str| {
        json!({"operation": "create", "agentContext": agent, "preferredTerm": term, "definition": def,
               "domain": domain, "isSubclassOf": parents, "physicality": "VirtualEntity", "role": "Concept"})
    };
    // No parent in a domain that has classes.
    let e = b
        .err(
            "ontology_propose",
            propose(
                "Thing X",
                "A thing that stands for every other thing here.",
                json!([]),
                "k",
            ),
            "VALIDATION_ERROR",
        )
        .await;
    assert_eq!(e["details"]["parameter"], json!("isSubclassOf"), "{e:#}");
    // A parent, but a definition with no substance: refused whatever it scores.
    for def in ["x", "Thing X, a thing x"] {
        let e = b
            .err(
                "ontology_propose",
                propose("Thing X", def, json!(["Bread"]), "k"),
                "VALIDATION_ERROR",
            )
            .await;
        assert!(
            e["message"]
                .as_str()
                .unwrap()
                .contains("definition (at least 6 words"),
            "{e:#}"
        );
    }
    // A real definition under a parent passes; so does a domain's first class alone.
    b.ok(
        "ontology_propose",
        propose(
            "Rye Bread",
            "A dense dark bread baked mostly from rye flour.",
            json!(["Bread"]),
            "k",
        ),
    )
    .await;
    b.ok(
        "ontology_propose",
        propose(
            "Oven",
            "An enclosed chamber heated to bake dough into bread.",
            json!([]),
            "z",
        ),
    )
    .await;
    b.c.stop().await;
}
