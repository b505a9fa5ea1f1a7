//! `import pages`: JSONL, folders of saved HTML, WARC and WARC.gz.

use std::io::Write;

use zhiwen_ingest::{import_pages, ImportOptions, NoProgress};

use crate::common::{self, classics, pirate_page, probe};

#[tokio::test]
async fn jsonl_pages_deduplicated_by_url_and_mirrors_stored_under_their_own_url() {
    let st = common::store().await;
    let ch = classics(3);
    let ads = common::ad_lines();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("pages.jsonl");
    let html = pirate_page(&ch[0].title, &ch[0].text, &ads, &[], None);
    let lines = [
        serde_json::json!({"url": "HTTP://Pirate.Example:80/book/1.html?utm_source=x#top", "html": html, "fetched_at": "2024-05-01T12:00:00Z", "status": 200}).to_string(),
        serde_json::json!({"url": "http://pirate.example/book/2.txt", "text": ch[1].text, "fetched_at": 1714564800}).to_string(),
        serde_json::json!({"url": "http://mirror.example/copy.html", "html": html}).to_string(),
        serde_json::json!({"url": "ftp://pirate.example/x", "text": "内容"}).to_string(),
        serde_json::json!({"html": "<p>没有网址</p>"}).to_string(),
        serde_json::json!({"url": "http://pirate.example/bad-time", "text": "内容", "fetched_at": "yesterday"}).to_string(),
        "[1,2".to_owned(),
    ];
    std::fs::write(&path, lines.join("\n")).unwrap();
    let opts = ImportOptions::default();
    let s = import_pages(&st.stores, std::slice::from_ref(&path), &opts, &NoProgress).await.unwrap();
    println!("{s}");
    // The mirror (same text, another URL) is a URL of its own to take down.
    assert_eq!(s.imported, 3, "{s}");
    let mirror = st.stores.pages.find_page("http://mirror.example/copy.html").await.unwrap().expect("mirror stored");
    assert!(mirror.text.contains(&probe(&ch[0].text)));
    assert_eq!(s.rejected.len(), 4, "{s}");
    assert!(s.rejected.iter().any(|r| r.reason.contains("http")));
    assert!(s.rejected.iter().any(|r| r.reason.contains("url")));
    assert!(s.rejected.iter().any(|r| r.reason.contains("RFC 3339")));
    assert!(s.rejected.iter().any(|r| r.reason.contains("JSON")));
    let p = st.stores.pages.find_page("http://pirate.example/book/1.html").await.unwrap().expect("normalised URL");
    assert!(p.text.contains(&probe(&ch[0].text)));
    assert_eq!(p.http_status, Some(200));
    assert_eq!(p.fetched_at_or_first(), 1714564800000);
    // How each body is read is decided here, once, and stored with the page.
    assert_eq!(p.format, Some(zhiwen_store::PageFormat::Html));
    let txt = st.stores.pages.find_page("http://pirate.example/book/2.txt").await.unwrap().expect("text page");
    assert_eq!(txt.format, Some(zhiwen_store::PageFormat::Text));
    // The stored text is the canonical text of the body, under the tag of its making: a
    // matcher with the same tag analyses the page from it.
    let params = zhiwen_core::params::CanonParams::default();
    for page in [&p, &txt] {
        assert_eq!(page.canon_tag, Some(params.tag()));
        let c = zhiwen_core::canon::canonicalize_with_hint(
            &page.body,
            if page.format == Some(zhiwen_store::PageFormat::Html) {
                zhiwen_core::canon::InputFormat::Html
            } else {
                zhiwen_core::canon::InputFormat::Text
            },
            page.charset.as_deref(),
            &params,
        )
        .unwrap();
        assert_eq!(c.text(), page.text);
    }
    assert_eq!(s.changed.pages.len(), 3);

    let s = import_pages(&st.stores, &[path], &opts, &NoProgress).await.unwrap();
    assert_eq!((s.imported, s.updated, s.unchanged), (0, 0, 3), "{s}");
    assert!(s.changed.pages.is_empty());

    // A later run: the same text under a new URL is stored too.
    let later = dir.path().join("later.jsonl");
    let lines = [
        serde_json::json!({"url": "http://another-mirror.example/ch1.html", "html": html}).to_string(),
        serde_json::json!({"url": "http://pirate.example/book/3.txt", "text": ch[2].text}).to_string(),
    ];
    std::fs::write(&later, lines.join("\n")).unwrap();
    let s = import_pages(&st.stores, &[later], &opts, &NoProgress).await.unwrap();
    assert_eq!(s.imported, 2, "{s}");
    assert!(st.stores.pages.find_page("http://another-mirror.example/ch1.html").await.unwrap().is_some());
    assert_eq!(st.stores.pages.count_pages().await.unwrap(), 5);
}

