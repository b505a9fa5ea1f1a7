//! The process roles of the deployments under `deploy/`, on the real binary:
//! `zhiwen scheduler --enqueue-only` queues the daily task and leaves it to the
//! `zhiwen worker` processes; `zhiwen serve --crawls-only` runs crawls started from the
//! API but no matching; and workers on the MongoDB backend record what one worker does.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use zhiwen_store::{StoreConfig, TaskState};
use zhiwen_testkit::mongo::MongoServer;
use zhiwen_testkit::redis::RedisServer;

/// `[index]` (and optionally `[store]`) tables appended to the settings file, so every
/// command of a data directory uses the same backends.
fn backends(redis: &str, prefix: &str, mongo: Option<(&str, &str)>) -> String {
    let mut s = format!(
        "[matcher.workers]\nclaim_idle_ms = 1500\nblock_ms = 300\n\n[index]\nbackend = \"redis\"\nredis_url = \"{redis}\"\nredis_prefix = \"{prefix}\"\n"
    );
    if let Some((uri, db)) = mongo {
        s.push_str(&format!("\n[store]\nbackend = \"mongodb\"\nmongo_uri = \"{uri}\"\nmongo_database = \"{db}\"\n"));
    }
    s
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime").block_on(f)
}

/// Every task of the store: (key, kind, state).
fn tasks(config: &StoreConfig) -> Vec<(String, String, TaskState)> {
    block_on(async {
        let stores = zhiwen_store::open(config).await.expect("store opens");
        let mut out = Vec::new();
        let mut after = 0;
        loop {
            let page = stores.tasks.list_tasks(None, None, after, 200).await.expect("list tasks");
            let Some(last) = page.last() else { break };
            after = last.id;
            out.extend(page.into_iter().map(|t| (t.key, t.kind, t.state)));
        }
        out
    })
}

fn wait_for<T>(what: &str, timeout: Duration, mut probe: impl FnMut() -> Option<T>) -> T {
    let start = Instant::now();
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(start.elapsed() < timeout, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(200));
    }
}

fn stop(mut child: Child) {
    let _ = child.kill();
    let _ = child.wait();
}

fn run_worker(data: &Path) -> String {
    let mut c = zhiwen(data);
    c.args(["worker", "--until-idle"]);
    run_ok(c)
}

fn daily(tasks: &[(String, String, TaskState)]) -> Vec<TaskState> {
    tasks.iter().filter(|(k, _, _)| k.starts_with("match:daily:")).map(|(_, _, s)| *s).collect()
}

#[test]
fn scheduler_enqueue_only_leaves_the_daily_task_to_the_workers() {
    let Some(redis) = RedisServer::start() else { return };
    let url = redis.url();
    let root = tempfile::tempdir().expect("tempdir");
    let (works, pages) = write_inputs(root.path());

    // Reference: the same data matched by one `zhiwen match --all`.
    let reference = prepared_with(root.path(), "ref", &works, &pages, &backends(&url, "ref", None));
    let mut c = zhiwen(&reference);
    c.args(["match", "--all"]);
    run_ok(c);
    let expected = match_set(&reference);
    assert!(expected.len() >= 15, "{} matches", expected.len());

    let data = prepared_with(root.path(), "sched", &works, &pages, &backends(&url, "sched", None));
    let store = StoreConfig::embedded(&data);
    let mut c = zhiwen(&data);
    c.args(["scheduler", "--enqueue-only"]).stdout(Stdio::null()).stderr(Stdio::null());
    let scheduler = c.spawn().expect("zhiwen scheduler starts");
    // At start it catches up the latest slot of the default schedule: one daily task.
    wait_for("the daily task", Duration::from_secs(60), || (!daily(&tasks(&store)).is_empty()).then_some(()));
    // It never runs it: after a while the task is still queued and nothing is matched.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(daily(&tasks(&store)), vec![TaskState::Queued], "queued, not run by the scheduler");
    assert!(match_set_in(&store).is_empty(), "an enqueue-only scheduler records no match");
    stop(scheduler);

    // A worker picks it up through the Redis stream and runs it to the end.
    let out = run_worker(&data);
    assert!(out.contains("1 task(s) coordinated, 1 finished"), "{out}");
    assert_eq!(daily(&tasks(&store)), vec![TaskState::Succeeded]);
    assert_eq!(match_set_in(&store), expected, "the daily task records what `zhiwen match --all` records");
}

/// A one-page site on a loopback port: `/` holds `body` (a copied chapter), every other
/// path is 404.
fn serve_site(body: String) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let mut buf = [0u8; 4096];
            let n = s.read(&mut buf).unwrap_or(0);
            let request = String::from_utf8_lossy(&buf[..n]);
            let path = request.split_whitespace().nth(1).unwrap_or("/").to_owned();
            let (status, content) = if path == "/" {
                ("200 OK", format!("<html><head><meta charset=\"utf-8\"><title>第一章</title></head><body><div id=\"content\"><p>{body}</p></div></body></html>"))
            } else {
                ("404 Not Found", String::new())
            };
            let _ = write!(
                s,
                "HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{content}",
                content.len()
            );
        }
    });
    port
}

/// POST a JSON body with a bearer key; the status code and the body.
fn post(port: u16, path: &str, key: &str, json: &str) -> (u16, String) {
    let mut s = TcpStream::connect(("127.0.0.1", port)).expect("connect");
    write!(
        s,
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer {key}\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{json}",
        json.len()
    )
    .expect("write request");
    let mut response = String::new();
    s.read_to_string(&mut response).expect("read response");
    let status = response.split_whitespace().nth(1).and_then(|c| c.parse().ok()).unwrap_or(0);
    (status, response)
}

