//! Catalogue-common text through the matcher (embedded store and index): a page that
//! shares with a registered chapter only text found in many registered sections (plus a
//! line) leaves no match; a page quoting as many characters of that chapter's own text
//! is matched; switching the rule off accuses the first page again; a chapter deleted by
//! another process stops counting from the next task.

use std::collections::HashMap;
use std::sync::Arc;

use zhiwen_core::{Fingerprinter, Params};
use zhiwen_index::{CandidateIndex, EmbeddedIndex, IndexConfig, Namespace};
use zhiwen_matcher::task::{run_match_task, NoProgress, Scope, TaskControl, TaskSpec};
use zhiwen_matcher::{CatalogueConfig, Matcher, MatcherConfig};
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

/// Six chapters registered and indexed, two pages stored: one sharing with
/// `novel-shuihu-044` only a line and the banner four of the chapters carry, one
/// quoting as many characters of that chapter's own text.
struct Fixture {
    _dir: tempfile::TempDir,
    stores: zhiwen_store::Stores,
    index: Arc<EmbeddedIndex>,
    matcher: Matcher,
    works: HashMap<&'static str, i64>,
    banner_page: i64,
    excerpt_page: i64,
}

async fn fixture(c: &HashMap<String, String>, catalogue: CatalogueConfig) -> Fixture {
    fixture_with(c, MatcherConfig { catalogue, ..Default::default() }).await
}

async fn fixture_with(c: &HashMap<String, String>, config: MatcherConfig) -> Fixture {
    let dir = tempfile::tempdir().expect("tempdir");
    let stores = zhiwen_store::open(&StoreConfig::embedded(dir.path().join("store"))).await.expect("store");
    let index = Arc::new(EmbeddedIndex::open(dir.path().join("index.sqlite"), IndexConfig::default()).expect("index"));
    let fp = Fingerprinter::new(Params::default()).expect("fingerprinter");
    let matcher = Matcher::new(stores.clone(), index.clone(), fp, config);
    // Four chapters of four classics carry the same banner of the site they were taken
    // from; two do not.
    let ids = [
        "novel-shuihu-044",
        "novel-xiyouji-048",
        "novel-sanguo-069",
        "novel-hongloumeng-056",
        "novel-shuihu-043",
        "novel-xiyouji-047",
    ];
    let mut works = HashMap::new();
    for id in ids {
        let text = c[id].clone();
        let n = text.chars().count() as u64;
        let w = NewWork {
            owner: "demo-press".into(),
            external_id: id.into(),
            title: id.into(),
            author: "佚名".into(),
            source_file: None,
            charset: None,
            text: text.clone(),
            sections: vec![NewSection { ordinal: 0, title: id.into(), text, char_start: 0, char_end: n }],
        };
        let w = stores.works.upsert_work(&w).await.expect("work");
        matcher.index_work(w.id).await.expect("index work");
        works.insert(id, w.id);
    }
    let chapter: Vec<char> = c["novel-shuihu-044"].chars().collect();
    let filler: Vec<char> = c["novel-sanguo-001"].chars().collect();
    let at = c["novel-shuihu-044"].find("为每位爱好文字").expect("banner");
    let at = c["novel-shuihu-044"][..at].chars().count();
    let end = at + chapter[at..].iter().position(|&ch| ch == '。').expect("banner ends") + 1;
    let shared: String = chapter[at - 120..end].iter().collect();
    let len = shared.chars().filter(|ch| ch.is_alphanumeric()).count();
    let mut n = 0;
    let quote: String = chapter[2_000..]
        .iter()
        .take_while(|ch| {
            n += usize::from(ch.is_alphanumeric());
            n <= len
        })
        .collect();
    let wrap = |q: &str| {
        format!("{}\n{q}\n{}", filler[..300].iter().collect::<String>(), filler[300..560].iter().collect::<String>())
    };
    let banner_page = stores.pages.upsert_page(&page("http://a.example/1.html", wrap(&shared))).await.expect("page").id;
    let excerpt_page = stores.pages.upsert_page(&page("http://b.example/2.html", wrap(&quote))).await.expect("page").id;
    Fixture { _dir: dir, stores, index, matcher, works, banner_page, excerpt_page }
}

/// Matches recorded for (banner page, excerpt page) with this catalogue configuration.
async fn run(c: &HashMap<String, String>, catalogue: CatalogueConfig) -> (usize, usize) {
    let f = fixture(c, catalogue).await;
    let banner = f.matcher.match_page(f.banner_page).await.expect("match banner page").matches.len();
    let excerpt = f.matcher.match_page(f.excerpt_page).await.expect("match excerpt page").matches.len();
    (banner, excerpt)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn catalogue_common_text_does_not_accuse_a_page_a_real_excerpt_of_that_length_does() {
    let c = classics();
    assert_eq!(run(&c, CatalogueConfig::default()).await, (0, 1), "default: the banner page leaves no match");
    let off = CatalogueConfig { enabled: false, ..Default::default() };
    assert_eq!(run(&c, off).await, (1, 1), "without the rule the shared banner accuses the page");
}

/// Another process deletes two of the four chapters carrying the banner (as `DELETE
/// /api/v1/works/{id}` does: store and index). The banner is then in fewer chapters than
/// the rule's minimum, so from the next task it is the chapter's own text again, and the
/// page sharing it and a line with that chapter is matched.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_work_deleted_by_another_process_leaves_the_common_text_from_the_next_task() {
    let c = classics();
    let f = fixture(&c, CatalogueConfig::default()).await;
    let task = || async {
        run_match_task(&f.matcher, TaskSpec::new(Scope::All), &TaskControl::default(), &NoProgress).await.expect("task")
    };
    let shuihu = f.stores.works.sections_of(f.works["novel-shuihu-044"]).await.expect("sections")[0].id;
    let banner_match = || async { f.stores.matches.find_match(shuihu, f.banner_page).await.expect("find match") };
    task().await;
    assert!(banner_match().await.is_none(), "the banner common to four chapters accused the page");

    for id in ["novel-xiyouji-048", "novel-sanguo-069"] {
        let deleted = f.stores.queries.delete_work(f.works[id]).await.expect("delete").expect("the work existed");
        for section in deleted.section_ids {
            f.index.remove(Namespace::Sections, section as u64).await.expect("index remove");
        }
    }
    task().await;
    assert!(banner_match().await.is_some(), "the banner left in two chapters still counted as common text");
}

