//! The `zhiwen` command: one binary for every role (CLI tools, API server, workers).
//!
//! `main` only sets up logging and maps errors to exit codes; each subcommand lives in
//! its own module under `commands/`. Exit codes: 0 success, 1 a failure (bad input,
//! unreachable server ...), 2 a usage error (clap's own). A closed stdout (`zhiwen ... |
//! head`) is not an error.

use std::io::ErrorKind;
use std::process::ExitCode;

use clap::Parser;

mod alloc;
mod cli;
mod commands;
mod input;
mod output;
mod progress;
mod settings;

fn main() -> ExitCode {
    let args = cli::Cli::parse();
    alloc::no_transparent_huge_pages();
    // The API server returns memory it freed (an upload's, a report's) to the OS; the
    // processes that match keep it for reuse (see alloc.rs).
    if !matches!(args.command, cli::Command::Serve(_)) {
        alloc::keep_freed_memory();
    }
    init_tracing(args.verbose);
    match commands::run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            if is_broken_pipe(&err) {
                return ExitCode::SUCCESS;
            }
            // One clear line (with its causes), never a panic or a backtrace.
            eprintln!("zhiwen: error: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|cause| cause.downcast_ref::<std::io::Error>().is_some_and(|e| e.kind() == ErrorKind::BrokenPipe))
}

fn init_tracing(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("ZHIWEN_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).init();
}
