//! The embedded index: postings in memory, documents persisted write-through to SQLite.
//!
//! Only the documents' key lists are stored (`docs(ns, doc, keys)`, one row per
//! document, keys packed 9 bytes each); the postings are rebuilt from them at open,
//! which keeps the file small and the on-disk format trivial. The key lists stay on
//! disk: memory holds the postings and, per document, a hash of its list; removing or
//! re-indexing a document reads its old list back in the transaction that replaces it.
//! Lookups only take a read lock on the in-memory maps, so they run at memory speed.

use std::collections::hash_map::Entry;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension};
use rustc_hash::FxHashMap;
use zhiwen_core::hash::mix64;
use zhiwen_core::{IndexFamily, IndexKey};

use crate::lookup::Accumulator;
use crate::{
    last_wins, normalize_keys, CandidateIndex, DocId, IndexConfig, IndexError, IndexStats, LookupResult, Namespace,
    NamespaceStats, Result,
};

/// The default, server-less implementation of [`CandidateIndex`].
#[derive(Debug)]
pub struct EmbeddedIndex {
    config: IndexConfig,
    spaces: [RwLock<Space>; 2],
    db: Db,
    /// See [`CandidateIndex::identity`]; persisted in the file's `meta` table.
    identity: Mutex<String>,
    /// See [`CandidateIndex::write_token`]: a count of the writes to each namespace in
    /// this process (the only one that writes to an embedded index), never reset.
    writes: [AtomicU64; 2],
    /// See [`CandidateIndex::generation`]: the file's count of writes (its `meta` row
    /// `generation`, counted in each write's transaction), as of the last commit.
    generation: AtomicU64,
}

/// Count a write in the file's generation, inside the write's transaction.
fn next_generation(tx: &rusqlite::Transaction<'_>) -> rusqlite::Result<u64> {
    tx.execute(
        "INSERT INTO meta (name, value) VALUES ('generation', '1')
         ON CONFLICT (name) DO UPDATE SET value = CAST(CAST(value AS INTEGER) + 1 AS TEXT)",
        [],
    )?;
    tx.query_row("SELECT CAST(value AS INTEGER) FROM meta WHERE name = 'generation'", [], |r| r.get::<_, i64>(0))
        .map(|g| g.max(0) as u64)
}

/// The documents' key lists. Every write takes `conn` first and updates the spaces
/// while it still holds it, so memory follows the disk in the order the disk was written.
#[derive(Debug)]
struct Db {
    /// The file; `None` for [`EmbeddedIndex::in_memory`] (an in-memory database).
    path: Option<PathBuf>,
    conn: Mutex<Connection>,
}

/// What errors call an in-memory database.
const IN_MEMORY: &str = ":memory:";

impl Db {
    /// The file, as errors name it.
    fn name(&self) -> PathBuf {
        self.path.clone().unwrap_or_else(|| IN_MEMORY.into())
    }

    fn err(&self) -> impl Fn(rusqlite::Error) -> IndexError + '_ {
        |source| IndexError::Sqlite { path: self.name(), source }
    }

    /// A key list read back from the file (written by this index from valid keys).
    fn unpack_stored(&self, doc: DocId, packed: &[u8]) -> Result<Vec<IndexKey>> {
        unpack_keys(packed)
            .ok_or_else(|| IndexError::Corrupt(format!("{}: bad key list of doc {doc}", self.name().display())))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }
}

/// One namespace in memory, laid out for size: a catalogue's postings are most of a
/// matching process's memory (issue #31; docs/benchmarks.md).
///
/// - One map per fingerprint family, keyed by the key's 8-byte value (an [`IndexKey`] is
///   16 bytes with its family and padding), hashed with FxHash (the values are hashes
///   already; SipHash's protection against chosen keys buys nothing for them).
/// - Most keys name one document (a winnowed k-gram of one section): such a posting
///   holds it inline ([`Posting::One`]) instead of a vector on the heap, and the few
///   that name several hold their vector boxed, so a posting is 16 bytes and a map slot
///   25 (40 and 41 with the vector inline: issue #30, docs/bench-index.md).
/// - A document's own key list (what removing or re-indexing it needs) is read back from
///   the file when needed; memory keeps a 64-bit hash of it ([`keys_hash`]), enough to
///   see that a document is indexed again with the keys it has (9 bytes a key before:
///   as much as the postings themselves at 100k sections).
#[derive(Debug, Default)]
struct Space {
    postings: [Postings; FAMILIES],
    docs: FxHashMap<DocId, u64>,
    big: HashSet<IndexKey>,
    entries: u64,
}

