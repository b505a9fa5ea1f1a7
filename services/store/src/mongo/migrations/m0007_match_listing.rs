//! Migration 7 on the MongoDB backend: every match document carries the two comparison
//! fields a listing shows (`copied_chars`, `coverage`), so a listing reads neither the
//! compressed comparison nor its chunks. Older documents get them here, from their
//! comparison (a compressed blob, hence code and not a command).

use mongodb::bson::doc;

use crate::mongo::fields::num;
use crate::mongo::{collect, MongoStore};
use crate::traits::StoreResult;

const BATCH: i64 = 500;

impl MongoStore {
    /// Give every match without them its listing fields; safe to run twice.
    pub(super) async fn backfill_match_list_fields(&self) -> StoreResult<u64> {
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
