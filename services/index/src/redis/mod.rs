//! The production index on Redis (standalone or Redis Cluster).
//!
//! # Layout
//!
//! One `(family, value)` key of one namespace is a *field* of a bucket hash; the
//! posting list is the field's value. Storing millions of tiny posting lists as their
//! own Redis keys would cost ~70-90 bytes of key overhead each; packed as fields of
//! bucket hashes (the classic "hash bucketing" trick) they cost ~20-30 bytes.
//!
//! | key (binary) | type | content |
//! | --- | --- | --- |
//! | `{prefix}:p:{ns}:{G}` + 2..3 bucket bytes | hash | field: family code (1 byte) + value (8 bytes BE); value: doc ids (8 bytes BE each) or `BIG` |
//! | `{prefix}:d:{ns}:{dG}` | hash | field: doc id (8 bytes BE); value: the doc's keys, 9 bytes each |
//! | `{prefix}:c:{ns}` | string | stored (key, doc) entries (statistics) |
//! | `{prefix}:big:{ns}` | set | fields whose posting list became a big bucket |
//! | `{prefix}:w:{ns}` | string | a random token set by every write of the namespace ([`CandidateIndex::write_token`]) |
//! | `{prefix}:layout:{ns}` | string | the namespace's bucket bits, as it was written ([`RedisConfig::bucket_bits`]) |
//! | `{prefix}:common:{ns}:{family}:{min}` | string | the last answer of [`CandidateIndex::common_keys`]: the write token it was read at (8 bytes LE), then the keys (8 bytes LE each) |
//! | `{prefix}:marker` | string | the index's identity (a random id), present while the index holds its data (loss detection) |
//! | `{prefix}:gen` | string | a count of the writes, incremented after each write's data ([`CandidateIndex::generation`]; a restore from an earlier snapshot shows a smaller one) |
//! | `{prefix}:f:s:{fN}`, `{prefix}:fz:s`, `{prefix}:fv:s` | strings | the section filter: 64 bitmap shards, its size, its version ([`filter`]) |
//!
//! A key is mixed to 64 bits; its top [`RedisConfig::bucket_bits`] bits choose the
//! bucket and the top [`RedisConfig::group_bits`] of those the *slot group*, written
//! as a hash tag `{G}` so that all buckets of a group share one cluster slot.
//!
//! # Redis Cluster
//!
//! A lookup needs postings of unrelated keys, which necessarily live in many slots;
//! no key design can put them together without putting the whole index in one slot.
//! So instead every *command* touches one slot only, and the commands of one call are
//! sent together:
//!
//! - writes are Lua scripts over buckets of one slot group (one hash tag); on a
//!   standalone server a script may take buckets of any group (there is only one
//!   node), which saves per-call overhead;
//! - reads are one `HMGET` per bucket (measured faster than a read script: Lua's
//!   per-call conversions cost more than command dispatch);
//! - on a standalone server commands go in pipelines; on a cluster they are sent
//!   concurrently on the multiplexed cluster connection, which routes each to its
//!   slot's node (never a cross-slot pipeline or script).
//!
//! A document's own key list lives in one hash-tagged doc group, so reading and
//! replacing it is a single-slot operation. With the defaults there are
//! 1,024 groups per namespace, spread evenly over the 16,384 slots.
//!
//! # Writes, faults and retries
//!
//! `add_batch` reads the documents' previous key lists, removes the stale entries,
//! adds the new ones (scripts skip entries already present) and only then stores the
//! new key lists: every step is idempotent, so repeating an interrupted call converges.
//! Connection errors are returned as retryable [`IndexError::Redis`]; wrap the index
//! in [`crate::RetryingIndex`] to retry them. The `marker` key is checked before and
//! after each write: if the server lost its data (a restart without persistence, a
//! flush), the call fails with [`IndexError::Lost`] instead of reporting success for
//! writes into an index that is now partial. [`CandidateIndex::clear`] (which a
//! rebuild starts with) re-arms the marker with a new identity. Connecting arms it only
//! when it is absent, so a process that connects to an emptied server gets a new
//! identity, which the store's record of its index ([`CandidateIndex::identity`]) then
//! tells apart from the one it was indexed into.
//!
//! # Big buckets
//!
//! When adding a document would make a posting list reach
//! [`crate::IndexConfig::big_bucket_cap`] documents, the list is replaced by `BIG`,
//! the field is added to the `big` set, and lookups report it instead of expanding it.

