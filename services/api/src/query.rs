//! Query-string parsing shared by the listings, the exports and the statistics: dates,
//! match filters, sorting, opaque cursors and page sizes.

use serde::Deserialize;
use zhiwen_store::{MatchCursor, MatchQuery, MatchSort, MatchSortKey, ReviewStatus, Timestamp, MATCH_KINDS};

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorCode};

/// Default page size.
pub const DEFAULT_LIMIT: u32 = 50;
/// Largest page size (larger requests are clamped).
pub const MAX_LIMIT: u32 = 500;

pub fn limit(l: Option<u32>) -> u32 {
    l.unwrap_or(DEFAULT_LIMIT).clamp(1, MAX_LIMIT)
}

const DAY_MS: i64 = 86_400_000;

/// A date (`YYYY-MM-DD`, UTC midnight) or Unix milliseconds. `Ok((t, is_day))`.
pub fn parse_time(s: &str, field: &str) -> ApiResult<(Timestamp, bool)> {
    let s = s.trim();
    if let Ok(ms) = s.parse::<i64>() {
        // Years 1 to 9999, as a date can be written: days and months are added to a time
        // given without overflowing.
        if !(-62_135_596_800_000..=253_402_300_799_999).contains(&ms) {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!("{field}: {ms} is not a time between the years 1 and 9999 in Unix milliseconds"),
            ));
        }
        return Ok((Timestamp(ms), false));
    }
    let fmt = time::macros::format_description!("[year]-[month]-[day]");
    let d = time::Date::parse(s, &fmt).map_err(|_| {
        ApiError::new(ErrorCode::BadRequest, format!("{field}: expected YYYY-MM-DD or Unix milliseconds, got {s:?}"))
    })?;
    Ok((Timestamp::from_offset(d.midnight().assume_utc()), true))
}

/// `from` inclusive; `to` exclusive as a time, inclusive as a day.
pub fn range(from: Option<&str>, to: Option<&str>) -> ApiResult<(Option<Timestamp>, Option<Timestamp>)> {
    let from = from.filter(|s| !s.is_empty()).map(|s| parse_time(s, "from")).transpose()?.map(|t| t.0);
    let to = match to.filter(|s| !s.is_empty()) {
        None => None,
        Some(s) => {
            let (t, day) = parse_time(s, "to")?;
            Some(if day { Timestamp(t.0 + DAY_MS) } else { t })
        }
    };
    Ok((from, to))
}

/// Filters of match listings and exports (`docs/api.md`).
#[derive(Debug, Default, Deserialize)]
pub struct MatchParams {
    pub work_id: Option<i64>,
    pub section_id: Option<i64>,
    pub page_id: Option<i64>,
    pub site: Option<String>,
    pub kind: Option<String>,
    pub status: Option<String>,
    pub min_score: Option<f64>,
    pub max_score: Option<f64>,
    pub from: Option<String>,
    pub to: Option<String>,
    pub owner: Option<String>,
    pub sort: Option<String>,
    pub cursor: Option<String>,
    pub limit: Option<u32>,
    pub format: Option<String>,
}

pub fn status(s: &str) -> ApiResult<ReviewStatus> {
    ReviewStatus::parse(s).ok_or_else(|| {
        ApiError::new(
            ErrorCode::BadRequest,
            format!("status: expected new, confirmed, dismissed, takedown_sent or licensed, got {s:?}"),
        )
    })
}

/// A status a reviewer may set: `licensed` is the licensed-domain rule's alone (a
/// holder's list of licensed domains decides it).
pub fn review_status(s: &str) -> ApiResult<ReviewStatus> {
    match status(s)? {
        ReviewStatus::Licensed => Err(ApiError::new(
            ErrorCode::BadRequest,
            "status: licensed is set by the holder's licensed domains (PUT /api/v1/holders/{owner}/licensed), not by review",
        )),
        other => Ok(other),
    }
}

