//! Text that looks copied but is no evidence of copying, and the reasons a verdict gives.
//!
//! Two kinds of shared text are formulaic rather than copied:
//!
//! - Runs of URLs, e-mail addresses, ids and codes are not prose. Two link-list pages of
//!   one blog host share long runs of `http://blog.sina.com.cn/s/blog_` without sharing a
//!   sentence. [`non_prose_ranges`] finds these runs in the canonical text; the
//!   comparison never counts their characters as copied.
//! - A template filled twice (two sittings of one body reported with one formula) aligns
//!   over its fixed wording while its session numbers, dates and figures differ.
//!   [`passage_differences`] tells such a passage ([`Differences::Figures`]) from one
//!   whose differences are scattered character edits (a pirate's noise,
//!   [`Differences::Edits`]) and from an exact copy ([`Differences::None`]).
//!   When one text cites the template's wording again elsewhere, the citation aligns onto
//!   the other text's filled template too; [`template_wording`] flags such passages, which
//!   lie on one side inside a figures-only passage and count no more than it does.
//!
//! [`Explanation`] carries, for every evidence passage, how long it is, how much of it
//! is prose, how rare its words are (mean IDF in jieba's table) and what differed inside
//! it, so that a reviewer can read why a match was accepted; [`render`] writes it in
//! simplified Chinese (the default) or English.
//!
//! Pure: no I/O.

use serde::{Deserialize, Serialize};

use crate::segment::Word;

/// Half-open canonical character ranges of the runs of `text` that are not prose: URLs,
/// host names, e-mail addresses, ids and codes. Sorted, disjoint.
///
/// A run is a maximal sequence of printable ASCII characters other than white space. It
/// is not prose when it has `://`, starts with `www.`, is an address (`x@y.z`), names a
/// host (two dots between letters), is a path with letters and digits, mixes letters and
/// digits over at least six characters (an id or code: `blog_4b9e0f7a0102`, `a1b2c3`), or
/// is a number of at least nine digits (a phone, QQ or order number). Words, years, dates
/// and figures of ordinary text (`2019`, `22`, `covid`, `3.5`) stay prose.
pub fn non_prose_ranges(text: &str) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    let mut run = String::new();
    let mut start = 0u32;
    let mut i = 0u32;
    for c in text.chars() {
        if c.is_ascii_graphic() {
            if run.is_empty() {
                start = i;
            }
            run.push(c);
        } else if !run.is_empty() {
            if is_non_prose(&run) {
                out.push((start, i));
            }
            run.clear();
        }
        i += 1;
    }
    if !run.is_empty() && is_non_prose(&run) {
        out.push((start, i));
    }
    out
}

/// Is this run of printable ASCII (no white space) a URL, address, host, id or code?
pub fn is_non_prose(run: &str) -> bool {
    let run = run.trim_matches(|c: char| !c.is_ascii_alphanumeric());
    if run.is_empty() {
        return false;
    }
    let letters = run.bytes().filter(u8::is_ascii_alphabetic).count();
    let digits = run.bytes().filter(u8::is_ascii_digit).count();
    if run.contains("://") || run.starts_with("www.") {
        return true;
    }
    if let Some((user, host)) = run.split_once('@') {
        if !user.is_empty() && host.contains('.') && host.bytes().any(|b| b.is_ascii_alphabetic()) {
            return true;
        }
    }
    // Two dots between letters: a host name (`blog.sina.com.cn`), not a figure (`3.5`).
    let dotted_letters = run.split('.').filter(|part| part.bytes().any(|b| b.is_ascii_alphabetic())).count();
    if dotted_letters >= 3 {
        return true;
    }
    if run.contains('/') && letters > 0 && digits > 0 {
        return true;
    }
    let alnum = letters + digits;
    (alnum >= 6 && letters > 0 && digits > 0) || (letters == 0 && digits >= 9)
}

/// Is `ranges` (sorted, disjoint) covering canonical offset `pos`?
pub fn in_ranges(ranges: &[(u32, u32)], pos: u32) -> bool {
    let i = ranges.partition_point(|&(_, e)| e <= pos);
    ranges.get(i).is_some_and(|&(s, _)| s <= pos)
}

/// Is this character a figure: a digit, a Chinese numeral, or the unit of a date, a
/// session or a count that a template fills in with it?
#[rustfmt::skip]
pub fn is_figure(c: char) -> bool {
    // A `match` on the characters, not a search of their string: every character of every
    // passage compared is asked.
    c.is_ascii_digit()
        || matches!(c, '〇' | '零' | '一' | '二' | '三' | '四' | '五' | '六' | '七' | '八' | '九' | '十' | '百' | '千' | '万' | '亿'
            | '两' | '壹' | '贰' | '叁' | '肆' | '伍' | '陆' | '柒' | '捌' | '玖' | '拾' | '佰' | '仟')
}

/// The Chinese numerals a template's figures are written with.
pub const NUMERALS: [char; 10] = ['一', '二', '三', '四', '五', '六', '七', '八', '九', '十'];

/// Which characters of `text` write a number the refilling of a template changes: ASCII
/// digits, and numerals `一`-`十` that are part of a number: next to another numeral or
/// digit (`十九`, `二十二`), after `第`, or before a unit of recurring events or of an
/// amount (`届`, `次`, `期`, `号`, `年`, `月`, `日`, `万`, `千`, `百`, `亿`, `元`, `岁`,
/// `名`). A numeral inside a word (`一个`, `一旦`, `二娘`) is not a figure: a template
/// filled twice changes its session numbers, dates and amounts, not its words.
pub fn number_chars(text: &[char]) -> Vec<bool> {
    const UNITS: [char; 14] = ['届', '次', '期', '号', '年', '月', '日', '万', '千', '百', '亿', '元', '岁', '名'];
    let numeral = |c: Option<&char>| c.is_some_and(|c| NUMERALS.contains(c) || c.is_ascii_digit());
    (0..text.len())
        .map(|i| {
            let c = text[i];
            c.is_ascii_digit()
                || (NUMERALS.contains(&c)
                    && (numeral(i.checked_sub(1).and_then(|j| text.get(j)))
                        || numeral(text.get(i + 1))
                        || i.checked_sub(1).and_then(|j| text.get(j)) == Some(&'第')
                        || text.get(i + 1).is_some_and(|n| UNITS.contains(n))))
        })
        .collect()
}

