//! Parsing: the query text through `open-cypher`, then its syntax tree into the
//! subset's model. Writing clauses are refused here as read-only, and every other
//! construct outside the subset as not supported, each with its position. The only
//! module that knows `open-cypher`'s types; knows nothing of schemas or graphs.

use open_cypher::ast as oc;
use open_cypher::{lex, TokenKind};

use super::error::{ErrorKind, QueryError};
use super::model::{
    BinaryOp, Clause, Direction, Expr, ExprKind, Ident, LabelExpr, Match, NodePattern, PathPattern,
    Projection, ProjectionItem, Query, RelPattern, SortItem, Span, UnaryOp,
};
use super::value::Value;

/// Expressions nested deeper than this are refused: every later pass recurses over
/// them, and no query an agent writes comes near it.
const MAX_DEPTH: usize = 100;

/// At most this many tokens reach `open-cypher`'s parser. It builds and drops its
/// syntax tree by recursion, one level per bracket and per chained operator, so tens
/// of thousands of them (`NOT NOT NOT …`, `1+1+1…`) exhaust a 2 MiB stack before any
/// later check could see them; brackets are also counted, against [`MAX_DEPTH`].
const MAX_TOKENS: usize = 4_096;

/// At most this many clauses, and this many node and relationship patterns in one
/// query: the evaluator recurses once per clause and per pattern element.
const MAX_CLAUSES: usize = 50;
const MAX_ELEMENTS: usize = 100;

/// The clauses that write, as the parser names them, in the order checked on text
/// the parser rejected.
const WRITING_WORDS: &[&str] = &[
    "CREATE", "MERGE", "SET", "DELETE", "DETACH", "REMOVE", "CALL", "LOAD", "FOREACH", "INSERT",
    "DROP",
];

/// Parses `text` (at most `max_bytes` long) into the supported subset.
pub fn parse(text: &str, max_bytes: usize) -> Result<Query, QueryError> {
    if text.len() > max_bytes {
        return Err(QueryError::at(
            ErrorKind::TooLong,
            format!(
                "the query is {} bytes long; at most {max_bytes} are accepted",
                text.len()
            ),
            text,
            max_bytes,
        ));
    }
    bounded(text)?;
    let parsed = match open_cypher::parse(text) {
        Ok(p) => p,
        Err(errors) => {
            // A writing query that does not parse still gets the read-only answer,
            // which tells its author more than the syntax error would.
            if let Some((word, offset)) = writing_word(text) {
                return Err(read_only(&word, text, offset));
            }
            let (message, offset) = match errors.diagnostics().first() {
                Some(d) => {
                    let mut m = d.message.clone();
                    if let Some(h) = &d.help {
                        m.push_str("; ");
                        m.push_str(h);
                    }
                    (m, d.primary_span.start)
                }
                None => ("the query does not parse".to_string(), 0),
            };
            return Err(QueryError::at(ErrorKind::Syntax, message, text, offset));
        }
    };
    let lower = Lower { text, depth: 0 };
    let statement = parsed
        .program
        .statements
        .first()
        .ok_or_else(|| lower.err(ErrorKind::Syntax, "the query is empty", 0))?;
    let query = match &statement.kind {
        oc::StatementKind::Query(q) => q,
        _ => {
            return Err(lower.err(
                ErrorKind::Syntax,
                "the query does not parse",
                statement.span.start,
            ))
        }
    };
    if let Some(mode) = &query.mode {
        return Err(lower.err(
            ErrorKind::Unsupported,
            "EXPLAIN and PROFILE are not supported",
            mode.span.start,
        ));
    }
    let regular = match &query.query.kind {
        oc::QueryKind::Regular(r) => r,
        _ => {
            return Err(lower.err(
                ErrorKind::Syntax,
                "the query does not parse",
                query.query.span.start,
            ))
        }
    };
    let clauses = &regular.head.kind.clauses;
    // Writing anywhere is refused before anything else is looked at.
    for c in clauses {
        if let Some(word) = writing_clause(&c.kind) {
            return Err(read_only(word, text, c.span.start));
        }
    }
    if let Some(branch) = regular.unions.first() {
        for c in &branch.query.kind.clauses {
            if let Some(word) = writing_clause(&c.kind) {
                return Err(read_only(word, text, c.span.start));
            }
        }
        return Err(lower.err(
            ErrorKind::Unsupported,
            "UNION is not supported; run the queries one at a time",
            branch.operator.span.start,
        ));
    }
    let mut lower = lower;
    let mut out = Vec::with_capacity(clauses.len());
    let mut elements = 0;
    for (i, c) in clauses.iter().enumerate() {
        if i == MAX_CLAUSES {
            return Err(lower.unsupported(
                &format!("a query of more than {MAX_CLAUSES} clauses"),
                c.span.start,
            ));
        }
        let clause = lower.clause(c)?;
        if let Clause::Match(m) = &clause {
            elements += m.paths.iter().map(|p| 1 + 2 * p.steps.len()).sum::<usize>();
            if elements > MAX_ELEMENTS {
                return Err(lower.unsupported(
                    &format!("a query of more than {MAX_ELEMENTS} node and relationship patterns"),
                    c.span.start,
                ));
            }
        }
        out.push(clause);
    }
    let last = clauses.len().saturating_sub(1);
    for (i, c) in out.iter().enumerate() {
        if matches!(c, Clause::Return(_)) != (i == last) {
            let offset = clauses.get(i).map_or(0, |c| c.span.start);
            let message = if i == last {
                "a read-only query ends with RETURN"
            } else {
                "RETURN must be the last clause"
            };
            return Err(lower.err(ErrorKind::Semantic, message, offset));
        }
    }
    if out.is_empty() {
        return Err(lower.err(ErrorKind::Syntax, "the query is empty", 0));
    }
    Ok(Query {
        source: text.to_string(),
        clauses: out,
    })
}

