//! The crawler: the only source of raw data in the Daguan design. It fetches pages from
//! seeds and the links and sitemaps they lead to, within the configured domains and
//! depth, politely (robots.txt, a per-host delay and concurrency, a global concurrency,
//! a User-Agent that says what it is), safely (the [`AddressPolicy`] on every hop, a size
//! cap, timeouts, a redirect limit), and resumably (the [`frontier::Frontier`] file).
//! Fetched pages are canonicalised by the core and stored through the page store.

pub mod fetch;
pub mod frontier;
pub mod lease;
pub mod policy;
pub mod robots;
pub mod watch;

use std::collections::{HashMap, HashSet, VecDeque};
use std::fmt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::OnceCell;
use tokio::task::JoinSet;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;
use url::Url;
use zhiwen_core::canon::{self, InputFormat};
use zhiwen_core::params::CanonParams;
use zhiwen_store::{Outcome, PageFormat, PageSource, Stores, Timestamp};

use self::fetch::{fetch, FetchRules};
use self::frontier::{Completion, Entry, Frontier, UrlState};
pub use self::policy::AddressPolicy;
use self::robots::{parse_sitemap, Robots};
use crate::error::{IngestError, Result};
use crate::html;
use crate::pages::{charset_param, decode_page, RawPage};
use crate::report::{write_rejections, ImportSummary, Progress};
use crate::url as zurl;

/// The robots.txt product token the crawler obeys.
pub const ROBOTS_TOKEN: &str = "zhiwen";

/// The crawler's configuration. Defaults are polite: one request per host at a time, one
/// second apart.
#[derive(Debug, Clone)]
pub struct CrawlConfig {
    /// Name of the crawl job: the frontier is `<data_dir>/crawl-<job>.sqlite`; running the
    /// same job again resumes it.
    pub job: String,
    /// Directory of the frontier file.
    pub data_dir: PathBuf,
    /// `User-Agent` header: says what the crawler is and where to learn more.
    pub user_agent: String,
    /// Product token matched against robots.txt `User-agent` lines.
    pub robots_token: String,
    /// Domains links are followed into (subdomains included); empty = the seeds' hosts.
    pub allowed_domains: Vec<String>,
    /// Link depth from the seeds (0 = seeds only; sitemap entries count as depth 1).
    pub max_depth: u32,
    /// Stop after this many fetches (`None` = until the frontier is empty).
    pub max_pages: Option<u64>,
    /// Requests in flight overall.
    pub global_concurrency: usize,
    /// Requests in flight per host.
    pub per_host_concurrency: usize,
    /// Time between two requests to one host (robots.txt `Crawl-delay` may raise it).
    pub per_host_delay: Duration,
    /// TCP/TLS connect timeout.
    pub connect_timeout: Duration,
    /// Whole-request timeout (headers and body).
    pub request_timeout: Duration,
    /// Retries of transient failures (timeouts, connection errors, 5xx, 429).
    pub max_retries: u32,
    /// First retry delay; doubles each retry.
    pub retry_backoff: Duration,
    /// Redirect hops followed per fetch.
    pub max_redirects: u32,
    /// Largest body accepted (after decompression), in bytes.
    pub max_body_bytes: u64,
    /// Bytes of one page's body that are decoded, canonicalised and stored (a longer body
    /// is cut, as by the importers: [`crate::ImportLimits::max_page_bytes`]).
    pub max_page_bytes: u64,
    /// Which addresses may be contacted.
    pub address_policy: AddressPolicy,
    /// Read `Sitemap:` lines of robots.txt and `/sitemap.xml`.
    pub follow_sitemaps: bool,
    /// Fetch URLs even if the page store already has them (default: never fetch twice).
    pub refetch_stored: bool,
    /// Canonicalisation of fetched pages.
    pub canon: CanonParams,
}

impl Default for CrawlConfig {
    fn default() -> Self {
        CrawlConfig {
            job: "default".into(),
            data_dir: PathBuf::from(zhiwen_store::DEFAULT_DATA_DIR),
            user_agent: format!(
                "zhiwen-crawler/{} (copyright-infringement monitoring; obeys robots.txt, token \"{ROBOTS_TOKEN}\")",
                env!("CARGO_PKG_VERSION")
            ),
            robots_token: ROBOTS_TOKEN.into(),
            allowed_domains: Vec::new(),
            max_depth: 3,
            max_pages: None,
            global_concurrency: 8,
            per_host_concurrency: 1,
            per_host_delay: Duration::from_secs(1),
            connect_timeout: Duration::from_secs(10),
            request_timeout: Duration::from_secs(30),
            max_retries: 2,
            retry_backoff: Duration::from_millis(500),
            max_redirects: 5,
            max_body_bytes: 8 << 20,
            max_page_bytes: crate::ImportLimits::default().max_page_bytes,
            address_policy: AddressPolicy::default(),
            follow_sitemaps: true,
            refetch_stored: false,
            canon: CanonParams::default(),
        }
    }
}

