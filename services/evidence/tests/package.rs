//! Evidence packages: a package verifies offline, and changing any byte of any of its
//! files, signing with another key, or presenting an earlier head the log does not extend
//! makes verification fail.

use std::io::{Cursor, Read, Write};

use zhiwen_evidence::package::{EarlierHead, ProofFile};
use zhiwen_evidence::{
    read_package, write_package, CaptureRecord, EvidenceLog, FileEntry, LogKey, PackageFile, PackageLimits, TreeHead,
};

struct Fixture {
    zip: Vec<u8>,
    key: LogKey,
    log: EvidenceLog,
}

fn captured() -> Vec<PackageFile> {
    vec![
        PackageFile {
            name: "capture/response.warc".into(),
            bytes: "WARC/1.1\r\nWARC-Type: response\r\n\r\n<html>第一回</html>".as_bytes().to_vec(),
        },
        PackageFile { name: "capture/screenshot.png".into(), bytes: vec![0x89, b'P', b'N', b'G', 1, 2, 3] },
    ]
}

/// A log of `before` other captures, then ours, then `after` more; the package proves ours
/// against the head at the end.
fn fixture(before: usize, after: usize) -> Fixture {
    let key = LogKey::generate();
    let mut log = EvidenceLog::from_leaves((0..before).map(|i| format!("earlier {i}").into_bytes()));
    let files = captured();
    let record = CaptureRecord {
        format: CaptureRecord::FORMAT.into(),
        capture_id: "c-1".into(),
        match_id: Some(7),
        url: "http://pirate.example/book/1.html".into(),
        captured_at: "2026-11-25T12:00:00Z".into(),
        zhiwen_version: "0.1.0".into(),
        files: files.iter().map(|f| FileEntry::of(&f.name, &f.bytes)).collect(),
        ..CaptureRecord::default()
    };
    let leaf = record.to_leaf();
    let index = log.append(leaf.clone());
    for i in 0..after {
        log.append(format!("later {i}").into_bytes());
    }
    let size = log.size();
    let proof =
        ProofFile { leaf_index: index, tree_size: size, inclusion_proof: log.inclusion_proof(index, size).unwrap() };
    let head = key.sign(TreeHead::new(&log.root(), 1_764_072_000_000));
    let extra = [PackageFile { name: "report.html".into(), bytes: "<p>第一回 78%</p>".as_bytes().to_vec() }];
    let details = serde_json::json!({"match": 7, "url": "http://pirate.example/book/1.html"});
    let zip = write_package(Cursor::new(Vec::new()), &key, &files, &leaf, &proof, &head, &extra, details)
        .unwrap()
        .into_inner();
    Fixture { zip, key, log }
}

fn entries(zip: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut archive = zip::ZipArchive::new(Cursor::new(zip)).unwrap();
    (0..archive.len())
        .map(|i| {
            let mut f = archive.by_index(i).unwrap();
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes).unwrap();
            (f.name().to_owned(), bytes)
        })
        .collect()
}

fn rezip(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, bytes) in files {
        z.start_file(name.as_str(), zip::write::SimpleFileOptions::default()).unwrap();
        z.write_all(bytes).unwrap();
    }
    z.finish().unwrap().into_inner()
}

fn verifies(zip: &[u8], key: Option<&str>) -> bool {
    match read_package(Cursor::new(zip), PackageLimits::default()) {
        Ok(p) => p.verify(key, None).ok(),
        Err(_) => false,
    }
}

#[test]
fn a_package_verifies_offline_with_the_expected_key() {
    for (before, after) in [(0, 0), (3, 0), (0, 5), (6, 9)] {
        let f = fixture(before, after);
        let p = read_package(Cursor::new(&f.zip), PackageLimits::default()).unwrap();
        let v = p.verify(Some(&f.key.public_key_hex()), None);
        assert!(v.ok(), "{}", v.summary());
        assert_eq!(v.checks.len(), 5, "{v:?}");
        assert!(v.summary().starts_with("verified: "), "{}", v.summary());
    }
}

