//! Redis-specific behaviour: clear errors, configuration checks, loss detection, the
//! compact layout.

use zhiwen_core::IndexFamily::{Dna, WinnowChars};
use zhiwen_index::{CandidateIndex, IndexConfig, IndexError, Namespace, RedisConfig, RedisIndex};
use zhiwen_testkit::free_port;
use zhiwen_testkit::redis::RedisServer;

use crate::common::{k, redis_config, synthetic_keys};

#[tokio::test]
async fn unreachable_redis_is_a_clear_error_naming_the_url() {
    // A port nobody listens on (bound and released).
    let url = format!("redis://127.0.0.1:{}/", free_port());
    let err = RedisIndex::connect(RedisConfig::with_url(url.clone())).await.unwrap_err();
    assert!(matches!(err, IndexError::Unavailable { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&url), "{msg}");
    assert!(err.is_retryable());
}

#[tokio::test]
async fn credentials_are_not_shown_in_errors() {
    let url = format!("redis://user:s3cret@127.0.0.1:{}/", free_port());
    let err = RedisIndex::connect(RedisConfig::with_url(url)).await.unwrap_err();
    assert!(!err.to_string().contains("s3cret"), "{err}");
}

#[tokio::test]
async fn bad_configuration_is_refused() {
    for config in [
        RedisConfig { prefix: "a{b}".into(), ..RedisConfig::default() },
        RedisConfig { group_bits: 21, ..RedisConfig::default() },
        RedisConfig { index: IndexConfig { big_bucket_cap: 0, ..IndexConfig::default() }, ..RedisConfig::default() },
        RedisConfig::with_url("not a url"),
    ] {
        let err = RedisIndex::connect(config).await.unwrap_err();
        assert!(matches!(err, IndexError::Config(_)), "{err:?}");
        assert!(!err.is_retryable());
    }
}

#[tokio::test]
async fn a_flushed_server_is_reported_not_silently_refilled() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let index = RedisIndex::connect(redis_config(&server, IndexConfig::default(), false)).await.unwrap();
    index.add(Namespace::Sections, 1, &[k(Dna, 1)]).await.unwrap();
    server.command(&["FLUSHALL"]).unwrap();
    let err = index.add(Namespace::Sections, 2, &[k(Dna, 2)]).await.unwrap_err();
    assert!(matches!(err, IndexError::Lost { .. }), "{err:?}");
    assert!(err.to_string().contains("zhiwen reindex"));
    assert!(!err.is_retryable());
    let err = index.lookup(Namespace::Sections, &[k(Dna, 1)], 10).await.unwrap_err();
    assert!(matches!(err, IndexError::Lost { .. }), "{err:?}");
    // A clear (the start of a rebuild) re-arms the index.
    index.clear(Namespace::Sections).await.unwrap();
    index.add(Namespace::Sections, 2, &[k(Dna, 2)]).await.unwrap();
}

#[tokio::test]
async fn prefixes_isolate_indexes_and_big_buckets_are_listed() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let config = IndexConfig { big_bucket_cap: 3, ..IndexConfig::default() };
    let a = RedisIndex::connect(redis_config(&server, config, false)).await.unwrap();
    let b = RedisIndex::connect(RedisConfig { prefix: "other".into(), ..redis_config(&server, config, false) })
        .await
        .unwrap();
    for d in 0..4 {
        a.add(Namespace::Sections, d, &[k(WinnowChars, 42)]).await.unwrap();
    }
    assert!(b.lookup(Namespace::Sections, &[k(WinnowChars, 42)], 10).await.unwrap().big_buckets.is_empty());
    assert_eq!(a.big_buckets(Namespace::Sections).await.unwrap(), vec![k(WinnowChars, 42)]);
}

#[tokio::test]
async fn layout_is_compact() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let index = RedisIndex::connect(redis_config(&server, IndexConfig::default(), false)).await.unwrap();
    let base: u64 = index.stats().await.unwrap().bytes_used;
    let docs: Vec<_> = (0..2_000u64).map(|d| (d, synthetic_keys(d + 1, 100))).collect();
    for chunk in docs.chunks(500) {
        index.add_batch(Namespace::Sections, chunk).await.unwrap();
    }
    let stats = index.stats().await.unwrap();
    let per_entry = (stats.bytes_used - base) as f64 / 200_000.0;
    // ~9 bytes of key list + ~20 bytes in a bucket; a key per posting would be ~90.
    assert!(per_entry < 60.0, "{per_entry:.1} bytes per entry");
    let keys: i64 = server.command(&["DBSIZE"]).unwrap().parse().unwrap();
    assert!(keys < 5_000, "{keys} keys for 200,000 entries");
}

