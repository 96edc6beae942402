//! Imports from the stores users come to Cairn from, each run by `cairn import
//! --from SOURCE FILE` (README, "Importing from other stores"): `port` the
//! TypeScript task-orchestrator port's SQLite database, `memory_file` the MCP memory
//! server's `memory.json`. Each reads and checks the whole source before it writes,
//! then writes in one transaction: a malformed source, one past the limits below, or
//! one already imported leaves the database as it was.

pub mod memory_file;
pub mod port;

/// A source file past this size is refused before it is read.
pub const LIMIT_BYTES: u64 = 256 << 20;
/// Rows of one table (or records of a memory file) past this are refused.
pub const LIMIT_ROWS: i64 = 200_000;

/// What an import wrote, by kind, in the order written, and what it left out.
#[derive(Debug, Default)]
pub struct Counts {
    pub written: Vec<(&'static str, usize)>,
    pub notes: Vec<String>,
}

impl Counts {
    pub(crate) fn add(&mut self, what: &'static str, n: usize) {
        self.written.push((what, n));
    }
}
