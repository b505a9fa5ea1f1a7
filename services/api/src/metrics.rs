//! `/metrics` (Prometheus text format, the `prometheus` crate), request counting and
//! latency histograms, and the request timeout.

use std::sync::Arc;
use std::time::Instant;

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::middleware::Next;
use actix_web::{web, HttpResponse};
use prometheus::{Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGaugeVec, Opts, Registry, TextEncoder};
use zhiwen_index::Namespace;
use zhiwen_store::{MatchGroup, MatchQuery};

use crate::error::{ApiError, ErrorCode};
use crate::AppState;

pub(crate) struct Metrics {
    registry: Registry,
    requests: IntCounterVec,
    latency: HistogramVec,
    gauge: Arc<TaskGauge>,
}

/// Progress of tasks run by this process.
pub(crate) struct TaskGauge {
    done: IntGaugeVec,
    total: IntGaugeVec,
}

impl TaskGauge {
    pub(crate) fn set(&self, task_id: i64, kind: &str, done: u64, total: u64) {
        let id = task_id.to_string();
        self.done.with_label_values(&[id.as_str(), kind]).set(done as i64);
        self.total.with_label_values(&[id.as_str(), kind]).set(total as i64);
    }
}

impl Metrics {
    pub(crate) fn new() -> Self {
        let registry = Registry::new();
        let requests = IntCounterVec::new(
            Opts::new("zhiwen_http_requests_total", "HTTP requests by method, route and status"),
            &["method", "route", "status"],
        )
        .expect("valid metric");
        let latency = HistogramVec::new(
            HistogramOpts::new("zhiwen_http_request_duration_seconds", "HTTP request latency by route")
                .buckets(vec![0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0]),
            &["route"],
        )
        .expect("valid metric");
        let done = IntGaugeVec::new(
            Opts::new("zhiwen_task_progress_done", "Items done by a task run in this process"),
            &["task_id", "kind"],
        )
        .expect("valid metric");
        let total = IntGaugeVec::new(
            Opts::new("zhiwen_task_progress_total", "Items in scope of a task run in this process"),
            &["task_id", "kind"],
        )
        .expect("valid metric");
        for c in [
            Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
            Box::new(latency.clone()),
            Box::new(done.clone()),
            Box::new(total.clone()),
        ] {
            registry.register(c).expect("metric registered once");
        }
        Metrics { registry, requests, latency, gauge: Arc::new(TaskGauge { done, total }) }
    }

    pub(crate) fn task_gauge(&self) -> Arc<TaskGauge> {
        self.gauge.clone()
    }
}

/// Count and time every request; cut off handlers that exceed the request timeout.
pub(crate) async fn track(
    req: ServiceRequest,
    next: Next<impl MessageBody + 'static>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let state = req.app_data::<web::Data<AppState>>().cloned();
    let route = req.match_pattern().unwrap_or_else(|| "unmatched".into());
    let method = req.method().to_string();
    let start = Instant::now();
    let timeout = state.as_ref().map(|s| s.config.request_timeout).unwrap_or(std::time::Duration::from_secs(30));
    let res = match tokio::time::timeout(timeout, next.call(req)).await {
        Ok(r) => r,
        Err(_) => Err(ApiError::new(ErrorCode::Unavailable, "the request took too long").into()),
    };
    if let Some(state) = state {
        let status = match &res {
            Ok(r) => r.status().as_u16(),
            Err(e) => e.as_response_error().status_code().as_u16(),
        };
        state.metrics.requests.with_label_values(&[method.as_str(), route.as_str(), &status.to_string()]).inc();
        state.metrics.latency.with_label_values(&[route.as_str()]).observe(start.elapsed().as_secs_f64());
    }
    res
}

fn gauge(name: &str, help: &str, v: f64) -> String {
    format!("# HELP {name} {help}\n# TYPE {name} gauge\n{name} {v}\n")
}

/// `GET /metrics`.
pub(crate) async fn render(state: web::Data<AppState>) -> Result<HttpResponse, ApiError> {
    let mut out = Vec::new();
    TextEncoder::new().encode(&state.metrics.registry.gather(), &mut out).map_err(ApiError::internal)?;
    let mut text = String::from_utf8(out).map_err(ApiError::internal)?;
    let q = &state.stores.queries;
    let all = MatchQuery::default();
    text.push_str(&gauge("zhiwen_matches_total", "Stored matches", q.count_matches(&all).await? as f64));
    text.push_str(
        "# HELP zhiwen_matches_by_status Stored matches by review status\n# TYPE zhiwen_matches_by_status gauge\n",
    );
    for (s, n) in q.group_matches(&all, MatchGroup::Status).await? {
        text.push_str(&format!("zhiwen_matches_by_status{{status=\"{s}\"}} {n}\n"));
    }
    text.push_str(&gauge("zhiwen_works_total", "Registered works", state.stores.works.count_works().await? as f64));
    text.push_str(&gauge("zhiwen_pages_total", "Stored pages", state.stores.pages.count_pages().await? as f64));
    text.push_str(&gauge(
        "zhiwen_import_readers",
        "Import reader threads running (uploads being read; a dropped upload's reader stops within moments)",
        zhiwen_ingest::running_import_readers() as f64,
    ));
    match state.index.stats().await {
        Ok(s) => {
            let docs = s.namespace(Namespace::Sections).documents + s.namespace(Namespace::Pages).documents;
            let postings = s.namespace(Namespace::Sections).postings + s.namespace(Namespace::Pages).postings;
            text.push_str(&gauge("zhiwen_index_documents", "Documents in the candidate index", docs as f64));
            text.push_str(&gauge("zhiwen_index_entries", "Postings in the candidate index", postings as f64));
            text.push_str(&gauge("zhiwen_index_bytes", "Bytes used by the candidate index", s.bytes_used as f64));
            if let Some(f) = s.section_filter {
                text.push_str(&gauge(
                    "zhiwen_index_section_filter_bits",
                    "Bits in the Redis section filter",
                    f.bits as f64,
                ));
                text.push_str(&gauge(
                    "zhiwen_index_section_filter_fill",
                    "Share of the section filter's bits set (past 0.5 it skips few keys: enlarge it and reindex)",
                    f.bits_set as f64 / f.bits.max(1) as f64,
                ));
            }
        }
        Err(e) => tracing::warn!(error = %e, "index statistics unavailable"),
    }
    Ok(HttpResponse::Ok().content_type("text/plain; version=0.0.4; charset=utf-8").body(text))
}
