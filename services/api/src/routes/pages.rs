//! `/pages`: stored pages, as the matches they carry let a caller see them.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;
use zhiwen_store::*;

use super::{State, EVERYONE};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult};
use crate::query::{self};
use crate::AppState;

/// The routes of this resource (under `/api/v1`), in matching order.
pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/pages", web::get().to(list_pages)).route("/pages/{id}", web::get().to(get_page));
}

#[derive(Deserialize)]
struct PageListParams {
    url: Option<String>,
    site: Option<String>,
    from: Option<String>,
    to: Option<String>,
    cursor: Option<String>,
    limit: Option<u32>,
}

async fn list_pages(state: State, caller: Caller, q: web::Query<PageListParams>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "list pages")?;
    let limit = query::limit(q.limit);
    let after = query::id_cursor(q.cursor.as_deref())?.unwrap_or(0);
    let (from, until) = query::range(q.from.as_deref(), q.to.as_deref())?;
    let pq = PageQuery {
        owner: caller.scope().map(str::to_owned),
        url: q.url.clone().filter(|u| !u.is_empty()),
        site: q.site.clone().filter(|s| !s.is_empty()),
        fetched_from: from,
        fetched_until: until,
    };
    let mut pages = match state.stores.queries.search_pages(&pq, after, limit + 1).await {
        Err(StoreError::InvalidInput { .. }) if pq.url.is_some() => Vec::new(),
        other => other?,
    };
    let next = if pages.len() > limit as usize {
        pages.truncate(limit as usize);
        pages.last().map(|p| p.id.to_string())
    } else {
        None
    };
    let items: Vec<_> = pages
        .iter()
        .map(|p| json!({"id": p.id, "url": p.url, "site": p.site, "last_fetched_at": p.last_fetched_at}))
        .collect();
    Ok(HttpResponse::Ok().json(json!({"items": items, "next_cursor": next})))
}

/// A page the caller may see (holders: only pages with a match of their works).
async fn visible_page(state: &AppState, caller: &Caller, id: i64) -> ApiResult<Page> {
    if let Some(owner) = caller.scope() {
        let q = MatchQuery { owner: Some(owner.to_owned()), page_id: Some(id), ..Default::default() };
        if state.stores.queries.count_matches(&q).await? == 0 {
            return Err(ApiError::not_found("page", id));
        }
    }
    state.stores.pages.get_page(id).await?.ok_or_else(|| ApiError::not_found("page", id))
}

#[derive(Deserialize)]
struct PageParams {
    body: Option<bool>,
}

async fn get_page(
    state: State,
    caller: Caller,
    id: web::Path<i64>,
    q: web::Query<PageParams>,
) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read pages")?;
    let p = visible_page(&state, &caller, *id).await?;
    let body = q.body.unwrap_or(false).then(|| base64_encode(&p.body));
    Ok(HttpResponse::Ok().json(json!({
        "id": p.id, "url": p.url, "site": p.site, "first_fetched_at": p.first_fetched_at,
        "last_fetched_at": p.last_fetched_at, "http_status": p.http_status, "charset": p.charset,
        "text": p.text, "source": p.source, "body_base64": body,
    })))
}

fn base64_encode(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for c in bytes.chunks(3) {
        let n = (c[0] as u32) << 16 | (*c.get(1).unwrap_or(&0) as u32) << 8 | *c.get(2).unwrap_or(&0) as u32;
        out.push(T[(n >> 18) as usize & 63] as char);
        out.push(T[(n >> 12) as usize & 63] as char);
        out.push(if c.len() > 1 { T[(n >> 6) as usize & 63] as char } else { '=' });
        out.push(if c.len() > 2 { T[n as usize & 63] as char } else { '=' });
    }
    out
}
