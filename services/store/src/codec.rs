//! What both backends share: validation, URL normalisation, compression, hashes and
//! the compact binary form of fingerprints.

use std::cell::RefCell;
use std::collections::HashSet;
use std::io::Write;

use flate2::write::DeflateEncoder;
use flate2::{Compression, Decompress, FlushDecompress, Status};
use zhiwen_core::hash::hash_bytes;
use zhiwen_core::Fingerprints;

use crate::model::*;
use crate::StoreError;

/// Largest text (work, section or page text) the stores accept, in bytes.
pub const MAX_TEXT_BYTES: usize = 256 * 1024 * 1024;
/// Largest raw page body accepted, in bytes.
pub const MAX_BODY_BYTES: usize = 256 * 1024 * 1024;
/// Largest metadata field (owner, title, URL, ...) accepted, in bytes.
pub const MAX_FIELD_BYTES: usize = 8 * 1024;
/// Most sections one work may have.
pub const MAX_SECTIONS: usize = 100_000;

thread_local! {
    /// One inflate state per thread, reset before each use: `flate2::read::DeflateDecoder`
    /// allocated a state with its 32 KB window for every page body and page text read,
    /// and copied the input through a 32 KB buffer of its own besides (a matching task
    /// reads both of every page it matches).
    static INFLATE: RefCell<Decompress> = RefCell::new(Decompress::new(false));
    /// One zstd compression and one decompression context per thread (a context is
    /// made with its tables; the bulk calls reset it for each input).
    static ZSTD_COMPRESS: RefCell<Option<zstd::bulk::Compressor<'static>>> = const { RefCell::new(None) };
    static ZSTD_DECOMPRESS: RefCell<Option<zstd::bulk::Decompressor<'static>>> = const { RefCell::new(None) };
}

/// The level blobs are written at: zstd's fastest of the regular levels. On the
/// evaluation set `zhiwen import pages` took a third fewer instructions than with raw
/// deflate at its fast level, and the stored bodies and texts 14-21% fewer bytes
/// (docs/benchmarks.md).
const ZSTD_LEVEL: i32 = 1;

/// The first bytes of a zstd frame. No raw deflate stream starts with them (their first
/// byte opens a stored block whose length check fails), so a blob written with either
/// codec is read with the one that wrote it: blobs stored before zstd are deflate.
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Largest blob decompressed, in bytes: the largest text or body the stores accept.
const MAX_DECOMPRESSED: usize = if MAX_TEXT_BYTES > MAX_BODY_BYTES { MAX_TEXT_BYTES } else { MAX_BODY_BYTES };

/// A blob's bytes compressed for storage: one zstd frame that records its size and the
/// checksum of its content (so a blob damaged on disk is an error, not other text).
pub(crate) fn compress(bytes: &[u8]) -> Vec<u8> {
    let made = ZSTD_COMPRESS.with_borrow_mut(|slot| {
        if slot.is_none() {
            *slot = zstd::bulk::Compressor::new(ZSTD_LEVEL).and_then(|mut c| c.include_checksum(true).map(|()| c)).ok();
        }
        slot.as_mut().and_then(|c| c.compress(bytes).ok())
    });
    // zstd fails only without memory for its context: deflate, which is read as well.
    made.unwrap_or_else(|| deflate(bytes))
}

/// Raw deflate at the fast level: what blobs were written with before zstd (and the
/// fallback should zstd fail). A deflate state kept
/// per thread saved no measurable CPU, since resetting one clears its hash table as
/// making one does, and kept ~9 MB more committed.
pub(crate) fn deflate(bytes: &[u8]) -> Vec<u8> {
    let mut enc = DeflateEncoder::new(Vec::with_capacity(bytes.len() / 3 + 16), Compression::fast());
    // Writing into a Vec cannot fail.
    let _ = enc.write_all(bytes);
    enc.finish().unwrap_or_default()
}

