//! Text seen elsewhere through the matcher (embedded store and index, one matching task):
//! a passage of a registered chapter that two other stored pages hold too, pages sharing
//! nothing else of the chapter, is a formula and accuses none of the three; a passage
//! the chapter's pirated copies hold (pages that copy the whole chapter) still accuses
//! the page quoting it, and so do a passage held only by the mirrors of the page quoting
//! it, a chapter's opening that its truncated copies hold, and a passage other pages hold
//! only filled with other figures. Switching the rule off accuses the three pages again.

use std::collections::HashMap;
use std::sync::Arc;

use zhiwen_core::{Fingerprinter, Params};
use zhiwen_index::{EmbeddedIndex, IndexConfig};
use zhiwen_matcher::task::{run_match_task, NoProgress, Scope, TaskControl, TaskSpec};
use zhiwen_matcher::{Matcher, MatcherConfig, SeenTextConfig};
use zhiwen_store::{NewPage, NewSection, NewWork, PageSource, StoreConfig, Timestamp};

use zhiwen_testkit::corpus::classic_texts as classics;

fn page(url: &str, text: String) -> NewPage {
    NewPage {
        url: url.into(),
        fetched_at: Timestamp(1_700_000_000_000),
        http_status: Some(200),
        charset: None,
        body: Vec::new(),
        text,
        format: None,
        canon_tag: None,
        source: PageSource::Import("test".into()),
    }
}

/// `n` content characters of `text` from character `start` on.
fn passage(text: &str, start: usize, n: usize) -> String {
    let mut seen = 0;
    text.chars()
        .skip(start)
        .take_while(|ch| {
            seen += usize::from(ch.is_alphanumeric());
            seen <= n
        })
        .collect()
}

