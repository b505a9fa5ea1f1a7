//! `zhiwen crawl --seeds FILE`: fetch pages politely into the page store. Killing it and
//! running the same job again resumes without fetching twice.

use std::time::Duration;

use anyhow::{Context, Result};
use zhiwen_ingest::{AddressPolicy, CancellationToken, CrawlConfig, Crawler};

use crate::cli::CrawlArgs;
use crate::output::outln;
use crate::progress::Bar;
use crate::settings::{DataArgs, ImportLimitArgs, Settings};

pub async fn run(data: &DataArgs, args: &CrawlArgs) -> Result<()> {
    let settings = Settings::resolve(data)?;
    let stores = settings.open_stores().await?;
    let seeds = zhiwen_ingest::read_seeds(&args.seeds)?;
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
