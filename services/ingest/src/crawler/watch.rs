//! The watch pass: re-visit the entry points of the watched sites
//! ([`zhiwen_store::WatchedSite`]) that are due, with conditional requests, and fetch at
//! once the chapter links they list that are not stored yet.
//!
//! Everything goes through the crawler's own parts: its HTTP client and fetch rules (the
//! [`AddressPolicy`](super::AddressPolicy) on every hop, the size cap, timeouts,
//! redirects), robots.txt, and its page processing, so a page a watch pass stores lands
//! exactly as a crawled one. The pass returns the ids of the pages it stored new or
//! changed, and tells [`Arrivals`] of them as each site's visit ends (at most every
//! `arrival_interval`, the rest at the end of the pass): the caller
//! queues their matching (the matcher is not a dependency of the ingest).
//! [`Watcher::run_until`] is the one loop of passes, for `zhiwen serve` and
//! `zhiwen crawl --watch` alike.
//!
//! The schedule adapts per entry point: a visit that found new links, or found that the
//! pages the visit before stored were matched since (copies), halves its interval (down
//! to a floor: the minimum interval, and never below the site's politeness budget), a
//! visit that found nothing doubles it (up to the maximum). The store keeps it, so a
//! restart continues where the schedule was.
//!
//! Several processes may watch the same sites: a host's sites are visited only while the
//! process holds the host's lease ([`HostLeases`]: in Redis when processes share one,
//! in memory otherwise), renewed while the visit runs. The politeness budget (when this
//! process last asked a host) is per process; across processes the lease keeps two of
//! them from asking one host at once, and the stored schedule, read again once the lease
//! is held, keeps the next holder from visiting again an entry point the last one has
//! just visited. (Only an entry point of the same host that falls due in the moment
//! between can be asked sooner than the budget after the other process's last request.)

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use futures::StreamExt;
use quick_xml::encoding::Decoder;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use url::Url;
use zhiwen_core::canon;
use zhiwen_store::{Stores, Timestamp, Visit, WatchedSite};

use super::fetch::{fetch_conditional, Conditional, FetchRules, Validators};
use super::frontier::Entry;
use super::lease::{HostLeases, Lease, LocalLeases};
use super::robots::parse_sitemap;
use super::{http_client, page_links, process, CrawlConfig, Done, Shared};
use crate::error::{IngestError, Result};
use crate::pages::charset_param;
use crate::url as zurl;

/// How the watch pass runs.
#[derive(Debug, Clone)]
pub struct WatchConfig {
    /// The crawler's settings used by the pass: User-Agent, robots.txt token, address
    /// policy, timeouts, retries, size caps, canonicalisation. Its `per_host_delay` is
    /// the politeness budget of a site that sets none.
    pub crawl: CrawlConfig,
    /// Shortest interval between two visits of one entry point.
    pub min_interval: Duration,
    /// Longest interval between two visits of one entry point.
    pub max_interval: Duration,
    /// Most new links fetched per visit of an entry point (the rest at the next visit,
    /// which is then a full request, not a conditional one).
    pub max_new_per_visit: usize,
    /// Sites visited at once (one request at a time per host in any case).
    pub concurrency: usize,
    /// How long a host's robots.txt is trusted before it is read again.
    pub robots_ttl: Duration,
    /// Time to live of a host lease: how long a process that dies holding a host keeps
    /// the other processes from it. A visit renews its lease every third of it.
    pub lease_ttl: Duration,
    /// The least time between two hand-overs of stored pages to [`Arrivals`] within a
    /// pass (each one queues a matching task, whose fixed cost is paid per task): pages
    /// stored sooner wait for the next site's visit to end after it, or for the end of
    /// the pass, which hands over whatever is left.
    pub arrival_interval: Duration,
}

impl Default for WatchConfig {
    fn default() -> Self {
        WatchConfig {
            crawl: CrawlConfig { follow_sitemaps: false, max_depth: 0, ..CrawlConfig::default() },
            // A revisit of an index page or feed that has not changed is a conditional
            // request answered `304` (no body); 15 s keeps a busy site's new chapters
            // within a minute of their publication (docs/benchmarks.md, issue #29), and
            // the interval doubles after every visit that finds nothing.
            min_interval: Duration::from_secs(15),
            max_interval: Duration::from_secs(6 * 3600),
            max_new_per_visit: 200,
            // Sites, not requests to one site: each host still gets one request at a
            // time and its politeness budget between two. A pass over 100 busy sites
            // takes about (new pages x budget) / concurrency, so this bounds the
            // pages per second the watcher keeps up with (~32 at a 1 s budget).
            concurrency: 32,
            robots_ttl: Duration::from_secs(3600),
            lease_ttl: Duration::from_secs(60),
            arrival_interval: Duration::from_secs(2),
        }
    }
}

