//! From a stored page to a page ready for verification: its original text, the
//! streams that find its boilerplate, the analysis with the boilerplate blanked.

use super::*;
use crate::page_text::{page_canonical, StoredPageText};
use zhiwen_core::canon::CanonicalText;
use zhiwen_core::CharStream;

/// A page ready for verification: its analysis with the site's boilerplate blanked.
pub(super) struct PreparedPage {
    pub(super) page_id: i64,
    pub(super) url: String,
    pub(super) site: String,
    /// The analysis of the page with its site's boilerplate blanked (of the page as it is
    /// when it has none): what is looked up, compared and indexed. Streams only until a
    /// candidate needs the word stage ([`PreparedPage::full`]): most pages share no
    /// passage with any section and never do. `None` when nothing but boilerplate is left.
    pub(super) analysis: Option<Analysis>,
    /// The complete analysis of a streams-only `analysis`, made when first needed.
    pub(super) complete: OnceLock<Analysis>,
    pub(super) boilerplate_chars: usize,
    /// Passage index of `view()`, made on first use and shared by all the candidates.
    pub(super) passages: OnceLock<PassageIndex>,
    /// The text `view()` is of; `None` when nothing but boilerplate is left.
    pub(super) text_key: Option<TextKey>,
    /// The page-namespace keys ([`PreparedPage::page_index_keys`]), once made: at the
    /// page's lookup, from the winnowed keys it looked up ([`PreparedPage::keep_page_keys`]),
    /// or when its analysis is released ([`PreparedPage::release`]).
    page_keys: Option<Vec<IndexKey>>,
    /// `Some` when the analysis is of the page's stored canonical text (its canon tag
    /// the matcher's, [`Inner::reads_stored_text`]), not of its body canonicalised again:
    /// the canonical offsets of the boilerplate blanked in it. The original of such an
    /// analysis is the canonical text itself, so the page side of its evidence is in
    /// canonical offsets until the copies found are quoted from the page's body
    /// ([`Matcher::quote_copies`]): most pages are never quoted from (no copy is found on
    /// them), and decoding and extracting their bodies again was 12% of `match --all`.
    pub(super) stored: Option<Arc<[u32]>>,
    /// `Some(content hash)` when the page was analysed from its body and the canonical
    /// text it gave is the page's stored text: a page stored before canon tags were (or
    /// under another canonicalisation that gives the same text). The matcher records its
    /// tag in the store ([`Matcher::tag_pages`]), so that the next reader analyses it from
    /// the stored text; the hash is the one it was read with (the store tags it only while
    /// its text is that one).
    pub(super) retag: Option<u64>,
}

impl PreparedPage {
    /// The decoded original (evidence is quoted from it); for a page analysed from its
    /// stored text ([`PreparedPage::stored`]), that text, until its copies are quoted.
    pub(super) fn original(&self) -> &str {
        self.analysis.as_ref().map_or("", |a| a.canonical.original())
    }

    /// What is looked up and compared; `None` when nothing but boilerplate is left.
    pub(super) fn view(&self) -> Option<&Analysis> {
        self.analysis.as_ref()
    }

    /// What is compared, with its passage index (which needs the streams only).
    pub(super) fn view_indexed(&self) -> Option<(&Analysis, &PassageIndex)> {
        let view = self.view()?;
        Some((view, self.passages.get_or_init(|| PassageIndex::new(view))))
    }

    /// The complete analysis of `view()` (made now if it has only the streams).
    pub(super) fn full(&self, fp: &Fingerprinter) -> Option<&Analysis> {
        let view = self.view()?;
        if view.is_complete() {
            return Some(view);
        }
        Some(self.complete.get_or_init(|| fp.complete(view.clone())))
    }

    /// Drop the analysis of a page that has no candidate section, keeping its
    /// page-namespace keys ([`PreparedPage::page_index_keys`]): nothing verifies or quotes
    /// it any more, and a task holds the pages of two batches between their lookup and
    /// their verification, most of which have no candidate.
    pub(super) fn release(&mut self, config: &MatcherConfig) {
        if self.page_keys.is_none() {
            self.page_keys =
                Some(self.view().map(|view| config.page_index_keys(&view.fingerprints)).unwrap_or_default());
        }
        self.analysis = None;
        self.complete = OnceLock::new();
        self.passages = OnceLock::new();
    }

