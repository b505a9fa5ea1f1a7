//! `zhiwen worker`: share matching tasks with other workers through Redis Streams.

use anyhow::{bail, Context, Result};
use zhiwen_matcher::task::streams::{StopWhen, StreamSettings, Worker};
use zhiwen_matcher::task::{enqueue, Scope, TaskSpec};
use zhiwen_store::Timestamp;

use crate::cli::WorkerArgs;
use crate::output::outln;
use crate::settings::{DataArgs, IndexBackend, Settings};

pub async fn run(data: &DataArgs, args: &WorkerArgs) -> Result<()> {
    let settings = Settings::resolve(data)?;
    if settings.index_backend != IndexBackend::Redis {
        // Each process would see only its own in-memory postings.
        bail!("zhiwen worker needs the Redis index (--index redis): workers must share one candidate index");
    }
    let matcher = settings.open_matcher().await?;
    if args.submit {
        let scope = match (args.all, args.since) {
            (true, _) => Scope::All,
            (false, Some(day)) => Scope::Since(Timestamp::from_offset(day.midnight().assume_utc())),
            (false, None) => Scope::NewSinceLastRun,
        };
        let task = enqueue(&matcher, &TaskSpec::new(scope)).await.context("cannot enqueue the matching task")?;
        outln!("task {} ({}) {:?}", task.id, task.key, task.state)?;
        return Ok(());
    }
    let stream = StreamSettings {
        url: settings.redis.url.clone(),
        prefix: settings.redis.prefix.clone(),
        workers: settings.matcher.workers.clone(),
    };
    let hooks = super::matching::task_hooks(&settings, matcher.stores(), true)?;
    let mut worker = Worker::connect(matcher, stream)
        .await
        .with_context(|| format!("cannot connect to Redis at {}", settings.redis.url))?
        .with_hooks(hooks);
    tracing::info!(worker = worker.name(), "worker started");
    let stop = if args.until_idle { StopWhen::Idle } else { StopWhen::Never };
    let summary = worker
        .run(stop, async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await?;
    outln!(
        "worker {}: {} task(s) coordinated, {} finished; {} entries ({} taken over), {} pages ({} failed), {} matches",
        worker.name(),
        summary.coordinated,
        summary.finished,
        summary.entries,
        summary.reclaimed,
        summary.pages,
        summary.pages_failed,
        summary.matches
    )?;
    Ok(())
}
