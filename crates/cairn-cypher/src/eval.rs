//! Evaluation of a plan against a property graph, read-only and bounded: rows flow
//! depth-first from MATCH to MATCH into each projection, which stops the flow once
//! it has the rows it needs (LIMIT, or the caller's row cap plus one to know the
//! answer was cut). Every binding made, every value built and every row kept counts
//! against the caller's [`Budget`] (bindings, memory, the deadline), checked as it
//! is spent. Knows nothing of text or schemas.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::time::Instant;

use super::budget::{weight, Budget};
use super::error::{ErrorKind, QueryError};
use super::graph::{EdgeId, NodeId, PropertyGraph};
use super::model::{BinaryOp, Direction};
use super::plan::{Func, PExpr, PLabels, PMatch, PNode, PPath, Plan, Read};
use super::value::{compare, equals, total_order, Value};

mod sink;
use sink::Sink;

/// The bounds an evaluation runs within.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Bounds {
    pub max_rows: usize,
    pub max_bindings: u64,
    pub max_bytes: u64,
    pub deadline: Option<Instant>,
}

/// The rows of the final projection, in column order.
pub(crate) struct Output {
    pub rows: Vec<Vec<Value>>,
    pub truncated: bool,
}

type Row = Vec<Value>;
type Emit<'e> = dyn FnMut(&mut Row) -> Result<Flow, QueryError> + 'e;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Flow {
    Go,
    Stop,
}

static NULL: Value = Value::Null;

fn get(row: &Row, slot: usize) -> &Value {
    row.get(slot).unwrap_or(&NULL)
}

fn set(row: &mut Row, slot: usize, v: Value) {
    if let Some(x) = row.get_mut(slot) {
        *x = v;
    }
}

/// Runs `plan` over `graph`; `source` is the query text errors point into.
pub(crate) fn run(
    plan: &Plan,
    graph: &PropertyGraph,
    bounds: &Bounds,
    source: &str,
) -> Result<Output, QueryError> {
    let ex = Exec {
        g: graph,
        src: source,
        b: Budget::new(
            bounds.max_bindings,
            bounds.max_bytes,
            bounds.deadline,
            source,
        ),
    };
    ex.b.check_deadline()?;
    let mut rows: Vec<Row> = vec![vec![Value::Null; plan.slots]];
    let mut truncated = false;
    let mut input = 0;
    let last = plan.segments.len().saturating_sub(1);
    for (i, seg) in plan.segments.iter().enumerate() {
        let cap = (i == last).then_some(bounds.max_rows);
        let mut sink = Sink::new(&seg.projection, cap, plan.slots);
        // The rows this projection reads are held until it has run; what it keeps
        // comes on top, and becomes the next one's input.
        ex.b.start_segment(input);
        for mut row in rows {
            if ex.drive(&seg.reads, 0, &mut row, &mut sink)? == Flow::Stop {
                break;
            }
        }
        let (out, cut) = sink.finish(&ex)?;
        input = ex.b.held().saturating_sub(input);
        rows = out;
        truncated = cut;
    }
    let slots: Vec<usize> = plan
        .segments
        .last()
        .map(|s| s.projection.items.iter().map(|(_, slot)| *slot).collect())
        .unwrap_or_default();
    let rows = rows
        .into_iter()
        .map(|r| slots.iter().map(|&s| get(&r, s).clone()).collect())
        .collect();
    Ok(Output { rows, truncated })
}

struct Exec<'a> {
    g: &'a PropertyGraph,
    src: &'a str,
    b: Budget<'a>,
}

