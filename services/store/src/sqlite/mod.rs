//! The embedded backend: one SQLite file (bundled, WAL, foreign keys on), driven on
//! tokio's blocking pool, or in place on a runtime of one thread ([`blocking`]). Writes
//! go through one mutex-guarded writer connection; reads go through a small pool of
//! read-only connections ([`ReadPool`]), which WAL lets run beside the writer and each
//! other. Every multi-row write is one transaction, so a
//! failure leaves nothing half-written; a write has committed before its call returns,
//! so any read started afterwards, on any connection, sees it.
//!
//! This file holds the store and its connections; each trait is implemented in the
//! file of its resource (`works`, `pages`, `content_hash`, `fingerprints`, `matches`,
//! `tasks`, `keys`, `queries`, `meta`, `evidence`), beside `pool` (the readers) and
//! `migrations`. Evidence files are not in the database but under the data directory
//! (`evidence`).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{params, Connection, OptionalExtension, Row};

use crate::codec::sorted_ids;
use crate::model::Timestamp;
use crate::traits::StoreResult;
use crate::StoreError;

mod cases;
mod content_hash;
mod evidence;
mod fingerprints;
mod keys;
mod matches;
mod meta;
mod migrations;
mod pages;
mod pool;
mod queries;
mod tasks;
mod works;

use pool::ReadPool;

const DB_FILE: &str = "zhiwen.db";

/// The embedded store.
///
/// The fields drop in order, and the order matters: the readers close first, so that the
/// writer is the last connection to the file. SQLite checkpoints the write-ahead log into
/// the database and deletes it when the last connection closes, and only a connection
/// that may write can: with the writer closed first, every process left its whole log
/// behind (an import, all it wrote: 28 MB for the evaluation set's pages), and the next
/// one read those pages back from the log one `pread` each instead of through the memory
/// map, then copied them into the database at its own checkpoint (`zhiwen match --all`
/// after that import: 17,678 reads of the log and 7,219 writes of the database file,
/// against 4,247 and none now; the copy is now paid by the process that wrote, so the
/// whole job's CPU time stays within its run-to-run spread; issue #31).
pub(crate) struct SqliteStore {
    /// `None` when configured with no readers: reads share the writer connection.
    readers: Option<ReadPool>,
    conn: Arc<Mutex<Connection>>,
    /// The data directory (the evidence files live under it).
    data_dir: PathBuf,
}

impl SqliteStore {
    /// Open (creating if missing) the database in `data_dir`, with `readers` read-only
    /// connections (`None`: the default number, `Some(0)`: none).
    pub(crate) async fn open(data_dir: &Path, readers: Option<usize>) -> StoreResult<Self> {
        let size = pool::size(readers)?;
        let dir = data_dir.to_path_buf();
        let conn = blocking(move || -> StoreResult<Connection> {
            std::fs::create_dir_all(&dir)
                .map_err(|e| StoreError::Config(format!("cannot create data directory {}: {e}", dir.display())))?;
            let path = dir.join(DB_FILE);
            let conn = Connection::open(&path)
                .map_err(|e| StoreError::Config(format!("cannot open {}: {e}", path.display())))?;
            conn.busy_timeout(std::time::Duration::from_secs(10))?;
            conn.pragma_update(None, "journal_mode", "WAL")?;
            conn.pragma_update(None, "synchronous", "NORMAL")?;
            conn.pragma_update(None, "foreign_keys", "ON")?;
            tune(&conn, WRITER_CACHE_KIB)?;
            // Fewer, larger checkpoints: a page written by several batches in a row (the
            // tables' and indexes' upper levels) is copied to the database once per
            // checkpoint, not once per batch.
            conn.pragma_update(None, "wal_autocheckpoint", WAL_AUTOCHECKPOINT_PAGES)?;
            Ok(conn)
        })
        .await?;
        // Readers open after the writer has switched the file to WAL.
        let readers = match size {
            0 => None,
            n => Some(ReadPool::open(&data_dir.join(DB_FILE), n).await?),
        };
        Ok(SqliteStore { conn: Arc::new(Mutex::new(conn)), readers, data_dir: data_dir.to_path_buf() })
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
        finish: impl Fn(R) -> StoreResult<T> + Send + 'static,
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
        blocking(move || {
            // A panic inside a previous job poisons the mutex; the connection itself is
            // still consistent (transactions roll back on drop), so keep using it.
            let mut guard = conn.lock().unwrap_or_else(|p| p.into_inner());
            f(&mut guard)
        })
        .await
    }
}

