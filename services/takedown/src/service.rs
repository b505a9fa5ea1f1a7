//! Notices as a rights holder's case: drafting one from the confirmed matches of a
//! holder on a site, sending it at most once, exporting it to be sent by hand, and
//! suggesting where it should go. This is the layer that reads the stores and the
//! evidence log; [`crate::template`], [`crate::mail`] and [`crate::contact`] below it
//! stay pure.
//!
//! **At most once.** A notice's Message-ID is fixed when it is drafted. Sending moves it
//! `draft -> sending` (compare-and-set: two senders never both win) before the SMTP
//! conversation and `sending -> sent` after the server accepted it. A send that failed
//! before the server could have accepted anything (bad address, connection refused, a
//! rejection) goes back to `draft`; any other failure, or a crash mid-send, leaves it in
//! `sending`: it is never sent again automatically, and an operator records the outcome
//! after looking for its Message-ID in the mailbox ([`Notices::resolve`]).
//!
//! **Frozen content.** What is rendered at draft time (subject, text, HTML, PDF, the
//! evidence packages) is stored as content-addressed evidence files and is exactly what
//! is sent or exported; the notice record lists their SHA-256.

use std::path::PathBuf;
use std::sync::Arc;

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use zhiwen_capture::EvidenceService;
use zhiwen_ingest::crawler::fetch::{fetch, FetchRules};
use zhiwen_ingest::crawler::{http_client, CrawlConfig};
use zhiwen_store::{
    Holder, MatchCursor, MatchQuery, MatchRow, MatchSort, MatchSortKey, Notice, NoticeFile, NoticeState, Outcome,
    PageParts, ReviewStatus, Stores, Timestamp, MAX_NOTICE_MATCHES,
};

use crate::contact::{suggest, ContactSuggestion};
use crate::error::NoticeError;
use crate::mail::{self, Attachment, MailConfig, OutgoingNotice, MAX_MESSAGE_BYTES};
use crate::template::{
    EvidenceRef, HolderInfo, Lang, MatchKind, NoticeDocument, NoticeItem, Part, TemplateSet, TreeHeadRef,
};

/// [`zhiwen_store::MetaStore`] name of the admin's notice templates (a [`TemplateSet`]
/// as JSON; absent: the defaults).
pub const TEMPLATES_META: &str = "notice_templates";
/// Who the review trail names when a notice moves its matches.
pub const NOTICE_ACTOR_PREFIX: &str = "notice";
/// Largest notice file read back (a PDF, a package).
const MAX_FILE_BYTES: u64 = 64 << 20;
/// Pages of a site read for contact addresses.
const CONTACT_PAGES: u32 = 20;
/// Times one selection of matches may be drafted again after its draft was withdrawn.
const MAX_REDRAFTS: u32 = 100;

/// Result alias.
pub type Result<T> = std::result::Result<T, NoticeError>;

/// How notices are rendered and sent.
#[derive(Debug, Clone, Default)]
pub struct NoticeConfig {
    /// The SMTP relay and sender.
    pub mail: MailConfig,
    /// Chromium, to print the notice as PDF; `None`: no PDF (the HTML is attached).
    pub chromium: Option<PathBuf>,
    /// The crawler's settings, for fetching a site's `security.txt` under its address
    /// policy (contact suggestions).
    pub crawl: CrawlConfig,
}

/// What to draft.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DraftRequest {
    /// The holder.
    pub owner: String,
    /// The site (host).
    pub site: String,
    /// Other sites served by the same hosting provider, in the same notice (one notice
    /// to the provider's abuse address about every site it serves).
    #[serde(default)]
    pub provider_sites: Vec<String>,
    /// The matches (confirmed, of the holder, on the sites); empty: all of them.
    #[serde(default)]
    pub match_ids: Vec<i64>,
    /// The language of the notice.
    pub lang: Lang,
    /// The addressee, if chosen already.
    #[serde(default)]
    pub recipient: Option<String>,
    /// A second notice for the pages of this one still up.
    #[serde(default)]
    pub follow_up_of: Option<i64>,
    /// Who drafts it.
    pub by: String,
}

