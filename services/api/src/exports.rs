//! `GET /api/v1/exports/matches`: the filtered match list as a download, written by the
//! matcher's one exporter ([`zhiwen_matcher::export`]: its columns, formats, CSV-injection
//! guard and time format are the command line's too). This handler only checks the
//! request, limits a rights holder to their own works (the owner of the query, from the
//! caller's key, whatever the request asks) and streams the exporter's chunks: CSV and
//! JSON page by page as the client reads (memory stays flat whatever the size), XLSX
//! once the workbook is complete (it is a zip closed at the end; refused over the sheet's
//! row limit with a `400`).

use actix_web::http::header;
use actix_web::{web, HttpResponse};
use zhiwen_matcher::export::{ExportFormat, ExportStream};
use zhiwen_store::Timestamp;

use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::query::MatchParams;
use crate::AppState;

pub(crate) async fn export_matches(
    state: web::Data<AppState>,
    caller: Caller,
    params: web::Query<MatchParams>,
) -> ApiResult<HttpResponse> {
    let name = params.format.as_deref().unwrap_or("csv");
    let format: ExportFormat = name.parse().map_err(|_| {
        ApiError::new(ErrorCode::BadRequest, format!("format: expected csv, xlsx, json or jsonl, got {name:?}"))
    })?;
    // The holder's owner scope is set here, from the key: never from the request.
    let query = params.to_query(&caller)?;
    let sort = params.sort()?;
    let disposition =
        format!("attachment; filename=\"zhiwen-matches-{}.{}\"", Timestamp::now().day(), format.extension());
    let mut export = ExportStream::new(state.stores.clone(), query, sort, format)?;
    let mut response = HttpResponse::Ok();
    response.content_type(format.content_type()).insert_header((header::CONTENT_DISPOSITION, disposition));
    if format == ExportFormat::Xlsx {
        let mut body = Vec::new();
        while let Some(chunk) = export.next_chunk().await? {
            body.extend_from_slice(&chunk);
        }
        return Ok(response.body(body));
    }
    // The first page before answering, so that a failing read is an error status, not a
    // cut stream.
    let first = export.next_chunk().await?;
    let chunks = futures::stream::unfold((first, Some(export)), |(pending, export)| async move {
        if let Some(chunk) = pending {
            return Some((Ok(web::Bytes::from(chunk)), (None, export)));
        }
        let mut export = export?;
        match export.next_chunk().await {
            Ok(Some(chunk)) => Some((Ok(web::Bytes::from(chunk)), (None, Some(export)))),
            Ok(None) => None,
            Err(e) => Some((Err(actix_web::Error::from(ApiError::from(e))), (None, None))),
        }
    });
    Ok(response.streaming(chunks))
}
