//! `/watched-sites`: the sites zhiwen re-visits on a schedule for the holders they concern
//! (their entry points, chapter link patterns, politeness budget) and the schedule state
//! of each entry point. Admins manage every site; a holder adds sites (adding a host that
//! another holder watches joins that site: one site, one schedule, its definition the
//! union of what each asked for), sees the sites that concern it (without the names of
//! the other holders) and leaves them; analysts read. A site that does not concern a
//! holder is the same 404 as one that does not exist.

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use zhiwen_store::{Left, NewWatchedSite, Outcome, Timestamp, WatchedSite};

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
    let items: Vec<WatchedSite> =
        state.stores.cases.list_watched_sites(owner.as_deref()).await?.into_iter().map(|s| shown(&caller, s)).collect();
    Ok(HttpResponse::Ok().json(serde_json::json!({ "items": items })))
}

/// Whether the caller may see the site: admins and analysts all, a holder those that
/// concern it.
fn sees(caller: &Caller, site: &WatchedSite) -> bool {
    caller.scope().is_none_or(|mine| site.concerns(mine))
}

/// The site as the caller may see it: a holder learns no other holder's name (the site
/// shows as its own).
fn shown(caller: &Caller, mut site: WatchedSite) -> WatchedSite {
    if let Some(mine) = caller.scope() {
        site.owner = mine.to_owned();
        site.holders = vec![mine.to_owned()];
    } else {
        site.holders = site.all_holders();
    }
    site
}

async fn get_site(state: State, caller: Caller, id: web::Path<String>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read watched sites")?;
    match state.stores.cases.get_watched_site(&id).await? {
        Some(s) if sees(&caller, &s) => Ok(HttpResponse::Ok().json(shown(&caller, s))),
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
        // An id of another holder's site on another host: a holder learns no more than
        // that it may not use that id.
        Err(zhiwen_store::StoreError::Conflict { .. }) if caller.scope().is_some() => {
            return Err(ApiError::new(ErrorCode::Forbidden, "this id names a site of another host"))
        }
        Err(e) => return Err(e.into()),
    };
    tracing::info!(id = %site.id, owner = %site.owner, ?outcome, actor = %caller.actor(), "watched site written");
    // A new entry point is due at once: wake the task loop.
    state.worker_wake.notify_one();
    let status = if outcome == Outcome::Inserted { 201 } else { 200 };
    Ok(HttpResponse::build(actix_web::http::StatusCode::from_u16(status).unwrap_or_default())
        .json(serde_json::json!({ "outcome": outcome, "site": shown(&caller, site) })))
}

async fn delete_site(state: State, caller: Caller, id: web::Path<String>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read watched sites")?;
    let Some(site) = state.stores.cases.get_watched_site(&id).await?.filter(|s| sees(&caller, s)) else {
        return Err(ApiError::not_found("watched site", id.as_str()));
    };
    caller.require(WRITERS, "remove watched sites")?;
    // A holder leaves the site (it stays for the others); an admin stops it for all.
    let outcome = match caller.scope() {
        Some(mine) => state.stores.cases.leave_watched_site(&site.id, mine, &caller.actor(), Timestamp::now()).await?,
        None if state.stores.cases.delete_watched_site(&site.id).await? => Left::Deleted,
        None => Left::NotWatched,
    };
    if outcome == Left::NotWatched {
        return Err(ApiError::not_found("watched site", id.as_str()));
    }
    tracing::info!(id = %site.id, ?outcome, actor = %caller.actor(), "watched site removed");
    // A holder is told the site is gone for it, whether or not others still watch it.
    Ok(HttpResponse::Ok().json(serde_json::json!({ "deleted": site.id })))
}
