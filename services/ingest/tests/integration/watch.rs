//! The watch pass against a loopback pirate site whose feed and index change: the first
//! pass stores the chapters listed, an unchanged feed costs a 304 and lengthens the
//! interval, a new chapter is fetched at the next pass, robots.txt is obeyed, the
//! address policy holds.

use std::time::Duration;

use zhiwen_ingest::{AddressPolicy, CrawlConfig, WatchConfig, Watcher};
use zhiwen_store::{NewWatchedSite, Stores, Timestamp};
use zhiwen_testkit::site::Site;

use crate::common::{self, classics, probe};

fn config(policy: AddressPolicy) -> WatchConfig {
    WatchConfig {
        crawl: CrawlConfig {
            address_policy: policy,
            per_host_delay: Duration::from_millis(5),
            request_timeout: Duration::from_secs(5),
            max_retries: 0,
            ..CrawlConfig::default()
        },
        // The schedule below is asserted in these units, whatever the default.
        min_interval: Duration::from_secs(60),
        ..WatchConfig::default()
    }
}

fn loopback() -> AddressPolicy {
    AddressPolicy { allow_loopback: true, allow_private: false }
}

fn chapter_html(title: &str, text: &str) -> String {
    format!("<html><head><title>{title}</title></head><body><h1>{title}</h1><div id=content><p>{text}</p></div><p>本站最新章节</p></body></html>")
}

fn rss(site: &Site, paths: &[&str]) -> String {
    let items: String =
        paths.iter().map(|p| format!("<item><title>{p}</title><link>{}</link></item>", site.url(p))).collect();
    format!("<?xml version=\"1.0\" encoding=\"utf-8\"?><rss version=\"2.0\"><channel><title>最新</title><link>{}</link>{items}</channel></rss>", site.url("/"))
}

async fn watch(stores: &Stores, site: &Site, entry_points: &[&str], patterns: &[&str]) {
    let new = NewWatchedSite {
        id: None,
        owner: "holder-a".into(),
        entry_points: entry_points.iter().map(|p| site.url(p)).collect(),
        chapter_patterns: patterns.iter().map(|p| p.to_string()).collect(),
        min_delay_secs: None,
    };
    stores.cases.put_watched_site(&new, "holder-a", Timestamp(0)).await.unwrap();
}

async fn stored_text(stores: &Stores, url: &str) -> Option<String> {
    stores.pages.find_page(url).await.unwrap().map(|p| p.text)
}