mod backend;
mod filter;
mod filter_keys;
mod postings;
mod scripts;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisError, Script, Value};
use zhiwen_core::hash::mix64;
use zhiwen_core::{IndexFamily, IndexKey};

use self::filter::Geometry;
use crate::embedded::{pack_keys, unpack_key, unpack_keys};
use crate::lookup::Accumulator;
use crate::{
    last_wins, normalize_keys, CandidateIndex, DocId, FilterStats, IndexConfig, IndexError, IndexStats, LookupResult,
    Namespace, NamespaceStats, Result,
};

/// Entries (triples) per script call: bounds the argument list and the time one
/// script blocks the server.
const SCRIPT_ENTRIES: usize = 512;

/// Bits set by one `BITFIELD` command (bounds its argument list).
const FILTER_BITS_PER_COMMAND: usize = 4_096;

/// Commands per lookup pipeline (at least): a sampled 10 KB page (~700 keys) is sent
/// as one pipeline, not split into `pipeline_commands`-sized pieces that would each
/// cost a message to the connection task and a wake-up of the caller.
const LOOKUP_PIPELINE_COMMANDS: usize = 2_048;

/// Buckets one `common_keys` script reads (bounds the time it blocks the server), and
/// scripts sent at a time.
const COMMON_BUCKETS: usize = 64;
const COMMON_CALLS: usize = 256;

/// Settings of the Redis index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisConfig {
    /// `redis://host:port/db` (standalone) or the URL of any cluster node.
    pub url: String,
    /// Prefix of every key (no `{` or `}`: they would change the hash tags).
    pub prefix: String,
    /// Connect as a Redis Cluster client.
    pub cluster: bool,
    /// Buckets per namespace = 2^bucket_bits. Size it so that buckets hold tens to a
    /// few hundred fields (Redis keeps small hashes compact: raise
    /// `hash-max-listpack-entries` to 512 as `scripts/redis-dev.sh` does): about
    /// log2(entries / 32). A namespace keeps the value it was written with (recorded in
    /// Redis, read again with the index's identity) until it is cleared, so a new value
    /// takes effect at the next `zhiwen reindex`.
    pub bucket_bits: u8,
    /// Slot groups (hash tags) per namespace = 2^group_bits, at most `bucket_bits`.
    pub group_bits: u8,
    /// Commands per pipeline on a standalone server.
    pub pipeline_commands: usize,
    /// Pipelines (standalone) or commands (cluster) in flight at once.
    pub concurrency: usize,
    /// Connect and response timeout.
    pub timeout: Duration,
    /// Size in MB of the section filter (0: none), a Bloom filter of the sections
    /// namespace's keys that each process reads whole so that lookups skip the posting
    /// lists that cannot exist (see [`filter`]). Give it about 12 bits per stored key
    /// (`postings` in `zhiwen index stats`): 100k sections hold ~60M keys, 90 MB. The
    /// size is fixed when the namespace is cleared (or first written), so turning it on
    /// for an existing index takes `zhiwen reindex`; a process with 0 still keeps an
    /// existing filter up to date when it writes, but does not read it.
    pub section_filter_mb: u32,
    /// Settings shared with the other implementations.
    pub index: IndexConfig,
}

impl Default for RedisConfig {
    fn default() -> Self {
        RedisConfig {
            url: "redis://127.0.0.1:6379/".into(),
            prefix: "zw".into(),
            cluster: false,
            bucket_bits: 20,
            group_bits: 10,
            pipeline_commands: 512,
            concurrency: 4,
            timeout: Duration::from_secs(5),
            section_filter_mb: 0,
            index: IndexConfig::default(),
        }
    }
}

