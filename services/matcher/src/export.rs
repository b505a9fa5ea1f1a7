//! The one match export, for the analysts' command (`zhiwen report export`) and the API
//! (`GET /api/v1/exports/matches`) alike: the matches of a [`MatchQuery`] in a
//! [`MatchSort`] order, one set of [`COLUMNS`], as CSV (UTF-8 with a BOM, so spreadsheet
//! programs read the Chinese correctly), JSON Lines, a JSON array or XLSX.
//!
//! Rows are read [`PAGE`] at a time through the store's joined read with evidence
//! ([`QueryStore::query_matches_with_evidence`](zhiwen_store::QueryStore::query_matches_with_evidence)),
//! keyset-paged: [`ExportStream`] hands out the bytes of each page as it is written, so
//! CSV and JSON stay flat in memory whatever the size. XLSX is a zip the writer closes at
//! the end: it is built in memory and refused over [`XLSX_MAX_ROWS`] rows.
//!
//! The query decides what is exported: a caller limiting a rights holder to their own
//! works sets [`MatchQuery::owner`] before exporting.
//!
//! Rights holders choose work ids and titles, and pages choose their own text, so a cell
//! may begin like a spreadsheet formula (`=HYPERLINK(...)`): every CSV cell goes through
//! [`csv_cell`], and XLSX cells are written as strings or numbers, never as formulas.
//! JSON values are as stored. Times are RFC 3339 in UTC.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;
use std::str::FromStr;
use std::sync::{Arc, Mutex};

use serde::Serialize;
use zhiwen_store::{
    MatchCursor, MatchQuery, MatchRowWithEvidence, MatchSort, RemovalWatch, ReviewStatus, Stores, Timestamp,
};

use crate::{MatcherError, Result};

/// Rows read from the store at a time.
pub const PAGE: u32 = 500;

/// Largest XLSX export (the sheet's row limit, minus the header).
pub const XLSX_MAX_ROWS: u64 = 1_048_575;

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// Comma-separated values, UTF-8 with BOM, a header line first.
    Csv,
    /// Excel workbook, one sheet `matches`, a bold header row first.
    Xlsx,
    /// JSON Lines: one object per match and line.
    JsonLines,
    /// One JSON array of objects.
    JsonArray,
}

impl FromStr for ExportFormat {
    type Err = MatcherError;
    /// `csv`, `xlsx`, `json` (an array) or `jsonl` (JSON Lines).
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "csv" => Ok(ExportFormat::Csv),
            "xlsx" => Ok(ExportFormat::Xlsx),
            "json" => Ok(ExportFormat::JsonArray),
            "jsonl" => Ok(ExportFormat::JsonLines),
            other => Err(MatcherError::Config(format!("unknown export format {other:?} (csv, xlsx, json, jsonl)"))),
        }
    }
}

impl ExportFormat {
    /// The media type of the output.
    pub fn content_type(self) -> &'static str {
        match self {
            ExportFormat::Csv => "text/csv; charset=utf-8",
            ExportFormat::Xlsx => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            ExportFormat::JsonLines => "application/x-ndjson",
            ExportFormat::JsonArray => "application/json",
        }
    }

    /// The file name extension of the output.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Csv => "csv",
            ExportFormat::Xlsx => "xlsx",
            ExportFormat::JsonLines => "jsonl",
            ExportFormat::JsonArray => "json",
        }
    }
}

/// The column names, in order (the CSV header, the XLSX header row, the JSON keys).
pub const COLUMNS: [&str; 21] = [
    "match_id",
    "work_id",
    "owner",
    "work_external_id",
    "work_title",
    "section_ordinal",
    "section_title",
    "page_id",
    "url",
    "site",
    "kind",
    "score",
    "duplicate",
    "copied_chars",
    "first_seen",
    "last_seen",
    "status",
    "evidence_section",
    "evidence_page",
    "removal_state",
    "removed_at",
];

/// A CSV cell made safe to open in a spreadsheet program (OWASP "CSV Injection"): a
/// value beginning with `=`, `+`, `-`, `@`, a tab or a carriage return would be read as a
/// formula (or shift into one), so it gets a leading `'`, which spreadsheets show as text.
/// Every other value is returned as it is. The CSV writer quotes the cell when needed.
pub fn csv_cell(value: &str) -> Cow<'_, str> {
    match value.chars().next() {
        Some('=' | '+' | '-' | '@' | '\t' | '\r') => Cow::Owned(format!("'{value}")),
        _ => Cow::Borrowed(value),
    }
}

