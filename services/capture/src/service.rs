//! The evidence service of one process: the log (a cache of the stored leaves, caught up
//! before every use), the key that signs its heads, and the capture of a match.

use std::io::Cursor;
use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::{Mutex, MutexGuard};
use zhiwen_evidence::package::{PackageFile, ProofFile};
use zhiwen_evidence::{
    exchange_records, resource_record, write_package, CaptureRecord, EvidenceLog, FileEntry, HttpExchange, LogKey,
    SignedTreeHead, TimeStampRequest, TimeStampToken, TreeHead,
};
use zhiwen_ingest::crawler::fetch::{fetch, FetchRules};
use zhiwen_ingest::crawler::{http_client, CrawlConfig};
use zhiwen_store::{Capture, CaptureFile, NewCapture, Outcome, Page, PageFormat, PageSource, Stores, Timestamp};

use crate::{CaptureError, RecheckConfig, Result};

/// Leaves read from the store at a time when the log catches up.
const LEAVES_PER_READ: u32 = 4096;

/// Largest answer read from a time-stamp authority (a token with its certificate chain is
/// a few kilobytes).
const MAX_TSA_RESPONSE: usize = 1 << 20;

/// How captures are made.
#[derive(Debug, Clone)]
pub struct CaptureConfig {
    /// The crawler's settings a live re-fetch uses: its User-Agent, address policy,
    /// timeouts and body bounds (a capture fetches exactly as the crawler does).
    pub crawl: CrawlConfig,
    /// Re-fetch a crawled page when capturing it (what the site serves now, with every
    /// header and the address connected to). Imported pages are never fetched: their
    /// capture is the record as imported.
    pub refetch: bool,
    /// Chromium for the screenshot and the print of a live page; `None`: no screenshot
    /// (the capture record says so).
    pub chromium: Option<PathBuf>,
    /// Largest captured file read back into memory for a package.
    pub max_file_bytes: u64,
    /// Keep captured files this many days (0: forever): see [`EvidenceService::prune`].
    pub retention_days: u32,
    /// An RFC 3161 time-stamp authority (可信时间戳) asked to stamp every new signed tree
    /// head ([`zhiwen_evidence::tsa`]); `None`: heads are not time-stamped.
    pub tsa_url: Option<url::Url>,
    /// How long a time-stamp authority may take to answer (the head is kept without a
    /// token when it does not answer in time).
    pub tsa_timeout: Duration,
    /// The removal re-check of noticed and confirmed pages ([`crate::recheck()`]).
    pub recheck: RecheckConfig,
}

impl Default for CaptureConfig {
    fn default() -> Self {
        CaptureConfig {
            crawl: CrawlConfig::default(),
            refetch: true,
            chromium: None,
            max_file_bytes: 256 << 20,
            retention_days: 0,
            tsa_url: None,
            tsa_timeout: Duration::from_secs(10),
            recheck: RecheckConfig::default(),
        }
    }
}

/// The evidence service: make captures, keep the log, sign heads, write packages.
pub struct EvidenceService {
    stores: Stores,
    key: LogKey,
    log: Mutex<EvidenceLog>,
    config: CaptureConfig,
    http: (reqwest::Client, FetchRules),
    /// The client that asks the time-stamp authority (not the crawler's: the TSA is
    /// configured by the operator, and the crawler's address policy is for the web).
    tsa_http: reqwest::Client,
    /// The matcher whose verification the removal re-check uses; `None`: no re-check.
    matcher: Option<zhiwen_matcher::Matcher>,
}

impl std::fmt::Debug for EvidenceService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EvidenceService").field("public_key", &self.key.public_key_hex()).finish_non_exhaustive()
    }
}

/// A time-stamp authority's URL, as settings give it: http or https.
pub fn parse_tsa_url(text: &str) -> Result<url::Url> {
    let url = url::Url::parse(text.trim())
        .map_err(|e| CaptureError::Config(format!("tsa_url {text:?} is not a URL: {e}")))?;
    if !matches!(url.scheme(), "http" | "https") || url.host_str().is_none() {
        return Err(CaptureError::Config(format!("tsa_url must be an http(s) URL with a host: {text}")));
    }
    Ok(url)
}

