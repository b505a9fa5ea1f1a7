//! Hostile inputs: every one is built here, in code (the only text read from disk is the
//! bundled public-domain sample under `samples/`). Zip and gzip bombs, lying headers,
//! truncations, corrupt WARC records and gzip members, mixed and broken encodings, a
//! 50 MB page, broken JSONL. Each import must end with a clear reason for what it
//! refused, stay within its bounds (asserted on what is stored and reported, not on
//! time), and keep every valid record around the bad ones.

use std::io::Write;
use std::path::{Path, PathBuf};

use zhiwen_core::canon::{self, InputFormat};
use zhiwen_core::params::CanonParams;
use zhiwen_ingest::{import_pages, import_works, ImportLimits, ImportOptions, ImportSummary, NoProgress};
use zip::write::SimpleFileOptions;

use crate::common;

/// The bundled sample chapter (红楼梦 第一回, public domain).
fn sample() -> String {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples/hongloumeng-01.txt");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A passage of the sample that identifies it after canonicalisation: the first run of
/// 12 Han characters at or after character `from`.
fn probe_at(text: &str, from: usize) -> String {
    let chars: Vec<char> = text.chars().collect();
    let han = |c: char| ('\u{4e00}'..='\u{9fff}').contains(&c);
    (from..chars.len() - 12)
        .find(|&i| chars[i..i + 12].iter().all(|&c| han(c)))
        .map(|i| chars[i..i + 12].iter().collect())
        .expect("a run of Han characters")
}

/// Share of 20 passages of 8 Han characters, spread over `original`'s canonical text, that
/// `stored` contains: near 1 for a copy with a few bad bytes, near 0 for mojibake.
fn share_found(stored: &str, original: &[u8]) -> f64 {
    let canonical = canon::canonicalize(original, InputFormat::Auto, &CanonParams::default()).expect("canonical");
    let chars: Vec<char> = canonical.text().chars().collect();
    let han = |c: char| ('\u{4e00}'..='\u{9fff}').contains(&c);
    let probes: Vec<String> = (0..20)
        .filter_map(|k| {
            (k * chars.len() / 20..chars.len().saturating_sub(8))
                .find(|&i| chars[i..i + 8].iter().all(|&c| han(c)))
                .map(|i| chars[i..i + 8].iter().collect())
        })
        .collect();
    probes.iter().filter(|p| stored.contains(p.as_str())).count() as f64 / probes.len().max(1) as f64
}

/// The first `n` characters of `text`.
fn head(text: &str, n: usize) -> String {
    text.chars().take(n).collect()
}

fn html(title: &str, body: &str, charset: Option<&str>) -> String {
    let meta = charset.map(|c| format!("<meta charset=\"{c}\">")).unwrap_or_default();
    let paras: String =
        body.lines().filter(|l| !l.trim().is_empty()).map(|l| format!("<p>{}</p>\n", l.trim())).collect();
    format!("<!DOCTYPE html><html><head>{meta}<title>{title}</title></head><body><div id=content>{paras}</div></body></html>")
}

fn opts(limits: ImportLimits) -> ImportOptions {
    ImportOptions { limits, base_url: Some("http://hostile.example/".into()), ..ImportOptions::default() }
}

fn reason<'s>(s: &'s ImportSummary, item_ends: &str) -> &'s str {
    s.rejected
        .iter()
        .find(|r| r.item.ends_with(item_ends) || r.item.contains(&format!("{item_ends} ")))
        .map(|r| r.reason.as_str())
        .unwrap_or_else(|| panic!("no rejection of {item_ends}: {s}"))
}

// ---------------------------------------------------------------------------------
// EPUB / zip

const CONTAINER: &[u8] = br#"<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#;

