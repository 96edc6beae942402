//! The supported subset of openCypher as plain data: what `lower` builds from the
//! parser's tree and what `plan` reads. Names are strings with byte spans; nothing
//! here is resolved against a schema or a graph.

use super::value::Value;

/// A half-open byte range of the query text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Span {
    /// Inclusive start.
    pub start: usize,
    /// Exclusive end.
    pub end: usize,
}

/// A name as written (backticks removed) and where.
#[derive(Clone, Debug, PartialEq)]
pub struct Ident {
    /// The decoded name.
    pub name: String,
    /// Its extent, backticks included.
    pub span: Span,
}

/// A parsed read-only query.
#[derive(Clone, Debug, PartialEq)]
pub struct Query {
    /// The text it was parsed from; positions refer to it.
    pub source: String,
    /// The clauses in order; the last is a RETURN.
    pub clauses: Vec<Clause>,
}

/// A reading clause.
#[derive(Clone, Debug, PartialEq)]
pub enum Clause {
    /// `[OPTIONAL] MATCH patterns [WHERE predicate]`.
    Match(Match),
    /// `UNWIND list AS variable`.
    Unwind {
        /// The list.
        expr: Expr,
        /// The variable each element binds.
        var: Ident,
    },
    /// `WITH projection [WHERE predicate]`.
    With(Projection, Option<Expr>),
    /// `RETURN projection`.
    Return(Projection),
}

/// A MATCH clause.
#[derive(Clone, Debug, PartialEq)]
pub struct Match {
    /// OPTIONAL MATCH: a row without a match survives with nulls.
    pub optional: bool,
    /// Comma-separated path patterns.
    pub paths: Vec<PathPattern>,
    /// The WHERE predicate.
    pub predicate: Option<Expr>,
}

/// A chain `(a)-[r]->(b)...`.
#[derive(Clone, Debug, PartialEq)]
pub struct PathPattern {
    /// The first node.
    pub start: NodePattern,
    /// Each relationship with the node after it.
    pub steps: Vec<(RelPattern, NodePattern)>,
}

/// `(variable:Labels {key: value} WHERE predicate)`.
#[derive(Clone, Debug, PartialEq)]
pub struct NodePattern {
    /// The variable, if named.
    pub var: Option<Ident>,
    /// The label expression.
    pub labels: Option<LabelExpr>,
    /// Property equalities.
    pub props: Vec<(Ident, Expr)>,
    /// An inline WHERE.
    pub predicate: Option<Expr>,
    /// The whole pattern.
    pub span: Span,
}

/// Which way a relationship pattern points.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// `-->`: from the node before to the node after.
    Right,
    /// `<--`: from the node after to the node before.
    Left,
    /// `--` or `<-->`: either way.
    Either,
}

/// `-[variable:TYPES*min..max {key: value} WHERE predicate]->`.
#[derive(Clone, Debug, PartialEq)]
pub struct RelPattern {
    /// The variable, if named.
    pub var: Option<Ident>,
    /// The type expression (`:A|B`).
    pub types: Option<LabelExpr>,
    /// The direction.
    pub direction: Direction,
    /// For a variable-length pattern, the bounds in hops; `max` is `None` when
    /// unbounded (the caller's cap applies).
    pub length: Option<(u32, Option<u32>)>,
    /// Property equalities, checked on every hop.
    pub props: Vec<(Ident, Expr)>,
    /// An inline WHERE.
    pub predicate: Option<Expr>,
    /// The whole pattern.
    pub span: Span,
}

/// A boolean expression over labels (or, on relationships, types).
#[derive(Clone, Debug, PartialEq)]
pub enum LabelExpr {
    /// One name.
    Name(Ident),
    /// All of these (`:A:B`, `:A&B`).
    And(Vec<LabelExpr>),
    /// Any of these (`:A|B`).
    Or(Vec<LabelExpr>),
    /// Not this (`:!A`).
    Not(Box<LabelExpr>),
    /// Any label at all (`:%`).
    Any,
}

/// An expression and its extent.
#[derive(Clone, Debug, PartialEq)]
pub struct Expr {
    /// What it computes.
    pub kind: ExprKind,
    /// Where it was written.
    pub span: Span,
}

/// Prefix operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnaryOp {
    /// `NOT`.
    Not,
    /// `-`.
    Neg,
}

/// Infix operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinaryOp {
    /// `OR`.
    Or,
    /// `XOR`.
    Xor,
    /// `AND`.
    And,
    /// `=`.
    Eq,
    /// `<>`, `!=`.
    Ne,
    /// `<`.
    Lt,
    /// `<=`.
    Le,
    /// `>`.
    Gt,
    /// `>=`.
    Ge,
    /// `IN`.
    In,
    /// `STARTS WITH`.
    StartsWith,
    /// `ENDS WITH`.
    EndsWith,
    /// `CONTAINS`.
    Contains,
    /// `+`.
    Add,
    /// `-`.
    Sub,
    /// `*`.
    Mul,
    /// `/`.
    Div,
    /// `%`.
    Rem,
    /// `^`.
    Pow,
    /// `||`.
    Concat,
}

/// The forms of expression the subset supports.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A literal.
    Literal(Value),
    /// A variable.
    Var(String),
    /// `base.key`.
    Property(Box<Expr>, Ident),
    /// `[a, b]`.
    List(Vec<Expr>),
    /// `{k: v}`.
    Map(Vec<(Ident, Expr)>),
    /// A prefix operator.
    Unary(UnaryOp, Box<Expr>),
    /// An infix operator.
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    /// `e IS NULL` (`negated`: `IS NOT NULL`).
    IsNull {
        /// The tested expression.
        expr: Box<Expr>,
        /// True for IS NOT NULL.
        negated: bool,
    },
    /// `n:Label` in an expression.
    HasLabels {
        /// The tested expression.
        expr: Box<Expr>,
        /// The labels.
        labels: LabelExpr,
        /// True for `IS NOT :Label`.
        negated: bool,
    },
    /// A function call; `star` for `count(*)`.
    Call {
        /// The function name as written.
        name: Ident,
        /// `f(DISTINCT x)`.
        distinct: bool,
        /// The arguments.
        args: Vec<Expr>,
        /// `count(*)`.
        star: bool,
    },
}

/// The body of WITH and RETURN.
#[derive(Clone, Debug, PartialEq)]
pub struct Projection {
    /// `DISTINCT`.
    pub distinct: bool,
    /// `*` before the items.
    pub star: bool,
    /// The items.
    pub items: Vec<ProjectionItem>,
    /// ORDER BY keys.
    pub order: Vec<SortItem>,
    /// SKIP.
    pub skip: Option<Expr>,
    /// LIMIT.
    pub limit: Option<Expr>,
    /// The clause's extent.
    pub span: Span,
}

/// One projected expression.
#[derive(Clone, Debug, PartialEq)]
pub struct ProjectionItem {
    /// The expression.
    pub expr: Expr,
    /// `AS alias`.
    pub alias: Option<Ident>,
}

/// One ORDER BY key.
#[derive(Clone, Debug, PartialEq)]
pub struct SortItem {
    /// The key.
    pub expr: Expr,
    /// DESC.
    pub descending: bool,
}