fn score(v: Option<f64>, field: &str) -> ApiResult<Option<f64>> {
    match v {
        Some(x) if !(0.0..=1.0).contains(&x) || x.is_nan() => {
            Err(ApiError::new(ErrorCode::BadRequest, format!("{field}: expected a number in 0..1")))
        }
        other => Ok(other),
    }
}

/// A kind of copy ([`zhiwen_store::MATCH_KINDS`]).
pub fn kind(s: &str) -> ApiResult<String> {
    if MATCH_KINDS.contains(&s) {
        Ok(s.to_owned())
    } else {
        Err(ApiError::new(ErrorCode::BadRequest, format!("kind: expected {}, got {s:?}", MATCH_KINDS.join(", "))))
    }
}

fn nonempty(s: &Option<String>) -> Option<String> {
    s.as_deref().map(str::trim).filter(|s| !s.is_empty()).map(str::to_owned)
}

impl MatchParams {
    /// The store query, limited to the caller's owner for holders.
    pub fn to_query(&self, caller: &Caller) -> ApiResult<MatchQuery> {
        let (from, until) = range(self.from.as_deref(), self.to.as_deref())?;
        let owner = match caller.scope() {
            Some(o) => Some(o.to_owned()),
            None => nonempty(&self.owner),
        };
        Ok(MatchQuery {
            owner,
            work_id: self.work_id,
            section_id: self.section_id,
            page_id: self.page_id,
            site: nonempty(&self.site),
            kind: nonempty(&self.kind).map(|k| kind(&k)).transpose()?,
            status: nonempty(&self.status).map(|s| status(&s)).transpose()?,
            not_status: Vec::new(),
            min_score: score(self.min_score, "min_score")?,
            max_score: score(self.max_score, "max_score")?,
            last_seen_from: from,
            last_seen_until: until,
            first_seen_from: None,
            first_seen_until: None,
        })
    }

    pub fn sort(&self) -> ApiResult<MatchSort> {
        let s = self.sort.as_deref().unwrap_or("-last_seen");
        let (descending, name) = match s.strip_prefix('-') {
            Some(n) => (true, n),
            None => (false, s),
        };
        let key = match name {
            "id" => MatchSortKey::Id,
            "score" => MatchSortKey::Score,
            "first_seen" => MatchSortKey::FirstSeen,
            "last_seen" => MatchSortKey::LastSeen,
            _ => {
                return Err(ApiError::new(
                    ErrorCode::BadRequest,
                    format!("sort: expected [-]id, [-]score, [-]first_seen or [-]last_seen, got {s:?}"),
                ))
            }
        };
        Ok(MatchSort { key, descending })
    }
}

/// Opaque cursors: hex of `value:id`.
pub fn encode_cursor(c: MatchCursor) -> String {
    hex::encode(format!("{}:{}", c.value, c.id))
}

pub fn decode_cursor(s: Option<&str>) -> ApiResult<Option<MatchCursor>> {
    let Some(s) = s.filter(|s| !s.is_empty()) else { return Ok(None) };
    let bad = || ApiError::new(ErrorCode::BadRequest, "cursor: not a cursor of this listing");
    let text = String::from_utf8(hex::decode(s).map_err(|_| bad())?).map_err(|_| bad())?;
    let (v, id) = text.split_once(':').ok_or_else(bad)?;
    let value: f64 = v.parse().map_err(|_| bad())?;
    if !value.is_finite() {
        return Err(bad());
    }
    Ok(Some(MatchCursor { value, id: id.parse().map_err(|_| bad())? }))
}

/// An id cursor (works, pages, tasks): the last id as a decimal string.
pub fn id_cursor(s: Option<&str>) -> ApiResult<Option<i64>> {
    match s.filter(|s| !s.is_empty()) {
        None => Ok(None),
        Some(s) => s
            .parse::<i64>()
            .map(Some)
            .map_err(|_| ApiError::new(ErrorCode::BadRequest, "cursor: not a cursor of this listing")),
    }
}
