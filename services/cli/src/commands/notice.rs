//! `zhiwen notice`: takedown notices from the command line, as the dashboard drafts and
//! sends them (`zhiwen_takedown::Notices`): draft one from a holder's confirmed matches
//! on a site, send it at most once through `[mail]`, export it as an `.eml` to send by
//! hand, list them, and record the outcome of a send that did not finish.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, Subcommand};
use zhiwen_store::{Notice, NoticeState};
use zhiwen_takedown::{DraftRequest, Lang, Notices};

use crate::commands::evidence::CaptureOptions;
use crate::output::outln;
use crate::settings::{DataArgs, Settings};

/// Who the review trail and the notice record name for the command line.
const ACTOR: &str = "cli";

/// `zhiwen notice`.
#[derive(Debug, Subcommand)]
pub enum NoticeCommand {
    /// Draft a notice of OWNER's confirmed matches on SITE (all of them, or `--match`),
    /// with each match's evidence; prints its id. The same request again is the same
    /// notice.
    Draft(DraftArgs),
    /// Send notice ID by SMTP (`[mail]`, `ZHIWEN_SMTP_URL`) to `--to` (or the address
    /// chosen at draft). At most once: a sent notice is not sent again.
    Send(SendArgs),
    /// Write notice ID as an .eml file to send by hand; its matches are then under notice.
    Export(ExportArgs),
    /// List notices (of `--owner`), one line each.
    List(ListArgs),
    /// Suggest where a notice about SITE could go (security.txt, its pages, abuse@).
    Contacts(ContactsArgs),
    /// Record the outcome of a send that did not finish (the notice is `sending`): look
    /// for its Message-ID in the mailbox first.
    Resolve(ResolveArgs),
}

/// `zhiwen notice draft`.
#[derive(Debug, Args)]
pub struct DraftArgs {
    /// The rights holder (the owner of the works).
    #[arg(long)]
    pub owner: String,
    /// The site (host) the copies are on.
    #[arg(long)]
    pub site: String,
    /// Another site of the same hosting provider, in the same notice (repeat the flag):
    /// one notice to the provider about every site it serves.
    #[arg(long = "provider-site")]
    pub provider_sites: Vec<String>,
    /// Only these matches (repeat the flag); default: every confirmed match on the site.
    #[arg(long = "match")]
    pub matches: Vec<i64>,
    /// Language of the notice: zh-CN or en.
    #[arg(long, default_value = "zh-CN")]
    pub lang: String,
    /// The addressee, if chosen already.
    #[arg(long)]
    pub to: Option<String>,
    /// A second notice for the pages of notice N still up.
    #[arg(long)]
    pub follow_up_of: Option<i64>,
    #[command(flatten)]
    pub options: CaptureOptions,
}

/// `zhiwen notice send`.
#[derive(Debug, Args)]
pub struct SendArgs {
    /// The notice.
    pub id: i64,
    /// The addressee (default: the one chosen at draft).
    #[arg(long)]
    pub to: Option<String>,
}

/// `zhiwen notice export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The notice.
    pub id: i64,
    /// The .eml file to write; an existing file is not overwritten.
    #[arg(long)]
    pub out: PathBuf,
    /// The addressee (default: the one chosen at draft).
    #[arg(long)]
    pub to: Option<String>,
}

/// `zhiwen notice list`.
#[derive(Debug, Args)]
pub struct ListArgs {
    /// Only this holder's.
    #[arg(long)]
    pub owner: Option<String>,
    /// Print JSON lines instead.
    #[arg(long)]
    pub json: bool,
}

/// `zhiwen notice contacts`.
#[derive(Debug, Args)]
pub struct ContactsArgs {
    /// The site (host).
    pub site: String,
    /// Let the fetch of security.txt reach loopback addresses (tests, demos).
    #[arg(long)]
    pub allow_loopback: bool,
}

/// `zhiwen notice resolve`.
#[derive(Debug, Args)]
pub struct ResolveArgs {
    /// The notice.
    pub id: i64,
    /// It was delivered (found in the mailbox): record it sent.
    #[arg(long, conflicts_with = "not_delivered", required_unless_present = "not_delivered")]
    pub delivered: bool,
    /// It was not delivered: back to draft, to be sent again.
    #[arg(long)]
    pub not_delivered: bool,
}

pub fn run(data: &DataArgs, cmd: &NoticeCommand) -> Result<()> {
    crate::commands::block_on(run_async(data, cmd))
}

