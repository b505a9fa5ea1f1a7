//! [`CaseStore`] on MongoDB: the `case_docs` collection (`_id`: kind + `/` + key), each
//! sequence number from the counter `case_docs.<kind>`.
//!
//! Listings read `(kind, seq)` ranges with sort and limit through the `kind_seq` index:
//! unlike the pipeline's collections, case documents are few (a holder per rights
//! holder, a notice per site and batch, a watch per noticed page).

use async_trait::async_trait;
use mongodb::bson::{doc, Document};
use mongodb::options::ReturnDocument;

use super::fields::{date, num, string};
use super::{collect, MongoStore};
use crate::cases::{CaseStore, DocKind, StoredDoc};
use crate::error::is_mongo_duplicate;
use crate::model::{Outcome, Timestamp};
use crate::traits::StoreResult;
use crate::StoreError;

const COLL: &str = "case_docs";

fn id(kind: DocKind, key: &str) -> String {
    format!("{}/{key}", kind.as_str())
}

fn stored(d: &Document) -> StoreResult<StoredDoc> {
    Ok(StoredDoc {
        key: string(d, "key")?,
        seq: num(d, "seq")?,
        owner: string(d, "owner")?,
        version: num(d, "version")? as u64,
        json: string(d, "doc")?,
    })
}

#[async_trait]
impl CaseStore for MongoStore {
    async fn get_doc(&self, kind: DocKind, key: &str) -> StoreResult<Option<StoredDoc>> {
        self.coll(COLL).find_one(doc! {"_id": id(kind, key)}).await?.as_ref().map(stored).transpose()
    }

    async fn list_docs(
        &self,
        kind: DocKind,
        owner: Option<&str>,
        after_seq: i64,
        limit: u32,
    ) -> StoreResult<Vec<StoredDoc>> {
        let mut filter = doc! {"kind": kind.as_str(), "seq": {"$gt": after_seq}};
        if let Some(o) = owner {
            filter.insert("owner", o);
        }
        let cursor = self.coll(COLL).find(filter).sort(doc! {"seq": 1}).limit(i64::from(limit)).await?;
        collect(cursor).await?.iter().map(stored).collect()
    }

    async fn put_doc(
        &self,
        kind: DocKind,
        key: &str,
        owner: &str,
        json: &str,
        expected: u64,
    ) -> StoreResult<(StoredDoc, Outcome)> {
        let _id = id(kind, key);
        let now = date(Timestamp::now());
        if expected == 0 {
            if let Some(d) = self.get_doc(kind, key).await? {
                return Ok((d, Outcome::Unchanged));
            }
            let seq = self.next_ids(&format!("{COLL}.{}", kind.as_str()), 1).await?;
            let new = doc! {
                "_id": &_id, "kind": kind.as_str(), "key": key, "seq": seq, "owner": owner,
                "version": 1_i64, "doc": json, "updated_at": now,
            };
            return match self.coll(COLL).insert_one(new).await {
                Ok(_) => Ok((
                    StoredDoc { key: key.to_owned(), seq, owner: owner.to_owned(), version: 1, json: json.to_owned() },
                    Outcome::Inserted,
                )),
                Err(e) if is_mongo_duplicate(&e) => match self.get_doc(kind, key).await? {
                    Some(d) => Ok((d, Outcome::Unchanged)),
                    None => Err(e.into()),
                },
                Err(e) => Err(e.into()),
            };
        }
        let updated = self
            .coll(COLL)
            .find_one_and_update(
                doc! {"_id": &_id, "version": expected as i64},
                doc! {"$set": {"owner": owner, "doc": json, "updated_at": now}, "$inc": {"version": 1_i64}},
            )
            .return_document(ReturnDocument::After)
            .await?;
        match updated {
            Some(d) => Ok((stored(&d)?, Outcome::Updated)),
            None => {
                let current = self.get_doc(kind, key).await?;
                Err(StoreError::Conflict {
                    what: format!("{} {key}", kind.as_str()),
                    reason: match current {
                        Some(d) => format!("changed meanwhile (version {} is stored, {expected} was read)", d.version),
                        None => "not stored".into(),
                    },
                })
            }
        }
    }

    async fn delete_doc(&self, kind: DocKind, key: &str, expected: Option<u64>) -> StoreResult<bool> {
        let mut filter = doc! {"_id": id(kind, key)};
        if let Some(v) = expected {
            filter.insert("version", i64::try_from(v).unwrap_or(i64::MAX));
        }
        Ok(self.coll(COLL).delete_one(filter).await?.deleted_count > 0)
    }
}
