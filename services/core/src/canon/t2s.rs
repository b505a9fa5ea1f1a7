//! Traditional -> simplified Chinese with the OpenCC tables (Apache-2.0, embedded).
//!
//! OpenCC's `t2s`, `tw2s` and `hk2s` configurations are chains: Taiwan/Hong Kong variant
//! forms -> OpenCC traditional, then traditional -> simplified, each step a
//! leftmost-longest phrase match that falls back to single characters. Pirate copies mix
//! all three, so the chains are merged here into ONE dictionary (variant entries composed
//! with the traditional -> simplified step) and applied in one pass.
//!
//! The merge has to keep canonical text stable: a simplified text and its traditional
//! conversion must canonicalise to the same string. Two rules see to that: a character
//! whose destination is itself a key follows the chain to its end (薴 -> 苧 -> 苎), and
//! when a phrase's simplified output would be changed by the character table (乾清宮 ->
//! 乾清宫, but 乾 alone -> 干), the output is added as a phrase mapping to itself.
//! When sources disagree on a key, the plain traditional table wins over the regional
//! variant tables; [`merge`] reports every such case so that a test can pin them.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::LazyLock;

const TS_PHRASES: &str = include_str!("../../data/opencc/TSPhrases.txt");
const TS_CHARACTERS: &str = include_str!("../../data/opencc/TSCharacters.txt");
const TW_VARIANTS_REV: &str = include_str!("../../data/opencc/TWVariantsRev.txt");
const TW_VARIANTS_REV_PHRASES: &str = include_str!("../../data/opencc/TWVariantsRevPhrases.txt");
const HK_VARIANTS_REV: &str = include_str!("../../data/opencc/HKVariantsRev.txt");
const HK_VARIANTS_REV_PHRASES: &str = include_str!("../../data/opencc/HKVariantsRevPhrases.txt");

/// Low 21 bits of an entry: the simplified character (0: the character is unchanged).
const MAP_MASK: u32 = 0x1F_FFFF;
/// Entry flag: at least one phrase starts with this character.
const PHRASE_START: u32 = 1 << 31;
/// The longest phrase the tables may hold (OpenCC's are at most 10 characters).
const MAX_PHRASE_CHARS: usize = 32;

/// The merged conversion table, built once on first use.
pub(crate) static T2S: LazyLock<T2s> = LazyLock::new(|| merge().table);

/// Hasher for keys that are already well-mixed integers (characters, character pairs).
#[derive(Default)]
pub(crate) struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(u64::from(n));
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
    }
}

type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

fn pair_key(a: char, b: char) -> u64 {
    (u64::from(u32::from(a)) << 32) | u64::from(u32::from(b))
}

/// A phrase of the merged table.
#[derive(Debug, Clone)]
pub(crate) struct Phrase {
    /// Traditional (or variant) characters, at least two.
    pub key: Box<[char]>,
    /// Simplified characters.
    pub value: Box<[char]>,
}

/// The merged table in the form the normaliser reads: one `u32` per BMP character,
/// phrases indexed by their first two characters, longest first.
pub(crate) struct T2s {
    /// One bit per BMP character: converts to another character. With `pair_bits`, the
    /// common case (a character that stays, and starts no phrase with the next one) costs
    /// two bit tests in tables small enough for L1 and a branch that is rarely taken: most
    /// characters of simplified text convert to nothing, but many of the commonest (一, 不,
    /// 之 ...) start some phrase, so a test of the character alone sent them to `bmp`, a
    /// table of 256 KB, through a branch the processor could not predict.
    conv_bits: Box<[u64]>,
    bmp: Box<[u32]>,
    astral: IntMap<u32, u32>,
    /// Bloom-style filter over the first two characters of the phrases: most characters
    /// that start some phrase (之, 不, 一 ...) are not followed by one, and this bit test
    /// spares them the hash lookup.
    pair_bits: Box<[u64]>,
    phrases: IntMap<u64, Vec<Phrase>>,
}

fn pair_bit(a: char, b: char) -> usize {
    let h = pair_key(a, b).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (h >> 48) as usize
}

