//! A small web site on 127.0.0.1 whose pages can be changed, replaced by an error or
//! taken down while it runs: the "pirate site" of the end-to-end tests (crawl, capture,
//! re-check, watched sites). A real HTTP/1.1 server on a free port (one thread per
//! connection, each answered and closed), not a mock of the client. Every answer carries
//! an `ETag` and a `Last-Modified` that change with the page, and a conditional request
//! whose validator still holds is answered `304 Not Modified`.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// One page served: status, media type, body, and its version (the validators).
#[derive(Clone)]
struct Page {
    status: u16,
    content_type: String,
    body: String,
    version: u64,
}

impl Page {
    fn etag(&self) -> String {
        format!("\"v{}\"", self.version)
    }

    fn last_modified(&self) -> String {
        let v = self.version;
        format!("Thu, 01 Jan 2026 {:02}:{:02}:{:02} GMT", v / 3600 % 24, v / 60 % 60, v % 60)
    }
}

/// Requests seen per path: `(all, answered 304)`.
type Hits = Arc<Mutex<HashMap<String, (u64, u64)>>>;

/// The site. Paths not set (robots.txt too) answer 404.
pub struct Site {
    port: u16,
    pages: Arc<Mutex<HashMap<String, Page>>>,
    hits: Hits,
    versions: std::sync::atomic::AtomicU64,
    down: Arc<AtomicBool>,
    load: Arc<Load>,
}

/// Requests being answered, the most at once, and how long each answer waits.
#[derive(Default)]
struct Load {
    in_flight: AtomicU64,
    max_in_flight: AtomicU64,
    latency_ms: AtomicU64,
}

