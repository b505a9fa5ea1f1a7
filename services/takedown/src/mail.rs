//! The notice e-mail: building the MIME message, exporting it as `.eml`, and sending it
//! through an SMTP relay with lettre.
//!
//! A message is `multipart/mixed`: a `multipart/alternative` (the text and the html
//! notice, UTF-8) followed by the attachments (the printed notice, the evidence
//! packages). Its Message-ID is chosen by the caller ([`message_id_for`]), so a retried
//! send of the same notice is the same message, and an `X-Zhiwen-Notice` header carries
//! the notice's reference. Everything that could make a message unsendable (a bad
//! address, a header with a line break, too many bytes) is refused before connecting.

use std::time::Duration;

use lettre::message::header::{ContentType, HeaderName, HeaderValue};
use lettre::message::{Attachment as MimeAttachment, Mailbox, MultiPart};
use lettre::{AsyncSmtpTransport, AsyncTransport, Message, Tokio1Executor};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::error::{one_line, MailError};

/// The most bytes of text, html and attachments a notice may carry (before the base64
/// encoding adds a third). Relays commonly refuse messages over 25 MB; evidence packages
/// larger than this are to be linked or sent by hand, not mailed.
pub const MAX_MESSAGE_BYTES: usize = 20 * 1024 * 1024;

/// The header that carries the notice's reference.
pub const NOTICE_HEADER: &str = "X-Zhiwen-Notice";

/// How to reach the relay and whom the mail is from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct MailConfig {
    /// The relay in lettre's URL form: `smtp://host:25` (plain), `smtp://user:pass@host:587?tls=required`
    /// (STARTTLS), `smtps://host:465` (TLS from the start). A path names the EHLO
    /// host (`smtp://host/mail.example.com`). Never logged with its password.
    pub url: String,
    /// The sender (`From`), an address or `Name <address>`.
    pub from: String,
    /// Where replies go, when not to the sender.
    pub reply_to: Option<String>,
    /// The bound on each network step (connect, each command and reply); a whole send
    /// is bounded by ten times this.
    pub timeout_secs: u64,
}

impl Default for MailConfig {
    fn default() -> Self {
        MailConfig {
            url: "smtp://127.0.0.1:25".to_string(),
            from: "zhiwen@localhost".to_string(),
            reply_to: None,
            timeout_secs: 30,
        }
    }
}

impl MailConfig {
    /// The domain of the sender's address (for [`message_id_for`]), if it parses.
    pub fn from_domain(&self) -> Option<String> {
        self.from.parse::<Mailbox>().ok().map(|m| m.email.domain().to_string())
    }

    /// [`MailConfig::url`] with any user name and password replaced by `***`.
    pub fn redacted_url(&self) -> String {
        redact_url(&self.url)
    }
}

/// A file attached to a notice.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attachment {
    /// The file name the recipient sees (any Unicode; encoded as RFC 2231 requires).
    pub filename: String,
    /// The MIME type, e.g. `application/pdf`.
    pub content_type: String,
    /// The content.
    pub bytes: Vec<u8>,
}

/// A notice ready to be mailed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingNotice {
    /// The recipients (at least one between `to` and `cc`).
    pub to: Vec<String>,
    /// Copies.
    pub cc: Vec<String>,
    /// The subject (one line).
    pub subject: String,
    /// The plain-text notice.
    pub text: String,
    /// The html notice.
    pub html: String,
    /// The attached files.
    pub attachments: Vec<Attachment>,
    /// The notice's reference (e.g. `ZW-N-000012`), sent as `X-Zhiwen-Notice`.
    pub reference: String,
    /// The Message-ID, `<...@...>` ([`message_id_for`]).
    pub message_id: String,
}

impl OutgoingNotice {
    /// Bytes of text, html and attachments (what [`MAX_MESSAGE_BYTES`] bounds).
    pub fn content_bytes(&self) -> usize {
        self.text.len() + self.html.len() + self.attachments.iter().map(|a| a.bytes.len()).sum::<usize>()
    }
}

