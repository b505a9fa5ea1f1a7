//! [`CaseStore`] on the embedded store: the `case_docs` table.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension, Row};

use super::SqliteStore;
use crate::cases::{CaseStore, DocKind, StoredDoc};
use crate::model::{Outcome, Timestamp};
use crate::traits::StoreResult;
use crate::StoreError;

const COLUMNS: &str = "key, seq, owner, version, doc";

fn stored(r: &Row<'_>) -> rusqlite::Result<StoredDoc> {
    Ok(StoredDoc {
        key: r.get(0)?,
        seq: r.get(1)?,
        owner: r.get(2)?,
        version: r.get::<_, i64>(3)? as u64,
        json: r.get(4)?,
    })
}

#[async_trait]
impl CaseStore for SqliteStore {
    async fn get_doc(&self, kind: DocKind, key: &str) -> StoreResult<Option<StoredDoc>> {
        let key = key.to_owned();
        self.read(move |c| {
            Ok(c.prepare_cached(&format!("SELECT {COLUMNS} FROM case_docs WHERE kind = ?1 AND key = ?2"))?
                .query_row(params![kind.as_str(), key], stored)
                .optional()?)
        })
        .await
    }

    async fn list_docs(
        &self,
        kind: DocKind,
        owner: Option<&str>,
        after_seq: i64,
        limit: u32,
    ) -> StoreResult<Vec<StoredDoc>> {
        let owner = owner.map(str::to_owned);
        self.read(move |c| {
            let rows = match owner {
                Some(o) => c
                    .prepare_cached(&format!(
                        "SELECT {COLUMNS} FROM case_docs WHERE kind = ?1 AND owner = ?2 AND seq > ?3 ORDER BY seq LIMIT ?4"
                    ))?
                    .query_map(params![kind.as_str(), o, after_seq, limit], stored)?
                    .collect::<rusqlite::Result<Vec<_>>>()?,
                None => c
                    .prepare_cached(&format!(
                        "SELECT {COLUMNS} FROM case_docs WHERE kind = ?1 AND seq > ?2 ORDER BY seq LIMIT ?3"
                    ))?
                    .query_map(params![kind.as_str(), after_seq, limit], stored)?
                    .collect::<rusqlite::Result<Vec<_>>>()?,
            };
            Ok(rows)
        })
        .await
    }

    async fn put_doc(
        &self,
        kind: DocKind,
        key: &str,
        owner: &str,
        json: &str,
        expected: u64,
    ) -> StoreResult<(StoredDoc, Outcome)> {
        let (key, owner, json) = (key.to_owned(), owner.to_owned(), json.to_owned());
        self.run(move |c| {
            let tx = c.transaction()?;
            let current = tx
                .prepare_cached(&format!("SELECT {COLUMNS} FROM case_docs WHERE kind = ?1 AND key = ?2"))?
                .query_row(params![kind.as_str(), key], stored)
                .optional()?;
            let now = Timestamp::now().0;
            let result = match (current, expected) {
                (Some(doc), 0) => (doc, Outcome::Unchanged),
                (None, 0) => {
                    let seq: i64 = tx.query_row(
                        "SELECT COALESCE(MAX(seq), 0) + 1 FROM case_docs WHERE kind = ?1",
                        params![kind.as_str()],
                        |r| r.get(0),
                    )?;
                    tx.execute(
                        "INSERT INTO case_docs (kind, key, seq, owner, version, doc, updated_at)
                         VALUES (?1, ?2, ?3, ?4, 1, ?5, ?6)",
                        params![kind.as_str(), key, seq, owner, json, now],
                    )?;
                    (StoredDoc { key, seq, owner, version: 1, json }, Outcome::Inserted)
                }
                (Some(doc), v) if doc.version == v => {
                    tx.execute(
                        "UPDATE case_docs SET owner = ?3, version = version + 1, doc = ?4, updated_at = ?5
                         WHERE kind = ?1 AND key = ?2",
                        params![kind.as_str(), key, owner, json, now],
                    )?;
                    (StoredDoc { key, seq: doc.seq, owner, version: v + 1, json }, Outcome::Updated)
                }
                (current, v) => {
                    return Err(StoreError::Conflict {
                        what: format!("{} {key}", kind.as_str()),
                        reason: match current {
                            Some(d) => format!("changed meanwhile (version {} is stored, {v} was read)", d.version),
                            None => "not stored".into(),
                        },
                    })
                }
            };
            tx.commit()?;
            Ok(result)
        })
        .await
    }

    async fn delete_doc(&self, kind: DocKind, key: &str, expected: Option<u64>) -> StoreResult<bool> {
        let key = key.to_owned();
        let expected = expected.map(|v| i64::try_from(v).unwrap_or(i64::MAX));
        self.run(move |c| {
            let deleted = c.execute(
                "DELETE FROM case_docs WHERE kind = ?1 AND key = ?2 AND (?3 IS NULL OR version = ?3)",
                params![kind.as_str(), key, expected],
            )?;
            Ok(deleted > 0)
        })
        .await
    }
}
