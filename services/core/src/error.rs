use thiserror::Error;

/// Why the core could not produce fingerprints or a comparison.
///
/// Every variant is the caller's input or configuration: the core has no I/O, so
/// nothing here is a transient fault worth retrying.
#[derive(Debug, Error, Clone, PartialEq, Eq)]
pub enum CoreError {
    /// The input had no bytes at all.
    #[error("the input is empty")]
    EmptyInput,
    /// The input was larger than the configured limit.
    #[error("the input is {size} bytes, above the limit of {limit} bytes")]
    TooLarge {
        /// Size of the input in bytes.
        size: usize,
        /// The configured limit in bytes.
        limit: usize,
    },
    /// The bytes are not text in any supported charset (binary data, for example).
    #[error("the input is not text in any supported charset: {reason}")]
    Undecodable {
        /// What the decoder saw.
        reason: String,
    },
    /// Decoding worked but nothing comparable was left after extraction and normalisation.
    #[error("no text is left after extraction and normalisation")]
    NoText,
    /// A parameter is out of its valid range.
    #[error("invalid parameter {name}: {reason}")]
    InvalidParams {
        /// The parameter's name as in the configuration.
        name: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}
