//! Retrieval quality on held-out sets, through the real `cairn` binary over MCP stdio,
//! with the real model: the instrument a ranking change is judged by.
//!
//! Four sets (see `benches/retrieval/corpus.rs`): the Python standard library's
//! docstrings as code entities (`search`, modes hybrid, lexical, vector), Debian
//! package descriptions as knowledge-graph atoms (`query_graph` search) and as tasks
//! (`query_container` search), chatterbot-corpus's dialogues and our own 100-turn
//! conversation as memory atoms (`query_memory` recall). Each set is loaded into a
//! fresh database, embedded by `cairn reindex`, then asked its queries; per leg the
//! table gives recall@1, @5, @10 and MRR (see `corpus::Scores`), recall@5 per query
//! kind, and how many queries got no hit at all. Where a search has no mode parameter
//! the bench computes the single legs itself over the same texts: BM25, and the
//! model's cosine over the vectors the server stored. Last, embedding throughput:
//! 1,000 and 10,000 short statements remembered, then the recall that embeds them.
//!
//!     cargo bench --bench retrieval                 # everything (about 30 minutes)
//!     cargo bench --bench retrieval -- code notes   # some sets: code notes dialogue conversation throughput
//!     CAIRN_BENCH_LOCOMO=DIR cargo bench --bench retrieval -- locomo   # LoCoMo's JSON files in DIR
//!
//! Needs the model (`scripts/fetch-model.sh target/test-model`, or `$CAIRN_MODEL_DIR`),
//! Debian's CPython 3.11 and dpkg status, and PyPI for chatterbot-corpus (downloaded
//! once into `target/retrieval/`). SQLite only (the bench reads the stored vectors).

use std::path::PathBuf;
use std::time::Instant;

mod client;
#[path = "retrieval/corpus.rs"]
mod corpus;
#[path = "retrieval/load.rs"]
mod load;

use corpus::{Kind, Set};
use load::{Env, Leg, Report};