#[tokio::test]
async fn feed_changes_are_fetched_and_an_unchanged_feed_costs_a_304() {
    let st = common::store().await;
    let ch = classics(4);
    let site = Site::start();
    site.set_typed("/robots.txt", 200, "text/plain", "User-agent: *\nDisallow: /vip/\n".into());
    for (i, c) in ch.iter().enumerate() {
        site.set(&format!("/book/{}.html", i + 1), 200, chapter_html(&c.title, &c.text));
    }
    site.set("/vip/9.html", 200, chapter_html(&ch[0].title, &ch[0].text));
    site.set("/about.html", 200, chapter_html("关于", "本站简介本站简介本站简介本站简介"));
    site.set_typed(
        "/rss.xml",
        200,
        "application/rss+xml",
        rss(&site, &["/book/1.html", "/book/2.html", "/vip/9.html", "/about.html"]),
    );
    // The index page links chapter 3 and elsewhere (another host is never followed).
    site.set(
        "/list.html",
        200,
        format!("<html><body><a href=\"/book/3.html\">3</a><a href=\"/about.html\">about</a><a href=\"http://127.0.0.2:{}/book/1.html\">x</a></body></html>", site.port()),
    );
    watch(&st.stores, &site, &["/rss.xml", "/list.html"], &[r"/(book|vip)/\d+\.html$"]).await;
    let watcher = Watcher::new(config(loopback()), st.stores.clone()).unwrap();

    // First pass: the chapters listed are stored; /about.html does not match the
    // pattern; /vip/ is disallowed by robots.txt.
    let t0 = Timestamp(1_000_000);
    let first = watcher.pass(t0).await.unwrap();
    assert_eq!(first.visits, 2, "{first}");
    // Both entry points were due: the next pass has work once the minimum interval passed.
    assert_eq!(first.next_due, Some(Timestamp(t0.0 + 60_000)), "{first}");
    assert_eq!(first.stored.len(), 3, "{first}");
    assert_eq!(first.disallowed, [site.url("/vip/9.html")], "{first}");
    for i in 1..=3 {
        let text = stored_text(&st.stores, &site.url(&format!("/book/{i}.html"))).await.unwrap();
        assert!(text.contains(&probe(&ch[i - 1].text)), "chapter {i}");
    }
    assert!(stored_text(&st.stores, &site.url("/about.html")).await.is_none());
    assert_eq!(site.hits("/vip/9.html"), 0);
    assert_eq!(site.hits("/about.html"), 0);
    let s = st.stores.cases.get_watched_site(&format!("127.0.0.1:{}", site.port())).await.unwrap().unwrap();
    let feed = &s.entry_points[0];
    assert_eq!((feed.visits, feed.visits_with_new, feed.interval_secs), (1, 1, 60));
    assert!(feed.etag.is_some() && feed.last_modified.is_some());
    assert_eq!(feed.next_visit, Timestamp(t0.0 + 60_000));

    // Nothing is due before the interval.
    let early = watcher.pass(Timestamp(t0.0 + 1_000)).await.unwrap();
    assert_eq!(early.visits, 0);
    assert_eq!(early.next_due, Some(Timestamp(t0.0 + 60_000)), "nothing due: the schedule as stored");

    // Second pass, nothing new: 304s, nothing stored, the interval doubles.
    let t1 = Timestamp(t0.0 + 60_000);
    let second = watcher.pass(t1).await.unwrap();
    assert_eq!((second.visits, second.not_modified, second.stored.len()), (2, 2, 0), "{second}");
    assert_eq!((site.not_modified("/rss.xml"), site.not_modified("/list.html")), (1, 1));
    let s = st.stores.cases.get_watched_site(&format!("127.0.0.1:{}", site.port())).await.unwrap().unwrap();
    assert_eq!((s.entry_points[0].interval_secs, s.entry_points[0].not_modified), (120, 1));
    assert_eq!(s.entry_points[0].next_visit, Timestamp(t1.0 + 120_000));

    // A new chapter in the feed: fetched at the next pass, the interval halves again.
    site.set_typed(
        "/rss.xml",
        200,
        "application/rss+xml",
        rss(&site, &["/book/4.html", "/book/1.html", "/book/2.html"]),
    );
    let t2 = Timestamp(t1.0 + 120_000);
    let third = watcher.pass(t2).await.unwrap();
    assert_eq!((third.visits, third.new_links, third.stored.len()), (2, 1, 1), "{third}");
    let page = st.stores.pages.find_page(&site.url("/book/4.html")).await.unwrap().unwrap();
    assert_eq!(third.stored, [page.id]);
    assert!(page.text.contains(&probe(&ch[3].text)));
    // Chapters stored before are not fetched again.
    assert_eq!(site.hits("/book/1.html"), 1);
    let s = st.stores.cases.get_watched_site(&format!("127.0.0.1:{}", site.port())).await.unwrap().unwrap();
    assert_eq!((s.entry_points[0].interval_secs, s.entry_points[0].visits_with_new), (60, 2));
    // The index did not change: its interval keeps growing.
    assert_eq!(s.entry_points[1].interval_secs, 240);

    // A new watcher (a restart) continues the stored schedule.
    let restarted = Watcher::new(config(loopback()), st.stores.clone()).unwrap();
    let resumed = restarted.pass(Timestamp(t2.0 + 1_000)).await.unwrap();
    assert_eq!(resumed.next_due, Some(Timestamp(t2.0 + 60_000)));
    assert_eq!(resumed.visits, 0);
}

#[tokio::test]
async fn sitemaps_robots_and_the_address_policy() {
    let st = common::store().await;
    let ch = classics(2);
    let site = Site::start();
    // robots.txt forbids the whole site to zhiwen: nothing is fetched but robots.txt.
    site.set_typed("/robots.txt", 200, "text/plain", "User-agent: zhiwen\nDisallow: /\n".into());
    site.set("/book/1.html", 200, chapter_html(&ch[0].title, &ch[0].text));
    let sitemap = format!(
        "<?xml version=\"1.0\"?><urlset><url><loc>{}</loc></url><url><loc>{}</loc></url></urlset>",
        site.url("/book/1.html"),
        site.url("/book/2.html")
    );
    site.set_typed("/sitemap.xml", 200, "application/xml", sitemap);
    watch(&st.stores, &site, &["/sitemap.xml"], &[]).await;
    let watcher = Watcher::new(config(loopback()), st.stores.clone()).unwrap();
    let pass = watcher.pass(Timestamp(1_000)).await.unwrap();
    assert_eq!((pass.visits, pass.stored.len()), (1, 0));
    assert_eq!(pass.disallowed, [site.url("/sitemap.xml")]);
    assert_eq!((site.hits("/sitemap.xml"), site.hits("/book/1.html")), (0, 0));

    // Allowed again: the sitemap's chapters are stored (the one missing fails, kept
    // as a failure, not stored).
    site.set_typed("/robots.txt", 200, "text/plain", "User-agent: *\nAllow: /\n".into());
    let watcher = Watcher::new(config(loopback()), st.stores.clone()).unwrap();
    let pass = watcher.pass(Timestamp(10_000_000)).await.unwrap();
    assert_eq!(pass.stored.len(), 1, "{pass}");
    assert_eq!(pass.failed.len(), 1, "{pass}");
    assert!(stored_text(&st.stores, &site.url("/book/1.html")).await.is_some());

    // The default address policy refuses loopback: nothing is contacted.
    let st2 = common::store().await;
    watch(&st2.stores, &site, &["/sitemap.xml"], &[]).await;
    let before = site.hits("/sitemap.xml");
    let strict = Watcher::new(config(AddressPolicy::default()), st2.stores.clone()).unwrap();
    let pass = strict.pass(Timestamp(1_000)).await.unwrap();
    assert_eq!((pass.visits, pass.stored.len(), pass.failed.len()), (1, 0, 1), "{pass}");
    assert_eq!(site.hits("/sitemap.xml"), before);
}

