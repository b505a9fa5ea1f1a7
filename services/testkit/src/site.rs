//! A small web site on 127.0.0.1 whose pages can be changed, replaced by an error or
//! taken down while it runs: the "pirate site" of the end-to-end tests (crawl, capture,
//! re-check). A real HTTP/1.1 server on a free port (one thread per connection, each
//! answered and closed), not a mock of the client.

use std::collections::HashMap;
use std::io::{BufRead, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// The site. Paths not set (robots.txt too) answer 404.
pub struct Site {
    port: u16,
    pages: Arc<Mutex<HashMap<String, (u16, String)>>>,
    down: Arc<AtomicBool>,
}

impl Site {
    /// Start an empty site.
    pub fn start() -> Site {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().expect("local address").port();
        let pages: Arc<Mutex<HashMap<String, (u16, String)>>> = Arc::new(Mutex::new(HashMap::new()));
        let served = pages.clone();
        let down = Arc::new(AtomicBool::new(false));
        let stop = down.clone();
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
                std::thread::spawn(move || {
                    let Ok(read_half) = stream.try_clone() else { return };
                    let mut reader = std::io::BufReader::new(read_half);
                    let mut line = String::new();
                    if reader.read_line(&mut line).is_err() {
                        return;
                    }
                    let path = line.split_whitespace().nth(1).unwrap_or("/").to_owned();
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).map_or(true, |n| n == 0) || h == "\r\n" {
                            break;
                        }
                    }
                    let found = served.lock().map(|p| p.get(&path).cloned()).unwrap_or(None);
                    let (status, body) = found.unwrap_or((404, "not here".to_owned()));
                    let mut stream = stream;
                    let _ = write!(
                        stream,
                        "HTTP/1.1 {status} X\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                        body.len()
                    );
                });
            }
        });
        Site { port, pages, down }
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

    /// Serve `body` with `status` at `path` from now on.
    pub fn set(&self, path: &str, status: u16, body: String) {
        if let Ok(mut pages) = self.pages.lock() {
            pages.insert(path.to_owned(), (status, body));
        }
    }

    /// Take `path` down (404 from now on).
    pub fn remove(&self, path: &str) {
        if let Ok(mut pages) = self.pages.lock() {
            pages.remove(path);
        }
    }
}
