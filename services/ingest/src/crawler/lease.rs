//! Host leases: which process may visit a watched host now.
//!
//! Several watch processes (`zhiwen crawl --watch` on several machines, servers with
//! watching on) share the watched sites. A process visits a host's sites only while it
//! holds that host's lease, so one host is never fetched by two processes at once; a lease
//! has a time to live, so a process that dies without giving its hosts back loses them
//! when the ttl passes, and a visit that outlives a fraction of the ttl renews it.
//!
//! Two implementations of [`HostLeases`]: [`LocalLeases`] in the process's memory (the
//! embedded default, where one process watches: the lease only keeps two sites of one
//! host from being visited at once), and [`RedisLeases`], for processes that share a
//! Redis (the one of the index and the matching workers).

use std::collections::HashMap;
use std::hash::{BuildHasher, Hasher};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use futures::future::BoxFuture;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::Script;
use tokio::time::Instant;

use crate::error::{IngestError, Result};

/// A lease held on a host: the value only its holder knows, so that renewing and
/// releasing never touch a lease that expired and was taken by another process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lease {
    /// The host (`host_key`: host and port).
    pub host: String,
    /// This holder's token.
    pub token: String,
}

/// Who may visit a host now. Object-safe: the watcher keeps an `Arc<dyn HostLeases>`.
pub trait HostLeases: Send + Sync + std::fmt::Debug {
    /// Take `host`'s lease for `ttl`: `None` when another holder has it.
    fn acquire<'a>(&'a self, host: &'a str, ttl: Duration) -> BoxFuture<'a, Result<Option<Lease>>>;
    /// Extend `lease` to `ttl` from now if it is still held by its token: `false` when it
    /// was lost (expired, maybe taken by another holder).
    fn renew<'a>(&'a self, lease: &'a Lease, ttl: Duration) -> BoxFuture<'a, Result<bool>>;
    /// Give `lease` back if it is still held by its token (a lease already lost is left
    /// to its new holder).
    fn release<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<()>>;
}

/// A token unique to this lease: the process's random seed (std's hasher keys come from
/// the OS), its id and a counter.
pub fn new_token() -> String {
    static SEED: OnceLock<u64> = OnceLock::new();
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let seed = *SEED.get_or_init(|| {
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        h.write_u32(std::process::id());
        h.finish()
    });
    format!("{seed:016x}-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// Leases in this process's memory: enough where one process watches.
#[derive(Debug, Default)]
pub struct LocalLeases {
    held: Mutex<HashMap<String, (String, Instant)>>,
}

impl LocalLeases {
    /// No lease held.
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(&self, f: impl FnOnce(&mut HashMap<String, (String, Instant)>) -> T) -> T {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        held.retain(|_, (_, until)| *until > now);
        f(&mut held)
    }
}

impl HostLeases for LocalLeases {
    fn acquire<'a>(&'a self, host: &'a str, ttl: Duration) -> BoxFuture<'a, Result<Option<Lease>>> {
        let lease = self.with(|held| {
            if held.contains_key(host) {
                return None;
            }
            let token = new_token();
            held.insert(host.to_owned(), (token.clone(), Instant::now() + ttl));
            Some(Lease { host: host.to_owned(), token })
        });
        Box::pin(async move { Ok(lease) })
    }

    fn renew<'a>(&'a self, lease: &'a Lease, ttl: Duration) -> BoxFuture<'a, Result<bool>> {
        let kept = self.with(|held| match held.get_mut(&lease.host) {
            Some((token, until)) if *token == lease.token => {
                *until = Instant::now() + ttl;
                true
            }
            _ => false,
        });
        Box::pin(async move { Ok(kept) })
    }

    fn release<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<()>> {
        self.with(|held| {
            if held.get(&lease.host).is_some_and(|(token, _)| *token == lease.token) {
                held.remove(&lease.host);
            }
        });
        Box::pin(async { Ok(()) })
    }
}

/// Renew: `PEXPIRE` only while the value is still our token.
const RENEW: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
";

/// Release: delete only while the value is still our token.
const RELEASE: &str = r"
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
";

#[derive(Clone)]
enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

/// Leases in Redis, shared by every process that uses the same server and key prefix.
///
/// This is the single-instance lock pattern documented by Redis (`SET key token NX PX
/// ttl` to take, a compare-and-delete script to release, a compare-and-`PEXPIRE` script
/// to renew), one key per host, `{prefix}:watch:host:{host}`. It is not a consensus
/// protocol (no Redlock, no fencing tokens): a failover that loses a key, or a holder
/// paused past its ttl, can let two processes visit one host for a while. For watching
/// that costs at most a few duplicate polite requests (a page stored twice is the same
/// page), so the simple pattern is the right one. Every command touches one key, so a
/// Redis Cluster works as it is.
#[derive(Clone)]
pub struct RedisLeases {
    conn: Conn,
    prefix: String,
    renew: Script,
    release: Script,
}

impl std::fmt::Debug for RedisLeases {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisLeases").field("prefix", &self.prefix).finish_non_exhaustive()
    }
}

impl RedisLeases {
    /// Connect to the Redis at `url` (a cluster node when `cluster`), keys under
    /// `prefix`, each command bounded by `timeout`.
    pub async fn connect(url: &str, prefix: &str, cluster: bool, timeout: Duration) -> Result<Self> {
        let connect_err = |source| IngestError::Lease { op: "connect", host: String::new(), source };
        let conn = if cluster {
            let client = redis::cluster::ClusterClient::builder(vec![url])
                .connection_timeout(timeout)
                .response_timeout(timeout)
                .retries(1)
                .build()
                .map_err(connect_err)?;
            Conn::Cluster(client.get_async_connection().await.map_err(connect_err)?)
        } else {
            let client = redis::Client::open(url).map_err(connect_err)?;
            let config = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(timeout))
                .set_response_timeout(Some(timeout))
                .set_number_of_retries(1)
                .set_max_delay(Duration::from_millis(500));
            let manager = tokio::time::timeout(timeout * 2, ConnectionManager::new_with_config(client, config))
                .await
                .map_err(|_| {
                    connect_err(std::io::Error::new(std::io::ErrorKind::TimedOut, "connect timed out").into())
                })?
                .map_err(connect_err)?;
            Conn::Single(manager)
        };
        Ok(RedisLeases { conn, prefix: prefix.to_owned(), renew: Script::new(RENEW), release: Script::new(RELEASE) })
    }

    /// The key of `host`'s lease.
    pub fn key(&self, host: &str) -> String {
        format!("{}:watch:host:{host}", self.prefix)
    }

    async fn query<T: redis::FromRedisValue>(&self, cmd: &redis::Cmd) -> redis::RedisResult<T> {
        match self.conn.clone() {
            Conn::Single(mut c) => cmd.query_async(&mut c).await,
            Conn::Cluster(mut c) => cmd.query_async(&mut c).await,
        }
    }

    async fn script(&self, script: &Script, key: &str, token: &str, ms: Option<u64>) -> redis::RedisResult<i64> {
        let mut invocation = script.key(key);
        invocation.arg(token);
        if let Some(ms) = ms {
            invocation.arg(ms);
        }
        match self.conn.clone() {
            Conn::Single(mut c) => invocation.invoke_async(&mut c).await,
            Conn::Cluster(mut c) => invocation.invoke_async(&mut c).await,
        }
    }
}

