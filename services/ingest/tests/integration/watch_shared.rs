//! Two watch processes sharing one store and one real Redis (`redis-server` started by
//! the testkit): a host is never fetched by both at once, each new chapter is fetched
//! once, a process that dies holding a host gives it back when the lease's ttl passes,
//! a lost lease stops a visit, and Redis going away skips the host without failing the
//! pass.

use std::sync::Arc;
use std::time::Duration;

use zhiwen_ingest::{AddressPolicy, CrawlConfig, RedisLeases, WatchConfig, Watcher};
use zhiwen_store::{NewWatchedSite, Stores, Timestamp};
use zhiwen_testkit::redis::RedisServer;
use zhiwen_testkit::site::Site;

use crate::common::{self, classics};

fn config(lease_ttl: Duration) -> WatchConfig {
    WatchConfig {
        crawl: CrawlConfig {
            address_policy: AddressPolicy { allow_loopback: true, allow_private: false },
            per_host_delay: Duration::from_millis(5),
            request_timeout: Duration::from_secs(5),
            max_retries: 0,
            ..CrawlConfig::default()
        },
        lease_ttl,
        ..WatchConfig::default()
    }
}

async fn leases(redis: &RedisServer) -> Arc<RedisLeases> {
    Arc::new(RedisLeases::connect(&redis.url(), "zwtest", false, Duration::from_secs(1)).await.unwrap())
}

async fn watcher(stores: &Stores, redis: &RedisServer, lease_ttl: Duration) -> Watcher {
    Watcher::new(config(lease_ttl), stores.clone()).unwrap().with_leases(leases(redis).await)
}

fn chapter_html(title: &str, text: &str) -> String {
    format!("<html><head><title>{title}</title></head><body><h1>{title}</h1><div id=content><p>{text}</p></div></body></html>")
}

/// A site whose feed lists chapters `1..=n` (all served) and whose index lists the same.
fn publish(site: &Site, n: usize) {
    let ch = classics(n);
    let mut items = String::new();
    let mut links = String::new();
    for (i, c) in ch.iter().enumerate() {
        let path = format!("/book/{}.html", i + 1);
        site.set(&path, 200, chapter_html(&c.title, &c.text));
        items.push_str(&format!("<item><link>{}</link></item>", site.url(&path)));
        links.push_str(&format!("<a href=\"{path}\">{}</a>", i + 1));
    }
    site.set_typed(
        "/rss.xml",
        200,
        "application/rss+xml",
        format!("<rss version=\"2.0\"><channel>{items}</channel></rss>"),
    );
    site.set("/list.html", 200, format!("<html><body>{links}</body></html>"));
}

async fn watch(stores: &Stores, site: &Site) -> String {
    let new = NewWatchedSite {
        id: None,
        owner: "holder-a".into(),
        entry_points: vec![site.url("/rss.xml"), site.url("/list.html")],
        chapter_patterns: vec![r"/book/\d+\.html$".into()],
        min_delay_secs: None,
    };
    stores.cases.put_watched_site(&new, "holder-a", Timestamp(0)).await.unwrap();
    format!("127.0.0.1:{}", site.port())
}

#[tokio::test]
async fn two_processes_share_a_host_one_request_at_a_time_each_chapter_once() {
    let Some(redis) = RedisServer::start() else { return };
    let st = common::store().await;
    let site = Site::start();
    // Slow answers, so that two processes asking at once would overlap.
    site.set_latency(Duration::from_millis(30));
    publish(&site, 2);
    watch(&st.stores, &site).await;
    let a = watcher(&st.stores, &redis, Duration::from_secs(5)).await;
    let b = watcher(&st.stores, &redis, Duration::from_secs(5)).await;
    let mut chapters = 2;
    for round in 0..4i64 {
        // Far enough apart that every entry point is due again.
        let now = Timestamp(1_000_000 + round * 24 * 3600 * 1000);
        let (ra, rb) = tokio::join!(a.pass(now), b.pass(now));
        let (ra, rb) = (ra.unwrap(), rb.unwrap());
        assert!(ra.failed.is_empty() && rb.failed.is_empty(), "{ra} / {rb}");
        // Both entry points visited once, by whichever process held the host.
        assert_eq!(ra.visits + rb.visits, 2, "round {round}: {ra} / {rb}");
        assert_eq!(ra.stored.len() + rb.stored.len(), if round == 0 { 2 } else { 1 }, "round {round}: {ra} / {rb}");
        chapters += 1;
        publish(&site, chapters);
    }
    for i in 1..chapters {
        assert_eq!(site.hits(&format!("/book/{i}.html")), 1, "chapter {i} fetched once");
    }
    assert_eq!(site.max_in_flight(), 1, "never two requests to the host at once");
    let s = st.stores.cases.get_watched_site(&format!("127.0.0.1:{}", site.port())).await.unwrap().unwrap();
    assert!(s.entry_points.iter().all(|e| e.visits == 4), "each entry point recorded once a round");
}