/// One family's postings, split by key value into [`SHARDS`] maps. A hash map grows by
/// doubling, holding its old and its new table at once while it moves the entries: one
/// map per family made every such step a peak of three times the family's table, which
/// at 100k sections is hundreds of megabytes (the bench's peak fell from 4.10 to 3.75 GB
/// when split: docs/bench-index.md, "Postings in shards"). Split, a step holds one shard
/// twice, and the shards grow at different times.
#[derive(Debug, Default)]
struct Postings([FxHashMap<u64, Posting>; SHARDS]);

/// Maps per family (a power of two).
const SHARDS: usize = 16;

impl Postings {
    /// The shard of a value: the top bits of its [`mix64`] (a family's values need not
    /// be uniform in their own top bits).
    fn shard(value: u64) -> usize {
        // Two shifts: one of 64 bits would overflow with a single shard.
        ((mix64(value) >> (63 - SHARDS.trailing_zeros())) >> 1) as usize
    }

    fn get(&self, value: &u64) -> Option<&Posting> {
        self.0[Self::shard(*value)].get(value)
    }

    fn entry(&mut self, value: u64) -> Entry<'_, u64, Posting> {
        self.0[Self::shard(value)].entry(value)
    }

    fn iter(&self) -> impl Iterator<Item = (&u64, &Posting)> {
        self.0.iter().flat_map(|shard| shard.iter())
    }

    /// Slots allocated, over the shards.
    fn capacity(&self) -> usize {
        self.0.iter().map(|shard| shard.capacity()).sum()
    }
}

/// Fingerprint families ([`IndexFamily::code`] runs from 1 to this).
const FAMILIES: usize = IndexFamily::ALL.len();

fn family_slot(family: IndexFamily) -> usize {
    usize::from(family.code()) - 1
}

#[derive(Debug)]
enum Posting {
    One(DocId),
    // Boxed on purpose: inline, the vector's three words would make every posting,
    // most of which name one document, 32 bytes instead of 16.
    #[allow(clippy::box_collection)]
    Docs(Box<Vec<DocId>>),
    Big,
}

// Every key of a namespace has a slot of this size; keep it two words.
const _: () = assert!(std::mem::size_of::<Posting>() == 16);

impl Space {
    /// Index `doc`, not indexed now, under `keys` (sorted and deduplicated: each key
    /// names the document once, so no posting list is searched for it; long lists made
    /// that the cost of indexing a page); `hash` is [`keys_hash`] of them.
    fn insert(&mut self, doc: DocId, keys: &[IndexKey], hash: u64, cap: usize) {
        debug_assert!(keys.windows(2).all(|w| w[0] < w[1]), "keys not normalised");
        debug_assert!(!self.docs.contains_key(&doc), "document indexed twice");
        for &key in keys {
            let map = &mut self.postings[family_slot(key.family)];
            let slot = match map.entry(key.value) {
                Entry::Vacant(v) => {
                    v.insert(Posting::One(doc));
                    self.entries += 1;
                    continue;
                }
                Entry::Occupied(o) => o.into_mut(),
            };
            let len = match slot {
                Posting::One(_) => 1,
                Posting::Docs(docs) => docs.len(),
                Posting::Big => continue,
            };
            if len + 1 >= cap {
                self.entries -= len as u64;
                *slot = Posting::Big;
                self.big.insert(key);
                continue;
            }
            match slot {
                Posting::One(first) => *slot = Posting::Docs(Box::new(vec![*first, doc])),
                Posting::Docs(docs) => docs.push(doc),
                Posting::Big => {}
            }
            self.entries += 1;
        }
        self.docs.insert(doc, hash);
    }

