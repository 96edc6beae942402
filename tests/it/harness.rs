//! Test harness: a real `cairn serve` process on a real SQLite file in a throwaway
//! directory, driven by rmcp's client over stdio, or over Streamable HTTP against a
//! real `cairn serve --http` ([`HttpServer`]). [`Transport`] picks one, so a test body
//! can run over both.
//!
//! With `$CAIRN_TEST_PG` set (a PostgreSQL URL; `scripts/test.sh` starts a throwaway
//! cluster and sets it), every server runs on PostgreSQL instead: [`db_arg`] turns
//! each test's database file into a database of its own on that server, named after
//! the file, so servers a test starts on one file share one database.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use rmcp::model::{CallToolRequestParams, Tool};
use rmcp::service::RunningService;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::{RoleClient, ServiceExt};
use serde_json::{json, Value};
use tokio::process::Command;

pub const BIN: &str = env!("CARGO_BIN_EXE_cairn");

/// The real embedding model, installed by `scripts/test.sh` (through
/// `scripts/fetch-model.sh`); `$CAIRN_TEST_MODEL_DIR` overrides.
pub fn model_dir() -> PathBuf {
    std::env::var_os("CAIRN_TEST_MODEL_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/test-model"))
}

/// The PostgreSQL server the suite runs on (`$CAIRN_TEST_PG`), if any.
pub fn postgres() -> Option<String> {
    std::env::var("CAIRN_TEST_PG")
        .ok()
        .filter(|u| !u.is_empty())
}

/// What `--db` gets for the test database `db`: the file itself, or on PostgreSQL
/// the URL of a database named after it (Cairn creates it on first use).
pub fn db_arg(db: &Path) -> std::ffi::OsString {
    match postgres() {
        Some(base) => crate::pg_url::database_for(&base, db, "t_").into(),
        None => db.as_os_str().to_os_string(),
    }
}

/// A connection to the test database `db` (the file, or its PostgreSQL database),
/// for the tests that look under the tools.
pub async fn sql(db: &Path) -> sqlx::AnyConnection {
    use sqlx::Connection;
    sqlx::any::install_default_drivers();
    let url = match postgres() {
        Some(_) => db_arg(db).into_string().expect("a UTF-8 URL"),
        None => format!("sqlite://{}", db.display()),
    };
    sqlx::AnyConnection::connect(&url)
        .await
        .expect("connect to the test database")
}

/// Why a test about the SQLite file itself (its directory, its WAL, its pages)
/// does not run on PostgreSQL, printed when it skips.
pub fn sqlite_only(what: &str) -> bool {
    if postgres().is_some() {
        eprintln!("skipped on PostgreSQL: {what}");
        return false;
    }
    true
}

/// A directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> TempDir {
        let p = std::env::temp_dir().join(format!("cairn-it-{}", uuid::Uuid::now_v7().simple()));
        std::fs::create_dir_all(&p).expect("create temp dir");
        TempDir(p)
    }
    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if let Some(base) = postgres() {
            drop_databases_of(&base, &self.0);
        }
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// On PostgreSQL, drops the databases [`db_arg`] made for files in `dir`: a run of
/// the suite makes hundreds, and kept they would fill a small disk. Their names end in
/// `dir`'s unique tail; a server still connected is ended (`WITH (FORCE)`). Runs on a
/// thread of its own, since a drop may happen inside the tests' runtime.
fn drop_databases_of(base: &str, dir: &Path) {
    let name = dir.file_name().map(|n| n.to_string_lossy().into_owned());
    let Some(tail) = name
        .filter(|n| n.len() >= 16)
        .map(|n| n[n.len() - 16..].to_ascii_lowercase())
    else {
        return;
    };
    let base = base.to_string();
    let _ = std::thread::spawn(move || {
        use sqlx::Connection;
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .ok()?;
        rt.block_on(async {
            sqlx::any::install_default_drivers();
            let mut c = sqlx::AnyConnection::connect(&base).await.ok()?;
            let names: Vec<String> =
                sqlx::query_scalar("SELECT datname::text FROM pg_database WHERE datname LIKE $1")
                    .bind(format!("%{tail}%"))
                    .fetch_all(&mut c)
                    .await
                    .ok()?;
            for n in names {
                let _ = sqlx::query(sqlx::AssertSqlSafe(format!(
                    "DROP DATABASE IF EXISTS \"{n}\" WITH (FORCE)"
                )))
                .execute(&mut c)
                .await;
            }
            Some(())
        })
    })
    .join();
}

