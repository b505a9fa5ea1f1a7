//! The tokenizer level of the lexer, shared by the document lexer and the start-tag
//! iterator: what a `<` opens (comment, doctype, processing instruction, start or end tag
//! with its quoted or unquoted attributes) and where a raw-text element's content ends.
//! Everything here is total: malformed markup is skipped or is text, and an unterminated
//! construct runs to the end of the input.

use std::ops::Range;

use memchr::{memchr, memmem};

#[inline]
pub(super) fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0C')
}

/// What a `<` opens.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Markup {
    /// Nothing: the `<` is text.
    Text,
    /// A comment, doctype, CDATA section, processing instruction, `</>`, bogus comment, or
    /// a tag cut off by the end of the input: nothing visible; text resumes at the offset.
    Skip(usize),
    /// A start or end tag; `end` is the offset after its `>`.
    Tag { end_tag: bool, name: Range<usize>, self_closing: bool, end: usize },
}

/// The markup that the `<` at `p` opens. `attr` is called with each attribute's name and
/// value (without quotes, character references not decoded) as byte ranges of `b`.
pub(super) fn markup(b: &[u8], p: usize, attr: &mut impl FnMut(Range<usize>, Option<Range<usize>>)) -> Markup {
    match b.get(p + 1).copied() {
        Some(b'!') => Markup::Skip(bang(b, p)),
        Some(b'?') => Markup::Skip(bogus_comment(b, p + 2)),
        Some(b'/') => match b.get(p + 2).copied() {
            Some(c) if c.is_ascii_alphabetic() => tag(b, p, true, attr),
            Some(b'>') => Markup::Skip(p + 3),
            Some(_) => Markup::Skip(bogus_comment(b, p + 2)),
            None => Markup::Text,
        },
        Some(c) if c.is_ascii_alphabetic() => tag(b, p, false, attr),
        _ => Markup::Text,
    }
}

/// `<!`: comment, doctype, CDATA: nothing visible.
fn bang(b: &[u8], p: usize) -> usize {
    if b[p..].starts_with(b"<!--") {
        let body = p + 4;
        if b.get(body) == Some(&b'>') {
            return body + 1;
        }
        if b[body..].starts_with(b"->") {
            return body + 2;
        }
        return match memmem::find(&b[body..], b"-->") {
            Some(o) => body + o + 3,
            None => b.len(),
        };
    }
    bogus_comment(b, p + 2)
}

/// A start or end tag at `p`.
fn tag(b: &[u8], p: usize, end_tag: bool, attr: &mut impl FnMut(Range<usize>, Option<Range<usize>>)) -> Markup {
    let n = b.len();
    let mut j = p + 1 + usize::from(end_tag);
    let name_start = j;
    while j < n && !matches!(b[j], b' ' | b'\t' | b'\n' | b'\r' | b'\x0C' | b'/' | b'>') {
        j += 1;
    }
    let name_end = j;
    let mut self_closing = false;
    loop {
        while j < n && is_space(b[j]) {
            j += 1;
        }
        if j >= n {
            // End of input inside a tag: the tag and the rest are dropped.
            return Markup::Skip(n);
        }
        match b[j] {
            b'>' => {
                j += 1;
                break;
            }
            b'/' => {
                j += 1;
                if b.get(j) == Some(&b'>') {
                    self_closing = true;
                    j += 1;
                    break;
                }
                continue;
            }
            _ => {}
        }
        let an = j;
        j += 1;
        while j < n && !matches!(b[j], b' ' | b'\t' | b'\n' | b'\r' | b'\x0C' | b'/' | b'>' | b'=') {
            j += 1;
        }
        let attr_name = an..j;
        while j < n && is_space(b[j]) {
            j += 1;
        }
        let mut value = None;
        if j < n && b[j] == b'=' {
            j += 1;
            while j < n && is_space(b[j]) {
                j += 1;
            }
            if j >= n {
                return Markup::Skip(n);
            }
            match b[j] {
                q @ (b'"' | b'\'') => {
                    let vs = j + 1;
                    match memchr(q, &b[vs..]) {
                        Some(o) => {
                            value = Some(vs..vs + o);
                            j = vs + o + 1;
                        }
                        None => return Markup::Skip(n),
                    }
                }
                b'>' => {}
                _ => {
                    let vs = j;
                    while j < n && !is_space(b[j]) && b[j] != b'>' {
                        j += 1;
                    }
                    value = Some(vs..j);
                }
            }
        }
        attr(attr_name, value);
    }
    Markup::Tag { end_tag, name: name_start..name_end, self_closing, end: j }
}

/// `<?...>`, `</ ...>`, `<!...>`: skipped up to the next `>`.
fn bogus_comment(b: &[u8], from: usize) -> usize {
    match b.get(from..).and_then(|rest| memchr(b'>', rest)) {
        Some(o) => from + o + 1,
        None => b.len(),
    }
}

/// End of a raw-text element's content: the offset of its end tag and the offset after it.
pub(super) fn raw_text_end(b: &[u8], from: usize, name: &[u8]) -> (usize, usize) {
    let n = b.len();
    let mut k = from;
    while k < n {
        let Some(o) = memchr(b'<', &b[k..]) else {
            break;
        };
        let q = k + o;
        let name_at = q + 2;
        if b.get(q + 1) == Some(&b'/')
            && b.get(name_at..name_at + name.len()).is_some_and(|s| s.eq_ignore_ascii_case(name))
            && b.get(name_at + name.len()).is_none_or(|&c| is_space(c) || c == b'/' || c == b'>')
        {
            let after = memchr(b'>', &b[q..]).map_or(n, |o| q + o + 1);
            return (q, after);
        }
        k = q + 1;
    }
    (n, n)
}
