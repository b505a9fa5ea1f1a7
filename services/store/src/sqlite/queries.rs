//! [`QueryStore`] on the embedded store: the admin API's filtered, sorted and grouped
//! reads of matches, match details in one joined read, work and page searches, and the
//! deletion of a work with everything that depends on it (one transaction).

use async_trait::async_trait;
use rusqlite::types::Value;
use rusqlite::{params, params_from_iter, OptionalExtension, Row};

use super::matches::{finish_match, match_row as stored_match, query_sql, where_of};
use super::pages::page_ref;
use super::works::{work_summary, work_summary_at};
use super::{ts, SqliteStore};
use crate::admin::*;
use crate::codec::*;
use crate::model::*;
use crate::traits::StoreResult;
use crate::StoreError;

fn sort_col(key: MatchSortKey) -> &'static str {
    match key {
        MatchSortKey::Id => "m.id",
        MatchSortKey::Score => "m.score",
        MatchSortKey::FirstSeen => "m.first_seen",
        MatchSortKey::LastSeen => "m.last_seen",
    }
}

fn cursor_value(key: MatchSortKey, v: f64) -> Value {
    match key {
        MatchSortKey::Score => Value::Real(v),
        _ => Value::Integer(v as i64),
    }
}

/// A listed match, its status as stored (checked by the caller) and, when the read asked
/// for it, its comparison's JSON.
type ListedRow = (MatchRow, String, Option<Vec<u8>>);

fn match_row(r: &Row) -> rusqlite::Result<ListedRow> {
    let comparison = match r.get_ref(19)? {
        rusqlite::types::ValueRef::Null => None,
        v => Some(
            v.as_bytes()
                .map_err(|e| rusqlite::Error::FromSqlConversionFailure(19, rusqlite::types::Type::Text, Box::new(e)))?
                .to_vec(),
        ),
    };
    Ok((
        MatchRow {
            id: r.get(0)?,
            work_id: r.get(1)?,
            owner: r.get(2)?,
            work_external_id: r.get(3)?,
            work_title: r.get(4)?,
            section_id: r.get(5)?,
            section_ordinal: r.get(6)?,
            section_title: r.get(7)?,
            page_id: r.get(8)?,
            url: r.get(9)?,
            site: r.get(10)?,
            kind: r.get(11)?,
            score: r.get(12)?,
            duplicate: r.get(13)?,
            copied_chars: r.get::<_, Option<i64>>(14)?.unwrap_or(0).max(0) as u64,
            coverage: r.get::<_, Option<f64>>(15)?.unwrap_or(0.0),
            first_seen: ts(r, 16)?,
            last_seen: ts(r, 17)?,
            status: ReviewStatus::New,
        },
        r.get(18)?,
        comparison,
    ))
}

impl SqliteStore {
    /// The listing of [`QueryStore::query_matches`] in one joined read; with each
    /// match's comparison when `with_comparison`.
    async fn listing(
        &self,
        q: &MatchQuery,
        sort: MatchSort,
        after: Option<MatchCursor>,
        limit: u32,
        with_comparison: bool,
    ) -> StoreResult<Vec<(MatchRow, Option<Vec<u8>>)>> {
        let limit = check_limit(limit)?;
        let (mut clauses, mut args) = query_sql(q);
        let col = sort_col(sort.key);
        let (cmp, dir) = if sort.descending { ("<", "DESC") } else { (">", "ASC") };
        if let Some(c) = after {
            args.push(cursor_value(sort.key, c.value));
            args.push(Value::Integer(c.id));
            clauses.push(format!("({col}, m.id) {cmp} (?{}, ?{})", args.len() - 1, args.len()));
        }
        args.push(Value::Integer(limit));
        let comparison = if with_comparison { "m.comparison" } else { "NULL" };
        let sql = format!(
            "SELECT m.id, m.work_id, w.owner, w.external_id, w.title, m.section_id, s.ordinal, s.title, m.page_id, p.url, m.site, m.kind, m.score, m.duplicate,
                    m.copied_chars, m.coverage, m.first_seen, m.last_seen, m.status, {comparison}
             FROM matches m JOIN works w ON w.id = m.work_id JOIN sections s ON s.id = m.section_id JOIN pages p ON p.id = m.page_id
             WHERE {} ORDER BY {col} {dir}, m.id {dir} LIMIT ?{}",
            where_of(&clauses),
            args.len()
        );
        self.read(move |c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt.query_map(params_from_iter(args.iter()), match_row)?.collect::<Result<Vec<_>, _>>()?;
            rows.into_iter()
                .map(|(mut m, status, comparison)| {
                    m.status = ReviewStatus::parse(&status)
                        .ok_or_else(|| StoreError::corrupt(format!("status of match {}", m.id), status))?;
                    Ok((m, comparison))
                })
                .collect()
        })
        .await
    }
}

