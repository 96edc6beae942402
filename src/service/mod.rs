//! Use cases: each public function opens its own transaction (`BEGIN IMMEDIATE` for
//! writes), applies the workflow and validation rules, and commits. Nothing here knows
//! about MCP or JSON; callers get domain types back.

pub mod code;
pub mod containers;
pub mod dependencies;
pub mod sections;
pub mod tags;
pub mod templates;
pub mod workflow;

use crate::config::Config;
use crate::store::Store;

/// Everything a use case needs: the store and the configuration it started with.
#[derive(Clone)]
pub struct App {
    pub store: Store,
    pub config: std::sync::Arc<Config>,
    /// Language servers, started on first use and shared by every call.
    pub lsp: std::sync::Arc<crate::lsp::Pool>,
}

impl App {
    pub fn new(store: Store, config: Config) -> Self {
        let lsp = crate::lsp::Pool::new(config.lsp.clone(), config.lsp_timeout);
        App {
            store,
            config: std::sync::Arc::new(config),
            lsp: std::sync::Arc::new(lsp),
        }
    }
}
