//! The index is derived data: wiping it and rebuilding from the fingerprints gives the
//! same candidates.

use zhiwen_core::canon::InputFormat;
use zhiwen_core::{Fingerprinter, IndexKey, Params};
use zhiwen_index::{rebuild, rebuild_stream, CandidateIndex, IndexConfig, IndexError, LookupResult, Namespace};

use crate::common;

const CHAPTERS: usize = 24;
const CHARS: usize = 5_000;

/// Texts: the first 5,000 characters of 24 chapters of the classics (test corpus).
fn texts() -> Vec<String> {
    let texts: Vec<String> = zhiwen_testkit::corpus::lines(zhiwen_testkit::corpus::CLASSICS, usize::MAX)
        .iter()
        .filter_map(|v| v.get("text").and_then(|t| t.as_str()).map(|t| t.chars().take(CHARS).collect()))
        .filter(|t: &String| t.chars().count() > 2_000)
        .take(CHAPTERS)
        .collect();
    assert_eq!(texts.len(), CHAPTERS, "chapters of the classics");
    texts
}

type Documents = Vec<(u64, Vec<IndexKey>)>;

/// The chapters' keys and, per chapter, the keys of an excerpt.
fn documents() -> (Documents, Vec<Vec<IndexKey>>) {
    let fp = Fingerprinter::new(Params::default()).unwrap();
    let texts = texts();
    let docs = texts
        .iter()
        .enumerate()
        .map(|(i, t)| (1_000 + i as u64, fp.analyze_text(t, InputFormat::Text).unwrap().fingerprints.index_keys()))
        .collect();
    // Queries: an excerpt of each chapter, as a pirate page would carry it.
    let queries = texts
        .iter()
        .map(|t| {
            let excerpt: String = t.chars().skip(1_000).take(1_500).collect();
            fp.analyze_text(&excerpt, InputFormat::Text).unwrap().fingerprints.index_keys()
        })
        .collect();
    (docs, queries)
}

async fn lookups(index: &dyn CandidateIndex, queries: &[Vec<IndexKey>]) -> Vec<LookupResult> {
    let mut out = Vec::new();
    for q in queries {
        out.push(index.lookup(Namespace::Sections, q, 10).await.unwrap());
    }
    out
}

async fn wipe_and_rebuild_gives_the_same_candidates(h: common::Harness) {
    let (docs, queries) = documents();
    let index = &*h.index;
    let report = rebuild(index, Namespace::Sections, docs.clone()).await.unwrap();
    assert_eq!(report.documents, CHAPTERS as u64);
    let before = lookups(index, &queries).await;
    for (i, r) in before.iter().enumerate() {
        assert_eq!(r.candidates[0].doc, 1_000 + i as u64, "an excerpt finds its chapter first");
    }
    let stats_before = index.stats().await.unwrap().namespace(Namespace::Sections);

    match &h.server {
        Some(server) => assert_eq!(server.command(&["FLUSHALL"]).unwrap(), "OK"),
        None => index.clear(Namespace::Sections).await.unwrap(),
    }
    rebuild(index, Namespace::Sections, docs).await.unwrap();
    assert_eq!(lookups(index, &queries).await, before);
    assert_eq!(index.stats().await.unwrap().namespace(Namespace::Sections), stats_before);
}

#[tokio::test]
async fn redis_wiped_and_rebuilt_gives_the_same_candidates() {
    let Some(h) = common::redis(IndexConfig::default()).await else {
        return;
    };
    wipe_and_rebuild_gives_the_same_candidates(h).await;
}

#[tokio::test]
async fn embedded_cleared_and_rebuilt_gives_the_same_candidates() {
    let Some(h) = common::embedded(IndexConfig::default()).await else {
        return;
    };
    wipe_and_rebuild_gives_the_same_candidates(h).await;
}

#[tokio::test]
async fn a_failing_source_stops_the_rebuild_with_its_error() {
    let Some(h) = common::embedded(IndexConfig::default()).await else {
        return;
    };
    let items: Vec<Result<(u64, Vec<IndexKey>), std::io::Error>> =
        vec![Ok((1, vec![])), Err(std::io::Error::other("cursor died"))];
    let err = rebuild_stream(&*h.index, Namespace::Pages, futures::stream::iter(items)).await.unwrap_err();
    assert!(matches!(err, IndexError::Source(_)), "{err:?}");
    assert!(err.to_string().contains("cursor died"));
}
