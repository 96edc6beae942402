//! A project's code entities and their edges, held in memory per project generation
//! (the semantic layer's cache keeps them; `query` walks them). Types only: loading
//! lives with `query`, so this module and `semantic` depend on nothing of each other.

use std::collections::HashMap;

use crate::domain::code::Entity;

/// A reference as a node shows it.
#[derive(Debug, Clone)]
pub struct RefSummary {
    pub id: String,
    pub document_path: String,
    pub start_line: i64,
    pub end_line: i64,
    pub description: String,
    /// The file's blob when the lines were recorded, to follow them to where they are.
    pub blob_sha: String,
}

/// One directed edge of the project graph, stored once.
#[derive(Debug, Clone)]
pub struct GEdge {
    pub from: usize,
    pub to: usize,
    pub kind: String,
    pub note: Option<String>,
}

/// A project's entities and edges in memory.
pub struct Graph {
    pub generation: i64,
    pub entities: Vec<Entity>,
    pub refs: Vec<Vec<RefSummary>>,
    pub edges: Vec<GEdge>,
    /// Per entity: indices into `edges` touching it.
    pub adj: Vec<Vec<usize>>,
    pub by_id: HashMap<String, usize>,
}
