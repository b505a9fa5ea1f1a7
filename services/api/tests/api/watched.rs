//! Watched sites through the API: who may add and remove them, JSON errors for bad
//! input, and the watch pass of the server's task loop end to end against a loopback
//! pirate site: a chapter added to its feed is fetched at the next pass and matched
//! against the registered work it copies.

use serde_json::{json, Value};
use zhiwen_ingest::{AddressPolicy, WatchConfig};
use zhiwen_matcher::task::{run_next_task, NoProgress, TaskControl};
use zhiwen_store::{MatchQuery, Timestamp};
use zhiwen_testkit::site::Site;

use crate::{assert_error, samples, Env};

fn first_text(file: &str) -> String {
    let text = std::fs::read_to_string(samples().join(file)).unwrap();
    let first: Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    first["text"].as_str().unwrap().to_owned()
}

fn chapter(title: &str, text: &str) -> String {
    format!("<html><head><title>{title}</title></head><body><h1>{title}</h1><div id=content><p>{text}</p></div></body></html>")
}

fn rss(site: &Site, paths: &[&str]) -> String {
    let items: String = paths.iter().map(|p| format!("<item><link>{}</link></item>", site.url(p))).collect();
    format!("<?xml version=\"1.0\"?><rss version=\"2.0\"><channel>{items}</channel></rss>")
}

