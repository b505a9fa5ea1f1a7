//! The admin API of zhiwen (contract: `docs/api.md`), on actix-web: API keys with roles
//! (admin, analyst, holder limited to its owner), works, pages, matches with evidence
//! and review, statistics, tasks, exports and printable evidence reports, plus
//! `/health`, `/ready`, `/metrics` and the dashboard's static files.
//!
//! It owns HTTP: routing (`routes`, one module per resource), authentication,
//! authorisation, limits, error mapping and the response shapes, and how evidence reads
//! to a reviewer (`evidence`: quoted passages, the finding and the verdict's reasons,
//! shared by the match view and the report). It
//! must not run the algorithms (core), know storage layouts (store), or import or match
//! itself (ingest, matcher): it calls them. The task worker and the scheduler that
//! `zhiwen serve` runs next to the API live in [`worker`].

pub mod alerts;
pub mod auth;
mod error;
mod evidence;
mod exports;
mod metrics;
pub mod openapi;
pub mod package;
pub mod pdf;
mod query;
mod report;
mod routes;
mod ui;
pub mod worker;

use std::net::TcpListener;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use actix_web::{middleware, web, App, HttpServer};
use zhiwen_index::CandidateIndex;
use zhiwen_matcher::Matcher;
use zhiwen_store::Stores;

pub use auth::{generate_key, hash_key, CreatedKey};
pub use error::{ApiError, ErrorCode};

/// Limits and switches of the API.
#[derive(Debug, Clone)]
pub struct ApiConfig {
    /// Largest JSON body.
    pub json_limit: usize,
    /// Largest uploaded file.
    pub upload_limit: usize,
    /// Requests per second per key (sustained).
    pub rate_per_second: u32,
    /// Burst per key.
    pub rate_burst: u32,
    /// How long a verified key is trusted before it is looked up again (revocations
    /// take effect after at most this long).
    pub key_cache_ttl: Duration,
    /// Client request (headers) timeout and slow-request cut-off.
    pub request_timeout: Duration,
    /// Dashboard files on disk; `None`: the copy embedded at build time, if any.
    pub ui_dir: Option<PathBuf>,
    /// HTTP worker threads (0: actix's default, one per core).
    pub workers: usize,
    /// Chromium used to print evidence reports as PDF (`None`: PDF reports answer 501).
    pub chromium: Option<PathBuf>,
    /// Bounds on uploaded works (archive entries, uncompressed sizes, ratios). An upload
    /// whose request times out or loses its client stops being read at once.
    pub import_limits: zhiwen_ingest::ImportLimits,
}

impl Default for ApiConfig {
    fn default() -> Self {
        ApiConfig {
            json_limit: 1024 * 1024,
            upload_limit: 32 * 1024 * 1024,
            rate_per_second: 50,
            rate_burst: 200,
            key_cache_ttl: Duration::from_secs(2),
            request_timeout: Duration::from_secs(30),
            ui_dir: None,
            workers: 0,
            chromium: None,
            import_limits: zhiwen_ingest::ImportLimits::default(),
        }
    }
}

/// What every handler shares.
pub struct AppState {
    /// The stores.
    pub stores: Stores,
    /// The candidate index (for `/ready`, `/metrics` and work deletion).
    pub index: Arc<dyn CandidateIndex>,
    /// The matcher (its parameters, thresholds and section cache).
    pub matcher: Matcher,
    /// Limits.
    pub config: ApiConfig,
    /// Verified keys and rate limits.
    pub(crate) auth: auth::AuthState,
    /// Prometheus registry.
    pub(crate) metrics: metrics::Metrics,
    /// Data directory (crawl frontiers live under it).
    pub data_dir: PathBuf,
    /// Wakes the task worker when a task is enqueued.
    pub worker_wake: Arc<tokio::sync::Notify>,
    /// Evidence captures, their log and packages; `None` when the server was started
    /// without them (the evidence endpoints answer 501).
    pub evidence: Option<Arc<zhiwen_capture::EvidenceService>>,
    /// Takedown notices; `None` when the server was started without them (the notice
    /// endpoints that draft or send answer 501).
    pub notices: Option<zhiwen_takedown::Notices>,
    /// The holders' e-mail alerts of new matches; `None`: no alert e-mail is sent (the
    /// settings can still be edited).
    pub alerts: Option<zhiwen_takedown::Alerts>,
}

/// The optional services of a server: evidence captures, takedown notices and alerts.
#[derive(Debug, Default, Clone)]
pub struct Services {
    /// Evidence captures, their log and packages.
    pub evidence: Option<Arc<zhiwen_capture::EvidenceService>>,
    /// Takedown notices.
    pub notices: Option<zhiwen_takedown::Notices>,
    /// The holders' e-mail alerts.
    pub alerts: Option<zhiwen_takedown::Alerts>,
}

impl AppState {
    /// State over opened stores and index, without the optional services.
    pub fn new(matcher: Matcher, data_dir: PathBuf, config: ApiConfig) -> Arc<Self> {
        Self::with_services(matcher, data_dir, config, Services::default())
    }

    /// State over opened stores and index, with `services`.
    pub fn with_services(matcher: Matcher, data_dir: PathBuf, config: ApiConfig, services: Services) -> Arc<Self> {
        let stores = matcher.stores().clone();
        let index = matcher.index().clone();
        Arc::new(AppState {
            stores,
            index,
            auth: auth::AuthState::new(&config),
            metrics: metrics::Metrics::new(),
            matcher,
            config,
            data_dir,
            worker_wake: Arc::new(tokio::sync::Notify::new()),
            evidence: services.evidence,
            notices: services.notices,
            alerts: services.alerts,
        })
    }
}

/// Register every route on `cfg` (used by [`server`] and by tests).
pub fn configure(state: Arc<AppState>) -> impl FnOnce(&mut web::ServiceConfig) {
    move |cfg: &mut web::ServiceConfig| {
        let json_limit = state.config.json_limit;
        cfg.app_data(web::Data::from(state.clone()))
            .app_data(web::JsonConfig::default().limit(json_limit).error_handler(error::json_error))
            .app_data(web::QueryConfig::default().error_handler(error::query_error))
            .app_data(web::PathConfig::default().error_handler(error::path_error))
            .app_data(web::PayloadConfig::default().limit(state.config.upload_limit))
            .service(openapi::swagger())
            .configure(routes::routes)
            .configure(ui::routes);
    }
}

/// An HTTP server of the API on `listener` (not yet started: `.await` it, or spawn it
/// and keep its handle to stop it).
pub fn server(state: Arc<AppState>, listener: TcpListener) -> std::io::Result<actix_web::dev::Server> {
    let timeout = state.config.request_timeout;
    let workers = state.config.workers;
    let st = state.clone();
    let mut server = HttpServer::new(move || {
        App::new()
            .wrap(middleware::from_fn(metrics::track))
            .wrap(middleware::DefaultHeaders::new().add(("X-Content-Type-Options", "nosniff")))
            .configure(configure(st.clone()))
    })
    .client_request_timeout(timeout)
    .client_disconnect_timeout(Duration::from_secs(5))
    // A client that hangs up mid-request ends its connection, and with it the handler
    // (and an upload's import), instead of leaving it to run until the request timeout.
    .h1_allow_half_closed(false)
    .shutdown_timeout(10)
    // SIGINT/SIGTERM stop the server gracefully (in-flight requests finish).
    .disable_signals()
    .listen(listener)?;
    if workers > 0 {
        server = server.workers(workers);
    }
    Ok(server.run())
}
