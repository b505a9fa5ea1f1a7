//! What ingest needs from markup beyond the core's text extraction: links (for the
//! crawler), a page's own URL (for saved pages), the EPUB container's attributes, and
//! the extracted text in its original spelling (for works).
//!
//! The tag scanner is deliberately small: it never fails and never panics on any input
//! (fuzzed), skips comments and the content of `<script>`/`<style>`, and respects quotes
//! inside tags.

use zhiwen_core::canon::CanonicalText;

/// One start tag: lower-cased name and the raw attribute text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Tag<'a> {
    /// Lower-cased element name (may contain a namespace prefix, `opf:item`).
    pub name: String,
    /// Everything between the name and the closing `>`.
    pub attrs: &'a str,
}

impl Tag<'_> {
    /// The value of attribute `name` (case-insensitive), entities decoded.
    pub fn attr(&self, name: &str) -> Option<String> {
        attr(self.attrs, name)
    }
}

/// Iterate over the start tags of `html` (end tags, comments, doctypes and the content of
/// raw-text elements are skipped).
pub fn tags(html: &str) -> impl Iterator<Item = Tag<'_>> {
    TagIter { s: html, i: 0 }
}

struct TagIter<'a> {
    s: &'a str,
    i: usize,
}

impl<'a> Iterator for TagIter<'a> {
    type Item = Tag<'a>;

    fn next(&mut self) -> Option<Tag<'a>> {
        let b = self.s.as_bytes();
        loop {
            let lt = self.i + memchr_byte(b'<', b.get(self.i..)?)?;
            let rest = &self.s[lt..];
            if let Some(comment) = rest.strip_prefix("<!--") {
                self.i = match comment.find("-->") {
                    Some(e) => lt + 4 + e + 3,
                    None => b.len(),
                };
                continue;
            }
            let name_start = lt + 1;
            let name_len = b[name_start..]
                .iter()
                .take_while(|c| c.is_ascii_alphanumeric() || matches!(c, b':' | b'-' | b'_'))
                .count();
            if name_len == 0 || !b[name_start].is_ascii_alphabetic() {
                // End tag, doctype, processing instruction or a stray '<'.
                self.i = lt + 1;
                continue;
            }
            let name_end = name_start + name_len;
            let end = tag_end(b, name_end);
            let name = self.s[name_start..name_end].to_ascii_lowercase();
            let attrs_end = if end > name_end && b[end - 1] == b'>' { end - 1 } else { end };
            let attrs = self.s.get(name_end..attrs_end).unwrap_or("");
            self.i = end;
            if name == "script" || name == "style" || name == "textarea" || name == "title" {
                let close = format!("</{name}");
                let lower_rest = self.s[end..].to_ascii_lowercase();
                self.i = match lower_rest.find(&close) {
                    Some(p) => end + p,
                    None => b.len(),
                };
            }
            return Some(Tag { name, attrs });
        }
    }
}

fn memchr_byte(needle: u8, hay: &[u8]) -> Option<usize> {
    hay.iter().position(|&c| c == needle)
}

/// Index just past the `>` that closes the tag opened before `from`, honouring quotes.
fn tag_end(b: &[u8], from: usize) -> usize {
    let mut quote: Option<u8> = None;
    let mut i = from;
    while i < b.len() {
        let c = b[i];
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == b'"' || c == b'\'' => quote = Some(c),
            None if c == b'>' => return i + 1,
            None => {}
        }
        i += 1;
    }
    b.len()
}

/// The value of attribute `name` in a tag's attribute text, entities decoded.
pub fn attr(attrs: &str, name: &str) -> Option<String> {
    let b = attrs.as_bytes();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && (b[i].is_ascii_whitespace() || b[i] == b'/') {
            i += 1;
        }
        let ks = i;
        while i < b.len() && !b[i].is_ascii_whitespace() && b[i] != b'=' && b[i] != b'>' {
            i += 1;
        }
        let key = &attrs[ks..i];
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let mut value: Option<&str> = None;
        if i < b.len() && b[i] == b'=' {
            i += 1;
            while i < b.len() && b[i].is_ascii_whitespace() {
                i += 1;
            }
            if i < b.len() && (b[i] == b'"' || b[i] == b'\'') {
                let q = b[i];
                let vs = i + 1;
                let ve = vs + b[vs..].iter().position(|&c| c == q).unwrap_or(b.len() - vs);
                value = attrs.get(vs..ve);
                i = (ve + 1).min(b.len());
            } else {
                let vs = i;
                while i < b.len() && !b[i].is_ascii_whitespace() {
                    i += 1;
                }
                value = attrs.get(vs..i);
            }
        }
        if key.eq_ignore_ascii_case(name) {
            return Some(htmlize::unescape(value.unwrap_or("")).into_owned());
        }
        if ks == i {
            i += 1;
        }
    }
    None
}

/// Links of a page: `href` of `<a>` and `<area>`, `src` of `<frame>`/`<iframe>`, and the
/// `<base href>` if any (returned separately, it changes how the others resolve).
pub fn links(html: &str) -> (Option<String>, Vec<String>) {
    let mut base = None;
    let mut out = Vec::new();
    for t in tags(html) {
        match t.name.as_str() {
            "a" | "area" => {
                let rel = t.attr("rel").unwrap_or_default().to_ascii_lowercase();
                if !rel.split_whitespace().any(|r| r == "nofollow") {
                    if let Some(h) = t.attr("href") {
                        out.push(h);
                    }
                }
            }
            "frame" | "iframe" => out.extend(t.attr("src")),
            "base" if base.is_none() => base = t.attr("href"),
            _ => {}
        }
    }
    (base, out)
}

