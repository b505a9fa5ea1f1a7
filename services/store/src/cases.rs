//! What a rights holder does after a match: its profile and licensed sites
//! ([`Holder`]), the takedown notices sent for its matches ([`Notice`]), and the watch
//! over noticed pages that records when they come down ([`RemovalWatch`]).
//!
//! The three are small documents read and written whole, so both backends keep them the
//! same way: one row (document) per record in `case_docs`, holding its JSON, a version
//! for compare-and-set updates and a sequence number for listings ([`CaseStore`]'s three
//! required methods). The typed reads and writes are default methods over those.

use std::borrow::Cow;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use crate::alerts::AlertSettings;
use crate::model::{Outcome, Timestamp};
use crate::traits::StoreResult;
use crate::watched::{self, NewWatchedSite, Visit, WatchedSite};
use crate::StoreError;

/// The kinds of case documents.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum DocKind {
    /// A holder's profile and licensed sites, keyed by owner.
    Holder,
    /// A takedown notice, keyed by its idempotency key.
    Notice,
    /// The removal watch of one page, keyed by the page id.
    Watch,
    /// A match alerted to a holder, keyed by `<owner>/<match id>` (the alerts'
    /// de-duplication, [`crate::AlertOutbox`]).
    Alert,
    /// A holder's alert queue, keyed by owner ([`crate::AlertQueue`]).
    AlertQueue,
    /// A watched site ([`crate::WatchedSite`]), keyed by its id.
    WatchedSite,
}

impl DocKind {
    /// Stable name used in both databases.
    pub fn as_str(self) -> &'static str {
        match self {
            DocKind::Holder => "holder",
            DocKind::Notice => "notice",
            DocKind::Watch => "watch",
            DocKind::Alert => "alert",
            DocKind::AlertQueue => "alert_queue",
            DocKind::WatchedSite => "watched_site",
        }
    }
}

/// One stored case document.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredDoc {
    /// Its natural key within the kind.
    pub key: String,
    /// Sequence number given at insertion (ascending; the order of listings).
    pub seq: i64,
    /// The owner it belongs to (listings filter on it).
    pub owner: String,
    /// Version: 1 when inserted, +1 per update.
    pub version: u64,
    /// The record, as JSON.
    pub json: String,
}

/// Largest case document kept (a notice lists at most [`MAX_NOTICE_MATCHES`] matches; a
/// watch keeps at most [`MAX_WATCH_EVENTS`] transitions).
pub const MAX_DOC_BYTES: usize = 1 << 20;
/// Most matches one notice gathers.
pub const MAX_NOTICE_MATCHES: usize = 500;
/// Most transitions a watch keeps (the oldest go first; the first removal time stays).
pub const MAX_WATCH_EVENTS: usize = 100;
/// Most licensed domains of one holder.
pub const MAX_LICENSED: usize = 1000;
/// Most rights documents of one holder.
pub const MAX_DOCUMENTS: usize = 100;

/// A rights holder's contact details, as a notice states them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct HolderProfile {
    /// Legal name (权利人名称).
    pub legal_name: String,
    /// Contact person.
    pub contact_person: String,
    /// Postal address.
    pub address: String,
    /// Phone.
    pub phone: String,
    /// E-mail.
    pub email: String,
}

/// A document proving the holder's rights (a licence, a registration certificate),
/// stored as an evidence file under its SHA-256.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HolderDocument {
    /// File name, as uploaded.
    pub name: String,
    /// SHA-256 of the bytes (lower-case hex), the evidence file's name.
    pub sha256: String,
    /// Media type.
    pub media_type: String,
    /// Size in bytes.
    pub size: u64,
    /// When it was uploaded.
    pub uploaded_at: Timestamp,
    /// Who uploaded it.
    pub uploaded_by: String,
}

/// A domain allowed to carry the holder's works (or one work's): its own sites and its
/// partners'. A page is on it when its host is the domain or a subdomain of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LicensedDomain {
    /// The domain, lower-case, without scheme, port or path.
    pub domain: String,
    /// Only this work (`None`: every work of the holder).
    #[serde(default)]
    pub work_id: Option<i64>,
    /// When it was added.
    pub added_at: Timestamp,
    /// Who added it.
    pub added_by: String,
}

impl LicensedDomain {
    /// Does this entry license `host` for `work_id`?
    pub fn covers(&self, host: &str, work_id: i64) -> bool {
        self.work_id.is_none_or(|w| w == work_id) && host_in_domain(host, &self.domain)
    }
}

/// Is `host` the domain `domain` or one of its subdomains? (Both lower-case.)
pub fn host_in_domain(host: &str, domain: &str) -> bool {
    let host = host.trim_end_matches('.');
    host == domain || host.strip_suffix(domain).is_some_and(|rest| rest.ends_with('.'))
}

