//! Indexing: the sections of a work into the section namespace, a page into the page
//! namespace (for the reverse direction).

use super::*;

impl Matcher {
    /// Fingerprint every section of a work, store the fingerprints (without the word
    /// shingles, [`zhiwen_core::Fingerprints::without_word_shingles`]) and add them to the
    /// section namespace of the index. Sections whose stored fingerprints have the
    /// current parameter tag and the same canonical text are skipped; a work the store
    /// marks indexed at its current version with the current parameter tag
    /// ([`zhiwen_store::FingerprintStore::mark_work_indexed`]) is not read at all.
    pub async fn index_work(&self, work_id: i64) -> Result<IndexReport> {
        let s = &self.inner.stores;
        // The version before the sections: a change after this read has a later version,
        // so remembering this one can make the next call look again, never miss a change.
        let work = s.queries.work_summary(work_id).await?;
        if let Some(w) = &work {
            let done = self.inner.indexed_works.lock().unwrap_or_else(|p| p.into_inner()).get(&work_id).copied();
            let unchanged =
                IndexReport { documents: w.section_count as usize, indexed: 0, unchanged: w.section_count as usize };
            if done == Some(w.updated_at.0) {
                return Ok(unchanged);
            }
            // Marked by any process (this one's first task included) at this version: a
            // new process's first task reads no section of an unchanged work (checking
            // them was ~2 minutes per million sections, every process).
            if self.marked_indexed(work_id).await? == Some(w.updated_at.0) {
                self.inner.indexed_works.lock().unwrap_or_else(|p| p.into_inner()).insert(work_id, w.updated_at.0);
                return Ok(unchanged);
            }
        }
        let sections = s.works.sections_of(work_id).await?;
        if sections.is_empty() && work.is_none() {
            return Err(MatcherError::NotFound { what: "work", id: work_id });
        }
        let updated_at = work.as_ref().map_or(i64::MIN, |w| w.updated_at.0);
        let mut report = IndexReport { documents: sections.len(), ..Default::default() };
        let mut fingerprints = Vec::new();
        let mut keys = Vec::new();
        let mut current = Vec::new();
        let mut to_check = Vec::with_capacity(sections.len());
        for section in sections {
            // Stored fingerprints are only ever written for the text they were made from
            // (with this process's parameters, by any process), and dropped only after the
            // work was updated: the same text and the same work version as when this
            // process last indexed or checked the section mean they are current, without
            // reading and decoding them again (every matching task indexes every work).
            let memo = (hash_bytes(section.text.as_bytes()), updated_at);
            if self.inner.indexed.lock().unwrap_or_else(|p| p.into_inner()).get(&section.id) == Some(&memo) {
                report.unchanged += 1;
                continue;
            }
            current.push((section.id, memo));
            to_check.push(section);
        }
        // The stored fingerprints are read for many sections at a time, not one by one: a
        // process's first task checks every section of the catalogue (at 100k sections on
        // MongoDB + Redis its start took 54 s instead of 92-100). The sections of one read
        // are checked and fingerprinted in turn in one job on the CPU pool: a job a section
        // cost two thread hand-offs a section, as many as the rest of the work's indexing.
        let mut to_check = to_check.into_iter().peekable();
        while to_check.peek().is_some() {
            let chunk: Vec<zhiwen_store::Section> = to_check.by_ref().take(SECTIONS_CHECKED_PER_READ).collect();
            let subjects: Vec<Subject> = chunk.iter().map(|section| Subject::section(section.id)).collect();
            let mut stored_of: HashMap<i64, zhiwen_store::FingerprintRecord> =
                s.fingerprints.get_fingerprints_many(&subjects).await?.into_iter().map(|r| (r.subject.id, r)).collect();
            let jobs: Vec<_> = chunk.into_iter().map(|section| (stored_of.remove(&section.id), section)).collect();
            let checked = self
                .on_cpu(move |inner| -> Result<Vec<(i64, Option<zhiwen_core::Fingerprints>)>> {
                    jobs.into_iter()
                        .map(|(stored, section)| {
                            Ok((section.id, inner.fresh_fingerprints(stored, &section, updated_at)?))
                        })
                        .collect()
                })
                .await??;
            for (id, fresh) in checked {
                match fresh {
                    None => report.unchanged += 1,
                    Some(made) => {
                        report.indexed += 1;
                        keys.push((id as u64, self.inner.config.section_index_keys(&made)));
                        fingerprints.push((Subject::section(id), made));
                    }
                }
            }
        }
        if !fingerprints.is_empty() {
            // No mark while the fingerprints and keys are written: a write that stops half
            // way (or one with other parameters than a mark's) leaves none to trust.
            s.fingerprints.unmark_work_indexed(work_id).await?;
            s.fingerprints.put_fingerprints_many(&fingerprints).await?;
            self.record_section_sampling().await?;
            self.inner.index.add_batch(Namespace::Sections, &keys).await?;
        }
        if let Some(w) = &work {
            // The mark says the index holds these sections: an index restored to before
            // this write must show it (`check_index`).
            if !fingerprints.is_empty() {
                self.record_index_generation().await?;
            }
            s.fingerprints.mark_work_indexed(work_id, w.updated_at.0, self.inner.fp.params_tag()).await?;
        }
        // New or changed sections, whoever fingerprinted them: the catalogue-common text
        // is checked against the index's write token on its next use.
        if !current.is_empty() {
            self.inner.catalogue_version.fetch_add(1, Ordering::Release);
        }
        self.inner.indexed.lock().unwrap_or_else(|p| p.into_inner()).extend(current);
        if updated_at != i64::MIN {
            self.inner.indexed_works.lock().unwrap_or_else(|p| p.into_inner()).insert(work_id, updated_at);
        }
        tracing::debug!(target: LOG_TARGET, work_id, indexed = report.indexed, unchanged = report.unchanged, "work indexed");
        Ok(report)
    }

