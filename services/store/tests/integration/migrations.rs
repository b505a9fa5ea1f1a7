//! Migrations and backend-specific guarantees (schema versions, unique indexes).

use mongodb::bson::doc;
use zhiwen_store::*;
use zhiwen_testkit::mongo::MongoServer;

use crate::fixtures::{mongo_stores, page};

/// Every migration's name, in order (version `i + 1` at index `i`): what a report lists.
const MIGRATIONS: [&str; 17] = [
    "0001_initial",
    "0002_api",
    "0003_content_hash",
    "0004_api_stats",
    "0005_match_kind",
    "0006_match_list_columns",
    "0007_match_listing",
    "0008_fingerprint_indexes",
    "0009_no_page_fingerprints",
    "0010_meta",
    "0011_page_format",
    "0012_evidence",
    "0013_cases",
    "0014_section_winnowed",
    "0015_zstd_blobs",
    "0016_indexed_works",
    "0017_canon_tag",
];

/// The names of the migrations from `version` on, as a report lists them applied.
fn applied_from(version: usize) -> Vec<String> {
    MIGRATIONS[version - 1..].iter().map(|n| n.to_string()).collect()
}

/// Three matches as a binary before migration 5 stored them (verdict kinds): the page
/// inside the section, the whole section inside the page, and a section barely inside
/// the page. Returns their ids and the kinds of copy migration 5 must give them.
async fn old_verdict_matches(s: &Stores) -> Vec<(i64, &'static str, &'static str)> {
    use crate::fixtures::{comparison, page, work, TEXT_A, TEXT_B};
    let w = s.works.upsert_work(&work("o", "kinds")).await.unwrap();
    let p1 = s.pages.upsert_page(&page("https://k.example/1", TEXT_A, 1)).await.unwrap().id;
    let p2 = s.pages.upsert_page(&page("https://k.example/2", TEXT_A, 1)).await.unwrap().id;
    let whole = comparison(TEXT_A, TEXT_A);
    let barely = comparison(TEXT_A, TEXT_B);
    assert!(whole.containment_ab >= 0.5 && barely.containment_ab.max(barely.evidence_coverage_a) < 0.5);
    let mut out = Vec::new();
    for (i, (cmp, old, new)) in
        [(&whole, "b_within_a", "excerpt"), (&whole, "a_within_b", "embedded"), (&barely, "a_within_b", "excerpt")]
            .into_iter()
            .enumerate()
    {
        let m = NewMatch {
            section_id: w.sections[i % 2].1,
            page_id: [p1, p2][i / 2],
            kind: "identical".into(),
            comparison: cmp.clone(),
            seen_at: Timestamp(1_763_683_200_000),
        };
        out.push((s.matches.upsert_match(&m).await.unwrap().id, old, new));
    }
    out
}

/// A page and a section fingerprint record, as versions before migration 9 stored both;
/// returns their subjects.
async fn fingerprint_records(s: &Stores) -> (Subject, Subject) {
    use crate::fixtures::{fingerprints, page, work, TEXT_A};
    let w = s.works.upsert_work(&work("o", "records")).await.unwrap();
    let p = s.pages.upsert_page(&page("https://fp.example/1", TEXT_A, 1)).await.unwrap().id;
    let (page_fp, section_fp) = (Subject::page(p), Subject::section(w.sections[0].1));
    for subject in [page_fp, section_fp] {
        s.fingerprints.put_fingerprints(subject, &fingerprints(TEXT_A)).await.unwrap();
    }
    (page_fp, section_fp)
}

