use zhiwen_matcher::MatcherConfig;
use zhiwen_store::{MatchQuery, Stores};

use crate::support::*;

/// The bundled Big5 pirate copy, with `comment` (ASCII, as the page is Big5) inserted
/// after `<head>` (a mirror: the same text, other offsets in the page).
fn copy_with(comment: &str) -> Vec<u8> {
    let pirate = sample("pirate-copy-big5.html");
    let at = pirate.windows(6).position(|w| w.eq_ignore_ascii_case(b"<head>")).expect("<head>") + 6;
    [&pirate[..at], comment.as_bytes(), &pirate[at..]].concat()
}

/// The stored matches of one page: (section, kind, score, comparison).
async fn matches_of(stores: &Stores, page_id: i64) -> Vec<(i64, String, u64, serde_json::Value)> {
    let all = stores.matches.list_matches(&MatchQuery::default(), 0, 100).await.expect("list");
    let mut out: Vec<_> = all
        .into_iter()
        .filter(|m| m.page_id == page_id)
        .map(|m| (m.section_id, m.kind, m.score.to_bits(), serde_json::to_value(&m.comparison).expect("json")))
        .collect();
    out.sort_by_key(|m| m.0);
    out
}

/// A page whose text equals a page verified before (in its batch or an earlier one)
/// gets that page's matches, recorded under its own id, with evidence at offsets of
/// its own body: exactly what verifying it on its own gives. It is neither looked up
/// nor verified again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_mirror_gets_the_matches_of_the_first_copy_without_a_second_verification() {
    let ch1 = String::from_utf8(sample("hongloumeng-01.txt")).expect("utf-8");
    let work = work("HLM", "红楼梦", &[("第一回 甄士隐梦幻识通灵", &ch1)]);
    let mirror_body = copy_with("<!-- mirror of pirate.example -->");

    // The mirror matched alone: the reference.
    let alone = env(MatcherConfig::default()).await;
    let w = alone.stores.works.upsert_work(&work).await.expect("work");
    alone.matcher.index_work(w.id).await.expect("index");
    let m = alone.stores.pages.upsert_page(&html_page("http://mirror.example/1.html", mirror_body.clone())).await;
    let m = m.expect("page").id;
    let out = alone.matcher.match_pages(vec![m]).await.expect("match");
    assert!(out[0].1.as_ref().expect("matched").verified > 0);
    let reference = matches_of(&alone.stores, m).await;
    assert_eq!(reference.len(), 1, "the copy is found: {reference:?}");

    // The first copy and its mirror (and an innocent page between them) in one batch.
    let e = env(MatcherConfig::default()).await;
    let w = e.stores.works.upsert_work(&work).await.expect("work");
    e.matcher.index_work(w.id).await.expect("index");
    let up = |url: &'static str, body: Vec<u8>| {
        let stores = e.stores.clone();
        async move { stores.pages.upsert_page(&html_page(url, body)).await.expect("page").id }
    };
    let first = up("http://pirate.example/hlm/1.html", sample("pirate-copy-big5.html")).await;
    let innocent = up("http://pirate.example/hlm/2.html", sample("other-chapter-gbk.html")).await;
    let mirror = up("http://mirror.example/1.html", mirror_body.clone()).await;
    let out = e.matcher.match_pages(vec![first, innocent, mirror]).await.expect("match");
    let outcome = |id: i64| out.iter().find(|(p, _)| *p == id).and_then(|(_, r)| r.as_ref().ok()).expect("ok");
    // Whichever of the two is prepared first (the batch runs its pages concurrently) is
    // verified; the other takes its result.
    let (one, twin) = if outcome(first).same_text_as.is_none() { (first, mirror) } else { (mirror, first) };
    assert!(outcome(one).verified > 0 && outcome(one).same_text_as.is_none());
    assert_eq!((outcome(twin).verified, outcome(twin).same_text_as), (0, Some(one)));
    assert_eq!(outcome(mirror).matches.len(), 1);
    assert_eq!(outcome(mirror).matches[0].url, "http://mirror.example/1.html");
    assert!(matches_of(&e.stores, innocent).await.is_empty());
    let of_first = matches_of(&e.stores, first).await;
    let of_mirror = matches_of(&e.stores, mirror).await;
    assert_eq!(of_mirror, reference, "the mirror's match is the one verifying it alone gives");
    // The same copy as the first page's: only the page offsets differ, by the comment.
    let (a, b) = (&of_first[0], &of_mirror[0]);
    assert_eq!((a.0, &a.1, a.2), (b.0, &b.1, b.2));
    let shift = "<!-- mirror of pirate.example -->".len() as u64;
    let (ea, eb) = (&a.3["evidence"][0], &b.3["evidence"][0]);
    assert_eq!(eb["b_start"].as_u64(), ea["b_start"].as_u64().map(|x| x + shift));
    assert_eq!((&ea["b_text"], &ea["a_text"]), (&eb["b_text"], &eb["a_text"]));

    // A later batch (a later page of the task) reuses it too.
    let later = up("http://mirror2.example/copy.html", copy_with("<!-- another mirror -->")).await;
    let out = e.matcher.match_pages(vec![later]).await.expect("match");
    let later_outcome = out[0].1.as_ref().expect("matched");
    assert_eq!((later_outcome.verified, later_outcome.same_text_as), (0, Some(one)));
    assert_eq!(matches_of(&e.stores, later).await.len(), 1);
    let quote = later_outcome.matches[0].evidence_page.clone();
    assert_eq!(quote, outcome(first).matches[0].evidence_page);
}
