//! The evidence service over a real embedded store: heads per size, the log read back by
//! a new process, and a store that no longer holds what a signed head says refused.

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
