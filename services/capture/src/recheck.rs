//! Removal verification: the scheduled re-check of the pages that carry a confirmed match
//! or one a takedown notice was sent for, the escalation of those still up long after
//! their notice, and the removal statistics.
//!
//! A re-check ([`recheck()`]) fetches every such page again, politely (the crawler's
//! client, address policy, User-Agent and robots.txt; a few hosts at a time, one request
//! per host at a time with a delay between two), and classifies it:
//!
//! - **removed**: HTTP 404 or 410, the host gone (its name does not resolve, nothing
//!   listens) at two checks in a row, or the page is up but the matcher's verification
//!   finds none of its matched sections on it any more (it has no text at all, or other
//!   text). A host unreachable at one check only (a DNS or network hiccup, a server
//!   restarting) cannot tell: a page is never reported removed on one failed connection;
//! - **changed**: up, its text is not the text last seen (the stored page's, or that of the
//!   check that last saw it move), and it still carries a matched section: a new evidence
//!   capture of each match still carried is queued (reason `recheck`);
//! - **up**: up with the text last seen;
//! - otherwise (a timeout, a 5xx, robots.txt forbids or cannot be read, any other error)
//!   it cannot tell: the state stays, the error is kept.
//!
//! Each page's check is recorded ([`zhiwen_store::CaseStore::record_check`]) as soon as it
//! is made, after the captures it queues, so a run that dies loses nothing and a run made
//! again (same `now`) queues nothing twice. The text a transition saw is kept in its
//! detail (`text=<sha256>`): a page that changed and stays so is reported with that same
//! detail, which the watch does not count as a new change, and is captured once.
//!
//! Then every watched page still up or changed whose latest delivered notice (sent or
//! exported) went out at least `escalate_after_days` before `now` is flagged, once
//! ([`zhiwen_store::CaseStore::flag_watch`]), for a second notice.
//!
//! Time is the caller's: the re-check and the escalation use the `now` they are given,
//! never the wall clock, so a test can move time forward.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;
use std::time::Duration;

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use zhiwen_core::canon::InputFormat;
use zhiwen_ingest::crawler::fetch::fetch;
use zhiwen_ingest::crawler::robots::Robots;
use zhiwen_ingest::pages::{charset_param, decode_page, RawPage};
use zhiwen_ingest::{ImportLimits, IngestError};
use zhiwen_matcher::task::capture_task;
use zhiwen_matcher::Matcher;
use zhiwen_store::{
    MatchCursor, MatchGroup, MatchQuery, MatchSort, MatchSortKey, Page, PageSource, RemovalCheck, RemovalEvent,
    RemovalState, RemovalWatch, ReviewStatus, Stores, Timestamp,
};

use crate::{CaptureError, EvidenceService, Result};

/// Rows read at a time from the store's listings.
const PAGE_SIZE: u32 = 500;
const HOUR_MS: i64 = 3_600_000;
const DAY_MS: i64 = 24 * HOUR_MS;

/// `[recheck]` of the settings: when and how noticed pages are checked again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct RecheckConfig {
    /// Run the re-check from the capture worker (`zhiwen recheck` runs it regardless).
    pub enabled: bool,
    /// Hours between two scheduled re-checks (1 or more).
    pub every_hours: u64,
    /// Flag a page still up this many days after its latest notice went out.
    pub escalate_after_days: u32,
    /// Hosts checked at once (each host's pages one at a time).
    pub concurrency: usize,
    /// Pause between two requests to one host, milliseconds (robots.txt `Crawl-delay`
    /// may ask for more).
    pub per_host_delay_ms: u64,
    /// Longest wait for one page, seconds (1 to 600); longer is "cannot tell".
    pub timeout_secs: u64,
}

impl Default for RecheckConfig {
    fn default() -> Self {
        RecheckConfig {
            enabled: true,
            every_hours: 24,
            escalate_after_days: 7,
            concurrency: 4,
            per_host_delay_ms: 1000,
            timeout_secs: 30,
        }
    }
}

