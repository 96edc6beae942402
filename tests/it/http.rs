//! `cairn serve --http`: rmcp's streamable HTTP client against the real binary, and
//! raw HTTP for what a client library would never send (no token, a foreign origin,
//! a body too large, broken JSON, an unknown session).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ProgressNotificationParam};
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient, ServiceExt};
use serde_json::{json, Value};

use crate::harness::{id_of, Cairn, HttpServer, TempDir, Transport};

const TOKEN: &str = "3f9c2a7d1e8b4c6f0a5d9e2b7c1f4a8d";

fn token_file(dir: &TempDir) -> String {
    let p = dir.path().join("token");
    std::fs::write(&p, format!("{TOKEN}\n")).unwrap();
    p.to_str().unwrap().to_string()
}

/// A raw JSON-RPC POST to `/mcp` with the headers MCP asks for.
async fn post(url: &str, headers: &[(&str, &str)], body: Vec<u8>) -> (u16, String) {
    let mut r = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream");
    for (k, v) in headers {
        r = r.header(*k, *v);
    }
    let resp = r.body(body).send().await.expect("POST /mcp");
    let status = resp.status().as_u16();
    (status, resp.text().await.unwrap_or_default())
}

const INIT: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#;

#[tokio::test]
async fn tools_over_http_are_the_tools_over_stdio() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let stdio = Cairn::on(&db, &[]).await;
    let http = Cairn::on_via(Transport::Http, &db, &[]).await;
    let (a, b) = (stdio.tools().await, http.tools().await);
    assert!(a.len() > 20, "{}", a.len());
    let as_json = |t: &[rmcp::model::Tool]| serde_json::to_value(t).unwrap();
    assert_eq!(
        as_json(&a),
        as_json(&b),
        "HTTP serves the same tools and schemas"
    );
    // A write over one transport is read over the other.
    let p = http.project("Across").await;
    let got = stdio.get("project", &p).await;
    assert_eq!(got["name"], "Across");
    // Prompts (the skills) too.
    let prompts = http.client.list_all_prompts().await.expect("prompts/list");
    let over_stdio = stdio.client.list_all_prompts().await.expect("prompts/list");
    assert!(prompts.len() >= 3, "{prompts:?}");
    assert_eq!(
        serde_json::to_value(&prompts).unwrap(),
        serde_json::to_value(&over_stdio).unwrap()
    );
    stdio.stop().await;
    http.stop().await;
}

#[tokio::test]
async fn a_bind_off_the_loopback_refuses_to_start_without_a_token() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let e = HttpServer::try_start(&db, &[], "0.0.0.0:0", &[], &[])
        .await
        .err()
        .expect("no token: refused");
    assert!(
        e.contains("token is required") && e.contains("--token-file"),
        "{e}"
    );
    assert!(!db.exists(), "refused before any database was opened");
    let short = dir.path().join("short");
    std::fs::write(&short, "abc\n").unwrap();
    let e = HttpServer::try_start(
        &db,
        &[],
        "0.0.0.0:0",
        &["--token-file", short.to_str().unwrap()],
        &[],
    )
    .await
    .err()
    .expect("a short token is refused");
    assert!(e.contains("at least 16"), "{e}");
    assert!(!e.contains("abc\n"), "{e}");
    // $CAIRN_TOKEN will do as well.
    let s = HttpServer::try_start(&db, &[], "0.0.0.0:0", &[], &[("CAIRN_TOKEN", TOKEN)])
        .await
        .expect("starts with $CAIRN_TOKEN");
    let port = s.base.rsplit(':').next().unwrap().to_string();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let (status, _) = post(&url, &[], INIT.into()).await;
    assert_eq!(status, 401);
    drop(s);
}

