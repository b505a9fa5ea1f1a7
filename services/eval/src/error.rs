use std::path::PathBuf;

use thiserror::Error;

/// Why an evaluation could not run.
///
/// `CorpusMissing` and `Corpus` are set-up problems of the machine (the test corpus is
/// assembled by `scripts/setup-corpus.sh`); `Core` and `Detector` are faults of the code
/// under evaluation.
#[derive(Debug, Error)]
pub enum EvalError {
    /// The corpus directory was not found where it is looked for.
    #[error(
        "corpus directory not found (tried {tried}): run scripts/setup-corpus.sh to assemble the \
         test corpus in .test-corpus/, or name a corpus with --corpus DIR"
    )]
    CorpusMissing {
        /// The places that were tried.
        tried: String,
    },
    /// A corpus file could not be read or parsed.
    #[error("{path}:{line}: {reason}")]
    Corpus {
        /// The file.
        path: PathBuf,
        /// 1-based line (0: the whole file).
        line: usize,
        /// What went wrong.
        reason: String,
    },
    /// The corpus does not hold enough documents for the requested set.
    #[error("the corpus is too small for this set: {0}")]
    NotEnoughData(String),
    /// The core refused a document.
    #[error("core error on {what}: {source}")]
    Core {
        /// Which document.
        what: String,
        /// The core's error.
        source: zhiwen_core::CoreError,
    },
    /// The detector under evaluation failed.
    #[error("detector failed: {0}")]
    Detector(String),
    /// Writing an output failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
}