    /// Remove `doc`, indexed under `keys` (its list as the file had it).
    fn remove(&mut self, doc: DocId, keys: &[IndexKey]) {
        if self.docs.remove(&doc).is_none() {
            return;
        }
        for &key in keys {
            let map = &mut self.postings[family_slot(key.family)];
            let Entry::Occupied(mut slot) = map.entry(key.value) else { continue };
            match slot.get_mut() {
                Posting::One(only) if *only == doc => {
                    slot.remove();
                    self.entries -= 1;
                }
                Posting::Docs(docs) => {
                    if let Some(i) = docs.iter().position(|&d| d == doc) {
                        docs.swap_remove(i);
                        self.entries -= 1;
                        if let [last] = docs[..] {
                            *slot.get_mut() = Posting::One(last);
                        }
                    }
                }
                _ => {}
            }
        }
    }

    /// Does `doc` have these keys already (by the hash of their packed list)?
    fn has_keys(&self, doc: DocId, hash: u64) -> bool {
        self.docs.get(&doc) == Some(&hash)
    }

    fn documents(&self) -> usize {
        self.docs.len()
    }

    /// Heap bytes, estimated from the maps' capacities (a hash map's slot is its entry
    /// plus one control byte) and the vectors' capacities (with their boxed headers).
    fn heap_estimate(&self) -> u64 {
        let slot = (std::mem::size_of::<u64>() + std::mem::size_of::<Posting>() + 1) as u64;
        let postings: u64 = self
            .postings
            .iter()
            .map(|m| {
                m.capacity() as u64 * slot
                    + m.iter()
                        .map(|(_, p)| match p {
                            Posting::Docs(d) => (std::mem::size_of::<Vec<DocId>>() + d.capacity() * 8) as u64,
                            _ => 0,
                        })
                        .sum::<u64>()
            })
            .sum();
        let doc_slot = (std::mem::size_of::<DocId>() + std::mem::size_of::<u64>() + 1) as u64;
        postings + self.docs.capacity() as u64 * doc_slot
    }
}

impl EmbeddedIndex {
    /// A volatile index (tests, one-shot runs): the same code on an in-memory database.
    pub fn in_memory(config: IndexConfig) -> Result<Self> {
        check_config(&config)?;
        let conn =
            Connection::open_in_memory().map_err(|source| IndexError::Sqlite { path: IN_MEMORY.into(), source })?;
        Self::load(Db { path: None, conn: Mutex::new(conn) }, config)
    }

    /// Open (or create) the index persisted at `path` (e.g. `<data_dir>/index.sqlite`)
    /// and load it into memory.
    pub fn open(path: impl AsRef<Path>, config: IndexConfig) -> Result<Self> {
        check_config(&config)?;
        let path = path.as_ref().to_path_buf();
        let err = |source| IndexError::Sqlite { path: path.clone(), source };
        let conn = Connection::open(&path).map_err(err)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(err)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(err)?;
        // The file is read in full once, at open; afterwards it is written (one
        // transaction per batch) and read a row at a time for the documents indexed
        // again: fewer, larger checkpoints and no temporary files on disk.
        conn.pragma_update(None, "wal_autocheckpoint", 8000).map_err(err)?;
        conn.pragma_update(None, "temp_store", "MEMORY").map_err(err)?;
        Self::load(Db { path: Some(path), conn: Mutex::new(conn) }, config)
    }

    /// Create the tables if need be and build the postings from the key lists.
    fn load(db: Db, config: IndexConfig) -> Result<Self> {
        let (identity, generation, spaces) = Self::read_file(&db, &config)?;
        Ok(EmbeddedIndex {
            config,
            spaces: spaces.map(RwLock::new),
            db,
            identity: Mutex::new(identity),
            writes: Default::default(),
            generation: AtomicU64::new(generation),
        })
    }

