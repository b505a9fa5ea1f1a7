//! [`EvidenceStore`] on MongoDB: the files in the GridFS bucket `evidence` (filename: the
//! SHA-256; `evidence.files` and `evidence.chunks`), the captures in `captures` (ids from
//! `counters`; unique `key` and `leaf_index`), the signed tree heads in `tree_heads`
//! (`_id`: the tree size).
//!
//! Without transactions, a dense leaf index comes from the unique index: an appender
//! reads the largest leaf index, inserts with the next one, and tries again when another
//! appender took it first (a duplicate key). The insert is the append's one write, so a
//! crash at any point leaves no gap. A file stored twice by racing writers is harmless:
//! reads take any copy whose bytes verify, retention deletes every copy.
//!
//! Retention and appends are not serialised here: an append whose files were checked
//! just before retention deleted them (when they were listed only by captures being
//! pruned) would list missing files; run retention with a cut-off well before any
//! capture still being taken.

use std::collections::{BTreeSet, HashSet};
use std::sync::atomic::Ordering;

use async_trait::async_trait;
use futures::{AsyncReadExt, AsyncWriteExt, TryStreamExt};
use mongodb::bson::{doc, Bson, Document};
use mongodb::error::{ErrorKind, GridFsErrorKind};
use mongodb::gridfs::{FilesCollectionDocument, GridFsBucket};
use mongodb::options::GridFsBucketOptions;

use super::fields::{bin, date, num, opt_time, string, time};
use super::ids::BATCH_READ;
use super::{collect, MongoStore};
use crate::codec::*;
use crate::error::is_mongo_duplicate;
use crate::model::*;
use crate::traits::{EvidenceStore, StoreResult};
use crate::StoreError;

/// The GridFS bucket of the evidence files.
const BUCKET: &str = "evidence";
/// Attempts at a free leaf index: each attempt lost means another appender won one, so
/// this bounds the number of appends racing with one.
const APPEND_ATTEMPTS: usize = 1_000;
/// 9999-12-31T23:59:59.999Z, the last date in Unix milliseconds that every server reads.
const LAST_DATE_MS: i64 = 253_402_300_799_999;

/// A GridFS stream's error: the driver's error inside, when there is one.
fn gridfs_error(e: std::io::Error) -> StoreError {
    let message = e.to_string();
    match e.into_inner().and_then(|inner| inner.downcast::<mongodb::error::Error>().ok()) {
        Some(e) => (*e).into(),
        None => StoreError::Backend { backend: "mongodb", message: format!("GridFS: {message}") },
    }
}

fn too_large(sha256: &str, size: u64, max_bytes: u64) -> StoreError {
    StoreError::invalid("evidence file", format!("{sha256} has {size} bytes, more than the limit of {max_bytes}"))
}

fn capture_from(d: &Document) -> StoreResult<Capture> {
    let id = num(d, "_id")?;
    let leaf_index = u64::try_from(num(d, "leaf_index")?)
        .map_err(|_| StoreError::corrupt(format!("leaf index of capture {id}"), "negative"))?;
    let record = match d.get("record") {
        Some(Bson::Binary(b)) => b.bytes.clone(),
        _ => return Err(super::fields::corrupt(d, "record")),
    };
    let mut files = Vec::new();
    for f in d.get_array("files").map_err(|_| super::fields::corrupt(d, "files"))? {
        let Bson::Document(f) = f else { return Err(super::fields::corrupt(d, "files")) };
        let size = u64::try_from(num(f, "size")?)
            .map_err(|_| StoreError::corrupt(format!("file size in capture {id}"), "negative"))?;
        files.push(CaptureFile {
            name: string(f, "name")?,
            media_type: string(f, "media_type")?,
            size,
            sha256: string(f, "sha256")?,
        });
    }
    Ok(Capture {
        id,
        leaf_index,
        key: string(d, "key")?,
        match_id: num(d, "match_id")?,
        page_id: num(d, "page_id")?,
        url: string(d, "url")?,
        captured_at: time(d, "captured_at")?,
        reason: string(d, "reason")?,
        files,
        record,
        pruned_at: opt_time(d, "pruned_at")?,
    })
}

impl MongoStore {
    fn evidence_bucket(&self) -> GridFsBucket {
        self.db.gridfs_bucket(GridFsBucketOptions::builder().bucket_name(BUCKET.to_owned()).build())
    }

    /// Every stored copy of the file `sha256`.
    async fn evidence_copies(&self, sha256: &str) -> StoreResult<Vec<FilesCollectionDocument>> {
        Ok(self.evidence_bucket().find(doc! {"filename": sha256}).await?.try_collect().await?)
    }

