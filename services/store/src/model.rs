//! The records the stores keep, as plain data shared by both backends.

use serde::{Deserialize, Serialize};
use zhiwen_core::compare::Comparison;
use zhiwen_core::Fingerprints;

use crate::StoreError;

/// Unix time in milliseconds: both backends store exactly this precision, so what is
/// written reads back equal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Timestamp(pub i64);

impl Timestamp {
    /// Now, truncated to milliseconds.
    pub fn now() -> Self {
        Self::from_offset(time::OffsetDateTime::now_utc())
    }

    /// From a `time` value (truncated to milliseconds).
    pub fn from_offset(t: time::OffsetDateTime) -> Self {
        Timestamp((t.unix_timestamp_nanos() / 1_000_000) as i64)
    }

    /// As a `time` value (UTC).
    pub fn to_offset(self) -> time::OffsetDateTime {
        time::OffsetDateTime::from_unix_timestamp_nanos(self.0 as i128 * 1_000_000)
            .unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
    }

    /// RFC 3339 in UTC with milliseconds (`2025-11-21T08:30:00.000Z`): the one way a time is
    /// written for people and other programs (exports, evidence packages, notices, logs).
    /// Always three fractional digits, so the strings sort as the times do.
    pub fn rfc3339(self) -> String {
        let d = self.to_offset();
        format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z",
            d.year(),
            u8::from(d.month()),
            d.day(),
            d.hour(),
            d.minute(),
            d.second(),
            d.millisecond()
        )
    }

    /// The UTC day, `YYYY-MM-DD` (the unit of the per-day statistics).
    pub fn day(self) -> String {
        let d = self.to_offset().date();
        format!("{:04}-{:02}-{:02}", d.year(), u8::from(d.month()), d.day())
    }
}

/// What an idempotent write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// A new record was created.
    Inserted,
    /// An existing record's content changed.
    Updated,
    /// The record existed with the same content (only "last seen" times may have moved).
    Unchanged,
}

/// The id a write landed on and what it did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Upserted {
    /// The record's integer id (stable across re-imports).
    pub id: i64,
    /// What happened.
    pub outcome: Outcome,
}

/// Counts of a batch write, for importers' reports.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BatchCounts {
    /// Newly created.
    pub inserted: u64,
    /// Changed.
    pub updated: u64,
    /// Already up to date.
    pub unchanged: u64,
}

impl BatchCounts {
    pub(crate) fn add(&mut self, o: Outcome) {
        match o {
            Outcome::Inserted => self.inserted += 1,
            Outcome::Updated => self.updated += 1,
            Outcome::Unchanged => self.unchanged += 1,
        }
    }
}

// ---------------------------------------------------------------------------------
// Works and sections

/// One chapter/section of a work, as the ingest crate split it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewSection {
    /// Position in the work, from 0; unique within the work.
    pub ordinal: u32,
    /// Heading (e.g. `第三章 ...`), empty when the work has no divisions.
    pub title: String,
    /// The section's text.
    pub text: String,
    /// Character range `[start, end)` of the section in the work's text.
    pub char_start: u64,
    /// End of the range (exclusive).
    pub char_end: u64,
}

/// A protected text to store (upserted by `(owner, external_id)`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewWork {
    /// The rights holder; every work belongs to exactly one.
    pub owner: String,
    /// The owner's id for the work; unique per owner.
    pub external_id: String,
    /// Title.
    pub title: String,
    /// Author.
    pub author: String,
    /// File the text was imported from, if any.
    pub source_file: Option<String>,
    /// Detected charset of the source (e.g. `GB18030`).
    pub charset: Option<String>,
    /// The whole text.
    pub text: String,
    /// Its sections; at least one (a work without divisions has one section).
    pub sections: Vec<NewSection>,
}

/// A stored work (its text included; use [`WorkSummary`] lists to avoid loading texts).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Work {
    /// Integer id.
    pub id: i64,
    /// Owner.
    pub owner: String,
    /// Owner's id.
    pub external_id: String,
    /// Title.
    pub title: String,
    /// Author.
    pub author: String,
    /// Source file name.
    pub source_file: Option<String>,
    /// Detected charset.
    pub charset: Option<String>,
    /// Text.
    pub text: String,
    /// Number of sections.
    pub section_count: u32,
    /// Hash of everything stored for the work (decides `Unchanged`).
    pub content_hash: u64,
    /// First stored.
    pub created_at: Timestamp,
    /// Last changed: strictly greater after every change of the work's content.
    pub updated_at: Timestamp,
}

