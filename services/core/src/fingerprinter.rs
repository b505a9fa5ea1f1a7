//! The whole pipeline for one document: canonicalise, segment once, fingerprint.

use serde::{Deserialize, Serialize};

use crate::canon::{self, CanonicalText, InputFormat};
use crate::dna::{self, DnaSegment, ReferenceFrame};
use crate::hash::hash_bytes;
use crate::initials::InitialStream;
use crate::minhash::{self, MinHasher};
use crate::params::Params;
use crate::segment::{self, Word};
use crate::shingle;
use crate::simhash;
use crate::winnow::{self, WinnowFp};
use crate::CoreError;

/// Runs the pipeline with one set of parameters. Cheap to share across threads.
#[derive(Debug, Clone)]
pub struct Fingerprinter {
    params: Params,
    tag: String,
    frame: ReferenceFrame,
    minhasher: MinHasher,
}

/// The normalised characters of the canonical text that character-level winnowing runs
/// over: letters, digits and Han characters, with their canonical positions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CharStream {
    /// The characters as code points.
    pub units: Vec<u32>,
    /// For each unit, its character offset in the canonical text.
    pub positions: Vec<u32>,
}

impl CharStream {
    /// Content characters inside the canonical range `start..end`.
    pub fn count(&self, start: u32, end: u32) -> usize {
        let (lo, hi) = self.range(start, end);
        hi - lo
    }

    /// The units inside the canonical range `start..end`.
    pub fn slice(&self, start: u32, end: u32) -> &[u32] {
        let (lo, hi) = self.range(start, end);
        &self.units[lo..hi]
    }

    /// The half-open range of units inside the canonical range `start..end`.
    pub fn range(&self, start: u32, end: u32) -> (usize, usize) {
        let lo = self.positions.partition_point(|&p| p < start);
        let hi = self.positions.partition_point(|&p| p < end).max(lo);
        (lo, hi)
    }

    /// The stream of `text`.
    pub fn of(text: &str) -> Self {
        let mut units = Vec::with_capacity(text.len() / 3);
        let mut positions = Vec::with_capacity(text.len() / 3);
        for (i, c) in text.chars().enumerate() {
            if crate::segment::is_alphanumeric_fast(c) {
                units.push(c as u32);
                positions.push(i as u32);
            }
        }
        CharStream { units, positions }
    }

    /// The stream of this stream's text with the characters at the canonical offsets
    /// `blanked` (ascending) replaced by spaces ([`CanonicalText::into_blanked`]): their
    /// units dropped, the others kept where they were (a unit depends on its character
    /// alone).
    pub fn without(self, blanked: &[u32]) -> Self {
        let mut next = blanked.iter().copied().peekable();
        let (units, positions) = self
            .units
            .into_iter()
            .zip(self.positions)
            .filter(|&(_, pos)| {
                while next.next_if(|&b| b < pos).is_some() {}
                next.peek() != Some(&pos)
            })
            .unzip();
        CharStream { units, positions }
    }
}

/// [`InitialStream::of`] and [`CharStream::of`] of `text` in one pass over its characters.
fn unit_streams(text: &str) -> (InitialStream, CharStream) {
    let mut initials =
        InitialStream { letters: Vec::with_capacity(text.len() / 3), positions: Vec::with_capacity(text.len() / 3) };
    let mut chars =
        CharStream { units: Vec::with_capacity(text.len() / 3), positions: Vec::with_capacity(text.len() / 3) };
    for (i, c) in text.chars().enumerate() {
        if let Some(l) = crate::initials::initial_of(c) {
            initials.letters.push(l);
            initials.positions.push(i as u32);
        }
        if crate::segment::is_alphanumeric_fast(c) {
            chars.units.push(c as u32);
            chars.positions.push(i as u32);
        }
    }
    (initials, chars)
}

