//! `/notices`: takedown notices (draft, send at most once, export for sending by hand,
//! record a send's outcome, withdraw), their rendered files, the addresses a site's
//! notice could go to, and the notice templates. A holder sees and sends only its own
//! notices; another's is the same 404 as one that does not exist. Analysts, the
//! reviewers, draft and send for every holder; only admins edit templates and record the
//! outcome of a send that did not finish.

use actix_web::http::header::CONTENT_DISPOSITION;
use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;
use zhiwen_store::{Notice, NoticeState};
use zhiwen_takedown::{DraftRequest, Lang, Notices, Part};

use super::holders::content_disposition;
use super::{State, ADMIN, EVERYONE};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::{query, AppState};

/// The routes of this resource (under `/api/v1`).
pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/notices", web::get().to(list_notices))
        .route("/notices", web::post().to(draft))
        .route("/notices/{id}", web::get().to(get_notice))
        .route("/notices/{id}/send", web::post().to(send))
        .route("/notices/{id}/export", web::post().to(export))
        .route("/notices/{id}/resolve", web::post().to(resolve))
        .route("/notices/{id}/cancel", web::post().to(cancel))
        .route("/notices/{id}/files/{name}", web::get().to(file))
        .route("/sites/{host}/contacts", web::get().to(contacts))
        .route("/notice-templates", web::get().to(templates))
        .route("/notice-templates/{lang}/{part}", web::put().to(put_template));
}

fn service(state: &AppState) -> ApiResult<&Notices> {
    state
        .notices
        .as_ref()
        .ok_or_else(|| ApiError::new(ErrorCode::NotImplemented, "takedown notices are not enabled on this server"))
}

