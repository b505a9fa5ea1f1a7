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
        Command::Import(cmd) => run_job(import::run(&cli.data, &cmd)),
        Command::Crawl(args) => block_on(crawl::run(&cli.data, &args)),
        Command::Match(args) => run_job(matching::run(&cli.data, &args)),
        Command::Scheduler(args) => block_on(matching::scheduler(&cli.data, &args)),
        Command::Report(cmd) => run_job(report::run(&cli.data, &cmd)),
        Command::Migrate => run_job(migrate::run(&cli.data)),
        Command::Reindex(args) => run_job(reindex::run(&cli.data, &args)),
        Command::Worker(args) => block_on(worker::run(&cli.data, &args)),
        Command::Keys(cmd) => run_job(keys::run(&cli.data, &cmd)),
        Command::Serve(args) => block_on(serve::run(&cli.data, &args)),
        Command::Eval(args) => eval::run(&cli.data, &args),
        Command::Evidence(cmd) => evidence::run(&cli.data, &cmd),
        Command::Recheck(args) => block_on(recheck::run(&cli.data, &args)),
        Command::Notice(cmd) => notice::run(&cli.data, &cmd),
        Command::Watch(cmd) => block_on(watch::run(&cli.data, &cmd)),
    }
}

/// Run a server, a watcher or a worker on a multi-threaded runtime: their requests, fetches
/// and tasks run side by side.
pub(crate) fn block_on<F: std::future::Future<Output = Result<()>>>(future: F) -> Result<()> {
    tokio::runtime::Builder::new_multi_thread().enable_all().build()?.block_on(future)
}

/// Run a command that does one job and ends (import, match, reindex, report, migrate, keys)
/// on a runtime of one thread. Its async part waits on the stores (the embedded store's
/// calls run in place on that thread, the servers' over their drivers) and hands the
/// CPU-bound work to the matcher's own threads; the two workers of a multi-threaded
/// runtime only woke each other up and spread its allocations over another allocator
/// heap: `match --all` made 30% fewer context switches, 11% fewer page faults and peaked
/// ~12 MB lower on one thread, in the same wall time (docs/benchmarks.md).
pub(crate) fn run_job<F: std::future::Future<Output = Result<()>>>(future: F) -> Result<()> {
    tokio::runtime::Builder::new_current_thread().enable_all().build()?.block_on(future)
}
