//! The notice service end to end on the embedded store: a holder's confirmed matches on a
//! site become one notice (rendered once, its files stored), sent at most once to a real
//! SMTP server (aiosmtpd on loopback), exported for sending by hand, and followed up.

use std::sync::OnceLock;

use mail_parser::{MessageParser, MimeHeaders};
use zhiwen_core::canon::InputFormat;
use zhiwen_core::compare::{compare, Thresholds};
use zhiwen_core::{Fingerprinter, Params};
use zhiwen_store::*;
use zhiwen_takedown::{DraftRequest, Lang, MailConfig, NoticeConfig, NoticeError, Notices};
use zhiwen_testkit::smtp::SmtpServer;

use crate::support;

const TEXT: &str = "第一回 宴桃园豪杰三结义 斩黄巾英雄首立功。话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。汉朝自高祖斩白蛇而起义，一统天下，后来光武中兴，传至献帝，遂分为三国。推其致乱之由，殆始于桓、灵二帝。";

fn fingerprinter() -> &'static Fingerprinter {
    static FP: OnceLock<Fingerprinter> = OnceLock::new();
    FP.get_or_init(|| Fingerprinter::new(Params::default()).expect("fingerprinter"))
}

pub(crate) fn comparison() -> zhiwen_core::compare::Comparison {
    let a = fingerprinter().analyze_text(TEXT, InputFormat::Text).expect("analysis");
    compare(&a, &a, fingerprinter().params(), &Thresholds::default())
}

struct Case {
    _dir: tempfile::TempDir,
    stores: Stores,
    matches: Vec<i64>,
}

/// Holder `jinling` with a profile, a work of three sections and a pirate page per
/// section on `pirate.example` (confirmed), plus a fourth page elsewhere.
async fn case() -> Case {
    let dir = tempfile::tempdir().expect("tempdir");
    let stores = open(&StoreConfig::embedded(dir.path())).await.expect("store");
    let holder = support::jinling(|h| {
        h.profile.contact_person = "王熙凤".into();
        h.profile.address = "南京市秦淮区1号".into();
        h.profile.phone = "025-1234567".into();
        h.profile.email = "legal@jinling.example".into();
    });
    stores.cases.put_holder(&holder).await.expect("holder");
    let work = support::sanguo(TEXT, 3);
    let w = stores.works.upsert_work(&work).await.expect("work");
    let mut matches = Vec::new();
    for (i, host) in ["pirate.example", "pirate.example", "pirate.example", "other.example"].iter().enumerate() {
        let page = NewPage {
            url: format!("http://{host}/book/{i}.html"),
            fetched_at: Timestamp(1_700_000_000_000),
            http_status: Some(200),
            charset: None,
            body: format!("<html><body>{TEXT}<a href=\"mailto:abuse@{host}\">投诉举报</a></body></html>").into_bytes(),
            text: TEXT.into(),
            format: None,
            canon_tag: None,
            source: PageSource::Crawl,
        };
        let p = stores.pages.upsert_page(&page).await.expect("page");
        let m = NewMatch {
            section_id: w.sections[i.min(2)].1,
            page_id: p.id,
            kind: "identical".into(),
            comparison: comparison(),
            seen_at: Timestamp(1_700_000_000_000),
        };
        let id = stores.matches.upsert_match(&m).await.expect("match").id;
        stores.matches.set_review(id, ReviewStatus::Confirmed, "reviewer", None, Timestamp(2)).await.expect("review");
        matches.push(id);
    }
    Case { _dir: dir, stores, matches }
}

fn notices(stores: &Stores, url: &str) -> Notices {
    notices_printed_by(stores, url, None)
}

fn notices_printed_by(stores: &Stores, url: &str, chromium: Option<std::path::PathBuf>) -> Notices {
    let config = NoticeConfig {
        mail: MailConfig {
            url: url.into(),
            from: "知文 <notices@zhiwen.test>".into(),
            reply_to: None,
            timeout_secs: 10,
        },
        chromium,
        crawl: Default::default(),
    };
    Notices::new(stores.clone(), None, config).expect("notices")
}

