//! One integration-test binary (it builds once): every test drives the real `cairn`
//! binary over MCP (stdio or Streamable HTTP) with rmcp's client, on a real SQLite
//! file (or, with `$CAIRN_TEST_PG`, on a PostgreSQL database).

#[macro_use]
mod harness;

mod agents;
mod answers;
mod bad_input;
mod briefing;
mod budget;
mod cli;
mod code;
mod code_bulk;
mod code_lang;
mod code_validation;
mod composed_reads;
mod concurrency;
mod containers;
mod embed;
mod errors;
mod export_import;
mod file_modes;
mod find;
mod find_all;
mod full_disk;
mod graph;
mod graph_agent;
mod graph_search;
mod graph_update;
mod hostile;
mod http;
mod importers;
mod memory;
mod memory_input;
mod memory_recall;
mod memory_stored;
mod memory_surface;
mod ontology;
mod ontology_axioms;
mod ontology_changes;
mod ontology_fidelity;
mod ontology_roundtrip;
mod ontology_scale;
mod page;
mod page_escaping;
mod page_task;
mod pg_url;
mod project_memory;
mod project_names;
mod repo_guard;
mod resources;
mod retrieval;
mod sdk_output;
mod sections;
mod security;
mod semantic;
mod semantic_background;
mod semantic_heldout;
mod templates_tags;
mod tidy;
mod tools_meta;
mod workflow;