/// Drafting, sending and exporting notices.
#[derive(Clone)]
pub struct Notices {
    stores: Stores,
    evidence: Option<Arc<EvidenceService>>,
    config: NoticeConfig,
    http: (reqwest::Client, FetchRules),
}

impl std::fmt::Debug for Notices {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Notices").field("mail", &self.config.mail.redacted_url()).finish_non_exhaustive()
    }
}

/// A notice's reference, as the documents and the mail header state it.
pub fn reference(id: i64) -> String {
    format!("ZW-N-{id:06}")
}

impl Notices {
    /// Notices over `stores`, citing the captures of `evidence` (none: notices cite no
    /// capture and attach no package).
    pub fn new(stores: Stores, evidence: Option<Arc<EvidenceService>>, config: NoticeConfig) -> Result<Self> {
        let http = http_client(&config.crawl).map_err(|e| NoticeError::Config(e.to_string()))?;
        Ok(Notices { stores, evidence, config, http })
    }

    /// The settings.
    pub fn config(&self) -> &NoticeConfig {
        &self.config
    }

    /// The templates in force: the admin's, or the defaults.
    pub async fn templates(&self) -> Result<TemplateSet> {
        match self.stores.meta.get_meta(TEMPLATES_META).await? {
            Some(json) => serde_json::from_str(&json)
                .map_err(|e| NoticeError::Corrupt(format!("the stored notice templates do not parse: {e}"))),
            None => Ok(TemplateSet::defaults()),
        }
    }

    /// Replace one part of one language's template; refused (nothing stored) unless it
    /// compiles and renders a complete notice.
    pub async fn set_template(&self, lang: Lang, part: Part, source: &str) -> Result<TemplateSet> {
        let set = self.templates().await?.with_part(lang, part, source)?;
        let json = serde_json::to_string(&set).map_err(|e| NoticeError::Invalid(e.to_string()))?;
        self.stores.meta.put_meta(TEMPLATES_META, &json).await?;
        Ok(set)
    }

    /// Back to the default templates.
    pub async fn reset_templates(&self) -> Result<TemplateSet> {
        let set = TemplateSet::defaults();
        let json = serde_json::to_string(&set).map_err(|e| NoticeError::Invalid(e.to_string()))?;
        self.stores.meta.put_meta(TEMPLATES_META, &json).await?;
        Ok(set)
    }