/// The notice `id` if the caller may see it (a holder: its own).
async fn visible_notice(state: &AppState, caller: &Caller, id: i64) -> ApiResult<Notice> {
    match state.stores.cases.get_notice(id).await? {
        Some(n) if caller.sees(&n.owner) => Ok(n),
        _ => Err(ApiError::not_found("notice", id)),
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListParams {
    owner: Option<String>,
    state: Option<String>,
    site: Option<String>,
    cursor: Option<String>,
    limit: Option<u32>,
}

async fn list_notices(state: State, caller: Caller, q: web::Query<ListParams>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read notices")?;
    let limit = query::limit(q.limit);
    let mut after = query::id_cursor(q.cursor.as_deref())?.unwrap_or(0);
    let owner = match caller.scope() {
        Some(o) => Some(o.to_owned()),
        None => q.owner.clone().filter(|o| !o.is_empty()),
    };
    let wanted = match q.state.as_deref().filter(|s| !s.is_empty()) {
        Some(s) => Some(NoticeState::parse(s).ok_or_else(|| {
            ApiError::new(
                ErrorCode::BadRequest,
                format!("state: expected draft, sending, sent, exported or cancelled, got {s:?}"),
            )
        })?),
        None => None,
    };
    // Filters on state and site read on until a page is full (notices are few).
    let mut items = Vec::new();
    let mut next = None;
    loop {
        let page = state.stores.cases.list_notices(owner.as_deref(), after, 200).await?;
        let Some(last) = page.last() else { break };
        after = last.id;
        let full = page.len() < 200;
        for n in page {
            if wanted.is_some_and(|w| w != n.state) || q.site.as_deref().is_some_and(|s| !n.hosts().contains(&s)) {
                continue;
            }
            if items.len() == limit as usize {
                next = items.last().map(|n: &Notice| n.id.to_string());
                break;
            }
            items.push(n);
        }
        if next.is_some() || full {
            break;
        }
    }
    Ok(HttpResponse::Ok().json(json!({ "items": items, "next_cursor": next })))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DraftBody {
    /// The holder (a holder's key: always itself).
    owner: Option<String>,
    site: String,
    /// Other sites of the same hosting provider, in the same notice.
    #[serde(default)]
    provider_sites: Vec<String>,
    #[serde(default)]
    match_ids: Vec<i64>,
    lang: Option<String>,
    recipient: Option<String>,
    follow_up_of: Option<i64>,
}

async fn draft(state: State, caller: Caller, body: web::Json<DraftBody>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "draft notices")?;
    let owner = match (caller.scope(), body.owner.as_deref()) {
        (Some(mine), Some(asked)) if asked != mine => return Err(ApiError::not_found("holder", asked)),
        (Some(mine), _) => mine.to_owned(),
        (None, Some(o)) if !o.is_empty() => o.to_owned(),
        (None, _) => return Err(ApiError::new(ErrorCode::BadRequest, "owner: required")),
    };
    let lang = Lang::parse(body.lang.as_deref().unwrap_or("zh-CN"))
        .map_err(|e| ApiError::new(ErrorCode::BadRequest, format!("lang: {e}")))?;
    let req = DraftRequest {
        owner,
        site: body.site.clone(),
        provider_sites: body.provider_sites.clone(),
        match_ids: body.match_ids.clone(),
        lang,
        recipient: body.recipient.clone(),
        follow_up_of: body.follow_up_of,
        by: caller.actor(),
    };
    let (notice, outcome) = service(&state)?.draft(&req).await?;
    let status = if outcome == zhiwen_store::Outcome::Inserted { 201 } else { 200 };
    Ok(HttpResponse::build(actix_web::http::StatusCode::from_u16(status).map_err(ApiError::internal)?).json(notice))
}

async fn get_notice(state: State, caller: Caller, id: web::Path<i64>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read notices")?;
    Ok(HttpResponse::Ok().json(visible_notice(&state, &caller, *id).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RecipientBody {
    #[serde(default)]
    recipient: Option<String>,
}

/// The body is required (`{}` for the address chosen at draft): a malformed one is a
/// 400, never read as "no recipient given" (which would send to the draft's address).
async fn send(
    state: State,
    caller: Caller,
    id: web::Path<i64>,
    body: web::Json<RecipientBody>,
) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "send notices")?;
    let n = visible_notice(&state, &caller, *id).await?;
    let recipient = body.into_inner().recipient;
    let sent = service(&state)?.send(n.id, recipient.as_deref(), &caller.actor()).await?;
    Ok(HttpResponse::Ok().json(sent))
}

async fn export(
    state: State,
    caller: Caller,
    id: web::Path<i64>,
    body: web::Json<RecipientBody>,
) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "export notices")?;
    let n = visible_notice(&state, &caller, *id).await?;
    let recipient = body.into_inner().recipient;
    let (notice, _) = service(&state)?.export(n.id, recipient.as_deref(), &caller.actor()).await?;
    Ok(HttpResponse::Ok().json(notice))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ResolveBody {
    delivered: bool,
}

async fn resolve(
    state: State,
    caller: Caller,
    id: web::Path<i64>,
    body: web::Json<ResolveBody>,
) -> ApiResult<HttpResponse> {
    let n = visible_notice(&state, &caller, *id).await?;
    caller.require(ADMIN, "record the outcome of a send")?;
    Ok(HttpResponse::Ok().json(service(&state)?.resolve(n.id, body.delivered, &caller.actor()).await?))
}

async fn cancel(state: State, caller: Caller, id: web::Path<i64>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "withdraw notices")?;
    let n = visible_notice(&state, &caller, *id).await?;
    Ok(HttpResponse::Ok().json(service(&state)?.cancel(n.id).await?))
}

async fn file(state: State, caller: Caller, path: web::Path<(i64, String)>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read notices")?;
    let (id, name) = path.into_inner();
    let n = visible_notice(&state, &caller, id).await?;
    let f = n.files.iter().find(|f| f.name == name).ok_or_else(|| ApiError::not_found("file", &name))?;
    let bytes = service(&state)?.file(&n, &name).await?;
    Ok(HttpResponse::Ok()
        .content_type(f.media_type.as_str())
        .insert_header((
            CONTENT_DISPOSITION,
            content_disposition(&format!("{}-{name}", zhiwen_takedown::reference(n.id))),
        ))
        .insert_header(("Content-Security-Policy", "sandbox; default-src 'none'"))
        .body(bytes))
}

async fn contacts(state: State, caller: Caller, host: web::Path<String>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read contacts")?;
    let items = service(&state)?.suggest_contacts(&host).await?;
    Ok(HttpResponse::Ok().json(json!({ "items": items })))
}

async fn templates(state: State, caller: Caller) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read notice templates")?;
    Ok(HttpResponse::Ok().json(service(&state)?.templates().await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct TemplateBody {
    source: String,
}

async fn put_template(
    state: State,
    caller: Caller,
    path: web::Path<(String, String)>,
    body: web::Json<TemplateBody>,
) -> ApiResult<HttpResponse> {
    caller.require(ADMIN, "edit notice templates")?;
    let (lang, part) = path.into_inner();
    let bad = |e: zhiwen_takedown::TemplateError| ApiError::new(ErrorCode::BadRequest, e.to_string());
    let (lang, part) = (Lang::parse(&lang).map_err(bad)?, Part::parse(&part).map_err(bad)?);
    let set = service(&state)?.set_template(lang, part, &body.source).await?;
    tracing::info!(lang = lang.as_str(), part = part.as_str(), actor = %caller.actor(), "notice template changed");
    Ok(HttpResponse::Ok().json(set))
}
