//! What the admin API and the exports need beyond the pipeline's stores: API keys
//! ([`KeyStore`]) and the dashboard's queries ([`QueryStore`]: match listings by
//! [`MatchQuery`] with sorting and keyset cursors, with or without the evidence the
//! exports show, grouped counts for statistics, work search and deletion, page search). Both backends implement them (`keys.rs` and `queries.rs` of `sqlite/` and
//! `mongo/`).

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::model::*;
use crate::traits::StoreResult;
use crate::StoreError;

// ---------------------------------------------------------------------------------
// API keys

/// What a key may do (the API enforces it; the store only keeps it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum KeyRole {
    /// Everything.
    Admin,
    /// Read everything, export, change review status.
    Analyst,
    /// Only the data of its own owner.
    Holder,
}

impl KeyRole {
    /// Every role.
    pub const ALL: [KeyRole; 3] = [KeyRole::Admin, KeyRole::Analyst, KeyRole::Holder];

    /// Stable name used in both databases and the API.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyRole::Admin => "admin",
            KeyRole::Analyst => "analyst",
            KeyRole::Holder => "holder",
        }
    }

    /// Parse [`KeyRole::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        KeyRole::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// A key to store. The secret itself never reaches the store, only its hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewApiKey {
    /// Hex SHA-256 of the secret (unique).
    pub hash: String,
    /// The first characters of the secret, to recognise it in listings.
    pub prefix: String,
    /// Free label.
    pub name: String,
    /// Role.
    pub role: KeyRole,
    /// The owner a holder key is limited to (required for holders, absent otherwise).
    pub owner: Option<String>,
    /// Creation time.
    pub created_at: Timestamp,
    /// No longer valid from this time on.
    pub expires_at: Option<Timestamp>,
}

/// A stored key.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ApiKey {
    /// Integer id.
    pub id: i64,
    /// Hex SHA-256 of the secret.
    pub hash: String,
    /// First characters of the secret.
    pub prefix: String,
    /// Label.
    pub name: String,
    /// Role.
    pub role: KeyRole,
    /// Owner of a holder key.
    pub owner: Option<String>,
    /// Created.
    pub created_at: Timestamp,
    /// Expiry.
    pub expires_at: Option<Timestamp>,
    /// Revoked at.
    pub revoked_at: Option<Timestamp>,
}

impl ApiKey {
    /// Not revoked and not expired at `now`.
    pub fn is_valid_at(&self, now: Timestamp) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|e| now < e)
    }
}

pub(crate) fn validate_key(k: &NewApiKey) -> StoreResult<()> {
    if k.hash.len() != 64 || !k.hash.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(StoreError::invalid("api key hash", "must be 64 hex digits (SHA-256)"));
    }
    match (k.role, &k.owner) {
        (KeyRole::Holder, None) => return Err(StoreError::invalid("api key owner", "a holder key needs an owner")),
        (KeyRole::Holder, Some(o)) if o.trim().is_empty() => {
            return Err(StoreError::invalid("api key owner", "a holder key needs an owner"))
        }
        (KeyRole::Admin | KeyRole::Analyst, Some(_)) => {
            return Err(StoreError::invalid("api key owner", "only holder keys have an owner"))
        }
        _ => {}
    }
    if k.name.len() > 200 || k.prefix.len() > 16 {
        return Err(StoreError::invalid("api key name", "too long"));
    }
    Ok(())
}

/// API keys.
#[async_trait]
pub trait KeyStore: Send + Sync {
    /// Store a new key (its hash must be new: a duplicate hash is `Duplicate`).
    async fn create_key(&self, key: &NewApiKey) -> StoreResult<ApiKey>;
    /// The key with this hash, valid or not.
    async fn find_key(&self, hash: &str) -> StoreResult<Option<ApiKey>>;
    /// A key by id.
    async fn get_key(&self, id: i64) -> StoreResult<Option<ApiKey>>;
    /// Every key, by id.
    async fn list_keys(&self) -> StoreResult<Vec<ApiKey>>;
    /// Revoke a key; revoking a revoked key is `Unchanged`. `None` if there is no such key.
    async fn revoke_key(&self, id: i64, at: Timestamp) -> StoreResult<Option<Outcome>>;
}

// ---------------------------------------------------------------------------------
// Queries of the dashboard

/// The sort key of a match listing (ties broken by id in the same direction).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchSortKey {
    /// Id.
    Id,
    /// Verdict score.
    Score,
    /// First sighting.
    FirstSeen,
    /// Last sighting.
    #[default]
    LastSeen,
}

