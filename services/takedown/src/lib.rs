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
//! This crate is pure data in, data out, plus the SMTP connection: it knows nothing of
//! the stores, the evidence log or the HTTP API, reads no files and fetches no pages
//! (callers hand it the documents, the pages' HTML and the packages' bytes). It must not
//! decide whom to notify or when; that belongs to its callers.

mod error;

pub mod contact;
pub mod mail;
pub mod template;

pub use error::{MailError, TemplateError};
pub use mail::{
    build, message_id_for, send, to_eml, Attachment, MailConfig, OutgoingNotice, SentMail, MAX_MESSAGE_BYTES,
};
pub use template::{
    EvidenceRef, HolderInfo, Lang, LangTemplates, MatchKind, NoticeDocument, NoticeItem, Part, RenderedNotice,
    TemplateSet, TreeHeadRef,
};