/// What one watch pass did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct WatchSummary {
    /// Entry points visited.
    pub visits: u64,
    /// Of them, answered `304 Not Modified`.
    pub not_modified: u64,
    /// Links not stored before that the visits found (on the site's host, matching its
    /// chapter patterns).
    pub new_links: u64,
    /// Ids of the pages stored new or changed: what to match.
    pub stored: Vec<i64>,
    /// URLs robots.txt forbids (not fetched).
    pub disallowed: Vec<String>,
    /// URLs that failed, with the reason (a host whose lease could not be asked for:
    /// the host, and Redis' error).
    pub failed: Vec<(String, String)>,
    /// Due sites left to the process that holds their host's lease.
    pub held_elsewhere: u64,
    /// When the next pass has something to do, as far as this pass knows: the earliest
    /// `next_visit` of the entry points that were not due, and `min_interval` after the
    /// pass's start for those that were (visited here, held by another process, failed).
    /// `None`: nothing is watched.
    pub next_due: Option<Timestamp>,
}

impl WatchSummary {
    /// Add `other`'s counts and lists to these.
    fn absorb(&mut self, other: WatchSummary) {
        self.visits += other.visits;
        self.not_modified += other.not_modified;
        self.new_links += other.new_links;
        self.stored.extend(other.stored);
        self.disallowed.extend(other.disallowed);
        self.failed.extend(other.failed);
        self.held_elsewhere += other.held_elsewhere;
    }
}

/// Told of the pages a site's visit stored as soon as that visit ends, not when the whole
/// pass does, so that their matching starts while other hosts are still being visited
/// (the matcher is above the ingest: the caller says what "queue their matching" means).
/// At most once per [`WatchConfig::arrival_interval`] within a pass, then once more at
/// its end with what is left.
pub trait Arrivals: Send + Sync {
    /// `pages` (ids) were stored new or changed.
    fn arrived<'a>(&'a self, pages: &'a [i64]) -> BoxFuture<'a, ()>;
}

/// How often [`Watcher::run_until`] looks at the schedule when nothing is due sooner
/// (a site added meanwhile is seen within it).
pub const WATCH_POLL: Duration = Duration::from_secs(5);

/// The least time between two passes of [`Watcher::run_until`].
const PASS_GAP: Duration = Duration::from_secs(1);

impl std::fmt::Display for WatchSummary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "visited {} entry points ({} not modified), new links {}, stored {}, disallowed {}, failed {}, held elsewhere {}",
            self.visits,
            self.not_modified,
            self.new_links,
            self.stored.len(),
            self.disallowed.len(),
            self.failed.len(),
            self.held_elsewhere
        )
    }
}

/// Runs watch passes. Keep one for the life of the process: it remembers when each host
/// was last asked (the politeness budget holds across passes) and its robots.txt.
pub struct Watcher {
    config: WatchConfig,
    stores: Stores,
    shared: Mutex<(Arc<Shared>, Instant)>,
    client: reqwest::Client,
    rules: FetchRules,
    hosts: Mutex<HashMap<String, Arc<tokio::sync::Mutex<Option<Instant>>>>>,
    leases: Arc<dyn HostLeases>,
    arrivals: Option<Arc<dyn Arrivals>>,
    /// Pages stored and not handed over yet, and when the last hand-over was.
    pending: Mutex<(Vec<i64>, Option<Instant>)>,
}

impl std::fmt::Debug for Watcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watcher").field("config", &self.config).finish_non_exhaustive()
    }
}

/// What one visit of an entry point did.
#[derive(Default)]
struct VisitResult {
    not_modified: bool,
    new_links: u64,
    truncated: bool,
    validators: Validators,
    outcome: String,
    stored: Vec<i64>,
    disallowed: Vec<String>,
    failed: Vec<(String, String)>,
    delay: Duration,
    /// The host's lease was lost before the visit ended: it stopped, nothing is recorded.
    lost: bool,
}

