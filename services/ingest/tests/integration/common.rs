//! Shared fixtures: the corpus, an embedded store, and a tiny HTTP server.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use zhiwen_store::{StoreConfig, Stores};

/// One chapter of a classic novel from the test corpus.
#[derive(Debug, Clone)]
pub struct Chapter {
    pub title: String,
    pub text: String,
}

/// The first `n` chapters of the classics (public domain).
pub fn classics(n: usize) -> Vec<Chapter> {
    let path = zhiwen_testkit::corpus::file(zhiwen_testkit::corpus::CLASSICS);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines()
        .take(n)
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            Chapter { title: v["title"].as_str().unwrap().to_owned(), text: v["text"].as_str().unwrap().to_owned() }
        })
        .collect()
}

/// Real ad/watermark lines of pirate sites.
pub fn ad_lines() -> Vec<String> {
    let path = zhiwen_testkit::corpus::file(zhiwen_testkit::corpus::AD_LINES);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    text.lines().skip(1).filter_map(|l| l.splitn(3, '\t').nth(2)).map(str::to_owned).take(20).collect()
}

/// The first run of 8 Han characters of `text`: identifies a chapter, and survives
/// canonicalisation (no punctuation, which NFKC changes).
pub fn probe(text: &str) -> String {
    let chars: Vec<char> = text.chars().collect();
    let han = |c: char| ('\u{4e00}'..='\u{9fff}').contains(&c);
    let mut i = 0;
    while i + 8 <= chars.len() {
        if chars[i..i + 8].iter().all(|&c| han(c)) {
            return chars[i..i + 8].iter().collect();
        }
        i += 1;
    }
    panic!("no run of 8 Han characters")
}

pub struct TestStore {
    pub stores: Stores,
    pub dir: tempfile::TempDir,
}

pub async fn store() -> TestStore {
    let dir = tempfile::tempdir().unwrap();
    let stores = zhiwen_store::open(&StoreConfig::embedded(dir.path().join("data"))).await.unwrap();
    TestStore { stores, dir }
}

/// A canned response.
#[derive(Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
    /// Wait this long before answering.
    pub delay: Duration,
    /// Send the body without a Content-Length, in chunks (the size is unknown up front).
    pub stream: bool,
}

impl Response {
    pub fn html(body: impl Into<Vec<u8>>, content_type: &str) -> Self {
        Response {
            status: 200,
            headers: vec![("Content-Type".into(), content_type.into())],
            body: body.into(),
            delay: Duration::ZERO,
            stream: false,
        }
    }
    pub fn redirect(to: &str) -> Self {
        Response {
            status: 302,
            headers: vec![("Location".into(), to.into())],
            body: Vec::new(),
            delay: Duration::ZERO,
            stream: false,
        }
    }
    pub fn status(status: u16) -> Self {
        Response {
            status,
            headers: vec![("Content-Type".into(), "text/html".into())],
            body: b"<p>error</p>".to_vec(),
            delay: Duration::ZERO,
            stream: false,
        }
    }
}

/// Requests seen by the server: path -> arrival times.
pub type Log = Arc<Mutex<HashMap<String, Vec<Instant>>>>;

