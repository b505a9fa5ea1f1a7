//! Redis restarting mid-run: writes are retried to success or fail with an error,
//! never silently dropped.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use zhiwen_index::{CandidateIndex, IndexConfig, IndexError, Namespace, RedisIndex, RetryPolicy, RetryingIndex};
use zhiwen_testkit::redis::{RedisOptions, RedisServer};

use crate::common::{redis_config, synthetic_keys};

const BATCHES: usize = 40;
const PER_BATCH: u64 = 50;

fn batch(b: usize) -> Vec<(u64, Vec<zhiwen_index::IndexKey>)> {
    (0..PER_BATCH).map(|i| b as u64 * PER_BATCH + i).map(|d| (d, synthetic_keys(d + 1, 30))).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_mid_run_with_persistence_is_retried_and_loses_nothing() {
    let Some(mut server) = RedisServer::start_with(RedisOptions { cluster: false, persistent: true }) else {
        return;
    };
    let redis = RedisIndex::connect(redis_config(&server, IndexConfig::default(), false)).await.unwrap();
    let index = Arc::new(RetryingIndex::new(Arc::new(redis), RetryPolicy::default()));
    let done = Arc::new(AtomicUsize::new(0));
    let writer = {
        let (index, done) = (index.clone(), done.clone());
        tokio::spawn(async move {
            for b in 0..BATCHES {
                index.add_batch(Namespace::Sections, &batch(b)).await?;
                done.fetch_add(1, Ordering::SeqCst);
                tokio::time::sleep(Duration::from_millis(20)).await;
            }
            Ok::<_, IndexError>(())
        })
    };
    while done.load(Ordering::SeqCst) < 5 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    server.stop();
    let during = done.load(Ordering::SeqCst);
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert!(done.load(Ordering::SeqCst) <= during + 1, "writes cannot succeed while the server is down");
    server.start_again();
    writer.await.unwrap().expect("every batch eventually succeeds");

    // Every acknowledged document is there.
    let stats = index.stats().await.unwrap();
    assert_eq!(stats.namespace(Namespace::Sections).documents, BATCHES as u64 * PER_BATCH);
    for d in [0, 333, BATCHES as u64 * PER_BATCH - 1] {
        let r = index.lookup(Namespace::Sections, &synthetic_keys(d + 1, 30), 1).await.unwrap();
        assert_eq!((r.candidates[0].doc, r.candidates[0].total), (d, 30));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn restart_without_persistence_fails_the_task_cleanly() {
    let Some(mut server) = RedisServer::start() else {
        return;
    };
    let redis = Arc::new(RedisIndex::connect(redis_config(&server, IndexConfig::default(), false)).await.unwrap());
    redis.add_batch(Namespace::Sections, &batch(0)).await.unwrap();

    // While it is down: a retryable error, not a silent success.
    server.stop();
    let err = redis.add_batch(Namespace::Sections, &batch(1)).await.unwrap_err();
    assert!(err.is_retryable(), "{err:?}");
    assert!(err.to_string().contains(&server.url()), "{err}");

    // Back, but empty: the retrying caller gets a clear, final error.
    server.start_again();
    let retrying = RetryingIndex::new(redis.clone(), RetryPolicy::default());
    let err = retrying.add_batch(Namespace::Sections, &batch(2)).await.unwrap_err();
    assert!(matches!(err, IndexError::Lost { .. }), "{err:?}");
    let err = retrying.lookup(Namespace::Sections, &synthetic_keys(1, 30), 10).await.unwrap_err();
    assert!(matches!(err, IndexError::Lost { .. }), "{err:?}");
}

#[tokio::test]
async fn retries_give_up_with_the_last_error() {
    let Some(mut server) = RedisServer::start() else {
        return;
    };
    let redis = Arc::new(RedisIndex::connect(redis_config(&server, IndexConfig::default(), false)).await.unwrap());
    server.stop();
    let policy =
        RetryPolicy { max_attempts: 3, base_delay: Duration::from_millis(10), max_delay: Duration::from_millis(50) };
    let err = RetryingIndex::new(redis, policy).add_batch(Namespace::Pages, &batch(0)).await.unwrap_err();
    assert!(err.is_retryable(), "{err:?}");
}
