//! `/stats`: counts of matches by status, day, site, work and kind.

use std::collections::HashMap;

use actix_web::{web, HttpResponse};
use serde::Deserialize;
use serde_json::json;
use zhiwen_store::*;

use super::{State, EVERYONE};
use crate::auth::{visible_work, Caller};
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::query::{self};

/// The routes of this resource (under `/api/v1`), in matching order.
pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/stats", web::get().to(stats));
}

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
    let from = from.unwrap_or_else(|| Timestamp(until.0.saturating_sub(30 * 86_400_000)));
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
    let count_of = |st: ReviewStatus| by_status.get(st.as_str()).copied().unwrap_or(0);
    let (licensed, dismissed) = (count_of(ReviewStatus::Licensed), count_of(ReviewStatus::Dismissed));
    let total: u64 = by_status.values().sum();
    let kind_counts: serde_json::Map<String, serde_json::Value> =
        MATCH_KINDS.iter().map(|k| (k.to_string(), json!(by_kind.get(*k).copied().unwrap_or(0)))).collect();
    Ok(HttpResponse::Ok().json(json!({
        "from": from.day(), "to": Timestamp(until.0 - 1).day(),
        "total": total,
        // Copies on the holders' licensed domains are counted apart from the infringing ones.
        "licensed": licensed,
        "infringing": total - licensed - dismissed,
        "new_today": new_today, "new_this_week": new_this_week,
        "by_status": status_counts,
        "by_kind": kind_counts,
        "by_day": by_day.iter().map(|(d, n)| json!({"day": d, "count": n})).collect::<Vec<_>>(),
        "top_sites": sites.iter().take(top).map(|(h, n)| json!({"site": h, "count": n})).collect::<Vec<_>>(),
        "top_works": top_works,
        "totals": {"works": works_total, "pages": pages_total, "matches_all_time": all_time},
    })))
}