trait FirstFetched {
    fn fetched_at_or_first(&self) -> i64;
}

impl FirstFetched for zhiwen_store::Page {
    fn fetched_at_or_first(&self) -> i64 {
        self.first_fetched_at.0
    }
}

#[tokio::test]
async fn folders_of_saved_pages() {
    let st = common::store().await;
    let ch = classics(3);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("saved");
    std::fs::create_dir_all(root.join("site")).unwrap();
    let saved = format!(
        "<!-- saved from url=(0036)http://pirate.example/book/1.html -->\n{}",
        pirate_page(&ch[0].title, &ch[0].text, &[], &[], Some("gbk"))
    );
    std::fs::write(root.join("one.html"), encoding_rs::GBK.encode(&saved).0).unwrap();
    let canonical = pirate_page(&ch[1].title, &ch[1].text, &[], &[], None)
        .replace("</head>", "<link rel=\"canonical\" href=\"https://pirate.example/book/2.html\"></head>");
    std::fs::write(root.join("two.htm"), canonical).unwrap();
    std::fs::write(root.join("site/three.html"), pirate_page(&ch[2].title, &ch[2].text, &[], &[], None)).unwrap();
    std::fs::write(root.join("notes.txt"), "not a page").unwrap();

    let s =
        import_pages(&st.stores, std::slice::from_ref(&root), &ImportOptions::default(), &NoProgress).await.unwrap();
    assert_eq!(s.imported, 2, "{s}");
    assert_eq!(s.skipped, 1);
    assert_eq!(s.rejected.len(), 1);
    assert!(s.rejected[0].item.ends_with("three.html") && s.rejected[0].reason.contains("no URL"), "{s}");
    let one = st.stores.pages.find_page("http://pirate.example/book/1.html").await.unwrap().unwrap();
    assert_eq!(one.charset.as_deref(), Some("GBK"));
    assert!(one.text.contains(&probe(&ch[0].text)));

    let opts = ImportOptions { base_url: Some("http://saved.example/".into()), ..Default::default() };
    let s = import_pages(&st.stores, &[root], &opts, &NoProgress).await.unwrap();
    assert_eq!((s.imported, s.unchanged), (1, 2), "{s}");
    assert!(st.stores.pages.find_page("http://saved.example/site/three.html").await.unwrap().is_some());
}

fn warc_record(kind: &str, uri: &str, content_type: &str, block: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2024-03-01T10:00:00Z\r\n\
         WARC-Record-ID: <urn:uuid:{:08x}-0000-0000-0000-000000000000>\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        block.len() * 31 + kind.len(),
        block.len()
    )
    .into_bytes();
    r.extend_from_slice(block);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

fn http(status: &str, ctype: &str, body: &[u8], chunked: bool) -> Vec<u8> {
    let mut r = format!("HTTP/1.1 {status}\r\nContent-Type: {ctype}\r\n").into_bytes();
    if chunked {
        r.extend_from_slice(b"Transfer-Encoding: chunked\r\n\r\n");
        for c in body.chunks(1000) {
            r.extend_from_slice(format!("{:x}\r\n", c.len()).as_bytes());
            r.extend_from_slice(c);
            r.extend_from_slice(b"\r\n");
        }
        r.extend_from_slice(b"0\r\n\r\n");
    } else {
        r.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
        r.extend_from_slice(body);
    }
    r
}

