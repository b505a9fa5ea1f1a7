//! The endpoints of `docs/api.md`, one module per resource. Every handler takes a
//! [`Caller`](crate::auth::Caller) (authenticated, rate-limited) and checks its role; a
//! holder asking for data of another owner gets the same 404 as for an id that does not
//! exist.

mod evidence;
mod health;
mod holders;
mod matches;
mod notices;
mod pages;
mod removals;
mod stats;
mod tasks;
mod watched;
mod works;

use actix_web::{web, HttpResponse};
use serde::Serialize;
use zhiwen_store::KeyRole;

use crate::error::{ApiError, ApiResult};
use crate::AppState;

type State = web::Data<AppState>;

const ADMIN: &[KeyRole] = &[KeyRole::Admin];
const STAFF: &[KeyRole] = &[KeyRole::Admin, KeyRole::Analyst];
const WRITERS: &[KeyRole] = &[KeyRole::Admin, KeyRole::Holder];
const EVERYONE: &[KeyRole] = &[KeyRole::Admin, KeyRole::Analyst, KeyRole::Holder];

pub fn routes(cfg: &mut web::ServiceConfig) {
    cfg.route("/health", web::get().to(health::health))
        .route("/ready", web::get().to(health::ready))
        .route("/metrics", web::get().to(crate::metrics::render))
        .service(
            web::scope("/api/v1")
                .route("/me", web::get().to(health::me))
                .configure(stats::routes)
                .configure(works::routes)
                .configure(pages::routes)
                .configure(matches::routes)
                .configure(evidence::routes)
                .configure(holders::routes)
                .configure(notices::routes)
                .configure(removals::routes)
                .configure(tasks::routes)
                .configure(watched::routes)
                .route("/exports/matches", web::get().to(crate::exports::export_matches))
                .default_service(web::to(api_not_found)),
        );
}

async fn api_not_found() -> ApiResult<HttpResponse> {
    Err(ApiError::new_not_found_path())
}

impl ApiError {
    fn new_not_found_path() -> Self {
        ApiError::not_found("endpoint", "(no such path or method)")
    }
}

#[derive(Serialize)]
struct Paged<T: Serialize> {
    items: Vec<T>,
    next_cursor: Option<String>,
}