    /// The version a work is marked indexed at with this process's parameter tag, as the
    /// store listed the marks at the first use in the current epoch (a task): one read of
    /// every mark per task, not one per work. A mark written since is seen in the next
    /// epoch (meanwhile the work is checked as before).
    async fn marked_indexed(&self, work_id: i64) -> Result<Option<i64>> {
        let epoch = self.inner.epoch.load(Ordering::Relaxed);
        let read = async { Ok(self.inner.stores.fingerprints.indexed_works(self.inner.fp.params_tag()).await?) };
        Ok(self.inner.indexed_marks.of(epoch, read).await?.get(&work_id).copied())
    }

    /// Fingerprint a page (its site's boilerplate blanked) and add it to the page namespace
    /// of the index (for the reverse direction). Keys the page already has are not written
    /// again; a page that is nothing but boilerplate has nothing to index.
    pub async fn index_page(&self, page_id: i64) -> Result<IndexReport> {
        let prepared = self.load_and_prepare(page_id).await?;
        self.tag_pages(prepared.tag_entry().as_slice()).await?;
        let Some(analysis) = prepared.view() else { return Ok(IndexReport { documents: 1, indexed: 0, unchanged: 1 }) };
        self.add_page_keys(page_id, analysis).await?;
        Ok(IndexReport { documents: 1, indexed: 1, unchanged: 0 })
    }

    /// The page-namespace keys of a batch of stored pages, analysed as a matching task
    /// analyses them (the site's boilerplate blanked; from the stored text of a tagged
    /// page, [`Matcher::load_pages`]) `concurrency` at a time, in the order of `page_ids`:
    /// what `zhiwen reindex` rebuilds the page namespace from. A page that is nothing but
    /// boilerplate has no keys; one missing or without usable text has its own error. Pages
    /// found to have their canonical text stored take their tag, as in a task.
    /// `Err` only when the batch read of the pages, or the writing of the tags, failed.
    pub async fn page_namespace_keys(
        &self,
        page_ids: &[i64],
    ) -> Result<Vec<(i64, Result<Vec<zhiwen_core::IndexKey>>)>> {
        let mut loaded = self.load_pages(page_ids).await?;
        let concurrency = self.inner.config.concurrency.max(1);
        let me = self.clone();
        // Each page's keys, and its tag entry when it takes its tag.
        type Analysed = Result<(Vec<zhiwen_core::IndexKey>, Option<(i64, u64)>)>;
        let analysed: Vec<(i64, Analysed)> =
            futures::stream::iter(page_ids.iter().map(|&id| (id, loaded.remove(&id))).map(move |(id, page)| {
                let m = me.clone();
                async move {
                    let keys = match page {
                        Some(page) => {
                            m.prepare_loaded(page).await.map(|p| (p.page_index_keys(&m.inner.config), p.tag_entry()))
                        }
                        None => Err(MatcherError::NotFound { what: "page", id }),
                    };
                    (id, keys)
                }
            }))
            .buffered(concurrency)
            .collect()
            .await;
        let retag: Vec<(i64, u64)> = analysed.iter().filter_map(|(_, r)| r.as_ref().ok()?.1).collect();
        self.tag_pages(&retag).await?;
        Ok(analysed.into_iter().map(|(id, r)| (id, r.map(|(keys, _)| keys))).collect())
    }

    /// The keys a task looks a page up with in the section namespace (the site's
    /// boilerplate blanked); `None` when nothing but boilerplate is left. For diagnostics
    /// (`zhiwen eval` reports which fingerprint families nominated each section).
    pub async fn page_lookup_keys(&self, page_id: i64) -> Result<Option<Vec<zhiwen_core::IndexKey>>> {
        let prepared = self.load_and_prepare(page_id).await?;
        Ok(prepared.full(&self.inner.fp).map(|full| full.fingerprints.index_keys()))
    }

    pub(super) async fn add_page_keys(&self, page_id: i64, analysis: &Analysis) -> Result<()> {
        let keys = self.inner.config.page_index_keys(&analysis.fingerprints);
        self.inner.index.add(Namespace::Pages, page_id as u64, &keys).await?;
        self.record_index_generation().await
    }
}

impl Inner {
    /// The fingerprints to store of a section being indexed (without the word shingles,
    /// [`zhiwen_core::Fingerprints::without_word_shingles`]), its analysis cached; `None`
    /// when `stored` is current: made with this process's parameters from the same
    /// canonical text.
    fn fresh_fingerprints(
        &self,
        stored: Option<zhiwen_store::FingerprintRecord>,
        section: &zhiwen_store::Section,
        updated_at: i64,
    ) -> Result<Option<zhiwen_core::Fingerprints>> {
        if let Some(rec) = stored.filter(|rec| rec.params_tag == self.fp.params_tag()) {
            let canonical =
                canon::canonicalize_decoded(section.text.clone(), "UTF-8", InputFormat::Text, &self.fp.params().canon);
            if canonical.is_ok_and(|c| hash_bytes(c.text().as_bytes()) == rec.fingerprints.content_hash) {
                return Ok(None);
            }
        }
        self.section_entry_from_text(section.id, section.work_id, &section.text, updated_at, true)
            .map(|e| Some(e.analysis().fingerprints.without_word_shingles()))
    }
}
