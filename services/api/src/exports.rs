//! `GET /api/v1/exports/matches`: the filtered match list as CSV (UTF-8 with BOM),
//! JSON or XLSX. CSV and JSON stream page by page (500 rows at a time through a bounded
//! channel: memory stays flat whatever the size); XLSX is a zip that the writer closes
//! at the end, so it is built in memory and capped at the sheet's row limit. CSV cells
//! that a spreadsheet would run as formulas are neutralised by the matcher's
//! [`csv_cell`], the one rule of both exports; XLSX cells are written as strings.

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use futures::StreamExt;
use serde::Serialize;
use zhiwen_matcher::export::csv_cell;
use zhiwen_store::{MatchCursor, MatchQuery, MatchRow, MatchSort, Stores, Timestamp};

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::query::MatchParams;
use crate::AppState;

const COLUMNS: [&str; 17] = [
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
];

/// Largest XLSX export (the sheet's limit, minus the header).
const XLSX_MAX_ROWS: u64 = 1_048_575;

#[derive(Serialize)]
struct Row<'a> {
    match_id: i64,
    work_id: i64,
    owner: &'a str,
    work_external_id: &'a str,
    work_title: &'a str,
    section_ordinal: u32,
    section_title: &'a str,
    page_id: i64,
    url: &'a str,
    site: &'a str,
    kind: &'a str,
    score: f64,
    duplicate: bool,
    copied_chars: u64,
    first_seen: String,
    last_seen: String,
    status: &'a str,
}

fn rfc3339(t: Timestamp) -> String {
    t.to_offset().format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

fn row(m: &MatchRow) -> Row<'_> {
    Row {
        match_id: m.id,
        work_id: m.work_id,
        owner: &m.owner,
        work_external_id: &m.work_external_id,
        work_title: &m.work_title,
        section_ordinal: m.section_ordinal,
        section_title: &m.section_title,
        page_id: m.page_id,
        url: &m.url,
        site: &m.site,
        kind: &m.kind,
        score: m.score,
        duplicate: m.duplicate,
        copied_chars: m.copied_chars,
        first_seen: rfc3339(m.first_seen),
        last_seen: rfc3339(m.last_seen),
        status: m.status.as_str(),
    }
}

fn cells(r: &Row) -> Vec<String> {
    vec![
        r.match_id.to_string(),
        r.work_id.to_string(),
        r.owner.into(),
        r.work_external_id.into(),
        r.work_title.into(),
        r.section_ordinal.to_string(),
        r.section_title.into(),
        r.page_id.to_string(),
        r.url.into(),
        r.site.into(),
        r.kind.into(),
        format!("{:.4}", r.score),
        r.duplicate.to_string(),
        r.copied_chars.to_string(),
        r.first_seen.clone(),
        r.last_seen.clone(),
        r.status.into(),
    ]
}

/// Pages of rows in the listing order, 500 at a time.
async fn next_page(
    stores: &Stores,
    q: &MatchQuery,
    sort: MatchSort,
    after: Option<MatchCursor>,
) -> ApiResult<Vec<MatchRow>> {
    Ok(stores.queries.query_matches(q, sort, after, 500).await?)
}

fn csv_bytes(rows: &[MatchRow], header: bool) -> ApiResult<Vec<u8>> {
    let mut w = csv::Writer::from_writer(Vec::new());
    if header {
        w.write_record(COLUMNS).map_err(ApiError::internal)?;
    }
    for m in rows {
        // Holders choose work ids and titles: no cell may run as a spreadsheet formula.
        let cells = cells(&row(m));
        w.write_record(cells.iter().map(|c| csv_cell(c).into_owned())).map_err(ApiError::internal)?;
    }
    w.into_inner().map_err(ApiError::internal)
}

