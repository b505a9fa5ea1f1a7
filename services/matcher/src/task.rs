//! The matching task: persisted, checkpointed, resumable.
//!
//! `zhiwen match` and the scheduler only *enqueue* a task ([`enqueue`]); one worker loop
//! ([`run_next_task`]) executes tasks one at a time: it first resumes a task left
//! `running` by a dead worker (from its checkpoint), else claims the oldest queued one.
//! Enqueueing is idempotent: the scheduler's tasks by their key (one per slot), the
//! others by their scope, so a request whose task is still queued or interrupted gets
//! that task again (a `zhiwen match` killed five times leaves one task, which the next
//! run finishes, not five full passes); a run refused because a live worker is running a
//! matching task leaves nothing queued.
//! A task first indexes the works changed in its scope (and matches changed works
//! against stored pages: the reverse direction), then matches the pages in scope in
//! ascending id order, in batches, writing progress and a checkpoint (last page id
//! done) after each batch. Match upserts are idempotent by (section, page), so the pages
//! of a batch interrupted by a crash are simply matched again: a resumed task ends with
//! exactly the matches of an uninterrupted one.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};
use zhiwen_store::{NewTask, Outcome, Progress, Task, TaskState, Timestamp};

use crate::webhook::Webhook;
use crate::{MatchRecord, Matcher, MatcherError, PageOutcome, Result, VerifiedPages};

/// Kind of the matching tasks in the task store.
pub const TASK_KIND: &str = "match";

/// Environment variable: abort the process (as `kill -9` would) after this many pages
/// were matched in this process. For crash tests of the real binary only.
pub const ABORT_ENV: &str = "ZHIWEN_MATCH_ABORT_AFTER_PAGES";

/// Works handled between two checkpoints of a task.
pub(crate) const WORKS_PER_CHECKPOINT: usize = 50;

/// The works a task goes through after `after_id`, ascending by id, with their
/// `updated_at`: from the task's one read of every work's version (shared with the
/// section cache's check), not listed page by page. A work registered after that read
/// has a later `updated_at` than the task's start, so the next task takes it.
pub(crate) async fn works_after(matcher: &Matcher, after_id: i64) -> Result<Vec<(i64, Timestamp)>> {
    let versions = matcher.epoch_work_versions().await?;
    let mut works: Vec<(i64, Timestamp)> =
        versions.iter().filter(|&(&id, _)| id > after_id).map(|(&id, &at)| (id, Timestamp(at))).collect();
    works.sort_unstable_by_key(|w| w.0);
    Ok(works)
}

/// One work of a task's scope: when it changed in scope (every work without `since`),
/// index it and, in a task scoped by `since`, match it against the stored pages
/// (reverse direction) and notify; the matches recorded (none without `since`), or
/// `None` when the work did not change.
pub(crate) async fn handle_work(
    matcher: &Matcher,
    webhook: &Option<Webhook>,
    since: Option<Timestamp>,
    work_id: i64,
    updated_at: Timestamp,
) -> Result<Option<Vec<MatchRecord>>> {
    if since.is_some_and(|since| updated_at < since) {
        return Ok(None);
    }
    matcher.index_work(work_id).await?;
    if since.is_none() {
        return Ok(Some(Vec::new()));
    }
    let out = matcher.match_work(work_id).await?;
    notify(webhook, matcher, &out.matches).await;
    Ok(Some(out.matches))
}

/// Which pages a task matches.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "scope", content = "since")]
pub enum Scope {
    /// Pages fetched (new or changed) since the start of the last successful matching
    /// task; everything when there was none.
    NewSinceLastRun,
    /// Every page.
    All,
    /// Pages fetched at or after this time.
    Since(Timestamp),
}

/// A matching task to run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskSpec {
    /// Which pages.
    pub scope: Scope,
    /// Idempotency key; `None` for a manual run (a fresh key). The scheduler uses one key
    /// per scheduled slot, so a slot never runs twice.
    pub key: Option<String>,
}

