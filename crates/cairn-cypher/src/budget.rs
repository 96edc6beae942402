//! What one evaluation may spend, checked while it runs: bindings made (each node,
//! relationship, unwound item and row counts one), the deadline, and memory. Memory
//! is counted in bytes, as [`footprint`] measures a value: every list, map or string
//! an expression builds must fit the budget by itself, and the rows a projection
//! keeps (with their DISTINCT and grouping keys and the lists `collect` grows) must
//! fit it together. The clock is read every 1,024 bindings and after every 1 MiB of
//! values built, copied or compared, so time spent inside one expression (a string
//! doubled clause after clause) is seen too. Values nest at most [`MAX_VALUE_DEPTH`]
//! deep: copying, comparing and answering a value recurses once per level.
//!
//! Knows nothing of plans or graphs: the evaluator calls it.

use std::cell::Cell;
use std::time::Instant;

use super::error::{ErrorKind, QueryError};
use super::value::Value;

/// How deep a list or map may nest in a value a query builds.
pub(crate) const MAX_VALUE_DEPTH: usize = 32;

/// Bytes of values built, copied or compared between two looks at the clock.
const WORK_PER_CHECK: u64 = 1 << 20;

/// Bindings between two looks at the clock.
const BINDINGS_PER_CHECK: u64 = 1024;

/// The bytes a value holds, as the budget counts them (the value itself, the text of
/// its strings and keys, its items), and how deep it nests (1 for a scalar). A loop
/// over an explicit stack: the measure must not itself recurse.
pub(crate) fn footprint(v: &Value) -> (u64, usize) {
    const SLOT: u64 = std::mem::size_of::<Value>() as u64;
    let (mut bytes, mut depth) = (0u64, 0usize);
    let mut stack: Vec<(&Value, usize)> = vec![(v, 1)];
    while let Some((v, d)) = stack.pop() {
        bytes = bytes.saturating_add(SLOT);
        depth = depth.max(d);
        match v {
            Value::String(s) => bytes = bytes.saturating_add(s.len() as u64),
            Value::List(items) => stack.extend(items.iter().map(|i| (i, d + 1))),
            Value::Map(m) => {
                for (k, x) in m {
                    // A key's text and its share of the tree's nodes.
                    bytes = bytes.saturating_add(k.len() as u64 + 2 * SLOT);
                    stack.push((x, d + 1));
                }
            }
            _ => {}
        }
    }
    (bytes, depth)
}

/// What reading a value costs in work: its text or its items, not looked into.
pub(crate) fn weight(v: &Value) -> u64 {
    match v {
        Value::String(s) => s.len() as u64,
        Value::List(items) => 32 * items.len() as u64,
        Value::Map(m) => 64 * m.len() as u64,
        _ => 0,
    }
}

/// The limits of one evaluation and what it has spent so far.
pub(crate) struct Budget<'a> {
    max_bindings: u64,
    max_bytes: u64,
    deadline: Option<Instant>,
    /// The query text errors are about.
    src: &'a str,
    bindings: Cell<u64>,
    /// Bytes held by the rows of the projection being filled and its input.
    held: Cell<u64>,
    /// Bytes of work since the clock was last read.
    work: Cell<u64>,
}

