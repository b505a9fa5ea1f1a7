//! One evaluation run: the set, the detector's scores, optionally a threshold sweep.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;
use std::time::Instant;

use serde::{Deserialize, Serialize};
use zhiwen_core::compare::Thresholds;

use crate::dataset::{Dataset, DatasetConfig, DatasetNotes, WorkKind};
use crate::detector::{Detector, DetectorOutput, PairwiseDetector};
use crate::metrics::{self, fmt_opt, Metrics};
use crate::{corpus, EvalError};

/// What to evaluate on.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvalOptions {
    /// Corpus directory; `None`: [`corpus::locate`].
    pub corpus_dir: Option<PathBuf>,
    /// The set to build.
    pub dataset: DatasetConfig,
}

impl EvalOptions {
    /// The default set with this seed.
    pub fn default_set(seed: u64) -> Self {
        EvalOptions { corpus_dir: None, dataset: DatasetConfig::default_set(seed) }
    }

    /// The large set with this seed.
    pub fn large(seed: u64) -> Self {
        EvalOptions { corpus_dir: None, dataset: DatasetConfig::large(seed) }
    }

    /// Build the set.
    pub fn build_dataset(&self) -> Result<Dataset, EvalError> {
        let dir = match &self.corpus_dir {
            Some(d) => d.clone(),
            None => corpus::locate()?,
        };
        Dataset::generate(&dir, &self.dataset)
    }
}

/// What the set holds.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct DatasetSummary {
    /// How it was made.
    pub config: Option<DatasetConfig>,
    /// Registered works.
    pub works: usize,
    /// Registered sections of novels.
    pub novel_sections: usize,
    /// Registered news stories.
    pub news_sections: usize,
    /// Pages per class.
    pub pages: BTreeMap<String, usize>,
    /// Pages per charset.
    pub charsets: BTreeMap<String, usize>,
    /// Generation notes.
    pub notes: DatasetNotes,
}

impl DatasetSummary {
    /// Summarise a set.
    pub fn of(d: &Dataset) -> Self {
        let count = |k| d.works.iter().filter(|w| w.kind == k).map(|w| w.sections.len()).sum();
        let mut pages = BTreeMap::new();
        let mut charsets = BTreeMap::new();
        for p in &d.pages {
            *pages.entry(p.class.as_str().to_owned()).or_insert(0) += 1;
            *charsets.entry(p.charset.clone()).or_insert(0) += 1;
        }
        DatasetSummary {
            config: Some(d.config.clone()),
            works: d.works.len(),
            novel_sections: count(WorkKind::Novel),
            news_sections: count(WorkKind::News),
            pages,
            charsets,
            notes: d.notes.clone(),
        }
    }
}

/// One point of a threshold sweep.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    /// The thresholds.
    pub thresholds: Thresholds,
    /// Which parameter this row varies (`default` for the defaults).
    pub varied: String,
    /// The scores.
    pub metrics: Metrics,
}

/// The result of an evaluation.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct EvalReport {
    /// Detector name.
    pub detector: String,
    /// The set.
    pub dataset: DatasetSummary,
    /// Scores.
    pub metrics: Metrics,
    /// Seconds to build the set.
    pub generation_secs: f64,
    /// Seconds the detector took.
    pub detection_secs: f64,
    /// Threshold sweep (baseline only).
    pub sweep: Vec<SweepRow>,
}

/// Build the set of `opts` and evaluate `detector` on it (what `zhiwen eval` runs).
pub fn run_eval(opts: &EvalOptions, detector: &mut dyn Detector) -> Result<EvalReport, EvalError> {
    let t = Instant::now();
    let dataset = opts.build_dataset()?;
    let generation_secs = t.elapsed().as_secs_f64();
    let (mut report, _) = evaluate(&dataset, detector)?;
    report.generation_secs = generation_secs;
    Ok(report)
}

/// Evaluate `detector` on a built set; also returns its raw output.
pub fn evaluate(dataset: &Dataset, detector: &mut dyn Detector) -> Result<(EvalReport, DetectorOutput), EvalError> {
    let t = Instant::now();
    let output = detector.detect(&dataset.works, &dataset.pages)?;
    let detection_secs = t.elapsed().as_secs_f64();
    let report = EvalReport {
        detector: detector.name(),
        dataset: DatasetSummary::of(dataset),
        metrics: metrics::compute(dataset, &output),
        generation_secs: 0.0,
        detection_secs,
        sweep: Vec::new(),
    };
    Ok((report, output))
}

