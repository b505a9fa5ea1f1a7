//! `zhiwen reindex`: the index is derived data; rebuild it from the fingerprint store.
//! Records made with other parameters than the current ones are skipped and counted:
//! they must be re-fingerprinted first, never mixed into the index.

use anyhow::{Context, Result};
use futures::StreamExt;
use zhiwen_index::{DocId, IndexKey, Namespace};
use zhiwen_store::{FingerprintStore, SubjectKind};

use crate::cli::{NamespaceArg, ReindexArgs};
use crate::settings::{DataArgs, Settings};

/// Records read per store request.
const PAGE: u32 = 500;

pub async fn run(data: &DataArgs, args: &ReindexArgs) -> Result<()> {
    let settings = Settings::resolve(data)?;
    let stores = settings.open_stores().await?;
    let index = settings.open_index().await?;
    let tag = zhiwen_core::Fingerprinter::new(settings.params.clone())?.params_tag().to_owned();
    let targets: &[(Namespace, SubjectKind)] = match args.only {
        Some(NamespaceArg::Sections) => &[(Namespace::Sections, SubjectKind::Section)],
        Some(NamespaceArg::Pages) => &[(Namespace::Pages, SubjectKind::Page)],
        None => &[(Namespace::Sections, SubjectKind::Section), (Namespace::Pages, SubjectKind::Page)],
    };
    for &(ns, kind) in targets {
        let stale = std::sync::atomic::AtomicU64::new(0);
        // Pages keep the sampled share of their keys the matcher gives them.
        let matcher = &settings.matcher;
        let keys_of = move |fp: &zhiwen_core::Fingerprints| match ns {
            Namespace::Sections => fp.index_keys(),
            Namespace::Pages => matcher.page_index_keys(fp),
        };
        let docs = records(stores.fingerprints.as_ref(), kind, &tag, &stale, keys_of);
        let report = zhiwen_index::rebuild_stream(index.as_ref(), ns, docs)
            .await
            .with_context(|| format!("rebuilding the {} index", kind.as_str()))?;
        println!("{}: {} documents, {} keys indexed", kind.as_str(), report.documents, report.keys);
        let stale = stale.into_inner();
        if stale > 0 {
            println!(
                "{}: {stale} records skipped: made with other fingerprint parameters; re-fingerprint them first",
                kind.as_str()
            );
        }
    }
    Ok(())
}

/// Every record of `kind` with the current tag, paged by id range.
fn records<'a>(
    store: &'a dyn FingerprintStore,
    kind: SubjectKind,
    tag: &'a str,
    stale: &'a std::sync::atomic::AtomicU64,
    keys_of: impl Fn(&zhiwen_core::Fingerprints) -> Vec<IndexKey> + Copy + 'a,
) -> impl futures::Stream<Item = Result<(DocId, Vec<IndexKey>), zhiwen_store::StoreError>> + 'a {
    futures::stream::unfold(Some(0i64), move |after| async move {
        let after = after?;
        match store.scan_fingerprints(kind, after, PAGE).await {
            Err(e) => Some((vec![Err(e)], None)),
            Ok(batch) if batch.is_empty() => None,
            Ok(batch) => {
                let next = batch.last().map(|r| r.subject.id);
                let items = batch
                    .into_iter()
                    .filter(|r| {
                        let current = r.params_tag == tag;
                        if !current {
                            stale.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                        }
                        current
                    })
                    .map(|r| Ok((r.subject.id as DocId, keys_of(&r.fingerprints))))
                    .collect::<Vec<_>>();
                Some((items, next))
            }
        }
    })
    .flat_map(futures::stream::iter)
}
