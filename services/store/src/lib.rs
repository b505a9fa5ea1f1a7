//! The persistent stores of zhiwen: protected works and their sections (the "mother
//! library"), fetched pages and their sites, fingerprints of both, matches with their
//! review trail, persisted tasks, API keys, the admin API's queries, a few named meta
//! values, the evidence of captured pages, and the holders' cases (profiles, licensed
//! sites, takedown notices, removal watches). Each store is one small async trait
//! ([`WorkStore`], [`PageStore`], [`FingerprintStore`], [`MatchStore`], [`TaskStore`],
//! [`KeyStore`], [`QueryStore`], [`MetaStore`], [`EvidenceStore`], [`CaseStore`]) with two backends: MongoDB through the official driver (production,
//! MongoDB 6+) and an embedded SQLite database (bundled, WAL) that needs no server and is
//! the default. One conformance suite (`tests/integration/`) runs against both.
//!
//! It owns the schemas and their versioned migrations (`migrations/` at the repository
//! root, embedded here), idempotent writes keyed by natural keys, and the compact
//! integer ids of sections and pages that the index stores. It must not touch the
//! algorithms (it stores [`zhiwen_core::Fingerprints`] and comparisons as the core made
//! them), chapter splitting (the ingest crate's), the Redis index, HTTP, the command
//! line or the environment: callers build a [`StoreConfig`] (every setting of the
//! store is in it) and call [`open`] or [`migrate`].
//!
//! Layout:
//!
//! | file | holds |
//! |---|---|
//! | `traits.rs` | the pipeline's traits; a single-record method that is a batch of one is a default method there |
//! | `admin.rs` | the admin API's and the exports' traits ([`KeyStore`], [`QueryStore`]) and their types |
//! | `cases.rs` | holders, notices and removal watches ([`CaseStore`]): small JSON documents with compare-and-set versions, the typed rules over them |
//! | `alerts.rs` | holders' alert settings and the alert outbox ([`AlertOutbox`] over [`CaseStore`]): de-duplication per (holder, match), the per-holder queue, rate limit and digest day |
//! | `watched.rs` | watched sites (kept as case documents): their entry points and schedule state, the rules of their writes |
//! | `model.rs` | the records the stores keep, shared by both backends, and the one query of matches ([`MatchQuery`]) |
//! | `config.rs` | [`StoreConfig`]: which backend, where, how many SQLite readers |
//! | `error.rs` | [`StoreError`] |
//! | `codec.rs`, `fingerprint_blob.rs` | validation, URL normalisation, compression, hashes; the binary form of fingerprints |
//! | `migrations.rs` | both backends' migrations, embedded, and the schema version |
//! | `sqlite/` | the embedded backend: `mod.rs` (the store, its writer connection and reads), `pool.rs` (the readers), `migrations.rs`, and one file per resource: `works`, `pages`, `content_hash`, `fingerprints`, `matches`, `tasks`, `keys`, `queries`, `meta`, `evidence` (whose files live under the data directory), `cases` |
//! | `mongo/` | the MongoDB backend: `mod.rs` (the store, its connection), `fields.rs` (typed BSON fields), `ids.rs` (counters, id-window scans, reads by id), `blobs.rs` (chunked fields), `migrations/` (the runner, and `m0005_match_kind.rs`, `m0007_match_listing.rs` for the migrations that need code), and the same files per resource |

mod admin;
mod alerts;
mod cases;
mod codec;
mod config;
mod error;
mod fingerprint_blob;
mod migrations;
mod model;
mod mongo;
mod retry;
mod sqlite;
mod traits;
mod watched;

use std::sync::Arc;

pub use admin::*;
pub use alerts::*;
pub use cases::*;
pub use codec::{normalize_url, utf8_field, MAX_BODY_BYTES, MAX_FIELD_BYTES, MAX_SECTIONS, MAX_TEXT_BYTES};
pub use config::{StoreConfig, DEFAULT_DATA_DIR, DEFAULT_MONGO_DATABASE};
pub use error::StoreError;
pub use migrations::{MigrationReport, LATEST as SCHEMA_VERSION};
pub use model::*;
pub use retry::{Retrying, StoreRetry};
pub use traits::*;
pub use watched::*;

/// Every store of one backend, ready to share across tasks.
#[derive(Clone)]
pub struct Stores {
    /// Works and sections.
    pub works: Arc<dyn WorkStore>,
    /// Pages and sites.
    pub pages: Arc<dyn PageStore>,
    /// Fingerprints.
    pub fingerprints: Arc<dyn FingerprintStore>,
    /// Matches.
    pub matches: Arc<dyn MatchStore>,
    /// Tasks.
    pub tasks: Arc<dyn TaskStore>,
    /// API keys.
    pub keys: Arc<dyn KeyStore>,
    /// The admin API's queries.
    pub queries: Arc<dyn QueryStore>,
    /// Named values kept beside the data.
    pub meta: Arc<dyn MetaStore>,
    /// Evidence: captured files, captures (the leaves of the evidence log), tree heads.
    pub evidence: Arc<dyn EvidenceStore>,
    /// Holders, takedown notices, removal watches.
    pub cases: Arc<dyn CaseStore>,
    /// Backend name (`embedded` or `mongodb`).
    pub backend: &'static str,
}

impl std::fmt::Debug for Stores {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Stores").field("backend", &self.backend).finish_non_exhaustive()
    }
}

impl Stores {
    fn from_backend<B>(backend: B, name: &'static str) -> Self
    where
        B: WorkStore
            + PageStore
            + FingerprintStore
            + MatchStore
            + TaskStore
            + KeyStore
            + QueryStore
            + MetaStore
            + EvidenceStore
            + CaseStore
            + 'static,
    {
        let b = Arc::new(backend);
        Stores {
            works: b.clone(),
            pages: b.clone(),
            fingerprints: b.clone(),
            matches: b.clone(),
            tasks: b.clone(),
            keys: b.clone(),
            queries: b.clone(),
            meta: b.clone(),
            evidence: b.clone(),
            cases: b,
            backend: name,
        }
    }
}

/// Open the configured backend.
///
/// The embedded store migrates itself on open (a new user runs one command); MongoDB
/// must have been migrated with [`migrate`] (`zhiwen migrate`), else
/// [`StoreError::SchemaOutdated`]. Both refuse a database newer than this binary
/// ([`StoreError::SchemaTooNew`]).
pub async fn open(config: &StoreConfig) -> Result<Stores, StoreError> {
    match config {
        StoreConfig::Embedded { data_dir, readers } => {
            let store = sqlite::SqliteStore::open(data_dir, *readers).await?;
            store.migrate().await?;
            Ok(Stores::from_backend(store, "embedded"))
        }
        StoreConfig::Mongo { uri, database } => {
            let store = mongo::MongoStore::connect(uri, database).await?;
            store.check_schema().await?;
            Ok(Stores::from_backend(store, "mongodb"))
        }
    }
}

/// Apply the missing migrations of the configured backend (safe to run twice).
pub async fn migrate(config: &StoreConfig) -> Result<MigrationReport, StoreError> {
    match config {
        StoreConfig::Embedded { data_dir, readers } => {
            sqlite::SqliteStore::open(data_dir, *readers).await?.migrate().await
        }
        StoreConfig::Mongo { uri, database } => mongo::MongoStore::connect(uri, database).await?.migrate().await,
    }
}