impl Site {
    /// Start an empty site.
    pub fn start() -> Site {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().expect("local address").port();
        let pages: Arc<Mutex<HashMap<String, Page>>> = Arc::new(Mutex::new(HashMap::new()));
        let served = pages.clone();
        let hits: Hits = Arc::new(Mutex::new(HashMap::new()));
        let counted = hits.clone();
        let down = Arc::new(AtomicBool::new(false));
        let stop = down.clone();
        let load = Arc::new(Load::default());
        let measured = load.clone();
        // Accepts without blocking, so that `shut_down` can close the port.
        listener.set_nonblocking(true).expect("a non-blocking listener");
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                let stream = match listener.accept() {
                    Ok((stream, _)) => stream,
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                        std::thread::sleep(Duration::from_millis(5));
                        continue;
                    }
                    Err(_) => continue,
                };
                if stream.set_nonblocking(false).is_err() {
                    continue;
                }
                let served = served.clone();
                let counted = counted.clone();
                let measured = measured.clone();
                std::thread::spawn(move || {
                    let Ok(read_half) = stream.try_clone() else { return };
                    let mut reader = std::io::BufReader::new(read_half);
                    let mut line = String::new();
                    if reader.read_line(&mut line).is_err() {
                        return;
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    let (mut if_none_match, mut if_modified_since) = (None, None);
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).map_or(true, |n| n == 0) || h == "\r\n" {
                            break;
                        }
                        if let Some((name, value)) = h.split_once(':') {
                            let value = value.trim().to_owned();
                            match name.trim().to_ascii_lowercase().as_str() {
                                "if-none-match" => if_none_match = Some(value),
                                "if-modified-since" => if_modified_since = Some(value),
                                _ => {}
                            }
                        }
                    }
                    // In flight from the request read until its answer starts (before the
                    // client can see it, so a next request never overlaps this one falsely).
                    let now = measured.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
                    measured.max_in_flight.fetch_max(now, Ordering::SeqCst);
                    let latency = measured.latency_ms.load(Ordering::SeqCst);
                    if latency > 0 {
                        std::thread::sleep(Duration::from_millis(latency));
                    }
                    measured.in_flight.fetch_sub(1, Ordering::SeqCst);
                    let found = served.lock().map(|p| p.get(&path).cloned()).unwrap_or(None);
                    let mut stream = stream;
                    let Some(page) = found else {
                        let _ = write!(
                            stream,
                            "HTTP/1.1 404 X\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: 8\r\nConnection: close\r\n\r\nnot here"
                        );
                        return;
                    };
                    // If-None-Match wins over If-Modified-Since (RFC 9110, 13.2.2).
                    let unchanged = page.status == 200
                        && match (&if_none_match, &if_modified_since) {
                            (Some(tag), _) => tag.split(',').any(|t| t.trim() == page.etag()),
                            (None, Some(since)) => *since == page.last_modified(),
                            (None, None) => false,
                        };
                    if let Ok(mut hits) = counted.lock() {
                        let h = hits.entry(path.clone()).or_default();
                        h.0 += 1;
                        h.1 += u64::from(unchanged);
                    }
                    if unchanged {
                        let _ = write!(
                            stream,
                            "HTTP/1.1 304 Not Modified\r\nETag: {}\r\nConnection: close\r\n\r\n",
                            page.etag()
                        );
                        return;
                    }
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {} X\r\nContent-Type: {}\r\nETag: {}\r\nLast-Modified: {}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{}",
                        page.status,
                        page.content_type,
                        page.etag(),
                        page.last_modified(),
                        page.body.len(),
                        page.body
                    );
                });
            }
        });
        Site { port, pages, hits, versions: std::sync::atomic::AtomicU64::new(0), down, load }
    }

    /// Close the port for good: from now on nothing listens (a connection is refused), as
    /// when a site's host is gone.
    pub fn shut_down(&self) {
        self.down.store(true, Ordering::SeqCst);
        // The accept loop sees the flag within one poll and drops the listener.
        std::thread::sleep(Duration::from_millis(50));
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The URL of `path` (`/book/1.html`).
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Serve `body` with `status` at `path` from now on, as UTF-8 HTML.
    pub fn set(&self, path: &str, status: u16, body: String) {
        self.set_typed(path, status, "text/html; charset=utf-8", body);
    }

    /// Serve `body` with `status` and `content_type` at `path` from now on (a feed, a
    /// sitemap, robots.txt). The page gets new validators (`ETag`, `Last-Modified`)
    /// unless the body and type are the same as served already.
    pub fn set_typed(&self, path: &str, status: u16, content_type: &str, body: String) {
        if let Ok(mut pages) = self.pages.lock() {
            if let Some(p) = pages.get(path) {
                if p.status == status && p.content_type == content_type && p.body == body {
                    return;
                }
            }
            let version = self.versions.fetch_add(1, Ordering::SeqCst) + 1;
            pages.insert(path.to_owned(), Page { status, content_type: content_type.to_owned(), body, version });
        }
    }

    /// Requests made for `path` so far.
    pub fn hits(&self, path: &str) -> u64 {
        self.hits.lock().map(|h| h.get(path).map_or(0, |c| c.0)).unwrap_or(0)
    }

    /// Requests for `path` answered `304 Not Modified` so far.
    pub fn not_modified(&self, path: &str) -> u64 {
        self.hits.lock().map(|h| h.get(path).map_or(0, |c| c.1)).unwrap_or(0)
    }

    /// Wait `latency` before each answer from now on (so that requests made at once overlap).
    pub fn set_latency(&self, latency: Duration) {
        self.load.latency_ms.store(u64::try_from(latency.as_millis()).unwrap_or(u64::MAX), Ordering::SeqCst);
    }

    /// The most requests answered at once so far.
    pub fn max_in_flight(&self) -> u64 {
        self.load.max_in_flight.load(Ordering::SeqCst)
    }

    /// Take `path` down (404 from now on).
    pub fn remove(&self, path: &str) {
        if let Ok(mut pages) = self.pages.lock() {
            pages.remove(path);
        }
    }
}
