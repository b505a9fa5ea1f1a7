//! [`FingerprintStore`] on MongoDB: one document per subject (`_id` `kind:id`), the
//! fingerprints in their binary form, large ones in chunks.

use std::collections::HashMap;

use async_trait::async_trait;
use mongodb::bson::spec::BinarySubtype;
use mongodb::bson::{doc, Binary, Document};
use zhiwen_core::Fingerprints;

use super::fields::{date, num, string, time};
use super::ids::Target;
use super::{collect, MongoStore};
use crate::codec::*;
use crate::model::*;
use crate::traits::{FingerprintStore, StoreResult};

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
            .map(|(s, fp)| Ok((*s, fp.params_tag.as_str(), encode_fingerprints(fp)?, encode_winnowed(*s, fp))))
            .collect::<StoreResult<Vec<_>>>()?;
        let coll = self.coll("fingerprints");
        let ids: Vec<String> = items.iter().map(|(s, _)| fp_id(*s)).collect();
        // The stored data's hash, and whether the document has its compact winnowed keys
        // (documents written before migration 14 have none).
        let existing: HashMap<String, (i64, bool)> = self
            .find_in("fingerprints", &ids, Some(doc! {"_id": 1, "data_hash": 1, "winnowed_n": 1}))
            .await?
            .iter()
            .filter_map(|d| {
                Some((d.get_str("_id").ok()?.to_owned(), (num(d, "data_hash").ok()?, d.contains_key("winnowed_n"))))
            })
            .collect();
        let now = date(Timestamp::now());
        let mut counts = BatchCounts::default();
        let mut inserts = Vec::new();
        for ((s, tag, data, keys), id) in encoded.into_iter().zip(ids) {
            let hash = h2i(zhiwen_core::hash::hash_bytes(&data));
            let (old, has_keys) = existing.get(&id).map_or((None, false), |(h, has)| (Some(h), *has));
            let winnowed = keys.map(|k| {
                let n = (k.len() / 4) as i64;
                doc! {"winnowed": Binary { subtype: BinarySubtype::Generic, bytes: k }, "winnowed_n": n}
            });
            if old == Some(&hash) {
                if let Some(w) = winnowed.filter(|_| !has_keys) {
                    coll.update_one(doc! {"_id": &id, "data_hash": hash}, doc! {"$set": w}).await?;
                }
                counts.add(Outcome::Unchanged);
                continue;
            }
            let mut d = doc! {"_id": &id, "kind": s.kind.as_str(), "subject_id": s.id, "params_tag": tag, "data_hash": hash, "updated_at": now.clone()};
            d.extend(winnowed.unwrap_or_default());
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
            match coll.insert_many(inserts).ordered(false).await {
                Ok(_) => {}
                // Another writer inserted some of these subjects between the read above and
                // this insert (two workers indexing the same new works): the fingerprints of
                // the same text, so theirs stand for ours; the rest were inserted.
                Err(e) => {
                    let Some(taken) = crate::error::mongo_duplicates_only(&e) else { return Err(e.into()) };
                    tracing::debug!(taken, "fingerprints inserted meanwhile by another writer");
                    counts.inserted -= taken as u64;
                    counts.unchanged += taken as u64;
                }
            }
        }
        Ok(counts)
    }

    async fn get_fingerprints_many(&self, subjects: &[Subject]) -> StoreResult<Vec<FingerprintRecord>> {
        let ids: Vec<String> = subjects.iter().map(|s| fp_id(*s)).collect();
        let mut out = Vec::with_capacity(ids.len());
        for d in self.find_in("fingerprints", &ids, None).await? {
            out.push(self.fp_from(d).await?);
        }
        Ok(out)
    }

    async fn get_winnowed_many(&self, subjects: &[Subject]) -> StoreResult<Vec<WinnowedKeys>> {
        let ids: Vec<String> = subjects.iter().filter(|s| s.kind == SubjectKind::Section).map(|s| fp_id(*s)).collect();
        if ids.is_empty() {
            return Ok(Vec::new());
        }
        let proj = doc! {"kind": 1, "subject_id": 1, "params_tag": 1, "winnowed": 1};
        let mut out = Vec::with_capacity(ids.len());
        for d in self.find_in("fingerprints", &ids, Some(proj)).await? {
            let Ok(keys) = d.get_binary_generic("winnowed") else { continue };
            let subject = Subject { kind: SubjectKind::parse(&string(&d, "kind")?)?, id: num(&d, "subject_id")? };
            out.push(decode_winnowed(keys, subject, string(&d, "params_tag")?)?);
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

    async fn indexed_works(&self, params_tag: &str) -> StoreResult<Vec<(i64, i64)>> {
        let docs = collect(
            self.coll("indexed_works")
                .find(doc! {"params_tag": params_tag})
                .projection(doc! {"_id": 1, "version": 1})
                .await?,
        )
        .await?;
        docs.iter().map(|d| Ok((num(d, "_id")?, num(d, "version")?))).collect()
    }

    async fn mark_work_indexed(&self, work_id: i64, version: i64, params_tag: &str) -> StoreResult<()> {
        self.coll("indexed_works")
            .update_one(doc! {"_id": work_id}, doc! {"$set": {"version": version, "params_tag": params_tag}})
            .upsert(true)
            .await?;
        Ok(())
    }

    async fn unmark_work_indexed(&self, work_id: i64) -> StoreResult<()> {
        self.coll("indexed_works").delete_one(doc! {"_id": work_id}).await?;
        Ok(())
    }
}