#[tokio::test]
async fn without_the_right_token_401_and_with_it_the_tools() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let tf = token_file(&dir);
    let s = HttpServer::start(
        &db,
        &["--toolsets", "tasks"],
        &["--token-file", &tf],
        &[("CAIRN_LOG", "debug")],
    )
    .await;
    let url = s.mcp_url();
    let (status, body) = post(&url, &[], INIT.into()).await;
    assert_eq!(status, 401, "{body}");
    let (status, _) = post(
        &url,
        &[("authorization", "Bearer 3f9c2a7d1e8b4c6f0a5d9e2b7c1f4a8e")],
        INIT.into(),
    )
    .await;
    assert_eq!(status, 401, "a token one character off");
    let (status, _) = post(
        &url,
        &[("authorization", &format!("Bearer {TOKEN}x"))],
        INIT.into(),
    )
    .await;
    assert_eq!(status, 401, "a longer token");
    let (status, _) = post(&url, &[("authorization", TOKEN)], INIT.into()).await;
    assert_eq!(status, 401, "the token without its scheme");
    // The page's cookie is no key to the tools.
    let (status, _) = post(
        &url,
        &[("cookie", &format!("cairn_token={TOKEN}"))],
        INIT.into(),
    )
    .await;
    assert_eq!(status, 401, "a cookie does not open /mcp");
    assert!(
        s.try_client(None).await.is_err(),
        "rmcp's client without the token"
    );
    assert!(s.try_client(Some("wrong-token-wrong-token")).await.is_err());
    let c = s.client(Some(TOKEN)).await;
    let tools = c.list_all_tools().await.expect("tools/list");
    assert!(
        tools.iter().all(|t| !t.name.starts_with("query_graph")),
        "--toolsets holds over HTTP"
    );
    let r = c
        .call_tool(
            CallToolRequestParams::new("manage_container").with_arguments(
                json!({"operation":"create","containerType":"project","name":"Guarded"})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .await
        .expect("tools/call");
    assert_eq!(r.structured_content.unwrap()["success"], json!(true));
    let _ = c.cancel().await;
    // Never logged (at debug), never stored.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let log = s.stderr.lock().unwrap().join("\n");
    assert!(log.len() > 100, "debug logs were written: {log}");
    assert!(!log.contains(TOKEN), "the token is in the log");
    drop(s);
    for f in ["cairn.db", "cairn.db-wal"] {
        if let Ok(bytes) = std::fs::read(dir.path().join(f)) {
            assert!(
                !bytes.windows(TOKEN.len()).any(|w| w == TOKEN.as_bytes()),
                "the token is in {f}"
            );
        }
    }
}

#[tokio::test]
async fn bad_requests_get_their_status_and_the_server_stays_up() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let s = HttpServer::start(&db, &[], &[], &[]).await;
    let url = s.mcp_url();
    // A page of another site (DNS rebinding or a cross-site request).
    let (status, _) = post(&url, &[("origin", "http://evil.example")], INIT.into()).await;
    assert_eq!(status, 403);
    let (status, _) = post(&url, &[("origin", "null")], INIT.into()).await;
    assert_eq!(status, 403);
    let (status, _) = post(&url, &[("host", "evil.example")], INIT.into()).await;
    assert_eq!(
        status, 403,
        "a Host that is not the loopback, on a loopback bind"
    );
    // The server's own origin is fine.
    let own = s.base.clone();
    let (status, body) = post(&url, &[("origin", &own)], INIT.into()).await;
    assert_eq!(status, 200, "{body}");
    // Over 4 MiB: 413, with or without a length announced.
    let big = {
        let mut v = br#"{"jsonrpc":"2.0","id":2,"method":"ping","params":{"pad":""#.to_vec();
        v.resize(4 * 1024 * 1024 + 100, b'a');
        v.extend_from_slice(br#""}}"#);
        v
    };
    let (status, _) = post(&url, &[], big.clone()).await;
    assert_eq!(status, 413);
    let chunked = reqwest::Client::new()
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(reqwest::Body::wrap_stream(futures::stream::iter(
            big.chunks(64 * 1024)
                .map(|c| Ok::<_, std::io::Error>(c.to_vec()))
                .collect::<Vec<_>>(),
        )))
        .send()
        .await
        .expect("chunked POST");
    assert_eq!(chunked.status().as_u16(), 413);
    // Broken JSON-RPC: an error answer carrying the id when it can be read.
    for (body, code, id) in [
        (
            r#"{"jsonrpc":"2.0","id":7,"method":"tools/ca"#,
            -32700,
            json!(7),
        ),
        ("", -32700, Value::Null),
        (
            r#"[{"jsonrpc":"2.0","id":8,"method":"ping"}]"#,
            -32600,
            Value::Null,
        ),
        (
            r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"x","arguments":[1]}}"#,
            -32602,
            json!(9),
        ),
        (
            r#"{"jsonrpc":"2.0","id":"a","result":1,"method":5}"#,
            -32600,
            json!("a"),
        ),
    ] {
        let (status, text) = post(&url, &[], body.into()).await;
        assert_eq!(status, 400, "{body}: {text}");
        let v: Value = serde_json::from_str(&text)
            .unwrap_or_else(|_| panic!("JSON-RPC error for {body}: {text}"));
        assert_eq!(v["error"]["code"], json!(code), "{body}: {text}");
        assert_eq!(
            v.get("id").cloned().unwrap_or(Value::Null),
            id,
            "{body}: {text}"
        );
    }
    // An unknown session: 404.
    let (status, _) = post(
        &url,
        &[
            ("mcp-session-id", "no-such-session"),
            ("mcp-protocol-version", "2025-06-18"),
        ],
        br#"{"jsonrpc":"2.0","id":3,"method":"ping"}"#.to_vec(),
    )
    .await;
    assert_eq!(status, 404);
    // Still up: liveness and a whole session.
    let health = reqwest::get(format!("{}/health", s.base)).await.unwrap();
    assert_eq!(health.status().as_u16(), 200);
    let c = s.client(None).await;
    assert!(!c.list_all_tools().await.unwrap().is_empty());
    let _ = c.cancel().await;
}

