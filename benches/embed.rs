//! Embedding benchmark: model load time, throughput on one core (batched, and one query
//! at a time), resident memory after load and with 20,000 vectors, and cosine ranking
//! time over 20,000 × 384 vectors. Prints a table.
//!
//!     scripts/fetch-model.sh target/test-model   # once
//!     cargo bench --bench embed
//!
//! The model is read from $CAIRN_MODEL_DIR, else target/test-model. Everything runs on
//! one thread (RAYON_NUM_THREADS=1, set before candle starts its pool).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use cairn::embed::{hashing::Hashing, minilm::MiniLm, vector, Embedder, DIM};

/// Realistic descriptions of code, 10–40 words each once combined with a clause.
const BASES: &[&str] = &[
    "The session manager validates bearer tokens against the cache before each request",
    "Parses the project configuration file and merges environment overrides into the defaults",
    "Retries failed webhook deliveries with exponential backoff and gives up after five attempts",
    "Renders the invoice as a PDF using the customer's locale for dates and currency",
    "A thin wrapper around the git command line that reads blobs at a given commit",
    "Computes the shortest path between two stations on the transit graph",
    "Schedules background jobs on a fixed pool of workers and reports their progress",
    "Stores uploaded images in object storage and keeps a thumbnail next to each original",
    "The rate limiter counts requests per client in a sliding window",
    "Migrates the database schema at start-up and refuses to run on a newer version",
    "Converts markdown notes into ontology classes, properties and axioms",
    "Deduplicates search results by canonical URL before ranking them",
];
const CLAUSES: &[&str] = &[
    "",
    " so that stale entries never reach the client.",
    ", logging every failure with its request id and the time it took, so operators can trace slow calls.",
    " and exposes the result through a small trait that tests replace with an in-memory fake, which keeps the suite fast and deterministic on every platform.",
];

fn sentences() -> Vec<String> {
    let mut v = Vec::new();
    for c in CLAUSES {
        for b in BASES {
            v.push(format!("{b}{c}"));
        }
    }
    v
}

fn rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|kb| kb.parse::<f64>().ok())
        })
        .map(|kb| kb / 1024.0)
        .unwrap_or(f64::NAN)
}

fn median(mut xs: Vec<Duration>) -> Duration {
    xs.sort();
    xs[xs.len() / 2]
}

fn throughput(e: &dyn Embedder, texts: &[String], batched: bool) -> f64 {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let started = Instant::now();
    let mut n = 0usize;
    while started.elapsed() < Duration::from_secs(3) {
        if batched {
            n += e.embed(&refs).map(|v| v.len()).unwrap_or(0);
        } else {
            for t in &refs {
                n += e.embed(&[t]).map(|v| v.len()).unwrap_or(0);
            }
        }
    }
    n as f64 / started.elapsed().as_secs_f64()
}

fn row(what: &str, value: String) {
    println!("| {what:<52} | {value:>16} |");
}

fn main() {
    // Must precede the first candle call: rayon's pool and candle's gemm read it.
    std::env::set_var("RAYON_NUM_THREADS", "1");
    let dir = std::env::var_os("CAIRN_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-model"));
    let texts = sentences();
    let words: usize = texts.iter().map(|t| t.split_whitespace().count()).sum();

    println!("| {:<52} | {:>16} |", "measure", "value");
    println!("|{}|{}|", "-".repeat(54), "-".repeat(18));
    row(
        "sentences (mean words)",
        format!("{} ({:.0})", texts.len(), words as f64 / texts.len() as f64),
    );
    let rss0 = rss_mb();
    row("resident memory before load (MB)", format!("{rss0:.0}"));

    let started = Instant::now();
    let model = match MiniLm::load(&dir) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("{e}\nrun scripts/fetch-model.sh {}", dir.display());
            std::process::exit(1);
        }
    };
    row(
        "model load, incl. one warm-up pass (ms)",
        format!("{:.0}", started.elapsed().as_secs_f64() * 1e3),
    );
    row(
        "resident memory after load (MB)",
        format!("{:.0}", rss_mb()),
    );

    row(
        "all-minilm-l6-v2, 1 core, batched (sentences/s)",
        format!("{:.1}", throughput(&model, &texts, true)),
    );
    row(
        "all-minilm-l6-v2, 1 core, one at a time (sentences/s)",
        format!("{:.1}", throughput(&model, &texts, false)),
    );
    let mut times = Vec::new();
    for _ in 0..30 {
        let q = Instant::now();
        let _ = model.embed(&["how are session tokens checked"]);
        times.push(q.elapsed());
    }
    row(
        "one short query, median of 30 (ms)",
        format!("{:.1}", median(times).as_secs_f64() * 1e3),
    );
    row(
        "hashing-v1, 1 core (sentences/s)",
        format!("{:.0}", throughput(&Hashing, &texts, true)),
    );

    // 20,000 normalised pseudo-random vectors (xorshift: deterministic, no dependency).
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 40) as f32 / (1u64 << 24) as f32 - 0.5
    };
    let mut m = vector::Matrix::new(DIM);
    for _ in 0..20_000 {
        let mut v: Vec<f32> = (0..DIM).map(|_| next()).collect();
        vector::normalize(&mut v);
        m.push(&v);
    }
    let blobs: Vec<Vec<u8>> = (0..20_000)
        .filter_map(|i| m.row(i).map(|r| vector::to_blob(&r)))
        .collect();
    let query = model
        .embed(&["how are session tokens checked"])
        .ok()
        .and_then(|mut v| v.pop())
        .map(|e| e.vector)
        .unwrap_or_else(|| vec![0.0; DIM]);
    let mut times = Vec::new();
    let mut hits = 0;
    for _ in 0..50 {
        let t = Instant::now();
        hits += m.top_k(&query, 20, -1.0).len();
        times.push(t.elapsed());
    }
    assert_eq!(hits, 50 * 20);
    row(
        "rank 20,000 x 384 by cosine, top 20, median (ms)",
        format!("{:.2}", median(times).as_secs_f64() * 1e3),
    );
    let mut times = Vec::new();
    for _ in 0..10 {
        let t = Instant::now();
        let mut mm = vector::Matrix::new(DIM);
        for b in &blobs {
            mm.push_blob(b);
        }
        times.push(t.elapsed());
    }
    row(
        "decode 20,000 BLOBs into a matrix, median (ms)",
        format!("{:.1}", median(times).as_secs_f64() * 1e3),
    );
    drop(blobs);
    row(
        "resident memory, model + 20,000 vectors (MB)",
        format!("{:.0}", rss_mb()),
    );
}
