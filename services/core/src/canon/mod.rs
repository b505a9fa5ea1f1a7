//! Canonicalisation: bytes in any common Chinese charset, HTML or plain text, to one
//! canonical text that every fingerprint starts from, with a map back to the original.
//!
//! Canonical text: main content only (for HTML), paragraphs separated by `\n`, NFKC,
//! traditional -> simplified, lower-case Latin, runs of white space collapsed to one
//! space. Every canonical character remembers the span of the decoded original it came
//! from ([`CanonicalText::original_span`]), so reports quote the original, not the canonical.
//!
//! The stages, each in its own file:
//! - `charset`: BOM, strict UTF-8, declared charset (caller's hint, `<meta>`), then
//!   detection with `chardetng`; binary data is refused with [`CoreError::Undecodable`].
//! - `html`: a position-keeping lexer, paragraphs at block boundaries, and main-content
//!   selection (boilerplate elements and class names, link density, neighbours). The same
//!   lexer gives the start tags of a page with their attributes ([`start_tags`]) to
//!   callers that need elements rather than text (links, a page's own URL, EPUB package
//!   files), and its one character-reference decoder is [`decode_char_refs`].
//! - `normalize`: NFKC, lower case, invisible characters removed, white space collapsed,
//!   then `t2s`: the OpenCC tables (traditional, Taiwan and Hong Kong forms) merged into
//!   one leftmost-longest dictionary.
//!
//! Conventions the fingerprints rely on:
//! - A paragraph is a block of HTML (`p`, `div`, `br`, `li`, `td` ...) or a line of plain
//!   text (and of `<pre>`); empty paragraphs vanish.
//! - White space next to a CJK character (Han, kana, CJK punctuation) is dropped instead
//!   of collapsed: it carries no meaning in Chinese (browsers drop line breaks there too),
//!   and pirate copies space text out to dodge matching. Elsewhere a run becomes one space.
//! - Zero-width and other format characters (U+200B-U+200F, U+FEFF, soft hyphen, bidi
//!   controls, variation selectors) and control characters are removed.
//! - Spans are half-open character offsets into [`CanonicalText::original`], starts never
//!   decrease; a character made from several original characters (a phrase converted as a
//!   whole, a composed accent, a character reference) spans all of them; a separator
//!   (`\n`, ` `) has an empty span at the start of the character after it.
//! - The canonical text is a fixed point: canonicalising it again as plain text changes nothing.

use serde::{Deserialize, Serialize};

use crate::params::CanonParams;
use crate::CoreError;

pub use html::{decode_char_refs, start_tags, visible_text, StartTag, StartTags};

/// Input format of a document.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum InputFormat {
    /// Decide from the content (markup sniffing).
    #[default]
    Auto,
    /// HTML (or XHTML).
    Html,
    /// Plain text.
    Text,
}

/// The decoded original and what was detected about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoded {
    /// The text the bytes encode; evidence offsets refer to it.
    pub text: String,
    /// Name of the charset the bytes were decoded with (WHATWG label, e.g. `UTF-8`, `GBK`, `Big5`).
    pub charset: &'static str,
    /// Number of malformed byte sequences replaced by U+FFFD.
    pub replacements: usize,
    /// Number of input bytes in those malformed sequences (what the replacements stand for).
    pub replaced_bytes: usize,
}

/// A half-open span of characters in the decoded original.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SourceSpan {
    /// First character (inclusive).
    pub start: u32,
    /// End character (exclusive).
    pub end: u32,
}

/// The canonical text of one document with its map back to the original.
#[derive(Debug, Clone)]
pub struct CanonicalText {
    /// The decoded original; `None` when it is `text` itself ([`CanonicalText::of_canonical`],
    /// until blanked): a page analysed from its stored text kept a second copy of it.
    original: Option<String>,
    charset: &'static str,
    format: InputFormat,
    text: String,
    /// One span per character of `text`.
    source: SpanMap,
    title: Option<String>,
}

impl CanonicalText {
    /// Bytes this text holds on the heap (capacities, not lengths).
    pub fn heap_bytes(&self) -> usize {
        self.original.as_ref().map_or(0, String::capacity)
            + self.text.capacity()
            + self.source.heap_bytes()
            + self.title.as_ref().map_or(0, String::capacity)
    }

