//! Evidence: the captures of a match, an on-demand capture, the verifiable package, and
//! the evidence log's signed tree heads and consistency proofs (what a third party keeps
//! to hold zhiwen to its log).

use actix_web::http::header::CONTENT_DISPOSITION;
use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::json;
use zhiwen_capture::EvidenceService;
use zhiwen_store::{Capture, CaptureFile, Timestamp};

use super::matches::visible_match;
use super::{State, EVERYONE};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::AppState;

/// The routes of this resource (under `/api/v1`).
pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/matches/{id}/captures", web::get().to(list_captures))
        .route("/matches/{id}/captures", web::post().to(request_capture))
        .route("/matches/{id}/captures/{capture}/files/{name:.*}", web::get().to(capture_file))
        .route("/matches/{id}/captures/{capture}/verification", web::get().to(verification))
        .route("/matches/{id}/evidence-package", web::get().to(package))
        .route("/evidence/tree-head", web::get().to(tree_head))
        .route("/evidence/tree-heads", web::get().to(tree_heads))
        .route("/evidence/consistency", web::get().to(consistency));
}

fn service(state: &AppState) -> ApiResult<&EvidenceService> {
    state
        .evidence
        .as_deref()
        .ok_or_else(|| ApiError::new(ErrorCode::NotImplemented, "evidence captures are not enabled on this server"))
}

#[derive(Serialize)]
struct CaptureJson<'a> {
    id: i64,
    match_id: i64,
    leaf_index: u64,
    captured_at: String,
    reason: &'a str,
    url: &'a str,
    files: &'a [CaptureFile],
    pruned_at: Option<String>,
    /// The capture record (the log's leaf) as JSON: source, final URL, address, notes.
    record: serde_json::Value,
}

fn capture_json(c: &Capture) -> CaptureJson<'_> {
    CaptureJson {
        id: c.id,
        match_id: c.match_id,
        leaf_index: c.leaf_index,
        captured_at: c.captured_at.rfc3339(),
        reason: &c.reason,
        url: &c.url,
        files: &c.files,
        pruned_at: c.pruned_at.map(Timestamp::rfc3339),
        record: serde_json::from_slice(&c.record).unwrap_or(serde_json::Value::Null),
    }
}

async fn list_captures(state: State, caller: Caller, id: web::Path<i64>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read evidence")?;
    let d = visible_match(&state, &caller, *id).await?;
    let service = service(&state)?;
    let captures = service.stores().evidence.captures_of_match(d.record.id).await?;
    let pending = state
        .stores
        .tasks
        .find_task(&zhiwen_matcher::task::capture_task(d.record.id, "first_match", None).key)
        .await?
        .is_some_and(|t| !t.state.is_terminal());
    Ok(HttpResponse::Ok().json(json!({
        "items": captures.iter().map(capture_json).collect::<Vec<_>>(),
        "first_capture_pending": pending,
        "public_key": service.public_key(),
    })))
}

async fn request_capture(state: State, caller: Caller, id: web::Path<i64>) -> ApiResult<HttpResponse> {
    let d = visible_match(&state, &caller, *id).await?;
    caller.require(EVERYONE, "request captures")?;
    let service = service(&state)?;
    let task = zhiwen_capture::request_capture(service, d.record.id).await?;
    state.worker_wake.notify_waiters();
    tracing::info!(match_id = d.record.id, task_id = task.id, actor = %caller.actor(), "capture requested");
    Ok(HttpResponse::Accepted().json(json!({ "task_id": task.id, "key": task.key, "state": task.state })))
}