impl RedisConfig {
    /// The defaults with `url`.
    pub fn with_url(url: impl Into<String>) -> Self {
        RedisConfig { url: url.into(), ..Default::default() }
    }

    fn validate(&self) -> Result<()> {
        let bad = |m: String| Err(IndexError::Config(m));
        if self.prefix.contains(['{', '}']) {
            return bad(format!("key prefix {:?} must not contain '{{' or '}}'", self.prefix));
        }
        // More groups than the 16,384 cluster slots would not spread keys further.
        if !(self.group_bits >= 1 && self.group_bits <= self.bucket_bits.min(14) && self.bucket_bits <= 28) {
            return bad(format!(
                "need 1 <= group_bits ({}) <= 14, group_bits <= bucket_bits ({}) <= 28",
                self.group_bits, self.bucket_bits
            ));
        }
        if self.pipeline_commands == 0 || self.concurrency == 0 {
            return bad("pipeline_commands and concurrency must be positive".into());
        }
        if self.section_filter_mb > filter::MAX_MB {
            return bad(format!("section_filter_mb is at most {}, got {}", filter::MAX_MB, self.section_filter_mb));
        }
        if self.index.big_bucket_cap < 2 {
            return bad(format!("big_bucket_cap must be at least 2, got {}", self.index.big_bucket_cap));
        }
        Ok(())
    }
}

#[derive(Clone)]
enum Conn {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

/// The Redis implementation of [`CandidateIndex`].
#[derive(Clone)]
pub struct RedisIndex {
    config: RedisConfig,
    /// The URL without credentials, for messages.
    shown_url: String,
    conn: Conn,
    add_script: LuaScript,
    remove_script: LuaScript,
    common_script: LuaScript,
    group_prefixes: Arc<[Vec<u8>]>,
    filter: Arc<filter::Reader>,
    /// Each namespace's bucket bits as written (`{prefix}:layout:{ns}`).
    bucket_bits: Arc<[AtomicU8; 2]>,
}

/// A script with its source (to load it again after a server restart).
#[derive(Clone)]
struct LuaScript {
    script: Script,
    source: &'static str,
}

impl LuaScript {
    fn new(source: &'static str) -> Self {
        LuaScript { script: Script::new(source), source }
    }
}

impl std::fmt::Debug for RedisIndex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RedisIndex").field("url", &self.shown_url).field("prefix", &self.config.prefix).finish()
    }
}

/// One script call: keys of one slot group and its argument list.
struct ScriptCall {
    keys: Vec<Vec<u8>>,
    args: Vec<Vec<u8>>,
}

/// One posting entry to write or read.
struct Entry {
    place: Place,
    field: [u8; 9],
    doc: Option<DocId>,
    /// The caller's index of the key (for lookups).
    tag: usize,
}

/// Where an index key lives.
#[derive(Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
struct Place {
    group: u32,
    bucket: u32,
}

fn mix(x: u64) -> u64 {
    // splitmix64: spreads structured values (16-bit simhash blocks) evenly.
    mix64(x.wrapping_add(0x9E37_79B9_7F4A_7C15))
}

/// A key's 64-bit hash: its top bits choose the bucket, the section filter mixes it again.
fn key_hash(key: &IndexKey) -> u64 {
    mix(key.value ^ (u64::from(key.family.code()) << 56).rotate_left(7))
}

fn field(key: &IndexKey) -> [u8; 9] {
    let mut f = [0u8; 9];
    f[0] = key.family.code();
    f[1..].copy_from_slice(&key.value.to_be_bytes());
    f
}

fn show_url(url: &str) -> String {
    // Drop credentials: `redis://user:secret@host` -> `redis://host`.
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}{}", &url[..scheme + 3], &url[at + 1..])
        }
        _ => url.to_string(),
    }
}

