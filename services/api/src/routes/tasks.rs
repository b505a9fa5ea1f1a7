//! `/tasks`: matching and crawl tasks, started, watched and cancelled.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;
use zhiwen_store::*;

use super::{State, ADMIN, STAFF};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::query::{self};
use crate::worker::CrawlParams;

/// The routes of this resource (under `/api/v1`), in matching order.
pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/tasks", web::get().to(list_tasks))
        .route("/tasks/match", web::post().to(start_match))
        .route("/tasks/crawl", web::post().to(start_crawl))
        .route("/tasks/{id}", web::get().to(get_task))
        .route("/tasks/{id}/cancel", web::post().to(cancel_task));
}

#[derive(Deserialize)]
struct TaskListParams {
    state: Option<String>,
    kind: Option<String>,
    cursor: Option<String>,
    limit: Option<u32>,
}

fn task_json(t: &Task) -> serde_json::Value {
    let percent = if t.progress.total > 0 {
        Some(((t.progress.done as f64 / t.progress.total as f64) * 1000.0).round() / 10.0)
    } else if t.state == TaskState::Succeeded {
        Some(100.0)
    } else {
        None
    };
    json!({
        "id": t.id, "key": t.key, "kind": t.kind, "state": t.state, "progress": t.progress, "percent": percent,
        "params": t.params, "error": t.error, "created_at": t.created_at, "started_at": t.started_at,
        "finished_at": t.finished_at, "updated_at": t.updated_at,
    })
}

async fn list_tasks(state: State, caller: Caller, q: web::Query<TaskListParams>) -> ApiResult<HttpResponse> {
    caller.require(STAFF, "read tasks")?;
    let st = match q.state.as_deref().filter(|s| !s.is_empty()) {
        Some(s) => Some(
            TaskState::parse(s).ok_or_else(|| ApiError::new(ErrorCode::BadRequest, format!("state: unknown {s:?}")))?,
        ),
        None => None,
    };
    let before = query::id_cursor(q.cursor.as_deref())?.unwrap_or(i64::MAX);
    let limit = query::limit(q.limit) as usize;
    // Tasks number in the hundreds (one a day plus manual runs): read them all, newest first.
    let mut all = Vec::new();
    let mut after = 0;
    loop {
        let page = state.stores.tasks.list_tasks(st, None, after, 1000).await?;
        let Some(last) = page.last() else { break };
        after = last.id;
        all.extend(page);
    }
    let kind = q.kind.as_deref().filter(|k| !k.is_empty());
    let mut items: Vec<&Task> =
        all.iter().rev().filter(|t| t.id < before && kind.is_none_or(|k| t.kind == k)).take(limit + 1).collect();
    let next = if items.len() > limit {
        items.truncate(limit);
        items.last().map(|t| t.id.to_string())
    } else {
        None
    };
    Ok(HttpResponse::Ok()
        .json(json!({"items": items.iter().map(|t| task_json(t)).collect::<Vec<_>>(), "next_cursor": next})))
}

async fn get_task(state: State, caller: Caller, id: web::Path<i64>) -> ApiResult<HttpResponse> {
    caller.require(STAFF, "read tasks")?;
    let t = state.stores.tasks.get_task(*id).await?.ok_or_else(|| ApiError::not_found("task", *id))?;
    let mut v = task_json(&t);
    // A finished matching task's report carries the evidence log's first signed head made
    // after it (the head that covers the captures of its new matches, once they are made).
    if let (Some(service), Some(done), true) =
        (&state.evidence, t.finished_at, t.kind == zhiwen_matcher::task::TASK_KIND)
    {
        let head = service.heads_since(done.0, 1).await?.into_iter().next();
        v["evidence_tree_head"] = json!(head);
    }
    Ok(HttpResponse::Ok().json(v))
}

#[derive(Deserialize)]
struct StartMatch {
    scope: Option<String>,
    since: Option<String>,
}

async fn start_match(state: State, caller: Caller, body: web::Json<StartMatch>) -> ApiResult<HttpResponse> {
    caller.require(ADMIN, "start tasks")?;
    use zhiwen_matcher::task::{enqueue, Scope, TaskSpec};
    let scope = match body.scope.as_deref().unwrap_or("new") {
        "new" => Scope::NewSinceLastRun,
        "all" => Scope::All,
        "since" => {
            let s = body
                .since
                .as_deref()
                .ok_or_else(|| ApiError::new(ErrorCode::BadRequest, "since: required with scope since"))?;
            Scope::Since(query::parse_time(s, "since")?.0)
        }
        other => {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!("scope: expected new, all or since, got {other:?}"),
            ))
        }
    };
    let task = enqueue(&state.matcher, &TaskSpec::new(scope)).await?;
    state.worker_wake.notify_one();
    Ok(HttpResponse::Accepted().json(task_json(&task)))
}

async fn start_crawl(state: State, caller: Caller, body: web::Json<CrawlParams>) -> ApiResult<HttpResponse> {
    caller.require(ADMIN, "start tasks")?;
    if body.seeds.is_empty() || body.seeds.len() > 1000 {
        return Err(ApiError::new(ErrorCode::BadRequest, "seeds: between 1 and 1000 URLs"));
    }
    for s in &body.seeds {
        let ok = url_ok(s);
        if !ok {
            return Err(ApiError::new(ErrorCode::BadRequest, format!("seeds: not an http(s) URL: {s:?}")));
        }
    }
    let params = serde_json::to_value(&*body).map_err(ApiError::internal)?;
    // Two different crawls asked for in the same millisecond are two tasks (a key of the
    // time alone made the second a conflict); the same request repeated is one.
    let key = format!(
        "crawl:manual:{}:{:016x}",
        Timestamp::now().0,
        zhiwen_core::hash::hash_bytes(params.to_string().as_bytes())
    );
    let (task, _) =
        state.stores.tasks.create_task(&NewTask { key, kind: crate::worker::CRAWL_KIND.into(), params }).await?;
    state.worker_wake.notify_one();
    Ok(HttpResponse::Accepted().json(task_json(&task)))
}

fn url_ok(s: &str) -> bool {
    (s.starts_with("http://") || s.starts_with("https://")) && normalize_url(s).is_ok()
}

async fn cancel_task(state: State, caller: Caller, id: web::Path<i64>) -> ApiResult<HttpResponse> {
    caller.require(STAFF, "read tasks")?;
    let t = state.stores.tasks.get_task(*id).await?.ok_or_else(|| ApiError::not_found("task", *id))?;
    caller.require(ADMIN, "cancel tasks")?;
    if t.state.is_terminal() {
        return Err(ApiError::new(ErrorCode::Conflict, format!("task {} is already {}", t.id, t.state.as_str())));
    }
    let t = state.stores.tasks.cancel_task(t.id).await?;
    state.worker_wake.notify_one();
    Ok(HttpResponse::Ok().json(task_json(&t)))
}
