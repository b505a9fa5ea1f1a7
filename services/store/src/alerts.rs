//! Alerts to rights holders about new matches: each holder's settings
//! ([`AlertSettings`], kept in its [`Holder`](crate::Holder) record) and the durable
//! outbox the e-mails are sent from ([`AlertOutbox`]).
//!
//! The outbox is two kinds of case documents, so both backends keep it the same way
//! (no schema change: `case_docs` takes any kind):
//!
//! - one **alerted record** per (holder, match), kind [`DocKind::Alert`], key
//!   `<owner>/<match id>`, inserted once (insert-if-absent): the de-duplication. A match
//!   whose record exists is never queued again for that holder, whoever finds it again
//!   (a re-run of the daily task, a second worker).
//! - one **queue** per holder, kind [`DocKind::AlertQueue`], key the owner
//!   ([`AlertQueue`]): the matches waiting for an e-mail, the batch being sent, the
//!   e-mails of the last hour (the rate limit) and the day of the last digest. Every
//!   change is a compare-and-set of the whole document, so two processes never both
//!   take the same batch.
//!
//! **At most once.** A batch is taken from the queue (`sending`, with its number)
//! before the SMTP conversation and ended after it ([`AlertOutbox::end_alert_batch`]). A
//! send that failed for sure puts its matches back at the head of the queue. A process
//! that dies mid-send leaves the batch in `sending`: after [`SENDING_LEASE_MS`] the next
//! delivery moves it to [`AlertQueue::uncertain`] (logged, kept for an operator) and does
//! not send it again. Likewise a crash between a match's alerted record and its queue
//! entry leaves it un-alerted. Either way the match itself is stored and listed by the
//! API and the dashboard; only the e-mail about it may be missing, never doubled.

use async_trait::async_trait;
use serde::{Deserialize, Serialize};

use crate::cases::{retry_cas, Cas, CaseStore, DocKind, StoredDoc};
use crate::model::{Outcome, Timestamp};
use crate::traits::StoreResult;
use crate::StoreError;

/// Most e-mail recipients of a holder's alerts.
pub const MAX_ALERT_RECIPIENTS: usize = 20;
/// Most e-mails per hour a holder may allow.
pub const MAX_ALERTS_PER_HOUR: u32 = 60;
/// Most matches listed in one alert e-mail; the rest stay queued for the next one.
pub const MAX_ALERT_ITEMS: usize = 200;
/// Most matches waiting in one holder's queue (its document stays well under
/// [`crate::MAX_DOC_BYTES`]); matches beyond are not queued and are logged.
pub const MAX_ALERT_PENDING: usize = 10_000;
/// A batch left `sending` this long (milliseconds) belongs to a process that died.
pub const SENDING_LEASE_MS: i64 = 10 * 60 * 1000;
/// The window of the rate limit (milliseconds).
pub const RATE_WINDOW_MS: i64 = 60 * 60 * 1000;
/// Interrupted batches an [`AlertQueue`] keeps for an operator.
const MAX_UNCERTAIN: usize = 20;

/// When a holder's alerts go out.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum AlertMode {
    /// An e-mail as soon as a matching task records new matches (within the rate limit).
    #[default]
    Immediate,
    /// One e-mail a day listing the day's new matches.
    Digest,
}

/// A holder's alert settings. No recipient: no alert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct AlertSettings {
    /// Who gets the e-mails (empty: alerts are off).
    pub recipients: Vec<String>,
    /// Only new matches with at least this score (0 to 1).
    pub min_score: f64,
    /// Immediate or daily digest.
    pub mode: AlertMode,
    /// Most e-mails per hour (1 to [`MAX_ALERTS_PER_HOUR`]); matches over the limit wait
    /// for the next allowed e-mail.
    pub max_per_hour: u32,
    /// Language of the e-mails: `zh-CN` (default) or `en`.
    pub lang: String,
}

impl Default for AlertSettings {
    fn default() -> Self {
        AlertSettings {
            recipients: Vec::new(),
            min_score: 0.8,
            mode: AlertMode::Immediate,
            max_per_hour: 6,
            lang: "zh-CN".into(),
        }
    }
}

impl AlertSettings {
    /// Are alerts on (at least one recipient)?
    pub fn enabled(&self) -> bool {
        !self.recipients.is_empty()
    }

