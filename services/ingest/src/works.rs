//! `import works`: the rights holders' texts, from files (.txt, .md, .html, .epub),
//! folders of them, and JSONL (one work per line), split into chapters and stored by
//! `(owner, external id)`: a re-import updates the work, never duplicates it.

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::Value;
use zhiwen_core::canon::{self, InputFormat};
use zhiwen_core::params::CanonParams;
use zhiwen_store::{NewWork, Outcome, Stores, Subject, WorkUpserted};

use crate::chapters;
use crate::error::{IngestError, Result};
use crate::files::{self, CancelRead, Feed, InputFile, Item, CANCELLED};
use crate::html;
use crate::options::{ImportLimits, ImportOptions};
use crate::report::{ImportSummary, Progress};

const WORK_EXTENSIONS: &[&str] = &["txt", "text", "md", "markdown", "html", "htm", "xhtml", "epub", "jsonl", "ndjson"];

/// Import works from files, folders and JSONL; see the module documentation.
///
/// `owner` is the rights holder of the works; a JSONL line may name another only when
/// [`ImportOptions::owner_from_lines`] allows it (an operator's import). Returns the
/// summary; an error only when the store itself keeps failing (the works stored before
/// that stay stored, each one whole).
pub async fn import_works(
    stores: &Stores,
    paths: &[PathBuf],
    owner: &str,
    opts: &ImportOptions,
    progress: &dyn Progress,
) -> Result<ImportSummary> {
    let mut summary = ImportSummary::default();
    if owner.trim().is_empty() {
        return Err(IngestError::Config("the owner of the works is empty".into()));
    }
    let inputs = files::collect(paths, &|ext| WORK_EXTENSIONS.contains(&ext), &mut summary);
    progress.start("import works", Some(inputs.iter().map(|f| f.size).sum()));
    let owner_s = owner.to_owned();
    let read_opts = opts.clone();
    let (mut rx, reader) = files::spawn_reader(move |feed| {
        for f in &inputs {
            if !feed.send(Item::File(f.display())) {
                return;
            }
            read_file(f, &owner_s, &read_opts, feed);
        }
    });
    let mut batch: Vec<(String, NewWork)> = Vec::new();
    while let Some(items) = rx.recv().await {
        for item in items {
            if let Some(rec) = files::route(item, &mut summary, progress) {
                batch.push(rec);
                if batch.len() >= opts.batch_size.max(1) {
                    store_batch(stores, std::mem::take(&mut batch), opts, &mut summary).await?;
                }
            }
        }
    }
    store_batch(stores, batch, opts, &mut summary).await?;
    if let Err(e) = reader.await {
        summary.reject("reader", format!("the file reader stopped: {e}"));
    }
    progress.finish();
    Ok(summary)
}

async fn store_batch(
    stores: &Stores,
    batch: Vec<(String, NewWork)>,
    opts: &ImportOptions,
    summary: &mut ImportSummary,
) -> Result<()> {
    if batch.is_empty() {
        return Ok(());
    }
    // Old section ids of works that exist, so their fingerprints can be invalidated
    // (sections beyond the new count are deleted by the store).
    let mut old_sections = Vec::with_capacity(batch.len());
    for (_, w) in &batch {
        let ids = match stores.works.find_work(&w.owner, &w.external_id).await? {
            Some(old) => stores.works.sections_of(old.id).await?.into_iter().map(|s| s.id).collect(),
            None => Vec::new(),
        };
        old_sections.push(ids);
    }
    let works: Vec<NewWork> = batch.iter().map(|(_, w)| w.clone()).collect();
    match stores.works.upsert_works(&works).await {
        Ok(results) => {
            for (r, old) in results.iter().zip(&old_sections) {
                record(stores, r, old, opts, summary).await?;
            }
        }
        Err(e) if e.is_user_error() => {
            // Something in the batch is invalid: store one by one to find it, so the
            // others are not held back by it.
            for ((name, w), old) in batch.iter().zip(&old_sections) {
                match stores.works.upsert_work(w).await {
                    Ok(r) => record(stores, &r, old, opts, summary).await?,
                    Err(e) if e.is_user_error() => summary.reject(name.clone(), e),
                    Err(e) => return Err(e.into()),
                }
            }
        }
        Err(e) => return Err(e.into()),
    }
    Ok(())
}

