//! The MongoDB backend (official driver; MongoDB 6+ in production, SecantusDB in the
//! tests). It sticks to the subset both speak: CRUD, upserts, `$inc`/`$min`/`$max`,
//! `find_one_and_update`, simple aggregation, unique and compound indexes. No
//! multi-document transactions (a standalone server has none); instead every write is
//! idempotent and ordered so that a retry after a failure completes it.
//!
//! Numeric ids live in `_id` (Int64) and come from the `counters` collection. Texts and
//! bodies are deflate-compressed; a field larger than [`INLINE_MAX`] goes to
//! `blob_chunks` in pieces of [`CHUNK_SIZE`], so no document nears the 16 MB limit.
//! Pagination uses bounded `_id` windows (never an open-ended range with sort+limit).

use std::collections::{BTreeMap, HashMap};
use std::time::Duration;

use async_trait::async_trait;
use futures::TryStreamExt;
use mongodb::bson::spec::BinarySubtype;
use mongodb::bson::{doc, Binary, Bson, DateTime, Document};
use mongodb::options::{ClientOptions, ReturnDocument};
use mongodb::{Client, Collection, Database};
use zhiwen_core::Fingerprints;

use crate::codec::*;
use crate::error::is_mongo_duplicate;
use crate::migrations::{MigrationReport, LATEST, MONGODB};
use crate::model::*;
use crate::traits::*;
use crate::StoreError;

mod content_hash;
mod migrations {
    pub(super) mod m0005_match_kind;
    pub(super) mod m0007_match_listing;
}
mod queries;

/// Largest compressed field kept inside its document.
pub(crate) const INLINE_MAX: usize = 4 * 1024 * 1024;
/// Size of one piece in `blob_chunks`.
pub(crate) const CHUNK_SIZE: usize = 8 * 1024 * 1024;

const MIGRATIONS: &str = "_migrations";
/// Ids per `$in` read of several documents by id. Small, because a server may check
/// each document it finds against the whole list (SecantusDB does: a read of n ids costs
/// it n * n comparisons), while a round trip more costs MongoDB little.
const BATCH_READ: usize = 32;

/// The MongoDB store.
pub(crate) struct MongoStore {
    db: Database,
}

fn bin(bytes: Vec<u8>) -> Bson {
    Bson::Binary(Binary { subtype: BinarySubtype::Generic, bytes })
}

fn date(t: Timestamp) -> Bson {
    Bson::DateTime(DateTime::from_millis(t.0))
}

fn corrupt(doc: &Document, key: &str) -> StoreError {
    StoreError::corrupt(format!("field {key} of {:?}", doc.get("_id")), "missing or of the wrong type")
}

fn num(doc: &Document, key: &str) -> StoreResult<i64> {
    match doc.get(key) {
        Some(Bson::Int64(v)) => Ok(*v),
        Some(Bson::Int32(v)) => Ok(*v as i64),
        Some(Bson::Double(v)) if v.fract() == 0.0 => Ok(*v as i64),
        _ => Err(corrupt(doc, key)),
    }
}

fn opt_num(doc: &Document, key: &str) -> StoreResult<Option<i64>> {
    match doc.get(key) {
        None | Some(Bson::Null) => Ok(None),
        _ => num(doc, key).map(Some),
    }
}

fn float(doc: &Document, key: &str) -> StoreResult<f64> {
    match doc.get(key) {
        Some(Bson::Double(v)) => Ok(*v),
        Some(Bson::Int64(v)) => Ok(*v as f64),
        Some(Bson::Int32(v)) => Ok(*v as f64),
        _ => Err(corrupt(doc, key)),
    }
}

fn string(doc: &Document, key: &str) -> StoreResult<String> {
    doc.get_str(key).map(str::to_owned).map_err(|_| corrupt(doc, key))
}

fn opt_string(doc: &Document, key: &str) -> StoreResult<Option<String>> {
    match doc.get(key) {
        None | Some(Bson::Null) => Ok(None),
        Some(Bson::String(s)) => Ok(Some(s.clone())),
        _ => Err(corrupt(doc, key)),
    }
}

/// A page document projected to `_id, url, site, content_hash, last_fetched_at`.
fn page_ref(d: &Document) -> StoreResult<PageRef> {
    Ok(PageRef {
        id: num(d, "_id")?,
        url: string(d, "url")?,
        site: string(d, "site")?,
        content_hash: i2h(num(d, "content_hash")?),
        last_fetched_at: time(d, "last_fetched_at")?,
    })
}

fn time(doc: &Document, key: &str) -> StoreResult<Timestamp> {
    match doc.get(key) {
        Some(Bson::DateTime(d)) => Ok(Timestamp(d.timestamp_millis())),
        _ => num(doc, key).map(Timestamp),
    }
}

fn opt_time(doc: &Document, key: &str) -> StoreResult<Option<Timestamp>> {
    match doc.get(key) {
        None | Some(Bson::Null) => Ok(None),
        _ => time(doc, key).map(Some),
    }
}

fn json_field<T: serde::de::DeserializeOwned>(doc: &Document, key: &str) -> StoreResult<T> {
    let s = string(doc, key)?;
    serde_json::from_str(&s).map_err(|e| StoreError::corrupt(format!("field {key} of {:?}", doc.get("_id")), e))
}

async fn collect(cursor: mongodb::Cursor<Document>) -> StoreResult<Vec<Document>> {
    Ok(cursor.try_collect().await?)
}

impl MongoStore {
    pub(crate) async fn connect(uri: &str, database: &str) -> StoreResult<Self> {
        if database.is_empty() || database.len() > 60 || database.contains(['/', '\\', '.', ' ', '"', '$', '\0']) {
            return Err(StoreError::Config(format!("invalid MongoDB database name {database:?}")));
        }
        let mut options =
            ClientOptions::parse(uri).await.map_err(|e| StoreError::Config(format!("invalid MongoDB URI: {e}")))?;
        options.app_name.get_or_insert_with(|| "zhiwen".to_owned());
        options.server_selection_timeout.get_or_insert(Duration::from_secs(10));
        let client = Client::with_options(options).map_err(|e| StoreError::Config(format!("MongoDB client: {e}")))?;
        Ok(MongoStore { db: client.database(database) })
    }

    fn coll(&self, name: &str) -> Collection<Document> {
        self.db.collection(name)
    }

    async fn schema_version(&self) -> StoreResult<u32> {
        let docs = collect(self.coll(MIGRATIONS).find(doc! {}).projection(doc! {"_id": 1}).await?).await?;
        Ok(docs.iter().filter_map(|d| num(d, "_id").ok()).max().unwrap_or(0) as u32)
    }

    pub(crate) async fn check_schema(&self) -> StoreResult<()> {
        let v = self.schema_version().await?;
        if v > LATEST {
            return Err(StoreError::SchemaTooNew { backend: "mongodb", database: v, binary: LATEST });
        }
        if v < LATEST {
            return Err(StoreError::SchemaOutdated { backend: "mongodb", database: v, binary: LATEST });
        }
        Ok(())
    }

