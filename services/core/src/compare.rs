//! Pairwise comparison of two analysed documents: every measure of the brief, a
//! verdict, and the copied passages quoted from both originals.
//!
//! The JSON form of [`Comparison`] is the stable contract of `zhiwen compare --json`
//! (documented in `docs/compare-json.md`): fields are only ever added.

use rustc_hash::FxHashSet;
use serde::{Deserialize, Serialize};

use crate::dna;
use crate::fingerprinter::{Analysis, CharStream};
use crate::formulaic;
use crate::minhash;
use crate::params::Params;
use crate::shingle::SetMeasures;
use crate::simhash;
use crate::winnow::{self, FingerprintIndex, Passage, PassageOptions};

/// Decision thresholds. Defaults are chosen on the evaluation set (`docs/evaluation.md`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Thresholds {
    /// Containment (the best of the word-shingle, initial-winnowing and evidence
    /// measures) at or above which one text is taken to appear inside the other.
    pub containment: f64,
    /// Both containments at or above this make the pair near-duplicates.
    pub near_duplicate: f64,
    /// Fewer copied characters than this never count as a copy, whatever the ratios
    /// (short texts share common phrases by chance).
    pub min_copied_chars: usize,
    /// The shortest excerpt reported: copied passages of at least this many characters
    /// that are a small part of both texts are a copy when they cover at least
    /// `min_excerpt_share` of one of the two texts (an excerpt of a story quoted inside
    /// an unrelated page).
    pub min_excerpt_chars: usize,
    /// Share of the section or of the page (content characters) an excerpt shorter than
    /// `long_excerpt_chars` must cover. Passages a novel repeats between its own chapters
    /// (a formula of 350 characters in a chapter of 7,000) stay below it.
    pub min_excerpt_share: f64,
    /// Copied passages of at least this many characters are a copy whatever share of
    /// the two texts they are (a long quote inside a long page).
    pub long_excerpt_chars: usize,
}

impl Default for Thresholds {
    /// Chosen on the evaluation set with the real pipeline (`zhiwen eval`, tuning seeds
    /// 11-13; `docs/parameters.md` gives the reasoning and `docs/evaluation.md` the
    /// results on the held-out seeds 1-3).
    fn default() -> Self {
        Thresholds {
            containment: 0.5,
            near_duplicate: 0.8,
            min_copied_chars: 50,
            min_excerpt_chars: 100,
            min_excerpt_share: 0.15,
            long_excerpt_chars: 500,
        }
    }
}

/// What the pair is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum VerdictKind {
    /// The canonical texts are equal.
    Identical,
    /// Most of each text is in the other.
    NearDuplicate,
    /// A (most of it, or a passage of at least `min_excerpt_chars`) appears inside B.
    AWithinB,
    /// B (most of it, or a passage of at least `min_excerpt_chars`) appears inside A.
    BWithinA,
    /// Not a copy.
    Unrelated,
}

impl VerdictKind {
    /// Stable snake_case name (as in JSON).
    pub fn as_str(self) -> &'static str {
        match self {
            VerdictKind::Identical => "identical",
            VerdictKind::NearDuplicate => "near_duplicate",
            VerdictKind::AWithinB => "a_within_b",
            VerdictKind::BWithinA => "b_within_a",
            VerdictKind::Unrelated => "unrelated",
        }
    }
}

/// The decision.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Verdict {
    /// Is one a copy of (part of) the other?
    pub duplicate: bool,
    /// What kind of copy.
    pub kind: VerdictKind,
    /// Confidence-like score in 0..=1 (the containment that decided).
    pub score: f64,
}

/// One copied passage, located in both ORIGINAL inputs (character offsets, half-open).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Evidence {
    /// Start in original A.
    pub a_start: usize,
    /// End in original A (exclusive).
    pub a_end: usize,
    /// Start in original B.
    pub b_start: usize,
    /// End in original B (exclusive).
    pub b_end: usize,
    /// `original_a[a_start..a_end]`.
    pub a_text: String,
    /// `original_b[b_start..b_end]`.
    pub b_text: String,
    /// Length of the passage in canonical characters of A.
    pub chars: usize,
}

