//! [`MatchStore`] on MongoDB: matches keyed by `(section, page)`, the review trail inside
//! each match document, the comparison compressed beside the two fields a listing shows.

use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use mongodb::bson::{doc, Bson, Document};
use serde::Deserialize;

use super::fields::{corrupt, date, float, num, opt_string, string, time};
use super::ids::{Target, BATCH_READ};
use super::{collect, MongoStore};
use crate::codec::*;
use crate::error::is_mongo_duplicate;
use crate::model::*;
use crate::traits::{MatchStore, StoreResult};
use crate::StoreError;

impl MongoStore {
    pub(super) async fn match_from(&self, d: Document) -> StoreResult<Match> {
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

    pub(super) async fn count_by(&self, filter: &Document, field: &str) -> StoreResult<Vec<(Bson, u64)>> {
        let pipeline =
            vec![doc! {"$match": filter.clone()}, doc! {"$group": {"_id": format!("${field}"), "n": {"$sum": 1}}}];
        let docs = collect(self.coll("matches").aggregate(pipeline).await?).await?;
        docs.iter().map(|d| Ok((d.get("_id").cloned().unwrap_or(Bson::Null), num(d, "n")? as u64))).collect()
    }
}

/// The comparison fields a listing shows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Deserialize)]
pub(super) struct ListFields {
    #[serde(default)]
    pub(super) copied_chars: u64,
    #[serde(default)]
    pub(super) evidence_coverage_a: f64,
}

impl ListFields {
    /// The fields stored in `d`, if it has them.
    pub(super) fn stored(d: &Document) -> Option<Self> {
        let copied_chars = num(d, "copied_chars").ok()?;
        let evidence_coverage_a = float(d, "coverage").ok()?;
        Some(ListFields { copied_chars: copied_chars.max(0) as u64, evidence_coverage_a })
    }
}

impl MongoStore {
    /// One pass of [`MatchStore::upsert_matches`]: reads, then updates and inserts.
    async fn upsert_matches_once(&self, ms: &[NewMatch]) -> StoreResult<Vec<Upserted>> {
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
                    StoreError::Duplicate { what: CONCURRENT_MATCH_INSERT, key: e.to_string() }
                } else {
                    e.into()
                }
            })?;
        }
        Ok(out)
    }

    /// The listing fields of the match document `d` (with its comparison) read from its
    /// comparison.
    pub(super) async fn list_fields_of(&self, d: &Document) -> StoreResult<ListFields> {
        let id = num(d, "_id")?;
        let json =
            decompress(&self.get_blob(d, &format!("matches/{id}/comparison"), "comparison").await?, "comparison")?;
        serde_json::from_slice(&json).map_err(|e| StoreError::corrupt(format!("comparison of match {id}"), e))
    }
}

/// What a lost race to insert a match says (the unique `section_page` index refused it).
const CONCURRENT_MATCH_INSERT: &str = "match (concurrent insert)";

#[async_trait]
impl MatchStore for MongoStore {
    async fn upsert_matches(&self, ms: &[NewMatch]) -> StoreResult<Vec<Upserted>> {
        // Two workers can record the same (section, page) at the same moment: the one
        // whose insert loses to the unique index reads again and updates what the other
        // inserted (the write is idempotent), instead of failing its task.
        let mut attempt = 0;
        loop {
            match self.upsert_matches_once(ms).await {
                Err(StoreError::Duplicate { what: CONCURRENT_MATCH_INSERT, .. }) if attempt < 3 => {
                    attempt += 1;
                    tracing::debug!(attempt, "a concurrent writer inserted one of these matches first: reading again");
                }
                other => return other,
            }
        }
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
        // The update below is conditional on `from`: a match licensed since it was read
        // makes it a conflict, not a reviewer's change of a licensed match.
        check_licensed_rule(id, &from, to, by)?;
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

    async fn list_matches(&self, q: &MatchQuery, after_id: i64, limit: u32) -> StoreResult<Vec<Match>> {
        let limit = check_limit(limit)?;
        let docs = self.scan(Target::ids("matches"), self.query_filter(q).await?, after_id, limit, None).await?;
        let mut out = Vec::with_capacity(docs.len());
        for d in docs {
            out.push(self.match_from(d).await?);
        }
        Ok(out)
    }

    async fn matched_pages(&self, page_ids: &[i64]) -> StoreResult<HashSet<i64>> {
        let coll = self.coll("matches");
        let mut found = HashSet::new();
        // Covered by the `page` index; in bounded `$in` lists (see BATCH_READ).
        for chunk in sorted_ids(page_ids).chunks(BATCH_READ) {
            let proj = doc! {"_id": 0, "page_id": 1};
            for d in collect(coll.find(doc! {"page_id": {"$in": chunk}}).projection(proj).await?).await? {
                found.insert(num(&d, "page_id")?);
            }
        }
        Ok(found)
    }
}
