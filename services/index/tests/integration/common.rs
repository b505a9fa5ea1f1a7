//! Harnesses: an index plus whatever must live as long as it (a server, a directory).

use std::any::Any;
use std::sync::Arc;

use zhiwen_index::{CandidateIndex, EmbeddedIndex, IndexConfig, IndexFamily, IndexKey, RedisConfig, RedisIndex};
use zhiwen_testkit::redis::{RedisOptions, RedisServer};

pub struct Harness {
    pub index: Arc<dyn CandidateIndex>,
    pub server: Option<RedisServer>,
    _guard: Option<Box<dyn Any + Send>>,
}

pub async fn embedded(config: IndexConfig) -> Option<Harness> {
    let dir = tempfile::tempdir().expect("temp dir");
    let index = EmbeddedIndex::open(dir.path().join("index.sqlite"), config).expect("open embedded index");
    Some(Harness { index: Arc::new(index), server: None, _guard: Some(Box::new(dir)) })
}

pub async fn redis_with(config: IndexConfig, options: RedisOptions) -> Option<Harness> {
    let server = RedisServer::start_with(options)?;
    let index = RedisIndex::connect(redis_config(&server, config, options.cluster)).await.expect("connect to redis");
    Some(Harness { index: Arc::new(index), server: Some(server), _guard: None })
}

pub fn redis_config(server: &RedisServer, config: IndexConfig, cluster: bool) -> RedisConfig {
    RedisConfig {
        url: server.url(),
        prefix: "zwtest".into(),
        cluster,
        // Small tables keep `clear` and `stats` cheap in tests.
        bucket_bits: 12,
        group_bits: 6,
        index: config,
        ..RedisConfig::default()
    }
}

pub async fn redis(config: IndexConfig) -> Option<Harness> {
    redis_with(config, RedisOptions::default()).await
}

pub async fn redis_cluster(config: IndexConfig) -> Option<Harness> {
    redis_with(config, RedisOptions { cluster: true, persistent: false }).await
}

/// Redis with a (small) section filter, standalone or cluster.
async fn redis_filtered_with(config: IndexConfig, options: RedisOptions) -> Option<Harness> {
    let server = RedisServer::start_with(options)?;
    let config = RedisConfig { section_filter_mb: 1, ..redis_config(&server, config, options.cluster) };
    let index = RedisIndex::connect(config).await.expect("connect to redis");
    Some(Harness { index: Arc::new(index), server: Some(server), _guard: None })
}

pub async fn redis_filtered(config: IndexConfig) -> Option<Harness> {
    redis_filtered_with(config, RedisOptions::default()).await
}

pub async fn redis_cluster_filtered(config: IndexConfig) -> Option<Harness> {
    redis_filtered_with(config, RedisOptions { cluster: true, persistent: false }).await
}

pub fn k(family: IndexFamily, value: u64) -> IndexKey {
    IndexKey { family, value }
}

/// Deterministic pseudo-random keys (no rand dependency).
pub fn synthetic_keys(seed: u64, n: usize) -> Vec<IndexKey> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..n)
        .map(|i| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            k(IndexFamily::ALL[i % 6], x)
        })
        .collect()
}
