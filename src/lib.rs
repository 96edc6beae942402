//! Cairn: a task-orchestrator MCP server with a persistent memory of the codebase.
//!
//! Reading order:
//! - [`error`]: the service's error, its envelope codes, and the conversions from the
//!   domain's and the store's errors.
//! - [`domain`]: plain types and their invariants (no SQL, no MCP), and the three pure
//!   cores, crates of their own under `crates/` (`cairn-owl`, `cairn-cypher`,
//!   `cairn-memory`), re-exported as `domain::ontology`, `ontology_query`, `memory`.
//! - [`store`]: SQLite or PostgreSQL through sqlx, migrations, the optimistic-locking helper.
//! - [`service`]: use cases; own transactions and workflow rules.
//! - [`mcp`]: tool schemas, argument validation, the envelope, the rmcp server.
//! - [`embed`]: text to vectors (the real model or the hashing fallback), cosine ranking.
//! - [`config`]: the config file and where the database and the model live.
//! - [`git`], [`lsp`]: adapters the `code` toolset reads the repository through (and
//!   the `ontology` toolset reads branches and commits proposals through).
//! - [`github`]: the REST calls a proposal's pull request needs, through `curl`.
//! - [`repo_fs`]: the one place a path an agent gave becomes a file read or written in
//!   a user's repository.
//! - [`progress`]: the progress bar long commands draw on stderr.
//! - [`redact`]: passwords out of every printed URL, message and log line.
//! - [`web`]: `serve --http`: MCP over Streamable HTTP, the read-only page, the token.

#![deny(unsafe_code)]
// `error::Error` carries its typed `Details` and messages by value, so it is large; it
// is made only on the failure path, once per call, where its size costs nothing
// measurable, and boxing it would change every constructor and match in the crate.
#![allow(
    clippy::result_large_err,
    reason = "the error is the cold path; see the comment above"
)]

pub mod cli;
pub mod config;
pub mod domain;
pub mod embed;
pub mod error;
pub mod git;
pub mod github;
pub mod lsp;
pub mod mcp;
pub mod progress;
pub mod redact;
pub mod repo_fs;
pub mod service;
pub mod store;
pub mod web;
