//! `cairn serve --http` under load: one server, 8 concurrent MCP clients (rmcp's
//! streamable HTTP client, one session each) making 500 mixed calls each on a project
//! of 20,000 atoms, with p50 and p99 per call kind, the errors (there must be none),
//! and the server's resident memory after. Then the page rendered at that size:
//! the board, the knowledge view (molecules, a page of atoms), a context answer.
//! Last, a crowd of sessions: the resident memory with none, with the default cap
//! of 1,000 open, and after 1,000 more were refused (503).

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use rmcp::model::CallToolRequestParams;
use rmcp::service::RunningService;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use tokio::io::AsyncBufReadExt;

use crate::client::bin;
use crate::{knowledge, ms, row, Dir, Seeded};

type Client = RunningService<RoleClient, ()>;

const CLIENTS: usize = 8;
const CALLS: usize = 500;
const ATOMS: usize = 20_000;
const MOLECULES: usize = 20;

struct Server {
    child: tokio::process::Child,
    base: String,
}

impl Server {
    async fn start(db: &Path) -> Server {
        let mut child = tokio::process::Command::new(bin())
            .arg("--db")
            .arg(crate::client::db_arg(db))
            .args(["serve", "--http", "127.0.0.1:0"])
            .env_remove("CAIRN_CONFIG")
            .env_remove("CAIRN_TOKEN")
            .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn cairn serve --http");
        let mut lines = tokio::io::BufReader::new(child.stderr.take().unwrap()).lines();
        let base = loop {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("the server announces its address");
            if let Some(rest) = line.split("serving MCP at ").nth(1) {
                break rest
                    .split_whitespace()
                    .next()
                    .unwrap()
                    .trim_end_matches("/mcp")
                    .to_string();
            }
        };
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        Server { child, base }
    }

    async fn client(&self) -> Client {
        let t = StreamableHttpClientTransport::from_config(
            StreamableHttpClientTransportConfig::with_uri(format!("{}/mcp", self.base)),
        );
        ().serve(t).await.expect("initialize over HTTP")
    }

    fn rss_mb(&self) -> f64 {
        let pid = self.child.id().unwrap_or(0);
        std::fs::read_to_string(format!("/proc/{pid}/status"))
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
}

/// Calls a tool; answers its envelope (a protocol error becomes a failed envelope).
async fn call(c: &Client, tool: &str, args: Value) -> Value {
    let mut p = CallToolRequestParams::new(tool.to_string());
    if let Value::Object(m) = args {
        p = p.with_arguments(m);
    }
    match c.call_tool(p).await {
        Ok(r) => r
            .structured_content
            .unwrap_or(json!({"success":false,"error":{"code":"NO_STRUCTURED_CONTENT"}})),
        Err(e) => json!({"success":false,"error":{"code":"PROTOCOL","message":e.to_string()}}),
    }
}

async fn ok(c: &Client, tool: &str, args: Value) -> Value {
    let env = call(c, tool, args).await;
    assert_eq!(env["success"], json!(true), "{tool}: {env}");
    env["data"].clone()
}

pub fn run() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(load());
    rt.block_on(sessions());
}

/// The crowd of sessions alone (`cargo bench --bench bench -- sessions`).
pub fn run_sessions() {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(sessions());
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}"#;

/// Opens raw sessions (`initialize` only, as a crowd of clients that never come
/// back would): how many were admitted.
async fn open_sessions(http: &reqwest::Client, url: &str, n: usize) -> (usize, usize) {
    let (mut admitted, mut refused) = (0, 0);
    for _ in 0..n {
        let r = http
            .post(url)
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(INIT)
            .send()
            .await
            .expect("POST initialize");
        match r.status().as_u16() {
            200 => admitted += 1,
            503 => refused += 1,
            other => panic!("initialize answered {other}"),
        }
        let _ = r.bytes().await;
    }
    (admitted, refused)
}

async fn sessions() {
    let d = Dir::new("http-sessions");
    let server = Server::start(&d.0.join("s.db")).await;
    let url = format!("{}/mcp", server.base);
    let http = reqwest::Client::new();
    // One session first, so that what is measured next is the sessions themselves.
    open_sessions(&http, &url, 1).await;
    let idle = server.rss_mb();
    let t = Instant::now();
    let (admitted, _) = open_sessions(&http, &url, 999).await;
    let took = t.elapsed();
    let full = server.rss_mb();
    let (more, refused) = open_sessions(&http, &url, 1000).await;
    let after = server.rss_mb();
    row(
        "sessions: resident memory with 1 open",
        format!("{idle:.0} MB"),
        "",
    );
    row(
        "  with 1,000 open (the default cap)",
        format!(
            "{full:.0} MB ({:.0} KB a session; opened at {:.0}/s)",
            (full - idle) * 1024.0 / admitted.max(1) as f64,
            admitted as f64 / took.as_secs_f64()
        ),
        "",
    );
    row(
        "  after 1,000 more initialize requests",
        format!("{after:.0} MB ({refused} refused with 503, {more} admitted)"),
        "all refused",
    );
}

