//! A validated, read-only subset of openCypher over an in-memory property graph,
//! and the bounded neighbourhood traversal `ontology_traverse` answers with. A pure
//! core: the caller hands it text, a graph and a schema, and gets rows or an error
//! with positions. It knows no SQL, no MCP, no files, no clock but the deadline it
//! is given, and nothing of ontologies: the mapping below is the caller's.
//!
//! # The graph an agent queries
//! The ontology is served as a property graph, built by the caller:
//! - every class is a node labelled `OwlClass`, its own IRI (`ai:VisionTransformer`)
//!   and the IRI of every superclass, asserted and inferred, so that
//!   ``MATCH (n:`ai:Transformer`)`` finds every class it subsumes. Individuals are
//!   labelled `Individual` and their types' IRIs; object properties `ObjectProperty`;
//! - relationships: `SUBCLASS_OF` (direct, with a boolean `inferred`), `INSTANCE_OF`,
//!   and one type per object property, its local name in UPPER_SNAKE (`hasPart` →
//!   `HAS_PART`), for a class page's existential restrictions and for property
//!   assertions between individuals;
//! - node properties: iri, termId, preferredTerm, domain, status, definition,
//!   qualityScore, authorityScore, maturity, physicality, role, altTerms (a list),
//!   lastUpdated.
//!
//! The engine works on any [`PropertyGraph`]; validation uses a [`Schema`] of known
//! labels, relationship types and property keys, which the caller builds or derives
//! ([`Schema::from_graph`]). A schema's aliases let another spelling stand for a
//! name: [`Schema::alias_local_names`] makes `VisionTransformer` stand for
//! `ai:VisionTransformer` when no other domain has that local name; when several do,
//! the query is refused with all of them listed. `(n:ai:VisionTransformer)` written
//! without backticks (two labels to the parser) is read as the one IRI when `ai` is
//! no label.
//!
//! # The subset
//! MATCH and OPTIONAL MATCH (comma-separated paths, several clauses), node patterns
//! with variable, labels (`:A:B`, `:A|B`, `:!A`, `:%`), property map and inline
//! WHERE; relationship patterns with variable, types (`:A|B`), direction (`->`, `<-`,
//! undirected) and variable length (`*`, `*2`, `*1..3`, `*0..`), capped at
//! [`Limits::max_hops`]; WHERE with AND, OR, XOR, NOT, comparisons, IS [NOT] NULL,
//! IN, STARTS WITH, ENDS WITH, CONTAINS, label tests (`n:Label`), arithmetic;
//! UNWIND; WITH (with WHERE); RETURN with expressions, aliases, `*`, DISTINCT,
//! ORDER BY (several keys, ASC/DESC), SKIP, LIMIT; the aggregates count(*),
//! count([DISTINCT] x), collect, min, max, sum, avg; and the functions labels, type,
//! id, size, toLower, toUpper, toString, coalesce, keys, properties, startNode,
//! endNode, head, last, exists.
//!
//! Refused as read-only: CREATE, MERGE, SET, DELETE, DETACH DELETE, REMOVE, CALL,
//! LOAD CSV, FOREACH, INSERT. Refused as not supported, with their position:
//! parameters (the tool carries no parameter map: write values into the query),
//! `=~` (no regular-expression engine is linked), UNION, path variables, shortest
//! paths, quantified path patterns, CASE, comprehensions, subqueries, pattern
//! predicates, indexing, EXPLAIN/PROFILE, nesting deeper than 100 levels.
//!
//! # Decisions
//! - Names are validated before anything runs. An unknown one is reported with its
//!   position, kind and nearest known names (first a name spelled the same
//!   but for case and `_`/`-`, then by a blend of Damerau–Levenshtein and
//!   Jaro–Winkler). When every unknown name has one clearly nearest name, the text
//!   is rewritten and validated again, up to [`Limits::max_repair`] rounds, and the
//!   repairs are reported; if any name is not clearly repairable, none is repaired
//!   and the error lists them all.
//! - Bounds: the row cap truncates (the answer says `truncated`, and is exact up to
//!   the cap, after ORDER BY); the binding budget, the memory budget and the
//!   deadline stop the query with an error naming the bound, because rows from half
//!   a match would mislead (a count would be wrong). They are checked while an
//!   expression runs, not only between rows (`budget`). Without ORDER BY, rows come
//!   in match order, which is deterministic.
//! - Depth: before the text reaches the parser, at most 4,096 tokens and brackets
//!   nested 100 deep (the parser's tree is built and dropped by recursion); while
//!   lowering, expressions nested 100 deep; values (lists in lists) 32 deep.
//! - Variable-length relationships use an edge at most once per MATCH clause, as
//!   Cypher does, so cycles end every walk.
//! - Planning is kept simple: a path starts from whichever end is cheaper (bound
//!   already, else the smaller label index, a property map counting as selective),
//!   each AND-ed WHERE condition is checked at the first node where its variables
//!   are bound, and ORDER BY under a LIMIT (or the row cap) keeps only the best
//!   rows as they come. There is no property index.
//! - DISTINCT and grouping tell an integer from the float of the same value; `=`
//!   does not. Column names are the alias, the variable, or the expression as
//!   written; `RETURN *` lists variables alphabetically.
//!
//! # The crate
//! `cairn-cypher` is one of Cairn's three pure cores (with `cairn-owl` and
//! `cairn-memory`): it depends on no other crate of Cairn (the `tidy` test in
//! `tests/it/tidy.rs` keeps it so), only on `open-cypher` for the parse and `strsim`
//! for the nearest names. Cairn re-exports it as `cairn::domain::ontology_query`.
//! Entry points: [`execute`] (text, a [`PropertyGraph`], a [`Schema`] and [`Limits`]
//! in; rows or a [`QueryError`] with positions out) and [`traverse`]. Its unit tests
//! run with `cargo test -p cairn-cypher`.

