//! Use cases: each public function opens its own transaction (`BEGIN IMMEDIATE` for
//! writes), applies the workflow and validation rules, and commits. Nothing here knows
//! about MCP or JSON; callers get domain types back.

pub mod containers;
pub mod context;
pub mod dependencies;
pub mod graph;
pub mod sections;
pub mod tags;
pub mod templates;
pub mod workflow;

use crate::config::Config;
use crate::store::Store;

/// Everything a use case needs: the store, the configuration it started with, and
/// the per-process cache of compiled graph snapshots.
#[derive(Clone)]
pub struct App {
    pub store: Store,
    pub config: std::sync::Arc<Config>,
    pub graph: std::sync::Arc<context::GraphCache>,
}

impl App {
    pub fn new(store: Store, config: Config) -> Self {
        App {
            store,
            config: std::sync::Arc::new(config),
            graph: Default::default(),
        }
    }
}