/// A work without its text.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkSummary {
    /// Integer id.
    pub id: i64,
    /// Owner.
    pub owner: String,
    /// Owner's id.
    pub external_id: String,
    /// Title.
    pub title: String,
    /// Author.
    pub author: String,
    /// Number of sections.
    pub section_count: u32,
    /// Last changed: strictly greater after every change of the work's content, so an
    /// unchanged value means unchanged sections.
    pub updated_at: Timestamp,
}

/// A stored section.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Section {
    /// Integer id (stable for the same `(work, ordinal)`).
    pub id: i64,
    /// The work.
    pub work_id: i64,
    /// Position in the work.
    pub ordinal: u32,
    /// Heading.
    pub title: String,
    /// Text.
    pub text: String,
    /// Character range start in the work's text.
    pub char_start: u64,
    /// Character range end (exclusive).
    pub char_end: u64,
}

/// Result of storing a work: its id, what happened, and its section ids by ordinal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkUpserted {
    /// Work id.
    pub id: i64,
    /// What happened to the work as a whole.
    pub outcome: Outcome,
    /// `(ordinal, section id)` in ordinal order.
    pub sections: Vec<(u32, i64)>,
}

// ---------------------------------------------------------------------------------
// Pages and sites

/// Where a page came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", content = "detail", rename_all = "snake_case")]
pub enum PageSource {
    /// Fetched by the crawler.
    Crawl,
    /// Imported from a file (its name).
    Import(String),
    /// Submitted through the API (by whom).
    Api(String),
}

/// How a page's body is read: decided once, when the page is fetched or imported, and
/// stored with it, so that every later reader (the matcher, evidence views) reads the
/// body the way ingest did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PageFormat {
    /// Markup: the text is extracted from the HTML.
    Html,
    /// Plain text, read as it is.
    Text,
}

impl PageFormat {
    /// The stored name (`html`, `text`).
    pub fn as_str(self) -> &'static str {
        match self {
            PageFormat::Html => "html",
            PageFormat::Text => "text",
        }
    }

    /// The format named `s` (as [`PageFormat::as_str`] writes it).
    pub fn parse(s: &str) -> Option<PageFormat> {
        match s {
            "html" => Some(PageFormat::Html),
            "text" => Some(PageFormat::Text),
            _ => None,
        }
    }
}

/// A fetched page to store (upserted by normalised URL).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewPage {
    /// URL; normalised by [`crate::normalize_url`] before use.
    pub url: String,
    /// Fetch time.
    pub fetched_at: Timestamp,
    /// HTTP status, when fetched over HTTP.
    pub http_status: Option<u16>,
    /// Detected charset.
    pub charset: Option<String>,
    /// Raw body as fetched (stored compressed). May be empty for imports of text.
    pub body: Vec<u8>,
    /// Extracted text.
    pub text: String,
    /// How `body` was read; `None` when not known (a page made of text only).
    #[serde(default)]
    pub format: Option<PageFormat>,
    /// The canonicalisation `text` is the canonical text of (the core's
    /// `CanonParams::tag`); `None` when it is not known to be one.
    #[serde(default)]
    pub canon_tag: Option<String>,
    /// Provenance.
    pub source: PageSource,
}

/// A stored page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Page {
    /// Integer id.
    pub id: i64,
    /// Normalised URL.
    pub url: String,
    /// Host.
    pub site: String,
    /// First fetch.
    pub first_fetched_at: Timestamp,
    /// Latest fetch.
    pub last_fetched_at: Timestamp,
    /// HTTP status of the latest fetch.
    pub http_status: Option<u16>,
    /// Detected charset.
    pub charset: Option<String>,
    /// Raw body (decompressed).
    pub body: Vec<u8>,
    /// Extracted text.
    pub text: String,
    /// Hash of the extracted text.
    pub content_hash: u64,
    /// How `body` was read when it was stored; `None` for pages stored before the format
    /// was recorded (schema 11), whose body readers sniff as ingest did.
    #[serde(default)]
    pub format: Option<PageFormat>,
    /// The canonicalisation `text` is the canonical text of (the core's
    /// `CanonParams::tag`, recorded from schema 17); `None` when it is not known to be one:
    /// a reader wanting the canonical text makes it from the body.
    #[serde(default)]
    pub canon_tag: Option<String>,
    /// Provenance of the latest content.
    pub source: PageSource,
}

