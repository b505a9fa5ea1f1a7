//! `import pages`: pages collected elsewhere, from JSONL (`{"url", "html" or "text",
//! "fetched_at"?, "status"?}`), folders of saved `.html` files, and WARC / WARC.gz files.
//! Every page is canonicalised by the core (its canonical text is what is stored and
//! fingerprinted) and stored by normalised URL (the store's key) with its raw body and
//! detected charset. A page whose text equals another page's (a mirror) is stored under
//! its own URL like any other: every URL serving a copy is one to take down. The matcher
//! analyses the shared text once per task ([`zhiwen_store`] keeps one record per URL).

use std::cell::Cell;
use std::io::{BufRead, BufReader, Read};
use std::path::PathBuf;
use std::rc::Rc;

use serde_json::Value;
use zhiwen_core::canon::{self, InputFormat};
use zhiwen_core::params::CanonParams;
use zhiwen_store::{NewPage, Outcome, PageFormat, PageSource, Stores, Timestamp};

use crate::error::{IngestError, Result};
use crate::files::{self, Feed, InputFile, Item};
use crate::html;
use crate::options::{ImportLimits, ImportOptions, RATIO_GRACE_BYTES};
use crate::report::{ImportSummary, Progress};
use crate::url as zurl;
use crate::warc;
pub use crate::warc::GzDamage;
use crate::works::check_text_like;

const PAGE_EXTENSIONS: &[&str] = &["jsonl", "ndjson", "html", "htm", "xhtml", "warc", "warc.gz"];

/// Import pages from JSONL, folders of saved HTML and WARC files; see the module
/// documentation. Returns the summary; an error only when the store keeps failing.
pub async fn import_pages(
    stores: &Stores,
    paths: &[PathBuf],
    opts: &ImportOptions,
    progress: &dyn Progress,
) -> Result<ImportSummary> {
    let mut summary = ImportSummary::default();
    let inputs = files::collect(paths, &|ext| PAGE_EXTENSIONS.contains(&ext), &mut summary);
    progress.start("import pages", Some(inputs.iter().map(|f| f.size).sum()));
    let read_opts = opts.clone();
    let (mut rx, reader) = files::spawn_reader(move |feed| {
        for f in &inputs {
            if !feed.send(Item::File(f.display())) {
                return;
            }
            read_file(f, &read_opts, feed);
        }
    });
    let mut batch: Vec<(String, NewPage)> = Vec::new();
    while let Some(items) = rx.recv().await {
        for item in items {
            let Some((name, page)) = files::route(item, &mut summary, progress) else { continue };
            // The store refuses a batch that names one URL twice: flush first.
            if batch.iter().any(|(_, p)| p.url == page.url) {
                store_batch(stores, std::mem::take(&mut batch), &mut summary).await?;
            }
            batch.push((name, page));
            if batch.len() >= opts.batch_size.max(1) {
                store_batch(stores, std::mem::take(&mut batch), &mut summary).await?;
            }
        }
    }
    store_batch(stores, batch, &mut summary).await?;
    if let Err(e) = reader.await {
        summary.reject("reader", format!("the file reader stopped: {e}"));
    }
    progress.finish();
    Ok(summary)
}

/// Store pages (one transaction per batch; a batch with an invalid page is retried one by
/// one so only that page is rejected).
pub(crate) async fn store_batch(
    stores: &Stores,
    batch: Vec<(String, NewPage)>,
    summary: &mut ImportSummary,
) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    let pages: Vec<NewPage> = batch.iter().map(|(_, p)| p.clone()).collect();
    let results = match stores.pages.upsert_pages(&pages).await {
        Ok(r) => r.into_iter().map(Ok).collect::<Vec<_>>(),
        Err(e) if e.is_user_error() => {
            let mut out = Vec::with_capacity(batch.len());
            for (_, p) in &batch {
                match stores.pages.upsert_page(p).await {
                    Ok(r) => out.push(Ok(r)),
                    Err(e) if e.is_user_error() => out.push(Err(e)),
                    Err(e) => return Err(e.into()),
                }
            }
            out
        }
        Err(e) => return Err(e.into()),
    };
    for ((name, _), r) in batch.iter().zip(results) {
        match r {
            Ok(u) => {
                summary.count(u.outcome);
                if u.outcome != Outcome::Unchanged {
                    summary.changed.pages.push(u.id);
                }
            }
            Err(e) => summary.reject(name.clone(), e),
        }
    }
    Ok(())
}

