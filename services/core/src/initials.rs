//! The pinyin-initial stream: one ASCII letter per Han character, the first letter of
//! its most common reading.
//!
//! Converting to initials makes downstream fingerprints (DNA, winnowing over initials)
//! immune to charset differences, traditional/simplified variants and homophone
//! substitution (同音字替代). Polyphonic characters always take the `pinyin` crate's first
//! (most common) reading, so the mapping is a function: the same character always gives
//! the same letter.
//!
//! The lookup is a flat table over the CJK blocks, built once from the `pinyin` crate,
//! because per-character calls into the crate would be an order of magnitude slower
//! than the 200 MB/s this stage must sustain.

use std::sync::LazyLock;

use pinyin::ToPinyin;

/// The letters a pinyin initial can take: 20 consonant letters plus the zero-initial
/// vowels `a`, `e`, `o` (zh/ch/sh count as z/c/s).
pub const INITIAL_LETTERS: [u8; 23] = *b"abcdefghjklmnopqrstwxyz";

/// Index of `letter` in [`INITIAL_LETTERS`], if it is one.
pub fn letter_index(letter: u8) -> Option<usize> {
    INITIAL_LETTERS.iter().position(|&l| l == letter)
}

const BLOCKS: [(u32, u32); 3] = [
    (0x3400, 0x4DBF), // CJK Unified Ideographs Extension A
    (0x4E00, 0x9FFF), // CJK Unified Ideographs
    (0xF900, 0xFAFF), // CJK Compatibility Ideographs (normally folded by NFKC)
];

struct InitialTable {
    // One byte per code point of each block: the letter, or 0 when the character has no reading.
    blocks: Vec<(u32, Vec<u8>)>,
}

static TABLE: LazyLock<InitialTable> = LazyLock::new(|| {
    let blocks = BLOCKS
        .iter()
        .map(|&(lo, hi)| {
            let letters = (lo..=hi)
                .map(|cp| {
                    char::from_u32(cp)
                        .and_then(|c| c.to_pinyin())
                        .and_then(|p| p.first_letter().bytes().next())
                        .map(|b| b.to_ascii_lowercase())
                        .filter(|b| INITIAL_LETTERS.contains(b))
                        .unwrap_or(0)
                })
                .collect();
            (lo, letters)
        })
        .collect();
    InitialTable { blocks }
});

/// The pinyin initial of `c`, or `None` when `c` is not a Han character with a reading.
#[inline]
pub fn initial_of(c: char) -> Option<u8> {
    let cp = c as u32;
    if cp < 0x3400 {
        return None;
    }
    for (lo, letters) in &TABLE.blocks {
        if cp >= *lo {
            if let Some(&l) = letters.get((cp - lo) as usize) {
                return (l != 0).then_some(l);
            }
        }
    }
    None
}

/// The pinyin-initial stream of a text, with the position of each letter.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InitialStream {
    /// One ASCII letter per Han character, in text order.
    pub letters: Vec<u8>,
    /// For each letter, the character offset in the text it came from.
    pub positions: Vec<u32>,
}

impl InitialStream {
    /// Build the stream of `text` (character offsets count every char of `text`).
    pub fn of(text: &str) -> Self {
        let mut letters = Vec::with_capacity(text.len() / 3);
        let mut positions = Vec::with_capacity(text.len() / 3);
        for (i, c) in text.chars().enumerate() {
            if let Some(l) = initial_of(c) {
                letters.push(l);
                positions.push(i as u32);
            }
        }
        InitialStream { letters, positions }
    }

    /// Number of letters.
    pub fn len(&self) -> usize {
        self.letters.len()
    }

    /// True when the text had no Han characters.
    pub fn is_empty(&self) -> bool {
        self.letters.is_empty()
    }
}

/// The letters only, for throughput-critical callers that need no positions.
pub fn initial_letters(text: &str) -> Vec<u8> {
    text.chars().filter_map(initial_of).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_characters_map_to_their_initials() {
        let s = InitialStream::of("中华人民共和国");
        assert_eq!(s.letters, b"zhrmghg");
        assert_eq!(s.positions, vec![0, 1, 2, 3, 4, 5, 6]);
    }

    #[test]
    fn non_han_characters_are_skipped_but_positions_count_them() {
        let s = InitialStream::of("a中 b国!");
        assert_eq!(s.letters, b"zg");
        assert_eq!(s.positions, vec![1, 4]);
    }

    #[test]
    fn traditional_and_homophones_share_initials() {
        // 國/国, 這/这 and the homophones 在/再, 他/她/它.
        assert_eq!(initial_letters("國這"), initial_letters("国这"));
        assert_eq!(initial_letters("在他"), initial_letters("再她"));
    }

    #[test]
    fn every_letter_in_the_table_is_a_known_initial() {
        for (_, letters) in &TABLE.blocks {
            assert!(letters.iter().all(|&l| l == 0 || INITIAL_LETTERS.contains(&l)));
        }
        // The CJK block is almost fully covered.
        let main = &TABLE.blocks[1].1;
        let covered = main.iter().filter(|&&l| l != 0).count();
        assert!(covered as f64 / main.len() as f64 > 0.9, "coverage {covered}/{}", main.len());
    }
}