impl RedisIndex {
    /// Connect, check that the server answers, and arm the loss marker. Fails with
    /// [`IndexError::Unavailable`] naming the URL when Redis cannot be reached.
    pub async fn connect(config: RedisConfig) -> Result<Self> {
        config.validate()?;
        let shown_url = show_url(&config.url);
        let unavailable = |source| IndexError::Unavailable { url: shown_url.clone(), source };
        let conn = if config.cluster {
            let client = redis::cluster::ClusterClient::builder(vec![config.url.as_str()])
                .connection_timeout(config.timeout)
                .response_timeout(config.timeout)
                .retries(2)
                .build()
                .map_err(|e| IndexError::Config(format!("bad Redis URL {shown_url}: {e}")))?;
            Conn::Cluster(client.get_async_connection().await.map_err(unavailable)?)
        } else {
            let client = redis::Client::open(config.url.as_str())
                .map_err(|e| IndexError::Config(format!("bad Redis URL {shown_url}: {e}")))?;
            let manager_config = ConnectionManagerConfig::new()
                .set_connection_timeout(Some(config.timeout))
                .set_response_timeout(Some(config.timeout))
                .set_number_of_retries(1)
                .set_max_delay(Duration::from_millis(500));
            let manager =
                tokio::time::timeout(config.timeout * 2, ConnectionManager::new_with_config(client, manager_config))
                    .await
                    .map_err(|_| {
                        unavailable(RedisError::from(std::io::Error::new(
                            std::io::ErrorKind::TimedOut,
                            "connect timed out",
                        )))
                    })?
                    .map_err(unavailable)?;
            Conn::Single(manager)
        };
        let index = RedisIndex {
            group_prefixes: Self::make_group_prefixes(&config),
            shown_url: shown_url.clone(),
            conn,
            add_script: LuaScript::new(scripts::ADD),
            remove_script: LuaScript::new(scripts::REMOVE),
            common_script: LuaScript::new(scripts::COMMON),
            filter: Arc::default(),
            bucket_bits: Arc::new([AtomicU8::new(config.bucket_bits), AtomicU8::new(config.bucket_bits)]),
            config,
        };
        let pong: String = index.query_one(redis::cmd("PING")).await.map_err(unavailable)?;
        if pong != "PONG" {
            return Err(IndexError::Corrupt(format!("PING to {shown_url} answered {pong:?}")));
        }
        index.arm_marker(false).await?;
        index.read_layout(false).await?;
        if let Some(geometry) = filter::Geometry::from_mb(index.config.section_filter_mb) {
            index.create_filter_if_empty(geometry).await?;
        }
        Ok(index)
    }

    /// The configuration.
    pub fn config(&self) -> &RedisConfig {
        &self.config
    }

