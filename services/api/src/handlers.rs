//! The endpoints of `docs/api.md`. Every handler takes a [`Caller`] (authenticated,
//! rate-limited) and checks its role; a holder asking for data of another owner gets the
//! same 404 as for an id that does not exist.

use std::collections::HashMap;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::json;
use zhiwen_index::Namespace;
use zhiwen_store::*;

use crate::auth::{visible_work, Caller};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::evidence::{explanation, page_original, passages, reasons, ExplanationJson, Passage, ReasonsJson};
use crate::query::{self, MatchParams};
use crate::worker::CrawlParams;
use crate::AppState;

type State = web::Data<AppState>;

const ADMIN: &[KeyRole] = &[KeyRole::Admin];
const STAFF: &[KeyRole] = &[KeyRole::Admin, KeyRole::Analyst];
const WRITERS: &[KeyRole] = &[KeyRole::Admin, KeyRole::Holder];
const EVERYONE: &[KeyRole] = &[KeyRole::Admin, KeyRole::Analyst, KeyRole::Holder];

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/health", web::get().to(health))
        .route("/ready", web::get().to(ready))
        .route("/metrics", web::get().to(crate::metrics::render))
        .service(
            web::scope("/api/v1")
                .route("/me", web::get().to(me))
                .route("/stats", web::get().to(stats))
                .route("/works", web::get().to(list_works))
                .route("/works", web::post().to(create_work))
                .route("/works/upload", web::post().to(upload_works))
                .route("/works/{id}", web::get().to(get_work))
                .route("/works/{id}", web::patch().to(update_work))
                .route("/works/{id}", web::delete().to(delete_work))
                .route("/works/{id}/sections/{section_id}", web::get().to(get_section))
                .route("/works/{id}/report", web::get().to(crate::report::work_report))
                .route("/pages", web::get().to(list_pages))
                .route("/pages/{id}", web::get().to(get_page))
                .route("/matches", web::get().to(list_matches))
                .route("/matches/review", web::post().to(bulk_review))
                .route("/matches/{id}", web::get().to(get_match))
                .route("/matches/{id}/review", web::post().to(review_match))
                .route("/tasks", web::get().to(list_tasks))
                .route("/tasks/match", web::post().to(start_match))
                .route("/tasks/crawl", web::post().to(start_crawl))
                .route("/tasks/{id}", web::get().to(get_task))
                .route("/tasks/{id}/cancel", web::post().to(cancel_task))
                .route("/exports/matches", web::get().to(crate::exports::export_matches))
                .default_service(web::to(api_not_found)),
        );
}

async fn api_not_found() -> ApiResult<HttpResponse> {
    Err(ApiError::new_not_found_path())
}

impl ApiError {
    fn new_not_found_path() -> Self {
        ApiError::not_found("endpoint", "(no such path or method)")
    }
}

#[derive(Serialize)]
pub(crate) struct Paged<T: Serialize> {
    items: Vec<T>,
    next_cursor: Option<String>,
}

// ---------------------------------------------------------------------------------
// Health

async fn health() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

