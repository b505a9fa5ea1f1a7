//! Integration tests of the matcher on the embedded store and the embedded index, with
//! public-domain texts only (the bundled samples and the classics of the test corpus).
//! One binary, one module per subject.

mod support {
    use std::path::PathBuf;
    use std::sync::Arc;

    use zhiwen_core::{Fingerprinter, Params};
    use zhiwen_index::{EmbeddedIndex, IndexConfig};
    use zhiwen_matcher::{Matcher, MatcherConfig};
    use zhiwen_store::{NewPage, NewSection, NewWork, PageSource, StoreConfig, Stores, Timestamp};

    pub struct Env {
        pub _dir: tempfile::TempDir,
        pub stores: Stores,
        pub matcher: Matcher,
    }

    pub async fn env(config: MatcherConfig) -> Env {
        let dir = tempfile::tempdir().expect("tempdir");
        let stores = zhiwen_store::open(&StoreConfig::embedded(dir.path().join("store"))).await.expect("store");
        let index =
            Arc::new(EmbeddedIndex::open(dir.path().join("index.sqlite"), IndexConfig::default()).expect("index"));
        let fp = Fingerprinter::new(Params::default()).expect("fingerprinter");
        let matcher = Matcher::new(stores.clone(), index, fp, config);
        Env { _dir: dir, stores, matcher }
    }

    pub fn repo() -> PathBuf {
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
    }

    pub fn sample(name: &str) -> Vec<u8> {
        std::fs::read(repo().join("samples").join(name)).expect("bundled sample")
    }

    pub use zhiwen_testkit::corpus::classics;

    /// The bundled chapters of a JSONL file of `samples/` (`works/classics.jsonl`,
    /// `site/unregistered.jsonl`, `site/filler.jsonl`): (id, text) in file order.
    pub fn bundled(name: &str) -> Vec<(String, String)> {
        let text = String::from_utf8(sample(name)).expect("UTF-8 sample");
        text.lines()
            .map(|l| {
                let v: serde_json::Value = serde_json::from_str(l).expect("JSONL");
                (v["id"].as_str().unwrap_or_default().to_owned(), v["text"].as_str().unwrap_or_default().to_owned())
            })
            .collect()
    }

    pub fn chars(s: &str, start: usize, len: usize) -> String {
        s.chars().skip(start).take(len).collect()
    }

    pub fn work(external_id: &str, title: &str, sections: &[(&str, &str)]) -> NewWork {
        let mut text = String::new();
        let mut secs = Vec::new();
        for (i, (t, body)) in sections.iter().enumerate() {
            let start = text.chars().count() as u64;
            text.push_str(body);
            let end = text.chars().count() as u64;
            secs.push(NewSection {
                ordinal: i as u32,
                title: (*t).to_owned(),
                text: (*body).to_owned(),
                char_start: start,
                char_end: end,
            });
        }
        NewWork {
            owner: "demo-press".into(),
            external_id: external_id.into(),
            title: title.into(),
            author: "佚名".into(),
            source_file: None,
            charset: None,
            text,
            sections: secs,
        }
    }

    pub fn text_page(url: &str, text: &str) -> NewPage {
        NewPage {
            url: url.into(),
            fetched_at: Timestamp(1_700_000_000_000),
            http_status: Some(200),
            charset: None,
            body: Vec::new(),
            text: text.into(),
            source: PageSource::Import("test".into()),
        }
    }

    pub fn html_page(url: &str, body: Vec<u8>) -> NewPage {
        NewPage {
            url: url.into(),
            fetched_at: Timestamp(1_700_000_000_000),
            http_status: Some(200),
            charset: None,
            body,
            text: String::new(),
            source: PageSource::Crawl,
        }
    }

    /// Every match as comparable values: (section, page, kind, score, top evidence).
    pub async fn all_matches(stores: &Stores) -> Vec<(i64, i64, String, u64, usize)> {
        let mut out = Vec::new();
        let mut after = 0;
        loop {
            let page = stores.matches.list_matches(&Default::default(), after, 200).await.expect("list matches");
            let Some(last) = page.last() else { break };
            after = last.id;
            for m in page {
                out.push((m.section_id, m.page_id, m.kind.clone(), m.score.to_bits(), m.comparison.evidence.len()));
            }
        }
        out.sort();
        out
    }
}

mod matching {
    use zhiwen_matcher::{MatchKind, MatcherConfig};
    use zhiwen_store::{Outcome, Subject};

