//! Retries as a decorator around the stores ([`Stores::with_retries`]), in the manner of
//! the index's retrying decorator, so callers and backends stay free of retry loops.
//!
//! Only errors that say so ([`crate::StoreError::is_retryable`]: the server is unreachable or
//! the connection dropped) are retried, a bounded number of times with exponential
//! back-off, each retry logged with `tracing`. Every write is idempotent (upserts by
//! natural key), so a write repeated after a dropped connection converges to the same
//! data. When the attempts are used up the last error is returned: a write is either
//! applied or reported, never dropped. Errors of the caller (invalid input, conflicts)
//! and faults that a retry cannot mend are returned at once.
//!
//! The work, page and fingerprint stores are wrapped (the ingest's reads and writes);
//! the others are passed through as they are.

use std::collections::HashSet;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde::{Deserialize, Serialize};
use zhiwen_core::Fingerprints;

use crate::model::*;
use crate::traits::{FingerprintStore, PageStore, StoreResult, WorkStore};
use crate::Stores;

/// How often and how patiently a store call is retried (`[store.retry]` of the
/// settings file).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct StoreRetry {
    /// Attempts in total (1 = no retry; 0 is read as 1).
    pub max_attempts: u32,
    /// Delay before the first retry, in milliseconds; doubles each time.
    pub base_delay_ms: u64,
    /// Upper bound of one delay, in milliseconds.
    pub max_delay_ms: u64,
}

impl Default for StoreRetry {
    /// 6 attempts over about 3 seconds (100, 200, 400, 800 and 1,600 ms between them).
    fn default() -> Self {
        StoreRetry { max_attempts: 6, base_delay_ms: 100, max_delay_ms: 5_000 }
    }
}

impl StoreRetry {
    /// The delay before retry number `attempt + 1`.
    fn delay(&self, attempt: u32) -> Duration {
        let factor = 1u64.checked_shl(attempt.min(32)).unwrap_or(u64::MAX);
        Duration::from_millis(self.base_delay_ms.saturating_mul(factor).min(self.max_delay_ms))
    }

