//! One integration-test binary (it builds once): every test drives the real `cairn`
//! binary over MCP stdio with rmcp's client, on a real SQLite file.

mod harness;

mod bad_input;
mod cli;
mod code;
mod concurrency;
mod containers;
mod embed;
mod graph;
mod memory;
mod security;
mod sections;
mod semantic;
mod templates_tags;
mod tools_meta;
mod workflow;