    use crate::support::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn pirate_page_is_matched_to_the_right_chapter_and_innocent_pages_leave_nothing() {
        let e = env(MatcherConfig::default()).await;
        let ch1 = String::from_utf8(sample("hongloumeng-01.txt")).expect("utf-8");
        let ch3 = classics()["novel-hongloumeng-003"].1.clone();
        let w = e
            .stores
            .works
            .upsert_work(&work("HLM", "红楼梦", &[("第一回", &ch1), ("第三回", &ch3)]))
            .await
            .expect("work");
        let report = e.matcher.index_work(w.id).await.expect("index work");
        assert_eq!(report.indexed, 2);
        // Indexing again skips unchanged sections.
        assert_eq!(e.matcher.index_work(w.id).await.expect("reindex").unchanged, 2);

        let pirate = sample("pirate-copy-big5.html");
        let p1 =
            e.stores.pages.upsert_page(&html_page("http://pirate.example/hlm/1.html", pirate.clone())).await.unwrap();
        let p2 = e
            .stores
            .pages
            .upsert_page(&html_page("http://other.example/hlm/2.html", sample("other-chapter-gbk.html")))
            .await
            .unwrap();
        let out = e.matcher.match_page(p1.id).await.expect("match pirate");
        assert_eq!(out.matches.len(), 1, "{out:?}");
        let m = &out.matches[0];
        assert_eq!(m.section_id, w.sections[0].1, "matched to chapter 1");
        // The pirate page holds the first part of chapter 1 (with ads, navigation and
        // homophone substitutions): the page is inside the section.
        assert_eq!(m.kind, MatchKind::Excerpt);
        assert!(m.score >= 0.5);
        // Evidence quotes both originals: the section as stored, the page as decoded (Big5, traditional).
        assert!(ch1.contains(&m.evidence_section), "section quote is original text");
        let decoded = zhiwen_core::canon::decode(&pirate, None).expect("decode").text;
        assert!(decoded.contains(&m.evidence_page), "page quote is original text");
        assert!(m.evidence_page.chars().count() >= 50);
        let stored = e.stores.matches.get_match(m.match_id).await.unwrap().expect("stored");
        assert!(!stored.comparison.evidence.is_empty());
        assert!(stored.comparison.evidence.iter().all(|ev| decoded.contains(&ev.b_text) && ch1.contains(&ev.a_text)));

        // The other chapter (not registered) leaves no match record.
        let out2 = e.matcher.match_page(p2.id).await.expect("match other");
        assert!(out2.matches.is_empty(), "{out2:?}");
        assert_eq!(all_matches(&e.stores).await.len(), 1);

        // Idempotent: matching again changes nothing.
        let before = all_matches(&e.stores).await;
        let again = e.matcher.match_page(p1.id).await.expect("again");
        assert_eq!(again.matches[0].outcome, Outcome::Unchanged);
        e.matcher.match_page(p2.id).await.expect("again other");
        assert_eq!(all_matches(&e.stores).await, before);
    }