/// Every measure between two documents.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Comparison {
    /// Word-shingle Jaccard resemblance.
    pub resemblance: f64,
    /// Word-shingle containment of A in B.
    pub containment_ab: f64,
    /// Word-shingle containment of B in A.
    pub containment_ba: f64,
    /// Word-shingle Dice coefficient.
    pub dice: f64,
    /// Resemblance on the "divisible by m" sample.
    pub sample_mod_resemblance: f64,
    /// Resemblance on the "n smallest" sample.
    pub sample_smallest_resemblance: f64,
    /// Hamming distance of the simhash signatures.
    pub simhash_distance: u32,
    /// Near-duplicate by simhash (distance <= k).
    pub simhash_near: bool,
    /// DNA score: the larger of the two DNA containments.
    pub dna_score: f64,
    /// Share of A's DNA segments found in B.
    pub dna_containment_ab: f64,
    /// Share of B's DNA segments found in A.
    pub dna_containment_ba: f64,
    /// MinHash estimate of the resemblance.
    pub minhash_similarity: f64,
    /// Equal super-shingles.
    pub super_shingle_matches: usize,
    /// At least one mega-shingle equal (>= 2 super-shingles).
    pub megashingle_match: bool,
    /// At least one LSH band equal.
    pub lsh_candidate: bool,
    /// Share of A's winnowed pinyin-initial fingerprints found in B.
    pub winnow_containment_ab: f64,
    /// Share of B's winnowed pinyin-initial fingerprints found in A.
    pub winnow_containment_ba: f64,
    /// Share of A's winnowed character fingerprints found in B.
    pub winnow_chars_containment_ab: f64,
    /// Share of B's winnowed character fingerprints found in A.
    pub winnow_chars_containment_ba: f64,
    /// Share of A's canonical characters covered by evidence passages.
    pub evidence_coverage_a: f64,
    /// Share of B's canonical characters covered by evidence passages.
    pub evidence_coverage_b: f64,
    /// Content characters (letters, digits, Han) inside evidence passages, counted on
    /// both sides and the smaller count kept (a passage one side repeats counts once).
    pub copied_chars: usize,
    /// [`Comparison::copied_chars`] with text that repeats inside the passages counted
    /// once (a character counts when the run of `winnow.chars_k` characters ending at it
    /// is new), on both sides, the smaller count kept. A slogan both texts repeat ten
    /// times is one slogan of evidence: this, not `copied_chars`, is what the excerpt
    /// rule weighs. Natural text hardly repeats a run of 8 characters, so for a real
    /// copy the two counts are close.
    #[serde(default)]
    pub distinct_copied_chars: usize,
    /// The decision.
    pub verdict: Verdict,
    /// Copied passages, in order of A.
    pub evidence: Vec<Evidence>,
    /// Why the verdict was reached: per evidence passage, its prose, how rare its words
    /// are and what differed inside it ([`formulaic::render`] writes it for a reviewer).
    #[serde(default)]
    pub explanation: formulaic::Explanation,
}

impl Comparison {
    /// How much of A is inside B, as the verdict measures it: the largest of the word
    /// containment, the pinyin-initial winnowing containment and the evidence coverage.
    pub fn a_inside_b(&self) -> f64 {
        inside(self.containment_ab, self.winnow_containment_ab, self.evidence_coverage_a)
    }

    /// How much of B is inside A ([`Comparison::a_inside_b`] the other way).
    pub fn b_inside_a(&self) -> f64 {
        inside(self.containment_ba, self.winnow_containment_ba, self.evidence_coverage_b)
    }
}

/// One text inside the other: word containment (exact copies), winnowing over initials
/// (homophones and script conversion), evidence coverage (edited copies whose k-grams
/// break often).
fn inside(words: f64, winnow_initials: f64, evidence_coverage: f64) -> f64 {
    words.max(winnow_initials).max(evidence_coverage)
}

/// Compare two analysed documents (analysed with the same parameters).
pub fn compare(a: &Analysis, b: &Analysis, params: &Params, thresholds: &Thresholds) -> Comparison {
    compare_with(a, b, &PassageIndex::new(b), params, thresholds)
}

