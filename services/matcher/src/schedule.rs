//! The daily matching schedule: a pure "when" calculator from a cron expression in a time
//! zone, the catch-up rule, and the loop that enqueues one task per scheduled slot and
//! drives the worker loop.
//!
//! One task key per slot (`match:daily:<slot in UTC>`) makes enqueueing idempotent: a
//! restart, a second scheduler or a catch-up never runs a slot twice, and the worker loop
//! refuses to start a task while a live worker runs one.

use std::future::Future;
use std::str::FromStr;
use std::time::Duration;

use chrono::{DateTime, TimeZone, Utc};
use chrono_tz::Tz;

use crate::config::ScheduleConfig;
use crate::task::{enqueue, run_next_task, worker_name, NoProgress, Scope, TaskControl, TaskHooks, TaskSpec};
use crate::{Matcher, MatcherError, Result};

/// A parsed schedule.
#[derive(Debug, Clone)]
pub struct Schedule {
    cron: cron::Schedule,
    tz: Tz,
}

impl Schedule {
    /// Parse the cron expression and the IANA time zone of `config`.
    pub fn parse(config: &ScheduleConfig) -> Result<Self> {
        let cron = cron::Schedule::from_str(config.cron.trim())
            .map_err(|e| MatcherError::Config(format!("schedule.cron {:?}: {e}", config.cron)))?;
        let tz = Tz::from_str(config.time_zone.trim())
            .map_err(|e| MatcherError::Config(format!("schedule.time_zone {:?}: {e}", config.time_zone)))?;
        Ok(Schedule { cron, tz })
    }

    /// The first slot strictly after `t`.
    pub fn next_after(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        self.cron.after(&t.with_timezone(&self.tz)).next().map(|d| d.with_timezone(&Utc))
    }

    /// The latest slot at or before `t`.
    pub fn last_at_or_before(&self, t: DateTime<Utc>) -> Option<DateTime<Utc>> {
        let probe = t + chrono::Duration::seconds(1);
        self.cron.after(&probe.with_timezone(&self.tz)).next_back().map(|d| d.with_timezone(&Utc))
    }

    /// The slot that must run now, if any: the latest slot at or before `now`, unless the
    /// last daily run (its slot) is not older than it. After downtime that spanned several
    /// slots, only the latest runs (it covers every page fetched since the last success).
    pub fn due_slot(&self, now: DateTime<Utc>, last_run_slot: Option<DateTime<Utc>>) -> Option<DateTime<Utc>> {
        let slot = self.last_at_or_before(now)?;
        match last_run_slot {
            Some(last) if last >= slot => None,
            _ => Some(slot),
        }
    }

    /// The time zone.
    pub fn time_zone(&self) -> Tz {
        self.tz
    }
}

/// Task key of a scheduled slot.
pub fn slot_key(slot: DateTime<Utc>) -> String {
    format!("match:daily:{}", slot.format("%Y-%m-%dT%H:%M:%SZ"))
}

/// Enqueue the task of the slot due at `now`, if it has none yet. Returns its key.
pub async fn enqueue_due(matcher: &Matcher, schedule: &Schedule, now: DateTime<Utc>) -> Result<Option<String>> {
    let Some(slot) = schedule.last_at_or_before(now) else { return Ok(None) };
    let key = slot_key(slot);
    if matcher.stores().tasks.find_task(&key).await?.is_some() {
        return Ok(None);
    }
    let task = enqueue(matcher, &TaskSpec { scope: Scope::NewSinceLastRun, key: Some(key.clone()) }).await?;
    tracing::info!(task_id = task.id, key = %key, "daily matching task enqueued");
    Ok(Some(key))
}

