//! What a fetch keeps for evidence: the address connected to and both heads, which make a
//! WARC capture (`zhiwen_evidence::warc`) that zhiwen's own importer reads back as the
//! same page.

use std::collections::HashMap;
use std::time::Duration;

use zhiwen_evidence::{exchange_records, HttpExchange};
use zhiwen_ingest::crawler::fetch::{fetch, FetchRules};
use zhiwen_ingest::{import_pages, AddressPolicy, ImportOptions, NoProgress};

use crate::common::{self, classics, pirate_page, serve, Response};

#[tokio::test]
async fn a_fetch_becomes_a_warc_capture_that_reads_back_as_the_page() {
    let ch = classics(1);
    let html = pirate_page(&ch[0].title, &ch[0].text, &common::ad_lines(), &[], Some("gbk"));
    let body = encoding_rs::GBK.encode(&html).0.into_owned();
    let served = body.clone();
    let site = serve(move |_| {
        let mut r = HashMap::new();
        r.insert("/book/1.html?from=index".into(), Response::html(served, "text/html; charset=gbk"));
        r
    })
    .await;
    let rules = FetchRules {
        policy: AddressPolicy { allow_loopback: true, allow_private: false },
        max_redirects: 3,
        max_body_bytes: 8 << 20,
        max_retries: 0,
        backoff: Duration::from_millis(10),
        pages_only: true,
    };
    let url = url::Url::parse(&site.url("/book/1.html?from=index")).unwrap();
    let f = fetch(&reqwest::Client::new(), &url, &rules, |_| async { Ok(()) }).await.expect("fetched");

    // What the fetch kept beside the body.
    assert_eq!(f.remote_ip, Some("127.0.0.1".parse().unwrap()));
    let request = String::from_utf8(f.request_head("zhiwen-test/1")).unwrap();
    assert!(request.starts_with("GET /book/1.html?from=index HTTP/1.1\r\n"), "{request}");
    assert!(request.contains(&format!("host: 127.0.0.1:{}\r\n", site.port)) && request.ends_with("\r\n\r\n"));
    let response = String::from_utf8(f.response_head()).unwrap();
    assert!(response.starts_with("HTTP/1.1 200 OK\r\n"), "{response}");
    assert!(response.contains("content-type: text/html; charset=gbk\r\n"), "{response}");
    assert!(response.ends_with(&format!("content-length: {}\r\n\r\n", body.len())), "{response}");
    assert_eq!(f.body, body);

    // The capture, read back by the page importer: the same URL, body and charset.
    let (request_head, response_head) = (f.request_head("zhiwen-test/1"), f.response_head());
    let warc = exchange_records(&HttpExchange {
        target_uri: f.final_url.as_str(),
        ip: f.remote_ip,
        date: "2026-11-26T03:00:00Z",
        request_head: &request_head,
        response_head: &response_head,
        body: &f.body,
    });
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("capture.warc");
    std::fs::write(&path, &warc).unwrap();
    let st = common::store().await;
    let s = import_pages(&st.stores, &[path], &ImportOptions::default(), &NoProgress).await.unwrap();
    assert_eq!((s.imported, s.rejected.len()), (1, 0), "{s}");
    let page = st.stores.pages.get_page(s.changed.pages[0]).await.unwrap().expect("stored");
    assert_eq!(page.url, f.final_url.as_str());
    assert_eq!(page.body, body, "the body is the one fetched, byte for byte");
    assert_eq!(page.charset.as_deref(), Some("GBK"));
    assert_eq!(page.http_status, Some(200));
    assert_eq!(page.first_fetched_at.0, 1_795_662_000_000, "the capture's WARC-Date");
}
