//! The admin API against a real HTTP server on a free loopback port, with data made by
//! the real import and matching code paths from the bundled samples (红楼梦, 西游记 of
//! `jinling-press`; 三国演义, 水浒传 of `luoguan-books`; a Big5 pirate copy and an
//! innocent GBK page). The same suite runs on the embedded store and on MongoDB
//! (SecantusDB from the test kit; skipped without it unless ZHIWEN_REQUIRE_SERVERS=1).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde_json::{json, Value};
use tempfile::TempDir;
use zhiwen_api::{ApiConfig, AppState};
use zhiwen_core::{Fingerprinter, Params};
use zhiwen_index::{CandidateIndex, EmbeddedIndex, IndexConfig};
use zhiwen_matcher::task::{run_match_task, NoProgress, Scope, TaskControl, TaskSpec};
use zhiwen_matcher::{Matcher, MatcherConfig};
use zhiwen_store::{KeyRole, StoreConfig, Stores};

fn samples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples")
}

struct Env {
    base: String,
    client: reqwest::Client,
    admin: String,
    analyst: String,
    /// Holder of `jinling-press` (owns the copied work).
    holder: String,
    /// Holder of `luoguan-books` (owns other works, no matches).
    other: String,
    stores: Stores,
    handle: actix_web::dev::ServerHandle,
    state: Arc<AppState>,
    _dir: TempDir,
}

async fn fill(stores: &Stores, dir: &Path) -> Matcher {
    // The operator's import: lines name their owners.
    let opts = zhiwen_ingest::ImportOptions { owner_from_lines: true, ..Default::default() };
    let works = zhiwen_ingest::import_works(
        stores,
        &[samples().join("works/classics.jsonl")],
        "jinling-press",
        &opts,
        &zhiwen_ingest::NoProgress,
    )
    .await
    .unwrap();
    assert_eq!(works.imported, 4, "{works:?}");
    let page_opts =
        zhiwen_ingest::ImportOptions { base_url: Some("http://pirate.example/book/".into()), ..Default::default() };
    let pages = zhiwen_ingest::import_pages(
        stores,
        &[samples().join("pirate-copy-big5.html"), samples().join("other-chapter-gbk.html")],
        &page_opts,
        &zhiwen_ingest::NoProgress,
    )
    .await
    .unwrap();
    assert_eq!(pages.imported, 2, "{pages:?}");
    let index: Arc<dyn CandidateIndex> =
        Arc::new(EmbeddedIndex::open(dir.join("index.sqlite"), IndexConfig::default()).unwrap());
    let matcher =
        Matcher::new(stores.clone(), index, Fingerprinter::new(Params::default()).unwrap(), MatcherConfig::default());
    let summary =
        run_match_task(&matcher, TaskSpec::new(Scope::All), &TaskControl::default(), &NoProgress).await.unwrap();
    assert_eq!(summary.matches_new, 1, "{summary:?}");
    matcher
}

async fn start(stores: Stores, config: ApiConfig) -> Env {
    let dir = tempfile::tempdir().unwrap();
    let matcher = fill(&stores, dir.path()).await;
    let key = |role, owner: Option<&'static str>, name: &'static str| {
        let stores = stores.clone();
        async move { zhiwen_api::generate_key(&stores, role, owner, name, None).await.unwrap().secret }
    };
    let admin = key(KeyRole::Admin, None, "管理员").await;
    let analyst = key(KeyRole::Analyst, None, "分析师").await;
    let holder = key(KeyRole::Holder, Some("jinling-press"), "金陵书局").await;
    let other = key(KeyRole::Holder, Some("luoguan-books"), "罗贯书局").await;
    let state = AppState::new(matcher, dir.path().to_path_buf(), config);
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let server = zhiwen_api::server(state.clone(), listener).unwrap();
    let handle = server.handle();
    tokio::spawn(server);
    let client = reqwest::Client::builder().timeout(Duration::from_secs(60)).build().unwrap();
    Env { base, client, admin, analyst, holder, other, stores, handle, state, _dir: dir }
}

fn test_config() -> ApiConfig {
    ApiConfig {
        key_cache_ttl: Duration::ZERO,
        rate_per_second: 10_000,
        rate_burst: 10_000,
        workers: 2,
        chromium: zhiwen_api::pdf::find_chromium(),
        ..ApiConfig::default()
    }
}

struct Resp {
    status: u16,
    headers: reqwest::header::HeaderMap,
    bytes: Vec<u8>,
}

impl Resp {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.bytes).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.text()))
    }
    fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

impl Env {
    async fn call(&self, method: &str, path: &str, key: Option<&str>, body: Option<Value>) -> Resp {
        let url = format!("{}{}", self.base, path);
        let mut req = self.client.request(method.parse().unwrap(), url);
        if let Some(k) = key {
            req = req.header("Authorization", format!("Bearer {k}"));
        }
        if let Some(b) = body {
            req = req.header("Content-Type", "application/json").body(b.to_string());
        }
        let r = req.send().await.unwrap();
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let bytes = r.bytes().await.unwrap().to_vec();
        Resp { status, headers, bytes }
    }

    /// A request with a raw body and extra headers (uploads, multipart forms, header tricks).
    async fn raw(&self, path: &str, key: &str, headers: &[(&str, &str)], body: Vec<u8>) -> Resp {
        let mut req =
            self.client.post(format!("{}{}", self.base, path)).header("Authorization", format!("Bearer {key}"));
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let r = req.body(body).send().await.unwrap();
        let status = r.status().as_u16();
        let headers = r.headers().clone();
        let bytes = r.bytes().await.unwrap().to_vec();
        Resp { status, headers, bytes }
    }

    async fn get(&self, path: &str, key: &str) -> Resp {
        self.call("GET", path, Some(key), None).await
    }

