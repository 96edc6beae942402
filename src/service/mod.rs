//! Use cases: each public function opens its own transaction (`BEGIN IMMEDIATE` for
//! writes), applies the workflow and validation rules, and commits. Nothing here knows
//! about MCP or JSON; callers get domain types back.

pub mod agent;
pub mod bm25;
pub mod brief;
pub mod code;
pub mod code_graph;
pub mod composed;
pub mod containers;
pub mod context;
pub mod dependencies;
pub mod embedding;
pub mod find;
pub mod foreign;
pub mod graph;
pub mod memory;
pub mod metrics;
pub mod ontology;
pub mod progress;
pub mod projects;
pub mod query;
pub mod ranking;
pub mod sections;
pub mod semantic;
pub mod tags;
pub mod task_ranking;
pub mod templates;
pub mod transfer;
pub mod workflow;

use crate::config::Config;
use crate::store::Store;

/// Everything a use case needs: the store, the configuration it started with, the
/// per-process cache of compiled graph snapshots, and the embedder (loaded on first
/// use, from `config.model_dir`).
#[derive(Clone)]
pub struct App {
    pub store: Store,
    pub config: std::sync::Arc<Config>,
    pub graph: std::sync::Arc<context::GraphCache>,
    pub embedder: std::sync::Arc<crate::embed::Lazy>,
    /// Language servers, started on first use and shared by every call.
    pub lsp: std::sync::Arc<crate::lsp::Pool>,
    /// Projects' vectors and entity graphs, reused while their generation holds.
    pub semantic: std::sync::Arc<semantic::Cache>,
    /// Embedding while the server is idle, and the calls in flight it waits for.
    pub background: std::sync::Arc<embedding::Background>,
    /// Projects' served ontologies (classification, query graph), reused while their
    /// ontology generation holds.
    pub ontology: std::sync::Arc<ontology::Cache>,
    /// Calls counted for `/metrics`, shared by every call of the process.
    pub metrics: std::sync::Arc<metrics::Metrics>,
    /// Where the running call reports progress (nowhere unless its caller asked):
    /// set per call by [`App::with_progress`], never shared between calls.
    pub progress: progress::Progress,
    /// The named agent the running call comes from (none over stdio or with the
    /// single token): set per call by [`App::with_agent`], never shared between calls.
    pub agent: Option<std::sync::Arc<agent::Agent>>,
}

impl App {
    pub fn new(store: Store, config: Config) -> Self {
        let embedder = std::sync::Arc::new(crate::embed::Lazy::new(config.model_dir.clone()));
        let lsp = crate::lsp::Pool::new(config.lsp.clone(), config.lsp_timeout);
        App {
            store,
            config: std::sync::Arc::new(config),
            graph: Default::default(),
            embedder,
            lsp: std::sync::Arc::new(lsp),
            semantic: Default::default(),
            background: Default::default(),
            ontology: Default::default(),
            metrics: Default::default(),
            progress: Default::default(),
            agent: None,
        }
    }

    /// The same application for one call that reports its progress to `p`.
    pub fn with_progress(&self, p: progress::Progress) -> App {
        App {
            progress: p,
            ..self.clone()
        }
    }

    /// This app for one call from `agent`.
    pub fn with_agent(&self, agent: Option<std::sync::Arc<agent::Agent>>) -> App {
        App {
            agent,
            ..self.clone()
        }
    }

    /// The name a row records as its author when the call names none: the agent's.
    pub fn author(&self) -> Option<&str> {
        self.agent.as_deref().map(|a| &*a.name)
    }
}
