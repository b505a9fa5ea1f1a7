//! One module per subcommand.

use anyhow::Result;

use crate::cli::{Cli, Command};

mod compare;
mod crawl;
mod dna_frame;
mod eval;
pub(crate) mod evidence;
mod fingerprint;
mod import;
pub(crate) mod keys;
mod matching;
mod migrate;
pub(crate) mod notice;
pub(crate) mod recheck;
mod reindex;
mod report;
pub(crate) mod serve;
pub(crate) mod watch;
mod worker;

/// Run the chosen subcommand.
pub fn run(cli: Cli) -> Result<()> {
    match cli.command {
        Command::Fingerprint(args) => fingerprint::run(&args),
        Command::Compare(args) => compare::run(&args),
        Command::DnaFrame(args) => dna_frame::run(&args),
        Command::Import(cmd) => block_on(import::run(&cli.data, &cmd)),
        Command::Crawl(args) => block_on(crawl::run(&cli.data, &args)),
        Command::Match(args) => block_on(matching::run(&cli.data, &args)),
        Command::Scheduler(args) => block_on(matching::scheduler(&cli.data, &args)),
        Command::Report(cmd) => block_on(report::run(&cli.data, &cmd)),
        Command::Migrate => block_on(migrate::run(&cli.data)),
        Command::Reindex(args) => block_on(reindex::run(&cli.data, &args)),
        Command::Worker(args) => block_on(worker::run(&cli.data, &args)),
        Command::Keys(cmd) => block_on(keys::run(&cli.data, &cmd)),
        Command::Serve(args) => block_on(serve::run(&cli.data, &args)),
        Command::Eval(args) => eval::run(&cli.data, &args),
        Command::Evidence(cmd) => evidence::run(&cli.data, &cmd),
        Command::Recheck(args) => block_on(recheck::run(&cli.data, &args)),
        Command::Notice(cmd) => notice::run(&cli.data, &cmd),
        Command::Watch(cmd) => block_on(watch::run(&cli.data, &cmd)),
    }
}

/// Run an async command on a multi-threaded runtime.
pub(crate) fn block_on<F: std::future::Future<Output = Result<()>>>(future: F) -> Result<()> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build()?.block_on(future)
}