    async fn the_match(&self) -> Value {
        let r = self.get("/api/v1/matches", &self.admin).await;
        assert_eq!(r.status, 200, "{}", r.text());
        let items = r.json()["items"].as_array().unwrap().clone();
        assert_eq!(items.len(), 1, "{items:?}");
        items[0].clone()
    }
}

fn assert_error(r: &Resp, status: u16, code: &str) {
    assert_eq!(r.status, status, "{}", r.text());
    let v = r.json();
    assert_eq!(v["error"]["code"], code, "{v}");
    assert!(v["error"]["message"].as_str().is_some_and(|m| !m.is_empty()), "{v}");
}

/// Every endpoint for every role, including a holder guessing another owner's ids.
async fn roles_and_ownership(env: &Env) {
    let m = env.the_match().await;
    let (mid, wid, sid, pid) = (m["id"].clone(), m["work_id"].clone(), m["section_id"].clone(), m["page_id"].clone());
    assert_eq!(m["owner"], "jinling-press");
    assert_eq!(m["site"], "pirate.example");
    let queued = env.call("POST", "/api/v1/tasks/match", Some(&env.admin), Some(json!({"scope": "all"}))).await;
    assert_eq!(queued.status, 202, "{}", queued.text());
    let tid = queued.json()["id"].clone();

    // (method, path, body, [admin, analyst, holder of the work, holder of another owner])
    let table: Vec<(&str, String, Option<Value>, [u16; 4])> = vec![
        ("GET", "/api/v1/me".into(), None, [200, 200, 200, 200]),
        ("GET", "/api/v1/stats".into(), None, [200, 200, 200, 200]),
        ("GET", format!("/api/v1/stats?work_id={wid}"), None, [200, 200, 200, 404]),
        ("GET", "/api/v1/works".into(), None, [200, 200, 200, 200]),
        ("GET", format!("/api/v1/works/{wid}"), None, [200, 200, 200, 404]),
        ("GET", format!("/api/v1/works/{wid}/sections/{sid}"), None, [200, 200, 200, 404]),
        ("GET", format!("/api/v1/works/{wid}/report"), None, [200, 200, 200, 404]),
        ("PATCH", format!("/api/v1/works/{wid}"), Some(json!({"author": "曹雪芹"})), [200, 403, 200, 404]),
        ("GET", "/api/v1/pages".into(), None, [200, 200, 200, 200]),
        ("GET", format!("/api/v1/pages/{pid}"), None, [200, 200, 200, 404]),
        ("GET", "/api/v1/matches".into(), None, [200, 200, 200, 200]),
        ("GET", format!("/api/v1/matches/{mid}"), None, [200, 200, 200, 404]),
        ("POST", format!("/api/v1/matches/{mid}/review"), Some(json!({"status": "new"})), [200, 200, 200, 404]),
        ("POST", "/api/v1/matches/review".into(), Some(json!({"ids": [mid], "status": "new"})), [200, 200, 200, 200]),
        ("GET", "/api/v1/exports/matches?format=csv".into(), None, [200, 200, 200, 200]),
        ("GET", "/api/v1/exports/matches?format=json".into(), None, [200, 200, 200, 200]),
        ("GET", "/api/v1/tasks".into(), None, [200, 200, 403, 403]),
        ("GET", format!("/api/v1/tasks/{tid}"), None, [200, 200, 403, 403]),
        ("POST", "/api/v1/tasks/match".into(), Some(json!({"scope": "new"})), [202, 403, 403, 403]),
        (
            "POST",
            "/api/v1/tasks/crawl".into(),
            Some(json!({"seeds": ["https://pirate.example/"]})),
            [202, 403, 403, 403],
        ),
        ("POST", format!("/api/v1/tasks/{tid}/cancel"), None, [200, 403, 403, 403]),
    ];
    let keys = [&env.admin, &env.analyst, &env.holder, &env.other];
    for (method, path, body, expected) in &table {
        // Without a key, or with a wrong one: 401 everywhere.
        let r = env.call(method, path, None, body.clone()).await;
        assert_error(&r, 401, "unauthorized");
        let r = env.call(method, path, Some("zw_notakey0000000000000000000000000000000000"), body.clone()).await;
        assert_error(&r, 401, "unauthorized");
        for (k, want) in keys.iter().zip(expected) {
            let r = env.call(method, path, Some(k), body.clone()).await;
            assert_eq!(r.status, *want, "{method} {path} as key {k}: {}", r.text());
            if *want >= 400 {
                let code = match want {
                    403 => "forbidden",
                    404 => "not_found",
                    _ => unreachable!(),
                };
                assert_error(&r, *want, code);
            }
        }
    }

    // What the other holder sees in the listings: nothing of jinling-press.
    let other = &env.other;
    let r = env.get("/api/v1/matches", other).await.json();
    assert_eq!(r["items"], json!([]));
    let r = env.get("/api/v1/works", other).await.json();
    let owners: Vec<&str> = r["items"].as_array().unwrap().iter().map(|w| w["owner"].as_str().unwrap()).collect();
    assert_eq!(owners, vec!["luoguan-books", "luoguan-books"]);
    let r = env.get("/api/v1/works?owner=jinling-press", other).await.json();
    assert!(r["items"].as_array().unwrap().iter().all(|w| w["owner"] == "luoguan-books"), "{r}");
    let r = env.get("/api/v1/pages", other).await.json();
    assert_eq!(r["items"], json!([]));
    let r = env.get("/api/v1/stats", other).await.json();
    assert_eq!((r["total"].clone(), r["totals"]["matches_all_time"].clone()), (json!(0), json!(0)), "{r}");
    let r = env.get("/api/v1/exports/matches?format=csv", other).await.text();
    assert_eq!(r.lines().count(), 1, "only the header: {r}");
    let r = env.get(&format!("/api/v1/matches?work_id={wid}"), other).await.json();
    assert_eq!(r["items"], json!([]));
    let r = env
        .call("POST", "/api/v1/matches/review", Some(other), Some(json!({"ids": [mid], "status": "dismissed"})))
        .await;
    assert_eq!(r.json()["not_found"], json!([mid]));
    assert_eq!(env.get(&format!("/api/v1/matches/{mid}"), &env.admin).await.json()["match"]["status"], "new");
    // The holder of the work sees its match and page.
    let r = env.get("/api/v1/pages", &env.holder).await.json();
    assert_eq!(r["items"].as_array().unwrap().len(), 1, "{r}");
    // me
    let me = env.get("/api/v1/me", &env.holder).await.json();
    assert_eq!(
        (me["role"].clone(), me["owner"].clone(), me["name"].clone()),
        (json!("holder"), json!("jinling-press"), json!("金陵书局"))
    );

    // Works: create, delete by role; holders only for their own owner.
    let body = |owner: &str, id: &str| json!({"owner": owner, "external_id": id, "title": "测试作品", "author": "佚名", "text": "第一章 开端\n天下大势，分久必合，合久必分。周末七国分争，并入于秦。\n第二章 结局\n及秦灭之后，楚、汉分争，又并入于汉。"});
    let r = env.call("POST", "/api/v1/works", Some(&env.analyst), Some(body("luoguan-books", "t1"))).await;
    assert_error(&r, 403, "forbidden");
    let r = env.call("POST", "/api/v1/works", Some(other), Some(body("jinling-press", "t1"))).await;
    assert_error(&r, 403, "forbidden");
    let r = env.call("POST", "/api/v1/works", Some(other), Some(body("luoguan-books", "t1"))).await;
    assert_eq!(r.status, 201, "{}", r.text());
    let new_id = r.json()["id"].clone();
    assert_eq!(r.json()["section_count"], 2, "split into chapters");
    let again = env.call("POST", "/api/v1/works", Some(other), Some(body("luoguan-books", "t1"))).await;
    assert_eq!((again.status, again.json()["outcome"].clone()), (200, json!("unchanged")));
    let r = env.call("POST", "/api/v1/works", Some(&env.admin), Some(body("", "t2"))).await;
    assert_error(&r, 400, "bad_request");
    let r = env.call("DELETE", &format!("/api/v1/works/{new_id}"), Some(&env.holder), None).await;
    assert_error(&r, 404, "not_found");
    let r = env.call("DELETE", &format!("/api/v1/works/{new_id}"), Some(&env.analyst), None).await;
    assert_error(&r, 403, "forbidden");
    let r = env.call("DELETE", &format!("/api/v1/works/{new_id}"), Some(other), None).await;
    assert_eq!((r.status, r.json()["sections"].clone()), (200, json!(2)), "{}", r.text());
    let r = env.get(&format!("/api/v1/works/{new_id}"), &env.admin).await;
    assert_error(&r, 404, "not_found");
}

