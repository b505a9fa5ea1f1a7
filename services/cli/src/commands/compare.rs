//! `zhiwen compare A B [--json]`: every measure, the verdict, the copied passages.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;
use zhiwen_core::compare::{compare, Comparison, Thresholds};

use crate::cli::CompareArgs;
use crate::input;

/// The JSON contract: the comparison's fields at the top level, plus the two documents.
#[derive(Serialize)]
struct JsonOutput<'a> {
    /// Name and major version of this contract; fields are only added within a version.
    contract: &'static str,
    a: DocInfo<'a>,
    b: DocInfo<'a>,
    #[serde(flatten)]
    comparison: &'a Comparison,
}

#[derive(Serialize)]
struct DocInfo<'a> {
    file: String,
    charset: &'a str,
    format: zhiwen_core::canon::InputFormat,
    chars: usize,
}

pub fn run(args: &CompareArgs) -> Result<()> {
    let fp = input::fingerprinter(&args.pipeline)?;
    let a = input::analyze_file(&fp, &args.a, &args.pipeline)?;
    let b = input::analyze_file(&fp, &args.b, &args.pipeline)?;
    let c = compare(&a, &b, fp.params(), &Thresholds::default());
    let info = |path: &std::path::Path, x: &'_ zhiwen_core::Analysis| DocInfo {
        file: path.display().to_string(),
        charset: x.canonical.charset(),
        format: x.canonical.format(),
        chars: x.canonical.original().chars().count(),
    };
    let mut out = std::io::stdout().lock();
    if args.json {
        let json =
            JsonOutput { contract: "zhiwen.compare/1", a: info(&args.a, &a), b: info(&args.b, &b), comparison: &c };
        serde_json::to_writer_pretty(&mut out, &json)?;
        writeln!(out)?;
        return Ok(());
    }
    let (ia, ib) = (info(&args.a, &a), info(&args.b, &b));
    writeln!(out, "A  {}  ({}, {} chars)", ia.file, ia.charset, ia.chars)?;
    writeln!(out, "B  {}  ({}, {} chars)", ib.file, ib.charset, ib.chars)?;
    writeln!(out)?;
    let v = &c.verdict;
    let meaning = match v.kind {
        zhiwen_core::compare::VerdictKind::Identical => "the texts are identical after normalisation",
        zhiwen_core::compare::VerdictKind::NearDuplicate => "most of each text appears in the other",
        zhiwen_core::compare::VerdictKind::AWithinB => "A (or most of it) appears inside B",
        zhiwen_core::compare::VerdictKind::BWithinA => "B (or most of it) appears inside A",
        zhiwen_core::compare::VerdictKind::Unrelated => "no copy found",
    };
    writeln!(out, "verdict  {}  (score {:.2}): {meaning}", v.kind.as_str(), v.score)?;
    writeln!(out)?;
    let rows: [(&str, String, &str); 12] = [
        ("resemblance", pct(c.resemblance), "word 4-shingles, Jaccard"),
        ("containment A in B", pct(c.containment_ab), "share of A's shingles found in B"),
        ("containment B in A", pct(c.containment_ba), "share of B's shingles found in A"),
        ("dice", pct(c.dice), "2|A∩B| / (|A|+|B|)"),
        (
            "simhash distance",
            format!("{} bits", c.simhash_distance),
            if c.simhash_near { "near-duplicate (≤ k)" } else { "" },
        ),
        ("dna score", pct(c.dna_score), "pinyin-initial segments in common"),
        ("minhash similarity", pct(c.minhash_similarity), "estimated Jaccard from 84 minima"),
        ("super-shingles equal", format!("{} of 6", c.super_shingle_matches), ""),
        ("mega-shingle match", yes_no(c.megashingle_match), "≥ 2 super-shingles"),
        ("lsh candidate", yes_no(c.lsh_candidate), "one LSH band equal"),
        ("winnow A in B", pct(c.winnow_containment_ab), "pinyin-initial k-grams (homophone-proof)"),
        ("winnow B in A", pct(c.winnow_containment_ba), ""),
    ];
    for (name, value, note) in rows {
        writeln!(out, "  {name:<22} {value:>9}  {note}")?;
    }
    writeln!(out)?;
    writeln!(
        out,
        "evidence: {} passage(s), covering {} of A and {} of B",
        c.evidence.len(),
        pct(c.evidence_coverage_a),
        pct(c.evidence_coverage_b)
    )?;
    for (i, e) in c.evidence.iter().take(args.max_passages).enumerate() {
        writeln!(out)?;
        writeln!(out, "  #{}  A[{}..{})  B[{}..{})", i + 1, e.a_start, e.a_end, e.b_start, e.b_end)?;
        writeln!(out, "    A: {}", preview(&e.a_text))?;
        writeln!(out, "    B: {}", preview(&e.b_text))?;
    }
    if c.evidence.len() > args.max_passages {
        writeln!(out, "\n  … {} more (use --max-passages or --json)", c.evidence.len() - args.max_passages)?;
    }
    Ok(())
}

fn pct(v: f64) -> String {
    format!("{:.1}%", v * 100.0)
}

fn yes_no(b: bool) -> String {
    if b { "yes" } else { "no" }.to_string()
}

/// One line, at most 80 characters, for the table.
fn preview(s: &str) -> String {
    let flat: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut out: String = flat.chars().take(80).collect();
    if flat.chars().count() > 80 {
        out.push('…');
    }
    out
}
