//! The crawler against a pirate-style site on 127.0.0.1.

use std::collections::HashMap;
use std::time::Duration;

use zhiwen_ingest::{AddressPolicy, CrawlConfig, Crawler, NoProgress};

use crate::common::{self, classics, pirate_page, probe, serve, Response, Server};

/// 三国演义's opening in traditional characters, for the Big5 page.
const TRADITIONAL: &str = "滾滾長江東逝水，浪花淘盡英雄。是非成敗轉頭空。青山依舊在，幾度夕陽紅。\n話說天下大勢，分久必合，合久必分。周末七國分爭，並入於秦。及秦滅之後，楚、漢分爭，又並入於漢。";

fn binary_bytes(n: usize) -> Vec<u8> {
    let mut x: u32 = 2463534242;
    (0..n)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            (x >> 24) as u8
        })
        .collect()
}

/// GBK bytes (the rare characters outside GBK become numeric character references).
fn gbk(s: &str) -> Vec<u8> {
    encoding_rs::GBK.encode(s).0.into_owned()
}

fn big5(s: &str) -> Vec<u8> {
    let (b, _, errors) = encoding_rs::BIG5.encode(s);
    assert!(!errors);
    b.into_owned()
}

fn heading(title: &str) -> String {
    title.split_once(' ').map_or(title, |(_, h)| h).to_owned()
}

