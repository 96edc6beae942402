//! Configuration: where the database lives, which toolsets are served, and the
//! workflow pipelines `sync` applies, and the language servers of the `code` toolset
//! (`[lsp]`: extension = command; `lsp_timeout_ms`), and the database's limits
//! (`busy_timeout_ms`, how long a write waits for another process's lock; `max_db_mib`,
//! the size past which writes fail with `STORAGE_FULL`), when texts are embedded
//! (`embed_wait_ms`, how long a search waits for its project's texts without vectors;
//! `embed_idle_ms`, how long a server is idle before it embeds in the background), and
//! the ontology toolset's settings (`[ontology]`, with the bounds of a query and of a
//! document read), and `serve --http`'s limits (`[http]`: sessions open at once, their
//! idle timeout, how long a request may take to arrive).
//!
//! Config file: `--config PATH`, else `$CAIRN_CONFIG`, else `~/.config/cairn/config.toml`
//! (absent is fine unless named explicitly). Database: `--db PATH`, else `$CAIRN_DB`,
//! else `db` in the config file, else `~/.local/share/cairn/cairn.db`. Embedding model:
//! `--model-dir PATH`, else `$CAIRN_MODEL_DIR`, else `model_dir` in the config file, else
//! `~/.local/share/cairn/models/all-minilm-l6-v2/`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::domain::{ItemKind, Pipeline, Pipelines};
use crate::error::{Error, Result};

/// Every toolset this build serves, in the order tools are listed.
pub const TOOLSETS: &[&str] = &["tasks", "graph", "code", "ontology", "memory"];

#[derive(Clone)]
pub struct Config {
    pub db_path: PathBuf,
    /// Where `db_path` came from: only the default one's directory is Cairn's to create.
    pub db_source: DbSource,
    pub toolsets: Vec<String>,
    pub pipelines: Pipelines,
    /// The file the configuration came from, if any; `sync` re-reads it.
    pub file: Option<PathBuf>,
    /// Where the embedding model is read from (on first use; absent means the hashing
    /// fallback).
    pub model_dir: PathBuf,
    /// Language servers by file extension (`[lsp]`); an empty command turns the
    /// default server for that extension off.
    pub lsp: BTreeMap<String, Vec<String>>,
    /// How long a language server may take to answer one request.
    pub lsp_timeout: Duration,
    /// How long a write waits for another process's write lock (`busy_timeout_ms`).
    pub busy_timeout: Duration,
    /// The largest the database file may grow (`max_db_mib`); `None`: no limit but
    /// the disk's.
    pub max_db_bytes: Option<u64>,
    /// How long a search (or `query`) embeds its project's texts that have no vector
    /// yet before answering without them (`embed_wait_ms`, default 2000).
    pub embed_wait: Duration,
    /// How long a server must have had no tool call in flight before it embeds in the
    /// background (`embed_idle_ms`, default 1000).
    pub embed_idle: Duration,
    /// The ontology toolset's settings (`[ontology]`).
    pub ontology: OntologySettings,
    /// `serve --http`'s limits (`[http]`); the command line's flags win.
    pub http: HttpSettings,
}

/// Written by hand so that the database URL's password is never printed.
impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field(
                "db_path",
                &crate::redact::url(&self.db_path.to_string_lossy()),
            )
            .field("db_source", &self.db_source)
            .field("toolsets", &self.toolsets)
            .field("pipelines", &self.pipelines)
            .field("file", &self.file)
            .field("model_dir", &self.model_dir)
            .field("lsp", &self.lsp)
            .field("lsp_timeout", &self.lsp_timeout)
            .field("busy_timeout", &self.busy_timeout)
            .field("max_db_bytes", &self.max_db_bytes)
            .field("embed_wait", &self.embed_wait)
            .field("embed_idle", &self.embed_idle)
            .field("ontology", &self.ontology)
            .field("http", &self.http)
            .finish()
    }
}

