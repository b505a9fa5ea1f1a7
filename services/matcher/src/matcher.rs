//! [`Matcher`]: fingerprint, look up, verify, decide, record.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use zhiwen_core::canon::{self, slice_chars, InputFormat};
use zhiwen_core::compare::{compare_with, Comparison, PassageIndex};
use zhiwen_core::hash::hash_bytes;
use zhiwen_core::{Analysis, Fingerprinter};
use zhiwen_index::{Candidate, CandidateIndex, IndexKey, LookupResult, Namespace};
use zhiwen_store::{NewMatch, Outcome, Page, Stores, Subject, Timestamp};

use crate::boilerplate::{blank_boilerplate, SiteProfile};
use crate::cache::BoundedCache;
use crate::catalogue::CatalogueProfile;
use crate::config::MatcherConfig;
use crate::kind::MatchKind;
use crate::page_text::{page_canonical, StoredPageText};
use crate::{MatcherError, Result};

mod batch;
mod common_text;
mod index_identity;

/// Sections whose stored fingerprints `index_work` reads in one store call (a bound on
/// the records held at once for a work of thousands of chapters).
const SECTIONS_CHECKED_PER_READ: usize = 256;

/// Verified page texts remembered for mirrors ([`TextResult`]): pages of a task whose text
/// equals one verified earlier in the task reuse its result instead of being looked up and
/// verified again. Most entries are of pages without copies (a few words each).
const TEXT_RESULTS: usize = 20_000;

pub use batch::{PreparedPages, VerifiedPages};

/// Matches pages against protected works (and works against stored pages).
///
/// Cheap to clone (shared state behind an `Arc`); every operation is idempotent, so a
/// batch repeated after a crash changes nothing.
#[derive(Clone)]
pub struct Matcher {
    inner: Arc<Inner>,
}

struct Inner {
    stores: Stores,
    index: Arc<dyn CandidateIndex>,
    fp: Fingerprinter,
    config: MatcherConfig,
    sections: Mutex<BoundedCache<i64, Arc<SectionEntry>>>,
    /// Cached sections checked against the store in an earlier epoch are checked again
    /// (by text hash) on their next use; a matching task starts a new epoch.
    epoch: AtomicU64,
    sites: Mutex<HashMap<String, Arc<SiteProfile>>>,
    site_build: tokio::sync::Mutex<()>,
    /// Sections whose stored fingerprints and index entries this process wrote or found
    /// current: section id -> (hash of the text they were made from, `updated_at` of the
    /// work then). `indexed_works` skips whole works; this still spares the stored
    /// fingerprints of unchanged works' sections after `forget_sections` cleared it.
    indexed: Mutex<HashMap<i64, (u64, i64)>>,
    /// Works all of whose sections were indexed or found current: work id -> the work's
    /// `updated_at` read before its sections were (a later change has a later one).
    indexed_works: Mutex<HashMap<i64, i64>>,
    /// Every work's `updated_at`, listed once per epoch before any section of the epoch
    /// is read: (epoch, work id -> `updated_at`).
    work_versions: tokio::sync::Mutex<(u64, Arc<HashMap<i64, i64>>)>,
    /// Catalogue-common text (`common_text`), measured for `catalogue_version`.
    catalogue: Mutex<Option<Arc<CatalogueProfile>>>,
    /// Bumped when sections changed: indexing a new or changed section, forgetting one,
    /// or a scale-out worker starting on another task (`remeasure_catalogue`).
    catalogue_version: AtomicU64,
    /// The epoch in which the profile was last checked against the listing of the works
    /// (what another process changed shows there).
    catalogue_checked: AtomicU64,
    catalogue_build: tokio::sync::Mutex<()>,
    /// What verifying each page text of the current task found, by text
    /// ([`PreparedPage::text_key`]): a page with the same text as one verified before (a
    /// mirror under another URL) reuses it. Cleared whenever sections may have changed.
    texts: Mutex<BoundedCache<TextKey, Arc<TextResult>>>,
}

/// A page text: hash of the canonical text a page is compared by, and its length.
pub(crate) type TextKey = (u64, usize);

/// What looking up and verifying one page text found, for the pages of a task with the
/// same text: the copies with the page side of their evidence as ranges of canonical
/// characters, which any page with this text maps to its own original.
pub(crate) struct TextResult {
    /// The page that was verified.
    page_id: i64,
    candidates: usize,
    keys_looked_up: usize,
    keys_found: usize,
    copies: Vec<TextCopy>,
}

/// A copy found on a page text.
struct TextCopy {
    section_id: i64,
    work_id: i64,
    kind: MatchKind,
    /// The comparison, its page-side quotes left empty (every page quotes its own).
    comparison: Comparison,
    /// Per evidence passage, its range in the canonical text.
    page_ranges: Vec<(usize, usize)>,
}

impl TextResult {
    /// The result of `page` (verified into `outcome` and `copies`).
    fn of(page: &PreparedPage, outcome: &PageOutcome, copies: &[FoundCopy]) -> Self {
        let copies = match page.view() {
            Some(view) => copies
                .iter()
                .map(|c| {
                    let mut comparison = c.comparison.clone();
                    let page_ranges = comparison
                        .evidence
                        .iter_mut()
                        .map(|e| {
                            e.b_text = String::new();
                            canonical_range(&view.canonical, e.b_start, e.b_end)
                        })
                        .collect();
                    TextCopy { section_id: c.section_id, work_id: c.work_id, kind: c.kind, comparison, page_ranges }
                })
                .collect(),
            None => Vec::new(),
        };
        TextResult {
            page_id: page.page_id,
            candidates: outcome.candidates,
            keys_looked_up: outcome.keys_looked_up,
            keys_found: outcome.keys_found,
            copies,
        }
    }