impl Watcher {
    /// A watcher storing into `stores`.
    pub fn new(config: WatchConfig, stores: Stores) -> Result<Self> {
        if config.concurrency == 0 || config.max_new_per_visit == 0 {
            return Err(IngestError::Config("watch concurrency and links per visit must be at least 1".into()));
        }
        if config.min_interval.is_zero() || config.max_interval < config.min_interval {
            return Err(IngestError::Config("watch intervals: 0 < minimum <= maximum".into()));
        }
        if config.lease_ttl < Duration::from_millis(30) {
            return Err(IngestError::Config("watch host lease ttl: at least 30 ms".into()));
        }
        let mut crawl = config.crawl.clone();
        // Only the pages themselves: links are chosen by the pass, sitemaps are entry points.
        crawl.follow_sitemaps = false;
        crawl.max_depth = 0;
        crawl.refetch_stored = false;
        let config = WatchConfig { crawl, ..config };
        let (client, rules) = http_client(&config.crawl)?;
        let shared = Self::shared(&config, &stores, &client, &rules);
        Ok(Watcher {
            shared: Mutex::new((shared, Instant::now())),
            config,
            stores,
            client,
            rules,
            hosts: Mutex::new(HashMap::new()),
            leases: Arc::new(LocalLeases::new()),
            arrivals: None,
            pending: Mutex::new((Vec::new(), None)),
        })
    }

    /// Take host leases from `leases` ([`RedisLeases`](super::lease::RedisLeases) where
    /// several processes watch) instead of this process's memory.
    pub fn with_leases(mut self, leases: Arc<dyn HostLeases>) -> Self {
        self.leases = leases;
        self
    }

    /// Tell `arrivals` of the pages each site's visit stores, as soon as it ends.
    pub fn with_arrivals(mut self, arrivals: Arc<dyn Arrivals>) -> Self {
        self.arrivals = Some(arrivals);
        self
    }

    /// Run passes until `stop` is cancelled: each as soon as an entry point is due as the
    /// last pass saw the schedule ([`WatchSummary::next_due`]; at most [`WATCH_POLL`]
    /// apart, at least a second), `on_pass` told of each pass that did
    /// something. A pass that fails (the store unreachable) is logged and tried again at
    /// the next poll. In-flight fetches are abandoned at `stop`: what was stored stays,
    /// an entry point whose visit was not recorded is visited again.
    pub async fn run_until(&self, stop: &CancellationToken, mut on_pass: impl FnMut(&WatchSummary)) {
        while !stop.is_cancelled() {
            let pass = tokio::select! {
                r = self.pass(Timestamp::now()) => r,
                () = stop.cancelled() => break,
            };
            // The schedule as the pass read it, not read again: a host another process
            // holds is not asked for again until the other's visit has moved it on.
            let next = match pass {
                Ok(summary) => {
                    if summary.visits > 0 || !summary.failed.is_empty() {
                        on_pass(&summary);
                    }
                    summary.next_due
                }
                Err(e) => {
                    tracing::error!(error = %e, "watch pass failed");
                    None
                }
            };
            let wait = next.map_or(WATCH_POLL, |t| {
                Duration::from_millis(u64::try_from(t.0.saturating_sub(Timestamp::now().0)).unwrap_or(0))
            });
            tokio::select! {
                () = tokio::time::sleep(wait.clamp(PASS_GAP, WATCH_POLL)) => {}
                () = stop.cancelled() => break,
            }
        }
    }

    fn shared(config: &WatchConfig, stores: &Stores, client: &reqwest::Client, rules: &FetchRules) -> Arc<Shared> {
        Arc::new(Shared {
            config: config.crawl.clone(),
            stores: stores.clone(),
            client: client.clone(),
            rules: rules.clone(),
            robots: Mutex::new(HashMap::new()),
            sitemaps_done: Mutex::new(HashSet::new()),
            allowed_domains: Vec::new(),
        })
    }

    /// The crawler state of this pass: robots.txt read again once `robots_ttl` passed.
    fn current_shared(&self) -> Arc<Shared> {
        let mut guard = self.shared.lock().unwrap_or_else(|p| p.into_inner());
        if guard.1.elapsed() >= self.config.robots_ttl {
            *guard = (Self::shared(&self.config, &self.stores, &self.client, &self.rules), Instant::now());
        }
        guard.0.clone()
    }

