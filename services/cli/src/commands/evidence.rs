//! `zhiwen evidence`: captures of matched pages, the packages that carry them, the
//! evidence log's key and signed heads, and the offline check of a package.

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use zhiwen_capture::{run_queued_captures, CaptureRun, EvidenceService};
use zhiwen_evidence::package::EarlierHead;
use zhiwen_evidence::{read_package, PackageLimits, SignedTreeHead};
use zhiwen_ingest::AddressPolicy;

use crate::output::outln;

use crate::settings::{DataArgs, Settings};

/// `zhiwen evidence ...`.
#[derive(Debug, Subcommand)]
pub enum EvidenceCommand {
    /// Print the public key that signs the evidence log's tree heads (made on first use,
    /// kept in `evidence/log.key` under the data directory, readable by its owner only).
    /// Give it to whoever will verify packages: `zhiwen evidence verify --public-key`.
    Key,
    /// Capture a match's page now (`MATCH`), or run every queued capture (`--queued`:
    /// the captures queued when matches were first recorded).
    Capture(CaptureArgs),
    /// Write the evidence package of a match (its newest capture, or `--capture ID`):
    /// the captured files, the match report in Chinese and English, the manifest, the
    /// inclusion proof and the signed tree head. Verify it with `zhiwen evidence verify`.
    Export(ExportArgs),
    /// Sign the evidence log as it is now and print the signed tree head (JSON): keep it,
    /// or give it to a third party, to hold zhiwen to its log later.
    Head,
    /// Print the consistency proof (hex) between the log's trees of two sizes.
    Consistency(ConsistencyArgs),
    /// Remove the files of captures older than `[evidence] retention_days` (or
    /// `--older-than-days`), except those backing a confirmed match or a sent takedown
    /// notice; the log keeps every capture's record.
    Prune(PruneArgs),
    /// Check an evidence package offline: every file's SHA-256, the signed manifest, the
    /// capture's inclusion in the signed log, and (with --earlier) that the log was only
    /// appended to since a head you kept. One line on standard output; exit status 1 and
    /// one line on standard error when anything does not hold.
    Verify(VerifyArgs),
}

/// How captures fetch and render (shared by `zhiwen match` and `zhiwen evidence`).
#[derive(Debug, Clone, Default, Args)]
pub struct CaptureOptions {
    /// Chromium for the screenshot and print of a live page (default: `chromium` on PATH).
    #[arg(long, env = "ZHIWEN_CHROMIUM")]
    pub chromium: Option<PathBuf>,
    /// Let a capture fetch loopback addresses (tests, demos).
    #[arg(long)]
    pub capture_allow_loopback: bool,
    /// Let a capture fetch private-network addresses.
    #[arg(long)]
    pub capture_allow_private: bool,
}

impl CaptureOptions {
    pub(crate) async fn open(&self, settings: &Settings, matcher: &zhiwen_matcher::Matcher) -> Result<EvidenceService> {
        let policy =
            AddressPolicy { allow_loopback: self.capture_allow_loopback, allow_private: self.capture_allow_private };
        let chromium = self.chromium.clone().or_else(zhiwen_ingest::find_chromium);
        settings.open_evidence(matcher, policy, chromium).await
    }
}

/// `zhiwen evidence capture`.
#[derive(Debug, Args)]
pub struct CaptureArgs {
    /// The match to capture now.
    #[arg(required_unless_present = "queued", conflicts_with = "queued")]
    pub r#match: Option<i64>,
    /// Run the queued captures instead.
    #[arg(long)]
    pub queued: bool,
    #[command(flatten)]
    pub options: CaptureOptions,
}

/// `zhiwen evidence export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The match.
    pub r#match: i64,
    /// The package to write (.zip); an existing file is not overwritten.
    #[arg(long)]
    pub out: PathBuf,
    /// Which capture of the match (default: the newest).
    #[arg(long)]
    pub capture: Option<i64>,
}

/// `zhiwen evidence consistency`.
#[derive(Debug, Args)]
pub struct ConsistencyArgs {
    /// The smaller tree size (the earlier head's).
    #[arg(long)]
    pub from: u64,
    /// The larger tree size (default: the log's size now).
    #[arg(long)]
    pub to: Option<u64>,
}

/// `zhiwen evidence prune`.
#[derive(Debug, Args)]
pub struct PruneArgs {
    /// Age in days (default: `[evidence] retention_days` of the settings file).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub older_than_days: Option<u32>,
}

/// `zhiwen evidence verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The package (.zip).
    pub package: PathBuf,
    /// The public key (hex) the tree head must be signed by; without it the package only
    /// proves it was signed by the key it carries.
    #[arg(long)]
    pub public_key: Option<String>,
    /// A signed tree head kept earlier (JSON, as published by zhiwen)...
    #[arg(long, requires = "consistency")]
    pub earlier: Option<PathBuf>,
    /// ...and the consistency proof (hex) from it to the package's head.
    #[arg(long, requires = "earlier")]
    pub consistency: Option<String>,
}

pub fn run(data: &DataArgs, cmd: &EvidenceCommand) -> Result<()> {
    match cmd {
        EvidenceCommand::Key => {
            let settings = Settings::resolve(data)?;
            let key = zhiwen_capture::load_or_create_key(&zhiwen_capture::key_path(&settings.data_dir))?;
            outln!("{}", key.public_key_hex())?;
            Ok(())
        }
        EvidenceCommand::Verify(args) => verify(args),
        other => crate::commands::block_on(with_service(data, other)),
    }
}