/// Run a job that blocks on SQLite or the file system.
///
/// On a multi-threaded runtime (a server, a watcher, a worker) it runs on tokio's
/// blocking pool, so that the runtime's workers go on with other requests meanwhile. On
/// a runtime of one thread (a command that does one job and ends) it runs in place: the
/// thread would only wait for the pool's answer, and each hand-off woke a pool thread
/// and then the runtime's thread again (two system calls and two context switches a
/// call; 6% of `zhiwen match --all`, docs/benchmarks.md). Jobs in place run one after
/// the other and none holds a connection across an `await`, so none waits for another's
/// connection. A panic in the job is an error of the call either way, as the blocking
/// pool's would be.
pub(super) async fn blocking<T, F>(f: F) -> StoreResult<T>
where
    T: Send + 'static,
    F: FnOnce() -> StoreResult<T> + Send + 'static,
{
    let one_thread = tokio::runtime::Handle::try_current()
        .is_ok_and(|h| h.runtime_flavor() == tokio::runtime::RuntimeFlavor::CurrentThread);
    if one_thread {
        return std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).unwrap_or_else(|panic| {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".to_owned());
            Err(StoreError::Backend { backend: "sqlite", message: format!("blocking task failed: {what}") })
        });
    }
    tokio::task::spawn_blocking(f).await?
}

/// Page cache of the writer connection (KiB; SQLite's default is 2 MiB): the inner pages
/// of the tables and indexes a batch writes stay in memory between batches. Reads of
/// clean pages go through the memory map, so a larger cache mostly kept the overflow
/// pages of bodies and fingerprints just written: 16 MiB of them was a tenth of
/// `zhiwen match --all`'s heap on the evaluation set, for no measurable time
/// (docs/benchmarks.md, "Memory of `match --all`, third round").
const WRITER_CACHE_KIB: i64 = 4 * 1024;
/// Page cache of each reader connection (KiB).
pub(super) const READER_CACHE_KIB: i64 = 4 * 1024;
/// How far a connection maps the database file into memory: reads of mapped pages are
/// memory reads, not one `pread` system call per page. Mapped pages are the kernel's
/// page cache shared by every connection, not a copy per connection.
const MMAP_BYTES: i64 = 256 * 1024 * 1024;
/// WAL pages after which a commit checkpoints (SQLite's default is 1000, 4 MiB).
const WAL_AUTOCHECKPOINT_PAGES: i64 = 8000;

/// The settings every connection of the embedded store gets (writer and readers):
/// memory-mapped reads, a page cache of `cache_kib`, temporary tables and sort files in
/// memory.
pub(super) fn tune(conn: &Connection, cache_kib: i64) -> rusqlite::Result<()> {
    conn.pragma_update(None, "mmap_size", MMAP_BYTES)?;
    conn.pragma_update(None, "cache_size", -cache_kib)?;
    conn.pragma_update(None, "temp_store", "MEMORY")
}

fn ts(r: &Row, i: usize) -> rusqlite::Result<Timestamp> {
    Ok(Timestamp(r.get(i)?))
}

fn opt_ts(r: &Row, i: usize) -> rusqlite::Result<Option<Timestamp>> {
    Ok(r.get::<_, Option<i64>>(i)?.map(Timestamp))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The thread a job ran on, and whether it was the caller's.
    async fn job_thread() -> (std::thread::ThreadId, std::thread::ThreadId) {
        let caller = std::thread::current().id();
        let ran_on = blocking(|| Ok(std::thread::current().id())).await.expect("job");
        (caller, ran_on)
    }

    #[test]
    fn jobs_run_in_place_on_one_thread_and_on_the_pool_otherwise() {
        let one = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        let (caller, ran_on) = one.block_on(job_thread());
        assert_eq!(caller, ran_on, "a runtime of one thread runs the job in place");
        let many = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().expect("runtime");
        let (caller, ran_on) = many.block_on(async { tokio::spawn(job_thread()).await.expect("task") });
        assert_ne!(caller, ran_on, "a multi-threaded runtime hands the job to its blocking pool");
    }

    #[test]
    fn a_panicking_job_is_an_error_of_its_call_on_either_runtime() {
        let panicking = || async { blocking::<(), _>(|| panic!("the job broke")).await };
        let one = tokio::runtime::Builder::new_current_thread().build().expect("runtime");
        let err = one.block_on(panicking()).expect_err("a panic is an error");
        assert!(err.to_string().contains("the job broke"), "{err}");
        // The runtime goes on.
        assert_eq!(one.block_on(blocking(|| Ok(7))).expect("job"), 7);
        let many = tokio::runtime::Builder::new_multi_thread().worker_threads(2).build().expect("runtime");
        let err = many.block_on(panicking()).expect_err("a panic is an error");
        assert!(err.to_string().contains("blocking task failed"), "{err}");
    }
}
