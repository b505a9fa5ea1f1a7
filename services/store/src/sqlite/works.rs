//! [`WorkStore`] on the embedded store: works, their compressed text and sections.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension, Row, Transaction};

use super::{ts, SqliteStore};
use crate::codec::*;
use crate::model::*;
use crate::traits::{StoreResult, WorkStore};

/// A row of `SELECT id, owner, external_id, title, author, section_count, updated_at FROM works`.
pub(super) fn work_summary(r: &Row) -> rusqlite::Result<WorkSummary> {
    work_summary_at(r, 0)
}

/// The same seven columns starting at column `at` (a joined query).
pub(super) fn work_summary_at(r: &Row, at: usize) -> rusqlite::Result<WorkSummary> {
    Ok(WorkSummary {
        id: r.get(at)?,
        owner: r.get(at + 1)?,
        external_id: r.get(at + 2)?,
        title: r.get(at + 3)?,
        author: r.get(at + 4)?,
        section_count: r.get(at + 5)?,
        updated_at: ts(r, at + 6)?,
    })
}

fn upsert_work_tx(tx: &Transaction, w: &NewWork, now: Timestamp) -> StoreResult<WorkUpserted> {
    let hash = work_hash(w);
    let existing: Option<(i64, i64)> = tx
        .query_row(
            "SELECT id, content_hash FROM works WHERE owner = ?1 AND external_id = ?2",
            params![w.owner, w.external_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let (id, outcome) = match existing {
        Some((id, h)) if i2h(h) == hash => (id, Outcome::Unchanged),
        Some((id, _)) => {
            tx.execute(
                "UPDATE works SET title = ?2, author = ?3, source_file = ?4, charset = ?5, text_z = ?6, section_count = ?7, content_hash = ?8, updated_at = MAX(?9, updated_at + 1) WHERE id = ?1",
                params![id, w.title, w.author, w.source_file, w.charset, compress(w.text.as_bytes()), w.sections.len() as i64, h2i(hash), now.0],
            )?;
            (id, Outcome::Updated)
        }
        None => {
            tx.execute(
                "INSERT INTO works (owner, external_id, title, author, source_file, charset, text_z, section_count, content_hash, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?10)",
                params![w.owner, w.external_id, w.title, w.author, w.source_file, w.charset, compress(w.text.as_bytes()), w.sections.len() as i64, h2i(hash), now.0],
            )?;
            (tx.last_insert_rowid(), Outcome::Inserted)
        }
    };
    if outcome != Outcome::Unchanged {
        let mut stmt = tx.prepare_cached(
            "INSERT INTO sections (work_id, ordinal, title, text_z, char_start, char_end) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (work_id, ordinal) DO UPDATE SET title = excluded.title, text_z = excluded.text_z, char_start = excluded.char_start, char_end = excluded.char_end",
        )?;
        for s in &w.sections {
            stmt.execute(params![
                id,
                s.ordinal,
                s.title,
                compress(s.text.as_bytes()),
                s.char_start as i64,
                s.char_end as i64
            ])?;
        }
        let ordinals: Vec<String> = w.sections.iter().map(|s| s.ordinal.to_string()).collect();
        tx.execute(
            &format!("DELETE FROM sections WHERE work_id = ?1 AND ordinal NOT IN ({})", ordinals.join(",")),
            params![id],
        )?;
    }
    let mut stmt = tx.prepare_cached("SELECT ordinal, id FROM sections WHERE work_id = ?1 ORDER BY ordinal")?;
    let sections =
        stmt.query_map(params![id], |r| Ok((r.get::<_, u32>(0)?, r.get(1)?)))?.collect::<Result<Vec<_>, _>>()?;
    Ok(WorkUpserted { id, outcome, sections })
}

const WORK_COLS: &str = "id, owner, external_id, title, author, source_file, charset, text_z, section_count, content_hash, created_at, updated_at";

fn work_row(r: &Row) -> rusqlite::Result<(Work, Vec<u8>)> {
    Ok((
        Work {
            id: r.get(0)?,
            owner: r.get(1)?,
            external_id: r.get(2)?,
            title: r.get(3)?,
            author: r.get(4)?,
            source_file: r.get(5)?,
            charset: r.get(6)?,
            text: String::new(),
            section_count: r.get(8)?,
            content_hash: i2h(r.get(9)?),
            created_at: ts(r, 10)?,
            updated_at: ts(r, 11)?,
        },
        r.get(7)?,
    ))
}

fn finish_work(row: Option<(Work, Vec<u8>)>) -> StoreResult<Option<Work>> {
    row.map(|(mut w, z)| {
        w.text = decompress_text(&z, &format!("text of work {}", w.id))?;
        Ok(w)
    })
    .transpose()
}

fn section_row(r: &Row) -> rusqlite::Result<(Section, Vec<u8>)> {
    Ok((
        Section {
            id: r.get(0)?,
            work_id: r.get(1)?,
            ordinal: r.get(2)?,
            title: r.get(3)?,
            text: String::new(),
            char_start: r.get::<_, i64>(5)? as u64,
            char_end: r.get::<_, i64>(6)? as u64,
        },
        r.get(4)?,
    ))
}

fn finish_section((mut s, z): (Section, Vec<u8>)) -> StoreResult<Section> {
    s.text = decompress_text(&z, &format!("text of section {}", s.id))?;
    Ok(s)
}

#[async_trait]
impl WorkStore for SqliteStore {
    async fn upsert_works(&self, works: &[NewWork]) -> StoreResult<Vec<WorkUpserted>> {
        validate_works(works)?;
        let works = works.to_vec();
        self.run(move |conn| {
            let tx = conn.transaction()?;
            let now = Timestamp::now();
            let out = works.iter().map(|w| upsert_work_tx(&tx, w, now)).collect::<StoreResult<Vec<_>>>()?;
            tx.commit()?;
            Ok(out)
        })
        .await
    }

    async fn get_work(&self, id: i64) -> StoreResult<Option<Work>> {
        self.read(move |c| {
            let row = c
                .query_row(&format!("SELECT {WORK_COLS} FROM works WHERE id = ?1"), params![id], work_row)
                .optional()?;
            finish_work(row)
        })
        .await
    }

    async fn find_work(&self, owner: &str, external_id: &str) -> StoreResult<Option<Work>> {
        let (o, e) = (owner.to_owned(), external_id.to_owned());
        self.read(move |c| {
            let row = c
                .query_row(
                    &format!("SELECT {WORK_COLS} FROM works WHERE owner = ?1 AND external_id = ?2"),
                    params![o, e],
                    work_row,
                )
                .optional()?;
            finish_work(row)
        })
        .await
    }

    async fn list_works(&self, owner: Option<&str>, after_id: i64, limit: u32) -> StoreResult<Vec<WorkSummary>> {
        let limit = check_limit(limit)?;
        let owner = owner.map(str::to_owned);
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, owner, external_id, title, author, section_count, updated_at FROM works WHERE id > ?1 AND (?2 IS NULL OR owner = ?2) ORDER BY id LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![after_id, owner, limit], work_summary)?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    async fn work_versions(&self) -> StoreResult<Vec<(i64, Timestamp)>> {
        self.read(move |c| {
            let mut stmt = c.prepare_cached("SELECT id, updated_at FROM works ORDER BY id")?;
            let rows = stmt.query_map([], |r| Ok((r.get::<_, i64>(0)?, ts(r, 1)?)))?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    async fn get_section(&self, id: i64) -> StoreResult<Option<Section>> {
        self.read(move |c| {
            let row = c
                .query_row(
                    "SELECT id, work_id, ordinal, title, text_z, char_start, char_end FROM sections WHERE id = ?1",
                    params![id],
                    section_row,
                )
                .optional()?;
            row.map(finish_section).transpose()
        })
        .await
    }

    async fn get_sections(&self, ids: &[i64]) -> StoreResult<Vec<Section>> {
        let sql = "SELECT id, work_id, ordinal, title, text_z, char_start, char_end FROM sections WHERE id = ?1";
        self.read_each(ids, sql.to_owned(), section_row, finish_section).await
    }

    async fn sections_of(&self, work_id: i64) -> StoreResult<Vec<Section>> {
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, work_id, ordinal, title, text_z, char_start, char_end FROM sections WHERE work_id = ?1 ORDER BY ordinal",
            )?;
            let rows = stmt.query_map(params![work_id], section_row)?.collect::<Result<Vec<_>, _>>()?;
            rows.into_iter().map(finish_section).collect()
        })
        .await
    }

    async fn count_works(&self) -> StoreResult<u64> {
        self.read(|c| Ok(c.query_row("SELECT COUNT(*) FROM works", [], |r| r.get::<_, i64>(0))? as u64)).await
    }
}
