//! Speed and memory of the `cairn` binary over raw stdio JSON-RPC, as an agent sees
//! it: one fresh, migrated database per run, one stdio session, sequential calls.
//! Prints a table; `cargo bench --bench bench`.
//!
//! Workloads: the foundation's (cold start, creating 2,000 tasks, `get_next_task`
//! among them, idle memory) and the knowledge graph's (2,000 then 20,000 atoms with
//! three realistic patterns each in 20 molecules; context calls of 50 paths);
//! `atoms` runs the graph's creation rows alone. `$CAIRN_BENCH_BIN` names another
//! `cairn` to measure (a baseline build, for rounds that alternate binaries).
//! Timed calls check each answer's id and success without parsing it into a tree
//! (`Server::call_line`), so the figures are the server's and the pipe's. Creation
//! rates are the median of several such sessions, with the slowest and fastest. The
//! context rows give the server's CPU and its wait for a CPU per call (median, p95)
//! under the round trip's, so a tail shows whose it is: the server's or the machine's.
//! Then (`session`) creates through rmcp's client, and an agent's session replayed
//! through it with p50/p99 per call kind (`benches/session`). `http`: one
//! `serve --http` under 8 concurrent streamable-HTTP clients × 500 mixed calls on
//! 20,000 atoms, and the page rendered at that size (`benches/http`); `sessions`: the
//! resident memory of many open MCP sessions, up to the cap and past it.
//!
//! The foundation's and the graph's workloads run again on the TypeScript
//! task-orchestrator port (`benches/port`, installed by scripts/port.sh), started over
//! stdio as Cairn is, and each figure is printed beside Cairn's with the ratio;
//! `CAIRN_BENCH_PORT=0` leaves the port out.

use std::path::PathBuf;
use std::time::{Duration, Instant};

use serde_json::json;

mod client;
mod http;
mod port;
mod session;
use client::{bin, Server};
use port::{Fig, Rows, Target};

