//! [`MatchStore`] on the embedded store: matches keyed by `(section, page)`, with their
//! review trail in `match_reviews`.

use std::collections::HashSet;

use async_trait::async_trait;
use rusqlite::types::Value;
use rusqlite::{params, Connection, OptionalExtension, Row, Transaction};

use super::SqliteStore;
use crate::codec::*;
use crate::model::*;
use crate::traits::{MatchStore, StoreResult};
use crate::StoreError;

const MATCH_COLS: &str =
    "id, section_id, work_id, page_id, site, kind, score, duplicate, comparison, first_seen, last_seen, status";

pub(super) struct MatchRow {
    id: i64,
    section_id: i64,
    work_id: i64,
    page_id: i64,
    site: String,
    kind: String,
    score: f64,
    duplicate: bool,
    /// The comparison's JSON, parsed straight from the bytes (one UTF-8 check, not two).
    comparison: Vec<u8>,
    first_seen: i64,
    last_seen: i64,
    status: String,
}

pub(super) fn match_row(r: &Row) -> rusqlite::Result<MatchRow> {
    Ok(MatchRow {
        id: r.get(0)?,
        section_id: r.get(1)?,
        work_id: r.get(2)?,
        page_id: r.get(3)?,
        site: r.get(4)?,
        kind: r.get(5)?,
        score: r.get(6)?,
        duplicate: r.get(7)?,
        comparison: r
            .get_ref(8)?
            .as_bytes()
            .map_err(|e| rusqlite::Error::FromSqlConversionFailure(8, rusqlite::types::Type::Text, Box::new(e)))?
            .to_vec(),
        first_seen: r.get(9)?,
        last_seen: r.get(10)?,
        status: r.get(11)?,
    })
}

pub(super) fn finish_match(c: &Connection, m: MatchRow) -> StoreResult<Match> {
    let comparison = serde_json::from_slice(&m.comparison)
        .map_err(|e| StoreError::corrupt(format!("comparison of match {}", m.id), e))?;
    let status = ReviewStatus::parse(&m.status)
        .ok_or_else(|| StoreError::corrupt(format!("status of match {}", m.id), &m.status))?;
    let mut stmt = c.prepare_cached(
        "SELECT by_whom, at, from_status, to_status, note FROM match_reviews WHERE match_id = ?1 ORDER BY seq",
    )?;
    let rows = stmt
        .query_map(params![m.id], |r| {
            Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?, r.get(4)?))
        })?
        .collect::<Result<Vec<_>, _>>()?;
    let mut review_log = Vec::with_capacity(rows.len());
    for (by, at, from, to, note) in rows {
        let parse =
            |s: &str| ReviewStatus::parse(s).ok_or_else(|| StoreError::corrupt(format!("review of match {}", m.id), s));
        review_log.push(ReviewEvent { by, at: Timestamp(at), from: parse(&from)?, to: parse(&to)?, note });
    }
    Ok(Match {
        id: m.id,
        section_id: m.section_id,
        work_id: m.work_id,
        page_id: m.page_id,
        site: m.site,
        kind: m.kind,
        score: m.score,
        duplicate: m.duplicate,
        comparison,
        first_seen: Timestamp(m.first_seen),
        last_seen: Timestamp(m.last_seen),
        status,
        review_log,
    })
}

