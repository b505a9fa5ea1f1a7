//! The MongoDB backend (official driver; MongoDB 6+ in production, SecantusDB in the
//! tests). It sticks to the subset both speak: CRUD, upserts, `$inc`/`$min`/`$max`,
//! `find_one_and_update`, simple aggregation, unique and compound indexes. No
//! multi-document transactions (a standalone server has none); instead every write is
//! idempotent and ordered so that a retry after a failure completes it.
//!
//! Numeric ids live in `_id` (Int64) and come from the `counters` collection ([`ids`]).
//! Texts and bodies are compressed (zstd; deflate before it, still read); a large field goes to `blob_chunks` in
//! pieces ([`blobs`]), so no document nears the 16 MB limit. Pagination uses bounded
//! `_id` windows (never an open-ended range with sort+limit).
//!
//! This file holds the store and its connection; each trait is implemented in the file
//! of its resource (`works`, `pages`, `content_hash`, `fingerprints`, `matches`, `tasks`,
//! `keys`, `queries`, `meta`, `evidence`), over the shared `fields`, `ids` and `blobs`; `migrations`
//! applies the schema, with one file per migration that needs code.

use std::sync::atomic::AtomicI64;
use std::time::Duration;

use futures::TryStreamExt;
use mongodb::bson::Document;
use mongodb::options::ClientOptions;
use mongodb::{Client, Collection, Database};

use crate::traits::StoreResult;
use crate::StoreError;

mod blobs;
mod cases;
mod content_hash;
mod evidence;
mod fields;
mod fingerprints;
mod ids;
mod keys;
mod matches;
mod meta;
mod migrations;
mod pages;
mod queries;
mod tasks;
mod works;

/// The MongoDB store.
pub(crate) struct MongoStore {
    db: Database,
    /// A leaf index known to be stored (leaves are never deleted): the lower bound of
    /// the read of the largest one, so that read stays a short index range.
    leaf_floor: AtomicI64,
}

async fn collect(cursor: mongodb::Cursor<Document>) -> StoreResult<Vec<Document>> {
    Ok(cursor.try_collect().await?)
}

impl MongoStore {
    pub(crate) async fn connect(uri: &str, database: &str) -> StoreResult<Self> {
        if database.is_empty() || database.len() > 60 || database.contains(['/', '\\', '.', ' ', '"', '$', '\0']) {
            return Err(StoreError::Config(format!("invalid MongoDB database name {database:?}")));
        }
        let mut options =
            ClientOptions::parse(uri).await.map_err(|e| StoreError::Config(format!("invalid MongoDB URI: {e}")))?;
        options.app_name.get_or_insert_with(|| "zhiwen".to_owned());
        options.server_selection_timeout.get_or_insert(Duration::from_secs(10));
        let client = Client::with_options(options).map_err(|e| StoreError::Config(format!("MongoDB client: {e}")))?;
        Ok(MongoStore { db: client.database(database), leaf_floor: AtomicI64::new(0) })
    }

    fn coll(&self, name: &str) -> Collection<Document> {
        self.db.collection(name)
    }
}
