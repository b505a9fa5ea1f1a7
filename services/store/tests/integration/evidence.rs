//! Conformance: evidence files by SHA-256, captures as the dense leaves of the evidence
//! log, signed tree heads and retention; then what only one backend can show (a file
//! corrupted on disk or in GridFS, two writers on one database).

use mongodb::bson::doc;
use zhiwen_store::*;
use zhiwen_testkit::mongo::MongoServer;

use crate::fixtures::{comparison, mongo_stores, noise, page, work, TEXT_A};

/// SHA-256 of `abc` (FIPS 180-2, appendix B.1).
const ABC: &str = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
/// SHA-256 of nothing.
const EMPTY: &str = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";

fn file(name: &str, bytes: &[u8], sha256: &str) -> CaptureFile {
    CaptureFile {
        name: name.into(),
        media_type: "application/octet-stream".into(),
        size: bytes.len() as u64,
        sha256: sha256.into(),
    }
}

fn capture(key: &str, match_id: i64, at: i64, files: Vec<CaptureFile>) -> NewCapture {
    NewCapture {
        key: key.into(),
        match_id,
        page_id: 7,
        url: format!("https://copy.example/{key}"),
        captured_at: Timestamp(at),
        reason: "first_match".into(),
        files,
        // Not UTF-8, with NULs: kept byte for byte.
        record: [b"{\"leaf\":\"".as_slice(), key.as_bytes(), b"\"}\x00\xff\xfe"].concat(),
    }
}

pub async fn evidence_files_by_content(s: &Stores) {
    let e = &s.evidence;
    assert_eq!(e.put_evidence_file(b"abc").await.unwrap(), ABC);
    assert_eq!(e.put_evidence_file(b"abc").await.unwrap(), ABC, "written once, same name");
    assert_eq!(e.get_evidence_file(ABC, 3).await.unwrap().as_deref(), Some(b"abc".as_slice()));
    assert_eq!(e.put_evidence_file(b"").await.unwrap(), EMPTY);
    assert_eq!(e.get_evidence_file(EMPTY, 0).await.unwrap(), Some(Vec::new()));
    assert!(e.get_evidence_file(&"0".repeat(64), 10).await.unwrap().is_none());

    // Larger than the caller's bound: refused, not read.
    let err = e.get_evidence_file(ABC, 2).await.unwrap_err();
    assert!(matches!(err, StoreError::InvalidInput { .. }), "{err}");
    let big = noise(3 * 1024 * 1024 + 17, 5);
    let sha = e.put_evidence_file(&big).await.unwrap();
    assert!(e.get_evidence_file(&sha, 1024).await.is_err());
    assert!(e.get_evidence_file(&sha, big.len() as u64).await.unwrap().unwrap() == big);

    // Names are 64 lower-case hex digits, never a path.
    for bad in ["../zhiwen.db", &ABC.to_uppercase(), &ABC[..63], &format!("{}/", &ABC[..63])] {
        let err = e.get_evidence_file(bad, 10).await.unwrap_err();
        assert!(matches!(err, StoreError::InvalidInput { .. }), "{bad}: {err}");
    }

    // Concurrent writers of the same bytes all succeed.
    let writes: Vec<_> = (0..8)
        .map(|_| {
            let e = s.evidence.clone();
            tokio::spawn(async move { e.put_evidence_file(b"same bytes, eight writers").await })
        })
        .collect();
    let mut names = std::collections::HashSet::new();
    for w in writes {
        names.insert(w.await.unwrap().unwrap());
    }
    assert_eq!(names.len(), 1);
    let name = names.into_iter().next().unwrap();
    assert_eq!(e.get_evidence_file(&name, 100).await.unwrap().unwrap(), b"same bytes, eight writers");
}

