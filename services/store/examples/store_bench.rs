//! Store benchmark: bulk insert of pages and fingerprint records, then point reads by
//! key, for the embedded backend and (when a server is reachable) MongoDB.
//!
//! ```text
//! cargo run --release -p zhiwen-store --example store_bench -- [N] [--mongo URI]
//! ```
//! `N` defaults to 100000. Without `--mongo` it starts SecantusDB itself through the
//! test kit (`scripts/setup-secantusdb.sh` installs it); `--no-mongo` skips MongoDB.

use std::time::Instant;

use zhiwen_core::canon::InputFormat;
use zhiwen_core::{Fingerprinter, Params};
use zhiwen_store::*;

const BATCH: usize = 1_000;
const READS: usize = 10_000;

fn page(i: usize) -> NewPage {
    let text = format!(
        "第{i}章 天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。{i}"
    );
    NewPage {
        url: format!("https://site{}.example/book/{}/{i}.html", i % 97, i / 1000),
        fetched_at: Timestamp(1_763_683_200_000 + i as i64),
        http_status: Some(200),
        charset: Some("GBK".into()),
        body: format!("<html><body><p>{text}</p></body></html>").into_bytes(),
        text,
        format: None,
        canon_tag: None,
        source: PageSource::Crawl,
    }
}

fn rate(n: usize, secs: f64) -> String {
    format!("{:>9.0}/s ({secs:.2} s)", n as f64 / secs)
}

async fn bench(name: &str, stores: &Stores, n: usize) -> Result<(), StoreError> {
    println!("== {name}: {n} pages, {n} fingerprint records, {READS} point reads each");

    let t = Instant::now();
    let mut ids = Vec::with_capacity(n);
    for start in (0..n).step_by(BATCH) {
        let batch: Vec<NewPage> = (start..(start + BATCH).min(n)).map(page).collect();
        ids.extend(stores.pages.upsert_pages(&batch).await?.into_iter().map(|u| u.id));
    }
    println!("bulk insert pages         {}", rate(n, t.elapsed().as_secs_f64()));

    let fp = Fingerprinter::new(Params::default())
        .map_err(|e| StoreError::InvalidInput { what: "params".into(), reason: e.to_string() })?;
    let sample = fp
        .analyze_text(&page(0).text.repeat(20), InputFormat::Text)
        .map_err(|e| StoreError::InvalidInput { what: "text".into(), reason: e.to_string() })?
        .fingerprints;
    let t = Instant::now();
    for chunk in ids.chunks(BATCH) {
        let items: Vec<_> = chunk.iter().map(|&id| (Subject::page(id), sample.clone())).collect();
        stores.fingerprints.put_fingerprints_many(&items).await?;
    }
    println!("bulk insert fingerprints  {}", rate(n, t.elapsed().as_secs_f64()));

    let step = (n / READS).max(1);
    let t = Instant::now();
    let mut reads = 0;
    for &id in ids.iter().step_by(step).take(READS) {
        stores
            .pages
            .get_page(id)
            .await?
            .ok_or_else(|| StoreError::Corrupt { what: "bench".into(), reason: "missing".into() })?;
        reads += 1;
    }
    println!("point read page by id     {}", rate(reads, t.elapsed().as_secs_f64()));

    let t = Instant::now();
    for i in (0..n).step_by(step).take(READS) {
        stores.pages.find_page(&page(i).url).await?;
    }
    println!("point read page by URL    {}", rate(reads, t.elapsed().as_secs_f64()));

    let t = Instant::now();
    for &id in ids.iter().step_by(step).take(READS) {
        stores.fingerprints.get_fingerprints(Subject::page(id)).await?;
    }
    println!("point read fingerprints   {}", rate(reads, t.elapsed().as_secs_f64()));

    let t = Instant::now();
    let again: Vec<NewPage> = (0..BATCH.min(n)).map(page).collect();
    let counts = stores.pages.upsert_pages(&again).await?;
    let unchanged = counts.iter().filter(|u| u.outcome == Outcome::Unchanged).count();
    println!(
        "re-import {} pages        {} ({unchanged} unchanged)",
        again.len(),
        rate(again.len(), t.elapsed().as_secs_f64())
    );
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.iter().find_map(|a| a.parse().ok()).unwrap_or(100_000);
    let mongo_uri = args.iter().position(|a| a == "--mongo").and_then(|i| args.get(i + 1)).cloned();
    let skip_mongo = args.iter().any(|a| a == "--no-mongo");

    let dir = tempfile::tempdir()?;
    let stores = open(&StoreConfig::embedded(dir.path())).await?;
    bench("embedded (SQLite, WAL)", &stores, n).await?;

    if skip_mongo {
        return Ok(());
    }
    let server = if mongo_uri.is_none() { zhiwen_testkit::mongo::MongoServer::start() } else { None };
    let Some(uri) = mongo_uri.or_else(|| server.as_ref().map(|s| s.uri())) else {
        println!("== mongodb: skipped (no server; pass --mongo URI or run scripts/setup-secantusdb.sh)");
        return Ok(());
    };
    let config = StoreConfig::mongo(uri, "zhiwen_bench");
    migrate(&config).await?;
    let stores = open(&config).await?;
    bench("mongodb", &stores, n).await?;
    Ok(())
}
