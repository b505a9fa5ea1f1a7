//! The embedded backend: one SQLite file (bundled, WAL, foreign keys on), driven on
//! tokio's blocking pool. Writes go through one mutex-guarded writer connection; reads
//! go through a small pool of read-only connections ([`ReadPool`]), which WAL lets run
//! beside the writer and each other. Every multi-row write is one transaction, so a
//! failure leaves nothing half-written; a write has committed before its call returns,
//! so any read started afterwards, on any connection, sees it.

use std::path::Path;
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension, Row, Transaction};
use zhiwen_core::Fingerprints;

use crate::codec::*;
use crate::migrations::{MigrationReport, EMBEDDED, LATEST};
use crate::model::*;
use crate::traits::*;
use crate::StoreError;

mod content_hash;
mod pool;
mod queries;

use pool::ReadPool;

const DB_FILE: &str = "zhiwen.db";

/// The embedded store.
pub(crate) struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
    /// `None` when configured with no readers: reads share the writer connection.
    readers: Option<ReadPool>,
}

impl SqliteStore {
    pub(crate) async fn open(data_dir: &Path) -> StoreResult<Self> {
        let dir = data_dir.to_path_buf();
        let conn = tokio::task::spawn_blocking(move || -> StoreResult<Connection> {
            std::fs::create_dir_all(&dir)
                .map_err(|e| StoreError::Config(format!("cannot create data directory {}: {e}", dir.display())))?;
            let path = dir.join(DB_FILE);
            let conn = Connection::open(&path)
                .map_err(|e| StoreError::Config(format!("cannot open {}: {e}", path.display())))?;
            conn.busy_timeout(std::time::Duration::from_secs(10))?;
            conn.pragma_update(None, "journal_mode", "WAL")?;
            conn.pragma_update(None, "synchronous", "NORMAL")?;
            conn.pragma_update(None, "foreign_keys", "ON")?;
            Ok(conn)
        })
        .await??;
        // Readers open after the writer has switched the file to WAL.
        let readers = match pool::configured_size()? {
            0 => None,
            n => Some(ReadPool::open(&data_dir.join(DB_FILE), n).await?),
        };
        Ok(SqliteStore { conn: Arc::new(Mutex::new(conn)), readers })
    }

    /// Run a read-only job on a pooled reader connection.
    async fn read<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        match &self.readers {
            Some(pool) => pool.run(f).await,
            None => self.run(move |c| f(c)).await,
        }
    }

    /// The records of several ids in one read, ascending by id, each once, ids without
    /// a row left out: `sql` reads one row by `?1`, `row` maps it, `finish` decodes it.
    /// One prepared point read per id on one connection: as fast as an `IN` list here,
    /// and no statement grows with the batch.
    async fn read_each<R, T>(
        &self,
        ids: &[i64],
        sql: String,
        row: fn(&Row) -> rusqlite::Result<R>,
        finish: fn(R) -> StoreResult<T>,
    ) -> StoreResult<Vec<T>>
    where
        R: 'static,
        T: Send + 'static,
    {
        let ids = sorted_ids(ids);
        self.read(move |c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let mut out = Vec::with_capacity(ids.len());
            for id in ids {
                if let Some(r) = stmt.query_row(params![id], row).optional()? {
                    out.push(finish(r)?);
                }
            }
            Ok(out)
        })
        .await
    }

    async fn run<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&mut Connection) -> StoreResult<T> + Send + 'static,
    {
        let conn = self.conn.clone();
        tokio::task::spawn_blocking(move || {
            // A panic inside a previous job poisons the mutex; the connection itself is
            // still consistent (transactions roll back on drop), so keep using it.
            let mut guard = conn.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut guard)
        })
        .await?
    }

    pub(crate) async fn migrate(&self) -> StoreResult<MigrationReport> {
        self.run(|conn| {
            conn.execute_batch(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
            )?;
            let current: u32 =
                conn.query_row("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", [], |r| r.get(0))?;
            if current > LATEST {
                return Err(StoreError::SchemaTooNew { backend: "embedded", database: current, binary: LATEST });
            }
            let mut applied = Vec::new();
            for m in EMBEDDED.iter().filter(|m| m.version > current) {
                let tx = conn.transaction()?;
                tx.execute_batch(m.sql)?;
                tx.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)",
                    params![m.version, m.name, Timestamp::now().0],
                )?;
                tx.commit()?;
                applied.push(format!("{:04}_{}", m.version, m.name));
            }
            Ok(MigrationReport { backend: "embedded".into(), from_version: current, to_version: current.max(LATEST), applied })
        })
        .await
    }
}

/// A row of `SELECT id, owner, external_id, title, author, section_count, updated_at FROM works`.
fn work_summary(r: &Row) -> rusqlite::Result<WorkSummary> {
    work_summary_at(r, 0)
}

/// The same seven columns starting at column `at` (a joined query).
fn work_summary_at(r: &Row, at: usize) -> rusqlite::Result<WorkSummary> {
    Ok(WorkSummary {
        id: r.get(at)?,
        owner: r.get(at + 1)?,
        external_id: r.get(at + 2)?,
        title: r.get(at + 3)?,
        author: r.get(at + 4)?,
        section_count: r.get(at + 5)?,
        updated_at: ts(r, at + 6)?,
    })
}

/// A row of `SELECT id, url, site, content_hash, last_fetched_at FROM pages`.
fn page_ref(r: &Row) -> rusqlite::Result<PageRef> {
    Ok(PageRef {
        id: r.get(0)?,
        url: r.get(1)?,
        site: r.get(2)?,
        content_hash: i2h(r.get(3)?),
        last_fetched_at: ts(r, 4)?,
    })
}