#[tokio::test]
async fn a_dead_holder_gives_the_host_back_after_the_ttl_and_a_lost_lease_stops_the_visit() {
    let Some(redis) = RedisServer::start() else { return };
    let st = common::store().await;
    let site = Site::start();
    site.set_latency(Duration::from_millis(100));
    publish(&site, 6);
    let host = watch(&st.stores, &site).await;
    let ttl = Duration::from_millis(600);
    let a = watcher(&st.stores, &redis, ttl).await;
    let b = watcher(&st.stores, &redis, ttl).await;
    let now = Timestamp(1_000_000);
    // A dies in the middle of its visit: its pass is dropped, the lease is not released.
    let cut = tokio::time::timeout(Duration::from_millis(150), a.pass(now)).await;
    assert!(cut.is_err(), "the visit was cut short");
    drop(a);
    let held = b.pass(now).await.unwrap();
    assert_eq!((held.visits, held.held_elsewhere), (0, 1), "{held}");
    tokio::time::sleep(ttl).await;
    let taken = b.pass(now).await.unwrap();
    assert_eq!((taken.visits, taken.held_elsewhere), (2, 0), "{taken}");
    for i in 1..=6 {
        assert!(st.stores.pages.find_page(&site.url(&format!("/book/{i}.html"))).await.unwrap().is_some());
    }

    // A lease taken away during a visit (expired and taken by another holder) stops the
    // visit before its next request, and the visit is not recorded.
    publish(&site, 12);
    let c = watcher(&st.stores, &redis, Duration::from_millis(300)).await;
    let later = Timestamp(now.0 + 24 * 3600 * 1000);
    let key = leases(&redis).await.key(&host);
    let thief = async {
        tokio::time::sleep(Duration::from_millis(150)).await;
        redis.command(&["SET", &key, "someone-else"]).unwrap();
    };
    let (r, ()) = tokio::join!(c.pass(later), thief);
    let r = r.unwrap();
    let fetched = (7..=12).filter(|i| site.hits(&format!("/book/{i}.html")) > 0).count();
    assert!(fetched < 6, "the visit stopped early: {fetched} of 6 fetched; {r}");
    let s = st.stores.cases.get_watched_site(&host).await.unwrap().unwrap();
    assert!(s.entry_points.iter().any(|e| e.next_visit <= later), "the stopped visit is still due");
    // The other holder's lease was left alone.
    assert_eq!(redis.command(&["GET", &key]).unwrap(), "someone-else");
}

#[tokio::test]
async fn redis_going_away_skips_the_host_without_failing_the_pass() {
    let Some(mut redis) = RedisServer::start() else { return };
    let st = common::store().await;
    let site = Site::start();
    publish(&site, 2);
    let host = watch(&st.stores, &site).await;
    let w = watcher(&st.stores, &redis, Duration::from_secs(5)).await;
    redis.stop();
    let r = w.pass(Timestamp(1_000_000)).await.expect("the pass goes on");
    assert_eq!(r.visits, 0, "{r}");
    assert_eq!(r.failed.len(), 1, "{r}");
    assert_eq!(r.failed[0].0, host);
    assert_eq!(site.hits("/rss.xml"), 0);
    // Back: the next pass visits.
    redis.start_again();
    let mut visited = 0;
    for _ in 0..20 {
        visited = w.pass(Timestamp(1_000_000)).await.unwrap().visits;
        if visited > 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert_eq!(visited, 2);
}
