//! [`FingerprintStore`] on the embedded store: one row per subject, the fingerprints in
//! their binary form.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension, Row};
use zhiwen_core::Fingerprints;

use super::SqliteStore;
use crate::codec::*;
use crate::model::*;
use crate::traits::{FingerprintStore, StoreResult};

fn fp_row(r: &Row) -> rusqlite::Result<(String, i64, String, Vec<u8>, i64)> {
    Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
}

fn finish_fp((kind, id, tag, data, at): (String, i64, String, Vec<u8>, i64)) -> StoreResult<FingerprintRecord> {
    let subject = Subject { kind: SubjectKind::parse(&kind)?, id };
    Ok(FingerprintRecord {
        subject,
        params_tag: tag,
        fingerprints: decode_fingerprints(&data, subject)?,
        updated_at: Timestamp(at),
    })
}

#[async_trait]
impl FingerprintStore for SqliteStore {
    async fn put_fingerprints_many(&self, items: &[(Subject, Fingerprints)]) -> StoreResult<BatchCounts> {
        validate_fingerprints(items)?;
        let encoded = items
            .iter()
            .map(|(s, fp)| Ok((*s, fp.params_tag.clone(), encode_fingerprints(fp)?, encode_winnowed(*s, fp))))
            .collect::<StoreResult<Vec<_>>>()?;
        self.run(move |conn| {
            let tx = conn.transaction()?;
            let now = Timestamp::now().0;
            let mut counts = BatchCounts::default();
            {
                let mut get = tx.prepare_cached("SELECT data FROM fingerprints WHERE kind = ?1 AND subject_id = ?2")?;
                let mut put = tx.prepare_cached(
                    "INSERT INTO fingerprints (kind, subject_id, params_tag, data, updated_at) VALUES (?1, ?2, ?3, ?4, ?5)
                     ON CONFLICT (kind, subject_id) DO UPDATE SET params_tag = excluded.params_tag, data = excluded.data, updated_at = excluded.updated_at",
                )?;
                // Replaced with changed fingerprints; added beside unchanged ones written
                // before the table existed (migration 14).
                let mut put_keys = tx.prepare_cached(
                    "INSERT INTO section_winnowed (section_id, params_tag, keys) VALUES (?1, ?2, ?3)
                     ON CONFLICT (section_id) DO UPDATE SET params_tag = excluded.params_tag, keys = excluded.keys",
                )?;
                let mut add_keys = tx.prepare_cached(
                    "INSERT INTO section_winnowed (section_id, params_tag, keys) VALUES (?1, ?2, ?3) ON CONFLICT (section_id) DO NOTHING",
                )?;
                let mut drop_keys = tx.prepare_cached("DELETE FROM section_winnowed WHERE section_id = ?1")?;
                for (s, tag, data, keys) in &encoded {
                    let old: Option<Vec<u8>> = get.query_row(params![s.kind.as_str(), s.id], |r| r.get(0)).optional()?;
                    let outcome = match old {
                        None => Outcome::Inserted,
                        Some(o) if &o == data => Outcome::Unchanged,
                        Some(_) => Outcome::Updated,
                    };
                    let unchanged = outcome == Outcome::Unchanged;
                    match keys {
                        Some(keys) if unchanged => add_keys.execute(params![s.id, tag, keys])?,
                        Some(keys) => put_keys.execute(params![s.id, tag, keys])?,
                        None if !unchanged && s.kind == SubjectKind::Section => drop_keys.execute(params![s.id])?,
                        None => 0,
                    };
                    if outcome != Outcome::Unchanged {
                        put.execute(params![s.kind.as_str(), s.id, tag, data, now])?;
                    }
                    counts.add(outcome);
                }
            }
            tx.commit()?;
            Ok(counts)
        })
        .await
    }

