//! The values a query reads and returns, and Cypher's rules for comparing them:
//! three-valued equality and ordering for predicates, one total order for sorting
//! and grouping. Knows nothing of graphs beyond node and relationship ids.

use std::cmp::Ordering;
use std::collections::BTreeMap;
use std::fmt;

use super::graph::{EdgeId, NodeId};

/// A property value or a value a query computes.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// The absent value.
    Null,
    /// A boolean.
    Bool(bool),
    /// A 64-bit integer.
    Int(i64),
    /// A 64-bit float.
    Float(f64),
    /// A string.
    String(String),
    /// A list of values.
    List(Vec<Value>),
    /// A node of the graph queried.
    Node(NodeId),
    /// A relationship of the graph queried.
    Relationship(EdgeId),
    /// A map from keys to values.
    Map(BTreeMap<String, Value>),
}

impl Value {
    /// True for `Null`.
    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The type's name, for error messages.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Null => "null",
            Value::Bool(_) => "boolean",
            Value::Int(_) => "integer",
            Value::Float(_) => "float",
            Value::String(_) => "string",
            Value::List(_) => "list",
            Value::Node(_) => "node",
            Value::Relationship(_) => "relationship",
            Value::Map(_) => "map",
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_string())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Int(i)
    }
}

impl From<f64> for Value {
    fn from(x: f64) -> Value {
        Value::Float(x)
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(b) => write!(f, "{b}"),
            Value::Int(i) => write!(f, "{i}"),
            Value::Float(x) => write!(f, "{x:?}"),
            Value::String(s) => write!(f, "{s:?}"),
            Value::List(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            Value::Node(n) => write!(f, "node({})", n.index()),
            Value::Relationship(e) => write!(f, "relationship({})", e.index()),
            Value::Map(m) => {
                f.write_str("{")?;
                for (i, (k, v)) in m.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{k}: {v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

/// Cypher equality: `None` (null) when either side is null or a null inside lists
/// or maps decides it; different types are unequal; integers and floats compare
/// by value.
pub fn equals(a: &Value, b: &Value) -> Option<bool> {
    match (a, b) {
        (Value::Null, _) | (_, Value::Null) => None,
        (Value::Bool(x), Value::Bool(y)) => Some(x == y),
        (Value::String(x), Value::String(y)) => Some(x == y),
        (Value::Node(x), Value::Node(y)) => Some(x == y),
        (Value::Relationship(x), Value::Relationship(y)) => Some(x == y),
        (Value::List(x), Value::List(y)) => {
            if x.len() != y.len() {
                return Some(false);
            }
            let mut unknown = false;
            for (p, q) in x.iter().zip(y) {
                match equals(p, q) {
                    Some(false) => return Some(false),
                    None => unknown = true,
                    Some(true) => {}
                }
            }
            if unknown {
                None
            } else {
                Some(true)
            }
        }
        (Value::Map(x), Value::Map(y)) => {
            if x.len() != y.len() || x.keys().ne(y.keys()) {
                return Some(false);
            }
            let mut unknown = false;
            for (p, q) in x.values().zip(y.values()) {
                match equals(p, q) {
                    Some(false) => return Some(false),
                    None => unknown = true,
                    Some(true) => {}
                }
            }
            if unknown {
                None
            } else {
                Some(true)
            }
        }
        _ => match (number(a), number(b)) {
            (Some(x), Some(y)) => Some(compare_numbers(x, y) == Ordering::Equal),
            _ => Some(false),
        },
    }
}

/// Cypher ordering for `<`, `<=`, `>`, `>=`: numbers with numbers, strings with
/// strings, booleans with booleans; anything else (nulls included) is `None`.
pub fn compare(a: &Value, b: &Value) -> Option<Ordering> {
    match (a, b) {
        (Value::String(x), Value::String(y)) => Some(x.cmp(y)),
        (Value::Bool(x), Value::Bool(y)) => Some(x.cmp(y)),
        _ => match (number(a), number(b)) {
            (Some(x), Some(y)) if !is_nan(x) && !is_nan(y) => Some(compare_numbers(x, y)),
            _ => None,
        },
    }
}

#[derive(Clone, Copy)]
enum Num {
    I(i64),
    F(f64),
}

fn number(v: &Value) -> Option<Num> {
    match v {
        Value::Int(i) => Some(Num::I(*i)),
        Value::Float(x) => Some(Num::F(*x)),
        _ => None,
    }
}

fn is_nan(n: Num) -> bool {
    matches!(n, Num::F(x) if x.is_nan())
}

fn compare_numbers(a: Num, b: Num) -> Ordering {
    match (a, b) {
        (Num::I(x), Num::I(y)) => x.cmp(&y),
        (Num::I(x), Num::F(y)) => (x as f64).total_cmp(&y),
        (Num::F(x), Num::I(y)) => x.total_cmp(&(y as f64)),
        (Num::F(x), Num::F(y)) => {
            // Zero's two signs are one number to a query.
            if x == y {
                Ordering::Equal
            } else {
                x.total_cmp(&y)
            }
        }
    }
}

/// Rank of a type in the sort order: maps, nodes, relationships, lists, strings,
/// booleans, numbers, null last (ascending), as Cypher orders mixed values.
fn rank(v: &Value) -> u8 {
    match v {
        Value::Map(_) => 0,
        Value::Node(_) => 1,
        Value::Relationship(_) => 2,
        Value::List(_) => 3,
        Value::String(_) => 4,
        Value::Bool(_) => 5,
        Value::Int(_) | Value::Float(_) => 6,
        Value::Null => 7,
    }
}

/// The total order used by ORDER BY, DISTINCT and grouping. Equal under it means
/// "the same value": an integer and a float of equal value are told apart (the
/// integer first) so that grouping never merges them.
pub fn total_order(a: &Value, b: &Value) -> Ordering {
    let by_rank = rank(a).cmp(&rank(b));
    if by_rank != Ordering::Equal {
        return by_rank;
    }
    match (a, b) {
        (Value::Map(x), Value::Map(y)) => {
            for ((kx, vx), (ky, vy)) in x.iter().zip(y) {
                let o = kx.cmp(ky).then_with(|| total_order(vx, vy));
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::Node(x), Value::Node(y)) => x.cmp(y),
        (Value::Relationship(x), Value::Relationship(y)) => x.cmp(y),
        (Value::List(x), Value::List(y)) => {
            for (p, q) in x.iter().zip(y) {
                let o = total_order(p, q);
                if o != Ordering::Equal {
                    return o;
                }
            }
            x.len().cmp(&y.len())
        }
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Int(x), Value::Int(y)) => x.cmp(y),
        (Value::Float(x), Value::Float(y)) => x.total_cmp(y),
        (Value::Int(x), Value::Float(y)) => (*x as f64).total_cmp(y).then(Ordering::Less),
        (Value::Float(x), Value::Int(y)) => x.total_cmp(&(*y as f64)).then(Ordering::Greater),
        _ => Ordering::Equal,
    }
}

/// A value ordered by [`total_order`], for use as a key of ordered maps and sets.
#[derive(Clone, Debug)]
pub(crate) struct Key(pub Vec<Value>);

impl PartialEq for Key {
    fn eq(&self, other: &Key) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Key {}

impl PartialOrd for Key {
    fn partial_cmp(&self, other: &Key) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Key {
    fn cmp(&self, other: &Key) -> Ordering {
        for (a, b) in self.0.iter().zip(&other.0) {
            let o = total_order(a, b);
            if o != Ordering::Equal {
                return o;
            }
        }
        self.0.len().cmp(&other.0.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equality_is_three_valued() {
        assert_eq!(equals(&Value::Int(1), &Value::Float(1.0)), Some(true));
        assert_eq!(equals(&Value::Int(1), &Value::from("1")), Some(false));
        assert_eq!(equals(&Value::Null, &Value::Null), None);
        let l1 = Value::List(vec![Value::Int(1), Value::Null]);
        let l2 = Value::List(vec![Value::Int(2), Value::Null]);
        assert_eq!(equals(&l1, &l2), Some(false));
        assert_eq!(equals(&l1, &l1), None);
    }

    #[test]
    fn comparison_refuses_mixed_types() {
        assert_eq!(
            compare(&Value::Int(1), &Value::Float(1.5)),
            Some(Ordering::Less)
        );
        assert_eq!(compare(&Value::from("a"), &Value::Int(1)), None);
        assert_eq!(compare(&Value::Float(f64::NAN), &Value::Int(1)), None);
    }

    #[test]
    fn total_order_puts_null_last_and_separates_int_from_float() {
        let mut v = vec![
            Value::Null,
            Value::Int(2),
            Value::from("b"),
            Value::Float(1.0),
            Value::Int(1),
            Value::Bool(true),
        ];
        v.sort_by(total_order);
        assert_eq!(
            v,
            vec![
                Value::from("b"),
                Value::Bool(true),
                Value::Int(1),
                Value::Float(1.0),
                Value::Int(2),
                Value::Null
            ]
        );
        assert_ne!(Key(vec![Value::Int(1)]), Key(vec![Value::Float(1.0)]));
    }
}