#[tokio::test]
async fn two_http_servers_and_a_stdio_server_on_one_file_lose_no_write() {
    let dir = TempDir::new();
    let db = dir.path().join("shared.db");
    let a = Cairn::on_via(Transport::Http, &db, &[]).await;
    let b = Cairn::on_via(Transport::Http, &db, &[]).await;
    let c = Cairn::on(&db, &[]).await;
    let id = id_of(&a.task(json!({"title":"contended","summary":"0"})).await);
    let rounds = 15;
    for round in 0..rounds {
        // All three read the same version, then all three write naming it.
        let (ta, tb, tc) = tokio::join!(a.get("task", &id), b.get("task", &id), c.get("task", &id));
        assert!(ta["version"] == tb["version"] && tb["version"] == tc["version"]);
        let v = ta["version"].as_i64().unwrap();
        let up = |who: &str| json!({"operation":"update","containerType":"task","id":id,"version":v,"summary":format!("{who}{round}")});
        let (ra, rb, rc) = tokio::join!(
            a.call("manage_container", up("a")),
            b.call("manage_container", up("b")),
            c.call("manage_container", up("c"))
        );
        let all = [&ra, &rb, &rc];
        let won: Vec<&&Value> = all.iter().filter(|r| r["success"] == json!(true)).collect();
        assert_eq!(
            won.len(),
            1,
            "exactly one write wins at version {v}: {ra} / {rb} / {rc}"
        );
        for r in all.iter().filter(|r| r["success"] != json!(true)) {
            assert_eq!(r["error"]["code"], "CONFLICT", "{r}");
            assert_eq!(r["error"]["details"]["currentVersion"], json!(v + 1));
        }
    }
    assert_eq!(c.version("task", &id).await, 1 + rounds);
    // Read-modify-write with retry on CONFLICT from all three: every increment lands.
    let per_side = 12;
    async fn bump(c: &Cairn, id: String, n: i64) {
        let mut done = 0;
        while done < n {
            let t = c.get("task", &id).await;
            let k: i64 = t["description"].as_str().unwrap_or("0").parse().unwrap();
            let r = c
                .call("manage_container", json!({"operation":"update","containerType":"task","id":id,"version":t["version"],"description":(k + 1).to_string()}))
                .await;
            if r["success"] == json!(true) {
                done += 1;
            } else {
                assert_eq!(r["error"]["code"], "CONFLICT", "{r}");
            }
        }
    }
    tokio::join!(
        bump(&a, id.clone(), per_side),
        bump(&b, id.clone(), per_side),
        bump(&c, id.clone(), per_side)
    );
    let t = b.get("task", &id).await;
    assert_eq!(
        t["description"],
        json!((3 * per_side).to_string()),
        "an increment was lost"
    );
    a.stop().await;
    b.stop().await;
    c.stop().await;
}