    pub(crate) async fn migrate(&self) -> StoreResult<MigrationReport> {
        let current = self.schema_version().await?;
        if current > LATEST {
            return Err(StoreError::SchemaTooNew { backend: "mongodb", database: current, binary: LATEST });
        }
        let mut applied = Vec::new();
        for (version, json) in MONGODB.iter().filter(|(v, _)| *v > current) {
            // Parsed straight into a Document: key order is kept, which commands and
            // compound index keys depend on.
            let migration: Document = serde_json::from_str(json)
                .map_err(|e| StoreError::corrupt(format!("embedded MongoDB migration {version}"), e))?;
            let name = migration.get_str("name").unwrap_or("unnamed").to_owned();
            let commands = migration
                .get_array("commands")
                .map_err(|_| StoreError::corrupt(format!("embedded MongoDB migration {version}"), "no commands"))?;
            for cmd in commands {
                let Bson::Document(cmd) = cmd else {
                    return Err(StoreError::corrupt(
                        format!("embedded MongoDB migration {version}"),
                        "command is not a document",
                    ));
                };
                if let Err(e) = self.db.run_command(cmd.clone()).await {
                    let code = match &*e.kind {
                        mongodb::error::ErrorKind::Command(c) => Some(c.code),
                        _ => None,
                    };
                    let message = e.to_string().to_lowercase();
                    // A migration interrupted after a command ran repeats it: creating what
                    // exists (48) or dropping an index that is gone (27) is already done.
                    let exists = code == Some(48) || message.contains("already exists");
                    let gone = code == Some(27) || message.contains("index not found");
                    if !(cmd.contains_key("create") && exists || cmd.contains_key("dropIndexes") && gone) {
                        return Err(e.into());
                    }
                }
            }
            match migration.get_str("backfill") {
                Err(_) => {}
                Ok("match_kind") => {
                    self.backfill_match_kind().await?;
                }
                Ok("match_list_fields") => {
                    self.backfill_match_list_fields().await?;
                }
                Ok(other) => {
                    return Err(StoreError::corrupt(
                        format!("embedded MongoDB migration {version}"),
                        format!("unknown backfill {other}"),
                    ))
                }
            }
            self.coll(MIGRATIONS)
                .replace_one(
                    doc! {"_id": *version as i64},
                    doc! {"_id": *version as i64, "name": &name, "applied_at": date(Timestamp::now())},
                )
                .upsert(true)
                .await?;
            applied.push(format!("{version:04}_{name}"));
        }
        Ok(MigrationReport {
            backend: "mongodb".into(),
            from_version: current,
            to_version: current.max(LATEST),
            applied,
        })
    }