/// Everything a holder's works are, as an admin reads it: the list, each work with its
/// sections' texts, and the matches with their review state.
async fn owner_snapshot(env: &Env, owner: &str) -> Value {
    let list = env.get(&format!("/api/v1/works?owner={owner}&limit=1000"), &env.admin).await.json();
    let mut works = Vec::new();
    for w in list["items"].as_array().unwrap() {
        let id = w["id"].as_i64().unwrap();
        let mut detail = env.get(&format!("/api/v1/works/{id}"), &env.admin).await.json();
        let mut texts = Vec::new();
        for s in detail["sections"].as_array().unwrap() {
            let s = env.get(&format!("/api/v1/works/{id}/sections/{}", s["id"]), &env.admin).await.json();
            texts.push(s["text"].clone());
        }
        detail["section_texts"] = json!(texts);
        works.push(detail);
    }
    let matches = env.get("/api/v1/matches?limit=1000", &env.admin).await.json()["items"].clone();
    json!({"works": works, "matches": matches})
}

/// A holder can create, change or delete nothing of another owner, whichever way it names
/// that owner (query, JSON body, lines of an uploaded file, multipart fields, headers),
/// and no answer tells it whether the other owner has a given work.
async fn holders_write_only_their_own(env: &Env) {
    let victim = "jinling-press";
    let attacker = &env.other;
    let before = owner_snapshot(env, victim).await;
    let victim_work = before["works"][0].clone();
    let (vid, vext) = (victim_work["id"].as_i64().unwrap(), victim_work["external_id"].as_str().unwrap().to_owned());
    let mid = env.the_match().await["id"].clone();
    let text = "第一章 开端\n天下大势，分久必合，合久必分。周末七国分争，并入于秦。\n第二章 结局\n及秦灭之后，楚、汉分争，又并入于汉。";
    let jsonl = |id: &str, owner: Option<&str>| {
        let mut v = json!({"id": id, "title": "冒名顶替", "text": text});
        if let Some(o) = owner {
            v["owner"] = json!(o);
        }
        format!("{v}\n").into_bytes()
    };
    let created_owner = |r: &Resp| -> Vec<String> {
        r.json()["works"].as_array().map_or_else(Vec::new, |ws| ws.iter().map(|w| w["id"].to_string()).collect())
    };

    // JSON body naming the victim: refused.
    let r = env
        .call(
            "POST",
            "/api/v1/works",
            Some(attacker),
            Some(json!({"owner": victim, "external_id": vext, "title": "x", "text": text})),
        )
        .await;
    assert_error(&r, 403, "forbidden");
    // Query parameter and header naming the victim: ignored, the work is the attacker's own.
    for (path, headers) in [
        (format!("/api/v1/works?owner={victim}"), vec![("Content-Type", "application/json")]),
        (
            "/api/v1/works".to_owned(),
            vec![("Content-Type", "application/json"), ("X-Owner", victim), ("X-Zhiwen-Owner", victim)],
        ),
    ] {
        let body = json!({"external_id": vext, "title": "同名", "text": text}).to_string().into_bytes();
        let r = env.raw(&path, attacker, &headers, body).await;
        assert_eq!(r.status, 201, "{path}: {}", r.text());
        let id = r.json()["id"].as_i64().unwrap();
        let w = env.get(&format!("/api/v1/works/{id}"), &env.admin).await.json();
        assert_eq!(w["owner"], "luoguan-books", "{w}");
        assert_eq!(env.call("DELETE", &format!("/api/v1/works/{id}"), Some(attacker), None).await.status, 200);
    }
    // Upload with ?owner= naming the victim: refused.
    let r = env
        .raw(&format!("/api/v1/works/upload?filename=x.jsonl&owner={victim}"), attacker, &[], jsonl("n1", None))
        .await;
    assert_error(&r, 403, "forbidden");
    // Lines of the uploaded file naming the victim: refused, with the same answer whether
    // the victim has a work of that id or not.
    let existing = env.raw("/api/v1/works/upload?filename=x.jsonl", attacker, &[], jsonl(&vext, Some(victim))).await;
    let absent =
        env.raw("/api/v1/works/upload?filename=x.jsonl", attacker, &[], jsonl("no-such-work", Some(victim))).await;
    assert_error(&existing, 400, "bad_request");
    assert_eq!(existing.text(), absent.text(), "the answer must not depend on what the victim has");
    assert!(existing.json()["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains(zhiwen_ingest::works::OTHER_OWNER)));
    // ...also mixed with a valid line of its own: that one is stored, the other rejected.
    let mut body = jsonl("own-1", None);
    body.extend(jsonl(&vext, Some(victim)));
    body.extend(jsonl("own-2", Some("luoguan-books")));
    let r = env.raw("/api/v1/works/upload?filename=x.jsonl", attacker, &[], body).await;
    assert_eq!(r.status, 201, "{}", r.text());
    assert_eq!(r.json()["rejected"], json!([{"item": "x.jsonl:2", "reason": zhiwen_ingest::works::OTHER_OWNER}]));
    assert!(r.json()["works"].as_array().unwrap().iter().all(|w| w["id"] != json!(vid)), "{}", r.text());
    for id in created_owner(&r) {
        let w = env.get(&format!("/api/v1/works/{id}"), &env.admin).await.json();
        assert_eq!(w["owner"], "luoguan-books", "{w}");
        env.call("DELETE", &format!("/api/v1/works/{id}"), Some(attacker), None).await;
    }
    // A multipart form with an owner field: the body is the file, the field names nobody.
    let form = format!(
        "--b0\r\nContent-Disposition: form-data; name=\"owner\"\r\n\r\n{victim}\r\n--b0\r\nContent-Disposition: form-data; name=\"file\"; filename=\"x.jsonl\"\r\n\r\n{}--b0--\r\n",
        String::from_utf8(jsonl(&vext, None)).unwrap()
    );
    let r = env
        .raw(
            "/api/v1/works/upload?filename=x.jsonl",
            attacker,
            &[("Content-Type", "multipart/form-data; boundary=b0")],
            form.into_bytes(),
        )
        .await;
    assert!(r.status < 500, "{}", r.text());
    if r.status < 300 {
        for id in created_owner(&r) {
            let w = env.get(&format!("/api/v1/works/{id}"), &env.admin).await.json();
            assert_eq!(w["owner"], "luoguan-books", "{w}");
            env.call("DELETE", &format!("/api/v1/works/{id}"), Some(attacker), None).await;
        }
    }
    // Changing, deleting, reviewing the victim's things: not found, as if absent.
    let r = env.call("PATCH", &format!("/api/v1/works/{vid}"), Some(attacker), Some(json!({"title": "篡改"}))).await;
    assert_error(&r, 404, "not_found");
    let r = env.call("DELETE", &format!("/api/v1/works/{vid}"), Some(attacker), None).await;
    assert_error(&r, 404, "not_found");
    let r = env
        .call("POST", &format!("/api/v1/matches/{mid}/review"), Some(attacker), Some(json!({"status": "dismissed"})))
        .await;
    assert_error(&r, 404, "not_found");
    let r = env
        .call("POST", "/api/v1/matches/review", Some(attacker), Some(json!({"ids": [mid], "status": "dismissed"})))
        .await;
    assert_eq!(r.json()["not_found"], json!([mid]));
    // A field an endpoint does not take is refused, not ignored (an owner in a patch).
    let own = env.get("/api/v1/works", attacker).await.json()["items"][0]["id"].clone();
    let r = env.call("PATCH", &format!("/api/v1/works/{own}"), Some(attacker), Some(json!({"owner": victim}))).await;
    assert_error(&r, 400, "bad_request");
    let r = env
        .call(
            "POST",
            &format!("/api/v1/matches/{mid}/review"),
            Some(&env.holder),
            Some(json!({"status": "new", "owner": "luoguan-books"})),
        )
        .await;
    assert_error(&r, 400, "bad_request");

    assert_eq!(owner_snapshot(env, victim).await, before, "the victim's works and matches changed");

    // An admin's upload may name owners in its lines (an operator's import).
    let r = env
        .raw(
            "/api/v1/works/upload?filename=x.jsonl&owner=luoguan-books",
            &env.admin,
            &[],
            jsonl("admin-1", Some("third-owner")),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    for id in created_owner(&r) {
        let w = env.get(&format!("/api/v1/works/{id}"), &env.admin).await.json();
        assert_eq!(w["owner"], "third-owner", "{w}");
        env.call("DELETE", &format!("/api/v1/works/{id}"), Some(&env.admin), None).await;
    }
}

/// Listing, paging, evidence, review trail, statistics.
async fn matches_evidence_and_review(env: &Env) {
    let m = env.the_match().await;
    let id = m["id"].as_i64().unwrap();
    assert_eq!(m["work_title"], "红楼梦 第一回 甄士隐梦幻识通灵 贾雨村风尘怀闺秀");
    assert!(m["score"].as_f64().unwrap() > 0.5 && m["copied_chars"].as_u64().unwrap() > 1000, "{m}");

    let d = env.get(&format!("/api/v1/matches/{id}"), &env.analyst).await.json();
    let explanation = d["explanation"]["zh"].as_str().unwrap();
    assert!(explanation.starts_with("第1章") && explanation.contains("% 的内容出现在此网页上"), "{explanation}");
    assert!(d["explanation"]["en"].as_str().unwrap().contains("of chapter 1 appears on this page"), "{d}");
    // The verdict's reasons: one line per evidence passage at least, in both languages.
    let passages = d["passages"].as_array().map_or(0, Vec::len);
    for lang in ["zh", "en"] {
        let lines = d["explanation"]["reasons"][lang].as_array().unwrap_or_else(|| panic!("reasons.{lang}: {d}"));
        assert!(passages > 0 && lines.len() >= passages, "{lang}: {} lines for {passages} passages", lines.len());
    }
    assert!(d["explanation"]["reasons"]["zh"][0].as_str().unwrap().starts_with("段落 1"), "{d}");
    let passages = d["passages"].as_array().unwrap();
    assert!(!passages.is_empty());
    let work = env.stores.works.get_section(m["section_id"].as_i64().unwrap()).await.unwrap().unwrap();
    let chars: Vec<char> = work.text.chars().collect();
    for p in passages {
        let (s, e) = (p["work"]["start"].as_u64().unwrap() as usize, p["work"]["end"].as_u64().unwrap() as usize);
        // The quoted work passage is exactly the section's text at its offsets.
        assert_eq!(chars[s..e].iter().collect::<String>(), p["work"]["text"].as_str().unwrap());
        // With up to 60 characters of the section's text on either side.
        let around = |a: usize, b: usize| chars[a.min(chars.len())..b.min(chars.len())].iter().collect::<String>();
        assert_eq!(p["work"]["before"].as_str().unwrap(), around(s.saturating_sub(60), s));
        assert_eq!(p["work"]["after"].as_str().unwrap(), around(e, e + 60));
        // The page side quotes the pirate copy in traditional script.
        let page_text = p["page"]["text"].as_str().unwrap();
        assert!(page_text.contains("開卷第一回"), "{page_text:.80}");
    }
    assert!(d["scores"]["containment_ab"].as_f64().is_some());

    // The match carries the kind of copy the matcher decided (not the verdict's kind, which
    // the detail shows beside it); the kind filter and the statistics speak the same kinds.
    let stored = env.stores.matches.get_match(id).await.unwrap().unwrap();
    let kind = zhiwen_matcher::MatchKind::of(&stored.comparison, &MatcherConfig::default().thresholds).unwrap();
    assert_eq!((m["kind"].as_str(), d["match"]["kind"].as_str()), (Some(kind.as_str()), Some(kind.as_str())), "{d}");
    assert_eq!(d["match"]["verdict_kind"], stored.comparison.verdict.kind.as_str());
    for k in zhiwen_store::MATCH_KINDS {
        let r = env.get(&format!("/api/v1/matches?kind={k}"), &env.analyst).await.json();
        assert_eq!(r["items"].as_array().unwrap().len(), usize::from(k == kind.as_str()), "kind={k}: {r}");
    }
    for bad in ["a_within_b", "b_within_a", "copy"] {
        assert_error(&env.get(&format!("/api/v1/matches?kind={bad}"), &env.analyst).await, 400, "bad_request");
    }
    let s = env.get("/api/v1/stats", &env.holder).await.json();
    let by_kind = s["by_kind"].as_object().unwrap();
    assert_eq!(by_kind.len(), 4, "{s}");
    assert_eq!(
        (by_kind[kind.as_str()].clone(), by_kind.values().filter_map(Value::as_u64).sum::<u64>()),
        (json!(1), 1)
    );

    // Review with an audit trail, bulk review, status filter.
    let r = env
        .call(
            "POST",
            &format!("/api/v1/matches/{id}/review"),
            Some(&env.holder),
            Some(json!({"status": "confirmed", "note": "已核实，确为盗版"})),
        )
        .await;
    assert_eq!(r.status, 200, "{}", r.text());
    let log = r.json()["review_log"].as_array().unwrap().clone();
    let last = log.last().unwrap();
    assert_eq!((last["to"].clone(), last["note"].clone()), (json!("confirmed"), json!("已核实，确为盗版")));
    assert!(last["by"].as_str().unwrap().contains("金陵书局"), "{last}");
    let r = env
        .call(
            "POST",
            "/api/v1/matches/review",
            Some(&env.analyst),
            Some(json!({"ids": [id, 999999], "status": "takedown_sent"})),
        )
        .await
        .json();
    assert_eq!((r["updated"].clone(), r["not_found"].clone()), (json!([id]), json!([999999])));
    let r = env
        .call(
            "POST",
            "/api/v1/matches/review",
            Some(&env.analyst),
            Some(json!({"ids": [id], "status": "takedown_sent"})),
        )
        .await
        .json();
    assert_eq!(r["unchanged"], json!([id]));
    let r = env.get("/api/v1/matches?status=takedown_sent", &env.analyst).await.json();
    assert_eq!(r["items"].as_array().unwrap().len(), 1);
    let r = env.get("/api/v1/matches?status=new", &env.analyst).await.json();
    assert_eq!(r["items"], json!([]));
    let r = env.get("/api/v1/matches?min_score=0.9999&max_score=1", &env.analyst).await.json();
    assert_eq!(r["items"].as_array().unwrap().len(), usize::from(m["score"].as_f64().unwrap() >= 0.9999));
    let r = env.get("/api/v1/matches?site=other.example", &env.analyst).await.json();
    assert_eq!(r["items"], json!([]));
    assert_error(&env.get("/api/v1/matches?status=bogus", &env.analyst).await, 400, "bad_request");
    assert_error(&env.get("/api/v1/matches?sort=name", &env.analyst).await, 400, "bad_request");
    assert_error(&env.get("/api/v1/matches?cursor=zz", &env.analyst).await, 400, "bad_request");
    assert_error(&env.get("/api/v1/matches?from=yesterday", &env.analyst).await, 400, "bad_request");
    assert_error(&env.get("/api/v1/matches?min_score=7", &env.analyst).await, 400, "bad_request");

    // Statistics follow the review.
    let s = env.get("/api/v1/stats", &env.holder).await.json();
    assert_eq!((s["total"].clone(), s["new_today"].clone()), (json!(1), json!(1)), "{s}");
    assert_eq!(s["by_status"]["takedown_sent"], 1);
    assert_eq!(s["top_sites"][0]["site"], "pirate.example");
    assert_eq!(s["top_works"][0]["title"], m["work_title"]);
    assert_eq!(s["by_day"].as_array().unwrap().len(), 1);

    // Work detail: per-section copy counts.
    let w = env.get(&format!("/api/v1/works/{}", m["work_id"]), &env.holder).await.json();
    assert_eq!((w["match_count"].clone(), w["sections"][0]["match_count"].clone()), (json!(1), json!(1)), "{w}");

    // Works search and paging (4 sample works).
    let r = env.get("/api/v1/works?q=水浒", &env.admin).await.json();
    assert_eq!(r["items"][0]["title"].as_str().unwrap().chars().take(3).collect::<String>(), "水浒传");
    let first = env.get("/api/v1/works?limit=3", &env.admin).await.json();
    assert_eq!(first["items"].as_array().unwrap().len(), 3);
    let cursor = first["next_cursor"].as_str().unwrap();
    let second = env.get(&format!("/api/v1/works?limit=3&cursor={cursor}"), &env.admin).await.json();
    assert_eq!((second["items"].as_array().unwrap().len(), second["next_cursor"].clone()), (1, Value::Null));

    // Pages by URL; raw body on request.
    let p = env.get("/api/v1/pages?url=http://pirate.example/book/pirate-copy-big5.html", &env.holder).await.json();
    let pid = p["items"][0]["id"].as_i64().unwrap();
    let page = env.get(&format!("/api/v1/pages/{pid}?body=true"), &env.holder).await.json();
    assert_eq!(page["charset"], "Big5");
    assert!(page["text"].as_str().unwrap().contains("此开卷第一回也"), "{:.200}", page["text"]);
    assert!(page["body_base64"].as_str().is_some_and(|b| b.len() > 1000));
}

async fn exports_and_report(env: &Env) {
    let m = env.the_match().await;
    let r = env.get("/api/v1/exports/matches?format=csv", &env.analyst).await;
    assert_eq!(r.status, 200);
    assert!(r.bytes.starts_with(b"\xEF\xBB\xBF"), "UTF-8 BOM");
    assert!(r.headers["content-disposition"].to_str().unwrap().starts_with("attachment; filename=\"zhiwen-matches-"));
    let csv = r.text();
    // Records, not lines: the evidence passages may span lines (quoted cells).
    let mut reader = csv::Reader::from_reader(csv.trim_start_matches('\u{feff}').as_bytes());
    let headers = reader.headers().unwrap().clone();
    assert_eq!(headers.iter().collect::<Vec<_>>(), zhiwen_matcher::export::COLUMNS.to_vec(), "{csv}");
    let records: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert_eq!(records.len(), 1, "{csv}");
    let line = records[0].iter().collect::<Vec<_>>().join(",");
    assert!(line.contains("红楼梦 第一回") && line.contains("pirate.example"), "{csv}");
    let kind_col = headers.iter().position(|h| h == "kind").unwrap();
    assert_eq!(records[0].get(kind_col), m["kind"].as_str(), "{csv}");
    let json = env.get("/api/v1/exports/matches?format=json", &env.analyst).await.json();
    assert_eq!(json.as_array().unwrap()[0]["match_id"], m["id"]);
    // The evidence comes with the row, as in the command line's export.
    assert!(json[0]["evidence_page"].as_str().is_some_and(|e| !e.is_empty()), "{json}");
    let jsonl = env.get("/api/v1/exports/matches?format=jsonl", &env.analyst).await;
    assert_eq!(jsonl.status, 200);
    let line: Value = serde_json::from_str(jsonl.text().lines().next().unwrap()).unwrap();
    assert_eq!(line["match_id"], m["id"]);
    let empty = env.get("/api/v1/exports/matches?format=json&site=nowhere.example", &env.analyst).await.json();
    assert_eq!(empty, json!([]));
    let x = env.get("/api/v1/exports/matches?format=xlsx", &env.analyst).await;
    assert_eq!(x.status, 200);
    assert!(x.bytes.starts_with(b"PK"), "an XLSX is a zip");
    assert_error(&env.get("/api/v1/exports/matches?format=pdf", &env.analyst).await, 400, "bad_request");

    let report = env.get(&format!("/api/v1/works/{}/report", m["work_id"]), &env.holder).await;
    assert_eq!(report.status, 200);
    let html = report.text();
    assert!(html.contains("<html lang=zh-CN>") && html.contains("侵权证据报告"), "{html:.300}");
    assert!(
        html.contains("http://pirate.example/book/pirate-copy-big5.html") && html.contains("<mark>"),
        "{html:.300}"
    );
    let en = env.get(&format!("/api/v1/works/{}/report?lang=en", m["work_id"]), &env.holder).await.text();
    assert!(en.contains("Evidence report") && en.contains("Infringing page"), "{en:.300}");
    pdf_report(env, &m).await;
    // A dismissed match leaves the default report.
    env.call(
        "POST",
        &format!("/api/v1/matches/{}/review", m["id"]),
        Some(&env.admin),
        Some(json!({"status": "dismissed"})),
    )
    .await;
    let html = env.get(&format!("/api/v1/works/{}/report", m["work_id"]), &env.holder).await.text();
    assert!(html.contains("没有匹配记录") && !html.contains("<mark>"), "{html:.300}");
}

/// The PDF of the evidence report: printed by Chromium from the same HTML, with the
/// Chinese as text (what `pdftotext` reads back), downloaded under a stable name.
async fn pdf_report(env: &Env, m: &Value) {
    let path = format!("/api/v1/works/{}/report?format=pdf", m["work_id"]);
    assert_error(&env.get(&path.replace("pdf", "docx"), &env.holder).await, 400, "bad_request");
    if env.state.config.chromium.is_none() {
        zhiwen_testkit::unavailable::<()>("Chromium (Debian package chromium)", "not on PATH");
        return;
    }
    let r = env.get(&path, &env.holder).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_eq!(r.headers["content-type"], "application/pdf");
    let disposition = r.headers["content-disposition"].to_str().unwrap();
    assert_eq!(disposition, format!("attachment; filename=\"evidence-report-work-{}.pdf\"", m["work_id"]));
    assert!(r.bytes.starts_with(b"%PDF-"), "{:?}", &r.bytes[..r.bytes.len().min(16)]);
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("report.pdf");
    std::fs::write(&file, &r.bytes).unwrap();
    let text = match std::process::Command::new("pdftotext").arg("-enc").arg("UTF-8").arg(&file).arg("-").output() {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout).into_owned(),
        other => {
            zhiwen_testkit::unavailable::<()>("pdftotext (Debian package poppler-utils)", &format!("{other:?}"));
            return;
        }
    };
    // Chromium may break a long URL over lines; the words themselves stay whole.
    for expected in ["侵权证据报告", "红楼梦", "pirate.example", "原作品", "涉嫌侵权网页"] {
        assert!(text.contains(expected), "{expected:?} not in the PDF text: {text:.600}");
    }
    // Another holder guessing the work id gets 404 for the PDF as for the HTML.
    assert_error(&env.get(&path, &env.other).await, 404, "not_found");
}

async fn errors_health_metrics(env: &Env) {
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
async fn worker_runs_tasks(env: &Env) {
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
    token.cancel();
    worker.await.unwrap();
}

/// Every operation of the OpenAPI document is routed, answers with a status it
/// documents, and never with a 5xx (ids that exist nowhere, no bodies).
async fn openapi_covers_the_routes(env: &Env) {
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

async fn suite(stores: Stores) {
    let env = start(stores, test_config()).await;
    openapi_covers_the_routes(&env).await;
    roles_and_ownership(&env).await;
    holders_write_only_their_own(&env).await;
    matches_evidence_and_review(&env).await;
    exports_and_report(&env).await;
    errors_health_metrics(&env).await;
    worker_runs_tasks(&env).await;
    env.handle.stop(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_on_the_embedded_store() {
    let dir = tempfile::tempdir().unwrap();
    let stores = zhiwen_store::open(&StoreConfig::embedded(dir.path())).await.unwrap();
    suite(stores).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn api_on_mongodb() {
    let Some(server) = zhiwen_testkit::mongo::MongoServer::start() else { return };
    let config = StoreConfig::mongo(server.uri(), "t_api");
    zhiwen_store::migrate(&config).await.unwrap();
    suite(zhiwen_store::open(&config).await.unwrap()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rate_limit_per_key_and_dashboard_files() {
    let dir = tempfile::tempdir().unwrap();
    let ui = tempfile::tempdir().unwrap();
    std::fs::write(ui.path().join("index.html"), "<!doctype html><title>指纹</title>").unwrap();
    std::fs::create_dir(ui.path().join("assets")).unwrap();
    std::fs::write(ui.path().join("assets/app-1.js"), "console.log(1)").unwrap();
    let stores = zhiwen_store::open(&StoreConfig::embedded(dir.path())).await.unwrap();
    let config =
        ApiConfig { rate_per_second: 1, rate_burst: 3, ui_dir: Some(ui.path().to_path_buf()), ..test_config() };
    let env = start(stores, config).await;
    for _ in 0..3 {
        assert_eq!(env.get("/api/v1/me", &env.analyst).await.status, 200);
    }
    let r = env.get("/api/v1/me", &env.analyst).await;
    assert_error(&r, 429, "rate_limited");
    assert!(r.headers.contains_key("retry-after"));
    // Limits are per key: another key is unaffected.
    assert_eq!(env.get("/api/v1/me", &env.admin).await.status, 200);
    // The dashboard: files, SPA fallback for deep links, never for the API.
    let r = env.call("GET", "/", None, None).await;
    assert!(r.status == 200 && r.text().contains("指纹"));
    let r = env.call("GET", "/matches/12", None, None).await;
    assert!(r.status == 200 && r.text().contains("指纹"));
    let r = env.call("GET", "/assets/app-1.js", None, None).await;
    assert_eq!((r.status, r.text().as_str()), (200, "console.log(1)"));
    assert!(r.headers["content-type"].to_str().unwrap().contains("javascript"));
    assert_error(&env.call("GET", "/api/v2/x", None, None).await, 404, "not_found");
    // Paths are confined to the dashboard directory.
    let r = env.call("GET", "/%2e%2e/%2e%2e/etc/passwd", None, None).await;
    assert!(!r.text().contains("root:"), "{}", r.text());
    env.handle.stop(true).await;
}

/// An upload over the size limit answers the documented JSON error, not actix's plain
/// text: with a declared length, and streamed without one.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_upload_over_the_limit_is_a_json_413() {
    let dir = tempfile::tempdir().unwrap();
    let stores = zhiwen_store::open(&StoreConfig::embedded(dir.path())).await.unwrap();
    let env = start(stores, ApiConfig { upload_limit: 4096, ..test_config() }).await;
    let url = format!("{}/api/v1/works/upload?filename=big.txt", env.base);
    let big = "第一章 长文\n".repeat(1000).into_bytes(); // 16 KB
    let r = env.client.post(&url).header("Authorization", format!("Bearer {}", env.holder)).body(big.clone()).send();
    let r = r.await.unwrap();
    let status = r.status().as_u16();
    let ctype = r.headers()["content-type"].to_str().unwrap().to_owned();
    let resp = Resp { status, headers: Default::default(), bytes: r.bytes().await.unwrap().to_vec() };
    assert!(ctype.starts_with("application/json"), "{ctype}: {}", resp.text());
    assert_error(&resp, 413, "payload_too_large");
    assert!(resp.json()["error"]["message"].as_str().unwrap().contains("4096"), "{}", resp.text());
    // Chunked, no Content-Length: refused as it arrives.
    let (status_line, body) = chunked_post(&env, "/api/v1/works/upload?filename=big.txt", &big).await;
    assert!(status_line.starts_with("HTTP/1.1 413"), "{status_line}: {body}");
    assert!(body.contains("\"payload_too_large\""), "{body}");
    // Under the limit: stored as before.
    let small = "第一章 短文\n话说天下大势，分久必合，合久必分。".as_bytes().to_vec();
    let r = env.client.post(&url).header("Authorization", format!("Bearer {}", env.holder)).body(small).send();
    assert_eq!(r.await.unwrap().status().as_u16(), 201);
    env.handle.stop(true).await;
}

/// Work ids and titles are the holders' own: in the CSV export, one that a spreadsheet
/// would run as a formula comes out as text (a leading `'`); XLSX holds it as a string.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn csv_export_cells_never_run_as_formulas() {
    let dir = tempfile::tempdir().unwrap();
    let stores = zhiwen_store::open(&StoreConfig::embedded(dir.path())).await.unwrap();
    let env = start(stores, test_config()).await;
    let title = "=HYPERLINK(\"http://x\",\"点击\")";
    // A chapter no other work of the suite holds (红楼梦 第二回).
    let unregistered = std::fs::read_to_string(samples().join("site/unregistered.jsonl")).unwrap();
    let first: Value = serde_json::from_str(unregistered.lines().next().unwrap()).unwrap();
    let text = first["text"].as_str().unwrap().to_owned();
    let r = env
        .call(
            "POST",
            "/api/v1/works",
            Some(&env.holder),
            Some(json!({"external_id": "=1+1", "title": title, "text": text})),
        )
        .await;
    assert_eq!(r.status, 201, "{}", r.text());
    let copy: String = text.chars().take(3000).collect();
    let page = zhiwen_store::NewPage {
        url: "http://formula.example/1.html".into(),
        fetched_at: zhiwen_store::Timestamp::now(),
        http_status: Some(200),
        charset: None,
        body: Vec::new(),
        text: copy,
        format: None,
        source: zhiwen_store::PageSource::Import("test".into()),
    };
    env.stores.pages.upsert_page(&page).await.unwrap();
    run_match_task(&env.state.matcher, TaskSpec::new(Scope::All), &TaskControl::default(), &NoProgress).await.unwrap();

    let r = env.get("/api/v1/exports/matches?format=csv&site=formula.example", &env.analyst).await;
    assert_eq!(r.status, 200, "{}", r.text());
    let csv_text = r.text();
    let mut reader = csv::Reader::from_reader(csv_text.trim_start_matches('\u{feff}').as_bytes());
    let headers = reader.headers().unwrap().clone();
    let col = |name: &str| headers.iter().position(|h| h == name).unwrap();
    let rows: Vec<csv::StringRecord> = reader.records().map(|r| r.unwrap()).collect();
    assert!(!rows.is_empty(), "{csv_text}");
    for row in &rows {
        assert_eq!(&row[col("work_external_id")], "'=1+1", "{csv_text}");
        assert_eq!(row[col("work_title")], format!("'{title}"), "{csv_text}");
        assert_eq!(&row[col("url")], "http://formula.example/1.html");
    }
    // JSON keeps the values as they are.
    let json = env.get("/api/v1/exports/matches?format=json&site=formula.example", &env.analyst).await.json();
    assert_eq!(json[0]["work_external_id"], "=1+1");
    // XLSX: the same cells as strings, no formula anywhere.
    let x = env.get("/api/v1/exports/matches?format=xlsx&site=formula.example", &env.analyst).await;
    assert_eq!(x.status, 200);
    let mut book: calamine::Xlsx<_> = calamine::open_workbook_from_rs(std::io::Cursor::new(x.bytes)).unwrap();
    let formulas = calamine::Reader::worksheet_formula(&mut book, "matches").unwrap();
    assert!(formulas.used_cells().all(|(_, _, f)| f.is_empty()), "no formula in the sheet");
    let range = calamine::Reader::worksheet_range(&mut book, "matches").unwrap();
    assert_eq!(range.get_value((1, 3)), Some(&calamine::Data::String("=1+1".into())));
    assert_eq!(range.get_value((1, 4)), Some(&calamine::Data::String(title.into())));
    env.handle.stop(true).await;
}

/// POST `body` in 1 KB chunks (`Transfer-Encoding: chunked`) as the holder: the status
/// line and the response body. The server may answer before it has read everything.
async fn chunked_post(env: &Env, path: &str, body: &[u8]) -> (String, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let addr = env.base.trim_start_matches("http://").to_owned();
    let mut sock = tokio::net::TcpStream::connect(&addr).await.unwrap();
    let head = format!(
        "POST {path} HTTP/1.1\r\nHost: {addr}\r\nAuthorization: Bearer {}\r\nTransfer-Encoding: chunked\r\nConnection: close\r\n\r\n",
        env.holder
    );
    let mut request = head.into_bytes();
    for chunk in body.chunks(1024) {
        request.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        request.extend_from_slice(chunk);
        request.extend_from_slice(b"\r\n");
    }
    request.extend_from_slice(b"0\r\n\r\n");
    // A write cut short by the server's early answer is expected.
    let _ = sock.write_all(&request).await;
    let mut response = Vec::new();
    let _ = sock.read_to_end(&mut response).await;
    let text = String::from_utf8_lossy(&response).into_owned();
    let status_line = text.lines().next().unwrap_or_default().to_owned();
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status_line, body)
}