/// Records the progress notifications a client receives.
#[derive(Clone, Default)]
struct Listener(Arc<Mutex<Vec<ProgressNotificationParam>>>);

impl ClientHandler for Listener {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.0.lock().unwrap().push(params);
    }
}

/// `n` atoms in a new project; answers the project's id.
async fn project_with_atoms(c: &Cairn, name: &str, n: usize) -> String {
    let p = c.project(name).await;
    let t = id_of(&c.task(json!({"title":"map the code","projectId":p})).await);
    for i in 0..n {
        c.ok(
            "manage_graph",
            json!({"operation":"create","entityType":"atom","projectId":p,"name":format!("{name} area {i}"),
                   "paths":[format!("src/{name}/m{i}/**")],"knowledge":format!("How module {i} of {name} renders invoices and retries payments."),"createdByTaskId":t}),
        )
        .await;
    }
    p
}

async fn search_with(
    client: &rmcp::service::RunningService<RoleClient, Listener>,
    project: &str,
) -> Value {
    let p = CallToolRequestParams::new("query_graph").with_arguments(
        json!({"operation":"search","entityType":"atom","projectId":project,"query":"invoices payments"})
            .as_object()
            .unwrap()
            .clone(),
    );
    let r = client.call_tool(p).await.expect("tools/call");
    r.structured_content.expect("structured")
}

/// Waits (boundedly) until `l` holds a notification that completes a backlog.
async fn wait_done(l: &Listener) {
    for _ in 0..200 {
        if l.0
            .lock()
            .unwrap()
            .iter()
            .any(|n| n.total.is_some_and(|t| t == n.progress))
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

#[tokio::test]
async fn each_session_gets_only_its_own_progress() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    // No background embedding: each search must find its whole backlog unembedded,
    // however long the projects took to fill on a loaded machine.
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!("{}embed_idle_ms = 3600000\n", crate::harness::TEST_CONFIG),
    )
    .unwrap();
    let w = Cairn::on_via(Transport::Http, &db, &["--config", cfg.to_str().unwrap()]).await;
    let (pa, pb) = (
        project_with_atoms(&w, "alpha", 14).await,
        project_with_atoms(&w, "beta", 5).await,
    );
    let server = w.http.as_ref().unwrap();
    let (la, lb) = (Listener::default(), Listener::default());
    let ca = la
        .clone()
        .serve(server.transport(None))
        .await
        .expect("initialize a");
    let cb = lb
        .clone()
        .serve(server.transport(None))
        .await
        .expect("initialize b");
    // Both sessions' first call carries the same progress token (rmcp counts from
    // zero in each client): only the session tells the two apart.
    let (ra, rb) = tokio::join!(search_with(&ca, &pa), search_with(&cb, &pb));
    assert_eq!(ra["success"], json!(true), "{ra}");
    assert_eq!(rb["success"], json!(true), "{rb}");
    wait_done(&la).await;
    wait_done(&lb).await;
    let (a, b) = (la.0.lock().unwrap().clone(), lb.0.lock().unwrap().clone());
    assert!(
        !a.is_empty() && !b.is_empty(),
        "both sessions got progress: {a:?} / {b:?}"
    );
    assert_eq!(
        a[0].progress_token, b[0].progress_token,
        "the same token in both sessions"
    );
    let totals = |v: &[ProgressNotificationParam]| {
        let mut t: Vec<f64> = v.iter().filter_map(|n| n.total).collect();
        t.dedup();
        t
    };
    assert_eq!(
        totals(&a),
        vec![14.0],
        "alpha's session saw only alpha's backlog: {a:?}"
    );
    assert_eq!(
        totals(&b),
        vec![5.0],
        "beta's session saw only beta's backlog: {b:?}"
    );
    let _ = ca.cancel().await;
    let _ = cb.cancel().await;
    w.stop().await;
}

