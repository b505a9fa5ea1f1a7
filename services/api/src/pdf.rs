//! PDF of the printable evidence report, printed by a headless Chromium from the same
//! self-contained HTML the API serves ([`zhiwen_ingest::print_html`], the one printer of
//! reports and notices), so the PDF is exactly what a browser prints. Chromium is an
//! optional runtime dependency: without one configured or found on `PATH`
//! ([`zhiwen_ingest::find_chromium`]), `?format=pdf` answers 501 with a clear message.
//!
//! Why a browser and not a PDF crate: the report mixes CJK and Latin text, tables and
//! highlighted passages; the Rust PDF writers need hand-made layout and font subsetting
//! for that, while Chromium's print path is the one every legal team's browser uses.

use std::path::Path;

use zhiwen_ingest::RenderError;

use crate::error::{ApiError, ErrorCode};

/// Print `html` to PDF with `chromium`.
pub async fn print(chromium: &Path, html: &str) -> Result<Vec<u8>, ApiError> {
    zhiwen_ingest::print_html(chromium, html).await.map_err(|e| {
        tracing::warn!(chromium = %chromium.display(), error = %e, "Chromium did not print");
        match e {
            RenderError::Timeout { .. } => {
                ApiError::new(ErrorCode::Unavailable, "printing the report took too long; try a smaller report")
            }
            RenderError::Launch { .. } => ApiError::new(
                ErrorCode::Unavailable,
                "the PDF printer (Chromium) cannot be started; see the server log",
            ),
            _ => ApiError::new(ErrorCode::Unavailable, "the PDF printer (Chromium) failed; see the server log"),
        }
    })
}
