//! The crate's one error type, separating configuration mistakes from backend faults
//! and saying which faults a caller may retry.

use std::path::PathBuf;

use redis::{ErrorKind, ServerErrorKind};

/// Result with [`IndexError`].
pub type Result<T, E = IndexError> = std::result::Result<T, E>;

/// What went wrong in the candidate index.
#[derive(Debug, thiserror::Error)]
pub enum IndexError {
    /// The configuration is invalid (a user mistake; not retryable).
    #[error("invalid index configuration: {0}")]
    Config(String),

    /// Redis could not be reached when the index was opened.
    #[error("cannot reach Redis at {url}: {source} (is redis-server running? scripts/redis-dev.sh starts one)")]
    Unavailable {
        /// The URL, without credentials.
        url: String,
        /// The cause.
        #[source]
        source: redis::RedisError,
    },

    /// A Redis command failed (connection lost, timeout, server error).
    #[error("Redis at {url} failed during {op}: {source}")]
    Redis {
        /// The URL, without credentials.
        url: String,
        /// What the index was doing.
        op: &'static str,
        /// The cause.
        #[source]
        source: redis::RedisError,
    },

    /// The Redis index lost its data since it was opened (the server restarted without
    /// persistence, or was flushed). Writes are refused rather than silently landing in
    /// a partial index; run `zhiwen reindex` to rebuild it.
    #[error("the Redis index at {url} (prefix {prefix:?}) lost its data (server restarted without persistence or was flushed); run `zhiwen reindex`")]
    Lost {
        /// The URL, without credentials.
        url: String,
        /// The key prefix.
        prefix: String,
    },

    /// Redis returned something this layout never writes.
    #[error("unexpected data in the index: {0}")]
    Corrupt(String),

    /// The embedded index's SQLite file failed.
    #[error("embedded index {path}: {source}")]
    Sqlite {
        /// The SQLite file.
        path: PathBuf,
        /// The cause.
        #[source]
        source: rusqlite::Error,
    },

    /// The source of documents for a rebuild failed.
    #[error("rebuild source failed: {0}")]
    Source(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl IndexError {
    /// May the same call succeed if repeated later (connection lost, server restarting
    /// or busy)? Every write is idempotent, so retrying is safe.
    pub fn is_retryable(&self) -> bool {
        match self {
            IndexError::Unavailable { .. } => true,
            IndexError::Redis { source, .. } => redis_retryable(source),
            IndexError::Sqlite { source, .. } => matches!(
                source.sqlite_error_code(),
                Some(rusqlite::ErrorCode::DatabaseBusy) | Some(rusqlite::ErrorCode::DatabaseLocked)
            ),
            IndexError::Config(_) | IndexError::Lost { .. } | IndexError::Corrupt(_) | IndexError::Source(_) => false,
        }
    }
}

fn redis_retryable(e: &redis::RedisError) -> bool {
    if e.is_io_error() || e.is_connection_dropped() || e.is_connection_refusal() || e.is_timeout() {
        return true;
    }
    matches!(
        e.kind(),
        ErrorKind::Io
            | ErrorKind::ClusterConnectionNotFound
            | ErrorKind::Server(
                ServerErrorKind::BusyLoading
                    | ServerErrorKind::TryAgain
                    | ServerErrorKind::ClusterDown
                    | ServerErrorKind::MasterDown
                    | ServerErrorKind::NoScript
                    | ServerErrorKind::Moved
                    | ServerErrorKind::Ask
            )
    )
}
