//! API keys: generation, hashing, verification, roles and per-key rate limits.
//!
//! A key is `zw_` + 43 characters drawn uniformly from the 62 alphanumerics by the
//! operating-system-seeded CSPRNG of `rand` (about 256 bits). Only its SHA-256 is
//! stored. A fast, unsalted hash is the right tool here, unlike for passwords: slow
//! salted hashes (argon2, bcrypt) exist to make guessing low-entropy human secrets
//! expensive, but nobody can enumerate a 2^256 space whatever the hash speed, and a
//! fast deterministic hash lets every request find its key by an indexed lookup.

use std::collections::HashMap;
use std::future::Future;
use std::num::NonZeroU32;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use actix_web::{web, FromRequest, HttpRequest};
use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use rand::distr::{Alphanumeric, SampleString};
use serde::Serialize;
use sha2::{Digest, Sha256};
use zhiwen_store::{ApiKey, KeyRole, NewApiKey, Stores, Timestamp, Work};

use crate::error::{ApiError, ApiResult, ErrorCode};
use crate::{ApiConfig, AppState};

/// Prefix of every key.
pub const KEY_PREFIX: &str = "zw_";
const KEY_CHARS: usize = 43;

/// Hex SHA-256 of a key.
pub fn hash_key(secret: &str) -> String {
    hex::encode(Sha256::digest(secret.as_bytes()))
}

/// A freshly created key: the secret (show it once) and what was stored.
#[derive(Debug, Clone)]
pub struct CreatedKey {
    /// The secret; never stored.
    pub secret: String,
    /// The stored record.
    pub key: ApiKey,
}

/// Create and store a key. `expires_days`: valid for that many days.
pub async fn generate_key(
    stores: &Stores,
    role: KeyRole,
    owner: Option<&str>,
    name: &str,
    expires_days: Option<u32>,
) -> Result<CreatedKey, zhiwen_store::StoreError> {
    let secret = format!("{KEY_PREFIX}{}", Alphanumeric.sample_string(&mut rand::rng(), KEY_CHARS));
    let now = Timestamp::now();
    let new = NewApiKey {
        hash: hash_key(&secret),
        prefix: secret.chars().take(8).collect(),
        name: name.to_owned(),
        role,
        owner: owner.map(str::to_owned),
        created_at: now,
        expires_at: expires_days.map(|d| Timestamp(now.0 + d as i64 * 86_400_000)),
    };
    let key = stores.keys.create_key(&new).await?;
    Ok(CreatedKey { secret, key })
}

pub(crate) struct AuthState {
    cache: Mutex<HashMap<String, (ApiKey, Instant)>>,
    limiter: DefaultKeyedRateLimiter<i64>,
    ttl: std::time::Duration,
}

impl AuthState {
    pub(crate) fn new(config: &ApiConfig) -> Self {
        let per_second = NonZeroU32::new(config.rate_per_second.max(1)).unwrap_or(NonZeroU32::MIN);
        let burst = NonZeroU32::new(config.rate_burst.max(1)).unwrap_or(NonZeroU32::MIN);
        AuthState {
            cache: Mutex::new(HashMap::new()),
            limiter: RateLimiter::keyed(Quota::per_second(per_second).allow_burst(burst)),
            ttl: config.key_cache_ttl,
        }
    }
}

/// The authenticated caller of a request.
#[derive(Debug, Clone, Serialize)]
pub struct Caller {
    /// The key.
    pub key: ApiKey,
}

impl Caller {
    /// Role.
    pub fn role(&self) -> KeyRole {
        self.key.role
    }

    /// The owner a holder is limited to; `None` for admins and analysts. A holder key
    /// without an owner (the stores refuse to create one) sees no one's data, never
    /// everyone's: its scope is the empty owner, which no record has.
    pub fn scope(&self) -> Option<&str> {
        match self.key.role {
            KeyRole::Holder => Some(self.key.owner.as_deref().unwrap_or("")),
            _ => None,
        }
    }

    /// May the caller see data of `owner`? (Holders: only their own.)
    pub fn sees(&self, owner: &str) -> bool {
        self.scope().is_none_or(|o| o == owner)
    }

    /// The name recorded in review trails.
    pub fn actor(&self) -> String {
        if self.key.name.is_empty() {
            format!("key:{}", self.key.id)
        } else {
            format!("key:{} {}", self.key.id, self.key.name)
        }
    }

    /// Fail with 403 unless the role is one of `roles`.
    pub fn require(&self, roles: &[KeyRole], what: &str) -> Result<(), ApiError> {
        if roles.contains(&self.key.role) {
            Ok(())
        } else {
            Err(ApiError::new(ErrorCode::Forbidden, format!("the {} role may not {what}", self.key.role.as_str())))
        }
    }
}

async fn authenticate(state: &AppState, header: Option<String>) -> Result<Caller, ApiError> {
    let header = header.ok_or_else(|| ApiError::new(ErrorCode::Unauthorized, "missing Authorization: Bearer <key>"))?;
    let secret = header
        .strip_prefix("Bearer ")
        .map(str::trim)
        .filter(|s| s.starts_with(KEY_PREFIX))
        .ok_or_else(|| ApiError::new(ErrorCode::Unauthorized, "expected Authorization: Bearer zw_..."))?;
    let hash = hash_key(secret);
    let now = Timestamp::now();
    let cached = {
        let cache = state.auth.cache.lock().unwrap_or_else(|p| p.into_inner());
        cache.get(&hash).filter(|(_, at)| at.elapsed() < state.auth.ttl).map(|(k, _)| k.clone())
    };
    let key = match cached {
        Some(k) => k,
        None => {
            let k = state
                .stores
                .keys
                .find_key(&hash)
                .await?
                .ok_or_else(|| ApiError::new(ErrorCode::Unauthorized, "unknown key"))?;
            if !state.auth.ttl.is_zero() {
                let mut cache = state.auth.cache.lock().unwrap_or_else(|p| p.into_inner());
                if cache.len() > 10_000 {
                    cache.clear();
                }
                cache.insert(hash, (k.clone(), Instant::now()));
            }
            k
        }
    };
    if key.revoked_at.is_some() {
        return Err(ApiError::new(ErrorCode::Unauthorized, "this key was revoked"));
    }
    if !key.is_valid_at(now) {
        return Err(ApiError::new(ErrorCode::Unauthorized, "this key has expired"));
    }
    if let Err(not_until) = state.auth.limiter.check_key(&key.id) {
        let wait = not_until.wait_time_from(governor::clock::Clock::now(&governor::clock::DefaultClock::default()));
        return Err(ApiError::rate_limited(wait.as_secs() + 1));
    }
    Ok(Caller { key })
}

impl FromRequest for Caller {
    type Error = ApiError;
    type Future = Pin<Box<dyn Future<Output = Result<Caller, ApiError>>>>;

    fn from_request(req: &HttpRequest, _: &mut actix_web::dev::Payload) -> Self::Future {
        let state = req.app_data::<web::Data<AppState>>().map(|d| d.clone().into_inner());
        let header = req.headers().get("Authorization").and_then(|v| v.to_str().ok()).map(str::to_owned);
        Box::pin(async move {
            let state: Arc<AppState> = state.ok_or_else(|| ApiError::internal("application state missing"))?;
            authenticate(&state, header).await
        })
    }
}

/// A work the caller may see, else 404.
pub(crate) async fn visible_work(state: &AppState, caller: &Caller, id: i64) -> ApiResult<Work> {
    match state.stores.works.get_work(id).await? {
        Some(w) if caller.sees(&w.owner) => Ok(w),
        _ => Err(ApiError::not_found("work", id)),
    }
}