/// A page as collected: its URL, raw body and what is known about it.
#[derive(Debug, Clone)]
pub struct RawPage<'a> {
    /// URL (normalised by [`build_page`]).
    pub url: &'a str,
    /// Raw body.
    pub body: Vec<u8>,
    /// HTML, text, or sniff.
    pub format: InputFormat,
    /// A declared charset (HTTP header, WARC header).
    pub charset_hint: Option<&'a str>,
    /// Fetch time.
    pub fetched_at: Timestamp,
    /// HTTP status, if fetched over HTTP.
    pub http_status: Option<u16>,
    /// Provenance.
    pub source: PageSource,
}

/// A page built by [`build_page`], with what happened to it on the way.
#[derive(Debug, Clone)]
pub struct BuiltPage {
    /// The page to store.
    pub page: NewPage,
    /// Bytes of the body that were malformed in its charset (replaced by U+FFFD).
    pub replaced_bytes: u64,
    /// The body's length when it was cut at [`ImportLimits::max_page_bytes`].
    pub cut_from: Option<u64>,
}

/// A collected page decoded once: URL normalised, body cut at the page bound, charset
/// detected, binary bodies refused, HTML or text decided. The crawler reads its links
/// from [`DecodedPage::text`] before [`DecodedPage::build`] extracts the text, so a
/// fetched body is decoded exactly once on its way to the store.
#[derive(Debug)]
pub struct DecodedPage {
    url: String,
    body: Vec<u8>,
    text: String,
    charset: &'static str,
    format: PageFormat,
    replaced_bytes: u64,
    cut_from: Option<u64>,
    fetched_at: Timestamp,
    http_status: Option<u16>,
    source: PageSource,
}

impl DecodedPage {
    /// The decoded body (for HTML, its source).
    pub fn text(&self) -> &str {
        &self.text
    }

    /// How the body is read: decided from the caller's format, else sniffed.
    pub fn format(&self) -> PageFormat {
        self.format
    }

    /// Extract the page's text with the core: the [`NewPage`] to store.
    pub fn build(self, params: &CanonParams) -> Result<BuiltPage> {
        let DecodedPage { url, body, text, charset, format, replaced_bytes, cut_from, fetched_at, http_status, source } =
            self;
        let input = match format {
            PageFormat::Html => InputFormat::Html,
            PageFormat::Text => InputFormat::Text,
        };
        let c = canon::canonicalize_decoded(text, charset, input, params)
            .map_err(|e| IngestError::Text { what: url.clone(), source: e })?;
        let page = NewPage {
            url,
            fetched_at,
            http_status,
            charset: Some(c.charset().to_owned()),
            body,
            text: c.text().to_owned(),
            format: Some(format),
            canon_tag: Some(params.tag()),
            source,
        };
        Ok(BuiltPage { page, replaced_bytes, cut_from })
    }
}

/// Decode a collected page (see [`DecodedPage`]).
pub fn decode_page(raw: RawPage<'_>, limits: &ImportLimits) -> Result<DecodedPage> {
    let RawPage { url, mut body, format, charset_hint: hint, fetched_at, http_status, source } = raw;
    let norm = zurl::normalize(url)?;
    let what = norm.to_string();
    if body.is_empty() {
        return Err(IngestError::Text { what, source: zhiwen_core::CoreError::EmptyInput });
    }
    let cut_from = cut_body(&mut body, limits.max_page_bytes);
    let decoded = canon::decode(&body, hint).map_err(|e| IngestError::Text { what: what.clone(), source: e })?;
    check_text_like(&decoded.text, decoded.replacements)
        .map_err(|_| IngestError::invalid(what.clone(), "the body is binary data, not text"))?;
    let format = match format {
        InputFormat::Auto => canon::sniff_format(&decoded.text),
        f => f,
    };
    Ok(DecodedPage {
        url: what,
        body,
        text: decoded.text,
        charset: decoded.charset,
        format: if format == InputFormat::Text { PageFormat::Text } else { PageFormat::Html },
        replaced_bytes: decoded.replaced_bytes as u64,
        cut_from,
        fetched_at,
        http_status,
        source,
    })
}