    /// The outcome and the copies of `page`, whose text is this one: the same sections,
    /// kinds, scores and measures, with the page side of the evidence in `page`'s original.
    fn apply(&self, page: &PreparedPage) -> (PageOutcome, Vec<FoundCopy>) {
        let outcome = PageOutcome {
            page_id: page.page_id,
            candidates: self.candidates,
            keys_looked_up: self.keys_looked_up,
            keys_found: self.keys_found,
            verified: 0,
            boilerplate_chars: page.boilerplate_chars,
            matches: Vec::new(),
            same_text_as: Some(self.page_id),
        };
        let Some(view) = page.view() else { return (outcome, Vec::new()) };
        let copies = self
            .copies
            .iter()
            .map(|c| {
                let mut comparison = c.comparison.clone();
                for (e, &(start, end)) in comparison.evidence.iter_mut().zip(&c.page_ranges) {
                    (e.b_start, e.b_end) = view.canonical.original_span(start, end);
                    e.b_text = slice_chars(&page.original, e.b_start, e.b_end).to_owned();
                }
                FoundCopy::new(c.section_id, c.work_id, page, comparison, c.kind)
            })
            .collect();
        (outcome, copies)
    }
}

/// The canonical characters whose original spans lie within `start..end` of the original
/// (the inverse of [`zhiwen_core::canon::CanonicalText::original_span`] for a passage).
fn canonical_range(canonical: &zhiwen_core::canon::CanonicalText, start: usize, end: usize) -> (usize, usize) {
    let within = |s: &zhiwen_core::canon::SourceSpan| s.start as usize >= start && s.end as usize <= end;
    let spans = canonical.source_spans();
    let Some(first) = spans.iter().position(within) else {
        // An empty passage: where it sits.
        let at = spans.partition_point(|s| (s.start as usize) < start);
        return (at, at);
    };
    let last = spans.iter().rposition(within).unwrap_or(first);
    (first, last + 1)
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matcher")
            .field("stores", &self.inner.stores.backend)
            .field("index", &self.inner.index.backend())
            .field("params_tag", &self.inner.fp.params_tag())
            .finish_non_exhaustive()
    }
}

/// A section ready for verification.
struct SectionEntry {
    work_id: i64,
    text_hash: u64,
    /// Epoch in which the entry was last checked against the store.
    checked: AtomicU64,
    /// The work's `updated_at` read before the text was (`i64::MIN`: unknown): while the
    /// work still has it, the text is the same and nothing needs reading.
    work_version: AtomicI64,
    /// Complete, or streams only ([`Fingerprinter::analyze_streams`]): enough for the
    /// pre-check that rules out most candidates, at a third of the cost.
    analysis: Analysis,
    /// The complete analysis of a streams-only `analysis`, made when first needed.
    complete: OnceLock<Analysis>,
}

impl SectionEntry {
    /// The complete analysis (made now if this entry has only the streams).
    fn full(&self, fp: &Fingerprinter) -> &Analysis {
        if self.analysis.is_complete() {
            return &self.analysis;
        }
        self.complete.get_or_init(|| fp.complete(self.analysis.clone()))
    }
}

/// A page ready for verification: its analysis with the site's boilerplate blanked.
struct PreparedPage {
    page_id: i64,
    url: String,
    site: String,
    /// The decoded original (evidence is quoted from it).
    original: String,
    /// The analysis of the page with its site's boilerplate blanked (of the page as it is
    /// when it has none): what is looked up, compared and indexed. Streams only until a
    /// candidate needs the word stage ([`PreparedPage::full`]): most pages share no
    /// passage with any section and never do. `None` when nothing but boilerplate is left.
    analysis: Option<Analysis>,
    /// The complete analysis of a streams-only `analysis`, made when first needed.
    complete: OnceLock<Analysis>,
    /// Boilerplate was blanked: `analysis` is of a copy of the original with spaces
    /// where the boilerplate was (same character offsets).
    blanked: bool,
    boilerplate_chars: usize,
    /// Passage index of `view()`, made on first use and shared by all the candidates.
    passages: OnceLock<PassageIndex>,
    /// The text `view()` is of; `None` when nothing but boilerplate is left.
    text_key: Option<TextKey>,
}

impl PreparedPage {
    /// What is looked up and compared; `None` when nothing but boilerplate is left.
    fn view(&self) -> Option<&Analysis> {
        self.analysis.as_ref()
    }

    /// What is compared, with its passage index (which needs the streams only).
    fn view_indexed(&self) -> Option<(&Analysis, &PassageIndex)> {
        let view = self.view()?;
        Some((view, self.passages.get_or_init(|| PassageIndex::new(view))))
    }

    /// The complete analysis of `view()` (made now if it has only the streams).
    fn full(&self, fp: &Fingerprinter) -> Option<&Analysis> {
        let view = self.view()?;
        if view.is_complete() {
            return Some(view);
        }
        Some(self.complete.get_or_init(|| fp.complete(view.clone())))
    }
}

/// One recorded match (a verified copy).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchRecord {
    /// Match id in the store.
    pub match_id: i64,
    /// Work section.
    pub section_id: i64,
    /// Work of the section.
    pub work_id: i64,
    /// Page.
    pub page_id: i64,
    /// Page URL.
    pub url: String,
    /// Host of the page.
    pub site: String,
    /// What kind of copy.
    pub kind: MatchKind,
    /// The verdict's score (0..=1).
    pub score: f64,
    /// What the upsert did (`Inserted` = a new match).
    pub outcome: Outcome,
    /// Longest evidence passage, section side (original text).
    pub evidence_section: String,
    /// The same passage, page side (original text).
    pub evidence_page: String,
}

/// What matching one page did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct PageOutcome {
    /// The page.
    pub page_id: i64,
    /// Candidates the index returned (before the minimum-hits filter).
    pub candidates: usize,
    /// Keys the page was looked up with, and those that had a posting list.
    #[serde(default)]
    pub keys_looked_up: usize,
    #[serde(default)]
    pub keys_found: usize,
    /// Candidates verified with the full measures.
    pub verified: usize,
    /// Content characters blanked as site boilerplate.
    pub boilerplate_chars: usize,
    /// Matches recorded.
    pub matches: Vec<MatchRecord>,
    /// The page had the same text as this page, matched earlier in the task (a mirror):
    /// its matches are that page's, with its own URL and evidence quoted from its own
    /// original; it was neither looked up nor verified again.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub same_text_as: Option<i64>,
}

/// What matching one work against stored pages did.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct WorkOutcome {
    /// The work.
    pub work_id: i64,
    /// Sections looked up.
    pub sections: usize,
    /// (section, page) pairs verified.
    pub verified: usize,
    /// Matches recorded.
    pub matches: Vec<MatchRecord>,
}

