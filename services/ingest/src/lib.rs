//! Ingest: everything that brings text into zhiwen. It owns the importers of the rights
//! holders' works (`.txt`, `.md`, `.html`, `.epub`, folders, JSONL; split into chapters by
//! [`chapters`]), the importers of pages collected elsewhere (JSONL, folders of saved
//! HTML, WARC/WARC.gz), and the crawler ([`crawler`]): polite (robots.txt, per-host delay
//! and concurrency), safe (no loopback/private/link-local/multicast addresses, checked
//! after DNS and on every redirect; size caps; timeouts) and resumable (a persisted
//! frontier); and [`render`], the evidence capture of a live page as a browser shows it
//! (a full-page PNG and a PDF by headless Chromium, under the same address policy).
//! Every byte goes through the core's canonicalisation
//! ([`zhiwen_core::canon`]) and every record through the store traits
//! ([`zhiwen_store::WorkStore`], [`zhiwen_store::PageStore`]). Tags and attributes
//! are read with the core's lexer only ([`zhiwen_core::canon::start_tags`], also for the
//! EPUB container and package), references decoded by the core's one decoder; only the
//! text of one XML element (an EPUB's title and author, a sitemap's `<loc>`) is taken by
//! a direct scan. [`html`] keeps what is ingest's own: which links the crawler follows,
//! a saved page's own URL, and a work's text in its original spelling.
//!
//! It must not fingerprint (the matcher does: importers and the crawler return the ids
//! of new and changed works, sections and pages in [`report::Changed`] instead), lex
//! HTML (the core does), own a database schema (the frontier file is private crawler
//! state, not a store), render progress (callers implement [`Progress`]), or parse the
//! command line. One bad file, line, record or page never stops a run: it is counted and
//! reported with its reason, and nothing is stored half-written (each work and each page
//! is one store write).
#![deny(missing_docs)]

pub mod chapters;
pub mod crawler;
mod error;
mod files;
pub mod html;
mod options;
pub mod pages;
pub mod render;
pub mod report;
pub mod url;
mod warc;
pub mod works;

pub use crawler::lease::{HostLeases, Lease, LocalLeases, RedisLeases};
pub use crawler::watch::{Arrivals, WatchConfig, WatchSummary, Watcher, WATCH_POLL};
pub use crawler::{read_seeds, AddressPolicy, CrawlConfig, CrawlSummary, Crawler};
pub use error::{IngestError, Result};
pub use files::running_import_readers;
pub use options::{ImportLimits, ImportOptions, RATIO_GRACE_BYTES};
pub use pages::import_pages;
pub use render::{find_chromium, print_html, render_page, RenderError, RenderOptions, Rendered};
pub use report::{Changed, ImportSummary, NoProgress, Note, Progress, Rejection};
pub use tokio_util::sync::CancellationToken;
pub use works::import_works;
