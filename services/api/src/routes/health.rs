//! Liveness, readiness and who the caller is.

use actix_web::http::StatusCode;
use actix_web::HttpResponse;
use serde_json::json;

use super::State;
use crate::auth::Caller;

pub(super) async fn health() -> HttpResponse {
    HttpResponse::Ok().json(json!({"status": "ok"}))
}

pub(super) async fn ready(state: State) -> HttpResponse {
    let store = match state.stores.works.count_works().await {
        Ok(_) => "ok".to_owned(),
        Err(e) => format!("error: {e}"),
    };
    // Up, and the one the store was indexed into (not an emptied or foreign one).
    let index = match state.index.ping().await {
        Ok(()) => match state.matcher.check_index().await {
            Ok(()) => "ok".to_owned(),
            Err(e) => format!("error: {e}"),
        },
        Err(e) => format!("error: {e}"),
    };
    let ok = store == "ok" && index == "ok";
    let status = if ok { StatusCode::OK } else { StatusCode::SERVICE_UNAVAILABLE };
    HttpResponse::build(status).json(json!({
        "status": if ok { "ready" } else { "unavailable" }, "store": store, "index": index
    }))
}

pub(super) async fn me(caller: Caller) -> HttpResponse {
    let k = &caller.key;
    HttpResponse::Ok().json(json!({
        "key_id": k.id, "name": k.name, "role": k.role.as_str(), "owner": k.owner,
        "expires_at": k.expires_at, "created_at": k.created_at,
    }))
}
