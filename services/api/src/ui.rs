//! The dashboard's static files: from `--ui-dir` when given, else the copy of
//! `admin-ui/dist` embedded at build time (absent when it was not built). Any GET outside
//! `/api`, `/health`, `/ready`, `/metrics` without a file falls back to `index.html`
//! (deep links of the single-page app survive a reload).

use std::borrow::Cow;
use std::path::{Component, Path, PathBuf};

use actix_web::http::header;
use actix_web::{web, HttpRequest, HttpResponse};
use rust_embed::RustEmbed;

use crate::error::ApiError;
use crate::AppState;

#[derive(RustEmbed)]
#[folder = "../../admin-ui/dist/"]
#[allow_missing = true]
struct Dist;

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.default_service(web::to(serve));
}

fn safe_relative(path: &str) -> Option<PathBuf> {
    let p = Path::new(path.trim_start_matches('/'));
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::Normal(s) => out.push(s),
            Component::CurDir => {}
            _ => return None,
        }
    }
    Some(out)
}

fn file(state: &AppState, rel: &Path) -> Option<(Cow<'static, [u8]>, String)> {
    let name = rel.to_string_lossy().replace('\\', "/");
    if name.is_empty() {
        return None;
    }
    let mime = mime_guess::from_path(rel).first_or_octet_stream().to_string();
    match &state.config.ui_dir {
        Some(dir) => {
            let p = dir.join(rel);
            if p.is_file() {
                std::fs::read(&p).ok().map(|b| (Cow::Owned(b), mime))
            } else {
                None
            }
        }
        None => Dist::get(&name).map(|f| (f.data, mime)),
    }
}

async fn serve(state: web::Data<AppState>, req: HttpRequest) -> Result<HttpResponse, ApiError> {
    let path = req.path();
    let reserved =
        ["/api", "/health", "/ready", "/metrics"].iter().any(|p| path == *p || path.starts_with(&format!("{p}/")));
    if reserved || !(req.method() == actix_web::http::Method::GET || req.method() == actix_web::http::Method::HEAD) {
        return Err(ApiError::not_found("path", path));
    }
    let rel = safe_relative(path).ok_or_else(|| ApiError::not_found("path", path))?;
    if let Some((bytes, mime)) = file(&state, &rel) {
        let cache = if rel.starts_with("assets") { "public, max-age=31536000, immutable" } else { "no-cache" };
        return Ok(HttpResponse::Ok()
            .content_type(mime)
            .insert_header((header::CACHE_CONTROL, cache))
            .body(bytes.into_owned()));
    }
    match file(&state, Path::new("index.html")) {
        Some((bytes, _)) => Ok(HttpResponse::Ok()
            .content_type("text/html; charset=utf-8")
            .insert_header((header::CACHE_CONTROL, "no-cache"))
            .body(bytes.into_owned())),
        None => Err(ApiError::not_found("dashboard", "(admin-ui/dist was not built into this binary; use --ui-dir)")),
    }
}
