//! `zhiwen crawl --seeds FILE`: fetch pages politely into the page store. Killing it and
//! running the same job again resumes without fetching twice.
//!
//! `zhiwen crawl --watch`: the watch role: run watch passes over the watched sites until
//! Ctrl-C or SIGTERM, and queue the matching of the pages they store.

use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use zhiwen_api::worker::QueueMatching;
use zhiwen_ingest::{AddressPolicy, CancellationToken, CrawlConfig, Crawler, Watcher};

use crate::cli::CrawlArgs;
use crate::output::outln;
use crate::progress::Bar;
use crate::settings::{DataArgs, ImportLimitArgs, Settings};

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

/// Watch passes until Ctrl-C or SIGTERM; the matching of what each site's visit stores is
/// queued at once (a `zhiwen serve`, `zhiwen worker` or `zhiwen match` runs it). Processes
/// that share a Redis share the watched sites through its host leases.
async fn watch(settings: &Settings, args: &CrawlArgs) -> Result<()> {
    let matcher = settings.open_matcher().await?;
    let policy = AddressPolicy { allow_loopback: args.allow_loopback, allow_private: args.allow_private };
    let bounds =
        settings.import_bounds(&ImportLimitArgs { max_page_kb: args.max_page_kb, ..ImportLimitArgs::default() })?;
    let config = settings.watch.config(policy, &settings.params, &bounds);
    let mut watcher = Watcher::new(config, matcher.stores().clone())
        .context("cannot start the watch passes")?
        .with_arrivals(Arc::new(QueueMatching::new(matcher.clone(), None)));
    if let Some(leases) = settings.host_leases().await? {
        watcher = watcher.with_leases(leases);
    }
    let stop = CancellationToken::new();
    let on_signal = stop.clone();
    tokio::spawn(async move {
        crate::commands::serve::wait_for_signal().await;
        on_signal.cancel();
    });
    eprintln!("zhiwen: watching the watched sites until Ctrl-C");
    watcher
        .run_until(&stop, |summary| {
            if let Err(e) = outln!("{summary}") {
                // stdout closed (a broken pipe): the passes go on, logged only.
                tracing::debug!(error = %e, "cannot print the watch pass");
            }
        })
        .await;
    eprintln!("zhiwen: watch stopped");
    Ok(())
}
