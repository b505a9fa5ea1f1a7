//! PDF of the printable evidence report, printed by a headless Chromium from the same
//! self-contained HTML the API serves, so the PDF is exactly what a browser prints (CJK
//! text as text, the same layout). Chromium is an optional runtime dependency: without
//! one configured or found on `PATH` ([`zhiwen_ingest::find_chromium`], which also
//! finds the browser of the page captures), `?format=pdf` answers 501 with a clear message.
//!
//! Why a browser and not a PDF crate: the report mixes CJK and Latin text, tables and
//! highlighted passages; the Rust PDF writers need hand-made layout and font subsetting
//! for that, while Chromium's print path is the one every legal team's browser uses.

use std::path::Path;
use std::sync::OnceLock;
use std::time::Duration;

use tokio::process::Command;
use tokio::sync::Semaphore;

use crate::error::{ApiError, ErrorCode};

/// Longest a report may take to print (a report holds at most 200 matches).
const PRINT_TIMEOUT: Duration = Duration::from_secs(60);
/// Reports printed at once: each Chromium takes a core and ~150 MB.
const CONCURRENT_PRINTS: usize = 2;

fn print_slots() -> &'static Semaphore {
    static SLOTS: OnceLock<Semaphore> = OnceLock::new();
    SLOTS.get_or_init(|| Semaphore::new(CONCURRENT_PRINTS))
}

/// Print `html` to PDF with `chromium`. The page is loaded from a private temporary
/// directory with networking pointed at a dead proxy: the report fetches nothing, and a
/// link in a quoted URL must not make the server reach out.
pub async fn print(chromium: &Path, html: &str) -> Result<Vec<u8>, ApiError> {
    let _slot = print_slots()
        .acquire()
        .await
        .map_err(|_| ApiError::new(ErrorCode::Unavailable, "the PDF printer is shutting down"))?;
    let dir = tempfile::tempdir().map_err(|e| internal("temporary directory", e))?;
    let page = dir.path().join("report.html");
    let out = dir.path().join("report.pdf");
    tokio::fs::write(&page, html).await.map_err(|e| internal("writing the report", e))?;
    let mut command = Command::new(chromium);
    command
        .arg("--headless")
        .arg("--disable-gpu")
        .arg("--no-first-run")
        .arg("--disable-extensions")
        .arg("--disable-background-networking")
        .arg("--disable-sync")
        .arg("--proxy-server=127.0.0.1:9")
        .arg("--no-pdf-header-footer")
        // Chromium's sandbox needs root-less user namespaces, which containers and root
        // lack. The page is our own HTML (every quoted text escaped, nothing fetched, no
        // scripts) in a throwaway profile, so the browser never handles foreign content.
        .arg("--no-sandbox")
        .arg(format!("--user-data-dir={}", dir.path().join("profile").display()))
        .arg(format!("--print-to-pdf={}", out.display()))
        .arg(format!("file://{}", page.display()))
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true);
    let child = command.spawn().map_err(|e| {
        tracing::warn!(chromium = %chromium.display(), error = %e, "cannot start Chromium");
        ApiError::new(ErrorCode::Unavailable, "the PDF printer (Chromium) cannot be started; see the server log")
    })?;
    let output = match tokio::time::timeout(PRINT_TIMEOUT, child.wait_with_output()).await {
        Ok(result) => result.map_err(|e| internal("waiting for Chromium", e))?,
        Err(_) => {
            return Err(ApiError::new(
                ErrorCode::Unavailable,
                "printing the report took too long; try a smaller report",
            ))
        }
    };
    match tokio::fs::read(&out).await {
        Ok(pdf) if output.status.success() && pdf.starts_with(b"%PDF-") => Ok(pdf),
        _ => {
            let stderr = String::from_utf8_lossy(&output.stderr);
            tracing::warn!(status = %output.status, stderr = %stderr.trim(), "Chromium did not print the report");
            Err(ApiError::new(ErrorCode::Unavailable, "the PDF printer (Chromium) failed; see the server log"))
        }
    }
}

fn internal(what: &str, e: std::io::Error) -> ApiError {
    ApiError::internal(format_args!("PDF report, {what}: {e}"))
}
