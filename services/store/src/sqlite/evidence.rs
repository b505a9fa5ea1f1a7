//! [`EvidenceStore`] on the embedded store: captures, the files they list and the tree
//! heads in tables (`captures`, `capture_files`, `tree_heads`); the files' bytes under
//! the data directory, `evidence/files/<first 2 hex>/<sha256>`, each written once and
//! atomically (a temporary file in the same folder, synced, then linked under its name,
//! which never replaces an existing file). A crash mid-write leaves at most a temporary
//! `.<sha256>.*.tmp` beside it, never a partial file under the name.
//!
//! Appends and retention both run on the writer connection in an immediate transaction,
//! so the next leaf index (`MAX + 1`) is read and taken at once, by this process or any
//! other, and an append never lists a file that retention is deleting.

use std::collections::BTreeSet;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use async_trait::async_trait;
use rusqlite::{params, Connection, OptionalExtension, TransactionBehavior};

use super::{opt_ts, ts, SqliteStore};
use crate::codec::*;
use crate::model::*;
use crate::traits::{EvidenceStore, StoreResult};
use crate::StoreError;

/// The folder of the evidence files, under the data directory.
const FILES_DIR: &str = "evidence/files";

/// Tells apart the temporary files of concurrent writers in one process.
static TMP_SEQ: AtomicU64 = AtomicU64::new(0);

/// Where the file `sha256` (checked already) lives.
fn file_path(data_dir: &Path, sha256: &str) -> PathBuf {
    data_dir.join(FILES_DIR).join(&sha256[..2]).join(sha256)
}

fn io_error(what: &str, path: &Path, e: std::io::Error) -> StoreError {
    StoreError::Backend { backend: "embedded", message: format!("cannot {what} {}: {e}", path.display()) }
}

fn too_large(sha256: &str, size: u64, max_bytes: u64) -> StoreError {
    StoreError::invalid("evidence file", format!("{sha256} has {size} bytes, more than the limit of {max_bytes}"))
}

/// Write `bytes` at `path` unless a file is there; `true` when written now.
fn write_once(path: &Path, bytes: &[u8]) -> StoreResult<bool> {
    if path.exists() {
        return Ok(false);
    }
    let dir = path.parent().ok_or_else(|| io_error("find the folder of", path, std::io::ErrorKind::NotFound.into()))?;
    std::fs::create_dir_all(dir).map_err(|e| io_error("create", dir, e))?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let tmp = dir.join(format!(".{name}.{}.{}.tmp", std::process::id(), TMP_SEQ.fetch_add(1, Ordering::Relaxed)));
    let written = (|| -> std::io::Result<bool> {
        let mut f = std::fs::OpenOptions::new().write(true).create_new(true).open(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        drop(f);
        // A hard link never replaces an existing file: a racing writer of the same bytes
        // that got there first wins, and this copy is dropped.
        match std::fs::hard_link(&tmp, path) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
            // A file system without hard links: rename, unless the file appeared.
            Err(_) if path.exists() => Ok(false),
            Err(_) => std::fs::rename(&tmp, path).map(|()| true),
        }
    })();
    // Gone already after a rename; a leftover is harmless either way.
    let _ = std::fs::remove_file(&tmp);
    let written = written.map_err(|e| io_error("write", path, e))?;
    if written {
        #[cfg(unix)]
        std::fs::File::open(dir).and_then(|d| d.sync_all()).map_err(|e| io_error("sync", dir, e))?;
    }
    Ok(written)
}

const CAPTURE_COLS: &str = "id, leaf_index, key, match_id, page_id, url, captured_at, reason, record, pruned_at";

fn non_negative(v: i64, what: impl FnOnce() -> String) -> StoreResult<u64> {
    u64::try_from(v).map_err(|_| StoreError::corrupt(what(), format!("negative value {v}")))
}

