//! The index is derived data: wiping it and rebuilding from the fingerprints gives the
//! same candidates.

use std::path::PathBuf;

use zhiwen_core::canon::InputFormat;
use zhiwen_core::{Fingerprinter, IndexKey, Params};
use zhiwen_index::{rebuild, rebuild_stream, CandidateIndex, IndexConfig, IndexError, LookupResult, Namespace};

use crate::common;

const CHAPTERS: usize = 24;
const CHARS: usize = 5_000;

/// Texts: chapters of the classics from the shared corpus, else generated text.
fn texts() -> Vec<String> {
    let dir = std::env::var_os("ZHIWEN_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    let corpus = dir.join("novels_classics.jsonl");
    if let Ok(data) = std::fs::read_to_string(&corpus) {
        let texts: Vec<String> = data
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| v.get("text").and_then(|t| t.as_str()).map(|t| t.chars().take(CHARS).collect()))
            .filter(|t: &String| t.chars().count() > 2_000)
            .take(CHAPTERS)
            .collect();
        if texts.len() == CHAPTERS {
            return texts;
        }
    }
    eprintln!("corpus not found at {}; using generated texts", corpus.display());
    let alphabet: Vec<char> =
        "天地玄黄宇宙洪荒日月盈昃辰宿列张寒来暑往秋收冬藏闰余成岁律吕调阳云腾致雨露结为霜".chars().collect();
    (0..CHAPTERS as u64)
        .map(|seed| {
            let mut x = seed * 2_654_435_761 + 1;
            (0..CHARS)
                .map(|i| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    if i % 17 == 16 {
                        '。'
                    } else {
                        alphabet[(x % alphabet.len() as u64) as usize]
                    }
                })
                .collect()
        })
        .collect()
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
