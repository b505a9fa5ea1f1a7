//! The task worker and the daily scheduler that `zhiwen serve` runs next to the API:
//! matching tasks (the matcher's persisted, resumable tasks, telling the holders'
//! alerts of their new matches), crawl tasks started from the API, the daily alert
//! digest, one at a time, woken at once when the API enqueues one; and next to them the
//! watch loop over the watched sites. A task cancelled through the API stops at its next
//! page (a watcher polls its state).

use std::sync::atomic::{AtomicBool, AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde::{Deserialize, Serialize};
use zhiwen_ingest::{
    AddressPolicy, Arrivals, CancellationToken, CrawlConfig, Crawler, HostLeases, WatchConfig, Watcher,
};
use zhiwen_matcher::task::{enqueue_arrival, run_next_task, worker_name, TaskControl, TaskProgress};
use zhiwen_matcher::MatcherError;
use zhiwen_store::{Progress, Task, TaskState};

use crate::AppState;

/// Parameters of a crawl task (persisted as the task's params).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct CrawlParams {
    /// Start URLs.
    pub seeds: Vec<String>,
    /// Stop after this many pages.
    pub max_pages: Option<u64>,
    /// Link depth from the seeds.
    pub max_depth: Option<u32>,
    /// Only these domains (default: the seeds' hosts).
    #[serde(default)]
    pub allowed_domains: Vec<String>,
}

/// Kind of crawl tasks.
pub const CRAWL_KIND: &str = "crawl";

/// Options of the worker.
#[derive(Debug, Clone, Default)]
pub struct WorkerOptions {
    /// Enqueue the daily matching task at its slots.
    pub scheduler: bool,
    /// Which addresses crawls may fetch (loopback/private refused by default).
    pub address_policy: AddressPolicy,
    /// Leave matching tasks to `zhiwen worker` processes (Redis Streams); this process
    /// then runs only the crawls started from the API (and the watch passes).
    pub crawls_only: bool,
    /// Run watch passes over the watched sites (`None`: off). Its crawl settings'
    /// address policy, canonicalisation and page bound are replaced by the server's.
    pub watch: Option<WatchConfig>,
    /// Host leases shared with the other processes that watch (Redis); `None`: this
    /// process's memory (it watches alone).
    pub leases: Option<Arc<dyn HostLeases>>,
}

/// A watcher for the server: `config` with the server's address policy,
/// canonicalisation and page bound, host leases from `leases` (Redis, where several
/// processes watch; this process's memory otherwise), the matching of what each site's
/// visit stores queued at once ([`QueueMatching`]). `None` when the settings are refused
/// (logged).
pub fn server_watcher(
    state: &AppState,
    address_policy: AddressPolicy,
    config: &WatchConfig,
    leases: Option<Arc<dyn HostLeases>>,
) -> Option<Watcher> {
    let mut config = config.clone();
    config.crawl.address_policy = address_policy;
    config.crawl.canon = state.matcher.fingerprinter().params().canon.clone();
    config.crawl.max_page_bytes = state.config.import_limits.max_page_bytes;
    let watcher = Watcher::new(config, state.stores.clone())
        .inspect_err(|e| tracing::error!(error = %e, "watch settings refused; watched sites are not visited"))
        .ok()?;
    let watcher =
        watcher.with_arrivals(Arc::new(QueueMatching::new(state.matcher.clone(), Some(state.worker_wake.clone()))));
    Some(match leases {
        Some(l) => watcher.with_leases(l),
        None => watcher,
    })
}

/// Queues the matching of the pages a watched site's visit stored, as soon as the visit
/// ends ([`Arrivals`]), and wakes this process's task loop when it has one. A burst is
/// one task: `enqueue_arrival` reuses a queued arrival task.
pub struct QueueMatching {
    matcher: zhiwen_matcher::Matcher,
    wake: Option<Arc<tokio::sync::Notify>>,
}

