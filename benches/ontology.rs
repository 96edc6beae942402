//! Benchmark of the ontology core: classification of generated ontologies (about
//! three parents and one existential per class, a few properties, a property chain
//! and a transitive property) at 10,000 and 100,000 classes, and a proposal's check
//! (a few added axioms against the saturated state, with the classification diff) at
//! 10,000 classes; and reading OFN documents of 1, 5 and 20 MB (the parser, then
//! the pages an import makes of it, written and read back), whose time per MB must
//! stay flat. Prints a table; run with `cargo bench --bench ontology` (`-- ofn` for
//! the documents alone).

use cairn::domain::ontology::axiom::{Axiom, Origin, Sourced};
use cairn::domain::ontology::expr::ClassExpr;
use cairn::domain::ontology::model::load_pages;
use cairn::domain::ontology::ofn::{read_ofn, write_ofn};
use cairn::domain::ontology::reasoner::{classify, diff};
use std::time::{Duration, Instant};

#[path = "ontology/generate.rs"]
mod generate;
use generate::{class, generate};

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// This process's CPU time (user + system) in ms, from `/proc/self/stat` (Linux);
/// wall time alone misleads on a machine shared with other builds. 0 elsewhere.
fn cpu_ms() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which is in parentheses and may hold spaces).
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return 0.0;
    };
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    // utime and stime are fields 14 and 15 of the line, 12 and 13 after the name;
    // the kernel counts in 100 Hz ticks.
    (ticks(11) + ticks(12)) * 10.0
}

/// An OFN document of about `mb` megabytes: a generated ontology with a label and a
/// definition per class.
fn document(mb: usize) -> String {
    // About 356 bytes per class, measured on the generated ontology.
    let n = mb * 1_000_000 / 356;
    let o = generate(n, 7);
    let mut text = write_ofn(&o);
    let Some(end) = text.rfind(')') else {
        return text;
    };
    text.truncate(end);
    for i in 0..n {
        text.push_str(&format!(
            "AnnotationAssertion(rdfs:label g:C{i} \"Generated class {i}\")\n\
             AnnotationAssertion(skos:definition g:C{i} \"The class number {i}, made for the benchmark of the OFN reader.\")\n"
        ));
    }
    text.push_str(")\n");
    text
}

/// Reading 1, 5 and 20 MB documents: the parser, then the pages an import makes.
fn documents(rows: &mut Vec<(String, f64, f64, String)>) {
    for mb in [1usize, 5, 20] {
        let text = document(mb);
        let size = text.len() as f64 / 1e6;
        let (t, cpu) = (Instant::now(), cpu_ms());
        let r = read_ofn(&text, "bench.ofn");
        let (took, cpu) = (t.elapsed(), cpu_ms() - cpu);
        rows.push((
            format!(
                "read OFN, {size:.1} MB ({} axioms)",
                r.ontology.axioms.len()
            ),
            ms(took),
            cpu,
            format!("{:.0} cpu ms/MB, {} problems", cpu / size, r.problems.len()),
        ));
        let (t, cpu) = (Instant::now(), cpu_ms());
        let pages: Vec<(String, String)> = r
            .ontology
            .to_pages()
            .into_iter()
            .map(|(f, p)| (f, p.write()))
            .collect();
        let (took, cpu) = (t.elapsed(), cpu_ms() - cpu);
        rows.push((
            format!("its {} pages made and written", pages.len()),
            ms(took),
            cpu,
            format!("{:.0} cpu ms/MB", cpu / size),
        ));
        let (t, cpu) = (Instant::now(), cpu_ms());
        let back = load_pages(pages.iter().map(|(f, t)| (f.as_str(), t.as_str())));
        let (took, cpu) = (t.elapsed(), cpu_ms() - cpu);
        rows.push((
            "the pages read back".to_string(),
            ms(took),
            cpu,
            format!(
                "{:.0} cpu ms/MB, same content: {}",
                cpu / size,
                back.ontology.same_content(&r.ontology)
            ),
        ));
    }
}

fn print(rows: Vec<(String, f64, f64, String)>) {
    println!("| measurement | wall ms | cpu ms | notes |");
    println!("|---|---:|---:|---|");
    for (what, t, cpu, note) in rows {
        println!("| {what} | {t:.1} | {cpu:.0} | {note} |");
    }
}

fn main() {
    if std::env::args().skip(1).any(|a| a == "ofn") {
        let mut rows = Vec::new();
        documents(&mut rows);
        print(rows);
        return;
    }
    // `cargo bench --bench ontology -- N` classifies N classes only (for profiling).
    if let Some(n) = std::env::args()
        .skip(1)
        .find_map(|a| a.parse::<usize>().ok())
    {
        let o = generate(n, 42);
        let t = Instant::now();
        let cl = classify(&o);
        println!(
            "classified {n} classes in {:.1} ms: {} subsumptions",
            ms(t.elapsed()),
            cl.subsumptions().len()
        );
        return;
    }
    let mut rows: Vec<(String, f64, f64, String)> = Vec::new();
    for &n in &[10_000usize, 100_000] {
        let o = generate(n, 42);
        let (t, cpu) = (Instant::now(), cpu_ms());
        let cl = classify(&o);
        let (took, cpu) = (t.elapsed(), cpu_ms() - cpu);
        let subs = cl.subsumptions().len();
        rows.push((
            format!("classify {n} classes ({} axioms)", o.axioms.len()),
            ms(took),
            cpu,
            format!(
                "{subs} subsumptions, target {}",
                if n == 100_000 { "≤ 5000 ms" } else { "-" }
            ),
        ));
        if n == 10_000 {
            // A proposal: a new class under two existing ones with two relationships.
            let extra: Vec<Sourced> = [
                Axiom::SubClassOf(ClassExpr::class("g:New"), ClassExpr::Class(class(123))),
                Axiom::SubClassOf(ClassExpr::class("g:New"), ClassExpr::Class(class(4567))),
                Axiom::SubClassOf(
                    ClassExpr::class("g:New"),
                    ClassExpr::some("g:partOf", ClassExpr::Class(class(12))),
                ),
                Axiom::SubClassOf(
                    ClassExpr::Class(class(77)),
                    ClassExpr::some("g:uses", ClassExpr::Class(class(900))),
                ),
            ]
            .into_iter()
            .map(|axiom| Sourced {
                axiom,
                origin: Origin::new("proposal.md", 1),
            })
            .collect();
            let runs = 20;
            let (t, cpu) = (Instant::now(), cpu_ms());
            let mut gained = 0;
            for _ in 0..runs {
                let next = cl.with_axioms(&extra);
                gained = diff(&cl, &next).gained.len();
            }
            let each = t.elapsed() / runs;
            let cpu = (cpu_ms() - cpu) / f64::from(runs);
            rows.push((
                format!("proposal check at {n} classes (4 axioms, with diff)"),
                ms(each),
                cpu,
                format!("{gained} subsumptions gained, target ≤ 100 ms"),
            ));
            let (t, cpu) = (Instant::now(), cpu_ms());
            let j = cl
                .explain_subsumption("g:C4321", &class(0))
                .map(|j| j.axioms.len())
                .unwrap_or(0);
            let cpu = cpu_ms() - cpu;
            rows.push((
                format!("explain one subsumption at {n} classes"),
                ms(t.elapsed()),
                cpu,
                format!("{j} axioms"),
            ));
        }
    }
    documents(&mut rows);
    print(rows);
}