/// The media type of a stored page's body, as its record says it was read.
fn stored_media_type(page: &Page) -> String {
    let charset = page.charset.as_deref().map(|c| format!("; charset={c}")).unwrap_or_default();
    match page.format {
        Some(PageFormat::Html) => format!("text/html{charset}"),
        Some(PageFormat::Text) => format!("text/plain{charset}"),
        None => "application/octet-stream".into(),
    }
}

impl EvidenceService {
    /// The service over `stores`, signing with `key`. Reads the stored log and checks it
    /// against the latest signed head: a log that lost leaves, or whose leaves no longer
    /// give the signed root, is refused.
    pub async fn open(stores: Stores, key: LogKey, config: CaptureConfig) -> Result<Self> {
        let http = http_client(&config.crawl)?;
        let tsa_http = reqwest::Client::builder()
            .timeout(config.tsa_timeout)
            .user_agent(concat!("zhiwen/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| CaptureError::Config(format!("the time-stamp client cannot be built: {e}")))?;
        let service =
            EvidenceService { stores, key, log: Mutex::new(EvidenceLog::new()), config, http, tsa_http, matcher: None };
        {
            let log = service.synced().await?;
            if let Some(head) = service.latest_head().await? {
                let at = if head.head.size == log.size() { Ok(log.root()) } else { log.root_at(head.head.size) };
                let root = at.map_err(|_| {
                    CaptureError::Inconsistent(format!(
                        "the store holds {} captures but a head was signed for {}",
                        log.size(),
                        head.head.size
                    ))
                })?;
                if root != head.head.root() {
                    return Err(CaptureError::Inconsistent(format!(
                        "the stored captures do not give the root signed for {} leaves",
                        head.head.size
                    )));
                }
            }
        }
        Ok(service)
    }

    /// The stores the service reads and writes.
    pub fn stores(&self) -> &Stores {
        &self.stores
    }

    /// The service with `matcher`, whose verification the removal re-check uses to tell
    /// whether a page fetched again still carries its matched sections (the capture
    /// worker re-checks only a service that has one).
    pub fn with_matcher(mut self, matcher: zhiwen_matcher::Matcher) -> Self {
        self.matcher = Some(matcher);
        self
    }

    /// The matcher given by [`EvidenceService::with_matcher`].
    pub fn matcher(&self) -> Option<&zhiwen_matcher::Matcher> {
        self.matcher.as_ref()
    }

    /// How captures are made (and re-checks run).
    pub fn config(&self) -> &CaptureConfig {
        &self.config
    }

    /// The crawler's client and fetch rules, as captures use them.
    pub(crate) fn http(&self) -> &(reqwest::Client, FetchRules) {
        &self.http
    }

    /// The public key (hex) that signs the tree heads.
    pub fn public_key(&self) -> String {
        self.key.public_key_hex()
    }

    /// The log caught up with the store (other processes append too). A store holding
    /// fewer leaves than this process has seen is refused.
    async fn synced(&self) -> Result<MutexGuard<'_, EvidenceLog>> {
        let mut log = self.log.lock().await;
        let stored = self.stores.evidence.count_captures().await?;
        if stored < log.size() {
            return Err(CaptureError::Inconsistent(format!(
                "the store holds {stored} captures, the log had {}",
                log.size()
            )));
        }
        while log.size() < stored {
            let leaves = self.stores.evidence.capture_leaves(log.size(), LEAVES_PER_READ).await?;
            if leaves.is_empty() {
                return Err(CaptureError::Inconsistent(format!(
                    "the store counts {stored} captures but has none after leaf {}",
                    log.size()
                )));
            }
            for leaf in leaves {
                log.append(leaf);
            }
        }
        Ok(log)
    }

    /// Capture what `match_id`'s page is, for `reason`, under the idempotency `key`
    /// (the capture task's): the WARC of a live re-fetch (crawled pages) or of the stored
    /// record (imported ones, or when the site does not answer), the screenshot and the
    /// print of a live page, every file stored by its SHA-256, and the record appended to
    /// the log. A capture already made under `key` is returned as it is.
    pub async fn capture_match(&self, match_id: i64, reason: &str, key: &str) -> Result<(Capture, Outcome)> {
        if let Some(done) = self.stores.evidence.captures_of_match(match_id).await?.into_iter().find(|c| c.key == key) {
            return Ok((done, Outcome::Unchanged));
        }
        let m = self
            .stores
            .matches
            .get_match(match_id)
            .await?
            .ok_or_else(|| CaptureError::NotFound(format!("match {match_id}")))?;
        let page = self
            .stores
            .pages
            .get_page(m.page_id)
            .await?
            .ok_or_else(|| CaptureError::NotFound(format!("page {}", m.page_id)))?;
        let now = Timestamp::now();
        let date = now.rfc3339();
        let mut record = CaptureRecord {
            format: CaptureRecord::FORMAT.into(),
            capture_id: key.to_owned(),
            match_id: Some(match_id),
            url: page.url.clone(),
            captured_at: date.clone(),
            zhiwen_version: env!("CARGO_PKG_VERSION").into(),
            page_id: Some(page.id),
            reason: Some(reason.to_owned()),
            ..CaptureRecord::default()
        };
        let mut files: Vec<(&'static str, &'static str, Vec<u8>)> = Vec::new();
        let live_url = match (&page.source, url::Url::parse(&page.url)) {
            (PageSource::Crawl, Ok(u)) if self.config.refetch && matches!(u.scheme(), "http" | "https") => Some(u),
            _ => None,
        };
        let mut fetched_url = None;
        if let Some(url) = &live_url {
            let (client, rules) = &self.http;
            match fetch(client, url, rules, |_| async { Ok(()) }).await {
                Ok(f) => {
                    let (request_head, response_head) =
                        (f.request_head(&self.config.crawl.user_agent), f.response_head());
                    files.push((
                        "capture/page.warc",
                        "application/warc",
                        exchange_records(&HttpExchange {
                            target_uri: f.final_url.as_str(),
                            ip: f.remote_ip,
                            date: &date,
                            request_head: &request_head,
                            response_head: &response_head,
                            body: &f.body,
                        }),
                    ));
                    record.source = Some("fetched".into());
                    record.final_url = Some(f.final_url.to_string());
                    record.remote_ip = f.remote_ip.map(|ip| ip.to_string());
                    fetched_url = Some(f.final_url);
                }
                Err(e) => {
                    tracing::info!(match_id, url = %url, error = %e, "capture: the page cannot be fetched again; the stored record is kept");
                    record.notes.push(format!("re-fetch failed ({e}): the stored record is kept"));
                }
            }
        }
        if files.is_empty() {
            files.push((
                "capture/page.warc",
                "application/warc",
                resource_record(&page.url, &page.last_fetched_at.rfc3339(), &stored_media_type(&page), &page.body),
            ));
            record.source = Some("stored".into());
        }
        match (&self.config.chromium, &fetched_url) {
            (Some(chromium), Some(url)) => match self.render(chromium, url).await {
                Ok((png, pdf)) => {
                    files.push(("capture/screenshot.png", "image/png", png));
                    files.push(("capture/print.pdf", "application/pdf", pdf));
                }
                Err(e) => {
                    tracing::warn!(match_id, url = %url, error = %e, "capture: the page cannot be rendered");
                    record.notes.push(format!("screenshot and print failed: {e}"));
                }
            },
            (None, Some(_)) => record.notes.push("no screenshot: no browser is configured".into()),
            (_, None) => record.notes.push("no screenshot: the page was not fetched live".into()),
        }
        let mut stored = Vec::with_capacity(files.len());
        for (name, media_type, bytes) in &files {
            let sha256 = self.stores.evidence.put_evidence_file(bytes).await?;
            record.files.push(FileEntry { name: (*name).into(), bytes: bytes.len() as u64, sha256: sha256.clone() });
            stored.push(CaptureFile {
                name: (*name).into(),
                media_type: (*media_type).into(),
                size: bytes.len() as u64,
                sha256,
            });
        }
        let new = NewCapture {
            key: key.to_owned(),
            match_id,
            page_id: page.id,
            url: page.url.clone(),
            captured_at: now,
            reason: reason.to_owned(),
            files: stored,
            record: record.to_leaf(),
        };
        let (capture, outcome) = self.stores.evidence.append_capture(&new).await?;
        tracing::info!(match_id, capture_id = capture.id, leaf = capture.leaf_index, files = files.len(), "captured");
        Ok((capture, outcome))
    }

    async fn render(
        &self,
        chromium: &std::path::Path,
        url: &url::Url,
    ) -> Result<(Vec<u8>, Vec<u8>), zhiwen_ingest::RenderError> {
        let mut options = zhiwen_ingest::RenderOptions::new(chromium);
        options.policy = self.config.crawl.address_policy;
        let r = zhiwen_ingest::render_page(url, &options).await?;
        Ok((r.screenshot_png, r.print_pdf))
    }

    /// Retention: remove the files of captures made more than `days` ago (the configured
    /// `retention_days` when `None`; 0 keeps everything), except those backing a confirmed
    /// match or a sent takedown notice. The captures' records stay in the log, so older
    /// packages still verify; a package of a pruned capture can no longer be exported.
    pub async fn prune(&self, days: Option<u32>) -> Result<Option<zhiwen_store::PruneReport>> {
        let days = days.unwrap_or(self.config.retention_days);
        if days == 0 {
            return Ok(None);
        }
        let before = Timestamp(Timestamp::now().0.saturating_sub(i64::from(days) * 86_400_000));
        // The store logs what it removed.
        Ok(Some(self.stores.evidence.prune_evidence(before).await?))
    }

    /// The bytes of a captured file (hash-checked by the store), `None` when retention
    /// removed it; at most the configured `max_file_bytes`.
    pub async fn read_file(&self, sha256: &str) -> Result<Option<Vec<u8>>> {
        Ok(self.stores.evidence.get_evidence_file(sha256, self.config.max_file_bytes).await?)
    }

    /// The latest signed tree head kept, if any.
    pub async fn latest_head(&self) -> Result<Option<SignedTreeHead>> {
        match self.stores.evidence.latest_tree_head().await? {
            Some(json) => Ok(Some(parse_head(&json)?)),
            None => Ok(None),
        }
    }

    /// Sign the log as it is now (`now_ms`) and keep the head; when the latest head kept
    /// already covers every leaf, that head is returned (a head per size). With a
    /// time-stamp authority configured, a new head is stamped before it is kept; an
    /// authority that fails or answers badly is logged and the head kept without a token
    /// (signing never waits on it longer than `tsa_timeout`, never fails because of it).
    pub async fn sign_head(&self, now_ms: i64) -> Result<SignedTreeHead> {
        let log = self.synced().await?;
        let root = log.root();
        drop(log);
        if let Some(latest) = self.latest_head().await? {
            if latest.head.size == root.size {
                return Ok(latest);
            }
        }
        let mut head = self.key.sign(TreeHead::new(&root, now_ms));
        if let Some(url) = &self.config.tsa_url {
            match self.time_stamp(url, &head.head).await {
                Ok(token) => {
                    tracing::info!(size = root.size, tsa = %url, gen_time = %token.gen_time, serial = %token.serial, "evidence log: tree head time-stamped");
                    head.set_timestamp_token(&token.der);
                }
                Err(e) => {
                    tracing::warn!(size = root.size, tsa = %url, error = %e, "evidence log: the time-stamp authority failed; the tree head is kept without a token");
                }
            }
        }
        let json = serde_json::to_string(&head).map_err(|e| CaptureError::Inconsistent(e.to_string()))?;
        if self.stores.evidence.put_tree_head(root.size, now_ms, &json).await? {
            tracing::info!(size = root.size, root = %root.hash, "evidence log: tree head signed");
            Ok(head)
        } else {
            // Another process signed this size first: theirs is the head.
            self.latest_head().await?.ok_or_else(|| CaptureError::Inconsistent("the signed head vanished".into()))
        }
    }

    /// Asks the time-stamp authority at `url` to stamp `head`'s signed text (RFC 3161 over
    /// HTTP: a POST of the DER request) and reads its answer.
    async fn time_stamp(&self, url: &url::Url, head: &TreeHead) -> std::result::Result<TimeStampToken, String> {
        let request = TimeStampRequest::new(head.signed_text().as_bytes());
        let mut response = self
            .tsa_http
            .post(url.clone())
            .header(reqwest::header::CONTENT_TYPE, zhiwen_evidence::tsa::QUERY_MEDIA_TYPE)
            .body(request.der.clone())
            .send()
            .await
            .map_err(|e| format!("request failed: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("HTTP status {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| format!("reading the answer: {e}"))? {
            if body.len() + chunk.len() > MAX_TSA_RESPONSE {
                return Err(format!("the answer is larger than {MAX_TSA_RESPONSE} bytes"));
            }
            body.extend_from_slice(&chunk);
        }
        request.read_response(&body).map_err(|e| e.to_string())
    }

    /// Heads made at or after `since_ms`, oldest first.
    pub async fn heads_since(&self, since_ms: i64, limit: u32) -> Result<Vec<SignedTreeHead>> {
        self.stores.evidence.tree_heads_since(since_ms, limit).await?.iter().map(|j| parse_head(j)).collect()
    }

    /// RFC 9162 consistency proof (hex) from the tree of `old` leaves to that of `new`.
    pub async fn consistency_proof(&self, old: u64, new: u64) -> Result<String> {
        Ok(self.synced().await?.consistency_proof(old, new)?)
    }

    /// The evidence package of capture `capture_id`: its files read back, its record, its
    /// inclusion proof in the latest signed head (a new head is signed when the latest
    /// does not cover it), the `extra` files (report, README) and the manifest's
    /// `details`, signed.
    pub async fn package(&self, capture_id: i64, extra: &[PackageFile], details: serde_json::Value) -> Result<Vec<u8>> {
        let capture = self
            .stores
            .evidence
            .get_capture(capture_id)
            .await?
            .ok_or_else(|| CaptureError::NotFound(format!("capture {capture_id}")))?;
        let mut head = self.latest_head().await?;
        if head.as_ref().is_none_or(|h| h.head.size <= capture.leaf_index) {
            head = Some(self.sign_head(Timestamp::now().0).await?);
        }
        let head = head.ok_or_else(|| CaptureError::Inconsistent("no tree head".into()))?;
        let proof = {
            let log = self.synced().await?;
            ProofFile {
                leaf_index: capture.leaf_index,
                tree_size: head.head.size,
                inclusion_proof: log.inclusion_proof(capture.leaf_index, head.head.size)?,
            }
        };
        let mut captured = Vec::with_capacity(capture.files.len());
        for f in &capture.files {
            let gone =
                |why: &str| CaptureError::FileGone { capture: capture.id, name: f.name.clone(), why: why.into() };
            let bytes = self
                .read_file(&f.sha256)
                .await?
                .ok_or_else(|| gone(if capture.pruned_at.is_some() { "removed by retention" } else { "missing" }))?;
            captured.push(PackageFile { name: f.name.clone(), bytes });
        }
        let out = write_package(
            Cursor::new(Vec::new()),
            &self.key,
            &captured,
            &capture.record,
            &proof,
            &head,
            extra,
            details,
        )?;
        Ok(out.into_inner())
    }
}

fn parse_head(json: &str) -> Result<SignedTreeHead> {
    serde_json::from_str(json).map_err(|e| CaptureError::Inconsistent(format!("a stored tree head is unreadable: {e}")))
}

/// Sign the log as it is now and publish the head: to the webhook (event
/// `zhiwen.tree_head`, with the public key), and in the log. Run after every matching task
/// and by the scheduler at least daily, so that a third party can keep heads and later
/// hold zhiwen to them. A webhook that fails is logged; the head is kept in the store.
pub async fn publish_head(
    service: &EvidenceService,
    webhook: Option<&zhiwen_matcher::webhook::Webhook>,
) -> Result<SignedTreeHead> {
    let head = service.sign_head(Timestamp::now().0).await?;
    tracing::info!(size = head.head.size, root = %head.head.root_hash, public_key = %head.public_key, "evidence log: signed tree head");
    if let Some(hook) = webhook {
        let payload = serde_json::json!({ "event": "zhiwen.tree_head", "tree_head": head });
        if let Err(e) = hook.post(&payload).await {
            tracing::warn!(error = %e, "the signed tree head could not be sent to the webhook");
        }
    }
    Ok(head)
}
