//! End-to-end matching throughput: pages matched per second (fingerprint, lookup in the
//! section index, verify every candidate, store fingerprints and matches), on the
//! embedded store and the embedded index.
//!
//! Sections: the public-domain classics of the shared corpus cut into sections of 1-2k
//! characters, topped up to `--sections` with sections made of shuffled sentences of the
//! same books. Pages: 5-10 KB of UTF-8; a third embed a section, the rest are other
//! text (the news sets of the shared corpus when present, read at run time only).
//!
//! ```text
//! cargo run --release -p zhiwen-matcher --example match_bench -- --sections 10000 --pages 3000
//! ```

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use zhiwen_core::{Fingerprinter, Params};
use zhiwen_index::{CandidateIndex, EmbeddedIndex, IndexConfig, RedisConfig, RedisIndex};
use zhiwen_matcher::task::{run_match_task, NoProgress, Scope, TaskControl, TaskSpec};
use zhiwen_matcher::{Matcher, MatcherConfig};
use zhiwen_store::{NewPage, NewSection, NewWork, PageSource, StoreConfig, Timestamp};

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn arg(name: &str, default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).and_then(|v| v.parse().ok()).unwrap_or(default)
}

fn arg_str(name: &str) -> Option<String> {
    let args: Vec<String> = std::env::args().collect();
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned()
}

fn texts(file: &str) -> Vec<String> {
    let dir = std::env::var_os("ZHIWEN_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/corpus"));
    let Ok(data) = std::fs::read_to_string(dir.join(file)) else { return Vec::new() };
    data.lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["text"].as_str().map(str::to_owned))
        .collect()
}

fn split_sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    for c in text.chars() {
        cur.push(c);
        if matches!(c, '。' | '！' | '？' | '\n') {
            if cur.trim().chars().count() > 4 {
                out.push(std::mem::take(&mut cur));
            } else {
                cur.clear();
            }
        }
    }
    out
}

fn cut(text: &str, rng: &mut Rng) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1000 <= chars.len() {
        let len = 1000 + rng.below(1000);
        let end = (i + len).min(chars.len());
        out.push(chars[i..end].iter().collect());
        i = end;
    }
    out
}