/// [`compare`] with B's passage index made once (`b_index`, made from `b`): the same
/// comparison, for a caller that compares many documents with one B.
pub fn compare_with(
    a: &Analysis,
    b: &Analysis,
    b_index: &PassageIndex,
    params: &Params,
    thresholds: &Thresholds,
) -> Comparison {
    let (fa, fb) = (&a.fingerprints, &b.fingerprints);
    let words = SetMeasures::of(&fa.shingles, &fb.shingles);
    let sample_mod = SetMeasures::of(
        &crate::shingle::sample_mod(&fa.shingles, params.shingle.sample_modulus),
        &crate::shingle::sample_mod(&fb.shingles, params.shingle.sample_modulus),
    );
    let smallest_a = crate::shingle::sample_smallest(&fa.shingles, params.shingle.sample_smallest);
    let smallest_b = crate::shingle::sample_smallest(&fb.shingles, params.shingle.sample_smallest);
    let sample_smallest = smallest_resemblance(&fa.shingles, &fb.shingles, smallest_a.len().max(smallest_b.len()));
    let simhash_distance = simhash::hamming(fa.simhash, fb.simhash);
    let dna_ab = dna::dna_containment(&fa.dna, &fb.dna);
    let dna_ba = dna::dna_containment(&fb.dna, &fa.dna);
    let super_matches = minhash::matching_super_shingles(&fa.super_shingles, &fb.super_shingles);
    let lsh_candidate = fa.lsh_bands.iter().zip(&fb.lsh_bands).any(|(x, y)| x == y) && !fa.shingles.is_empty();

    let passages = evidence_passages_with(a, b, b_index, params);
    // Runs of URLs, addresses, ids and codes are not prose: their characters never count
    // as copied text, and a passage with too little prose left is no evidence at all.
    let non_prose_a = formulaic::non_prose_ranges(a.canonical.text());
    let non_prose_b = formulaic::non_prose_ranges(b.canonical.text());
    let prose_a = ProseStream::new(&a.chars, &non_prose_a);
    let prose_b = ProseStream::new(&b.chars, &non_prose_b);
    let min_prose = params.winnow.min_passage_chars.min(a.canonical.char_len());
    let mut non_prose_chars = 0usize;
    let passages: Vec<Passage> = passages
        .into_iter()
        .filter(|p| {
            let prose = prose_a.count(p.a_start, p.a_end).min(prose_b.count(p.b_start, p.b_end));
            let all = a.chars.count(p.a_start, p.a_end);
            if prose >= min_prose.max(1) {
                non_prose_chars += all - prose_a.count(p.a_start, p.a_end);
                true
            } else {
                non_prose_chars += all;
                false
            }
        })
        .collect();
    let covered_a = covered_units(prose_a.positions(), passages.iter().map(|p| (p.a_start, p.a_end)));
    let covered_b = covered_units(prose_b.positions(), passages.iter().map(|p| (p.b_start, p.b_end)));
    let coverage_a = ratio(covered_a, a.chars.units.len());
    let coverage_b = ratio(covered_b, b.chars.units.len());
    let (winnow_ab, winnow_ba) = winnow::winnow_containments(&fa.winnow_initials, &fb.winnow_initials);
    let (winnow_chars_ab, winnow_chars_ba) = winnow::winnow_containments(&fa.winnow_chars, &fb.winnow_chars);
    // Neither text holds most of the other (as `decide` measures it): an excerpt at most.
    let excerpt_at_most = inside(words.containment_ab, winnow_ab, coverage_a) < thresholds.containment
        && inside(words.containment_ba, winnow_ba, coverage_b) < thresholds.containment;
    // What differs inside each aligned passage: a passage whose only differences are
    // figures (a template filled twice) does not count towards an excerpt. Nor does an
    // equal passage around which the texts go on equal except for figures that differ:
    // the fixed wording of a template whose figures lie just outside it. Nor, between
    // texts that are an excerpt at most, one whose only differences are names (a copy
    // that renames its people throughout still holds most of the other text).
    let differences: Vec<formulaic::Differences> = passages
        .iter()
        .map(|p| {
            let (ra, rb) = (a.chars.range(p.a_start, p.a_end), b.chars.range(p.b_start, p.b_end));
            let (sa, sb) = (&a.chars.units[ra.0..ra.1], &b.chars.units[rb.0..rb.1]);
            let k = params.winnow.chars_k;
            match formulaic::passage_differences(sa, sb, k) {
                formulaic::Differences::None
                    if formulaic::template_continues(&a.chars.units, ra, &b.chars.units, rb, k) =>
                {
                    formulaic::Differences::Figures
                }
                formulaic::Differences::Edits
                    if excerpt_at_most
                        && formulaic::differs_in_names(
                            crate::canon::slice_chars(a.canonical.text(), p.a_start as usize, p.a_end as usize),
                            crate::canon::slice_chars(b.canonical.text(), p.b_start as usize, p.b_end as usize),
                            k,
                        ) =>
                {
                    formulaic::Differences::Names
                }
                d => d,
            }
        })
        .collect();
    // A passage that only repeats the wording of a figures-only passage (one text cites
    // the template's wording again elsewhere) is no evidence of its own either.
    let wording = {
        let ranges: Vec<(u32, u32, u32, u32)> =
            passages.iter().map(|p| (p.a_start, p.a_end, p.b_start, p.b_end)).collect();
        let holds_figure: Vec<bool> = passages
            .iter()
            .map(|p| {
                a.chars.slice(p.a_start, p.a_end).iter().any(|&u| char::from_u32(u).is_some_and(formulaic::is_figure))
            })
            .collect();
        formulaic::template_wording(&ranges, &differences, &holds_figure)
    };
    let counts: Vec<bool> = differences.iter().zip(&wording).map(|(d, w)| !d.is_template() && !w).collect();
    // A passage one side repeats (a slogan ten times in a story) maps every repeat onto
    // the one occurrence of the other side: only characters present on both sides are
    // copied, so the smaller count is.
    let copied = covered_a.min(covered_b);
    let window = params.winnow.chars_k.max(1);
    let counted = || passages.iter().zip(&counts).filter(|(_, c)| **c).map(|(p, _)| p);
    // Copied characters of the counted passages only: a text whose shared passages are
    // all a template filled twice is not a copy, however much of it they cover.
    let counted_copied = covered_units(prose_a.positions(), counted().map(|p| (p.a_start, p.a_end)))
        .min(covered_units(prose_b.positions(), counted().map(|p| (p.b_start, p.b_end))))
        .min(copied);
    let distinct_a = distinct_covered_units(prose_a.stream(), counted().map(|p| (p.a_start, p.a_end)), window);
    let distinct_b = distinct_covered_units(prose_b.stream(), counted().map(|p| (p.b_start, p.b_end)), window);
    let distinct = distinct_a.min(distinct_b).min(copied);
    let distinct_share = ratio(distinct, a.chars.units.len()).max(ratio(distinct, b.chars.units.len()));
    let mut explanation = formulaic::Explanation {
        non_prose_chars,
        uncounted_copied_chars: copied - counted_copied,
        ..Default::default()
    };
    for (i, (p, d)) in passages.iter().zip(&differences).enumerate() {
        let chars = a.chars.count(p.a_start, p.a_end);
        let counted = counts[i];
        if *d == formulaic::Differences::Figures {
            explanation.figures_only_chars += chars;
        } else if *d == formulaic::Differences::Names {
            explanation.names_only_chars += chars;
        } else if wording[i] {
            explanation.template_wording_chars += chars;
        }
        explanation.passages.push(formulaic::PassageReason {
            evidence: i,
            chars,
            non_prose_chars: chars - prose_a.count(p.a_start, p.a_end),
            rarity: formulaic::mean_idf(&a.words, p.a_start, p.a_end),
            differences: *d,
            template_wording: wording[i],
            seen_elsewhere: 0,
            within_stronger_copy: false,
            counted,
        });
    }
    let evidence = passages
        .iter()
        .map(|p| {
            let (a_start, a_end) = a.canonical.original_span(p.a_start as usize, p.a_end as usize);
            let (b_start, b_end) = b.canonical.original_span(p.b_start as usize, p.b_end as usize);
            Evidence {
                a_start,
                a_end,
                b_start,
                b_end,
                a_text: a.canonical.quote_original(a_start, a_end).to_owned(),
                b_text: b.canonical.quote_original(b_start, b_end).to_owned(),
                chars: (p.a_end - p.a_start) as usize,
            }
        })
        .collect();

    let mut comparison = Comparison {
        resemblance: words.resemblance,
        containment_ab: words.containment_ab,
        containment_ba: words.containment_ba,
        dice: words.dice,
        sample_mod_resemblance: sample_mod.resemblance,
        sample_smallest_resemblance: sample_smallest,
        simhash_distance,
        simhash_near: simhash_distance <= params.simhash.max_distance,
        dna_score: dna_ab.max(dna_ba),
        dna_containment_ab: dna_ab,
        dna_containment_ba: dna_ba,
        minhash_similarity: minhash::estimate_jaccard(&fa.minhash, &fb.minhash),
        super_shingle_matches: super_matches,
        megashingle_match: super_matches >= 2,
        lsh_candidate,
        winnow_containment_ab: winnow_ab,
        winnow_containment_ba: winnow_ba,
        winnow_chars_containment_ab: winnow_chars_ab,
        winnow_chars_containment_ba: winnow_chars_ba,
        evidence_coverage_a: coverage_a,
        evidence_coverage_b: coverage_b,
        copied_chars: copied,
        distinct_copied_chars: distinct,
        verdict: Verdict { duplicate: false, kind: VerdictKind::Unrelated, score: 0.0 },
        evidence,
        explanation,
    };
    let excerpt = Excerpt { chars: distinct, share: distinct_share };
    comparison.verdict = decide(&comparison, fa.content_hash == fb.content_hash, counted_copied, excerpt, thresholds);
    comparison
}