/// Which of a page's two large fields a read of pages decompresses
/// ([`crate::PageStore::get_pages`]); the one not read is left empty.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PageParts {
    /// The body and the extracted text.
    #[default]
    All,
    /// What the page's text is made from: the body, and the extracted text only when no
    /// body was kept. A matching task reads a page so when it decodes the body: a page
    /// without a current canon tag, or one whose evidence it quotes (inflating and
    /// validating a text it has no use for was 4-5% of its CPU).
    Source,
    /// The extracted text only (the body left empty): what a matching task analyses a
    /// page with a current canon tag from.
    Text,
}

impl PageParts {
    /// The body is read.
    pub fn reads_body(self) -> bool {
        !matches!(self, PageParts::Text)
    }

    /// The extracted text is read, for a page whose body (as read) is empty or not.
    pub fn reads_text(self, body_is_empty: bool) -> bool {
        match self {
            PageParts::All | PageParts::Text => true,
            PageParts::Source => body_is_empty,
        }
    }
}

/// A page without body and text (for listings).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PageRef {
    /// Integer id.
    pub id: i64,
    /// Normalised URL.
    pub url: String,
    /// Host.
    pub site: String,
    /// Hash of the extracted text.
    pub content_hash: u64,
    /// Latest fetch.
    pub last_fetched_at: Timestamp,
}

/// A host and what is known about it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Site {
    /// Host name (lower case).
    pub host: String,
    /// Pages stored for it.
    pub page_count: u64,
    /// First page fetched.
    pub first_seen: Timestamp,
    /// Latest page fetched.
    pub last_seen: Timestamp,
    /// Free notes (e.g. "known pirate site").
    pub notes: Option<String>,
}

// ---------------------------------------------------------------------------------
// Fingerprints

/// What a fingerprint record belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SubjectKind {
    /// A work section.
    Section,
    /// A page.
    Page,
}

impl SubjectKind {
    /// Stable name used in both databases.
    pub fn as_str(self) -> &'static str {
        match self {
            SubjectKind::Section => "section",
            SubjectKind::Page => "page",
        }
    }

    pub(crate) fn parse(s: &str) -> Result<Self, StoreError> {
        match s {
            "section" => Ok(SubjectKind::Section),
            "page" => Ok(SubjectKind::Page),
            other => Err(StoreError::corrupt("subject kind", other)),
        }
    }
}

/// A section or page, by id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Subject {
    /// Section or page.
    pub kind: SubjectKind,
    /// Its id.
    pub id: i64,
}

impl Subject {
    /// A section.
    pub fn section(id: i64) -> Self {
        Subject { kind: SubjectKind::Section, id }
    }
    /// A page.
    pub fn page(id: i64) -> Self {
        Subject { kind: SubjectKind::Page, id }
    }
}

impl std::fmt::Display for Subject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.kind.as_str(), self.id)
    }
}

/// The winnowed keys of a section's stored fingerprints in their compact form
/// ([`zhiwen_core::Fingerprints::winnowed_digest`]), written with the fingerprints and
/// read without them: what confirming a candidate of a sampled section index needs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WinnowedKeys {
    /// Whose (a section).
    pub subject: Subject,
    /// The parameter tag of the fingerprints they come from.
    pub params_tag: String,
    /// Sorted, deduplicated.
    pub keys: Vec<u32>,
}

/// Stored fingerprints of one subject.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FingerprintRecord {
    /// Whose.
    pub subject: Subject,
    /// The parameter tag that produced them (equals `fingerprints.params_tag`).
    pub params_tag: String,
    /// The fingerprints.
    pub fingerprints: Fingerprints,
    /// Last written.
    pub updated_at: Timestamp,
}

// ---------------------------------------------------------------------------------
// Matches

/// Review state of a match.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReviewStatus {
    /// Not reviewed yet.
    New,
    /// A reviewer confirmed the copy.
    Confirmed,
    /// A reviewer dismissed it.
    Dismissed,
    /// A takedown notice was sent.
    TakedownSent,
    /// On a domain the holder licensed (its own site, a partner's): no alert, no
    /// notice, counted apart. Set and cleared by the licensed-domain rules, not by hand
    /// ([`LICENSED_BY`]).
    Licensed,
}

/// Who the review trail names for a change made by the licensed-domain rule, and the only
/// reviewer a store lets make a match [`ReviewStatus::Licensed`] or move a licensed one
/// ([`MatchStore::set_review`](crate::MatchStore::set_review)): a reviewer's hand clearing
/// `licensed` would put a copy on the holder's own or a partner's site in a takedown
/// notice. API reviewers are named `key:...`, never this.
pub const LICENSED_BY: &str = "zhiwen:licensed";