    /// Check the bounds (the API checks the addresses' form).
    pub fn validate(&self) -> StoreResult<()> {
        if self.recipients.len() > MAX_ALERT_RECIPIENTS {
            return Err(StoreError::invalid("alert recipients", format!("at most {MAX_ALERT_RECIPIENTS}")));
        }
        for r in &self.recipients {
            if r.is_empty() || r.len() > 254 || r.chars().any(|c| c.is_control()) {
                return Err(StoreError::invalid(
                    "alert recipient",
                    format!("{r:?} is not one address of 1 to 254 bytes"),
                ));
            }
        }
        if !(self.min_score.is_finite() && (0.0..=1.0).contains(&self.min_score)) {
            return Err(StoreError::invalid("alert min_score", "a number from 0 to 1"));
        }
        if !(1..=MAX_ALERTS_PER_HOUR).contains(&self.max_per_hour) {
            return Err(StoreError::invalid("alert max_per_hour", format!("1 to {MAX_ALERTS_PER_HOUR}")));
        }
        if !matches!(self.lang.as_str(), "zh-CN" | "en") {
            return Err(StoreError::invalid("alert lang", "zh-CN or en"));
        }
        Ok(())
    }
}

/// A match waiting for its alert.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertItem {
    /// The match.
    pub match_id: i64,
    /// Its score when it was queued.
    pub score: f64,
    /// When it was queued.
    pub queued_at: Timestamp,
}

/// The matches of one e-mail.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertBatch {
    /// Its number within the holder's queue (1, 2, ...): with the owner, the e-mail's
    /// identity (its Message-ID).
    pub number: u64,
    /// The matches it lists.
    pub items: Vec<AlertItem>,
    /// The day (`YYYY-MM-DD`) of a digest; `None`: an immediate alert.
    #[serde(default)]
    pub digest: Option<String>,
    /// The digest day recorded before this one (restored when its send failed).
    #[serde(default)]
    pub previous_digest: Option<String>,
    /// When it was taken from the queue.
    pub started_at: Timestamp,
}

/// A holder's alert queue (see the module documentation).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AlertQueue {
    /// The holder.
    pub owner: String,
    /// Matches waiting for an e-mail, oldest first.
    #[serde(default)]
    pub pending: Vec<AlertItem>,
    /// The batch being sent.
    #[serde(default)]
    pub sending: Option<AlertBatch>,
    /// When the e-mails of the last hour were begun (the rate limit).
    #[serde(default)]
    pub recent: Vec<Timestamp>,
    /// Batches begun so far (numbers the next).
    #[serde(default)]
    pub batches: u64,
    /// E-mails the relay accepted.
    #[serde(default)]
    pub sent: u64,
    /// The day of the last digest taken (`YYYY-MM-DD`): a day has one digest.
    #[serde(default)]
    pub last_digest: Option<String>,
    /// Batches whose process died mid-send: perhaps sent, never sent again.
    #[serde(default)]
    pub uncertain: Vec<AlertBatch>,
    /// Version (compare-and-set; 0: not stored).
    #[serde(default)]
    pub version: u64,
}

impl AlertQueue {
    fn empty(owner: &str) -> Self {
        AlertQueue {
            owner: owner.to_owned(),
            pending: Vec::new(),
            sending: None,
            recent: Vec::new(),
            batches: 0,
            sent: 0,
            last_digest: None,
            uncertain: Vec::new(),
            version: 0,
        }
    }

    /// The e-mails begun in the hour before `now`.
    pub fn sent_in_window(&self, now: Timestamp) -> usize {
        self.recent.iter().filter(|t| now.0 - t.0 < RATE_WINDOW_MS).count()
    }

    /// When the next e-mail is allowed under `max_per_hour` (`now` if it is).
    pub fn next_allowed(&self, now: Timestamp, max_per_hour: u32) -> Timestamp {
        let mut window: Vec<i64> = self.recent.iter().map(|t| t.0).filter(|&t| now.0 - t < RATE_WINDOW_MS).collect();
        if window.len() < max_per_hour.max(1) as usize {
            return now;
        }
        window.sort_unstable();
        let k = window.len() - max_per_hour.max(1) as usize;
        Timestamp(window[k] + RATE_WINDOW_MS)
    }
}

/// Which e-mail to take from a queue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BatchKind {
    /// An immediate alert, within `max_per_hour` e-mails per hour.
    Immediate {
        /// The holder's limit.
        max_per_hour: u32,
    },
    /// The digest of `day` (`YYYY-MM-DD`): at most one per day.
    Digest {
        /// The day.
        day: String,
    },
}

/// What [`AlertOutbox::begin_alert_batch`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum BatchStart {
    /// A batch to send now; end it with [`AlertOutbox::end_alert_batch`].
    Send(AlertBatch),
    /// Nothing is waiting (or this day's digest was taken).
    Nothing,
    /// Matches wait, held by the rate limit until this time.
    Held(Timestamp),
    /// Another process is sending this holder's previous batch.
    Busy,
}

