//! The evidence capture of a live page by headless Chromium (`zhiwen_ingest::render`):
//! a full-page PNG and a PDF of a long Chinese page served on 127.0.0.1, the address
//! policy (a loopback URL refused by default; no request to any other host), and the
//! timeout. Skipped without Chromium unless `ZHIWEN_REQUIRE_SERVERS=1`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use url::Url;
use zhiwen_ingest::{find_chromium, render_page, AddressPolicy, RenderError, RenderOptions};

use crate::common::{serve, Response};

const LOOPBACK: AddressPolicy = AddressPolicy { allow_loopback: true, allow_private: false };

fn chromium() -> Option<PathBuf> {
    find_chromium().or_else(|| zhiwen_testkit::unavailable("Chromium", "no chromium on PATH"))
}

fn options(chromium: PathBuf) -> RenderOptions {
    RenderOptions { policy: LOOPBACK, max_height: 8000, ..RenderOptions::new(chromium) }
}

/// Width and height of a PNG, from its IHDR chunk.
fn png_size(png: &[u8]) -> (u32, u32) {
    assert!(png.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert_eq!(&png[12..16], b"IHDR");
    let be = |b: &[u8]| u32::from_be_bytes(b.try_into().unwrap());
    (be(&png[16..20]), be(&png[20..24]))
}

fn long_page() -> String {
    let mut h = String::from("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>第一章 风起</title></head>");
    h.push_str("<body style=\"margin:20px\"><h1>第一章 风起</h1>");
    for i in 0..300 {
        h.push_str(&format!("<p>第{i}段：话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。</p>"));
    }
    h.push_str("</body></html>");
    h
}

#[tokio::test]
async fn a_long_chinese_page_is_captured_whole_as_png_and_pdf() {
    let Some(chromium) = chromium() else { return };
    let page = long_page();
    let site = serve(move |_| {
        let mut r = HashMap::new();
        r.insert("/start".into(), Response::redirect("/book/1.html"));
        r.insert("/book/1.html".into(), Response::html(page, "text/html; charset=utf-8"));
        r
    })
    .await;
    let options = options(chromium);
    let started = Instant::now();
    let rendered = render_page(&Url::parse(&site.url("/start")).unwrap(), &options).await.expect("rendered");
    eprintln!("rendered in {:?}: {rendered:?}", started.elapsed());

    let (width, height) = png_size(&rendered.screenshot_png);
    assert_eq!(width, 1280);
    assert!(height > 900 && height <= options.max_height, "height {height}");
    assert!(rendered.print_pdf.starts_with(b"%PDF-"));
    assert_eq!(rendered.final_url, site.url("/book/1.html"));
    assert_eq!(rendered.remote_ip, Some("127.0.0.1".parse().unwrap()));
    assert_eq!(rendered.status, Some(200));
    assert!(rendered.loaded);
    assert_eq!(site.hits("/book/1.html"), 1);
}

#[tokio::test]
async fn the_height_is_capped() {
    let Some(chromium) = chromium() else { return };
    let page = long_page();
    let site = serve(move |_| HashMap::from([("/".into(), Response::html(page, "text/html; charset=utf-8"))])).await;
    let options = RenderOptions { max_height: 1500, ..options(chromium) };
    let rendered = render_page(&Url::parse(&site.url("/")).unwrap(), &options).await.expect("rendered");
    assert_eq!(png_size(&rendered.screenshot_png), (1280, 1500));

    let options = RenderOptions { max_bytes: 1000, ..options };
    let e = render_page(&Url::parse(&site.url("/")).unwrap(), &options).await.unwrap_err();
    assert!(matches!(e, RenderError::TooLarge { what: "screenshot", .. }), "{e}");
}

#[tokio::test]
async fn the_default_policy_refuses_loopback_before_launching() {
    // A Chromium that does not exist: reaching the launch would be a Launch error.
    let options = RenderOptions::new("/nonexistent/chromium");
    let site = serve(|_| HashMap::from([("/".into(), Response::html("<p>x</p>", "text/html"))])).await;
    for url in [site.url("/"), format!("http://localhost:{}/", site.port)] {
        let e = render_page(&Url::parse(&url).unwrap(), &options).await.unwrap_err();
        assert!(matches!(e, RenderError::Forbidden { reason: "loopback address", .. }), "{url}: {e}");
    }
    assert_eq!(site.total_hits(), 0);
}

#[tokio::test]
async fn the_page_cannot_reach_another_host() {
    let Some(chromium) = chromium() else { return };
    let beacon = serve(|_| HashMap::new()).await;
    let other = format!("http://localhost:{}", beacon.port);
    let page = format!(
        "<!DOCTYPE html><html><body><p>盗版章节</p><img src=\"/own.png\">\
         <img src=\"{other}/beacon.png\"><iframe src=\"{other}/frame\"></iframe>\
         <link rel=\"stylesheet\" href=\"{other}/style.css\">\
         <script>fetch('{other}/fetch').catch(() => {{}}); new Image().src = '{other}/script-img';</script>\
         </body></html>"
    );
    let site = serve(move |_| {
        HashMap::from([
            ("/".into(), Response::html(page, "text/html; charset=utf-8")),
            ("/own.png".into(), Response::html("not an image", "image/png")),
            ("/away".into(), Response::redirect(&format!("{other}/redirected"))),
        ])
    })
    .await;
    let options = options(chromium);
    let rendered = render_page(&Url::parse(&site.url("/")).unwrap(), &options).await.expect("rendered");
    assert!(rendered.print_pdf.starts_with(b"%PDF-"));
    // The page's own host is reachable (its image was asked for), nothing else is.
    assert_eq!(site.hits("/own.png"), 1);
    assert_eq!(beacon.total_hits(), 0, "{:?}", beacon.log.lock().unwrap().keys().collect::<Vec<_>>());

    // An error page is captured as shown, with its status.
    let missing = render_page(&Url::parse(&site.url("/missing")).unwrap(), &options).await.expect("rendered");
    assert_eq!(missing.status, Some(404));

    // A redirect to another host fails instead of being followed.
    let e = render_page(&Url::parse(&site.url("/away")).unwrap(), &options).await.unwrap_err();
    assert!(matches!(&e, RenderError::Navigation { reason, .. } if reason.contains("NAME_NOT_RESOLVED")), "{e}");
    assert_eq!(beacon.total_hits(), 0);
}

#[tokio::test]
async fn the_timeout_is_honoured() {
    let Some(chromium) = chromium() else { return };
    let site = serve(|_| {
        let mut never = Response::html("<p>late</p>", "text/html");
        never.delay = Duration::from_secs(600);
        HashMap::from([("/".into(), never)])
    })
    .await;
    let options = RenderOptions { timeout: Duration::from_secs(3), ..options(chromium) };
    let started = Instant::now();
    let e = render_page(&Url::parse(&site.url("/")).unwrap(), &options).await.unwrap_err();
    let took = started.elapsed();
    assert!(matches!(e, RenderError::Timeout { .. }), "{e}");
    assert!(took < Duration::from_secs(10), "took {took:?}");
    assert_eq!(site.hits("/"), 1, "the page was asked for");
}

#[tokio::test]
async fn a_page_still_loading_is_captured_as_it_stands() {
    let Some(chromium) = chromium() else { return };
    let site = serve(|_| {
        let mut never = Response::html("not an image", "image/png");
        never.delay = Duration::from_secs(600);
        HashMap::from([
            ("/".into(), Response::html("<p>正文还在</p><img src=\"/slow.png\">", "text/html; charset=utf-8")),
            ("/slow.png".into(), never),
        ])
    })
    .await;
    let options = RenderOptions { timeout: Duration::from_secs(12), ..options(chromium) };
    let started = Instant::now();
    let rendered = render_page(&Url::parse(&site.url("/")).unwrap(), &options).await.expect("rendered");
    assert!(started.elapsed() < options.timeout, "took {:?}", started.elapsed());
    assert!(!rendered.loaded);
    assert_eq!(png_size(&rendered.screenshot_png).0, 1280);
    assert!(rendered.print_pdf.starts_with(b"%PDF-"));
    assert_eq!(site.hits("/slow.png"), 1);
}

#[tokio::test]
async fn a_browser_that_cannot_start_or_exits_is_an_error_not_a_hang() {
    let site = serve(|_| HashMap::from([("/".into(), Response::html("<p>x</p>", "text/html"))])).await;
    let url = Url::parse(&site.url("/")).unwrap();
    let e = render_page(&url, &options("/nonexistent/chromium".into())).await.unwrap_err();
    assert!(matches!(e, RenderError::Launch { .. }), "{e}");
    let options = RenderOptions { timeout: Duration::from_secs(20), ..options("/bin/true".into()) };
    let e = render_page(&url, &options).await.unwrap_err();
    assert!(matches!(&e, RenderError::Browser { reason, .. } if reason.contains("closed the pipe")), "{e}");
}

#[tokio::test]
async fn an_ipv6_literal_page_is_confined_to_its_address() {
    let Some(chromium) = chromium() else { return };
    let Ok(listener) = tokio::net::TcpListener::bind("[::1]:0").await else {
        eprintln!("skipping: no IPv6 loopback on this machine");
        return;
    };
    let port = listener.local_addr().unwrap().port();
    let server = tokio::spawn(async move {
        let mut paths = Vec::new();
        while let Ok((mut sock, _)) = listener.accept().await {
            let mut head = vec![0u8; 4096];
            let n = sock.read(&mut head).await.unwrap_or(0);
            let head = String::from_utf8_lossy(&head[..n]).into_owned();
            let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
            let body = if path == "/" { "<p>第六版</p><img src=\"/own.png\">" } else { "" };
            let response = format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\n\
                 Connection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = sock.write_all(response.as_bytes()).await;
            paths.push(path);
            if paths.iter().any(|p| p == "/own.png") {
                return paths;
            }
        }
        paths
    });
    let url = Url::parse(&format!("http://[::1]:{port}/")).unwrap();
    let rendered = render_page(&url, &options(chromium)).await.expect("rendered");
    assert_eq!(rendered.final_url, url.as_str());
    assert_eq!(rendered.remote_ip, Some("::1".parse().unwrap()));
    let paths = tokio::time::timeout(Duration::from_secs(5), server).await.expect("own.png asked for").unwrap();
    assert_eq!(paths[0], "/");
}

#[tokio::test]
async fn a_page_with_dialogs_is_captured() {
    let Some(chromium) = chromium() else { return };
    let page = "<p>弹窗广告</p><script>alert('加群'); confirm('ok?'); prompt('name');</script><p>正文</p>";
    let site = serve(move |_| HashMap::from([("/".into(), Response::html(page, "text/html; charset=utf-8"))])).await;
    let options = RenderOptions { timeout: Duration::from_secs(15), ..options(chromium) };
    let rendered = render_page(&Url::parse(&site.url("/")).unwrap(), &options).await.expect("rendered");
    // An unanswered dialog would hold the load event until the capture gives up on it.
    assert!(rendered.loaded, "{rendered:?}");
}