    /// A matcher remembers which sections it indexed; a section whose text changed in the
    /// store since (another process edited the work) is fingerprinted and indexed again,
    /// and pages are matched against the new text.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_section_changed_in_the_store_since_it_was_indexed_is_indexed_again() {
        let e = env(MatcherConfig::default()).await;
        let ch1 = String::from_utf8(sample("hongloumeng-01.txt")).expect("utf-8");
        let (before, after) = (chars(&ch1, 0, 1500), chars(&ch1, 1500, 1500));
        let w = e.stores.works.upsert_work(&work("HLM", "红楼梦", &[("第一节", &before)])).await.expect("work");
        assert_eq!(e.matcher.index_work(w.id).await.expect("index").indexed, 1);
        assert_eq!(e.matcher.index_work(w.id).await.expect("index again").unchanged, 1);
        let w2 = e.stores.works.upsert_work(&work("HLM", "红楼梦", &[("第一节", &after)])).await.expect("changed work");
        assert_eq!(w2.id, w.id);
        let report = e.matcher.index_work(w.id).await.expect("index the changed work");
        assert_eq!((report.indexed, report.unchanged), (1, 0));
        assert_eq!(e.matcher.index_work(w.id).await.expect("and again").unchanged, 1);
        let page = e.stores.pages.upsert_page(&text_page("http://pirate.example/hlm/new", &after)).await.expect("page");
        let out = e.matcher.match_page(page.id).await.expect("match");
        assert_eq!(out.matches.len(), 1, "the new text is found: {out:?}");
        // A new title only: the importer drops the fingerprints of an updated work's
        // sections, and the same text is fingerprinted and stored again.
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        let w3 =
            e.stores.works.upsert_work(&work("HLM", "红楼梦 新版", &[("第一节", &after)])).await.expect("new title");
        assert_eq!(w3.outcome, Outcome::Updated);
        for (_, id) in &w3.sections {
            e.stores.fingerprints.delete_fingerprints(Subject::section(*id)).await.expect("drop fingerprints");
        }
        assert_eq!(e.matcher.index_work(w.id).await.expect("index the renamed work").indexed, 1);
        let id = w3.sections[0].1;
        assert!(e.stores.fingerprints.get_fingerprints(Subject::section(id)).await.expect("read").is_some());
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn excerpt_and_embedded_kinds_and_the_reverse_direction() {
        let c = classics();
        let e = env(MatcherConfig::default()).await;
        let sg1 = &c["novel-sanguo-001"].1;
        let sg2 = &c["novel-sanguo-002"].1;
        let xy1 = &c["novel-xiyouji-001"].1;
        let xy2 = &c["novel-xiyouji-002"].1;
        // Pages stored BEFORE the work exists.
        let excerpt = format!("{}{}{}", chars(xy1, 0, 2500), chars(sg1, 1000, 700), chars(xy2, 0, 2500));
        let embedded = format!("{}{}{}", chars(xy2, 0, 3000), sg2, chars(xy1, 3000, 3000));
        let innocent = c["novel-shuihu-010"].1.clone();
        let mut ids = Vec::new();
        for (url, text) in [
            ("http://blog.example/a", excerpt.as_str()),
            ("http://mirror.example/b", embedded.as_str()),
            ("http://shuihu.example/c", innocent.as_str()),
        ] {
            let p = e.stores.pages.upsert_page(&text_page(url, text)).await.unwrap();
            assert_eq!(e.matcher.index_page(p.id).await.unwrap().indexed, 1);
            ids.push(p.id);
        }
        let w = e.stores.works.upsert_work(&work("SG", "三国演义", &[("第一回", sg1), ("第二回", sg2)])).await.unwrap();
        let out = e.matcher.match_work(w.id).await.expect("reverse");
        let mut found: Vec<(i64, i64, MatchKind)> =
            out.matches.iter().map(|m| (m.section_id, m.page_id, m.kind)).collect();
        found.sort();
        assert_eq!(
            found,
            vec![(w.sections[0].1, ids[0], MatchKind::Excerpt), (w.sections[1].1, ids[1], MatchKind::Embedded)],
            "{out:?}"
        );
        // The forward direction agrees pair by pair.
        let before = all_matches(&e.stores).await;
        for id in &ids {
            e.matcher.match_page(*id).await.expect("forward");
        }
        assert_eq!(all_matches(&e.stores).await, before);
    }
}

mod boilerplate {
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
            let config = MatcherConfig {
                boilerplate: BoilerplateConfig { enabled, ..Default::default() },
                ..Default::default()
            };
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
}

mod tasks {
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;

    use zhiwen_matcher::task::{run_match_task, NoProgress, ProgressSink, Scope, TaskControl, TaskProgress, TaskSpec};
    use zhiwen_matcher::{MatcherConfig, MatcherError};
    use zhiwen_store::TaskState;

    use crate::support::*;

    /// A fresh store holding the four chapters and the 20 pages (a third with a copy).
    async fn populated(c: &std::collections::HashMap<String, (String, String)>) -> Env {
        let e = env(config()).await;
        let sections: Vec<(String, String)> =
            (1..=4).map(|i| (format!("第{i}回"), c[&format!("novel-shuihu-{i:03}")].1.clone())).collect();
        let refs: Vec<(&str, &str)> = sections.iter().map(|(t, s)| (t.as_str(), s.as_str())).collect();
        e.stores.works.upsert_work(&work("SH", "水浒传", &refs)).await.unwrap();
        for i in 0..20 {
            let text = if i % 3 == 0 {
                // A copy: an excerpt of one registered chapter inside other text.
                let src = &c[&format!("novel-shuihu-{:03}", i % 4 + 1)].1;
                format!("{}{}", chars(&c[&format!("novel-xiyouji-{:03}", i + 30)].1, 0, 1500), chars(src, 500, 1200))
            } else {
                chars(&c[&format!("novel-xiyouji-{:03}", i + 30)].1, 0, 2500)
            };
            e.stores.pages.upsert_page(&text_page(&format!("http://s{}.example/{i}", i % 3), &text)).await.unwrap();
        }
        e
    }

