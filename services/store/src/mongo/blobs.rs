//! Compressed fields of any size: kept inside their document up to [`INLINE_MAX`],
//! else in `blob_chunks` in pieces of [`CHUNK_SIZE`], so no document nears MongoDB's
//! 16 MB limit.

use mongodb::bson::{doc, Bson, Document};

use super::fields::{bin, corrupt, opt_num};
use super::MongoStore;
use crate::traits::StoreResult;
use crate::StoreError;

/// Largest compressed field kept inside its document.
const INLINE_MAX: usize = 4 * 1024 * 1024;
/// Size of one piece in `blob_chunks`.
const CHUNK_SIZE: usize = 8 * 1024 * 1024;

impl MongoStore {
    /// Fields `{field}_z` / `{field}_chunks` for `data`; large data goes to chunks
    /// (written before the owning document, so a reader never sees missing chunks).
    pub(super) async fn put_blob(&self, owner: &str, field: &str, data: Vec<u8>, fresh: bool) -> StoreResult<Document> {
        self.put_blob_with(owner, field, data, fresh, INLINE_MAX).await
    }

    /// [`Self::put_blob`] keeping at most `inline_max` bytes inside the document (empty
    /// data always inside).
    pub(super) async fn put_blob_with(
        &self,
        owner: &str,
        field: &str,
        data: Vec<u8>,
        fresh: bool,
        inline_max: usize,
    ) -> StoreResult<Document> {
        let chunks = self.coll("blob_chunks");
        if data.len() <= inline_max || data.is_empty() {
            if !fresh {
                chunks.delete_many(doc! {"owner": owner}).await?;
            }
            return Ok(doc! {format!("{field}_z"): bin(data), format!("{field}_chunks"): 0_i32});
        }
        let mut n = 0_i32;
        for piece in data.chunks(CHUNK_SIZE) {
            chunks
                .replace_one(
                    doc! {"_id": format!("{owner}/{n}")},
                    doc! {"_id": format!("{owner}/{n}"), "owner": owner, "n": n, "data": bin(piece.to_vec())},
                )
                .upsert(true)
                .await?;
            n += 1;
        }
        if !fresh {
            chunks.delete_many(doc! {"owner": owner, "n": {"$gte": n}}).await?;
        }
        Ok(doc! {format!("{field}_z"): Bson::Null, format!("{field}_chunks"): n})
    }

    pub(super) async fn get_blob(&self, doc: &Document, owner: &str, field: &str) -> StoreResult<Vec<u8>> {
        let n = opt_num(doc, &format!("{field}_chunks"))?.unwrap_or(0);
        if n == 0 {
            return match doc.get(format!("{field}_z")) {
                Some(Bson::Binary(b)) => Ok(b.bytes.clone()),
                _ => Err(corrupt(doc, &format!("{field}_z"))),
            };
        }
        let mut out = Vec::with_capacity(n as usize * CHUNK_SIZE);
        for i in 0..n {
            let c = self
                .coll("blob_chunks")
                .find_one(doc! {"_id": format!("{owner}/{i}")})
                .await?
                .ok_or_else(|| StoreError::corrupt(owner, format!("chunk {i} of {n} missing")))?;
            match c.get("data") {
                Some(Bson::Binary(b)) => out.extend_from_slice(&b.bytes),
                _ => return Err(corrupt(&c, "data")),
            }
        }
        Ok(out)
    }
}
