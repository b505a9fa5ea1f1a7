//! The append-only Merkle log of captures (RFC 6962 section 2.1, RFC 9162 section 2.1).
//!
//! A leaf is the exact bytes of a capture record (`capture.json` in a package); its leaf
//! hash is `SHA-256(0x00 || bytes)` and inner nodes `SHA-256(0x01 || left || right)`, as in
//! Certificate Transparency, so any RFC 9162 verifier can check our proofs. The tree is
//! kept in memory, rebuilt from the stored leaves when a process starts: 32 bytes per
//! leaf and a node per leaf, i.e. a few tens of megabytes per million captures.

use ct_merkle::mem_backed_tree::MemoryBackedTree;
use ct_merkle::{ConsistencyProof, HashableLeaf, InclusionProof, RootHash};
use serde::{Deserialize, Serialize};
use sha2::Sha256;

use crate::EvidenceError;

/// A leaf as the tree stores it: the leaf's own bytes (`ct-merkle` prepends the
/// RFC 6962 leaf prefix when it hashes them).
#[derive(Clone, Debug, PartialEq, Eq)]
struct Leaf(Vec<u8>);

impl HashableLeaf for Leaf {
    fn hash<H: ct_merkle::digest::Update>(&self, hasher: &mut H) {
        hasher.update(&self.0);
    }
}

/// The root of the tree at one size: what a tree head signs.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct TreeRoot {
    /// Number of leaves.
    pub size: u64,
    /// Merkle Tree Hash (RFC 6962 section 2.1), hex.
    pub hash: String,
}

impl TreeRoot {
    fn of(root: &RootHash<Sha256>) -> Self {
        TreeRoot { size: root.num_leaves(), hash: hex::encode(root.as_bytes()) }
    }

    fn to_ct(&self) -> Result<RootHash<Sha256>, EvidenceError> {
        let bytes = decode_32(&self.hash, "root hash")?;
        Ok(RootHash::new(bytes.into(), self.size))
    }
}

/// The log: leaves in order, appended only.
#[derive(Default)]
pub struct EvidenceLog {
    tree: MemoryBackedTree<Sha256, Leaf>,
}

impl std::fmt::Debug for EvidenceLog {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvidenceLog").field("size", &self.size()).finish()
    }
}

impl EvidenceLog {
    pub fn new() -> Self {
        Self::default()
    }

    /// The log made of `leaves`, in order (as stored).
    pub fn from_leaves<I, B>(leaves: I) -> Self
    where
        I: IntoIterator<Item = B>,
        B: Into<Vec<u8>>,
    {
        let mut log = Self::new();
        for leaf in leaves {
            log.append(leaf);
        }
        log
    }

    /// Appends one leaf; returns its index.
    pub fn append(&mut self, leaf: impl Into<Vec<u8>>) -> u64 {
        let index = self.tree.len();
        self.tree.push(Leaf(leaf.into()));
        index
    }

    pub fn size(&self) -> u64 {
        self.tree.len()
    }

    /// The leaf at `index`.
    pub fn leaf(&self, index: u64) -> Option<&[u8]> {
        usize::try_from(index).ok().and_then(|i| self.tree.get(i)).map(|l| l.0.as_slice())
    }

    /// The root at the current size.
    pub fn root(&self) -> TreeRoot {
        TreeRoot::of(&self.tree.root())
    }

    /// The root the log had when it was `size` leaves long.
    pub fn root_at(&self, size: u64) -> Result<TreeRoot, EvidenceError> {
        Ok(TreeRoot::of(&self.prefix(size)?.root()))
    }

    /// Proof that leaf `index` is in the tree of `size` leaves (hex of the concatenated
    /// sibling hashes, RFC 9162 section 2.1.3.1).
    pub fn inclusion_proof(&self, index: u64, size: u64) -> Result<String, EvidenceError> {
        if index >= size {
            return Err(self.out_of_range(format!("no leaf {index} in a tree of {size}")));
        }
        let tree = self.prefix(size)?;
        let i = usize::try_from(index).map_err(|_| self.out_of_range(format!("leaf {index}")))?;
        Ok(hex::encode(tree.prove_inclusion(i).as_bytes()))
    }

