//! Takedown notices: what a notice says, where it goes, and sending it.
//!
//! - [`template`]: the notice templates as data an admin may edit ([`TemplateSet`]): a
//!   zh-CN notice with what 《信息网络传播权保护条例》第十四条 requires and an English
//!   notice with the elements of 17 U.S.C. 512(c)(3)(A), each as a subject, a plain text
//!   and a printable, self-contained HTML page, rendered from a [`NoticeDocument`].
//! - [`contact`]: the addresses a notice could go to, suggested from the site's
//!   `security.txt`, its pages and the conventional `abuse@` mailbox.
//! - [`mail`]: the MIME message (text, html and the evidence attachments, with a
//!   deterministic Message-ID so a retried send is the same message), its `.eml` export,
//!   and the SMTP send through the configured relay.
//!
//! - [`alerts`]: e-mails to a holder about its new matches (immediate within an hourly
//!   limit, or a daily digest), de-duplicated through the store's alert outbox, rendered
//!   like the notices and sent through the same relay.
//!
//! - [`service`]: the case layer over them ([`Notices`]): drafting a notice from a
//!   holder's confirmed matches on a site with their evidence, sending it at most once,
//!   exporting it to send by hand, suggesting addresses; it reads the stores and the
//!   evidence log.
//!
//! The first three are pure data in, data out, plus the SMTP connection: they know
//! nothing of the stores, the evidence log or the HTTP API, read no files and fetch no
//! pages. Deciding what goes in a notice, and when it is sent, is the service's; the
//! HTTP API and the command line drive it.

mod error;

pub mod alerts;
pub mod contact;
pub mod mail;
pub mod service;
pub mod template;

pub use alerts::{AlertConfig, AlertReport, Alerts, NewMatchAlert};
pub use error::{MailError, NoticeError, TemplateError};
pub use mail::{
    build, message_id_for, message_id_of, send, to_eml, Attachment, MailConfig, OutgoingNotice, SentMail,
    MAX_MESSAGE_BYTES,
};
pub use service::{reference, DraftRequest, NoticeConfig, Notices};
pub use template::{
    EvidenceRef, HolderInfo, Lang, LangTemplates, MatchKind, NoticeDocument, NoticeItem, Part, RenderedNotice,
    TemplateSet, TreeHeadRef,
};
