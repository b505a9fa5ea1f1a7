//! One HTTP fetch with the crawler's rules: redirects followed by hand (every hop checked
//! against the address policy and robots.txt, at most `max_redirects`), a size cap enforced
//! while the body streams in, content types filtered, and transient failures retried with
//! exponential backoff.

use std::time::Duration;

use reqwest::header::{HeaderMap, CONTENT_LENGTH, CONTENT_TYPE, LOCATION};
use url::Url;

use super::policy::{AddressPolicy, PolicyRefusal};
use crate::error::IngestError;
use crate::url as zurl;

/// A fetched body.
#[derive(Debug, Clone)]
pub struct Fetched {
    /// The URL the redirects ended on.
    pub final_url: Url,
    /// HTTP status.
    pub status: u16,
    /// `Content-Type` header (empty when absent).
    pub content_type: String,
    /// The (decompressed) body.
    pub body: Vec<u8>,
    /// Redirect hops followed.
    pub redirects: u32,
    /// The address the response came from, when the connection reports it.
    pub remote_ip: Option<std::net::IpAddr>,
    /// The HTTP version and headers of the final response, as received (kept as the
    /// client gives them; a capture formats them only when it is made).
    pub version: reqwest::Version,
    /// See [`Fetched::version`].
    pub headers: HeaderMap,
}

impl Fetched {
    /// The request as sent for the final hop: its line and the headers zhiwen sets
    /// (`user_agent` is the crawler's), ending with the empty line (for a capture's WARC
    /// `request` record).
    pub fn request_head(&self, user_agent: &str) -> Vec<u8> {
        request_head(&self.final_url, user_agent)
    }

    /// The status line and every response header as received, ending with the empty
    /// line; the body being kept decoded, `Content-Encoding` and `Transfer-Encoding` are
    /// written as `X-Archive-Orig-*` and `Content-Length` is the decoded length (the
    /// convention of web archives), so any WARC reader reads the body as stored.
    pub fn response_head(&self) -> Vec<u8> {
        let status = reqwest::StatusCode::from_u16(self.status).unwrap_or(reqwest::StatusCode::OK);
        response_head(self.version, status, &self.headers, self.body.len())
    }
}

/// The status line and headers of a response (see [`Fetched::response_head`]), for a
/// body of `body_len` decoded bytes.
fn response_head(
    version: reqwest::Version,
    status: reqwest::StatusCode,
    headers: &HeaderMap,
    body_len: usize,
) -> Vec<u8> {
    let reason = status.canonical_reason().unwrap_or("");
    let mut head = format!("{version:?} {} {reason}\r\n", status.as_u16());
    for (name, value) in headers {
        let value = String::from_utf8_lossy(value.as_bytes());
        match name.as_str() {
            "content-encoding" | "transfer-encoding" | "content-length" => {
                head.push_str(&format!("x-archive-orig-{name}: {value}\r\n"));
            }
            _ => head.push_str(&format!("{name}: {value}\r\n")),
        }
    }
    head.push_str(&format!("content-length: {body_len}\r\n\r\n"));
    head.into_bytes()
}

/// The request line and headers zhiwen sends for `url` (see [`Fetched::request_head`]).
fn request_head(url: &Url, user_agent: &str) -> Vec<u8> {
    let mut target = url.path().to_owned();
    if let Some(q) = url.query() {
        target.push('?');
        target.push_str(q);
    }
    let host = match (url.host_str(), url.port()) {
        (Some(h), Some(p)) => format!("{h}:{p}"),
        (Some(h), None) => h.to_owned(),
        (None, _) => String::new(),
    };
    format!("GET {target} HTTP/1.1\r\nhost: {host}\r\nuser-agent: {user_agent}\r\naccept: */*\r\n\r\n").into_bytes()
}

/// The fetch rules.
#[derive(Debug, Clone)]
pub struct FetchRules {
    /// Which addresses may be contacted.
    pub policy: AddressPolicy,
    /// Redirect hops followed.
    pub max_redirects: u32,
    /// Body cap in bytes (after decompression).
    pub max_body_bytes: u64,
    /// Retries of transient failures.
    pub max_retries: u32,
    /// First retry delay (doubles each retry).
    pub backoff: Duration,
    /// Accept only HTML/text content types (false for robots.txt and sitemaps).
    pub pages_only: bool,
}