/// The data directory (`$XDG_DATA_HOME`) of the servers on `db`: beside it, so no
/// test writes to the home of the user running the suite.
pub fn data_home(db: &Path) -> PathBuf {
    db.parent().unwrap_or(Path::new(".")).join("xdg-data")
}

/// `cairn serve` on `db`, its stdio left to the caller: for tests that speak raw
/// lines. No user config leaks in.
pub fn serve_command(db: &Path) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(BIN);
    c.arg("--db")
        .arg(db_arg(db))
        .arg("serve")
        .env_remove("CAIRN_CONFIG")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
        .env("XDG_DATA_HOME", data_home(db))
        .env_remove("CAIRN_DB")
        .kill_on_drop(true);
    c
}

/// `cairn serve` on `db` with its stdin and stdout as pipes: the child, its input,
/// and its output read line by line. For tests that speak raw JSON-RPC lines.
pub fn serve_piped(
    db: &Path,
) -> (
    tokio::process::Child,
    tokio::process::ChildStdin,
    tokio::io::Lines<tokio::io::BufReader<tokio::process::ChildStdout>>,
) {
    use tokio::io::AsyncBufReadExt;
    let mut child = serve_command(db)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("spawn cairn serve");
    let stdin = child.stdin.take().expect("piped stdin");
    let lines = tokio::io::BufReader::new(child.stdout.take().expect("piped stdout")).lines();
    (child, stdin, lines)
}

/// Runs `cairn --db DB ARGS…` to completion (`call`, `tools`, …), no user config.
pub fn cli(db: &Path, args: &[&str]) -> std::process::Output {
    std::process::Command::new(BIN)
        .env_remove("CAIRN_CONFIG")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
        .env("XDG_DATA_HOME", data_home(db))
        .env_remove("CAIRN_DB")
        .arg("--db")
        .arg(db_arg(db))
        .args(args)
        .output()
        .expect("run cairn")
}

/// `cairn call TOOL JSON` on `db`, which must succeed: its envelope.
pub fn cli_ok(db: &Path, tool: &str, args: &str) -> Value {
    let out = cli(db, &["call", tool, args]);
    assert!(
        out.status.success(),
        "cairn call {tool}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("an envelope on stdout")
}

/// The config file of servers whose test gives none: a search embeds every text it
/// needs before answering (`embed_wait_ms`), as tests that measure rankings require;
/// the tests of the bounded wait give their own. Written once per test process into
/// cargo's temporary directory for tests (renamed into place: another test process
/// may be reading it).
pub fn default_config() -> &'static Path {
    static FILE: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    FILE.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
        let p = dir.join("cairn-it-config.toml");
        let tmp = dir.join(format!("cairn-it-config.{}.toml", std::process::id()));
        std::fs::write(&tmp, TEST_CONFIG).expect("write the tests' config file");
        std::fs::rename(&tmp, &p).expect("put the tests' config file in place");
        p
    })
}

/// What [`default_config`] holds; a test that gives its own config starts from it.
pub const TEST_CONFIG: &str = "embed_wait_ms = 600000\n";

/// The stdio of a `cairn serve` on `db` (extra arguments before `serve`; without a
/// `--config`, [`default_config`]), for a client of any handler.
pub fn transport(db: &Path, extra: &[&str]) -> TokioChildProcess {
    transport_env(db, extra, &[])
}

