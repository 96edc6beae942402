//! The error of the domain and service layers, and its envelope codes.
//!
//! The store has its own error (`store::Error`), converted here; only `mcp/` turns an
//! `Error` into an envelope, with its [`Details`] as JSON. Each variant is
//! agent-fixable except `Unexpected`, made by [`Error::Internal`]: its cause is logged
//! on stderr beside an id, and the answer carries the id alone.

use crate::domain::container::Dependency;
use crate::domain::Status;

pub type Result<T, E = Error> = std::result::Result<T, E>;

/// What an error carries besides its message, as typed facts; `mcp::envelope` turns
/// each into the `error.details` an agent reads.
#[derive(Debug, Clone)]
pub enum Details {
    /// Making this entity a parent would close a BELONGS_TO cycle.
    CycleThrough { parent_id: String },
    /// The reference is the entity's last one.
    LastReference {
        entity_id: String,
        reference_id: String,
    },
    /// A symbol that is not in the document, and (some of) those that are.
    SymbolMissing {
        symbol: String,
        document_path: String,
        symbols: Vec<String>,
    },
    /// A name several symbols of the document carry: each one's name path, lines
    /// and kind.
    SymbolAmbiguous {
        symbol: String,
        document_path: String,
        candidates: Vec<(String, i64, i64, &'static str)>,
    },
    /// An anchor that is no heading of the document.
    AnchorMissing {
        anchor: String,
        document_path: String,
    },
    /// A document gone from the working tree.
    DocumentMissing { document_path: String },
    /// The entities (id, name) a reference is still attached to.
    AttachedEntities(Vec<(String, String)>),
    /// The category of that name and scope that exists already.
    CategoryExists { category_id: String },
    /// Child entities (id, name, scope) in the way of a delete.
    Children(Vec<(String, String, &'static str)>),
    /// How many tasks of a feature are still open.
    OpenTasks(usize),
    /// The item's (terminal) status.
    Status(Status),
    /// The open blockers of an item.
    Blockers(Vec<Dependency>),
    /// Rows a pipeline change would strand: group (`task:REVIEW`), how many, and the
    /// state they would move to.
    Stranded(Vec<(String, i64, Status)>),
    /// An atom's molecule is in another project.
    MoleculeProject {
        molecule_project_id: String,
        project_id: String,
    },
    /// A related node is in another project.
    RelatedProject { id: String, project_id: String },
    /// Section ids not found, and ids of sections of another entity.
    Sections {
        missing: Vec<String>,
        foreign: Vec<String>,
    },
    /// What a container still holds.
    Contents { features: i64, tasks: i64 },
    /// A query the ontology refused: where, what kind, every unknown name with the
    /// nearest known ones, and the repairs already made; for a query stopped by a
    /// bound, the config file's setting that sets it and its value.
    Query(
        Box<crate::domain::ontology_query::QueryError>,
        Option<(&'static str, u64)>,
    ),
    /// Axioms that make the ontology inconsistent or classes unsatisfiable, with the
    /// asserted axioms that cause it.
    Inconsistent(Box<Clash>),
    /// A page below the minimum quality: its score, the minimum, and the missing
    /// fields by tier.
    Quality {
        score: f32,
        min: f32,
        missing: Vec<(u8, String)>,
    },
    /// Problems in pages or documents, each with file, line and column.
    Problems(Vec<crate::domain::ontology::Problem>),
}

/// Why axioms were refused as inconsistent: the classes left unsatisfiable, whether
/// the whole ontology became inconsistent, and a justification (each asserted axiom
/// as OWL functional syntax with the page and line it is on; a proposal's own axioms
/// name the proposed page).
#[derive(Debug, Clone, PartialEq)]
pub struct Clash {
    pub consistent: bool,
    pub unsatisfiable: Vec<String>,
    pub justification: Vec<(String, String, usize)>,
}

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
    /// Not found, with the known names closest to the one asked for.
    #[error("{message}")]
    NotFoundNear {
        entity: &'static str,
        id: String,
        message: String,
        nearest: Vec<String>,
    },
    /// Bad input with facts that help fix it (a query's position and nearest names,
    /// a page's missing fields).
    #[error("{message}")]
    ValidationDetails {
        message: String,
        parameter: String,
        details: Details,
    },
    /// Optimistic-locking failure: the caller read an older version.
    #[error(
        "{entity} {}{id} is at version {current}, you sent {sent}: re-read it and retry",
        crate::domain::text::quoted(name)
    )]
    Conflict {
        entity: &'static str,
        id: String,
        /// The row's name or title, so the message says which one.
        name: Option<String>,
        current: i64,
        sent: i64,
    },
    /// A rule spanning several rows would break (cross-project link, cycle, ...).
    #[error("{message}")]
    Invariant {
        message: String,
        details: Option<Details>,
    },
    /// The request is well formed but not allowed in the current state.
    #[error("{message}")]
    InvalidOperation {
        message: String,
        details: Option<Details>,
    },
    /// The item is blocked by unfinished work.
    #[error("{message}")]
    Blocked {
        message: String,
        details: Option<Details>,
    },
    /// The call's agent holds a read token and the tool writes: nothing ran.
    #[error("{message}")]
    Forbidden { message: String, agent: String },
    /// Another process held the database's write lock past the busy timeout: the
    /// call changed nothing and may simply be made again.
    #[error("the database stayed locked by another writer past the busy timeout; nothing was written: retry the call")]
    Busy,
    /// The disk (or the database's configured size limit) is full: nothing was
    /// written; an operator must free space before writes succeed again.
    #[error("the database cannot grow: its disk (or its configured size limit) is full; nothing was written: free space, then retry")]
    StorageFull,
    /// The database file or its directory became read-only.
    #[error("the database is read-only (file, directory or disk); nothing was written: make it writable for this user, then retry")]
    ReadOnly,
    /// A failure no agent can fix (a bug, a broken database, a tool that failed
    /// under Cairn): made only by [`Error::Internal`], which logs its cause.
    #[error("{0}")]
    Unexpected(Incident),
}

/// What an agent sees of an internal failure: an id, never the cause. The cause
/// (sqlx's text, SQL, file paths, git's output, a panic's message) goes to the
/// server's log (stderr) once, beside the same id, when the incident is made, so an
/// operator finds it from the id an agent reports.
/// Only [`Error::Internal`] makes one (its field is private), so no incident goes
/// unlogged.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Incident {
    id: String,
}