/// The verdict of `c` again, with only `excerpt_chars` of its copied characters counting
/// towards an excerpt (`min_excerpt_chars`, `min_excerpt_share`, `long_excerpt_chars`);
/// `a_chars` and `b_chars` are the content characters of the two texts (the shares'
/// denominators, `Analysis::chars.units.len()`).
///
/// For a caller that knows some copied text is no evidence of copying this one text: a
/// passage that occurs in many registered sections (a slogan, a programme's fixed
/// prefix, a list of names a novel repeats) is shared with every one of them. Verdicts
/// by containment (most of one text inside the other) and identical texts stay as they
/// are; `excerpt_chars` larger than [`Comparison::distinct_copied_chars`] changes nothing.
pub fn decide_excerpt(c: &Comparison, excerpt_chars: usize, a_chars: usize, b_chars: usize, t: &Thresholds) -> Verdict {
    if c.verdict.kind == VerdictKind::Identical {
        return c.verdict;
    }
    let chars = excerpt_chars.min(c.distinct_copied_chars);
    let excerpt = Excerpt { chars, share: ratio(chars, a_chars).max(ratio(chars, b_chars)) };
    decide(c, false, c.copied_chars.saturating_sub(c.explanation.uncounted_copied_chars), excerpt, t)
}

/// The copied characters that count towards an excerpt, and their larger share of the
/// two texts.
#[derive(Debug, Clone, Copy)]
struct Excerpt {
    chars: usize,
    share: f64,
}

