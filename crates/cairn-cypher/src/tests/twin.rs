//! The matcher against a slow, obviously correct twin: random small graphs,
//! random patterns, counts compared with plain loops over the edge list. And the
//! bounded ORDER BY ... LIMIT against a full sort.

use super::*;

struct Small {
    g: PropertyGraph,
    s: Schema,
    labels: Vec<Vec<&'static str>>,
    w: Vec<i64>,
    /// (from, to, type)
    edges: Vec<(usize, usize, &'static str)>,
}

const LABELS: [&str; 3] = ["A", "B", "C"];
const TYPES: [&str; 2] = ["R", "S"];

fn small(rng: &mut Rng) -> Small {
    let n = 4 + rng.below(9);
    let mut g = PropertyGraph::new();
    let mut labels = Vec::new();
    let mut w = Vec::new();
    let mut ids = Vec::new();
    for _ in 0..n {
        let ls: Vec<&str> = LABELS
            .iter()
            .copied()
            .filter(|_| rng.below(2) == 0)
            .collect();
        let wi = rng.below(3) as i64;
        ids.push(g.add_node(ls.clone(), [("w", Value::Int(wi))]));
        labels.push(ls);
        w.push(wi);
    }
    let mut edges = Vec::new();
    for _ in 0..rng.below(3 * n) {
        let (a, b) = (rng.below(n), rng.below(n));
        // No self-loops: whether an undirected pattern sees one once or twice is
        // not what this test is about.
        if a == b {
            continue;
        }
        let t = TYPES[rng.below(2)];
        g.add_edge(ids[a], ids[b], t, [("k", Value::Int(1))])
            .unwrap();
        edges.push((a, b, t));
    }
    let mut s = Schema::from_graph(&g);
    for l in LABELS {
        s.add(NameKind::Label, l);
    }
    for t in TYPES {
        s.add(NameKind::RelationshipType, t);
    }
    s.add(NameKind::PropertyKey, "w");
    Small {
        g,
        s,
        labels,
        w,
        edges,
    }
}

/// The edges a pattern of direction `d` ("->", "<-", "-") may take from `n`,
/// with the node at their other end.
fn steps(sm: &Small, n: usize, d: &str, t: Option<&str>) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    for (i, &(a, b, ty)) in sm.edges.iter().enumerate() {
        if t.is_some_and(|t| t != ty) {
            continue;
        }
        if (d == "->" || d == "-") && a == n {
            out.push((i, b));
        }
        if (d == "<-" || d == "-") && b == n {
            out.push((i, a));
        }
    }
    out
}

fn has(sm: &Small, n: usize, l: Option<&str>) -> bool {
    l.is_none_or(|l| sm.labels[n].contains(&l))
}

fn pat(d: &str, inner: &str) -> String {
    match d {
        "->" => format!("-[{inner}]->"),
        "<-" => format!("<-[{inner}]-"),
        _ => format!("-[{inner}]-"),
    }
}

fn count(sm: &Small, q: &str) -> i64 {
    let limits = Limits {
        max_hops: 4,
        ..Limits::default()
    };
    match execute(&sm.g, &sm.s, q, &limits) {
        Ok(out) => match out.rows.first().and_then(|r| r.first()) {
            Some(Value::Int(i)) => *i,
            other => panic!("{q}: {other:?}"),
        },
        Err(e) => panic!("{q}: {e}"),
    }
}

/// Trails of `lo..=hi` hops from `n` (no edge twice), counted by end node test.
fn trails(
    sm: &Small,
    n: usize,
    d: &str,
    t: Option<&str>,
    (lo, hi): (usize, usize),
    end: Option<&str>,
    used: &mut Vec<usize>,
) -> i64 {
    let mut c = 0;
    if used.len() >= lo && has(sm, n, end) {
        c += 1;
    }
    if used.len() < hi {
        for (e, o) in steps(sm, n, d, t) {
            if !used.contains(&e) {
                used.push(e);
                c += trails(sm, o, d, t, (lo, hi), end, used);
                used.pop();
            }
        }
    }
    c
}