/// What indexing did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct IndexReport {
    /// Documents looked at.
    pub documents: usize,
    /// Documents (re)fingerprinted and (re)indexed.
    pub indexed: usize,
    /// Documents whose stored fingerprints were current (same parameters, same text).
    pub unchanged: usize,
}

impl Matcher {
    /// A matcher over `stores` and `index`, fingerprinting with `fingerprinter`.
    pub fn new(
        stores: Stores,
        index: Arc<dyn CandidateIndex>,
        fingerprinter: Fingerprinter,
        config: MatcherConfig,
    ) -> Self {
        let cache = BoundedCache::new(config.section_cache);
        Matcher {
            inner: Arc::new(Inner {
                stores,
                index,
                fp: fingerprinter,
                config,
                sections: Mutex::new(cache),
                epoch: AtomicU64::new(0),
                sites: Mutex::new(HashMap::new()),
                site_build: tokio::sync::Mutex::new(()),
                indexed: Mutex::new(HashMap::new()),
                indexed_works: Mutex::new(HashMap::new()),
                work_versions: tokio::sync::Mutex::new((u64::MAX, Arc::default())),
                catalogue: Mutex::new(None),
                catalogue_version: AtomicU64::new(0),
                catalogue_checked: AtomicU64::new(u64::MAX),
                catalogue_build: tokio::sync::Mutex::new(()),
                texts: Mutex::new(BoundedCache::new(TEXT_RESULTS)),
            }),
        }
    }

    /// The stores.
    pub fn stores(&self) -> &Stores {
        &self.inner.stores
    }

    /// The candidate index.
    pub fn index(&self) -> &Arc<dyn CandidateIndex> {
        &self.inner.index
    }

    /// The configuration.
    pub fn config(&self) -> &MatcherConfig {
        &self.inner.config
    }

