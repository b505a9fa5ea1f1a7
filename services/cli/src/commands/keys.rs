//! `zhiwen keys create|list|revoke`: the API keys of `zhiwen serve`. A key is printed
//! once, at creation; the store keeps only its SHA-256.

use anyhow::{bail, Context, Result};
use clap::{Args, Subcommand, ValueEnum};
use zhiwen_store::{KeyRole, Timestamp};

use crate::output::outln;
use crate::settings::{DataArgs, Settings};

/// `zhiwen keys`.
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Create a key and print it (once: only its hash is stored).
    Create(KeysCreateArgs),
    /// List the keys (never the secrets).
    List,
    /// Revoke a key by id (takes effect within seconds on running servers).
    Revoke {
        /// The key's id (see `zhiwen keys list`).
        id: i64,
    },
}

/// Role of a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RoleArg {
    /// Everything.
    Admin,
    /// Read everything, export, change review status.
    Analyst,
    /// Only the works of its owner and what concerns them.
    Holder,
}

/// `zhiwen keys create`.
#[derive(Debug, Args)]
pub struct KeysCreateArgs {
    /// What the key may do.
    #[arg(long, value_enum)]
    pub role: RoleArg,
    /// The rights holder a holder key is limited to (required for holders).
    #[arg(long)]
    pub owner: Option<String>,
    /// A label (who or what uses the key).
    #[arg(long, default_value = "")]
    pub name: String,
    /// Valid for this many days (default: until revoked).
    #[arg(long, value_name = "DAYS")]
    pub expires: Option<u32>,
}

fn when(t: Option<Timestamp>) -> String {
    t.map(|t| t.day()).unwrap_or_else(|| "-".into())
}

pub async fn run(data: &DataArgs, cmd: &KeysCommand) -> Result<()> {
    let settings = Settings::resolve(data)?;
    let stores = settings.open_stores().await?;
    match cmd {
        KeysCommand::Create(a) => {
            let role = match a.role {
                RoleArg::Admin => KeyRole::Admin,
                RoleArg::Analyst => KeyRole::Analyst,
                RoleArg::Holder => KeyRole::Holder,
            };
            let owner = a.owner.as_deref().map(str::trim).filter(|o| !o.is_empty());
            match (role, owner) {
                (KeyRole::Holder, None) => bail!("a holder key needs --owner OWNER"),
                (KeyRole::Admin | KeyRole::Analyst, Some(_)) => bail!("--owner is only for holder keys"),
                _ => {}
            }
            if a.expires == Some(0) {
                bail!("--expires must be at least 1 day");
            }
            let created = zhiwen_api::generate_key(&stores, role, owner, a.name.trim(), a.expires)
                .await
                .context("cannot store the key")?;
            let k = &created.key;
            outln!("{}", created.secret)?;
            eprintln!(
                "key {} created: role {}{}, expires {}. Store it now: it is not shown again.",
                k.id,
                k.role.as_str(),
                k.owner.as_deref().map(|o| format!(", owner {o}")).unwrap_or_default(),
                when(k.expires_at)
            );
        }
        KeysCommand::List => {
            let keys = stores.keys.list_keys().await?;
            outln!(
                "{:>5}  {:<10} {:<8} {:<16} {:<10} {:<10} {:<10} name",
                "id",
                "prefix",
                "role",
                "owner",
                "created",
                "expires",
                "revoked"
            )?;
            for k in keys {
                outln!(
                    "{:>5}  {:<10} {:<8} {:<16} {:<10} {:<10} {:<10} {}",
                    k.id,
                    k.prefix,
                    k.role.as_str(),
                    k.owner.as_deref().unwrap_or("-"),
                    k.created_at.day(),
                    when(k.expires_at),
                    when(k.revoked_at),
                    k.name
                )?;
            }
        }
        KeysCommand::Revoke { id } => match stores.keys.revoke_key(*id, Timestamp::now()).await? {
            None => bail!("no key with id {id}"),
            Some(zhiwen_store::Outcome::Unchanged) => outln!("key {id} was already revoked")?,
            Some(_) => outln!("key {id} revoked")?,
        },
    }
    Ok(())
}