async fn notices(settings: &Settings, options: Option<&CaptureOptions>, allow_loopback: bool) -> Result<Notices> {
    let matcher = settings.open_matcher().await?;
    let policy = zhiwen_ingest::AddressPolicy {
        allow_loopback: allow_loopback || options.is_some_and(|o| o.capture_allow_loopback),
        allow_private: options.is_some_and(|o| o.capture_allow_private),
    };
    let chromium = options.and_then(|o| o.chromium.clone()).or_else(zhiwen_ingest::find_chromium);
    // The evidence service: a draft cites the captures and attaches their packages.
    let evidence = match options {
        Some(o) => Some(Arc::new(o.open(settings, &matcher).await?)),
        None => None,
    };
    settings.notices(matcher.stores(), evidence, policy, chromium)
}

fn line(n: &Notice) -> String {
    format!(
        "{}\t{}\t{}\t{}\t{} matches\t{}\t{}",
        zhiwen_takedown::reference(n.id),
        n.state.as_str(),
        n.owner,
        n.hosts().join(","),
        n.match_ids.len(),
        n.recipient.as_deref().unwrap_or("-"),
        n.sent_at.map(zhiwen_store::Timestamp::rfc3339).unwrap_or_else(|| "-".into())
    )
}

async fn run_async(data: &DataArgs, cmd: &NoticeCommand) -> Result<()> {
    let settings = Settings::resolve(data)?;
    match cmd {
        NoticeCommand::Draft(a) => {
            let lang = Lang::parse(&a.lang).map_err(|e| anyhow::anyhow!("--lang: {e}"))?;
            let service = notices(&settings, Some(&a.options), false).await?;
            let req = DraftRequest {
                owner: a.owner.clone(),
                site: a.site.clone(),
                provider_sites: a.provider_sites.clone(),
                match_ids: a.matches.clone(),
                lang,
                recipient: a.to.clone(),
                follow_up_of: a.follow_up_of,
                by: ACTOR.into(),
            };
            let (n, outcome) = service.draft(&req).await.context("cannot draft the notice")?;
            let files: Vec<&str> = n.files.iter().map(|f| f.name.as_str()).collect();
            outln!(
                "{} ({:?}): notice {} of {} matches on {}; files: {}",
                line(&n),
                outcome,
                n.id,
                n.match_ids.len(),
                n.site,
                files.join(", ")
            )?;
        }
        NoticeCommand::Send(a) => {
            let service = notices(&settings, None, false).await?;
            let n = service
                .send(a.id, a.to.as_deref(), ACTOR)
                .await
                .with_context(|| format!("notice {} not sent", a.id))?;
            outln!("{}; Message-ID {}; {}", line(&n), n.message_id, n.smtp_response.as_deref().unwrap_or(""))?;
        }
        NoticeCommand::Export(a) => {
            let service = notices(&settings, None, false).await?;
            let (n, eml) = service
                .export(a.id, a.to.as_deref(), ACTOR)
                .await
                .with_context(|| format!("notice {} not exported", a.id))?;
            let mut file =
                std::fs::OpenOptions::new().write(true).create_new(true).open(&a.out).with_context(|| {
                    format!("cannot create {} (an existing file is not overwritten)", a.out.display())
                })?;
            file.write_all(&eml)
                .and_then(|()| file.sync_all())
                .with_context(|| format!("cannot write {}", a.out.display()))?;
            outln!("{}: {}", a.out.display(), line(&n))?;
        }
        NoticeCommand::List(a) => {
            let stores = zhiwen_store::open(&settings.store).await.context("cannot open the store")?;
            let mut after = 0;
            loop {
                let page = stores.cases.list_notices(a.owner.as_deref(), after, 500).await?;
                let Some(last) = page.last() else { break };
                after = last.id;
                for n in &page {
                    if a.json {
                        outln!("{}", serde_json::to_string(n)?)?;
                    } else {
                        outln!("{}", line(n))?;
                    }
                }
            }
        }
        NoticeCommand::Contacts(a) => {
            let service = notices(&settings, None, a.allow_loopback).await?;
            for c in service.suggest_contacts(&a.site).await? {
                outln!("{}\t{}", c.address, c.reason)?;
            }
        }
        NoticeCommand::Resolve(a) => {
            let service = notices(&settings, None, false).await?;
            let n = service.resolve(a.id, a.delivered, ACTOR).await?;
            outln!("{}", line(&n))?;
            if n.state == NoticeState::Draft {
                outln!("notice {} is a draft again: send it with `zhiwen notice send {}`", n.id, n.id)?;
            }
        }
    }
    Ok(())
}
