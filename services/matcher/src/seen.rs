//! Text seen elsewhere: passages that other stored pages hold too.
//!
//! A stock clause of the law (`处五日以上十日以下拘留，可以并处五百元以下罚款`), a portal's
//! disclaimer, an official formula: such text is repeated verbatim by many documents that
//! have nothing else in common. A page that shares it with a registered story has not shown
//! that it copies the story, even when the clauses add up to an excerpt's length; its words
//! are ordinary, so jieba's IDF table does not tell it from prose. What tells it is its
//! document frequency over what zhiwen has seen: the catalogue rule ([`crate::catalogue`])
//! counts registered sections, this counts stored pages, through the page namespace of the
//! index (1 in `page_index_sampling` of every page's winnowed keys).
//!
//! For a copy that neither holds most of the section nor is made almost entirely of its
//! text ([`weighable`]: an excerpt, or a short page half of which is the section's text; a
//! chapter pirated whole or truncated on many sites stays a copy everywhere), each
//! counted passage's keys (the section's winnowed keys inside it that the page namespace
//! keeps) are looked up among the pages.
//!
//! A page **witnesses** the passage when it holds at least half of its keys (and of
//! those whose k-gram holds a figure: the passage as the page judged has it, not the same
//! wording filled with other figures), its text holds each of the passage's figures with
//! the characters around it (read from the store: a sampled key need not cover a figure,
//! and a pinyin-initial key cannot tell `十万元` from `三万元`), shares nothing more of either text than the
//! counted passages hold (give or take two keys for chance) and is mostly text of its own
//! (what it shares with the section, estimated from the keys, is less than half of its
//! characters): it is neither a copy of the section (a whole, truncated or excerpted one)
//! nor a mirror of the page judged. A passage held by at least `min_documents`
//! documents, the section and its witnesses (the page judged not counted), is seen
//! elsewhere: like a template's figures-only passage it counts neither towards an excerpt
//! nor towards a containment verdict, and the verdict is decided again
//! ([`crate::catalogue::CatalogueProfile::discount_passages`]).
//!
//! What it cannot tell: an excerpt of a chapter that several other pages quote (and
//! nothing more of the chapter) looks like a formula, and so does a template's fixed
//! wording quoted with the figures the witnesses hold too. Both need `min_documents`
//! pages that share that passage and nothing else of the section. What a page is weighed
//! against is what was stored and indexed before it (its own batch included): the first
//! pages holding a formula are weighed before the later ones are seen. A passage without a
//! sampled key, or with figures none of its sampled keys covers, cannot be weighed and
//! counts as before.

use zhiwen_core::compare::{Comparison, Thresholds, VerdictKind};
use zhiwen_core::{formulaic, Analysis, IndexFamily, IndexKey};
use zhiwen_index::{DocId, LookupResult};

/// Chance keys a witness may share with the section beyond the page judged.
const CHANCE_KEYS: u32 = 2;

/// The keys of one counted evidence passage, as the page namespace keeps them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PassageKeys {
    /// Index of the passage in the comparison's evidence.
    pub evidence: usize,
    /// The section's winnowed keys inside the passage (side A), sampled as the page
    /// namespace samples them; sorted, distinct.
    pub keys: Vec<IndexKey>,
    /// Of them, the keys whose k-gram holds a figure, a character that writes a number
    /// ([`zhiwen_core::formulaic::number_chars`]) and that the key's family sees (a
    /// pinyin-initial key does not see a digit): a page holding the passage's wording
    /// with other figures (the same template filled otherwise) does not hold them.
    pub figure_keys: Vec<IndexKey>,
    /// The passage's figures in their context, as the witnesses' text must hold them:
    /// each run of figure characters with up to [`FIGURE_CONTEXT`] content characters on
    /// either side (inside the passage), content characters only. A sampled key need not
    /// cover a figure, and a pinyin-initial key cannot tell `十万元` from `三万元`; the
    /// witnesses' text can.
    pub figures: Vec<String>,
}

/// Content characters kept on either side of a figure in [`PassageKeys::figures`].
pub const FIGURE_CONTEXT: usize = 2;

/// Does the canonical text of a possible witness, content characters only
/// (`witness_content`), hold every figure of the passage in its context?
pub fn holds_figures(witness_content: &str, passage: &PassageKeys) -> bool {
    passage.figures.iter().all(|f| witness_content.contains(f.as_str()))
}

/// The content characters of a canonical text (letters, digits, Han), as
/// [`holds_figures`] reads them.
pub fn content_of(canonical: &str) -> String {
    canonical.chars().filter(|c| c.is_alphanumeric()).collect()
}

