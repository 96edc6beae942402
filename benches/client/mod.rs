//! The one stdio JSON-RPC client the benchmarks drive the release `cairn` binary with
//! (and, in `bench`, the TypeScript port beside it, `benches/port`): newline-delimited
//! messages, as an MCP client speaks them, and the server's CPU and memory read from
//! /proc.

#![allow(dead_code)] // each benchmark uses part of it

use std::ffi::OsStr;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use serde_json::{json, Value};

pub const BIN: &str = env!("CARGO_BIN_EXE_cairn");

/// The binary the workloads start: `$CAIRN_BENCH_BIN` when set (a baseline build,
/// so that rounds can alternate two binaries on a shared machine), else [`BIN`].
pub fn bin() -> String {
    std::env::var("CAIRN_BENCH_BIN")
        .ok()
        .filter(|b| !b.is_empty())
        .unwrap_or_else(|| BIN.to_string())
}

/// A progress notification as a watched call saw it: (time since the call was sent,
/// progress, total).
pub type Progressed = (Duration, f64, Option<f64>);

#[path = "../../tests/it/pg_url.rs"]
mod pg_url;

/// What `--db` gets for the benchmark database `db`: the file itself, or with
/// `$CAIRN_BENCH_PG` set (a PostgreSQL URL, e.g. from `scripts/pg.sh start`) a
/// database of its own on that server, named after the file, which Cairn creates.
pub fn db_arg(db: &Path) -> std::ffi::OsString {
    match std::env::var("CAIRN_BENCH_PG")
        .ok()
        .filter(|u| !u.is_empty())
    {
        Some(base) => pg_url::database_for(&base, db, "b_").into(),
        None => db.as_os_str().to_os_string(),
    }
}

/// Which server answers: they frame the same envelope differently.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Kind {
    /// Cairn: `jsonrpc` and `id` first, the envelope as text and as
    /// `structuredContent`, `isError` last.
    Cairn,
    /// The TypeScript port: `result` first and `id` last, the envelope only as
    /// pretty-printed JSON text, no `isError`.
    Port,
}

pub struct Server {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next: u64,
    kind: Kind,
}

impl Server {
    /// Starts `cairn [args] serve` on `db` with extra environment, and initializes the
    /// MCP session.
    pub fn start(db: &Path, args: &[&str], env: &[(&str, &OsStr)]) -> Server {
        let mut cmd = Command::new(bin());
        cmd.arg("--db")
            .arg(db_arg(db))
            .args(args)
            .arg("serve")
            .env_remove("CAIRN_CONFIG")
            .env("XDG_CONFIG_HOME", "/nonexistent-cairn")
            .stderr(Stdio::inherit());
        for (k, v) in env {
            cmd.env(k, v);
        }
        Server::spawn(cmd, Kind::Cairn)
    }

