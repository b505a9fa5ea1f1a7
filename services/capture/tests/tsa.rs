//! Trusted time against a real RFC 3161 time-stamp authority: `openssl ts -reply` behind a
//! tiny HTTP server on 127.0.0.1, with a test CA and a TSA certificate made for the run.
//! A signed head carries the TSA's token, `openssl ts -verify` accepts it over the head's
//! signed text, a package carries it and verifies, and a changed byte of the token fails;
//! a TSA that fails or answers garbage never stops a head from being signed and kept.
//!
//! Needs `openssl` on PATH (skipped with a note without it, unless
//! `ZHIWEN_REQUIRE_SERVERS=1`); the failing-TSA test needs nothing.

use std::io::{BufRead, BufReader, Cursor, Read, Write};
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use zhiwen_capture::{CaptureConfig, EvidenceService};
use zhiwen_evidence::{read_package, CaptureRecord, FileEntry, LogKey, PackageLimits};
use zhiwen_store::{CaptureFile, NewCapture, StoreConfig, Timestamp};

/// Whether `openssl` can be run; panics without it when servers are required.
fn have_openssl() -> bool {
    let found = Command::new("openssl").arg("version").output().is_ok_and(|o| o.status.success());
    if !found {
        if std::env::var("ZHIWEN_REQUIRE_SERVERS").as_deref() == Ok("1") {
            panic!("openssl is not on PATH and ZHIWEN_REQUIRE_SERVERS=1");
        }
        eprintln!("note: openssl is not on PATH: the RFC 3161 test against a real TSA is skipped");
    }
    found
}

fn run(dir: &Path, args: &[&str]) -> std::process::Output {
    let out = Command::new("openssl").args(args).current_dir(dir).output().expect("run openssl");
    assert!(
        out.status.success(),
        "openssl {args:?} failed: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

/// A test CA, a TSA certificate it issued (extendedKeyUsage critical timeStamping) and an
/// openssl configuration with a `[tsa]` section, in `dir`.
fn make_tsa(dir: &Path) {
    let ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"];
    let mut ca = vec!["req", "-x509"];
    ca.extend(ec);
    ca.extend([
        "-keyout",
        "ca.key",
        "-out",
        "ca.crt",
        "-days",
        "2",
        "-subj",
        "/CN=zhiwen test CA",
        "-addext",
        "basicConstraints=critical,CA:TRUE",
        "-addext",
        "keyUsage=critical,keyCertSign,cRLSign",
    ]);
    run(dir, &ca);
    let mut csr = vec!["req"];
    csr.extend(ec);
    csr.extend(["-keyout", "tsa.key", "-out", "tsa.csr", "-subj", "/CN=zhiwen test TSA"]);
    run(dir, &csr);
    std::fs::write(
        dir.join("tsa.ext"),
        "basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=critical,timeStamping\n",
    )
    .expect("write tsa.ext");
    run(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "tsa.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "tsa.crt",
            "-days",
            "2",
            "-extfile",
            "tsa.ext",
        ],
    );
    std::fs::write(dir.join("tsaserial"), "01\n").expect("write serial");
    std::fs::write(
        dir.join("tsa.cnf"),
        format!(
            "[ tsa ]\ndefault_tsa = tsa_config1\n\n[ tsa_config1 ]\ndir = {}\nserial = $dir/tsaserial\n\
             crypto_device = builtin\nsigner_digest = sha256\ndefault_policy = 1.2.3.4.1\n\
             other_policies = 1.2.3.4.5\ndigests = sha256, sha384, sha512\n\
             accuracy = secs:1, millisecs:500, microsecs:100\nclock_precision_digits = 3\n\
             ordering = yes\ntsa_name = yes\ness_cert_id_chain = no\ness_cert_id_alg = sha256\n",
            dir.display()
        ),
    )
    .expect("write tsa.cnf");
}

/// How the test TSA answers.
#[derive(Clone, Copy)]
enum Answer {
    /// `openssl ts -reply`.
    Openssl,
    /// HTTP 500.
    Error,
    /// HTTP 200 with bytes that are no RFC 3161 response.
    Garbage,
}

/// A TSA on 127.0.0.1 answering as `answer`; returns its URL and its count of requests.
fn serve(dir: PathBuf, answer: Answer) -> (url::Url, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = url::Url::parse(&format!("http://{}/tsr", listener.local_addr().expect("addr"))).expect("url");
    let count = Arc::new(AtomicUsize::new(0));
    let counted = count.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let n = counted.fetch_add(1, Ordering::SeqCst);
            let mut reader = BufReader::new(stream.try_clone().expect("clone"));
            let mut length = 0usize;
            let mut content_type = String::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                let lower = line.to_ascii_lowercase();
                if let Some(v) = lower.strip_prefix("content-length:") {
                    length = v.trim().parse().unwrap_or(0);
                }
                if let Some(v) = lower.strip_prefix("content-type:") {
                    content_type = v.trim().to_owned();
                }
            }
            let mut query = vec![0u8; length];
            if reader.read_exact(&mut query).is_err() {
                continue;
            }
            let (status, body) = match answer {
                Answer::Error => ("500 Internal Server Error", b"no".to_vec()),
                Answer::Garbage => ("200 OK", b"\x30\x82\xff\xffthis is not a TimeStampResp".to_vec()),
                Answer::Openssl => {
                    assert_eq!(content_type, "application/timestamp-query");
                    let (q, r) = (format!("q{n}.tsq"), format!("r{n}.tsr"));
                    std::fs::write(dir.join(&q), &query).expect("write query");
                    let out = Command::new("openssl")
                        .args([
                            "ts",
                            "-reply",
                            "-queryfile",
                            &q,
                            "-signer",
                            "tsa.crt",
                            "-inkey",
                            "tsa.key",
                            "-chain",
                            "ca.crt",
                            "-config",
                            "tsa.cnf",
                            "-out",
                            &r,
                        ])
                        .current_dir(&dir)
                        .output()
                        .expect("openssl ts -reply");
                    if out.status.success() {
                        ("200 OK", std::fs::read(dir.join(&r)).expect("read reply"))
                    } else {
                        eprintln!("openssl ts -reply: {}", String::from_utf8_lossy(&out.stderr));
                        ("500 Internal Server Error", Vec::new())
                    }
                }
            };
            let head = format!(
                "HTTP/1.1 {status}\r\nContent-Type: application/timestamp-reply\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
                body.len()
            );
            let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(&body));
        }
    });
    (url, count)
}