impl RecheckConfig {
    /// Check the values: a usable schedule, concurrency and timeout.
    pub fn validate(&self) -> Result<()> {
        if self.every_hours == 0 {
            return Err(CaptureError::Config("[recheck] every_hours must be 1 or more".into()));
        }
        if !(1..=64).contains(&self.concurrency) {
            return Err(CaptureError::Config("[recheck] concurrency must be 1 to 64".into()));
        }
        if !(1..=600).contains(&self.timeout_secs) {
            return Err(CaptureError::Config("[recheck] timeout_secs must be 1 to 600".into()));
        }
        Ok(())
    }
}

/// One transition a re-check made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Transition {
    /// The page.
    pub page_id: i64,
    /// Its URL.
    pub url: String,
    /// The transition as recorded.
    pub event: RemovalEvent,
}

/// A page flagged for a second notice.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Flagged {
    /// The page.
    pub page_id: i64,
    /// Its URL.
    pub url: String,
    /// The holder.
    pub owner: String,
    /// Its state when flagged (up or changed).
    pub state: RemovalState,
    /// Its latest delivered notice.
    pub notice_id: i64,
    /// When that notice went out.
    pub sent_at: Timestamp,
}

/// What one re-check did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecheckReport {
    /// The time the checks were recorded at.
    pub at: Timestamp,
    /// Pages checked.
    pub pages: u64,
    /// Found up, as last seen.
    pub up: u64,
    /// Found changed, still carrying the work.
    pub changed: u64,
    /// Found removed.
    pub removed: u64,
    /// Could not tell (timeouts, 5xx, robots.txt).
    pub unknown: u64,
    /// Evidence captures queued (matches of changed pages).
    pub captures_queued: u64,
    /// Every page's check, by page id.
    pub checks: Vec<RemovalCheck>,
    /// The transitions recorded, by page id.
    pub transitions: Vec<Transition>,
    /// Pages flagged for a second notice by this run, by page id.
    pub flagged: Vec<Flagged>,
}

/// A page to check: what of its matches the check needs.
#[derive(Debug, Clone)]
struct Target {
    page_id: i64,
    url: String,
    owner: String,
    /// (match id, section id) of its confirmed or noticed matches.
    matches: Vec<(i64, i64)>,
}

/// Re-check every page carrying a `confirmed` or `takedown_sent` match as of `now`, record
/// each check, queue captures of changed pages and flag pages still up long after their
/// notice (see the module documentation). `matcher` verifies whether a page still carries
/// its sections; the service gives the crawler's client and policy.
pub async fn recheck(
    service: &EvidenceService,
    matcher: &Matcher,
    config: &RecheckConfig,
    now: Timestamp,
) -> Result<RecheckReport> {
    config.validate()?;
    let stores = service.stores();
    let targets = targets(stores).await?;
    tracing::info!(pages = targets.len(), at = %now.rfc3339(), "removal re-check started");
    // One queue per host: its pages one at a time, a few hosts at once.
    let mut hosts: BTreeMap<String, Vec<Target>> = BTreeMap::new();
    for t in targets {
        let host = url::Url::parse(&t.url)
            .ok()
            .and_then(|u| {
                u.host_str().map(|h| format!("{}://{h}:{}", u.scheme(), u.port_or_known_default().unwrap_or(0)))
            })
            .unwrap_or_default();
        hosts.entry(host).or_default().push(t);
    }
    let ctx = Arc::new(Ctx { service, matcher, config, now });
    let mut runs = futures::stream::iter(hosts.into_values().map(|pages| check_host(ctx.clone(), pages)))
        .buffer_unordered(config.concurrency.max(1));
    let mut report = RecheckReport {
        at: now,
        pages: 0,
        up: 0,
        changed: 0,
        removed: 0,
        unknown: 0,
        captures_queued: 0,
        checks: Vec::new(),
        transitions: Vec::new(),
        flagged: Vec::new(),
    };
    while let Some(done) = runs.next().await {
        for (check, event, queued) in done? {
            match check.state {
                Some(RemovalState::Up) => report.up += 1,
                Some(RemovalState::Changed) => report.changed += 1,
                Some(RemovalState::Removed) => report.removed += 1,
                None => report.unknown += 1,
            }
            report.captures_queued += queued;
            if let Some(event) = event {
                report.transitions.push(Transition { page_id: check.page_id, url: check.url.clone(), event });
            }
            report.checks.push(check);
        }
    }
    drop(runs);
    report.pages = report.checks.len() as u64;
    report.checks.sort_by_key(|c| c.page_id);
    report.transitions.sort_by_key(|t| t.page_id);
    report.flagged = escalate(stores, config, now).await?;
    tracing::info!(
        pages = report.pages,
        up = report.up,
        changed = report.changed,
        removed = report.removed,
        unknown = report.unknown,
        transitions = report.transitions.len(),
        flagged = report.flagged.len(),
        "removal re-check done"
    );
    Ok(report)
}

