//! Benchmark of the memory toolset through the release `cairn` binary over stdio
//! JSON-RPC (one fresh database, one session, sequential calls), as an agent sees it:
//!
//! - `remember` 100,000 atoms (2,000 Lib subjects named `Kind:name`, 50 projects in 5
//!   orgs, 25 predicates, 10,000 distinct sources shared between atoms; some keys
//!   meet and are settled by the collision rule), in rounds of 10,000;
//! - `recall` among them: by subject for a project (median of 200), and by text
//!   (hybrid search: the statements' vectors and BM25), median of 100;
//! - a curator pass over the 100,000 atoms 200 days later (dry run, then the run that
//!   writes it), and the pass over the settled memory.
//!
//! Seeding, stated plainly: writing 100,000 atoms is the remember measurement itself.
//! Embedding 100,000 statements with the model would take hours on this machine, so
//! the server runs the hashing embedder (no model directory); the text recall then
//! embeds its backlog once (reported on its own line). With `CAIRN_MODEL_DIR` set,
//! the stored vectors are relabelled as the model's (they stay hashing vectors) and a
//! second server embeds each query with the real model: rankings are meaningless,
//! timings those of the real code path.
//!
//!     cargo bench --bench memory_server
//!     CAIRN_MODEL_DIR=target/test-model cargo bench --bench memory_server

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};

mod client;
use client::{Server, BIN};

const ATOMS: usize = 100_000;
const ROUND: usize = 10_000;
const SUBJECTS: usize = 2_000;
const PROJECTS: usize = 50;

