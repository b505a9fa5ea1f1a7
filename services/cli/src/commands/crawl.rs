//! `zhiwen crawl --seeds FILE`: fetch pages politely into the page store. Killing it and
//! running the same job again resumes without fetching twice.
//!
//! `zhiwen crawl --watch`: the watch role: run watch passes over the watched sites until
//! Ctrl-C or SIGTERM, and queue the matching of the pages they store.

use std::time::Duration;

use anyhow::{Context, Result};
use zhiwen_ingest::{AddressPolicy, CancellationToken, CrawlConfig, Crawler, Watcher};
use zhiwen_store::Timestamp;

use crate::cli::CrawlArgs;
use crate::output::outln;
use crate::progress::Bar;
use crate::settings::{DataArgs, ImportLimitArgs, Settings};

/// Longest pause between two watch passes (a site added meanwhile waits at most this).
const WATCH_POLL: Duration = Duration::from_secs(5);

pub async fn run(data: &DataArgs, args: &CrawlArgs) -> Result<()> {
    let settings = Settings::resolve(data)?;
    if args.watch {
        return watch(&settings, args).await;
    }
    let stores = settings.open_stores().await?;
    let Some(seeds) = &args.seeds else { anyhow::bail!("--seeds FILE is required (or --watch)") };
    let seeds = zhiwen_ingest::read_seeds(seeds)?;
    let config = CrawlConfig {
        job: args.job.clone(),
        data_dir: settings.data_dir.clone(),
        allowed_domains: args.domains.clone(),
        max_depth: args.depth,
        max_pages: args.max_pages,
        global_concurrency: args.concurrency.max(1),
        per_host_delay: Duration::from_millis(args.delay_ms),
        address_policy: AddressPolicy { allow_loopback: args.allow_loopback, allow_private: args.allow_private },
        canon: settings.params.canon.clone(),
        // The page bound of `[import]` / ZHIWEN_IMPORT_MAX_PAGE_KB applies to crawled pages too.
        max_page_bytes: settings
            .import_bounds(&ImportLimitArgs { max_page_kb: args.max_page_kb, ..ImportLimitArgs::default() })?
            .limits
            .max_page_bytes,
        ..CrawlConfig::default()
    };
    let crawler = Crawler::new(config, stores).context("cannot start the crawler")?;
    // Ctrl-C stops cleanly: the frontier keeps what is left for the next run.
    let cancel = CancellationToken::new();
    let on_signal = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            on_signal.cancel();
        }
    });
    let summary = crawler.run_until(&seeds, &Bar::new(), cancel).await?;
    outln!("{summary}")?;
    if !summary.pages.changed.pages.is_empty() {
        outln!("{} pages new or changed: run `zhiwen match` to match them", summary.pages.changed.pages.len())?;
    }
    Ok(())
}

/// Watch passes until Ctrl-C or SIGTERM; each pass that stored pages queues their matching
/// (a `zhiwen serve`, `zhiwen worker` or `zhiwen match` runs it).
async fn watch(settings: &Settings, args: &CrawlArgs) -> Result<()> {
    let matcher = settings.open_matcher().await?;
    let policy = AddressPolicy { allow_loopback: args.allow_loopback, allow_private: args.allow_private };
    let bounds =
        settings.import_bounds(&ImportLimitArgs { max_page_kb: args.max_page_kb, ..ImportLimitArgs::default() })?;
    let config = settings.watch.config(policy, &settings.params, &bounds);
    let watcher = Watcher::new(config, matcher.stores().clone()).context("cannot start the watch passes")?;
    let stop = CancellationToken::new();
    let on_signal = stop.clone();
    tokio::spawn(async move {
        crate::commands::serve::wait_for_signal().await;
        on_signal.cancel();
    });
    eprintln!("zhiwen: watching the watched sites until Ctrl-C");
    while !stop.is_cancelled() {
        let pass = tokio::select! {
            r = watcher.pass(Timestamp::now()) => r,
            // In-flight fetches are abandoned: what was stored stays, an entry point whose
            // visit was not recorded is visited again.
            _ = stop.cancelled() => break,
        };
        match pass {
            Ok(summary) => {
                if summary.visits > 0 {
                    outln!("{summary}")?;
                }
                if !summary.stored.is_empty() {
                    match zhiwen_matcher::task::enqueue_arrival(&matcher).await {
                        Ok(task) => tracing::info!(task_id = task.id, pages = summary.stored.len(), "matching queued"),
                        Err(e) => {
                            tracing::error!(error = %e, "cannot queue the matching of new pages; the daily task will match them")
                        }
                    }
                }
            }
            Err(e) => tracing::error!(error = %e, "watch pass failed"),
        }
        let wait = match watcher.next_due().await {
            Ok(Some(t)) => Duration::from_millis(t.0.saturating_sub(Timestamp::now().0).max(0) as u64).min(WATCH_POLL),
            _ => WATCH_POLL,
        };
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = stop.cancelled() => break,
        }
    }
    eprintln!("zhiwen: watch stopped");
    Ok(())
}