/// Calls of `command` (lower case) the server ran since its statistics were last reset.
fn command_calls(server: &RedisServer, command: &str) -> u64 {
    let stats = server.command(&["INFO", "commandstats"]).unwrap();
    let prefix = format!("cmdstat_{command}:calls=");
    stats
        .lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()))
        .and_then(|rest| rest.split(',').next())
        .map_or(0, |n| n.parse().unwrap())
}

/// `HMGET` commands the server ran since its statistics were last reset.
fn hmget_calls(server: &RedisServer) -> u64 {
    command_calls(server, "hmget")
}

/// The section filter: a lookup reads only the posting lists that may exist, and still
/// finds what another process wrote after the filter was read, whatever that process's
/// own setting; a clear by a process without the filter turns it off, one with it builds
/// it again.
#[tokio::test]
async fn the_section_filter_skips_empty_reads_and_misses_no_write() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    const S: Namespace = Namespace::Sections;
    let with_filter =
        |mb| RedisConfig { section_filter_mb: mb, ..redis_config(&server, IndexConfig::default(), false) };
    let reader = RedisIndex::connect(with_filter(1)).await.unwrap();
    let writer = RedisIndex::connect(with_filter(0)).await.unwrap();
    let docs = |r: zhiwen_index::LookupResult| r.candidates.iter().map(|c| c.doc).collect::<Vec<_>>();
    let stored: Vec<_> = (0..200u64).map(|d| (d, synthetic_keys(d + 1, 50))).collect();
    reader.add_batch(S, &stored).await.unwrap();
    assert_eq!(docs(reader.lookup(S, &stored[7].1, 1).await.unwrap()), [7]);
    // 10,000 keys, two bits each, in 1 MB: what an operator sees in the statistics.
    let filter = writer.stats().await.unwrap().section_filter.expect("a filter");
    assert_eq!(filter.bits, 8 << 20);
    assert!((15_000..=20_000).contains(&filter.bits_set), "{} bits set", filter.bits_set);

    // Keys nobody stored: the filter answers, Redis reads (almost) nothing.
    let absent = synthetic_keys(10_001, 300);
    server.command(&["CONFIG", "RESETSTAT"]).unwrap();
    let r = reader.lookup(S, &absent, 5).await.unwrap();
    assert!(r.candidates.is_empty());
    assert_eq!(r.keys_queried, 300);
    let reads = hmget_calls(&server);
    assert!(reads < 10, "{reads} posting reads for 300 absent keys");
    // Without the filter every key is read.
    server.command(&["CONFIG", "RESETSTAT"]).unwrap();
    writer.lookup(S, &absent, 5).await.unwrap();
    assert!(hmget_calls(&server) > 250);

    // Written by a process that does not read the filter, after the reader's snapshot.
    writer.add(S, 500, &absent).await.unwrap();
    assert_eq!(docs(reader.lookup(S, &absent, 5).await.unwrap()), [500]);
    // A new snapshot (at most one per second) holds the new keys.
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    assert_eq!(docs(reader.lookup(S, &absent, 5).await.unwrap()), [500]);
    server.command(&["CONFIG", "RESETSTAT"]).unwrap();
    let unrelated = synthetic_keys(20_002, 300);
    assert!(reader.lookup(S, &unrelated, 5).await.unwrap().candidates.is_empty());
    assert!(hmget_calls(&server) < 10, "the new snapshot still skips absent keys");

    // Cleared by the process without a filter: the index has none, lookups read every key.
    writer.clear(S).await.unwrap();
    assert_eq!(reader.stats().await.unwrap().section_filter, None);
    writer.add(S, 900, &stored[3].1).await.unwrap();
    assert_eq!(docs(reader.lookup(S, &stored[3].1, 5).await.unwrap()), [900]);
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    assert_eq!(docs(reader.lookup(S, &stored[3].1, 5).await.unwrap()), [900]);
    assert!(reader.lookup(S, &absent, 5).await.unwrap().candidates.is_empty());

    // Cleared (rebuilt) by a process with it: the filter is back, and kept by both.
    reader.clear(S).await.unwrap();
    writer.add(S, 901, &absent).await.unwrap();
    tokio::time::sleep(std::time::Duration::from_millis(1_100)).await;
    assert_eq!(docs(reader.lookup(S, &absent, 5).await.unwrap()), [901]);
    server.command(&["CONFIG", "RESETSTAT"]).unwrap();
    assert!(reader.lookup(S, &unrelated, 5).await.unwrap().candidates.is_empty());
    assert!(hmget_calls(&server) < 10, "the rebuilt filter skips absent keys");
}