impl CrawlConfig {
    /// The frontier file of this job.
    pub fn frontier_path(&self) -> PathBuf {
        let job: String =
            self.job.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
        self.data_dir.join(format!("crawl-{job}.sqlite"))
    }
}

/// What a crawl run did.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CrawlSummary {
    /// Pages fetched over HTTP in this run.
    pub fetched: u64,
    /// Stored pages (imported/updated/unchanged; a page with the same text as another is
    /// stored under its own URL too), rejections with reasons, and the page ids to
    /// fingerprint.
    pub pages: ImportSummary,
    /// Frontier URLs not fetched because the page store already had them.
    pub already_stored: u64,
    /// URLs robots.txt forbids (not fetched).
    pub disallowed: Vec<String>,
    /// URLs found in sitemaps.
    pub sitemap_urls: u64,
    /// URLs still queued when the run ended (by `max_pages` or cancellation).
    pub queued_left: u64,
    /// The run resumed a frontier left by an earlier run.
    pub resumed: bool,
    /// The run was cancelled.
    pub cancelled: bool,
}

impl fmt::Display for CrawlSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.pages;
        write!(
            f,
            "{}fetched {}, stored new {}, updated {}, unchanged {}, already stored {}, \
             disallowed by robots.txt {}, from sitemaps {}, rejected {}, still queued {}{}",
            if self.resumed { "resumed: " } else { "" },
            self.fetched,
            p.imported,
            p.updated,
            p.unchanged,
            self.already_stored,
            self.disallowed.len(),
            self.sitemap_urls,
            p.rejected.len(),
            self.queued_left,
            if self.cancelled { " (cancelled)" } else { "" }
        )?;
        write_rejections(f, &p.rejected)
    }
}

/// Read a seeds file: one URL per line; blank lines and `#` comments ignored.
pub fn read_seeds(path: &std::path::Path) -> Result<Vec<String>> {
    let text = std::fs::read_to_string(path).map_err(|e| IngestError::io(path, e))?;
    Ok(text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#')).map(str::to_owned).collect())
}

struct Shared {
    config: CrawlConfig,
    stores: Stores,
    client: reqwest::Client,
    rules: FetchRules,
    robots: Mutex<HashMap<String, Arc<OnceCell<Arc<Robots>>>>>,
    /// Hosts whose sitemaps were read (in this or an earlier run of the job).
    sitemaps_done: Mutex<HashSet<String>>,
    allowed_domains: Vec<String>,
}

enum Done {
    Stored { outcome: Outcome, page_id: i64, final_url: Url },
    AlreadyStored { page_id: i64 },
    Disallowed(String),
    Failed(IngestError),
}

struct TaskResult {
    done: Done,
    fetched: bool,
    links: Vec<Url>,
    sitemap_links: Vec<Url>,
    sitemap_host: Option<String>,
    crawl_delay: Option<Duration>,
}

impl TaskResult {
    fn new(done: Done) -> Self {
        TaskResult {
            done,
            fetched: false,
            links: Vec::new(),
            sitemap_links: Vec::new(),
            sitemap_host: None,
            crawl_delay: None,
        }
    }
}

struct HostState {
    in_flight: usize,
    next_at: Instant,
    delay: Duration,
}

/// The crawler. Build it with [`Crawler::new`], run it with [`Crawler::run`].
pub struct Crawler {
    config: CrawlConfig,
    stores: Stores,
    client: reqwest::Client,
    rules: FetchRules,
}

impl fmt::Debug for Crawler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Crawler").field("config", &self.config).finish_non_exhaustive()
    }
}