    fn config() -> MatcherConfig {
        MatcherConfig { batch_size: 4, concurrency: 2, ..Default::default() }
    }

    /// The matches of one uninterrupted task over the populated pages (the reference the
    /// interrupted runs must end with).
    async fn uninterrupted_matches(
        c: &std::collections::HashMap<String, (String, String)>,
    ) -> Vec<(i64, i64, String, u64, usize)> {
        let whole = populated(c).await;
        let s = run_match_task(&whole.matcher, TaskSpec::new(Scope::All), &TaskControl::default(), &NoProgress)
            .await
            .expect("uninterrupted");
        assert_eq!(s.state, TaskState::Succeeded);
        assert_eq!(s.pages, 20);
        let expected = all_matches(&whole.stores).await;
        assert!(expected.len() >= 5, "copies found: {expected:?}");
        expected
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn resumed_after_interruptions_ends_with_the_matches_of_an_uninterrupted_run() {
        let c = classics();
        let expected = uninterrupted_matches(&c).await;

        let broken = populated(&c).await;
        for stop in [3u64, 6, 1] {
            let control = TaskControl { stop_after_pages: Some(stop), ..Default::default() };
            match run_match_task(&broken.matcher, TaskSpec::new(Scope::All), &control, &NoProgress).await {
                Err(MatcherError::Interrupted { .. }) => {}
                other => panic!("expected an interruption, got {other:?}"),
            }
        }
        let s = run_match_task(&broken.matcher, TaskSpec::new(Scope::All), &TaskControl::default(), &NoProgress)
            .await
            .expect("resumed");
        assert_eq!(s.state, TaskState::Succeeded);
        assert_eq!(all_matches(&broken.stores).await, expected);
        // Every task ended; nothing is left running.
        let running = broken.stores.tasks.list_tasks(Some(TaskState::Running), 0, 10).await.unwrap();
        assert!(running.is_empty(), "{running:?}");

        // A second run "new since the last run" finds no new pages and changes nothing.
        let s = run_match_task(
            &broken.matcher,
            TaskSpec::new(Scope::NewSinceLastRun),
            &TaskControl::default(),
            &NoProgress,
        )
        .await
        .expect("incremental");
        assert_eq!(s.pages, 0);
        assert_eq!(all_matches(&broken.stores).await, expected);
    }

    /// Cancels its run once `after` of the 20 pages are done (counting earlier runs).
    struct CancelAfter {
        cancel: Arc<AtomicBool>,
        after: u64,
    }

    impl ProgressSink for CancelAfter {
        fn update(&self, p: &TaskProgress) {
            // `total` counts the works too, which come first.
            if p.done >= p.total.saturating_sub(20) + self.after {
                self.cancel.store(true, Ordering::SeqCst);
            }
        }
    }

    /// Without a page limit a task records one batch while it verifies the next (whose
    /// page keys are then already written): a run cancelled there, and
    /// resumed, still ends with the matches of an uninterrupted run.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn cancelled_between_verifying_and_recording_and_resumed_gives_the_same_matches() {
        let c = classics();
        let expected = uninterrupted_matches(&c).await;

        let broken = populated(&c).await;
        // Mid-batch, at a batch's end, and in the last batch (batches of 4 pages).
        for after in [6u64, 12, 17] {
            let control = TaskControl::default();
            let sink = CancelAfter { cancel: control.cancel.clone(), after };
            match run_match_task(&broken.matcher, TaskSpec::new(Scope::All), &control, &sink).await {
                Err(MatcherError::Interrupted { .. }) => {}
                other => panic!("expected an interruption after {after} pages, got {other:?}"),
            }
            let task = broken.stores.tasks.list_tasks(Some(TaskState::Running), 0, 10).await.unwrap();
            let progress = task.first().map(|t| t.progress).expect("the interrupted task");
            let pages_checkpointed = progress.done - (progress.total - 20);
            assert!(pages_checkpointed < 20, "interrupted after {after}: {task:?}");
            if after == 6 {
                // The batch after the interrupted one was verified: its pages are in the
                // page namespace, beyond the checkpoint.
                let stats = broken.matcher.index().stats().await.unwrap();
                let indexed = stats.namespace(zhiwen_index::Namespace::Pages).documents;
                assert!(indexed > pages_checkpointed + 4, "{indexed} pages indexed, {progress:?}");
            }
        }
        let s = run_match_task(&broken.matcher, TaskSpec::new(Scope::All), &TaskControl::default(), &NoProgress)
            .await
            .expect("resumed");
        assert_eq!(s.state, TaskState::Succeeded);
        assert_eq!(all_matches(&broken.stores).await, expected);
    }

