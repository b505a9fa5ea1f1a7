//! Normalisation with offsets: NFKC, traditional -> simplified, lower case, white space,
//! each canonical character carrying the span of the original it came from.
//!
//! Two stages per paragraph. Stage A reads the original character by character: a
//! 64 KiB class table sends ASCII and every BMP character that NFKC leaves alone (and
//! that is not white space, upper case or invisible) straight through; the rest goes
//! through NFKC in small chunks (a stable character plus the characters that may combine
//! with it). Stage B runs traditional -> simplified over the paragraph (phrases need
//! look-ahead) and decides which white space survives.

use unicode_normalization::UnicodeNormalization;

use super::char_classes::{classify, DROP, LOWER, MAP, NEWLINE, PASS, SLOW, SPACE};
use super::html::{self, RunKind};
use super::t2s::{Step, T2s, T2S};
use super::{CanonicalText, InputFormat, SourceSpan, SpanMap};
use crate::params::CanonParams;
use crate::CoreError;

/// The class of every BMP character ([`super::char_classes::bmp_tables`], built by
/// `build.rs`): one byte each.
static CLASS: &[u8; 0x1_0000] = include_bytes!(concat!(env!("OUT_DIR"), "/canon_class.bin"));
/// What a [`MAP`] character of the BMP becomes: its code point, 4 bytes little-endian each.
static MAP_TO: &[u8; 0x4_0000] = include_bytes!(concat!(env!("OUT_DIR"), "/canon_map.bin"));

/// The class of a BMP character `u` (`u < 0x1_0000`).
#[inline(always)]
fn bmp_class(u: u32) -> u8 {
    CLASS[(u & 0xFFFF) as usize]
}

/// What [`MAP`] character `c` becomes (`c` itself above the BMP, which the table leaves out).
#[inline]
fn mapped(c: char) -> char {
    let u = c as usize;
    if u >= 0x1_0000 {
        return c;
    }
    let at = u * 4;
    let bytes = [MAP_TO[at], MAP_TO[at + 1], MAP_TO[at + 2], MAP_TO[at + 3]];
    char::from_u32(u32::from_le_bytes(bytes)).unwrap_or(c)
}

/// Characters of scripts written without spaces between words: white space next to
/// them carries no meaning (hard-wrapped HTML, "spaced out" pirate copies), so it is
/// dropped rather than kept as a separator.
pub(super) fn is_cjk(c: char) -> bool {
    matches!(c as u32,
        0x2E80..=0x2FDF | 0x3000..=0x303F | 0x3040..=0x30FF | 0x3100..=0x312F | 0x31A0..=0x31FF
        | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xF900..=0xFAFF | 0xFE30..=0xFE4F | 0xFF00..=0xFFEF
        | 0x20000..=0x3FFFF)
}

#[derive(Debug, Clone, Copy)]
struct Unit {
    c: char,
    start: u32,
    end: u32,
}

/// A synthetic space: collapsed white space, kept or dropped in stage B.
const GAP: char = ' ';

/// Builds the canonical text from pieces of the original, in order.
pub(super) struct Normalizer<'a> {
    original: &'a str,
    t2s: Option<&'static T2s>,
    byte_pos: usize,
    char_pos: u32,
    para: Vec<Unit>,
    chunk: Vec<Unit>,
    scratch: String,
    pending_space: bool,
    /// The last unit of `para` came from one stable character and may start a chunk.
    last_simple: bool,
    text: String,
    source: SpanMap,
}

fn count_chars(bytes: &[u8]) -> u32 {
    // Count the bytes that start a character (all but UTF-8 continuation bytes).
    let n = bytes.iter().filter(|&&b| (b as i8) >= -0x40).count();
    u32::try_from(n).unwrap_or(u32::MAX)
}