impl TaskSpec {
    /// A manual run of `scope`.
    pub fn new(scope: Scope) -> Self {
        TaskSpec { scope, key: None }
    }
}

/// Persisted parameters: the scope resolved at enqueue time, so a resumed task matches
/// exactly the pages the interrupted one would have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskParams {
    /// The scope asked for.
    pub scope: Scope,
    /// Pages (and works) changed at or after this time; `None`: all.
    pub since: Option<Timestamp>,
}

/// Where a task is.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Checkpoint {
    /// Works with id up to this one are done.
    pub last_work_id: i64,
    /// The works phase is over.
    pub works_done: bool,
    /// Pages with id up to this one are done (published, for a task shared by workers).
    pub last_page_id: i64,
    /// Stream of a task shared by workers ([`crate::distributed`]); `None` for a local run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Every page of a shared task is published to its stream.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub published: bool,
}

/// Progress as reported to a [`ProgressSink`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskProgress {
    /// The task.
    pub task_id: i64,
    /// Items (works and pages) done, including those of earlier runs of this task.
    pub done: u64,
    /// Items in scope.
    pub total: u64,
    /// Pages that could not be matched (no text, undecodable).
    pub failed: u64,
    /// Matches recorded by this run.
    pub matches: u64,
}

/// Receives progress (the CLI draws a progress bar with it).
pub trait ProgressSink: Send + Sync {
    /// Called after every page and work.
    fn update(&self, _progress: &TaskProgress) {}
}

/// A sink that ignores progress.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl ProgressSink for NoProgress {}

/// How a run may be stopped.
#[derive(Debug, Clone, Default)]
pub struct TaskControl {
    /// Set to stop at the next page; the task stays `running` with its checkpoint and
    /// is resumed by the next run (a shutdown, or a test's simulated crash).
    pub cancel: Arc<AtomicBool>,
    /// Stop (as `cancel`) after this many pages matched by this run.
    pub stop_after_pages: Option<u64>,
    /// Abort the process after this many pages (see [`ABORT_ENV`]).
    pub abort_after_pages: Option<u64>,
}

impl TaskControl {
    /// No limits, abort point from [`ABORT_ENV`] when set.
    pub fn from_env() -> Self {
        let abort_after_pages = std::env::var(ABORT_ENV).ok().and_then(|v| v.trim().parse().ok());
        TaskControl { abort_after_pages, ..Default::default() }
    }
}

/// What a run did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskSummary {
    /// The task.
    pub task_id: i64,
    /// Its key.
    pub key: String,
    /// Its state at the end.
    pub state: TaskState,
    /// This run resumed a task interrupted earlier.
    pub resumed: bool,
    /// Works indexed by this run.
    pub works: u64,
    /// Pages matched by this run.
    pub pages: u64,
    /// Pages that failed (no text, undecodable) in this run.
    pub pages_failed: u64,
    /// Matches first recorded by this run.
    pub matches_new: u64,
    /// Matches whose scores changed.
    pub matches_updated: u64,
    /// Matches found again unchanged.
    pub matches_unchanged: u64,
    /// Wall time of this run in milliseconds.
    pub elapsed_ms: u64,
}

impl TaskSummary {
    fn of(task: &Task, resumed: bool) -> Self {
        TaskSummary {
            task_id: task.id,
            key: task.key.clone(),
            state: task.state,
            resumed,
            works: 0,
            pages: 0,
            pages_failed: 0,
            matches_new: 0,
            matches_updated: 0,
            matches_unchanged: 0,
            elapsed_ms: 0,
        }
    }

    fn count(&mut self, records: &[MatchRecord]) {
        for r in records {
            match r.outcome {
                Outcome::Inserted => self.matches_new += 1,
                Outcome::Updated => self.matches_updated += 1,
                Outcome::Unchanged => self.matches_unchanged += 1,
            }
        }
    }
}

