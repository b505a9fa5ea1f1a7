//! The embedded index: postings in memory, documents persisted write-through to SQLite.
//!
//! Only the documents' key lists are stored (`docs(ns, doc, keys)`, one row per
//! document, keys packed 9 bytes each); the postings are rebuilt from them at open,
//! which keeps the file small and the on-disk format trivial. Lookups only take a read
//! lock on the in-memory maps, so they run at memory speed.

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};

use async_trait::async_trait;
use rusqlite::{params, Connection};
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
}

#[derive(Debug)]
struct Db {
    path: PathBuf,
    conn: Mutex<Connection>,
}

#[derive(Debug, Default)]
struct Space {
    postings: HashMap<IndexKey, Posting>,
    docs: HashMap<DocId, Box<[IndexKey]>>,
    big: HashSet<IndexKey>,
    entries: u64,
}

#[derive(Debug)]
enum Posting {
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
            let posting = self.postings.entry(key).or_insert_with(|| Posting::Docs(Vec::new()));
            if let Posting::Docs(docs) = posting {
                if docs.len() + 1 >= cap {
                    self.entries -= docs.len() as u64;
                    *posting = Posting::Big;
                    self.big.insert(key);
                } else {
                    docs.push(doc);
                    self.entries += 1;
                }
            }
        }
        self.docs.insert(doc, keys.into_boxed_slice());
    }

    fn remove(&mut self, doc: DocId) -> bool {
        let Some(keys) = self.docs.remove(&doc) else {
            return false;
        };
        for key in keys.iter() {
            if let Some(Posting::Docs(docs)) = self.postings.get_mut(key) {
                if let Some(i) = docs.iter().position(|&d| d == doc) {
                    docs.swap_remove(i);
                    self.entries -= 1;
                    if docs.is_empty() {
                        self.postings.remove(key);
                    }
                }
            }
        }
        true
    }

    fn heap_estimate(&self) -> u64 {
        let key = std::mem::size_of::<IndexKey>() as u64;
        let postings = self.postings.len() as u64 * (key + 48) + self.entries * 8;
        let docs = self.docs.len() as u64 * 48 + self.docs.values().map(|k| k.len() as u64 * key).sum::<u64>();
        postings + docs
    }
}

impl EmbeddedIndex {
    /// A volatile index (tests, one-shot runs).
    pub fn in_memory(config: IndexConfig) -> Result<Self> {
        check_config(&config)?;
        Ok(EmbeddedIndex { config, spaces: Default::default(), db: None, identity: Mutex::new(crate::new_identity()) })
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
    /// Look up normalised keys, sampled at `modulus` already.
    fn lookup_keys(&self, ns: Namespace, keys: Vec<IndexKey>, limit: usize, modulus: u64) -> Result<LookupResult> {
        let space = self.read(ns);
        let mut acc = Accumulator::with_capacity(keys.len());
        for key in &keys {
            match space.postings.get(key) {
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
            docs.retain(|(doc, keys)| space.docs.get(doc).is_none_or(|old| **old != keys[..]));
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
        Ok(())
    }

    async fn remove(&self, ns: Namespace, doc: DocId) -> Result<bool> {
        self.persist(|tx| {
            tx.execute("DELETE FROM docs WHERE ns = ?1 AND doc = ?2", params![ns.index() as i64, doc as i64])?;
            Ok(())
        })?;
        Ok(self.write(ns).remove(doc))
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

    async fn stats(&self) -> Result<IndexStats> {
        let mut heap = 0;
        let namespaces = Namespace::ALL
            .into_iter()
            .map(|ns| {
                let s = self.read(ns);
                heap += s.heap_estimate();
                NamespaceStats {
                    namespace: ns,
                    documents: s.docs.len() as u64,
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
        Ok(())
    }

    async fn ping(&self) -> Result<()> {
        Ok(())
    }

    async fn identity(&self) -> Result<Option<String>> {
        Ok(Some(self.identity.lock().unwrap_or_else(|p| p.into_inner()).clone()))
    }
}