/// Shuihu chapters 76 and 109, two sections of one registered work, describe battle
/// arrays with the same heroes in the same words. A page copying chapter 76 whole is
/// matched to 76 only, whether the pages are matched against the work (a task) or the
/// work against the stored pages (`match_work`); a page holding, besides, an excerpt of
/// 109's own text is matched to both.
#[tokio::test]
async fn a_page_copying_one_chapter_is_not_matched_to_another_chapter_sharing_its_passages() {
    let c = classics();
    let (s, w) = (c["novel-shuihu-076"].clone(), c["novel-shuihu-109"].clone());
    let own: String = w.chars().take(600).collect();
    for pages_first in [false, true] {
        let dir = tempfile::tempdir().expect("tempdir");
        let stores = zhiwen_store::open(&StoreConfig::embedded(dir.path().join("store"))).await.expect("store");
        let index =
            Arc::new(EmbeddedIndex::open(dir.path().join("index.sqlite"), IndexConfig::default()).expect("index"));
        let fp = Fingerprinter::new(Params::default()).expect("fingerprinter");
        let config = MatcherConfig { index_pages: true, ..Default::default() };
        let matcher = Matcher::new(stores.clone(), index, fp, config);
        let mut ids = Vec::new();
        for (i, text) in [s.clone(), format!("{s}\n{own}")].into_iter().enumerate() {
            let url = format!("http://p.example/{i}.html");
            ids.push(stores.pages.upsert_page(&page(&url, text)).await.expect("page").id);
        }
        if pages_first {
            for &id in &ids {
                matcher.match_page(id).await.expect("page indexed");
            }
        }
        let mut sections = Vec::new();
        let mut at = 0u64;
        for (ordinal, text) in [&s, &w].into_iter().enumerate() {
            let n = text.chars().count() as u64;
            let title = format!("第{}回", [76, 109][ordinal]);
            sections.push(NewSection {
                ordinal: ordinal as u32,
                title,
                text: text.clone(),
                char_start: at,
                char_end: at + n,
            });
            at += n;
        }
        let work = NewWork {
            owner: "demo-press".into(),
            external_id: "shuihu".into(),
            title: "水浒传".into(),
            author: "施耐庵".into(),
            source_file: None,
            charset: None,
            text: format!("{s}{w}"),
            sections,
        };
        let work = stores.works.upsert_work(&work).await.expect("work");
        if pages_first {
            matcher.match_work(work.id).await.expect("work matched");
        } else {
            matcher.index_work(work.id).await.expect("index work");
            run_match_task(&matcher, TaskSpec::new(Scope::All), &TaskControl::default(), &NoProgress)
                .await
                .expect("task");
        }
        let sections = stores.works.sections_of(work.id).await.expect("sections");
        let mut matched = Vec::new();
        for &page in &ids {
            for section in &sections {
                matched.push(stores.matches.find_match(section.id, page).await.expect("find match").is_some());
            }
        }
        let how = if pages_first { "work against pages" } else { "pages against the work" };
        assert_eq!(matched, [true, false, true, true], "{how}: (page, chapter 76 / 109)");
    }
}

/// The profile a matcher reads from the index is the one its definition gives
/// ([`CatalogueProfile::measure`] over every stored section's winnowed character keys),
/// with every key indexed, and its sample with 1 in 8 (the default).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_profile_read_from_the_index_is_the_one_measured_from_the_fingerprints() {
    use zhiwen_matcher::catalogue::CatalogueProfile;
    let c = classics();
    for sampling in [1, 8] {
        let f = fixture_with(&c, MatcherConfig { section_index_sampling: sampling, ..Default::default() }).await;
        let mut streams = Vec::new();
        let mut after = 0;
        loop {
            let recs = f.stores.fingerprints.scan_fingerprints(zhiwen_store::SubjectKind::Section, after, 100).await;
            let recs = recs.expect("scan");
            let Some(last) = recs.last() else { break };
            after = last.subject.id;
            streams.extend(recs.into_iter().map(|r| r.fingerprints.winnow_chars));
        }
        let measured = CatalogueProfile::measure(streams.iter().map(|s| s.as_slice()), &CatalogueConfig::default());
        let read = f.matcher.catalogue().await.expect("profile");
        assert!(measured.kgrams.len() >= 10, "{} common keys", measured.kgrams.len());
        let expected = CatalogueProfile::sampled(measured.kgrams, sampling);
        assert!(expected.kgrams.len() >= 2, "1 in {sampling}: {} common keys", expected.kgrams.len());
        assert_eq!((read.kgrams.clone(), read.sampling), (expected.kgrams, sampling));
    }
}
