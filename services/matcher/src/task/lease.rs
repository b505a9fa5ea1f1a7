//! Who runs a task: worker names (`host/pid/nonce`), the workers of this process that
//! are executing a task, and whether the worker of a `running` task has gone away.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

use zhiwen_store::{Task, Timestamp};

/// Workers of this process executing a task, by worker name (a `running` task whose
/// worker is of this process but not in here was left by an interrupted run and may be
/// taken over). Keyed by worker, not task id: one process may serve several stores.
static ACTIVE: Mutex<Option<HashSet<String>>> = Mutex::new(None);

fn is_active_here(worker: &str) -> bool {
    ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(|s| s.contains(worker))
}

/// Marks a worker of this process as executing a task while it lives.
pub(crate) struct ActiveGuard(String);

impl ActiveGuard {
    pub(crate) fn new(worker: &str) -> Self {
        ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(HashSet::new).insert(worker.to_owned());
        ActiveGuard(worker.to_owned())
    }
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        if let Some(set) = ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            set.remove(&self.0);
        }
    }
}

fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok().map(|h| h.trim().to_owned()))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// A new worker name: `host/pid/nonce`, unique within this process.
pub fn worker_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nonce = Timestamp::now().0 % 1_000_000;
    format!("{}/{}/{nonce}-{n}", host_name(), std::process::id())
}

/// Has the worker of a `running` task gone away (so the task may be resumed)?
pub fn is_abandoned(task: &Task, lease_seconds: u64, now: Timestamp) -> bool {
    let stale = now.0.saturating_sub(task.updated_at.0) > (lease_seconds as i64).saturating_mul(1000);
    let Some(worker) = task.worker.as_deref() else { return true };
    let mut parts = worker.split('/');
    let (host, pid) = (parts.next().unwrap_or(""), parts.next().and_then(|p| p.parse::<u32>().ok()));
    match pid {
        Some(pid) if host == host_name() => {
            if pid == std::process::id() {
                !is_active_here(worker)
            } else if std::path::Path::new("/proc/self").exists() {
                // Same host: a dead process is seen at once; a reused pid falls back to the lease.
                !std::path::Path::new(&format!("/proc/{pid}")).exists() || stale
            } else {
                stale
            }
        }
        _ => stale,
    }
}