    /// Holds its run in its first progress report until released.
    struct HoldAtFirstReport {
        started: std::sync::mpsc::Sender<()>,
        release: Arc<AtomicBool>,
    }

    impl ProgressSink for HoldAtFirstReport {
        fn update(&self, _: &TaskProgress) {
            if self.started.send(()).is_ok() {
                while !self.release.load(Ordering::SeqCst) {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            }
        }
    }

    /// One process may run the tasks of several stores, whose task ids overlap: a task
    /// running for one store neither stops an interrupted task of another store (with the
    /// same id) from being resumed, nor is taken over itself.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_task_running_for_another_store_with_the_same_id_does_not_block_resuming() {
        let c = classics();
        let here = populated(&c).await;
        let control = TaskControl { stop_after_pages: Some(3), ..Default::default() };
        let interrupted = run_match_task(&here.matcher, TaskSpec::new(Scope::All), &control, &NoProgress).await;
        let Err(MatcherError::Interrupted { task_id }) = interrupted else { panic!("{interrupted:?}") };

        // The other store's task runs on a runtime of its own, as another worker loop of
        // the process would, and is held mid-task (a blocked thread of this runtime could
        // hold up tasks queued behind it).
        let (started, started_rx) = std::sync::mpsc::channel();
        let release = Arc::new(AtomicBool::new(false));
        let sink = HoldAtFirstReport { started, release: release.clone() };
        let other_corpus = c.clone();
        let held = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
            rt.block_on(async move {
                let elsewhere = populated(&other_corpus).await;
                let s =
                    run_match_task(&elsewhere.matcher, TaskSpec::new(Scope::All), &TaskControl::default(), &sink).await;
                (s, all_matches(&elsewhere.stores).await)
            })
        });
        tokio::task::spawn_blocking(move || started_rx.recv()).await.unwrap().expect("the other task started");

        let resumed = run_match_task(&here.matcher, TaskSpec::new(Scope::All), &TaskControl::default(), &NoProgress)
            .await
            .expect("resumed while the other store's task runs");
        assert_eq!(resumed.state, TaskState::Succeeded);
        let interrupted = here.stores.tasks.get_task(task_id).await.unwrap().expect("the interrupted task");
        assert_eq!(interrupted.state, TaskState::Succeeded, "resumed first: {interrupted:?}");

        release.store(true, Ordering::SeqCst);
        let (other, other_matches) = tokio::task::spawn_blocking(move || held.join()).await.unwrap().unwrap();
        let other = other.expect("the other store's task");
        assert_eq!((other.task_id, other.state, other.resumed), (task_id, TaskState::Succeeded, false), "same id");
        assert_eq!(all_matches(&here.stores).await, other_matches);
    }
}

mod mirrors {
    use zhiwen_matcher::MatcherConfig;
    use zhiwen_store::{MatchFilter, Stores};

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
        let all = stores.matches.list_matches(&MatchFilter::default(), 0, 100).await.expect("list");
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
}

mod pending_tasks {
    use zhiwen_matcher::task::{run_match_task, NoProgress, Scope, TaskControl, TaskSpec};
    use zhiwen_matcher::{MatcherConfig, MatcherError};
    use zhiwen_store::{NewTask, TaskState};

    use crate::support::*;