async fn record(
    stores: &Stores,
    r: &WorkUpserted,
    old_sections: &[i64],
    opts: &ImportOptions,
    summary: &mut ImportSummary,
) -> Result<()> {
    summary.count(r.outcome);
    if r.outcome == Outcome::Unchanged {
        return Ok(());
    }
    summary.changed.works.push(r.id);
    summary.changed.sections.extend(r.sections.iter().map(|(_, id)| *id));
    if r.outcome == Outcome::Updated && opts.invalidate_fingerprints {
        let mut ids: Vec<i64> = old_sections.iter().copied().chain(r.sections.iter().map(|(_, id)| *id)).collect();
        ids.sort_unstable();
        ids.dedup();
        for id in ids {
            stores.fingerprints.delete_fingerprints(Subject::section(id)).await?;
        }
    }
    Ok(())
}

/// Read one input file, sending its works (or rejections) and progress.
fn read_file(f: &InputFile, owner: &str, opts: &ImportOptions, feed: &Feed<NewWork>) {
    let name = f.display();
    match f.extension().as_str() {
        "jsonl" | "ndjson" => read_jsonl(f, owner, opts, feed),
        ext => {
            let cancelled = || feed.is_cancelled();
            let result = files::read_limited(&f.path, opts.max_file_bytes)
                .and_then(|bytes| read_document(ext, &bytes, &opts.limits, &cancelled));
            match result {
                Ok(doc) => {
                    let external_id = strip_extension(&f.relative());
                    let title =
                        doc.title.clone().filter(|t| !t.trim().is_empty()).unwrap_or_else(|| file_stem(&f.path));
                    let author = doc.author.clone().unwrap_or_default();
                    let notes = work_notes(&name, &doc);
                    let work = build_work(owner, &external_id, &title, &author, doc, &name, opts);
                    match work {
                        Ok(w) => {
                            feed.send(Item::Record(name, w));
                            for n in notes {
                                feed.send(n);
                            }
                        }
                        Err(e) => {
                            feed.send(Item::Reject(name, e));
                        }
                    };
                }
                Err(e) => {
                    feed.send(Item::Reject(name, e));
                }
            }
            feed.send(Item::Advance(f.size));
        }
    }
}

/// The notes of a document read with replacements.
fn work_notes(name: &str, doc: &Document) -> Vec<Item<NewWork>> {
    if doc.replaced_bytes == 0 {
        return Vec::new();
    }
    let charset = doc.charset.as_deref().unwrap_or("its charset");
    vec![
        Item::Replaced(doc.replaced_bytes),
        Item::Note(
            name.to_owned(),
            format!("{} malformed bytes of its {charset} replaced by U+FFFD", doc.replaced_bytes),
        ),
    ]
}

/// A document's text as read from one file.
pub(crate) struct Document {
    pub text: String,
    pub charset: Option<String>,
    pub title: Option<String>,
    pub author: Option<String>,
    /// For EPUBs: the text range of each spine document with its title (used as
    /// sections when the text has no headings of its own).
    pub parts: Vec<(String, usize, usize)>,
    /// Bytes malformed in the document's charset, replaced by U+FFFD.
    pub replaced_bytes: u64,
}

fn read_document(
    ext: &str,
    bytes: &[u8],
    limits: &ImportLimits,
    cancelled: &dyn Fn() -> bool,
) -> Result<Document, String> {
    match ext {
        "epub" => read_epub(bytes, limits, cancelled),
        "html" | "htm" | "xhtml" => html_document(bytes, None).map_err(|e| e.to_string()),
        _ => text_document(bytes).map_err(|e| e.to_string()),
    }
}

fn works_canon_params() -> CanonParams {
    // A rights holder's own file has no boilerplate to drop; main-content extraction
    // could drop short chapter headings.
    CanonParams { extract_main_content: false, ..CanonParams::default() }
}

fn text_document(bytes: &[u8]) -> Result<Document, IngestError> {
    let decoded = canon::decode(bytes, None).map_err(|e| IngestError::Text { what: "text".into(), source: e })?;
    check_text_like(&decoded.text, decoded.replacements)?;
    let text = normalise_newlines(&decoded.text);
    Ok(Document {
        text,
        charset: Some(decoded.charset.to_owned()),
        title: None,
        author: None,
        parts: Vec::new(),
        replaced_bytes: decoded.replaced_bytes as u64,
    })
}