pub(crate) async fn add_list_remove_and_match(env: &Env) {
    let site = Site::start();
    let id = format!("127.0.0.1:{}", site.port());
    let body = json!({"entry_points": [site.url("/rss.xml")], "chapter_patterns": [r"/book/\d+\.html$"]});

    // A holder watches a site for itself; the same again is unchanged.
    let r = env.call("POST", "/api/v1/watched-sites", Some(&env.holder), Some(body.clone())).await;
    assert_eq!(r.status, 201, "{}", r.text());
    let v = r.json();
    assert_eq!(
        (v["outcome"].as_str(), v["site"]["owner"].as_str(), v["site"]["id"].as_str()),
        (Some("inserted"), Some("jinling-press"), Some(id.as_str()))
    );
    let r = env.call("POST", "/api/v1/watched-sites", Some(&env.holder), Some(body.clone())).await;
    assert_eq!((r.status, r.json()["outcome"].as_str()), (200, Some("unchanged")), "{}", r.text());

    // Another holder can neither add one for the first holder, nor use the site's id for
    // another host, nor see or remove it (until it joins it, below); an analyst only reads.
    let elsewhere = json!({"entry_points": ["http://elsewhere.example/"], "id": id});
    assert_error(&env.call("POST", "/api/v1/watched-sites", Some(&env.other), Some(elsewhere)).await, 403, "forbidden");
    let theirs = json!({"owner": "jinling-press", "entry_points": [site.url("/other.xml")], "id": "x"});
    assert_error(&env.call("POST", "/api/v1/watched-sites", Some(&env.other), Some(theirs)).await, 403, "forbidden");
    assert_error(
        &env.call("POST", "/api/v1/watched-sites", Some(&env.analyst), Some(body.clone())).await,
        403,
        "forbidden",
    );
    assert_error(
        &env.call("DELETE", &format!("/api/v1/watched-sites/{id}"), Some(&env.other), None).await,
        404,
        "not_found",
    );
    assert_error(&env.get(&format!("/api/v1/watched-sites/{id}"), &env.other).await, 404, "not_found");
    let mine = env.get("/api/v1/watched-sites", &env.other).await.json();
    assert_eq!(mine["items"].as_array().map(Vec::len), Some(0), "{mine}");
    let all = env.get("/api/v1/watched-sites", &env.analyst).await.json();
    assert_eq!(all["items"].as_array().map(Vec::len), Some(1), "{all}");
    // An admin must name the owner, and cannot point a site's id at another host.
    assert_error(
        &env.call("POST", "/api/v1/watched-sites", Some(&env.admin), Some(body.clone())).await,
        400,
        "bad_request",
    );
    let moved = json!({"owner": "luoguan-books", "entry_points": ["http://elsewhere.example/"], "id": id});
    assert_error(&env.call("POST", "/api/v1/watched-sites", Some(&env.admin), Some(moved)).await, 409, "conflict");

    // Bad input is a JSON 400 that names the problem, and writes nothing.
    for bad in [
        json!({"entry_points": []}),
        json!({"entry_points": ["ftp://pirate.example/"]}),
        json!({"entry_points": ["http://a.example/", "http://b.example/"]}),
        json!({"entry_points": ["http://a.example/"], "chapter_patterns": ["(unclosed"]}),
        json!({"entry_points": ["http://a.example/"], "min_delay_secs": 0}),
        json!({"entry_points": ["http://a.example/"], "schedule": "often"}),
        json!({"entry_point": "http://a.example/"}),
    ] {
        let r = env.call("POST", "/api/v1/watched-sites", Some(&env.holder), Some(bad.clone())).await;
        assert_error(&r, 400, "bad_request");
    }
    let r = env.raw("/api/v1/watched-sites", &env.holder, &[("Content-Type", "application/json")], b"{".to_vec()).await;
    assert_error(&r, 400, "bad_request");
    let all = env.get("/api/v1/watched-sites", &env.admin).await.json();
    assert_eq!(all["items"].as_array().map(Vec::len), Some(1), "{all}");

    // The watch pass: an innocent chapter first, then a copy of a registered work.
    let copied = first_text("works/classics.jsonl"); // 红楼梦 第一回, jinling-press's
    let innocent = first_text("site/unregistered.jsonl");
    site.set("/book/1.html", 200, chapter("第一章", &innocent.chars().take(2000).collect::<String>()));
    site.set("/book/2.html", 200, chapter("第二章", &copied.chars().take(3000).collect::<String>()));
    site.set_typed("/rss.xml", 200, "application/rss+xml", rss(&site, &["/book/1.html"]));
    let policy = AddressPolicy { allow_loopback: true, allow_private: false };
    // The schedule below is asserted in these units, whatever the default.
    let config = WatchConfig { min_interval: std::time::Duration::from_secs(60), ..WatchConfig::default() };
    let watcher = zhiwen_api::worker::server_watcher(&env.state, policy, &config, None).unwrap();
    let t0 = Timestamp::now();
    let first = watcher.pass(t0).await.unwrap();
    assert_eq!((first.visits, first.stored.len()), (1, 1), "{first}");
    while run_next_task(&env.state.matcher, "watch-test", &TaskControl::default(), &NoProgress).await.unwrap().is_some()
    {
    }
    // The new chapter appears in the feed: the next pass fetches it, the matching task
    // it queues finds the copy.
    site.set_typed("/rss.xml", 200, "application/rss+xml", rss(&site, &["/book/2.html", "/book/1.html"]));
    let t1 = Timestamp(t0.0 + 3_600_000);
    let second = watcher.pass(t1).await.unwrap();
    assert_eq!((second.visits, second.new_links, second.stored.len()), (1, 1, 1), "{second}");
    let ran = run_next_task(&env.state.matcher, "watch-test", &TaskControl::default(), &NoProgress).await.unwrap();
    assert!(ran.is_some(), "the pass queued a matching task");
    let page = env.stores.pages.find_page(&site.url("/book/2.html")).await.unwrap().unwrap();
    let q = MatchQuery { page_id: Some(page.id), ..MatchQuery::default() };
    let matches = env.stores.matches.list_matches(&q, 0, 10).await.unwrap();
    assert!(!matches.is_empty(), "the copied chapter is matched");
    let innocent_page = env.stores.pages.find_page(&site.url("/book/1.html")).await.unwrap().unwrap();
    let q = MatchQuery { page_id: Some(innocent_page.id), ..MatchQuery::default() };
    assert!(env.stores.matches.list_matches(&q, 0, 10).await.unwrap().is_empty());
    // The next visit finds the feed unchanged (304), but the chapter it fetched last time
    // was matched since: a copy found, so the interval does not grow.
    let t2 = Timestamp(t1.0 + 3_600_000);
    let third = watcher.pass(t2).await.unwrap();
    assert_eq!((third.visits, third.not_modified, third.stored.len()), (1, 1, 0), "{third}");
    // The schedule is visible through the API.
    let s = env.get(&format!("/api/v1/watched-sites/{id}"), &env.holder).await.json();
    let e = &s["entry_points"][0];
    assert_eq!((e["visits"].as_u64(), e["visits_with_new"].as_u64()), (Some(3), Some(2)), "{s}");
    assert_eq!((e["visits_with_copies"].as_u64(), e["interval_secs"].as_u64()), (Some(1), Some(60)), "{s}");

    // A second holder adds the same host: it joins the site (one schedule, kept), sees it
    // as its own, and learns no other holder's name; an analyst sees both.
    let also = json!({"entry_points": [site.url("/rss.xml"), site.url("/latest.html")]});
    let r = env.call("POST", "/api/v1/watched-sites", Some(&env.other), Some(also)).await;
    assert_eq!((r.status, r.json()["outcome"].as_str()), (200, Some("updated")), "{}", r.text());
    let theirs = env.get(&format!("/api/v1/watched-sites/{id}"), &env.other).await.json();
    assert_eq!(theirs["holders"], json!(["luoguan-books"]), "{theirs}");
    assert_eq!(theirs["owner"], json!("luoguan-books"), "{theirs}");
    assert_eq!(theirs["entry_points"][0]["visits"].as_u64(), Some(3), "{theirs}");
    assert_eq!(theirs["entry_points"].as_array().map(Vec::len), Some(2), "{theirs}");
    assert!(theirs["chapter_patterns"].as_array().is_some_and(Vec::is_empty), "no patterns on one side: every link");
    let seen = env.get(&format!("/api/v1/watched-sites/{id}"), &env.analyst).await.json();
    assert_eq!(seen["holders"], json!(["jinling-press", "luoguan-books"]), "{seen}");

    // The first holder stops watching it: it stays watched for the second, then the
    // second stops too and the site is gone.
    let r = env.call("DELETE", &format!("/api/v1/watched-sites/{id}"), Some(&env.holder), None).await;
    assert_eq!((r.status, r.json()["deleted"].as_str()), (200, Some(id.as_str())), "{}", r.text());
    assert_error(&env.get(&format!("/api/v1/watched-sites/{id}"), &env.holder).await, 404, "not_found");
    let seen = env.get(&format!("/api/v1/watched-sites/{id}"), &env.admin).await.json();
    assert_eq!((seen["owner"].as_str(), seen["holders"].clone()), (Some("luoguan-books"), json!(["luoguan-books"])));
    let r = env.call("DELETE", &format!("/api/v1/watched-sites/{id}"), Some(&env.other), None).await;
    assert_eq!(r.status, 200, "{}", r.text());
    assert_error(&env.get(&format!("/api/v1/watched-sites/{id}"), &env.admin).await, 404, "not_found");
    the_task_loop_runs_watch_passes(env).await;
}

