//! Looking up and verifying: a page against the sections (and a work against the
//! stored pages), each candidate compared with every measure and given its kind.

use super::*;

/// Pages of a site's boilerplate sample read per store call (their bodies are held
/// until their character streams are made).
const SITE_SAMPLE_PAGES_PER_READ: usize = 16;

impl Matcher {
    /// Match one page against the protected sections: look up candidates, verify each
    /// with every measure, decide, and record the copies. A page that matches nothing
    /// leaves no match record.
    pub async fn match_page(&self, page_id: i64) -> Result<PageOutcome> {
        let prepared = self.load_and_prepare(page_id).await?;
        if self.inner.config.index_pages {
            if let Some(analysis) = prepared.view() {
                self.add_page_keys(page_id, analysis).await?;
            }
        }
        self.tag_pages(prepared.tag_entry().as_slice()).await?;
        self.match_prepared(prepared).await
    }

    /// Look up, verify and record a prepared page (already in the page namespace).
    pub(super) async fn match_prepared(&self, prepared: PreparedPage) -> Result<PageOutcome> {
        let (mut outcome, copies) = self.verify_page(prepared).await?;
        outcome.matches = self.record_all(copies).await?;
        Ok(outcome)
    }

    /// Look up and verify a prepared page: its outcome (no matches yet) and the copies
    /// found, to be recorded by [`Matcher::record_all`] (a batch records its pages' copies
    /// in one store call).
    pub(super) async fn verify_page(&self, prepared: PreparedPage) -> Result<(PageOutcome, Vec<FoundCopy>)> {
        let page_id = prepared.page_id;
        let (prepared, outcome, ids) = self.look_up(prepared).await?;
        // A batch of one: the same reads and verification as a task's batches.
        match self.verify_batch(vec![(page_id, Ok((prepared, outcome, batch::Plan::Verify(ids))))]).await?.pop() {
            Some((_, verified)) => verified,
            None => Err(MatcherError::Internal(format!("page {page_id}: its verification returned nothing"))),
        }
    }

    /// Look up a prepared page in the section index: the page (completed when it has
    /// candidates worth verifying), its outcome so far and the sections worth verifying,
    /// best first.
    ///
    /// A candidate is worth verifying only when it shares winnowed keys
    /// ([`crate::candidates`]), which the page's streams give without the word stage. So
    /// the winnowed keys are looked up first, sampled as the whole query will be
    /// ([`Fingerprinter::coarse_key_counts`]). When no candidate is worth verifying the
    /// page is done and never segmented into words: its other keys could add hits of other
    /// families only. Otherwise the page is completed, its other keys are looked up too and
    /// the two lookups merged: the candidates, hits and order one lookup of all the keys
    /// gives (the index's conformance suite checks the merge).
    ///
    /// When the sections hold only sampled winnowed keys (`section_index_sampling` above
    /// 1), the page's winnowed keys are the whole query, sampled at least as coarsely ([`Matcher::section_lookup_modulus`]), and a page is segmented into words
    /// only when it has candidates to verify.
    pub(super) async fn look_up(&self, prepared: PreparedPage) -> Result<(PreparedPage, PageOutcome, Vec<i64>)> {
        let page_id = prepared.page_id;
        let mut outcome = PageOutcome { page_id, boilerplate_chars: prepared.boilerplate_chars, ..Default::default() };
        let Some(view) = prepared.view() else { return Ok((prepared, outcome, Vec::new())) };
        let (index, limit) = (&self.inner.index, self.inner.config.candidate_limit);
        let winnowed = view.fingerprints.index_keys_of(zhiwen_core::IndexFamily::is_winnowed);
        let sections_modulus = self.section_lookup_modulus().await?;
        let (with_words, without_words) = match sections_modulus {
            1 => self.inner.fp.coarse_key_counts(view),
            _ => (0, 0),
        };
        let modulus = index.query_sample_modulus(with_words, winnowed.len()).max(sections_modulus);
        // The page-namespace keys are these winnowed keys sampled (the coarse ones are
        // not indexed there): made now, not again from the fingerprints.
        let config = &self.inner.config;
        let page_keys = config
            .index_pages
            .then(|| zhiwen_index::sample_winnowed_keys_only(winnowed.iter().copied(), config.page_sampling_modulus()));
        let (mut prepared, found) = if sections_modulus > 1 {
            let sampled = zhiwen_index::sample_winnowed_keys(winnowed, modulus);
            let found = index.lookup_sampled(Namespace::Sections, &sampled, modulus).await?;
            // Completed below, when a candidate is confirmed.
            (prepared, found.merged(LookupResult::default(), limit))
        } else if modulus != index.query_sample_modulus(without_words, winnowed.len()) {
            // Whether the page has content words decides its sampling (a rare page at the
            // edge of the key budget): the word stage first, then one lookup as before.
            let prepared = self.completed(prepared).await?;
            let keys = prepared.full(&self.inner.fp).map(|full| full.fingerprints.index_keys()).unwrap_or_default();
            let found = index.lookup(Namespace::Sections, &keys, limit).await?;
            (prepared, found)
        } else {
            let sampled = zhiwen_index::sample_winnowed_keys(winnowed, modulus);
            let first = index.lookup_sampled(Namespace::Sections, &sampled, modulus).await?;
            if self.good(&first).is_empty() {
                (prepared, first.merged(LookupResult::default(), limit))
            } else {
                let prepared = self.completed(prepared).await?;
                let coarse: Vec<IndexKey> = prepared
                    .full(&self.inner.fp)
                    .map(|full| full.fingerprints.index_keys_of(|family| !family.is_winnowed()))
                    .unwrap_or_default();
                let second = index.lookup_sampled(Namespace::Sections, &coarse, modulus).await?;
                (prepared, first.merged(second, limit))
            }
        };
        if let Some(keys) = page_keys {
            prepared.keep_page_keys(keys, &self.inner.config);
        }
        outcome.candidates = found.candidates.len();
        (outcome.keys_looked_up, outcome.keys_found) = (found.keys_queried, found.keys_found);
        let mut ids: Vec<i64> = self.good(&found).iter().map(|c| c.doc as i64).collect();
        if sections_modulus > 1 && !ids.is_empty() {
            let page = prepared.view().map(|v| v.fingerprints.winnowed_digest()).unwrap_or_default();
            ids = self.confirm_sampled(&page, ids).await?;
            if !ids.is_empty() {
                prepared = self.completed(prepared).await?;
            }
        }
        Ok((prepared, outcome, ids))
    }

