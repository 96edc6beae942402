//! Benchmark of the ontology query language: typical queries, parse and validation
//! included, over a generated ontology of 10,000 classes (three SUBCLASS_OF parents
//! and one HAS_PART each, every class labelled with all its superclasses, as the
//! ontology is served), and the neighbourhood traversal. Prints a table.
//!
//! Run: `cargo bench --bench ontology_query`
//!
//! The machine is shared, so beside wall-clock times the table gives the CPU time
//! the thread spent per query (from /proc/thread-self/schedstat), which waiting
//! for a core does not inflate.

use std::time::{Duration, Instant};

use cairn::domain::ontology_query::{
    execute, traverse, Limits, NameKind, PropertyGraph, Schema, TraverseDirection, TraverseOptions,
    Value,
};

const CLASSES: usize = 10_000;
const SAMPLES: usize = 200;
const DOMAINS: [&str; 3] = ["ai", "bc", "mv"];

fn iri(i: usize) -> String {
    format!("{}:Class{i}", DOMAINS[i % 3])
}

/// Three distinct parents of class `i` among the classes before it (none for 0).
fn parents(i: usize) -> Vec<usize> {
    if i == 0 {
        return Vec::new();
    }
    let mut ps = vec![(i - 1) / 2, (i - 1) / 3, (i - 1) / 5];
    ps.sort_unstable();
    ps.dedup();
    ps
}

fn build() -> (PropertyGraph, Schema, f64) {
    let mut ancestors: Vec<Vec<usize>> = Vec::with_capacity(CLASSES);
    let mut g = PropertyGraph::new();
    let mut ids = Vec::with_capacity(CLASSES);
    let mut label_total = 0usize;
    for i in 0..CLASSES {
        let mut anc: Vec<usize> = Vec::new();
        for p in parents(i) {
            anc.push(p);
            anc.extend(ancestors[p].iter().copied());
        }
        anc.sort_unstable();
        anc.dedup();
        let mut labels = vec!["OwlClass".to_string(), iri(i)];
        labels.extend(anc.iter().map(|&a| iri(a)));
        label_total += labels.len();
        ancestors.push(anc);
        let props = vec![
            ("iri", Value::from(iri(i))),
            (
                "termId",
                Value::from(format!("{}-{:04}", DOMAINS[i % 3].to_uppercase(), i)),
            ),
            ("preferredTerm", Value::from(format!("Class number {i}"))),
            ("domain", Value::from(DOMAINS[i % 3])),
            (
                "status",
                Value::from(if i % 7 == 0 { "draft" } else { "approved" }),
            ),
            (
                "definition",
                Value::from(format!("The {i}th class of the generated ontology.")),
            ),
            (
                "qualityScore",
                Value::Float((i * 7919 % 1000) as f64 / 1000.0),
            ),
            ("authorityScore", Value::Float(0.5)),
            ("maturity", Value::from("mature")),
            ("altTerms", Value::List(vec![Value::from(format!("C{i}"))])),
        ];
        ids.push(g.add_node(labels, props));
    }
    let none: [(&str, Value); 0] = [];
    for i in 0..CLASSES {
        for p in parents(i) {
            g.add_edge(
                ids[i],
                ids[p],
                "SUBCLASS_OF",
                [("inferred", Value::Bool(false))],
            )
            .unwrap();
        }
        // One HAS_PART each, to a class elsewhere in the ontology.
        g.add_edge(
            ids[i],
            ids[(i * 31 + 17) % CLASSES],
            "HAS_PART",
            none.clone(),
        )
        .unwrap();
    }
    let mut s = Schema::from_graph(&g);
    s.alias_local_names(NameKind::Label, ':');
    (g, s, label_total as f64 / CLASSES as f64)
}

fn stats(mut d: Vec<Duration>) -> (Duration, Duration, Duration) {
    d.sort();
    let at = |q: f64| d[((d.len() - 1) as f64 * q) as usize];
    (at(0.5), at(0.95), d[d.len() - 1])
}

/// Nanoseconds this thread has run on a CPU, or 0 where the kernel does not say.
fn cpu_ns() -> u64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|t| t.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn ms(d: Duration) -> String {
    format!("{:.3}", d.as_secs_f64() * 1000.0)
}