    /// Reserve `n` consecutive ids of `counter`; returns the first.
    ///
    /// Two processes creating the same counter at once race on its upsert: the loser
    /// gets a duplicate-key error (MongoDB) or no document (some compatible servers).
    /// The counter exists by then, so the increment is simply tried again.
    async fn next_ids(&self, counter: &str, n: i64) -> StoreResult<i64> {
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

    /// Fields `{field}_z` / `{field}_chunks` for `data`; large data goes to chunks
    /// (written before the owning document, so a reader never sees missing chunks).
    async fn put_blob(&self, owner: &str, field: &str, data: Vec<u8>, fresh: bool) -> StoreResult<Document> {
        self.put_blob_with(owner, field, data, fresh, INLINE_MAX).await
    }

    /// [`Self::put_blob`] keeping at most `inline_max` bytes inside the document (empty
    /// data always inside).
    async fn put_blob_with(
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

    async fn get_blob(&self, doc: &Document, owner: &str, field: &str) -> StoreResult<Vec<u8>> {
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

    /// Documents of `coll` passing `filter` with `_id` in `(after_id, max]`, ascending,
    /// at most `limit`, queried in bounded windows that widen while they come back empty.
    async fn scan(
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
}

impl MongoStore {
    /// The documents of `coll` with these ids (each once, ascending by id; ids not stored
    /// left out), read with bounded `$in` lists: one round trip per chunk, not per id.
    async fn find_by_ids(&self, coll: &str, ids: &[i64], projection: Option<Document>) -> StoreResult<Vec<Document>> {
        let mut out = self.find_in(coll, &sorted_ids(ids), projection).await?;
        out.sort_by_cached_key(|d| num(d, "_id").unwrap_or(i64::MAX));
        Ok(out)
    }

    /// The documents of `coll` whose `_id` is one of `ids` (in no particular order; ids
    /// not stored left out), at most [`BATCH_READ`] ids per request.
    async fn find_in<T: Clone + Into<Bson>>(
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
struct Target {
    coll: &'static str,
    counter: &'static str,
    id_field: &'static str,
}

impl Target {
    /// A collection whose `_id` comes from the counter of the same name.
    fn ids(coll: &'static str) -> Self {
        Target { coll, counter: coll, id_field: "_id" }
    }

    /// Fingerprints of one kind: their subject ids come from the sections or pages counter.
    fn fingerprints(kind: SubjectKind) -> Self {
        let counter = match kind {
            SubjectKind::Section => "sections",
            SubjectKind::Page => "pages",
        };
        Target { coll: "fingerprints", counter, id_field: "subject_id" }
    }
}

// ---------------------------------------------------------------------------------
// Works

impl MongoStore {
    async fn upsert_one_work(&self, w: &NewWork) -> StoreResult<WorkUpserted> {
        let works = self.coll("works");
        let sections = self.coll("sections");
        let hash = work_hash(w);
        let now = Timestamp::now();
        let existing = works
            .find_one(doc! {"owner": &w.owner, "external_id": &w.external_id})
            .projection(doc! {"_id": 1, "content_hash": 1, "updated_at": 1})
            .await?;
        // Strictly later than what readers may have seen (the placeholder of a first
        // insert included), so an unchanged `updated_at` means unchanged sections.
        let changed_at = match &existing {
            Some(d) => Timestamp(now.0.max(time(d, "updated_at")?.0 + 1)),
            None => Timestamp(now.0 + 1),
        };
        let (id, outcome) = match existing {
            Some(d) if i2h(num(&d, "content_hash")?) == hash => (num(&d, "_id")?, Outcome::Unchanged),
            Some(d) => (num(&d, "_id")?, Outcome::Updated),
            None => {
                // The work document goes first with a placeholder hash, so a failure
                // half-way is completed (as an update) by the retry, under the same id.
                let id = self.next_ids("works", 1).await?;
                let mut d = doc! {
                    "_id": id, "owner": &w.owner, "external_id": &w.external_id, "title": &w.title, "author": &w.author,
                    "section_count": 0_i32, "content_hash": 0_i64, "created_at": date(now), "updated_at": date(now),
                    "text_z": bin(Vec::new()), "text_chunks": 0_i32,
                };
                d.insert("source_file", w.source_file.clone().map_or(Bson::Null, Bson::String));
                d.insert("charset", w.charset.clone().map_or(Bson::Null, Bson::String));
                works.insert_one(d).await.map_err(|e| {
                    if is_mongo_duplicate(&e) {
                        StoreError::Duplicate {
                            what: "work external id (concurrent insert)",
                            key: format!("{}/{}", w.owner, w.external_id),
                        }
                    } else {
                        e.into()
                    }
                })?;
                (id, Outcome::Inserted)
            }
        };
        let present =
            collect(sections.find(doc! {"work_id": id}).projection(doc! {"_id": 1, "ordinal": 1}).await?).await?;
        let mut by_ordinal: BTreeMap<u32, i64> = BTreeMap::new();
        for d in &present {
            by_ordinal.insert(num(d, "ordinal")? as u32, num(d, "_id")?);
        }
        if outcome == Outcome::Unchanged {
            return Ok(WorkUpserted { id, outcome, sections: by_ordinal.into_iter().collect() });
        }
        let missing = w.sections.iter().filter(|s| !by_ordinal.contains_key(&s.ordinal)).count() as i64;
        let mut next = if missing > 0 { self.next_ids("sections", missing).await? } else { 0 };
        let mut ids = BTreeMap::new();
        for s in &w.sections {
            let sid = match by_ordinal.get(&s.ordinal) {
                Some(&sid) => sid,
                None => {
                    next += 1;
                    next - 1
                }
            };
            let mut d = doc! {
                "_id": sid, "work_id": id, "ordinal": s.ordinal as i64, "title": &s.title,
                "char_start": s.char_start as i64, "char_end": s.char_end as i64,
            };
            d.extend(self.put_blob(&format!("sections/{sid}/text"), "text", compress(s.text.as_bytes()), false).await?);
            sections.replace_one(doc! {"_id": sid}, d).upsert(true).await?;
            ids.insert(s.ordinal, sid);
        }
        let stale: Vec<i64> = by_ordinal.iter().filter(|(o, _)| !ids.contains_key(o)).map(|(_, &sid)| sid).collect();
        if !stale.is_empty() {
            sections.delete_many(doc! {"_id": {"$in": &stale}}).await?;
        }
        let mut set = doc! {
            "title": &w.title, "author": &w.author, "section_count": w.sections.len() as i32,
            "content_hash": h2i(hash), "updated_at": date(changed_at),
        };
        set.insert("source_file", w.source_file.clone().map_or(Bson::Null, Bson::String));
        set.insert("charset", w.charset.clone().map_or(Bson::Null, Bson::String));
        // The work's text (all its sections) lives in chunks, never in the work document:
        // each task reads every work document for its version, and a server reads a
        // document whole even for a projection.
        let text = compress(w.text.as_bytes());
        set.extend(self.put_blob_with(&format!("works/{id}/text"), "text", text, false, 0).await?);
        works.update_one(doc! {"_id": id}, doc! {"$set": set}).await?;
        Ok(WorkUpserted { id, outcome, sections: ids.into_iter().collect() })
    }

    async fn work_from(&self, d: Document) -> StoreResult<Work> {
        let id = num(&d, "_id")?;
        let text = decompress_text(
            &self.get_blob(&d, &format!("works/{id}/text"), "text").await?,
            &format!("text of work {id}"),
        )?;
        Ok(Work {
            id,
            owner: string(&d, "owner")?,
            external_id: string(&d, "external_id")?,
            title: string(&d, "title")?,
            author: string(&d, "author")?,
            source_file: opt_string(&d, "source_file")?,
            charset: opt_string(&d, "charset")?,
            text,
            section_count: num(&d, "section_count")? as u32,
            content_hash: i2h(num(&d, "content_hash")?),
            created_at: time(&d, "created_at")?,
            updated_at: time(&d, "updated_at")?,
        })
    }

    async fn section_from(&self, d: Document) -> StoreResult<Section> {
        let id = num(&d, "_id")?;
        let text = decompress_text(
            &self.get_blob(&d, &format!("sections/{id}/text"), "text").await?,
            &format!("text of section {id}"),
        )?;
        Ok(Section {
            id,
            work_id: num(&d, "work_id")?,
            ordinal: num(&d, "ordinal")? as u32,
            title: string(&d, "title")?,
            text,
            char_start: num(&d, "char_start")? as u64,
            char_end: num(&d, "char_end")? as u64,
        })
    }
}

#[async_trait]
impl WorkStore for MongoStore {
    async fn upsert_work(&self, work: &NewWork) -> StoreResult<WorkUpserted> {
        validate_work(work)?;
        self.upsert_one_work(work).await
    }

    async fn upsert_works(&self, works: &[NewWork]) -> StoreResult<Vec<WorkUpserted>> {
        validate_works(works)?;
        let mut out = Vec::with_capacity(works.len());
        for w in works {
            out.push(self.upsert_one_work(w).await?);
        }
        Ok(out)
    }

    async fn get_work(&self, id: i64) -> StoreResult<Option<Work>> {
        match self.coll("works").find_one(doc! {"_id": id}).await? {
            Some(d) => Ok(Some(self.work_from(d).await?)),
            None => Ok(None),
        }
    }

    async fn find_work(&self, owner: &str, external_id: &str) -> StoreResult<Option<Work>> {
        match self.coll("works").find_one(doc! {"owner": owner, "external_id": external_id}).await? {
            Some(d) => Ok(Some(self.work_from(d).await?)),
            None => Ok(None),
        }
    }

    async fn list_works(&self, owner: Option<&str>, after_id: i64, limit: u32) -> StoreResult<Vec<WorkSummary>> {
        let limit = check_limit(limit)?;
        let filter = owner.map_or_else(Document::new, |o| doc! {"owner": o});
        let proj =
            doc! {"_id": 1, "owner": 1, "external_id": 1, "title": 1, "author": 1, "section_count": 1, "updated_at": 1};
        let docs = self.scan(Target::ids("works"), filter, after_id, limit, Some(proj)).await?;
        docs.iter()
            .map(|d| {
                Ok(WorkSummary {
                    id: num(d, "_id")?,
                    owner: string(d, "owner")?,
                    external_id: string(d, "external_id")?,
                    title: string(d, "title")?,
                    author: string(d, "author")?,
                    section_count: num(d, "section_count")? as u32,
                    updated_at: time(d, "updated_at")?,
                })
            })
            .collect()
    }

    async fn work_versions(&self) -> StoreResult<Vec<(i64, Timestamp)>> {
        let works = self.coll("works");
        let find = works.find(doc! {}).projection(doc! {"_id": 1, "updated_at": 1}).batch_size(10_000);
        let mut out = collect(find.await?)
            .await?
            .iter()
            .map(|d| Ok((num(d, "_id")?, time(d, "updated_at")?)))
            .collect::<StoreResult<Vec<_>>>()?;
        // Sorted here: a sort on the server would need an index or a sort stage.
        out.sort_unstable_by_key(|&(id, _)| id);
        Ok(out)
    }

    async fn get_section(&self, id: i64) -> StoreResult<Option<Section>> {
        match self.coll("sections").find_one(doc! {"_id": id}).await? {
            Some(d) => Ok(Some(self.section_from(d).await?)),
            None => Ok(None),
        }
    }

    async fn get_sections(&self, ids: &[i64]) -> StoreResult<Vec<Section>> {
        let mut out = Vec::with_capacity(ids.len());
        for d in self.find_by_ids("sections", ids, None).await? {
            out.push(self.section_from(d).await?);
        }
        Ok(out)
    }

    async fn sections_of(&self, work_id: i64) -> StoreResult<Vec<Section>> {
        let docs = collect(
            self.coll("sections").find(doc! {"work_id": work_id}).sort(doc! {"work_id": 1, "ordinal": 1}).await?,
        )
        .await?;
        let mut out = Vec::with_capacity(docs.len());
        for d in docs {
            out.push(self.section_from(d).await?);
        }
        Ok(out)
    }

    async fn count_works(&self) -> StoreResult<u64> {
        Ok(self.coll("works").count_documents(doc! {}).await?)
    }
}

// ---------------------------------------------------------------------------------
// Pages

impl MongoStore {
    async fn page_from(&self, d: Document) -> StoreResult<Page> {
        let id = num(&d, "_id")?;
        let body =
            decompress(&self.get_blob(&d, &format!("pages/{id}/body"), "body").await?, &format!("body of page {id}"))?;
        let text = decompress_text(
            &self.get_blob(&d, &format!("pages/{id}/text"), "text").await?,
            &format!("text of page {id}"),
        )?;
        Ok(Page {
            id,
            url: string(&d, "url")?,
            site: string(&d, "site")?,
            first_fetched_at: time(&d, "first_fetched_at")?,
            last_fetched_at: time(&d, "last_fetched_at")?,
            http_status: opt_num(&d, "http_status")?.map(|s| s as u16),
            charset: opt_string(&d, "charset")?,
            body,
            text,
            content_hash: i2h(num(&d, "content_hash")?),
            source: json_field(&d, "source")?,
        })
    }

    async fn page_doc(&self, id: i64, p: &NewPage, pp: &PreparedPage, fresh: bool) -> StoreResult<Document> {
        let mut d = doc! {
            "url": &pp.url, "site": &pp.site, "content_hash": h2i(pp.content_hash), "source": &pp.source_json,
            "http_status": p.http_status.map_or(Bson::Null, |s| Bson::Int32(s as i32)),
            "charset": p.charset.clone().map_or(Bson::Null, Bson::String),
        };
        d.extend(self.put_blob(&format!("pages/{id}/body"), "body", pp.body_z.clone(), fresh).await?);
        d.extend(self.put_blob(&format!("pages/{id}/text"), "text", pp.text_z.clone(), fresh).await?);
        Ok(d)
    }
}

#[async_trait]
impl PageStore for MongoStore {
    async fn upsert_page(&self, page: &NewPage) -> StoreResult<Upserted> {
        let mut all = self.upsert_pages(std::slice::from_ref(page)).await?;
        all.pop().ok_or_else(|| StoreError::Backend { backend: "mongodb", message: "no result for one page".into() })
    }

    async fn upsert_pages(&self, pages: &[NewPage]) -> StoreResult<Vec<Upserted>> {
        let prepared = prepare_pages(pages)?;
        if prepared.is_empty() {
            return Ok(Vec::new());
        }
        let coll = self.coll("pages");
        let urls: Vec<&str> = prepared.iter().map(|p| p.url.as_str()).collect();
        let existing = collect(
            coll.find(doc! {"url": {"$in": &urls}})
                .projection(doc! {"_id": 1, "url": 1, "content_hash": 1, "http_status": 1, "charset": 1, "first_fetched_at": 1, "last_fetched_at": 1})
                .await?,
        )
        .await?;
        let existing: HashMap<String, Document> =
            existing.into_iter().filter_map(|d| d.get_str("url").ok().map(str::to_owned).map(|u| (u, d))).collect();
        let new_count = prepared.iter().filter(|p| !existing.contains_key(&p.url)).count() as i64;
        let mut next = if new_count > 0 { self.next_ids("pages", new_count).await? } else { 0 };
        let mut results = Vec::with_capacity(pages.len());
        let mut inserts = Vec::new();
        // Per site: (pages added, first seen, last seen, anything moved).
        let mut sites: BTreeMap<&str, (i64, i64, i64, bool)> = BTreeMap::new();
        for (p, pp) in pages.iter().zip(&prepared) {
            let t = p.fetched_at.0;
            let site = sites.entry(pp.site.as_str()).or_insert((0, t, t, false));
            site.1 = site.1.min(t);
            site.2 = site.2.max(t);
            match existing.get(&pp.url) {
                None => {
                    let id = next;
                    next += 1;
                    let mut d = self.page_doc(id, p, pp, true).await?;
                    d.insert("_id", id);
                    d.insert("first_fetched_at", date(p.fetched_at));
                    d.insert("last_fetched_at", date(p.fetched_at));
                    inserts.push(d);
                    site.0 += 1;
                    site.3 = true;
                    results.push(Upserted { id, outcome: Outcome::Inserted });
                }
                Some(old) => {
                    let id = num(old, "_id")?;
                    let (first, last) = (time(old, "first_fetched_at")?.0, time(old, "last_fetched_at")?.0);
                    let same = i2h(num(old, "content_hash")?) == pp.content_hash
                        && opt_num(old, "http_status")? == p.http_status.map(i64::from)
                        && opt_string(old, "charset")? == p.charset;
                    let window = doc! {"first_fetched_at": date(Timestamp(first.min(t))), "last_fetched_at": date(Timestamp(last.max(t)))};
                    if same || t < last {
                        // A re-import of the same fetch writes nothing at all.
                        if t < first || t > last {
                            site.3 = true;
                            coll.update_one(doc! {"_id": id}, doc! {"$set": window}).await?;
                        }
                        results.push(Upserted { id, outcome: Outcome::Unchanged });
                    } else {
                        site.3 = true;
                        let mut set = self.page_doc(id, p, pp, false).await?;
                        set.extend(window);
                        coll.update_one(doc! {"_id": id}, doc! {"$set": set}).await?;
                        results.push(Upserted { id, outcome: Outcome::Updated });
                    }
                }
            }
        }
        if !inserts.is_empty() {
            coll.insert_many(inserts).await.map_err(|e| {
                if is_mongo_duplicate(&e) {
                    StoreError::Duplicate { what: "page url (concurrent insert)", key: e.to_string() }
                } else {
                    e.into()
                }
            })?;
        }
        let site_coll = self.coll("sites");
        for (host, (added, first, last, _)) in sites.into_iter().filter(|(_, s)| s.3) {
            site_coll
                .update_one(
                    doc! {"_id": host},
                    doc! {
                        "$inc": {"page_count": added},
                        "$min": {"first_seen": date(Timestamp(first))},
                        "$max": {"last_seen": date(Timestamp(last))},
                    },
                )
                .upsert(true)
                .await?;
        }
        Ok(results)
    }

    async fn get_page(&self, id: i64) -> StoreResult<Option<Page>> {
        match self.coll("pages").find_one(doc! {"_id": id}).await? {
            Some(d) => Ok(Some(self.page_from(d).await?)),
            None => Ok(None),
        }
    }

    async fn get_pages(&self, ids: &[i64]) -> StoreResult<Vec<Page>> {
        let mut out = Vec::with_capacity(ids.len());
        for d in self.find_by_ids("pages", ids, None).await? {
            out.push(self.page_from(d).await?);
        }
        Ok(out)
    }

    async fn find_page(&self, url: &str) -> StoreResult<Option<Page>> {
        let (url, _) = normalize_url(url)?;
        match self.coll("pages").find_one(doc! {"url": url}).await? {
            Some(d) => Ok(Some(self.page_from(d).await?)),
            None => Ok(None),
        }
    }

    async fn find_pages_by_content_hash(&self, content_hash: u64, limit: u32) -> StoreResult<Vec<PageRef>> {
        self.pages_by_content_hash(content_hash, limit).await
    }

    async fn list_pages(&self, site: Option<&str>, after_id: i64, limit: u32) -> StoreResult<Vec<PageRef>> {
        let limit = check_limit(limit)?;
        let filter = site.map_or_else(Document::new, |s| doc! {"site": s.to_lowercase()});
        let proj = doc! {"_id": 1, "url": 1, "site": 1, "content_hash": 1, "last_fetched_at": 1};
        let docs = self.scan(Target::ids("pages"), filter, after_id, limit, Some(proj)).await?;
        docs.iter().map(page_ref).collect()
    }

    async fn page_ids_fetched_since(&self, since: Timestamp, after_id: i64) -> StoreResult<Vec<i64>> {
        // Covered by the `fetched_id` index: one cursor over the scope, no document
        // read, no sort on the server (sorted here).
        let cursor = self
            .coll("pages")
            .find(doc! {"last_fetched_at": {"$gte": date(since)}, "_id": {"$gt": after_id}})
            .projection(doc! {"_id": 1})
            .await?;
        let mut ids = collect(cursor).await?.iter().map(|d| num(d, "_id")).collect::<StoreResult<Vec<i64>>>()?;
        ids.sort_unstable();
        Ok(ids)
    }

    async fn count_pages(&self) -> StoreResult<u64> {
        Ok(self.coll("pages").count_documents(doc! {}).await?)
    }

    async fn get_site(&self, host: &str) -> StoreResult<Option<Site>> {
        self.coll("sites").find_one(doc! {"_id": host.to_lowercase()}).await?.map(|d| site_from(&d)).transpose()
    }

    async fn list_sites(&self, after_host: &str, limit: u32) -> StoreResult<Vec<Site>> {
        let limit = check_limit(limit)?;
        // Hosts are strings, so there is no bounded id window: the _id index serves the
        // range and the sort; sites are few compared with pages.
        let docs = collect(
            self.coll("sites").find(doc! {"_id": {"$gt": after_host}}).sort(doc! {"_id": 1}).limit(limit).await?,
        )
        .await?;
        docs.iter().map(site_from).collect()
    }

    async fn set_site_notes(&self, host: &str, notes: Option<&str>) -> StoreResult<()> {
        if notes.is_some_and(|n| n.len() > MAX_FIELD_BYTES) {
            return Err(StoreError::invalid("site notes", "too long"));
        }
        let r = self
            .coll("sites")
            .update_one(
                doc! {"_id": host.to_lowercase()},
                doc! {"$set": {"notes": notes.map_or(Bson::Null, |n| Bson::String(n.to_owned()))}},
            )
            .await?;
        if r.matched_count == 0 {
            return Err(StoreError::not_found("site", host));
        }
        Ok(())
    }
}

fn site_from(d: &Document) -> StoreResult<Site> {
    Ok(Site {
        host: string(d, "_id")?,
        page_count: num(d, "page_count")? as u64,
        first_seen: time(d, "first_seen")?,
        last_seen: time(d, "last_seen")?,
        notes: opt_string(d, "notes")?,
    })
}

// ---------------------------------------------------------------------------------
// Fingerprints

fn fp_id(s: Subject) -> String {
    s.to_string()
}

impl MongoStore {
    async fn fp_from(&self, d: Document) -> StoreResult<FingerprintRecord> {
        let subject = Subject { kind: SubjectKind::parse(&string(&d, "kind")?)?, id: num(&d, "subject_id")? };
        let data = self.get_blob(&d, &format!("fingerprints/{subject}"), "data").await?;
        Ok(FingerprintRecord {
            subject,
            params_tag: string(&d, "params_tag")?,
            fingerprints: decode_fingerprints(&data, subject)?,
            updated_at: time(&d, "updated_at")?,
        })
    }
}

#[async_trait]
impl FingerprintStore for MongoStore {
    async fn put_fingerprints_many(&self, items: &[(Subject, Fingerprints)]) -> StoreResult<BatchCounts> {
        validate_fingerprints(items)?;
        let encoded = items
            .iter()
            .map(|(s, fp)| Ok((*s, fp.params_tag.as_str(), encode_fingerprints(fp)?)))
            .collect::<StoreResult<Vec<_>>>()?;
        let coll = self.coll("fingerprints");
        let ids: Vec<String> = items.iter().map(|(s, _)| fp_id(*s)).collect();
        let existing: HashMap<String, i64> = self
            .find_in("fingerprints", &ids, Some(doc! {"_id": 1, "data_hash": 1}))
            .await?
            .iter()
            .filter_map(|d| Some((d.get_str("_id").ok()?.to_owned(), num(d, "data_hash").ok()?)))
            .collect();
        let now = date(Timestamp::now());
        let mut counts = BatchCounts::default();
        let mut inserts = Vec::new();
        for ((s, tag, data), id) in encoded.into_iter().zip(ids) {
            let hash = h2i(zhiwen_core::hash::hash_bytes(&data));
            let old = existing.get(&id);
            if old == Some(&hash) {
                counts.add(Outcome::Unchanged);
                continue;
            }
            let mut d = doc! {"_id": &id, "kind": s.kind.as_str(), "subject_id": s.id, "params_tag": tag, "data_hash": hash, "updated_at": now.clone()};
            d.extend(self.put_blob(&format!("fingerprints/{s}"), "data", data, old.is_none()).await?);
            if old.is_none() {
                inserts.push(d);
                counts.add(Outcome::Inserted);
            } else {
                coll.replace_one(doc! {"_id": &id}, d).await?;
                counts.add(Outcome::Updated);
            }
        }
        if !inserts.is_empty() {
            coll.insert_many(inserts).await?;
        }
        Ok(counts)
    }

    async fn get_fingerprints(&self, subject: Subject) -> StoreResult<Option<FingerprintRecord>> {
        Ok(self.get_fingerprints_many(&[subject]).await?.pop())
    }

    async fn get_fingerprints_many(&self, subjects: &[Subject]) -> StoreResult<Vec<FingerprintRecord>> {
        let ids: Vec<String> = subjects.iter().map(|s| fp_id(*s)).collect();
        let mut out = Vec::with_capacity(ids.len());
        for d in self.find_in("fingerprints", &ids, None).await? {
            out.push(self.fp_from(d).await?);
        }
        Ok(out)
    }

    async fn stale_subjects(
        &self,
        kind: SubjectKind,
        current_tag: &str,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<i64>> {
        let limit = check_limit(limit)?;
        let filter = doc! {"kind": kind.as_str(), "params_tag": {"$ne": current_tag}};
        let docs = self.scan(Target::fingerprints(kind), filter, after_id, limit, Some(doc! {"subject_id": 1})).await?;
        docs.iter().map(|d| num(d, "subject_id")).collect()
    }

    async fn scan_fingerprints(
        &self,
        kind: SubjectKind,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<FingerprintRecord>> {
        let limit = check_limit(limit)?;
        let docs = self.scan(Target::fingerprints(kind), doc! {"kind": kind.as_str()}, after_id, limit, None).await?;
        let mut out = Vec::with_capacity(docs.len());
        for d in docs {
            out.push(self.fp_from(d).await?);
        }
        Ok(out)
    }

    async fn count_fingerprints(&self, kind: SubjectKind, params_tag: Option<&str>) -> StoreResult<u64> {
        let mut filter = doc! {"kind": kind.as_str()};
        if let Some(t) = params_tag {
            filter.insert("params_tag", t);
        }
        Ok(self.coll("fingerprints").count_documents(filter).await?)
    }

    async fn delete_fingerprints(&self, subject: Subject) -> StoreResult<bool> {
        let r = self.coll("fingerprints").delete_one(doc! {"_id": fp_id(subject)}).await?;
        self.coll("blob_chunks").delete_many(doc! {"owner": format!("fingerprints/{subject}")}).await?;
        Ok(r.deleted_count > 0)
    }
}

// ---------------------------------------------------------------------------------
// Matches

fn match_filter(f: &MatchFilter) -> Document {
    let mut d = Document::new();
    if let Some(v) = f.work_id {
        d.insert("work_id", v);
    }
    if let Some(v) = f.section_id {
        d.insert("section_id", v);
    }
    if let Some(v) = &f.site {
        d.insert("site", v.to_lowercase());
    }
    if let Some(v) = &f.kind {
        d.insert("kind", v.clone());
    }
    if let Some(v) = f.status {
        d.insert("status", v.as_str());
    }
    insert_range(&mut d, "score", ("$gte", f.min_score), ("$lte", f.max_score));
    insert_range(&mut d, "last_seen", ("$gte", f.seen_from.map(date)), ("$lt", f.seen_until.map(date)));
    d
}

/// Add `field: {low_op: low, high_op: high}` to a filter, with only the given bounds;
/// nothing when neither is given.
fn insert_range<L: Into<Bson>, H: Into<Bson>>(
    filter: &mut Document,
    field: &str,
    (low_op, low): (&str, Option<L>),
    (high_op, high): (&str, Option<H>),
) {
    let mut range = Document::new();
    if let Some(v) = low {
        range.insert(low_op, v);
    }
    if let Some(v) = high {
        range.insert(high_op, v);
    }
    if !range.is_empty() {
        filter.insert(field, range);
    }
}

impl MongoStore {
    async fn match_from(&self, d: Document) -> StoreResult<Match> {
        let id = num(&d, "_id")?;
        let json =
            decompress(&self.get_blob(&d, &format!("matches/{id}/comparison"), "comparison").await?, "comparison")?;
        let comparison =
            serde_json::from_slice(&json).map_err(|e| StoreError::corrupt(format!("comparison of match {id}"), e))?;
        let status_of =
            |s: String| ReviewStatus::parse(&s).ok_or_else(|| StoreError::corrupt(format!("status of match {id}"), s));
        let mut review_log = Vec::new();
        if let Ok(events) = d.get_array("review_log") {
            for e in events {
                let Bson::Document(e) = e else { return Err(corrupt(&d, "review_log")) };
                review_log.push(ReviewEvent {
                    by: string(e, "by")?,
                    at: time(e, "at")?,
                    from: status_of(string(e, "from")?)?,
                    to: status_of(string(e, "to")?)?,
                    note: opt_string(e, "note")?,
                });
            }
        }
        Ok(Match {
            id,
            section_id: num(&d, "section_id")?,
            work_id: num(&d, "work_id")?,
            page_id: num(&d, "page_id")?,
            site: string(&d, "site")?,
            kind: string(&d, "kind")?,
            score: float(&d, "score")?,
            duplicate: d.get_bool("duplicate").map_err(|_| corrupt(&d, "duplicate"))?,
            comparison,
            first_seen: time(&d, "first_seen")?,
            last_seen: time(&d, "last_seen")?,
            status: status_of(string(&d, "status")?)?,
            review_log,
        })
    }

    async fn count_by(&self, filter: &Document, field: &str) -> StoreResult<Vec<(Bson, u64)>> {
        let pipeline =
            vec![doc! {"$match": filter.clone()}, doc! {"$group": {"_id": format!("${field}"), "n": {"$sum": 1}}}];
        let docs = collect(self.coll("matches").aggregate(pipeline).await?).await?;
        docs.iter().map(|d| Ok((d.get("_id").cloned().unwrap_or(Bson::Null), num(d, "n")? as u64))).collect()
    }
}

#[async_trait]
impl MatchStore for MongoStore {
    async fn upsert_match(&self, m: &NewMatch) -> StoreResult<Upserted> {
        let mut all = self.upsert_matches(std::slice::from_ref(m)).await?;
        all.pop().ok_or_else(|| StoreError::Backend { backend: "mongodb", message: "no result for one match".into() })
    }

    async fn upsert_matches(&self, ms: &[NewMatch]) -> StoreResult<Vec<Upserted>> {
        let validated = validate_matches(ms)?;
        if ms.is_empty() {
            return Ok(Vec::new());
        }
        // Reads first (works of the sections, sites of the pages, the matches already
        // stored), so a missing section or page writes nothing.
        let section_ids: Vec<i64> = ms.iter().map(|m| m.section_id).collect();
        let mut work_of = HashMap::new();
        for d in self.find_by_ids("sections", &section_ids, Some(doc! {"work_id": 1})).await? {
            work_of.insert(num(&d, "_id")?, num(&d, "work_id")?);
        }
        let page_ids: Vec<i64> = ms.iter().map(|m| m.page_id).collect();
        let mut site_of = HashMap::new();
        for d in self.find_by_ids("pages", &page_ids, Some(doc! {"site": 1})).await? {
            site_of.insert(num(&d, "_id")?, string(&d, "site")?);
        }
        let mut existing = HashMap::new();
        let coll = self.coll("matches");
        for chunk in sorted_ids(&page_ids).chunks(BATCH_READ) {
            // Every match of these pages (the `page` index; a page has few).
            let proj =
                doc! {"_id": 1, "section_id": 1, "page_id": 1, "comparison_hash": 1, "first_seen": 1, "last_seen": 1};
            for d in collect(coll.find(doc! {"page_id": {"$in": chunk}}).projection(proj).await?).await? {
                existing.insert((num(&d, "section_id")?, num(&d, "page_id")?), d);
            }
        }
        for m in ms {
            if !work_of.contains_key(&m.section_id) {
                return Err(StoreError::not_found("section", m.section_id));
            }
            if !site_of.contains_key(&m.page_id) {
                return Err(StoreError::not_found("page", m.page_id));
            }
        }
        let new_count = ms.iter().filter(|m| !existing.contains_key(&(m.section_id, m.page_id))).count() as i64;
        let mut next = if new_count > 0 { self.next_ids("matches", new_count).await? } else { 0 };
        let mut out = Vec::with_capacity(ms.len());
        let mut inserts = Vec::new();
        for (m, (json, hash)) in ms.iter().zip(validated) {
            let v = &m.comparison.verdict;
            let t = m.seen_at;
            let mut scores = doc! {
                "kind": &m.kind, "score": v.score, "duplicate": v.duplicate, "comparison_hash": h2i(hash),
                "copied_chars": m.comparison.copied_chars as i64, "coverage": m.comparison.evidence_coverage_a,
            };
            match existing.get(&(m.section_id, m.page_id)) {
                None => {
                    let id = next;
                    next += 1;
                    let blob = compress(json.as_bytes());
                    scores.extend(self.put_blob(&format!("matches/{id}/comparison"), "comparison", blob, true).await?);
                    let work_id = work_of.get(&m.section_id).copied().unwrap_or_default();
                    let site = site_of.get(&m.page_id).cloned().unwrap_or_default();
                    let mut d = doc! {
                        "_id": id, "section_id": m.section_id, "work_id": work_id, "page_id": m.page_id,
                        "site": site, "first_seen": date(t), "first_day": t.day(), "last_seen": date(t),
                        "status": ReviewStatus::New.as_str(), "review_log": [],
                    };
                    d.extend(scores);
                    inserts.push(d);
                    out.push(Upserted { id, outcome: Outcome::Inserted });
                }
                Some(old) => {
                    let id = num(old, "_id")?;
                    let (first, last) = (time(old, "first_seen")?, time(old, "last_seen")?);
                    let first = first.min(t);
                    let mut set =
                        doc! {"first_seen": date(first), "first_day": first.day(), "last_seen": date(last.max(t))};
                    if t >= last {
                        // The kind follows thresholds that may have moved: a run at least as
                        // new sets it even when the scores are unchanged.
                        set.insert("kind", &m.kind);
                    }
                    let outcome = if i2h(num(old, "comparison_hash")?) == hash || t < last {
                        Outcome::Unchanged
                    } else {
                        let blob = compress(json.as_bytes());
                        scores.extend(
                            self.put_blob(&format!("matches/{id}/comparison"), "comparison", blob, false).await?,
                        );
                        set.extend(scores);
                        Outcome::Updated
                    };
                    coll.update_one(doc! {"_id": id}, doc! {"$set": set}).await?;
                    out.push(Upserted { id, outcome });
                }
            }
        }
        if !inserts.is_empty() {
            coll.insert_many(inserts).await.map_err(|e| {
                if is_mongo_duplicate(&e) {
                    StoreError::Duplicate { what: "match (concurrent insert)", key: e.to_string() }
                } else {
                    e.into()
                }
            })?;
        }
        Ok(out)
    }

    async fn get_match(&self, id: i64) -> StoreResult<Option<Match>> {
        match self.coll("matches").find_one(doc! {"_id": id}).await? {
            Some(d) => Ok(Some(self.match_from(d).await?)),
            None => Ok(None),
        }
    }

    async fn find_match(&self, section_id: i64, page_id: i64) -> StoreResult<Option<Match>> {
        match self.coll("matches").find_one(doc! {"section_id": section_id, "page_id": page_id}).await? {
            Some(d) => Ok(Some(self.match_from(d).await?)),
            None => Ok(None),
        }
    }

    async fn set_review(
        &self,
        id: i64,
        to: ReviewStatus,
        by: &str,
        note: Option<&str>,
        at: Timestamp,
    ) -> StoreResult<Outcome> {
        validate_review(by, note)?;
        let coll = self.coll("matches");
        let d = coll
            .find_one(doc! {"_id": id})
            .projection(doc! {"status": 1})
            .await?
            .ok_or_else(|| StoreError::not_found("match", id))?;
        let from = string(&d, "status")?;
        if from == to.as_str() {
            return Ok(Outcome::Unchanged);
        }
        let event = doc! {"by": by, "at": date(at), "from": &from, "to": to.as_str(), "note": note.map_or(Bson::Null, |n| Bson::String(n.to_owned()))};
        // Conditional on the status read: a concurrent reviewer makes this a conflict
        // rather than a lost update.
        let r = coll
            .update_one(
                doc! {"_id": id, "status": &from},
                doc! {"$set": {"status": to.as_str()}, "$push": {"review_log": event}},
            )
            .await?;
        if r.matched_count == 0 {
            return Err(StoreError::Conflict {
                what: format!("match {id}"),
                reason: "its status changed concurrently; retry".into(),
            });
        }
        Ok(Outcome::Updated)
    }

    async fn list_matches(&self, filter: &MatchFilter, after_id: i64, limit: u32) -> StoreResult<Vec<Match>> {
        let limit = check_limit(limit)?;
        let docs = self.scan(Target::ids("matches"), match_filter(filter), after_id, limit, None).await?;
        let mut out = Vec::with_capacity(docs.len());
        for d in docs {
            out.push(self.match_from(d).await?);
        }
        Ok(out)
    }

    async fn match_stats(&self, filter: &MatchFilter) -> StoreResult<MatchStats> {
        let f = match_filter(filter);
        let total = self.coll("matches").count_documents(f.clone()).await?;
        let mut by_status = Vec::new();
        for (k, n) in self.count_by(&f, "status").await? {
            let s = k.as_str().and_then(ReviewStatus::parse).ok_or_else(|| StoreError::corrupt("match status", &k))?;
            by_status.push((s, n));
        }
        by_status.sort();
        let strings = |v: Vec<(Bson, u64)>| -> StoreResult<Vec<(String, u64)>> {
            let mut out = v
                .into_iter()
                .map(|(k, n)| {
                    k.as_str().map(|s| (s.to_owned(), n)).ok_or_else(|| StoreError::corrupt("match group key", &k))
                })
                .collect::<StoreResult<Vec<_>>>()?;
            out.sort();
            Ok(out)
        };
        let mut by_work = Vec::new();
        for (k, n) in self.count_by(&f, "work_id").await? {
            let w = match k {
                Bson::Int64(v) => v,
                Bson::Int32(v) => v as i64,
                other => return Err(StoreError::corrupt("match work id", other)),
            };
            by_work.push((w, n));
        }
        by_work.sort();
        Ok(MatchStats {
            total,
            by_status,
            by_site: strings(self.count_by(&f, "site").await?)?,
            by_work,
            by_day: strings(self.count_by(&f, "first_day").await?)?,
        })
    }
}

// ---------------------------------------------------------------------------------
// Tasks

fn task_from(d: &Document) -> StoreResult<Task> {
    let id = num(d, "_id")?;
    let state = string(d, "state")?;
    let checkpoint = match opt_string(d, "checkpoint")? {
        Some(c) => {
            Some(serde_json::from_str(&c).map_err(|e| StoreError::corrupt(format!("checkpoint of task {id}"), e))?)
        }
        None => None,
    };
    Ok(Task {
        id,
        key: string(d, "key")?,
        kind: string(d, "kind")?,
        params: json_field(d, "params")?,
        state: TaskState::parse(&state).ok_or_else(|| StoreError::corrupt(format!("state of task {id}"), &state))?,
        progress: Progress {
            done: opt_num(d, "done")?.unwrap_or(0) as u64,
            total: opt_num(d, "total")?.unwrap_or(0) as u64,
            failed: opt_num(d, "failed")?.unwrap_or(0) as u64,
        },
        checkpoint,
        worker: opt_string(d, "worker")?,
        error: opt_string(d, "error")?,
        created_at: time(d, "created_at")?,
        started_at: opt_time(d, "started_at")?,
        finished_at: opt_time(d, "finished_at")?,
        updated_at: time(d, "updated_at")?,
    })
}

impl MongoStore {
    async fn transition(&self, id: i64, from: &[TaskState], to: TaskState, error: Option<&str>) -> StoreResult<Task> {
        let now = date(Timestamp::now());
        let mut set = doc! {"state": to.as_str(), "finished_at": now.clone(), "updated_at": now};
        if let Some(e) = error {
            set.insert("error", e);
        }
        let states: Vec<&str> = from.iter().map(|s| s.as_str()).collect();
        let r = self
            .coll("tasks")
            .find_one_and_update(doc! {"_id": id, "state": {"$in": states}}, doc! {"$set": set})
            .return_document(ReturnDocument::After)
            .await?;
        match r {
            Some(d) => task_from(&d),
            None => {
                let t = self.get_task(id).await?.ok_or_else(|| StoreError::not_found("task", id))?;
                Err(StoreError::Conflict {
                    what: format!("task {id} ({})", t.key),
                    reason: format!("cannot go from {} to {}", t.state.as_str(), to.as_str()),
                })
            }
        }
    }
}

#[async_trait]
impl TaskStore for MongoStore {
    async fn create_task(&self, task: &NewTask) -> StoreResult<(Task, Outcome)> {
        let params_json = validate_task(task)?;
        let coll = self.coll("tasks");
        let check = |d: &Document| -> StoreResult<(Task, Outcome)> {
            let t = task_from(d)?;
            if t.kind != task.kind || t.params != task.params {
                return Err(StoreError::Conflict {
                    what: format!("task {}", task.key),
                    reason: "exists with another kind or other parameters".into(),
                });
            }
            Ok((t, Outcome::Unchanged))
        };
        if let Some(d) = coll.find_one(doc! {"key": &task.key}).await? {
            return check(&d);
        }
        let id = self.next_ids("tasks", 1).await?;
        let now = date(Timestamp::now());
        let d = doc! {
            "_id": id, "key": &task.key, "kind": &task.kind, "params": params_json, "state": TaskState::Queued.as_str(),
            "done": 0_i64, "total": 0_i64, "failed": 0_i64, "checkpoint": Bson::Null, "worker": Bson::Null, "error": Bson::Null,
            "created_at": now.clone(), "started_at": Bson::Null, "finished_at": Bson::Null, "updated_at": now,
        };
        match coll.insert_one(d.clone()).await {
            Ok(_) => Ok((task_from(&d)?, Outcome::Inserted)),
            Err(e) if is_mongo_duplicate(&e) => {
                // Lost a race with another creator of the same key.
                let d = coll
                    .find_one(doc! {"key": &task.key})
                    .await?
                    .ok_or_else(|| StoreError::not_found("task", &task.key))?;
                check(&d)
            }
            Err(e) => Err(e.into()),
        }
    }

    async fn claim_task(&self, kind: Option<&str>, worker: &str) -> StoreResult<Option<Task>> {
        let mut filter = doc! {"state": TaskState::Queued.as_str()};
        if let Some(k) = kind {
            filter.insert("kind", k);
        }
        let now = date(Timestamp::now());
        let d = self
            .coll("tasks")
            .find_one_and_update(filter, doc! {"$set": {"state": TaskState::Running.as_str(), "worker": worker, "started_at": now.clone(), "updated_at": now}})
            .sort(doc! {"_id": 1})
            .return_document(ReturnDocument::After)
            .await?;
        d.as_ref().map(task_from).transpose()
    }

    async fn take_over_task(&self, id: i64, from: Option<&str>, worker: &str) -> StoreResult<Option<Task>> {
        // `worker: null` also matches a task whose worker field is missing.
        let from = from.map_or(Bson::Null, |w| Bson::String(w.to_owned()));
        let d = self
            .coll("tasks")
            .find_one_and_update(
                doc! {"_id": id, "state": TaskState::Running.as_str(), "worker": from},
                doc! {"$set": {"worker": worker, "updated_at": date(Timestamp::now())}},
            )
            .return_document(ReturnDocument::After)
            .await?;
        d.as_ref().map(task_from).transpose()
    }

    async fn update_progress(
        &self,
        id: i64,
        progress: Progress,
        checkpoint: Option<&serde_json::Value>,
    ) -> StoreResult<Task> {
        let mut set = doc! {
            "done": progress.done as i64, "total": progress.total as i64, "failed": progress.failed as i64,
            "updated_at": date(Timestamp::now()),
        };
        if let Some(c) = checkpoint {
            set.insert("checkpoint", c.to_string());
        }
        let d = self
            .coll("tasks")
            .find_one_and_update(doc! {"_id": id, "state": TaskState::Running.as_str()}, doc! {"$set": set})
            .return_document(ReturnDocument::After)
            .await?;
        match d {
            Some(d) => task_from(&d),
            None => {
                let t = self.get_task(id).await?.ok_or_else(|| StoreError::not_found("task", id))?;
                Err(StoreError::Conflict {
                    what: format!("task {id}"),
                    reason: format!("is {}, not running", t.state.as_str()),
                })
            }
        }
    }

    async fn finish_task(&self, id: i64) -> StoreResult<Task> {
        self.transition(id, &[TaskState::Running], TaskState::Succeeded, None).await
    }

    async fn fail_task(&self, id: i64, error: &str) -> StoreResult<Task> {
        self.transition(id, &[TaskState::Running], TaskState::Failed, Some(error)).await
    }

    async fn cancel_task(&self, id: i64) -> StoreResult<Task> {
        self.transition(id, &[TaskState::Queued, TaskState::Running], TaskState::Cancelled, None).await
    }

    async fn get_task(&self, id: i64) -> StoreResult<Option<Task>> {
        self.coll("tasks").find_one(doc! {"_id": id}).await?.as_ref().map(task_from).transpose()
    }

    async fn find_task(&self, key: &str) -> StoreResult<Option<Task>> {
        self.coll("tasks").find_one(doc! {"key": key}).await?.as_ref().map(task_from).transpose()
    }

    async fn list_tasks(&self, state: Option<TaskState>, after_id: i64, limit: u32) -> StoreResult<Vec<Task>> {
        let limit = check_limit(limit)?;
        let filter = state.map_or_else(Document::new, |s| doc! {"state": s.as_str()});
        let docs = self.scan(Target::ids("tasks"), filter, after_id, limit, None).await?;
        docs.iter().map(task_from).collect()
    }
}
