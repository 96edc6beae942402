//! The LSP client: language servers over stdio JSON-RPC, asked for
//! `textDocument/documentSymbol`. Knows nothing of entities, the store or MCP.
//!
//! One server runs per (repository, command) and is reused across calls; a server
//! that died is restarted on the next call; every request has a deadline, and a
//! server that misses it is stopped (a hung server would hang every later call).
//! Without configuration the usual servers found on PATH are used, with their
//! indexing side effects off where they allow it (clangd writes no index).

mod rpc;
mod tree;

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};

use crate::domain::code::{extension, language};
use crate::error::{Error, Result};

pub use rpc::Server;
use tree::flatten;
pub use tree::{find, matches, name_path, segments};

/// A symbol of a document, lines 1-based and inclusive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    pub kind: i64,
    pub start_line: i64,
    pub end_line: i64,
    pub container: Option<String>,
    /// The names from the document's top level down to this symbol's own
    /// (`["HTTPAdapter", "send"]`): its name path.
    pub path: Vec<String>,
    /// Inside a function, method or constructor (a local, a parameter, a closure):
    /// not a declaration an agent tracks.
    pub local: bool,
}

impl Symbol {
    /// A declaration worth tracking: not local, and not an import (pylsp reports
    /// `import os` as a one-line module).
    pub fn declaration(&self) -> bool {
        !(self.local || (self.kind == 2 && self.start_line == self.end_line))
    }
}

/// The LSP `SymbolKind` names, indexed from 1.
pub fn kind_name(kind: i64) -> &'static str {
    const NAMES: [&str; 26] = [
        "file",
        "module",
        "namespace",
        "package",
        "class",
        "method",
        "property",
        "field",
        "constructor",
        "enum",
        "interface",
        "function",
        "variable",
        "constant",
        "string",
        "number",
        "boolean",
        "array",
        "object",
        "key",
        "null",
        "enumMember",
        "struct",
        "event",
        "operator",
        "typeParameter",
    ];
    usize::try_from(kind - 1)
        .ok()
        .and_then(|i| NAMES.get(i))
        .copied()
        .unwrap_or("unknown")
}

/// Servers used when the config file names none for an extension, if on PATH.
const DEFAULTS: &[(&[&str], &[&str])] = &[
    (
        &["c", "h", "cc", "cpp", "cxx", "hpp", "hh", "hxx"],
        &["clangd", "--background-index=false", "--log=error"],
    ),
    (&["rs"], &["rust-analyzer"]),
    (&["py"], &["pyright-langserver", "--stdio"]),
    // Debian's python3-pylsp, when pyright is not installed.
    (&["py"], &["pylsp"]),
    (
        &["ts", "tsx", "js", "jsx", "mjs", "cjs"],
        &["typescript-language-server", "--stdio"],
    ),
    (&["go"], &["gopls"]),
];

fn on_path(program: &str) -> bool {
    if program.contains('/') {
        return Path::new(program).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(program).is_file()))
}

/// A running server is shared per (repository root, command line).
type ServerKey = (PathBuf, Vec<String>);

/// The language servers of one Cairn process.
pub struct Pool {
    configured: BTreeMap<String, Vec<String>>,
    timeout: Duration,
    servers: tokio::sync::Mutex<HashMap<ServerKey, Arc<Server>>>,
}

impl Pool {
    /// `configured` maps a file extension to a command line (empty: no server).
    pub fn new(configured: BTreeMap<String, Vec<String>>, timeout: Duration) -> Pool {
        Pool {
            configured: configured
                .into_iter()
                .map(|(k, v)| (k.trim_start_matches('.').to_ascii_lowercase(), v))
                .collect(),
            timeout,
            servers: tokio::sync::Mutex::new(HashMap::new()),
        }
    }