/// Workers of this process executing a task, by worker name (a `running` task whose
/// worker is of this process but not in here was left by an interrupted run and may be
/// taken over). Keyed by worker, not task id: one process may serve several stores.
static ACTIVE: Mutex<Option<HashSet<String>>> = Mutex::new(None);

fn is_active_here(worker: &str) -> bool {
    ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).as_ref().is_some_and(|s| s.contains(worker))
}

/// Marks a worker of this process as executing a task while it lives.
pub(crate) struct ActiveGuard(String);

impl ActiveGuard {
    pub(crate) fn new(worker: &str) -> Self {
        ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert_with(HashSet::new).insert(worker.to_owned());
        ActiveGuard(worker.to_owned())
    }
}

impl Drop for ActiveGuard {
    fn drop(&mut self) {
        if let Some(set) = ACTIVE.lock().unwrap_or_else(|p| p.into_inner()).as_mut() {
            set.remove(&self.0);
        }
    }
}

fn host_name() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .filter(|h| !h.is_empty())
        .or_else(|| std::fs::read_to_string("/etc/hostname").ok().map(|h| h.trim().to_owned()))
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "localhost".into())
}

/// A new worker name: `host/pid/nonce`, unique within this process.
pub fn worker_name() -> String {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let nonce = Timestamp::now().0 % 1_000_000;
    format!("{}/{}/{nonce}-{n}", host_name(), std::process::id())
}

/// Has the worker of a `running` task gone away (so the task may be resumed)?
pub fn is_abandoned(task: &Task, lease_seconds: u64, now: Timestamp) -> bool {
    let stale = now.0.saturating_sub(task.updated_at.0) > (lease_seconds as i64).saturating_mul(1000);
    let Some(worker) = task.worker.as_deref() else { return true };
    let mut parts = worker.split('/');
    let (host, pid) = (parts.next().unwrap_or(""), parts.next().and_then(|p| p.parse::<u32>().ok()));
    match pid {
        Some(pid) if host == host_name() => {
            if pid == std::process::id() {
                !is_active_here(worker)
            } else if std::path::Path::new("/proc/self").exists() {
                // Same host: a dead process is seen at once; a reused pid falls back to the lease.
                !std::path::Path::new(&format!("/proc/{pid}")).exists() || stale
            } else {
                stale
            }
        }
        _ => stale,
    }
}

/// Resolve the scope and enqueue a task. Idempotent: a spec with a key gets the task of
/// that key when there is one; a spec without (a manual run) gets the matching task of
/// the same scope that is still queued or running (interrupted) when there is one, so a
/// request repeated before its task ended never queues a second pass.
pub async fn enqueue(matcher: &Matcher, spec: &TaskSpec) -> Result<Task> {
    Ok(enqueue_task(matcher, spec).await?.0)
}

/// [`enqueue`], and whether the task was created by this call.
async fn enqueue_task(matcher: &Matcher, spec: &TaskSpec) -> Result<(Task, bool)> {
    let tasks = &matcher.stores().tasks;
    let key = match &spec.key {
        Some(k) => {
            if let Some(t) = tasks.find_task(k).await? {
                return Ok((t, false));
            }
            k.clone()
        }
        None => {
            if let Some(t) = pending_task(matcher, spec.scope).await? {
                tracing::info!(task_id = t.id, key = %t.key, state = ?t.state, "a matching task of this scope is pending: reusing it");
                return Ok((t, false));
            }
            format!("match:manual:{}", Timestamp::now().0)
        }
    };
    let since = match spec.scope {
        Scope::All => None,
        Scope::Since(t) => Some(t),
        Scope::NewSinceLastRun => last_success(matcher).await?,
    };
    let params = serde_json::to_value(TaskParams { scope: spec.scope, since })
        .map_err(|e| MatcherError::Internal(format!("task parameters: {e}")))?;
    let (task, outcome) = tasks.create_task(&NewTask { key, kind: TASK_KIND.into(), params }).await?;
    Ok((task, outcome == Outcome::Inserted))
}