/// Pages by role, each with whether the task matched it to the chapter.
async fn run(seen_text: SeenTextConfig) -> HashMap<&'static str, bool> {
    let c = classics();
    let dir = tempfile::tempdir().expect("tempdir");
    let stores = zhiwen_store::open(&StoreConfig::embedded(dir.path().join("store"))).await.expect("store");
    let index = Arc::new(EmbeddedIndex::open(dir.path().join("index.sqlite"), IndexConfig::default()).expect("index"));
    let fp = Fingerprinter::new(Params::default()).expect("fingerprinter");
    let matcher = Matcher::new(stores.clone(), index, fp, MatcherConfig { seen_text, ..Default::default() });

    let chapter = c["novel-shuihu-044"].clone();
    let n = chapter.chars().count() as u64;
    let work = NewWork {
        owner: "demo-press".into(),
        external_id: "shuihu-044".into(),
        title: "水浒传 第四十四回".into(),
        author: "施耐庵".into(),
        source_file: None,
        charset: None,
        text: chapter.clone(),
        sections: vec![NewSection {
            ordinal: 0,
            title: "第四十四回".into(),
            text: chapter.clone(),
            char_start: 0,
            char_end: n,
        }],
    };
    let work = stores.works.upsert_work(&work).await.expect("work");
    let section = stores.works.sections_of(work.id).await.expect("sections")[0].id;

    // Unrelated text around each quote: other chapters, never registered.
    let fillers = ["novel-sanguo-001", "novel-xiyouji-001", "novel-hongloumeng-001", "novel-sanguo-002"];
    let around = |i: usize, q: &str| {
        let f: Vec<char> = c[fillers[i % fillers.len()]].chars().collect();
        let at = 400 * (i / fillers.len());
        let before: String = f[at..at + 300].iter().collect();
        let after: String = f[at + 300..at + 600].iter().collect();
        format!("{before}\n{q}\n{after}")
    };
    let formula = passage(&chapter, 1_000, 150);
    let quoted = passage(&chapter, 3_000, 150);
    let mirrored = passage(&chapter, 5_000, 150);
    let mut pages: Vec<(&'static str, String, String)> = vec![
        // The formula: three pages that share one passage of the chapter and nothing else.
        ("formula-1", "http://a.example/1.html".into(), around(0, &formula)),
        ("formula-2", "http://b.example/2.html".into(), around(1, &formula)),
        ("formula-3", "http://c.example/3.html".into(), around(2, &formula)),
        // A real excerpt, the chapter copied whole on two other sites.
        ("excerpt", "http://d.example/4.html".into(), around(3, &quoted)),
        ("copy-1", "http://e.example/5.html".into(), chapter.clone()),
        ("copy-2", "http://f.example/6.html".into(), format!("笔趣阁 最新章节\n{chapter}\n加入书签")),
    ];
    // A real excerpt of the chapter's opening, which two truncated copies (the opening
    // and a little more) hold too.
    let opening = passage(&chapter, 0, 150);
    pages.push(("opening", "http://j.example/8.html".into(), around(6, &opening)));
    pages.push(("truncated-1", "http://k.example/9.html".into(), passage(&chapter, 0, 200)));
    pages.push((
        "truncated-2",
        "http://l.example/10.html".into(),
        format!("第四十四回\n{}", passage(&chapter, 0, 190)),
    ));
    // A real excerpt on a page mirrored on two other sites (the mirrors add a line).
    let quoting = around(5, &mirrored);
    for (i, (role, host)) in [("mirrored", "g"), ("mirror-1", "h"), ("mirror-2", "i")].into_iter().enumerate() {
        let text = if i == 0 { quoting.clone() } else { format!("{quoting}\n镜像站 {i}") };
        pages.push((role, format!("http://{host}.example/7.html"), text));
    }
    // A real excerpt whose wording two other pages hold filled with other figures (`十两银子`
    // as `三两银子`, `二十余人` as `二三余人`: numerals with the same pinyin initial, so only
    // the characters tell them apart, and no sampled character key covers them; checked
    // to be lost without reading the witnesses' figures).
    let silver = passage(&chapter, 7_330, 150);
    let refilled: String = silver
        .chars()
        .map(|ch| match ch {
            '十' => '三',
            '四' => '十',
            other => other,
        })
        .collect();
    assert_ne!(silver, refilled);
    pages.push(("silver", "http://m.example/11.html".into(), around(7, &silver)));
    pages.push(("refilled-1", "http://n.example/12.html".into(), around(8, &refilled)));
    pages.push(("refilled-2", "http://o.example/13.html".into(), around(9, &refilled)));
    let mut ids = HashMap::new();
    for (role, url, text) in pages {
        ids.insert(role, stores.pages.upsert_page(&page(&url, text)).await.expect("page").id);
    }

    run_match_task(&matcher, TaskSpec::new(Scope::All), &TaskControl::default(), &NoProgress).await.expect("task");
    let mut out = HashMap::new();
    for (role, id) in ids {
        out.insert(role, stores.matches.find_match(section, id).await.expect("find match").is_some());
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_passage_three_unrelated_pages_hold_accuses_none_a_pirated_or_mirrored_excerpt_still_does() {
    let on = run(SeenTextConfig::default()).await;
    for role in ["formula-1", "formula-2", "formula-3"] {
        assert!(!on[role], "{role}: a passage three pages hold and nothing else of the chapter accused it: {on:?}");
    }
    for role in ["refilled-1", "refilled-2"] {
        assert!(!on[role], "{role}: the passage filled with other figures accused it: {on:?}");
    }
    for role in [
        "excerpt",
        "copy-1",
        "copy-2",
        "mirrored",
        "mirror-1",
        "mirror-2",
        "opening",
        "truncated-1",
        "truncated-2",
        "silver",
    ] {
        assert!(on[role], "{role}: a copy was not found: {on:?}");
    }

    let off = run(SeenTextConfig { enabled: false, ..Default::default() }).await;
    for role in ["formula-1", "formula-2", "formula-3", "excerpt", "copy-1", "copy-2", "mirrored"] {
        assert!(off[role], "{role}: without the rule every quote is an excerpt: {off:?}");
    }
}
