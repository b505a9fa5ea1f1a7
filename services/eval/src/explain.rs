//! What went wrong, pair by pair: the missed copies and the false detections of a
//! detector's output, each with the core's own comparison of the pair (copied
//! characters, containment both ways, verdict) and the families that nominated it.
//!
//! `zhiwen eval --explain` prints it after the report, so a reader can see *why* a copy
//! is missed (too short, below a threshold, never a candidate, or only text common to
//! many sections of the catalogue) or a page is accused (which passage it shares with
//! the section).

use std::fmt::Write as _;

use zhiwen_core::canon::InputFormat;
use zhiwen_core::compare::{compare, Comparison, Thresholds};
use zhiwen_core::{Analysis, Fingerprinter, Params};

use crate::dataset::{Dataset, Page, Section};
use crate::{DetectorOutput, EvalError, Family};

/// Decides a comparison again as the detector's catalogue rule does (section, page);
/// `true` when the verdict changed. The core has no catalogue: the detector supplies it.
pub type CatalogueRule<'a> = &'a dyn Fn(&mut Comparison, &Analysis, &Analysis) -> bool;

/// Markdown lists of the missed copies and the false detections of `output` on `dataset`;
/// each pair compared as the detector decides it, `catalogue` rule included.
pub fn explain(
    dataset: &Dataset,
    output: &DetectorOutput,
    params: &Params,
    thresholds: &Thresholds,
    catalogue: CatalogueRule<'_>,
) -> Result<String, EvalError> {
    let fp = Fingerprinter::new(params.clone()).map_err(|source| EvalError::Core { what: "params".into(), source })?;
    let pair = |page: &Page, section: &Section| -> Result<(Comparison, bool), EvalError> {
        let a = fp
            .analyze_text(&section.text, InputFormat::Text)
            .map_err(|source| EvalError::Core { what: section.id.clone(), source })?;
        let b = fp
            .analyze_bytes(&page.bytes, InputFormat::Html, page.http_charset.as_deref())
            .map_err(|source| EvalError::Core { what: page.id.clone(), source })?;
        let mut c = compare(&a, &b, params, thresholds);
        let discounted = catalogue(&mut c, &a, &b);
        Ok((c, discounted))
    };
    let families = |page: &str, section: &str| -> String {
        let f: Vec<&str> = output
            .family_hits
            .iter()
            .filter(|h| h.page_id == page && h.section_id == section)
            .flat_map(|h| h.families.iter().map(|f| f.as_str()))
            .collect();
        if f.is_empty() {
            "none (never a candidate)".into()
        } else {
            f.join(", ")
        }
    };
    let quote = |s: &str| -> String { s.chars().take(60).collect::<String>().replace(['\n', '\r'], " ") };
    let describe = |(c, discounted): &(Comparison, bool)| {
        let rule =
            if *discounted { " after the catalogue rule (most copied text is common to many sections)" } else { "" };
        format!(
            "copied_chars {} ({} distinct), containment section->page {:.3} (words {:.3}, initials {:.3}, evidence {:.3}), page->section {:.3}, verdict {}{rule} (score {:.3})",
            c.copied_chars,
            c.distinct_copied_chars,
            c.a_inside_b(),
            c.containment_ab,
            c.winnow_containment_ab,
            c.evidence_coverage_a,
            c.b_inside_a(),
            c.verdict.kind.as_str(),
            c.verdict.score
        )
    };
    let mut out = String::new();
    let _ = writeln!(out, "\n### Missed copies\n");
    for page in &dataset.pages {
        let Some(label) = &page.label else { continue };
        if output.detections.iter().any(|d| d.page_id == page.id && d.work_id == label.work_id) {
            continue;
        }
        let Some((_, section)) = dataset.section(&label.section_id) else { continue };
        let c = pair(page, section)?;
        let _ = writeln!(
            out,
            "- {} {:?} ({} chars of {}, share {:.2}): families {}; {}",
            page.id,
            page.transforms,
            label.copied_chars,
            label.section_id,
            label.section_share,
            families(&page.id, &label.section_id),
            describe(&c)
        );
    }
    let _ = writeln!(out, "\n### False detections\n");
    for d in &output.detections {
        let Some(page) = dataset.pages.iter().find(|p| p.id == d.page_id) else { continue };
        if page.label.as_ref().is_some_and(|l| l.section_id == d.section_id) {
            continue;
        }
        let Some((_, section)) = dataset.section(&d.section_id) else { continue };
        let c = pair(page, section)?;
        let truth = page.label.as_ref().map_or("negative".to_owned(), |l| format!("copies {}", l.section_id));
        let _ = writeln!(
            out,
            "- {} ({truth}) -> {} ({}, score {:.3}): families {}; {}",
            page.id,
            d.section_id,
            d.kind.as_str(),
            d.score,
            families(&page.id, &d.section_id),
            describe(&c)
        );
        for e in &c.0.evidence {
            let _ = writeln!(out, "  - {} chars: `{}`", e.chars, quote(&e.a_text));
        }
        for line in zhiwen_core::formulaic::render(&c.0.explanation, zhiwen_core::formulaic::Lang::En) {
            let _ = writeln!(out, "  - why: {line}");
        }
    }
    let mut near: Vec<_> = output
        .family_hits
        .iter()
        .filter(|h| h.families.contains(&Family::Passages) && h.copied_chars > 0)
        .filter(|h| dataset.pages.iter().any(|p| p.id == h.page_id && p.label.is_none()))
        .collect();
    near.sort_by_key(|h| std::cmp::Reverse(h.copied_chars));
    let _ = writeln!(out, "\n### Negative pages sharing the most with a section (largest 10)\n");
    for h in near.iter().take(10) {
        let _ = writeln!(out, "- {} vs {}: {} copied chars", h.page_id, h.section_id, h.copied_chars);
    }
    Ok(out)
}
