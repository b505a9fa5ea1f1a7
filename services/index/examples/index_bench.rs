//! Benchmark of the candidate index: insert rate, lookup latency for a 10 KB page, and
//! memory per indexed section, at growing index sizes.
//!
//! ```text
//! cargo run --release -p zhiwen-index --example index_bench -- \
//!     [--backend redis|embedded] [--real 10000] [--sizes 10000,100000,1000000] \
//!     [--keys 100] [--queries 500] [--corpus .test-corpus] [--bucket-bits 20] \
//!     [--budget 768] [--passes 1] [--section-sampling 1]
//! ```
//!
//! Two parts:
//! 1. *Real sections*: the corpus texts (`--corpus`, default `.test-corpus` from the
//!    workspace root) cut into sections of 1,500 characters and fingerprinted with the
//!    default parameters; queries are 10 KB pages (3,400 Han characters) cut from the
//!    same texts at other offsets, fingerprinted the same way.
//! 2. *The curve*: synthetic sections with `--keys` keys each in the family mix of a
//!    real section (4 simhash blocks with real 16-bit block values, 15 mega-shingles,
//!    21 LSH bands, DNA and winnowed hashes for the rest), inserted up to each size;
//!    queries have the key count of a real 10 KB page and contain the keys of 5 indexed
//!    sections, so every lookup has real candidates.
//!
//! Every lookup is timed twice on the same index: with the default query-key budget
//! (`--budget`, `IndexConfig::query_key_budget`: large pages look up a consistent sample
//! of their winnowed keys) and with every key (budget 0). For the curve it also counts
//! how many of the 5 planted sections are among the 50 candidates returned ("recall").
//!
//! `--section-sampling M` (a power of two; default 1) indexes sections as
//! `matcher.section_index_sampling = M` does: 1 in `M` of their winnowed keys and no
//! other key (`zhiwen_index::sample_winnowed_keys_only`), and queries are sampled the
//! same way; the synthetic sections are then `--keys` winnowed keys (characters and
//! initials, half each) whose values are all kept by that sampling, and the queries the
//! sampled key count of a 10 KB page.
//!
//! `--passes N` times the lookups of the curve N times on each index size (one row
//! per pass), so a median can be taken without building the million-section index N
//! times.
//!
//! For Redis the benchmark starts its own `redis-server` (as the tests do) on a free
//! loopback port, with `hash-max-listpack-entries 512` and `hash-max-listpack-value 256`
//! (see `scripts/redis-dev.sh`), and reads memory from `INFO memory`.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use zhiwen_core::canon::InputFormat;
use zhiwen_core::{Fingerprinter, IndexFamily, IndexKey, Params};
use zhiwen_index::{CandidateIndex, EmbeddedIndex, IndexConfig, Namespace, RedisConfig, RedisIndex};
use zhiwen_testkit::redis::RedisServer;

const SECTION_CHARS: usize = 1_500;
const PAGE_CHARS: usize = 3_400;
const BATCH: usize = 1_000;

struct Args {
    backend: String,
    real: usize,
    sizes: Vec<usize>,
    keys: usize,
    queries: usize,
    corpus: PathBuf,
    bucket_bits: u8,
    budget: usize,
    passes: usize,
    section_sampling: u64,
}