    /// The file's identity, generation and postings.
    fn read_file(db: &Db, config: &IndexConfig) -> Result<(String, u64, [Space; 2])> {
        let err = db.err();
        let conn = db.lock();
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS docs (
                 ns INTEGER NOT NULL,
                 doc INTEGER NOT NULL,
                 keys BLOB NOT NULL,
                 PRIMARY KEY (ns, doc)
             ) WITHOUT ROWID;
             CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);",
        )
        .map_err(&err)?;
        // The identity is given once, when the file is new (or predates it), and anew by
        // every clear: a deleted or replaced file has another one.
        conn.execute(
            "INSERT OR IGNORE INTO meta (name, value) VALUES ('identity', ?1)",
            params![crate::new_identity()],
        )
        .map_err(&err)?;
        let identity: String =
            conn.query_row("SELECT value FROM meta WHERE name = 'identity'", [], |r| r.get(0)).map_err(&err)?;
        let generation: i64 = conn
            .query_row("SELECT CAST(value AS INTEGER) FROM meta WHERE name = 'generation'", [], |r| r.get(0))
            .optional()
            .map_err(&err)?
            .unwrap_or(0);
        let mut spaces: [Space; 2] = Default::default();
        {
            let mut stmt = conn.prepare("SELECT ns, doc, keys FROM docs ORDER BY ns, doc").map_err(&err)?;
            let mut rows = stmt.query([]).map_err(&err)?;
            while let Some(row) = rows.next().map_err(&err)? {
                let ns: i64 = row.get(0).map_err(&err)?;
                let doc: i64 = row.get(1).map_err(&err)?;
                let blob: Vec<u8> = row.get(2).map_err(&err)?;
                let space = spaces
                    .get_mut(usize::try_from(ns).unwrap_or(usize::MAX))
                    .ok_or_else(|| IndexError::Corrupt(format!("{}: unknown namespace {ns}", db.name().display())))?;
                // Every write stores its keys normalised and packed, so the blob is what
                // an add of the same keys hashes (a list stored otherwise only makes
                // that add write it again).
                let doc = doc as DocId;
                let keys = normalize_keys(&db.unpack_stored(doc, &blob)?);
                space.insert(doc, &keys, keys_hash(&blob), config.big_bucket_cap);
            }
        }
        Ok((identity, generation.max(0) as u64, spaces))
    }

    /// Run `f` in one transaction, then `after` (which cannot fail) with its result
    /// while the connection is still held, so memory follows the disk in the same order.
    /// When `f` or the commit fails, the transaction is rolled back and memory is
    /// untouched: the caller can retry.
    fn persist<T, U>(
        &self,
        f: impl FnOnce(&rusqlite::Transaction<'_>) -> Result<T>,
        after: impl FnOnce(T) -> U,
    ) -> Result<U> {
        let err = self.db.err();
        let mut conn = self.db.lock();
        let tx = conn.transaction().map_err(&err)?;
        let out = f(&tx)?;
        tx.commit().map_err(&err)?;
        Ok(after(out))
    }

    // One lock per namespace: a batch of pages being added (a write) never holds up the
    // section lookups of the pages being matched next to it.
    fn read(&self, ns: Namespace) -> std::sync::RwLockReadGuard<'_, Space> {
        self.spaces[ns.index()].read().unwrap_or_else(|p| p.into_inner())
    }

    fn write(&self, ns: Namespace) -> std::sync::RwLockWriteGuard<'_, Space> {
        self.spaces[ns.index()].write().unwrap_or_else(|p| p.into_inner())
    }
}

fn check_config(config: &IndexConfig) -> Result<()> {
    if config.big_bucket_cap < 2 {
        return Err(IndexError::Config(format!("big_bucket_cap must be at least 2, got {}", config.big_bucket_cap)));
    }
    Ok(())
}

/// The hash a [`Space`] keeps of a document's packed key list.
fn keys_hash(packed: &[u8]) -> u64 {
    zhiwen_core::hash::hash_bytes(packed)
}

/// Keys packed as `code (1 byte) + value (8 bytes, big-endian)`.
pub(crate) fn pack_keys(keys: &[IndexKey]) -> Vec<u8> {
    let mut out = Vec::with_capacity(keys.len() * 9);
    for key in keys {
        out.push(key.family.code());
        out.extend_from_slice(&key.value.to_be_bytes());
    }
    out
}

/// Inverse of [`pack_keys`]; `None` on malformed input.
pub(crate) fn unpack_keys(blob: &[u8]) -> Option<Vec<IndexKey>> {
    if blob.len() % 9 != 0 {
        return None;
    }
    blob.chunks_exact(9).map(unpack_key).collect()
}

pub(crate) fn unpack_key(chunk: &[u8]) -> Option<IndexKey> {
    let family = IndexFamily::from_code(*chunk.first()?)?;
    let value = u64::from_be_bytes(chunk.get(1..9)?.try_into().ok()?);
    Some(IndexKey { family, value })
}

impl EmbeddedIndex {
    /// Count a write to `ns` (after it is in memory: see [`CandidateIndex::write_token`])
    /// and keep the file's generation as its transaction left it.
    fn wrote(&self, ns: Namespace, generation: u64) {
        self.writes[ns.index()].fetch_add(1, Ordering::Release);
        self.generation.fetch_max(generation, Ordering::AcqRel);
    }