fn ts(r: &Row, i: usize) -> rusqlite::Result<Timestamp> {
    Ok(Timestamp(r.get(i)?))
}

fn opt_ts(r: &Row, i: usize) -> rusqlite::Result<Option<Timestamp>> {
    Ok(r.get::<_, Option<i64>>(i)?.map(Timestamp))
}

// ---------------------------------------------------------------------------------
// Works

fn upsert_work_tx(tx: &Transaction, w: &NewWork, now: Timestamp) -> StoreResult<WorkUpserted> {
    let hash = work_hash(w);
    let existing: Option<(i64, i64)> = tx
        .query_row(
            "SELECT id, content_hash FROM works WHERE owner = ?1 AND external_id = ?2",
            params![w.owner, w.external_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let (id, outcome) = match existing {
        Some((id, h)) if i2h(h) == hash => (id, Outcome::Unchanged),
        Some((id, _)) => {
            tx.execute(
                "UPDATE works SET title = ?2, author = ?3, source_file = ?4, charset = ?5, text_z = ?6, section_count = ?7, content_hash = ?8, updated_at = MAX(?9, updated_at + 1) WHERE id = ?1",
                params![id, w.title, w.author, w.source_file, w.charset, compress(w.text.as_bytes()), w.sections.len() as i64, h2i(hash), now.0],
            )?;
            (id, Outcome::Updated)
        }
        None => {
            tx.execute(
                "INSERT INTO works (owner, external_id, title, author, source_file, charset, text_z, section_count, content_hash, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)",
                params![w.owner, w.external_id, w.title, w.author, w.source_file, w.charset, compress(w.text.as_bytes()), w.sections.len() as i64, h2i(hash), now.0],
            )?;
            (tx.last_insert_rowid(), Outcome::Inserted)
        }
    };
    if outcome != Outcome::Unchanged {
        let mut stmt = tx.prepare_cached(
            "INSERT INTO sections (work_id, ordinal, title, text_z, char_start, char_end) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (work_id, ordinal) DO UPDATE SET title = excluded.title, text_z = excluded.text_z, char_start = excluded.char_start, char_end = excluded.char_end",
        )?;
        for s in &w.sections {
            stmt.execute(params![
                id,
                s.ordinal,
                s.title,
                compress(s.text.as_bytes()),
                s.char_start as i64,
                s.char_end as i64
            ])?;
        }
        let ordinals: Vec<String> = w.sections.iter().map(|s| s.ordinal.to_string()).collect();
        tx.execute(
            &format!("DELETE FROM sections WHERE work_id = ?1 AND ordinal NOT IN ({})", ordinals.join(",")),
            params![id],
        )?;
    }
    let mut stmt = tx.prepare_cached("SELECT ordinal, id FROM sections WHERE work_id = ?1 ORDER BY ordinal")?;
    let sections =
        stmt.query_map(params![id], |r| Ok((r.get::<_, u32>(0)?, r.get(1)?)))?.collect::<Result<Vec<_>, _>>()?;
    Ok(WorkUpserted { id, outcome, sections })
}

const WORK_COLS: &str = "id, owner, external_id, title, author, source_file, charset, text_z, section_count, content_hash, created_at, updated_at";

fn work_row(r: &Row) -> rusqlite::Result<(Work, Vec<u8>)> {
    Ok((
        Work {
            id: r.get(0)?,
            owner: r.get(1)?,
            external_id: r.get(2)?,
            title: r.get(3)?,
            author: r.get(4)?,
            source_file: r.get(5)?,
            charset: r.get(6)?,
            text: String::new(),
            section_count: r.get(8)?,
            content_hash: i2h(r.get(9)?),
            created_at: ts(r, 10)?,
            updated_at: ts(r, 11)?,
        },
        r.get(7)?,
    ))
}

fn finish_work(row: Option<(Work, Vec<u8>)>) -> StoreResult<Option<Work>> {
    row.map(|(mut w, z)| {
        w.text = decompress_text(&z, &format!("text of work {}", w.id))?;
        Ok(w)
    })
    .transpose()
}

fn section_row(r: &Row) -> rusqlite::Result<(Section, Vec<u8>)> {
    Ok((
        Section {
            id: r.get(0)?,
            work_id: r.get(1)?,
            ordinal: r.get(2)?,
            title: r.get(3)?,
            text: String::new(),
            char_start: r.get::<_, i64>(5)? as u64,
            char_end: r.get::<_, i64>(6)? as u64,
        },
        r.get(4)?,
    ))
}

fn finish_section((mut s, z): (Section, Vec<u8>)) -> StoreResult<Section> {
    s.text = decompress_text(&z, &format!("text of section {}", s.id))?;
    Ok(s)
}

#[async_trait]
impl WorkStore for SqliteStore {
    async fn upsert_work(&self, work: &NewWork) -> StoreResult<WorkUpserted> {
        let mut all = self.upsert_works(std::slice::from_ref(work)).await?;
        all.pop().ok_or_else(|| StoreError::Backend { backend: "sqlite", message: "no result for one work".into() })
    }

    async fn upsert_works(&self, works: &[NewWork]) -> StoreResult<Vec<WorkUpserted>> {
        validate_works(works)?;
        let works = works.to_vec();
        self.run(move |conn| {
            let tx = conn.transaction()?;
            let now = Timestamp::now();
            let out = works.iter().map(|w| upsert_work_tx(&tx, w, now)).collect::<StoreResult<Vec<_>>>()?;
            tx.commit()?;
            Ok(out)
        })
        .await
    }

    async fn get_work(&self, id: i64) -> StoreResult<Option<Work>> {
        self.read(move |c| {
            let row = c
                .query_row(&format!("SELECT {WORK_COLS} FROM works WHERE id = ?1"), params![id], work_row)
                .optional()?;
            finish_work(row)
        })
        .await
    }

    async fn find_work(&self, owner: &str, external_id: &str) -> StoreResult<Option<Work>> {
        let (o, e) = (owner.to_owned(), external_id.to_owned());
        self.read(move |c| {
            let row = c
                .query_row(
                    &format!("SELECT {WORK_COLS} FROM works WHERE owner = ?1 AND external_id = ?2"),
                    params![o, e],
                    work_row,
                )
                .optional()?;
            finish_work(row)
        })
        .await
    }

    async fn list_works(&self, owner: Option<&str>, after_id: i64, limit: u32) -> StoreResult<Vec<WorkSummary>> {
        let limit = check_limit(limit)?;
        let owner = owner.map(str::to_owned);
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, owner, external_id, title, author, section_count, updated_at FROM works WHERE id > ?1 AND (?2 IS NULL OR owner = ?2) ORDER BY id LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![after_id, owner, limit], work_summary)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    async fn work_versions(&self) -> StoreResult<Vec<(i64, Timestamp)>> {
        self.read(move |c| {
            let mut stmt = c.prepare_cached("SELECT id, updated_at FROM works ORDER BY id")?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, ts(r, 1)?)))?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    async fn get_section(&self, id: i64) -> StoreResult<Option<Section>> {
        self.read(move |c| {
            let row = c
                .query_row(
                    "SELECT id, work_id, ordinal, title, text_z, char_start, char_end FROM sections WHERE id = ?1",
                    params![id],
                    section_row,
                )
                .optional()?;
            row.map(finish_section).transpose()
        })
        .await
    }

    async fn get_sections(&self, ids: &[i64]) -> StoreResult<Vec<Section>> {
        let sql = "SELECT id, work_id, ordinal, title, text_z, char_start, char_end FROM sections WHERE id = ?1";
        self.read_each(ids, sql.to_owned(), section_row, finish_section).await
    }

    async fn sections_of(&self, work_id: i64) -> StoreResult<Vec<Section>> {
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, work_id, ordinal, title, text_z, char_start, char_end FROM sections WHERE work_id = ?1 ORDER BY ordinal",
            )?;
            let rows = stmt.query_map(params![work_id], section_row)?.collect::<Result<Vec<_>, _>>()?;
            rows.into_iter().map(finish_section).collect()
        })
        .await
    }

    async fn count_works(&self) -> StoreResult<u64> {
        self.read(|c| Ok(c.query_row("SELECT COUNT(*) FROM works", [], |r| r.get::<_, i64>(0))? as u64)).await
    }
}