/// Normalise a domain as entered (`https://Www.Example.com/x` -> `www.example.com`):
/// `None` when it is not a plausible host name.
pub fn normalize_domain(input: &str) -> Option<String> {
    let s = input.trim().to_lowercase();
    let s = s.split_once("://").map_or(s.as_str(), |(_, rest)| rest);
    let s = s.split(['/', '?', '#']).next().unwrap_or("");
    let s = s.rsplit_once('@').map_or(s, |(_, h)| h);
    let s = match s.rsplit_once(':') {
        Some((h, port)) if port.chars().all(|c| c.is_ascii_digit()) => h,
        _ => s,
    };
    let s = s.trim_end_matches('.');
    let ok = !s.is_empty()
        && s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || !c.is_ascii())
        });
    ok.then(|| s.to_owned())
}

/// A rights holder: who it is, what proves its rights, where its works may appear, and
/// how it is told of new matches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Holder {
    /// The owner name its works and API keys carry.
    pub owner: String,
    /// Contact details.
    #[serde(default)]
    pub profile: HolderProfile,
    /// Documents proving its rights.
    #[serde(default)]
    pub documents: Vec<HolderDocument>,
    /// Domains allowed to carry its works.
    #[serde(default)]
    pub licensed: Vec<LicensedDomain>,
    /// Alerts of new matches by e-mail (off until it has a recipient).
    #[serde(default)]
    pub alerts: AlertSettings,
    /// Version (0: never stored). Updates name the version they read.
    #[serde(default)]
    pub version: u64,
    /// Last change.
    pub updated_at: Timestamp,
    /// Who made it.
    pub updated_by: String,
}

impl Holder {
    /// A holder with nothing recorded yet.
    pub fn empty(owner: &str) -> Self {
        Holder {
            owner: owner.to_owned(),
            profile: HolderProfile::default(),
            documents: Vec::new(),
            licensed: Vec::new(),
            alerts: AlertSettings::default(),
            version: 0,
            updated_at: Timestamp(0),
            updated_by: String::new(),
        }
    }

    /// Is a match of `work_id` on `host` licensed?
    pub fn licenses(&self, host: &str, work_id: i64) -> bool {
        self.licensed.iter().any(|l| l.covers(host, work_id))
    }
}

/// Where a notice is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NoticeState {
    /// Written, not sent.
    Draft,
    /// Handed to the SMTP server; the outcome is not recorded yet. A notice left here
    /// (the process died mid-send) is never sent again automatically: an operator
    /// checks the mailbox for its Message-ID and records the outcome.
    Sending,
    /// Accepted by the SMTP server.
    Sent,
    /// Exported to be sent by hand.
    Exported,
    /// Withdrawn before sending.
    Cancelled,
}

impl NoticeState {
    /// Every state.
    pub const ALL: [NoticeState; 5] =
        [NoticeState::Draft, NoticeState::Sending, NoticeState::Sent, NoticeState::Exported, NoticeState::Cancelled];

    /// Stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            NoticeState::Draft => "draft",
            NoticeState::Sending => "sending",
            NoticeState::Sent => "sent",
            NoticeState::Exported => "exported",
            NoticeState::Cancelled => "cancelled",
        }
    }

    /// Parse [`NoticeState::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        NoticeState::ALL.into_iter().find(|r| r.as_str() == s)
    }

    /// Has the notice gone out (sent, or exported to be sent by hand)?
    pub fn delivered(self) -> bool {
        matches!(self, NoticeState::Sent | NoticeState::Exported)
    }
}

/// A file rendered for a notice (its PDF, its e-mail), stored as an evidence file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NoticeFile {
    /// File name.
    pub name: String,
    /// Media type.
    pub media_type: String,
    /// Size in bytes.
    pub size: u64,
    /// SHA-256 (lower-case hex).
    pub sha256: String,
}

/// A takedown notice: the confirmed matches of one holder on one site, in one document.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Notice {
    /// Id (its sequence number; 0 before it is stored).
    #[serde(default)]
    pub id: i64,
    /// Idempotency key: a second draft with the same key is the same notice.
    pub key: String,
    /// The holder.
    pub owner: String,
    /// The site (host) the matches are on; with [`Notice::sites`], the first of them.
    pub site: String,
    /// Every site of a notice to a hosting provider about several of the sites it serves
    /// (empty: the notice is about `site` alone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sites: Vec<String>,
    /// Language of the document (`zh-CN` or `en`).
    pub lang: String,
    /// Where it is in its life.
    pub state: NoticeState,
    /// The matches it asks to remove.
    pub match_ids: Vec<i64>,
    /// The pages of those matches (what the removal watch follows).
    pub page_ids: Vec<i64>,
    /// The e-mail subject.
    pub subject: String,
    /// Addressee (e-mail), chosen by the reviewer.
    #[serde(default)]
    pub recipient: Option<String>,
    /// Rendered files (PDF, e-mail).
    #[serde(default)]
    pub files: Vec<NoticeFile>,
    /// The notice this one follows up (a second notice after no removal).
    #[serde(default)]
    pub follow_up_of: Option<i64>,
    /// Who drafted it.
    pub created_by: String,
    /// When.
    pub created_at: Timestamp,
    /// The e-mail's Message-ID (fixed when drafted, so a retried send carries the same).
    pub message_id: String,
    /// When it was sent or exported.
    #[serde(default)]
    pub sent_at: Option<Timestamp>,
    /// Who sent or exported it.
    #[serde(default)]
    pub sent_by: Option<String>,
    /// The SMTP server's answer.
    #[serde(default)]
    pub smtp_response: Option<String>,
    /// Version (compare-and-set).
    #[serde(default)]
    pub version: u64,
}