    /// Proof that the tree of `old` leaves is a prefix of the tree of `new` leaves
    /// (RFC 9162 section 2.1.4.1); empty when the sizes are equal.
    pub fn consistency_proof(&self, old: u64, new: u64) -> Result<String, EvidenceError> {
        if old == 0 || old > new {
            return Err(self.out_of_range(format!("no consistency proof from {old} to {new} leaves")));
        }
        if old == new {
            return Ok(String::new());
        }
        let tree = self.prefix(new)?;
        let additions = usize::try_from(new - old).map_err(|_| self.out_of_range(format!("{new} leaves")))?;
        Ok(hex::encode(tree.prove_consistency(additions).as_bytes()))
    }

    /// The tree of the first `size` leaves (the whole tree when `size` is its size).
    fn prefix(&self, size: u64) -> Result<std::borrow::Cow<'_, MemoryBackedTree<Sha256, Leaf>>, EvidenceError> {
        if size == 0 || size > self.size() {
            return Err(self.out_of_range(format!("no tree of {size} leaves")));
        }
        if size == self.size() {
            return Ok(std::borrow::Cow::Borrowed(&self.tree));
        }
        let mut tree = MemoryBackedTree::new();
        for leaf in self.tree.items().iter().take(size as usize) {
            tree.push(leaf.clone());
        }
        Ok(std::borrow::Cow::Owned(tree))
    }

    fn out_of_range(&self, what: String) -> EvidenceError {
        EvidenceError::OutOfRange { size: self.size(), what }
    }
}

/// Does `leaf` sit at `index` in the tree whose root is `root`, by `proof` (hex)?
pub fn verify_inclusion(root: &TreeRoot, leaf: &[u8], index: u64, proof: &str) -> Result<(), EvidenceError> {
    let root_ct = root.to_ct()?;
    let bytes = decode_hex(proof, "inclusion proof")?;
    let proof = InclusionProof::<Sha256>::try_from_bytes(bytes)
        .map_err(|e| EvidenceError::Malformed { what: "inclusion proof".into(), reason: e.to_string() })?;
    root_ct
        .verify_inclusion(&Leaf(leaf.to_vec()), index, &proof)
        .map_err(|e| EvidenceError::Malformed { what: "inclusion".into(), reason: e.to_string() })
}

/// Is the tree of `old` a prefix of the tree of `new`, by `proof` (hex)? Equal roots
/// need an empty proof; different roots of the same size are never consistent.
pub fn verify_consistency(old: &TreeRoot, new: &TreeRoot, proof: &str) -> Result<(), EvidenceError> {
    let inconsistent = |reason: String| EvidenceError::Malformed { what: "consistency".into(), reason };
    if old.size == new.size {
        return if old.hash == new.hash && proof.is_empty() {
            Ok(())
        } else {
            Err(inconsistent(format!("two different trees of {} leaves", old.size)))
        };
    }
    let bytes = decode_hex(proof, "consistency proof")?;
    let proof = ConsistencyProof::<Sha256>::try_from_bytes(bytes)
        .map_err(|e| EvidenceError::Malformed { what: "consistency proof".into(), reason: e.to_string() })?;
    new.to_ct()?.verify_consistency(&old.to_ct()?, &proof).map_err(|e| inconsistent(e.to_string()))
}

/// Lower-case hex only, the one spelling zhiwen writes: a digest, proof or key spelled
/// another way is refused, so that no byte of a package can change unnoticed.
pub(crate) fn decode_hex(s: &str, what: &str) -> Result<Vec<u8>, EvidenceError> {
    if s.bytes().any(|b| !matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
        return Err(EvidenceError::Malformed { what: what.into(), reason: "not lower-case hex".into() });
    }
    hex::decode(s).map_err(|e| EvidenceError::Malformed { what: what.into(), reason: e.to_string() })
}

pub(crate) fn decode_32(s: &str, what: &str) -> Result<[u8; 32], EvidenceError> {
    decode_hex(s, what)?
        .try_into()
        .map_err(|_| EvidenceError::Malformed { what: what.into(), reason: "not 32 bytes".into() })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RFC 6962's tree of one leaf is `SHA-256(0x00 || leaf)`: for the empty leaf, the
    /// well-known CT test vector.
    #[test]
    fn one_leaf_root_is_the_rfc_leaf_hash() {
        let log = EvidenceLog::from_leaves([Vec::new()]);
        assert_eq!(log.root().hash, "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d");
    }
}
