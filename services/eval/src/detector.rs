//! The seam to the system under evaluation, and the brute-force baseline.
//!
//! A [`Detector`] receives the registered works and the crawled pages and says which
//! pages copy which sections, with evidence located in the page. The matcher (store +
//! index + match) plugs in here; [`PairwiseDetector`] is the baseline that needs no
//! index: every page against every registered section with the core's
//! [`compare`](zhiwen_core::compare::compare).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use zhiwen_core::canon::InputFormat;
use zhiwen_core::compare::{compare, Comparison, Thresholds, VerdictKind};
use zhiwen_core::{Analysis, Fingerprinter, Params};

use crate::dataset::{Page, Work};
use crate::EvalError;

/// One reported copy: this page copies this section.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Detection {
    /// The page.
    pub page_id: String,
    /// The work.
    pub work_id: String,
    /// The section of the work.
    pub section_id: String,
    /// What kind of copy.
    pub kind: VerdictKind,
    /// Score in 0..=1 (higher: more certain); ranks detections of one page.
    pub score: f64,
    /// Copied passages as half-open character ranges of the page's decoded original.
    pub evidence: Vec<(usize, usize)>,
}

/// A fingerprint family, as far as the evaluation reports what each contributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Family {
    /// Simhash within Hamming distance k.
    Simhash,
    /// Pinyin-initial DNA segments shared.
    Dna,
    /// A mega-shingle (two super-shingles) equal.
    MegaShingle,
    /// An LSH band equal.
    LshBand,
    /// Winnowed pinyin-initial k-grams contained.
    WinnowInitials,
    /// Winnowed character k-grams contained.
    WinnowChars,
    /// Word-shingle containment.
    ShingleContainment,
    /// Evidence passages of at least `min_copied_chars` content characters.
    Passages,
}

impl Family {
    /// Every family, in report order.
    pub const ALL: [Family; 8] = [
        Family::Simhash,
        Family::Dna,
        Family::MegaShingle,
        Family::LshBand,
        Family::WinnowInitials,
        Family::WinnowChars,
        Family::ShingleContainment,
        Family::Passages,
    ];

    /// Short stable name.
    pub fn as_str(self) -> &'static str {
        match self {
            Family::Simhash => "simhash",
            Family::Dna => "dna",
            Family::MegaShingle => "mega",
            Family::LshBand => "lsh",
            Family::WinnowInitials => "winnow_initials",
            Family::WinnowChars => "winnow_chars",
            Family::ShingleContainment => "shingle_containment",
            Family::Passages => "passages",
        }
    }
}

/// The families that flagged one (page, section) pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FamilyHit {
    /// The page.
    pub page_id: String,
    /// The work.
    pub work_id: String,
    /// The section.
    pub section_id: String,
    /// Families that flagged (an index-based matcher: the families whose keys nominated
    /// the section as a candidate).
    pub families: Vec<Family>,
    /// Content characters of the page inside copied passages of the section (0 when
    /// the detector does not compute passages for candidates).
    #[serde(default)]
    pub copied_chars: usize,
}

/// Everything a detector reports.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct DetectorOutput {
    /// The copies found.
    pub detections: Vec<Detection>,
    /// Per-family flags of (page, section) pairs; empty when the detector cannot say.
    pub family_hits: Vec<FamilyHit>,
    /// Pages the detector could not process (id, reason).
    pub failures: Vec<(String, String)>,
}

/// The system under evaluation.
///
/// Synchronous on purpose: an async matcher runs inside its own runtime (`block_on`),
/// and the evaluation stays free of one.
pub trait Detector {
    /// Name for the report (e.g. `baseline: pairwise core comparison, no index`).
    fn name(&self) -> String;

    /// Register `works`, then process `pages` and report what they copy.
    fn detect(&mut self, works: &[Work], pages: &[Page]) -> Result<DetectorOutput, EvalError>;
}

/// When the families flag a pair (documented in `docs/evaluation.md`).
pub fn family_flags(c: &Comparison, params: &Params, t: &Thresholds) -> Vec<Family> {
    let mut f = Vec::new();
    if c.simhash_distance <= params.simhash.max_distance {
        f.push(Family::Simhash);
    }
    // Chance DNA containment between unrelated texts stays below 0.015 (docs/dna.md).
    if c.dna_score >= DNA_FLAG {
        f.push(Family::Dna);
    }
    if c.megashingle_match {
        f.push(Family::MegaShingle);
    }
    if c.lsh_candidate {
        f.push(Family::LshBand);
    }
    if c.winnow_containment_ab.max(c.winnow_containment_ba) >= t.containment {
        f.push(Family::WinnowInitials);
    }
    if c.winnow_chars_containment_ab.max(c.winnow_chars_containment_ba) >= t.containment {
        f.push(Family::WinnowChars);
    }
    if c.containment_ab.max(c.containment_ba) >= t.containment {
        f.push(Family::ShingleContainment);
    }
    if c.copied_chars >= t.min_copied_chars {
        f.push(Family::Passages);
    }
    f
}

/// DNA containment (either direction) at which the DNA family flags a pair.
pub const DNA_FLAG: f64 = 0.1;

/// The baseline: every page against every registered section with the core's `compare`.
///
/// Quadratic, so only for a few hundred works; it needs no store and no index, which
/// makes it the reference the matcher's results are compared with, and the tool to
/// tune [`Thresholds`]: with a sweep, every pair with any copied passage is compared
/// again under each threshold set.
#[derive(Debug)]
pub struct PairwiseDetector {
    params: Params,
    thresholds: Thresholds,
    sweep: Vec<Thresholds>,
    threads: usize,
    sweep_results: Vec<Vec<Detection>>,
}

