//! E-mail alerts to rights holders about new matches, through the notices' SMTP relay
//! ([`crate::mail`]) and rendered like the notices ([`crate::template`]): zh-CN by
//! default, English when the holder's settings say `en`.
//!
//! A matching task hands its new matches to [`Alerts::on_new_matches`] (the API and the
//! command line install the hook). Each is queued for the holder of its work when its
//! score reaches the holder's threshold, once per (holder, match) ever
//! ([`zhiwen_store::AlertOutbox`] keeps the alerted records and the queue). A holder in
//! `immediate` mode gets an e-mail at once, listing every match waiting, unless its
//! hourly limit is reached: the matches are then held and go out together in the next
//! allowed e-mail ([`Alerts::deliver_held`], called by the worker loop). A holder in
//! `digest` mode gets one e-mail a day ([`Alerts::send_digests`], the daily schedule).
//!
//! Delivery is at most once per e-mail (see [`zhiwen_store::AlertOutbox`]): a batch is
//! taken from the queue before the SMTP conversation; a send that failed for sure puts it
//! back, one whose outcome is unknown is never repeated. The clock is injectable
//! ([`Alerts::with_clock`]), so the rate limit is tested without waiting.

use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use zhiwen_store::{
    AlertBatch, AlertItem, AlertMode, AlertOutbox, BatchKind, BatchStart, Holder, ReviewStatus, Stores, Timestamp,
};

use crate::error::NoticeError;
use crate::mail::{self, MailConfig, OutgoingNotice};
use crate::template::{one_line_subject, render_source, Lang};

/// Result alias.
pub type Result<T> = std::result::Result<T, NoticeError>;

/// The alert e-mail templates, per language: subject, plain text, html.
const TEMPLATES: [(Lang, [&str; 3]); 2] = [
    (
        Lang::ZhCn,
        [
            include_str!("../templates/alert.zh-CN.subject.j2"),
            include_str!("../templates/alert.zh-CN.text.j2"),
            include_str!("../templates/alert.zh-CN.html.j2"),
        ],
    ),
    (
        Lang::En,
        [
            include_str!("../templates/alert.en.subject.j2"),
            include_str!("../templates/alert.en.text.j2"),
            include_str!("../templates/alert.en.html.j2"),
        ],
    ),
];

/// Settings of the alerts beyond the relay's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct AlertConfig {
    /// The dashboard's address, for the link to each match (`<dashboard_url>/matches/<id>`).
    pub dashboard_url: String,
}

impl Default for AlertConfig {
    fn default() -> Self {
        AlertConfig { dashboard_url: "http://127.0.0.1:8080".into() }
    }
}

/// A new match, as a matching task recorded it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct NewMatchAlert {
    /// The match.
    pub match_id: i64,
    /// Its work (whose holder is told).
    pub work_id: i64,
    /// Its score.
    pub score: f64,
}

/// What a call did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct AlertReport {
    /// Matches newly queued.
    pub queued: u64,
    /// E-mails the relay accepted.
    pub emails: u64,
    /// Holders whose waiting matches are held by their rate limit.
    pub held: u64,
    /// E-mails that failed (logged; their matches wait for the next attempt unless the
    /// outcome is unknown).
    pub failed: u64,
}

impl AlertReport {
    fn add(&mut self, other: AlertReport) {
        self.queued += other.queued;
        self.emails += other.emails;
        self.held += other.held;
        self.failed += other.failed;
    }
}

/// The clock alerts read (injectable for tests).
pub type Clock = Arc<dyn Fn() -> Timestamp + Send + Sync>;

/// Alert e-mails to holders.
#[derive(Clone)]
pub struct Alerts {
    stores: Stores,
    mail: MailConfig,
    config: AlertConfig,
    clock: Clock,
}

impl std::fmt::Debug for Alerts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Alerts")
            .field("mail", &self.mail.redacted_url())
            .field("dashboard_url", &self.config.dashboard_url)
            .finish_non_exhaustive()
    }
}