/// `serve --http`'s limits: `[http]` in the config file, each also a flag of
/// `serve --http` (`--max-sessions`, `--session-idle-ms`, `--header-timeout-ms`,
/// `--body-timeout-ms`), which wins.
#[derive(Debug, Clone, PartialEq)]
pub struct HttpSettings {
    /// MCP sessions open at once (`max_sessions`, 1000); past it an `initialize`
    /// gets 503 with `Retry-After`.
    pub max_sessions: usize,
    /// A session with no request in flight and none for this long is closed
    /// (`session_idle_ms`, 30 minutes); its id then gets 404.
    pub session_idle: Duration,
    /// How long a client may take to send a request's headers (`header_timeout_ms`,
    /// 30 s; also how long an idle connection stays open); past it the connection
    /// closes.
    pub header_timeout: Duration,
    /// How long a client may take to send a request's body once its headers arrived
    /// (`body_timeout_ms`, 30 s); past it, 408 and the connection closes.
    pub body_timeout: Duration,
}

impl Default for HttpSettings {
    fn default() -> HttpSettings {
        HttpSettings {
            max_sessions: 1000,
            session_idle: Duration::from_secs(30 * 60),
            header_timeout: Duration::from_secs(30),
            body_timeout: Duration::from_secs(30),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct HttpFile {
    max_sessions: Option<u64>,
    session_idle_ms: Option<u64>,
    header_timeout_ms: Option<u64>,
    body_timeout_ms: Option<u64>,
}

impl HttpSettings {
    /// The names of the settings, as in the config file (a flag is `--` and the name
    /// with `-` for `_`).
    pub const KEYS: &'static [&'static str] = &[
        "max_sessions",
        "session_idle_ms",
        "header_timeout_ms",
        "body_timeout_ms",
    ];

    /// Sets `key` (one of [`Self::KEYS`]) to `value`, within its bounds; the error
    /// names the setting and its range.
    pub fn set(&mut self, key: &str, value: u64) -> std::result::Result<(), String> {
        let (lo, hi) = match key {
            "max_sessions" => (1, 1_000_000),
            // Up to a week idle; a timeout for the arrival of a request, up to an hour.
            "session_idle_ms" => (1, 7 * 24 * 3_600_000),
            "header_timeout_ms" | "body_timeout_ms" => (1, 3_600_000),
            _ => return Err(format!("no HTTP setting named {key}")),
        };
        if !(lo..=hi).contains(&value) {
            return Err(format!("{key} must be from {lo} to {hi}, not {value}"));
        }
        let ms = Duration::from_millis(value);
        match key {
            "max_sessions" => self.max_sessions = value as usize,
            "session_idle_ms" => self.session_idle = ms,
            "header_timeout_ms" => self.header_timeout = ms,
            _ => self.body_timeout = ms,
        }
        Ok(())
    }
}

fn http_of(f: Option<&HttpFile>) -> Result<HttpSettings> {
    let mut h = HttpSettings::default();
    let Some(f) = f else { return Ok(h) };
    for (key, v) in [
        ("max_sessions", f.max_sessions),
        ("session_idle_ms", f.session_idle_ms),
        ("header_timeout_ms", f.header_timeout_ms),
        ("body_timeout_ms", f.body_timeout_ms),
    ] {
        if let Some(v) = v {
            h.set(key, v)
                .map_err(|why| Error::invalid(format!("config file: [http] {why}")))?;
        }
    }
    Ok(h)
}

/// The ontology toolset's settings (`[ontology]` in the config file; docs/ontology.md,
/// settings): the toolset's settings with their defaults, and the bounds and GitHub
/// endpoint Cairn adds.
#[derive(Debug, Clone, PartialEq)]
pub struct OntologySettings {
    /// Results `ontology_discover` answers when the call gives no `limit` (20).
    pub discovery_limit: usize,
    /// The deepest `ontology_read` with a depth goes (5).
    pub max_traverse_depth: usize,
    /// Rounds of misspelling repair a query gets (3).
    pub max_query_repair: usize,
    /// The GitHub repository new attachments push to, unless `attach` names one.
    pub github_repo_owner: Option<String>,
    pub github_repo_name: Option<String>,
    /// The base branch new attachments read and propose against ("main").
    pub github_base_branch: String,
    /// Proposals scoring below this are refused with what they lack (0.5).
    pub min_proposal_quality: f32,
    /// Refuse proposals that make the ontology inconsistent or a class unsatisfiable
    /// (true); when false they are staged with the report.
    pub reject_inconsistent: bool,
    /// The GitHub REST API's base URL ("https://api.github.com").
    pub github_api_url: String,
    /// Where GitHub's pages are ("https://github.com"): a pull request's URL is kept
    /// only when it is on this host, over https.
    pub github_web_url: String,
    /// The environment variable holding the GitHub token ("GITHUB_TOKEN"); the token
    /// itself is never in the file.
    pub github_token_env: String,
    /// The most rows a query answers (1000); more make the answer `truncated`.
    pub max_query_rows: usize,
    /// How long a query may run (2000 ms).
    pub query_timeout: Duration,
    /// The most intermediate bindings a query may make (1,000,000).
    pub max_query_bindings: u64,
    /// A query's memory budget in bytes (`query_memory_mib`, 64 MiB).
    pub query_memory: u64,
    /// The largest document read: an OFN import, given as text or as a path, and
    /// each page a sync reads (`max_document_mib`, 8 MiB).
    pub max_document: u64,
}

/// The `[ontology]` setting that bounds what stopped a query, and its value as the
/// config file writes it.
pub fn query_limit(
    s: &OntologySettings,
    kind: crate::domain::ontology_query::ErrorKind,
) -> Option<(&'static str, u64)> {
    use crate::domain::ontology_query::ErrorKind as K;
    Some(match kind {
        K::Deadline => ("query_timeout_ms", s.query_timeout.as_millis() as u64),
        K::BindingLimit => ("max_query_bindings", s.max_query_bindings),
        K::MemoryLimit => ("query_memory_mib", s.query_memory >> 20),
        _ => return None,
    })
}

impl Default for OntologySettings {
    fn default() -> OntologySettings {
        OntologySettings {
            discovery_limit: 20,
            max_traverse_depth: 5,
            max_query_repair: 3,
            github_repo_owner: None,
            github_repo_name: None,
            github_base_branch: "main".into(),
            min_proposal_quality: 0.5,
            reject_inconsistent: true,
            github_api_url: "https://api.github.com".into(),
            github_web_url: "https://github.com".into(),
            github_token_env: "GITHUB_TOKEN".into(),
            max_query_rows: 1000,
            query_timeout: Duration::from_millis(2000),
            max_query_bindings: 1_000_000,
            query_memory: 64 << 20,
            max_document: 8 << 20,
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct OntologyFile {
    discovery_limit: Option<usize>,
    max_traverse_depth: Option<usize>,
    max_query_repair: Option<usize>,
    github_repo_owner: Option<String>,
    github_repo_name: Option<String>,
    github_base_branch: Option<String>,
    min_proposal_quality: Option<f32>,
    reject_inconsistent: Option<bool>,
    github_api_url: Option<String>,
    github_web_url: Option<String>,
    github_token_env: Option<String>,
    max_query_rows: Option<usize>,
    query_timeout_ms: Option<u64>,
    max_query_bindings: Option<usize>,
    query_memory_mib: Option<usize>,
    max_document_mib: Option<usize>,
}

fn ontology_of(f: Option<&OntologyFile>) -> Result<OntologySettings> {
    let d = OntologySettings::default();
    let Some(f) = f else { return Ok(d) };
    let bad = |k: &str, why: &str| Error::invalid(format!("config file: [ontology] {k} {why}"));
    let within = |k: &str, v: Option<usize>, lo: usize, hi: usize, dflt: usize| match v {
        Some(x) if !(lo..=hi).contains(&x) => Err(bad(k, &format!("must be from {lo} to {hi}"))),
        Some(x) => Ok(x),
        None => Ok(dflt),
    };
    let quality = f.min_proposal_quality.unwrap_or(d.min_proposal_quality);
    if !(0.0..=1.0).contains(&quality) {
        return Err(bad("min_proposal_quality", "must be from 0 to 1"));
    }
    let text = |k: &str, v: &Option<String>| -> Result<Option<String>> {
        match v.as_deref().map(str::trim) {
            Some("") => Err(bad(k, "must not be empty")),
            other => Ok(other.map(str::to_string)),
        }
    };
    let api = text("github_api_url", &f.github_api_url)?.unwrap_or(d.github_api_url);
    if !(api.starts_with("https://") || api.starts_with("http://")) {
        return Err(bad("github_api_url", "must be an http(s) URL"));
    }
    let web = text("github_web_url", &f.github_web_url)?.unwrap_or(d.github_web_url);
    let web = web.trim_end_matches('/').to_string();
    if crate::github::https_host(&web).is_none() {
        return Err(bad(
            "github_web_url",
            "must be an https URL (https://github.com)",
        ));
    }
    Ok(OntologySettings {
        discovery_limit: within(
            "discovery_limit",
            f.discovery_limit,
            1,
            200,
            d.discovery_limit,
        )?,
        max_traverse_depth: within(
            "max_traverse_depth",
            f.max_traverse_depth,
            1,
            20,
            d.max_traverse_depth,
        )?,
        max_query_repair: within(
            "max_query_repair",
            f.max_query_repair,
            0,
            10,
            d.max_query_repair,
        )?,
        github_repo_owner: text("github_repo_owner", &f.github_repo_owner)?,
        github_repo_name: text("github_repo_name", &f.github_repo_name)?,
        github_base_branch: text("github_base_branch", &f.github_base_branch)?
            .unwrap_or(d.github_base_branch),
        min_proposal_quality: quality,
        reject_inconsistent: f.reject_inconsistent.unwrap_or(d.reject_inconsistent),
        github_api_url: api.trim_end_matches('/').to_string(),
        github_web_url: web,
        github_token_env: text("github_token_env", &f.github_token_env)?
            .unwrap_or(d.github_token_env),
        max_query_rows: within(
            "max_query_rows",
            f.max_query_rows,
            1,
            100_000,
            d.max_query_rows,
        )?,
        query_timeout: Duration::from_millis(f.query_timeout_ms.unwrap_or(2000).clamp(1, 600_000)),
        max_query_bindings: within(
            "max_query_bindings",
            f.max_query_bindings,
            1_000,
            1_000_000_000,
            d.max_query_bindings as usize,
        )? as u64,
        query_memory: (within("query_memory_mib", f.query_memory_mib, 1, 4096, 64)? as u64) << 20,
        max_document: (within("max_document_mib", f.max_document_mib, 1, 1024, 8)? as u64) << 20,
    })
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    db: Option<PathBuf>,
    model_dir: Option<PathBuf>,
    toolsets: Option<Vec<String>>,
    workflow: Option<Workflow>,
    lsp: Option<BTreeMap<String, Command>>,
    lsp_timeout_ms: Option<u64>,
    busy_timeout_ms: Option<u64>,
    max_db_mib: Option<u64>,
    embed_wait_ms: Option<u64>,
    embed_idle_ms: Option<u64>,
    ontology: Option<OntologyFile>,
    http: Option<HttpFile>,
}

/// A command line as one string (split on whitespace) or as an array of arguments.
#[derive(Debug, Deserialize)]
#[serde(untagged)]
enum Command {
    Line(String),
    Args(Vec<String>),
}

impl Command {
    fn args(&self) -> Vec<String> {
        match self {
            Command::Line(s) => s.split_whitespace().map(str::to_string).collect(),
            Command::Args(v) => v.clone(),
        }
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Workflow {
    task: Option<Vec<String>>,
    feature: Option<Vec<String>>,
}

/// Where the database path was named, in the order that decides it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DbSource {
    Flag,
    Env,
    ConfigFile,
    /// Nobody named one: `cairn.db` in the data directory, which Cairn creates.
    Default,
}

impl DbSource {
    /// How a message names the source, e.g. "from --db".
    pub fn describe(self) -> &'static str {
        match self {
            DbSource::Flag => "--db",
            DbSource::Env => "$CAIRN_DB",
            DbSource::ConfigFile => "`db` in the config file",
            DbSource::Default => "the default",
        }
    }
}

/// What the command line said; every field optional.
#[derive(Default, Clone)]
pub struct Overrides {
    pub config: Option<PathBuf>,
    pub db: Option<PathBuf>,
    pub model_dir: Option<PathBuf>,
    pub toolsets: Option<String>,
}

/// Written by hand so that the database URL's password is never printed.
impl std::fmt::Debug for Overrides {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let db = self
            .db
            .as_ref()
            .map(|d| crate::redact::url(&d.to_string_lossy()));
        f.debug_struct("Overrides")
            .field("config", &self.config)
            .field("db", &db)
            .field("model_dir", &self.model_dir)
            .field("toolsets", &self.toolsets)
            .finish()
    }
}

fn home() -> PathBuf {
    std::env::var_os("HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."))
}

pub fn default_data_dir() -> PathBuf {
    match std::env::var_os("XDG_DATA_HOME") {
        Some(d) if !d.is_empty() => PathBuf::from(d).join("cairn"),
        _ => home().join(".local/share/cairn"),
    }
}

fn default_config_file() -> PathBuf {
    match std::env::var_os("XDG_CONFIG_HOME") {
        Some(d) if !d.is_empty() => PathBuf::from(d).join("cairn/config.toml"),
        _ => home().join(".config/cairn/config.toml"),
    }
}

impl Config {
    pub fn load(o: &Overrides) -> Result<Config> {
        let explicit = o.config.clone().or_else(|| {
            std::env::var_os("CAIRN_CONFIG")
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        });
        let (file, path) = match explicit {
            Some(p) => (read_file(&p)?, Some(p)),
            None => {
                let p = default_config_file();
                if p.exists() {
                    (read_file(&p)?, Some(p))
                } else {
                    (File::default(), None)
                }
            }
        };
        let env_db = std::env::var_os("CAIRN_DB")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from);
        let (db_path, db_source) = match (o.db.clone(), env_db, file.db.clone()) {
            (Some(p), _, _) => (p, DbSource::Flag),
            (None, Some(p), _) => (p, DbSource::Env),
            (None, None, Some(p)) => (p, DbSource::ConfigFile),
            (None, None, None) => (default_data_dir().join("cairn.db"), DbSource::Default),
        };
        let toolsets = match (&o.toolsets, &file.toolsets) {
            (Some(s), _) => parse_toolsets(s.split(',').map(str::to_string).collect())?,
            (None, Some(v)) => parse_toolsets(v.clone())?,
            (None, None) => TOOLSETS.iter().map(|s| s.to_string()).collect(),
        };
        let pipelines = pipelines_of(&file)?;
        // The flag wins, then $CAIRN_MODEL_DIR, then the config file, then the data dir.
        let model_dir = match (&o.model_dir, std::env::var_os("CAIRN_MODEL_DIR")) {
            (Some(p), _) => p.clone(),
            (None, Some(p)) if !p.is_empty() => PathBuf::from(p),
            _ => file.model_dir.clone().unwrap_or_else(|| {
                default_data_dir()
                    .join("models")
                    .join(crate::embed::minilm::MODEL_NAME)
            }),
        };
        let lsp = file
            .lsp
            .as_ref()
            .map(|m| m.iter().map(|(k, v)| (k.clone(), v.args())).collect())
            .unwrap_or_default();
        Ok(Config {
            db_path,
            db_source,
            toolsets,
            pipelines,
            file: path,
            model_dir,
            lsp,
            lsp_timeout: Duration::from_millis(file.lsp_timeout_ms.unwrap_or(20_000).max(1)),
            busy_timeout: Duration::from_millis(file.busy_timeout_ms.unwrap_or(10_000)),
            max_db_bytes: file.max_db_mib.map(|m| m.saturating_mul(1 << 20)),
            embed_wait: Duration::from_millis(file.embed_wait_ms.unwrap_or(2_000)),
            embed_idle: Duration::from_millis(file.embed_idle_ms.unwrap_or(1_000)),
            ontology: ontology_of(file.ontology.as_ref())?,
            http: http_of(file.http.as_ref())?,
        })
    }

    /// Re-reads the pipelines from the config file (for `sync`); defaults without one.
    pub fn reload_pipelines(&self) -> Result<Pipelines> {
        match &self.file {
            Some(p) => pipelines_of(&read_file(p)?),
            None => Ok(Pipelines::default()),
        }
    }
}

fn read_file(p: &Path) -> Result<File> {
    let text = std::fs::read_to_string(p)
        .map_err(|e| Error::invalid(format!("cannot read config file {}: {e}", p.display())))?;
    toml::from_str(&text).map_err(|e| {
        Error::invalid(format!(
            "config file {} is not valid: {}",
            p.display(),
            toml_error(&text, &e)
        ))
    })
}

/// Where a config file is wrong and why, without its text: toml's own message
/// quotes the line, and the `db` line may hold a URL with a password. The line is
/// named by its key instead, and the message is redacted all the same.
fn toml_error(text: &str, e: &toml::de::Error) -> String {
    let why = crate::redact::text(e.message().trim()).into_owned();
    let Some(span) = e.span() else { return why };
    let before = &text.as_bytes()[..span.start.min(text.len())];
    let line = before.iter().filter(|b| **b == b'\n').count() + 1;
    let start = before
        .iter()
        .rposition(|b| *b == b'\n')
        .map_or(0, |i| i + 1);
    let column = String::from_utf8_lossy(&before[start..]).chars().count() + 1;
    let key: String = text[start..]
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '[' | ']'))
        .collect();
    if key.is_empty() {
        format!("line {line}, column {column}: {why}")
    } else {
        format!("line {line} (`{key}`), column {column}: {why}")
    }
}

