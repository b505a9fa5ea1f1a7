//! The catalogue-common text of the registered sections ([`CatalogueProfile`]), measured
//! from the stored section fingerprints on first use and again whenever sections may
//! have changed: a work indexed or a section forgotten in this process, or (checked once
//! per task) a listing of the works that differs from the one it was measured with, as
//! when another process deleted a work.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use zhiwen_core::hash::hash_u64s;

use zhiwen_store::SubjectKind;

use super::Matcher;
use crate::catalogue::CatalogueProfile;
use crate::Result;

/// Section fingerprint records read per store call. Each record is decoded whole (its
/// shingles, signature and both winnowed streams) before its `winnow_chars` are kept:
/// 500 at a time were 10 MB at once, the largest single allocation of a matching task
/// on the evaluation set (issue #31); 100 hold a fifth of it for five times the calls,
/// one per 100 sections, once per change of the catalogue.
const SCAN_BATCH: u32 = 100;

impl Matcher {
    /// The catalogue-common keys of the current sections (measured when the cached
    /// profile is older than the last change of the sections).
    pub async fn catalogue(&self) -> Result<Arc<CatalogueProfile>> {
        let inner = &self.inner;
        let epoch = inner.epoch.load(Ordering::Relaxed);
        let cached = || {
            let version = inner.catalogue_version.load(Ordering::Relaxed);
            inner.catalogue.lock().unwrap_or_else(|p| p.into_inner()).as_ref().filter(|p| p.version == version).cloned()
        };
        if inner.catalogue_checked.load(Ordering::Acquire) == epoch {
            if let Some(p) = cached() {
                return Ok(p);
            }
        }
        let _building = inner.catalogue_build.lock().await;
        // Once per epoch (a task): the works as listed now against those the profile was
        // measured with. Works indexed here bump the version themselves; a work deleted
        // or changed elsewhere only shows here.
        let works = works_signature(&*self.work_versions(epoch).await?);
        if inner.catalogue_checked.load(Ordering::Acquire) != epoch {
            let measured = inner.catalogue.lock().unwrap_or_else(|p| p.into_inner()).as_ref().map(|p| p.works);
            if measured.is_some_and(|w| w != works) {
                inner.catalogue_version.fetch_add(1, Ordering::Relaxed);
            }
            inner.catalogue_checked.store(epoch, Ordering::Release);
        }
        if let Some(p) = cached() {
            return Ok(p);
        }
        let version = inner.catalogue_version.load(Ordering::Relaxed);
        let config = inner.config.catalogue.clone();
        if !config.enabled {
            let p = Arc::new(CatalogueProfile { version, works, ..Default::default() });
            *inner.catalogue.lock().unwrap_or_else(|p| p.into_inner()) = Some(p.clone());
            return Ok(p);
        }
        // Only fingerprints made with the current parameters (stale ones would hash other
        // k-grams); each section's keys as the index holds them.
        let tag = inner.fp.params_tag().to_owned();
        let mut keys = Vec::new();
        let mut after = 0;
        loop {
            let recs = inner.stores.fingerprints.scan_fingerprints(SubjectKind::Section, after, SCAN_BATCH).await?;
            let Some(last) = recs.last() else { break };
            after = last.subject.id;
            keys.extend(recs.into_iter().filter(|r| r.params_tag == tag).map(|r| r.fingerprints.winnow_chars));
        }
        let mut profile =
            self.on_cpu(move |_| CatalogueProfile::measure(keys.iter().map(|k| k.as_slice()), &config)).await?;
        (profile.version, profile.works) = (version, works);
        tracing::debug!(sections = profile.sections, kgrams = profile.kgrams.len(), "catalogue-common text measured");
        let profile = Arc::new(profile);
        *inner.catalogue.lock().unwrap_or_else(|p| p.into_inner()) = Some(profile.clone());
        Ok(profile)
    }
}

/// An order-independent signature of the works' ids and `updated_at`.
fn works_signature(versions: &HashMap<i64, i64>) -> u64 {
    let each = versions.iter().map(|(&id, &at)| hash_u64s(&[id as u64, at as u64], 0));
    each.fold(versions.len() as u64, u64::wrapping_add)
}