struct Dir(PathBuf);
impl Drop for Dir {
    fn drop(&mut self) {
        if std::env::var_os("CAIRN_BENCH_KEEP").is_none() {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

fn pct(x: Option<f64>) -> String {
    x.map_or("—".into(), |v| format!("{v:.2}"))
}

fn print_set(set: &Set, r: &Report) {
    let count = |k: Kind| set.queries.iter().filter(|q| q.kind == k).count();
    let kinds: Vec<String> = [Kind::Paraphrase, Kind::Exact, Kind::Question]
        .into_iter()
        .filter(|k| count(*k) > 0)
        .map(|k| format!("{} {}", count(k), k.label()))
        .collect();
    println!();
    println!(
        "### {} — {} items, {} queries ({})",
        set.name,
        set.items.len(),
        set.queries.len(),
        kinds.join(", ")
    );
    println!("source: {}", set.source);
    for n in &r.notes {
        println!("{n}");
    }
    println!();
    println!("| leg | R@1 | R@5 | R@10 | MRR | R@5 paraphrase | R@5 exact | no hit |");
    println!("|---|---|---|---|---|---|---|---|");
    for Leg {
        label,
        scores: s,
        empty,
    } in &r.legs
    {
        println!(
            "| {label} | {:.2} | {:.2} | {:.2} | {:.2} | {} | {} | {empty} |",
            s.recall1(),
            s.recall5(),
            s.recall10(),
            s.mrr(),
            pct(s.kind5(Kind::Paraphrase)),
            pct(s.kind5(Kind::Exact)),
        );
    }
    if std::env::var_os("CAIRN_BENCH_MISSES").is_some() {
        for leg in &r.legs {
            for m in &leg.scores.misses {
                println!("miss ({}): {m}", leg.label);
            }
        }
    }
}

fn check(set: &Set) {
    let missing = set.missing();
    assert!(
        missing.is_empty(),
        "{}: queries name ids the corpus lacks: {missing:?}",
        set.name
    );
}

fn main() {
    let args: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let want = |s: &str| args.is_empty() || args.iter().any(|a| a == s);
    let model = load::model_dir();
    assert!(
        model.join("model.safetensors").exists(),
        "no model at {}: run scripts/fetch-model.sh target/test-model (or set CAIRN_MODEL_DIR)",
        model.display()
    );
    let dir =
        Dir(std::env::temp_dir().join(format!("cairn-bench-retrieval-{}", std::process::id())));
    std::fs::create_dir_all(&dir.0).expect("temp dir");
    let env = Env {
        model: model.clone(),
        dir: dir.0.clone(),
        embedder: cairn::embed::minilm::MiniLm::load(&model).expect("load the model"),
    };
    println!(
        "retrieval benchmark — cairn {} ({}), model {}",
        env!("CARGO_PKG_VERSION"),
        client::BIN,
        model.display()
    );
    println!("recall@k: share of a query's relevant ids in the top k, out of min(k, relevant); MRR over the top 10");
    let all = Instant::now();
    let code = corpus::stdlib();
    let notes = corpus::debian();
    let dialogue = corpus::chatterbot();
    let conversation = corpus::conversation();
    for s in [&code, &notes, &dialogue, &conversation] {
        check(s);
    }
    if want("code") {
        let r = load::code(&env, &code, None);
        print_set(&code, &r);
    }
    if want("notes") {
        let r = load::notes(&env, &notes);
        print_set(&notes, &r);
    }
    if want("dialogue") {
        let r = load::memory(&env, &dialogue, "dialogue.db", 1);
        print_set(&dialogue, &r);
    }
    if want("conversation") {
        let r = load::memory(&env, &conversation, "conversation.db", 5);
        print_set(&conversation, &r);
    }
    // LoCoMo, when its conversations are on this machine (never in the repository).
    if let Some(d) = std::env::var_os("CAIRN_BENCH_LOCOMO").filter(|_| want("locomo")) {
        let sets = corpus::locomo(std::path::Path::new(&d));
        let mut merged: Option<Report> = None;
        let mut all = Set {
            name: "LoCoMo (public; measured on this machine, not in the repository)",
            source: format!(
                "{} ({} conversations, one database each)",
                d.to_string_lossy(),
                sets.len()
            ),
            items: Vec::new(),
            queries: Vec::new(),
        };
        for (i, s) in sets.iter().enumerate() {
            let r = load::memory(&env, s, &format!("locomo-{i}.db"), 1);
            all.items.extend(s.items.iter().cloned());
            all.queries.extend(s.queries.iter().cloned());
            match &mut merged {
                None => merged = Some(r),
                Some(m) => {
                    for (a, b) in m.legs.iter_mut().zip(&r.legs) {
                        a.scores.merge(&b.scores);
                        a.empty += b.empty;
                        // A count in a label was the first conversation's.
                        if let Some((head, _)) = a.label.split_once(" (") {
                            if !a.label.starts_with("bench: BM25") {
                                a.label = head.to_string();
                            }
                        }
                    }
                    m.notes.extend(r.notes);
                }
            }
        }
        if let Some(m) = merged {
            print_set(&all, &m);
        }
    }
    if want("throughput") {
        println!();
        println!("### embedding throughput through the server (short statements, < 40 words)");
        println!();
        println!("| statements | embedded in | texts/s | target |");
        println!("|---|---|---|---|");
        // `CAIRN_BENCH_THROUGHPUT=200,500` measures other sizes.
        let sizes: Vec<usize> = std::env::var("CAIRN_BENCH_THROUGHPUT")
            .ok()
            .map(|v| v.split(',').filter_map(|n| n.trim().parse().ok()).collect())
            .unwrap_or_else(|| vec![1_000, 10_000]);
        for n in sizes {
            let st = corpus::statements(&[&notes, &dialogue, &code], n);
            let (rate, took) = load::throughput(&env, &st);
            println!("| {n} | {took:.1} s | {rate:.0} | ≥ 200 |");
        }
    }
    eprintln!("retrieval bench took {:.0} s", all.elapsed().as_secs_f64());
}