/// Every fingerprint of one document, tagged with the parameters that produced them.
///
/// This is what the stores persist (a registered section's without its word shingles,
/// [`Fingerprints::without_word_shingles`]) and the index keys are derived from.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Fingerprints {
    /// [`Params::tag`] of the parameters used.
    pub params_tag: String,
    /// Characters of canonical text.
    pub char_count: u32,
    /// Han characters (letters of the initial stream).
    pub han_count: u32,
    /// Content words.
    pub token_count: u32,
    /// Hash of the canonical text: equal hashes mean identical canonical texts.
    pub content_hash: u64,
    /// Simhash-64 of the TF-IDF weighted words.
    pub simhash: u64,
    /// DNA segment fingerprints.
    pub dna: Vec<DnaSegment>,
    /// Sorted, deduplicated word-shingle hashes (the full set; samples derive from it).
    pub shingles: Vec<u64>,
    /// MinHash signature.
    pub minhash: Vec<u64>,
    /// Super-shingles of the signature.
    pub super_shingles: Vec<u64>,
    /// Mega-shingles (pairs of super-shingles).
    pub mega_shingles: Vec<u64>,
    /// LSH band keys of the signature.
    pub lsh_bands: Vec<u64>,
    /// Winnowed fingerprints of the pinyin-initial stream.
    pub winnow_initials: Vec<WinnowFp>,
    /// Winnowed fingerprints of the normalised characters.
    pub winnow_chars: Vec<WinnowFp>,
}

/// The fingerprint families the candidate index stores.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IndexFamily {
    /// Simhash 16-bit block keys (pigeonhole index, k = 3).
    SimhashBlock,
    /// DNA segment codes.
    Dna,
    /// Mega-shingles.
    MegaShingle,
    /// LSH band keys.
    LshBand,
    /// Winnowed pinyin-initial k-grams.
    WinnowInitials,
    /// Winnowed character k-grams.
    WinnowChars,
}

impl IndexFamily {
    /// Every family, in a fixed order.
    pub const ALL: [IndexFamily; 6] = [
        IndexFamily::SimhashBlock,
        IndexFamily::Dna,
        IndexFamily::MegaShingle,
        IndexFamily::LshBand,
        IndexFamily::WinnowInitials,
        IndexFamily::WinnowChars,
    ];

    /// Short stable name (used in keys, metrics and reports).
    pub fn as_str(self) -> &'static str {
        match self {
            IndexFamily::SimhashBlock => "simhash",
            IndexFamily::Dna => "dna",
            IndexFamily::MegaShingle => "mega",
            IndexFamily::LshBand => "lsh",
            IndexFamily::WinnowInitials => "wi",
            IndexFamily::WinnowChars => "wc",
        }
    }

    /// A winnowed family (characters or pinyin initials): the keys a candidate worth
    /// verifying must share, and the only ones sampled and indexed per page.
    pub fn is_winnowed(self) -> bool {
        matches!(self, IndexFamily::WinnowInitials | IndexFamily::WinnowChars)
    }

    /// One-byte stable code (for compact binary keys).
    pub fn code(self) -> u8 {
        match self {
            IndexFamily::SimhashBlock => 1,
            IndexFamily::Dna => 2,
            IndexFamily::MegaShingle => 3,
            IndexFamily::LshBand => 4,
            IndexFamily::WinnowInitials => 5,
            IndexFamily::WinnowChars => 6,
        }
    }

    /// The family with this [`IndexFamily::code`].
    pub fn from_code(code: u8) -> Option<Self> {
        IndexFamily::ALL.into_iter().find(|f| f.code() == code)
    }
}

/// One entry a document contributes to the candidate index.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct IndexKey {
    /// Which family.
    pub family: IndexFamily,
    /// The key value within the family.
    pub value: u64,
}

impl Fingerprints {
    /// A copy without the word shingles ([`Fingerprints::shingles`] empty): what a store
    /// keeps of a registered section. Nothing reads them back from a store (a comparison
    /// uses the analysis, and the index keys do not include them), and they were a third
    /// of every stored record.
    pub fn without_word_shingles(&self) -> Fingerprints {
        Fingerprints {
            params_tag: self.params_tag.clone(),
            char_count: self.char_count,
            han_count: self.han_count,
            token_count: self.token_count,
            content_hash: self.content_hash,
            simhash: self.simhash,
            dna: self.dna.clone(),
            shingles: Vec::new(),
            minhash: self.minhash.clone(),
            super_shingles: self.super_shingles.clone(),
            mega_shingles: self.mega_shingles.clone(),
            lsh_bands: self.lsh_bands.clone(),
            winnow_initials: self.winnow_initials.clone(),
            winnow_chars: self.winnow_chars.clone(),
        }
    }

    /// The distinct index keys of this document, sorted.
    pub fn index_keys(&self) -> Vec<IndexKey> {
        self.index_keys_of(|_| true)
    }

