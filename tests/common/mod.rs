//! Shared by the process-level tests: inputs from the test corpus, the binary, the
//! match set as the store holds it.
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};

use zhiwen_store::{MatchQuery, StoreConfig};

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The first `n` chapters of the classics (test corpus).
pub fn classics(n: usize) -> Vec<serde_json::Value> {
    zhiwen_testkit::corpus::lines(zhiwen_testkit::corpus::CLASSICS, n)
}

/// `n` stories of the web news set (test corpus) of 400-2,500 characters, in file order,
/// none sharing more than a twentieth of its 8-character runs with an earlier one: the set
/// holds templated near-duplicates, which would make an "innocent" page a copy.
pub fn distinct_news(n: usize) -> Vec<serde_json::Value> {
    let mut seen: std::collections::HashSet<String> = std::collections::HashSet::new();
    let mut out = Vec::new();
    for v in zhiwen_testkit::corpus::lines(zhiwen_testkit::corpus::NEWS, usize::MAX) {
        let chars: Vec<char> = field(&v, "text").chars().collect();
        if !(400..=2_500).contains(&chars.len()) {
            continue;
        }
        let grams: Vec<String> = chars.windows(8).map(|w| w.iter().collect()).collect();
        let shared = grams.iter().filter(|g| seen.contains(*g)).count();
        if shared * 20 > grams.len() {
            continue;
        }
        seen.extend(grams);
        out.push(v);
        if out.len() == n {
            break;
        }
    }
    assert_eq!(out.len(), n, "distinct news stories in the test corpus");
    out
}

pub fn zhiwen(data: &Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_zhiwen"));
    c.current_dir(repo())
        .env_remove("ZHIWEN_CONFIG")
        .env_remove("ZHIWEN_STORE")
        .env_remove("ZHIWEN_INDEX")
        .env_remove(zhiwen_matcher::task::ABORT_ENV)
        .env("ZHIWEN_DATA_DIR", data)
        .env("ZHIWEN_CONFIG", data.with_extension("toml"));
    c
}

