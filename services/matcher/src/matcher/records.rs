//! What matching records and reports: the match records, the outcomes of a page and a
//! work, and the one store call that records the copies found.

use super::*;
use zhiwen_core::canon::CanonicalText;

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
    /// mapped to the original. A page whose evidence cannot be placed (its body no longer
    /// canonicalises, or not to the text it was analysed from: canonicalisation changed
    /// without a new tag) fails alone: its copies are left out, with its error.
    pub(super) async fn quote_copies(&self, copies: Vec<FoundCopy>) -> Result<Quoted> {
        let mut ids: Vec<i64> = copies.iter().filter(|c| c.unquoted.is_some()).map(|c| c.page_id).collect();
        if ids.is_empty() {
            return Ok(Quoted { copies, failed: Vec::new() });
        }
        ids.sort_unstable();
        ids.dedup();
        let pages = self.inner.stores.pages.get_pages(&ids, PageParts::Source).await?;
        self.on_cpu(move |inner| inner.quote_copies(pages, copies)).await
    }

    /// Record the copies found ([`Matcher::record_copies`]); a page whose evidence could
    /// not be quoted fails the call (one page was being matched).
    pub(crate) async fn record_all(&self, copies: Vec<FoundCopy>) -> Result<Vec<MatchRecord>> {
        let (records, failed) = self.record_copies(copies).await?;
        match failed.into_iter().next() {
            Some((_, e)) => Err(e),
            None => Ok(records),
        }
    }

    /// Quote ([`Matcher::quote_copies`]) and record the copies found, in one store call:
    /// the records, and the pages whose copies were left out with their errors.
    pub(crate) async fn record_copies(
        &self,
        copies: Vec<FoundCopy>,
    ) -> Result<(Vec<MatchRecord>, Vec<(i64, MatcherError)>)> {
        if copies.is_empty() {
            return Ok((Vec::new(), Vec::new()));
        }
        let Quoted { copies, failed } = self.quote_copies(copies).await?;
        Ok((self.record_quoted(copies).await?, failed))
    }

    async fn record_quoted(&self, copies: Vec<FoundCopy>) -> Result<Vec<MatchRecord>> {
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

/// What [`Matcher::quote_copies`] gives: the copies quoted (or quoted already), and the
/// pages whose copies could not be, with their errors.
pub(super) struct Quoted {
    pub(super) copies: Vec<FoundCopy>,
    pub(super) failed: Vec<(i64, MatcherError)>,
}

impl Inner {
    /// [`Matcher::quote_copies`] on the pages read.
    fn quote_copies(&self, pages: Vec<Page>, copies: Vec<FoundCopy>) -> Quoted {
        let mut pages: HashMap<i64, Page> = pages.into_iter().map(|p| (p.id, p)).collect();
        // Per page quoted from: its body's canonical text (`None` for a page without a
        // body, whose stored text is its original), or `Err` when it cannot be made.
        let mut made: HashMap<i64, Result<Option<CanonicalText>, ()>> = HashMap::new();
        let mut failed = Vec::new();
        let mut quoted = Vec::with_capacity(copies.len());
        for mut copy in copies {
            let Some((blanked, key)) = copy.unquoted.take() else {
                quoted.push(copy);
                continue;
            };
            let id = copy.page_id;
            let canonical = made.entry(id).or_insert_with(|| {
                self.body_canonical(pages.remove(&id), id, &blanked, key).map_err(|e| failed.push((id, e)))
            });
            let Ok(canonical) = canonical else { continue };
            if let Some(c) = canonical {
                for e in &mut copy.comparison.evidence {
                    (e.b_start, e.b_end) = c.original_span(e.b_start, e.b_end);
                    e.b_text = c.quote_original(e.b_start, e.b_end).to_owned();
                }
            }
            quoted.push(copy);
        }
        for (id, e) in &failed {
            tracing::warn!(target: LOG_TARGET, page_id = id, error = %e, "the copies found on the page are not recorded");
        }
        Quoted { copies: quoted, failed }
    }

    /// The canonical text of page `id`'s body with `blanked` blanked, checked to be the
    /// text it was analysed from (`key`); `None` for a page stored without a body.
    fn body_canonical(
        &self,
        page: Option<Page>,
        id: i64,
        blanked: &[u32],
        key: TextKey,
    ) -> Result<Option<CanonicalText>> {
        let page = page.ok_or(MatcherError::NotFound { what: "page", id })?;
        if page.body.is_empty() {
            return Ok(None);
        }
        let c = self.page_canonical(&page)?.into_blanked(blanked);
        if (hash_bytes(c.text().as_bytes()), c.char_len()) != key {
            return Err(MatcherError::Internal(format!(
                "page {id}: its stored text is not the canonical text of its body \
                 (canonicalisation changed without a new canon tag?); store the page again"
            )));
        }
        Ok(Some(c))
    }
}