// ---------------------------------------------------------------------------------
// Pages

fn upsert_page_tx(tx: &Transaction, p: &NewPage, pp: &PreparedPage) -> StoreResult<Upserted> {
    type Existing = (i64, i64, Option<u16>, Option<String>, i64, i64);
    let existing: Option<Existing> = tx
        .prepare_cached("SELECT id, content_hash, http_status, charset, first_fetched_at, last_fetched_at FROM pages WHERE url = ?1")?
        .query_row(params![pp.url], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?, r.get(5)?)))
        .optional()?;
    let t = p.fetched_at.0;
    tx.prepare_cached(
        "INSERT INTO sites (host, page_count, first_seen, last_seen) VALUES (?1, 0, ?2, ?2)
         ON CONFLICT (host) DO UPDATE SET first_seen = MIN(first_seen, excluded.first_seen), last_seen = MAX(last_seen, excluded.last_seen)",
    )?
    .execute(params![pp.site, t])?;
    match existing {
        None => {
            tx.prepare_cached(
                "INSERT INTO pages (url, site, first_fetched_at, last_fetched_at, http_status, charset, body_z, text_z, content_hash, source)
                 VALUES (?1, ?2, ?3, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
            )?
            .execute(params![pp.url, pp.site, t, p.http_status, p.charset, pp.body_z, pp.text_z, h2i(pp.content_hash), pp.source_json])?;
            let id = tx.last_insert_rowid();
            tx.prepare_cached("UPDATE sites SET page_count = page_count + 1 WHERE host = ?1")?
                .execute(params![pp.site])?;
            Ok(Upserted { id, outcome: Outcome::Inserted })
        }
        Some((id, hash, status, charset, first, last)) => {
            // An older fetch arriving late only widens the first/last window.
            let newest = t >= last;
            let same = i2h(hash) == pp.content_hash && status == p.http_status && charset == p.charset;
            if same || !newest {
                // A re-import of the same fetch writes nothing at all.
                if t < first || t > last {
                    tx.prepare_cached("UPDATE pages SET first_fetched_at = ?2, last_fetched_at = ?3 WHERE id = ?1")?
                        .execute(params![id, first.min(t), last.max(t)])?;
                }
                return Ok(Upserted { id, outcome: Outcome::Unchanged });
            }
            tx.prepare_cached(
                "UPDATE pages SET first_fetched_at = ?2, last_fetched_at = ?3, http_status = ?4, charset = ?5, body_z = ?6, text_z = ?7, content_hash = ?8, source = ?9 WHERE id = ?1",
            )?
            .execute(params![id, first.min(t), t, p.http_status, p.charset, pp.body_z, pp.text_z, h2i(pp.content_hash), pp.source_json])?;
            Ok(Upserted { id, outcome: Outcome::Updated })
        }
    }
}