/// May the verdict of `c` be weighed: a copy (not an identical text) that neither holds
/// most of the section (`containment`) nor is made almost entirely of the section's text
/// (`near_duplicate`)? An excerpt is weighed, and so is a short page half of which is a
/// paragraph of stock clauses; a whole or near-whole copy of the section (however many
/// sites carry it) and a page that is the section's opening and little else (a
/// truncated copy, whichever of its passages other pages quote) never are.
pub fn weighable(c: &Comparison, t: &Thresholds) -> bool {
    let section_inside_page = c.a_inside_b();
    let page_inside_section = c.b_inside_a();
    c.verdict.duplicate
        && c.verdict.kind != VerdictKind::Identical
        && section_inside_page < t.containment
        && page_inside_section < t.near_duplicate
}

/// The page-namespace keys of `text` (side A of `c`, the section, or with `page_side` side
/// B, the page) inside each counted evidence passage of `c`, for the passages that have
/// any. `modulus`: the page namespace's sampling.
pub fn passage_keys(
    c: &Comparison,
    text: &Analysis,
    page_side: bool,
    chars_k: usize,
    initials_k: usize,
    modulus: u64,
) -> Vec<PassageKeys> {
    let section = text;
    let source = |canonical: u32| section.canonical.source_of(canonical as usize);
    // Every sampled winnowed key with the source range of its k-gram and whether the
    // k-gram holds a figure.
    let mut located: Vec<(usize, usize, IndexKey, bool)> = Vec::new();
    let chars = &section.chars;
    let text: Vec<char> = chars.units.iter().map(|&u| char::from_u32(u).unwrap_or(' ')).collect();
    let numbers = formulaic::number_chars(&text);
    let mut spans = section.canonical.source_spans().cursor();
    let unit_source: Vec<usize> = chars.positions.iter().map(|&p| spans.at(p as usize).start as usize).collect();
    // A figure a family's stream does not hold cannot tell two fillings apart in its
    // keys: the pinyin-initial stream has no letter for a digit (`6级以上` and `7级以上`
    // give the same initials), only for the Han numerals.
    let seen_by = |family: IndexFamily, c: char| match family {
        IndexFamily::WinnowInitials => zhiwen_core::initials::initial_of(c).is_some(),
        _ => true,
    };
    let mut add = |family, fps: &[zhiwen_core::winnow::WinnowFp], positions: &[u32], k: usize| {
        for f in fps.iter().filter(|f| zhiwen_index::kept_by_sampling(f.hash, modulus)) {
            let first = f.pos as usize;
            let (Some(&s), Some(&e)) = (positions.get(first), positions.get(first + k.max(1) - 1)) else { continue };
            let (lo, hi) = chars.range(s, e + 1);
            let figure = (lo..hi).any(|i| numbers[i] && seen_by(family, text[i]));
            located.push((
                source(s).start as usize,
                source(e).end as usize,
                IndexKey { family, value: f.hash },
                figure,
            ));
        }
    };
    let fps = &section.fingerprints;
    add(IndexFamily::WinnowChars, &fps.winnow_chars, &section.chars.positions, chars_k);
    add(IndexFamily::WinnowInitials, &fps.winnow_initials, &section.initials.positions, initials_k);
    c.explanation
        .passages
        .iter()
        .filter(|p| p.counted)
        .filter_map(|p| {
            let e = c.evidence.get(p.evidence)?;
            let (start, end) = if page_side { (e.b_start, e.b_end) } else { (e.a_start, e.a_end) };
            let inside: Vec<&(usize, usize, IndexKey, bool)> =
                located.iter().filter(|(s, e, _, _)| *s >= start && *e <= end).collect();
            let sorted = |mut keys: Vec<IndexKey>| {
                keys.sort_unstable();
                keys.dedup();
                keys
            };
            let keys = sorted(inside.iter().map(|x| x.2).collect());
            let figure_keys = sorted(inside.iter().filter(|x| x.3).map(|x| x.2).collect());
            // A passage with figures none of whose keys covers them cannot tell its
            // witnesses from the same wording filled otherwise: it is not weighed.
            let has_figures = unit_source.iter().zip(&numbers).any(|(&at, &number)| number && at >= start && at < end);
            let lo = unit_source.partition_point(|&at| at < start);
            let hi = unit_source.partition_point(|&at| at < end);
            let mut figures = Vec::new();
            let mut i = lo;
            while i < hi {
                if !numbers[i] {
                    i += 1;
                    continue;
                }
                let run = i;
                while i < hi && numbers[i] {
                    i += 1;
                }
                let from = run.saturating_sub(FIGURE_CONTEXT).max(lo);
                let to = (i + FIGURE_CONTEXT).min(hi);
                figures.push(text[from..to].iter().collect::<String>());
            }
            (!keys.is_empty() && (!figure_keys.is_empty() || !has_figures)).then_some(PassageKeys {
                evidence: p.evidence,
                keys,
                figure_keys,
                figures,
            })
        })
        .collect()
}

