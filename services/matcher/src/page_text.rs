//! How a stored page becomes text: the one place that turns a page's stored body (its raw
//! bytes and charset) or, when no body was kept, its stored text into the canonical text
//! with its mapping back to the original, as the matcher fingerprints it and as evidence
//! quotes it. The matcher's evidence quotes and the API's evidence views both go through
//! [`page_canonical`], so a page's original is always read the same way. (The matcher
//! analyses a page whose canon tag is its own from the stored text, which ingest made
//! with this same function's canonicalisation; it checks, when it quotes a copy's
//! evidence, that the body still gives that text.)

use std::borrow::Cow;

use zhiwen_core::canon::{self, CanonicalText, InputFormat};
use zhiwen_core::params::CanonParams;
use zhiwen_core::CoreError;
use zhiwen_store::{Page, PageFormat};

/// What of a stored page its text is made from.
#[derive(Debug, Clone, Copy)]
pub struct StoredPageText<'a> {
    /// The raw body as fetched; empty when only the extracted text was kept.
    pub body: &'a [u8],
    /// The charset the page declared (HTTP header), a hint for decoding `body`.
    pub charset: Option<&'a str>,
    /// The text extracted at ingest time, used when `body` is empty.
    pub text: &'a str,
    /// How `body` is read: HTML, plain text, or [`InputFormat::Auto`] to decide from
    /// the decoded text.
    pub format: InputFormat,
}

impl<'a> StoredPageText<'a> {
    /// A page whose body is read as [`InputFormat::Auto`] decides.
    pub fn new(body: &'a [u8], charset: Option<&'a str>, text: &'a str) -> Self {
        Self { body, charset, text, format: InputFormat::Auto }
    }

    /// Read the body as ingest stored it: `format` is the page's stored [`PageFormat`]
    /// (`None` for pages stored before it was recorded: sniffed, as ingest did then).
    pub fn with_format(self, format: Option<PageFormat>) -> Self {
        let format = match format {
            Some(PageFormat::Html) => InputFormat::Html,
            Some(PageFormat::Text) => InputFormat::Text,
            None => InputFormat::Auto,
        };
        Self { format, ..self }
    }
}

impl<'a> From<&'a Page> for StoredPageText<'a> {
    fn from(page: &'a Page) -> Self {
        Self::new(&page.body, page.charset.as_deref(), &page.text).with_format(page.format)
    }
}

/// The canonical text of a stored page with its mapping to the original: the body decoded
/// with its charset and read as `format` when there is a body, else the stored text
/// (already plain text). Empty or over-large input is an error, as for any analysis.
pub fn page_canonical(page: StoredPageText<'_>, params: &CanonParams) -> Result<CanonicalText, CoreError> {
    if page.body.is_empty() {
        canon::canonicalize_str(page.text, InputFormat::Text, params)
    } else {
        canon::canonicalize_with_hint(page.body, page.format, page.charset, params)
    }
}

/// The original a page's evidence offsets point into, and whether it is markup: the
/// stored text when no body was kept (or the body cannot be read), else the decoded body
/// (for HTML, its source: the offsets map the extracted text back into it).
pub fn page_original<'a>(page: StoredPageText<'a>, params: &CanonParams) -> PageOriginal<'a> {
    if page.body.is_empty() {
        return PageOriginal { text: Cow::Borrowed(page.text), markup: false };
    }
    match page_canonical(page, params) {
        Ok(c) => PageOriginal { markup: c.format() == InputFormat::Html, text: Cow::Owned(c.original().to_owned()) },
        Err(_) => PageOriginal { text: Cow::Borrowed(page.text), markup: false },
    }
}

/// What [`page_original`] returns.
#[derive(Debug, Clone)]
pub struct PageOriginal<'a> {
    /// The text evidence offsets point into.
    pub text: Cow<'a, str>,
    /// It is HTML source: a quote from it reads as [`PageOriginal::visible`] says.
    pub markup: bool,
}

impl PageOriginal<'_> {
    /// A piece quoted from [`PageOriginal::text`] as a reader sees it, when the text is
    /// markup ([`canon::visible_text`]); `None` for plain text, which reads as it is.
    pub fn visible(&self, piece: &str) -> Option<String> {
        self.markup.then(|| canon::visible_text(piece))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn body_is_decoded_and_html_extracted() {
        let params = CanonParams::default();
        let body = "<html><body><p>天下大势，分久必合</p></body></html>".as_bytes();
        let page = StoredPageText::new(body, Some("utf-8"), "");
        let c = page_canonical(page, &params).expect("canonical");
        assert!(c.original().contains("<p>天下大势"), "the original is the decoded body: {}", c.original());
        assert!(c.text().contains("天下大势"), "{}", c.text());
        assert!(!c.text().contains('<'), "the HTML is extracted: {}", c.text());
        let original = page_original(page, &params);
        assert_eq!(original.text, c.original());
        assert!(original.markup);
    }

    #[test]
    fn stored_text_is_used_without_a_body() {
        let params = CanonParams::default();
        let page = StoredPageText::new(b"", None, "合久必分。");
        let original = page_original(page, &params);
        assert_eq!((original.text.as_ref(), original.markup), ("合久必分。", false));
        assert!(page_canonical(page, &params).is_ok());
        assert!(matches!(page_canonical(StoredPageText::new(b"", None, ""), &params), Err(CoreError::EmptyInput)));
    }

    #[test]
    fn stored_format_is_honoured() {
        let params = CanonParams::default();
        let html = "<p>天下大势</p><p>分久必合</p>";
        let page = StoredPageText { format: InputFormat::Text, ..StoredPageText::new(html.as_bytes(), None, "") };
        let as_text = page_canonical(page, &params).expect("canonical");
        let auto = page_canonical(StoredPageText::new(html.as_bytes(), None, ""), &params).expect("canonical");
        assert_ne!(as_text.text(), auto.text(), "the stored format decides how the body is read");
        let stored = StoredPageText::new(html.as_bytes(), None, "").with_format(Some(PageFormat::Text));
        assert_eq!(page_canonical(stored, &params).expect("canonical").text(), as_text.text());
        let unknown = StoredPageText::new(html.as_bytes(), None, "").with_format(None);
        assert_eq!(
            page_canonical(unknown, &params).expect("canonical").text(),
            auto.text(),
            "no stored format: sniffed"
        );
    }
}
