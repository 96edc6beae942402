//! The one error vocabulary shared by every layer, and its mapping to envelope codes.
//!
//! Store, service and tool code all answer `Result<T, Error>`; only `mcp/` turns an
//! `Error` into an envelope. Each variant is agent-fixable except `Internal`, whose
//! full cause is logged on stderr and answered briefly.

use serde_json::{json, Value};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Bad input: a parameter of the wrong type, out of bounds, malformed.
    #[error("{message}")]
    Validation {
        message: String,
        parameter: Option<String>,
    },
    #[error("{entity} {id} not found")]
    NotFound { entity: &'static str, id: String },
    /// Optimistic-locking failure: the caller read an older version.
    #[error("{entity} {id} is at version {current}, you sent {sent}: re-read it and retry")]
    Conflict {
        entity: &'static str,
        id: String,
        current: i64,
        sent: i64,
    },
    /// A rule spanning several rows would break (cross-project link, cycle, ...).
    #[error("{message}")]
    Invariant {
        message: String,
        details: Option<Value>,
    },
    /// The request is well formed but not allowed in the current state.
    #[error("{message}")]
    InvalidOperation {
        message: String,
        details: Option<Value>,
    },
    /// The item is blocked by unfinished work.
    #[error("{message}")]
    Blocked {
        message: String,
        details: Option<Value>,
    },
    /// SQLite stayed locked by another connection past `busy_timeout`, or refused a
    /// lock that cannot be waited for. Answered as `INTERNAL_ERROR`; kept apart from
    /// `Internal` so callers that can retry (opening a new file) see it by type.
    #[error("internal error: the database stayed locked by another writer; retry the call")]
    Busy,
    #[error("internal error: {0}")]
    Internal(String),
}

impl Error {
    pub fn validation(parameter: &str, message: impl Into<String>) -> Self {
        Error::Validation {
            message: format!("parameter '{parameter}': {}", message.into()),
            parameter: Some(parameter.to_string()),
        }
    }

    pub fn invalid(message: impl Into<String>) -> Self {
        Error::InvalidOperation {
            message: message.into(),
            details: None,
        }
    }

    pub fn invariant(message: impl Into<String>) -> Self {
        Error::Invariant {
            message: message.into(),
            details: None,
        }
    }

    pub fn not_found(entity: &'static str, id: impl Into<String>) -> Self {
        Error::NotFound {
            entity,
            id: id.into(),
        }
    }

    pub fn code(&self) -> &'static str {
        match self {
            Error::Validation { .. } => "VALIDATION_ERROR",
            Error::NotFound { .. } => "NOT_FOUND",
            Error::Conflict { .. } => "CONFLICT",
            Error::Invariant { .. } => "INVARIANT_VIOLATION",
            Error::InvalidOperation { .. } => "INVALID_OPERATION",
            Error::Blocked { .. } => "BLOCKED",
            Error::Busy | Error::Internal(_) => "INTERNAL_ERROR",
        }
    }

    pub fn details(&self) -> Option<Value> {
        match self {
            Error::Validation {
                parameter: Some(p), ..
            } => Some(json!({ "parameter": p })),
            Error::Validation {
                parameter: None, ..
            } => None,
            Error::NotFound { entity, id } => Some(json!({ "entity": entity, "id": id })),
            Error::Conflict {
                entity,
                id,
                current,
                sent,
            } => Some(
                json!({ "entity": entity, "id": id, "currentVersion": current, "sentVersion": sent }),
            ),
            Error::Invariant { details, .. }
            | Error::InvalidOperation { details, .. }
            | Error::Blocked { details, .. } => details.clone(),
            Error::Busy | Error::Internal(_) => None,
        }
    }
}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        // A busy database after busy_timeout is the one storage failure an agent can
        // act on (retry); everything else is ours to fix.
        if let sqlx::Error::Database(db) = &e {
            if db.code().as_deref() == Some("5") || db.message().contains("database is locked") {
                return Error::Busy;
            }
        }
        tracing::error!(error = %e, "storage failure");
        Error::Internal(format!("storage failure: {e}"))
    }
}

impl From<sqlx::migrate::MigrateError> for Error {
    fn from(e: sqlx::migrate::MigrateError) -> Self {
        Error::Internal(format!("migration failed: {e}"))
    }
}