/// A message the relay accepted.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SentMail {
    /// The Message-ID it was sent with.
    pub message_id: String,
    /// The relay's reply, e.g. `250 OK queued as 4F2A1`.
    pub accepted_by: String,
}

/// The Message-ID of a notice: `<zhiwen-notice-{24 hex digits of SHA-256(notice_key)}@{from_domain}>`.
/// The same key gives the same id, so a retried send (or a resend by hand of the
/// exported `.eml`) is recognisable as the same message.
pub fn message_id_for(notice_key: &str, from_domain: &str) -> String {
    message_id_of("notice", notice_key, from_domain)
}

/// The Message-ID of a `kind` of message (`notice`, `alert`) whose identity is `key`:
/// `<zhiwen-{kind}-{24 hex digits of SHA-256(key)}@{from_domain}>`, the same for the
/// same key. `kind` is ASCII letters (anything else is left out).
pub fn message_id_of(kind: &str, key: &str, from_domain: &str) -> String {
    let kind: String = kind.chars().filter(char::is_ascii_alphanumeric).collect();
    let digest = hex::encode(Sha256::digest(key.as_bytes()));
    let domain: String = from_domain
        .trim()
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-'))
        .collect::<String>()
        .to_ascii_lowercase();
    let domain = if domain.is_empty() { "localhost".to_string() } else { domain };
    format!("<zhiwen-{kind}-{}@{domain}>", &digest[..24])
}

/// Build the MIME message of `notice` from `config`'s sender. Refuses bad addresses, no
/// recipient, header values with line breaks, unusable attachments and a message over
/// [`MAX_MESSAGE_BYTES`].
pub fn build(config: &MailConfig, notice: &OutgoingNotice) -> Result<Message, MailError> {
    let bytes = notice.content_bytes();
    if bytes > MAX_MESSAGE_BYTES {
        return Err(MailError::TooLarge { bytes, limit: MAX_MESSAGE_BYTES });
    }
    if notice.to.is_empty() && notice.cc.is_empty() {
        return Err(MailError::NoRecipient);
    }
    let subject = header_text("subject", &notice.subject)?;
    let reference = header_text("notice reference", &notice.reference)?;
    check_message_id(&notice.message_id)?;

    let mut builder = Message::builder()
        .from(mailbox("from", &config.from)?)
        .subject(subject)
        .message_id(Some(notice.message_id.clone()))
        .date_now()
        .raw_header(HeaderValue::new(HeaderName::new_from_ascii_str(NOTICE_HEADER), reference.to_string()));
    if let Some(reply_to) = config.reply_to.as_deref().filter(|r| !r.trim().is_empty()) {
        builder = builder.reply_to(mailbox("reply-to", reply_to)?);
    }
    for to in &notice.to {
        builder = builder.to(mailbox("to", to)?);
    }
    for cc in &notice.cc {
        builder = builder.cc(mailbox("cc", cc)?);
    }

    let mut body =
        MultiPart::mixed().multipart(MultiPart::alternative_plain_html(notice.text.clone(), notice.html.clone()));
    for attachment in &notice.attachments {
        check_filename(&attachment.filename)?;
        let content_type = ContentType::parse(&attachment.content_type).map_err(|e| {
            MailError::Invalid(format!(
                "attachment {:?}: bad content type {:?}: {}",
                attachment.filename,
                attachment.content_type,
                one_line(e)
            ))
        })?;
        body = body
            .singlepart(MimeAttachment::new(attachment.filename.clone()).body(attachment.bytes.clone(), content_type));
    }
    builder.multipart(body).map_err(|e| MailError::Build(one_line(e)))
}

/// The message as an RFC 5322 `.eml` file (CRLF line ends), to be sent by hand.
pub fn to_eml(message: &Message) -> Vec<u8> {
    message.formatted()
}

