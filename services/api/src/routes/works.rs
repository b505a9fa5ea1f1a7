//! `/works`: a holder's registered works, their sections, uploads and edits.

use std::collections::HashMap;

use actix_web::http::StatusCode;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::json;
use zhiwen_index::Namespace;
use zhiwen_store::*;

use super::{Paged, State, EVERYONE, WRITERS};
use crate::auth::{visible_work, Caller};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::query::{self};
use crate::AppState;

/// The routes of this resource (under `/api/v1`), in matching order.
pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/works", web::get().to(list_works))
        .route("/works", web::post().to(create_work))
        .route("/works/upload", web::post().to(upload_works))
        .route("/works/{id}", web::get().to(get_work))
        .route("/works/{id}", web::patch().to(update_work))
        .route("/works/{id}", web::delete().to(delete_work))
        .route("/works/{id}/sections/{section_id}", web::get().to(get_section))
        .route("/works/{id}/report", web::get().to(crate::report::work_report));
}

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
    // A new or changed text is matched against the stored pages at once.
    let match_task = if r.outcome == Outcome::Unchanged { None } else { crate::worker::match_arrivals(&state).await };
    let status = if r.outcome == Outcome::Inserted { StatusCode::CREATED } else { StatusCode::OK };
    Ok(HttpResponse::build(status)
        .json(json!({"id": r.id, "outcome": r.outcome, "section_count": r.sections.len(), "match_task": match_task})))
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
pub(super) async fn read_body(req: &HttpRequest, mut payload: web::Payload, limit: usize) -> ApiResult<web::Bytes> {
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
    let match_task = if summary.changed.works.is_empty() { None } else { crate::worker::match_arrivals(&state).await };
    let status = if summary.imported > 0 { StatusCode::CREATED } else { StatusCode::OK };
    Ok(HttpResponse::build(status).json(json!({
        "works": works, "imported": summary.imported, "updated": summary.updated, "unchanged": summary.unchanged,
        "match_task": match_task,
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