    /// Visit every entry point due at `now` (its `next_visit` at or before it) and fetch
    /// the new chapter links they list; the schedule of each visited entry point is
    /// recorded with `now` as the time of the visit.
    pub async fn pass(&self, now: Timestamp) -> Result<WatchSummary> {
        let sites = self.stores.cases.list_watched_sites(None).await?;
        let shared = self.current_shared();
        let floor =
            Timestamp(now.0.saturating_add(i64::try_from(self.config.min_interval.as_millis()).unwrap_or(i64::MAX)));
        let next_due = sites
            .iter()
            .flat_map(|s| s.entry_points.iter().map(|e| if e.next_visit <= now { floor } else { e.next_visit }))
            .min();
        let due: Vec<WatchedSite> =
            sites.into_iter().filter(|s| s.entry_points.iter().any(|e| e.next_visit <= now)).collect();
        // One unit of work per host: its sites are visited one after the other under one lease.
        let mut hosts: BTreeMap<String, Vec<WatchedSite>> = BTreeMap::new();
        for site in due {
            hosts.entry(site.host.clone()).or_default().push(site);
        }
        let results: Vec<Result<WatchSummary>> = futures::stream::iter(hosts)
            .map(|(host, sites)| {
                let shared = shared.clone();
                async move { self.visit_host(&shared, &host, &sites, now).await }
            })
            .buffer_unordered(self.config.concurrency)
            .collect()
            .await;
        // Whatever the pass stored and has not handed over yet, also when a host failed.
        self.hand_over(&[], true).await;
        let mut summary = WatchSummary { next_due, ..WatchSummary::default() };
        for r in results {
            summary.absorb(r?);
        }
        summary.stored.sort_unstable();
        summary.stored.dedup();
        Ok(summary)
    }

    /// Visit the due `sites` of `host` while holding its lease: none when another process
    /// holds it, or when the lease cannot be asked for (logged, the pass goes on).
    async fn visit_host(
        &self,
        shared: &Arc<Shared>,
        host: &str,
        sites: &[WatchedSite],
        now: Timestamp,
    ) -> Result<WatchSummary> {
        let ttl = self.config.lease_ttl;
        let lease = match self.leases.acquire(host, ttl).await {
            Ok(Some(lease)) => lease,
            Ok(None) => {
                tracing::debug!(host, "watched host held by another process");
                return Ok(WatchSummary { held_elsewhere: sites.len() as u64, ..WatchSummary::default() });
            }
            Err(e) => {
                tracing::error!(host, error = %e, "cannot take the lease of a watched host; its sites are skipped");
                return Ok(WatchSummary { failed: vec![(host.to_owned(), e.to_string())], ..WatchSummary::default() });
            }
        };
        let lost = CancellationToken::new();
        let visits = async {
            let mut summary = WatchSummary::default();
            for site in sites {
                if lost.is_cancelled() {
                    break;
                }
                let s = self.visit_site(shared, site, now, &lost).await?;
                self.hand_over(&s.stored, false).await;
                summary.absorb(s);
            }
            Ok(summary)
        };
        let result = {
            tokio::pin!(visits);
            tokio::select! {
                r = &mut visits => r,
                () = self.keep(&lease, &lost) => visits.await,
            }
        };
        if !lost.is_cancelled() {
            if let Err(e) = self.leases.release(&lease).await {
                tracing::warn!(host, error = %e, "cannot give back a watched host's lease; it expires on its own");
            }
        }
        result
    }

    /// Hand `stored` to [`Arrivals`] with the pages still pending, when `arrival_interval`
    /// has passed since the last hand-over (or `now_anyway`, at the end of a pass).
    async fn hand_over(&self, stored: &[i64], now_anyway: bool) {
        let Some(arrivals) = &self.arrivals else { return };
        let batch = {
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            pending.0.extend_from_slice(stored);
            let due = now_anyway || pending.1.is_none_or(|t| t.elapsed() >= self.config.arrival_interval);
            if pending.0.is_empty() || !due {
                return;
            }
            pending.1 = Some(Instant::now());
            std::mem::take(&mut pending.0)
        };
        arrivals.arrived(&batch).await;
    }

    /// Renew `lease` every third of its ttl; returns once it is lost (or cannot be
    /// renewed: another process may take it when it expires), with `lost` cancelled.
    async fn keep(&self, lease: &Lease, lost: &CancellationToken) {
        let ttl = self.config.lease_ttl;
        loop {
            tokio::time::sleep(ttl / 3).await;
            match self.leases.renew(lease, ttl).await {
                Ok(true) => {}
                Ok(false) => {
                    tracing::warn!(host = %lease.host, "watched host's lease lost; the visit stops");
                    break;
                }
                Err(e) => {
                    tracing::error!(host = %lease.host, error = %e, "cannot renew a watched host's lease; the visit stops");
                    break;
                }
            }
        }
        lost.cancel();
    }

