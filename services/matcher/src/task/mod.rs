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

//!
//! The module is one bookkeeping ([`bookkeeping`]: the works phase, the per-page
//! accounting, checkpoints, the webhook, the new-match listener and the injected
//! [`TaskHooks`]) under two
//! runners: the local one ([`run_match_task`], [`run_next_task`]) and the Redis Streams
//! consumer group of scale-out workers ([`streams`]). Test hooks are injected by the
//! caller ([`TaskControl::hooks`], [`streams::Worker::with_hooks`]); the library reads
//! no environment variable for them.

use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zhiwen_store::{NewTask, Outcome, Task, TaskState, Timestamp};

use crate::{MatchRecord, Matcher, MatcherError, Result};

mod bookkeeping;
mod lease;
mod local;
pub mod streams;

pub use lease::{is_abandoned, worker_name};
pub use local::{run_match_task, run_next_task};

/// Kind of the matching tasks in the task store.
pub const TASK_KIND: &str = "match";

/// Kind of the evidence-capture tasks: one per capture, queued when a match is first
/// recorded (`capture:match:<id>:first`) or on demand, run by the capture worker
/// (`zhiwen-capture`), beside matching.
pub const CAPTURE_TASK_KIND: &str = "capture";

/// The capture task of match `match_id`: `reason` `first_match` has one key per match (so
/// matching a page again queues nothing); an `on_demand` capture's key carries `nonce`.
pub fn capture_task(match_id: i64, reason: &str, nonce: Option<&str>) -> NewTask {
    let key = match nonce {
        Some(n) => format!("capture:match:{match_id}:{reason}:{n}"),
        None => format!("capture:match:{match_id}:{reason}"),
    };
    NewTask {
        key,
        kind: CAPTURE_TASK_KIND.into(),
        params: serde_json::json!({ "match_id": match_id, "reason": reason }),
    }
}

/// The environment variable the `zhiwen` binary reads to abort itself (as `kill -9`
/// would) after that many pages were matched in the process, for crash tests of the real
/// binary. The library never reads it: the binary installs a [`TaskHooks`] that aborts.
pub const ABORT_ENV: &str = "ZHIWEN_MATCH_ABORT_AFTER_PAGES";

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

/// Persisted parameters: the scope resolved at enqueue time. A task "new since the last
/// run" resolves it again when it first starts (kept in its [`Checkpoint::resolved`], so
/// a resumed task matches exactly the pages the interrupted one would have): queued while
/// the task before it ran, it would otherwise take that task's pages again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct TaskParams {
    /// The scope asked for.
    pub scope: Scope,
    /// Pages (and works) changed at or after this time; `None`: all.
    pub since: Option<Timestamp>,
    /// The pages stored after the page of this id are in scope too, whatever their fetch
    /// times (an imported archive's pages carry their old ones): in a task "new since the
    /// last run", the last successful task's [`TaskParams::page_mark`].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_after: Option<i64>,
    /// The greatest page id when this task was queued: the next task "new since the last
    /// run" takes every page stored after it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_mark: Option<i64>,
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
    /// Stream of a task shared by workers ([`streams`]); `None` for a local run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stream: Option<String>,
    /// Every page of a shared task is published to its stream.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub published: bool,
    /// The scope "new since the last run" as resolved when the task first started
    /// ([`TaskParams`] of the task are as resolved when it was queued).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved: Option<TaskParams>,
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
    /// Hooks the runner calls (tests and the binary's crash hook).
    pub hooks: TaskHooks,
}

/// Callbacks a runner calls as it goes; none by default. The library installs none of
/// its own: the binary installs its crash hook ([`ABORT_ENV`]), tests their probes.
#[derive(Debug, Clone, Default)]
pub struct TaskHooks {
    /// Called after each page once the runner has matched `pages` pages (before their
    /// batch is checkpointed or their stream entry acknowledged).
    pub on_pages_done: Option<PagesHook>,
    /// Told of the new matches of each batch, where the webhook is called (the holders'
    /// e-mail alerts, installed by the API and the command line).
    pub on_new_matches: Option<MatchListener>,
}

