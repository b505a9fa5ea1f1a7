//! The candidate index of zhiwen: from a query document's fingerprint pieces
//! ([`IndexKey`]s: simhash block keys, DNA segment codes, mega-shingles, LSH bands,
//! winnowed hashes) to the stored documents that share them, with per-family hit
//! counts, without scanning the library.
//!
//! It owns the [`CandidateIndex`] trait and its two implementations: [`RedisIndex`]
//! (production; layout and Redis Cluster reasoning in [`redis`]) and [`EmbeddedIndex`]
//! (the default: in-memory postings persisted write-through to SQLite). Around the trait
//! sit the [`RetryingIndex`] decorator and [`rebuild`]. The index is *derived data*: the
//! fingerprint store is the truth, and `zhiwen reindex` rebuilds the index from it with
//! [`rebuild`] / [`rebuild_stream`]. So this crate must not own fingerprints, compare
//! documents or decide matches (that is the matcher's job on the candidates it returns),
//! and it must not read the fingerprint or page stores itself: callers feed it keys.
//!
//! Documents are `u64` ids within a [`Namespace`]: protected work sections (the
//! "mother library") or stored pages (so a newly added work can be matched against old
//! pages). Posting lists that reach [`IndexConfig::big_bucket_cap`] documents ("big
//! buckets", e.g. boilerplate shared by thousands of pages) stop growing, are listed in
//! [`LookupResult::big_buckets`] instead of being expanded, and are counted in stats.

mod embedded;
mod error;
mod lookup;
mod rebuild;
pub mod redis;
mod retry;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

pub use embedded::EmbeddedIndex;
pub use error::{IndexError, Result};
pub use lookup::{
    kept_by_sampling, query_sample_modulus, sample_query_keys, sample_winnowed_keys, sample_winnowed_keys_only,
    Candidate, FamilyHits, LookupResult,
};
pub use rebuild::{rebuild, rebuild_stream, RebuildReport};
pub use redis::{RedisConfig, RedisIndex};
pub use retry::{RetryPolicy, RetryingIndex};
pub use zhiwen_core::{IndexFamily, IndexKey};

/// A document id within a namespace.
pub type DocId = u64;

/// Which collection of documents a key belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Namespace {
    /// Protected work sections (the "mother library").
    Sections,
    /// Stored web pages.
    Pages,
}

impl Namespace {
    /// Both namespaces.
    pub const ALL: [Namespace; 2] = [Namespace::Sections, Namespace::Pages];

    /// Stable short name (used in Redis keys and reports).
    pub fn as_str(self) -> &'static str {
        match self {
            Namespace::Sections => "s",
            Namespace::Pages => "p",
        }
    }

    fn index(self) -> usize {
        match self {
            Namespace::Sections => 0,
            Namespace::Pages => 1,
        }
    }
}

/// Settings shared by every implementation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexConfig {
    /// A posting list that reaches this many documents becomes a big bucket: it is
    /// emptied, stops accepting documents and is reported instead of expanded on lookup.
    pub big_bucket_cap: usize,
    /// Lookups with more keys than this look up a consistent sample of their winnowed
    /// keys ([`sample_query_keys`]; the result's `sample_modulus` says which); 0 looks
    /// up every key. One key costs one posting-list read (a field read in Redis' single
    /// thread, a probe of a large hash map in the embedded index), so this bounds a
    /// 10 KB page's lookup (~1,300 keys) to about half. The evaluation records the same
    /// detections with 768 as with every key (`docs/evaluation.md`).
    pub query_key_budget: usize,
}

impl Default for IndexConfig {
    fn default() -> Self {
        IndexConfig { big_bucket_cap: 2_000, query_key_budget: 768 }
    }
}

/// Size and statistics of an index.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexStats {
    /// Which implementation (`"redis"`, `"embedded"`).
    pub backend: String,
    /// Per namespace, in [`Namespace::ALL`] order.
    pub namespaces: Vec<NamespaceStats>,
    /// Bytes used: Redis `used_memory` of the server (all prefixes), or the embedded
    /// index's estimated heap plus its SQLite file.
    pub bytes_used: u64,
    /// Of `bytes_used`, the bytes on disk: the embedded index's SQLite file and its
    /// write-ahead log (the rest is its estimated heap); 0 for Redis.
    #[serde(default)]
    pub file_bytes: u64,
    /// The Redis section filter, when the index has one.
    #[serde(default)]
    pub section_filter: Option<FilterStats>,
}

/// Size and fill of the Redis section filter (`RedisConfig::section_filter_mb`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct FilterStats {
    /// Bits in the filter.
    pub bits: u64,
    /// Bits set. Past about half of `bits`, lookups skip few keys: time for a larger
    /// filter and `zhiwen reindex`.
    pub bits_set: u64,
}

/// Statistics of one namespace.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NamespaceStats {
    /// The namespace.
    pub namespace: Namespace,
    /// Indexed documents.
    pub documents: u64,
    /// Stored (key, document) entries, big buckets excluded.
    pub postings: u64,
    /// Keys whose posting list became a big bucket.
    pub big_buckets: u64,
}

impl IndexStats {
    /// The statistics of `ns` (zeros when absent).
    pub fn namespace(&self, ns: Namespace) -> NamespaceStats {
        self.namespaces.iter().find(|s| s.namespace == ns).cloned().unwrap_or(NamespaceStats {
            namespace: ns,
            documents: 0,
            postings: 0,
            big_buckets: 0,
        })
    }
}

