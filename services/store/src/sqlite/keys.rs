//! [`KeyStore`] on the embedded store: API keys, stored by hash.

use async_trait::async_trait;
use rusqlite::{params, OptionalExtension, Row};

use super::{opt_ts, ts, SqliteStore};
use crate::admin::*;
use crate::model::*;
use crate::traits::StoreResult;
use crate::StoreError;

const KEY_COLS: &str = "id, hash, prefix, name, role, owner, created_at, expires_at, revoked_at";

fn key_row(r: &Row) -> rusqlite::Result<(ApiKey, String)> {
    let role: String = r.get(4)?;
    Ok((
        ApiKey {
            id: r.get(0)?,
            hash: r.get(1)?,
            prefix: r.get(2)?,
            name: r.get(3)?,
            role: KeyRole::Admin,
            owner: r.get(5)?,
            created_at: ts(r, 6)?,
            expires_at: opt_ts(r, 7)?,
            revoked_at: opt_ts(r, 8)?,
        },
        role,
    ))
}

fn finish_key((mut k, role): (ApiKey, String)) -> StoreResult<ApiKey> {
    k.role = KeyRole::parse(&role).ok_or_else(|| StoreError::corrupt(format!("role of api key {}", k.id), role))?;
    Ok(k)
}

#[async_trait]
impl KeyStore for SqliteStore {
    async fn create_key(&self, key: &NewApiKey) -> StoreResult<ApiKey> {
        validate_key(key)?;
        let k = key.clone();
        self.run(move |c| {
            let exists: Option<i64> =
                c.query_row("SELECT id FROM api_keys WHERE hash = ?1", params![k.hash], |r| r.get(0)).optional()?;
            if exists.is_some() {
                return Err(StoreError::Duplicate { what: "api key", key: k.prefix.clone() });
            }
            c.execute(
                "INSERT INTO api_keys (hash, prefix, name, role, owner, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![k.hash, k.prefix, k.name, k.role.as_str(), k.owner, k.created_at.0, k.expires_at.map(|t| t.0)],
            )?;
            Ok(ApiKey {
                id: c.last_insert_rowid(),
                hash: k.hash,
                prefix: k.prefix,
                name: k.name,
                role: k.role,
                owner: k.owner,
                created_at: k.created_at,
                expires_at: k.expires_at,
                revoked_at: None,
            })
        })
        .await
    }

    async fn find_key(&self, hash: &str) -> StoreResult<Option<ApiKey>> {
        let hash = hash.to_owned();
        self.read(move |c| {
            c.prepare_cached(&format!("SELECT {KEY_COLS} FROM api_keys WHERE hash = ?1"))?
                .query_row(params![hash], key_row)
                .optional()?
                .map(finish_key)
                .transpose()
        })
        .await
    }

    async fn get_key(&self, id: i64) -> StoreResult<Option<ApiKey>> {
        self.read(move |c| {
            c.prepare_cached(&format!("SELECT {KEY_COLS} FROM api_keys WHERE id = ?1"))?
                .query_row(params![id], key_row)
                .optional()?
                .map(finish_key)
                .transpose()
        })
        .await
    }

    async fn list_keys(&self) -> StoreResult<Vec<ApiKey>> {
        self.read(|c| {
            let mut stmt = c.prepare(&format!("SELECT {KEY_COLS} FROM api_keys ORDER BY id"))?;
            let rows = stmt.query_map([], key_row)?.collect::<Result<Vec<_>, _>>()?;
            rows.into_iter().map(finish_key).collect()
        })
        .await
    }

    async fn revoke_key(&self, id: i64, at: Timestamp) -> StoreResult<Option<Outcome>> {
        self.run(move |c| {
            let revoked: Option<Option<i64>> =
                c.query_row("SELECT revoked_at FROM api_keys WHERE id = ?1", params![id], |r| r.get(0)).optional()?;
            Ok(match revoked {
                None => None,
                Some(Some(_)) => Some(Outcome::Unchanged),
                Some(None) => {
                    c.execute("UPDATE api_keys SET revoked_at = ?2 WHERE id = ?1", params![id, at.0])?;
                    Some(Outcome::Updated)
                }
            })
        })
        .await
    }
}