#![deny(unsafe_code)]

mod budget;
mod error;
mod eval;
mod graph;
mod lower;
mod model;
mod plan;
mod schema;
mod suggest;
mod traverse;
mod value;

#[cfg(test)]
mod tests;

use std::time::Instant;

pub use error::{ErrorDetails, ErrorKind, NameKind, NameProblem, Position, QueryError, Repair};
pub use graph::{EdgeId, GraphError, NodeId, PropertyGraph};
pub use schema::{Resolution, Schema};
pub use suggest::Nearest;
pub use traverse::{traverse, Reached, Subgraph, TraverseDirection, TraverseOptions};
pub use value::Value;

use plan::Failure;

/// Variable-length relationships never span more than this many hops, whatever
/// the caller asks: the walk recurses once per hop.
const HARD_MAX_HOPS: u32 = 64;

/// The bounds a query runs within.
#[derive(Clone, Debug)]
pub struct Limits {
    /// The most rows returned; more make the answer `truncated`.
    pub max_rows: usize,
    /// The most intermediate bindings (nodes and relationships bound while
    /// matching, rows collected) before the query stops with an error.
    pub max_bindings: u64,
    /// The memory budget in bytes: no value a query builds may be larger, and the
    /// rows (and keys, and collected lists) a projection keeps may not hold more
    /// together, before the query stops with an error.
    pub max_bytes: u64,
    /// The cap on a variable-length relationship's hops (at most 64).
    pub max_hops: u32,
    /// The longest query text accepted, in bytes.
    pub max_query_bytes: usize,
    /// Rounds of misspelling repair (`max_query_repair`, docs/ontology.md, queries).
    pub max_repair: usize,
    /// When to give up.
    pub deadline: Option<Instant>,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_rows: 1_000,
            max_bindings: 1_000_000,
            max_bytes: 64 << 20,
            max_hops: 10,
            max_query_bytes: 16 * 1024,
            max_repair: 3,
            deadline: None,
        }
    }
}