fn pipelines_of(f: &File) -> Result<Pipelines> {
    let mut p = Pipelines::default();
    if let Some(w) = &f.workflow {
        if let Some(t) = &w.task {
            p.task = Pipeline::from_names(ItemKind::Task, t)?;
        }
        if let Some(t) = &w.feature {
            p.feature = Pipeline::from_names(ItemKind::Feature, t)?;
        }
    }
    Ok(p)
}

fn parse_toolsets(raw: Vec<String>) -> Result<Vec<String>> {
    let mut out = Vec::new();
    for t in raw {
        let t = t.trim().to_ascii_lowercase();
        if t.is_empty() {
            continue;
        }
        if t == "all" {
            return Ok(TOOLSETS.iter().map(|s| s.to_string()).collect());
        }
        if !TOOLSETS.contains(&t.as_str()) {
            return Err(Error::validation(
                "toolsets",
                format!("unknown toolset '{t}'; available: {}", TOOLSETS.join(", ")),
            ));
        }
        if !out.contains(&t) {
            out.push(t);
        }
    }
    if out.is_empty() {
        return Err(Error::validation(
            "toolsets",
            format!("no toolset selected; available: {}", TOOLSETS.join(", ")),
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ontology(text: &str) -> Result<OntologySettings> {
        let f: File = toml::from_str(text).map_err(|e| Error::invalid(e.to_string()))?;
        ontology_of(f.ontology.as_ref())
    }

    #[test]
    fn a_config_error_names_the_line_and_never_quotes_it() {
        for text in [
            "toolsets = [\"tasks\"]\ndb = \"postgres://cairn:hunter2@db/cairn\n",
            "db = postgres://cairn:hunter2@db/cairn\n",
            "db = 'postgres://cairn:hunter2@db/cairn' x\n",
        ] {
            let e = toml::from_str::<File>(text).unwrap_err();
            assert!(
                e.to_string().contains("hunter2"),
                "toml quotes the line: {e}"
            );
            let m = toml_error(text, &e);
            assert!(!m.contains("hunter2"), "{m}");
            assert!(m.contains("(`db`)"), "{m}");
        }
        let text = "[http]\nmax_sessions = 0\n";
        let f: File = toml::from_str(text).unwrap();
        let e = http_of(f.http.as_ref()).unwrap_err().to_string();
        assert!(e.contains("max_sessions must be from 1"), "{e}");
        let f: File = toml::from_str("[http]\nmax_sessions = 3\nsession_idle_ms = 250\n").unwrap();
        let h = http_of(f.http.as_ref()).unwrap();
        assert_eq!(h.max_sessions, 3);
        assert_eq!(h.session_idle, Duration::from_millis(250));
        assert_eq!(h.body_timeout, HttpSettings::default().body_timeout);
    }

    #[test]
    fn ontology_settings_have_the_specs_defaults_and_checked_bounds() {
        let d = ontology("").unwrap();
        assert_eq!(d, OntologySettings::default());
        assert_eq!(
            (d.discovery_limit, d.max_traverse_depth, d.max_query_repair),
            (20, 5, 3)
        );
        assert_eq!((d.min_proposal_quality, d.reject_inconsistent), (0.5, true));
        assert_eq!(d.github_base_branch, "main");
        let s = ontology(
            "[ontology]\ndiscovery_limit = 7\ngithub_repo_owner = \"acme\"\ngithub_repo_name = \"onto\"\n\
             reject_inconsistent = false\ngithub_api_url = \"http://127.0.0.1:9/\"\nquery_timeout_ms = 50\n",
        )
        .unwrap();
        assert_eq!(s.discovery_limit, 7);
        assert_eq!(s.github_repo_owner.as_deref(), Some("acme"));
        assert!(!s.reject_inconsistent);
        assert_eq!(s.github_api_url, "http://127.0.0.1:9");
        assert_eq!(s.query_timeout, Duration::from_millis(50));
        let s = ontology(
            "[ontology]\nquery_memory_mib = 2\nmax_document_mib = 16\nmax_query_bindings = 5000\n",
        )
        .unwrap();
        assert_eq!(
            (s.query_memory, s.max_document, s.max_query_bindings),
            (2 << 20, 16 << 20, 5000)
        );
        for bad in [
            "[ontology]\ndiscovery_limit = 0\n",
            "[ontology]\nmin_proposal_quality = 1.5\n",
            "[ontology]\ngithub_api_url = \"ftp://x\"\n",
            "[ontology]\ngithub_web_url = \"http://github.com\"\n",
            "[ontology]\ngithub_web_url = \"https://\"\n",
            "[ontology]\ngithub_token_env = \" \"\n",
            "[ontology]\nmax_traverse_depth = 99\n",
            "[ontology]\nquery_memory_mib = 0\n",
            "[ontology]\nmax_document_mib = 5000\n",
            "[ontology]\nmax_query_bindings = 10\n",
            "[ontology]\nno_such_setting = 1\n",
        ] {
            assert!(ontology(bad).is_err(), "{bad}");
        }
    }
}