    /// `(page id, content hash)` to record the page's canon tag with
    /// ([`Matcher::tag_pages`]), when it takes one ([`PreparedPage::retag`]).
    pub(super) fn tag_entry(&self) -> Option<(i64, u64)> {
        self.retag.map(|hash| (self.page_id, hash))
    }

    /// The keys the page is indexed under in the page namespace; none for a page that
    /// is nothing but its site's boilerplate.
    pub(super) fn page_index_keys(&self, config: &MatcherConfig) -> Vec<IndexKey> {
        match (&self.page_keys, self.view()) {
            (Some(keys), _) => keys.clone(),
            (None, Some(view)) => config.page_index_keys(&view.fingerprints),
            (None, None) => Vec::new(),
        }
    }

    /// Keep the page-namespace keys of `view()` ([`MatcherConfig::page_index_keys`] of its
    /// fingerprints), which a lookup makes from the winnowed keys it has at hand: making
    /// them again from the fingerprints was 3% of `match --all`'s instructions.
    pub(super) fn keep_page_keys(&mut self, keys: Vec<IndexKey>, config: &MatcherConfig) {
        debug_assert_eq!(Some(&keys), self.view().map(|v| config.page_index_keys(&v.fingerprints)).as_ref());
        self.page_keys = Some(keys);
    }

    /// Complete `view()` in place (no copy of it is kept beside the complete analysis, as
    /// [`PreparedPage::full`] keeps on a shared page).
    fn complete_in_place(&mut self, fp: &Fingerprinter) {
        if let Some(done) = self.complete.take() {
            self.analysis = Some(done);
        } else if let Some(view) = self.analysis.take() {
            self.analysis = Some(fp.complete(view));
        }
    }
}

impl Matcher {
    /// Load a page and fingerprint it (boilerplate blanked), on the CPU pool.
    pub(super) async fn load_and_prepare(&self, page_id: i64) -> Result<PreparedPage> {
        // Read as a batch reads its pages: the stored text of a tagged page.
        let page = self.load_pages(&[page_id]).await?.remove(&page_id);
        self.prepare_loaded(page.ok_or(MatcherError::NotFound { what: "page", id: page_id })?).await
    }

    /// Fingerprint a loaded page (boilerplate blanked), on the CPU pool.
    pub(super) async fn prepare_loaded(&self, page: Page) -> Result<PreparedPage> {
        let mut prepared = self.prepare_loaded_pages(vec![page]).await;
        prepared.pop().unwrap_or_else(|| Err(MatcherError::Internal("no page was prepared".into())))
    }

    /// Fingerprint loaded pages (boilerplate blanked) one after another in one job on the
    /// CPU pool: each page's result, in their order. One job a page cost two thread
    /// hand-offs a page (the pool's thread woken, then the task).
    pub(super) async fn prepare_loaded_pages(&self, pages: Vec<Page>) -> Vec<Result<PreparedPage>> {
        let n = pages.len();
        let mut jobs = Vec::with_capacity(n);
        // Pages mostly follow other pages of their site: its profile is looked up once.
        let mut last: Option<Arc<SiteProfile>> = None;
        for page in pages {
            let profile = match &last {
                Some(p) if p.site == page.site => Ok(p.clone()),
                _ => self.site_profile(&page.site).await,
            };
            last = profile.as_ref().ok().cloned();
            jobs.push((page, profile));
        }
        let done = self.on_cpu(move |inner| {
            jobs.into_iter()
                .map(|(page, profile)| profile.and_then(|p| inner.prepare_page(page, &p)))
                .collect::<Vec<_>>()
        });
        match done.await {
            Ok(done) => done,
            // The job itself failed (a panic): so did each of its pages.
            Err(e) => {
                let e = e.to_string();
                (0..n).map(|_| Err(MatcherError::Internal(e.clone()))).collect()
            }
        }
    }

    /// The page with its complete analysis made (on the CPU pool).
    pub(super) async fn completed(&self, mut prepared: PreparedPage) -> Result<PreparedPage> {
        self.on_cpu(move |inner| {
            prepared.complete_in_place(&inner.fp);
            prepared
        })
        .await
    }
}

