//! Conformance cases of the case store: holders, notices, removal watches, and the
//! `licensed` review status.

use std::sync::Arc;

use zhiwen_store::*;

use crate::fixtures::{comparison, page, work, TEXT_A};

fn holder(owner: &str) -> Holder {
    let mut h = Holder::empty(owner);
    h.profile = HolderProfile {
        legal_name: "某某文学有限公司".into(),
        contact_person: "张三".into(),
        address: "北京市海淀区某路1号".into(),
        phone: "010-12345678".into(),
        email: "legal@example.com".into(),
    };
    h.updated_at = Timestamp(1);
    h.updated_by = "admin".into();
    h
}

pub async fn holders_versions_and_licensed(s: &Stores) {
    assert_eq!(s.cases.get_holder("o").await.unwrap(), None);
    let stored = s.cases.put_holder(&holder("o")).await.unwrap();
    assert_eq!(stored.version, 1);
    // A second creation from version 0 lost the race: a conflict, nothing overwritten.
    let mut other = holder("o");
    other.profile.legal_name = "other".into();
    assert!(matches!(s.cases.put_holder(&other).await, Err(StoreError::Conflict { .. })));
    let mut next = stored.clone();
    next.licensed.push(LicensedDomain {
        domain: "partner.example".into(),
        work_id: None,
        added_at: Timestamp(2),
        added_by: "o".into(),
    });
    let v2 = s.cases.put_holder(&next).await.unwrap();
    assert_eq!(v2.version, 2);
    // A stale version is refused.
    assert!(matches!(s.cases.put_holder(&next).await, Err(StoreError::Conflict { .. })));
    let read = s.cases.get_holder("o").await.unwrap().unwrap();
    assert_eq!(read, v2);
    assert!(read.licenses("www.partner.example", 5));
    assert!(!read.licenses("partner.example.evil", 5));
    // A domain that is not normalised, or a multi-line field, writes nothing.
    let mut bad = read.clone();
    bad.licensed[0].domain = "HTTP://Partner.example/".into();
    assert!(matches!(s.cases.put_holder(&bad).await, Err(StoreError::InvalidInput { .. })));
    let mut bad = read.clone();
    bad.profile.address = "a\r\nBcc: x@y".into();
    assert!(matches!(s.cases.put_holder(&bad).await, Err(StoreError::InvalidInput { .. })));
    s.cases.put_holder(&holder("a")).await.unwrap();
    let all: Vec<String> = s.cases.list_holders().await.unwrap().into_iter().map(|h| h.owner).collect();
    assert_eq!(all, ["a", "o"]);
}

fn notice(key: &str, owner: &str, site: &str) -> Notice {
    Notice {
        id: 0,
        key: key.into(),
        owner: owner.into(),
        site: site.into(),
        sites: Vec::new(),
        lang: "zh-CN".into(),
        state: NoticeState::Draft,
        match_ids: vec![1, 2],
        page_ids: vec![10, 11],
        subject: "侵权通知".into(),
        recipient: None,
        files: vec![],
        follow_up_of: None,
        created_by: "r".into(),
        created_at: Timestamp(5),
        message_id: format!("<{key}@zhiwen>"),
        sent_at: None,
        sent_by: None,
        smtp_response: None,
        version: 0,
    }
}