    fn err(&self, op: &'static str) -> impl Fn(RedisError) -> IndexError + '_ {
        move |source| IndexError::Redis { url: self.shown_url.clone(), op, source }
    }

    fn key(&self, parts: &[&[u8]]) -> Vec<u8> {
        let mut k = self.config.prefix.as_bytes().to_vec();
        for p in parts {
            k.push(b':');
            k.extend_from_slice(p);
        }
        k
    }

    fn marker_key(&self) -> Vec<u8> {
        self.key(&[b"marker"])
    }

    /// See [`CandidateIndex::generation`].
    fn generation_key(&self) -> Vec<u8> {
        self.key(&[b"gen"])
    }

    /// A command counting a write in the generation (sent after the write's data).
    fn next_generation(&self) -> Cmd {
        let mut cmd = redis::cmd("INCR");
        cmd.arg(self.generation_key());
        cmd
    }

    fn counter_key(&self, ns: Namespace) -> Vec<u8> {
        self.key(&[b"c", ns.as_str().as_bytes()])
    }

    fn big_key(&self, ns: Namespace) -> Vec<u8> {
        self.key(&[b"big", ns.as_str().as_bytes()])
    }

    /// See [`CandidateIndex::write_token`].
    fn write_token_key(&self, ns: Namespace) -> Vec<u8> {
        self.key(&[b"w", ns.as_str().as_bytes()])
    }

    /// A command setting a new random write token of `ns` (random, not a count: a
    /// server that lost its data and counts again from 0 never repeats a token a reader
    /// holds).
    fn new_write_token(&self, ns: Namespace) -> Cmd {
        let mut cmd = redis::cmd("SET");
        cmd.arg(self.write_token_key(ns)).arg(rand::random::<u64>().max(1));
        cmd
    }

    /// The last answer of [`CandidateIndex::common_keys`] for these arguments.
    fn common_keys_key(&self, ns: Namespace, family: IndexFamily, min_docs: u32) -> Vec<u8> {
        let (family, min) = (family.code().to_string(), min_docs.to_string());
        self.key(&[b"common", ns.as_str().as_bytes(), family.as_bytes(), min.as_bytes()])
    }

    fn layout_key(&self, ns: Namespace) -> Vec<u8> {
        self.key(&[b"layout", ns.as_str().as_bytes()])
    }

    /// The bucket bits `ns` was written with.
    fn bits(&self, ns: Namespace) -> u8 {
        self.bucket_bits[ns.index()].load(Ordering::Relaxed)
    }

    /// Read each namespace's bucket bits from Redis (a namespace never written records
    /// the configured ones first). `force`: record the configured bits whatever Redis
    /// holds (after a namespace was cleared, see [`CandidateIndex::clear`]).
    async fn read_layout(&self, force: bool) -> Result<()> {
        for ns in Namespace::ALL {
            self.record_layout(ns, force).await?;
        }
        Ok(())
    }

    async fn record_layout(&self, ns: Namespace, force: bool) -> Result<()> {
        // One command (a cluster may reorder two): SET ... NX GET answers the value
        // already recorded, or nil when it recorded the configured one.
        let mut set = redis::cmd("SET");
        set.arg(self.layout_key(ns)).arg(self.config.bucket_bits);
        if !force {
            set.arg("NX").arg("GET");
        }
        let answer: Value = self.query_one(set).await.map_err(self.err("read layout"))?;
        let bits = match &answer {
            Value::Nil | Value::Okay => Some(self.config.bucket_bits),
            Value::BulkString(b) => std::str::from_utf8(b).ok().and_then(|v| v.parse::<u8>().ok()),
            _ => None,
        };
        let bits = bits.filter(|&b| b >= self.config.group_bits && b <= 28).ok_or_else(|| {
            IndexError::Corrupt(format!("the {} namespace's recorded bucket bits are {answer:?}", ns.as_str()))
        })?;
        if bits != self.config.bucket_bits {
            tracing::info!(
                namespace = ns.as_str(),
                written = bits,
                configured = self.config.bucket_bits,
                "the namespace keeps the bucket bits it was written with until `zhiwen reindex`"
            );
        }
        self.bucket_bits[ns.index()].store(bits, Ordering::Relaxed);
        Ok(())
    }

    fn place(&self, ns: Namespace, key: &IndexKey) -> Place {
        let h = key_hash(key);
        let bits = self.bits(ns);
        let bucket = (h >> (64 - u32::from(bits))) as u32;
        let group = bucket >> (bits - self.config.group_bits);
        Place { group, bucket }
    }

    /// Every bucket key of `ns`, a group at a time (all of a group's buckets share its
    /// hash tag, so one group's keys go in one single-slot command).
    fn bucket_keys_by_group(&self, ns: Namespace) -> impl Iterator<Item = Vec<Vec<u8>>> + '_ {
        let groups = 1u32 << self.config.group_bits;
        let per_group = 1u32 << (self.bits(ns) - self.config.group_bits);
        (0..groups).map(move |group| {
            (0..per_group).map(|low| self.bucket_key(ns, Place { group, bucket: (group * per_group) | low })).collect()
        })
    }