async fn capture_file(state: State, caller: Caller, path: web::Path<(i64, i64, String)>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read evidence")?;
    let (match_id, capture_id, name) = path.into_inner();
    let d = visible_match(&state, &caller, match_id).await?;
    let service = service(&state)?;
    let capture = match service.stores().evidence.get_capture(capture_id).await? {
        Some(c) if c.match_id == d.record.id => c,
        _ => return Err(ApiError::not_found("capture", capture_id)),
    };
    let file = capture.files.iter().find(|f| f.name == name).ok_or_else(|| ApiError::not_found("file", &name))?;
    let bytes = service
        .read_file(&file.sha256)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::Conflict, format!("{name} is no longer kept")))?;
    let base = name.rsplit('/').next().unwrap_or("file");
    Ok(HttpResponse::Ok()
        .content_type(file.media_type.as_str())
        // Captured content is never rendered as this origin's page (a captured page's
        // scripts must not run with the dashboard's rights).
        .insert_header((CONTENT_DISPOSITION, format!("attachment; filename=\"{base}\"")))
        .insert_header(("Content-Security-Policy", "sandbox; default-src 'none'"))
        .body(bytes))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PackageParams {
    capture: Option<i64>,
}

async fn package(
    state: State,
    caller: Caller,
    id: web::Path<i64>,
    q: web::Query<PackageParams>,
) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "export evidence")?;
    let d = visible_match(&state, &caller, *id).await?;
    let service = service(&state)?;
    let (capture, bytes) = crate::package::match_package(&state, service, &d, q.capture).await?;
    Ok(HttpResponse::Ok()
        .content_type("application/zip")
        .insert_header((
            CONTENT_DISPOSITION,
            format!("attachment; filename=\"evidence-match-{}-capture-{}.zip\"", d.record.id, capture.id),
        ))
        .body(bytes))
}

/// The package of a capture, built as it would be downloaded and checked as a third party
/// checks it (with this server's public key): what the dashboard shows beside a capture.
async fn verification(state: State, caller: Caller, path: web::Path<(i64, i64)>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read evidence")?;
    let (match_id, capture_id) = path.into_inner();
    let d = visible_match(&state, &caller, match_id).await?;
    let service = service(&state)?;
    let (capture, bytes) = crate::package::match_package(&state, service, &d, Some(capture_id)).await?;
    let package =
        zhiwen_evidence::read_package(std::io::Cursor::new(&bytes), zhiwen_evidence::PackageLimits::default())
            .map_err(ApiError::internal)?;
    let v = package.verify(Some(&service.public_key()), None);
    Ok(HttpResponse::Ok().json(json!({
        "capture_id": capture.id,
        "ok": v.ok(),
        "summary": v.summary(),
        "checks": v.checks,
        "package_bytes": bytes.len(),
        "tree_size": package.head.head.size,
        "public_key": service.public_key(),
    })))
}

/// The current signed tree head (signed now when the log grew since the latest one).
async fn tree_head(state: State, caller: Caller) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read the evidence log")?;
    let service = service(&state)?;
    let head = service.sign_head(zhiwen_store::Timestamp::now().0).await?;
    Ok(HttpResponse::Ok().json(head))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HeadsParams {
    /// Unix milliseconds.
    since: Option<i64>,
    limit: Option<u32>,
}

async fn tree_heads(state: State, caller: Caller, q: web::Query<HeadsParams>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read the evidence log")?;
    let service = service(&state)?;
    let heads = service.heads_since(q.since.unwrap_or(0), q.limit.unwrap_or(100).clamp(1, 1000)).await?;
    Ok(HttpResponse::Ok().json(json!({ "items": heads, "public_key": service.public_key() })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ConsistencyParams {
    from: u64,
    to: u64,
}

async fn consistency(state: State, caller: Caller, q: web::Query<ConsistencyParams>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read the evidence log")?;
    let service = service(&state)?;
    if q.from == 0 || q.from > q.to {
        return Err(ApiError::new(ErrorCode::BadRequest, "from and to: expected 0 < from <= to"));
    }
    let proof = service.consistency_proof(q.from, q.to).await.map_err(|e| match e {
        zhiwen_capture::CaptureError::Evidence(e) => ApiError::new(ErrorCode::BadRequest, e.to_string()),
        other => other.into(),
    })?;
    Ok(HttpResponse::Ok().json(json!({ "from": q.from, "to": q.to, "consistency_proof": proof })))
}
