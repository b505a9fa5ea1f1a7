//! Canonicalisation: charsets with real encoded bytes, HTML extraction, traditional ->
//! simplified, offsets back into the original, refusals, and property tests.
//!
//! The fixtures under `tests/fixtures/canon/` are public-domain classics (三国演义) from
//! the test corpus, encoded by `regenerate_fixtures` (run it with `--ignored`; it reads
//! the test corpus and its OpenCC simplified -> traditional tables).

use std::path::{Path, PathBuf};

use encoding_rs::{BIG5, GB18030, GBK};
use proptest::prelude::*;
use zhiwen_core::canon::{
    canonicalize, canonicalize_decoded, canonicalize_with_hint, decode, decode_char_refs, slice_chars, sniff_format,
    start_tags, to_simplified, CanonicalText, InputFormat,
};
use zhiwen_core::params::CanonParams;
use zhiwen_core::CoreError;

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/canon")
}

fn fixture(name: &str) -> Vec<u8> {
    let path = fixture_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

fn fixture_text(name: &str) -> String {
    String::from_utf8(fixture(name)).expect("UTF-8 fixture")
}

/// The test corpus (`scripts/setup-corpus.sh` assembles it).
fn corpus_dir() -> PathBuf {
    zhiwen_testkit::corpus::file(zhiwen_testkit::corpus::CLASSICS);
    zhiwen_testkit::corpus::dir()
}

fn params() -> CanonParams {
    CanonParams::default()
}

fn canon_text(s: &str) -> String {
    canonicalize(s.as_bytes(), InputFormat::Text, &params()).expect("canonical text").text().to_owned()
}

/// Every canonical character's span lies inside the original and starts never decrease.
fn check_spans(c: &CanonicalText) {
    let original_chars = c.original().chars().count() as u32;
    assert_eq!(c.char_len(), c.text().chars().count());
    let mut last_start = 0;
    for (i, span) in c.source_spans().iter().enumerate() {
        assert!(span.start <= span.end && span.end <= original_chars, "span {i} {span:?} of {original_chars}");
        assert!(span.start >= last_start, "span {i} {span:?} starts before {last_start}");
        last_start = span.start;
    }
}

mod charsets {
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
}

/// Share of characters of `b` matched in order by `a` (longest common subsequence).
fn agreement(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if b.is_empty() {
        return if a.is_empty() { 1.0 } else { 0.0 };
    }
    if a.len() == b.len() {
        // Conversions keep the length almost always: compare position by position.
        return a.iter().zip(&b).filter(|(x, y)| x == y).count() as f64 / a.len() as f64;
    }
    lcs_agreement(&a, &b)
}

/// [`agreement`] by the longest common subsequence always (for texts that lost and gained
/// characters, whose lengths may agree by chance).
fn lcs_agreement(a: &[char], b: &[char]) -> f64 {
    let mut prev = vec![0u32; b.len() + 1];
    let mut cur = vec![0u32; b.len() + 1];
    for &x in a {
        for j in 0..b.len() {
            cur[j + 1] = if x == b[j] { prev[j] + 1 } else { prev[j + 1].max(cur[j]) };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    f64::from(prev[b.len()]) / a.len().max(b.len()) as f64
}

mod traditional {
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
}

mod html {
    use super::*;

    #[test]
    fn start_tags_read_like_the_text_lexer() {
        let page = concat!(
            "<!DOCTYPE html><HTML><head><title>a <b> title</title>",
            "<script>var s = '<a href=\"no\">';</script><style>a>b{}</style></head>",
            "<!-- <a href=no2> --><body><A HREF=one.html Title='x>y' href=second>1</A>",
            "<a data-x=\"\" href=\"two&amp;three&#x4E2D;&nbsp;\" hidden>2</a>",
            "<textarea><a href=no3></textarea><opf:item id=i1 />",
            "<img src='unterminated>",
        );
        let tags: Vec<_> = start_tags(page).map(|t| (t.name().to_owned(), t.attr("href"), t.attr("hidden"))).collect();
        let want = [
            ("html", None, None),
            ("head", None, None),
            ("title", None, None),
            ("script", None, None),
            ("style", None, None),
            ("body", None, None),
            ("a", Some("one.html".to_owned()), None),
            ("a", Some("two&three中\u{a0}".to_owned()), Some(String::new())),
            ("textarea", None, None),
            ("opf:item", None, None),
        ];
        let want: Vec<_> = want.into_iter().map(|(n, h, x)| (n.to_owned(), h, x)).collect();
        assert_eq!(tags, want);
        assert_eq!(
            start_tags("<p>plain<plaintext><a href=x>").map(|t| t.name().to_owned()).collect::<Vec<_>>(),
            ["p", "plaintext"]
        );
        assert_eq!(decode_char_refs("a&lt;b &amp c &#0; &bogus;"), "a<b & c \u{fffd} &bogus;");
        assert!(matches!(decode_char_refs("no references"), std::borrow::Cow::Borrowed(_)));
    }

    fn html(s: &str) -> CanonicalText {
        canonicalize(s.as_bytes(), InputFormat::Html, &params()).expect("canonical html")
    }

    /// Chapter paragraphs of the fixture: non-empty lines without the indentation.
    fn chapter_paragraphs() -> Vec<String> {
        fixture_text("sanguo-001.txt")
            .lines()
            .map(|l| l.trim_matches(|c: char| c.is_whitespace()).to_owned())
            .filter(|l| !l.is_empty())
            .collect()
    }

    #[test]
    fn pirate_chapter_page_gives_exactly_the_chapter() {
        let bytes = fixture("pirate-chapter.gbk.html");
        let c = canonicalize(&bytes, InputFormat::Auto, &params()).unwrap();
        assert_eq!(c.charset(), "GBK");
        assert_eq!(c.format(), InputFormat::Html);
        assert_eq!(c.title(), Some("第一回 宴桃园豪杰三结义 斩黄巾英雄首立功_三国演义_笔趣阁"));
        let heading = "第一回 宴桃园豪杰三结义 斩黄巾英雄首立功";
        let expected = canon_text(&format!("{heading}\n{}", fixture_text("sanguo-001.txt")));
        assert_eq!(c.text(), expected);
        check_spans(&c);

        // Each canonical paragraph quotes back to the original paragraph's characters.
        let mut offset = 0;
        let lines: Vec<&str> = c.text().split('\n').collect();
        let originals: Vec<String> = std::iter::once(heading.to_owned()).chain(chapter_paragraphs()).collect();
        assert_eq!(lines.len(), originals.len());
        for (line, original) in lines.iter().zip(&originals) {
            let n = line.chars().count();
            let (a, b) = c.original_span(offset, offset + n);
            let quote = c.quote_original(a, b);
            assert_eq!(quote.chars().next(), original.chars().next(), "{quote}");
            assert_eq!(quote.chars().last(), original.chars().last(), "{quote}");
            assert!(is_subsequence(original, quote), "{original}\nnot in\n{quote}");
            offset += n + 1;
        }
    }

    fn is_subsequence(needle: &str, haystack: &str) -> bool {
        let mut h = haystack.chars();
        needle.chars().all(|c| h.any(|x| x == c))
    }

    #[test]
    fn news_page_gives_the_article() {
        let c = canonicalize(&fixture("news-article.html"), InputFormat::Auto, &params()).unwrap();
        assert_eq!(c.charset(), "UTF-8");
        assert_eq!(c.title(), Some("红楼梦研究会举办年会 - 文化 - 示例新闻网"));
        let expected = canon_text(&fixture_text("news-article.expected.txt"));
        assert_eq!(c.text(), expected);
        check_spans(&c);
    }

    #[test]
    fn scripts_styles_comments_never_leak() {
        let page = "<!DOCTYPE html><html><head><title>标题</title>\
            <script>var s = '脚本文字'; if (a < b) { document.write('<p>写入</p>'); }</script>\
            <style>p::before { content: '样式文字'; }</style></head><body>\
            <!-- 注释文字 <p>不是段落</p> -->\
            <noscript>请开启脚本</noscript><template><p>模板文字</p></template>\
            <p>正文第一段，这里是真正的内容。</p>\
            <SCRIPT type=\"text/javascript\">大写脚本()</SCRIPT >\
            <p>正文第二段<!---->紧接着<!-->继续</p>\
            <svg><text>图形文字</text></svg><iframe src=x>框架文字</iframe>\
            <p>最后一段<!-- 未结束的注释 <p>藏起来的文字";
        for extract in [true, false] {
            let p = CanonParams { extract_main_content: extract, ..CanonParams::default() };
            let c = canonicalize(page.as_bytes(), InputFormat::Auto, &p).unwrap();
            assert_eq!(c.text(), "正文第一段,这里是真正的内容。\n正文第二段紧接着继续\n最后一段", "extract={extract}");
            assert_eq!(c.title(), Some("标题"));
            check_spans(&c);
        }
    }

    #[test]
    fn entities_are_decoded() {
        let c = html("<p>&lt;三国&gt; &amp; &quot;演义&quot;&#x4E2D;&#25991; A&nbsp;&nbsp;B &copy 2024 &hellip;&eacute;&#x80;&bogus; &#0;</p>");
        assert_eq!(c.text(), "<三国> & \"演义\"中文a b © 2024 ...é€&bogus; \u{FFFD}");
        check_spans(&c);
        // An entity's canonical character maps back to the whole reference.
        let i = c.text().chars().position(|ch| ch == '中').unwrap();
        let (a, b) = c.original_span(i, i + 2);
        assert_eq!(c.quote_original(a, b), "&#x4E2D;&#25991;");
    }

    #[test]
    fn block_elements_end_paragraphs() {
        let c = html("<div>一<span>二</span><b>三</b></div><p>四<br>五</p><ul><li>六<li>七</ul><table><tr><td>八<td>九</table><h2>十</h2>");
        assert_eq!(c.text(), "一二三\n四\n五\n六\n七\n八\n九\n十");
    }

    #[test]
    fn whitespace_next_to_chinese_is_dropped_and_latin_spaces_collapse() {
        let c = html("<p>  滚滚\n  长江 东逝水 ， Hello   World\tfoo\n</p>");
        assert_eq!(c.text(), "滚滚长江东逝水, hello world foo");
        // Pirate-style spacing out of every character.
        assert_eq!(canon_text("滚 滚 长 江 东 逝 水"), "滚滚长江东逝水");
    }

    #[test]
    fn hidden_watermarks_are_dropped_but_hidden_content_is_kept() {
        let c = html("<p>滚滚长江<span style=\"display: none\">笔趣阁</span>东逝水<font hidden>www.biquge.com</font>，浪花淘尽英雄。</p>");
        assert_eq!(c.text(), "滚滚长江东逝水,浪花淘尽英雄。");
        let long = "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。";
        let c = html(&format!("<p>开头。</p><div style='display:none'><p>{long}</p></div>"));
        assert!(c.text().contains("话说天下大势"), "{}", c.text());
    }

    #[test]
    fn pre_keeps_line_breaks() {
        let c = html("<pre>第一行\n第二行\n\n  第三行</pre><p>a\nb</p>");
        assert_eq!(c.text(), "第一行\n第二行\n第三行\na b");
    }

    #[test]
    fn link_lists_and_boilerplate_go_with_extraction_and_stay_without() {
        let article = "却说张飞拍马赶到关下，关上矢石如雨，不得进而回。玄德与关、张二人商议破敌之策。";
        let page = format!(
            "<body><div class=\"daohang\"><a href=/>首页</a><a href=/a>玄幻</a></div>\
             <ul><li><a href=1>第一章 开始了</a></li><li><a href=2>第二章 又开始了</a></li></ul>\
             <div id=\"content\"><p>{article}</p><p>玄德大喜。</p><p>{article}</p></div>\
             <div class=\"copyright\">本站所有小说为转载作品</div></body>"
        );
        let c = html(&page);
        assert_eq!(c.text(), canon_text(&format!("{article}\n玄德大喜。\n{article}")));
        let p = CanonParams { extract_main_content: false, ..CanonParams::default() };
        let all = canonicalize(page.as_bytes(), InputFormat::Html, &p).unwrap();
        assert!(all.text().starts_with("首页玄幻\n第一章开始了"), "{}", all.text());
        assert!(all.text().ends_with("本站所有小说为转载作品"));
    }

    #[test]
    fn article_headers_are_content_page_headers_are_not() {
        let body = "却说张飞拍马赶到关下，关上矢石如雨，不得进而回。玄德与关、张二人商议破敌之策。";
        for page in [
            format!("<header><a href=/>网站名称</a></header><article><header><h1>标题在这里</h1></header><p>{body}</p><footer>作者：张三</footer></article><footer>版权所有</footer>"),
            format!("<header class=site-header><a href=/>网站名称</a></header><header class=\"article-header\"><h1>标题在这里</h1></header><div class=content><p>{body}</p><p>作者：张三</p></div><footer>版权所有</footer>"),
        ] {
            assert_eq!(html(&page).text(), canon_text(&format!("标题在这里\n{body}\n作者：张三")), "{page}");
        }
    }

    #[test]
    fn a_page_that_is_all_boilerplate_still_gives_text() {
        let c = html("<nav><a href=/>首页</a> <a href=/b>书架</a></nav>");
        assert_eq!(c.text(), "首页书架");
        let c = html("<form><p>一个简单的表单页面，正文都在表单里面，这是很多老网站的写法。</p></form>");
        assert!(c.text().starts_with("一个简单的表单页面"));
    }

    #[test]
    fn malformed_markup_degrades_gracefully() {
        let cases = [
            ("<p>一 < 二 <> 三 </ 四 > 五 <3 六", "一<二<>三五<3六"),
            // `</` and a non-letter opens a bogus comment that runs to the next `>`.
            ("<p>甲</ 乙", "甲"),
            ("<div><p>未闭合<b>粗体<i>斜体</div>之后", "未闭合粗体斜体\n之后"),
            ("<a href=1>链接<a href=2>另一个</a>正文内容", "链接另一个正文内容"),
            ("正文<img src=\"x.png\" alt=\"图\">继续<br/>下一行</br>再一行", "正文继续\n下一行\n再一行"),
            ("<p title='a>b'>属性里的尖括号</p>", "属性里的尖括号"),
            ("<p>标签没有结束<span class=\"x", "标签没有结束"),
            ("<p>文字</p></div></div></body></html></p>", "文字"),
            ("<p>脚本没有结束<script>alert(1)", "脚本没有结束"),
            ("<?xml version=\"1.0\"?><![CDATA[x]]><p>xml</p>", "xml"),
        ];
        for (input, expected) in cases {
            let c = html(input);
            assert_eq!(c.text(), expected, "{input}");
            check_spans(&c);
        }
    }

    #[test]
    fn format_sniffing() {
        assert_eq!(sniff_format("<!DOCTYPE html><p>x"), InputFormat::Html);
        assert_eq!(sniff_format("  \n<html>"), InputFormat::Html);
        assert_eq!(sniff_format("第一段<br>第二段<br>第三段"), InputFormat::Html);
        assert_eq!(sniff_format("<div>片段</div>"), InputFormat::Html);
        assert_eq!(sniff_format("滚滚长江东逝水"), InputFormat::Text);
        assert_eq!(sniff_format("a < b and c > d, x <br> once"), InputFormat::Text);
        let c = canonicalize("1 < 2 &amp; 3".as_bytes(), InputFormat::Auto, &params()).unwrap();
        assert_eq!((c.format(), c.text()), (InputFormat::Text, "1 < 2 &amp; 3"));
    }
}

mod normalisation {
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
}

mod refusals {
    use super::*;

    /// Deterministic pseudo-random bytes (xorshift).
    fn noise(len: usize, mut seed: u64) -> Vec<u8> {
        (0..len)
            .map(|_| {
                seed ^= seed << 13;
                seed ^= seed >> 7;
                seed ^= seed << 17;
                (seed >> 24) as u8
            })
            .collect()
    }

    fn undecodable(bytes: &[u8]) -> String {
        match canonicalize(bytes, InputFormat::Auto, &params()) {
            Err(CoreError::Undecodable { reason }) => reason,
            other => panic!("expected Undecodable, got {other:?}"),
        }
    }

    #[test]
    fn binary_junk_is_undecodable() {
        let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
        png.extend(noise(4096, 1));
        assert!(undecodable(&png).contains("PNG"));
        let mut zip = b"PK\x03\x04".to_vec();
        zip.extend(noise(1000, 2));
        assert!(undecodable(&zip).contains("ZIP"));
        assert!(undecodable(b"%PDF-1.7\n%\xE2\xE3\xCF\xD3\n1 0 obj").contains("PDF"));
        // No signature: random bytes, NUL-heavy bytes.
        assert!(undecodable(&noise(10_000, 3)).contains("control bytes"));
        let mut nul_heavy = vec![0u8; 500];
        nul_heavy.extend(b"some text between zeros");
        nul_heavy.extend(vec![0u8; 500]);
        assert!(undecodable(&nul_heavy).contains("control bytes"));
        assert!(undecodable(&[0u8; 64]).contains("control bytes"));
        // A UTF-16 BOM in front of binary.
        let mut bom_junk = b"\xFF\xFE".to_vec();
        bom_junk.extend(std::iter::repeat_n([1u8, 0], 100).flatten());
        assert!(undecodable(&bom_junk).contains("control characters"));
    }

    #[test]
    fn empty_input() {
        assert_eq!(canonicalize(b"", InputFormat::Auto, &params()).unwrap_err(), CoreError::EmptyInput);
        assert_eq!(decode(b"", None).unwrap_err(), CoreError::EmptyInput);
    }

    #[test]
    fn nothing_alphanumeric_is_no_text() {
        for input in
            [" \n\t\u{3000} ", "，。！？……——", "<p> &nbsp; </p><script>var a = 1;</script>", "\u{200B}\u{FEFF}"]
        {
            assert_eq!(
                canonicalize(input.as_bytes(), InputFormat::Auto, &params()).unwrap_err(),
                CoreError::NoText,
                "{input:?}"
            );
        }
    }

    #[test]
    fn too_large() {
        let p = CanonParams { max_input_bytes: 10, ..CanonParams::default() };
        assert_eq!(
            canonicalize("滚滚长江东逝水".as_bytes(), InputFormat::Text, &p).unwrap_err(),
            CoreError::TooLarge { size: 21, limit: 10 }
        );
        assert!(matches!(
            canonicalize_decoded("滚滚长江东逝水".to_owned(), "UTF-8", InputFormat::Text, &p),
            Err(CoreError::TooLarge { .. })
        ));
    }
}

mod properties {
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
}

/// Simplified -> traditional with OpenCC's STPhrases/STCharacters (leftmost-longest), and
/// for `taiwan` then TWVariants (OpenCC's `s2tw`), to make traditional test text from
/// simplified corpus text.
struct S2t {
    map: std::collections::HashMap<Vec<char>, String>,
    longest: usize,
    variants: std::collections::HashMap<char, String>,
}

impl S2t {
    fn load(opencc: &Path, taiwan: bool) -> S2t {
        let mut map = std::collections::HashMap::new();
        let mut longest = 1;
        for file in ["STCharacters.txt", "STPhrases.txt"] {
            let text = std::fs::read_to_string(opencc.join(file)).expect("OpenCC table");
            for line in text.lines().filter(|l| !l.starts_with('#')) {
                if let Some((k, v)) = line.split_once('\t') {
                    let first = v.split(' ').next().unwrap_or(v);
                    let k: Vec<char> = k.chars().collect();
                    longest = longest.max(k.len());
                    map.insert(k, first.to_owned());
                }
            }
        }
        let mut variants = std::collections::HashMap::new();
        if taiwan {
            let text = std::fs::read_to_string(opencc.join("TWVariants.txt")).expect("OpenCC table");
            for line in text.lines().filter(|l| !l.starts_with('#')) {
                if let Some((k, v)) = line.split_once('\t') {
                    let mut key = k.chars();
                    if let (Some(c), None) = (key.next(), key.next()) {
                        variants.insert(c, v.split(' ').next().unwrap_or(v).to_owned());
                    }
                }
            }
        }
        S2t { map, longest, variants }
    }

    fn convert(&self, s: &str) -> String {
        let chars: Vec<char> = s.chars().collect();
        let mut out = String::with_capacity(s.len());
        let mut i = 0;
        'outer: while i < chars.len() {
            for len in (1..=self.longest.min(chars.len() - i)).rev() {
                if let Some(v) = self.map.get(&chars[i..i + len]) {
                    out.push_str(v);
                    i += len;
                    continue 'outer;
                }
            }
            out.push(chars[i]);
            i += 1;
        }
        if self.variants.is_empty() {
            return out;
        }
        out.chars().map(|c| self.variants.get(&c).cloned().unwrap_or_else(|| c.to_string())).collect()
    }
}

fn read_chapters(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("corpus");
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v.get("text").and_then(|t| t.as_str()).map(str::to_owned))
        .collect()
}

/// Rebuild the fixtures from the test corpus: `cargo test -p zhiwen-core --test canon
/// -- --ignored regenerate_fixtures`.
#[test]
#[ignore = "writes fixtures"]
fn regenerate_fixtures() {
    let dir = corpus_dir();
    let chapters = read_chapters(&dir.join("novels_classics.jsonl"));
    // Big5 pages use the Taiwan standard forms (為, not OpenCC's 爲, which Big5 lacks).
    let s2t = S2t::load(&dir.join("opencc"), true);
    let out = fixture_dir();
    std::fs::create_dir_all(&out).unwrap();
    let write = |name: &str, bytes: &[u8]| std::fs::write(out.join(name), bytes).unwrap();
    // The opening of chapter 1 and chapter 2, cut at a paragraph end near 3000 characters.
    let excerpt = |text: &str| -> String {
        let mut cut = String::new();
        for line in text.split_inclusive('\n') {
            if cut.chars().count() + line.chars().count() > 3000 {
                break;
            }
            cut.push_str(line);
        }
        cut.trim_end().to_owned() + "\n"
    };
    let encode = |encoding: &'static encoding_rs::Encoding, text: &str| -> Vec<u8> {
        let (bytes, _, unmappable) = encoding.encode(text);
        assert!(!unmappable, "{} cannot encode the text", encoding.name());
        bytes.into_owned()
    };
    let one = excerpt(&chapters[0]);
    write("sanguo-001.txt", one.as_bytes());
    write("sanguo-001.gbk", &encode(GBK, &one));
    let utf16 = |le: bool| -> Vec<u8> {
        let mut bytes = if le { vec![0xFF, 0xFE] } else { vec![0xFE, 0xFF] };
        for u in one.encode_utf16() {
            bytes.extend(if le { u.to_le_bytes() } else { u.to_be_bytes() });
        }
        bytes
    };
    write("sanguo-001.utf16le", &utf16(true));
    write("sanguo-001.utf16be", &utf16(false));
    let hant = s2t.convert(&one);
    write("sanguo-001-hant.txt", hant.as_bytes());
    write("sanguo-001-hant.big5", &encode(BIG5, &hant));
    // GB18030 differs from GBK only for characters outside GBK; the classics have none,
    // so one line with such names (刘䶮, founder of Southern Han; 𠮷) is added by hand.
    let two = excerpt(&chapters[1]) + "南汉高祖刘䶮，𠮷字亦见于此。\n";
    write("sanguo-002.txt", two.as_bytes());
    let gb18030 = encode(GB18030, &two);
    assert_ne!(gb18030, GBK.encode(&two).0.into_owned(), "needs four-byte sequences");
    write("sanguo-002.gb18030", &gb18030);
    write("pirate-chapter.gbk.html", &encode(GBK, &pirate_page(&one)));
}

