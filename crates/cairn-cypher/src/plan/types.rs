//! What a plan is made of: labels, functions, expressions and patterns over
//! interned ids and row slots.

use super::*;

/// A label (or type) test over interned ids.
#[derive(Clone, Debug)]
pub(crate) enum PLabels {
    /// One name; `None` when the graph holds no node (edge) with it.
    Id(Option<u32>),
    And(Vec<PLabels>),
    Or(Vec<PLabels>),
    Not(Box<PLabels>),
    /// At least one label (on an edge: any type).
    Any,
}

/// Functions that are not aggregates.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Func {
    Labels,
    Type,
    Id,
    Size,
    ToLower,
    ToUpper,
    ToString,
    Coalesce,
    Keys,
    Properties,
    StartNode,
    EndNode,
    Head,
    Last,
    Exists,
}

/// Aggregate functions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum AggFunc {
    Count,
    Collect,
    Min,
    Max,
    Sum,
    Avg,
}

/// The supported functions (names match without regard to case), aggregates marked.
pub(super) const FUNCTIONS: &[(&str, Option<Func>, Option<AggFunc>)] = &[
    ("labels", Some(Func::Labels), None),
    ("type", Some(Func::Type), None),
    ("id", Some(Func::Id), None),
    ("size", Some(Func::Size), None),
    ("toLower", Some(Func::ToLower), None),
    ("toUpper", Some(Func::ToUpper), None),
    ("toString", Some(Func::ToString), None),
    ("coalesce", Some(Func::Coalesce), None),
    ("keys", Some(Func::Keys), None),
    ("properties", Some(Func::Properties), None),
    ("startNode", Some(Func::StartNode), None),
    ("endNode", Some(Func::EndNode), None),
    ("head", Some(Func::Head), None),
    ("last", Some(Func::Last), None),
    ("exists", Some(Func::Exists), None),
    ("count", None, Some(AggFunc::Count)),
    ("collect", None, Some(AggFunc::Collect)),
    ("min", None, Some(AggFunc::Min)),
    ("max", None, Some(AggFunc::Max)),
    ("sum", None, Some(AggFunc::Sum)),
    ("avg", None, Some(AggFunc::Avg)),
];

/// A compiled expression. `at` is the byte offset errors point to.
#[derive(Clone, Debug)]
pub(crate) enum PExpr {
    Const(Value),
    Slot(usize),
    Prop {
        base: Box<PExpr>,
        key: Option<u32>,
        name: String,
        at: usize,
    },
    List(Vec<PExpr>),
    Map(Vec<(String, PExpr)>),
    Not(Box<PExpr>, usize),
    Neg(Box<PExpr>, usize),
    Binary(BinaryOp, Box<PExpr>, Box<PExpr>, usize),
    IsNull(Box<PExpr>, bool),
    HasLabels(Box<PExpr>, PLabels, bool, usize),
    Call(Func, Vec<PExpr>, usize),
    /// The value of the projection's aggregate with this index.
    Agg(usize),
}

/// One aggregate of a projection.
#[derive(Clone, Debug)]
pub(crate) struct Agg {
    pub func: AggFunc,
    pub distinct: bool,
    /// `None` for `count(*)`.
    pub arg: Option<PExpr>,
    pub at: usize,
}

#[derive(Clone, Debug)]
pub(crate) struct PNode {
    pub slot: usize,
    /// Introduced by this MATCH: unbound while its slot is null.
    pub fresh: bool,
    pub labels: Option<PLabels>,
    pub props: Vec<(Option<u32>, PExpr)>,
    pub predicate: Option<PExpr>,
}

#[derive(Clone, Debug)]
pub(crate) struct PRel {
    pub slot: usize,
    pub fresh: bool,
    pub types: Option<PLabels>,
    pub direction: Direction,
    /// Hop bounds of a variable-length relationship, capped.
    pub length: Option<(u32, u32)>,
    pub props: Vec<(Option<u32>, PExpr)>,
    pub predicate: Option<PExpr>,
}

/// A path in the order it is matched: `nodes.len() == rels.len() + 1`.
#[derive(Clone, Debug)]
pub(crate) struct PPath {
    pub nodes: Vec<PNode>,
    pub rels: Vec<PRel>,
}

#[derive(Clone, Debug)]
pub(crate) struct PMatch {
    pub optional: bool,
    pub paths: Vec<PPath>,
    pub predicate: Option<PExpr>,
}

#[derive(Clone, Debug)]
pub(crate) enum Read {
    Match(PMatch),
    Unwind { expr: PExpr, slot: usize },
    Filter(PExpr),
}

#[derive(Clone, Debug)]
pub(crate) struct PProjection {
    /// Each item's expression and the slot it is written to.
    pub items: Vec<(PExpr, usize)>,
    /// Aggregates; when non-empty, items without one are the grouping keys.
    pub aggs: Vec<Agg>,
    /// Which items hold an aggregate.
    pub aggregating_items: Vec<bool>,
    pub distinct: bool,
    /// ORDER BY keys over the projected row, and whether descending.
    pub order: Vec<(PExpr, bool)>,
    pub skip: usize,
    pub limit: Option<usize>,
    /// Projected rows keep the input row's slots (so ORDER BY can read them).
    pub keep_input: bool,
}

#[derive(Clone, Debug)]
pub(crate) struct Segment {
    pub reads: Vec<Read>,
    pub projection: PProjection,
}

/// A query ready to evaluate.
#[derive(Clone, Debug)]
pub(crate) struct Plan {
    pub segments: Vec<Segment>,
    pub slots: usize,
    pub columns: Vec<String>,
    pub notes: Vec<String>,
}

/// Why a query could not be planned: names the schema does not accept (which a
/// repair may fix), or anything else.
#[derive(Debug)]
pub(crate) enum Failure {
    Names(Vec<NameProblem>),
    Error(QueryError),
}

impl From<QueryError> for Failure {
    fn from(e: QueryError) -> Failure {
        Failure::Error(e)
    }
}
