//! The bookkeeping both runners share (the local one, [`super::local`], and the Redis
//! Streams one, [`super::streams`]): the works phase of a task, the per-page accounting
//! with the injected page hook, the checkpoint, the announcement of new matches (the
//! webhook and the injected listener) and the pages in scope.

use zhiwen_store::{Outcome, Progress, Task, Timestamp};

use super::{Checkpoint, MatchListener, TaskHooks};
use crate::webhook::Webhook;
use crate::{MatchRecord, Matcher, MatcherError, PageOutcome, Result};

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
    announce: &Announce,
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
    notify(announce, matcher, &out.matches).await;
    Ok(Some(out.matches))
}

/// The checkpointed state of one task while a runner works on it.
pub(crate) struct TaskBooks<'a> {
    pub(crate) matcher: &'a Matcher,
    pub(crate) task_id: i64,
    pub(crate) progress: Progress,
    pub(crate) cp: Checkpoint,
}

/// Told about each work of the works phase ([`TaskBooks::index_works`]).
pub(crate) trait WorkObserver {
    /// Before a work is handled; an error stops the phase.
    fn before(&mut self) -> Result<()> {
        Ok(())
    }
    /// After a work was handled, with the task's progress and the matches recorded for
    /// it (`None`: it did not change in scope).
    fn done(&mut self, _progress: &Progress, _matches: Option<&[MatchRecord]>) {}
}

/// A [`WorkObserver`] that wants nothing.
pub(crate) struct NoObserver;

impl WorkObserver for NoObserver {}

impl<'a> TaskBooks<'a> {
    /// The books of `task`, from its stored progress and checkpoint.
    pub(crate) fn of(matcher: &'a Matcher, task: &Task) -> Result<Self> {
        Ok(TaskBooks { matcher, task_id: task.id, progress: task.progress, cp: checkpoint(task)? })
    }

    /// The works phase, from the checkpoint on: every work changed in scope is indexed
    /// (and, in a task scoped by `since`, matched against the stored pages and
    /// announced), with a checkpoint every [`WORKS_PER_CHECKPOINT`] works.
    pub(crate) async fn index_works(
        &mut self,
        announce: &Announce,
        since: Option<Timestamp>,
        observer: &mut (dyn WorkObserver + Send),
    ) -> Result<()> {
        if self.cp.works_done {
            return Ok(());
        }
        for chunk in works_after(self.matcher, self.cp.last_work_id).await?.chunks(WORKS_PER_CHECKPOINT) {
            for &(work_id, updated_at) in chunk {
                observer.before()?;
                let matches = handle_work(self.matcher, announce, since, work_id, updated_at).await?;
                self.progress.done += 1;
                observer.done(&self.progress, matches.as_deref());
            }
            self.cp.last_work_id = chunk.last().map_or(self.cp.last_work_id, |w| w.0);
            self.save().await?;
        }
        self.cp.works_done = true;
        Ok(())
    }

    /// The scope the task matches. A task "new since the last run" that starts for the
    /// first time (nothing done yet) resolves it now, from the last successful task as it
    /// is now, and keeps it in its checkpoint: queued while the task before it ran, it
    /// would otherwise match that task's pages again. Resumed, it keeps what it resolved.
    pub(crate) async fn scope(&mut self, task: &Task) -> Result<super::TaskParams> {
        if let Some(p) = self.cp.resolved {
            return Ok(p);
        }
        let queued = params(task)?;
        if queued.scope != super::Scope::NewSinceLastRun || self.cp != Checkpoint::default() {
            return Ok(queued);
        }
        let now = super::resolve_scope(self.matcher, queued.scope).await?;
        self.cp.resolved = Some(now);
        self.save().await?;
        Ok(now)
    }

    /// Write the progress and the checkpoint.
    pub(crate) async fn save(&self) -> Result<()> {
        save(self.matcher, self.task_id, self.progress, &self.cp).await
    }
}

/// The checkpoint of a task (the default when it has none yet).
pub(crate) fn checkpoint(task: &Task) -> Result<Checkpoint> {
    match &task.checkpoint {
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| MatcherError::BadTask { task_id: task.id, reason: format!("checkpoint: {e}") }),
        None => Ok(Checkpoint::default()),
    }
}

/// The parameters of a task as queued.
pub(crate) fn params(task: &Task) -> Result<super::TaskParams> {
    serde_json::from_value(task.params.clone())
        .map_err(|e| MatcherError::BadTask { task_id: task.id, reason: e.to_string() })
}

/// The scope a task matches: as resolved when it first started, else as queued.
pub(crate) fn scope_of(task: &Task) -> Result<super::TaskParams> {
    match checkpoint(task)?.resolved {
        Some(p) => Ok(p),
        None => params(task),
    }
}