    /// The leaf index the next capture takes (the number of leaves). Read from the leaf
    /// this process last saw up, as SecantusDB does not push a sort's limit into its
    /// index scan.
    async fn next_leaf(&self) -> StoreResult<i64> {
        let mut floor = self.leaf_floor.load(Ordering::Relaxed);
        loop {
            let last = self
                .coll("captures")
                .find_one(doc! {"leaf_index": {"$gte": floor}})
                .sort(doc! {"leaf_index": -1})
                .projection(doc! {"leaf_index": 1})
                .await?;
            match last {
                Some(d) => {
                    let last = num(&d, "leaf_index")?;
                    self.leaf_floor.fetch_max(last, Ordering::Relaxed);
                    return Ok(last + 1);
                }
                None if floor == 0 => return Ok(0),
                // The database was replaced under this process (a restore): read it whole.
                None => {
                    tracing::warn!(floor, "evidence log shorter than seen before; reading it again");
                    self.leaf_floor.store(0, Ordering::Relaxed);
                    floor = 0;
                }
            }
        }
    }

    /// Every listed file is stored, with the listed size.
    async fn check_files_stored(&self, files: &[CaptureFile]) -> StoreResult<()> {
        for f in files {
            let copies = self.evidence_copies(&f.sha256).await?;
            let Some(copy) = copies.first() else { return Err(StoreError::not_found("evidence file", &f.sha256)) };
            if copy.length != f.size {
                return Err(StoreError::invalid(
                    "capture file",
                    format!("{} is listed with {} bytes, stored with {}", f.name, f.size, copy.length),
                ));
            }
        }
        Ok(())
    }

    /// Delete every copy of the file `sha256`; its size, `None` when there was none.
    async fn delete_evidence_file(&self, sha256: &str) -> StoreResult<Option<u64>> {
        let copies = self.evidence_copies(sha256).await?;
        let Some(size) = copies.first().map(|c| c.length) else { return Ok(None) };
        let bucket = self.evidence_bucket();
        for copy in copies {
            match bucket.delete(copy.id).await {
                Ok(()) => {}
                // Deleted by a concurrent run.
                Err(e) if matches!(&*e.kind, ErrorKind::GridFs(GridFsErrorKind::FileNotFound { .. })) => {}
                Err(e) => return Err(e.into()),
            }
        }
        Ok(Some(size))
    }
}

#[async_trait]
impl EvidenceStore for MongoStore {
    async fn put_evidence_file(&self, bytes: &[u8]) -> StoreResult<String> {
        let sha256 = sha256_hex(bytes);
        let bucket = self.evidence_bucket();
        if bucket.find_one(doc! {"filename": &sha256}).await?.is_some() {
            tracing::debug!(sha256, written = false, "evidence file stored");
            return Ok(sha256);
        }
        // The driver writes the chunks, then (on close) the file's document: a reader
        // never sees a file whose chunks are not all there.
        let mut upload = bucket.open_upload_stream(&sha256).await?;
        upload.write_all(bytes).await.map_err(gridfs_error)?;
        upload.close().await.map_err(gridfs_error)?;
        tracing::debug!(sha256, written = true, "evidence file stored");
        Ok(sha256)
    }

