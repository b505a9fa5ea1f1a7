//! Hostile inputs through the `zhiwen` binary, as a user meets them: a copy with a few bad
//! bytes, a WARC file with a corrupt record in the middle, a zip bomb sold as an EPUB, a
//! page too large to keep whole, and the import bounds set by flag and environment.
//! Every input is built here; the only text read is the bundled sample.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn zhiwen(data: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut c = Command::new(env!("CARGO_BIN_EXE_zhiwen"));
    c.args(args).arg("--data-dir").arg(data).current_dir(repo()).env_remove("ZHIWEN_CONFIG");
    for (k, v) in env {
        c.env(k, v);
    }
    c.output().expect("zhiwen runs")
}

fn out(o: &Output) -> String {
    format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr))
}

fn sample() -> String {
    std::fs::read_to_string(repo().join("samples/hongloumeng-01.txt")).expect("bundled sample")
}

fn html(body: &str) -> String {
    let paras: String = body.lines().map(|l| format!("<p>{l}</p>\n")).collect();
    format!("<!DOCTYPE html><html><head><title>t</title></head><body>{paras}</body></html>")
}

#[test]
fn a_copy_with_one_byte_in_300_overwritten_is_still_a_copy() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut bytes = sample().into_bytes();
    for i in (150..bytes.len()).step_by(300) {
        bytes[i] = 0xFF;
    }
    let copy = dir.path().join("copy.txt");
    std::fs::write(&copy, bytes).expect("write");
    let o = zhiwen(dir.path(), &["compare", "samples/hongloumeng-01.txt", copy.to_str().expect("path"), "--json"], &[]);
    assert!(o.status.success(), "{}", out(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).expect("JSON");
    assert_eq!(v["b"]["charset"], "UTF-8", "{v}");
    assert_eq!(v["verdict"]["kind"], "near_duplicate", "{}", v["verdict"]);
}

fn warc_record(uri: &str, block: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "WARC/1.0\r\nWARC-Type: resource\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2024-03-01T10:00:00Z\r\n\
         Content-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\r\n",
        block.len()
    )
    .into_bytes();
    r.extend_from_slice(block);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

#[test]
fn a_corrupt_warc_record_is_skipped_and_the_records_after_it_imported() {
    let dir = tempfile::tempdir().expect("tempdir");
    let text: Vec<char> = sample().chars().collect();
    let part = |i: usize| html(&text[i * 2000..(i + 1) * 2000].iter().collect::<String>());
    let mut bad = warc_record("http://hostile.example/bad", part(1).as_bytes());
    let at = String::from_utf8_lossy(&bad).find("Content-Length: ").expect("header") + 16;
    bad.insert(at, b'7'); // a length far past the record
    let warc = dir.path().join("crawl.warc");
    let bytes = [
        warc_record("http://hostile.example/one", part(0).as_bytes()),
        bad.clone(),
        warc_record("http://hostile.example/two", part(2).as_bytes()),
    ]
    .concat();
    std::fs::write(&warc, bytes).expect("write");
    let o = zhiwen(dir.path(), &["import", "pages", warc.to_str().expect("path")], &[]);
    let o = out(&o);
    assert!(o.contains("imported 2,") && o.contains("rejected 1"), "{o}");
    assert!(o.contains(&format!("corrupt bytes skipped {}", bad.len())), "{o}");
    assert!(o.contains("crawl.warc#2: corrupt record: Content-Length"), "{o}");
}

/// An EPUB whose `n` spine documents are one compressed entry copied `n` times.
fn epub(n: usize, entry_bytes: usize) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let o = SimpleFileOptions::default();
    z.start_file("META-INF/container.xml", o).expect("zip");
    z.write_all(br#"<container><rootfiles><rootfile full-path="content.opf"/></rootfiles></container>"#).expect("zip");
    z.start_file("c0.xhtml", o).expect("zip");
    let mut doc = b"<html><body><p>".to_vec();
    doc.extend(std::iter::repeat_n("红".as_bytes(), entry_bytes / 3).flatten());
    doc.extend_from_slice(b"</p></body></html>");
    z.write_all(&doc).expect("zip");
    let (mut manifest, mut spine) = (String::new(), String::new());
    for i in 0..n {
        if i > 0 {
            z.deep_copy_file("c0.xhtml", &format!("c{i}.xhtml")).expect("zip");
        }
        manifest.push_str(&format!(r#"<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>"#));
        spine.push_str(&format!(r#"<itemref idref="c{i}"/>"#));
    }
    z.start_file("content.opf", o).expect("zip");
    write!(z, "<package><manifest>{manifest}</manifest><spine>{spine}</spine></package>").expect("zip");
    z.finish().expect("zip").into_inner()
}

#[test]
fn a_zip_bomb_is_refused_at_once_and_the_bounds_follow_flags_and_environment() {
    let dir = tempfile::tempdir().expect("tempdir");
    // The issue's bomb: 300 entries of 6 MiB (1.8 GB) in a 2 MB EPUB.
    let bomb = dir.path().join("bomb.epub");
    std::fs::write(&bomb, epub(300, 6 << 20)).expect("write");
    let o = zhiwen(dir.path(), &["import", "works", bomb.to_str().expect("path"), "--owner", "o"], &[]);
    let text = out(&o);
    // Refused, so the import fails: exit status 1, one line on stderr.
    assert_eq!(o.status.code(), Some(1), "{text}");
    assert_eq!(String::from_utf8_lossy(&o.stderr).trim_end().lines().count(), 1, "{text}");
    assert!(text.contains("imported 0,") && text.contains("rejected 1") && text.contains("zip bomb"), "{text}");

    // A small, ordinary EPUB of 8 documents: refused with 5 entries allowed, by flag or by
    // environment variable; imported with the defaults.
    let small = dir.path().join("small.epub");
    std::fs::write(&small, epub(8, 3000)).expect("write");
    let path = small.to_str().expect("path");
    let o = zhiwen(dir.path(), &["import", "works", path, "--owner", "o", "--max-archive-entries", "5"], &[]);
    assert!(out(&o).contains("10 entries, more than the bound of 5"), "{}", out(&o));
    let o =
        zhiwen(dir.path(), &["import", "works", path, "--owner", "o"], &[("ZHIWEN_IMPORT_MAX_ARCHIVE_ENTRIES", "5")]);
    assert!(out(&o).contains("more than the bound of 5"), "{}", out(&o));
    let o = zhiwen(dir.path(), &["import", "works", path, "--owner", "o"], &[]);
    assert!(out(&o).contains("imported 1,"), "{}", out(&o));
}

#[test]
fn a_page_over_the_page_bound_is_cut_and_says_so() {
    let dir = tempfile::tempdir().expect("tempdir");
    let body = html(&sample().repeat(20)); // about 400 KB
    let line = serde_json::json!({"url": "http://hostile.example/long", "html": body}).to_string();
    let jsonl = dir.path().join("pages.jsonl");
    std::fs::write(&jsonl, line).expect("write");
    let o = zhiwen(dir.path(), &["import", "pages", jsonl.to_str().expect("path"), "--max-page-kb", "64"], &[]);
    let text = out(&o);
    assert!(text.contains("imported 1,"), "{text}");
    assert!(text.contains("pages.jsonl:1: page of") && text.contains("cut at 6553"), "{text}");
}
