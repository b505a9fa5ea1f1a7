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

use rustc_hash::FxHashSet;
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

/// What an [`Analysis`](crate::Analysis) keeps of a [`Token`]: where the word is and
/// its weight. The hashes go into the shingles and the simhash as the analysis is made;
/// kept, they made every word 24 bytes instead of 12 in the analyses a matcher caches.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Word {
    /// First character of the word in the canonical text.
    pub start: u32,
    /// End character (exclusive).
    pub end: u32,
    /// The word's inverse document frequency, as [`Token::idf`].
    pub idf: f32,
}

impl From<&Token> for Word {
    fn from(t: &Token) -> Self {
        Word { start: t.start, end: t.end, idf: t.idf }
    }
}

static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);

/// Stop words, by the [`hash_bytes`] of the word (the hash every token computes anyway,
/// so the check costs no second pass over the word's bytes).
static STOP_WORDS: LazyLock<FxHashSet<u64>> = LazyLock::new(|| {
    include_str!("../data/stopwords_zh_stopwords-iso.txt")
        .lines()
        .map(str::trim)
        .filter(|w| !w.is_empty())
        .map(|w| hash_bytes(w.as_bytes()))
        .collect()
});

// The IDF table as `build.rs` lays it out: `1 << IDF_SLOTS_LOG2` slots of 12 bytes (the
// word's hash, u64, then its weight, f32, both little-endian; hash 0 marks an empty slot),
// probed linearly from the slot of the hash's top bits. In the binary's read-only data, so
// it costs no start-up and no heap: the pages a process reads are shared with every other
// process of the same binary.
include!(concat!(env!("OUT_DIR"), "/idf_table.rs"));
static IDF_TABLE: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/idf_table.bin"));
const IDF_SLOT_BYTES: usize = 12;

/// The median weight of the table (that of a word it does not know).
fn idf_median() -> f32 {
    f32::from_bits(IDF_MEDIAN_BITS)
}

/// Force the lazily built tables (dictionary, stop words) to load now, e.g. before
/// a benchmark or at service start, so the first request does not pay for it.
pub fn warm_up() {
    LazyLock::force(&JIEBA);
    LazyLock::force(&STOP_WORDS);
}

/// Is `word` a stop word?
pub fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(&hash_bytes(word.as_bytes()))
}

/// IDF weight of `word` in jieba's table (its median for unknown words).
pub fn idf(word: &str) -> f32 {
    idf_of_hash(hash_bytes(word.as_bytes()))
}

#[inline]
fn idf_of_hash(hash: u64) -> f32 {
    if hash == 0 {
        // The empty slot's mark: no word of the table hashes to it (`build.rs` checks).
        return idf_median();
    }
    let mask = (1usize << IDF_SLOTS_LOG2) - 1;
    let mut slot = (hash >> (64 - IDF_SLOTS_LOG2)) as usize;
    // The table is about half full, so this ends after one or two slots; it always ends,
    // since `build.rs` leaves empty slots.
    loop {
        let at = slot * IDF_SLOT_BYTES;
        // The slot is masked, so `get` always finds it; `get` keeps a panic out of
        // the path all the same.
        let Some(bytes) = IDF_TABLE.get(at..at + IDF_SLOT_BYTES) else { return idf_median() };
        let (key, weight) = bytes.split_at(8);
        let key = u64::from_le_bytes(key.try_into().unwrap_or_default());
        if key == hash {
            return f32::from_le_bytes(weight.try_into().unwrap_or_default());
        }
        if key == 0 {
            return idf_median();
        }
        slot = (slot + 1) & mask;
    }
}