    /// The fingerprinter.
    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.inner.fp
    }

    /// Fingerprint every section of a work, store the fingerprints and add them to the
    /// section namespace of the index. Sections whose stored fingerprints have the
    /// current parameter tag and the same canonical text are skipped.
    pub async fn index_work(&self, work_id: i64) -> Result<IndexReport> {
        let s = &self.inner.stores;
        // The version before the sections: a change after this read has a later version,
        // so remembering this one can make the next call look again, never miss a change.
        let work = s.queries.work_summary(work_id).await?;
        if let Some(w) = &work {
            let done = self.inner.indexed_works.lock().unwrap_or_else(|p| p.into_inner()).get(&work_id).copied();
            if done == Some(w.updated_at.0) {
                let n = w.section_count as usize;
                return Ok(IndexReport { documents: n, indexed: 0, unchanged: n });
            }
        }
        let sections = s.works.sections_of(work_id).await?;
        if sections.is_empty() && work.is_none() {
            return Err(MatcherError::NotFound { what: "work", id: work_id });
        }
        let updated_at = work.map_or(i64::MIN, |w| w.updated_at.0);
        let mut report = IndexReport { documents: sections.len(), ..Default::default() };
        let mut fingerprints = Vec::new();
        let mut keys = Vec::new();
        let mut current = Vec::new();
        let mut to_check = Vec::with_capacity(sections.len());
        for section in sections {
            // Stored fingerprints are only ever written for the text they were made from
            // (with this process's parameters, by any process), and dropped only after the
            // work was updated: the same text and the same work version as when this
            // process last indexed or checked the section mean they are current, without
            // reading and decoding them again (every matching task indexes every work).
            let memo = (hash_bytes(section.text.as_bytes()), updated_at);
            if self.inner.indexed.lock().unwrap_or_else(|p| p.into_inner()).get(&section.id) == Some(&memo) {
                report.unchanged += 1;
                continue;
            }
            current.push((section.id, memo));
            to_check.push(section);
        }
        // The stored fingerprints are read for many sections at a time, not one by one: a
        // process's first task checks every section of the catalogue (at 100k sections on
        // MongoDB + Redis its start took 54 s instead of 92-100).
        let subjects: Vec<Subject> = to_check.iter().map(|section| Subject::section(section.id)).collect();
        let mut stored_of: HashMap<i64, zhiwen_store::FingerprintRecord> = HashMap::new();
        for (i, section) in to_check.into_iter().enumerate() {
            if i % SECTIONS_CHECKED_PER_READ == 0 {
                let end = subjects.len().min(i + SECTIONS_CHECKED_PER_READ);
                let read = s.fingerprints.get_fingerprints_many(&subjects[i..end]).await?;
                stored_of = read.into_iter().map(|r| (r.subject.id, r)).collect();
            }
            let stored = stored_of.remove(&section.id);
            let inner = self.inner.clone();
            let id = section.id;
            let fresh = tokio::task::spawn_blocking(move || -> Result<Option<Analysis>> {
                if let Some(rec) = stored {
                    if rec.params_tag == inner.fp.params_tag() {
                        let canonical = canon::canonicalize_decoded(
                            section.text.clone(),
                            "UTF-8",
                            InputFormat::Text,
                            &inner.fp.params().canon,
                        );
                        if let Ok(c) = canonical {
                            if hash_bytes(c.text().as_bytes()) == rec.fingerprints.content_hash {
                                return Ok(None);
                            }
                        }
                    }
                }
                inner
                    .section_entry_from_text(id, section.work_id, &section.text, updated_at, true)
                    .map(|e| Some(e.analysis.clone()))
            })
            .await??;
            match fresh {
                None => report.unchanged += 1,
                Some(analysis) => {
                    report.indexed += 1;
                    keys.push((id as u64, analysis.fingerprints.index_keys()));
                    fingerprints.push((Subject::section(id), analysis.fingerprints));
                }
            }
        }
        if !fingerprints.is_empty() {
            s.fingerprints.put_fingerprints_many(&fingerprints).await?;
            self.inner.index.add_batch(Namespace::Sections, &keys).await?;
        }
        // New or changed sections, whoever fingerprinted them: the catalogue-common text
        // is measured again on its next use (and only then: measuring reads every
        // section's fingerprints, too much for every task).
        if !current.is_empty() {
            self.inner.catalogue_version.fetch_add(1, Ordering::Relaxed);
        }
        self.inner.indexed.lock().unwrap_or_else(|p| p.into_inner()).extend(current);
        if updated_at != i64::MIN {
            self.inner.indexed_works.lock().unwrap_or_else(|p| p.into_inner()).insert(work_id, updated_at);
        }
        tracing::debug!(work_id, indexed = report.indexed, unchanged = report.unchanged, "work indexed");
        Ok(report)
    }

    /// Fingerprint a page (its site's boilerplate blanked) and add it to the page namespace
    /// of the index (for the reverse direction). Keys the page already has are not written
    /// again; a page that is nothing but boilerplate has nothing to index.
    pub async fn index_page(&self, page_id: i64) -> Result<IndexReport> {
        let prepared = self.load_and_prepare(page_id).await?;
        let Some(analysis) = prepared.view() else { return Ok(IndexReport { documents: 1, indexed: 0, unchanged: 1 }) };
        self.add_page_keys(page_id, analysis).await?;
        Ok(IndexReport { documents: 1, indexed: 1, unchanged: 0 })
    }

    /// The page-namespace keys of a batch of stored pages, analysed from their texts (the
    /// site's boilerplate blanked) `concurrency` at a time, in the order of `page_ids`:
    /// what `zhiwen reindex` rebuilds the page namespace from. A page that is nothing but
    /// boilerplate has no keys; one missing or without usable text has its own error.
    /// `Err` only when the batch read of the pages failed.
    pub async fn page_namespace_keys(
        &self,
        page_ids: &[i64],
    ) -> Result<Vec<(i64, Result<Vec<zhiwen_core::IndexKey>>)>> {
        let mut loaded: HashMap<i64, Page> =
            self.inner.stores.pages.get_pages(page_ids).await?.into_iter().map(|p| (p.id, p)).collect();
        let concurrency = self.inner.config.concurrency.max(1);
        let me = self.clone();
        Ok(futures::stream::iter(page_ids.iter().map(|&id| (id, loaded.remove(&id))).map(move |(id, page)| {
            let m = me.clone();
            async move {
                let keys = match page {
                    Some(page) => m.prepare_loaded(page).await.map(|p| {
                        p.view().map(|view| m.inner.config.page_index_keys(&view.fingerprints)).unwrap_or_default()
                    }),
                    None => Err(MatcherError::NotFound { what: "page", id }),
                };
                (id, keys)
            }
        }))
        .buffered(concurrency)
        .collect()
        .await)
    }

    /// The keys a task looks a page up with in the section namespace (the site's
    /// boilerplate blanked); `None` when nothing but boilerplate is left. For diagnostics
    /// (`zhiwen eval` reports which fingerprint families nominated each section).
    pub async fn page_lookup_keys(&self, page_id: i64) -> Result<Option<Vec<zhiwen_core::IndexKey>>> {
        let prepared = self.load_and_prepare(page_id).await?;
        Ok(prepared.full(&self.inner.fp).map(|full| full.fingerprints.index_keys()))
    }

    async fn add_page_keys(&self, page_id: i64, analysis: &Analysis) -> Result<()> {
        let keys = self.inner.config.page_index_keys(&analysis.fingerprints);
        self.inner.index.add(Namespace::Pages, page_id as u64, &keys).await?;
        Ok(())
    }

    /// Match one page against the protected sections: look up candidates, verify each
    /// with every measure, decide, and record the copies. A page that matches nothing
    /// leaves no match record.
    pub async fn match_page(&self, page_id: i64) -> Result<PageOutcome> {
        let prepared = self.load_and_prepare(page_id).await?;
        if self.inner.config.index_pages {
            if let Some(analysis) = prepared.view() {
                self.add_page_keys(page_id, analysis).await?;
            }
        }
        self.match_prepared(prepared).await
    }

    /// Load a page and fingerprint it (boilerplate blanked), on the blocking pool.
    async fn load_and_prepare(&self, page_id: i64) -> Result<PreparedPage> {
        let s = &self.inner.stores;
        let page = s.pages.get_page(page_id).await?.ok_or(MatcherError::NotFound { what: "page", id: page_id })?;
        self.prepare_loaded(page).await
    }

    /// Fingerprint a loaded page (boilerplate blanked), on the blocking pool.
    async fn prepare_loaded(&self, page: Page) -> Result<PreparedPage> {
        let profile = self.site_profile(&page.site).await?;
        let inner = self.inner.clone();
        tokio::task::spawn_blocking(move || inner.prepare_page(page, &profile)).await?
    }

    /// Look up, verify and record a prepared page (already in the page namespace).
    async fn match_prepared(&self, prepared: PreparedPage) -> Result<PageOutcome> {
        let (mut outcome, copies) = self.verify_page(prepared).await?;
        outcome.matches = self.record_all(copies).await?;
        Ok(outcome)
    }

    /// Look up and verify a prepared page: its outcome (no matches yet) and the copies
    /// found, to be recorded by [`Matcher::record_all`] (a batch records its pages' copies
    /// in one store call).
    async fn verify_page(&self, prepared: PreparedPage) -> Result<(PageOutcome, Vec<FoundCopy>)> {
        let page_id = prepared.page_id;
        let (prepared, outcome, ids) = self.look_up(prepared).await?;
        // A batch of one: the same reads and verification as a task's batches.
        match self.verify_batch(vec![(page_id, Ok((prepared, outcome, batch::Plan::Verify(ids))))]).await?.pop() {
            Some((_, verified)) => verified,
            None => Err(MatcherError::Internal(format!("page {page_id}: its verification returned nothing"))),
        }
    }

    /// Look up a prepared page in the section index: the page (completed when it has
    /// candidates worth verifying), its outcome so far and the sections worth verifying,
    /// best first.
    ///
    /// A candidate is worth verifying only when it shares winnowed keys
    /// ([`crate::candidates`]), which the page's streams give without the word stage. So
    /// the winnowed keys are looked up first, sampled as the whole query will be
    /// ([`Fingerprinter::coarse_key_counts`]). When no candidate is worth verifying the
    /// page is done and never segmented into words: its other keys could add hits of other
    /// families only. Otherwise the page is completed, its other keys are looked up too and
    /// the two lookups merged: the candidates, hits and order one lookup of all the keys
    /// gives (the index's conformance suite checks the merge).
    async fn look_up(&self, prepared: PreparedPage) -> Result<(PreparedPage, PageOutcome, Vec<i64>)> {
        let page_id = prepared.page_id;
        let mut outcome = PageOutcome { page_id, boilerplate_chars: prepared.boilerplate_chars, ..Default::default() };
        let Some(view) = prepared.view() else { return Ok((prepared, outcome, Vec::new())) };
        let (index, limit) = (&self.inner.index, self.inner.config.candidate_limit);
        let (winnowed, _): (Vec<IndexKey>, Vec<IndexKey>) =
            view.fingerprints.index_keys().into_iter().partition(is_winnowed);
        let (with_words, without_words) = self.inner.fp.coarse_key_counts(view);
        let modulus = index.query_sample_modulus(with_words, winnowed.len());
        let (prepared, found) = if modulus != index.query_sample_modulus(without_words, winnowed.len()) {
            // Whether the page has content words decides its sampling (a rare page at the
            // edge of the key budget): the word stage first, then one lookup as before.
            let prepared = self.completed(prepared).await?;
            let keys = prepared.full(&self.inner.fp).map(|full| full.fingerprints.index_keys()).unwrap_or_default();
            let found = index.lookup(Namespace::Sections, &keys, limit).await?;
            (prepared, found)
        } else {
            let sampled = zhiwen_index::sample_winnowed_keys(winnowed, modulus);
            let first = index.lookup_sampled(Namespace::Sections, &sampled, modulus).await?;
            if self.good(&first).is_empty() {
                (prepared, first.merged(LookupResult::default(), limit))
            } else {
                let prepared = self.completed(prepared).await?;
                let coarse: Vec<IndexKey> = prepared
                    .full(&self.inner.fp)
                    .map(|full| full.fingerprints.index_keys().into_iter().filter(|k| !is_winnowed(k)).collect())
                    .unwrap_or_default();
                let second = index.lookup_sampled(Namespace::Sections, &coarse, modulus).await?;
                (prepared, first.merged(second, limit))
            }
        };
        outcome.candidates = found.candidates.len();
        (outcome.keys_looked_up, outcome.keys_found) = (found.keys_queried, found.keys_found);
        let ids = self.good(&found).iter().map(|c| c.doc as i64).collect();
        Ok((prepared, outcome, ids))
    }

    /// The page with its complete analysis made (on the blocking pool).
    async fn completed(&self, prepared: PreparedPage) -> Result<PreparedPage> {
        let inner = self.inner.clone();
        Ok(tokio::task::spawn_blocking(move || {
            prepared.full(&inner.fp);
            prepared
        })
        .await?)
    }

    /// The analyses of candidate sections, by id: cached ones as they are, the others made
    /// now (and cached), `concurrency` at a time on the blocking pool. A section that
    /// cannot be fingerprinted is left out (with a warning).
    async fn ready_sections(&self, sources: Vec<(i64, SectionSource)>) -> Result<HashMap<i64, Arc<SectionEntry>>> {
        let mut out = HashMap::with_capacity(sources.len());
        let mut texts = Vec::new();
        for (id, source) in sources {
            match source {
                SectionSource::Ready(entry) => {
                    out.insert(id, entry);
                }
                text => texts.push((id, text)),
            }
        }
        if texts.is_empty() {
            return Ok(out);
        }
        let per_job = texts.len().div_ceil(self.inner.config.concurrency.max(1));
        let mut jobs = Vec::new();
        let mut texts = texts.into_iter().peekable();
        while texts.peek().is_some() {
            let chunk: Vec<(i64, SectionSource)> = texts.by_ref().take(per_job).collect();
            let inner = self.inner.clone();
            jobs.push(tokio::task::spawn_blocking(move || {
                chunk.into_iter().filter_map(|(id, s)| inner.ready(id, s).map(|e| (id, e))).collect::<Vec<_>>()
            }));
        }
        for job in jobs {
            out.extend(job.await?);
        }
        Ok(out)
    }

    /// Verify a looked-up page against its candidate sections (best first), on the
    /// blocking pool: its outcome and the copies found.
    /// The result is remembered for the page's text ([`Matcher::remember_text`]).
    async fn verify_against(
        &self,
        prepared: PreparedPage,
        mut outcome: PageOutcome,
        sections: Vec<(i64, Arc<SectionEntry>)>,
    ) -> Result<(PageOutcome, Vec<FoundCopy>)> {
        if sections.is_empty() {
            self.remember_text(&prepared, TextResult::of(&prepared, &outcome, &[]));
            return Ok((outcome, Vec::new()));
        }
        let catalogue = self.catalogue().await?;
        let inner = self.inner.clone();
        outcome.verified = sections.len();
        let for_texts = outcome.clone();
        let (copies, result, key) = tokio::task::spawn_blocking(move || {
            let mut copies = Vec::new();
            for (section_id, entry) in &sections {
                if let Some((comparison, kind)) = inner.verify(entry, &prepared, &catalogue) {
                    copies.push(FoundCopy::new(*section_id, entry.work_id, &prepared, comparison, kind));
                }
            }
            let result = prepared.text_key.map(|_| TextResult::of(&prepared, &for_texts, &copies));
            (copies, result, prepared.text_key)
        })
        .await?;
        if let (Some(key), Some(result)) = (key, result) {
            self.inner.texts.lock().unwrap_or_else(|p| p.into_inner()).insert(key, Arc::new(result));
        }
        Ok((outcome, copies))
    }

    /// Remember what verifying `page` found, for pages with the same text later in the task.
    fn remember_text(&self, page: &PreparedPage, result: TextResult) {
        if let Some(key) = page.text_key {
            self.inner.texts.lock().unwrap_or_else(|p| p.into_inner()).insert(key, Arc::new(result));
        }
    }

    /// What verifying a page with this text found earlier in the task, if anything.
    fn remembered_text(&self, key: &TextKey) -> Option<Arc<TextResult>> {
        self.inner.texts.lock().unwrap_or_else(|p| p.into_inner()).get(key)
    }

    /// Forget every remembered page text (sections may have changed).
    fn forget_texts(&self) {
        self.inner.texts.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// Match a work (added or changed) against the pages already stored: index its
    /// sections, look each up in the page namespace, verify and record.
    pub async fn match_work(&self, work_id: i64) -> Result<WorkOutcome> {
        self.index_work(work_id).await?;
        let s = &self.inner.stores;
        let sections = s.works.sections_of(work_id).await?;
        let mut outcome = WorkOutcome { work_id, sections: sections.len(), ..Default::default() };
        // Pages are prepared once even when several sections point at them.
        let mut pages: HashMap<i64, Option<Arc<PreparedPage>>> = HashMap::new();
        let mut copies = Vec::new();
        for section in sections {
            let Some(entry) = self.section(section.id).await? else { continue };
            let (e, inner) = (entry.clone(), self.inner.clone());
            let keys =
                tokio::task::spawn_blocking(move || inner.config.page_index_keys(&e.full(&inner.fp).fingerprints))
                    .await?;
            let mut found = self.inner.index.lookup(Namespace::Pages, &keys, self.inner.config.candidate_limit).await?;
            // Pages are indexed sampled 1 in m, and the lookup may sample further by the
            // same rule (powers of two, by value): hits are about 1/max of shared keys.
            found.sample_modulus = found.sample_modulus.max(self.inner.config.page_sampling_modulus());
            for c in self.good(&found) {
                let page_id = c.doc as i64;
                if let std::collections::hash_map::Entry::Vacant(slot) = pages.entry(page_id) {
                    let prepared = match s.pages.get_page(page_id).await? {
                        Some(page) => {
                            let profile = self.site_profile(&page.site).await?;
                            let inner = self.inner.clone();
                            match tokio::task::spawn_blocking(move || inner.prepare_page(page, &profile)).await? {
                                Ok(p) => Some(Arc::new(p)),
                                Err(e) => {
                                    tracing::warn!(page_id, error = %e, "page skipped");
                                    None
                                }
                            }
                        }
                        None => None,
                    };
                    slot.insert(prepared);
                }
                let Some(Some(prepared)) = pages.get(&page_id).cloned() else { continue };
                outcome.verified += 1;
                let inner = self.inner.clone();
                let (e, p) = (entry.clone(), prepared.clone());
                let catalogue = self.catalogue().await?;
                let verdict = tokio::task::spawn_blocking(move || inner.verify(&e, &p, &catalogue)).await?;
                if let Some((comparison, kind)) = verdict {
                    copies.push(FoundCopy::new(section.id, work_id, &prepared, comparison, kind));
                }
            }
        }
        outcome.matches = self.record_all(copies).await?;
        Ok(outcome)
    }

    /// Forget cached analyses of these sections (call after a work changed in this process;
    /// changed texts are also detected by hash on the next use).
    pub fn forget_sections(&self, section_ids: &[i64]) {
        let mut cache = self.inner.sections.lock().unwrap_or_else(|p| p.into_inner());
        section_ids.iter().for_each(|id| cache.remove(id));
        let mut indexed = self.inner.indexed.lock().unwrap_or_else(|p| p.into_inner());
        section_ids.iter().for_each(|id| {
            indexed.remove(id);
        });
        // Which works they belong to is not known here: every work is looked at again.
        self.inner.indexed_works.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.inner.catalogue_version.fetch_add(1, Ordering::Relaxed);
        self.forget_texts();
    }

    /// The boilerplate profile of a site (measured on first use, then cached).
    pub async fn site_profile(&self, site: &str) -> Result<Arc<SiteProfile>> {
        let cfg = &self.inner.config.boilerplate;
        if !cfg.enabled {
            return Ok(Arc::new(SiteProfile::default()));
        }
        let ttl = Duration::from_secs(cfg.profile_ttl_seconds);
        let cached = |inner: &Inner| {
            let sites = inner.sites.lock().unwrap_or_else(|p| p.into_inner());
            sites.get(site).filter(|p| p.built.is_some_and(|t| t.elapsed() < ttl)).cloned()
        };
        if let Some(p) = cached(&self.inner) {
            return Ok(p);
        }
        let _building = self.inner.site_build.lock().await;
        if let Some(p) = cached(&self.inner) {
            return Ok(p);
        }
        let s = &self.inner.stores;
        let refs = s.pages.list_pages(Some(site), 0, cfg.sample_pages.max(1)).await?;
        let mut streams = Vec::with_capacity(refs.len());
        if refs.len() >= cfg.min_pages as usize {
            for r in refs {
                if let Some(page) = s.pages.get_page(r.id).await? {
                    let inner = self.inner.clone();
                    if let Some(units) = tokio::task::spawn_blocking(move || inner.char_units(&page)).await? {
                        streams.push(units);
                    }
                }
            }
        }
        let inner = self.inner.clone();
        let site_owned = site.to_owned();
        let mut profile = tokio::task::spawn_blocking(move || {
            SiteProfile::measure(&site_owned, &streams, inner.fp.params().winnow.chars_k, &inner.config.boilerplate)
        })
        .await?;
        profile.built = Some(Instant::now());
        tracing::debug!(
            site,
            pages = profile.pages_sampled,
            kgrams = profile.kgrams.len(),
            "site boilerplate measured"
        );
        let profile = Arc::new(profile);
        self.inner.sites.lock().unwrap_or_else(|p| p.into_inner()).insert(site.to_owned(), profile.clone());
        Ok(profile)
    }

    /// The candidates worth verifying, most shared winnowed keys first.
    fn good<'a>(&self, found: &'a LookupResult) -> Vec<&'a Candidate> {
        crate::candidates::worth_verifying(found, &self.inner.config)
    }

    /// Start a new epoch of the section cache: every cached section is checked against
    /// the store (one read, text hash compared) on its next use. A matching task calls
    /// this when it starts, so works changed by another process are seen; within this
    /// process [`Matcher::forget_sections`] and indexing keep the cache current. The
    /// catalogue-common text is not measured again here: indexing a new or changed
    /// section (the task indexes every work first) or forgetting one does that.
    ///
    /// It also starts a new set of remembered page texts: a page with the same text as
    /// another one is verified once per task, and its mirrors reuse that result.
    pub fn revalidate_sections(&self) {
        self.inner.epoch.fetch_add(1, Ordering::Relaxed);
        self.forget_texts();
    }

    /// Measure the catalogue-common text again on its next use. Scale-out workers call
    /// this when they start on another task: they index no works, so they cannot see
    /// sections added by other processes otherwise (one measurement per task).
    pub fn remeasure_catalogue(&self) {
        self.inner.catalogue_version.fetch_add(1, Ordering::Relaxed);
        self.forget_texts();
    }

    /// The analysis of a section (cached; re-made when its text changed).
    async fn section(&self, id: i64) -> Result<Option<Arc<SectionEntry>>> {
        match self.candidate_sections(&[id]).await?.pop() {
            None => Ok(None),
            // A cache hit needs no trip to the blocking pool; only an analysis does.
            Some((_, SectionSource::Ready(entry))) => Ok(Some(entry)),
            Some((_, text)) => {
                let inner = self.inner.clone();
                Ok(tokio::task::spawn_blocking(move || inner.ready(id, text)).await?)
            }
        }
    }

    /// The sections `ids` (stored ones only, in the order given): cached analyses as they
    /// are, the others' texts read in one store call and left to analyse
    /// ([`Inner::ready`]) on the blocking pool, with the verification that needs them.
    ///
    /// A cached analysis is checked once per epoch, against its work's `updated_at` from
    /// the epoch's listing ([`Matcher::work_versions`]): the text is read again only when
    /// the work changed.
    async fn candidate_sections(&self, ids: &[i64]) -> Result<Vec<(i64, SectionSource)>> {
        let epoch = self.inner.epoch.load(Ordering::Relaxed);
        let mut out: Vec<(i64, Option<SectionSource>)> = Vec::with_capacity(ids.len());
        let mut stale: HashMap<i64, Arc<SectionEntry>> = HashMap::new();
        let mut versions = None;
        for &id in ids {
            let hit = self.inner.sections.lock().unwrap_or_else(|p| p.into_inner()).get(&id);
            if let Some(entry) = hit.as_ref().filter(|e| e.checked.load(Ordering::Relaxed) >= epoch) {
                out.push((id, Some(SectionSource::Ready(entry.clone()))));
                continue;
            }
            // Listed before the texts below are read, so never newer than those texts.
            if versions.is_none() {
                versions = Some(self.work_versions(epoch).await?);
            }
            let known = versions.as_ref().map(|v| v.as_ref());
            if let Some(entry) = hit {
                let version = known.and_then(|v| v.get(&entry.work_id)).copied();
                if version.is_some_and(|v| v == entry.work_version.load(Ordering::Relaxed)) {
                    entry.checked.fetch_max(epoch, Ordering::Relaxed);
                    out.push((id, Some(SectionSource::Ready(entry))));
                    continue;
                }
                stale.insert(id, entry);
            }
            out.push((id, None));
        }
        let unread: Vec<i64> = out.iter().filter(|(_, s)| s.is_none()).map(|(id, _)| *id).collect();
        if !unread.is_empty() {
            let mut read: HashMap<i64, zhiwen_store::Section> =
                self.inner.stores.works.get_sections(&unread).await?.into_iter().map(|s| (s.id, s)).collect();
            let versions = versions.unwrap_or_default();
            for (id, slot) in out.iter_mut().filter(|(_, s)| s.is_none()) {
                // A section no longer stored stays `None` and is left out below.
                let Some(section) = read.remove(id) else { continue };
                // A work registered after the listing has no version yet: checked again next epoch.
                let version = versions.get(&section.work_id).copied().unwrap_or(i64::MIN);
                let text_hash = hash_bytes(section.text.as_bytes());
                *slot = Some(match stale.remove(id).filter(|e| e.text_hash == text_hash) {
                    Some(entry) => {
                        entry.work_version.store(version, Ordering::Relaxed);
                        entry.checked.fetch_max(epoch, Ordering::Relaxed);
                        SectionSource::Ready(entry)
                    }
                    None => SectionSource::Text { work_id: section.work_id, text: section.text, version },
                });
            }
        }
        Ok(out.into_iter().filter_map(|(id, s)| s.map(|s| (id, s))).collect())
    }

    /// Every work's `updated_at` (milliseconds) as the current epoch sees it: read once
    /// per epoch (a task), shared by the task's works loop and the section cache.
    pub(crate) async fn epoch_work_versions(&self) -> Result<Arc<HashMap<i64, i64>>> {
        self.work_versions(self.inner.epoch.load(Ordering::Relaxed)).await
    }

    /// Every work's `updated_at`, read on the first use in an epoch (one query for all
    /// the works instead of one read of every cached section per task).
    async fn work_versions(&self, epoch: u64) -> Result<Arc<HashMap<i64, i64>>> {
        let mut slot = self.inner.work_versions.lock().await;
        if slot.0 == epoch {
            return Ok(slot.1.clone());
        }
        let versions: HashMap<i64, i64> =
            self.inner.stores.works.work_versions().await?.into_iter().map(|(id, at)| (id, at.0)).collect();
        *slot = (epoch, Arc::new(versions));
        Ok(slot.1.clone())
    }

    /// Record copies found (one store call for all of them, whatever pages they are on).
    pub(crate) async fn record_all(&self, copies: Vec<FoundCopy>) -> Result<Vec<MatchRecord>> {
        if copies.is_empty() {
            return Ok(Vec::new());
        }
        let seen_at = Timestamp::now();
        let (records, new): (Vec<MatchRecord>, Vec<NewMatch>) = copies
            .into_iter()
            .map(|c| {
                let top = c.comparison.evidence.iter().max_by_key(|e| e.chars);
                let (evidence_section, evidence_page) =
                    top.map(|e| (e.a_text.clone(), e.b_text.clone())).unwrap_or_default();
                let record = MatchRecord {
                    match_id: 0,
                    section_id: c.section_id,
                    work_id: c.work_id,
                    page_id: c.page_id,
                    url: c.url,
                    site: c.site,
                    kind: c.kind,
                    score: c.comparison.verdict.score,
                    outcome: Outcome::Unchanged,
                    evidence_section,
                    evidence_page,
                };
                let m = NewMatch {
                    section_id: c.section_id,
                    page_id: c.page_id,
                    kind: c.kind.as_str().to_owned(),
                    comparison: c.comparison,
                    seen_at,
                };
                (record, m)
            })
            .unzip();
        let upserted = self.inner.stores.matches.upsert_matches(&new).await?;
        Ok(records
            .into_iter()
            .zip(upserted)
            .map(|(mut r, up)| {
                (r.match_id, r.outcome) = (up.id, up.outcome);
                tracing::debug!(section_id = r.section_id, page_id = r.page_id, kind = r.kind.as_str(), score = r.score, outcome = ?up.outcome, "match");
                r
            })
            .collect())
    }
}