fn html_document(bytes: &[u8], hint: Option<&str>) -> Result<Document, IngestError> {
    let params = works_canon_params();
    let text_error = |e| IngestError::Text { what: "html".into(), source: e };
    if bytes.is_empty() {
        return Err(text_error(zhiwen_core::CoreError::EmptyInput));
    }
    if bytes.len() > params.max_input_bytes {
        return Err(text_error(zhiwen_core::CoreError::TooLarge { size: bytes.len(), limit: params.max_input_bytes }));
    }
    let decoded = canon::decode(bytes, hint).map_err(text_error)?;
    let replaced_bytes = decoded.replaced_bytes as u64;
    let c =
        canon::canonicalize_decoded(decoded.text, decoded.charset, InputFormat::Html, &params).map_err(text_error)?;
    let text = html::original_text(&c);
    Ok(Document {
        text,
        charset: Some(c.charset().to_owned()),
        title: c.title().map(str::to_owned),
        author: None,
        parts: Vec::new(),
        replaced_bytes,
    })
}

/// Binary files decode to garbage in some charset: refuse text that is mostly
/// replacement or control characters.
pub(crate) fn check_text_like(text: &str, replacements: usize) -> Result<(), IngestError> {
    let (total, control) = chars_and_controls(text);
    if (replacements + control) * 10 > total.max(1) {
        return Err(IngestError::invalid("text", "looks like binary data, not text"));
    }
    Ok(())
}

/// The characters of `text`, and how many of them are control characters other than
/// `\n`, `\r`, `\t` and form feed, in one pass over its bytes (every page and work is
/// checked; decoding each character twice cost 3.5% of `zhiwen import pages`). A character
/// starts at every byte that is not a continuation byte; the control characters
/// (`char::is_control`: U+0000-U+001F and U+007F-U+009F) are the bytes below 0x20 and
/// 0x7F, and the two-byte sequences `C2 80`-`C2 9F`.
fn chars_and_controls(text: &str) -> (usize, usize) {
    let bytes = text.as_bytes();
    let mut chars = 0;
    let mut controls = 0;
    for (i, &b) in bytes.iter().enumerate() {
        chars += usize::from(b & 0xC0 != 0x80);
        controls += usize::from(
            (b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0C))
                || b == 0x7F
                || (b == 0xC2 && bytes.get(i + 1).is_some_and(|n| (0x80..=0x9F).contains(n))),
        );
    }
    (chars, controls)
}

fn normalise_newlines(s: &str) -> String {
    if s.contains('\r') {
        s.replace("\r\n", "\n").replace('\r', "\n")
    } else {
        s.to_owned()
    }
}

fn build_work(
    owner: &str,
    external_id: &str,
    title: &str,
    author: &str,
    doc: Document,
    source: &str,
    opts: &ImportOptions,
) -> Result<NewWork, String> {
    let text = doc.text.trim_end().to_owned();
    if text.trim().is_empty() {
        return Err("no text".into());
    }
    let mut sections = chapters::sections(&text, &opts.chapters);
    if sections.len() <= 1 && doc.parts.len() > 1 {
        // No headings in the text, but the EPUB has one document per chapter.
        sections = doc
            .parts
            .iter()
            .filter_map(|(t, a, b)| {
                let body = canon::slice_chars(&text, *a, *b);
                (!body.trim().is_empty()).then(|| zhiwen_store::NewSection {
                    ordinal: 0,
                    title: t.clone(),
                    text: body.to_owned(),
                    char_start: *a as u64,
                    char_end: *b as u64,
                })
            })
            .enumerate()
            .map(|(i, mut s)| {
                s.ordinal = i as u32;
                s
            })
            .collect();
    }
    if sections.is_empty() {
        return Err("no text".into());
    }
    Ok(NewWork {
        owner: owner.to_owned(),
        external_id: external_id.to_owned(),
        title: title.trim().to_owned(),
        author: author.trim().to_owned(),
        source_file: Some(source.to_owned()),
        charset: doc.charset,
        text,
        sections,
    })
}

