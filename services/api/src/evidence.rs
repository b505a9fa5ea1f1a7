//! Evidence as reviewers and reports read it: the passages of a match quoted from both
//! originals with their context, the page's original text, the plain-words finding and
//! the verdict's reasons, in Chinese and English. Used by the match view and the printable
//! report; it reads what the matcher stored and never re-runs the algorithms.

use serde::Serialize;
use zhiwen_matcher::page_text::PageOriginal;
use zhiwen_store::MatchDetail;

use crate::AppState;

/// Characters of context quoted before and after each passage.
const CONTEXT: usize = 60;

/// Byte offsets of chosen character offsets of one text, found in one pass over it.
struct CharOffsets {
    /// `(character offset, byte offset)`, sorted; offsets past the end map to its length.
    pairs: Vec<(usize, usize)>,
    len: usize,
}

impl CharOffsets {
    fn new(text: &str, mut wanted: Vec<usize>) -> Self {
        wanted.sort_unstable();
        wanted.dedup();
        let mut pairs = Vec::with_capacity(wanted.len());
        let mut next = wanted.iter().copied().peekable();
        for (n, (byte, _)) in text.char_indices().enumerate() {
            let Some(&w) = next.peek() else { break };
            if w == n {
                pairs.push((w, byte));
                next.next();
            }
        }
        pairs.extend(next.map(|w| (w, text.len())));
        CharOffsets { pairs, len: text.len() }
    }

    fn byte(&self, chars: usize) -> usize {
        match self.pairs.binary_search_by_key(&chars, |p| p.0) {
            Ok(i) => self.pairs[i].1,
            Err(_) => self.len,
        }
    }

    /// Characters `start..end` of the text (clamped to its end).
    fn slice<'t>(&self, text: &'t str, start: usize, end: usize) -> &'t str {
        let (a, b) = (self.byte(start), self.byte(end));
        &text[a.min(b)..b]
    }
}

/// One side of a passage: the quoted text at its character offsets, with up to
/// [`CONTEXT`] characters of the text before and after it.
#[derive(Serialize)]
pub(crate) struct Quote<'a> {
    pub start: usize,
    pub end: usize,
    pub text: &'a str,
    pub before: &'a str,
    pub after: &'a str,
    /// The same three pieces as a reader sees them, for a quote from HTML source (the
    /// verbatim ones keep the markup the offsets count).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub visible: Option<Visible>,
}

/// A quote's pieces without markup ([`PageOriginal::visible`]).
#[derive(Serialize)]
pub(crate) struct Visible {
    pub text: String,
    pub before: String,
    pub after: String,
}

impl Quote<'_> {
    /// The pieces to show a reader: the visible ones when there are, else the verbatim.
    pub(crate) fn shown(&self) -> (&str, &str, &str) {
        match &self.visible {
            Some(v) => (&v.before, &v.text, &v.after),
            None => (self.before, self.text, self.after),
        }
    }
}

/// One evidence passage quoted from both texts.
#[derive(Serialize)]
pub(crate) struct Passage<'a> {
    pub chars: usize,
    pub work: Quote<'a>,
    pub page: Quote<'a>,
}

fn quotes<'a>(
    text: &'a str,
    page: Option<&PageOriginal<'_>>,
    spans: impl Iterator<Item = (usize, usize, &'a str)> + Clone,
) -> Vec<Quote<'a>> {
    let wanted =
        spans.clone().flat_map(|(s, e, _)| [s.saturating_sub(CONTEXT), s, e, e.saturating_add(CONTEXT)]).collect();
    let at = CharOffsets::new(text, wanted);
    spans
        .map(|(start, end, quoted)| {
            let before = at.slice(text, start.saturating_sub(CONTEXT), start);
            let after = at.slice(text, end, end.saturating_add(CONTEXT));
            let visible = page.and_then(|p| {
                Some(Visible { text: p.visible(quoted)?, before: p.visible(before)?, after: p.visible(after)? })
            });
            Quote { start, end, text: quoted, before, after, visible }
        })
        .collect()
}

/// The page's original text as the matcher compared it (decoded body, or the text of
/// pages imported as text): evidence offsets on the page side point into it.
pub(crate) fn page_original<'d>(state: &AppState, d: &'d MatchDetail) -> PageOriginal<'d> {
    zhiwen_matcher::page_text::page_original(
        zhiwen_matcher::page_text::StoredPageText::new(&d.page_body, d.page_charset.as_deref(), &d.page_text)
            .with_format(d.page_format),
        &state.matcher.fingerprinter().params().canon,
    )
}

/// The evidence passages of `d`, quoted from its section and from `page` (its
/// [`page_original`]; quotes from HTML also read without their markup).
pub(crate) fn passages<'a>(d: &'a MatchDetail, page: &'a PageOriginal<'_>) -> Vec<Passage<'a>> {
    let ev = &d.record.comparison.evidence;
    let work = quotes(&d.section_text, None, ev.iter().map(|e| (e.a_start, e.a_end, e.a_text.as_str())));
    let pages = quotes(&page.text, Some(page), ev.iter().map(|e| (e.b_start, e.b_end, e.b_text.as_str())));
    ev.iter().zip(work.into_iter().zip(pages)).map(|(e, (work, page))| Passage { chars: e.chars, work, page }).collect()
}

/// "78% of chapter 12 appears on this page", in both languages.
pub(crate) fn explanation(d: &MatchDetail) -> (String, String) {
    let c = &d.record.comparison;
    let pct = (c.evidence_coverage_a * 100.0).round();
    let n = d.section_ordinal + 1;
    let title = if d.section_title.is_empty() { String::new() } else { format!("「{}」", d.section_title) };
    let title_en = if d.section_title.is_empty() { String::new() } else { format!(" ({})", d.section_title) };
    let zh =
        format!("第{n}章{title}：{pct}% 的内容出现在此网页上（共 {} 字，{} 段）。", c.copied_chars, c.evidence.len());
    let en = format!(
        "{pct}% of chapter {n}{title_en} appears on this page ({} characters in {} passages).",
        c.copied_chars,
        c.evidence.len()
    );
    (zh, en)
}

#[derive(Serialize)]
pub(crate) struct ExplanationJson {
    pub(crate) zh: String,
    pub(crate) en: String,
    /// Why the verdict was reached, one line per passage and per discarded kind of text
    /// (URLs and ids, templates filled twice), in both languages.
    pub(crate) reasons: ReasonsJson,
}

#[derive(Serialize)]
pub(crate) struct ReasonsJson {
    pub(crate) zh: Vec<String>,
    pub(crate) en: Vec<String>,
}

/// The verdict's reasons (which passages, how rare their words are, what differed
/// inside them), in Chinese and English.
pub(crate) fn reasons(d: &MatchDetail) -> (Vec<String>, Vec<String>) {
    use zhiwen_core::formulaic::{render, Lang};
    let e = &d.record.comparison.explanation;
    (render(e, Lang::ZhCn), render(e, Lang::En))
}