async fn service(dir: &Path, tsa_url: Option<url::Url>) -> EvidenceService {
    let stores = zhiwen_store::open(&StoreConfig::embedded(dir)).await.expect("store");
    let config = CaptureConfig { tsa_url, tsa_timeout: Duration::from_secs(20), ..CaptureConfig::default() };
    EvidenceService::open(stores, LogKey::generate(), config).await.expect("service")
}

/// Appends capture number `n` (its file stored) straight to the log; returns its id.
async fn append_capture(service: &EvidenceService, n: i64) -> i64 {
    let body = format!("WARC/1.1\r\nWARC-Type: resource\r\n\r\n第{n}回").into_bytes();
    let stores = service.stores();
    let sha256 = stores.evidence.put_evidence_file(&body).await.expect("file");
    let name = "capture/page.warc";
    let record = CaptureRecord {
        format: CaptureRecord::FORMAT.into(),
        capture_id: format!("capture:test:{n}"),
        match_id: Some(n),
        url: format!("http://pirate.example/book/{n}.html"),
        captured_at: "2026-11-26T09:30:00.000Z".into(),
        zhiwen_version: "test".into(),
        files: vec![FileEntry { name: name.into(), bytes: body.len() as u64, sha256: sha256.clone() }],
        ..CaptureRecord::default()
    };
    let new = NewCapture {
        key: format!("capture:test:{n}"),
        match_id: n,
        page_id: n,
        url: record.url.clone(),
        captured_at: Timestamp::now(),
        reason: "on_demand".into(),
        files: vec![CaptureFile {
            name: name.into(),
            media_type: "application/warc".into(),
            size: body.len() as u64,
            sha256,
        }],
        record: record.to_leaf(),
    };
    stores.evidence.append_capture(&new).await.expect("append").0.id
}

fn unzip(zip: &[u8]) -> Vec<(String, Vec<u8>)> {
    let mut archive = zip::ZipArchive::new(Cursor::new(zip)).expect("zip");
    (0..archive.len())
        .map(|i| {
            let mut f = archive.by_index(i).expect("entry");
            let mut bytes = Vec::new();
            f.read_to_end(&mut bytes).expect("read");
            (f.name().to_owned(), bytes)
        })
        .collect()
}

fn rezip(files: &[(String, Vec<u8>)]) -> Vec<u8> {
    let mut z = zip::ZipWriter::new(Cursor::new(Vec::new()));
    for (name, bytes) in files {
        z.start_file(name.as_str(), zip::write::SimpleFileOptions::default()).expect("start");
        z.write_all(bytes).expect("write");
    }
    z.finish().expect("finish").into_inner()
}

