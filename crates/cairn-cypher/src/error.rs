//! Errors of the query language: where in the text, what kind, which names were
//! unknown and what they may have meant. Knows nothing of how a caller reports them.

use std::fmt;

/// A place in the query text: byte offset, and 1-based line and column (the column
/// counts characters, not bytes, so it matches what an editor shows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Position {
    /// Byte offset into the query text.
    pub offset: usize,
    /// Line, from 1.
    pub line: usize,
    /// Column in characters, from 1.
    pub column: usize,
}

impl Position {
    /// The position of byte `offset` in `text`; an offset past the end or inside a
    /// character is moved back to the nearest character boundary.
    pub fn at(text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while offset > 0 && !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let before = text.get(..offset).unwrap_or("");
        let line = before.matches('\n').count() + 1;
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let column = before.get(line_start..).map_or(0, |s| s.chars().count()) + 1;
        Position {
            offset,
            line,
            column,
        }
    }
}

impl fmt::Display for Position {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "line {}, column {}", self.line, self.column)
    }
}

/// What went wrong, broadly; every kind but `BindingLimit`, `Deadline`,
/// `MemoryLimit` and `Evaluation` is something the author of the query can fix by
/// rewriting it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// The text is not openCypher.
    Syntax,
    /// Valid openCypher outside the supported subset.
    Unsupported,
    /// A writing clause (CREATE, MERGE, SET, DELETE, REMOVE, CALL, LOAD CSV, FOREACH).
    ReadOnly,
    /// A label, relationship type or property key the schema does not know.
    UnknownName,
    /// A query that parses but means nothing: an undefined variable, an aggregate
    /// where none may be, a duplicate column.
    Semantic,
    /// The query text is longer than the caller allows.
    TooLong,
    /// The evaluation produced more intermediate bindings than the caller allows.
    BindingLimit,
    /// The evaluation ran past the caller's deadline.
    Deadline,
    /// The evaluation built or kept more than the caller's memory budget, or a value
    /// nested too deep.
    MemoryLimit,
    /// A value of the wrong type met an operator or function, or arithmetic overflowed.
    Evaluation,
}

impl ErrorKind {
    /// A short lower-case name, for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Syntax => "syntax error",
            ErrorKind::Unsupported => "not supported",
            ErrorKind::ReadOnly => "read-only",
            ErrorKind::UnknownName => "unknown name",
            ErrorKind::Semantic => "invalid query",
            ErrorKind::TooLong => "query too long",
            ErrorKind::BindingLimit => "too many bindings",
            ErrorKind::Deadline => "deadline exceeded",
            ErrorKind::MemoryLimit => "memory budget exceeded",
            ErrorKind::Evaluation => "evaluation error",
        }
    }
}

/// The three kinds of names a query is validated against.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum NameKind {
    /// A node label (`:OwlClass`).
    Label,
    /// A relationship type (`:HAS_PART`).
    RelationshipType,
    /// A property key (`n.preferredTerm`, `{iri: ...}`).
    PropertyKey,
}

impl NameKind {
    /// The kind as a phrase, for messages.
    pub fn as_str(self) -> &'static str {
        match self {
            NameKind::Label => "label",
            NameKind::RelationshipType => "relationship type",
            NameKind::PropertyKey => "property key",
        }
    }
}

impl fmt::Display for NameKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One name of a query the schema could not accept as written.
#[derive(Clone, Debug, PartialEq)]
pub struct NameProblem {
    /// Label, relationship type or property key.
    pub kind: NameKind,
    /// The name as written.
    pub name: String,
    /// Where it was written; `None` when the name did not come from query text
    /// (a traversal's relationship-type filter).
    pub position: Option<Position>,
    /// Byte range of the name in the text, backticks included.
    pub span: (usize, usize),
    /// True when the name is a local name shared by several labels: `suggestions`
    /// then lists them all and none is chosen.
    pub ambiguous: bool,
    /// The nearest known names, best first.
    pub suggestions: Vec<String>,
    /// The name a repair would put in its place, when one candidate is clearly best.
    pub repair: Option<String>,
}

impl fmt::Display for NameProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = self.position {
            write!(f, "{p}: ")?;
        }
        if self.ambiguous {
            write!(
                f,
                "{} `{}` is ambiguous: it is the local name of {}; write one of them in backticks",
                self.kind,
                self.name,
                self.suggestions.join(", ")
            )
        } else if self.suggestions.is_empty() {
            write!(f, "unknown {} `{}`", self.kind, self.name)
        } else {
            write!(
                f,
                "unknown {} `{}`; nearest: {}",
                self.kind,
                self.name,
                self.suggestions.join(", ")
            )
        }
    }
}

/// A misspelling that was repaired before the query ran.
#[derive(Clone, Debug, PartialEq)]
pub struct Repair {
    /// Label, relationship type or property key.
    pub kind: NameKind,
    /// The name as written.
    pub from: String,
    /// The name it was replaced with.
    pub to: String,
    /// Where it was written, in the text as it stood before this repair.
    pub position: Position,
}

impl fmt::Display for Repair {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}: {} `{}` read as `{}`",
            self.position, self.kind, self.from, self.to
        )
    }
}

/// Why a query was not answered.
#[derive(Clone, Debug, PartialEq)]
pub struct QueryError {
    /// The broad kind.
    pub kind: ErrorKind,
    /// One sentence saying what is wrong and, where possible, what to write instead.
    pub message: String,
    /// Where in `details.query` the problem is, when it has a place.
    pub position: Option<Position>,
    /// Unknown names, repairs made, the text positions refer to. Boxed so that
    /// the error stays small: every step of an evaluation returns a `Result`.
    pub details: Box<ErrorDetails>,
}

/// The parts of a [`QueryError`] beyond its kind, message and position.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct ErrorDetails {
    /// For `UnknownName`: every name the schema did not accept.
    pub problems: Vec<NameProblem>,
    /// Repairs made before the error was found.
    pub repairs: Vec<Repair>,
    /// The text the positions refer to (the query after any repairs).
    pub query: String,
}

impl QueryError {
    /// An error with a message and no position.
    pub fn new(kind: ErrorKind, message: impl Into<String>) -> QueryError {
        QueryError {
            kind,
            message: message.into(),
            position: None,
            details: Box::default(),
        }
    }

    /// An error at byte `offset` of `text`.
    pub fn at(
        kind: ErrorKind,
        message: impl Into<String>,
        text: &str,
        offset: usize,
    ) -> QueryError {
        let mut e = QueryError::new(kind, message).about(text);
        e.position = Some(Position::at(text, offset));
        e
    }

    /// The same error, about `text`.
    pub fn about(mut self, text: &str) -> QueryError {
        self.details.query = text.to_string();
        self
    }
}

impl fmt::Display for QueryError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.kind.as_str())?;
        if let Some(p) = self.position {
            write!(f, " at {p}")?;
        }
        write!(f, ": {}", self.message)?;
        for p in &self.details.problems {
            write!(f, "\n- {p}")?;
        }
        Ok(())
    }
}

impl std::error::Error for QueryError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_count_lines_and_characters() {
        let text = "MATCH (n)\nWHERE n.é = 1";
        let p = Position::at(text, text.find("= 1").unwrap());
        assert_eq!((p.line, p.column), (2, 11));
        assert_eq!(Position::at(text, 0).column, 1);
        // Inside the two bytes of `é`: moved back to its start.
        let e = text.find('é').unwrap();
        assert_eq!(Position::at(text, e + 1).offset, e);
        assert_eq!(Position::at(text, 10_000).offset, text.len());
        assert_eq!(Position::at("", 3).column, 1);
    }
}
