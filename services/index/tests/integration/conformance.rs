//! The conformance suite, written once and run against every implementation (the
//! pattern of Quickwit's `metastore_test_suite!`).

use zhiwen_core::IndexFamily::{Dna, LshBand, MegaShingle, SimhashBlock, WinnowChars, WinnowInitials};
use zhiwen_index::{query_sample_modulus, sample_query_keys, CandidateIndex, IndexConfig, LookupResult, Namespace};

use crate::common::{k, synthetic_keys};

/// Cap used by the suite, small enough to create big buckets quickly.
pub const CAP: usize = 5;

pub fn config() -> IndexConfig {
    IndexConfig { big_bucket_cap: CAP, ..IndexConfig::default() }
}

/// Instantiate every case for one harness factory.
macro_rules! conformance_suite {
    ($name:ident, $factory:path) => {
        mod $name {
            conformance_suite!(@cases $factory;
                lookup_counts_hits_per_family_and_ranks,
                readding_replaces_old_keys,
                ids_straddling_others_are_other_documents,
                one_value_in_two_families_is_two_keys,
                duplicates_and_repeated_docs_in_a_batch,
                remove_forgets_a_document,
                namespaces_are_separate,
                big_buckets_are_capped_and_reported,
                clear_empties_one_namespace,
                empty_inputs_and_ping,
                a_document_finds_itself_among_many,
                a_lookup_split_in_two_sampled_halves_merges_into_the_whole,
                common_keys_are_the_keys_of_many_documents_of_one_family,
                a_namespace_write_token_changes_with_its_writes_only,
                the_generation_counts_the_writes_that_change_the_index);
        }
    };
    (@cases $factory:path; $($case:ident),*) => {
        $(
            #[tokio::test]
            async fn $case() {
                let Some(h) = $factory($crate::conformance::config()).await else { return };
                $crate::conformance::$case(&*h.index).await;
            }
        )*
    };
}

conformance_suite!(embedded, crate::common::embedded);
conformance_suite!(redis_standalone, crate::common::redis);
conformance_suite!(redis_cluster, crate::common::redis_cluster);
conformance_suite!(redis_filtered, crate::common::redis_filtered);
conformance_suite!(redis_cluster_filtered, crate::common::redis_cluster_filtered);

const S: Namespace = Namespace::Sections;
const P: Namespace = Namespace::Pages;

pub async fn lookup_counts_hits_per_family_and_ranks(index: &dyn CandidateIndex) {
    index.add(S, 1, &[k(WinnowChars, 1), k(WinnowChars, 2), k(Dna, 10)]).await.unwrap();
    index.add(S, 2, &[k(WinnowChars, 2), k(Dna, 10), k(Dna, 11)]).await.unwrap();
    index.add(S, 3, &[k(MegaShingle, 99)]).await.unwrap();
    let query = [k(WinnowChars, 2), k(Dna, 10), k(Dna, 11), k(WinnowChars, 1), k(LshBand, 5)];
    let r = index.lookup(S, &query, 10).await.unwrap();
    assert_eq!(r.keys_queried, 5);
    assert_eq!(r.keys_found, 4, "LshBand 5 is stored for no document");
    assert_eq!(r.candidates_total, 2);
    let docs: Vec<_> = r.candidates.iter().map(|c| (c.doc, c.total)).collect();
    assert_eq!(docs, vec![(1, 3), (2, 3)], "ties rank by id");
    assert_eq!(r.candidates[0].hits.get(WinnowChars), 2);
    assert_eq!(r.candidates[0].hits.get(Dna), 1);
    assert_eq!(r.candidates[1].hits.get(Dna), 2);
    assert_eq!(r.candidates[1].hits.get(WinnowChars), 1);
    assert!(r.big_buckets.is_empty());

    index.add(S, 4, &query).await.unwrap();
    let r = index.lookup(S, &query, 1).await.unwrap();
    assert_eq!(r.candidates.len(), 1);
    assert_eq!((r.candidates[0].doc, r.candidates[0].total), (4, 5));
    assert_eq!(r.candidates_total, 3);

    let stats = index.stats().await.unwrap();
    assert_eq!(stats.backend, index.backend());
    let s = stats.namespace(S);
    assert_eq!((s.documents, s.postings, s.big_buckets), (4, 12, 0));
    assert!(stats.bytes_used > 0);
}