/// The [`MatchQuery`]'s `WHERE` clauses (over `matches m`) and their arguments: the one
/// translation of the query, for the pipeline's listing and the dashboard's alike.
pub(super) fn query_sql(q: &MatchQuery) -> (Vec<String>, Vec<Value>) {
    let mut clauses = Vec::new();
    let mut args: Vec<Value> = Vec::new();
    let mut push = |clause: &str, v: Value| {
        args.push(v);
        clauses.push(clause.replace('?', &format!("?{}", args.len())));
    };
    if let Some(v) = &q.owner {
        push("m.work_id IN (SELECT id FROM works WHERE owner = ?)", Value::Text(v.clone()));
    }
    if let Some(v) = q.work_id {
        push("m.work_id = ?", Value::Integer(v));
    }
    if let Some(v) = q.section_id {
        push("m.section_id = ?", Value::Integer(v));
    }
    if let Some(v) = q.page_id {
        push("m.page_id = ?", Value::Integer(v));
    }
    if let Some(v) = &q.site {
        push("m.site = ?", Value::Text(v.to_lowercase()));
    }
    if let Some(v) = &q.kind {
        push("m.kind = ?", Value::Text(v.clone()));
    }
    if let Some(v) = q.status {
        push("m.status = ?", Value::Text(v.as_str().into()));
    }
    for s in &q.not_status {
        push("m.status <> ?", Value::Text(s.as_str().into()));
    }
    if let Some(v) = q.min_score {
        push("m.score >= ?", Value::Real(v));
    }
    if let Some(v) = q.max_score {
        push("m.score <= ?", Value::Real(v));
    }
    if let Some(v) = q.last_seen_from {
        push("m.last_seen >= ?", Value::Integer(v.0));
    }
    if let Some(v) = q.last_seen_until {
        push("m.last_seen < ?", Value::Integer(v.0));
    }
    if let Some(v) = q.first_seen_from {
        push("m.first_seen >= ?", Value::Integer(v.0));
    }
    if let Some(v) = q.first_seen_until {
        push("m.first_seen < ?", Value::Integer(v.0));
    }
    (clauses, args)
}

pub(super) fn where_of(clauses: &[String]) -> String {
    if clauses.is_empty() {
        "1 = 1".into()
    } else {
        clauses.join(" AND ")
    }
}

#[async_trait]
impl MatchStore for SqliteStore {
    async fn upsert_matches(&self, ms: &[NewMatch]) -> StoreResult<Vec<Upserted>> {
        let validated = validate_matches(ms)?;
        let ms = ms.to_vec();
        self.run(move |conn| {
            // One transaction: a missing section or page rolls the whole batch back.
            let tx = conn.transaction()?;
            let mut out = Vec::with_capacity(ms.len());
            for (m, (json, hash)) in ms.iter().zip(validated) {
                out.push(upsert_match_in(&tx, m, &json, hash)?);
            }
            tx.commit()?;
            Ok(out)
        })
        .await
    }

    async fn get_match(&self, id: i64) -> StoreResult<Option<Match>> {
        self.read(move |c| {
            let row = c
                .query_row(&format!("SELECT {MATCH_COLS} FROM matches WHERE id = ?1"), params![id], match_row)
                .optional()?;
            row.map(|r| finish_match(c, r)).transpose()
        })
        .await
    }

    async fn find_match(&self, section_id: i64, page_id: i64) -> StoreResult<Option<Match>> {
        self.read(move |c| {
            let row = c
                .query_row(
                    &format!("SELECT {MATCH_COLS} FROM matches WHERE section_id = ?1 AND page_id = ?2"),
                    params![section_id, page_id],
                    match_row,
                )
                .optional()?;
            row.map(|r| finish_match(c, r)).transpose()
        })
        .await
    }

    async fn set_review(
        &self,
        id: i64,
        to: ReviewStatus,
        by: &str,
        note: Option<&str>,
        at: Timestamp,
    ) -> StoreResult<Outcome> {
        validate_review(by, note)?;
        let (by, note) = (by.to_owned(), note.map(str::to_owned));
        self.run(move |conn| {
            let tx = conn.transaction()?;
            let from: String = tx
                .query_row("SELECT status FROM matches WHERE id = ?1", params![id], |r| r.get(0))
                .optional()?
                .ok_or_else(|| StoreError::not_found("match", id))?;
            if from == to.as_str() {
                return Ok(Outcome::Unchanged);
            }
            check_licensed_rule(id, &from, to, &by)?;
            let seq: i64 = tx.query_row("SELECT COALESCE(MAX(seq), 0) + 1 FROM match_reviews WHERE match_id = ?1", params![id], |r| r.get(0))?;
            tx.execute(
                "INSERT INTO match_reviews (match_id, seq, by_whom, at, from_status, to_status, note) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![id, seq, by, at.0, from, to.as_str(), note],
            )?;
            tx.execute("UPDATE matches SET status = ?2 WHERE id = ?1", params![id, to.as_str()])?;
            tx.commit()?;
            Ok(Outcome::Updated)
        })
        .await
    }