    /// Of the candidates of a lookup in a sampled section namespace (`ids`, best first),
    /// those sharing at least `min_winnow_hits` winnowed keys with the page (`page`: its
    /// [`Fingerprints::winnowed_digest`](zhiwen_core::Fingerprints::winnowed_digest)), in
    /// the same order: the minimum a candidate of an index holding every key is held to.
    ///
    /// With 1 in m keys indexed, one shared sampled key makes a candidate, and most such
    /// candidates share nothing else with the page (an 8-character run shared by chance):
    /// each would cost a read of its text and an analysis. The keys of a section come from
    /// its analysis when the section cache holds one checked in this epoch, else from the
    /// store's compact copy ([`zhiwen_store::WinnowedKeys`], one call for all of them,
    /// 4 bytes a key). A candidate without stored keys of the current parameters (a store
    /// written before they existed, until `zhiwen reindex`) is kept: the verification
    /// reads its text as before.
    async fn confirm_sampled(&self, page: &[u32], ids: Vec<i64>) -> Result<Vec<i64>> {
        let epoch = self.inner.epoch.load(Ordering::Relaxed);
        let shared = |keys: &[u32]| zhiwen_core::shingle::intersection_size(page, keys);
        let mut counts: HashMap<i64, usize> = HashMap::with_capacity(ids.len());
        let mut unread = Vec::new();
        for &id in &ids {
            let hit = self.inner.sections.lock().unwrap_or_else(|p| p.into_inner()).get(&id);
            match hit.filter(|e| e.checked_in(epoch)) {
                Some(entry) => {
                    counts.insert(id, shared(entry.winnowed_digest()));
                }
                None => unread.push(Subject::section(id)),
            }
        }
        if !unread.is_empty() {
            let tag = self.inner.fp.params_tag();
            for stored in self.inner.stores.fingerprints.get_winnowed_many(&unread).await? {
                if stored.params_tag == tag {
                    counts.insert(stored.subject.id, shared(&stored.keys));
                }
            }
        }
        let min = self.inner.config.min_winnow_hits as usize;
        Ok(ids.into_iter().filter(|id| counts.get(id).is_none_or(|&n| n >= min)).collect())
    }