pub fn run_ok(mut c: Command) -> String {
    let o = c.output().expect("zhiwen runs");
    assert!(o.status.success(), "{:?} failed: {}", c, String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn field(v: &serde_json::Value, k: &str) -> String {
    v[k].as_str().unwrap_or_default().to_owned()
}

/// Works: 12 chapters of classic novels and 6 news stories. Pages (two sites with their
/// own boilerplate): copies of every kind a pirate makes, and innocent pages.
pub fn write_inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let novels = classics(40);
    let news = distinct_news(40);
    let works: Vec<&serde_json::Value> = novels.iter().take(12).chain(news.iter().take(6)).collect();
    let mut wf = String::new();
    for w in &works {
        let line = serde_json::json!({"id": field(w, "id"), "title": field(w, "title"), "text": field(w, "text")});
        wf.push_str(&line.to_string());
        wf.push('\n');
    }
    let page = |site: &str, n: usize, body: &str| {
        let (head, foot) = if site == "novel.example" {
            (
                "笔趣阁 首页 玄幻小说 修真小说 都市小说 排行榜 书架 最新章节 全本小说 加入书签 推荐本书",
                "本站所有小说均来自网友上传 如有侵权请联系我们删除 笔趣阁 免费小说阅读网",
            )
        } else {
            (
                "今日快讯 要闻 国内 国际 财经 体育 娱乐 评论 专题 图片 视频 客户端下载",
                "责任编辑 本网所有内容版权归原作者所有 转载请注明出处 违者必究 今日快讯网",
            )
        };
        let html = format!(
            "<html><head><title>{n}</title></head><body><div class=\"nav\">{head}</div><div id=\"content\">{}</div><div class=\"foot\">{foot}</div></body></html>",
            body.split('\n').map(|p| format!("<p>{p}</p>")).collect::<String>()
        );
        serde_json::json!({"url": format!("http://{site}/p/{n}.html"), "html": html, "fetched_at": "2026-11-20T10:00:00Z"})
            .to_string()
    };
    let chars = |s: &str, from: f64, to: f64| -> String {
        let v: Vec<char> = s.chars().collect();
        v[(v.len() as f64 * from) as usize..(v.len() as f64 * to) as usize].iter().collect()
    };
    let mut pf = String::new();
    let mut n = 0;
    let mut push = |pf: &mut String, site: &str, body: &str| {
        n += 1;
        pf.push_str(&page(site, n, body));
        pf.push('\n');
    };
    for (i, w) in works.iter().enumerate().take(12) {
        let text = field(w, "text");
        let body = match i % 3 {
            0 => text.clone(),            // whole chapter
            1 => chars(&text, 0.0, 0.55), // cut
            _ => chars(&text, 0.2, 0.5),  // excerpt
        };
        push(&mut pf, "novel.example", &body);
    }
    // Innocent pages of the same site: other chapters of the same novels.
    for w in novels.iter().skip(20).take(12) {
        push(&mut pf, "novel.example", &field(w, "text"));
    }
    // News: three stories copied (one inside unrelated stories), the others innocent.
    for (i, w) in news.iter().take(6).enumerate() {
        if i % 2 == 0 {
            let body =
                format!("{}\n{}\n{}", field(&news[20 + i], "text"), field(w, "text"), field(&news[30 + i], "text"));
            push(&mut pf, "news.example", &body);
        }
    }
    for w in news.iter().skip(10).take(10) {
        push(&mut pf, "news.example", &field(w, "text"));
    }
    let (works_path, pages_path) = (dir.join("works.jsonl"), dir.join("pages.jsonl"));
    std::fs::write(&works_path, wf).expect("write works");
    std::fs::write(&pages_path, pf).expect("write pages");
    (works_path, pages_path)
}

/// A data directory with the inputs imported; checkpoints every 4 pages.
pub fn prepared(root: &Path, name: &str, works: &Path, pages: &Path) -> PathBuf {
    prepared_with(root, name, works, pages, "")
}

/// [`prepared`] with more settings (TOML appended to the `[matcher]` table's file).
pub fn prepared_with(root: &Path, name: &str, works: &Path, pages: &Path, extra: &str) -> PathBuf {
    let data = root.join(name);
    let config = format!("[matcher]\nbatch_size = 4\nconcurrency = 2\n{extra}");
    std::fs::write(data.with_extension("toml"), config).expect("config");
    let mut c = zhiwen(&data);
    c.args(["import", "works", works.to_str().expect("utf-8"), "--owner", "crash-test"]);
    run_ok(c);
    let mut c = zhiwen(&data);
    c.args(["import", "pages", pages.to_str().expect("utf-8")]);
    run_ok(c);
    data
}

/// Every match of the embedded store in `data`: see [`match_set_in`].
pub fn match_set(data: &Path) -> BTreeMap<(String, u32, String), serde_json::Value> {
    match_set_in(&StoreConfig::embedded(data))
}

/// Every match by natural key (work external id, section ordinal, page URL) with its
/// kind and every score and evidence passage, as the store (either backend) holds them.
pub fn match_set_in(config: &StoreConfig) -> BTreeMap<(String, u32, String), serde_json::Value> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let stores = zhiwen_store::open(config).await.expect("store opens");
        let mut out = BTreeMap::new();
        let mut after = 0;
        loop {
            let page = stores.matches.list_matches(&MatchQuery::default(), after, 200).await.expect("list");
            let Some(last) = page.last() else { break };
            after = last.id;
            for m in page {
                let work = stores.works.get_work(m.work_id).await.expect("work").expect("work exists");
                let section = stores.works.get_section(m.section_id).await.expect("section").expect("exists");
                let url = stores.pages.get_page(m.page_id).await.expect("page").expect("page exists").url;
                let value = serde_json::json!({"kind": m.kind, "score": m.score, "duplicate": m.duplicate,
                    "comparison": serde_json::to_value(&m.comparison).expect("serialisable")});
                let key = (work.external_id.clone(), section.ordinal, url);
                assert!(out.insert(key.clone(), value).is_none(), "duplicate match {key:?}");
            }
        }
        out
    })
}

pub fn killed_by_signal(status: ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal().is_some()
}

/// Run `zhiwen match` with debug logs of the matcher and SIGKILL it after `n` log lines
/// containing `needle`. Returns whether the kill happened (the task may end first).
pub fn match_killed_after(data: &Path, needle: &str, n: usize) -> bool {
    let mut c = zhiwen(data);
    c.args(["match"]).env("ZHIWEN_LOG", "zhiwen_matcher=debug").stdout(Stdio::null()).stderr(Stdio::piped());
    let mut child = c.spawn().expect("zhiwen match starts");
    let stderr = child.stderr.take().expect("stderr");
    let mut seen = 0;
    let mut killed = false;
    for line in BufReader::new(stderr).lines() {
        let Ok(line) = line else { break };
        if strip_ansi(&line).contains(needle) {
            seen += 1;
            if seen == n {
                child.kill().expect("SIGKILL");
                killed = true;
                break;
            }
        }
    }
    let status = child.wait().expect("wait");
    if killed {
        assert!(killed_by_signal(status), "{status:?}");
    }
    killed
}

/// The log line without terminal colour codes.
pub fn strip_ansi(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

pub fn match_aborted_after(data: &Path, pages: u64) {
    let mut c = zhiwen(data);
    c.args(["match"]).env(zhiwen_matcher::task::ABORT_ENV, pages.to_string());
    let o = c.output().expect("zhiwen match runs");
    assert!(killed_by_signal(o.status), "expected an abort after {pages} pages: {:?}", o.status);
}
