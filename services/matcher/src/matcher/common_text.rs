//! The catalogue-common text of the registered sections ([`CatalogueProfile`]), read
//! from the section index on first use and again whenever the sections changed, in this
//! process or another: the index's write token of the sections
//! ([`zhiwen_index::CandidateIndex::write_token`]) is read once per task and after this
//! process indexed or forgot sections, and a token other than the profile's means a new
//! measurement.
//!
//! The index holds each section's winnowed character keys with the sections holding
//! them, so the profile is its keys of that family held by `min_sections` sections or
//! more ([`zhiwen_index::CandidateIndex::common_keys`]): a matching process keeps only
//! those, not a count of every key of the catalogue (which at 100k sections was a
//! transient gigabyte, read from every section's stored fingerprints). With
//! `section_index_sampling` above 1 the index holds a sample of the keys, and the profile
//! is that sample, read as a sample ([`CatalogueProfile::sampled`]).

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::Arc;

use zhiwen_core::canon::InputFormat;
use zhiwen_core::compare::Comparison;
use zhiwen_index::{DocId, IndexFamily, Namespace};
use zhiwen_store::PageParts;

use super::{Matcher, PreparedPage, SectionEntry, LOG_TARGET};
use crate::catalogue::{CatalogueProfile, SetAside};
use crate::kind::MatchKind;
use crate::{seen, stronger, Result};

impl Matcher {
    /// The catalogue-common keys of the current sections: measured from the section
    /// index when the index's write token of the sections differs from the one the cached
    /// profile was measured at. The token is read once per epoch (a task) and again after
    /// this process changed sections (`catalogue_version`): one small read, where a
    /// measurement reads every posting of the sections.
    pub async fn catalogue(&self) -> Result<Arc<CatalogueProfile>> {
        let inner = &self.inner;
        let now = || (inner.epoch.load(Ordering::Relaxed), inner.catalogue_version.load(Ordering::Acquire));
        let current = |at: (u64, u64)| {
            if *inner.catalogue_checked.lock().unwrap_or_else(|p| p.into_inner()) != at {
                return None;
            }
            inner.catalogue.lock().unwrap_or_else(|p| p.into_inner()).clone()
        };
        if let Some(p) = current(now()) {
            return Ok(p);
        }
        let _building = inner.catalogue_build.lock().await;
        let at = now();
        if let Some(p) = current(at) {
            return Ok(p);
        }
        let config = &inner.config.catalogue;
        // Read before the measurement: a write during it changes the token again, so
        // the next check measures anew.
        let token = if config.enabled { inner.index.write_token(Namespace::Sections).await? } else { 0 };
        let cached = inner.catalogue.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let profile = match cached.filter(|p| p.token == token) {
            Some(p) => p,
            None if !config.enabled => Arc::new(CatalogueProfile::default()),
            None => {
                // Every task indexes the works before it matches, so the index holds
                // each section's keys made with the current parameters.
                let kgrams = inner
                    .index
                    .common_keys(Namespace::Sections, IndexFamily::WinnowChars, config.min_sections.max(2))
                    .await?;
                let sampling = self.section_lookup_modulus().await?;
                let profile = CatalogueProfile { token, ..CatalogueProfile::sampled(kgrams, sampling) };
                tracing::debug!(kgrams = profile.kgrams.len(), token, sampling, "catalogue-common text measured");
                Arc::new(profile)
            }
        };
        *inner.catalogue.lock().unwrap_or_else(|p| p.into_inner()) = Some(profile.clone());
        *inner.catalogue_checked.lock().unwrap_or_else(|p| p.into_inner()) = at;
        Ok(profile)
    }
}

