//! `zhiwen report export`: the match list for analysts, through the matcher's one
//! exporter (the API's export has the same columns), streamed page by page.

use std::io::Write;

use anyhow::{Context, Result};
use zhiwen_matcher::export::{export_matches, ExportFormat};
use zhiwen_store::{MatchQuery, MatchSort, MatchSortKey, Timestamp};

use crate::cli::{ExportFormatArg, ReportCommand};
use crate::settings::{DataArgs, Settings};

pub async fn run(data: &DataArgs, cmd: &ReportCommand) -> Result<()> {
    let ReportCommand::Export(args) = cmd;
    let settings = Settings::resolve(data)?;
    let stores = settings.open_stores().await?;
    let query = MatchQuery {
        owner: args.owner.clone(),
        work_id: args.work,
        status: args.status,
        last_seen_from: args.since.map(|d| Timestamp::from_offset(d.midnight().assume_utc())),
        ..MatchQuery::default()
    };
    // Oldest match first.
    let sort = MatchSort { key: MatchSortKey::Id, descending: false };
    let format = match args.format {
        ExportFormatArg::Csv => ExportFormat::Csv,
        ExportFormatArg::Xlsx => ExportFormat::Xlsx,
        ExportFormatArg::Json => ExportFormat::JsonLines,
    };
    let rows = match &args.out {
        Some(path) => {
            let file = std::fs::File::create(path).with_context(|| format!("cannot create {}", path.display()))?;
            let rows = export_matches(&stores, &query, sort, format, std::io::BufWriter::new(file)).await?;
            eprintln!("{rows} matches written to {}", path.display());
            rows
        }
        None => {
            anyhow::ensure!(format != ExportFormat::Xlsx, "an xlsx export needs --out FILE");
            // `Stdout` (not its lock) is Send, as the streaming export needs.
            let mut out = std::io::BufWriter::new(std::io::stdout());
            let rows = export_matches(&stores, &query, sort, format, &mut out).await?;
            out.flush()?;
            rows
        }
    };
    tracing::info!(rows, "export finished");
    Ok(())
}
