//! Web sites and the HTML of their pages: the chrome a pirate or portal wraps around a
//! text, rendered with the exact character ranges of the copied text.

use std::collections::HashMap;

use encoding_rs::{Encoding, BIG5, GBK, UTF_8};

use crate::rng::Rng;

/// How a site lays out the text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Pirate novel site: `&nbsp;` indents and `<br />` breaks inside one `div#content`.
    NovelBr,
    /// News site: `<article>` with `<p>` paragraphs and a sidebar.
    NewsP,
    /// Portal: one big template (channels, hot list, teasers, a long notice) around `<p>`s.
    Portal,
}

/// One site.
#[derive(Debug, Clone)]
pub struct Site {
    /// Display name.
    pub name: &'static str,
    /// Domain.
    pub domain: &'static str,
    /// Charset the pages are served in.
    pub encoding: &'static Encoding,
    /// Layout.
    pub layout: Layout,
    /// Whether the server sends the charset in its `Content-Type` header.
    pub http_charset: bool,
}

/// Pirate novel sites (simplified).
pub const NOVEL_SITES: [Site; 3] = [
    Site {
        name: "书香小说网",
        domain: "www.shuxiang-xs.example",
        encoding: GBK,
        layout: Layout::NovelBr,
        http_charset: false,
    },
    Site {
        name: "无弹窗小说阁",
        domain: "m.wudanchuang.example",
        encoding: UTF_8,
        layout: Layout::NovelBr,
        http_charset: true,
    },
    Site {
        name: "TXT全本书城",
        domain: "www.txtquanben.example",
        encoding: GBK,
        layout: Layout::NovelBr,
        http_charset: true,
    },
];

/// A traditional-script site (Big5).
pub const TRADITIONAL_SITE: Site = Site {
    name: "繁體小說閣",
    domain: "tw.fantixs.example",
    encoding: BIG5,
    layout: Layout::NovelBr,
    http_charset: false,
};

/// News re-posting sites.
pub const NEWS_SITES: [Site; 2] = [
    Site {
        name: "今日资讯网",
        domain: "news.jinrizixun.example",
        encoding: UTF_8,
        layout: Layout::NewsP,
        http_charset: true,
    },
    Site {
        name: "热点快报",
        domain: "www.redian-kb.example",
        encoding: GBK,
        layout: Layout::NewsP,
        http_charset: false,
    },
];

/// The template-heavy portal.
pub const PORTAL: Site = Site {
    name: "华夏门户网",
    domain: "www.huaxia-portal.example",
    encoding: UTF_8,
    layout: Layout::Portal,
    http_charset: true,
};

/// A piece of a paragraph: text, and whether it is copied from the labelled section.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Piece {
    /// The text (plain, not HTML).
    pub text: String,
    /// Copied from the work.
    pub copied: bool,
}

/// A paragraph of pieces.
pub type Para = Vec<Piece>;

/// A paragraph that is one copied piece.
pub fn copied(text: impl Into<String>) -> Para {
    vec![Piece { text: text.into(), copied: true }]
}

/// A paragraph that is one piece not from the work.
pub fn other(text: impl Into<String>) -> Para {
    vec![Piece { text: text.into(), copied: false }]
}

/// Site-wide chrome shared by every page of the portal (the same on every page).
#[derive(Debug, Clone, Default)]
pub struct PortalChrome {
    /// "Hot" headlines (of stories that are not registered works).
    pub hot_titles: Vec<String>,
    /// Teasers: headline and the opening words of a story (some are registered works).
    pub teasers: Vec<(String, String)>,
}

/// Writes HTML while counting characters, and records the ranges of copied text.
struct Builder {
    html: String,
    chars: usize,
    ranges: Vec<(usize, usize)>,
    encoding: &'static Encoding,
    encodable: HashMap<char, bool>,
}