fn load_capture(c: &Connection, id: i64) -> StoreResult<Option<Capture>> {
    let row = c
        .prepare_cached(&format!("SELECT {CAPTURE_COLS} FROM captures WHERE id = ?1"))?
        .query_row(params![id], |r| {
            Ok((
                r.get::<_, i64>(1)?,
                Capture {
                    id: r.get(0)?,
                    leaf_index: 0,
                    key: r.get(2)?,
                    match_id: r.get(3)?,
                    page_id: r.get(4)?,
                    url: r.get(5)?,
                    captured_at: ts(r, 6)?,
                    reason: r.get(7)?,
                    files: Vec::new(),
                    record: r.get(8)?,
                    pruned_at: opt_ts(r, 9)?,
                },
            ))
        })
        .optional()?;
    let Some((leaf_index, mut capture)) = row else { return Ok(None) };
    capture.leaf_index = non_negative(leaf_index, || format!("leaf index of capture {id}"))?;
    let files = c
        .prepare_cached(
            "SELECT name, media_type, size, sha256 FROM capture_files WHERE capture_id = ?1 ORDER BY ordinal",
        )?
        .query_map(params![id], |r| Ok((r.get(0)?, r.get(1)?, r.get::<_, i64>(2)?, r.get(3)?)))?
        .collect::<Result<Vec<(String, String, i64, String)>, _>>()?;
    for (name, media_type, size, sha256) in files {
        let size = non_negative(size, || format!("size of file {name} of capture {id}"))?;
        capture.files.push(CaptureFile { name, media_type, size, sha256 });
    }
    Ok(Some(capture))
}

/// Every listed file is stored, with the listed size.
fn check_files_stored(data_dir: &Path, files: &[CaptureFile]) -> StoreResult<()> {
    for f in files {
        let path = file_path(data_dir, &f.sha256);
        match std::fs::metadata(&path) {
            Ok(m) if m.len() == f.size => {}
            Ok(m) => {
                return Err(StoreError::invalid(
                    "capture file",
                    format!("{} is listed with {} bytes, stored with {}", f.name, f.size, m.len()),
                ))
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(StoreError::not_found("evidence file", &f.sha256))
            }
            Err(e) => return Err(io_error("read", &path, e)),
        }
    }
    Ok(())
}

#[async_trait]
impl EvidenceStore for SqliteStore {
    async fn put_evidence_file(&self, bytes: &[u8]) -> StoreResult<String> {
        let sha256 = sha256_hex(bytes);
        let path = file_path(&self.data_dir, &sha256);
        let bytes = bytes.to_vec();
        let written = super::blocking(move || write_once(&path, &bytes)).await?;
        tracing::debug!(sha256, written, "evidence file stored");
        Ok(sha256)
    }

    async fn get_evidence_file(&self, sha256: &str, max_bytes: u64) -> StoreResult<Option<Vec<u8>>> {
        check_sha256(sha256)?;
        let path = file_path(&self.data_dir, sha256);
        let sha256 = sha256.to_owned();
        super::blocking(move || {
            let file = match std::fs::File::open(&path) {
                Ok(f) => f,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
                Err(e) => return Err(io_error("open", &path, e)),
            };
            let size = file.metadata().map_err(|e| io_error("read", &path, e))?.len();
            if size > max_bytes {
                return Err(too_large(&sha256, size, max_bytes));
            }
            let mut bytes = Vec::with_capacity(size as usize);
            // Bounded even if the file grew since its size was read.
            file.take(max_bytes.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| io_error("read", &path, e))?;
            if bytes.len() as u64 > max_bytes {
                return Err(too_large(&sha256, bytes.len() as u64, max_bytes));
            }
            let actual = sha256_hex(&bytes);
            if actual != sha256 {
                tracing::error!(sha256, actual, path = %path.display(), "evidence file corrupt");
                return Err(StoreError::corrupt(
                    format!("evidence file {sha256}"),
                    format!("its bytes hash to {actual}"),
                ));
            }
            Ok(Some(bytes))
        })
        .await
    }

