//! One trait per store. Both backends implement all of them; callers hold
//! `Arc<dyn Trait>` from [`crate::Stores`]. A single-record write or read that is the
//! batch version with one item (`upsert_work`, `upsert_page`, `put_fingerprints`,
//! `get_fingerprints`, `upsert_match`) is a default method here, written once.

use std::collections::HashSet;

use async_trait::async_trait;
use zhiwen_core::Fingerprints;

use crate::model::*;
use crate::StoreError;

/// Result alias of the store traits.
pub type StoreResult<T> = Result<T, StoreError>;

/// The result of a batch of one, for the single-record defaults: each batch method
/// returns one result per input, so a batch of one has exactly one.
fn only<T>(mut results: Vec<T>, what: &str) -> StoreResult<T> {
    results.pop().ok_or_else(|| StoreError::Backend { backend: "store", message: format!("no result for one {what}") })
}

/// The protected works ("mother library") and their sections.
#[async_trait]
pub trait WorkStore: Send + Sync {
    /// Store a work and its sections, keyed by `(owner, external_id)`. Re-storing the
    /// same content is `Unchanged`; changed content replaces the sections (ids stay
    /// stable per ordinal; sections beyond the new count are deleted).
    async fn upsert_work(&self, work: &NewWork) -> StoreResult<WorkUpserted> {
        only(self.upsert_works(std::slice::from_ref(work)).await?, "work")
    }
    /// Store several works; the whole batch is validated first (including duplicate
    /// `(owner, external_id)` within it), so bad input writes nothing.
    async fn upsert_works(&self, works: &[NewWork]) -> StoreResult<Vec<WorkUpserted>>;
    /// A work by id.
    async fn get_work(&self, id: i64) -> StoreResult<Option<Work>>;
    /// A work by natural key.
    async fn find_work(&self, owner: &str, external_id: &str) -> StoreResult<Option<Work>>;
    /// Works with id greater than `after_id`, ascending, at most `limit`.
    async fn list_works(&self, owner: Option<&str>, after_id: i64, limit: u32) -> StoreResult<Vec<WorkSummary>>;
    /// Every work's `(id, updated_at)`, ascending by id, read in one pass: what a matcher
    /// checks its cached sections against once per task. One query, however many works
    /// (paging with `list_works` costs one query per page, and on a server without an
    /// `_id` index every page is a scan of the collection).
    async fn work_versions(&self) -> StoreResult<Vec<(i64, Timestamp)>>;
    /// A section by id.
    async fn get_section(&self, id: i64) -> StoreResult<Option<Section>>;
    /// Several sections by id, in one read: ascending by id, ids not stored left out
    /// (the candidates of a page are read at once).
    async fn get_sections(&self, ids: &[i64]) -> StoreResult<Vec<Section>>;
    /// All sections of a work, by ordinal.
    async fn sections_of(&self, work_id: i64) -> StoreResult<Vec<Section>>;
    /// Number of works.
    async fn count_works(&self) -> StoreResult<u64>;
}