fn sample_warc() -> Vec<Vec<u8>> {
    let ch = classics(3);
    let gbk_page = encoding_rs::GBK.encode(&pirate_page(&ch[0].title, &ch[0].text, &[], &[], None)).0.into_owned();
    vec![
        warc_record("warcinfo", "", "application/warc-fields", b"software: test\r\n"),
        warc_record(
            "request",
            "http://pirate.example/book/1.html",
            "application/http; msgtype=request",
            b"GET /book/1.html HTTP/1.1\r\nHost: pirate.example\r\n\r\n",
        ),
        warc_record(
            "response",
            "http://pirate.example/book/1.html",
            "application/http; msgtype=response",
            &http("200 OK", "text/html; charset=gbk", &gbk_page, true),
        ),
        warc_record(
            "response",
            "http://pirate.example/cover.jpg",
            "application/http; msgtype=response",
            &http("200 OK", "image/jpeg", b"\xff\xd8\xff\xe0", false),
        ),
        warc_record(
            "response",
            "http://pirate.example/gone.html",
            "application/http; msgtype=response",
            &http("404 Not Found", "text/html", b"<p>gone</p>", false),
        ),
        warc_record(
            "resource",
            "http://pirate.example/book/2.html",
            "text/html; charset=utf-8",
            pirate_page(&ch[1].title, &ch[1].text, &[], &[], None).as_bytes(),
        ),
        warc_record(
            "response",
            "http://pirate.example/garbled",
            "application/http; msgtype=response",
            b"this is not HTTP at all",
        ),
    ]
}

#[tokio::test]
async fn warc_and_warc_gz() {
    let st = common::store().await;
    let ch = classics(3);
    let dir = tempfile::tempdir().unwrap();
    let records = sample_warc();
    let plain = dir.path().join("crawl.warc");
    std::fs::write(&plain, records.concat()).unwrap();

    let s =
        import_pages(&st.stores, std::slice::from_ref(&plain), &ImportOptions::default(), &NoProgress).await.unwrap();
    println!("{s}");
    assert_eq!(s.imported, 2, "{s}");
    assert_eq!(s.skipped, 4, "warcinfo, request, image, 404: {s}");
    assert_eq!(s.rejected.len(), 1, "{s}");
    assert!(
        s.rejected[0].item.contains("crawl.warc#7") && s.rejected[0].reason.contains("not an HTTP response"),
        "{s}"
    );
    let p = st.stores.pages.find_page("http://pirate.example/book/1.html").await.unwrap().unwrap();
    assert_eq!(p.charset.as_deref(), Some("GBK"));
    assert!(p.text.contains(&probe(&ch[0].text)));
    assert_eq!(p.first_fetched_at.day(), "2024-03-01");
    assert_eq!(p.http_status, Some(200));

    // Common Crawl style: each record its own gzip member; plus a truncated record at the
    // end, reported as corrupt after everything before it was imported.
    let gz = dir.path().join("crawl.warc.gz");
    let mut bytes = Vec::new();
    for r in &records {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        e.write_all(r).unwrap();
        bytes.extend(e.finish().unwrap());
    }
    let ch3 = pirate_page(&ch[2].title, &ch[2].text, &[], &[], None);
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(&warc_record("resource", "http://pirate.example/book/3.html", "text/html", ch3.as_bytes())).unwrap();
    let mut broken = warc_record("resource", "http://pirate.example/book/4.html", "text/html", ch3.as_bytes());
    broken.truncate(broken.len() / 2);
    e.write_all(&broken).unwrap();
    bytes.extend(e.finish().unwrap());
    std::fs::write(&gz, bytes).unwrap();
    let s = import_pages(&st.stores, &[gz], &ImportOptions::default(), &NoProgress).await.unwrap();
    println!("{s}");
    assert_eq!((s.imported, s.unchanged), (1, 2), "{s}");
    assert_eq!(s.rejected.len(), 2, "{s}");
    assert!(s.rejected.iter().any(|r| r.reason.contains("the file ends inside the record")), "{s}");
    assert!(s.skipped_bytes > 0, "{s}");
    assert!(st.stores.pages.find_page("http://pirate.example/book/3.html").await.unwrap().is_some());
}
