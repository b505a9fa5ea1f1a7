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
//! | `{prefix}:marker` | string | the index's identity (a random id), present while the index holds its data (loss detection) |
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

mod filter;
mod scripts;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use futures::{StreamExt, TryStreamExt};
use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisError, Script, Value};
use zhiwen_core::IndexKey;

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

/// Settings of the Redis index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedisConfig {
    /// `redis://host:port/db` (standalone) or the URL of any cluster node.
    pub url: String,
    /// Prefix of every key (no `{` or `}`: they would change the hash tags).
    pub prefix: String,
    /// Connect as a Redis Cluster client.
    pub cluster: bool,
    /// Buckets per namespace = 2^bucket_bits. Size it so that buckets hold at most a
    /// few hundred fields (Redis keeps small hashes compact: raise
    /// `hash-max-listpack-entries` to 512 as `scripts/redis-dev.sh` does).
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
    group_prefixes: Arc<[Vec<u8>]>,
    filter: Arc<filter::Reader>,
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

fn mix(mut x: u64) -> u64 {
    // splitmix64 finaliser: spreads structured values (16-bit simhash blocks) evenly.
    x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    x ^ (x >> 31)
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
            filter: Arc::default(),
            config,
        };
        let pong: String = index.query_one(redis::cmd("PING")).await.map_err(unavailable)?;
        if pong != "PONG" {
            return Err(IndexError::Corrupt(format!("PING to {shown_url} answered {pong:?}")));
        }
        index.arm_marker(false).await?;
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

    fn counter_key(&self, ns: Namespace) -> Vec<u8> {
        self.key(&[b"c", ns.as_str().as_bytes()])
    }

    fn big_key(&self, ns: Namespace) -> Vec<u8> {
        self.key(&[b"big", ns.as_str().as_bytes()])
    }

    fn place(&self, key: &IndexKey) -> Place {
        let h = key_hash(key);
        let bucket = (h >> (64 - u32::from(self.config.bucket_bits))) as u32;
        let group = bucket >> (self.config.bucket_bits - self.config.group_bits);
        Place { group, bucket }
    }

    fn bucket_key(&self, ns: Namespace, place: Place) -> Vec<u8> {
        let low_bits = self.config.bucket_bits - self.config.group_bits;
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

    /// Group entries into script calls whose keys share one slot: one slot group per
    /// call on a cluster; on a standalone server any buckets may share a call, which
    /// saves per-command overhead. Each entry becomes `(key index, field[, doc])`
    /// arguments; the tags tell which entry each argument group came from.
    fn script_calls(&self, ns: Namespace, entries: Vec<Entry>, lead: Option<Vec<u8>>) -> Vec<(ScriptCall, Vec<usize>)> {
        let mut by_scope: BTreeMap<u32, Vec<Entry>> = BTreeMap::new();
        for e in entries {
            let scope = if self.config.cluster { e.place.group } else { 0 };
            by_scope.entry(scope).or_default().push(e);
        }
        let mut calls = Vec::new();
        for (_, mut scope) in by_scope {
            scope.sort_unstable_by_key(|e| e.place.bucket);
            for chunk in scope.chunks(SCRIPT_ENTRIES) {
                let mut keys: Vec<Vec<u8>> = Vec::new();
                let mut index: HashMap<u32, usize> = HashMap::new();
                let mut args = Vec::with_capacity(chunk.len() * 3 + 1);
                let mut tags = Vec::with_capacity(chunk.len());
                if let Some(lead) = &lead {
                    args.push(lead.clone());
                }
                for e in chunk {
                    let i = *index.entry(e.place.bucket).or_insert_with(|| {
                        keys.push(self.bucket_key(ns, e.place));
                        keys.len()
                    });
                    args.push(i.to_string().into_bytes());
                    args.push(e.field.to_vec());
                    if let Some(doc) = e.doc {
                        args.push(doc.to_be_bytes().to_vec());
                    }
                    tags.push(e.tag);
                }
                calls.push((ScriptCall { keys, args }, tags));
            }
        }
        calls
    }

    /// The stored key lists of `docs` (None when not indexed).
    async fn old_keys(&self, ns: Namespace, docs: &[DocId]) -> Result<HashMap<DocId, Vec<IndexKey>>> {
        let mut by_group: BTreeMap<Vec<u8>, Vec<DocId>> = BTreeMap::new();
        for &doc in docs {
            by_group.entry(self.doc_group_key(ns, doc)).or_default().push(doc);
        }
        let mut cmds = Vec::with_capacity(by_group.len());
        let mut order = Vec::with_capacity(by_group.len());
        for (key, docs) in by_group {
            let mut cmd = redis::cmd("HMGET");
            cmd.arg(key);
            for d in &docs {
                cmd.arg(&d.to_be_bytes()[..]);
            }
            cmds.push(cmd);
            order.push(docs);
        }
        let values = self.run("read document keys", cmds).await?;
        let mut out = HashMap::new();
        for (docs, value) in order.into_iter().zip(values) {
            let Value::Array(items) = value else {
                return Err(IndexError::Corrupt(format!("HMGET answered {value:?}")));
            };
            for (doc, item) in docs.into_iter().zip(items) {
                match item {
                    Value::Nil => {}
                    Value::BulkString(blob) => {
                        let keys = unpack_keys(&blob)
                            .ok_or_else(|| IndexError::Corrupt(format!("bad key list of document {doc}")))?;
                        out.insert(doc, keys);
                    }
                    other => return Err(IndexError::Corrupt(format!("document {doc}: {other:?}"))),
                }
            }
        }
        Ok(out)
    }

    fn filter_size_key(&self) -> Vec<u8> {
        self.key(&[b"fz", Namespace::Sections.as_str().as_bytes()])
    }

    fn filter_version_key(&self) -> Vec<u8> {
        self.key(&[b"fv", Namespace::Sections.as_str().as_bytes()])
    }

    fn filter_shard_key(&self, shard: u32) -> Vec<u8> {
        self.key(&[b"f", Namespace::Sections.as_str().as_bytes(), format!("{{f{shard:x}}}").as_bytes()])
    }

    /// `command shard-key` for every shard of the section filter, in shard order.
    fn per_filter_shard(&self, command: &str) -> Vec<Cmd> {
        (0..filter::SHARDS)
            .map(|shard| {
                let mut cmd = redis::cmd(command);
                cmd.arg(self.filter_shard_key(shard));
                cmd
            })
            .collect()
    }

    /// Give an empty sections namespace a filter of `geometry`. A namespace that holds
    /// keys keeps what it has: a filter made now would not hold them.
    async fn create_filter_if_empty(&self, geometry: Geometry) -> Result<()> {
        let mut get = redis::cmd("GET");
        get.arg(self.counter_key(Namespace::Sections));
        let stored: Value = self.query_one(get).await.map_err(self.err("create section filter"))?;
        if int(&stored)? != 0 {
            return Ok(());
        }
        let mut set = redis::cmd("SET");
        set.arg(self.filter_size_key()).arg(geometry.bits).arg("NX");
        let _: Value = self.query_one(set).await.map_err(self.err("create section filter"))?;
        Ok(())
    }

    /// After the sections namespace was emptied: a version no snapshot has (the clock, so
    /// that it also differs from versions counted before a server lost its data), and
    /// this process's filter size, or none.
    async fn reset_filter(&self) -> Result<()> {
        let now = SystemTime::now().duration_since(UNIX_EPOCH).map_or(1, |d| d.as_nanos() as i64 & i64::MAX);
        let mut version = redis::cmd("SET");
        version.arg(self.filter_version_key()).arg(now);
        let size = match Geometry::from_mb(self.config.section_filter_mb) {
            Some(geometry) => {
                let mut cmd = redis::cmd("SET");
                cmd.arg(self.filter_size_key()).arg(geometry.bits);
                cmd
            }
            None => {
                let mut cmd = redis::cmd("UNLINK");
                cmd.arg(self.filter_size_key());
                cmd
            }
        };
        self.run("reset section filter", vec![version, size]).await?;
        Ok(())
    }

    /// Check the marker before a write; for the sections namespace also read the size
    /// of its filter, which every writer keeps up to date whatever its own configuration.
    async fn begin_write(&self, ns: Namespace, op: &'static str) -> Result<Option<Geometry>> {
        if ns != Namespace::Sections {
            self.ensure_marker(op).await?;
            return Ok(None);
        }
        let mut size = redis::cmd("GET");
        size.arg(self.filter_size_key());
        let values = self.run(op, vec![self.marker_cmd(), size]).await?;
        self.check_marker(values.first().unwrap_or(&Value::Nil))?;
        stored_geometry(values.get(1))
    }

    /// Set the filter bits of `keys`, then bump the filter's version; both before the
    /// keys' postings are written (the order [`filter`] relies on).
    async fn add_to_filter<'k>(&self, geometry: Geometry, keys: impl Iterator<Item = &'k IndexKey>) -> Result<()> {
        let mut by_shard: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
        for key in keys {
            for (shard, bit) in geometry.probes(key_hash(key)) {
                by_shard.entry(shard).or_default().push(bit);
            }
        }
        let mut cmds = Vec::new();
        for (shard, mut bits) in by_shard {
            bits.sort_unstable();
            bits.dedup();
            for chunk in bits.chunks(FILTER_BITS_PER_COMMAND) {
                let mut cmd = redis::cmd("BITFIELD");
                cmd.arg(self.filter_shard_key(shard));
                for bit in chunk {
                    cmd.arg("SET").arg("u1").arg(*bit).arg(1);
                }
                cmds.push(cmd);
            }
        }
        self.run("set section filter bits", cmds).await?;
        let mut bump = redis::cmd("INCR");
        bump.arg(self.filter_version_key());
        self.run("bump section filter version", vec![bump]).await?;
        Ok(())
    }

    /// The section filter a lookup uses: the current snapshot when it is fresh, else a
    /// new one, loaded by one lookup at a time and at most once per
    /// [`filter::refresh_interval`]. `None` (read every key) when this process reads no
    /// filter, the index has none, or another lookup is loading it.
    async fn filter_snapshot(&self) -> Result<Option<Arc<filter::Snapshot>>> {
        if self.config.section_filter_mb == 0 {
            return Ok(None);
        }
        if let Some(snapshot) = self.filter.fresh() {
            return Ok(Some(snapshot));
        }
        let Ok(mut last_load) = self.filter.loading.try_lock() else { return Ok(None) };
        if let Some(snapshot) = self.filter.fresh() {
            return Ok(Some(snapshot));
        }
        if last_load.is_some_and(|t| t.elapsed() < filter::refresh_interval(self.config.section_filter_mb)) {
            return Ok(None);
        }
        *last_load = Some(Instant::now());
        let snapshot = self.load_filter().await?;
        self.filter.replace(snapshot.clone());
        Ok(snapshot)
    }

    async fn load_filter(&self) -> Result<Option<Arc<filter::Snapshot>>> {
        let mut version = redis::cmd("GET");
        version.arg(self.filter_version_key());
        let mut size = redis::cmd("GET");
        size.arg(self.filter_size_key());
        // The version before the bits: the bits read next hold every write it counts.
        let head = self.run("load section filter", vec![version, size]).await?;
        let version = head.first().map(int).transpose()?.unwrap_or(0);
        let Some(geometry) = stored_geometry(head.get(1))? else {
            if !self.filter.warned.swap(true, std::sync::atomic::Ordering::Relaxed) {
                tracing::warn!(
                    url = %self.shown_url,
                    prefix = %self.config.prefix,
                    "section_filter_mb is set but the index was built without a section filter: \
                     lookups read every key until `zhiwen reindex` rebuilds it with one"
                );
            }
            return Ok(None);
        };
        let shards = self
            .run("load section filter", self.per_filter_shard("GET"))
            .await?
            .into_iter()
            .map(|v| match v {
                Value::Nil => Ok(Vec::new()),
                Value::BulkString(bytes) => Ok(bytes),
                other => Err(IndexError::Corrupt(format!("section filter shard: {other:?}"))),
            })
            .collect::<Result<Vec<_>>>()?;
        let snapshot = filter::Snapshot::new(version, geometry, shards);
        let fill = snapshot.fill();
        if fill > 0.5 {
            tracing::warn!(
                fill,
                "the section filter is more than half full, so lookups skip few keys: \
                 raise section_filter_mb and run `zhiwen reindex`"
            );
        }
        tracing::debug!(version, fill, "section filter loaded");
        Ok(Some(Arc::new(snapshot)))
    }

    /// The section filter's size and the bits set (`BITCOUNT` on the server: the filter
    /// is not transferred), or `None` when the index has no filter.
    async fn filter_stats(&self) -> Result<Option<FilterStats>> {
        let mut size = redis::cmd("GET");
        size.arg(self.filter_size_key());
        let v: Value = self.query_one(size).await.map_err(self.err("stats"))?;
        let Some(geometry) = stored_geometry(Some(&v))? else { return Ok(None) };
        let mut bits_set = 0u64;
        for v in self.run("stats", self.per_filter_shard("BITCOUNT")).await? {
            bits_set += int(&v)?.max(0) as u64;
        }
        Ok(Some(FilterStats { bits: geometry.bits, bits_set }))
    }

    /// Read the postings of `placed` (sorted by place) into `acc`, one `HMGET` per
    /// bucket, in pipelines that start with the `head` commands; returns their replies.
    async fn read_postings(
        &self,
        ns: Namespace,
        head: Vec<Cmd>,
        placed: &[(Place, IndexKey)],
        acc: &mut Accumulator,
    ) -> Result<Vec<Value>> {
        let mut cmds = head;
        let head_len = cmds.len();
        let mut spans = Vec::with_capacity(placed.len());
        for same in placed.chunk_by(|a, b| a.0 == b.0) {
            let mut cmd = redis::cmd("HMGET");
            cmd.arg(self.bucket_key(ns, same[0].0));
            for (_, k) in same {
                cmd.arg(&field(k)[..]);
            }
            cmds.push(cmd);
            spans.push(same);
        }
        // A sampled 10 KB page is one pipeline: one write, one reply, one round trip.
        let per_pipe = self.config.pipeline_commands.max(LOOKUP_PIPELINE_COMMANDS);
        let mut values = self.run_with("lookup", cmds, per_pipe).await?;
        let postings = values.split_off(head_len.min(values.len()));
        for (same, value) in spans.into_iter().zip(postings) {
            let Value::Array(items) = value else {
                return Err(IndexError::Corrupt(format!("HMGET answered {value:?}")));
            };
            if items.len() != same.len() {
                return Err(IndexError::Corrupt(format!("HMGET of {} fields answered {}", same.len(), items.len())));
            }
            for (&(_, key), item) in same.iter().zip(items) {
                match item {
                    Value::Nil => {}
                    Value::BulkString(b) if b == b"BIG" => acc.big(key),
                    Value::BulkString(b) if b.len() % 8 == 0 => {
                        acc.posting(
                            key.family,
                            b.chunks_exact(8).map(|id| u64::from_be_bytes(id.try_into().unwrap_or([0; 8]))),
                        );
                    }
                    other => return Err(IndexError::Corrupt(format!("posting of {key:?}: {other:?}"))),
                }
            }
        }
        Ok(values)
    }

    /// Record statistics and big buckets, and check the marker after a write.
    async fn finish_write(&self, ns: Namespace, delta: i64, big: Vec<Vec<u8>>) -> Result<()> {
        let mut cmds = vec![self.marker_cmd()];
        if delta != 0 {
            let mut cmd = redis::cmd("INCRBY");
            cmd.arg(self.counter_key(ns)).arg(delta);
            cmds.push(cmd);
        }
        if !big.is_empty() {
            let mut cmd = redis::cmd("SADD");
            cmd.arg(self.big_key(ns));
            for f in big {
                cmd.arg(f);
            }
            cmds.push(cmd);
        }
        let values = self.run("record statistics", cmds).await?;
        self.check_marker(values.first().unwrap_or(&Value::Nil))
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

impl RedisIndex {
    /// Look up normalised keys, sampled at `modulus` already.
    async fn lookup_keys(
        &self,
        ns: Namespace,
        keys: Vec<IndexKey>,
        limit: usize,
        modulus: u64,
    ) -> Result<LookupResult> {
        // One HMGET per bucket (one slot each); measured faster than reading the same
        // fields from a Lua script, whose per-call conversions cost more than command
        // dispatch. Keys sorted by bucket so that keys sharing a bucket share a command.
        let mut placed: Vec<(Place, IndexKey)> = keys.iter().map(|k| (self.place(k), *k)).collect();
        placed.sort_unstable();
        let snapshot = if ns == Namespace::Sections { self.filter_snapshot().await? } else { None };
        let (read, skipped): (Vec<_>, Vec<_>) = match &snapshot {
            Some(filter) => placed.into_iter().partition(|(_, k)| filter.may_contain(key_hash(k))),
            None => (placed, Vec::new()),
        };
        let mut head = vec![self.marker_cmd()];
        if snapshot.is_some() {
            let mut version = redis::cmd("GET");
            version.arg(self.filter_version_key());
            head.push(version);
        }
        let mut acc = Accumulator::with_capacity(read.len() + skipped.len());
        let head = self.read_postings(ns, head, &read, &mut acc).await?;
        self.check_marker(head.first().unwrap_or(&Value::Nil))?;
        if let Some(filter) = &snapshot {
            // Another version: a write finished since the snapshot, and the keys it
            // skipped may now have postings.
            if head.get(1).map(int).transpose()?.unwrap_or(0) != filter.version {
                filter.mark_stale();
                self.read_postings(ns, Vec::new(), &skipped, &mut acc).await?;
            }
        }
        Ok(acc.finish_sampled(keys.len(), limit, modulus))
    }
}

#[async_trait]
impl CandidateIndex for RedisIndex {
    fn backend(&self) -> &'static str {
        "redis"
    }

    async fn add_batch(&self, ns: Namespace, docs: &[(DocId, Vec<IndexKey>)]) -> Result<()> {
        if docs.is_empty() {
            return Ok(());
        }
        let filter = self.begin_write(ns, "add").await?;
        let docs = last_wins(docs);
        let ids: Vec<DocId> = docs.iter().map(|d| d.0).collect();
        let old = self.old_keys(ns, &ids).await?;
        // Documents indexed again with the same keys (a page matched again) change nothing.
        let docs: Vec<_> =
            docs.into_iter().filter(|(doc, keys)| old.get(doc).is_none_or(|o| o[..] != keys[..])).collect();
        if docs.is_empty() {
            return Ok(());
        }

        let mut stale = Vec::new();
        let mut fresh = Vec::new();
        for (doc, keys) in &docs {
            if let Some(old_keys) = old.get(doc) {
                let new: HashSet<&IndexKey> = keys.iter().collect();
                for k in old_keys.iter().filter(|k| !new.contains(k)) {
                    stale.push(Entry { place: self.place(k), field: field(k), doc: Some(*doc), tag: 0 });
                }
            }
            for k in keys {
                fresh.push(Entry { place: self.place(k), field: field(k), doc: Some(*doc), tag: 0 });
            }
        }
        if let Some(geometry) = filter {
            self.add_to_filter(geometry, docs.iter().flat_map(|(_, keys)| keys.iter())).await?;
        }
        let mut delta = 0i64;
        if !stale.is_empty() {
            let calls: Vec<ScriptCall> = self.script_calls(ns, stale, None).into_iter().map(|c| c.0).collect();
            for v in self.run_scripts("remove stale keys", &self.remove_script, &calls).await? {
                delta -= int(&v)?;
            }
        }
        let cap = self.config.index.big_bucket_cap.to_string().into_bytes();
        let calls: Vec<ScriptCall> = self.script_calls(ns, fresh, Some(cap)).into_iter().map(|c| c.0).collect();
        let mut big = Vec::new();
        for v in self.run_scripts("add keys", &self.add_script, &calls).await? {
            let Value::Array(items) = v else {
                return Err(IndexError::Corrupt(format!("add script answered {v:?}")));
            };
            let mut items = items.into_iter();
            delta += int(&items.next().unwrap_or(Value::Nil))?;
            for item in items {
                if let Value::BulkString(f) = item {
                    big.push(f);
                }
            }
        }

        let mut by_group: BTreeMap<Vec<u8>, Vec<&(DocId, Vec<IndexKey>)>> = BTreeMap::new();
        for d in &docs {
            by_group.entry(self.doc_group_key(ns, d.0)).or_default().push(d);
        }
        let cmds = by_group
            .into_iter()
            .map(|(key, docs)| {
                let mut cmd = redis::cmd("HSET");
                cmd.arg(key);
                for (doc, keys) in docs {
                    cmd.arg(&doc.to_be_bytes()[..]).arg(pack_keys(keys));
                }
                cmd
            })
            .collect();
        self.run("store document keys", cmds).await?;
        self.finish_write(ns, delta, big).await
    }

    async fn remove(&self, ns: Namespace, doc: DocId) -> Result<bool> {
        self.ensure_marker("remove").await?;
        let old = self.old_keys(ns, &[doc]).await?;
        let Some(keys) = old.get(&doc) else {
            return Ok(false);
        };
        let entries =
            keys.iter().map(|k| Entry { place: self.place(k), field: field(k), doc: Some(doc), tag: 0 }).collect();
        let calls: Vec<ScriptCall> = self.script_calls(ns, entries, None).into_iter().map(|c| c.0).collect();
        let mut delta = 0;
        for v in self.run_scripts("remove keys", &self.remove_script, &calls).await? {
            delta -= int(&v)?;
        }
        let mut cmd = redis::cmd("HDEL");
        cmd.arg(self.doc_group_key(ns, doc)).arg(&doc.to_be_bytes()[..]);
        self.run("remove document", vec![cmd]).await?;
        self.finish_write(ns, delta, Vec::new()).await?;
        Ok(true)
    }

    async fn lookup(&self, ns: Namespace, keys: &[IndexKey], limit: usize) -> Result<LookupResult> {
        let (keys, modulus) = crate::sample_query_keys(normalize_keys(keys), self.config.index.query_key_budget);
        self.lookup_keys(ns, keys, limit, modulus).await
    }

    async fn lookup_sampled(&self, ns: Namespace, keys: &[IndexKey], modulus: u64) -> Result<LookupResult> {
        self.lookup_keys(ns, normalize_keys(keys), usize::MAX, modulus).await
    }

    fn query_sample_modulus(&self, fixed: usize, winnowed: usize) -> u64 {
        crate::query_sample_modulus(fixed, winnowed, self.config.index.query_key_budget)
    }

    async fn stats(&self) -> Result<IndexStats> {
        let groups = 1u32 << self.config.group_bits;
        let mut cmds = Vec::new();
        for ns in Namespace::ALL {
            let mut get = redis::cmd("GET");
            get.arg(self.counter_key(ns));
            let mut scard = redis::cmd("SCARD");
            scard.arg(self.big_key(ns));
            cmds.push(get);
            cmds.push(scard);
            for g in 0..groups {
                let mut hlen = redis::cmd("HLEN");
                hlen.arg(self.doc_group_key_of(ns, g));
                cmds.push(hlen);
            }
        }
        let values = self.run("stats", cmds).await?;
        let per_ns = values.len() / 2;
        let mut namespaces = Vec::new();
        for (i, ns) in Namespace::ALL.into_iter().enumerate() {
            let v = &values[i * per_ns..(i + 1) * per_ns];
            let documents = v[2..].iter().map(int).sum::<Result<i64>>()?;
            namespaces.push(NamespaceStats {
                namespace: ns,
                documents: documents.max(0) as u64,
                postings: int(&v[0])?.max(0) as u64,
                big_buckets: int(&v[1])?.max(0) as u64,
            });
        }
        let mut info = redis::cmd("INFO");
        info.arg("memory");
        // Standalone: one text; cluster: a map from node to its text (summed).
        let info: Value = self.query_one(info).await.map_err(self.err("stats"))?;
        let bytes_used = used_memory(&info);
        let section_filter = self.filter_stats().await?;
        Ok(IndexStats { backend: self.backend().into(), namespaces, bytes_used, section_filter })
    }

    async fn clear(&self, ns: Namespace) -> Result<()> {
        let groups = 1u32 << self.config.group_bits;
        let per_group = 1u32 << (self.config.bucket_bits - self.config.group_bits);
        let mut cmds = Vec::new();
        for group in 0..groups {
            // All buckets of a group share its hash tag: one multi-key UNLINK per slot.
            let mut cmd = redis::cmd("UNLINK");
            for low in 0..per_group {
                cmd.arg(self.bucket_key(ns, Place { group, bucket: (group * per_group) | low }));
            }
            cmds.push(cmd);
            let mut docs = redis::cmd("UNLINK");
            docs.arg(self.doc_group_key_of(ns, group));
            cmds.push(docs);
        }
        for key in [self.counter_key(ns), self.big_key(ns)] {
            let mut cmd = redis::cmd("UNLINK");
            cmd.arg(key);
            cmds.push(cmd);
        }
        if ns == Namespace::Sections {
            cmds.extend(self.per_filter_shard("UNLINK"));
        }
        self.run("clear", cmds).await?;
        if ns == Namespace::Sections {
            self.reset_filter().await?;
        }
        self.arm_marker(true).await
    }

    async fn ping(&self) -> Result<()> {
        let _: String = self.query_one(redis::cmd("PING")).await.map_err(self.err("ping"))?;
        Ok(())
    }

    async fn identity(&self) -> Result<Option<String>> {
        let mut cmd = redis::cmd("GET");
        cmd.arg(self.marker_key());
        self.query_one(cmd).await.map_err(self.err("identity"))
    }
}

/// The big-bucket keys recorded for `ns` (for reports and tests).
impl RedisIndex {
    /// Keys of `ns` whose posting list became a big bucket.
    pub async fn big_buckets(&self, ns: Namespace) -> Result<Vec<IndexKey>> {
        let mut cmd = redis::cmd("SMEMBERS");
        cmd.arg(self.big_key(ns));
        let members: Vec<Vec<u8>> = self.query_one(cmd).await.map_err(self.err("big buckets"))?;
        let mut keys: Vec<IndexKey> = members.iter().filter_map(|m| unpack_key(m)).collect();
        keys.sort_unstable();
        Ok(keys)
    }
}