async fn ready(state: State) -> HttpResponse {
    let store = match state.stores.works.count_works().await {
        Ok(_) => "ok".to_owned(),
        Err(e) => format!("error: {e}"),
    };
    // Up, and the one the store was indexed into (not an emptied or foreign one).
    let index = match state.index.ping().await {
        Ok(()) => match state.matcher.check_index().await {
            Ok(()) => "ok".to_owned(),
            Err(e) => format!("error: {e}"),
        },
        Err(e) => format!("error: {e}"),
    };
    let ok = store == "ok" && index == "ok";
    let status = if ok { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    HttpResponse::build(status).json(json!({
        "status": if ok { "ready" } else { "unavailable" }, "store": store, "index": index
    }))
}

async fn me(caller: Caller) -> HttpResponse {
    let k = &caller.key;
    HttpResponse::Ok().json(json!({
        "key_id": k.id, "name": k.name, "role": k.role.as_str(), "owner": k.owner,
        "expires_at": k.expires_at, "created_at": k.created_at,
    }))
}

// ---------------------------------------------------------------------------------
// Works

#[derive(Deserialize)]
struct WorkListParams {
    q: Option<String>,
    owner: Option<String>,
    cursor: Option<String>,
    limit: Option<u32>,
}

#[derive(Serialize)]
struct WorkItem {
    #[serde(flatten)]
    work: WorkSummary,
    match_count: u64,
}

async fn list_works(state: State, caller: Caller, q: web::Query<WorkListParams>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "list works")?;
    let limit = query::limit(q.limit);
    let after = query::id_cursor(q.cursor.as_deref())?.unwrap_or(0);
    let owner = match caller.scope() {
        Some(o) => Some(o.to_owned()),
        None => q.owner.clone().filter(|o| !o.is_empty()),
    };
    let mut works = state.stores.queries.search_works(owner.as_deref(), q.q.as_deref(), after, limit + 1).await?;
    let next = if works.len() > limit as usize {
        works.truncate(limit as usize);
        works.last().map(|w| w.id.to_string())
    } else {
        None
    };
    let mut items = Vec::with_capacity(works.len());
    for w in works {
        let n = state.stores.queries.count_matches(&MatchQuery { work_id: Some(w.id), ..Default::default() }).await?;
        items.push(WorkItem { work: w, match_count: n });
    }
    Ok(HttpResponse::Ok().json(Paged { items, next_cursor: next }))
}

// A field this endpoint does not take (an "owner", say) is refused, not ignored.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct NewWorkBody {
    owner: Option<String>,
    external_id: String,
    title: String,
    #[serde(default)]
    author: String,
    text: String,
}

fn owner_for(caller: &Caller, asked: Option<&str>) -> ApiResult<String> {
    let asked = asked.map(str::trim).filter(|o| !o.is_empty());
    match (caller.scope(), asked) {
        (Some(mine), None) => Ok(mine.to_owned()),
        (Some(mine), Some(o)) if o == mine => Ok(mine.to_owned()),
        (Some(_), Some(_)) => {
            Err(ApiError::new(ErrorCode::Forbidden, "a holder key may only add works of its own owner"))
        }
        (None, Some(o)) => Ok(o.to_owned()),
        (None, None) => Err(ApiError::new(ErrorCode::BadRequest, "owner: required")),
    }
}

async fn create_work(state: State, caller: Caller, body: web::Json<NewWorkBody>) -> ApiResult<HttpResponse> {
    caller.require(WRITERS, "create works")?;
    let owner = owner_for(&caller, body.owner.as_deref())?;
    if body.text.trim().is_empty() {
        return Err(ApiError::new(ErrorCode::BadRequest, "text: empty"));
    }
    let opts = zhiwen_ingest::ImportOptions::default();
    let sections = zhiwen_ingest::chapters::sections(&body.text, &opts.chapters);
    let work = NewWork {
        owner,
        external_id: body.external_id.trim().to_owned(),
        title: body.title.trim().to_owned(),
        author: body.author.trim().to_owned(),
        source_file: None,
        charset: Some("UTF-8".into()),
        text: body.text.clone(),
        sections,
    };
    let old = state.stores.works.find_work(&work.owner, &work.external_id).await?;
    let r = state.stores.works.upsert_work(&work).await?;
    if let Some(old) = old {
        forget_work_sections(&state, old.id, &r).await?;
    }
    let status = if r.outcome == Outcome::Inserted { StatusCode::CREATED } else { StatusCode::OK };
    Ok(HttpResponse::build(status).json(json!({"id": r.id, "outcome": r.outcome, "section_count": r.sections.len()})))
}

/// After a work's text changed: drop the fingerprints of its sections so the next
/// matching run re-fingerprints them, and the matcher's cached analyses.
async fn forget_work_sections(state: &AppState, _work_id: i64, r: &WorkUpserted) -> ApiResult<()> {
    if r.outcome != Outcome::Updated {
        return Ok(());
    }
    let ids: Vec<i64> = r.sections.iter().map(|(_, id)| *id).collect();
    for id in &ids {
        state.stores.fingerprints.delete_fingerprints(Subject::section(*id)).await?;
    }
    state.matcher.forget_sections(&ids);
    Ok(())
}

#[derive(Deserialize)]
struct UploadParams {
    owner: Option<String>,
    filename: Option<String>,
    title: Option<String>,
    author: Option<String>,
}