    /// Draft a notice: idempotent for the same holder, site, language, matches and
    /// follow-up (a retried draft returns the same notice, `Unchanged`).
    pub async fn draft(&self, req: &DraftRequest) -> Result<(Notice, Outcome)> {
        let mut sites = Vec::new();
        for s in std::iter::once(&req.site).chain(&req.provider_sites) {
            let host = zhiwen_store::normalize_domain(s)
                .ok_or_else(|| NoticeError::Invalid(format!("site: {s:?} is not a host name")))?;
            if !sites.contains(&host) {
                sites.push(host);
            }
        }
        if sites.len() > 50 {
            return Err(NoticeError::Invalid("a notice is about at most 50 sites".into()));
        }
        // A follow-up is about the sites of the notice it follows.
        if let Some(first) = req.follow_up_of {
            if let Some(original) = self.stores.cases.get_notice(first).await? {
                if original.owner == req.owner && original.hosts().contains(&sites[0].as_str()) {
                    sites = original.hosts().into_iter().map(str::to_owned).collect();
                }
            }
        }
        let site = sites[0].clone();
        let holder = self.stores.cases.get_holder(&req.owner).await?.unwrap_or_else(|| Holder::empty(&req.owner));
        let missing: Vec<&str> = [
            ("legal_name", &holder.profile.legal_name),
            ("address", &holder.profile.address),
            ("email", &holder.profile.email),
        ]
        .into_iter()
        .filter(|(_, v)| v.trim().is_empty())
        .map(|(k, _)| k)
        .collect();
        if !missing.is_empty() {
            return Err(NoticeError::Incomplete(format!(
                "the profile of {} lacks {} (a notice must state the holder's name, address and contact)",
                req.owner,
                missing.join(", ")
            )));
        }
        let rows = self.notice_rows(req, &sites, &holder).await?;
        let mut ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
        ids.sort_unstable();
        let digest = hex::encode(Sha256::digest(format!("{ids:?}").as_bytes()));
        let mut sorted = sites.clone();
        sorted[1..].sort();
        let first_key = format!(
            "notice:{}:{}:{}:{}:{}",
            req.owner,
            sorted.join(","),
            req.lang.as_str(),
            req.follow_up_of.map_or("first".to_owned(), |n| format!("follow-up-{n}")),
            &digest[..24]
        );
        let domain = self.config.mail.from_domain().unwrap_or_else(|| "zhiwen.invalid".into());
        let mut page_ids: Vec<i64> = rows.iter().map(|r| r.page_id).collect();
        page_ids.sort_unstable();
        page_ids.dedup();
        let mut new = Notice {
            id: 0,
            key: first_key.clone(),
            owner: req.owner.clone(),
            site: site.clone(),
            sites: if sites.len() > 1 { sites.clone() } else { Vec::new() },
            lang: req.lang.as_str().to_owned(),
            state: NoticeState::Draft,
            match_ids: ids,
            page_ids,
            subject: String::new(),
            recipient: req.recipient.clone().filter(|r| !r.trim().is_empty()),
            files: Vec::new(),
            follow_up_of: req.follow_up_of,
            created_by: req.by.clone(),
            created_at: Timestamp::now(),
            message_id: mail::message_id_for(&first_key, &domain),
            sent_at: None,
            sent_by: None,
            smtp_response: None,
            version: 0,
        };
        // The same selection drafted again after its draft was withdrawn is a new draft:
        // the key of the n-th draft of a selection ends in `:redraft-n`, so a retried
        // draft still finds the one it made, and a withdrawn one is never handed back.
        let mut redraft = 0;
        let (notice, outcome) = loop {
            let (notice, outcome) = self.stores.cases.create_notice(&new).await?;
            if notice.state != NoticeState::Cancelled {
                break (notice, outcome);
            }
            redraft += 1;
            if redraft > MAX_REDRAFTS {
                return Err(NoticeError::Conflict(format!(
                    "these matches were drafted and withdrawn {MAX_REDRAFTS} times; choose others"
                )));
            }
            new.key = format!("{first_key}:redraft-{redraft}");
            new.message_id = mail::message_id_for(&new.key, &domain);
        };
        if !notice.files.is_empty() {
            return Ok((notice, outcome));
        }
        // New, or drafted by a run that stopped before its files were stored: render now.
        let rendered = self.render(&notice, &holder, &rows).await?;
        let notice = self.stores.cases.update_notice(&rendered).await?;
        tracing::info!(notice = notice.id, owner = %notice.owner, site = %notice.site, matches = notice.match_ids.len(), files = notice.files.len(), "notice drafted");
        Ok((notice, Outcome::Inserted))
    }