/// One exported match: the fields of [`COLUMNS`], in order.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportRow {
    /// Match id.
    pub match_id: i64,
    /// Work id.
    pub work_id: i64,
    /// Owner of the work.
    pub owner: String,
    /// The owner's id of the work.
    pub work_external_id: String,
    /// Work title.
    pub work_title: String,
    /// Position of the section in its work.
    pub section_ordinal: u32,
    /// Section heading.
    pub section_title: String,
    /// Page id.
    pub page_id: i64,
    /// Page URL.
    pub url: String,
    /// Host.
    pub site: String,
    /// `identical`, `near_duplicate`, `excerpt` or `embedded`.
    pub kind: String,
    /// Verdict score (0..=1).
    pub score: f64,
    /// A copy by the verdict.
    pub duplicate: bool,
    /// Characters of the section found on the page.
    pub copied_chars: u64,
    /// First seen, RFC 3339 UTC.
    pub first_seen: String,
    /// Last seen, RFC 3339 UTC.
    pub last_seen: String,
    /// Review status.
    pub status: String,
    /// Longest evidence passage, section side.
    pub evidence_section: String,
    /// The same passage, page side.
    pub evidence_page: String,
    /// What the removal re-check last saw of the page (`up`, `changed`, `removed`;
    /// empty when it was never checked).
    pub removal_state: String,
    /// When it was seen removed, RFC 3339 UTC (empty while it is not).
    pub removed_at: String,
}

/// A cell: text, or a number (a number cell in XLSX).
enum Cell<'a> {
    Text(Cow<'a, str>),
    Number(f64, String),
}

impl ExportRow {
    /// The exported form of a listed match, with the removal watch of its page.
    pub fn new(m: MatchRowWithEvidence, watch: Option<&RemovalWatch>) -> Result<Self> {
        let MatchRowWithEvidence { row: r, evidence_section, evidence_page } = m;
        Ok(ExportRow {
            match_id: r.id,
            work_id: r.work_id,
            owner: r.owner,
            work_external_id: r.work_external_id,
            work_title: r.work_title,
            section_ordinal: r.section_ordinal,
            section_title: r.section_title,
            page_id: r.page_id,
            url: r.url,
            site: r.site,
            kind: r.kind,
            score: r.score,
            duplicate: r.duplicate,
            copied_chars: r.copied_chars,
            first_seen: r.first_seen.rfc3339(),
            last_seen: r.last_seen.rfc3339(),
            status: r.status.as_str().to_owned(),
            evidence_section,
            evidence_page,
            removal_state: watch.map(|w| w.state.as_str().to_owned()).unwrap_or_default(),
            removed_at: watch.and_then(|w| w.removed_at).map(Timestamp::rfc3339).unwrap_or_default(),
        })
    }

    /// The cells, in the order of [`COLUMNS`].
    fn cells(&self) -> [Cell<'_>; 21] {
        fn text(s: &str) -> Cell<'_> {
            Cell::Text(Cow::Borrowed(s))
        }
        let id = |v: i64| Cell::Number(v as f64, v.to_string());
        [
            id(self.match_id),
            id(self.work_id),
            text(&self.owner),
            text(&self.work_external_id),
            text(&self.work_title),
            Cell::Number(self.section_ordinal.into(), self.section_ordinal.to_string()),
            text(&self.section_title),
            id(self.page_id),
            text(&self.url),
            text(&self.site),
            text(&self.kind),
            Cell::Number(self.score, format!("{:.4}", self.score)),
            Cell::Text(Cow::Owned(self.duplicate.to_string())),
            Cell::Number(self.copied_chars as f64, self.copied_chars.to_string()),
            text(&self.first_seen),
            text(&self.last_seen),
            text(&self.status),
            text(&self.evidence_section),
            text(&self.evidence_page),
            text(&self.removal_state),
            text(&self.removed_at),
        ]
    }
}

/// Writes rows in one format to `W`.
pub struct Exporter<W: Write + Send> {
    sink: Sink<W>,
    rows: u64,
}

enum Sink<W: Write + Send> {
    Csv(Box<csv::Writer<W>>),
    JsonLines(W),
    JsonArray(W),
    Xlsx(Box<rust_xlsxwriter::Workbook>, W),
}

fn xlsx_err(e: rust_xlsxwriter::XlsxError) -> MatcherError {
    MatcherError::Export(format!("xlsx: {e}"))
}

fn csv_err(e: csv::Error) -> MatcherError {
    MatcherError::Export(format!("csv: {e}"))
}

fn json_err(e: serde_json::Error) -> MatcherError {
    MatcherError::Export(format!("json: {e}"))
}