/// One match as an e-mail lists it.
#[derive(Debug, Serialize)]
struct AlertLine {
    title: String,
    url: String,
    score: String,
    link: String,
}

/// What an alert template is rendered with.
#[derive(Debug, Serialize)]
struct AlertDocument {
    lang: Lang,
    holder: String,
    digest: bool,
    day: String,
    min_score: String,
    items: Vec<AlertLine>,
    /// Matches still waiting after this e-mail.
    more: usize,
    subject: String,
}

impl Alerts {
    /// Alerts over `stores`, sent through `mail`, linking to `config.dashboard_url`.
    pub fn new(stores: Stores, mail: MailConfig, config: AlertConfig) -> Self {
        Alerts { stores, mail, config, clock: Arc::new(Timestamp::now) }
    }

    /// The same, reading the time from `clock` (tests move it instead of waiting).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = clock;
        self
    }

    fn now(&self) -> Timestamp {
        (self.clock)()
    }

    /// Queue the alerts of new matches (each for the holder of its work, when its score
    /// reaches the holder's threshold, once per holder and match), then send the
    /// immediate ones the rate limits allow.
    pub async fn on_new_matches(&self, matches: &[NewMatchAlert]) -> Result<AlertReport> {
        self.queue_and_send(matches, true).await
    }

    /// Queue the alerts of new matches as [`Alerts::on_new_matches`] does, without
    /// sending: store writes only, quick enough for a matching task to wait for, so a
    /// process that ends right after its task loses no alert; [`Alerts::deliver_held`]
    /// sends them.
    pub async fn queue_new_matches(&self, matches: &[NewMatchAlert]) -> Result<AlertReport> {
        self.queue_and_send(matches, false).await
    }

    async fn queue_and_send(&self, matches: &[NewMatchAlert], send: bool) -> Result<AlertReport> {
        let now = self.now();
        let mut report = AlertReport::default();
        let mut owners: HashMap<i64, Option<String>> = HashMap::new();
        let mut by_owner: HashMap<String, Vec<&NewMatchAlert>> = HashMap::new();
        for m in matches {
            if let Entry::Vacant(slot) = owners.entry(m.work_id) {
                slot.insert(self.stores.queries.work_summary(m.work_id).await?.map(|w| w.owner));
            }
            if let Some(Some(owner)) = owners.get(&m.work_id) {
                by_owner.entry(owner.clone()).or_default().push(m);
            }
        }
        let mut owners: Vec<_> = by_owner.into_iter().collect();
        owners.sort_by(|a, b| a.0.cmp(&b.0));
        for (owner, found) in owners {
            let Some(holder) = self.stores.cases.get_holder(&owner).await? else { continue };
            let settings = &holder.alerts;
            if !settings.enabled() {
                continue;
            }
            let items: Vec<AlertItem> = found
                .iter()
                .filter(|m| m.score >= settings.min_score)
                .map(|m| AlertItem { match_id: m.match_id, score: m.score, queued_at: now })
                .collect();
            if items.is_empty() {
                continue;
            }
            let queued = self.stores.cases.queue_alerts(&owner, &items).await?;
            report.queued += queued.len() as u64;
            tracing::debug!(%owner, queued = queued.len(), "alerts queued");
            if send && settings.mode == AlertMode::Immediate {
                report.add(self.deliver(&holder, &BatchKind::Immediate { max_per_hour: settings.max_per_hour }).await);
            }
        }
        Ok(report)
    }

    /// Send the matches held by a rate limit whose window has passed (every holder in
    /// `immediate` mode with matches waiting). Cheap when nothing waits: one read of the
    /// holders' queues.
    pub async fn deliver_held(&self) -> Result<AlertReport> {
        let mut report = AlertReport::default();
        for queue in self.stores.cases.alert_queues().await? {
            if queue.pending.is_empty() {
                continue;
            }
            let Some(holder) = self.stores.cases.get_holder(&queue.owner).await? else { continue };
            if holder.alerts.enabled() && holder.alerts.mode == AlertMode::Immediate {
                let kind = BatchKind::Immediate { max_per_hour: holder.alerts.max_per_hour };
                report.add(self.deliver(&holder, &kind).await);
            }
        }
        Ok(report)
    }

    /// Send the digest of `day` (`YYYY-MM-DD`, in the schedule's time zone) to every
    /// holder in `digest` mode with matches waiting: one e-mail per holder and day, also
    /// when this runs again for the same day.
    pub async fn send_digests(&self, day: &str) -> Result<AlertReport> {
        let mut report = AlertReport::default();
        for holder in self.stores.cases.list_holders().await? {
            if holder.alerts.enabled() && holder.alerts.mode == AlertMode::Digest {
                report.add(self.deliver(&holder, &BatchKind::Digest { day: day.to_owned() }).await);
            }
        }
        Ok(report)
    }

    /// Take and send `holder`'s next e-mail of `kind`; failures are logged and counted.
    async fn deliver(&self, holder: &Holder, kind: &BatchKind) -> AlertReport {
        let mut report = AlertReport::default();
        let owner = holder.owner.as_str();
        let batch = match self.stores.cases.begin_alert_batch(owner, kind, self.now()).await {
            Ok(BatchStart::Send(batch)) => batch,
            Ok(BatchStart::Held(until)) => {
                tracing::info!(%owner, until = until.0, "alert e-mail held by the holder's hourly limit");
                report.held += 1;
                return report;
            }
            Ok(BatchStart::Nothing | BatchStart::Busy) => return report,
            Err(e) => {
                tracing::error!(%owner, error = %e, "cannot take the alert queue");
                report.failed += 1;
                return report;
            }
        };
        let number = batch.number;
        match self.send_batch(holder, &batch).await {
            Ok(Some(sent)) => {
                tracing::info!(%owner, batch = number, matches = batch.items.len(), accepted_by = %sent.accepted_by, "alert e-mail sent");
                report.emails += 1;
                if let Err(e) = self.stores.cases.end_alert_batch(owner, number, true).await {
                    tracing::error!(%owner, batch = number, error = %e, "alert e-mail sent but not recorded; it is not sent again");
                }
            }
            Ok(None) => {
                // Every match of the batch is gone or licensed meanwhile: nothing to tell.
                if let Err(e) = self.stores.cases.end_alert_batch(owner, number, true).await {
                    tracing::error!(%owner, batch = number, error = %e, "cannot end an empty alert batch");
                }
            }
            Err(e) => {
                report.failed += 1;
                let surely_not_sent = match &e {
                    NoticeError::Mail(m) => crate::service::not_sent(m),
                    _ => true,
                };
                if surely_not_sent {
                    tracing::warn!(%owner, batch = number, error = %e, "alert e-mail not sent; its matches wait for the next attempt");
                    if let Err(e) = self.stores.cases.end_alert_batch(owner, number, false).await {
                        tracing::error!(%owner, batch = number, error = %e, "cannot put the alert batch back");
                    }
                } else {
                    tracing::error!(%owner, batch = number, error = %e, "alert e-mail outcome unknown; it is not sent again");
                }
            }
        }
        report
    }

    /// Render and send one batch; `None` when none of its matches is stored (and
    /// unlicensed) any more.
    async fn send_batch(&self, holder: &Holder, batch: &AlertBatch) -> Result<Option<mail::SentMail>> {
        let settings = &holder.alerts;
        let lang = Lang::parse(&settings.lang).unwrap_or(Lang::ZhCn);
        let base = self.config.dashboard_url.trim_end_matches('/');
        let mut items = Vec::with_capacity(batch.items.len());
        for item in &batch.items {
            let Some(detail) = self.stores.queries.match_detail(item.match_id).await? else { continue };
            if detail.record.status == ReviewStatus::Licensed {
                // Its domain was licensed after it was queued: not a copy to tell of.
                continue;
            }
            items.push(AlertLine {
                title: detail.work.title.clone(),
                url: detail.url.clone(),
                score: format!("{:.2}", detail.record.score),
                link: format!("{base}/matches/{}", item.match_id),
            });
        }
        if items.is_empty() {
            return Ok(None);
        }
        let more = self.stores.cases.alert_queue(&holder.owner).await?.map_or(0, |q| q.pending.len());
        let name = if holder.profile.legal_name.trim().is_empty() { &holder.owner } else { &holder.profile.legal_name };
        let mut doc = AlertDocument {
            lang,
            holder: name.clone(),
            digest: batch.digest.is_some(),
            day: batch.digest.clone().unwrap_or_default(),
            min_score: format!("{:.2}", settings.min_score),
            items,
            more,
            subject: String::new(),
        };
        let [subject, text, html] = render(&mut doc)?;
        let reference = format!("ZW-A-{:06}", batch.number);
        let domain = self.mail.from_domain().unwrap_or_else(|| "localhost".into());
        let message = OutgoingNotice {
            to: settings.recipients.clone(),
            cc: Vec::new(),
            subject,
            text,
            html,
            attachments: Vec::new(),
            reference,
            message_id: mail::message_id_of("alert", &format!("{}/{}", holder.owner, batch.number), &domain),
        };
        Ok(Some(mail::send(&self.mail, &message).await?))
    }
}

