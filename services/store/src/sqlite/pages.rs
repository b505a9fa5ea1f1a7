//! [`PageStore`] on the embedded store: pages keyed by normalised URL, and their sites.

use std::collections::HashSet;

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension, Row, Transaction};

use super::{ts, SqliteStore};
use crate::codec::*;
use crate::model::*;
use crate::traits::{PageStore, StoreResult};
use crate::StoreError;

/// A row of `SELECT id, url, site, content_hash, last_fetched_at FROM pages`.
pub(super) fn page_ref(r: &Row) -> rusqlite::Result<PageRef> {
    Ok(PageRef {
        id: r.get(0)?,
        url: r.get(1)?,
        site: r.get(2)?,
        content_hash: i2h(r.get(3)?),
        last_fetched_at: ts(r, 4)?,
    })
}

fn upsert_page_tx(tx: &Transaction, p: &NewPage, pp: &PreparedPage) -> StoreResult<Upserted> {
    type Existing = (i64, i64, Option<u16>, Option<String>, i64, i64, Option<String>);
    let existing: Option<Existing> = tx
        .prepare_cached("SELECT id, content_hash, http_status, charset, first_fetched_at, last_fetched_at, canon_tag FROM pages WHERE url = ?1")?
        .query_row(params![pp.url], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?, r.get(6)?)))
        .optional()?;
    let t = p.fetched_at.0;
    let format = p.format.map(PageFormat::as_str);
    tx.prepare_cached(
        "INSERT INTO sites (host, page_count, first_seen, last_seen) VALUES (?1, 0, ?2, ?2)
         ON CONFLICT (host) DO UPDATE SET first_seen = MIN(first_seen, excluded.first_seen), last_seen = MAX(last_seen, excluded.last_seen)",
    )?
    .execute(params![pp.site, t])?;
    match existing {
        None => {
            tx.prepare_cached(
                "INSERT INTO pages (url, site, first_fetched_at, last_fetched_at, http_status, charset, body_z, text_z, content_hash, source, format, canon_tag)
                 VALUES (?1, ?2, ?3, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?
            .execute(params![pp.url, pp.site, t, p.http_status, p.charset, pp.body_z, pp.text_z, h2i(pp.content_hash), pp.source_json, format, p.canon_tag])?;
            let id = tx.last_insert_rowid();
            tx.prepare_cached("UPDATE sites SET page_count = page_count + 1 WHERE host = ?1")?
                .execute(params![pp.site])?;
            Ok(Upserted { id, outcome: Outcome::Inserted })
        }
        Some((id, hash, status, charset, first, last, tag)) => {
            // An older fetch arriving late only widens the first/last window.
            let newest = t >= last;
            let same = i2h(hash) == pp.content_hash && status == p.http_status && charset == p.charset;
            if same || !newest {
                // A re-import of the same fetch writes nothing at all.
                if t < first || t > last {
                    tx.prepare_cached("UPDATE pages SET first_fetched_at = ?2, last_fetched_at = ?3 WHERE id = ?1")?
                        .execute(params![id, first.min(t), last.max(t)])?;
                }
                if same && retag(tag.as_deref(), p.canon_tag.as_deref()) {
                    tx.prepare_cached("UPDATE pages SET canon_tag = ?2 WHERE id = ?1")?
                        .execute(params![id, p.canon_tag])?;
                }
                return Ok(Upserted { id, outcome: Outcome::Unchanged });
            }
            tx.prepare_cached(
                "UPDATE pages SET first_fetched_at = ?2, last_fetched_at = ?3, http_status = ?4, charset = ?5, body_z = ?6, text_z = ?7, content_hash = ?8, source = ?9, format = ?10, canon_tag = ?11 WHERE id = ?1",
            )?
            .execute(params![id, first.min(t), t, p.http_status, p.charset, pp.body_z, pp.text_z, h2i(pp.content_hash), pp.source_json, format, p.canon_tag])?;
            Ok(Upserted { id, outcome: Outcome::Updated })
        }
    }
}

const PAGE_COLS: &str =
    "id, url, site, first_fetched_at, last_fetched_at, http_status, charset, body_z, text_z, content_hash, source, format, canon_tag";
/// [`PAGE_COLS`] with an empty blob in place of the body.
const PAGE_COLS_TEXT: &str =
    "id, url, site, first_fetched_at, last_fetched_at, http_status, charset, x'', text_z, content_hash, source, format, canon_tag";

fn page_row(r: &Row) -> rusqlite::Result<PageRow> {
    Ok((
        r.get(0)?,
        r.get(1)?,
        r.get(2)?,
        r.get(3)?,
        r.get(4)?,
        r.get(5)?,
        r.get(6)?,
        r.get(7)?,
        r.get(8)?,
        r.get(9)?,
        r.get(10)?,
        r.get(11)?,
        r.get(12)?,
    ))
}

type PageRow = (
    i64,
    String,
    String,
    i64,
    i64,
    Option<u16>,
    Option<String>,
    Vec<u8>,
    Vec<u8>,
    i64,
    String,
    Option<String>,
    Option<String>,
);

fn finish_page(row: PageRow) -> StoreResult<Page> {
    finish_page_parts(row, PageParts::All)
}

fn finish_page_parts(row: PageRow, parts: PageParts) -> StoreResult<Page> {
    let (id, url, site, first, last, http_status, charset, body_z, text_z, hash, source, format, canon_tag) = row;
    let body = if parts.reads_body() { decompress(&body_z, &format!("body of page {id}"))? } else { Vec::new() };
    let text = if parts.reads_text(body.is_empty()) {
        decompress_text(&text_z, &format!("text of page {id}"))?
    } else {
        String::new()
    };
    Ok(Page {
        id,
        body,
        text,
        source: serde_json::from_str(&source).map_err(|e| StoreError::corrupt(format!("source of page {id}"), e))?,
        url,
        site,
        first_fetched_at: Timestamp(first),
        last_fetched_at: Timestamp(last),
        http_status,
        charset,
        content_hash: i2h(hash),
        format: stored_format(format.as_deref(), || format!("format of page {id}"))?,
        canon_tag,
    })
}

fn site_row(r: &Row) -> rusqlite::Result<Site> {
    Ok(Site {
        host: r.get(0)?,
        page_count: r.get::<_, i64>(1)? as u64,
        first_seen: ts(r, 2)?,
        last_seen: ts(r, 3)?,
        notes: r.get(4)?,
    })
}

#[async_trait]
impl PageStore for SqliteStore {
    async fn upsert_pages(&self, pages: &[NewPage]) -> StoreResult<Vec<Upserted>> {
        let prepared = prepare_pages(pages)?;
        let pages = pages.to_vec();
        self.run(move |conn| {
            let tx = conn.transaction()?;
            let out = pages
                .iter()
                .zip(&prepared)
                .map(|(p, pp)| upsert_page_tx(&tx, p, pp))
                .collect::<StoreResult<Vec<_>>>()?;
            tx.commit()?;
            Ok(out)
        })
        .await
    }

    async fn tag_pages(&self, pages: &[(i64, u64)], canon_tag: &str) -> StoreResult<u64> {
        check_canon_tag(canon_tag)?;
        if pages.is_empty() {
            return Ok(0);
        }
        let (pages, tag) = (pages.to_vec(), canon_tag.to_owned());
        self.run(move |conn| {
            let tx = conn.transaction()?;
            let mut tagged = 0;
            {
                let mut update = tx.prepare_cached(
                    "UPDATE pages SET canon_tag = ?3 WHERE id = ?1 AND content_hash = ?2 AND canon_tag IS NOT ?3",
                )?;
                for (id, hash) in &pages {
                    tagged += update.execute(params![id, h2i(*hash), tag])? as u64;
                }
            }
            tx.commit()?;
            Ok(tagged)
        })
        .await
    }

    async fn get_page(&self, id: i64) -> StoreResult<Option<Page>> {
        self.read(move |c| {
            let row = c
                .prepare_cached(&format!("SELECT {PAGE_COLS} FROM pages WHERE id = ?1"))?
                .query_row(params![id], page_row)
                .optional()?;
            row.map(finish_page).transpose()
        })
        .await
    }

    async fn get_pages(&self, ids: &[i64], parts: PageParts) -> StoreResult<Vec<Page>> {
        // Without the body, its blob is not even copied out of the database.
        let cols = if parts.reads_body() { PAGE_COLS } else { PAGE_COLS_TEXT };
        let finish = move |row| finish_page_parts(row, parts);
        self.read_each(ids, format!("SELECT {cols} FROM pages WHERE id = ?1"), page_row, finish).await
    }

    async fn find_page(&self, url: &str) -> StoreResult<Option<Page>> {
        let (url, _) = normalize_url(url)?;
        self.read(move |c| {
            let row = c
                .prepare_cached(&format!("SELECT {PAGE_COLS} FROM pages WHERE url = ?1"))?
                .query_row(params![url], page_row)
                .optional()?;
            row.map(finish_page).transpose()
        })
        .await
    }

    async fn stored_urls(&self, urls: &[String]) -> StoreResult<HashSet<String>> {
        let urls = normalized_urls(urls)?;
        self.read(move |c| {
            // One indexed probe per URL on the reader's connection: no page is read.
            let mut stmt = c.prepare_cached("SELECT 1 FROM pages WHERE url = ?1")?;
            let mut stored = HashSet::new();
            for url in urls {
                if stmt.exists(params![url])? {
                    stored.insert(url);
                }
            }
            Ok(stored)
        })
        .await
    }

    async fn find_pages_by_content_hash(&self, content_hash: u64, limit: u32) -> StoreResult<Vec<PageRef>> {
        self.pages_by_content_hash(content_hash, limit).await
    }

    async fn list_pages(&self, site: Option<&str>, after_id: i64, limit: u32) -> StoreResult<Vec<PageRef>> {
        let limit = check_limit(limit)?;
        let site = site.map(str::to_lowercase);
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, url, site, content_hash, last_fetched_at FROM pages WHERE id > ?1 AND (?2 IS NULL OR site = ?2) ORDER BY id LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![after_id, site, limit], page_ref)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    async fn page_ids_fetched_since(&self, since: Timestamp, after_id: i64) -> StoreResult<Vec<i64>> {
        self.read(move |c| {
            // Named: asked for id order, SQLite walks the whole table by rowid instead
            // of the day's range of the index (covering: no row is read). Sorted here.
            let mut stmt = c.prepare_cached(
                "SELECT id FROM pages INDEXED BY pages_fetched WHERE last_fetched_at >= ?1 AND id > ?2",
            )?;
            let rows = stmt.query_map(params![since.0, after_id], |r| r.get::<_, i64>(0))?;
            let mut ids = rows.collect::<Result<Vec<_>, _>>()?;
            ids.sort_unstable();
            Ok(ids)
        })
        .await
    }

    async fn count_pages(&self) -> StoreResult<u64> {
        self.read(|c| Ok(c.query_row("SELECT COUNT(*) FROM pages", [], |r| r.get::<_, i64>(0))? as u64)).await
    }

    async fn max_page_id(&self) -> StoreResult<i64> {
        self.read(|c| Ok(c.query_row("SELECT COALESCE(MAX(id), 0) FROM pages", [], |r| r.get::<_, i64>(0))?)).await
    }

    async fn get_site(&self, host: &str) -> StoreResult<Option<Site>> {
        let host = host.to_lowercase();
        self.read(move |c| {
            Ok(c.query_row(
                "SELECT host, page_count, first_seen, last_seen, notes FROM sites WHERE host = ?1",
                params![host],
                site_row,
            )
            .optional()?)
        })
        .await
    }

    async fn list_sites(&self, after_host: &str, limit: u32) -> StoreResult<Vec<Site>> {
        let limit = check_limit(limit)?;
        let after = after_host.to_owned();
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT host, page_count, first_seen, last_seen, notes FROM sites WHERE host > ?1 ORDER BY host LIMIT ?2",
            )?;
            let rows = stmt.query_map(params![after, limit], site_row)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    async fn set_site_notes(&self, host: &str, notes: Option<&str>) -> StoreResult<()> {
        let host = host.to_lowercase();
        let notes = notes.map(str::to_owned);
        if let Some(n) = &notes {
            if n.len() > MAX_FIELD_BYTES {
                return Err(StoreError::invalid("site notes", "too long"));
            }
        }
        self.run(move |c| {
            let n = c.execute("UPDATE sites SET notes = ?2 WHERE host = ?1", params![host, notes])?;
            if n == 0 {
                return Err(StoreError::not_found("site", host));
            }
            Ok(())
        })
        .await
    }
}