/// Resemblance estimated from the `n` smallest hashes of the union (Broder's estimator).
fn smallest_resemblance(a: &[u64], b: &[u64], n: usize) -> f64 {
    if a.is_empty() && b.is_empty() {
        return 1.0;
    }
    // The `n` smallest of the union, merged from the two sorted sets: sorting the whole
    // union to keep its first `n` was a twentieth of matching a page's candidates.
    debug_assert!(a.is_sorted() && b.is_sorted(), "shingle sets are sorted");
    let n = n.max(1);
    // A hash both hold meets itself at the two heads: counted there, not searched for.
    let (mut i, mut j) = (0, 0);
    let (mut len, mut both, mut last) = (0usize, 0usize, None);
    while len < n {
        let (next, in_both) = match (a.get(i), b.get(j)) {
            (Some(&x), Some(&y)) if x <= y => {
                i += 1;
                j += usize::from(x == y);
                (x, x == y)
            }
            (_, Some(&y)) => {
                j += 1;
                (y, false)
            }
            (Some(&x), None) => {
                i += 1;
                (x, false)
            }
            (None, None) => break,
        };
        // A hash repeated within one list counts once, with the first of its meetings.
        if last != Some(next) {
            last = Some(next);
            len += 1;
            both += usize::from(in_both);
        }
    }
    ratio(both, len)
}

fn ratio(n: usize, d: usize) -> f64 {
    if d == 0 {
        0.0
    } else {
        (n as f64 / d as f64).min(1.0)
    }
}