/// What differs between the two sides of an aligned passage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Differences {
    /// The content characters are the same on both sides.
    #[default]
    None,
    /// Only figures differ (numbers, dates, session numbers): a template filled twice.
    Figures,
    /// Only names differ (people, places, organisations; figures too, maybe): a template
    /// filled twice with other names ([`differs_in_names`]).
    Names,
    /// Other characters differ: edits, substitutions, insertions (a pirate's noise, or a
    /// revision).
    Edits,
}

impl Differences {
    /// A template filled twice: only figures, or only names, differ.
    pub fn is_template(self) -> bool {
        matches!(self, Differences::Figures | Differences::Names)
    }

    /// Stable snake_case name (as in JSON).
    pub fn as_str(self) -> &'static str {
        match self {
            Differences::None => "none",
            Differences::Figures => "figures",
            Differences::Names => "names",
            Differences::Edits => "edits",
        }
    }
}

/// What differs between `a` and `b`, the content characters (code points) of the two
/// sides of one aligned passage; `edge` is the alignment noise tolerated at each end
/// (content characters other than figures; the comparison passes `winnow.chars_k`).
///
/// [`Differences::Figures`] needs a core of the passage, all of it but at most `edge`
/// characters other than figures at each end on each side, whose two sides are equal
/// once figures are removed, and whose figures differ by at least two characters
/// ([`figure_difference`]: taken in order, so `78岁…12月6日` against `23岁…67月1日` differs
/// though both hold the digits 1, 2, 3, 6, 7, 8): a single numeral a pirate's random edit
/// inserts or deletes is not a template. The ends are alignment noise, not text of the template: the initial
/// letters of the surrounding characters may agree by chance (`出` and `存` are both
/// `c`), which extends a passage by a character or two into unrelated text on both
/// sides. Figures outside the core (a page's date line next to the passage) are never
/// weighed, so a real copy with such an end is not taken for a template. Any other
/// difference inside the core (a pirate's scattered edit, an inserted advert) is
/// [`Differences::Edits`].
///
/// When no core covers both sides, a core that covers one side (all of it but `edge` at
/// each end) and lies anywhere in the other will do: a story that repeats its own
/// paragraph merges both repeats into one passage on its side, against one on the other.
/// Every such core must then differ in figures: if one place of the longer side holds the
/// shorter side's figures too, it is a copy of that place.
pub fn passage_differences(a: &[u32], b: &[u32], edge: usize) -> Differences {
    if a == b {
        return Differences::None;
    }
    let figure = |u: &u32| char::from_u32(*u).is_some_and(is_figure);
    let prose_a: Vec<usize> = (0..a.len()).filter(|&i| !figure(&a[i])).collect();
    let prose_b: Vec<usize> = (0..b.len()).filter(|&i| !figure(&b[i])).collect();
    let cores = match equal_core(a, &prose_a, b, &prose_b, edge) {
        Some(core) => vec![core],
        None => {
            let mut cores = covering_cores(a, &prose_a, b, &prose_b, edge);
            let swapped = covering_cores(b, &prose_b, a, &prose_a, edge);
            cores.extend(swapped.into_iter().map(|(b0, b1, a0, a1)| (a0, a1, b0, b1)));
            cores
        }
    };
    let figures_differ = |&(a0, a1, b0, b1): &(usize, usize, usize, usize)| {
        let fa: Vec<u32> = a[a0..a1].iter().copied().filter(figure).collect();
        let fb: Vec<u32> = b[b0..b1].iter().copied().filter(figure).collect();
        figure_difference(&fa, &fb) >= 2
    };
    if !cores.is_empty() && cores.iter().all(figures_differ) {
        Differences::Figures
    } else {
        Differences::Edits
    }
}

/// Does an aligned passage differ only in names (and figures): a template filled twice
/// with other people, places or organisations (`江苏省常州市人民检察院已向江苏省常州市中级人民法院`
/// against `杭州市人民检察院已向杭州市中级人民法院`)? `a` and `b` are the canonical text of
/// its two sides, punctuation included (jieba needs it to cut words); `edge` is the
/// alignment noise tolerated at each end, as in [`passage_differences`].
///
/// The content characters of the two sides are diffed (Myers' algorithm, the `similar`
/// crate). Every run of differing characters (a hunk) must lie, on both sides, inside
/// words jieba tags as names ([`crate::segment::name_ranges`]) or be figures, and one at
/// least must touch a name. One hunk at least must change two characters or more: a
/// pirate's homophone swaps one character at a time (`曹操` to `曹超`), a template filled
/// again changes whole names. The characters the two sides share must outnumber those that
/// differ on each side. A hunk at an end of the passage, within `edge` characters on both
/// sides, is alignment noise and is not weighed.
///
/// A pirate who renames a novel's people throughout makes every passage of the copy
/// differ in names only: [`crate::compare`] asks this only of texts neither of which
/// holds most of the other (an excerpt at most), so such a copy is still judged by
/// containment.
pub fn differs_in_names(a: &str, b: &str, edge: usize) -> bool {
    let (a, b) = (NamedUnits::of(a), NamedUnits::of(b));
    let (la, lb) = (a.units.len(), b.units.len());
    let ops = similar::capture_diff_slices(similar::Algorithm::Myers, &a.units, &b.units);
    let mut hunks: Vec<(std::ops::Range<usize>, std::ops::Range<usize>)> = Vec::new();
    for op in &ops {
        let (tag, ra, rb) = op.as_tag_tuple();
        if tag == similar::DiffTag::Equal {
            continue;
        }
        match hunks.last_mut() {
            Some((ha, hb)) if ha.end == ra.start && hb.end == rb.start => (ha.end, hb.end) = (ra.end, rb.end),
            _ => hunks.push((ra, rb)),
        }
    }
    let noise = |(ra, rb): &(std::ops::Range<usize>, std::ops::Range<usize>)| {
        let short = ra.len() <= edge && rb.len() <= edge;
        short && ((ra.start == 0 && rb.start == 0) || (ra.end == la && rb.end == lb))
    };
    let weighed: Vec<_> = hunks.iter().filter(|h| !noise(h)).collect();
    if weighed.is_empty() {
        return false;
    }
    let (differ_a, differ_b) = hunks.iter().fold((0, 0), |(x, y), (ra, rb)| (x + ra.len(), y + rb.len()));
    let shared_outnumber = la - differ_a > differ_a && lb - differ_b > differ_b;
    let slots = weighed.iter().all(|(ra, rb)| a.slots(ra.clone()) && b.slots(rb.clone()));
    let a_name = weighed.iter().any(|(ra, rb)| a.names(ra.clone()) || b.names(rb.clone()));
    let whole_word = weighed.iter().any(|(ra, rb)| ra.len().max(rb.len()) >= 2);
    shared_outnumber && slots && a_name && whole_word
}

