//! The capture worker: the one loop that runs capture tasks as they are queued, does
//! the evidence log's daily duties and, every `[recheck] every_hours`, the removal
//! re-check of noticed pages ([`crate::recheck()`]). `zhiwen serve` runs it beside its task worker and
//! `zhiwen scheduler` beside the daily matching schedule.
//!
//! However many processes run it, each re-check slot runs once: the slot is a task in the
//! task store (kind [`RECHECK_TASK_KIND`], key `recheck:<slot>`, created idempotently), and
//! only the process that claims it runs the re-check. A process that dies during its
//! re-check leaves that slot unfinished (the checks it made are recorded); the next slot
//! checks every page again.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use zhiwen_ingest::CancellationToken;
use zhiwen_matcher::task::worker_name;
use zhiwen_matcher::webhook::Webhook;

use zhiwen_store::{NewTask, Timestamp};

use crate::{publish_head, recheck, run_next_capture, EvidenceService, RecheckReport, Result};

/// Kind of the tasks that stand for one re-check slot each (see the module documentation).
pub const RECHECK_TASK_KIND: &str = "recheck";

/// Longest idle wait before the queue is looked at again (tasks queued by other processes
/// do not wake this one).
const IDLE: Duration = Duration::from_secs(5);

/// Run until `shutdown`: capture tasks one at a time (woken by `wake` when one is queued
/// here); after captures, a signed head of the grown log (to the webhook too); once a day
/// a signed head even when nothing changed, and the retention of `[evidence]`; once per
/// `[recheck] every_hours` slot of the wall clock (the first when it starts), the removal
/// re-check, when enabled and the service has a matcher
/// ([`EvidenceService::with_matcher`]); the captures it queues run next.
pub async fn run_capture_worker(
    service: Arc<EvidenceService>,
    webhook: Option<Webhook>,
    lease_seconds: u64,
    wake: Arc<Notify>,
    shutdown: CancellationToken,
) {
    let worker = worker_name();
    let mut last_day = None;
    let mut last_recheck = None;
    let mut made = 0u64;
    loop {
        if shutdown.is_cancelled() {
            return;
        }
        let today = time::OffsetDateTime::now_utc().date();
        if last_day != Some(today) {
            daily(&service, webhook.as_ref()).await;
            last_day = Some(today);
        }
        if let Some(slot) = recheck_due(&service, last_recheck) {
            last_recheck = Some(slot);
            scheduled_recheck(&service, slot, &worker).await;
        }
        let idle = match run_next_capture(&service, &worker, lease_seconds).await {
            Ok(Some((task, Ok(c)))) => {
                tracing::info!(
                    task_id = task.id,
                    capture_id = c.id,
                    match_id = c.match_id,
                    leaf = c.leaf_index,
                    "capture made"
                );
                made += 1;
                false
            }
            Ok(Some((task, Err(e)))) => {
                tracing::warn!(task_id = task.id, error = %e, "capture failed");
                false
            }
            Ok(None) => true,
            Err(e) => {
                tracing::error!(error = %e, "capture worker: cannot read the task queue");
                true
            }
        };
        if !idle {
            continue;
        }
        if made > 0 {
            // The log grew: publish its head now, not only tomorrow.
            if let Err(e) = publish_head(&service, webhook.as_ref()).await {
                tracing::error!(error = %e, "cannot sign the evidence log's tree head");
            }
            made = 0;
        }
        tokio::select! {
            _ = wake.notified() => {}
            _ = tokio::time::sleep(IDLE) => {}
            _ = shutdown.cancelled() => return,
        }
    }
}

async fn daily(service: &EvidenceService, webhook: Option<&Webhook>) {
    if let Err(e) = publish_head(service, webhook).await {
        tracing::error!(error = %e, "cannot sign the evidence log's daily tree head");
    }
    if let Err(e) = service.prune(None).await {
        tracing::error!(error = %e, "evidence retention failed");
    }
}

/// The wall clock's `every_hours` slot when a re-check is due in it (none ran in it yet).
fn recheck_due(service: &EvidenceService, last: Option<i64>) -> Option<i64> {
    let config = &service.config().recheck;
    if !config.enabled || service.matcher().is_none() {
        return None;
    }
    let every_ms = i64::try_from(config.every_hours.max(1)).unwrap_or(i64::MAX / 3_600_000).saturating_mul(3_600_000);
    let slot = Timestamp::now().0 / every_ms;
    (last != Some(slot)).then_some(slot)
}

async fn scheduled_recheck(service: &EvidenceService, slot: i64, worker: &str) {
    match recheck_slot(service, slot, worker).await {
        Ok(Some(report)) => tracing::info!(slot, pages = report.pages, "scheduled removal re-check done"),
        Ok(None) => tracing::debug!(slot, "the removal re-check of this slot is another process's"),
        Err(e) => tracing::error!(slot, error = %e, "the removal re-check failed; it runs again in the next slot"),
    }
}

/// The removal re-check of the wall clock's `slot` (of `[recheck] every_hours`), run once
/// however many processes ask: the slot's task (kind [`RECHECK_TASK_KIND`], key
/// `recheck:<slot>`) is created idempotently and only the caller that claims it runs the
/// re-check (`None` for the others, and when the service has no matcher). The task ends
/// done, or failed with the error.
pub async fn recheck_slot(service: &EvidenceService, slot: i64, worker: &str) -> Result<Option<RecheckReport>> {
    let Some(matcher) = service.matcher() else { return Ok(None) };
    let tasks = &service.stores().tasks;
    let new = NewTask {
        key: format!("recheck:{slot}"),
        kind: RECHECK_TASK_KIND.into(),
        params: serde_json::json!({ "slot": slot, "every_hours": service.config().recheck.every_hours }),
    };
    tasks.create_task(&new).await?;
    // Claiming takes the oldest queued re-check: an earlier slot's task left queued (its
    // creator died before claiming it) is superseded by this slot's, so it is cancelled,
    // not run; each pass removes one queued task, so this ends.
    let task = loop {
        let Some(task) = tasks.claim_task(Some(RECHECK_TASK_KIND), worker).await? else { return Ok(None) };
        if task.key == new.key {
            break task;
        }
        tracing::info!(task = task.id, key = %task.key, "an earlier slot's re-check, never run, is superseded");
        tasks.cancel_task(task.id).await?;
    };
    match recheck(service, matcher, &service.config().recheck, Timestamp::now()).await {
        Ok(report) => {
            tasks.finish_task(task.id).await?;
            Ok(Some(report))
        }
        Err(e) => {
            tasks.fail_task(task.id, &e.to_string()).await?;
            Err(e)
        }
    }
}