/// Sort order of a listing.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MatchSort {
    /// The key.
    pub key: MatchSortKey,
    /// Largest first.
    pub descending: bool,
}

/// Where the previous page ended: its last row's sort value and id.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct MatchCursor {
    /// Sort value (the score, a time in ms or the id, as f64: exact for all of them).
    pub value: f64,
    /// Id of the last row.
    pub id: i64,
}

/// One match in a listing, joined with its work, section and page (no evidence).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchRow {
    /// Match id.
    pub id: i64,
    /// Work.
    pub work_id: i64,
    /// Owner of the work.
    pub owner: String,
    /// Owner's id of the work.
    pub work_external_id: String,
    /// Title of the work.
    pub work_title: String,
    /// Section.
    pub section_id: i64,
    /// Section position.
    pub section_ordinal: u32,
    /// Section heading.
    pub section_title: String,
    /// Page.
    pub page_id: i64,
    /// Page URL.
    pub url: String,
    /// Host.
    pub site: String,
    /// Kind of copy (one of [`MATCH_KINDS`](crate::MATCH_KINDS)).
    pub kind: String,
    /// Verdict score.
    pub score: f64,
    /// A copy by the verdict.
    pub duplicate: bool,
    /// Characters of the section found on the page.
    pub copied_chars: u64,
    /// Share of the section found on the page (0..1).
    pub coverage: f64,
    /// First recorded.
    pub first_seen: Timestamp,
    /// Last recorded.
    pub last_seen: Timestamp,
    /// Review status.
    pub status: ReviewStatus,
}

impl MatchRow {
    /// This row's value under `key` (for the next cursor).
    pub fn sort_value(&self, key: MatchSortKey) -> f64 {
        match key {
            MatchSortKey::Id => self.id as f64,
            MatchSortKey::Score => self.score,
            MatchSortKey::FirstSeen => self.first_seen.0 as f64,
            MatchSortKey::LastSeen => self.last_seen.0 as f64,
        }
    }
}

/// A listed match with the longest passage of its evidence, as both sides quote it:
/// what an export shows of a match ([`QueryStore::query_matches_with_evidence`]).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MatchRowWithEvidence {
    /// The match as listed.
    pub row: MatchRow,
    /// The longest evidence passage, section side (empty without evidence).
    pub evidence_section: String,
    /// The same passage, page side.
    pub evidence_page: String,
}

impl MatchRowWithEvidence {
    /// `row` with the longest passage of the comparison stored as `json` (of equally
    /// long ones the last, as `Iterator::max_by_key` picks).
    pub(crate) fn from_comparison(row: MatchRow, json: &[u8]) -> StoreResult<Self> {
        #[derive(Deserialize)]
        struct Passages {
            #[serde(default)]
            evidence: Vec<Passage>,
        }
        #[derive(Deserialize)]
        struct Passage {
            a_text: String,
            b_text: String,
            chars: usize,
        }
        let p: Passages = serde_json::from_slice(json)
            .map_err(|e| StoreError::corrupt(format!("comparison of match {}", row.id), e))?;
        let top = p.evidence.into_iter().max_by_key(|e| e.chars);
        let (evidence_section, evidence_page) = top.map(|e| (e.a_text, e.b_text)).unwrap_or_default();
        Ok(MatchRowWithEvidence { row, evidence_section, evidence_page })
    }

    /// The rows of a backend's listing read: each with its passages when its comparison
    /// was read along (`Some`), else with none.
    pub(crate) fn from_listing(rows: Vec<(MatchRow, Option<Vec<u8>>)>) -> StoreResult<Vec<Self>> {
        rows.into_iter()
            .map(|(row, json)| match json {
                Some(json) => Self::from_comparison(row, &json),
                None => Ok(MatchRowWithEvidence { row, evidence_section: String::new(), evidence_page: String::new() }),
            })
            .collect()
    }
}

/// What match counts are grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchGroup {
    /// Work id.
    Work,
    /// Section id.
    Section,
    /// Host.
    Site,
    /// Review status.
    Status,
    /// UTC day of the first sighting (`YYYY-MM-DD`).
    FirstDay,
    /// Kind of copy.
    Kind,
}

/// Filters of a page search.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageQuery {
    /// Only pages with a match of a work of this owner.
    pub owner: Option<String>,
    /// Exact URL (normalised before the lookup).
    pub url: Option<String>,
    /// Host.
    pub site: Option<String>,
    /// Last fetched at or after.
    pub fetched_from: Option<Timestamp>,
    /// Last fetched before.
    pub fetched_until: Option<Timestamp>,
}