impl Notice {
    /// The sites the notice is about: `sites`, or `site` alone.
    pub fn hosts(&self) -> Vec<&str> {
        if self.sites.is_empty() {
            vec![self.site.as_str()]
        } else {
            self.sites.iter().map(String::as_str).collect()
        }
    }
}

/// The removal state of a watched page.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RemovalState {
    /// Still there, as it was.
    Up,
    /// Changed, but still carries the work (new evidence is captured).
    Changed,
    /// Gone: 404/410, the host gone, or the work's text no longer there.
    Removed,
}

impl RemovalState {
    /// Stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            RemovalState::Up => "up",
            RemovalState::Changed => "changed",
            RemovalState::Removed => "removed",
        }
    }
}

/// One transition of a watched page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemovalEvent {
    /// When the check that saw it ran.
    pub at: Timestamp,
    /// State before (`None`: the first check).
    pub from: Option<RemovalState>,
    /// State after.
    pub to: RemovalState,
    /// HTTP status seen, if any.
    #[serde(default)]
    pub http_status: Option<u16>,
    /// What the check saw.
    pub detail: String,
}

/// The result of one re-check of a page.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemovalCheck {
    /// The page.
    pub page_id: i64,
    /// Its URL.
    pub url: String,
    /// The holder whose matches it carries.
    pub owner: String,
    /// When.
    pub at: Timestamp,
    /// What it found: `None` when the check could not tell (a timeout, a 5xx): the
    /// state stays, the error is kept.
    pub state: Option<RemovalState>,
    /// HTTP status, if any.
    pub http_status: Option<u16>,
    /// What it saw.
    pub detail: String,
    /// The host could not be reached (its name does not resolve, nothing listens), with
    /// `state: None`. One failed connection cannot tell (a DNS or network hiccup must not
    /// tell a holder a page is gone): the watch counts such checks, and the second in a
    /// row is recorded as `removed` ([`CaseStore::record_check`]).
    #[serde(default)]
    pub unreachable: bool,
}

/// A check as recorded: the store's rules applied (a host unreachable at two checks in a
/// row is `removed`), and the transition it made, if any.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecordedCheck {
    /// The check as the watch took it.
    pub check: RemovalCheck,
    /// The transition it made.
    pub event: Option<RemovalEvent>,
}

/// The removal watch of one page: its state, since when, and every transition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RemovalWatch {
    /// The page.
    pub page_id: i64,
    /// Its URL.
    pub url: String,
    /// The holder.
    pub owner: String,
    /// Current state.
    pub state: RemovalState,
    /// Since when (the check that saw the transition).
    pub since: Timestamp,
    /// When it was first seen removed.
    #[serde(default)]
    pub removed_at: Option<Timestamp>,
    /// When it was flagged for a second notice (still up N days after its notice).
    #[serde(default)]
    pub flagged_at: Option<Timestamp>,
    /// The last check.
    pub last_checked_at: Timestamp,
    /// The last check's error, when it could not tell.
    #[serde(default)]
    pub last_error: Option<String>,
    /// Checks in a row that could not reach the host ([`RemovalCheck::unreachable`]).
    #[serde(default)]
    pub unreachable_checks: u32,
    /// Checks made.
    pub checks: u64,
    /// Transitions, oldest first (at most [`MAX_WATCH_EVENTS`]).
    pub events: Vec<RemovalEvent>,
    /// Version (compare-and-set).
    #[serde(default)]
    pub version: u64,
}

/// Holders, notices and removal watches.
///
/// Three methods are the backend's; the typed ones are defaults over them, so both
/// backends share their rules.
#[async_trait]
pub trait CaseStore: Send + Sync {
    /// The document of `kind` under `key`.
    async fn get_doc(&self, kind: DocKind, key: &str) -> StoreResult<Option<StoredDoc>>;
    /// Documents of `kind` (of `owner`, if given) with `seq` greater than `after_seq`,
    /// ascending, at most `limit`.
    async fn list_docs(
        &self,
        kind: DocKind,
        owner: Option<&str>,
        after_seq: i64,
        limit: u32,
    ) -> StoreResult<Vec<StoredDoc>>;
    /// Write a document. `expected == 0`: insert it unless `key` exists (then the stored
    /// one is returned, `Unchanged`). Otherwise replace it if its version is `expected`
    /// (`Updated`, version + 1), else `Conflict`: someone else changed it first.
    async fn put_doc(
        &self,
        kind: DocKind,
        key: &str,
        owner: &str,
        json: &str,
        expected: u64,
    ) -> StoreResult<(StoredDoc, Outcome)>;
    /// Delete the document of `kind` under `key` (only while its version is `expected`,
    /// if given); `true` when one was deleted.
    async fn delete_doc(&self, kind: DocKind, key: &str, expected: Option<u64>) -> StoreResult<bool>;