fn main() {
    let t = Instant::now();
    let (g, s, labels) = build();
    let built = t.elapsed();
    println!(
        "graph: {} classes, {} edges, {labels:.1} labels per class; built with schema in {} ms",
        g.node_count(),
        g.edge_count(),
        ms(built)
    );
    let t = Instant::now();
    let s2 = {
        let mut s2 = Schema::from_graph(&g);
        s2.alias_local_names(NameKind::Label, ':');
        s2
    };
    println!("schema derived from the graph in {} ms", ms(t.elapsed()));
    drop(s2);

    let queries: &[(&str, &str)] = &[
        (
            "typical (label, rel, WHERE, ORDER BY, LIMIT 20)",
            "MATCH (c:OwlClass)-[:HAS_PART]->(p) WHERE c.qualityScore > 0.5 AND c.status = 'approved' \
             RETURN c.iri, p.preferredTerm ORDER BY c.qualityScore DESC, c.iri LIMIT 20",
        ),
        (
            "subsumption label, incoming SUBCLASS_OF",
            "MATCH (c:`ai:Class42`)<-[:SUBCLASS_OF]-(s) WHERE s.status = 'approved' \
             RETURN s.iri, c.iri ORDER BY s.iri LIMIT 20",
        ),
        (
            "by iri, variable length *1..3",
            "MATCH (c {iri: 'bc:Class9001'})-[:SUBCLASS_OF*1..3]->(a) RETURN DISTINCT a.iri ORDER BY a.iri LIMIT 20",
        ),
        (
            "aggregate per domain",
            "MATCH (c:OwlClass) RETURN c.domain, count(*), avg(c.qualityScore) ORDER BY c.domain",
        ),
        (
            "misspelt (two repairs)",
            "MATCH (c:OwlClas)-[:HAS_PRT]->(p) WHERE c.qualityScore > 0.5 \
             RETURN c.iri ORDER BY c.qualityScore DESC LIMIT 20",
        ),
        (
            "unknown label (hints over 20,000 names)",
            "MATCH (c:ZebraFish)-[:HAS_PART]->(p) RETURN c LIMIT 20",
        ),
    ];
    println!();
    println!(
        "{:<48} {:>10} {:>10} {:>10} {:>10} {:>6}",
        "query", "median ms", "p95 ms", "max ms", "cpu ms", "rows"
    );
    let limits = Limits::default();
    for (name, q) in queries {
        let mut times = Vec::with_capacity(SAMPLES);
        let mut rows = 0;
        let cpu = cpu_ns();
        for _ in 0..SAMPLES {
            let t = Instant::now();
            let r = execute(&g, &s, q, &limits);
            times.push(t.elapsed());
            rows = r.map(|o| o.rows.len()).unwrap_or(0);
        }
        let cpu = Duration::from_nanos((cpu_ns() - cpu) / SAMPLES as u64);
        let (med, p95, max) = stats(times);
        println!(
            "{name:<48} {:>10} {:>10} {:>10} {:>10} {rows:>6}",
            ms(med),
            ms(p95),
            ms(max),
            ms(cpu)
        );
    }
    let start = g.find_node("iri", &Value::from("ai:Class3")).unwrap();
    let opts = TraverseOptions {
        depth: 3,
        rel_types: Some(vec!["SUBCLASS_OF".into(), "HAS_PART".into()]),
        direction: TraverseDirection::Both,
        max_nodes: 500,
    };
    let mut times = Vec::with_capacity(SAMPLES);
    let mut n = 0;
    let cpu = cpu_ns();
    for _ in 0..SAMPLES {
        let t = Instant::now();
        let sub = traverse(&g, &s, start, &opts).unwrap();
        times.push(t.elapsed());
        n = sub.nodes.len();
    }
    let cpu = Duration::from_nanos((cpu_ns() - cpu) / SAMPLES as u64);
    let (med, p95, max) = stats(times);
    println!(
        "{:<48} {:>10} {:>10} {:>10} {:>10} {n:>6}",
        "traverse depth 3, both ways, at most 500 nodes",
        ms(med),
        ms(p95),
        ms(max),
        ms(cpu)
    );
}
