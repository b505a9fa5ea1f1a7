//! Numeric ids: the `counters` that hand them out, scans over bounded `_id` windows
//! (never an open-ended range with sort+limit), and reads of many documents by id.

use mongodb::bson::{doc, Bson, Document};
use mongodb::options::ReturnDocument;

use super::fields::num;
use super::{collect, MongoStore};
use crate::codec::sorted_ids;
use crate::error::is_mongo_duplicate;
use crate::model::SubjectKind;
use crate::traits::StoreResult;
use crate::StoreError;

/// Ids per `$in` read of several documents by id. Small, because a server may check
/// each document it finds against the whole list (SecantusDB does: a read of n ids costs
/// it n * n comparisons), while a round trip more costs MongoDB little.
pub(super) const BATCH_READ: usize = 32;

impl MongoStore {
    /// Reserve `n` consecutive ids of `counter`; returns the first.
    ///
    /// Two processes creating the same counter at once race on its upsert: the loser
    /// gets a duplicate-key error (MongoDB) or no document (some compatible servers).
    /// The counter exists by then, so the increment is simply tried again.
    pub(super) async fn next_ids(&self, counter: &str, n: i64) -> StoreResult<i64> {
        const ATTEMPTS: usize = 3;
        for attempt in 1..=ATTEMPTS {
            let result = self
                .coll("counters")
                .find_one_and_update(doc! {"_id": counter}, doc! {"$inc": {"seq": n}})
                .upsert(true)
                .return_document(ReturnDocument::After)
                .await;
            match result {
                Ok(Some(d)) => return Ok(num(&d, "seq")? - n + 1),
                Err(e) if !is_mongo_duplicate(&e) => return Err(e.into()),
                lost => tracing::debug!(counter, attempt, duplicate = lost.is_err(), "counter upsert raced"),
            }
        }
        Err(StoreError::Backend {
            backend: "mongodb",
            message: format!("counter {counter} not returned after {ATTEMPTS} attempts"),
        })
    }

    /// Highest id ever allocated by `counter` (the upper bound of id scans).
    async fn max_id(&self, counter: &str) -> StoreResult<i64> {
        let d = self.coll("counters").find_one(doc! {"_id": counter}).await?;
        d.map(|d| num(&d, "seq")).transpose().map(|v| v.unwrap_or(0))
    }

    /// Documents of `coll` passing `filter` with `_id` in `(after_id, max]`, ascending,
    /// at most `limit`, queried in bounded windows that widen while they come back empty.
    pub(super) async fn scan(
        &self,
        target: Target,
        filter: Document,
        after_id: i64,
        limit: i64,
        projection: Option<Document>,
    ) -> StoreResult<Vec<Document>> {
        let Target { coll, counter, id_field } = target;
        let max = self.max_id(counter).await?;
        let mut out = Vec::new();
        let mut lo = after_id.max(0);
        let mut window = (limit * 4).max(1024);
        let collection = self.coll(coll);
        while (out.len() as i64) < limit && lo < max {
            let hi = lo.saturating_add(window).min(max);
            let mut f = filter.clone();
            f.insert(id_field, doc! {"$gt": lo, "$lte": hi});
            let mut find = collection.find(f).sort(doc! {id_field: 1}).limit(limit - out.len() as i64);
            if let Some(p) = &projection {
                find = find.projection(p.clone());
            }
            out.extend(collect(find.await?).await?);
            lo = hi;
            window = window.saturating_mul(2);
        }
        Ok(out)
    }

    /// The documents of `coll` with these ids (each once, ascending by id; ids not stored
    /// left out), read with bounded `$in` lists: one round trip per chunk, not per id.
    pub(super) async fn find_by_ids(
        &self,
        coll: &str,
        ids: &[i64],
        projection: Option<Document>,
    ) -> StoreResult<Vec<Document>> {
        let mut out = self.find_in(coll, &sorted_ids(ids), projection).await?;
        out.sort_by_cached_key(|d| num(d, "_id").unwrap_or(i64::MAX));
        Ok(out)
    }

    /// The documents of `coll` whose `_id` is one of `ids` (in no particular order; ids
    /// not stored left out), at most [`BATCH_READ`] ids per request.
    pub(super) async fn find_in<T: Clone + Into<Bson>>(
        &self,
        coll: &str,
        ids: &[T],
        projection: Option<Document>,
    ) -> StoreResult<Vec<Document>> {
        let mut out = Vec::with_capacity(ids.len());
        let collection = self.coll(coll);
        for chunk in ids.chunks(BATCH_READ) {
            let chunk: Vec<Bson> = chunk.iter().cloned().map(Into::into).collect();
            let mut find = collection.find(doc! {"_id": {"$in": chunk}});
            if let Some(p) = &projection {
                find = find.projection(p.clone());
            }
            out.extend(collect(find.await?).await?);
        }
        Ok(out)
    }
}

/// What [`MongoStore::scan`] walks: a collection, the counter that bounds its ids, and
/// the id field.
pub(super) struct Target {
    coll: &'static str,
    counter: &'static str,
    id_field: &'static str,
}

impl Target {
    /// A collection whose `_id` comes from the counter of the same name.
    pub(super) fn ids(coll: &'static str) -> Self {
        Target { coll, counter: coll, id_field: "_id" }
    }

    /// Fingerprints of one kind: their subject ids come from the sections or pages counter.
    pub(super) fn fingerprints(kind: SubjectKind) -> Self {
        let counter = match kind {
            SubjectKind::Section => "sections",
            SubjectKind::Page => "pages",
        };
        Target { coll: "fingerprints", counter, id_field: "subject_id" }
    }
}
