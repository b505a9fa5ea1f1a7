//! The embedded store's pool of read-only connections.
//!
//! Hand-written on purpose: the maintained pools for rusqlite (`r2d2_sqlite`,
//! `deadpool-sqlite`) are built against rusqlite 0.40, while the workspace pins 0.41, and
//! two versions of `libsqlite3-sys` cannot link into one binary. The pool is small: a
//! fixed set of connections opened at start, an async semaphore so that waiting callers
//! queue on the runtime instead of parking blocking threads, and a lease that hands the
//! connection back even if the job panics.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::config::MAX_SQLITE_READERS;
use crate::traits::StoreResult;
use crate::StoreError;

/// Number of reader connections: `configured` ([`crate::StoreConfig::with_readers`];
/// `0` sends reads through the writer connection as before the pool, for comparisons)
/// if given, else two per core, at least 4 and at most 16. SQLite readers in WAL mode do
/// not block each other or the writer; past a few per core they only add memory (each
/// keeps its own page cache).
pub(super) fn size(configured: Option<usize>) -> StoreResult<usize> {
    match configured {
        Some(n) if n <= MAX_SQLITE_READERS => Ok(n),
        Some(n) => Err(StoreError::Config(format!(
            "{n} SQLite readers: expected a number of connections from 0 to {MAX_SQLITE_READERS}"
        ))),
        None => {
            let cores = std::thread::available_parallelism().map(|n| n.get()).unwrap_or(2);
            Ok((cores * 2).clamp(4, 16))
        }
    }
}

/// A fixed pool of read-only connections to one database file.
pub(super) struct ReadPool {
    idle: Arc<Mutex<Vec<Connection>>>,
    permits: Arc<Semaphore>,
}

/// A connection taken from the pool; returned to it on drop (also on unwinding).
struct Lease {
    conn: Option<Connection>,
    idle: Arc<Mutex<Vec<Connection>>>,
    _permit: OwnedSemaphorePermit,
}

impl Drop for Lease {
    fn drop(&mut self) {
        if let Some(c) = self.conn.take() {
            self.idle.lock().unwrap_or_else(|p| p.into_inner()).push(c);
        }
    }
}

fn open_reader(path: &Path) -> StoreResult<Connection> {
    let flags = OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX | OpenFlags::SQLITE_OPEN_URI;
    let conn = Connection::open_with_flags(path, flags)
        .map_err(|e| StoreError::Config(format!("cannot open {} for reading: {e}", path.display())))?;
    conn.busy_timeout(Duration::from_secs(10))?;
    super::tune(&conn, super::READER_CACHE_KIB)?;
    // Statements of the API are re-prepared per request otherwise.
    conn.set_prepared_statement_cache_capacity(64);
    Ok(conn)
}

impl ReadPool {
    /// Open `size` read-only connections to the database at `path`, which must exist
    /// (the writer has created it and switched it to WAL).
    pub(super) async fn open(path: &Path, size: usize) -> StoreResult<Self> {
        let path: PathBuf = path.to_path_buf();
        let size = size.max(1);
        let conns: Vec<Connection> =
            super::blocking(move || (0..size).map(|_| open_reader(&path)).collect::<StoreResult<_>>()).await?;
        Ok(ReadPool { idle: Arc::new(Mutex::new(conns)), permits: Arc::new(Semaphore::new(size)) })
    }

    /// Run `f` on a free reader connection, waiting (asynchronously) for one if all are busy.
    pub(super) async fn run<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnOnce(&Connection) -> StoreResult<T> + Send + 'static,
    {
        let permit = self
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| StoreError::Backend { backend: "sqlite", message: "the reader pool is closed".into() })?;
        let idle = self.idle.clone();
        super::blocking(move || {
            // One permit per connection: holding a permit guarantees an idle connection.
            let conn = idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
            let lease = Lease { conn, idle, _permit: permit };
            let conn = lease.conn.as_ref().ok_or_else(|| StoreError::Backend {
                backend: "sqlite",
                message: "no idle reader connection under a permit".into(),
            })?;
            f(conn)
        })
        .await
    }
}
