//! The retrying decorator ([`Stores::with_retries`]): transient failures are retried,
//! a bounded number of times; the caller's errors are not; wrapped stores pass the
//! conformance cases of the stores they wrap.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;

use async_trait::async_trait;
use zhiwen_store::*;

/// A page store that fails its first `failures` calls of `find_page` as unavailable and
/// counts every call.
struct Flaky {
    inner: Arc<dyn PageStore>,
    failures: u32,
    calls: AtomicU32,
}

impl Flaky {
    fn call(&self) -> StoreResult<()> {
        let n = self.calls.fetch_add(1, Ordering::SeqCst);
        if n < self.failures {
            return Err(StoreError::Unavailable { backend: "flaky", message: format!("call {n} dropped") });
        }
        Ok(())
    }
}

#[async_trait]
impl PageStore for Flaky {
    async fn upsert_pages(&self, pages: &[NewPage]) -> StoreResult<Vec<Upserted>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        self.inner.upsert_pages(pages).await
    }
    async fn get_page(&self, id: i64) -> StoreResult<Option<Page>> {
        self.inner.get_page(id).await
    }
    async fn get_pages(&self, ids: &[i64], parts: PageParts) -> StoreResult<Vec<Page>> {
        self.inner.get_pages(ids, parts).await
    }
    async fn tag_pages(&self, pages: &[(i64, u64)], canon_tag: &str) -> StoreResult<u64> {
        self.inner.tag_pages(pages, canon_tag).await
    }
    async fn find_page(&self, url: &str) -> StoreResult<Option<Page>> {
        self.call()?;
        self.inner.find_page(url).await
    }
    async fn stored_urls(&self, urls: &[String]) -> StoreResult<std::collections::HashSet<String>> {
        self.inner.stored_urls(urls).await
    }
    async fn find_pages_by_content_hash(&self, content_hash: u64, limit: u32) -> StoreResult<Vec<PageRef>> {
        self.inner.find_pages_by_content_hash(content_hash, limit).await
    }
    async fn list_pages(&self, site: Option<&str>, after_id: i64, limit: u32) -> StoreResult<Vec<PageRef>> {
        self.inner.list_pages(site, after_id, limit).await
    }
    async fn page_ids_fetched_since(&self, since: Timestamp, after_id: i64) -> StoreResult<Vec<i64>> {
        self.inner.page_ids_fetched_since(since, after_id).await
    }
    async fn count_pages(&self) -> StoreResult<u64> {
        self.inner.count_pages().await
    }
    async fn max_page_id(&self) -> StoreResult<i64> {
        self.inner.max_page_id().await
    }
    async fn get_site(&self, host: &str) -> StoreResult<Option<Site>> {
        self.inner.get_site(host).await
    }
    async fn list_sites(&self, after_host: &str, limit: u32) -> StoreResult<Vec<Site>> {
        self.inner.list_sites(after_host, limit).await
    }
    async fn set_site_notes(&self, host: &str, notes: Option<&str>) -> StoreResult<()> {
        self.inner.set_site_notes(host, notes).await
    }
}

fn fast(max_attempts: u32) -> StoreRetry {
    StoreRetry { max_attempts, base_delay_ms: 1, max_delay_ms: 4 }
}

#[tokio::test]
async fn a_transient_failure_is_retried_until_it_passes_and_no_longer() {
    let env = crate::fixtures::Embedded::new().await;
    let flaky = Arc::new(Flaky { inner: env.stores.pages.clone(), failures: 2, calls: AtomicU32::new(0) });
    let pages = Retrying::<dyn PageStore>::new(flaky.clone(), fast(3));
    assert_eq!(pages.find_page("https://example.com/a").await.expect("third attempt passes"), None);
    assert_eq!(flaky.calls.load(Ordering::SeqCst), 3, "two failures, then the call that passed");

    let flaky = Arc::new(Flaky { inner: env.stores.pages.clone(), failures: 5, calls: AtomicU32::new(0) });
    let pages = Retrying::<dyn PageStore>::new(flaky.clone(), fast(3));
    let err = pages.find_page("https://example.com/a").await.expect_err("attempts used up");
    assert!(err.is_retryable(), "the last transient error is returned: {err}");
    assert_eq!(flaky.calls.load(Ordering::SeqCst), 3, "bounded by max_attempts");
}

#[tokio::test]
async fn a_permanent_failure_is_not_retried() {
    let env = crate::fixtures::Embedded::new().await;
    let flaky = Arc::new(Flaky { inner: env.stores.pages.clone(), failures: 0, calls: AtomicU32::new(0) });
    let pages = Retrying::<dyn PageStore>::new(flaky.clone(), fast(5));
    let bad = crate::fixtures::page("ftp://example.com/x", crate::fixtures::TEXT_A, 1);
    let err = pages.upsert_pages(&[bad]).await.expect_err("a bad URL is refused");
    assert!(!err.is_retryable() && err.is_user_error(), "{err}");
    assert_eq!(flaky.calls.load(Ordering::SeqCst), 1, "the caller's error is returned at once");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn wrapped_stores_pass_the_conformance_cases() {
    let env = crate::fixtures::Embedded::new().await;
    let stores = env.stores.clone().with_retries(StoreRetry::default());
    crate::cases::works_round_trip_and_idempotence(&stores).await;
    crate::cases::pages_round_trip_and_sites(&stores).await;
    crate::cases::fingerprints_params_and_scans(&stores).await;
}