impl QueueMatching {
    /// Queue into `matcher`'s task store; `wake` the local task loop (`None`: the tasks are
    /// run by other processes).
    pub fn new(matcher: zhiwen_matcher::Matcher, wake: Option<Arc<tokio::sync::Notify>>) -> Self {
        QueueMatching { matcher, wake }
    }

    /// Queue, and wake; the task's id, or `None` when it could not be queued (logged: the
    /// data is stored either way, and the daily task is the safety net).
    async fn queue(&self) -> Option<i64> {
        match enqueue_arrival(&self.matcher).await {
            Ok(task) => {
                if let Some(wake) = &self.wake {
                    wake.notify_one();
                }
                Some(task.id)
            }
            Err(e) => {
                tracing::error!(error = %e, "cannot queue the matching of new data; the daily task will match it");
                None
            }
        }
    }
}

impl Arrivals for QueueMatching {
    fn arrived<'a>(&'a self, pages: &'a [i64]) -> BoxFuture<'a, ()> {
        Box::pin(async move {
            if let Some(task_id) = self.queue().await {
                tracing::info!(task_id, pages = pages.len(), "matching of watched pages queued");
            }
        })
    }
}

/// The watch loop of the server ([`Watcher::run_until`]), next to the task loop rather
/// than inside it, so that a long matching task never delays a visit.
async fn watch_sites(watcher: Watcher, shutdown: CancellationToken) {
    watcher.run_until(&shutdown, |summary| tracing::info!(%summary, "watch pass")).await;
}

#[derive(Default)]
struct Current {
    task_id: AtomicI64,
    crawl_done: AtomicU64,
    crawl_total: AtomicU64,
}

struct Sink(Arc<crate::metrics::TaskGauge>);

impl zhiwen_matcher::task::ProgressSink for Sink {
    fn update(&self, p: &TaskProgress) {
        self.0.set(p.task_id, "match", p.done, p.total);
    }
}

struct CrawlProgress(Arc<Current>);

impl zhiwen_ingest::Progress for CrawlProgress {
    fn set_total(&self, total: u64) {
        self.0.crawl_total.store(total, Ordering::Relaxed);
    }
    fn advance(&self, units: u64) {
        self.0.crawl_done.fetch_add(units, Ordering::Relaxed);
    }
}

