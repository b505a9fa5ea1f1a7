//! Every error leaves the API as `{"error": {"code", "message"}}` with its status; a
//! store or matcher fault is logged in full and answered with a generic message (no
//! internals, no stack traces).

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, ResponseError};
use serde_json::json;
use zhiwen_matcher::MatcherError;
use zhiwen_store::StoreError;

/// An API error: status, stable code, message for the client.
#[derive(Debug, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    /// HTTP status.
    pub status: StatusCode,
    /// Stable machine-readable code (`not_found`, `bad_request`, ...).
    pub code: &'static str,
    /// Human-readable message.
    pub message: String,
    /// Seconds to wait (429).
    pub retry_after: Option<u64>,
}

impl ApiError {
    fn new(status: StatusCode, code: &'static str, message: impl Into<String>) -> Self {
        ApiError { status, code, message: message.into(), retry_after: None }
    }
    /// 400.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(StatusCode::BAD_REQUEST, "bad_request", message)
    }
    /// 401.
    pub fn unauthorized(message: impl Into<String>) -> Self {
        Self::new(StatusCode::UNAUTHORIZED, "unauthorized", message)
    }
    /// 403.
    pub fn forbidden(message: impl Into<String>) -> Self {
        Self::new(StatusCode::FORBIDDEN, "forbidden", message)
    }
    /// 404.
    pub fn not_found(what: &str, id: impl std::fmt::Display) -> Self {
        Self::new(StatusCode::NOT_FOUND, "not_found", format!("{what} {id} not found"))
    }
    /// 409.
    pub fn conflict(message: impl Into<String>) -> Self {
        Self::new(StatusCode::CONFLICT, "conflict", message)
    }
    /// 413.
    pub fn too_large(message: impl Into<String>) -> Self {
        Self::new(StatusCode::PAYLOAD_TOO_LARGE, "payload_too_large", message)
    }
    /// 429.
    pub fn rate_limited(retry_after: u64) -> Self {
        let mut e = Self::new(StatusCode::TOO_MANY_REQUESTS, "rate_limited", "too many requests for this key");
        e.retry_after = Some(retry_after.max(1));
        e
    }
    /// 503.
    pub fn unavailable(message: impl Into<String>) -> Self {
        Self::new(StatusCode::SERVICE_UNAVAILABLE, "unavailable", message)
    }
    /// 501: a feature this server was not set up for.
    pub fn not_implemented(message: impl Into<String>) -> Self {
        Self::new(StatusCode::NOT_IMPLEMENTED, "not_implemented", message)
    }
    /// 500, logged with its cause.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Self::new(StatusCode::INTERNAL_SERVER_ERROR, "internal", "internal error (see the server log)")
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.status
    }

    fn error_response(&self) -> HttpResponse {
        let mut r = HttpResponse::build(self.status);
        if let Some(s) = self.retry_after {
            r.insert_header(("Retry-After", s.to_string()));
        }
        r.json(json!({"error": {"code": self.code, "message": self.message}}))
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match &e {
            StoreError::InvalidInput { .. } => ApiError::bad_request(e.to_string()),
            StoreError::Duplicate { .. } | StoreError::Conflict { .. } => ApiError::conflict(e.to_string()),
            StoreError::NotFound { .. } => ApiError::new(StatusCode::NOT_FOUND, "not_found", e.to_string()),
            _ if e.is_retryable() => {
                tracing::warn!(error = %e, "store unavailable");
                ApiError::unavailable("the store is not reachable, try again")
            }
            _ => ApiError::internal(e),
        }
    }
}

impl From<MatcherError> for ApiError {
    fn from(e: MatcherError) -> Self {
        if e.is_user_error() {
            ApiError::bad_request(e.to_string())
        } else if e.is_retryable() {
            ApiError::unavailable("a backend is not reachable, try again")
        } else {
            ApiError::internal(e)
        }
    }
}

impl From<zhiwen_ingest::IngestError> for ApiError {
    fn from(e: zhiwen_ingest::IngestError) -> Self {
        if e.is_user_error() {
            ApiError::bad_request(e.to_string())
        } else {
            ApiError::internal(e)
        }
    }
}

impl From<zhiwen_index::IndexError> for ApiError {
    fn from(e: zhiwen_index::IndexError) -> Self {
        ApiError::internal(e)
    }
}

pub(crate) fn json_error(err: actix_web::error::JsonPayloadError, _: &HttpRequest) -> actix_web::Error {
    use actix_web::error::JsonPayloadError as J;
    match err {
        J::Overflow { limit } | J::OverflowKnownLength { limit, .. } => {
            ApiError::too_large(format!("the JSON body is larger than {limit} bytes")).into()
        }
        J::ContentType => ApiError::bad_request("expected Content-Type: application/json").into(),
        other => ApiError::bad_request(format!("invalid JSON body: {other}")).into(),
    }
}

pub(crate) fn query_error(err: actix_web::error::QueryPayloadError, _: &HttpRequest) -> actix_web::Error {
    ApiError::bad_request(format!("invalid query: {err}")).into()
}

pub(crate) fn path_error(err: actix_web::error::PathError, _: &HttpRequest) -> actix_web::Error {
    ApiError::bad_request(format!("invalid path: {err}")).into()
}

/// `Result` of handlers.
pub type ApiResult<T> = Result<T, ApiError>;
