//! Conformance cases of the admin API's stores: API keys and the dashboard's queries.

use zhiwen_store::*;

use crate::fixtures::*;

fn new_key(hash_byte: char, role: KeyRole, owner: Option<&str>) -> NewApiKey {
    NewApiKey {
        hash: hash_byte.to_string().repeat(64),
        prefix: "zw_abcd".into(),
        name: "版权部".into(),
        role,
        owner: owner.map(str::to_owned),
        created_at: Timestamp(1_000),
        expires_at: None,
    }
}

pub async fn api_keys_life_cycle(s: &Stores) {
    let admin = s.keys.create_key(&new_key('a', KeyRole::Admin, None)).await.unwrap();
    let holder = NewApiKey { expires_at: Some(Timestamp(5_000)), ..new_key('b', KeyRole::Holder, Some("起点")) };
    let holder = s.keys.create_key(&holder).await.unwrap();
    assert_ne!(admin.id, holder.id);
    assert_eq!(s.keys.find_key(&"b".repeat(64)).await.unwrap().unwrap(), holder);
    assert_eq!(s.keys.get_key(admin.id).await.unwrap().unwrap(), admin);
    assert_eq!((holder.role, holder.owner.as_deref(), holder.name.as_str()), (KeyRole::Holder, Some("起点"), "版权部"));
    assert!(s.keys.find_key(&"c".repeat(64)).await.unwrap().is_none());
    // The same hash twice is refused and writes nothing.
    let dup = s.keys.create_key(&new_key('a', KeyRole::Analyst, None)).await.unwrap_err();
    assert!(matches!(dup, StoreError::Duplicate { .. }), "{dup}");
    // Bad input: a holder without owner, an admin with one, a hash that is not SHA-256 hex.
    for bad in [
        new_key('d', KeyRole::Holder, None),
        new_key('d', KeyRole::Admin, Some("x")),
        NewApiKey { hash: "secret".into(), ..new_key('d', KeyRole::Admin, None) },
    ] {
        assert!(matches!(s.keys.create_key(&bad).await.unwrap_err(), StoreError::InvalidInput { .. }));
    }
    assert_eq!(s.keys.list_keys().await.unwrap(), vec![admin.clone(), holder.clone()]);

    // Expiry and revocation.
    assert!(holder.is_valid_at(Timestamp(4_999)) && !holder.is_valid_at(Timestamp(5_000)));
    assert_eq!(s.keys.revoke_key(admin.id, Timestamp(2_000)).await.unwrap(), Some(Outcome::Updated));
    assert_eq!(s.keys.revoke_key(admin.id, Timestamp(3_000)).await.unwrap(), Some(Outcome::Unchanged));
    assert_eq!(s.keys.revoke_key(admin.id + 1000, Timestamp(3_000)).await.unwrap(), None);
    let revoked = s.keys.get_key(admin.id).await.unwrap().unwrap();
    assert_eq!(revoked.revoked_at, Some(Timestamp(2_000)));
    assert!(!revoked.is_valid_at(Timestamp(2_500)));
}