fn fetch_err(url: &Url, reason: impl Into<String>, retryable: bool) -> IngestError {
    IngestError::Fetch { url: url.to_string(), reason: reason.into(), retryable }
}

/// Turn a reqwest error into ours, recognising the resolver's policy refusal.
fn classify(url: &Url, e: reqwest::Error) -> IngestError {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(&e);
    while let Some(s) = source {
        if let Some(r) = s.downcast_ref::<PolicyRefusal>() {
            return IngestError::Forbidden { url: url.to_string(), addr: r.addrs.clone(), reason: r.reason };
        }
        source = s.source();
    }
    if e.is_timeout() {
        return fetch_err(url, "timed out", true);
    }
    if e.is_connect() {
        return fetch_err(url, format!("cannot connect: {}", root_cause(&e)), true);
    }
    if e.is_body() || e.is_decode() {
        return fetch_err(url, format!("body unreadable: {}", root_cause(&e)), true);
    }
    fetch_err(url, format!("request failed: {}", root_cause(&e)), true)
}

fn root_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut last = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        last = s.to_string();
        source = s.source();
    }
    last
}

/// Is this content type a page the crawler stores?
pub fn is_page_type(ctype: &str) -> bool {
    let t = ctype.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    t.is_empty() || t == "text/html" || t == "application/xhtml+xml" || t == "text/plain"
}

/// The validators of a conditional request: the `ETag` and `Last-Modified` of the last
/// full answer, sent back as `If-None-Match` and `If-Modified-Since`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Validators {
    /// The stored `ETag`.
    pub etag: Option<String>,
    /// The stored `Last-Modified`.
    pub last_modified: Option<String>,
}

impl Validators {
    /// The validators a response carries (`ETag`, `Last-Modified`), to send back next time.
    pub fn of(headers: &HeaderMap) -> Validators {
        let get = |name: reqwest::header::HeaderName| {
            headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim).filter(|v| !v.is_empty() && v.len() <= 500)
        };
        Validators {
            etag: get(reqwest::header::ETAG).map(str::to_owned),
            last_modified: get(reqwest::header::LAST_MODIFIED).map(str::to_owned),
        }
    }

    fn is_empty(&self) -> bool {
        self.etag.is_none() && self.last_modified.is_none()
    }
}

/// The answer to a conditional fetch.
#[derive(Debug, Clone)]
pub enum Conditional {
    /// `304 Not Modified`: the page is as it was when the validators were taken.
    NotModified,
    /// A full answer.
    Fetched(Box<Fetched>),
}

/// Fetch `url`, retrying transient failures. `allowed(url)` is asked before every hop
/// (robots.txt); a refusal ends the fetch with [`IngestError::Url`].
pub async fn fetch<A, F>(
    client: &reqwest::Client,
    url: &Url,
    rules: &FetchRules,
    allowed: A,
) -> Result<Fetched, IngestError>
where
    A: Fn(Url) -> F,
    F: std::future::Future<Output = Result<(), IngestError>>,
{
    match fetch_conditional(client, url, rules, &Validators::default(), allowed).await? {
        Conditional::Fetched(f) => Ok(*f),
        // Only an answer to validators may be a 304; one sent unasked is an error.
        Conditional::NotModified => Err(fetch_err(url, "HTTP 304 to a request without validators", false)),
    }
}

/// [`fetch`] as a conditional request: `If-None-Match` / `If-Modified-Since` from
/// `validators` on every hop, and a `304 Not Modified` answer is
/// [`Conditional::NotModified`] (cheap: no body). Without validators it is [`fetch`].
pub async fn fetch_conditional<A, F>(
    client: &reqwest::Client,
    url: &Url,
    rules: &FetchRules,
    validators: &Validators,
    allowed: A,
) -> Result<Conditional, IngestError>
where
    A: Fn(Url) -> F,
    F: std::future::Future<Output = Result<(), IngestError>>,
{
    let mut attempt = 0;
    loop {
        match fetch_once(client, url, rules, validators, &allowed).await {
            Err(e) if e.is_retryable() && attempt < rules.max_retries => {
                let delay = rules.backoff.saturating_mul(1 << attempt.min(10));
                attempt += 1;
                tracing::debug!(%url, attempt, error = %e, "retrying");
                tokio::time::sleep(delay).await;
            }
            other => return other,
        }
    }
}