/// Told of the new matches a task records.
#[async_trait::async_trait]
pub trait NewMatchListener: Send + Sync {
    /// `matches` were first recorded by this batch (not on a licensed domain), whatever
    /// their score. Called once per batch, after the webhook; a failure is the
    /// listener's to log: the matches are stored either way.
    async fn new_matches(&self, matches: &[MatchRecord]);
}

/// A [`NewMatchListener`] installed in [`TaskHooks`].
#[derive(Clone)]
pub struct MatchListener(pub Arc<dyn NewMatchListener>);

impl std::fmt::Debug for MatchListener {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MatchListener").finish_non_exhaustive()
    }
}

impl TaskHooks {
    /// Hooks that call `call` with the pages matched so far once `pages` pages were
    /// matched.
    pub fn after_pages(pages: u64, call: impl Fn(u64) + Send + Sync + 'static) -> Self {
        TaskHooks { on_pages_done: Some(PagesHook { pages, call: Arc::new(call) }), on_new_matches: None }
    }

    /// These hooks, telling `listener` of the new matches.
    pub fn with_listener(mut self, listener: Arc<dyn NewMatchListener>) -> Self {
        self.on_new_matches = Some(MatchListener(listener));
        self
    }
}

/// A callback due after a number of pages. A runner with one matches pages one at a
/// time from that point, so exactly `pages` pages are recorded when it first runs.
#[derive(Clone)]
pub struct PagesHook {
    /// Pages matched by the runner before the callback is due.
    pub pages: u64,
    /// The callback, given the pages matched so far.
    pub call: Arc<dyn Fn(u64) + Send + Sync>,
}

impl std::fmt::Debug for PagesHook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PagesHook").field("pages", &self.pages).finish_non_exhaustive()
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
    pub(crate) fn of(task: &Task, resumed: bool) -> Self {
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

    pub(crate) fn count(&mut self, records: &[MatchRecord]) {
        for r in records {
            match r.outcome {
                Outcome::Inserted => self.matches_new += 1,
                Outcome::Updated => self.matches_updated += 1,
                Outcome::Unchanged => self.matches_unchanged += 1,
            }
        }
    }
}

/// Resolve the scope and enqueue a task. Idempotent: a spec with a key gets the task of
/// that key when there is one; a spec without (a manual run) gets the matching task of
/// the same scope that is still queued or running (interrupted) when there is one, so a
/// request repeated before its task ended never queues a second pass.
pub async fn enqueue(matcher: &Matcher, spec: &TaskSpec) -> Result<Task> {
    Ok(enqueue_task(matcher, spec).await?.0)
}

/// Enqueue the matching of what has just arrived (a work registered or changed, pages
/// stored) and return its task: a task of scope [`Scope::NewSinceLastRun`] that is still
/// queued (it has not started, so it will see the arrival) is reused, else a new one is
/// queued. Unlike [`enqueue`], a running task is never reused: it may have passed its
/// works phase, or its pages, before the arrival. A burst of arrivals before the worker
/// starts is therefore one task.
pub async fn enqueue_arrival(matcher: &Matcher) -> Result<Task> {
    if let Some(t) = pending_task_in(matcher, Scope::NewSinceLastRun, &[TaskState::Queued]).await? {
        return Ok(t);
    }
    let spec = TaskSpec { scope: Scope::NewSinceLastRun, key: Some(format!("match:arrival:{}", Timestamp::now().0)) };
    Ok(enqueue_task(matcher, &spec).await?.0)
}