/// As [`transport`], with extra environment variables for the server.
pub fn transport_env(db: &Path, extra: &[&str], env: &[(&str, &str)]) -> TokioChildProcess {
    let db_owned = db.to_path_buf();
    let mut extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    if !extra.iter().any(|a| a == "--config") {
        extra.push("--config".into());
        extra.push(default_config().to_string_lossy().into_owned());
    }
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let cmd = Command::new(BIN).configure(|c| {
        c.arg("--db")
            .arg(db_arg(&db_owned))
            .args(&extra)
            .arg("serve");
        // No user config leaks into tests.
        c.env_remove("CAIRN_CONFIG")
            .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
            .env("XDG_DATA_HOME", data_home(&db_owned))
            .env_remove("CAIRN_DB")
            .env("CAIRN_MODEL_DIR", model_dir());
        for (k, v) in &env {
            c.env(k, v);
        }
    });
    let (transport, _stderr) = TokioChildProcess::builder(cmd)
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn cairn");
    transport
}

/// How a test's client reaches the server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// `cairn serve`, the client on its stdin and stdout.
    Stdio,
    /// `cairn serve --http 127.0.0.1:0`, rmcp's streamable HTTP client on `/mcp`.
    Http,
}

pub struct Cairn {
    pub client: RunningService<RoleClient, ()>,
    /// The database file this server runs on.
    #[allow(dead_code)]
    pub db: PathBuf,
    _dir: Option<TempDir>,
    /// The HTTP server the client talks to, stopped when this is dropped.
    #[allow(dead_code)]
    pub http: Option<HttpServer>,
}

impl Cairn {
    /// A server on a fresh database of its own.
    pub async fn start() -> Cairn {
        Cairn::start_on(Transport::Stdio).await
    }

    /// A server on a fresh database of its own, reached over `t`.
    pub async fn start_on(t: Transport) -> Cairn {
        let dir = TempDir::new();
        let db = dir.path().join("cairn.db");
        let mut c = Cairn::on_via(t, &db, &[]).await;
        c._dir = Some(dir);
        c
    }

    /// A server on `db` with extra arguments and environment variables (stdio).
    pub async fn on_env(db: &Path, extra: &[&str], env: &[(&str, &str)]) -> Cairn {
        let client = ().serve(transport_env(db, extra, env)).await.expect("MCP initialize");
        Cairn::from_client(client, db)
    }

    /// A client someone else connected (to a server they keep), on `db`.
    #[allow(dead_code)]
    pub fn from_client(client: RunningService<RoleClient, ()>, db: &Path) -> Cairn {
        Cairn {
            client,
            db: db.to_path_buf(),
            _dir: None,
            http: None,
        }
    }

    /// A server on `db` with extra command-line arguments (before `serve`).
    pub async fn on(db: &Path, extra: &[&str]) -> Cairn {
        Cairn::on_via(Transport::Stdio, db, extra).await
    }

    /// A server on `db` with extra command-line arguments (before `serve`), over `t`.
    pub async fn on_via(t: Transport, db: &Path, extra: &[&str]) -> Cairn {
        Cairn::on_via_env(t, db, extra, &[]).await
    }

    /// As [`Cairn::on_via`], with extra environment variables for the server.
    pub async fn on_via_env(
        t: Transport,
        db: &Path,
        extra: &[&str],
        env: &[(&str, &str)],
    ) -> Cairn {
        match t {
            Transport::Stdio => {
                let client = ().serve(transport_env(db, extra, env)).await.expect("MCP initialize");
                Cairn {
                    client,
                    db: db.to_path_buf(),
                    _dir: None,
                    http: None,
                }
            }
            Transport::Http => {
                let server = HttpServer::start(db, extra, &[], env).await;
                let client = server.client(None).await;
                Cairn {
                    client,
                    db: db.to_path_buf(),
                    _dir: None,
                    http: Some(server),
                }
            }
        }
    }

    pub async fn tools(&self) -> Vec<Tool> {
        self.client.list_all_tools().await.expect("tools/list")
    }

    /// Calls a tool and returns its envelope, checking text and structured content agree.
    pub async fn call(&self, tool: &str, args: Value) -> Value {
        let mut p = CallToolRequestParams::new(tool.to_string());
        if let Value::Object(m) = args {
            p = p.with_arguments(m);
        }
        let r = self
            .client
            .call_tool(p)
            .await
            .unwrap_or_else(|e| panic!("{tool}: protocol error {e}"));
        let env = r.structured_content.clone().expect("structuredContent");
        let text = r
            .content
            .first()
            .and_then(|c| c.as_text())
            .map(|t| t.text.clone())
            .expect("text content");
        let parsed: Value = serde_json::from_str(&text).expect("text content is JSON");
        assert_eq!(parsed, env, "text and structured content differ");
        assert_eq!(
            r.is_error,
            Some(env["success"] != json!(true)),
            "isError must mirror success: {env}"
        );
        assert!(
            env["metadata"]["timestamp"].is_string() && env["metadata"]["version"].is_string(),
            "metadata: {env}"
        );
        env
    }

