//! The matcher of zhiwen: it decides which stored pages copy which protected works, and
//! runs that decision as persisted, resumable, scheduled tasks.
//!
//! It owns the matching itself ([`Matcher`]: fingerprint a page, look up candidate
//! sections in the index, verify each with every measure of the core's
//! [`compare`](zhiwen_core::compare::compare), name the [`MatchKind`] and record a match
//! with its evidence quoted from both originals; and the reverse direction, a new work
//! against stored pages), the suppression of shared boilerplate ([`boilerplate`]), the
//! matching task with checkpoints, run by one process or shared by scale-out workers
//! through Redis Streams ([`task`], [`task::streams`]), the daily schedule ([`schedule`]),
//! the one match export of the command line and the API ([`export`]), the webhook for new
//! matches ([`webhook`]) and how a stored page becomes text ([`page_text`], which the
//! API's evidence views use too).
//!
//! It must not touch the algorithms (the core owns fingerprints, measures and verdicts;
//! the matcher only maps a verdict to a kind), the schemas of the stores or the index
//! layout (it uses their traits, so both backends work unchanged), nor the command line
//! or HTTP (the CLI and the API call the functions here). Scheduled jobs only enqueue
//! persisted tasks; one worker loop ([`task::run_next_task`]) executes them, so a
//! schedule can never start a second run beside a running one.

pub mod boilerplate;
mod cache;
mod candidates;
pub mod catalogue;
pub mod config;
mod error;
pub mod export;
mod kind;
pub mod licensed;
mod matcher;
pub mod page_text;
pub mod schedule;
pub mod seen;
pub mod stronger;
pub mod task;
pub mod webhook;

pub use config::{
    BoilerplateConfig, CatalogueConfig, MatcherConfig, ScheduleConfig, SeenTextConfig, WebhookConfig, WorkersConfig,
};
pub use error::{MatcherError, Result};
pub use kind::MatchKind;
pub use matcher::{IndexReport, MatchRecord, Matcher, PageOutcome, PreparedPages, VerifiedPages, WorkOutcome};
