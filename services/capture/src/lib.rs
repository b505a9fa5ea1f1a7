//! Evidence captures of matched pages, and the service that keeps their log.
//!
//! When a match is first recorded the matcher queues a capture task
//! ([`zhiwen_matcher::task::capture_task`]); a capture worker ([`run_next_capture`]) runs
//! it beside matching: it re-fetches a crawled page through the crawler's own client and
//! address policy and writes the exchange as WARC (an imported page's capture is its
//! stored record), has Chromium take a full-page screenshot and a print of a live page,
//! stores every file by its SHA-256 and appends the capture record to the evidence log
//! ([`zhiwen_evidence`]). The [`EvidenceService`] also signs tree heads and writes the
//! verifiable packages of captures.
//!
//! The removal re-check ([`recheck()`]) fetches noticed and confirmed pages again,
//! records whether they are up, changed or removed, flags those still up long after their
//! notice, and [`removal_stats`] sums it up per site and per holder.
//!
//! Layering: above the stores and ingest (fetching, rendering), below the API and the CLI.

mod error;
mod key;
pub mod recheck;
mod service;
mod task;
mod worker;

pub use error::{CaptureError, Result};
pub use key::{key_path, load_or_create_key};
pub use recheck::{recheck, removal_stats, RecheckConfig, RecheckReport, RemovalFigures, RemovalStats};
pub use service::{parse_tsa_url, publish_head, CaptureConfig, EvidenceService};
pub use task::{request_capture, run_next_capture, run_queued_captures, CaptureRun};
pub use url::Url;
pub use worker::{recheck_slot, run_capture_worker, RECHECK_TASK_KIND};