/// The matching task of `scope` that has not ended (a running one, which has progress,
/// before the oldest queued one), if any.
async fn pending_task(matcher: &Matcher, scope: Scope) -> Result<Option<Task>> {
    let tasks = &matcher.stores().tasks;
    for state in [TaskState::Running, TaskState::Queued] {
        let mut after = 0;
        loop {
            let page = tasks.list_tasks(Some(state), after, 100).await?;
            let Some(last) = page.last() else { break };
            after = last.id;
            let same = page.into_iter().find(|t| {
                t.kind == TASK_KIND
                    && serde_json::from_value::<TaskParams>(t.params.clone()).is_ok_and(|p| p.scope == scope)
            });
            if same.is_some() {
                return Ok(same);
            }
        }
    }
    Ok(None)
}

/// The matching task a live worker is running (not one abandoned by a dead worker), if any.
async fn live_running_task(matcher: &Matcher) -> Result<Option<Task>> {
    let tasks = &matcher.stores().tasks;
    let now = Timestamp::now();
    let mut after = 0;
    loop {
        let running = tasks.list_tasks(Some(TaskState::Running), after, 100).await?;
        let Some(last) = running.last() else { return Ok(None) };
        after = last.id;
        let lease = matcher.config().lease_seconds;
        if let Some(t) = running.into_iter().find(|t| t.kind == TASK_KIND && !is_abandoned(t, lease, now)) {
            return Ok(Some(t));
        }
    }
}

/// Start time of the latest successful matching task.
pub async fn last_success(matcher: &Matcher) -> Result<Option<Timestamp>> {
    let tasks = &matcher.stores().tasks;
    let (mut after, mut best) = (0, None::<Timestamp>);
    loop {
        let page = tasks.list_tasks(Some(TaskState::Succeeded), after, 500).await?;
        let Some(last) = page.last() else { break };
        after = last.id;
        for t in page.iter().filter(|t| t.kind == TASK_KIND) {
            let started = t.started_at.unwrap_or(t.created_at);
            best = Some(best.map_or(started, |b| b.max(started)));
        }
    }
    Ok(best)
}

/// Enqueue `spec` and run the worker loop until that task is over; older queued tasks
/// and an interrupted task are run first. Returns the summary of `spec`'s task.
///
/// Refused with [`MatcherError::AlreadyRunning`] when a live worker (a server, another
/// `zhiwen match`) is running a matching task; the refused run leaves no task queued.
pub async fn run_match_task(
    matcher: &Matcher,
    spec: TaskSpec,
    control: &TaskControl,
    progress: &dyn ProgressSink,
) -> Result<TaskSummary> {
    // Refused before anything is queued when the index is not the store's, or when a
    // live worker runs a task.
    matcher.check_index().await?;
    if let Some(t) = live_running_task(matcher).await? {
        return Err(MatcherError::AlreadyRunning { task_id: t.id, worker: t.worker.unwrap_or_default() });
    }
    let (wanted, created) = enqueue_task(matcher, &spec).await?;
    if wanted.state.is_terminal() {
        return Ok(TaskSummary::of(&wanted, false));
    }
    let worker = worker_name();
    loop {
        let next = match run_next_task(matcher, &worker, control, progress).await {
            Err(e @ MatcherError::AlreadyRunning { .. }) => {
                // Another worker started meanwhile: take back the task this run queued.
                if created {
                    withdraw(matcher, wanted.id).await;
                }
                return Err(e);
            }
            other => other?,
        };
        match next {
            Some(summary) if summary.task_id == wanted.id => return Ok(summary),
            Some(_) => continue,
            None => {
                let t = matcher.stores().tasks.get_task(wanted.id).await?;
                let t = t.ok_or(MatcherError::NotFound { what: "task", id: wanted.id })?;
                return Ok(TaskSummary::of(&t, false));
            }
        }
    }
}

