//! Every error leaves the API as `{"error": {"code", "message"}}` with its status; a
//! store or matcher fault is logged in full and answered with a generic message (no
//! internals, no stack traces).

use actix_web::http::StatusCode;
use actix_web::{HttpRequest, HttpResponse, ResponseError};
use serde_json::json;
use zhiwen_matcher::MatcherError;
use zhiwen_store::StoreError;

/// The one table of error codes: each variant is one row of `docs/api.md`'s error
/// table, with its HTTP status and its stable code string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ErrorCode {
    /// 400: invalid query or body.
    BadRequest,
    /// 401: no, bad, revoked or expired key.
    Unauthorized,
    /// 403: the role may not do this.
    Forbidden,
    /// 404: no such id (or not the caller's), unknown path.
    NotFound,
    /// 409: the state does not allow it.
    Conflict,
    /// 413: body over the limit.
    PayloadTooLarge,
    /// 429: per-key rate limit.
    RateLimited,
    /// 500: a bug or a store failure.
    Internal,
    /// 501: a feature this server was not set up for.
    NotImplemented,
    /// 503: store or index not reachable, timeout.
    Unavailable,
}

impl ErrorCode {
    /// Every code, in the order of the docs' table.
    pub const ALL: [ErrorCode; 10] = [
        ErrorCode::BadRequest,
        ErrorCode::Unauthorized,
        ErrorCode::Forbidden,
        ErrorCode::NotFound,
        ErrorCode::Conflict,
        ErrorCode::PayloadTooLarge,
        ErrorCode::RateLimited,
        ErrorCode::Internal,
        ErrorCode::NotImplemented,
        ErrorCode::Unavailable,
    ];

    /// HTTP status of this code.
    pub fn status(self) -> StatusCode {
        match self {
            ErrorCode::BadRequest => StatusCode::BAD_REQUEST,
            ErrorCode::Unauthorized => StatusCode::UNAUTHORIZED,
            ErrorCode::Forbidden => StatusCode::FORBIDDEN,
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::Conflict => StatusCode::CONFLICT,
            ErrorCode::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::Internal => StatusCode::INTERNAL_SERVER_ERROR,
            ErrorCode::NotImplemented => StatusCode::NOT_IMPLEMENTED,
            ErrorCode::Unavailable => StatusCode::SERVICE_UNAVAILABLE,
        }
    }

    /// Stable machine-readable code string.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => "bad_request",
            ErrorCode::Unauthorized => "unauthorized",
            ErrorCode::Forbidden => "forbidden",
            ErrorCode::NotFound => "not_found",
            ErrorCode::Conflict => "conflict",
            ErrorCode::PayloadTooLarge => "payload_too_large",
            ErrorCode::RateLimited => "rate_limited",
            ErrorCode::Internal => "internal",
            ErrorCode::NotImplemented => "not_implemented",
            ErrorCode::Unavailable => "unavailable",
        }
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An API error: code (which fixes the status), message for the client.
#[derive(Debug, thiserror::Error)]
#[error("{code}: {message}")]
pub struct ApiError {
    /// Stable code; its status is `code.status()`.
    pub code: ErrorCode,
    /// Human-readable message.
    pub message: String,
    /// Seconds to wait (429).
    pub retry_after: Option<u64>,
}

impl ApiError {
    /// An error with this code and message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ApiError { code, message: message.into(), retry_after: None }
    }
    /// 404 with the usual message.
    pub fn not_found(what: &str, id: impl std::fmt::Display) -> Self {
        Self::new(ErrorCode::NotFound, format!("{what} {id} not found"))
    }
    /// 429 with its `Retry-After`.
    pub fn rate_limited(retry_after: u64) -> Self {
        let mut e = Self::new(ErrorCode::RateLimited, "too many requests for this key");
        e.retry_after = Some(retry_after.max(1));
        e
    }
    /// 500, logged with its cause.
    pub fn internal(cause: impl std::fmt::Display) -> Self {
        tracing::error!(error = %cause, "internal error");
        Self::new(ErrorCode::Internal, "internal error (see the server log)")
    }
}

impl ResponseError for ApiError {
    fn status_code(&self) -> StatusCode {
        self.code.status()
    }

    fn error_response(&self) -> HttpResponse {
        let mut r = HttpResponse::build(self.code.status());
        if let Some(s) = self.retry_after {
            r.insert_header(("Retry-After", s.to_string()));
        }
        r.json(json!({"error": {"code": self.code.as_str(), "message": self.message}}))
    }
}

impl From<StoreError> for ApiError {
    fn from(e: StoreError) -> Self {
        match &e {
            StoreError::InvalidInput { .. } => ApiError::new(ErrorCode::BadRequest, e.to_string()),
            StoreError::Duplicate { .. } | StoreError::Conflict { .. } => {
                ApiError::new(ErrorCode::Conflict, e.to_string())
            }
            StoreError::NotFound { .. } => ApiError::new(ErrorCode::NotFound, e.to_string()),
            _ if e.is_retryable() => {
                tracing::warn!(error = %e, "store unavailable");
                ApiError::new(ErrorCode::Unavailable, "the store is not reachable, try again")
            }
            _ => ApiError::internal(e),
        }
    }
}

