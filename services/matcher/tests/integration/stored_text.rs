//! Pages stored with their canonical text and its canon tag (as ingest stores them) are
//! analysed from that text: the same matches, scores and evidence, quoted at the same
//! offsets of their bodies, as pages whose text is made from their bodies.

use zhiwen_matcher::MatcherConfig;
use zhiwen_store::{MatchQuery, NewPage, Stores};

use crate::support::*;

/// Every stored match as (page URL, section, kind, score, comparison): what a reader of
/// the store sees, evidence quotes and offsets included.
async fn matches_by_url(stores: &Stores) -> Vec<(String, i64, String, u64, serde_json::Value)> {
    let all = stores.matches.list_matches(&MatchQuery::default(), 0, 500).await.expect("list");
    let mut out = Vec::new();
    for m in all {
        let page = stores.pages.get_page(m.page_id).await.expect("page").expect("stored");
        out.push((
            page.url,
            m.section_id,
            m.kind,
            m.score.to_bits(),
            serde_json::to_value(&m.comparison).expect("json"),
        ));
    }
    out.sort_by(|a, b| (&a.0, a.1).cmp(&(&b.0, b.1)));
    out
}

/// 20 HTML stories of one site under a shared header (blanked as boilerplate), one of them
/// registered, plus the bundled Big5 pirate copy of a registered chapter and an innocent
/// GBK chapter: (URL, body), and the works.
fn site() -> (Vec<(String, Vec<u8>)>, Vec<zhiwen_store::NewWork>) {
    let c = classics();
    let header = chars(&c["novel-shuihu-020"].1, 200, 400);
    let stories: Vec<String> =
        (0..20).map(|i| chars(&c[&format!("novel-xiyouji-{:03}", i + 10)].1, 500, 250)).collect();
    let mut pages: Vec<(String, Vec<u8>)> = stories
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let html =
                format!("<html><head><title>第{i}回</title></head><body><p>{header}</p><p>{s}</p></body></html>");
            (format!("http://news.example/story/{i}.html"), html.into_bytes())
        })
        .collect();
    pages.push(("http://pirate.example/hlm/1.html".into(), sample("pirate-copy-big5.html")));
    pages.push(("http://pirate.example/hlm/2.html".into(), sample("other-chapter-gbk.html")));
    let ch1 = String::from_utf8(sample("hongloumeng-01.txt")).expect("utf-8");
    let works = vec![
        work("NEWS-0", "新闻一则", &[("", &format!("{header}\n{}", stories[0]))]),
        work("HLM", "红楼梦", &[("第一回 甄士隐梦幻识通灵", &ch1)]),
    ];
    (pages, works)
}

/// The same pages stored without a canon tag (analysed from their bodies) and with one
/// (analysed from their stored text) give the same stored matches, evidence included: the page
/// side of a copy's evidence is quoted from the body at the offsets of its original.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_analysed_from_their_stored_text_match_as_from_their_bodies() {
    let (pages, works) = site();
    let mut results = Vec::new();
    for store_tagged in [false, true] {
        let e = env(MatcherConfig::default()).await;
        for w in &works {
            let w = e.stores.works.upsert_work(w).await.expect("work");
            e.matcher.index_work(w.id).await.expect("index");
        }
        let mut ids = Vec::new();
        for (url, body) in &pages {
            // Stored by ingest before canon tags were (the same text, no tag), or now.
            let page = tagged(html_page(url, body.clone()));
            let page = if store_tagged { page } else { NewPage { canon_tag: None, ..page } };
            ids.push(e.stores.pages.upsert_page(&page).await.expect("page").id);
        }
        let stored = e.stores.pages.get_page(ids[0]).await.expect("page").expect("stored");
        assert_eq!(stored.canon_tag.is_some(), store_tagged);
        let out = e.matcher.match_pages(ids).await.expect("match");
        assert!(out.iter().all(|(_, r)| r.is_ok()), "{out:?}");
        let blanked: usize = out.iter().filter_map(|(_, r)| r.as_ref().ok()).map(|o| o.boilerplate_chars).sum();
        assert!(blanked > 0, "the shared header is blanked as boilerplate");
        results.push(matches_by_url(&e.stores).await);
    }
    let urls: Vec<&str> = results[0].iter().map(|m| m.0.as_str()).collect();
    assert!(urls.contains(&"http://news.example/story/0.html"), "{urls:?}");
    assert!(urls.contains(&"http://pirate.example/hlm/1.html"), "{urls:?}");
    assert!(!urls.contains(&"http://pirate.example/hlm/2.html"), "{urls:?}");
    assert_eq!(results[0], results[1]);
    // The evidence quotes the HTML source of the body (the Big5 copy decoded).
    let pirate = results[1].iter().find(|m| m.0.ends_with("/hlm/1.html")).expect("pirate copy");
    let quote = pirate.4["evidence"][0]["b_text"].as_str().expect("quote");
    assert!(!quote.trim().is_empty());
}