fn file_stem(p: &Path) -> String {
    p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default()
}

fn strip_extension(rel: &str) -> String {
    match rel.rfind('.') {
        Some(i) if i > rel.rfind('/').map_or(0, |s| s + 1) => rel[..i].to_owned(),
        _ => rel.to_owned(),
    }
}

fn read_jsonl(f: &InputFile, owner: &str, opts: &ImportOptions, feed: &Feed<NewWork>) {
    files::read_jsonl(f, opts.max_file_bytes, feed, |line, item| {
        jsonl_work(line, owner, item, opts).map(|w| w.map(|w| (w, Vec::new())))
    });
}

/// Why a line naming another owner is refused (the same whoever it names).
pub const OTHER_OWNER: &str = "\"owner\" names another rights holder: this import may only add works of its own owner";

fn jsonl_work(line: &[u8], owner: &str, item: &str, opts: &ImportOptions) -> Result<Option<NewWork>, String> {
    let trimmed = line.trim_ascii();
    if trimmed.is_empty() {
        return Ok(None);
    }
    let v: Value = serde_json::from_slice(trimmed).map_err(|e| format!("not valid JSON: {e}"))?;
    let obj = v.as_object().ok_or("not a JSON object")?;
    let string = |k: &str| -> Option<String> {
        match obj.get(k) {
            Some(Value::String(s)) => Some(s.clone()),
            Some(Value::Number(n)) => Some(n.to_string()),
            _ => None,
        }
    };
    let id = string("id").filter(|s| !s.trim().is_empty()).ok_or("no \"id\"")?;
    let owner = match string("owner").map(|s| s.trim().to_owned()).filter(|s| !s.is_empty()) {
        Some(named) if opts.owner_from_lines || named == owner => named,
        Some(_) => return Err(OTHER_OWNER.into()),
        None => owner.to_owned(),
    };
    let title = string("title").unwrap_or_default();
    let author = string("author").unwrap_or_default();
    let doc = match (string("text"), string("html")) {
        (Some(t), _) => {
            check_text_like(&t, 0).map_err(|e| e.to_string())?;
            Document {
                text: normalise_newlines(&t),
                charset: Some("UTF-8".into()),
                title: None,
                author: None,
                parts: Vec::new(),
                replaced_bytes: 0,
            }
        }
        (None, Some(h)) => html_document(h.as_bytes(), Some("utf-8")).map_err(|e| e.to_string())?,
        (None, None) => return Err("neither \"text\" nor \"html\"".into()),
    };
    let title = if title.trim().is_empty() { doc.title.clone().unwrap_or_else(|| id.clone()) } else { title };
    build_work(&owner, id.trim(), &title, &author, doc, item, opts).map(Some)
}

// ---------------------------------------------------------------------------------
// EPUB: a zip with META-INF/container.xml -> the OPF package -> manifest and spine.

/// The text of an EPUB (its spine documents in order), with its title and author:
/// `(title, author, text)`, within the default [`ImportLimits`].
pub fn read_epub_text(bytes: &[u8]) -> Result<(Option<String>, Option<String>, String), String> {
    read_epub_text_limited(bytes, &ImportLimits::default())
}

/// [`read_epub_text`] within `limits`: entry count, declared and actual uncompressed sizes
/// (per entry and in all), and compression ratios are checked before and while inflating.
pub fn read_epub_text_limited(
    bytes: &[u8],
    limits: &ImportLimits,
) -> Result<(Option<String>, Option<String>, String), String> {
    read_epub(bytes, limits, &|| false).map(|d| (d.title, d.author, d.text))
}

type Zip<'a> = zip::ZipArchive<std::io::Cursor<&'a [u8]>>;

/// What has been inflated from one EPUB so far, against its bounds.
struct Inflated<'l> {
    limits: &'l ImportLimits,
    bytes: u64,
    compressed: u64,
}