/// `c.is_alphanumeric()`, answered without the Unicode tables for ASCII and the two
/// CJK ideograph blocks that make up nearly all of Chinese text (every code point of
/// U+3400..=U+4DBF and U+4E00..=U+9FFF is an assigned letter), nor for their punctuation.
#[inline]
pub fn is_alphanumeric_fast(c: char) -> bool {
    let cp = c as u32;
    if cp < 0x80 {
        c.is_ascii_alphanumeric()
    } else if (0x4E00..=0x9FFF).contains(&cp) || (0x3400..=0x4DBF).contains(&cp) {
        true
    } else if (0x2000..=0x206F).contains(&cp) || (0x3000..=0x3004).contains(&cp) || (0x3008..=0x3020).contains(&cp) {
        // General punctuation (quotes, dashes, ellipsis) and CJK punctuation (。、《》「」).
        false
    } else {
        c.is_alphanumeric()
    }
}

/// A word carries content when it has a letter, digit or Han character.
#[inline]
fn is_content(word: &str) -> bool {
    word.chars().any(is_alphanumeric_fast)
}

/// Segment `text` once and return its content words in order.
///
/// jieba is called once per line: a line break is never part of a word (jieba cuts
/// every character outside its word class on its own), so the words and their offsets
/// are exactly those of one call over the whole text, while each call's token list stays
/// small and in cache instead of growing to tens of megabytes for a long document.
pub fn segment(text: &str, params: &SegmentParams) -> Vec<Token> {
    let jieba = &*JIEBA;
    let mut tokens = Vec::with_capacity(text.len() / 5);
    // Character offset of the current line in `text`.
    let mut base = 0usize;
    let mut keep = |word: &str, start: usize, end: usize| {
        if !is_content(word) {
            return;
        }
        let hash = hash_bytes(word.as_bytes());
        if params.drop_stop_words && STOP_WORDS.contains(&hash) {
            return;
        }
        // The weight is looked up below, for all words at once.
        tokens.push(Token { start: start as u32, end: end as u32, hash, idf: 0.0 });
    };
    for line in text.split_inclusive('\n') {
        // jieba's tokens cover every character of the line, so the last one ends it.
        let mut line_chars = 0;
        if params.drop_adjectives {
            // The same segmentation as `cut`, with each word's part of speech.
            for t in jieba.tag(line, params.hmm) {
                if !t.tag.starts_with('a') {
                    keep(t.word, base + t.start, base + t.end);
                }
                line_chars = t.end;
            }
        } else {
            for t in jieba.cut(line, params.hmm) {
                keep(t.word, base + t.start, base + t.end);
                line_chars = t.end;
            }
        }
        base += line_chars;
    }
    // The IDF table is far larger than the cache, so nearly every lookup waits on memory.
    // Done in one tight loop, the lookups of successive words are independent and the
    // processor overlaps their waits; interleaved with the segmentation it could not.
    for t in &mut tokens {
        t.idf = idf_of_hash(t.hash);
    }
    tokens
}

/// Is a jieba part-of-speech tag that of a proper name: a person (`nr`, `nrfg`, `nrt`), a
/// place (`ns`) or an organisation (`nt`)?
fn is_name_tag(tag: &str) -> bool {
    tag.starts_with("nr") || tag.starts_with("ns") || tag.starts_with("nt")
}

