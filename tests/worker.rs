//! Scale-out through Redis Streams, on the real binary: two `zhiwen worker` processes
//! share a matching task (consumer group `matchers`); one dies abruptly (it aborts itself
//! at a fixed point, after matching the pages of an entry and before acknowledging it,
//! as a kill at the worst moment would leave it); the survivor takes over its pending
//! entry (XAUTOCLAIM) and the task ends with exactly the matches one worker alone records.

use std::path::Path;
use std::process::{Child, Stdio};

use crate::common::*;
use zhiwen_testkit::redis::RedisServer;

fn worker(data: &Path, redis: &str, prefix: &str) -> std::process::Command {
    let mut c = zhiwen(data);
    c.args(["--index", "redis", "--redis-url", redis, "--redis-prefix", prefix]);
    c
}

fn submit(data: &Path, redis: &str, prefix: &str) {
    let mut c = worker(data, redis, prefix);
    c.args(["worker", "--submit", "--all"]);
    let out = run_ok(c);
    assert!(out.contains("Queued"), "{out}");
}

fn spawn_worker(data: &Path, redis: &str, prefix: &str, abort_after_pages: Option<u64>) -> Child {
    let mut c = worker(data, redis, prefix);
    if let Some(n) = abort_after_pages {
        c.env(zhiwen_matcher::task::ABORT_ENV, n.to_string());
    }
    c.args(["worker", "--until-idle"])
        .env("ZHIWEN_LOG", "zhiwen_matcher=debug")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c.spawn().expect("zhiwen worker starts")
}

fn finish(child: Child) -> String {
    let o = child.wait_with_output().expect("worker ends");
    assert!(o.status.success(), "worker failed: {}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

#[test]
fn two_workers_one_killed_give_the_result_of_one_worker() {
    let Some(redis) = RedisServer::start() else { return };
    let url = redis.url();
    let root = tempfile::tempdir().expect("tempdir");
    let (works, pages) = write_inputs(root.path());
    // Entries idle for 1.5 s are taken over.
    let extra = "[matcher.workers]\nclaim_idle_ms = 1500\nblock_ms = 300\n";

    let one = prepared_with(root.path(), "one", &works, &pages, extra);
    submit(&one, &url, "one");
    let out = finish(spawn_worker(&one, &url, "one", None));
    assert!(out.contains("1 task(s) coordinated, 1 finished"), "{out}");
    let expected = match_set(&one);
    assert!(expected.len() >= 15, "{} matches", expected.len());

    let two = prepared_with(root.path(), "two", &works, &pages, extra);
    submit(&two, &url, "two");
    // The victim dies after matching the first page of its first entry (entries hold 4
    // pages, matched together), before it acknowledges the entry.
    let victim = spawn_worker(&two, &url, "two", Some(1));
    let survivor = spawn_worker(&two, &url, "two", None);
    let died = victim.wait_with_output().expect("wait");
    assert!(killed_by_signal(died.status), "{:?}", died.status);
    let stderr = strip_ansi(&String::from_utf8_lossy(&died.stderr));
    assert!(stderr.contains("stream page matched"), "the victim matched a page before it died: {stderr}");
    let out = finish(survivor);
    assert!(!out.contains("(0 taken over)"), "the survivor took over the victim's pending entry: {out}");

    let got = match_set(&two);
    assert_eq!(got.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>(), "same (section, page) pairs");
    for (key, value) in &expected {
        assert_eq!(&got[key], value, "{key:?}: same kind, scores and evidence");
    }
    // The task is over and its stream gone.
    assert_eq!(redis.command(&["EXISTS", "two:match:task:1"]).as_deref(), Ok("0"), "the task's stream is dropped");
    assert_eq!(redis.command(&["SCARD", "two:match:streams"]).as_deref(), Ok("0"), "no active stream left");
}

/// Two watch roles (`zhiwen crawl --watch`) sharing one store and one Redis share the
/// watched sites through the host leases in that Redis: the lease key is there while a
/// host is visited, the two never ask the host at once, each chapter is fetched once,
/// and both stop cleanly on SIGTERM with no lease left behind.
#[test]
fn two_watch_roles_share_the_watched_sites_through_redis() {
    let Some(redis) = RedisServer::start() else { return };
    let url = redis.url();
    let root = tempfile::tempdir().expect("tempdir");
    let data = root.path().join("data");
    std::fs::write(data.with_extension("toml"), "").expect("settings");
    let site = zhiwen_testkit::site::Site::start();
    let chapters = classics(3);
    let mut links = String::new();
    for (i, c) in chapters.iter().enumerate() {
        let path = format!("/book/{}.html", i + 1);
        let title = field(c, "title");
        let body = format!("<html><head><title>{title}</title></head><body><h1>{title}</h1><div id=content><p>{}</p></div></body></html>", field(c, "text"));
        site.set(&path, 200, body);
        links.push_str(&format!("<a href=\"{path}\">{}</a>", i + 1));
    }
    site.set("/index.html", 200, format!("<html><body>{links}</body></html>"));
    let entry = site.url("/index.html");
    let mut add = zhiwen(&data);
    add.args(["watch", "add", "--owner", "jinling-press", "--entry", &entry, "--pattern", r"/book/\d+\.html$"]);
    run_ok(add);
    // Slow answers: a visit lasts seconds, so two roles started together would overlap.
    site.set_latency(std::time::Duration::from_millis(600));
    let spawn = || {
        let mut c = worker(&data, &url, "w");
        c.args(["crawl", "--watch", "--allow-loopback"]).stdout(Stdio::piped()).stderr(Stdio::piped());
        c.spawn().expect("zhiwen crawl --watch starts")
    };
    let (a, b) = (spawn(), spawn());
    let key = format!("w:watch:host:127.0.0.1:{}", site.port());
    let start = std::time::Instant::now();
    let mut lease_seen = false;
    while (1..=3).any(|i| site.hits(&format!("/book/{i}.html")) == 0) {
        assert!(start.elapsed() < std::time::Duration::from_secs(90), "the chapters were never all fetched");
        lease_seen |= redis.command(&["EXISTS", &key]).as_deref() == Ok("1");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    // Long enough for the other role to have visited too, had it not been kept out.
    std::thread::sleep(std::time::Duration::from_secs(3));
    for child in [&a, &b] {
        let term = std::process::Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
        assert!(term.expect("kill runs").success());
    }
    let outs = [a, b].map(|c| c.wait_with_output().expect("zhiwen ends"));
    for o in &outs {
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(0), "{err}");
        assert!(err.contains("watch stopped"), "{err}");
    }
    assert!(lease_seen, "the host's lease was held in Redis during the visit");
    for i in 1..=3 {
        assert_eq!(site.hits(&format!("/book/{i}.html")), 1, "chapter {i} fetched once");
    }
    assert_eq!(site.hits("/index.html"), 1, "the entry point visited once: the other role found it not due");
    assert_eq!(site.max_in_flight(), 1, "never two requests at once");
    assert_eq!(redis.command(&["EXISTS", &key]).as_deref(), Ok("0"), "no lease left behind");
    let stored: usize = outs.iter().map(|o| String::from_utf8_lossy(&o.stdout).matches("stored 3").count()).sum();
    assert_eq!(stored, 1, "one role stored the three chapters");
}