impl<'a> Budget<'a> {
    pub fn new(
        max_bindings: u64,
        max_bytes: u64,
        deadline: Option<Instant>,
        src: &'a str,
    ) -> Budget<'a> {
        Budget {
            max_bindings,
            max_bytes,
            deadline,
            src,
            bindings: Cell::new(0),
            held: Cell::new(0),
            work: Cell::new(0),
        }
    }

    pub fn check_deadline(&self) -> Result<(), QueryError> {
        match self.deadline {
            Some(d) if Instant::now() >= d => Err(QueryError::new(
                ErrorKind::Deadline,
                "the query ran past its time limit; narrow it with labels, relationship types, a WHERE or a LIMIT",
            )
            .about(self.src)),
            _ => Ok(()),
        }
    }

    /// Counts one binding; fails past the budget, and reads the clock every 1,024.
    pub fn tick(&self) -> Result<(), QueryError> {
        let s = self.bindings.get() + 1;
        self.bindings.set(s);
        if s > self.max_bindings {
            return Err(QueryError::new(
                ErrorKind::BindingLimit,
                format!(
                    "the query made more than {} intermediate bindings; narrow it with labels, relationship types, a WHERE or a shorter variable-length relationship",
                    self.max_bindings
                ),
            )
            .about(self.src));
        }
        if s.is_multiple_of(BINDINGS_PER_CHECK) {
            self.check_deadline()?;
        }
        Ok(())
    }

    /// Counts `bytes` of work (built, copied or compared), reading the clock after
    /// every [`WORK_PER_CHECK`].
    pub fn work(&self, bytes: u64) -> Result<(), QueryError> {
        let w = self.work.get().saturating_add(bytes);
        if w >= WORK_PER_CHECK {
            self.work.set(0);
            return self.check_deadline();
        }
        self.work.set(w);
        Ok(())
    }

    fn too_big(&self) -> QueryError {
        QueryError::new(
            ErrorKind::MemoryLimit,
            format!(
                "the query's values (strings, lists and the rows it keeps) grew past its memory budget of {} bytes; narrow it with a WHERE or a LIMIT, or build smaller values",
                self.max_bytes
            ),
        )
        .about(self.src)
    }

    /// A value an expression built, once it is known to fit: no larger than the
    /// whole budget and nested no deeper than [`MAX_VALUE_DEPTH`].
    pub fn built(&self, v: Value) -> Result<Value, QueryError> {
        let (bytes, depth) = footprint(&v);
        if depth > MAX_VALUE_DEPTH {
            return Err(QueryError::new(
                ErrorKind::MemoryLimit,
                format!("a list or map nested more than {MAX_VALUE_DEPTH} levels deep"),
            )
            .about(self.src));
        }
        if bytes > self.max_bytes {
            return Err(self.too_big());
        }
        self.work(bytes)?;
        Ok(v)
    }

    /// Counts the values a projection keeps (a row, a key, an item `collect`
    /// appends `nest` levels down) against the budget; answers the bytes counted,
    /// for [`Budget::release`] when they are dropped.
    pub fn keep<'v>(
        &self,
        values: impl IntoIterator<Item = &'v Value>,
        nest: usize,
    ) -> Result<u64, QueryError> {
        let mut bytes = 0u64;
        for v in values {
            let (b, depth) = footprint(v);
            if depth + nest > MAX_VALUE_DEPTH {
                return Err(QueryError::new(
                    ErrorKind::MemoryLimit,
                    format!("a list or map nested more than {MAX_VALUE_DEPTH} levels deep"),
                )
                .about(self.src));
            }
            bytes = bytes.saturating_add(b);
        }
        self.hold(bytes)?;
        Ok(bytes)
    }

    /// Counts `bytes` as kept by a projection; fails past the budget.
    pub fn hold(&self, bytes: u64) -> Result<(), QueryError> {
        let h = self.held.get().saturating_add(bytes);
        self.held.set(h);
        if h > self.max_bytes {
            return Err(self.too_big());
        }
        self.work(bytes)
    }

    /// Bytes a projection kept and then dropped.
    pub fn release(&self, bytes: u64) {
        self.held.set(self.held.get().saturating_sub(bytes));
    }

    /// What is held now.
    pub fn held(&self) -> u64 {
        self.held.get()
    }

    /// Starts a projection whose input rows hold `bytes`: what earlier projections
    /// kept beyond them has been dropped.
    pub fn start_segment(&self, bytes: u64) {
        self.held.set(bytes);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footprints_count_text_items_and_depth() {
        let slot = std::mem::size_of::<Value>() as u64;
        assert_eq!(footprint(&Value::Int(1)), (slot, 1));
        assert_eq!(footprint(&Value::from("abcd")), (slot + 4, 1));
        let l = Value::List(vec![Value::from("ab"), Value::List(vec![Value::Null])]);
        assert_eq!(footprint(&l), (4 * slot + 2, 3));
        // A value nested far deeper than any query may build is measured without
        // recursion (and dropped by a loop here, so the test itself stays shallow).
        let mut v = Value::Null;
        for _ in 0..100_000 {
            v = Value::List(vec![v]);
        }
        assert_eq!(footprint(&v).1, 100_001);
        let mut v = Some(v);
        while let Some(Value::List(mut items)) = v.take() {
            v = items.pop();
        }
    }

    #[test]
    fn the_budget_refuses_values_and_rows_past_it() {
        let b = Budget::new(10, 1000, None, "q");
        assert!(b.built(Value::from("x".repeat(100))).is_ok());
        let e = b.built(Value::from("x".repeat(2000))).unwrap_err();
        assert_eq!(e.kind, ErrorKind::MemoryLimit);
        assert!(e.message.contains("1000 bytes"), "{e}");
        b.hold(900).unwrap();
        b.release(500);
        b.hold(500).unwrap();
        assert_eq!(b.hold(200).unwrap_err().kind, ErrorKind::MemoryLimit);
        let mut deep = Value::Null;
        for _ in 0..=MAX_VALUE_DEPTH {
            deep = Value::List(vec![deep]);
        }
        assert!(b.built(deep).unwrap_err().message.contains("nested"));
        for _ in 0..10 {
            b.tick().unwrap();
        }
        assert_eq!(b.tick().unwrap_err().kind, ErrorKind::BindingLimit);
    }
}
