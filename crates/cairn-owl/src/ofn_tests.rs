//! Tests of the OFN reader and writer: what is read and what is reported, with
//! lines; depth bounds; round trips through pages.

use super::super::model::load_pages;
use super::*;

const DOC: &str = r#"Prefix(:=<http://example.org/onto#>)
Prefix(owl:=<http://www.w3.org/2002/07/owl#>)
Prefix(rdfs:=<http://www.w3.org/2000/01/rdf-schema#>)
Prefix(skos:=<http://www.w3.org/2004/02/skos/core#>)
Prefix(ai:=<http://example.org/ai#>)

Ontology(<http://example.org/onto>
# A comment line.
Declaration(Class(ai:Transformer))
Declaration(Class(ai:Model))
Declaration(Class(<http://example.org/ai#Attention>))
Declaration(ObjectProperty(ai:hasPart))
Declaration(NamedIndividual(ai:GPT4))
AnnotationAssertion(rdfs:label ai:Transformer "Transformer"@en)
AnnotationAssertion(skos:altLabel ai:Transformer "Transformer model")
AnnotationAssertion(skos:definition ai:Transformer "A model built on \"attention\".")
SubClassOf(Annotation(rdfs:comment "why") ai:Transformer ai:Model)
SubClassOf(ai:Transformer ObjectSomeValuesFrom(ai:hasPart ai:Attention))
SubClassOf(ai:Model ObjectUnionOf(ai:Transformer ai:Attention))
EquivalentClasses(:Big ObjectIntersectionOf(ai:Model ObjectAllValuesFrom(ai:hasPart ai:Attention)))
TransitiveObjectProperty(ai:hasPart)
FunctionalObjectProperty(ai:hasPart)
SubObjectPropertyOf(ObjectPropertyChain(ai:hasPart ai:hasPart) ai:hasPart)
SubClassOf(ai:Model ObjectMinCardinality(1 ai:hasPart))
DataPropertyAssertion(ai:size ai:GPT4 "1"^^xsd:integer)
SubClassOf(ai:Model ObjectSomeValuesFrom(ObjectInverseOf(ai:hasPart) ai:Attention))
ClassAssertion(ai:Transformer ai:GPT4)
ObjectPropertyAssertion(ai:hasPart ai:GPT4 _:b1)
SubClassOf(un:Known ai:Model)
AnnotationAssertion(rdfs:seeAlso ai:Model "x")
)
"#;

#[test]
fn reads_the_el_part_and_reports_the_rest_with_lines() {
    let r = read_ofn(DOC, "doc.ofn");
    let lines: Vec<(usize, &str)> = r
        .problems
        .iter()
        .map(|p| (p.line, p.message.as_str()))
        .collect();
    let at = |l: usize, what: &str| lines.iter().any(|(x, m)| *x == l && m.contains(what));
    assert!(at(19, "ObjectUnionOf is outside OWL 2 EL"), "{lines:?}");
    assert!(
        at(20, "ObjectAllValuesFrom is outside OWL 2 EL"),
        "{lines:?}"
    );
    assert!(at(22, "FunctionalObjectProperty"), "{lines:?}");
    assert!(at(24, "ObjectMinCardinality"), "{lines:?}");
    assert!(at(25, "data properties"), "{lines:?}");
    assert!(at(26, "ObjectInverseOf"), "{lines:?}");
    assert!(at(28, "anonymous individuals"), "{lines:?}");
    assert!(at(29, "prefix `un:` is not declared"), "{lines:?}");
    assert!(at(30, "rdfs:seeAlso is not kept"), "{lines:?}");
    assert_eq!(r.problems.len(), 9, "{lines:?}");
    let o = &r.ontology;
    assert_eq!(o.iri.as_deref(), Some("http://example.org/onto"));
    let t = o.entity("ai:Transformer").unwrap();
    assert_eq!(t.meta.preferred_term(), Some("Transformer"));
    assert_eq!(t.meta.alt_terms(), vec!["Transformer model"]);
    assert_eq!(t.meta.definition(), Some("A model built on \"attention\"."));
    assert!(
        o.entity("ai:Attention").is_some(),
        "full IRIs are abbreviated"
    );
    let axs: Vec<&Axiom> = o.axioms.iter().map(|s| &s.axiom).collect();
    assert_eq!(axs.len(), 5, "{axs:?}");
    assert!(axs.contains(&&Axiom::SubClassOf(
        ClassExpr::class("ai:Transformer"),
        ClassExpr::some("ai:hasPart", ClassExpr::class("ai:Attention"))
    )));
    assert!(axs.contains(&&Axiom::ClassAssertion(
        ClassExpr::class("ai:Transformer"),
        "ai:GPT4".into()
    )));
    let sub = o
        .axioms
        .iter()
        .find(|s| {
            s.axiom
                == Axiom::SubClassOf(
                    ClassExpr::class("ai:Transformer"),
                    ClassExpr::class("ai:Model"),
                )
        })
        .unwrap();
    assert_eq!(sub.origin, Origin::new("doc.ofn", 17));
}

#[test]
fn regression_a_stray_closing_angle_bracket_does_not_stall_the_lexer() {
    let r = read_ofn("Ontology(\nSubClassOf(a:B > a:C)\n)", "x.ofn");
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert_eq!(r.problems[0].line, 2);
}

#[test]
fn nesting_past_the_limits_is_reported_with_its_line() {
    let some = |n: usize| {
        format!(
            "{}ai:B{}",
            "ObjectSomeValuesFrom(ai:p ".repeat(n),
            ")".repeat(n)
        )
    };
    let doc = |x: String| {
        format!(
            "Prefix(ai:=<urn:ai:>)\nOntology(\nDeclaration(Class(ai:A))\nSubClassOf(ai:A\n{x})\n)\n"
        )
    };
    // A few thousand levels: the document is not read, the line says where.
    for n in [5_000, 100_000] {
        let r = read_ofn(&doc(some(n)), "deep.ofn");
        assert!(r.ontology.entities.is_empty());
        assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
        assert_eq!(r.problems[0].line, 5);
        assert!(r.problems[0].message.contains("nests more than 128"));
    }
    // Within the tree's bound but past a class expression's: that axiom alone.
    let r = read_ofn(&doc(some(MAX_CLASS_DEPTH)), "deep.ofn");
    assert_eq!(r.problems.len(), 1, "{:?}", r.problems);
    assert!(r.problems[0].message.contains("nested more than 32"));
    assert!(r.ontology.entity("ai:A").is_some());
    let r = read_ofn(&doc(some(MAX_CLASS_DEPTH - 1)), "ok.ofn");
    assert!(r.problems.is_empty(), "{:?}", r.problems);
    // What was read writes pages that read back.
    let pages: Vec<(String, String)> = r
        .ontology
        .to_pages()
        .into_iter()
        .map(|(f, p)| (f, p.write()))
        .collect();
    let back = load_pages(pages.iter().map(|(f, t)| (f.as_str(), t.as_str())));
    assert!(back.problems.is_empty(), "{:?}", back.problems);
    assert!(back.ontology.same_content(&r.ontology));
}

#[test]
fn values_a_page_cannot_hold_are_skipped_and_any_order_reads_back() {
    let doc = "Prefix(ai:=<urn:ai:>)\nOntology(\nDeclaration(Class(ai:A))\n\
               AnnotationAssertion(skos:definition ai:A \"Defined.\")\n\
               AnnotationAssertion(skos:altLabel ai:A \"Alpha\")\n\
               AnnotationAssertion(rdfs:label ai:A \"A\")\n\
               AnnotationAssertion(rdfs:comment ai:A \"two\nlines\")\n\
               AnnotationAssertion(cairn:pageProperty ai:A \"status:: ok\rstatus:: approved\")\n)\n";
    let r = read_ofn(doc, "x.ofn");
    let lines: Vec<usize> = r.problems.iter().map(|p| p.line).collect();
    assert_eq!(lines, [7, 9], "{:?}", r.problems);
    assert!(r.problems[0].message.contains("several lines"));
    let pages: Vec<(String, String)> = r
        .ontology
        .to_pages()
        .into_iter()
        .map(|(f, p)| (f, p.write()))
        .collect();
    let back = load_pages(pages.iter().map(|(f, t)| (f.as_str(), t.as_str())));
    assert!(back.problems.is_empty(), "{:?}", back.problems);
    assert!(back.ontology.same_content(&r.ontology));
}

#[test]
fn syntax_errors_have_lines() {
    let r = read_ofn(
        "Prefix(a:=<x:>)\nOntology(\nSubClassOf(a:B a:C\n",
        "bad.ofn",
    );
    assert_eq!(r.problems.len(), 1);
    assert_eq!(r.problems[0].line, 3);
    let r = read_ofn("Ontology(\nSubClassOf(a:B \"open\n)", "bad.ofn");
    assert_eq!(r.problems[0].line, 2);
}

#[test]
fn an_ontology_written_as_ofn_reads_back_the_same() {
    let r = read_ofn(DOC, "doc.ofn");
    let text = write_ofn(&r.ontology);
    let back = read_ofn(&text, "out.ofn");
    assert!(back.problems.is_empty(), "{:?}\n{text}", back.problems);
    assert!(back.ontology.same_content(&r.ontology), "{text}");
    assert!(
        text.contains("SubClassOf(ai:Transformer ObjectSomeValuesFrom(ai:hasPart ai:Attention))"),
        "{text}"
    );
    assert!(
        text.contains("Prefix(ai:=<http://example.org/ai#>)"),
        "{text}"
    );
}

#[test]
fn pages_to_ofn_and_back() {
    let a = "- Alpha\n  - ### OntologyBlock\n    - ontology:: true\n    - term-id:: AI-0001\n    - preferred-term:: Alpha\n    - definition:: The first; with \"quotes\" and a \\ backslash.\n    - owl:class:: ai:Alpha\n    - quality-score:: 0.8\n    - has-part:: [[Beta]]\n    - alt-terms:: A, First letter\n    - custom-note:: kept: yes\n";
    let b = "- Beta\n  - ### OntologyBlock\n    - ontology:: true\n    - owl:class:: ai:Beta\n    - owl:equivalentClass:: core:hasPart some [[Alpha]]\n";
    let l = load_pages([("Alpha.md", a), ("Beta.md", b)]);
    assert!(l.problems.is_empty(), "{:?}", l.problems);
    let text = write_ofn(&l.ontology);
    let back = read_ofn(&text, "x.ofn");
    assert!(back.problems.is_empty(), "{:?}", back.problems);
    assert!(back.ontology.same_content(&l.ontology), "{text}");
    assert!(text.contains("Prefix(ai:=<urn:cairn:ai:>)"), "{text}");
    assert!(
        text.contains("AnnotationAssertion(cairn:pageProperty ai:Alpha \"quality-score:: 0.8\")"),
        "{text}"
    );
}
