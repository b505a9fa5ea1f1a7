//! The embedded schema's migrations, applied on open: each one transaction, recorded in
//! `schema_migrations`.

use rusqlite::params;

use super::SqliteStore;
use crate::migrations::{MigrationReport, EMBEDDED, LATEST};
use crate::model::Timestamp;
use crate::traits::StoreResult;
use crate::StoreError;

impl SqliteStore {
    pub(crate) async fn migrate(&self) -> StoreResult<MigrationReport> {
        self.run(|conn| {
            conn.execute_batch(
                "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)",
            )?;
            let current: u32 =
                conn.query_row("SELECT COALESCE(MAX(version), 0) FROM schema_migrations", [], |r| r.get(0))?;
            if current > LATEST {
                return Err(StoreError::SchemaTooNew { backend: "embedded", database: current, binary: LATEST });
            }
            let mut applied = Vec::new();
            for m in EMBEDDED.iter().filter(|m| m.version > current) {
                let tx = conn.transaction()?;
                tx.execute_batch(m.sql)?;
                if m.version == 13 {
                    allow_licensed_status(&tx)?;
                }
                tx.execute(
                    "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?1, ?2, ?3)",
                    params![m.version, m.name, Timestamp::now().0],
                )?;
                tx.commit()?;
                applied.push(format!("{:04}_{}", m.version, m.name));
            }
            Ok(MigrationReport { backend: "embedded".into(), from_version: current, to_version: current.max(LATEST), applied })
        })
        .await
    }
}

/// Migration 13's code: widen the CHECK of `matches.status` to accept `licensed`.
///
/// SQLite cannot alter a constraint, and rebuilding `matches` would rewrite every row
/// (and, with foreign keys on, dropping the old table would cascade to the review
/// trail). A constraint that accepts more touches no stored row, so this uses SQLite's
/// documented procedure for such changes (sqlite.org/lang_altertable.html, "making other
/// kinds of table schema changes"): edit the table's SQL in `sqlite_schema` and bump
/// `schema_version`, in the migration's transaction.
fn allow_licensed_status(tx: &rusqlite::Transaction<'_>) -> StoreResult<()> {
    const FROM: &str = "'dismissed', 'takedown_sent')";
    const TO: &str = "'dismissed', 'takedown_sent', 'licensed')";
    let sql: String =
        tx.query_row("SELECT sql FROM sqlite_schema WHERE type = 'table' AND name = 'matches'", [], |r| r.get(0))?;
    if sql.contains(TO) {
        return Ok(());
    }
    if sql.matches(FROM).count() != 1 {
        return Err(StoreError::corrupt(
            "embedded migration 13",
            "the matches table's status CHECK is not the expected one",
        ));
    }
    let version: i64 = tx.query_row("PRAGMA schema_version", [], |r| r.get(0))?;
    tx.execute_batch("PRAGMA writable_schema = ON")?;
    let result = tx
        .execute(
            "UPDATE sqlite_schema SET sql = ?1 WHERE type = 'table' AND name = 'matches'",
            params![sql.replace(FROM, TO)],
        )
        .and_then(|_| tx.execute_batch(&format!("PRAGMA schema_version = {}", version + 1)));
    tx.execute_batch("PRAGMA writable_schema = OFF")?;
    result?;
    Ok(())
}
