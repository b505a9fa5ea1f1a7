//! Errors, health and metrics, the in-process worker, and the OpenAPI document.

use std::time::Duration;

use serde_json::{json, Value};
use zhiwen_store::KeyRole;

use crate::{assert_error, Env};

pub(crate) async fn errors_health_metrics(env: &Env) {
    assert_eq!(env.call("GET", "/health", None, None).await.json()["status"], "ok");
    let ready = env.call("GET", "/ready", None, None).await;
    assert_eq!(
        (ready.status, ready.json()["store"].clone(), ready.json()["index"].clone()),
        (200, json!("ok"), json!("ok"))
    );
    assert_error(&env.get("/api/v1/nothing-here", &env.admin).await, 404, "not_found");
    assert_error(&env.get("/api/v1/works/abc", &env.admin).await, 400, "bad_request");
    let r = env
        .client
        .post(format!("{}/api/v1/works", env.base))
        .header("Authorization", format!("Bearer {}", env.admin))
        .header("Content-Type", "application/json")
        .body("{not json")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let big = "字".repeat(400_000); // 1.2 MB of JSON
    let r = env
        .call(
            "POST",
            "/api/v1/works",
            Some(&env.admin),
            Some(json!({"owner": "x", "external_id": "big", "title": "大", "text": big})),
        )
        .await;
    assert_error(&r, 413, "payload_too_large");
    let r = env
        .call(
            "POST",
            "/api/v1/matches/review",
            Some(&env.admin),
            Some(json!({"ids": (0..1001).collect::<Vec<_>>(), "status": "new"})),
        )
        .await;
    assert_error(&r, 400, "bad_request");
    // Upload a GBK file: detected and split like `zhiwen import works`.
    let text = "第一章 风起\n话说天下大势，分久必合，合久必分。\n第二章 云涌\n周末七国分争，并入于秦。";
    let (gbk, _, _) = encoding_rs::GBK.encode(text);
    let r = env
        .client
        .post(format!("{}/api/v1/works/upload?filename=%E9%A3%8E%E4%BA%91.txt", env.base))
        .header("Authorization", format!("Bearer {}", env.holder))
        .body(gbk.into_owned())
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 201);
    let v: Value = serde_json::from_str(&r.text().await.unwrap()).unwrap();
    let wid = v["works"][0]["id"].clone();
    let w = env.get(&format!("/api/v1/works/{wid}"), &env.holder).await.json();
    assert_eq!((w["owner"].clone(), w["sections"].as_array().unwrap().len()), (json!("jinling-press"), 2), "{w}");
    assert_eq!(w["external_id"], "风云");
    // Metrics: request counters by route, stored matches, index size.
    let metrics = env.call("GET", "/metrics", None, None).await.text();
    assert!(
        metrics.contains("zhiwen_http_requests_total{method=\"GET\",route=\"/api/v1/matches\",status=\"200\"}"),
        "{metrics}"
    );
    assert!(metrics.contains("zhiwen_http_request_duration_seconds_bucket"));
    assert!(metrics.contains("zhiwen_matches_total 1"), "{metrics}");
    assert!(metrics.contains("zhiwen_index_entries"), "{metrics}");
    // A revoked key stops working at once (no cache in this configuration).
    let created = zhiwen_api::generate_key(&env.stores, KeyRole::Analyst, None, "临时", None).await.unwrap();
    assert_eq!(env.get("/api/v1/me", &created.secret).await.status, 200);
    env.stores.keys.revoke_key(created.key.id, zhiwen_store::Timestamp::now()).await.unwrap();
    assert_error(&env.get("/api/v1/me", &created.secret).await, 401, "unauthorized");
}

