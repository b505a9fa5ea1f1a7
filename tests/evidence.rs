//! `zhiwen evidence` as a user runs it: the log key is made once, with owner-only
//! permissions, and stays the same; a package verifies with that key and fails, with one
//! line on standard error and exit status 1, when a byte was changed or the key differs.

use std::io::{Cursor, Read, Write};
use std::path::Path;
use std::process::{Command, Output};

use zhiwen_evidence::package::ProofFile;
use zhiwen_evidence::{write_package, CaptureRecord, EvidenceLog, FileEntry, LogKey, PackageFile, TreeHead};

fn zhiwen(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zhiwen")).arg("--data-dir").arg(data).args(args).output().expect("zhiwen runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A package signed by the data directory's key (read from its key file, as the capture
/// side will).
fn package(data: &Path) -> Vec<u8> {
    let key_text = std::fs::read_to_string(data.join("evidence/log.key")).expect("key file");
    let key = LogKey::from_secret_hex(&key_text).expect("key");
    let captured = vec![PackageFile {
        name: "capture/response.warc".into(),
        bytes: "WARC/1.1\r\n\r\n第一回".as_bytes().to_vec(),
    }];
    let record = CaptureRecord {
        format: CaptureRecord::FORMAT.into(),
        capture_id: "c-1".into(),
        match_id: Some(1),
        url: "http://pirate.example/1.html".into(),
        captured_at: "2026-11-25T12:00:00Z".into(),
        zhiwen_version: env!("CARGO_PKG_VERSION").into(),
        files: captured.iter().map(|f| FileEntry::of(&f.name, &f.bytes)).collect(),
        ..CaptureRecord::default()
    };
    let mut log = EvidenceLog::from_leaves([b"an earlier capture".to_vec()]);
    let leaf = record.to_leaf();
    let index = log.append(leaf.clone());
    let proof = ProofFile {
        leaf_index: index,
        tree_size: log.size(),
        inclusion_proof: log.inclusion_proof(index, log.size()).unwrap(),
    };
    let head = key.sign(TreeHead::new(&log.root(), 0));
    write_package(Cursor::new(Vec::new()), &key, &captured, &leaf, &proof, &head, &[], serde_json::json!({}))
        .unwrap()
        .into_inner()
}

#[test]
fn a_package_verifies_with_the_log_key_and_a_changed_byte_fails() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");

    let first = zhiwen(&data, &["evidence", "key"]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let public = text(&first.stdout).trim().to_owned();
    assert_eq!(public.len(), 64, "{public}");
    let again = zhiwen(&data, &["evidence", "key"]);
    assert_eq!(text(&again.stdout).trim(), public, "the key is made once");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.join("evidence/log.key")).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the key file is readable by its owner only: {mode:o}");
    }

    let good = dir.path().join("good.zip");
    std::fs::write(&good, package(&data)).unwrap();
    let ok = zhiwen(&data, &["evidence", "verify", good.to_str().unwrap(), "--public-key", &public]);
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    assert!(text(&ok.stdout).contains("verified: "), "{}", text(&ok.stdout));
    assert_eq!(text(&ok.stdout).lines().count(), 1);

    // Another key: refused.
    let other = LogKey::generate().public_key_hex();
    let wrong = zhiwen(&data, &["evidence", "verify", good.to_str().unwrap(), "--public-key", &other]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(text(&wrong.stderr).contains("NOT verified"), "{}", text(&wrong.stderr));

    // One changed byte of the captured page: refused, one line on stderr.
    let mut archive = zip::ZipArchive::new(Cursor::new(std::fs::read(&good).unwrap())).unwrap();
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for i in 0..archive.len() {
        let mut f = archive.by_index(i).unwrap();
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).unwrap();
        if f.name() == "capture/response.warc" {
            let last = bytes.len() - 1;
            bytes[last] ^= 1;
        }
        out.start_file(f.name(), zip::write::SimpleFileOptions::default()).unwrap();
        out.write_all(&bytes).unwrap();
    }
    let bad = dir.path().join("bad.zip");
    std::fs::write(&bad, out.finish().unwrap().into_inner()).unwrap();
    let refused = zhiwen(&data, &["evidence", "verify", bad.to_str().unwrap(), "--public-key", &public]);
    assert_eq!(refused.status.code(), Some(1));
    let err = text(&refused.stderr);
    assert!(err.contains("capture/response.warc was changed"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    // Not a package at all: a clear error, not a panic.
    let junk = dir.path().join("junk.zip");
    std::fs::write(&junk, b"not a zip").unwrap();
    let o = zhiwen(&data, &["evidence", "verify", junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("not a readable evidence package"), "{}", text(&o.stderr));
}

fn pirate_html(title: &str, text: &str, extra: &str) -> String {
    let paragraphs: String =
        text.split('\n').filter(|p| !p.trim().is_empty()).map(|p| format!("<p>{p}</p>\n")).collect();
    format!("<!doctype html><html><head><meta charset=utf-8><title>{title}</title></head><body><h1>{title}</h1>\n{paragraphs}<p>{extra}</p></body></html>")
}

fn ok(o: Output) -> String {
    assert!(o.status.success(), "failed: {}", text(&o.stderr));
    text(&o.stdout)
}

fn read_zip(path: &Path, name: &str) -> Vec<u8> {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(path).expect("open")).expect("zip");
    let mut out = Vec::new();
    zip.by_name(name).expect(name).read_to_end(&mut out).expect("read");
    out
}

/// The end-to-end check: crawl a local site, match, capture, export, verify; the
/// site changes the page, a capture on demand fetches it again, both captures stay and
/// verify, and the log's consistency proof between the two signed heads verifies.
#[test]
fn crawl_match_capture_export_verify_then_the_page_changes_and_both_captures_hold() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let work = zhiwen_testkit::corpus::lines(zhiwen_testkit::corpus::CLASSICS, 1).remove(0);
    let (title, body) = (work["title"].as_str().unwrap().to_owned(), work["text"].as_str().unwrap().to_owned());
    let works = dir.path().join("works.jsonl");
    std::fs::write(&works, format!("{}\n", serde_json::json!({"id": "w-1", "title": title, "text": body}))).unwrap();
    ok(zhiwen(&data, &["import", "works", works.to_str().unwrap(), "--owner", "holder-a"]));

    let site = zhiwen_testkit::site::Site::start();
    site.set("/book/1.html", 200, pirate_html(&title, &body, "本站最新章节"));
    let url = site.url("/book/1.html");
    let seeds = dir.path().join("seeds.txt");
    std::fs::write(&seeds, format!("{url}\n")).unwrap();
    ok(zhiwen(
        &data,
        &[
            "crawl",
            "--seeds",
            seeds.to_str().unwrap(),
            "--job",
            "t",
            "--allow-loopback",
            "--depth",
            "0",
            "--delay-ms",
            "0",
        ],
    ));
    // No browser here: the capture is the WARC of the fetch (the render has tests of its own).
    let matched = ok(zhiwen(&data, &["match", "--capture-allow-loopback", "--chromium", "/nonexistent/chromium"]));
    assert!(matched.contains("evidence: 1 captured, 0 failed; log of 1 captures"), "{matched}");

    let public = ok(zhiwen(&data, &["evidence", "key"])).trim().to_owned();
    let first = dir.path().join("first.zip");
    ok(zhiwen(&data, &["evidence", "export", "1", "--out", first.to_str().unwrap()]));
    let verified = ok(zhiwen(&data, &["evidence", "verify", first.to_str().unwrap(), "--public-key", &public]));
    assert!(verified.contains("verified: ") && verified.contains("inclusion (capture is leaf 0"), "{verified}");
    let warc = text(&read_zip(&first, "capture/page.warc"));
    assert!(warc.contains("WARC-Type: response") && warc.contains("WARC-IP-Address: 127.0.0.1"), "{warc}");
    assert!(warc.contains("本站最新章节") && !warc.contains("盗版更新"));
    let record: serde_json::Value = serde_json::from_slice(&read_zip(&first, "capture.json")).unwrap();
    assert_eq!(record["source"], "fetched");
    assert_eq!(record["final_url"], url.as_str());
    assert!(record["notes"][0].as_str().unwrap_or_default().contains("screenshot"), "{record}");
    let manifest: serde_json::Value = serde_json::from_slice(&read_zip(&first, "manifest.json")).unwrap();
    assert_eq!(manifest["details"]["work"]["external_id"], "w-1");
    assert!(manifest["details"]["passages"].as_array().is_some_and(|p| !p.is_empty()));
    for name in ["README.txt", "report.zh-CN.html", "report.en.html"] {
        assert!(!read_zip(&first, name).is_empty(), "{name}");
    }
    let head1 = dir.path().join("head1.json");
    std::fs::write(&head1, ok(zhiwen(&data, &["evidence", "head"]))).unwrap();

    // The pirate edits the page; a capture on demand keeps what it is now.
    site.set("/book/1.html", 200, pirate_html(&title, &body, "盗版更新：第二版"));
    let captured = ok(zhiwen(
        &data,
        &["evidence", "capture", "1", "--capture-allow-loopback", "--chromium", "/nonexistent/chromium"],
    ));
    assert!(captured.contains("leaf 1 of the evidence log"), "{captured}");
    let second = dir.path().join("second.zip");
    ok(zhiwen(&data, &["evidence", "export", "1", "--out", second.to_str().unwrap()]));
    assert!(text(&read_zip(&second, "capture/page.warc")).contains("盗版更新：第二版"));
    // The first capture is still there, unchanged, and still verifies (against the new head).
    let again = dir.path().join("first-again.zip");
    ok(zhiwen(&data, &["evidence", "export", "1", "--capture", "1", "--out", again.to_str().unwrap()]));
    assert_eq!(read_zip(&again, "capture/page.warc"), read_zip(&first, "capture/page.warc"));
    assert_eq!(read_zip(&again, "capture.json"), read_zip(&first, "capture.json"));
    for p in [&second, &again] {
        let v = ok(zhiwen(&data, &["evidence", "verify", p.to_str().unwrap(), "--public-key", &public]));
        assert!(v.contains("tree head of 2 leaves"), "{v}");
    }
    // The head kept after the first capture is a prefix of the later one.
    let proof = ok(zhiwen(&data, &["evidence", "consistency", "--from", "1"])).trim().to_owned();
    let v = ok(zhiwen(
        &data,
        &[
            "evidence",
            "verify",
            second.to_str().unwrap(),
            "--public-key",
            &public,
            "--earlier",
            head1.to_str().unwrap(),
            "--consistency",
            &proof,
        ],
    ));
    assert!(v.contains("consistency (the tree of 2 leaves extends the earlier one of 1)"), "{v}");
    // An export never overwrites a file.
    let o = zhiwen(&data, &["evidence", "export", "1", "--out", second.to_str().unwrap()]);
    assert!(!o.status.success() && text(&o.stderr).lines().count() == 1, "{}", text(&o.stderr));
    // A match without a capture, or none at all: one clear line.
    let o = zhiwen(&data, &["evidence", "export", "99", "--out", dir.path().join("x.zip").to_str().unwrap()]);
    assert!(!o.status.success() && text(&o.stderr).contains("match 99 not found"), "{}", text(&o.stderr));
}

