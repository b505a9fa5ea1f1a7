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
    let mut opts = ImportOptions { canon: settings.params.canon.clone(), ..ImportOptions::default() };
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
    println!("{summary}");
    if !summary.changed.is_empty() {
        println!("run `zhiwen match` to fingerprint and match what changed");
    }
    Ok(())
}