/// Room for more output when `out` is full.
fn make_room(out: &mut Vec<u8>) {
    if out.len() == out.capacity() {
        out.reserve(out.capacity().max(256));
    }
}

/// The bytes `compress` made (zstd, or raw deflate for blobs written before it); a blob
/// that is corrupt, ends early or would decompress beyond the largest text the stores
/// accept is an error.
pub(crate) fn decompress(bytes: &[u8], what: &str) -> Result<Vec<u8>, StoreError> {
    if bytes.starts_with(&ZSTD_MAGIC) {
        unzstd(bytes, what)
    } else {
        inflate(bytes, what)
    }
}

fn unzstd(bytes: &[u8], what: &str) -> Result<Vec<u8>, StoreError> {
    let size = match zstd::zstd_safe::get_frame_content_size(bytes) {
        Ok(Some(size)) => size,
        Ok(None) => return Err(StoreError::corrupt(what, "the compressed data records no size")),
        Err(_) => return Err(StoreError::corrupt(what, "the compressed data has no valid header")),
    };
    let size = usize::try_from(size)
        .ok()
        .filter(|&n| n <= MAX_DECOMPRESSED)
        .ok_or_else(|| StoreError::corrupt(what, format!("the compressed data claims {size} bytes")))?;
    let out = ZSTD_DECOMPRESS.with_borrow_mut(|slot| {
        if slot.is_none() {
            *slot = zstd::bulk::Decompressor::new().ok();
        }
        match slot.as_mut() {
            Some(d) => d.decompress(bytes, size),
            None => zstd::bulk::decompress(bytes, size),
        }
    });
    match out {
        Ok(out) if out.len() == size => Ok(out),
        Ok(out) => Err(StoreError::corrupt(what, format!("{} bytes where the header says {size}", out.len()))),
        Err(e) => Err(StoreError::corrupt(what, e)),
    }
}

fn inflate(bytes: &[u8], what: &str) -> Result<Vec<u8>, StoreError> {
    INFLATE.with_borrow_mut(|z| {
        z.reset(false);
        let mut out = Vec::with_capacity(bytes.len().saturating_mul(3).max(64));
        loop {
            let (before_in, before_out) = (z.total_in(), z.total_out());
            let input = bytes.get(before_in as usize..).unwrap_or_default();
            make_room(&mut out);
            if out.len() > MAX_DECOMPRESSED {
                return Err(StoreError::corrupt(what, "the compressed data inflates beyond the largest text"));
            }
            // `None`, not `Finish`: miniz_oxide (the backend of a build without zlib-rs)
            // takes `Finish` to promise room for all of the output, and fails otherwise.
            match z.decompress_vec(input, &mut out, FlushDecompress::None) {
                Ok(Status::StreamEnd) => return Ok(out),
                Ok(_) if z.total_in() != before_in || z.total_out() != before_out => {}
                // No progress with room to write: the stream stops before its end.
                Ok(_) if out.len() < out.capacity() => {
                    return Err(StoreError::corrupt(what, "the compressed data ends early"))
                }
                Ok(_) => {}
                Err(e) => return Err(StoreError::corrupt(what, e)),
            }
        }
    })
}

pub(crate) fn decompress_text(bytes: &[u8], what: &str) -> Result<String, StoreError> {
    String::from_utf8(decompress(bytes, what)?).map_err(|e| StoreError::corrupt(what, e))
}

/// Most compact winnowed keys stored for one section (4 bytes each: 1 MiB, about 2.8M
/// characters of section); a larger section has none, and its candidates are verified
/// without being confirmed first.
pub const MAX_WINNOWED_KEYS: usize = 256 * 1024;