const PAGE_COLS: &str =
    "id, url, site, first_fetched_at, last_fetched_at, http_status, charset, body_z, text_z, content_hash, source";

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
    ))
}

type PageRow = (i64, String, String, i64, i64, Option<u16>, Option<String>, Vec<u8>, Vec<u8>, i64, String);

fn finish_page(row: PageRow) -> StoreResult<Page> {
    let (id, url, site, first, last, http_status, charset, body_z, text_z, hash, source) = row;
    Ok(Page {
        id,
        body: decompress(&body_z, &format!("body of page {id}"))?,
        text: decompress_text(&text_z, &format!("text of page {id}"))?,
        source: serde_json::from_str(&source).map_err(|e| StoreError::corrupt(format!("source of page {id}"), e))?,
        url,
        site,
        first_fetched_at: Timestamp(first),
        last_fetched_at: Timestamp(last),
        http_status,
        charset,
        content_hash: i2h(hash),
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
    async fn upsert_page(&self, page: &NewPage) -> StoreResult<Upserted> {
        let mut all = self.upsert_pages(std::slice::from_ref(page)).await?;
        all.pop().ok_or_else(|| StoreError::Backend { backend: "sqlite", message: "no result for one page".into() })
    }

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

    async fn get_pages(&self, ids: &[i64]) -> StoreResult<Vec<Page>> {
        self.read_each(ids, format!("SELECT {PAGE_COLS} FROM pages WHERE id = ?1"), page_row, finish_page).await
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

// ---------------------------------------------------------------------------------
// Fingerprints

fn fp_row(r: &Row) -> rusqlite::Result<(String, i64, String, Vec<u8>, i64)> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
}

fn finish_fp((kind, id, tag, data, at): (String, i64, String, Vec<u8>, i64)) -> StoreResult<FingerprintRecord> {
    let subject = Subject { kind: SubjectKind::parse(&kind)?, id };
    Ok(FingerprintRecord {
        subject,
        params_tag: tag,
        fingerprints: decode_fingerprints(&data, subject)?,
        updated_at: Timestamp(at),
    })
}

#[async_trait]
impl FingerprintStore for SqliteStore {
    async fn put_fingerprints_many(&self, items: &[(Subject, Fingerprints)]) -> StoreResult<BatchCounts> {
        validate_fingerprints(items)?;
        let encoded = items
            .iter()
            .map(|(s, fp)| Ok((*s, fp.params_tag.clone(), encode_fingerprints(fp)?)))
            .collect::<StoreResult<Vec<_>>>()?;
        self.run(move |conn| {
            let tx = conn.transaction()?;
            let now = Timestamp::now().0;
            let mut counts = BatchCounts::default();
            {
                let mut get = tx.prepare_cached("SELECT data FROM fingerprints WHERE kind = ?1 AND subject_id = ?2")?;
                let mut put = tx.prepare_cached(
                    "INSERT INTO fingerprints (kind, subject_id, params_tag, data, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT (kind, subject_id) DO UPDATE SET params_tag = excluded.params_tag, data = excluded.data, updated_at = excluded.updated_at",
                )?;
                for (s, tag, data) in &encoded {
                    let old: Option<Vec<u8>> = get.query_row(params![s.kind.as_str(), s.id], |r| r.get(0)).optional()?;
                    let outcome = match old {
                        None => Outcome::Inserted,
                        Some(o) if &o == data => Outcome::Unchanged,
                        Some(_) => Outcome::Updated,
                    };
                    if outcome != Outcome::Unchanged {
                        put.execute(params![s.kind.as_str(), s.id, tag, data, now])?;
                    }
                    counts.add(outcome);
                }
            }
            tx.commit()?;
            Ok(counts)
        })
        .await
    }

    async fn get_fingerprints(&self, subject: Subject) -> StoreResult<Option<FingerprintRecord>> {
        Ok(self.get_fingerprints_many(&[subject]).await?.pop())
    }

    async fn get_fingerprints_many(&self, subjects: &[Subject]) -> StoreResult<Vec<FingerprintRecord>> {
        let subjects = subjects.to_vec();
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT kind, subject_id, params_tag, data, updated_at FROM fingerprints WHERE kind = ?1 AND subject_id = ?2",
            )?;
            let mut out = Vec::with_capacity(subjects.len());
            for subject in subjects {
                if let Some(row) = stmt.query_row(params![subject.kind.as_str(), subject.id], fp_row).optional()? {
                    out.push(finish_fp(row)?);
                }
            }
            Ok(out)
        })
        .await
    }

    async fn stale_subjects(
        &self,
        kind: SubjectKind,
        current_tag: &str,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<i64>> {
        let limit = check_limit(limit)?;
        let tag = current_tag.to_owned();
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT subject_id FROM fingerprints WHERE kind = ?1 AND subject_id > ?2 AND params_tag <> ?3 ORDER BY subject_id LIMIT ?4",
            )?;
            let rows = stmt.query_map(params![kind.as_str(), after_id, tag, limit], |r| r.get(0))?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    async fn scan_fingerprints(
        &self,
        kind: SubjectKind,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<FingerprintRecord>> {
        let limit = check_limit(limit)?;
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT kind, subject_id, params_tag, data, updated_at FROM fingerprints WHERE kind = ?1 AND subject_id > ?2 ORDER BY subject_id LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![kind.as_str(), after_id, limit], fp_row)?.collect::<Result<Vec<_>, _>>()?;
            rows.into_iter().map(finish_fp).collect()
        })
        .await
    }

    async fn count_fingerprints(&self, kind: SubjectKind, params_tag: Option<&str>) -> StoreResult<u64> {
        let tag = params_tag.map(str::to_owned);
        self.read(move |c| {
            Ok(c.query_row(
                "SELECT COUNT(*) FROM fingerprints WHERE kind = ?1 AND (?2 IS NULL OR params_tag = ?2)",
                params![kind.as_str(), tag],
                |r| r.get::<_, i64>(0),
            )? as u64)
        })
        .await
    }

    async fn delete_fingerprints(&self, subject: Subject) -> StoreResult<bool> {
        self.run(move |c| {
            Ok(c.execute(
                "DELETE FROM fingerprints WHERE kind = ?1 AND subject_id = ?2",
                params![subject.kind.as_str(), subject.id],
            )? > 0)
        })
        .await
    }
}

