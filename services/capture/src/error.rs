use zhiwen_evidence::EvidenceError;
use zhiwen_ingest::IngestError;
use zhiwen_store::StoreError;

/// What can go wrong making, logging or packaging a capture.
#[derive(Debug, thiserror::Error)]
pub enum CaptureError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Evidence(#[from] EvidenceError),
    #[error(transparent)]
    Ingest(#[from] IngestError),
    #[error(transparent)]
    Matcher(#[from] zhiwen_matcher::MatcherError),
    /// The match, capture or page asked for does not exist.
    #[error("{0} not found")]
    NotFound(String),
    /// The stored log is not the one this process (or a signed head) knew: a store that
    /// came back empty or was rewritten is refused, never silently trusted.
    #[error("the evidence log is not consistent: {0}")]
    Inconsistent(String),
    /// A captured file is no longer kept (retention removed it).
    #[error("capture {capture}: file {name} is no longer kept ({why})")]
    FileGone { capture: i64, name: String, why: String },
    /// The log key file.
    #[error("evidence log key {path}: {reason}")]
    Key { path: String, reason: String },
    /// A setting is not usable (e.g. the time-stamp authority's URL).
    #[error("{0}")]
    Config(String),
    /// A capture task's parameters are not ones zhiwen writes.
    #[error("capture task {task}: {reason}")]
    BadTask { task: i64, reason: String },
}

/// Result alias of this crate.
pub type Result<T, E = CaptureError> = std::result::Result<T, E>;