/// Run until `shutdown` is cancelled.
pub async fn run(state: Arc<AppState>, options: WorkerOptions, shutdown: CancellationToken) {
    let worker = worker_name();
    let current = Arc::new(Current::default());
    let cancel_flag = Arc::new(AtomicBool::new(false));
    let crawl_cancel = Arc::new(std::sync::Mutex::new(None::<CancellationToken>));
    let cancels = tokio::spawn(watch(state.clone(), current.clone(), cancel_flag.clone(), crawl_cancel.clone()));
    let scheduler = options.scheduler.then(|| tokio::spawn(schedule(state.clone(), shutdown.clone())));
    let watching = options
        .watch
        .as_ref()
        .and_then(|c| server_watcher(&state, options.address_policy, c, options.leases.clone()))
        .map(|w| tokio::spawn(watch_sites(w, shutdown.clone())));
    let captures = state.evidence.clone().map(|service| {
        let webhook = zhiwen_matcher::webhook::Webhook::from_config(&state.matcher.config().webhook)
            .inspect_err(|e| tracing::error!(error = %e, "webhook misconfigured; tree heads are not sent"))
            .ok()
            .flatten();
        let lease = state.matcher.config().lease_seconds;
        tokio::spawn(zhiwen_capture::run_capture_worker(
            service,
            webhook,
            lease,
            state.worker_wake.clone(),
            shutdown.clone(),
        ))
    });
    let hooks = crate::alerts::hooks(state.alerts.as_ref());
    let mut held_checked: Option<std::time::Instant> = None;
    loop {
        if shutdown.is_cancelled() {
            break;
        }
        cancel_flag.store(false, Ordering::SeqCst);
        let control = TaskControl { cancel: cancel_flag.clone(), hooks: hooks.clone(), ..TaskControl::default() };
        let sink = Sink(state.metrics.task_gauge());
        let matched = tokio::select! {
            r = run_next_task(&state.matcher, &worker, &control, &sink), if !options.crawls_only => r,
            () = std::future::ready(()), if options.crawls_only => Ok(None),
            _ = shutdown.cancelled() => {
                // Stop at the next page; the task keeps its checkpoint and resumes later.
                cancel_flag.store(true, Ordering::SeqCst);
                break;
            }
        };
        let busy = match matched {
            Ok(Some(s)) => {
                tracing::info!(task_id = s.task_id, state = ?s.state, pages = s.pages, "matching task ran");
                if s.matches_new > 0 {
                    // New matches queued captures: wake the capture worker.
                    state.worker_wake.notify_waiters();
                }
                true
            }
            Ok(None) => false,
            Err(MatcherError::AlreadyRunning { task_id, .. }) => {
                tracing::debug!(task_id, "another worker runs a matching task");
                false
            }
            Err(e) => {
                tracing::error!(error = %e, "matching task failed");
                false
            }
        };
        let crawled = run_crawl(&state, &worker, &options, &current, &crawl_cancel, &shutdown).await;
        if busy || crawled {
            continue;
        }
        // Idle: the day's digest once the day's matching is done, and (every minute)
        // the alerts held by a rate limit whose hour has passed.
        if let Some(alerts) = &state.alerts {
            if run_digest(&state, alerts, &worker).await {
                continue;
            }
            if held_checked.is_none_or(|t| t.elapsed() >= Duration::from_secs(60)) {
                held_checked = Some(std::time::Instant::now());
                match alerts.deliver_held().await {
                    Ok(r) if r.emails > 0 => tracing::info!(emails = r.emails, "held alerts sent"),
                    Ok(_) => {}
                    Err(e) => tracing::error!(error = %e, "cannot send the held alerts"),
                }
            }
        }
        tokio::select! {
            _ = state.worker_wake.notified() => {}
            _ = tokio::time::sleep(Duration::from_secs(5)) => {}
            _ = shutdown.cancelled() => break,
        }
    }
    cancels.abort();
    if let Some(w) = watching {
        // It stops at `shutdown` by itself: in-flight fetches are abandoned, what was
        // stored stays, an entry point whose visit was not recorded is visited again.
        let _ = w.await;
    }
    if let Some(s) = scheduler {
        s.abort();
    }
    if let Some(c) = captures {
        // A capture cut short is resumed (idempotently) by the next worker.
        c.abort();
    }
}

/// Queue the matching of what has just arrived (a work registered or changed through the
/// API, pages a crawl stored) and wake the worker: the arrival is matched within seconds,
/// not at the next daily run (`zhiwen_matcher::task::enqueue_arrival`; a burst is one
/// task). The id of the task, or `None` when it could not be queued: the data is stored
/// either way, and the daily task is the safety net.
pub async fn match_arrivals(state: &AppState) -> Option<i64> {
    QueueMatching::new(state.matcher.clone(), Some(state.worker_wake.clone())).queue().await
}

/// Claim and run one queued digest task (the daily alert e-mails of the holders in
/// digest mode); `true` if there was one. Re-running a day's digest sends nothing twice
/// (the outbox records the day per holder).
async fn run_digest(state: &Arc<AppState>, alerts: &zhiwen_takedown::Alerts, worker: &str) -> bool {
    let tasks = &state.stores.tasks;
    let task = match tasks.claim_task(Some(crate::alerts::DIGEST_KIND), worker).await {
        Ok(Some(t)) => t,
        Ok(None) => return false,
        Err(e) => {
            tracing::error!(error = %e, "cannot claim a digest task");
            return false;
        }
    };
    let day = task.params.get("day").and_then(|d| d.as_str()).unwrap_or_default().to_owned();
    let outcome = if day.is_empty() {
        tasks.fail_task(task.id, "bad parameters: no day").await
    } else {
        match alerts.send_digests(&day).await {
            Ok(r) => {
                tracing::info!(task_id = task.id, %day, emails = r.emails, failed = r.failed, "daily alert digests sent");
                tasks.finish_task(task.id).await
            }
            Err(e) => tasks.fail_task(task.id, &e.to_string()).await,
        }
    };
    if let Err(e) = outcome {
        tracing::info!(task_id = task.id, error = %e, "digest task ended");
    }
    true
}

