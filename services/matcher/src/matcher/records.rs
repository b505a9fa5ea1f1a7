//! What matching records and reports: the match records, the outcomes of a page and a
//! work, and the one store call that records the copies found.

use super::*;

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
    /// On a domain its holder licensed: recorded as `licensed`, no alert, no capture.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub licensed: bool,
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

/// A copy found by verification, not yet recorded.
pub(crate) struct FoundCopy {
    pub(super) section_id: i64,
    pub(super) work_id: i64,
    pub(super) page_id: i64,
    pub(super) url: String,
    pub(super) site: String,
    pub(super) comparison: Comparison,
    pub(super) kind: MatchKind,
    /// Found on a page analysed from its stored canonical text ([`PreparedPage::stored`]):
    /// the boilerplate blanked in that text and the text's key. The page side of the
    /// evidence is in canonical offsets until [`Matcher::quote_copies`] quotes it.
    pub(super) unquoted: Option<(Arc<[u32]>, TextKey)>,
}

impl FoundCopy {
    pub(super) fn new(
        section_id: i64,
        work_id: i64,
        page: &PreparedPage,
        comparison: Comparison,
        kind: MatchKind,
    ) -> Self {
        FoundCopy {
            section_id,
            work_id,
            page_id: page.page_id,
            url: page.url.clone(),
            site: page.site.clone(),
            comparison,
            kind,
            unquoted: page.stored.clone().zip(page.text_key),
        }
    }
}

impl Matcher {
    /// Quote the page side of the evidence of copies found on pages analysed from their
    /// stored canonical text ([`FoundCopy::unquoted`]) in the pages' originals, as if they
    /// had been analysed from their bodies: their bodies are read (one store call) and
    /// canonicalised, the same boilerplate blanked, and each passage's canonical range
    /// mapped to the original. A page whose body's canonical text is not the text it was
    /// analysed from (canonicalisation changed without a new tag) is an error: its
    /// evidence could not be placed.
    pub(super) async fn quote_copies(&self, copies: Vec<FoundCopy>) -> Result<Vec<FoundCopy>> {
        let mut ids: Vec<i64> = copies.iter().filter(|c| c.unquoted.is_some()).map(|c| c.page_id).collect();
        if ids.is_empty() {
            return Ok(copies);
        }
        ids.sort_unstable();
        ids.dedup();
        let pages = self.inner.stores.pages.get_pages(&ids, PageParts::Source).await?;
        self.on_cpu(move |inner| inner.quote_copies(pages, copies)).await?
    }

    pub(crate) async fn record_all(&self, copies: Vec<FoundCopy>) -> Result<Vec<MatchRecord>> {
        if copies.is_empty() {
            return Ok(Vec::new());
        }
        let copies = self.quote_copies(copies).await?;
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
                    licensed: false,
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
        let inserted: Vec<(i64, i64, &str)> = records
            .iter()
            .zip(&upserted)
            .filter(|(_, up)| up.outcome == Outcome::Inserted)
            .map(|(r, up)| (up.id, r.work_id, r.site.as_str()))
            .collect();
        let licensed = crate::licensed::licensed_matches(&self.inner.stores, &inserted).await?;
        if self.inner.config.capture_new_matches {
            // Queued, not run: the capture worker fetches and renders beside matching.
            for &(id, _, _) in inserted.iter().filter(|(id, _, _)| !licensed.contains(id)) {
                let task = crate::task::capture_task(id, "first_match", None);
                self.inner.stores.tasks.create_task(&task).await?;
            }
        }
        Ok(records
            .into_iter()
            .zip(upserted)
            .map(|(mut r, up)| {
                (r.match_id, r.outcome) = (up.id, up.outcome);
                r.licensed = licensed.contains(&up.id);
                tracing::debug!(target: LOG_TARGET, section_id = r.section_id, page_id = r.page_id, kind = r.kind.as_str(), score = r.score, outcome = ?up.outcome, "match");
                r
            })
            .collect())
    }
}

impl Inner {
    /// [`Matcher::quote_copies`] on the pages read.
    fn quote_copies(&self, pages: Vec<Page>, mut copies: Vec<FoundCopy>) -> Result<Vec<FoundCopy>> {
        let mut pages: HashMap<i64, Page> = pages.into_iter().map(|p| (p.id, p)).collect();
        let mut made: HashMap<i64, Option<zhiwen_core::canon::CanonicalText>> = HashMap::new();
        for copy in &mut copies {
            let Some((blanked, key)) = copy.unquoted.take() else { continue };
            let canonical = match made.entry(copy.page_id) {
                std::collections::hash_map::Entry::Occupied(e) => e.into_mut(),
                std::collections::hash_map::Entry::Vacant(slot) => {
                    let id = copy.page_id;
                    let page = pages.remove(&id).ok_or(MatcherError::NotFound { what: "page", id })?;
                    // A page stored without a body is its stored text: the canonical
                    // offsets are already offsets of its original.
                    let canonical = if page.body.is_empty() {
                        None
                    } else {
                        let c = self.page_canonical(&page)?.into_blanked(&blanked);
                        if (hash_bytes(c.text().as_bytes()), c.char_len()) != key {
                            return Err(MatcherError::Internal(format!(
                                "page {id}: its stored text is not the canonical text of its body \
                                 (canonicalisation changed without a new canon tag?); store the page again"
                            )));
                        }
                        Some(c)
                    };
                    slot.insert(canonical)
                }
            };
            if let Some(c) = canonical {
                for e in &mut copy.comparison.evidence {
                    (e.b_start, e.b_end) = c.original_span(e.b_start, e.b_end);
                    e.b_text = c.quote_original(e.b_start, e.b_end).to_owned();
                }
            }
        }
        Ok(copies)
    }
}
