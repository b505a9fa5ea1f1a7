//! The candidate sections: cached analyses, checked against the store once per epoch
//! (a task), and every work's version read once per epoch.

use super::*;
use std::sync::RwLock;

/// A section ready for verification.
pub(super) struct SectionEntry {
    pub(super) id: i64,
    pub(super) work_id: i64,
    pub(super) text_hash: u64,
    /// Epoch in which the entry was last checked against the store.
    pub(super) checked: AtomicU64,
    /// The work's `updated_at` read before the text was (`i64::MIN`: unknown): while the
    /// work still has it, the text is the same and nothing needs reading.
    pub(super) work_version: AtomicI64,
    /// Complete, or streams only ([`Fingerprinter::analyze_streams`]): enough for the
    /// pre-check that rules out most candidates, at a third of the cost. A streams-only
    /// analysis is replaced by its completion when a candidate first needs the word stage
    /// ([`SectionEntry::full`]), so the cache never holds the streams twice.
    analysis: RwLock<Arc<Analysis>>,
    /// Held while the analysis is completed: it is completed once.
    completing: Mutex<()>,
    /// The winnowed keys' compact form, made when a sampled lookup's candidate is first
    /// confirmed against this entry.
    winnowed: OnceLock<Vec<u32>>,
}

impl SectionEntry {
    /// An entry for section `id` of `work_id` whose text hashes to `text_hash`, checked in
    /// `epoch`, read while the work had `work_version`.
    pub(super) fn new(
        id: i64,
        work_id: i64,
        text_hash: u64,
        epoch: u64,
        work_version: i64,
        analysis: Analysis,
    ) -> Self {
        SectionEntry {
            id,
            work_id,
            text_hash,
            checked: AtomicU64::new(epoch),
            work_version: AtomicI64::new(work_version),
            analysis: RwLock::new(Arc::new(analysis)),
            completing: Mutex::new(()),
            winnowed: OnceLock::new(),
        }
    }