    /// Look up normalised keys, sampled at `modulus` already.
    fn lookup_keys(&self, ns: Namespace, keys: Vec<IndexKey>, limit: usize, modulus: u64) -> Result<LookupResult> {
        let space = self.read(ns);
        let mut acc = Accumulator::with_capacity(keys.len());
        for key in &keys {
            match space.postings[family_slot(key.family)].get(&key.value) {
                Some(Posting::One(doc)) => acc.posting(key.family, std::iter::once(*doc)),
                Some(Posting::Docs(docs)) => acc.posting(key.family, docs.iter().copied()),
                Some(Posting::Big) => acc.big(*key),
                None => {}
            }
        }
        Ok(acc.finish_sampled(keys.len(), limit, modulus))
    }
}

#[async_trait]
impl CandidateIndex for EmbeddedIndex {
    fn backend(&self) -> &'static str {
        "embedded"
    }

    async fn add_batch(&self, ns: Namespace, docs: &[(DocId, Vec<IndexKey>)]) -> Result<()> {
        // Documents indexed again with the keys they have (a page matched again) change
        // nothing: skipping them spares the disk and the postings, and a batch of nothing
        // else touches neither. Memory changes only after the file did, so what it says
        // now is what the file holds now: the batch takes effect as of this check.
        let docs: Vec<(DocId, Vec<IndexKey>, Vec<u8>, u64)> = {
            let space = self.read(ns);
            last_wins(docs)
                .into_iter()
                .filter_map(|(doc, keys)| {
                    let packed = pack_keys(&keys);
                    let hash = keys_hash(&packed);
                    (!space.has_keys(doc, hash)).then_some((doc, keys, packed, hash))
                })
                .collect()
        };
        if docs.is_empty() {
            return Ok(());
        }
        let nsi = ns.index() as i64;
        // Disk first: when it fails, memory is untouched and the caller can retry.
        self.persist(
            |tx| {
                let err = self.db.err();
                let mut read = tx.prepare_cached("SELECT keys FROM docs WHERE ns = ?1 AND doc = ?2").map_err(&err)?;
                let mut write = tx
                    .prepare_cached("INSERT OR REPLACE INTO docs (ns, doc, keys) VALUES (?1, ?2, ?3)")
                    .map_err(&err)?;
                // Under the connection's lock, which every write holds, memory says which
                // documents the file holds: only those have a list to read back (unpacked
                // here, so that a bad one fails the transaction).
                let space = self.read(ns);
                let mut out = Vec::with_capacity(docs.len());
                for (doc, keys, packed, hash) in docs {
                    let before = if space.docs.contains_key(&doc) {
                        let blob: Option<Vec<u8>> =
                            read.query_row(params![nsi, doc as i64], |r| r.get(0)).optional().map_err(&err)?;
                        blob.map(|blob| self.db.unpack_stored(doc, &blob)).transpose()?
                    } else {
                        None
                    };
                    write.execute(params![nsi, doc as i64, packed]).map_err(&err)?;
                    out.push((doc, keys, hash, before));
                }
                Ok((out, next_generation(tx).map_err(&err)?))
            },
            |(docs, generation)| {
                let mut space = self.write(ns);
                for (doc, keys, hash, before) in docs {
                    if let Some(before) = before {
                        space.remove(doc, &before);
                    }
                    space.insert(doc, &keys, hash, self.config.big_bucket_cap);
                }
                drop(space);
                self.wrote(ns, generation);
            },
        )
    }

    async fn remove(&self, ns: Namespace, doc: DocId) -> Result<bool> {
        self.persist(
            |tx| {
                let err = self.db.err();
                let params = params![ns.index() as i64, doc as i64];
                let before: Option<Vec<u8>> = tx
                    .query_row("SELECT keys FROM docs WHERE ns = ?1 AND doc = ?2", params, |r| r.get(0))
                    .optional()
                    .map_err(&err)?;
                let before = before.map(|blob| self.db.unpack_stored(doc, &blob)).transpose()?;
                let Some(before) = before else { return Ok(None) };
                tx.execute("DELETE FROM docs WHERE ns = ?1 AND doc = ?2", params).map_err(&err)?;
                Ok(Some((before, next_generation(tx).map_err(&err)?)))
            },
            |removed| {
                let Some((before, generation)) = removed else { return false };
                self.write(ns).remove(doc, &before);
                self.wrote(ns, generation);
                true
            },
        )
    }

    async fn lookup(&self, ns: Namespace, keys: &[IndexKey], limit: usize) -> Result<LookupResult> {
        let (keys, modulus) = crate::sample_query_keys(normalize_keys(keys), self.config.query_key_budget);
        self.lookup_keys(ns, keys, limit, modulus)
    }

    async fn lookup_sampled(&self, ns: Namespace, keys: &[IndexKey], modulus: u64) -> Result<LookupResult> {
        self.lookup_keys(ns, normalize_keys(keys), usize::MAX, modulus)
    }

    fn query_sample_modulus(&self, fixed: usize, winnowed: usize) -> u64 {
        crate::query_sample_modulus(fixed, winnowed, self.config.query_key_budget)
    }

    async fn common_keys(&self, ns: Namespace, family: IndexFamily, min_docs: u32) -> Result<Vec<u64>> {
        let space = self.read(ns);
        let min = min_docs as usize;
        Ok(space.postings[family_slot(family)]
            .iter()
            .filter(|(_, p)| match p {
                Posting::One(_) => min <= 1,
                Posting::Docs(docs) => docs.len() >= min,
                Posting::Big => true,
            })
            .map(|(&value, _)| value)
            .collect())
    }

    async fn stats(&self) -> Result<IndexStats> {
        let mut heap = 0;
        let namespaces = Namespace::ALL
            .into_iter()
            .map(|ns| {
                let s = self.read(ns);
                heap += s.heap_estimate();
                NamespaceStats {
                    namespace: ns,
                    documents: s.documents() as u64,
                    postings: s.entries,
                    big_buckets: s.big.len() as u64,
                }
            })
            .collect();
        let file = self.db.path.as_ref().map_or(0, |path| {
            let wal = PathBuf::from(format!("{}-wal", path.display()));
            [path.as_path(), wal.as_path()].iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum()
        });
        Ok(IndexStats {
            backend: self.backend().into(),
            namespaces,
            bytes_used: heap + file,
            file_bytes: file,
            section_filter: None,
        })
    }

    async fn clear(&self, ns: Namespace) -> Result<()> {
        let identity = crate::new_identity();
        self.persist(
            |tx| {
                let err = self.db.err();
                tx.execute("DELETE FROM docs WHERE ns = ?1", params![ns.index() as i64]).map_err(&err)?;
                tx.execute("UPDATE meta SET value = ?1 WHERE name = 'identity'", params![identity]).map_err(&err)?;
                next_generation(tx).map_err(&err)
            },
            |generation| {
                *self.write(ns) = Space::default();
                *self.identity.lock().unwrap_or_else(|p| p.into_inner()) = identity.clone();
                self.wrote(ns, generation);
            },
        )
    }

    async fn write_token(&self, ns: Namespace) -> Result<u64> {
        Ok(self.writes[ns.index()].load(Ordering::Acquire))
    }

    async fn ping(&self) -> Result<()> {
        Ok(())
    }

    async fn identity(&self) -> Result<Option<String>> {
        Ok(Some(self.identity.lock().unwrap_or_else(|p| p.into_inner()).clone()))
    }

    async fn generation(&self) -> Result<u64> {
        Ok(self.generation.load(Ordering::Acquire))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn postings_spread_over_the_shards_and_find_what_they_hold() {
        let mut postings = Postings::default();
        // Small consecutive values (as a family with narrow values has) reach every shard.
        for value in 0..1_600u64 {
            postings.entry(value).or_insert(Posting::One(value));
        }
        let sizes: Vec<usize> = postings.0.iter().map(|shard| shard.len()).collect();
        assert!(sizes.iter().all(|&n| n > 50), "uneven shards: {sizes:?}");
        assert_eq!(postings.iter().count(), 1_600);
        for value in [0, 1, 799, 1_599] {
            assert!(matches!(postings.get(&value), Some(Posting::One(doc)) if *doc == value));
        }
        assert!(postings.get(&1_600).is_none());
        assert!(postings.capacity() >= 1_600);
    }
}
