//! Readers 0 (`StoreConfig::with_readers(0)`, what the CLI makes of
//! `ZHIWEN_SQLITE_READERS=0`): the embedded store without its reader pool sends every read
//! through the writer connection and still answers reads and writes.

use zhiwen_store::*;

use crate::fixtures::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_store_without_reader_pool() {
    let dir = tempfile::tempdir().unwrap();
    let err = open(&StoreConfig::embedded(dir.path()).with_readers(257)).await.unwrap_err();
    assert!(matches!(err, StoreError::Config(_)) && err.to_string().contains("SQLite readers"), "{err}");

    let s = open(&StoreConfig::embedded(dir.path()).with_readers(0)).await.unwrap();
    let w = s.works.upsert_work(&work("甲", "w1")).await.unwrap();
    let p = s.pages.upsert_page(&page("https://a.example/1", TEXT_A, 10)).await.unwrap().id;
    let m = NewMatch {
        section_id: w.sections[0].1,
        page_id: p,
        kind: "excerpt".into(),
        comparison: comparison(TEXT_A, TEXT_A),
        seen_at: Timestamp(1_763_683_200_000),
    };
    let id = s.matches.upsert_match(&m).await.unwrap().id;
    // Each write is seen by the next read, on the same connection.
    for (i, to) in [ReviewStatus::Confirmed, ReviewStatus::Dismissed, ReviewStatus::New].into_iter().enumerate() {
        s.matches.set_review(id, to, "alice", None, Timestamp(1_763_683_300_000 + i as i64)).await.unwrap();
        assert_eq!(s.matches.get_match(id).await.unwrap().unwrap().status, to);
    }
    assert_eq!(s.works.get_work(w.id).await.unwrap().unwrap().text, format!("{TEXT_A}{TEXT_B}"));
    let rows = s.queries.query_matches(&MatchQuery::default(), MatchSort::default(), None, 10).await.unwrap();
    assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), vec![id]);
    let d = s.queries.match_detail(id).await.unwrap().unwrap();
    assert_eq!((d.record.review_log.len(), d.section_text.as_str(), d.work.owner.as_str()), (3, TEXT_A, "甲"));
    assert_eq!(s.queries.count_matches(&MatchQuery::default()).await.unwrap(), 1);
    // Concurrent reads and writes share the one connection without failing.
    let jobs: Vec<_> = (0..8)
        .map(|i| {
            let s = s.clone();
            tokio::spawn(async move {
                let url = format!("https://b.example/{i}");
                let p = s.pages.upsert_page(&page(&url, TEXT_B, 20)).await.unwrap();
                s.pages.get_page(p.id).await.unwrap().unwrap().url
            })
        })
        .collect();
    for (i, j) in jobs.into_iter().enumerate() {
        assert_eq!(j.await.unwrap(), format!("https://b.example/{i}"));
    }
    assert_eq!(s.pages.count_pages().await.unwrap(), 9);
}

/// A process that closes the embedded store leaves no write-ahead log behind: the readers
/// close before the writer, which checkpoints the log into the database as the last
/// connection (with the writer closed first the whole log stayed, and the next process
/// read it back one page at a time).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_embedded_store_checkpoints_its_log() {
    let dir = tempfile::tempdir().unwrap();
    let wal = dir.path().join("zhiwen.db-wal");
    let s = open(&StoreConfig::embedded(dir.path())).await.unwrap();
    let w = s.works.upsert_work(&work("甲", "w1")).await.unwrap();
    for i in 0..20 {
        s.pages.upsert_page(&page(&format!("https://a.example/{i}"), TEXT_A, 10 + i)).await.unwrap();
    }
    // Reads through the pool, so that the readers have the log open too.
    assert_eq!(s.works.get_work(w.id).await.unwrap().unwrap().text, format!("{TEXT_A}{TEXT_B}"));
    assert_eq!(s.pages.count_pages().await.unwrap(), 20);
    assert!(std::fs::metadata(&wal).is_ok_and(|m| m.len() > 0), "the writes went to the log");
    drop(s);
    assert!(!wal.exists(), "the log was checkpointed and removed when the store closed");

    // And the next process finds everything in the database file itself.
    let s = open(&StoreConfig::embedded(dir.path())).await.unwrap();
    assert_eq!(s.pages.count_pages().await.unwrap(), 20);
    assert_eq!(s.works.get_work(w.id).await.unwrap().unwrap().text, format!("{TEXT_A}{TEXT_B}"));
}