pub async fn readding_replaces_old_keys(index: &dyn CandidateIndex) {
    let old = [k(SimhashBlock, 1), k(Dna, 2), k(WinnowInitials, 3)];
    let new = [k(Dna, 2), k(WinnowInitials, 4)];
    index.add(S, 7, &old).await.unwrap();
    index.add(S, 7, &new).await.unwrap();
    assert!(index.lookup(S, &[k(SimhashBlock, 1), k(WinnowInitials, 3)], 10).await.unwrap().candidates.is_empty());
    let r = index.lookup(S, &new, 10).await.unwrap();
    assert_eq!(r.candidates.len(), 1);
    assert_eq!(r.candidates[0].total, 2);
    let s = index.stats().await.unwrap().namespace(S);
    assert_eq!((s.documents, s.postings), (1, 2));
    // The same keys again (in another order, with a duplicate) change nothing, next to a
    // document of the same batch whose keys did change.
    index.add(S, 8, &[k(Dna, 2)]).await.unwrap();
    let again = [k(WinnowInitials, 4), k(Dna, 2), k(Dna, 2)];
    index.add_batch(S, &[(7, again.to_vec()), (8, vec![k(Dna, 5)])]).await.unwrap();
    let r = index.lookup(S, &new, 10).await.unwrap();
    assert_eq!(r.candidates.iter().map(|c| (c.doc, c.total)).collect::<Vec<_>>(), vec![(7, 2)]);
    assert_eq!(index.lookup(S, &[k(Dna, 5)], 10).await.unwrap().candidates[0].doc, 8);
    let s = index.stats().await.unwrap().namespace(S);
    assert_eq!((s.documents, s.postings), (2, 3));
}

/// Posting lists are searched for a document id: an id whose bytes straddle two others
/// (here `C` is the last byte of `A` and the first seven of `B`) is another document.
pub async fn ids_straddling_others_are_other_documents(index: &dyn CandidateIndex) {
    let (a, b, c) = (1u64, 1u64 << 56, (1u64 << 56) | (1u64 << 48));
    let key = [k(Dna, 77)];
    index.add_batch(S, &[(a, key.to_vec()), (b, key.to_vec())]).await.unwrap();
    index.add(S, c, &key).await.unwrap();
    let docs = |r: LookupResult| r.candidates.iter().map(|c| c.doc).collect::<std::collections::BTreeSet<_>>();
    assert_eq!(docs(index.lookup(S, &key, 10).await.unwrap()), [a, b, c].into());
    assert!(index.remove(S, c).await.unwrap());
    assert_eq!(docs(index.lookup(S, &key, 10).await.unwrap()), [a, b].into());
    assert!(index.remove(S, a).await.unwrap());
    assert_eq!(docs(index.lookup(S, &key, 10).await.unwrap()), [b].into());
}

/// A key is its family and its value: the same value in another family names other
/// documents, and removing one document leaves the other family's posting alone.
pub async fn one_value_in_two_families_is_two_keys(index: &dyn CandidateIndex) {
    index.add_batch(S, &[(1, vec![k(Dna, 5)]), (2, vec![k(WinnowChars, 5)])]).await.unwrap();
    index.add(S, 3, &[k(WinnowChars, 5)]).await.unwrap();
    let docs = |r: LookupResult| r.candidates.iter().map(|c| c.doc).collect::<std::collections::BTreeSet<_>>();
    assert_eq!(docs(index.lookup(S, &[k(Dna, 5)], 10).await.unwrap()), [1].into());
    assert_eq!(docs(index.lookup(S, &[k(WinnowChars, 5)], 10).await.unwrap()), [2, 3].into());
    assert_eq!(index.stats().await.unwrap().namespace(S).postings, 3);
    assert!(index.remove(S, 1).await.unwrap());
    assert!(index.remove(S, 2).await.unwrap());
    assert!(docs(index.lookup(S, &[k(Dna, 5)], 10).await.unwrap()).is_empty());
    assert_eq!(docs(index.lookup(S, &[k(WinnowChars, 5)], 10).await.unwrap()), [3].into());
    // Indexing a document again with the keys it has changes nothing.
    index.add(S, 3, &[k(WinnowChars, 5)]).await.unwrap();
    assert_eq!(index.stats().await.unwrap().namespace(S).postings, 1);
    assert!(index.remove(S, 3).await.unwrap());
    assert_eq!(index.stats().await.unwrap().namespace(S).postings, 0);
}

