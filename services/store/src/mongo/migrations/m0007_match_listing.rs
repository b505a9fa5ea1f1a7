//! Migration 7 on the MongoDB backend (a child module of `mongo`): every match document
//! carries the two comparison fields a listing shows (`copied_chars`, `coverage`), so a
//! listing reads neither the compressed comparison nor its chunks. Older documents get
//! them here, from their comparison (a compressed blob, hence code and not a command).

use mongodb::bson::{doc, Document};
use serde::Deserialize;

use super::super::{collect, num, MongoStore};
use crate::codec::decompress;
use crate::traits::StoreResult;
use crate::StoreError;

const BATCH: i64 = 500;

/// The comparison fields a listing shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
pub(in crate::mongo) struct ListFields {
    #[serde(default)]
    pub(in crate::mongo) copied_chars: u64,
    #[serde(default)]
    pub(in crate::mongo) evidence_coverage_a: f64,
}

impl ListFields {
    /// The fields stored in `d`, if it has them.
    pub(in crate::mongo) fn stored(d: &Document) -> Option<Self> {
        let copied_chars = num(d, "copied_chars").ok()?;
        let evidence_coverage_a = super::super::float(d, "coverage").ok()?;
        Some(ListFields { copied_chars: copied_chars.max(0) as u64, evidence_coverage_a })
    }
}

impl MongoStore {
    /// The listing fields of the match document `d` (with its comparison) read from its
    /// comparison.
    pub(in crate::mongo) async fn list_fields_of(&self, d: &Document) -> StoreResult<ListFields> {
        let id = num(d, "_id")?;
        let json =
            decompress(&self.get_blob(d, &format!("matches/{id}/comparison"), "comparison").await?, "comparison")?;
        serde_json::from_slice(&json).map_err(|e| StoreError::corrupt(format!("comparison of match {id}"), e))
    }

    /// Give every match without them its listing fields; safe to run twice.
    pub(in crate::mongo) async fn backfill_match_list_fields(&self) -> StoreResult<u64> {
        let coll = self.coll("matches");
        let mut total = 0;
        let mut after = i64::MIN;
        loop {
            let docs = collect(
                coll.find(doc! {"copied_chars": {"$exists": false}, "_id": {"$gt": after}})
                    .sort(doc! {"_id": 1})
                    .limit(BATCH)
                    .await?,
            )
            .await?;
            let Some(last) = docs.last() else { break };
            after = num(last, "_id")?;
            for d in docs {
                let f = self.list_fields_of(&d).await?;
                let done = coll
                    .update_one(
                        doc! {"_id": num(&d, "_id")?, "copied_chars": {"$exists": false}},
                        doc! {"$set": {"copied_chars": f.copied_chars as i64, "coverage": f.evidence_coverage_a}},
                    )
                    .await?;
                total += done.modified_count;
            }
        }
        Ok(total)
    }
}