/// Build and send `notice` through `config`'s relay. The message is checked in full
/// ([`build`]) before any connection is made. Each network step is bounded by
/// `timeout_secs`, the whole send by ten times that.
pub async fn send(config: &MailConfig, notice: &OutgoingNotice) -> Result<SentMail, MailError> {
    let message = build(config, notice)?;
    let url = config.redacted_url();
    let secs = config.timeout_secs.max(1);
    let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(&config.url)
        .map_err(|e| MailError::Config { url: url.clone(), reason: error_chain(&e) })?
        .timeout(Some(Duration::from_secs(secs)))
        .build();
    let recipients = message.envelope().to().len();
    tracing::debug!(%url, message_id = %notice.message_id, recipients, "sending notice");
    let sent = tokio::time::timeout(Duration::from_secs(secs.saturating_mul(10)), transport.send(message)).await;
    match sent {
        Err(_) => {
            tracing::warn!(%url, message_id = %notice.message_id, secs, "notice send timed out");
            Err(MailError::Timeout { url, secs: secs.saturating_mul(10) })
        }
        Ok(Err(e)) => {
            let permanent = e.is_permanent();
            let reason = error_chain(&e);
            tracing::warn!(%url, message_id = %notice.message_id, permanent, %reason, "notice send failed");
            Err(MailError::Smtp { url, reason, permanent })
        }
        Ok(Ok(response)) => {
            let text = response.message().collect::<Vec<_>>().join(" ");
            let accepted_by = one_line(format!("{} {text}", response.code()));
            tracing::info!(%url, message_id = %notice.message_id, %accepted_by, "notice sent");
            Ok(SentMail { message_id: notice.message_id.clone(), accepted_by })
        }
    }
}

fn mailbox(field: &'static str, address: &str) -> Result<Mailbox, MailError> {
    address.trim().parse::<Mailbox>().map_err(|e| MailError::Address {
        field,
        address: address.to_string(),
        reason: one_line(e),
    })
}

/// A header value: trimmed, non-empty, with no line break or other control character.
fn header_text<'a>(what: &str, value: &'a str) -> Result<&'a str, MailError> {
    let value = value.trim();
    if value.is_empty() {
        return Err(MailError::Invalid(format!("the {what} is empty")));
    }
    if value.chars().any(|c| c.is_control()) {
        return Err(MailError::Invalid(format!("the {what} contains a line break or control character")));
    }
    Ok(value)
}

/// `<left@right>`, printable ASCII, no spaces, at most 250 characters.
fn check_message_id(id: &str) -> Result<(), MailError> {
    let ok = id.len() <= 250
        && id.starts_with('<')
        && id.ends_with('>')
        && id.bytes().all(|b| b.is_ascii_graphic())
        && id[1..id.len() - 1].split_once('@').is_some_and(|(l, r)| {
            !l.is_empty() && !r.is_empty() && !r.contains('@') && !l.contains(['<', '>']) && !r.contains(['<', '>'])
        });
    if ok {
        Ok(())
    } else {
        Err(MailError::Invalid(format!("bad Message-ID {id:?} (expected <left@right>)")))
    }
}

fn check_filename(name: &str) -> Result<(), MailError> {
    if name.trim().is_empty() || name.len() > 255 || name.chars().any(|c| c.is_control() || c == '/' || c == '\\') {
        return Err(MailError::Invalid(format!(
            "attachment file name {name:?} is empty, too long or has a path separator or control character"
        )));
    }
    Ok(())
}

/// An error and its causes on one line (lettre's own message often leaves the cause,
/// e.g. "connection refused", to its source).
fn error_chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut parts = vec![e.to_string()];
    let mut cause = e.source();
    while let Some(c) = cause {
        let text = c.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        cause = c.source();
    }
    one_line(parts.join(": "))
}

