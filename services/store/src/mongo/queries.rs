//! [`QueryStore`] on MongoDB: the admin API's filtered, sorted and grouped reads of
//! matches, match details, work and page searches, and the deletion of a work with
//! everything that depends on it. No transactions: deletions remove dependants first
//! and the work last, so a retry after a failure completes the deletion.

use std::collections::{HashMap, HashSet};

use async_trait::async_trait;
use mongodb::bson::{doc, Bson, Document};

use super::fields::{date, float, insert_range, num, string, time};
use super::ids::Target;
use super::matches::ListFields;
use super::pages::page_ref;
use super::{collect, MongoStore};
use crate::admin::*;
use crate::codec::*;
use crate::model::*;
use crate::traits::{MatchStore, PageStore, StoreResult, WorkStore};
use crate::StoreError;

fn sort_field(key: MatchSortKey) -> &'static str {
    match key {
        MatchSortKey::Id => "_id",
        MatchSortKey::Score => "score",
        MatchSortKey::FirstSeen => "first_seen",
        MatchSortKey::LastSeen => "last_seen",
    }
}

fn sort_bson(key: MatchSortKey, v: f64) -> Bson {
    match key {
        MatchSortKey::Id => Bson::Int64(v as i64),
        MatchSortKey::Score => Bson::Double(v),
        MatchSortKey::FirstSeen | MatchSortKey::LastSeen => date(Timestamp(v as i64)),
    }
}

impl MongoStore {
    async fn owner_work_ids(&self, owner: &str) -> StoreResult<Vec<i64>> {
        let docs = collect(self.coll("works").find(doc! {"owner": owner}).projection(doc! {"_id": 1}).await?).await?;
        docs.iter().map(|d| num(d, "_id")).collect()
    }

    /// The filter document of `q` (the owner resolved to its work ids): the one
    /// translation of the query, for the pipeline's listing and the dashboard's alike.
    pub(super) async fn query_filter(&self, q: &MatchQuery) -> StoreResult<Document> {
        let mut clauses: Vec<Document> = Vec::new();
        if let Some(o) = &q.owner {
            clauses.push(doc! {"work_id": {"$in": self.owner_work_ids(o).await?}});
        }
        if let Some(v) = q.work_id {
            clauses.push(doc! {"work_id": v});
        }
        if let Some(v) = q.section_id {
            clauses.push(doc! {"section_id": v});
        }
        if let Some(v) = q.page_id {
            clauses.push(doc! {"page_id": v});
        }
        if let Some(v) = &q.site {
            clauses.push(doc! {"site": v.to_lowercase()});
        }
        if let Some(v) = &q.kind {
            clauses.push(doc! {"kind": v});
        }
        if let Some(v) = q.status {
            clauses.push(doc! {"status": v.as_str()});
        }
        if !q.not_status.is_empty() {
            let names: Vec<&str> = q.not_status.iter().map(|s| s.as_str()).collect();
            clauses.push(doc! {"status": {"$nin": names}});
        }
        if let Some(v) = q.min_score {
            clauses.push(doc! {"score": {"$gte": v}});
        }
        if let Some(v) = q.max_score {
            clauses.push(doc! {"score": {"$lte": v}});
        }
        if let Some(v) = q.last_seen_from {
            clauses.push(doc! {"last_seen": {"$gte": date(v)}});
        }
        if let Some(v) = q.last_seen_until {
            clauses.push(doc! {"last_seen": {"$lt": date(v)}});
        }
        if let Some(v) = q.first_seen_from {
            clauses.push(doc! {"first_seen": {"$gte": date(v)}});
        }
        if let Some(v) = q.first_seen_until {
            clauses.push(doc! {"first_seen": {"$lt": date(v)}});
        }
        Ok(match clauses.len() {
            0 => Document::new(),
            1 => clauses.remove(0),
            _ => doc! {"$and": clauses},
        })
    }

    /// `_id -> document` of `coll` for `ids`, with `projection`.
    async fn by_ids(
        &self,
        coll: &str,
        ids: &HashSet<i64>,
        projection: Document,
    ) -> StoreResult<HashMap<i64, Document>> {
        let ids: Vec<i64> = ids.iter().copied().collect();
        let docs = self.find_in(coll, &ids, Some(projection)).await?;
        docs.into_iter().map(|d| Ok((num(&d, "_id")?, d))).collect()
    }
}

