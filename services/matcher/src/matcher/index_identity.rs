//! Is the candidate index the one the store was indexed into?
//!
//! The index is derived data, and it can come back empty (a Redis restarted without
//! persistence, a flushed server, a deleted file) or be another deployment's. Matching
//! against such an index finds nothing and would report success. So the store keeps the
//! identity of its index ([`zhiwen_store::INDEX_IDENTITY`]; the index gives itself a new
//! random one whenever it starts from empty, see [`CandidateIndex::identity`]), a task
//! compares the two when it starts and at every checkpoint, and refuses to go on when they
//! differ. `zhiwen reindex` rebuilds the index and records its new identity
//! ([`Matcher::begin_reindex`], [`Matcher::finish_reindex`]).
//!
//! An index restored from an earlier snapshot keeps its identity but lacks what was
//! written since. So after each write whose effect the store relies on (a work's sections,
//! before the work is marked indexed; a batch's page keys) the store records the index's
//! generation, its count of writes ([`CandidateIndex::generation`],
//! [`zhiwen_store::INDEX_GENERATION`]); an index showing a smaller one is refused like a
//! foreign one. The recorded value is always one the index showed, and the index's only
//! grows, so a live index is never refused (two processes recording at once can only
//! leave the smaller of their two values).
//!
//! The store also records the layout of the section namespace: the coarsest sampling of
//! winnowed keys its sections were written with ([`SECTION_INDEX_SAMPLING`]). A page is
//! looked up at least that coarsely, so an index written with a coarser
//! `matcher.section_index_sampling` than the current one is still read right (its
//! sections lack the keys a finer lookup would count on) until `zhiwen reindex` rewrites
//! it.

use std::sync::atomic::Ordering;

use zhiwen_store::{INDEX_GENERATION, INDEX_IDENTITY, SECTION_INDEX_SAMPLING};

use super::Matcher;
use crate::error::{MatcherError, Result};

/// The store's record while a rebuild runs: a rebuild that stops half way leaves an
/// index that must not be trusted.
const REBUILDING: &str = "rebuilding";

impl Matcher {
    /// Check that the index is the one the store was indexed into. A store without a
    /// record (new, or written by a version before index identities) adopts the index
    /// it is opened with, unless the store holds no work while the index holds
    /// documents: that index is another store's (a store restored empty, a reused prefix).
    pub async fn check_index(&self) -> Result<()> {
        let index = self.index().identity().await?;
        let stored = self.stores().meta.get_meta(INDEX_IDENTITY).await?;
        match (stored, index) {
            (Some(s), Some(i)) if s == i => {
                let (index, store) = (self.index().generation().await?, self.recorded_generation().await?);
                if index < store {
                    return Err(MatcherError::IndexBehind { backend: self.index().backend(), index, store });
                }
                self.read_section_sampling().await.map(drop)
            }
            (None, Some(_)) if self.stores().works.count_works().await? == 0 && !index_is_empty(self).await? => {
                Err(MatcherError::IndexNotTheStores { rebuilding: false, backend: self.index().backend(), found: true })
            }
            (None, Some(i)) => {
                tracing::info!(identity = %i, "the store records the index it is indexed into");
                self.put_generation(self.index().generation().await?).await?;
                self.stores().meta.put_meta(INDEX_IDENTITY, &i).await?;
                self.read_section_sampling().await.map(drop)
            }
            (stored, found) => Err(MatcherError::IndexNotTheStores {
                rebuilding: stored.as_deref() == Some(REBUILDING),
                backend: self.index().backend(),
                found: found.is_some(),
            }),
        }
    }

    /// Before `zhiwen reindex` clears the index: until [`Matcher::finish_reindex`], the
    /// index is not trusted (a rebuild interrupted half way must be run again).
    pub async fn begin_reindex(&self) -> Result<()> {
        Ok(self.stores().meta.put_meta(INDEX_IDENTITY, REBUILDING).await?)
    }