    /// Calls a tool that must succeed; returns its `data`.
    pub async fn ok(&self, tool: &str, args: Value) -> Value {
        let env = self.call(tool, args.clone()).await;
        assert_eq!(env["success"], json!(true), "{tool} {args} failed: {env:#}");
        env["data"].clone()
    }

    /// Calls a tool that must fail with `code`; returns the `error` object.
    pub async fn err(&self, tool: &str, args: Value, code: &str) -> Value {
        let env = self.call(tool, args.clone()).await;
        assert_eq!(
            env["success"],
            json!(false),
            "{tool} {args} should fail with {code}: {env:#}"
        );
        assert_eq!(env["error"]["code"], json!(code), "{tool} {args}: {env:#}");
        assert!(!env["error"]["message"].as_str().unwrap_or("").is_empty());
        env["error"].clone()
    }

    // Shorthands for the fixtures most tests need.

    pub async fn project(&self, name: &str) -> String {
        let d = self
            .ok(
                "manage_container",
                json!({"operation":"create","containerType":"project","name":name}),
            )
            .await;
        d["project"]["id"].as_str().expect("project id").to_string()
    }

    pub async fn feature(&self, project: &str, name: &str) -> String {
        let d = self
            .ok("manage_container", json!({"operation":"create","containerType":"feature","name":name,"projectId":project}))
            .await;
        d["feature"]["id"].as_str().expect("feature id").to_string()
    }

    pub async fn task(&self, args: Value) -> Value {
        let mut a = json!({"operation":"create","containerType":"task"});
        for (k, v) in args.as_object().expect("object").iter() {
            a[k] = v.clone();
        }
        self.ok("manage_container", a).await["task"].clone()
    }

    pub async fn get(&self, kind: &str, id: &str) -> Value {
        self.ok(
            "query_container",
            json!({"operation":"get","containerType":kind,"id":id}),
        )
        .await[kind]
            .clone()
    }

    pub async fn version(&self, kind: &str, id: &str) -> i64 {
        self.get(kind, id).await["version"]
            .as_i64()
            .expect("version")
    }

    /// Advances an item, reading its version first; returns the answer's data.
    pub async fn advance(&self, kind: &str, id: &str) -> Value {
        let v = self.version(kind, id).await;
        self.ok("advance", json!({"containerType":kind,"id":id,"version":v}))
            .await
    }

    pub async fn stop(self) {
        let _ = self.client.cancel().await;
    }
}

/// Fails a test that needs `program` (a language server, a browser) when it is not
/// on PATH, saying how to get it: `scripts/test.sh` installs every such program.
pub fn need(program: &str, what: &str) {
    let found = std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()));
    assert!(
        found,
        "{program} is not on PATH: run scripts/test.sh, which installs {what}"
    );
}