/// Read an EPUB's spine documents in order into one text.
pub(crate) fn read_epub(bytes: &[u8], limits: &ImportLimits, cancelled: &dyn Fn() -> bool) -> Result<Document, String> {
    let mut zip =
        zip::ZipArchive::new(std::io::Cursor::new(bytes)).map_err(|e| format!("not a valid EPUB (zip): {e}"))?;
    if zip.len() > limits.max_archive_entries {
        return Err(format!(
            "the EPUB lists {} entries, more than the bound of {} (a zip bomb?)",
            zip.len(),
            limits.max_archive_entries
        ));
    }
    let mut inflated = Inflated { limits, bytes: 0, compressed: 0 };
    let container = zip_text(&mut zip, "META-INF/container.xml", &mut inflated, cancelled)?;
    let opf_path = canon::start_tags(&container)
        .find(|t| t.name() == "rootfile")
        .and_then(|t| t.attr("full-path"))
        .ok_or("EPUB container names no package (rootfile)")?;
    let opf = zip_text(&mut zip, &opf_path, &mut inflated, cancelled)?;
    let base = match opf_path.rfind('/') {
        Some(i) => &opf_path[..=i],
        None => "",
    };
    let mut manifest: Vec<(String, String, String)> = Vec::new(); // id, href, media type
    let mut spine: Vec<String> = Vec::new();
    for t in canon::start_tags(&opf) {
        let local = t.name().rsplit(':').next().unwrap_or("");
        match local {
            "item" => {
                if let (Some(id), Some(href)) = (t.attr("id"), t.attr("href")) {
                    manifest.push((id, href, t.attr("media-type").unwrap_or_default()));
                }
            }
            "itemref" => spine.extend(t.attr("idref")),
            _ => {}
        }
    }
    // Each spine entry is a document to read: as many as the archive may hold entries (a
    // spine naming one small entry a million times is no smaller than a zip bomb).
    if spine.len() > limits.max_archive_entries {
        return Err(format!(
            "the EPUB's spine lists {} documents, more than the bound of {}",
            spine.len(),
            limits.max_archive_entries
        ));
    }
    let title = element_text(&opf, "title");
    let author = element_text(&opf, "creator");
    // The first item of an id, as a search of the manifest in order finds it.
    let mut by_id: HashMap<&str, (&str, &str)> = HashMap::with_capacity(manifest.len());
    for (id, href, media) in &manifest {
        by_id.entry(id.as_str()).or_insert((href.as_str(), media.as_str()));
    }
    let mut documents = Vec::new();
    for idref in &spine {
        let Some(&(href, media)) = by_id.get(idref.as_str()) else { continue };
        if !media.is_empty() && !media.contains("html") && !media.contains("xml") {
            continue;
        }
        documents.push(resolve_zip_path(base, href));
    }
    check_declared_sizes(&mut zip, &documents, &inflated)?;
    let mut text = String::new();
    // Characters of `text`, counted as it grows (counting the whole text again for each
    // document made a long spine quadratic).
    let mut chars = 0usize;
    let mut parts = Vec::new();
    let mut charset = None;
    let mut replaced_bytes = 0u64;
    for path in &documents {
        if cancelled() {
            return Err(CANCELLED.into());
        }
        let raw = zip_bytes(&mut zip, path, &mut inflated, cancelled)?;
        let doc = match html_document(&raw, None) {
            Ok(d) => d,
            Err(IngestError::Text { source: zhiwen_core::CoreError::NoText, .. }) => continue,
            Err(e) => return Err(format!("{path}: {e}")),
        };
        if doc.text.trim().is_empty() {
            continue;
        }
        replaced_bytes += doc.replaced_bytes;
        charset.get_or_insert(doc.charset.clone().unwrap_or_default());
        if !text.is_empty() {
            text.push_str("\n\n");
            chars += 2;
        }
        let start = chars;
        text.push_str(&doc.text);
        chars += doc.text.chars().count();
        let end = chars;
        let part_title =
            doc.title.unwrap_or_else(|| doc.text.lines().next().unwrap_or("").trim().chars().take(40).collect());
        parts.push((part_title, start, end));
    }
    if text.trim().is_empty() {
        return Err("the EPUB has no text in its spine".into());
    }
    // Extend each part to the start of the next so the parts cover the text.
    let total = chars;
    debug_assert_eq!(total, text.chars().count());
    for i in 0..parts.len() {
        parts[i].2 = parts.get(i + 1).map_or(total, |n| n.1);
    }
    if let Some(first) = parts.first_mut() {
        first.1 = 0;
    }
    Ok(Document { text, charset, title, author, parts, replaced_bytes })
}