// ---------------------------------------------------------------------------------
// Matches

const MATCH_COLS: &str =
    "id, section_id, work_id, page_id, site, kind, score, duplicate, comparison, first_seen, last_seen, status";

struct MatchRow {
    id: i64,
    section_id: i64,
    work_id: i64,
    page_id: i64,
    site: String,
    kind: String,
    score: f64,
    duplicate: bool,
    /// The comparison's JSON, parsed straight from the bytes (one UTF-8 check, not two).
    comparison: Vec<u8>,
    first_seen: i64,
    last_seen: i64,
    status: String,
}

fn match_row(r: &Row) -> rusqlite::Result<MatchRow> {
    Ok(MatchRow {
        id: r.get(0)?,
        section_id: r.get(1)?,
        work_id: r.get(2)?,
        page_id: r.get(3)?,
        site: r.get(4)?,
        kind: r.get(5)?,
        score: r.get(6)?,
        duplicate: r.get(7)?,
        comparison: r
            .get_ref(8)?
            .as_bytes()
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(8, rusqlite::types::Type::Text, Box::new(e)))?
            .to_vec(),
        first_seen: r.get(9)?,
        last_seen: r.get(10)?,
        status: r.get(11)?,
    })
}

fn finish_match(c: &Connection, m: MatchRow) -> StoreResult<Match> {
    let comparison = serde_json::from_slice(&m.comparison)
        .map_err(|e| StoreError::corrupt(format!("comparison of match {}", m.id), e))?;
    let status = ReviewStatus::parse(&m.status)
        .ok_or_else(|| StoreError::corrupt(format!("status of match {}", m.id), &m.status))?;
    let mut stmt = c.prepare_cached(
        "SELECT by_whom, at, from_status, to_status, note FROM match_reviews WHERE match_id = ?1 ORDER BY seq",
    )?;
    let rows = stmt
        .query_map(params![m.id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?, r.get(4)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut review_log = Vec::with_capacity(rows.len());
    for (by, at, from, to, note) in rows {
        let parse =
            |s: &str| ReviewStatus::parse(s).ok_or_else(|| StoreError::corrupt(format!("review of match {}", m.id), s));
        review_log.push(ReviewEvent { by, at: Timestamp(at), from: parse(&from)?, to: parse(&to)?, note });
    }
    Ok(Match {
        id: m.id,
        section_id: m.section_id,
        work_id: m.work_id,
        page_id: m.page_id,
        site: m.site,
        kind: m.kind,
        score: m.score,
        duplicate: m.duplicate,
        comparison,
        first_seen: Timestamp(m.first_seen),
        last_seen: Timestamp(m.last_seen),
        status,
        review_log,
    })
}

fn filter_sql(f: &MatchFilter) -> (String, Vec<rusqlite::types::Value>) {
    use rusqlite::types::Value;
    let mut clauses = Vec::new();
    let mut args: Vec<Value> = Vec::new();
    let mut push = |clause: &str, v: Value| {
        args.push(v);
        clauses.push(clause.replace('?', &format!("?{}", args.len())));
    };
    if let Some(v) = f.work_id {
        push("work_id = ?", Value::Integer(v));
    }
    if let Some(v) = f.section_id {
        push("section_id = ?", Value::Integer(v));
    }
    if let Some(v) = &f.site {
        push("site = ?", Value::Text(v.to_lowercase()));
    }
    if let Some(v) = &f.kind {
        push("kind = ?", Value::Text(v.clone()));
    }
    if let Some(v) = f.status {
        push("status = ?", Value::Text(v.as_str().into()));
    }
    if let Some(v) = f.min_score {
        push("score >= ?", Value::Real(v));
    }
    if let Some(v) = f.max_score {
        push("score <= ?", Value::Real(v));
    }
    if let Some(v) = f.seen_from {
        push("last_seen >= ?", Value::Integer(v.0));
    }
    if let Some(v) = f.seen_until {
        push("last_seen < ?", Value::Integer(v.0));
    }
    if clauses.is_empty() {
        clauses.push("1 = 1".into());
    }
    (clauses.join(" AND "), args)
}

fn count_by<K: rusqlite::types::FromSql>(
    c: &Connection,
    col: &str,
    where_: &str,
    args: &[rusqlite::types::Value],
) -> StoreResult<Vec<(K, u64)>> {
    let mut stmt =
        c.prepare(&format!("SELECT {col}, COUNT(*) FROM matches WHERE {where_} GROUP BY {col} ORDER BY {col}"))?;
    let rows = stmt
        .query_map(rusqlite::params_from_iter(args.iter()), |r| Ok((r.get::<_, K>(0)?, r.get::<_, i64>(1)? as u64)))?;
    Ok(rows.collect::<Result<Vec<_>, _>>()?)
}

#[async_trait]
impl MatchStore for SqliteStore {
    async fn upsert_match(&self, m: &NewMatch) -> StoreResult<Upserted> {
        let mut all = self.upsert_matches(std::slice::from_ref(m)).await?;
        all.pop().ok_or_else(|| StoreError::Backend { backend: "embedded", message: "no result for one match".into() })
    }

    async fn upsert_matches(&self, ms: &[NewMatch]) -> StoreResult<Vec<Upserted>> {
        let validated = validate_matches(ms)?;
        let ms = ms.to_vec();
        self.run(move |conn| {
            // One transaction: a missing section or page rolls the whole batch back.
            let tx = conn.transaction()?;
            let mut out = Vec::with_capacity(ms.len());
            for (m, (json, hash)) in ms.iter().zip(validated) {
                out.push(upsert_match_in(&tx, m, &json, hash)?);
            }
            tx.commit()?;
            Ok(out)
        })
        .await
    }

    async fn get_match(&self, id: i64) -> StoreResult<Option<Match>> {
        self.read(move |c| {
            let row = c
                .query_row(&format!("SELECT {MATCH_COLS} FROM matches WHERE id = ?1"), params![id], match_row)
                .optional()?;
            row.map(|r| finish_match(c, r)).transpose()
        })
        .await
    }

    async fn find_match(&self, section_id: i64, page_id: i64) -> StoreResult<Option<Match>> {
        self.read(move |c| {
            let row = c
                .query_row(
                    &format!("SELECT {MATCH_COLS} FROM matches WHERE section_id = ?1 AND page_id = ?2"),
                    params![section_id, page_id],
                    match_row,
                )
                .optional()?;
            row.map(|r| finish_match(c, r)).transpose()
        })
        .await
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
        let (by, note) = (by.to_owned(), note.map(str::to_owned));
        self.run(move |conn| {
            let tx = conn.transaction()?;
            let from: String = tx
                .query_row("SELECT status FROM matches WHERE id = ?1", params![id], |r| r.get(0))
                .optional()?
                .ok_or_else(|| StoreError::not_found("match", id))?;
            if from == to.as_str() {
                return Ok(Outcome::Unchanged);
            }
            let seq: i64 = tx.query_row("SELECT COALESCE(MAX(seq), 0) + 1 FROM match_reviews WHERE match_id = ?1", params![id], |r| r.get(0))?;
            tx.execute(
                "INSERT INTO match_reviews (match_id, seq, by_whom, at, from_status, to_status, note) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![id, seq, by, at.0, from, to.as_str(), note],
            )?;
            tx.execute("UPDATE matches SET status = ?2 WHERE id = ?1", params![id, to.as_str()])?;
            tx.commit()?;
            Ok(Outcome::Updated)
        })
        .await
    }

    async fn list_matches(&self, filter: &MatchFilter, after_id: i64, limit: u32) -> StoreResult<Vec<Match>> {
        let limit = check_limit(limit)?;
        let (where_, mut args) = filter_sql(filter);
        self.read(move |c| {
            args.push(rusqlite::types::Value::Integer(after_id));
            let after = args.len();
            args.push(rusqlite::types::Value::Integer(limit));
            let sql = format!(
                "SELECT {MATCH_COLS} FROM matches WHERE {where_} AND id > ?{after} ORDER BY id LIMIT ?{}",
                after + 1
            );
            let rows = c
                .prepare(&sql)?
                .query_map(rusqlite::params_from_iter(args.iter()), match_row)?
                .collect::<Result<Vec<_>, _>>()?;
            rows.into_iter().map(|r| finish_match(c, r)).collect()
        })
        .await
    }

    async fn match_stats(&self, filter: &MatchFilter) -> StoreResult<MatchStats> {
        let (where_, args) = filter_sql(filter);
        self.read(move |c| {
            let total = c.query_row(
                &format!("SELECT COUNT(*) FROM matches WHERE {where_}"),
                rusqlite::params_from_iter(args.iter()),
                |r| r.get::<_, i64>(0),
            )? as u64;
            let by_status = count_by::<String>(c, "status", &where_, &args)?
                .into_iter()
                .map(|(s, n)| {
                    ReviewStatus::parse(&s).map(|s| (s, n)).ok_or_else(|| StoreError::corrupt("match status", s))
                })
                .collect::<StoreResult<Vec<_>>>()?;
            let mut by_status = by_status;
            by_status.sort();
            Ok(MatchStats {
                total,
                by_status,
                by_site: count_by(c, "site", &where_, &args)?,
                by_work: count_by(c, "work_id", &where_, &args)?,
                by_day: count_by(c, "first_day", &where_, &args)?,
            })
        })
        .await
    }
}

// ---------------------------------------------------------------------------------
// Tasks

const TASK_COLS: &str =
    "id, key, kind, params, state, done, total, failed, checkpoint, worker, error, created_at, started_at, finished_at, updated_at";

fn task_row(r: &Row) -> rusqlite::Result<(Task, String, String, Option<String>)> {
    Ok((
        Task {
            id: r.get(0)?,
            key: r.get(1)?,
            kind: r.get(2)?,
            params: serde_json::Value::Null,
            state: TaskState::Queued,
            progress: Progress {
                done: r.get::<_, i64>(5)? as u64,
                total: r.get::<_, i64>(6)? as u64,
                failed: r.get::<_, i64>(7)? as u64,
            },
            checkpoint: None,
            worker: r.get(9)?,
            error: r.get(10)?,
            created_at: ts(r, 11)?,
            started_at: opt_ts(r, 12)?,
            finished_at: opt_ts(r, 13)?,
            updated_at: ts(r, 14)?,
        },
        r.get(3)?,
        r.get(4)?,
        r.get(8)?,
    ))
}

fn finish_task((mut t, params, state, checkpoint): (Task, String, String, Option<String>)) -> StoreResult<Task> {
    t.params = serde_json::from_str(&params).map_err(|e| StoreError::corrupt(format!("params of task {}", t.id), e))?;
    t.state = TaskState::parse(&state).ok_or_else(|| StoreError::corrupt(format!("state of task {}", t.id), &state))?;
    t.checkpoint = checkpoint
        .map(|c| serde_json::from_str(&c))
        .transpose()
        .map_err(|e| StoreError::corrupt(format!("checkpoint of task {}", t.id), e))?;
    Ok(t)
}

fn load_task(c: &Connection, id: i64) -> StoreResult<Option<Task>> {
    let row = c
        .prepare_cached(&format!("SELECT {TASK_COLS} FROM tasks WHERE id = ?1"))?
        .query_row(params![id], task_row)
        .optional()?;
    row.map(finish_task).transpose()
}

impl SqliteStore {
    /// Move a task from one of `from` to `to`, setting extra columns; `Conflict` otherwise.
    async fn transition(
        &self,
        id: i64,
        from: &'static [TaskState],
        to: TaskState,
        error: Option<String>,
    ) -> StoreResult<Task> {
        self.run(move |c| {
            let tx = c.transaction()?;
            let task = load_task(&tx, id)?.ok_or_else(|| StoreError::not_found("task", id))?;
            if !from.contains(&task.state) {
                return Err(StoreError::Conflict {
                    what: format!("task {id} ({})", task.key),
                    reason: format!("cannot go from {} to {}", task.state.as_str(), to.as_str()),
                });
            }
            let now = Timestamp::now().0;
            tx.execute(
                "UPDATE tasks SET state = ?2, error = COALESCE(?3, error), finished_at = ?4, updated_at = ?4 WHERE id = ?1",
                params![id, to.as_str(), error, now],
            )?;
            let task = load_task(&tx, id)?.ok_or_else(|| StoreError::not_found("task", id))?;
            tx.commit()?;
            Ok(task)
        })
        .await
    }
}

#[async_trait]
impl TaskStore for SqliteStore {
    async fn create_task(&self, task: &NewTask) -> StoreResult<(Task, Outcome)> {
        let params_json = validate_task(task)?;
        let task = task.clone();
        self.run(move |c| {
            let tx = c.transaction()?;
            let existing = tx.query_row("SELECT id FROM tasks WHERE key = ?1", params![task.key], |r| r.get::<_, i64>(0)).optional()?;
            if let Some(id) = existing {
                let t = load_task(&tx, id)?.ok_or_else(|| StoreError::not_found("task", id))?;
                if t.kind != task.kind || t.params != task.params {
                    return Err(StoreError::Conflict {
                        what: format!("task {}", task.key),
                        reason: "exists with another kind or other parameters".into(),
                    });
                }
                return Ok((t, Outcome::Unchanged));
            }
            let now = Timestamp::now().0;
            tx.execute(
                "INSERT INTO tasks (key, kind, params, state, created_at, updated_at) VALUES (?1, ?2, ?3, 'queued', ?4, ?4)",
                params![task.key, task.kind, params_json, now],
            )?;
            let t = load_task(&tx, tx.last_insert_rowid())?.ok_or_else(|| StoreError::not_found("task", &task.key))?;
            tx.commit()?;
            Ok((t, Outcome::Inserted))
        })
        .await
    }

    async fn claim_task(&self, kind: Option<&str>, worker: &str) -> StoreResult<Option<Task>> {
        let (kind, worker) = (kind.map(str::to_owned), worker.to_owned());
        self.run(move |c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let id: Option<i64> = tx
                .query_row(
                    "SELECT id FROM tasks WHERE state = 'queued' AND (?1 IS NULL OR kind = ?1) ORDER BY id LIMIT 1",
                    params![kind],
                    |r| r.get(0),
                )
                .optional()?;
            let Some(id) = id else { return Ok(None) };
            let now = Timestamp::now().0;
            tx.execute(
                "UPDATE tasks SET state = 'running', worker = ?2, started_at = ?3, updated_at = ?3 WHERE id = ?1",
                params![id, worker, now],
            )?;
            let t = load_task(&tx, id)?;
            tx.commit()?;
            Ok(t)
        })
        .await
    }

    async fn take_over_task(&self, id: i64, from: Option<&str>, worker: &str) -> StoreResult<Option<Task>> {
        let (from, worker) = (from.map(str::to_owned), worker.to_owned());
        self.run(move |c| {
            let tx = c.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
            let n = tx.execute(
                "UPDATE tasks SET worker = ?3, updated_at = ?4 WHERE id = ?1 AND state = 'running' AND worker IS ?2",
                params![id, from, worker, Timestamp::now().0],
            )?;
            let t = if n == 0 { None } else { load_task(&tx, id)? };
            tx.commit()?;
            Ok(t)
        })
        .await
    }

    async fn update_progress(
        &self,
        id: i64,
        progress: Progress,
        checkpoint: Option<&serde_json::Value>,
    ) -> StoreResult<Task> {
        let checkpoint = checkpoint.map(|c| c.to_string());
        self.run(move |c| {
            let now = Timestamp::now().0;
            let n = c.execute(
                "UPDATE tasks SET done = ?2, total = ?3, failed = ?4, checkpoint = COALESCE(?5, checkpoint), updated_at = ?6 WHERE id = ?1 AND state = 'running'",
                params![id, progress.done as i64, progress.total as i64, progress.failed as i64, checkpoint, now],
            )?;
            let t = load_task(c, id)?.ok_or_else(|| StoreError::not_found("task", id))?;
            if n == 0 {
                return Err(StoreError::Conflict { what: format!("task {id}"), reason: format!("is {}, not running", t.state.as_str()) });
            }
            Ok(t)
        })
        .await
    }

    async fn finish_task(&self, id: i64) -> StoreResult<Task> {
        self.transition(id, &[TaskState::Running], TaskState::Succeeded, None).await
    }

    async fn fail_task(&self, id: i64, error: &str) -> StoreResult<Task> {
        self.transition(id, &[TaskState::Running], TaskState::Failed, Some(error.to_owned())).await
    }

    async fn cancel_task(&self, id: i64) -> StoreResult<Task> {
        self.transition(id, &[TaskState::Queued, TaskState::Running], TaskState::Cancelled, None).await
    }

    async fn get_task(&self, id: i64) -> StoreResult<Option<Task>> {
        self.read(move |c| load_task(c, id)).await
    }

    async fn find_task(&self, key: &str) -> StoreResult<Option<Task>> {
        let key = key.to_owned();
        self.read(move |c| {
            let row = c
                .query_row(&format!("SELECT {TASK_COLS} FROM tasks WHERE key = ?1"), params![key], task_row)
                .optional()?;
            row.map(finish_task).transpose()
        })
        .await
    }

    async fn list_tasks(&self, state: Option<TaskState>, after_id: i64, limit: u32) -> StoreResult<Vec<Task>> {
        let limit = check_limit(limit)?;
        self.read(move |c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {TASK_COLS} FROM tasks WHERE id > ?1 AND (?2 IS NULL OR state = ?2) ORDER BY id LIMIT ?3"
            ))?;
            let rows = stmt
                .query_map(params![after_id, state.map(|s| s.as_str()), limit], task_row)?
                .collect::<Result<Vec<_>, _>>()?;
            rows.into_iter().map(finish_task).collect()
        })
        .await
    }
}

