//! The caller's bounds: cycles end, rows are capped, bindings and time are
//! budgeted.

use super::*;

/// A ring of `n` nodes, each with an edge to the next, plus chords every
/// `chord` nodes back to the first: many cycles.
fn ring(n: usize, chord: usize) -> (PropertyGraph, Schema) {
    let mut g = PropertyGraph::new();
    let ids: Vec<NodeId> = (0..n)
        .map(|i| g.add_node(["N"], [("i", Value::Int(i as i64))]))
        .collect();
    for i in 0..n {
        g.add_edge(ids[i], ids[(i + 1) % n], "NEXT", [("w", Value::Int(1))])
            .unwrap();
        if chord > 0 && i % chord == 0 && i > 0 {
            g.add_edge(ids[i], ids[0], "NEXT", [("w", Value::Int(2))])
                .unwrap();
        }
    }
    let s = Schema::from_graph(&g);
    (g, s)
}

#[test]
fn unbounded_variable_length_on_a_cycle_terminates() {
    let (g, s) = ring(10, 0);
    let limits = Limits {
        max_hops: 64,
        ..Limits::default()
    };
    // From each of 10 nodes, a trail may take 1 to 10 edges before it would
    // reuse one: 100 paths.
    let out = execute(&g, &s, "MATCH (a)-[*]->(b) RETURN count(*)", &limits).unwrap();
    assert_eq!(out.rows, [[Value::Int(100)]]);
    let out = execute(
        &g,
        &s,
        "MATCH (a {i: 0})-[:NEXT*]-(b) RETURN count(DISTINCT b)",
        &limits,
    )
    .unwrap();
    assert_eq!(out.rows, [[Value::Int(10)]]);
}

#[test]
fn a_dense_cyclic_graph_hits_the_binding_budget_not_a_hang() {
    let (g, s) = ring(30, 2);
    let limits = Limits {
        max_hops: 64,
        max_bindings: 200_000,
        ..Limits::default()
    };
    let e = execute(&g, &s, "MATCH (a)-[*]-(b) RETURN count(*)", &limits).unwrap_err();
    assert_eq!(e.kind, ErrorKind::BindingLimit);
    assert!(e.message.contains("200000"), "{e}");
}

#[test]
fn the_row_cap_truncates_and_says_so() {
    let (g, s) = ring(20, 0);
    let limits = Limits {
        max_rows: 5,
        ..Limits::default()
    };
    let out = execute(&g, &s, "MATCH (n) RETURN n.i", &limits).unwrap();
    assert_eq!(out.rows.len(), 5);
    assert!(out.truncated);
    let out = execute(&g, &s, "MATCH (n) RETURN n.i ORDER BY n.i DESC", &limits).unwrap();
    assert_eq!(
        out.rows.first(),
        Some(&vec![Value::Int(19)]),
        "the cap applies after sorting"
    );
    assert!(out.truncated);
    let out = execute(&g, &s, "MATCH (n) RETURN n.i LIMIT 5", &limits).unwrap();
    assert!(!out.truncated, "the query asked for exactly the cap");
    let out = execute(&g, &s, "MATCH (n) WHERE n.i < 5 RETURN n.i", &limits).unwrap();
    assert_eq!((out.rows.len(), out.truncated), (5, false));
}

#[test]
fn a_passed_deadline_stops_the_query() {
    let (g, s) = ring(30, 2);
    let limits = Limits {
        deadline: Some(std::time::Instant::now()),
        ..Limits::default()
    };
    let e = execute(&g, &s, "MATCH (a)-[*]-(b) RETURN count(*)", &limits).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Deadline);
}

#[test]
fn a_long_query_is_refused_before_parsing() {
    let (g, s) = ring(3, 0);
    let limits = Limits {
        max_query_bytes: 100,
        ..Limits::default()
    };
    let q = format!("MATCH (n) WHERE n.i IN [{}] RETURN n", "1, ".repeat(50));
    let e = execute(&g, &s, &q, &limits).unwrap_err();
    assert_eq!(e.kind, ErrorKind::TooLong);
}