async fn with_service(data: &DataArgs, cmd: &EvidenceCommand) -> Result<()> {
    let settings = Settings::resolve(data)?;
    let matcher = settings.open_matcher().await?;
    let default_options = CaptureOptions::default();
    let options = match cmd {
        EvidenceCommand::Capture(a) => &a.options,
        _ => &default_options,
    };
    let service = options.open(&settings, &matcher).await?;
    match cmd {
        EvidenceCommand::Capture(a) => match a.r#match {
            Some(id) => {
                let key = format!("capture:match:{id}:on_demand:{}", zhiwen_store::Timestamp::now().0);
                let (c, _) = service.capture_match(id, "on_demand", &key).await?;
                outln!(
                    "capture {} of match {}: leaf {} of the evidence log, {} files",
                    c.id,
                    id,
                    c.leaf_index,
                    c.files.len()
                )?;
                Ok(())
            }
            None => {
                let run = run_captures(&service, matcher.config().lease_seconds).await?;
                outln!("{}", captures_line(&service, run).await?)?;
                Ok(())
            }
        },
        EvidenceCommand::Export(a) => export(&settings, matcher, service, a).await,
        EvidenceCommand::Head => {
            let head = service.sign_head(zhiwen_store::Timestamp::now().0).await?;
            outln!("{}", serde_json::to_string_pretty(&head)?)?;
            Ok(())
        }
        EvidenceCommand::Consistency(a) => {
            let to = match a.to {
                Some(t) => t,
                None => service.sign_head(zhiwen_store::Timestamp::now().0).await?.head.size,
            };
            let proof = service.consistency_proof(a.from, to).await?;
            outln!("{proof}")?;
            Ok(())
        }
        EvidenceCommand::Prune(a) => {
            match service.prune(a.older_than_days).await? {
                None => outln!("evidence: retention is off ([evidence] retention_days = 0); nothing removed")?,
                Some(r) => outln!(
                    "evidence: {} captures pruned, {} files removed ({} bytes); their records stay in the log",
                    r.captures,
                    r.files_deleted,
                    r.bytes_deleted
                )?,
            }
            Ok(())
        }
        EvidenceCommand::Key | EvidenceCommand::Verify(_) => Ok(()),
    }
}

/// Run the queued captures (`zhiwen match` does after its task, `zhiwen evidence capture --queued`).
pub(crate) async fn run_captures(service: &EvidenceService, lease_seconds: u64) -> Result<CaptureRun> {
    let worker = zhiwen_matcher::task::worker_name();
    run_queued_captures(service, &worker, lease_seconds, None).await.context("cannot run the queued captures")
}

/// "evidence: 3 captured, 0 failed; log of 7 captures, head signed (root ...)".
pub(crate) async fn captures_line(service: &EvidenceService, run: CaptureRun) -> Result<String> {
    let head = service.sign_head(zhiwen_store::Timestamp::now().0).await?;
    Ok(format!(
        "evidence: {} captured, {} failed; log of {} captures, signed head {}",
        run.captured, run.failed, head.head.size, head.head.root_hash
    ))
}

async fn export(
    settings: &Settings,
    matcher: zhiwen_matcher::Matcher,
    service: EvidenceService,
    a: &ExportArgs,
) -> Result<()> {
    // The package carries the printed report too when a browser is here.
    let config = zhiwen_api::ApiConfig { chromium: zhiwen_ingest::find_chromium(), ..zhiwen_api::ApiConfig::default() };
    let state = zhiwen_api::AppState::new(matcher, settings.data_dir.clone(), config);
    let Some(d) = state.stores.queries.match_detail(a.r#match).await? else {
        bail!("match {} not found", a.r#match);
    };
    let (capture, bytes) = zhiwen_api::package::match_package(&state, &service, &d, a.capture)
        .await
        .map_err(|e| anyhow::anyhow!("{}", e.message))?;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&a.out)
        .with_context(|| format!("cannot create {} (an existing file is not overwritten)", a.out.display()))?;
    file.write_all(&bytes)
        .and_then(|()| file.sync_all())
        .with_context(|| format!("cannot write {}", a.out.display()))?;
    outln!(
        "{}: evidence package of match {} (capture {}, leaf {}), {} bytes",
        a.out.display(),
        a.r#match,
        capture.id,
        capture.leaf_index,
        bytes.len()
    )?;
    Ok(())
}

fn verify(args: &VerifyArgs) -> Result<()> {
    let file = std::fs::File::open(&args.package).with_context(|| format!("cannot open {}", args.package.display()))?;
    let package = read_package(std::io::BufReader::new(file), PackageLimits::default())
        .with_context(|| format!("{} is not a readable evidence package", args.package.display()))?;
    let earlier = match &args.earlier {
        Some(path) => {
            let text = std::fs::read(path).with_context(|| format!("cannot read {}", path.display()))?;
            let head: SignedTreeHead = serde_json::from_slice(&text)
                .with_context(|| format!("{} is not a signed tree head", path.display()))?;
            Some(head)
        }
        None => None,
    };
    let consistency = args.consistency.as_deref().unwrap_or_default();
    let verification = package.verify(
        args.public_key.as_deref(),
        earlier.as_ref().map(|head| EarlierHead { head, consistency_proof: consistency.trim() }),
    );
    if !verification.ok() {
        bail!("{}: {}", args.package.display(), verification.summary());
    }
    outln!("{}: {}", args.package.display(), verification.summary())?;
    Ok(())
}
