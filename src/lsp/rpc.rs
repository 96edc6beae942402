//! One running language server: JSON-RPC 2.0 framed with `Content-Length` headers over
//! the child's stdin/stdout. A reader task routes answers to waiting requests by id,
//! answers the server's own requests with null, and marks the server dead at EOF.

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::path::Path;
use std::process::Stdio;
use std::sync::atomic::{AtomicBool, AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};
use tokio::sync::oneshot;

use super::{initialize_params, lsp_error};
use crate::error::{Error, Result};

type Pending = Arc<Mutex<HashMap<i64, oneshot::Sender<Value>>>>;

pub struct Server {
    cmd: Vec<String>,
    stdin: tokio::sync::Mutex<ChildStdin>,
    child: tokio::sync::Mutex<Child>,
    pending: Pending,
    alive: Arc<AtomicBool>,
    next_id: AtomicI64,
    /// Open documents: uri → what the server has of it.
    docs: tokio::sync::Mutex<HashMap<String, Doc>>,
}

/// A document open in the server: its version, the hash of its text, and the
/// symbols the server answered for exactly that text.
struct Doc {
    version: i64,
    hash: u64,
    symbols: Option<Value>,
}

fn text_hash(s: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    s.hash(&mut h);
    h.finish()
}

impl Server {
    /// Starts `cmd` in `root` and runs the `initialize` handshake.
    pub async fn start(root: &Path, cmd: &[String], timeout: Duration) -> Result<Server> {
        let Some((program, args)) = cmd.split_first() else {
            return Err(Error::invalid("empty language-server command"));
        };
        let mut child = Command::new(program)
            .args(args)
            .current_dir(root)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                lsp_error(
                    cmd,
                    format!("cannot be started: {e}; install it or set its command in the [lsp] section of the config file"),
                )
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(lsp_error(cmd, "has no stdio pipes"));
        };
        let pending: Pending = Arc::new(Mutex::new(HashMap::new()));
        let alive = Arc::new(AtomicBool::new(true));
        tokio::spawn(read_loop(stdout, pending.clone(), alive.clone()));
        let s = Server {
            cmd: cmd.to_vec(),
            stdin: tokio::sync::Mutex::new(stdin),
            child: tokio::sync::Mutex::new(child),
            pending,
            alive,
            next_id: AtomicI64::new(1),
            docs: tokio::sync::Mutex::new(HashMap::new()),
        };
        match s
            .request("initialize", initialize_params(root), timeout)
            .await
        {
            Ok(_) => {}
            Err(e) => {
                s.stop().await;
                return Err(e);
            }
        }
        s.notify("initialized", json!({})).await?;
        Ok(s)
    }

    pub fn alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    pub async fn stop(&self) {
        self.alive.store(false, Ordering::SeqCst);
        let _ = self.child.lock().await.start_kill();
    }

    async fn send(&self, msg: &Value) -> Result<()> {
        let body = msg.to_string();
        let mut w = self.stdin.lock().await;
        let frame = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        let r = async {
            w.write_all(frame.as_bytes()).await?;
            w.flush().await
        }
        .await;
        r.map_err(|e| {
            self.alive.store(false, Ordering::SeqCst);
            lsp_error(
                &self.cmd,
                format!("stopped accepting requests ({e}); it is restarted on the next call"),
            )
        })
    }

    pub async fn notify(&self, method: &str, params: Value) -> Result<()> {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}))
            .await
    }

    pub async fn request(&self, method: &str, params: Value, timeout: Duration) -> Result<Value> {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.insert(id, tx);
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await?;
        let answer = match tokio::time::timeout(timeout, rx).await {
            Ok(Ok(v)) => v,
            Ok(Err(_)) => {
                return Err(lsp_error(
                    &self.cmd,
                    format!("exited while answering {method}; it is restarted on the next call"),
                ))
            }
            Err(_) => {
                if let Ok(mut p) = self.pending.lock() {
                    p.remove(&id);
                }
                return Err(lsp_error(
                    &self.cmd,
                    format!(
                        "did not answer {method} within {} ms; it was stopped and is restarted on the next call",
                        timeout.as_millis()
                    ),
                ));
            }
        };
        if let Some(err) = answer.get("error") {
            return Err(lsp_error(
                &self.cmd,
                format!(
                    "refused {method}: {}",
                    err["message"].as_str().unwrap_or("unknown error")
                ),
            ));
        }
        Ok(answer.get("result").cloned().unwrap_or(Value::Null))
    }

    /// Opens (or refreshes) the document with `text` and asks for its symbols.
    pub async fn document_symbols(
        &self,
        uri: &str,
        language: &str,
        text: &str,
        timeout: Duration,
    ) -> Result<Value> {
        // Held across the request so two calls never interleave a refresh and a read.
        let mut docs = self.docs.lock().await;
        let hash = text_hash(text);
        let version = match docs.get(uri) {
            None => {
                self.notify(
                    "textDocument/didOpen",
                    json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
                )
                .await?;
                1
            }
            Some(d) if d.hash != hash => {
                let v = d.version + 1;
                self.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": v}, "contentChanges": [{"text": text}]}),
                )
                .await?;
                v
            }
            // The outline of a document is a function of its text: the answer for
            // this very text is reused (the server is asked again once it changes,
            // or after a restart).
            Some(Doc {
                symbols: Some(s), ..
            }) => return Ok(s.clone()),
            Some(d) => d.version,
        };
        docs.insert(
            uri.to_string(),
            Doc {
                version,
                hash,
                symbols: None,
            },
        );
        let symbols = self
            .request(
                "textDocument/documentSymbol",
                json!({"textDocument": {"uri": uri}}),
                timeout,
            )
            .await?;
        if let Some(d) = docs.get_mut(uri) {
            d.symbols = Some(symbols.clone());
        }
        Ok(symbols)
    }
}

async fn read_loop(stdout: ChildStdout, pending: Pending, alive: Arc<AtomicBool>) {
    let mut r = BufReader::new(stdout);
    while let Some(msg) = read_message(&mut r).await {
        // A response has an id and no method; the server's own requests (progress,
        // configuration) are not answered: the capabilities sent at initialize ask
        // for none, and servers proceed without.
        if msg.get("method").is_none() {
            if let Some(id) = msg.get("id").and_then(Value::as_i64) {
                let tx = pending.lock().ok().and_then(|mut p| p.remove(&id));
                if let Some(tx) = tx {
                    let _ = tx.send(msg);
                }
            }
        }
    }
    alive.store(false, Ordering::SeqCst);
    // Dropping the senders wakes every waiting request with an error.
    if let Ok(mut p) = pending.lock() {
        p.clear();
    }
}

async fn read_message(r: &mut BufReader<ChildStdout>) -> Option<Value> {
    let mut len: Option<usize> = None;
    loop {
        let mut line = String::new();
        let n = r.read_line(&mut line).await.ok()?;
        if n == 0 {
            return None;
        }
        let l = line.trim_end();
        if l.is_empty() {
            break;
        }
        if let Some((k, v)) = l.split_once(':') {
            if k.eq_ignore_ascii_case("content-length") {
                len = v.trim().parse().ok();
            }
        }
    }
    // Bound a single message at 64 MB: a broken server must not exhaust memory.
    let len = len.filter(|n| *n <= 64 * 1024 * 1024)?;
    let mut buf = vec![0u8; len];
    r.read_exact(&mut buf).await.ok()?;
    serde_json::from_slice(&buf).ok().or(Some(Value::Null))
}