    /// The matches a draft gathers, as listed (work, section, URL, kind, score).
    async fn notice_rows(&self, req: &DraftRequest, sites: &[String], holder: &Holder) -> Result<Vec<MatchRow>> {
        let site = sites.join(", ");
        let status = match req.follow_up_of {
            None => ReviewStatus::Confirmed,
            Some(_) => ReviewStatus::TakedownSent,
        };
        let mut wanted: Vec<i64> = req.match_ids.clone();
        if let Some(first) = req.follow_up_of {
            let original = self
                .stores
                .cases
                .get_notice(first)
                .await?
                .filter(|n| n.owner == req.owner && n.hosts().iter().any(|h| sites.iter().any(|s| s == h)))
                .ok_or_else(|| NoticeError::NotFound(format!("notice {first}")))?;
            if !original.state.delivered() {
                return Err(NoticeError::Conflict(format!("notice {first} was never sent; send it instead")));
            }
            // The follow-up asks again for the pages not seen removed.
            let mut still_up = Vec::new();
            for &page in &original.page_ids {
                let removed = self
                    .stores
                    .cases
                    .get_watch(page)
                    .await?
                    .is_some_and(|w| w.state == zhiwen_store::RemovalState::Removed);
                if !removed {
                    still_up.push(page);
                }
            }
            let mut of_pages = Vec::new();
            for &m in &original.match_ids {
                if let Some(found) = self.stores.matches.get_match(m).await? {
                    if still_up.contains(&found.page_id) && (wanted.is_empty() || wanted.contains(&m)) {
                        of_pages.push(m);
                    }
                }
            }
            if of_pages.is_empty() {
                return Err(NoticeError::NothingToNotice(format!("every page of notice {first} was removed")));
            }
            wanted = of_pages;
        }
        let sort = MatchSort { key: MatchSortKey::Id, descending: false };
        let mut rows = Vec::new();
        for host in sites {
            let q = MatchQuery {
                owner: Some(req.owner.clone()),
                site: Some(host.clone()),
                status: Some(status),
                ..MatchQuery::default()
            };
            let mut after: Option<MatchCursor> = None;
            loop {
                let page = self.stores.queries.query_matches(&q, sort, after, 500).await?;
                let Some(last) = page.last() else { break };
                after = Some(MatchCursor { value: last.id as f64, id: last.id });
                let done = page.len() < 500;
                rows.extend(page.into_iter().filter(|r| wanted.is_empty() || wanted.contains(&r.id)));
                if done || rows.len() > MAX_NOTICE_MATCHES {
                    break;
                }
            }
        }
        rows.sort_by_key(|r| r.id);
        // Never a copy on a domain the holder licensed: a match under an earlier notice
        // keeps its status when its domain is licensed later (the store's rule keeps any
        // other licensed match out of `confirmed`).
        let (licensed, kept): (Vec<MatchRow>, Vec<MatchRow>) =
            rows.into_iter().partition(|r| holder.licenses(&r.site, r.work_id));
        rows = kept;
        if let Some(l) = licensed.iter().find(|l| wanted.contains(&l.id)) {
            return Err(NoticeError::Invalid(format!(
                "match {} is on {}, a domain {} licensed: a licensed copy is never put in a notice",
                l.id, l.site, req.owner
            )));
        }
        if let Some(missing) = wanted.iter().find(|id| !rows.iter().any(|r| r.id == **id)) {
            return Err(NoticeError::Invalid(format!(
                "match {missing} is not a {} match of {} on {site}",
                status.as_str(),
                req.owner
            )));
        }
        if rows.is_empty() {
            return Err(NoticeError::NothingToNotice(format!("{} has no confirmed match on {site}", req.owner)));
        }
        if rows.len() > MAX_NOTICE_MATCHES {
            return Err(NoticeError::Invalid(format!(
                "{} matches; a notice gathers at most {MAX_NOTICE_MATCHES}: choose some",
                rows.len()
            )));
        }
        Ok(rows)
    }

