//! What zhiwen saw, as WARC/1.1 (ISO 28500:2017): one HTTP exchange written as a
//! `request` record and its `response` record, with the target URI after redirects, the
//! IP address connected to and the fetch time. Any WARC reader (zhiwen's own importer
//! among them) reads the capture back; its SHA-256 is what the evidence log commits to.
//!
//! Written by hand rather than with the `warc` crate: a record is a few header lines, and
//! a capture needs what that crate does not give: record ids derived from the content (so
//! writing the same exchange twice gives the same bytes, and a capture is
//! content-addressed), no clock of its own (the time is an input), and no dependency on
//! `chrono` and an old `uuid` in this pure crate.

use std::net::IpAddr;

use sha2::{Digest, Sha256};

/// One HTTP exchange as fetched.
#[derive(Debug, Clone, Copy)]
pub struct HttpExchange<'a> {
    /// The URL the response came from (after redirects).
    pub target_uri: &'a str,
    /// The address connected to, when known.
    pub ip: Option<IpAddr>,
    /// When the response was received, RFC 3339 UTC (`2026-11-26T03:00:00Z`).
    pub date: &'a str,
    /// The request line and headers, ending with the empty line (`GET / HTTP/1.1\r\n...\r\n\r\n`).
    pub request_head: &'a [u8],
    /// The status line and headers, ending with the empty line.
    pub response_head: &'a [u8],
    /// The response body.
    pub body: &'a [u8],
}

/// The exchange as two WARC/1.1 records, request then response; the same exchange always
/// gives the same bytes.
pub fn exchange_records(x: &HttpExchange<'_>) -> Vec<u8> {
    let response_block = [x.response_head, x.body].concat();
    let response_id = record_id(&[b"response", x.target_uri.as_bytes(), x.date.as_bytes(), &response_block]);
    let request_id = record_id(&[b"request", x.target_uri.as_bytes(), x.date.as_bytes(), x.request_head]);
    let mut out = Vec::with_capacity(response_block.len() + x.request_head.len() + 1024);
    let common = |kind: &str, id: &str, other: &str, block: &[u8], payload: Option<&[u8]>| {
        let mut h = format!(
            "WARC/1.1\r\nWARC-Type: {kind}\r\nWARC-Record-ID: {id}\r\nWARC-Date: {}\r\nWARC-Target-URI: {}\r\n",
            x.date, x.target_uri
        );
        if let Some(ip) = x.ip {
            h.push_str(&format!("WARC-IP-Address: {ip}\r\n"));
        }
        h.push_str(&format!("WARC-Concurrent-To: {other}\r\n"));
        h.push_str(&format!("WARC-Block-Digest: sha256:{}\r\n", hex::encode(Sha256::digest(block))));
        if let Some(p) = payload {
            h.push_str(&format!("WARC-Payload-Digest: sha256:{}\r\n", hex::encode(Sha256::digest(p))));
        }
        h.push_str(&format!(
            "Content-Type: application/http;msgtype={kind}\r\nContent-Length: {}\r\n\r\n",
            block.len()
        ));
        h
    };
    for (kind, id, other, block, payload) in [
        ("request", &request_id, &response_id, x.request_head, None),
        ("response", &response_id, &request_id, &response_block[..], Some(x.body)),
    ] {
        out.extend_from_slice(common(kind, id, other, block, payload).as_bytes());
        out.extend_from_slice(block);
        out.extend_from_slice(b"\r\n\r\n");
    }
    out
}