pub async fn evidence_captures_append_and_read(s: &Stores) {
    let e = &s.evidence;
    assert_eq!(e.count_captures().await.unwrap(), 0);
    assert!(e.capture_leaves(0, 10).await.unwrap().is_empty());
    let warc = e.put_evidence_file(b"WARC/1.1 ...").await.unwrap();
    let png = e.put_evidence_file(b"\x89PNG...").await.unwrap();
    let files = vec![file("response.warc", b"WARC/1.1 ...", &warc), file("screenshot.png", b"\x89PNG...", &png)];

    let first = capture("capture:match:17:first", 17, 1_000, files.clone());
    let (a, outcome) = e.append_capture(&first).await.unwrap();
    assert_eq!((outcome, a.leaf_index), (Outcome::Inserted, 0));
    assert_eq!(
        (a.key.as_str(), a.match_id, a.page_id, a.url.as_str()),
        (first.key.as_str(), 17, 7, first.url.as_str())
    );
    assert_eq!((a.captured_at, a.reason.as_str(), a.pruned_at), (Timestamp(1_000), "first_match", None));
    assert_eq!((&a.files, &a.record), (&files, &first.record));
    assert_eq!(e.get_capture(a.id).await.unwrap().unwrap(), a);
    assert!(e.get_capture(a.id + 1000).await.unwrap().is_none());

    // The same key again: the stored capture, no new leaf (even with other content).
    let mut again = first.clone();
    again.record = b"another record".to_vec();
    assert_eq!(e.append_capture(&again).await.unwrap(), (a.clone(), Outcome::Unchanged));
    assert_eq!(e.count_captures().await.unwrap(), 1);

    let mut refetch = capture("capture:match:17:refetch:1", 17, 2_000, vec![files[0].clone()]);
    refetch.reason = "refetch".into();
    let (b, _) = e.append_capture(&refetch).await.unwrap();
    let (c, _) = e.append_capture(&capture("capture:match:18:first", 18, 1_500, Vec::new())).await.unwrap();
    assert_eq!((b.leaf_index, c.leaf_index), (1, 2));
    assert_eq!(e.captures_of_match(17).await.unwrap(), vec![a.clone(), b.clone()]);
    assert_eq!(e.captures_of_match(18).await.unwrap(), vec![c.clone()]);
    assert!(e.captures_of_match(19).await.unwrap().is_empty());

    // Leaves page by index, byte for byte.
    let records = [a.record.clone(), b.record.clone(), c.record.clone()];
    assert_eq!(e.capture_leaves(0, 10).await.unwrap(), records);
    assert_eq!(e.capture_leaves(0, 2).await.unwrap(), records[..2]);
    assert_eq!(e.capture_leaves(2, 2).await.unwrap(), records[2..]);
    assert!(e.capture_leaves(3, 2).await.unwrap().is_empty());
    assert!(e.capture_leaves(u64::MAX, 2).await.unwrap().is_empty());
    assert!(e.capture_leaves(0, 0).await.is_err());
    assert_eq!(e.count_captures().await.unwrap(), 3);

    // Bad input writes nothing: files must be stored first and as listed; known reasons.
    let missing = capture("k:missing", 1, 1, vec![file("x", b"x", &"a".repeat(64))]);
    let err = e.append_capture(&missing).await.unwrap_err();
    assert!(matches!(err, StoreError::NotFound { .. }), "{err}");
    let mut wrong_size = capture("k:size", 1, 1, vec![file("x", b"x", &warc)]);
    wrong_size.files[0].size = 1;
    assert!(matches!(e.append_capture(&wrong_size).await.unwrap_err(), StoreError::InvalidInput { .. }));
    let mut bad = capture("k:bad", 1, 1, Vec::new());
    bad.reason = "because".into();
    assert!(matches!(e.append_capture(&bad).await.unwrap_err(), StoreError::InvalidInput { .. }));
    let mut bad = capture("k:bad", 1, 1, vec![file("x", b"abc", ABC)]);
    bad.files[0].sha256 = ABC.to_uppercase();
    assert!(matches!(e.append_capture(&bad).await.unwrap_err(), StoreError::InvalidInput { .. }));
    let mut bad = capture("", 1, 1, Vec::new());
    assert!(e.append_capture(&bad).await.is_err());
    bad.key = "k:empty-record".into();
    bad.record.clear();
    assert!(e.append_capture(&bad).await.is_err());
    assert_eq!(e.count_captures().await.unwrap(), 3);
}

