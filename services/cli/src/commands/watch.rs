//! `zhiwen watch add|list|remove`: the sites zhiwen re-visits on a schedule for a holder
//! (their entry points, chapter link patterns, politeness budget). `zhiwen serve` and
//! `zhiwen crawl --watch` visit them.

use anyhow::{bail, Result};
use clap::{Args, Subcommand};
use zhiwen_store::{Left, NewWatchedSite, Timestamp};

use crate::output::outln;
use crate::settings::{DataArgs, Settings};

/// `zhiwen watch`.
#[derive(Debug, Subcommand)]
pub enum WatchCommand {
    /// Watch a site, or update the one of the same id (entry points kept keep their
    /// schedule; new ones are visited at once); a site of other holders is joined (its
    /// definition becomes the union of what each asked for).
    Add(WatchAddArgs),
    /// List the watched sites with the schedule of each entry point.
    List {
        /// Only the sites that concern this holder.
        #[arg(long)]
        owner: Option<String>,
        /// Print JSON (one object per line) instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Stop watching a site (the pages it stored stay): for every holder, or with
    /// `--owner` for that holder only (the site stays for the others).
    Remove {
        /// The site's id (see `zhiwen watch list`).
        id: String,
        /// Only this holder leaves the site.
        #[arg(long)]
        owner: Option<String>,
    },
}

/// `zhiwen watch add`.
#[derive(Debug, Args)]
pub struct WatchAddArgs {
    /// The rights holder it concerns.
    #[arg(long)]
    pub owner: String,
    /// An entry point: an index or category page, a sitemap, an RSS/Atom feed (repeat;
    /// all on one host).
    #[arg(long = "entry", required = true)]
    pub entry_points: Vec<String>,
    /// A regular expression a chapter link (its whole URL) must match (repeat; none:
    /// every link on the host).
    #[arg(long = "pattern")]
    pub chapter_patterns: Vec<String>,
    /// Politeness budget: least seconds between two requests to the host [default:
    /// `[watch] politeness_secs`].
    #[arg(long)]
    pub min_delay_secs: Option<u64>,
    /// Id of the site [default: the host of the entry points].
    #[arg(long)]
    pub id: Option<String>,
}

fn when(t: Option<Timestamp>) -> String {
    t.filter(|t| t.0 > 0).map_or_else(|| "-".into(), Timestamp::rfc3339)
}

pub async fn run(data: &DataArgs, cmd: &WatchCommand) -> Result<()> {
    let settings = Settings::resolve(data)?;
    let stores = settings.open_stores().await?;
    match cmd {
        WatchCommand::Add(a) => {
            let new = NewWatchedSite {
                id: a.id.clone(),
                owner: a.owner.clone(),
                entry_points: a.entry_points.clone(),
                chapter_patterns: a.chapter_patterns.clone(),
                min_delay_secs: a.min_delay_secs,
            };
            let (site, outcome) = stores.cases.put_watched_site(&new, "cli", Timestamp::now()).await?;
            outln!(
                "{} {} ({} entry points, holders {})",
                format!("{outcome:?}").to_lowercase(),
                site.id,
                site.entry_points.len(),
                site.all_holders().join(", ")
            )?;
        }
        WatchCommand::List { owner, json } => {
            let sites = stores.cases.list_watched_sites(owner.as_deref()).await?;
            for s in &sites {
                if *json {
                    outln!("{}", serde_json::to_string(s)?)?;
                    continue;
                }
                let delay = s.min_delay_secs.map_or_else(|| "default".into(), |d| format!("{d} s"));
                let holders = s.all_holders().join(",");
                outln!("{}\tholders {holders}\tpoliteness {delay}\tpatterns {}", s.id, s.chapter_patterns.join(" "))?;
                for e in &s.entry_points {
                    outln!(
                        "  {}\tlast {}\tnext {}\tevery {} s\tvisits {} (304: {}, new: {})\t{}",
                        e.url,
                        when(e.last_visit),
                        when(Some(e.next_visit)),
                        e.interval_secs,
                        e.visits,
                        e.not_modified,
                        e.visits_with_new,
                        e.last_outcome.as_deref().unwrap_or("-")
                    )?;
                }
            }
            if sites.is_empty() && !*json {
                outln!("no watched sites")?;
            }
        }
        WatchCommand::Remove { id, owner: None } => {
            if !stores.cases.delete_watched_site(id).await? {
                bail!("no watched site {id:?}");
            }
            outln!("removed {id}")?;
        }
        WatchCommand::Remove { id, owner: Some(owner) } => {
            match stores.cases.leave_watched_site(id, owner, "cli", Timestamp::now()).await? {
                Left::Left => outln!("{owner} left {id}; it stays watched for the other holders")?,
                Left::Deleted => outln!("removed {id} ({owner} was its last holder)")?,
                Left::NotWatched => bail!("no watched site {id:?} of {owner}"),
            }
        }
    }
    Ok(())
}