pub async fn queries_sort_filter_group_and_delete(s: &Stores) {
    let w1 = s.works.upsert_work(&work("甲", "w1")).await.unwrap();
    let mut w2 = work("乙", "w2");
    w2.title = "水浒传".into();
    let w2 = s.works.upsert_work(&w2).await.unwrap();
    let p1 = s.pages.upsert_page(&page("https://a.example/1", TEXT_A, 10)).await.unwrap().id;
    let p2 = s.pages.upsert_page(&page("https://b.example/2", TEXT_A, 20)).await.unwrap().id;
    let p3 = s.pages.upsert_page(&page("https://b.example/3", TEXT_B, 30)).await.unwrap().id;
    let copy = comparison(TEXT_A, TEXT_A);
    let other = comparison(TEXT_B, TEXT_A);
    let day1 = Timestamp(1_763_683_200_000);
    let day2 = Timestamp(day1.0 + 86_400_000);
    let mut ids = Vec::new();
    for (section, page, cmp, at) in [
        (w1.sections[0].1, p1, &copy, day1),
        (w1.sections[0].1, p2, &copy, day2),
        (w1.sections[1].1, p3, &copy, day2),
        (w2.sections[0].1, p1, &other, day1),
        (w2.sections[0].1, p2, &copy, Timestamp(day2.0 + 1)),
    ] {
        let m = NewMatch {
            section_id: section,
            page_id: page,
            kind: "excerpt".into(),
            comparison: cmp.clone(),
            seen_at: at,
        };
        ids.push(s.matches.upsert_match(&m).await.unwrap().id);
    }
    s.matches.set_review(ids[1], ReviewStatus::Confirmed, "alice", None, day2).await.unwrap();

    // Owner scope and the joined fields.
    let all = MatchQuery::default();
    let desc = MatchSort { key: MatchSortKey::LastSeen, descending: true };
    let mine = MatchQuery { owner: Some("甲".into()), ..Default::default() };
    let rows = s.queries.query_matches(&mine, desc, None, 100).await.unwrap();
    assert_eq!(rows.iter().map(|r| r.work_id).collect::<Vec<_>>(), vec![w1.id; 3]);
    let r = rows.iter().find(|r| r.id == ids[1]).unwrap();
    assert_eq!((r.owner.as_str(), r.work_title.as_str(), r.section_title.as_str()), ("甲", "三国演义", "第一回"));
    assert_eq!(
        (r.url.as_str(), r.site.as_str(), r.status, r.section_ordinal),
        ("https://b.example/2", "b.example", ReviewStatus::Confirmed, 0)
    );
    assert_eq!(r.copied_chars, copy.copied_chars as u64);
    assert!((r.coverage - copy.evidence_coverage_a).abs() < 1e-9);
    assert_eq!(s.queries.count_matches(&mine).await.unwrap(), 3);
    assert_eq!(
        s.queries.count_matches(&MatchQuery { owner: Some("丙".into()), ..Default::default() }).await.unwrap(),
        0
    );

    // Sorting with keyset cursors, in pages of two, both directions: every row once, in order.
    for key in [MatchSortKey::Id, MatchSortKey::Score, MatchSortKey::FirstSeen, MatchSortKey::LastSeen] {
        for descending in [false, true] {
            let sort = MatchSort { key, descending };
            let mut seen = Vec::new();
            let mut after = None;
            loop {
                let page = s.queries.query_matches(&all, sort, after, 2).await.unwrap();
                if page.is_empty() {
                    break;
                }
                let last = page.last().unwrap();
                after = Some(MatchCursor { value: last.sort_value(key), id: last.id });
                seen.extend(page);
            }
            assert_eq!(seen.len(), 5, "{sort:?}");
            for pair in seen.windows(2) {
                let (a, b) = ((pair[0].sort_value(key), pair[0].id), (pair[1].sort_value(key), pair[1].id));
                let ordered = if descending { a > b } else { a < b };
                assert!(ordered, "{sort:?}: {a:?} then {b:?}");
            }
        }
    }

    // Filters.
    let confirmed = MatchQuery { status: Some(ReviewStatus::Confirmed), ..Default::default() };
    assert_eq!(s.queries.query_matches(&confirmed, desc, None, 10).await.unwrap()[0].id, ids[1]);
    let not_confirmed = MatchQuery { not_status: vec![ReviewStatus::Confirmed], ..Default::default() };
    assert_eq!(s.queries.count_matches(&not_confirmed).await.unwrap(), 4);
    let on_page = MatchQuery { page_id: Some(p1), owner: Some("乙".into()), ..Default::default() };
    assert_eq!(
        s.queries.query_matches(&on_page, desc, None, 10).await.unwrap().iter().map(|r| r.id).collect::<Vec<_>>(),
        vec![ids[3]]
    );
    let day_one = MatchQuery { first_seen_from: Some(day1), first_seen_until: Some(day2), ..Default::default() };
    assert_eq!(s.queries.count_matches(&day_one).await.unwrap(), 2);
    let site = MatchQuery { site: Some("B.example".into()), min_score: Some(copy.verdict.score), ..Default::default() };
    assert_eq!(s.queries.count_matches(&site).await.unwrap(), 3);

    // Grouped counts: by count descending, then key.
    let by_work = s.queries.group_matches(&all, MatchGroup::Work).await.unwrap();
    assert_eq!(by_work, vec![(w1.id.to_string(), 3), (w2.id.to_string(), 2)]);
    let by_site = s.queries.group_matches(&all, MatchGroup::Site).await.unwrap();
    assert_eq!(by_site, vec![("b.example".to_string(), 3), ("a.example".to_string(), 2)]);
    let by_day = s.queries.group_matches(&mine, MatchGroup::FirstDay).await.unwrap();
    assert_eq!(by_day, vec![(day2.day(), 2), (day1.day(), 1)]);
    let by_status = s.queries.group_matches(&all, MatchGroup::Status).await.unwrap();
    assert_eq!(by_status, vec![("new".to_string(), 4), ("confirmed".to_string(), 1)]);
    let by_section = s.queries.group_matches(&mine, MatchGroup::Section).await.unwrap();
    assert_eq!(by_section, vec![(w1.sections[0].1.to_string(), 2), (w1.sections[1].1.to_string(), 1)]);

    // A work's summary, without its text.
    let summary = s.queries.work_summary(w2.id).await.unwrap().unwrap();
    assert_eq!(Some(&summary), s.works.list_works(None, w2.id - 1, 1).await.unwrap().first());
    assert_eq!((summary.id, summary.section_count), (w2.id, 2));
    assert_eq!(s.queries.work_summary(w2.id + 1000).await.unwrap(), None);

    // Work search.
    let found = s.queries.search_works(None, Some("水浒"), 0, 10).await.unwrap();
    assert_eq!(found.iter().map(|w| w.id).collect::<Vec<_>>(), vec![w2.id]);
    assert_eq!(s.queries.search_works(Some("甲"), Some("罗贯中"), 0, 10).await.unwrap().len(), 1);
    assert_eq!(s.queries.search_works(Some("甲"), Some("水浒"), 0, 10).await.unwrap().len(), 0);
    assert_eq!(s.queries.search_works(None, None, w1.id, 10).await.unwrap().len(), 1);

    // Page search: by owner (pages with a match of its works), site, URL, fetch time.
    let q = PageQuery { owner: Some("乙".into()), ..Default::default() };
    assert_eq!(s.queries.search_pages(&q, 0, 10).await.unwrap().iter().map(|p| p.id).collect::<Vec<_>>(), vec![p1, p2]);
    let q = PageQuery { site: Some("b.example".into()), fetched_from: Some(Timestamp(25)), ..Default::default() };
    assert_eq!(s.queries.search_pages(&q, 0, 10).await.unwrap().iter().map(|p| p.id).collect::<Vec<_>>(), vec![p3]);
    let q = PageQuery { url: Some("HTTPS://A.example/1".into()), ..Default::default() };
    assert_eq!(s.queries.search_pages(&q, 0, 10).await.unwrap().iter().map(|p| p.id).collect::<Vec<_>>(), vec![p1]);

    // Deleting a work removes its sections, their fingerprints and its matches, nothing else.
    let fp = fingerprints(TEXT_A);
    s.fingerprints.put_fingerprints(Subject::section(w1.sections[0].1), &fp).await.unwrap();
    s.fingerprints.put_fingerprints(Subject::section(w2.sections[0].1), &fp).await.unwrap();
    let deleted = s.queries.delete_work(w1.id).await.unwrap().unwrap();
    assert_eq!(deleted.matches, 3);
    let mut expected: Vec<i64> = w1.sections.iter().map(|(_, id)| *id).collect();
    expected.sort_unstable();
    assert_eq!(deleted.section_ids, expected);
    assert!(s.works.get_work(w1.id).await.unwrap().is_none());
    assert!(s.works.get_section(w1.sections[0].1).await.unwrap().is_none());
    assert!(s.fingerprints.get_fingerprints(Subject::section(w1.sections[0].1)).await.unwrap().is_none());
    assert!(s.fingerprints.get_fingerprints(Subject::section(w2.sections[0].1)).await.unwrap().is_some());
    assert!(s.matches.get_match(ids[1]).await.unwrap().is_none());
    assert_eq!(s.queries.count_matches(&all).await.unwrap(), 2);
    assert!(s.queries.delete_work(w1.id).await.unwrap().is_none());
    // The same natural key can be registered again afterwards.
    assert_eq!(s.works.upsert_work(&work("甲", "w1")).await.unwrap().outcome, Outcome::Inserted);
}