/// The in-process worker runs a matching task started through the API.
pub(crate) async fn worker_runs_tasks(env: &Env) {
    let token = zhiwen_ingest::CancellationToken::new();
    let worker = tokio::spawn(zhiwen_api::worker::run(env.state.clone(), Default::default(), token.clone()));
    let r = env.call("POST", "/api/v1/tasks/match", Some(&env.admin), Some(json!({"scope": "all"}))).await;
    assert_eq!(r.status, 202, "{}", r.text());
    let id = r.json()["id"].clone();
    let mut state = Value::Null;
    for _ in 0..300 {
        let t = env.get(&format!("/api/v1/tasks/{id}"), &env.analyst).await.json();
        state = t["state"].clone();
        if state == "succeeded" {
            assert_eq!(t["percent"], 100.0, "{t}");
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(state, "succeeded");
    let done = env.get(&format!("/api/v1/tasks/{id}"), &env.admin).await;
    let r = env.call("POST", &format!("/api/v1/tasks/{id}/cancel"), Some(&env.admin), None).await;
    assert_error(&r, 409, "conflict");
    assert_eq!(done.json()["kind"], "match");
    // The server's capture worker: a capture asked for after the task is made within
    // seconds, and the head it publishes is the task's report's evidence head.
    let m = env.the_match().await["id"].as_i64().unwrap();
    let before = env.get(&format!("/api/v1/matches/{m}/captures"), &env.admin).await.json()["items"]
        .as_array()
        .map_or(0, Vec::len);
    let r = env.call("POST", &format!("/api/v1/matches/{m}/captures"), Some(&env.admin), None).await;
    assert_eq!(r.status, 202, "{}", r.text());
    let mut head = Value::Null;
    for _ in 0..300 {
        let t = env.get(&format!("/api/v1/tasks/{id}"), &env.analyst).await.json();
        head = t["evidence_tree_head"].clone();
        if head["size"].as_u64().is_some_and(|n| n as usize > before) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(head["size"].as_u64(), Some(before as u64 + 1), "{head}");
    let head: zhiwen_evidence::SignedTreeHead = serde_json::from_value(head).unwrap();
    head.verify(Some(&env.state.evidence.as_ref().unwrap().public_key())).unwrap();
    a_registered_work_is_matched_at_once(env).await;
    token.cancel();
    worker.await.unwrap();
}

/// With the worker running: a work registered through the API is matched against the
/// stored pages at once (its response names the task), not at the next daily run; then it
/// is deleted with its match.
async fn a_registered_work_is_matched_at_once(env: &Env) {
    let line = std::fs::read_to_string(super::samples().join("works/classics.jsonl")).unwrap();
    let copied: Value = serde_json::from_str(line.lines().next().unwrap()).unwrap();
    let body = json!({
        "owner": "luoguan-books", "external_id": "arrival-1", "title": "新登记的作品", "author": "佚名",
        "text": copied["text"],
    });
    let r = env.call("POST", "/api/v1/works", Some(&env.admin), Some(body.clone())).await;
    assert_eq!(r.status, 201, "{}", r.text());
    let created = r.json();
    let (work, task) = (created["id"].as_i64().unwrap(), created["match_task"].as_i64());
    let task = task.unwrap_or_else(|| panic!("a matching task is queued: {created}"));
    let mut found = Vec::new();
    for _ in 0..300 {
        found = env.get(&format!("/api/v1/matches?work_id={work}"), &env.admin).await.json()["items"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        if !found.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(found.len(), 1, "the stored pirate page is matched to the new work: {found:?}");
    if env.state.alerts.is_some() {
        // Its holder's alert (`holders::alert_settings`) goes out beside the task: wait
        // for it before the work and its match are deleted below.
        use zhiwen_store::AlertOutbox;
        for _ in 0..100 {
            let queue = env.stores.cases.alert_queue("luoguan-books").await.unwrap();
            if queue.is_some_and(|q| q.sent > 0) {
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    let mut state = Value::Null;
    for _ in 0..100 {
        state = env.get(&format!("/api/v1/tasks/{task}"), &env.admin).await.json()["state"].clone();
        if state == "succeeded" {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(state, "succeeded");
    // The same text again changes nothing and queues nothing.
    let r = env.call("POST", "/api/v1/works", Some(&env.admin), Some(body)).await;
    assert_eq!((r.status, r.json()["match_task"].clone()), (200, Value::Null), "{}", r.text());
    let r = env.call("DELETE", &format!("/api/v1/works/{work}"), Some(&env.admin), None).await;
    assert_eq!(r.json()["matches"], 1, "{}", r.text());
    env.the_match().await;
}

/// Every operation of the OpenAPI document is routed, answers with a status it
/// documents, and never with a 5xx (ids that exist nowhere, no bodies).
pub(crate) async fn openapi_covers_the_routes(env: &Env) {
    let doc = env.get("/api/v1/openapi.json", &env.admin).await.json();
    assert_eq!(doc["openapi"], "3.0.3");
    let paths = doc["paths"].as_object().unwrap();
    let mut ops = 0;
    for (path, item) in paths {
        for (method, op) in item.as_object().unwrap() {
            ops += 1;
            let concrete = path.replace("{id}", "987654").replace("{section_id}", "987655");
            let body = op.get("requestBody").map(|_| json!({}));
            let r = env.call(&method.to_uppercase(), &concrete, Some(&env.admin), body).await;
            assert!(r.status < 500, "{method} {path}: {}", r.text());
            assert!(!r.text().contains("no such path or method"), "{method} {path} is documented but not routed");
            let documented = op["responses"].as_object().unwrap();
            assert!(
                documented.contains_key(&r.status.to_string()),
                "{method} {path}: undocumented {}: {}",
                r.status,
                r.text()
            );
        }
    }
    assert!(ops >= 24, "{ops}");
    // The interactive page, served from the binary.
    let page = env.call("GET", "/api/v1/docs/", None, None).await;
    assert_eq!(page.status, 200);
    assert!(page.text().to_lowercase().contains("swagger"), "{}", page.text());
    let css = env.call("GET", "/api/v1/docs/swagger-ui.css", None, None).await;
    assert_eq!(css.status, 200);
}