/// The content characters of a text, each with whether it lies in a name, for
/// [`differs_in_names`].
struct NamedUnits {
    units: Vec<u32>,
    in_name: Vec<bool>,
}

impl NamedUnits {
    fn of(text: &str) -> NamedUnits {
        let names = crate::segment::name_ranges(text);
        let mut next = names.iter().peekable();
        let (mut units, mut in_name) = (Vec::new(), Vec::new());
        for (i, c) in text.chars().enumerate() {
            while next.next_if(|&&(_, end)| end <= i).is_some() {}
            if crate::segment::is_alphanumeric_fast(c) {
                units.push(c as u32);
                in_name.push(next.peek().is_some_and(|&&(start, _)| start <= i));
            }
        }
        NamedUnits { units, in_name }
    }

    /// Are all of these units names or figures?
    fn slots(&self, r: std::ops::Range<usize>) -> bool {
        r.into_iter().all(|i| self.in_name[i] || char::from_u32(self.units[i]).is_some_and(is_figure))
    }

    /// Is one of these units in a name?
    fn names(&self, r: std::ops::Range<usize>) -> bool {
        self.in_name[r].iter().any(|&n| n)
    }
}

/// Does the text around an aligned passage go on as the same template filled otherwise?
/// `a` and `b` are the content characters (code points) of the two texts, `a_range`
/// and `b_range` the passage's half-open ranges in them; `edge` is `winnow.chars_k`.
///
/// A template whose figures all sit at one end of its paragraph (`转发集满20个赞可以打九折，`
/// and then 140 characters of fixed wording) aligns, once filled twice, as a passage of
/// the fixed wording alone: the fingerprints cannot span the figures that differ, so the
/// passage stops right after them and is equal on both sides. Walking on from either end
/// of the passage, the two texts still go on equal except for figures: true when, on one
/// side of the passage, the walk passes figures that differ (by two characters or more,
/// counted as in [`passage_differences`]) and at least `edge` equal
/// characters other than figures lie beyond the first difference. Figures count only
/// when equal text follows them on both sides: a real excerpt followed by a date or a
/// number on both sides, then other text, is not a template.
pub fn template_continues(a: &[u32], a_range: (usize, usize), b: &[u32], b_range: (usize, usize), edge: usize) -> bool {
    let after = continues_with_other_figures(
        a.get(a_range.1..).unwrap_or_default().iter(),
        b.get(b_range.1..).unwrap_or_default().iter(),
        edge,
    );
    after
        || continues_with_other_figures(
            a.get(..a_range.0).unwrap_or_default().iter().rev(),
            b.get(..b_range.0).unwrap_or_default().iter().rev(),
            edge,
        )
}

/// Walk two character sequences in step, figures skipped on each side independently,
/// while the characters other than figures are equal: did the figures passed differ by two
/// or more ([`figure_difference`]), with at least `edge` equal characters beyond the
/// first difference?
fn continues_with_other_figures<'a>(
    a: impl Iterator<Item = &'a u32>,
    b: impl Iterator<Item = &'a u32>,
    edge: usize,
) -> bool {
    let figure = |u: &u32| char::from_u32(*u).is_some_and(is_figure);
    let (mut a, mut b) = (a.peekable(), b.peekable());
    let (mut fa, mut fb): (Vec<u32>, Vec<u32>) = (Vec::new(), Vec::new());
    let mut equal_since_difference: Option<usize> = None;
    loop {
        let (mut run_a, mut run_b) = (Vec::new(), Vec::new());
        while let Some(&u) = a.next_if(|u| figure(u)) {
            run_a.push(u);
        }
        while let Some(&u) = b.next_if(|u| figure(u)) {
            run_b.push(u);
        }
        match (a.next(), b.next()) {
            (Some(x), Some(y)) if x == y => {}
            _ => break,
        }
        // Equal text after these figures on both sides: they are a slot of the template.
        if run_a != run_b && equal_since_difference.is_none() {
            equal_since_difference = Some(0);
        }
        fa.extend(run_a);
        fb.extend(run_b);
        if let Some(n) = equal_since_difference.as_mut() {
            *n += 1;
        }
        if equal_since_difference.is_some_and(|n| n >= edge) && figure_difference(&fa, &fb) >= 2 {
            return true;
        }
    }
    false
}

/// Which passages only repeat a template's fixed wording: one flag per passage, for
/// passages given as half-open ranges `(a_start, a_end, b_start, b_end)` (canonical
/// offsets), what differs inside each, and whether each holds a figure.
///
/// A text that cites its own wording again (a report that lists, among its attachments,
/// the documents its templated paragraph names) aligns that wording twice: once inside
/// the paragraph, and once elsewhere. When the other text holds the paragraph with its
/// figures filled otherwise, the paragraph is a [`Differences::Figures`] passage, and
/// the second alignment, from the citation elsewhere onto the same characters of the
/// filled paragraph, is a short passage of the template's wording (`None` without a
/// figure, or `Edits` where the citation's figures and wording differ). It is no
/// evidence of its own: the characters it covers on one side are already the template,
/// explained by the figures-only passage.
///
/// A passage is flagged when it is not itself `Figures`, one of its sides lies inside
/// the same side of a `Figures` passage, and it is not an exact copy that holds a
/// figure: a page that copies a story whose paragraph the story repeats with other
/// figures aligns each copied paragraph exactly (figures included) and, with other
/// figures, onto the repeat; the exact passage copies the filling too and still counts.
pub fn template_wording(
    ranges: &[(u32, u32, u32, u32)],
    differences: &[Differences],
    holds_figure: &[bool],
) -> Vec<bool> {
    let templates: Vec<&(u32, u32, u32, u32)> =
        ranges.iter().zip(differences).filter(|(_, d)| d.is_template()).map(|(r, _)| r).collect();
    ranges
        .iter()
        .zip(differences)
        .zip(holds_figure)
        .map(|((&(a0, a1, b0, b1), &d), &figure)| {
            let exact_filling = d == Differences::None && figure;
            !d.is_template()
                && !exact_filling
                && templates.iter().any(|&&(ta0, ta1, tb0, tb1)| (ta0 <= a0 && a1 <= ta1) || (tb0 <= b0 && b1 <= tb1))
        })
        .collect()
}