pub async fn duplicates_and_repeated_docs_in_a_batch(index: &dyn CandidateIndex) {
    let batch = vec![
        (1, vec![k(Dna, 1), k(Dna, 1), k(Dna, 2)]),
        (2, vec![k(Dna, 9)]),
        (2, vec![k(Dna, 1)]), // the last occurrence of doc 2 wins
    ];
    index.add_batch(S, &batch).await.unwrap();
    let r = index.lookup(S, &[k(Dna, 1), k(Dna, 1), k(Dna, 2), k(Dna, 9)], 10).await.unwrap();
    assert_eq!(r.keys_queried, 3);
    let docs: Vec<_> = r.candidates.iter().map(|c| (c.doc, c.total)).collect();
    assert_eq!(docs, vec![(1, 2), (2, 1)]);
    let s = index.stats().await.unwrap().namespace(S);
    assert_eq!((s.documents, s.postings), (2, 3));
}

pub async fn remove_forgets_a_document(index: &dyn CandidateIndex) {
    let keys = [k(LshBand, 1), k(MegaShingle, 2)];
    index.add(S, 1, &keys).await.unwrap();
    index.add(S, 2, &keys[..1]).await.unwrap();
    assert!(index.remove(S, 1).await.unwrap());
    assert!(!index.remove(S, 1).await.unwrap());
    assert!(!index.remove(S, 99).await.unwrap());
    let r = index.lookup(S, &keys, 10).await.unwrap();
    let docs: Vec<_> = r.candidates.iter().map(|c| c.doc).collect();
    assert_eq!(docs, vec![2]);
    let s = index.stats().await.unwrap().namespace(S);
    assert_eq!((s.documents, s.postings), (1, 1));
}

pub async fn namespaces_are_separate(index: &dyn CandidateIndex) {
    index.add(S, 1, &[k(Dna, 1)]).await.unwrap();
    index.add(P, 1, &[k(Dna, 2)]).await.unwrap();
    let r = index.lookup(P, &[k(Dna, 1)], 10).await.unwrap();
    assert!(r.candidates.is_empty());
    let r = index.lookup(P, &[k(Dna, 2)], 10).await.unwrap();
    assert_eq!(r.candidates[0].doc, 1);
    assert!(index.remove(P, 1).await.unwrap());
    assert_eq!(index.lookup(S, &[k(Dna, 1)], 10).await.unwrap().candidates.len(), 1);
}

pub async fn big_buckets_are_capped_and_reported(index: &dyn CandidateIndex) {
    let boiler = k(WinnowChars, 0xB0B0);
    let docs: Vec<_> = (1..=10u64).map(|d| (d, vec![boiler, k(Dna, d)])).collect();
    // One at a time and in a batch must agree.
    index.add_batch(S, &docs[..3]).await.unwrap();
    for (d, keys) in &docs[3..] {
        index.add(S, *d, keys).await.unwrap();
    }
    let r = index.lookup(S, &[boiler, k(Dna, 3)], 10).await.unwrap();
    assert_eq!(r.big_buckets, vec![boiler]);
    let docs_found: Vec<_> = r.candidates.iter().map(|c| (c.doc, c.total)).collect();
    assert_eq!(docs_found, vec![(3, 1)], "a big bucket is not expanded");
    let s = index.stats().await.unwrap().namespace(S);
    assert_eq!(s.big_buckets, 1);
    assert_eq!(s.documents, 10);
    assert_eq!(s.postings, 10, "only the documents' own keys remain");
    // A big bucket stays big when documents leave it.
    assert!(index.remove(S, 1).await.unwrap());
    assert_eq!(index.lookup(S, &[boiler], 10).await.unwrap().big_buckets, vec![boiler]);
    // Below the cap a posting list is expanded.
    let shared = k(Dna, 0x5EED);
    for d in 100..100 + CAP as u64 - 1 {
        index.add(S, d, &[shared]).await.unwrap();
    }
    let r = index.lookup(S, &[shared], 100).await.unwrap();
    assert_eq!(r.candidates.len(), CAP - 1);
    assert!(r.big_buckets.is_empty());
}

pub async fn clear_empties_one_namespace(index: &dyn CandidateIndex) {
    index.add_batch(S, &[(1, vec![k(Dna, 1)]), (2, vec![k(Dna, 1)])]).await.unwrap();
    index.add(P, 1, &[k(Dna, 1)]).await.unwrap();
    index.clear(S).await.unwrap();
    assert!(index.lookup(S, &[k(Dna, 1)], 10).await.unwrap().candidates.is_empty());
    assert_eq!(index.lookup(P, &[k(Dna, 1)], 10).await.unwrap().candidates.len(), 1);
    let stats = index.stats().await.unwrap();
    assert_eq!(stats.namespace(S).documents, 0);
    assert_eq!(stats.namespace(S).postings, 0);
    assert_eq!(stats.namespace(P).documents, 1);
    // Usable after a clear.
    index.add(S, 3, &[k(Dna, 1)]).await.unwrap();
    assert_eq!(index.lookup(S, &[k(Dna, 1)], 10).await.unwrap().candidates[0].doc, 3);
}

