//! [`PageStore`] on MongoDB: pages keyed by normalised URL, and their sites.

use std::collections::{BTreeMap, HashMap, HashSet};

use async_trait::async_trait;
use mongodb::bson::{doc, Bson, Document};

use super::fields::{date, json_field, num, opt_num, opt_string, string, time};
use super::ids::{Target, BATCH_READ};
use super::{collect, MongoStore};
use crate::codec::*;
use crate::error::is_mongo_duplicate;
use crate::model::*;
use crate::traits::{PageStore, StoreResult};
use crate::StoreError;

/// A page document projected to `_id, url, site, content_hash, last_fetched_at`.
pub(super) fn page_ref(d: &Document) -> StoreResult<PageRef> {
    Ok(PageRef {
        id: num(d, "_id")?,
        url: string(d, "url")?,
        site: string(d, "site")?,
        content_hash: i2h(num(d, "content_hash")?),
        last_fetched_at: time(d, "last_fetched_at")?,
    })
}

impl MongoStore {
    async fn page_from(&self, d: Document) -> StoreResult<Page> {
        self.page_parts_from(d, PageParts::All).await
    }

    async fn page_parts_from(&self, d: Document, parts: PageParts) -> StoreResult<Page> {
        let id = num(&d, "_id")?;
        let body = if parts.reads_body() {
            decompress(&self.get_blob(&d, &format!("pages/{id}/body"), "body").await?, &format!("body of page {id}"))?
        } else {
            Vec::new()
        };
        let text = if parts.reads_text(body.is_empty()) {
            decompress_text(
                &self.get_blob(&d, &format!("pages/{id}/text"), "text").await?,
                &format!("text of page {id}"),
            )?
        } else {
            String::new()
        };
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
            format: stored_format(opt_string(&d, "format")?.as_deref(), || format!("format of page {id}"))?,
            canon_tag: opt_string(&d, "canon_tag")?,
            source: json_field(&d, "source")?,
        })
    }

    async fn page_doc(&self, id: i64, p: &NewPage, pp: &PreparedPage, fresh: bool) -> StoreResult<Document> {
        let mut d = doc! {
            "url": &pp.url, "site": &pp.site, "content_hash": h2i(pp.content_hash), "source": &pp.source_json,
            "http_status": p.http_status.map_or(Bson::Null, |s| Bson::Int32(s as i32)),
            "charset": p.charset.clone().map_or(Bson::Null, Bson::String),
            "format": p.format.map_or(Bson::Null, |f| Bson::String(f.as_str().to_owned())),
            "canon_tag": p.canon_tag.clone().map_or(Bson::Null, Bson::String),
        };
        d.extend(self.put_blob(&format!("pages/{id}/body"), "body", pp.body_z.clone(), fresh).await?);
        d.extend(self.put_blob(&format!("pages/{id}/text"), "text", pp.text_z.clone(), fresh).await?);
        Ok(d)
    }
}

#[async_trait]
impl PageStore for MongoStore {
    async fn upsert_pages(&self, pages: &[NewPage]) -> StoreResult<Vec<Upserted>> {
        let prepared = prepare_pages(pages)?;
        if prepared.is_empty() {
            return Ok(Vec::new());
        }
        let coll = self.coll("pages");
        let urls: Vec<&str> = prepared.iter().map(|p| p.url.as_str()).collect();
        let existing = collect(
            coll.find(doc! {"url": {"$in": &urls}})
                .projection(doc! {"_id": 1, "url": 1, "content_hash": 1, "http_status": 1, "charset": 1, "first_fetched_at": 1, "last_fetched_at": 1, "canon_tag": 1})
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
                        let mut set = Document::new();
                        if t < first || t > last {
                            site.3 = true;
                            set.extend(window);
                        }
                        if same && retag(opt_string(old, "canon_tag")?.as_deref(), p.canon_tag.as_deref()) {
                            set.insert("canon_tag", p.canon_tag.clone());
                        }
                        if !set.is_empty() {
                            coll.update_one(doc! {"_id": id}, doc! {"$set": set}).await?;
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

    async fn get_pages(&self, ids: &[i64], parts: PageParts) -> StoreResult<Vec<Page>> {
        let mut out = Vec::with_capacity(ids.len());
        // A body not read is not sent either.
        let projection = (!parts.reads_body()).then(|| doc! {"body_z": 0});
        for d in self.find_by_ids("pages", ids, projection).await? {
            out.push(self.page_parts_from(d, parts).await?);
        }
        Ok(out)
    }

    async fn tag_pages(&self, pages: &[(i64, u64)], canon_tag: &str) -> StoreResult<u64> {
        check_canon_tag(canon_tag)?;
        let coll = self.coll("pages");
        let mut tagged = 0;
        // One update a chunk of pages, each page with its own content hash: one round trip
        // (on a sharded cluster one broadcast, pages being sharded by URL) instead of one a page.
        for chunk in pages.chunks(BATCH_READ) {
            let each: Vec<Document> =
                chunk.iter().map(|&(id, hash)| doc! {"_id": id, "content_hash": h2i(hash)}).collect();
            let r = coll
                .update_many(
                    doc! {"$or": each, "canon_tag": {"$ne": canon_tag}},
                    doc! {"$set": {"canon_tag": canon_tag}},
                )
                .await?;
            tagged += r.modified_count;
        }
        Ok(tagged)
    }

    async fn find_page(&self, url: &str) -> StoreResult<Option<Page>> {
        let (url, _) = normalize_url(url)?;
        match self.coll("pages").find_one(doc! {"url": url}).await? {
            Some(d) => Ok(Some(self.page_from(d).await?)),
            None => Ok(None),
        }
    }

    async fn stored_urls(&self, urls: &[String]) -> StoreResult<HashSet<String>> {
        let urls = normalized_urls(urls)?;
        let coll = self.coll("pages");
        let mut stored = HashSet::new();
        // Covered by the unique `url` index; in bounded `$in` lists (see BATCH_READ).
        for chunk in urls.chunks(BATCH_READ) {
            let docs =
                collect(coll.find(doc! {"url": {"$in": chunk}}).projection(doc! {"_id": 0, "url": 1}).await?).await?;
            stored.extend(docs.iter().filter_map(|d| d.get_str("url").ok().map(str::to_owned)));
        }
        Ok(stored)
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

    async fn max_page_id(&self) -> StoreResult<i64> {
        let last = self.coll("pages").find_one(doc! {}).sort(doc! {"_id": -1}).projection(doc! {"_id": 1}).await?;
        last.map_or(Ok(0), |d| num(&d, "_id"))
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