/// Polls `done` every 20 ms until it holds, for at most `secs` seconds; panics
/// naming `what` when it never does. Tests wait on a condition, never a fixed time.
pub async fn eventually(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: not after {secs} s"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// [`eventually`] for a test without a runtime.
pub fn eventually_blocking(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(secs);
    while !done() {
        assert!(
            std::time::Instant::now() < deadline,
            "{what}: not after {secs} s"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

pub fn id_of(v: &Value) -> String {
    v["id"].as_str().expect("id").to_string()
}

/// A real `cairn serve --http 127.0.0.1:0` on `db`; the address it chose is read
/// from its stderr (the rest of which goes on to the test's stderr). Killed when
/// dropped, unless it was stopped with [`HttpServer::terminate`].
pub struct HttpServer {
    pub child: tokio::process::Child,
    /// `http://127.0.0.1:PORT`
    pub base: String,
    /// What the server wrote on stderr after its address.
    pub stderr: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl HttpServer {
    /// `extra` goes before `serve` (`--config`, `--toolsets`); `http_args` after
    /// `--http ADDR` (`--token-file`); `env` is set for the process.
    pub async fn start(
        db: &Path,
        extra: &[&str],
        http_args: &[&str],
        env: &[(&str, &str)],
    ) -> HttpServer {
        HttpServer::try_start(db, extra, "127.0.0.1:0", http_args, env)
            .await
            .unwrap_or_else(|e| panic!("cairn serve --http did not start: {e}"))
    }

    /// Starts `cairn serve --http ADDR`; `Err` holds its stderr when it exits instead
    /// of announcing its address.
    pub async fn try_start(
        db: &Path,
        extra: &[&str],
        addr: &str,
        http_args: &[&str],
        env: &[(&str, &str)],
    ) -> Result<HttpServer, String> {
        use tokio::io::AsyncBufReadExt;
        let mut c = tokio::process::Command::new(BIN);
        c.arg("--db")
            .arg(db_arg(db))
            .args(extra)
            .args(["serve", "--http", addr])
            .args(http_args)
            .env_remove("CAIRN_CONFIG")
            .env_remove("CAIRN_TOKEN")
            .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
            .env("XDG_DATA_HOME", data_home(db))
            .env_remove("CAIRN_DB")
            .env("CAIRN_MODEL_DIR", model_dir())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for (k, v) in env {
            c.env(k, v);
        }
        let mut child = c.spawn().expect("spawn cairn serve --http");
        let mut lines =
            tokio::io::BufReader::new(child.stderr.take().expect("piped stderr")).lines();
        let mut before = Vec::new();
        let base = loop {
            let line = tokio::time::timeout(std::time::Duration::from_secs(60), lines.next_line())
                .await
                .map_err(|_| format!("no address announced within 60 s: {before:?}"))?
                .map_err(|e| e.to_string())?;
            let Some(line) = line else {
                return Err(before.join("\n"));
            };
            if let Some(rest) = line.split("serving MCP at ").nth(1) {
                let url = rest.split_whitespace().next().unwrap_or("");
                break url.trim_end_matches("/mcp").to_string();
            }
            before.push(line);
        };
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let keep = stderr.clone();
        tokio::spawn(async move {
            while let Ok(Some(line)) = lines.next_line().await {
                eprintln!("[cairn http] {line}");
                keep.lock().unwrap().push(line);
            }
        });
        Ok(HttpServer {
            child,
            base,
            stderr,
        })
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// An MCP client on `/mcp`, sending `token` as its bearer token.
    pub async fn client(&self, token: Option<&str>) -> RunningService<RoleClient, ()> {
        self.try_client(token)
            .await
            .expect("MCP initialize over HTTP")
    }

    pub async fn try_client(
        &self,
        token: Option<&str>,
    ) -> Result<RunningService<RoleClient, ()>, String> {
        ().serve(self.transport(token))
            .await
            .map_err(|e| e.to_string())
    }

    /// The client transport, for a client with a handler of its own.
    pub fn transport(
        &self,
        token: Option<&str>,
    ) -> rmcp::transport::StreamableHttpClientTransport<reqwest::Client> {
        use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
        let mut cfg = StreamableHttpClientTransportConfig::with_uri(self.mcp_url());
        if let Some(t) = token {
            cfg = cfg.auth_header(t);
        }
        rmcp::transport::StreamableHttpClientTransport::from_config(cfg)
    }

    /// Sends SIGTERM.
    pub fn terminate(&self) {
        let pid = self.child.id().expect("running");
        let ok = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(ok.success());
    }
}

/// Runs each named test body (`async fn NAME(t: Transport)`) twice: as
/// `over_stdio::NAME` and as `over_http::NAME`.
#[macro_export]
macro_rules! over_both_transports {
    ($($name:ident),* $(,)?) => {
        mod over_stdio {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name($crate::harness::Transport::Stdio).await
                }
            )*
        }
        mod over_http {
            $(
                #[tokio::test]
                async fn $name() {
                    super::$name($crate::harness::Transport::Http).await
                }
            )*
        }
    };
}