/// The server's task loop (here without matching: `crawls_only`) visits a site added
/// through the API and stores the chapter its index lists.
async fn the_task_loop_runs_watch_passes(env: &Env) {
    let site = Site::start();
    site.set("/book/7.html", 200, chapter("第七章", &first_text("site/unregistered.jsonl")));
    site.set("/index.html", 200, "<html><body><a href=\"/book/7.html\">7</a></body></html>".into());
    let body = json!({"entry_points": [site.url("/index.html")]});
    let r = env.call("POST", "/api/v1/watched-sites", Some(&env.holder), Some(body)).await;
    assert_eq!(r.status, 201, "{}", r.text());
    let options = zhiwen_api::worker::WorkerOptions {
        crawls_only: true,
        address_policy: AddressPolicy { allow_loopback: true, allow_private: false },
        watch: Some(WatchConfig::default()),
        ..Default::default()
    };
    let token = zhiwen_ingest::CancellationToken::new();
    let worker = tokio::spawn(zhiwen_api::worker::run(env.state.clone(), options, token.clone()));
    let url = site.url("/book/7.html");
    let mut stored = None;
    for _ in 0..600 {
        stored = env.stores.pages.find_page(&url).await.unwrap();
        if stored.is_some() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    token.cancel();
    worker.await.unwrap();
    assert!(stored.is_some(), "the task loop stored the chapter");
    let r =
        env.call("DELETE", &format!("/api/v1/watched-sites/127.0.0.1:{}", site.port()), Some(&env.admin), None).await;
    assert_eq!(r.status, 200, "{}", r.text());
}