/// Half-open character ranges of `text` that jieba tags as proper names: people, places
/// and organisations (`常州市`, `杭州市中级人民法院`, `冯新柱`). Words of its dictionary
/// carry their tag; a word it does not know (a name it has never seen) is found and
/// tagged by its HMM. Sorted, disjoint.
///
/// For the few passages whose differences are weighed ([`crate::formulaic`]), not for
/// whole documents: tagging costs about as much as [`segment`].
pub fn name_ranges(text: &str) -> Vec<(usize, usize)> {
    JIEBA.tag(text, true).into_iter().filter(|t| is_name_tag(t.tag)).map(|t| (t.start, t.end)).collect()
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
    fn names_of_people_places_and_organisations_are_found() {
        let text = "近日，江苏省常州市人民检察院已向法院提起公诉，被告人冯新柱";
        let names: Vec<&str> =
            name_ranges(text).into_iter().map(|(s, e)| crate::canon::slice_chars(text, s, e)).collect();
        assert!(names.contains(&"江苏省") && names.contains(&"常州市"), "{names:?}");
        assert!(names.contains(&"人民检察院"), "{names:?}");
        assert!(names.contains(&"冯新柱"), "{names:?}");
        assert!(!names.iter().any(|n| n.contains("公诉") || n.contains("近日")), "{names:?}");
    }

    #[test]
    fn idf_table_is_embedded_and_rare_words_weigh_more() {
        assert!(idf("劳动防护") > idf("中国"));
        // Unknown words get the median, not zero.
        assert!(idf("不存在的词语ABC") > 0.0);
        assert_eq!(idf("不存在的词语ABC"), idf_median());
    }

    /// The table `build.rs` laid out gives every word of jieba's `idf.txt` its weight
    /// (the last one, when a word is listed twice) and the median to any other word.
    #[test]
    fn the_compiled_idf_table_holds_every_word_of_the_source() {
        use rustc_hash::FxHashMap;
        use std::io::Read;
        let compressed: &[u8] = include_bytes!("../data/jieba_idf.txt.gz");
        let mut text = String::new();
        flate2::read::GzDecoder::new(compressed).read_to_string(&mut text).expect("idf.txt.gz");
        let mut expected: FxHashMap<&str, f32> = FxHashMap::default();
        let mut values = Vec::new();
        for line in text.lines() {
            let mut parts = line.split_whitespace();
            if let (Some(word), Some(value)) = (parts.next(), parts.next()) {
                if let Ok(v) = value.parse::<f32>() {
                    expected.insert(word, v);
                    values.push(v);
                }
            }
        }
        values.sort_by(|a, b| a.total_cmp(b));
        assert_eq!(idf_median(), values[values.len() / 2]);
        let distinct: FxHashSet<u64> = expected.keys().map(|w| hash_bytes(w.as_bytes())).collect();
        assert_eq!(IDF_WORDS, distinct.len());
        for (word, v) in &expected {
            assert_eq!(idf(word).to_bits(), v.to_bits(), "{word}");
        }
        for unknown in ["不存在的词语ABC", "zhiwen", "指纹指纹指纹指纹", ""] {
            if !expected.contains_key(unknown) {
                assert_eq!(idf(unknown), idf_median(), "{unknown}");
            }
        }
    }

    #[test]
    fn the_fast_alphanumeric_check_agrees_with_the_unicode_tables() {
        for cp in 0..=0x10FFFFu32 {
            if let Some(c) = char::from_u32(cp) {
                assert_eq!(is_alphanumeric_fast(c), c.is_alphanumeric(), "U+{cp:04X}");
            }
        }
    }

    #[test]
    fn dropping_adjectives_keeps_the_rest_of_the_same_segmentation() {
        // jieba's dictionary tags 漂亮 and 寂静 `a` (adjective), 姑娘 and 街道 `n`.
        let text = "漂亮的姑娘穿着红色的长裙走在寂静的街道上";
        let all = segment(text, &SegmentParams::default());
        let fewer = segment(text, &SegmentParams { drop_adjectives: true, ..SegmentParams::default() });
        let words = |ts: &[Token]| -> Vec<String> {
            ts.iter().map(|t| crate::canon::slice_chars(text, t.start as usize, t.end as usize).to_owned()).collect()
        };
        let (all, fewer) = (words(&all), words(&fewer));
        for adjective in ["漂亮", "寂静"] {
            assert!(
                all.contains(&adjective.to_owned()) && !fewer.contains(&adjective.to_owned()),
                "{all:?} / {fewer:?}"
            );
        }
        assert!(fewer.contains(&"姑娘".to_owned()) && fewer.contains(&"街道".to_owned()), "{fewer:?}");
        assert!(fewer.iter().all(|w| all.contains(w)));
    }

    #[test]
    fn stop_words_are_found_by_hash() {
        assert!(is_stop_word("的") && is_stop_word("我们"));
        assert!(!is_stop_word("北京"));
    }

    #[test]
    fn punctuation_and_whitespace_are_not_tokens() {
        let tokens = segment("，。！ \n ？", &SegmentParams::default());
        assert!(tokens.is_empty());
    }
}
