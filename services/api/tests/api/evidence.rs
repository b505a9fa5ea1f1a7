//! Evidence over HTTP: the capture queued by the match, captures on demand, the files,
//! the package and its verification, the log's heads and proofs; a holder sees and
//! writes evidence of their own works only.

use std::io::Cursor;

use zhiwen_evidence::{read_package, verify_consistency, PackageLimits, SignedTreeHead};

use super::{assert_error, Env};

async fn run_captures(env: &Env) -> u64 {
    let service = env.state.evidence.as_ref().expect("evidence on");
    let run = zhiwen_capture::run_queued_captures(service, "api-test", 600, None).await.unwrap();
    assert_eq!(run.failed, 0, "{run:?}");
    run.captured
}

pub(crate) async fn captures_packages_and_heads(env: &Env) {
    let m = env.the_match().await;
    let id = m["id"].as_i64().unwrap();
    let base = format!("/api/v1/matches/{id}/captures");

    // Matching queued the first capture; the worker has not run it yet.
    let r = env.get(&base, &env.holder).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.json()["items"].as_array().unwrap().len(), 0);
    assert_eq!(r.json()["first_capture_pending"], true, "{}", r.text());
    assert_eq!(run_captures(env).await, 1);
    let r = env.get(&base, &env.holder).await;
    let v = r.json();
    assert_eq!(v["first_capture_pending"], false);
    let items = v["items"].as_array().unwrap();
    assert_eq!(items.len(), 1, "{v}");
    let first = &items[0];
    assert_eq!((first["reason"].as_str(), first["leaf_index"].as_u64()), (Some("first_match"), Some(0)));
    // An imported page is captured as it was imported.
    assert_eq!(first["record"]["source"], "stored", "{first}");
    assert_eq!(first["files"][0]["name"], "capture/page.warc");
    let public_key = v["public_key"].as_str().unwrap().to_owned();

    // Another holder: the same 404 as for no such match, for every evidence path.
    let first_id = first["id"].as_i64().unwrap();
    for path in [
        base.clone(),
        format!("{base}/{first_id}/files/capture/page.warc"),
        format!("{base}/{first_id}/verification"),
        format!("/api/v1/matches/{id}/evidence-package"),
    ] {
        assert_error(&env.get(&path, &env.other).await, 404, "not_found");
    }
    assert_error(&env.call("POST", &base, Some(&env.other), None).await, 404, "not_found");
    assert_eq!(run_captures(env).await, 0, "a refused request queued nothing");

    // The owner asks for another capture; it is queued, then made.
    let r = env.call("POST", &base, Some(&env.holder), None).await;
    assert_eq!(r.status, 202, "{}", r.text());
    assert_eq!(run_captures(env).await, 1);
    let items = env.get(&base, &env.holder).await.json()["items"].as_array().unwrap().clone();
    assert_eq!(items.len(), 2);
    assert_eq!((items[1]["reason"].as_str(), items[1]["leaf_index"].as_u64()), (Some("on_demand"), Some(1)));

    // A file, as an attachment that never runs as the API's page.
    let r = env.get(&format!("{base}/{first_id}/files/capture/page.warc"), &env.holder).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert!(r.text().starts_with("WARC/1.1\r\nWARC-Type: resource\r\n"), "{}", r.text());
    assert!(r.headers["content-disposition"].to_str().unwrap().starts_with("attachment"));
    assert!(r.headers["content-security-policy"].to_str().unwrap().contains("sandbox"));
    assert_error(&env.get(&format!("{base}/{first_id}/files/nope.png"), &env.holder).await, 404, "not_found");

    // The package of the first capture verifies offline with the server's key.
    let r = env.get(&format!("/api/v1/matches/{id}/evidence-package?capture={first_id}"), &env.holder).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.headers["content-type"], "application/zip");
    let package = read_package(Cursor::new(&r.bytes), PackageLimits::default()).unwrap();
    let checked = package.verify(Some(&public_key), None);
    assert!(checked.ok(), "{}", checked.summary());
    assert_eq!(package.manifest.details["match"]["id"], id);
    assert_eq!(package.head.head.size, 2);
    let v = env.get(&format!("{base}/{first_id}/verification"), &env.analyst).await.json();
    assert_eq!(v["ok"], true, "{v}");
    assert!(v["summary"].as_str().unwrap().starts_with("verified: "), "{v}");
    assert_error(&env.get(&format!("{base}/999999/verification"), &env.holder).await, 404, "not_found");

    // Heads and the consistency proof a third party checks.
    let r = env.get("/api/v1/evidence/tree-head", &env.holder).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let head: SignedTreeHead = serde_json::from_slice(&r.bytes).unwrap();
    head.verify(Some(&public_key)).unwrap();
    assert_eq!(head.head.size, 2);
    let heads = env.get("/api/v1/evidence/tree-heads", &env.holder).await.json();
    let heads: Vec<SignedTreeHead> = serde_json::from_value(heads["items"].clone()).unwrap();
    assert!(heads.iter().any(|h| h.head.size == 2), "{heads:?}");
    // A tree of one leaf: its root is the leaf's hash; the proof ties it to the head of two.
    let one = env.stores.evidence.capture_leaves(0, 1).await.unwrap().remove(0);
    let root_one = zhiwen_evidence::EvidenceLog::from_leaves([one]).root();
    let r = env.get("/api/v1/evidence/consistency?from=1&to=2", &env.holder).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let proof = r.json()["consistency_proof"].as_str().unwrap().to_owned();
    verify_consistency(&root_one, &head.head.root(), &proof).unwrap();
    assert_error(&env.get("/api/v1/evidence/consistency?from=2&to=1", &env.holder).await, 400, "bad_request");
    assert_error(&env.get("/api/v1/evidence/consistency?from=1&to=99", &env.holder).await, 400, "bad_request");
}