    /// After `zhiwen reindex` rebuilt every namespace: the store records the rebuilt
    /// index.
    pub async fn finish_reindex(&self) -> Result<()> {
        let identity = self.index().identity().await?.ok_or_else(|| MatcherError::IndexNotTheStores {
            rebuilding: true,
            backend: self.index().backend(),
            found: false,
        })?;
        // The rebuilt index (perhaps a new one, counting from 0) is the one to compare with.
        self.put_generation(self.index().generation().await?).await?;
        Ok(self.stores().meta.put_meta(INDEX_IDENTITY, &identity).await?)
    }

    /// After a write to the index whose effect the store is about to rely on: the store
    /// records the index's generation (once it grew past what this process recorded).
    pub(super) async fn record_index_generation(&self) -> Result<()> {
        let generation = self.index().generation().await?;
        if generation > self.inner.generation_recorded.load(Ordering::Acquire) {
            self.put_generation(generation).await?;
        }
        Ok(())
    }

    async fn put_generation(&self, generation: u64) -> Result<()> {
        self.stores().meta.put_meta(INDEX_GENERATION, &generation.to_string()).await?;
        // Stored, not maximised: a rebuilt index counts from its own start.
        self.inner.generation_recorded.store(generation, Ordering::Release);
        Ok(())
    }

    /// The generation the store recorded (0: none, as before generations were counted).
    async fn recorded_generation(&self) -> Result<u64> {
        match self.stores().meta.get_meta(INDEX_GENERATION).await? {
            None => Ok(0),
            Some(v) => v
                .parse::<u64>()
                .map_err(|_| MatcherError::Internal(format!("the store's {INDEX_GENERATION} is {v:?}, not a number"))),
        }
    }

    /// The sampling modulus a page's winnowed keys are looked up with in the section
    /// namespace: the configured one, or the one the namespace was written with when that
    /// is coarser (read from the store on first use and at every [`Matcher::check_index`]).
    pub(super) async fn section_lookup_modulus(&self) -> Result<u64> {
        match self.inner.section_lookup_modulus.load(Ordering::Relaxed) {
            0 => self.read_section_sampling().await,
            m => Ok(m),
        }
    }

    async fn recorded_section_sampling(&self) -> Result<u64> {
        match self.stores().meta.get_meta(SECTION_INDEX_SAMPLING).await? {
            None => Ok(1),
            Some(v) => v.parse::<u64>().ok().filter(|m| m.is_power_of_two()).ok_or_else(|| {
                MatcherError::Internal(format!("the store's {SECTION_INDEX_SAMPLING} is {v:?}, not a power of two"))
            }),
        }
    }

    async fn read_section_sampling(&self) -> Result<u64> {
        let m = self.recorded_section_sampling().await?.max(self.config().section_sampling_modulus());
        self.inner.section_lookup_modulus.store(m, Ordering::Relaxed);
        Ok(m)
    }

    /// Before sections are added to the index with the configured sampling: the store
    /// records it when it is coarser than the one recorded (lookups then sample as
    /// coarsely).
    pub(super) async fn record_section_sampling(&self) -> Result<()> {
        let (recorded, config) = (self.recorded_section_sampling().await?, self.config().section_sampling_modulus());
        if config > recorded {
            self.stores().meta.put_meta(SECTION_INDEX_SAMPLING, &config.to_string()).await?;
        }
        self.inner.section_lookup_modulus.store(config.max(recorded), Ordering::Relaxed);
        Ok(())
    }

    /// After `zhiwen reindex` rewrote every section with the configured sampling: the
    /// store records it as the section namespace's layout (finer or coarser than before).
    pub async fn sections_reindexed(&self) -> Result<()> {
        let config = self.config().section_sampling_modulus();
        self.stores().meta.put_meta(SECTION_INDEX_SAMPLING, &config.to_string()).await?;
        self.inner.section_lookup_modulus.store(config, Ordering::Relaxed);
        Ok(())
    }

    /// Is the index trusted (the one the store was indexed into)? For `--only` rebuilds,
    /// which leave the other namespace as it is and so need it intact.
    pub async fn index_is_trusted(&self) -> Result<bool> {
        let index = self.index().identity().await?;
        Ok(index.is_some() && self.stores().meta.get_meta(INDEX_IDENTITY).await? == index)
    }
}

async fn index_is_empty(matcher: &Matcher) -> Result<bool> {
    let stats = matcher.index().stats().await?;
    Ok(stats.namespaces.iter().all(|n| n.documents == 0))
}