    /// The distinct index keys of the families `families` accepts, sorted: those of
    /// [`Fingerprints::index_keys`] of these families, without listing and sorting the
    /// others' (a page's winnowed keys are thousands; its other families' a few dozen).
    pub fn index_keys_of(&self, families: impl Fn(IndexFamily) -> bool) -> Vec<IndexKey> {
        let mut keys = Vec::with_capacity(
            4 + self.dna.len()
                + self.mega_shingles.len()
                + self.lsh_bands.len()
                + self.winnow_initials.len()
                + self.winnow_chars.len(),
        );
        // One family at a time, in the order of `IndexFamily`: each family's values sorted
        // as integers make the keys sorted as (family, value) pairs. Sorting the pairs was
        // nine tenths of this function, and it runs for every page looked up.
        let mut values: Vec<u64> = Vec::new();
        let mut family = |family: IndexFamily, of: &mut dyn Iterator<Item = u64>| {
            if !families(family) {
                return;
            }
            values.clear();
            values.extend(of);
            values.sort_unstable();
            values.dedup();
            keys.extend(values.iter().map(|&value| IndexKey { family, value }));
        };
        if self.token_count > 0 {
            family(IndexFamily::SimhashBlock, &mut simhash::block_keys_4x16(self.simhash).into_iter());
        }
        family(IndexFamily::Dna, &mut self.dna.iter().map(|s| s.code));
        family(IndexFamily::MegaShingle, &mut self.mega_shingles.iter().copied());
        family(IndexFamily::LshBand, &mut self.lsh_bands.iter().copied());
        family(IndexFamily::WinnowInitials, &mut self.winnow_initials.iter().map(|f| f.hash));
        family(IndexFamily::WinnowChars, &mut self.winnow_chars.iter().map(|f| f.hash));
        debug_assert!(keys.windows(2).all(|w| w[0] < w[1]), "families in the order of IndexFamily");
        keys
    }

    /// The winnowed keys (characters and initials) folded to 32 bits, sorted and
    /// deduplicated: a compact form of the winnowed index keys (4 bytes a key instead of
    /// the stored record's 12, and none of its other lists), for counting the keys two
    /// texts share ([`crate::shingle::intersection_size`]). The initials' keys are salted
    /// so that the two families fold apart; two distinct keys fold together by chance with
    /// a probability of about 2^-32 per pair.
    pub fn winnowed_digest(&self) -> Vec<u32> {
        const INITIALS_SALT: u64 = 0x9e37_79b9_7f4a_7c15;
        let fold = |h: u64| (h ^ (h >> 32)) as u32;
        let mut out: Vec<u32> = self
            .winnow_chars
            .iter()
            .map(|f| fold(f.hash))
            .chain(self.winnow_initials.iter().map(|f| fold(f.hash ^ INITIALS_SALT)))
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }
}

/// Everything the pipeline knows about one document: the canonical text with its map
/// to the original, the words of its one segmentation, the unit streams, and the
/// fingerprints.
#[derive(Debug, Clone)]
pub struct Analysis {
    /// Canonical text and offset map.
    pub canonical: CanonicalText,
    /// Content words (one segmentation), where they are and their weights.
    pub words: Vec<Word>,
    /// Pinyin-initial stream.
    pub initials: InitialStream,
    /// Normalised character stream.
    pub chars: CharStream,
    /// The fingerprints.
    pub fingerprints: Fingerprints,
}

impl Analysis {
    /// Bytes this analysis holds on the heap (capacities, not lengths): what keeping it in
    /// a cache costs.
    pub fn heap_bytes(&self) -> usize {
        fn vec<T>(v: &Vec<T>) -> usize {
            v.capacity() * std::mem::size_of::<T>()
        }
        let f = &self.fingerprints;
        self.canonical.heap_bytes()
            + vec(&self.words)
            + vec(&self.initials.letters)
            + vec(&self.initials.positions)
            + vec(&self.chars.units)
            + vec(&self.chars.positions)
            + f.params_tag.capacity()
            + vec(&f.dna)
            + vec(&f.shingles)
            + vec(&f.minhash)
            + vec(&f.super_shingles)
            + vec(&f.mega_shingles)
            + vec(&f.lsh_bands)
            + vec(&f.winnow_initials)
            + vec(&f.winnow_chars)
    }