/// The cores of an aligned passage that cover all of `b` but at most `edge` characters
/// other than figures at each end, and lie anywhere in `a` (same conventions as
/// [`equal_core`]): one for each place of `a` where `b`'s characters other than figures
/// occur in full, its ends but `edge` excepted. A story that repeats its own paragraph
/// merges the alignment of both repeats into one passage, whose `a` side spans both
/// repeats while its `b` side holds one; `a`'s extra text is not on `b`, so it is not
/// shared. Empty when `b` has no more than `2 * edge` such characters.
fn covering_cores(
    a: &[u32],
    prose_a: &[usize],
    b: &[u32],
    prose_b: &[usize],
    edge: usize,
) -> Vec<(usize, usize, usize, usize)> {
    let (na, nb) = (prose_a.len(), prose_b.len());
    if nb <= 2 * edge {
        return Vec::new();
    }
    let (pa, pb): (Vec<u32>, Vec<u32>) =
        (prose_a.iter().map(|&i| a[i]).collect(), prose_b.iter().map(|&i| b[i]).collect());
    let middle = &pb[edge..nb - edge];
    let mut cores = Vec::new();
    for (start, window) in pa.windows(middle.len()).enumerate() {
        if window != middle {
            continue;
        }
        // Extend the core past the middle by up to `edge` equal characters each way.
        let left = (1..=edge.min(start)).take_while(|&k| pa[start - k] == pb[edge - k]).count();
        let end = start + middle.len();
        let right = (0..edge.min(na - end)).take_while(|&k| pa[end + k] == pb[nb - edge + k]).count();
        let (p0, q0, len) = (start - left, edge - left, middle.len() + left + right);
        cores.push((prose_a[p0], prose_a[p0 + len - 1] + 1, prose_b[q0], prose_b[q0 + len - 1] + 1));
    }
    cores
}

/// The core of an aligned passage whose characters other than figures are equal on both
/// sides (`prose_a`, `prose_b`: the indices of those characters in `a` and `b`), with at
/// most `edge` of them left out at each end of each side: half-open ranges `(a0, a1, b0,
/// b1)` of `a` and `b` from the core's first to its last character other than a figure.
/// `None` when there is none. The core is the longest run of equal characters along one
/// diagonal (the two sides shifted by at most `edge`).
fn equal_core(
    a: &[u32],
    prose_a: &[usize],
    b: &[u32],
    prose_b: &[usize],
    edge: usize,
) -> Option<(usize, usize, usize, usize)> {
    let (na, nb) = (prose_a.len(), prose_b.len());
    let (mut len, mut p0, mut q0) = (0usize, 0usize, 0usize);
    for shift in 0..=2 * edge {
        // q = p + shift - edge
        let first_p = edge.saturating_sub(shift);
        let mut run = 0usize;
        for p in first_p..na {
            let q = p + shift - edge;
            if q >= nb {
                break;
            }
            if a[prose_a[p]] == b[prose_b[q]] {
                run += 1;
                if run > len {
                    (len, p0, q0) = (run, p + 1 - run, q + 1 - run);
                }
            } else {
                run = 0;
            }
        }
    }
    let ends_are_noise = p0 <= edge && q0 <= edge && na - (p0 + len) <= edge && nb - (q0 + len) <= edge;
    if len == 0 || !ends_are_noise {
        return None;
    }
    Some((prose_a[p0], prose_a[p0 + len - 1] + 1, prose_b[q0], prose_b[q0 + len - 1] + 1))
}

/// How many figures differ between two sequences of them, in order: the characters a
/// shortest edit script deletes from `a` and inserts from `b` (a substitution counts
/// two, a numeral inserted or deleted one).
fn figure_difference(a: &[u32], b: &[u32]) -> usize {
    similar::capture_diff_slices(similar::Algorithm::Myers, a, b)
        .iter()
        .map(|op| {
            let (tag, ra, rb) = op.as_tag_tuple();
            if tag == similar::DiffTag::Equal {
                0
            } else {
                ra.len() + rb.len()
            }
        })
        .sum()
}

/// Mean IDF (jieba's table) of the words of `words` that lie inside the canonical range
/// `start..end`; `None` when no word does. `words` are sorted by start.
pub fn mean_idf(words: &[Word], start: u32, end: u32) -> Option<f32> {
    let lo = words.partition_point(|t| t.start < start);
    let inside = words[lo..].iter().take_while(|t| t.end <= end);
    let (sum, n) = inside.fold((0f32, 0usize), |(s, n), t| (s + t.idf, n + 1));
    (n > 0).then(|| sum / n as f32)
}

