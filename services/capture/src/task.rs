//! Capture tasks: queued in the task store (kind [`CAPTURE_TASK_KIND`]) when a match is
//! first recorded or on demand, run one at a time by a capture worker beside matching.
//! A capture is idempotent by its task's key, so a task interrupted by a crash is run
//! again by the next worker (it takes over a task whose worker has gone) and ends with
//! exactly one capture.

use serde::Deserialize;
use zhiwen_matcher::task::{capture_task, is_abandoned, CAPTURE_TASK_KIND};
use zhiwen_store::{Capture, Task, TaskState, Timestamp};

use crate::{CaptureError, EvidenceService, Result};

#[derive(Deserialize)]
struct Params {
    match_id: i64,
    reason: String,
}

/// Queue an on-demand capture of `match_id`; returns the task (a request repeated within
/// the same millisecond is the same task).
pub async fn request_capture(service: &EvidenceService, match_id: i64) -> Result<Task> {
    let nonce = Timestamp::now().0.to_string();
    let (task, _) = service.stores().tasks.create_task(&capture_task(match_id, "on_demand", Some(&nonce))).await?;
    Ok(task)
}

/// Run one capture task: a `running` one whose worker has gone (after `lease_seconds`
/// without progress, or at once when its process is dead), else the oldest queued one.
/// `None` when there is none.
pub async fn run_next_capture(
    service: &EvidenceService,
    worker: &str,
    lease_seconds: u64,
) -> Result<Option<(Task, Result<Capture>)>> {
    let tasks = &service.stores().tasks;
    let now = Timestamp::now();
    let mut claimed = None;
    let mut after = 0;
    'scan: loop {
        let running = tasks.list_tasks(Some(TaskState::Running), Some(CAPTURE_TASK_KIND), after, 100).await?;
        let Some(last) = running.last() else { break };
        after = last.id;
        for t in running.iter().filter(|t| is_abandoned(t, lease_seconds, now)) {
            if let Some(mine) = tasks.take_over_task(t.id, t.worker.as_deref(), worker).await? {
                tracing::info!(task_id = t.id, key = %t.key, "resuming an interrupted capture");
                claimed = Some(mine);
                break 'scan;
            }
        }
    }
    let task = match claimed {
        Some(t) => t,
        None => match tasks.claim_task(Some(CAPTURE_TASK_KIND), worker).await? {
            Some(t) => t,
            None => return Ok(None),
        },
    };
    let result = run(service, &task).await;
    match &result {
        Ok(_) => {
            tasks.finish_task(task.id).await?;
        }
        // A store that failed may come back: leave the task running for a later worker.
        Err(CaptureError::Store(e)) if e.is_retryable() => {
            tracing::warn!(task_id = task.id, error = %e, "capture interrupted by a transient failure");
        }
        Err(e) => {
            tracing::warn!(task_id = task.id, error = %e, "capture failed");
            tasks.fail_task(task.id, &e.to_string()).await?;
        }
    }
    Ok(Some((task, result)))
}

async fn run(service: &EvidenceService, task: &Task) -> Result<Capture> {
    let p: Params = serde_json::from_value(task.params.clone())
        .map_err(|e| CaptureError::BadTask { task: task.id, reason: e.to_string() })?;
    let (capture, _) = service.capture_match(p.match_id, &p.reason, &task.key).await?;
    Ok(capture)
}

/// Counts of [`run_queued_captures`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CaptureRun {
    /// Captures made (or found made by an interrupted run).
    pub captured: u64,
    /// Tasks that failed.
    pub failed: u64,
}

/// Run queued capture tasks until none is left (or `max` were run).
pub async fn run_queued_captures(
    service: &EvidenceService,
    worker: &str,
    lease_seconds: u64,
    max: Option<u64>,
) -> Result<CaptureRun> {
    let mut run = CaptureRun::default();
    while max.is_none_or(|m| run.captured + run.failed < m) {
        match run_next_capture(service, worker, lease_seconds).await? {
            None => break,
            Some((_, Ok(_))) => run.captured += 1,
            Some((_, Err(CaptureError::Store(e)))) if e.is_retryable() => return Err(CaptureError::Store(e)),
            Some((_, Err(_))) => run.failed += 1,
        }
    }
    Ok(run)
}
