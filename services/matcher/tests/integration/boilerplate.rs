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
            if !e.matcher.match_page(*id).await.unwrap().matches.is_empty() {
                matched.push(i);
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