/// The crawler's HTTP client and fetch rules for `config`: the address policy checked on
/// every hop (by the resolver, before connecting), no proxy, redirects followed by hand,
/// bounded bodies. Everything that fetches a page for zhiwen (the crawler, an evidence
/// capture's re-fetch) fetches through these.
pub fn http_client(config: &CrawlConfig) -> Result<(reqwest::Client, FetchRules)> {
    let client = reqwest::Client::builder()
        .user_agent(config.user_agent.clone())
        .redirect(reqwest::redirect::Policy::none())
        .dns_resolver(Arc::new(policy::PolicyResolver::new(config.address_policy)))
        // A proxy would connect on our behalf and bypass the address checks.
        .no_proxy()
        .connect_timeout(config.connect_timeout)
        .timeout(config.request_timeout)
        .gzip(true)
        .brotli(true)
        .pool_max_idle_per_host(config.per_host_concurrency)
        .build()
        .map_err(|e| IngestError::Config(format!("HTTP client: {e}")))?;
    let rules = FetchRules {
        policy: config.address_policy,
        max_redirects: config.max_redirects,
        max_body_bytes: config.max_body_bytes,
        max_retries: config.max_retries,
        backoff: config.retry_backoff,
        pages_only: true,
    };
    Ok((client, rules))
}

impl Crawler {
    /// A crawler storing into `stores`.
    pub fn new(config: CrawlConfig, stores: Stores) -> Result<Self> {
        if config.global_concurrency == 0 || config.per_host_concurrency == 0 {
            return Err(IngestError::Config("concurrency must be at least 1".into()));
        }
        if config.user_agent.trim().is_empty() {
            return Err(IngestError::Config("the User-Agent is empty".into()));
        }
        let (client, rules) = http_client(&config)?;
        Ok(Crawler { config, stores, client, rules })
    }

    /// Crawl from `seeds` (plus whatever the job's frontier still holds) until the
    /// frontier is empty or `max_pages` is reached.
    pub async fn run(&self, seeds: &[String], progress: &dyn Progress) -> Result<CrawlSummary> {
        self.run_until(seeds, progress, CancellationToken::new()).await
    }