    /// A watched site by id.
    async fn get_watched_site(&self, id: &str) -> StoreResult<Option<WatchedSite>> {
        self.get_doc(watched::KIND, id).await?.map(|d| decode_watched_site(&d)).transpose()
    }

    /// Watched sites (those that concern `holder`, if given) in the order they were added
    /// (bounded by the number of watched sites).
    async fn list_watched_sites(&self, holder: Option<&str>) -> StoreResult<Vec<WatchedSite>> {
        let mut out = Vec::new();
        let mut after = 0;
        loop {
            // Not by the documents' owner: a site concerns every holder who joined it.
            let page = self.list_docs(watched::KIND, None, after, 500).await?;
            let Some(last) = page.last() else { break };
            after = last.seq;
            for d in &page {
                let site = decode_watched_site(d)?;
                if holder.is_none_or(|h| site.concerns(h)) {
                    out.push(site);
                }
            }
        }
        Ok(out)
    }

    /// Add or update a watched site, idempotent: keyed by its id (by default the host of
    /// its entry points), an existing site is updated (entry points kept keep their
    /// schedule state; `Unchanged` when nothing differs). A holder the site does not
    /// concern yet joins it (its definition is added to the others', nothing dropped). An
    /// id naming a site of another host is a `Conflict`. Retried on a concurrent change.
    async fn put_watched_site(
        &self,
        new: &NewWatchedSite,
        by: &str,
        at: Timestamp,
    ) -> StoreResult<(WatchedSite, Outcome)> {
        let checked = watched::check_site(new)?;
        let what = || format!("watched site {}", checked.id);
        let (answer, written) = retry_cas(self, watched::KIND, &checked.id, what, |doc| {
            let current = doc.map(decode_watched_site).transpose()?;
            let site = watched::merge_checked(&checked, new, current.as_ref(), by, at)?;
            if let Some(c) = current {
                let same = WatchedSite { updated_at: c.updated_at, updated_by: c.updated_by.clone(), ..site.clone() };
                if same == c {
                    return Ok(Cas::Done(Some(c)));
                }
            }
            Ok(Cas::Write { owner: site.owner.clone(), json: to_json(&site)?, version: site.version, answer: None })
        })
        .await?;
        match (answer, written) {
            (_, Some((doc, outcome))) => Ok((decode_watched_site(&doc)?, outcome)),
            (Some(current), None) => Ok((current, Outcome::Unchanged)),
            (None, None) => Err(StoreError::Conflict { what: what(), reason: "neither written nor read".into() }),
        }
    }

    /// Record a visit of the entry point `url` of the watched site `id` (its schedule
    /// state moves on); `false` when the site or the entry point is gone. Retried on a
    /// concurrent change.
    async fn record_visit(&self, id: &str, url: &str, visit: &Visit) -> StoreResult<bool> {
        let (_, written) = retry_cas(
            self,
            watched::KIND,
            id,
            || format!("watched site {id}"),
            |doc| {
                let Some(mut site) = doc.map(decode_watched_site).transpose()? else { return Ok(Cas::Done(())) };
                if !watched::apply_visit(&mut site, url, visit) {
                    return Ok(Cas::Done(()));
                }
                Ok(Cas::Write { owner: site.owner.clone(), json: to_json(&site)?, version: site.version, answer: () })
            },
        )
        .await?;
        Ok(written.is_some())
    }

    /// Stop watching a site for every holder; `true` when it was watched.
    async fn delete_watched_site(&self, id: &str) -> StoreResult<bool> {
        self.delete_doc(watched::KIND, id, None).await
    }

    /// Stop watching a site for `holder`: the site stays for the other holders, and is
    /// deleted when `holder` was the last. Retried on a concurrent change (a holder who
    /// joins while the last one leaves may find the site gone, and adds it again).
    async fn leave_watched_site(&self, id: &str, holder: &str, by: &str, at: Timestamp) -> StoreResult<watched::Left> {
        let (left, _) = retry_cas(
            self,
            watched::KIND,
            id,
            || format!("watched site {id}"),
            |doc| {
                let Some(site) = doc.map(decode_watched_site).transpose()? else {
                    return Ok(Cas::Done(watched::Left::NotWatched));
                };
                if !site.concerns(holder) {
                    return Ok(Cas::Done(watched::Left::NotWatched));
                }
                match watched::without_holder(&site, holder, by, at) {
                    Some(rest) => Ok(Cas::Write {
                        owner: rest.owner.clone(),
                        json: to_json(&rest)?,
                        version: site.version,
                        answer: watched::Left::Left,
                    }),
                    // At the version read: a holder joining meanwhile keeps the site.
                    None => Ok(Cas::Delete { version: site.version, answer: watched::Left::Deleted }),
                }
            },
        )
        .await?;
        Ok(left)
    }

