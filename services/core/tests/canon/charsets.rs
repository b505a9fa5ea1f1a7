use super::*;

fn check(file: &str, expected_text_file: &str, charset: &str) {
    let decoded = decode(&fixture(file), None).expect("decodes");
    assert_eq!(decoded.charset, charset, "{file}");
    assert_eq!(decoded.replacements, 0, "{file}");
    assert_eq!(decoded.text, fixture_text(expected_text_file), "{file}");
}

#[test]
fn utf8() {
    check("sanguo-001.txt", "sanguo-001.txt", "UTF-8");
}

#[test]
fn utf8_with_bom() {
    let mut bytes = b"\xEF\xBB\xBF".to_vec();
    bytes.extend(fixture("sanguo-001.txt"));
    let decoded = decode(&bytes, None).unwrap();
    assert_eq!((decoded.charset, decoded.text), ("UTF-8", fixture_text("sanguo-001.txt")));
}

#[test]
fn gbk() {
    check("sanguo-001.gbk", "sanguo-001.txt", "GBK");
}

#[test]
fn gb18030_with_four_byte_sequences() {
    check("sanguo-002.gb18030", "sanguo-002.txt", "gb18030");
}

#[test]
fn big5() {
    check("sanguo-001-hant.big5", "sanguo-001-hant.txt", "Big5");
}

#[test]
fn utf16le_with_bom() {
    check("sanguo-001.utf16le", "sanguo-001.txt", "UTF-16LE");
}

#[test]
fn utf16be_with_bom() {
    check("sanguo-001.utf16be", "sanguo-001.txt", "UTF-16BE");
}

#[test]
fn utf16le_without_bom() {
    let bytes = fixture("sanguo-001.utf16le");
    let decoded = decode(&bytes[2..], None).unwrap();
    assert_eq!((decoded.charset, decoded.text), ("UTF-16LE", fixture_text("sanguo-001.txt")));
}

#[test]
fn hint_is_used_when_it_decodes_cleanly() {
    let gbk = fixture("sanguo-001.gbk");
    // gb2312 is a label of the GBK decoder.
    assert_eq!(decode(&gbk, Some("gb2312")).unwrap().charset, "GBK");
    assert_eq!(decode(&gbk, Some(" GB18030 ")).unwrap().charset, "gb18030");
    // A wrong hint that does not decode cleanly is ignored.
    let d = decode(&gbk, Some("utf-8")).unwrap();
    assert_eq!((d.charset, d.text), ("GBK", fixture_text("sanguo-001.txt")));
    let big5 = fixture("sanguo-001-hant.big5");
    assert_eq!(decode(&big5, Some("x-unknown-label")).unwrap().charset, "Big5");
    // Single-byte labels decode anything; a clean multi-byte reading wins over them.
    let d = decode(&gbk, Some("iso-8859-1")).unwrap();
    assert_eq!((d.charset, d.text), ("GBK", fixture_text("sanguo-001.txt")));
    let latin = "Café crème brûlée, déjà vu à la française.".to_owned();
    let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(&latin);
    let d = decode(&bytes, Some("latin1")).unwrap();
    assert_eq!((d.charset, d.text), ("windows-1252", latin));
}

#[test]
fn meta_charset_is_sniffed() {
    let body = fixture_text("sanguo-001.txt");
    for head in [
        "<html><head><meta charset=\"gbk\"><title>t</title></head><body><p>",
        "<html><head><META HTTP-EQUIV=\"Content-Type\" CONTENT=\"text/html; charset=GB2312\"></head><body><p>",
    ] {
        let page = format!("{head}{body}</p></body></html>");
        let (bytes, _, unmappable) = GBK.encode(&page);
        assert!(!unmappable);
        let d = decode(&bytes, None).unwrap();
        assert_eq!((d.charset, d.text.as_str()), ("GBK", page.as_str()));
    }
    let page = format!("<meta charset='big5'><p>{}</p>", fixture_text("sanguo-001-hant.txt"));
    let (bytes, _, unmappable) = BIG5.encode(&page);
    assert!(!unmappable);
    assert_eq!(decode(&bytes, None).unwrap().charset, "Big5");
}

#[test]
fn truncated_utf8_keeps_utf8() {
    let text = fixture_text("sanguo-001.txt");
    let text = text.trim_end();
    let bytes = &text.as_bytes()[..text.len() - 1];
    let d = decode(bytes, None).unwrap();
    assert_eq!((d.charset, d.replacements), ("UTF-8", 1));
    // A few corrupt bytes inside a long UTF-8 text do not switch the charset either.
    let mut corrupt = text.as_bytes().to_vec();
    let boundary = text.char_indices().nth(100).map_or(0, |(b, _)| b);
    corrupt.insert(boundary, 0xFF);
    let d = decode(&corrupt, None).unwrap();
    assert_eq!((d.charset, d.replacements), ("UTF-8", 1));
}

