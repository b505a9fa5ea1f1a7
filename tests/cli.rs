//! The `zhiwen` binary as a user runs it: outputs, exit codes, error lines.

use std::path::PathBuf;
use std::process::{Command, Output};

fn zhiwen(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zhiwen")).args(args).current_dir(repo()).output().expect("zhiwen runs")
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn compare_json_is_the_documented_contract() {
    let o = zhiwen(&["compare", "samples/hongloumeng-01.txt", "samples/pirate-copy-big5.html", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON on stdout");
    assert_eq!(v["contract"], "zhiwen.compare/1");
    for key in [
        "resemblance",
        "containment_ab",
        "containment_ba",
        "dice",
        "simhash_distance",
        "dna_score",
        "megashingle_match",
        "lsh_candidate",
        "winnow_containment_ab",
        "winnow_containment_ba",
        "verdict",
        "evidence",
    ] {
        assert!(v.get(key).is_some(), "missing key {key}");
    }
    assert_eq!(v["verdict"]["duplicate"], true);
    assert_eq!(v["verdict"]["kind"], "b_within_a");
    let score = v["verdict"]["score"].as_f64().expect("score");
    assert!((0.0..=1.0).contains(&score));
    assert_eq!(v["b"]["charset"], "Big5");
    // Evidence offsets are character offsets into the ORIGINAL files (Big5 decoded).
    let original_b = {
        let bytes = std::fs::read(repo().join("samples/pirate-copy-big5.html")).expect("sample");
        encoding_rs::BIG5.decode(&bytes).0.into_owned()
    };
    let original_a = std::fs::read_to_string(repo().join("samples/hongloumeng-01.txt")).expect("sample");
    let evidence = v["evidence"].as_array().expect("evidence list");
    assert!(!evidence.is_empty());
    for e in evidence {
        let slice = |s: &str, from: &serde_json::Value, to: &serde_json::Value| -> String {
            let (f, t) = (from.as_u64().expect("offset") as usize, to.as_u64().expect("offset") as usize);
            s.chars().skip(f).take(t - f).collect()
        };
        assert_eq!(slice(&original_a, &e["a_start"], &e["a_end"]), e["a_text"].as_str().expect("quote"));
        assert_eq!(slice(&original_b, &e["b_start"], &e["b_end"]), e["b_text"].as_str().expect("quote"));
    }
}

#[test]
fn compare_prints_a_readable_table_and_clears_the_innocent_page() {
    let o = zhiwen(&["compare", "samples/hongloumeng-01.txt", "samples/other-chapter-gbk.html"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("verdict  unrelated"), "{out}");
    assert!(out.contains("resemblance") && out.contains("simhash distance"), "{out}");
    assert!(out.contains("(GBK"), "{out}");
}

#[test]
fn fingerprint_json_lists_every_family() {
    let o = zhiwen(&["fingerprint", "samples/pirate-copy-big5.html", "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    let f = &v["fingerprints"];
    assert_eq!(f["minhash"].as_array().map(Vec::len), Some(84));
    assert_eq!(f["super_shingles"].as_array().map(Vec::len), Some(6));
    assert_eq!(f["mega_shingles"].as_array().map(Vec::len), Some(15));
    for family in ["dna", "shingles", "lsh_bands", "winnow_initials", "winnow_chars"] {
        assert!(!f[family].as_array().expect(family).is_empty(), "{family} empty");
    }
    assert_eq!(v["simhash_block_keys"].as_array().map(Vec::len), Some(4));
    assert_eq!(v["simhash_two_block_keys"].as_array().map(Vec::len), Some(10));
}

#[test]
fn bad_inputs_give_one_clear_line_and_a_failure_exit() {
    let dir = tempfile::tempdir().expect("tempdir");
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, b"").expect("write");
    let junk = dir.path().join("junk.bin");
    let mut bytes = b"\x89PNG\r\n\x1a\n".to_vec();
    bytes.extend((0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    std::fs::write(&junk, &bytes).expect("write");
    let punct = dir.path().join("punct.txt");
    std::fs::write(&punct, "，。！？…… \n —— ").expect("write");
    let cases: [(&str, &str); 4] = [
        ("samples/does-not-exist.txt", "cannot read"),
        (empty.to_str().expect("utf-8 path"), "empty"),
        (junk.to_str().expect("utf-8 path"), "not text"),
        (punct.to_str().expect("utf-8 path"), "no text"),
    ];
    for (path, expected) in cases {
        let o = zhiwen(&["compare", path, "samples/hongloumeng-01.txt"]);
        assert_eq!(o.status.code(), Some(1), "{path}: {}", stderr(&o));
        let err = stderr(&o);
        assert_eq!(err.trim_end().lines().count(), 1, "{path}: {err}");
        assert!(err.contains(expected), "{path}: {err}");
        assert!(!err.contains("panicked"), "{path}: {err}");
    }
}

#[test]
fn the_parameter_reference_lists_every_default_as_it_is() {
    let doc = std::fs::read_to_string(repo().join("docs/parameters.md")).expect("docs/parameters.md");
    let defaults = serde_json::to_value(zhiwen_core::Params::default()).expect("serialisable");
    let mut documented = 0;
    for (section, fields) in defaults.as_object().expect("object") {
        for (field, value) in fields.as_object().expect("object") {
            let key = format!("`{section}.{field}`");
            let row =
                doc.lines().find(|l| l.starts_with(&format!("| {key} "))).unwrap_or_else(|| panic!("{key} missing"));
            let cell = row.split('|').nth(2).expect("default column").trim().trim_matches('`');
            let expected = match value {
                serde_json::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            assert_eq!(cell, expected, "{key}");
            documented += 1;
        }
    }
    assert!(documented >= 20);
}

/// `zhiwen` on its own data directory (embedded store and index), whatever the
/// environment says.
fn zhiwen_at(data: &std::path::Path) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_zhiwen"));
    c.current_dir(repo())
        .env_remove("ZHIWEN_CONFIG")
        .env_remove("ZHIWEN_STORE")
        .env_remove("ZHIWEN_INDEX")
        .env_remove("ZHIWEN_LOG")
        .env_remove(zhiwen_matcher::task::ABORT_ENV)
        .env("ZHIWEN_DATA_DIR", data);
    c
}

fn run_at(data: &std::path::Path, args: &[&str]) -> Output {
    zhiwen_at(data).args(args).output().expect("zhiwen runs")
}

/// The first chapter of 红楼梦 as bundled, and one line of the works JSONL registering
/// it under `id` and `title` (which a rights holder chooses freely).
fn chapter_and_work_line(id: &str, title: &str) -> (String, String) {
    let text = std::fs::read_to_string(repo().join("samples/hongloumeng-01.txt")).expect("bundled sample");
    let line = serde_json::json!({"id": id, "title": title, "author": "曹雪芹", "text": text}).to_string();
    (text, line)
}

/// A pirate page carrying `body` as its content, in a site template.
fn pirate_html(title: &str, body: &str, head_extra: &str) -> String {
    let paragraphs: String = body.lines().filter(|l| !l.trim().is_empty()).map(|l| format!("<p>{l}</p>")).collect();
    format!(
        "<html><head><title>{title}</title>{head_extra}</head><body><div class=\"nav\">首页 排行榜 书架 全本小说</div>\
         <div id=\"content\">{paragraphs}</div><div class=\"foot\">本站小说均来自网友上传</div></body></html>"
    )
}

#[test]
fn import_errors_exit_1_with_one_line_on_stderr() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let empty = dir.path().join("empty.txt");
    std::fs::write(&empty, b"").expect("write");
    let mut binary = b"\x89PNG\r\n\x1a\n".to_vec();
    binary.extend((0..4000u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    let junk = dir.path().join("junk.bin");
    std::fs::write(&junk, &binary).expect("write");
    // Binary files that claim to be WARC files, and an empty one.
    let fake_warc = dir.path().join("fake.warc");
    std::fs::write(&fake_warc, &binary).expect("write");
    let fake_gz = dir.path().join("fake.warc.gz");
    std::fs::write(&fake_gz, &binary).expect("write");
    let empty_warc = dir.path().join("empty.warc");
    std::fs::write(&empty_warc, b"").expect("write");
    let path = |p: &std::path::Path| p.to_str().expect("utf-8 path").to_owned();
    let cases: Vec<(Vec<String>, &str)> = vec![
        (vec!["works".into(), "/nonexistent/works.txt".into()], "cannot read"),
        (vec!["works".into(), path(&empty)], "empty"),
        (vec!["works".into(), path(&junk)], "not text"),
        (vec!["pages".into(), "/nonexistent/pages.jsonl".into()], "cannot read"),
        (vec!["pages".into(), path(&junk)], "not text"),
        (vec!["pages".into(), path(&fake_warc)], "not a WARC file"),
        (vec!["pages".into(), path(&fake_gz)], "gzip"),
        (vec!["pages".into(), path(&empty_warc)], "empty"),
    ];
    for (args, expected) in &cases {
        let mut c = zhiwen_at(&data);
        c.arg("import").args(args);
        if args[0] == "works" {
            c.args(["--owner", "x"]);
        }
        let o = c.output().expect("zhiwen runs");
        let err = stderr(&o);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert_eq!(err.trim_end().lines().count(), 1, "{args:?}: {err}");
        assert!(err.starts_with("zhiwen: error: nothing imported: "), "{args:?}: {err}");
        assert!(err.to_lowercase().contains(&expected.to_lowercase()), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        // Every rejection is also in the summary on stdout.
        let out = String::from_utf8_lossy(&o.stdout);
        assert!(out.contains("rejected 1") && out.contains("  rejected: "), "{args:?}: {out}");
    }

    // Partial failure: the good file is stored, and the run still fails (exit 1).
    let (_, line) = chapter_and_work_line("hlm-1", "红楼梦 第一回");
    let good = dir.path().join("good.jsonl");
    std::fs::write(&good, format!("{line}\n")).expect("write");
    let o = run_at(&data, &["import", "works", &path(&good), "/nonexistent/more.txt", "--owner", "x"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert_eq!(err.trim_end().lines().count(), 1, "{err}");
    assert!(err.contains("1 of 2 inputs rejected, the others were stored") && err.contains("/nonexistent/more.txt"));
    assert!(String::from_utf8_lossy(&o.stdout).contains("imported 1"), "{}", String::from_utf8_lossy(&o.stdout));
    // Nothing rejected: success, nothing on stderr.
    let o = run_at(&data, &["import", "works", &path(&good), "--owner", "x"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
}

/// `zhiwen ... | head`: a reader that goes away before the command writes its result is
/// not an error (exit 0) and never a panic.
#[test]
fn a_closed_stdout_is_not_a_panic() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let (text, line) = chapter_and_work_line("hlm-1", "红楼梦 第一回");
    let works = dir.path().join("works.jsonl");
    std::fs::write(&works, format!("{line}\n")).expect("write");
    let page = serde_json::json!({"url": "http://pirate.example/1.html", "html": pirate_html("第一回", &text, "")});
    let pages = dir.path().join("pages.jsonl");
    std::fs::write(&pages, format!("{page}\n")).expect("write");
    let (works, pages) = (works.to_str().expect("utf-8"), pages.to_str().expect("utf-8"));
    let commands: [&[&str]; 5] = [
        &["import", "works", works, "--owner", "x"],
        &["import", "pages", pages],
        &["match"],
        &["keys", "list"],
        &["reindex"],
    ];
    for args in commands {
        let mut child = zhiwen_at(&data)
            .args(args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("zhiwen starts");
        // Close the reading end at once: every write to stdout meets a broken pipe.
        drop(child.stdout.take());
        let o = child.wait_with_output().expect("zhiwen ends");
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{args:?}: {err}");
        assert_eq!(o.status.code(), Some(0), "{args:?}: {err}");
    }
    // The commands did their work all the same.
    let o = run_at(&data, &["report", "export", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).contains("http://pirate.example/1.html"));
}

/// A data directory with one registered work (the first chapter of 红楼梦 under `id` and
/// `title`) and `pages` imported (JSONL lines), matched once.
fn matched(dir: &std::path::Path, id: &str, title: &str, pages: impl Fn(&str) -> Vec<String>) -> std::path::PathBuf {
    let data = dir.join("data");
    let (text, line) = chapter_and_work_line(id, title);
    let works = dir.join("works.jsonl");
    std::fs::write(&works, format!("{line}\n")).expect("write");
    let pages_path = dir.join("pages.jsonl");
    std::fs::write(&pages_path, pages(&text).join("\n")).expect("write");
    for args in [
        vec!["import", "works", works.to_str().expect("utf-8"), "--owner", "x"],
        vec!["import", "pages", pages_path.to_str().expect("utf-8")],
        vec!["match"],
    ] {
        let o = run_at(&data, &args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    }
    data
}

/// Two URLs serving the same copy (a mirror) are both stored and both matched, each with
/// its own match record and evidence quoted from its own page.
#[test]
fn a_mirror_is_stored_and_matched_under_its_own_url() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A copy of half the chapter, and a mirror of it: the same page with a comment in its
    // head (the same text, other offsets in the page).
    let data = matched(dir.path(), "hlm-1", "红楼梦 第一回", |text| {
        let half: String = text.chars().take(text.chars().count() / 2).collect();
        let first = pirate_html("第一回", &half, "");
        let mirror = pirate_html("第一回", &half, "<!-- mirrored from pirate.example, 镜像站 -->");
        vec![
            serde_json::json!({"url": "http://pirate.example/book/1.html", "html": first}).to_string(),
            serde_json::json!({"url": "http://mirror.example/copy/1.html", "html": mirror}).to_string(),
        ]
    });
    let o = run_at(&data, &["report", "export", "--format", "json"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows: Vec<serde_json::Value> = String::from_utf8_lossy(&o.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line per match"))
        .collect();
    let url = |r: &serde_json::Value| r["url"].as_str().unwrap_or_default().to_owned();
    let mut urls: Vec<String> = rows.iter().map(url).collect();
    urls.sort();
    assert_eq!(urls, ["http://mirror.example/copy/1.html", "http://pirate.example/book/1.html"], "{rows:?}");
    let (a, b) = (&rows[0], &rows[1]);
    for field in ["work_external_id", "section_title", "kind", "score", "evidence_section", "evidence_page"] {
        assert_eq!(a[field], b[field], "{field}: the mirror's match is the first copy's");
    }

    // The evidence of each page quotes its own page, at offsets into its own body.
    let stores = store_at(&data);
    let mut starts = Vec::new();
    for row in &rows {
        let (page_url, evidence) = (url(row), row["evidence_page"].as_str().unwrap_or_default().to_owned());
        let (body, quoted) = stores.block_on(|s| async move {
            let page = s.pages.find_page(&page_url).await.expect("read").expect("stored");
            let ms = s.matches.list_matches(&Default::default(), 0, 10).await.expect("list");
            let m = ms.into_iter().find(|m| m.page_id == page.id).expect("a match of the page");
            let e = m.comparison.evidence.into_iter().max_by_key(|e| e.chars).expect("evidence");
            (String::from_utf8(page.body).expect("UTF-8 page"), (e.b_start, e.b_end, e.b_text))
        });
        let (start, end, quote) = quoted;
        assert_eq!(body.chars().skip(start).take(end - start).collect::<String>(), quote);
        assert_eq!(quote, evidence);
        starts.push(start);
    }
    assert_ne!(starts[0], starts[1], "each at its own offsets");
}

/// Work ids and titles that a spreadsheet would run as formulas (holders choose both)
/// come out of the CSV export as text.
#[test]
fn csv_export_cells_never_run_as_formulas() {
    let dir = tempfile::tempdir().expect("tempdir");
    let title = "=HYPERLINK(\"http://x\",\"点击\")";
    let data = matched(dir.path(), "=1+1", title, |text| {
        let html = pirate_html("第一回", text, "");
        vec![serde_json::json!({"url": "http://pirate.example/book/1.html", "html": html}).to_string()]
    });
    let o = run_at(&data, &["report", "export", "--format", "csv"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let csv_text = String::from_utf8(o.stdout).expect("UTF-8");
    let mut r = csv::Reader::from_reader(csv_text.trim_start_matches('\u{feff}').as_bytes());
    let headers = r.headers().expect("CSV header").clone();
    let col = |name: &str| headers.iter().position(|h| h == name).expect("column");
    let records: Vec<csv::StringRecord> = r.records().map(|x| x.expect("CSV record")).collect();
    assert_eq!(records.len(), 1, "{csv_text}");
    assert_eq!(&records[0][col("work_external_id")], "'=1+1", "{csv_text}");
    assert_eq!(&records[0][col("work_title")], format!("'{title}"), "{csv_text}");
    // JSON keeps the values as they are.
    let o = run_at(&data, &["report", "export", "--format", "json"]);
    let row: serde_json::Value = serde_json::from_slice(o.stdout.trim_ascii()).expect("one JSON line");
    assert_eq!((row["work_external_id"].as_str(), row["work_title"].as_str()), (Some("=1+1"), Some(title)));
}

/// `report export` takes the list's filters: a holder's works and a review status
/// (`matched` registers the work under owner "x"; a new match is in status "new").
#[test]
fn report_export_filters_by_owner_and_status() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = matched(dir.path(), "hlm-1", "红楼梦 第一回", |text| {
        let html = pirate_html("第一回", text, "");
        vec![serde_json::json!({"url": "http://pirate.example/book/1.html", "html": html}).to_string()]
    });
    let lines = |args: &[&str]| {
        let o = run_at(&data, args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        o.stdout.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count()
    };
    assert_eq!(lines(&["report", "export", "--format", "json", "--owner", "x"]), 1);
    assert_eq!(lines(&["report", "export", "--format", "json", "--owner", "someone-else"]), 0);
    assert_eq!(lines(&["report", "export", "--format", "json", "--status", "new"]), 1);
    assert_eq!(lines(&["report", "export", "--format", "json", "--status", "confirmed"]), 0);
    let o = run_at(&data, &["report", "export", "--status", "approved"]);
    assert_eq!(o.status.code(), Some(2), "a usage error");
    assert!(stderr(&o).contains("is not a review status"), "{}", stderr(&o));
}

/// The embedded store of a data directory, for reading what the commands stored.
struct StoreAt {
    rt: tokio::runtime::Runtime,
    stores: zhiwen_store::Stores,
}

impl StoreAt {
    fn block_on<T, F: std::future::Future<Output = T>>(&self, f: impl FnOnce(zhiwen_store::Stores) -> F) -> T {
        self.rt.block_on(f(self.stores.clone()))
    }
}

fn store_at(data: &std::path::Path) -> StoreAt {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    let stores = rt.block_on(zhiwen_store::open(&zhiwen_store::StoreConfig::embedded(data))).expect("store opens");
    StoreAt { rt, stores }
}

/// `zhiwen watch add|list|remove` and `zhiwen crawl --watch` against a loopback pirate
/// site: the watch role stores the chapter its index lists, stops cleanly on SIGTERM,
/// and the matching it queued finds the copy.
#[test]
fn watched_sites_from_the_command_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let data = dir.path().join("data");
    let (text, line) = chapter_and_work_line("hlm-1", "红楼梦 第一回");
    let works = dir.path().join("works.jsonl");
    std::fs::write(&works, format!("{line}\n")).expect("write");
    let o = run_at(&data, &["import", "works", works.to_str().expect("utf-8"), "--owner", "jinling-press"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let site = zhiwen_testkit::site::Site::start();
    let half: String = text.chars().take(text.chars().count() / 2).collect();
    site.set("/book/1.html", 200, pirate_html("第一回", &half, ""));
    site.set(
        "/index.html",
        200,
        "<html><body><a href=\"/book/1.html\">第一回</a><a href=\"/about.html\">关于</a></body></html>".into(),
    );
    let entry = site.url("/index.html");
    let add = ["watch", "add", "--owner", "jinling-press", "--entry", entry.as_str(), "--pattern", r"/book/\d+\.html$"];
    let o = run_at(&data, &add);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("inserted "), "{}", String::from_utf8_lossy(&o.stdout));
    let o = run_at(&data, &add);
    assert!(String::from_utf8_lossy(&o.stdout).starts_with("unchanged "));
    // Bad input: one line, exit 1.
    let o = run_at(&data, &["watch", "add", "--owner", "o", "--entry", "ftp://pirate.example/"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("http or https"), "{}", stderr(&o));

    // The watch role until SIGTERM.
    let child = zhiwen_at(&data)
        .args(["crawl", "--watch", "--allow-loopback"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("zhiwen runs");
    let start = std::time::Instant::now();
    while site.hits("/book/1.html") == 0 {
        assert!(start.elapsed() < std::time::Duration::from_secs(60), "the chapter was never fetched");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Visited: the schedule is stored once the visit is recorded.
    let id = format!("127.0.0.1:{}", site.port());
    loop {
        let o = run_at(&data, &["watch", "list", "--json"]);
        let listed: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap_or_default();
        if listed["entry_points"][0]["visits"] == 1 {
            assert_eq!(listed["id"], id.as_str());
            break;
        }
        assert!(start.elapsed() < std::time::Duration::from_secs(60), "the visit was never recorded");
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let term = Command::new("kill").args(["-TERM", &child.id().to_string()]).status().expect("kill runs");
    assert!(term.success());
    let out = child.wait_with_output().expect("zhiwen ends");
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert!(err.contains("watch stopped"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("stored 1"), "{}", String::from_utf8_lossy(&out.stdout));
    assert_eq!(site.hits("/about.html"), 0, "links outside the chapter pattern are not fetched");

    // The queued matching finds the copy.
    let o = run_at(&data, &["match"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run_at(&data, &["report", "export", "--format", "json"]);
    assert!(
        String::from_utf8_lossy(&o.stdout).contains(&site.url("/book/1.html")),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );

    // A second holder joins the site; the first leaves it, then it is removed for all.
    let o = run_at(&data, &["watch", "add", "--owner", "luoguan", "--entry", &site.url("/rss.xml")]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run_at(&data, &["watch", "list", "--owner", "luoguan"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains(&id), "{}", String::from_utf8_lossy(&o.stdout));
    let o = run_at(&data, &["watch", "remove", &id, "--owner", "nobody"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o).trim().lines().count(), 1, "one line: {}", stderr(&o));
    let owner = "jinling-press";
    let o = run_at(&data, &["watch", "remove", &id, "--owner", owner]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("stays watched"), "{}", String::from_utf8_lossy(&o.stdout));
    let o = run_at(&data, &["watch", "list", "--owner", owner]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("no watched sites"));
    let o = run_at(&data, &["watch", "remove", &id]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = run_at(&data, &["watch", "list"]);
    assert!(String::from_utf8_lossy(&o.stdout).contains("no watched sites"));
}
