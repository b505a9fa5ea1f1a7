//! [`MetaStore`] on the embedded store: the `meta` table of named values.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension};

use super::SqliteStore;
use crate::model::Timestamp;
use crate::traits::{MetaStore, StoreResult};

#[async_trait]
impl MetaStore for SqliteStore {
    async fn get_meta(&self, name: &str) -> StoreResult<Option<String>> {
        let name = name.to_owned();
        self.read(move |c| {
            Ok(c.prepare_cached("SELECT value FROM meta WHERE name = ?1")?
                .query_row(params![name], |r| r.get(0))
                .optional()?)
        })
        .await
    }

    async fn put_meta(&self, name: &str, value: &str) -> StoreResult<()> {
        let (name, value) = (name.to_owned(), value.to_owned());
        self.run(move |c| {
            c.execute(
                "INSERT INTO meta (name, value, updated_at) VALUES (?1, ?2, ?3)
                 ON CONFLICT(name) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at",
                params![name, value, Timestamp::now().0],
            )?;
            Ok(())
        })
        .await
    }
}
