//! The MongoDB migrations: the database commands of each embedded migration, then its
//! backfill when the migration names one (code, where a command cannot read the
//! compressed comparison: [`m0005_match_kind`], [`m0007_match_listing`]). Applied
//! versions are recorded in `_migrations`; every step is safe to repeat.

use mongodb::bson::{doc, Bson, Document};

use super::fields::{date, num};
use super::{collect, MongoStore};
use crate::migrations::{MigrationReport, LATEST, MONGODB};
use crate::model::Timestamp;
use crate::traits::StoreResult;
use crate::StoreError;

mod m0005_match_kind;
mod m0007_match_listing;

const MIGRATIONS: &str = "_migrations";

impl MongoStore {
    async fn schema_version(&self) -> StoreResult<u32> {
        let docs = collect(self.coll(MIGRATIONS).find(doc! {}).projection(doc! {"_id": 1}).await?).await?;
        Ok(docs.iter().filter_map(|d| num(d, "_id").ok()).max().unwrap_or(0) as u32)
    }

    pub(crate) async fn check_schema(&self) -> StoreResult<()> {
        let v = self.schema_version().await?;
        if v > LATEST {
            return Err(StoreError::SchemaTooNew { backend: "mongodb", database: v, binary: LATEST });
        }
        if v < LATEST {
            return Err(StoreError::SchemaOutdated { backend: "mongodb", database: v, binary: LATEST });
        }
        Ok(())
    }

    pub(crate) async fn migrate(&self) -> StoreResult<MigrationReport> {
        let current = self.schema_version().await?;
        if current > LATEST {
            return Err(StoreError::SchemaTooNew { backend: "mongodb", database: current, binary: LATEST });
        }
        let mut applied = Vec::new();
        for (version, json) in MONGODB.iter().filter(|(v, _)| *v > current) {
            // Parsed straight into a Document: key order is kept, which commands and
            // compound index keys depend on.
            let migration: Document = serde_json::from_str(json)
                .map_err(|e| StoreError::corrupt(format!("embedded MongoDB migration {version}"), e))?;
            let name = migration.get_str("name").unwrap_or("unnamed").to_owned();
            let commands = migration
                .get_array("commands")
                .map_err(|_| StoreError::corrupt(format!("embedded MongoDB migration {version}"), "no commands"))?;
            for cmd in commands {
                let Bson::Document(cmd) = cmd else {
                    return Err(StoreError::corrupt(
                        format!("embedded MongoDB migration {version}"),
                        "command is not a document",
                    ));
                };
                if let Err(e) = self.db.run_command(cmd.clone()).await {
                    let code = match &*e.kind {
                        mongodb::error::ErrorKind::Command(c) => Some(c.code),
                        _ => None,
                    };
                    let message = e.to_string().to_lowercase();
                    // A migration interrupted after a command ran repeats it: creating what
                    // exists (48) or dropping an index that is gone (27) is already done.
                    let exists = code == Some(48) || message.contains("already exists");
                    let gone = code == Some(27) || message.contains("index not found");
                    if !(cmd.contains_key("create") && exists || cmd.contains_key("dropIndexes") && gone) {
                        return Err(e.into());
                    }
                }
            }
            match migration.get_str("backfill") {
                Err(_) => {}
                Ok("match_kind") => {
                    self.backfill_match_kind().await?;
                }
                Ok("match_list_fields") => {
                    self.backfill_match_list_fields().await?;
                }
                Ok(other) => {
                    return Err(StoreError::corrupt(
                        format!("embedded MongoDB migration {version}"),
                        format!("unknown backfill {other}"),
                    ))
                }
            }
            self.coll(MIGRATIONS)
                .replace_one(
                    doc! {"_id": *version as i64},
                    doc! {"_id": *version as i64, "name": &name, "applied_at": date(Timestamp::now())},
                )
                .upsert(true)
                .await?;
            applied.push(format!("{version:04}_{name}"));
        }
        Ok(MigrationReport {
            backend: "mongodb".into(),
            from_version: current,
            to_version: current.max(LATEST),
            applied,
        })
    }
}