/// Cancel a task this run queued and cannot run, if it is still queued.
async fn withdraw(matcher: &Matcher, task_id: i64) {
    let tasks = &matcher.stores().tasks;
    match tasks.get_task(task_id).await {
        Ok(Some(t)) if t.state == TaskState::Queued => {
            if let Err(e) = tasks.cancel_task(task_id).await {
                tracing::warn!(task_id, error = %e, "cannot withdraw the queued matching task");
            }
        }
        Ok(_) => {}
        Err(e) => tracing::warn!(task_id, error = %e, "cannot withdraw the queued matching task"),
    }
}

/// One step of the worker loop: resume an abandoned `running` matching task, else claim
/// the oldest queued one, and execute it. `Ok(None)`: nothing to do.
/// [`MatcherError::AlreadyRunning`] when a live worker is running one.
pub async fn run_next_task(
    matcher: &Matcher,
    worker: &str,
    control: &TaskControl,
    progress: &dyn ProgressSink,
) -> Result<Option<TaskSummary>> {
    let tasks = &matcher.stores().tasks;
    let now = Timestamp::now();
    let mut after = 0;
    loop {
        let running = tasks.list_tasks(Some(TaskState::Running), after, 100).await?;
        let Some(last) = running.last() else { break };
        after = last.id;
        if let Some(t) = running.into_iter().find(|t| t.kind == TASK_KIND) {
            if !is_abandoned(&t, matcher.config().lease_seconds, now) {
                return Err(MatcherError::AlreadyRunning { task_id: t.id, worker: t.worker.unwrap_or_default() });
            }
            // Two workers may both see it abandoned: only one takes it over.
            match tasks.take_over_task(t.id, t.worker.as_deref(), worker).await? {
                Some(mine) => {
                    tracing::info!(task_id = t.id, key = %t.key, from = ?t.worker, "resuming an interrupted matching task");
                    return execute(matcher, mine, true, control, progress).await.map(Some);
                }
                None => match tasks.get_task(t.id).await? {
                    Some(now) if now.state == TaskState::Running => {
                        return Err(MatcherError::AlreadyRunning {
                            task_id: t.id,
                            worker: now.worker.unwrap_or_default(),
                        });
                    }
                    // It ended meanwhile: look at the running tasks after it.
                    _ => {
                        after = t.id;
                        continue;
                    }
                },
            }
        }
    }
    match tasks.claim_task(Some(TASK_KIND), worker).await? {
        Some(t) => execute(matcher, t, false, control, progress).await.map(Some),
        None => Ok(None),
    }
}

async fn execute(
    matcher: &Matcher,
    task: Task,
    resumed: bool,
    control: &TaskControl,
    sink: &dyn ProgressSink,
) -> Result<TaskSummary> {
    let _active = ActiveGuard::new(task.worker.as_deref().unwrap_or_default());
    let started = Instant::now();
    let mut summary = TaskSummary::of(&task, resumed);
    let result = execute_inner(matcher, &task, control, sink, &mut summary).await;
    summary.elapsed_ms = started.elapsed().as_millis() as u64;
    let tasks = &matcher.stores().tasks;
    match result {
        Ok(()) => {
            summary.state = tasks.finish_task(task.id).await?.state;
            tracing::info!(task_id = task.id, pages = summary.pages, new = summary.matches_new, "matching task done");
            Ok(summary)
        }
        Err(MatcherError::Interrupted { task_id }) => Err(MatcherError::Interrupted { task_id }),
        Err(e) if e.is_retryable() => {
            // Left running: the next run resumes it from the checkpoint.
            tracing::warn!(task_id = task.id, error = %e, "matching task interrupted by a transient failure");
            Err(e)
        }
        Err(e) => {
            tasks.fail_task(task.id, &e.to_string()).await?;
            Err(e)
        }
    }
}

