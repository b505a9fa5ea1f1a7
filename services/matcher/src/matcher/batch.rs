//! Matching pages in batches: the pages of a batch are fingerprinted concurrently (one
//! blocking thread per page, `concurrency` at a time, so every core works), their
//! fingerprints are written to the store and the page index in one write each, and the
//! pages are then looked up, verified and recorded concurrently.
//!
//! Every write is idempotent (fingerprints are put by subject, index entries by
//! document, matches upserted by (section, page)), so a batch repeated after a crash
//! ends exactly as an uninterrupted one.

use futures::StreamExt;
use zhiwen_core::Fingerprints;

use super::{Matcher, PageOutcome, PreparedPage};
use crate::Result;
use zhiwen_index::Namespace;
use zhiwen_store::Subject;

/// The pages of a batch loaded and fingerprinted ([`Matcher::prepare_pages`]), not yet
/// written or matched ([`Matcher::finish_pages`]). Preparing writes nothing, so a
/// prepared batch may be dropped at any time.
pub struct PreparedPages {
    pages: Vec<(i64, Result<PreparedPage>)>,
}

impl std::fmt::Debug for PreparedPages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedPages").field("pages", &self.pages.len()).finish()
    }
}

impl Matcher {
    /// Match a batch of pages, as [`Matcher::match_page`] does for each: the outcome of
    /// every page, in the order of `page_ids` (a page that cannot be matched, for
    /// instance one without text, has its own error). `Err` only when a batch write of
    /// fingerprints failed; nothing of the batch is recorded then.
    pub async fn match_pages(&self, page_ids: Vec<i64>) -> Result<Vec<(i64, Result<PageOutcome>)>> {
        let prepared = self.prepare_pages(page_ids).await;
        self.finish_pages(prepared).await
    }

    /// Load and fingerprint a batch of pages, `concurrency` at a time, writing nothing (a
    /// task prepares the next batch while it finishes the current one).
    pub async fn prepare_pages(&self, page_ids: Vec<i64>) -> PreparedPages {
        let concurrency = self.inner.config.concurrency.max(1);
        // Owned values only in the streams (no borrow held across an await: the futures
        // stay `Send` for every lifetime, as `tokio::spawn` of a worker needs).
        let me = self.clone();
        let pages = futures::stream::iter(page_ids.into_iter().map(move |id| {
            let m = me.clone();
            async move { (id, m.load_and_prepare(id).await) }
        }))
        .buffered(concurrency)
        .collect()
        .await;
        PreparedPages { pages }
    }

    /// Write the fingerprints of a prepared batch, then look up, verify and record its
    /// pages (the second half of [`Matcher::match_pages`]).
    pub async fn finish_pages(&self, prepared: PreparedPages) -> Result<Vec<(i64, Result<PageOutcome>)>> {
        let concurrency = self.inner.config.concurrency.max(1);
        let prepared = prepared.pages;
        if self.inner.config.index_pages {
            let mut fingerprints: Vec<(Subject, Fingerprints)> = Vec::with_capacity(prepared.len());
            let mut keys = Vec::with_capacity(prepared.len());
            for p in prepared.iter().filter_map(|(_, r)| r.as_ref().ok()) {
                keys.push((p.page_id as u64, self.inner.config.page_index_keys(&p.full.fingerprints)));
                fingerprints.push((Subject::page(p.page_id), p.full.fingerprints.clone()));
            }
            if !fingerprints.is_empty() {
                self.inner.stores.fingerprints.put_fingerprints_many(&fingerprints).await?;
                self.inner.index.add_batch(Namespace::Pages, &keys).await?;
            }
        }
        let me = self.clone();
        let outcomes = futures::stream::iter(prepared.into_iter().map(move |(id, r)| {
            let m = me.clone();
            async move {
                match r {
                    Ok(p) => (id, m.match_prepared(p).await),
                    Err(e) => (id, Err(e)),
                }
            }
        }))
        .buffered(concurrency)
        .collect()
        .await;
        Ok(outcomes)
    }
}
