//! Signed tree heads: zhiwen's Ed25519 signature over the log's size, root and time.
//!
//! What is signed is a short text anyone can rebuild by hand (see [`TreeHead::signed_text`]):
//! `zhiwen-evidence-log/1`, the size, the root hash (hex) and the time (Unix
//! milliseconds), one per line. A head published once binds zhiwen: a later head that is
//! not an extension of it (no consistency proof) shows the log was rewritten.

use ed25519_dalek::{Signature, Signer, SigningKey, Verifier, VerifyingKey};
use serde::{Deserialize, Serialize};

use crate::log::{decode_32, decode_hex, TreeRoot};
use crate::EvidenceError;

/// The first line of every signed text: the format, so a signature over a head can never
/// be mistaken for a signature over anything else.
const SIGNED_PREFIX: &str = "zhiwen-evidence-log/1";

/// The state of the log at one moment.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeHead {
    /// Number of leaves.
    pub size: u64,
    /// Merkle Tree Hash at that size, hex.
    pub root_hash: String,
    /// When the head was made, Unix milliseconds (UTC).
    pub timestamp_ms: i64,
}

impl TreeHead {
    pub fn new(root: &TreeRoot, timestamp_ms: i64) -> Self {
        TreeHead { size: root.size, root_hash: root.hash.clone(), timestamp_ms }
    }

    pub fn root(&self) -> TreeRoot {
        TreeRoot { size: self.size, hash: self.root_hash.clone() }
    }

    /// The exact bytes that are signed.
    pub fn signed_text(&self) -> String {
        format!("{SIGNED_PREFIX}\n{}\n{}\n{}\n", self.size, self.root_hash, self.timestamp_ms)
    }
}

/// A tree head with zhiwen's signature and the public key that made it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SignedTreeHead {
    #[serde(flatten)]
    pub head: TreeHead,
    /// Ed25519 public key, hex (32 bytes).
    pub public_key: String,
    /// Ed25519 signature over [`TreeHead::signed_text`], hex (64 bytes).
    pub signature: String,
    /// An RFC 3161 time-stamp token over [`TreeHead::signed_text`] from a time-stamp
    /// authority, hex of its DER (a CMS `ContentInfo`), when one was asked and answered
    /// ([`crate::tsa`]). Not covered by zhiwen's signature (the TSA signs it); absent from
    /// the JSON when there is none, so heads without one read and write as before.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timestamp_token: Option<String>,
}

impl SignedTreeHead {
    /// Checks the signature, and that it was made by `expected_key` (hex) when given.
    /// Without an expected key the head only proves it was signed by the key it carries.
    pub fn verify(&self, expected_key: Option<&str>) -> Result<(), EvidenceError> {
        if let Some(expected) = expected_key {
            if expected.trim().to_ascii_lowercase() != self.public_key {
                return Err(EvidenceError::Key(format!(
                    "the head was signed by {} and not by the expected key {}",
                    self.public_key,
                    expected.trim()
                )));
            }
        }
        verify_signature(&self.public_key, self.head.signed_text().as_bytes(), &self.signature)
            .map_err(|_| EvidenceError::Key("the signature does not match the tree head".into()))
    }

    /// Attaches an RFC 3161 time-stamp token (its DER) to the head.
    pub fn set_timestamp_token(&mut self, der: &[u8]) {
        self.timestamp_token = Some(hex::encode(der));
    }

    /// The time-stamp token's DER, when the head carries one.
    pub fn timestamp_token_der(&self) -> Result<Option<Vec<u8>>, EvidenceError> {
        self.timestamp_token.as_deref().map(|t| decode_hex(t, "timestamp token")).transpose()
    }
}

/// Checks an Ed25519 `signature` (hex) of `bytes` by `public_key` (hex).
pub fn verify_signature(public_key: &str, bytes: &[u8], signature: &str) -> Result<(), EvidenceError> {
    let key = VerifyingKey::from_bytes(&decode_32(public_key, "public key")?)
        .map_err(|e| EvidenceError::Key(e.to_string()))?;
    let sig: [u8; 64] = decode_hex(signature, "signature")?
        .try_into()
        .map_err(|_| EvidenceError::Malformed { what: "signature".into(), reason: "not 64 bytes".into() })?;
    key.verify(bytes, &Signature::from_bytes(&sig))
        .map_err(|_| EvidenceError::Key("the signature does not match".into()))
}

/// zhiwen's log key. Made on first use and kept out of the repository (the caller stores
/// [`LogKey::to_secret_hex`] in a file only its user can read).
pub struct LogKey(SigningKey);

impl std::fmt::Debug for LogKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "LogKey(public {})", self.public_key_hex())
    }
}

impl LogKey {
    /// A new key from the operating system's random source.
    pub fn generate() -> Self {
        LogKey(SigningKey::from_bytes(&rand::random::<[u8; 32]>()))
    }

    /// The key of a key file (its 32-byte secret, hex, surrounding whitespace ignored).
    pub fn from_secret_hex(text: &str) -> Result<Self, EvidenceError> {
        let secret = decode_32(&text.trim().to_ascii_lowercase(), "log key")
            .map_err(|_| EvidenceError::Key("the key file must hold 64 hex digits".into()))?;
        Ok(LogKey(SigningKey::from_bytes(&secret)))
    }

    /// What a key file holds.
    pub fn to_secret_hex(&self) -> String {
        hex::encode(self.0.to_bytes())
    }

    /// The public key, hex: what a third party keeps to check heads.
    pub fn public_key_hex(&self) -> String {
        hex::encode(self.0.verifying_key().to_bytes())
    }

    /// Signs any bytes (the package manifest), hex.
    pub fn sign_bytes(&self, bytes: &[u8]) -> String {
        hex::encode(self.0.sign(bytes).to_bytes())
    }

    pub fn sign(&self, head: TreeHead) -> SignedTreeHead {
        let signature = hex::encode(self.0.sign(head.signed_text().as_bytes()).to_bytes());
        SignedTreeHead { head, public_key: self.public_key_hex(), signature, timestamp_token: None }
    }
}