impl Builder {
    fn new(encoding: &'static Encoding) -> Self {
        Builder {
            html: String::with_capacity(1 << 15),
            chars: 0,
            ranges: Vec::new(),
            encoding,
            encodable: HashMap::new(),
        }
    }

    fn markup(&mut self, s: &str) {
        self.html.push_str(s);
        self.chars += s.chars().count();
    }

    /// Text: markup characters become their full-width forms (NFKC folds them back), and
    /// characters the page's charset cannot encode become `?`, so that every character
    /// stays one character and the recorded ranges hold.
    fn text(&mut self, s: &str, is_copied: bool) {
        let start = self.chars;
        for c in s.chars() {
            let c = match c {
                '<' => '＜',
                '>' => '＞',
                '&' => '＆',
                '\n' | '\r' | '\t' => ' ',
                c if self.encoding == UTF_8 || c.is_ascii() => c,
                c => {
                    let enc = self.encoding;
                    let ok = *self.encodable.entry(c).or_insert_with(|| {
                        let mut buf = [0u8; 4];
                        !enc.encode(c.encode_utf8(&mut buf)).2
                    });
                    if ok {
                        c
                    } else {
                        '?'
                    }
                }
            };
            self.html.push(c);
            self.chars += 1;
        }
        if is_copied && self.chars > start {
            match self.ranges.last_mut() {
                Some(last) if last.1 == start => last.1 = self.chars,
                _ => self.ranges.push((start, self.chars)),
            }
        }
    }
}

/// A rendered page.
#[derive(Debug, Clone)]
pub struct Rendered {
    /// The page as text (what a correct decoder yields from `bytes`).
    pub html: String,
    /// The page as served.
    pub bytes: Vec<u8>,
    /// Character ranges of `html` holding copied text.
    pub copied: Vec<(usize, usize)>,
}

/// Render a page of `site` with `title` and the paragraphs.
pub fn render(site: &Site, title: &str, paras: &[Para], portal: &PortalChrome, rng: &mut Rng) -> Rendered {
    let mut b = Builder::new(site.encoding);
    let charset = site.encoding.name().to_ascii_lowercase();
    b.markup(&format!(
        "<!DOCTYPE html>\n<html lang=\"zh-CN\">\n<head>\n<meta http-equiv=\"Content-Type\" content=\"text/html; charset={charset}\" />\n<title>"
    ));
    b.text(&format!("{title}_{}", site.name), false);
    b.markup("</title>\n<meta name=\"keywords\" content=\"");
    b.text(&format!("{title},{},免费阅读,最新章节", site.name), false);
    b.markup(&format!(
        "\" />\n<link rel=\"stylesheet\" href=\"/static/css/style.css\" />\n<script type=\"text/javascript\">var site = \"{}\"; function tj(){{ var s = document.createElement('script'); s.src = '//stat.{}/tj.js'; document.head.appendChild(s); }}</script>\n</head>\n<body>\n",
        site.domain, site.domain
    ));
    match site.layout {
        Layout::NovelBr => novel_page(&mut b, site, title, paras, rng),
        Layout::NewsP => news_page(&mut b, site, title, paras, rng),
        Layout::Portal => portal_page(&mut b, site, title, paras, portal, rng),
    }
    b.markup("<script>tj();</script>\n</body>\n</html>\n");
    let (bytes, _, _) = site.encoding.encode(&b.html);
    Rendered { bytes: bytes.into_owned(), html: b.html, copied: b.ranges }
}

const NOVEL_NAV: [&str; 10] = [
    "首页",
    "玄幻小说",
    "修真小说",
    "都市小说",
    "历史小说",
    "网游小说",
    "科幻小说",
    "排行榜单",
    "完本小说",
    "阅读记录",
];
const NEWS_NAV: [&str; 12] =
    ["首页", "国内", "国际", "财经", "科技", "体育", "娱乐", "军事", "社会", "评论", "图片", "视频"];

