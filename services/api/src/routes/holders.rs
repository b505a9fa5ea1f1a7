//! `/holders`: a rights holder's profile (what a notice states of it), the documents
//! proving its rights, its licensed domains and its alert settings. Admins manage every holder, a holder
//! its own; analysts read. Every write names the version it read (compare-and-set), so
//! two editors never overwrite each other silently.

use actix_web::http::header::CONTENT_DISPOSITION;
use actix_web::{web, HttpRequest, HttpResponse};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use zhiwen_matcher::licensed::{relabel, Relabelled};
use zhiwen_store::{
    normalize_domain, AlertMode, AlertSettings, Holder, HolderDocument, HolderProfile, LicensedDomain, Timestamp,
    MAX_ALERTS_PER_HOUR, MAX_ALERT_RECIPIENTS, MAX_DOCUMENTS,
};

use super::works::read_body;
use super::{State, EVERYONE, WRITERS};
use crate::auth::Caller;
use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::AppState;

/// Largest rights document accepted (a scanned certificate, a licence PDF).
pub const MAX_DOCUMENT_BYTES: usize = 10 << 20;

/// The routes of this resource (under `/api/v1`).
pub(super) fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/holders", web::get().to(list_holders))
        .route("/holders/{owner}", web::get().to(get_holder))
        .route("/holders/{owner}/profile", web::put().to(put_profile))
        .route("/holders/{owner}/licensed", web::put().to(put_licensed))
        .route("/holders/{owner}/alerts", web::put().to(put_alerts))
        .route("/holders/{owner}/documents", web::post().to(upload_document))
        .route("/holders/{owner}/documents/{sha256}", web::get().to(get_document))
        .route("/holders/{owner}/documents/{sha256}", web::delete().to(delete_document));
}

/// The holder `owner` as the caller may see it: another holder's is the same 404 as
/// one that does not exist. Without a record, an empty one (version 0).
pub(crate) async fn visible_holder(state: &AppState, caller: &Caller, owner: &str) -> ApiResult<Holder> {
    if owner.is_empty() || !caller.sees(owner) {
        return Err(ApiError::not_found("holder", owner));
    }
    Ok(state.stores.cases.get_holder(owner).await?.unwrap_or_else(|| Holder::empty(owner)))
}

/// The holder `owner`, for a change by the caller: admins, or the holder itself.
async fn writable_holder(state: &AppState, caller: &Caller, owner: &str, what: &str) -> ApiResult<Holder> {
    let holder = visible_holder(state, caller, owner).await?;
    caller.require(WRITERS, what)?;
    Ok(holder)
}

fn check_version(holder: &Holder, version: u64) -> ApiResult<()> {
    if holder.version != version {
        return Err(ApiError::new(
            ErrorCode::Conflict,
            format!(
                "holder {} changed meanwhile (version {} is stored, {version} was read); read it again",
                holder.owner, holder.version
            ),
        ));
    }
    Ok(())
}

async fn list_holders(state: State, caller: Caller) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read holders")?;
    let items: Vec<Holder> = match caller.scope() {
        Some(owner) => vec![visible_holder(&state, &caller, owner).await?],
        None => state.stores.cases.list_holders().await?,
    };
    Ok(HttpResponse::Ok().json(serde_json::json!({ "items": items })))
}

