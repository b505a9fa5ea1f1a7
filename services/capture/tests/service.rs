//! The evidence service over a real embedded store: heads per size, the log read back by
//! a new process, and a store that no longer holds what a signed head says refused; and
//! the removal re-check of noticed pages served on 127.0.0.1, with the real matcher.

use zhiwen_capture::{CaptureConfig, CaptureError, EvidenceService};
use zhiwen_evidence::{EvidenceLog, LogKey, TreeHead};
use zhiwen_store::{CaptureFile, NewCapture, StoreConfig, Stores, Timestamp};

async fn append(stores: &Stores, n: u64) {
    for i in 0..n {
        let bytes = format!("captured file {i}").into_bytes();
        let sha256 = stores.evidence.put_evidence_file(&bytes).await.unwrap();
        let file = CaptureFile {
            name: "capture/page.warc".into(),
            media_type: "application/warc".into(),
            size: bytes.len() as u64,
            sha256,
        };
        let capture = NewCapture {
            key: format!("k-{i}-{}", stores.evidence.count_captures().await.unwrap()),
            match_id: 1,
            page_id: 1,
            url: "http://pirate.example/1".into(),
            captured_at: Timestamp(1_795_000_000_000),
            reason: "on_demand".into(),
            files: vec![file],
            record: format!("leaf {i}").into_bytes(),
        };
        stores.evidence.append_capture(&capture).await.unwrap();
    }
}

#[tokio::test]
async fn heads_per_size_a_reopened_log_and_a_store_that_lost_captures() {
    let dir = tempfile::tempdir().unwrap();
    let stores = zhiwen_store::open(&StoreConfig::embedded(dir.path())).await.unwrap();
    let key = LogKey::generate();
    let secret = key.to_secret_hex();
    let service = EvidenceService::open(stores.clone(), key, CaptureConfig::default()).await.unwrap();
    // An empty log has a head too, and reopening it is fine.
    let empty = service.sign_head(1).await.unwrap();
    assert_eq!(empty.head.size, 0);
    let again =
        EvidenceService::open(stores.clone(), LogKey::from_secret_hex(&secret).unwrap(), CaptureConfig::default())
            .await
            .unwrap();
    // One head per size: signing an unchanged log returns the kept head.
    assert_eq!(again.sign_head(2).await.unwrap(), empty);

    // Leaves appended by another process are caught up before the next head.
    append(&stores, 3).await;
    let three = service.sign_head(3).await.unwrap();
    assert_eq!(three.head.size, 3);
    three.verify(Some(&service.public_key())).unwrap();
    let proof = service.consistency_proof(1, 3).await.unwrap();
    let one = EvidenceLog::from_leaves([b"leaf 0".to_vec()]).root();
    zhiwen_evidence::verify_consistency(&one, &three.head.root(), &proof).unwrap();
    let heads = service.heads_since(0, 10).await.unwrap();
    assert_eq!(heads.iter().map(|h| h.head.size).collect::<Vec<_>>(), vec![0, 3]);

    // A head the stored captures cannot give (a rewritten log, or one that lost leaves):
    // a new process refuses to open the log.
    let other = LogKey::from_secret_hex(&secret).unwrap();
    let mut forged =
        EvidenceLog::from_leaves([b"leaf 0".to_vec(), b"other".to_vec(), b"leaf 2".to_vec(), b"x".to_vec()]);
    let _ = forged.append(b"y".to_vec());
    let head = other.sign(TreeHead::new(&forged.root(), 4));
    stores.evidence.put_tree_head(head.head.size, 4, &serde_json::to_string(&head).unwrap()).await.unwrap();
    let refused = EvidenceService::open(stores.clone(), other, CaptureConfig::default()).await.unwrap_err();
    assert!(matches!(refused, CaptureError::Inconsistent(_)), "{refused}");
    assert!(refused.to_string().contains("holds 3 captures but a head was signed for 5"), "{refused}");
}

// ---------------------------------------------------------------------------------
// Removal re-check

use zhiwen_testkit::site::Site;

fn html(title: &str, text: &str, extra: &str) -> String {
    format!("<!doctype html><html><head><meta charset=utf-8><title>{title}</title></head><body><h1>{title}</h1><p>{text}</p><p>{extra}</p></body></html>")
}

/// The bundled classics: (title, text) of each.
fn classics() -> Vec<(String, String)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/works/classics.jsonl");
    std::fs::read_to_string(path)
        .expect("bundled classics")
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).expect("JSONL");
            (v["title"].as_str().unwrap_or_default().to_owned(), v["text"].as_str().unwrap_or_default().to_owned())
        })
        .collect()
}

