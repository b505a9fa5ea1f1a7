//! Pages by content hash on MongoDB.

use mongodb::bson::doc;

use super::pages::page_ref;
use super::{collect, MongoStore};
use crate::codec::*;
use crate::model::PageRef;
use crate::traits::StoreResult;

impl MongoStore {
    /// See [`crate::PageStore::find_pages_by_content_hash`]; served by the
    /// `content_hash_id` index of `pages` (migration 3).
    pub(super) async fn pages_by_content_hash(&self, content_hash: u64, limit: u32) -> StoreResult<Vec<PageRef>> {
        let limit = check_limit(limit)?;
        let cursor = self
            .coll("pages")
            .find(doc! {"content_hash": h2i(content_hash)})
            .projection(doc! {"_id": 1, "url": 1, "site": 1, "content_hash": 1, "last_fetched_at": 1})
            .sort(doc! {"content_hash": 1, "_id": 1})
            .limit(limit)
            .await?;
        collect(cursor).await?.iter().map(page_ref).collect()
    }
}