    async fn append_capture(&self, capture: &NewCapture) -> StoreResult<(Capture, Outcome)> {
        validate_capture(capture)?;
        let c = capture.clone();
        let data_dir = self.data_dir.clone();
        self.run(move |conn| {
            let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
            let existing =
                tx.query_row("SELECT id FROM captures WHERE key = ?1", params![c.key], |r| r.get::<_, i64>(0)).optional()?;
            if let Some(id) = existing {
                let stored = load_capture(&tx, id)?.ok_or_else(|| StoreError::not_found("capture", &c.key))?;
                return Ok((stored, Outcome::Unchanged));
            }
            check_files_stored(&data_dir, &c.files)?;
            let leaf: i64 = tx.query_row("SELECT COALESCE(MAX(leaf_index) + 1, 0) FROM captures", [], |r| r.get(0))?;
            tx.execute(
                "INSERT INTO captures (key, leaf_index, match_id, page_id, url, captured_at, reason, record)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                params![c.key, leaf, c.match_id, c.page_id, c.url, c.captured_at.0, c.reason, c.record],
            )?;
            let id = tx.last_insert_rowid();
            {
                let mut stmt = tx.prepare_cached(
                    "INSERT INTO capture_files (capture_id, ordinal, name, media_type, size, sha256) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                )?;
                for (i, f) in c.files.iter().enumerate() {
                    stmt.execute(params![id, i as i64, f.name, f.media_type, f.size as i64, f.sha256])?;
                }
            }
            let stored = load_capture(&tx, id)?.ok_or_else(|| StoreError::not_found("capture", &c.key))?;
            tx.commit()?;
            tracing::debug!(key = %c.key, id, leaf, "capture appended");
            Ok((stored, Outcome::Inserted))
        })
        .await
    }

    async fn get_capture(&self, id: i64) -> StoreResult<Option<Capture>> {
        self.read(move |c| load_capture(c, id)).await
    }

    async fn captures_of_match(&self, match_id: i64) -> StoreResult<Vec<Capture>> {
        self.read(move |c| {
            let ids = c
                .prepare_cached("SELECT id FROM captures WHERE match_id = ?1 ORDER BY leaf_index")?
                .query_map(params![match_id], |r| r.get::<_, i64>(0))?
                .collect::<Result<Vec<_>, _>>()?;
            let mut out = Vec::with_capacity(ids.len());
            for id in ids {
                out.push(load_capture(c, id)?.ok_or_else(|| StoreError::not_found("capture", id))?);
            }
            Ok(out)
        })
        .await
    }

    async fn capture_leaves(&self, from: u64, limit: u32) -> StoreResult<Vec<Vec<u8>>> {
        let limit = check_limit(limit)?;
        let Ok(from) = i64::try_from(from) else { return Ok(Vec::new()) };
        self.read(move |c| {
            let rows = c
                .prepare_cached(
                    "SELECT leaf_index, record FROM captures WHERE leaf_index >= ?1 ORDER BY leaf_index LIMIT ?2",
                )?
                .query_map(params![from, limit], |r| Ok((r.get::<_, i64>(0)?, r.get::<_, Vec<u8>>(1)?)))?
                .collect::<Result<Vec<_>, _>>()?;
            let mut out = Vec::with_capacity(rows.len());
            for (expected, (leaf, record)) in (from..).zip(rows) {
                if leaf != expected {
                    return Err(StoreError::corrupt(
                        "evidence log",
                        format!("leaf {expected} missing (next is {leaf})"),
                    ));
                }
                out.push(record);
            }
            Ok(out)
        })
        .await
    }

    async fn count_captures(&self) -> StoreResult<u64> {
        self.read(|c| {
            let n: i64 = c.query_row("SELECT COALESCE(MAX(leaf_index) + 1, 0) FROM captures", [], |r| r.get(0))?;
            non_negative(n, || "evidence log size".into())
        })
        .await
    }

    async fn put_tree_head(&self, size: u64, timestamp_ms: i64, head_json: &str) -> StoreResult<bool> {
        let size = check_tree_head(size, head_json)?;
        let head = head_json.to_owned();
        self.run(move |c| {
            let n = c.execute(
                "INSERT INTO tree_heads (size, timestamp_ms, head) VALUES (?1, ?2, ?3) ON CONFLICT(size) DO NOTHING",
                params![size, timestamp_ms, head],
            )?;
            Ok(n == 1)
        })
        .await
    }

    async fn latest_tree_head(&self) -> StoreResult<Option<String>> {
        self.read(|c| {
            Ok(c.prepare_cached("SELECT head FROM tree_heads ORDER BY size DESC LIMIT 1")?
                .query_row([], |r| r.get(0))
                .optional()?)
        })
        .await
    }

    async fn tree_heads_since(&self, since_ms: i64, limit: u32) -> StoreResult<Vec<String>> {
        let limit = check_limit(limit)?;
        self.read(move |c| {
            Ok(c.prepare_cached("SELECT head FROM tree_heads WHERE timestamp_ms >= ?1 ORDER BY size LIMIT ?2")?
                .query_map(params![since_ms, limit], |r| r.get(0))?
                .collect::<Result<Vec<String>, _>>()?)
        })
        .await
    }

    async fn prune_evidence(&self, before: Timestamp) -> StoreResult<PruneReport> {
        let data_dir = self.data_dir.clone();
        let report = self
            .run(move |conn| {
                let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
                let ids = tx
                    .prepare_cached(
                        "SELECT c.id FROM captures c LEFT JOIN matches m ON m.id = c.match_id
                         WHERE c.pruned_at IS NULL AND c.captured_at < ?1
                           AND (m.status IS NULL OR m.status NOT IN (?2, ?3))
                         ORDER BY c.id",
                    )?
                    .query_map(
                        params![before.0, ReviewStatus::Confirmed.as_str(), ReviewStatus::TakedownSent.as_str()],
                        |r| r.get::<_, i64>(0),
                    )?
                    .collect::<Result<Vec<_>, _>>()?;
                let mut report = PruneReport { captures: ids.len() as u64, ..PruneReport::default() };
                if ids.is_empty() {
                    return Ok(report);
                }
                let now = Timestamp::now().0;
                let mut shas = BTreeSet::new();
                for id in &ids {
                    tx.execute("UPDATE captures SET pruned_at = ?2 WHERE id = ?1", params![id, now])?;
                    let mut stmt = tx.prepare_cached("SELECT sha256 FROM capture_files WHERE capture_id = ?1")?;
                    for sha in stmt.query_map(params![id], |r| r.get::<_, String>(0))? {
                        shas.insert(sha?);
                    }
                }
                // Files go before the commit: a failure after leaves the captures unpruned,
                // and the next run finishes the job (a file gone already is skipped).
                for sha in shas {
                    let kept: bool = tx
                        .prepare_cached(
                            "SELECT EXISTS (SELECT 1 FROM capture_files f JOIN captures c ON c.id = f.capture_id
                                            WHERE f.sha256 = ?1 AND c.pruned_at IS NULL)",
                        )?
                        .query_row(params![sha], |r| r.get(0))?;
                    if kept || check_sha256(&sha).is_err() {
                        continue;
                    }
                    let path = file_path(&data_dir, &sha);
                    let size = match std::fs::metadata(&path) {
                        Ok(m) => m.len(),
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                        Err(e) => return Err(io_error("read", &path, e)),
                    };
                    match std::fs::remove_file(&path) {
                        Ok(()) => {
                            report.files_deleted += 1;
                            report.bytes_deleted += size;
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                        Err(e) => return Err(io_error("delete", &path, e)),
                    }
                }
                tx.commit()?;
                Ok(report)
            })
            .await?;
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
