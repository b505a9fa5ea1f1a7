use calamine::Reader;
use zhiwen_matcher::export::{export_matches, ExportFormat, COLUMNS};
use zhiwen_matcher::MatcherConfig;
use zhiwen_store::{MatchQuery, MatchSort, MatchSortKey};

use crate::support::*;

const BY_ID: MatchSort = MatchSort { key: MatchSortKey::Id, descending: false };

/// The position of a column.
fn col(name: &str) -> usize {
    COLUMNS.iter().position(|c| *c == name).unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn csv_xlsx_and_json_round_trip_the_chinese_text_and_values() {
    let e = env(MatcherConfig::default()).await;
    let ch1 = String::from_utf8(sample("hongloumeng-01.txt")).unwrap();
    let w = e.stores.works.upsert_work(&work("HLM-1", "红楼梦", &[("第一回 甄士隐梦幻识通灵", &ch1)])).await.unwrap();
    e.matcher.index_work(w.id).await.unwrap();
    let p = e
        .stores
        .pages
        .upsert_page(&html_page("http://pirate.example/hlm/1.html", sample("pirate-copy-big5.html")))
        .await
        .unwrap();
    let rec = e.matcher.match_page(p.id).await.unwrap().matches.remove(0);
    let filter = MatchQuery { work_id: Some(w.id), ..Default::default() };

    let mut csv_bytes = Vec::new();
    assert_eq!(export_matches(&e.stores, &filter, BY_ID, ExportFormat::Csv, &mut csv_bytes).await.unwrap(), 1);
    assert!(csv_bytes.starts_with("\u{feff}".as_bytes()), "UTF-8 BOM");
    let mut r = csv::Reader::from_reader(&csv_bytes[3..]);
    assert_eq!(r.headers().unwrap().iter().collect::<Vec<_>>(), COLUMNS.to_vec());
    let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
    assert_eq!(rows.len(), 1);
    let cell = |name: &str| rows[0][col(name)].to_owned();
    assert_eq!(cell("match_id"), rec.match_id.to_string());
    assert_eq!(cell("work_id"), w.id.to_string());
    assert_eq!(cell("work_external_id"), "HLM-1");
    assert_eq!(cell("work_title"), "红楼梦");
    assert_eq!(cell("section_ordinal"), "0");
    assert_eq!(cell("section_title"), "第一回 甄士隐梦幻识通灵");
    assert_eq!(cell("page_id"), p.id.to_string());
    assert_eq!(cell("url"), "http://pirate.example/hlm/1.html");
    assert_eq!(cell("site"), "pirate.example");
    assert_eq!(cell("kind"), "excerpt");
    assert!((cell("score").parse::<f64>().unwrap() - rec.score).abs() < 1e-3);
    assert_eq!(cell("status"), "new");
    assert_eq!(cell("evidence_section"), rec.evidence_section.as_str());
    assert_eq!(cell("evidence_page"), rec.evidence_page.as_str());
    // Times are RFC 3339 in UTC.
    for t in [cell("first_seen"), cell("last_seen")] {
        let parsed = time::OffsetDateTime::parse(&t, &time::format_description::well_known::Rfc3339).unwrap();
        assert_eq!(parsed.offset(), time::UtcOffset::UTC, "{t}");
        assert!(t.ends_with('Z'), "{t}");
    }

    let mut json = Vec::new();
    export_matches(&e.stores, &filter, BY_ID, ExportFormat::JsonLines, &mut json).await.unwrap();
    let v: serde_json::Value = serde_json::from_slice(json.trim_ascii_end()).unwrap();
    assert_eq!(v["work_title"], "红楼梦");
    assert_eq!(v["evidence_page"], rec.evidence_page.as_str());

    let mut xlsx = Vec::new();
    export_matches(&e.stores, &filter, BY_ID, ExportFormat::Xlsx, &mut xlsx).await.unwrap();
    let mut book: calamine::Xlsx<_> = calamine::open_workbook_from_rs(std::io::Cursor::new(xlsx)).unwrap();
    let range = book.worksheet_range("matches").unwrap();
    let cell = |r: u32, c: u32| range.get_value((r, c)).map(|v| v.to_string()).unwrap_or_default();
    let c = |name: &str| col(name) as u32;
    assert_eq!((0..COLUMNS.len() as u32).map(|i| cell(0, i)).collect::<Vec<_>>(), COLUMNS.to_vec());
    assert_eq!(cell(1, c("work_title")), "红楼梦");
    assert_eq!(cell(1, c("section_title")), "第一回 甄士隐梦幻识通灵");
    assert_eq!(cell(1, c("evidence_page")), rec.evidence_page);
    assert!((cell(1, c("score")).parse::<f64>().unwrap() - rec.score).abs() < 1e-9);
    assert_eq!(range.get_value((1, c("match_id"))), Some(&calamine::Data::Float(rec.match_id as f64)));

    // Another work's filter exports nothing.
    let none = MatchQuery { work_id: Some(w.id + 1000), ..Default::default() };
    let mut empty = Vec::new();
    assert_eq!(export_matches(&e.stores, &none, BY_ID, ExportFormat::Csv, &mut empty).await.unwrap(), 0);
}

/// A work id and a title a spreadsheet would run as formulas (holders choose both):
/// neutralised in CSV, plain strings (never formulas) in XLSX, as stored in JSON.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn formula_like_cells_are_text_in_csv_and_xlsx() {
    let e = env(MatcherConfig::default()).await;
    let ch1 = String::from_utf8(sample("hongloumeng-01.txt")).unwrap();
    let title = "=HYPERLINK(\"http://x\",\"点击\")";
    let w = e.stores.works.upsert_work(&work("=1+1", title, &[("@第一回", &ch1)])).await.unwrap();
    e.matcher.index_work(w.id).await.unwrap();
    let p = html_page("http://pirate.example/hlm/1.html", sample("pirate-copy-big5.html"));
    let p = e.stores.pages.upsert_page(&p).await.unwrap();
    assert_eq!(e.matcher.match_page(p.id).await.unwrap().matches.len(), 1);
    let filter = MatchQuery { work_id: Some(w.id), ..Default::default() };

    let mut csv_bytes = Vec::new();
    export_matches(&e.stores, &filter, BY_ID, ExportFormat::Csv, &mut csv_bytes).await.unwrap();
    let mut r = csv::Reader::from_reader(&csv_bytes[3..]);
    let row = r.records().next().unwrap().unwrap();
    let cells = (&row[col("work_external_id")], &row[col("work_title")], &row[col("section_title")]);
    assert_eq!(cells, ("'=1+1", format!("'{title}").as_str(), "'@第一回"));

    let mut json = Vec::new();
    export_matches(&e.stores, &filter, BY_ID, ExportFormat::JsonLines, &mut json).await.unwrap();
    let v: serde_json::Value = serde_json::from_slice(json.trim_ascii_end()).unwrap();
    assert_eq!((v["work_external_id"].as_str(), v["work_title"].as_str()), (Some("=1+1"), Some(title)));

    let mut xlsx = Vec::new();
    export_matches(&e.stores, &filter, BY_ID, ExportFormat::Xlsx, &mut xlsx).await.unwrap();
    let mut book: calamine::Xlsx<_> = calamine::open_workbook_from_rs(std::io::Cursor::new(xlsx)).unwrap();
    let formulas = book.worksheet_formula("matches").unwrap();
    assert!(formulas.used_cells().all(|(_, _, f)| f.is_empty()), "no formula in the sheet");
    let range = book.worksheet_range("matches").unwrap();
    let c = |name: &str| col(name) as u32;
    assert_eq!(range.get_value((1, c("work_external_id"))), Some(&calamine::Data::String("=1+1".into())));
    assert_eq!(range.get_value((1, c("work_title"))), Some(&calamine::Data::String(title.into())));
    assert_eq!(range.get_value((1, c("section_title"))), Some(&calamine::Data::String("@第一回".into())));
}
