//! The matcher's one error type: the caller's mistakes apart from faults of the stores,
//! the index or the network, and which of them a retry may cure.

use zhiwen_core::CoreError;
use zhiwen_index::IndexError;
use zhiwen_store::StoreError;

/// Result with [`MatcherError`].
pub type Result<T, E = MatcherError> = std::result::Result<T, E>;

/// Everything the matcher can fail with.
#[derive(Debug, thiserror::Error)]
pub enum MatcherError {
    /// A store operation failed.
    #[error("store: {0}")]
    Store(#[from] StoreError),
    /// The candidate index failed.
    #[error("index: {0}")]
    Index(#[from] IndexError),
    /// A text could not be fingerprinted (empty, undecodable, too large).
    #[error("cannot fingerprint {what}: {source}")]
    Text {
        /// Which document (`page 12`, `section 7`).
        what: String,
        /// The core's reason.
        #[source]
        source: CoreError,
    },
    /// A referenced work, section, page or task does not exist.
    #[error("{what} {id} not found")]
    NotFound {
        /// Kind of record.
        what: &'static str,
        /// Its id.
        id: i64,
    },
    /// The configuration is invalid (bad cron expression, time zone, URL ...).
    #[error("invalid matcher configuration: {0}")]
    Config(String),
    /// Another live worker is running a matching task; a second one is not started.
    #[error("matching task {task_id} is already running (worker {worker})")]
    AlreadyRunning {
        /// The running task.
        task_id: i64,
        /// Its worker.
        worker: String,
    },
    /// The task was cancelled (by the caller's token or a shutdown); its checkpoint is
    /// kept and the next run resumes it.
    #[error("matching task {task_id} was interrupted; the next run resumes it")]
    Interrupted {
        /// The interrupted task.
        task_id: i64,
    },
    /// A persisted task has parameters this version cannot read.
    #[error("task {task_id} has unreadable parameters: {reason}")]
    BadTask {
        /// The task.
        task_id: i64,
        /// Why.
        reason: String,
    },
    /// Writing an export failed.
    #[error("export: {0}")]
    Export(String),
    /// The export has more rows than its format holds (the caller narrows the query or
    /// picks another format).
    #[error("too many rows for {format} (over {limit}): narrow the filter or use CSV")]
    ExportTooLarge {
        /// The format.
        format: &'static str,
        /// Its most rows.
        limit: u64,
    },
    /// An I/O error (export file, output stream).
    #[error("I/O: {0}")]
    Io(#[from] std::io::Error),
    /// The webhook could not be delivered.
    #[error("webhook {url}: {reason}")]
    Webhook {
        /// Target URL.
        url: String,
        /// Last failure.
        reason: String,
        /// Whether a later attempt may succeed (network errors, 5xx, 429).
        retryable: bool,
    },
    /// Redis Streams (scale-out workers) failed.
    #[error("redis stream {op}: {source}")]
    Stream {
        /// What was being done.
        op: &'static str,
        /// The cause.
        #[source]
        source: redis::RedisError,
    },
    /// The candidate index is not the one the store was indexed into: it came back empty
    /// (or holds another store's data), or a rebuild of it stopped half way. Matching
    /// against it would miss copies and report success.
    #[error(
        "the {backend} candidate index is not the one this store was indexed into ({}): \
         run `zhiwen reindex`, then match again",
        if *rebuilding { "a `zhiwen reindex` did not finish" }
        else if *found { "it holds another index's data, or came back empty and was written to since" }
        else { "it is empty: it lost its data" }
    )]
    IndexNotTheStores {
        /// A rebuild was begun and did not finish.
        rebuilding: bool,
        /// The index backend (`redis`, `embedded`).
        backend: &'static str,
        /// The index has an identity (another one).
        found: bool,
    },
    /// The candidate index is older than the store's record of it: it shows fewer
    /// writes ([`zhiwen_index::CandidateIndex::generation`]) than the store saw after
    /// its last write (a Redis restarted from an earlier snapshot, an index file restored
    /// from an earlier copy). What was written since is missing from it.
    #[error(
        "the {backend} candidate index is older than this store's record of it ({index} writes,          the store saw {store}; restored from an earlier snapshot or copy?): run `zhiwen reindex`, then match again"
    )]
    IndexBehind {
        /// The index backend (`redis`, `embedded`).
        backend: &'static str,
        /// The index's generation.
        index: u64,
        /// The generation the store recorded.
        store: u64,
    },
    /// A blocking job panicked or was cancelled by the runtime.
    #[error("internal: {0}")]
    Internal(String),
}

impl MatcherError {
    /// May the same operation succeed when simply retried later?
    pub fn is_retryable(&self) -> bool {
        match self {
            MatcherError::Store(e) => e.is_retryable(),
            MatcherError::Index(e) => e.is_retryable(),
            MatcherError::Webhook { retryable, .. } => *retryable,
            MatcherError::Stream { source, .. } => {
                source.is_io_error() || source.is_connection_dropped() || source.is_timeout()
            }
            MatcherError::AlreadyRunning { .. } | MatcherError::Interrupted { .. } => true,
            MatcherError::Text { .. }
            | MatcherError::NotFound { .. }
            | MatcherError::Config(_)
            | MatcherError::BadTask { .. }
            | MatcherError::Export(_)
            | MatcherError::ExportTooLarge { .. }
            | MatcherError::IndexNotTheStores { .. }
            | MatcherError::IndexBehind { .. }
            | MatcherError::Io(_)
            | MatcherError::Internal(_) => false,
        }
    }

    /// Is this the caller's (or the operator's) mistake rather than a fault?
    pub fn is_user_error(&self) -> bool {
        match self {
            MatcherError::Store(e) => e.is_user_error(),
            MatcherError::NotFound { .. }
            | MatcherError::Config(_)
            | MatcherError::AlreadyRunning { .. }
            | MatcherError::ExportTooLarge { .. } => true,
            _ => false,
        }
    }
}

impl From<tokio::task::JoinError> for MatcherError {
    fn from(e: tokio::task::JoinError) -> Self {
        MatcherError::Internal(format!("blocking job failed: {e}"))
    }
}