#[test]
fn the_matcher_agrees_with_plain_loops() {
    let mut rng = Rng::new(0x7A11_0001);
    let dirs = ["->", "<-", "-"];
    let pick_label = |rng: &mut Rng| [None, Some("A"), Some("B"), Some("C")][rng.below(4)];
    let pick_type = |rng: &mut Rng| [None, Some("R"), Some("S")][rng.below(3)];
    let lab = |l: Option<&str>| l.map_or(String::new(), |l| format!(":{l}"));
    let mut checked = 0;
    for _ in 0..60 {
        let sm = small(&mut rng);
        let n = sm.labels.len();
        for _ in 0..10 {
            let (x, y) = (pick_label(&mut rng), pick_label(&mut rng));
            let (t1, t2) = (pick_type(&mut rng), pick_type(&mut rng));
            let (d1, d2) = (dirs[rng.below(3)], dirs[rng.below(3)]);

            // One hop.
            let q = format!(
                "MATCH (a{}){}(b{}) RETURN count(*)",
                lab(x),
                pat(d1, &lab(t1)),
                lab(y)
            );
            let mut want = 0;
            for a in (0..n).filter(|&a| has(&sm, a, x)) {
                want += steps(&sm, a, d1, t1)
                    .iter()
                    .filter(|(_, b)| has(&sm, *b, y))
                    .count() as i64;
            }
            assert_eq!(count(&sm, &q), want, "{q}");

            // Two hops, distinct edges, a WHERE across both ends.
            let q = format!(
                "MATCH (a{}){}(b){}(c) WHERE a.w <= c.w RETURN count(*)",
                lab(x),
                pat(d1, &lab(t1)),
                pat(d2, &lab(t2))
            );
            let mut want = 0;
            for a in (0..n).filter(|&a| has(&sm, a, x)) {
                for (e1, b) in steps(&sm, a, d1, t1) {
                    for (e2, c) in steps(&sm, b, d2, t2) {
                        if e1 != e2 && sm.w[a] <= sm.w[c] {
                            want += 1;
                        }
                    }
                }
            }
            assert_eq!(count(&sm, &q), want, "{q}");

            // Variable length, and the same written from its other end.
            let lo = rng.below(3);
            let hi = lo + rng.below(3);
            let inner = format!("{}*{lo}..{hi}", lab(t1));
            let q = format!(
                "MATCH (a{}){}(b{}) RETURN count(*)",
                lab(x),
                pat(d1, &inner),
                lab(y)
            );
            let mut want = 0;
            for a in (0..n).filter(|&a| has(&sm, a, x)) {
                want += trails(&sm, a, d1, t1, (lo, hi), y, &mut Vec::new());
            }
            assert_eq!(count(&sm, &q), want, "{q}");
            let back = match d1 {
                "->" => "<-",
                "<-" => "->",
                _ => "-",
            };
            let q = format!(
                "MATCH (b{}){}(a{}) RETURN count(*)",
                lab(y),
                pat(back, &inner),
                lab(x)
            );
            assert_eq!(count(&sm, &q), want, "{q}");
            checked += 4;
        }
    }
    assert!(checked >= 2_000);
}

#[test]
fn a_bounded_order_by_equals_the_full_sort_cut() {
    let f = fixture();
    for order in [
        "n.qualityScore DESC, n.domain",
        "n.maturity",
        "n.maturity DESC",
        "n.altTerms, n.iri DESC",
    ] {
        let full = rows(
            &f,
            &format!("MATCH (n:OwlClass) RETURN n.iri ORDER BY {order}"),
        );
        assert_eq!(full.len(), 33);
        for skip in 0..5 {
            for limit in 0..8 {
                let q = format!(
                    "MATCH (n:OwlClass) RETURN n.iri ORDER BY {order} SKIP {skip} LIMIT {limit}"
                );
                let want: Vec<String> = full.iter().skip(skip).take(limit).cloned().collect();
                assert_eq!(rows(&f, &q), want, "{q}");
            }
        }
        let limits = Limits {
            max_rows: 3,
            ..Limits::default()
        };
        let out = execute(
            &f.graph,
            &f.schema,
            &format!("MATCH (n:OwlClass) RETURN n.iri ORDER BY {order}"),
            &limits,
        )
        .unwrap();
        let got: Vec<String> = out.rows.iter().map(|r| show(&f.graph, &r[0])).collect();
        assert_eq!(got, full[..3]);
        assert!(out.truncated);
    }
}