/// Refuse a bomb before inflating it: the spine documents' sizes as the zip declares them
/// (an entry named twice counts twice) must fit the per-entry, total and ratio bounds.
fn check_declared_sizes(zip: &mut Zip<'_>, paths: &[String], inflated: &Inflated<'_>) -> Result<(), String> {
    let limits = inflated.limits;
    let (mut total, mut compressed) = (inflated.bytes, inflated.compressed);
    for path in paths {
        let Some(i) = zip.index_for_name(path) else { continue };
        let entry = zip.by_index_raw(i).map_err(|e| format!("EPUB entry {path}: {e}"))?;
        check_entry(path, entry.size(), entry.compressed_size(), limits)?;
        total = total.saturating_add(entry.size());
        compressed = compressed.saturating_add(entry.compressed_size());
    }
    if total > limits.max_archive_bytes {
        return Err(format!(
            "the EPUB's spine documents declare {total} bytes uncompressed, more than the bound of {} bytes (a zip bomb?)",
            limits.max_archive_bytes
        ));
    }
    if limits.ratio_exceeded(total, compressed) {
        return Err(format!(
            "the EPUB's spine documents declare {total} bytes uncompressed from {compressed}, more than {} times (a zip bomb?)",
            limits.max_ratio
        ));
    }
    Ok(())
}

fn check_entry(name: &str, size: u64, compressed: u64, limits: &ImportLimits) -> Result<(), String> {
    if size > limits.max_entry_bytes {
        return Err(format!(
            "EPUB entry {name} declares {size} bytes uncompressed, more than the bound of {} bytes",
            limits.max_entry_bytes
        ));
    }
    if limits.ratio_exceeded(size, compressed) {
        return Err(format!(
            "EPUB entry {name} declares {size} bytes uncompressed from {compressed}, more than {} times (a zip bomb?)",
            limits.max_ratio
        ));
    }
    Ok(())
}

fn resolve_zip_path(base: &str, href: &str) -> String {
    let href = href.split('#').next().unwrap_or("");
    let decoded: String = url::form_urlencoded::parse(format!("x={}", href.replace('+', "%2B")).as_bytes())
        .next()
        .map(|(_, v)| v.into_owned())
        .unwrap_or_else(|| href.to_owned());
    let mut parts: Vec<&str> = base.split('/').filter(|s| !s.is_empty()).collect();
    for seg in decoded.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                parts.pop();
            }
            s => parts.push(s),
        }
    }
    parts.join("/")
}

/// Inflate one entry within the bounds: its declared size is checked first, and it may
/// not inflate past it (headers lie), nor past what is left of the archive's budget, nor
/// past the ratio bound for the archive as a whole.
fn zip_bytes(
    zip: &mut Zip<'_>,
    name: &str,
    inflated: &mut Inflated<'_>,
    cancelled: &dyn Fn() -> bool,
) -> Result<Vec<u8>, String> {
    let limits = inflated.limits;
    let entry = zip.by_name(name).map_err(|e| format!("EPUB entry {name}: {e}"))?;
    let (declared, compressed) = (entry.size(), entry.compressed_size());
    check_entry(name, declared, compressed, limits)?;
    let left = limits.max_archive_bytes.saturating_sub(inflated.bytes);
    if declared > left {
        return Err(format!(
            "EPUB entry {name}: the EPUB inflates to more than the bound of {} bytes (a zip bomb?)",
            limits.max_archive_bytes
        ));
    }
    let mut out = Vec::with_capacity(declared.min(1 << 20) as usize);
    CancelRead::new(entry, cancelled)
        .take(declared + 1)
        .read_to_end(&mut out)
        .map_err(|e| format!("EPUB entry {name}: {e}"))?;
    if out.len() as u64 > declared {
        return Err(format!("EPUB entry {name} inflates to more than the {declared} bytes its header declares"));
    }
    inflated.bytes += out.len() as u64;
    inflated.compressed += compressed;
    if limits.ratio_exceeded(inflated.bytes, inflated.compressed) {
        return Err(format!(
            "the EPUB inflates to {} bytes from {}, more than {} times (a zip bomb?)",
            inflated.bytes, inflated.compressed, limits.max_ratio
        ));
    }
    Ok(out)
}