impl Exec<'_> {
    fn err(&self, at: usize, message: impl Into<String>) -> QueryError {
        QueryError::at(ErrorKind::Evaluation, message, self.src, at)
    }

    fn tick(&self) -> Result<(), QueryError> {
        self.b.tick()
    }

    /// A copy of a value the row or the graph holds, its size counted as work.
    fn copied(&self, v: &Value) -> Result<Value, QueryError> {
        self.b.work(weight(v))?;
        Ok(v.clone())
    }

    // ---- the flow of rows ----

    fn drive(
        &self,
        reads: &[Read],
        i: usize,
        row: &mut Row,
        sink: &mut Sink,
    ) -> Result<Flow, QueryError> {
        let Some(read) = reads.get(i) else {
            return sink.push(self, row);
        };
        match read {
            Read::Filter(e) => {
                if self.truthy(e, row)? {
                    self.drive(reads, i + 1, row, sink)
                } else {
                    Ok(Flow::Go)
                }
            }
            Read::Unwind { expr, slot } => {
                let items = match self.eval(expr, row, &[])? {
                    Value::List(items) => items,
                    Value::Null => Vec::new(),
                    other => vec![other],
                };
                let mut flow = Flow::Go;
                for item in items {
                    self.tick()?;
                    set(row, *slot, item);
                    flow = self.drive(reads, i + 1, row, sink)?;
                    if flow == Flow::Stop {
                        break;
                    }
                }
                set(row, *slot, Value::Null);
                Ok(flow)
            }
            Read::Match(m) => {
                let mut found = false;
                let mut used = Vec::new();
                let flow = {
                    let mut emit = |r: &mut Row| -> Result<Flow, QueryError> {
                        found = true;
                        self.drive(reads, i + 1, r, sink)
                    };
                    self.match_paths(m, 0, row, &mut used, &mut emit)?
                };
                if flow == Flow::Go && m.optional && !found {
                    // The row survives with this clause's variables null, which
                    // they still are: every binding was undone on the way back.
                    return self.drive(reads, i + 1, row, sink);
                }
                Ok(flow)
            }
        }
    }

    // ---- pattern matching ----

    fn match_paths(
        &self,
        m: &PMatch,
        pi: usize,
        row: &mut Row,
        used: &mut Vec<EdgeId>,
        emit: &mut Emit,
    ) -> Result<Flow, QueryError> {
        let Some(path) = m.paths.get(pi) else {
            if let Some(p) = &m.predicate {
                if !self.truthy(p, row)? {
                    return Ok(Flow::Go);
                }
            }
            return emit(row);
        };
        let Some(first) = path.nodes.first() else {
            return self.match_paths(m, pi + 1, row, used, emit);
        };
        match get(row, first.slot) {
            Value::Null if first.fresh => {
                match first.labels.as_ref().and_then(|l| self.index_for(l)) {
                    Some(candidates) => {
                        for &n in candidates {
                            if self.try_node(m, pi, path, 0, n, row, used, emit)? == Flow::Stop {
                                return Ok(Flow::Stop);
                            }
                        }
                    }
                    None => {
                        for n in self.g.node_ids() {
                            if self.try_node(m, pi, path, 0, n, row, used, emit)? == Flow::Stop {
                                return Ok(Flow::Stop);
                            }
                        }
                    }
                }
                Ok(Flow::Go)
            }
            Value::Node(n) => {
                let n = *n;
                self.try_node(m, pi, path, 0, n, row, used, emit)
            }
            _ => Ok(Flow::Go),
        }
    }

    /// The smallest label index that holds every candidate for a node pattern.
    fn index_for(&self, l: &PLabels) -> Option<&[NodeId]> {
        match l {
            PLabels::Id(None) => Some(&[]),
            PLabels::Id(Some(id)) => Some(self.g.nodes_with_label(*id)),
            PLabels::And(items) => items
                .iter()
                .filter_map(|i| self.index_for(i))
                .min_by_key(|s| s.len()),
            _ => None,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn try_node(
        &self,
        m: &PMatch,
        pi: usize,
        path: &PPath,
        k: usize,
        n: NodeId,
        row: &mut Row,
        used: &mut Vec<EdgeId>,
        emit: &mut Emit,
    ) -> Result<Flow, QueryError> {
        let Some(pn) = path.nodes.get(k) else {
            return Ok(Flow::Go);
        };
        self.tick()?;
        let bound = match get(row, pn.slot) {
            Value::Null if pn.fresh => false,
            Value::Node(x) if *x == n => true,
            _ => return Ok(Flow::Go),
        };
        // A start node drawn from the index of its one label has that label.
        let from_index = k == 0 && !bound && matches!(pn.labels, Some(PLabels::Id(Some(_))));
        if !self.node_fits(pn, n, row, from_index)? {
            return Ok(Flow::Go);
        }
        if !bound {
            set(row, pn.slot, Value::Node(n));
        }
        let pass = match &pn.predicate {
            Some(p) => self.truthy(p, row)?,
            None => true,
        };
        let flow = if !pass {
            Flow::Go
        } else if k == path.rels.len() {
            self.match_paths(m, pi + 1, row, used, emit)?
        } else {
            self.expand(m, pi, path, k, n, row, used, emit)?
        };
        if !bound {
            set(row, pn.slot, Value::Null);
        }
        Ok(flow)
    }

    fn node_fits(
        &self,
        pn: &PNode,
        n: NodeId,
        row: &Row,
        labels_known: bool,
    ) -> Result<bool, QueryError> {
        if let (Some(l), false) = (&pn.labels, labels_known) {
            if !self.node_has(n, l) {
                return Ok(false);
            }
        }
        for (key, e) in &pn.props {
            let want = self.operand(e, row, &[])?;
            let have = key
                .and_then(|k| self.g.node_property_id(n, k))
                .unwrap_or(&NULL);
            if equals(have, &want) != Some(true) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    fn edge_fits(
        &self,
        e: EdgeId,
        types: Option<&PLabels>,
        props: &[(Option<u32>, PExpr)],
        row: &Row,
    ) -> Result<bool, QueryError> {
        if let Some(t) = types {
            if !self.edge_has(e, t) {
                return Ok(false);
            }
        }
        for (key, x) in props {
            let want = self.operand(x, row, &[])?;
            let have = key
                .and_then(|k| self.g.edge_property_id(e, k))
                .unwrap_or(&NULL);
            if equals(have, &want) != Some(true) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// The edges at `n` a pattern of direction `d` may follow, with the node at
    /// their other end. An undirected pattern sees a self-loop once.
    fn adjacent(&self, n: NodeId, d: Direction) -> impl Iterator<Item = (EdgeId, NodeId)> + '_ {
        let out = if d == Direction::Left {
            &[][..]
        } else {
            self.g.out_edges(n)
        };
        let inc = if d == Direction::Right {
            &[][..]
        } else {
            self.g.in_edges(n)
        };
        let either = d == Direction::Either;
        out.iter()
            .filter_map(move |&e| self.g.endpoints(e).map(|(_, to)| (e, to)))
            .chain(inc.iter().filter_map(move |&e| {
                let (from, to) = self.g.endpoints(e)?;
                (!(either && from == to)).then_some((e, from))
            }))
    }

    #[allow(clippy::too_many_arguments)]
    fn expand(
        &self,
        m: &PMatch,
        pi: usize,
        path: &PPath,
        k: usize,
        from: NodeId,
        row: &mut Row,
        used: &mut Vec<EdgeId>,
        emit: &mut Emit,
    ) -> Result<Flow, QueryError> {
        let Some(rel) = path.rels.get(k) else {
            return Ok(Flow::Go);
        };
        if let Some((min, max)) = rel.length {
            let mut trail = Vec::new();
            let hops = Hops {
                m,
                pi,
                path,
                k,
                min,
                max,
            };
            return self.var_length(&hops, from, &mut trail, row, used, emit);
        }
        for (e, other) in self.adjacent(from, rel.direction) {
            // An edge is used at most once per MATCH, as Cypher has it.
            if used.contains(&e) || !self.edge_fits(e, rel.types.as_ref(), &rel.props, row)? {
                continue;
            }
            let bound = match get(row, rel.slot) {
                Value::Null if rel.fresh => false,
                Value::Relationship(x) if *x == e => true,
                _ => continue,
            };
            self.tick()?;
            if !bound {
                set(row, rel.slot, Value::Relationship(e));
            }
            used.push(e);
            let pass = match &rel.predicate {
                Some(p) => self.truthy(p, row)?,
                None => true,
            };
            let flow = if pass {
                self.try_node(m, pi, path, k + 1, other, row, used, emit)?
            } else {
                Flow::Go
            };
            used.pop();
            if !bound {
                set(row, rel.slot, Value::Null);
            }
            if flow == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        Ok(Flow::Go)
    }

    /// Walks every trail of `min..=max` hops from `node`, never reusing an edge,
    /// so that cycles end the walk instead of looping.
    fn var_length(
        &self,
        h: &Hops,
        node: NodeId,
        trail: &mut Vec<EdgeId>,
        row: &mut Row,
        used: &mut Vec<EdgeId>,
        emit: &mut Emit,
    ) -> Result<Flow, QueryError> {
        let Some(rel) = h.path.rels.get(h.k) else {
            return Ok(Flow::Go);
        };
        self.tick()?;
        let depth = u32::try_from(trail.len()).unwrap_or(u32::MAX);
        if depth >= h.min {
            let list = Value::List(trail.iter().map(|e| Value::Relationship(*e)).collect());
            let flow = match get(row, rel.slot) {
                Value::Null if rel.fresh => {
                    set(row, rel.slot, list);
                    let f = self.try_node(h.m, h.pi, h.path, h.k + 1, node, row, used, emit)?;
                    set(row, rel.slot, Value::Null);
                    f
                }
                v if total_order(v, &list) == Ordering::Equal => {
                    self.try_node(h.m, h.pi, h.path, h.k + 1, node, row, used, emit)?
                }
                _ => Flow::Go,
            };
            if flow == Flow::Stop {
                return Ok(Flow::Stop);
            }
        }
        if depth < h.max {
            for (e, other) in self.adjacent(node, rel.direction) {
                if used.contains(&e) || !self.edge_fits(e, rel.types.as_ref(), &rel.props, row)? {
                    continue;
                }
                used.push(e);
                trail.push(e);
                let flow = self.var_length(h, other, trail, row, used, emit)?;
                trail.pop();
                used.pop();
                if flow == Flow::Stop {
                    return Ok(Flow::Stop);
                }
            }
        }
        Ok(Flow::Go)
    }

    fn node_has(&self, n: NodeId, l: &PLabels) -> bool {
        match l {
            PLabels::Id(Some(id)) => self.g.has_label_id(n, *id),
            PLabels::Id(None) => false,
            PLabels::And(items) => items.iter().all(|i| self.node_has(n, i)),
            PLabels::Or(items) => items.iter().any(|i| self.node_has(n, i)),
            PLabels::Not(inner) => !self.node_has(n, inner),
            PLabels::Any => !self.g.node_label_ids(n).is_empty(),
        }
    }

    fn edge_has(&self, e: EdgeId, l: &PLabels) -> bool {
        match l {
            PLabels::Id(Some(id)) => self.g.edge_type_id(e) == Some(*id),
            PLabels::Id(None) => false,
            PLabels::And(items) => items.iter().all(|i| self.edge_has(e, i)),
            PLabels::Or(items) => items.iter().any(|i| self.edge_has(e, i)),
            PLabels::Not(inner) => !self.edge_has(e, inner),
            PLabels::Any => true,
        }
    }

    // ---- expressions ----

    fn truthy(&self, e: &PExpr, row: &Row) -> Result<bool, QueryError> {
        match self.eval(e, row, &[])? {
            Value::Bool(b) => Ok(b),
            Value::Null => Ok(false),
            other => Err(self.err(
                at_of(e),
                format!(
                    "a condition must be true, false or null, not a {}",
                    other.type_name()
                ),
            )),
        }
    }

    fn logic(&self, v: Value, op: &str, at: usize) -> Result<Option<bool>, QueryError> {
        match v {
            Value::Bool(b) => Ok(Some(b)),
            Value::Null => Ok(None),
            other => Err(self.err(
                at,
                format!("{op} takes booleans, not a {}", other.type_name()),
            )),
        }
    }

    /// An operand of a comparison: borrowed when it is a constant, a variable or a
    /// property of a node or relationship, so that comparing copies nothing.
    fn operand<'a>(
        &'a self,
        e: &'a PExpr,
        row: &'a Row,
        aggs: &'a [Value],
    ) -> Result<Cow<'a, Value>, QueryError> {
        match e {
            PExpr::Const(v) => Ok(Cow::Borrowed(v)),
            PExpr::Slot(s) => Ok(Cow::Borrowed(get(row, *s))),
            PExpr::Prop { base, key, .. } => {
                let found = match &*self.operand(base, row, aggs)? {
                    Value::Node(n) => Some(key.and_then(|k| self.g.node_property_id(*n, k))),
                    Value::Relationship(r) => {
                        Some(key.and_then(|k| self.g.edge_property_id(*r, k)))
                    }
                    _ => None,
                };
                match found {
                    Some(v) => Ok(Cow::Borrowed(v.unwrap_or(&NULL))),
                    None => Ok(Cow::Owned(self.eval(e, row, aggs)?)),
                }
            }
            _ => Ok(Cow::Owned(self.eval(e, row, aggs)?)),
        }
    }

    fn eval(&self, e: &PExpr, row: &Row, aggs: &[Value]) -> Result<Value, QueryError> {
        Ok(match e {
            PExpr::Const(v) => v.clone(),
            PExpr::Slot(s) => self.copied(get(row, *s))?,
            PExpr::Agg(i) => self.copied(aggs.get(*i).unwrap_or(&NULL))?,
            PExpr::Prop {
                base,
                key,
                name,
                at,
            } => match self.eval(base, row, aggs)? {
                Value::Node(n) => self.copied(
                    key.and_then(|k| self.g.node_property_id(n, k))
                        .unwrap_or(&NULL),
                )?,
                Value::Relationship(r) => self.copied(
                    key.and_then(|k| self.g.edge_property_id(r, k))
                        .unwrap_or(&NULL),
                )?,
                Value::Map(mut m) => m.remove(name).unwrap_or(Value::Null),
                Value::Null => Value::Null,
                other => {
                    return Err(self.err(
                        *at,
                        format!("cannot read property `{name}` of a {}", other.type_name()),
                    ))
                }
            },
            PExpr::List(items) => self.b.built(Value::List(
                items
                    .iter()
                    .map(|i| self.eval(i, row, aggs))
                    .collect::<Result<_, _>>()?,
            ))?,
            PExpr::Map(entries) => self.b.built(Value::Map(
                entries
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), self.eval(v, row, aggs)?)))
                    .collect::<Result<BTreeMap<_, _>, QueryError>>()?,
            ))?,
            PExpr::Not(inner, at) => {
                let v = self.eval(inner, row, aggs)?;
                match self.logic(v, "NOT", *at)? {
                    Some(b) => Value::Bool(!b),
                    None => Value::Null,
                }
            }
            PExpr::Neg(inner, at) => match self.eval(inner, row, aggs)? {
                Value::Int(i) => Value::Int(
                    i.checked_neg()
                        .ok_or_else(|| self.err(*at, "integer overflow"))?,
                ),
                Value::Float(x) => Value::Float(-x),
                Value::Null => Value::Null,
                other => {
                    return Err(self.err(*at, format!("cannot negate a {}", other.type_name())))
                }
            },
            PExpr::IsNull(inner, negated) => {
                Value::Bool(self.eval(inner, row, aggs)?.is_null() != *negated)
            }
            PExpr::HasLabels(inner, labels, negated, at) => match self.eval(inner, row, aggs)? {
                Value::Node(n) => Value::Bool(self.node_has(n, labels) != *negated),
                Value::Relationship(r) => Value::Bool(self.edge_has(r, labels) != *negated),
                Value::Null => Value::Null,
                other => {
                    return Err(self.err(*at, format!("a {} has no labels", other.type_name())))
                }
            },
            PExpr::Binary(op, l, r, at) => self.binary(*op, l, r, row, aggs, *at)?,
            PExpr::Call(f, args, at) => self.call(*f, args, row, aggs, *at)?,
        })
    }

    fn binary(
        &self,
        op: BinaryOp,
        l: &PExpr,
        r: &PExpr,
        row: &Row,
        aggs: &[Value],
        at: usize,
    ) -> Result<Value, QueryError> {
        // AND and OR decide from their left side alone when they can.
        match op {
            BinaryOp::And | BinaryOp::Or | BinaryOp::Xor => {
                let lv = self.eval(l, row, aggs)?;
                let name = match op {
                    BinaryOp::And => "AND",
                    BinaryOp::Or => "OR",
                    _ => "XOR",
                };
                let a = self.logic(lv, name, at)?;
                if op == BinaryOp::And && a == Some(false) {
                    return Ok(Value::Bool(false));
                }
                if op == BinaryOp::Or && a == Some(true) {
                    return Ok(Value::Bool(true));
                }
                let b = self.logic(self.eval(r, row, aggs)?, name, at)?;
                let out = match (op, a, b) {
                    (BinaryOp::And, Some(true), x) | (BinaryOp::Or, Some(false), x) => x,
                    (BinaryOp::And, None, Some(false)) => Some(false),
                    (BinaryOp::Or, None, Some(true)) => Some(true),
                    (BinaryOp::Xor, Some(x), Some(y)) => Some(x != y),
                    _ => None,
                };
                return Ok(out.map_or(Value::Null, Value::Bool));
            }
            _ => {}
        }
        let arithmetic = matches!(
            op,
            BinaryOp::Add
                | BinaryOp::Sub
                | BinaryOp::Mul
                | BinaryOp::Div
                | BinaryOp::Rem
                | BinaryOp::Pow
                | BinaryOp::Concat
        );
        if arithmetic {
            let lv = self.eval(l, row, aggs)?;
            let rv = self.eval(r, row, aggs)?;
            // Joined strings and lists are the values a query can grow.
            return match self.arith(op, lv, rv, at)? {
                v @ (Value::String(_) | Value::List(_)) => self.b.built(v),
                v => Ok(v),
            };
        }
        let lv = self.operand(l, row, aggs)?;
        let rv = self.operand(r, row, aggs)?;
        let (lv, rv) = (&*lv, &*rv);
        self.b.work(weight(lv).saturating_add(weight(rv)))?;
        let ordered =
            |f: fn(Ordering) -> bool| compare(lv, rv).map_or(Value::Null, |o| Value::Bool(f(o)));
        Ok(match op {
            BinaryOp::Eq => equals(lv, rv).map_or(Value::Null, Value::Bool),
            BinaryOp::Ne => equals(lv, rv).map_or(Value::Null, |b| Value::Bool(!b)),
            BinaryOp::Lt => ordered(|o| o == Ordering::Less),
            BinaryOp::Le => ordered(|o| o != Ordering::Greater),
            BinaryOp::Gt => ordered(|o| o == Ordering::Greater),
            BinaryOp::Ge => ordered(|o| o != Ordering::Less),
            BinaryOp::In => match rv {
                Value::List(items) => {
                    let mut unknown = false;
                    for i in items {
                        match equals(lv, i) {
                            Some(true) => return Ok(Value::Bool(true)),
                            None => unknown = true,
                            Some(false) => {}
                        }
                    }
                    if unknown {
                        Value::Null
                    } else {
                        Value::Bool(false)
                    }
                }
                Value::Null => Value::Null,
                other => {
                    return Err(
                        self.err(at, format!("IN takes a list, not a {}", other.type_name()))
                    )
                }
            },
            BinaryOp::StartsWith | BinaryOp::EndsWith | BinaryOp::Contains => match (lv, rv) {
                (Value::String(a), Value::String(b)) => Value::Bool(match op {
                    BinaryOp::StartsWith => a.starts_with(b.as_str()),
                    BinaryOp::EndsWith => a.ends_with(b.as_str()),
                    _ => a.contains(b.as_str()),
                }),
                _ => Value::Null,
            },
            _ => Value::Null,
        })
    }

    fn arith(&self, op: BinaryOp, l: Value, r: Value, at: usize) -> Result<Value, QueryError> {
        let overflow = || self.err(at, "integer overflow");
        Ok(match (op, l, r) {
            (_, Value::Null, _) | (_, _, Value::Null) => Value::Null,
            (BinaryOp::Pow, a, b) => match (num(&a), num(&b)) {
                (Some(x), Some(y)) => Value::Float(x.powf(y)),
                _ => return Err(self.type_pair("^", &a, &b, at)),
            },
            (op, Value::Int(a), Value::Int(b)) => Value::Int(match op {
                BinaryOp::Add => a.checked_add(b).ok_or_else(overflow)?,
                BinaryOp::Sub => a.checked_sub(b).ok_or_else(overflow)?,
                BinaryOp::Mul => a.checked_mul(b).ok_or_else(overflow)?,
                BinaryOp::Div | BinaryOp::Rem if b == 0 => {
                    return Err(self.err(at, "division by zero"))
                }
                BinaryOp::Div => a.checked_div(b).ok_or_else(overflow)?,
                BinaryOp::Rem => a.checked_rem(b).ok_or_else(overflow)?,
                _ => return Err(self.type_pair("||", &Value::Int(a), &Value::Int(b), at)),
            }),
            (BinaryOp::Add | BinaryOp::Concat, Value::String(a), Value::String(b)) => {
                Value::String(a + &b)
            }
            (BinaryOp::Add | BinaryOp::Concat, Value::List(mut a), Value::List(b)) => {
                a.extend(b);
                Value::List(a)
            }
            (BinaryOp::Add, Value::List(mut a), b) => {
                a.push(b);
                Value::List(a)
            }
            (BinaryOp::Add, a, Value::List(b)) => {
                let mut out = vec![a];
                out.extend(b);
                Value::List(out)
            }
            (op, a, b) => match (num(&a), num(&b), op) {
                (Some(x), Some(y), BinaryOp::Add) => Value::Float(x + y),
                (Some(x), Some(y), BinaryOp::Sub) => Value::Float(x - y),
                (Some(x), Some(y), BinaryOp::Mul) => Value::Float(x * y),
                (Some(x), Some(y), BinaryOp::Div) => Value::Float(x / y),
                (Some(x), Some(y), BinaryOp::Rem) => Value::Float(x % y),
                _ => return Err(self.type_pair(op_name(op), &a, &b, at)),
            },
        })
    }

    fn type_pair(&self, op: &str, a: &Value, b: &Value, at: usize) -> QueryError {
        self.err(
            at,
            format!(
                "cannot apply {op} to a {} and a {}",
                a.type_name(),
                b.type_name()
            ),
        )
    }

    fn call(
        &self,
        f: Func,
        args: &[PExpr],
        row: &Row,
        aggs: &[Value],
        at: usize,
    ) -> Result<Value, QueryError> {
        if f == Func::Coalesce {
            for a in args {
                let v = self.eval(a, row, aggs)?;
                if !v.is_null() {
                    return Ok(v);
                }
            }
            return Ok(Value::Null);
        }
        let v = match args.first() {
            Some(a) => self.eval(a, row, aggs)?,
            None => Value::Null,
        };
        if f == Func::Exists {
            return Ok(Value::Bool(!v.is_null()));
        }
        if v.is_null() {
            return Ok(Value::Null);
        }
        // Functions read (and case functions copy) their argument once.
        self.b.work(weight(&v))?;
        let strings =
            |it: &mut dyn Iterator<Item = &str>| Value::List(it.map(Value::from).collect());
        Ok(match (f, v) {
            (Func::Labels, Value::Node(n)) => strings(&mut self.g.labels(n)),
            (Func::Type, Value::Relationship(r)) => Value::from(self.g.rel_type(r).unwrap_or("")),
            (Func::Id, Value::Node(n)) => Value::Int(i64::try_from(n.index()).unwrap_or(i64::MAX)),
            (Func::Id, Value::Relationship(r)) => {
                Value::Int(i64::try_from(r.index()).unwrap_or(i64::MAX))
            }
            (Func::Size, Value::List(l)) => Value::Int(i64::try_from(l.len()).unwrap_or(i64::MAX)),
            (Func::Size, Value::String(s)) => {
                Value::Int(i64::try_from(s.chars().count()).unwrap_or(i64::MAX))
            }
            (Func::ToLower, Value::String(s)) => Value::String(s.to_lowercase()),
            (Func::ToUpper, Value::String(s)) => Value::String(s.to_uppercase()),
            (Func::ToString, v @ Value::String(_)) => v,
            (Func::ToString, Value::Int(i)) => Value::String(i.to_string()),
            (Func::ToString, Value::Float(x)) => Value::String(format!("{x:?}")),
            (Func::ToString, Value::Bool(b)) => Value::String(b.to_string()),
            (Func::Keys, Value::Node(n)) => {
                let mut k: Vec<&str> = self
                    .g
                    .node_prop_ids(n)
                    .iter()
                    .map(|(k, _)| self.g.key_name(*k))
                    .collect();
                k.sort_unstable();
                strings(&mut k.into_iter())
            }
            (Func::Keys, Value::Relationship(r)) => {
                let mut k: Vec<&str> = self
                    .g
                    .edge_prop_ids(r)
                    .iter()
                    .map(|(k, _)| self.g.key_name(*k))
                    .collect();
                k.sort_unstable();
                strings(&mut k.into_iter())
            }
            (Func::Keys, Value::Map(m)) => strings(&mut m.keys().map(String::as_str)),
            (Func::Properties, Value::Node(n)) => Value::Map(
                self.g
                    .node_prop_ids(n)
                    .iter()
                    .map(|(k, v)| (self.g.key_name(*k).to_string(), v.clone()))
                    .collect(),
            ),
            (Func::Properties, Value::Relationship(r)) => Value::Map(
                self.g
                    .edge_prop_ids(r)
                    .iter()
                    .map(|(k, v)| (self.g.key_name(*k).to_string(), v.clone()))
                    .collect(),
            ),
            (Func::Properties, m @ Value::Map(_)) => m,
            (Func::StartNode, Value::Relationship(r)) => self
                .g
                .endpoints(r)
                .map_or(Value::Null, |(a, _)| Value::Node(a)),
            (Func::EndNode, Value::Relationship(r)) => self
                .g
                .endpoints(r)
                .map_or(Value::Null, |(_, b)| Value::Node(b)),
            (Func::Head, Value::List(l)) => l.into_iter().next().unwrap_or(Value::Null),
            (Func::Last, Value::List(l)) => l.into_iter().next_back().unwrap_or(Value::Null),
            (f, v) => {
                return Err(self.err(
                    at,
                    format!("{}() does not take a {}", func_name(f), v.type_name()),
                ))
            }
        })
    }
}