    /// Render `notice` and store its files: the text, the HTML, the PDF (with Chromium)
    /// and one evidence package per match that has a capture.
    async fn render(&self, notice: &Notice, holder: &Holder, rows: &[MatchRow]) -> Result<Notice> {
        let lang = Lang::parse(&notice.lang)?;
        let mut items = Vec::with_capacity(rows.len());
        let mut packages: Vec<(String, Vec<u8>)> = Vec::new();
        for row in rows {
            let captures = self.stores.evidence.captures_of_match(row.id).await?;
            let latest = captures.iter().max_by_key(|c| c.leaf_index);
            if let (Some(c), Some(service)) = (latest, &self.evidence) {
                let details = serde_json::json!({"match_id": row.id, "notice": reference(notice.id)});
                match service.package(c.id, &[], details).await {
                    Ok(zip) => packages.push((format!("evidence-match-{}-capture-{}.zip", row.id, c.id), zip)),
                    Err(e) => {
                        tracing::warn!(match_id = row.id, capture = c.id, error = %e, "no evidence package for the notice")
                    }
                }
            }
            items.push(NoticeItem {
                work_title: row.work_title.clone(),
                work_external_id: row.work_external_id.clone(),
                section_title: if row.section_title.is_empty() {
                    format!("#{}", row.section_ordinal + 1)
                } else {
                    row.section_title.clone()
                },
                url: row.url.clone(),
                first_seen: row.first_seen.rfc3339(),
                kind: match row.kind.as_str() {
                    "identical" => MatchKind::Identical,
                    "near_duplicate" => MatchKind::NearDuplicate,
                    "embedded" => MatchKind::Embedded,
                    _ => MatchKind::Excerpt,
                },
                similarity: row.score,
                evidence: latest
                    .map(|c| EvidenceRef {
                        capture_id: c.id,
                        leaf_index: c.leaf_index,
                        captured_at: c.captured_at.rfc3339(),
                        files: c.files.iter().map(|f| (f.name.clone(), f.sha256.clone())).collect(),
                    })
                    .into_iter()
                    .collect(),
            });
        }
        let tree_head = match &self.evidence {
            Some(service) => service.latest_head().await?.map(|h| TreeHeadRef {
                size: h.head.size,
                root_hash: h.head.root_hash.clone(),
                timestamp: Timestamp(h.head.timestamp_ms).rfc3339(),
                key_fingerprint: h.public_key.clone(),
            }),
            None => None,
        };
        let p = &holder.profile;
        let doc = NoticeDocument {
            lang,
            reference: reference(notice.id),
            date: notice.created_at.rfc3339(),
            holder: HolderInfo {
                legal_name: p.legal_name.clone(),
                contact_person: p.contact_person.clone(),
                address: p.address.clone(),
                phone: p.phone.clone(),
                email: p.email.clone(),
                documents: holder.documents.iter().map(|d| format!("{} (SHA-256 {})", d.name, d.sha256)).collect(),
            },
            site: notice.hosts().join(", "),
            recipient: notice.recipient.clone().unwrap_or_default(),
            items,
            tree_head,
            sender: if p.contact_person.is_empty() { p.legal_name.clone() } else { p.contact_person.clone() },
            second_notice: notice.follow_up_of.is_some(),
            package_names: packages.iter().map(|(n, _)| n.clone()).collect(),
        };
        let rendered = self.templates().await?.render(&doc)?;
        let mut files = vec![
            self.put_file("notice.txt", "text/plain; charset=utf-8", rendered.text.as_bytes()).await?,
            self.put_file("notice.html", "text/html; charset=utf-8", rendered.html.as_bytes()).await?,
        ];
        if let Some(chromium) = &self.config.chromium {
            match zhiwen_ingest::print_html(chromium, &rendered.html).await {
                Ok(pdf) => files.push(self.put_file("notice.pdf", "application/pdf", &pdf).await?),
                Err(e) => {
                    tracing::warn!(notice = notice.id, error = %e, "the notice was not printed; the HTML is attached instead")
                }
            }
        }
        for (name, zip) in &packages {
            files.push(self.put_file(name, "application/zip", zip).await?);
        }
        let mut out = notice.clone();
        out.subject = rendered.subject;
        out.files = files;
        Ok(out)
    }

    async fn put_file(&self, name: &str, media_type: &str, bytes: &[u8]) -> Result<NoticeFile> {
        let sha256 = self.stores.evidence.put_evidence_file(bytes).await?;
        Ok(NoticeFile { name: name.to_owned(), media_type: media_type.to_owned(), size: bytes.len() as u64, sha256 })
    }