    /// The analyses of candidate sections, by id: cached ones as they are, the others made
    /// now (and cached), in `concurrency` jobs on the CPU pool. A section that
    /// cannot be fingerprinted is left out (with a warning).
    pub(super) async fn ready_sections(
        &self,
        sources: Vec<(i64, SectionSource)>,
    ) -> Result<HashMap<i64, Arc<SectionEntry>>> {
        let mut out = HashMap::with_capacity(sources.len());
        let mut texts = Vec::new();
        for (id, source) in sources {
            match source {
                SectionSource::Ready(entry) => {
                    out.insert(id, entry);
                }
                text => texts.push((id, text)),
            }
        }
        if texts.is_empty() {
            return Ok(out);
        }
        let per_job = texts.len().div_ceil(self.inner.config.concurrency.max(1));
        let mut jobs = Vec::new();
        let mut texts = texts.into_iter().peekable();
        while texts.peek().is_some() {
            let chunk: Vec<(i64, SectionSource)> = texts.by_ref().take(per_job).collect();
            jobs.push(self.on_cpu(move |inner| {
                chunk.into_iter().filter_map(|(id, s)| inner.ready(id, s).map(|e| (id, e))).collect::<Vec<_>>()
            }));
        }
        for found in futures::future::join_all(jobs).await {
            out.extend(found?);
        }
        Ok(out)
    }

    /// Verify a looked-up page against its candidate sections (best first), on the
    /// CPU pool: its outcome and the copies found.
    /// The result is remembered for the page's text ([`Matcher::remember_text`]).
    pub(super) async fn verify_against(
        &self,
        prepared: PreparedPage,
        mut outcome: PageOutcome,
        sections: Vec<(i64, Arc<SectionEntry>)>,
    ) -> Result<(PageOutcome, Vec<FoundCopy>)> {
        if sections.is_empty() {
            self.remember_text(&prepared, TextResult::of(&prepared, &outcome, &[]));
            return Ok((outcome, Vec::new()));
        }
        let catalogue = self.catalogue().await?;
        outcome.verified = sections.len();
        let cat = catalogue.clone();
        let (found, prepared) = self
            .on_cpu(move |inner| {
                let found: Vec<_> = sections
                    .into_iter()
                    .filter_map(|(section_id, entry)| {
                        inner.verify(&entry, &prepared, &cat).map(|(c, kind)| (section_id, entry, c, kind))
                    })
                    .collect();
                (found, prepared)
            })
            .await?;
        let mut weighed = Vec::with_capacity(found.len());
        for (section_id, entry, mut comparison, kind) in found {
            if let Some(kind) = self.weigh_seen(&entry, &prepared, &mut comparison, kind, &catalogue).await? {
                weighed.push((section_id, entry, comparison, kind));
            }
        }
        let copies: Vec<FoundCopy> = self
            .explain_by_stronger(&prepared, weighed, &catalogue)
            .into_iter()
            .map(|(section_id, entry, comparison, kind)| {
                FoundCopy::new(section_id, entry.work_id, &prepared, comparison, kind)
            })
            .collect();
        if let Some(key) = prepared.text_key {
            let result = TextResult::of(&prepared, &outcome, &copies);
            self.inner.texts.lock().unwrap_or_else(|p| p.into_inner()).insert(key, Arc::new(result));
        }
        Ok((outcome, copies))
    }

    /// Which of `section_ids` the page `page` still copies, as it is now (a page fetched
    /// again, not necessarily stored): the same preparation (its site's boilerplate
    /// blanked) and the same verification as matching, against those sections only (no
    /// index lookup), recording nothing. Sections no longer stored are left out; a page
    /// with nothing but boilerplate copies none.
    pub async fn sections_still_copied(&self, page: Page, section_ids: &[i64]) -> Result<Vec<i64>> {
        let prepared = self.prepare_loaded(page).await?;
        if prepared.view().is_none() || section_ids.is_empty() {
            return Ok(Vec::new());
        }
        let sources = self.candidate_sections(section_ids).await?;
        let sections = self.ready_sections(sources).await?;
        let catalogue = self.catalogue().await?;
        let ids = section_ids.to_vec();
        let cat = catalogue.clone();
        let (found, prepared) = self
            .on_cpu(move |inner| {
                let found: Vec<_> = ids
                    .into_iter()
                    .filter_map(|id| {
                        let entry = sections.get(&id)?;
                        inner.verify(entry, &prepared, &cat).map(|(c, kind)| (id, entry.clone(), c, kind))
                    })
                    .collect();
                (found, prepared)
            })
            .await?;
        let mut weighed = Vec::with_capacity(found.len());
        for (id, entry, mut comparison, kind) in found {
            if let Some(kind) = self.weigh_seen(&entry, &prepared, &mut comparison, kind, &catalogue).await? {
                weighed.push((id, entry, comparison, kind));
            }
        }
        Ok(self.explain_by_stronger(&prepared, weighed, &catalogue).into_iter().map(|(id, ..)| id).collect())
    }