/// A page whose stored text, tagged as canonical, is not its body's canonical text (a
/// canonicalisation changed without a new tag) cannot have its evidence placed in its
/// body: the copy found on it is not recorded, and the error says why; in a batch, the
/// other pages' copies are.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_text_that_is_not_its_bodys_is_refused_when_quoted() {
    let ch1 = String::from_utf8(sample("hongloumeng-01.txt")).expect("utf-8");
    let e = env(MatcherConfig::default()).await;
    let w =
        e.stores.works.upsert_work(&work("HLM", "红楼梦", &[("第一回 甄士隐梦幻识通灵", &ch1)])).await.expect("work");
    e.matcher.index_work(w.id).await.expect("index");
    let copy = tagged(html_page("http://pirate.example/hlm/1.html", sample("pirate-copy-big5.html")));
    let innocent = sample("other-chapter-gbk.html");
    let forged = NewPage { body: innocent, ..copy };
    let id = e.stores.pages.upsert_page(&forged).await.expect("page").id;
    let err = e.matcher.match_page(id).await.expect_err("the evidence cannot be quoted");
    assert!(err.to_string().contains("is not the canonical text of its body"), "{err}");
    assert!(all_matches(&e.stores).await.is_empty(), "nothing recorded");
    // In a batch, that page fails alone: a genuine copy beside it is recorded.
    let genuine = tagged(html_page("http://mirror.example/hlm/1.html", sample("pirate-copy-big5.html")));
    let good = e.stores.pages.upsert_page(&genuine).await.expect("page").id;
    let out = e.matcher.match_pages(vec![id, good]).await.expect("the batch is recorded");
    let result = |page: i64| out.iter().find(|(p, _)| *p == page).map(|(_, r)| r).expect("a result");
    let err = result(id).as_ref().expect_err("the forged page fails");
    assert!(err.to_string().contains("is not the canonical text of its body"), "{err}");
    let matched = result(good).as_ref().expect("the genuine copy is matched");
    assert_eq!(matched.matches.len(), 1, "{matched:?}");
    let stored: Vec<i64> = all_matches(&e.stores).await.into_iter().map(|m| m.1).collect();
    assert_eq!(stored, vec![good]);
}

/// `page` as a store written before canon tags holds it: the same canonical text, no tag,
/// fetched at `at`.
fn untagged(page: &NewPage, at: i64) -> NewPage {
    NewPage { canon_tag: None, fetched_at: zhiwen_store::Timestamp(at), ..page.clone() }
}

/// The canon tag of every page, by URL.
async fn tags(stores: &Stores, ids: &[i64]) -> Vec<(String, Option<String>)> {
    let mut pages = stores.pages.get_pages(ids, zhiwen_store::PageParts::Text).await.expect("pages");
    pages.sort_by(|a, b| a.url.cmp(&b.url));
    pages.into_iter().map(|p| (p.url, p.canon_tag)).collect()
}