/// A saved page's own URL: the browser's `<!-- saved from url=(NNNN)URL -->` mark, else
/// `<link rel="canonical">`, else `<meta property="og:url">`.
pub fn own_url(html: &str) -> Option<String> {
    if let Some(p) = html.find("saved from url=(") {
        let rest = &html[p + "saved from url=(".len()..];
        if let Some(close) = rest.find(')') {
            let url: String = rest[close + 1..].chars().take_while(|c| !c.is_whitespace() && *c != '-').collect();
            if url.starts_with("http") {
                return Some(url);
            }
        }
    }
    let mut og = None;
    for t in tags(html) {
        match t.name.as_str() {
            "link" => {
                let rel = t.attr("rel").unwrap_or_default().to_ascii_lowercase();
                if rel.split_whitespace().any(|r| r == "canonical") {
                    if let Some(h) = t.attr("href") {
                        return Some(h);
                    }
                }
            }
            "meta" if og.is_none() && t.attr("property").is_some_and(|p| p.eq_ignore_ascii_case("og:url")) => {
                og = t.attr("content");
            }
            "body" => break,
            _ => {}
        }
    }
    og
}

/// The extracted text in its original spelling: the characters of the decoded original
/// that the canonical text came from (before NFKC, simplification and lower-casing),
/// with paragraph breaks, white space collapsed and character references decoded.
/// Works are stored in this form so that reports quote the rights holder's own text.
pub fn original_text(canon: &CanonicalText) -> String {
    let original = canon.original();
    let mut byte_at: Vec<usize> = original.char_indices().map(|(i, _)| i).collect();
    byte_at.push(original.len());
    let slice = |s: u32, e: u32| -> &str {
        let a = byte_at.get(s as usize).copied().unwrap_or(original.len());
        let b = byte_at.get(e as usize).copied().unwrap_or(original.len()).max(a);
        original.get(a..b).unwrap_or("")
    };
    let mut out = String::with_capacity(canon.text().len());
    let mut last: Option<(u32, u32)> = None;
    for (c, span) in canon.text().chars().zip(canon.source_spans()) {
        if c == '\n' {
            if !out.ends_with('\n') && !out.is_empty() {
                out.push('\n');
            }
            last = None;
            continue;
        }
        let key = (span.start, span.end);
        if let Some((ls, le)) = last {
            if span.start >= ls && span.end <= le {
                continue; // several canonical characters from one original piece
            }
        }
        last = Some(key);
        let piece = slice(span.start, span.end);
        if piece.chars().all(char::is_whitespace) {
            if !out.ends_with([' ', '\n']) && !out.is_empty() {
                out.push(' ');
            }
        } else if piece.starts_with('&') {
            out.push_str(&htmlize::unescape(piece));
        } else {
            out.push_str(piece);
        }
    }
    out.trim_end().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use zhiwen_core::canon::{canonicalize, InputFormat};
    use zhiwen_core::params::CanonParams;

    #[test]
    fn finds_links_and_skips_scripts_and_comments() {
        let h = r#"<base href="/b/"><a href='x.html'>x</a><!-- <a href="no"> --><script>var a="<a href='no2'>";</script>
            <A HREF=y.html rel=nofollow>y</A><a title="a>b" href="z&amp;1.html">z</a><iframe src="f.html"></iframe>"#;
        let (base, l) = links(h);
        assert_eq!(base.as_deref(), Some("/b/"));
        assert_eq!(l, vec!["x.html", "z&1.html", "f.html"]);
    }

    #[test]
    fn own_url_from_saved_mark_or_canonical() {
        assert_eq!(
            own_url("<!-- saved from url=(0026)http://example.com/a.html -->\n<html>").as_deref(),
            Some("http://example.com/a.html")
        );
        assert_eq!(
            own_url(r#"<head><link rel="canonical" href="https://e.com/c"></head>"#).as_deref(),
            Some("https://e.com/c")
        );
        assert_eq!(
            own_url(r#"<meta property="og:url" content="https://e.com/o">"#).as_deref(),
            Some("https://e.com/o")
        );
        assert_eq!(own_url("<p>nothing</p>"), None);
    }

    #[test]
    fn original_text_keeps_traditional_and_full_width() {
        let html = "<html><body><h1>第一章　開端</h1><p>ＡＢＣ說&amp;話。</p><p>第二段</p></body></html>";
        let params = CanonParams { extract_main_content: false, ..Default::default() };
        let c = canonicalize(html.as_bytes(), InputFormat::Html, &params).unwrap();
        let t = original_text(&c);
        assert!(t.contains("開端"), "{t}");
        assert!(t.contains("ＡＢＣ說&話。"), "{t}");
        assert!(t.contains('\n'), "{t}");
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// Any markup-like text: the scanners never panic.
        #[test]
        fn scanners_never_panic(s in "[<>!\\-a-z=\"' /&;#中文]{0,200}") {
            let _ = links(&s);
            let _ = own_url(&s);
            for t in tags(&s) {
                let _ = t.attr("href");
            }
        }
    }
}