fn args() -> Args {
    let mut a = Args {
        backend: "redis".into(),
        real: 10_000,
        sizes: vec![10_000, 100_000, 1_000_000],
        keys: 100,
        queries: 500,
        corpus: std::env::var_os("ZHIWEN_CORPUS_DIR")
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.test-corpus")),
        bucket_bits: RedisConfig::default().bucket_bits,
        budget: IndexConfig::default().query_key_budget,
        passes: 1,
        section_sampling: 1,
    };
    let argv: Vec<String> = std::env::args().skip(1).collect();
    for pair in argv.chunks(2) {
        let value = pair.get(1).cloned().unwrap_or_default();
        let num = |v: &str| v.replace('_', "").parse::<usize>().expect("a number");
        match pair[0].as_str() {
            "--backend" => a.backend = value,
            "--real" => a.real = num(&value),
            "--sizes" => a.sizes = value.split(',').filter(|s| !s.is_empty()).map(num).collect(),
            "--keys" => a.keys = num(&value),
            "--queries" => a.queries = num(&value),
            "--corpus" => a.corpus = PathBuf::from(value),
            "--bucket-bits" => a.bucket_bits = num(&value) as u8,
            "--budget" => a.budget = num(&value),
            "--passes" => a.passes = num(&value).max(1),
            "--section-sampling" => a.section_sampling = (num(&value).max(1) as u64).next_power_of_two(),
            other => panic!("unknown argument {other}"),
        }
    }
    a
}

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// Texts of the corpus files (one JSON object per line with a "text").
fn corpus_texts(dir: &std::path::Path) -> Vec<String> {
    let mut texts = Vec::new();
    for name in ["novels_classics.jsonl", "novels_modern_pd.jsonl", "news_xwlb_cctv.jsonl", "news_inews_ccf2019.jsonl"]
    {
        let path = dir.join(name);
        let Ok(data) = std::fs::read_to_string(&path) else {
            eprintln!("missing {}", path.display());
            continue;
        };
        for line in data.lines() {
            if let Some(t) = serde_json::from_str::<serde_json::Value>(line)
                .ok()
                .and_then(|v| v.get("text").and_then(|t| t.as_str()).map(str::to_owned))
            {
                texts.push(t);
            }
        }
    }
    texts
}