/// The fixed part of a variable-length walk.
struct Hops<'p> {
    m: &'p PMatch,
    pi: usize,
    path: &'p PPath,
    k: usize,
    min: u32,
    max: u32,
}

fn num(v: &Value) -> Option<f64> {
    match v {
        Value::Int(i) => Some(*i as f64),
        Value::Float(x) => Some(*x),
        _ => None,
    }
}

fn op_name(op: BinaryOp) -> &'static str {
    match op {
        BinaryOp::Add => "+",
        BinaryOp::Sub => "-",
        BinaryOp::Mul => "*",
        BinaryOp::Div => "/",
        BinaryOp::Rem => "%",
        BinaryOp::Pow => "^",
        BinaryOp::Concat => "||",
        _ => "this operator",
    }
}

fn func_name(f: Func) -> &'static str {
    match f {
        Func::Labels => "labels",
        Func::Type => "type",
        Func::Id => "id",
        Func::Size => "size",
        Func::ToLower => "toLower",
        Func::ToUpper => "toUpper",
        Func::ToString => "toString",
        Func::Coalesce => "coalesce",
        Func::Keys => "keys",
        Func::Properties => "properties",
        Func::StartNode => "startNode",
        Func::EndNode => "endNode",
        Func::Head => "head",
        Func::Last => "last",
        Func::Exists => "exists",
    }
}

/// The offset an error about `e` points to.
fn at_of(e: &PExpr) -> usize {
    match e {
        PExpr::Prop { at, .. }
        | PExpr::Not(_, at)
        | PExpr::Neg(_, at)
        | PExpr::Binary(_, _, _, at)
        | PExpr::HasLabels(_, _, _, at)
        | PExpr::Call(_, _, at) => *at,
        _ => 0,
    }
}