/// The raw body of an upload, at most `limit` bytes; a larger one is the documented
/// `413 payload_too_large` JSON error (actix's own `Bytes` extractor answers it in plain
/// text). A declared length over the limit is refused before anything is read.
async fn read_body(req: &HttpRequest, mut payload: web::Payload, limit: usize) -> ApiResult<web::Bytes> {
    use futures::StreamExt;
    let too_large =
        || ApiError::new(ErrorCode::PayloadTooLarge, format!("the upload is larger than the limit of {limit} bytes"));
    let declared = req.headers().get(actix_web::http::header::CONTENT_LENGTH).and_then(|v| v.to_str().ok());
    if declared.and_then(|v| v.trim().parse::<u64>().ok()).is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let mut body = web::BytesMut::new();
    while let Some(chunk) = payload.next().await {
        let chunk = chunk.map_err(|e| ApiError::new(ErrorCode::BadRequest, format!("cannot read the body: {e}")))?;
        if body.len() + chunk.len() > limit {
            return Err(too_large());
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body.freeze())
}

async fn upload_works(
    state: State,
    caller: Caller,
    q: web::Query<UploadParams>,
    req: HttpRequest,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    caller.require(WRITERS, "upload works")?;
    let owner = owner_for(&caller, q.owner.as_deref())?;
    let body = read_body(&req, payload, state.config.upload_limit).await?;
    if body.is_empty() {
        return Err(ApiError::new(ErrorCode::BadRequest, "the body is empty: send the file's bytes"));
    }
    // Keep only a plain file name (no directories) with its extension.
    let name = q.filename.as_deref().unwrap_or("upload.txt");
    let name: String = std::path::Path::new(name)
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or("upload.txt")
        .chars()
        .filter(|c| !matches!(c, '/' | '\\' | '\0'))
        .collect();
    if name.is_empty() || name.starts_with('.') {
        return Err(ApiError::new(ErrorCode::BadRequest, "filename: invalid"));
    }
    let dir = tempfile::tempdir().map_err(ApiError::internal)?;
    let path = dir.path().join(&name);
    tokio::fs::write(&path, &body).await.map_err(ApiError::internal)?;
    drop(body);
    // Runs in this request: when the request times out (503) or its client goes away, this
    // future is dropped, and with it the import, whose reader thread then stops at once.
    // A holder's file may not name another owner inside (an admin's may).
    let opts = zhiwen_ingest::ImportOptions {
        limits: state.config.import_limits,
        owner_from_lines: caller.scope().is_none(),
        ..Default::default()
    };
    let summary =
        zhiwen_ingest::import_works(&state.stores, &[path], &owner, &opts, &zhiwen_ingest::NoProgress).await?;
    if summary.changed.works.is_empty() && summary.unchanged == 0 {
        let reasons: Vec<String> =
            summary.rejected.iter().map(|r| r.reason.replace(&*dir.path().to_string_lossy(), "")).collect();
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            format!("no work could be read from {name}: {}", reasons.join("; ")),
        ));
    }
    state.matcher.forget_sections(&summary.changed.sections);
    let mut works = Vec::new();
    for id in &summary.changed.works {
        if let Some(mut w) = state.stores.works.get_work(*id).await? {
            if q.title.is_some() || q.author.is_some() {
                w = retitle(&state, w, q.title.as_deref(), q.author.as_deref()).await?;
            }
            works.push(json!({"id": w.id, "outcome": "changed", "section_count": w.section_count, "title": w.title, "external_id": w.external_id}));
        }
    }
    let status = if summary.imported > 0 { StatusCode::CREATED } else { StatusCode::OK };
    Ok(HttpResponse::build(status).json(json!({
        "works": works, "imported": summary.imported, "updated": summary.updated, "unchanged": summary.unchanged,
        // Items name the file as uploaded, never the server's temporary directory.
        "rejected": summary.rejected.iter().map(|r| json!({"item": uploaded_item(&r.item, dir.path()), "reason": r.reason})).collect::<Vec<_>>(),
        "replaced_bytes": summary.replaced_bytes,
        "notes": summary.notes.iter().map(|n| json!({"item": uploaded_item(&n.item, dir.path()), "note": n.note})).collect::<Vec<_>>(),
    })))
}

