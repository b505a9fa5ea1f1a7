//! Licensed domains: a match on a domain its holder allows (its own site, a partner's)
//! is recorded as [`ReviewStatus::Licensed`]: no alert, no capture, never in a notice,
//! counted apart. The rule is applied when a match is first recorded
//! ([`licensed_matches`]) and again to the stored matches whenever a holder's list
//! changes ([`relabel`]).

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use zhiwen_store::{Holder, MatchCursor, MatchQuery, MatchSort, MatchSortKey, ReviewStatus, Stores, Timestamp};

use crate::Result;

pub use zhiwen_store::LICENSED_BY;

/// Matches read per page when re-labelling.
const PAGE: u32 = 500;

/// What [`relabel`] changed.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Relabelled {
    /// Matches now `licensed` (they were `new` or `confirmed`).
    pub licensed: u64,
    /// Matches no longer on a licensed domain, back to `new` for review.
    pub unlicensed: u64,
}

/// Apply `holder`'s licensed domains to its stored matches: `new` and `confirmed`
/// matches on a licensed domain become `licensed`; `licensed` ones no longer covered go
/// back to `new`. Dismissed matches and those under notice keep their status (a notice
/// sent is history). Idempotent: a second run changes nothing.
pub async fn relabel(stores: &Stores, holder: &Holder) -> Result<Relabelled> {
    let q = MatchQuery {
        owner: Some(holder.owner.clone()),
        not_status: vec![ReviewStatus::Dismissed, ReviewStatus::TakedownSent],
        ..MatchQuery::default()
    };
    let sort = MatchSort { key: MatchSortKey::Id, descending: false };
    let mut after: Option<MatchCursor> = None;
    let mut done = Relabelled::default();
    let now = Timestamp::now();
    loop {
        let rows = stores.queries.query_matches(&q, sort, after, PAGE).await?;
        let Some(last) = rows.last() else { break };
        after = Some(MatchCursor { value: last.id as f64, id: last.id });
        for row in &rows {
            let covered = holder.licenses(&row.site, row.work_id);
            let to = match (covered, row.status) {
                (true, ReviewStatus::New | ReviewStatus::Confirmed) => ReviewStatus::Licensed,
                (false, ReviewStatus::Licensed) => ReviewStatus::New,
                _ => continue,
            };
            let note = match to {
                ReviewStatus::Licensed => format!("{} is a licensed domain", row.site),
                _ => format!("{} is no longer a licensed domain", row.site),
            };
            stores.matches.set_review(row.id, to, LICENSED_BY, Some(&note), now).await?;
            if to == ReviewStatus::Licensed {
                done.licensed += 1;
            } else {
                done.unlicensed += 1;
            }
        }
        if rows.len() < PAGE as usize {
            break;
        }
    }
    Ok(done)
}

/// Of `(match id, work id, host)` of newly recorded matches, the ids on a domain their
/// holder licensed, each set to `licensed`. Reads each work and each holder once.
pub async fn licensed_matches(stores: &Stores, new: &[(i64, i64, &str)]) -> Result<Vec<i64>> {
    let mut owners: HashMap<i64, Option<String>> = HashMap::new();
    let mut holders: HashMap<String, Option<Holder>> = HashMap::new();
    let mut licensed = Vec::new();
    for &(match_id, work_id, host) in new {
        let owner = match owners.get(&work_id) {
            Some(o) => o.clone(),
            None => {
                // The owner only: the summary, not the work's whole text.
                let o = stores.queries.work_summary(work_id).await?.map(|w| w.owner);
                owners.insert(work_id, o.clone());
                o
            }
        };
        let Some(owner) = owner else { continue };
        let holder = match holders.get(&owner) {
            Some(h) => h.clone(),
            None => {
                let h = stores.cases.get_holder(&owner).await?;
                holders.insert(owner.clone(), h.clone());
                h
            }
        };
        let Some(holder) = holder else { continue };
        if holder.licenses(host, work_id) {
            let note = format!("{host} is a licensed domain");
            stores
                .matches
                .set_review(match_id, ReviewStatus::Licensed, LICENSED_BY, Some(&note), Timestamp::now())
                .await?;
            licensed.push(match_id);
        }
    }
    Ok(licensed)
}