fn links(b: &mut Builder, domain: &str, items: &[&str], class: &str) {
    b.markup(&format!("<div class=\"{class}\"><ul>\n"));
    for (i, item) in items.iter().enumerate() {
        b.markup(&format!("<li><a href=\"https://{domain}/list/{i}/\">"));
        b.text(item, false);
        b.markup("</a></li>\n");
    }
    b.markup("</ul></div>\n");
}

fn paragraph_pieces(b: &mut Builder, para: &Para) {
    for piece in para {
        b.text(&piece.text, piece.copied);
    }
}

fn novel_page(b: &mut Builder, site: &Site, title: &str, paras: &[Para], rng: &mut Rng) {
    let book = rng.range(1000, 99_999);
    b.markup("<div class=\"header\"><div class=\"logo\"><a href=\"/\">");
    b.text(site.name, false);
    b.markup("</a></div><div class=\"search\"><form action=\"/search.php\"><input type=\"text\" name=\"q\" /><button>");
    b.text("搜索", false);
    b.markup("</button></form></div></div>\n");
    links(b, site.domain, &NOVEL_NAV, "nav");
    b.markup("<div class=\"con_top\">");
    b.text(&format!("{} > 小说阅读 > {title}", site.name), false);
    b.markup("</div>\n<div class=\"bookname\"><h1>");
    b.text(title, false);
    b.markup(&format!("</h1>\n<div class=\"bottem1\"><a href=\"/book/{book}/\">"));
    b.text("章节目录", false);
    b.markup("</a> <a href=\"javascript:addBookCase();\">");
    b.text("加入书架", false);
    b.markup("</a> <a href=\"javascript:;\">");
    b.text("推荐本书", false);
    b.markup("</a></div></div>\n<div id=\"content\">");
    for para in paras {
        b.markup("&nbsp;&nbsp;&nbsp;&nbsp;");
        paragraph_pieces(b, para);
        b.markup("<br /><br />\n");
    }
    b.markup(&format!("</div>\n<div class=\"bottem2\"><a href=\"/book/{book}/prev.html\">"));
    b.text("上一章", false);
    b.markup(&format!("</a> &larr; <a href=\"/book/{book}/\">"));
    b.text("章节目录", false);
    b.markup(&format!("</a> &rarr; <a href=\"/book/{book}/next.html\">"));
    b.text("下一章", false);
    b.markup("</a></div>\n<div class=\"footer\"><p>");
    b.text(
        "本站所有小说为转载作品，所有章节均由网友上传，转载至本站只是为了宣传，让更多读者欣赏。如有侵权，请联系我们删除。",
        false,
    );
    b.markup("</p><p>");
    b.text(&format!("Copyright © 2024 {} All Rights Reserved. 备案号：京ICP备{}号", site.name, book * 7), false);
    b.markup("</p></div>\n");
}

fn news_page(b: &mut Builder, site: &Site, title: &str, paras: &[Para], rng: &mut Rng) {
    let (m, d) = (rng.range(1, 12), rng.range(1, 28));
    b.markup("<header class=\"top\"><a class=\"logo\" href=\"/\">");
    b.text(site.name, false);
    b.markup("</a></header>\n<nav>");
    links(b, site.domain, &NEWS_NAV, "channels");
    b.markup("</nav>\n<div class=\"main\"><article>\n<h1>");
    b.text(title, false);
    b.markup("</h1>\n<div class=\"info\">");
    b.text(&format!("2024-{m:02}-{d:02} 10:{:02} 来源：{} 编辑：小编", rng.below(60), site.name), false);
    b.markup("</div>\n<div class=\"article-content\">\n");
    for para in paras {
        b.markup("<p>");
        paragraph_pieces(b, para);
        b.markup("</p>\n");
    }
    b.markup("</div>\n<div class=\"share\">");
    b.text("分享到：微信 微博 QQ空间", false);
    b.markup("</div>\n</article>\n<aside><h3>");
    b.text("相关阅读", false);
    b.markup("</h3>");
    links(b, site.domain, &["热点追踪", "深度观察", "图说天下", "专题报道", "网友评论"], "related");
    b.markup("</aside></div>\n<footer><p>");
    b.text(&format!("{} 版权所有 未经许可不得转载 违法和不良信息举报电话：010-12345678", site.name), false);
    b.markup("</p></footer>\n");
}