    async fn get_fingerprints_many(&self, subjects: &[Subject]) -> StoreResult<Vec<FingerprintRecord>> {
        let subjects = subjects.to_vec();
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT kind, subject_id, params_tag, data, updated_at FROM fingerprints WHERE kind = ?1 AND subject_id = ?2",
            )?;
            let mut out = Vec::with_capacity(subjects.len());
            for subject in subjects {
                if let Some(row) = stmt.query_row(params![subject.kind.as_str(), subject.id], fp_row).optional()? {
                    out.push(finish_fp(row)?);
                }
            }
            Ok(out)
        })
        .await
    }

    async fn get_winnowed_many(&self, subjects: &[Subject]) -> StoreResult<Vec<WinnowedKeys>> {
        let sections: Vec<Subject> = subjects.iter().copied().filter(|s| s.kind == SubjectKind::Section).collect();
        if sections.is_empty() {
            return Ok(Vec::new());
        }
        self.read(move |c| {
            let mut stmt = c.prepare_cached("SELECT params_tag, keys FROM section_winnowed WHERE section_id = ?1")?;
            let mut out = Vec::with_capacity(sections.len());
            for subject in sections {
                let row: Option<(String, Vec<u8>)> =
                    stmt.query_row(params![subject.id], |r| Ok((r.get(0)?, r.get(1)?))).optional()?;
                if let Some((tag, keys)) = row {
                    out.push(decode_winnowed(&keys, subject, tag)?);
                }
            }
            Ok(out)
        })
        .await
    }

    async fn stale_subjects(
        &self,
        kind: SubjectKind,
        current_tag: &str,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<i64>> {
        let limit = check_limit(limit)?;
        let tag = current_tag.to_owned();
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT subject_id FROM fingerprints WHERE kind = ?1 AND subject_id > ?2 AND params_tag <> ?3 ORDER BY subject_id LIMIT ?4",
            )?;
            let rows = stmt.query_map(params![kind.as_str(), after_id, tag, limit], |r| r.get(0))?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
    }

    async fn scan_fingerprints(
        &self,
        kind: SubjectKind,
        after_id: i64,
        limit: u32,
    ) -> StoreResult<Vec<FingerprintRecord>> {
        let limit = check_limit(limit)?;
        self.read(move |c| {
            let mut stmt = c.prepare_cached(
                "SELECT kind, subject_id, params_tag, data, updated_at FROM fingerprints WHERE kind = ?1 AND subject_id > ?2 ORDER BY subject_id LIMIT ?3",
            )?;
            let rows = stmt.query_map(params![kind.as_str(), after_id, limit], fp_row)?.collect::<Result<Vec<_>, _>>()?;
            rows.into_iter().map(finish_fp).collect()
        })
        .await
    }

    async fn count_fingerprints(&self, kind: SubjectKind, params_tag: Option<&str>) -> StoreResult<u64> {
        let tag = params_tag.map(str::to_owned);
        self.read(move |c| {
            Ok(c.query_row(
                "SELECT COUNT(*) FROM fingerprints WHERE kind = ?1 AND (?2 IS NULL OR params_tag = ?2)",
                params![kind.as_str(), tag],
                |r| r.get::<_, i64>(0),
            )? as u64)
        })
        .await
    }

    async fn delete_fingerprints(&self, subject: Subject) -> StoreResult<bool> {
        self.run(move |c| {
            let tx = c.transaction()?;
            if subject.kind == SubjectKind::Section {
                tx.execute("DELETE FROM section_winnowed WHERE section_id = ?1", params![subject.id])?;
            }
            let deleted = tx.execute(
                "DELETE FROM fingerprints WHERE kind = ?1 AND subject_id = ?2",
                params![subject.kind.as_str(), subject.id],
            )? > 0;
            tx.commit()?;
            Ok(deleted)
        })
        .await
    }

    async fn indexed_works(&self, params_tag: &str) -> StoreResult<Vec<(i64, i64)>> {
        let tag = params_tag.to_owned();
        self.read(move |c| {
            let mut stmt = c.prepare_cached("SELECT work_id, version FROM indexed_works WHERE params_tag = ?1")?;
            let rows = stmt.query_map(params![tag], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<rusqlite::Result<Vec<_>>>()?)
        })
        .await
    }

    async fn mark_work_indexed(&self, work_id: i64, version: i64, params_tag: &str) -> StoreResult<()> {
        let tag = params_tag.to_owned();
        self.run(move |c| {
            c.prepare_cached(
                "INSERT INTO indexed_works (work_id, version, params_tag) VALUES (?1, ?2, ?3)
                 ON CONFLICT (work_id) DO UPDATE SET version = excluded.version, params_tag = excluded.params_tag",
            )?
            .execute(params![work_id, version, tag])?;
            Ok(())
        })
        .await
    }

    async fn unmark_work_indexed(&self, work_id: i64) -> StoreResult<()> {
        self.run(move |c| {
            c.prepare_cached("DELETE FROM indexed_works WHERE work_id = ?1")?.execute(params![work_id])?;
            Ok(())
        })
        .await
    }
}
