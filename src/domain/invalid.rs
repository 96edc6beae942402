//! The domain's error: a value that breaks one of the domain's rules, and the field
//! it is about. It knows no envelope and no store; `error::Error` converts it into a
//! `VALIDATION_ERROR` naming the field.

/// A value that breaks a rule: the field it was given as (the name the caller passed
/// in) and what is wrong with it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid {
    pub field: String,
    pub problem: String,
}

impl Invalid {
    /// `field` is a [`super::field::Field`], or the name `mcp` was given it as.
    pub fn new(field: impl std::fmt::Display, problem: impl Into<String>) -> Self {
        Invalid {
            field: field.to_string(),
            problem: problem.into(),
        }
    }
}

impl std::fmt::Display for Invalid {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "parameter '{}': {}", self.field, self.problem)
    }
}

impl std::error::Error for Invalid {}
