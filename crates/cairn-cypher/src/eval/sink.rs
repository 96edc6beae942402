//! Projections: where the rows of one segment end (a WITH or the RETURN): items
//! evaluated into the row's slots, DISTINCT, grouping with its aggregates, ORDER BY
//! (keeping only the best rows under a LIMIT), SKIP and LIMIT; every row, key and
//! collected item kept is counted against the evaluation's memory budget.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};

use super::super::budget::footprint;
use super::super::error::QueryError;
use super::super::plan::{Agg, AggFunc, PExpr, PProjection};
use super::super::value::{total_order, Key, Value};
use super::{get, num, set, Exec, Flow, Row};

/// An aggregate's running state; `seen` filters repeats for DISTINCT.
struct Acc {
    seen: Option<BTreeSet<Key>>,
    state: AccState,
}

enum AccState {
    Count(i64),
    Collect(Vec<Value>),
    Min(Option<Value>),
    Max(Option<Value>),
    SumInt(i64),
    SumFloat(f64),
    Avg(f64, i64),
}

impl Acc {
    fn new(a: &Agg) -> Acc {
        Acc {
            seen: a.distinct.then(BTreeSet::new),
            state: match a.func {
                AggFunc::Count => AccState::Count(0),
                AggFunc::Collect => AccState::Collect(Vec::new()),
                AggFunc::Min => AccState::Min(None),
                AggFunc::Max => AccState::Max(None),
                AggFunc::Sum => AccState::SumInt(0),
                AggFunc::Avg => AccState::Avg(0.0, 0),
            },
        }
    }

    fn add(&mut self, ex: &Exec, a: &Agg, v: Value) -> Result<(), QueryError> {
        if a.arg.is_some() {
            if v.is_null() {
                return Ok(());
            }
            if let Some(seen) = &mut self.seen {
                if !seen.insert(Key(vec![v.clone()])) {
                    return Ok(());
                }
                ex.b.keep([&v], 0)?;
            }
        }
        let not_number = |v: &Value| {
            ex.err(
                a.at,
                format!("sum() and avg() take numbers, not a {}", v.type_name()),
            )
        };
        match &mut self.state {
            AccState::Count(n) => *n += 1,
            AccState::Collect(items) => {
                ex.b.keep([&v], 1)?;
                items.push(v)
            }
            AccState::Min(m) => {
                if m.as_ref()
                    .is_none_or(|cur| total_order(&v, cur) == Ordering::Less)
                {
                    *m = Some(v);
                }
            }
            AccState::Max(m) => {
                if m.as_ref()
                    .is_none_or(|cur| total_order(&v, cur) == Ordering::Greater)
                {
                    *m = Some(v);
                }
            }
            AccState::SumInt(s) => match v {
                Value::Int(i) => {
                    *s = s
                        .checked_add(i)
                        .ok_or_else(|| ex.err(a.at, "integer overflow"))?
                }
                Value::Float(x) => self.state = AccState::SumFloat(*s as f64 + x),
                other => return Err(not_number(&other)),
            },
            AccState::SumFloat(s) => match num(&v) {
                Some(x) => *s += x,
                None => return Err(not_number(&v)),
            },
            AccState::Avg(s, n) => match num(&v) {
                Some(x) => {
                    *s += x;
                    *n += 1;
                }
                None => return Err(not_number(&v)),
            },
        }
        Ok(())
    }

    fn finish(self) -> Value {
        match self.state {
            AccState::Count(n) => Value::Int(n),
            AccState::Collect(items) => Value::List(items),
            AccState::Min(m) | AccState::Max(m) => m.unwrap_or(Value::Null),
            AccState::SumInt(s) => Value::Int(s),
            AccState::SumFloat(s) => Value::Float(s),
            AccState::Avg(_, 0) => Value::Null,
            AccState::Avg(s, n) => Value::Float(s / n as f64),
        }
    }
}

/// Compares two rows' sort keys under ORDER BY's directions.
fn compare_keys(order: &[(PExpr, bool)], a: &[Value], b: &[Value]) -> Ordering {
    for ((x, y), (_, desc)) in a.iter().zip(b).zip(order) {
        let o = total_order(x, y);
        if o != Ordering::Equal {
            return if *desc { o.reverse() } else { o };
        }
    }
    Ordering::Equal
}