/// What a lookup of one character says.
pub(crate) enum Step<'a> {
    /// Convert `len` characters to `value`.
    Phrase { len: usize, value: &'a [char] },
    /// Convert this one character.
    Char(char),
    /// Leave it.
    Keep,
}

/// Bit `bit` of `bits` (false past the end).
#[inline(always)]
fn test_bit(bits: &[u64], bit: usize) -> bool {
    bits.get(bit >> 6).is_some_and(|w| w & (1 << (bit & 63)) != 0)
}

impl T2s {
    /// Whether `c` may convert to another character (`false`: certainly not).
    #[inline(always)]
    fn may_convert(&self, c: char) -> bool {
        let u = u32::from(c) as usize;
        u >= 0x1_0000 || test_bit(&self.conv_bits, u)
    }

    /// Whether a phrase may start with `first` followed by `second` (`false`: certainly not).
    #[inline(always)]
    fn may_start_phrase(&self, first: char, second: Option<char>) -> bool {
        second.is_some_and(|s| test_bit(&self.pair_bits, pair_bit(first, s)))
    }

    /// Whether `first`, followed by `second`, is certainly left as it is: the two bit tests
    /// [`T2s::lookup_at`] answers most characters with, before it reads the table.
    #[cfg(test)]
    fn keeps(&self, first: char, second: Option<char>) -> bool {
        !self.may_convert(first) && !self.may_start_phrase(first, second)
    }

    #[inline]
    fn entry(&self, c: char) -> u32 {
        let u = u32::from(c);
        if u < 0x1_0000 {
            self.bmp[u as usize]
        } else {
            self.astral.get(&u).copied().unwrap_or(0)
        }
    }

    /// Conversion of `units[i]`, looking ahead through `next(k)` for the k-th following char.
    #[inline]
    pub(crate) fn lookup_at<F: Fn(usize) -> Option<char>>(&self, first: char, next: F) -> Step<'_> {
        let second = next(1);
        let phrase = self.may_start_phrase(first, second);
        if !phrase && !self.may_convert(first) {
            return Step::Keep;
        }
        let e = self.entry(first);
        if e == 0 {
            return Step::Keep;
        }
        if phrase && e & PHRASE_START != 0 {
            if let Some(second) = second {
                if let Some(list) = self.phrases.get(&pair_key(first, second)) {
                    'phrases: for p in list {
                        for (k, &want) in p.key.iter().enumerate().skip(2) {
                            if next(k) != Some(want) {
                                continue 'phrases;
                            }
                        }
                        return Step::Phrase { len: p.key.len(), value: &p.value };
                    }
                }
            }
        }
        match char::from_u32(e & MAP_MASK) {
            Some(c) if e & MAP_MASK != 0 => Step::Char(c),
            _ => Step::Keep,
        }
    }

    /// Convert a whole string (leftmost-longest), for tests and callers outside the pipeline.
    pub(crate) fn convert(&self, s: &str) -> String {
        let chars: Vec<char> = s.chars().collect();
        let mut out = String::with_capacity(s.len());
        let mut i = 0;
        while i < chars.len() {
            match self.lookup_at(chars[i], |k| chars.get(i + k).copied()) {
                Step::Phrase { len, value } => {
                    out.extend(value.iter());
                    i += len;
                }
                Step::Char(c) => {
                    out.push(c);
                    i += 1;
                }
                Step::Keep => {
                    out.push(chars[i]);
                    i += 1;
                }
            }
        }
        out
    }

    /// Every key of the table (characters and phrases), for tests.
    #[cfg(test)]
    pub(crate) fn keys(&self) -> Vec<String> {
        let mut keys: Vec<String> = Vec::new();
        for (u, &e) in self.bmp.iter().enumerate() {
            if e & MAP_MASK != 0 {
                if let Some(c) = char::from_u32(u as u32) {
                    keys.push(c.to_string());
                }
            }
        }
        for (&u, &e) in &self.astral {
            if e & MAP_MASK != 0 {
                if let Some(c) = char::from_u32(u) {
                    keys.push(c.to_string());
                }
            }
        }
        for list in self.phrases.values() {
            keys.extend(list.iter().map(|p| p.key.iter().collect::<String>()));
        }
        keys.sort();
        keys
    }
}