impl Inner {
    /// A page's canonical text ([`page_canonical`]), with the matcher's error.
    pub(super) fn page_canonical(&self, page: &Page) -> Result<CanonicalText> {
        page_canonical(StoredPageText::from(page), &self.fp.params().canon)
            .map_err(|source| MatcherError::Text { what: format!("page {}", page.id), source })
    }

    /// The normalised character stream of a page (for boilerplate profiles); `None` when
    /// it has no text. Of its body when it has one, else of its stored text (a site
    /// profile reads the stored text only, [`PageParts::Text`]).
    ///
    /// The units of [`CharStream::of`], the stream a page's boilerplate is looked for in
    /// ([`boilerplate_positions`]): a profile measured on units made otherwise would find
    /// nothing there.
    pub(super) fn char_units(&self, page: &Page) -> Option<Vec<u32>> {
        if self.reads_stored_text(page) {
            // The stored text is the canonical text the page is analysed from.
            return Some(CharStream::of(&page.text).units);
        }
        Some(CharStream::of(self.page_canonical(page).ok()?.text()).units)
    }

    /// A page is analysed from its stored text: the text is the canonical text of the
    /// matcher's own canonicalisation (the canon tag ingest stored with it), and there
    /// is one (pages read without their text are read again with their body).
    pub(super) fn reads_stored_text(&self, page: &Page) -> bool {
        page.canon_tag.as_deref() == Some(self.canon_tag.as_str()) && !page.text.is_empty()
    }

    pub(super) fn prepare_page(&self, mut page: Page, profile: &SiteProfile) -> Result<PreparedPage> {
        // The streams (no word segmentation, a third of an analysis) are made once: of the
        // page as it is, or of its copy with the boilerplate blanked. Only the character
        // stream is needed to find the boilerplate: the other stream and the winnowing of
        // a page about to be blanked were made for nothing (most pages of a site with a
        // template). Analysing it whole first cost a second analysis on every such page.
        let from_stored = self.reads_stored_text(&page);
        let mut retag = None;
        let canonical = if from_stored {
            CanonicalText::of_canonical(std::mem::take(&mut page.text))
        } else {
            let canonical = self.page_canonical(&page)?;
            // The stored text is the one this canonicalisation makes of the body (the
            // store's content hash is of the stored text; texts are told apart by this
            // hash everywhere in a task, [`TextKey`]): the page can take the tag.
            if hash_bytes(canonical.text().as_bytes()) == page.content_hash {
                retag = Some(page.content_hash);
            }
            canonical
        };
        let k = self.fp.params().winnow.chars_k;
        let (analysis, blanked) = if profile.kgrams.is_empty() {
            (Some(self.fp.analyze_canonical_streams(canonical)), Vec::new())
        } else {
            let chars = CharStream::of(canonical.text());
            let blanked = boilerplate_positions(&chars, profile, k);
            if blanked.is_empty() {
                (Some(self.fp.analyze_canonical_streams_with(canonical, chars)), blanked)
            } else {
                // Blanked in the canonical text the k-grams were found in (one space for a
                // character: its map to the original, and evidence quotes, stay the page's).
                let canonical = canonical.into_blanked(&blanked);
                let analysis = has_content(canonical.text())
                    .then(|| self.fp.analyze_canonical_streams_with(canonical, chars.without(&blanked)));
                // `None`: nothing left but boilerplate, the page matches nothing.
                (analysis, blanked)
            }
        };
        let boilerplate_chars = blanked.len();
        let text_key = analysis.as_ref().map(|a| (hash_bytes(a.canonical.text().as_bytes()), a.canonical.char_len()));
        Ok(PreparedPage {
            page_id: page.id,
            url: page.url,
            site: page.site,
            analysis,
            complete: OnceLock::new(),
            boilerplate_chars,
            passages: OnceLock::new(),
            text_key,
            page_keys: None,
            stored: from_stored.then(|| Arc::from(blanked)),
            retag,
        })
    }
}

/// The text holds something besides the spaces and line breaks a canonical text is laid
/// out with (and its blanked boilerplate is replaced by).
fn has_content(text: &str) -> bool {
    text.chars().any(|c| c != ' ' && c != '\n')
}