    /// [`Crawler::run`], stopping early when `cancel` fires (in-flight fetches are
    /// abandoned; everything completed is in the frontier and the store).
    pub async fn run_until(
        &self,
        seeds: &[String],
        progress: &dyn Progress,
        cancel: CancellationToken,
    ) -> Result<CrawlSummary> {
        let cfg = &self.config;
        let mut summary = CrawlSummary::default();
        let mut frontier = Frontier::open(&cfg.frontier_path())?;
        summary.resumed = frontier.counts()?.done + frontier.counts()?.failed + frontier.counts()?.skipped > 0;
        let mut seed_rows = Vec::new();
        for s in seeds {
            match zurl::normalize(s) {
                Ok(u) => seed_rows.push((u.to_string(), 0)),
                Err(e) => summary.pages.reject(s.clone(), e),
            }
        }
        frontier.add(&seed_rows)?;
        // URLs skipped because their host's robots.txt could not be read (a 5xx, a
        // timeout) are this run's to try again: the outage kept them out of that run only.
        let retried = frontier.requeue_skipped(robots::UNAVAILABLE)?;
        if retried > 0 {
            tracing::info!(urls = retried, "queued again: skipped when robots.txt could not be read");
        }
        let mut domains = cfg.allowed_domains.clone();
        if domains.is_empty() {
            for s in frontier.seeds()? {
                if let Some(h) = Url::parse(&s).ok().and_then(|u| u.host_str().map(str::to_owned)) {
                    if !domains.contains(&h) {
                        domains.push(h);
                    }
                }
            }
        }
        let shared = Arc::new(Shared {
            config: cfg.clone(),
            stores: self.stores.clone(),
            client: self.client.clone(),
            rules: self.rules.clone(),
            robots: Mutex::new(HashMap::new()),
            sitemaps_done: Mutex::new(frontier.sitemap_hosts()?),
            allowed_domains: domains,
        });
        // One FIFO per host (breadth first within the host); hosts take turns.
        let mut queues: HashMap<String, VecDeque<Entry>> = HashMap::new();
        for e in frontier.queued()? {
            queues.entry(host_of(&e.url)).or_default().push_back(e);
        }
        let counts = frontier.counts()?;
        progress.start("crawl", Some(counts.queued + counts.done + counts.failed + counts.skipped));
        progress.advance(counts.done + counts.failed + counts.skipped);
        let mut hosts: HashMap<String, HostState> = HashMap::new();
        let mut tasks: JoinSet<TaskResult> = JoinSet::new();
        let mut running: HashMap<tokio::task::Id, Entry> = HashMap::new();
        let mut dispatched = 0u64;
        let mut total = counts.queued + counts.done + counts.failed + counts.skipped;
        loop {
            if cancel.is_cancelled() {
                summary.cancelled = true;
                break;
            }
            // Dispatch a URL of every ready host (the longest-waiting first), up to the
            // global limit.
            let now = Instant::now();
            while tasks.len() < cfg.global_concurrency && cfg.max_pages.is_none_or(|m| dispatched < m) {
                let ready = queues
                    .keys()
                    .filter(|k| {
                        hosts.get(*k).is_none_or(|h| h.in_flight < cfg.per_host_concurrency && h.next_at <= now)
                    })
                    .min_by_key(|k| hosts.get(*k).map(|h| h.next_at))
                    .cloned();
                let Some(key) = ready else { break };
                let Some(queue) = queues.get_mut(&key) else { break };
                let Some(entry) = queue.pop_front() else { break };
                if queue.is_empty() {
                    queues.remove(&key);
                }
                let h = hosts.entry(key).or_insert(HostState { in_flight: 0, next_at: now, delay: cfg.per_host_delay });
                h.in_flight += 1;
                h.next_at = now + h.delay;
                progress.message(&entry.url);
                let handle = tasks.spawn(process(shared.clone(), entry.clone()));
                running.insert(handle.id(), entry);
                dispatched += 1;
            }
            if tasks.is_empty() && (queues.is_empty() || cfg.max_pages.is_some_and(|m| dispatched >= m)) {
                break;
            }
            let wake = queues
                .keys()
                .filter_map(|k| hosts.get(k))
                .filter(|h| h.in_flight < cfg.per_host_concurrency)
                .map(|h| h.next_at)
                .min();
            tokio::select! {
                _ = cancel.cancelled() => {
                    summary.cancelled = true;
                    break;
                }
                Some(joined) = tasks.join_next_with_id(), if !tasks.is_empty() => {
                    let (id, result) = match joined {
                        Ok((id, r)) => (id, Ok(r)),
                        Err(e) => (e.id(), Err(e)),
                    };
                    let Some(entry) = running.remove(&id) else { continue };
                    let key = host_of(&entry.url);
                    let result = match result {
                        Ok(r) => r,
                        Err(e) => TaskResult::new(Done::Failed(IngestError::invalid(entry.url.clone(), format!("internal error: {e}")))),
                    };
                    if let Some(h) = hosts.get_mut(&key) {
                        h.in_flight = h.in_flight.saturating_sub(1);
                        if let Some(d) = result.crawl_delay {
                            h.delay = h.delay.max(d);
                        }
                        if result.fetched {
                            h.next_at = h.next_at.max(Instant::now() + h.delay);
                        } else {
                            // Nothing was sent: the host's slot is free again.
                            h.next_at = Instant::now();
                        }
                    }
                    let added = complete(&shared, &mut frontier, &entry, result, &mut summary)?;
                    total += added.len() as u64;
                    progress.set_total(total);
                    progress.advance(1);
                    for e in added {
                        queues.entry(host_of(&e.url)).or_default().push_back(e);
                    }
                }
                _ = sleep_until_opt(wake), if wake.is_some() => {}
            }
        }
        tasks.abort_all();
        summary.queued_left = frontier.counts()?.queued;
        progress.finish();
        Ok(summary)
    }
}

/// Record a finished task in the frontier and the summary; returns newly queued URLs.
fn complete(
    shared: &Shared,
    frontier: &mut Frontier,
    entry: &Entry,
    r: TaskResult,
    summary: &mut CrawlSummary,
) -> Result<Vec<Entry>> {
    let cfg = &shared.config;
    if r.fetched {
        summary.fetched += 1;
    }
    let mut links: Vec<(String, u32)> = Vec::new();
    if entry.depth < cfg.max_depth {
        for l in &r.links {
            if l.host_str().is_some_and(|h| zurl::in_domains(h, &shared.allowed_domains)) {
                links.push((l.to_string(), entry.depth + 1));
            }
        }
    }
    if cfg.max_depth >= 1 {
        for l in &r.sitemap_links {
            if l.host_str().is_some_and(|h| zurl::in_domains(h, &shared.allowed_domains)) {
                links.push((l.to_string(), 1));
            }
        }
    }
    let sitemap_hosts: Vec<String> = r.sitemap_host.iter().cloned().collect();
    let (state, reason, page_id, also) = match &r.done {
        Done::Stored { outcome, page_id, final_url } => {
            summary.pages.count(*outcome);
            if *outcome != Outcome::Unchanged {
                summary.pages.changed.pages.push(*page_id);
            }
            let also = (final_url.as_str() != entry.url).then(|| final_url.to_string());
            (UrlState::Done, None, Some(*page_id), also)
        }
        Done::AlreadyStored { page_id } => {
            summary.already_stored += 1;
            (UrlState::Done, None, Some(*page_id), None)
        }
        Done::Disallowed(why) => {
            summary.disallowed.push(entry.url.clone());
            (UrlState::Skipped, Some(why.clone()), None, None)
        }
        Done::Failed(e) => {
            summary.pages.reject(entry.url.clone(), e);
            (UrlState::Failed, Some(e.to_string()), None, None)
        }
    };
    let sitemap_count = r.sitemap_links.len() as u64;
    summary.sitemap_urls += sitemap_count;
    frontier.complete(&Completion {
        id: entry.id,
        state,
        reason: reason.as_deref(),
        page_id,
        final_url: also.as_deref(),
        links: &links,
        sitemap_hosts: &sitemap_hosts,
    })
}