/// The outbox of alerts, over any [`CaseStore`] (see the module documentation).
#[async_trait]
pub trait AlertOutbox: CaseStore {
    /// The queue of `owner` (`None`: nothing was ever queued).
    async fn alert_queue(&self, owner: &str) -> StoreResult<Option<AlertQueue>> {
        self.get_doc(DocKind::AlertQueue, owner).await?.map(|d| decode_queue(&d)).transpose()
    }

    /// Every holder's queue (bounded by the number of holders).
    async fn alert_queues(&self) -> StoreResult<Vec<AlertQueue>> {
        let mut out = Vec::new();
        let mut after = 0;
        loop {
            let page = self.list_docs(DocKind::AlertQueue, None, after, 500).await?;
            let Some(last) = page.last() else { break };
            after = last.seq;
            for d in &page {
                out.push(decode_queue(d)?);
            }
        }
        Ok(out)
    }

    /// Was match `match_id` alerted (queued) for `owner`?
    async fn was_alerted(&self, owner: &str, match_id: i64) -> StoreResult<bool> {
        Ok(self.get_doc(DocKind::Alert, &alert_key(owner, match_id)).await?.is_some())
    }

    /// Queue `items` for `owner`'s alerts, each match once ever: a match with an alerted
    /// record already is left out. Returns the match ids newly queued.
    async fn queue_alerts(&self, owner: &str, items: &[AlertItem]) -> StoreResult<Vec<i64>> {
        if let Some(q) = self.alert_queue(owner).await? {
            if q.pending.len() >= MAX_ALERT_PENDING {
                tracing::error!(%owner, pending = q.pending.len(), "alert queue full; these matches get no alert");
                return Ok(Vec::new());
            }
        }
        let mut fresh = Vec::new();
        for item in items {
            let json = to_json(&serde_json::json!({ "match_id": item.match_id, "queued_at": item.queued_at }))?;
            let (_, outcome) = self.put_doc(DocKind::Alert, &alert_key(owner, item.match_id), owner, &json, 0).await?;
            if outcome == Outcome::Inserted {
                fresh.push(item.clone());
            }
        }
        if fresh.is_empty() {
            return Ok(Vec::new());
        }
        let ids: Vec<i64> = fresh.iter().map(|i| i.match_id).collect();
        update_queue(self, owner, |q| {
            q.pending.extend(fresh.iter().cloned());
            Some(())
        })
        .await?;
        Ok(ids)
    }

    /// Take the next e-mail's batch of `owner` at `now`: at most [`MAX_ALERT_ITEMS`]
    /// matches, oldest first. An immediate batch counts against the hourly limit; a
    /// digest is taken once per day. A batch left `sending` past [`SENDING_LEASE_MS`] is
    /// moved to [`AlertQueue::uncertain`] first.
    async fn begin_alert_batch(&self, owner: &str, kind: &BatchKind, now: Timestamp) -> StoreResult<BatchStart> {
        let start = update_queue(self, owner, |q| {
            if let Some(stale) = q.sending.take() {
                if now.0 - stale.started_at.0 < SENDING_LEASE_MS {
                    q.sending = Some(stale);
                    return Some(BatchStart::Busy);
                }
                tracing::warn!(
                    %owner, batch = stale.number, matches = stale.items.len(),
                    "an alert e-mail was interrupted mid-send; it may not have gone out and is not sent again"
                );
                q.uncertain.push(stale);
                if q.uncertain.len() > MAX_UNCERTAIN {
                    let extra = q.uncertain.len() - MAX_UNCERTAIN;
                    q.uncertain.drain(..extra);
                }
            }
            q.recent.retain(|t| now.0 - t.0 < RATE_WINDOW_MS);
            let previous_digest = q.last_digest.clone();
            let digest = match kind {
                BatchKind::Immediate { max_per_hour } => {
                    if q.pending.is_empty() {
                        return Some(BatchStart::Nothing);
                    }
                    let next = q.next_allowed(now, *max_per_hour);
                    if next > now {
                        return Some(BatchStart::Held(next));
                    }
                    None
                }
                BatchKind::Digest { day } => {
                    if q.last_digest.as_deref() == Some(day.as_str()) {
                        return Some(BatchStart::Nothing);
                    }
                    q.last_digest = Some(day.clone());
                    if q.pending.is_empty() {
                        // The day is done (nothing to tell), so a re-run sends nothing either.
                        return Some(BatchStart::Nothing);
                    }
                    Some(day.clone())
                }
            };
            let n = q.pending.len().min(MAX_ALERT_ITEMS);
            let items: Vec<AlertItem> = q.pending.drain(..n).collect();
            q.batches += 1;
            q.recent.push(now);
            let batch = AlertBatch { number: q.batches, items, digest, previous_digest, started_at: now };
            q.sending = Some(batch.clone());
            Some(BatchStart::Send(batch))
        })
        .await?;
        Ok(start.unwrap_or(BatchStart::Nothing))
    }

