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
        }
    }
}

impl Matcher {
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
