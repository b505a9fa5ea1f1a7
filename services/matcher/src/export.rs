//! The analysts' match list (`zhiwen report export`): CSV (UTF-8 with a BOM, so
//! spreadsheet programs read the Chinese correctly), XLSX, or JSON Lines.
//!
//! Matches are read page by page (cursor on the match id); works, sections and pages are
//! looked up once each and cached for the export.
//!
//! Rights holders choose work ids and titles, and pages choose their own text, so a cell
//! may begin like a spreadsheet formula (`=HYPERLINK(...)`): every CSV cell goes through
//! [`csv_cell`] (also used by the API's export), and XLSX cells are written as strings,
//! never as formulas.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Write;
use std::str::FromStr;

use serde::Serialize;
use zhiwen_store::{Match, MatchQuery, Stores, Timestamp};

use crate::{MatcherError, Result};

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// Comma-separated values, UTF-8 with BOM.
    Csv,
    /// Excel workbook, one sheet `matches`.
    Xlsx,
    /// JSON Lines: one object per match.
    Json,
}

impl FromStr for ExportFormat {
    type Err = MatcherError;
    fn from_str(s: &str) -> Result<Self> {
        match s.to_ascii_lowercase().as_str() {
            "csv" => Ok(ExportFormat::Csv),
            "xlsx" => Ok(ExportFormat::Xlsx),
            "json" | "jsonl" => Ok(ExportFormat::Json),
            other => Err(MatcherError::Config(format!("unknown export format {other:?} (csv, xlsx, json)"))),
        }
    }
}

/// The column names, in order.
pub const COLUMNS: [&str; 12] = [
    "work_external_id",
    "work_title",
    "section_title",
    "page_url",
    "site",
    "kind",
    "score",
    "first_seen",
    "last_seen",
    "review_status",
    "evidence_section",
    "evidence_page",
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

/// One exported line.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ExportRow {
    /// The owner's id of the work.
    pub work_external_id: String,
    /// Work title.
    pub work_title: String,
    /// Section heading.
    pub section_title: String,
    /// Page URL.
    pub page_url: String,
    /// Host.
    pub site: String,
    /// `identical`, `near_duplicate`, `excerpt` or `embedded`.
    pub kind: String,
    /// Verdict score (0..=1).
    pub score: f64,
    /// First seen, RFC 3339 UTC.
    pub first_seen: String,
    /// Last seen, RFC 3339 UTC.
    pub last_seen: String,
    /// Review status.
    pub review_status: String,
    /// Longest evidence passage, section side.
    pub evidence_section: String,
    /// The same passage, page side.
    pub evidence_page: String,
}

impl ExportRow {
    fn cells(&self) -> [String; 12] {
        [
            self.work_external_id.clone(),
            self.work_title.clone(),
            self.section_title.clone(),
            self.page_url.clone(),
            self.site.clone(),
            self.kind.clone(),
            format!("{:.4}", self.score),
            self.first_seen.clone(),
            self.last_seen.clone(),
            self.review_status.clone(),
            self.evidence_section.clone(),
            self.evidence_page.clone(),
        ]
    }
}

fn rfc3339(t: Timestamp) -> String {
    t.to_offset().format(&time::format_description::well_known::Rfc3339).unwrap_or_else(|_| t.0.to_string())
}

/// Resolves ids to names, once each.
struct Names<'a> {
    stores: &'a Stores,
    works: HashMap<i64, (String, String)>,
    sections: HashMap<i64, String>,
    pages: HashMap<i64, String>,
}