struct Ctx<'a> {
    service: &'a EvidenceService,
    matcher: &'a Matcher,
    config: &'a RecheckConfig,
    now: Timestamp,
}

/// Every page carrying a confirmed or noticed match, by page id (read through the
/// dashboard's listing, by match id, a page of rows at a time).
async fn targets(stores: &Stores) -> Result<Vec<Target>> {
    let mut pages: BTreeMap<i64, Target> = BTreeMap::new();
    let sort = MatchSort { key: MatchSortKey::Id, descending: false };
    for status in [ReviewStatus::Confirmed, ReviewStatus::TakedownSent] {
        let q = MatchQuery { status: Some(status), ..MatchQuery::default() };
        let mut after = None;
        loop {
            let rows = stores.queries.query_matches(&q, sort, after, PAGE_SIZE).await?;
            let Some(last) = rows.last() else { break };
            after = Some(MatchCursor { value: last.sort_value(sort.key), id: last.id });
            for r in &rows {
                let t = pages.entry(r.page_id).or_insert_with(|| Target {
                    page_id: r.page_id,
                    url: r.url.clone(),
                    owner: r.owner.clone(),
                    matches: Vec::new(),
                });
                // A page carrying several holders' works is watched under the first owner
                // by name (the watch has one).
                if r.owner < t.owner {
                    t.owner = r.owner.clone();
                }
                t.matches.push((r.id, r.section_id));
            }
        }
    }
    let mut out: Vec<Target> = pages.into_values().collect();
    for t in &mut out {
        t.matches.sort_unstable();
        t.matches.dedup();
    }
    Ok(out)
}

/// Check one host's pages one at a time, pausing between two requests; each check is
/// recorded as it is made. Returns (check, transition, captures queued) per page.
async fn check_host(ctx: Arc<Ctx<'_>>, pages: Vec<Target>) -> Result<Vec<(RemovalCheck, Option<RemovalEvent>, u64)>> {
    let mut robots: Option<std::result::Result<Arc<Robots>, String>> = None;
    let mut delay = Duration::from_millis(ctx.config.per_host_delay_ms);
    let mut out = Vec::with_capacity(pages.len());
    for (i, target) in pages.iter().enumerate() {
        if i > 0 && !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        let url = match url::Url::parse(&target.url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => u,
            _ => {
                let check = unknown(&ctx, target, None, "not an http(s) address: not checked".into());
                let recorded = ctx.service.stores().cases.record_check(&check).await?;
                out.push((recorded.check, recorded.event, 0));
                continue;
            }
        };
        if robots.is_none() {
            let (client, rules) = ctx.service.http();
            let token = &ctx.service.config().crawl.robots_token;
            let fetched = Robots::fetch(client, &url, rules, token).await.map(Arc::new).map_err(|e| e.to_string());
            if let Ok(r) = &fetched {
                if let Some(d) = r.crawl_delay() {
                    delay = delay.max(d);
                }
            }
            robots = Some(fetched);
        }
        let (check, queued) = match &robots {
            Some(Ok(r)) => check_page(&ctx, target, &url, r).await?,
            Some(Err(e)) => (unknown(&ctx, target, None, format!("not fetched: {e}")), 0),
            None => (unknown(&ctx, target, None, "robots.txt not read".into()), 0),
        };
        let recorded = ctx.service.stores().cases.record_check(&check).await?;
        if let Some(e) = &recorded.event {
            tracing::info!(page_id = target.page_id, url = %target.url, from = ?e.from, to = ?e.to, "removal watch: {}", e.detail);
        }
        out.push((recorded.check, recorded.event, queued));
    }
    Ok(out)
}

