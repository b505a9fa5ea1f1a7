//! The ingest crate's one error type: the user's bad input apart from transient faults.

use std::path::PathBuf;

use zhiwen_core::CoreError;
use zhiwen_store::StoreError;

/// Everything ingest can fail with. Per-item failures are turned into rejections in the
/// summaries ([`crate::ImportSummary`], [`crate::CrawlSummary`]); only failures that make
/// the whole run impossible (an unreadable frontier, a store that is down) end a run.
#[derive(Debug, thiserror::Error)]
pub enum IngestError {
    /// A file or folder could not be read.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The operating system's error.
        #[source]
        source: std::io::Error,
    },
    /// An input item is malformed (bad JSON line, broken EPUB, unreadable WARC record...).
    #[error("{what}: {reason}")]
    Invalid {
        /// Which item (file, line, record, URL).
        what: String,
        /// Why it was refused.
        reason: String,
    },
    /// The core refused the text (empty, binary, too large...).
    #[error("{what}: {source}")]
    Text {
        /// Which item.
        what: String,
        /// The core's reason.
        #[source]
        source: CoreError,
    },
    /// The store refused or failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// A URL is not crawlable (bad syntax, not http(s), outside the allowed domains).
    #[error("{url}: {reason}")]
    Url {
        /// The URL as given.
        url: String,
        /// Why.
        reason: String,
    },
    /// The address policy forbids connecting to this address (loopback, private...).
    #[error("{url}: refused to connect to {addr} ({reason})")]
    Forbidden {
        /// The URL.
        url: String,
        /// The address it resolved to.
        addr: String,
        /// Which policy rule refused it.
        reason: &'static str,
    },
    /// An HTTP fetch failed (connection, timeout, status, body cap...).
    #[error("{url}: {reason}")]
    Fetch {
        /// The URL.
        url: String,
        /// What happened.
        reason: String,
        /// Whether trying again later may succeed (timeouts, 5xx, connection resets).
        retryable: bool,
    },
    /// The crawler's frontier database failed.
    #[error("crawl frontier {path}: {message}")]
    Frontier {
        /// The frontier file.
        path: PathBuf,
        /// SQLite's message.
        message: String,
    },
    /// The configuration is unusable.
    #[error("ingest configuration: {0}")]
    Config(String),
    /// A host lease could not be taken, renewed or given back (Redis unreachable or
    /// failing): the site is skipped this pass.
    #[error("host lease {op} {host}: {source}")]
    Lease {
        /// `acquire`, `renew`, `release` or `connect`.
        op: &'static str,
        /// The host (or the server, for `connect`).
        host: String,
        /// Redis' error.
        source: redis::RedisError,
    },
}

impl IngestError {
    /// May the same operation succeed when simply retried later?
    pub fn is_retryable(&self) -> bool {
        match self {
            IngestError::Fetch { retryable, .. } => *retryable,
            // Redis unreachable: the next pass asks again.
            IngestError::Lease { .. } => true,
            IngestError::Store(e) => e.is_retryable(),
            IngestError::Io { source, .. } => matches!(
                source.kind(),
                std::io::ErrorKind::Interrupted | std::io::ErrorKind::TimedOut | std::io::ErrorKind::WouldBlock
            ),
            _ => false,
        }
    }

    /// Is this the user's input or configuration rather than a fault of ours?
    pub fn is_user_error(&self) -> bool {
        match self {
            IngestError::Invalid { .. }
            | IngestError::Text { .. }
            | IngestError::Url { .. }
            | IngestError::Forbidden { .. }
            | IngestError::Config(_) => true,
            IngestError::Store(e) => e.is_user_error(),
            IngestError::Io { source, .. } => matches!(
                source.kind(),
                std::io::ErrorKind::NotFound | std::io::ErrorKind::PermissionDenied | std::io::ErrorKind::InvalidData
            ),
            IngestError::Fetch { .. } | IngestError::Frontier { .. } | IngestError::Lease { .. } => false,
        }
    }

    /// The HTTP status of a fetch that ended on a status other than success (`HTTP 404`),
    /// as [`crate::crawler::fetch::fetch`] reports it; `None` for any other failure.
    pub fn http_status(&self) -> Option<u16> {
        match self {
            IngestError::Fetch { reason, .. } => {
                let code = reason.strip_prefix("HTTP ")?.get(..3)?;
                code.parse().ok().filter(|c| (100..600).contains(c))
            }
            _ => None,
        }
    }

    /// A fetch that could not connect to the host at all (its name does not resolve, or
    /// nothing listens): what [`crate::crawler::fetch::fetch`] reports as `cannot connect`.
    pub fn is_connect_failure(&self) -> bool {
        matches!(self, IngestError::Fetch { reason, .. } if reason.starts_with("cannot connect"))
    }

    pub(crate) fn invalid(what: impl Into<String>, reason: impl std::fmt::Display) -> Self {
        IngestError::Invalid { what: what.into(), reason: reason.to_string() }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, source: std::io::Error) -> Self {
        IngestError::Io { path: path.into(), source }
    }
}

/// Result alias of the crate.
pub type Result<T, E = IngestError> = std::result::Result<T, E>;