fn page_urls(config: &StoreConfig) -> Vec<String> {
    block_on(async {
        let stores = zhiwen_store::open(config).await.expect("store opens");
        stores.pages.list_pages(None, 0, 1000).await.expect("pages").into_iter().map(|p| p.url).collect()
    })
}

#[test]
fn serve_crawls_only_crawls_but_leaves_matching_to_the_workers() {
    let Some(redis) = RedisServer::start() else { return };
    let url = redis.url();
    let root = tempfile::tempdir().expect("tempdir");
    let (works, pages) = write_inputs(root.path());
    let data = prepared_with(root.path(), "serve", &works, &pages, &backends(&url, "serve", None));
    let store = StoreConfig::embedded(&data);
    // The crawled site copies the first registered chapter word for word.
    let chapter = field(&classics(1)[0], "text");
    let site = serve_site(chapter);

    let mut c = zhiwen(&data);
    c.args(["keys", "create", "--role", "admin", "--name", "deploy-test"]);
    let out = run_ok(c);
    let key = out.lines().next().expect("the key is printed").trim().to_owned();

    let port = zhiwen_testkit::free_port();
    let mut c = zhiwen(&data);
    c.args(["serve", "--crawls-only", "--crawl-allow-loopback", "--listen", &format!("127.0.0.1:{port}")])
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    let server = c.spawn().expect("zhiwen serve starts");
    wait_for("the API", Duration::from_secs(60), || TcpStream::connect(("127.0.0.1", port)).ok());

    let seed = format!("http://127.0.0.1:{site}/");
    let (status, response) =
        post(port, "/api/v1/tasks/crawl", &key, &format!("{{\"seeds\":[\"{seed}\"],\"max_pages\":5}}"));
    assert_eq!(status, 202, "{response}");
    // The crawl runs in the server and stores the page.
    wait_for("the crawl", Duration::from_secs(60), || {
        let t = tasks(&store);
        t.iter().any(|(_, kind, state)| kind == "crawl" && *state == TaskState::Succeeded).then_some(())
    });
    assert!(page_urls(&store).iter().any(|u| u.starts_with(&seed)), "the crawled page is stored");
    // The server's scheduler queued the daily task, but a crawls-only server does not run it.
    std::thread::sleep(Duration::from_secs(3));
    assert_eq!(daily(&tasks(&store)), vec![TaskState::Queued], "matching is left to the workers");
    assert!(match_set_in(&store).is_empty(), "a crawls-only server records no match");
    stop(server);

    // A worker runs the queued matching task (the daily one, which the crawl's request for
    // its new pages joined: one pending task per scope): the crawled copy is found like
    // the imported ones.
    let out = run_worker(&data);
    assert!(out.contains("(0 failed)"), "{out}");
    let left: Vec<_> =
        tasks(&store).into_iter().filter(|(_, kind, s)| kind == "match" && *s != TaskState::Succeeded).collect();
    assert!(left.is_empty(), "every matching task ran: {left:?}");
    let found = match_set_in(&store);
    assert!(found.keys().any(|(_, _, u)| u.starts_with(&seed)), "the crawled copy is matched: {found:?}");
}

#[test]
fn workers_on_the_mongodb_backend_record_what_one_worker_records() {
    let Some(redis) = RedisServer::start() else { return };
    let Some(mongo) = MongoServer::start() else { return };
    let (url, uri) = (redis.url(), mongo.uri());
    let root = tempfile::tempdir().expect("tempdir");
    let (works, pages) = write_inputs(root.path());

    let run = |name: &str, workers: usize| {
        let data = root.path().join(name);
        let config =
            format!("[matcher]\nbatch_size = 4\nconcurrency = 2\n{}", backends(&url, name, Some((&uri, name))));
        std::fs::write(data.with_extension("toml"), config).expect("config");
        let mut c = zhiwen(&data);
        c.arg("migrate");
        run_ok(c);
        let mut c = zhiwen(&data);
        c.args(["import", "works", works.to_str().expect("utf-8"), "--owner", "mongo-test"]);
        run_ok(c);
        let mut c = zhiwen(&data);
        c.args(["import", "pages", pages.to_str().expect("utf-8")]);
        run_ok(c);
        let mut c = zhiwen(&data);
        c.args(["worker", "--submit", "--all"]);
        run_ok(c);
        let children: Vec<Child> = (0..workers)
            .map(|_| {
                let mut c = zhiwen(&data);
                c.args(["worker", "--until-idle"]).stdout(Stdio::piped()).stderr(Stdio::piped());
                c.spawn().expect("zhiwen worker starts")
            })
            .collect();
        for child in children {
            let o = child.wait_with_output().expect("worker ends");
            assert!(o.status.success(), "worker failed: {}", String::from_utf8_lossy(&o.stderr));
        }
        let store = StoreConfig::mongo(uri.clone(), name);
        let all = tasks(&store);
        assert!(all.iter().filter(|(_, k, _)| k == "match").all(|(_, _, s)| *s == TaskState::Succeeded), "{all:?}");
        assert!(page_urls(&store).len() >= 30, "the pages are in MongoDB");
        let matches = match_set_in(&store);
        // Each new match queued its evidence capture, left to a capture worker (`zhiwen
        // serve` or `zhiwen scheduler`): the matching workers never fetch or render.
        let captures = all.iter().filter(|(_, k, s)| k == "capture" && *s == TaskState::Queued).count();
        assert_eq!(captures, matches.len(), "{all:?}");
        matches
    };
    let one = run("one", 1);
    assert!(one.len() >= 15, "{} matches", one.len());
    let two = run("two", 2);
    assert_eq!(two, one, "two workers record exactly what one records");
    // Nothing went to the embedded store of the data directory.
    assert!(!root.path().join("one").join("zhiwen.db").exists(), "the MongoDB backend was used");
}
