//! [`MetaStore`] on MongoDB: the `meta` collection of named values.

use async_trait::async_trait;
use mongodb::bson::doc;

use super::fields::{date, string};
use super::MongoStore;
use crate::model::Timestamp;
use crate::traits::{MetaStore, StoreResult};

#[async_trait]
impl MetaStore for MongoStore {
    async fn get_meta(&self, name: &str) -> StoreResult<Option<String>> {
        match self.coll("meta").find_one(doc! {"_id": name}).await? {
            Some(d) => Ok(Some(string(&d, "value")?)),
            None => Ok(None),
        }
    }

    async fn put_meta(&self, name: &str, value: &str) -> StoreResult<()> {
        self.coll("meta")
            .replace_one(doc! {"_id": name}, doc! {"_id": name, "value": value, "updated_at": date(Timestamp::now())})
            .upsert(true)
            .await?;
        Ok(())
    }
}