/// Refuses, before the parser sees it, a text of more than [`MAX_TOKENS`] tokens or
/// brackets nested deeper than [`MAX_DEPTH`], at the token that went past. The lexer
/// is a loop, so this costs one pass whatever the text holds.
fn bounded(text: &str) -> Result<(), QueryError> {
    let mut depth = 0usize;
    let tokens = lex(text).tokens;
    for (n, t) in tokens.iter().filter(|t| !t.is_trivia()).enumerate() {
        if n == MAX_TOKENS {
            return Err(QueryError::at(
                ErrorKind::TooLong,
                format!("the query has more than {MAX_TOKENS} tokens; write a shorter one"),
                text,
                t.span.start,
            ));
        }
        match t.kind {
            TokenKind::LeftParen | TokenKind::LeftBracket | TokenKind::LeftBrace => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return Err(QueryError::at(
                        ErrorKind::Unsupported,
                        format!("nesting deeper than {MAX_DEPTH} levels is not supported"),
                        text,
                        t.span.start,
                    ));
                }
            }
            TokenKind::RightParen | TokenKind::RightBracket | TokenKind::RightBrace => {
                depth = depth.saturating_sub(1);
            }
            _ => {}
        }
    }
    Ok(())
}

fn read_only(word: &str, text: &str, offset: usize) -> QueryError {
    QueryError::at(
        ErrorKind::ReadOnly,
        format!("{word} is refused: queries are read-only (MATCH, OPTIONAL MATCH, UNWIND, WITH, RETURN)"),
        text,
        offset,
    )
}

/// The keyword of a clause that writes or calls out, if `c` is one.
fn writing_clause(c: &oc::ClauseKind) -> Option<&'static str> {
    Some(match c {
        oc::ClauseKind::Create(_) => "CREATE",
        oc::ClauseKind::Insert(_) => "INSERT",
        oc::ClauseKind::Merge(_) => "MERGE",
        oc::ClauseKind::Delete(d) => match d.mode.kind {
            oc::DeleteMode::Detach => "DETACH DELETE",
            _ => "DELETE",
        },
        oc::ClauseKind::Set(_) => "SET",
        oc::ClauseKind::Remove(_) => "REMOVE",
        oc::ClauseKind::Foreach(_) => "FOREACH",
        oc::ClauseKind::LoadCsv(_) => "LOAD CSV",
        oc::ClauseKind::Call(_) => "CALL",
        _ => return None,
    })
}

