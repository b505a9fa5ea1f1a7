//! Matching pages in batches: the pages of a batch are fingerprinted concurrently (a few
//! pages a job on the matcher's CPU pool, `concurrency` jobs at a time, so every core
//! works), each looked up in the section index as soon as its job is done; their keys are
//! written to the page namespace of the index in one write while the candidate sections of
//! the whole batch that are not cached are read in one store call (and analysed once,
//! however many pages share them) and the pages are verified concurrently; the copies
//! found on all of them are recorded in one store call once the index write succeeded.
//!
//! The three steps are separate calls ([`Matcher::prepare_pages`],
//! [`Matcher::verify_pages`], [`Matcher::record_pages`]) so that a task can run them on
//! three consecutive batches at once: the cores fingerprint and verify while the store
//! records the batch before.
//!
//! Every write is idempotent (index entries are put by document, matches upserted by
//! (section, page)), so a batch repeated after a crash
//! ends exactly as an uninterrupted one.
//!
//! A page whose text equals that of a page verified earlier in the task, or of another
//! page of its batch (a mirror under another URL), is neither looked up nor verified
//! again: it gets the first page's copies (the same sections, kinds and scores) under its
//! own page id and URL, with the page side of the evidence quoted from its own original.
//! Its keys are written to the page namespace like any page's.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use futures::StreamExt;

use super::{FoundCopy, Matcher, PageOutcome, PreparedPage, TextKey, TextResult, LOG_TARGET};
use crate::{MatchRecord, MatcherError, Result};
use zhiwen_index::Namespace;
use zhiwen_store::{Page, PageParts};

/// Pages of a batch fingerprinted one after another in one job on the CPU pool: one job
/// a page made two thread hand-offs a page; with 4, `match --all` made 18% fewer context
/// switches (docs/benchmarks.md), and each page is still looked up soon after it is ready.
const PAGES_PER_JOB: usize = 4;

/// The pages of a batch loaded, fingerprinted and looked up in the section index
/// ([`Matcher::prepare_pages`]), not yet written or verified ([`Matcher::finish_pages`]).
/// Preparing writes nothing, so a prepared batch may be dropped at any time.
pub struct PreparedPages {
    pages: Vec<(i64, Result<LookedUp>)>,
    /// The batch read of the pages failed: nothing of the batch can be matched.
    failed: Option<MatcherError>,
}

/// A page looked up and verified: its outcome and the copies on it, not yet recorded.
pub(super) type Verified = (PageOutcome, Vec<FoundCopy>);

/// A page after the first round of a batch's verification.
enum Step {
    Done(Verified),
    /// Waits for the page with the same text in the batch.
    Twin(Box<PreparedPage>),
}

/// A page looked up, not yet verified: its outcome so far and how it is verified.
pub(super) type LookedUp = (PreparedPage, PageOutcome, Plan);

/// How a prepared page is verified.
pub(super) enum Plan {
    /// Against these candidate sections (best first).
    Verify(Vec<i64>),
    /// Not at all: a page with the same text was verified earlier; this is what it found.
    Reuse(Arc<TextResult>),
    /// Not at all: a page with the same text in the same batch is looked up and verified
    /// first, and this page reuses its result.
    AfterBatchTwin,
}

/// The pages of a batch verified, their page-namespace keys written
/// ([`Matcher::verify_pages`]); the copies found are not recorded yet
/// ([`Matcher::record_pages`]).
pub struct VerifiedPages {
    outcomes: Vec<(i64, Result<PageOutcome>)>,
    copies: Vec<FoundCopy>,
}

impl std::fmt::Debug for VerifiedPages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("VerifiedPages")
            .field("pages", &self.outcomes.len())
            .field("copies", &self.copies.len())
            .finish()
    }
}

impl std::fmt::Debug for PreparedPages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreparedPages").field("pages", &self.pages.len()).field("failed", &self.failed).finish()
    }
}

impl Matcher {
    /// Match a batch of pages, as [`Matcher::match_page`] does for each: the outcome of
    /// every page, in the order of `page_ids` (a page that cannot be matched, for
    /// instance one without text, has its own error). `Err` only when a batch read or write
    /// failed (the pages, their page-namespace keys, the matches); a task then fails and its
    /// retry repeats the batch, whose writes are idempotent.
    pub async fn match_pages(&self, page_ids: Vec<i64>) -> Result<Vec<(i64, Result<PageOutcome>)>> {
        let prepared = self.prepare_pages(page_ids).await;
        self.finish_pages(prepared).await
    }