async fn execute_inner(
    matcher: &Matcher,
    task: &Task,
    control: &TaskControl,
    sink: &dyn ProgressSink,
    summary: &mut TaskSummary,
) -> Result<()> {
    let params: TaskParams = serde_json::from_value(task.params.clone())
        .map_err(|e| MatcherError::BadTask { task_id: task.id, reason: e.to_string() })?;
    let mut cp: Checkpoint = match &task.checkpoint {
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| MatcherError::BadTask { task_id: task.id, reason: format!("checkpoint: {e}") })?,
        None => Checkpoint::default(),
    };
    if cp.stream.take().is_some() {
        // Begun by scale-out workers: published pages may not all be matched yet.
        cp.last_page_id = 0;
        cp.published = false;
    }
    // An index that lost its data (or is another store's) finds nothing: refuse it.
    matcher.check_index().await?;
    // Sections cached by an earlier task are checked against the store once more.
    matcher.revalidate_sections();
    let s = matcher.stores();
    let webhook = Webhook::from_config(&matcher.config().webhook)?;
    let pages_in_scope = PageScope::read(s, params.since).await?;

    // Totals for the progress bar: works and pages in scope.
    let total_works = matcher.epoch_work_versions().await?.len() as u64;
    let mut progress = task.progress;
    progress.total = total_works + pages_in_scope.total(s).await?;
    let mut report =
        TaskProgress { task_id: task.id, done: progress.done, total: progress.total, ..Default::default() };

    // Works changed in scope: index them; match them against stored pages (reverse
    // direction) unless every page is matched below anyway.
    if !cp.works_done {
        for chunk in works_after(matcher, cp.last_work_id).await?.chunks(WORKS_PER_CHECKPOINT) {
            for &(work_id, updated_at) in chunk {
                check_stop(control, task.id, 0)?;
                if let Some(matches) = handle_work(matcher, &webhook, params.since, work_id, updated_at).await? {
                    summary.count(&matches);
                    summary.works += 1;
                }
                progress.done += 1;
                report.done = progress.done;
                sink.update(&report);
            }
            cp.last_work_id = chunk.last().map_or(cp.last_work_id, |w| w.0);
            save(matcher, task.id, progress, &cp).await?;
        }
        cp.works_done = true;
    }

    // Pages in scope, ascending id, one checkpoint per batch, three batches at a time:
    // the next-but-one batch is listed, fingerprinted and looked up (which writes
    // nothing), the next one has its fingerprints written and is verified, and the
    // current one is recorded and checkpointed, so the cores and the store work at the
    // same time. Only a batch whose matches are recorded is checkpointed; the writes of a
    // batch verified but not recorded (a crash) are idempotent and repeated by the
    // resumed task.
    let batch = matcher.config().batch_size.max(1) as u32;
    let pages_in_scope = &pages_in_scope;
    let next_batch = |after: i64| async move { pages_in_scope.batch_after(s, after, batch).await };
    let limited = control.stop_after_pages.is_some() || control.abort_after_pages.is_some();
    let prepare = |ids: Vec<i64>| {
        let m = matcher.clone();
        AbortOnDrop(tokio::spawn(async move { m.prepare_pages(ids).await }))
    };
    // A task with a stop or abort limit matches exactly as many pages as it may: no
    // batch is prepared ahead for it, and each is recorded before the next starts.
    let listed = |found: Option<(i64, Vec<i64>)>| {
        found.map(|(last, ids)| {
            let handle = (!limited).then(|| prepare(ids.clone()));
            (last, ids, handle)
        })
    };
    let mut books = Books {
        matcher,
        task_id: task.id,
        control,
        sink,
        webhook: &webhook,
        summary,
        progress,
        report,
        cp,
        pages_this_run: 0,
    };
    let mut ahead = listed(next_batch(books.cp.last_page_id).await?);
    // The batch verified in the previous round, recorded in this one.
    let mut verified: Option<(i64, VerifiedPages)> = None;
    while ahead.is_some() || verified.is_some() {
        let current = ahead.take();
        if let Some((last, _, _)) = &current {
            ahead = listed(next_batch(*last).await?);
        }
        let pages_so_far = books.pages_this_run;
        let verify_current = async {
            let Some((last, ids, prepared)) = current else { return Ok(None) };
            match prepared {
                Some(mut handle) => {
                    let prepared =
                        (&mut handle.0).await.map_err(|e| MatcherError::Internal(format!("preparing pages: {e}")))?;
                    Ok(Some((last, Batch::Verified(matcher.verify_pages(prepared).await?))))
                }
                None => {
                    // The whole batch at once (fingerprints written in one batch write), or
                    // only as many pages as a stop or abort limit still allows.
                    let limit = [control.stop_after_pages, control.abort_after_pages]
                        .into_iter()
                        .flatten()
                        .map(|n| n.saturating_sub(pages_so_far).max(1) as usize)
                        .min()
                        .unwrap_or(ids.len());
                    let mut results = Vec::with_capacity(ids.len());
                    for chunk in ids.chunks(limit.max(1)) {
                        results.extend(matcher.match_pages(chunk.to_vec()).await?);
                        if results.len() >= limit {
                            break;
                        }
                    }
                    Ok::<_, MatcherError>(Some((last, Batch::Recorded(results))))
                }
            }
        };
        let record_previous = async {
            let Some((last, pages)) = verified.take() else { return Ok(None) };
            Ok::<_, MatcherError>(Some((last, matcher.record_pages(pages).await?)))
        };
        let (current, previous) = tokio::join!(verify_current, record_previous);
        // The batch before is checkpointed first, even when this one failed.
        if let Some((last, results)) = previous? {
            books.batch_done(last, results).await?;
        }
        match current? {
            Some((last, Batch::Verified(pages))) => verified = Some((last, pages)),
            Some((last, Batch::Recorded(results))) => books.batch_done(last, results).await?,
            None => {}
        }
    }
    Ok(())
}

