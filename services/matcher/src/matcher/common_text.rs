//! The catalogue-common text of the registered sections ([`CatalogueProfile`]), measured
//! from the stored section fingerprints on first use and again whenever sections may
//! have changed (a work indexed in this process, a section forgotten, a new task).

use std::sync::atomic::Ordering;
use std::sync::Arc;

use zhiwen_store::SubjectKind;

use super::Matcher;
use crate::catalogue::CatalogueProfile;
use crate::Result;

/// Section fingerprint records read per store call.
const SCAN_BATCH: u32 = 500;

impl Matcher {
    /// The catalogue-common keys of the current sections (measured when the cached
    /// profile is older than the last change of the sections).
    pub async fn catalogue(&self) -> Result<Arc<CatalogueProfile>> {
        let inner = &self.inner;
        let cached = || {
            let version = inner.catalogue_version.load(Ordering::Relaxed);
            inner.catalogue.lock().unwrap_or_else(|p| p.into_inner()).as_ref().filter(|p| p.version == version).cloned()
        };
        if let Some(p) = cached() {
            return Ok(p);
        }
        let _building = inner.catalogue_build.lock().await;
        if let Some(p) = cached() {
            return Ok(p);
        }
        let version = inner.catalogue_version.load(Ordering::Relaxed);
        let config = inner.config.catalogue.clone();
        if !config.enabled {
            let p = Arc::new(CatalogueProfile { version, ..Default::default() });
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
            tokio::task::spawn_blocking(move || CatalogueProfile::measure(keys.iter().map(|k| k.as_slice()), &config))
                .await?;
        profile.version = version;
        tracing::debug!(sections = profile.sections, kgrams = profile.kgrams.len(), "catalogue-common text measured");
        let profile = Arc::new(profile);
        *inner.catalogue.lock().unwrap_or_else(|p| p.into_inner()) = Some(profile.clone());
        Ok(profile)
    }
}