/// Pages stored before canon tags were take the tag when a matcher, reading them from
/// their bodies, finds their stored text is the canonical text it makes (matching a batch
/// or matching a work against stored pages); from then on they are analysed from that
/// text, with the same stored matches. A page whose stored text is not its body's keeps no
/// tag.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_stored_without_a_tag_take_it_when_their_text_is_canonical() {
    let tag = zhiwen_core::params::CanonParams::default().tag();
    let (pages, works) = site();
    let e = env(MatcherConfig::default()).await;
    let news = e.stores.works.upsert_work(&works[0]).await.expect("work");
    e.matcher.index_work(news.id).await.expect("index");
    let stored: Vec<NewPage> = pages.iter().map(|(url, body)| tagged(html_page(url, body.clone()))).collect();
    let mut ids = Vec::new();
    for page in &stored {
        ids.push(e.stores.pages.upsert_page(&untagged(page, 1_700_000_000_000)).await.expect("page").id);
    }
    // Text an older extraction stored: not the canonical text of its body.
    let old = NewPage {
        url: "http://old.example/hlm/1.html".into(),
        text: "旧版提取的正文，与正文的规范文本不同。".into(),
        ..untagged(&stored[20], 1_700_000_000_000)
    };
    let old_id = e.stores.pages.upsert_page(&old).await.expect("page").id;
    ids.push(old_id);
    let out = e.matcher.match_pages(ids.clone()).await.expect("match");
    assert!(out.iter().all(|(_, r)| r.is_ok()), "{out:?}");
    let first = matches_by_url(&e.stores).await;
    assert!(first.iter().any(|m| m.0 == "http://news.example/story/0.html"), "{first:?}");
    for (url, t) in tags(&e.stores, &ids).await {
        let expected = (url != "http://old.example/hlm/1.html").then(|| tag.clone());
        assert_eq!(t, expected, "{url}");
    }
    // Matched again, now from their stored text: the same matches.
    let out = e.matcher.match_pages(ids.clone()).await.expect("match again");
    assert!(out.iter().all(|(_, r)| r.is_ok()), "{out:?}");
    assert_eq!(matches_by_url(&e.stores).await, first);

    // Stored again without a tag (another text, then this one: each a newer fetch that
    // carries no tag), while the page index still holds them: a work registered now is
    // matched against them, and they take the tag again.
    for (i, page) in stored.iter().enumerate() {
        let other = NewPage { text: format!("另一版本的正文 {i}"), ..untagged(page, 1_700_000_100_000) };
        e.stores.pages.upsert_page(&other).await.expect("page");
        e.stores.pages.upsert_page(&untagged(page, 1_700_000_200_000)).await.expect("page");
    }
    assert!(tags(&e.stores, &ids).await.iter().all(|(_, t)| t.is_none()));
    let hlm = e.stores.works.upsert_work(&works[1]).await.expect("work");
    let outcome = e.matcher.match_work(hlm.id).await.expect("match work");
    // The copy, and the old page with the same body (analysed from its body).
    let matched: Vec<i64> = outcome.matches.iter().map(|m| m.page_id).collect();
    assert_eq!(matched.len(), 2, "{outcome:?}");
    assert!(matched.contains(&old_id) && matched.contains(&ids[20]), "{matched:?}");
    let after = tags(&e.stores, &ids).await;
    let pirate = after.iter().find(|(url, _)| url == "http://pirate.example/hlm/1.html").expect("pirate copy");
    assert_eq!(pirate.1.as_deref(), Some(tag.as_str()), "a candidate of the work is tagged");
    let old = after.iter().find(|(url, _)| url == "http://old.example/hlm/1.html").expect("old page");
    assert_eq!(old.1, None);

    // One page matched alone takes its tag too.
    let other = NewPage { text: "又一版本的正文".into(), ..untagged(&stored[0], 1_700_000_300_000) };
    e.stores.pages.upsert_page(&other).await.expect("page");
    e.stores.pages.upsert_page(&untagged(&stored[0], 1_700_000_400_000)).await.expect("page");
    assert_eq!(tags(&e.stores, &ids[..1]).await[0].1, None);
    let outcome = e.matcher.match_page(ids[0]).await.expect("match page");
    assert_eq!(outcome.matches.len(), 1, "{outcome:?}");
    assert_eq!(tags(&e.stores, &ids[..1]).await[0].1.as_deref(), Some(tag.as_str()));
}