impl<'a> Normalizer<'a> {
    /// A normaliser of `original`, its output sized for `fed`: the byte ranges of
    /// `original` it will be fed (all of a plain text; of a page, its kept text runs, which
    /// a page's markup, scripts and navigation can outweigh several times: sized by the
    /// whole page, every page in flight held two to three times the memory its text needs).
    pub(super) fn new(
        original: &'a str,
        fed: impl IntoIterator<Item = std::ops::Range<usize>>,
        t2s: Option<&'static T2s>,
    ) -> Self {
        let bytes = original.as_bytes();
        let (mut fed_bytes, mut runs) = (0usize, 0usize);
        for r in fed {
            fed_bytes += bytes.get(r).map_or(0, <[u8]>::len);
            runs += 1;
        }
        Normalizer {
            original,
            t2s,
            byte_pos: 0,
            char_pos: 0,
            para: Vec::with_capacity(256),
            chunk: Vec::new(),
            scratch: String::new(),
            pending_space: false,
            last_simple: false,
            // Canonical characters rarely outnumber the original's; a paragraph break
            // between runs is the one character added.
            text: String::with_capacity(fed_bytes + runs),
            // A text run is a run of spans at least, with a separator between paragraphs.
            source: SpanMap::with_capacity(runs * 2),
        }
    }

    /// Move the character counter to byte `byte` of the original.
    fn seek(&mut self, byte: usize) {
        let bytes = self.original.as_bytes();
        let byte = byte.min(bytes.len());
        if byte >= self.byte_pos {
            self.char_pos = self.char_pos.saturating_add(count_chars(&bytes[self.byte_pos..byte]));
        } else {
            self.char_pos = count_chars(&bytes[..byte]);
        }
        self.byte_pos = byte;
    }

    /// Feed bytes `start..end` of the original; `newline_breaks`: a line break ends the
    /// paragraph (plain text, `<pre>`), else it is white space (HTML).
    pub(super) fn text_run(&mut self, start: usize, end: usize, newline_breaks: bool) {
        let Some(s) = self.original.get(start..end) else {
            return;
        };
        self.seek(start);
        let mut pos = self.char_pos;
        for c in s.chars() {
            let next = pos.saturating_add(1);
            // Fast path: a character that passes unchanged, with no chunk pending.
            if CLASS.get(c as usize) == Some(&PASS) && self.chunk.is_empty() {
                self.push(Unit { c, start: pos, end: next });
                self.last_simple = true;
            } else {
                self.feed(c, pos, next, newline_breaks);
            }
            pos = next;
        }
        self.byte_pos = end;
        self.char_pos = pos;
    }

    /// Feed characters that stand for bytes `start..end` of the original (a character reference).
    pub(super) fn chars_run(&mut self, start: usize, end: usize, chars: &[char]) {
        self.seek(start);
        let from = self.char_pos;
        self.seek(end);
        let to = self.char_pos;
        for &c in chars {
            self.feed(c, from, to, false);
        }
    }

    #[inline]
    fn feed(&mut self, c: char, start: u32, end: u32, newline_breaks: bool) {
        let u = c as u32;
        let class = if u < 0x1_0000 { bmp_class(u) } else { classify(c) };
        if class != SLOW && !self.chunk.is_empty() {
            self.flush_chunk();
        }
        match class {
            PASS => {
                self.push(Unit { c, start, end });
                self.last_simple = true;
            }
            MAP => {
                let d = mapped(c);
                self.push(Unit { c: d, start, end });
                self.last_simple = true;
            }
            LOWER => {
                let mut count = 0;
                for l in c.to_lowercase() {
                    self.push(Unit { c: l, start, end });
                    count += 1;
                }
                self.last_simple = count == 1;
            }
            SPACE => self.space(),
            NEWLINE => {
                if newline_breaks {
                    self.end_paragraph();
                } else {
                    self.space();
                }
            }
            DROP => {}
            _ => {
                if self.chunk.is_empty() && self.last_simple {
                    // The previous character may compose with this one (e + U+0301).
                    if let Some(prev) = self.para.pop() {
                        self.chunk.push(prev);
                    }
                }
                self.chunk.push(Unit { c, start, end });
                self.last_simple = false;
            }
        }
    }