#[tokio::test]
async fn sigterm_lets_the_call_in_flight_finish_then_closes_the_store() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    // No background embedding: the backlog the search works through must be all of it.
    let cfg = dir.path().join("config.toml");
    std::fs::write(
        &cfg,
        format!("{}embed_idle_ms = 3600000\n", crate::harness::TEST_CONFIG),
    )
    .unwrap();
    let w = Cairn::on_via(Transport::Http, &db, &["--config", cfg.to_str().unwrap()]).await;
    let p = project_with_atoms(&w, "gamma", 120).await;
    let server = w.http.as_ref().unwrap();
    let port: u16 = server.base.rsplit(':').next().unwrap().parse().unwrap();
    let l = Listener::default();
    let client = l
        .clone()
        .serve(server.transport(None))
        .await
        .expect("initialize");
    let call = tokio::spawn(async move {
        let r = search_with(&client, &p).await;
        (r, client)
    });
    // The call is running once the backlog is being embedded.
    let mut started = false;
    for _ in 0..1200 {
        if l.0.lock().unwrap().iter().any(|n| n.total.is_some()) {
            started = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(started, "the search never reported progress");
    // Checked before the signal: the refusal probe below may outlast a short backlog.
    assert!(
        !call.is_finished(),
        "the call must still be in flight here (make the backlog larger)"
    );
    server.terminate();
    // New connections are refused at once...
    let mut refused = false;
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_err()
        {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(refused, "the listener stayed open after SIGTERM");
    // ...and the call in flight is answered in full.
    let (r, client) = call.await.unwrap();
    assert_eq!(r["success"], json!(true), "{r}");
    assert!(!r["data"]["items"].as_array().unwrap().is_empty(), "{r}");
    drop(client);
    let Cairn { http, .. } = w;
    let mut server = http.unwrap();
    let status = tokio::time::timeout(Duration::from_secs(60), server.child.wait())
        .await
        .expect("the server exits after SIGTERM")
        .unwrap();
    assert!(status.success(), "{status:?}");
    let log = server.stderr.lock().unwrap().join("\n");
    assert!(log.contains("stopped"), "{log}");
    // The store was closed: SQLite folded the WAL into the file and removed it.
    assert!(
        !dir.path().join("cairn.db-wal").exists(),
        "the WAL is left behind"
    );
    let again = Cairn::on(&db, &[]).await;
    let found = again
        .ok("query_graph", json!({"operation":"search","entityType":"atom","projectId":p_of(&again).await,"limit":1}))
        .await;
    assert_eq!(found["total"], json!(120), "{found}");
    again.stop().await;
}

async fn p_of(c: &Cairn) -> String {
    let d = c
        .ok(
            "query_container",
            json!({"operation":"search","containerType":"project"}),
        )
        .await;
    d["items"][0]["id"].as_str().unwrap().to_string()
}

/// A raw `initialize`: its status, its session id (if any), its headers and body.
async fn initialize(url: &str) -> (u16, Option<String>, reqwest::header::HeaderMap, String) {
    let resp = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INIT)
        .send()
        .await
        .expect("POST initialize");
    let status = resp.status().as_u16();
    let headers = resp.headers().clone();
    let id = headers
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_string());
    (status, id, headers, resp.text().await.unwrap_or_default())
}