/// Why one evidence passage counts, or does not.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PassageReason {
    /// Index of the passage in [`crate::compare::Comparison::evidence`].
    pub evidence: usize,
    /// Content characters of the passage (side A).
    pub chars: usize,
    /// Of them, characters inside URLs, addresses, ids and codes (never copied text).
    pub non_prose_chars: usize,
    /// Mean IDF of the passage's words in jieba's table (about 12 for rare words, under
    /// 6 for the commonest); `None` when the passage has no word.
    pub rarity: Option<f32>,
    /// What differed inside the aligned passage.
    pub differences: Differences,
    /// Does one of its sides lie inside a figures-only passage, so that it only repeats
    /// the template's wording ([`template_wording`])?
    #[serde(default)]
    pub template_wording: bool,
    /// Documents found holding the passage when it was weighed by how often zhiwen has
    /// seen it (the registered section and stored pages that hold it and nothing else of
    /// the section; the page judged not counted); 0 when it was not weighed, `u32::MAX`
    /// when most of its keys are held by too many pages to list. A passage seen in enough
    /// documents is a formula, not copied text, and does not count.
    #[serde(default)]
    pub seen_elsewhere: u32,
    /// Does the page's fuller copy of another section of the same work hold the passage
    /// (on the page, it lies inside that copy's evidence)? Two sections of one work that
    /// share text (a novel repeating its list of heroes) both align with a page that
    /// copies one of them: the passage is evidence of the fuller copy, not of this one.
    #[serde(default)]
    pub within_stronger_copy: bool,
    /// Does the passage count towards an excerpt? A passage whose only differences are
    /// figures (a template filled twice) does not, nor one that only repeats the
    /// template's wording, nor one that many other documents hold.
    pub counted: bool,
}

/// Why the verdict was reached: data for the evidence view and the report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Explanation {
    /// One reason per evidence passage, in the order of the evidence.
    pub passages: Vec<PassageReason>,
    /// Characters of A's evidence discarded as URLs, addresses, ids and codes.
    pub non_prose_chars: usize,
    /// Characters of passages not counted because only figures differed inside them.
    pub figures_only_chars: usize,
    /// Characters of passages not counted because only names (and figures) differed
    /// inside them ([`differs_in_names`]).
    #[serde(default)]
    pub names_only_chars: usize,
    /// Characters of passages not counted because they only repeat the wording of a
    /// figures-only passage ([`template_wording`]).
    #[serde(default)]
    pub template_wording_chars: usize,
    /// Characters of passages not counted because many other documents hold them (text
    /// seen elsewhere: a formula, weighed by the matcher against the stored pages).
    #[serde(default)]
    pub seen_elsewhere_chars: usize,
    /// Characters of passages not counted because the page's fuller copy of another
    /// section of the same work holds them ([`PassageReason::within_stronger_copy`]).
    #[serde(default)]
    pub within_stronger_copy_chars: usize,
    /// Of [`crate::compare::Comparison::copied_chars`], those found only in passages that
    /// do not count (figures only, or the template's wording): no verdict, containment included, is reached on them.
    #[serde(default)]
    pub uncounted_copied_chars: usize,
}

/// Language of a rendered explanation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Lang {
    /// Simplified Chinese (the default).
    #[default]
    ZhCn,
    /// English.
    En,
}

impl Lang {
    /// `zh`, `zh-cn`, `zh-CN`, `en`, `en-US` ...: Chinese unless the tag is English.
    pub fn from_tag(tag: &str) -> Lang {
        if tag.to_ascii_lowercase().starts_with("en") {
            Lang::En
        } else {
            Lang::ZhCn
        }
    }
}

/// How rare a mean IDF is, in words.
fn rarity_word(idf: Option<f32>, lang: Lang) -> &'static str {
    match (idf, lang) {
        (None, Lang::ZhCn) => "无词语",
        (None, Lang::En) => "no words",
        (Some(v), Lang::ZhCn) if v >= 10.0 => "罕见",
        (Some(v), Lang::En) if v >= 10.0 => "rare",
        (Some(v), Lang::ZhCn) if v >= 7.0 => "一般",
        (Some(v), Lang::En) if v >= 7.0 => "ordinary",
        (Some(_), Lang::ZhCn) => "常见",
        (Some(_), Lang::En) => "common",
    }
}

