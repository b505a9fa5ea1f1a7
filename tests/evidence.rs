//! `zhiwen evidence` as a user runs it: the log key is made once, with owner-only
//! permissions, and stays the same; a package verifies with that key and fails, with one
//! line on standard error and exit status 1, when a byte was changed or the key differs.

use std::io::{Cursor, Read, Write};
use std::path::Path;
use std::process::{Command, Output};

use zhiwen_evidence::package::ProofFile;
use zhiwen_evidence::{write_package, CaptureRecord, EvidenceLog, FileEntry, LogKey, PackageFile, TreeHead};

fn zhiwen(data: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_zhiwen")).arg("--data-dir").arg(data).args(args).output().expect("zhiwen runs")
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A package signed by the data directory's key (read from its key file, as the capture
/// side will).
fn package(data: &Path) -> Vec<u8> {
    let key_text = std::fs::read_to_string(data.join("evidence/log.key")).expect("key file");
    let key = LogKey::from_secret_hex(&key_text).expect("key");
    let captured = vec![PackageFile {
        name: "capture/response.warc".into(),
        bytes: "WARC/1.1\r\n\r\n第一回".as_bytes().to_vec(),
    }];
    let record = CaptureRecord {
        format: CaptureRecord::FORMAT.into(),
        capture_id: "c-1".into(),
        match_id: Some(1),
        url: "http://pirate.example/1.html".into(),
        captured_at: "2026-11-25T12:00:00Z".into(),
        zhiwen_version: env!("CARGO_PKG_VERSION").into(),
        files: captured.iter().map(|f| FileEntry::of(&f.name, &f.bytes)).collect(),
        ..CaptureRecord::default()
    };
    let mut log = EvidenceLog::from_leaves([b"an earlier capture".to_vec()]);
    let leaf = record.to_leaf();
    let index = log.append(leaf.clone());
    let proof = ProofFile {
        leaf_index: index,
        tree_size: log.size(),
        inclusion_proof: log.inclusion_proof(index, log.size()).unwrap(),
    };
    let head = key.sign(TreeHead::new(&log.root(), 0));
    write_package(Cursor::new(Vec::new()), &key, &captured, &leaf, &proof, &head, &[], serde_json::json!({}))
        .unwrap()
        .into_inner()
}

#[test]
fn a_package_verifies_with_the_log_key_and_a_changed_byte_fails() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");

    let first = zhiwen(&data, &["evidence", "key"]);
    assert!(first.status.success(), "{}", text(&first.stderr));
    let public = text(&first.stdout).trim().to_owned();
    assert_eq!(public.len(), 64, "{public}");
    let again = zhiwen(&data, &["evidence", "key"]);
    assert_eq!(text(&again.stdout).trim(), public, "the key is made once");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(data.join("evidence/log.key")).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "the key file is readable by its owner only: {mode:o}");
    }

    let good = dir.path().join("good.zip");
    std::fs::write(&good, package(&data)).unwrap();
    let ok = zhiwen(&data, &["evidence", "verify", good.to_str().unwrap(), "--public-key", &public]);
    assert!(ok.status.success(), "{}", text(&ok.stderr));
    assert!(text(&ok.stdout).contains("verified: "), "{}", text(&ok.stdout));
    assert_eq!(text(&ok.stdout).lines().count(), 1);

    // Another key: refused.
    let other = LogKey::generate().public_key_hex();
    let wrong = zhiwen(&data, &["evidence", "verify", good.to_str().unwrap(), "--public-key", &other]);
    assert_eq!(wrong.status.code(), Some(1));
    assert!(text(&wrong.stderr).contains("NOT verified"), "{}", text(&wrong.stderr));

    // One changed byte of the captured page: refused, one line on stderr.
    let mut archive = zip::ZipArchive::new(Cursor::new(std::fs::read(&good).unwrap())).unwrap();
    let mut out = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for i in 0..archive.len() {
        let mut f = archive.by_index(i).unwrap();
        let mut bytes = Vec::new();
        f.read_to_end(&mut bytes).unwrap();
        if f.name() == "capture/response.warc" {
            let last = bytes.len() - 1;
            bytes[last] ^= 1;
        }
        out.start_file(f.name(), zip::write::SimpleFileOptions::default()).unwrap();
        out.write_all(&bytes).unwrap();
    }
    let bad = dir.path().join("bad.zip");
    std::fs::write(&bad, out.finish().unwrap().into_inner()).unwrap();
    let refused = zhiwen(&data, &["evidence", "verify", bad.to_str().unwrap(), "--public-key", &public]);
    assert_eq!(refused.status.code(), Some(1));
    let err = text(&refused.stderr);
    assert!(err.contains("capture/response.warc was changed"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    // Not a package at all: a clear error, not a panic.
    let junk = dir.path().join("junk.zip");
    std::fs::write(&junk, b"not a zip").unwrap();
    let o = zhiwen(&data, &["evidence", "verify", junk.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).contains("not a readable evidence package"), "{}", text(&o.stderr));
}