struct Dir(PathBuf);
impl Dir {
    fn new(tag: &str) -> Dir {
        let p = std::env::temp_dir().join(format!("cairn-bench-{tag}-{}", std::process::id()));
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

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// Median and 95th percentile in milliseconds.
fn stats(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort();
    let p = |q: f64| ms(v[((v.len() - 1) as f64 * q).round() as usize]);
    (p(0.5), p(0.95))
}

/// A row only Cairn's workloads have ("n/a" in the port's column when it is shown).
fn row(what: &str, value: String, target: &str) {
    port::cairn_only(what, &value, target);
}

/// A deterministic pseudo-random sequence, so every run measures the same work.
struct Seeded(fastrand::Rng);
impl Seeded {
    fn new(seed: u64) -> Seeded {
        Seeded(fastrand::Rng::with_seed(seed))
    }
    fn next(&mut self, n: u64) -> u64 {
        self.0.u64(..n)
    }
}

fn knowledge(i: usize, len: usize) -> String {
    let words = [
        "handlers",
        "extend",
        "the",
        "base",
        "class",
        "idempotent",
        "retries",
        "gateway",
        "locale",
        "registry",
        "events",
        "are",
        "published",
        "after",
        "commit",
        "never",
        "call",
        "directly",
        "timeout",
        "30s",
    ];
    let mut s = format!("Area {i}: ");
    let mut k = i;
    while s.len() < len {
        k = k.wrapping_mul(31).wrapping_add(7);
        s.push_str(words[k % words.len()]);
        s.push(' ');
    }
    s
}

fn main() {
    // `cargo bench --bench bench -- graph` runs one workload; `cargo bench` itself
    // passes --bench, which is not a workload name.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let run = |name: &str| only.is_empty() || only.iter().any(|o| o == name);
    println!("cairn {} — {}", env!("CARGO_PKG_VERSION"), bin());
    if let Ok(pg) = std::env::var("CAIRN_BENCH_PG") {
        println!("on PostgreSQL: {}", cairn::store::shown(&pg));
    }
    let port = if std::env::var("CAIRN_BENCH_PORT").is_ok_and(|v| v == "0") {
        None
    } else if run("foundation") || run("graph") || run("atoms") {
        match Target::port() {
            Ok(t) => Some(t),
            Err(why) => {
                println!("(the port is not measured, Cairn's column stands alone: {why})");
                None
            }
        }
    } else {
        None
    };
    if port.is_some() {
        port::COLUMNS.store(true, std::sync::atomic::Ordering::Relaxed);
        println!("(port: @allpepper/task-orchestrator@3.3.3 on bun 1.4.5; cairn's lead: how many times better Cairn's figure is)");
    }
    port::header();
    // Each workload runs on Cairn, then on the port, and prints both.
    let both = |w: fn(&Target, &mut Rows)| {
        let mut ours = Rows::default();
        w(&Target::Cairn, &mut ours);
        let theirs = port.as_ref().map(|p| {
            let mut r = Rows::default();
            w(p, &mut r);
            r
        });
        port::print(ours, theirs);
    };
    if run("foundation") {
        both(foundation);
    }
    if run("graph") {
        both(graph);
    } else if run("atoms") {
        both(atoms);
    }
    if run("session") {
        // The real model when it is installed (scripts/test.sh puts it there), so the
        // searches rank as an agent's would.
        let model = std::env::var_os("CAIRN_MODEL_DIR")
            .map(PathBuf::from)
            .or_else(|| Some(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-model")))
            .filter(|p| p.join("model.safetensors").exists());
        if model.is_none() {
            println!("(no model found: the session's searches run on the hashing embedder)");
        }
        session::run(model.as_deref());
    }
    if run("http") {
        http::run();
    } else if run("sessions") {
        http::run_sessions();
    }
}

/// How many sessions each creation rate is measured in.
const RUNS: usize = 5;
/// Tasks created per run.
const TASKS: usize = 2000;

/// Creates a project and answers its id (with a summary, which the port requires).
fn bench_project(s: &mut Server, name: &str) -> String {
    let p = s.call(
        "manage_container",
        json!({"operation":"create","containerType":"project","name":name,"summary":"Benchmark project"}),
    );
    p["project"]["id"].as_str().expect("project id").to_string()
}

/// The arguments creating the `i`-th benchmark task: priorities and complexities
/// mixed, as `get_next_task` then has to rank them.
fn task_args(project: &str, title: &str, i: usize) -> serde_json::Value {
    let prio = ["HIGH", "MEDIUM", "LOW"];
    json!({"operation":"create","containerType":"task","projectId":project,"title":format!("{title} {i}"),
           "summary":"Benchmark task with a short summary","priority":prio[i % 3],"complexity":1 + i % 10})
}

/// One run: `TASKS` tasks, one call at a time; answers the time taken and the
/// server's CPU time.
fn create_tasks(s: &mut Server, project: &str) -> (Duration, Duration) {
    let calls: Vec<_> = (0..TASKS)
        .map(|i| s.prepare("manage_container", task_args(project, "Task", i)))
        .collect();
    let cpu = s.cpu();
    let t = Instant::now();
    for c in &calls {
        s.call_prepared(c);
    }
    (t.elapsed(), s.cpu() - cpu)
}

/// The median rate of `runs` of `n` creates each, with the slowest and fastest run,
/// and the median server CPU per create.
fn rates(runs: &[(Duration, Duration)], n: usize) -> (Fig, Fig) {
    let mut r: Vec<f64> = runs.iter().map(|x| n as f64 / x.0.as_secs_f64()).collect();
    let mut c: Vec<f64> = runs
        .iter()
        .map(|x| x.1.as_secs_f64() * 1e6 / n as f64)
        .collect();
    r.sort_by(f64::total_cmp);
    c.sort_by(f64::total_cmp);
    let (rate, cpu) = (r[r.len() / 2], c[c.len() / 2]);
    (
        Fig::higher(
            format!("{rate:.0}/s ({:.0}–{:.0})", r[0], r[r.len() - 1]),
            rate,
        ),
        Fig::lower(format!("{cpu:.0} µs"), cpu),
    )
}

fn foundation(on: &Target, out: &mut Rows) {
    // Cold start: spawn → initialize → tools/list answered. The first start creates
    // and migrates the file; the others start on that migrated database.
    let d = Dir::new("cold");
    let db = d.0.join("c.db");
    let mut starts = Vec::new();
    let mut first = Duration::ZERO;
    for i in 0..21 {
        let t = Instant::now();
        let mut s = on.serve(&db);
        s.request("tools/list", json!({}));
        if i == 0 {
            first = t.elapsed();
        } else {
            starts.push(t.elapsed());
        }
    }
    let (med, p95) = stats(starts);
    out.row(
        "cold start, new file (creates and migrates it)",
        Fig::ms(ms(first), 1),
        "",
    );
    out.row(
        "cold start, migrated db (spawn → initialize → tools/list)",
        Fig::latency(med, p95, 1),
        "≤ 20 ms median",
    );

    let d = Dir::new("tasks");
    let mut s = on.serve(&d.0.join("t.db"));
    let tools = s.request("tools/list", json!({}));
    let idle = s.rss_mb();
    let chars = serde_json::to_string(&tools["tools"])
        .map(|x| x.len())
        .unwrap_or(0);
    out.row(
        "tools/list, tasks + graph",
        Fig::lower(
            format!(
                "{chars} chars, {} tools",
                tools["tools"].as_array().map_or(0, Vec::len)
            ),
            chars as f64,
        ),
        "≤ 20,000",
    );
    out.row(
        "resident memory, idle after initialize",
        Fig::lower(format!("{idle:.1} MB"), idle),
        "≤ 15 MB",
    );

    // The creation rate is taken in RUNS sessions, each on a fresh file, and its
    // median reported: one run lasts under half a second, and this machine's speed
    // drifts by more than the margin a single run could show. The first run is this
    // session's, whose tasks the measures below use.
    let project = bench_project(&mut s, "Bench");
    let mut runs = vec![create_tasks(&mut s, &project)];
    for r in 1..RUNS {
        let d = Dir::new(&format!("tasks-{r}"));
        let mut s = on.serve(&d.0.join("t.db"));
        let project = bench_project(&mut s, "Bench");
        runs.push(create_tasks(&mut s, &project));
    }
    let (rate, cpu) = rates(&runs, TASKS);
    out.row(
        &format!("tasks created over one stdio session (2,000), {RUNS} runs"),
        rate,
        "",
    );
    out.row("  server CPU per task create (median)", cpu, "");
    // The same work with 16 calls in flight: the server's throughput when a client
    // does not wait for each answer before sending the next call. In a project of
    // its own, so `get_next_task` below still ranks 2,000 tasks.
    let p2 = bench_project(&mut s, "Bench pipelined");
    let n = TASKS;
    let args = (0..n).map(|i| task_args(&p2, "Pipelined", i)).collect();
    let t = Instant::now();
    s.call_pipelined("manage_container", args, 16);
    let rate = n as f64 / t.elapsed().as_secs_f64();
    out.row(
        "  the same, 16 calls in flight",
        Fig::higher(format!("{rate:.0} tasks/s"), rate),
        "",
    );
    // The floors every call pays: stdio both ways and JSON-RPC (ping), then a tool
    // call that reads one row.
    let mut floor = |name: &str, f: &mut dyn FnMut(&mut Server)| {
        let mut times = Vec::new();
        for _ in 0..500 {
            let t = Instant::now();
            f(&mut s);
            times.push(t.elapsed());
        }
        let (med, p95) = stats(times);
        out.row(name, Fig::latency(med, p95, 3), "");
    };
    floor("  ping, round trip", &mut |s| {
        s.request("ping", json!({}));
    });
    floor(
        "  query_container get of the project, round trip",
        &mut |s| {
            s.call_line(
                "query_container",
                json!({"operation":"get","containerType":"project","id":project}),
            );
        },
    );
    let mut times = Vec::new();
    for _ in 0..500 {
        let t = Instant::now();
        s.call_line("get_next_task", json!({"projectId":project}));
        times.push(t.elapsed());
    }
    let (med, p95) = stats(times);
    out.row(
        "get_next_task among 2,000 tasks, round trip",
        Fig::latency(med, p95, 3),
        "≤ 0.5 ms median",
    );
    let rss = s.rss_mb();
    out.row(
        "resident memory after the task workload",
        Fig::lower(format!("{rss:.1} MB"), rss),
        "",
    );
}

/// Creates atoms `from..to` (three patterns each) spread over 20 molecules; returns
/// the time taken and the new atoms' ids. The calls are prepared 2,000 at a time,
/// off the clock.
fn create_atoms(
    s: &mut Server,
    project: &str,
    task: &str,
    molecules: &[String],
    from: usize,
    to: usize,
) -> (Duration, Vec<String>) {
    let mut ids = Vec::with_capacity(to - from);
    let mut took = Duration::ZERO;
    for batch in (from..to).step_by(2000) {
        let calls: Vec<_> = (batch..to.min(batch + 2000))
            .map(|i| {
                let (area, module) = (i % 20, i / 20);
                let paths = json!([
                    format!("src/area{area}/mod{module}/**"),
                    format!("src/area{area}/mod{module}-*.ts"),
                    format!("docs/area{area}/mod{module}.md"),
                ]);
                s.prepare(
                    "manage_graph",
                    json!({"operation":"create","entityType":"atom","projectId":project,"name":format!("Area {area} module {module}"),
                           "paths":paths.to_string(),"moleculeId":molecules[area],"knowledge":knowledge(i, 3500),"createdByTaskId":task}),
                )
            })
            .collect();
        let t = Instant::now();
        for c in &calls {
            let line = s.call_prepared(c);
            ids.push(client::id_of(&line, "atom").to_string());
        }
        took += t.elapsed();
    }
    (took, ids)
}

/// One context call of 50 paths; `max_tokens` is sent when given (the port has no
/// budget: its answer is always whole). Answers the round trip and the line's size.
fn context_round(
    s: &mut Server,
    project: &str,
    modules: u64,
    rng: &mut Seeded,
    max_tokens: Option<i64>,
) -> (Duration, usize) {
    let mut paths = Vec::with_capacity(50);
    for k in 0..50 {
        let (area, module) = (rng.next(20), rng.next(modules));
        paths.push(match k % 5 {
            0 => format!("src/area{area}/mod{module}-handler.ts"),
            1 => format!("docs/area{area}/mod{module}.md"),
            // A path no atom covers: knowledge gaps are part of every real answer.
            2 => format!("lib/vendor/x{k}.js"),
            _ => format!("src/area{area}/mod{module}/sub/file{k}.ts"),
        });
    }
    let mut args = json!({"operation":"context","projectId":project,"paths":paths.join(",")});
    if let Some(m) = max_tokens {
        args["maxTokens"] = json!(m);
    }
    let t = Instant::now();
    let n = s.call_line("query_graph", args).len();
    (t.elapsed(), n)
}

/// 200 context calls after the first: their median and p95, the server's CPU per
/// call and its wait for a CPU per call (each median and p95: a round trip's tail is
/// the server's when its CPU has the same tail, the machine's when the wait has it),
/// and the largest answer line.
fn context_calls(
    s: &mut Server,
    project: &str,
    modules: u64,
    rng: &mut Seeded,
    max_tokens: Option<i64>,
) -> (Fig, Fig, Fig, Fig) {
    let (mut times, mut cpus, mut waits) = (Vec::new(), Vec::new(), Vec::new());
    let mut size = 0;
    for _ in 0..200 {
        let (cpu, wait) = s.sched();
        let (t, n) = context_round(s, project, modules, rng, max_tokens);
        let (cpu2, wait2) = s.sched();
        times.push(t);
        cpus.push(cpu2.saturating_sub(cpu));
        waits.push(wait2.saturating_sub(wait));
        size = size.max(n);
    }
    let fig = |v| {
        let (med, p95) = stats(v);
        Fig::latency(med, p95, 2)
    };
    let (wait, wait95) = stats(waits);
    let kib = size as f64 / 1024.0;
    (
        fig(times),
        fig(cpus),
        Fig::uncompared(wait, wait95, 2),
        Fig::lower(format!("{kib:.0} KiB"), kib),
    )
}

/// A project, its mapping task and 20 molecules: what every atom run writes into.
fn graph_setup(s: &mut Server) -> (String, String, Vec<String>) {
    let project = bench_project(s, "Graph");
    // Summary, priority and complexity: the port requires them of a task.
    let t = s.call(
        "manage_container",
        json!({"operation":"create","containerType":"task","projectId":project,"title":"Map",
               "summary":"Map the code","priority":"MEDIUM","complexity":3}),
    );
    let task = t["task"]["id"].as_str().expect("task").to_string();
    let mut molecules = Vec::new();
    for m in 0..20 {
        let v = s.call(
            "manage_graph",
            json!({"operation":"create","entityType":"molecule","projectId":project,"name":format!("Area {m}"),
                   "knowledge":knowledge(m, 1200),"createdByTaskId":task}),
        );
        molecules.push(v["molecule"]["id"].as_str().expect("molecule").to_string());
    }
    (project, task, molecules)
}

/// The graph's creation rows alone (`cargo bench --bench bench -- atoms`): quick
/// enough to repeat, alternating binaries, while tuning the write path.
fn atoms(on: &Target, out: &mut Rows) {
    let d = Dir::new("graph");
    atom_creates(on, out, on.serve(&d.0.join("g.db")));
}

/// The atom creation rate over `RUNS` sessions, the first being `s`, and the server
/// CPU per create; answers `s` with its project, task and molecules.
fn atom_creates(
    on: &Target,
    out: &mut Rows,
    mut s: Server,
) -> (Server, String, String, Vec<String>) {
    let (project, task, molecules) = graph_setup(&mut s);
    // Like tasks, the rate is the median of RUNS sessions; the first is this one,
    // whose atoms the measures below use.
    let first_2000 = |s: &mut Server, project: &str, task: &str, molecules: &[String]| {
        let cpu = s.cpu();
        let (el, _) = create_atoms(s, project, task, molecules, 0, 2000);
        (el, s.cpu() - cpu)
    };
    let mut runs = vec![first_2000(&mut s, &project, &task, &molecules)];
    for r in 1..RUNS {
        let d = Dir::new(&format!("graph-{r}"));
        let mut s = on.serve(&d.0.join("g.db"));
        let (project, task, molecules) = graph_setup(&mut s);
        runs.push(first_2000(&mut s, &project, &task, &molecules));
    }
    let (rate, cpu) = rates(&runs, 2000);
    out.row(
        &format!("atoms created over one stdio session (2,000), {RUNS} runs"),
        rate,
        "",
    );
    out.row("  server CPU per atom create (median)", cpu, "");
    (s, project, task, molecules)
}

fn graph(on: &Target, out: &mut Rows) {
    let d = Dir::new("graph");
    let (mut s, project, task, molecules) = atom_creates(on, out, on.serve(&d.0.join("g.db")));
    // The whole answer (maxTokens 0) beside the default budget's; the port answers
    // every call whole.
    let all = (!on.is_port()).then_some(0);
    let mut rng = Seeded::new(42);
    // The first call compiles the project's matcher; it is reported apart.
    let (first, _) = context_round(&mut s, &project, 100, &mut rng, None);
    let (lat, cpu, wait, size) = context_calls(&mut s, &project, 100, &mut rng, None);
    out.row(
        "context, 50 paths, 2,000 atoms: first call (builds matcher)",
        Fig::ms(ms(first), 1),
        "",
    );
    out.row("context, 50 paths, 2,000 atoms, round trip", lat, "");
    out.row("  server CPU per context call", cpu, "");
    out.row("  server's wait for a CPU per context call", wait, "");
    out.row("  answer size (largest line)", size, "");
    let (lat, cpu, wait, size) = context_calls(&mut s, &project, 100, &mut Seeded::new(42), all);
    out.row(
        "context, the same, whole (maxTokens 0), round trip",
        lat,
        "",
    );
    out.row("  server CPU per whole context call", cpu, "");
    out.row("  server's wait for a CPU per whole context call", wait, "");
    out.row("  whole answer size (largest line)", size, "");

    let (el, ids) = create_atoms(&mut s, &project, &task, &molecules, 2000, 20_000);
    let rate = 18_000.0 / el.as_secs_f64();
    out.row(
        "atoms created, 2,000 → 20,000",
        Fig::higher(format!("{rate:.0} atoms/s"), rate),
        "",
    );
    let mut rng = Seeded::new(43);
    let (first, _) = context_round(&mut s, &project, 1000, &mut rng, None);
    let (lat, cpu, _, _) = context_calls(&mut s, &project, 1000, &mut rng, None);
    out.row(
        "context, 50 paths, 20,000 atoms: first call (builds matcher)",
        Fig::ms(ms(first), 1),
        "",
    );
    out.row(
        "context, 50 paths, 20,000 atoms, round trip",
        lat,
        "≤ 10 ms median",
    );
    out.row("  server CPU per context call, 20,000 atoms", cpu, "");
    let (lat, cpu, _, size) = context_calls(&mut s, &project, 1000, &mut Seeded::new(43), all);
    out.row(
        "context, 20,000 atoms, whole (maxTokens 0), round trip",
        lat,
        "",
    );
    out.row("  server CPU per whole context call, 20,000 atoms", cpu, "");
    out.row("  whole answer size, 20,000 atoms (largest line)", size, "");
    // Editing knowledge rewrites the atom's full-text row, found by its key.
    let mut times = Vec::new();
    for k in 0..200 {
        let id = &ids[(k * 89) % ids.len()];
        let t = Instant::now();
        s.call_line(
            "manage_graph",
            json!({"operation":"update","entityType":"atom","id":id,"version":1,"lastTaskId":task,
                   "knowledge":knowledge(k + 7, 3500)}),
        );
        times.push(t.elapsed());
    }
    let (med, p95) = stats(times);
    out.row(
        "atom knowledge rewritten, 20,000 atoms, round trip",
        Fig::latency(med, p95, 2),
        "",
    );
    let rss = s.rss_mb();
    out.row(
        "resident memory with 20,000 atoms cached",
        Fig::lower(format!("{rss:.1} MB"), rss),
        "",
    );
}