    /// Match a work (added or changed) against the pages already stored: index its
    /// sections, look each up in the page namespace, verify and record.
    pub async fn match_work(&self, work_id: i64) -> Result<WorkOutcome> {
        self.index_work(work_id).await?;
        let s = &self.inner.stores;
        let sections = s.works.sections_of(work_id).await?;
        let mut outcome = WorkOutcome { work_id, sections: sections.len(), ..Default::default() };
        // Pages are prepared once even when several sections point at them.
        let mut pages: HashMap<i64, Option<Arc<PreparedPage>>> = HashMap::new();
        // The copies found, by page: a page's copies of two sections of the work are
        // weighed against each other ([`Matcher::explain_by_stronger`]) before recording.
        let mut found_on: HashMap<i64, Vec<WeighedCopy>> = HashMap::new();
        // Pages read from their body whose stored text is the canonical text.
        let mut retag: Vec<(i64, u64)> = Vec::new();
        for section in sections {
            let Some(entry) = self.section(section.id).await? else { continue };
            let e = entry.clone();
            let keys =
                self.on_cpu(move |inner| inner.config.page_index_keys(&inner.full_section(&e).fingerprints)).await?;
            let mut found = self.inner.index.lookup(Namespace::Pages, &keys, self.inner.config.candidate_limit).await?;
            // Pages are indexed sampled 1 in m, and the lookup may sample further by the
            // same rule (powers of two, by value): hits are about 1/max of shared keys.
            found.sample_modulus = found.sample_modulus.max(self.inner.config.page_sampling_modulus());
            let good = self.good(&found);
            // The section's candidates not prepared yet, read in one call as a batch reads
            // its pages (the stored text of a tagged page).
            let mut fresh: Vec<i64> = good.iter().map(|c| c.doc as i64).filter(|id| !pages.contains_key(id)).collect();
            fresh.sort_unstable();
            fresh.dedup();
            let mut loaded = if fresh.is_empty() { HashMap::new() } else { self.load_pages(&fresh).await? };
            let found: Vec<Page> = fresh.iter().filter_map(|id| loaded.remove(id)).collect();
            let found_ids: Vec<i64> = found.iter().map(|p| p.id).collect();
            // Prepared as a batch prepares its pages: one job on the CPU pool.
            for (page_id, prepared) in found_ids.into_iter().zip(self.prepare_loaded_pages(found).await) {
                let prepared = match prepared {
                    Ok(p) => {
                        retag.extend(p.tag_entry());
                        Some(Arc::new(p))
                    }
                    // The page's own text: skip it. Anything else (the store) fails the work.
                    Err(e @ MatcherError::Text { .. }) => {
                        tracing::warn!(target: LOG_TARGET, page_id, error = %e, "page skipped");
                        None
                    }
                    Err(e) => return Err(e),
                };
                pages.insert(page_id, prepared);
            }
            // Candidates no longer stored are passed over.
            for id in fresh {
                pages.entry(id).or_insert(None);
            }
            for c in good {
                let page_id = c.doc as i64;
                let Some(Some(prepared)) = pages.get(&page_id).cloned() else { continue };
                outcome.verified += 1;
                let (e, p) = (entry.clone(), prepared.clone());
                let catalogue = self.catalogue().await?;
                let cat = catalogue.clone();
                let verdict = self.on_cpu(move |inner| inner.verify(&e, &p, &cat)).await?;
                if let Some((mut comparison, kind)) = verdict {
                    if let Some(kind) = self.weigh_seen(&entry, &prepared, &mut comparison, kind, &catalogue).await? {
                        found_on.entry(page_id).or_default().push((section.id, entry.clone(), comparison, kind));
                    }
                }
            }
        }
        let mut copies = Vec::new();
        if !found_on.is_empty() {
            let catalogue = self.catalogue().await?;
            let mut found_on: Vec<(i64, Vec<WeighedCopy>)> = found_on.into_iter().collect();
            found_on.sort_unstable_by_key(|(page_id, _)| *page_id);
            for (page_id, found) in found_on {
                let Some(Some(prepared)) = pages.get(&page_id) else { continue };
                for (section_id, _, comparison, kind) in self.explain_by_stronger(prepared, found, &catalogue) {
                    copies.push(FoundCopy::new(section_id, work_id, prepared, comparison, kind));
                }
            }
        }
        self.tag_pages(&retag).await?;
        // A page whose copies cannot be quoted is skipped, as a page that cannot be
        // prepared is (each is logged): the work's other pages are recorded.
        outcome.matches = self.record_copies(copies).await?.0;
        Ok(outcome)
    }