async fn load() {
    let d = Dir::new("http");
    let server = Server::start(&d.0.join("h.db")).await;
    let seed = server.client().await;
    let pid = ok(
        &seed,
        "manage_container",
        json!({"operation":"create","containerType":"project","name":"Load"}),
    )
    .await["project"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let f = ok(&seed, "manage_container", json!({"operation":"create","containerType":"feature","projectId":pid,"name":"Load feature"})).await
        ["feature"]["id"].as_str().unwrap().to_string();
    let anchor = ok(
        &seed,
        "manage_container",
        json!({"operation":"create","containerType":"task","projectId":pid,"title":"anchor"}),
    )
    .await["task"]["id"]
        .as_str()
        .unwrap()
        .to_string();
    let mut molecules = Vec::new();
    for m in 0..MOLECULES {
        let v = ok(
            &seed,
            "manage_graph",
            json!({"operation":"create","entityType":"molecule","projectId":pid,
            "name":format!("Area {m}"),"knowledge":knowledge(m, 300),"createdByTaskId":anchor}),
        )
        .await;
        molecules.push(v["molecule"]["id"].as_str().unwrap().to_string());
    }
    // 20,000 atoms, created by the 8 clients at once (also a write load of its own).
    let t = Instant::now();
    let clients: Vec<Arc<Client>> = {
        let mut v = Vec::new();
        for _ in 0..CLIENTS {
            v.push(Arc::new(server.client().await));
        }
        v
    };
    let mut handles = Vec::new();
    for (w, c) in clients.iter().enumerate() {
        let (c, pid, anchor, molecules) =
            (c.clone(), pid.clone(), anchor.clone(), molecules.clone());
        handles.push(tokio::spawn(async move {
            let mut ids = Vec::new();
            for i in (w..ATOMS).step_by(CLIENTS) {
                let m = &molecules[i % MOLECULES];
                let v = ok(&c, "manage_graph", json!({"operation":"create","entityType":"atom","projectId":pid,"moleculeId":m,
                    "createdByTaskId":anchor,"name":format!("Area {i}"),
                    "paths":[format!("src/m{}/**/*.rs", i % 997),format!("lib/m{i}/*.rs"),format!("docs/m{}/*.md", i % 131)],
                    "knowledge":knowledge(i, 400)})).await;
                if ids.len() < 50 {
                    ids.push(v["atom"]["id"].as_str().unwrap().to_string());
                }
            }
            ids
        }));
    }
    let mut atoms_of: Vec<Vec<String>> = Vec::new();
    for h in handles {
        atoms_of.push(h.await.unwrap());
    }
    let created = t.elapsed();
    row(
        "atoms created by 8 HTTP clients at once (20,000)",
        format!("{:.0}/s", ATOMS as f64 / created.as_secs_f64()),
        "",
    );
    // Each client owns 20 tasks (its versioned writes never race another client's).
    let mut tasks_of: Vec<Vec<String>> = Vec::new();
    for w in 0..CLIENTS {
        let mut v = Vec::new();
        for i in 0..20 {
            let t = ok(&seed, "manage_container", json!({"operation":"create","containerType":"task","projectId":pid,"featureId":f,
                "title":format!("Client {w} task {i}"),"priority":(["HIGH","MEDIUM","LOW"][i % 3]),"complexity":1 + i % 9})).await;
            v.push(t["task"]["id"].as_str().unwrap().to_string());
        }
        tasks_of.push(v);
    }

    // The load: 8 clients × 500 mixed calls.
    let times: Arc<Mutex<BTreeMap<&'static str, Vec<Duration>>>> = Default::default();
    let errors: Arc<Mutex<Vec<String>>> = Default::default();
    let t = Instant::now();
    let mut handles = Vec::new();
    for w in 0..CLIENTS {
        let (c, pid, times, errors) = (
            clients[w].clone(),
            pid.clone(),
            times.clone(),
            errors.clone(),
        );
        let (tasks, atoms) = (tasks_of[w].clone(), atoms_of[w].clone());
        handles.push(tokio::spawn(async move {
            let mut rng = Seeded::new(11 + w as u64);
            let mut versions: BTreeMap<String, i64> = BTreeMap::new();
            for n in 0..CALLS {
                let (kind, tool, args): (&'static str, &str, Value) = match n % 10 {
                    0 | 5 => {
                        let paths: Vec<String> = (0..5)
                            .map(|_| format!("src/m{}/x/y{}.rs", rng.next(997), rng.next(50)))
                            .collect();
                        ("query_graph context (5 paths)", "query_graph", json!({"operation":"context","projectId":pid,"paths":paths}))
                    }
                    1 => ("get_next_task", "get_next_task", json!({"projectId":pid})),
                    2 | 7 => {
                        let id = &tasks[rng.next(tasks.len() as u64) as usize];
                        ("query_container get task", "query_container", json!({"operation":"get","containerType":"task","id":id}))
                    }
                    3 => ("query_container search tasks", "query_container", json!({"operation":"search","containerType":"task","projectId":pid,"limit":20})),
                    4 | 9 => {
                        let id = tasks[rng.next(tasks.len() as u64) as usize].clone();
                        let v = *versions.entry(id.clone()).or_insert(1);
                        ("manage_container update task", "manage_container",
                            json!({"operation":"update","containerType":"task","id":id,"version":v,"summary":format!("round {n}")}))
                    }
                    6 => {
                        let id = &atoms[rng.next(atoms.len() as u64) as usize];
                        ("query_graph get atom", "query_graph", json!({"operation":"get","entityType":"atom","id":id}))
                    }
                    _ => ("query_graph search atoms (page)", "query_graph", json!({"operation":"search","entityType":"atom","projectId":pid,"limit":20,"offset":rng.next(1000)})),
                };
                let start = Instant::now();
                let env = call(&c, tool, args.clone()).await;
                let took = start.elapsed();
                times.lock().unwrap().entry(kind).or_default().push(took);
                if env["success"] != json!(true) {
                    errors.lock().unwrap().push(format!("{kind}: {env}"));
                } else if tool == "manage_container" {
                    let id = args["id"].as_str().unwrap().to_string();
                    versions.insert(id, env["data"]["task"]["version"].as_i64().unwrap_or(1));
                }
            }
        }));
    }
    for h in handles {
        h.await.unwrap();
    }
    let wall = t.elapsed();
    let errors = errors.lock().unwrap().clone();
    let times = std::mem::take(&mut *times.lock().unwrap());
    let total: usize = times.values().map(Vec::len).sum();
    row(
        "HTTP load: 8 clients × 500 mixed calls, 20,000 atoms",
        format!("{total} calls in {:.1} s", wall.as_secs_f64()),
        "",
    );
    row(
        "  calls per second (all clients)",
        format!("{:.0}/s", total as f64 / wall.as_secs_f64()),
        "",
    );
    row("  errors", format!("{}", errors.len()), "0");
    for e in errors.iter().take(3) {
        println!("    {e}");
    }
    for (kind, mut v) in times {
        v.sort();
        let at = |q: f64| ms(v[((v.len() - 1) as f64 * q).round() as usize]);
        row(
            &format!("  {kind}"),
            format!("p50 {:.2} · p99 {:.2} ms", at(0.5), at(0.99)),
            "",
        );
    }
    row(
        "  server resident memory after the load",
        format!("{:.0} MB", server.rss_mb()),
        "",
    );

    // The page at 20,000 atoms, rendered 20 times each.
    let http = reqwest::Client::new();
    let pages = [
        ("page: board", format!("{}/p/{pid}/board", server.base)),
        ("page: knowledge (20 molecules, 50 of 20,000 atoms)", format!("{}/p/{pid}/knowledge", server.base)),
        ("page: knowledge, atoms 10,000–10,050", format!("{}/p/{pid}/knowledge?offset=10000", server.base)),
        (
            "page: knowledge with a context answer (3 paths)",
            format!("{}/p/{pid}/knowledge?paths=src%2Fm5%2Fa%2Fb.rs%0Alib%2Fm77%2Fx.rs%0Adocs%2Fm3%2Fy.md", server.base),
        ),
    ];
    for (what, url) in pages {
        let mut v = Vec::new();
        let mut bytes = 0;
        for _ in 0..20 {
            let t = Instant::now();
            let r = http.get(&url).send().await.expect("GET page");
            assert_eq!(r.status().as_u16(), 200, "{url}");
            bytes = r.bytes().await.unwrap().len();
            v.push(t.elapsed());
        }
        v.sort();
        row(
            what,
            format!("p50 {:.1} ms · {} KB", ms(v[v.len() / 2]), bytes / 1024),
            "≤ 200 ms",
        );
    }
    for c in clients {
        if let Ok(c) = Arc::try_unwrap(c) {
            let _ = c.cancel().await;
        }
    }
    let _ = seed.cancel().await;
}