/// A tiny HTTP/1.1 server on 127.0.0.1 (one request per connection) serving `routes`.
pub struct Server {
    pub port: u16,
    pub log: Log,
    routes: Arc<Mutex<HashMap<String, Response>>>,
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Server {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl Server {
    /// Answer `path` with `response` from now on.
    pub fn set(&self, path: &str, response: Response) {
        self.routes.lock().unwrap().insert(path.to_owned(), response);
    }
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }
    pub fn hits(&self, path: &str) -> usize {
        self.log.lock().unwrap().get(path).map_or(0, Vec::len)
    }
    pub fn total_hits(&self) -> usize {
        self.log.lock().unwrap().iter().filter(|(k, _)| !k.starts_with("UA:")).map(|(_, v)| v.len()).sum()
    }
    pub fn user_agents(&self) -> Vec<String> {
        self.log.lock().unwrap().keys().filter_map(|k| k.strip_prefix("UA:")).map(str::to_owned).collect()
    }
    /// Arrival times of requests whose path starts with `prefix`, sorted.
    pub fn arrivals(&self, prefix: &str) -> Vec<Instant> {
        let mut v: Vec<Instant> = self
            .log
            .lock()
            .unwrap()
            .iter()
            .filter(|(k, _)| k.starts_with(prefix))
            .flat_map(|(_, v)| v.clone())
            .collect();
        v.sort();
        v
    }
}

pub async fn serve(build: impl FnOnce(u16) -> HashMap<String, Response>) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let routes = build(port);
    let log: Log = Arc::default();
    let routes = Arc::new(Mutex::new(routes));
    let routes2 = routes.clone();
    let log2 = log.clone();
    let task = tokio::spawn(async move {
        loop {
            let Ok((mut sock, _)) = listener.accept().await else { break };
            let routes = routes2.clone();
            let log = log2.clone();
            tokio::spawn(async move {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                while !buf.windows(4).any(|w| w == b"\r\n\r\n") {
                    match sock.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                    if buf.len() > 64 * 1024 {
                        return;
                    }
                }
                let head = String::from_utf8_lossy(&buf).into_owned();
                let path = head.split_whitespace().nth(1).unwrap_or("/").to_owned();
                let ua = head
                    .lines()
                    .find_map(|l| l.strip_prefix("User-Agent: ").or_else(|| l.strip_prefix("user-agent: ")))
                    .unwrap_or("")
                    .to_owned();
                {
                    let mut log = log.lock().unwrap();
                    log.entry(path.clone()).or_default().push(Instant::now());
                    log.entry(format!("UA:{ua}")).or_default().push(Instant::now());
                }
                let resp = routes.lock().unwrap().get(&path).cloned().unwrap_or_else(|| Response::status(404));
                if !resp.delay.is_zero() {
                    tokio::time::sleep(resp.delay).await;
                }
                let reason = match resp.status {
                    200 => "OK",
                    301 => "Moved Permanently",
                    302 => "Found",
                    404 => "Not Found",
                    500 => "Internal Server Error",
                    _ => "Whatever",
                };
                let mut out = format!("HTTP/1.1 {} {reason}\r\nConnection: close\r\n", resp.status);
                for (k, v) in &resp.headers {
                    out.push_str(&format!("{k}: {v}\r\n"));
                }
                if resp.stream {
                    out.push_str("Transfer-Encoding: chunked\r\n\r\n");
                    if sock.write_all(out.as_bytes()).await.is_err() {
                        return;
                    }
                    for piece in resp.body.chunks(64 * 1024) {
                        let frame = format!("{:x}\r\n", piece.len());
                        if sock.write_all(frame.as_bytes()).await.is_err()
                            || sock.write_all(piece).await.is_err()
                            || sock.write_all(b"\r\n").await.is_err()
                        {
                            return;
                        }
                    }
                    let _ = sock.write_all(b"0\r\n\r\n").await;
                } else {
                    out.push_str(&format!("Content-Length: {}\r\n\r\n", resp.body.len()));
                    if sock.write_all(out.as_bytes()).await.is_err() {
                        return;
                    }
                    let _ = sock.write_all(&resp.body).await;
                }
                let _ = sock.shutdown().await;
            });
        }
    });
    Server { port, log, routes, task }
}

/// HTML of a pirate chapter page: navigation, ads between paragraphs, footer.
pub fn pirate_page(title: &str, text: &str, ads: &[String], links: &[String], meta_charset: Option<&str>) -> String {
    let mut h = String::from("<!DOCTYPE html><html><head>");
    if let Some(cs) = meta_charset {
        h.push_str(&format!("<meta charset=\"{cs}\">"));
    }
    h.push_str(&format!("<title>{title}</title></head><body>"));
    h.push_str("<div class=\"nav\"><a href=\"/\">首页</a> &gt; <a href=\"/list.html\">书库</a></div>");
    h.push_str(&format!("<h1>{title}</h1><div id=\"content\">"));
    for (i, para) in text.split('\n').filter(|p| !p.trim().is_empty()).enumerate() {
        h.push_str(&format!("<p>{}</p>", para.trim()));
        if i % 5 == 2 {
            if let Some(ad) = ads.get(i % ads.len().max(1)) {
                h.push_str(&format!("<p class=\"ad\">{ad}</p>"));
            }
        }
    }
    h.push_str("</div><div class=\"links\">");
    for l in links {
        h.push_str(&format!("<a href=\"{l}\">{l}</a> "));
    }
    h.push_str("</div><div class=\"footer\">本站所有小说均来自网络 版权归原作者所有</div></body></html>");
    h
}
