//! Configuration: where the database lives, which toolsets are served, and the
//! workflow pipelines `sync` applies, and the language servers of the `code` toolset
//! (`[lsp]`: extension = command; `lsp_timeout_ms`), and the database's limits
//! (`busy_timeout_ms`, how long a write waits for another process's lock; `max_db_mib`,
//! the size past which writes fail with `STORAGE_FULL`).
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
pub const TOOLSETS: &[&str] = &["tasks", "graph", "code", "memory"];

#[derive(Debug, Clone)]
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
#[derive(Debug, Default, Clone)]
pub struct Overrides {
    pub config: Option<PathBuf>,
    pub db: Option<PathBuf>,
    pub model_dir: Option<PathBuf>,
    pub toolsets: Option<String>,
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
    toml::from_str(&text)
        .map_err(|e| Error::invalid(format!("config file {} is not valid: {e}", p.display())))
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