/// A stored record as one WARC/1.1 `resource` record: what zhiwen kept of a page it did
/// not fetch itself (an import, an API submission), or of a page whose site no longer
/// answers, byte for byte as stored, with the time it was stored (`date`) and its type.
pub fn resource_record(target_uri: &str, date: &str, content_type: &str, body: &[u8]) -> Vec<u8> {
    let id = record_id(&[b"resource", target_uri.as_bytes(), date.as_bytes(), content_type.as_bytes(), body]);
    let digest = hex::encode(Sha256::digest(body));
    let mut out = format!(
        "WARC/1.1\r\nWARC-Type: resource\r\nWARC-Record-ID: {id}\r\nWARC-Date: {date}\r\nWARC-Target-URI: {target_uri}\r\nWARC-Block-Digest: sha256:{digest}\r\nWARC-Payload-Digest: sha256:{digest}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out.extend_from_slice(b"\r\n\r\n");
    out
}

/// A record id from what the record holds: `<urn:uuid:...>` of its SHA-256 (version 8,
/// RFC 9562's custom layout), so a capture written twice is the same bytes.
fn record_id(parts: &[&[u8]]) -> String {
    let mut h = Sha256::new();
    for p in parts {
        h.update((p.len() as u64).to_be_bytes());
        h.update(p);
    }
    let mut b: [u8; 16] = h.finalize()[..16].try_into().unwrap_or([0; 16]);
    b[6] = (b[6] & 0x0f) | 0x80;
    b[8] = (b[8] & 0x3f) | 0x80;
    let x = hex::encode(b);
    format!("<urn:uuid:{}-{}-{}-{}-{}>", &x[..8], &x[8..12], &x[12..16], &x[16..20], &x[20..])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange() -> HttpExchange<'static> {
        HttpExchange {
            target_uri: "http://pirate.example/book/1.html",
            ip: Some("203.0.113.7".parse().expect("ip")),
            date: "2026-11-26T03:00:00Z",
            request_head: b"GET /book/1.html HTTP/1.1\r\nhost: pirate.example\r\n\r\n",
            response_head: b"HTTP/1.1 200 OK\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: 20\r\n\r\n",
            body: "<p>天下大势</p>".as_bytes(),
        }
    }

    #[test]
    fn two_linked_records_with_digests_and_lengths() {
        let w = exchange_records(&exchange());
        let text = String::from_utf8(w.clone()).expect("utf-8 here");
        assert_eq!(text.matches("WARC/1.1\r\n").count(), 2);
        let (req, resp) = text.split_once("\r\n\r\nWARC/1.1").expect("two records");
        assert!(req.contains("WARC-Type: request") && resp.contains("WARC-Type: response"));
        let id = |r: &str, h: &str| r.lines().find_map(|l| l.strip_prefix(h)).map(str::to_owned);
        // Each record names the other.
        assert_eq!(id(req, "WARC-Concurrent-To: "), id(resp, "WARC-Record-ID: "));
        assert_eq!(id(resp, "WARC-Concurrent-To: "), id(req, "WARC-Record-ID: "));
        assert!(resp.contains("WARC-IP-Address: 203.0.113.7\r\n"));
        let body_digest = hex::encode(Sha256::digest("<p>天下大势</p>".as_bytes()));
        assert!(resp.contains(&format!("WARC-Payload-Digest: sha256:{body_digest}")));
        // Content-Length counts the block: the response head and the body.
        let x = exchange();
        let len = x.response_head.len() + x.body.len();
        assert!(resp.contains(&format!("Content-Length: {len}\r\n")), "{resp}");
        assert!(w.ends_with(b"</p>\r\n\r\n"));
    }

    #[test]
    fn the_same_exchange_gives_the_same_bytes_and_another_time_other_ids() {
        assert_eq!(exchange_records(&exchange()), exchange_records(&exchange()));
        let later = HttpExchange { date: "2026-11-27T03:00:00Z", ..exchange() };
        let ids = |w: Vec<u8>| {
            String::from_utf8(w)
                .expect("utf-8")
                .lines()
                .filter_map(|l| l.strip_prefix("WARC-Record-ID: ").map(str::to_owned))
                .collect::<Vec<_>>()
        };
        let (a, b) = (ids(exchange_records(&exchange())), ids(exchange_records(&later)));
        assert_eq!(a.len(), 2);
        assert!(a.iter().all(|id| !b.contains(id)), "{a:?} {b:?}");
        assert!(a[0].starts_with("<urn:uuid:") && a[0].as_bytes()[24] == b'8', "version 8: {}", a[0]);
    }
    #[test]
    fn a_stored_record_is_one_resource_record_of_the_exact_bytes() {
        let body = "<p>天下大势</p>".as_bytes();
        let w = resource_record("http://pirate.example/1", "2026-11-26T03:00:00Z", "text/html; charset=utf-8", body);
        let text = String::from_utf8(w.clone()).expect("utf-8 here");
        assert_eq!(text.matches("WARC/1.1\r\n").count(), 1);
        assert!(
            text.contains("WARC-Type: resource\r\n") && text.contains("Content-Type: text/html; charset=utf-8\r\n")
        );
        assert!(text.contains(&format!("Content-Length: {}\r\n\r\n", body.len())));
        assert!(w.ends_with(&[body, b"\r\n\r\n"].concat()));
        assert_eq!(
            w,
            resource_record("http://pirate.example/1", "2026-11-26T03:00:00Z", "text/html; charset=utf-8", body)
        );
    }
}
