//! `zhiwen evidence`: the log key, and the offline check of an evidence package.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand};
use zhiwen_evidence::package::EarlierHead;
use zhiwen_evidence::{read_package, LogKey, PackageLimits, SignedTreeHead};

use crate::output::outln;

use crate::settings::{DataArgs, Settings};

/// `zhiwen evidence ...`.
#[derive(Debug, Subcommand)]
pub enum EvidenceCommand {
    /// Print the public key that signs the evidence log's tree heads (made on first use,
    /// kept in `evidence/log.key` under the data directory, readable by its owner only).
    /// Give it to whoever will verify packages: `zhiwen evidence verify --public-key`.
    Key,
    /// Check an evidence package offline: every file's SHA-256, the signed manifest, the
    /// capture's inclusion in the signed log, and (with --earlier) that the log was only
    /// appended to since a head you kept. One line on standard output; exit status 1 and
    /// one line on standard error when anything does not hold.
    Verify(VerifyArgs),
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
            let key = load_or_create_key(&settings.data_dir.join("evidence").join("log.key"))?;
            outln!("{}", key.public_key_hex())?;
            Ok(())
        }
        EvidenceCommand::Verify(args) => verify(args),
    }
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

/// The log key at `path`, made (with owner-only permissions) when there is none yet.
pub(crate) fn load_or_create_key(path: &Path) -> Result<LogKey> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            LogKey::from_secret_hex(&text).with_context(|| format!("{} is not a zhiwen log key", path.display()))
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let dir = path.parent().context("the key path has no folder")?;
            std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
            let key = LogKey::generate();
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            match options.open(path) {
                Ok(mut file) => {
                    file.write_all(format!("{}\n", key.to_secret_hex()).as_bytes())
                        .and_then(|()| file.sync_all())
                        .with_context(|| format!("cannot write {}", path.display()))?;
                    tracing::info!(path = %path.display(), public_key = %key.public_key_hex(), "evidence log key created");
                    Ok(key)
                }
                // Another process made it first: use theirs.
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => load_or_create_key(path),
                Err(e) => Err(e).with_context(|| format!("cannot create {}", path.display())),
            }
        }
        Err(e) => Err(e).with_context(|| format!("cannot read {}", path.display())),
    }
}
