//! `/matches`: listing, one match with its evidence, and reviews.

use std::collections::HashMap;

use actix_web::{web, HttpResponse};
use serde::{Deserialize, Serialize};
use serde_json::json;
use zhiwen_store::*;

use super::{Paged, State, EVERYONE};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::evidence::{explanation, page_original, passages, reasons, ExplanationJson, Passage, ReasonsJson};
use crate::query::{self, MatchParams};
use crate::AppState;

/// The routes of this resource (under `/api/v1`), in matching order.
pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/matches", web::get().to(list_matches))
        .route("/matches/review", web::post().to(bulk_review))
        .route("/matches/{id}", web::get().to(get_match))
        .route("/matches/{id}/review", web::post().to(review_match));
}

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
pub(super) async fn visible_match(state: &AppState, caller: &Caller, id: i64) -> ApiResult<MatchDetail> {
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
    let to = query::review_status(&body.status)?;
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
    let to = query::review_status(&body.status)?;
    let note = check_note(&body.note)?;
    let (mut updated, mut unchanged, mut not_found, mut licensed) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
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
        // A licensed match's status follows its holder's licensed domains: the store
        // refuses a reviewer's change of it (also when the match was licensed since the
        // read above), and the others of the request go on.
        if m.status == ReviewStatus::Licensed {
            licensed.push(id);
            continue;
        }
        match state.stores.matches.set_review(id, to, &actor, note, now).await {
            Ok(Outcome::Unchanged) => unchanged.push(id),
            Ok(_) => updated.push(id),
            Err(e @ StoreError::Conflict { .. }) => {
                match state.stores.matches.get_match(id).await? {
                    Some(now) if now.status == ReviewStatus::Licensed => licensed.push(id),
                    // Another reviewer's change in between: the caller reads again.
                    _ => return Err(e.into()),
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(HttpResponse::Ok()
        .json(json!({"updated": updated, "unchanged": unchanged, "not_found": not_found, "licensed": licensed})))
}