fn check(ctx: &Ctx<'_>, t: &Target, state: Option<RemovalState>, status: Option<u16>, detail: String) -> RemovalCheck {
    RemovalCheck {
        page_id: t.page_id,
        url: t.url.clone(),
        owner: t.owner.clone(),
        at: ctx.now,
        state,
        http_status: status,
        detail,
        unreachable: false,
    }
}

fn unknown(ctx: &Ctx<'_>, t: &Target, status: Option<u16>, detail: String) -> RemovalCheck {
    check(ctx, t, None, status, detail)
}

/// The check of a page whose host could not be reached (its name does not resolve, nothing
/// listens): it cannot tell by itself; the store records the second such check in a row as
/// `removed` ([`RemovalCheck::unreachable`]).
fn host_unreachable(ctx: &Ctx<'_>, t: &Target, why: &str) -> RemovalCheck {
    RemovalCheck {
        unreachable: true,
        ..unknown(ctx, t, None, format!("host unreachable (removed if the next check cannot reach it either): {why}"))
    }
}

/// The text hash a check's detail carries (`text=<sha256>`).
fn detail_hash(detail: &str) -> Option<&str> {
    let start = detail.find("text=")? + 5;
    detail.get(start..start + 64).filter(|h| h.bytes().all(|b| b.is_ascii_hexdigit()))
}

