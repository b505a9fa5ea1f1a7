//! [`Matcher`]: fingerprint, look up, verify, decide, record.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use futures::StreamExt;
use serde::{Deserialize, Serialize};
use zhiwen_core::canon::{self, slice_chars, InputFormat};
use zhiwen_core::compare::{compare_with, Comparison, PassageIndex};
use zhiwen_core::hash::hash_bytes;
use zhiwen_core::{Analysis, Fingerprinter};
use zhiwen_index::{Candidate, CandidateIndex, IndexKey, LookupResult, Namespace};
use zhiwen_store::{NewMatch, Outcome, Page, PageParts, Stores, Subject, Timestamp};

use crate::boilerplate::{boilerplate_positions, SiteProfile};
use crate::cache::BoundedCache;
use crate::catalogue::CatalogueProfile;
use crate::config::MatcherConfig;
use crate::kind::MatchKind;
use crate::{MatcherError, Result};

mod batch;
mod common_text;
mod index_identity;
mod indexing;
mod prepare;
mod records;
mod sections;
mod text_results;
mod verify;

use common_text::WeighedCopy;
use prepare::PreparedPage;
pub(crate) use records::FoundCopy;
pub use records::{IndexReport, MatchRecord, PageOutcome, WorkOutcome};
use sections::{SectionEntry, SectionSource};
pub(crate) use text_results::{TextKey, TextResult};

/// The target of the matcher's log events, whichever of its files logs them (log lines
/// read `zhiwen_matcher::matcher: match ...`, as operators and the crash tests expect).
const LOG_TARGET: &str = "zhiwen_matcher::matcher";

/// Sections whose stored fingerprints `index_work` reads in one store call (a bound on
/// the records held at once for a work of thousands of chapters).
const SECTIONS_CHECKED_PER_READ: usize = 256;

/// Verified page texts remembered for mirrors ([`TextResult`]): pages of a task whose text
/// equals one verified earlier in the task reuse its result instead of being looked up and
/// verified again. Most entries are of pages without copies (a few words each).
const TEXT_RESULTS: usize = 20_000;

pub use batch::{PreparedPages, VerifiedPages};

/// Matches pages against protected works (and works against stored pages).
///
/// Cheap to clone (shared state behind an `Arc`); every operation is idempotent, so a
/// batch repeated after a crash changes nothing.
#[derive(Clone)]
pub struct Matcher {
    inner: Arc<Inner>,
}

struct Inner {
    stores: Stores,
    index: Arc<dyn CandidateIndex>,
    fp: Fingerprinter,
    config: MatcherConfig,
    sections: Mutex<BoundedCache<i64, Arc<SectionEntry>>>,
    /// Cached sections checked against the store in an earlier epoch are checked again
    /// (by text hash) on their next use; a matching task starts a new epoch.
    epoch: AtomicU64,
    sites: Mutex<HashMap<String, Arc<SiteProfile>>>,
    site_build: tokio::sync::Mutex<()>,
    /// Sections whose stored fingerprints and index entries this process wrote or found
    /// current: section id -> (hash of the text they were made from, `updated_at` of the
    /// work then). `indexed_works` skips whole works; this still spares the stored
    /// fingerprints of unchanged works' sections after `forget_sections` cleared it.
    indexed: Mutex<HashMap<i64, (u64, i64)>>,
    /// Works all of whose sections were indexed or found current: work id -> the work's
    /// `updated_at` read before its sections were (a later change has a later one).
    indexed_works: Mutex<HashMap<i64, i64>>,
    /// The works the store marks indexed with this process's parameter tag, listed once
    /// per epoch: work id -> the version marked.
    indexed_marks: EpochMap,
    /// Every work's `updated_at`, listed once per epoch before any section of the epoch
    /// is read: work id -> `updated_at`.
    work_versions: EpochMap,
    /// Catalogue-common text (`common_text`), with the section index's write token it
    /// was measured at.
    catalogue: Mutex<Option<Arc<CatalogueProfile>>>,
    /// Bumped when sections may have changed: this process indexed a new or changed
    /// section or forgot one, or a scale-out worker starts on another task
    /// (`remeasure_catalogue`). The next use of the profile reads the index's token.
    catalogue_version: AtomicU64,
    /// The (epoch, `catalogue_version`) at which the profile's token was last found
    /// current.
    catalogue_checked: Mutex<(u64, u64)>,
    catalogue_build: tokio::sync::Mutex<()>,
    /// See [`Matcher::section_lookup_modulus`]; 0 until read from the store.
    section_lookup_modulus: AtomicU64,
    /// The index generation this process last recorded in the store
    /// ([`Matcher::record_index_generation`]).
    generation_recorded: AtomicU64,
    /// What verifying each page text of the current task found, by text
    /// ([`PreparedPage::text_key`]): a page with the same text as one verified before (a
    /// mirror under another URL) reuses it. Cleared whenever sections may have changed.
    texts: Mutex<BoundedCache<TextKey, Arc<TextResult>>>,
    /// The threads CPU-bound work ([`Matcher::on_cpu`]) runs on, one per core.
    cpu: CpuPool,
    /// The tag of the canonicalisation the fingerprinter's parameters make
    /// ([`zhiwen_core::params::CanonParams::tag`]): a page stored with it is analysed from
    /// its stored text ([`PreparedPage::stored`]).
    canon_tag: String,
}