impl Matcher {
    /// Weigh a copy's counted passages by the stored pages that hold them too (text seen
    /// elsewhere, [`crate::seen`]) and decide it again: its kind when it is still a copy.
    /// Only a copy that neither holds most of the section nor is made almost entirely of
    /// it is weighed ([`seen::weighable`]; three or more page-namespace lookups); any other
    /// is returned as it is.
    pub(super) async fn weigh_seen(
        &self,
        section: &SectionEntry,
        page: &PreparedPage,
        c: &mut Comparison,
        kind: MatchKind,
        catalogue: &CatalogueProfile,
    ) -> Result<Option<MatchKind>> {
        let inner = &self.inner;
        let config = &inner.config;
        if !config.seen_text.enabled || !config.index_pages {
            return Ok(Some(kind));
        }
        let (a, Some(b)) = (&*inner.full_section(section), page.full(&inner.fp)) else { return Ok(Some(kind)) };
        let t = &config.thresholds;
        if !seen::weighable(c, t) {
            return Ok(Some(kind));
        }
        let w = &inner.fp.params().winnow;
        let modulus = config.page_sampling_modulus();
        let passages = seen::passage_keys(c, a, false, w.chars_k, w.initials_k, modulus);
        if passages.is_empty() {
            return Ok(Some(kind));
        }
        let inside = |passages: &[seen::PassageKeys]| {
            passages.iter().flat_map(|p| &p.keys).collect::<std::collections::HashSet<_>>().len()
        };
        let index = &inner.index;
        let section_keys = config.page_index_keys(&a.fingerprints);
        let of_section = index.lookup_sampled(Namespace::Pages, &section_keys, modulus).await?;
        let of_page = index.lookup_sampled(Namespace::Pages, &config.page_index_keys(&b.fingerprints), modulus).await?;
        let section_shared = seen::Shared { whole: &of_section, inside: inside(&passages) };
        let page_passages = seen::passage_keys(c, b, true, w.chars_k, w.initials_k, modulus);
        let page_shared = seen::Shared { whole: &of_page, inside: inside(&page_passages) };
        let page_id = page.page_id as u64;
        let need = config.seen_text.min_documents.max(2);
        let section_keys = section_keys.len();
        // Each possible witness read: its content characters' count, and its canonical
        // content characters (for the passage's figures in their context).
        let mut read: HashMap<DocId, (usize, String)> = HashMap::new();
        let mut seen_at = Vec::new();
        for p in &passages {
            let found = index.lookup_sampled(Namespace::Pages, &p.keys, modulus).await?;
            let figures = match p.figure_keys.is_empty() {
                true => None,
                false => Some(index.lookup_sampled(Namespace::Pages, &p.figure_keys, modulus).await?),
            };
            let pages = match seen::Witnesses::of(p, &found, figures.as_ref(), section_shared, page_shared, page_id) {
                seen::Witnesses::Many => {
                    seen_at.push((p.evidence, u32::MAX));
                    continue;
                }
                seen::Witnesses::Pages(pages) => pages,
            };
            // The section counts as one document: too few pages to reach the minimum
            // need not be read.
            let witnesses = if (pages.len() as u32).saturating_add(1) < need {
                0
            } else {
                let unread: Vec<i64> =
                    pages.iter().filter(|(d, _)| !read.contains_key(d)).map(|&(d, _)| d as i64).collect();
                if !unread.is_empty() {
                    for page in inner.stores.pages.get_pages(&unread, PageParts::Text).await? {
                        let size = page.text.chars().filter(|c| c.is_alphanumeric()).count();
                        let canon = &inner.fp.params().canon;
                        let content = zhiwen_core::canon::canonicalize_str(&page.text, InputFormat::Text, canon)
                            .map(|c| seen::content_of(c.text()))
                            .unwrap_or_default();
                        read.insert(page.id as u64, (size, content));
                    }
                }
                let witness = |&(d, shared): &(DocId, u32)| {
                    read.get(&d).is_some_and(|(n, content)| {
                        seen::mostly_other_text(shared, a.chars.units.len(), section_keys, *n)
                            && seen::holds_figures(content, p)
                    })
                };
                pages.iter().filter(|p| witness(p)).count() as u32
            };
            let documents = witnesses.saturating_add(1);
            tracing::trace!(target: LOG_TARGET,
                page_id,
                section_id = section.id,
                evidence = p.evidence,
                keys = p.keys.len(),
                holders = found.candidates.len(),
                pages = pages.len(),
                documents,
                "passage weighed"
            );
            if documents >= need {
                seen_at.push((p.evidence, documents));
            }
        }
        if seen_at.is_empty() {
            return Ok(Some(kind));
        }
        catalogue.discount_passages(c, a, b, w.chars_k, t, SetAside::SeenElsewhere(&seen_at));
        let kind = MatchKind::of(c, t);
        tracing::debug!(target: LOG_TARGET,
            page_id,
            section_id = section.id,
            passages = seen_at.len(),
            still_copy = kind.is_some(),
            "passages seen elsewhere"
        );
        Ok(kind)
    }

    /// Set aside, in each copy found for one page, the passages the page's fuller copy of
    /// another section of the same work holds ([`stronger`]), and decide those copies
    /// again: the copies that are still copies. Which passages are set aside is decided
    /// on the copies as found, so the order of `found` does not matter.
    pub(super) fn explain_by_stronger(
        &self,
        page: &PreparedPage,
        found: Vec<WeighedCopy>,
        catalogue: &CatalogueProfile,
    ) -> Vec<WeighedCopy> {
        let inner = &self.inner;
        let t = &inner.config.thresholds;
        let Some(b) = page.full(&inner.fp) else { return found };
        let aside: Vec<Vec<usize>> = found
            .iter()
            .map(|(id, entry, c, _)| {
                let others: Vec<&Comparison> = found
                    .iter()
                    .filter(|(other, e, _, _)| other != id && e.work_id == entry.work_id)
                    .map(|(_, _, c, _)| c)
                    .collect();
                stronger::within_stronger(c, &others, t)
            })
            .collect();
        found
            .into_iter()
            .zip(aside)
            .filter_map(|((section_id, entry, mut c, kind), aside)| {
                if aside.is_empty() {
                    return Some((section_id, entry, c, kind));
                }
                let a = &*inner.full_section(&entry);
                let k = inner.fp.params().winnow.chars_k;
                catalogue.discount_passages(&mut c, a, b, k, t, SetAside::WithinStrongerCopy(&aside));
                let kind = MatchKind::of(&c, t);
                tracing::debug!(target: LOG_TARGET,
                    page_id = page.page_id,
                    section_id,
                    passages = aside.len(),
                    still_copy = kind.is_some(),
                    "passages inside a fuller copy of another section"
                );
                kind.map(|kind| (section_id, entry, c, kind))
            })
            .collect()
    }
}

/// A copy found for a page, weighed: the section's id and entry, the comparison and its kind.
pub(super) type WeighedCopy = (i64, Arc<SectionEntry>, Comparison, MatchKind);