impl MongoStore {
    /// The listing of [`QueryStore::query_matches`]: one read of the matches, then one of
    /// their works, sections and pages each; with each match's comparison (its JSON)
    /// when `with_comparison`.
    async fn listing(
        &self,
        q: &MatchQuery,
        sort: MatchSort,
        after: Option<MatchCursor>,
        limit: u32,
        with_comparison: bool,
    ) -> StoreResult<Vec<(MatchRow, Option<Vec<u8>>)>> {
        let limit = check_limit(limit)?;
        let mut filter = self.query_filter(q).await?;
        let field = sort_field(sort.key);
        let (op, dir) = if sort.descending { ("$lt", -1) } else { ("$gt", 1) };
        if let Some(c) = after {
            let v = sort_bson(sort.key, c.value);
            let keyset = if sort.key == MatchSortKey::Id {
                doc! {"_id": {op: c.id}}
            } else {
                doc! {"$or": [{field: {op: v.clone()}}, {field: v, "_id": {op: c.id}}]}
            };
            filter = if filter.is_empty() {
                keyset
            } else {
                doc! {"$and": [filter, keyset]}
            };
        }
        let sort_doc = if sort.key == MatchSortKey::Id {
            doc! {"_id": dir}
        } else {
            doc! {field: dir, "_id": dir}
        };
        // Without the comparison unless asked for: its two listed fields are stored beside
        // it (migration 7).
        let coll = self.coll("matches");
        let mut find = coll.find(filter).sort(sort_doc).limit(limit);
        if !with_comparison {
            find = find.projection(doc! {"comparison_z": 0});
        }
        let docs = collect(find.await?).await?;
        let work_ids: HashSet<i64> = docs.iter().map(|d| num(d, "work_id")).collect::<StoreResult<_>>()?;
        let section_ids: HashSet<i64> = docs.iter().map(|d| num(d, "section_id")).collect::<StoreResult<_>>()?;
        let page_ids: HashSet<i64> = docs.iter().map(|d| num(d, "page_id")).collect::<StoreResult<_>>()?;
        let works = self.by_ids("works", &work_ids, doc! {"owner": 1, "external_id": 1, "title": 1}).await?;
        let sections = self.by_ids("sections", &section_ids, doc! {"ordinal": 1, "title": 1}).await?;
        let pages = self.by_ids("pages", &page_ids, doc! {"url": 1}).await?;
        let mut out = Vec::with_capacity(docs.len());
        for d in docs {
            let id = num(&d, "_id")?;
            let (work_id, section_id, page_id) = (num(&d, "work_id")?, num(&d, "section_id")?, num(&d, "page_id")?);
            let missing = |what: &str| StoreError::corrupt(format!("match {id}"), format!("{what} missing"));
            let w = works.get(&work_id).ok_or_else(|| missing("work"))?;
            let s = sections.get(&section_id).ok_or_else(|| missing("section"))?;
            let p = pages.get(&page_id).ok_or_else(|| missing("page"))?;
            let cov = match ListFields::stored(&d) {
                Some(f) => f,
                // Written by an older binary while the migration ran: read its comparison.
                None => match self.coll("matches").find_one(doc! {"_id": id}).await? {
                    Some(full) => self.list_fields_of(&full).await?,
                    None => continue,
                },
            };
            let comparison = if with_comparison {
                let blob = self.get_blob(&d, &format!("matches/{id}/comparison"), "comparison").await?;
                Some(decompress(&blob, "comparison")?)
            } else {
                None
            };
            out.push((
                MatchRow {
                    id,
                    work_id,
                    owner: string(w, "owner")?,
                    work_external_id: string(w, "external_id")?,
                    work_title: string(w, "title")?,
                    section_id,
                    section_ordinal: num(s, "ordinal")? as u32,
                    section_title: string(s, "title")?,
                    page_id,
                    url: string(p, "url")?,
                    site: string(&d, "site")?,
                    kind: string(&d, "kind")?,
                    score: float(&d, "score")?,
                    duplicate: d.get_bool("duplicate").unwrap_or(false),
                    copied_chars: cov.copied_chars,
                    coverage: cov.evidence_coverage_a,
                    first_seen: time(&d, "first_seen")?,
                    last_seen: time(&d, "last_seen")?,
                    status: status_of(id, string(&d, "status")?)?,
                },
                comparison,
            ));
        }
        Ok(out)
    }
}