/// What became of one page of a batch.
pub(crate) enum PageResult {
    /// Matched; its matches are in the batch's records.
    Matched(usize),
    /// It could not be matched (no text, undecodable, gone): counted, not an error.
    Failed,
}

/// The per-page accounting of a runner: the pages it matched, and the injected hook
/// called after each of them.
pub(crate) struct PageCounter {
    hooks: TaskHooks,
    /// Pages matched by this runner (not by earlier runs of a task).
    pub(crate) pages: u64,
}

impl PageCounter {
    pub(crate) fn new(hooks: TaskHooks) -> Self {
        PageCounter { hooks, pages: 0 }
    }

    /// The most pages this runner may match before the hook is due (it then matches
    /// one page at a time, so exactly that many are recorded when the hook runs).
    pub(crate) fn hook_limit(&self) -> Option<u64> {
        self.hooks.on_pages_done.as_ref().map(|h| h.pages)
    }

    /// Account one page: its matches go to `records`; a page that cannot be matched is
    /// [`PageResult::Failed`]; any other error is returned (the batch is not done).
    pub(crate) fn page(
        &mut self,
        page_id: i64,
        result: Result<PageOutcome>,
        records: &mut Vec<MatchRecord>,
    ) -> Result<PageResult> {
        let out = match result {
            Ok(out) => {
                let n = out.matches.len();
                records.extend(out.matches);
                PageResult::Matched(n)
            }
            Err(e @ (MatcherError::Text { .. } | MatcherError::NotFound { .. })) => {
                tracing::debug!(page_id, error = %e, "page not matched");
                PageResult::Failed
            }
            Err(e) => return Err(e),
        };
        Ok(out)
    }

    /// Count a page as done by this runner (after [`PageCounter::page`] and the
    /// runner's own accounting), and call the page hook once it is due.
    pub(crate) fn page_done(&mut self) {
        self.pages += 1;
        if let Some(hook) = self.hooks.on_pages_done.as_ref().filter(|h| self.pages >= h.pages) {
            (hook.call)(self.pages);
        }
    }
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

/// Where new matches are announced: the webhook (if configured) and the listener of
/// the task's hooks (if installed).
#[derive(Debug, Clone, Default)]
pub(crate) struct Announce {
    pub(crate) webhook: Option<Webhook>,
    pub(crate) listener: Option<MatchListener>,
}

impl Announce {
    /// The configured webhook and `hooks`' listener.
    pub(crate) fn new(matcher: &Matcher, hooks: &TaskHooks) -> Result<Self> {
        Ok(Announce {
            webhook: Webhook::from_config(&matcher.config().webhook)?,
            listener: hooks.on_new_matches.clone(),
        })
    }
}

/// Announce the new matches: to the webhook those of at least its score (a failed
/// delivery is logged: the matches are stored), to the listener all of them.
pub(crate) async fn notify(announce: &Announce, matcher: &Matcher, records: &[MatchRecord]) {
    let fresh: Vec<&MatchRecord> = records.iter().filter(|r| r.outcome == Outcome::Inserted && !r.licensed).collect();
    if fresh.is_empty() {
        return;
    }
    if let Some(hook) = &announce.webhook {
        let min = matcher.config().webhook.min_score;
        let scored: Vec<&MatchRecord> = fresh.iter().copied().filter(|r| r.score >= min).collect();
        if !scored.is_empty() {
            if let Err(e) = hook.send(&scored).await {
                tracing::error!(error = %e, matches = scored.len(), "webhook delivery failed; the matches are stored");
            }
        }
    }
    if let Some(listener) = &announce.listener {
        let owned: Vec<MatchRecord> = fresh.into_iter().cloned().collect();
        listener.0.new_matches(&owned).await;
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
    /// The scope of a task with these parameters: every page, or the pages fetched since
    /// `since` and those stored after `stored_after` (by id, whatever their fetch times).
    pub(crate) async fn read(stores: &zhiwen_store::Stores, params: &super::TaskParams) -> Result<Self> {
        let Some(since) = params.since else { return Ok(PageScope::All) };
        let mut ids = stores.pages.page_ids_fetched_since(since, 0).await?;
        if let Some(mut after) = params.stored_after {
            let fetched = ids.len();
            loop {
                let batch = stores.pages.list_pages(None, after, 1000).await?;
                let Some(last) = batch.last() else { break };
                after = last.id;
                ids.extend(batch.iter().map(|r| r.id));
            }
            if ids.len() > fetched {
                ids.sort_unstable();
                ids.dedup();
            }
        }
        Ok(PageScope::Ids(ids))
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