fn millis(ttl: Duration) -> u64 {
    u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX).max(1)
}

impl HostLeases for RedisLeases {
    fn acquire<'a>(&'a self, host: &'a str, ttl: Duration) -> BoxFuture<'a, Result<Option<Lease>>> {
        Box::pin(async move {
            let token = new_token();
            let mut cmd = redis::cmd("SET");
            cmd.arg(self.key(host)).arg(&token).arg("NX").arg("PX").arg(millis(ttl));
            let set: Option<String> = self.query(&cmd).await.map_err(|source| IngestError::Lease {
                op: "acquire",
                host: host.to_owned(),
                source,
            })?;
            Ok(set.map(|_| Lease { host: host.to_owned(), token }))
        })
    }

    fn renew<'a>(&'a self, lease: &'a Lease, ttl: Duration) -> BoxFuture<'a, Result<bool>> {
        Box::pin(async move {
            let kept = self
                .script(&self.renew, &self.key(&lease.host), &lease.token, Some(millis(ttl)))
                .await
                .map_err(|source| IngestError::Lease { op: "renew", host: lease.host.clone(), source })?;
            Ok(kept == 1)
        })
    }

    fn release<'a>(&'a self, lease: &'a Lease) -> BoxFuture<'a, Result<()>> {
        Box::pin(async move {
            self.script(&self.release, &self.key(&lease.host), &lease.token, None)
                .await
                .map_err(|source| IngestError::Lease { op: "release", host: lease.host.clone(), source })?;
            Ok(())
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn local_leases_exclude_expire_and_check_their_token() {
        let leases = LocalLeases::new();
        let ttl = Duration::from_millis(200);
        let a = leases.acquire("h:1", ttl).await.unwrap().expect("free host taken");
        assert!(leases.acquire("h:1", ttl).await.unwrap().is_none(), "a held host is not taken twice");
        let b = leases.acquire("h:2", ttl).await.unwrap().expect("another host is free");
        assert_ne!(a.token, b.token);
        // Renewal keeps it past the first ttl.
        tokio::time::sleep(Duration::from_millis(150)).await;
        assert!(leases.renew(&a, ttl).await.unwrap());
        tokio::time::sleep(Duration::from_millis(100)).await;
        assert!(leases.acquire("h:1", ttl).await.unwrap().is_none());
        // Not renewed: it expires, another holder takes it, and the old token neither
        // renews nor releases the new holder's lease.
        tokio::time::sleep(Duration::from_millis(250)).await;
        let c = leases.acquire("h:1", ttl).await.unwrap().expect("an expired lease is free");
        assert!(!leases.renew(&a, ttl).await.unwrap());
        leases.release(&a).await.unwrap();
        assert!(leases.acquire("h:1", ttl).await.unwrap().is_none(), "a stale release left the lease alone");
        leases.release(&c).await.unwrap();
        assert!(leases.acquire("h:1", ttl).await.unwrap().is_some(), "released");
    }
}