/// The explanation as lines a reviewer reads: one per evidence passage, then what was
/// discarded.
pub fn render(explanation: &Explanation, lang: Lang) -> Vec<String> {
    let mut out = Vec::with_capacity(explanation.passages.len() + 2);
    for p in &explanation.passages {
        let rarity = rarity_word(p.rarity, lang);
        let idf = p.rarity.map(|v| format!("{v:.1}")).unwrap_or_else(|| "-".to_owned());
        let line = match lang {
            Lang::ZhCn => {
                let diff = match p.differences {
                    Differences::None => "两侧文字相同",
                    Differences::Figures => "仅数字、日期、届次不同（模板套用）",
                    Differences::Names => "仅人名、地名、机构名（及数字）不同（模板套用）",
                    Differences::Edits => "存在零散的字词改动",
                };
                let counted = match (p.counted, p.template_wording, p.seen_elsewhere) {
                    (true, _, _) => "计入".to_owned(),
                    (false, true, _) => "仅重复模板段落的固定文字，不计入".to_owned(),
                    (false, false, 0) if p.within_stronger_copy => {
                        "该页对同一作品另一章节的更完整复制已含此段，不计入".to_owned()
                    }
                    (false, false, u32::MAX) => "大量文档含有此段（套话、常见条文），不计入".to_owned(),
                    (false, false, n) if n > 0 => format!("{n} 篇文档含有此段（套话、常见条文），不计入"),
                    (false, false, _) => "不计入".to_owned(),
                };
                format!(
                    "段落 {}：{} 字（其中网址、编号 {} 字），用词{}（平均 IDF {}），{}；{}",
                    p.evidence + 1,
                    p.chars,
                    p.non_prose_chars,
                    rarity,
                    idf,
                    diff,
                    counted
                )
            }
            Lang::En => {
                let diff = match p.differences {
                    Differences::None => "the same text on both sides",
                    Differences::Figures => "only numbers, dates and session numbers differ (a template filled twice)",
                    Differences::Names => {
                        "only names of people, places and organisations (and figures) differ (a template filled twice)"
                    }
                    Differences::Edits => "scattered character edits",
                };
                let counted = match (p.counted, p.template_wording, p.seen_elsewhere) {
                    (true, _, _) => "counted".to_owned(),
                    (false, true, _) => "only the wording of a templated passage, not counted".to_owned(),
                    (false, false, 0) if p.within_stronger_copy => {
                        "inside the page's fuller copy of another section of the work, not counted".to_owned()
                    }
                    (false, false, u32::MAX) => {
                        "held by too many documents to list (a formula or stock clause), not counted".to_owned()
                    }
                    (false, false, n) if n > 0 => {
                        format!("held by {n} documents (a formula or stock clause), not counted")
                    }
                    (false, false, _) => "not counted".to_owned(),
                };
                format!(
                    "passage {}: {} characters ({} in URLs and ids), {} words (mean IDF {}), {}; {}",
                    p.evidence + 1,
                    p.chars,
                    p.non_prose_chars,
                    rarity,
                    idf,
                    diff,
                    counted
                )
            }
        };
        out.push(line);
    }
    // What was set aside, each as (characters, Chinese before and after the count,
    // English after it).
    let e = explanation;
    let set_aside = [
        (
            e.non_prose_chars,
            ("网址、邮箱、编号共 ", " 字，不视为抄袭文字"),
            "characters of URLs, addresses and ids are not copied text",
        ),
        (
            e.figures_only_chars,
            ("仅数字不同的模板段落共 ", " 字，不计入摘录"),
            "characters of templated passages differing only in figures do not count as an excerpt",
        ),
        (
            e.names_only_chars,
            ("仅人名、地名、机构名不同的模板段落共 ", " 字，不计入摘录"),
            "characters of templated passages differing only in names do not count as an excerpt",
        ),
        (
            e.template_wording_chars,
            ("仅重复模板段落固定文字的段落共 ", " 字，不计入摘录"),
            "characters of passages that only repeat a templated passage's wording do not count as an excerpt",
        ),
        (
            e.seen_elsewhere_chars,
            ("多篇其他文档同样含有的段落共 ", " 字，不计入摘录"),
            "characters of passages many other documents hold too do not count as an excerpt",
        ),
        (
            e.within_stronger_copy_chars,
            ("该页对同一作品另一章节的更完整复制已含的段落共 ", " 字，不计入摘录"),
            "characters of passages inside the page's fuller copy of another section of the work do not count as an excerpt",
        ),
    ];
    for (n, (zh_before, zh_after), en) in set_aside.into_iter().filter(|(n, _, _)| *n > 0) {
        out.push(match lang {
            Lang::ZhCn => format!("{zh_before}{n}{zh_after}"),
            Lang::En => format!("{n} {en}"),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn units(s: &str) -> Vec<u32> {
        s.chars().map(|c| c as u32).collect()
    }

    #[test]
    fn urls_ids_and_addresses_are_not_prose() {
        for run in [
            "http://blog.sina.com.cn/s/blog_4b9e0f7a0102wxyz.html",
            "www.example.com",
            "blog.sina.com.cn",
            "someone@example.org",
            "blog_4b9e0f7a0102",
            "a1b2c3",
            "13800138000",
            "s/blog_4b9e0f7a",
        ] {
            assert!(is_non_prose(run), "{run}");
        }
        for run in ["2019", "22", "covid", "3.5", "ceo", "g20", "5g", "2019.11.22"] {
            assert!(!is_non_prose(run), "{run}");
        }
    }

    #[test]
    fn ranges_cover_the_url_and_not_the_prose() {
        let text = "看这里 http://blog.sina.com.cn/s/blog_4b9e 和第19次会议";
        let ranges = non_prose_ranges(text);
        assert_eq!(ranges.len(), 1);
        let (s, e) = ranges[0];
        let url: String = text.chars().skip(s as usize).take((e - s) as usize).collect();
        assert_eq!(url, "http://blog.sina.com.cn/s/blog_4b9e");
        assert!(in_ranges(&ranges, s) && in_ranges(&ranges, e - 1));
        assert!(!in_ranges(&ranges, e) && !in_ranges(&ranges, 0));
    }

    #[test]
    fn a_template_filled_twice_differs_in_figures() {
        let a = units("全国人大常委会第十九次会议22日在京闭幕");
        let b = units("全国人大常委会第二十二次会议27日在京闭幕");
        assert_eq!(passage_differences(&a, &b, 8), Differences::Figures);
        // Figures are compared in order: the same digits filled into other slots differ.
        let a = units(
            "的老人雨中被撞身亡，78岁的肇事者逃逸。12月6日上午，冬雨绵绵，交警接到报警，现场有一条3米多长的刮擦印",
        );
        let b = units(
            "的老人雨中被撞身亡，23岁的肇事者逃逸。67月1日上午，冬雨绵绵，交警接到报警，现场有一条8米多长的刮擦印",
        );
        assert_eq!(passage_differences(&a, &b, 8), Differences::Figures);
    }

    #[test]
    fn scattered_edits_are_edits() {
        let a = units("他走进屋里，看见桌上放着一封信");
        let b = units("他走近屋里，看见卓上放着一封信");
        assert_eq!(passage_differences(&a, &b, 8), Differences::Edits);
        // One numeral inserted by a random edit is not a template.
        let c = units("他走进屋里，看见桌上放着一一封信");
        assert_eq!(passage_differences(&a, &c, 8), Differences::Edits);
        assert_eq!(passage_differences(&a, &a, 8), Differences::None);
    }

    const TEMPLATE_A: &str = "2018年巡察工作分3个轮次从2018年3月开始至11月结束将对县民政局交通局白柳镇等共计29个县直部门镇以及相关单位进行为期9个月的例行巡察";
    const TEMPLATE_B: &str = "3129年巡察工作分4个轮次从3129年4月开始至22月结束将对县民政局交通局白柳镇等共计30个县直部门镇以及相关单位进行为期0个月的例行巡察";

    /// The initial letters of the characters around a passage may agree by chance, so an
    /// aligned passage reaches a character or two into the unrelated text on each side
    /// (here `用` and `元` before it, a page's date line on one side): still a template.
    #[test]
    fn a_template_with_noise_at_its_ends_differs_in_figures() {
        let a = units(&format!("用{TEMPLATE_A}着力"));
        let b = units(&format!("元202402111047{TEMPLATE_B}增强"));
        assert_eq!(passage_differences(&a, &b, 8), Differences::Figures);
        // More noise than `edge` at an end of both sides is not alignment noise (on one
        // side only, it is text the other side does not share).
        let c = units(&format!("今天下午在会议室里用{TEMPLATE_A}"));
        let d = units(&format!("明年上半年在办公楼内元{TEMPLATE_B}"));
        assert_eq!(passage_differences(&c, &d, 8), Differences::Edits);
    }

    /// A real copy whose page side starts with a date line (figures outside the copied
    /// text) is not a template: only figures inside the equal core are weighed.
    #[test]
    fn a_copy_with_a_date_at_its_end_is_not_a_template() {
        let a = units(&format!("用{TEMPLATE_A}"));
        let b = units(&format!("元202402111047{TEMPLATE_A}"));
        assert_eq!(passage_differences(&a, &b, 8), Differences::Edits);
    }

    /// One edit of another kind inside the template (away from its ends) is an edit.
    #[test]
    fn an_edit_inside_a_template_is_an_edit() {
        let b = units(&TEMPLATE_B.replace("交通局", "交通厅"));
        assert_eq!(passage_differences(&units(TEMPLATE_A), &b, 8), Differences::Edits);
        assert_eq!(passage_differences(&units(TEMPLATE_A), &units(TEMPLATE_B), 8), Differences::Figures);
    }

    /// A story that repeats its templated paragraph: the passage spans both repeats on one
    /// side and one filling of the template on the other. Still a template; a copy of the
    /// repeated paragraph (same figures in either place) is not.
    #[test]
    fn a_repeated_template_against_one_filling_differs_in_figures() {
        let a = units(&format!("用{TEMPLATE_A}。{TEMPLATE_A}着力"));
        let b = units(&format!("元202402111047{TEMPLATE_B}增强"));
        assert_eq!(passage_differences(&a, &b, 8), Differences::Figures);
        assert_eq!(passage_differences(&b, &a, 8), Differences::Figures);
        let copy = units(&format!("元202402111047{TEMPLATE_A}增强"));
        assert_eq!(passage_differences(&a, &copy, 8), Differences::Edits);
        let mixed = units(&format!("用{TEMPLATE_B}。{TEMPLATE_A}着力"));
        assert_eq!(passage_differences(&mixed, &copy, 8), Differences::Edits);
        // A copy of part of a longer text is not a template either.
        let excerpt = units(&format!("{TEMPLATE_A}今天天气很好我们一起去公园散步然后回家吃饭"));
        assert_eq!(passage_differences(&excerpt, &units(TEMPLATE_A), 8), Differences::Edits);
        let edited = units(&TEMPLATE_B.replace("交通局", "交通厅"));
        assert_eq!(passage_differences(&a, &edited, 8), Differences::Edits);
    }

    /// A template whose figures all sit at the start of its paragraph: filled twice, the
    /// aligned passage is the fixed wording after them, equal on both sides; the text
    /// before it goes on equal but for the figures. A real excerpt followed by a date on
    /// both sides, then other text, is not a template, nor is the same filling.
    #[test]
    fn the_fixed_wording_after_a_templates_figures_continues_the_template() {
        const FIXED: &str =
            "推荐名片给好友并关注可再享优惠朋友新开的店货真价实推荐来买这类推广广告在朋友圈可算是屡见不鲜";
        let passage = |head: &str, tail: &str| {
            let text = units(&format!("{head}{FIXED}{tail}"));
            let start = head.chars().count();
            (text, (start, start + FIXED.chars().count()))
        };
        let (a, ra) = passage("市民徐女士说转发集满20个赞可以打九折", "但替人搬运");
        let (b, rb) = passage("今天上午召开转发集满53个赞可以打二折", "据了解此前");
        assert!(template_continues(&a, ra, &b, rb, 8));
        assert!(template_continues(&b, rb, &a, ra, 8));
        // The figures after the passage, on both sides, the template going on after them.
        let (c, rc) = passage("市民徐女士说", "转发集满20个赞可以打九折推荐来买但替人");
        let (d, rd) = passage("今天上午召开", "转发集满53个赞可以打二折推荐来买据了解");
        assert!(template_continues(&c, rc, &d, rd, 8));
        // The same filling: nothing differs around the passage.
        let (e, re) = passage("今天上午召开转发集满20个赞可以打九折", "据了解此前");
        assert!(!template_continues(&a, ra, &e, re, 8));
        // A real excerpt followed by a date on both sides, then other text.
        let (f, rf) = passage("市民徐女士说", "2019年3月1日今天天气很好");
        let (g, rg) = passage("据本报记者报", "2024年7月22日明天我们去上海");
        assert!(!template_continues(&f, rf, &g, rg, 8));
        // Too little equal text beyond the differing figures (fewer than `edge`).
        let (h, rh) = passage("市民徐女士说可以打九折", "但替人搬运");
        let (i, ri) = passage("今天上午召开可以打二折", "据了解此前");
        assert!(!template_continues(&h, rh, &i, ri, 8));
    }

    #[test]
    fn a_passage_inside_a_templated_passage_only_repeats_its_wording() {
        use Differences::{Edits, Figures, None};
        // Passage 0: the templated paragraph, figures filled otherwise. Passages 1-3: the
        // first text's citations elsewhere, aligned onto the same characters of the
        // second text's paragraph (an edited citation, a verbatim phrase without a figure,
        // a phrase inside it on the first side). Passage 4: an exact copy of a filling
        // (with its figures) inside the paragraph. Passage 5: text outside the paragraph.
        let ranges = [
            (1000, 1400, 2000, 2400),
            (100, 140, 2100, 2140),
            (500, 527, 2200, 2227),
            (1100, 1150, 3000, 3050),
            (1500, 1700, 2000, 2200),
            (1800, 1900, 2500, 2600),
        ];
        let differences = [Figures, Edits, None, Edits, None, Edits];
        let holds_figure = [true, true, false, false, true, true];
        assert_eq!(template_wording(&ranges, &differences, &holds_figure), vec![false, true, true, true, false, false]);
        // Without a figures-only passage nothing is the template's wording.
        assert_eq!(template_wording(&ranges[1..], &differences[1..], &holds_figure[1..]), vec![false; 5]);
    }

    #[test]
    fn rendering_names_the_reasons_in_both_languages() {
        let e = Explanation {
            passages: vec![PassageReason {
                evidence: 0,
                chars: 120,
                non_prose_chars: 0,
                rarity: Some(11.0),
                differences: Differences::Figures,
                template_wording: false,
                seen_elsewhere: 0,
                within_stronger_copy: false,
                counted: false,
            }],
            non_prose_chars: 40,
            figures_only_chars: 120,
            names_only_chars: 0,
            template_wording_chars: 0,
            seen_elsewhere_chars: 0,
            within_stronger_copy_chars: 0,
            uncounted_copied_chars: 120,
        };
        let zh = render(&e, Lang::ZhCn).join("\n");
        assert!(zh.contains("模板") && zh.contains("罕见") && zh.contains("网址"), "{zh}");
        let en = render(&e, Lang::from_tag("en-US")).join("\n");
        assert!(en.contains("template") && en.contains("rare") && en.contains("URLs"), "{en}");
        assert_eq!(Lang::from_tag("zh-CN"), Lang::ZhCn);

        // A passage many other documents hold.
        let mut seen = e.clone();
        seen.passages[0].differences = Differences::None;
        seen.passages[0].seen_elsewhere = 4;
        (seen.figures_only_chars, seen.seen_elsewhere_chars) = (0, 120);
        let zh = render(&seen, Lang::ZhCn).join("\n");
        assert!(zh.contains("4 篇文档含有此段") && zh.contains("多篇其他文档同样含有的段落共 120 字"), "{zh}");
        let en = render(&seen, Lang::En).join("\n");
        assert!(en.contains("held by 4 documents") && en.contains("120 characters of passages many other"), "{en}");
        seen.passages[0].seen_elsewhere = u32::MAX;
        assert!(render(&seen, Lang::ZhCn)[0].contains("大量文档含有此段"));
        assert!(render(&seen, Lang::En)[0].contains("too many documents to list"));

        // A template filled with other names.
        let mut names = e.clone();
        names.passages[0].differences = Differences::Names;
        (names.figures_only_chars, names.names_only_chars) = (0, 120);
        let zh = render(&names, Lang::ZhCn).join("\n");
        assert!(zh.contains("仅人名、地名、机构名") && zh.contains("不同的模板段落共 120 字"), "{zh}");
        let en = render(&names, Lang::En).join("\n");
        assert!(en.contains("only names of people") && en.contains("120 characters of templated passages"), "{en}");

        // A passage the page's fuller copy of another section holds.
        let mut stronger = e.clone();
        stronger.passages[0].differences = Differences::Edits;
        stronger.passages[0].within_stronger_copy = true;
        (stronger.figures_only_chars, stronger.within_stronger_copy_chars) = (0, 120);
        let zh = render(&stronger, Lang::ZhCn).join("\n");
        assert!(zh.contains("另一章节的更完整复制已含此段") && zh.contains("已含的段落共 120 字"), "{zh}");
        let en = render(&stronger, Lang::En).join("\n");
        assert!(
            en.contains("fuller copy of another section") && en.contains("120 characters of passages inside"),
            "{en}"
        );
    }

    #[test]
    fn a_template_filled_with_other_names_differs_in_names() {
        let k = 5;
        // Two prosecutions reported with one formula: other cities, another defendant.
        let a = "移送江苏省常州市人民检察院审查起诉。近日，江苏省常州市人民检察院已向江苏省常州市中级人民法院提起公诉。检察机关起诉指控：被告人项俊波利用职务上的便利";
        let b = "移送浙江省杭州市人民检察院审查起诉。近日，杭州市人民检察院已向杭州市中级人民法院提起公诉。检察机关起诉指控：被告人冯新柱利用职务上的便利";
        assert!(differs_in_names(a, b, k));
        // Other people's names and figures together.
        let a = "国务院总理李克强3日上午在人民大会堂会见了来访的德国总理默克尔，双方就两国关系深入交换意见";
        let b = "国务院总理李强15日上午在人民大会堂会见了来访的俄罗斯总理普京，双方就两国关系深入交换意见";
        assert!(differs_in_names(a, b, k));
    }

    #[test]
    fn edits_outside_names_and_single_swaps_are_not_a_template() {
        let k = 5;
        // A pirate's homophone swaps: one character at a time, in names or not.
        let a = "却说曹操正慌走间，正南上一彪军到，乃夏侯惇引军来救援，截住吕布大战。斗到黄昏时分，大雨如注";
        let b = "却说曹超正慌走间，正南上一彪军到，乃夏侯惇引军来救援，截住吕步大战。斗到黄昏时分，大雨如注";
        assert!(!differs_in_names(a, b, k));
        // A name changed, and a word elsewhere too.
        let a = "近日，江苏省常州市人民检察院已向江苏省常州市中级人民法院提起公诉，检察机关在审查起诉阶段依法告知了被告人享有的诉讼权利";
        let b = "近日，杭州市人民检察院已向杭州市中级人民法院提起公诉，检察机关在审查起诉期间依法告知了被告人享有的诉讼权利";
        assert!(!differs_in_names(a, b, k));
        // The same text, and noise at an end only.
        assert!(!differs_in_names(a, a, k));
        let c = format!("{}的", &a[..a.len() - "诉讼权利".len()]);
        assert!(!differs_in_names(a, &c, k));
    }

    fn numbers(s: &str) -> String {
        let chars: Vec<char> = s.chars().collect();
        chars.iter().zip(number_chars(&chars)).filter(|(_, n)| *n).map(|(c, _)| *c).collect()
    }

    #[test]
    fn the_figures_are_the_digits_and_the_listed_characters() {
        let listed = "〇零一二三四五六七八九十百千万亿两壹贰叁肆伍陆柒捌玖拾佰仟";
        for c in (0..0x3_0000).filter_map(char::from_u32) {
            assert_eq!(is_figure(c), c.is_ascii_digit() || listed.contains(c), "{c}");
        }
    }

    #[test]
    fn numerals_that_write_numbers_are_figures_numerals_inside_words_are_not() {
        assert_eq!(numbers("第十九次会议于22日在北京举行"), "十九22");
        assert_eq!(numbers("第一届大会，三月五日开幕"), "一三五");
        assert_eq!(numbers("还有一个重要的原因，一旦杨过知道，柳二娘一股凉意"), "");
        assert_eq!(numbers("两人用了万元"), "");
        assert_eq!(numbers("重新书写六万元的欠条，十万元"), "六十");
    }
}
