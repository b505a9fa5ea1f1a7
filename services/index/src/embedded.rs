//! The embedded index: postings in memory, documents persisted write-through to SQLite.
//!
//! Only the documents' key lists are stored (`docs(ns, doc, keys)`, one row per
//! document, keys packed 9 bytes each); the postings are rebuilt from them at open,
//! which keeps the file small and the on-disk format trivial. Lookups only take a read
//! lock on the in-memory maps, so they run at memory speed.

use std::collections::hash_map::Entry;
use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, RwLock};

use async_trait::async_trait;
use rusqlite::{params, Connection};
use rustc_hash::FxHashMap;
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
    db: Option<Db>,
    /// See [`CandidateIndex::identity`]; persisted in the file's `meta` table.
    identity: Mutex<String>,
    /// See [`CandidateIndex::write_token`]: a count of the writes to each namespace in
    /// this process (the only one that writes to an embedded index), never reset.
    writes: [AtomicU64; 2],
}

#[derive(Debug)]
struct Db {
    path: PathBuf,
    conn: Mutex<Connection>,
}

/// One namespace in memory, laid out for size: a catalogue's postings are most of a
/// matching process's memory (issue #31; docs/benchmarks.md).
///
/// - One map per fingerprint family, keyed by the key's 8-byte value (an [`IndexKey`] is
///   16 bytes with its family and padding), hashed with FxHash (the values are hashes
///   already; SipHash's protection against chosen keys buys nothing for them).
/// - Most keys name one document (a winnowed k-gram of one section): such a posting
///   holds it inline ([`Posting::One`]) instead of a vector on the heap.
/// - A document's own key list (what removing or re-indexing it needs) is kept packed as
///   on disk, 9 bytes a key.
#[derive(Debug, Default)]
struct Space {
    postings: [FxHashMap<u64, Posting>; FAMILIES],
    docs: FxHashMap<DocId, Box<[u8]>>,
    big: HashSet<IndexKey>,
    entries: u64,
}

/// Fingerprint families ([`IndexFamily::code`] runs from 1 to this).
const FAMILIES: usize = IndexFamily::ALL.len();

fn family_slot(family: IndexFamily) -> usize {
    usize::from(family.code()) - 1
}

#[derive(Debug)]
enum Posting {
    One(DocId),
    Docs(Vec<DocId>),
    Big,
}

impl Space {
    /// Index `doc` under `keys` (sorted and deduplicated: each key names the document
    /// once, so no posting list is searched for it; long lists made that the cost of
    /// indexing a page).
    fn insert(&mut self, doc: DocId, keys: Vec<IndexKey>, cap: usize) {
        debug_assert!(keys.windows(2).all(|w| w[0] < w[1]), "keys not normalised");
        self.remove(doc);
        for &key in &keys {
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
                Posting::One(first) => *slot = Posting::Docs(vec![*first, doc]),
                Posting::Docs(docs) => docs.push(doc),
                Posting::Big => {}
            }
            self.entries += 1;
        }
        self.docs.insert(doc, pack_keys(&keys).into_boxed_slice());
    }

    fn remove(&mut self, doc: DocId) -> bool {
        let Some(packed) = self.docs.remove(&doc) else {
            return false;
        };
        // Written by `insert` from valid keys: every chunk unpacks.
        for key in packed.chunks_exact(9).filter_map(unpack_key) {
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
        true
    }

    /// Does `doc` have exactly these (normalised) keys already?
    fn has_keys(&self, doc: DocId, keys: &[IndexKey]) -> bool {
        self.docs.get(&doc).is_some_and(|packed| {
            packed.len() == keys.len() * 9
                && packed.chunks_exact(9).zip(keys).all(|(chunk, key)| unpack_key(chunk).as_ref() == Some(key))
        })
    }

    fn documents(&self) -> usize {
        self.docs.len()
    }

    /// Heap bytes, estimated from the maps' capacities (a hash map's slot is its entry
    /// plus one control byte) and the vectors' lengths.
    fn heap_estimate(&self) -> u64 {
        let slot = (std::mem::size_of::<u64>() + std::mem::size_of::<Posting>() + 1) as u64;
        let postings: u64 = self
            .postings
            .iter()
            .map(|m| {
                m.capacity() as u64 * slot
                    + m.values()
                        .map(|p| if let Posting::Docs(d) = p { d.capacity() as u64 * 8 } else { 0 })
                        .sum::<u64>()
            })
            .sum();
        let doc_slot = (std::mem::size_of::<DocId>() + std::mem::size_of::<Box<[u8]>>() + 1) as u64;
        let docs = self.docs.capacity() as u64 * doc_slot + self.docs.values().map(|k| k.len() as u64).sum::<u64>();
        postings + docs
    }
}