pub async fn empty_inputs_and_ping(index: &dyn CandidateIndex) {
    index.ping().await.unwrap();
    index.add_batch(S, &[]).await.unwrap();
    index.add(S, 1, &[]).await.unwrap();
    let r = index.lookup(S, &[], 10).await.unwrap();
    assert!(r.candidates.is_empty());
    assert_eq!(index.stats().await.unwrap().namespace(S).documents, 1, "a document without keys is still known");
    let r = index.lookup(S, &[k(Dna, 1)], 0).await.unwrap();
    assert!(r.candidates.is_empty());
}

pub async fn a_document_finds_itself_among_many(index: &dyn CandidateIndex) {
    let docs: Vec<_> = (0..1_500u64).map(|d| (d * 7919, synthetic_keys(d, 60))).collect();
    for chunk in docs.chunks(400) {
        index.add_batch(S, chunk).await.unwrap();
    }
    for probe in [0usize, 777, 1_499] {
        let (doc, keys) = &docs[probe];
        let r = index.lookup(S, keys, 5).await.unwrap();
        assert_eq!(r.candidates[0].doc, *doc);
        assert_eq!(r.candidates[0].total, 60);
        assert_eq!(r.candidates[0].hits.get(Dna), 10);
    }
    let s = index.stats().await.unwrap().namespace(S);
    assert_eq!((s.documents, s.postings), (1_500, 90_000));
}

/// A query looked up as its winnowed keys (sampled as the whole query would be) and its
/// other keys, each unlimited, merges into exactly the lookup of the whole query: what a
/// matcher that looks a page's winnowed keys up before its word stage relies on.
pub async fn a_lookup_split_in_two_sampled_halves_merges_into_the_whole(index: &dyn CandidateIndex) {
    let winnowed = |k: &zhiwen_index::IndexKey| matches!(k.family, WinnowChars | WinnowInitials);
    // A small query (not sampled) and one over the default budget of 768 keys (sampled).
    for (seed, query) in [(30u64, synthetic_keys(3, 300)), (60, synthetic_keys(4, 2_400))] {
        // Twelve documents on overlapping windows of the query (no key in more than two,
        // below the big-bucket cap), with keys of their own.
        let stride = query.len() / 14;
        let docs: Vec<(u64, Vec<zhiwen_index::IndexKey>)> = (0..12u64)
            .map(|d| {
                let start = d as usize * stride;
                let mut keys = query[start..(start + stride + stride / 2 + d as usize).min(query.len())].to_vec();
                keys.extend(synthetic_keys(1_000 + seed + d, 40));
                (seed + d, keys)
            })
            .collect();
        index.add_batch(S, &docs).await.unwrap();
        let (w, other): (Vec<_>, Vec<_>) = query.iter().copied().partition(|k| winnowed(k));
        let m = index.query_sample_modulus(other.len(), w.len());
        assert_eq!(m, sample_query_keys(query.clone(), IndexConfig::default().query_key_budget).1);
        assert_eq!(m, query_sample_modulus(other.len(), w.len(), IndexConfig::default().query_key_budget));
        let sampled: Vec<_> = w.into_iter().filter(|k| k.value & (m - 1) == 0).collect();
        let first = index.lookup_sampled(S, &sampled, m).await.unwrap();
        let second = index.lookup_sampled(S, &other, m).await.unwrap();
        for limit in [5, 50, 1_000] {
            let whole = index.lookup(S, &query, limit).await.unwrap();
            assert!(whole.candidates.len() >= limit.min(12), "{whole:?}");
            assert_eq!(first.clone().merged(second.clone(), limit), whole, "limit {limit}, modulus {m}");
        }
    }
}