/// Reads go through a pool of read-only connections beside the one writer: with many
/// readers busy at the same time, each write is seen by the very next read of its caller.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn embedded_reads_see_each_committed_write_while_others_read() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let stores = open(&StoreConfig::embedded(dir.path())).await.unwrap();
    let seeded = old_verdict_matches(&stores).await;
    let id = seeded[0].0;
    let stop = Arc::new(AtomicBool::new(false));
    let reads = Arc::new(AtomicU64::new(0));
    let readers: Vec<_> = (0..16)
        .map(|_| {
            let (s, stop, reads) = (stores.clone(), stop.clone(), reads.clone());
            tokio::spawn(async move {
                let sort = MatchSort { key: MatchSortKey::LastSeen, descending: true };
                while !stop.load(Ordering::Relaxed) {
                    let rows = s.queries.query_matches(&MatchQuery::default(), sort, None, 50).await.unwrap();
                    assert_eq!(rows.len(), 3);
                    assert!(s.matches.get_match(id).await.unwrap().is_some());
                    reads.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    // The writes start once the readers are reading (under load they may be slow to start).
    while reads.load(Ordering::Relaxed) == 0 && !readers.iter().any(|r| r.is_finished()) {
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    for i in 0..40_i64 {
        let to = if i % 2 == 0 { ReviewStatus::Confirmed } else { ReviewStatus::Dismissed };
        stores.matches.set_review(id, to, "alice", None, Timestamp(1_763_683_200_000 + i)).await.unwrap();
        assert_eq!(stores.matches.get_match(id).await.unwrap().unwrap().status, to, "write {i} not seen");
        let q = MatchQuery { status: Some(to), ..Default::default() };
        assert_eq!(stores.queries.count_matches(&q).await.unwrap(), 1, "write {i} not counted");
    }
    stop.store(true, Ordering::Relaxed);
    for r in readers {
        r.await.unwrap();
    }
    assert_eq!(stores.matches.get_match(id).await.unwrap().unwrap().review_log.len(), 40);
}

/// A database as schema version 4 left it (verdict kinds, no listing columns) gets the
/// kinds of copy (migration 5) and the listing's two columns filled (migration 6).
#[tokio::test]
async fn embedded_migrations_5_and_6_rewrite_old_matches() {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig::embedded(dir.path());
    let stores = open(&config).await.unwrap();
    let seeded = old_verdict_matches(&stores).await;
    let (page_fp, section_fp) = fingerprint_records(&stores).await;
    let conn = rusqlite::Connection::open(dir.path().join("zhiwen.db")).unwrap();
    for (id, old, _) in &seeded {
        conn.execute("UPDATE matches SET kind = ?2 WHERE id = ?1", rusqlite::params![id, old]).unwrap();
    }
    conn.execute_batch(
        "DROP INDEX matches_listing; CREATE INDEX matches_last_seen ON matches(last_seen, id);
         ALTER TABLE matches DROP COLUMN copied_chars; ALTER TABLE matches DROP COLUMN coverage;
         ALTER TABLE pages DROP COLUMN format; ALTER TABLE pages DROP COLUMN canon_tag;
         DELETE FROM schema_migrations WHERE version >= 5;",
    )
    .unwrap();
    drop(conn);
    assert_eq!(migrate(&config).await.unwrap().applied, applied_from(5));
    // Migration 9 deletes page fingerprint records, and only those.
    assert!(stores.fingerprints.get_fingerprints(page_fp).await.unwrap().is_none());
    assert!(stores.fingerprints.get_fingerprints(section_fp).await.unwrap().is_some());
    let sort = MatchSort { key: MatchSortKey::Id, descending: false };
    let rows = stores.queries.query_matches(&MatchQuery::default(), sort, None, 10).await.unwrap();
    assert_eq!(rows.len(), seeded.len());
    for ((id, old, new), row) in seeded.into_iter().zip(rows) {
        let m = stores.matches.get_match(id).await.unwrap().unwrap();
        assert_eq!(m.kind, new, "match {id} stored as {old}");
        assert_eq!((row.id, row.kind.as_str()), (id, new));
        assert_eq!(
            (row.copied_chars, row.coverage),
            (m.comparison.copied_chars as u64, m.comparison.evidence_coverage_a)
        );
        assert!(row.copied_chars > 0 || row.coverage == 0.0);
    }
}

/// A database at schema 11 (before evidence) migrates to 12 and keeps evidence.
#[tokio::test]
async fn embedded_migration_12_adds_evidence() {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig::embedded(dir.path());
    migrate(&config).await.unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("zhiwen.db")).unwrap();
    conn.execute_batch("DROP TABLE capture_files; DROP TABLE captures; DROP TABLE tree_heads; ALTER TABLE pages DROP COLUMN canon_tag; DELETE FROM schema_migrations WHERE version >= 12;").unwrap();
    drop(conn);
    let report = migrate(&config).await.unwrap();
    assert_eq!((report.from_version, report.to_version), (11, SCHEMA_VERSION));
    assert_eq!(report.applied, applied_from(12));
    let stores = open(&config).await.unwrap();
    let sha = stores.evidence.put_evidence_file(b"evidence").await.unwrap();
    let file = CaptureFile { name: "f".into(), media_type: "text/plain".into(), size: 8, sha256: sha };
    let capture = NewCapture {
        key: "k".into(),
        match_id: 1,
        page_id: 1,
        url: "https://x.example/".into(),
        captured_at: Timestamp(1),
        reason: "on_demand".into(),
        files: vec![file],
        record: b"leaf".to_vec(),
    };
    assert_eq!(stores.evidence.append_capture(&capture).await.unwrap().0.leaf_index, 0);
    // The unique indexes hold.
    let conn = rusqlite::Connection::open(dir.path().join("zhiwen.db")).unwrap();
    let dup = conn.execute(
        "INSERT INTO captures (key, leaf_index, match_id, page_id, url, captured_at, reason, record) VALUES ('k2', 0, 1, 1, 'u', 1, 'on_demand', x'00')",
        [],
    );
    assert!(dup.is_err(), "the unique index on leaf_index must hold");
}

#[tokio::test]
async fn embedded_migrate_is_recorded_idempotent_and_refuses_newer() {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig::embedded(dir.path().join("nested/data"));
    let first = migrate(&config).await.unwrap();
    assert_eq!((first.from_version, first.to_version), (0, SCHEMA_VERSION));
    assert_eq!(first.applied, applied_from(1));
    let second = migrate(&config).await.unwrap();
    assert!(second.applied.is_empty());
    assert_eq!(second.from_version, SCHEMA_VERSION);
    open(&config).await.unwrap();

    // Pages by content hash are served by an index, not a scan of the pages.
    let conn = rusqlite::Connection::open(dir.path().join("nested/data/zhiwen.db")).unwrap();
    let plan: String = conn
        .query_row(
            "EXPLAIN QUERY PLAN SELECT id, url FROM pages WHERE content_hash = ?1 ORDER BY id LIMIT 10",
            [1_i64],
            |r| r.get(3),
        )
        .unwrap();
    assert!(plan.contains("pages_content_hash"), "{plan}");
    // The default match listing (newest sighting first) reads one covering index, not
    // the rows, whose listed columns sit behind the comparison on overflow pages.
    let plan: Vec<String> = conn
        .prepare(
            "EXPLAIN QUERY PLAN SELECT m.id, m.work_id, m.section_id, m.page_id, m.site, m.kind, m.score, m.duplicate,
                    m.copied_chars, m.coverage, m.first_seen, m.last_seen, m.status
             FROM matches m ORDER BY m.last_seen DESC, m.id DESC LIMIT 50",
        )
        .unwrap()
        .query_map([], |r| r.get(3))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert!(plan.iter().any(|p| p.contains("COVERING INDEX matches_listing")), "{plan:?}");
    assert!(!plan.iter().any(|p| p.contains("TEMP B-TREE")), "no sort step: {plan:?}");
    // Every fingerprint written pays for each index on the table: only the key is left.
    let indexes: i64 = conn
        .query_row("SELECT count(*) FROM sqlite_master WHERE type = 'index' AND tbl_name = 'fingerprints'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(indexes, 0, "fingerprints keep only their primary key");
    drop(conn);

    // A database touched by a newer binary is refused with a clear message.
    let conn = rusqlite::Connection::open(dir.path().join("nested/data/zhiwen.db")).unwrap();
    conn.execute("INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 0)", []).unwrap();
    drop(conn);
    for err in [migrate(&config).await.unwrap_err(), open(&config).await.unwrap_err()] {
        assert!(matches!(err, StoreError::SchemaTooNew { database: 99, .. }), "{err}");
        assert!(err.to_string().contains("newer than this binary"), "{err}");
        assert!(err.is_user_error() && !err.is_retryable());
    }
}

#[tokio::test]
async fn embedded_store_is_wal_with_unique_natural_keys() {
    let dir = tempfile::tempdir().unwrap();
    let stores = open(&StoreConfig::embedded(dir.path())).await.unwrap();
    stores.pages.upsert_page(&crate::fixtures::page("https://x.example/", "文本", 1)).await.unwrap();
    let conn = rusqlite::Connection::open(dir.path().join("zhiwen.db")).unwrap();
    let mode: String = conn.query_row("PRAGMA journal_mode", [], |r| r.get(0)).unwrap();
    assert_eq!(mode, "wal");
    let dup = conn.execute(
        "INSERT INTO pages (url, site, first_fetched_at, last_fetched_at, body_z, text_z, content_hash, source) VALUES ('https://x.example/', 'x.example', 1, 1, x'', x'', 0, '')",
        [],
    );
    assert!(dup.is_err(), "the unique index on url must hold");
}

#[tokio::test]
async fn config_defaults_to_embedded() {
    assert_eq!(StoreConfig::default(), StoreConfig::embedded(DEFAULT_DATA_DIR));
    assert_eq!(StoreConfig::default().backend_name(), "embedded");
    assert_eq!(StoreConfig::mongo("mongodb://h", "db").backend_name(), "mongodb");
    let err = open(&StoreConfig::mongo("not-a-uri", "db")).await.unwrap_err();
    assert!(matches!(err, StoreError::Config(_)), "{err}");
    let err = open(&StoreConfig::mongo("mongodb://127.0.0.1:1", "bad.name")).await.unwrap_err();
    assert!(matches!(err, StoreError::Config(_)), "{err}");
}

/// Run by the MongoDB conformance test on its server.
pub async fn mongo_backend_checks(server: &MongoServer) {
    two_clients_create_the_id_counters_together(server).await;
    let config = StoreConfig::mongo(server.uri(), "t_migrations");

    // Not migrated yet: opening says what to do.
    let err = open(&config).await.unwrap_err();
    assert!(matches!(err, StoreError::SchemaOutdated { database: 0, .. }), "{err}");
    assert!(err.to_string().contains("zhiwen migrate"), "{err}");

    let first = migrate(&config).await.unwrap();
    assert_eq!(
        (first.from_version, first.to_version, first.applied.len()),
        (0, SCHEMA_VERSION, SCHEMA_VERSION as usize)
    );
    let second = migrate(&config).await.unwrap();
    assert!(second.applied.is_empty(), "{second:?}");
    let stores = open(&config).await.unwrap();
    stores.pages.upsert_page(&crate::fixtures::page("https://x.example/", "文本", 1)).await.unwrap();

    let client = mongodb::Client::with_uri_str(server.uri()).await.unwrap();
    let db = client.database("t_migrations");
    // The unique indexes exist and hold.
    let dup = db
        .collection::<mongodb::bson::Document>("pages")
        .insert_one(doc! {"_id": 999_i64, "url": "https://x.example/", "site": "x.example", "first_fetched_at": mongodb::bson::DateTime::now(), "last_fetched_at": mongodb::bson::DateTime::now(), "content_hash": 0_i64, "source": "{}"})
        .await;
    assert!(dup.is_err(), "the unique index on pages.url must hold");
    let names: Vec<String> = db.list_collection_names().await.unwrap();
    for c in [
        "works",
        "sections",
        "pages",
        "sites",
        "fingerprints",
        "matches",
        "tasks",
        "counters",
        "blob_chunks",
        "_migrations",
        "api_keys",
    ] {
        assert!(names.iter().any(|n| n == c), "collection {c} missing: {names:?}");
    }

    // Past the 16 MB document limit: the body goes to blob_chunks in pieces.
    let mut big = crate::fixtures::page("https://x.example/big", "文本", 2);
    big.body = crate::fixtures::noise(20 * 1024 * 1024, 3);
    let id = stores.pages.upsert_page(&big).await.unwrap().id;
    let stored = db.collection::<mongodb::bson::Document>("pages").find_one(doc! {"_id": id}).await.unwrap().unwrap();
    assert_eq!(stored.get_i32("body_chunks").unwrap(), 3, "20 MB in 8 MB chunks");
    let chunks = db
        .collection::<mongodb::bson::Document>("blob_chunks")
        .count_documents(doc! {"owner": format!("pages/{id}/body")})
        .await
        .unwrap();
    assert_eq!(chunks, 3);
    assert!(stores.pages.get_page(id).await.unwrap().unwrap().body == big.body);

    // Migration 5 gives matches stored with a verdict kind their kind of copy.
    let seeded = old_verdict_matches(&stores).await;
    let matches = db.collection::<mongodb::bson::Document>("matches");
    for (id, old, _) in &seeded {
        matches.update_one(doc! {"_id": id}, doc! {"$set": {"kind": *old}}).await.unwrap();
    }
    // Migration 7 gives matches written before it their listing fields.
    matches.update_many(doc! {}, doc! {"$unset": {"copied_chars": "", "coverage": ""}}).await.unwrap();
    db.collection::<mongodb::bson::Document>("_migrations").delete_many(doc! {"_id": {"$gte": 5_i64}}).await.unwrap();
    assert_eq!(migrate(&config).await.unwrap().applied, applied_from(5));
    let sort = MatchSort { key: MatchSortKey::Id, descending: false };
    let rows = stores.queries.query_matches(&MatchQuery::default(), sort, None, 10).await.unwrap();
    assert_eq!(rows.len(), seeded.len());
    for ((id, old, new), row) in seeded.into_iter().zip(rows) {
        let m = stores.matches.get_match(id).await.unwrap().unwrap();
        assert_eq!(m.kind, new, "match {id} stored as {old}");
        let stored = matches.find_one(doc! {"_id": id}).await.unwrap().unwrap();
        assert_eq!(stored.get_i64("copied_chars").unwrap(), m.comparison.copied_chars as i64, "match {id}");
        assert_eq!(stored.get_f64("coverage").unwrap(), m.comparison.evidence_coverage_a, "match {id}");
        assert_eq!(
            (row.id, row.copied_chars, row.coverage),
            (id, m.comparison.copied_chars as u64, m.comparison.evidence_coverage_a)
        );
    }
    // Run again: nothing left to fill, and the index migration 8 dropped is gone already.
    // Migration 9 deletes the page fingerprint records an older version stored (and only
    // those).
    let (page_fp, section_fp) = fingerprint_records(&stores).await;
    db.collection::<mongodb::bson::Document>("_migrations").delete_many(doc! {"_id": {"$gte": 7_i64}}).await.unwrap();
    assert_eq!(migrate(&config).await.unwrap().applied, applied_from(7));
    assert!(stores.fingerprints.get_fingerprints(page_fp).await.unwrap().is_none());
    assert!(stores.fingerprints.get_fingerprints(section_fp).await.unwrap().is_some());
    // Migration 14: fingerprints written before it have no compact winnowed keys; writing
    // them again (unchanged) adds the keys.
    let section_text = crate::fixtures::fingerprints(crate::fixtures::TEXT_A);
    db.collection::<mongodb::bson::Document>("fingerprints")
        .update_many(doc! {}, doc! {"$unset": {"winnowed": "", "winnowed_n": ""}})
        .await
        .unwrap();
    assert!(stores.fingerprints.get_winnowed_many(&[section_fp]).await.unwrap().is_empty());
    assert_eq!(stores.fingerprints.put_fingerprints(section_fp, &section_text).await.unwrap(), Outcome::Unchanged);
    let keys = stores.fingerprints.get_winnowed_many(&[section_fp]).await.unwrap();
    assert_eq!(keys.iter().map(|k| &k.keys).collect::<Vec<_>>(), vec![&section_text.winnowed_digest()]);
    let fingerprint_indexes =
        db.collection::<mongodb::bson::Document>("fingerprints").list_index_names().await.unwrap();
    assert!(fingerprint_indexes.contains(&"kind_subject".to_string()), "{fingerprint_indexes:?}");
    assert!(!fingerprint_indexes.contains(&"kind_tag_subject".to_string()), "{fingerprint_indexes:?}");

    // Schema 11 to 12: the evidence collections and their unique indexes.
    for c in ["captures", "tree_heads", "evidence.files", "evidence.chunks"] {
        assert!(names.iter().any(|n| n == c), "collection {c} missing: {names:?}");
        db.collection::<mongodb::bson::Document>(c).drop().await.unwrap();
    }
    db.collection::<mongodb::bson::Document>("_migrations").delete_many(doc! {"_id": {"$gte": 12_i64}}).await.unwrap();
    let report = migrate(&config).await.unwrap();
    assert_eq!((report.from_version, report.applied), (11, applied_from(12)));
    let captures = db.collection::<mongodb::bson::Document>("captures");
    captures.insert_one(doc! {"_id": 1_i64, "key": "a", "leaf_index": 0_i64}).await.unwrap();
    assert!(
        captures.insert_one(doc! {"_id": 2_i64, "key": "b", "leaf_index": 0_i64}).await.is_err(),
        "unique leaf_index"
    );
    assert!(captures.insert_one(doc! {"_id": 3_i64, "key": "a", "leaf_index": 1_i64}).await.is_err(), "unique key");
    captures.delete_many(doc! {}).await.unwrap();

    // A newer database is refused.
    db.collection::<mongodb::bson::Document>("_migrations")
        .insert_one(doc! {"_id": 99_i64, "name": "future"})
        .await
        .unwrap();
    for err in [migrate(&config).await.unwrap_err(), open(&config).await.unwrap_err()] {
        assert!(matches!(err, StoreError::SchemaTooNew { database: 99, .. }), "{err}");
    }
}

/// Two workers (two clients) whose first writes create the id counters at the same
/// moment: the loser of the counter's upsert must retry, not fail the write.
async fn two_clients_create_the_id_counters_together(server: &MongoServer) {
    for round in 0..5 {
        let name = format!("race_{round}");
        let (a, b) = (mongo_stores(server, &name).await, mongo_stores(server, &name).await);
        let writes = (0..16).map(|i| {
            let pages = if i % 2 == 0 { a.pages.clone() } else { b.pages.clone() };
            tokio::spawn(async move {
                let p = page(&format!("http://race.example/{i}"), "两个进程同时写入的第一批网页。", 1_000 + i);
                pages.upsert_page(&p).await
            })
        });
        let mut ids = std::collections::HashSet::new();
        for w in writes.collect::<Vec<_>>() {
            let up = w.await.unwrap().unwrap_or_else(|e| panic!("round {round}: {e}"));
            ids.insert(up.id);
        }
        assert_eq!(ids.len(), 16, "round {round}: distinct ids {ids:?}");
    }
}

/// Schema 12 to 13 on a store with data: the `licensed` status is accepted, the stored
/// matches and their review trail are untouched, other statuses are still refused.
#[tokio::test]
async fn embedded_migration_13_accepts_licensed_and_keeps_matches() {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig::embedded(dir.path());
    let stores = open(&config).await.unwrap();
    let w = stores.works.upsert_work(&crate::fixtures::work("o", "m13")).await.unwrap();
    let p = stores
        .pages
        .upsert_page(&crate::fixtures::page("https://p.example/1", crate::fixtures::TEXT_A, 1))
        .await
        .unwrap()
        .id;
    let m = NewMatch {
        section_id: w.sections[0].1,
        page_id: p,
        kind: "identical".into(),
        comparison: crate::fixtures::comparison(crate::fixtures::TEXT_A, crate::fixtures::TEXT_A),
        seen_at: Timestamp(1),
    };
    let id = stores.matches.upsert_match(&m).await.unwrap().id;
    stores.matches.set_review(id, ReviewStatus::Confirmed, "r", Some("yes"), Timestamp(2)).await.unwrap();
    drop(stores);
    // Back to schema 12: the old CHECK, no case documents.
    let conn = rusqlite::Connection::open(dir.path().join("zhiwen.db")).unwrap();
    let v: i64 = conn.query_row("PRAGMA schema_version", [], |r| r.get(0)).unwrap();
    conn.execute_batch(&format!(
        "PRAGMA writable_schema = ON;
         UPDATE sqlite_schema SET sql = replace(sql, ', ''licensed'')', ')') WHERE name = 'matches';
         PRAGMA schema_version = {};
         PRAGMA writable_schema = OFF;
         DROP TABLE case_docs; DROP TABLE section_winnowed; ALTER TABLE pages DROP COLUMN canon_tag; DELETE FROM schema_migrations WHERE version >= 13;",
        v + 1
    ))
    .unwrap();
    let refused = conn.execute("UPDATE matches SET status = 'licensed' WHERE id = ?1", [id]);
    assert!(refused.is_err(), "schema 12 refuses the status");
    drop(conn);
    let report = migrate(&config).await.unwrap();
    assert_eq!(report.applied, applied_from(13));
    let stores = open(&config).await.unwrap();
    assert_eq!(
        stores.matches.set_review(id, ReviewStatus::Licensed, LICENSED_BY, None, Timestamp(3)).await.unwrap(),
        Outcome::Updated
    );
    let stored = stores.matches.get_match(id).await.unwrap().unwrap();
    assert_eq!(stored.status, ReviewStatus::Licensed);
    assert_eq!(stored.review_log.len(), 2);
    let conn = rusqlite::Connection::open(dir.path().join("zhiwen.db")).unwrap();
    assert!(conn.execute("UPDATE matches SET status = 'bogus' WHERE id = ?1", [id]).is_err());
    let ok: String = conn.query_row("PRAGMA integrity_check", [], |r| r.get(0)).unwrap();
    assert_eq!(ok, "ok");
    // Migrating again changes nothing.
    drop(conn);
    assert!(migrate(&config).await.unwrap().applied.is_empty());
}

/// Schema 13 to 14 on a store with section fingerprints: the compact winnowed keys are
/// missing until the fingerprints are written again (unchanged), which adds them.
#[tokio::test]
async fn embedded_migration_14_keys_come_with_the_next_write() {
    use crate::fixtures::{fingerprints, TEXT_A};
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig::embedded(dir.path());
    let stores = open(&config).await.unwrap();
    let (_, section) = fingerprint_records(&stores).await;
    drop(stores);
    let conn = rusqlite::Connection::open(dir.path().join("zhiwen.db")).unwrap();
    conn.execute_batch("DROP TABLE section_winnowed; ALTER TABLE pages DROP COLUMN canon_tag; DELETE FROM schema_migrations WHERE version >= 14;").unwrap();
    drop(conn);
    let report = migrate(&config).await.unwrap();
    assert_eq!((report.from_version, report.applied), (13, applied_from(14)));
    let stores = open(&config).await.unwrap();
    assert!(stores.fingerprints.get_winnowed_many(&[section]).await.unwrap().is_empty());
    assert_eq!(stores.fingerprints.put_fingerprints(section, &fingerprints(TEXT_A)).await.unwrap(), Outcome::Unchanged);
    let keys = stores.fingerprints.get_winnowed_many(&[section]).await.unwrap();
    assert_eq!(keys.iter().map(|k| &k.keys).collect::<Vec<_>>(), vec![&fingerprints(TEXT_A).winnowed_digest()]);
    assert!(migrate(&config).await.unwrap().applied.is_empty());
}

/// Schema 14 to 15: blobs written with deflate before zstd are read as they are after the
/// migration, beside those written with zstd after it; nothing is rewritten.
#[tokio::test]
async fn embedded_migration_15_reads_deflated_blobs_beside_zstd_ones() {
    use std::io::Write;
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig::embedded(dir.path());
    let stores = open(&config).await.unwrap();
    let before = page("https://old.example/1", "第一回 宴桃园豪杰三结义。", 1_700_000_000_000);
    let old_id = stores.pages.upsert_page(&before).await.unwrap().id;
    drop(stores);
    // The page as a binary before zstd wrote it: raw deflate.
    let deflate = |bytes: &[u8]| {
        let mut e = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(bytes).unwrap();
        e.finish().unwrap()
    };
    let conn = rusqlite::Connection::open(dir.path().join("zhiwen.db")).unwrap();
    let (body_z, text_z) = (deflate(&before.body), deflate(before.text.as_bytes()));
    conn.execute("UPDATE pages SET body_z = ?1, text_z = ?2 WHERE id = ?3", rusqlite::params![body_z, text_z, old_id])
        .unwrap();
    conn.execute_batch("ALTER TABLE pages DROP COLUMN canon_tag; DELETE FROM schema_migrations WHERE version >= 15;")
        .unwrap();
    drop(conn);
    let report = migrate(&config).await.unwrap();
    assert_eq!((report.from_version, report.applied), (14, applied_from(15)));
    let stores = open(&config).await.unwrap();
    let after = page("https://new.example/1", "第二回 张翼德怒鞭督邮。", 1_700_000_000_001);
    let new_id = stores.pages.upsert_page(&after).await.unwrap().id;
    for (id, wrote) in [(old_id, &before), (new_id, &after)] {
        let read = stores.pages.get_page(id).await.unwrap().unwrap();
        assert_eq!((read.body.as_slice(), read.text.as_str()), (wrote.body.as_slice(), wrote.text.as_str()));
    }
    drop(stores);
    let conn = rusqlite::Connection::open(dir.path().join("zhiwen.db")).unwrap();
    let stored: Vec<u8> = conn.query_row("SELECT body_z FROM pages WHERE id = ?1", [old_id], |r| r.get(0)).unwrap();
    assert_eq!(stored, body_z, "the deflated blob is not rewritten");
    let zstd: Vec<u8> = conn.query_row("SELECT body_z FROM pages WHERE id = ?1", [new_id], |r| r.get(0)).unwrap();
    assert!(zstd.starts_with(&[0x28, 0xB5, 0x2F, 0xFD]), "new blobs are zstd frames");
}

/// A database at schema 16 (pages without a canon tag) migrates to 17: its pages keep
/// everything and have no tag (a matcher reads them from their body); a page stored
/// again with the same text and a tag records it without counting as changed.
#[tokio::test]
async fn embedded_migration_17_leaves_stored_pages_untagged() {
    let dir = tempfile::tempdir().unwrap();
    let config = StoreConfig::embedded(dir.path());
    migrate(&config).await.unwrap();
    let stores = open(&config).await.unwrap();
    let before = page("https://old.example/1", "第一回 宴桃园豪杰三结义。", 1_700_000_000_000);
    let id = stores.pages.upsert_page(&before).await.unwrap().id;
    drop(stores);
    let conn = rusqlite::Connection::open(dir.path().join("zhiwen.db")).unwrap();
    conn.execute_batch("ALTER TABLE pages DROP COLUMN canon_tag; DELETE FROM schema_migrations WHERE version >= 17;")
        .unwrap();
    drop(conn);
    let report = migrate(&config).await.unwrap();
    assert_eq!((report.from_version, report.applied), (16, applied_from(17)));
    let stores = open(&config).await.unwrap();
    let read = stores.pages.get_page(id).await.unwrap().unwrap();
    assert_eq!(
        (read.body.as_slice(), read.text.as_str(), read.canon_tag),
        (before.body.as_slice(), before.text.as_str(), None)
    );
    let tagged = NewPage { canon_tag: Some("c2-0123456789abcdef".into()), ..before };
    assert_eq!(stores.pages.upsert_page(&tagged).await.unwrap(), Upserted { id, outcome: Outcome::Unchanged });
    assert_eq!(stores.pages.get_page(id).await.unwrap().unwrap().canon_tag, tagged.canon_tag);
}