/// The candidate index: documents' fingerprint keys in, candidate documents out.
///
/// Object-safe (`Arc<dyn CandidateIndex>`). Every write is idempotent, so retrying a
/// failed call (see [`RetryingIndex`]) is always safe.
#[async_trait]
pub trait CandidateIndex: Send + Sync {
    /// Which implementation (`"redis"`, `"embedded"`), for logs and stats.
    fn backend(&self) -> &'static str;

    /// Index one document. Re-adding a document replaces its previous keys. Duplicate
    /// keys are ignored.
    async fn add(&self, ns: Namespace, doc: DocId, keys: &[IndexKey]) -> Result<()> {
        self.add_batch(ns, &[(doc, keys.to_vec())]).await
    }

    /// Index many documents at once (the fast path: pipelined/batched). If a document
    /// appears twice in the batch, the last occurrence wins.
    async fn add_batch(&self, ns: Namespace, docs: &[(DocId, Vec<IndexKey>)]) -> Result<()>;

    /// Remove a document; returns whether it was indexed.
    async fn remove(&self, ns: Namespace, doc: DocId) -> Result<bool>;

    /// The documents sharing keys with `keys`, with per-family hit counts, best first
    /// (most shared keys, then lowest id), at most `limit`. Keys whose posting list is
    /// a big bucket are reported in [`LookupResult::big_buckets`] instead.
    async fn lookup(&self, ns: Namespace, keys: &[IndexKey], limit: usize) -> Result<LookupResult>;

    /// [`CandidateIndex::lookup`] of keys the caller already sampled at `modulus` (see
    /// [`query_sample_modulus`]): no further sampling, every candidate (no limit). Two
    /// such lookups of disjoint keys give, [`LookupResult::merged`], what one lookup of
    /// all the keys gives.
    async fn lookup_sampled(&self, ns: Namespace, keys: &[IndexKey], modulus: u64) -> Result<LookupResult>;

    /// The modulus [`CandidateIndex::lookup`] samples a query of `fixed` non-winnow and
    /// `winnowed` winnowed keys with (the backend's query key budget).
    fn query_sample_modulus(&self, fixed: usize, winnowed: usize) -> u64;

    /// The values of the `family` keys of `ns` whose posting list holds at least
    /// `min_docs` documents (big buckets included), in no particular order: the text
    /// common to many documents, read from the index itself (the catalogue-common text
    /// of the matcher). Reads every posting of `ns`; memory holds only the answer. The
    /// Redis index keeps the answer with the write token it was read at
    /// ([`CandidateIndex::write_token`]) and gives it back, reading no posting, while the
    /// token is unchanged (another process's first task at a million sections).
    async fn common_keys(&self, ns: Namespace, family: IndexFamily, min_docs: u32) -> Result<Vec<u64>>;

    /// A token of the content of `ns` that changes with every write that may change it
    /// (an add that changed a document, a removal, a clear): a reader that sees the token
    /// it read before a read of `ns` knows that nothing was written to `ns` since (so the
    /// matcher measures [`CandidateIndex::common_keys`] again only when the sections
    /// changed, with one small read per task). Redis sets a new one before and after each
    /// such write, so a write that failed half-way changed it too. Compared for equality
    /// only; 0 when none is recorded (a Redis index last written by an older version, or
    /// one that lost its data).
    async fn write_token(&self, ns: Namespace) -> Result<u64>;

    /// Documents, postings, big buckets and bytes used.
    async fn stats(&self) -> Result<IndexStats>;

    /// Remove every document of `ns` (before a rebuild).
    async fn clear(&self, ns: Namespace) -> Result<()>;

    /// Check that the backend answers.
    async fn ping(&self) -> Result<()>;

    /// The identity of the data the index holds: a random id given when the index was
    /// first filled from empty, and anew by every [`CandidateIndex::clear`]. `None` when
    /// the index lost its data since (a Redis restarted without persistence, a flush).
    /// The store keeps the identity of the index it was indexed into, so a caller can
    /// tell its own index from an empty or foreign one.
    async fn identity(&self) -> Result<Option<String>>;

    /// A count of the writes that changed the index (adds that changed a document,
    /// removals, clears), kept with its data and counted after each write's data is in
    /// place; it only grows. A caller that records the generation it saw after its own
    /// writes knows that an index showing a smaller one is older than those writes: a
    /// Redis restarted from an earlier snapshot, an index file restored from an earlier
    /// copy (the identity of either is unchanged). 0 for an index last written before
    /// generations were counted.
    async fn generation(&self) -> Result<u64>;
}

/// A fresh random index identity (128 bits, hex).
pub(crate) fn new_identity() -> String {
    format!("{:032x}", rand::random::<u128>())
}

/// Sorted, deduplicated copy of `keys` (every implementation normalises the same way).
pub(crate) fn normalize_keys(keys: &[IndexKey]) -> Vec<IndexKey> {
    let mut keys = keys.to_vec();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// The batch with duplicates of a document removed, the last occurrence winning.
pub(crate) fn last_wins(docs: &[(DocId, Vec<IndexKey>)]) -> Vec<(DocId, Vec<IndexKey>)> {
    let mut seen = std::collections::HashSet::with_capacity(docs.len());
    let mut out: Vec<(DocId, Vec<IndexKey>)> = Vec::with_capacity(docs.len());
    for (doc, keys) in docs.iter().rev() {
        if seen.insert(*doc) {
            out.push((*doc, normalize_keys(keys)));
        }
    }
    out.reverse();
    out
}