fn fill(target_bytes: usize, pool: &[String], rng: &mut Rng) -> String {
    let mut s = String::new();
    while s.len() < target_bytes {
        s.push_str(&pool[rng.below(pool.len())]);
    }
    s
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let n_sections = arg("--sections", 10_000);
    let n_pages = arg("--pages", 3_000);
    let classics = texts("novels_classics.jsonl");
    if classics.is_empty() {
        return Err("novels_classics.jsonl not found: set ZHIWEN_CORPUS_DIR".into());
    }
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut sections: Vec<String> = classics.iter().flat_map(|t| cut(t, &mut rng)).collect();
    let sentences: Vec<String> = classics.iter().flat_map(|t| split_sentences(t)).collect();
    while sections.len() < n_sections {
        let target = 3 * (1000 + rng.below(1000));
        sections.push(fill(target, &sentences, &mut rng));
    }
    sections.truncate(n_sections);
    let mut other: Vec<String> = texts("news_inews_ccf2019.jsonl");
    other.extend(texts("news_xwlb_cctv.jsonl"));
    let other_pool = if other.is_empty() { sentences.clone() } else { other };

    let dir = tempfile::tempdir()?;
    // Backends: embedded by default; `--mongo URI` (a fresh database named after the run)
    // and `--redis URL` (a fresh key prefix) for the server backends.
    let run = std::process::id();
    let store_config = match arg_str("--mongo") {
        Some(uri) => StoreConfig::mongo(uri, format!("zhiwen_bench_{run}")),
        None => StoreConfig::embedded(dir.path().join("store")),
    };
    zhiwen_store::migrate(&store_config).await?;
    let stores = zhiwen_store::open(&store_config).await?;
    let index: Arc<dyn CandidateIndex> = match arg_str("--redis") {
        Some(url) => Arc::new(
            RedisIndex::connect(RedisConfig { prefix: format!("zwbench{run}"), ..RedisConfig::with_url(url) }).await?,
        ),
        None => Arc::new(EmbeddedIndex::open(dir.path().join("index.sqlite"), IndexConfig::default())?),
    };
    let mut config = MatcherConfig::default();
    config.min_winnow_hits = arg("--min-winnow-hits", config.min_winnow_hits as usize) as u32;
    let repeat = arg("--repeat", 3).max(1);
    println!(
        "store {}, index {}, min_winnow_hits {}, {repeat} timed runs",
        stores.backend,
        index.backend(),
        config.min_winnow_hits
    );
    let matcher = Matcher::new(stores.clone(), index, Fingerprinter::new(Params::default())?, config);

    let t = Instant::now();
    for (w, chunk) in sections.chunks(100).enumerate() {
        let mut text = String::new();
        let mut secs = Vec::new();
        for (i, s) in chunk.iter().enumerate() {
            let start = text.chars().count() as u64;
            text.push_str(s);
            secs.push(NewSection {
                ordinal: i as u32,
                title: format!("第{}节", i + 1),
                text: s.clone(),
                char_start: start,
                char_end: text.chars().count() as u64,
            });
        }
        let work = NewWork {
            owner: "bench".into(),
            external_id: format!("W{w}"),
            title: format!("作品{w}"),
            author: "佚名".into(),
            source_file: None,
            charset: None,
            text,
            sections: secs,
        };
        let up = stores.works.upsert_work(&work).await?;
        matcher.index_work(up.id).await?;
    }
    let index_secs = t.elapsed().as_secs_f64();
    println!(
        "indexed {} sections in {:.1} s ({:.0} sections/s)",
        sections.len(),
        index_secs,
        sections.len() as f64 / index_secs
    );

    let mut pages = Vec::with_capacity(n_pages);
    let mut bytes = 0usize;
    for i in 0..n_pages {
        let size = 5_000 + rng.below(5_000);
        let text = if i % 3 == 0 {
            let s = &sections[rng.below(sections.len())];
            let pad = size.saturating_sub(s.len()) / 2;
            format!("{}{}{}", fill(pad, &other_pool, &mut rng), s, fill(pad, &other_pool, &mut rng))
        } else {
            fill(size, &other_pool, &mut rng)
        };
        let text: String = {
            // Cut to the byte budget on a character boundary.
            let mut end = text.len().min(10_000);
            while !text.is_char_boundary(end) {
                end -= 1;
            }
            text[..end].to_owned()
        };
        bytes += text.len();
        pages.push(NewPage {
            url: format!("http://site{}.example/p/{i}", i % 20),
            fetched_at: Timestamp::now(),
            http_status: Some(200),
            charset: None,
            body: Vec::new(),
            text,
            source: PageSource::Crawl,
        });
    }
    for chunk in pages.chunks(500) {
        stores.pages.upsert_pages(chunk).await?;
    }
    println!("stored {n_pages} pages, {:.1} KB on average", bytes as f64 / n_pages as f64 / 1000.0);

    // The floor: fingerprinting alone, on every core.
    let fp = matcher.fingerprinter().clone();
    let sample: Vec<String> = pages.iter().take(300).map(|p| p.text.clone()).collect();
    let t = Instant::now();
    let n = sample.len();
    let handles: Vec<_> = sample
        .chunks(n.div_ceil(2).max(1))
        .map(|c| {
            let (fp, c) = (fp.clone(), c.to_vec());
            std::thread::spawn(move || c.iter().filter(|t| fp.analyze_text(t, Default::default()).is_ok()).count())
        })
        .collect();
    let ok: usize = handles.into_iter().map(|h| h.join().unwrap_or(0)).sum();
    println!("fingerprinting alone: {:.0} pages/s on 2 threads ({ok} pages)", n as f64 / t.elapsed().as_secs_f64());

    // The timed runs: the first records the matches, the next ones find them again
    // (same work: fingerprint, store, look up, verify, upsert).
    let mut rates = Vec::new();
    for _ in 0..repeat {
        let t = Instant::now();
        let s = run_match_task(&matcher, TaskSpec::new(Scope::All), &TaskControl::default(), &NoProgress).await?;
        let secs = t.elapsed().as_secs_f64();
        rates.push(s.pages as f64 / secs);
        println!(
            "matched {} pages in {:.1} s: {:.0} pages/s end to end ({} new, {} unchanged matches, {} failed) with {} sections",
            s.pages,
            secs,
            s.pages as f64 / secs,
            s.matches_new,
            s.matches_unchanged,
            s.pages_failed,
            sections.len()
        );
    }
    rates.sort_by(f64::total_cmp);
    println!("median of {repeat}: {:.0} pages/s end to end", rates[rates.len() / 2]);
    // Candidate statistics on a sample of pages (matched again: idempotent, nothing new).
    let (mut candidates, mut verified, mut sampled) = (0usize, 0usize, 0usize);
    for r in stores.pages.list_pages(None, 0, 200).await? {
        let out = matcher.match_page(r.id).await?;
        candidates += out.candidates;
        verified += out.verified;
        sampled += 1;
    }
    println!(
        "per page ({sampled} sampled): {:.1} candidates from the index, {:.1} verified",
        candidates as f64 / sampled.max(1) as f64,
        verified as f64 / sampled.max(1) as f64
    );
    Ok(())
}