    /// Load a batch of pages (one read), fingerprint them `concurrency` at a time and look
    /// each up in the section index as soon as it is fingerprinted, writing nothing (a task
    /// prepares the next batch while it finishes the current one, so the lookups' round
    /// trips are off the path of the batch being verified).
    pub async fn prepare_pages(&self, page_ids: Vec<i64>) -> PreparedPages {
        let concurrency = self.inner.config.concurrency.max(1);
        let mut loaded = match self.load_pages(&page_ids).await {
            Ok(pages) => pages,
            Err(e) => return PreparedPages { pages: Vec::new(), failed: Some(e) },
        };
        // Owned values only in the streams (no borrow held across an await: the futures
        // stay `Send` for every lifetime, as `tokio::spawn` of a worker needs).
        let me = self.clone();
        // Texts whose first page in this batch is being looked up.
        let claimed: Arc<Mutex<HashSet<TextKey>>> = Arc::default();
        let chunks: Vec<Vec<i64>> = page_ids.chunks(PAGES_PER_JOB).map(<[i64]>::to_vec).collect();
        let pages: Vec<Vec<(i64, Result<LookedUp>)>> = futures::stream::iter(chunks.into_iter().map(move |ids| {
            let (m, claimed) = (me.clone(), claimed.clone());
            let mut found = Vec::with_capacity(ids.len());
            let stored: Vec<bool> = ids.iter().map(|id| loaded.remove(id).map(|p| found.push(p)).is_some()).collect();
            async move {
                let mut prepared = m.prepare_loaded_pages(found).await.into_iter();
                let mut out = Vec::with_capacity(ids.len());
                for (id, stored) in ids.into_iter().zip(stored) {
                    let looked = match stored.then(|| prepared.next()).flatten() {
                        Some(Ok(p)) => m.plan(p, &claimed).await,
                        Some(Err(e)) => Err(e),
                        None => Err(MatcherError::NotFound { what: "page", id }),
                    };
                    out.push((id, looked));
                }
                out
            }
        }))
        .buffered(concurrency)
        .collect()
        .await;
        PreparedPages { pages: pages.into_iter().flatten().collect(), failed: None }
    }

    /// The pages of a batch as they are analysed: their stored text when it is the
    /// canonical text of the matcher's canonicalisation ([`Inner::reads_stored_text`]),
    /// else their body (read again for those pages only: a store written before canon
    /// tags were, or with other canonicalisation parameters; such a page whose body gives
    /// its stored text again takes the tag, [`PreparedPage::retag`], and is read once from
    /// the next time on).
    pub(super) async fn load_pages(&self, page_ids: &[i64]) -> Result<HashMap<i64, Page>> {
        let pages = &self.inner.stores.pages;
        let mut loaded: HashMap<i64, Page> =
            pages.get_pages(page_ids, PageParts::Text).await?.into_iter().map(|p| (p.id, p)).collect();
        let mut again: Vec<i64> = loaded.values().filter(|p| !self.inner.reads_stored_text(p)).map(|p| p.id).collect();
        if !again.is_empty() {
            again.sort_unstable();
            loaded.extend(pages.get_pages(&again, PageParts::Source).await?.into_iter().map(|p| (p.id, p)));
        }
        Ok(loaded)
    }

    /// Record the canon tag of the pages analysed from their body whose stored text was
    /// found to be the canonical text ([`PreparedPage::retag`]): `(id, content hash)`.
    /// Idempotent, like every write of a batch.
    pub(super) async fn tag_pages(&self, pages: &[(i64, u64)]) -> Result<()> {
        if pages.is_empty() {
            return Ok(());
        }
        let tagged = self.inner.stores.pages.tag_pages(pages, &self.inner.canon_tag).await?;
        tracing::debug!(target: LOG_TARGET, asked = pages.len(), tagged, "pages tagged with their canonicalisation");
        Ok(())
    }