pub async fn evidence_leaves_dense_under_concurrent_appends(s: &Stores) {
    // 20 appenders of distinct keys and 5 of one same key, all at once.
    let tasks: Vec<_> = (0..25)
        .map(|i| {
            let e = s.evidence.clone();
            let key = if i < 20 { format!("capture:{i}") } else { "capture:same".to_owned() };
            tokio::spawn(async move { e.append_capture(&capture(&key, i, 1_000 + i, Vec::new())).await })
        })
        .collect();
    let mut leaves = Vec::new();
    let mut same = Vec::new();
    for t in tasks {
        let (c, outcome) = t.await.unwrap().unwrap();
        if c.key == "capture:same" {
            same.push((c, outcome));
        } else {
            assert_eq!(outcome, Outcome::Inserted);
            leaves.push(c.leaf_index);
        }
    }
    assert_eq!(same.iter().filter(|(_, o)| *o == Outcome::Inserted).count(), 1, "{same:?}");
    assert!(same.iter().all(|(c, _)| *c == same[0].0));
    leaves.push(same[0].0.leaf_index);
    leaves.sort_unstable();
    assert_eq!(leaves, (0..21).collect::<Vec<u64>>());
    assert_eq!(s.evidence.count_captures().await.unwrap(), 21);
    let records = s.evidence.capture_leaves(0, 100).await.unwrap();
    assert_eq!(records.len(), 21);
    for (i, r) in records.iter().enumerate() {
        assert!(r.starts_with(b"{\"leaf\":\"capture:"), "leaf {i}");
    }
}

