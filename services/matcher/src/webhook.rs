//! Push new high-confidence matches to a configured URL as JSON, with retries.
//!
//! Delivery is at most once per match: a match is announced when the run that first
//! records it has finished its batch; when every attempt fails the error is logged and
//! the match stays in the store (the export and the API still show it).

use std::time::Duration;

use serde::Serialize;

use crate::config::WebhookConfig;
use crate::{MatchRecord, MatcherError, Result};

/// The JSON body of one delivery.
#[derive(Debug, Serialize)]
pub struct WebhookPayload<'a> {
    /// Always `zhiwen.matches`.
    pub event: &'static str,
    /// The new matches.
    pub matches: Vec<&'a MatchRecord>,
}

/// A configured webhook.
#[derive(Debug, Clone)]
pub struct Webhook {
    url: String,
    client: reqwest::Client,
    config: WebhookConfig,
}

impl Webhook {
    /// The webhook of `config`, `None` when no URL is configured.
    pub fn from_config(config: &WebhookConfig) -> Result<Option<Self>> {
        let Some(url) = config.url.clone().filter(|u| !u.trim().is_empty()) else { return Ok(None) };
        if !(url.starts_with("http://") || url.starts_with("https://")) {
            return Err(MatcherError::Config(format!("webhook.url must be http(s): {url}")));
        }
        let client = reqwest::Client::builder()
            .timeout(Duration::from_millis(config.timeout_ms.max(1)))
            .build()
            .map_err(|e| MatcherError::Config(format!("webhook client: {e}")))?;
        Ok(Some(Webhook { url, client, config: config.clone() }))
    }

    /// POST the matches; retries network errors, 5xx and 429 with exponential back-off.
    pub async fn send(&self, matches: &[&MatchRecord]) -> Result<()> {
        self.post(&WebhookPayload { event: "zhiwen.matches", matches: matches.to_vec() }).await
    }

    /// POST any event's JSON body (e.g. `zhiwen.tree_head`, the evidence log's signed
    /// head), with the same retries as [`Webhook::send`].
    pub async fn post<T: Serialize>(&self, payload: &T) -> Result<()> {
        let attempts = self.config.max_attempts.max(1);
        let mut delay = Duration::from_millis(self.config.base_delay_ms);
        let mut attempt = 1;
        loop {
            let err = match self.client.post(&self.url).json(payload).send().await {
                Ok(resp) if resp.status().is_success() => return Ok(()),
                Ok(resp) => {
                    let status = resp.status();
                    let retryable = status.is_server_error() || status.as_u16() == 429;
                    MatcherError::Webhook { url: self.url.clone(), reason: format!("HTTP {status}"), retryable }
                }
                Err(e) => MatcherError::Webhook { url: self.url.clone(), reason: e.to_string(), retryable: true },
            };
            if !err.is_retryable() || attempt >= attempts {
                return Err(err);
            }
            tracing::warn!(attempt, error = %err, "webhook attempt failed; retrying");
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_secs(60));
            attempt += 1;
        }
    }
}