    /// The four bundled chapters registered, and 16 pages: excerpts of them inside news
    /// stories, and innocent pages (unregistered chapters, news).
    async fn populated() -> Env {
        let e = env(MatcherConfig { batch_size: 4, concurrency: 2, ..Default::default() }).await;
        let works = bundled("works/classics.jsonl");
        let sections: Vec<(&str, &str)> = works.iter().map(|(id, t)| (id.as_str(), t.as_str())).collect();
        e.stores.works.upsert_work(&work("CLASSICS", "四大名著 第一回", &sections)).await.expect("work");
        let others: Vec<String> = bundled("site/unregistered.jsonl").into_iter().map(|(_, t)| t).collect();
        let news: Vec<String> = bundled("site/filler.jsonl").into_iter().map(|(_, t)| t).collect();
        for i in 0..16usize {
            let text = if i % 3 == 0 {
                let (_, chapter) = &works[i / 3 % works.len()];
                format!("{}{}{}", news[i % news.len()], chars(chapter, 300, 1200), news[(i + 1) % news.len()])
            } else {
                chars(&others[i % others.len()], (i / 3 % 4) * 1400, 1500)
            };
            e.stores
                .pages
                .upsert_page(&text_page(&format!("http://s{}.example/{i}", i % 2), &text))
                .await
                .expect("page");
        }
        e
    }

    /// The matching tasks in the store: (state, key).
    async fn match_tasks(e: &Env) -> Vec<(TaskState, String)> {
        let all = e.stores.tasks.list_tasks(None, 0, 100).await.expect("tasks");
        all.into_iter().filter(|t| t.kind == "match").map(|t| (t.state, t.key)).collect()
    }

    /// A run stopped mid-task leaves its task to the next run of the same request, which
    /// resumes it instead of queueing another: after three interrupted runs the fourth
    /// finishes the one task, and no other pass runs.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn interrupted_runs_leave_one_task_which_the_next_run_finishes() {
        let whole = populated().await;
        let s =
            run_match_task(&whole.matcher, TaskSpec::new(Scope::NewSinceLastRun), &TaskControl::default(), &NoProgress)
                .await
                .expect("uninterrupted");
        let expected = all_matches(&whole.stores).await;
        assert!(expected.len() >= 4, "{s:?} {expected:?}");

        let e = populated().await;
        for stop in [3u64, 6, 2] {
            let control = TaskControl { stop_after_pages: Some(stop), ..Default::default() };
            match run_match_task(&e.matcher, TaskSpec::new(Scope::NewSinceLastRun), &control, &NoProgress).await {
                Err(MatcherError::Interrupted { .. }) => {}
                other => panic!("expected an interruption, got {other:?}"),
            }
            assert_eq!(match_tasks(&e).await.len(), 1, "one task for the one request: {:?}", match_tasks(&e).await);
        }
        let s = run_match_task(&e.matcher, TaskSpec::new(Scope::NewSinceLastRun), &TaskControl::default(), &NoProgress)
            .await
            .expect("resumed");
        assert!(s.resumed, "{s:?}");
        let tasks = match_tasks(&e).await;
        assert_eq!(tasks.len(), 1, "{tasks:?}");
        assert_eq!(tasks[0].0, TaskState::Succeeded);
        assert_eq!(all_matches(&e.stores).await, expected);
    }

    /// A run refused because a live worker (a server, another host) is running a matching
    /// task leaves nothing queued behind, whatever its scope.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_run_refused_by_a_live_worker_leaves_nothing_queued() {
        let e = populated().await;
        let params = serde_json::json!({"scope": {"scope": "all"}, "since": null});
        let (task, _) = e
            .stores
            .tasks
            .create_task(&NewTask { key: "match:server".into(), kind: "match".into(), params })
            .await
            .expect("task");
        let claimed = e.stores.tasks.claim_task(Some("match"), "a-server-host/4242/1").await.expect("claim");
        assert_eq!(claimed.map(|t| t.id), Some(task.id));
        for scope in [Scope::NewSinceLastRun, Scope::All] {
            match run_match_task(&e.matcher, TaskSpec::new(scope), &TaskControl::default(), &NoProgress).await {
                Err(MatcherError::AlreadyRunning { task_id, .. }) => assert_eq!(task_id, task.id),
                other => panic!("expected a refusal, got {other:?}"),
            }
        }
        assert_eq!(match_tasks(&e).await, vec![(TaskState::Running, "match:server".to_owned())]);
    }
}

mod export {
    use calamine::Reader;
    use zhiwen_matcher::export::{export_matches, ExportFormat, COLUMNS};
    use zhiwen_matcher::MatcherConfig;
    use zhiwen_store::MatchFilter;