/// What the merge found, for tests: the tables must give every key one destination.
#[derive(Debug, Default, Clone)]
pub(crate) struct MergeReport {
    /// Keys with two different destinations that no documented rule resolves.
    pub conflicts: Vec<String>,
    /// Regional variant keys overridden by the plain traditional table (documented precedence).
    pub shadowed: Vec<String>,
    /// Simplified phrase outputs added as self-mappings to keep them stable.
    pub protected: usize,
    /// Number of character and phrase entries of the merged table.
    pub entries: usize,
}

/// The merged table and the report of how it was merged.
pub(crate) struct Merged {
    pub table: T2s,
    /// Only the tests read it; building it costs nothing worth a second code path.
    #[cfg_attr(not(test), allow(dead_code))]
    pub report: MergeReport,
}

/// One OpenCC file: `key<TAB>candidate candidate ...`, `#` comments; the first candidate wins.
fn parse(name: &str, text: &str, report: &mut MergeReport) -> Vec<(Vec<char>, Vec<char>)> {
    let mut seen: HashMap<Vec<char>, Vec<char>> = HashMap::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.trim_end_matches('\r');
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((key, values)) = line.split_once('\t') else {
            report.conflicts.push(format!("{name}: line without a tab: {line:?}"));
            continue;
        };
        let Some(first) = values.split(' ').find(|v| !v.is_empty()) else {
            report.conflicts.push(format!("{name}: no candidate for {key:?}"));
            continue;
        };
        let key: Vec<char> = key.chars().collect();
        let first: Vec<char> = first.chars().collect();
        if key.is_empty() || key.len() > MAX_PHRASE_CHARS {
            report.conflicts.push(format!("{name}: unusable key {key:?}"));
            continue;
        }
        if key.len() == 1 && first.len() != 1 {
            report.conflicts.push(format!("{name}: character {key:?} maps to several characters {first:?}"));
            continue;
        }
        match seen.get(&key) {
            Some(prev) if *prev != first => report.conflicts.push(format!(
                "{name}: {} listed twice, as {} and {}",
                key.iter().collect::<String>(),
                prev.iter().collect::<String>(),
                first.iter().collect::<String>()
            )),
            Some(_) => {}
            None => {
                seen.insert(key.clone(), first.clone());
                out.push((key, first));
            }
        }
    }
    out
}

/// A plain dictionary with leftmost-longest conversion, used while merging.
#[derive(Default)]
struct Dict {
    chars: HashMap<char, char>,
    phrases: HashMap<Vec<char>, Vec<char>>,
    longest: usize,
}

impl Dict {
    fn get(&self, key: &[char]) -> Option<Vec<char>> {
        if key.len() == 1 {
            self.chars.get(&key[0]).map(|&c| vec![c])
        } else {
            self.phrases.get(key).cloned()
        }
    }
    fn insert(&mut self, key: Vec<char>, value: Vec<char>) {
        if key.len() == 1 && value.len() == 1 {
            self.chars.insert(key[0], value[0]);
        } else {
            self.longest = self.longest.max(key.len());
            self.phrases.insert(key, value);
        }
    }
    fn convert(&self, s: &[char]) -> Vec<char> {
        let mut out = Vec::with_capacity(s.len());
        let mut i = 0;
        'outer: while i < s.len() {
            let max = self.longest.min(s.len() - i);
            for len in (2..=max).rev() {
                if let Some(v) = self.phrases.get(&s[i..i + len]) {
                    out.extend_from_slice(v);
                    i += len;
                    continue 'outer;
                }
            }
            out.push(self.chars.get(&s[i]).copied().unwrap_or(s[i]));
            i += 1;
        }
        out
    }
}

fn show(chars: &[char]) -> String {
    chars.iter().collect()
}