    /// Visit the entry points of `site` due at `now`, as the store has them now: read
    /// again under the lease, so that what another process visited meanwhile is not due.
    async fn visit_site(
        &self,
        shared: &Arc<Shared>,
        site: &WatchedSite,
        now: Timestamp,
        lost: &CancellationToken,
    ) -> Result<WatchSummary> {
        let mut summary = WatchSummary::default();
        let Some(site) = self.stores.cases.get_watched_site(&site.id).await? else {
            return Ok(summary);
        };
        let site = &site;
        // Validated when stored; a pattern this build cannot compile skips the site alone.
        let patterns = match chapter_patterns(site) {
            Ok(p) => p,
            Err(e) => {
                tracing::error!(site = %site.id, error = %e, "watched site skipped");
                summary.failed.push((site.id.clone(), e.to_string()));
                return Ok(summary);
            }
        };
        for entry in site.entry_points.iter().filter(|e| e.next_visit <= now) {
            let validators = Validators {
                etag: entry.etag.clone().filter(|v| !v.is_empty()),
                last_modified: entry.last_modified.clone().filter(|v| !v.is_empty()),
            };
            if lost.is_cancelled() {
                break;
            }
            let copies = self.copies_found(&entry.recent_pages).await;
            let r = self.visit_entry(shared, site, &entry.url, &validators, &patterns, lost).await;
            if r.lost {
                // Its holder now visits the entry point again (what was stored stays).
                summary.stored.extend(&r.stored);
                tracing::warn!(site = %site.id, entry = %entry.url, "watched entry point's visit stopped: host lease lost");
                break;
            }
            summary.visits += 1;
            summary.not_modified += u64::from(r.not_modified);
            summary.new_links += r.new_links;
            summary.stored.extend(&r.stored);
            summary.disallowed.extend(r.disallowed.iter().cloned());
            summary.failed.extend(r.failed.iter().cloned());
            let interval = next_interval(
                Duration::from_secs(entry.interval_secs),
                r.new_links > 0 || r.truncated || copies,
                self.config.min_interval.max(r.delay),
                self.config.max_interval,
            );
            // A visit that left links for later forgets the validators: the next one must
            // read the page again, not be told it is unchanged.
            let keep = !r.truncated;
            let visit = Visit {
                at: now,
                interval_secs: interval.as_secs(),
                not_modified: r.not_modified,
                new_links: r.new_links,
                copies,
                pages: r.stored.clone(),
                etag: if keep { r.validators.etag.clone() } else { None },
                last_modified: if keep { r.validators.last_modified.clone() } else { None },
                outcome: r.outcome.clone(),
            };
            self.stores.cases.record_visit(&site.id, &entry.url, &visit).await?;
            tracing::info!(site = %site.id, entry = %entry.url, outcome = %r.outcome, next_in_secs = interval.as_secs(), "watched entry point visited");
        }
        Ok(summary)
    }

    /// Were any of `pages` (stored by an entry point's visit before) matched since? A
    /// store error counts as no.
    async fn copies_found(&self, pages: &[i64]) -> bool {
        if pages.is_empty() {
            return false;
        }
        match self.stores.matches.matched_pages(pages).await {
            Ok(matched) => !matched.is_empty(),
            Err(e) => {
                tracing::warn!(pages = pages.len(), error = %e, "cannot look for the matches of a watched entry point's pages");
                false
            }
        }
    }

    /// Wait for the politeness budget of `host`, then hold it for one request: `false`
    /// (no request) when the host's lease was lost meanwhile.
    async fn polite(&self, host: &str, delay: Duration, lost: &CancellationToken) -> bool {
        let slot = {
            let mut hosts = self.hosts.lock().unwrap_or_else(|p| p.into_inner());
            hosts.entry(host.to_owned()).or_default().clone()
        };
        let mut last = slot.lock().await;
        if let Some(at) = *last {
            tokio::time::sleep_until(at + delay).await;
        }
        if lost.is_cancelled() {
            return false;
        }
        *last = Some(Instant::now());
        true
    }