    /// The analysis as it is now: complete, or the streams only.
    pub(super) fn analysis(&self) -> Arc<Analysis> {
        self.analysis.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The complete analysis, and whether it was made by this call (the entry had only
    /// the streams).
    pub(super) fn full(&self, fp: &Fingerprinter) -> (Arc<Analysis>, bool) {
        let now = self.analysis();
        if now.is_complete() {
            return (now, false);
        }
        let _completing = self.completing.lock().unwrap_or_else(|p| p.into_inner());
        let now = self.analysis();
        if now.is_complete() {
            return (now, false);
        }
        let complete = Arc::new(fp.complete(Analysis::clone(&now)));
        *self.analysis.write().unwrap_or_else(|p| p.into_inner()) = complete.clone();
        (complete, true)
    }

    /// Bytes it holds: what it weighs in the section cache.
    pub(super) fn heap_bytes(&self) -> usize {
        self.analysis().heap_bytes() + self.winnowed.get().map_or(0, |w| w.len() * 4)
    }

    /// Checked against the store in `epoch` (or later): current without a read.
    pub(super) fn checked_in(&self, epoch: u64) -> bool {
        self.checked.load(Ordering::Relaxed) >= epoch
    }

    /// [`Fingerprints::winnowed_digest`](zhiwen_core::Fingerprints::winnowed_digest) of
    /// the section (made once).
    pub(super) fn winnowed_digest(&self) -> &[u32] {
        self.winnowed.get_or_init(|| self.analysis().fingerprints.winnowed_digest())
    }
}

/// A candidate section: its cached analysis, or its text still to analyse.
pub(super) enum SectionSource {
    Ready(Arc<SectionEntry>),
    Text { work_id: i64, text: String, version: i64 },
}

impl Matcher {
    /// Forget cached analyses of these sections (call after a work changed in this process;
    /// changed texts are also detected by hash on the next use).
    pub fn forget_sections(&self, section_ids: &[i64]) {
        let mut cache = self.inner.sections.lock().unwrap_or_else(|p| p.into_inner());
        section_ids.iter().for_each(|id| cache.remove(id));
        let mut indexed = self.inner.indexed.lock().unwrap_or_else(|p| p.into_inner());
        section_ids.iter().for_each(|id| {
            indexed.remove(id);
        });
        // Which works they belong to is not known here: every work is looked at again.
        self.inner.indexed_works.lock().unwrap_or_else(|p| p.into_inner()).clear();
        self.inner.catalogue_version.fetch_add(1, Ordering::Release);
        self.forget_texts();
    }

    /// Start a new epoch of the section cache: every cached section is checked against
    /// the store (one read, text hash compared) on its next use. A matching task calls
    /// this when it starts, so works changed by another process are seen; within this
    /// process [`Matcher::forget_sections`] and indexing keep the cache current. The
    /// catalogue-common text is checked against the section index's write token on its
    /// next use (and measured again only if the sections changed).
    ///
    /// It also starts a new set of remembered page texts: a page with the same text as
    /// another one is verified once per task, and its mirrors reuse that result.
    pub fn revalidate_sections(&self) {
        self.inner.epoch.fetch_add(1, Ordering::Relaxed);
        self.forget_texts();
    }

    /// Check the catalogue-common text against the index on its next use (one read of
    /// the sections' write token; measured again only if they changed). Scale-out workers
    /// call this when they start on another task: they index no works, so they cannot
    /// see sections added by other processes otherwise.
    pub fn remeasure_catalogue(&self) {
        self.inner.catalogue_version.fetch_add(1, Ordering::Release);
        self.forget_texts();
    }

    /// The analysis of a section (cached; re-made when its text changed).
    pub(super) async fn section(&self, id: i64) -> Result<Option<Arc<SectionEntry>>> {
        match self.candidate_sections(&[id]).await?.pop() {
            None => Ok(None),
            // A cache hit needs no trip to the CPU pool; only an analysis does.
            Some((_, SectionSource::Ready(entry))) => Ok(Some(entry)),
            Some((_, text)) => self.on_cpu(move |inner| inner.ready(id, text)).await,
        }
    }

    /// The sections `ids` (stored ones only, in the order given): cached analyses as they
    /// are, the others' texts read in one store call and left to analyse
    /// ([`Inner::ready`]) on the CPU pool, with the verification that needs them.
    ///
    /// A cached analysis is checked once per epoch, against its work's `updated_at` from
    /// the epoch's listing ([`Matcher::work_versions`]): the text is read again only when
    /// the work changed.
    pub(super) async fn candidate_sections(&self, ids: &[i64]) -> Result<Vec<(i64, SectionSource)>> {
        let epoch = self.inner.epoch.load(Ordering::Relaxed);
        let mut out: Vec<(i64, Option<SectionSource>)> = Vec::with_capacity(ids.len());
        let mut stale: HashMap<i64, Arc<SectionEntry>> = HashMap::new();
        let mut versions = None;
        for &id in ids {
            let hit = self.inner.sections.lock().unwrap_or_else(|p| p.into_inner()).get(&id);
            if let Some(entry) = hit.as_ref().filter(|e| e.checked_in(epoch)) {
                out.push((id, Some(SectionSource::Ready(entry.clone()))));
                continue;
            }
            // Listed before the texts below are read, so never newer than those texts.
            if versions.is_none() {
                versions = Some(self.work_versions(epoch).await?);
            }
            let known = versions.as_ref().map(|v| v.as_ref());
            if let Some(entry) = hit {
                let version = known.and_then(|v| v.get(&entry.work_id)).copied();
                if version.is_some_and(|v| v == entry.work_version.load(Ordering::Relaxed)) {
                    entry.checked.fetch_max(epoch, Ordering::Relaxed);
                    out.push((id, Some(SectionSource::Ready(entry))));
                    continue;
                }
                stale.insert(id, entry);
            }
            out.push((id, None));
        }
        let unread: Vec<i64> = out.iter().filter(|(_, s)| s.is_none()).map(|(id, _)| *id).collect();
        if !unread.is_empty() {
            let mut read: HashMap<i64, zhiwen_store::Section> =
                self.inner.stores.works.get_sections(&unread).await?.into_iter().map(|s| (s.id, s)).collect();
            let versions = versions.unwrap_or_default();
            for (id, slot) in out.iter_mut().filter(|(_, s)| s.is_none()) {
                // A section no longer stored stays `None` and is left out below.
                let Some(section) = read.remove(id) else { continue };
                // A work registered after the listing has no version yet: checked again next epoch.
                let version = versions.get(&section.work_id).copied().unwrap_or(i64::MIN);
                let text_hash = hash_bytes(section.text.as_bytes());
                *slot = Some(match stale.remove(id).filter(|e| e.text_hash == text_hash) {
                    Some(entry) => {
                        entry.work_version.store(version, Ordering::Relaxed);
                        entry.checked.fetch_max(epoch, Ordering::Relaxed);
                        SectionSource::Ready(entry)
                    }
                    None => SectionSource::Text { work_id: section.work_id, text: section.text, version },
                });
            }
        }
        Ok(out.into_iter().filter_map(|(id, s)| s.map(|s| (id, s))).collect())
    }

    /// Every work's `updated_at` (milliseconds) as the current epoch sees it: read once
    /// per epoch (a task), shared by the task's works loop and the section cache.
    pub(crate) async fn epoch_work_versions(&self) -> Result<Arc<HashMap<i64, i64>>> {
        self.work_versions(self.inner.epoch.load(Ordering::Relaxed)).await
    }

    /// Every work's `updated_at`, read on the first use in an epoch (one query for all
    /// the works instead of one read of every cached section per task).
    pub(super) async fn work_versions(&self, epoch: u64) -> Result<Arc<HashMap<i64, i64>>> {
        let read = async {
            Ok(self.inner.stores.works.work_versions().await?.into_iter().map(|(id, at)| (id, at.0)).collect())
        };
        self.inner.work_versions.of(epoch, read).await
    }
}

impl Inner {
    /// The analysis of a candidate section, made (streams only) and cached if it was not;
    /// `None` for a text that cannot be fingerprinted (skipped, with a warning).
    pub(super) fn ready(&self, id: i64, source: SectionSource) -> Option<Arc<SectionEntry>> {
        match source {
            SectionSource::Ready(entry) => Some(entry),
            SectionSource::Text { work_id, text, version } => {
                match self.section_entry_from_text(id, work_id, &text, version, false) {
                    Ok(entry) => Some(entry),
                    Err(e) => {
                        tracing::warn!(target: LOG_TARGET, section_id = id, error = %e, "section cannot be fingerprinted; skipped");
                        None
                    }
                }
            }
        }
    }

    /// A section's cache entry: with the complete analysis, or (`complete == false`) with
    /// the streams only, completed when a candidate passes the pre-check.
    pub(super) fn section_entry_from_text(
        &self,
        id: i64,
        work_id: i64,
        text: &str,
        version: i64,
        complete: bool,
    ) -> Result<Arc<SectionEntry>> {
        let analysis = if complete {
            self.fp.analyze_text(text, InputFormat::Text)
        } else {
            self.fp.analyze_streams(text, InputFormat::Text)
        }
        .map_err(|source| MatcherError::Text { what: format!("section {id}"), source })?;
        let epoch = self.epoch.load(Ordering::Relaxed);
        let entry = Arc::new(SectionEntry::new(id, work_id, hash_bytes(text.as_bytes()), epoch, version, analysis));
        self.sections.lock().unwrap_or_else(|p| p.into_inner()).insert_weighted(id, entry.clone(), entry.heap_bytes());
        Ok(entry)
    }

    /// The complete analysis of a cached section, made now if it has only the streams;
    /// the cache then weighs the entry with it.
    pub(super) fn full_section(&self, entry: &SectionEntry) -> Arc<Analysis> {
        let (full, made) = entry.full(&self.fp);
        if made {
            let weight = entry.heap_bytes();
            self.sections.lock().unwrap_or_else(|p| p.into_inner()).reweigh(&entry.id, weight);
        }
        full
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_section_completed_holds_its_streams_once() {
        let fp = Fingerprinter::new(zhiwen_core::Params::default()).expect("default parameters");
        let text = "滚滚长江东逝水，浪花淘尽英雄。是非成败转头空，青山依旧在，几度夕阳红。".repeat(20);
        let streams = fp.analyze_streams(&text, InputFormat::Text).expect("text");
        let complete_alone = fp.analyze_text(&text, InputFormat::Text).expect("text").heap_bytes();
        let entry = SectionEntry::new(1, 1, 0, 0, 0, streams);
        assert!(!entry.analysis().is_complete());

        let (full, made) = entry.full(&fp);
        assert!(full.is_complete() && made);
        // The streams-only analysis is replaced, not kept beside the complete one.
        assert!(Arc::ptr_eq(&entry.analysis(), &full));
        let held = entry.heap_bytes();
        assert!(held <= complete_alone + complete_alone / 4, "{held} bytes held, {complete_alone} for one analysis");

        let (again, made) = entry.full(&fp);
        assert!(Arc::ptr_eq(&again, &full) && !made);
    }
}