pub async fn notices_idempotent_and_compare_and_set(s: &Stores) {
    let (a, outcome) = s.cases.create_notice(&notice("k1", "o", "x.example")).await.unwrap();
    assert_eq!((a.id, a.version, outcome), (1, 1, Outcome::Inserted));
    // A retried draft is the same notice.
    let (again, outcome) = s.cases.create_notice(&notice("k1", "o", "x.example")).await.unwrap();
    assert_eq!((again.clone(), outcome), (a.clone(), Outcome::Unchanged));
    let (b, _) = s.cases.create_notice(&notice("k2", "p", "y.example")).await.unwrap();
    let (c, _) = s.cases.create_notice(&notice("k3", "o", "y.example")).await.unwrap();
    assert!(a.id < b.id && b.id < c.id);
    assert_eq!(s.cases.get_notice(b.id).await.unwrap().unwrap(), b);
    assert_eq!(s.cases.get_notice(c.id + 1).await.unwrap(), None);
    assert_eq!(s.cases.find_notice("k3").await.unwrap().unwrap(), c);
    let mine: Vec<i64> = s.cases.list_notices(Some("o"), 0, 10).await.unwrap().iter().map(|n| n.id).collect();
    assert_eq!(mine, [a.id, c.id]);
    assert_eq!(s.cases.list_notices(None, a.id, 1).await.unwrap()[0].id, b.id);

    // Two senders read version 1; only the first moves it to `sending`.
    let mut first = a.clone();
    first.state = NoticeState::Sending;
    let mut second = a.clone();
    second.state = NoticeState::Sending;
    let moved = s.cases.update_notice(&first).await.unwrap();
    assert_eq!((moved.state, moved.version), (NoticeState::Sending, 2));
    assert!(matches!(s.cases.update_notice(&second).await, Err(StoreError::Conflict { .. })));
    // An empty or oversized notice writes nothing.
    let mut empty = notice("k4", "o", "x.example");
    empty.match_ids.clear();
    assert!(matches!(s.cases.create_notice(&empty).await, Err(StoreError::InvalidInput { .. })));
    assert_eq!(s.cases.find_notice("k4").await.unwrap(), None);
}

fn check(page_id: i64, at: i64, state: Option<RemovalState>) -> RemovalCheck {
    RemovalCheck {
        page_id,
        url: format!("https://x.example/{page_id}"),
        owner: "o".into(),
        at: Timestamp(at),
        state,
        http_status: state.map(|s| if s == RemovalState::Removed { 404 } else { 200 }),
        detail: "checked".into(),
        unreachable: false,
    }
}

pub async fn removal_watches_record_transitions(s: &Stores) {
    assert_eq!(s.cases.get_watch(7).await.unwrap(), None);
    let first = s.cases.record_check(&check(7, 100, Some(RemovalState::Up))).await.unwrap();
    assert_eq!(first.event.map(|e| (e.from, e.to)), Some((None, RemovalState::Up)));
    assert_eq!(s.cases.record_check(&check(7, 200, Some(RemovalState::Up))).await.unwrap().event, None);
    assert_eq!(s.cases.record_check(&check(7, 250, None)).await.unwrap().event, None);
    let gone = s.cases.record_check(&check(7, 300, Some(RemovalState::Removed))).await.unwrap().event.unwrap();
    assert_eq!(
        (gone.from, gone.to, gone.at, gone.http_status),
        (Some(RemovalState::Up), RemovalState::Removed, Timestamp(300), Some(404))
    );
    let w = s.cases.get_watch(7).await.unwrap().unwrap();
    assert_eq!((w.state, w.removed_at, w.checks, w.events.len()), (RemovalState::Removed, Some(Timestamp(300)), 4, 2));

    // Concurrent checkers of one page: every check counts, none is lost.
    let s = Arc::new(s.clone());
    let mut tasks = Vec::new();
    for i in 0..8 {
        let s = s.clone();
        tasks
            .push(tokio::spawn(async move { s.cases.record_check(&check(8, 1000 + i, Some(RemovalState::Up))).await }));
    }
    let mut events = 0;
    for t in tasks {
        events += usize::from(t.await.unwrap().unwrap().event.is_some());
    }
    let w = s.cases.get_watch(8).await.unwrap().unwrap();
    assert_eq!((w.checks, w.events.len(), events), (8, 1, 1));

    // A host unreachable at one check cannot tell; at the second in a row it is removed,
    // the count kept in the stored watch (so it holds across processes and restarts).
    let unreachable = |at| RemovalCheck { unreachable: true, ..check(8, at, None) };
    let r = s.cases.record_check(&unreachable(2000)).await.unwrap();
    assert_eq!((r.check.state, r.event), (None, None));
    let r = s.cases.record_check(&unreachable(2100)).await.unwrap();
    assert_eq!(r.check.state, Some(RemovalState::Removed));
    assert_eq!(r.event.map(|e| e.to), Some(RemovalState::Removed));
    let w = s.cases.get_watch(8).await.unwrap().unwrap();
    assert_eq!((w.state, w.removed_at, w.unreachable_checks), (RemovalState::Removed, Some(Timestamp(2100)), 2));

    // Flagged once.
    assert!(s.cases.flag_watch(8, Timestamp(5000)).await.unwrap());
    assert!(!s.cases.flag_watch(8, Timestamp(6000)).await.unwrap());
    assert!(!s.cases.flag_watch(99, Timestamp(6000)).await.unwrap());
    assert_eq!(s.cases.get_watch(8).await.unwrap().unwrap().flagged_at, Some(Timestamp(5000)));
    let pages: Vec<i64> =
        s.cases.list_watches(Some("o"), 0, 10).await.unwrap().iter().map(|(_, w)| w.page_id).collect();
    assert_eq!(pages, [7, 8]);
}