/// A map of work ids to versions (milliseconds) read from the store at most once per
/// epoch (a task): one query for all the works, not one per work.
struct EpochMap(tokio::sync::Mutex<(u64, Arc<HashMap<i64, i64>>)>);

impl Default for EpochMap {
    fn default() -> Self {
        EpochMap(tokio::sync::Mutex::new((u64::MAX, Arc::default())))
    }
}

impl EpochMap {
    /// The map of `epoch`, made by `read` on its first use in the epoch (`read` is not
    /// polled otherwise).
    async fn of(
        &self,
        epoch: u64,
        read: impl std::future::Future<Output = Result<Vec<(i64, i64)>>>,
    ) -> Result<Arc<HashMap<i64, i64>>> {
        let mut slot = self.0.lock().await;
        if slot.0 != epoch {
            *slot = (epoch, Arc::new(read.await?.into_iter().collect()));
        }
        Ok(slot.1.clone())
    }
}

/// A blocking pool of its own, one thread per core, for the matcher's CPU-bound work:
/// tokio's blocking pool of a runtime that is never driven otherwise. Jobs beyond the
/// threads wait in its queue.
struct CpuPool {
    /// `None` once dropped, or if it could not be built (the caller's blocking pool is
    /// used then).
    runtime: Option<tokio::runtime::Runtime>,
}

impl CpuPool {
    fn new(threads: usize) -> Self {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .max_blocking_threads(threads.max(1))
            .thread_name("zhiwen-cpu")
            // Kept: each thread's allocator pages serve its next jobs.
            .thread_keep_alive(Duration::from_secs(600))
            .build();
        if let Err(e) = &runtime {
            tracing::warn!(target: LOG_TARGET, error = %e, "no CPU pool of its own; matching uses the runtime's blocking pool");
        }
        CpuPool { runtime: runtime.ok() }
    }

    fn spawn<T: Send + 'static>(&self, job: impl FnOnce() -> T + Send + 'static) -> tokio::task::JoinHandle<T> {
        match &self.runtime {
            Some(runtime) => runtime.spawn_blocking(job),
            None => tokio::task::spawn_blocking(job),
        }
    }
}

impl Drop for CpuPool {
    fn drop(&mut self) {
        // A runtime dropped inside another one's task would block it: let its threads end
        // on their own after the jobs they run.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matcher")
            .field("stores", &self.inner.stores.backend)
            .field("index", &self.inner.index.backend())
            .field("params_tag", &self.inner.fp.params_tag())
            .finish_non_exhaustive()
    }
}

impl Matcher {
    /// A matcher over `stores` and `index`, fingerprinting with `fingerprinter`.
    pub fn new(
        stores: Stores,
        index: Arc<dyn CandidateIndex>,
        fingerprinter: Fingerprinter,
        config: MatcherConfig,
    ) -> Self {
        let cache = BoundedCache::with_budget(config.section_cache, config.section_cache_mb.saturating_mul(1 << 20));
        let canon_tag = fingerprinter.params().canon.tag();
        Matcher {
            inner: Arc::new(Inner {
                stores,
                index,
                fp: fingerprinter,
                config,
                sections: Mutex::new(cache),
                epoch: AtomicU64::new(0),
                sites: Mutex::new(HashMap::new()),
                site_build: tokio::sync::Mutex::new(()),
                indexed: Mutex::new(HashMap::new()),
                indexed_works: Mutex::new(HashMap::new()),
                indexed_marks: EpochMap::default(),
                work_versions: EpochMap::default(),
                catalogue: Mutex::new(None),
                catalogue_version: AtomicU64::new(0),
                catalogue_checked: Mutex::new((u64::MAX, u64::MAX)),
                catalogue_build: tokio::sync::Mutex::new(()),
                section_lookup_modulus: AtomicU64::new(0),
                generation_recorded: AtomicU64::new(0),
                texts: Mutex::new(BoundedCache::new(TEXT_RESULTS)),
                cpu: CpuPool::new(cpu_jobs()),
                canon_tag,
            }),
        }
    }

    /// The stores.
    pub fn stores(&self) -> &Stores {
        &self.inner.stores
    }

    /// The candidate index.
    pub fn index(&self) -> &Arc<dyn CandidateIndex> {
        &self.inner.index
    }

    /// The configuration.
    pub fn config(&self) -> &MatcherConfig {
        &self.inner.config
    }

    /// The fingerprinter.
    pub fn fingerprinter(&self) -> &Fingerprinter {
        &self.inner.fp
    }

    /// Run CPU-bound work (fingerprinting, verification, measuring) on the matcher's own
    /// threads, one per core, whoever asks: the pages, sections and checks of a task
    /// queue there. On the runtime's blocking pool every job waiting for a core was a
    /// thread of its own (20 on 2 cores in `match --all`), each holding its text's
    /// analysis in progress and, once done, its allocator's pages: the peak memory
    /// followed the jobs started instead of the cores (docs/benchmarks.md).
    async fn on_cpu<T, F>(&self, f: F) -> Result<T>
    where
        T: Send + 'static,
        F: FnOnce(&Inner) -> T + Send + 'static,
    {
        let inner = self.inner.clone();
        Ok(self.inner.cpu.spawn(move || f(&inner)).await?)
    }
}

/// CPU-bound jobs run at once: the cores this process may use.
fn cpu_jobs() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}