#[test]
fn changing_any_byte_of_any_file_fails_verification() {
    let f = fixture(4, 3);
    let key = f.key.public_key_hex();
    let files = entries(&f.zip);
    assert!(files.len() >= 8, "{:?}", files.iter().map(|f| &f.0).collect::<Vec<_>>());
    for (i, (name, bytes)) in files.iter().enumerate() {
        // Every byte of every file, two ways (a bit flip, and a change of letter case).
        for at in 0..bytes.len() {
            for mask in [0x01, 0x20] {
                let mut changed = files.clone();
                changed[i].1[at] ^= mask;
                assert!(!verifies(&rezip(&changed), Some(&key)), "a changed byte {at} of {name} was not noticed");
            }
        }
    }
    // Added and removed files too.
    let mut added = files.clone();
    added.push(("extra.txt".into(), b"slipped in".to_vec()));
    assert!(!verifies(&rezip(&added), Some(&key)));
    for i in 0..files.len() {
        let mut removed = files.clone();
        removed.remove(i);
        assert!(!verifies(&rezip(&removed), Some(&key)), "{} removed", files[i].0);
    }
    // A consistent forgery of the manifest (the report replaced, its hash updated) is
    // caught by the manifest's signature.
    let mut forged = files.clone();
    let report = forged.iter().position(|(n, _)| n == "report.html").unwrap();
    let manifest = forged.iter().position(|(n, _)| n == "manifest.json").unwrap();
    let old = FileEntry::of("report.html", &forged[report].1);
    forged[report].1 = "<p>另一部作品 100%</p>".as_bytes().to_vec();
    let new = FileEntry::of("report.html", &forged[report].1);
    let text = String::from_utf8(forged[manifest].1.clone()).unwrap().replace(&old.sha256, &new.sha256);
    let text = text.replace(&format!("\"bytes\": {}", old.bytes), &format!("\"bytes\": {}", new.bytes));
    forged[manifest].1 = text.into_bytes();
    let read = read_package(Cursor::new(rezip(&forged)), PackageLimits::default()).unwrap();
    let v = read.verify(Some(&key), None);
    assert!(!v.ok());
    assert!(v.checks.iter().any(|c| c.what == "manifest" && !c.ok), "{}", v.summary());
    assert!(v.checks.iter().any(|c| c.what == "files" && c.ok), "the forgery must be consistent: {}", v.summary());
    // Unchanged, re-zipped: still fine (the check is on the files, not the zip's bytes).
    assert!(verifies(&rezip(&files), Some(&key)));
}

#[test]
fn another_key_fails_and_no_key_only_proves_the_carried_one() {
    let f = fixture(2, 2);
    let other = LogKey::generate();
    assert!(!verifies(&f.zip, Some(&other.public_key_hex())));
    let p = read_package(Cursor::new(&f.zip), PackageLimits::default()).unwrap();
    let v = p.verify(None, None);
    assert!(v.ok());
    assert!(v.summary().contains(&f.key.public_key_hex()), "{}", v.summary());
    // A head re-signed by another key over the same tree is not the log's head.
    let files = entries(&f.zip);
    let mut forged = files.clone();
    let head_at = forged.iter().position(|(n, _)| n == "tree-head.json").unwrap();
    let head: zhiwen_evidence::SignedTreeHead = serde_json::from_slice(&forged[head_at].1).unwrap();
    forged[head_at].1 = serde_json::to_vec_pretty(&other.sign(head.head)).unwrap();
    assert!(!verifies(&rezip(&forged), Some(&f.key.public_key_hex())));
}