    /// A holder's record (`None`: nothing recorded).
    async fn get_holder(&self, owner: &str) -> StoreResult<Option<Holder>> {
        self.get_doc(DocKind::Holder, owner).await?.map(|d| decode_holder(&d)).transpose()
    }

    /// Every holder with a record, by owner (bounded by the number of holders).
    async fn list_holders(&self) -> StoreResult<Vec<Holder>> {
        let mut out = Vec::new();
        let mut after = 0;
        loop {
            let page = self.list_docs(DocKind::Holder, None, after, 500).await?;
            let Some(last) = page.last() else { break };
            after = last.seq;
            for d in &page {
                out.push(decode_holder(d)?);
            }
        }
        out.sort_by(|a, b| a.owner.cmp(&b.owner));
        Ok(out)
    }

    /// Store a holder's record: `holder.version` is the version it was read at (0: new).
    /// A concurrent change makes this a `Conflict`; read again and retry.
    async fn put_holder(&self, holder: &Holder) -> StoreResult<Holder> {
        validate_holder(holder)?;
        let json = to_json(holder)?;
        let (doc, outcome) = self.put_doc(DocKind::Holder, &holder.owner, &holder.owner, &json, holder.version).await?;
        if holder.version == 0 && outcome == Outcome::Unchanged {
            return Err(StoreError::Conflict {
                what: format!("holder {}", holder.owner),
                reason: "it was created meanwhile; read it again".into(),
            });
        }
        decode_holder(&doc)
    }

    /// Record a new notice, idempotent by `notice.key`: the same key returns the stored
    /// notice (`Unchanged`). Its id is its sequence number.
    async fn create_notice(&self, notice: &Notice) -> StoreResult<(Notice, Outcome)> {
        if notice.match_ids.is_empty() || notice.match_ids.len() > MAX_NOTICE_MATCHES {
            return Err(StoreError::invalid("notice", format!("1 to {MAX_NOTICE_MATCHES} matches")));
        }
        if notice.key.is_empty() || notice.key.len() > 200 {
            return Err(StoreError::invalid("notice key", "1 to 200 bytes"));
        }
        let json = to_json(notice)?;
        let (doc, outcome) = self.put_doc(DocKind::Notice, &notice.key, &notice.owner, &json, 0).await?;
        Ok((decode_notice(&doc)?, outcome))
    }

    /// A notice by id.
    async fn get_notice(&self, id: i64) -> StoreResult<Option<Notice>> {
        if id <= 0 {
            return Ok(None);
        }
        let page = self.list_docs(DocKind::Notice, None, id - 1, 1).await?;
        page.first().filter(|d| d.seq == id).map(decode_notice).transpose()
    }

    /// A notice by idempotency key.
    async fn find_notice(&self, key: &str) -> StoreResult<Option<Notice>> {
        self.get_doc(DocKind::Notice, key).await?.map(|d| decode_notice(&d)).transpose()
    }

    /// Notices (of `owner`, if given) with id greater than `after_id`, ascending.
    async fn list_notices(&self, owner: Option<&str>, after_id: i64, limit: u32) -> StoreResult<Vec<Notice>> {
        self.list_docs(DocKind::Notice, owner, after_id, limit).await?.iter().map(decode_notice).collect()
    }

    /// Store a changed notice read at `notice.version` (compare-and-set): `Conflict` when
    /// it changed meanwhile, so two senders never both move it to `sending`.
    async fn update_notice(&self, notice: &Notice) -> StoreResult<Notice> {
        if notice.version == 0 {
            return Err(StoreError::invalid("notice", "update of a notice never stored"));
        }
        let json = to_json(notice)?;
        let (doc, _) = self.put_doc(DocKind::Notice, &notice.key, &notice.owner, &json, notice.version).await?;
        decode_notice(&doc)
    }

    /// The removal watch of a page.
    async fn get_watch(&self, page_id: i64) -> StoreResult<Option<RemovalWatch>> {
        self.get_doc(DocKind::Watch, &page_id.to_string()).await?.map(|d| decode_watch(&d)).transpose()
    }

    /// Watches (of `owner`, if given) in the order they began, after `after_seq`.
    async fn list_watches(
        &self,
        owner: Option<&str>,
        after_seq: i64,
        limit: u32,
    ) -> StoreResult<Vec<(i64, RemovalWatch)>> {
        self.list_docs(DocKind::Watch, owner, after_seq, limit)
            .await?
            .iter()
            .map(|d| decode_watch(d).map(|w| (d.seq, w)))
            .collect()
    }