pub async fn common_keys_are_the_keys_of_many_documents_of_one_family(index: &dyn CandidateIndex) {
    // 0xC3 in 3 sections, 0xC2 in 2, 0xB16 in more than the cap (a big bucket), 0xC3 of
    // another family in 3, 0xC3 in 3 pages; every document's own keys in one.
    let mut docs: Vec<(u64, Vec<_>)> = (1..=8u64).map(|d| (d, synthetic_keys(d, 40))).collect();
    for (d, keys) in docs.iter_mut() {
        keys.push(k(WinnowChars, 0xB16));
        if *d <= 3 {
            keys.extend([k(WinnowChars, 0xC3), k(WinnowInitials, 0xC3)]);
        }
        if *d <= 2 {
            keys.push(k(WinnowChars, 0xC2));
        }
    }
    index.add_batch(S, &docs).await.unwrap();
    let pages: Vec<_> = (1..=3u64).map(|d| (d, vec![k(WinnowChars, 0xE3)])).collect();
    index.add_batch(P, &pages).await.unwrap();
    let mut common = index.common_keys(S, WinnowChars, 3).await.unwrap();
    common.sort_unstable();
    assert_eq!(common, vec![0xC3, 0xB16]);
    let mut two = index.common_keys(S, WinnowChars, 2).await.unwrap();
    two.sort_unstable();
    assert_eq!(two, vec![0xC2, 0xC3, 0xB16]);
    assert_eq!(index.common_keys(S, WinnowInitials, 3).await.unwrap(), vec![0xC3]);
    assert_eq!(index.common_keys(P, WinnowChars, 3).await.unwrap(), vec![0xE3]);
    // A document leaving takes its count with it.
    assert!(index.remove(S, 3).await.unwrap());
    assert_eq!(index.common_keys(S, WinnowInitials, 3).await.unwrap(), Vec::<u64>::new());
}

pub async fn a_namespace_write_token_changes_with_its_writes_only(index: &dyn CandidateIndex) {
    let tokens = || async { (index.write_token(S).await.unwrap(), index.write_token(P).await.unwrap()) };
    let start = tokens().await;
    index.add(S, 1, &[k(WinnowChars, 1), k(Dna, 10)]).await.unwrap();
    let added = tokens().await;
    assert_ne!(added.0, start.0, "an add changes the namespace's token");
    assert_eq!(added.1, start.1, "and not the other namespace's");
    // Reads, and an add that changes nothing, leave it.
    index.lookup(S, &[k(WinnowChars, 1)], 10).await.unwrap();
    index.common_keys(S, WinnowChars, 1).await.unwrap();
    index.add(S, 1, &[k(Dna, 10), k(WinnowChars, 1)]).await.unwrap();
    assert_eq!(tokens().await, added);
    index.add(S, 1, &[k(WinnowChars, 2)]).await.unwrap();
    let replaced = tokens().await;
    assert_ne!(replaced.0, added.0, "a document's keys replaced");
    assert!(!index.remove(S, 7).await.unwrap());
    assert_eq!(tokens().await, replaced, "removing a document that is not there changes nothing");
    assert!(index.remove(S, 1).await.unwrap());
    let removed = tokens().await;
    assert_ne!(removed.0, replaced.0);
    index.add(P, 5, &[k(WinnowChars, 2)]).await.unwrap();
    let page = tokens().await;
    assert_eq!(page.0, removed.0);
    assert_ne!(page.1, removed.1);
    index.clear(S).await.unwrap();
    let cleared = tokens().await;
    assert_ne!(cleared.0, page.0, "a clear changes it");
    assert_ne!(cleared.0, start.0);
    assert_eq!(cleared.1, page.1);
}

pub async fn the_generation_counts_the_writes_that_change_the_index(index: &dyn CandidateIndex) {
    let generation = || async { index.generation().await.unwrap() };
    let start = generation().await;
    index.add(S, 1, &[k(WinnowChars, 1), k(Dna, 10)]).await.unwrap();
    let added = generation().await;
    assert!(added > start, "an add counts: {start} -> {added}");
    // Reads, an add that changes nothing and a removal of nothing do not.
    index.lookup(S, &[k(WinnowChars, 1)], 10).await.unwrap();
    index.add(S, 1, &[k(Dna, 10), k(WinnowChars, 1)]).await.unwrap();
    assert!(!index.remove(S, 7).await.unwrap());
    assert_eq!(generation().await, added);
    // Every other write does, in either namespace, and it never goes back.
    index.add(P, 5, &[k(WinnowChars, 2)]).await.unwrap();
    let page = generation().await;
    assert!(page > added);
    assert!(index.remove(S, 1).await.unwrap());
    let removed = generation().await;
    assert!(removed > page);
    index.clear(P).await.unwrap();
    assert!(generation().await > removed, "a clear counts");
}
