//! `zhiwen match` (one task now) and `zhiwen scheduler` (the daily schedule).

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use zhiwen_matcher::task::{
    run_match_task, ProgressSink, Scope, TaskControl, TaskHooks, TaskProgress, TaskSpec, ABORT_ENV,
};
use zhiwen_store::Timestamp;

use crate::cli::{MatchArgs, SchedulerArgs};
use crate::output::outln;
use crate::settings::{DataArgs, Settings};

struct Bar(ProgressBar);

impl ProgressSink for Bar {
    fn update(&self, p: &TaskProgress) {
        if self.0.length() != Some(p.total) {
            self.0.set_length(p.total);
        }
        self.0.set_position(p.done);
        self.0.set_message(format!("{} matches", p.matches));
    }
}

/// The crash hook of the crash tests: when [`ABORT_ENV`] is set to `n`, abort the
/// process (as `kill -9` would) once `n` pages were matched by it, before their batch is
/// checkpointed or their stream entry acknowledged. No hook when it is not set.
pub(crate) fn crash_hooks() -> Result<TaskHooks> {
    let Ok(value) = std::env::var(ABORT_ENV) else { return Ok(TaskHooks::default()) };
    let pages: u64 =
        value.trim().parse().with_context(|| format!("{ABORT_ENV} must be a number of pages, not {value:?}"))?;
    Ok(TaskHooks::after_pages(pages, |matched| {
        tracing::error!(pages = matched, "{ABORT_ENV} reached: aborting the process");
        std::process::abort();
    }))
}

/// The hooks of a task runner of this binary: the crash hook ([`crash_hooks`]) and the
/// holders' e-mail alerts of new matches (`[alerts]`, sent through `[mail]`): in the
/// background in a long-running process, before the task goes on in a one-off run.
pub(crate) fn task_hooks(settings: &Settings, stores: &zhiwen_store::Stores, long_running: bool) -> Result<TaskHooks> {
    let alerts = settings.alerts(stores);
    let listener = if long_running {
        zhiwen_api::alerts::AlertListener::in_background(alerts)
    } else {
        zhiwen_api::alerts::AlertListener::new(alerts)
    };
    Ok(crash_hooks()?.with_listener(std::sync::Arc::new(listener)))
}

pub async fn run(data: &DataArgs, args: &MatchArgs) -> Result<()> {
    let settings = Settings::resolve(data)?;
    let matcher = settings.open_matcher().await?;
    let scope = match (args.all, args.since) {
        (true, _) => Scope::All,
        (false, Some(day)) => Scope::Since(Timestamp::from_offset(day.midnight().assume_utc())),
        (false, None) => Scope::NewSinceLastRun,
    };
    let bar = ProgressBar::new(0).with_style(
        ProgressStyle::with_template("matching [{bar:40}] {pos}/{len} {msg} {elapsed_precise}")
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    let control = TaskControl { hooks: task_hooks(&settings, matcher.stores(), false)?, ..TaskControl::default() };
    let summary = run_match_task(&matcher, TaskSpec::new(scope), &control, &Bar(bar.clone())).await?;
    bar.finish_and_clear();
    outln!(
        "task {} ({}) {:?}{}: {} works and {} pages processed ({} failed); matches: {} new, {} updated, {} unchanged; {:.1} s",
        summary.task_id,
        summary.key,
        summary.state,
        if summary.resumed { ", resumed" } else { "" },
        summary.works,
        summary.pages,
        summary.pages_failed,
        summary.matches_new,
        summary.matches_updated,
        summary.matches_unchanged,
        summary.elapsed_ms as f64 / 1000.0
    )?;
    if !args.no_capture {
        // The captures queued by new matches (and any left by an earlier run), after the
        // task: matching is never slowed by fetching and rendering.
        let service = args.capture.open(&settings, &matcher).await?;
        let run = crate::commands::evidence::run_captures(&service, matcher.config().lease_seconds).await?;
        outln!("{}", crate::commands::evidence::captures_line(&service, run).await?)?;
    }
    Ok(())
}

pub async fn scheduler(data: &DataArgs, args: &SchedulerArgs) -> Result<()> {
    let settings = Settings::resolve(data)?;
    let matcher = settings.open_matcher().await?;
    tracing::info!(schedule = ?settings.matcher.schedule, enqueue_only = args.enqueue_only, "scheduler started");
    // The capture worker beside the schedule: captures of new matches, the evidence log's
    // signed head after them and daily, retention.
    let shutdown = zhiwen_ingest::CancellationToken::new();
    let captures = if args.no_capture {
        None
    } else {
        let service = std::sync::Arc::new(args.capture.open(&settings, &matcher).await?);
        let webhook = zhiwen_matcher::webhook::Webhook::from_config(&settings.matcher.webhook)?;
        Some(tokio::spawn(zhiwen_capture::run_capture_worker(
            service,
            webhook,
            settings.matcher.lease_seconds,
            std::sync::Arc::new(tokio::sync::Notify::new()),
            shutdown.clone(),
        )))
    };
    let hooks = task_hooks(&settings, matcher.stores(), true)?;
    zhiwen_matcher::schedule::run_scheduler(&matcher, !args.enqueue_only, hooks, async {
        let _ = tokio::signal::ctrl_c().await;
    })
    .await?;
    shutdown.cancel();
    if let Some(c) = captures {
        let _ = c.await;
    }
    Ok(())
}
