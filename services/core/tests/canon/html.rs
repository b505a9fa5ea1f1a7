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

/// A page's canonical text and offset map are sized for its text, not for its markup: a
/// page held while it is matched weighs what its text needs (issue #31: every page in
/// flight held its whole page's size again in text capacity and 8 bytes per character of
/// markup in its map).
#[test]
fn a_page_heavy_with_markup_keeps_no_room_for_its_markup() {
    let chapter = fixture_text("sanguo-001.txt");
    let script = format!("<script>{}</script>", "var ad = 'x';".repeat(20_000));
    let page = format!("<html><head><title>t</title>{script}</head><body><p>{chapter}</p>{script}</body></html>");
    let c = html(&page);
    let text_chars = c.text().chars().count();
    let needed = c.text().len() + 8 * text_chars;
    assert!(c.text().len() > 1_000 && page.len() > 4 * needed);
    // The decoded page itself (`original`, kept for the evidence) and the text with its
    // map, with room for the spaces and line breaks of the page's text that
    // canonicalisation folds: not a second page's worth.
    let beyond_the_page = c.heap_bytes() - c.original().len();
    assert!(beyond_the_page <= 2 * needed, "{beyond_the_page} bytes beside the page for a text needing {needed}");
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