/// Merge the embedded OpenCC tables into one dictionary (see the module documentation).
pub(crate) fn merge() -> Merged {
    let mut report = MergeReport::default();
    let mut ts = Dict::default();
    for (name, text) in [("TSPhrases", TS_PHRASES), ("TSCharacters", TS_CHARACTERS)] {
        for (k, v) in parse(name, text, &mut report) {
            if let Some(prev) = ts.get(&k) {
                if prev != v {
                    report.conflicts.push(format!("{name}: {} already maps to {}", show(&k), show(&prev)));
                }
                continue;
            }
            ts.insert(k, v);
        }
    }

    // Regional variants, composed with the traditional -> simplified step.
    let mut merged = Dict { chars: ts.chars.clone(), phrases: ts.phrases.clone(), longest: ts.longest };
    let mut variant_source: HashMap<Vec<char>, &str> = HashMap::new();
    let regional = [
        ("TWVariantsRevPhrases", TW_VARIANTS_REV_PHRASES),
        ("TWVariantsRev", TW_VARIANTS_REV),
        ("HKVariantsRevPhrases", HK_VARIANTS_REV_PHRASES),
        ("HKVariantsRev", HK_VARIANTS_REV),
    ];
    for (name, text) in regional {
        for (k, v) in parse(name, text, &mut report) {
            let out = ts.convert(&v);
            if let Some(direct) = ts.get(&k) {
                if direct != out {
                    report.shadowed.push(format!("{}: {} (kept) vs {} ({name})", show(&k), show(&direct), show(&out)));
                }
                continue;
            }
            if k == out {
                // A self-mapping only matters for phrases, which shield their characters.
                if k.len() == 1 {
                    continue;
                }
            }
            match merged.get(&k) {
                Some(prev) if prev != out => report.conflicts.push(format!(
                    "{}: {} ({}) vs {} ({name})",
                    show(&k),
                    show(&prev),
                    variant_source.get(&k).copied().unwrap_or("?"),
                    show(&out)
                )),
                Some(_) => {}
                None => {
                    variant_source.insert(k.clone(), name);
                    merged.insert(k, out);
                }
            }
        }
    }

    // Characters follow their chain to the end so that every output is a fixed point.
    let keys: Vec<char> = merged.chars.keys().copied().collect();
    for k in keys {
        let mut v = merged.chars[&k];
        for _ in 0..8 {
            match merged.chars.get(&v) {
                Some(&w) if w != v => v = w,
                _ => break,
            }
        }
        merged.chars.insert(k, v);
    }

    // Phrase outputs that the table would change again are shielded by a self-mapping.
    for _round in 0..4 {
        let mut added = Vec::new();
        for v in merged.phrases.values() {
            if merged.convert(v) != *v {
                added.push(v.clone());
            }
        }
        if added.is_empty() {
            break;
        }
        added.sort();
        added.dedup();
        for v in added {
            match merged.get(&v) {
                Some(prev) if prev != v => {
                    report.conflicts.push(format!("{}: protected output already maps to {}", show(&v), show(&prev)))
                }
                Some(_) => {}
                None => {
                    report.protected += 1;
                    merged.insert(v.clone(), v);
                }
            }
        }
    }
    report.shadowed.sort();
    report.entries = merged.chars.len() + merged.phrases.len();

    let mut bmp = vec![0u32; 0x1_0000].into_boxed_slice();
    let mut astral: IntMap<u32, u32> = IntMap::default();
    let mut set = |c: char, bits: u32, keep_low: bool| {
        let u = u32::from(c);
        let slot = if u < 0x1_0000 { &mut bmp[u as usize] } else { astral.entry(u).or_insert(0) };
        *slot = if keep_low { *slot | bits } else { (*slot & !MAP_MASK) | bits };
    };
    for (&k, &v) in &merged.chars {
        if k != v {
            set(k, u32::from(v), false);
        }
    }
    let mut phrases: IntMap<u64, Vec<Phrase>> = IntMap::default();
    let mut pair_bits = vec![0u64; 0x1_0000 / 64].into_boxed_slice();
    for (k, v) in merged.phrases {
        set(k[0], PHRASE_START, true);
        let bit = pair_bit(k[0], k[1]);
        pair_bits[bit >> 6] |= 1 << (bit & 63);
        phrases
            .entry(pair_key(k[0], k[1]))
            .or_default()
            .push(Phrase { key: k.into_boxed_slice(), value: v.into_boxed_slice() });
    }
    for list in phrases.values_mut() {
        // Longest first; ties cannot occur because keys are unique.
        list.sort_by(|a, b| b.key.len().cmp(&a.key.len()).then_with(|| a.key.cmp(&b.key)));
    }
    let mut conv_bits = vec![0u64; 0x1_0000 / 64].into_boxed_slice();
    for (u, &e) in bmp.iter().enumerate() {
        if e & MAP_MASK != 0 {
            conv_bits[u >> 6] |= 1 << (u & 63);
        }
    }
    Merged { table: T2s { conv_bits, bmp, astral, pair_bits, phrases }, report }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_key_has_one_destination() {
        let merged = merge();
        assert!(merged.report.conflicts.is_empty(), "conflicting entries: {:#?}", merged.report.conflicts);
        // Where a regional table disagrees with the plain traditional table, the plain one
        // wins; these are the reviewed cases (a change in the data shows up here).
        let shadowed: Vec<&str> = merged.report.shadowed.iter().map(|s| s.split(':').next().unwrap_or("")).collect();
        assert_eq!(shadowed, ["么", "衹", "顎", "鯰"], "{:#?}", merged.report.shadowed);
        assert!(merged.report.entries > 5000, "{}", merged.report.entries);
    }

    #[test]
    fn conversion_is_idempotent_on_every_key() {
        let t = &*T2S;
        let mut broken = Vec::new();
        for key in t.keys() {
            let once = t.convert(&key);
            let twice = t.convert(&once);
            if once != twice {
                broken.push(format!("{key} -> {once} -> {twice}"));
            }
        }
        assert!(broken.is_empty(), "{} keys are not stable: {:?}", broken.len(), &broken[..broken.len().min(20)]);
    }

    /// The bit tests in front of the table answer "keep" for no character that converts
    /// and for no pair that starts a phrase: checked for every entry of the table.
    #[test]
    fn the_bit_tests_keep_nothing_the_table_converts() {
        let t = &*T2S;
        for (u, &e) in t.bmp.iter().enumerate() {
            if e & MAP_MASK != 0 {
                let c = char::from_u32(u as u32).expect("a character");
                assert!(!t.keeps(c, None) && !t.keeps(c, Some('之')), "{c}");
            }
        }
        for (&u, &e) in &t.astral {
            let c = char::from_u32(u).expect("a character");
            assert!(e == 0 || !t.keeps(c, None), "{c}");
        }
        let mut phrases = 0;
        for p in t.phrases.values().flatten() {
            assert!(!t.keeps(p.key[0], Some(p.key[1])), "{}", show(&p.key));
            phrases += 1;
        }
        assert!(phrases > 1000, "{phrases}");
        // And most of a simplified text is kept on the bit tests alone.
        let text: Vec<char> = "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。".chars().collect();
        let kept = text.windows(2).filter(|w| t.keeps(w[0], Some(w[1]))).count();
        assert!(kept * 10 >= (text.len() - 1) * 9, "{kept} of {}", text.len() - 1);
    }

    #[test]
    fn known_conversions() {
        let t = &*T2S;
        for (from, to) in [
            ("頭髮", "头发"),
            ("乾淨", "干净"),
            ("乾隆", "乾隆"),
            ("乾清宮", "乾清宫"),
            ("乾清宫", "乾清宫"),
            ("一目瞭然", "一目了然"),
            ("什麼", "什么"),
            ("什么", "什么"),
            ("看著", "看着"),
            ("顯著", "显著"),
            ("显著", "显著"),
            ("裡面", "里面"),
            ("後來", "后来"),
            ("這個軟體的資料庫", "这个软体的资料库"),
            ("薴", "苎"),
            ("abc 123", "abc 123"),
        ] {
            assert_eq!(t.convert(from), to, "{from}");
        }
    }
}
