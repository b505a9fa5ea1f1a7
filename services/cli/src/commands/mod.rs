//! One module per subcommand.

use anyhow::Result;

use crate::cli::{Cli, Command};

mod compare;
mod dna_frame;
mod fingerprint;

/// Run the chosen subcommand.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Fingerprint(args) => fingerprint::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::DnaFrame(args) => dna_frame::run(&args),
    }
}