async fn get_holder(state: State, caller: Caller, owner: web::Path<String>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read holders")?;
    Ok(HttpResponse::Ok().json(visible_holder(&state, &caller, &owner).await?))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ProfileBody {
    /// The version read (0: none stored yet).
    version: u64,
    legal_name: String,
    contact_person: String,
    address: String,
    phone: String,
    email: String,
}

async fn put_profile(
    state: State,
    caller: Caller,
    owner: web::Path<String>,
    body: web::Json<ProfileBody>,
) -> ApiResult<HttpResponse> {
    let mut holder = writable_holder(&state, &caller, &owner, "change holder profiles").await?;
    check_version(&holder, body.version)?;
    let b = body.into_inner();
    let email = b.email.trim().to_owned();
    if !email.is_empty() && !plausible_email(&email) {
        return Err(ApiError::new(ErrorCode::BadRequest, format!("email: {email:?} is not an e-mail address")));
    }
    holder.profile = HolderProfile {
        legal_name: b.legal_name.trim().to_owned(),
        contact_person: b.contact_person.trim().to_owned(),
        address: b.address.trim().to_owned(),
        phone: b.phone.trim().to_owned(),
        email,
    };
    holder.updated_at = Timestamp::now();
    holder.updated_by = caller.actor();
    let stored = state.stores.cases.put_holder(&holder).await?;
    tracing::info!(owner = %stored.owner, version = stored.version, actor = %caller.actor(), "holder profile changed");
    Ok(HttpResponse::Ok().json(stored))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct AlertsBody {
    /// The version read (0: none stored yet).
    version: u64,
    recipients: Vec<String>,
    min_score: f64,
    mode: AlertMode,
    max_per_hour: u32,
    lang: String,
}

/// Replace the holder's alert settings (who is e-mailed about new matches, above which
/// score, immediately or as a daily digest, at most how often, in which language).
async fn put_alerts(
    state: State,
    caller: Caller,
    owner: web::Path<String>,
    body: web::Json<AlertsBody>,
) -> ApiResult<HttpResponse> {
    let mut holder = writable_holder(&state, &caller, &owner, "change alert settings").await?;
    check_version(&holder, body.version)?;
    let b = body.into_inner();
    let bad = |m: String| ApiError::new(ErrorCode::BadRequest, m);
    if b.recipients.len() > MAX_ALERT_RECIPIENTS {
        return Err(bad(format!("recipients: at most {MAX_ALERT_RECIPIENTS}")));
    }
    let mut recipients: Vec<String> = Vec::new();
    for (i, r) in b.recipients.iter().enumerate() {
        let r = r.trim().to_owned();
        if !plausible_email(&r) || r.contains(['<', '>', ',', ';', '"']) {
            return Err(bad(format!("recipients[{i}]: {r:?} is not an e-mail address")));
        }
        if !recipients.contains(&r) {
            recipients.push(r);
        }
    }
    if !(b.min_score.is_finite() && (0.0..=1.0).contains(&b.min_score)) {
        return Err(bad("min_score: a number from 0 to 1".into()));
    }
    if !(1..=MAX_ALERTS_PER_HOUR).contains(&b.max_per_hour) {
        return Err(bad(format!("max_per_hour: 1 to {MAX_ALERTS_PER_HOUR}")));
    }
    let lang = match b.lang.trim().to_ascii_lowercase().replace('_', "-").as_str() {
        "zh-cn" | "zh" | "zh-hans" => "zh-CN",
        "en" => "en",
        _ => return Err(bad(format!("lang: {:?} is not zh-CN or en", b.lang))),
    };
    holder.alerts = AlertSettings {
        recipients,
        min_score: b.min_score,
        mode: b.mode,
        max_per_hour: b.max_per_hour,
        lang: lang.into(),
    };
    holder.updated_at = Timestamp::now();
    holder.updated_by = caller.actor();
    let stored = state.stores.cases.put_holder(&holder).await?;
    tracing::info!(owner = %stored.owner, recipients = stored.alerts.recipients.len(), mode = ?stored.alerts.mode, actor = %caller.actor(), "alert settings changed");
    Ok(HttpResponse::Ok().json(stored))
}

fn plausible_email(s: &str) -> bool {
    s.len() <= 254
        && s.split_once('@').is_some_and(|(local, domain)| {
            !local.is_empty()
                && !s.contains(char::is_whitespace)
                && normalize_domain(domain).is_some()
                && domain.contains('.')
        })
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LicensedEntry {
    domain: String,
    #[serde(default)]
    work_id: Option<i64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct LicensedBody {
    version: u64,
    domains: Vec<LicensedEntry>,
}

#[derive(Serialize)]
struct LicensedResponse {
    holder: Holder,
    relabelled: Relabelled,
}

/// Replace the licensed domains, then re-label the holder's stored matches.
async fn put_licensed(
    state: State,
    caller: Caller,
    owner: web::Path<String>,
    body: web::Json<LicensedBody>,
) -> ApiResult<HttpResponse> {
    let mut holder = writable_holder(&state, &caller, &owner, "change licensed domains").await?;
    check_version(&holder, body.version)?;
    let now = Timestamp::now();
    let mut domains: Vec<LicensedDomain> = Vec::new();
    for (i, e) in body.domains.iter().enumerate() {
        let domain = normalize_domain(&e.domain).ok_or_else(|| {
            ApiError::new(ErrorCode::BadRequest, format!("domains[{i}]: {:?} is not a domain name", e.domain))
        })?;
        if let Some(work_id) = e.work_id {
            // Only a work of this holder: another's is the same 400 as one that does not exist.
            match state.stores.queries.work_summary(work_id).await? {
                Some(w) if w.owner == holder.owner => {}
                _ => {
                    return Err(ApiError::new(
                        ErrorCode::BadRequest,
                        format!("domains[{i}]: work {work_id} is not a work of {}", holder.owner),
                    ))
                }
            }
        }
        if domains.iter().any(|d| d.domain == domain && d.work_id == e.work_id) {
            continue;
        }
        // An entry kept as it was keeps who added it and when.
        let kept = holder.licensed.iter().find(|d| d.domain == domain && d.work_id == e.work_id);
        domains.push(kept.cloned().unwrap_or(LicensedDomain {
            domain,
            work_id: e.work_id,
            added_at: now,
            added_by: caller.actor(),
        }));
    }
    holder.licensed = domains;
    holder.updated_at = now;
    holder.updated_by = caller.actor();
    let stored = state.stores.cases.put_holder(&holder).await?;
    let relabelled = relabel(&state.stores, &stored).await?;
    tracing::info!(owner = %stored.owner, domains = stored.licensed.len(), licensed = relabelled.licensed, unlicensed = relabelled.unlicensed, actor = %caller.actor(), "licensed domains changed");
    Ok(HttpResponse::Ok().json(LicensedResponse { holder: stored, relabelled }))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DocumentParams {
    name: String,
    version: u64,
}

/// Upload a rights document: the raw body, its name in `?name=`, its type in
/// `Content-Type`. Kept as an evidence file under its SHA-256.
async fn upload_document(
    state: State,
    caller: Caller,
    req: HttpRequest,
    owner: web::Path<String>,
    q: web::Query<DocumentParams>,
    payload: web::Payload,
) -> ApiResult<HttpResponse> {
    let mut holder = writable_holder(&state, &caller, &owner, "upload rights documents").await?;
    check_version(&holder, q.version)?;
    let name = q.name.trim();
    if name.is_empty() || name.len() > 200 || name.contains(['/', '\\', '\0', '\r', '\n', '"']) {
        return Err(ApiError::new(
            ErrorCode::BadRequest,
            "name: a file name of 1 to 200 bytes, without / \\ \" or line breaks",
        ));
    }
    if holder.documents.len() >= MAX_DOCUMENTS {
        return Err(ApiError::new(ErrorCode::Conflict, format!("a holder keeps at most {MAX_DOCUMENTS} documents")));
    }
    let media_type = req
        .headers()
        .get(actix_web::http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<mime_guess::mime::Mime>().ok())
        .map(|m| m.essence_str().to_owned())
        .unwrap_or_else(|| "application/octet-stream".into());
    let body = read_body(&req, payload, MAX_DOCUMENT_BYTES).await?;
    if body.is_empty() {
        return Err(ApiError::new(ErrorCode::BadRequest, "the document is empty"));
    }
    let sha256 = hex::encode(Sha256::digest(&body));
    if let Some(existing) = holder.documents.iter().find(|d| d.sha256 == sha256) {
        // The same bytes again: nothing to add (idempotent).
        return Ok(HttpResponse::Ok().json(existing));
    }
    let stored_sha = state.stores.evidence.put_evidence_file(&body).await?;
    let doc = HolderDocument {
        name: name.to_owned(),
        sha256: stored_sha,
        media_type,
        size: body.len() as u64,
        uploaded_at: Timestamp::now(),
        uploaded_by: caller.actor(),
    };
    holder.documents.push(doc.clone());
    holder.updated_at = doc.uploaded_at;
    holder.updated_by = caller.actor();
    let stored = state.stores.cases.put_holder(&holder).await?;
    tracing::info!(owner = %stored.owner, sha256 = %doc.sha256, size = doc.size, actor = %caller.actor(), "rights document uploaded");
    Ok(HttpResponse::Created().json(doc))
}

async fn get_document(state: State, caller: Caller, path: web::Path<(String, String)>) -> ApiResult<HttpResponse> {
    caller.require(EVERYONE, "read rights documents")?;
    let (owner, sha256) = path.into_inner();
    let holder = visible_holder(&state, &caller, &owner).await?;
    let doc =
        holder.documents.iter().find(|d| d.sha256 == sha256).ok_or_else(|| ApiError::not_found("document", &sha256))?;
    let bytes = state
        .stores
        .evidence
        .get_evidence_file(&doc.sha256, MAX_DOCUMENT_BYTES as u64)
        .await?
        .ok_or_else(|| ApiError::new(ErrorCode::Conflict, format!("{} is no longer kept", doc.name)))?;
    Ok(HttpResponse::Ok()
        .content_type(doc.media_type.as_str())
        .insert_header((CONTENT_DISPOSITION, content_disposition(&doc.name)))
        .insert_header(("Content-Security-Policy", "sandbox; default-src 'none'"))
        .body(bytes))
}

/// `attachment` with an ASCII fallback and the UTF-8 name (RFC 6266 / 5987).
pub(crate) fn content_disposition(name: &str) -> String {
    let ascii: String =
        name.chars().map(|c| if c.is_ascii_alphanumeric() || ".-_ ".contains(c) { c } else { '_' }).collect();
    let encoded: String = name
        .bytes()
        .map(|b| {
            if b.is_ascii_alphanumeric() || b".-_".contains(&b) {
                (b as char).to_string()
            } else {
                format!("%{b:02X}")
            }
        })
        .collect();
    format!("attachment; filename=\"{ascii}\"; filename*=UTF-8''{encoded}")
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct VersionParams {
    version: u64,
}

async fn delete_document(
    state: State,
    caller: Caller,
    path: web::Path<(String, String)>,
    q: web::Query<VersionParams>,
) -> ApiResult<HttpResponse> {
    let (owner, sha256) = path.into_inner();
    let mut holder = writable_holder(&state, &caller, &owner, "delete rights documents").await?;
    check_version(&holder, q.version)?;
    let before = holder.documents.len();
    holder.documents.retain(|d| d.sha256 != sha256);
    if holder.documents.len() == before {
        return Err(ApiError::not_found("document", &sha256));
    }
    holder.updated_at = Timestamp::now();
    holder.updated_by = caller.actor();
    // The file stays in the evidence store (content-addressed, maybe cited by a notice).
    let stored = state.stores.cases.put_holder(&holder).await?;
    Ok(HttpResponse::Ok().json(stored))
}