    async fn list_matches(&self, q: &MatchQuery, after_id: i64, limit: u32) -> StoreResult<Vec<Match>> {
        let limit = check_limit(limit)?;
        let (mut clauses, mut args) = query_sql(q);
        args.push(Value::Integer(after_id));
        clauses.push(format!("m.id > ?{}", args.len()));
        args.push(Value::Integer(limit));
        let sql = format!(
            "SELECT {} FROM matches m WHERE {} ORDER BY m.id LIMIT ?{}",
            MATCH_COLS.split(", ").map(|c| format!("m.{c}")).collect::<Vec<_>>().join(", "),
            where_of(&clauses),
            args.len()
        );
        self.read(move |c| {
            let rows = c
                .prepare_cached(&sql)?
                .query_map(rusqlite::params_from_iter(args.iter()), match_row)?
                .collect::<Result<Vec<_>, _>>()?;
            rows.into_iter().map(|r| finish_match(c, r)).collect()
        })
        .await
    }

    async fn matched_pages(&self, page_ids: &[i64]) -> StoreResult<HashSet<i64>> {
        let ids = page_ids.to_vec();
        self.read(move |c| {
            // One probe of the `matches_page` index per page: no match is read.
            let mut stmt = c.prepare_cached("SELECT 1 FROM matches WHERE page_id = ?1 LIMIT 1")?;
            let mut found = HashSet::new();
            for id in ids {
                if !found.contains(&id) && stmt.exists(params![id])? {
                    found.insert(id);
                }
            }
            Ok(found)
        })
        .await
    }
}

/// One match of [`SqliteStore::upsert_matches`], inside its transaction.
fn upsert_match_in(tx: &Transaction<'_>, m: &NewMatch, json: &str, hash: u64) -> StoreResult<Upserted> {
    let work_id: i64 = tx
        .query_row("SELECT work_id FROM sections WHERE id = ?1", params![m.section_id], |r| r.get(0))
        .optional()?
        .ok_or_else(|| StoreError::not_found("section", m.section_id))?;
    let site: String = tx
        .query_row("SELECT site FROM pages WHERE id = ?1", params![m.page_id], |r| r.get(0))
        .optional()?
        .ok_or_else(|| StoreError::not_found("page", m.page_id))?;
    let existing: Option<(i64, i64, i64, i64)> = tx
        .query_row(
            "SELECT id, comparison_hash, first_seen, last_seen FROM matches WHERE section_id = ?1 AND page_id = ?2",
            params![m.section_id, m.page_id],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .optional()?;
    let v = &m.comparison.verdict;
    let (copied_chars, coverage) = (m.comparison.copied_chars as i64, m.comparison.evidence_coverage_a);
    let t = m.seen_at.0;
    Ok(match existing {
        None => {
            tx.execute(
                "INSERT INTO matches (section_id, work_id, page_id, site, kind, score, duplicate, comparison, comparison_hash, first_seen, first_day, last_seen, status, copied_chars, coverage)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?10, 'new', ?12, ?13)",
                params![m.section_id, work_id, m.page_id, site, m.kind, v.score, v.duplicate, json, h2i(hash), t, m.seen_at.day(), copied_chars, coverage],
            )?;
            Upserted { id: tx.last_insert_rowid(), outcome: Outcome::Inserted }
        }
        Some((id, old_hash, first, last)) => {
            let first = first.min(t);
            if i2h(old_hash) == hash || t < last {
                // Same scores, or an older run arriving late: only widen the window
                // (a run at least as new also sets the kind, which follows thresholds).
                tx.execute(
                    "UPDATE matches SET first_seen = ?2, first_day = ?3, last_seen = ?4, kind = CASE WHEN ?6 THEN ?5 ELSE kind END WHERE id = ?1",
                    params![id, first, Timestamp(first).day(), last.max(t), m.kind, t >= last],
                )?;
                Upserted { id, outcome: Outcome::Unchanged }
            } else {
                tx.execute(
                    "UPDATE matches SET kind = ?2, score = ?3, duplicate = ?4, comparison = ?5, comparison_hash = ?6, first_seen = ?7, first_day = ?8, last_seen = ?9, copied_chars = ?10, coverage = ?11 WHERE id = ?1",
                    params![id, m.kind, v.score, v.duplicate, json, h2i(hash), first, Timestamp(first).day(), t, copied_chars, coverage],
                )?;
                Upserted { id, outcome: Outcome::Updated }
            }
        }
    })
}
