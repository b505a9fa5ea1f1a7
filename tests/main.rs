//! The end-to-end tests of the `zhiwen` binary, as users and operators run it, in one
//! test binary (one link of the whole dependency graph instead of eight): the command-line
//! contract (`cli`), crash safety of a task killed mid-run (`crash`), the deployment
//! roles (`deploy_modes`), the evaluation command (`eval`), evidence and takedown cases
//! (`evidence`), hostile inputs (`hostile`), reindexing after the index is lost
//! (`reindex`) and scale-out workers (`worker`). `common` holds what several share.

mod common;

mod cli;
mod crash;
mod deploy_modes;
mod eval;
mod evidence;
mod hostile;
mod reindex;
mod worker;