#[test]
fn an_earlier_head_must_be_extended_by_the_package_head() {
    let f = fixture(5, 5);
    let p = read_package(Cursor::new(&f.zip), PackageLimits::default()).unwrap();
    let key = f.key.public_key_hex();
    let size = f.log.size();
    // An earlier head of this log, with the consistency proof zhiwen serves: holds.
    let earlier = f.key.sign(TreeHead::new(&f.log.root_at(4).unwrap(), 1));
    let proof = f.log.consistency_proof(4, size).unwrap();
    let v = p.verify(Some(&key), Some(EarlierHead { head: &earlier, consistency_proof: &proof }));
    assert!(v.ok(), "{}", v.summary());
    // A head zhiwen signed earlier for a different history (a rewritten log): fails.
    let rewritten = EvidenceLog::from_leaves((0..4).map(|i| format!("rewritten {i}").into_bytes()));
    let other_history = f.key.sign(TreeHead::new(&rewritten.root(), 1));
    let v = p.verify(Some(&key), Some(EarlierHead { head: &other_history, consistency_proof: &proof }));
    assert!(!v.ok());
    assert!(v.summary().contains("consistency"), "{}", v.summary());
    // An "earlier" head signed by someone else: fails.
    let stranger = LogKey::generate().sign(TreeHead::new(&f.log.root_at(4).unwrap(), 1));
    assert!(!p.verify(Some(&key), Some(EarlierHead { head: &stranger, consistency_proof: &proof })).ok());
}

#[test]
fn oversized_and_broken_packages_are_errors() {
    let f = fixture(0, 0);
    let tight = PackageLimits { max_json_bytes: 64, ..PackageLimits::default() };
    assert!(read_package(Cursor::new(&f.zip), tight).is_err());
    let few = PackageLimits { max_files: 2, ..PackageLimits::default() };
    assert!(read_package(Cursor::new(&f.zip), few).is_err());
    assert!(read_package(Cursor::new(b"not a zip".to_vec()), PackageLimits::default()).is_err());
    let truncated = &f.zip[..f.zip.len() / 2];
    assert!(read_package(Cursor::new(truncated), PackageLimits::default()).is_err());
}

#[test]
fn the_key_file_round_trips_and_rejects_garbage() {
    let key = LogKey::generate();
    let again = LogKey::from_secret_hex(&format!("{}\n", key.to_secret_hex())).unwrap();
    assert_eq!(again.public_key_hex(), key.public_key_hex());
    assert!(LogKey::from_secret_hex("not hex").is_err());
    assert!(LogKey::from_secret_hex("abcd").is_err());
}

/// A second entry with the name of a file (a forged copy placed first, which `unzip -n`
/// extracts) is refused: the zip crate reads only the last entry of a name, so the
/// package's own check could not see the first.
#[test]
fn a_second_entry_under_a_files_name_is_refused() {
    let f = fixture(1, 1);
    let key = f.key.public_key_hex();
    let files = entries(&f.zip);
    let (name, bytes) = files.iter().find(|(n, _)| n == "capture/response.warc").cloned().unwrap();
    // Written under a name of the same length, renamed in the zip's bytes afterwards (no
    // zip writer writes a name twice).
    let alias = name.replace("warc", "WARC");
    let forged_bytes = String::from_utf8(bytes).unwrap().replace("第一回", "第二回").into_bytes();
    for forged_first in [true, false] {
        let mut all = files.clone();
        let forged = (alias.clone(), forged_bytes.clone());
        if forged_first {
            all.insert(0, forged);
        } else {
            all.push(forged);
        }
        let mut zip = rezip(&all);
        let mut at = 0;
        let mut renamed = 0;
        while let Some(i) = zip[at..].windows(alias.len()).position(|w| w == alias.as_bytes()) {
            zip[at + i..at + i + alias.len()].copy_from_slice(name.as_bytes());
            at += i + alias.len();
            renamed += 1;
        }
        assert_eq!(renamed, 2, "the local header and the central directory");
        let names: Vec<String> =
            zip::ZipArchive::new(Cursor::new(&zip)).unwrap().file_names().map(str::to_owned).collect();
        assert_eq!(names.len(), files.len(), "the zip crate shows one entry of the name");
        match read_package(Cursor::new(&zip), PackageLimits::default()) {
            Ok(p) => panic!("read, verifying {:?}", p.verify(Some(&key), None).summary()),
            Err(e) => assert!(e.to_string().contains("appears twice"), "{e}"),
        }
    }
    // The package as written still reads and verifies.
    assert!(verifies(&f.zip, Some(&key)));
}
