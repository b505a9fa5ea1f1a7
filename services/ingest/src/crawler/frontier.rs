//! The persisted frontier: every URL the crawl has discovered, with its depth and state,
//! in a small SQLite file (WAL). Each fetch's result (state, discovered links, hosts whose
//! sitemaps were read) is committed in one transaction, so a crawl killed at any moment
//! resumes from the last completed fetch, and a URL is never queued twice.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OptionalExtension};

use crate::error::IngestError;

/// State of a frontier URL.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UrlState {
    /// Waiting to be fetched.
    Queued,
    /// Fetched and stored (or found already stored).
    Done,
    /// Refused or failed (reason recorded).
    Failed,
    /// Not fetched on purpose (robots.txt).
    Skipped,
}

impl UrlState {
    fn as_str(self) -> &'static str {
        match self {
            UrlState::Queued => "queued",
            UrlState::Done => "done",
            UrlState::Failed => "failed",
            UrlState::Skipped => "skipped",
        }
    }
}

/// A URL to fetch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Row id.
    pub id: i64,
    /// Normalised URL.
    pub url: String,
    /// Link distance from a seed (seeds and sitemap entries: 0 and 1).
    pub depth: u32,
}

/// The result of one fetch, as the frontier records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Completion<'a> {
    /// The frontier row.
    pub id: i64,
    /// Its new state.
    pub state: UrlState,
    /// Why it failed or was skipped.
    pub reason: Option<&'a str>,
    /// The stored page.
    pub page_id: Option<i64>,
    /// The URL a redirect ended on (marked done too).
    pub final_url: Option<&'a str>,
    /// Links discovered, with their depth.
    pub links: &'a [(String, u32)],
    /// Hosts whose sitemaps were read.
    pub sitemap_hosts: &'a [String],
}

/// Counts by state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FrontierCounts {
    /// Queued.
    pub queued: u64,
    /// Done.
    pub done: u64,
    /// Failed.
    pub failed: u64,
    /// Skipped.
    pub skipped: u64,
}

/// The frontier database.
pub struct Frontier {
    conn: Connection,
    path: PathBuf,
}

impl std::fmt::Debug for Frontier {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Frontier").field("path", &self.path).finish()
    }
}