/// Fetched pages and their sites.
#[async_trait]
pub trait PageStore: Send + Sync {
    /// Store a page keyed by its normalised URL; the site's counts follow.
    async fn upsert_page(&self, page: &NewPage) -> StoreResult<Upserted> {
        only(self.upsert_pages(std::slice::from_ref(page)).await?, "page")
    }
    /// Store many pages (validated first; one transaction on the embedded store).
    /// Returns one result per input, in order.
    async fn upsert_pages(&self, pages: &[NewPage]) -> StoreResult<Vec<Upserted>>;
    /// A page by id.
    async fn get_page(&self, id: i64) -> StoreResult<Option<Page>>;
    /// Several pages by id, in one read: ascending by id, ids not stored left out
    /// (a matching task loads a batch of pages at once), with the `parts` of their body
    /// and text asked for (the other left empty).
    async fn get_pages(&self, ids: &[i64], parts: PageParts) -> StoreResult<Vec<Page>>;
    /// Record that the stored text of each page is the canonical text of the
    /// canonicalisation `canon_tag` ([`Page::canon_tag`]): a reader made that text from the
    /// page's body and found it equal to the stored one (a page stored before tags were,
    /// or under other canonicalisation parameters that happen to give the same text).
    /// `pages` are `(id, content hash)`, the hash as read with the page: a page is tagged
    /// only while its text is still the one compared, so one whose text changed since, or
    /// that is gone, is left alone; nothing else of a page changes. Returns how many pages
    /// took the tag (one that had it already is not counted). An empty tag is refused.
    async fn tag_pages(&self, pages: &[(i64, u64)], canon_tag: &str) -> StoreResult<u64>;
    /// A page by URL (normalised before the lookup).
    async fn find_page(&self, url: &str) -> StoreResult<Option<Page>>;
    /// Which of `urls` are stored, normalised as stored (what [`PageStore::find_page`]
    /// would find), reading no page: a watcher tells the new links of an index page from
    /// those it fetched before in one or a few reads, however many links the page lists.
    /// A URL that cannot be normalised is an error (nothing is read).
    async fn stored_urls(&self, urls: &[String]) -> StoreResult<HashSet<String>>;
    /// Pages whose extracted text has this hash ([`Page::content_hash`]), ascending by
    /// id, at most `limit`: the same text stored under other URLs (content deduplication).
    async fn find_pages_by_content_hash(&self, content_hash: u64, limit: u32) -> StoreResult<Vec<PageRef>>;
    /// Pages with id greater than `after_id`, ascending, at most `limit`.
    async fn list_pages(&self, site: Option<&str>, after_id: i64, limit: u32) -> StoreResult<Vec<PageRef>>;
    /// Ids of the pages last fetched at or after `since`, with id greater than
    /// `after_id`, ascending: the scope of a daily task, read in one query through the
    /// `(last_fetched_at, id)` index instead of a walk over every page.
    /// Holds the whole scope in memory, 8 bytes per page.
    async fn page_ids_fetched_since(&self, since: Timestamp, after_id: i64) -> StoreResult<Vec<i64>>;
    /// Number of pages.
    async fn count_pages(&self) -> StoreResult<u64>;
    /// The greatest page id (0 when no page is stored). Ids are given in insertion order,
    /// so the pages stored after this call have greater ids, whatever their fetch times.
    async fn max_page_id(&self) -> StoreResult<i64>;
    /// A site by host.
    async fn get_site(&self, host: &str) -> StoreResult<Option<Site>>;
    /// Sites with host greater than `after_host`, ascending, at most `limit`.
    async fn list_sites(&self, after_host: &str, limit: u32) -> StoreResult<Vec<Site>>;
    /// Set (or clear) a site's notes.
    async fn set_site_notes(&self, host: &str, notes: Option<&str>) -> StoreResult<()>;
}