fn redact_url(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else {
        return url.to_string();
    };
    let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
    let (authority, tail) = rest.split_at(end);
    match authority.rsplit_once('@') {
        Some((_, host)) => format!("{scheme}://***@{host}{tail}"),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn notice() -> OutgoingNotice {
        OutgoingNotice {
            to: vec!["abuse@pirate.example".into()],
            cc: vec![],
            subject: "侵权内容删除通知 ZW-N-000001".into(),
            text: "正文".into(),
            html: "<p>正文</p>".into(),
            attachments: vec![Attachment {
                filename: "证据包.zip".into(),
                content_type: "application/zip".into(),
                bytes: vec![0, 1, 2, 255],
            }],
            reference: "ZW-N-000001".into(),
            message_id: message_id_for("ZW-N-000001", "zhiwen.test"),
        }
    }

    #[test]
    fn message_ids_are_deterministic_per_key() {
        let a = message_id_for("notice/12", "Zhiwen.Test");
        assert_eq!(a, message_id_for("notice/12", "zhiwen.test"));
        assert_ne!(a, message_id_for("notice/13", "zhiwen.test"));
        assert!(a.starts_with("<zhiwen-notice-") && a.ends_with("@zhiwen.test>"), "{a}");
        assert_eq!(a.len(), "<zhiwen-notice-".len() + 24 + "@zhiwen.test>".len());
        assert!(check_message_id(&a).is_ok());
        // Nothing from the domain argument can break the header.
        assert_eq!(message_id_for("k", "a>\r\nBcc: x@y"), message_id_for("k", "abccxy"));
        assert!(message_id_for("k", "").ends_with("@localhost>"));
    }

    #[test]
    fn the_eml_is_multipart_with_the_given_id_and_reference() {
        let eml = to_eml(&build(&MailConfig::default(), &notice()).expect("builds"));
        let text = String::from_utf8(eml).expect("ASCII");
        for needle in [
            "From: zhiwen@localhost\r\n",
            "To: abuse@pirate.example\r\n",
            "X-Zhiwen-Notice: ZW-N-000001\r\n",
            &format!("Message-ID: {}\r\n", message_id_for("ZW-N-000001", "zhiwen.test")),
            "Content-Type: multipart/mixed;",
            "Content-Type: multipart/alternative;",
            "Content-Type: text/plain; charset=utf-8",
            "Content-Type: text/html; charset=utf-8",
            "filename*0*=utf-8''%E8%AF%81%E6%8D%AE%E5%8C%85.zip",
            "Date: ",
        ] {
            assert!(text.contains(needle), "the message lacks {needle:?}:\n{text}");
        }
        assert!(text.is_ascii(), "every header and body is encoded");
    }

    #[test]
    fn bad_input_is_a_typed_error_naming_it() {
        let config = MailConfig { from: "not an address".into(), ..MailConfig::default() };
        match build(&config, &notice()) {
            Err(MailError::Address { field: "from", address, .. }) => assert_eq!(address, "not an address"),
            other => panic!("{other:?}"),
        }
        let mut n = notice();
        n.cc.push("x@@y".into());
        assert!(matches!(build(&MailConfig::default(), &n), Err(MailError::Address { field: "cc", .. })));
        let mut n = notice();
        n.to.clear();
        assert!(matches!(build(&MailConfig::default(), &n), Err(MailError::NoRecipient)));
        let mut n = notice();
        n.message_id = "no-brackets@x".into();
        assert!(matches!(build(&MailConfig::default(), &n), Err(MailError::Invalid(_))));
        let mut n = notice();
        n.attachments[0].filename = "../etc/passwd".into();
        assert!(matches!(build(&MailConfig::default(), &n), Err(MailError::Invalid(_))));
        let mut n = notice();
        n.attachments[0].content_type = "not a type".into();
        assert!(matches!(build(&MailConfig::default(), &n), Err(MailError::Invalid(_))));
    }

    #[test]
    fn urls_are_shown_without_credentials() {
        assert_eq!(redact_url("smtp://user:pa@ss@host:587?tls=required"), "smtp://***@host:587?tls=required");
        assert_eq!(redact_url("smtps://host:465"), "smtps://host:465");
        assert_eq!(MailConfig::default().from_domain().as_deref(), Some("localhost"));
    }
}