    async fn get_evidence_file(&self, sha256: &str, max_bytes: u64) -> StoreResult<Option<Vec<u8>>> {
        check_sha256(sha256)?;
        let copies = self.evidence_copies(sha256).await?;
        if copies.is_empty() {
            return Ok(None);
        }
        let bucket = self.evidence_bucket();
        let (mut larger, mut fault) = (None, None);
        for copy in copies {
            if copy.length > max_bytes {
                larger = Some(copy.length);
                continue;
            }
            let read = async {
                let stream = bucket.open_download_stream(copy.id.clone()).await?;
                let mut bytes = Vec::with_capacity(copy.length as usize);
                stream.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes).await.map_err(gridfs_error)?;
                StoreResult::Ok(bytes)
            };
            match read.await {
                Ok(bytes) if bytes.len() as u64 > max_bytes => larger = Some(bytes.len() as u64),
                Ok(bytes) => {
                    let actual = sha256_hex(&bytes);
                    if actual == sha256 {
                        return Ok(Some(bytes));
                    }
                    tracing::error!(sha256, actual, id = ?copy.id, "evidence file corrupt");
                    fault = Some(format!("its bytes hash to {actual}"));
                }
                Err(e) if e.is_retryable() => return Err(e),
                Err(e) => {
                    tracing::error!(sha256, id = ?copy.id, error = %e, "evidence file unreadable");
                    fault = Some(e.to_string());
                }
            }
        }
        match (fault, larger) {
            (Some(reason), _) => Err(StoreError::corrupt(format!("evidence file {sha256}"), reason)),
            (None, Some(size)) => Err(too_large(sha256, size, max_bytes)),
            (None, None) => Ok(None),
        }
    }

    async fn append_capture(&self, capture: &NewCapture) -> StoreResult<(Capture, Outcome)> {
        validate_capture(capture)?;
        let coll = self.coll("captures");
        if let Some(d) = coll.find_one(doc! {"key": &capture.key}).await? {
            return Ok((capture_from(&d)?, Outcome::Unchanged));
        }
        self.check_files_stored(&capture.files).await?;
        let id = self.next_ids("captures", 1).await?;
        let files: Vec<Bson> = capture
            .files
            .iter()
            .map(|f| {
                Bson::Document(doc! {
                    "name": &f.name, "media_type": &f.media_type, "size": f.size as i64, "sha256": &f.sha256,
                })
            })
            .collect();
        for attempt in 1..=APPEND_ATTEMPTS {
            let leaf = self.next_leaf().await?;
            let d = doc! {
                "_id": id, "key": &capture.key, "leaf_index": leaf, "match_id": capture.match_id,
                "page_id": capture.page_id, "url": &capture.url, "captured_at": date(capture.captured_at),
                "reason": &capture.reason, "files": files.clone(), "record": bin(capture.record.clone()),
                "pruned_at": Bson::Null,
            };
            match coll.insert_one(d.clone()).await {
                Ok(_) => {
                    tracing::debug!(key = %capture.key, id, leaf, attempt, "capture appended");
                    return Ok((capture_from(&d)?, Outcome::Inserted));
                }
                Err(e) if is_mongo_duplicate(&e) => {
                    // Either another appender of the same key won, or another capture took
                    // the leaf index: then try the next one.
                    if let Some(d) = coll.find_one(doc! {"key": &capture.key}).await? {
                        return Ok((capture_from(&d)?, Outcome::Unchanged));
                    }
                    tracing::debug!(key = %capture.key, leaf, attempt, "leaf index taken; trying the next");
                }
                Err(e) => return Err(e.into()),
            }
        }
        Err(StoreError::Unavailable {
            backend: "mongodb",
            message: format!("no free leaf index for capture {} after {APPEND_ATTEMPTS} attempts", capture.key),
        })
    }

    async fn get_capture(&self, id: i64) -> StoreResult<Option<Capture>> {
        self.coll("captures").find_one(doc! {"_id": id}).await?.as_ref().map(capture_from).transpose()
    }

    async fn captures_of_match(&self, match_id: i64) -> StoreResult<Vec<Capture>> {
        let docs = collect(self.coll("captures").find(doc! {"match_id": match_id}).sort(doc! {"leaf_index": 1}).await?)
            .await?;
        docs.iter().map(capture_from).collect()
    }

    async fn capture_leaves(&self, from: u64, limit: u32) -> StoreResult<Vec<Vec<u8>>> {
        let limit = check_limit(limit)?;
        let Ok(from) = i64::try_from(from) else { return Ok(Vec::new()) };
        // Leaf indexes are dense: the window [from, from + limit) is the page.
        let docs = collect(
            self.coll("captures")
                .find(doc! {"leaf_index": {"$gte": from, "$lt": from.saturating_add(limit)}})
                .sort(doc! {"leaf_index": 1})
                .projection(doc! {"leaf_index": 1, "record": 1})
                .await?,
        )
        .await?;
        let mut out = Vec::with_capacity(docs.len());
        for (expected, d) in (from..).zip(&docs) {
            let leaf = num(d, "leaf_index")?;
            if leaf != expected {
                return Err(StoreError::corrupt("evidence log", format!("leaf {expected} missing (next is {leaf})")));
            }
            match d.get("record") {
                Some(Bson::Binary(b)) => out.push(b.bytes.clone()),
                _ => return Err(super::fields::corrupt(d, "record")),
            }
        }
        Ok(out)
    }

    async fn count_captures(&self) -> StoreResult<u64> {
        let n = self.next_leaf().await?;
        u64::try_from(n).map_err(|_| StoreError::corrupt("evidence log size", n))
    }

    async fn put_tree_head(&self, size: u64, timestamp_ms: i64, head_json: &str) -> StoreResult<bool> {
        let size = check_tree_head(size, head_json)?;
        match self
            .coll("tree_heads")
            .insert_one(doc! {"_id": size, "timestamp_ms": timestamp_ms, "head": head_json})
            .await
        {
            Ok(_) => Ok(true),
            Err(e) if is_mongo_duplicate(&e) => Ok(false),
            Err(e) => Err(e.into()),
        }
    }

    async fn latest_tree_head(&self) -> StoreResult<Option<String>> {
        let d = self.coll("tree_heads").find_one(doc! {}).sort(doc! {"_id": -1}).await?;
        d.map(|d| string(&d, "head")).transpose()
    }

    async fn tree_heads_since(&self, since_ms: i64, limit: u32) -> StoreResult<Vec<String>> {
        let limit = check_limit(limit)?;
        let docs = collect(
            self.coll("tree_heads")
                .find(doc! {"timestamp_ms": {"$gte": since_ms}})
                .sort(doc! {"_id": 1})
                .limit(limit)
                .await?,
        )
        .await?;
        docs.iter().map(|d| string(d, "head")).collect()
    }

    async fn prune_evidence(&self, before: Timestamp) -> StoreResult<PruneReport> {
        let coll = self.coll("captures");
        // "Everything" as a date every server can read (SecantusDB refuses dates past the
        // year 9999).
        let before = Timestamp(before.0.min(LAST_DATE_MS));
        let candidates = collect(
            coll.find(doc! {"captured_at": {"$lt": date(before)}, "pruned_at": Bson::Null})
                .projection(doc! {"match_id": 1, "files": 1})
                .await?,
        )
        .await?;
        let match_ids: Vec<i64> = candidates.iter().map(|d| num(d, "match_id")).collect::<StoreResult<_>>()?;
        let protected: HashSet<i64> = self
            .find_in("matches", &sorted_ids(&match_ids), Some(doc! {"status": 1}))
            .await?
            .iter()
            .filter(|m| {
                let status = m.get_str("status").unwrap_or_default();
                status == ReviewStatus::Confirmed.as_str() || status == ReviewStatus::TakedownSent.as_str()
            })
            .map(|m| num(m, "_id"))
            .collect::<StoreResult<_>>()?;
        let mut pruned = Vec::new();
        let mut shas = BTreeSet::new();
        for (d, match_id) in candidates.iter().zip(&match_ids) {
            if protected.contains(match_id) {
                continue;
            }
            pruned.push(num(d, "_id")?);
            shas.extend(listed_files(d)?);
        }
        let mut report = PruneReport { captures: pruned.len() as u64, ..PruneReport::default() };
        if pruned.is_empty() {
            return Ok(report);
        }
        // The files listed by a capture that stays (not pruned before, not pruned now).
        let pruning: HashSet<i64> = pruned.iter().copied().collect();
        let listed: Vec<&String> = shas.iter().collect();
        let mut kept = HashSet::new();
        for chunk in listed.chunks(BATCH_READ) {
            let filter = doc! {"files.sha256": {"$in": chunk.to_vec()}, "pruned_at": Bson::Null};
            for d in collect(coll.find(filter).projection(doc! {"files": 1}).await?).await? {
                if !pruning.contains(&num(&d, "_id")?) {
                    kept.extend(listed_files(&d)?);
                }
            }
        }
        // Files go first: a failure after leaves the captures unpruned, and the next run
        // finishes the job (a file gone already is skipped).
        for sha in shas.iter().filter(|s| !kept.contains(*s) && check_sha256(s).is_ok()) {
            if let Some(size) = self.delete_evidence_file(sha).await? {
                report.files_deleted += 1;
                report.bytes_deleted += size;
            }
        }
        let now = date(Timestamp::now());
        for chunk in pruned.chunks(BATCH_READ) {
            coll.update_many(
                doc! {"_id": {"$in": chunk.to_vec()}, "pruned_at": Bson::Null},
                doc! {"$set": {"pruned_at": now.clone()}},
            )
            .await?;
        }
        tracing::info!(
            before = before.0,
            captures = report.captures,
            files = report.files_deleted,
            bytes = report.bytes_deleted,
            "evidence pruned"
        );
        Ok(report)
    }
}

/// The SHA-256 of the files a capture document lists.
fn listed_files(d: &Document) -> StoreResult<Vec<String>> {
    let files = d.get_array("files").map_err(|_| super::fields::corrupt(d, "files"))?;
    files
        .iter()
        .map(|f| match f {
            Bson::Document(f) => string(f, "sha256"),
            _ => Err(super::fields::corrupt(d, "files")),
        })
        .collect()
}