impl EmbeddedIndex {
    /// A volatile index (tests, one-shot runs).
    pub fn in_memory(config: IndexConfig) -> Result<Self> {
        check_config(&config)?;
        Ok(EmbeddedIndex {
            config,
            spaces: Default::default(),
            db: None,
            identity: Mutex::new(crate::new_identity()),
            writes: Default::default(),
        })
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
        // The file is read once, at open; afterwards it is only written (one transaction
        // per batch): fewer, larger checkpoints and no temporary files on disk.
        conn.pragma_update(None, "wal_autocheckpoint", 8000).map_err(err)?;
        conn.pragma_update(None, "temp_store", "MEMORY").map_err(err)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS docs (
                 ns INTEGER NOT NULL,
                 doc INTEGER NOT NULL,
                 keys BLOB NOT NULL,
                 PRIMARY KEY (ns, doc)
             ) WITHOUT ROWID;
             CREATE TABLE IF NOT EXISTS meta (name TEXT PRIMARY KEY, value TEXT NOT NULL);",
        )
        .map_err(err)?;
        // The identity is given once, when the file is new (or predates it), and anew by
        // every clear: a deleted or replaced file has another one.
        conn.execute(
            "INSERT OR IGNORE INTO meta (name, value) VALUES ('identity', ?1)",
            params![crate::new_identity()],
        )
        .map_err(err)?;
        let identity: String =
            conn.query_row("SELECT value FROM meta WHERE name = 'identity'", [], |r| r.get(0)).map_err(err)?;
        let mut spaces: [Space; 2] = Default::default();
        {
            let mut stmt = conn.prepare("SELECT ns, doc, keys FROM docs ORDER BY ns, doc").map_err(err)?;
            let mut rows = stmt.query([]).map_err(err)?;
            while let Some(row) = rows.next().map_err(err)? {
                let ns: i64 = row.get(0).map_err(err)?;
                let doc: i64 = row.get(1).map_err(err)?;
                let blob: Vec<u8> = row.get(2).map_err(err)?;
                let space = spaces
                    .get_mut(usize::try_from(ns).unwrap_or(usize::MAX))
                    .ok_or_else(|| IndexError::Corrupt(format!("{}: unknown namespace {ns}", path.display())))?;
                let keys = unpack_keys(&blob)
                    .ok_or_else(|| IndexError::Corrupt(format!("{}: bad key list of doc {doc}", path.display())))?;
                space.insert(doc as u64, normalize_keys(&keys), config.big_bucket_cap);
            }
        }
        Ok(EmbeddedIndex {
            config,
            spaces: spaces.map(RwLock::new),
            db: Some(Db { path, conn: Mutex::new(conn) }),
            identity: Mutex::new(identity),
            writes: Default::default(),
        })
    }

    fn persist(&self, f: impl FnOnce(&rusqlite::Transaction<'_>) -> rusqlite::Result<()>) -> Result<()> {
        let Some(db) = &self.db else { return Ok(()) };
        let mut conn = db.conn.lock().unwrap_or_else(|p| p.into_inner());
        let err = |source| IndexError::Sqlite { path: db.path.clone(), source };
        let tx = conn.transaction().map_err(err)?;
        f(&tx).map_err(err)?;
        tx.commit().map_err(err)
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
    /// Count a write to `ns` (after it is in memory: see [`CandidateIndex::write_token`]).
    fn wrote(&self, ns: Namespace) {
        self.writes[ns.index()].fetch_add(1, Ordering::Release);
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
        let mut docs = last_wins(docs);
        // Documents indexed again with the same keys (a page matched again) change
        // nothing: skipping them spares the disk write and the posting-list scans.
        {
            let space = self.read(ns);
            docs.retain(|(doc, keys)| !space.has_keys(*doc, keys));
        }
        if docs.is_empty() {
            return Ok(());
        }
        // Disk first: when it fails, memory is untouched and the caller can retry.
        self.persist(|tx| {
            let mut stmt = tx.prepare_cached("INSERT OR REPLACE INTO docs (ns, doc, keys) VALUES (?1, ?2, ?3)")?;
            for (doc, keys) in &docs {
                stmt.execute(params![ns.index() as i64, *doc as i64, pack_keys(keys)])?;
            }
            Ok(())
        })?;
        let mut space = self.write(ns);
        for (doc, keys) in docs {
            space.insert(doc, keys, self.config.big_bucket_cap);
        }
        self.wrote(ns);
        Ok(())
    }

    async fn remove(&self, ns: Namespace, doc: DocId) -> Result<bool> {
        self.persist(|tx| {
            tx.execute("DELETE FROM docs WHERE ns = ?1 AND doc = ?2", params![ns.index() as i64, doc as i64])?;
            Ok(())
        })?;
        let removed = self.write(ns).remove(doc);
        if removed {
            self.wrote(ns);
        }
        Ok(removed)
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
        let file = self.db.as_ref().map_or(0, |db| {
            let wal = PathBuf::from(format!("{}-wal", db.path.display()));
            [db.path.as_path(), wal.as_path()].iter().filter_map(|p| std::fs::metadata(p).ok()).map(|m| m.len()).sum()
        });
        Ok(IndexStats { backend: self.backend().into(), namespaces, bytes_used: heap + file, section_filter: None })
    }

    async fn clear(&self, ns: Namespace) -> Result<()> {
        let identity = crate::new_identity();
        self.persist(|tx| {
            tx.execute("DELETE FROM docs WHERE ns = ?1", params![ns.index() as i64])?;
            tx.execute("UPDATE meta SET value = ?1 WHERE name = 'identity'", params![identity])?;
            Ok(())
        })?;
        *self.write(ns) = Space::default();
        *self.identity.lock().unwrap_or_else(|p| p.into_inner()) = identity;
        self.wrote(ns);
        Ok(())
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
}