/// The takedown issue's end-to-end check, as a user runs it: crawl three pirate pages,
/// match, confirm; draft a notice and send it to a real SMTP server (once, whatever the
/// retries); the site takes two pages down; the re-check marks exactly those two removed
/// with their time, the third is flagged after the escalation delay (a controlled
/// clock), and the statistics say so.
#[test]
fn a_notice_is_sent_once_two_pages_come_down_and_the_third_is_flagged() {
    use zhiwen_store::{Holder, HolderProfile, MatchQuery, NoticeState, RemovalState, ReviewStatus, Timestamp};
    let Some(smtp) = zhiwen_testkit::smtp::SmtpServer::start() else { return };
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let works = zhiwen_testkit::corpus::lines(zhiwen_testkit::corpus::CLASSICS, 3);
    let jsonl: String = works
        .iter()
        .enumerate()
        .map(|(i, w)| {
            format!("{}\n", serde_json::json!({"id": format!("w-{i}"), "title": w["title"], "text": w["text"]}))
        })
        .collect();
    let works_file = dir.path().join("works.jsonl");
    std::fs::write(&works_file, jsonl).unwrap();
    ok(zhiwen(&data, &["import", "works", works_file.to_str().unwrap(), "--owner", "holder-a"]));
    let html: Vec<String> = works
        .iter()
        .map(|w| pirate_html(w["title"].as_str().unwrap(), w["text"].as_str().unwrap(), "本站最新章节"))
        .collect();
    let site = zhiwen_testkit::site::Site::start();
    for (n, page) in html.into_iter().enumerate() {
        site.set(&format!("/book/{}.html", n + 1), 200, page);
    }
    let seeds = dir.path().join("seeds.txt");
    let urls: Vec<String> = (1..=3).map(|n| site.url(&format!("/book/{n}.html"))).collect();
    std::fs::write(&seeds, urls.join("\n")).unwrap();
    let crawl = ["crawl", "--seeds", seeds.to_str().unwrap(), "--job", "t", "--allow-loopback", "--depth", "0"];
    ok(zhiwen(&data, &[&crawl[..], &["--delay-ms", "0"]].concat()));
    ok(zhiwen(&data, &["match", "--capture-allow-loopback", "--chromium", "/nonexistent/chromium"]));

    // A reviewer confirms the three copies; the holder's profile says who it is.
    let rt = tokio::runtime::Runtime::new().unwrap();
    let stores = rt.block_on(zhiwen_store::open(&zhiwen_store::StoreConfig::embedded(&data))).unwrap();
    let matches = rt.block_on(stores.matches.list_matches(&MatchQuery::default(), 0, 100)).unwrap();
    assert_eq!(matches.len(), 3, "one match per pirate page");
    for m in &matches {
        rt.block_on(stores.matches.set_review(m.id, ReviewStatus::Confirmed, "reviewer", None, Timestamp::now()))
            .unwrap();
    }
    let mut holder = Holder::empty("holder-a");
    holder.profile = HolderProfile {
        legal_name: "某某文学有限公司".into(),
        contact_person: "张三".into(),
        address: "北京市海淀区某路1号".into(),
        phone: "010-12345678".into(),
        email: "legal@holder-a.example".into(),
    };
    rt.block_on(stores.cases.put_holder(&holder)).unwrap();
    drop(stores);

    let with_mail = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_zhiwen"))
            .arg("--data-dir")
            .arg(&data)
            .args(args)
            .env("ZHIWEN_SMTP_URL", smtp.url())
            .output()
            .expect("zhiwen runs")
    };
    let drafted = ok(with_mail(&[
        "notice",
        "draft",
        "--owner",
        "holder-a",
        "--site",
        "127.0.0.1",
        "--capture-allow-loopback",
        "--chromium",
        "/nonexistent/chromium",
    ]));
    assert!(drafted.contains("ZW-N-000001\tdraft\tholder-a\t127.0.0.1\t3 matches"), "{drafted}");
    assert!(drafted.contains("evidence-match-"), "the packages are attached: {drafted}");
    let sent = ok(with_mail(&["notice", "send", "1", "--to", "abuse@pirate.example"]));
    assert!(sent.contains("\tsent\t"), "{sent}");
    let again = ok(with_mail(&["notice", "send", "1", "--to", "abuse@pirate.example"]));
    assert!(again.contains("\tsent\t"), "{again}");
    assert_eq!(smtp.messages().len(), 1, "sent exactly once");
    let listed = ok(zhiwen(&data, &["notice", "list"]));
    assert_eq!(listed.lines().count(), 1, "{listed}");

    // Two pages come down: one 404, one replaced by unrelated text.
    let t0 = Timestamp::now();
    site.remove("/book/1.html");
    site.set("/book/2.html", 200, pirate_html("公告", "本站已删除此书，敬请谅解。欢迎阅读其他作品。", ""));
    let at = Timestamp(t0.0 + 3_600_000);
    let report = ok(zhiwen(&data, &["recheck", "--capture-allow-loopback", "--now", &at.rfc3339(), "--json"]));
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!((report["removed"].as_u64(), report["up"].as_u64()), (Some(2), Some(1)), "{report}");
    // Eight days later the third page is still up: flagged once for a second notice.
    let later = Timestamp(t0.0 + 8 * 86_400_000);
    let report = ok(zhiwen(&data, &["recheck", "--capture-allow-loopback", "--now", &later.rfc3339(), "--json"]));
    let report: serde_json::Value = serde_json::from_str(&report).unwrap();
    assert_eq!(report["flagged"].as_array().map(Vec::len), Some(1), "{report}");

    let stores = rt.block_on(zhiwen_store::open(&zhiwen_store::StoreConfig::embedded(&data))).unwrap();
    let notice = rt.block_on(stores.cases.get_notice(1)).unwrap().unwrap();
    assert_eq!(notice.state, NoticeState::Sent);
    let mut removed = Vec::new();
    for &p in &notice.page_ids {
        let w = rt.block_on(stores.cases.get_watch(p)).unwrap().expect("watched");
        if w.state == RemovalState::Removed {
            assert_eq!(w.removed_at, Some(at), "removed at the re-check's time");
            removed.push(w.url.clone());
        } else {
            assert!(w.flagged_at.is_some() && w.url == urls[2], "{w:?}");
        }
    }
    removed.sort();
    assert_eq!(removed, urls[..2].to_vec());
    let stats = rt.block_on(zhiwen_capture::recheck::removal_stats(&stores, None, later)).unwrap();
    let t = &stats.total;
    assert_eq!((t.pages_noticed, t.pages_removed, t.pages_still_up, t.pages_flagged), (3, 2, 1, 1), "{stats:?}");
}
