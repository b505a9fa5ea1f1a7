use super::*;

#[test]
fn nfkc_case_and_invisible_characters() {
    let c = canonicalize(
        "ＡＢＣ１２３，Ｈｅｌｌｏ！\u{3000}滚\u{200B}滚\u{FEFF}长\u{00AD}江 Café e\u{301} ﬁ ①".as_bytes(),
        InputFormat::Text,
        &params(),
    )
    .unwrap();
    assert_eq!(c.text(), "abc123,hello!滚滚长江café é fi 1");
    check_spans(&c);
    // A composed character maps to both original characters.
    let i = c.text().chars().count() - 6;
    assert_eq!(c.text().chars().nth(i), Some('é'));
    let (a, b) = c.original_span(i, i + 1);
    assert_eq!(c.quote_original(a, b), "e\u{301}");
    // Full-width characters keep their own spans.
    let (a, b) = c.original_span(0, 3);
    assert_eq!(c.quote_original(a, b), "ＡＢＣ");
}

#[test]
fn letters_outside_the_basic_plane_are_lower_cased_after_nfkc() {
    // Mathematical bold capitals and the outlined capital of Unicode 16 (U+1CCD6)
    // decompose to plain capitals; they end lower-cased like any other letter, so
    // the canonical text is canonical again (a property test found U+1CCD6).
    let c = canonicalize("𝐀𝐁𝐜 \u{1CCD6}".as_bytes(), InputFormat::Text, &params()).unwrap();
    assert_eq!(c.text(), "abc a");
    check_spans(&c);
    let again = canonicalize(c.text().as_bytes(), InputFormat::Text, &params()).unwrap();
    assert_eq!(again.text(), c.text());
}

#[test]
fn paragraphs_and_line_breaks() {
    let c = canonicalize(
        "\n\n  第一段  \r\n\r\n\u{3000}\u{3000}第二段\n\n\n第三段\n".as_bytes(),
        InputFormat::Text,
        &params(),
    )
    .unwrap();
    assert_eq!(c.text(), "第一段\n第二段\n第三段");
    check_spans(&c);
    // Separators are zero-width, at the start of the next paragraph.
    let span = c.source_of(3);
    assert_eq!(span.start, span.end);
    assert_eq!(slice_chars(c.original(), span.start as usize, span.start as usize + 3), "第二段");
}

#[test]
fn canonicalize_decoded_records_the_given_charset() {
    let c = canonicalize_decoded("話說".to_owned(), "Big5", InputFormat::Text, &params()).unwrap();
    assert_eq!((c.charset(), c.text(), c.original()), ("Big5", "话说", "話說"));
}

#[test]
fn hint_flows_through_canonicalize_with_hint() {
    let bytes = fixture("sanguo-001.gbk");
    let c = canonicalize_with_hint(&bytes, InputFormat::Text, Some("GBK"), &params()).unwrap();
    assert_eq!(c.charset(), "GBK");
    assert_eq!(c.text(), canon_text(&fixture_text("sanguo-001.txt")));
}