/// A match detail is the match, its work's summary, and its section's and page's texts,
/// exactly as the single-purpose reads return them; nothing for an unknown match or once
/// the work is deleted.
pub async fn match_detail_in_one_read(s: &Stores) {
    let w = s.works.upsert_work(&work("甲", "detail")).await.unwrap();
    let page = page("https://d.example/1", TEXT_A, 10);
    let p = s.pages.upsert_page(&page).await.unwrap().id;
    let text_only = NewPage { body: Vec::new(), ..crate::fixtures::page("https://d.example/2", TEXT_B, 10) };
    let p2 = s.pages.upsert_page(&text_only).await.unwrap().id;
    let mut ids = Vec::new();
    for (section, page_id) in [(w.sections[0].1, p), (w.sections[1].1, p2)] {
        let m = NewMatch {
            section_id: section,
            page_id,
            kind: "excerpt".into(),
            comparison: comparison(TEXT_A, TEXT_A),
            seen_at: Timestamp(1_763_683_200_000),
        };
        ids.push(s.matches.upsert_match(&m).await.unwrap().id);
    }
    s.matches
        .set_review(ids[0], ReviewStatus::Confirmed, "alice", Some("核实"), Timestamp(1_763_683_300_000))
        .await
        .unwrap();

    let d = s.queries.match_detail(ids[0]).await.unwrap().unwrap();
    assert_eq!(d.record, s.matches.get_match(ids[0]).await.unwrap().unwrap());
    assert_eq!(d.record.review_log.len(), 1);
    assert_eq!(d.work, s.queries.work_summary(w.id).await.unwrap().unwrap());
    let section = s.works.get_section(w.sections[0].1).await.unwrap().unwrap();
    assert_eq!((d.section_ordinal, d.section_title.as_str(), d.section_text.as_str()), (0, "第一回", TEXT_A));
    assert_eq!(d.section_text, section.text);
    let stored = s.pages.get_page(p).await.unwrap().unwrap();
    assert_eq!((d.url.as_str(), d.page_charset.as_deref()), ("https://d.example/1", Some("GBK")));
    assert_eq!((&d.page_body, &d.page_text), (&stored.body, &stored.text));
    assert_eq!(d.page_body, page.body, "the raw (GBK) body, byte for byte");

    let d2 = s.queries.match_detail(ids[1]).await.unwrap().unwrap();
    assert_eq!((d2.section_ordinal, d2.section_text.as_str()), (1, TEXT_B));
    assert!(d2.page_body.is_empty());
    assert_eq!(d2.page_text, TEXT_B);

    assert!(s.queries.match_detail(ids[1] + 1000).await.unwrap().is_none());
    s.queries.delete_work(w.id).await.unwrap().unwrap();
    assert!(s.queries.match_detail(ids[0]).await.unwrap().is_none());
}