    /// The bytes of one of a notice's files.
    pub async fn file(&self, notice: &Notice, name: &str) -> Result<Vec<u8>> {
        let f = notice
            .files
            .iter()
            .find(|f| f.name == name)
            .ok_or_else(|| NoticeError::NotFound(format!("file {name} of notice {}", notice.id)))?;
        self.stores
            .evidence
            .get_evidence_file(&f.sha256, MAX_FILE_BYTES)
            .await?
            .ok_or_else(|| NoticeError::Conflict(format!("{name} of notice {} is no longer kept", notice.id)))
    }

    async fn get(&self, id: i64) -> Result<Notice> {
        self.stores.cases.get_notice(id).await?.ok_or_else(|| NoticeError::NotFound(format!("notice {id}")))
    }

    /// The message as it is (or was) sent: the stored subject, text and HTML, the PDF
    /// (or, without one, the HTML as a file) and as many evidence packages as fit.
    async fn outgoing(&self, notice: &Notice, recipient: &str) -> Result<OutgoingNotice> {
        let text = String::from_utf8_lossy(&self.file(notice, "notice.txt").await?).into_owned();
        let html = String::from_utf8_lossy(&self.file(notice, "notice.html").await?).into_owned();
        let mut budget = MAX_MESSAGE_BYTES.saturating_sub(2 * (text.len() + html.len()) + (64 << 10));
        let mut attachments = Vec::new();
        let reference = reference(notice.id);
        let has_pdf = notice.files.iter().any(|f| f.name == "notice.pdf");
        for f in &notice.files {
            let name = match f.name.as_str() {
                "notice.txt" | "notice.eml" => continue,
                "notice.html" if has_pdf => continue,
                "notice.html" => format!("{reference}.html"),
                "notice.pdf" => format!("{reference}.pdf"),
                other => other.to_owned(),
            };
            if f.size as usize > budget {
                tracing::warn!(notice = notice.id, file = %f.name, "not attached: the message would be too large (the notice lists it)");
                continue;
            }
            budget -= f.size as usize;
            let bytes = self.file(notice, &f.name).await?;
            attachments.push(Attachment { filename: name, content_type: f.media_type.clone(), bytes });
        }
        Ok(OutgoingNotice {
            to: vec![recipient.to_owned()],
            cc: Vec::new(),
            subject: notice.subject.clone(),
            text,
            html,
            attachments,
            reference,
            message_id: notice.message_id.clone(),
        })
    }