    async fn visit_entry(
        &self,
        shared: &Arc<Shared>,
        site: &WatchedSite,
        url: &str,
        validators: &Validators,
        patterns: &[regex::Regex],
        lost: &CancellationToken,
    ) -> VisitResult {
        let mut r = VisitResult::default();
        let base_delay = site.min_delay_secs.map_or(self.config.crawl.per_host_delay, Duration::from_secs);
        r.delay = base_delay;
        let url = match zurl::normalize(url) {
            Ok(u) => u,
            Err(e) => return r.fail(url, e),
        };
        let robots = match shared.robots_for(&url).await {
            Ok(robots) => robots,
            Err(e) => return r.fail(url.as_str(), e),
        };
        let delay = robots.crawl_delay().map_or(base_delay, |d| d.max(base_delay));
        r.delay = delay;
        if let Err(why) = robots.check(&url) {
            r.disallowed.push(url.to_string());
            r.outcome = format!("not visited: {why}");
            return r;
        }
        let host = zurl::host_key(&url);
        if !self.polite(&host, delay, lost).await {
            r.lost = true;
            return r;
        }
        let rules = FetchRules { pages_only: false, ..shared.rules.clone() };
        let robots_hop = robots.clone();
        let allowed = move |u: Url| {
            let robots = robots_hop.clone();
            async move {
                // Entry points redirect within their host; another host is not followed.
                robots
                    .check(&u)
                    .map_err(|why| IngestError::Url { url: u.to_string(), reason: format!("redirect target {why}") })
            }
        };
        let fetched = match fetch_conditional(&shared.client, &url, &rules, validators, allowed).await {
            Ok(Conditional::NotModified) => {
                r.not_modified = true;
                r.outcome = "304 not modified".into();
                return r;
            }
            Ok(Conditional::Fetched(f)) => f,
            Err(e) => return r.fail(url.as_str(), e),
        };
        let links = entry_links(&fetched.final_url, &fetched.content_type, &fetched.body);
        let mut candidates = Vec::new();
        let mut seen = HashSet::new();
        for link in links {
            if zurl::host_key(&link) != site.host || !seen.insert(link.to_string()) {
                continue;
            }
            if !patterns.is_empty() && !patterns.iter().any(|p| p.is_match(link.as_str())) {
                continue;
            }
            candidates.push(link);
        }
        // The links fetched before, in one read (an index page lists tens of chapters,
        // most of them stored), compared as the store keys them (a link it cannot key is
        // left to the fetch, which reports it). If the read fails, the visit fails before
        // the validators are kept: the next visit reads the page again rather than hear
        // that it is unchanged.
        let keyed: Vec<(Url, Option<String>)> = candidates
            .into_iter()
            .map(|link| {
                let key = zhiwen_store::normalize_url(link.as_str()).ok().map(|(u, _)| u);
                (link, key)
            })
            .collect();
        let keys: Vec<String> = keyed.iter().filter_map(|(_, k)| k.clone()).collect();
        let stored = match self.stores.pages.stored_urls(&keys).await {
            Ok(stored) => stored,
            Err(e) => return r.fail(url.as_str(), e),
        };
        r.validators = Validators::of(&fetched.headers);
        let mut new: Vec<Url> = keyed
            .into_iter()
            .filter(|(_, key)| !key.as_ref().is_some_and(|k| stored.contains(k)))
            .map(|(link, _)| link)
            .collect();
        r.new_links = new.len() as u64;
        if new.len() > self.config.max_new_per_visit {
            new.truncate(self.config.max_new_per_visit);
            r.truncated = true;
        }
        for link in new {
            if let Err(why) = robots.check(&link) {
                r.disallowed.push(link.to_string());
                tracing::debug!(url = %link, why, "chapter link disallowed by robots.txt");
                continue;
            }
            if !self.polite(&host, delay, lost).await {
                r.lost = true;
                return r;
            }
            let result = process(shared.clone(), Entry { id: 0, url: link.to_string(), depth: 0 }).await;
            match result.done {
                Done::Stored { outcome, page_id, .. } => {
                    if outcome != zhiwen_store::Outcome::Unchanged {
                        r.stored.push(page_id);
                    }
                }
                Done::AlreadyStored { .. } => {}
                Done::Disallowed(_) => r.disallowed.push(link.to_string()),
                Done::Failed(e) => r.failed.push((link.to_string(), e.to_string())),
            }
        }
        r.outcome = format!("{}: {} new, {} stored", fetched.status, r.new_links, r.stored.len());
        r
    }
}

impl VisitResult {
    fn fail(mut self, url: &str, e: impl std::fmt::Display) -> Self {
        self.outcome = format!("failed: {e}");
        self.failed.push((url.to_owned(), e.to_string()));
        self
    }
}