impl PairwiseDetector {
    /// With the given parameters and thresholds, on all available cores.
    pub fn new(params: Params, thresholds: Thresholds) -> Self {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        PairwiseDetector { params, thresholds, sweep: Vec::new(), threads, sweep_results: Vec::new() }
    }

    /// Also decide every pair under each of these thresholds (see [`Self::sweep_results`]).
    ///
    /// Only pairs with at least one copied character (or identical canonical texts) are
    /// decided again, so a swept `min_copied_chars` must be at least 1.
    pub fn with_sweep(mut self, sweep: Vec<Thresholds>) -> Self {
        self.sweep = sweep;
        self
    }

    /// Number of worker threads.
    pub fn with_threads(mut self, threads: usize) -> Self {
        self.threads = threads.max(1);
        self
    }

    /// The thresholds.
    pub fn thresholds(&self) -> &Thresholds {
        &self.thresholds
    }

    /// After [`Detector::detect`]: the detections under each swept threshold set, in
    /// the order given to [`Self::with_sweep`].
    pub fn sweep_results(&self) -> Vec<(Thresholds, &[Detection])> {
        self.sweep.iter().cloned().zip(self.sweep_results.iter().map(Vec::as_slice)).collect()
    }
}

impl Default for PairwiseDetector {
    fn default() -> Self {
        PairwiseDetector::new(Params::default(), Thresholds::default())
    }
}

struct SectionAnalysis<'a> {
    work_id: &'a str,
    section_id: &'a str,
    analysis: Analysis,
}

/// Run `f` over `0..n` on `threads` threads; results in index order.
fn parallel<T: Send>(n: usize, threads: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = AtomicUsize::new(0);
    let out: Mutex<Vec<(usize, T)>> = Mutex::new(Vec::with_capacity(n));
    std::thread::scope(|s| {
        for _ in 0..threads.min(n.max(1)) {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= n {
                    break;
                }
                let r = f(i);
                if let Ok(mut o) = out.lock() {
                    o.push((i, r));
                }
            });
        }
    });
    let mut v = out.into_inner().unwrap_or_else(|e| e.into_inner());
    v.sort_by_key(|(i, _)| *i);
    v.into_iter().map(|(_, t)| t).collect()
}

struct PageResult {
    detections: Vec<Detection>,
    hits: Vec<FamilyHit>,
    sweep: Vec<Vec<Detection>>,
    failure: Option<String>,
}

fn detection(page: &Page, s: &SectionAnalysis, c: &Comparison) -> Detection {
    Detection {
        page_id: page.id.clone(),
        work_id: s.work_id.to_owned(),
        section_id: s.section_id.to_owned(),
        kind: c.verdict.kind,
        score: c.verdict.score,
        evidence: c.evidence.iter().map(|e| (e.a_start, e.a_end)).collect(),
    }
}

impl Detector for PairwiseDetector {
    fn name(&self) -> String {
        "baseline: pairwise core comparison, no index".into()
    }

    fn detect(&mut self, works: &[Work], pages: &[Page]) -> Result<DetectorOutput, EvalError> {
        let fp = Fingerprinter::new(self.params.clone())
            .map_err(|source| EvalError::Core { what: "parameters".into(), source })?;
        let refs: Vec<(&Work, &crate::dataset::Section)> =
            works.iter().flat_map(|w| w.sections.iter().map(move |s| (w, s))).collect();
        let analysed = parallel(refs.len(), self.threads, |i| {
            let (w, s) = refs[i];
            fp.analyze_text(&s.text, InputFormat::Text)
                .map(|analysis| SectionAnalysis { work_id: &w.id, section_id: &s.id, analysis })
                .map_err(|source| EvalError::Core { what: format!("section {}", s.id), source })
        });
        let sections: Vec<SectionAnalysis> = analysed.into_iter().collect::<Result<_, _>>()?;
        let (params, thresholds, sweep) = (&self.params, &self.thresholds, &self.sweep);
        let results = parallel(pages.len(), self.threads, |i| {
            let page = &pages[i];
            let mut r = PageResult {
                detections: Vec::new(),
                hits: Vec::new(),
                sweep: vec![Vec::new(); sweep.len()],
                failure: None,
            };
            let a = match fp.analyze_bytes(&page.bytes, InputFormat::Html, page.http_charset.as_deref()) {
                Ok(a) => a,
                Err(e) => {
                    r.failure = Some(e.to_string());
                    return r;
                }
            };
            for s in &sections {
                let c = compare(&a, &s.analysis, params, thresholds);
                let families = family_flags(&c, params, thresholds);
                if !families.is_empty() {
                    r.hits.push(FamilyHit {
                        page_id: page.id.clone(),
                        work_id: s.work_id.to_owned(),
                        section_id: s.section_id.to_owned(),
                        families,
                        copied_chars: c.copied_chars,
                    });
                }
                if c.verdict.duplicate {
                    r.detections.push(detection(page, s, &c));
                }
                if c.copied_chars > 0 || c.verdict.kind == VerdictKind::Identical {
                    for (k, t) in sweep.iter().enumerate() {
                        let c = compare(&a, &s.analysis, params, t);
                        if c.verdict.duplicate {
                            r.sweep[k].push(detection(page, s, &c));
                        }
                    }
                }
            }
            r
        });
        let mut out = DetectorOutput::default();
        self.sweep_results = vec![Vec::new(); sweep.len()];
        for (page, r) in pages.iter().zip(results) {
            out.detections.extend(r.detections);
            out.family_hits.extend(r.hits);
            if let Some(f) = r.failure {
                out.failures.push((page.id.clone(), f));
            }
            for (acc, d) in self.sweep_results.iter_mut().zip(r.sweep) {
                acc.extend(d);
            }
        }
        Ok(out)
    }
}