async fn sleep_until_opt(at: Option<Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(t).await,
        None => std::future::pending().await,
    }
}

fn host_of(url: &str) -> String {
    Url::parse(url).map(|u| zurl::host_key(&u)).unwrap_or_default()
}

fn origin_key(url: &Url) -> String {
    format!("{}://{}", url.scheme(), zurl::host_key(url))
}

impl Shared {
    async fn robots_for(&self, url: &Url) -> Result<Arc<Robots>> {
        let key = origin_key(url);
        let cell = {
            let mut map = self.robots.lock().unwrap_or_else(|p| p.into_inner());
            map.entry(key).or_default().clone()
        };
        cell.get_or_try_init(|| async {
            Robots::fetch(&self.client, url, &self.rules, &self.config.robots_token).await.map(Arc::new)
        })
        .await
        .cloned()
    }

    /// Read the sitemaps of `url`'s host once per job: `(page URLs, host)`.
    async fn sitemaps_for(&self, url: &Url, robots: &Robots) -> Option<(Vec<Url>, String)> {
        // Without a robots.txt there is nothing to read them under; a later run reads them.
        if !self.config.follow_sitemaps || matches!(robots, Robots::Unavailable(_)) {
            return None;
        }
        let key = origin_key(url);
        {
            let mut done = self.sitemaps_done.lock().unwrap_or_else(|p| p.into_inner());
            if !done.insert(key.clone()) {
                return None;
            }
        }
        let mut todo: VecDeque<(String, u32)> = robots.sitemaps().into_iter().map(|s| (s, 0)).collect();
        let mut default = url.clone();
        default.set_path("/sitemap.xml");
        default.set_query(None);
        if !todo.iter().any(|(s, _)| s == default.as_str()) {
            todo.push_back((default.to_string(), 0));
        }
        let rules = FetchRules { pages_only: false, max_retries: self.rules.max_retries.min(1), ..self.rules.clone() };
        // Each request to the host waits its delay after the one before (robots.txt was
        // read just before, the page follows): the task holds the host's slot throughout,
        // so these requests are paced here, as the dispatcher paces pages.
        let delay = robots.crawl_delay().map_or(self.config.per_host_delay, |d| d.max(self.config.per_host_delay));
        let mut seen = HashSet::new();
        let mut pages = Vec::new();
        let mut fetches = 0;
        while let Some((s, level)) = todo.pop_front() {
            if fetches >= 20 || !seen.insert(s.clone()) {
                continue;
            }
            let Ok(su) = zurl::normalize(&s) else { continue };
            // Sitemaps on other hosts (or forbidden by robots.txt) are not read.
            if origin_key(&su) != key || robots.check(&su).is_err() {
                continue;
            }
            tokio::time::sleep(delay).await;
            fetches += 1;
            match fetch(&self.client, &su, &rules, |_| async { Ok(()) }).await {
                Ok(f) => {
                    let (urls, children) = parse_sitemap(&f.body);
                    pages.extend(urls.iter().filter_map(|u| zurl::normalize(u).ok()));
                    if level < 2 {
                        todo.extend(children.into_iter().map(|c| (c, level + 1)));
                    }
                }
                Err(e) => tracing::debug!(sitemap = %su, error = %e, "sitemap not read"),
            }
        }
        if fetches > 0 {
            // The page itself is the next request to the host.
            tokio::time::sleep(delay).await;
        }
        Some((pages, key))
    }
}

