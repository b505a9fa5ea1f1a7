//! The embedded index persists: a restart (re-open) keeps it.

use zhiwen_core::IndexFamily::{Dna, WinnowChars};
use zhiwen_index::{CandidateIndex, EmbeddedIndex, IndexConfig, IndexError, IndexKey, Namespace};

use crate::common::k;

/// The documents a lookup of `keys` finds, best first.
async fn found(index: &EmbeddedIndex, ns: Namespace, keys: Vec<IndexKey>) -> Vec<u64> {
    index.lookup(ns, &keys, 10).await.unwrap().candidates.iter().map(|c| c.doc).collect()
}

#[tokio::test]
async fn reopening_keeps_the_index() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    let config = IndexConfig { big_bucket_cap: 3, ..IndexConfig::default() };
    let before;
    {
        let index = EmbeddedIndex::open(&path, config).unwrap();
        let docs: Vec<_> = (1..=5u64).map(|d| (d, vec![k(WinnowChars, 1), k(Dna, d)])).collect();
        index.add_batch(Namespace::Sections, &docs).await.unwrap();
        index.add(Namespace::Pages, 9, &[k(Dna, 2)]).await.unwrap();
        index.add(Namespace::Sections, 5, &[k(Dna, 50)]).await.unwrap();
        assert!(index.remove(Namespace::Sections, 4).await.unwrap());
        before = index.lookup(Namespace::Sections, &[k(Dna, 2), k(Dna, 50), k(WinnowChars, 1)], 10).await.unwrap();
        assert_eq!(before.big_buckets, vec![k(WinnowChars, 1)]);
    }
    let index = EmbeddedIndex::open(&path, config).unwrap();
    // Four writes changed it: the file keeps the count.
    assert_eq!(index.generation().await.unwrap(), 4);
    let after = index.lookup(Namespace::Sections, &[k(Dna, 2), k(Dna, 50), k(WinnowChars, 1)], 10).await.unwrap();
    assert_eq!(after.candidates, before.candidates);
    let stats = index.stats().await.unwrap();
    assert_eq!(stats.namespace(Namespace::Sections).documents, 4);
    assert_eq!(stats.namespace(Namespace::Pages).documents, 1);
    assert!(stats.file_bytes > 0 && stats.bytes_used > stats.file_bytes, "{stats:?}");
    assert_eq!(index.lookup(Namespace::Pages, &[k(Dna, 2)], 10).await.unwrap().candidates[0].doc, 9);
}

/// Memory keeps no document's key list (only a hash of it): indexing a document again
/// with other keys, or removing it, reads its old list back from the file, after a
/// re-open too, and leaves none of the old keys naming it.
#[tokio::test]
async fn after_reopening_a_document_indexed_again_or_removed_leaves_none_of_its_old_keys() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    let s = Namespace::Sections;
    {
        let index = EmbeddedIndex::open(&path, IndexConfig::default()).unwrap();
        index.add(s, 1, &[k(Dna, 1), k(Dna, 2)]).await.unwrap();
        index.add(s, 2, &[k(Dna, 2), k(Dna, 3)]).await.unwrap();
    }
    let in_memory = EmbeddedIndex::in_memory(IndexConfig::default()).unwrap();
    in_memory.add(s, 1, &[k(Dna, 1), k(Dna, 2)]).await.unwrap();
    in_memory.add(s, 2, &[k(Dna, 2), k(Dna, 3)]).await.unwrap();
    for index in [EmbeddedIndex::open(&path, IndexConfig::default()).unwrap(), in_memory] {
        let docs = |keys: Vec<_>| found(&index, s, keys);
        index.add(s, 1, &[k(Dna, 4)]).await.unwrap();
        assert!(docs(vec![k(Dna, 1)]).await.is_empty());
        assert_eq!(docs(vec![k(Dna, 2)]).await, vec![2]);
        assert_eq!(docs(vec![k(Dna, 4)]).await, vec![1]);
        assert!(index.remove(s, 2).await.unwrap());
        assert!(!index.remove(s, 2).await.unwrap());
        assert!(docs(vec![k(Dna, 2), k(Dna, 3)]).await.is_empty());
        let stats = index.stats().await.unwrap();
        assert_eq!((stats.namespace(s).documents, stats.namespace(s).postings), (1, 1));
    }
}

#[tokio::test]
async fn in_memory_index_and_bad_config() {
    let index = EmbeddedIndex::in_memory(IndexConfig::default()).unwrap();
    index.add(Namespace::Sections, 1, &[k(Dna, 1)]).await.unwrap();
    assert_eq!(index.lookup(Namespace::Sections, &[k(Dna, 1)], 1).await.unwrap().candidates.len(), 1);
    let stats = index.stats().await.unwrap();
    assert!(stats.file_bytes == 0 && stats.bytes_used > 0, "{stats:?}");
    let err = EmbeddedIndex::in_memory(IndexConfig { big_bucket_cap: 1, ..IndexConfig::default() }).unwrap_err();
    assert!(matches!(err, IndexError::Config(_)), "{err}");
    assert!(!err.is_retryable());
}

#[tokio::test]
async fn unopenable_file_names_its_path() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("missing-dir").join("index.sqlite");
    let err = EmbeddedIndex::open(&path, IndexConfig::default()).unwrap_err();
    assert!(err.to_string().contains("missing-dir"), "{err}");
}

/// A stored key list altered outside zhiwen fails, as a whole, the write that needs it:
/// the file keeps what it held and memory too (no document of the batch half applied).
#[tokio::test]
async fn a_bad_stored_key_list_fails_the_write_that_reads_it_and_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("index.sqlite");
    let s = Namespace::Sections;
    let index = EmbeddedIndex::open(&path, IndexConfig::default()).unwrap();
    index.add(s, 1, &[k(Dna, 1)]).await.unwrap();
    index.add(s, 2, &[k(Dna, 2)]).await.unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other.execute("UPDATE docs SET keys = x'0102' WHERE doc = 1", []).unwrap();
    let stored =
        |doc: i64| -> Vec<u8> { other.query_row("SELECT keys FROM docs WHERE doc = ?1", [doc], |r| r.get(0)).unwrap() };
    let (one, two) = (stored(1), stored(2));
    let docs = |keys: Vec<_>| found(&index, s, keys);

    let err = index.add_batch(s, &[(2, vec![k(Dna, 3)]), (1, vec![k(Dna, 4)])]).await.unwrap_err();
    assert!(matches!(err, IndexError::Corrupt(_)) && err.to_string().contains("doc 1"), "{err}");
    assert!(!err.is_retryable());
    assert_eq!((docs(vec![k(Dna, 2)]).await, docs(vec![k(Dna, 3)]).await), (vec![2], vec![]));
    assert_eq!((stored(1), stored(2)), (one.clone(), two.clone()));

    let err = index.remove(s, 1).await.unwrap_err();
    assert!(matches!(err, IndexError::Corrupt(_)), "{err}");
    assert_eq!(docs(vec![k(Dna, 1)]).await, vec![1]);
    assert_eq!((stored(1), stored(2)), (one, two));
}
