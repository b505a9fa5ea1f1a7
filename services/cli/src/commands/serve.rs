//! `zhiwen serve`: the admin API (`docs/api.md`) and the dashboard on one port, with the
//! task worker (matching runs, crawls started from the API, watch passes over the watched
//! sites) and the daily scheduler in the same process. SIGINT/SIGTERM stop it gracefully: in-flight requests finish, a
//! running matching task stops at its next page and resumes at the next start.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use zhiwen_api::worker::{self, WorkerOptions};
use zhiwen_api::{ApiConfig, AppState};
use zhiwen_ingest::{AddressPolicy, CancellationToken};

use crate::settings::{DataArgs, Settings};

/// `zhiwen serve`.
#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Address to listen on.
    #[arg(long, env = "ZHIWEN_LISTEN", default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// Serve the dashboard from this directory (default: the copy built into the binary).
    #[arg(long, env = "ZHIWEN_UI_DIR")]
    pub ui_dir: Option<PathBuf>,
    /// Do not enqueue the daily matching task (another process runs the schedule).
    #[arg(long)]
    pub no_scheduler: bool,
    /// Do not run tasks in this process (other workers run them).
    #[arg(long)]
    pub no_worker: bool,
    /// Run only crawl tasks here; matching tasks are left to `zhiwen worker` processes
    /// (Redis Streams), as in the deployments under `deploy/`.
    #[arg(long, env = "ZHIWEN_SERVE_CRAWLS_ONLY")]
    pub crawls_only: bool,
    /// Requests per second per API key (sustained).
    #[arg(long, env = "ZHIWEN_RATE_LIMIT", default_value_t = 50)]
    pub rate_limit: u32,
    /// Burst of requests per API key.
    #[arg(long, env = "ZHIWEN_RATE_BURST", default_value_t = 200)]
    pub rate_burst: u32,
    /// HTTP worker threads (default: one per core).
    #[arg(long, default_value_t = 0)]
    pub http_workers: usize,
    /// Chromium for PDF evidence reports (default: `chromium` found on PATH; without one,
    /// the HTML report still works and `?format=pdf` answers 501).
    #[arg(long, env = "ZHIWEN_CHROMIUM")]
    pub chromium: Option<PathBuf>,
    /// Run no evidence captures (the evidence endpoints answer 501; queued captures wait
    /// for a server or `zhiwen evidence capture --queued`).
    #[arg(long)]
    pub no_capture: bool,
    /// Let crawls started from the API fetch loopback addresses (tests, demos).
    #[arg(long)]
    pub crawl_allow_loopback: bool,
    /// Let crawls started from the API fetch private-network addresses.
    #[arg(long)]
    pub crawl_allow_private: bool,
    /// Bounds on uploaded works (as for `zhiwen import works`).
    #[command(flatten)]
    pub limits: crate::settings::ImportLimitArgs,
}

pub async fn run(data: &DataArgs, args: &ServeArgs) -> Result<()> {
    let settings = Settings::resolve(data)?;
    let matcher = settings.open_matcher().await?;
    if let Some(dir) = &args.ui_dir {
        if !dir.join("index.html").is_file() {
            tracing::warn!(dir = %dir.display(), "no index.html in the dashboard directory");
        }
    }
    let config = ApiConfig {
        ui_dir: args.ui_dir.clone(),
        rate_per_second: args.rate_limit,
        rate_burst: args.rate_burst,
        workers: args.http_workers,
        chromium: args.chromium.clone().or_else(zhiwen_ingest::find_chromium),
        import_limits: settings.import_bounds(&args.limits)?.limits,
        ..ApiConfig::default()
    };
    // The watch passes store pages as crawls do: the page bound of `[import]`.
    let watch_bounds = settings.import_bounds(&args.limits)?;
    let crawl_policy =
        AddressPolicy { allow_loopback: args.crawl_allow_loopback, allow_private: args.crawl_allow_private };
    let evidence = if args.no_capture {
        None
    } else {
        Some(Arc::new(settings.open_evidence(&matcher, crawl_policy, config.chromium.clone()).await?))
    };
    let notices = settings.notices(matcher.stores(), evidence.clone(), crawl_policy, config.chromium.clone())?;
    let alerts = settings.alerts(matcher.stores());
    let services = zhiwen_api::Services { evidence, notices: Some(notices), alerts: Some(alerts) };
    let state = AppState::with_services(matcher, settings.data_dir.clone(), config, services);
    let listener =
        std::net::TcpListener::bind(&args.listen).with_context(|| format!("cannot listen on {}", args.listen))?;
    let addr = listener.local_addr()?;
    let server = zhiwen_api::server(state.clone(), listener).context("cannot start the HTTP server")?;
    let handle = server.handle();
    let http = tokio::spawn(server);
    let shutdown = CancellationToken::new();
    let watch = settings.watch.enabled.then(|| settings.watch.config(crawl_policy, &settings.params, &watch_bounds));
    let leases = match &watch {
        Some(_) if !args.no_worker => settings.host_leases().await?,
        _ => None,
    };
    let worker = (!args.no_worker).then(|| {
        let options = WorkerOptions {
            scheduler: !args.no_scheduler,
            crawls_only: args.crawls_only,
            address_policy: crawl_policy,
            watch,
            leases,
        };
        tokio::spawn(worker::run(state.clone(), options, shutdown.clone()))
    });
    eprintln!("zhiwen serving on http://{addr} ({} store, {} index)", state.stores.backend, state.index.backend());
    wait_for_signal().await;
    eprintln!("zhiwen: shutting down");
    shutdown.cancel();
    handle.stop(true).await;
    let _ = http.await;
    if let Some(w) = worker {
        if tokio::time::timeout(Duration::from_secs(30), w).await.is_err() {
            tracing::warn!("the task worker did not stop within 30 s");
        }
    }
    Ok(())
}

/// Until Ctrl-C (SIGINT) or SIGTERM.
pub(crate) async fn wait_for_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        match signal(SignalKind::terminate()) {
            Ok(mut term) => {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = term.recv() => {}
                }
            }
            Err(_) => {
                let _ = tokio::signal::ctrl_c().await;
            }
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
