//! One jieba segmentation per document, shared by every word-level method.
//!
//! [`segment`] cuts the canonical text once and keeps the content words (stop words,
//! punctuation and white space dropped), each with its position, a stable hash and its
//! IDF weight from jieba's IDF table. Simhash (TF-IDF weights) and shingles both read this
//! one token stream; nothing segments the text a second time.
//!
//! Data: jieba's default dictionary (inside `jieba-rs`), jieba's `idf.txt` (MIT, shipped
//! gzip-compressed in `data/`, because `jieba-rs` keeps its table private), and the
//! stopwords-iso Chinese list (MIT).

use rustc_hash::{FxHashMap, FxHashSet};
use std::io::Read;
use std::sync::LazyLock;

use jieba_rs::Jieba;

use crate::hash::hash_bytes;
use crate::params::SegmentParams;

/// A content word of the canonical text.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Token {
    /// First character of the word in the canonical text.
    pub start: u32,
    /// End character (exclusive).
    pub end: u32,
    /// Stable 64-bit hash of the word.
    pub hash: u64,
    /// The word's inverse document frequency (jieba's table; the median for unknown words).
    pub idf: f32,
}

static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);

static STOP_WORDS: LazyLock<FxHashSet<&'static str>> = LazyLock::new(|| {
    include_str!("../data/stopwords_zh_stopwords-iso.txt").lines().map(str::trim).filter(|w| !w.is_empty()).collect()
});

struct IdfTable {
    weights: FxHashMap<Box<str>, f32>,
    median: f32,
}

static IDF: LazyLock<IdfTable> = LazyLock::new(|| {
    let compressed: &[u8] = include_bytes!("../data/jieba_idf.txt.gz");
    let mut text = String::new();
    // The table is embedded at compile time and checked by a test: failing to read it is
    // a build defect, and an empty table only degrades weights to the median.
    if flate2::read::GzDecoder::new(compressed).read_to_string(&mut text).is_err() {
        text.clear();
    }
    let mut weights = FxHashMap::with_capacity_and_hasher(280_000, Default::default());
    let mut values = Vec::with_capacity(280_000);
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        if let (Some(word), Some(value)) = (parts.next(), parts.next()) {
            if let Ok(v) = value.parse::<f32>() {
                weights.insert(word.into(), v);
                values.push(v);
            }
        }
    }
    values.sort_by(|a, b| a.total_cmp(b));
    let median = values.get(values.len() / 2).copied().unwrap_or(10.0);
    IdfTable { weights, median }
});

/// Force the lazily built tables (dictionary, stop words, IDF) to load now, e.g. before
/// a benchmark or at service start, so the first request does not pay for it.
pub fn warm_up() {
    LazyLock::force(&JIEBA);
    LazyLock::force(&STOP_WORDS);
    LazyLock::force(&IDF);
}

/// Is `word` a stop word?
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(word)
}

/// IDF weight of `word` in jieba's table (its median for unknown words).
pub fn idf(word: &str) -> f32 {
    let table = &*IDF;
    table.weights.get(word).copied().unwrap_or(table.median)
}

/// A word carries content when it has a letter, digit or Han character.
fn is_content(word: &str) -> bool {
    word.chars().any(char::is_alphanumeric)
}

/// Segment `text` once and return its content words in order.
pub fn segment(text: &str, params: &SegmentParams) -> Vec<Token> {
    let jieba = &*JIEBA;
    let mut tokens = Vec::with_capacity(text.len() / 5);
    for t in jieba.cut(text, params.hmm) {
        let word = t.word;
        if !is_content(word) || (params.drop_stop_words && is_stop_word(word)) {
            continue;
        }
        tokens.push(Token {
            start: t.start as u32,
            end: t.end as u32,
            hash: hash_bytes(word.as_bytes()),
            idf: idf(word),
        });
    }
    tokens
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn segments_once_with_positions_and_drops_stop_words() {
        let text = "我们在北京的天安门广场看升旗";
        let tokens = segment(text, &SegmentParams::default());
        let words: Vec<&str> =
            tokens.iter().map(|t| crate::canon::slice_chars(text, t.start as usize, t.end as usize)).collect();
        assert!(words.contains(&"北京"), "{words:?}");
        assert!(!words.contains(&"的") && !words.contains(&"在"), "{words:?}");
    }

    #[test]
    fn idf_table_is_embedded_and_rare_words_weigh_more() {
        assert!(IDF.weights.len() > 200_000);
        assert!(idf("劳动防护") > idf("中国"));
        // Unknown words get the median, not zero.
        assert!(idf("不存在的词语ABC") > 0.0);
    }

    #[test]
    fn punctuation_and_whitespace_are_not_tokens() {
        let tokens = segment("，。！ \n ？", &SegmentParams::default());
        assert!(tokens.is_empty());
    }
}