/// A rejected item of an upload as the client knows it: `x.jsonl:2`, not the server's
/// temporary path.
fn uploaded_item(item: &str, dir: &std::path::Path) -> String {
    let dir = dir.to_string_lossy();
    item.strip_prefix(&*dir).map_or(item, |rest| rest.trim_start_matches('/')).to_owned()
}

async fn retitle(state: &AppState, w: Work, title: Option<&str>, author: Option<&str>) -> ApiResult<Work> {
    let sections = state.stores.works.sections_of(w.id).await?;
    let new = NewWork {
        owner: w.owner.clone(),
        external_id: w.external_id.clone(),
        title: title.map(str::trim).unwrap_or(&w.title).to_owned(),
        author: author.map(str::trim).unwrap_or(&w.author).to_owned(),
        source_file: w.source_file.clone(),
        charset: w.charset.clone(),
        text: w.text.clone(),
        sections: sections
            .into_iter()
            .map(|s| NewSection {
                ordinal: s.ordinal,
                title: s.title,
                text: s.text,
                char_start: s.char_start,
                char_end: s.char_end,
            })
            .collect(),
    };
    state.stores.works.upsert_work(&new).await?;
    state.stores.works.get_work(w.id).await?.ok_or_else(|| ApiError::not_found("work", w.id))
}

async fn work_detail(state: &AppState, w: Work) -> ApiResult<serde_json::Value> {
    let sections = state.stores.works.sections_of(w.id).await?;
    let counts: HashMap<String, u64> = state
        .stores
        .queries
        .group_matches(&MatchQuery { work_id: Some(w.id), ..Default::default() }, MatchGroup::Section)
        .await?
        .into_iter()
        .collect();
    let total: u64 = counts.values().sum();
    let sections: Vec<_> = sections
        .iter()
        .map(|s| {
            json!({
                "id": s.id, "ordinal": s.ordinal, "title": s.title, "chars": s.char_end.saturating_sub(s.char_start),
                "char_start": s.char_start, "char_end": s.char_end,
                "match_count": counts.get(&s.id.to_string()).copied().unwrap_or(0),
            })
        })
        .collect();
    Ok(json!({
        "id": w.id, "owner": w.owner, "external_id": w.external_id, "title": w.title, "author": w.author,
        "source_file": w.source_file, "charset": w.charset, "chars": w.text.chars().count(),
        "created_at": w.created_at, "updated_at": w.updated_at, "match_count": total, "sections": sections,
    }))
}

async fn get_work(state: State, caller: Caller, id: web::Path<i64>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read works")?;
    let w = visible_work(&state, &caller, *id).await?;
    Ok(HttpResponse::Ok().json(work_detail(&state, w).await?))
}

// A field this endpoint does not take (an "owner", say) is refused, not ignored.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct WorkPatch {
    title: Option<String>,
    author: Option<String>,
}

async fn update_work(
    state: State,
    caller: Caller,
    id: web::Path<i64>,
    body: web::Json<WorkPatch>,
) -> ApiResult<HttpResponse> {
    let w = visible_work(&state, &caller, *id).await?;
    caller.require(WRITERS, "change works")?;
    if body.title.as_deref().is_some_and(|t| t.trim().is_empty()) {
        return Err(ApiError::new(ErrorCode::BadRequest, "title: empty"));
    }
    let w = retitle(&state, w, body.title.as_deref(), body.author.as_deref()).await?;
    Ok(HttpResponse::Ok().json(work_detail(&state, w).await?))
}

async fn delete_work(state: State, caller: Caller, id: web::Path<i64>) -> ApiResult<HttpResponse> {
    let w = visible_work(&state, &caller, *id).await?;
    caller.require(WRITERS, "delete works")?;
    let deleted = state.stores.queries.delete_work(w.id).await?.ok_or_else(|| ApiError::not_found("work", w.id))?;
    for sid in &deleted.section_ids {
        state.index.remove(Namespace::Sections, *sid as u64).await?;
    }
    state.matcher.forget_sections(&deleted.section_ids);
    Ok(HttpResponse::Ok().json(json!({
        "deleted": true, "sections": deleted.section_ids.len(), "matches": deleted.matches
    })))
}