/// Fingerprints of sections and pages, tagged with their parameters.
#[async_trait]
pub trait FingerprintStore: Send + Sync {
    /// Store the fingerprints of one subject (replacing older ones).
    async fn put_fingerprints(&self, subject: Subject, fingerprints: &Fingerprints) -> StoreResult<Outcome> {
        let counts = self.put_fingerprints_many(&[(subject, fingerprints.clone())]).await?;
        Ok(if counts.inserted > 0 {
            Outcome::Inserted
        } else if counts.updated > 0 {
            Outcome::Updated
        } else {
            Outcome::Unchanged
        })
    }
    /// Store many (validated first; duplicates of one subject in the batch are refused).
    async fn put_fingerprints_many(&self, items: &[(Subject, Fingerprints)]) -> StoreResult<BatchCounts>;
    /// The fingerprints of one subject.
    async fn get_fingerprints(&self, subject: Subject) -> StoreResult<Option<FingerprintRecord>> {
        Ok(self.get_fingerprints_many(&[subject]).await?.pop())
    }
    /// The fingerprints of those of `subjects` that have some, in no particular order (a
    /// few requests for many subjects, where reading them one by one costs a round trip
    /// each).
    async fn get_fingerprints_many(&self, subjects: &[Subject]) -> StoreResult<Vec<FingerprintRecord>>;
    /// The compact winnowed keys ([`WinnowedKeys`]) of those of `subjects` that have
    /// them, in no particular order, without reading the fingerprints. Every section's
    /// fingerprints written by [`FingerprintStore::put_fingerprints_many`] have them (also
    /// when the fingerprints themselves were unchanged, so writing a store's fingerprints
    /// again completes one written before they existed); pages have none, and neither has
    /// a section whose keys are larger than [`crate::codec::MAX_WINNOWED_KEYS`].
    async fn get_winnowed_many(&self, subjects: &[Subject]) -> StoreResult<Vec<WinnowedKeys>>;
    /// Ids of `kind` subjects whose fingerprints were made with another tag than
    /// `current_tag`, with id greater than `after_id`, ascending, at most `limit`.
    async fn stale_subjects(
        &self,
        kind: SubjectKind,
        current_tag: &str,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<i64>>;
    /// Records of `kind` with id greater than `after_id`, ascending, at most `limit`
    /// (for rebuilding the index).
    async fn scan_fingerprints(
        &self,
        kind: SubjectKind,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<FingerprintRecord>>;
    /// Number of records of `kind`, optionally only those with `params_tag`.
    async fn count_fingerprints(&self, kind: SubjectKind, params_tag: Option<&str>) -> StoreResult<u64>;
    /// Delete one subject's fingerprints; `true` if there were any.
    async fn delete_fingerprints(&self, subject: Subject) -> StoreResult<bool>;
    /// The works marked indexed with fingerprints made with `params_tag`
    /// ([`FingerprintStore::mark_work_indexed`]), each with the version it was marked at:
    /// `(work id, updated_at in ms)`, in no particular order.
    async fn indexed_works(&self, params_tag: &str) -> StoreResult<Vec<(i64, i64)>>;
    /// Mark a work indexed: every section of it, at version `version` (its `updated_at` in
    /// ms), has stored fingerprints made from its text with `params_tag`, and their keys
    /// are in the candidate index. A matcher's first task then need not read the sections
    /// of an unchanged work to see that. Replaces the work's mark; idempotent.
    async fn mark_work_indexed(&self, work_id: i64, version: i64, params_tag: &str) -> StoreResult<()>;
    /// Forget a work's mark, before any of its sections' fingerprints are written again (a
    /// write that stops half way then leaves no mark to trust).
    async fn unmark_work_indexed(&self, work_id: i64) -> StoreResult<()>;
}

/// Matches between work sections and pages, with their review trail.
#[async_trait]
pub trait MatchStore: Send + Sync {
    /// Record a comparison keyed by `(section_id, page_id)`: the first sighting is kept,
    /// the last sighting and the scores follow the newest call. `Unchanged` when the
    /// comparison is identical (only `last_seen` may move). Section and page must exist.
    async fn upsert_match(&self, m: &NewMatch) -> StoreResult<Upserted> {
        only(self.upsert_matches(std::slice::from_ref(m)).await?, "match")
    }
    /// Record several comparisons as [`MatchStore::upsert_match`] does each, in a few
    /// reads and writes: one result per input, in order. The whole batch is validated
    /// first (sections and pages must exist; one `(section, page)` at most once), so bad
    /// input writes nothing.
    async fn upsert_matches(&self, ms: &[NewMatch]) -> StoreResult<Vec<Upserted>>;
    /// A match by id.
    async fn get_match(&self, id: i64) -> StoreResult<Option<Match>>;
    /// A match by natural key.
    async fn find_match(&self, section_id: i64, page_id: i64) -> StoreResult<Option<Match>>;
    /// Change the review status, appending to the audit trail. Setting the current
    /// status again is a no-op (`Unchanged`). Only the licensed-domain rule
    /// ([`LICENSED_BY`](crate::LICENSED_BY) as `by`) makes a match `licensed` or changes a
    /// licensed one: anyone else gets `InvalidInput` or `Conflict`, and nothing changes.
    async fn set_review(
        &self,
        id: i64,
        to: ReviewStatus,
        by: &str,
        note: Option<&str>,
        at: Timestamp,
    ) -> StoreResult<Outcome>;
    /// Matches passing `q`, whole (comparison and review trail), with id greater than
    /// `after_id`, ascending, at most `limit`. Listings that show rather than process
    /// matches read [`QueryStore::query_matches`](crate::QueryStore::query_matches).
    async fn list_matches(&self, q: &MatchQuery, after_id: i64, limit: u32) -> StoreResult<Vec<Match>>;
    /// Which of `page_ids` have at least one match (of any status): a few indexed reads
    /// for the lot, no match read.
    async fn matched_pages(&self, page_ids: &[i64]) -> StoreResult<HashSet<i64>>;
}

/// Persisted tasks (matching runs and other jobs), driven by one worker loop.
#[async_trait]
pub trait TaskStore: Send + Sync {
    /// Enqueue a task; if `key` exists, return it unchanged (`Unchanged`). A different
    /// kind or parameters under an existing key is a `Conflict`.
    async fn create_task(&self, task: &NewTask) -> StoreResult<(Task, Outcome)>;
    /// Atomically move the oldest queued task (of `kind`, if given) to running.
    async fn claim_task(&self, kind: Option<&str>, worker: &str) -> StoreResult<Option<Task>>;
    /// Atomically hand a running task whose worker is `from` (its worker went away) to
    /// `worker`. `None` when the task is no longer running under `from`: another worker
    /// took it over first, or it ended.
    async fn take_over_task(&self, id: i64, from: Option<&str>, worker: &str) -> StoreResult<Option<Task>>;
    /// Record progress (and optionally a checkpoint) of a running task.
    async fn update_progress(
        &self,
        id: i64,
        progress: Progress,
        checkpoint: Option<&serde_json::Value>,
    ) -> StoreResult<Task>;
    /// Mark a running task succeeded.
    async fn finish_task(&self, id: i64) -> StoreResult<Task>;
    /// Mark a running task failed with an error.
    async fn fail_task(&self, id: i64, error: &str) -> StoreResult<Task>;
    /// Cancel a queued or running task.
    async fn cancel_task(&self, id: i64) -> StoreResult<Task>;
    /// A task by id.
    async fn get_task(&self, id: i64) -> StoreResult<Option<Task>>;
    /// A task by key.
    async fn find_task(&self, key: &str) -> StoreResult<Option<Task>>;
    /// Tasks (in `state` and of `kind`, each if given) with id greater than `after_id`,
    /// ascending. With both given, one indexed read whatever the number of tasks kept.
    async fn list_tasks(
        &self,
        state: Option<TaskState>,
        kind: Option<&str>,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<Task>>;
    /// The task of `kind` in `state` that started last (by start time, then id): one
    /// query, whatever the number of tasks kept.
    async fn latest_task(&self, kind: &str, state: TaskState) -> StoreResult<Option<Task>>;
}

/// Small named values a deployment keeps beside its data: the identity of the candidate
/// index the store was indexed into ([`INDEX_IDENTITY`]), so that an index that comes
/// back empty, or belongs to another deployment, is noticed instead of trusted.
#[async_trait]
pub trait MetaStore: Send + Sync {
    /// The value under `name`.
    async fn get_meta(&self, name: &str) -> StoreResult<Option<String>>;
    /// Set `name` to `value`, replacing any value (idempotent).
    async fn put_meta(&self, name: &str, value: &str) -> StoreResult<()>;
}

/// [`MetaStore`] name of the identity of the candidate index this store was indexed into.
pub const INDEX_IDENTITY: &str = "index_identity";

/// [`MetaStore`] name of the generation (a count of writes) the candidate index showed
/// after the last write whose effect the store relies on: an index showing fewer is older
/// than what the store records (restored from an earlier snapshot).
pub const INDEX_GENERATION: &str = "index_generation";

/// [`MetaStore`] name of the coarsest winnowed-key sampling the section namespace of that
/// index was written with (a power of two; absent: every key, as before the setting).
pub const SECTION_INDEX_SAMPLING: &str = "section_index_sampling";

/// Evidence of captured pages: the captured files (content-addressed by SHA-256), the
/// capture records in the order of the append-only Merkle log whose leaves they are
/// (computed by `zhiwen-evidence`), and the log's signed tree heads.
#[async_trait]
pub trait EvidenceStore: Send + Sync {
    /// Keep `bytes` under their SHA-256, returned as lower-case hex. Content-addressed
    /// and write-once: a file already stored is not written again (concurrent writers of
    /// the same bytes are fine).
    async fn put_evidence_file(&self, bytes: &[u8]) -> StoreResult<String>;
    /// The bytes of the stored file `sha256`, `None` when absent. A file larger than
    /// `max_bytes` is refused (`InvalidInput`) without being read; bytes that no longer
    /// hash to `sha256` are `Corrupt`, never returned.
    async fn get_evidence_file(&self, sha256: &str, max_bytes: u64) -> StoreResult<Option<Vec<u8>>>;
    /// Append a capture as the log's next leaf: leaf indexes are dense (0, 1, 2, ...,
    /// no gap, no duplicate), with concurrent appenders too. Idempotent by `key`: a key
    /// stored already returns its capture, `Unchanged`. Every listed file must have been
    /// stored ([`EvidenceStore::put_evidence_file`]), else `NotFound`.
    async fn append_capture(&self, capture: &NewCapture) -> StoreResult<(Capture, Outcome)>;
    /// A capture by id.
    async fn get_capture(&self, id: i64) -> StoreResult<Option<Capture>>;
    /// The captures of a match, oldest (lowest leaf index) first.
    async fn captures_of_match(&self, match_id: i64) -> StoreResult<Vec<Capture>>;
    /// The records of the leaves with index `from` and up, ascending, at most `limit`:
    /// how a process rebuilds or catches up its in-memory tree.
    async fn capture_leaves(&self, from: u64, limit: u32) -> StoreResult<Vec<Vec<u8>>>;
    /// Number of leaves (captures).
    async fn count_captures(&self) -> StoreResult<u64>;
    /// Keep the signed tree head `head_json` (opaque JSON text) of tree size `size`,
    /// made at `timestamp_ms`. The first head of a size wins: `false` when one existed.
    async fn put_tree_head(&self, size: u64, timestamp_ms: i64, head_json: &str) -> StoreResult<bool>;
    /// The head of the largest tree, if any.
    async fn latest_tree_head(&self) -> StoreResult<Option<String>>;
    /// Heads made at or after `since_ms`, ascending by size, at most `limit`.
    async fn tree_heads_since(&self, since_ms: i64, limit: u32) -> StoreResult<Vec<String>>;
    /// Retention: delete the files of the captures made before `before`, except those
    /// backing a match that is confirmed or had a takedown sent (kept forever), and
    /// never a file that a kept capture also lists. Captures and their leaves stay (the
    /// log is append-only); pruned ones get `pruned_at`. Idempotent.
    async fn prune_evidence(&self, before: Timestamp) -> StoreResult<PruneReport>;
}
