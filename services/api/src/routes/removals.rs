//! `/removals`: what became of the pages under notice: the removal watch of each page
//! (its state and every transition, the timeline of its matches), and the removal
//! statistics per site and per holder (time to removal, removal rate, pages still up,
//! licensed against infringing). A holder sees its own pages and figures only.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;
use zhiwen_store::{RemovalState, RemovalWatch, Timestamp};

use super::{State, EVERYONE};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::query;

/// The routes of this resource (under `/api/v1`).
pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/removals", web::get().to(list_watches))
        .route("/removals/stats", web::get().to(stats))
        .route("/removals/{page_id}", web::get().to(get_watch));
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListParams {
    owner: Option<String>,
    state: Option<String>,
    flagged: Option<bool>,
    site: Option<String>,
    cursor: Option<String>,
    limit: Option<u32>,
}

fn host_of(url: &str) -> Option<String> {
    url::Url::parse(url).ok().and_then(|u| u.host_str().map(str::to_owned))
}

async fn list_watches(state: State, caller: Caller, q: web::Query<ListParams>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read removals")?;
    let limit = query::limit(q.limit) as usize;
    let mut after = query::id_cursor(q.cursor.as_deref())?.unwrap_or(0);
    let owner = match caller.scope() {
        Some(o) => Some(o.to_owned()),
        None => q.owner.clone().filter(|o| !o.is_empty()),
    };
    let wanted = match q.state.as_deref().filter(|s| !s.is_empty()) {
        Some("up") => Some(RemovalState::Up),
        Some("changed") => Some(RemovalState::Changed),
        Some("removed") => Some(RemovalState::Removed),
        Some(other) => {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!("state: expected up, changed or removed, got {other:?}"),
            ))
        }
        None => None,
    };
    let mut items: Vec<serde_json::Value> = Vec::new();
    let mut next = None;
    'pages: loop {
        let page = state.stores.cases.list_watches(owner.as_deref(), after, 200).await?;
        let done = page.len() < 200;
        for (seq, w) in page {
            after = seq;
            if wanted.is_some_and(|s| s != w.state)
                || q.flagged.is_some_and(|f| f != w.flagged_at.is_some())
                || q.site.as_deref().is_some_and(|s| host_of(&w.url).as_deref() != Some(s))
            {
                continue;
            }
            if items.len() == limit {
                next = Some((seq - 1).to_string());
                break 'pages;
            }
            items.push(watch_json(&w));
        }
        if done {
            break;
        }
    }
    Ok(HttpResponse::Ok().json(json!({ "items": items, "next_cursor": next })))
}

fn watch_json(w: &RemovalWatch) -> serde_json::Value {
    let mut v = serde_json::to_value(w).unwrap_or_default();
    v["site"] = json!(host_of(&w.url));
    v
}

async fn get_watch(state: State, caller: Caller, page_id: web::Path<i64>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read removals")?;
    let w = match state.stores.cases.get_watch(*page_id).await? {
        Some(w) if caller.sees(&w.owner) => w,
        _ => return Err(ApiError::not_found("removal watch of page", *page_id)),
    };
    // The notices that named this page: the timeline is notices + transitions.
    let mut notices = Vec::new();
    let mut after = 0;
    loop {
        let page = state.stores.cases.list_notices(Some(&w.owner), after, 200).await?;
        let Some(last) = page.last() else { break };
        after = last.id;
        notices.extend(page.into_iter().filter(|n| n.page_ids.contains(&w.page_id)).map(|n| {
            json!({"id": n.id, "reference": zhiwen_takedown::reference(n.id), "state": n.state,
                   "sent_at": n.sent_at, "recipient": n.recipient, "follow_up_of": n.follow_up_of})
        }));
    }
    let mut v = watch_json(&w);
    v["notices"] = json!(notices);
    Ok(HttpResponse::Ok().json(v))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct StatsParams {
    owner: Option<String>,
}

async fn stats(state: State, caller: Caller, q: web::Query<StatsParams>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read removal statistics")?;
    let owner = match caller.scope() {
        Some(o) => Some(o.to_owned()),
        None => q.owner.clone().filter(|o| !o.is_empty()),
    };
    let s = zhiwen_capture::recheck::removal_stats(&state.stores, owner.as_deref(), Timestamp::now()).await?;
    Ok(HttpResponse::Ok().json(s))
}