fn zip_text(
    zip: &mut Zip<'_>,
    name: &str,
    inflated: &mut Inflated<'_>,
    cancelled: &dyn Fn() -> bool,
) -> Result<String, String> {
    let bytes = zip_bytes(zip, name, inflated, cancelled)?;
    canon::decode(&bytes, Some("utf-8")).map(|d| d.text).map_err(|e| format!("EPUB entry {name}: {e}"))
}

/// Text of the first element whose local name is `local` (`dc:title` -> `title`).
fn element_text(xml: &str, local: &str) -> Option<String> {
    let lower = xml.to_ascii_lowercase();
    for prefix in ["<dc:", "<"] {
        let open = format!("{prefix}{local}");
        let mut from = 0;
        while let Some(p) = lower[from..].find(&open) {
            let at = from + p;
            let after = at + open.len();
            from = after;
            if !matches!(lower.as_bytes().get(after), Some(b'>' | b' ' | b'\t' | b'\n' | b'\r')) {
                continue;
            }
            let start = after + xml[after..].find('>')? + 1;
            let end = start + xml[start..].find('<')?;
            let text = canon::decode_char_refs(xml[start..end].trim()).into_owned();
            if !text.is_empty() {
                return Some(text);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn characters_and_control_characters_are_counted_as_chars_counts_them() {
        let by_chars = |t: &str| {
            let controls = t.chars().filter(|&c| c.is_control() && !matches!(c, '\n' | '\r' | '\t' | '\u{c}')).count();
            (t.chars().count(), controls)
        };
        let samples = [
            "",
            "第一回 宴桃园豪杰三结义\n\t话说天下大势，分久必合。\r\n\u{c}",
            "\u{0}\u{1}\u{1f}\u{7f}\u{80}\u{85}\u{9f}\u{a0}\u{c2}\u{ff}\u{100}",
            "Ā¢\u{9f}\u{9f}Â\u{80}€😀\u{feff}\u{fffd}",
            "\u{7}\u{8}abc\u{1b}[0m\u{85}末",
        ];
        for t in samples {
            assert_eq!(chars_and_controls(t), by_chars(t), "{t:?}");
        }
        // Every code point in the ranges where the bytes of controls and others meet.
        let all: String = (0u32..0x800).chain(0xFFF0..0x1_0010).filter_map(char::from_u32).collect();
        assert_eq!(chars_and_controls(&all), by_chars(&all));
    }

    #[test]
    fn zip_paths_resolve_relative_to_the_package() {
        assert_eq!(resolve_zip_path("OEBPS/", "Text/ch%201.xhtml#x"), "OEBPS/Text/ch 1.xhtml");
        assert_eq!(resolve_zip_path("OEBPS/", "../x.html"), "x.html");
        assert_eq!(resolve_zip_path("", "a.html"), "a.html");
    }

    #[test]
    fn element_text_reads_dublin_core() {
        let opf =
            "<metadata><dc:title>三国&amp;演义</dc:title><dc:creator opf:role=\"aut\">罗贯中</dc:creator></metadata>";
        assert_eq!(element_text(opf, "title").as_deref(), Some("三国&演义"));
        assert_eq!(element_text(opf, "creator").as_deref(), Some("罗贯中"));
    }

    #[test]
    fn jsonl_lines_are_checked() {
        let o = ImportOptions::default();
        assert!(jsonl_work(
            b"{\"id\":1,\"title\":\"t\",\"text\":\"\xe7\xac\xac\xe4\xb8\x80\xe7\xab\xa0\\n\xe5\x86\x85\xe5\xae\xb9\"}",
            "o",
            "x",
            &o
        )
        .unwrap()
        .is_some());
        assert!(jsonl_work(b"{\"title\":\"t\",\"text\":\"x\"}", "o", "x", &o).unwrap_err().contains("id"));
        assert!(jsonl_work(b"{\"id\":\"a\"}", "o", "x", &o).unwrap_err().contains("text"));
        assert!(jsonl_work(b"not json", "o", "x", &o).unwrap_err().contains("JSON"));
        assert!(jsonl_work(b"   ", "o", "x", &o).unwrap().is_none());
    }
}