/// The compact winnowed keys of fingerprints to store with them (little-endian `u32`s),
/// `None` for a page or a section with more than [`MAX_WINNOWED_KEYS`].
pub(crate) fn encode_winnowed(subject: Subject, fp: &Fingerprints) -> Option<Vec<u8>> {
    if subject.kind != SubjectKind::Section {
        return None;
    }
    let keys = fp.winnowed_digest();
    (keys.len() <= MAX_WINNOWED_KEYS).then(|| keys.iter().flat_map(|k| k.to_le_bytes()).collect())
}

/// Read stored compact winnowed keys (sorted and deduplicated when written by
/// [`encode_winnowed`]; anything else is refused as corrupt).
pub(crate) fn decode_winnowed(bytes: &[u8], subject: Subject, params_tag: String) -> Result<WinnowedKeys, StoreError> {
    let what = || format!("winnowed keys of {subject}");
    if !bytes.len().is_multiple_of(4) || bytes.len() / 4 > MAX_WINNOWED_KEYS {
        return Err(StoreError::corrupt(what(), format!("{} bytes", bytes.len())));
    }
    let keys: Vec<u32> = bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect();
    if !keys.windows(2).all(|w| w[0] < w[1]) {
        return Err(StoreError::corrupt(what(), "not sorted"));
    }
    Ok(WinnowedKeys { subject, params_tag, keys })
}

/// Fingerprints in their stored form ([`crate::fingerprint_blob`]).
pub(crate) fn encode_fingerprints(fp: &Fingerprints) -> Result<Vec<u8>, StoreError> {
    crate::fingerprint_blob::encode(fp)
        .ok_or_else(|| StoreError::invalid("fingerprints", "a list or the parameter tag is too long to store"))
}

/// Read stored fingerprints: the binary form, or the compressed JSON of earlier versions.
pub(crate) fn decode_fingerprints(bytes: &[u8], subject: Subject) -> Result<Fingerprints, StoreError> {
    let what = || format!("fingerprints of {subject}");
    let legacy = || -> Result<Fingerprints, StoreError> {
        let json = decompress(bytes, &what())?;
        serde_json::from_slice(&json).map_err(|e| StoreError::corrupt(what(), e))
    };
    if crate::fingerprint_blob::is_binary(bytes) {
        return crate::fingerprint_blob::decode(bytes)
            .or_else(|binary| legacy().map_err(|_| StoreError::corrupt(what(), binary)));
    }
    legacy()
}

/// Store a u64 hash in a signed 64-bit column/field without loss.
pub(crate) fn h2i(h: u64) -> i64 {
    h as i64
}

pub(crate) fn i2h(i: i64) -> u64 {
    i as u64
}

/// Several URLs normalised ([`normalize_url`]), each once, in order: the keys a
/// lookup of many URLs reads. The first URL that cannot be normalised is the error.
pub(crate) fn normalized_urls(urls: &[String]) -> Result<Vec<String>, StoreError> {
    let mut seen = HashSet::with_capacity(urls.len());
    let mut out = Vec::with_capacity(urls.len());
    for url in urls {
        let (url, _) = normalize_url(url)?;
        if seen.insert(url.clone()) {
            out.push(url);
        }
    }
    Ok(out)
}

/// Normalise a URL to its natural key: scheme and host lower-cased, default port and
/// fragment dropped, empty path made `/`. Only `http` and `https` are accepted.
pub fn normalize_url(url: &str) -> Result<(String, String), StoreError> {
    let bad = |reason: &str| StoreError::invalid("url", format!("{reason}: {url:?}"));
    let trimmed = url.trim();
    if trimmed.len() > MAX_FIELD_BYTES {
        return Err(bad("longer than 8 KiB"));
    }
    if trimmed.chars().any(|c| c.is_control() || c == ' ') {
        return Err(bad("contains spaces or control characters"));
    }
    let (scheme, rest) = trimmed.split_once("://").ok_or_else(|| bad("no scheme"))?;
    let scheme = scheme.to_ascii_lowercase();
    if scheme != "http" && scheme != "https" {
        return Err(bad("scheme is not http or https"));
    }
    let rest = rest.split('#').next().unwrap_or("");
    let (authority, path) = match rest.find(['/', '?']) {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, ""),
    };
    let authority = authority.rsplit('@').next().unwrap_or("");
    let mut host = authority.to_lowercase();
    let default_port = if scheme == "http" { ":80" } else { ":443" };
    if let Some(h) = host.strip_suffix(default_port) {
        host = h.to_owned();
    }
    if let Some(h) = host.strip_suffix('.') {
        host = h.to_owned();
    }
    if host.is_empty() {
        return Err(bad("no host"));
    }
    let path = if path.is_empty() || path.starts_with('?') { format!("/{path}") } else { path.to_owned() };
    let site = host.split(':').next().unwrap_or(&host).to_owned();
    Ok((format!("{scheme}://{host}{path}"), site))
}

