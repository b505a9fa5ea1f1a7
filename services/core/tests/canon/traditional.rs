use super::*;

#[test]
fn traditional_chapter_canonicalises_like_the_simplified_source() {
    let simplified = canon_text(&fixture_text("sanguo-001.txt"));
    let traditional = canon_text(&fixture_text("sanguo-001-hant.txt"));
    assert_ne!(fixture_text("sanguo-001.txt"), fixture_text("sanguo-001-hant.txt"));
    let ratio = agreement(&traditional, &simplified);
    assert!(ratio >= 0.98, "agreement {ratio}");
}

#[test]
fn known_phrases() {
    for (traditional, simplified) in [
        ("一目瞭然", "一目了然"),
        ("乾淨的頭髮", "干净的头发"),
        ("乾隆皇帝", "乾隆皇帝"),
        ("乾清宮", "乾清宫"),
        ("「這個軟體的資料庫」", "「这个软体的资料库」"),
        ("他看著我", "他看着我"),
        ("顯著的成績", "显著的成绩"),
        ("這是什麼", "这是什么"),
    ] {
        assert_eq!(canon_text(traditional), simplified, "{traditional}");
        // Simplified text is a fixed point.
        assert_eq!(canon_text(simplified), simplified, "{simplified}");
        assert_eq!(to_simplified(traditional), simplified);
    }
}

#[test]
fn conversion_can_be_switched_off() {
    let p = CanonParams { traditional_to_simplified: false, ..CanonParams::default() };
    let c = canonicalize("乾淨的頭髮".as_bytes(), InputFormat::Text, &p).unwrap();
    assert_eq!(c.text(), "乾淨的頭髮");
}

#[test]
fn phrase_spans_map_back_to_the_traditional_characters() {
    let c = canonicalize("他說：一目瞭然。".as_bytes(), InputFormat::Text, &params()).unwrap();
    assert_eq!(c.text(), "他说:一目了然。");
    check_spans(&c);
    let (a, b) = c.original_span(3, 7);
    assert_eq!(c.quote_original(a, b), "一目瞭然");
}

/// Many chapters of the test corpus: simplified -> traditional with OpenCC's own
/// tables, then back through the canonicaliser.
#[test]
fn corpus_round_trip_agreement() {
    let dir = corpus_dir();
    let chapters = read_chapters(&dir.join("novels_classics.jsonl"));
    for taiwan in [false, true] {
        let s2t = S2t::load(&dir.join("opencc"), taiwan);
        let (mut matched, mut total) = (0.0, 0usize);
        for text in chapters.iter().step_by(23) {
            let text: String = text.chars().take(2000).collect();
            let simplified = canon_text(&text);
            let traditional = canon_text(&s2t.convert(&text));
            assert_eq!(canon_text(&traditional), traditional, "canonical text is a fixed point");
            let n = simplified.chars().count();
            matched += agreement(&traditional, &simplified) * n as f64;
            total += n;
        }
        let ratio = matched / total as f64;
        println!("corpus agreement (taiwan={taiwan}) {ratio:.5} over {total} characters");
        assert!(ratio >= 0.995, "taiwan={taiwan}: agreement {ratio}");
    }
}
