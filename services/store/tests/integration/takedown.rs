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
    let outcome = s.matches.set_review(id, ReviewStatus::Licensed, "zhiwen", Some("licensed"), Timestamp(2)).await;
    assert_eq!(outcome.unwrap(), Outcome::Updated);
    assert_eq!(s.matches.get_match(id).await.unwrap().unwrap().status, ReviewStatus::Licensed);
    let q = MatchQuery { status: Some(ReviewStatus::Licensed), ..MatchQuery::default() };
    assert_eq!(s.matches.list_matches(&q, 0, 10).await.unwrap().len(), 1);
}