async fn fetch_once<A, F>(
    client: &reqwest::Client,
    start: &Url,
    rules: &FetchRules,
    validators: &Validators,
    allowed: &A,
) -> Result<Conditional, IngestError>
where
    A: Fn(Url) -> F,
    F: std::future::Future<Output = Result<(), IngestError>>,
{
    let mut url = start.clone();
    let mut hops = 0u32;
    loop {
        rules.policy.check_url(&url)?;
        if hops > 0 {
            allowed(url.clone()).await?;
        }
        let mut request = client.get(url.clone());
        if let Some(etag) = &validators.etag {
            request = request.header(reqwest::header::IF_NONE_MATCH, etag);
        }
        if let Some(since) = &validators.last_modified {
            request = request.header(reqwest::header::IF_MODIFIED_SINCE, since);
        }
        let resp = request.send().await.map_err(|e| classify(&url, e))?;
        let status = resp.status();
        if status == reqwest::StatusCode::NOT_MODIFIED && !validators.is_empty() {
            return Ok(Conditional::NotModified);
        }
        if status.is_redirection() {
            let Some(loc) = resp.headers().get(LOCATION).and_then(|l| l.to_str().ok()) else {
                return Err(fetch_err(&url, format!("HTTP {} without a Location", status.as_u16()), false));
            };
            let next = zurl::resolve(&url, loc)
                .ok_or_else(|| fetch_err(&url, format!("redirect to an unusable location {loc:?}"), false))?;
            hops += 1;
            if hops > rules.max_redirects {
                return Err(fetch_err(start, format!("more than {} redirects", rules.max_redirects), false));
            }
            tracing::debug!(from = %url, to = %next, "redirect");
            url = next;
            continue;
        }
        if status.is_server_error() || status.as_u16() == 429 || status.as_u16() == 408 {
            return Err(fetch_err(&url, format!("HTTP {}", status.as_u16()), true));
        }
        if !status.is_success() {
            return Err(fetch_err(&url, format!("HTTP {}", status.as_u16()), false));
        }
        let content_type =
            resp.headers().get(CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("").trim().to_owned();
        if rules.pages_only && !is_page_type(&content_type) {
            return Err(fetch_err(&url, format!("content type {content_type} is not a page"), false));
        }
        if let Some(len) = resp.headers().get(CONTENT_LENGTH).and_then(|v| v.to_str().ok()?.parse::<u64>().ok()) {
            if len > rules.max_body_bytes {
                return Err(fetch_err(
                    &url,
                    format!("body of {len} bytes is above the cap of {} bytes", rules.max_body_bytes),
                    false,
                ));
            }
        }
        let remote_ip = resp.remote_addr().map(|a| a.ip());
        let (version, headers) = (resp.version(), resp.headers().clone());
        let body = read_capped(resp, &url, rules.max_body_bytes).await?;
        return Ok(Conditional::Fetched(Box::new(Fetched {
            final_url: url,
            status: status.as_u16(),
            content_type,
            body,
            redirects: hops,
            remote_ip,
            version,
            headers,
        })));
    }
}

/// Read the body, stopping as soon as it passes `cap` (after decompression, so a
/// compression bomb is cut as well).
async fn read_capped(mut resp: reqwest::Response, url: &Url, cap: u64) -> Result<Vec<u8>, IngestError> {
    let mut body = Vec::new();
    while let Some(chunk) = resp.chunk().await.map_err(|e| classify(url, e))? {
        if body.len() as u64 + chunk.len() as u64 > cap {
            return Err(fetch_err(url, format!("body is above the cap of {cap} bytes"), false));
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}
