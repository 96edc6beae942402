//! Validation and planning: every label, relationship type and property key of a
//! parsed query is checked against the schema (unknown ones collected with their
//! nearest names), variables are resolved to row slots, and names to the graph's
//! ids. The result is a plan the evaluator runs without looking anything up by
//! string. Knows nothing of open-cypher's types or of how results are reported.

use super::error::{ErrorKind, NameKind, NameProblem, Position, QueryError};
use super::graph::PropertyGraph;
use super::model::{
    BinaryOp, Clause, Direction, Expr, ExprKind, Ident, LabelExpr, NodePattern, Projection, Query,
    RelPattern, Span, UnaryOp,
};
use super::schema::{Resolution, Schema};
use super::suggest;
use super::value::Value;

mod rewrite;
use rewrite::*;

mod types;
pub(crate) use types::*;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Node,
    Rel,
    RelList,
    Map,
    Any,
}

#[derive(Clone, Debug)]
struct Var {
    name: String,
    slot: usize,
    kind: Kind,
}

#[derive(Clone, Debug, Default)]
struct Scope {
    vars: Vec<Var>,
}

impl Scope {
    fn get(&self, name: &str) -> Option<&Var> {
        self.vars.iter().rev().find(|v| v.name == name)
    }
}

/// Where an expression is compiled, which decides whether aggregates may appear.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ctx {
    /// WHERE, patterns, UNWIND, ORDER BY: no aggregates.
    Plain,
    /// A WITH or RETURN item: aggregates allowed, not nested.
    Item,
    /// Inside an aggregate's argument.
    InAgg,
}

/// Plans `q` against `schema` and `graph`; `max_hops` caps variable-length
/// relationships.
pub(crate) fn plan(
    q: &Query,
    schema: &Schema,
    graph: &PropertyGraph,
    max_hops: u32,
) -> Result<Plan, Failure> {
    let mut c = Compiler {
        q,
        schema,
        graph,
        max_hops,
        slots: 0,
        problems: Vec::new(),
        notes: Vec::new(),
        aggs: Vec::new(),
    };
    let result = c.query();
    // Names come first: a repair may fix them, and the agent fixes them anyway
    // before anything else about the query matters.
    if !c.problems.is_empty() {
        return Err(Failure::Names(c.problems));
    }
    result
}

struct Compiler<'a> {
    q: &'a Query,
    schema: &'a Schema,
    graph: &'a PropertyGraph,
    max_hops: u32,
    slots: usize,
    problems: Vec<NameProblem>,
    notes: Vec<String>,
    /// Aggregates of the projection being compiled.
    aggs: Vec<Agg>,
}