fn request(owner: &str, lang: Lang) -> DraftRequest {
    DraftRequest {
        owner: owner.into(),
        site: "pirate.example".into(),
        provider_sites: Vec::new(),
        match_ids: Vec::new(),
        lang,
        recipient: None,
        follow_up_of: None,
        by: "reviewer".into(),
    }
}

async fn status(stores: &Stores, id: i64) -> ReviewStatus {
    stores.matches.get_match(id).await.expect("read").expect("match").status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_notice_is_drafted_once_sent_once_and_followed_up() {
    let Some(server) = SmtpServer::start() else { return };
    let c = case().await;
    let svc = notices(&c.stores, &server.url());

    // The three confirmed matches on the site, in one notice; the other site's is not in it.
    let (n, outcome) = svc.draft(&request("jinling", Lang::ZhCn)).await.expect("draft");
    assert_eq!(outcome, Outcome::Inserted);
    assert_eq!(n.match_ids, c.matches[..3].to_vec());
    assert_eq!(n.state, NoticeState::Draft);
    let names: Vec<&str> = n.files.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(names, ["notice.txt", "notice.html"]);
    // Printed as PDF by Chromium when there is one (the dashboard's and the CLI's path).
    let chromium = zhiwen_ingest::find_chromium();
    if chromium.is_none() && zhiwen_testkit::require_servers() {
        panic!("chromium is required (ZHIWEN_REQUIRE_SERVERS=1) to print notices");
    }
    if let Some(chromium) = chromium {
        let printed = notices_printed_by(&c.stores, &server.url(), Some(chromium));
        let request = DraftRequest { match_ids: c.matches[..1].to_vec(), ..request("jinling", Lang::ZhCn) };
        let (p, _) = printed.draft(&request).await.expect("draft with a PDF");
        let pdf = printed.file(&p, "notice.pdf").await.expect("the PDF is kept");
        assert!(pdf.starts_with(b"%PDF-") && pdf.len() > 1000, "a PDF");
        printed.cancel(p.id).await.expect("withdrawn");
    }
    let text = String::from_utf8(svc.file(&n, "notice.txt").await.unwrap()).unwrap();
    for needle in [
        "金陵出版社有限公司",
        "南京市秦淮区1号",
        "legal@jinling.example",
        "http://pirate.example/book/0.html",
        "三国演义",
        "ZW-N-000001",
    ] {
        assert!(text.contains(needle), "{needle} missing from the notice");
    }
    assert!(!text.contains("other.example"));
    // A retried draft is the same notice, not a second one.
    let (again, outcome) = svc.draft(&request("jinling", Lang::ZhCn)).await.expect("draft again");
    assert_eq!((again.id, outcome), (n.id, Outcome::Unchanged));

    // Sent to the chosen address, once; a retry sends nothing more.
    let sent = svc.send(n.id, Some("abuse@pirate.example"), "reviewer").await.expect("send");
    assert_eq!(sent.state, NoticeState::Sent);
    assert!(sent.sent_at.is_some() && sent.smtp_response.as_deref().is_some_and(|r| r.starts_with("250")));
    let again = svc.send(n.id, Some("someone@else.example"), "reviewer").await.expect("retry");
    assert_eq!((again.state, again.recipient.as_deref()), (NoticeState::Sent, Some("abuse@pirate.example")));
    let messages = server.messages();
    assert_eq!(messages.len(), 1, "sent exactly once");
    let parsed = MessageParser::default().parse(&messages[0]).expect("parse");
    assert_eq!(parsed.message_id().map(|m| format!("<{m}>")), Some(n.message_id.clone()));
    assert_eq!(parsed.header("X-Zhiwen-Notice").and_then(|h| h.as_text()), Some("ZW-N-000001"));
    assert!(parsed.body_text(0).is_some_and(|b| b.contains("金陵出版社有限公司")));
    // Without Chromium there is no PDF: the printable HTML is attached instead.
    let attached: Vec<&str> = parsed.attachments().filter_map(|a| a.attachment_name()).collect();
    assert_eq!(attached, ["ZW-N-000001.html"]);
    for &m in &c.matches[..3] {
        assert_eq!(status(&c.stores, m).await, ReviewStatus::TakedownSent);
    }
    assert_eq!(status(&c.stores, c.matches[3]).await, ReviewStatus::Confirmed);
    let trail = c.stores.matches.get_match(c.matches[0]).await.unwrap().unwrap().review_log;
    assert_eq!(trail.last().map(|r| r.by.as_str()), Some("notice:ZW-N-000001"));

    // Nothing confirmed is left on the site: no second first notice.
    let r = svc.draft(&request("jinling", Lang::ZhCn)).await;
    assert!(matches!(r, Err(NoticeError::NothingToNotice(_))), "{r:?}");

    // Page 0 comes down; the follow-up names the two pages still up.
    let pages = c.stores.matches.get_match(c.matches[0]).await.unwrap().unwrap().page_id;
    let check = RemovalCheck {
        page_id: pages,
        url: "http://pirate.example/book/0.html".into(),
        owner: "jinling".into(),
        at: Timestamp::now(),
        state: Some(RemovalState::Removed),
        http_status: Some(404),
        detail: "404".into(),
        unreachable: false,
    };
    c.stores.cases.record_check(&check).await.unwrap();
    let follow = DraftRequest { follow_up_of: Some(n.id), lang: Lang::En, ..request("jinling", Lang::En) };
    let (second, _) = svc.draft(&follow).await.expect("follow-up");
    assert_eq!(second.match_ids, c.matches[1..3].to_vec());
    assert_eq!(second.follow_up_of, Some(n.id));
    let text = String::from_utf8(svc.file(&second, "notice.txt").await.unwrap()).unwrap();
    assert!(text.contains("penalty of perjury"), "the English notice is a DMCA notice");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_send_stays_a_draft_and_a_notice_can_be_exported() {
    let c = case().await;
    // Nothing listens on this port: the send fails before anything could be accepted.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let svc = notices(&c.stores, &format!("smtp://127.0.0.1:{port}"));
    let (n, _) = svc.draft(&request("jinling", Lang::ZhCn)).await.expect("draft");
    let r = svc.send(n.id, Some("abuse@pirate.example"), "reviewer").await;
    assert!(matches!(r, Err(NoticeError::Mail(_))), "{r:?}");
    let after = c.stores.cases.get_notice(n.id).await.unwrap().unwrap();
    assert_eq!(after.state, NoticeState::Draft);
    assert_eq!(status(&c.stores, c.matches[0]).await, ReviewStatus::Confirmed);
    // A bad address is refused before anything changes.
    let r = svc.send(n.id, Some("not an address"), "reviewer").await;
    assert!(matches!(r, Err(NoticeError::Mail(_))), "{r:?}");

    // Exported as an .eml to send by hand: its matches are under notice, and exporting
    // again gives the same message.
    let (exported, eml) = svc.export(n.id, Some("abuse@pirate.example"), "reviewer").await.expect("export");
    assert_eq!(exported.state, NoticeState::Exported);
    let parsed = MessageParser::default().parse(&eml).expect("eml parses");
    assert_eq!(parsed.message_id().map(|m| format!("<{m}>")), Some(n.message_id.clone()));
    assert_eq!(status(&c.stores, c.matches[0]).await, ReviewStatus::TakedownSent);
    // As if the process had stopped between storing the export and moving its matches:
    // exporting again moves them.
    c.stores.matches.set_review(c.matches[0], ReviewStatus::Confirmed, "crash", None, Timestamp(3)).await.unwrap();
    let (_, again) = svc.export(n.id, None, "reviewer").await.expect("export again");
    assert_eq!(again, eml);
    assert_eq!(status(&c.stores, c.matches[0]).await, ReviewStatus::TakedownSent);
    let r = svc.send(n.id, None, "reviewer").await;
    assert!(matches!(r, Err(NoticeError::Conflict(_))), "{r:?}");

    // A holder without a complete profile cannot draft.
    let mut bare = Holder::empty("luoguan");
    bare.profile.legal_name = "洛观书局".into();
    c.stores.cases.put_holder(&bare).await.unwrap();
    let r = svc.draft(&request("luoguan", Lang::ZhCn)).await;
    assert!(matches!(r, Err(NoticeError::Incomplete(_))), "{r:?}");

    // One notice to a hosting provider about both sites it serves: the matches of both.
    let provider = DraftRequest { provider_sites: vec!["other.example".into()], ..request("jinling", Lang::ZhCn) };
    let (both, _) = svc.draft(&provider).await.expect("a notice about two sites");
    assert_eq!(both.match_ids, c.matches[3..].to_vec(), "the first site's matches are under notice already");
    assert_eq!(both.hosts(), ["pirate.example", "other.example"]);
    let text = String::from_utf8(svc.file(&both, "notice.txt").await.unwrap()).unwrap();
    assert!(text.contains("pirate.example, other.example") && text.contains("http://other.example/book/3.html"));

    // Where to send: the complaint address on the site's pages comes before abuse@.
    let suggestions = svc.suggest_contacts("pirate.example").await.expect("suggest");
    assert_eq!(suggestions.first().map(|s| s.address.as_str()), Some("abuse@pirate.example"));
}

/// A withdrawn draft does not block its selection for good: drafting it again makes a new
/// notice (its own number and Message-ID), itself idempotent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_withdrawn_draft_is_drafted_again_as_a_new_notice() {
    let c = case().await;
    let svc = notices(&c.stores, "smtp://127.0.0.1:1");
    let request = DraftRequest { match_ids: c.matches[..2].to_vec(), ..request("jinling", Lang::ZhCn) };
    let (first, _) = svc.draft(&request).await.expect("draft");
    assert_eq!(svc.cancel(first.id).await.expect("withdrawn").state, NoticeState::Cancelled);
    let (second, outcome) = svc.draft(&request).await.expect("drafted again");
    assert_eq!(outcome, Outcome::Inserted);
    assert_ne!(second.id, first.id);
    assert_ne!(second.message_id, first.message_id);
    assert_eq!((second.state, second.match_ids.clone()), (NoticeState::Draft, c.matches[..2].to_vec()));
    assert!(!second.files.is_empty(), "rendered");
    // A retry finds the new draft, not the withdrawn one.
    let (again, outcome) = svc.draft(&request).await.expect("retried");
    assert_eq!((again.id, outcome), (second.id, Outcome::Unchanged));
    // Withdrawn too, a third draft is made; the first two stay withdrawn.
    svc.cancel(second.id).await.expect("withdrawn");
    let (third, _) = svc.draft(&request).await.expect("third");
    assert!(third.id != first.id && third.id != second.id && third.state == NoticeState::Draft);
    for id in [first.id, second.id] {
        let stored = c.stores.cases.get_notice(id).await.expect("read").expect("stored");
        assert_eq!(stored.state, NoticeState::Cancelled);
    }
}

/// A copy on a domain the holder licensed is never put in a notice, whatever its status
/// (here confirmed before the domain was licensed, the list changed without a re-label).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_licensed_copy_is_never_in_a_notice() {
    let c = case().await;
    let mut holder = c.stores.cases.get_holder("jinling").await.expect("read").expect("holder");
    holder.licensed.push(LicensedDomain {
        domain: "pirate.example".into(),
        work_id: None,
        added_at: Timestamp(3),
        added_by: "admin".into(),
    });
    c.stores.cases.put_holder(&holder).await.expect("licensed");
    let svc = notices(&c.stores, "smtp://127.0.0.1:1");
    let err = svc.draft(&request("jinling", Lang::ZhCn)).await.expect_err("nothing to notice");
    assert!(matches!(err, NoticeError::NothingToNotice(_)), "{err:?}");
    let chosen = DraftRequest { match_ids: c.matches[..1].to_vec(), ..request("jinling", Lang::ZhCn) };
    let err = svc.draft(&chosen).await.expect_err("refused");
    assert!(matches!(&err, NoticeError::Invalid(m) if m.contains("licensed")), "{err:?}");
    assert!(c.stores.cases.list_notices(Some("jinling"), 0, 10).await.expect("list").is_empty());
}
