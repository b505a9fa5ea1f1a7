//! Conformance case of watched sites: idempotent writes keyed by host or id, the
//! schedule state kept across updates, the owner guarded, deletion.

use zhiwen_store::*;

fn site(owner: &str, urls: &[&str]) -> NewWatchedSite {
    NewWatchedSite {
        id: None,
        owner: owner.into(),
        entry_points: urls.iter().map(|u| u.to_string()).collect(),
        chapter_patterns: vec![r"/book/\d+\.html$".into()],
        min_delay_secs: Some(3),
    }
}

pub async fn watched_sites_life_cycle(s: &Stores) {
    let new = site("o", &["http://Pirate.example/index.html", "http://pirate.example/rss.xml"]);
    let (stored, outcome) = s.cases.put_watched_site(&new, "o", Timestamp(1)).await.unwrap();
    assert_eq!((outcome, stored.id.as_str(), stored.version), (Outcome::Inserted, "pirate.example", 1));
    // The same again is unchanged, whoever writes it and when.
    let (again, outcome) = s.cases.put_watched_site(&new, "admin", Timestamp(2)).await.unwrap();
    assert_eq!((outcome, again.version), (Outcome::Unchanged, 1));
    // A visit moves the schedule of one entry point.
    let visit = Visit {
        at: Timestamp(10_000),
        interval_secs: 120,
        not_modified: false,
        new_links: 3,
        copies: true,
        pages: vec![11, 12],
        etag: Some("\"v1\"".into()),
        last_modified: Some("Thu, 01 Jan 2026 00:00:00 GMT".into()),
        outcome: "200: 3 new".into(),
    };
    assert!(s.cases.record_visit("pirate.example", "http://pirate.example/rss.xml", &visit).await.unwrap());
    assert!(!s.cases.record_visit("pirate.example", "http://pirate.example/other", &visit).await.unwrap());
    assert!(!s.cases.record_visit("nope", "http://pirate.example/rss.xml", &visit).await.unwrap());
    // An update adding an entry point keeps the visited one's state.
    let more = site("o", &["http://pirate.example/rss.xml", "http://pirate.example/list/1"]);
    let (updated, outcome) = s.cases.put_watched_site(&more, "o", Timestamp(3)).await.unwrap();
    assert_eq!(outcome, Outcome::Updated);
    let rss = &updated.entry_points[0];
    assert_eq!((rss.etag.as_deref(), rss.next_visit, rss.visits_with_new), (Some("\"v1\""), Timestamp(130_000), 1));
    assert_eq!((rss.visits_with_copies, rss.recent_pages.as_slice()), (1, &[11, 12][..]));
    assert_eq!((updated.entry_points[1].visits, updated.entry_points.len()), (0, 2));
    assert_eq!(s.cases.get_watched_site("pirate.example").await.unwrap(), Some(updated.clone()));
    // Another holder joins the site: its entry point is added, the others keep their state.
    let theirs = site("b", &["http://pirate.example/"]);
    let (joined, outcome) = s.cases.put_watched_site(&theirs, "b", Timestamp(4)).await.unwrap();
    assert_eq!((outcome, joined.owner.as_str()), (Outcome::Updated, "o"));
    assert_eq!(joined.all_holders(), ["o", "b"]);
    assert_eq!(joined.entry_points.len(), 3);
    assert_eq!(joined.entry_points[0].etag.as_deref(), Some("\"v1\""));
    let (same, outcome) = s.cases.put_watched_site(&theirs, "b", Timestamp(5)).await.unwrap();
    assert_eq!((outcome, same.version), (Outcome::Unchanged, joined.version), "joining again changes nothing");
    // An id names one host.
    let elsewhere = NewWatchedSite { id: Some("pirate.example".into()), ..site("b", &["http://other.example/"]) };
    assert!(matches!(s.cases.put_watched_site(&elsewhere, "b", Timestamp(4)).await, Err(StoreError::Conflict { .. })));
    // Bad input writes nothing.
    let bad = NewWatchedSite { chapter_patterns: vec!["([".into()], ..site("b", &["http://other.example/"]) };
    assert!(matches!(s.cases.put_watched_site(&bad, "b", Timestamp(4)).await, Err(StoreError::InvalidInput { .. })));
    // A given id keys a second site of the same host.
    let named = NewWatchedSite { id: Some("feeds".into()), ..site("b", &["http://127.0.0.1:8080/feed"]) };
    let (n, _) = s.cases.put_watched_site(&named, "b", Timestamp(5)).await.unwrap();
    assert_eq!((n.id.as_str(), n.host.as_str()), ("feeds", "127.0.0.1:8080"));
    let all: Vec<String> = s.cases.list_watched_sites(None).await.unwrap().into_iter().map(|w| w.id).collect();
    assert_eq!(all, ["pirate.example", "feeds"]);
    let of = |h: &'static str| {
        let cases = s.cases.clone();
        async move { cases.list_watched_sites(Some(h)).await.unwrap().into_iter().map(|w| w.id).collect::<Vec<_>>() }
    };
    assert_eq!(of("b").await, ["pirate.example", "feeds"]);
    assert_eq!(of("o").await, ["pirate.example"]);
    // Holders leave one by one; the last one's leaving deletes the site.
    assert_eq!(s.cases.leave_watched_site("pirate.example", "c", "c", Timestamp(6)).await.unwrap(), Left::NotWatched);
    assert_eq!(s.cases.leave_watched_site("pirate.example", "o", "o", Timestamp(6)).await.unwrap(), Left::Left);
    let rest = s.cases.get_watched_site("pirate.example").await.unwrap().unwrap();
    assert_eq!((rest.owner.as_str(), rest.all_holders()), ("b", vec!["b".to_string()]));
    assert_eq!(rest.entry_points.len(), 3, "the definition stays");
    assert!(of("o").await.is_empty());
    assert_eq!(s.cases.leave_watched_site("feeds", "b", "b", Timestamp(7)).await.unwrap(), Left::Deleted);
    assert_eq!(of("b").await, ["pirate.example"]);
    // A delete at the version read leaves a document changed meanwhile alone (the last
    // holder leaving while another joins keeps the site for the one who joined).
    let v = s.cases.get_watched_site("pirate.example").await.unwrap().unwrap().version;
    assert!(!s.cases.delete_doc(DocKind::WatchedSite, "pirate.example", Some(v + 1)).await.unwrap());
    assert!(s.cases.get_watched_site("pirate.example").await.unwrap().is_some());
    assert!(s.cases.delete_doc(DocKind::WatchedSite, "pirate.example", Some(v)).await.unwrap());
    s.cases.put_watched_site(&site("b", &["http://pirate.example/"]), "b", Timestamp(8)).await.unwrap();
    assert!(s.cases.delete_watched_site("pirate.example").await.unwrap());
    assert!(!s.cases.delete_watched_site("pirate.example").await.unwrap());
    assert_eq!(s.cases.get_watched_site("pirate.example").await.unwrap(), None);
}
