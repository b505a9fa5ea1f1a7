//! An upload whose request is gone stops being read. `POST /api/v1/works/upload` runs the
//! import in the request; when the request times out (503) or its client hangs up, the
//! handler is dropped, and with it the import: its reader thread must stop then, not go on
//! inflating and canonicalising the file for minutes while holding its memory. Its own
//! test binary, so that no other test's import runs while the readers are counted.

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use zhiwen_api::{ApiConfig, AppState};
use zhiwen_core::{Fingerprinter, Params};
use zhiwen_index::{CandidateIndex, EmbeddedIndex, IndexConfig};
use zhiwen_matcher::{Matcher, MatcherConfig};
use zhiwen_store::{KeyRole, StoreConfig};

/// A small EPUB whose spine names one document of about 1 MiB of real text 2,000 times:
/// inflating and canonicalising it would take many minutes. The bounds are opened up
/// for it, so that only cancellation can stop it early.
fn endless_epub() -> Vec<u8> {
    let line = "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。";
    let paragraphs: String = (0..(1 << 20) / (line.len() + 7)).map(|i| format!("<p>{i}{line}</p>")).collect();
    let mut z = zip::ZipWriter::new(std::io::Cursor::new(Vec::new()));
    let o = zip::write::SimpleFileOptions::default();
    z.start_file("META-INF/container.xml", o).unwrap();
    z.write_all(br#"<container><rootfiles><rootfile full-path="content.opf"/></rootfiles></container>"#).unwrap();
    z.start_file("c.xhtml", o).unwrap();
    write!(z, "<html><body>{paragraphs}</body></html>").unwrap();
    z.start_file("content.opf", o).unwrap();
    let spine: String = (0..2000).map(|_| r#"<itemref idref="c"/>"#).collect();
    write!(z, r#"<package><manifest><item id="c" href="c.xhtml" media-type="application/xhtml+xml"/></manifest><spine>{spine}</spine></package>"#).unwrap();
    z.finish().unwrap().into_inner()
}

async fn start(request_timeout: Duration) -> (String, String, zhiwen_store::Stores, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let stores = zhiwen_store::open(&StoreConfig::embedded(dir.path().join("data"))).await.unwrap();
    let index: Arc<dyn CandidateIndex> =
        Arc::new(EmbeddedIndex::open(dir.path().join("index.sqlite"), IndexConfig::default()).unwrap());
    let matcher =
        Matcher::new(stores.clone(), index, Fingerprinter::new(Params::default()).unwrap(), MatcherConfig::default());
    let key = zhiwen_api::generate_key(&stores, KeyRole::Admin, None, "admin", None).await.unwrap().secret;
    let config = ApiConfig {
        request_timeout,
        workers: 1,
        import_limits: zhiwen_ingest::ImportLimits {
            max_archive_bytes: u64::MAX,
            max_ratio: u64::MAX,
            ..zhiwen_ingest::ImportLimits::default()
        },
        ..ApiConfig::default()
    };
    let state = AppState::new(matcher, dir.path().to_path_buf(), config);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(zhiwen_api::server(state, listener).unwrap());
    (base, key, stores, dir)
}

/// Wait until no import reader runs; how long it took (`None`: still running after `limit`).
async fn readers_gone(limit: Duration) -> Option<Duration> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if zhiwen_ingest::running_import_readers() == 0 {
            return Some(start.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_stops_when_its_request_times_out_or_its_client_hangs_up() {
    let epub = endless_epub();
    assert!(epub.len() < 1 << 20, "{} bytes", epub.len());

    // The request times out: 503, and the import behind it stops.
    let (base, key, stores, _dir) = start(Duration::from_secs(1)).await;
    let url = format!("{base}/api/v1/works/upload?owner=o&filename=endless.epub");
    let client = reqwest::Client::new();
    let r = client.post(&url).bearer_auth(&key).body(epub.clone()).send().await.unwrap();
    assert_eq!(r.status().as_u16(), 503, "{}", r.text().await.unwrap_or_default());
    let stopped = readers_gone(Duration::from_secs(20)).await;
    assert!(stopped.is_some(), "the import went on reading after its request timed out");
    assert_eq!(stores.works.count_works().await.unwrap(), 0);

    // The client hangs up before the (generous) timeout: the same.
    let (base, key, stores, _dir) = start(Duration::from_secs(600)).await;
    let url = format!("{base}/api/v1/works/upload?owner=o&filename=endless.epub");
    let impatient = reqwest::Client::builder().timeout(Duration::from_secs(1)).build().unwrap();
    let r = impatient.post(&url).bearer_auth(&key).body(epub).send().await;
    assert!(r.is_err_and(|e| e.is_timeout()));
    let stopped = readers_gone(Duration::from_secs(20)).await;
    assert!(stopped.is_some(), "the import went on reading after its client hung up");
    assert_eq!(stores.works.count_works().await.unwrap(), 0);
}