/// Number of content characters (letters, digits, Han; `positions` in canonical
/// offsets, sorted) that fall inside a set of half-open canonical ranges.
fn covered_units(positions: &[u32], ranges: impl Iterator<Item = (u32, u32)>) -> usize {
    let mut r: Vec<(u32, u32)> = ranges.collect();
    r.sort_unstable();
    let (mut total, mut end) = (0usize, 0u32);
    for (s, e) in r {
        let s = s.max(end);
        if e > s {
            total += positions.partition_point(|&p| p < e) - positions.partition_point(|&p| p < s);
            end = e;
        }
    }
    total
}

/// Half-open ranges sorted, with overlapping and touching ones merged.
pub fn merge_ranges<T: Ord + Copy>(mut ranges: Vec<(T, T)>) -> Vec<(T, T)> {
    ranges.sort_unstable();
    let mut out: Vec<(T, T)> = Vec::with_capacity(ranges.len());
    for (s, e) in ranges {
        match out.last_mut() {
            Some(last) if s <= last.1 => last.1 = last.1.max(e),
            _ => out.push((s, e)),
        }
    }
    out
}

/// Content characters inside `ranges` (half-open canonical ranges) with repeated text
/// counted once: a character counts when the run of up to `window` characters ending at
/// it, inside its range, was not counted before. A run is at most `window` code points,
/// compared exactly (a hash collision cannot hide a character).
fn distinct_covered_units(chars: &CharStream, ranges: impl Iterator<Item = (u32, u32)>, window: usize) -> usize {
    let spans: Vec<(usize, usize)> = merge_ranges(ranges.collect())
        .into_iter()
        .map(|(s, e)| (chars.positions.partition_point(|&p| p < s), chars.positions.partition_point(|&p| p < e)))
        .collect();
    // Sized for every run, as most are distinct: grown as it filled, the set rehashed its
    // runs again and again.
    let runs = spans.iter().map(|&(lo, hi)| hi - lo).sum();
    let mut seen: FxHashSet<&[u32]> = FxHashSet::with_capacity_and_hasher(runs, Default::default());
    for (lo, hi) in spans {
        for i in lo..hi {
            seen.insert(&chars.units[lo.max((i + 1).saturating_sub(window))..=i]);
        }
    }
    seen.len()
}

/// The content characters of a document without those inside runs that are not prose
/// (URLs, addresses, ids, codes): borrowed as they are when there is no such run.
struct ProseStream<'a> {
    all: &'a CharStream,
    filtered: Option<CharStream>,
}

impl<'a> ProseStream<'a> {
    fn new(all: &'a CharStream, non_prose: &[(u32, u32)]) -> Self {
        if non_prose.is_empty() {
            return ProseStream { all, filtered: None };
        }
        let mut units = Vec::with_capacity(all.units.len());
        let mut positions = Vec::with_capacity(all.positions.len());
        for (&u, &p) in all.units.iter().zip(&all.positions) {
            if !formulaic::in_ranges(non_prose, p) {
                units.push(u);
                positions.push(p);
            }
        }
        ProseStream { all, filtered: Some(CharStream { units, positions }) }
    }

    fn stream(&self) -> &CharStream {
        self.filtered.as_ref().unwrap_or(self.all)
    }

    fn positions(&self) -> &[u32] {
        &self.stream().positions
    }

    /// Prose characters inside the canonical range `start..end`.
    fn count(&self, start: u32, end: u32) -> usize {
        self.stream().count(start, end)
    }
}

/// The winnowed fingerprints of a document (both streams) by hash: the B side of
/// passage searches, made once for all the documents compared with it.
#[derive(Debug, Clone, Default)]
pub struct PassageIndex {
    initials: FingerprintIndex,
    chars: FingerprintIndex,
}

impl PassageIndex {
    /// Index the winnowed fingerprints of `b`.
    pub fn new(b: &Analysis) -> Self {
        PassageIndex {
            initials: FingerprintIndex::new(&b.fingerprints.winnow_initials),
            chars: FingerprintIndex::new(&b.fingerprints.winnow_chars),
        }
    }
}

/// Passages in canonical character offsets, from both winnowing streams, merged.
pub fn evidence_passages(a: &Analysis, b: &Analysis, params: &Params) -> Vec<Passage> {
    evidence_passages_with(a, b, &PassageIndex::new(b), params)
}