    #[inline]
    fn space(&mut self) {
        self.pending_space = true;
        self.last_simple = false;
    }

    #[inline]
    fn push(&mut self, u: Unit) {
        if self.pending_space {
            self.pending_space = false;
            if !self.para.is_empty() {
                self.para.push(Unit { c: GAP, start: u.start, end: u.start });
            }
        }
        self.para.push(u);
    }

    /// NFKC over a chunk. When the chunk's characters normalise one by one to the same
    /// result, each keeps its own span; otherwise (composition) every output character
    /// gets the span of the whole chunk.
    fn flush_chunk(&mut self) {
        let chunk = std::mem::take(&mut self.chunk);
        let mut whole = std::mem::take(&mut self.scratch);
        whole.clear();
        whole.extend(chunk.iter().map(|u| u.c).nfkc());
        let mut outputs = whole.chars();
        let precise = chunk.iter().all(|u| std::iter::once(u.c).nfkc().all(|d| outputs.next() == Some(d)))
            && outputs.next().is_none();
        if precise {
            for u in &chunk {
                for d in std::iter::once(u.c).nfkc() {
                    self.emit_normalized(d, u.start, u.end);
                }
            }
        } else if let (Some(first), Some(last)) = (chunk.first(), chunk.last()) {
            let (start, end) = (first.start, last.end);
            for d in whole.chars() {
                self.emit_normalized(d, start, end);
            }
        }
        self.scratch = whole;
        let mut chunk = chunk;
        chunk.clear();
        self.chunk = chunk;
        self.last_simple = false;
    }

    /// A character that NFKC produced: only case, white space and invisibles remain to do.
    fn emit_normalized(&mut self, d: char, start: u32, end: u32) {
        let u = d as u32;
        let class = if u < 0x1_0000 { bmp_class(u) } else { classify(d) };
        match class {
            SPACE | NEWLINE => self.space(),
            DROP => {}
            LOWER => {
                for l in d.to_lowercase() {
                    self.push(Unit { c: l, start, end });
                }
            }
            // A capital letter with a one-letter lower case (class MAP in the table), as
            // NFKC makes of 𝐀 (U+1D400): lower-cased like any other.
            MAP => {
                let l = mapped(d);
                self.push(Unit { c: l, start, end });
            }
            _ => self.push(Unit { c: d, start, end }),
        }
    }

    /// End the current paragraph: stage B.
    pub(super) fn end_paragraph(&mut self) {
        if !self.chunk.is_empty() {
            self.flush_chunk();
        }
        self.pending_space = false;
        self.last_simple = false;
        let para = std::mem::take(&mut self.para);
        self.stage_b(&para);
        let mut para = para;
        para.clear();
        self.para = para;
    }

    fn stage_b(&mut self, para: &[Unit]) {
        let Some(first) = para.iter().position(|u| u.c != GAP) else {
            return;
        };
        let last = para.iter().rposition(|u| u.c != GAP).unwrap_or(first);
        let para = &para[first..=last];
        if !self.text.is_empty() {
            self.out('\n', para[0].start, para[0].start);
        }
        let mut prev: char = '\n';
        let mut i = 0;
        while i < para.len() {
            let u = para[i];
            if u.c == GAP {
                let next = para.get(i + 1).map_or(GAP, |n| n.c);
                if next != GAP && prev != GAP && !is_cjk(prev) && !is_cjk(next) {
                    self.out(GAP, u.start, u.start);
                    prev = GAP;
                }
                i += 1;
                continue;
            }
            if let Some(t2s) = self.t2s {
                match t2s.lookup_at(u.c, |k| para.get(i + k).map(|x| x.c)) {
                    Step::Phrase { len, value } => {
                        let len = len.min(para.len() - i);
                        if value.len() == len {
                            for (k, &v) in value.iter().enumerate() {
                                let src = para[i + k];
                                self.out(v, src.start, src.end);
                            }
                        } else {
                            let (start, end) = (u.start, para[i + len - 1].end);
                            for &v in value {
                                self.out(v, start, end);
                            }
                        }
                        prev = value.last().copied().unwrap_or(prev);
                        i += len.max(1);
                        continue;
                    }
                    Step::Char(c) => {
                        self.out(c, u.start, u.end);
                        prev = c;
                        i += 1;
                        continue;
                    }
                    Step::Keep => {}
                }
            }
            self.out(u.c, u.start, u.end);
            prev = u.c;
            i += 1;
        }
    }