/// `method` on `/mcp` naming session `id`: the status.
async fn on_session(url: &str, method: reqwest::Method, id: &str) -> u16 {
    let mut r = reqwest::Client::new()
        .request(method.clone(), url)
        .header("mcp-session-id", id)
        .header("mcp-protocol-version", "2025-06-18")
        .header("accept", "application/json, text/event-stream");
    if method == reqwest::Method::POST {
        r = r
            .header("content-type", "application/json")
            .body(r#"{"jsonrpc":"2.0","id":5,"method":"ping"}"#);
    }
    let resp = r.send().await.expect("a request on a session");
    let status = resp.status().as_u16();
    // A GET's event stream never ends on its own: the status is enough.
    if method == reqwest::Method::POST {
        let _ = resp.text().await;
    }
    status
}

#[tokio::test]
async fn sessions_past_the_cap_get_503_and_deleting_one_frees_its_slot() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let s = HttpServer::start(&db, &[], &["--max-sessions", "3"], &[]).await;
    let url = s.mcp_url();
    let mut ids = Vec::new();
    for _ in 0..3 {
        let (status, id, _, body) = initialize(&url).await;
        assert_eq!(status, 200, "{body}");
        ids.push(id.expect("a session id"));
    }
    // The fourth: 503, when to come back, and a JSON-RPC error saying why.
    let (status, id, h, body) = initialize(&url).await;
    assert_eq!(status, 503, "{body}");
    assert!(id.is_none());
    let after: u64 = h["retry-after"].to_str().unwrap().parse().unwrap();
    assert!(after >= 1, "{after}");
    let v: Value = serde_json::from_str(&body).expect("a JSON-RPC error");
    assert_eq!(v["id"], json!(1), "{v}");
    assert_eq!(v["error"]["code"], json!(-32000), "{v}");
    let m = v["error"]["message"].as_str().unwrap();
    assert!(
        m.contains("3 MCP sessions") && m.contains("max_sessions"),
        "{m}"
    );
    assert_eq!(v["error"]["data"]["retryAfterSeconds"], json!(after), "{v}");
    assert!(
        s.try_client(None).await.is_err(),
        "rmcp's client is refused too"
    );
    // The open sessions still work.
    assert_eq!(on_session(&url, reqwest::Method::POST, &ids[0]).await, 200);
    // Ending one: 204; then its id is unknown to DELETE, POST and GET alike.
    assert_eq!(
        on_session(&url, reqwest::Method::DELETE, &ids[1]).await,
        204
    );
    for m in [
        reqwest::Method::DELETE,
        reqwest::Method::POST,
        reqwest::Method::GET,
    ] {
        assert_eq!(on_session(&url, m.clone(), &ids[1]).await, 404, "{m}");
        assert_eq!(
            on_session(&url, m.clone(), "no-such-session").await,
            404,
            "{m}"
        );
    }
    // ...and its slot is free.
    let (status, id, _, body) = initialize(&url).await;
    assert_eq!(status, 200, "{body}");
    assert!(id.is_some());
    let (status, _, _, _) = initialize(&url).await;
    assert_eq!(status, 503);
    // A bad value for the flag stops the server before it starts.
    let e = HttpServer::try_start(&db, &[], "127.0.0.1:0", &["--max-sessions", "0"], &[])
        .await
        .err()
        .expect("refused");
    assert!(e.contains("--max-sessions") && e.contains("from 1"), "{e}");
}