fn check_field(what: &str, value: &str, required: bool) -> Result<(), StoreError> {
    if required && value.trim().is_empty() {
        return Err(StoreError::invalid(what, "empty"));
    }
    if value.len() > MAX_FIELD_BYTES {
        return Err(StoreError::invalid(what, format!("{} bytes, more than {MAX_FIELD_BYTES}", value.len())));
    }
    if value.contains('\0') {
        return Err(StoreError::invalid(what, "contains a NUL character"));
    }
    Ok(())
}

fn check_text(what: &str, text: &str) -> Result<(), StoreError> {
    if text.trim().is_empty() {
        return Err(StoreError::invalid(what, "empty text"));
    }
    if text.len() > MAX_TEXT_BYTES {
        return Err(StoreError::invalid(what, format!("{} bytes, more than {MAX_TEXT_BYTES}", text.len())));
    }
    Ok(())
}

/// Metadata arrives as bytes from files and HTTP headers: decode it strictly.
pub fn utf8_field(what: &str, bytes: &[u8]) -> Result<String, StoreError> {
    String::from_utf8(bytes.to_vec()).map_err(|e| StoreError::invalid(what, format!("invalid UTF-8: {e}")))
}

pub(crate) fn validate_work(w: &NewWork) -> Result<(), StoreError> {
    check_field("work owner", &w.owner, true)?;
    check_field("work external_id", &w.external_id, true)?;
    check_field("work title", &w.title, false)?;
    check_field("work author", &w.author, false)?;
    if let Some(f) = &w.source_file {
        check_field("work source_file", f, false)?;
    }
    if let Some(c) = &w.charset {
        check_field("work charset", c, false)?;
    }
    let key = format!("{}/{}", w.owner, w.external_id);
    check_text(&format!("text of work {key}"), &w.text)?;
    if w.sections.is_empty() {
        return Err(StoreError::invalid(format!("work {key}"), "no sections (a work without divisions has one)"));
    }
    if w.sections.len() > MAX_SECTIONS {
        return Err(StoreError::invalid(format!("work {key}"), format!("more than {MAX_SECTIONS} sections")));
    }
    let chars = w.text.chars().count() as u64;
    let mut ordinals = HashSet::with_capacity(w.sections.len());
    let mut total = 0usize;
    for s in &w.sections {
        let what = format!("section {} of work {key}", s.ordinal);
        if !ordinals.insert(s.ordinal) {
            return Err(StoreError::Duplicate { what: "section ordinal", key: what });
        }
        check_field(&format!("title of {what}"), &s.title, false)?;
        check_text(&what, &s.text)?;
        if s.char_start > s.char_end || s.char_end > chars {
            return Err(StoreError::invalid(
                what,
                format!("character range {}..{} outside the work's {chars} characters", s.char_start, s.char_end),
            ));
        }
        total += s.text.len();
    }
    if total > MAX_TEXT_BYTES {
        return Err(StoreError::invalid(format!("work {key}"), "sections larger than the size limit"));
    }
    Ok(())
}

