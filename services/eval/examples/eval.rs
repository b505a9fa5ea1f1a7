//! Run the evaluation with the baseline detector (every page against every registered
//! section with the core's `compare`, no index) and print the tables.
//!
//! ```text
//! cargo run --release -p zhiwen-eval --example eval -- [--large] [--seed N] [--json OUT] [--no-sweep] [--threads N] [--explain]
//! ```
//!
//! `--explain` also lists every missed copy, every false detection, and the negative pages
//! on which the core found copied passages (with the passages), to see why.
//!
//! The corpus is `$ZHIWEN_CORPUS_DIR`, else the test corpus (`.test-corpus/`, see `tests/corpus/README.md`).

use std::process::ExitCode;

use zhiwen_core::canon::InputFormat;
use zhiwen_core::compare::{compare, Thresholds};
use zhiwen_core::{Fingerprinter, Params};
use zhiwen_eval::dataset::{Dataset, Page, PageClass};
use zhiwen_eval::{
    default_sweep, evaluate, sweep_rows, DetectorOutput, EvalError, EvalOptions, Family, PairwiseDetector,
};

struct Args {
    large: bool,
    seed: u64,
    json: Option<String>,
    sweep: bool,
    threads: Option<usize>,
    explain: bool,
}

fn parse() -> Result<Args, String> {
    let mut a = Args { large: false, seed: 1, json: None, sweep: true, threads: None, explain: false };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        match arg.as_str() {
            "--large" => a.large = true,
            "--no-sweep" => a.sweep = false,
            "--explain" => a.explain = true,
            "--seed" => a.seed = it.next().and_then(|v| v.parse().ok()).ok_or("--seed needs a number")?,
            "--threads" => a.threads = Some(it.next().and_then(|v| v.parse().ok()).ok_or("--threads needs a number")?),
            "--json" => a.json = Some(it.next().ok_or("--json needs a path")?),
            other => return Err(format!("unknown argument {other}")),
        }
    }
    Ok(a)
}

fn run(args: Args) -> Result<(), EvalError> {
    let opts = if args.large { EvalOptions::large(args.seed) } else { EvalOptions::default_set(args.seed) };
    let t = std::time::Instant::now();
    let dataset = opts.build_dataset()?;
    let generation_secs = t.elapsed().as_secs_f64();
    let base = Thresholds::default();
    let sweep = if args.sweep { default_sweep(&base) } else { Vec::new() };
    let labels: Vec<String> = sweep.iter().map(|(l, _)| l.clone()).collect();
    let mut detector =
        PairwiseDetector::new(Params::default(), base).with_sweep(sweep.into_iter().map(|(_, t)| t).collect());
    if let Some(n) = args.threads {
        detector = detector.with_threads(n);
    }
    let (mut report, output) = evaluate(&dataset, &mut detector)?;
    report.generation_secs = generation_secs;
    report.sweep = sweep_rows(&dataset, &detector, &labels);
    println!("{report}");
    if args.explain {
        explain(&dataset, &output, &detector)?;
    }
    if let Some(path) = args.json {
        let json = serde_json::to_string_pretty(&report).map_err(|e| EvalError::Detector(e.to_string()))?;
        std::fs::write(&path, json).map_err(|source| EvalError::Io { path: path.into(), source })?;
    }
    Ok(())
}

fn main() -> ExitCode {
    let args = match parse() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("eval: {e}");
            return ExitCode::from(2);
        }
    };
    match run(args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("eval: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Print what went wrong, page by page.
fn explain(dataset: &Dataset, output: &DetectorOutput, detector: &PairwiseDetector) -> Result<(), EvalError> {
    let quote = |page: &Page, (s, e): (usize, usize)| -> String {
        let t: String = page.html.chars().skip(s).take((e - s).min(60)).collect();
        t.replace('\n', " ")
    };
    println!("\n### Missed copies\n");
    for page in dataset.pages.iter().filter(|p| p.label.is_some()) {
        let Some(label) = &page.label else { continue };
        if !output.detections.iter().any(|d| d.page_id == page.id && d.work_id == label.work_id) {
            println!(
                "- {} {:?}: section {} share {:.2}, {} copied chars",
                page.id, page.transforms, label.section_id, label.section_share, label.copied_chars
            );
        }
    }
    println!("\n### False detections\n");
    for d in &output.detections {
        let Some(page) = dataset.pages.iter().find(|p| p.id == d.page_id) else { continue };
        if page.label.as_ref().is_some_and(|l| l.section_id == d.section_id) {
            continue;
        }
        println!("- {} -> {} ({:?}, score {:.3})", page.id, d.section_id, d.kind, d.score);
        for &r in &d.evidence {
            println!("  - `{}`", quote(page, r));
        }
    }
    println!("\n### Negative pages with copied passages (copied_chars >= min_copied_chars), largest 5 per class\n");
    let fp =
        Fingerprinter::new(Params::default()).map_err(|source| EvalError::Core { what: "params".into(), source })?;
    let mut shown = 0;
    let mut hits: Vec<(&Page, &zhiwen_eval::FamilyHit)> = output
        .family_hits
        .iter()
        .filter(|h| h.families.contains(&Family::Passages))
        .filter_map(|h| dataset.pages.iter().find(|p| p.id == h.page_id && p.label.is_none()).map(|p| (p, h)))
        .collect();
    hits.sort_by(|a, b| a.0.class.cmp(&b.0.class).then(b.1.copied_chars.cmp(&a.1.copied_chars)));
    let mut per_class: std::collections::HashMap<PageClass, usize> = std::collections::HashMap::new();
    for (page, h) in hits {
        shown += 1;
        let n = per_class.entry(page.class).or_default();
        *n += 1;
        if *n > 5 {
            continue;
        }
        let Some((_, section)) = dataset.section(&h.section_id) else { continue };
        let a = fp
            .analyze_bytes(&page.bytes, InputFormat::Html, page.http_charset.as_deref())
            .map_err(|source| EvalError::Core { what: page.id.clone(), source })?;
        let b = fp
            .analyze_text(&section.text, InputFormat::Text)
            .map_err(|source| EvalError::Core { what: section.id.clone(), source })?;
        let c = compare(&a, &b, &Params::default(), detector.thresholds());
        println!("- {} vs {}: copied_chars {}, verdict {:?}", page.id, section.id, c.copied_chars, c.verdict.kind);
        for e in &c.evidence {
            println!("  - `{}`", e.a_text.chars().take(60).collect::<String>().replace('\n', " "));
        }
    }
    println!("({shown} pairs)");
    Ok(())
}
