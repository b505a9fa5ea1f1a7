use std::path::PathBuf;
use std::sync::Arc;

use zhiwen_core::{Fingerprinter, Params};
use zhiwen_index::{EmbeddedIndex, IndexConfig};
use zhiwen_matcher::{Matcher, MatcherConfig};
use zhiwen_store::{NewPage, NewSection, NewWork, PageSource, StoreConfig, Stores, Timestamp};

pub struct Env {
    pub _dir: tempfile::TempDir,
    pub stores: Stores,
    pub matcher: Matcher,
}

pub async fn env(config: MatcherConfig) -> Env {
    let dir = tempfile::tempdir().expect("tempdir");
    let stores = zhiwen_store::open(&StoreConfig::embedded(dir.path().join("store"))).await.expect("store");
    let index = Arc::new(EmbeddedIndex::open(dir.path().join("index.sqlite"), IndexConfig::default()).expect("index"));
    let fp = Fingerprinter::new(Params::default()).expect("fingerprinter");
    let matcher = Matcher::new(stores.clone(), index, fp, config);
    Env { _dir: dir, stores, matcher }
}

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn sample(name: &str) -> Vec<u8> {
    std::fs::read(repo().join("samples").join(name)).expect("bundled sample")
}

pub use zhiwen_testkit::corpus::classics;

/// The bundled chapters of a JSONL file of `samples/` (`works/classics.jsonl`,
/// `site/unregistered.jsonl`, `site/filler.jsonl`): (id, text) in file order.
pub fn bundled(name: &str) -> Vec<(String, String)> {
    let text = String::from_utf8(sample(name)).expect("UTF-8 sample");
    text.lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("JSONL");
            (v["id"].as_str().unwrap_or_default().to_owned(), v["text"].as_str().unwrap_or_default().to_owned())
        })
        .collect()
}

pub fn chars(s: &str, start: usize, len: usize) -> String {
    s.chars().skip(start).take(len).collect()
}

pub fn work(external_id: &str, title: &str, sections: &[(&str, &str)]) -> NewWork {
    let mut text = String::new();
    let mut secs = Vec::new();
    for (i, (t, body)) in sections.iter().enumerate() {
        let start = text.chars().count() as u64;
        text.push_str(body);
        let end = text.chars().count() as u64;
        secs.push(NewSection {
            ordinal: i as u32,
            title: (*t).to_owned(),
            text: (*body).to_owned(),
            char_start: start,
            char_end: end,
        });
    }
    NewWork {
        owner: "demo-press".into(),
        external_id: external_id.into(),
        title: title.into(),
        author: "佚名".into(),
        source_file: None,
        charset: None,
        text,
        sections: secs,
    }
}

pub fn text_page(url: &str, text: &str) -> NewPage {
    NewPage {
        url: url.into(),
        fetched_at: Timestamp(1_700_000_000_000),
        http_status: Some(200),
        charset: None,
        body: Vec::new(),
        text: text.into(),
        format: None,
        canon_tag: None,
        source: PageSource::Import("test".into()),
    }
}

pub fn html_page(url: &str, body: Vec<u8>) -> NewPage {
    NewPage {
        url: url.into(),
        fetched_at: Timestamp(1_700_000_000_000),
        http_status: Some(200),
        charset: None,
        body,
        text: String::new(),
        format: None,
        canon_tag: None,
        source: PageSource::Crawl,
    }
}

/// `page` as ingest stores it: its text the canonical text of its body (of the default
/// parameters), with the tag of that canonicalisation. A matcher analyses such a page from
/// its text and reads its body only to quote the evidence of a copy.
pub fn tagged(page: NewPage) -> NewPage {
    let params = zhiwen_core::params::CanonParams::default();
    let c =
        zhiwen_core::canon::canonicalize_with_hint(&page.body, zhiwen_core::canon::InputFormat::Auto, None, &params)
            .expect("canonical text");
    let format = match c.format() {
        zhiwen_core::canon::InputFormat::Html => zhiwen_store::PageFormat::Html,
        _ => zhiwen_store::PageFormat::Text,
    };
    NewPage {
        charset: Some(c.charset().to_owned()),
        text: c.text().to_owned(),
        format: Some(format),
        canon_tag: Some(params.tag()),
        ..page
    }
}

/// Every match as comparable values: (section, page, kind, score, top evidence).
pub async fn all_matches(stores: &Stores) -> Vec<(i64, i64, String, u64, usize)> {
    let mut out = Vec::new();
    let mut after = 0;
    loop {
        let page = stores.matches.list_matches(&Default::default(), after, 200).await.expect("list matches");
        let Some(last) = page.last() else { break };
        after = last.id;
        for m in page {
            out.push((m.section_id, m.page_id, m.kind.clone(), m.score.to_bits(), m.comparison.evidence.len()));
        }
    }
    out.sort();
    out
}
