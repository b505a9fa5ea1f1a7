//! Pages by content hash on the embedded store.

use rusqlite::params;

use super::pages::page_ref;
use super::SqliteStore;
use crate::codec::*;
use crate::model::PageRef;
use crate::traits::StoreResult;

impl SqliteStore {
    /// See [`crate::PageStore::find_pages_by_content_hash`]; served by the
    /// `pages_content_hash` index (migration 3).
    pub(super) async fn pages_by_content_hash(&self, content_hash: u64, limit: u32) -> StoreResult<Vec<PageRef>> {
        let limit = check_limit(limit)?;
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, url, site, content_hash, last_fetched_at FROM pages WHERE content_hash = ?1 ORDER BY id LIMIT ?2",
            )?;
            let rows = stmt.query_map(params![h2i(content_hash), limit], page_ref)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }
}