    use crate::support::*;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn csv_xlsx_and_json_round_trip_the_chinese_text_and_values() {
        let e = env(MatcherConfig::default()).await;
        let ch1 = String::from_utf8(sample("hongloumeng-01.txt")).unwrap();
        let w =
            e.stores.works.upsert_work(&work("HLM-1", "红楼梦", &[("第一回 甄士隐梦幻识通灵", &ch1)])).await.unwrap();
        e.matcher.index_work(w.id).await.unwrap();
        let p = e
            .stores
            .pages
            .upsert_page(&html_page("http://pirate.example/hlm/1.html", sample("pirate-copy-big5.html")))
            .await
            .unwrap();
        let rec = e.matcher.match_page(p.id).await.unwrap().matches.remove(0);
        let filter = MatchFilter { work_id: Some(w.id), ..Default::default() };

        let mut csv_bytes = Vec::new();
        assert_eq!(export_matches(&e.stores, &filter, ExportFormat::Csv, &mut csv_bytes).await.unwrap(), 1);
        assert!(csv_bytes.starts_with("\u{feff}".as_bytes()), "UTF-8 BOM");
        let mut r = csv::Reader::from_reader(&csv_bytes[3..]);
        assert_eq!(r.headers().unwrap().iter().collect::<Vec<_>>(), COLUMNS.to_vec());
        let rows: Vec<csv::StringRecord> = r.records().map(|x| x.unwrap()).collect();
        assert_eq!(rows.len(), 1);
        assert_eq!(&rows[0][0], "HLM-1");
        assert_eq!(&rows[0][1], "红楼梦");
        assert_eq!(&rows[0][2], "第一回 甄士隐梦幻识通灵");
        assert_eq!(&rows[0][3], "http://pirate.example/hlm/1.html");
        assert_eq!(&rows[0][5], "excerpt");
        assert!((rows[0][6].parse::<f64>().unwrap() - rec.score).abs() < 1e-3);
        assert_eq!(&rows[0][9], "new");
        assert_eq!(&rows[0][10], rec.evidence_section.as_str());
        assert_eq!(&rows[0][11], rec.evidence_page.as_str());

        let mut json = Vec::new();
        export_matches(&e.stores, &filter, ExportFormat::Json, &mut json).await.unwrap();
        let v: serde_json::Value = serde_json::from_slice(json.trim_ascii_end()).unwrap();
        assert_eq!(v["work_title"], "红楼梦");
        assert_eq!(v["evidence_page"], rec.evidence_page.as_str());

        let mut xlsx = Vec::new();
        export_matches(&e.stores, &filter, ExportFormat::Xlsx, &mut xlsx).await.unwrap();
        let mut book: calamine::Xlsx<_> = calamine::open_workbook_from_rs(std::io::Cursor::new(xlsx)).unwrap();
        let range = book.worksheet_range("matches").unwrap();
        let cell = |r: u32, c: u32| range.get_value((r, c)).map(|v| v.to_string()).unwrap_or_default();
        assert_eq!(cell(0, 0), "work_external_id");
        assert_eq!(cell(1, 1), "红楼梦");
        assert_eq!(cell(1, 2), "第一回 甄士隐梦幻识通灵");
        assert_eq!(cell(1, 11), rec.evidence_page);
        assert!((cell(1, 6).parse::<f64>().unwrap() - rec.score).abs() < 1e-9);

        // Another work's filter exports nothing.
        let none = MatchFilter { work_id: Some(w.id + 1000), ..Default::default() };
        let mut empty = Vec::new();
        assert_eq!(export_matches(&e.stores, &none, ExportFormat::Csv, &mut empty).await.unwrap(), 0);
    }

    /// A work id and a title a spreadsheet would run as formulas (holders choose both):
    /// neutralised in CSV, plain strings (never formulas) in XLSX, as stored in JSON.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn formula_like_cells_are_text_in_csv_and_xlsx() {
        let e = env(MatcherConfig::default()).await;
        let ch1 = String::from_utf8(sample("hongloumeng-01.txt")).unwrap();
        let title = "=HYPERLINK(\"http://x\",\"点击\")";
        let w = e.stores.works.upsert_work(&work("=1+1", title, &[("@第一回", &ch1)])).await.unwrap();
        e.matcher.index_work(w.id).await.unwrap();
        let p = html_page("http://pirate.example/hlm/1.html", sample("pirate-copy-big5.html"));
        let p = e.stores.pages.upsert_page(&p).await.unwrap();
        assert_eq!(e.matcher.match_page(p.id).await.unwrap().matches.len(), 1);
        let filter = MatchFilter { work_id: Some(w.id), ..Default::default() };