pub(crate) fn validate_works(ws: &[NewWork]) -> Result<(), StoreError> {
    let mut keys = HashSet::with_capacity(ws.len());
    for w in ws {
        validate_work(w)?;
        if !keys.insert((w.owner.as_str(), w.external_id.as_str())) {
            return Err(StoreError::Duplicate {
                what: "work external id",
                key: format!("{}/{}", w.owner, w.external_id),
            });
        }
    }
    Ok(())
}

/// Hash of everything stored for a work: equal hashes mean an `Unchanged` re-import.
pub(crate) fn work_hash(w: &NewWork) -> u64 {
    let json = serde_json::to_vec(w).unwrap_or_default();
    hash_bytes(&json)
}

/// A validated page with its natural key and derived fields.
pub(crate) struct PreparedPage {
    pub url: String,
    pub site: String,
    pub content_hash: u64,
    pub body_z: Vec<u8>,
    pub text_z: Vec<u8>,
    pub source_json: String,
}

pub(crate) fn prepare_page(p: &NewPage) -> Result<PreparedPage, StoreError> {
    let (url, site) = normalize_url(&p.url)?;
    if p.text.len() > MAX_TEXT_BYTES {
        return Err(StoreError::invalid(
            format!("text of page {url}"),
            format!("{} bytes, more than {MAX_TEXT_BYTES}", p.text.len()),
        ));
    }
    if p.body.len() > MAX_BODY_BYTES {
        return Err(StoreError::invalid(
            format!("body of page {url}"),
            format!("{} bytes, more than {MAX_BODY_BYTES}", p.body.len()),
        ));
    }
    if p.text.trim().is_empty() && p.body.is_empty() {
        return Err(StoreError::invalid(format!("page {url}"), "neither body nor text"));
    }
    if let Some(c) = &p.charset {
        check_field("page charset", c, false)?;
    }
    if let Some(t) = &p.canon_tag {
        check_canon_tag(t)?;
    }
    match &p.source {
        PageSource::Import(f) | PageSource::Api(f) => check_field("page source", f, false)?,
        PageSource::Crawl => {}
    }
    let content_hash = hash_bytes(p.text.as_bytes());
    let source_json =
        serde_json::to_string(&p.source).map_err(|e| StoreError::invalid("page source", e.to_string()))?;
    Ok(PreparedPage {
        url,
        site,
        content_hash,
        body_z: compress(&p.body),
        text_z: compress(p.text.as_bytes()),
        source_json,
    })
}

pub(crate) fn prepare_pages(ps: &[NewPage]) -> Result<Vec<PreparedPage>, StoreError> {
    let prepared = ps.iter().map(prepare_page).collect::<Result<Vec<_>, _>>()?;
    let mut seen = HashSet::with_capacity(prepared.len());
    for p in &prepared {
        if !seen.insert(p.url.as_str()) {
            return Err(StoreError::Duplicate { what: "page url in batch", key: p.url.clone() });
        }
    }
    Ok(prepared)
}

/// A page whose stored text is the same as a new fetch's has the new fetch's canon tag
/// recorded (the text is the canonical text of that canonicalisation too), unless the
/// fetch carries none: a tag is never taken away from a text that is unchanged.
pub(crate) fn retag(stored: Option<&str>, new: Option<&str>) -> bool {
    new.is_some() && stored != new
}

/// Check the canon tag [`crate::PageStore::tag_pages`] records before anything is written.
pub(crate) fn check_canon_tag(tag: &str) -> Result<(), StoreError> {
    check_field("page canon tag", tag, true)
}

/// A stored page `format`: absent for pages stored before schema 11, else a name
/// [`PageFormat::parse`] knows (anything else is a corrupt row, never guessed).
/// `what` names the record in the error.
pub(crate) fn stored_format(
    format: Option<&str>,
    what: impl FnOnce() -> String,
) -> Result<Option<PageFormat>, StoreError> {
    format.map(|f| PageFormat::parse(f).ok_or_else(|| StoreError::corrupt(what(), f.to_owned()))).transpose()
}