/// The section and page columns of a match detail (absent when the row is gone).
struct DetailColumns {
    section_ordinal: u32,
    section_title: String,
    section_z: Option<Vec<u8>>,
    url: String,
    page_charset: Option<String>,
    page_format: Option<String>,
    body_z: Option<Vec<u8>>,
    page_z: Option<Vec<u8>>,
}

#[async_trait]
impl QueryStore for SqliteStore {
    async fn list_match_rows(
        &self,
        q: &MatchQuery,
        sort: MatchSort,
        after: Option<MatchCursor>,
        limit: u32,
        evidence: bool,
    ) -> StoreResult<Vec<MatchRowWithEvidence>> {
        MatchRowWithEvidence::from_listing(self.listing(q, sort, after, limit, evidence).await?)
    }

    async fn group_matches(&self, q: &MatchQuery, by: MatchGroup) -> StoreResult<Vec<(String, u64)>> {
        let (clauses, args) = query_sql(q);
        let col = match by {
            MatchGroup::Work => "m.work_id",
            MatchGroup::Section => "m.section_id",
            MatchGroup::Site => "m.site",
            MatchGroup::Status => "m.status",
            MatchGroup::FirstDay => "m.first_day",
            MatchGroup::Kind => "m.kind",
        };
        let sql = format!(
            "SELECT CAST({col} AS TEXT) AS k, COUNT(*) AS n FROM matches m WHERE {} GROUP BY {col} ORDER BY n DESC, k",
            where_of(&clauses)
        );
        self.read(move |c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt.query_map(params_from_iter(args.iter()), |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)? as u64))
            })?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    async fn count_matches(&self, q: &MatchQuery) -> StoreResult<u64> {
        let (clauses, args) = query_sql(q);
        let sql = format!("SELECT COUNT(*) FROM matches m WHERE {}", where_of(&clauses));
        self.read(move |c| {
            Ok(c.prepare_cached(&sql)?.query_row(params_from_iter(args.iter()), |r| r.get::<_, i64>(0))? as u64)
        })
        .await
    }

    async fn work_summary(&self, id: i64) -> StoreResult<Option<WorkSummary>> {
        self.read(move |c| {
            Ok(c.prepare_cached(
                "SELECT id, owner, external_id, title, author, section_count, updated_at FROM works WHERE id = ?1",
            )?
            .query_row(params![id], work_summary)
            .optional()?)
        })
        .await
    }

    async fn match_detail(&self, id: i64) -> StoreResult<Option<MatchDetail>> {
        self.read(move |c| {
            // The match's columns first (as `match_row` reads them), then the joined ones.
            let row = c
                .prepare_cached(
                    "SELECT m.id, m.section_id, m.work_id, m.page_id, m.site, m.kind, m.score, m.duplicate, m.comparison,
                            m.first_seen, m.last_seen, m.status,
                            w.id, w.owner, w.external_id, w.title, w.author, w.section_count, w.updated_at,
                            s.ordinal, s.title, s.text_z, p.url, p.charset, p.body_z, p.text_z, p.format
                     FROM matches m JOIN works w ON w.id = m.work_id
                     LEFT JOIN sections s ON s.id = m.section_id LEFT JOIN pages p ON p.id = m.page_id
                     WHERE m.id = ?1",
                )?
                .query_row(params![id], |r| {
                    let work = work_summary_at(r, 12)?;
                    let joined = DetailColumns {
                        section_ordinal: r.get::<_, Option<u32>>(19)?.unwrap_or(0),
                        section_title: r.get::<_, Option<String>>(20)?.unwrap_or_default(),
                        section_z: r.get(21)?,
                        url: r.get::<_, Option<String>>(22)?.unwrap_or_default(),
                        page_charset: r.get(23)?,
                        body_z: r.get(24)?,
                        page_z: r.get(25)?,
                        page_format: r.get(26)?,
                    };
                    Ok((stored_match(r)?, work, joined))
                })
                .optional()?;
            let Some((m, work, j)) = row else { return Ok(None) };
            let text = |z: Option<Vec<u8>>, what: &str| match z {
                Some(z) => decompress_text(&z, &format!("{what} of match {id}")),
                None => Ok(String::new()),
            };
            let section_text = text(j.section_z, "section text")?;
            let page_text = text(j.page_z, "page text")?;
            let page_format = stored_format(j.page_format.as_deref(), || format!("page format of match {id}"))?;
            let page_body = match j.body_z {
                Some(z) => decompress(&z, &format!("page body of match {id}"))?,
                None => Vec::new(),
            };
            Ok(Some(MatchDetail {
                record: finish_match(c, m)?,
                work,
                section_ordinal: j.section_ordinal,
                section_title: j.section_title,
                section_text,
                url: j.url,
                page_body,
                page_charset: j.page_charset,
                page_format,
                page_text,
            }))
        })
        .await
    }

    async fn search_works(
        &self,
        owner: Option<&str>,
        text: Option<&str>,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<WorkSummary>> {
        let limit = check_limit(limit)?;
        let owner = owner.map(str::to_owned);
        let text = text.filter(|t| !t.is_empty()).map(str::to_owned);
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, owner, external_id, title, author, section_count, updated_at FROM works
                 WHERE id > ?1 AND (?2 IS NULL OR owner = ?2)
                   AND (?3 IS NULL OR instr(title, ?3) > 0 OR instr(author, ?3) > 0 OR instr(external_id, ?3) > 0)
                 ORDER BY id LIMIT ?4",
            )?;
            let rows = stmt.query_map(params![after_id, owner, text, limit], work_summary)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    async fn delete_work(&self, id: i64) -> StoreResult<Option<WorkDeleted>> {
        self.run(move |c| {
            let tx = c.transaction()?;
            let exists: Option<i64> =
                tx.query_row("SELECT id FROM works WHERE id = ?1", params![id], |r| r.get(0)).optional()?;
            if exists.is_none() {
                return Ok(None);
            }
            let section_ids = {
                let mut stmt = tx.prepare("SELECT id FROM sections WHERE work_id = ?1 ORDER BY id")?;
                let rows = stmt.query_map(params![id], |r| r.get::<_, i64>(0))?;
                rows.collect::<Result<Vec<_>, _>>()?
            };
            tx.execute(
                "DELETE FROM fingerprints WHERE kind = 'section' AND subject_id IN (SELECT id FROM sections WHERE work_id = ?1)",
                params![id],
            )?;
            tx.execute(
                "DELETE FROM section_winnowed WHERE section_id IN (SELECT id FROM sections WHERE work_id = ?1)",
                params![id],
            )?;
            tx.execute(
                "DELETE FROM match_reviews WHERE match_id IN (SELECT id FROM matches WHERE work_id = ?1)",
                params![id],
            )?;
            let matches = tx.execute("DELETE FROM matches WHERE work_id = ?1", params![id])? as u64;
            tx.execute("DELETE FROM sections WHERE work_id = ?1", params![id])?;
            tx.execute("DELETE FROM works WHERE id = ?1", params![id])?;
            tx.execute("DELETE FROM indexed_works WHERE work_id = ?1", params![id])?;
            tx.commit()?;
            Ok(Some(WorkDeleted { section_ids, matches }))
        })
        .await
    }

    async fn search_pages(&self, q: &PageQuery, after_id: i64, limit: u32) -> StoreResult<Vec<PageRef>> {
        let limit = check_limit(limit)?;
        let url = match &q.url {
            Some(u) => Some(normalize_url(u)?.0),
            None => None,
        };
        let site = q.site.as_deref().map(str::to_lowercase);
        let owner = q.owner.clone();
        let (from, until) = (q.fetched_from.map(|t| t.0), q.fetched_until.map(|t| t.0));
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, url, site, content_hash, last_fetched_at FROM pages p
                 WHERE id > ?1 AND (?2 IS NULL OR url = ?2) AND (?3 IS NULL OR site = ?3)
                   AND (?4 IS NULL OR last_fetched_at >= ?4) AND (?5 IS NULL OR last_fetched_at < ?5)
                   AND (?6 IS NULL OR EXISTS (SELECT 1 FROM matches m JOIN works w ON w.id = m.work_id WHERE m.page_id = p.id AND w.owner = ?6))
                 ORDER BY id LIMIT ?7",
            )?;
            let rows = stmt.query_map(params![after_id, url, site, from, until, owner, limit], page_ref)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }
}
