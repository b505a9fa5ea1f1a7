//! Scale-out: any number of `zhiwen worker` processes share matching tasks through one
//! Redis Stream per task and the consumer group [`GROUP`].
//!
//! - **Coordinating.** A worker that claims a queued matching task from the task store
//!   (atomic: one claimant) indexes the works in its scope (as a local run does), then
//!   XADDs the ids of the pages in scope to the task's stream in batches of
//!   `batch_size`, writing a checkpoint (last page id published) after each XADD. The
//!   task's stream is registered in a Redis set, so every worker finds it. A coordinator
//!   that dies is replaced by any worker that sees the task abandoned; entries published
//!   twice by the crash window are harmless (below).
//! - **Matching.** Every worker reads the registered streams with XREADGROUP in group
//!   [`GROUP`], matches the pages of an entry and XACKs it. Entries a dead (or stuck)
//!   worker left pending longer than `workers.claim_idle_ms` are taken over with
//!   XAUTOCLAIM. Match upserts are idempotent by (section, page) and a page's matches do
//!   not depend on which process computes them, so a redelivered entry changes nothing.
//! - **Finishing.** When the coordinator has published every page and the group has
//!   nothing pending and nothing undelivered, any worker marks the task succeeded and
//!   drops its stream.
//!
//! Only plain Redis commands on one stream key per task: a Redis Cluster works as it is
//! (each stream lives in one slot); no cluster code here.

use std::time::Duration;

use redis::aio::ConnectionManager;
use redis::streams::{StreamAutoClaimOptions, StreamAutoClaimReply, StreamId, StreamReadOptions, StreamReadReply};
use redis::AsyncCommands;
use serde::{Deserialize, Serialize};
use zhiwen_store::{Task, TaskState, Timestamp};

use super::bookkeeping::{checkpoint, notify, Announce, NoObserver, PageCounter, PageResult, PageScope, TaskBooks};
use super::lease::{is_abandoned, worker_name, ActiveGuard};
use super::{TaskHooks, TASK_KIND};
pub use crate::config::WorkersConfig;
use crate::{Matcher, MatcherError, Result};

/// The consumer group of the matching workers.
pub const GROUP: &str = "matchers";

fn stream_err(op: &'static str) -> impl FnOnce(redis::RedisError) -> MatcherError {
    move |source| MatcherError::Stream { op, source }
}

/// Where the worker's streams live.
#[derive(Debug, Clone)]
pub struct StreamSettings {
    /// Redis URL.
    pub url: String,
    /// Key prefix (the index's prefix, so one deployment shares one namespace).
    pub prefix: String,
    /// Worker knobs.
    pub workers: WorkersConfig,
}

/// What one worker did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct WorkerSummary {
    /// Tasks this worker coordinated (published).
    pub coordinated: u64,
    /// Tasks this worker marked succeeded.
    pub finished: u64,
    /// Stream entries this worker acknowledged.
    pub entries: u64,
    /// Of those, entries taken over from another worker.
    pub reclaimed: u64,
    /// Pages matched.
    pub pages: u64,
    /// Pages that could not be matched (no text).
    pub pages_failed: u64,
    /// Matches recorded (new, changed or unchanged).
    pub matches: u64,
}

/// When a worker stops.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopWhen {
    /// Never (until the shutdown future completes).
    Never,
    /// When no matching task is queued or running and no stream has entries.
    Idle,
}

/// A worker: one Redis connection, one consumer name.
pub struct Worker {
    matcher: Matcher,
    redis: ConnectionManager,
    settings: StreamSettings,
    name: String,
    /// Where new matches are announced (the webhook, the hooks' listener).
    announce: Announce,
    /// Stream of the last entry handled: a new task's first entry revalidates the
    /// matcher's section cache (works may have changed in another process since).
    last_stream: Option<String>,
    /// The per-page accounting and the injected hooks (the binary's crash hook runs
    /// before the entry of its page is acknowledged).
    counter: PageCounter,
}

impl std::fmt::Debug for Worker {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Worker").field("name", &self.name).field("prefix", &self.settings.prefix).finish()
    }
}