    /// Starts a stdio MCP server from `cmd` and initializes the session.
    pub fn spawn(mut cmd: Command, kind: Kind) -> Server {
        cmd.stdin(Stdio::piped()).stdout(Stdio::piped());
        let mut child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("spawn {kind:?}: {e}"));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut s = Server {
            child,
            stdin,
            stdout,
            next: 1,
            kind,
        };
        s.request(
            "initialize",
            json!({"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"0"}}),
        );
        s.send(&json!({"jsonrpc":"2.0","method":"notifications/initialized"}));
        s
    }

    /// Writes one message in one write: the pipe is unbuffered, and a message
    /// written piece by piece would wake the server for each piece.
    fn send(&mut self, v: &Value) {
        let mut line = serde_json::to_vec(v).expect("encode");
        line.push(b'\n');
        self.stdin.write_all(&line).expect("write");
    }

    /// Sends a request and returns the line that answers it (the server writes
    /// `jsonrpc` and then `id` first). Other lines (notifications) are skipped.
    fn answer_line(&mut self, method: &str, params: Value) -> String {
        let id = self.next;
        self.next += 1;
        self.send(&json!({"jsonrpc":"2.0","id":id,"method":method,"params":params}));
        self.read_answer(id)
    }

    /// Encodes a tool call ahead of time. Timed loops send calls prepared before the
    /// clock starts, so they measure the server and the pipe, not this client
    /// building and encoding the arguments.
    pub fn prepare(&mut self, tool: &str, args: Value) -> Prepared {
        let id = self.next;
        self.next += 1;
        let m = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":args}});
        let mut line = serde_json::to_vec(&m).expect("encode");
        line.push(b'\n');
        Prepared { id, line }
    }

    /// Sends a prepared call that must succeed, checked as `call_line` checks it;
    /// returns the answer line.
    pub fn call_prepared(&mut self, p: &Prepared) -> String {
        self.stdin.write_all(&p.line).expect("write");
        let line = self.read_answer(p.id);
        assert!(self.succeeded(&line), "call {} failed: {line}", p.id);
        line
    }

    /// Whether an answer line is a successful tool result, read without parsing it:
    /// Cairn's ends with `isError` false (set exactly when `success` is true), the
    /// port's text opens with `success` true.
    fn succeeded(&self, line: &str) -> bool {
        match self.kind {
            Kind::Cairn => line.trim_end().ends_with("\"isError\":false}}"),
            Kind::Port => line.starts_with(
                r#"{"result":{"content":[{"type":"text","text":"{\n  \"success\": true"#,
            ),
        }
    }

    /// The line answering request `id`; other lines (notifications) are skipped.
    fn read_answer(&mut self, id: u64) -> String {
        let head = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},");
        let tail = format!(",\"id\":{id}}}");
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "{:?} closed stdout", self.kind);
            let answers = match self.kind {
                Kind::Cairn => line.starts_with(&head),
                Kind::Port => line.trim_end().ends_with(&tail),
            };
            if answers {
                return line;
            }
        }
    }

    /// A tool result's envelope: `structuredContent`, or (the port's) the text parsed.
    fn envelope(&self, result: &mut Value) -> Value {
        match result["structuredContent"].take() {
            Value::Null => result["content"][0]["text"]
                .as_str()
                .and_then(|t| serde_json::from_str(t).ok())
                .unwrap_or(Value::Null),
            env => env,
        }
    }

    /// Sends a request that must succeed and returns its result.
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let line = self.answer_line(method, params);
        let mut v: Value = serde_json::from_str(&line).expect("JSON-RPC line");
        if let Some(e) = v.get("error") {
            panic!("{method}: {e}");
        }
        v["result"].take()
    }

    /// Calls a tool that must succeed; returns its envelope's `data`.
    pub fn call(&mut self, tool: &str, args: Value) -> Value {
        let mut r = self.request("tools/call", json!({"name":tool,"arguments":args}));
        let mut env = self.envelope(&mut r);
        assert_eq!(env["success"], json!(true), "{tool}: {env}");
        env["data"].take()
    }

    /// Calls a tool that must succeed and returns the whole answer line, checked
    /// without building a JSON tree from it: timed loops measure the server and the
    /// pipe, not the client's parser (reading a 350 KiB context answer into a
    /// `Value` costs the client more than the server spends composing it). The line
    /// must end as a successful tool result does (`isError` false, which the server
    /// sets exactly when `success` is true).
    pub fn call_line(&mut self, tool: &str, args: Value) -> String {
        let line = self.answer_line("tools/call", json!({"name":tool,"arguments":args}));
        assert!(self.succeeded(&line), "{tool} failed: {line}");
        line
    }

    /// Calls `tool` once per argument object, keeping up to `window` calls in flight
    /// on the one session (JSON-RPC lets a client send before the earlier answers
    /// arrive; an agent's parallel tool calls do). Each must succeed.
    pub fn call_pipelined(&mut self, tool: &str, args: Vec<Value>, window: usize) {
        let first = self.next;
        let total = args.len() as u64;
        let mut args = args.into_iter();
        let (mut sent, mut answered) = (0u64, 0u64);
        let mut line = String::new();
        while answered < total {
            while sent < total && sent - answered < window as u64 {
                let a = args.next().expect("one argument object per call");
                let id = self.next;
                self.next += 1;
                let m = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":{"name":tool,"arguments":a}});
                self.send(&m);
                sent += 1;
            }
            line.clear();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "{:?} closed stdout", self.kind);
            let mut v: Value = serde_json::from_str(&line).expect("JSON-RPC line");
            let Some(id) = v["id"]
                .as_u64()
                .filter(|id| (first..first + total).contains(id))
            else {
                continue;
            };
            let env = &self.envelope(&mut v["result"]);
            assert_eq!(env["success"], json!(true), "{tool} call {id}: {v}");
            answered += 1;
        }
    }

    /// Calls a tool with a progress token and reads until it is answered or `deadline`
    /// has passed (checked as each line arrives: a call that embeds reports progress
    /// every batch): the answer's `data` (`None` when the deadline came first), how
    /// long it took, and the progress notifications seen as (time since the call was
    /// sent, progress, total).
    pub fn call_watched(
        &mut self,
        tool: &str,
        args: Value,
        deadline: Duration,
    ) -> (Option<Value>, Duration, Vec<Progressed>) {
        let id = self.next;
        self.next += 1;
        let t = std::time::Instant::now();
        self.send(&json!({"jsonrpc":"2.0","id":id,"method":"tools/call",
                          "params":{"name":tool,"arguments":args,"_meta":{"progressToken":id}}}));
        let mut seen = Vec::new();
        let mut line = String::new();
        while t.elapsed() < deadline {
            line.clear();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "cairn closed stdout");
            let v: Value = serde_json::from_str(&line).expect("JSON-RPC line");
            if v["method"] == "notifications/progress" {
                let p = &v["params"];
                seen.push((
                    t.elapsed(),
                    p["progress"].as_f64().unwrap_or(0.0),
                    p["total"].as_f64(),
                ));
            } else if v["id"] == json!(id) {
                let env = &v["result"]["structuredContent"];
                assert_eq!(env["success"], json!(true), "{tool}: {env}");
                return (Some(env["data"].clone()), t.elapsed(), seen);
            }
        }
        (None, t.elapsed(), seen)
    }

    /// CPU time the server has used (user + system): the work per call, which unlike
    /// wall time does not move much when other processes compete for the cores.
    pub fn cpu(&self) -> Duration {
        let s =
            std::fs::read_to_string(format!("/proc/{}/stat", self.child.id())).unwrap_or_default();
        // Fields after the command name, which is in parentheses.
        let rest = s.rsplit_once(')').map_or("", |x| x.1);
        let f: Vec<u64> = rest
            .split_whitespace()
            .map(|x| x.parse().unwrap_or(0))
            .collect();
        let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
        Duration::from_millis(ticks * 10)
    }

    /// The server's time on a CPU and time waiting in the run queue for one, summed over
    /// its threads (/proc/PID/task/*/schedstat, nanoseconds), so that a slow round trip
    /// can be told apart: the server working, or the machine too busy to run it.
    /// Threads that have exited no longer count.
    pub fn sched(&self) -> (Duration, Duration) {
        let (mut run, mut wait) = (0, 0);
        let tasks = std::fs::read_dir(format!("/proc/{}/task", self.child.id()));
        for t in tasks.into_iter().flatten().flatten() {
            let s = std::fs::read_to_string(t.path().join("schedstat")).unwrap_or_default();
            let mut f = s.split_whitespace().map(|x| x.parse::<u64>().unwrap_or(0));
            run += f.next().unwrap_or(0);
            wait += f.next().unwrap_or(0);
        }
        (Duration::from_nanos(run), Duration::from_nanos(wait))
    }

    /// Resident memory in MB.
    pub fn rss_mb(&self) -> f64 {
        std::fs::read_to_string(format!("/proc/{}/status", self.child.id()))
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

/// A tool call encoded by [`Server::prepare`].
pub struct Prepared {
    id: u64,
    line: Vec<u8>,
}

/// The `id` of the object under `key` in an answer line: in Cairn's
/// `structuredContent` (the text copy escapes its quotes, so the unescaped key is
/// found only there), or in the port's pretty-printed text, escaped.
pub fn id_of<'a>(line: &'a str, key: &str) -> &'a str {
    let (at, id) = match line.find(&format!("\"{key}\":{{")) {
        Some(at) => (at, "\"id\":\""),
        None => (
            line.find(&format!(r#"\"{key}\": {{"#))
                .unwrap_or_else(|| panic!("no {key} in {line}")),
            r#"\"id\": \""#,
        ),
    };
    let rest = &line[at..];
    let start = rest.find(id).expect("an id") + id.len();
    let len = rest[start..].find(['"', '\\']).expect("a closed id");
    &rest[start..start + len]
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