/// What a page shares with one of the two texts compared: the lookup of all that text's
/// page-namespace keys, and how many of them lie inside the counted passages.
#[derive(Debug, Clone, Copy)]
pub struct Shared<'a> {
    /// The lookup of the text's page-namespace keys among the pages.
    pub whole: &'a LookupResult,
    /// Its keys inside the counted passages of the comparison.
    pub inside: usize,
}

impl Shared<'_> {
    /// The keys of the text `doc` shares.
    fn shared_by(&self, doc: DocId) -> u32 {
        self.whole.candidates.iter().find(|c| c.doc == doc).map_or(0, |c| c.total)
    }

    /// Does `doc` share more of the text than its counted passages (and chance) hold?
    fn exceeded_by(&self, doc: DocId) -> bool {
        self.shared_by(doc) > self.inside as u32 + CHANCE_KEYS
    }
}

/// The stored pages that may witness a passage, before their size is known.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Witnesses {
    /// Most of the passage's keys are big buckets: held by so many pages that they are not
    /// even listed.
    Many,
    /// Pages other than the page judged that hold at least half of the passage's `keys`
    /// (`found`: the lookup of those keys) and share nothing more of either text than the
    /// counted passages hold, give or take [`CHANCE_KEYS`]: not a copy of the section
    /// (`section`), nor a mirror or copy of the page judged (`page_text`). Each with the
    /// keys it shares with the section.
    Pages(Vec<(DocId, u32)>),
}

impl Witnesses {
    /// The possible witnesses of a passage (see the variants).
    /// `figures`: the lookup of the passage's figure keys, when it has any: a witness
    /// must hold at least half of them too (the passage with its figures, not the same
    /// wording filled otherwise).
    pub fn of(
        passage: &PassageKeys,
        found: &LookupResult,
        figures: Option<&LookupResult>,
        section: Shared<'_>,
        page_text: Shared<'_>,
        page: DocId,
    ) -> Self {
        let keys = &passage.keys;
        if !keys.is_empty() && found.big_buckets.len() * 2 > keys.len() {
            return Witnesses::Many;
        }
        let half = |n: usize| (n as u32).div_ceil(2).max(1);
        let need = half(keys.len());
        let holds_figures = |doc: DocId| match figures {
            Some(f) if !passage.figure_keys.is_empty() => {
                let held = f.candidates.iter().find(|c| c.doc == doc).map_or(0, |c| c.total);
                held >= half(passage.figure_keys.len())
            }
            _ => true,
        };
        Witnesses::Pages(
            found
                .candidates
                .iter()
                .filter(|c| c.doc != page && c.total >= need && holds_figures(c.doc))
                .filter(|c| !section.exceeded_by(c.doc) && !page_text.exceeded_by(c.doc))
                .map(|c| (c.doc, section.shared_by(c.doc).max(c.total)))
                .collect(),
        )
    }
}

/// Is a page of `page_chars` content characters that shares `shared_keys` page-namespace
/// keys with a section mostly other text? The characters it shares are estimated from the
/// section's own density of keys (`section_chars` over `section_keys`). A page that is
/// mostly the section (a truncated copy of a short story, holding little more than the
/// passage) is a copy of it, not a witness that the passage is common.
pub fn mostly_other_text(shared_keys: u32, section_chars: usize, section_keys: usize, page_chars: usize) -> bool {
    let per_key = section_chars as f64 / section_keys.max(1) as f64;
    (shared_keys as f64 * per_key) * 2.0 < page_chars as f64
}

#[cfg(test)]
mod tests {
    use zhiwen_index::{Candidate, FamilyHits};

    use super::*;

    fn key(v: u64) -> IndexKey {
        IndexKey { family: IndexFamily::WinnowChars, value: v }
    }