    fn bucket_key(&self, ns: Namespace, place: Place) -> Vec<u8> {
        let low_bits = self.bits(ns) - self.config.group_bits;
        let low = place.bucket & ((1u32 << low_bits) - 1);
        let low_bytes = low.to_be_bytes();
        let width = usize::from(low_bits.div_ceil(8)).max(1);
        let groups = 1usize << self.config.group_bits;
        // Prefixes are precomputed: lookups build ~1,500 keys per page.
        let prefix = &self.group_prefixes[ns.index() * groups + place.group as usize];
        let mut k = Vec::with_capacity(prefix.len() + width);
        k.extend_from_slice(prefix);
        k.extend_from_slice(&low_bytes[4 - width..]);
        k
    }

    /// `{prefix}:p:{ns}:{G}` for every namespace and group.
    fn make_group_prefixes(config: &RedisConfig) -> Arc<[Vec<u8>]> {
        let mut out = Vec::new();
        for ns in Namespace::ALL {
            for g in 0..1u32 << config.group_bits {
                out.push(format!("{}:p:{}:{{{g:x}}}", config.prefix, ns.as_str()).into_bytes());
            }
        }
        out.into()
    }

    fn doc_group_key(&self, ns: Namespace, doc: DocId) -> Vec<u8> {
        let group = mix(doc) >> (64 - u32::from(self.config.group_bits));
        self.doc_group_key_of(ns, group as u32)
    }

    fn doc_group_key_of(&self, ns: Namespace, group: u32) -> Vec<u8> {
        self.key(&[b"d", ns.as_str().as_bytes(), format!("{{d{group:x}}}").as_bytes()])
    }

    async fn query_one<T: redis::FromRedisValue>(&self, cmd: Cmd) -> std::result::Result<T, RedisError> {
        match &self.conn {
            Conn::Single(c) => cmd.query_async(&mut c.clone()).await,
            Conn::Cluster(c) => cmd.query_async(&mut c.clone()).await,
        }
    }

    /// Run independent single-slot commands; results in order.
    async fn run(&self, op: &'static str, cmds: Vec<Cmd>) -> Result<Vec<Value>> {
        self.run_with(op, cmds, self.config.pipeline_commands).await
    }

    /// [`Self::run`] with pipelines of up to `per_pipe` commands (standalone server).
    async fn run_with(&self, op: &'static str, cmds: Vec<Cmd>, per_pipe: usize) -> Result<Vec<Value>> {
        if cmds.is_empty() {
            return Ok(Vec::new());
        }
        let err = self.err(op);
        match &self.conn {
            Conn::Single(c) => {
                let per_pipe = per_pipe.max(1);
                let mut pipes = Vec::with_capacity(cmds.len().div_ceil(per_pipe));
                let mut pipe = Pipeline::with_capacity(per_pipe.min(cmds.len()));
                for cmd in cmds {
                    pipe.add_command(cmd);
                    if pipe.len() == per_pipe {
                        pipes.push(std::mem::replace(&mut pipe, Pipeline::with_capacity(per_pipe)));
                    }
                }
                if !pipe.is_empty() {
                    pipes.push(pipe);
                }
                let results: Vec<Vec<Value>> = futures::stream::iter(pipes)
                    .map(|pipe| {
                        let mut conn = c.clone();
                        async move { pipe.query_async::<Vec<Value>>(&mut conn).await }
                    })
                    .buffered(self.config.concurrency)
                    .try_collect()
                    .await
                    .map_err(&err)?;
                Ok(results.into_iter().flatten().collect())
            }
            Conn::Cluster(c) => futures::stream::iter(cmds)
                .map(|cmd| {
                    let mut conn = c.clone();
                    async move { cmd.query_async::<Value>(&mut conn).await }
                })
                .buffered(self.config.concurrency * 16)
                .try_collect()
                .await
                .map_err(&err),
        }
    }