impl From<MatcherError> for ApiError {
    fn from(e: MatcherError) -> Self {
        if e.is_user_error() {
            ApiError::new(ErrorCode::BadRequest, e.to_string())
        } else if e.is_retryable() {
            ApiError::new(ErrorCode::Unavailable, "a backend is not reachable, try again")
        } else {
            ApiError::internal(e)
        }
    }
}

impl From<zhiwen_capture::CaptureError> for ApiError {
    fn from(e: zhiwen_capture::CaptureError) -> Self {
        use zhiwen_capture::CaptureError as C;
        match e {
            C::Store(e) => e.into(),
            C::NotFound(what) => ApiError::new(ErrorCode::NotFound, format!("{what} not found")),
            C::FileGone { .. } => ApiError::new(ErrorCode::Conflict, e.to_string()),
            C::Ingest(e) => e.into(),
            other => ApiError::internal(other),
        }
    }
}

impl From<zhiwen_ingest::IngestError> for ApiError {
    fn from(e: zhiwen_ingest::IngestError) -> Self {
        if e.is_user_error() {
            ApiError::new(ErrorCode::BadRequest, e.to_string())
        } else {
            ApiError::internal(e)
        }
    }
}

impl From<zhiwen_index::IndexError> for ApiError {
    fn from(e: zhiwen_index::IndexError) -> Self {
        if e.is_retryable() {
            tracing::warn!(error = %e, "index unavailable");
            ApiError::new(ErrorCode::Unavailable, "the index is not reachable, try again")
        } else {
            ApiError::internal(e)
        }
    }
}

pub(crate) fn json_error(err: actix_web::error::JsonPayloadError, _: &HttpRequest) -> actix_web::Error {
    use actix_web::error::JsonPayloadError as J;
    match err {
        J::Overflow { limit } | J::OverflowKnownLength { limit, .. } => {
            ApiError::new(ErrorCode::PayloadTooLarge, format!("the JSON body is larger than {limit} bytes")).into()
        }
        J::ContentType => ApiError::new(ErrorCode::BadRequest, "expected Content-Type: application/json").into(),
        other => ApiError::new(ErrorCode::BadRequest, format!("invalid JSON body: {other}")).into(),
    }
}

pub(crate) fn query_error(err: actix_web::error::QueryPayloadError, _: &HttpRequest) -> actix_web::Error {
    ApiError::new(ErrorCode::BadRequest, format!("invalid query: {err}")).into()
}

pub(crate) fn path_error(err: actix_web::error::PathError, _: &HttpRequest) -> actix_web::Error {
    ApiError::new(ErrorCode::BadRequest, format!("invalid path: {err}")).into()
}

/// `Result` of handlers.
pub type ApiResult<T> = Result<T, ApiError>;

impl From<zhiwen_takedown::NoticeError> for ApiError {
    fn from(e: zhiwen_takedown::NoticeError) -> Self {
        use zhiwen_takedown::{MailError as M, NoticeError as N};
        match e {
            N::Store(e) => e.into(),
            N::Capture(e) => e.into(),
            N::Incomplete(_) | N::NothingToNotice(_) | N::Invalid(_) | N::Template(_) => {
                ApiError::new(ErrorCode::BadRequest, e.to_string())
            }
            N::NotFound(_) => ApiError::new(ErrorCode::NotFound, e.to_string()),
            N::Conflict(_) => ApiError::new(ErrorCode::Conflict, e.to_string()),
            N::Mail(M::Address { .. } | M::NoRecipient | M::Invalid(_) | M::TooLarge { .. }) => {
                ApiError::new(ErrorCode::BadRequest, e.to_string())
            }
            N::Mail(M::Smtp { .. } | M::Timeout { .. }) | N::Unknown(_) => {
                tracing::warn!(error = %e, "notice not sent");
                ApiError::new(ErrorCode::Unavailable, e.to_string())
            }
            other => ApiError::internal(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ErrorCode;

    /// The error table of `docs/api.md` lists exactly the codes of [`ErrorCode`], with
    /// their statuses, in order.
    #[test]
    fn docs_error_table_matches_the_enum() {
        let docs = include_str!("../../../docs/api.md");
        let rows: Vec<(u16, String)> = docs
            .lines()
            .map(str::trim)
            .filter_map(|l| {
                let cells: Vec<&str> = l.trim_matches('|').split('|').map(str::trim).collect();
                let status = cells.first()?.parse::<u16>().ok()?;
                let code = cells.get(1)?.strip_prefix('`')?.strip_suffix('`')?;
                Some((status, code.to_owned()))
            })
            .collect();
        let want: Vec<(u16, String)> =
            ErrorCode::ALL.iter().map(|c| (c.status().as_u16(), c.as_str().to_owned())).collect();
        assert_eq!(rows, want);
    }
}