pub(crate) async fn export_matches(
    state: web::Data<AppState>,
    caller: Caller,
    params: web::Query<MatchParams>,
) -> ApiResult<HttpResponse> {
    let format = params.format.as_deref().unwrap_or("csv").to_ascii_lowercase();
    let q = params.to_query(&caller)?;
    let sort = params.sort()?;
    let stamp = Timestamp::now().day();
    let (mime, ext) = match format.as_str() {
        "csv" => ("text/csv; charset=utf-8", "csv"),
        "json" => ("application/json", "json"),
        "xlsx" => ("application/vnd.openxmlformats-officedocument.spreadsheetml.sheet", "xlsx"),
        other => {
            return Err(ApiError::new(
                ErrorCode::BadRequest,
                format!("format: expected csv, xlsx or json, got {other:?}"),
            ))
        }
    };
    let disposition = format!("attachment; filename=\"zhiwen-matches-{stamp}.{ext}\"");
    if format == "xlsx" {
        let body = xlsx(&state.stores, &q, sort).await?;
        return Ok(HttpResponse::Ok()
            .content_type(mime)
            .insert_header((header::CONTENT_DISPOSITION, disposition))
            .body(body));
    }
    // Check the query once before streaming, so a bad filter is a 400, not a cut stream.
    let first = next_page(&state.stores, &q, sort, None).await?;
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<web::Bytes, ApiError>>(4);
    let stores = state.stores.clone();
    let json = format == "json";
    tokio::spawn(async move {
        let mut page = first;
        let mut first_page = true;
        loop {
            let chunk = if json {
                let mut s = String::new();
                for (i, m) in page.iter().enumerate() {
                    s.push(if first_page && i == 0 { '[' } else { ',' });
                    s.push('\n');
                    s.push_str(&serde_json::to_string(&row(m)).unwrap_or_default());
                }
                if first_page && page.is_empty() {
                    s.push('[');
                }
                Ok(s.into_bytes())
            } else {
                csv_bytes(&page, first_page)
                    .map(|b| if first_page { [b"\xEF\xBB\xBF".as_slice(), &b].concat() } else { b })
            };
            let done = page.len() < 500;
            let last = page.last().map(|m| MatchCursor { value: m.sort_value(sort.key), id: m.id });
            if tx.send(chunk.map(web::Bytes::from)).await.is_err() {
                return; // the client went away
            }
            first_page = false;
            if done {
                break;
            }
            match next_page(&stores, &q, sort, last).await {
                Ok(p) => page = p,
                Err(e) => {
                    let _ = tx.send(Err(e)).await;
                    return;
                }
            }
        }
        if json {
            let _ = tx.send(Ok(web::Bytes::from_static(b"\n]\n"))).await;
        }
    });
    let stream = futures::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|item| (item, rx)) })
        .map(|r| r.map_err(actix_web::Error::from));
    Ok(HttpResponse::Ok()
        .content_type(mime)
        .insert_header((header::CONTENT_DISPOSITION, disposition))
        .streaming(stream))
}

async fn xlsx(stores: &Stores, q: &MatchQuery, sort: MatchSort) -> ApiResult<Vec<u8>> {
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet();
    sheet.set_name("matches").map_err(ApiError::internal)?;
    let bold = rust_xlsxwriter::Format::new().set_bold();
    for (c, name) in COLUMNS.iter().enumerate() {
        sheet.write_string_with_format(0, c as u16, *name, &bold).map_err(ApiError::internal)?;
    }
    let mut r = 0u32;
    let mut after = None;
    loop {
        let page = next_page(stores, q, sort, after).await?;
        for m in &page {
            r += 1;
            if r as u64 > XLSX_MAX_ROWS {
                return Err(ApiError::new(
                    ErrorCode::BadRequest,
                    "too many rows for XLSX (over 1,048,575): narrow the filter or use CSV",
                ));
            }
            let x = row(m);
            for (c, v) in cells(&x).iter().enumerate() {
                match c {
                    0 | 1 | 5 | 7 | 13 => {
                        sheet.write_number(r, c as u16, v.parse::<f64>().unwrap_or(0.0)).map_err(ApiError::internal)?
                    }
                    11 => sheet.write_number(r, c as u16, x.score).map_err(ApiError::internal)?,
                    // A string cell whatever it begins with (never a formula).
                    _ => sheet.write_string(r, c as u16, v).map_err(ApiError::internal)?,
                };
            }
        }
        if page.len() < 500 {
            break;
        }
        after = page.last().map(|m| MatchCursor { value: m.sort_value(sort.key), id: m.id });
    }
    book.save_to_buffer().map_err(ApiError::internal)
}
