//! Migration 5 on the MongoDB backend: matches stored with the verdict kind get the kind
//! of copy. The comparison is a compressed blob, so the rule ([`backfilled_kind`]) runs
//! here rather than in a database command.

use mongodb::bson::doc;

use crate::migrations::backfilled_kind;
use crate::mongo::{collect, MongoStore};
use crate::traits::StoreResult;

const BATCH: i64 = 500;

impl MongoStore {
    /// Rewrite every match whose kind is still a verdict kind; safe to run twice.
    pub(super) async fn backfill_match_kind(&self) -> StoreResult<u64> {
        let coll = self.coll("matches");
        let mut done = coll.update_many(doc! {"kind": "b_within_a"}, doc! {"$set": {"kind": "excerpt"}}).await?;
        let mut total = done.modified_count;
        let mut after = i64::MIN;
        loop {
            let docs = collect(
                coll.find(doc! {"kind": "a_within_b", "_id": {"$gt": after}})
                    .sort(doc! {"_id": 1})
                    .limit(BATCH)
                    .await?,
            )
            .await?;
            let Some(last) = docs.last() else { break };
            after = last.get_i64("_id").unwrap_or(i64::MAX);
            for d in docs {
                let m = self.match_from(d).await?;
                if let Some(kind) = backfilled_kind(&m.kind, &m.comparison) {
                    done = coll.update_one(doc! {"_id": m.id, "kind": &m.kind}, doc! {"$set": {"kind": kind}}).await?;
                    total += done.modified_count;
                }
            }
        }
        Ok(total)
    }
}