/// Check a review change's reviewer and note before anything is written.
/// The licensed-domain rule's part of a review: only [`LICENSED_BY`] makes match `id`
/// licensed or changes it while it is (`from`, its status read in the same transaction or
/// conditionally updated on).
pub(crate) fn check_licensed_rule(id: i64, from: &str, to: ReviewStatus, by: &str) -> Result<(), StoreError> {
    if by == LICENSED_BY {
        return Ok(());
    }
    if to == ReviewStatus::Licensed {
        return Err(StoreError::invalid(
            "review status",
            "licensed is set by the holder's licensed domains, not by review",
        ));
    }
    if from == ReviewStatus::Licensed.as_str() {
        return Err(StoreError::Conflict {
            what: format!("match {id}"),
            reason: "it is licensed: it is on a domain its holder licensed, and its status follows the holder's \
                     licensed domains, not review"
                .into(),
        });
    }
    Ok(())
}

pub(crate) fn validate_review(by: &str, note: Option<&str>) -> Result<(), StoreError> {
    if by.trim().is_empty() || by.len() > MAX_FIELD_BYTES {
        return Err(StoreError::invalid("reviewer", "empty or too long"));
    }
    if note.is_some_and(|n| n.len() > MAX_FIELD_BYTES) {
        return Err(StoreError::invalid("review note", "too long"));
    }
    Ok(())
}

/// Check a batch of fingerprint records before anything is written.
pub(crate) fn validate_fingerprints(items: &[(Subject, Fingerprints)]) -> Result<(), StoreError> {
    let mut seen = HashSet::with_capacity(items.len());
    for (s, fp) in items {
        if s.id <= 0 {
            return Err(StoreError::invalid("fingerprint subject", format!("id {} is not positive", s.id)));
        }
        check_field(&format!("params_tag of {s}"), &fp.params_tag, true)?;
        if !seen.insert(*s) {
            return Err(StoreError::Duplicate { what: "fingerprint subject in batch", key: s.to_string() });
        }
    }
    Ok(())
}

pub(crate) fn validate_match(m: &NewMatch) -> Result<(String, u64), StoreError> {
    if !m.comparison.verdict.score.is_finite() {
        return Err(StoreError::invalid("comparison", "score is not finite"));
    }
    if !crate::model::MATCH_KINDS.contains(&m.kind.as_str()) {
        return Err(StoreError::invalid(
            "match kind",
            format!("{:?} is not one of {}", m.kind, crate::model::MATCH_KINDS.join(", ")),
        ));
    }
    // Serialised once the cheap checks pass, to a string from the start: serde_json writes
    // UTF-8, so it needs no second pass to validate it, nor a copy.
    let json = serde_json::to_string(&m.comparison).map_err(|e| StoreError::invalid("comparison", e.to_string()))?;
    let hash = hash_bytes(json.as_bytes());
    Ok((json, hash))
}

/// `ids` ascending, each once (the order a batch read answers in).
pub(crate) fn sorted_ids(ids: &[i64]) -> Vec<i64> {
    let mut ids = ids.to_vec();
    ids.sort_unstable();
    ids.dedup();
    ids
}

/// [`validate_match`] of every match of a batch, which names each `(section, page)`
/// at most once.
pub(crate) fn validate_matches(ms: &[NewMatch]) -> Result<Vec<(String, u64)>, StoreError> {
    let mut seen = std::collections::HashSet::with_capacity(ms.len());
    for m in ms {
        if !seen.insert((m.section_id, m.page_id)) {
            return Err(StoreError::Duplicate {
                what: "match in one batch",
                key: format!("{}/{}", m.section_id, m.page_id),
            });
        }
    }
    ms.iter().map(validate_match).collect()
}