impl ReviewStatus {
    /// Every status.
    pub const ALL: [ReviewStatus; 5] = [
        ReviewStatus::New,
        ReviewStatus::Confirmed,
        ReviewStatus::Dismissed,
        ReviewStatus::TakedownSent,
        ReviewStatus::Licensed,
    ];

    /// Stable name used in both databases.
    pub fn as_str(self) -> &'static str {
        match self {
            ReviewStatus::New => "new",
            ReviewStatus::Confirmed => "confirmed",
            ReviewStatus::Dismissed => "dismissed",
            ReviewStatus::TakedownSent => "takedown_sent",
            ReviewStatus::Licensed => "licensed",
        }
    }

    /// Parse [`ReviewStatus::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        ReviewStatus::ALL.into_iter().find(|r| r.as_str() == s)
    }
}

/// The kinds of copy a match records, as the matcher decides them (its `MatchKind`):
/// the canonical texts are equal, most of each is in the other, part of the section is
/// on the page, or (most of) the whole section sits inside a larger page.
pub const MATCH_KINDS: [&str; 4] = ["identical", "near_duplicate", "excerpt", "embedded"];

/// A comparison result to record (upserted by `(section_id, page_id)`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewMatch {
    /// The work section.
    pub section_id: i64,
    /// The page.
    pub page_id: i64,
    /// Kind of copy, one of [`MATCH_KINDS`] (the verdict's own kind stays in `comparison`).
    pub kind: String,
    /// Every score, the verdict and the evidence passages (offsets + quotes).
    pub comparison: Comparison,
    /// When this comparison was made.
    pub seen_at: Timestamp,
}

/// One change of review status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewEvent {
    /// Who.
    pub by: String,
    /// When.
    pub at: Timestamp,
    /// Previous status.
    pub from: ReviewStatus,
    /// New status.
    pub to: ReviewStatus,
    /// Optional note.
    pub note: Option<String>,
}

/// A stored match.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Match {
    /// Integer id (cursor for pagination).
    pub id: i64,
    /// Section.
    pub section_id: i64,
    /// Work of the section.
    pub work_id: i64,
    /// Page.
    pub page_id: i64,
    /// Host of the page.
    pub site: String,
    /// Kind of copy, one of [`MATCH_KINDS`] (the verdict kind is `comparison.verdict.kind`).
    pub kind: String,
    /// Verdict score.
    pub score: f64,
    /// Is it a copy by the verdict?
    pub duplicate: bool,
    /// Every score and the evidence.
    pub comparison: Comparison,
    /// First recorded.
    pub first_seen: Timestamp,
    /// Last recorded.
    pub last_seen: Timestamp,
    /// Review status.
    pub status: ReviewStatus,
    /// Every status change, oldest first.
    pub review_log: Vec<ReviewEvent>,
}

/// The one query of matches: the filters of the pipeline's listing
/// ([`MatchStore::list_matches`](crate::MatchStore::list_matches)), the dashboard's
/// listings, counts and statistics ([`QueryStore`](crate::QueryStore)) and the exports.
/// `None` (or empty) means "any"; all given filters must hold. Both backends apply it
/// identically.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct MatchQuery {
    /// Of works of this owner (the API sets it for a rights holder: their works only).
    pub owner: Option<String>,
    /// Of this work.
    pub work_id: Option<i64>,
    /// Of this section.
    pub section_id: Option<i64>,
    /// On this page.
    pub page_id: Option<i64>,
    /// On this host.
    pub site: Option<String>,
    /// Of this kind of copy (one of [`MATCH_KINDS`]).
    pub kind: Option<String>,
    /// In this review status.
    pub status: Option<ReviewStatus>,
    /// In none of these statuses.
    pub not_status: Vec<ReviewStatus>,
    /// Score at least.
    pub min_score: Option<f64>,
    /// Score at most.
    pub max_score: Option<f64>,
    /// Last seen at or after.
    pub last_seen_from: Option<Timestamp>,
    /// Last seen before.
    pub last_seen_until: Option<Timestamp>,
    /// First seen at or after.
    pub first_seen_from: Option<Timestamp>,
    /// First seen before.
    pub first_seen_until: Option<Timestamp>,
}

// ---------------------------------------------------------------------------------
// Tasks

/// Life cycle of a task.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskState {
    /// Waiting for a worker.
    Queued,
    /// Claimed by a worker.
    Running,
    /// Done.
    Succeeded,
    /// Gave up with an error.
    Failed,
    /// Cancelled before finishing.
    Cancelled,
}

impl TaskState {
    /// Every state.
    pub const ALL: [TaskState; 5] =
        [TaskState::Queued, TaskState::Running, TaskState::Succeeded, TaskState::Failed, TaskState::Cancelled];