/// Fetch one page and classify it: the check to record and the captures it queued.
async fn check_page(ctx: &Ctx<'_>, t: &Target, url: &url::Url, robots: &Robots) -> Result<(RemovalCheck, u64)> {
    // robots.txt itself could not be read because the host is gone.
    if let Robots::Unavailable(why) = robots {
        if why.contains("cannot connect") {
            return Ok((host_unreachable(ctx, t, why), 0));
        }
    }
    if let Err(why) = robots.check(url) {
        return Ok((unknown(ctx, t, None, format!("not fetched: {why}")), 0));
    }
    let (client, rules) = ctx.service.http();
    let timeout = Duration::from_secs(ctx.config.timeout_secs);
    let allowed = |u: url::Url| {
        let verdict = robots.check(&u).map_err(|reason| IngestError::Url { url: u.to_string(), reason });
        async move { verdict }
    };
    let fetched = match tokio::time::timeout(timeout, fetch(client, url, rules, allowed)).await {
        Err(_) => return Ok((unknown(ctx, t, None, format!("timed out after {}s", ctx.config.timeout_secs)), 0)),
        Ok(Err(e)) => {
            let status = e.http_status();
            return Ok((
                match status {
                    Some(s @ (404 | 410)) => check(ctx, t, Some(RemovalState::Removed), status, format!("HTTP {s}")),
                    _ if e.is_connect_failure() => host_unreachable(ctx, t, &e.to_string()),
                    _ => unknown(ctx, t, status, e.to_string()),
                },
                0,
            ));
        }
        Ok(Ok(f)) => f,
    };
    let status = Some(fetched.status);
    let Some(stored) = ctx.service.stores().pages.get_page(t.page_id).await? else {
        return Ok((unknown(ctx, t, status, "the stored page is gone".into()), 0));
    };
    // The text as the crawler would store it now.
    let hint = charset_param(&fetched.content_type);
    let format = if fetched.content_type.to_ascii_lowercase().starts_with("text/plain") {
        InputFormat::Text
    } else {
        InputFormat::Auto
    };
    let crawl = &ctx.service.config().crawl;
    let raw = RawPage {
        url: fetched.final_url.as_str(),
        body: fetched.body,
        format,
        charset_hint: hint.as_deref(),
        fetched_at: ctx.now,
        http_status: status,
        source: PageSource::Crawl,
    };
    let limits = ImportLimits { max_page_bytes: crawl.max_page_bytes, ..ImportLimits::default() };
    let built = match decode_page(raw, &limits).and_then(|d| d.build(&crawl.canon)) {
        Ok(b) => b.page,
        Err(e @ (IngestError::Text { .. } | IngestError::Invalid { .. })) => {
            let detail = format!("up (HTTP {}) but no text any more: {e}", fetched.status);
            return Ok((check(ctx, t, Some(RemovalState::Removed), status, detail), 0));
        }
        Err(e) => return Ok((unknown(ctx, t, status, e.to_string()), 0)),
    };
    let hash = zhiwen_evidence::sha256_hex(built.text.as_bytes());
    if built.text == stored.text {
        let detail = format!("up (HTTP {}), as stored; text={hash}", fetched.status);
        return Ok((check(ctx, t, Some(RemovalState::Up), status, detail), 0));
    }
    // The text the last transition saw: the same change seen again is no news (and was
    // verified and captured then).
    if let Some(w) = ctx.service.stores().cases.get_watch(t.page_id).await? {
        if let Some(last) = w.events.last().filter(|e| e.to == w.state && w.state != RemovalState::Removed) {
            if detail_hash(&last.detail) == Some(hash.as_str()) {
                return Ok((check(ctx, t, Some(w.state), status, last.detail.clone()), 0));
            }
        }
    }
    let page = Page {
        body: built.body,
        charset: built.charset,
        text: built.text,
        format: built.format,
        canon_tag: built.canon_tag,
        http_status: status,
        ..stored
    };
    let sections: Vec<i64> = t.matches.iter().map(|&(_, s)| s).collect::<BTreeSet<_>>().into_iter().collect();
    let still = match ctx.matcher.sections_still_copied(page, &sections).await {
        Ok(s) => s,
        Err(e) => return Ok((unknown(ctx, t, status, format!("cannot verify the page: {e}")), 0)),
    };
    if still.is_empty() {
        let detail = format!(
            "up (HTTP {}) but none of its {} matched sections is on it any more; text={hash}",
            fetched.status,
            sections.len()
        );
        return Ok((check(ctx, t, Some(RemovalState::Removed), status, detail), 0));
    }
    // New evidence of each match still carried, queued before the check is recorded so
    // that a crash in between loses no capture (the key makes queueing again a no-op).
    let day = ctx.now.day();
    let mut queued = 0;
    for &(match_id, section_id) in &t.matches {
        if still.contains(&section_id) {
            ctx.service.stores().tasks.create_task(&capture_task(match_id, "recheck", Some(&day))).await?;
            queued += 1;
        }
    }
    let detail = format!(
        "changed (HTTP {}), still carries {} of its {} matched sections; text={hash}",
        fetched.status,
        still.len(),
        sections.len()
    );
    Ok((check(ctx, t, Some(RemovalState::Changed), status, detail), queued))
}

/// Flag, once, every watched page still up or changed whose latest delivered notice went
/// out at least `escalate_after_days` before `now`.
async fn escalate(stores: &Stores, config: &RecheckConfig, now: Timestamp) -> Result<Vec<Flagged>> {
    let latest = delivered_by_page(stores, None).await?;
    let mut flagged = Vec::new();
    let wait = i64::from(config.escalate_after_days) * DAY_MS;
    let mut after = 0;
    loop {
        let watches = stores.cases.list_watches(None, after, PAGE_SIZE).await?;
        let Some((last, _)) = watches.last() else { break };
        after = *last;
        for (_, w) in watches {
            if w.state == RemovalState::Removed || w.flagged_at.is_some() {
                continue;
            }
            let Some(n) = latest.get(&w.page_id).and_then(|ns| ns.last()) else { continue };
            if now.0.saturating_sub(n.sent_at.0) < wait {
                continue;
            }
            if stores.cases.flag_watch(w.page_id, now).await? {
                tracing::info!(page_id = w.page_id, url = %w.url, notice = n.id, "still up after its notice: flagged for a second notice");
                flagged.push(Flagged {
                    page_id: w.page_id,
                    url: w.url.clone(),
                    owner: w.owner.clone(),
                    state: w.state,
                    notice_id: n.id,
                    sent_at: n.sent_at,
                });
            }
        }
    }
    flagged.sort_by_key(|f| f.page_id);
    Ok(flagged)
}