    /// Run `op`, retrying retryable failures.
    async fn run<T, F, Fut>(&self, op: &'static str, mut f: F) -> StoreResult<T>
    where
        F: FnMut() -> Fut + Send,
        Fut: Future<Output = StoreResult<T>> + Send,
        T: Send,
    {
        let mut attempt = 0;
        loop {
            match f().await {
                Err(e) if e.is_retryable() && attempt + 1 < self.max_attempts.max(1) => {
                    let delay = self.delay(attempt);
                    attempt += 1;
                    tracing::warn!(op, attempt, ?delay, error = %e, "store unavailable; retrying");
                    tokio::time::sleep(delay).await;
                }
                other => return other,
            }
        }
    }
}

impl Stores {
    /// The same stores, their work, page and fingerprint stores retrying transient
    /// failures as `policy` says.
    pub fn with_retries(self, policy: StoreRetry) -> Stores {
        Stores {
            works: Arc::new(Retrying { inner: self.works, policy }),
            pages: Arc::new(Retrying { inner: self.pages, policy }),
            fingerprints: Arc::new(Retrying { inner: self.fingerprints, policy }),
            ..self
        }
    }
}

/// A store of type `S` whose calls are retried.
pub struct Retrying<S: ?Sized> {
    inner: Arc<S>,
    policy: StoreRetry,
}

impl<S: ?Sized> Retrying<S> {
    /// Wrap `inner`.
    pub fn new(inner: Arc<S>, policy: StoreRetry) -> Self {
        Retrying { inner, policy }
    }
}

#[async_trait]
impl WorkStore for Retrying<dyn WorkStore> {
    async fn upsert_works(&self, works: &[NewWork]) -> StoreResult<Vec<WorkUpserted>> {
        self.policy.run("upsert works", || self.inner.upsert_works(works)).await
    }
    async fn get_work(&self, id: i64) -> StoreResult<Option<Work>> {
        self.policy.run("get work", || self.inner.get_work(id)).await
    }
    async fn find_work(&self, owner: &str, external_id: &str) -> StoreResult<Option<Work>> {
        self.policy.run("find work", || self.inner.find_work(owner, external_id)).await
    }
    async fn list_works(&self, owner: Option<&str>, after_id: i64, limit: u32) -> StoreResult<Vec<WorkSummary>> {
        self.policy.run("list works", || self.inner.list_works(owner, after_id, limit)).await
    }
    async fn work_versions(&self) -> StoreResult<Vec<(i64, Timestamp)>> {
        self.policy.run("work versions", || self.inner.work_versions()).await
    }
    async fn get_section(&self, id: i64) -> StoreResult<Option<Section>> {
        self.policy.run("get section", || self.inner.get_section(id)).await
    }
    async fn get_sections(&self, ids: &[i64]) -> StoreResult<Vec<Section>> {
        self.policy.run("get sections", || self.inner.get_sections(ids)).await
    }
    async fn sections_of(&self, work_id: i64) -> StoreResult<Vec<Section>> {
        self.policy.run("sections of", || self.inner.sections_of(work_id)).await
    }
    async fn count_works(&self) -> StoreResult<u64> {
        self.policy.run("count works", || self.inner.count_works()).await
    }
}

#[async_trait]
impl PageStore for Retrying<dyn PageStore> {
    async fn upsert_pages(&self, pages: &[NewPage]) -> StoreResult<Vec<Upserted>> {
        self.policy.run("upsert pages", || self.inner.upsert_pages(pages)).await
    }
    async fn get_page(&self, id: i64) -> StoreResult<Option<Page>> {
        self.policy.run("get page", || self.inner.get_page(id)).await
    }
    async fn get_pages(&self, ids: &[i64], parts: PageParts) -> StoreResult<Vec<Page>> {
        self.policy.run("get pages", || self.inner.get_pages(ids, parts)).await
    }
    async fn tag_pages(&self, pages: &[(i64, u64)], canon_tag: &str) -> StoreResult<u64> {
        self.policy.run("tag pages", || self.inner.tag_pages(pages, canon_tag)).await
    }
    async fn find_page(&self, url: &str) -> StoreResult<Option<Page>> {
        self.policy.run("find page", || self.inner.find_page(url)).await
    }
    async fn stored_urls(&self, urls: &[String]) -> StoreResult<HashSet<String>> {
        self.policy.run("stored urls", || self.inner.stored_urls(urls)).await
    }
    async fn find_pages_by_content_hash(&self, content_hash: u64, limit: u32) -> StoreResult<Vec<PageRef>> {
        self.policy.run("find pages by content", || self.inner.find_pages_by_content_hash(content_hash, limit)).await
    }
    async fn list_pages(&self, site: Option<&str>, after_id: i64, limit: u32) -> StoreResult<Vec<PageRef>> {
        self.policy.run("list pages", || self.inner.list_pages(site, after_id, limit)).await
    }
    async fn page_ids_fetched_since(&self, since: Timestamp, after_id: i64) -> StoreResult<Vec<i64>> {
        self.policy.run("pages fetched since", || self.inner.page_ids_fetched_since(since, after_id)).await
    }
    async fn count_pages(&self) -> StoreResult<u64> {
        self.policy.run("count pages", || self.inner.count_pages()).await
    }
    async fn max_page_id(&self) -> StoreResult<i64> {
        self.policy.run("greatest page id", || self.inner.max_page_id()).await
    }
    async fn get_site(&self, host: &str) -> StoreResult<Option<Site>> {
        self.policy.run("get site", || self.inner.get_site(host)).await
    }
    async fn list_sites(&self, after_host: &str, limit: u32) -> StoreResult<Vec<Site>> {
        self.policy.run("list sites", || self.inner.list_sites(after_host, limit)).await
    }
    async fn set_site_notes(&self, host: &str, notes: Option<&str>) -> StoreResult<()> {
        self.policy.run("set site notes", || self.inner.set_site_notes(host, notes)).await
    }
}

#[async_trait]
impl FingerprintStore for Retrying<dyn FingerprintStore> {
    async fn put_fingerprints_many(&self, items: &[(Subject, Fingerprints)]) -> StoreResult<BatchCounts> {
        self.policy.run("put fingerprints", || self.inner.put_fingerprints_many(items)).await
    }
    async fn get_fingerprints_many(&self, subjects: &[Subject]) -> StoreResult<Vec<FingerprintRecord>> {
        self.policy.run("get fingerprints", || self.inner.get_fingerprints_many(subjects)).await
    }
    async fn get_winnowed_many(&self, subjects: &[Subject]) -> StoreResult<Vec<WinnowedKeys>> {
        self.policy.run("get winnowed keys", || self.inner.get_winnowed_many(subjects)).await
    }
    async fn stale_subjects(
        &self,
        kind: SubjectKind,
        current_tag: &str,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<i64>> {
        self.policy.run("stale subjects", || self.inner.stale_subjects(kind, current_tag, after_id, limit)).await
    }
    async fn scan_fingerprints(
        &self,
        kind: SubjectKind,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<FingerprintRecord>> {
        self.policy.run("scan fingerprints", || self.inner.scan_fingerprints(kind, after_id, limit)).await
    }
    async fn count_fingerprints(&self, kind: SubjectKind, params_tag: Option<&str>) -> StoreResult<u64> {
        self.policy.run("count fingerprints", || self.inner.count_fingerprints(kind, params_tag)).await
    }
    async fn delete_fingerprints(&self, subject: Subject) -> StoreResult<bool> {
        self.policy.run("delete fingerprints", || self.inner.delete_fingerprints(subject)).await
    }
    async fn indexed_works(&self, params_tag: &str) -> StoreResult<Vec<(i64, i64)>> {
        self.policy.run("indexed works", || self.inner.indexed_works(params_tag)).await
    }
    async fn mark_work_indexed(&self, work_id: i64, version: i64, params_tag: &str) -> StoreResult<()> {
        self.policy.run("mark work indexed", || self.inner.mark_work_indexed(work_id, version, params_tag)).await
    }
    async fn unmark_work_indexed(&self, work_id: i64) -> StoreResult<()> {
        self.policy.run("unmark work indexed", || self.inner.unmark_work_indexed(work_id)).await
    }
}