struct Dir(PathBuf);
impl Dir {
    fn new() -> Dir {
        let p = std::env::temp_dir().join(format!("cairn-bench-memory-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("temp dir");
        Dir(p)
    }
}
impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A deterministic sequence, so every run measures the same memory.
struct Seeded(fastrand::Rng);
impl Seeded {
    fn new(seed: u64) -> Seeded {
        Seeded(fastrand::Rng::with_seed(seed))
    }
    fn next(&mut self, n: u64) -> u64 {
        self.0.u64(..n)
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn median(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    let p = |q: f64| ms(v[((v.len() - 1) as f64 * q).round() as usize]);
    (p(0.5), p(0.95))
}

fn row(what: &str, value: String, target: &str) {
    println!("| {what:<58} | {value:>24} | {target:<14} |");
}

fn stamp(day: f64) -> String {
    let t = time::OffsetDateTime::UNIX_EPOCH
        + time::Duration::days(20_089)
        + time::Duration::seconds_f64(day * 86_400.0);
    format!(
        "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}Z",
        t.year(),
        u8::from(t.month()),
        t.day(),
        t.hour(),
        t.minute(),
        t.second()
    )
}

const WORDS: &[&str] = &[
    "retries",
    "timeout",
    "cache",
    "schema",
    "migration",
    "release",
    "token",
    "queue",
    "index",
    "replica",
    "webhook",
    "session",
    "locale",
    "payment",
    "invoice",
    "backoff",
    "sharding",
    "lease",
    "bucket",
    "cursor",
];

/// The fields of the `i`-th atom.
fn atom(i: usize, r: &mut Seeded, projects: &[String]) -> Value {
    let lib = r.next(SUBJECTS as u64);
    let p = r.next(25);
    let w = |r: &mut Seeded| WORDS[r.next(WORDS.len() as u64) as usize];
    let statement = format!("lib-{lib} {} {} {} observation {i}", w(r), w(r), w(r));
    let mut a = match i % 4 {
        0 => json!({"type":"Assumption","validationMethod":"check the registry"}),
        1 => json!({"type":"Fact","factKind":"observed"}),
        2 => json!({"type":"Rule","severity":"should"}),
        _ => json!({"type":"Best-practice","goal":"fewer incidents"}),
    };
    a["statement"] = json!(statement);
    a["about"] = json!(format!("Lib:lib-{lib}"));
    a["confidence"] = json!(r.next(100) as f64 / 100.0);
    if r.next(10) > 0 {
        a["predicate"] = json!(format!("property_{p}"));
        a["value"] = json!(format!("v{i}"));
    }
    if r.next(10) < 3 {
        a["context"] = json!(projects[r.next(PROJECTS as u64) as usize]);
    }
    a
}

fn sources(r: &mut Seeded) -> Value {
    const TYPES: &[&str] = &["release_notes", "doc", "url", "chat", "PR"];
    let n = r.next(10_000);
    json!([{"refType": TYPES[(n % 5) as usize], "uri": format!("https://sources/{n}")}])
}

fn main() {
    println!("cairn {} — {}", env!("CARGO_PKG_VERSION"), BIN);
    println!("| {:<58} | {:>24} | {:<14} |", "measure", "value", "target");
    println!("|{}|{}|{}|", "-".repeat(60), "-".repeat(26), "-".repeat(16));
    let dir = Dir::new();
    let db = dir.0.join("memory.db");
    let none = dir.0.join("no-model");
    let mut s = Server::start(
        &db,
        &["--toolsets", "tasks,memory"],
        &[("CAIRN_MODEL_DIR", none.as_os_str())],
    );

    // Orgs and projects (contexts), created up front.
    let mut orgs = Vec::new();
    for o in 0..5 {
        let d = s.call(
            "manage_subject",
            json!({"operation":"create","subject":{"kind":"Org","name":format!("org-{o}")}}),
        );
        orgs.push(d["subject"]["id"].as_str().unwrap().to_string());
    }
    let mut projects = Vec::new();
    for p in 0..PROJECTS {
        let d = s.call(
            "manage_subject",
            json!({"operation":"create","subject":{"kind":"Project","name":format!("project-{p}"),"org":orgs[p % 5]}}),
        );
        projects.push(d["subject"]["id"].as_str().unwrap().to_string());
    }

    // Remember 100,000 atoms, a round at a time; calls encoded before the clock starts.
    let mut r = Seeded::new(7);
    let mut rates = Vec::new();
    let cpu0 = s.cpu();
    let all = Instant::now();
    for round in 0..ATOMS / ROUND {
        let calls: Vec<_> = (0..ROUND)
            .map(|k| {
                let i = round * ROUND + k;
                let a = atom(i, &mut r, &projects);
                let src = sources(&mut r);
                s.prepare(
                    "manage_memory",
                    json!({"operation":"remember","now":stamp(i as f64 * 0.004),"atom":a,"sources":src}),
                )
            })
            .collect();
        let t = Instant::now();
        for c in &calls {
            s.call_prepared(c);
        }
        rates.push(ROUND as f64 / t.elapsed().as_secs_f64());
    }
    let total = all.elapsed();
    let cpu = s.cpu() - cpu0;
    let mut sorted = rates.clone();
    sorted.sort_by(f64::total_cmp);
    row(
        "remember: atoms/s over 100,000 (median round of 10,000)",
        format!(
            "{:.0} (min {:.0}, max {:.0})",
            sorted[sorted.len() / 2],
            sorted[0],
            sorted[sorted.len() - 1]
        ),
        ">= 1,000/s",
    );
    row(
        "remember: the last 10,000 (90,000 atoms already held)",
        format!("{:.0}/s", rates[rates.len() - 1]),
        ">= 1,000/s",
    );
    row(
        "remember: 100,000 in all, wall / server CPU",
        format!("{:.1} s / {:.1} s", total.as_secs_f64(), cpu.as_secs_f64()),
        "",
    );
    row(
        "remember: atoms per second of server CPU",
        format!("{:.0}/s", ATOMS as f64 / cpu.as_secs_f64().max(1e-9)),
        ">= 1,000/s",
    );

    // Recall by subject, for a project.
    let mut t = Vec::new();
    let mut q = Seeded::new(11);
    let calls: Vec<_> = (0..200)
        .map(|_| {
            let lib = q.next(SUBJECTS as u64);
            let p = &projects[q.next(PROJECTS as u64) as usize];
            s.prepare(
                "query_memory",
                json!({"operation":"recall","projectId":p,"about":format!("Lib:lib-{lib}"),"maxTokens":2000}),
            )
        })
        .collect();
    for c in &calls {
        let a = Instant::now();
        s.call_prepared(c);
        t.push(a.elapsed());
    }
    let (p50, p95) = median(t);
    row(
        "recall by subject among 100,000 (p50 / p95)",
        format!("{p50:.1} / {p95:.1} ms"),
        "<= 15 ms p50",
    );

    // Recall by text: the first embeds the backlog (hashing), then the median.
    let a = Instant::now();
    let first = s.call(
        "query_memory",
        json!({"operation":"recall","query":"webhook retries timeout","maxTokens":2000}),
    );
    row(
        "recall by text, first call (embeds 100,000 statements)",
        format!("{:.1} s", a.elapsed().as_secs_f64()),
        "once",
    );
    assert!(first["atoms"].as_array().is_some_and(|x| !x.is_empty()));
    let text_calls: Vec<_> = (0..100)
        .map(|k| {
            let w = |n: usize| WORDS[(k * 7 + n * 3) % WORDS.len()];
            let p = &projects[k % PROJECTS];
            s.prepare(
                "query_memory",
                json!({"operation":"recall","projectId":p,"query":format!("{} {} for lib-{}", w(0), w(1), k * 13),"maxTokens":2000}),
            )
        })
        .collect();
    let mut t = Vec::new();
    for c in &text_calls {
        let a = Instant::now();
        s.call_prepared(c);
        t.push(a.elapsed());
    }
    let (p50, p95) = median(t);
    row(
        "recall by text among 100,000, hashing embedder (p50 / p95)",
        format!("{p50:.1} / {p95:.1} ms"),
        "<= 15 ms p50",
    );
    row(
        "server resident memory after recall",
        format!("{:.0} MB", s.rss_mb()),
        "",
    );

    // The curator, 200 days after the last remember.
    let now = stamp(ATOMS as f64 * 0.004 + 200.0);
    // The dry run three times (the machine is shared): the median.
    let mut dries = Vec::new();
    let mut plan = Value::Null;
    for _ in 0..3 {
        let (a, c) = (Instant::now(), s.cpu());
        plan = s.call(
            "curate_memory",
            json!({"operation":"plan","now":now,"limit":0}),
        );
        dries.push((a.elapsed(), s.cpu() - c));
    }
    dries.sort();
    let (dry, dry_cpu) = dries[1];
    let (a, c) = (Instant::now(), s.cpu());
    let run = s.call(
        "curate_memory",
        json!({"operation":"run","now":now,"limit":0,"fingerprint":plan["fingerprint"]}),
    );
    let (wet, wet_cpu) = (a.elapsed(), s.cpu() - c);
    row(
        "curator dry run, 100,000 atoms (median of 3): wall, CPU",
        format!(
            "{:.2} s, {:.2} s ({}/{})",
            dry.as_secs_f64(),
            dry_cpu.as_secs_f64(),
            plan["ms"]["load"],
            plan["ms"]["plan"]
        ),
        "<= 3 s",
    );
    row(
        &format!("curator run writing {} actions: wall, CPU", run["total"]),
        format!(
            "{:.2} s, {:.2} s ({}/{}/{})",
            wet.as_secs_f64(),
            wet_cpu.as_secs_f64(),
            run["ms"]["load"],
            run["ms"]["plan"],
            run["ms"]["write"]
        ),
        "<= 3 s",
    );
    let (a, c) = (Instant::now(), s.cpu());
    let again = s.call(
        "curate_memory",
        json!({"operation":"plan","now":now,"limit":0}),
    );
    row(
        &format!(
            "curator pass over the settled memory ({} actions): wall, CPU",
            again["total"]
        ),
        format!(
            "{:.2} s, {:.2} s",
            a.elapsed().as_secs_f64(),
            (s.cpu() - c).as_secs_f64()
        ),
        "<= 3 s",
    );
    println!("\ncurator plan summary: {}", plan["summary"]);
    drop(s);

    // The real model embeds the queries, over the same 100,000 stored vectors.
    if let Some(model) = std::env::var_os("CAIRN_MODEL_DIR") {
        relabel(&db, Path::new(&model));
        let mut m = Server::start(
            &db,
            &["--toolsets", "tasks,memory"],
            &[("CAIRN_MODEL_DIR", model.as_os_str())],
        );
        let a = Instant::now();
        m.call(
            "query_memory",
            json!({"operation":"recall","query":"warm up the model"}),
        );
        row(
            "recall by text, model: first call (loads the model)",
            format!("{:.1} s", a.elapsed().as_secs_f64()),
            "once",
        );
        let calls: Vec<_> = (0..50)
            .map(|k| {
                let w = |n: usize| WORDS[(k * 5 + n * 3) % WORDS.len()];
                m.prepare(
                    "query_memory",
                    json!({"operation":"recall","projectId":projects[k % PROJECTS],"query":format!("{} {} for lib-{}", w(0), w(1), k * 17),"maxTokens":2000}),
                )
            })
            .collect();
        let mut t = Vec::new();
        for c in &calls {
            let a = Instant::now();
            m.call_prepared(c);
            t.push(a.elapsed());
        }
        let (p50, p95) = median(t);
        row(
            "recall by text among 100,000, model query (p50 / p95)",
            format!("{p50:.1} / {p95:.1} ms"),
            "<= 15 ms p50",
        );
    }
}

/// Marks the stored hashing vectors as the model's (see the module comment).
fn relabel(db: &Path, model: &Path) {
    let id = if model.join("model.safetensors").exists() {
        "all-minilm-l6-v2"
    } else {
        return;
    };
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        let pool = sqlx::SqlitePool::connect_with(
            sqlx::sqlite::SqliteConnectOptions::new()
                .filename(db)
                .journal_mode(sqlx::sqlite::SqliteJournalMode::Wal),
        )
        .await
        .expect("open the bench database");
        sqlx::query("UPDATE embeddings SET model = ? WHERE source = 'memory_atom'")
            .bind(id)
            .execute(&pool)
            .await
            .expect("relabel vectors");
        pool.close().await;
    });
}