    /// The command that serves `path`, if any: the configured one, else a usual
    /// server found on PATH.
    pub fn command_for(&self, path: &str) -> Option<Vec<String>> {
        let ext = extension(path);
        if let Some(cmd) = self.configured.get(&ext) {
            return (!cmd.is_empty()).then(|| cmd.clone());
        }
        // The first usual server for the extension that is on PATH.
        DEFAULTS
            .iter()
            .filter(|(exts, cmd)| exts.contains(&ext.as_str()) && on_path(cmd[0]))
            .map(|(_, cmd)| cmd.iter().map(|s| s.to_string()).collect::<Vec<_>>())
            .next()
    }

    /// Per language Cairn knows: its extension, the command that serves it (`None`:
    /// none configured or on PATH) and how to get one.
    pub fn languages(&self) -> Vec<(&'static str, &'static str, Option<String>, &'static str)> {
        const KNOWN: &[(&str, &str, &str)] = &[
            ("c", "c", "apt-get install clangd"),
            (
                "python",
                "py",
                "apt-get install python3-pylsp (or npm install -g pyright)",
            ),
            (
                "typescript",
                "ts",
                "npm install -g typescript-language-server typescript",
            ),
            ("rust", "rs", "rustup component add rust-analyzer"),
            ("go", "go", "go install golang.org/x/tools/gopls@latest"),
        ];
        KNOWN
            .iter()
            .map(|(lang, ext, hint)| {
                let cmd = self.command_for(&format!("x.{ext}")).map(|c| c.join(" "));
                (*lang, *ext, cmd, *hint)
            })
            .collect()
    }

    /// The symbols of `rel` (relative to `root`) whose current text is `text`, or
    /// `None` when no server handles its language.
    pub async fn symbols(&self, root: &Path, rel: &str, text: &str) -> Result<Option<Vec<Symbol>>> {
        let Some(cmd) = self.command_for(rel) else {
            return Ok(None);
        };
        let server = self.server(root, &cmd).await?;
        let uri = file_uri(&root.join(rel));
        match server
            .document_symbols(&uri, &language(rel), text, self.timeout)
            .await
        {
            Ok(v) => Ok(Some(flatten(&v))),
            Err(e) => {
                // A server that failed a request is not trusted with the next one.
                self.servers
                    .lock()
                    .await
                    .remove(&(root.to_path_buf(), cmd.clone()));
                server.stop().await;
                Err(e)
            }
        }
    }

    async fn server(&self, root: &Path, cmd: &[String]) -> Result<Arc<Server>> {
        let key = (root.to_path_buf(), cmd.to_vec());
        let mut servers = self.servers.lock().await;
        if let Some(s) = servers.get(&key) {
            if s.alive() {
                return Ok(s.clone());
            }
            tracing::warn!(command = ?cmd, "language server died; restarting it");
            servers.remove(&key);
        }
        let s = Arc::new(Server::start(root, cmd, self.timeout).await?);
        servers.insert(key, s.clone());
        Ok(s)
    }
}

/// A `file://` URI for an absolute path, percent-encoding all but unreserved bytes.
pub fn file_uri(p: &Path) -> String {
    let mut s = String::from("file://");
    for b in p.to_string_lossy().bytes() {
        if b.is_ascii_alphanumeric() || b"/-_.~".contains(&b) {
            s.push(b as char);
        } else {
            s.push_str(&format!("%{b:02X}"));
        }
    }
    s
}

/// The `initialize` parameters: the few client capabilities Cairn uses.
fn initialize_params(root: &Path) -> Value {
    json!({
        "processId": std::process::id(),
        "rootUri": file_uri(root),
        "capabilities": {
            "textDocument": {
                "documentSymbol": { "hierarchicalDocumentSymbolSupport": true },
                "synchronization": { "didSave": false }
            },
            "workspace": { "configuration": false }
        },
        "clientInfo": { "name": "cairn" }
    })
}

fn lsp_error(cmd: &[String], what: impl std::fmt::Display) -> Error {
    Error::invalid(format!(
        "language server `{}` {what}",
        cmd.first().map(String::as_str).unwrap_or("")
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uri_encodes() {
        assert_eq!(file_uri(Path::new("/a b/c.c")), "file:///a%20b/c.c");
    }
}
