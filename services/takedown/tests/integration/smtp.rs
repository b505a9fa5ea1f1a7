//! Sending a notice to a real SMTP server (aiosmtpd on loopback, started by the test
//! kit) and reading back what it stored; and the failures that must come back as typed
//! errors without touching a server.

use std::net::TcpListener;

use mail_parser::{MessageParser, MimeHeaders};
use zhiwen_takedown::{
    message_id_for, send, Attachment, Lang, MailConfig, MailError, NoticeDocument, OutgoingNotice, TemplateSet,
    MAX_MESSAGE_BYTES,
};
use zhiwen_testkit::smtp::SmtpServer;

const PDF_NAME: &str = "侵权通知书 ZW-N-000001（第一次）.pdf";
const ZIP_NAME: &str = "ZW-N-000001-evidence.zip";

/// Bytes that resemble a PDF and cover every byte value (so a transfer encoding that
/// loses bytes, or treats the content as text, is caught).
fn pdf_bytes() -> Vec<u8> {
    let mut bytes = b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog >>\nendobj\n".to_vec();
    bytes.extend((0..=255u8).cycle().take(70_000));
    bytes.extend_from_slice(b"\r\n\r\n.\r\n..\r\nstream\r\n\n%%EOF\n");
    bytes
}

fn zip_bytes() -> Vec<u8> {
    let mut bytes = b"PK\x03\x04\x14\x00\x00\x00\x08\x00".to_vec();
    // A deterministic, incompressible-looking body.
    let mut x: u32 = 0x9e37_79b9;
    for _ in 0..50_000 {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        bytes.push((x >> 24) as u8);
    }
    bytes.extend_from_slice(b"PK\x05\x06\x00\x00\x00\x00\x01\x00\x01\x00");
    bytes
}

fn config(url: String) -> MailConfig {
    MailConfig {
        url,
        from: "知文 版权通知 <notices@zhiwen.test>".to_string(),
        reply_to: Some("rights@holder.example".to_string()),
        timeout_secs: 20,
    }
}

fn notice(lang: Lang) -> OutgoingNotice {
    let doc = NoticeDocument::sample(lang);
    let rendered = TemplateSet::defaults().render(&doc).expect("the sample renders");
    OutgoingNotice {
        to: vec!["abuse@pirate.example".to_string(), "站长 <webmaster@pirate.example>".to_string()],
        cc: vec!["rights@holder.example".to_string()],
        subject: rendered.subject,
        text: rendered.text,
        html: rendered.html,
        attachments: vec![
            Attachment {
                filename: PDF_NAME.to_string(),
                content_type: "application/pdf".to_string(),
                bytes: pdf_bytes(),
            },
            Attachment {
                filename: ZIP_NAME.to_string(),
                content_type: "application/zip".to_string(),
                bytes: zip_bytes(),
            },
        ],
        reference: doc.reference.clone(),
        message_id: message_id_for(&format!("notice/{}/attempt-key", doc.reference), "zhiwen.test"),
    }
}

fn lf(s: &str) -> String {
    s.replace("\r\n", "\n").trim_end().to_string()
}

