use zhiwen_core::canon::slice_chars;
use zhiwen_matcher::{BoilerplateConfig, MatcherConfig};

use crate::support::*;

/// 50 stories on one site share a 400-character header; one story is registered as a
/// work. Without suppression the header alone makes false matches; with it, only the
/// registered story's own page matches.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_prefix_shared_by_every_story_creates_no_match() {
    let c = classics();
    let header = chars(&c["novel-shuihu-020"].1, 200, 400);
    let stories: Vec<String> =
        (0..50).map(|i| chars(&c[&format!("novel-xiyouji-{:03}", i + 10)].1, 500, 250)).collect();
    let mut false_matches = Vec::new();
    for enabled in [false, true] {
        let config =
            MatcherConfig { boilerplate: BoilerplateConfig { enabled, ..Default::default() }, ..Default::default() };
        let e = env(config).await;
        let registered = format!("{header}\n{}", stories[0]);
        let w = e.stores.works.upsert_work(&work("NEWS-0", "新闻一则", &[("", &registered)])).await.unwrap();
        e.matcher.index_work(w.id).await.unwrap();
        let mut pages = Vec::new();
        for (i, s) in stories.iter().enumerate() {
            let p = e
                .stores
                .pages
                .upsert_page(&text_page(&format!("http://news.example/story/{i}"), &format!("{header}\n{s}")))
                .await
                .unwrap();
            pages.push(p.id);
        }
        let mut matched = Vec::new();
        for (i, id) in pages.iter().enumerate() {
            let out = e.matcher.match_page(*id).await.unwrap();
            if out.matches.is_empty() {
                continue;
            }
            matched.push(i);
            if enabled {
                // The header was blanked, and the evidence still quotes the page as stored,
                // at the offsets it gives.
                assert!(out.boilerplate_chars >= 300, "{out:?}");
                let original = format!("{header}\n{}", stories[i]);
                let stored = e.stores.matches.get_match(out.matches[0].match_id).await.unwrap().expect("stored");
                assert!(!stored.comparison.evidence.is_empty());
                for ev in &stored.comparison.evidence {
                    assert_eq!(slice_chars(&original, ev.b_start, ev.b_end), ev.b_text);
                    assert!(!ev.b_text.trim().is_empty() && stories[i].contains(ev.b_text.trim()), "{ev:?}");
                }
            }
        }
        if enabled {
            assert_eq!(matched, vec![0], "only the registered story's own page matches");
        } else {
            false_matches = matched;
        }
    }
    assert!(false_matches.len() > 1, "without suppression the header makes false matches: {false_matches:?}");
}

/// One chapter copied onto many URLs of one site (the same text under each) is not that
/// site's boilerplate: counted page by page, it was on half of the sampled pages, and was
/// blanked out of every copy (16 copies: none matched).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chapter_on_many_urls_of_a_site_is_not_its_boilerplate() {
    let c = classics();
    let chapter = chars(&c["novel-xiyouji-012"].1, 0, 600);
    let e = env(MatcherConfig::default()).await;
    let w = e.stores.works.upsert_work(&work("XYJ-12", "西游记", &[("第十二回", &chapter)])).await.unwrap();
    e.matcher.index_work(w.id).await.unwrap();
    let mut pages = Vec::new();
    for i in 0..20 {
        let p = e
            .stores
            .pages
            .upsert_page(&text_page(&format!("http://pirate.example/read/{i}.html"), &chapter))
            .await
            .unwrap();
        pages.push(p.id);
    }
    for id in pages {
        let out = e.matcher.match_page(id).await.unwrap();
        assert_eq!((out.matches.len(), out.boilerplate_chars), (1, 0), "page {id}: {out:?}");
    }
}
