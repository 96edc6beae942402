//! Writing clauses are refused as read-only, with their position, whatever else
//! the query holds.

use super::*;

#[test]
fn every_writing_clause_is_refused() {
    let f = fixture();
    for (q, word, column) in [
        ("CREATE (n:OwlClass {iri: 'ai:X'})", "CREATE", 1),
        ("MERGE (n:OwlClass {iri: 'ai:X'}) RETURN n", "MERGE", 1),
        ("MATCH (n:OwlClass) SET n.status = 'approved'", "SET", 20),
        ("MATCH (n:OwlClass) DELETE n", "DELETE", 20),
        ("MATCH (n:OwlClass) DETACH DELETE n", "DETACH DELETE", 20),
        ("MATCH (n:OwlClass) REMOVE n.status", "REMOVE", 20),
        ("MATCH (n:OwlClass) REMOVE n:OwlClass", "REMOVE", 20),
        ("CALL db.labels()", "CALL", 1),
        ("CALL db.labels() YIELD label RETURN label", "CALL", 1),
        (
            "MATCH (n) CALL { WITH n RETURN n AS m } RETURN m",
            "CALL",
            11,
        ),
        (
            "LOAD CSV FROM 'file:///x.csv' AS row RETURN row",
            "LOAD CSV",
            1,
        ),
        ("FOREACH (x IN [1, 2] | CREATE (:T {v: x}))", "FOREACH", 1),
        ("INSERT (n:OwlClass)", "INSERT", 1),
        ("match (n) detach delete n", "DETACH DELETE", 11),
        (
            "MATCH (n:OwlClass) WITH n CREATE (m:Copy) RETURN m",
            "CREATE",
            27,
        ),
        // Writing is refused even where the rest would be unsupported or malformed.
        ("MATCH (n) WHERE n.a =~ 'x' DELETE n", "DELETE", 28),
        ("CREATE (n:Foo {name: 'x')", "CREATE", 1),
        (
            "MATCH (n) RETURN n UNION MATCH (m) CREATE (x) RETURN x",
            "CREATE",
            36,
        ),
    ] {
        let e = execute(&f.graph, &f.schema, q, &Limits::default()).expect_err(q);
        assert_eq!(e.kind, ErrorKind::ReadOnly, "{q}: {e}");
        assert!(e.message.starts_with(word), "{q}: {e}");
        assert!(e.message.contains("read-only"), "{q}: {e}");
        assert_eq!(e.position.map(|p| p.column), Some(column), "{q}: {e}");
    }
}

#[test]
fn writing_words_in_names_and_strings_are_not_clauses() {
    let f = fixture();
    // A misspelled query mentioning `set` as a key or in a string is a syntax
    // error, not a refusal.
    for q in [
        "MATCH (n {set: 1} RETURN n",
        "MATCH (n) WHERE n.iri = 'CREATE' RETRN n",
        "MATCH (n:Set RETURN n",
    ] {
        let e = execute(&f.graph, &f.schema, q, &Limits::default()).expect_err(q);
        assert_eq!(e.kind, ErrorKind::Syntax, "{q}: {e}");
    }
    assert_eq!(
        rows(
            &f,
            "MATCH (n:OwlClass) WHERE n.iri = 'DELETE' RETURN count(*)"
        ),
        ["0"]
    );
}