/// A batch after its round of a task: verified (recorded in the next round), or matched
/// and recorded at once (a task with a page limit).
enum Batch {
    Verified(VerifiedPages),
    Recorded(Vec<(i64, Result<PageOutcome>)>),
}

/// A run's counts and checkpoint while it goes through the pages.
struct Books<'a> {
    matcher: &'a Matcher,
    task_id: i64,
    control: &'a TaskControl,
    sink: &'a dyn ProgressSink,
    webhook: &'a Option<Webhook>,
    summary: &'a mut TaskSummary,
    progress: Progress,
    report: TaskProgress,
    cp: Checkpoint,
    /// Pages matched by this run (not by earlier runs of the task).
    pages_this_run: u64,
}

impl Books<'_> {
    /// Count a recorded batch (ending at page `last`), notify its new matches and
    /// checkpoint it.
    async fn batch_done(&mut self, last: i64, results: Vec<(i64, Result<PageOutcome>)>) -> Result<()> {
        let mut new_records = Vec::new();
        for (page_id, r) in results {
            match r {
                Ok(out) => {
                    self.summary.count(&out.matches);
                    self.report.matches += out.matches.len() as u64;
                    new_records.extend(out.matches);
                }
                Err(e @ (MatcherError::Text { .. } | MatcherError::NotFound { .. })) => {
                    tracing::debug!(page_id, error = %e, "page not matched");
                    self.progress.failed += 1;
                    self.summary.pages_failed += 1;
                }
                Err(e) => return Err(e),
            }
            self.summary.pages += 1;
            self.pages_this_run += 1;
            self.progress.done += 1;
            self.report.done = self.progress.done;
            self.report.failed = self.progress.failed;
            self.sink.update(&self.report);
            if self.control.abort_after_pages.is_some_and(|n| self.pages_this_run >= n) {
                tracing::error!(
                    task_id = self.task_id,
                    pages = self.pages_this_run,
                    "{ABORT_ENV} reached: aborting the process"
                );
                std::process::abort();
            }
            check_stop(self.control, self.task_id, self.pages_this_run)?;
        }
        notify(self.webhook, self.matcher, &new_records).await;
        self.cp.last_page_id = last;
        save(self.matcher, self.task_id, self.progress, &self.cp).await
    }
}