impl Worker {
    /// Connect to Redis.
    pub async fn connect(matcher: Matcher, settings: StreamSettings) -> Result<Worker> {
        let client = redis::Client::open(settings.url.as_str()).map_err(stream_err("connect"))?;
        // XREADGROUP blocks up to `block_ms`: the response timeout must outlast it. The
        // client's default (500 ms) failed every read that waited its whole block, and
        // with it the worker process (issue #29's benchmark: a worker exited every few
        // seconds while a task's stream had no entry for it).
        let timeout = Duration::from_millis(settings.workers.block_ms) + Duration::from_secs(5);
        let config = redis::aio::ConnectionManagerConfig::new().set_response_timeout(Some(timeout));
        let redis = ConnectionManager::new_with_config(client, config).await.map_err(stream_err("connect"))?;
        let announce = Announce::new(&matcher, &TaskHooks::default())?;
        Ok(Worker {
            matcher,
            redis,
            settings,
            name: worker_name(),
            announce,
            last_stream: None,
            counter: PageCounter::new(TaskHooks::default()),
        })
    }

    /// Call `hooks` as pages are matched (the count is of pages matched by this worker).
    pub fn with_hooks(mut self, hooks: TaskHooks) -> Self {
        self.announce.listener = hooks.on_new_matches.clone();
        self.counter = PageCounter::new(hooks);
        self
    }

    /// This worker's consumer name (`host/pid/nonce`).
    pub fn name(&self) -> &str {
        &self.name
    }

    fn active_key(&self) -> String {
        format!("{}:match:streams", self.settings.prefix)
    }

    /// The stream of a task.
    pub fn stream_key(&self, task_id: i64) -> String {
        format!("{}:match:task:{task_id}", self.settings.prefix)
    }

    fn task_of(&self, key: &str) -> Option<i64> {
        key.strip_prefix(&format!("{}:match:task:", self.settings.prefix))?.parse().ok()
    }

    /// Run until `stop` says so or `shutdown` completes.
    pub async fn run(
        &mut self,
        stop: StopWhen,
        shutdown: impl std::future::Future<Output = ()>,
    ) -> Result<WorkerSummary> {
        let mut summary = WorkerSummary::default();
        tokio::pin!(shutdown);
        loop {
            let step = async {
                let coordinated = self.coordinate(&mut summary).await?;
                let consumed = self.consume(&mut summary).await?;
                self.finish_drained(&mut summary).await?;
                Ok::<_, MatcherError>(coordinated || consumed)
            };
            let busy = tokio::select! {
                r = step => r?,
                () = &mut shutdown => return Ok(summary),
            };
            if !busy && stop == StopWhen::Idle && self.idle().await? {
                return Ok(summary);
            }
        }
    }