/// A copy found by verification, not yet recorded.
pub(crate) struct FoundCopy {
    section_id: i64,
    work_id: i64,
    page_id: i64,
    url: String,
    site: String,
    comparison: Comparison,
    kind: MatchKind,
}

impl FoundCopy {
    fn new(section_id: i64, work_id: i64, page: &PreparedPage, comparison: Comparison, kind: MatchKind) -> Self {
        FoundCopy {
            section_id,
            work_id,
            page_id: page.page_id,
            url: page.url.clone(),
            site: page.site.clone(),
            comparison,
            kind,
        }
    }
}

/// A candidate section: its cached analysis, or its text still to analyse.
enum SectionSource {
    Ready(Arc<SectionEntry>),
    Text { work_id: i64, text: String, version: i64 },
}

impl Inner {
    /// The analysis of a candidate section, made (streams only) and cached if it was not;
    /// `None` for a text that cannot be fingerprinted (skipped, with a warning).
    fn ready(&self, id: i64, source: SectionSource) -> Option<Arc<SectionEntry>> {
        match source {
            SectionSource::Ready(entry) => Some(entry),
            SectionSource::Text { work_id, text, version } => {
                match self.section_entry_from_text(id, work_id, &text, version, false) {
                    Ok(entry) => Some(entry),
                    Err(e) => {
                        tracing::warn!(section_id = id, error = %e, "section cannot be fingerprinted; skipped");
                        None
                    }
                }
            }
        }
    }