fn openssl_verify(dir: &Path, data: &str, token: &str) -> std::process::Output {
    Command::new("openssl")
        .args(["ts", "-verify", "-data", data, "-in", token, "-token_in", "-CAfile", "ca.crt"])
        .current_dir(dir)
        .output()
        .expect("openssl ts -verify")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_tsa_stamps_heads_and_packages_carry_the_token() {
    if !have_openssl() {
        return;
    }
    let pki = tempfile::tempdir().expect("tempdir");
    make_tsa(pki.path());
    let (url, asked) = serve(pki.path().to_owned(), Answer::Openssl);
    let data = tempfile::tempdir().expect("tempdir");
    let service = service(data.path(), Some(url)).await;
    let capture = append_capture(&service, 1).await;

    let head = service.sign_head(Timestamp::now().0).await.expect("head");
    assert_eq!(asked.load(Ordering::SeqCst), 1);
    let token = head.timestamp_token_der().expect("hex").expect("the head carries a token");
    assert_eq!(service.latest_head().await.expect("latest"), Some(head.clone()), "kept with its token");
    let read = zhiwen_evidence::read_token(&token).expect("token");
    read.check_data(head.head.signed_text().as_bytes()).expect("stamps the signed text");
    assert_eq!(read.policy, "1.2.3.4.1");

    // The real verifier: OpenSSL checks the TSA's signature and chain over the signed text.
    std::fs::write(pki.path().join("head.txt"), head.head.signed_text()).expect("write");
    std::fs::write(pki.path().join("head.tsr"), &token).expect("write");
    let out = openssl_verify(pki.path(), "head.txt", "head.tsr");
    assert!(out.status.success(), "openssl ts -verify: {}", String::from_utf8_lossy(&out.stderr));
    std::fs::write(pki.path().join("other.txt"), head.head.signed_text().replace('\n', " ")).expect("write");
    assert!(!openssl_verify(pki.path(), "other.txt", "head.tsr").status.success());

    // The same size again: the kept head, no new stamp.
    assert_eq!(service.sign_head(Timestamp::now().0).await.expect("head"), head);
    assert_eq!(asked.load(Ordering::SeqCst), 1);

    // The package: tree-head.txt and tree-head.tsr, listed, checked, and what openssl reads.
    let zip = service.package(capture, &[], serde_json::json!({"match": 1})).await.expect("package");
    let package = read_package(Cursor::new(zip.clone()), PackageLimits::default()).expect("read");
    let v = package.verify(Some(&service.public_key()), None);
    assert!(v.ok(), "{}", v.summary());
    let check = v.checks.iter().find(|c| c.what == "timestamp").expect("a timestamp check");
    assert!(check.detail.contains(&read.gen_time) && check.detail.contains("openssl ts -verify"), "{}", check.detail);
    for name in ["tree-head.txt", "tree-head.tsr"] {
        assert!(package.manifest.files.iter().any(|f| f.name == name), "{name} listed");
    }
    let files = unzip(&zip);
    let out_dir = tempfile::tempdir().expect("tempdir");
    for (name, bytes) in &files {
        if name.starts_with("tree-head.") {
            std::fs::write(out_dir.path().join(name), bytes).expect("write");
        }
    }
    std::fs::copy(pki.path().join("ca.crt"), out_dir.path().join("ca.crt")).expect("copy ca");
    let out = openssl_verify(out_dir.path(), "tree-head.txt", "tree-head.tsr");
    assert!(out.status.success(), "the package's files: {}", String::from_utf8_lossy(&out.stderr));

    // Any changed byte of the token fails verification.
    let tsr = files.iter().position(|(n, _)| n == "tree-head.tsr").expect("tsr");
    for at in [0, files[tsr].1.len() / 2, files[tsr].1.len() - 1] {
        let mut changed = files.clone();
        changed[tsr].1[at] ^= 0x01;
        let v = read_package(Cursor::new(rezip(&changed)), PackageLimits::default())
            .expect("read")
            .verify(Some(&service.public_key()), None);
        assert!(!v.ok(), "byte {at} of tree-head.tsr changed: {}", v.summary());
        assert!(v.checks.iter().any(|c| c.what == "timestamp" && !c.ok), "{}", v.summary());
    }

    // A head whose token is over another text fails the timestamp check.
    let mut wrong = head.clone();
    wrong.head.timestamp_ms += 1;
    let mut changed = files.clone();
    for (name, bytes) in changed.iter_mut() {
        if name == "tree-head.txt" {
            *bytes = wrong.head.signed_text().into_bytes();
        }
    }
    let v = read_package(Cursor::new(rezip(&changed)), PackageLimits::default())
        .expect("read")
        .verify(Some(&service.public_key()), None);
    assert!(v.checks.iter().any(|c| c.what == "timestamp" && !c.ok), "{}", v.summary());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_tsa_never_stops_a_head() {
    let dir = tempfile::tempdir().expect("tempdir");
    for (n, answer) in [(1, Answer::Error), (2, Answer::Garbage)] {
        let (url, asked) = serve(dir.path().to_owned(), answer);
        let data = tempfile::tempdir().expect("tempdir");
        let service = service(data.path(), Some(url)).await;
        append_capture(&service, n).await;
        let head = service.sign_head(Timestamp::now().0).await.expect("signed all the same");
        assert_eq!(asked.load(Ordering::SeqCst), 1);
        assert_eq!(head.timestamp_token, None);
        assert_eq!(head.head.size, 1);
        let kept = service.stores().evidence.latest_tree_head().await.expect("latest").expect("kept");
        assert!(!kept.contains("timestamp_token"), "{kept}");
    }
    // Nobody listening: the same.
    let closed = TcpListener::bind("127.0.0.1:0").expect("bind");
    let url = url::Url::parse(&format!("http://{}/tsr", closed.local_addr().expect("addr"))).expect("url");
    drop(closed);
    let data = tempfile::tempdir().expect("tempdir");
    let service = service(data.path(), Some(url)).await;
    append_capture(&service, 3).await;
    assert_eq!(service.sign_head(Timestamp::now().0).await.expect("signed").timestamp_token, None);
}
