//! The local runner: one process executes one matching task at a time, works first,
//! then the pages in ascending id batches, pipelined three batches deep, with a
//! checkpoint after each batch.

use std::sync::atomic::Ordering;
use std::time::Instant;

use zhiwen_store::{Progress, Task, TaskState, Timestamp};

use super::bookkeeping::{notify, Announce, PageCounter, PageResult, PageScope, TaskBooks, WorkObserver};
use super::lease::{is_abandoned, worker_name, ActiveGuard};
use super::{
    enqueue_task, live_running_task, ProgressSink, TaskControl, TaskProgress, TaskSpec, TaskSummary, TASK_KIND,
};
use crate::{MatchRecord, Matcher, MatcherError, PageOutcome, Result, VerifiedPages};

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
        let running = tasks.list_tasks(Some(TaskState::Running), Some(TASK_KIND), after, 1).await?;
        let Some(t) = running.into_iter().next() else { break };
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
                    return Err(MatcherError::AlreadyRunning { task_id: t.id, worker: now.worker.unwrap_or_default() });
                }
                // It ended meanwhile: look at the running tasks after it.
                _ => after = t.id,
            },
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
    let mut books = TaskBooks::of(matcher, task)?;
    if books.cp.stream.take().is_some() {
        // Begun by scale-out workers: published pages may not all be matched yet.
        books.cp.last_page_id = 0;
        books.cp.published = false;
    }
    // An index that lost its data (or is another store's) finds nothing: refuse it.
    matcher.check_index().await?;
    // Sections cached by an earlier task are checked against the store once more.
    matcher.revalidate_sections();
    let s = matcher.stores();
    let announce = Announce::new(matcher, &control.hooks)?;
    let params = books.scope(task).await?;
    let pages_in_scope = PageScope::read(s, &params).await?;

    // Totals for the progress bar: works and pages in scope.
    let total_works = matcher.epoch_work_versions().await?.len() as u64;
    books.progress.total = total_works + pages_in_scope.total(s).await?;
    let report =
        TaskProgress { task_id: task.id, done: books.progress.done, total: books.progress.total, ..Default::default() };

    // Works changed in scope: index them; match them against stored pages (reverse
    // direction) unless every page is matched below anyway.
    let mut works = Works { control, sink, task_id: task.id, summary, report };
    books.index_works(&announce, params.since, &mut works).await?;
    let Works { summary, report, .. } = works;

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
    let counter = PageCounter::new(control.hooks.clone());
    let hook_limit = counter.hook_limit();
    let limited = control.stop_after_pages.is_some() || hook_limit.is_some();
    let prepare = |ids: Vec<i64>| {
        let m = matcher.clone();
        AbortOnDrop(tokio::spawn(async move { m.prepare_pages(ids).await }))
    };
    // A task with a stop limit or a page hook matches exactly as many pages as it may: no
    // batch is prepared ahead for it, and each is recorded before the next starts.
    let listed = |found: Option<(i64, Vec<i64>)>| {
        found.map(|(last, ids)| {
            let handle = (!limited).then(|| prepare(ids.clone()));
            (last, ids, handle)
        })
    };
    let mut books = RunBooks { task: books, control, sink, announce: &announce, summary, report, counter };
    let mut ahead = listed(next_batch(books.task.cp.last_page_id).await?);
    // The batch verified in the previous round, recorded in this one.
    let mut verified: Option<(i64, VerifiedPages)> = None;
    while ahead.is_some() || verified.is_some() {
        let current = ahead.take();
        if let Some((last, _, _)) = &current {
            ahead = listed(next_batch(*last).await?);
        }
        let pages_so_far = books.counter.pages;
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
                    // only as many pages as a stop limit or a page hook still allows.
                    let limit = [control.stop_after_pages, hook_limit]
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

/// Counts the works phase of a local run into its summary and progress report.
struct Works<'a, 'b> {
    control: &'a TaskControl,
    sink: &'a dyn ProgressSink,
    task_id: i64,
    summary: &'b mut TaskSummary,
    report: TaskProgress,
}

impl WorkObserver for Works<'_, '_> {
    fn before(&mut self) -> Result<()> {
        check_stop(self.control, self.task_id, 0)
    }

    fn done(&mut self, progress: &Progress, matches: Option<&[MatchRecord]>) {
        if let Some(matches) = matches {
            self.summary.count(matches);
            self.summary.works += 1;
        }
        self.report.done = progress.done;
        self.sink.update(&self.report);
    }
}

/// A run's counts and checkpoint while it goes through the pages.
struct RunBooks<'a, 'b> {
    task: TaskBooks<'a>,
    control: &'a TaskControl,
    sink: &'a dyn ProgressSink,
    announce: &'a Announce,
    summary: &'b mut TaskSummary,
    report: TaskProgress,
    counter: PageCounter,
}

impl RunBooks<'_, '_> {
    /// Count a recorded batch (ending at page `last`), notify its new matches and
    /// checkpoint it.
    async fn batch_done(&mut self, last: i64, results: Vec<(i64, Result<PageOutcome>)>) -> Result<()> {
        let task_id = self.task.task_id;
        let mut new_records = Vec::new();
        for (page_id, r) in results {
            let before = new_records.len();
            match self.counter.page(page_id, r, &mut new_records)? {
                PageResult::Matched(n) => {
                    self.summary.count(&new_records[before..]);
                    self.report.matches += n as u64;
                }
                PageResult::Failed => {
                    self.task.progress.failed += 1;
                    self.summary.pages_failed += 1;
                }
            }
            self.summary.pages += 1;
            self.task.progress.done += 1;
            self.report.done = self.task.progress.done;
            self.report.failed = self.task.progress.failed;
            self.sink.update(&self.report);
            self.counter.page_done();
            check_stop(self.control, task_id, self.counter.pages)?;
        }
        notify(self.announce, self.task.matcher, &new_records).await;
        self.task.cp.last_page_id = last;
        self.task.save().await
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