/// What deleting a work removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkDeleted {
    /// Ids of its sections (the caller removes them from the candidate index).
    pub section_ids: Vec<i64>,
    /// Matches removed.
    pub matches: u64,
}

/// Everything the detail of one match shows, read at once ([`QueryStore::match_detail`]):
/// the match with its comparison and review trail, its work's summary, and of its section
/// and page what the evidence passages are quoted from.
#[derive(Debug, Clone, PartialEq)]
pub struct MatchDetail {
    /// The match.
    pub record: Match,
    /// Its work, without the text.
    pub work: WorkSummary,
    /// Position of its section (0 when the section is gone).
    pub section_ordinal: u32,
    /// Heading of its section.
    pub section_title: String,
    /// Text of its section: the section-side evidence offsets point into it.
    pub section_text: String,
    /// URL of its page (empty when the page is gone).
    pub url: String,
    /// The page's raw body as fetched (empty for pages stored as text): the page-side
    /// offsets point into the original the core decodes from it.
    pub page_body: Vec<u8>,
    /// Charset the body was decoded with.
    pub page_charset: Option<String>,
    /// How the body was read when it was stored (`None`: not recorded, sniff).
    pub page_format: Option<PageFormat>,
    /// The page's extracted text (what the offsets point into when there is no body).
    pub page_text: String,
}

/// The dashboard's queries.
#[async_trait]
pub trait QueryStore: Send + Sync {
    /// The one listing read both of the next two are: matches passing `q`, ordered by
    /// `sort` then id, after `after`, at most `limit`; with `evidence`, each with its
    /// longest evidence passage read in the same joined read (the comparison comes with
    /// the row), else with empty passages and no comparison read.
    async fn list_match_rows(
        &self,
        q: &MatchQuery,
        sort: MatchSort,
        after: Option<MatchCursor>,
        limit: u32,
        evidence: bool,
    ) -> StoreResult<Vec<MatchRowWithEvidence>>;

    /// Matches passing `q`, ordered by `sort` then id, after `after`, at most `limit`.
    async fn query_matches(
        &self,
        q: &MatchQuery,
        sort: MatchSort,
        after: Option<MatchCursor>,
        limit: u32,
    ) -> StoreResult<Vec<MatchRow>> {
        Ok(self.list_match_rows(q, sort, after, limit, false).await?.into_iter().map(|r| r.row).collect())
    }

    /// [`QueryStore::query_matches`] with each match's longest evidence passage: for the
    /// exports.
    async fn query_matches_with_evidence(
        &self,
        q: &MatchQuery,
        sort: MatchSort,
        after: Option<MatchCursor>,
        limit: u32,
    ) -> StoreResult<Vec<MatchRowWithEvidence>> {
        self.list_match_rows(q, sort, after, limit, true).await
    }
    /// Number of matches passing `q`, grouped by `by`, sorted by count descending then
    /// key; ids are given as decimal strings.
    async fn group_matches(&self, q: &MatchQuery, by: MatchGroup) -> StoreResult<Vec<(String, u64)>>;
    /// Number of matches passing `q`.
    async fn count_matches(&self, q: &MatchQuery) -> StoreResult<u64>;
    /// A work's summary (owner, title, …) without its text or sections; `None` if there
    /// is no such work. What a match detail or a statistic needs of its work.
    async fn work_summary(&self, id: i64) -> StoreResult<Option<WorkSummary>>;
    /// A match with what its detail shows ([`MatchDetail`]), in one read of the store
    /// (one joined query on the embedded store); `None` if there is no such match or its
    /// work is gone.
    async fn match_detail(&self, id: i64) -> StoreResult<Option<MatchDetail>>;
    /// Works (of `owner`, if given) whose title, author or external id contains `text`
    /// (if given), with id greater than `after_id`, ascending, at most `limit`.
    async fn search_works(
        &self,
        owner: Option<&str>,
        text: Option<&str>,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<WorkSummary>>;
    /// Delete a work with its sections, their fingerprints, matches and review trails.
    /// `None` if there was no such work.
    async fn delete_work(&self, id: i64) -> StoreResult<Option<WorkDeleted>>;
    /// Pages passing `q` with id greater than `after_id`, ascending, at most `limit`.
    async fn search_pages(&self, q: &PageQuery, after_id: i64, limit: u32) -> StoreResult<Vec<PageRef>>;
}
