//! Alert e-mails end to end on the embedded store, to a real SMTP server (aiosmtpd on
//! loopback): a new match above a holder's threshold is one e-mail, never two; the
//! hourly limit holds matches for the next allowed e-mail (the clock is moved, not
//! waited for); a digest holder gets one e-mail a day with everything (nothing of a
//! match licensed meanwhile).

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use mail_parser::MessageParser;
use zhiwen_store::*;
use zhiwen_takedown::{AlertConfig, Alerts, MailConfig, NewMatchAlert};
use zhiwen_testkit::smtp::SmtpServer;

use crate::notices::comparison;
use crate::support;

const TEXT: &str = "第一回 宴桃园豪杰三结义 斩黄巾英雄首立功。话说天下大势，分久必合，合久必分。";
const HOUR: i64 = 3_600_000;

struct Case {
    _dir: tempfile::TempDir,
    stores: Stores,
    work_id: i64,
    section_id: i64,
    clock: Arc<AtomicI64>,
}

async fn case(settings: AlertSettings) -> Case {
    let dir = tempfile::tempdir().expect("tempdir");
    let stores = open(&StoreConfig::embedded(dir.path())).await.expect("store");
    let holder = support::jinling(|h| h.alerts = settings);
    stores.cases.put_holder(&holder).await.expect("holder");
    let work = support::sanguo(TEXT, 1);
    let w = stores.works.upsert_work(&work).await.expect("work");
    Case { _dir: dir, stores, work_id: w.id, section_id: w.sections[0].1, clock: Arc::new(AtomicI64::new(100 * HOUR)) }
}

impl Case {
    /// A new match on `http://pirate.example/<n>.html`, as a matching task hands it over.
    async fn new_match(&self, n: u32, score: f64) -> NewMatchAlert {
        let page = NewPage {
            url: format!("http://pirate.example/{n}.html"),
            fetched_at: Timestamp(1_700_000_000_000),
            http_status: Some(200),
            charset: None,
            body: TEXT.as_bytes().to_vec(),
            text: TEXT.into(),
            format: None,
            canon_tag: None,
            source: PageSource::Crawl,
        };
        let p = self.stores.pages.upsert_page(&page).await.expect("page");
        let m = NewMatch {
            section_id: self.section_id,
            page_id: p.id,
            kind: "identical".into(),
            comparison: comparison(),
            seen_at: Timestamp(1_700_000_000_000),
        };
        let id = self.stores.matches.upsert_match(&m).await.expect("match").id;
        NewMatchAlert { match_id: id, work_id: self.work_id, score }
    }

    fn alerts(&self, url: &str) -> Alerts {
        let mail =
            MailConfig {
                url: url.into(), from: "知文 <alerts@zhiwen.test>".into(), reply_to: None, timeout_secs: 10
            };
        let clock = self.clock.clone();
        Alerts::new(self.stores.clone(), mail, AlertConfig { dashboard_url: "https://zhiwen.test/".into() })
            .with_clock(Arc::new(move || Timestamp(clock.load(Ordering::SeqCst))))
    }

    fn advance(&self, ms: i64) {
        self.clock.fetch_add(ms, Ordering::SeqCst);
    }
}

fn settings(mode: AlertMode, max_per_hour: u32, lang: &str) -> AlertSettings {
    AlertSettings {
        recipients: vec!["rights@jinling.example".into()],
        min_score: 0.8,
        mode,
        max_per_hour,
        lang: lang.into(),
    }
}