/// [`evidence_passages`] with B's passage index made once (`b_index`, made from `b`).
pub fn evidence_passages_with(a: &Analysis, b: &Analysis, b_index: &PassageIndex, params: &Params) -> Vec<Passage> {
    let w = &params.winnow;
    let mut out: Vec<Passage> = Vec::new();
    // Unit ranges -> canonical character ranges (end: one past the last unit's char).
    let to_chars = |pos: &[u32], s: u32, e: u32| (pos[s as usize], pos[e as usize - 1] + 1);
    let mut push = |p: Passage, pa: &[u32], pb: &[u32]| {
        let (a_start, a_end) = to_chars(pa, p.a_start, p.a_end);
        let (b_start, b_end) = to_chars(pb, p.b_start, p.b_end);
        out.push(Passage { a_start, a_end, b_start, b_end, support: p.support });
    };
    let opts = |k| PassageOptions { k, max_gap: w.max_gap, max_occurrences: 16 };
    // The initial letters are compared as they are stored (one byte each), without a copy.
    for p in winnow::find_passages_in(
        &a.initials.letters,
        &a.fingerprints.winnow_initials,
        &b.initials.letters,
        &b_index.initials,
        &opts(w.initials_k),
    ) {
        push(p, &a.initials.positions, &b.initials.positions);
    }
    for p in winnow::find_passages_in(
        &a.chars.units,
        &a.fingerprints.winnow_chars,
        &b.chars.units,
        &b_index.chars,
        &opts(w.chars_k),
    ) {
        push(p, &a.chars.positions, &b.chars.positions);
    }
    winnow::merge_overlapping(&mut out);
    out.retain(|p| (p.a_end - p.a_start) as usize >= w.min_passage_chars.min(a.canonical.char_len()));
    out
}

fn decide(c: &Comparison, identical: bool, copied_chars: usize, excerpt: Excerpt, t: &Thresholds) -> Verdict {
    if identical {
        return Verdict { duplicate: true, kind: VerdictKind::Identical, score: 1.0 };
    }
    let (ab, ba) = (c.a_inside_b(), c.b_inside_a());
    let enough = copied_chars >= t.min_copied_chars;
    let (kind, score) = if enough && ab >= t.near_duplicate && ba >= t.near_duplicate {
        (VerdictKind::NearDuplicate, ab.min(ba))
    } else if enough && ab >= t.containment && ab >= ba {
        (VerdictKind::AWithinB, ab)
    } else if enough && ba >= t.containment {
        (VerdictKind::BWithinA, ba)
    } else if enough && ab >= t.containment {
        (VerdictKind::AWithinB, ab)
    } else if excerpt.chars >= t.min_copied_chars
        && (excerpt.chars >= t.long_excerpt_chars
            || (excerpt.chars >= t.min_excerpt_chars && excerpt.share >= t.min_excerpt_share))
    {
        // An excerpt: part of A is in B. The side that is more contained names the kind.
        if ab >= ba {
            (VerdictKind::AWithinB, ab)
        } else {
            (VerdictKind::BWithinA, ba)
        }
    } else {
        (VerdictKind::Unrelated, ab.max(ba))
    };
    Verdict { duplicate: kind != VerdictKind::Unrelated, kind, score }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The resemblance of the `n` smallest of the union as first written: the whole union
    /// sorted, then cut.
    fn smallest_resemblance_by_sorting(a: &[u64], b: &[u64], n: usize) -> f64 {
        if a.is_empty() && b.is_empty() {
            return 1.0;
        }
        let mut union: Vec<u64> = a.iter().chain(b).copied().collect();
        union.sort_unstable();
        union.dedup();
        union.truncate(n.max(1));
        let both = union.iter().filter(|h| a.binary_search(h).is_ok() && b.binary_search(h).is_ok()).count();
        ratio(both, union.len())
    }

    proptest! {
        /// Hashes drawn from a small range, so the merge meets equal heads (and repeats
        /// within a list, which the sorted union drops too), one list running out first,
        /// and `n` beyond the union.
        #[test]
        fn the_merged_union_is_the_sorted_one(
            mut a in proptest::collection::vec(0u64..64, 0..40),
            mut b in proptest::collection::vec(0u64..64, 0..40),
            n in 0usize..90,
        ) {
            a.sort_unstable();
            b.sort_unstable();
            prop_assert_eq!(
                smallest_resemblance(&a, &b, n).to_bits(),
                smallest_resemblance_by_sorting(&a, &b, n).to_bits()
            );
        }
    }
}