    /// No matching task queued or running.
    async fn idle(&self) -> Result<bool> {
        let tasks = &self.matcher.stores().tasks;
        for state in [TaskState::Queued, TaskState::Running] {
            if !tasks.list_tasks(Some(state), Some(TASK_KIND), 0, 1).await?.is_empty() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Claim a queued task, or take over an abandoned one whose pages are not all
    /// published, and publish it. `true` when there was one.
    async fn coordinate(&mut self, summary: &mut WorkerSummary) -> Result<bool> {
        let tasks = self.matcher.stores().tasks.clone();
        let now = Timestamp::now();
        let mut after = 0;
        let mut orphan = None;
        let mut live = false;
        'scan: loop {
            let running = tasks.list_tasks(Some(TaskState::Running), Some(TASK_KIND), after, 100).await?;
            let Some(last) = running.last() else { break };
            after = last.id;
            for t in running {
                let cp = checkpoint(&t)?;
                if !cp.published && is_abandoned(&t, self.matcher.config().lease_seconds, now) {
                    orphan = Some(t);
                    break 'scan;
                }
                live = true;
            }
        }
        let task = match orphan {
            // Two workers may both see it abandoned: only one takes it over.
            Some(t) => match tasks.take_over_task(t.id, t.worker.as_deref(), &self.name).await? {
                Some(mine) => {
                    tracing::info!(task_id = t.id, from = ?t.worker, "taking over the coordination of an abandoned task");
                    mine
                }
                None => return Ok(true),
            },
            // One task at a time, as a local run: a task started while another is still
            // matching would resolve its scope from the success before that one and match
            // its pages again. The queued task gathers the arrivals meanwhile.
            None if live => return Ok(false),
            None => match tasks.claim_task(Some(TASK_KIND), &self.name).await? {
                Some(t) => t,
                None => return Ok(false),
            },
        };
        let _active = ActiveGuard::new(&self.name);
        self.publish(&task).await?;
        summary.coordinated += 1;
        Ok(true)
    }

    async fn publish(&mut self, task: &Task) -> Result<()> {
        self.matcher.check_index().await?;
        let mut books = TaskBooks::of(&self.matcher, task)?;
        if books.cp.stream.is_none() {
            // A task begun by a local run: its page checkpoint means nothing here.
            books.cp.last_page_id = 0;
        }
        let key = self.stream_key(task.id);
        let params = books.scope(task).await?;
        books.cp.stream = Some(key.clone());
        let created: redis::RedisResult<()> = self.redis.xgroup_create_mkstream(&key, GROUP, "0").await;
        if let Err(e) = created {
            if e.code() != Some("BUSYGROUP") {
                return Err(MatcherError::Stream { op: "XGROUP CREATE", source: e });
            }
        }
        let _: i64 = self.redis.sadd(self.active_key(), &key).await.map_err(stream_err("SADD"))?;
        let s = self.matcher.stores().clone();
        // Works in scope first (indexed here once, so every worker sees them), against the
        // works as they are now (a new epoch: its one read of every work's version).
        self.matcher.revalidate_sections();
        books.index_works(&self.announce, params.since, &mut NoObserver).await?;
        let scope = PageScope::read(&s, &params).await?;
        let batch = self.matcher.config().batch_size.max(1) as u32;
        while let Some((last, ids)) = scope.batch_after(&s, books.cp.last_page_id, batch).await? {
            if !ids.is_empty() {
                let ids: Vec<String> = ids.iter().map(i64::to_string).collect();
                let fields = [("task", task.id.to_string()), ("pages", ids.join(","))];
                let _: String = self.redis.xadd(&key, "*", &fields).await.map_err(stream_err("XADD"))?;
                books.progress.total += ids.len() as u64;
            }
            books.cp.last_page_id = last;
            books.save().await?;
        }
        books.cp.published = true;
        books.save().await?;
        tracing::info!(task_id = task.id, stream = %key, "every page of the task published");
        Ok(())
    }

    /// Take over stale entries, else read new ones; match and acknowledge them.
    /// `true` when there was something.
    async fn consume(&mut self, summary: &mut WorkerSummary) -> Result<bool> {
        let keys: Vec<String> = self.redis.smembers(self.active_key()).await.map_err(stream_err("SMEMBERS"))?;
        if keys.is_empty() {
            tokio::time::sleep(Duration::from_millis(self.settings.workers.block_ms.min(500))).await;
            return Ok(false);
        }
        for key in &keys {
            let claimed: redis::RedisResult<StreamAutoClaimReply> = self
                .redis
                .xautoclaim_options(
                    key,
                    GROUP,
                    &self.name,
                    self.settings.workers.claim_idle_ms,
                    "0-0",
                    StreamAutoClaimOptions::default().count(1),
                )
                .await;
            let claimed = match claimed {
                Ok(c) => c,
                Err(e) if e.code() == Some("NOGROUP") => continue,
                Err(e) => return Err(MatcherError::Stream { op: "XAUTOCLAIM", source: e }),
            };
            if let Some(entry) = claimed.claimed.first() {
                tracing::info!(stream = %key, entry = %entry.id, "taking over an entry of a stalled worker");
                self.handle(key, entry, summary).await?;
                summary.reclaimed += 1;
                return Ok(true);
            }
        }
        let opts = StreamReadOptions::default()
            .group(GROUP, &self.name)
            .count(1)
            .block(self.settings.workers.block_ms as usize);
        let ids = vec![">"; keys.len()];
        let read: redis::RedisResult<Option<StreamReadReply>> = self.redis.xread_options(&keys, &ids, &opts).await;
        let read = match read {
            Ok(r) => r,
            // A stream dropped by a finished task between SMEMBERS and XREADGROUP, or while
            // this read was blocked on it (Redis answers UNBLOCKED).
            Err(e) if matches!(e.code(), Some("NOGROUP" | "UNBLOCKED")) => return Ok(false),
            Err(e) => return Err(MatcherError::Stream { op: "XREADGROUP", source: e }),
        };
        let mut any = false;
        for sk in read.map(|r| r.keys).unwrap_or_default() {
            for entry in &sk.ids {
                self.handle(&sk.key, entry, summary).await?;
                any = true;
            }
        }
        Ok(any)
    }

    async fn handle(&mut self, key: &str, entry: &StreamId, summary: &mut WorkerSummary) -> Result<()> {
        let pages: String = entry.get("pages").unwrap_or_default();
        if self.last_stream.as_deref() != Some(key) {
            self.matcher.revalidate_sections();
            self.matcher.remeasure_catalogue();
            self.last_stream = Some(key.to_owned());
        }
        let mut records = Vec::new();
        let ids: Vec<i64> = pages.split(',').filter_map(|p| p.trim().parse::<i64>().ok()).collect();
        for (id, r) in self.matcher.match_pages(ids).await? {
            // An error other than a page that cannot be matched leaves the entry
            // unacknowledged: another worker (or this one) takes it over later.
            match self.counter.page(id, r, &mut records)? {
                PageResult::Matched(n) => summary.matches += n as u64,
                PageResult::Failed => summary.pages_failed += 1,
            }
            summary.pages += 1;
            tracing::debug!(page_id = id, "stream page matched");
            // The binary's crash hook runs here, before the entry is acknowledged.
            self.counter.page_done();
        }
        notify(&self.announce, &self.matcher, &records).await;
        // Acknowledged only when the pages were looked up in the store's own index: else
        // the entry stays pending until the index is rebuilt.
        self.matcher.check_index().await?;
        let _: i64 = self.redis.xack(key, GROUP, &[&entry.id]).await.map_err(stream_err("XACK"))?;
        summary.entries += 1;
        Ok(())
    }

    /// Mark succeeded every published task whose stream is drained.
    async fn finish_drained(&mut self, summary: &mut WorkerSummary) -> Result<()> {
        let keys: Vec<String> = self.redis.smembers(self.active_key()).await.map_err(stream_err("SMEMBERS"))?;
        for key in keys {
            let Some(task_id) = self.task_of(&key) else { continue };
            let tasks = self.matcher.stores().tasks.clone();
            let Some(task) = tasks.get_task(task_id).await? else {
                self.drop_stream(&key).await?;
                continue;
            };
            if task.state.is_terminal() {
                self.drop_stream(&key).await?;
                continue;
            }
            if !checkpoint(&task)?.published || !self.drained(&key).await? {
                continue;
            }
            match tasks.finish_task(task_id).await {
                Ok(_) => {
                    summary.finished += 1;
                    tracing::info!(task_id, "matching task done (all stream entries acknowledged)");
                }
                // Another worker finished it first.
                Err(e) if tasks.get_task(task_id).await?.is_some_and(|t| t.state.is_terminal()) => {
                    tracing::debug!(task_id, error = %e, "task already finished");
                }
                Err(e) => return Err(e.into()),
            }
            self.drop_stream(&key).await?;
        }
        Ok(())
    }

    /// Nothing pending and nothing undelivered in the group.
    async fn drained(&mut self, key: &str) -> Result<bool> {
        let info: redis::streams::StreamInfoGroupsReply =
            self.redis.xinfo_groups(key).await.map_err(stream_err("XINFO GROUPS"))?;
        let Some(group) = info.groups.iter().find(|g| g.name == GROUP) else { return Ok(false) };
        if group.pending > 0 {
            return Ok(false);
        }
        let stream: redis::streams::StreamInfoStreamReply =
            self.redis.xinfo_stream(key).await.map_err(stream_err("XINFO STREAM"))?;
        Ok(stream.length == 0 || group.last_delivered_id == stream.last_generated_id)
    }

    async fn drop_stream(&mut self, key: &str) -> Result<()> {
        let _: i64 = self.redis.srem(self.active_key(), key).await.map_err(stream_err("SREM"))?;
        let _: i64 = self.redis.del(key).await.map_err(stream_err("DEL"))?;
        Ok(())
    }
}