const HOUR: i64 = 3_600_000;

/// A work of three sections, three pages of a site each carrying one (stored as the
/// crawler stores them, matched by the real matcher, confirmed), a notice sent for them
/// at T0; then the site changes and the re-checks, run at moved clocks, follow it.
#[tokio::test]
async fn recheck_follows_noticed_pages_escalates_once_and_sums_up() {
    use std::sync::Arc;
    use zhiwen_capture::{recheck, removal_stats, RecheckConfig};
    use zhiwen_ingest::pages::{build_page, RawPage};
    use zhiwen_ingest::{AddressPolicy, CrawlConfig, ImportLimits};
    use zhiwen_store::{
        NewSection, NewTask, NewWork, Notice, NoticeState, PageSource, RemovalState, ReviewStatus, TaskState,
    };

    let dir = tempfile::tempdir().unwrap();
    let stores = zhiwen_store::open(&StoreConfig::embedded(dir.path().join("store"))).await.unwrap();
    let index = Arc::new(
        zhiwen_index::EmbeddedIndex::open(dir.path().join("index.sqlite"), zhiwen_index::IndexConfig::default())
            .unwrap(),
    );
    let fp = zhiwen_core::Fingerprinter::new(zhiwen_core::Params::default()).unwrap();
    let matcher = zhiwen_matcher::Matcher::new(stores.clone(), index, fp, zhiwen_matcher::MatcherConfig::default());

    let books = classics();
    let (title, text) = books[0].clone();
    let chars: Vec<char> = text.chars().collect();
    let third = chars.len() / 3;
    let sections: Vec<String> = (0..3).map(|i| chars[i * third..(i + 1) * third].iter().collect()).collect();
    let work = NewWork {
        owner: "holder-a".into(),
        external_id: "w-1".into(),
        title: title.clone(),
        author: "佚名".into(),
        source_file: None,
        charset: None,
        text: sections.concat(),
        sections: sections
            .iter()
            .enumerate()
            .map(|(i, t)| NewSection {
                ordinal: i as u32,
                title: format!("第{}节", i + 1),
                text: t.clone(),
                char_start: (i * third) as u64,
                char_end: ((i + 1) * third) as u64,
            })
            .collect(),
    };
    let work_id = stores.works.upsert_work(&work).await.unwrap().id;
    matcher.index_work(work_id).await.unwrap();

    let site = Site::start();
    let t0 = zhiwen_store::Timestamp(1_800_000_000_000);
    let mut page_ids = Vec::new();
    let mut match_ids = Vec::new();
    for (i, section) in sections.iter().enumerate() {
        let path = format!("/book/{}.html", i + 1);
        let body = html(&format!("{title} {}", i + 1), section, "本站提供免费阅读");
        site.set(&path, 200, body.clone());
        let raw = RawPage {
            url: &site.url(&path),
            body: body.into_bytes(),
            format: zhiwen_core::canon::InputFormat::Auto,
            charset_hint: Some("utf-8"),
            fetched_at: zhiwen_store::Timestamp(t0.0 - 24 * HOUR),
            http_status: Some(200),
            source: PageSource::Crawl,
        };
        let built = build_page(raw, &Default::default(), &ImportLimits::default()).unwrap();
        let page_id = stores.pages.upsert_page(&built.page).await.unwrap().id;
        let outcome = matcher.match_page(page_id).await.unwrap();
        assert_eq!(outcome.matches.len(), 1, "page {} carries one section: {outcome:?}", i + 1);
        let m = &outcome.matches[0];
        stores.matches.set_review(m.match_id, ReviewStatus::Confirmed, "reviewer", None, t0).await.unwrap();
        page_ids.push(page_id);
        match_ids.push(m.match_id);
    }
    let notice = Notice {
        id: 0,
        key: "notice-1".into(),
        owner: "holder-a".into(),
        site: "127.0.0.1".into(),
        sites: Vec::new(),
        lang: "zh-CN".into(),
        state: NoticeState::Sent,
        match_ids: match_ids.clone(),
        page_ids: page_ids.clone(),
        subject: "侵权通知".into(),
        recipient: Some("abuse@pirate.example".into()),
        files: vec![],
        follow_up_of: None,
        created_by: "reviewer".into(),
        created_at: t0,
        message_id: "<notice-1@zhiwen>".into(),
        sent_at: Some(t0),
        sent_by: Some("reviewer".into()),
        smtp_response: Some("250 OK".into()),
        version: 0,
    };
    stores.cases.create_notice(&notice).await.unwrap();

    let crawl = CrawlConfig {
        address_policy: AddressPolicy { allow_loopback: true, allow_private: false },
        max_retries: 0,
        ..CrawlConfig::default()
    };
    let service =
        EvidenceService::open(stores.clone(), LogKey::generate(), CaptureConfig { crawl, ..CaptureConfig::default() })
            .await
            .unwrap();
    let config = RecheckConfig { per_host_delay_ms: 0, timeout_secs: 10, ..RecheckConfig::default() };
    let at = |hours: i64| zhiwen_store::Timestamp(t0.0 + hours * HOUR);
    let states = |r: &zhiwen_capture::RecheckReport| r.checks.iter().map(|c| c.state).collect::<Vec<_>>();

    // T0+1h: everything is up, as stored; the watches begin.
    let r = recheck(&service, &matcher, &config, at(1)).await.unwrap();
    assert_eq!(states(&r), vec![Some(RemovalState::Up); 3], "{r:#?}");
    assert_eq!((r.pages, r.up, r.transitions.len(), r.flagged.len()), (3, 3, 3, 0));

    // The site removes page 1 and puts other text on page 2.
    site.set("/book/1.html", 404, "gone".into());
    site.set("/book/2.html", 200, html("公告", &books[1].1, "本站提供免费阅读"));
    let r = recheck(&service, &matcher, &config, at(2)).await.unwrap();
    assert_eq!(
        states(&r),
        vec![Some(RemovalState::Removed), Some(RemovalState::Removed), Some(RemovalState::Up)],
        "{r:#?}"
    );
    assert_eq!(r.checks[0].http_status, Some(404));
    assert_eq!(r.transitions.iter().map(|t| t.page_id).collect::<Vec<_>>(), page_ids[..2].to_vec());
    for &p in &page_ids[..2] {
        let w = stores.cases.get_watch(p).await.unwrap().unwrap();
        assert_eq!((w.state, w.removed_at), (RemovalState::Removed, Some(at(2))));
    }

    // Page 3 gets new surroundings but keeps the copied section: changed, new evidence.
    let changed = html(&format!("{title} 3"), &sections[2], "最新章节更新：欢迎收藏本站，广告位招租");
    site.set("/book/3.html", 200, changed);
    let r = recheck(&service, &matcher, &config, at(3)).await.unwrap();
    assert_eq!(states(&r)[2], Some(RemovalState::Changed), "{r:#?}");
    assert_eq!((r.transitions.len(), r.captures_queued), (1, 1));
    let key = format!("capture:match:{}:recheck:{}", match_ids[2], at(3).day());
    let task = stores.tasks.find_task(&key).await.unwrap().expect("a capture of the changed page is queued");
    assert_eq!(task.state, TaskState::Queued);
    // Run again: the same change is no news and queues nothing more.
    let tasks_before = stores.tasks.list_tasks(None, None, 0, 1000).await.unwrap().len();
    let r = recheck(&service, &matcher, &config, at(3)).await.unwrap();
    assert_eq!(states(&r)[2], Some(RemovalState::Changed));
    assert_eq!((r.transitions.len(), r.captures_queued), (0, 0), "{r:#?}");
    assert_eq!(stores.tasks.list_tasks(None, None, 0, 1000).await.unwrap().len(), tasks_before);

    // Eight days after the notice page 3 is still up: flagged, once.
    let r = recheck(&service, &matcher, &config, at(8 * 24)).await.unwrap();
    assert_eq!(r.flagged.iter().map(|f| f.page_id).collect::<Vec<_>>(), vec![page_ids[2]], "{r:#?}");
    assert_eq!(r.flagged[0].sent_at, t0);
    assert!(r.transitions.is_empty(), "{r:#?}");
    let w3 = stores.cases.get_watch(page_ids[2]).await.unwrap().unwrap();
    assert_eq!(w3.flagged_at, Some(at(8 * 24)));

    // A site that fails (503): cannot tell, no transition, the state stays; no new flag.
    site.set("/book/3.html", 503, "busy".into());
    let r = recheck(&service, &matcher, &config, at(9 * 24)).await.unwrap();
    assert_eq!(states(&r)[2], None, "{r:#?}");
    assert_eq!(r.checks[2].http_status, Some(503));
    assert_eq!((r.unknown, r.transitions.len(), r.flagged.len()), (1, 0, 0), "{r:#?}");
    let w3 = stores.cases.get_watch(page_ids[2]).await.unwrap().unwrap();
    assert_eq!((w3.state, w3.flagged_at), (RemovalState::Changed, Some(at(8 * 24))));
    assert!(w3.last_error.as_deref().is_some_and(|e| e.contains("503")), "{w3:?}");

    // The statistics: 2 of 3 removed, both 2 hours after the notice, 1 still up, 1 flagged.
    let stats = removal_stats(&stores, None, at(9 * 24)).await.unwrap();
    let t = &stats.total;
    assert_eq!(
        (t.notices_delivered, t.pages_noticed, t.pages_removed, t.pages_still_up, t.pages_flagged),
        (1, 3, 2, 1, 1),
        "{stats:#?}"
    );
    assert!(t.removal_rate.is_some_and(|r| (r - 2.0 / 3.0).abs() < 1e-9));
    assert_eq!((t.median_hours_to_removal, t.p90_hours_to_removal), (Some(2.0), Some(2.0)));
    assert_eq!((t.matches_infringing, t.matches_licensed), (3, 0));
    assert_eq!(stats.by_site.iter().map(|f| f.key.as_str()).collect::<Vec<_>>(), ["127.0.0.1"]);
    assert_eq!(stats.by_site[0].pages_removed, 2);
    assert_eq!(stats.by_holder.len(), 1);
    assert_eq!((stats.by_holder[0].key.as_str(), stats.by_holder[0].pages_still_up), ("holder-a", 1));
    let other = removal_stats(&stores, Some("holder-b"), at(9 * 24)).await.unwrap();
    assert_eq!((other.total.pages_noticed, other.total.matches_infringing), (0, 0));
    let json = serde_json::to_value(&stats).unwrap();
    assert_eq!(json["total"]["pages_removed"], 2);

    // The host goes away (nothing listens): one failed connection cannot tell (a DNS or
    // network hiccup must not tell the holder a page is gone); the next check confirms it.
    site.shut_down();
    let r = recheck(&service, &matcher, &config, at(10 * 24)).await.unwrap();
    assert_eq!(states(&r), vec![None; 3], "{r:#?}");
    assert!(r.transitions.is_empty(), "{r:#?}");
    let w3 = stores.cases.get_watch(page_ids[2]).await.unwrap().unwrap();
    assert_eq!(w3.state, RemovalState::Changed, "{w3:?}");
    assert!(w3.last_error.as_deref().is_some_and(|e| e.starts_with("host unreachable")), "{w3:?}");
    let r = recheck(&service, &matcher, &config, at(11 * 24)).await.unwrap();
    assert_eq!(states(&r), vec![Some(RemovalState::Removed); 3], "{r:#?}");
    assert_eq!(r.transitions.iter().map(|t| t.page_id).collect::<Vec<_>>(), vec![page_ids[2]], "{r:#?}");
    let w3 = stores.cases.get_watch(page_ids[2]).await.unwrap().unwrap();
    assert_eq!((w3.state, w3.removed_at), (RemovalState::Removed, Some(at(11 * 24))), "{w3:?}");

    // The scheduled re-check: one slot runs once however many processes (serve, scheduler)
    // ask for it; the next slot runs again.
    let service = service.with_matcher(matcher.clone());
    let first = zhiwen_capture::recheck_slot(&service, 7, "host-a/1").await.unwrap();
    assert_eq!(first.map(|r| r.pages), Some(3));
    assert!(zhiwen_capture::recheck_slot(&service, 7, "host-b/2").await.unwrap().is_none());
    let task = stores.tasks.find_task("recheck:7").await.unwrap().expect("the slot's task");
    assert_eq!((task.kind.as_str(), task.state), (zhiwen_capture::RECHECK_TASK_KIND, TaskState::Succeeded));
    assert!(zhiwen_capture::recheck_slot(&service, 8, "host-b/2").await.unwrap().is_some());
    // A slot's task left queued by a process that died before claiming it is superseded
    // by the next slot's: cancelled, not run, and the next slot runs its own task.
    let stale = NewTask {
        key: "recheck:9".into(),
        kind: zhiwen_capture::RECHECK_TASK_KIND.into(),
        params: serde_json::json!({"slot": 9, "every_hours": service.config().recheck.every_hours}),
    };
    stores.tasks.create_task(&stale).await.unwrap();
    assert!(zhiwen_capture::recheck_slot(&service, 10, "host-a/1").await.unwrap().is_some());
    let states = |key: &'static str| {
        let stores = stores.clone();
        async move { stores.tasks.find_task(key).await.unwrap().map(|t| t.state) }
    };
    assert_eq!(states("recheck:9").await, Some(TaskState::Cancelled));
    assert_eq!(states("recheck:10").await, Some(TaskState::Succeeded));
}