    /// A pinyin-initial key does not see a digit: the k-grams around `6级以上` and `7级以上`
    /// have the same initials, so only the character keys tell the figures apart.
    #[test]
    fn figure_keys_are_keys_that_see_the_figures() {
        let fp = zhiwen_core::Fingerprinter::new(zhiwen_core::Params::default()).expect("default params");
        let analyze = |t: &str| fp.analyze_streams(t, zhiwen_core::canon::InputFormat::Text).expect("analysable");
        let story = "四川省地震局组织专家召开新闻发布会，对此次地震的相关问题进行了解释。研究员在发布会上介绍，\
            荣县区域属于中等强度地震活动区域，四川地区地震有西强东弱的特点，强震分布都在西部，东部不存在强震的孕震条件。\
            高级工程师补充说，根据该区域2000多年的历史地震记载，龙门山断裂带以东、华蓥山断裂以西区域没有发生6级以上地震的\
            构造环境。历史记载最大的是1905年自贡的5级地震。";
        let own = "今天的天气很好，我们一起去公园散步，看见湖边的柳树发了新芽，孩子们在草地上放风筝，老人们在亭子里下棋聊天。";
        let (a, b) = (analyze(&format!("{own}{story}")), analyze(&format!("{story}{own}")));
        let p = &fp.params().winnow;
        let c = zhiwen_core::compare::compare(&a, &b, fp.params(), &Thresholds::default());
        let passages = passage_keys(&c, &a, false, p.chars_k, p.initials_k, 1);
        let figure_keys: Vec<&IndexKey> = passages.iter().flat_map(|p| &p.figure_keys).collect();
        assert!(!figure_keys.is_empty(), "{passages:?}");
        assert!(figure_keys.iter().all(|k| k.family == IndexFamily::WinnowChars), "{figure_keys:?}");

        // The figures in their context: a page holding the passage holds them, the same
        // wording filled with other figures (`2000多年` → `3000多年`, `6级` → `7级`) does not.
        let figures: Vec<&String> = passages.iter().flat_map(|p| &p.figures).collect();
        assert!(figures.iter().any(|f| f.as_str() == "区域2000多年"), "{figures:?}");
        let held = |text: &str| {
            let content = content_of(text);
            passages.iter().filter(|p| !p.figures.is_empty()).all(|p| holds_figures(&content, p))
        };
        assert!(held(story));
        assert!(!held(&story.replace("2000", "3000")));
        assert!(!held(&story.replace("6级", "7级")));
    }

    fn found(docs: &[(DocId, u32)]) -> LookupResult {
        LookupResult {
            candidates: docs
                .iter()
                .map(|&(doc, total)| Candidate { doc, hits: FamilyHits::default(), total })
                .collect(),
            sample_modulus: 1,
            ..Default::default()
        }
    }

    #[test]
    fn a_witness_holds_half_the_passage_and_no_more_of_either_text() {
        let keys = [key(8), key(16), key(24), key(32)];
        // Pages 1-5 hold the passage's keys; the page judged is 9.
        let passage = found(&[(1, 4), (2, 2), (3, 1), (4, 4), (5, 3), (9, 4)]);
        // Page 4 shares 40 keys with the section: a copy of it, not a witness.
        let section = found(&[(1, 5), (2, 3), (3, 1), (4, 40), (5, 4), (9, 6)]);
        // Page 5 shares 30 keys with the page judged: its mirror, not a witness.
        let page = found(&[(1, 4), (2, 2), (5, 30), (9, 60)]);
        let of = |whole, inside| Shared { whole, inside };
        // The counted passages hold 4 keys of each text: up to 6 are allowed a witness.
        let p = PassageKeys { evidence: 0, keys: keys.to_vec(), figure_keys: Vec::new(), figures: Vec::new() };
        let w = |s, t| Witnesses::of(&p, &passage, None, s, t, 9);
        assert_eq!(w(of(&section, 4), of(&page, 4)), Witnesses::Pages(vec![(1, 5), (2, 3)]));
        // With fewer keys in the passages, page 1 shares too much to be a witness.
        assert_eq!(w(of(&section, 2), of(&page, 4)), Witnesses::Pages(vec![(2, 3)]));
        assert_eq!(w(of(&section, 4), of(&page, 1)), Witnesses::Pages(vec![(2, 3)]));
        // Big buckets: most keys held by too many pages to list.
        let mut big = found(&[]);
        big.big_buckets = vec![key(8), key(16), key(24)];
        assert_eq!(Witnesses::of(&p, &big, None, of(&section, 4), of(&page, 4), 9), Witnesses::Many);
        big.big_buckets.truncate(2);
        assert_eq!(Witnesses::of(&p, &big, None, of(&section, 4), of(&page, 4), 9), Witnesses::Pages(vec![]));

        // Two of the keys hold figures: page 2 holds the wording with other figures.
        let p = PassageKeys { figure_keys: vec![key(8), key(16)], ..p };
        let figures = found(&[(1, 2), (2, 0), (9, 2)]);
        let w = Witnesses::of(&p, &passage, Some(&figures), of(&section, 4), of(&page, 4), 9);
        assert_eq!(w, Witnesses::Pages(vec![(1, 5)]));
    }

    #[test]
    fn a_page_that_is_mostly_the_section_is_no_witness() {
        // A section of 400 characters with 20 keys: 20 characters a key.
        assert!(mostly_other_text(5, 400, 20, 1_000), "100 of 1,000 characters");
        assert!(!mostly_other_text(5, 400, 20, 150), "100 of 150 characters: a truncated copy");
        assert!(!mostly_other_text(5, 400, 20, 200), "half of it");
    }
}