/// [`enqueue`], and whether the task was created by this call.
pub(crate) async fn enqueue_task(matcher: &Matcher, spec: &TaskSpec) -> Result<(Task, bool)> {
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
    let params = serde_json::to_value(resolve_scope(matcher, spec.scope).await?)
        .map_err(|e| MatcherError::Internal(format!("task parameters: {e}")))?;
    let new = NewTask { key, kind: TASK_KIND.into(), params };
    let (task, outcome) = match tasks.create_task(&new).await {
        Ok(created) => created,
        // Queued under the same key meanwhile (two schedulers at once) with another page
        // mark: that task stands.
        Err(zhiwen_store::StoreError::Conflict { .. }) => match tasks.find_task(&new.key).await? {
            Some(t) if t.kind == TASK_KIND => (t, Outcome::Unchanged),
            _ => return Err(MatcherError::Internal(format!("task {} conflicts and is gone", new.key))),
        },
        Err(e) => return Err(e.into()),
    };
    Ok((task, outcome == Outcome::Inserted))
}

/// `scope` resolved now: the pages and works it covers. "New since the last run" is
/// what changed since the last successful task started, and every page stored after the
/// greatest page id that task saw.
pub(crate) async fn resolve_scope(matcher: &Matcher, scope: Scope) -> Result<TaskParams> {
    // Read before the last success: a page stored in between is in both scopes (matched
    // twice, idempotent), never in neither.
    let page_mark = Some(matcher.stores().pages.max_page_id().await?);
    let (since, stored_after) = match scope {
        Scope::All => (None, None),
        Scope::Since(t) => (Some(t), None),
        Scope::NewSinceLastRun => match last_successful_task(matcher).await? {
            Some(last) => {
                let mark = bookkeeping::scope_of(&last).ok().and_then(|p| p.page_mark);
                (Some(last.started_at.unwrap_or(last.created_at)), mark)
            }
            None => (None, None),
        },
    };
    Ok(TaskParams { scope, since, stored_after, page_mark })
}

/// The matching task of `scope` that has not ended (a running one, which has progress,
/// before the oldest queued one), if any.
async fn pending_task(matcher: &Matcher, scope: Scope) -> Result<Option<Task>> {
    pending_task_in(matcher, scope, &[TaskState::Running, TaskState::Queued]).await
}

/// The matching task of `scope` in the first of `states` that has one, if any.
async fn pending_task_in(matcher: &Matcher, scope: Scope, states: &[TaskState]) -> Result<Option<Task>> {
    let tasks = &matcher.stores().tasks;
    for &state in states {
        let mut after = 0;
        loop {
            let page = tasks.list_tasks(Some(state), Some(TASK_KIND), after, 100).await?;
            let Some(last) = page.last() else { break };
            after = last.id;
            let same = page
                .into_iter()
                .find(|t| serde_json::from_value::<TaskParams>(t.params.clone()).is_ok_and(|p| p.scope == scope));
            if same.is_some() {
                return Ok(same);
            }
        }
    }
    Ok(None)
}

/// The matching task a live worker is running (not one abandoned by a dead worker), if any.
pub(crate) async fn live_running_task(matcher: &Matcher) -> Result<Option<Task>> {
    let tasks = &matcher.stores().tasks;
    let now = Timestamp::now();
    let mut after = 0;
    loop {
        let running = tasks.list_tasks(Some(TaskState::Running), Some(TASK_KIND), after, 100).await?;
        let Some(last) = running.last() else { return Ok(None) };
        after = last.id;
        let lease = matcher.config().lease_seconds;
        if let Some(t) = running.into_iter().find(|t| !is_abandoned(t, lease, now)) {
            return Ok(Some(t));
        }
    }
}

/// Start time of the latest successful matching task.
pub async fn last_success(matcher: &Matcher) -> Result<Option<Timestamp>> {
    Ok(last_successful_task(matcher).await?.map(|t| t.started_at.unwrap_or(t.created_at)))
}

/// The successful matching task that started last.
async fn last_successful_task(matcher: &Matcher) -> Result<Option<Task>> {
    Ok(matcher.stores().tasks.latest_task(TASK_KIND, TaskState::Succeeded).await?)
}
