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

/// `WITH s + s AS s`, `n` times, from a 16-byte string.
fn doubling(n: usize, start: &str, step: &str) -> String {
    let mut q = format!("WITH {start} AS s ");
    for _ in 0..n {
        q.push_str(step);
    }
    q.push_str("RETURN size(s)");
    q
}

#[test]
fn values_that_double_clause_after_clause_stop_at_the_memory_budget() {
    let (g, s) = ring(3, 0);
    let limits = Limits {
        max_bytes: 1 << 20,
        ..Limits::default()
    };
    let hostile = [
        // A string doubled: 16 bytes × 2^40 unchecked.
        doubling(40, "'0123456789abcdef'", "WITH s + s AS s "),
        // A list doubled by `+`, and a list of itself twice (each level a copy).
        doubling(40, "[1, 2, 3, 4]", "WITH s + s AS s "),
        doubling(40, "['x']", "WITH [s, s] + s AS s "),
        // A map holding itself twice.
        doubling(40, "{a: 'xxxxxxxx'}", "WITH {a: s, b: s} AS s "),
        // Collected rows: each row carries the list collected so far.
        "UNWIND [1,2,3,4,5,6,7,8] AS a UNWIND [1,2,3,4,5,6,7,8] AS b WITH collect('0123456789abcdef0123456789abcdef') AS c \
         UNWIND c AS x UNWIND c AS y WITH x, y, c RETURN count(*)"
            .to_string(),
    ];
    for q in &hostile {
        let e = execute(&g, &s, q, &limits).unwrap_err();
        assert_eq!(e.kind, ErrorKind::MemoryLimit, "{q}: {e}");
        assert!(e.message.contains("1048576 bytes"), "{e}");
    }
    // Within the budget the same shapes answer.
    let out = execute(
        &g,
        &s,
        &doubling(10, "'0123456789abcdef'", "WITH s + s AS s "),
        &limits,
    )
    .unwrap();
    assert_eq!(out.rows, [[Value::Int(16 << 10)]]);
}

#[test]
fn values_nest_at_most_32_deep() {
    let (g, s) = ring(3, 0);
    let q = doubling(40, "1", "WITH [s] AS s ");
    let e = execute(&g, &s, &q, &Limits::default()).unwrap_err();
    assert_eq!(e.kind, ErrorKind::MemoryLimit);
    assert!(e.message.contains("nested more than 32"), "{e}");
    let q = doubling(40, "1", "WITH collect(s) AS s ");
    let e = execute(&g, &s, &q, &Limits::default()).unwrap_err();
    assert!(e.message.contains("nested more than 32"), "{e}");
    let out = execute(
        &g,
        &s,
        &doubling(30, "1", "WITH [s] AS s "),
        &Limits::default(),
    )
    .unwrap();
    assert_eq!(out.rows, [[Value::Int(1)]]);
}

#[test]
fn products_of_rows_stop_at_the_binding_budget() {
    let (g, s) = ring(30, 0);
    let limits = Limits {
        max_bindings: 50_000,
        ..Limits::default()
    };
    let ten = "[0,1,2,3,4,5,6,7,8,9]";
    for q in [
        format!("UNWIND {ten} AS a UNWIND {ten} AS b UNWIND {ten} AS c UNWIND {ten} AS d UNWIND {ten} AS e RETURN count(*)"),
        "MATCH (a), (b), (c), (d) RETURN count(*)".to_string(),
        "MATCH (a) WITH collect(a) AS ns UNWIND ns AS x UNWIND ns AS y UNWIND ns AS z RETURN count(*)".to_string(),
    ] {
        let e = execute(&g, &s, &q, &limits).unwrap_err();
        assert_eq!(e.kind, ErrorKind::BindingLimit, "{q}: {e}");
    }
}

#[test]
fn the_deadline_is_seen_inside_one_expression() {
    let (g, s) = ring(3, 0);
    // One row, no bindings to count: 16 MiB built by doubling, then copied about a
    // thousand times within a single expression (each `toLower` copies it): some
    // 20 GB of work, seconds even at memory speed. Without the clock read as values
    // are built and read, it would run that long past its deadline.
    let mut q = doubling(20, "'0123456789abcdef'", "WITH s + s AS s ");
    q.truncate(q.len() - "RETURN size(s)".len());
    let nested = format!("size({}s{})", "toLower(".repeat(90), ")".repeat(90));
    let reads: Vec<&str> = (0..13).map(|_| nested.as_str()).collect();
    q.push_str(&format!("RETURN [{}]", reads.join(", ")));
    let limits = Limits {
        max_query_bytes: 1 << 20,
        deadline: Some(std::time::Instant::now() + std::time::Duration::from_millis(200)),
        ..Limits::default()
    };
    let e = execute(&g, &s, &q, &limits).unwrap_err();
    assert_eq!(e.kind, ErrorKind::Deadline, "{e}");
}

#[test]
fn deep_texts_are_refused_before_the_parser_sees_them() {
    let (g, s) = ring(3, 0);
    let limits = Limits {
        max_query_bytes: 4 << 20,
        ..Limits::default()
    };
    let n = 100_000;
    for q in [
        format!("RETURN {}1{}", "(".repeat(n), ")".repeat(n)),
        format!("RETURN {}1{}", "[".repeat(n), "]".repeat(n)),
        format!("RETURN {}1{}", "{a: ".repeat(n), "}".repeat(n)),
        format!("RETURN {}true", "NOT ".repeat(n)),
        format!("RETURN {}1", "-".repeat(n)),
        format!("RETURN 1{}", " + 1".repeat(n)),
        format!(
            "MATCH (n) WHERE {}n.i = 1 RETURN n",
            "n.i = 1 OR ".repeat(n)
        ),
        format!("MATCH {}", "(a)-->".repeat(n)),
    ] {
        let e = execute(&g, &s, &q, &limits).unwrap_err();
        assert!(
            matches!(e.kind, ErrorKind::Unsupported | ErrorKind::TooLong),
            "{}: {e}",
            &q[..40]
        );
    }
    // The deepest text accepted runs, on the 2 MiB stack of a blocking thread.
    let q = format!("RETURN {}1{}", "(".repeat(99), ")".repeat(99));
    let nots = format!("RETURN {}true", "NOT ".repeat(99));
    let sum = format!("RETURN 1{}", " + 1".repeat(4_000));
    // Just within the token bound: the parser's recursion fits, lowering refuses.
    let chain = format!("RETURN {}true", "NOT ".repeat(4_090));
    let out = std::thread::Builder::new()
        .stack_size(2 << 20)
        .spawn(move || {
            let a = execute(&g, &s, &q, &Limits::default()).map(|o| o.rows);
            let b = execute(&g, &s, &nots, &Limits::default()).map(|o| o.rows);
            let c = execute(&g, &s, &sum, &limits);
            let d = execute(&g, &s, &chain, &limits);
            (
                a,
                b,
                c.map(|_| ()).map_err(|e| e.kind),
                d.map(|_| ()).map_err(|e| e.kind),
            )
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(out.0.unwrap(), [[Value::Int(1)]]);
    assert_eq!(out.1.unwrap(), [[Value::Bool(false)]]);
    // 8,000 tokens: past the parser's bound, refused as too long.
    assert_eq!(out.2, Err(ErrorKind::TooLong));
    assert_eq!(out.3, Err(ErrorKind::Unsupported));
}