    #[inline]
    fn out(&mut self, c: char, start: u32, end: u32) {
        self.text.push(c);
        self.source.push(SourceSpan { start, end });
    }

    pub(super) fn finish(mut self) -> (String, SpanMap) {
        self.end_paragraph();
        self.source.shrink_to_fit();
        (self.text, self.source)
    }
}

/// Decide the format of `Auto` input from its content.
pub(super) fn sniff(text: &str) -> InputFormat {
    if html::looks_like_html(text) {
        InputFormat::Html
    } else {
        InputFormat::Text
    }
}

pub(super) fn canonicalize_decoded(
    original: String,
    charset: &'static str,
    format: InputFormat,
    params: &CanonParams,
) -> Result<CanonicalText, CoreError> {
    if original.is_empty() {
        return Err(CoreError::EmptyInput);
    }
    // Offsets are u32 characters; the byte limit also bounds the work.
    let limit = params.max_input_bytes.min(u32::MAX as usize);
    if original.len() > limit {
        return Err(CoreError::TooLarge { size: original.len(), limit });
    }
    let format = match format {
        InputFormat::Auto => sniff(&original),
        f => f,
    };
    let t2s: Option<&'static T2s> = if params.traditional_to_simplified { Some(&T2S) } else { None };
    let ((text, source), title) = match format {
        InputFormat::Html => {
            let doc = html::parse(&original, params.extract_main_content);
            let fed = doc.kept_paragraphs().flatten().filter(|run| !matches!(run.kind, RunKind::Deleted));
            let mut norm = Normalizer::new(&original, fed.map(|run| run.start as usize..run.end as usize), t2s);
            for runs in doc.kept_paragraphs() {
                for run in runs {
                    let (start, end) = (run.start as usize, run.end as usize);
                    match run.kind {
                        RunKind::Text => norm.text_run(start, end, false),
                        RunKind::Pre => norm.text_run(start, end, true),
                        RunKind::Chars(a, None) => norm.chars_run(start, end, &[a]),
                        RunKind::Chars(a, Some(b)) => norm.chars_run(start, end, &[a, b]),
                        RunKind::Deleted => {}
                    }
                }
                norm.end_paragraph();
            }
            (norm.finish(), doc.title)
        }
        _ => {
            let mut norm = Normalizer::new(&original, std::iter::once(0..original.len()), t2s);
            norm.text_run(0, original.len(), true);
            (norm.finish(), None)
        }
    };
    if !text.chars().any(char::is_alphanumeric) {
        return Err(CoreError::NoText);
    }
    Ok(CanonicalText::from_parts(original, charset, format, text, source, title))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables `build.rs` wrote are the rules of `char_classes` applied to every BMP
    /// character, and read back as the normaliser reads them.
    #[test]
    fn the_compiled_tables_are_the_rules() {
        let (class, map) = super::super::char_classes::bmp_tables();
        for u in 0..0x1_0000u32 {
            assert_eq!(bmp_class(u), class[u as usize], "class of U+{u:04X}");
            if class[u as usize] == MAP {
                let c = char::from_u32(u).expect("a MAP character is a character");
                assert_eq!(mapped(c), map[u as usize], "U+{u:04X}");
            }
        }
        assert_eq!(bmp_class('Ａ' as u32), MAP);
        assert_eq!(mapped('Ａ'), 'a');
        assert_eq!(bmp_class('天' as u32), PASS);
        assert_eq!(mapped('😀'), '😀');
    }
}