/// Canonicalise a collected page into a [`NewPage`]: [`decode_page`], then
/// [`DecodedPage::build`].
pub fn build_page(raw: RawPage<'_>, params: &CanonParams, limits: &ImportLimits) -> Result<BuiltPage> {
    decode_page(raw, limits)?.build(params)
}

/// Cut `body` to at most `max` bytes, backing off to a UTF-8 character boundary when the
/// cut falls inside one (other charsets lose at most the character cut in two, which the
/// decoder replaces). Returns the original length when it cut.
fn cut_body(body: &mut Vec<u8>, max: u64) -> Option<u64> {
    let len = body.len() as u64;
    if len <= max {
        return None;
    }
    let mut cut = usize::try_from(max).unwrap_or(usize::MAX).min(body.len());
    // At most three continuation bytes precede the cut inside one UTF-8 character.
    let mut back = 0;
    while back < 3 && cut > back && (body[cut - back] & 0xC0) == 0x80 {
        back += 1;
    }
    if cut > back && (body[cut - back] & 0xC0) == 0xC0 {
        cut -= back;
    }
    body.truncate(cut);
    body.shrink_to_fit();
    Some(len)
}

/// Send a built page (or its rejection) with its notes; `false` when the import was dropped.
pub(crate) fn send_page(feed: &Feed<NewPage>, name: String, built: Result<BuiltPage>) -> bool {
    match built {
        Ok(b) => {
            let notes = page_notes(&name, &b);
            let mut go = feed.send(Item::Record(name, b.page));
            for item in notes {
                go = feed.send(item) && go;
            }
            go
        }
        Err(e) => feed.send(Item::Reject(name, e.to_string())),
    }
}

fn page_notes<T>(name: &str, b: &BuiltPage) -> Vec<Item<T>> {
    let mut notes = Vec::new();
    if b.replaced_bytes > 0 {
        notes.push(Item::Replaced(b.replaced_bytes));
        notes.push(Item::Note(
            name.to_owned(),
            format!(
                "{} malformed bytes of its {} replaced by U+FFFD",
                b.replaced_bytes,
                b.page.charset.as_deref().unwrap_or("charset")
            ),
        ));
    }
    if let Some(from) = b.cut_from {
        notes.push(Item::Note(
            name.to_owned(),
            format!(
                "page of {from} bytes cut at {} bytes (the page size bound); the rest is not stored",
                b.page.body.len()
            ),
        ));
    }
    notes
}

fn read_file(f: &InputFile, opts: &ImportOptions, feed: &Feed<NewPage>) {
    match f.extension().as_str() {
        "jsonl" | "ndjson" => read_jsonl(f, opts, feed),
        "warc" | "warc.gz" => read_warc(f, opts, feed),
        _ => {
            let name = f.display();
            let built = files::read_limited(&f.path, opts.max_file_bytes)
                .map_err(|e| IngestError::invalid(name.clone(), e))
                .and_then(|b| saved_page(f, b, opts));
            send_page(feed, name, built);
            feed.send(Item::Advance(f.size));
        }
    }
}