    /// A section's cache entry: with the complete analysis, or (`complete == false`) with
    /// the streams only, completed when a candidate passes the pre-check.
    fn section_entry_from_text(
        &self,
        id: i64,
        work_id: i64,
        text: &str,
        version: i64,
        complete: bool,
    ) -> Result<Arc<SectionEntry>> {
        let analysis = if complete {
            self.fp.analyze_text(text, InputFormat::Text)
        } else {
            self.fp.analyze_streams(text, InputFormat::Text)
        }
        .map_err(|source| MatcherError::Text { what: format!("section {id}"), source })?;
        let checked = AtomicU64::new(self.epoch.load(Ordering::Relaxed));
        let entry = Arc::new(SectionEntry {
            work_id,
            text_hash: hash_bytes(text.as_bytes()),
            checked,
            work_version: AtomicI64::new(version),
            analysis,
            complete: OnceLock::new(),
        });
        self.sections.lock().unwrap_or_else(|p| p.into_inner()).insert(id, entry.clone());
        Ok(entry)
    }

    /// The streams-only analysis ([`Fingerprinter::analyze_streams`]) of a page's
    /// canonical text ([`page_canonical`]): enough to find its boilerplate, without the
    /// word segmentation.
    fn page_streams(&self, page: &Page) -> Result<Analysis> {
        let canonical = page_canonical(StoredPageText::from(page), &self.fp.params().canon)
            .map_err(|source| MatcherError::Text { what: format!("page {}", page.id), source })?;
        Ok(self.fp.analyze_canonical_streams(canonical))
    }