/// The first word of text the parser rejected that starts a writing clause: a
/// keyword or bare name, not a property key (after `.`), a label (after `:`) or a
/// map key (before `:`).
fn writing_word(text: &str) -> Option<(String, usize)> {
    let tokens: Vec<_> = lex(text)
        .tokens
        .into_iter()
        .filter(|t| !t.is_trivia())
        .collect();
    for (i, t) in tokens.iter().enumerate() {
        if !matches!(t.kind, TokenKind::Keyword(_) | TokenKind::Identifier) {
            continue;
        }
        let Some(word) = t.text(text) else { continue };
        let upper = word.to_ascii_uppercase();
        if !WRITING_WORDS.contains(&upper.as_str()) {
            continue;
        }
        let prev = i.checked_sub(1).and_then(|j| tokens.get(j)).map(|p| p.kind);
        let next = tokens.get(i + 1).map(|n| n.kind);
        if matches!(prev, Some(TokenKind::Dot | TokenKind::Colon))
            || matches!(next, Some(TokenKind::Colon))
        {
            continue;
        }
        let word = match upper.as_str() {
            "LOAD" => "LOAD CSV".to_string(),
            "DETACH" => "DETACH DELETE".to_string(),
            _ => upper,
        };
        return Some((word, t.span.start));
    }
    None
}

struct Lower<'t> {
    text: &'t str,
    depth: usize,
}

fn span(s: open_cypher::Span) -> Span {
    Span {
        start: s.start,
        end: s.end,
    }
}

fn ident(n: &oc::Name) -> Ident {
    Ident {
        name: n.kind.text.clone(),
        span: span(n.span),
    }
}

