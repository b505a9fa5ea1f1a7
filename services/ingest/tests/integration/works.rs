//! `import works`: files in any charset, folders, JSONL, EPUB; chapters; re-imports.

use std::io::Write;
use std::path::PathBuf;

use zhiwen_ingest::{import_works, ImportOptions, NoProgress};
use zhiwen_store::Subject;

use crate::common::{self, classics};

/// A novel file: a title line, then chapters with their headings (第一回 ...).
fn novel(chapters: &[common::Chapter]) -> String {
    let mut s = String::from("三国演义\n罗贯中 著\n\n");
    for c in chapters {
        let heading = c.title.split_once(' ').map_or(c.title.as_str(), |(_, h)| h);
        s.push_str(heading);
        s.push('\n');
        s.push_str(&c.text);
        s.push_str("\n\n");
    }
    s
}

fn gbk(s: &str) -> Vec<u8> {
    encoding_rs::GBK.encode(s).0.into_owned()
}

#[tokio::test]
async fn gbk_novel_is_split_into_chapters_and_reimport_updates_it() {
    let st = common::store().await;
    let ch = classics(3);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("三国演义.txt");
    std::fs::write(&path, gbk(&novel(&ch))).unwrap();
    let opts = ImportOptions::default();

    let s = import_works(&st.stores, std::slice::from_ref(&path), "rights-co", &opts, &NoProgress).await.unwrap();
    assert_eq!((s.imported, s.updated, s.unchanged, s.rejected.len()), (1, 0, 0, 0), "{s}");
    let work = st.stores.works.find_work("rights-co", "三国演义").await.unwrap().expect("stored by file stem");
    assert_eq!(work.charset.as_deref(), Some("GBK"));
    assert_eq!(work.title, "三国演义");
    let sections = st.stores.works.sections_of(work.id).await.unwrap();
    let titles: Vec<&str> = sections.iter().map(|s| s.title.as_str()).collect();
    assert_eq!(titles[0], "序");
    assert!(titles[1].starts_with("第一回"), "{titles:?}");
    assert!(titles[2].starts_with("第二回"), "{titles:?}");
    assert!(titles[3].starts_with("第三回"), "{titles:?}");
    assert_eq!(sections.len(), 4);
    assert!(sections[2].text.contains(&common::probe(&ch[1].text)));
    assert_eq!(s.changed.works, vec![work.id]);
    assert_eq!(s.changed.sections.len(), 4);

    // The same file again: unchanged, nothing to fingerprint.
    let s = import_works(&st.stores, std::slice::from_ref(&path), "rights-co", &opts, &NoProgress).await.unwrap();
    assert_eq!((s.imported, s.updated, s.unchanged), (0, 0, 1), "{s}");
    assert!(s.changed.is_empty());

    // Edited: updated in place (same id, one work), stale fingerprints gone.
    let fp = zhiwen_core::Fingerprinter::new(zhiwen_core::Params::default()).unwrap();
    let analysis = fp.analyze_text(&sections[1].text, zhiwen_core::canon::InputFormat::Text).unwrap();
    st.stores.fingerprints.put_fingerprints(Subject::section(sections[1].id), &analysis.fingerprints).await.unwrap();
    let mut edited = novel(&ch);
    edited.push_str("第四回 新增一回\n这是新加的一回内容。\n");
    std::fs::write(&path, gbk(&edited)).unwrap();
    let s = import_works(&st.stores, &[path], "rights-co", &opts, &NoProgress).await.unwrap();
    assert_eq!((s.imported, s.updated), (0, 1), "{s}");
    assert_eq!(st.stores.works.count_works().await.unwrap(), 1);
    let again = st.stores.works.find_work("rights-co", "三国演义").await.unwrap().unwrap();
    assert_eq!(again.id, work.id);
    assert_eq!(st.stores.works.sections_of(work.id).await.unwrap().len(), 5);
    assert!(st.stores.fingerprints.get_fingerprints(Subject::section(sections[1].id)).await.unwrap().is_none());
    assert_eq!(s.changed.sections.len(), 5);
}