async fn get_section(state: State, caller: Caller, path: web::Path<(i64, i64)>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read works")?;
    let (id, sid) = *path;
    let w = visible_work(&state, &caller, id).await?;
    match state.stores.works.get_section(sid).await? {
        Some(s) if s.work_id == w.id => Ok(HttpResponse::Ok().json(json!({
            "id": s.id, "work_id": s.work_id, "ordinal": s.ordinal, "title": s.title, "text": s.text,
            "char_start": s.char_start, "char_end": s.char_end,
        }))),
        _ => Err(ApiError::not_found("section", sid)),
    }
}

// ---------------------------------------------------------------------------------
// Pages

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

// ---------------------------------------------------------------------------------
// Matches

async fn list_matches(state: State, caller: Caller, q: web::Query<MatchParams>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "list matches")?;
    let mq = q.to_query(&caller)?;
    let sort = q.sort()?;
    let after = query::decode_cursor(q.cursor.as_deref())?;
    let limit = query::limit(q.limit);
    let mut rows = state.stores.queries.query_matches(&mq, sort, after, limit + 1).await?;
    let next = if rows.len() > limit as usize {
        rows.truncate(limit as usize);
        rows.last().map(|r| query::encode_cursor(MatchCursor { value: r.sort_value(sort.key), id: r.id }))
    } else {
        None
    };
    Ok(HttpResponse::Ok().json(Paged { items: rows, next_cursor: next }))
}

/// A match the caller may see, with everything its detail shows (one read of the store).
async fn visible_match(state: &AppState, caller: &Caller, id: i64) -> ApiResult<MatchDetail> {
    match state.stores.queries.match_detail(id).await? {
        Some(d) if caller.sees(&d.work.owner) => Ok(d),
        _ => Err(ApiError::not_found("match", id)),
    }
}

#[derive(Serialize)]
struct MatchSummaryJson<'a> {
    id: i64,
    work_id: i64,
    work_title: &'a str,
    owner: &'a str,
    work_external_id: &'a str,
    section_id: i64,
    section_ordinal: u32,
    section_title: &'a str,
    page_id: i64,
    url: &'a str,
    site: &'a str,
    kind: &'a str,
    verdict_kind: &'static str,
    score: f64,
    duplicate: bool,
    copied_chars: usize,
    coverage: f64,
    first_seen: Timestamp,
    last_seen: Timestamp,
    status: ReviewStatus,
}

#[derive(Serialize)]
struct ScoresJson {
    resemblance: f64,
    containment_ab: f64,
    containment_ba: f64,
    dice: f64,
    dna_score: f64,
    minhash_similarity: f64,
    simhash_distance: u32,
    winnow_containment_ab: f64,
    winnow_containment_ba: f64,
    evidence_coverage_a: f64,
    evidence_coverage_b: f64,
    copied_chars: usize,
}

/// The body of `GET /api/v1/matches/{id}` (typed: no intermediate JSON tree).
#[derive(Serialize)]
struct MatchDetailJson<'a> {
    #[serde(rename = "match")]
    summary: MatchSummaryJson<'a>,
    scores: ScoresJson,
    explanation: ExplanationJson,
    passages: Vec<Passage<'a>>,
    review_log: &'a [ReviewEvent],
}