    /// Look a prepared page up, unless its text was verified before in the task (or is
    /// being looked up for another page of the batch, `claimed`).
    async fn plan(&self, page: PreparedPage, claimed: &Mutex<HashSet<TextKey>>) -> Result<LookedUp> {
        if let Some(key) = page.text_key {
            if let Some(done) = self.remembered_text(&key) {
                let outcome = PageOutcome { page_id: page.page_id, ..Default::default() };
                return Ok((page, outcome, Plan::Reuse(done)));
            }
            if !claimed.lock().unwrap_or_else(|p| p.into_inner()).insert(key) {
                let outcome = PageOutcome { page_id: page.page_id, ..Default::default() };
                return Ok((page, outcome, Plan::AfterBatchTwin));
            }
        }
        let (mut page, outcome, ids) = self.look_up(page).await?;
        if ids.is_empty() {
            page.release(&self.inner.config);
        }
        Ok((page, outcome, Plan::Verify(ids)))
    }

    /// Index a prepared batch in the page namespace, then verify and record its pages (the
    /// second half of [`Matcher::match_pages`]).
    pub async fn finish_pages(&self, prepared: PreparedPages) -> Result<Vec<(i64, Result<PageOutcome>)>> {
        let verified = self.verify_pages(prepared).await?;
        self.record_pages(verified).await
    }

    /// Write the page-namespace keys of a prepared batch while its pages are verified
    /// (and the canon tags of pages found to have their canonical text stored,
    /// [`PreparedPage::retag`]); record nothing. Every write is idempotent, so a batch
    /// verified and never recorded (a crash) is repeated as if it had never run.
    pub async fn verify_pages(&self, prepared: PreparedPages) -> Result<VerifiedPages> {
        if let Some(e) = prepared.failed {
            return Err(e);
        }
        let prepared = prepared.pages;
        // The page-namespace keys serve the reverse direction (and the weighing of text
        // seen elsewhere), so they are written while the batch is verified when nothing
        // in the verification reads them: the index and the cores work at the same time.
        // Nothing else of a page's analysis is stored (a page is analysed again from its
        // text when it is needed). Nothing is recorded before the write succeeded, and a
        // batch repeated after a crash writes the same again.
        let mut keys = Vec::new();
        let retag: Vec<(i64, u64)> =
            prepared.iter().filter_map(|(_, r)| r.as_ref().ok()).filter_map(|(p, _, _)| p.tag_entry()).collect();
        if self.inner.config.index_pages {
            for (p, _, _) in prepared.iter().filter_map(|(_, r)| r.as_ref().ok()) {
                // A page that is nothing but its site's boilerplate has nothing to index.
                let page_keys = p.page_index_keys(&self.inner.config);
                if !page_keys.is_empty() {
                    keys.push((p.page_id as u64, page_keys));
                }
            }
        }
        let index_pages = async {
            if !keys.is_empty() {
                self.inner.index.add_batch(Namespace::Pages, &keys).await?;
                // Before the task's checkpoint says these pages are done.
                self.record_index_generation().await?;
            }
            self.tag_pages(&retag).await
        };
        // Weighing text seen elsewhere looks passages up among the stored pages, this
        // batch's included: then the batch is indexed first, so that what a page is
        // weighed against does not depend on how the two overlapped.
        let verified = if self.inner.config.seen_text.enabled {
            index_pages.await?;
            self.verify_batch(prepared).await?
        } else {
            let (indexed, verified) = tokio::join!(index_pages, self.verify_batch(prepared));
            indexed?;
            verified?
        };
        let mut copies = Vec::new();
        let mut outcomes = Vec::with_capacity(verified.len());
        for (id, r) in verified {
            outcomes.push((
                id,
                r.map(|(outcome, found)| {
                    copies.extend(found);
                    outcome
                }),
            ));
        }
        Ok(VerifiedPages { outcomes, copies })
    }

