//! [`WorkStore`] on MongoDB: works, their compressed text and sections. No
//! transactions: the work document is written first and completed last, so a retry
//! after a failure finishes the write under the same id.

use std::collections::BTreeMap;

use async_trait::async_trait;
use mongodb::bson::{doc, Bson, Document};

use super::fields::{bin, date, num, opt_string, string, time};
use super::ids::Target;
use super::{collect, MongoStore};
use crate::codec::*;
use crate::error::is_mongo_duplicate;
use crate::model::*;
use crate::traits::{StoreResult, WorkStore};
use crate::StoreError;

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