fn match_detail(state: &AppState, d: &MatchDetail) -> HttpResponse {
    let page = page_original(state, d);
    let (zh, en) = explanation(d);
    let (reasons_zh, reasons_en) = reasons(d);
    let (m, w, c) = (&d.record, &d.work, &d.record.comparison);
    HttpResponse::Ok().json(MatchDetailJson {
        summary: MatchSummaryJson {
            id: m.id,
            work_id: m.work_id,
            work_title: &w.title,
            owner: &w.owner,
            work_external_id: &w.external_id,
            section_id: m.section_id,
            section_ordinal: d.section_ordinal,
            section_title: &d.section_title,
            page_id: m.page_id,
            url: &d.url,
            site: &m.site,
            kind: &m.kind,
            verdict_kind: c.verdict.kind.as_str(),
            score: m.score,
            duplicate: m.duplicate,
            copied_chars: c.copied_chars,
            coverage: c.evidence_coverage_a,
            first_seen: m.first_seen,
            last_seen: m.last_seen,
            status: m.status,
        },
        scores: ScoresJson {
            resemblance: c.resemblance,
            containment_ab: c.containment_ab,
            containment_ba: c.containment_ba,
            dice: c.dice,
            dna_score: c.dna_score,
            minhash_similarity: c.minhash_similarity,
            simhash_distance: c.simhash_distance,
            winnow_containment_ab: c.winnow_containment_ab,
            winnow_containment_ba: c.winnow_containment_ba,
            evidence_coverage_a: c.evidence_coverage_a,
            evidence_coverage_b: c.evidence_coverage_b,
            copied_chars: c.copied_chars,
        },
        explanation: ExplanationJson { zh, en, reasons: ReasonsJson { zh: reasons_zh, en: reasons_en } },
        passages: passages(d, &page),
        review_log: &m.review_log,
    })
}

async fn get_match(state: State, caller: Caller, id: web::Path<i64>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read matches")?;
    let d = visible_match(&state, &caller, *id).await?;
    Ok(match_detail(&state, &d))
}

// A field this endpoint does not take (an "owner", say) is refused, not ignored.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReviewBody {
    status: String,
    note: Option<String>,
}

fn check_note(note: &Option<String>) -> ApiResult<Option<&str>> {
    match note.as_deref().map(str::trim).filter(|n| !n.is_empty()) {
        Some(n) if n.len() > 4000 => Err(ApiError::new(ErrorCode::BadRequest, "note: longer than 4000 bytes")),
        other => Ok(other),
    }
}

async fn review_match(
    state: State,
    caller: Caller,
    id: web::Path<i64>,
    body: web::Json<ReviewBody>,
) -> ApiResult<HttpResponse> {
    visible_match(&state, &caller, *id).await?;
    caller.require(EVERYONE, "review matches")?;
    let to = query::status(&body.status)?;
    let note = check_note(&body.note)?;
    state.stores.matches.set_review(*id, to, &caller.actor(), note, Timestamp::now()).await?;
    let d = visible_match(&state, &caller, *id).await?;
    Ok(match_detail(&state, &d))
}

// A field this endpoint does not take (an "owner", say) is refused, not ignored.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct BulkReviewBody {
    ids: Vec<i64>,
    status: String,
    note: Option<String>,
}

async fn bulk_review(state: State, caller: Caller, body: web::Json<BulkReviewBody>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "review matches")?;
    if body.ids.len() > 1000 {
        return Err(ApiError::new(ErrorCode::BadRequest, "ids: at most 1000 per request"));
    }
    let to = query::status(&body.status)?;
    let note = check_note(&body.note)?;
    let (mut updated, mut unchanged, mut not_found) = (Vec::new(), Vec::new(), Vec::new());
    let now = Timestamp::now();
    let actor = caller.actor();
    let mut owners: HashMap<i64, String> = HashMap::new();
    for &id in &body.ids {
        let Some(m) = state.stores.matches.get_match(id).await? else {
            not_found.push(id);
            continue;
        };
        if caller.scope().is_some() {
            let owner = match owners.get(&m.work_id) {
                Some(o) => o.clone(),
                None => {
                    let o = state.stores.queries.work_summary(m.work_id).await?.map(|w| w.owner).unwrap_or_default();
                    owners.insert(m.work_id, o.clone());
                    o
                }
            };
            if !caller.sees(&owner) {
                not_found.push(id);
                continue;
            }
        }
        match state.stores.matches.set_review(id, to, &actor, note, now).await? {
            Outcome::Unchanged => unchanged.push(id),
            _ => updated.push(id),
        }
    }
    Ok(HttpResponse::Ok().json(json!({"updated": updated, "unchanged": unchanged, "not_found": not_found})))
}

// ---------------------------------------------------------------------------------
// Statistics

#[derive(Deserialize)]
struct StatsParams {
    from: Option<String>,
    to: Option<String>,
    work_id: Option<i64>,
    top: Option<u32>,
}