/// Fingerprint texts on every core; `None` for texts the core rejects.
fn fingerprint_all(texts: &[String]) -> Vec<Option<Vec<IndexKey>>> {
    let fp = Fingerprinter::new(Params::default()).expect("default params");
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let chunk = texts.len().div_ceil(threads).max(1);
    std::thread::scope(|s| {
        let handles: Vec<_> = texts
            .chunks(chunk)
            .map(|part| {
                let fp = fp.clone();
                s.spawn(move || {
                    part.iter()
                        .map(|t| fp.analyze_text(t, InputFormat::Text).ok().map(|a| a.fingerprints.index_keys()))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().expect("fingerprint thread")).collect()
    })
}

fn cut(text: &str, size: usize) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    chars.chunks(size).filter(|c| c.len() == size).map(|c| c.iter().collect()).collect()
}

/// A synthetic section: the family mix of a real one, `n` keys; with `sampling` above 1,
/// `n` winnowed keys that sampling keeps (the sampled layout holds nothing else).
fn synthetic_section(doc: u64, n: usize, sampling: u64) -> Vec<IndexKey> {
    let mut rng = Rng(doc.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1);
    let mut keys = Vec::with_capacity(n);
    if sampling > 1 {
        for i in 0..n {
            let family = if i % 2 == 0 { IndexFamily::WinnowChars } else { IndexFamily::WinnowInitials };
            keys.push(IndexKey { family, value: rng.next() & !(sampling - 1) });
        }
        return keys;
    }
    let simhash = rng.next();
    for i in 0..4u64 {
        keys.push(IndexKey { family: IndexFamily::SimhashBlock, value: (i << 16) | (simhash >> (16 * i) & 0xffff) });
    }
    for _ in 0..15 {
        keys.push(IndexKey { family: IndexFamily::MegaShingle, value: rng.next() });
    }
    for _ in 0..21 {
        keys.push(IndexKey { family: IndexFamily::LshBand, value: rng.next() });
    }
    let rest = n.saturating_sub(keys.len());
    for i in 0..rest {
        let family = match i % 10 {
            0 => IndexFamily::Dna,
            1..=5 => IndexFamily::WinnowChars,
            _ => IndexFamily::WinnowInitials,
        };
        keys.push(IndexKey { family, value: rng.next() });
    }
    keys
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    if sorted.is_empty() {
        return Duration::ZERO;
    }
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

struct Backend {
    index: Arc<dyn CandidateIndex>,
    /// An embedded index holds its own postings: the "all keys" comparison index must be
    /// filled too (untimed). Two Redis clients on one prefix share theirs.
    separate: bool,
    _dir: Option<tempfile::TempDir>,
}

impl Backend {
    /// Give a separate comparison index the documents the timed one just received.
    async fn mirror(&self, docs: &[(u64, Vec<IndexKey>)]) {
        if self.separate {
            for chunk in docs.chunks(BATCH) {
                self.index.add_batch(Namespace::Sections, chunk).await.expect("insert (comparison index)");
            }
        }
    }
}

async fn open(backend: &str, prefix: &str, server: Option<&RedisServer>, bucket_bits: u8, budget: usize) -> Backend {
    match (backend, server) {
        ("redis", Some(server)) => {
            let config = RedisConfig {
                prefix: prefix.into(),
                bucket_bits,
                index: IndexConfig { query_key_budget: budget, ..IndexConfig::default() },
                // A loaded shared machine can stall one insert pipeline for seconds;
                // the benchmark measures lookups, it must not die on a slow write.
                timeout: Duration::from_secs(60),
                ..RedisConfig::with_url(server.url())
            };
            let index = RedisIndex::connect(config).await.expect("connect");
            Backend { index: Arc::new(index), separate: false, _dir: None }
        }
        ("embedded", _) => {
            let dir = tempfile::tempdir().expect("temp dir");
            let index = EmbeddedIndex::open(
                dir.path().join("index.sqlite"),
                IndexConfig { query_key_budget: budget, ..IndexConfig::default() },
            )
            .expect("open");
            Backend { index: Arc::new(index), separate: true, _dir: Some(dir) }
        }
        (other, _) => panic!("unknown backend {other}"),
    }
}

async fn bytes_used(index: &dyn CandidateIndex) -> u64 {
    index.stats().await.expect("stats").bytes_used
}

struct Timing {
    p50: Duration,
    p99: Duration,
    candidates: f64,
    keys: f64,
    /// Share of the planted sections found among the returned candidates.
    recall: f64,
}

async fn time_lookups(index: &dyn CandidateIndex, queries: &[Vec<IndexKey>], planted: &[Vec<u64>]) -> Timing {
    let mut times = Vec::with_capacity(queries.len());
    let (mut candidates, mut keys, mut found, mut wanted) = (0usize, 0usize, 0usize, 0usize);
    for (i, q) in queries.iter().enumerate() {
        let t = Instant::now();
        let r = index.lookup(Namespace::Sections, q, 50).await.expect("lookup");
        times.push(t.elapsed());
        candidates += r.candidates_total;
        keys += r.keys_queried;
        if let Some(p) = planted.get(i) {
            wanted += p.len();
            found += p.iter().filter(|d| r.candidates.iter().any(|c| c.doc == **d)).count();
        }
    }
    times.sort_unstable();
    let n = queries.len().max(1) as f64;
    Timing {
        p50: percentile(&times, 0.5),
        p99: percentile(&times, 0.99),
        candidates: candidates as f64 / n,
        keys: keys as f64 / n,
        recall: if wanted == 0 { f64::NAN } else { found as f64 / wanted as f64 },
    }
}

/// Redis' own time (commandstats) since the last reset, per lookup, in ms.
fn server_ms(server: Option<&RedisServer>, lookups: usize) -> Option<f64> {
    let s = server?;
    let stats = s.command(&["INFO", "commandstats"]).unwrap_or_default();
    let usec: u64 = stats
        .lines()
        .filter_map(|l| l.split("usec=").nth(1))
        .filter_map(|v| v.split(',').next()?.parse::<u64>().ok())
        .sum();
    let _ = s.command(&["CONFIG", "RESETSTAT"]);
    Some(usec as f64 / 1e3 / lookups.max(1) as f64)
}

fn ms(d: Duration) -> String {
    format!("{:.2}", d.as_secs_f64() * 1e3)
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let args = args();
    // One server for both parts (memory is measured as deltas).
    let server = if args.backend == "redis" {
        let s = RedisServer::start().expect("redis-server (run scripts/setup-redis.sh)");
        s.command(&["CONFIG", "SET", "hash-max-listpack-entries", "512"]).expect("config");
        s.command(&["CONFIG", "SET", "hash-max-listpack-value", "256"]).expect("config");
        let version = s.command(&["INFO", "server"]).unwrap_or_default();
        let version = version.lines().find_map(|l| l.strip_prefix("redis_version:")).unwrap_or("?").to_string();
        println!("redis-server {version} on 127.0.0.1:{}", s.port());
        Some(s)
    } else {
        None
    };

    // Part 1: real sections.
    if args.real > 0 {
        let t = Instant::now();
        let texts = corpus_texts(&args.corpus);
        // Long texts (chapters) are cut into sections; short ones (news items) are
        // joined first, as a work's consecutive sections would be.
        let joined: String = texts.iter().filter(|t| t.chars().count() < SECTION_CHARS).map(String::as_str).collect();
        let sections: Vec<String> = texts
            .iter()
            .flat_map(|t| cut(t, SECTION_CHARS))
            .chain(cut(&joined, SECTION_CHARS))
            .take(args.real)
            .collect();
        let mut rng = Rng(42);
        let long: Vec<&String> = texts.iter().filter(|t| t.chars().count() > PAGE_CHARS + 500).collect();
        let pages: Vec<String> = (0..args.queries.min(200))
            .map(|_| {
                let t = long[(rng.next() % long.len() as u64) as usize];
                let n = t.chars().count();
                let start = (rng.next() % (n - PAGE_CHARS) as u64) as usize;
                t.chars().skip(start).take(PAGE_CHARS).collect()
            })
            .collect();
        let m = args.section_sampling;
        let layout = |keys: Vec<IndexKey>| if m > 1 { zhiwen_index::sample_winnowed_keys_only(keys, m) } else { keys };
        let section_keys: Vec<(u64, Vec<IndexKey>)> = fingerprint_all(&sections)
            .into_iter()
            .enumerate()
            .filter_map(|(i, k)| k.map(|k| (i as u64, layout(k))))
            .collect();
        let page_keys: Vec<Vec<IndexKey>> = fingerprint_all(&pages).into_iter().flatten().map(layout).collect();
        let entries: usize = section_keys.iter().map(|d| d.1.len()).sum();
        let page_bytes: usize = pages.iter().map(String::len).sum::<usize>() / pages.len().max(1);
        let page_entries: usize = page_keys.iter().map(Vec::len).sum::<usize>() / page_keys.len().max(1);
        println!(
            "\n## Real sections ({} sections of {SECTION_CHARS} chars, {:.0} keys each; fingerprinted in {:.1}s)",
            section_keys.len(),
            entries as f64 / section_keys.len().max(1) as f64,
            t.elapsed().as_secs_f64()
        );
        println!("query pages: {} of {page_bytes} bytes UTF-8, {page_entries} keys each", page_keys.len());
        let b = open(&args.backend, "real", server.as_ref(), args.bucket_bits, args.budget).await;
        let all_keys = open(&args.backend, "real", server.as_ref(), args.bucket_bits, 0).await;
        let base = bytes_used(&*b.index).await;
        let t = Instant::now();
        for chunk in section_keys.chunks(BATCH) {
            b.index.add_batch(Namespace::Sections, chunk).await.expect("insert");
        }
        let secs = t.elapsed().as_secs_f64();
        let mem = bytes_used(&*b.index).await.saturating_sub(base);
        all_keys.mirror(&section_keys).await;
        let stats = b.index.stats().await.expect("stats").namespace(Namespace::Sections);
        println!("| sections | entries | insert entries/s | sections/s | query keys | lookup p50 ms | p99 ms | candidates/page | big buckets | bytes/section | bytes/entry |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|");
        for (label, index) in [(format!("budget {}", args.budget), &b), ("all keys".to_string(), &all_keys)] {
            let _ = server_ms(server.as_ref(), 1);
            let t = time_lookups(&*index.index, &page_keys, &[]).await;
            let server_time = server_ms(server.as_ref(), page_keys.len());
            eprintln!("  {label}: server time per lookup {server_time:.2?} ms");
            println!(
                "| {} | {} | {:.0} | {:.0} | {:.0} ({label}) | {} | {} | {:.0} | {} | {:.0} | {:.1} |",
                section_keys.len(),
                stats.postings,
                entries as f64 / secs,
                section_keys.len() as f64 / secs,
                t.keys,
                ms(t.p50),
                ms(t.p99),
                t.candidates,
                stats.big_buckets,
                mem as f64 / section_keys.len().max(1) as f64,
                mem as f64 / entries.max(1) as f64
            );
        }
        drop(all_keys);
        b.index.clear(Namespace::Sections).await.expect("clear");
        drop(b);
    }

    // Part 2: the curve.
    if !args.sizes.is_empty() {
        let m = args.section_sampling;
        let page_keys = 1_500 / m as usize;
        println!(
            "\n## Synthetic sections, {} keys each (section sampling 1 in {m}); queries of {page_keys} keys (a 10 KB page)",
            args.keys
        );
        let b = open(&args.backend, "syn", server.as_ref(), args.bucket_bits, args.budget).await;
        let all_keys = open(&args.backend, "syn", server.as_ref(), args.bucket_bits, 0).await;
        let base = bytes_used(&*b.index).await;
        println!("| sections | entries | insert entries/s (this step) | query keys | lookup p50 ms | p99 ms | server ms/lookup | recall (5 planted) | candidates/page | bytes/section | bytes/entry |");
        println!("|---|---|---|---|---|---|---|---|---|---|---|");
        let mut done = 0usize;
        let mut rng = Rng(7);
        for &size in &args.sizes {
            let from = done;
            let t = Instant::now();
            let mut entries = 0usize;
            let mut last_report = Instant::now();
            while done < size {
                let end = (done + BATCH).min(size);
                let batch: Vec<(u64, Vec<IndexKey>)> =
                    (done..end).map(|d| (d as u64, synthetic_section(d as u64, args.keys, m))).collect();
                entries += batch.iter().map(|d| d.1.len()).sum::<usize>();
                b.index.add_batch(Namespace::Sections, &batch).await.expect("insert");
                done = end;
                if last_report.elapsed() > Duration::from_secs(30) {
                    eprintln!("  {done} sections, {:.0} entries/s", entries as f64 / t.elapsed().as_secs_f64());
                    last_report = Instant::now();
                }
            }
            let rate = entries as f64 / t.elapsed().as_secs_f64();
            let mem = bytes_used(&*b.index).await.saturating_sub(base);
            let step: Vec<(u64, Vec<IndexKey>)> =
                (from..size).map(|d| (d as u64, synthetic_section(d as u64, args.keys, m))).collect();
            all_keys.mirror(&step).await;
            let mut planted: Vec<Vec<u64>> = Vec::with_capacity(args.queries);
            let queries: Vec<Vec<IndexKey>> = (0..args.queries)
                .map(|_| {
                    let mut q = Vec::with_capacity(page_keys);
                    let mut docs = Vec::with_capacity(5);
                    for _ in 0..5 {
                        let d = rng.next() % done as u64;
                        docs.push(d);
                        q.extend(synthetic_section(d, args.keys, m));
                    }
                    planted.push(docs);
                    let fill = page_keys.saturating_sub(q.len());
                    q.extend(synthetic_section(u64::MAX - rng.next() % 1_000_000_000, fill.max(40), m));
                    q
                })
                .collect();
            let total = done * args.keys;
            for pass in 1..=args.passes {
                for (label, index) in [(format!("budget {}", args.budget), &b), ("all keys".to_string(), &all_keys)] {
                    let label = if args.passes > 1 { format!("{label}, pass {pass}") } else { label };
                    let _ = server_ms(server.as_ref(), 1);
                    let t = time_lookups(&*index.index, &queries, &planted).await;
                    let server_time =
                        server_ms(server.as_ref(), queries.len()).map_or("-".to_string(), |v| format!("{v:.2}"));
                    println!(
                    "| {done} | {total} | {rate:.0} | {:.0} ({label}) | {} | {} | {server_time} | {:.3} | {:.0} | {:.0} | {:.1} |",
                    t.keys,
                    ms(t.p50),
                    ms(t.p99),
                    t.recall,
                    t.candidates,
                    mem as f64 / done as f64,
                    mem as f64 / total as f64
                );
                }
            }
        }
        let stats = b.index.stats().await.expect("stats");
        let mut summary = HashMap::new();
        summary.insert("documents", stats.namespace(Namespace::Sections).documents);
        summary.insert("postings", stats.namespace(Namespace::Sections).postings);
        summary.insert("big_buckets", stats.namespace(Namespace::Sections).big_buckets);
        println!("final stats: {summary:?}, bytes_used {}", stats.bytes_used);
    }
}