/// Fetch, canonicalise and store one frontier URL.
async fn process(shared: Arc<Shared>, entry: Entry) -> TaskResult {
    let cfg = &shared.config;
    let url = match zurl::normalize(&entry.url) {
        Ok(u) => u,
        Err(e) => return TaskResult::new(Done::Failed(e)),
    };
    if let Err(e) = cfg.address_policy.check_url(&url) {
        return TaskResult::new(Done::Failed(e));
    }
    if !cfg.refetch_stored {
        match shared.stores.pages.find_page(url.as_str()).await {
            Ok(Some(page)) => {
                // Stored by an earlier run (perhaps killed before it recorded the links):
                // rediscover the links from the stored body instead of fetching again.
                let mut r = TaskResult::new(Done::AlreadyStored { page_id: page.id });
                if entry.depth < cfg.max_depth && page.format != Some(PageFormat::Text) {
                    if let Ok(decoded) = canon::decode(&page.body, page.charset.as_deref()) {
                        r.links = page_links(&url, &decoded.text);
                    }
                }
                return r;
            }
            Ok(None) => {}
            Err(e) => return TaskResult::new(Done::Failed(e.into())),
        }
    }
    let robots = match shared.robots_for(&url).await {
        Ok(r) => r,
        Err(e) => return TaskResult::new(Done::Failed(e)),
    };
    let mut result = TaskResult::new(Done::Disallowed(String::new()));
    result.crawl_delay = robots.crawl_delay();
    if let Some((links, host)) = shared.sitemaps_for(&url, &robots).await {
        result.sitemap_links = links;
        result.sitemap_host = Some(host);
    }
    if let Err(why) = robots.check(&url) {
        result.done = Done::Disallowed(why);
        return result;
    }
    let shared2 = shared.clone();
    let allowed = move |u: Url| {
        let shared = shared2.clone();
        async move {
            let robots = shared.robots_for(&u).await?;
            robots
                .check(&u)
                .map_err(|why| IngestError::Url { url: u.to_string(), reason: format!("redirect target {why}") })
        }
    };
    result.fetched = true;
    let fetched = match fetch(&shared.client, &url, &shared.rules, allowed).await {
        Ok(f) => f,
        Err(e) => {
            result.done = Done::Failed(e);
            return result;
        }
    };
    let hint = charset_param(&fetched.content_type);
    let format = if fetched.content_type.to_ascii_lowercase().starts_with("text/plain") {
        InputFormat::Text
    } else {
        InputFormat::Auto
    };
    let final_url = fetched.final_url.clone();
    let raw = RawPage {
        url: final_url.as_str(),
        body: fetched.body,
        format,
        charset_hint: hint.as_deref(),
        fetched_at: Timestamp::now(),
        http_status: Some(fetched.status),
        source: PageSource::Crawl,
    };
    let limits = crate::ImportLimits { max_page_bytes: cfg.max_page_bytes, ..crate::ImportLimits::default() };
    // The body is decoded once: the links are read from the same text the page is made of.
    let built = decode_page(raw, &limits).and_then(|decoded| {
        if entry.depth < cfg.max_depth && format != InputFormat::Text {
            result.links = page_links(&final_url, decoded.text());
        }
        decoded.build(&cfg.canon)
    });
    let page = match built {
        Ok(b) => {
            if let Some(from) = b.cut_from {
                tracing::info!(url = %b.page.url, from, to = b.page.body.len(), "page cut at the page size bound");
            }
            b.page
        }
        Err(e) => {
            // A link list without text of its own still leads somewhere; garbage does not.
            if !matches!(e, IngestError::Text { source: zhiwen_core::CoreError::NoText, .. }) {
                result.links.clear();
            }
            result.done = Done::Failed(e);
            return result;
        }
    };
    match shared.stores.pages.upsert_page(&page).await {
        Ok(u) => {
            result.done = Done::Stored { outcome: u.outcome, page_id: u.id, final_url };
        }
        Err(e) => result.done = Done::Failed(e.into()),
    }
    result
}

/// Links of a decoded HTML body, resolved and normalised.
fn page_links(base: &Url, decoded: &str) -> Vec<Url> {
    let (base_href, hrefs) = html::links(decoded);
    let base = base_href.and_then(|b| base.join(&b).ok()).unwrap_or_else(|| base.clone());
    let mut seen = HashSet::new();
    hrefs.iter().filter_map(|h| zurl::resolve(&base, h)).filter(|u| seen.insert(u.to_string())).collect()
}
