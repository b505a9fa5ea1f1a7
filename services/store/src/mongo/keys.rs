//! [`KeyStore`] on MongoDB: API keys, stored by hash.

use async_trait::async_trait;
use mongodb::bson::{doc, Bson, Document};

use super::fields::{date, num, opt_string, opt_time, string, time};
use super::{collect, MongoStore};
use crate::admin::*;
use crate::error::is_mongo_duplicate;
use crate::model::*;
use crate::traits::StoreResult;
use crate::StoreError;

fn key_from(d: &Document) -> StoreResult<ApiKey> {
    let id = num(d, "_id")?;
    let role = string(d, "role")?;
    Ok(ApiKey {
        id,
        hash: string(d, "hash")?,
        prefix: string(d, "prefix")?,
        name: string(d, "name")?,
        role: KeyRole::parse(&role).ok_or_else(|| StoreError::corrupt(format!("role of api key {id}"), role))?,
        owner: opt_string(d, "owner")?,
        created_at: time(d, "created_at")?,
        expires_at: opt_time(d, "expires_at")?,
        revoked_at: opt_time(d, "revoked_at")?,
    })
}

#[async_trait]
impl KeyStore for MongoStore {
    async fn create_key(&self, key: &NewApiKey) -> StoreResult<ApiKey> {
        validate_key(key)?;
        let coll = self.coll("api_keys");
        if coll.find_one(doc! {"hash": &key.hash}).await?.is_some() {
            return Err(StoreError::Duplicate { what: "api key", key: key.prefix.clone() });
        }
        let id = self.next_ids("api_keys", 1).await?;
        let d = doc! {
            "_id": id, "hash": &key.hash, "prefix": &key.prefix, "name": &key.name, "role": key.role.as_str(),
            "owner": key.owner.clone().map_or(Bson::Null, Bson::String), "created_at": date(key.created_at),
            "expires_at": key.expires_at.map_or(Bson::Null, date), "revoked_at": Bson::Null,
        };
        if let Err(e) = coll.insert_one(d).await {
            if is_mongo_duplicate(&e) {
                return Err(StoreError::Duplicate { what: "api key", key: key.prefix.clone() });
            }
            return Err(e.into());
        }
        Ok(ApiKey {
            id,
            hash: key.hash.clone(),
            prefix: key.prefix.clone(),
            name: key.name.clone(),
            role: key.role,
            owner: key.owner.clone(),
            created_at: key.created_at,
            expires_at: key.expires_at,
            revoked_at: None,
        })
    }

    async fn find_key(&self, hash: &str) -> StoreResult<Option<ApiKey>> {
        self.coll("api_keys").find_one(doc! {"hash": hash}).await?.map(|d| key_from(&d)).transpose()
    }

    async fn get_key(&self, id: i64) -> StoreResult<Option<ApiKey>> {
        self.coll("api_keys").find_one(doc! {"_id": id}).await?.map(|d| key_from(&d)).transpose()
    }

    async fn list_keys(&self) -> StoreResult<Vec<ApiKey>> {
        let docs = collect(self.coll("api_keys").find(doc! {}).sort(doc! {"_id": 1}).await?).await?;
        docs.iter().map(key_from).collect()
    }

    async fn revoke_key(&self, id: i64, at: Timestamp) -> StoreResult<Option<Outcome>> {
        let coll = self.coll("api_keys");
        let Some(d) = coll.find_one(doc! {"_id": id}).await? else { return Ok(None) };
        if opt_time(&d, "revoked_at")?.is_some() {
            return Ok(Some(Outcome::Unchanged));
        }
        coll.update_one(doc! {"_id": id, "revoked_at": Bson::Null}, doc! {"$set": {"revoked_at": date(at)}}).await?;
        Ok(Some(Outcome::Updated))
    }
}