/// The text body of each message received.
fn bodies(server: &SmtpServer) -> Vec<(String, String)> {
    server
        .messages()
        .iter()
        .map(|raw| {
            let m = MessageParser::default().parse(raw).expect("parse");
            (m.subject().unwrap_or_default().to_owned(), m.body_text(0).map(|b| b.into_owned()).unwrap_or_default())
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_match_above_the_threshold_is_one_email_never_two() {
    let Some(server) = SmtpServer::start() else { return };
    let c = case(settings(AlertMode::Immediate, 10, "zh-CN")).await;
    let alerts = c.alerts(&server.url());

    let high = c.new_match(1, 0.97).await;
    let report = alerts.on_new_matches(std::slice::from_ref(&high)).await.expect("alert");
    assert_eq!((report.queued, report.emails), (1, 1));
    let mail = bodies(&server);
    assert_eq!(mail.len(), 1);
    let (subject, text) = &mail[0];
    assert!(subject.contains("发现 1 处疑似侵权"), "{subject}");
    for needle in [
        "金陵出版社有限公司",
        "《三国演义》",
        "http://pirate.example/1.html",
        "相似度：1.00",
        &format!("https://zhiwen.test/matches/{}", high.match_id),
    ] {
        assert!(text.contains(needle), "{needle} missing from:\n{text}");
    }

    // The same match again (a re-run of the task): nothing more.
    let report = alerts.on_new_matches(std::slice::from_ref(&high)).await.expect("again");
    assert_eq!((report.queued, report.emails), (0, 0));
    c.advance(2 * HOUR);
    alerts.deliver_held().await.expect("held");
    // Below the holder's threshold: no alert.
    let low = c.new_match(2, 0.5).await;
    let report = alerts.on_new_matches(&[low]).await.expect("low");
    assert_eq!((report.queued, report.emails), (0, 0));
    assert_eq!(server.messages().len(), 1, "one e-mail in all");

    // Queued without sending (what a server's matching task waits for; its sending runs
    // apart): stored at once, sent by the next delivery, once.
    let third = c.new_match(3, 0.99).await;
    let report = alerts.queue_new_matches(std::slice::from_ref(&third)).await.expect("queued");
    assert_eq!((report.queued, report.emails), (1, 0));
    assert_eq!(server.messages().len(), 1, "queued, not sent");
    assert_eq!(alerts.queue_new_matches(&[third]).await.expect("again").queued, 0);
    c.advance(2 * HOUR);
    assert_eq!(alerts.deliver_held().await.expect("sent").emails, 1);
    assert_eq!(alerts.deliver_held().await.expect("nothing left").emails, 0);
    assert_eq!(server.messages().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hourly_limit_holds_matches_for_the_next_email() {
    let Some(server) = SmtpServer::start() else { return };
    let c = case(settings(AlertMode::Immediate, 1, "en")).await;

    // The relay is down: the match waits, and the failed try does not count.
    let closed = format!("smtp://127.0.0.1:{}", zhiwen_testkit::free_port());
    let first = c.new_match(1, 0.9).await;
    let report = c.alerts(&closed).on_new_matches(std::slice::from_ref(&first)).await.expect("queued");
    assert_eq!((report.queued, report.emails, report.failed), (1, 0, 1));

    // Three matches found by three tasks within the hour: one e-mail now (with the one
    // that waited), the next two held.
    let alerts = c.alerts(&server.url());
    let second = c.new_match(2, 0.9).await;
    assert_eq!(alerts.on_new_matches(&[second]).await.expect("1").emails, 1);
    c.advance(10 * 60 * 1000);
    let third = c.new_match(3, 0.9).await;
    let report = alerts.on_new_matches(&[third]).await.expect("2");
    assert_eq!((report.queued, report.emails, report.held), (1, 0, 1));
    c.advance(10 * 60 * 1000);
    let fourth = c.new_match(4, 0.9).await;
    assert_eq!(alerts.on_new_matches(&[fourth]).await.expect("3").emails, 0);
    assert_eq!(alerts.deliver_held().await.expect("still held").emails, 0);
    assert_eq!(server.messages().len(), 1);

    // An hour after the first e-mail, the held ones go out together.
    c.advance(40 * 60 * 1000);
    assert_eq!(alerts.deliver_held().await.expect("next window").emails, 1);
    assert_eq!(alerts.deliver_held().await.expect("nothing left").emails, 0);
    let mail = bodies(&server);
    assert_eq!(mail.len(), 2);
    assert!(mail[0].0.contains("2 new matches"), "{}", mail[0].0);
    assert!(mail[0].1.contains("http://pirate.example/1.html") && mail[0].1.contains("http://pirate.example/2.html"));
    assert!(mail[1].0.contains("2 new matches"), "{}", mail[1].0);
    assert!(mail[1].1.contains("http://pirate.example/3.html") && mail[1].1.contains("http://pirate.example/4.html"));
    assert!(mail[1].1.contains("Score: 1.00") && mail[1].1.contains("https://zhiwen.test/matches/"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_digest_holder_gets_one_email_a_day() {
    let Some(server) = SmtpServer::start() else { return };
    let c = case(settings(AlertMode::Digest, 1, "zh-CN")).await;
    let alerts = c.alerts(&server.url());
    let mut found = Vec::new();
    for n in 1..=3 {
        let m = c.new_match(n, 0.95).await;
        let report = alerts.on_new_matches(std::slice::from_ref(&m)).await.expect("queued");
        assert_eq!((report.queued, report.emails), (1, 0), "nothing immediate");
        found.push(m);
    }
    assert_eq!(alerts.deliver_held().await.expect("held").emails, 0, "digest holders wait for the digest");
    assert!(server.messages().is_empty());

    assert_eq!(alerts.send_digests("2026-11-26").await.expect("digest").emails, 1);
    // The daily task run again for the same day sends nothing.
    assert_eq!(alerts.send_digests("2026-11-26").await.expect("again").emails, 0);
    let mail = bodies(&server);
    assert_eq!(mail.len(), 1);
    assert!(mail[0].0.contains("2026-11-26") && mail[0].0.contains("3 处"), "{}", mail[0].0);
    for n in 1..=3 {
        assert!(mail[0].1.contains(&format!("http://pirate.example/{n}.html")), "{}", mail[0].1);
    }
    // Nothing new the next day: no e-mail.
    assert_eq!(alerts.send_digests("2026-11-27").await.expect("next day").emails, 0);
    // A match licensed after it was queued is not told of.
    let licensed = c.new_match(4, 0.95).await;
    assert_eq!(alerts.on_new_matches(std::slice::from_ref(&licensed)).await.expect("queued").queued, 1);
    let status = ReviewStatus::Licensed;
    c.stores.matches.set_review(licensed.match_id, status, LICENSED_BY, None, Timestamp(3)).await.expect("licensed");
    assert_eq!(alerts.send_digests("2026-11-28").await.expect("licensed").emails, 0);
    assert_eq!(server.messages().len(), 1);
}