async fn stats(state: State, caller: Caller, q: web::Query<StatsParams>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read statistics")?;
    let now = Timestamp::now();
    let today = query::parse_time(&now.day(), "today")?.0;
    let (from, until) = query::range(q.from.as_deref(), q.to.as_deref())?;
    let until = until.unwrap_or(Timestamp(today.0 + 86_400_000));
    let from = from.unwrap_or(Timestamp(until.0 - 30 * 86_400_000));
    if from >= until {
        return Err(ApiError::new(ErrorCode::BadRequest, "from: must be before to"));
    }
    if let Some(w) = q.work_id {
        visible_work(&state, &caller, w).await?;
    }
    let top = q.top.unwrap_or(10).clamp(1, 100) as usize;
    let base = MatchQuery { owner: caller.scope().map(str::to_owned), work_id: q.work_id, ..Default::default() };
    let ranged = MatchQuery { first_seen_from: Some(from), first_seen_until: Some(until), ..base.clone() };
    let s = &state.stores.queries;
    let by_status: HashMap<String, u64> = s.group_matches(&ranged, MatchGroup::Status).await?.into_iter().collect();
    let mut by_day = s.group_matches(&ranged, MatchGroup::FirstDay).await?;
    by_day.sort();
    let sites = s.group_matches(&ranged, MatchGroup::Site).await?;
    let works = s.group_matches(&ranged, MatchGroup::Work).await?;
    let by_kind: HashMap<String, u64> = s.group_matches(&ranged, MatchGroup::Kind).await?.into_iter().collect();
    let mut top_works = Vec::new();
    for (id, n) in works.into_iter().take(top) {
        let id: i64 = id.parse().map_err(ApiError::internal)?;
        let (title, owner) = s.work_summary(id).await?.map(|w| (w.title, w.owner)).unwrap_or_default();
        top_works.push(json!({"work_id": id, "title": title, "owner": owner, "count": n}));
    }
    let new_today = s.count_matches(&MatchQuery { first_seen_from: Some(today), ..base.clone() }).await?;
    let week = Timestamp(today.0 - 6 * 86_400_000);
    let new_this_week = s.count_matches(&MatchQuery { first_seen_from: Some(week), ..base.clone() }).await?;
    let all_time = s.count_matches(&base).await?;
    let works_total = match caller.scope() {
        None => state.stores.works.count_works().await?,
        Some(o) => {
            let mut n = 0u64;
            let mut after = 0;
            loop {
                let page = s.search_works(Some(o), None, after, 1000).await?;
                let Some(last) = page.last() else { break };
                after = last.id;
                n += page.len() as u64;
            }
            n
        }
    };
    let pages_total = match caller.scope() {
        None => Some(state.stores.pages.count_pages().await?),
        Some(_) => None,
    };
    let status_counts: serde_json::Map<String, serde_json::Value> = ReviewStatus::ALL
        .iter()
        .map(|st| (st.as_str().to_owned(), json!(by_status.get(st.as_str()).copied().unwrap_or(0))))
        .collect();
    let kind_counts: serde_json::Map<String, serde_json::Value> =
        MATCH_KINDS.iter().map(|k| (k.to_string(), json!(by_kind.get(*k).copied().unwrap_or(0)))).collect();
    Ok(HttpResponse::Ok().json(json!({
        "from": from.day(), "to": Timestamp(until.0 - 1).day(),
        "total": by_status.values().sum::<u64>(),
        "new_today": new_today, "new_this_week": new_this_week,
        "by_status": status_counts,
        "by_kind": kind_counts,
        "by_day": by_day.iter().map(|(d, n)| json!({"day": d, "count": n})).collect::<Vec<_>>(),
        "top_sites": sites.iter().take(top).map(|(h, n)| json!({"site": h, "count": n})).collect::<Vec<_>>(),
        "top_works": top_works,
        "totals": {"works": works_total, "pages": pages_total, "matches_all_time": all_time},
    })))
}

// ---------------------------------------------------------------------------------
// Tasks

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
        let page = state.stores.tasks.list_tasks(st, after, 1000).await?;
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
    Ok(HttpResponse::Ok().json(task_json(&t)))
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
    let key = format!("crawl:manual:{}", Timestamp::now().0);
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