/// A delivered notice as the statistics need it.
#[derive(Debug, Clone)]
struct Delivered {
    id: i64,
    owner: String,
    site: String,
    sent_at: Timestamp,
}

/// The delivered notices (of `owner`, if given) of each page, oldest first.
async fn delivered_by_page(stores: &Stores, owner: Option<&str>) -> Result<HashMap<i64, Vec<Delivered>>> {
    let mut out: HashMap<i64, Vec<Delivered>> = HashMap::new();
    for n in delivered(stores, owner).await? {
        for &p in &n.1 {
            out.entry(p).or_default().push(n.0.clone());
        }
    }
    for ns in out.values_mut() {
        ns.sort_by_key(|n| (n.sent_at, n.id));
    }
    Ok(out)
}

/// Every delivered notice (of `owner`, if given) with its pages, by id.
async fn delivered(stores: &Stores, owner: Option<&str>) -> Result<Vec<(Delivered, Vec<i64>)>> {
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let notices = stores.cases.list_notices(owner, after, PAGE_SIZE).await?;
        let Some(last) = notices.last() else { break };
        after = last.id;
        for n in notices {
            let Some(sent_at) = n.sent_at.filter(|_| n.state.delivered()) else { continue };
            let d = Delivered { id: n.id, owner: n.owner.clone(), site: n.site.clone(), sent_at };
            out.push((d, n.page_ids.clone()));
        }
    }
    Ok(out)
}

// ---------------------------------------------------------------------------------
// Statistics

/// Removal figures of one site, one holder, or all.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct RemovalFigures {
    /// The site (host) or holder these are of; empty for the total.
    pub key: String,
    /// Notices delivered (sent or exported).
    pub notices_delivered: u64,
    /// Distinct pages those notices named.
    pub pages_noticed: u64,
    /// Of those, watched and found removed.
    pub pages_removed: u64,
    /// Of those, watched and still up (up or changed).
    pub pages_still_up: u64,
    /// Of those, not re-checked yet.
    pub pages_unchecked: u64,
    /// `pages_removed / pages_noticed` (`None` with no page noticed).
    pub removal_rate: Option<f64>,
    /// Median hours from a page's first delivered notice to its removal (nearest rank),
    /// over the pages removed after that notice.
    pub median_hours_to_removal: Option<f64>,
    /// 90th percentile of the same (nearest rank).
    pub p90_hours_to_removal: Option<f64>,
    /// Of the pages noticed, those flagged for a second notice.
    pub pages_flagged: u64,
    /// Matches on a domain the holder licensed.
    pub matches_licensed: u64,
    /// Matches confirmed or noticed (infringing).
    pub matches_infringing: u64,
}

/// Removal statistics: in total, per site and per holder (each sorted by key).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RemovalStats {
    /// When they were computed.
    pub at: Timestamp,
    /// Only this holder's.
    pub owner: Option<String>,
    /// Everything.
    pub total: RemovalFigures,
    /// Per site, by host.
    pub by_site: Vec<RemovalFigures>,
    /// Per holder, by owner.
    pub by_holder: Vec<RemovalFigures>,
}

/// The `p`-th percentile (0 < p <= 100) of `sorted` (ascending) by the nearest-rank
/// method: the value of rank `ceil(p / 100 * n)` (1-based); `None` when empty.
pub fn nearest_rank(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() {
        return None;
    }
    let rank = ((p / 100.0) * sorted.len() as f64).ceil().max(1.0) as usize;
    sorted.get(rank.min(sorted.len()) - 1).copied()
}

