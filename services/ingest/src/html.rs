//! What ingest needs from markup beyond the core's text extraction: links (for the
//! crawler), a page's own URL (for saved pages), and the extracted text in its original
//! spelling (for works).
//!
//! Markup is read with the core's lexer only: tags come from
//! [`zhiwen_core::canon::start_tags`] (comments, raw-text elements and quotes handled as
//! when text is extracted, attribute values decoded by the core's one character-reference
//! decoder). Nothing here fails or panics on any input (fuzzed).

use zhiwen_core::canon::{decode_char_refs, start_tags, CanonicalText};

/// Links of a page: `href` of `<a>` and `<area>`, `src` of `<frame>`/`<iframe>`, and the
/// `<base href>` if any (returned separately, it changes how the others resolve).
pub fn links(html: &str) -> (Option<String>, Vec<String>) {
    let mut base = None;
    let mut out = Vec::new();
    for t in start_tags(html) {
        match t.name() {
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
    for t in start_tags(html) {
        match t.name() {
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
            out.push_str(&decode_char_refs(piece));
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
            for t in start_tags(&s) {
                let _ = t.attr("href");
            }
        }
    }
}