/// A namespace keeps the bucket bits it was written with: a client configured with
/// other bits reads and writes it as written (and so does a client that connected
/// before another one rebuilt it), until the namespace is cleared for a rebuild, which
/// records the new bits. A recorded value that is not a bucket count is an error.
#[tokio::test]
async fn a_namespace_keeps_its_bucket_bits_until_it_is_cleared() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    let written = RedisIndex::connect(redis_config(&server, IndexConfig::default(), false)).await.unwrap();
    let docs: Vec<_> = (0..200u64).map(|d| (d, synthetic_keys(d + 1, 50))).collect();
    written.add_batch(Namespace::Sections, &docs).await.unwrap();
    written.add(Namespace::Pages, 7, &synthetic_keys(7, 50)).await.unwrap();
    let buckets = |server: &RedisServer| -> usize {
        let count = "return #redis.call('KEYS', ARGV[1])";
        server.command(&["EVAL", count, "0", "zwtest:p:s:*"]).unwrap().parse().unwrap()
    };
    let before = buckets(&server);
    assert!(before > 1 << 10, "{before} buckets of 2^12");

    let wider = RedisConfig { bucket_bits: 14, ..redis_config(&server, IndexConfig::default(), false) };
    let other = RedisIndex::connect(wider.clone()).await.unwrap();
    let found = other.lookup(Namespace::Sections, &synthetic_keys(5, 50), 10).await.unwrap();
    assert_eq!(found.candidates.first().map(|c| c.doc), Some(4), "read as written");
    other.add(Namespace::Sections, 1_000, &synthetic_keys(1_000, 50)).await.unwrap();
    assert!(buckets(&server) <= 1 << 12, "{} buckets: none beyond 2^12", buckets(&server));
    let found = written.lookup(Namespace::Sections, &synthetic_keys(1_000, 50), 10).await.unwrap();
    assert_eq!(found.candidates.first().map(|c| c.doc), Some(1_000), "written as recorded");

    // The rebuild: cleared, then written with the new bits.
    other.clear(Namespace::Sections).await.unwrap();
    other.add_batch(Namespace::Sections, &docs).await.unwrap();
    assert!(buckets(&server) > 1 << 12, "{} buckets: the new bits are used", buckets(&server));
    // The client that connected before reads the new layout with the index's identity.
    written.identity().await.unwrap();
    let found = written.lookup(Namespace::Sections, &synthetic_keys(5, 50), 10).await.unwrap();
    assert_eq!(found.candidates.first().map(|c| c.doc), Some(4));
    // The page namespace was not cleared: it keeps its bits.
    let found = other.lookup(Namespace::Pages, &synthetic_keys(7, 50), 10).await.unwrap();
    assert_eq!(found.candidates.first().map(|c| c.doc), Some(7));

    server.command(&["SET", "zwtest:layout:p", "99"]).unwrap();
    let err = RedisIndex::connect(wider).await.unwrap_err();
    assert!(matches!(err, IndexError::Corrupt(_)), "{err:?}");
}

/// Scripts (`EVALSHA`) the server ran since its statistics were last reset.
fn script_calls(server: &RedisServer) -> u64 {
    command_calls(server, "evalsha")
}

/// The common keys are kept in Redis with the write token they were read at: another
/// process (a new connection) gets them back without reading a bucket while the namespace
/// is unchanged, and reads the buckets again after any write.
#[tokio::test]
async fn common_keys_are_read_back_until_the_namespace_changes() {
    let Some(server) = RedisServer::start() else {
        return;
    };
    const S: Namespace = Namespace::Sections;
    let config = || redis_config(&server, IndexConfig::default(), false);
    let first = RedisIndex::connect(config()).await.unwrap();
    let mut docs: Vec<(u64, Vec<_>)> = (1..=6u64).map(|d| (d, synthetic_keys(d, 30))).collect();
    for (_, keys) in docs.iter_mut().take(3) {
        keys.push(k(WinnowChars, 0xC3));
    }
    first.add_batch(S, &docs).await.unwrap();
    assert_eq!(first.common_keys(S, WinnowChars, 3).await.unwrap(), vec![0xC3]);

    let second = RedisIndex::connect(config()).await.unwrap();
    let scripts = script_calls(&server);
    assert_eq!(second.common_keys(S, WinnowChars, 3).await.unwrap(), vec![0xC3]);
    assert_eq!(script_calls(&server), scripts, "answered without reading a bucket");
    // Other arguments are another answer.
    assert!(second.common_keys(S, WinnowChars, 4).await.unwrap().is_empty());
    assert!(script_calls(&server) > scripts);

    // A write by either process: the buckets are read again.
    first.add(S, 4, &[k(WinnowChars, 0xC3), k(Dna, 1)]).await.unwrap();
    let scripts = script_calls(&server);
    assert_eq!(second.common_keys(S, WinnowChars, 4).await.unwrap(), vec![0xC3]);
    assert!(script_calls(&server) > scripts);
    assert!(second.remove(S, 1).await.unwrap());
    assert!(first.common_keys(S, WinnowChars, 4).await.unwrap().is_empty());
}