pub(crate) fn validate_task(t: &NewTask) -> Result<String, StoreError> {
    check_field("task key", &t.key, true)?;
    check_field("task kind", &t.kind, true)?;
    serde_json::to_string(&t.params).map_err(|e| StoreError::invalid("task params", e.to_string()))
}

/// Largest capture record (the leaf bytes) a capture may carry.
pub(crate) const MAX_CAPTURE_RECORD_BYTES: usize = 1024 * 1024;
/// Most files one capture may list.
pub(crate) const MAX_CAPTURE_FILES: usize = 1_000;

/// SHA-256 of `bytes`, lower-case hex: the name of a stored evidence file.
pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    hex::encode(sha2::Sha256::digest(bytes))
}

/// `sha256` is 64 lower-case hex digits (so it is also a safe file name).
pub(crate) fn check_sha256(sha256: &str) -> Result<(), StoreError> {
    if sha256.len() != 64 || !sha256.bytes().all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b)) {
        return Err(StoreError::invalid(
            "evidence file SHA-256",
            format!("{sha256:?} is not 64 lower-case hex digits"),
        ));
    }
    Ok(())
}

pub(crate) fn validate_capture(c: &NewCapture) -> Result<(), StoreError> {
    check_field("capture key", &c.key, true)?;
    check_field("capture url", &c.url, true)?;
    if !crate::model::CAPTURE_REASONS.contains(&c.reason.as_str()) {
        return Err(StoreError::invalid(
            "capture reason",
            format!("{:?} is not one of {}", c.reason, crate::model::CAPTURE_REASONS.join(", ")),
        ));
    }
    if c.record.is_empty() || c.record.len() > MAX_CAPTURE_RECORD_BYTES {
        return Err(StoreError::invalid(
            "capture record",
            format!("{} bytes, not in 1..={MAX_CAPTURE_RECORD_BYTES}", c.record.len()),
        ));
    }
    if c.files.len() > MAX_CAPTURE_FILES {
        return Err(StoreError::invalid("capture files", format!("{}, more than {MAX_CAPTURE_FILES}", c.files.len())));
    }
    for f in &c.files {
        check_field("capture file name", &f.name, true)?;
        check_field("capture file media type", &f.media_type, true)?;
        check_sha256(&f.sha256)?;
        if f.size > i64::MAX as u64 {
            return Err(StoreError::invalid("capture file size", f.size.to_string()));
        }
    }
    Ok(())
}

/// A tree head to keep: its size as stored (an `i64`), the head JSON text.
pub(crate) fn check_tree_head(size: u64, head_json: &str) -> Result<i64, StoreError> {
    let size = i64::try_from(size).map_err(|_| StoreError::invalid("tree head size", size.to_string()))?;
    if head_json.len() > MAX_CAPTURE_RECORD_BYTES {
        return Err(StoreError::invalid(
            "tree head",
            format!("{} bytes, more than {MAX_CAPTURE_RECORD_BYTES}", head_json.len()),
        ));
    }
    serde_json::from_str::<serde::de::IgnoredAny>(head_json)
        .map_err(|e| StoreError::invalid("tree head", format!("not JSON: {e}")))?;
    Ok(size)
}

