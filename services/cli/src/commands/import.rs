//! `zhiwen import works|pages`: bring texts into the stores. Each bad file or record is
//! counted and reported with its reason; none stops the run. The summary goes to
//! standard output; when any input was rejected the command ends with one error line on
//! standard error and exit status 1, after storing everything else.

use anyhow::Result;
use zhiwen_ingest::{ImportOptions, ImportSummary};

use crate::cli::ImportCommand;
use crate::output::outln;
use crate::progress::Bar;
use crate::settings::{DataArgs, Settings};

pub async fn run(data: &DataArgs, cmd: &ImportCommand) -> Result<()> {
    let settings = Settings::resolve(data)?;
    let stores = settings.open_stores().await?;
    let limits = match cmd {
        ImportCommand::Works(args) => &args.limits,
        ImportCommand::Pages(args) => &args.limits,
    };
    let bounds = settings.import_bounds(limits)?;
    let mut opts = ImportOptions {
        canon: settings.params.canon.clone(),
        max_file_bytes: bounds.max_file_bytes,
        limits: bounds.limits,
        ..ImportOptions::default()
    };
    let bar = Bar::new();
    let summary = match cmd {
        ImportCommand::Works(args) => {
            // The operator's own command: a JSONL line may name its owner.
            opts.owner_from_lines = true;
            zhiwen_ingest::import_works(&stores, &args.paths, &args.owner, &opts, &bar).await?
        }
        ImportCommand::Pages(args) => {
            opts.base_url = args.base_url.clone();
            zhiwen_ingest::import_pages(&stores, &args.paths, &opts, &bar).await?
        }
    };
    let printed = print_summary(&summary);
    // A rejection is the failure to report, even when stdout is gone.
    if let Some(err) = rejected_error(&summary) {
        return Err(err);
    }
    Ok(printed?)
}

fn print_summary(summary: &ImportSummary) -> std::io::Result<()> {
    outln!("{summary}")?;
    if !summary.changed.is_empty() {
        outln!("run `zhiwen match` to fingerprint and match what changed")?;
    }
    Ok(())
}

/// The error of an import that rejected something (`None` when nothing was rejected):
/// one line naming the first rejection; every rejection is listed in the summary.
fn rejected_error(summary: &ImportSummary) -> Option<anyhow::Error> {
    let first = summary.rejected.first()?;
    let stored = summary.imported + summary.updated + summary.unchanged;
    let more = match summary.rejected.len() {
        1 => String::new(),
        n => format!(" (and {} more rejected, listed above)", n - 1),
    };
    Some(if stored == 0 {
        anyhow::anyhow!("nothing imported: {}: {}{more}", first.item, first.reason)
    } else {
        anyhow::anyhow!(
            "{} of {} inputs rejected, the others were stored: {}: {}{more}",
            summary.rejected.len(),
            summary.total(),
            first.item,
            first.reason
        )
    })
}