/// Figures being summed for one key.
#[derive(Default)]
struct Acc {
    notices: BTreeSet<i64>,
    pages: BTreeSet<i64>,
}

/// Removal statistics of `owner` (every holder when `None`) as of `now`: per site and per
/// holder, the notices delivered, pages noticed, removed and still up, the removal rate,
/// the median and 90th percentile hours from a page's first delivered notice to its
/// removal (nearest rank: the value of rank `ceil(p/100 · n)`), the pages flagged, and the
/// licensed and infringing match counts (the store's grouped counts).
pub async fn removal_stats(stores: &Stores, owner: Option<&str>, now: Timestamp) -> Result<RemovalStats> {
    let notices = delivered(stores, owner).await?;
    // Each page's first delivered notice: its site, holder and the start of its clock.
    let mut first: BTreeMap<i64, Delivered> = BTreeMap::new();
    let (mut total, mut sites, mut holders) = (Acc::default(), BTreeMap::<String, Acc>::new(), BTreeMap::new());
    for (n, pages) in &notices {
        for acc in [&mut total, holders.entry(n.owner.clone()).or_default()] {
            acc.notices.insert(n.id);
            acc.pages.extend(pages.iter().copied());
        }

        for &p in pages {
            let slot = first.entry(p).or_insert_with(|| n.clone());
            if (n.sent_at, n.id) < (slot.sent_at, slot.id) {
                *slot = n.clone();
            }
        }
    }
    let mut watches: HashMap<i64, RemovalWatch> = HashMap::new();
    for &p in first.keys() {
        if let Some(w) = stores.cases.get_watch(p).await? {
            watches.insert(p, w);
        }
    }
    // Each page counts for its own site: a notice to a hosting provider names several (a
    // page not checked yet counts for the notice's first site).
    for (n, pages) in &notices {
        for &p in pages {
            let host = watches.get(&p).and_then(|w| url::Url::parse(&w.url).ok()?.host_str().map(str::to_owned));
            let acc = sites.entry(host.unwrap_or_else(|| n.site.clone())).or_default();
            acc.notices.insert(n.id);
            acc.pages.insert(p);
        }
    }
    let figures = |key: &str, acc: &Acc| {
        let mut f = RemovalFigures {
            key: key.to_owned(),
            notices_delivered: acc.notices.len() as u64,
            pages_noticed: acc.pages.len() as u64,
            ..RemovalFigures::default()
        };
        let mut hours = Vec::new();
        for p in &acc.pages {
            let Some(w) = watches.get(p) else {
                f.pages_unchecked += 1;
                continue;
            };
            if w.flagged_at.is_some() {
                f.pages_flagged += 1;
            }
            if w.state == RemovalState::Removed {
                f.pages_removed += 1;
                if let (Some(removed), Some(n)) = (w.removed_at, first.get(p)) {
                    if removed >= n.sent_at {
                        hours.push((removed.0 - n.sent_at.0) as f64 / HOUR_MS as f64);
                    }
                }
            } else {
                f.pages_still_up += 1;
            }
        }
        hours.sort_by(f64::total_cmp);
        f.removal_rate = (f.pages_noticed > 0).then(|| f.pages_removed as f64 / f.pages_noticed as f64);
        f.median_hours_to_removal = nearest_rank(&hours, 50.0);
        f.p90_hours_to_removal = nearest_rank(&hours, 90.0);
        f
    };
    let mut stats = RemovalStats {
        at: now,
        owner: owner.map(str::to_owned),
        total: figures("", &total),
        by_site: sites.iter().map(|(k, a)| figures(k, a)).collect(),
        by_holder: holders.iter().map(|(k, a)| figures(k, a)).collect(),
    };
    // Match counts by status: in total, per site (one grouped count per status), per holder.
    let q = |status: Option<ReviewStatus>, owner: Option<&str>| MatchQuery {
        owner: owner.map(str::to_owned),
        status,
        ..MatchQuery::default()
    };
    let (licensed, infringing) = split(&stores.queries.group_matches(&q(None, owner), MatchGroup::Status).await?);
    (stats.total.matches_licensed, stats.total.matches_infringing) = (licensed, infringing);
    let mut per_site: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    for status in [ReviewStatus::Licensed, ReviewStatus::Confirmed, ReviewStatus::TakedownSent] {
        for (site, n) in stores.queries.group_matches(&q(Some(status), owner), MatchGroup::Site).await? {
            let slot = per_site.entry(site).or_default();
            if status == ReviewStatus::Licensed {
                slot.0 += n;
            } else {
                slot.1 += n;
            }
        }
    }
    for (site, (licensed, infringing)) in per_site {
        match stats.by_site.binary_search_by(|f| f.key.as_str().cmp(&site)) {
            Ok(i) => (stats.by_site[i].matches_licensed, stats.by_site[i].matches_infringing) = (licensed, infringing),
            Err(i) => stats.by_site.insert(
                i,
                RemovalFigures {
                    key: site,
                    matches_licensed: licensed,
                    matches_infringing: infringing,
                    ..Default::default()
                },
            ),
        }
    }
    let owners: BTreeSet<String> = match owner {
        Some(o) => [o.to_owned()].into(),
        None => stats
            .by_holder
            .iter()
            .map(|f| f.key.clone())
            .chain(stores.cases.list_holders().await?.into_iter().map(|h| h.owner))
            .collect(),
    };
    for o in owners {
        let (licensed, infringing) =
            split(&stores.queries.group_matches(&q(None, Some(&o)), MatchGroup::Status).await?);
        match stats.by_holder.binary_search_by(|f| f.key.as_str().cmp(&o)) {
            Ok(i) => {
                (stats.by_holder[i].matches_licensed, stats.by_holder[i].matches_infringing) = (licensed, infringing)
            }
            Err(i) => stats.by_holder.insert(
                i,
                RemovalFigures {
                    key: o,
                    matches_licensed: licensed,
                    matches_infringing: infringing,
                    ..Default::default()
                },
            ),
        }
    }
    Ok(stats)
}