pub(crate) fn check_limit(limit: u32) -> Result<i64, StoreError> {
    if limit == 0 || limit > 10_000 {
        return Err(StoreError::invalid("limit", format!("{limit} is not in 1..=10000")));
    }
    Ok(limit as i64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_normalise_to_one_key() {
        let (a, site) = normalize_url("HTTP://Example.COM:80/a/b?x=1#frag").unwrap();
        assert_eq!(a, "http://example.com/a/b?x=1");
        assert_eq!(site, "example.com");
        assert_eq!(normalize_url("https://example.com").unwrap().0, "https://example.com/");
        assert_eq!(normalize_url("https://example.com:8443/x").unwrap().1, "example.com");
        assert!(normalize_url("ftp://example.com/").is_err());
        assert!(normalize_url("example.com/x").is_err());
        assert!(normalize_url("http:///x").is_err());
    }

    /// Blobs are written with zstd and read whichever way they were written: a blob
    /// deflated before zstd still reads; a zstd blob cut short, damaged, or claiming more
    /// than the largest text is an error.
    #[test]
    fn blobs_are_zstd_and_deflated_ones_still_read() {
        let novel = "第一回 宴桃园豪杰三结义 斩黄巾英雄首立功。话说天下大势，分久必合，合久必分。".repeat(500);
        for input in [b"".as_slice(), b"a", novel.as_bytes()] {
            let z = compress(input);
            assert!(z.starts_with(&ZSTD_MAGIC), "{} bytes", input.len());
            assert_eq!(decompress(&z, "t").unwrap(), input);
            let old = deflate(input);
            assert!(!old.starts_with(&ZSTD_MAGIC));
            assert_eq!(decompress(&old, "t").unwrap(), input, "deflated, {} bytes", input.len());
        }
        let z = compress(novel.as_bytes());
        assert!(z.len() < novel.len() / 4, "{} bytes for {}", z.len(), novel.len());
        let e = decompress(&z[..z.len() - 9], "body of page 3").unwrap_err();
        assert!(e.to_string().contains("body of page 3"), "{e}");
        let mut damaged = z.clone();
        let at = damaged.len() / 2;
        damaged[at] ^= 0x55;
        assert!(decompress(&damaged, "t").is_err(), "a damaged blob fails its checksum or its decoding");
        // A frame header claiming 1 TiB: refused before anything is allocated.
        let mut huge = ZSTD_MAGIC.to_vec();
        huge.push(0xE0); // frame header descriptor: 8-byte content size, single segment
        huge.extend_from_slice(&(1u64 << 40).to_le_bytes());
        let e = decompress(&huge, "t").unwrap_err();
        assert!(e.to_string().contains("claims"), "{e}");
        assert!(decompress(&ZSTD_MAGIC, "t").is_err());
    }

    #[test]
    fn compression_round_trips() {
        let text = "第一章 天下大势，分久必合，合久必分。".repeat(100);
        let z = compress(text.as_bytes());
        assert!(z.len() < text.len());
        assert_eq!(decompress_text(&z, "t").unwrap(), text);
        assert!(decompress(b"not deflate \xff\xff", "t").is_err());
    }

    /// One inflate state per thread, reused: it reads what the encoder wrote, one stream
    /// after another (empty, tiny, compressible, incompressible, over several output
    /// buffers), refuses a stream cut short (the reading decoder returned what it had),
    /// and reads the next stream after that error.
    #[test]
    fn decompression_with_a_reused_state_reads_every_stream_and_refuses_a_cut_one() {
        let novel = "第一回 宴桃园豪杰三结义 斩黄巾英雄首立功。话说天下大势，分久必合，合久必分。".repeat(4000);
        let noise: Vec<u8> = (0u32..300_000).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
        let inputs: [&[u8]; 6] = [b"", b"a", novel.as_bytes(), &noise, &novel.as_bytes()[..70_001], b"<html>x</html>"];
        for input in inputs {
            assert_eq!(decompress(&deflate(input), "t").unwrap(), input, "{} bytes", input.len());
        }
        let z = deflate(novel.as_bytes());
        let e = decompress(&z[..z.len() / 2], "text of page 7").unwrap_err();
        assert!(e.to_string().contains("text of page 7"), "{e}");
        assert_eq!(decompress(&z, "t").unwrap(), novel.as_bytes(), "the state is usable after an error");
    }

    #[test]
    fn invalid_utf8_metadata_is_a_clear_error() {
        let e = utf8_field("title", b"\xff\xfe abc").unwrap_err();
        assert!(e.is_user_error());
        assert!(e.to_string().contains("invalid UTF-8"));
    }
}
