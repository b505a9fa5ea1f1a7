//! End-to-end matching throughput: pages matched per second (fingerprint, lookup in the
//! section index, verify every candidate, add the page to the page index, store matches), on the
//! embedded store and index or on MongoDB + Redis (`--mongo URI --redis URL`).
//!
//! Two catalogues (`--catalogue`):
//!
//! - `distinct` (default), what a real catalogue of 10k-100k chapters of different works
//!   looks like: sections of 1-2k characters cut from distinct real text (the
//!   public-domain novels of the test corpus and the news stories on even lines of the
//!   two news sets). When that runs out (100k sections need about 150M characters, the
//!   corpus has about 17M) the catalogue is topped up with synthetic works written by a
//!   character-level Markov model of order 3 trained on those texts at run time (fixed
//!   seed): distinct works that share only chance short phrases with each other, as
//!   unrelated works of one language do. Pages are filled with the news stories on odd
//!   lines, so a page shares text with a section only where a section was planted.
//! - `shuffled`, the adversarial worst case: the classics cut into sections, topped up
//!   with sections of shuffled sentences of the same classics, so a page that embeds a
//!   section shares whole sentences with dozens of other sections, each of which needs a
//!   passage search. Pages are filled with all the news stories.
//!
//! Pages: 5-10 KB of UTF-8; a third embed a section between filler text (the sections
//! they copy are drawn once registration is done, and the rest of the catalogue's text is
//! then given back, so the peak resident memory printed is the matching's). Nothing of the
//! corpus is committed; everything is read at run time from `ZHIWEN_CORPUS_DIR`, else
//! the test corpus (`scripts/setup-corpus.sh`), which has the classics and one news set.
//!
//! ```text
//! cargo run --release -p zhiwen-matcher --example match_bench -- --sections 10000 --pages 3000
//! cargo run --release -p zhiwen-matcher --example match_bench -- --catalogue shuffled --sections 10000
//! ```
//!
//! `--name NAME --catalogue-only` indexes a catalogue on the servers and stops;
//! `--name NAME --catalogue-stored` matches against it (on copies of the servers' data).
//! `docs/bench-matcher.md` lists the other flags.

/// The allocator of the `zhiwen` binary, set up as `zhiwen` sets it up
/// (`services/cli/src/alloc.rs`), so the bench measures what it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay`, which libmimalloc-sys leaves unnamed (as in
/// `services/cli/src/alloc.rs`, whose test checks the index).
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// As `zhiwen`'s `alloc::keep_freed_memory`: mimalloc keeps freed memory (purge delay -1)
/// unless `MIMALLOC_PURGE_DELAY` is set.
fn keep_freed_memory() {
    set_purge_delay(-1);
}

/// The purge delay in ms (0: at once, -1: never), unless `MIMALLOC_PURGE_DELAY` chose it.
fn set_purge_delay(ms: std::os::raw::c_long) {
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: stores an option value; mimalloc allows it at any time, from any thread.
        unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, ms) }
    }
}

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use zhiwen_core::{Fingerprinter, Params};
use zhiwen_index::{CandidateIndex, EmbeddedIndex, IndexConfig, RedisConfig, RedisIndex};
use zhiwen_matcher::task::{run_match_task, NoProgress, Scope, TaskControl, TaskSpec, TaskSummary};
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

