//! Evidence that a third party can check: what zhiwen owns here is the *proof* side of
//! a capture and its file formats, not the capturing itself (fetching, screenshots and
//! storage live above).
//!
//! - [`log`]: an append-only Merkle log of captures in the style of Certificate
//!   Transparency (RFC 6962 / RFC 9162 leaf and node hashes, inclusion and consistency
//!   proofs), on the maintained `ct-merkle` crate.
//! - [`head`]: tree heads signed with zhiwen's own Ed25519 key, so that a head published
//!   once (in the daily report, through the API, to the webhook) binds zhiwen later.
//! - [`warc`]: what zhiwen saw of a page, as WARC/1.1 request and response records
//!   (content-addressed: the same exchange is the same bytes).
//! - [`package`]: the evidence package (a zip of the captured files, the capture record
//!   that is the log's leaf, the inclusion proof and the signed tree head) and its offline
//!   verification, which says what holds and what does not.
//! - [`tsa`]: trusted time, RFC 3161 time-stamp requests for a signed tree head and the
//!   reading of the authority's answer (the token a package carries as `tree-head.tsr`).
//!
//! Pure: no I/O beyond the readers and writers it is given, no clock (times are inputs).

pub mod head;
pub mod log;
pub mod package;
pub mod tsa;
pub mod warc;

mod error;

pub use error::EvidenceError;
pub use head::{LogKey, SignedTreeHead, TreeHead};
pub use log::{verify_consistency, verify_inclusion, EvidenceLog, TreeRoot};
pub use package::{
    read_package, write_package, CaptureRecord, FileEntry, Package, PackageFile, PackageLimits, Verification,
};
pub use tsa::{read_token, TimeStampRequest, TimeStampToken, TsaError};
pub use warc::{exchange_records, resource_record, HttpExchange};

/// SHA-256 of `bytes`, lower-case hex (how every digest is written in records and files).
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}