/// The compiled chapter patterns of `site` (validated when it was stored).
fn chapter_patterns(site: &WatchedSite) -> Result<Vec<regex::Regex>> {
    site.chapter_patterns
        .iter()
        .map(|p| {
            regex::RegexBuilder::new(p)
                .size_limit(1 << 20)
                .build()
                .map_err(|e| IngestError::Config(format!("watched site {}: chapter pattern {p:?}: {e}", site.id)))
        })
        .collect()
}

/// The interval after a visit: halved when it found something (never below `floor`),
/// doubled when not (never above `max`); the first interval is `floor`.
pub fn next_interval(current: Duration, found: bool, floor: Duration, max: Duration) -> Duration {
    let max = max.max(floor);
    if current.is_zero() {
        return if found { floor } else { (floor * 2).min(max) };
    }
    if found {
        (current / 2).max(floor).min(max)
    } else {
        current.saturating_mul(2).clamp(floor, max)
    }
}

/// What an entry point's body is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum EntryKind {
    Html,
    Sitemap,
    Feed,
}

fn entry_kind(content_type: &str, body: &[u8]) -> EntryKind {
    let head = String::from_utf8_lossy(&body[..body.len().min(2048)]).to_ascii_lowercase();
    let ctype = content_type.to_ascii_lowercase();
    if head.contains("<rss") || head.contains("<feed") || head.contains("<rdf:rdf") {
        EntryKind::Feed
    } else if head.contains("<urlset") || head.contains("<sitemapindex") || body.starts_with(&[0x1f, 0x8b]) {
        EntryKind::Sitemap
    } else if ctype.starts_with("text/plain") {
        // A plain list of URLs, one a line (a text sitemap).
        EntryKind::Sitemap
    } else {
        EntryKind::Html
    }
}

/// The links an entry point lists: the `<a href>` of a page, the `<loc>` of a sitemap
/// (a sitemap index's children are not followed: list the sitemaps themselves as entry
/// points), the item links of an RSS or Atom feed; resolved against `base`, normalised.
fn entry_links(base: &Url, content_type: &str, body: &[u8]) -> Vec<Url> {
    match entry_kind(content_type, body) {
        EntryKind::Feed => feed_links(body).iter().filter_map(|l| zurl::resolve(base, l)).collect(),
        EntryKind::Sitemap => parse_sitemap(body).0.iter().filter_map(|l| zurl::resolve(base, l)).collect(),
        EntryKind::Html => {
            let hint = charset_param(content_type);
            match canon::decode(body, hint.as_deref()) {
                Ok(decoded) => page_links(base, &decoded.text),
                Err(_) => Vec::new(),
            }
        }
    }
}

/// The item links of an RSS 2.0, RSS 1.0 (RDF) or Atom feed: `<item><link>` text (RSS),
/// `<entry><link href>` (Atom; `rel="alternate"` or no `rel`), and the `rdf:about` of
/// RSS 1.0 items. Read with quick-xml, tolerant of a broken tail (what was read stays).
pub fn feed_links(body: &[u8]) -> Vec<String> {
    use quick_xml::events::Event;
    let text = String::from_utf8_lossy(body);
    let mut reader = quick_xml::Reader::from_str(&text);
    let decoder = reader.decoder();
    let mut links = Vec::new();
    let mut in_item = 0u32;
    let mut in_link = false;
    let mut current = String::new();
    loop {
        match reader.read_event() {
            Ok(Event::Start(e)) => {
                let name = e.local_name();
                match name.as_ref() {
                    b"item" | b"entry" => {
                        in_item += 1;
                        if let Some(about) = attr(&e, b"about", decoder) {
                            links.push(about);
                        }
                    }
                    b"link" if in_item > 0 => {
                        if let Some(href) = atom_href(&e, decoder) {
                            links.push(href);
                        } else {
                            in_link = true;
                            current.clear();
                        }
                    }
                    _ => {}
                }
            }
            Ok(Event::Empty(e)) => {
                if e.local_name().as_ref() == b"link" && in_item > 0 {
                    if let Some(href) = atom_href(&e, decoder) {
                        links.push(href);
                    }
                }
            }
            Ok(Event::Text(t)) if in_link => {
                if let Ok(s) = t.decode() {
                    current.push_str(&s);
                }
            }
            Ok(Event::CData(t)) if in_link => {
                if let Ok(s) = t.decode() {
                    current.push_str(&s);
                }
            }
            Ok(Event::GeneralRef(r)) if in_link => {
                if let Ok(Some(c)) = r.resolve_char_ref() {
                    current.push(c);
                } else if let Ok(name) = r.decode() {
                    if let Some(s) = quick_xml::escape::resolve_predefined_entity(&name) {
                        current.push_str(s);
                    }
                }
            }
            Ok(Event::End(e)) => match e.local_name().as_ref() {
                b"item" | b"entry" => in_item = in_item.saturating_sub(1),
                b"link" if in_link => {
                    in_link = false;
                    let l = current.trim();
                    if !l.is_empty() {
                        links.push(l.to_owned());
                    }
                }
                _ => {}
            },
            Ok(Event::Eof) | Err(_) => break,
            Ok(_) => {}
        }
    }
    links
}