fn file_time(f: &InputFile) -> Timestamp {
    std::fs::metadata(&f.path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or_else(Timestamp::now, |d| Timestamp(d.as_millis() as i64))
}

fn saved_page(f: &InputFile, mut bytes: Vec<u8>, opts: &ImportOptions) -> Result<BuiltPage> {
    let what = f.display();
    // Only the head is needed to find the page's own URL; the body is cut by build_page.
    let head = &bytes[..bytes.len().min(usize::try_from(opts.limits.max_page_bytes).unwrap_or(usize::MAX))];
    let decoded = canon::decode(head, None).map_err(|e| IngestError::Text { what: what.clone(), source: e })?;
    // Binary data says so before anything else (not "no URL").
    check_text_like(&decoded.text, decoded.replacements)
        .map_err(|_| IngestError::invalid(what.clone(), "the file is binary data, not text"))?;
    let url =
        match html::own_url(&decoded.text) {
            Some(u) => u,
            None => match &opts.base_url {
                Some(base) => {
                    let base = if base.ends_with('/') { base.clone() } else { format!("{base}/") };
                    let rel: String = url::form_urlencoded::byte_serialize(f.relative().as_bytes())
                        .collect::<String>()
                        .replace("%2F", "/");
                    format!("{base}{rel}")
                }
                None => return Err(IngestError::invalid(
                    what,
                    "no URL: the file has no \"saved from\" mark, canonical link or og:url, and no base URL was given",
                )),
            },
        };
    drop(decoded);
    let raw = RawPage {
        url: &url,
        body: std::mem::take(&mut bytes),
        format: InputFormat::Html,
        charset_hint: None,
        fetched_at: file_time(f),
        http_status: None,
        source: PageSource::Import(f.display()),
    };
    build_page(raw, &opts.canon, &opts.limits)
}

fn parse_time(v: Option<&Value>) -> Result<Option<Timestamp>, String> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => {
            let x = n.as_f64().ok_or("fetched_at is not a number")?;
            // Seconds or milliseconds since the epoch.
            let ms = if x.abs() < 1e11 { x * 1000.0 } else { x };
            Ok(Some(Timestamp(ms as i64)))
        }
        Some(Value::String(s)) => {
            let t = time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339)
                .map_err(|e| format!("fetched_at {s:?} is not an RFC 3339 time: {e}"))?;
            Ok(Some(Timestamp::from_offset(t)))
        }
        Some(_) => Err("fetched_at must be a string or a number".into()),
    }
}

fn jsonl_page(
    line: &[u8],
    item: &str,
    file: &str,
    opts: &ImportOptions,
) -> Result<Option<files::LineRecord<NewPage>>, String> {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return Ok(None);
    }
    let v: Value = serde_json::from_slice(trimmed).map_err(|e| format!("not valid JSON: {e}"))?;
    let obj = v.as_object().ok_or("not a JSON object")?;
    let url = obj.get("url").and_then(Value::as_str).ok_or("no \"url\"")?;
    let fetched_at = parse_time(obj.get("fetched_at"))?.unwrap_or_else(Timestamp::now);
    let status = match obj.get("status") {
        None | Some(Value::Null) => None,
        Some(s) => Some(s.as_u64().filter(|s| (100..600).contains(s)).ok_or("status is not an HTTP status")? as u16),
    };
    let (body, format) = match (obj.get("html").and_then(Value::as_str), obj.get("text").and_then(Value::as_str)) {
        (Some(h), _) => (h.as_bytes().to_vec(), InputFormat::Html),
        (None, Some(t)) => (t.as_bytes().to_vec(), InputFormat::Text),
        (None, None) => return Err("neither \"html\" nor \"text\"".into()),
    };
    let raw = RawPage {
        url,
        body,
        format,
        charset_hint: Some("utf-8"),
        fetched_at,
        http_status: status,
        source: PageSource::Import(file.to_owned()),
    };
    let built = build_page(raw, &opts.canon, &opts.limits).map_err(|e| e.to_string())?;
    let notes = page_notes(item, &built);
    Ok(Some((built.page, notes)))
}

fn read_jsonl(f: &InputFile, opts: &ImportOptions, feed: &Feed<NewPage>) {
    let name = f.display();
    files::read_jsonl(f, opts.max_file_bytes, feed, |line, item| jsonl_page(line, item, &name, opts));
}

// ---------------------------------------------------------------------------------
// WARC

/// A WARC record's content, ready to become a page.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WarcPage {
    /// `WARC-Target-URI`.
    pub url: String,
    /// HTTP status (for `response` records).
    pub status: Option<u16>,
    /// Charset declared in the HTTP `Content-Type`.
    pub charset: Option<String>,
    /// The payload (de-chunked and decompressed).
    pub body: Vec<u8>,
    /// `WARC-Date` in Unix milliseconds.
    pub date_ms: Option<i64>,
}