/// Records each hand-over of stored pages, and how often the `probe` site's chapter had
/// been asked for at that moment.
struct Recorder {
    probe: std::sync::Arc<Site>,
    seen: std::sync::Mutex<Vec<(Vec<i64>, u64)>>,
}

impl zhiwen_ingest::Arrivals for Recorder {
    fn arrived<'a>(&'a self, pages: &'a [i64]) -> futures::future::BoxFuture<'a, ()> {
        let hits = self.probe.hits("/book/1.html");
        self.seen.lock().unwrap().push((pages.to_vec(), hits));
        Box::pin(async {})
    }
}

/// A site's stored pages are handed over (their matching queued) when that site's visit
/// ends, not when the pass does: a fast site's chapter arrives while a slow site is still
/// being visited, and each site's chapter arrives once.
#[tokio::test]
async fn a_sites_pages_arrive_as_its_visit_ends_not_at_the_end_of_the_pass() {
    let st = common::store().await;
    let ch = classics(2);
    let fast = Site::start();
    let slow = std::sync::Arc::new(Site::start());
    for (site, c) in [(&fast, &ch[0]), (&*slow, &ch[1])] {
        site.set("/book/1.html", 200, chapter_html(&c.title, &c.text));
        site.set("/list.html", 200, "<html><body><a href=\"/book/1.html\">1</a></body></html>".into());
        watch(&st.stores, site, &["/list.html"], &[r"/book/\d+\.html$"]).await;
    }
    slow.set_latency(Duration::from_millis(700));
    let recorder = std::sync::Arc::new(Recorder { probe: slow.clone(), seen: std::sync::Mutex::new(Vec::new()) });
    let watcher = Watcher::new(config(loopback()), st.stores.clone()).unwrap().with_arrivals(recorder.clone());
    let pass = watcher.pass(Timestamp(1_000_000)).await.unwrap();
    assert_eq!((pass.visits, pass.stored.len()), (2, 2), "{pass}");
    let fast_page = st.stores.pages.find_page(&fast.url("/book/1.html")).await.unwrap().expect("stored").id;
    let slow_page = st.stores.pages.find_page(&slow.url("/book/1.html")).await.unwrap().expect("stored").id;
    let seen = recorder.seen.lock().unwrap().clone();
    assert_eq!(seen, [(vec![fast_page], 0), (vec![slow_page], 1)], "the fast site's chapter arrived first, alone");
}

/// Hand-overs within a pass are at least `arrival_interval` apart (each queues a matching
/// task): the first site's chapter goes at once, the others' wait for the end of the pass,
/// which hands over all that is left in one go.
#[tokio::test]
async fn hand_overs_within_a_pass_are_spaced_and_the_pass_hands_over_the_rest() {
    let st = common::store().await;
    let ch = classics(3);
    let sites: Vec<Site> = (0..3).map(|_| Site::start()).collect();
    for (site, c) in sites.iter().zip(&ch) {
        site.set("/book/1.html", 200, chapter_html(&c.title, &c.text));
        site.set("/list.html", 200, "<html><body><a href=\"/book/1.html\">1</a></body></html>".into());
        watch(&st.stores, site, &["/list.html"], &[r"/book/\d+\.html$"]).await;
    }
    let idle = std::sync::Arc::new(Site::start());
    let recorder = std::sync::Arc::new(Recorder { probe: idle, seen: std::sync::Mutex::new(Vec::new()) });
    let config = WatchConfig { arrival_interval: Duration::from_secs(600), concurrency: 1, ..config(loopback()) };
    let watcher = Watcher::new(config, st.stores.clone()).unwrap().with_arrivals(recorder.clone());
    let pass = watcher.pass(Timestamp(1_000_000)).await.unwrap();
    assert_eq!(pass.stored.len(), 3, "{pass}");
    let seen: Vec<usize> = recorder.seen.lock().unwrap().iter().map(|(pages, _)| pages.len()).collect();
    assert_eq!(seen, [1, 2], "one at once, the rest at the end of the pass");
    let handed: std::collections::BTreeSet<i64> =
        recorder.seen.lock().unwrap().iter().flat_map(|(p, _)| p.clone()).collect();
    assert_eq!(handed, pass.stored.iter().copied().collect(), "every stored page handed over once");
}
