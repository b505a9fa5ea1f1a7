//! Test data: simplified -> traditional conversion with the OpenCC tables, the corpus
//! reader, the fixture regenerator and the pirate page layout.

use super::*;

/// Simplified -> traditional with OpenCC's STPhrases/STCharacters (leftmost-longest), and
/// for `taiwan` then TWVariants (OpenCC's `s2tw`), to make traditional test text from
/// simplified corpus text.
pub(crate) struct S2t {
    map: std::collections::HashMap<Vec<char>, String>,
    longest: usize,
    variants: std::collections::HashMap<char, String>,
}

impl S2t {
    pub(crate) fn load(opencc: &Path, taiwan: bool) -> S2t {
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

    pub(crate) fn convert(&self, s: &str) -> String {
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

pub(crate) fn read_chapters(path: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(path).expect("corpus");
    text.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v.get("text").and_then(|t| t.as_str()).map(str::to_owned))
        .collect()
}

/// Rebuild the fixtures from the test corpus: `cargo test -p zhiwen-core --test core
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
