//! The start tags of a document, for callers that need elements and attributes rather
//! than text (links, a saved page's own URL, an EPUB's container and package). Built on
//! the lexer's tokenizer, so comments, raw-text elements (`script`, `style`, `title`,
//! `textarea` ...), `plaintext` and quoted attributes are read exactly as when the text is
//! extracted; attribute values are decoded by the one character-reference decoder.

use std::borrow::Cow;
use std::ops::Range;

use memchr::memchr;

use super::elements::{element_info, PLAINTEXT, RAW};
use super::entities::decode_char_refs;
use super::tokens::{markup, raw_text_end, Markup};

/// One start tag: its name and attributes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StartTag<'a> {
    src: &'a str,
    name: Cow<'a, str>,
    /// Name and value (without quotes, undecoded) of each attribute, as ranges of `src`.
    attrs: Vec<(Range<usize>, Option<Range<usize>>)>,
}

impl<'a> StartTag<'a> {
    /// The element name, ASCII lower-cased (it keeps a namespace prefix: `opf:item`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The value of the first attribute called `name` (ASCII case-insensitive), character
    /// references decoded; `Some("")` for an attribute written without a value.
    pub fn attr(&self, name: &str) -> Option<String> {
        let text = |r: &Range<usize>| self.src.get(r.clone()).unwrap_or("");
        self.attrs
            .iter()
            .find(|(key, _)| text(key).eq_ignore_ascii_case(name))
            .map(|(_, value)| value.as_ref().map_or_else(String::new, |v| decode_char_refs(text(v)).into_owned()))
    }
}

/// The start tags of `html` in document order. End tags, comments, doctypes, processing
/// instructions and the content of raw-text elements are skipped. Never fails and never
/// panics, whatever the input.
pub fn start_tags(html: &str) -> StartTags<'_> {
    StartTags { src: html, i: 0 }
}

/// Iterator returned by [`start_tags`].
#[derive(Debug, Clone)]
pub struct StartTags<'a> {
    src: &'a str,
    i: usize,
}

impl<'a> Iterator for StartTags<'a> {
    type Item = StartTag<'a>;

    fn next(&mut self) -> Option<StartTag<'a>> {
        let b = self.src.as_bytes();
        let n = b.len();
        loop {
            let p = self.i + memchr(b'<', b.get(self.i..)?)?;
            let mut attrs = Vec::new();
            match markup(b, p, &mut |name, value| attrs.push((name, value))) {
                Markup::Text => self.i = p + 1,
                Markup::Skip(end) | Markup::Tag { end_tag: true, end, .. } => self.i = end.clamp(p + 1, n),
                Markup::Tag { end_tag: false, name, end, .. } => {
                    let raw_name = &b[name.clone()];
                    let info = element_info(raw_name);
                    self.i = if info & RAW != 0 {
                        raw_text_end(b, end, raw_name).1
                    } else if info & PLAINTEXT != 0 {
                        n
                    } else {
                        end
                    }
                    .clamp(p + 1, n);
                    let name = self.src.get(name).unwrap_or("");
                    let name = if name.bytes().any(|c| c.is_ascii_uppercase()) {
                        Cow::Owned(name.to_ascii_lowercase())
                    } else {
                        Cow::Borrowed(name)
                    };
                    return Some(StartTag { src: self.src, name, attrs });
                }
            }
        }
    }
}
