/// What can go wrong building, proving or reading evidence.
#[derive(Debug, thiserror::Error)]
pub enum EvidenceError {
    /// A proof was asked for a size or index the log does not have.
    #[error("the log has {size} leaves: {what}")]
    OutOfRange { size: u64, what: String },
    /// A hex or JSON field could not be decoded.
    #[error("malformed {what}: {reason}")]
    Malformed { what: String, reason: String },
    /// The key file or a public key is not a valid Ed25519 key.
    #[error("invalid key: {0}")]
    Key(String),
    /// The package is not a readable zip, or breaks a size bound.
    #[error("package: {0}")]
    Package(String),
    #[error(transparent)]
    Io(#[from] std::io::Error),
}