    /// Record a re-check of a page: the watch begins at its first check, a change of
    /// state appends a transition, and a check that could not tell keeps the state; a host
    /// unreachable at two checks in a row is a removal. Retried on a concurrent change, so
    /// two checkers never lose a transition. Returns the check as recorded.
    async fn record_check(&self, check: &RemovalCheck) -> StoreResult<RecordedCheck> {
        let key = check.page_id.to_string();
        let what = || format!("removal watch of page {}", check.page_id);
        let (recorded, _) = retry_cas(self, DocKind::Watch, &key, what, |doc| {
            let current = doc.map(decode_watch).transpose()?;
            let (watch, recorded) = apply_check(current, check);
            Ok(Cas::Write {
                owner: check.owner.clone(),
                json: to_json(&watch)?,
                version: watch.version,
                answer: recorded,
            })
        })
        .await?;
        Ok(recorded)
    }

    /// Flag a watched page for a second notice, once: `false` when it was flagged already
    /// (or is not watched). Retried on a concurrent change (a re-check recorded meanwhile
    /// must not make the flag look set).
    async fn flag_watch(&self, page_id: i64, at: Timestamp) -> StoreResult<bool> {
        let key = page_id.to_string();
        let (_, written) = retry_cas(
            self,
            DocKind::Watch,
            &key,
            || format!("removal watch of page {page_id}"),
            |doc| {
                let Some(mut watch) = doc.map(decode_watch).transpose()? else { return Ok(Cas::Done(())) };
                if watch.flagged_at.is_some() {
                    return Ok(Cas::Done(()));
                }
                watch.flagged_at = Some(at);
                Ok(Cas::Write {
                    owner: watch.owner.clone(),
                    json: to_json(&watch)?,
                    version: watch.version,
                    answer: (),
                })
            },
        )
        .await?;
        Ok(written.is_some())
    }
}

/// What one attempt of [`retry_cas`] decided from the document it read.
pub(crate) enum Cas<T> {
    /// Nothing to write: the answer as it is.
    Done(T),
    /// Write `json` (of `owner`) at `version`, the version read (0: create it); once
    /// written, `answer` is the answer.
    Write { owner: String, json: String, version: u64, answer: T },
    /// Delete the document at `version`, the version read; once deleted, `answer`.
    Delete { version: u64, answer: T },
}

/// The read-modify-write of one document with compare-and-set: read the document of
/// `kind` under `key`, let `step` (a pure rule) decide, write at the version read, and
/// (or delete at it), and start again on a concurrent change (`Conflict`, a document
/// created meanwhile, a delete that found another version),
/// with a short jittered pause, up to 16 times. Returns the answer and, when it wrote,
/// the stored document with the write's outcome. `what` names the document in the error
/// after too many conflicts in a row.
pub(crate) async fn retry_cas<S, T, F>(
    store: &S,
    kind: DocKind,
    key: &str,
    what: impl Fn() -> String + Send,
    mut step: F,
) -> StoreResult<(T, Option<(StoredDoc, Outcome)>)>
where
    S: CaseStore + ?Sized,
    T: Send,
    F: FnMut(Option<&StoredDoc>) -> StoreResult<Cas<T>> + Send,
{
    const ATTEMPTS: u32 = 16;
    for attempt in 0..ATTEMPTS {
        if attempt > 0 {
            backoff(attempt).await;
        }
        let current = store.get_doc(kind, key).await?;
        let (owner, json, version, answer) = match step(current.as_ref())? {
            Cas::Done(answer) => return Ok((answer, None)),
            Cas::Write { owner, json, version, answer } => (owner, json, version, answer),
            Cas::Delete { version, answer } => {
                if store.delete_doc(kind, key, Some(version)).await? {
                    return Ok((answer, None));
                }
                continue; // changed or deleted meanwhile
            }
        };
        match store.put_doc(kind, key, &owner, &json, version).await {
            Ok((_, Outcome::Unchanged)) if version == 0 => continue, // created meanwhile
            Ok(written) => return Ok((answer, Some(written))),
            Err(StoreError::Conflict { .. }) => continue,
            Err(e) => return Err(e),
        }
    }
    Err(StoreError::Conflict { what: what(), reason: format!("changed by others {ATTEMPTS} times in a row") })
}

/// A short, jittered pause before trying a compare-and-set again (up to ~64 ms), so
/// concurrent writers of one document spread out instead of colliding again.
async fn backoff(attempt: u32) {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.subsec_nanos());
    let ceiling = 1u64 << attempt.min(6);
    tokio::time::sleep(std::time::Duration::from_millis(u64::from(nanos) % ceiling + 1)).await;
}

/// The watch after `check`, and the check as recorded with the transition it made.
fn apply_check(current: Option<RemovalWatch>, check: &RemovalCheck) -> (RemovalWatch, RecordedCheck) {
    let unreachable_checks = match &current {
        Some(w) if check.unreachable => w.unreachable_checks.saturating_add(1),
        None if check.unreachable => 1,
        _ => 0,
    };
    let check = if check.unreachable && unreachable_checks >= 2 {
        Cow::Owned(RemovalCheck {
            state: Some(RemovalState::Removed),
            detail: format!("host gone, unreachable at two checks in a row: {}", check.detail),
            ..check.clone()
        })
    } else {
        Cow::Borrowed(check)
    };
    let (mut w, event) = transition(current, &check);
    w.unreachable_checks = unreachable_checks;
    (w, RecordedCheck { check: check.into_owned(), event })
}