/// Claim and run one queued crawl task; `true` if there was one.
async fn run_crawl(
    state: &Arc<AppState>,
    worker: &str,
    options: &WorkerOptions,
    current: &Arc<Current>,
    crawl_cancel: &Arc<std::sync::Mutex<Option<CancellationToken>>>,
    shutdown: &CancellationToken,
) -> bool {
    let task = match state.stores.tasks.claim_task(Some(CRAWL_KIND), worker).await {
        Ok(Some(t)) => t,
        Ok(None) => return false,
        Err(e) => {
            tracing::error!(error = %e, "cannot claim a crawl task");
            return false;
        }
    };
    current.task_id.store(task.id, Ordering::SeqCst);
    current.crawl_done.store(0, Ordering::Relaxed);
    current.crawl_total.store(0, Ordering::Relaxed);
    let token = shutdown.child_token();
    *crawl_cancel.lock().unwrap_or_else(|p| p.into_inner()) = Some(token.clone());
    let result = crawl(state, &task, options, current, token).await;
    *crawl_cancel.lock().unwrap_or_else(|p| p.into_inner()) = None;
    current.task_id.store(0, Ordering::SeqCst);
    let tasks = &state.stores.tasks;
    let outcome = match result {
        Ok((fetched, changed_pages)) => {
            let p = Progress { done: fetched, total: fetched, failed: 0 };
            let _ = tasks.update_progress(task.id, p, None).await;
            // Pages new or changed: match them now (a crawl that only found the pages as
            // they were queues nothing).
            if changed_pages > 0 {
                match_arrivals(state).await;
            }
            tasks.finish_task(task.id).await
        }
        Err(e) => tasks.fail_task(task.id, &e).await,
    };
    if let Err(e) = outcome {
        // Cancelled through the API meanwhile: the task is already terminal.
        tracing::info!(task_id = task.id, error = %e, "crawl task ended");
    }
    true
}

/// Run one crawl task: the pages fetched, and how many of the stored ones are new or changed.
async fn crawl(
    state: &Arc<AppState>,
    task: &Task,
    options: &WorkerOptions,
    current: &Arc<Current>,
    cancel: CancellationToken,
) -> Result<(u64, usize), String> {
    let params: CrawlParams =
        serde_json::from_value(task.params.clone()).map_err(|e| format!("bad parameters: {e}"))?;
    let config = CrawlConfig {
        job: format!("task-{}", task.id),
        data_dir: state.data_dir.clone(),
        allowed_domains: params.allowed_domains.clone(),
        max_depth: params.max_depth.unwrap_or(3),
        max_pages: params.max_pages.or(Some(10_000)),
        address_policy: options.address_policy,
        canon: state.matcher.fingerprinter().params().canon.clone(),
        max_page_bytes: state.config.import_limits.max_page_bytes,
        ..CrawlConfig::default()
    };
    let crawler = Crawler::new(config, state.stores.clone()).map_err(|e| e.to_string())?;
    let summary =
        crawler.run_until(&params.seeds, &CrawlProgress(current.clone()), cancel).await.map_err(|e| e.to_string())?;
    let changed = summary.pages.changed.pages.len();
    tracing::info!(task_id = task.id, fetched = summary.fetched, changed, "crawl finished");
    Ok((summary.fetched, changed))
}