/// Where the rows of one segment end: a WITH or the RETURN.
pub(super) struct Sink<'p> {
    p: &'p PProjection,
    slots: usize,
    /// The caller's row cap, on the final projection.
    cap: Option<usize>,
    seen: BTreeSet<Key>,
    skipped: usize,
    /// Sort keys and projected rows.
    rows: Vec<(Vec<Value>, Row)>,
    groups: BTreeMap<Key, usize>,
    accs: Vec<(Vec<Value>, Vec<Acc>)>,
}

impl<'p> Sink<'p> {
    pub(super) fn new(p: &'p PProjection, cap: Option<usize>, slots: usize) -> Sink<'p> {
        Sink {
            p,
            slots,
            cap,
            seen: BTreeSet::new(),
            skipped: 0,
            rows: Vec::new(),
            groups: BTreeMap::new(),
            accs: Vec::new(),
        }
    }

    /// Rows pass straight through (no sorting, no grouping), so the flow can stop
    /// as soon as enough have arrived.
    fn streaming(&self) -> bool {
        self.p.aggs.is_empty() && self.p.order.is_empty()
    }

    /// How many rows a streaming projection needs: its LIMIT, or one past the
    /// caller's cap, so that a cut answer is known to be cut.
    fn wanted(&self) -> Option<usize> {
        let cap = self.cap.map(|c| c.saturating_add(1));
        match (self.p.limit, cap) {
            (Some(l), Some(c)) => Some(l.min(c)),
            (l, c) => l.or(c),
        }
    }

    /// With ORDER BY and a LIMIT (or the caller's cap), only the best
    /// `skip + limit` rows can be answered: the sink keeps just those, sorted.
    fn top_k(&self) -> Option<usize> {
        if self.p.order.is_empty() {
            return None;
        }
        let n = match (self.p.limit, self.cap.map(|c| c.saturating_add(1))) {
            (Some(l), Some(c)) => l.min(c),
            (Some(n), None) | (None, Some(n)) => n,
            (None, None) => return None,
        };
        Some(self.p.skip.saturating_add(n))
    }

    pub(super) fn push(&mut self, ex: &Exec, row: &mut Row) -> Result<Flow, QueryError> {
        ex.tick()?;
        if !self.p.aggs.is_empty() {
            return self.group(ex, row);
        }
        if self.streaming() && self.wanted().is_some_and(|w| self.rows.len() >= w) {
            return Ok(Flow::Stop);
        }
        // The items are written into the row's own (still unused) slots, so that
        // sort keys can read them and a row that is not kept costs no copy.
        for (e, slot) in &self.p.items {
            let v = ex.eval(e, row, &[])?;
            set(row, *slot, v);
        }
        let flow = self.accept(ex, row);
        for (_, slot) in &self.p.items {
            set(row, *slot, Value::Null);
        }
        flow
    }

    fn group(&mut self, ex: &Exec, row: &Row) -> Result<Flow, QueryError> {
        let keys = self
            .p
            .items
            .iter()
            .zip(&self.p.aggregating_items)
            .filter(|(_, agg)| !**agg)
            .map(|((e, _), _)| ex.eval(e, row, &[]))
            .collect::<Result<Vec<_>, _>>()?;
        let key = Key(keys);
        let i = match self.groups.get(&key) {
            Some(&i) => i,
            None => {
                // Kept twice: as the group's key and as its row's values.
                ex.b.keep(&key.0, 0)?;
                ex.b.keep(&key.0, 0)?;
                let i = self.accs.len();
                self.accs
                    .push((key.0.clone(), self.p.aggs.iter().map(Acc::new).collect()));
                self.groups.insert(key, i);
                i
            }
        };
        if let Some((_, accs)) = self.accs.get_mut(i) {
            for (a, acc) in self.p.aggs.iter().zip(accs.iter_mut()) {
                let v = match &a.arg {
                    Some(e) => ex.eval(e, row, &[])?,
                    None => Value::Null,
                };
                acc.add(ex, a, v)?;
            }
        }
        Ok(Flow::Go)
    }

    /// Keeps or drops a row whose items are in its slots.
    fn accept(&mut self, ex: &Exec, row: &Row) -> Result<Flow, QueryError> {
        if self.p.distinct {
            let key = Key(self
                .p
                .items
                .iter()
                .map(|(_, s)| get(row, *s).clone())
                .collect());
            let bytes = key.0.iter().map(|v| footprint(v).0).sum();
            if !self.seen.insert(key) {
                return Ok(Flow::Go);
            }
            ex.b.hold(bytes)?;
        }
        if self.streaming() {
            if self.skipped < self.p.skip {
                self.skipped += 1;
                return Ok(Flow::Go);
            }
            let out = self.output(row);
            ex.b.keep(&out, 0)?;
            self.rows.push((Vec::new(), out));
            return Ok(if self.wanted().is_some_and(|w| self.rows.len() >= w) {
                Flow::Stop
            } else {
                Flow::Go
            });
        }
        let keys = self
            .p
            .order
            .iter()
            .map(|(e, _)| ex.eval(e, row, &[]))
            .collect::<Result<Vec<_>, _>>()?;
        match self.top_k() {
            Some(k) => {
                let order = &self.p.order;
                if self.rows.len() >= k
                    && self.rows.last().is_none_or(|(worst, _)| {
                        compare_keys(order, &keys, worst) != Ordering::Less
                    })
                {
                    return Ok(Flow::Go);
                }
                // After every row that sorts equal, so ties keep match order.
                let at = self
                    .rows
                    .partition_point(|(k2, _)| compare_keys(order, k2, &keys) != Ordering::Greater);
                let out = self.output(row);
                ex.b.keep(keys.iter().chain(&out), 0)?;
                self.rows.insert(at, (keys, out));
                for (keys, out) in self.rows.drain(k.min(self.rows.len())..) {
                    ex.b.release(keys.iter().chain(&out).map(|v| footprint(v).0).sum());
                }
            }
            None => {
                let out = self.output(row);
                ex.b.keep(keys.iter().chain(&out), 0)?;
                self.rows.push((keys, out));
            }
        }
        Ok(Flow::Go)
    }

    /// The row a projection passes on: the input with the items (when later
    /// clauses may still sort by the input), or the items alone.
    fn output(&self, row: &Row) -> Row {
        if self.p.keep_input {
            return row.clone();
        }
        let mut out = vec![Value::Null; self.slots];
        for (_, s) in &self.p.items {
            set(&mut out, *s, get(row, *s).clone());
        }
        out
    }

    pub(super) fn finish(mut self, ex: &Exec) -> Result<(Vec<Row>, bool), QueryError> {
        let streaming = self.streaming();
        if !self.p.aggs.is_empty() {
            // No rows and no grouping keys still make one row: count(*) is 0.
            if self.accs.is_empty() && self.p.aggregating_items.iter().all(|a| *a) {
                self.accs
                    .push((Vec::new(), self.p.aggs.iter().map(Acc::new).collect()));
            }
            let mut seen = BTreeSet::new();
            for (keys, accs) in std::mem::take(&mut self.accs) {
                ex.tick()?;
                let vals: Vec<Value> = accs.into_iter().map(Acc::finish).collect();
                let mut out = vec![Value::Null; self.slots];
                let mut keys = keys.into_iter();
                for ((e, slot), agg) in self.p.items.iter().zip(&self.p.aggregating_items) {
                    let v = if *agg {
                        ex.eval(e, &out, &vals)?
                    } else {
                        keys.next().unwrap_or(Value::Null)
                    };
                    set(&mut out, *slot, v);
                }
                if self.p.distinct {
                    let key = Key(self
                        .p
                        .items
                        .iter()
                        .map(|(_, s)| get(&out, *s).clone())
                        .collect());
                    if !seen.insert(key) {
                        continue;
                    }
                }
                let order = self
                    .p
                    .order
                    .iter()
                    .map(|(e, _)| ex.eval(e, &out, &[]))
                    .collect::<Result<Vec<_>, _>>()?;
                self.rows.push((order, out));
            }
        }
        let mut rows = self.rows;
        if !self.p.order.is_empty() {
            // Stable, so ties keep the order rows were matched in.
            let order = &self.p.order;
            rows.sort_by(|(a, _), (b, _)| compare_keys(order, a, b));
        }
        if !streaming {
            let skip = self.p.skip.min(rows.len());
            rows.drain(..skip);
        }
        if let Some(l) = self.p.limit {
            rows.truncate(l);
        }
        let mut truncated = false;
        if let Some(c) = self.cap {
            if rows.len() > c {
                rows.truncate(c);
                truncated = true;
            }
        }
        Ok((rows.into_iter().map(|(_, r)| r).collect(), truncated))
    }
}
