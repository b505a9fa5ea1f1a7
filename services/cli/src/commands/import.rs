//! `zhiwen import works|pages`: bring texts into the stores. Each bad file or record is
//! counted and reported with its reason; none stops the run.

use anyhow::Result;
use zhiwen_ingest::ImportOptions;

use crate::cli::ImportCommand;
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
            zhiwen_ingest::import_works(&stores, &args.paths, &args.owner, &opts, &bar).await?
        }
        ImportCommand::Pages(args) => {
            opts.base_url = args.base_url.clone();
            zhiwen_ingest::import_pages(&stores, &args.paths, &opts, &bar).await?
        }
    };
    println!("{summary}");
    if !summary.changed.is_empty() {
        println!("run `zhiwen match` to fingerprint and match what changed");
    }
    Ok(())
}
