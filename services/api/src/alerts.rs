//! The holders' e-mail alerts in a server and in the command line's task runners: the
//! listener a matching task tells of its new matches ([`AlertListener`], installed
//! through [`hooks`]), and the daily digest task ([`DIGEST_KIND`]).
//!
//! The e-mails themselves, their queue, de-duplication and rate limit are
//! [`zhiwen_takedown::Alerts`]'s.

use std::sync::Arc;

use zhiwen_matcher::task::{NewMatchListener, TaskHooks};
use zhiwen_matcher::MatchRecord;
use zhiwen_takedown::{Alerts, NewMatchAlert};

/// Kind of the daily digest tasks (`alerts:digest:<slot>`, one per scheduled slot).
pub const DIGEST_KIND: &str = "alert_digest";

/// Hands a matching task's new matches to the alerts.
#[derive(Debug, Clone)]
pub struct AlertListener {
    alerts: Alerts,
    background: bool,
}

impl AlertListener {
    /// A listener that queues and sends before the task goes on (a one-off run that
    /// exits after its task: nothing is cut short).
    pub fn new(alerts: Alerts) -> Self {
        AlertListener { alerts, background: false }
    }

    /// A listener that queues before the task goes on (store writes only: a process that
    /// ends right after its task loses no alert) and sends in a task of its own, so a slow
    /// relay never slows the matching (a long-running process, whose worker also sends
    /// what waits every minute). A send cut short by the process ending is not repeated
    /// ([`zhiwen_store::AlertOutbox`]).
    pub fn in_background(alerts: Alerts) -> Self {
        AlertListener { alerts, background: true }
    }
}

#[async_trait::async_trait]
impl NewMatchListener for AlertListener {
    async fn new_matches(&self, matches: &[MatchRecord]) {
        let found: Vec<NewMatchAlert> = matches
            .iter()
            .map(|m| NewMatchAlert { match_id: m.match_id, work_id: m.work_id, score: m.score })
            .collect();
        if self.background {
            let queued = self.alerts.queue_new_matches(&found).await;
            log(&queued, found.len());
            if queued.is_ok_and(|r| r.queued > 0) {
                let alerts = self.alerts.clone();
                tokio::spawn(async move {
                    match alerts.deliver_held().await {
                        Ok(r) => tracing::info!(emails = r.emails, held = r.held, failed = r.failed, "alerts sent"),
                        Err(e) => {
                            tracing::error!(error = %e, "cannot send the queued alerts; they wait for the next try")
                        }
                    }
                });
            }
        } else {
            log(&self.alerts.on_new_matches(&found).await, found.len());
        }
    }
}

fn log(result: &Result<zhiwen_takedown::AlertReport, zhiwen_takedown::NoticeError>, found: usize) {
    match result {
        Ok(r) if r.queued > 0 => {
            tracing::info!(queued = r.queued, emails = r.emails, held = r.held, failed = r.failed, "alerts queued")
        }
        Ok(_) => {}
        Err(e) => tracing::error!(error = %e, matches = found, "cannot queue alerts; the matches are stored"),
    }
}

/// Task hooks that tell `alerts` (if any) of new matches, in the background (a server's
/// worker: the matching never waits for the relay).
pub fn hooks(alerts: Option<&Alerts>) -> TaskHooks {
    match alerts {
        Some(a) => TaskHooks::default().with_listener(Arc::new(AlertListener::in_background(a.clone()))),
        None => TaskHooks::default(),
    }
}

/// The digest task of the daily slot `slot` (its day in `tz` is the digest's day).
pub fn digest_task(slot: chrono::DateTime<chrono::Utc>, tz: chrono_tz::Tz) -> zhiwen_store::NewTask {
    let day = slot.with_timezone(&tz).format("%Y-%m-%d").to_string();
    zhiwen_store::NewTask {
        key: format!("alerts:digest:{}", slot.format("%Y-%m-%dT%H:%M:%SZ")),
        kind: DIGEST_KIND.into(),
        params: serde_json::json!({ "day": day }),
    }
}
