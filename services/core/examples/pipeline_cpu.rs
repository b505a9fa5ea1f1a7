//! Pipeline throughput in bytes per CPU-second of this thread, robust to a loaded machine.
//!
//! Wall-clock benchmarks (criterion) are skewed when other processes share the cores;
//! the CPU time the kernel charges to this thread is not (apart from cache effects). For
//! each stage and for the whole pipeline this runs the work repeatedly for about
//! `--seconds` of CPU time, three times, and prints the median MiB per CPU-second.
//!
//! Run: `cargo run --release -p zhiwen-core --example pipeline_cpu -- [--seconds 2] [--only full]`
//! Input: the first ~1 MB of `novels_classics.jsonl` (`ZHIWEN_CORPUS_DIR`, default
//! the test corpus, `.test-corpus/`), like the criterion benchmark.
//! Results: docs/benchmarks.md (pipeline section).

use std::hint::black_box;

use zhiwen_core::canon::{self, InputFormat};
use zhiwen_core::initials::InitialStream;
use zhiwen_core::minhash::{self, MinHasher};
use zhiwen_core::params::Params;
use zhiwen_core::{dna, segment, shingle, simhash, winnow, Fingerprinter};

#[path = "../benches/common/mod.rs"]
mod common;
use common::novel_text;

/// CPU time charged to the calling thread, in seconds (Linux `schedstat`, nanoseconds;
/// falls back to the process's user+sys clock ticks).
fn thread_cpu_seconds() -> f64 {
    if let Ok(s) = std::fs::read_to_string("/proc/thread-self/schedstat") {
        if let Some(ns) = s.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()) {
            return ns as f64 / 1e9;
        }
    }
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    let after = stat.rsplit(')').next().unwrap_or("");
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks = |i: usize| fields.get(i).and_then(|v| v.parse::<u64>().ok()).unwrap_or(0);
    // Fields 14 and 15 of stat (utime, stime) are 11 and 12 after the command name.
    (ticks(11) + ticks(12)) as f64 / 100.0
}

/// Median of three runs of `f` repeated for `seconds` of CPU time: MiB per CPU-second.
fn measure(name: &str, bytes: usize, seconds: f64, mut f: impl FnMut()) {
    f();
    let mut rates = Vec::new();
    for _ in 0..3 {
        let start = thread_cpu_seconds();
        let mut n = 0u64;
        loop {
            f();
            n += 1;
            let spent = thread_cpu_seconds() - start;
            if spent >= seconds {
                rates.push(n as f64 * bytes as f64 / spent / (1 << 20) as f64);
                break;
            }
        }
    }
    rates.sort_by(|a, b| a.total_cmp(b));
    println!("{name:<40} {:>8.1} MiB/cpu-s   (runs {:.1} / {:.1} / {:.1})", rates[1], rates[0], rates[1], rates[2]);
}

fn main() {
    let mut seconds = 2.0;
    let mut only: Option<String> = None;
    let mut once = false;
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match a.as_str() {
            "--seconds" => seconds = args.next().and_then(|v| v.parse().ok()).unwrap_or(seconds),
            "--only" => only = args.next(),
            // One full-pipeline call and exit: for `valgrind --tool=callgrind
            // --toggle-collect='*analyze_bytes*'` (instructions per byte).
            "--once" => once = true,
            other => {
                eprintln!("unknown argument {other}; usage: pipeline_cpu [--seconds S] [--only NAME] [--once]");
                std::process::exit(2);
            }
        }
    }
    let text = novel_text();
    let bytes = text.as_bytes();
    let n = bytes.len();
    let params = Params::default();
    segment::warm_up();
    let fp = Fingerprinter::new(params.clone()).expect("default params");
    let analysis = fp.analyze_text(&text, InputFormat::Text).expect("analysable");
    let canonical = analysis.canonical.text().to_owned();
    let tokens = segment::segment(&canonical, &params.segment);
    let letters = analysis.initials.letters.clone();
    let shingles = analysis.fingerprints.shingles.clone();
    let units: Vec<u32> = letters.iter().map(|&l| l as u32).collect();
    let hasher = MinHasher::new(params.minhash.functions);
    if once {
        black_box(fp.analyze_bytes(black_box(bytes), InputFormat::Text, None).ok());
        println!("one full-pipeline call on {n} bytes");
        return;
    }
    println!("input: {n} bytes of UTF-8 novel text; {} tokens, {} shingles", tokens.len(), shingles.len());
    let run = |name: &str| only.as_deref().is_none_or(|o| name.contains(o));

    if run("canonicalize") {
        measure("canonicalize", n, seconds, || {
            black_box(canon::canonicalize(black_box(bytes), InputFormat::Text, &params.canon).ok());
        });
    }
    if run("jieba") {
        let jieba = jieba_rs::Jieba::new();
        measure("jieba cut alone (reference)", n, seconds, || {
            black_box(jieba.cut(black_box(&canonical), false).len());
        });
        // A line at a time, as `segment` calls it: the same words (a line break is never
        // part of one), with each call's token list small and in cache. The pipeline's own
        // share of jieba is this one.
        measure("jieba cut alone, line by line (reference)", n, seconds, || {
            let words: usize =
                canonical.split_inclusive('\n').map(|line| jieba.cut(black_box(line), false).len()).sum();
            black_box(words);
        });
        // The first 2,500 characters, as "full pipeline, 7 KB page" below: cut again and
        // again, a page's words stay in the caches, so both run far faster than on 1 MB.
        let page: String = canonical.chars().take(2500).collect();
        measure("jieba cut alone, 7 KB page (reference)", page.len(), seconds, || {
            black_box(jieba.cut(black_box(&page), false).len());
        });
    }
    if run("segment") {
        measure("segment (jieba once + filter + hashes)", n, seconds, || {
            black_box(segment::segment(black_box(&canonical), &params.segment));
        });
    }
    if run("initials") {
        measure("initial stream with positions", n, seconds, || {
            black_box(InitialStream::of(black_box(&canonical)));
        });
    }
    if run("dna") {
        measure("dna", n, seconds, || {
            black_box(dna::dna_fingerprint(black_box(&letters), &params.dna, dna::ReferenceFrame::builtin()));
        });
    }
    if run("simhash") {
        measure("simhash", n, seconds, || {
            black_box(simhash::simhash(black_box(&tokens)));
        });
    }
    if run("shingles") {
        measure("shingles", n, seconds, || {
            black_box(shingle::shingles(black_box(&tokens), params.shingle.width));
        });
    }
    if run("minhash") {
        measure("minhash + super/mega + lsh", n, seconds, || {
            let sig = hasher.signature(black_box(&shingles));
            let supers = minhash::super_shingles(&sig, params.minhash.super_shingles);
            black_box((
                minhash::mega_shingles(&supers),
                minhash::lsh_bands(&sig, params.minhash.bands, params.minhash.rows),
            ));
        });
    }
    if run("winnow") {
        measure("winnow initials", n, seconds, || {
            black_box(winnow::winnow(black_box(&units), params.winnow.initials_k, params.winnow.initials_window));
        });
    }
    if run("full") {
        measure("full pipeline (bytes in, fingerprints out)", n, seconds, || {
            black_box(fp.analyze_bytes(black_box(bytes), InputFormat::Text, None).ok());
        });
        let page: String = text.chars().take(2500).collect();
        measure("full pipeline, 7 KB page", page.len(), seconds, || {
            black_box(fp.analyze_bytes(black_box(page.as_bytes()), InputFormat::Text, None).ok());
        });
    }
}
