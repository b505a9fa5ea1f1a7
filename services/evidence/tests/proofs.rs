//! The log's proofs: RFC 6962 test vectors, and property tests of inclusion and
//! consistency for random log sizes, including that tampering is caught.

use proptest::prelude::*;
use zhiwen_evidence::{verify_consistency, verify_inclusion, EvidenceLog};

/// The Certificate Transparency reference test leaves and the roots of their prefixes
/// (the reference implementation's Merkle tree tests).
const LEAVES: [&str; 8] =
    ["", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"];
const ROOTS: [&str; 8] = [
    "6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
    "fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
    "aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
    "d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
    "4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
    "76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
    "ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
    "5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
];

#[test]
fn roots_are_the_rfc_6962_reference_roots() {
    let log = EvidenceLog::from_leaves(LEAVES.iter().map(|h| hex::decode(h).unwrap()));
    for (i, root) in ROOTS.iter().enumerate() {
        assert_eq!(log.root_at(i as u64 + 1).unwrap().hash, *root, "root of the first {} leaves", i + 1);
    }
}

fn log_of(n: usize, salt: u8) -> EvidenceLog {
    EvidenceLog::from_leaves((0..n).map(|i| format!("capture {i} {salt}").into_bytes()))
}

/// Flips one bit of a hex string's `at`-th byte.
fn flip(hex_text: &str, at: usize) -> String {
    let mut bytes = hex::decode(hex_text).unwrap();
    let i = at % bytes.len();
    bytes[i] ^= 1;
    hex::encode(bytes)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn inclusion_proofs_verify_and_tampering_fails(n in 1usize..300, pick in any::<u64>(), grow in 0u64..50, at in any::<usize>()) {
        let log = log_of(n, 0);
        let index = pick % n as u64;
        let size = (index + 1 + grow).min(n as u64);
        let root = log.root_at(size).unwrap();
        let proof = log.inclusion_proof(index, size).unwrap();
        let leaf = log.leaf(index).unwrap().to_vec();
        prop_assert!(verify_inclusion(&root, &leaf, index, &proof).is_ok());
        // Another leaf, another index, a changed proof or a changed root: all refused.
        prop_assert!(verify_inclusion(&root, b"not a capture of this log", index, &proof).is_err());
        if size > 1 {
            let other = (index + 1) % size;
            prop_assert!(verify_inclusion(&root, &leaf, other, &proof).is_err());
        }
        if !proof.is_empty() {
            prop_assert!(verify_inclusion(&root, &leaf, index, &flip(&proof, at)).is_err());
        }
        let mut changed = root.clone();
        changed.hash = flip(&root.hash, at);
        prop_assert!(verify_inclusion(&changed, &leaf, index, &proof).is_err());
    }

    #[test]
    fn consistency_proofs_verify_and_rewritten_logs_fail(n in 2usize..300, a in any::<u64>(), b in any::<u64>(), at in any::<usize>()) {
        let log = log_of(n, 0);
        let (x, y) = (1 + a % n as u64, 1 + b % n as u64);
        let (old, new) = (x.min(y), x.max(y));
        let proof = log.consistency_proof(old, new).unwrap();
        let (old_root, new_root) = (log.root_at(old).unwrap(), log.root_at(new).unwrap());
        prop_assert!(verify_consistency(&old_root, &new_root, &proof).is_ok());
        // A log whose history was rewritten (its first leaf changed) is not an extension
        // of the old head, whatever proof it offers.
        let mut rewritten = EvidenceLog::from_leaves([b"forged".to_vec()]);
        for i in 1..n as u64 {
            rewritten.append(log.leaf(i).unwrap().to_vec());
        }
        if new > old {
            let forged = rewritten.consistency_proof(old, new).unwrap();
            prop_assert!(verify_consistency(&old_root, &rewritten.root_at(new).unwrap(), &forged).is_err());
            prop_assert!(verify_consistency(&old_root, &new_root, &flip(&proof, at)).is_err());
        } else {
            prop_assert!(verify_consistency(&old_root, &rewritten.root_at(new).unwrap(), "").is_err());
        }
    }
}

#[test]
fn proofs_out_of_range_are_errors_not_panics() {
    let log = log_of(5, 0);
    assert!(log.inclusion_proof(5, 5).is_err());
    assert!(log.inclusion_proof(0, 6).is_err());
    assert!(log.consistency_proof(0, 3).is_err());
    assert!(log.consistency_proof(4, 3).is_err());
    assert!(log.root_at(0).is_err());
    assert!(verify_inclusion(&log.root(), b"x", 0, "zz").is_err());
}