impl<W: Write + Send> Exporter<W> {
    /// Start an export to `out` (the CSV byte-order mark and header, the XLSX header row).
    pub fn new(format: ExportFormat, mut out: W) -> Result<Self> {
        let sink = match format {
            ExportFormat::Csv => {
                out.write_all("\u{feff}".as_bytes())?;
                let mut w = csv::Writer::from_writer(out);
                w.write_record(COLUMNS).map_err(csv_err)?;
                Sink::Csv(Box::new(w))
            }
            ExportFormat::JsonLines => Sink::JsonLines(out),
            ExportFormat::JsonArray => {
                out.write_all(b"[")?;
                Sink::JsonArray(out)
            }
            ExportFormat::Xlsx => {
                let mut book = rust_xlsxwriter::Workbook::new();
                let sheet = book.add_worksheet();
                sheet.set_name("matches").map_err(xlsx_err)?;
                let bold = rust_xlsxwriter::Format::new().set_bold();
                for (c, name) in COLUMNS.iter().enumerate() {
                    sheet.write_string_with_format(0, c as u16, *name, &bold).map_err(xlsx_err)?;
                }
                Sink::Xlsx(Box::new(book), out)
            }
        };
        Ok(Exporter { sink, rows: 0 })
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// Write one row.
    pub fn write(&mut self, row: &ExportRow) -> Result<()> {
        match &mut self.sink {
            Sink::Csv(w) => {
                let cells = row.cells();
                let cells = cells.iter().map(|c| match c {
                    Cell::Text(s) => csv_cell(s),
                    Cell::Number(_, s) => csv_cell(s),
                });
                w.write_record(cells.map(|c| c.into_owned())).map_err(csv_err)?;
            }
            Sink::JsonLines(w) => {
                serde_json::to_writer(&mut *w, row).map_err(json_err)?;
                w.write_all(b"\n")?;
            }
            Sink::JsonArray(w) => {
                w.write_all(if self.rows == 0 { b"\n" } else { b",\n" })?;
                serde_json::to_writer(&mut *w, row).map_err(json_err)?;
            }
            Sink::Xlsx(book, _) => {
                if self.rows >= XLSX_MAX_ROWS {
                    return Err(MatcherError::ExportTooLarge { format: "XLSX", limit: XLSX_MAX_ROWS });
                }
                let sheet = book.worksheet_from_index(0).map_err(xlsx_err)?;
                let r = u32::try_from(self.rows + 1).map_err(|_| MatcherError::Export("xlsx row number".into()))?;
                for (c, cell) in row.cells().iter().enumerate() {
                    // `write_string`: a string cell whatever it begins with (never a formula).
                    match cell {
                        Cell::Text(s) => sheet.write_string(r, c as u16, s.as_ref()).map_err(xlsx_err)?,
                        Cell::Number(v, _) => sheet.write_number(r, c as u16, *v).map_err(xlsx_err)?,
                    };
                }
            }
        }
        self.rows += 1;
        Ok(())
    }

    /// Pass what is written so far on to `W` (nothing for XLSX, written at the end).
    pub fn flush(&mut self) -> Result<()> {
        match &mut self.sink {
            Sink::Csv(w) => w.flush()?,
            Sink::JsonLines(w) | Sink::JsonArray(w) => w.flush()?,
            Sink::Xlsx(..) => {}
        }
        Ok(())
    }

    /// End the export (the JSON array's bracket, the XLSX workbook) and return `W`, flushed.
    pub fn finish(self) -> Result<W> {
        let mut out = match self.sink {
            Sink::Csv(w) => w.into_inner().map_err(|e| MatcherError::Io(e.into_error()))?,
            Sink::JsonLines(w) => w,
            Sink::JsonArray(mut w) => {
                w.write_all(b"\n]\n")?;
                w
            }
            Sink::Xlsx(mut book, mut w) => {
                book.save_to_writer(&mut w).map_err(xlsx_err)?;
                w
            }
        };
        out.flush()?;
        Ok(out)
    }
}

/// Where an [`ExportStream`] has its exporter write: the stream takes the bytes out after
/// each page.
#[derive(Clone, Default)]
struct ChunkBuf(Arc<Mutex<Vec<u8>>>);

impl ChunkBuf {
    fn take(&self) -> Vec<u8> {
        // A panic while holding the lock leaves bytes, not a broken invariant: take them.
        std::mem::take(&mut *self.0.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Write for ChunkBuf {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap_or_else(|e| e.into_inner()).extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// The export of a query as a sequence of byte chunks, one per [`PAGE`] of rows read
/// (the last one closes the format): what an HTTP response streams. Memory stays at one
/// page of rows and its bytes (XLSX: the whole workbook, built until the last chunk).
pub struct ExportStream {
    stores: Stores,
    query: MatchQuery,
    sort: MatchSort,
    after: Option<MatchCursor>,
    read_all: bool,
    rows: u64,
    buf: ChunkBuf,
    exporter: Option<Exporter<ChunkBuf>>,
}

impl ExportStream {
    /// The export of the matches passing `query`, in `sort` order.
    pub fn new(stores: Stores, query: MatchQuery, sort: MatchSort, format: ExportFormat) -> Result<Self> {
        let buf = ChunkBuf::default();
        let exporter = Some(Exporter::new(format, buf.clone())?);
        Ok(ExportStream { stores, query, sort, after: None, read_all: false, rows: 0, buf, exporter })
    }

    /// Rows written so far.
    pub fn rows(&self) -> u64 {
        self.rows
    }

    /// The next chunk of the output; `None` once all of it was handed out.
    pub async fn next_chunk(&mut self) -> Result<Option<Vec<u8>>> {
        let Some(exporter) = self.exporter.as_mut() else { return Ok(None) };
        if !self.read_all {
            let page =
                self.stores.queries.query_matches_with_evidence(&self.query, self.sort, self.after, PAGE).await?;
            self.read_all = page.len() < PAGE as usize;
            self.after = page.last().map(|m| MatchCursor { value: m.row.sort_value(self.sort.key), id: m.row.id });
            // The removal watches of the pages under notice or confirmed (others have none).
            let mut watches: HashMap<i64, RemovalWatch> = HashMap::new();
            for m in &page {
                let watched = matches!(m.row.status, ReviewStatus::Confirmed | ReviewStatus::TakedownSent);
                if watched && !watches.contains_key(&m.row.page_id) {
                    if let Some(w) = self.stores.cases.get_watch(m.row.page_id).await? {
                        watches.insert(m.row.page_id, w);
                    }
                }
            }
            for m in page {
                let watch = watches.get(&m.row.page_id);
                exporter.write(&ExportRow::new(m, watch)?)?;
                self.rows += 1;
            }
            if !self.read_all {
                exporter.flush()?;
                return Ok(Some(self.buf.take()));
            }
        }
        let Some(exporter) = self.exporter.take() else { return Ok(None) };
        exporter.finish()?;
        Ok(Some(self.buf.take()))
    }
}

/// Write the export of the matches passing `query`, in `sort` order, to `out`; returns
/// the number of rows.
pub async fn export_matches<W: Write + Send>(
    stores: &Stores,
    query: &MatchQuery,
    sort: MatchSort,
    format: ExportFormat,
    mut out: W,
) -> Result<u64> {
    let mut stream = ExportStream::new(stores.clone(), query.clone(), sort, format)?;
    while let Some(chunk) = stream.next_chunk().await? {
        out.write_all(&chunk)?;
    }
    out.flush()?;
    Ok(stream.rows())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cells_that_a_spreadsheet_would_run_as_formulas_are_neutralised() {
        for (raw, safe) in [
            ("=1+1", "'=1+1"),
            ("=HYPERLINK(\"http://x\",\"点击\")", "'=HYPERLINK(\"http://x\",\"点击\")"),
            ("+86 10", "'+86 10"),
            ("-2+3", "'-2+3"),
            ("@SUM(A1)", "'@SUM(A1)"),
            ("\t=1", "'\t=1"),
            ("\r=1", "'\r=1"),
        ] {
            assert_eq!(csv_cell(raw), safe, "{raw:?}");
        }
        for plain in ["", "红楼梦", "hlm-001", "0.9000", "http://pirate.example/=1", " =1", "'=1"] {
            assert_eq!(csv_cell(plain), plain, "{plain:?}");
        }
    }

    #[test]
    fn times_are_rfc3339_utc() {
        assert_eq!(Timestamp(1_763_683_200_000).rfc3339(), "2025-11-21T00:00:00.000Z");
        assert_eq!(Timestamp(1_763_683_200_123).rfc3339(), "2025-11-21T00:00:00.123Z");
    }

    #[test]
    fn formats_by_name() {
        assert_eq!("CSV".parse::<ExportFormat>().unwrap(), ExportFormat::Csv);
        assert_eq!("json".parse::<ExportFormat>().unwrap(), ExportFormat::JsonArray);
        assert_eq!("jsonl".parse::<ExportFormat>().unwrap(), ExportFormat::JsonLines);
        assert_eq!("xlsx".parse::<ExportFormat>().unwrap(), ExportFormat::Xlsx);
        assert!("pdf".parse::<ExportFormat>().is_err());
    }

    #[test]
    fn an_empty_json_array_is_still_an_array() {
        let out = Exporter::new(ExportFormat::JsonArray, Vec::new()).unwrap().finish().unwrap();
        assert_eq!(serde_json::from_slice::<serde_json::Value>(&out).unwrap(), serde_json::json!([]));
    }
}