    /// Stable name used in both databases.
    pub fn as_str(self) -> &'static str {
        match self {
            TaskState::Queued => "queued",
            TaskState::Running => "running",
            TaskState::Succeeded => "succeeded",
            TaskState::Failed => "failed",
            TaskState::Cancelled => "cancelled",
        }
    }

    /// Parse [`TaskState::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        TaskState::ALL.into_iter().find(|t| t.as_str() == s)
    }

    /// No further transitions.
    pub fn is_terminal(self) -> bool {
        matches!(self, TaskState::Succeeded | TaskState::Failed | TaskState::Cancelled)
    }
}

/// A task to enqueue, idempotent by `key`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewTask {
    /// Caller's idempotency key, e.g. `match:2026-11-21`.
    pub key: String,
    /// Kind, e.g. `match`, `refingerprint`.
    pub kind: String,
    /// Parameters (opaque JSON).
    pub params: serde_json::Value,
}

/// Progress counters of a task.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Progress {
    /// Items done.
    pub done: u64,
    /// Items expected (0 = unknown).
    pub total: u64,
    /// Items that failed.
    pub failed: u64,
}

/// A stored task.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Task {
    /// Integer id.
    pub id: i64,
    /// Idempotency key.
    pub key: String,
    /// Kind.
    pub kind: String,
    /// Parameters.
    pub params: serde_json::Value,
    /// State.
    pub state: TaskState,
    /// Progress counters.
    pub progress: Progress,
    /// Opaque checkpoint to resume from.
    pub checkpoint: Option<serde_json::Value>,
    /// Worker that claimed it.
    pub worker: Option<String>,
    /// Error of a failed task.
    pub error: Option<String>,
    /// Enqueued.
    pub created_at: Timestamp,
    /// Claimed.
    pub started_at: Option<Timestamp>,
    /// Finished, failed or cancelled.
    pub finished_at: Option<Timestamp>,
    /// Last change.
    pub updated_at: Timestamp,
}

// ---------------------------------------------------------------------------------
// Evidence

/// Why a page was captured: at a match's first sighting, on a reviewer's request, again
/// because the page changed, or because the removal re-check found a noticed page
/// changed but still carrying the work.
pub const CAPTURE_REASONS: [&str; 4] = ["first_match", "on_demand", "refetch", "recheck"];

/// One captured file as a capture lists it; its bytes are kept once per content
/// ([`crate::EvidenceStore::put_evidence_file`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CaptureFile {
    /// Name inside the capture (e.g. `response.warc`).
    pub name: String,
    /// Media type (e.g. `application/warc`).
    pub media_type: String,
    /// Size in bytes.
    pub size: u64,
    /// SHA-256 of the bytes, lower-case hex.
    pub sha256: String,
}

/// A capture of a web page to append to the evidence log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewCapture {
    /// Idempotency key (e.g. `capture:match:17:first`): appending the same key again
    /// returns the stored capture, `Unchanged`, and adds no leaf.
    pub key: String,
    /// The match the capture backs.
    pub match_id: i64,
    /// The captured page.
    pub page_id: i64,
    /// The URL fetched.
    pub url: String,
    /// When the page was fetched.
    pub captured_at: Timestamp,
    /// Why: one of [`CAPTURE_REASONS`].
    pub reason: String,
    /// The captured files (stored before the capture is appended).
    pub files: Vec<CaptureFile>,
    /// The exact bytes of the capture record (the log's leaf), kept byte for byte.
    pub record: Vec<u8>,
}

/// A stored capture: a leaf of the evidence log.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Capture {
    /// Integer id.
    pub id: i64,
    /// Position in the log: 0, 1, 2, ... with no gap.
    pub leaf_index: u64,
    /// Idempotency key.
    pub key: String,
    /// The match the capture backs.
    pub match_id: i64,
    /// The captured page.
    pub page_id: i64,
    /// The URL fetched.
    pub url: String,
    /// When the page was fetched.
    pub captured_at: Timestamp,
    /// Why it was captured.
    pub reason: String,
    /// The captured files.
    pub files: Vec<CaptureFile>,
    /// The capture record (the leaf), byte for byte.
    pub record: Vec<u8>,
    /// When retention deleted its files (the capture and its leaf stay).
    pub pruned_at: Option<Timestamp>,
}

/// What one run of evidence retention did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PruneReport {
    /// Captures pruned now.
    pub captures: u64,
    /// Distinct files (contents) deleted.
    pub files_deleted: u64,
    /// Their bytes.
    pub bytes_deleted: u64,
}