    /// Send a drafted notice to `recipient` (or the one chosen at draft). At most once:
    /// a sent notice is returned as it is; one whose send is in progress or unknown is
    /// refused (see the module documentation).
    pub async fn send(&self, id: i64, recipient: Option<&str>, by: &str) -> Result<Notice> {
        let mut notice = self.get(id).await?;
        match notice.state {
            NoticeState::Sent => {
                // A retry after the send: make sure its matches moved (a crash may have
                // come between the two), and answer as the first call did.
                self.mark_matches(&notice).await?;
                return Ok(notice);
            }
            NoticeState::Sending => {
                return Err(NoticeError::Conflict(format!(
                    "notice {id} is being sent, or its send did not finish: look for Message-ID {} in the mailbox, then record the outcome (zhiwen notice resolve {id} --delivered or --not-delivered)",
                    notice.message_id
                )))
            }
            NoticeState::Exported => {
                return Err(NoticeError::Conflict(format!("notice {id} was exported to be sent by hand")))
            }
            NoticeState::Cancelled => return Err(NoticeError::Conflict(format!("notice {id} was cancelled"))),
            NoticeState::Draft => {}
        }
        if notice.files.is_empty() {
            return Err(NoticeError::Conflict(format!("notice {id} was not rendered; draft it again")));
        }
        let to = recipient
            .map(str::to_owned)
            .or_else(|| notice.recipient.clone())
            .filter(|r| !r.trim().is_empty())
            .ok_or_else(|| NoticeError::Invalid("recipient: choose the address to send the notice to".into()))?;
        let outgoing = self.outgoing(&notice, &to).await?;
        // Checked before anything changes: a bad address or an oversized message is the
        // caller's to fix, and the notice stays a draft.
        mail::build(&self.config.mail, &outgoing)?;
        notice.state = NoticeState::Sending;
        notice.recipient = Some(to.clone());
        notice.sent_by = Some(by.to_owned());
        let mut notice = self.stores.cases.update_notice(&notice).await.map_err(|e| match e {
            zhiwen_store::StoreError::Conflict { .. } => {
                NoticeError::Conflict(format!("notice {id} changed meanwhile (another send?); look at it again"))
            }
            other => other.into(),
        })?;
        match mail::send(&self.config.mail, &outgoing).await {
            Ok(sent) => {
                notice.state = NoticeState::Sent;
                notice.sent_at = Some(Timestamp::now());
                notice.smtp_response = Some(sent.accepted_by);
                let notice = self.stores.cases.update_notice(&notice).await?;
                self.mark_matches(&notice).await?;
                tracing::info!(notice = id, to = %to, message_id = %notice.message_id, actor = by, "notice sent");
                Ok(notice)
            }
            Err(e) if not_sent(&e) => {
                notice.state = NoticeState::Draft;
                notice.smtp_response = Some(format!("not sent: {e}"));
                self.stores.cases.update_notice(&notice).await?;
                Err(e.into())
            }
            Err(e) => {
                tracing::error!(notice = id, message_id = %notice.message_id, error = %e, "notice send outcome unknown; left in `sending` for an operator");
                Err(NoticeError::Unknown(format!(
                    "notice {id}: {e}; the server may have accepted it: look for Message-ID {} in the mailbox, then record the outcome (zhiwen notice resolve {id})",
                    notice.message_id
                )))
            }
        }
    }

    /// Record the outcome of a send left in `sending`: delivered (found in the mailbox)
    /// moves it to `sent`, not delivered back to `draft`.
    pub async fn resolve(&self, id: i64, delivered: bool, by: &str) -> Result<Notice> {
        let mut notice = self.get(id).await?;
        if notice.state != NoticeState::Sending {
            return Err(NoticeError::Conflict(format!("notice {id} is {}, not sending", notice.state.as_str())));
        }
        if delivered {
            notice.state = NoticeState::Sent;
            notice.sent_at = Some(Timestamp::now());
            notice.smtp_response = Some(format!("delivery confirmed by {by}"));
        } else {
            notice.state = NoticeState::Draft;
            notice.smtp_response = Some(format!("not delivered, per {by}"));
        }
        let notice = self.stores.cases.update_notice(&notice).await?;
        if delivered {
            self.mark_matches(&notice).await?;
        }
        Ok(notice)
    }

    /// The notice as an `.eml` file to send by hand (to `recipient`, or the one chosen),
    /// and the notice marked exported with its matches under notice. Exporting again
    /// returns the same message.
    pub async fn export(&self, id: i64, recipient: Option<&str>, by: &str) -> Result<(Notice, Vec<u8>)> {
        let mut notice = self.get(id).await?;
        if let Some(eml) = notice.files.iter().find(|f| f.name == "notice.eml").cloned() {
            // A retry after the export: make sure its matches moved (a crash may have come
            // between the two), and answer as the first call did.
            self.mark_matches(&notice).await?;
            return Ok((notice.clone(), self.file(&notice, &eml.name).await?));
        }
        if notice.state != NoticeState::Draft {
            return Err(NoticeError::Conflict(format!(
                "notice {id} is {}; only a draft is exported",
                notice.state.as_str()
            )));
        }
        let to = recipient
            .map(str::to_owned)
            .or_else(|| notice.recipient.clone())
            .filter(|r| !r.trim().is_empty())
            .ok_or_else(|| NoticeError::Invalid("recipient: choose the address the notice is for".into()))?;
        let outgoing = self.outgoing(&notice, &to).await?;
        let eml = mail::to_eml(&mail::build(&self.config.mail, &outgoing)?);
        notice.files.push(self.put_file("notice.eml", "message/rfc822", &eml).await?);
        notice.state = NoticeState::Exported;
        notice.recipient = Some(to);
        notice.sent_at = Some(Timestamp::now());
        notice.sent_by = Some(by.to_owned());
        let notice = self.stores.cases.update_notice(&notice).await?;
        self.mark_matches(&notice).await?;
        Ok((notice, eml))
    }

