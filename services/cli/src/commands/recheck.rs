//! `zhiwen recheck`: one removal re-check now: every page with a confirmed match or a
//! sent notice fetched again and recorded up, changed or removed; pages still up long
//! after their notice flagged (see `zhiwen_capture::recheck`).

use anyhow::{Context, Result};
use clap::Args;
use zhiwen_store::Timestamp;

use crate::commands::evidence::CaptureOptions;
use crate::output::outln;
use crate::settings::{DataArgs, Settings};

/// `zhiwen recheck`.
#[derive(Debug, Args)]
pub struct RecheckArgs {
    /// The time the checks are recorded at and the escalation counts to (RFC 3339,
    /// e.g. 2026-12-01T08:00:00Z; default: now).
    #[arg(long)]
    pub now: Option<String>,
    /// Print the whole report as JSON.
    #[arg(long)]
    pub json: bool,
    /// How pages are fetched (the capture's address policy).
    #[command(flatten)]
    pub capture: CaptureOptions,
}

fn parse_now(text: &str) -> Result<Timestamp> {
    let t = time::OffsetDateTime::parse(text.trim(), &time::format_description::well_known::Rfc3339)
        .with_context(|| format!("--now {text:?} is not an RFC 3339 time"))?;
    Ok(Timestamp::from_offset(t))
}

pub async fn run(data: &DataArgs, args: &RecheckArgs) -> Result<()> {
    let now = match &args.now {
        Some(t) => parse_now(t)?,
        None => Timestamp::now(),
    };
    let settings = Settings::resolve(data)?;
    let matcher = settings.open_matcher().await?;
    let service = args.capture.open(&settings, &matcher).await?;
    let report = zhiwen_capture::recheck(&service, &matcher, &settings.recheck, now)
        .await
        .context("the removal re-check failed")?;
    if args.json {
        outln!("{}", serde_json::to_string_pretty(&report)?)?;
        return Ok(());
    }
    outln!(
        "recheck {}: {} pages: {} up, {} changed, {} removed, {} unknown; {} transitions, {} captures queued, {} flagged",
        report.at.rfc3339(),
        report.pages,
        report.up,
        report.changed,
        report.removed,
        report.unknown,
        report.transitions.len(),
        report.captures_queued,
        report.flagged.len()
    )?;
    for t in &report.transitions {
        let from = t.event.from.map_or("-", |s| s.as_str());
        outln!("  page {} {} -> {}: {} ({})", t.page_id, from, t.event.to.as_str(), t.url, t.event.detail)?;
    }
    for f in &report.flagged {
        outln!(
            "  flagged page {} ({}): {} since notice {} of {}",
            f.page_id,
            f.url,
            f.state.as_str(),
            f.notice_id,
            f.sent_at.rfc3339()
        )?;
    }
    Ok(())
}