/// The pirate site: chapters in UTF-8, GBK and Big5 with ads, robots.txt forbidding
/// /vip/, a sitemap, redirects (a moved chapter, a loop, one to a private address, one
/// into /vip/), a slow page, a huge page, a binary file served as HTML, 404 and 500.
async fn pirate_site() -> Server {
    let ch = classics(5);
    let ads = common::ad_lines();
    serve(move |port| {
        let mut r = HashMap::new();
        let index_links: Vec<String> = [
            "/book/1.html",
            "/book/1.html#comments",
            "/book/1.html?utm_source=weibo",
            "/book/2.html",
            "/book/3.html",
            "/vip/secret.html",
            "/old/1.html",
            "/loop/0",
            "/evil",
            "/sneaky",
            "/slow.html",
            "/huge.html",
            "/file.html",
            "/missing.html",
            "/error.html",
            "/dup.html",
            "http://example.invalid/away.html",
            "mailto:admin@example.invalid",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let blurb: String = ch[4].text.chars().take(600).collect();
        let index = pirate_page("免费小说网", &blurb, &ads, &index_links, Some("utf-8"));
        r.insert("/".into(), Response::html(index, "text/html; charset=utf-8"));
        let links = vec!["/".to_string(), "/book/2.html".to_string()];
        let page1 = pirate_page(&ch[0].title, &ch[0].text, &ads, &links, None);
        r.insert("/book/1.html".into(), Response::html(page1.clone(), "text/html; charset=UTF-8"));
        r.insert("/dup.html".into(), Response::html(page1, "text/html; charset=UTF-8"));
        let page2 = pirate_page(&heading(&ch[1].title), &ch[1].text, &ads, &links, None);
        r.insert("/book/2.html".into(), Response::html(gbk(&page2), "text/html; charset=gbk"));
        let paras: String = TRADITIONAL.lines().map(|l| format!("<p>{l}</p>")).collect();
        let page3 = format!(
            "<html><head><meta charset=\"big5\"><title>三國演義 第一回</title></head><body>\
             <div><a href=\"/\">首頁</a></div><h1>第一回</h1><div id=\"content\">{paras}</div></body></html>"
        );
        r.insert("/book/3.html".into(), Response::html(big5(&page3), "text/html"));
        let page4 = pirate_page(&ch[2].title, &ch[2].text, &ads, &[], None);
        r.insert("/book/4.html".into(), Response::html(page4, "text/html; charset=utf-8"));
        let page5 = pirate_page(&ch[3].title, &ch[3].text, &ads, &[], None);
        r.insert("/book/5.html".into(), Response::html(page5, "text/html; charset=utf-8"));
        r.insert("/vip/secret.html".into(), Response::html(pirate_page("vip", &ch[4].text, &[], &[], None), "text/html"));
        r.insert("/old/1.html".into(), Response::redirect("/book/5.html"));
        for i in 0..20 {
            r.insert(format!("/loop/{i}"), Response::redirect(&format!("/loop/{}", i + 1)));
        }
        r.insert("/evil".into(), Response::redirect("http://10.255.255.1/admin.html"));
        r.insert("/sneaky".into(), Response::redirect("/vip/secret.html"));
        let mut slow = Response::html(pirate_page("slow", &ch[4].text, &[], &[], None), "text/html");
        slow.delay = Duration::from_secs(4);
        r.insert("/slow.html".into(), slow);
        let mut huge = Response::html(format!("<html><body><p>{}</p></body></html>", "大".repeat(1_000_000)), "text/html");
        huge.stream = true;
        r.insert("/huge.html".into(), huge);
        r.insert("/file.html".into(), Response::html(binary_bytes(20_000), "text/html"));
        r.insert("/error.html".into(), Response::status(500));
        r.insert(
            "/robots.txt".into(),
            Response::html(
                format!("User-agent: *\nDisallow: /vip/\n\nSitemap: http://127.0.0.1:{port}/sitemap.xml\n"),
                "text/plain",
            ),
        );
        let sitemap = format!(
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?><urlset xmlns=\"http://www.sitemaps.org/schemas/sitemap/0.9\">\
             <url><loc>http://127.0.0.1:{port}/book/4.html</loc></url><url><loc>http://127.0.0.1:{port}/book/1.html</loc></url></urlset>"
        );
        r.insert("/sitemap.xml".into(), Response::html(sitemap, "application/xml"));
        r
    })
    .await
}

fn test_config(dir: &std::path::Path) -> CrawlConfig {
    CrawlConfig {
        job: "test".into(),
        data_dir: dir.to_path_buf(),
        address_policy: AddressPolicy { allow_loopback: true, allow_private: false },
        per_host_delay: Duration::from_millis(20),
        per_host_concurrency: 1,
        global_concurrency: 4,
        request_timeout: Duration::from_millis(1500),
        connect_timeout: Duration::from_secs(2),
        max_retries: 1,
        retry_backoff: Duration::from_millis(10),
        max_redirects: 3,
        max_body_bytes: 1 << 20,
        max_depth: 2,
        ..CrawlConfig::default()
    }
}

fn rejection<'a>(summary: &'a zhiwen_ingest::CrawlSummary, path: &str) -> &'a str {
    summary
        .pages
        .rejected
        .iter()
        .find(|r| r.item.ends_with(path))
        .map(|r| r.reason.as_str())
        .unwrap_or_else(|| panic!("no rejection for {path}: {summary}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn crawls_the_pirate_site_politely_and_safely() {
    let site = pirate_site().await;
    let st = common::store().await;
    let ch = classics(5);
    let crawler = Crawler::new(test_config(st.dir.path()), st.stores.clone()).unwrap();
    let summary = crawler.run(&[site.url("/")], &NoProgress).await.unwrap();
    println!("{summary}");

    // Stored with the right charset and text.
    let pages = &st.stores.pages;
    let p1 = pages.find_page(&site.url("/book/1.html")).await.unwrap().expect("book 1 stored");
    assert_eq!(p1.charset.as_deref(), Some("UTF-8"));
    assert!(p1.text.contains(&probe(&ch[0].text)), "{}", &p1.text[..200]);
    assert_eq!(p1.http_status, Some(200));
    assert_eq!(p1.format, Some(zhiwen_store::PageFormat::Html), "the format decided when fetched is stored");
    let p2 = pages.find_page(&site.url("/book/2.html")).await.unwrap().expect("GBK page stored");
    assert_eq!(p2.charset.as_deref(), Some("GBK"));
    assert!(p2.text.contains(&probe(&ch[1].text)));
    let p3 = pages.find_page(&site.url("/book/3.html")).await.unwrap().expect("Big5 page stored");
    assert_eq!(p3.charset.as_deref(), Some("Big5"));
    assert!(p3.text.contains("滚滚长江东逝水"), "{}", p3.text);
    assert!(pages.find_page(&site.url("/book/4.html")).await.unwrap().is_some(), "sitemap-only page stored");
    assert!(summary.sitemap_urls >= 2);
    let p5 = pages.find_page(&site.url("/book/5.html")).await.unwrap().expect("redirect target stored");
    assert!(p5.text.contains(&probe(&ch[3].text)));
    assert_eq!(summary.pages.imported, 7, "{summary}"); // index + books 1-5 + the mirror /dup.html
    assert_eq!(summary.pages.changed.pages.len(), 7);

    // Fetched once despite the fragment, the tracking parameter and the sitemap entry.
    assert_eq!(site.hits("/book/1.html"), 1);
    assert_eq!(site.hits("/book/1.html?utm_source=weibo"), 0);
    assert_eq!(site.hits("/robots.txt"), 1);

    // robots.txt: /vip/ never requested, not even through a redirect.
    assert_eq!(site.hits("/vip/secret.html"), 0);
    assert!(summary.disallowed.iter().any(|u| u.ends_with("/vip/secret.html")));
    assert!(rejection(&summary, "/sneaky").contains("robots.txt"));

    // Redirect limit: /loop/0 -> 1 -> 2 -> 3, then refused.
    assert!(rejection(&summary, "/loop/0").contains("more than 3 redirects"));
    for i in 0..=3 {
        assert_eq!(site.hits(&format!("/loop/{i}")), 1, "/loop/{i}");
    }
    assert_eq!(site.hits("/loop/4"), 0);

    // A redirect to a private address is refused before connecting.
    let evil = rejection(&summary, "/evil");
    assert!(evil.contains("10.255.255.1") && evil.contains("private address"), "{evil}");

    // Timeouts are retried then reported; 500 retried; 404 not retried.
    assert!(rejection(&summary, "/slow.html").contains("timed out"));
    assert_eq!(site.hits("/slow.html"), 2);
    assert!(rejection(&summary, "/error.html").contains("HTTP 500"));
    assert_eq!(site.hits("/error.html"), 2);
    assert!(rejection(&summary, "/missing.html").contains("HTTP 404"));
    assert_eq!(site.hits("/missing.html"), 1);

    // Size cap while streaming; binary served as HTML.
    assert!(rejection(&summary, "/huge.html").contains("cap"));
    assert!(rejection(&summary, "/file.html").contains("binary"));
    assert!(pages.find_page(&site.url("/file.html")).await.unwrap().is_none());

    // Same text at another URL: a mirror, stored under its own URL.
    let dup = pages.find_page(&site.url("/dup.html")).await.unwrap().expect("the mirror is stored");
    let first = pages.find_page(&site.url("/book/1.html")).await.unwrap().expect("stored");
    assert_eq!(dup.text, first.text);

    // Other domains are not followed; nothing else was contacted.
    assert!(!summary.pages.rejected.iter().any(|r| r.item.contains("example.invalid")));

    // A User-Agent that says what it is.
    let uas = site.user_agents();
    assert_eq!(uas.len(), 1, "{uas:?}");
    assert!(uas[0].starts_with("zhiwen-crawler/"), "{uas:?}");

    // Politeness: one request at a time per host, 20 ms apart.
    let times = site.arrivals("/book/");
    for w in times.windows(2) {
        assert!(w[1] - w[0] >= Duration::from_millis(15), "requests {:?} apart", w[1] - w[0]);
    }
    // robots.txt, the sitemap and the first page as well (they went out back to back).
    let (robots, sitemap) = (site.arrivals("/robots.txt")[0], site.arrivals("/sitemap.xml")[0]);
    let page = site.arrivals("/").into_iter().find(|t| *t > sitemap).expect("a page after the sitemap");
    assert!(sitemap - robots >= Duration::from_millis(15), "sitemap {:?} after robots.txt", sitemap - robots);
    assert!(page - sitemap >= Duration::from_millis(15), "first page {:?} after the sitemap", page - sitemap);

    // Running the job again fetches nothing: the frontier is done.
    let before = site.total_hits();
    let again = crawler.run(&[site.url("/")], &NoProgress).await.unwrap();
    assert_eq!(site.total_hits(), before, "{again}");
    assert_eq!(again.fetched, 0);
    assert!(again.resumed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refuses_loopback_by_default() {
    let site = pirate_site().await;
    let st = common::store().await;
    let config = CrawlConfig { address_policy: AddressPolicy::default(), ..test_config(st.dir.path()) };
    let crawler = Crawler::new(config, st.stores.clone()).unwrap();
    let seeds = vec![site.url("/"), format!("http://localhost:{}/", site.port), format!("http://[::1]:{}/", site.port)];
    let summary = crawler.run(&seeds, &NoProgress).await.unwrap();
    assert_eq!(site.total_hits(), 0, "{summary}");
    assert_eq!(summary.pages.rejected.len(), 3, "{summary}");
    for r in &summary.pages.rejected {
        assert!(r.reason.contains("loopback"), "{r:?}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_page_whose_text_was_stored_by_an_earlier_run_is_stored_as_a_mirror() {
    let ch = classics(2);
    let site = serve(move |_| {
        let mut r = HashMap::new();
        let page = pirate_page(&ch[0].title, &ch[0].text, &[], &[], None);
        r.insert("/book/1.html".into(), Response::html(page.clone(), "text/html"));
        r.insert("/mirror/1.html".into(), Response::html(page, "text/html"));
        r.insert(
            "/book/2.html".into(),
            Response::html(pirate_page(&ch[1].title, &ch[1].text, &[], &[], None), "text/html"),
        );
        r
    })
    .await;
    let st = common::store().await;
    let config = CrawlConfig { max_depth: 0, ..test_config(st.dir.path()) };
    let first = Crawler::new(CrawlConfig { job: "first".into(), ..config.clone() }, st.stores.clone()).unwrap();
    let summary = first.run(&[site.url("/book/1.html")], &NoProgress).await.unwrap();
    assert_eq!(summary.pages.imported, 1, "{summary}");

    // Another job, another day: the mirror's text is already stored under /book/1.html.
    let second = Crawler::new(CrawlConfig { job: "second".into(), ..config }, st.stores.clone()).unwrap();
    let summary = second.run(&[site.url("/mirror/1.html"), site.url("/book/2.html")], &NoProgress).await.unwrap();
    println!("{summary}");
    assert_eq!(summary.pages.imported, 2, "{summary}");
    let mirror = st.stores.pages.find_page(&site.url("/mirror/1.html")).await.unwrap().expect("the mirror is stored");
    let first = st.stores.pages.find_page(&site.url("/book/1.html")).await.unwrap().expect("stored");
    assert_eq!(mirror.text, first.text);
    assert_eq!(st.stores.pages.count_pages().await.unwrap(), 3);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumes_after_a_kill_without_fetching_stored_pages_again() {
    let ch = classics(12);
    let site = serve(move |_| {
        let mut r = HashMap::new();
        let links: Vec<String> = (0..ch.len()).map(|i| format!("/book/{i}.html")).collect();
        let blurb: String = ch[11].text.chars().rev().take(600).collect();
        r.insert("/".into(), Response::html(pirate_page("目录", &blurb, &[], &links, None), "text/html"));
        for (i, c) in ch.iter().enumerate() {
            r.insert(
                format!("/book/{i}.html"),
                Response::html(pirate_page(&c.title, &c.text, &[], &[], None), "text/html"),
            );
        }
        r
    })
    .await;
    let st = common::store().await;
    let config =
        CrawlConfig { per_host_delay: Duration::from_millis(60), global_concurrency: 2, ..test_config(st.dir.path()) };
    let seeds = vec![site.url("/")];

    // First run, killed (task aborted) once a few chapters were requested.
    let crawler = Crawler::new(config.clone(), st.stores.clone()).unwrap();
    let seeds1 = seeds.clone();
    let run = tokio::spawn(async move { crawler.run(&seeds1, &NoProgress).await });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while site.arrivals("/book/").len() < 5 {
        assert!(tokio::time::Instant::now() < deadline, "crawl made no progress");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    run.abort();
    let _ = run.await;
    let stored: Vec<String> =
        st.stores.pages.list_pages(None, 0, 100).await.unwrap().into_iter().map(|p| p.url).collect();
    assert!(stored.len() >= 3, "{stored:?}");
    assert!(stored.len() < 13, "the kill came too late to test anything: {stored:?}");

    // Second run of the same job: resumes, never fetches a stored page again.
    let crawler = Crawler::new(config, st.stores.clone()).unwrap();
    let summary = crawler.run(&seeds, &NoProgress).await.unwrap();
    println!("{summary}");
    assert!(summary.resumed);
    for url in &stored {
        let path = &url[url.find("/book/").or_else(|| url.rfind('/')).unwrap()..];
        assert_eq!(site.hits(path), 1, "{path} fetched again after it was stored");
    }
    for i in 0..12 {
        let path = format!("/book/{i}.html");
        assert!(st.stores.pages.find_page(&site.url(&path)).await.unwrap().is_some(), "{path} not stored");
        assert!(site.hits(&path) <= 2, "{path}");
    }
    assert_eq!(site.hits("/"), 1);
    assert_eq!(st.stores.pages.count_pages().await.unwrap(), 13);
}

/// A host whose robots.txt could not be read is left alone for that run, not for good: the
/// same job run again reads robots.txt again and fetches what it skipped.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn urls_skipped_while_robots_txt_was_down_are_fetched_by_the_next_run() {
    let ch = classics(2);
    let site = serve(move |_| {
        let mut r = HashMap::new();
        r.insert("/robots.txt".into(), Response::status(503));
        r.insert("/a.html".into(), Response::html(pirate_page(&ch[0].title, &ch[0].text, &[], &[], None), "text/html"));
        r
    })
    .await;
    let st = common::store().await;
    let config = CrawlConfig { max_retries: 0, ..test_config(st.dir.path()) };
    let seeds = vec![site.url("/a.html")];
    let first = Crawler::new(config.clone(), st.stores.clone()).unwrap().run(&seeds, &NoProgress).await.unwrap();
    println!("{first}");
    assert_eq!((first.fetched, first.disallowed.len(), site.hits("/a.html")), (0, 1, 0));
    assert_eq!(site.hits("/sitemap.xml"), 0, "no sitemap read without robots.txt");

    site.set("/robots.txt", Response::html("User-agent: *\nDisallow: /vip/\n", "text/plain"));
    let second = Crawler::new(config, st.stores.clone()).unwrap().run(&seeds, &NoProgress).await.unwrap();
    println!("{second}");
    assert!(second.resumed);
    assert_eq!((second.disallowed.len(), site.hits("/a.html")), (0, 1), "{second}");
    assert!(st.stores.pages.find_page(&site.url("/a.html")).await.unwrap().is_some());
    assert_eq!(site.hits("/sitemap.xml"), 1, "the sitemaps are read once robots.txt is");
}
