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