/// A query's answer.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryOutcome {
    /// Column names: aliases, variable names, or the expression as written.
    pub columns: Vec<String>,
    /// The rows, one value per column.
    pub rows: Vec<Vec<Value>>,
    /// True when there were more rows than `Limits::max_rows`.
    pub truncated: bool,
    /// Misspellings repaired before the query ran, in the order made.
    pub repairs: Vec<Repair>,
    /// Names read as other names (aliases) and bounds applied.
    pub notes: Vec<String>,
    /// The query as run, after repairs.
    pub query: String,
}

/// Parses, validates (repairing clear misspellings) and runs `text` over `graph`.
pub fn execute(
    graph: &PropertyGraph,
    schema: &Schema,
    text: &str,
    limits: &Limits,
) -> Result<QueryOutcome, QueryError> {
    let mut text = text.to_string();
    let mut repairs: Vec<Repair> = Vec::new();
    let mut rounds = 0;
    let max_hops = limits.max_hops.min(HARD_MAX_HOPS);
    loop {
        let with_repairs = |mut e: QueryError, repairs: Vec<Repair>| {
            e.details.repairs = repairs;
            e
        };
        let query = match lower::parse(&text, limits.max_query_bytes) {
            Ok(q) => q,
            Err(e) => return Err(with_repairs(e, repairs)),
        };
        let problems = match plan::plan(&query, schema, graph, max_hops) {
            Ok(p) => {
                let bounds = eval::Bounds {
                    max_rows: limits.max_rows,
                    max_bindings: limits.max_bindings,
                    max_bytes: limits.max_bytes,
                    deadline: limits.deadline,
                };
                let out = eval::run(&p, graph, &bounds, &text)
                    .map_err(|e| with_repairs(e, repairs.clone()))?;
                return Ok(QueryOutcome {
                    columns: p.columns,
                    rows: out.rows,
                    truncated: out.truncated,
                    repairs,
                    notes: p.notes,
                    query: text,
                });
            }
            Err(Failure::Error(e)) => return Err(with_repairs(e, repairs)),
            Err(Failure::Names(problems)) => problems,
        };
        if rounds < limits.max_repair && problems.iter().all(|p| p.repair.is_some()) {
            rounds += 1;
            text = repair(&text, &problems, &mut repairs);
            continue;
        }
        let first = problems
            .first()
            .map(ToString::to_string)
            .unwrap_or_default();
        let message = match problems.len() {
            0 | 1 => first,
            n => format!("{first} (and {} more unknown names)", n - 1),
        };
        let mut e = QueryError::new(ErrorKind::UnknownName, message).about(&text);
        e.position = problems.first().and_then(|p| p.position);
        e.details.problems = problems;
        e.details.repairs = repairs;
        return Err(e);
    }
}

/// `text` with every problem's span replaced by its repair, recorded in `repairs`.
fn repair(text: &str, problems: &[NameProblem], repairs: &mut Vec<Repair>) -> String {
    let mut edits: Vec<&NameProblem> = problems.iter().filter(|p| p.repair.is_some()).collect();
    edits.sort_by_key(|p| p.span.0);
    edits.dedup_by_key(|p| p.span.0);
    let mut out = String::with_capacity(text.len() + 16);
    let mut at = 0;
    for p in edits {
        let (Some(to), Some(before)) = (&p.repair, text.get(at..p.span.0)) else {
            continue;
        };
        out.push_str(before);
        out.push_str(&quote(to));
        at = p.span.1;
        repairs.push(Repair {
            kind: p.kind,
            from: p.name.clone(),
            to: to.clone(),
            position: p.position.unwrap_or_else(|| Position::at(text, p.span.0)),
        });
    }
    out.push_str(text.get(at..).unwrap_or(""));
    out
}

/// A name as the query text must spell it: bare when it is a plain identifier,
/// else in backticks (a backtick inside doubled).
fn quote(name: &str) -> String {
    let mut chars = name.chars();
    let plain = chars
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        name.to_string()
    } else {
        format!("`{}`", name.replace('`', "``"))
    }
}