    /// The normalised character stream of a page (for boilerplate profiles); `None` when
    /// it has no text.
    fn char_units(&self, page: &Page) -> Option<Vec<u32>> {
        let c = page_canonical(StoredPageText::from(page), &self.fp.params().canon).ok()?;
        Some(c.text().chars().filter(|c| c.is_alphanumeric()).map(|c| c as u32).collect())
    }

    fn prepare_page(&self, page: Page, profile: &SiteProfile) -> Result<PreparedPage> {
        // The streams (no word segmentation, a third of an analysis) find the boilerplate;
        // the page is then completed once: as it is, or blanked. Analysing it whole first
        // cost a second analysis on every page of a site with a template.
        let streams = self.page_streams(&page)?;
        let original = streams.canonical.original().to_owned();
        let (analysis, blanked, boilerplate_chars) =
            match blank_boilerplate(&streams, profile, self.fp.params().winnow.chars_k) {
                None => (Some(streams), false, 0),
                // Nothing left but boilerplate (`NoText`): the page matches nothing.
                Some((text, n)) => (self.fp.analyze_streams(&text, streams.canonical.format()).ok(), true, n),
            };
        let text_key = analysis.as_ref().map(|a| (hash_bytes(a.canonical.text().as_bytes()), a.canonical.char_len()));
        Ok(PreparedPage {
            page_id: page.id,
            url: page.url,
            site: page.site,
            original,
            analysis,
            complete: OnceLock::new(),
            blanked,
            boilerplate_chars,
            passages: OnceLock::new(),
            text_key,
        })
    }