/// What one WARC record turned out to be.
#[derive(Debug)]
pub enum WarcItem {
    /// A page to import.
    Page(WarcPage),
    /// Not a page (request, metadata, warcinfo, non-HTML, non-2xx): skipped on purpose.
    Skip(&'static str),
    /// A page that cannot be imported.
    Reject(String),
    /// A record that could not be framed (corrupt header, wrong `Content-Length`, over the
    /// size bound, cut short): `skipped_bytes` were passed over to reach the next record.
    Corrupt {
        /// What was wrong.
        reason: String,
        /// Bytes skipped to the next `WARC/1.x` record header (or the end of the file).
        skipped_bytes: u64,
    },
}

/// Read WARC records from `reader` (already decompressed if the file was gzipped),
/// calling `each(record number, item)`. A corrupt record is reported as
/// [`WarcItem::Corrupt`] and reading resumes at the next record header; blocks over
/// `max_record` bytes are skipped the same way, without being read into memory. Returns
/// an error only when the input itself cannot be read further (an I/O or decompression
/// error, a decompression bomb; the records before it were delivered). `each` returns
/// `false` to stop.
pub fn read_warc_records<R: BufRead>(
    mut reader: R,
    max_record: u64,
    limits: &ImportLimits,
    mut each: impl FnMut(u64, WarcItem) -> bool,
) -> Result<(), String> {
    // A WARC file is a sequence of records, each beginning with its version line: anything
    // else (another binary file named .warc, a truncated download) is refused as a whole,
    // not read as a WARC file without records.
    let head = reader.fill_buf().map_err(|e| format!("cannot read: {e}"))?;
    if head.is_empty() {
        return Err("the file is empty: no WARC record".into());
    }
    const MAGIC: &[u8] = b"WARC/";
    if !MAGIC.starts_with(&head[..head.len().min(MAGIC.len())]) {
        return Err("not a WARC file: it does not begin with a WARC record (\"WARC/1.0\")".into());
    }
    let mut records = warc::Records::new(reader, max_record);
    let mut n = 0u64;
    loop {
        let framed = records.next_record().map_err(|e| match n {
            0 => format!("cannot read: {e}"),
            _ => format!("after record {n}: {e}; the rest of the file was skipped"),
        })?;
        let Some(framed) = framed else { return Ok(()) };
        n += 1;
        let item = match framed {
            warc::Framed::Record(rec) => warc_item(rec, limits),
            warc::Framed::Corrupt { reason, skipped } => WarcItem::Corrupt { reason, skipped_bytes: skipped },
        };
        if !each(n, item) {
            return Ok(());
        }
    }
}

fn warc_item(rec: warc::RawRecord, limits: &ImportLimits) -> WarcItem {
    let Some(kind) = rec.header("warc-type").map(str::to_ascii_lowercase) else {
        return WarcItem::Reject("no WARC-Type".into());
    };
    if kind != "response" && kind != "resource" {
        return WarcItem::Skip("not a response");
    }
    let date_ms = rec.header("warc-date").and_then(|d| {
        time::OffsetDateTime::parse(d, &time::format_description::well_known::Rfc3339)
            .ok()
            .map(|t| Timestamp::from_offset(t).0)
    });
    let Some(url) = rec.header("warc-target-uri").map(|u| u.trim_matches(['<', '>', ' ']).to_owned()) else {
        return WarcItem::Reject("no WARC-Target-URI".into());
    };
    if kind == "resource" {
        let ctype = rec.header("content-type").unwrap_or_default();
        if !is_text_type(ctype) {
            return WarcItem::Skip("not HTML or text");
        }
        let charset = charset_param(ctype);
        return WarcItem::Page(WarcPage { url, status: None, charset, body: rec.block, date_ms });
    }
    match parse_http_response_limited(&rec.block, limits) {
        Ok(r) => {
            if !(200..300).contains(&r.status) {
                return WarcItem::Skip("HTTP status is not 2xx");
            }
            if !is_text_type(&r.content_type) {
                return WarcItem::Skip("not HTML or text");
            }
            WarcItem::Page(WarcPage {
                url,
                status: Some(r.status),
                charset: charset_param(&r.content_type),
                body: r.body,
                date_ms,
            })
        }
        Err(e) => WarcItem::Reject(e),
    }
}

fn is_text_type(ctype: &str) -> bool {
    let t = ctype.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    t.is_empty() || t == "text/html" || t == "application/xhtml+xml" || t == "text/plain"
}

/// The `charset` parameter of a `Content-Type` value.
pub fn charset_param(ctype: &str) -> Option<String> {
    ctype.split(';').skip(1).find_map(|p| {
        let (k, v) = p.split_once('=')?;
        k.trim().eq_ignore_ascii_case("charset").then(|| v.trim().trim_matches(['"', '\'']).to_owned())
    })
}

/// An HTTP response parsed from a WARC `response` record.
#[derive(Debug)]
pub struct HttpResponse {
    /// Status code.
    pub status: u16,
    /// `Content-Type` (empty when absent).
    pub content_type: String,
    /// Payload, de-chunked and decompressed (gzip/deflate).
    pub body: Vec<u8>,
}

/// Parse a raw HTTP/1.x response (status line, headers, body) with the default
/// [`ImportLimits`] on decompression.
pub fn parse_http_response(raw: &[u8]) -> Result<HttpResponse, String> {
    parse_http_response_limited(raw, &ImportLimits::default())
}

/// Parse a raw HTTP/1.x response; a compressed body may inflate to at most
/// `limits.max_entry_bytes`, and at most `limits.max_ratio` times its size.
pub fn parse_http_response_limited(raw: &[u8], limits: &ImportLimits) -> Result<HttpResponse, String> {
    if !raw.starts_with(b"HTTP/") {
        let start = String::from_utf8_lossy(&raw[..raw.len().min(60)]).into_owned();
        return Err(format!("not an HTTP response: {start:?}"));
    }
    let (head_end, body_start) = match memfind(raw, b"\r\n\r\n") {
        Some(i) => (i, i + 4),
        None => match memfind(raw, b"\n\n") {
            Some(i) => (i, i + 2),
            None => return Err("the HTTP response has no end of headers".into()),
        },
    };
    let head = String::from_utf8_lossy(&raw[..head_end]);
    let mut lines = head.lines();
    let status_line = lines.next().unwrap_or("");
    let mut parts = status_line.split_whitespace();
    if !parts.next().unwrap_or("").starts_with("HTTP/") {
        return Err(format!("not an HTTP response: {:?}", status_line.chars().take(60).collect::<String>()));
    }
    let status: u16 = parts
        .next()
        .and_then(|s| s.parse().ok())
        .filter(|s| (100..600).contains(s))
        .ok_or_else(|| format!("bad HTTP status line {:?}", status_line.chars().take(60).collect::<String>()))?;
    let mut content_type = String::new();
    let mut chunked = false;
    let mut encoding = String::new();
    for l in lines {
        let Some((k, v)) = l.split_once(':') else { continue };
        let v = v.trim();
        match k.trim().to_ascii_lowercase().as_str() {
            "content-type" => content_type = v.to_owned(),
            "transfer-encoding" => chunked = v.to_ascii_lowercase().contains("chunked"),
            "content-encoding" => encoding = v.to_ascii_lowercase(),
            _ => {}
        }
    }
    let mut body = raw[body_start..].to_vec();
    if chunked {
        body = dechunk(&body).unwrap_or(body);
    }
    body = match encoding.as_str() {
        "" | "identity" => body,
        "gzip" | "x-gzip" => inflate(flate2::read::MultiGzDecoder::new(&body[..]), body.len(), limits)?,
        "deflate" => inflate(flate2::read::ZlibDecoder::new(&body[..]), body.len(), limits)
            .or_else(|_| inflate(flate2::read::DeflateDecoder::new(&body[..]), body.len(), limits))?,
        other => return Err(format!("unsupported Content-Encoding {other}")),
    };
    Ok(HttpResponse { status, content_type, body })
}

/// Inflate a compressed body of `compressed` bytes within the entry size and ratio bounds.
fn inflate(r: impl Read, compressed: usize, limits: &ImportLimits) -> Result<Vec<u8>, String> {
    let cap = limits
        .max_entry_bytes
        .min((compressed as u64).max(1).saturating_mul(limits.max_ratio.max(1)).max(RATIO_GRACE_BYTES));
    let mut out = Vec::new();
    r.take(cap + 1).read_to_end(&mut out).map_err(|e| format!("cannot decompress the body: {e}"))?;
    if out.len() as u64 > cap {
        return Err(format!(
            "the decompressed body is larger than {cap} bytes (the bounds are {} bytes and {} times the \
             compressed size): a decompression bomb",
            limits.max_entry_bytes, limits.max_ratio
        ));
    }
    Ok(out)
}

fn memfind(h: &[u8], n: &[u8]) -> Option<usize> {
    memchr::memmem::find(h, n)
}

fn dechunk(mut b: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(b.len());
    loop {
        let nl = memfind(b, b"\n")?;
        let size_str = std::str::from_utf8(&b[..nl]).ok()?.trim();
        let size = usize::from_str_radix(size_str.split(';').next()?.trim(), 16).ok()?;
        b = &b[nl + 1..];
        if size == 0 {
            return Some(out);
        }
        out.extend_from_slice(b.get(..size)?);
        b = &b[size..];
        b = b.strip_prefix(b"\r\n").or_else(|| b.strip_prefix(b"\n")).unwrap_or(b);
    }
}

fn read_warc(f: &InputFile, opts: &ImportOptions, feed: &Feed<NewPage>) {
    let name = f.display();
    let file = match std::fs::File::open(&f.path) {
        Ok(file) => file,
        Err(e) => {
            feed.send(Item::Reject(name, format!("cannot open: {e}")));
            return;
        }
    };
    let source = PageSource::Import(name.clone());
    let cancelled = || feed.is_cancelled();
    let handle = |n: u64, item: WarcItem| -> bool {
        let what = format!("{name}#{n}");
        match item {
            WarcItem::Skip(_) => feed.send(Item::Skip),
            WarcItem::Reject(why) => feed.send(Item::Reject(what, why)),
            WarcItem::Corrupt { reason, skipped_bytes } => {
                let why = format!("corrupt record: {reason}; {skipped_bytes} bytes skipped to the next record");
                feed.send(Item::Reject(what, why)) && feed.send(Item::SkippedBytes(skipped_bytes))
            }
            WarcItem::Page(p) => {
                let len = p.body.len() as u64;
                let at = p.date_ms.map_or_else(Timestamp::now, Timestamp);
                let raw = RawPage {
                    url: &p.url,
                    body: p.body,
                    format: InputFormat::Auto,
                    charset_hint: p.charset.as_deref(),
                    fetched_at: at,
                    http_status: p.status,
                    source: source.clone(),
                };
                let go = send_page(feed, format!("{what} {}", p.url), build_page(raw, &opts.canon, &opts.limits));
                feed.send(Item::Advance(len)) && go
            }
        }
    };
    let input = files::CancelRead::new(file, &cancelled);
    let gzipped = f.extension() == "warc.gz";
    let (result, d) = read_warc_stream(input, gzipped, opts.max_file_bytes, &opts.limits, handle);
    if d.corrupt_members > 0 || d.skipped_bytes > 0 {
        let mut why = format!("{} corrupt gzip member(s) (cut short or damaged)", d.corrupt_members);
        if d.skipped_bytes > 0 {
            why.push_str(&format!("; {} compressed bytes skipped to the next gzip member", d.skipped_bytes));
        }
        feed.send(Item::Reject(name.clone(), why));
        feed.send(Item::SkippedBytes(d.skipped_bytes));
    }
    if let Err(e) = result {
        feed.send(Item::Reject(name, e));
    }
}

/// Read a WARC stream as `import pages` reads a `.warc` file (`gzipped == false`) or a
/// `.warc.gz` file (`true`: gzip members decompressed one after the other, a corrupt
/// member skipped to the next, the stream stopped at `limits.max_ratio`), calling
/// `each(record number, item)` as [`read_warc_records`] does. Returns how that ended, and
/// what the gzip layer skipped.
pub fn read_warc_stream<R: Read>(
    input: R,
    gzipped: bool,
    max_record: u64,
    limits: &ImportLimits,
    each: impl FnMut(u64, WarcItem) -> bool,
) -> (Result<(), String>, GzDamage) {
    let mut input = BufReader::new(input);
    if !gzipped {
        return (read_warc_records(input, max_record, limits, each), GzDamage::default());
    }
    // Not gzip at all (another file named .warc.gz): one reason, not a damaged member and
    // an empty WARC file.
    if let Ok(head) = input.fill_buf() {
        if !head.is_empty() && !warc::GZIP_MAGIC.starts_with(&head[..head.len().min(warc::GZIP_MAGIC.len())]) {
            return (Err("not a WARC.gz file: it does not begin with a gzip member".into()), GzDamage::default());
        }
    }
    let compressed = Rc::new(Cell::new(0u64));
    let damage = Rc::new(Cell::new(GzDamage::default()));
    let members = warc::GzMembers::new(warc::CountConsumed::new(input, compressed.clone()), damage.clone());
    let inflated = BufReader::new(warc::RatioRead::new(members, compressed, *limits));
    let result = read_warc_records(inflated, max_record, limits, each);
    (result, damage.get())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn http_responses_are_parsed_dechunked_and_inflated() {
        let raw = b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=GBK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n";
        let r = parse_http_response(raw).unwrap();
        assert_eq!(r.status, 200);
        assert_eq!(charset_param(&r.content_type).as_deref(), Some("GBK"));
        assert_eq!(r.body, b"hello world");
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        std::io::Write::write_all(&mut gz, b"<p>zip</p>").unwrap();
        let mut raw = b"HTTP/1.0 200 OK\nContent-Encoding: gzip\n\n".to_vec();
        raw.extend(gz.finish().unwrap());
        assert_eq!(parse_http_response(&raw).unwrap().body, b"<p>zip</p>");
        assert!(parse_http_response(b"garbage").is_err());
        assert!(parse_http_response(b"GET / HTTP/1.1\r\n\r\n").is_err());
    }

    #[test]
    fn a_record_with_a_non_utf8_target_uri_is_imported_not_a_panic() {
        // Found by the `warc` fuzz target: the warc crate's `header()` unwraps UTF-8.
        let payload = b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>\xe7\xba\xa2\xe6\xa5\xbc</p>";
        let mut raw = b"WARC/1.0\r\nWARC-Type: response\r\nWARC-Record-ID: <urn:uuid:1>\r\n".to_vec();
        raw.extend_from_slice(
            b"WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: http://example.com/\xff\xfe.html\r\n",
        );
        raw.extend_from_slice(format!("Content-Length: {}\r\n\r\n", payload.len()).as_bytes());
        raw.extend_from_slice(payload);
        raw.extend_from_slice(b"\r\n\r\n");
        let mut urls = Vec::new();
        read_warc_records(std::io::Cursor::new(raw), 1 << 20, &ImportLimits::default(), |_, item| {
            if let WarcItem::Page(p) = item {
                urls.push(p.url);
            }
            true
        })
        .unwrap();
        assert_eq!(urls, vec!["http://example.com/\u{fffd}\u{fffd}.html".to_owned()]);
    }

    #[test]
    fn fetched_at_accepts_rfc3339_and_epoch() {
        assert_eq!(parse_time(Some(&Value::from(1_700_000_000))).unwrap(), Some(Timestamp(1_700_000_000_000)));
        assert_eq!(parse_time(Some(&Value::from(1_700_000_000_123i64))).unwrap(), Some(Timestamp(1_700_000_000_123)));
        assert!(parse_time(Some(&Value::from("2024-01-02T03:04:05Z"))).unwrap().is_some());
        assert!(parse_time(Some(&Value::from("yesterday"))).is_err());
    }
}