fn epub(title: &str, author: &str, chapters: &[(String, String)]) -> Vec<u8> {
    use zip::write::SimpleFileOptions;
    let mut buf = std::io::Cursor::new(Vec::new());
    {
        let mut z = zip::ZipWriter::new(&mut buf);
        let o = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
        z.start_file("mimetype", o).unwrap();
        z.write_all(b"application/epub+zip").unwrap();
        z.start_file("META-INF/container.xml", o).unwrap();
        z.write_all(br#"<?xml version="1.0"?><container version="1.0" xmlns="urn:oasis:names:tc:opendocument:xmlns:container"><rootfiles><rootfile full-path="OEBPS/content.opf" media-type="application/oebps-package+xml"/></rootfiles></container>"#).unwrap();
        let mut manifest = String::new();
        let mut spine = String::new();
        for (i, (h, text)) in chapters.iter().enumerate() {
            manifest
                .push_str(&format!(r#"<item id="c{i}" href="Text/ch{i}.xhtml" media-type="application/xhtml+xml"/>"#));
            spine.push_str(&format!(r#"<itemref idref="c{i}"/>"#));
            z.start_file(format!("OEBPS/Text/ch{i}.xhtml"), o).unwrap();
            let paras: String =
                text.lines().filter(|l| !l.trim().is_empty()).map(|l| format!("<p>{}</p>", l.trim())).collect();
            write!(z, r#"<?xml version="1.0" encoding="utf-8"?><html xmlns="http://www.w3.org/1999/xhtml"><head><title>{h}</title></head><body><h2>{h}</h2>{paras}</body></html>"#).unwrap();
        }
        z.start_file("OEBPS/content.opf", o).unwrap();
        write!(z, r#"<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>{title}</dc:title><dc:creator>{author}</dc:creator></metadata><manifest>{manifest}<item id="css" href="s.css" media-type="text/css"/></manifest><spine>{spine}</spine></package>"#).unwrap();
        z.finish().unwrap();
    }
    buf.into_inner()
}

#[tokio::test]
async fn folders_of_files_with_bad_ones_reported() {
    let st = common::store().await;
    let ch = classics(4);
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("works");
    std::fs::create_dir_all(root.join("sub")).unwrap();
    std::fs::write(root.join("a.txt"), novel(&ch[..2])).unwrap();
    std::fs::write(
        root.join("sub/b.md"),
        format!("# 第一章 开始\n\n{}\n\n# 第二章 继续\n\n{}\n", ch[2].text, ch[3].text),
    )
    .unwrap();
    let html = format!(
        "<html><head><title>红楼梦选</title></head><body><h1>第一回 甄士隐梦幻识通灵</h1><p>{}</p><h1>第二回 贾夫人仙逝扬州城</h1><p>{}</p></body></html>",
        ch[0].text.replace('\n', "</p><p>"),
        ch[1].text.replace('\n', "</p><p>")
    );
    std::fs::write(root.join("c.html"), html).unwrap();
    let chapters: Vec<(String, String)> =
        ch.iter().take(2).map(|c| (c.title.split_once(' ').unwrap().1.to_owned(), c.text.clone())).collect();
    std::fs::write(root.join("d.epub"), epub("三国演义", "罗贯中", &chapters)).unwrap();
    std::fs::write(root.join("broken.epub"), b"PK\x03\x04 this is not a zip").unwrap();
    std::fs::write(root.join("empty.txt"), b"").unwrap();
    let mut x: u32 = 7;
    let noise: Vec<u8> = (0..5000)
        .map(|_| {
            x = x.wrapping_mul(1103515245).wrapping_add(12345);
            (x >> 16) as u8
        })
        .collect();
    std::fs::write(root.join("noise.txt"), noise).unwrap();
    std::fs::write(root.join("cover.jpg"), b"\xff\xd8\xff").unwrap();
    std::fs::write(root.join(".hidden.txt"), "隐藏").unwrap();

    let s = import_works(
        &st.stores,
        &[root.clone(), PathBuf::from("/nonexistent/zhiwen")],
        "owner",
        &ImportOptions::default(),
        &NoProgress,
    )
    .await
    .unwrap();
    println!("{s}");
    assert_eq!(s.imported, 4, "{s}");
    assert_eq!(s.skipped, 1, "cover.jpg: {s}");
    let reasons: Vec<(String, String)> = s.rejected.iter().map(|r| (r.item.clone(), r.reason.clone())).collect();
    assert_eq!(reasons.len(), 4, "{reasons:?}");
    let reason = |name: &str| {
        reasons
            .iter()
            .find(|(i, _)| i.ends_with(name))
            .map(|(_, r)| r.clone())
            .unwrap_or_else(|| panic!("{name}: {reasons:?}"))
    };
    assert!(reason("broken.epub").contains("EPUB"));
    assert!(reason("empty.txt").contains("empty"));
    assert!(reason("noise.txt").contains("binary"));
    assert!(reason("/nonexistent/zhiwen").contains("cannot read"));

    let md = st.stores.works.find_work("owner", "sub/b").await.unwrap().expect("relative id");
    let md_sections = st.stores.works.sections_of(md.id).await.unwrap();
    assert_eq!(md_sections.iter().map(|s| s.title.as_str()).collect::<Vec<_>>(), vec!["第一章 开始", "第二章 继续"]);

    let html = st.stores.works.find_work("owner", "c").await.unwrap().unwrap();
    assert_eq!(html.title, "红楼梦选");
    let hs = st.stores.works.sections_of(html.id).await.unwrap();
    assert_eq!(hs.len(), 2, "{:?}", hs.iter().map(|s| &s.title).collect::<Vec<_>>());
    assert!(hs[0].title.starts_with("第一回"));
    assert!(!html.text.contains('<'));

    let ep = st.stores.works.find_work("owner", "d").await.unwrap().unwrap();
    assert_eq!((ep.title.as_str(), ep.author.as_str()), ("三国演义", "罗贯中"));
    let es = st.stores.works.sections_of(ep.id).await.unwrap();
    assert_eq!(es.len(), 2);
    assert!(es[1].title.starts_with("第二回"));
    assert!(es[1].text.contains(&common::probe(&ch[1].text)));
}

#[tokio::test]
async fn jsonl_works_with_bad_lines() {
    let st = common::store().await;
    let ch = classics(3);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("works.jsonl");
    let lines = [
        serde_json::json!({"id": "w1", "title": "第一部", "author": "甲", "text": ch[0].text}).to_string(),
        serde_json::json!({"id": 42, "title": "网页版", "html": format!("<p>{}</p>", ch[1].text.replace('\n', "</p><p>"))}).to_string(),
        "{not json".to_owned(),
        serde_json::json!({"title": "无编号", "text": "内容"}).to_string(),
        serde_json::json!({"id": "w3", "title": "空的"}).to_string(),
        String::new(),
        serde_json::json!({"id": "w1", "title": "第一部（修订）", "text": ch[2].text}).to_string(),
        serde_json::json!({"id": "w1", "owner": "other-owner", "title": "别家的", "text": ch[2].text}).to_string(),
    ];
    std::fs::write(&path, lines.join("\n")).unwrap();
    // A holder's import (the default): the line naming another owner is refused, and
    // nothing is stored under that owner.
    let s = import_works(&st.stores, std::slice::from_ref(&path), "holder", &ImportOptions::default(), &NoProgress)
        .await
        .unwrap();
    assert!(s.rejected.iter().any(|r| r.item.ends_with(":8") && r.reason == zhiwen_ingest::works::OTHER_OWNER), "{s}");
    assert!(st.stores.works.find_work("other-owner", "w1").await.unwrap().is_none());
    // An operator's import: lines may name their owner.
    let opts = ImportOptions { batch_size: 3, owner_from_lines: true, ..Default::default() };
    let s = import_works(&st.stores, &[path], "owner", &opts, &NoProgress).await.unwrap();
    println!("{s}");
    assert_eq!(s.rejected.len(), 3, "{s}");
    assert!(s.rejected.iter().any(|r| r.item.ends_with(":3") && r.reason.contains("JSON")));
    assert!(s.rejected.iter().any(|r| r.item.ends_with(":4") && r.reason.contains("id")));
    assert!(s.rejected.iter().any(|r| r.item.ends_with(":5") && r.reason.contains("text")));
    // w1 twice for one owner: one work, the later line wins.
    let w1 = st.stores.works.find_work("owner", "w1").await.unwrap().unwrap();
    assert_eq!(w1.title, "第一部（修订）");
    assert!(st.stores.works.find_work("owner", "42").await.unwrap().is_some());
    assert!(st.stores.works.find_work("other-owner", "w1").await.unwrap().is_some());
    assert_eq!(st.stores.works.count_works().await.unwrap(), 5, "3 of the operator, 2 of the holder");
}