impl Lower<'_> {
    fn err(&self, kind: ErrorKind, message: impl Into<String>, offset: usize) -> QueryError {
        QueryError::at(kind, message, self.text, offset)
    }

    fn unsupported(&self, what: &str, offset: usize) -> QueryError {
        self.err(
            ErrorKind::Unsupported,
            format!("{what} is not supported"),
            offset,
        )
    }

    fn clause(&mut self, c: &oc::Clause) -> Result<Clause, QueryError> {
        let at = c.span.start;
        match &c.kind {
            oc::ClauseKind::Match(m) => {
                if let Some(mode) = &m.mode {
                    return Err(self.unsupported("a path mode (WALK, TRAIL, ...)", mode.span.start));
                }
                if let Some(h) = m.hints.first() {
                    return Err(self.unsupported("a planner hint (USING ...)", h.span.start));
                }
                let paths = m
                    .pattern
                    .parts
                    .iter()
                    .map(|p| self.path(p))
                    .collect::<Result<Vec<_>, _>>()?;
                let predicate = m.where_clause.as_ref().map(|w| self.expr(w)).transpose()?;
                Ok(Clause::Match(Match {
                    optional: m.optional,
                    paths,
                    predicate,
                }))
            }
            oc::ClauseKind::Unwind(u) => Ok(Clause::Unwind {
                expr: self.expr(&u.expression)?,
                var: ident(&u.variable),
            }),
            oc::ClauseKind::With(w) => {
                let p = self.projection(&w.projection)?;
                let predicate = w.where_clause.as_ref().map(|e| self.expr(e)).transpose()?;
                Ok(Clause::With(p, predicate))
            }
            oc::ClauseKind::Return(r) => Ok(Clause::Return(self.projection(&r.projection)?)),
            oc::ClauseKind::Use(_) => Err(self.unsupported("USE", at)),
            oc::ClauseKind::Let(_) => Err(self.unsupported("LET", at)),
            oc::ClauseKind::Select(_) | oc::ClauseKind::Next(_) => {
                Err(self.unsupported("SELECT and NEXT", at))
            }
            oc::ClauseKind::Filter(_) => Err(self.unsupported("FILTER (use WHERE)", at)),
            oc::ClauseKind::Finish => Err(self.unsupported("FINISH", at)),
            _ => Err(self.unsupported("this clause", at)),
        }
    }

    fn projection(&mut self, p: &oc::ProjectionClause) -> Result<Projection, QueryError> {
        let distinct = matches!(
            p.quantifier.as_ref().map(|q| q.kind),
            Some(oc::SetQuantifier::Distinct)
        );
        let mut star = false;
        let mut items = Vec::with_capacity(p.items.len());
        for item in &p.items {
            match &item.kind {
                oc::ProjectionItemKind::Wildcard => star = true,
                oc::ProjectionItemKind::Expression { expression, alias } => {
                    items.push(ProjectionItem {
                        expr: self.expr(expression)?,
                        alias: alias.as_ref().map(ident),
                    })
                }
                _ => return Err(self.unsupported("this projection item", item.span.start)),
            }
        }
        let mut order = Vec::new();
        if let Some(o) = &p.order_by {
            for s in &o.items {
                if let Some(n) = &s.nulls {
                    return Err(self.unsupported("NULLS FIRST / NULLS LAST", n.span.start));
                }
                order.push(SortItem {
                    expr: self.expr(&s.expression)?,
                    descending: matches!(
                        s.direction.as_ref().map(|d| d.kind),
                        Some(oc::SortDirection::Descending)
                    ),
                });
            }
        }
        let skip = match (&p.skip, &p.offset) {
            (Some(s), _) | (None, Some(s)) => Some(self.expr(s)?),
            (None, None) => None,
        };
        let limit = p.limit.as_ref().map(|l| self.expr(l)).transpose()?;
        Ok(Projection {
            distinct,
            star,
            items,
            order,
            skip,
            limit,
            span: span(p.span),
        })
    }

    fn path(&mut self, part: &oc::PatternPart) -> Result<PathPattern, QueryError> {
        if let Some(b) = &part.kind.binding {
            return Err(self.unsupported("a path variable (p = ...)", b.span.start));
        }
        if let Some(s) = &part.kind.selector {
            return Err(self.unsupported("a path selector (SHORTEST, ANY, ...)", s.span.start));
        }
        let factors = &part.kind.path.kind.factors;
        let mut start = None;
        let mut steps = Vec::new();
        let mut pending: Option<RelPattern> = None;
        for f in factors {
            match &f.kind {
                oc::PathFactorKind::Node(n) => {
                    let node = self.node(n, f.span)?;
                    match (start.is_none(), pending.take()) {
                        (true, None) => start = Some(node),
                        (false, Some(r)) => steps.push((r, node)),
                        _ => return Err(self.err(ErrorKind::Syntax, "a node must follow a relationship", f.span.start)),
                    }
                }
                oc::PathFactorKind::Relationship(r) => {
                    if start.is_none() || pending.is_some() {
                        return Err(self.err(ErrorKind::Syntax, "a relationship must sit between two nodes", f.span.start));
                    }
                    pending = Some(self.rel(r, f.span)?);
                }
                oc::PathFactorKind::QuantifiedNode { .. }
                | oc::PathFactorKind::Parenthesized { .. }
                | oc::PathFactorKind::Subpath { .. } => {
                    return Err(self.unsupported(
                        "a quantified path pattern (write a variable-length relationship such as -[:T*1..3]->)",
                        f.span.start,
                    ))
                }
                oc::PathFactorKind::LegacyShortest { .. } => {
                    return Err(self.unsupported("shortestPath", f.span.start))
                }
                _ => return Err(self.err(ErrorKind::Syntax, "this pattern does not parse", f.span.start)),
            }
        }
        match (start, pending) {
            (Some(start), None) => Ok(PathPattern { start, steps }),
            _ => Err(self.err(
                ErrorKind::Syntax,
                "a pattern starts and ends with a node",
                part.span.start,
            )),
        }
    }

    fn node(
        &mut self,
        n: &oc::NodePattern,
        at: open_cypher::Span,
    ) -> Result<NodePattern, QueryError> {
        Ok(NodePattern {
            var: n.variable.as_ref().map(ident),
            labels: n.labels.as_ref().map(|l| self.labels(l)).transpose()?,
            props: self.prop_map(n.properties.as_deref())?,
            predicate: n
                .where_clause
                .as_deref()
                .map(|w| self.expr(w))
                .transpose()?,
            span: span(at),
        })
    }

    fn rel(
        &mut self,
        r: &oc::RelationshipPattern,
        at: open_cypher::Span,
    ) -> Result<RelPattern, QueryError> {
        if let Some(q) = &r.graph_quantifier {
            return Err(self.unsupported(
                "a quantifier after a relationship (write -[:T*1..3]-> instead)",
                q.span.start,
            ));
        }
        let direction = match r.direction.kind {
            oc::RelationshipDirection::Right => Direction::Right,
            oc::RelationshipDirection::Left => Direction::Left,
            _ => Direction::Either,
        };
        let length = match &r.legacy_quantifier {
            None => None,
            Some(q) => {
                let bound = |s: &Option<String>| -> Option<u32> {
                    // A bound too large for u32 is as good as unbounded: the
                    // caller's cap applies either way.
                    s.as_deref().map(|t| t.parse::<u32>().unwrap_or(u32::MAX))
                };
                let (min, max) = match &q.kind {
                    oc::QuantifierKind::ZeroOrMore | oc::QuantifierKind::OneOrMore => (1, None),
                    oc::QuantifierKind::Optional => (0, Some(1)),
                    oc::QuantifierKind::Fixed(n) => {
                        let n = n.parse::<u32>().unwrap_or(u32::MAX);
                        (n, Some(n))
                    }
                    oc::QuantifierKind::Range { lower, upper } => {
                        (bound(lower).unwrap_or(1), bound(upper))
                    }
                    _ => return Err(self.unsupported("this quantifier", q.span.start)),
                };
                if max.is_some_and(|m| m < min) {
                    return Err(self.err(
                        ErrorKind::Semantic,
                        "the lower bound of a variable-length relationship exceeds its upper bound",
                        q.span.start,
                    ));
                }
                Some((min, max))
            }
        };
        Ok(RelPattern {
            var: r.variable.as_ref().map(ident),
            types: r.labels.as_ref().map(|l| self.labels(l)).transpose()?,
            direction,
            length,
            props: self.prop_map(r.properties.as_deref())?,
            predicate: r
                .where_clause
                .as_deref()
                .map(|w| self.expr(w))
                .transpose()?,
            span: span(at),
        })
    }

    fn prop_map(&mut self, e: Option<&oc::Expr>) -> Result<Vec<(Ident, Expr)>, QueryError> {
        let Some(e) = e else { return Ok(Vec::new()) };
        match &e.kind {
            oc::ExprKind::Map(entries) => entries
                .iter()
                .map(|m| Ok((ident(&m.key), self.expr(&m.value)?)))
                .collect(),
            oc::ExprKind::Parameter(_) => Err(self.parameter(e.span.start)),
            _ => Err(self.unsupported("this property map", e.span.start)),
        }
    }

    fn labels(&mut self, l: &oc::LabelExpression) -> Result<LabelExpr, QueryError> {
        self.enter(l.span.start)?;
        let out = match &l.kind {
            oc::LabelExpressionKind::Name(n) => Ok(LabelExpr::Name(ident(n))),
            oc::LabelExpressionKind::Wildcard => Ok(LabelExpr::Any),
            oc::LabelExpressionKind::Not(inner) => {
                Ok(LabelExpr::Not(Box::new(self.labels(inner)?)))
            }
            oc::LabelExpressionKind::And(items) => Ok(LabelExpr::And(
                items
                    .iter()
                    .map(|i| self.labels(i))
                    .collect::<Result<_, _>>()?,
            )),
            oc::LabelExpressionKind::Or(items) => Ok(LabelExpr::Or(
                items
                    .iter()
                    .map(|i| self.labels(i))
                    .collect::<Result<_, _>>()?,
            )),
            oc::LabelExpressionKind::Parenthesized(inner) => self.labels(inner),
            _ => Err(self.err(
                ErrorKind::Syntax,
                "this label expression does not parse",
                l.span.start,
            )),
        };
        self.depth -= 1;
        out
    }

    fn parameter(&self, offset: usize) -> QueryError {
        self.err(
            ErrorKind::Unsupported,
            "parameters ($name) are not supported; write the value into the query",
            offset,
        )
    }

    fn enter(&mut self, offset: usize) -> Result<(), QueryError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            self.depth -= 1;
            return Err(self.err(
                ErrorKind::Unsupported,
                format!("nesting deeper than {MAX_DEPTH} levels"),
                offset,
            ));
        }
        Ok(())
    }

    fn expr(&mut self, e: &oc::Expr) -> Result<Expr, QueryError> {
        self.enter(e.span.start)?;
        let out = self.expr_inner(e);
        self.depth -= 1;
        out
    }

    fn expr_inner(&mut self, e: &oc::Expr) -> Result<Expr, QueryError> {
        let at = e.span.start;
        let kind = match &e.kind {
            oc::ExprKind::Literal(l) => ExprKind::Literal(self.literal(l, false)?),
            oc::ExprKind::Variable(n) => ExprKind::Var(n.kind.text.clone()),
            oc::ExprKind::Parameter(_) => return Err(self.parameter(at)),
            oc::ExprKind::List(items) => ExprKind::List(
                items
                    .iter()
                    .map(|i| self.expr(i))
                    .collect::<Result<_, _>>()?,
            ),
            oc::ExprKind::Map(entries) => ExprKind::Map(
                entries
                    .iter()
                    .map(|m| Ok((ident(&m.key), self.expr(&m.value)?)))
                    .collect::<Result<_, QueryError>>()?,
            ),
            oc::ExprKind::Unary { operator, operand } => match operator.kind {
                oc::UnaryOperator::Plus => return self.expr(operand),
                oc::UnaryOperator::Minus => match &operand.kind {
                    // `-9223372036854775808` is only in range with its sign.
                    oc::ExprKind::Literal(l) => ExprKind::Literal(self.literal(l, true)?),
                    _ => ExprKind::Unary(UnaryOp::Neg, Box::new(self.expr(operand)?)),
                },
                oc::UnaryOperator::Not => {
                    ExprKind::Unary(UnaryOp::Not, Box::new(self.expr(operand)?))
                }
                _ => return Err(self.unsupported("this operator", operator.span.start)),
            },
            oc::ExprKind::Binary {
                left,
                operator,
                right,
            } => {
                let op = match operator.kind {
                    oc::BinaryOperator::Or => BinaryOp::Or,
                    oc::BinaryOperator::Xor => BinaryOp::Xor,
                    oc::BinaryOperator::And => BinaryOp::And,
                    oc::BinaryOperator::Equal => BinaryOp::Eq,
                    oc::BinaryOperator::NotEqual => BinaryOp::Ne,
                    oc::BinaryOperator::Less => BinaryOp::Lt,
                    oc::BinaryOperator::LessEqual => BinaryOp::Le,
                    oc::BinaryOperator::Greater => BinaryOp::Gt,
                    oc::BinaryOperator::GreaterEqual => BinaryOp::Ge,
                    oc::BinaryOperator::In => BinaryOp::In,
                    oc::BinaryOperator::StartsWith => BinaryOp::StartsWith,
                    oc::BinaryOperator::EndsWith => BinaryOp::EndsWith,
                    oc::BinaryOperator::Contains => BinaryOp::Contains,
                    oc::BinaryOperator::Add => BinaryOp::Add,
                    oc::BinaryOperator::Subtract => BinaryOp::Sub,
                    oc::BinaryOperator::Multiply => BinaryOp::Mul,
                    oc::BinaryOperator::Divide => BinaryOp::Div,
                    oc::BinaryOperator::Remainder => BinaryOp::Rem,
                    oc::BinaryOperator::Power => BinaryOp::Pow,
                    oc::BinaryOperator::Concat => BinaryOp::Concat,
                    oc::BinaryOperator::RegexMatch => {
                        return Err(self.unsupported(
                            "=~ (regular expressions; use STARTS WITH, ENDS WITH or CONTAINS)",
                            operator.span.start,
                        ))
                    }
                    _ => return Err(self.unsupported("this operator", operator.span.start)),
                };
                ExprKind::Binary(op, Box::new(self.expr(left)?), Box::new(self.expr(right)?))
            }
            oc::ExprKind::Is {
                expression,
                negated,
                predicate,
            } => match predicate {
                oc::IsPredicate::Null => ExprKind::IsNull {
                    expr: Box::new(self.expr(expression)?),
                    negated: *negated,
                },
                oc::IsPredicate::Label(l) => ExprKind::HasLabels {
                    expr: Box::new(self.expr(expression)?),
                    labels: self.labels(l)?,
                    negated: *negated,
                },
                _ => return Err(self.unsupported("IS with a type or normal form", at)),
            },
            oc::ExprKind::Property { expression, key } => {
                ExprKind::Property(Box::new(self.expr(expression)?), ident(key))
            }
            oc::ExprKind::Function(f) => {
                let name = match f.name.parts.as_slice() {
                    [one] => ident(one),
                    _ => return Err(self.unsupported("a namespaced function", f.name.span.start)),
                };
                let distinct = matches!(
                    f.quantifier.as_ref().map(|q| q.kind),
                    Some(oc::SetQuantifier::Distinct)
                );
                let star = matches!(
                    f.arguments.as_slice(),
                    [oc::Expr {
                        kind: oc::ExprKind::Wildcard,
                        ..
                    }]
                );
                let args = if star {
                    Vec::new()
                } else {
                    f.arguments
                        .iter()
                        .map(|a| self.expr(a))
                        .collect::<Result<_, _>>()?
                };
                ExprKind::Call {
                    name,
                    distinct,
                    args,
                    star,
                }
            }
            oc::ExprKind::Parenthesized(inner) => return self.expr(inner),
            oc::ExprKind::Wildcard => return Err(self.unsupported("`*` here", at)),
            oc::ExprKind::Index { .. } | oc::ExprKind::Slice { .. } => {
                return Err(self.unsupported("indexing and slicing", at))
            }
            oc::ExprKind::DynamicProperty { .. } => {
                return Err(self.unsupported("a computed property key (n[key])", at))
            }
            oc::ExprKind::Case(_) => return Err(self.unsupported("CASE", at)),
            oc::ExprKind::ListComprehension(_) | oc::ExprKind::PatternComprehension(_) => {
                return Err(self.unsupported("a comprehension", at))
            }
            oc::ExprKind::Reduce(_) => return Err(self.unsupported("reduce()", at)),
            oc::ExprKind::QuantifiedPredicate(_) => {
                return Err(self.unsupported("all(), any(), none() and single()", at))
            }
            oc::ExprKind::Subquery(_) => {
                return Err(self.unsupported("a subquery (EXISTS { }, COUNT { }, COLLECT { })", at))
            }
            oc::ExprKind::Pattern(_) => {
                return Err(self.unsupported("a pattern used as a predicate (MATCH it instead)", at))
            }
            oc::ExprKind::MapProjection(_) => return Err(self.unsupported("a map projection", at)),
            _ => return Err(self.unsupported("this expression", at)),
        };
        Ok(Expr {
            kind,
            span: span(e.span),
        })
    }

    fn literal(&self, l: &oc::Literal, negate: bool) -> Result<Value, QueryError> {
        let at = l.span.start;
        let v = match &l.kind {
            oc::LiteralKind::Null => Value::Null,
            oc::LiteralKind::Boolean(b) => Value::Bool(*b),
            oc::LiteralKind::Integer(i) => {
                let (digits, radix) = match i.radix {
                    oc::IntegerRadix::Hexadecimal => (strip_prefix(&i.text, 'x'), 16),
                    oc::IntegerRadix::Octal => (strip_prefix(&i.text, 'o'), 8),
                    _ => (i.text.as_str(), 10),
                };
                let digits: String = digits.chars().filter(|c| *c != '_').collect();
                let signed = if negate { format!("-{digits}") } else { digits };
                let n = i64::from_str_radix(&signed, radix).map_err(|_| {
                    self.err(ErrorKind::Syntax, "integer out of range (64-bit)", at)
                })?;
                return Ok(Value::Int(n));
            }
            oc::LiteralKind::Float(f) => {
                let x: f64 = f
                    .text
                    .parse()
                    .map_err(|_| self.err(ErrorKind::Syntax, "this number does not parse", at))?;
                Value::Float(if negate { -x } else { x })
            }
            oc::LiteralKind::String(s) => Value::String(s.value.clone()),
            _ => return Err(self.unsupported("this literal", at)),
        };
        if negate {
            return match v {
                Value::Float(_) => Ok(v),
                _ => Err(self.err(ErrorKind::Evaluation, "only numbers can be negated", at)),
            };
        }
        Ok(v)
    }
}