/// `bytes` with one byte in `every` overwritten by 0xFF (at a varying offset in each
/// stretch of `every` bytes, as corruption in transit or on disk falls).
pub(crate) fn overwrite_every(bytes: &[u8], every: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    let mut state = 0x2545_F491_u64;
    for start in (0..out.len()).step_by(every) {
        state = state.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        let i = start + (state >> 33) as usize % every;
        if let Some(b) = out.get_mut(i) {
            *b = 0xFF;
        }
    }
    out
}

/// `bytes` with `n` multi-byte sequences broken, spread over the text: every other one
/// loses its trail byte to 0xFF, the others get a stray lead byte before them.
pub(crate) fn break_sequences(bytes: &[u8], n: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for k in 0..n {
        let mut i = (k * 2 + 1) * out.len() / (2 * n);
        // A non-ASCII byte after an ASCII one: the start of a two-byte character, or
        // (GBK's trail bytes include ASCII's range) rarely a trail byte; overwriting a
        // trail byte and inserting before a lead byte keep the alignment either way.
        while i + 1 < out.len() && (!out[i - 1].is_ascii() || out[i].is_ascii()) {
            i += 1;
        }
        if k % 2 == 0 {
            out[i + 1] = 0xFF;
        } else {
            out.insert(i, 0x81);
            out.insert(i + 1, b'\n');
        }
    }
    out
}

#[test]
fn utf8_with_one_byte_in_300_overwritten_stays_utf8() {
    let original = fixture_text("sanguo-001.txt");
    for every in [300, 100, 30] {
        let bytes = overwrite_every(original.as_bytes(), every);
        let d = decode(&bytes, None).unwrap();
        assert_eq!(d.charset, "UTF-8", "one byte in {every}");
        let overwritten = bytes.iter().zip(original.as_bytes()).filter(|(a, b)| a != b).count();
        assert!(d.replaced_bytes >= overwritten && d.replacements >= overwritten, "one byte in {every}: {d:?}");
        // Each 0xFF costs at most the character it landed in.
        let decoded: Vec<char> = d.text.chars().filter(|&c| c != '\u{FFFD}').collect();
        let agreement = lcs_agreement(&decoded, &original.chars().collect::<Vec<_>>());
        assert!(agreement > 1.0 - 1.5 / every as f64 * 3.0, "one byte in {every}: agreement {agreement}");
    }
    // Also with a (wrong) legacy label, and inside an HTML page.
    let bytes = overwrite_every(original.as_bytes(), 300);
    assert_eq!(decode(&bytes, Some("gbk")).unwrap().charset, "UTF-8");
    let page = format!("<html><head><meta charset=\"utf-8\"></head><body><p>{original}</p></body></html>");
    assert_eq!(decode(&overwrite_every(page.as_bytes(), 300), None).unwrap().charset, "UTF-8");
}

#[test]
fn a_utf8_text_that_starts_with_a_legacy_encoded_block_stays_utf8() {
    // A pirate page in UTF-8 whose first lines (an ad, a notice) were pasted in GBK.
    let text = fixture_text("sanguo-001.txt");
    let head: String = text.chars().take(1500).collect();
    let (gbk_head, _, _) = GBK.encode(&head);
    let mut bytes = gbk_head.into_owned();
    for _ in 0..12 {
        bytes.extend_from_slice(text.as_bytes());
    }
    let d = decode(&bytes, None).unwrap();
    assert_eq!(d.charset, "UTF-8");
    assert!(d.text.ends_with(text.as_str()));
}

#[test]
fn gbk_and_big5_with_a_few_broken_sequences_keep_their_charset() {
    for (file, text_file, charset) in
        [("sanguo-001.gbk", "sanguo-001.txt", "GBK"), ("sanguo-001-hant.big5", "sanguo-001-hant.txt", "Big5")]
    {
        let original = fixture_text(text_file);
        let bytes = break_sequences(&fixture(file), 6);
        for hint in [None, Some(charset)] {
            let d = decode(&bytes, hint).unwrap();
            assert_eq!(d.charset, charset, "{file} with hint {hint:?}");
            assert!(d.replacements >= 6 && d.replaced_bytes >= 6, "{file}: {} replacements", d.replacements);
            let decoded: Vec<char> = d.text.chars().filter(|&c| c != '\u{FFFD}').collect();
            let agreement = lcs_agreement(&decoded, &original.chars().collect::<Vec<_>>());
            assert!(agreement > 0.99, "{file} with hint {hint:?}: agreement {agreement}");
        }
    }
}

#[test]
fn canonical_text_is_the_same_whatever_the_charset() {
    let reference = canon_text(&fixture_text("sanguo-001.txt"));
    for file in ["sanguo-001.gbk", "sanguo-001.utf16le", "sanguo-001.utf16be", "sanguo-001-hant.big5"] {
        let c = canonicalize(&fixture(file), InputFormat::Auto, &params()).unwrap();
        assert_eq!(c.format(), InputFormat::Text);
        let agreement = agreement(c.text(), &reference);
        assert!(agreement >= 0.98, "{file}: agreement {agreement}");
        if !file.contains("hant") {
            assert_eq!(c.text(), reference, "{file}");
        }
    }
}