pub async fn licensed_status_is_stored(s: &Stores) {
    let w = s.works.upsert_work(&work("o", "lic")).await.unwrap();
    let p = s.pages.upsert_page(&page("https://partner.example/1", TEXT_A, 1)).await.unwrap().id;
    let m = NewMatch {
        section_id: w.sections[0].1,
        page_id: p,
        kind: "identical".into(),
        comparison: comparison(TEXT_A, TEXT_A),
        seen_at: Timestamp(1),
    };
    let id = s.matches.upsert_match(&m).await.unwrap().id;
    // Only the licensed-domain rule makes a match licensed.
    let by_hand = s.matches.set_review(id, ReviewStatus::Licensed, "key:1 alice", None, Timestamp(2)).await;
    assert!(matches!(by_hand, Err(StoreError::InvalidInput { .. })), "{by_hand:?}");
    let outcome = s.matches.set_review(id, ReviewStatus::Licensed, LICENSED_BY, Some("licensed"), Timestamp(2)).await;
    assert_eq!(outcome.unwrap(), Outcome::Updated);
    assert_eq!(s.matches.get_match(id).await.unwrap().unwrap().status, ReviewStatus::Licensed);
    let q = MatchQuery { status: Some(ReviewStatus::Licensed), ..MatchQuery::default() };
    assert_eq!(s.matches.list_matches(&q, 0, 10).await.unwrap().len(), 1);
    // Nor can a reviewer move a licensed match (confirmed, it could go in a notice).
    for to in [ReviewStatus::Confirmed, ReviewStatus::New, ReviewStatus::Dismissed, ReviewStatus::TakedownSent] {
        let refused = s.matches.set_review(id, to, "key:1 alice", None, Timestamp(3)).await;
        assert!(matches!(refused, Err(StoreError::Conflict { .. })), "{to:?}: {refused:?}");
    }
    let kept = s.matches.get_match(id).await.unwrap().unwrap();
    assert_eq!((kept.status, kept.review_log.len()), (ReviewStatus::Licensed, 1));
    // The rule clears it when the domain is no longer licensed; then a reviewer may act.
    let cleared = s.matches.set_review(id, ReviewStatus::New, LICENSED_BY, None, Timestamp(4)).await;
    assert_eq!(cleared.unwrap(), Outcome::Updated);
    let confirmed = s.matches.set_review(id, ReviewStatus::Confirmed, "key:1 alice", None, Timestamp(5)).await;
    assert_eq!(confirmed.unwrap(), Outcome::Updated);
}

fn item(match_id: i64, at: i64) -> AlertItem {
    AlertItem { match_id, score: 0.9, queued_at: Timestamp(at) }
}

