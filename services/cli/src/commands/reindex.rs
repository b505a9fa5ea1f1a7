//! `zhiwen reindex`: the index is derived data; rebuild it from the store. Sections come
//! from their fingerprint records (records made with other parameters than the current
//! ones are skipped and counted: they must be re-fingerprinted first, never mixed into the
//! index). Pages have no stored fingerprints: each is analysed again from its stored
//! text, as a matching task analyses it.
//!
//! The store records the rebuilt index's identity only when every namespace was rebuilt
//! (an interrupted rebuild leaves an index that matching tasks refuse); `--only` rebuilds
//! one namespace of an index that is otherwise intact, and is refused on any other.

use std::sync::atomic::{AtomicU64, Ordering};

use anyhow::{Context, Result};
use futures::StreamExt;
use zhiwen_core::Fingerprints;
use zhiwen_index::{DocId, IndexKey, Namespace};
use zhiwen_matcher::{Matcher, MatcherError};
use zhiwen_store::{FingerprintStore, Subject, SubjectKind};

use crate::cli::{NamespaceArg, ReindexArgs};
use crate::output::outln;
use crate::settings::{DataArgs, Settings};

/// Records read per store request.
const PAGE: u32 = 500;
/// Pages read and analysed per batch.
const PAGE_BATCH: u32 = 256;

pub async fn run(data: &DataArgs, args: &ReindexArgs) -> Result<()> {
    let settings = Settings::resolve(data)?;
    let matcher = settings.open_matcher().await?;
    let index = matcher.index().clone();
    let tag = matcher.fingerprinter().params_tag().to_owned();
    let (sections, pages) = match args.only {
        Some(NamespaceArg::Sections) => (true, false),
        Some(NamespaceArg::Pages) => (false, true),
        None => (true, true),
    };
    let trusted = matcher.index_is_trusted().await.context("reading the index's identity")?;
    let partial = args.only.is_some();
    if partial && !trusted {
        anyhow::bail!(
            "the index is not the one this store was indexed into (it lost its data, or a rebuild did not \
             finish): rebuild every namespace (`zhiwen reindex` without --only)"
        );
    }
    matcher.begin_reindex().await.context("recording the rebuild in the store")?;
    if sections {
        let stale = AtomicU64::new(0);
        let docs = section_records(&matcher, &tag, &stale);
        let report = zhiwen_index::rebuild_stream(index.as_ref(), Namespace::Sections, docs)
            .await
            .context("rebuilding the section index")?;
        matcher.sections_reindexed().await.context("recording the section index's layout in the store")?;
        outln!("section: {} documents, {} keys indexed", report.documents, report.keys)?;
        let stale = stale.into_inner();
        if stale > 0 {
            outln!(
                "section: {stale} records skipped: made with other fingerprint parameters; re-fingerprint them first"
            )?;
        }
    }
    if pages {
        let skipped = AtomicU64::new(0);
        let docs = analysed_pages(&matcher, &skipped);
        let report = zhiwen_index::rebuild_stream(index.as_ref(), Namespace::Pages, docs)
            .await
            .context("rebuilding the page index")?;
        outln!("page: {} documents, {} keys indexed", report.documents, report.keys)?;
        let skipped = skipped.into_inner();
        if skipped > 0 {
            outln!("page: {skipped} pages skipped: their stored text cannot be analysed (see the warnings)")?;
        }
    }
    matcher.finish_reindex().await.context("recording the rebuilt index in the store")?;
    Ok(())
}

/// Every section record with the current tag, paged by id range, with the keys the
/// section namespace holds for it (`matcher.section_index_sampling`). With a sampled
/// layout each page of records is written back to the store as it is (unchanged: only the
/// compact winnowed keys a store written before schema 14 lacks are added, which the
/// sampled layout's candidates are confirmed against).
fn section_records<'a>(
    matcher: &'a Matcher,
    tag: &'a str,
    stale: &'a AtomicU64,
) -> impl futures::Stream<Item = Result<(DocId, Vec<IndexKey>), zhiwen_store::StoreError>> + 'a {
    let store: &dyn FingerprintStore = matcher.stores().fingerprints.as_ref();
    futures::stream::unfold(Some(0i64), move |after| async move {
        let after = after?;
        match store.scan_fingerprints(SubjectKind::Section, after, PAGE).await {
            Err(e) => Some((vec![Err(e)], None)),
            Ok(batch) if batch.is_empty() => None,
            Ok(batch) => {
                let next = batch.last().map(|r| r.subject.id);
                let current: Vec<(Subject, Fingerprints)> = batch
                    .into_iter()
                    .filter(|r| {
                        let current = r.params_tag == tag;
                        if !current {
                            stale.fetch_add(1, Ordering::Relaxed);
                        }
                        current
                    })
                    .map(|r| (r.subject, r.fingerprints))
                    .collect();
                // Only the sampled layout confirms its candidates against the keys.
                if matcher.config().section_sampling_modulus() > 1 {
                    if let Err(e) = store.put_fingerprints_many(&current).await {
                        return Some((vec![Err(e)], None));
                    }
                }
                let items = current
                    .iter()
                    .map(|(s, fp)| Ok((s.id as DocId, matcher.config().section_index_keys(fp))))
                    .collect::<Vec<_>>();
                Some((items, next))
            }
        }
    })
    .flat_map(futures::stream::iter)
}

/// Every stored page in id order with its page-namespace keys, analysed from its text. A
/// page whose text cannot be analysed is skipped with a warning and counted; any other
/// error ends the stream (and the rebuild).
fn analysed_pages<'a>(
    matcher: &'a Matcher,
    skipped: &'a AtomicU64,
) -> impl futures::Stream<Item = Result<(DocId, Vec<IndexKey>), MatcherError>> + 'a {
    futures::stream::unfold(Some(0i64), move |after| async move {
        let after = after?;
        let refs = match matcher.stores().pages.list_pages(None, after, PAGE_BATCH).await {
            Ok(refs) => refs,
            Err(e) => return Some((vec![Err(MatcherError::from(e))], None)),
        };
        let last = refs.last()?.id;
        let ids: Vec<i64> = refs.iter().map(|r| r.id).collect();
        let items = match matcher.page_namespace_keys(&ids).await {
            Err(e) => return Some((vec![Err(e)], None)),
            Ok(pages) => pages
                .into_iter()
                .filter_map(|(id, keys)| match keys {
                    Ok(keys) => Some(Ok((id as DocId, keys))),
                    // The page's own text (or the page, deleted meanwhile): skip it. Any
                    // other error (the store, the index) stops the rebuild.
                    Err(e @ (MatcherError::Text { .. } | MatcherError::NotFound { .. })) => {
                        tracing::warn!(page_id = id, error = %e, "page not indexed");
                        skipped.fetch_add(1, Ordering::Relaxed);
                        None
                    }
                    Err(e) => Some(Err(e)),
                })
                .collect(),
        };
        Some((items, Some(last)))
    })
    .flat_map(futures::stream::iter)
}