    /// Has the word stage run (see [`Fingerprinter::analyze_streams`])? The MinHash
    /// signature has its configured number of values once it has, and none before.
    pub fn is_complete(&self) -> bool {
        !self.fingerprints.minhash.is_empty()
    }

    /// The pinyin-initial letters as winnowing units.
    pub fn initial_units(&self) -> Vec<u32> {
        self.initials.letters.iter().map(|&l| l as u32).collect()
    }
}

impl Fingerprinter {
    /// A fingerprinter with validated parameters and the shipped DNA reference frame.
    pub fn new(params: Params) -> Result<Self, CoreError> {
        Self::with_frame(params, ReferenceFrame::builtin().clone())
    }

    /// A fingerprinter with an explicit DNA reference frame.
    pub fn with_frame(params: Params, frame: ReferenceFrame) -> Result<Self, CoreError> {
        params.validate()?;
        let tag = params.tag();
        let minhasher = MinHasher::new(params.minhash.functions);
        Ok(Fingerprinter { params, tag, frame, minhasher })
    }

    /// The parameters.
    pub fn params(&self) -> &Params {
        &self.params
    }

    /// The parameter tag stored with every fingerprint.
    pub fn params_tag(&self) -> &str {
        &self.tag
    }

    /// Analyse raw bytes (any supported charset; HTML or text). `hint` is an optional
    /// charset label (HTTP header).
    pub fn analyze_bytes(&self, bytes: &[u8], format: InputFormat, hint: Option<&str>) -> Result<Analysis, CoreError> {
        let canonical = canon::canonicalize_with_hint(bytes, format, hint, &self.params.canon)?;
        Ok(self.analyze_canonical(canonical))
    }

    /// Analyse text that is already decoded.
    pub fn analyze_text(&self, text: &str, format: InputFormat) -> Result<Analysis, CoreError> {
        Ok(self.analyze_canonical(canon::canonicalize_str(text, format, &self.params.canon)?))
    }

    /// The first stage of [`Fingerprinter::analyze_text`] only: the canonical text, the
    /// unit streams and the winnowed fingerprints, which is all a passage search
    /// ([`crate::compare::evidence_passages_with`]) reads. No word segmentation (most of
    /// the cost of an analysis): `words` and the word-based fingerprints (simhash, DNA,
    /// shingles and what derives from them) stay empty until [`Fingerprinter::complete`].
    /// A matcher can so rule out a candidate cheaply and complete only the others.
    pub fn analyze_streams(&self, text: &str, format: InputFormat) -> Result<Analysis, CoreError> {
        Ok(self.streams_of(canon::canonicalize_str(text, format, &self.params.canon)?))
    }

    /// [`Fingerprinter::analyze_streams`] of raw bytes, decoded as
    /// [`Fingerprinter::analyze_bytes`] decodes them.
    pub fn analyze_bytes_streams(
        &self,
        bytes: &[u8],
        format: InputFormat,
        hint: Option<&str>,
    ) -> Result<Analysis, CoreError> {
        let canonical = canon::canonicalize_with_hint(bytes, format, hint, &self.params.canon)?;
        Ok(self.streams_of(canonical))
    }

    /// Complete an analysis made by [`Fingerprinter::analyze_streams`]: the result equals
    /// what [`Fingerprinter::analyze_text`] gives for the same text. A complete analysis
    /// is returned as it is.
    pub fn complete(&self, analysis: Analysis) -> Analysis {
        if analysis.is_complete() {
            return analysis;
        }
        let p = &self.params;
        let Analysis { canonical, initials, chars, mut fingerprints, .. } = analysis;
        let tokens = segment::segment(canonical.text(), &p.segment);
        let shingles = shingle::shingles(&tokens, p.shingle.width);
        let signature = self.minhasher.signature(&shingles);
        fingerprints.super_shingles = minhash::super_shingles(&signature, p.minhash.super_shingles);
        fingerprints.mega_shingles = minhash::mega_shingles(&fingerprints.super_shingles);
        fingerprints.lsh_bands = minhash::lsh_bands(&signature, p.minhash.bands, p.minhash.rows);
        fingerprints.token_count = tokens.len() as u32;
        fingerprints.simhash = simhash::simhash(&tokens);
        fingerprints.dna = dna::dna_fingerprint(&initials.letters, &p.dna, &self.frame);
        fingerprints.shingles = shingles;
        fingerprints.minhash = signature;
        // Sized exactly: the token list was sized for the longest text of its length.
        let words = tokens.iter().map(Word::from).collect();
        Analysis { canonical, words, initials, chars, fingerprints }
    }