pub async fn alert_outbox_dedup_rate_limit_and_digest(s: &Stores) {
    // Settings live in the holder record and are validated with it.
    let mut h = holder("alerts");
    h.alerts = AlertSettings { recipients: vec!["a@example.com".into()], max_per_hour: 1, ..Default::default() };
    let stored = s.cases.put_holder(&h).await.unwrap();
    assert_eq!(stored.alerts, h.alerts);
    let mut bad = stored.clone();
    bad.alerts.min_score = 2.0;
    assert!(matches!(s.cases.put_holder(&bad).await, Err(StoreError::InvalidInput { .. })));

    // Each (holder, match) is queued once, whoever finds it again.
    let c = &s.cases;
    assert_eq!(c.queue_alerts("alerts", &[item(1, 1), item(2, 1)]).await.unwrap(), [1, 2]);
    assert_eq!(c.queue_alerts("alerts", &[item(2, 2), item(3, 2)]).await.unwrap(), [3]);
    assert!(c.was_alerted("alerts", 2).await.unwrap());
    assert!(!c.was_alerted("other", 2).await.unwrap());
    assert_eq!(c.queue_alerts("other", &[item(2, 2)]).await.unwrap(), [2], "per holder");

    // One e-mail per hour: the first takes every waiting match; the next waits.
    let hour = RATE_WINDOW_MS;
    let t0 = Timestamp(100 * hour);
    let limit = BatchKind::Immediate { max_per_hour: 1 };
    let BatchStart::Send(b1) = c.begin_alert_batch("alerts", &limit, t0).await.unwrap() else { panic!("a batch") };
    assert_eq!(b1.items.iter().map(|i| i.match_id).collect::<Vec<_>>(), [1, 2, 3]);
    // While it is being sent, another process gets nothing.
    assert_eq!(c.begin_alert_batch("alerts", &limit, t0).await.unwrap(), BatchStart::Busy);
    c.end_alert_batch("alerts", b1.number, true).await.unwrap();
    c.queue_alerts("alerts", &[item(4, 3)]).await.unwrap();
    let held = c.begin_alert_batch("alerts", &limit, Timestamp(t0.0 + 10)).await.unwrap();
    assert_eq!(held, BatchStart::Held(Timestamp(t0.0 + hour)));
    // A failed send puts its matches back and does not count.
    let t1 = Timestamp(t0.0 + hour);
    let BatchStart::Send(b2) = c.begin_alert_batch("alerts", &limit, t1).await.unwrap() else { panic!("a batch") };
    c.end_alert_batch("alerts", b2.number, false).await.unwrap();
    let BatchStart::Send(b3) = c.begin_alert_batch("alerts", &limit, t1).await.unwrap() else { panic!("again") };
    assert_eq!(b3.items.iter().map(|i| i.match_id).collect::<Vec<_>>(), [4]);
    assert!(b3.number > b2.number);
    // A process that died mid-send: after the lease the batch is set aside, not resent.
    c.queue_alerts("alerts", &[item(5, 4)]).await.unwrap();
    let later = Timestamp(t1.0 + 2 * hour);
    let BatchStart::Send(b4) = c.begin_alert_batch("alerts", &limit, later).await.unwrap() else { panic!("b4") };
    assert_eq!(b4.items.iter().map(|i| i.match_id).collect::<Vec<_>>(), [5]);
    let q = c.alert_queue("alerts").await.unwrap().unwrap();
    assert_eq!(q.uncertain.iter().map(|b| b.number).collect::<Vec<_>>(), [b3.number]);
    assert_eq!(q.sent, 1);
    c.end_alert_batch("alerts", b4.number, true).await.unwrap();

    // Digest: one a day; a re-run of the day's task takes nothing.
    c.queue_alerts("alerts", &[item(6, 5), item(7, 5)]).await.unwrap();
    let day = BatchKind::Digest { day: "2026-11-26".into() };
    let BatchStart::Send(d) = c.begin_alert_batch("alerts", &day, later).await.unwrap() else { panic!("digest") };
    assert_eq!(d.items.len(), 2);
    c.end_alert_batch("alerts", d.number, true).await.unwrap();
    c.queue_alerts("alerts", &[item(8, 6)]).await.unwrap();
    assert_eq!(c.begin_alert_batch("alerts", &day, later).await.unwrap(), BatchStart::Nothing);
    let next = BatchKind::Digest { day: "2026-11-27".into() };
    let BatchStart::Send(d2) = c.begin_alert_batch("alerts", &next, later).await.unwrap() else { panic!("next day") };
    assert_eq!(d2.items.iter().map(|i| i.match_id).collect::<Vec<_>>(), [8]);
    // A digest that failed for sure is taken again the same day.
    c.end_alert_batch("alerts", d2.number, false).await.unwrap();
    assert!(matches!(c.begin_alert_batch("alerts", &next, later).await.unwrap(), BatchStart::Send(_)));
    let owners: Vec<String> = c.alert_queues().await.unwrap().into_iter().map(|q| q.owner).collect();
    assert_eq!(owners, ["alerts", "other"]);
}
