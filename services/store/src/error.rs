//! The store's one error type: the caller's mistakes apart from faults of the backend.

/// Everything a store operation can fail with.
///
/// User errors (bad input, duplicates, missing records, invalid state changes, a
/// database schema that does not fit this binary) are never retryable; backend faults
/// are retryable when they are transient (connection lost, database busy).
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The input is invalid (empty text, bad URL, absurd size, ...). Nothing was written.
    #[error("invalid {what}: {reason}")]
    InvalidInput {
        /// What was invalid (a field or record).
        what: String,
        /// Why.
        reason: String,
    },
    /// A natural key occurs twice where it must be unique. Nothing was written.
    #[error("duplicate {what}: {key}")]
    Duplicate {
        /// The kind of record.
        what: &'static str,
        /// The offending key.
        key: String,
    },
    /// A referenced record does not exist.
    #[error("{what} not found: {key}")]
    NotFound {
        /// The kind of record.
        what: &'static str,
        /// The key looked up.
        key: String,
    },
    /// The operation is not allowed in the record's current state (e.g. finishing a task
    /// that is not running).
    #[error("{what}: {reason}")]
    Conflict {
        /// The record.
        what: String,
        /// Why the operation is refused.
        reason: String,
    },
    /// The database was migrated by a newer zhiwen: this binary refuses to touch it.
    #[error(
        "the {backend} database is at schema version {database}, newer than this binary's {binary}; upgrade zhiwen"
    )]
    SchemaTooNew {
        /// Backend name.
        backend: &'static str,
        /// Version recorded in the database.
        database: u32,
        /// Latest version this binary knows.
        binary: u32,
    },
    /// The database has not been migrated to this binary's schema yet.
    #[error(
        "the {backend} database is at schema version {database}, this binary needs {binary}; run `zhiwen migrate`"
    )]
    SchemaOutdated {
        /// Backend name.
        backend: &'static str,
        /// Version recorded in the database.
        database: u32,
        /// Latest version this binary knows.
        binary: u32,
    },
    /// The configuration is unusable (bad URI, unwritable data directory).
    #[error("store configuration: {0}")]
    Config(String),
    /// A transient backend failure (connection lost, database locked/busy, timeout).
    #[error("{backend} unavailable: {message}")]
    Unavailable {
        /// Backend name.
        backend: &'static str,
        /// The backend's message.
        message: String,
    },
    /// A non-transient backend failure or a bug.
    #[error("{backend} error: {message}")]
    Backend {
        /// Backend name.
        backend: &'static str,
        /// The backend's message.
        message: String,
    },
    /// Stored data cannot be decoded.
    #[error("corrupt {what}: {reason}")]
    Corrupt {
        /// The record.
        what: String,
        /// Why it cannot be decoded.
        reason: String,
    },
}

impl StoreError {
    /// May the same operation succeed when simply retried later?
    pub fn is_retryable(&self) -> bool {
        matches!(self, StoreError::Unavailable { .. })
    }

    /// Is this the caller's (or the operator's) mistake rather than a fault?
    pub fn is_user_error(&self) -> bool {
        matches!(
            self,
            StoreError::InvalidInput { .. }
                | StoreError::Duplicate { .. }
                | StoreError::NotFound { .. }
                | StoreError::Conflict { .. }
                | StoreError::SchemaTooNew { .. }
                | StoreError::SchemaOutdated { .. }
                | StoreError::Config(_)
        )
    }

    pub(crate) fn invalid(what: impl Into<String>, reason: impl Into<String>) -> Self {
        StoreError::InvalidInput { what: what.into(), reason: reason.into() }
    }

    pub(crate) fn corrupt(what: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        StoreError::Corrupt { what: what.into(), reason: reason.to_string() }
    }

    pub(crate) fn not_found(what: &'static str, key: impl std::fmt::Display) -> Self {
        StoreError::NotFound { what, key: key.to_string() }
    }
}

impl From<rusqlite::Error> for StoreError {
    fn from(e: rusqlite::Error) -> Self {
        use rusqlite::ErrorCode;
        let code = e.sqlite_error_code();
        match code {
            Some(ErrorCode::DatabaseBusy | ErrorCode::DatabaseLocked) => {
                StoreError::Unavailable { backend: "sqlite", message: e.to_string() }
            }
            _ => StoreError::Backend { backend: "sqlite", message: e.to_string() },
        }
    }
}

impl From<mongodb::error::Error> for StoreError {
    fn from(e: mongodb::error::Error) -> Self {
        use mongodb::error::ErrorKind;
        let transient = e.contains_label(mongodb::error::RETRYABLE_WRITE_ERROR)
            || e.contains_label(mongodb::error::TRANSIENT_TRANSACTION_ERROR)
            || matches!(
                *e.kind,
                ErrorKind::Io(_) | ErrorKind::ConnectionPoolCleared { .. } | ErrorKind::ServerSelection { .. }
            );
        if transient {
            StoreError::Unavailable { backend: "mongodb", message: e.to_string() }
        } else {
            StoreError::Backend { backend: "mongodb", message: e.to_string() }
        }
    }
}

/// Is this MongoDB error a unique-index violation (E11000)?
pub(crate) fn is_mongo_duplicate(e: &mongodb::error::Error) -> bool {
    use mongodb::error::{ErrorKind, WriteFailure};
    match &*e.kind {
        ErrorKind::Write(WriteFailure::WriteError(w)) => w.code == 11000,
        ErrorKind::InsertMany(im) => im.write_errors.as_ref().is_some_and(|ws| ws.iter().any(|w| w.code == 11000)),
        ErrorKind::Command(c) => c.code == 11000,
        _ => e.to_string().contains("E11000"),
    }
}

/// How many documents of an unordered `insert_many` were refused as duplicates, when that
/// is all that went wrong (`None`: another error, or a write concern error).
pub(crate) fn mongo_duplicates_only(e: &mongodb::error::Error) -> Option<usize> {
    use mongodb::error::ErrorKind;
    match &*e.kind {
        ErrorKind::InsertMany(im) if im.write_concern_error.is_none() => {
            let ws = im.write_errors.as_ref()?;
            ws.iter().all(|w| w.code == 11000).then_some(ws.len())
        }
        _ => None,
    }
}

/// The task-spawning layer (tokio) failed: a panic or cancellation inside a blocking job.
impl From<tokio::task::JoinError> for StoreError {
    fn from(e: tokio::task::JoinError) -> Self {
        StoreError::Backend { backend: "sqlite", message: format!("blocking task failed: {e}") }
    }
}