fn status_of(id: i64, s: String) -> StoreResult<ReviewStatus> {
    ReviewStatus::parse(&s).ok_or_else(|| StoreError::corrupt(format!("status of match {id}"), s))
}

#[async_trait]
impl QueryStore for MongoStore {
    async fn list_match_rows(
        &self,
        q: &MatchQuery,
        sort: MatchSort,
        after: Option<MatchCursor>,
        limit: u32,
        evidence: bool,
    ) -> StoreResult<Vec<MatchRowWithEvidence>> {
        MatchRowWithEvidence::from_listing(self.listing(q, sort, after, limit, evidence).await?)
    }

    async fn group_matches(&self, q: &MatchQuery, by: MatchGroup) -> StoreResult<Vec<(String, u64)>> {
        let filter = self.query_filter(q).await?;
        let field = match by {
            MatchGroup::Work => "work_id",
            MatchGroup::Section => "section_id",
            MatchGroup::Site => "site",
            MatchGroup::Status => "status",
            MatchGroup::FirstDay => "first_day",
            MatchGroup::Kind => "kind",
        };
        let mut out = self
            .count_by(&filter, field)
            .await?
            .into_iter()
            .map(|(k, n)| {
                let key = match k {
                    Bson::String(s) => s,
                    Bson::Int64(v) => v.to_string(),
                    Bson::Int32(v) => v.to_string(),
                    other => return Err(StoreError::corrupt("match group key", other)),
                };
                Ok((key, n))
            })
            .collect::<StoreResult<Vec<_>>>()?;
        out.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Ok(out)
    }

    async fn count_matches(&self, q: &MatchQuery) -> StoreResult<u64> {
        let filter = self.query_filter(q).await?;
        Ok(self.coll("matches").count_documents(filter).await?)
    }

    async fn work_summary(&self, id: i64) -> StoreResult<Option<WorkSummary>> {
        let proj =
            doc! {"_id": 1, "owner": 1, "external_id": 1, "title": 1, "author": 1, "section_count": 1, "updated_at": 1};
        let Some(d) = self.coll("works").find_one(doc! {"_id": id}).projection(proj).await? else { return Ok(None) };
        Ok(Some(WorkSummary {
            id: num(&d, "_id")?,
            owner: string(&d, "owner")?,
            external_id: string(&d, "external_id")?,
            title: string(&d, "title")?,
            author: string(&d, "author")?,
            section_count: num(&d, "section_count")? as u32,
            updated_at: time(&d, "updated_at")?,
        }))
    }

    async fn match_detail(&self, id: i64) -> StoreResult<Option<MatchDetail>> {
        // No joins on the subset of MongoDB both servers speak: the match first, then its
        // work, section and page at the same time (two round trips' latency, not four).
        let Some(record) = self.get_match(id).await? else { return Ok(None) };
        let (work, section, page) = futures::try_join!(
            self.work_summary(record.work_id),
            self.get_section(record.section_id),
            self.get_page(record.page_id)
        )?;
        let Some(work) = work else { return Ok(None) };
        let (section_ordinal, section_title, section_text) =
            section.map(|s| (s.ordinal, s.title, s.text)).unwrap_or_default();
        let (url, page_body, page_charset, page_format, page_text) =
            page.map(|p| (p.url, p.body, p.charset, p.format, p.text)).unwrap_or_default();
        Ok(Some(MatchDetail {
            record,
            work,
            section_ordinal,
            section_title,
            section_text,
            url,
            page_body,
            page_charset,
            page_format,
            page_text,
        }))
    }