/// A pirate novel page in the usual layout: navigation, breadcrumb, chapter links, the
/// chapter in div#content with <br> line breaks, ads and scripts inside, footer.
fn pirate_page(chapter: &str) -> String {
    let mut body = String::new();
    for (i, line) in chapter.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let line = line.trim_start_matches('\u{3000}');
        if i == 1 {
            // A hidden watermark inside a sentence.
            let mid = line.char_indices().nth(10).map_or(line.len(), |(b, _)| b);
            body.push_str(&format!(
                "&nbsp;&nbsp;&nbsp;&nbsp;{}<span style=\"display:none\">笔趣阁 www.biquge.com</span>{}<br /><br />\n",
                &line[..mid],
                &line[mid..]
            ));
        } else {
            body.push_str(&format!("&nbsp;&nbsp;&nbsp;&nbsp;{line}<br /><br />\n"));
        }
        if i == 2 {
            body.push_str("<div class=\"ad_content\"><script>show_ad(\"中间广告\");</script>手机用户请浏览阅读，更优质的阅读体验。</div>\n");
        }
    }
    format!(
        r#"<!DOCTYPE html PUBLIC "-//W3C//DTD XHTML 1.0 Transitional//EN" "http://www.w3.org/TR/xhtml1/DTD/xhtml1-transitional.dtd">
<html xmlns="http://www.w3.org/1999/xhtml">
<head>
<meta http-equiv="Content-Type" content="text/html; charset=gbk" />
<title>第一回 宴桃园豪杰三结义 斩黄巾英雄首立功_三国演义_笔趣阁</title>
<meta name="keywords" content="三国演义,第一回" />
<link rel="stylesheet" type="text/css" href="/css/style.css" />
<script type="text/javascript" src="/js/common.js"></script>
<script>var preview_page = "/1_1/"; var bookname = "三国演义";</script>
<style>#content {{ font-size: 18px; }} .ad_content {{ color: #999; }}</style>
</head>
<body>
<div id="wrapper">
<div class="header">
  <div class="header_logo"><a href="/">笔趣阁</a></div>
  <div class="header_search"><form action="/search"><input type="text" name="q" /><button>搜索</button></form></div>
</div>
<div class="nav"><ul>
  <li><a href="/">首页</a></li><li><a href="/xuanhuan/">玄幻小说</a></li><li><a href="/xiuzhen/">修真小说</a></li>
  <li><a href="/dushi/">都市小说</a></li><li><a href="/lishi/">历史小说</a></li><li><a href="/paihang/">排行榜单</a></li>
</ul></div>
<div class="content_read">
<div class="box_con">
<div class="con_top"><a href="/">笔趣阁</a> &gt; <a href="/1_1/">三国演义</a> &gt; 第一回 宴桃园豪杰三结义 斩黄巾英雄首立功</div>
<div class="bookname">
  <h1>第一回 宴桃园豪杰三结义 斩黄巾英雄首立功</h1>
  <div class="bottem1"><a href="/1_1/">上一章</a> &larr; <a href="/1_1/">章节目录</a> &rarr; <a href="/1_1/2.html">下一章</a> <a href="javascript:addBookCase();">加入书签</a></div>
  <div class="lm">&nbsp;</div>
</div>
<div id="content">
{body}<script>app2();</script><!-- 第一回完 -->
</div>
<div class="bottem2"><a href="/1_1/">上一章</a> &larr; <a href="/1_1/">章节目录</a> &rarr; <a href="/1_1/2.html">下一章</a> <a href="javascript:addBookCase();">加入书签</a></div>
<div id="hm_t_2"></div>
</div>
</div>
<div class="footer"><div class="footer_cont">
  <p>本站所有小说为转载作品，所有章节均由网友上传，转载至本站只是为了宣传本书让更多读者欣赏。</p>
  <p>Copyright &copy; 2024 笔趣阁 All Rights Reserved.</p>
  <script>tj();</script>
</div></div>
</div>
</body>
</html>
"#
    )
}
