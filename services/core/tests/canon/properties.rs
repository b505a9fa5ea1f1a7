use super::*;

fn markup_soup() -> impl Strategy<Value = String> {
    let piece = prop_oneof![
        Just("<p>".to_owned()),
        Just("</p>".to_owned()),
        Just("<br>".to_owned()),
        Just("<div class=\"nav\">".to_owned()),
        Just("<div id='content'>".to_owned()),
        Just("</div>".to_owned()),
        Just("<a href=x>".to_owned()),
        Just("</a>".to_owned()),
        Just("<script>".to_owned()),
        Just("</script>".to_owned()),
        Just("<pre>".to_owned()),
        Just("<span style=display:none>".to_owned()),
        Just("</span>".to_owned()),
        Just("<!--".to_owned()),
        Just("-->".to_owned()),
        Just("<title>".to_owned()),
        Just("&amp;".to_owned()),
        Just("&#x".to_owned()),
        Just("&#12345;".to_owned()),
        Just("&nbsp".to_owned()),
        Just("&".to_owned()),
        Just("<".to_owned()),
        Just(">".to_owned()),
        Just("\n".to_owned()),
        Just("e\u{301}".to_owned()),
        Just("Ａｂ".to_owned()),
        Just("\u{200B}".to_owned()),
        Just("一目瞭然".to_owned()),
        Just("乾清宮".to_owned()),
        "[a-zA-Z0-9 ]{0,6}",
        "[\u{4e00}-\u{9fa5}]{0,6}",
        any::<char>().prop_map(String::from),
    ];
    prop::collection::vec(piece, 0..60).prop_map(|v| v.concat())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..2000)) {
        for format in [InputFormat::Auto, InputFormat::Html, InputFormat::Text] {
            if let Ok(c) = canonicalize(&bytes, format, &params()) {
                check_spans(&c);
            }
        }
    }

    #[test]
    fn spans_stay_inside_and_ordered(s in markup_soup()) {
        for format in [InputFormat::Html, InputFormat::Text, InputFormat::Auto] {
            for extract in [true, false] {
                let p = CanonParams { extract_main_content: extract, ..CanonParams::default() };
                if let Ok(c) = canonicalize_decoded(s.clone(), "UTF-8", format, &p) {
                    check_spans(&c);
                    prop_assert!(!c.text().starts_with(['\n', ' ']) && !c.text().ends_with(['\n', ' ']));
                    prop_assert!(!c.text().contains("\n\n") && !c.text().contains("  "));
                    let n = c.char_len();
                    let (a, b) = c.original_span(n / 3, n);
                    let _ = c.quote_original(a, b);
                }
            }
        }
    }

    #[test]
    fn start_tags_never_panic(s in markup_soup(), bytes in prop::collection::vec(any::<u8>(), 0..500)) {
        for text in [s, String::from_utf8_lossy(&bytes).into_owned()] {
            for t in start_tags(&text).take(1000) {
                let _ = (t.name(), t.attr("href"), t.attr("class"));
            }
            let _ = decode_char_refs(&text);
        }
    }

    #[test]
    fn visible_text_never_panics_and_collapses_space(s in markup_soup(), cut in 0usize..64) {
        // Evidence quotes pieces cut anywhere: any cut of the soup reads as tidy text.
        let at = s.char_indices().map(|(i, _)| i).nth(cut).unwrap_or(s.len());
        for piece in [&s[..at], &s[at..], s.as_str()] {
            let v = visible_text(piece);
            prop_assert!(!v.starts_with(' ') && !v.ends_with(' '), "{v:?}");
            prop_assert!(!v.contains("  "), "{v:?}");
        }
    }

    #[test]
    fn canonical_text_is_a_fixed_point(s in markup_soup()) {
        if let Ok(c) = canonicalize_decoded(s, "UTF-8", InputFormat::Html, &params()) {
            let again = canonicalize_decoded(c.text().to_owned(), "UTF-8", InputFormat::Text, &params())
                .expect("canonical text has text");
            prop_assert_eq!(again.text(), c.text());
        }
    }

    #[test]
    fn plain_chinese_is_the_same_in_a_paragraph(s in "[\u{4e00}-\u{9fa5}，。a-z ]{1,80}") {
        let text = canonicalize_decoded(s.clone(), "UTF-8", InputFormat::Text, &params());
        let html = canonicalize_decoded(format!("<p>{s}</p>"), "UTF-8", InputFormat::Html, &params());
        match (text, html) {
            (Ok(t), Ok(h)) => prop_assert_eq!(t.text(), h.text()),
            (Err(a), Err(b)) => prop_assert_eq!(a, b),
            (a, b) => prop_assert!(false, "{:?} vs {:?}", a.map(|c| c.text().to_owned()), b.map(|c| c.text().to_owned())),
        }
    }
}