    /// Verify the looked-up pages of a batch: the candidate sections of the whole batch
    /// that are not cached are read in one store call and analysed once, then each page is
    /// verified; then the pages with the text of a page verified before take its result.
    /// `Err` when the read of the sections failed; a page's own error (from its
    /// preparation or lookup) is its own.
    pub(super) async fn verify_batch(
        &self,
        looked: Vec<(i64, Result<LookedUp>)>,
    ) -> Result<Vec<(i64, Result<Verified>)>> {
        let concurrency = self.inner.config.concurrency.max(1);
        // A text verified since the page was looked up (in the batch before, prepared
        // while this one was) is not verified again either.
        let looked: Vec<(i64, Result<LookedUp>)> = looked
            .into_iter()
            .map(|(id, r)| {
                let r = r.map(|(page, outcome, plan)| match plan {
                    // A page without candidates was released (`plan`): it has nothing to
                    // verify, and nothing to quote another page's copies from.
                    Plan::Verify(ids) if ids.is_empty() => (page, outcome, Plan::Verify(ids)),
                    Plan::Verify(ids) => match page.text_key.and_then(|key| self.remembered_text(&key)) {
                        Some(done) => (page, outcome, Plan::Reuse(done)),
                        None => (page, outcome, Plan::Verify(ids)),
                    },
                    other => (page, outcome, other),
                });
                (id, r)
            })
            .collect();
        let mut seen = HashSet::new();
        let wanted: Vec<i64> = looked
            .iter()
            .filter_map(|(_, r)| match r {
                Ok((_, _, Plan::Verify(ids))) => Some(ids),
                _ => None,
            })
            .flat_map(|ids| ids.iter().copied())
            .filter(|id| seen.insert(*id))
            .collect();
        let ready = Arc::new(self.ready_sections(self.candidate_sections(&wanted).await?).await?);
        let me = self.clone();
        let first: Vec<(i64, Result<Step>)> = futures::stream::iter(looked.into_iter().map(move |(id, r)| {
            let (m, ready) = (me.clone(), ready.clone());
            async move {
                let r = match r {
                    Ok((page, outcome, Plan::Verify(ids))) => {
                        let sections = ids.iter().filter_map(|id| ready.get(id).map(|e| (*id, e.clone()))).collect();
                        m.verify_against(page, outcome, sections).await.map(Step::Done)
                    }
                    Ok((page, _, Plan::Reuse(done))) => Ok(Step::Done(done.apply(&page))),
                    Ok((page, _, Plan::AfterBatchTwin)) => Ok(Step::Twin(Box::new(page))),
                    Err(e) => Err(e),
                };
                (id, r)
            }
        }))
        .buffered(concurrency)
        .collect()
        .await;
        // The pages whose twin in the batch is verified now.
        let mut out = Vec::with_capacity(first.len());
        for (id, step) in first {
            let r = match step {
                Ok(Step::Done(v)) => Ok(v),
                Ok(Step::Twin(page)) => self.verify_twin(*page).await,
                Err(e) => Err(e),
            };
            out.push((id, r));
        }
        Ok(out)
    }

    /// A page whose text is that of another page of its batch: that page's result, or
    /// (when it failed) the page's own lookup and verification.
    async fn verify_twin(&self, page: PreparedPage) -> Result<Verified> {
        if let Some(done) = page.text_key.and_then(|key| self.remembered_text(&key)) {
            return Ok(done.apply(&page));
        }
        let (page, outcome, ids) = self.look_up(page).await?;
        let ready = self.ready_sections(self.candidate_sections(&ids).await?).await?;
        let sections = ids.iter().filter_map(|id| ready.get(id).map(|e| (*id, e.clone()))).collect();
        self.verify_against(page, outcome, sections).await
    }

    /// Record the copies found on a verified batch (one store call): the outcome of every
    /// page, with its matches, in the order the batch was prepared.
    pub async fn record_pages(&self, verified: VerifiedPages) -> Result<Vec<(i64, Result<PageOutcome>)>> {
        let VerifiedPages { mut outcomes, copies } = verified;
        let mut records: HashMap<i64, Vec<MatchRecord>> = HashMap::new();
        let (recorded, failed) = self.record_copies(copies).await?;
        for r in recorded {
            records.entry(r.page_id).or_default().push(r);
        }
        // A page whose copies could not be quoted fails alone (its copies not recorded).
        let mut failed: HashMap<i64, MatcherError> = failed.into_iter().collect();
        for (id, outcome) in &mut outcomes {
            if let Some(e) = failed.remove(id) {
                *outcome = Err(e);
            } else if let Ok(o) = outcome {
                o.matches = records.remove(id).unwrap_or_default();
            }
        }
        Ok(outcomes)
    }
}