/// An EPUB with `documents` (name under OEBPS/, bytes) and a spine naming `spine`
/// (indices into `documents`, repeats allowed); `extra` entries are added unlisted.
fn epub(documents: &[(String, Vec<u8>)], spine: &[usize], extra: usize) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    let deflated = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated);
    z.start_file("mimetype", stored).unwrap();
    z.write_all(b"application/epub+zip").unwrap();
    z.start_file("META-INF/container.xml", deflated).unwrap();
    z.write_all(CONTAINER).unwrap();
    let mut manifest = String::new();
    for (i, (name, bytes)) in documents.iter().enumerate() {
        manifest.push_str(&format!(r#"<item id="d{i}" href="{name}" media-type="application/xhtml+xml"/>"#));
        z.start_file(format!("OEBPS/{name}"), deflated).unwrap();
        z.write_all(bytes).unwrap();
    }
    let spine: String = spine.iter().map(|i| format!(r#"<itemref idref="d{i}"/>"#)).collect();
    z.start_file("OEBPS/content.opf", deflated).unwrap();
    write!(z, r#"<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>红楼梦</dc:title></metadata><manifest>{manifest}</manifest><spine>{spine}</spine></package>"#).unwrap();
    for i in 0..extra {
        z.start_file(format!("OEBPS/extra/{i}.css"), stored).unwrap();
        z.write_all(b"p{}").unwrap();
    }
    z.finish().unwrap().into_inner()
}

fn chapter_doc(title: &str, text: &str) -> Vec<u8> {
    html(title, text, Some("utf-8")).into_bytes()
}

/// XHTML of about `bytes` bytes that compresses about a thousand times.
fn bomb_doc(bytes: usize) -> Vec<u8> {
    let mut doc = b"<?xml version=\"1.0\" encoding=\"utf-8\"?><html><body><p>".to_vec();
    doc.extend(std::iter::repeat_n("啊".as_bytes(), bytes / 3).flatten());
    doc.extend_from_slice(b"</p></body></html>");
    doc
}

/// The issue's bomb: a 2 MB EPUB whose 300 spine documents inflate to 6 MiB each
/// (1.8 GB). It used to take about a minute and 1.4 GB before it was refused.
#[tokio::test]
async fn an_epub_of_300_entries_of_6_mib_is_refused_before_inflating() {
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let o = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated).large_file(false);
    z.start_file("META-INF/container.xml", o).unwrap();
    z.write_all(CONTAINER).unwrap();
    z.start_file("OEBPS/c0.xhtml", o).unwrap();
    z.write_all(&bomb_doc(6 << 20)).unwrap();
    let mut manifest = String::new();
    let mut spine = String::new();
    for i in 0..300 {
        if i > 0 {
            // Copies the compressed bytes: the test itself never deflates 1.8 GB.
            z.deep_copy_file("OEBPS/c0.xhtml", &format!("OEBPS/c{i}.xhtml")).unwrap();
        }
        manifest.push_str(&format!(r#"<item id="c{i}" href="c{i}.xhtml" media-type="application/xhtml+xml"/>"#));
        spine.push_str(&format!(r#"<itemref idref="c{i}"/>"#));
    }
    z.start_file("OEBPS/content.opf", o).unwrap();
    write!(z, r#"<package><manifest>{manifest}</manifest><spine>{spine}</spine></package>"#).unwrap();
    let bytes = z.finish().unwrap().into_inner();
    assert!(bytes.len() < 10 << 20, "{} bytes", bytes.len());

    let st = common::store().await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("bomb.epub");
    std::fs::write(&path, &bytes).unwrap();
    let s = import_works(&st.stores, &[path], "holder", &ImportOptions::default(), &NoProgress).await.unwrap();
    println!("{s}");
    assert_eq!((s.imported, s.rejected.len()), (0, 1), "{s}");
    let why = reason(&s, "bomb.epub");
    // Refused on the declared sizes (300 x 6 MiB over the 256 MiB bound, or its ratio).
    assert!(why.contains("declare") && why.contains("zip bomb"), "{why}");
}

#[tokio::test]
async fn epub_bombs_of_every_shape_are_refused_and_good_epubs_kept() {
    let text = sample();
    let (first, second) = text.split_at(text.char_indices().nth(text.chars().count() / 2).unwrap().0);
    let good = epub(
        &[("a.xhtml".into(), chapter_doc("上", first)), ("b.xhtml".into(), chapter_doc("下", second))],
        &[0, 1],
        0,
    );
    let limits = ImportLimits {
        max_archive_entries: 50,
        max_archive_bytes: 4 << 20,
        max_entry_bytes: 2 << 20,
        max_ratio: 50,
        ..ImportLimits::default()
    };
    let mut files: Vec<(&str, Vec<u8>)> = vec![("good.epub", good)];
    // Too many entries (the central directory alone is refused).
    files.push(("entries.epub", epub(&[("a.xhtml".into(), chapter_doc("上", first))], &[0], 60)));
    // One entry over the per-entry bound (by its declared size).
    let big: Vec<u8> = first.repeat(250).into_bytes();
    files.push((
        "entry.epub",
        epub(&[("a.xhtml".into(), chapter_doc("上", &String::from_utf8(big).unwrap()))], &[0], 0),
    ));
    // One entry at a ratio of about a thousand.
    files.push(("ratio.epub", epub(&[("a.xhtml".into(), bomb_doc(1_500_000))], &[0], 0)));
    // A spine that names one legitimate document again and again, past the total bound.
    let doc = chapter_doc("上", &first.repeat(9));
    assert!(50 * doc.len() > 4 << 20 && doc.len() < 2 << 20);
    files.push(("spine.epub", epub(&[("a.xhtml".into(), doc)], &[0; 50], 0)));
    // A spine naming one small document more times than the archive may hold entries (its
    // documents were read one by one, and their text counted again for each: a spine of
    // 40,000 took 38 s).
    files.push(("refs.epub", epub(&[("a.xhtml".into(), chapter_doc("上", "短"))], &[0; 60], 0)));
    // A zip inside: never opened, refused as binary.
    let inner = epub(&[("a.xhtml".into(), bomb_doc(1 << 20))], &[0], 0);
    files.push(("nested.epub", epub(&[("a.xhtml".into(), inner)], &[0], 0)));
    // Lying headers: the entry declares 1,000 bytes but inflates to 1.5 MB.
    files.push(("liar.epub", lie_about_sizes(epub(&[("a.xhtml".into(), bomb_doc(1_500_000))], &[0], 0), 1000)));
    // Cut in half; garbage with a zip signature.
    let mut cut = epub(&[("a.xhtml".into(), chapter_doc("上", first))], &[0], 0);
    cut.truncate(cut.len() / 2);
    files.push(("cut.epub", cut));
    files.push(("garbage.epub", b"PK\x03\x04\x14\x00 not really a zip at all".to_vec()));

    let st = common::store().await;
    let dir = tempfile::tempdir().unwrap();
    for (name, bytes) in &files {
        std::fs::write(dir.path().join(name), bytes).unwrap();
    }
    let s = import_works(&st.stores, &[dir.path().to_path_buf()], "holder", &opts(limits), &NoProgress).await.unwrap();
    println!("{s}");
    assert_eq!(s.imported, 1, "{s}");
    assert_eq!(s.rejected.len(), files.len() - 1, "{s}");
    let w = st.stores.works.find_work("holder", "good").await.unwrap().expect("the good EPUB");
    assert!(w.text.contains(&probe_at(&text, 100)), "the good EPUB's text");
    assert!(reason(&s, "entries.epub").contains("64 entries, more than the bound of 50"));
    assert!(reason(&s, "entry.epub").contains("more than the bound of 2097152 bytes"));
    assert!(reason(&s, "ratio.epub").contains("more than 50 times"));
    assert!(reason(&s, "spine.epub").contains("more than the bound of 4194304 bytes"));
    assert!(reason(&s, "refs.epub").contains("spine lists 60 documents, more than the bound of 50"));
    assert!(reason(&s, "nested.epub").contains("ZIP"));
    let liar = reason(&s, "liar.epub");
    assert!(liar.contains("1000") || liar.contains("checksum") || liar.contains("size"), "{liar}");
    assert!(reason(&s, "cut.epub").contains("not a valid EPUB"));
    assert!(reason(&s, "garbage.epub").contains("not a valid EPUB"));
}

/// Rewrite every uncompressed-size field of a zip (local headers and central directory)
/// to `size`, as a hostile archive would.
fn lie_about_sizes(mut zip: Vec<u8>, size: u32) -> Vec<u8> {
    let mut i = 0;
    while i + 46 <= zip.len() {
        let at = match &zip[i..i + 4] {
            b"PK\x03\x04" => i + 22,
            b"PK\x01\x02" => i + 24,
            _ => {
                i += 1;
                continue;
            }
        };
        let compressed = u32::from_le_bytes(zip[at - 4..at].try_into().unwrap());
        if compressed > 1000 {
            zip[at..at + 4].copy_from_slice(&size.to_le_bytes());
        }
        i += 4;
    }
    zip
}

// ---------------------------------------------------------------------------------
// Encodings

/// `bytes` with one byte in `every` overwritten by 0xFF.
fn overwrite_every(bytes: &[u8], every: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for i in (every / 2..out.len()).step_by(every) {
        out[i] = 0xFF;
    }
    out
}

/// `n` two-byte characters of GBK or Big5 text lose their trail byte to 0xFF.
fn break_trail_bytes(bytes: &[u8], n: usize) -> Vec<u8> {
    let mut out = bytes.to_vec();
    for k in 1..=n {
        let mut i = k * out.len() / (n + 1);
        // After a tag's '>' (never a trail byte in GBK or Big5): the start of a character.
        while i + 1 < out.len() && (out[i - 1] != b'>' || out[i].is_ascii()) {
            i += 1;
        }
        if i + 1 < out.len() {
            out[i + 1] = 0xFF;
        }
    }
    out
}

#[tokio::test]
async fn mixed_and_broken_encodings_decode_in_their_own_charset() {
    let text = sample();
    let (first, rest) = text.split_at(text.char_indices().nth(2000).unwrap().0);
    let dir = tempfile::tempdir().unwrap();
    let pages = dir.path().join("pages");
    std::fs::create_dir(&pages).unwrap();
    // Each page as written clean, and as imported: broken.
    let mut clean: Vec<(&str, Vec<u8>, &str)> = Vec::new();
    // UTF-8 with one byte in 300 overwritten (it used to become windows-1252 mojibake).
    clean.push(("utf8.html", html("一", first, None).into_bytes(), "UTF-8"));
    // GBK, declared, with a few broken characters; and undeclared.
    clean.push(("gbk.html", encoding_rs::GBK.encode(&html("二", rest, Some("gbk"))).0.into_owned(), "GBK"));
    let undeclared = html("三", &rest.replace('。', "！"), None);
    clean.push(("gbk-undeclared.html", encoding_rs::GBK.encode(&undeclared).0.into_owned(), "GBK"));
    // The bundled Big5 pirate page with broken characters.
    let big5 =
        std::fs::read(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples/pirate-copy-big5.html")).unwrap();
    clean.push(("big5.html", big5, "Big5"));
    // A UTF-8 page with an ad paragraph in GBK pasted into it.
    clean.push(("mixed.html", html("四", &first.replace('。', "？"), None).into_bytes(), "UTF-8"));
    for (name, bytes, _) in &clean {
        let broken = match *name {
            "utf8.html" => overwrite_every(bytes, 300),
            "mixed.html" => {
                let mut mixed = bytes.clone();
                let at = mixed.iter().position(|&b| b == b'\n').unwrap() + 1;
                let ad = encoding_rs::GBK.encode("<p>本站最新域名请收藏，全文免费阅读无弹窗广告</p>").0.into_owned();
                mixed.splice(at..at, ad);
                mixed
            }
            _ => break_trail_bytes(bytes, 5),
        };
        std::fs::write(pages.join(name), broken).unwrap();
    }

    let st = common::store().await;
    let s = import_pages(&st.stores, &[pages], &opts(ImportLimits::default()), &NoProgress).await.unwrap();
    println!("{s}");
    assert_eq!((s.imported, s.rejected.len()), (5, 0), "{s}");
    for (file, bytes, charset) in &clean {
        let url = format!("http://hostile.example/{file}");
        let p = st.stores.pages.find_page(&url).await.unwrap().unwrap_or_else(|| panic!("{url}"));
        assert_eq!(p.charset.as_deref(), Some(*charset), "{file}");
        let share = share_found(&p.text, bytes);
        assert!(share >= 0.7, "{file}: only {share} of the passages survived");
        assert!(s.notes.iter().any(|n| n.item.ends_with(file) && n.note.contains("replaced by U+FFFD")), "{file}: {s}");
    }
    assert!(s.replaced_bytes >= 15 && s.to_string().contains("malformed bytes replaced"), "{s}");

    // Works too: a UTF-8 text file with bad bytes keeps its text and says how many.
    let works = dir.path().join("works");
    std::fs::create_dir(&works).unwrap();
    std::fs::write(works.join("hlm.txt"), overwrite_every(text.as_bytes(), 300)).unwrap();
    let s = import_works(&st.stores, &[works], "holder", &ImportOptions::default(), &NoProgress).await.unwrap();
    println!("{s}");
    assert_eq!(s.imported, 1, "{s}");
    let w = st.stores.works.find_work("holder", "hlm").await.unwrap().expect("work");
    assert_eq!(w.charset.as_deref(), Some("UTF-8"));
    assert!(share_found(&w.text, text.as_bytes()) >= 0.7);
    assert!(s.replaced_bytes >= (text.len() / 300) as u64, "{s}");
}

// ---------------------------------------------------------------------------------
// Huge pages and broken JSONL

#[tokio::test]
async fn a_50_mb_page_is_cut_at_the_page_bound_and_the_others_kept() {
    let text = sample();
    let huge_body: String = text.repeat((50 << 20) / text.len() + 1);
    assert!(huge_body.len() >= 50 << 20);
    let limits = ImportLimits { max_page_bytes: 1 << 20, ..ImportLimits::default() };
    let dir = tempfile::tempdir().unwrap();
    let line = |url: &str, body: &str| serde_json::json!({"url": url, "text": body}).to_string();
    let jsonl = dir.path().join("pages.jsonl");
    std::fs::write(
        &jsonl,
        [line("http://hostile.example/huge", &huge_body), line("http://hostile.example/small", &head(&text, 1000))]
            .join("\n"),
    )
    .unwrap();
    let saved = dir.path().join("huge.html");
    std::fs::write(&saved, html("大", &huge_body, Some("utf-8"))).unwrap();
    let warc = dir.path().join("huge.warc");
    let record =
        warc_record("resource", "http://hostile.example/huge-warc", "text/html; charset=utf-8", huge_body.as_bytes());
    std::fs::write(&warc, record).unwrap();
    drop(huge_body);

    let st = common::store().await;
    // The three huge pages share their first megabyte: each URL is kept (mirrors are).
    let o = opts(limits);
    let s = import_pages(&st.stores, &[jsonl, saved, warc], &o, &NoProgress).await.unwrap();
    println!("{s}");
    assert_eq!((s.imported, s.rejected.len()), (4, 0), "{s}");
    for (url, item) in [
        ("http://hostile.example/huge", "pages.jsonl:1"),
        ("http://hostile.example/huge.html", "huge.html"),
        ("http://hostile.example/huge-warc", "huge-warc"),
    ] {
        let p = st.stores.pages.find_page(url).await.unwrap().unwrap_or_else(|| panic!("{url}"));
        assert!(p.body.len() <= 1 << 20 && p.body.len() > 1_000_000, "{url}: body of {} bytes", p.body.len());
        assert!(p.text.len() <= 1 << 20, "{url}: text of {} bytes", p.text.len());
        assert!(std::str::from_utf8(&p.body).is_ok(), "{url}: cut inside a character");
        assert!(s.notes.iter().any(|n| n.item.contains(item) && n.note.contains("cut at 10485")), "{url}: {s}");
    }
    assert!(st.stores.pages.find_page("http://hostile.example/small").await.unwrap().is_some());
}

#[tokio::test]
async fn broken_jsonl_lines_are_rejected_and_the_good_ones_kept() {
    let text = sample();
    let good = |id: &str, from: usize| {
        serde_json::json!({"id": id, "title": id, "text": text.chars().skip(from).take(800).collect::<String>()})
            .to_string()
    };
    let mut bytes = Vec::new();
    bytes.extend(format!("{}\n", good("one", 0)).as_bytes());
    bytes.extend(b"{\"id\": \"bad-json\", \"text\": \"unterminated\n");
    bytes.extend(b"{\"id\": \"bad-utf8\", \"text\": \"\xff\xfe\xfd \xe7\xba\n");
    bytes.extend(b"[1, 2, 3]\n");
    // A 6 MB line, over the 1 MiB bound: skipped in bounded memory.
    bytes.extend(format!("{{\"id\": \"huge\", \"text\": \"{}\"}}\n", "字".repeat(2 << 20)).as_bytes());
    bytes.extend(format!("{}\n", good("two", 3000)).as_bytes());
    // The last line is cut short.
    let last = good("three", 6000);
    bytes.extend(&last.as_bytes()[..last.len() / 2]);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("works.jsonl");
    std::fs::write(&path, &bytes).unwrap();
    let st = common::store().await;
    let o = ImportOptions { max_file_bytes: 1 << 20, ..ImportOptions::default() };
    let s = import_works(&st.stores, &[path], "holder", &o, &NoProgress).await.unwrap();
    println!("{s}");
    assert_eq!(s.imported, 2, "{s}");
    assert_eq!(s.rejected.len(), 5, "{s}");
    for (line, why) in [
        (2, "not valid JSON"),
        (3, "not valid JSON"),
        (4, "not a JSON object"),
        (5, "line longer than 1048576 bytes"),
        (7, "not valid JSON"),
    ] {
        assert!(reason(&s, &format!("works.jsonl:{line}")).contains(why), "line {line}: {s}");
    }
}

// ---------------------------------------------------------------------------------
// WARC

fn warc_record(kind: &str, uri: &str, content_type: &str, block: &[u8]) -> Vec<u8> {
    let mut r = format!(
        "WARC/1.0\r\nWARC-Type: {kind}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: 2024-03-01T10:00:00Z\r\n\
         WARC-Record-ID: <urn:uuid:00000000-0000-0000-0000-{:012x}>\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        block.len(),
        block.len()
    )
    .into_bytes();
    r.extend_from_slice(block);
    r.extend_from_slice(b"\r\n\r\n");
    r
}

/// `record` with its WARC Content-Length replaced by `value`.
fn with_content_length(record: &[u8], value: &str) -> Vec<u8> {
    let head = String::from_utf8_lossy(&record[..400.min(record.len())]).into_owned();
    let start = head.find("Content-Length: ").unwrap() + 16;
    let end = start + head[start..].find('\r').unwrap();
    let mut out = record.to_vec();
    out.splice(start..end, value.bytes());
    out
}

fn response(uri: &str, body: &[u8], extra_headers: &str) -> Vec<u8> {
    let mut http =
        format!("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n{extra_headers}\r\n").into_bytes();
    http.extend_from_slice(body);
    warc_record("response", uri, "application/http; msgtype=response", &http)
}

fn gz(bytes: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    e.write_all(bytes).unwrap();
    e.finish().unwrap()
}

/// Three good pages, each a different part of the sample.
fn good_records(text: &str) -> Vec<Vec<u8>> {
    let chars: Vec<char> = text.chars().collect();
    (0..3)
        .map(|i| {
            let part: String = chars[i * 2000..(i + 1) * 2000].iter().collect();
            response(&format!("http://hostile.example/good/{i}"), html("好", &part, None).as_bytes(), "")
        })
        .collect()
}

async fn import_one(path: &Path) -> (ImportSummary, common::TestStore) {
    let st = common::store().await;
    let s = import_pages(&st.stores, &[path.to_path_buf()], &opts(ImportLimits::default()), &NoProgress).await.unwrap();
    println!("{s}");
    (s, st)
}

async fn assert_good_pages(st: &common::TestStore, text: &str) {
    let chars: Vec<char> = text.chars().collect();
    for i in 0..3 {
        let p = st.stores.pages.find_page(&format!("http://hostile.example/good/{i}")).await.unwrap();
        let p = p.unwrap_or_else(|| panic!("good page {i} lost"));
        let part: String = chars[i * 2000..(i + 1) * 2000].iter().collect();
        assert!(p.text.contains(&probe_at(&part, 200)), "good page {i}");
    }
}

/// Point 8 of the issue: one corrupt record used to drop every valid record after it.
#[tokio::test]
async fn corrupt_warc_records_are_skipped_and_the_records_after_them_kept() {
    let text = sample();
    let good = good_records(&text);
    let too_long = with_content_length(&response("http://hostile.example/bad/long", b"<p>short</p>", ""), "99999");
    let garbage_header =
        b"WARC/1.0\r\nWARC-Type: response\r\n\xff\xfe\x00 broken\r\nContent-Length: seven\r\n\r\nbody\r\n\r\n".to_vec();
    let page = html("短", &head(&text, 1000), None);
    let cut_short = with_content_length(&response("http://hostile.example/bad/short", page.as_bytes(), ""), "100");
    let mut junk = vec![0u8; 5000];
    junk.extend_from_slice(b"\r\n");
    let file = [
        good[0].clone(),
        too_long.clone(),
        good[1].clone(),
        garbage_header.clone(),
        junk.clone(),
        cut_short.clone(),
        good[2].clone(),
    ]
    .concat();
    let dir = tempfile::tempdir().unwrap();
    let plain = dir.path().join("crawl.warc");
    std::fs::write(&plain, &file).unwrap();
    let (s, st) = import_one(&plain).await;
    assert_eq!(s.imported, 3, "{s}");
    assert_good_pages(&st, &text).await;
    // The junk line after the bad header is skipped with it.
    let corrupt: Vec<_> = s.rejected.iter().filter(|r| r.reason.starts_with("corrupt record")).collect();
    assert_eq!(corrupt.len(), 3, "{s}");
    let bad_bytes = (too_long.len() + garbage_header.len() + junk.len() + cut_short.len()) as u64;
    assert_eq!(s.skipped_bytes, bad_bytes, "{s}");
    assert!(s.to_string().contains(&format!("corrupt bytes skipped {bad_bytes}")), "{s}");

    // The same records gzipped one per member (Common Crawl style), plus a gzip member
    // whose compressed bytes are damaged, and the file cut at the end.
    let mut members: Vec<Vec<u8>> =
        [&good[0], &too_long, &good[1], &garbage_header, &cut_short, &good[2]].iter().map(|r| gz(r)).collect();
    let mut damaged =
        gz(&response("http://hostile.example/bad/damaged", html("坏", &head(&text, 1000), None).as_bytes(), ""));
    let mid = damaged.len() / 2;
    damaged[mid..mid + 20].iter_mut().for_each(|b| *b ^= 0xA5);
    members.insert(2, damaged);
    let mut bytes = members.concat();
    let last = gz(&response("http://hostile.example/bad/cut", html("断", &head(&text, 1000), None).as_bytes(), ""));
    bytes.extend_from_slice(&last[..last.len() / 2]);
    let gzipped = dir.path().join("crawl.warc.gz");
    std::fs::write(&gzipped, &bytes).unwrap();
    let (s, st) = import_one(&gzipped).await;
    assert_eq!(s.imported, 3, "{s}");
    assert_good_pages(&st, &text).await;
    assert!(s.rejected.iter().filter(|r| r.reason.starts_with("corrupt record")).count() >= 4, "{s}");
    assert!(s.rejected.iter().any(|r| r.reason.contains("corrupt gzip member")), "{s}");
    assert!(st.stores.pages.find_page("http://hostile.example/bad/damaged").await.unwrap().is_none());
}

#[tokio::test]
async fn gzip_bombs_in_warc_files_stop_at_the_ratio() {
    let text = sample();
    let good = good_records(&text);
    // A response whose gzip body inflates to 64 MiB of zeros.
    let body_bomb = gz(&vec![0u8; 64 << 20]);
    let http_bomb = response("http://hostile.example/bad/body-bomb", &body_bomb, "Content-Encoding: gzip\r\n");
    let plain = [good[0].clone(), http_bomb.clone(), good[1].clone()].concat();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("body-bomb.warc");
    std::fs::write(&path, plain).unwrap();
    let (s, _st) = import_one(&path).await;
    assert_eq!(s.imported, 2, "{s}");
    assert!(reason(&s, "body-bomb.warc#2").contains("decompression bomb"), "{s}");

    // A WARC.gz whose third member inflates to a record of 64 MiB of zeros: the file is
    // read up to it and stopped there, after at most about 100 times its compressed size.
    let mut record = b"WARC/1.0\r\nWARC-Type: resource\r\nContent-Length: 67108864\r\n\r\n".to_vec();
    record.resize(record.len() + (64 << 20), 0);
    let bytes = [gz(&good[0]), gz(&good[1]), gz(&record), gz(&good[2])].concat();
    assert!(bytes.len() < 1 << 20);
    let path = dir.path().join("bomb.warc.gz");
    std::fs::write(&path, bytes).unwrap();
    let (s, _st) = import_one(&path).await;
    assert_eq!(s.imported, 2, "{s}");
    assert!(reason(&s, "bomb.warc.gz").contains("decompression bomb"), "{s}");
}

// ---------------------------------------------------------------------------------
// Crawling

/// The crawler meets a gzip bomb (a 64 KB response that inflates to 64 MiB) and a page
/// over the page bound: the bomb is cut off at the body cap while it inflates, the long
/// page is stored cut, and the ordinary page next to them is stored whole.
#[tokio::test]
async fn a_crawled_gzip_bomb_stops_at_the_body_cap_and_a_long_page_is_cut() {
    use std::collections::HashMap;
    use std::time::Duration;

    use zhiwen_ingest::{AddressPolicy, CrawlConfig, Crawler};

    let text = sample();
    let ok = html("好", &head(&text, 1500), Some("utf-8"));
    let long = html("长", &text.repeat(60), Some("utf-8")); // about 1.3 MB
    let site = common::serve(move |_| {
        let mut r = HashMap::new();
        let links = "<a href=/bomb.html>1</a><a href=/long.html>2</a><a href=/ok.html>3</a>";
        r.insert("/".into(), common::Response::html(format!("<html><body>{links}</body></html>"), "text/html"));
        let mut bomb = common::Response::html(gz(&vec![b' '; 64 << 20]), "text/html; charset=utf-8");
        bomb.headers.push(("Content-Encoding".into(), "gzip".into()));
        r.insert("/bomb.html".into(), bomb);
        r.insert("/long.html".into(), common::Response::html(long, "text/html; charset=utf-8"));
        r.insert("/ok.html".into(), common::Response::html(ok, "text/html; charset=utf-8"));
        r
    })
    .await;
    let st = common::store().await;
    let config = CrawlConfig {
        job: "hostile".into(),
        data_dir: st.dir.path().to_path_buf(),
        address_policy: AddressPolicy { allow_loopback: true, allow_private: false },
        per_host_delay: Duration::from_millis(10),
        request_timeout: Duration::from_secs(10),
        max_retries: 0,
        max_body_bytes: 2 << 20,
        max_page_bytes: 1 << 20,
        ..CrawlConfig::default()
    };
    let summary = Crawler::new(config, st.stores.clone()).unwrap().run(&[site.url("/")], &NoProgress).await.unwrap();
    println!("{summary}");
    let bomb = summary.pages.rejected.iter().find(|r| r.item.ends_with("/bomb.html")).expect("the bomb is rejected");
    assert!(bomb.reason.contains("above the cap of 2097152 bytes"), "{}", bomb.reason);
    let long = st.stores.pages.find_page(&site.url("/long.html")).await.unwrap().expect("the long page");
    assert!(long.body.len() <= 1 << 20 && long.text.len() <= 1 << 20, "{} / {}", long.body.len(), long.text.len());
    let ok = st.stores.pages.find_page(&site.url("/ok.html")).await.unwrap().expect("the ordinary page");
    assert!(ok.text.contains(&probe_at(&text, 100)));
}