impl Incident {
    /// The id the log's line for it carries.
    pub fn id(&self) -> &str {
        &self.id
    }
}

impl std::fmt::Display for Incident {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "internal error {}: the server failed unexpectedly; its log has the cause under this id",
            self.id
        )
    }
}

impl Error {
    /// An internal failure: logs `cause` on stderr beside a new short id and answers
    /// an [`Error::Unexpected`] carrying only that id. Every internal error passes
    /// through here. (Named like the variant it replaced, so that the many places
    /// raising one read as before.)
    #[allow(non_snake_case)]
    pub fn Internal(cause: String) -> Error {
        let id = incident_id();
        tracing::error!(id = %id, cause = %cause, "internal error");
        Error::Unexpected(Incident { id })
    }

    /// Bad input in `parameter`: a [`crate::domain::field::Field`] where a service
    /// names it (its wire name comes from `mcp::names`), a name where `mcp` does.
    pub fn validation(parameter: impl std::fmt::Display, message: impl Into<String>) -> Self {
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
            Error::Validation { .. } | Error::ValidationDetails { .. } => "VALIDATION_ERROR",
            Error::NotFound { .. } | Error::NotFoundNear { .. } => "NOT_FOUND",
            Error::Conflict { .. } => "CONFLICT",
            Error::Invariant { .. } => "INVARIANT_VIOLATION",
            Error::InvalidOperation { .. } => "INVALID_OPERATION",
            Error::Blocked { .. } => "BLOCKED",
            Error::Forbidden { .. } => "FORBIDDEN",
            Error::Busy => "STORAGE_BUSY",
            Error::StorageFull => "STORAGE_FULL",
            Error::ReadOnly => "STORAGE_READ_ONLY",
            Error::Unexpected(_) => "INTERNAL_ERROR",
        }
    }
}

/// A domain rule broken: a `VALIDATION_ERROR` naming the field.
impl From<crate::domain::Invalid> for Error {
    fn from(e: crate::domain::Invalid) -> Self {
        Error::validation(&e.field, e.problem)
    }
}

impl From<crate::store::Error> for Error {
    fn from(e: crate::store::Error) -> Self {
        use crate::store::Error as S;
        match e {
            S::NotFound { entity, id } => Error::NotFound { entity, id },
            S::Conflict {
                entity,
                id,
                name,
                current,
                sent,
            } => Error::Conflict {
                entity,
                id,
                name,
                current,
                sent,
            },
            e @ S::Duplicate { .. } => Error::invariant(e.to_string()),
            S::Busy | S::Raced(_) => Error::Busy,
            S::Full => Error::StorageFull,
            S::ReadOnly => Error::ReadOnly,
            S::CantOpen => Error::Internal("the database file cannot be opened".into()),
            S::Open(m) | S::Corrupt(m) => Error::Internal(m),
            S::Internal(m) => Error::Internal(format!("storage failure: {m}")),
        }
    }
}

/// A short id for an incident: eight hex digits, random (the random tail of a UUIDv7),
/// enough to find one line in a server's log.
fn incident_id() -> String {
    let u = uuid::Uuid::now_v7().simple().to_string();
    u[u.len() - 8..].to_string()
}