/// The long notice of the portal, the same on every page (written for this evaluation).
const PORTAL_NOTICE: &str = "郑重声明：本网站所刊载的各类信息，包括但不限于文字、图片、音频、视频等，部分来源于互联网公开渠道，仅供网友学习交流之用，并不代表本网站赞同其观点或证实其内容的真实性。本网站对所转载信息的准确性、完整性和及时性不作任何保证，读者据此操作，风险自担。凡本网站注明“来源：华夏门户网”的作品，版权均属华夏门户网所有，未经书面授权，任何单位和个人不得转载、摘编或以其他方式使用。已经本网授权使用作品的，应在授权范围内使用，并注明“来源：华夏门户网”。违反上述声明者，本网将追究其相关法律责任。如因作品内容、版权和其他问题需要同本网联系的，请在作品发表之日起三十日内进行。本网站欢迎广大网友投稿，来稿一经采用，即付稿酬。投稿邮箱请见网站底部联系方式。网络不是法外之地，请文明上网，理性发言，共同营造风清气正的网络空间。";

fn portal_page(b: &mut Builder, site: &Site, title: &str, paras: &[Para], portal: &PortalChrome, rng: &mut Rng) {
    b.markup("<div id=\"topbar\"><span>");
    b.text("设为首页 | 加入收藏 | 手机版 | 登录 | 注册", false);
    b.markup("</span></div>\n<div id=\"header\"><a href=\"/\">");
    b.text(&format!("{} —— 权威 及时 全面", site.name), false);
    b.markup("</a></div>\n");
    links(b, site.domain, &NEWS_NAV, "mainnav");
    links(b, site.domain, &["北京", "上海", "广东", "浙江", "江苏", "四川", "湖北", "山东"], "subnav");
    b.markup("<div id=\"left\"><div class=\"hot\"><h3>");
    b.text("热门推荐", false);
    b.markup("</h3><ul>\n");
    for (i, t) in portal.hot_titles.iter().enumerate() {
        b.markup(&format!("<li><a href=\"/hot/{i}.html\">"));
        b.text(t, false);
        b.markup("</a></li>\n");
    }
    b.markup("</ul></div>\n<div class=\"teasers\">\n");
    for (i, (t, opening)) in portal.teasers.iter().enumerate() {
        b.markup(&format!("<div class=\"teaser\"><a href=\"/news/{i}.html\">"));
        b.text(t, false);
        b.markup("</a><span>");
        b.text(opening, false);
        b.markup("</span></div>\n");
    }
    b.markup("</div></div>\n<div id=\"main\"><div class=\"position\">");
    b.text(&format!("当前位置：{} > 新闻中心 > 正文", site.name), false);
    b.markup("</div>\n<h1>");
    b.text(title, false);
    b.markup("</h1>\n<div class=\"info\">");
    b.text(&format!("发布时间：2024-0{}-1{} 责任编辑：值班编辑", rng.range(1, 9), rng.below(10)), false);
    b.markup("</div>\n<div class=\"content\">\n");
    for para in paras {
        b.markup("<p>");
        paragraph_pieces(b, para);
        b.markup("</p>\n");
    }
    b.markup("</div></div>\n<div id=\"notice\"><p>");
    b.text(PORTAL_NOTICE, false);
    b.markup("</p></div>\n<div id=\"footer\"><p>");
    b.text(&format!("关于我们 | 联系方式 | 广告服务 | 网站地图 | 法律声明  {} 版权所有", site.name), false);
    b.markup("</p></div>\n");
}