/// Every second: stop the running task if it was cancelled through the API, and
/// publish crawl progress.
async fn watch(
    state: Arc<AppState>,
    current: Arc<Current>,
    cancel_flag: Arc<AtomicBool>,
    crawl_cancel: Arc<std::sync::Mutex<Option<CancellationToken>>>,
) {
    loop {
        tokio::time::sleep(Duration::from_secs(1)).await;
        // The matching task this process runs (the running one claimed by this process).
        if let Ok(running) = state.stores.tasks.list_tasks(Some(TaskState::Running), Some(CRAWL_KIND), 0, 100).await {
            for t in running.iter().filter(|t| t.id == current.task_id.load(Ordering::SeqCst)) {
                let p = Progress {
                    done: current.crawl_done.load(Ordering::Relaxed),
                    total: current.crawl_total.load(Ordering::Relaxed),
                    failed: 0,
                };
                let _ = state.stores.tasks.update_progress(t.id, p, None).await;
                state.metrics.task_gauge().set(t.id, CRAWL_KIND, p.done, p.total);
            }
        }
        if let Ok(cancelled) = recently_cancelled(&state).await {
            let crawl_id = current.task_id.load(Ordering::SeqCst);
            for t in cancelled {
                if t.kind == CRAWL_KIND && t.id == crawl_id {
                    if let Some(tok) = crawl_cancel.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
                        tok.cancel();
                    }
                } else if t.kind == zhiwen_matcher::task::TASK_KIND && t.worker.is_some() {
                    cancel_flag.store(true, Ordering::SeqCst);
                }
            }
        }
    }
}

/// Tasks cancelled in the last few seconds that a worker had claimed.
async fn recently_cancelled(state: &AppState) -> Result<Vec<Task>, zhiwen_store::StoreError> {
    let now = zhiwen_store::Timestamp::now();
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let page = state.stores.tasks.list_tasks(Some(TaskState::Cancelled), None, after, 500).await?;
        let Some(last) = page.last() else { break };
        after = last.id;
        out.extend(
            page.into_iter().filter(|t| t.started_at.is_some() && t.finished_at.is_some_and(|f| now.0 - f.0 < 3_000)),
        );
    }
    Ok(out)
}

/// Enqueue the daily matching task at its slots (catching up a missed one at start).
async fn schedule(state: Arc<AppState>, shutdown: CancellationToken) {
    let schedule = match zhiwen_matcher::schedule::Schedule::parse(&state.matcher.config().schedule) {
        Ok(s) => s,
        Err(e) => {
            tracing::error!(error = %e, "invalid schedule; the scheduler is off");
            return;
        }
    };
    loop {
        let now = chrono::Utc::now();
        match zhiwen_matcher::schedule::enqueue_due(&state.matcher, &schedule, now).await {
            Ok(Some(key)) => {
                tracing::info!(%key, "daily matching task enqueued");
                state.worker_wake.notify_one();
            }
            Ok(None) => {}
            Err(e) => tracing::error!(error = %e, "cannot enqueue the daily matching task"),
        }
        // The slot's alert digest, after its matching (the worker runs it when idle);
        // one per slot (its key).
        if let Some(slot) = schedule.last_at_or_before(now).filter(|_| state.alerts.is_some()) {
            let task = crate::alerts::digest_task(slot, schedule.time_zone());
            match state.stores.tasks.create_task(&task).await {
                Ok((t, zhiwen_store::Outcome::Inserted)) => {
                    tracing::info!(task_id = t.id, key = %t.key, "daily alert digest enqueued");
                    state.worker_wake.notify_one();
                }
                Ok(_) => {}
                Err(e) => tracing::error!(error = %e, "cannot enqueue the daily alert digest"),
            }
        }
        tokio::select! {
            _ = tokio::time::sleep(Duration::from_secs(30)) => {}
            _ = shutdown.cancelled() => return,
        }
    }
}
