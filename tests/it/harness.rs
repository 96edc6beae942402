//! Test harness: a real `cairn serve` process on a real SQLite file in a throwaway
//! directory, driven by rmcp's client over stdio.

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
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `cairn serve` on `db`, its stdio left to the caller: for tests that speak raw
/// lines. No user config leaks in.
pub fn serve_command(db: &Path) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(BIN);
    c.arg("--db")
        .arg(db)
        .arg("serve")
        .env_remove("CAIRN_CONFIG")
        .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
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
        .env_remove("CAIRN_DB")
        .arg("--db")
        .arg(db)
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

/// The stdio of a `cairn serve` on `db` (extra arguments before `serve`), for a
/// client of any handler.
pub fn transport(db: &Path, extra: &[&str]) -> TokioChildProcess {
    transport_env(db, extra, &[])
}

/// As [`transport`], with extra environment variables for the server.
pub fn transport_env(db: &Path, extra: &[&str], env: &[(&str, &str)]) -> TokioChildProcess {
    let db_owned = db.to_path_buf();
    let extra: Vec<String> = extra.iter().map(|s| s.to_string()).collect();
    let env: Vec<(String, String)> = env
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    let cmd = Command::new(BIN).configure(|c| {
        c.arg("--db").arg(&db_owned).args(&extra).arg("serve");
        // No user config leaks into tests.
        c.env_remove("CAIRN_CONFIG")
            .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
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

pub struct Cairn {
    pub client: RunningService<RoleClient, ()>,
    /// The database file this server runs on.
    #[allow(dead_code)]
    pub db: PathBuf,
    _dir: Option<TempDir>,
}

impl Cairn {
    /// A server on a fresh database of its own.
    pub async fn start() -> Cairn {
        let dir = TempDir::new();
        let db = dir.path().join("cairn.db");
        let mut c = Cairn::on(&db, &[]).await;
        c._dir = Some(dir);
        c
    }

    /// A server on `db` with extra command-line arguments (before `serve`).
    pub async fn on(db: &Path, extra: &[&str]) -> Cairn {
        Cairn::on_env(db, extra, &[]).await
    }

    /// A server on `db` with extra arguments and environment variables.
    pub async fn on_env(db: &Path, extra: &[&str], env: &[(&str, &str)]) -> Cairn {
        let client = ().serve(transport_env(db, extra, env)).await.expect("MCP initialize");
        Cairn {
            client,
            db: db.to_path_buf(),
            _dir: None,
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

pub fn id_of(v: &Value) -> String {
    v["id"].as_str().expect("id").to_string()
}
