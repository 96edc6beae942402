//! The store's one error type: what a repository call can fail with, in terms of
//! rows and the file, never of the wire. Services turn it into theirs.

/// A store call's failure.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// No row with this id.
    #[error("{entity} {id} not found")]
    NotFound { entity: &'static str, id: String },
    /// Optimistic-locking failure: the caller read an older version.
    #[error(
        "{entity} {}{id} is at version {current}, you sent {sent}: re-read it and retry",
        crate::domain::text::quoted(name)
    )]
    Conflict {
        entity: &'static str,
        id: String,
        /// The row's name or title, so a message can say which one.
        name: Option<String>,
        current: i64,
        sent: i64,
    },
    /// A row with this unique name exists already.
    #[error("a {entity} named '{name}' already exists: choose another name or update that one")]
    Duplicate { entity: &'static str, name: String },
    /// Another connection held the write lock past the busy timeout.
    #[error("the database stayed locked by another writer past the busy timeout")]
    Busy,
    /// The disk, or the database's own size limit, is full.
    #[error("the database file cannot grow: its disk (or its configured size limit) is full")]
    Full,
    /// The file or its directory cannot be written.
    #[error("the database file cannot be written (read-only file, directory or disk)")]
    ReadOnly,
    /// SQLite could not open the file at all.
    #[error("the database file cannot be opened")]
    CantOpen,
    /// Opening the file failed; the message names the path and what to do.
    #[error("{0}")]
    Open(String),
    /// Two processes opening one new file at once; the loser retries.
    #[error("opening raced with another process: {0}")]
    Raced(String),
    /// A stored value Cairn cannot read back.
    #[error("{0}")]
    Corrupt(String),
    /// Anything else; the service layer's `Error::Internal` logs it beside the id an
    /// agent is answered with.
    #[error("storage failure: {0}")]
    Internal(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        if let sqlx::Error::Database(db) = &e {
            if let Some(pg) = db.try_downcast_ref::<sqlx::postgres::PgDatabaseError>() {
                match pg.code() {
                    // The write lock (or a row's) not had within lock_timeout; a
                    // serialization failure or deadlock; no connection slot left on
                    // the server: the same "try again".
                    "55P03" | "40001" | "40P01" | "53300" => return Error::Busy,
                    "53100" => return Error::Full,
                    "25006" => return Error::ReadOnly,
                    _ => {}
                }
                return Error::Internal(e.to_string());
            }
            // SQLite's primary result code is the low byte of the extended one.
            let code = db
                .code()
                .and_then(|c| c.parse::<i32>().ok())
                .map(|c| c & 0xff);
            match code {
                Some(5) | Some(6) => return Error::Busy,
                Some(13) => return Error::Full,
                Some(8) => return Error::ReadOnly,
                Some(14) => return Error::CantOpen,
                _ => {}
            }
            if db.message().contains("database is locked") {
                return Error::Busy;
            }
        }
        if let sqlx::Error::PoolTimedOut = e {
            return Error::Busy;
        }
        Error::Internal(e.to_string())
    }
}

impl Error {
    pub fn not_found(entity: &'static str, id: impl Into<String>) -> Self {
        Error::NotFound {
            entity,
            id: id.into(),
        }
    }
}