impl Compiler<'_> {
    fn err(&self, kind: ErrorKind, message: impl Into<String>, offset: usize) -> Failure {
        Failure::Error(QueryError::at(kind, message, &self.q.source, offset))
    }

    fn new_slot(&mut self) -> usize {
        self.slots += 1;
        self.slots - 1
    }

    fn text(&self, s: Span) -> &str {
        self.q.source.get(s.start..s.end).unwrap_or("")
    }

    fn query(&mut self) -> Result<Plan, Failure> {
        let mut scope = Scope::default();
        let mut segments = Vec::new();
        let mut reads = Vec::new();
        let mut columns = Vec::new();
        for clause in &self.q.clauses {
            match clause {
                Clause::Match(m) => {
                    let pm = self.match_clause(m, &mut scope)?;
                    reads.push(Read::Match(pm));
                }
                Clause::Unwind { expr, var } => {
                    let e = self.expr(expr, &scope, Ctx::Plain)?;
                    let slot = self.new_slot();
                    if scope.get(&var.name).is_some() {
                        return Err(self.err(
                            ErrorKind::Semantic,
                            format!("variable `{}` is already defined", var.name),
                            var.span.start,
                        ));
                    }
                    scope.vars.push(Var {
                        name: var.name.clone(),
                        slot,
                        kind: Kind::Any,
                    });
                    reads.push(Read::Unwind { expr: e, slot });
                }
                Clause::With(p, predicate) => {
                    let (proj, new_scope, _) = self.projection(p, &scope, false)?;
                    segments.push(Segment {
                        reads: std::mem::take(&mut reads),
                        projection: proj,
                    });
                    scope = new_scope;
                    if let Some(w) = predicate {
                        let e = self.expr(w, &scope, Ctx::Plain)?;
                        reads.push(Read::Filter(e));
                    }
                }
                Clause::Return(p) => {
                    let (proj, _, cols) = self.projection(p, &scope, true)?;
                    segments.push(Segment {
                        reads: std::mem::take(&mut reads),
                        projection: proj,
                    });
                    columns = cols;
                }
            }
        }
        Ok(Plan {
            segments,
            slots: self.slots,
            columns,
            notes: std::mem::take(&mut self.notes),
        })
    }

    // ---- names ----

    /// The canonical name `id` stands for, or `None` (with a problem recorded).
    fn resolve(&mut self, kind: NameKind, id: &Ident) -> Option<String> {
        match self.schema.resolve(kind, &id.name) {
            Resolution::Known => Some(id.name.clone()),
            Resolution::Alias(to) => {
                let note = format!("{kind} `{}` read as `{to}`", id.name);
                if !self.notes.contains(&note) {
                    self.notes.push(note);
                }
                Some(to)
            }
            Resolution::Ambiguous(all) => {
                self.problem(kind, id, true, all, None);
                None
            }
            Resolution::Unknown(n) => {
                self.problem(kind, id, false, n.suggestions, n.repair);
                None
            }
        }
    }

    fn problem(
        &mut self,
        kind: NameKind,
        id: &Ident,
        ambiguous: bool,
        suggestions: Vec<String>,
        repair: Option<String>,
    ) {
        self.problems.push(NameProblem {
            kind,
            name: id.name.clone(),
            position: Some(Position::at(&self.q.source, id.span.start)),
            span: (id.span.start, id.span.end),
            ambiguous,
            suggestions,
            repair,
        });
    }

    fn label_id(&mut self, kind: NameKind, id: &Ident) -> PLabels {
        match self.resolve(kind, id) {
            Some(name) => PLabels::Id(match kind {
                NameKind::Label => self.graph.label_id(&name),
                _ => self.graph.type_id(&name),
            }),
            None => PLabels::Id(None),
        }
    }

    fn key_id(&mut self, id: &Ident) -> Option<u32> {
        let name = self.resolve(NameKind::PropertyKey, id)?;
        self.graph.key_id(&name)
    }

    fn labels(&mut self, kind: NameKind, l: &LabelExpr) -> PLabels {
        match l {
            LabelExpr::Name(id) => self.label_id(kind, id),
            LabelExpr::And(items) => {
                let items = self.join_prefixed(kind, items);
                PLabels::And(items.iter().map(|i| self.labels(kind, i)).collect())
            }
            LabelExpr::Or(items) => {
                PLabels::Or(items.iter().map(|i| self.labels(kind, i)).collect())
            }
            LabelExpr::Not(inner) => PLabels::Not(Box::new(self.labels(kind, inner))),
            LabelExpr::Any => PLabels::Any,
        }
    }

    /// `:ai:VisionTransformer` written without backticks parses as two labels,
    /// `ai` and `VisionTransformer`. When the first is no name the schema knows and
    /// the two touch across one colon, they are read as the one name `ai:Vision...`.
    fn join_prefixed(&self, kind: NameKind, items: &[LabelExpr]) -> Vec<LabelExpr> {
        let mut out: Vec<LabelExpr> = Vec::with_capacity(items.len());
        let mut i = 0;
        while let Some(item) = items.get(i) {
            if let (LabelExpr::Name(a), Some(LabelExpr::Name(b))) = (item, items.get(i + 1)) {
                let touching = a.span.end + 1 == b.span.start
                    && self.q.source.get(a.span.end..b.span.start) == Some(":")
                    && !self.text(a.span).starts_with('`');
                let prefix_known = matches!(
                    self.schema.resolve(kind, &a.name),
                    Resolution::Known | Resolution::Alias(_) | Resolution::Ambiguous(_)
                );
                if touching && !prefix_known {
                    out.push(LabelExpr::Name(Ident {
                        name: format!("{}:{}", a.name, b.name),
                        span: Span {
                            start: a.span.start,
                            end: b.span.end,
                        },
                    }));
                    i += 2;
                    continue;
                }
            }
            out.push(item.clone());
            i += 1;
        }
        out
    }

    // ---- patterns ----

    fn match_clause(
        &mut self,
        m: &super::model::Match,
        scope: &mut Scope,
    ) -> Result<PMatch, Failure> {
        // Declare every variable first, so that a property map may name a variable
        // bound further along the pattern; such conditions are then checked once
        // the whole clause is bound.
        let mut fresh: Vec<usize> = Vec::new();
        let mut declared: Vec<(Option<usize>, Vec<Option<usize>>)> = Vec::new();
        let mut rel_vars: Vec<&str> = Vec::new();
        for path in &m.paths {
            let start = self.declare(path.start.var.as_ref(), Kind::Node, scope, &mut fresh)?;
            let mut rest = Vec::new();
            for (r, n) in &path.steps {
                if let Some(v) = &r.var {
                    if rel_vars.contains(&v.name.as_str()) {
                        return Err(self.err(
                            ErrorKind::Semantic,
                            format!(
                                "relationship variable `{}` is used twice in one MATCH",
                                v.name
                            ),
                            v.span.start,
                        ));
                    }
                    rel_vars.push(&v.name);
                }
                let kind = if r.length.is_some() {
                    Kind::RelList
                } else {
                    Kind::Rel
                };
                rest.push(self.declare(r.var.as_ref(), kind, scope, &mut fresh)?);
                rest.push(self.declare(n.var.as_ref(), Kind::Node, scope, &mut fresh)?);
            }
            declared.push((start, rest));
        }
        let mut deferred: Vec<PExpr> = Vec::new();
        let mut paths = Vec::with_capacity(m.paths.len());
        // Variables bound by the paths already placed: they make a cheap start.
        let mut bound_here: Vec<usize> = Vec::new();
        for (path, (start_slot, rest)) in m.paths.iter().zip(declared) {
            let mut nodes = Vec::new();
            let mut rels = Vec::new();
            nodes.push(self.node(&path.start, start_slot, scope, &fresh, &mut deferred)?);
            let mut slots = rest.into_iter();
            for (r, n) in &path.steps {
                let rs = slots.next().flatten();
                let ns = slots.next().flatten();
                rels.push(self.rel(r, rs, scope, &fresh, &mut deferred)?);
                nodes.push(self.node(n, ns, scope, &fresh, &mut deferred)?);
            }
            let mut p = PPath { nodes, rels };
            if self.start_cost(p.nodes.last(), &fresh, &bound_here)
                < self.start_cost(p.nodes.first(), &fresh, &bound_here)
            {
                p = reverse(p);
            }
            bound_here.extend(p.nodes.iter().map(|n| n.slot));
            bound_here.extend(p.rels.iter().map(|r| r.slot));
            paths.push(p);
        }
        let mut conditions = Vec::new();
        if let Some(w) = &m.predicate {
            conjuncts(self.expr(w, scope, Ctx::Plain)?, &mut conditions);
        }
        for d in deferred {
            conjuncts(d, &mut conditions);
        }
        let predicate = push_down(&mut paths, conditions, &fresh);
        Ok(PMatch {
            optional: m.optional,
            paths,
            predicate,
        })
    }

    /// The slot of a pattern variable: the existing one when it is in scope (its
    /// kind must agree), else a new one marked fresh; an anonymous element gets a
    /// hidden slot.
    fn declare(
        &mut self,
        var: Option<&Ident>,
        kind: Kind,
        scope: &mut Scope,
        fresh: &mut Vec<usize>,
    ) -> Result<Option<usize>, Failure> {
        let Some(v) = var else {
            let s = self.new_slot();
            fresh.push(s);
            return Ok(Some(s));
        };
        if let Some(existing) = scope.get(&v.name) {
            let ok = existing.kind == kind || existing.kind == Kind::Any;
            if !ok {
                return Err(self.err(
                    ErrorKind::Semantic,
                    format!(
                        "variable `{}` is already bound to a {}",
                        v.name,
                        kind_name(existing.kind)
                    ),
                    v.span.start,
                ));
            }
            return Ok(Some(existing.slot));
        }
        let s = self.new_slot();
        fresh.push(s);
        scope.vars.push(Var {
            name: v.name.clone(),
            slot: s,
            kind,
        });
        Ok(Some(s))
    }

    /// Compiles a property map; an entry whose value reads a variable this MATCH
    /// binds is moved to `deferred` as an equality on `slot`.
    fn props(
        &mut self,
        props: &[(Ident, Expr)],
        slot: usize,
        scope: &Scope,
        fresh: &[usize],
        deferred: &mut Vec<PExpr>,
        var_length: bool,
    ) -> Result<Vec<(Option<u32>, PExpr)>, Failure> {
        let mut out = Vec::new();
        for (k, v) in props {
            let key = self.key_id(k);
            let e = self.expr(v, scope, Ctx::Plain)?;
            if reads_any(&e, fresh) {
                if var_length {
                    return Err(self.err(
                        ErrorKind::Unsupported,
                        "a variable-length relationship's property map may only use variables bound before this MATCH",
                        v.span.start,
                    ));
                }
                let prop = PExpr::Prop {
                    base: Box::new(PExpr::Slot(slot)),
                    key,
                    name: k.name.clone(),
                    at: k.span.start,
                };
                deferred.push(PExpr::Binary(
                    BinaryOp::Eq,
                    Box::new(prop),
                    Box::new(e),
                    v.span.start,
                ));
            } else {
                out.push((key, e));
            }
        }
        Ok(out)
    }

    fn node(
        &mut self,
        n: &NodePattern,
        slot: Option<usize>,
        scope: &Scope,
        fresh: &[usize],
        deferred: &mut Vec<PExpr>,
    ) -> Result<PNode, Failure> {
        let slot = slot.unwrap_or(0);
        let labels = n.labels.as_ref().map(|l| self.labels(NameKind::Label, l));
        let props = self.props(&n.props, slot, scope, fresh, deferred, false)?;
        let mut predicate = None;
        if let Some(w) = &n.predicate {
            let e = self.expr(w, scope, Ctx::Plain)?;
            let others: Vec<usize> = fresh.iter().copied().filter(|s| *s != slot).collect();
            if reads_any(&e, &others) {
                deferred.push(e);
            } else {
                predicate = Some(e);
            }
        }
        Ok(PNode {
            slot,
            fresh: fresh.contains(&slot),
            labels,
            props,
            predicate,
        })
    }

    fn rel(
        &mut self,
        r: &RelPattern,
        slot: Option<usize>,
        scope: &Scope,
        fresh: &[usize],
        deferred: &mut Vec<PExpr>,
    ) -> Result<PRel, Failure> {
        let slot = slot.unwrap_or(0);
        let types = r
            .types
            .as_ref()
            .map(|l| self.labels(NameKind::RelationshipType, l));
        let length = match r.length {
            None => None,
            Some((min, max)) => {
                if min > self.max_hops {
                    return Err(self.err(
                        ErrorKind::Semantic,
                        format!(
                            "a variable-length relationship may span at most {} hops",
                            self.max_hops
                        ),
                        r.span.start,
                    ));
                }
                let capped = max.unwrap_or(u32::MAX).min(self.max_hops);
                if max != Some(capped) {
                    self.notes.push(format!(
                        "variable-length relationship at {} capped at {capped} hops",
                        Position::at(&self.q.source, r.span.start)
                    ));
                }
                Some((min, capped))
            }
        };
        let props = self.props(&r.props, slot, scope, fresh, deferred, length.is_some())?;
        let mut predicate = None;
        if let Some(w) = &r.predicate {
            if length.is_some() {
                return Err(self.err(
                    ErrorKind::Unsupported,
                    "WHERE inside a variable-length relationship",
                    w.span.start,
                ));
            }
            let e = self.expr(w, scope, Ctx::Plain)?;
            let others: Vec<usize> = fresh.iter().copied().filter(|s| *s != slot).collect();
            if reads_any(&e, &others) {
                deferred.push(e);
            } else {
                predicate = Some(e);
            }
        }
        Ok(PRel {
            slot,
            fresh: fresh.contains(&slot),
            types,
            direction: r.direction,
            length,
            props,
            predicate,
        })
    }

    /// How many candidates starting a path at `n` means: one when it is bound
    /// already, else the size of its smallest label, else every node; a property
    /// map with constants divides that estimate, since it filters on the spot.
    fn start_cost(&self, n: Option<&PNode>, fresh: &[usize], bound_here: &[usize]) -> usize {
        let Some(n) = n else { return usize::MAX };
        if !fresh.contains(&n.slot) || bound_here.contains(&n.slot) {
            return 1;
        }
        let mut cost = n
            .labels
            .as_ref()
            .and_then(|l| self.label_estimate(l))
            .unwrap_or(self.graph.node_count());
        if !n.props.is_empty() {
            cost = cost / 100 + 1;
        }
        cost
    }

    fn label_estimate(&self, l: &PLabels) -> Option<usize> {
        match l {
            PLabels::Id(None) => Some(0),
            PLabels::Id(Some(id)) => Some(self.graph.nodes_with_label(*id).len()),
            PLabels::And(items) => items.iter().filter_map(|i| self.label_estimate(i)).min(),
            _ => None,
        }
    }

    // ---- projections ----

    /// Compiles WITH / RETURN: the plan step, the scope after it, the column names.
    fn projection(
        &mut self,
        p: &Projection,
        scope: &Scope,
        is_return: bool,
    ) -> Result<(PProjection, Scope, Vec<String>), Failure> {
        let mut entries: Vec<(Expr, String)> = Vec::new();
        if p.star {
            let mut names: Vec<&Var> = scope.vars.iter().collect();
            names.sort_by(|a, b| a.name.cmp(&b.name));
            for v in names {
                if scope.get(&v.name).is_some_and(|x| x.slot == v.slot) {
                    entries.push((
                        Expr {
                            kind: ExprKind::Var(v.name.clone()),
                            span: p.span,
                        },
                        v.name.clone(),
                    ));
                }
            }
            if entries.is_empty() {
                return Err(self.err(
                    ErrorKind::Semantic,
                    "`*` projects no variables here",
                    p.span.start,
                ));
            }
        }
        for item in &p.items {
            let name = match (&item.alias, &item.expr.kind) {
                (Some(a), _) => a.name.clone(),
                (None, ExprKind::Var(v)) => v.clone(),
                (None, _) if is_return => self.text(item.expr.span).to_string(),
                (None, _) => {
                    return Err(self.err(
                        ErrorKind::Semantic,
                        "an expression in WITH needs a name: add AS name",
                        item.expr.span.start,
                    ))
                }
            };
            entries.push((item.expr.clone(), name));
        }
        let mut seen: Vec<&str> = Vec::new();
        for (e, name) in &entries {
            if seen.contains(&name.as_str()) {
                return Err(self.err(
                    ErrorKind::Semantic,
                    format!("two columns are named `{name}`; give one an alias with AS"),
                    e.span.start,
                ));
            }
            seen.push(name);
        }

        self.aggs.clear();
        let mut items = Vec::with_capacity(entries.len());
        let mut aggregating_items = Vec::with_capacity(entries.len());
        let mut new_scope = Scope::default();
        let mut texts = Vec::with_capacity(entries.len());
        for (e, name) in &entries {
            let before = self.aggs.len();
            let pe = self.expr(e, scope, Ctx::Item)?;
            let has_agg = self.aggs.len() > before;
            if has_agg {
                let mut outside = Vec::new();
                slots_outside_aggs(&pe, &mut outside);
                if !outside.is_empty() {
                    return Err(self.err(
                        ErrorKind::Unsupported,
                        "an expression mixing an aggregate with variables; return the variable as its own column",
                        e.span.start,
                    ));
                }
            }
            let slot = self.new_slot();
            new_scope.vars.push(Var {
                name: name.clone(),
                slot,
                kind: self.kind_of(e, scope),
            });
            items.push((pe, slot));
            aggregating_items.push(has_agg);
            texts.push(squeeze(self.text(e.span)));
        }
        let aggs = std::mem::take(&mut self.aggs);
        let aggregating = !aggs.is_empty();
        let keep_input = !aggregating && !p.distinct;

        // ORDER BY sees the projected names, and (when rows keep their input) the
        // variables before it; a key written exactly as an item reads that item.
        let order_scope = if keep_input {
            let mut s = scope.clone();
            s.vars.extend(new_scope.vars.iter().cloned());
            s
        } else {
            new_scope.clone()
        };
        let mut order = Vec::with_capacity(p.order.len());
        for s in &p.order {
            let text = squeeze(self.text(s.expr.span));
            let e = match texts.iter().position(|t| *t == text) {
                Some(i) => PExpr::Slot(items.get(i).map_or(0, |(_, slot)| *slot)),
                None => self.expr(&s.expr, &order_scope, Ctx::Plain)?,
            };
            order.push((e, s.descending));
        }
        let skip = match &p.skip {
            Some(e) => self.count(e, "SKIP")?,
            None => 0,
        };
        let limit = p
            .limit
            .as_ref()
            .map(|e| self.count(e, "LIMIT"))
            .transpose()?;
        let columns = entries.into_iter().map(|(_, n)| n).collect();
        Ok((
            PProjection {
                items,
                aggs,
                aggregating_items,
                distinct: p.distinct,
                order,
                skip,
                limit,
                keep_input,
            },
            new_scope,
            columns,
        ))
    }

    /// A SKIP or LIMIT: a constant, non-negative integer.
    fn count(&mut self, e: &Expr, what: &str) -> Result<usize, Failure> {
        let bad = |c: &Self| {
            c.err(
                ErrorKind::Semantic,
                format!("{what} takes a non-negative integer"),
                e.span.start,
            )
        };
        let pe = self.expr(e, &Scope::default(), Ctx::Plain)?;
        match pe {
            PExpr::Const(Value::Int(n)) if n >= 0 => usize::try_from(n).map_err(|_| bad(self)),
            _ => Err(bad(self)),
        }
    }

    fn kind_of(&self, e: &Expr, scope: &Scope) -> Kind {
        match &e.kind {
            ExprKind::Var(v) => scope.get(v).map_or(Kind::Any, |v| v.kind),
            ExprKind::Map(_) => Kind::Map,
            _ => Kind::Any,
        }
    }

    // ---- expressions ----

    fn expr(&mut self, e: &Expr, scope: &Scope, ctx: Ctx) -> Result<PExpr, Failure> {
        let at = e.span.start;
        Ok(match &e.kind {
            ExprKind::Literal(v) => PExpr::Const(v.clone()),
            ExprKind::Var(name) => match scope.get(name) {
                Some(v) => PExpr::Slot(v.slot),
                None => {
                    let near = suggest::nearest(
                        name,
                        scope
                            .vars
                            .iter()
                            .map(|v| (v.name.as_str(), [v.name.as_str()])),
                    );
                    let mut m = format!("variable `{name}` is not defined");
                    if let Some(s) = near.suggestions.first() {
                        m.push_str(&format!("; did you mean `{s}`?"));
                    }
                    return Err(self.err(ErrorKind::Semantic, m, at));
                }
            },
            ExprKind::Property(base, key) => {
                let b = self.expr(base, scope, ctx)?;
                // Keys of maps the query builds itself are not the graph's.
                let is_map = matches!(base.kind, ExprKind::Map(_))
                    || matches!(&base.kind, ExprKind::Var(v) if scope.get(v).is_some_and(|v| v.kind == Kind::Map));
                let (id, name) = if is_map {
                    (None, key.name.clone())
                } else {
                    match self.resolve(NameKind::PropertyKey, key) {
                        Some(n) => (self.graph.key_id(&n), n),
                        None => (None, key.name.clone()),
                    }
                };
                PExpr::Prop {
                    base: Box::new(b),
                    key: id,
                    name,
                    at: key.span.start,
                }
            }
            ExprKind::List(items) => PExpr::List(
                items
                    .iter()
                    .map(|i| self.expr(i, scope, ctx))
                    .collect::<Result<_, _>>()?,
            ),
            ExprKind::Map(entries) => PExpr::Map(
                entries
                    .iter()
                    .map(|(k, v)| Ok((k.name.clone(), self.expr(v, scope, ctx)?)))
                    .collect::<Result<_, Failure>>()?,
            ),
            ExprKind::Unary(op, inner) => {
                let i = Box::new(self.expr(inner, scope, ctx)?);
                match op {
                    UnaryOp::Not => PExpr::Not(i, at),
                    UnaryOp::Neg => PExpr::Neg(i, at),
                }
            }
            ExprKind::Binary(op, l, r) => {
                let l = self.expr(l, scope, ctx)?;
                let r = self.expr(r, scope, ctx)?;
                PExpr::Binary(*op, Box::new(l), Box::new(r), at)
            }
            ExprKind::IsNull { expr, negated } => {
                PExpr::IsNull(Box::new(self.expr(expr, scope, ctx)?), *negated)
            }
            ExprKind::HasLabels {
                expr,
                labels,
                negated,
            } => {
                let inner = self.expr(expr, scope, ctx)?;
                let kind = match &expr.kind {
                    ExprKind::Var(v)
                        if scope.get(v).is_some_and(|v| matches!(v.kind, Kind::Rel)) =>
                    {
                        NameKind::RelationshipType
                    }
                    _ => NameKind::Label,
                };
                let l = self.labels(kind, labels);
                PExpr::HasLabels(Box::new(inner), l, *negated, at)
            }
            ExprKind::Call {
                name,
                distinct,
                args,
                star,
            } => self.call(name, *distinct, args, *star, scope, ctx, at)?,
        })
    }

    #[allow(clippy::too_many_arguments)]
    fn call(
        &mut self,
        name: &Ident,
        distinct: bool,
        args: &[Expr],
        star: bool,
        scope: &Scope,
        ctx: Ctx,
        at: usize,
    ) -> Result<PExpr, Failure> {
        let Some(&(_, func, agg)) = FUNCTIONS
            .iter()
            .find(|(n, _, _)| n.eq_ignore_ascii_case(&name.name))
        else {
            let near = suggest::nearest(&name.name, FUNCTIONS.iter().map(|(n, _, _)| (*n, [*n])));
            let mut m = format!("function `{}` is not supported", name.name);
            if let Some(s) = near.suggestions.first() {
                m.push_str(&format!("; nearest: {s}()"));
            }
            return Err(self.err(ErrorKind::Unsupported, m, at));
        };
        if let Some(a) = agg {
            match ctx {
                Ctx::Item => {}
                Ctx::InAgg => {
                    return Err(self.err(
                        ErrorKind::Semantic,
                        "an aggregate cannot hold another",
                        at,
                    ))
                }
                Ctx::Plain => {
                    return Err(self.err(
                        ErrorKind::Semantic,
                        format!("{}() may only appear in WITH and RETURN items", name.name),
                        at,
                    ))
                }
            }
            let arg = match (star, args) {
                (true, _) if a == AggFunc::Count => None,
                (false, [one]) => Some(self.expr(one, scope, Ctx::InAgg)?),
                _ => {
                    return Err(self.err(
                        ErrorKind::Semantic,
                        format!("{}() takes one argument", name.name),
                        at,
                    ))
                }
            };
            self.aggs.push(Agg {
                func: a,
                distinct,
                arg,
                at,
            });
            return Ok(PExpr::Agg(self.aggs.len() - 1));
        }
        let func = func.unwrap_or(Func::Coalesce);
        if distinct || star {
            return Err(self.err(
                ErrorKind::Semantic,
                format!("DISTINCT and * belong to aggregates, not {}()", name.name),
                at,
            ));
        }
        let arity_ok = match func {
            Func::Coalesce => !args.is_empty(),
            _ => args.len() == 1,
        };
        if !arity_ok {
            return Err(self.err(
                ErrorKind::Semantic,
                format!("{}() takes one argument", name.name),
                at,
            ));
        }
        let args = args
            .iter()
            .map(|a| self.expr(a, scope, ctx))
            .collect::<Result<_, _>>()?;
        Ok(PExpr::Call(func, args, at))
    }
}