impl Names<'_> {
    async fn row(&mut self, m: &Match) -> Result<ExportRow> {
        if !self.works.contains_key(&m.work_id) {
            let w = self.stores.queries.work_summary(m.work_id).await?;
            let v = w.map(|w| (w.external_id, w.title)).unwrap_or_default();
            self.works.insert(m.work_id, v);
        }
        if !self.sections.contains_key(&m.section_id) {
            let s = self.stores.works.get_section(m.section_id).await?;
            self.sections.insert(m.section_id, s.map(|s| s.title).unwrap_or_default());
        }
        if !self.pages.contains_key(&m.page_id) {
            let p = self.stores.pages.get_page(m.page_id).await?;
            self.pages.insert(m.page_id, p.map(|p| p.url).unwrap_or_default());
        }
        let (work_external_id, work_title) = self.works.get(&m.work_id).cloned().unwrap_or_default();
        let top = m.comparison.evidence.iter().max_by_key(|e| e.chars);
        Ok(ExportRow {
            work_external_id,
            work_title,
            section_title: self.sections.get(&m.section_id).cloned().unwrap_or_default(),
            page_url: self.pages.get(&m.page_id).cloned().unwrap_or_default(),
            site: m.site.clone(),
            kind: m.kind.clone(),
            score: m.score,
            first_seen: rfc3339(m.first_seen),
            last_seen: rfc3339(m.last_seen),
            review_status: m.status.as_str().to_owned(),
            evidence_section: top.map(|e| e.a_text.clone()).unwrap_or_default(),
            evidence_page: top.map(|e| e.b_text.clone()).unwrap_or_default(),
        })
    }
}

/// Write every match passing `filter` to `out` in `format`; returns the number of rows.
/// The kind is the one the matcher recorded with the match.
pub async fn export_matches<W: Write + Send>(
    stores: &Stores,
    filter: &MatchQuery,
    format: ExportFormat,
    out: W,
) -> Result<u64> {
    let mut names = Names { stores, works: HashMap::new(), sections: HashMap::new(), pages: HashMap::new() };
    let mut sink = Sink::new(format, out)?;
    let (mut after, mut rows) = (0i64, 0u64);
    loop {
        let page = stores.matches.list_matches(filter, after, 500).await?;
        let Some(last) = page.last() else { break };
        after = last.id;
        for m in &page {
            let row = names.row(m).await?;
            rows += 1;
            sink.row(&row, rows)?;
        }
    }
    sink.finish()?;
    Ok(rows)
}

enum Sink<W: Write + Send> {
    Csv(Box<csv::Writer<W>>),
    Json(W),
    Xlsx(Box<rust_xlsxwriter::Workbook>, W),
}

fn xlsx_err(e: rust_xlsxwriter::XlsxError) -> MatcherError {
    MatcherError::Export(format!("xlsx: {e}"))
}

fn csv_err(e: csv::Error) -> MatcherError {
    MatcherError::Export(format!("csv: {e}"))
}

impl<W: Write + Send> Sink<W> {
    fn new(format: ExportFormat, mut out: W) -> Result<Self> {
        Ok(match format {
            ExportFormat::Csv => {
                out.write_all("\u{feff}".as_bytes())?;
                let mut w = csv::Writer::from_writer(out);
                w.write_record(COLUMNS).map_err(csv_err)?;
                Sink::Csv(Box::new(w))
            }
            ExportFormat::Json => Sink::Json(out),
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
        })
    }

    fn row(&mut self, row: &ExportRow, n: u64) -> Result<()> {
        match self {
            Sink::Csv(w) => w.write_record(row.cells().iter().map(|c| csv_cell(c).into_owned())).map_err(csv_err),
            Sink::Json(w) => {
                serde_json::to_writer(&mut *w, row).map_err(|e| MatcherError::Export(format!("json: {e}")))?;
                w.write_all(b"\n")?;
                Ok(())
            }
            Sink::Xlsx(book, _) => {
                let sheet = book.worksheet_from_index(0).map_err(xlsx_err)?;
                let r = u32::try_from(n).map_err(|_| MatcherError::Export("too many rows for xlsx".into()))?;
                for (c, v) in row.cells().iter().enumerate() {
                    // `write_string`: a string cell whatever it begins with (never a formula).
                    if c == 6 {
                        sheet.write_number(r, c as u16, row.score).map_err(xlsx_err)?;
                    } else {
                        sheet.write_string(r, c as u16, v).map_err(xlsx_err)?;
                    }
                }
                Ok(())
            }
        }
    }

    fn finish(self) -> Result<()> {
        match self {
            Sink::Csv(mut w) => w.flush().map_err(MatcherError::Io),
            Sink::Json(mut w) => w.flush().map_err(MatcherError::Io),
            Sink::Xlsx(mut book, mut out) => {
                book.save_to_writer(&mut out).map_err(xlsx_err)?;
                out.flush().map_err(MatcherError::Io)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::csv_cell;

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
}
