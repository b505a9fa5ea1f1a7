//! `/watched-sites`: the sites zhiwen re-visits on a schedule for a holder (their entry
//! points, chapter link patterns, politeness budget) and the schedule state of each
//! entry point. Admins manage every site, a holder its own; analysts read. Another
//! holder's site is the same 404 as one that does not exist, except that adding a site
//! already watched for another holder is refused (403).

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use zhiwen_store::{NewWatchedSite, Outcome, Timestamp};

use super::{State, EVERYONE, WRITERS};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorCode};

/// The routes of this resource (under `/api/v1`).
pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/watched-sites", web::get().to(list_sites))
        .route("/watched-sites", web::post().to(add_site))
        .route("/watched-sites/{id}", web::get().to(get_site))
        .route("/watched-sites/{id}", web::delete().to(delete_site));
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListParams {
    owner: Option<String>,
}

async fn list_sites(state: State, caller: Caller, q: web::Query<ListParams>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read watched sites")?;
    let owner = match caller.scope() {
        Some(mine) => Some(mine.to_owned()),
        None => q.owner.clone().filter(|o| !o.is_empty()),
    };
    let items = state.stores.cases.list_watched_sites(owner.as_deref()).await?;
    Ok(HttpResponse::Ok().json(serde_json::json!({ "items": items })))
}

async fn get_site(state: State, caller: Caller, id: web::Path<String>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read watched sites")?;
    match state.stores.cases.get_watched_site(&id).await? {
        Some(s) if caller.sees(&s.owner) => Ok(HttpResponse::Ok().json(s)),
        _ => Err(ApiError::not_found("watched site", id.as_str())),
    }
}

// A field this endpoint does not take is refused, not ignored.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct SiteBody {
    /// Id (default: the host of the entry points).
    #[serde(default)]
    id: Option<String>,
    /// The holder (a holder key: its own, the default).
    #[serde(default)]
    owner: Option<String>,
    entry_points: Vec<String>,
    #[serde(default)]
    chapter_patterns: Vec<String>,
    #[serde(default)]
    min_delay_secs: Option<u64>,
}

async fn add_site(state: State, caller: Caller, body: web::Json<SiteBody>) -> ApiResult<HttpResponse> {
    caller.require(WRITERS, "add watched sites")?;
    let b = body.into_inner();
    let asked = b.owner.as_deref().map(str::trim).filter(|o| !o.is_empty());
    let owner = match (caller.scope(), asked) {
        (Some(mine), None) => mine.to_owned(),
        (Some(mine), Some(o)) if o == mine => mine.to_owned(),
        (Some(_), Some(_)) => {
            return Err(ApiError::new(ErrorCode::Forbidden, "a holder key may only watch sites for its own owner"))
        }
        (None, Some(o)) => o.to_owned(),
        (None, None) => return Err(ApiError::new(ErrorCode::BadRequest, "owner: required")),
    };
    let new = NewWatchedSite {
        id: b.id.map(|i| i.trim().to_owned()).filter(|i| !i.is_empty()),
        owner,
        entry_points: b.entry_points,
        chapter_patterns: b.chapter_patterns,
        min_delay_secs: b.min_delay_secs,
    };
    let (site, outcome) = match state.stores.cases.put_watched_site(&new, &caller.actor(), Timestamp::now()).await {
        Ok(r) => r,
        // Another holder's site: a holder learns no more than that it may not have it.
        Err(zhiwen_store::StoreError::Conflict { .. }) if caller.scope().is_some() => {
            return Err(ApiError::new(ErrorCode::Forbidden, "this site is watched for another holder"))
        }
        Err(e) => return Err(e.into()),
    };
    tracing::info!(id = %site.id, owner = %site.owner, ?outcome, actor = %caller.actor(), "watched site written");
    // A new entry point is due at once: wake the task loop.
    state.worker_wake.notify_one();
    let status = if outcome == Outcome::Inserted { 201 } else { 200 };
    Ok(HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap_or_default())
        .json(serde_json::json!({ "outcome": outcome, "site": site })))
}

async fn delete_site(state: State, caller: Caller, id: web::Path<String>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read watched sites")?;
    match state.stores.cases.get_watched_site(&id).await? {
        Some(s) if caller.sees(&s.owner) => {
            caller.require(WRITERS, "remove watched sites")?;
            state.stores.cases.delete_watched_site(&s.id).await?;
            tracing::info!(id = %s.id, owner = %s.owner, actor = %caller.actor(), "watched site removed");
            Ok(HttpResponse::Ok().json(serde_json::json!({ "deleted": s.id })))
        }
        _ => Err(ApiError::not_found("watched site", id.as_str())),
    }
}