    /// Assemble from parts. `source` must hold one span per character of `text`.
    pub(crate) fn from_parts(
        original: String,
        charset: &'static str,
        format: InputFormat,
        text: String,
        source: SpanMap,
        title: Option<String>,
    ) -> Self {
        debug_assert_eq!(text.chars().count(), source.len());
        CanonicalText { original: Some(original), charset, format, text, source, title }
    }

    /// A canonical text made before, taken as it is: its own original, each character
    /// mapped to itself. A matcher analyses a page so from the canonical text ingest
    /// stored (its [`CanonParams::tag`] the current one): the fingerprints are those of
    /// the page's canonical text, without decoding and extracting its body again; the
    /// evidence it finds is in canonical offsets until the page's body is read
    /// ([`CanonicalText::original_span`] of the body's canonical text maps them).
    pub fn of_canonical(text: String) -> CanonicalText {
        let source = SpanMap::identity(text.chars().count() as u32);
        CanonicalText { original: None, charset: "UTF-8", format: InputFormat::Text, text, source, title: None }
    }

    /// This text with the characters at the canonical offsets `positions` (ascending;
    /// repeats and offsets past the end are ignored) replaced by a space each: one
    /// character for one, so the map to the original, and the original, are unchanged.
    ///
    /// A matcher blanks a site's boilerplate so: the k-grams it finds are of the canonical
    /// text, and blanking them there needs no second canonicalisation of an edited
    /// original (that analysis was 6.4% of `match --all`'s samples, docs/benchmarks.md).
    pub fn into_blanked(mut self, positions: &[u32]) -> CanonicalText {
        if positions.is_empty() {
            return self;
        }
        let mut text = String::with_capacity(self.text.len());
        let mut next = positions.iter().map(|&p| p as usize).peekable();
        // Bytes of `self.text` copied or blanked so far.
        let mut copied = 0;
        for (i, (byte, c)) in self.text.char_indices().enumerate() {
            while next.next_if(|&p| p < i).is_some() {}
            match next.peek() {
                Some(&p) if p == i => {
                    text.push_str(&self.text[copied..byte]);
                    text.push(' ');
                    copied = byte + c.len_utf8();
                }
                Some(_) => {}
                None => break,
            }
        }
        text.push_str(&self.text[copied..]);
        let unblanked = std::mem::replace(&mut self.text, text);
        // A text that was its own original keeps the unblanked one as its original.
        self.original.get_or_insert(unblanked);
        self
    }

    /// The decoded original.
    pub fn original(&self) -> &str {
        self.original.as_deref().unwrap_or(&self.text)
    }
    /// The decoded original, the rest dropped.
    pub fn into_original(self) -> String {
        self.original.unwrap_or(self.text)
    }
    /// The charset the original was decoded from.
    pub fn charset(&self) -> &'static str {
        self.charset
    }
    /// The format that was detected or given (never `Auto`).
    pub fn format(&self) -> InputFormat {
        self.format
    }
    /// The canonical text.
    pub fn text(&self) -> &str {
        &self.text
    }
    /// The document title (HTML `<title>`), if any.
    pub fn title(&self) -> Option<&str> {
        self.title.as_deref()
    }
    /// Number of characters of the canonical text.
    pub fn char_len(&self) -> usize {
        self.source.len()
    }
    /// Span in the original of canonical character `i` (empty at the end for `i` past the end).
    pub fn source_of(&self, i: usize) -> SourceSpan {
        self.source.at(i)
    }
    /// The spans of all canonical characters, one per character of [`CanonicalText::text`].
    pub fn source_spans(&self) -> &SpanMap {
        &self.source
    }
    /// Character span in the original covered by canonical characters `start..end`.
    ///
    /// Returns `start == end` at the right place for an empty range.
    pub fn original_span(&self, start: usize, end: usize) -> (usize, usize) {
        let len = self.source.len();
        if len == 0 {
            return (0, 0);
        }
        let start = start.min(len);
        let end = end.clamp(start, len);
        if start == end {
            let at = self.source_of(start).start;
            return (at as usize, at as usize);
        }
        let (a, b) = self.source.bounds(start, end);
        (a as usize, b as usize)
    }
    /// The original text between character offsets `start..end`.
    pub fn quote_original(&self, start: usize, end: usize) -> &str {
        slice_chars(self.original(), start, end)
    }
}

