//! Cairn: a task-orchestrator MCP server with a persistent memory of the codebase.
//!
//! Reading order:
//! - [`error`]: the one error vocabulary and its envelope codes.
//! - [`domain`]: plain types and their invariants (no SQL, no MCP).
//! - [`store`]: SQLite through sqlx, migrations, the optimistic-locking helper.
//! - [`service`]: use cases; own transactions and workflow rules.
//! - [`mcp`]: tool schemas, argument validation, the envelope, the rmcp server.
//! - [`config`]: the config file and where the database lives.
//! - [`git`], [`lsp`]: adapters the `code` toolset reads the repository through.

pub mod config;
pub mod domain;
pub mod error;
pub mod git;
pub mod lsp;
pub mod mcp;
pub mod service;
pub mod store;