impl Frontier {
    /// Open (creating if needed) the frontier at `path`.
    pub fn open(path: &Path) -> Result<Self, IngestError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| IngestError::io(dir, e))?;
        }
        let err = |e: rusqlite::Error| IngestError::Frontier { path: path.to_path_buf(), message: e.to_string() };
        let conn = Connection::open(path).map_err(err)?;
        conn.pragma_update(None, "journal_mode", "WAL").map_err(err)?;
        conn.pragma_update(None, "synchronous", "NORMAL").map_err(err)?;
        conn.busy_timeout(std::time::Duration::from_secs(10)).map_err(err)?;
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS frontier (
                id INTEGER PRIMARY KEY,
                url TEXT NOT NULL UNIQUE,
                depth INTEGER NOT NULL,
                state TEXT NOT NULL DEFAULT 'queued',
                reason TEXT,
                page_id INTEGER,
                updated_at INTEGER NOT NULL DEFAULT 0
             );
             CREATE INDEX IF NOT EXISTS frontier_state ON frontier(state, depth, id);
             CREATE TABLE IF NOT EXISTS hosts (host TEXT PRIMARY KEY, sitemaps_done INTEGER NOT NULL DEFAULT 0);",
        )
        .map_err(err)?;
        Ok(Frontier { conn, path: path.to_path_buf() })
    }

    fn err(&self, e: rusqlite::Error) -> IngestError {
        IngestError::Frontier { path: self.path.clone(), message: e.to_string() }
    }

    /// Queue URLs not seen before; returns the entries actually added.
    pub fn add(&mut self, urls: &[(String, u32)]) -> Result<Vec<Entry>, IngestError> {
        let tx = self
            .conn
            .transaction()
            .map_err(|e| IngestError::Frontier { path: self.path.clone(), message: e.to_string() })?;
        let added = insert_urls(&tx, urls)
            .map_err(|e| IngestError::Frontier { path: self.path.clone(), message: e.to_string() })?;
        tx.commit().map_err(|e| self.err(e))?;
        Ok(added)
    }

    /// Queue again the URLs skipped for a reason that begins with `prefix` (one that a
    /// later run may not meet: robots.txt could not be read); returns how many.
    pub fn requeue_skipped(&mut self, prefix: &str) -> Result<u64, IngestError> {
        let n = self
            .conn
            .execute(
                "UPDATE frontier SET state = 'queued', reason = NULL
                 WHERE state = 'skipped' AND substr(reason, 1, length(?1)) = ?1",
                params![prefix],
            )
            .map_err(|e| self.err(e))?;
        Ok(n as u64)
    }

    /// Every queued URL, breadth first.
    pub fn queued(&self) -> Result<Vec<Entry>, IngestError> {
        let mut st = self
            .conn
            .prepare("SELECT id, url, depth FROM frontier WHERE state = 'queued' ORDER BY depth, id")
            .map_err(|e| self.err(e))?;
        let rows = st
            .query_map([], |r| Ok(Entry { id: r.get(0)?, url: r.get(1)?, depth: r.get::<_, i64>(2)? as u32 }))
            .map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// Record the result of one fetch: its state, the links it discovered, and the
    /// hosts whose sitemaps it read, atomically. Returns the newly queued entries.
    pub fn complete(&mut self, c: &Completion<'_>) -> Result<Vec<Entry>, IngestError> {
        let Completion { id, state, reason, page_id, final_url: also_done, links, sitemap_hosts } = *c;
        let path = self.path.clone();
        let err = move |e: rusqlite::Error| IngestError::Frontier { path: path.clone(), message: e.to_string() };
        let tx = self.conn.transaction().map_err(&err)?;
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0);
        tx.execute(
            "UPDATE frontier SET state = ?2, reason = ?3, page_id = ?4, updated_at = ?5 WHERE id = ?1",
            params![id, state.as_str(), reason, page_id, now],
        )
        .map_err(&err)?;
        if let Some(final_url) = also_done {
            // The URL a redirect ended on: done too, never fetched again.
            tx.execute(
                "INSERT INTO frontier (url, depth, state, page_id, updated_at)
                 SELECT ?1, depth, 'done', ?2, ?3 FROM frontier WHERE id = ?4
                 ON CONFLICT(url) DO UPDATE SET state = 'done', page_id = excluded.page_id, updated_at = excluded.updated_at",
                params![final_url, page_id, now, id],
            )
            .map_err(&err)?;
        }
        let added = insert_urls(&tx, links).map_err(&err)?;
        for h in sitemap_hosts {
            tx.execute(
                "INSERT INTO hosts (host, sitemaps_done) VALUES (?1, 1) ON CONFLICT(host) DO UPDATE SET sitemaps_done = 1",
                params![h],
            )
            .map_err(&err)?;
        }
        tx.commit().map_err(&err)?;
        Ok(added)
    }

    /// Hosts whose sitemaps were already read by this crawl.
    pub fn sitemap_hosts(&self) -> Result<HashSet<String>, IngestError> {
        let mut st = self.conn.prepare("SELECT host FROM hosts WHERE sitemaps_done = 1").map_err(|e| self.err(e))?;
        let rows = st.query_map([], |r| r.get::<_, String>(0)).map_err(|e| self.err(e))?;
        rows.collect::<Result<HashSet<_>, _>>().map_err(|e| self.err(e))
    }

    /// URLs at depth 0 (the seeds of every run of this job).
    pub fn seeds(&self) -> Result<Vec<String>, IngestError> {
        let mut st =
            self.conn.prepare("SELECT url FROM frontier WHERE depth = 0 ORDER BY id").map_err(|e| self.err(e))?;
        let rows = st.query_map([], |r| r.get::<_, String>(0)).map_err(|e| self.err(e))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(|e| self.err(e))
    }

    /// The state of one URL, if known.
    pub fn state_of(&self, url: &str) -> Result<Option<String>, IngestError> {
        self.conn
            .query_row("SELECT state FROM frontier WHERE url = ?1", params![url], |r| r.get(0))
            .optional()
            .map_err(|e| self.err(e))
    }

    /// Counts by state.
    pub fn counts(&self) -> Result<FrontierCounts, IngestError> {
        let mut st =
            self.conn.prepare("SELECT state, COUNT(*) FROM frontier GROUP BY state").map_err(|e| self.err(e))?;
        let rows = st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?))).map_err(|e| self.err(e))?;
        let mut c = FrontierCounts::default();
        for row in rows {
            let (s, n) = row.map_err(|e| self.err(e))?;
            let n = n as u64;
            match s.as_str() {
                "queued" => c.queued = n,
                "done" => c.done = n,
                "failed" => c.failed = n,
                "skipped" => c.skipped = n,
                _ => {}
            }
        }
        Ok(c)
    }
}

fn insert_urls(tx: &rusqlite::Transaction<'_>, urls: &[(String, u32)]) -> rusqlite::Result<Vec<Entry>> {
    let mut added = Vec::new();
    let mut st = tx.prepare_cached("INSERT OR IGNORE INTO frontier (url, depth) VALUES (?1, ?2)")?;
    for (url, depth) in urls {
        if st.execute(params![url, *depth as i64])? == 1 {
            added.push(Entry { id: tx.last_insert_rowid(), url: url.clone(), depth: *depth });
        }
    }
    Ok(added)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_queued_once_and_results_persist() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("f.sqlite");
        let mut f = Frontier::open(&path).unwrap();
        let added = f.add(&[("http://a/".into(), 0), ("http://a/".into(), 0), ("http://a/x".into(), 1)]).unwrap();
        assert_eq!(added.len(), 2);
        let first = added[0].id;
        let links = [("http://a/x".to_owned(), 1), ("http://a/y".to_owned(), 1)];
        let hosts = ["a".to_owned()];
        let c = Completion {
            id: first,
            state: UrlState::Done,
            reason: None,
            page_id: Some(7),
            final_url: None,
            links: &links,
            sitemap_hosts: &hosts,
        };
        let more = f.complete(&c).unwrap();
        assert_eq!(more.len(), 1);
        drop(f);
        let f = Frontier::open(&path).unwrap();
        let q: Vec<String> = f.queued().unwrap().into_iter().map(|e| e.url).collect();
        assert_eq!(q, vec!["http://a/x", "http://a/y"]);
        assert!(f.sitemap_hosts().unwrap().contains("a"));
        assert_eq!(f.counts().unwrap().done, 1);
        assert_eq!(f.seeds().unwrap(), vec!["http://a/"]);
    }
}