    /// Compare section A with page B; the kind when it is a copy. Page-side quotes come
    /// from the page's true original (the blanked copy has the same character offsets).
    fn verify(
        &self,
        section: &SectionEntry,
        page: &PreparedPage,
        catalogue: &CatalogueProfile,
    ) -> Option<(Comparison, MatchKind)> {
        let t = &self.config.thresholds;
        let (view, passages) = page.view_indexed()?;
        if !crate::candidates::may_be_copy(&section.analysis, view, passages, self.fp.params(), t) {
            return None;
        }
        let full = section.full(&self.fp);
        let page_full = page.full(&self.fp)?;
        let mut c = compare_with(full, page_full, passages, self.fp.params(), t);
        catalogue.discount(&mut c, full, page_full, self.fp.params().winnow.chars_k, t);
        let kind = MatchKind::of(&c, t)?;
        if page.blanked {
            for e in &mut c.evidence {
                e.b_text = slice_chars(&page.original, e.b_start, e.b_end).to_owned();
            }
        }
        Some((c, kind))
    }
}

/// A key of a winnowed family (the keys a candidate worth verifying must share).
fn is_winnowed(key: &IndexKey) -> bool {
    matches!(key.family, zhiwen_core::IndexFamily::WinnowChars | zhiwen_core::IndexFamily::WinnowInitials)
}