pub async fn evidence_tree_heads(s: &Stores) {
    let e = &s.evidence;
    assert!(e.latest_tree_head().await.unwrap().is_none());
    assert!(e.tree_heads_since(0, 10).await.unwrap().is_empty());
    let head = |size: u64| format!(r#"{{"tree_size":{size},"root":"ab","signature":"cd"}}"#);
    assert!(e.put_tree_head(1, 1_000, &head(1)).await.unwrap());
    assert!(e.put_tree_head(5, 3_000, &head(5)).await.unwrap());
    assert!(e.put_tree_head(3, 2_000, &head(3)).await.unwrap());
    // The first head of a size wins.
    assert!(!e.put_tree_head(5, 4_000, r#"{"other":true}"#).await.unwrap());
    assert_eq!(e.latest_tree_head().await.unwrap(), Some(head(5)));
    assert_eq!(e.tree_heads_since(0, 10).await.unwrap(), vec![head(1), head(3), head(5)]);
    assert_eq!(e.tree_heads_since(2_000, 10).await.unwrap(), vec![head(3), head(5)]);
    assert_eq!(e.tree_heads_since(2_000, 1).await.unwrap(), vec![head(3)]);
    assert!(e.tree_heads_since(3_001, 10).await.unwrap().is_empty());
    assert!(matches!(e.put_tree_head(6, 5_000, "not json").await.unwrap_err(), StoreError::InvalidInput { .. }));
    assert!(e.put_tree_head(u64::MAX, 5_000, "{}").await.is_err());
    assert_eq!(e.latest_tree_head().await.unwrap(), Some(head(5)));
}

pub async fn evidence_retention(s: &Stores) {
    // Four matches, one per review status.
    let w = s.works.upsert_work(&work("o", "evidence")).await.unwrap();
    let mut matches = Vec::new();
    for (i, status) in ReviewStatus::ALL.into_iter().enumerate() {
        let p = s.pages.upsert_page(&page(&format!("https://copy.example/{i}"), TEXT_A, 1)).await.unwrap().id;
        let m = NewMatch {
            section_id: w.sections[0].1,
            page_id: p,
            kind: "identical".into(),
            comparison: comparison(TEXT_A, TEXT_A),
            seen_at: Timestamp(1),
        };
        let id = s.matches.upsert_match(&m).await.unwrap().id;
        if status != ReviewStatus::New {
            // `licensed` is the licensed-domain rule's alone.
            let by = if status == ReviewStatus::Licensed { LICENSED_BY } else { "alice" };
            s.matches.set_review(id, status, by, None, Timestamp(2)).await.unwrap();
        }
        matches.push(id);
    }
    let [new, confirmed, dismissed, takedown] = [matches[0], matches[1], matches[2], matches[3]];
    let mut stored = std::collections::BTreeMap::new();
    for name in
        ["in_both", "new_only", "confirmed_only", "takedown_only", "with_recent", "dismissed_only", "orphan_only"]
    {
        let bytes = format!("the bytes of {name}").into_bytes();
        let sha = s.evidence.put_evidence_file(&bytes).await.unwrap();
        stored.insert(name, (file(name, &bytes, &sha), bytes));
    }
    let f = |names: &[&str]| names.iter().map(|n| stored[n].0.clone()).collect::<Vec<_>>();
    let old = 1_000;
    let cut = Timestamp(10_000);
    let plan = [
        ("c:new", new, old, f(&["in_both", "new_only"])),
        ("c:confirmed", confirmed, old, f(&["in_both", "confirmed_only"])),
        ("c:takedown", takedown, old, f(&["takedown_only"])),
        ("c:dismissed", dismissed, old, f(&["with_recent", "dismissed_only"])),
        ("c:recent", new, 20_000, f(&["with_recent"])),
        ("c:no-match", 987_654, old, f(&["orphan_only"])),
    ];
    let mut captures = Vec::new();
    for (key, m, at, files) in plan {
        captures.push(s.evidence.append_capture(&capture(key, m, at, files)).await.unwrap().0);
    }
    let leaves = s.evidence.capture_leaves(0, 100).await.unwrap();

    let report = s.evidence.prune_evidence(cut).await.unwrap();
    let deleted = ["new_only", "dismissed_only", "orphan_only"];
    let bytes: u64 = deleted.iter().map(|n| stored[n].1.len() as u64).sum();
    assert_eq!(report, PruneReport { captures: 3, files_deleted: 3, bytes_deleted: bytes });
    for (name, (f, bytes)) in &stored {
        let got = s.evidence.get_evidence_file(&f.sha256, 1_000).await.unwrap();
        if deleted.contains(name) {
            assert!(got.is_none(), "{name} deleted");
        } else {
            assert_eq!(got.as_ref(), Some(bytes), "{name} kept");
        }
    }
    for c in &captures {
        let now = s.evidence.get_capture(c.id).await.unwrap().unwrap();
        let pruned = ["c:new", "c:dismissed", "c:no-match"].contains(&c.key.as_str());
        assert_eq!(now.pruned_at.is_some(), pruned, "{}", c.key);
        assert_eq!(Capture { pruned_at: None, ..now }, *c, "the capture itself stays");
    }
    // The log is untouched.
    assert_eq!(s.evidence.capture_leaves(0, 100).await.unwrap(), leaves);
    assert_eq!(s.evidence.count_captures().await.unwrap(), 6);

    // Idempotent.
    assert_eq!(s.evidence.prune_evidence(cut).await.unwrap(), PruneReport::default());

    // Later, the recent capture goes too; confirmed and takedown evidence never does.
    let report = s.evidence.prune_evidence(Timestamp(i64::MAX)).await.unwrap();
    let bytes = stored["with_recent"].1.len() as u64;
    assert_eq!(report, PruneReport { captures: 1, files_deleted: 1, bytes_deleted: bytes });
    for name in ["in_both", "confirmed_only", "takedown_only"] {
        assert!(s.evidence.get_evidence_file(&stored[name].0.sha256, 1_000).await.unwrap().is_some(), "{name}");
    }
    assert!(s.evidence.get_evidence_file(&stored["with_recent"].0.sha256, 1_000).await.unwrap().is_none());
    assert_eq!(s.evidence.prune_evidence(Timestamp(i64::MAX)).await.unwrap(), PruneReport::default());
}

/// The embedded store keeps files under the data directory, written once; a file
/// corrupted there is an error, never returned.
#[tokio::test]
async fn embedded_evidence_files_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let stores = open(&StoreConfig::embedded(dir.path())).await.unwrap();
    let sha = stores.evidence.put_evidence_file(b"abc").await.unwrap();
    let path = dir.path().join("evidence/files/ba").join(ABC);
    assert_eq!((sha.as_str(), std::fs::read(&path).unwrap()), (ABC, b"abc".to_vec()));
    let modified = std::fs::metadata(&path).unwrap().modified().unwrap();
    std::thread::sleep(std::time::Duration::from_millis(20));
    stores.evidence.put_evidence_file(b"abc").await.unwrap();
    assert_eq!(std::fs::metadata(&path).unwrap().modified().unwrap(), modified, "not written again");
    let leftovers: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary file left: {leftovers:?}");

    std::fs::write(&path, b"abd").unwrap();
    let err = stores.evidence.get_evidence_file(ABC, 10).await.unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
    // Write-once: the corrupt file is not replaced behind the operator's back.
    stores.evidence.put_evidence_file(b"abc").await.unwrap();
    assert!(stores.evidence.get_evidence_file(ABC, 10).await.is_err());
}

/// Two embedded stores on one data directory (as two processes) append at once: leaf
/// indexes stay dense.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn embedded_two_writers_append_dense_leaves() {
    let dir = tempfile::tempdir().unwrap();
    let a = open(&StoreConfig::embedded(dir.path())).await.unwrap();
    let b = open(&StoreConfig::embedded(dir.path())).await.unwrap();
    two_writers_append_dense_leaves(&a, &b).await;
}

async fn two_writers_append_dense_leaves(a: &Stores, b: &Stores) {
    let tasks: Vec<_> = (0..20)
        .map(|i| {
            let e = if i % 2 == 0 { a.evidence.clone() } else { b.evidence.clone() };
            tokio::spawn(async move { e.append_capture(&capture(&format!("two:{i}"), i, i, Vec::new())).await })
        })
        .collect();
    let mut leaves = Vec::new();
    for t in tasks {
        leaves.push(t.await.unwrap().unwrap().0.leaf_index);
    }
    leaves.sort_unstable();
    assert_eq!(leaves, (0..20).collect::<Vec<u64>>());
    assert_eq!(b.evidence.capture_leaves(0, 100).await.unwrap(), a.evidence.capture_leaves(0, 100).await.unwrap());
}

/// Run by the MongoDB conformance test on its server: the files in GridFS, written once
/// and verified on read; two clients appending at once.
pub async fn mongo_evidence_checks(server: &MongoServer) {
    let (a, b) = (mongo_stores(server, "evidence_two").await, mongo_stores(server, "evidence_two").await);
    two_writers_append_dense_leaves(&a, &b).await;

    let stores = mongo_stores(server, "evidence_gridfs").await;
    let client = mongodb::Client::with_uri_str(server.uri()).await.unwrap();
    let files = client.database("t_evidence_gridfs").collection::<mongodb::bson::Document>("evidence.files");
    let chunks = client.database("t_evidence_gridfs").collection::<mongodb::bson::Document>("evidence.chunks");
    stores.evidence.put_evidence_file(b"abc").await.unwrap();
    stores.evidence.put_evidence_file(b"abc").await.unwrap();
    assert_eq!(files.count_documents(doc! {"filename": ABC}).await.unwrap(), 1, "written once");
    let stored = files.find_one(doc! {"filename": ABC}).await.unwrap().unwrap();
    let id = stored.get("_id").unwrap().clone();
    chunks
        .update_one(
            doc! {"files_id": id, "n": 0},
            doc! {"$set": {"data": mongodb::bson::Binary { subtype: mongodb::bson::spec::BinarySubtype::Generic, bytes: b"abd".to_vec() }}},
        )
        .await
        .unwrap();
    let err = stores.evidence.get_evidence_file(ABC, 10).await.unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
}
