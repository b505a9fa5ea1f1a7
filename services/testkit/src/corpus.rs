//! The shared corpus of real Chinese text, read at test time (nothing of it is
//! committed): `ZHIWEN_CORPUS_DIR`, else `shared/corpus` beside the repository.

use std::collections::HashMap;
use std::path::PathBuf;

/// Where the shared corpus is.
pub fn dir() -> PathBuf {
    std::env::var_os("ZHIWEN_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"))
}

/// Chapters of the public-domain classics by id (`novel-sanguo-001` ...), as (title,
/// text); `None` when the corpus cannot be read.
pub fn classics() -> Option<HashMap<String, (String, String)>> {
    let text = std::fs::read_to_string(dir().join("novels_classics.jsonl")).ok()?;
    let mut out = HashMap::new();
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).ok()?;
        out.insert(v["id"].as_str()?.to_owned(), (v["title"].as_str()?.to_owned(), v["text"].as_str()?.to_owned()));
    }
    Some(out)
}

/// The classics' texts by id, without titles.
pub fn classic_texts() -> Option<HashMap<String, String>> {
    Some(classics()?.into_iter().map(|(id, (_, text))| (id, text)).collect())
}