/// (licensed, infringing) of counts grouped by status.
fn split(groups: &[(String, u64)]) -> (u64, u64) {
    let count = |s: ReviewStatus| groups.iter().filter(|(k, _)| k == s.as_str()).map(|(_, n)| n).sum::<u64>();
    (count(ReviewStatus::Licensed), count(ReviewStatus::Confirmed) + count(ReviewStatus::TakedownSent))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank_percentiles() {
        assert_eq!(nearest_rank(&[], 50.0), None);
        assert_eq!(nearest_rank(&[3.0], 90.0), Some(3.0));
        let v: Vec<f64> = (1..=10).map(f64::from).collect();
        assert_eq!(nearest_rank(&v, 50.0), Some(5.0));
        assert_eq!(nearest_rank(&v, 90.0), Some(9.0));
        assert_eq!(nearest_rank(&v[..4], 50.0), Some(2.0));
        assert_eq!(nearest_rank(&v[..4], 90.0), Some(4.0));
    }

    #[test]
    fn the_text_hash_is_read_back_from_a_detail() {
        let h = "ab".repeat(32);
        assert_eq!(detail_hash(&format!("up (HTTP 200); text={h}")), Some(h.as_str()));
        assert_eq!(detail_hash("HTTP 404"), None);
        assert_eq!(detail_hash("text=xyz"), None);
    }

    #[test]
    fn the_config_is_checked_and_read_strictly() {
        assert!(RecheckConfig::default().validate().is_ok());
        assert!(RecheckConfig { every_hours: 0, ..RecheckConfig::default() }.validate().is_err());
        assert!(RecheckConfig { concurrency: 0, ..RecheckConfig::default() }.validate().is_err());
        let c: RecheckConfig = serde_json::from_str(r#"{"every_hours": 6}"#).expect("reads");
        assert_eq!((c.every_hours, c.escalate_after_days, c.enabled), (6, 7, true));
        assert!(serde_json::from_str::<RecheckConfig>(r#"{"every_hour": 6}"#).is_err());
    }
}
