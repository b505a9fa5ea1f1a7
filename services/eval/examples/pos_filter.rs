//! Does dropping adjectives (jieba part-of-speech tags `a*`) before the word-level
//! fingerprints help? ALGORITHMS.md section 0 step 4 asks to measure it before making it
//! a default. Runs the baseline detector on the same labelled set twice, with
//! `segment.drop_adjectives` off (the default) and on, and prints the overall metrics and
//! the word-level families (resemblance, containment, simhash, MinHash) side by side,
//! plus the segmentation speed of both (MiB per CPU-second of this thread).
//!
//! ```text
//! cargo run --release -p zhiwen-eval --example pos_filter -- [--seed N] [--threads N] [--pages N] [--negatives N]
//! ```
//!
//! Results: docs/evaluation.md ("Part-of-speech filtering").

use std::hint::black_box;
use std::process::ExitCode;

use zhiwen_core::compare::Thresholds;
use zhiwen_core::params::SegmentParams;
use zhiwen_core::{segment, Params};
use zhiwen_eval::{evaluate, EvalError, EvalOptions, PairwiseDetector};

fn thread_cpu_seconds() -> f64 {
    std::fs::read_to_string("/proc/thread-self/schedstat")
        .ok()
        .and_then(|s| s.split_whitespace().next().and_then(|v| v.parse::<u64>().ok()))
        .map_or(0.0, |ns| ns as f64 / 1e9)
}

/// Median of three: MiB of `text` segmented per CPU-second.
fn segment_rate(text: &str, params: &SegmentParams) -> f64 {
    let mut rates = Vec::new();
    for _ in 0..3 {
        let start = thread_cpu_seconds();
        let mut n = 0u64;
        while thread_cpu_seconds() - start < 1.0 {
            black_box(segment::segment(black_box(text), params));
            n += 1;
        }
        rates.push(n as f64 * text.len() as f64 / (thread_cpu_seconds() - start) / (1 << 20) as f64);
    }
    rates.sort_by(|a, b| a.total_cmp(b));
    rates[1]
}

fn run(seed: u64, threads: Option<usize>, pages: Option<usize>, negatives: Option<usize>) -> Result<(), EvalError> {
    let mut opts = EvalOptions::default_set(seed);
    // Smaller sets for a quick look: positive pages per class, negative pages per class.
    if let Some(n) = pages {
        opts.dataset.pages_per_class = n;
    }
    if let Some(n) = negatives {
        opts.dataset.negatives_per_class = n;
    }
    let dataset = opts.build_dataset()?;
    println!(
        "set: seed {seed}, {} positive and {} negative pages per class",
        opts.dataset.pages_per_class, opts.dataset.negatives_per_class
    );
    println!("| setting | precision | recall | lowest class recall | negative pages flagged | evidence | simhash recall / neg. flag rate | mega-shingle | LSH band | shingle containment | detection s |");
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for drop in [false, true] {
        let mut params = Params::default();
        params.segment.drop_adjectives = drop;
        let mut detector = PairwiseDetector::new(params, Thresholds::default());
        if let Some(n) = threads {
            detector = detector.with_threads(n);
        }
        let (report, _) = evaluate(&dataset, &mut detector)?;
        let o = &report.metrics.overall;
        let fam = |name: &str| {
            report
                .metrics
                .families
                .iter()
                .find(|f| f.family == name)
                .map_or("-".to_string(), |f| format!("{:.3} / {:.3}", f.recall, f.negative_flag_rate))
        };
        let f = |v: Option<f64>| v.map_or("-".to_string(), |v| format!("{v:.3}"));
        println!(
            "| drop_adjectives = {drop} | {} | {} | {} | {} of {} | {} | {} | {} | {} | {} | {:.0} |",
            f(o.precision),
            f(o.recall),
            f(o.min_class_recall),
            o.false_positive_pages,
            o.negative_pages,
            f(o.evidence_coverage),
            fam("simhash"),
            fam("mega"),
            fam("lsh"),
            fam("shingle_containment"),
            report.detection_secs
        );
    }
    // Segmentation speed on the registered texts (canonical text of the works).
    let text: String =
        dataset.works.iter().flat_map(|w| &w.sections).map(|s| s.text.as_str()).collect::<Vec<_>>().join("\n");
    let text: String = text.chars().take(300_000).collect();
    segment::warm_up();
    let off = segment_rate(&text, &SegmentParams::default());
    let on = segment_rate(&text, &SegmentParams { drop_adjectives: true, ..SegmentParams::default() });
    println!("\nsegmentation of {} bytes: {off:.1} MiB/cpu-s without tagging, {on:.1} MiB/cpu-s with `tag` + adjective filter", text.len());
    Ok(())
}

fn main() -> ExitCode {
    let mut seed = 1;
    let mut threads = None;
    let (mut pages, mut negatives) = (None, None);
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        match (a.as_str(), args.next().and_then(|v| v.parse::<u64>().ok())) {
            ("--seed", Some(v)) => seed = v,
            ("--threads", Some(v)) => threads = Some(v as usize),
            ("--pages", Some(v)) => pages = Some(v as usize),
            ("--negatives", Some(v)) => negatives = Some(v as usize),
            _ => {
                eprintln!("usage: pos_filter [--seed N] [--threads N] [--pages N] [--negatives N]");
                return ExitCode::from(2);
            }
        }
    }
    match run(seed, threads, pages, negatives) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("pos_filter: {e}");
            ExitCode::FAILURE
        }
    }
}
