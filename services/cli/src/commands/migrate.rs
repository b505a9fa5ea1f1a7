//! `zhiwen migrate`: apply the store's versioned migrations (recorded in the database;
//! safe to run twice; refused when the database is newer than this binary).

use anyhow::{Context, Result};

use crate::output::outln;
use crate::settings::{DataArgs, Settings};

pub async fn run(data: &DataArgs) -> Result<()> {
    let settings = Settings::resolve(data)?;
    let report = zhiwen_store::migrate(&settings.store)
        .await
        .with_context(|| format!("cannot migrate the {} store", settings.store.backend_name()))?;
    if report.applied.is_empty() {
        outln!("{} store is up to date (schema version {})", report.backend, report.to_version)?;
    } else {
        outln!(
            "{} store migrated from schema version {} to {}:",
            report.backend,
            report.from_version,
            report.to_version
        )?;
        for name in &report.applied {
            outln!("  applied {name}")?;
        }
    }
    Ok(())
}