/// One match of [`SqliteStore::upsert_matches`], inside its transaction.
fn upsert_match_in(tx: &Transaction<'_>, m: &NewMatch, json: &str, hash: u64) -> StoreResult<Upserted> {
    let work_id: i64 = tx
        .query_row("SELECT work_id FROM sections WHERE id = ?1", params![m.section_id], |r| r.get(0))
        .optional()?
        .ok_or_else(|| StoreError::not_found("section", m.section_id))?;
    let site: String = tx
        .query_row("SELECT site FROM pages WHERE id = ?1", params![m.page_id], |r| r.get(0))
        .optional()?
        .ok_or_else(|| StoreError::not_found("page", m.page_id))?;
    let existing: Option<(i64, i64, i64, i64)> = tx
        .query_row(
            "SELECT id, comparison_hash, first_seen, last_seen FROM matches WHERE section_id = ?1 AND page_id = ?2",
            params![m.section_id, m.page_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    let v = &m.comparison.verdict;
    let (copied_chars, coverage) = (m.comparison.copied_chars as i64, m.comparison.evidence_coverage_a);
    let t = m.seen_at.0;
    Ok(match existing {
        None => {
            tx.execute(
                "INSERT INTO matches (section_id, work_id, page_id, site, kind, score, duplicate, comparison, comparison_hash, first_seen, first_day, last_seen, status, copied_chars, coverage)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?10, 'new', ?12, ?13)",
                params![m.section_id, work_id, m.page_id, site, m.kind, v.score, v.duplicate, json, h2i(hash), t, m.seen_at.day(), copied_chars, coverage],
            )?;
            Upserted { id: tx.last_insert_rowid(), outcome: Outcome::Inserted }
        }
        Some((id, old_hash, first, last)) => {
            let first = first.min(t);
            if i2h(old_hash) == hash || t < last {
                // Same scores, or an older run arriving late: only widen the window
                // (a run at least as new also sets the kind, which follows thresholds).
                tx.execute(
                    "UPDATE matches SET first_seen = ?2, first_day = ?3, last_seen = ?4, kind = CASE WHEN ?6 THEN ?5 ELSE kind END WHERE id = ?1",
                    params![id, first, Timestamp(first).day(), last.max(t), m.kind, t >= last],
                )?;
                Upserted { id, outcome: Outcome::Unchanged }
            } else {
                tx.execute(
                    "UPDATE matches SET kind = ?2, score = ?3, duplicate = ?4, comparison = ?5, comparison_hash = ?6, first_seen = ?7, first_day = ?8, last_seen = ?9, copied_chars = ?10, coverage = ?11 WHERE id = ?1",
                    params![id, m.kind, v.score, v.duplicate, json, h2i(hash), first, Timestamp(first).day(), t, copied_chars, coverage],
                )?;
                Upserted { id, outcome: Outcome::Updated }
            }
        }
    })
}