/// `s[start..end]` in characters (clamped to the string).
///
/// Evidence is quoted by character offsets from texts of tens of thousands of characters:
/// decoding every character up to the offset was ~1% of `match --all`'s instructions.
/// `str_indices` counts the characters of whole blocks of bytes instead.
pub fn slice_chars(s: &str, start: usize, end: usize) -> &str {
    let a = str_indices::chars::to_byte_idx(s, start);
    let b = if end > start { a + str_indices::chars::to_byte_idx(&s[a..], end - start) } else { a };
    &s[a..b]
}

/// Decode bytes to text: BOM, then UTF-8 (strict, or with a few malformed bytes replaced
/// by U+FFFD), then the declared charset, then detection among the Chinese charsets
/// (GB18030/GBK, Big5, ...). `hint` is a charset label from an HTTP header or a caller; it
/// is used when it decodes the bytes cleanly, or, for a multi-byte charset, with only a
/// few malformed sequences. Text that is mostly valid in a multi-byte charset is decoded
/// in it with replacements rather than as a single-byte charset that "decodes" anything.
pub fn decode(bytes: &[u8], hint: Option<&str>) -> Result<Decoded, CoreError> {
    charset::decode(bytes, hint)
}

/// Canonicalise bytes: decode, extract (for HTML), normalise.
pub fn canonicalize(bytes: &[u8], format: InputFormat, params: &CanonParams) -> Result<CanonicalText, CoreError> {
    canonicalize_with_hint(bytes, format, None, params)
}

/// [`canonicalize`] with a charset hint (e.g. the HTTP `Content-Type` charset).
pub fn canonicalize_with_hint(
    bytes: &[u8],
    format: InputFormat,
    hint: Option<&str>,
    params: &CanonParams,
) -> Result<CanonicalText, CoreError> {
    if bytes.is_empty() {
        return Err(CoreError::EmptyInput);
    }
    if bytes.len() > params.max_input_bytes {
        return Err(CoreError::TooLarge { size: bytes.len(), limit: params.max_input_bytes });
    }
    let decoded = decode(bytes, hint)?;
    canonicalize_decoded(decoded.text, decoded.charset, format, params)
}

/// Canonicalise a text already in memory (recorded as UTF-8): empty and over-large input
/// is refused as [`canonicalize_with_hint`] refuses bytes.
pub fn canonicalize_str(text: &str, format: InputFormat, params: &CanonParams) -> Result<CanonicalText, CoreError> {
    if text.is_empty() {
        return Err(CoreError::EmptyInput);
    }
    if text.len() > params.max_input_bytes {
        return Err(CoreError::TooLarge { size: text.len(), limit: params.max_input_bytes });
    }
    canonicalize_decoded(text.to_owned(), "UTF-8", format, params)
}

/// Canonicalise text that is already decoded (`charset` is recorded as given).
pub fn canonicalize_decoded(
    original: String,
    charset: &'static str,
    format: InputFormat,
    params: &CanonParams,
) -> Result<CanonicalText, CoreError> {
    normalize::canonicalize_decoded(original, charset, format, params)
}

/// Decide whether decoded text is HTML or plain text, as [`InputFormat::Auto`] does:
/// a leading tag, a doctype, `<html>`, `<head>` or `<body>`, or at least two common
/// tags (`<p>`, `<div`, `<br>` ...) in the first 4 KiB.
pub fn sniff_format(text: &str) -> InputFormat {
    normalize::sniff(text)
}

/// Convert traditional Chinese (including Taiwan and Hong Kong variant forms) to
/// simplified with the same merged OpenCC tables as the canonicaliser, without any other
/// normalisation.
pub fn to_simplified(text: &str) -> String {
    t2s::T2S.convert(text)
}

mod char_classes;
mod charset;
mod html;
mod normalize;
mod spans;
mod t2s;

pub use spans::{SpanCursor, SpanIter, SpanMap};

#[cfg(test)]
mod slice_tests {
    use super::slice_chars;
    use proptest::prelude::*;