    /// End batch `number` of `owner`: `delivered` (the relay accepted it), or failed for
    /// sure (nothing could have been accepted): its matches go back to the head of the
    /// queue, and it no longer counts against the rate limit.
    async fn end_alert_batch(&self, owner: &str, number: u64, delivered: bool) -> StoreResult<()> {
        update_queue(self, owner, |q| {
            let batch = q.sending.take_if(|b| b.number == number)?;
            if delivered {
                q.sent += 1;
            } else {
                if let Some(pos) = q.recent.iter().rposition(|t| *t == batch.started_at) {
                    q.recent.remove(pos);
                }
                if batch.digest.is_some() {
                    q.last_digest = batch.previous_digest.clone();
                }
                let rest = std::mem::take(&mut q.pending);
                q.pending = batch.items;
                q.pending.extend(rest);
            }
            Some(())
        })
        .await?;
        Ok(())
    }
}

impl<T: CaseStore + ?Sized> AlertOutbox for T {}

/// The key of an alerted record.
fn alert_key(owner: &str, match_id: i64) -> String {
    format!("{owner}/{match_id}")
}

/// Apply `change` to `owner`'s queue (a fresh one when none is stored) and store it
/// with compare-and-set, retried on a concurrent change. `change` returning `None`
/// stores nothing and returns `None`; otherwise its answer is returned once the queue
/// is stored (a queue it left as it was is not written).
async fn update_queue<S, T, F>(store: &S, owner: &str, mut change: F) -> StoreResult<Option<T>>
where
    S: CaseStore + ?Sized,
    T: Send,
    F: FnMut(&mut AlertQueue) -> Option<T> + Send,
{
    let (answer, _) = retry_cas(
        store,
        DocKind::AlertQueue,
        owner,
        || format!("alert queue of {owner}"),
        |doc| {
            let mut q = match doc {
                Some(d) => decode_queue(d)?,
                None => AlertQueue::empty(owner),
            };
            let before = q.clone();
            let Some(out) = change(&mut q) else { return Ok(Cas::Done(None)) };
            if q == before {
                return Ok(Cas::Done(Some(out)));
            }
            Ok(Cas::Write { owner: owner.to_owned(), json: to_json(&q)?, version: q.version, answer: Some(out) })
        },
    )
    .await?;
    Ok(answer)
}

fn to_json<T: Serialize>(v: &T) -> StoreResult<String> {
    let json = serde_json::to_string(v).map_err(|e| StoreError::invalid("alert document", e.to_string()))?;
    if json.len() > crate::MAX_DOC_BYTES {
        return Err(StoreError::invalid("alert document", format!("over {} bytes", crate::MAX_DOC_BYTES)));
    }
    Ok(json)
}

fn decode_queue(d: &StoredDoc) -> StoreResult<AlertQueue> {
    let mut q: AlertQueue =
        serde_json::from_str(&d.json).map_err(|e| StoreError::corrupt(format!("alert queue {}", d.key), e))?;
    q.version = d.version;
    Ok(q)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rate_limit_frees_a_slot_an_hour_after_the_oldest() {
        let mut q = AlertQueue::empty("o");
        let now = Timestamp(10 * RATE_WINDOW_MS);
        assert_eq!(q.next_allowed(now, 1), now);
        q.recent = vec![Timestamp(now.0 - 1000), Timestamp(now.0 - 500)];
        assert_eq!(q.next_allowed(now, 1), Timestamp(now.0 - 500 + RATE_WINDOW_MS));
        assert_eq!(q.next_allowed(now, 2), Timestamp(now.0 - 1000 + RATE_WINDOW_MS));
        assert_eq!(q.next_allowed(now, 3), now);
        q.recent = vec![Timestamp(now.0 - RATE_WINDOW_MS)];
        assert_eq!(q.next_allowed(now, 1), now, "an e-mail an hour ago is outside the window");
    }

    #[test]
    fn settings_are_bounded() {
        assert!(AlertSettings::default().validate().is_ok());
        assert!(!AlertSettings::default().enabled());
        for bad in [
            AlertSettings { min_score: 1.5, ..Default::default() },
            AlertSettings { min_score: f64::NAN, ..Default::default() },
            AlertSettings { max_per_hour: 0, ..Default::default() },
            AlertSettings { lang: "fr".into(), ..Default::default() },
            AlertSettings { recipients: vec!["a\r\nb@c.d".into()], ..Default::default() },
        ] {
            assert!(bad.validate().is_err(), "{bad:?}");
        }
    }
}