/// The scheduler (`zhiwen scheduler`, or inside `zhiwen serve`): catch up at start, then
/// at every slot enqueue the daily task and, when `run_tasks`, run queued tasks one at a
/// time (else `zhiwen worker` processes run them) with `hooks` (the new-match
/// listener of the alerts), until `shutdown` completes. A task cut short by the shutdown
/// stays `running` with its checkpoint and is resumed at the next start.
pub async fn run_scheduler(
    matcher: &Matcher,
    run_tasks: bool,
    hooks: TaskHooks,
    shutdown: impl Future<Output = ()>,
) -> Result<()> {
    let schedule = Schedule::parse(&matcher.config().schedule)?;
    let worker = worker_name();
    let control = TaskControl { hooks, ..TaskControl::default() };
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let now = Utc::now();
        if let Err(e) = enqueue_due(matcher, &schedule, now).await {
            tracing::error!(error = %e, "cannot enqueue the daily matching task");
        }
        let work = async {
            if !run_tasks {
                // Enqueue-only: `zhiwen worker` processes claim the task and share its pages.
                return;
            }
            loop {
                match run_next_task(matcher, &worker, &control, &NoProgress).await {
                    Ok(Some(s)) => tracing::info!(task_id = s.task_id, pages = s.pages, "task ran"),
                    Ok(None) => break,
                    Err(MatcherError::AlreadyRunning { task_id, worker }) => {
                        tracing::info!(task_id, %worker, "another worker is running a matching task");
                        break;
                    }
                    Err(e) => {
                        tracing::error!(error = %e, "matching task failed");
                        break;
                    }
                }
            }
        };
        tokio::select! {
            _ = work => {}
            _ = &mut shutdown => return Ok(()),
        }
        // Wake at the next slot, and at least every minute for tasks queued by others.
        let next = schedule.next_after(Utc::now());
        let wait = next
            .and_then(|n| (n - Utc::now()).to_std().ok())
            .unwrap_or(Duration::from_secs(60))
            .min(Duration::from_secs(60));
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = &mut shutdown => return Ok(()),
        }
    }
}

/// `YYYY-MM-DD HH:MM:SS` of a UTC time in `tz` (for logs and `zhiwen scheduler --next`).
pub fn local(t: DateTime<Utc>, tz: Tz) -> String {
    tz.from_utc_datetime(&t.naive_utc()).format("%Y-%m-%d %H:%M:%S %Z").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> DateTime<Utc> {
        DateTime::parse_from_rfc3339(s).expect("rfc3339").with_timezone(&Utc)
    }

    #[test]
    fn default_is_two_in_the_morning_in_shanghai() {
        let s = Schedule::parse(&ScheduleConfig::default()).unwrap();
        // 02:00 Asia/Shanghai = 18:00 UTC the day before.
        assert_eq!(s.next_after(utc("2026-11-21T12:00:00Z")), Some(utc("2026-11-21T18:00:00Z")));
        assert_eq!(s.next_after(utc("2026-11-21T18:00:00Z")), Some(utc("2026-11-22T18:00:00Z")));
        assert_eq!(s.last_at_or_before(utc("2026-11-21T18:00:00Z")), Some(utc("2026-11-21T18:00:00Z")));
        assert_eq!(s.last_at_or_before(utc("2026-11-21T17:59:59Z")), Some(utc("2026-11-20T18:00:00Z")));
        assert_eq!(local(utc("2026-11-21T18:00:00Z"), s.time_zone()), "2026-11-22 02:00:00 CST");
    }

    #[test]
    fn catches_up_once_after_downtime_and_never_twice() {
        let s = Schedule::parse(&ScheduleConfig::default()).unwrap();
        let now = utc("2026-11-25T03:00:00Z"); // down since the 21st: three slots missed
        let last = Some(utc("2026-11-21T18:00:00Z"));
        assert_eq!(s.due_slot(now, last), Some(utc("2026-11-24T18:00:00Z")), "only the latest slot runs");
        assert_eq!(s.due_slot(now, Some(utc("2026-11-24T18:00:00Z"))), None, "that slot ran");
        assert_eq!(s.due_slot(now, None), Some(utc("2026-11-24T18:00:00Z")), "first start runs at once");
        assert_eq!(slot_key(utc("2026-11-24T18:00:00Z")), "match:daily:2026-11-24T18:00:00Z");
    }

    #[test]
    fn bad_expressions_and_zones_are_configuration_errors() {
        let bad = ScheduleConfig { cron: "every day".into(), ..Default::default() };
        assert!(matches!(Schedule::parse(&bad), Err(MatcherError::Config(_))));
        let bad = ScheduleConfig { time_zone: "Mars/Olympus".into(), ..Default::default() };
        assert!(matches!(Schedule::parse(&bad), Err(MatcherError::Config(_))));
        let hourly = Schedule::parse(&ScheduleConfig { cron: "0 30 * * * *".into(), time_zone: "UTC".into() }).unwrap();
        assert_eq!(hourly.next_after(utc("2026-01-01T00:31:00Z")), Some(utc("2026-01-01T01:30:00Z")));
    }
}