/// The corpus: `ZHIWEN_CORPUS_DIR` (a larger private one), else the test corpus; a
/// missing one shows up as empty texts, which the bench reports.
fn corpus_dir() -> PathBuf {
    std::env::var_os("ZHIWEN_CORPUS_DIR").map(PathBuf::from).unwrap_or_else(|| {
        zhiwen_eval::corpus::locate()
            .unwrap_or_else(|_| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.test-corpus"))
    })
}

/// The `text` of every line of a corpus file, with its line number.
fn numbered_texts(file: &str) -> Vec<(usize, String)> {
    let Ok(data) = std::fs::read_to_string(corpus_dir().join(file)) else { return Vec::new() };
    data.lines()
        .enumerate()
        .filter_map(|(i, l)| serde_json::from_str::<serde_json::Value>(l).ok().map(|v| (i, v)))
        .filter_map(|(i, v)| v["text"].as_str().map(|t| (i, t.to_owned())))
        .collect()
}

/// With `--site-template`, each of the bench's 20 sites puts the same header (three
/// lines) and footer (two lines) around every page body, made of real pirate-site ad
/// lines (`zhiwen_eval::corpus::read_ad_lines`): the boilerplate a real site has, which
/// the matcher measures per site and blanks before lookup.
fn site_templates() -> Result<Vec<(String, String)>, Box<dyn std::error::Error>> {
    let lines = zhiwen_eval::corpus::read_ad_lines(&corpus_dir())?;
    Ok((0..20)
        .map(|site| {
            let line = |j: usize| &lines[(site * 5 + j) % lines.len()];
            (format!("{}\n{}\n{}\n", line(0), line(1), line(2)), format!("\n{}\n{}", line(3), line(4)))
        })
        .collect())
}

fn texts(file: &str) -> Vec<String> {
    numbered_texts(file).into_iter().map(|(_, t)| t).collect()
}

/// CPU seconds (user + system) a process has used so far, from `/proc/PID/stat`.
fn cpu_seconds(pid: &str) -> Option<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // Fields after the command name (which is in parentheses): utime and stime are 14 and 15.
    let rest = &stat[stat.rfind(')')? + 2..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks: f64 = f.get(11)?.parse::<f64>().ok()? + f.get(12)?.parse::<f64>().ok()?;
    Some(ticks / 100.0)
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

/// A character-level Markov model of order 3: for every context of three characters,
/// the characters that follow it in the training text (as often as they follow it).
struct Markov {
    /// (context hash << 21 | next character), sorted.
    keys: Vec<u64>,
    /// Context hash -> range of `keys`.
    ranges: HashMap<u64, (u32, u32)>,
    /// Training characters (random starting contexts).
    chars: Vec<char>,
}

impl Markov {
    const ORDER: usize = 3;

    fn context(c: &[char]) -> u64 {
        let packed = c.iter().fold(0u64, |h, &c| (h << 21) | c as u64);
        packed.wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 21
    }

    fn train(texts: &[&str]) -> Markov {
        let mut chars: Vec<char> = Vec::new();
        for t in texts {
            chars.extend(t.chars().filter(|c| !c.is_whitespace()));
            chars.push('\n');
        }
        let mut keys: Vec<u64> = chars
            .windows(Self::ORDER + 1)
            .map(|w| (Self::context(&w[..Self::ORDER]) << 21) | w[Self::ORDER] as u64)
            .collect();
        keys.sort_unstable();
        let mut ranges = HashMap::new();
        let mut start = 0;
        for i in 1..=keys.len() {
            if i == keys.len() || keys[i] >> 21 != keys[start] >> 21 {
                ranges.insert(keys[start] >> 21, (start as u32, i as u32));
                start = i;
            }
        }
        Markov { keys, ranges, chars }
    }

    /// A text of `len` characters from `rng`.
    fn generate(&self, len: usize, rng: &mut Rng) -> String {
        let mut out: Vec<char> = Vec::with_capacity(len);
        while out.len() < len {
            let n = out.len();
            let next = if n >= Self::ORDER {
                self.ranges.get(&Self::context(&out[n - Self::ORDER..])).and_then(|&(lo, hi)| {
                    char::from_u32((self.keys[lo as usize + rng.below((hi - lo) as usize)] & 0x1f_ffff) as u32)
                })
            } else {
                None
            };
            match next {
                Some(c) => out.push(c),
                // No continuation (or the start): restart from a random context.
                None => {
                    let i = rng.below(self.chars.len() - Self::ORDER);
                    out.extend_from_slice(&self.chars[i..i + Self::ORDER]);
                }
            }
        }
        out.truncate(len);
        out.into_iter().collect()
    }
}

/// Hashes of every run of `RUN` characters (whitespace dropped) of `text`.
const RUN: usize = 16;
fn runs(text: &str) -> impl Iterator<Item = u64> {
    let chars: Vec<char> = text.chars().filter(|c| !c.is_whitespace()).collect();
    (0..chars.len().saturating_sub(RUN - 1)).map(move |i| {
        chars[i..i + RUN].iter().fold(0xcbf2_9ce4_8422_2325u64, |h, &c| (h ^ c as u64).wrapping_mul(0x100_0000_01b3))
    })
}

/// The default catalogue: sections of distinct real text, topped up with Markov works;
/// and the page filler (news stories that share no run of 16 characters with any
/// section's source text).
fn distinct_catalogue(n_sections: usize, rng: &mut Rng) -> (Vec<String>, Vec<String>) {
    let mut real: Vec<String> = texts("novels_classics.jsonl");
    real.extend(texts("novels_modern_pd.jsonl"));
    // The CCTV bulletins repeat their wording from one story to the next (most stories
    // share a run of 20 characters with another one): all of them go to the catalogue.
    // The other news set is split by line: even lines to the catalogue, odd lines fill
    // pages, except the few stories that share a run with the catalogue.
    let mut news = texts("news_xwlb_cctv.jsonl").join("\n");
    let mut candidates = Vec::new();
    for (i, t) in numbered_texts("news_inews_ccf2019.jsonl") {
        if i % 2 == 0 {
            news.push('\n');
            news.push_str(&t);
        } else {
            candidates.push(t);
        }
    }
    real.push(news);
    // Distinct works: a section that shares more than a phrase (8 runs of 16 characters,
    // a passage of 24) with earlier ones (a repeated bulletin, a quoted poem) is left out.
    let mut seen: HashSet<u64> = HashSet::new();
    let mut sections: Vec<String> = Vec::new();
    for s in real.iter().flat_map(|t| cut(t, rng)) {
        let own: HashSet<u64> = runs(&s).collect();
        if own.iter().filter(|h| seen.contains(h)).count() <= 8 {
            seen.extend(own);
            sections.push(s);
        }
    }
    let filler: Vec<String> = candidates.into_iter().filter(|t| !runs(t).any(|h| seen.contains(&h))).collect();
    drop(seen);
    let n_real = sections.len().min(n_sections);
    if sections.len() < n_sections {
        let t = Instant::now();
        let texts: Vec<&str> = real.iter().map(String::as_str).collect();
        let model = Markov::train(&texts);
        let seed = rng.next();
        let missing = n_sections - sections.len();
        // Each synthetic work has its own seed: the same catalogue on any number of threads.
        let make = |i: usize| {
            let mut r = Rng(seed ^ (i as u64 + 1).wrapping_mul(0x2545_f491_4f6c_dd1d));
            let len = 1000 + r.below(1000);
            model.generate(len, &mut r)
        };
        let make = &make;
        let half = missing / 2;
        let synthetic: Vec<String> = std::thread::scope(|s| {
            let a = s.spawn(move || (0..half).map(make).collect::<Vec<_>>());
            let b: Vec<String> = (half..missing).map(make).collect();
            let mut a = a.join().unwrap_or_default();
            a.extend(b);
            a
        });
        sections.extend(synthetic);
        println!(
            "catalogue: {n_real} sections of real text, {missing} synthetic (Markov order {}) in {:.1} s",
            Markov::ORDER,
            t.elapsed().as_secs_f64()
        );
    } else {
        println!("catalogue: {n_real} sections of real text");
    }
    println!("page filler: {} news stories that share no run of {RUN} characters with the catalogue", filler.len());
    sections.truncate(n_sections);
    (sections, filler)
}

/// The adversarial catalogue: the classics, topped up with shuffled sentences of them.
fn shuffled_catalogue(n_sections: usize, rng: &mut Rng) -> (Vec<String>, Vec<String>) {
    let classics = texts("novels_classics.jsonl");
    let mut sections: Vec<String> = classics.iter().flat_map(|t| cut(t, rng)).collect();
    let sentences: Vec<String> = classics.iter().flat_map(|t| split_sentences(t)).collect();
    while sections.len() < n_sections {
        let target = 3 * (1000 + rng.below(1000));
        sections.push(fill(target, &sentences, rng));
    }
    sections.truncate(n_sections);
    let mut other: Vec<String> = texts("news_inews_ccf2019.jsonl");
    other.extend(texts("news_xwlb_cctv.jsonl"));
    let other_pool = if other.is_empty() { sentences.clone() } else { other };
    (sections, other_pool)
}

/// The longest prefix of `s` of at most `bytes` bytes, cut on a character boundary.
fn prefix(s: &str, bytes: usize) -> &str {
    let mut end = s.len().min(bytes);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn fill(target_bytes: usize, pool: &[String], rng: &mut Rng) -> String {
    let mut s = String::new();
    while s.len() < target_bytes {
        s.push_str(&pool[rng.below(pool.len())]);
    }
    s
}

/// Run one matching task of `scope`; print the CPU time the bench and the `watched`
/// server processes spent in it. Returns the summary and the wall time in seconds.
async fn timed_task(
    matcher: &Matcher,
    scope: Scope,
    watched: &[String],
) -> Result<(TaskSummary, f64), Box<dyn std::error::Error>> {
    let cpu = || watched.iter().map(|p| cpu_seconds(p).unwrap_or(0.0)).collect::<Vec<f64>>();
    let (servers_before, self_before) = (cpu(), cpu_seconds("self").unwrap_or(0.0));
    let t = Instant::now();
    let s = run_match_task(matcher, TaskSpec::new(scope), &TaskControl::default(), &NoProgress).await?;
    let secs = t.elapsed().as_secs_f64();
    let self_cpu = cpu_seconds("self").unwrap_or(0.0) - self_before;
    let servers: Vec<String> = watched
        .iter()
        .zip(cpu().iter().zip(&servers_before))
        .map(|(p, (a, b))| format!("{p} {:.1} s", a - b))
        .collect();
    println!(
        "  CPU during the run ({secs:.1} s wall): bench {self_cpu:.1} s{}{}",
        if servers.is_empty() { "" } else { ", servers " },
        servers.join(", ")
    );
    Ok((s, secs))
}

#[tokio::main(flavor = "multi_thread")]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    keep_freed_memory();
    let n_sections = arg("--sections", 10_000);
    let n_pages = arg("--pages", 3_000);
    if texts("novels_classics.jsonl").is_empty() {
        return Err("novels_classics.jsonl not found: set ZHIWEN_CORPUS_DIR".into());
    }
    let catalogue = arg_str("--catalogue").unwrap_or_else(|| "distinct".into());
    let catalogue_only = std::env::args().any(|a| a == "--catalogue-only");
    let catalogue_stored = std::env::args().any(|a| a == "--catalogue-stored");
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    // A stored catalogue is not written again: only the page filler is made, and the
    // sections the pages copy are read from the store.
    let generated = if catalogue_stored { 0 } else { n_sections };
    let (sections, other_pool) = match catalogue.as_str() {
        "distinct" => distinct_catalogue(generated, &mut rng),
        "shuffled" => shuffled_catalogue(generated, &mut rng),
        other => return Err(format!("--catalogue {other}: expected distinct or shuffled").into()),
    };
    if other_pool.is_empty() {
        return Err("no news stories to fill pages with: set ZHIWEN_CORPUS_DIR".into());
    }

    let dir = tempfile::tempdir()?;
    // `--store-dir DIR`: the embedded store (and the embedded index) in DIR instead of a
    // temporary directory, so that a catalogue indexed once (`--catalogue-only`) can be
    // matched against by later runs on copies of DIR (`--catalogue-stored`).
    let data_dir = arg_str("--store-dir").map_or_else(|| dir.path().to_path_buf(), PathBuf::from);
    // Backends: embedded by default; `--mongo URI` (a fresh database named after the run)
    // and `--redis URL` (a fresh key prefix) for the server backends. `--name NAME` names
    // them instead, so a catalogue indexed once (`--catalogue-only`) can be matched against
    // by later runs on copies of the servers' data (`--catalogue-stored`).
    let run = arg_str("--name").unwrap_or_else(|| std::process::id().to_string());
    let store_config = match arg_str("--mongo") {
        Some(uri) => StoreConfig::mongo(uri, format!("zhiwen_bench_{run}")),
        None => StoreConfig::embedded(data_dir.join("store")),
    };
    zhiwen_store::migrate(&store_config).await?;
    let stores = zhiwen_store::open(&store_config).await?;
    // `--query-key-budget N`: lookups of more keys sample their winnowed keys (0: never).
    let index_config = IndexConfig {
        query_key_budget: arg("--query-key-budget", IndexConfig::default().query_key_budget),
        ..IndexConfig::default()
    };
    // Redis only: MB of the section filter (0: none).
    let section_filter_mb = arg("--section-filter-mb", 0) as u32;
    let index: Arc<dyn CandidateIndex> = match arg_str("--redis") {
        Some(url) => Arc::new(
            RedisIndex::connect(RedisConfig {
                prefix: format!("zwbench{run}"),
                index: index_config,
                section_filter_mb,
                // `--redis-bucket-bits N`: the namespaces' buckets (`index.redis_bucket_bits`).
                bucket_bits: arg("--redis-bucket-bits", RedisConfig::default().bucket_bits as usize) as u8,
                ..RedisConfig::with_url(url)
            })
            .await?,
        ),
        None => Arc::new(EmbeddedIndex::open(data_dir.join("index.sqlite"), index_config)?),
    };
    let mut config = MatcherConfig::default();
    config.min_winnow_hits = arg("--min-winnow-hits", config.min_winnow_hits as usize) as u32;
    config.index_pages = !std::env::args().any(|a| a == "--no-page-index");
    config.concurrency = arg("--concurrency", config.concurrency);
    config.batch_size = arg("--batch-size", config.batch_size);
    config.page_index_sampling = arg("--page-index-sampling", config.page_index_sampling as usize) as u64;
    config.section_index_sampling = arg("--section-index-sampling", config.section_index_sampling as usize) as u64;
    config.section_cache = arg("--section-cache", config.section_cache);
    let repeat = arg("--repeat", 3).max(1);
    let (section_modulus, candidate_limit) = (config.section_sampling_modulus(), config.candidate_limit);
    println!(
        "catalogue {catalogue}, store {}, index {} (query key budget {}, section filter {section_filter_mb} MB), min_winnow_hits {}, page index {} (1 in {} winnowed keys), concurrency {}, batch {}, section cache {}, {repeat} timed runs",
        stores.backend,
        index.backend(),
        index_config.query_key_budget,
        config.min_winnow_hits,
        config.index_pages,
        config.page_sampling_modulus(),
        config.concurrency,
        config.batch_size,
        config.section_cache
    );
    let matcher = Matcher::new(stores.clone(), index.clone(), Fingerprinter::new(Params::default())?, config);

    let t = Instant::now();
    let works_expected = n_sections.div_ceil(100) as u64;
    if catalogue_stored {
        let works = stores.works.count_works().await?;
        if works != works_expected {
            return Err(format!("--catalogue-stored: {works} works stored, {works_expected} expected").into());
        }
    }
    for (w, chunk) in sections.chunks(100).enumerate().filter(|_| !catalogue_stored) {
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
    if catalogue_stored {
        println!("{n_sections} sections stored and indexed by an earlier run");
    } else {
        println!(
            "indexed {} sections in {:.1} s ({:.0} sections/s)",
            sections.len(),
            index_secs,
            sections.len() as f64 / index_secs
        );
    }
    let stats = index.stats().await?;
    let chars: usize = sections.iter().map(|s| s.chars().count()).sum();
    let per_char = |bytes: u64| bytes as f64 / chars.max(1) as f64;
    let used = match index.backend() {
        "embedded" => format!(
            "heap estimate {:.0} MB plus file {:.0} MB",
            (stats.bytes_used - stats.file_bytes) as f64 / 1e6,
            stats.file_bytes as f64 / 1e6
        ),
        _ => "the server's used_memory".to_owned(),
    };
    println!(
        "index: {} section keys, {:.0} MB used ({used})",
        stats.namespaces.first().map_or(0, |n| n.postings),
        stats.bytes_used as f64 / 1e6,
    );
    let without_file = match stats.file_bytes {
        0 => String::new(),
        file => format!(" ({:.2} without the file)", per_char(stats.bytes_used - file)),
    };
    if !catalogue_stored {
        println!(
            "registered: {chars} characters; index {:.2} bytes per character{without_file}",
            per_char(stats.bytes_used)
        );
    }

    if catalogue_only {
        return Ok(());
    }

    // The catalogue's text is not needed any more but for the sections the pages copy:
    // those are drawn now (one per third of every page the runs make), and the rest is
    // given back to the system, so that the resident memory measured while matching is
    // the matcher's (and the store's files have the page cache a matching process has),
    // not that of a bench holding 1.5G characters of generated text.
    let resident_with_text = status_field("VmRSS");
    let n_planted = (n_pages * (repeat + 1)).div_ceil(3);
    let planted: Vec<String> = if catalogue_stored {
        // Section ids follow the order of registration, from the first.
        let first = stores.works.sections_of(1).await?.first().map_or(1, |s| s.id);
        let ids: Vec<i64> = (0..n_planted).map(|_| first + rng.below(n_sections) as i64).collect();
        let by_id: HashMap<i64, String> =
            stores.works.get_sections(&ids).await?.into_iter().map(|s| (s.id, s.text)).collect();
        ids.iter()
            .map(|id| by_id.get(id).cloned().ok_or(format!("section {id} not stored")))
            .collect::<Result<_, _>>()?
    } else {
        (0..n_planted).map(|_| sections[rng.below(sections.len())].clone()).collect()
    };
    give_back_freed_memory(move || drop(sections));
    println!(
        "resident memory after registration: {resident_with_text}; {} with the catalogue's text dropped",
        status_field("VmRSS")
    );
    reset_peak_resident_memory();

    // Pages `first..first + n`: 5-10 KB, a third embedding a section (page `i` the
    // planted section `i / 3`).
    let shuffled = catalogue == "shuffled";
    let templates = if std::env::args().any(|a| a == "--site-template") { site_templates()? } else { Vec::new() };
    let make_pages = |first: usize, n: usize, rng: &mut Rng| -> (Vec<NewPage>, usize) {
        let mut pages = Vec::with_capacity(n);
        let mut bytes = 0usize;
        for i in first..first + n {
            let template = templates.get(i % 20);
            let size = 5_000 + rng.below(5_000) - template.map_or(0, |(h, f)| h.len() + f.len());
            let text = if i % 3 == 0 {
                let s = &planted[(i / 3) % planted.len()];
                let pad = size.saturating_sub(s.len()) / 2;
                let mut filler = |n: usize| {
                    let f = fill(n, &other_pool, rng);
                    // The old catalogue keeps its pages as they were; the default one cuts
                    // the filler to size so that the 10 KB cut below never cuts the planted
                    // section.
                    if shuffled {
                        f
                    } else {
                        prefix(&f, n).to_owned()
                    }
                };
                let before = filler(pad);
                let after = filler(pad);
                format!("{before}{s}{after}")
            } else {
                fill(size, &other_pool, rng)
            };
            // Cut to the byte budget on a character boundary.
            let text = match template {
                Some((header, footer)) => {
                    let body = prefix(&text, 10_000 - header.len() - footer.len());
                    format!("{header}{body}{footer}")
                }
                None => prefix(&text, 10_000).to_owned(),
            };
            bytes += text.len();
            pages.push(NewPage {
                url: format!("http://site{}.example/p/{i}", i % 20),
                fetched_at: Timestamp::now(),
                http_status: Some(200),
                charset: None,
                body: Vec::new(),
                text,
                format: None,
                canon_tag: None,
                source: PageSource::Crawl,
            });
        }
        (pages, bytes)
    };
    let (pages, bytes) = make_pages(0, n_pages, &mut rng);
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
    // `--watch-pids A,B`: the CPU time server processes (MongoDB, Redis) spent in each run.
    let watched: Vec<String> =
        arg_str("--watch-pids").map(|v| v.split(',').map(str::to_owned).collect()).unwrap_or_default();
    let mut rates = Vec::new();
    for _ in 0..repeat {
        let (s, secs) = timed_task(&matcher, Scope::All, &watched).await?;
        rates.push(s.pages as f64 / secs);
        println!(
            "matched {} pages in {:.1} s: {:.0} pages/s end to end ({} new, {} unchanged matches, {} failed) with {} sections",
            s.pages,
            secs,
            s.pages as f64 / secs,
            s.matches_new,
            s.matches_unchanged,
            s.pages_failed,
            n_sections
        );
    }
    rates.sort_by(f64::total_cmp);
    println!("median of {repeat}: {:.0} pages/s end to end (matching again)", rates[rates.len() / 2]);

    // A daily task: pages never seen before (new page-index entries and matches),
    // the task scoped to them as `zhiwen match` scopes a day's pages.
    let mut fresh_rates = Vec::new();
    for run in 0..repeat {
        let since = Timestamp::now();
        let (fresh, _) = make_pages(n_pages * (run + 1), n_pages, &mut rng);
        for chunk in fresh.chunks(500) {
            stores.pages.upsert_pages(chunk).await?;
        }
        let (s, secs) = timed_task(&matcher, Scope::Since(since), &watched).await?;
        fresh_rates.push(s.pages as f64 / secs);
        println!(
            "matched {} new pages in {secs:.1} s: {:.0} pages/s end to end ({} new matches, {} failed)",
            s.pages,
            s.pages as f64 / secs,
            s.matches_new,
            s.pages_failed
        );
    }
    fresh_rates.sort_by(f64::total_cmp);
    println!("median of {repeat}: {:.0} pages/s end to end (new pages)", fresh_rates[fresh_rates.len() / 2]);
    // Candidate statistics on a sample of pages (matched again: idempotent, nothing new).
    let (mut candidates, mut verified, mut sampled) = (0usize, 0usize, 0usize);
    let (mut keys, mut keys_found, mut with_boilerplate) = (0usize, 0usize, 0usize);
    for r in stores.pages.list_pages(None, 0, 200).await? {
        let out = matcher.match_page(r.id).await?;
        with_boilerplate += usize::from(out.boilerplate_chars > 0);
        candidates += out.candidates;
        verified += out.verified;
        keys += out.keys_looked_up;
        keys_found += out.keys_found;
        sampled += 1;
    }
    let per_page = |n: usize| n as f64 / sampled.max(1) as f64;
    println!(
        "per page ({sampled} sampled): {:.1} candidates from the index, {:.1} verified; {:.0} keys looked up, {:.0} of them ({:.0}%) with a posting list; {with_boilerplate} with site boilerplate blanked",
        per_page(candidates),
        per_page(verified),
        per_page(keys),
        per_page(keys_found),
        100.0 * keys_found as f64 / keys.max(1) as f64
    );
    // Lookup latency: one page's lookup in the section index as the matcher makes it (with
    // sampled sections, its winnowed keys sampled as coarsely; otherwise every key, an upper
    // bound of the matcher's two lookups), timed at the index alone, on the first 200 pages
    // (their text as stored: no site boilerplate blanked).
    let mut lookup_us = Vec::new();
    for page in pages.iter().take(200) {
        let Ok(analysis) = fp.analyze_text(&page.text, Default::default()) else { continue };
        let keys = analysis.fingerprints.index_keys();
        let t = Instant::now();
        if section_modulus > 1 {
            let winnowed = zhiwen_index::sample_winnowed_keys_only(keys, 1);
            let m = index.query_sample_modulus(0, winnowed.len()).max(section_modulus);
            let sampled = zhiwen_index::sample_winnowed_keys_only(winnowed, m);
            index.lookup_sampled(zhiwen_index::Namespace::Sections, &sampled, m).await?;
        } else {
            index.lookup(zhiwen_index::Namespace::Sections, &keys, candidate_limit).await?;
        }
        lookup_us.push(t.elapsed().as_secs_f64() * 1e6);
    }
    lookup_us.sort_by(f64::total_cmp);
    let pct = |p: f64| lookup_us.get(((lookup_us.len() as f64 * p) as usize).min(lookup_us.len().saturating_sub(1)));
    if let (Some(p50), Some(p99)) = (pct(0.50), pct(0.99)) {
        println!(
            "section lookup of one page ({} pages): p50 {:.2} ms, p99 {:.2} ms",
            lookup_us.len(),
            p50 / 1e3,
            p99 / 1e3
        );
    }
    // Peak resident memory since the catalogue's text was dropped (Linux: VmHWM of
    // /proc/self/status, reset then): the matcher's, with its index when it is embedded.
    println!("peak resident memory of the process while matching: {}", status_field("VmHWM"));
    Ok(())
}

/// A field of `/proc/self/status` (Linux), or "unknown".
fn status_field(name: &str) -> String {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| l.strip_prefix(name).and_then(|r| r.strip_prefix(':')).map(|r| r.trim().to_owned()))
        })
        .unwrap_or_else(|| "unknown".to_owned())
}

/// Reset the process's peak resident memory (`VmHWM`) to its current size (Linux:
/// `5` written to `/proc/self/clear_refs`); elsewhere nothing happens.
fn reset_peak_resident_memory() {
    if let Err(e) = std::fs::write("/proc/self/clear_refs", "5") {
        println!("peak resident memory not reset ({e}): the figure below includes registration");
    }
}

/// Run `free` (which frees memory) and return what it frees to the system: this bench
/// keeps freed memory (as `zhiwen`'s matching processes do), so a dropped catalogue would
/// stay resident. mimalloc purges memory as it is freed while the delay is 0 (memory freed
/// while purging is off is never purged later), so purging is on around `free` and one full
/// collection.
fn give_back_freed_memory(free: impl FnOnce()) {
    set_purge_delay(0);
    free();
    // SAFETY: a full collection; no precondition.
    unsafe { libmimalloc_sys::mi_collect(true) };
    keep_freed_memory();
}