/// The digits of `0x1F` / `0o17` / `017`.
fn strip_prefix(text: &str, letter: char) -> &str {
    let t = text.strip_prefix('0').unwrap_or(text);
    t.strip_prefix(letter)
        .or_else(|| t.strip_prefix(letter.to_ascii_uppercase()))
        .unwrap_or(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(q: &str) -> Query {
        parse(q, 100_000).unwrap_or_else(|e| panic!("{q}: {e}"))
    }

    fn fails(q: &str) -> QueryError {
        parse(q, 100_000).expect_err(q)
    }

    #[test]
    fn the_subset_parses() {
        let q = ok("MATCH (a:`ai:X` {iri: 'x'})-[r:A|B*1..3]->(b), (c) \
                    OPTIONAL MATCH (b)<-[:C]-(d WHERE d.x > 1) \
                    WITH a, count(DISTINCT b) AS n WHERE n > 0 \
                    UNWIND [1, 2] AS i \
                    RETURN DISTINCT a.iri AS iri, n, i ORDER BY n DESC, iri SKIP 1 LIMIT 2");
        assert_eq!(q.clauses.len(), 5);
        let Clause::Match(m) = &q.clauses[0] else {
            panic!()
        };
        let (r, _) = &m.paths[0].steps[0];
        assert_eq!(r.length, Some((1, Some(3))));
        assert_eq!(r.direction, Direction::Right);
        let Clause::Return(p) = &q.clauses[4] else {
            panic!()
        };
        assert!(p.distinct && p.order[0].descending && !p.order[1].descending);
    }

    #[test]
    fn variable_length_bounds() {
        let len = |q: &str| {
            let q = ok(q);
            let Clause::Match(m) = &q.clauses[0] else {
                panic!()
            };
            m.paths[0].steps[0].0.length
        };
        assert_eq!(len("MATCH (a)-[*]->(b) RETURN a"), Some((1, None)));
        assert_eq!(len("MATCH (a)-[*2]->(b) RETURN a"), Some((2, Some(2))));
        assert_eq!(len("MATCH (a)-[*..3]->(b) RETURN a"), Some((1, Some(3))));
        assert_eq!(len("MATCH (a)-[*0..]->(b) RETURN a"), Some((0, None)));
        assert_eq!(len("MATCH (a)-->(b) RETURN a"), None);
        assert_eq!(
            fails("MATCH (a)-[*3..1]->(b) RETURN a").kind,
            ErrorKind::Semantic
        );
    }

    #[test]
    fn literals() {
        let q = ok("RETURN -9223372036854775808, 0x1F, -2.5, 'it''s', null, true");
        let Clause::Return(p) = &q.clauses[0] else {
            panic!()
        };
        let lits: Vec<_> = p
            .items
            .iter()
            .map(|i| match &i.expr.kind {
                ExprKind::Literal(v) => v.clone(),
                other => panic!("{other:?}"),
            })
            .collect();
        assert_eq!(
            lits,
            vec![
                Value::Int(i64::MIN),
                Value::Int(31),
                Value::Float(-2.5),
                Value::from("it's"),
                Value::Null,
                Value::Bool(true)
            ]
        );
        assert_eq!(fails("RETURN 9223372036854775808").kind, ErrorKind::Syntax);
    }

    #[test]
    fn outside_the_subset_is_named_with_its_position() {
        for (q, needle) in [
            ("MATCH (n) RETURN n.a =~ 'x'", "=~"),
            ("MATCH (n) RETURN $p", "parameters"),
            ("MATCH p = (n)-->(m) RETURN p", "path variable"),
            ("MATCH (n) RETURN n UNION MATCH (n) RETURN n", "UNION"),
            ("MATCH (n) RETURN CASE WHEN true THEN 1 END", "CASE"),
            ("MATCH (n) RETURN [x IN [1] | x]", "comprehension"),
            ("MATCH (n) WHERE (n)-->() RETURN n", "pattern"),
            ("MATCH (n) RETURN apoc.text.join([], '')", "namespaced"),
        ] {
            let e = fails(q);
            assert_eq!(e.kind, ErrorKind::Unsupported, "{q}: {e}");
            assert!(e.message.contains(needle), "{q}: {e}");
            assert!(e.position.is_some(), "{q}");
        }
        let e = fails("MATCH (n) RETURN n.a =~ 'x'");
        assert_eq!(e.position.map(|p| p.column), Some(22));
    }

    #[test]
    fn a_query_ends_with_return() {
        assert_eq!(fails("MATCH (n)").kind, ErrorKind::Semantic);
        assert_eq!(fails("MATCH (n) WITH n").kind, ErrorKind::Semantic);
        assert_eq!(fails("").kind, ErrorKind::Syntax);
        assert_eq!(fails("MATCH (n RETURN n").kind, ErrorKind::Syntax);
        assert_eq!(fails(&"x".repeat(200_000)).kind, ErrorKind::TooLong);
    }

    #[test]
    fn long_patterns_and_many_clauses_are_refused_not_overflowed() {
        let q = format!("MATCH (a){} RETURN a", "-->()".repeat(500));
        assert_eq!(fails(&q).kind, ErrorKind::Unsupported);
        let q = format!("MATCH (a){} RETURN a", ", ()".repeat(500));
        assert_eq!(fails(&q).kind, ErrorKind::Unsupported);
        // Past the tokens the parser is given: refused before it runs.
        let q = format!("MATCH (a){} RETURN a", "-->()".repeat(3_000));
        assert_eq!(fails(&q).kind, ErrorKind::TooLong);
        let q = format!("{}RETURN 1", "WITH 1 AS x ".repeat(60));
        assert_eq!(fails(&q).kind, ErrorKind::Unsupported);
        ok(&format!("MATCH (a){} RETURN a", "-->()".repeat(40)));
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let q = format!("RETURN {}1{}", "(".repeat(500), ")".repeat(500));
        assert_eq!(fails(&q).kind, ErrorKind::Unsupported);
        let q = format!("RETURN {}true", "NOT ".repeat(500));
        assert_eq!(fails(&q).kind, ErrorKind::Unsupported);
    }
}