    /// The boilerplate profile of a site (measured on first use, then cached).
    pub async fn site_profile(&self, site: &str) -> Result<Arc<SiteProfile>> {
        let cfg = &self.inner.config.boilerplate;
        if !cfg.enabled {
            return Ok(Arc::new(SiteProfile::default()));
        }
        let ttl = Duration::from_secs(cfg.profile_ttl_seconds);
        let cached = |inner: &Inner| {
            let sites = inner.sites.lock().unwrap_or_else(|p| p.into_inner());
            sites.get(site).filter(|p| p.built.is_some_and(|t| t.elapsed() < ttl)).cloned()
        };
        if let Some(p) = cached(&self.inner) {
            return Ok(p);
        }
        let _building = self.inner.site_build.lock().await;
        if let Some(p) = cached(&self.inner) {
            return Ok(p);
        }
        let s = &self.inner.stores;
        let refs = s.pages.list_pages(Some(site), 0, cfg.sample_pages.max(1)).await?;
        // The sample is read a few pages per store call (not one call a page), each
        // chunk reduced to its character streams in one job on the CPU pool. Only the
        // text ingest extracted is read (the character stream is of the same canonical
        // text): decoding and extracting the bodies again cost as much as measuring.
        //
        // A text stored under several URLs of the site counts once: a template is what
        // different pages share. Counted page by page, one chapter copied onto half of a
        // site's URLs was its "boilerplate", and blanked out of every copy.
        let mut streams: Vec<Vec<u32>> = Vec::with_capacity(refs.len());
        let mut texts_seen: std::collections::HashSet<u64> = std::collections::HashSet::with_capacity(refs.len());
        if refs.len() >= cfg.min_pages as usize {
            for chunk in refs.chunks(SITE_SAMPLE_PAGES_PER_READ) {
                let ids: Vec<i64> = chunk.iter().map(|r| r.id).collect();
                let mut pages = s.pages.get_pages(&ids, PageParts::Text).await?;
                pages.retain(|page| texts_seen.insert(page.content_hash));
                let units = self
                    .on_cpu(move |inner| pages.iter().filter_map(|page| inner.char_units(page)).collect::<Vec<_>>())
                    .await?;
                streams.extend(units);
            }
        }
        let site_owned = site.to_owned();
        let mut profile = self
            .on_cpu(move |inner| {
                SiteProfile::measure(&site_owned, &streams, inner.fp.params().winnow.chars_k, &inner.config.boilerplate)
            })
            .await?;
        profile.built = Some(Instant::now());
        tracing::debug!(target: LOG_TARGET,
            site,
            pages = profile.pages_sampled,
            kgrams = profile.kgrams.len(),
            "site boilerplate measured"
        );
        let profile = Arc::new(profile);
        self.inner.sites.lock().unwrap_or_else(|p| p.into_inner()).insert(site.to_owned(), profile.clone());
        Ok(profile)
    }

    /// The candidates worth verifying, most shared winnowed keys first.
    pub(super) fn good<'a>(&self, found: &'a LookupResult) -> Vec<&'a Candidate> {
        crate::candidates::worth_verifying(found, &self.inner.config)
    }
}

impl Inner {
    /// Compare section A with page B; the kind when it is a copy. Page-side quotes come
    /// from the page's original (a page with its boilerplate blanked keeps it, and its
    /// map to it: [`zhiwen_core::canon::CanonicalText::into_blanked`]).
    pub(super) fn verify(
        &self,
        section: &SectionEntry,
        page: &PreparedPage,
        catalogue: &CatalogueProfile,
    ) -> Option<(Comparison, MatchKind)> {
        let t = &self.config.thresholds;
        let (view, passages) = page.view_indexed()?;
        if !crate::candidates::may_be_copy(&section.analysis(), view, passages, self.fp.params(), t) {
            return None;
        }
        let full = self.full_section(section);
        let page_full = page.full(&self.fp)?;
        let mut c = compare_with(&full, page_full, passages, self.fp.params(), t);
        catalogue.discount(&mut c, &full, page_full, self.fp.params().winnow.chars_k, t);
        let kind = MatchKind::of(&c, t)?;
        Some((c, kind))
    }
}
