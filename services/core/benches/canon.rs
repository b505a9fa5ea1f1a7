//! Throughput of canonicalisation alone: plain UTF-8 text, traditional text, HTML pages,
//! GBK bytes, and decoding by itself.
//!
//! Reads classic chapters from the test corpus (`ZHIWEN_CORPUS_DIR`, default
//! the test corpus, `.test-corpus/`); falls back to the test fixture.
//! Run: `cargo bench -p zhiwen-core --bench canon`.

use std::hint::black_box;
use std::path::PathBuf;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use encoding_rs::GBK;
use zhiwen_core::canon::{self, InputFormat};
use zhiwen_core::params::CanonParams;

/// About 2 MB of chapters.
fn chapters() -> Vec<String> {
    let dir = std::env::var_os("ZHIWEN_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.test-corpus"));
    let mut out = Vec::new();
    let mut size = 0;
    if let Ok(jsonl) = std::fs::read_to_string(dir.join("novels_classics.jsonl")) {
        for line in jsonl.lines() {
            if let Some(t) =
                serde_json::from_str::<serde_json::Value>(line).ok().and_then(|v| v["text"].as_str().map(str::to_owned))
            {
                size += t.len();
                out.push(t);
            }
            if size >= 2 << 20 {
                break;
            }
        }
    }
    if out.is_empty() {
        eprintln!("test corpus not found: benchmarking the test fixture");
        let sample = std::fs::read_to_string(
            PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/canon/sanguo-001.txt"),
        )
        .expect("fixture");
        out = vec![sample; 256];
    }
    out
}

/// Simplified -> traditional with the corpus's OpenCC STCharacters/STPhrases
/// (leftmost-longest), when the corpus is there.
fn to_traditional(text: &str) -> Option<String> {
    let dir = std::env::var_os("ZHIWEN_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.test-corpus"))
        .join("opencc");
    let mut map = std::collections::HashMap::new();
    let mut longest = 1;
    for file in ["STCharacters.txt", "STPhrases.txt"] {
        let table = std::fs::read_to_string(dir.join(file)).ok()?;
        for line in table.lines().filter(|l| !l.starts_with('#')) {
            if let Some((k, v)) = line.split_once('\t') {
                let k: Vec<char> = k.chars().collect();
                longest = longest.max(k.len());
                map.insert(k, v.split(' ').next().unwrap_or(v).to_owned());
            }
        }
    }
    let chars: Vec<char> = text.chars().collect();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    'outer: while i < chars.len() {
        for len in (1..=longest.min(chars.len() - i)).rev() {
            if let Some(v) = map.get(&chars[i..i + len]) {
                out.push_str(v);
                i += len;
                continue 'outer;
            }
        }
        out.push(chars[i]);
        i += 1;
    }
    Some(out)
}

/// A pirate-site page around one chapter: navigation, the chapter in div#content with
/// `<br>` line breaks, link bars, footer, scripts.
fn pirate_page(chapter: &str) -> String {
    let mut page = String::from(
        "<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>第一回_笔趣阁</title>\
         <script>var bookid = 1; function read3() {}</script><style>#content{font-size:18px}</style></head>\
         <body><div class=\"header\"><a href=\"/\">笔趣阁</a><form><input name=q><button>搜索</button></form></div>\
         <div class=\"nav\"><ul><li><a href=\"/\">首页</a></li><li><a href=\"/xuanhuan/\">玄幻小说</a></li>\
         <li><a href=\"/dushi/\">都市小说</a></li><li><a href=\"/lishi/\">历史小说</a></li></ul></div>\
         <div class=\"con_top\"><a href=\"/\">笔趣阁</a> &gt; <a href=\"/1/\">三国演义</a> &gt; 第一回</div>\
         <h1>第一回</h1><div class=\"bottem1\"><a href=\"/1/\">上一章</a> &larr; <a href=\"/1/\">章节目录</a> \
         &rarr; <a href=\"/1/2.html\">下一章</a></div><div id=\"content\">",
    );
    for line in chapter.lines().filter(|l| !l.trim().is_empty()) {
        page.push_str("&nbsp;&nbsp;&nbsp;&nbsp;");
        page.push_str(line.trim_start_matches('\u{3000}'));
        page.push_str("<br /><br />\n");
    }
    page.push_str(
        "<script>read3();</script></div><div class=\"bottem2\"><a href=\"/1/\">上一章</a> &larr; \
         <a href=\"/1/\">章节目录</a> &rarr; <a href=\"/1/2.html\">下一章</a></div>\
         <div class=\"footer\"><p>本站所有小说为转载作品，所有章节均由网友上传。</p><p>Copyright &copy; 笔趣阁</p></div>\
         </body></html>",
    );
    page
}

fn bench(c: &mut Criterion) {
    let chapters = chapters();
    let text = chapters.join("\n\n");
    let traditional = to_traditional(&text);
    let params = CanonParams::default();
    let no_t2s = CanonParams { traditional_to_simplified: false, ..CanonParams::default() };
    let pages: Vec<String> = chapters.iter().map(|c| pirate_page(c)).collect();
    let html = pages.join("\n");
    let (gbk, _, _) = GBK.encode(&text);
    let gbk = gbk.into_owned();

    let mut g = c.benchmark_group("canon");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(text.len() as u64));
    g.bench_function("text utf-8", |b| {
        b.iter(|| canon::canonicalize(black_box(text.as_bytes()), InputFormat::Text, &params))
    });
    g.bench_function("text utf-8, no t2s", |b| {
        b.iter(|| canon::canonicalize(black_box(text.as_bytes()), InputFormat::Text, &no_t2s))
    });
    if let Some(traditional) = &traditional {
        g.bench_function("traditional text utf-8", |b| {
            b.iter(|| canon::canonicalize(black_box(traditional.as_bytes()), InputFormat::Text, &params))
        });
    }
    g.bench_function("decode utf-8", |b| b.iter(|| canon::decode(black_box(text.as_bytes()), None)));
    g.throughput(Throughput::Bytes(gbk.len() as u64));
    g.bench_function("text gbk (detected)", |b| {
        b.iter(|| canon::canonicalize(black_box(&gbk), InputFormat::Auto, &params))
    });
    g.bench_function("decode gbk (detected)", |b| b.iter(|| canon::decode(black_box(&gbk), None)));
    g.throughput(Throughput::Bytes(html.len() as u64));
    g.bench_function("html pages joined", |b| {
        b.iter(|| canon::canonicalize(black_box(html.as_bytes()), InputFormat::Html, &params))
    });
    g.finish();

    let mut g = c.benchmark_group("canon page");
    let page = &pages[0];
    g.throughput(Throughput::Bytes(page.len() as u64));
    g.bench_function("one pirate page", |b| {
        b.iter(|| canon::canonicalize(black_box(page.as_bytes()), InputFormat::Auto, &params))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