#[tokio::test(flavor = "current_thread")]
async fn a_notice_arrives_intact_at_a_real_smtp_server() {
    let Some(server) = SmtpServer::start() else { return };
    let config = config(server.url());
    let notice = notice(Lang::ZhCn);

    let sent = send(&config, &notice).await.expect("the server accepts the notice");
    assert_eq!(sent.message_id, notice.message_id);
    assert!(sent.accepted_by.starts_with("250"), "the relay's reply: {}", sent.accepted_by);

    let messages = server.messages();
    assert_eq!(messages.len(), 1, "exactly one message stored");
    let raw = &messages[0];
    let message = MessageParser::default().parse(raw).expect("the stored message parses");

    // Envelope as the server saw it (aiosmtpd's trace header): every To and Cc address.
    let rcpt = message.header("X-RcptTo").and_then(|h| h.as_text()).expect("aiosmtpd's X-RcptTo");
    for address in ["abuse@pirate.example", "webmaster@pirate.example", "rights@holder.example"] {
        assert!(rcpt.contains(address), "envelope recipients {rcpt:?} lack {address}");
    }
    let mail_from = message.header("X-MailFrom").and_then(|h| h.as_text()).expect("aiosmtpd's X-MailFrom");
    assert_eq!(mail_from, "notices@zhiwen.test");

    // Headers.
    let from = message.from().and_then(|a| a.first()).expect("From");
    assert_eq!(from.address(), Some("notices@zhiwen.test"));
    assert_eq!(from.name(), Some("知文 版权通知"));
    let to: Vec<&str> = message.to().expect("To").iter().filter_map(|a| a.address()).collect();
    assert_eq!(to, ["abuse@pirate.example", "webmaster@pirate.example"]);
    let cc: Vec<&str> = message.cc().expect("Cc").iter().filter_map(|a| a.address()).collect();
    assert_eq!(cc, ["rights@holder.example"]);
    let reply_to = message.reply_to().and_then(|a| a.first()).and_then(|a| a.address());
    assert_eq!(reply_to, Some("rights@holder.example"));
    assert_eq!(message.subject(), Some(notice.subject.as_str()), "the subject, decoded");
    assert!(notice.subject.contains("侵权内容删除通知"), "a Chinese subject: {}", notice.subject);
    let expected_id = notice.message_id.trim_start_matches('<').trim_end_matches('>');
    assert_eq!(message.message_id(), Some(expected_id));
    assert_eq!(message.header("X-Zhiwen-Notice").and_then(|h| h.as_text()), Some("ZW-N-000001"));
    assert!(message.date().is_some(), "a Date header");

    // Bodies.
    let text = message.body_text(0).expect("a text/plain body");
    assert_eq!(lf(&text), lf(&notice.text));
    let html = message.body_html(0).expect("a text/html body");
    assert_eq!(lf(&html), lf(&notice.html));

    // Attachments: names (RFC 2231 for the Chinese one) and exact bytes.
    let attachments: Vec<_> = message.attachments().collect();
    assert_eq!(attachments.len(), 2, "two attachments");
    let pdf = attachments[0];
    assert_eq!(pdf.attachment_name(), Some(PDF_NAME));
    assert!(pdf.is_content_type("application", "pdf"));
    assert!(pdf.contents() == pdf_bytes().as_slice(), "the PDF's bytes changed in transit");
    let zip = attachments[1];
    assert_eq!(zip.attachment_name(), Some(ZIP_NAME));
    assert!(zip.is_content_type("application", "zip"));
    assert!(zip.contents() == zip_bytes().as_slice(), "the zip's bytes changed in transit");

    // A retried send of the same notice is the same message (same Message-ID).
    send(&config, &notice).await.expect("the retry is accepted");
    let messages = server.messages();
    assert_eq!(messages.len(), 2);
    let retry = MessageParser::default().parse(&messages[1]).expect("parses");
    assert_eq!(retry.message_id(), Some(expected_id));
}

#[tokio::test(flavor = "current_thread")]
async fn an_english_notice_without_attachments_arrives() {
    let Some(server) = SmtpServer::start() else { return };
    let mut notice = notice(Lang::En);
    notice.attachments.clear();
    notice.cc.clear();
    send(&config(server.url()), &notice).await.expect("accepted");
    let messages = server.messages();
    assert_eq!(messages.len(), 1);
    let message = MessageParser::default().parse(&messages[0]).expect("parses");
    assert_eq!(message.subject(), Some(notice.subject.as_str()));
    let text = message.body_text(0).expect("text");
    assert!(text.contains("under penalty of perjury"), "{text}");
    assert_eq!(message.attachments().count(), 0);
}

/// A loopback port that nothing listens on.
fn closed_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    drop(listener);
    port
}

#[tokio::test(flavor = "current_thread")]
async fn a_closed_port_is_a_typed_error() {
    let mut config = config(format!("smtp://user:secret@127.0.0.1:{}", closed_port()));
    config.timeout_secs = 5;
    let err = send(&config, &notice(Lang::ZhCn)).await.expect_err("nothing listens there");
    match &err {
        MailError::Smtp { url, reason, permanent } => {
            assert!(!permanent, "a refused connection may work later: {reason}");
            assert!(!url.contains("secret") && url.contains("***@127.0.0.1"), "{url}");
            assert!(reason.to_lowercase().contains("refused"), "{reason}");
        }
        other => panic!("expected MailError::Smtp, got {other:?}"),
    }
    assert!(!err.to_string().contains("secret"), "the password is never shown: {err}");
}

#[tokio::test(flavor = "current_thread")]
async fn an_oversized_or_misaddressed_notice_is_refused_before_connecting() {
    // A real listener that would see any connection attempt.
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let config = config(format!("smtp://127.0.0.1:{}", listener.local_addr().expect("addr").port()));

    let mut big = notice(Lang::En);
    big.attachments.push(Attachment {
        filename: "huge.zip".to_string(),
        content_type: "application/zip".to_string(),
        bytes: vec![0u8; MAX_MESSAGE_BYTES],
    });
    let err = send(&config, &big).await.expect_err("too large");
    assert!(matches!(err, MailError::TooLarge { limit: MAX_MESSAGE_BYTES, .. }), "{err:?}");

    let mut misaddressed = notice(Lang::En);
    misaddressed.to.push("not an address".to_string());
    let err = send(&config, &misaddressed).await.expect_err("bad address");
    match &err {
        MailError::Address { field, address, .. } => {
            assert_eq!((*field, address.as_str()), ("to", "not an address"));
        }
        other => panic!("expected MailError::Address, got {other:?}"),
    }

    let mut injected = notice(Lang::En);
    injected.subject = "Notice\r\nBcc: everyone@example.com".to_string();
    assert!(matches!(send(&config, &injected).await, Err(MailError::Invalid(_))));

    match listener.accept() {
        Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
        Ok((_, peer)) => panic!("a refused message still connected (from {peer})"),
        Err(e) => panic!("accept: {e}"),
    }
}