/// The subject, text and html of `doc` (the subject first: the html's title shows it).
fn render(doc: &mut AlertDocument) -> Result<[String; 3]> {
    let subject = one_line_subject(&render_part(doc, 0)?);
    if subject.is_empty() {
        return Err(NoticeError::Invalid("the alert subject renders empty".into()));
    }
    doc.subject = subject.clone();
    Ok([subject, render_part(doc, 1)?, render_part(doc, 2)?])
}

fn render_part(doc: &AlertDocument, part: usize) -> Result<String> {
    let (lang, sources) = TEMPLATES.iter().find(|(l, _)| *l == doc.lang).unwrap_or(&TEMPLATES[0]);
    let kind = ["subject", "text", "html"][part];
    let name = format!("alert.{}.{kind}", lang.as_str());
    Ok(render_source(&name, &format!("alert {} {kind}", lang.as_str()), sources[part], doc)?)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc(lang: Lang, digest: bool) -> AlertDocument {
        AlertDocument {
            lang,
            holder: "金陵出版社".into(),
            digest,
            day: "2026-11-26".into(),
            min_score: "0.80".into(),
            items: vec![AlertLine {
                title: "三国<演义>".into(),
                url: "http://pirate.example/1.html?a=1&b=2".into(),
                score: "0.97".into(),
                link: "http://dash.example/matches/7".into(),
            }],
            more: 2,
            subject: "s".into(),
        }
    }

    #[test]
    fn both_languages_render_every_part() {
        let [subject, text, html] = render(&mut doc(Lang::ZhCn, false)).expect("zh-CN");
        assert!(subject.contains("发现 1 处疑似侵权"), "{subject}");
        assert!(
            text.contains("《三国<演义>》") && text.contains("相似度：0.97") && text.contains("另有 2 处"),
            "{text}"
        );
        assert!(text.contains("http://dash.example/matches/7"));
        assert!(html.contains("三国&lt;演义&gt;") && html.contains("lang=\"zh-CN\""), "{html}");
        let [subject, text, _] = render(&mut doc(Lang::En, true)).expect("en");
        assert!(subject.contains("Daily digest 2026-11-26: 1 new match"), "{subject}");
        assert!(text.contains("Score: 0.97") && text.contains("2 more"), "{text}");
    }
}