fn attr(e: &quick_xml::events::BytesStart<'_>, local: &[u8], decoder: Decoder) -> Option<String> {
    e.attributes()
        .flatten()
        .find(|a| a.key.local_name().as_ref() == local)
        // (`decode_and_unescape_value`: the one that exists with and without quick-xml's
        // `encoding` feature, which another crate of the workspace turns on.)
        .and_then(|a| a.decode_and_unescape_value(decoder).ok().map(|v| v.trim().to_owned()))
        .filter(|v| !v.is_empty())
}

/// The `href` of an Atom `<link>` pointing at the entry itself (`rel` absent or
/// `alternate`).
fn atom_href(e: &quick_xml::events::BytesStart<'_>, decoder: Decoder) -> Option<String> {
    let rel = attr(e, b"rel", decoder);
    if rel.as_deref().is_some_and(|r| r != "alternate") {
        return None;
    }
    attr(e, b"href", decoder)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn feeds_list_their_item_links() {
        let rss = br#"<?xml version="1.0"?><rss version="2.0"><channel><link>http://a/</link>
            <item><title>1</title><link>http://a/book/1.html?x=1&amp;y=2</link></item>
            <item><link><![CDATA[/book/2.html]]></link></item></channel></rss>"#;
        assert_eq!(feed_links(rss), ["http://a/book/1.html?x=1&y=2", "/book/2.html"]);
        let atom = br#"<feed xmlns="http://www.w3.org/2005/Atom"><link href="http://a/"/>
            <entry><link rel="self" href="http://a/x.atom"/><link href="http://a/book/3.html"/></entry>
            <entry><link rel="alternate" href="http://a/book/4.html"></link></entry></feed>"#;
        assert_eq!(feed_links(atom), ["http://a/book/3.html", "http://a/book/4.html"]);
        let rdf = br#"<rdf:RDF xmlns:rdf="r" xmlns="http://purl.org/rss/1.0/"><item rdf:about="http://a/5"><link>http://a/5</link></item></rdf:RDF>"#;
        assert_eq!(feed_links(rdf), ["http://a/5", "http://a/5"]);
        // A broken tail keeps what was read.
        assert_eq!(feed_links(b"<rss><item><link>http://a/6</link></item><item><link>"), ["http://a/6"]);
    }

    #[test]
    fn entry_kinds_are_sniffed() {
        let base = Url::parse("http://a/").unwrap();
        assert_eq!(
            entry_kind("application/xml", b"<?xml?><urlset><url><loc>x</loc></url></urlset>"),
            EntryKind::Sitemap
        );
        assert_eq!(entry_kind("text/xml", b"<rss><channel/></rss>"), EntryKind::Feed);
        assert_eq!(entry_kind("text/html", b"<html><a href=/x>x</a></html>"), EntryKind::Html);
        let links =
            entry_links(&base, "text/html", b"<html><a href=\"/book/1.html\">1</a><a href=\"http://b/2\">2</a></html>");
        assert_eq!(links.iter().map(Url::as_str).collect::<Vec<_>>(), ["http://a/book/1.html", "http://b/2"]);
    }

    #[test]
    fn intervals_halve_and_double_within_bounds() {
        let (floor, max) = (Duration::from_secs(60), Duration::from_secs(6 * 3600));
        assert_eq!(next_interval(Duration::ZERO, true, floor, max), floor);
        assert_eq!(next_interval(Duration::ZERO, false, floor, max), floor * 2);
        assert_eq!(next_interval(floor * 8, true, floor, max), floor * 4);
        assert_eq!(next_interval(floor, true, floor, max), floor);
        assert_eq!(next_interval(floor * 4, false, floor, max), floor * 8);
        assert_eq!(next_interval(max, false, floor, max), max);
        // The politeness budget is a floor too.
        assert_eq!(next_interval(floor, true, Duration::from_secs(120), max), Duration::from_secs(120));
    }
}
