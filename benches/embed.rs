//! Embedding benchmark: model load time, throughput on one core (batched, and one query
//! at a time), resident memory after load and with 20,000 vectors, and cosine ranking
//! time over 20,000 × 384 vectors; then, in a child process with both cores, texts/s on
//! 1,000 and 10,000 short statements (6 to 20 words, as memory holds) in the batches
//! `cairn reindex` (64) and the background (8) send, and the two between them (the
//! throughput curve a batch size is chosen on). Prints a table.
//!
//!     scripts/fetch-model.sh target/test-model   # once
//!     cargo bench --bench embed
//!
//! The model is read from $CAIRN_MODEL_DIR, else target/test-model. The first part runs
//! on one thread (RAYON_NUM_THREADS=1, set before candle starts its pool); the child
//! (`embed -- --cores N`, the machine's count by default) on N.

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

/// `n` distinct short statements of 6 to 20 words, the same every run.
fn statements(n: usize) -> Vec<String> {
    const WHO: &[&str] = &[
        "The billing service",
        "Our deploy script",
        "The search index",
        "The mobile client",
        "The nightly backup",
        "Alice's team",
        "The payments API",
        "The staging cluster",
        "The login page",
        "The ingest worker",
    ];
    const DOES: &[&str] = &[
        "retries failed requests",
        "keeps its cache",
        "writes logs",
        "rejects old tokens",
        "moved to PostgreSQL",
        "pins its dependencies",
        "runs on two cores",
        "sends weekly reports",
    ];
    const HOW: &[&str] = &[
        "",
        " every five minutes",
        " since the March release",
        " before each deploy",
        " unless the flag is off",
        " and alerts the on-call engineer when it fails twice in a row",
        " in the eu-west region only",
        " because the old queue lost messages under load",
    ];
    let mut out = Vec::with_capacity(n);
    let mut i = 0usize;
    while out.len() < n {
        let (a, b, c) = (
            i % WHO.len(),
            (i / WHO.len()) % DOES.len(),
            (i / (WHO.len() * DOES.len())) % HOW.len(),
        );
        out.push(format!("{} {}{} (note {i}).", WHO[a], DOES[b], HOW[c]));
        i += 1;
    }
    out
}

/// Texts per second embedding `texts` in calls of `batch`.
fn texts_per_s(e: &dyn Embedder, texts: &[String], batch: usize) -> f64 {
    let refs: Vec<&str> = texts.iter().map(String::as_str).collect();
    let started = Instant::now();
    for chunk in refs.chunks(batch) {
        e.embed(chunk).expect("embed");
    }
    texts.len() as f64 / started.elapsed().as_secs_f64()
}

/// The child's part: throughput on `cores` threads.
fn on_cores(model: &MiniLm, cores: usize) {
    for n in [1_000, 10_000] {
        let texts = statements(n);
        let words: usize = texts.iter().map(|t| t.split_whitespace().count()).sum();
        for batch in [64, 32, 16, 8] {
            row(
                &format!(
                    "{n} statements ({:.0} words), {cores} cores, batches of {batch} (texts/s)",
                    words as f64 / n as f64
                ),
                format!("{:.1}", texts_per_s(model, &texts, batch)),
            );
        }
    }
}

fn row(what: &str, value: String) {
    println!("| {what:<52} | {value:>16} |");
}

fn main() {
    let dir = std::env::var_os("CAIRN_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-model"));
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--cores") {
        let cores: usize = args.get(i + 1).and_then(|c| c.parse().ok()).unwrap_or(2);
        // Set for this process before candle starts its pool; the first part's 1 is
        // not inherited.
        std::env::set_var("RAYON_NUM_THREADS", cores.to_string());
        let model = MiniLm::load(&dir).unwrap_or_else(|e| panic!("{e}"));
        on_cores(&model, cores);
        return;
    }
    // Must precede the first candle call: rayon's pool and candle's gemm read it.
    std::env::set_var("RAYON_NUM_THREADS", "1");
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
    // Both cores, in a process of its own (rayon's pool is sized once per process).
    let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
    let _ = std::io::Write::flush(&mut std::io::stdout());
    let status = std::process::Command::new(std::env::current_exe().expect("this bench"))
        .args(["--cores", &cores.to_string()])
        .env_remove("RAYON_NUM_THREADS")
        .status();
    if !status.is_ok_and(|s| s.success()) {
        eprintln!("the {cores}-core part failed");
    }
}