/// The pages a task matches, taken in ascending id batches.
pub(crate) enum PageScope {
    /// Every stored page, listed batch by batch.
    All,
    /// The pages fetched since a time: their ids, read once from the fetch-time index
    /// (a daily task reads its day's pages, not a listing of every page ever stored).
    Ids(Vec<i64>),
}

impl PageScope {
    /// The scope of a task whose parameters say `since`.
    pub(crate) async fn read(stores: &zhiwen_store::Stores, since: Option<Timestamp>) -> Result<Self> {
        Ok(match since {
            None => PageScope::All,
            Some(since) => PageScope::Ids(stores.pages.page_ids_fetched_since(since, 0).await?),
        })
    }

    /// Number of pages in scope.
    pub(crate) async fn total(&self, stores: &zhiwen_store::Stores) -> Result<u64> {
        Ok(match self {
            PageScope::All => stores.pages.count_pages().await?,
            PageScope::Ids(ids) => ids.len() as u64,
        })
    }

    /// The next at most `limit` pages with id greater than `after`, with the id to
    /// continue after; `None` when none is left.
    pub(crate) async fn batch_after(
        &self,
        stores: &zhiwen_store::Stores,
        after: i64,
        limit: u32,
    ) -> Result<Option<(i64, Vec<i64>)>> {
        Ok(match self {
            PageScope::All => {
                let refs = stores.pages.list_pages(None, after, limit).await?;
                refs.last().map(|last| (last.id, refs.iter().map(|r| r.id).collect()))
            }
            PageScope::Ids(ids) => {
                let start = ids.partition_point(|&id| id <= after);
                let chunk = &ids[start..ids.len().min(start + limit as usize)];
                chunk.last().map(|&last| (last, chunk.to_vec()))
            }
        })
    }
}

/// A spawned task that is stopped when its handle is dropped (a batch prepared ahead
/// is not wanted once the task stops).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn check_stop(control: &TaskControl, task_id: i64, pages: u64) -> Result<()> {
    if control.cancel.load(Ordering::SeqCst) || control.stop_after_pages.is_some_and(|n| pages >= n) {
        return Err(MatcherError::Interrupted { task_id });
    }
    Ok(())
}

/// Checkpoint a task. Only when the index is still the one the store was indexed into
/// ([`Matcher::check_index`]): the pages before the checkpoint were looked up in a whole
/// index, and are never matched again by this task.
pub(crate) async fn save(matcher: &Matcher, id: i64, progress: Progress, cp: &Checkpoint) -> Result<()> {
    matcher.check_index().await?;
    let value = serde_json::to_value(cp).map_err(|e| MatcherError::Internal(format!("checkpoint: {e}")))?;
    matcher.stores().tasks.update_progress(id, progress, Some(&value)).await?;
    Ok(())
}

pub(crate) async fn notify(webhook: &Option<Webhook>, matcher: &Matcher, records: &[MatchRecord]) {
    let Some(hook) = webhook else { return };
    let min = matcher.config().webhook.min_score;
    let fresh: Vec<&MatchRecord> =
        records.iter().filter(|r| r.outcome == Outcome::Inserted && r.score >= min).collect();
    if fresh.is_empty() {
        return;
    }
    if let Err(e) = hook.send(&fresh).await {
        tracing::error!(error = %e, matches = fresh.len(), "webhook delivery failed; the matches are stored");
    }
}