/// The watch after `check` (the store's rules applied), and the transition it made.
fn transition(current: Option<RemovalWatch>, check: &RemovalCheck) -> (RemovalWatch, Option<RemovalEvent>) {
    let Some(mut w) = current else {
        let state = check.state.unwrap_or(RemovalState::Up);
        let event = RemovalEvent {
            at: check.at,
            from: None,
            to: state,
            http_status: check.http_status,
            detail: check.detail.clone(),
        };
        let watch = RemovalWatch {
            page_id: check.page_id,
            url: check.url.clone(),
            owner: check.owner.clone(),
            state,
            since: check.at,
            removed_at: (state == RemovalState::Removed).then_some(check.at),
            flagged_at: None,
            last_checked_at: check.at,
            last_error: check.state.is_none().then(|| check.detail.clone()),
            unreachable_checks: 0,
            checks: 1,
            events: vec![event.clone()],
            version: 0,
        };
        return (watch, Some(event));
    };
    w.checks += 1;
    w.last_checked_at = w.last_checked_at.max(check.at);
    let Some(state) = check.state else {
        w.last_error = Some(check.detail.clone());
        return (w, None);
    };
    w.last_error = None;
    // `changed` again is news too when the page changed once more (new evidence); the
    // same change seen again (the same detail as the transition that recorded it) is not.
    let moved = state != w.state
        || (state == RemovalState::Changed && w.events.last().is_none_or(|e| e.detail != check.detail));
    if !moved {
        return (w, None);
    }
    let event = RemovalEvent {
        at: check.at,
        from: Some(w.state),
        to: state,
        http_status: check.http_status,
        detail: check.detail.clone(),
    };
    w.state = state;
    w.since = check.at;
    if state == RemovalState::Removed && w.removed_at.is_none() {
        w.removed_at = Some(check.at);
    }
    if state != RemovalState::Removed {
        // Back up: the removal did not hold; time to removal counts from the next one.
        w.removed_at = None;
    }
    w.events.push(event.clone());
    if w.events.len() > MAX_WATCH_EVENTS {
        let extra = w.events.len() - MAX_WATCH_EVENTS;
        w.events.drain(..extra);
    }
    (w, Some(event))
}

fn validate_holder(h: &Holder) -> StoreResult<()> {
    if h.owner.trim().is_empty() || h.owner.len() > 200 {
        return Err(StoreError::invalid("holder owner", "1 to 200 bytes"));
    }
    let p = &h.profile;
    for (name, v) in [
        ("legal_name", &p.legal_name),
        ("contact_person", &p.contact_person),
        ("address", &p.address),
        ("phone", &p.phone),
        ("email", &p.email),
    ] {
        if v.len() > 1000 || v.contains(['\r', '\n', '\0']) {
            return Err(StoreError::invalid(format!("holder {name}"), "one line of at most 1000 bytes"));
        }
    }
    if h.licensed.len() > MAX_LICENSED {
        return Err(StoreError::invalid("licensed domains", format!("at most {MAX_LICENSED}")));
    }
    for l in &h.licensed {
        if normalize_domain(&l.domain).as_deref() != Some(l.domain.as_str()) {
            return Err(StoreError::invalid(
                "licensed domain",
                format!("{:?} is not a normalised host name", l.domain),
            ));
        }
    }
    if h.documents.len() > MAX_DOCUMENTS {
        return Err(StoreError::invalid("rights documents", format!("at most {MAX_DOCUMENTS}")));
    }
    h.alerts.validate()
}

fn to_json<T: Serialize>(v: &T) -> StoreResult<String> {
    let json = serde_json::to_string(v).map_err(|e| StoreError::invalid("case document", e.to_string()))?;
    if json.len() > MAX_DOC_BYTES {
        return Err(StoreError::invalid("case document", format!("over {MAX_DOC_BYTES} bytes")));
    }
    Ok(json)
}

fn decode<T: DeserializeOwned>(d: &StoredDoc, what: &str) -> StoreResult<T> {
    serde_json::from_str(&d.json).map_err(|e| StoreError::corrupt(format!("{what} {}", d.key), e))
}

fn decode_holder(d: &StoredDoc) -> StoreResult<Holder> {
    let mut h: Holder = decode(d, "holder")?;
    h.version = d.version;
    Ok(h)
}

fn decode_notice(d: &StoredDoc) -> StoreResult<Notice> {
    let mut n: Notice = decode(d, "notice")?;
    n.id = d.seq;
    n.version = d.version;
    Ok(n)
}

fn decode_watched_site(d: &StoredDoc) -> StoreResult<WatchedSite> {
    let mut w: WatchedSite = decode(d, "watched site")?;
    w.version = d.version;
    Ok(w)
}