#[tokio::test]
async fn an_idle_session_is_closed_but_one_with_a_call_in_flight_is_not() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let cfg = dir.path().join("config.toml");
    // No background embedding: the search below must embed the whole backlog itself.
    std::fs::write(
        &cfg,
        format!(
            "{}embed_idle_ms = 3600000\n[http]\nsession_idle_ms = 300\n",
            crate::harness::TEST_CONFIG
        ),
    )
    .unwrap();
    let w = Cairn::on_via(Transport::Http, &db, &["--config", cfg.to_str().unwrap()]).await;
    let server = w.http.as_ref().unwrap();
    let url = server.mcp_url();
    let (status, id, _, _) = initialize(&url).await;
    assert_eq!(status, 200);
    let id = id.unwrap();
    // Left alone, it is closed: asked less often than the timeout, it answers 404.
    let mut closed = false;
    for _ in 0..60 {
        tokio::time::sleep(Duration::from_millis(1000)).await;
        if on_session(&url, reqwest::Method::POST, &id).await == 404 {
            closed = true;
            break;
        }
    }
    assert!(closed, "an idle session stayed open");
    // A call that runs many times the idle timeout keeps its session: it is answered.
    let p = project_with_atoms(&w, "delta", 120).await;
    let l = Listener::default();
    let client = l
        .clone()
        .serve(server.transport(None))
        .await
        .expect("initialize");
    let call = tokio::spawn(async move { (search_with(&client, &p).await, client) });
    let mut started = None;
    for _ in 0..1200 {
        if l.0.lock().unwrap().iter().any(|n| n.total.is_some()) {
            started = Some(std::time::Instant::now());
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let started = started.expect("the search never reported progress");
    while started.elapsed() < Duration::from_millis(1500) {
        assert!(
            !call.is_finished(),
            "the call must outlast the idle timeout several times (make the backlog larger)"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let (r, client) = call.await.unwrap();
    assert_eq!(r["success"], json!(true), "{r}");
    let _ = client.cancel().await;
    w.stop().await;
}

#[tokio::test]
async fn a_request_that_stalls_is_cut_off_while_other_clients_are_served() {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let s = HttpServer::start(
        &db,
        &[],
        &["--body-timeout-ms", "1500", "--header-timeout-ms", "1500"],
        &[],
    )
    .await;
    let addr = s.base.trim_start_matches("http://").to_string();
    // One client stops halfway through its body, another halfway through its headers.
    let mut body = tokio::net::TcpStream::connect(&addr).await.unwrap();
    body.write_all(
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nContent-Length: 400\r\n\r\n\
             {{\"jsonrpc\":\"2.0\",\"id\":1,"
        )
        .as_bytes(),
    )
    .await
    .unwrap();
    let mut head = tokio::net::TcpStream::connect(&addr).await.unwrap();
    head.write_all(format!("POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-").as_bytes())
        .await
        .unwrap();
    // Meanwhile others are served.
    let c = s.client(None).await;
    assert!(!c.list_all_tools().await.unwrap().is_empty());
    let _ = c.cancel().await;
    // The stalled body is answered 408 and its connection closed; the stalled
    // headers' connection is closed (the wait is a bound against a hang only).
    let mut answer = Vec::new();
    tokio::time::timeout(Duration::from_secs(60), body.read_to_end(&mut answer))
        .await
        .expect("the stalled body was never cut off")
        .unwrap();
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("body_timeout_ms"), "{answer}");
    let mut rest = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(60), head.read_to_end(&mut rest))
        .await
        .expect("the stalled headers were never cut off");
    assert!(
        read.is_err() || rest.is_empty() || rest.starts_with(b"HTTP/1.1 408"),
        "{}",
        String::from_utf8_lossy(&rest)
    );
    let health = reqwest::get(format!("{}/health", s.base)).await.unwrap();
    assert_eq!(health.status().as_u16(), 200);
}

/// The official Python MCP SDK, installed by `scripts/test.sh` into a virtualenv
/// under `target/` (or the interpreter `$CAIRN_TEST_PYTHON_MCP` names).
/// Runs a Python SDK client script (written into `dir`) with `args`; asserts it exits
/// cleanly and answers its stdout and stderr.
pub(crate) async fn run_python(
    python: &std::path::Path,
    dir: &std::path::Path,
    script: &str,
    args: &[&str],
) -> (String, String) {
    let path = dir.join("client.py");
    std::fs::write(&path, script).unwrap();
    let out = tokio::process::Command::new(python)
        .arg(&path)
        .args(args)
        .output()
        .await
        .expect("run the Python client");
    let (stdout, stderr) = (
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    );
    assert!(out.status.success(), "{stdout}\n{stderr}");
    (stdout, stderr)
}

pub(crate) fn python_mcp() -> Option<std::path::PathBuf> {
    let p = std::env::var_os("CAIRN_TEST_PYTHON_MCP")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/py-mcp/bin/python")
        });
    p.exists().then_some(p)
}

const PYTHON_CLIENT: &str = r#"
import asyncio, logging, sys
logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
from mcp import ClientSession
from mcp.shared._httpx_utils import create_mcp_http_client
import mcp.client.streamable_http as sh
connect = getattr(sh, "streamable_http_client", None) or sh.streamablehttp_client

