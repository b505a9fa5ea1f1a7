//! The capture worker: the one loop that runs capture tasks as they are queued, does
//! the evidence log's daily duties and, every `[recheck] every_hours`, the removal
//! re-check of noticed pages ([`crate::recheck()`]). `zhiwen serve` runs it beside its task worker and
//! `zhiwen scheduler` beside the daily matching schedule.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use zhiwen_ingest::CancellationToken;
use zhiwen_matcher::task::worker_name;
use zhiwen_matcher::webhook::Webhook;

use zhiwen_store::Timestamp;

use crate::{publish_head, recheck, run_next_capture, EvidenceService};

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
            scheduled_recheck(&service).await;
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

async fn scheduled_recheck(service: &EvidenceService) {
    let Some(matcher) = service.matcher() else { return };
    if let Err(e) = recheck(service, matcher, &service.config().recheck, Timestamp::now()).await {
        tracing::error!(error = %e, "the removal re-check failed; it runs again in the next slot");
    }
}
