//! What verifying a page text found, remembered for the pages of a task with the same
//! text (mirrors under other URLs).

use super::*;

/// A page text: hash of the canonical text a page is compared by, and its length.
pub(crate) type TextKey = (u64, usize);

/// What looking up and verifying one page text found, for the pages of a task with the
/// same text: the copies with the page side of their evidence as ranges of canonical
/// characters, which any page with this text maps to its own original.
pub(crate) struct TextResult {
    /// The page that was verified.
    pub(super) page_id: i64,
    pub(super) candidates: usize,
    pub(super) keys_looked_up: usize,
    pub(super) keys_found: usize,
    pub(super) copies: Vec<TextCopy>,
}

/// A copy found on a page text.
pub(super) struct TextCopy {
    pub(super) section_id: i64,
    pub(super) work_id: i64,
    pub(super) kind: MatchKind,
    /// The comparison, its page-side quotes left empty (every page quotes its own).
    pub(super) comparison: Comparison,
    /// Per evidence passage, its range in the canonical text.
    pub(super) page_ranges: Vec<(usize, usize)>,
}

impl TextResult {
    /// The result of `page` (verified into `outcome` and `copies`).
    pub(super) fn of(page: &PreparedPage, outcome: &PageOutcome, copies: &[FoundCopy]) -> Self {
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
    pub(super) fn apply(&self, page: &PreparedPage) -> (PageOutcome, Vec<FoundCopy>) {
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
                    e.b_text = slice_chars(page.original(), e.b_start, e.b_end).to_owned();
                }
                FoundCopy::new(c.section_id, c.work_id, page, comparison, c.kind)
            })
            .collect();
        (outcome, copies)
    }
}

/// The canonical characters whose original spans lie within `start..end` of the original
/// (the inverse of [`zhiwen_core::canon::CanonicalText::original_span`] for a passage).
pub(super) fn canonical_range(
    canonical: &zhiwen_core::canon::CanonicalText,
    start: usize,
    end: usize,
) -> (usize, usize) {
    let within = |s: zhiwen_core::canon::SourceSpan| s.start as usize >= start && s.end as usize <= end;
    let spans = canonical.source_spans();
    // Starts never decrease: the characters before `at` start before the passage, and
    // those that start after its end are past it.
    let at = spans.partition_point(|s| (s.start as usize) < start);
    let mut found = spans
        .iter_from(at)
        .take_while(|s| s.start as usize <= end)
        .enumerate()
        .filter(|&(_, s)| within(s))
        .map(|(i, _)| at + i);
    let Some(first) = found.next() else {
        // An empty passage: where it sits.
        return (at, at);
    };
    let last = found.last().unwrap_or(first);
    (first, last + 1)
}

impl Matcher {
    /// Remember what verifying `page` found, for pages with the same text later in the task.
    pub(super) fn remember_text(&self, page: &PreparedPage, result: TextResult) {
        if let Some(key) = page.text_key {
            self.inner.texts.lock().unwrap_or_else(|p| p.into_inner()).insert(key, Arc::new(result));
        }
    }

    /// What verifying a page with this text found earlier in the task, if anything.
    pub(super) fn remembered_text(&self, key: &TextKey) -> Option<Arc<TextResult>> {
        self.inner.texts.lock().unwrap_or_else(|p| p.into_inner()).get(key)
    }

    /// Forget every remembered page text (sections may have changed).
    pub(super) fn forget_texts(&self) {
        self.inner.texts.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}