async def main(url):
    client = create_mcp_http_client()
    async def seen(r):
        print(r.request.method, r.status_code, flush=True)
    client.event_hooks["response"].append(seen)
    async with client:
        async with connect(url, http_client=client) as streams:
            async with ClientSession(streams[0], streams[1]) as s:
                await s.initialize()
                tools = await s.list_tools()
                print("tools", len(tools.tools), flush=True)

asyncio.run(main(sys.argv[1]))
"#;

#[tokio::test]
async fn the_python_sdk_ends_its_session_without_a_failure() {
    let Some(python) = python_mcp() else {
        eprintln!("the Python MCP SDK is not installed (scripts/test.sh installs it); skipped");
        return;
    };
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let s = HttpServer::start(&db, &["--toolsets", "tasks"], &[], &[]).await;
    let (stdout, stderr) = run_python(&python, dir.path(), PYTHON_CLIENT, &[&s.mcp_url()]).await;
    assert!(stdout.contains("tools "), "{stdout}");
    assert!(stdout.lines().any(|l| l == "DELETE 204"), "{stdout}");
    // Nothing the SDK logs at WARNING or above ("Session termination failed: 202").
    assert!(
        !stderr.contains("WARNING:") && !stderr.contains("ERROR:"),
        "{stderr}"
    );
}

/// `/ready` says the store answers with every migration applied; `/metrics` (behind
/// the token) counts calls per tool and outcome with their latency and reads the
/// gauges; `CAIRN_LOG_FORMAT=json` logs one JSON object per line.
#[tokio::test]
async fn ready_metrics_and_json_logs_for_operators() {
    let dir = TempDir::new();
    let db = dir.path().join("cairn.db");
    let tf = token_file(&dir);
    let s = HttpServer::start(
        &db,
        &[],
        &["--token-file", &tf],
        &[("CAIRN_LOG", "info"), ("CAIRN_LOG_FORMAT", "json")],
    )
    .await;
    let http = reqwest::Client::new();
    let r = http.get(format!("{}/ready", s.base)).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(r.text().await.unwrap().trim(), "ready");
    let r = http
        .get(format!("{}/metrics", s.base))
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 401, "metrics need the token");
    let c = s.client(Some(TOKEN)).await;
    let call = |args: Value| {
        CallToolRequestParams::new("manage_container")
            .with_arguments(args.as_object().unwrap().clone())
    };
    c.call_tool(call(
        json!({"operation":"create","containerType":"project","name":"Counted"}),
    ))
    .await
    .unwrap();
    c.call_tool(call(
        json!({"operation":"create","containerType":"project"}),
    ))
    .await
    .unwrap();
    let text = http
        .get(format!("{}/metrics", s.base))
        .bearer_auth(TOKEN)
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    for line in [
        "cairn_tool_calls_total{tool=\"manage_container\",code=\"OK\"} 1",
        "cairn_tool_calls_total{tool=\"manage_container\",code=\"VALIDATION_ERROR\"} 1",
        "cairn_tool_call_seconds_count{tool=\"manage_container\"} 2",
        "cairn_tool_call_seconds_bucket{tool=\"manage_container\",le=\"+Inf\"} 2",
        "cairn_sessions_live 1",
    ] {
        assert!(text.lines().any(|l| l == line), "no {line} in:\n{text}");
    }
    for gauge in ["cairn_embedding_backlog ", "cairn_database_bytes "] {
        let v: i64 = text
            .lines()
            .find_map(|l| l.strip_prefix(gauge))
            .unwrap_or_else(|| panic!("no {gauge} in {text}"))
            .parse()
            .unwrap();
        assert!(v >= 0);
    }
    let _ = c.cancel().await;
    // Every line the server logged after its address is one JSON object.
    crate::harness::eventually("a log line", 30, || !s.stderr.lock().unwrap().is_empty()).await;
    for l in s
        .stderr
        .lock()
        .unwrap()
        .iter()
        .filter(|l| !l.trim().is_empty())
    {
        let v: Value = serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}"));
        assert!(v["level"].is_string() && v["fields"].is_object(), "{l}");
    }
}