    /// How many non-winnowed index keys ([`Fingerprints::index_keys`]) the complete
    /// analysis of `analysis` has, known before its word stage: `(with_words,
    /// without_words)`. The DNA codes come from the pinyin-initial stream and the MinHash
    /// families (mega-shingles, LSH bands) have as many values as the parameters say,
    /// whatever the text; only the four simhash blocks depend on whether the text has
    /// content words, which the word stage finds. A matcher uses it to sample a page's
    /// winnowed keys as the whole query will be sampled, before deciding whether the page
    /// needs its word stage at all. (Equal hashes of different MinHash groups or bands
    /// would be counted twice: a 2^-64 event.)
    pub fn coarse_key_counts(&self, analysis: &Analysis) -> (usize, usize) {
        let p = &self.params.minhash;
        let dna = if analysis.is_complete() {
            analysis.fingerprints.dna.iter().map(|s| s.code).collect::<std::collections::HashSet<u64>>().len()
        } else {
            dna::dna_fingerprint(&analysis.initials.letters, &self.params.dna, &self.frame)
                .iter()
                .map(|s| s.code)
                .collect::<std::collections::HashSet<u64>>()
                .len()
        };
        let groups = if p.super_shingles > 0 && p.functions > 0 { p.super_shingles } else { 0 };
        let mega = groups * groups.saturating_sub(1) / 2;
        let bands = (0..p.bands).filter(|b| (b + 1) * p.rows <= p.functions).count();
        let without = dna + mega + bands;
        (without + 4, without)
    }

    /// Fingerprint an already canonicalised text.
    pub fn analyze_canonical(&self, canonical: CanonicalText) -> Analysis {
        self.complete(self.streams_of(canonical))
    }

    /// [`Fingerprinter::analyze_streams`] of an already canonicalised text.
    pub fn analyze_canonical_streams(&self, canonical: CanonicalText) -> Analysis {
        self.streams_of(canonical)
    }

    /// [`Fingerprinter::analyze_canonical_streams`] of a text whose character stream was
    /// made already (`chars`, [`CharStream::of`] its text; the same analysis): a
    /// matcher looks for a page's boilerplate in that stream alone, and analyses the
    /// page as it is only when it finds none.
    pub fn analyze_canonical_streams_with(&self, canonical: CanonicalText, chars: CharStream) -> Analysis {
        debug_assert_eq!(chars, CharStream::of(canonical.text()));
        let initials = InitialStream::of(canonical.text());
        self.streams_from(canonical, initials, chars)
    }

    fn streams_of(&self, canonical: CanonicalText) -> Analysis {
        let (initials, chars) = unit_streams(canonical.text());
        self.streams_from(canonical, initials, chars)
    }