fn decode_watch(d: &StoredDoc) -> StoreResult<RemovalWatch> {
    let mut w: RemovalWatch = decode(d, "removal watch")?;
    w.version = d.version;
    Ok(w)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn domains_normalise_and_cover_subdomains() {
        assert_eq!(normalize_domain(" https://WWW.Example.com:8443/a?b ").as_deref(), Some("www.example.com"));
        assert_eq!(normalize_domain("例子.中国").as_deref(), Some("例子.中国"));
        for bad in ["", "a..b", "-a.com", "a b.com", "http://"] {
            assert_eq!(normalize_domain(bad), None, "{bad}");
        }
        assert!(host_in_domain("example.com", "example.com"));
        assert!(host_in_domain("m.example.com", "example.com"));
        assert!(!host_in_domain("badexample.com", "example.com"));
        assert!(!host_in_domain("example.com.evil.net", "example.com"));
        let l = LicensedDomain {
            domain: "partner.cn".into(),
            work_id: Some(7),
            added_at: Timestamp(0),
            added_by: "a".into(),
        };
        assert!(l.covers("www.partner.cn", 7));
        assert!(!l.covers("www.partner.cn", 8));
    }

    fn apply(current: Option<RemovalWatch>, check: &RemovalCheck) -> (RemovalWatch, Option<RemovalEvent>) {
        let (w, recorded) = apply_check(current, check);
        (w, recorded.event)
    }

    fn check(at: i64, state: Option<RemovalState>) -> RemovalCheck {
        RemovalCheck {
            page_id: 1,
            url: "http://x/1".into(),
            owner: "o".into(),
            at: Timestamp(at),
            state,
            http_status: None,
            detail: "d".into(),
            unreachable: false,
        }
    }

    #[test]
    fn checks_record_transitions_only() {
        let (w, e) = apply(None, &check(1, Some(RemovalState::Up)));
        assert_eq!(e.map(|e| e.to), Some(RemovalState::Up));
        let (w, e) = apply(Some(w), &check(2, Some(RemovalState::Up)));
        assert!(e.is_none());
        let (w, e) = apply(Some(w), &check(3, None));
        assert!(e.is_none());
        assert_eq!((w.state, w.last_error.as_deref()), (RemovalState::Up, Some("d")));
        let (w, e) = apply(Some(w), &check(4, Some(RemovalState::Removed)));
        assert_eq!(e.map(|e| (e.from, e.to)), Some((Some(RemovalState::Up), RemovalState::Removed)));
        assert_eq!((w.removed_at, w.since, w.checks), (Some(Timestamp(4)), Timestamp(4), 4));
        let (w, _) = apply(Some(w), &check(5, Some(RemovalState::Removed)));
        assert_eq!(w.removed_at, Some(Timestamp(4)));
        let (w, e) = apply(Some(w), &check(6, Some(RemovalState::Up)));
        assert!(e.is_some());
        assert_eq!((w.removed_at, w.events.len()), (None, 3));
        // A change is news once; the same change seen again is not, another one is.
        let (w, e) = apply(Some(w), &check(7, Some(RemovalState::Changed)));
        assert!(e.is_some());
        let (w, e) = apply(Some(w), &check(8, Some(RemovalState::Changed)));
        assert!(e.is_none());
        let changed_again = RemovalCheck { detail: "other".into(), ..check(9, Some(RemovalState::Changed)) };
        let (w, e) = apply(Some(w), &changed_again);
        assert!(e.is_some());
        assert_eq!((w.state, w.events.len()), (RemovalState::Changed, 5));
    }

    #[test]
    fn an_unreachable_host_is_removed_at_the_second_check_in_a_row() {
        let gone =
            |at| RemovalCheck { unreachable: true, detail: "host unreachable: refused".into(), ..check(at, None) };
        let (w, _) = apply(None, &check(1, Some(RemovalState::Up)));
        // One failed connection cannot tell; a check that reaches the host resets the count.
        let (w, r) = apply_check(Some(w), &gone(2));
        assert_eq!((r.check.state, r.event, w.state, w.unreachable_checks), (None, None, RemovalState::Up, 1));
        let (w, e) = apply(Some(w), &check(3, Some(RemovalState::Up)));
        assert_eq!((e, w.unreachable_checks), (None, 0));
        let (w, _) = apply(Some(w), &gone(4));
        let (w, r) = apply_check(Some(w), &gone(5));
        assert_eq!(r.check.state, Some(RemovalState::Removed));
        assert!(r.check.detail.starts_with("host gone, unreachable at two checks in a row"), "{r:?}");
        assert_eq!(r.event.map(|e| (e.from, e.to)), Some((Some(RemovalState::Up), RemovalState::Removed)));
        assert_eq!((w.state, w.removed_at, w.unreachable_checks), (RemovalState::Removed, Some(Timestamp(5)), 2));
        // Still unreachable: still removed, no new transition.
        let (w, r) = apply_check(Some(w), &gone(6));
        assert_eq!((r.check.state, r.event, w.removed_at), (Some(RemovalState::Removed), None, Some(Timestamp(5))));
    }
}