        let mut csv_bytes = Vec::new();
        export_matches(&e.stores, &filter, ExportFormat::Csv, &mut csv_bytes).await.unwrap();
        let mut r = csv::Reader::from_reader(&csv_bytes[3..]);
        let row = r.records().next().unwrap().unwrap();
        assert_eq!((&row[0], &row[1], &row[2]), ("'=1+1", format!("'{title}").as_str(), "'@第一回"));

        let mut json = Vec::new();
        export_matches(&e.stores, &filter, ExportFormat::Json, &mut json).await.unwrap();
        let v: serde_json::Value = serde_json::from_slice(json.trim_ascii_end()).unwrap();
        assert_eq!((v["work_external_id"].as_str(), v["work_title"].as_str()), (Some("=1+1"), Some(title)));

        let mut xlsx = Vec::new();
        export_matches(&e.stores, &filter, ExportFormat::Xlsx, &mut xlsx).await.unwrap();
        let mut book: calamine::Xlsx<_> = calamine::open_workbook_from_rs(std::io::Cursor::new(xlsx)).unwrap();
        let formulas = book.worksheet_formula("matches").unwrap();
        assert!(formulas.used_cells().all(|(_, _, f)| f.is_empty()), "no formula in the sheet");
        let range = book.worksheet_range("matches").unwrap();
        assert_eq!(range.get_value((1, 0)), Some(&calamine::Data::String("=1+1".into())));
        assert_eq!(range.get_value((1, 1)), Some(&calamine::Data::String(title.into())));
    }
}

mod webhook {
    use std::sync::{Arc, Mutex};

    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    use zhiwen_matcher::webhook::Webhook;
    use zhiwen_matcher::{MatchKind, MatchRecord, WebhookConfig};
    use zhiwen_store::Outcome;

    /// Answers 500 to the first request and 200 to the next ones; keeps the bodies.
    async fn flaky_listener() -> (String, Arc<Mutex<Vec<String>>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let seen = bodies.clone();
        tokio::spawn(async move {
            let mut n = 0;
            while let Ok((mut sock, _)) = listener.accept().await {
                n += 1;
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                loop {
                    let k = sock.read(&mut chunk).await.unwrap_or(0);
                    if k == 0 {
                        break;
                    }
                    buf.extend_from_slice(&chunk[..k]);
                    let text = String::from_utf8_lossy(&buf).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let len = text[..end]
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length:")
                                    .map(|v| v.trim().parse::<usize>().unwrap_or(0))
                            })
                            .unwrap_or(0);
                        if buf.len() >= end + 4 + len {
                            seen.lock().unwrap().push(String::from_utf8_lossy(&buf[end + 4..]).to_string());
                            break;
                        }
                    }
                }
                let status = if n == 1 { "500 Internal Server Error" } else { "200 OK" };
                let _ = sock
                    .write_all(
                        format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n").as_bytes(),
                    )
                    .await;
            }
        });
        (url, bodies)
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn new_matches_are_posted_as_json_with_a_retry_after_a_failure() {
        let (url, bodies) = flaky_listener().await;
        let config = WebhookConfig { url: Some(url), base_delay_ms: 20, ..Default::default() };
        let hook = Webhook::from_config(&config).unwrap().expect("configured");
        let rec = MatchRecord {
            match_id: 7,
            section_id: 1,
            work_id: 2,
            page_id: 3,
            url: "http://pirate.example/hlm/1.html".into(),
            site: "pirate.example".into(),
            kind: MatchKind::Excerpt,
            score: 0.93,
            outcome: Outcome::Inserted,
            evidence_section: "此开卷第一回也".into(),
            evidence_page: "此開卷第一回也".into(),
        };
        hook.send(&[&rec]).await.expect("delivered on the second attempt");
        let bodies = bodies.lock().unwrap().clone();
        assert_eq!(bodies.len(), 2, "one failure, one retry");
        let v: serde_json::Value = serde_json::from_str(&bodies[1]).unwrap();
        assert_eq!(v["event"], "zhiwen.matches");
        assert_eq!(v["matches"][0]["kind"], "excerpt");
        assert_eq!(v["matches"][0]["evidence_page"], "此開卷第一回也");
        // No URL: no webhook.
        assert!(Webhook::from_config(&WebhookConfig::default()).unwrap().is_none());
    }
}