    fn streams_from(&self, canonical: CanonicalText, initials: InitialStream, chars: CharStream) -> Analysis {
        let p = &self.params;
        let text = canonical.text();
        let fingerprints = Fingerprints {
            params_tag: self.tag.clone(),
            char_count: canonical.char_len() as u32,
            han_count: initials.len() as u32,
            token_count: 0,
            content_hash: hash_bytes(text.as_bytes()),
            simhash: 0,
            dna: Vec::new(),
            shingles: Vec::new(),
            minhash: Vec::new(),
            super_shingles: Vec::new(),
            mega_shingles: Vec::new(),
            lsh_bands: Vec::new(),
            winnow_initials: winnow::winnow(&initials.letters, p.winnow.initials_k, p.winnow.initials_window),
            winnow_chars: winnow::winnow(&chars.units, p.winnow.chars_k, p.winnow.chars_window),
        };
        Analysis { canonical, words: Vec::new(), initials, chars, fingerprints }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_then_completion_equals_the_whole_analysis() {
        let fp = Fingerprinter::new(Params::default()).unwrap();
        for text in
            ["中華人民共和國 ABC 123，「龍」！\n第二段", include_str!("../../../samples/hongloumeng-01.txt"), "x"]
        {
            let whole = fp.analyze_text(text, InputFormat::Text).unwrap();
            let streams = fp.analyze_streams(text, InputFormat::Text).unwrap();
            assert!(whole.is_complete() && !streams.is_complete());
            assert_eq!(streams.fingerprints.winnow_chars, whole.fingerprints.winnow_chars);
            assert_eq!(streams.fingerprints.content_hash, whole.fingerprints.content_hash);
            assert!(streams.words.is_empty() && streams.fingerprints.shingles.is_empty());
            let completed = fp.complete(streams);
            assert_eq!(completed.fingerprints, whole.fingerprints);
            assert_eq!(format!("{:?}", completed), format!("{:?}", whole));
            assert_eq!(fp.complete(whole.clone()).fingerprints, whole.fingerprints);
        }
        assert!(fp.analyze_streams("", InputFormat::Text).is_err());
        // Raw bytes, decoded and stripped of markup as a whole analysis does.
        let gbk = encoding_rs::GBK.encode("<html><body><p>中华人民共和国</p><p>第二段文字</p></body></html>").0;
        let whole = fp.analyze_bytes(&gbk, InputFormat::Auto, None).unwrap();
        let streams = fp.analyze_bytes_streams(&gbk, InputFormat::Auto, None).unwrap();
        assert_eq!(format!("{:?}", fp.complete(streams)), format!("{:?}", whole));
    }

    /// The keys are every family's values, sorted and distinct as (family, value) pairs:
    /// what sorting all the pairs gives.
    #[test]
    fn index_keys_are_the_sorted_distinct_pairs() {
        let fp = Fingerprinter::new(Params::default()).unwrap();
        let sample = include_str!("../../../samples/hongloumeng-01.txt");
        let mut complete = fp.analyze_text(sample, InputFormat::Text).unwrap().fingerprints;
        // Values repeated within a family and shared across families.
        complete.lsh_bands.extend(complete.lsh_bands.clone());
        complete.mega_shingles.push(complete.lsh_bands[0]);
        complete.winnow_chars.extend(complete.winnow_initials.clone());
        let streams =
            fp.analyze_streams(&sample.chars().take(1000).collect::<String>(), InputFormat::Text).unwrap().fingerprints;
        for f in [complete, streams, Fingerprints::default()] {
            let mut pairs: Vec<IndexKey> = Vec::new();
            let mut push =
                |family, values: Vec<u64>| pairs.extend(values.into_iter().map(|value| IndexKey { family, value }));
            if f.token_count > 0 {
                push(IndexFamily::SimhashBlock, simhash::block_keys_4x16(f.simhash).to_vec());
            }
            push(IndexFamily::Dna, f.dna.iter().map(|s| s.code).collect());
            push(IndexFamily::MegaShingle, f.mega_shingles.clone());
            push(IndexFamily::LshBand, f.lsh_bands.clone());
            push(IndexFamily::WinnowChars, f.winnow_chars.iter().map(|w| w.hash).collect());
            push(IndexFamily::WinnowInitials, f.winnow_initials.iter().map(|w| w.hash).collect());
            pairs.sort_unstable();
            pairs.dedup();
            assert_eq!(f.index_keys(), pairs);
            // Some families only: the same keys as filtering them all.
            let winnowed: Vec<IndexKey> = pairs.iter().copied().filter(|k| k.family.is_winnowed()).collect();
            assert_eq!(f.index_keys_of(IndexFamily::is_winnowed), winnowed);
            let coarse: Vec<IndexKey> = pairs.iter().copied().filter(|k| !k.family.is_winnowed()).collect();
            assert_eq!(f.index_keys_of(|family| !family.is_winnowed()), coarse);
        }
    }

    /// Streams made from a character stream made beforehand are the streams made at once.
    #[test]
    fn streams_with_a_given_character_stream_are_the_same_streams() {
        let fp = Fingerprinter::new(Params::default()).unwrap();
        let html = "<html><body><p>中華人民共和國 ABC 123，「龍」！</p><p>第二段文字</p></body></html>";
        for (text, format) in [
            (include_str!("../../../samples/hongloumeng-01.txt"), InputFormat::Text),
            (html, InputFormat::Html),
            ("x", InputFormat::Text),
        ] {
            let canonical = canon::canonicalize_str(text, format, &fp.params().canon).unwrap();
            let chars = CharStream::of(canonical.text());
            let given = fp.analyze_canonical_streams_with(canonical.clone(), chars);
            let at_once = fp.analyze_canonical_streams(canonical);
            assert_eq!(format!("{given:?}"), format!("{at_once:?}"));
            assert!(!given.initials.letters.is_empty() || text == "x");
        }
    }

    /// The digest counts what the winnowed index keys count: the distinct winnowed keys
    /// two texts share, family by family.
    #[test]
    fn the_winnowed_digest_counts_the_shared_winnowed_keys() {
        let fp = Fingerprinter::new(Params::default()).unwrap();
        let sample = include_str!("../../../samples/hongloumeng-01.txt");
        let chars: Vec<char> = sample.chars().collect();
        let part = |from: usize, len: usize| -> String { chars[from..from + len].iter().collect() };
        let winnowed = |f: &Fingerprints| -> Vec<IndexKey> {
            f.index_keys()
                .into_iter()
                .filter(|k| matches!(k.family, IndexFamily::WinnowChars | IndexFamily::WinnowInitials))
                .collect()
        };
        let section = fp.analyze_streams(&part(0, 1500), InputFormat::Text).unwrap().fingerprints;
        let digest = section.winnowed_digest();
        assert!(digest.windows(2).all(|w| w[0] < w[1]), "sorted and deduplicated");
        assert_eq!(digest.len(), winnowed(&section).len());
        let mut shared_counts = Vec::new();
        for page in [part(0, 1500), part(1000, 1500), part(200, 120), part(3000, 2000)] {
            let page = fp.analyze_streams(&page, InputFormat::Text).unwrap().fingerprints;
            let keys = winnowed(&page);
            let expected = winnowed(&section).iter().filter(|k| keys.binary_search(k).is_ok()).count();
            assert_eq!(crate::shingle::intersection_size(&digest, &page.winnowed_digest()), expected);
            shared_counts.push(expected);
        }
        // The whole section, half of it, a short excerpt, nothing.
        assert!(shared_counts[0] > shared_counts[1] && shared_counts[1] > shared_counts[2] && shared_counts[2] >= 5);
        assert!(shared_counts[3] < 5, "{shared_counts:?}");
    }

    #[test]
    fn the_coarse_key_count_is_known_before_the_word_stage() {
        let fp = Fingerprinter::new(Params::default()).unwrap();
        let sample = include_str!("../../../samples/hongloumeng-01.txt");
        let cut: String = sample.chars().take(300).collect();
        for text in [sample, cut.as_str(), "中華人民共和國 ABC 123，「龍」！\n第二段", "的了是", "abc def"]
        {
            let streams = fp.analyze_streams(text, InputFormat::Text).unwrap();
            let complete = fp.complete(streams.clone());
            let coarse = complete
                .fingerprints
                .index_keys()
                .iter()
                .filter(|k| !matches!(k.family, IndexFamily::WinnowChars | IndexFamily::WinnowInitials))
                .count();
            let (with_words, without_words) = fp.coarse_key_counts(&streams);
            let expected = if complete.fingerprints.token_count > 0 { with_words } else { without_words };
            assert_eq!(coarse, expected, "{text:?}");
            assert_eq!(fp.coarse_key_counts(&complete), (with_words, without_words), "{text:?}");
        }
    }

    #[test]
    fn the_fused_pass_gives_both_streams() {
        for text in [
            "",
            "abc",
            "中華人民共和國 ABC 123，「龍」！\n第二段 x²",
            include_str!("../../../samples/hongloumeng-01.txt"),
        ] {
            let (initials, chars) = unit_streams(text);
            assert_eq!(initials, InitialStream::of(text));
            assert_eq!(chars, CharStream::of(text));
        }
    }

    proptest::proptest! {
        /// The stream of a blanked text is the stream of the text without the blanked
        /// characters' units: a matcher blanks boilerplate without reading the text again.
        #[test]
        fn a_blanked_texts_stream_drops_the_blanked_units(
            text in "[a-z0-9中文字臺灣，。\n ]{1,40}",
            blanked in proptest::collection::vec(0u32..45, 0..12),
        ) {
            let mut blanked = blanked;
            blanked.sort_unstable();
            let Ok(canonical) = canon::canonicalize_str(&text, InputFormat::Text, &Default::default()) else {
                return Ok(());
            };
            let stream = CharStream::of(canonical.text());
            let blanked_text = canonical.into_blanked(&blanked);
            proptest::prop_assert_eq!(stream.without(&blanked), CharStream::of(blanked_text.text()));
        }
    }
}