    async fn search_works(
        &self,
        owner: Option<&str>,
        text: Option<&str>,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<WorkSummary>> {
        let limit = check_limit(limit)? as usize;
        let mut filter = doc! {"_id": {"$gt": after_id}};
        if let Some(o) = owner {
            filter.insert("owner", o);
        }
        let proj =
            doc! {"_id": 1, "owner": 1, "external_id": 1, "title": 1, "author": 1, "section_count": 1, "updated_at": 1};
        let text = text.filter(|t| !t.is_empty());
        // Titles are short and works number in the thousands: filter the projected
        // documents here instead of relying on server-side regular expressions.
        let docs = collect(self.coll("works").find(filter).projection(proj).sort(doc! {"_id": 1}).await?).await?;
        let mut out = Vec::new();
        for d in &docs {
            let w = WorkSummary {
                id: num(d, "_id")?,
                owner: string(d, "owner")?,
                external_id: string(d, "external_id")?,
                title: string(d, "title")?,
                author: string(d, "author")?,
                section_count: num(d, "section_count")? as u32,
                updated_at: time(d, "updated_at")?,
            };
            if text.is_none_or(|t| w.title.contains(t) || w.author.contains(t) || w.external_id.contains(t)) {
                out.push(w);
                if out.len() == limit {
                    break;
                }
            }
        }
        Ok(out)
    }

    async fn delete_work(&self, id: i64) -> StoreResult<Option<WorkDeleted>> {
        if self.coll("works").find_one(doc! {"_id": id}).projection(doc! {"_id": 1}).await?.is_none() {
            return Ok(None);
        }
        let sections =
            collect(self.coll("sections").find(doc! {"work_id": id}).projection(doc! {"_id": 1}).await?).await?;
        let mut section_ids = sections.iter().map(|d| num(d, "_id")).collect::<StoreResult<Vec<_>>>()?;
        section_ids.sort_unstable();
        let matches =
            collect(self.coll("matches").find(doc! {"work_id": id}).projection(doc! {"_id": 1}).await?).await?;
        let match_ids = matches.iter().map(|d| num(d, "_id")).collect::<StoreResult<Vec<_>>>()?;
        let mut owners: Vec<String> = match_ids.iter().map(|m| format!("matches/{m}/comparison")).collect();
        owners.extend(section_ids.iter().map(|s| format!("sections/{s}/text")));
        owners.extend(section_ids.iter().map(|s| format!("fingerprints/section:{s}/data")));
        owners.extend(section_ids.iter().map(|s| format!("fingerprints/section:{s}")));
        owners.push(format!("works/{id}/text"));
        let fp_ids: Vec<String> = section_ids.iter().map(|s| Subject::section(*s).to_string()).collect();
        // The mark first: a deletion that stops half way leaves nothing to trust.
        self.coll("indexed_works").delete_one(doc! {"_id": id}).await?;
        self.coll("fingerprints").delete_many(doc! {"_id": {"$in": fp_ids}}).await?;
        let removed = self.coll("matches").delete_many(doc! {"work_id": id}).await?.deleted_count;
        self.coll("sections").delete_many(doc! {"work_id": id}).await?;
        self.coll("blob_chunks").delete_many(doc! {"owner": {"$in": owners}}).await?;
        self.coll("works").delete_one(doc! {"_id": id}).await?;
        Ok(Some(WorkDeleted { section_ids, matches: removed.max(match_ids.len() as u64) }))
    }

    async fn search_pages(&self, q: &PageQuery, after_id: i64, limit: u32) -> StoreResult<Vec<PageRef>> {
        let limit = check_limit(limit)?;
        let mut filter = Document::new();
        if let Some(u) = &q.url {
            filter.insert("url", normalize_url(u)?.0);
        }
        if let Some(s) = &q.site {
            filter.insert("site", s.to_lowercase());
        }
        insert_range(
            &mut filter,
            "last_fetched_at",
            ("$gte", q.fetched_from.map(date)),
            ("$lt", q.fetched_until.map(date)),
        );
        let proj = doc! {"_id": 1, "url": 1, "site": 1, "content_hash": 1, "last_fetched_at": 1};
        let docs = if let Some(o) = &q.owner {
            let works = self.owner_work_ids(o).await?;
            let pm = collect(
                self.coll("matches").find(doc! {"work_id": {"$in": works}}).projection(doc! {"page_id": 1}).await?,
            )
            .await?;
            let mut ids = pm.iter().map(|d| num(d, "page_id")).collect::<StoreResult<Vec<_>>>()?;
            ids.retain(|i| *i > after_id);
            ids.sort_unstable();
            ids.dedup();
            filter.insert("_id", doc! {"$in": ids});
            collect(self.coll("pages").find(filter).projection(proj).sort(doc! {"_id": 1}).limit(limit).await?).await?
        } else {
            self.scan(Target::ids("pages"), filter, after_id, limit, Some(proj)).await?
        };
        docs.iter().map(page_ref).collect()
    }
}