    /// Withdraw a draft.
    pub async fn cancel(&self, id: i64) -> Result<Notice> {
        let mut notice = self.get(id).await?;
        match notice.state {
            NoticeState::Cancelled => Ok(notice),
            NoticeState::Draft => {
                notice.state = NoticeState::Cancelled;
                Ok(self.stores.cases.update_notice(&notice).await?)
            }
            other => {
                Err(NoticeError::Conflict(format!("notice {id} is {}; only a draft is cancelled", other.as_str())))
            }
        }
    }

    /// Move a delivered notice's matches to `takedown_sent` (idempotent).
    async fn mark_matches(&self, notice: &Notice) -> Result<()> {
        let by = format!("{NOTICE_ACTOR_PREFIX}:{}", reference(notice.id));
        let at = notice.sent_at.unwrap_or_else(Timestamp::now);
        for &m in &notice.match_ids {
            let current = self.stores.matches.get_match(m).await?;
            if current.is_some_and(|c| c.status == ReviewStatus::Confirmed) {
                let note = format!("{} sent to {}", reference(notice.id), notice.recipient.as_deref().unwrap_or("?"));
                self.stores.matches.set_review(m, ReviewStatus::TakedownSent, &by, Some(&note), at).await?;
            }
        }
        Ok(())
    }

    /// Where a notice about `site` could go: its `security.txt` (fetched under the
    /// crawler's address policy), the addresses on its stored pages, `abuse@` its domain.
    pub async fn suggest_contacts(&self, site: &str) -> Result<Vec<ContactSuggestion>> {
        let host = zhiwen_store::normalize_domain(site)
            .ok_or_else(|| NoticeError::Invalid(format!("site: {site:?} is not a host name")))?;
        let mut security_txt = None;
        for scheme in ["https", "http"] {
            let Ok(url) = url::Url::parse(&format!("{scheme}://{host}/.well-known/security.txt")) else { continue };
            let (client, rules) = &self.http;
            if let Ok(f) = fetch(client, &url, rules, |_| async { Ok(()) }).await {
                if f.status == 200 {
                    security_txt = Some(String::from_utf8_lossy(&f.body).into_owned());
                    break;
                }
            }
        }
        let refs = self.stores.pages.list_pages(Some(&host), 0, CONTACT_PAGES).await?;
        let ids: Vec<i64> = refs.iter().map(|p| p.id).collect();
        let pages = self.stores.pages.get_pages(&ids, PageParts::Source).await?;
        let html: Vec<(String, String)> =
            pages.iter().map(|p| (p.url.clone(), String::from_utf8_lossy(&p.body).into_owned())).collect();
        let borrowed: Vec<(&str, &str)> = html.iter().map(|(u, h)| (u.as_str(), h.as_str())).collect();
        Ok(suggest(&host, security_txt.as_deref(), &borrowed))
    }
}

/// Did the send fail before the server could have accepted the message? (Then it is
/// safe to send again.) A timeout or a broken connection mid-conversation is not.
pub(crate) fn not_sent(e: &crate::MailError) -> bool {
    use crate::MailError as E;
    match e {
        E::Smtp { permanent: true, .. } => true,
        E::Smtp { reason, .. } => {
            let r = reason.to_ascii_lowercase();
            r.contains("connection refused") || r.contains("could not connect") || r.contains("failed to lookup")
        }
        E::Timeout { .. } => false,
        _ => true,
    }
}