    /// What `slice_chars` was: every character decoded up to the offsets.
    fn by_char_indices(s: &str, start: usize, end: usize) -> &str {
        let mut indices = s.char_indices().map(|(i, _)| i).chain(std::iter::once(s.len()));
        let a = indices.nth(start).unwrap_or(s.len());
        let b = if end > start { indices.nth(end - start - 1).unwrap_or(s.len()) } else { a };
        &s[a..b]
    }

    proptest! {
        #[test]
        fn slicing_by_characters_counts_every_width(
            parts in proptest::collection::vec(prop_oneof!["[a-z ]{0,40}", "[一-龥]{0,40}", "[é€😀]{0,10}"], 0..12),
            start in 0usize..400,
            len in 0usize..400,
        ) {
            let s: String = parts.concat();
            for (a, b) in [(start, start + len), (start, start), (start + len, start), (0, usize::MAX)] {
                prop_assert_eq!(slice_chars(&s, a, b), by_char_indices(&s, a, b));
            }
        }
    }
}

#[cfg(test)]
mod blank_tests {
    use super::{canonicalize_str, CanonicalText, InputFormat};
    use crate::params::CanonParams;
    use proptest::prelude::*;

    proptest! {
        /// Blanking replaces exactly the characters at the offsets, one space for one,
        /// and keeps the original and the map (every evidence offset stays where it was).
        #[test]
        fn blanking_replaces_characters_one_for_one(
            text in "[a-z中文字臺灣，。\n ]{1,40}",
            positions in prop::collection::vec(0u32..45, 0..12),
        ) {
            let params = CanonParams::default();
            let Ok(canonical) = canonicalize_str(&text, InputFormat::Text, &params) else { return Ok(()) };
            let mut positions = positions;
            positions.sort_unstable();
            let expected: String = canonical
                .text()
                .chars()
                .enumerate()
                .map(|(i, c)| if positions.binary_search(&(i as u32)).is_ok() { ' ' } else { c })
                .collect();
            let spans: Vec<_> = (0..canonical.char_len()).map(|i| canonical.source_of(i)).collect();
            let original = canonical.original().to_owned();
            let blanked = canonical.into_blanked(&positions);
            prop_assert_eq!(blanked.text(), expected.as_str());
            prop_assert_eq!(blanked.original(), original.as_str());
            prop_assert_eq!((0..blanked.char_len()).map(|i| blanked.source_of(i)).collect::<Vec<_>>(), spans);
        }

        /// A canonical text taken as it is maps each character to itself: its evidence
        /// offsets are canonical offsets, and a passage quotes the canonical text.
        #[test]
        fn a_canonical_text_taken_as_it_is_maps_to_itself(
            text in "[a-z中文字臺灣，。\n ]{1,40}",
            start in 0usize..45,
            len in 0usize..20,
        ) {
            let params = CanonParams::default();
            let Ok(canonical) = canonicalize_str(&text, InputFormat::Text, &params) else { return Ok(()) };
            let taken = CanonicalText::of_canonical(canonical.text().to_owned());
            prop_assert_eq!(taken.text(), canonical.text());
            prop_assert_eq!(taken.original(), canonical.text());
            prop_assert_eq!(taken.char_len(), canonical.char_len());
            let n = taken.char_len();
            let (s, e) = (start.min(n), (start + len).min(n));
            prop_assert_eq!(taken.original_span(s, e), (s, e));
            let quoted: String = canonical.text().chars().skip(s).take(e - s).collect();
            prop_assert_eq!(taken.quote_original(s, e), quoted.as_str());
            // Blanked (a site's boilerplate), its original is still the text taken, and
            // the text is blanked as any canonical text is.
            let positions: Vec<u32> = (s as u32..e as u32).collect();
            let blanked = taken.clone().into_blanked(&positions);
            prop_assert_eq!(blanked.original(), canonical.text());
            let expected = canonical.clone().into_blanked(&positions);
            prop_assert_eq!(blanked.text(), expected.text());
            prop_assert_eq!(blanked.quote_original(s, e), quoted.as_str());
            prop_assert_eq!(blanked.into_original(), canonical.text());
            prop_assert_eq!(taken.into_original(), canonical.text());
        }
    }
}
