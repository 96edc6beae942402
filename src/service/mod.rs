//! Use cases: each public function opens its own transaction (`BEGIN IMMEDIATE` for
//! writes), applies the workflow and validation rules, and commits. Nothing here knows
//! about MCP or JSON; callers get domain types back.

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
}

impl App {
    pub fn new(store: Store, config: Config) -> Self {
        App {
            store,
            config: std::sync::Arc::new(config),
        }
    }
}
