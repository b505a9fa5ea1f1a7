//! The admin API against a real HTTP server on a free loopback port, with data made by
//! the real import and matching code paths from the bundled samples (红楼梦, 西游记 of
//! `jinling-press`; 三国演义, 水浒传 of `luoguan-books`; a Big5 pirate copy and an
//! innocent GBK page). The same suite runs on the embedded store and on MongoDB
//! (SecantusDB from the test kit; skipped without it unless ZHIWEN_REQUIRE_SERVERS=1).

mod evidence;
mod holders;
mod matches;
mod notices;
mod ownership;
mod service;
mod watched;

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
    start_with_mail(stores, config, None, None).await
}

/// [`start`], sending notices through the SMTP server at `mail_url` (none: a closed port)
/// and the holders' alerts through the one at `alerts_url` (none: no alerts).
async fn start_with_mail(
    stores: Stores,
    config: ApiConfig,
    mail_url: Option<String>,
    alerts_url: Option<String>,
) -> Env {
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
    let evidence = zhiwen_capture::EvidenceService::open(
        stores.clone(),
        zhiwen_evidence::LogKey::generate(),
        zhiwen_capture::CaptureConfig::default(),
    )
    .await
    .unwrap();
    let evidence = Arc::new(evidence);
    let mail = zhiwen_takedown::MailConfig {
        url: mail_url.unwrap_or_else(|| "smtp://127.0.0.1:9".into()),
        from: "知文 <notices@zhiwen.test>".into(),
        reply_to: None,
        timeout_secs: 10,
    };
    let notices = zhiwen_takedown::Notices::new(
        stores.clone(),
        Some(evidence.clone()),
        zhiwen_takedown::NoticeConfig { mail, chromium: None, crawl: Default::default() },
    )
    .unwrap();
    let alerts = alerts_url.map(|url| {
        let mail = zhiwen_takedown::MailConfig {
            url,
            from: "知文 <alerts@zhiwen.test>".into(),
            reply_to: None,
            timeout_secs: 10,
        };
        let dashboard = zhiwen_takedown::AlertConfig { dashboard_url: "https://dash.zhiwen.test".into() };
        zhiwen_takedown::Alerts::new(stores.clone(), mail, dashboard)
    });
    let services = zhiwen_api::Services { evidence: Some(evidence), notices: Some(notices), alerts };
    let state = AppState::with_services(matcher, dir.path().to_path_buf(), config, services);
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
        chromium: zhiwen_ingest::find_chromium(),
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

async fn suite(stores: Stores) {
    let smtp = zhiwen_testkit::smtp::SmtpServer::start();
    // The holders' alerts go to a server of their own (the notices' counts its messages).
    let alert_smtp = zhiwen_testkit::smtp::SmtpServer::start();
    let env =
        start_with_mail(stores, test_config(), smtp.as_ref().map(|s| s.url()), alert_smtp.as_ref().map(|s| s.url()))
            .await;
    service::openapi_covers_the_routes(&env).await;
    ownership::roles_and_ownership(&env).await;
    ownership::holders_write_only_their_own(&env).await;
    matches::matches_evidence_and_review(&env).await;
    matches::exports_and_report(&env).await;
    evidence::captures_packages_and_heads(&env).await;
    service::errors_health_metrics(&env).await;
    holders::alert_settings(&env).await;
    service::worker_runs_tasks(&env).await;
    if let Some(alert_smtp) = &alert_smtp {
        holders::a_new_match_is_alerted(alert_smtp).await;
    }
    holders::profiles_documents_and_licensed(&env).await;
    if let Some(smtp) = &smtp {
        notices::notices_sends_and_removals(&env, smtp).await;
    }
    if let Some(alert_smtp) = &alert_smtp {
        holders::the_worker_sends_the_daily_digest(&env, alert_smtp).await;
    }
    // Last: it adds a match.
    watched::add_list_remove_and_match(&env).await;
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
        canon_tag: None,
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