/// One-parameter-at-a-time variations around `base`, labelled with what varies.
pub fn default_sweep(base: &Thresholds) -> Vec<(String, Thresholds)> {
    let mut out = vec![("default".to_owned(), base.clone())];
    for v in [0.3, 0.4, 0.6, 0.7] {
        out.push((format!("containment={v}"), Thresholds { containment: v, ..base.clone() }));
    }
    for v in [0.6, 0.7, 0.9] {
        out.push((format!("near_duplicate={v}"), Thresholds { near_duplicate: v, ..base.clone() }));
    }
    for v in [20, 30, 80, 120, 200] {
        out.push((format!("min_copied_chars={v}"), Thresholds { min_copied_chars: v, ..base.clone() }));
    }
    for v in [80, 100, 120, 200, 300, 400] {
        out.push((format!("min_excerpt_chars={v}"), Thresholds { min_excerpt_chars: v, ..base.clone() }));
    }
    for v in [0.0, 0.1, 0.2, 0.3] {
        out.push((format!("min_excerpt_share={v}"), Thresholds { min_excerpt_share: v, ..base.clone() }));
    }
    for v in [150, 300, 400, 800] {
        out.push((format!("long_excerpt_chars={v}"), Thresholds { long_excerpt_chars: v, ..base.clone() }));
    }
    out.push((
        "containment=0.3,min_excerpt_chars=200".to_owned(),
        Thresholds { containment: 0.3, min_excerpt_chars: 200, ..base.clone() },
    ));
    out.retain(|(name, t)| name == "default" || t != base);
    out
}

/// Score the sweep a [`PairwiseDetector`] recorded (labels in the order of its sweep).
pub fn sweep_rows(dataset: &Dataset, detector: &PairwiseDetector, labels: &[String]) -> Vec<SweepRow> {
    detector
        .sweep_results()
        .into_iter()
        .zip(labels)
        .map(|((thresholds, detections), varied)| {
            let output = DetectorOutput { detections: detections.to_vec(), ..Default::default() };
            SweepRow { thresholds, varied: varied.clone(), metrics: metrics::compute(dataset, &output) }
        })
        .collect()
}

impl fmt::Display for EvalReport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.dataset;
        writeln!(f, "## {}", self.detector)?;
        writeln!(f)?;
        if let Some(c) = &d.config {
            writeln!(
                f,
                "Set: seed {}, {} works ({} novel chapters, {} news stories), {} pages per positive class, up to {} per negative class.",
                c.seed, d.works, d.novel_sections, d.news_sections, c.pages_per_class, c.negatives_per_class
            )?;
        }
        let pages: Vec<String> = d.pages.iter().map(|(k, v)| format!("{k} {v}")).collect();
        writeln!(f, "Pages: {}.", pages.join(", "))?;
        let cs: Vec<String> = d.charsets.iter().map(|(k, v)| format!("{k} {v}")).collect();
        writeln!(f, "Charsets: {}.", cs.join(", "))?;
        writeln!(
            f,
            "Near-duplicate candidates excluded: {}; common phrases: {}; characters with homophones: {}; filler stories used again: {}.",
            d.notes.near_duplicates_excluded, d.notes.common_phrases, d.notes.homophone_chars, d.notes.filler_drawn_again
        )?;
        writeln!(f, "Time: set {:.1} s, detector {:.1} s.", self.generation_secs, self.detection_secs)?;
        writeln!(f)?;
        write!(f, "{}", self.metrics)?;
        if !self.sweep.is_empty() {
            writeln!(f)?;
            writeln!(f, "| thresholds varied | precision | recall | lowest class recall (class) | neg. pages flagged | attribution | evidence | excerpt recall | truncated recall |")?;
            writeln!(f, "|---|---:|---:|---:|---:|---:|---:|---:|---:|")?;
            for row in &self.sweep {
                let m = &row.metrics;
                let worst = m
                    .classes
                    .iter()
                    .filter(|c| c.positive)
                    .min_by(|a, b| a.recall.unwrap_or(0.0).total_cmp(&b.recall.unwrap_or(0.0)))
                    .map_or("-", |c| c.class.as_str());
                let class_recall =
                    |name: &str| fmt_opt(m.classes.iter().find(|c| c.class == name).and_then(|c| c.recall));
                writeln!(
                    f,
                    "| {} | {} | {} | {} ({worst}) | {} | {} | {} | {} | {} |",
                    row.varied,
                    fmt_opt(m.overall.precision),
                    fmt_opt(m.overall.recall),
                    fmt_opt(m.overall.min_class_recall),
                    m.overall.false_positive_pages,
                    fmt_opt(m.overall.attribution),
                    fmt_opt(m.overall.evidence_coverage),
                    class_recall("excerpt"),
                    class_recall("truncated"),
                )?;
            }
        }
        Ok(())
    }
}