    /// Run script calls, loading the script again if the server lost it (a restart).
    async fn run_scripts(&self, op: &'static str, script: &LuaScript, calls: &[ScriptCall]) -> Result<Vec<Value>> {
        let build = |call: &ScriptCall| {
            let mut cmd = redis::cmd("EVALSHA");
            cmd.arg(script.script.get_hash()).arg(call.keys.len());
            for k in &call.keys {
                cmd.arg(k.as_slice());
            }
            for a in &call.args {
                cmd.arg(a.as_slice());
            }
            cmd
        };
        match self.run(op, calls.iter().map(build).collect()).await {
            Err(IndexError::Redis { source, .. })
                if source.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) =>
            {
                self.load_script(op, script).await?;
                self.run(op, calls.iter().map(build).collect()).await
            }
            other => other,
        }
    }

    async fn load_script(&self, op: &'static str, script: &LuaScript) -> Result<()> {
        let mut cmd = redis::cmd("SCRIPT");
        cmd.arg("LOAD").arg(script.source);
        match &self.conn {
            Conn::Single(c) => {
                let _: String = cmd.query_async(&mut c.clone()).await.map_err(self.err(op))?;
            }
            Conn::Cluster(c) => {
                // Every primary needs it: route to all of them.
                let routing = redis::cluster_routing::RoutingInfo::MultiNode((
                    redis::cluster_routing::MultipleNodeRoutingInfo::AllMasters,
                    None,
                ));
                c.clone().route_command(cmd, routing).await.map_err(self.err(op))?;
            }
        }
        Ok(())
    }

    /// Set the marker to a new identity (unconditionally after a clear; only if absent
    /// at connect).
    async fn arm_marker(&self, force: bool) -> Result<()> {
        let mut cmd = redis::cmd("SET");
        cmd.arg(self.marker_key()).arg(crate::new_identity());
        if !force {
            cmd.arg("NX");
        }
        let _: Value = self.query_one(cmd).await.map_err(self.err("arm marker"))?;
        Ok(())
    }

    fn marker_cmd(&self) -> Cmd {
        let mut cmd = redis::cmd("EXISTS");
        cmd.arg(self.marker_key());
        cmd
    }

    fn check_marker(&self, v: &Value) -> Result<()> {
        match v {
            Value::Int(1) => Ok(()),
            Value::Int(_) => Err(IndexError::Lost { url: self.shown_url.clone(), prefix: self.config.prefix.clone() }),
            other => Err(IndexError::Corrupt(format!("EXISTS answered {other:?}"))),
        }
    }

    async fn ensure_marker(&self, op: &'static str) -> Result<()> {
        let v: Value = self.query_one(self.marker_cmd()).await.map_err(self.err(op))?;
        self.check_marker(&v)
    }
}

/// Sum of `used_memory` over every INFO text in `v`.
fn used_memory(v: &Value) -> u64 {
    match v {
        Value::BulkString(b) => String::from_utf8_lossy(b)
            .lines()
            .find_map(|l| l.strip_prefix("used_memory:"))
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(0),
        Value::VerbatimString { text, .. } => used_memory(&Value::BulkString(text.clone().into_bytes())),
        Value::Array(items) | Value::Set(items) => items.iter().map(used_memory).sum(),
        Value::Map(pairs) => pairs.iter().map(|(_, v)| used_memory(v)).sum(),
        _ => 0,
    }
}

/// The filter size stored in Redis (`None`: no filter).
fn stored_geometry(v: Option<&Value>) -> Result<Option<Geometry>> {
    let Some(v) = v else { return Ok(None) };
    let bits = int(v)?;
    Ok(u64::try_from(bits).ok().and_then(Geometry::from_bits))
}

fn int(v: &Value) -> Result<i64> {
    match v {
        Value::Int(n) => Ok(*n),
        Value::Nil => Ok(0),
        Value::BulkString(b) => std::str::from_utf8(b)
            .ok()
            .and_then(|s| s.parse().ok())
            .ok_or_else(|| IndexError::Corrupt(format!("expected an integer, got {b:?}"))),
        other => Err(IndexError::Corrupt(format!("expected an integer, got {other:?}"))),
    }
}
