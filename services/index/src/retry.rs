//! Retries as a decorator around any [`CandidateIndex`] (the pattern of Quickwit's
//! retrying metastore), so backends stay free of retry loops.
//!
//! Only errors that say so ([`IndexError::is_retryable`]) are retried, with exponential
//! back-off; every write is idempotent, so a repeated `add_batch` after a connection
//! dropped mid-pipeline converges to the same index. When the attempts are used up,
//! the last error is returned: a write is either applied or reported, never dropped.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use zhiwen_core::{IndexFamily, IndexKey};

use crate::{CandidateIndex, DocId, IndexStats, LookupResult, Namespace, Result};

/// How often and how patiently to retry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// Attempts in total (1 = no retry).
    pub max_attempts: u32,
    /// Delay before the first retry; doubles each time.
    pub base_delay: Duration,
    /// Upper bound of one delay.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    /// 8 attempts over about 10 seconds: long enough for a Redis restart.
    fn default() -> Self {
        RetryPolicy { max_attempts: 8, base_delay: Duration::from_millis(50), max_delay: Duration::from_secs(3) }
    }
}

impl RetryPolicy {
    fn delay(&self, attempt: u32) -> Duration {
        let factor = 1u32.checked_shl(attempt.min(16)).unwrap_or(u32::MAX);
        self.base_delay.saturating_mul(factor).min(self.max_delay)
    }
}

/// A [`CandidateIndex`] that retries retryable failures of the one it wraps.
#[derive(Clone)]
pub struct RetryingIndex {
    inner: Arc<dyn CandidateIndex>,
    policy: RetryPolicy,
}

impl RetryingIndex {
    /// Wrap `inner`.
    pub fn new(inner: Arc<dyn CandidateIndex>, policy: RetryPolicy) -> Self {
        RetryingIndex { inner, policy }
    }

    async fn retry<T, F, Fut>(&self, op: &'static str, mut f: F) -> Result<T>
    where
        F: FnMut() -> Fut + Send,
        Fut: std::future::Future<Output = Result<T>> + Send,
        T: Send,
    {
        let mut attempt = 0;
        loop {
            match f().await {
                Ok(v) => return Ok(v),
                Err(e) if e.is_retryable() && attempt + 1 < self.policy.max_attempts => {
                    let delay = self.policy.delay(attempt);
                    tracing::warn!(op, attempt = attempt + 1, ?delay, error = %e, "index call failed; retrying");
                    tokio::time::sleep(delay).await;
                    attempt += 1;
                }
                Err(e) => return Err(e),
            }
        }
    }
}

#[async_trait]
impl CandidateIndex for RetryingIndex {
    fn backend(&self) -> &'static str {
        self.inner.backend()
    }

    async fn add(&self, ns: Namespace, doc: DocId, keys: &[IndexKey]) -> Result<()> {
        self.retry("add", || self.inner.add(ns, doc, keys)).await
    }

    async fn add_batch(&self, ns: Namespace, docs: &[(DocId, Vec<IndexKey>)]) -> Result<()> {
        self.retry("add_batch", || self.inner.add_batch(ns, docs)).await
    }

    async fn remove(&self, ns: Namespace, doc: DocId) -> Result<bool> {
        self.retry("remove", || self.inner.remove(ns, doc)).await
    }

    async fn lookup(&self, ns: Namespace, keys: &[IndexKey], limit: usize) -> Result<LookupResult> {
        self.retry("lookup", || self.inner.lookup(ns, keys, limit)).await
    }

    async fn lookup_sampled(&self, ns: Namespace, keys: &[IndexKey], modulus: u64) -> Result<LookupResult> {
        self.retry("lookup", || self.inner.lookup_sampled(ns, keys, modulus)).await
    }

    fn query_sample_modulus(&self, fixed: usize, winnowed: usize) -> u64 {
        self.inner.query_sample_modulus(fixed, winnowed)
    }

    async fn common_keys(&self, ns: Namespace, family: IndexFamily, min_docs: u32) -> Result<Vec<u64>> {
        self.retry("common keys", || self.inner.common_keys(ns, family, min_docs)).await
    }

    async fn write_token(&self, ns: Namespace) -> Result<u64> {
        self.retry("write token", || self.inner.write_token(ns)).await
    }

    async fn stats(&self) -> Result<IndexStats> {
        self.retry("stats", || self.inner.stats()).await
    }

    async fn clear(&self, ns: Namespace) -> Result<()> {
        self.retry("clear", || self.inner.clear(ns)).await
    }

    async fn ping(&self) -> Result<()> {
        self.retry("ping", || self.inner.ping()).await
    }

    async fn identity(&self) -> Result<Option<String>> {
        self.retry("identity", || self.inner.identity()).await
    }

    async fn generation(&self) -> Result<u64> {
        self.retry("generation", || self.inner.generation()).await
    }
}
