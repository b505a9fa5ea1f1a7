//! Scores a detector's output against the labels: precision and recall per class and
//! overall, attribution (right work and right section), evidence coverage of the truly
//! copied characters, and what each fingerprint family would have flagged.
//!
//! Definitions (also in `docs/evaluation.md`):
//! - a detection is *correct* when its page copies exactly that section; duplicate
//!   detections of one (page, section) count once;
//! - precision = correct detections / detections (section level; the work-level
//!   variant only asks for the right work);
//! - a positive page is *found* when some detection names its work; recall = found / pages;
//! - attribution = found pages whose best-scoring detection names the right work and
//!   section / found pages;
//! - evidence coverage = content characters (letters, digits, Han) of the labelled
//!   copied ranges that lie inside the evidence ranges of the detections of the right
//!   section / all such characters, summed over found pages;
//! - a family's recall = positive pages whose true (page, section) pair it flagged /
//!   positive pages; its false-flag rate = negative pages it flagged any section for.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt;

use serde::{Deserialize, Serialize};

use crate::dataset::{Dataset, Page, PageClass, WorkKind};
use crate::detector::{Detection, DetectorOutput, Family};

/// Metrics of one page class.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ClassMetrics {
    /// Class name.
    pub class: String,
    /// Positive class?
    pub positive: bool,
    /// Pages of the class.
    pub pages: usize,
    /// Positive pages whose work was detected.
    pub found: usize,
    /// found / pages (positives).
    pub recall: Option<f64>,
    /// Recall on copies of novel chapters.
    pub recall_novel: Option<f64>,
    /// Recall on copies of news stories.
    pub recall_news: Option<f64>,
    /// Detections on pages of the class.
    pub detections: usize,
    /// Of which correct (right section).
    pub correct: usize,
    /// correct / detections.
    pub precision: Option<f64>,
    /// Pages with at least one wrong detection (for negatives: false-positive pages).
    pub pages_with_false_detection: usize,
    /// Found pages whose best detection is the right work and section.
    pub attributed: usize,
    /// attributed / found.
    pub attribution: Option<f64>,
    /// Copied content characters of found pages.
    pub copied_chars: usize,
    /// Of which covered by evidence.
    pub covered_chars: usize,
    /// covered / copied.
    pub evidence_coverage: Option<f64>,
}

/// Overall metrics.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Overall {
    /// All detections.
    pub detections: usize,
    /// Correct detections (right section).
    pub correct: usize,
    /// Section-level precision.
    pub precision: Option<f64>,
    /// Work-level precision (right work, any section).
    pub work_precision: Option<f64>,
    /// Positive pages.
    pub positive_pages: usize,
    /// Found positive pages.
    pub found: usize,
    /// Recall over all positive pages.
    pub recall: Option<f64>,
    /// Lowest recall of any positive class.
    pub min_class_recall: Option<f64>,
    /// Attribution accuracy over found pages.
    pub attribution: Option<f64>,
    /// Evidence coverage over found pages.
    pub evidence_coverage: Option<f64>,
    /// Negative pages.
    pub negative_pages: usize,
    /// Negative pages with any detection.
    pub false_positive_pages: usize,
    /// Pages the detector could not process.
    pub failures: usize,
    /// Largest copied passage (content characters) between a negative page and any
    /// section, when the detector reports it: the margin `min_excerpt_chars` must keep.
    pub max_negative_copied_chars: usize,
}

/// What one family flagged.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct FamilyMetrics {
    /// Family name.
    pub family: String,
    /// Recall per positive class (class name -> recall).
    pub recall_by_class: BTreeMap<String, f64>,
    /// Recall over all positive pages.
    pub recall: f64,
    /// Negative pages where the family flagged some section.
    pub negative_flag_rate: f64,
    /// The same per negative class (class name -> rate).
    pub negative_flag_by_class: BTreeMap<String, f64>,
}

/// The scores of one detector run.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Metrics {
    /// Per class, in [`PageClass::ALL`] order.
    pub classes: Vec<ClassMetrics>,
    /// Overall.
    pub overall: Overall,
    /// Per family (empty when the detector reports no family flags).
    pub families: Vec<FamilyMetrics>,
}

fn ratio(n: usize, d: usize) -> Option<f64> {
    (d > 0).then(|| n as f64 / d as f64)
}

/// Character positions of `page.html` that are letters, digits or Han characters
/// inside the labelled copied ranges.
fn copied_positions(page: &Page) -> Vec<usize> {
    let Some(label) = &page.label else { return Vec::new() };
    let chars: Vec<char> = page.html.chars().collect();
    let mut out = Vec::new();
    for &(s, e) in &label.copied {
        for (i, c) in chars.iter().enumerate().take(e.min(chars.len())).skip(s) {
            if c.is_alphanumeric() {
                out.push(i);
            }
        }
    }
    out
}

/// Score `output` against the labels of `dataset`.
pub fn compute(dataset: &Dataset, output: &DetectorOutput) -> Metrics {
    // One detection per (page, section), the best score kept.
    let mut by_page: HashMap<&str, Vec<&Detection>> = HashMap::new();
    let mut seen: HashMap<(&str, &str), usize> = HashMap::new();
    for d in &output.detections {
        let list = by_page.entry(d.page_id.as_str()).or_default();
        match seen.get(&(d.page_id.as_str(), d.section_id.as_str())) {
            Some(&k) if list[k].score >= d.score => {}
            Some(&k) => list[k] = d,
            None => {
                seen.insert((d.page_id.as_str(), d.section_id.as_str()), list.len());
                list.push(d);
            }
        }
    }
    let mut classes: Vec<ClassMetrics> = Vec::new();
    let mut o = Overall { failures: output.failures.len(), ..Overall::default() };
    let mut work_correct = 0;
    let (mut attributed, mut copied, mut covered) = (0, 0, 0);
    for class in PageClass::ALL {
        let pages: Vec<&Page> = dataset.pages.iter().filter(|p| p.class == class).collect();
        if pages.is_empty() {
            continue;
        }
        let mut m = ClassMetrics {
            class: class.as_str().into(),
            positive: class.is_positive(),
            pages: pages.len(),
            ..Default::default()
        };
        let mut kind_found: HashMap<WorkKind, (usize, usize)> = HashMap::new();
        for page in &pages {
            let dets = by_page.get(page.id.as_str()).map(Vec::as_slice).unwrap_or(&[]);
            m.detections += dets.len();
            let label = page.label.as_ref();
            let right_section =
                |d: &Detection| label.is_some_and(|l| l.section_id == d.section_id && l.work_id == d.work_id);
            let right_work = |d: &Detection| label.is_some_and(|l| l.work_id == d.work_id);
            let correct = dets.iter().filter(|d| right_section(d)).count();
            m.correct += correct;
            work_correct += dets.iter().filter(|d| right_work(d)).count();
            if correct < dets.len() {
                m.pages_with_false_detection += 1;
            }
            let Some(_) = label else { continue };
            let e = kind_found.entry(page.kind).or_default();
            e.1 += 1;
            if !dets.iter().any(|d| right_work(d)) {
                continue;
            }
            e.0 += 1;
            m.found += 1;
            let best = dets.iter().max_by(|a, b| a.score.total_cmp(&b.score).then(b.section_id.cmp(&a.section_id)));
            if best.is_some_and(|d| right_section(d)) {
                m.attributed += 1;
            }
            let mut ranges: Vec<(usize, usize)> =
                dets.iter().filter(|d| right_section(d)).flat_map(|d| d.evidence.iter().copied()).collect();
            ranges.sort_unstable();
            let positions = copied_positions(page);
            m.copied_chars += positions.len();
            m.covered_chars += positions
                .iter()
                .filter(|&&p| {
                    let k = ranges.partition_point(|r| r.0 <= p);
                    ranges[..k].iter().any(|r| r.1 > p)
                })
                .count();
        }
        if m.positive {
            m.recall = ratio(m.found, m.pages);
            m.attribution = ratio(m.attributed, m.found);
            m.evidence_coverage = ratio(m.covered_chars, m.copied_chars);
            let kr = |k| kind_found.get(&k).and_then(|(f, n)| ratio(*f, *n));
            m.recall_novel = kr(WorkKind::Novel);
            m.recall_news = kr(WorkKind::News);
            o.positive_pages += m.pages;
            o.found += m.found;
            attributed += m.attributed;
            copied += m.copied_chars;
            covered += m.covered_chars;
            o.min_class_recall = match (o.min_class_recall, m.recall) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            };
        } else {
            o.negative_pages += m.pages;
            o.false_positive_pages += m.pages_with_false_detection;
        }
        m.precision = ratio(m.correct, m.detections);
        o.detections += m.detections;
        o.correct += m.correct;
        classes.push(m);
    }
    o.precision = ratio(o.correct, o.detections);
    o.work_precision = ratio(work_correct, o.detections);
    o.recall = ratio(o.found, o.positive_pages);
    o.attribution = ratio(attributed, o.found);
    o.evidence_coverage = ratio(covered, copied);
    let negatives: HashSet<&str> = dataset.pages.iter().filter(|p| p.label.is_none()).map(|p| p.id.as_str()).collect();
    o.max_negative_copied_chars = output
        .family_hits
        .iter()
        .filter(|h| negatives.contains(h.page_id.as_str()))
        .map(|h| h.copied_chars)
        .max()
        .unwrap_or(0);
    let families = family_metrics(dataset, output);
    Metrics { classes, overall: o, families }
}

fn family_metrics(dataset: &Dataset, output: &DetectorOutput) -> Vec<FamilyMetrics> {
    if output.family_hits.is_empty() {
        return Vec::new();
    }
    let mut true_pair: HashSet<(&str, &str, Family)> = HashSet::new();
    let mut any_flag: HashSet<(&str, Family)> = HashSet::new();
    for h in &output.family_hits {
        for &f in &h.families {
            true_pair.insert((h.page_id.as_str(), h.section_id.as_str(), f));
            any_flag.insert((h.page_id.as_str(), f));
        }
    }
    Family::ALL
        .iter()
        .map(|&f| {
            let mut by_class = BTreeMap::new();
            let mut by_neg = BTreeMap::new();
            let (mut hit, mut pos, mut neg_hit, mut neg) = (0, 0, 0, 0);
            for class in PageClass::ALL {
                let pages: Vec<&Page> = dataset.pages.iter().filter(|p| p.class == class).collect();
                if pages.is_empty() {
                    continue;
                }
                if class.is_positive() {
                    let h = pages
                        .iter()
                        .filter(|p| {
                            p.label
                                .as_ref()
                                .is_some_and(|l| true_pair.contains(&(p.id.as_str(), l.section_id.as_str(), f)))
                        })
                        .count();
                    by_class.insert(class.as_str().to_owned(), h as f64 / pages.len() as f64);
                    hit += h;
                    pos += pages.len();
                } else {
                    let h = pages.iter().filter(|p| any_flag.contains(&(p.id.as_str(), f))).count();
                    by_neg.insert(class.as_str().to_owned(), h as f64 / pages.len() as f64);
                    neg_hit += h;
                    neg += pages.len();
                }
            }
            FamilyMetrics {
                family: f.as_str().into(),
                recall_by_class: by_class,
                recall: ratio(hit, pos).unwrap_or(0.0),
                negative_flag_rate: ratio(neg_hit, neg).unwrap_or(0.0),
                negative_flag_by_class: by_neg,
            }
        })
        .collect()
}

/// `0.953` or `-` for an undefined value.
pub fn fmt_opt(v: Option<f64>) -> String {
    v.map_or_else(|| "-".to_owned(), |v| format!("{v:.3}"))
}

impl fmt::Display for Metrics {
    /// Markdown tables: per class, overall, per family.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "| class | pages | found | recall | recall novel | recall news | detections | precision | false-det pages | attribution | evidence |")?;
        writeln!(f, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")?;
        for c in &self.classes {
            writeln!(
                f,
                "| {}{} | {} | {} | {} | {} | {} | {} | {} | {} | {} | {} |",
                c.class,
                if c.positive { "" } else { " (neg)" },
                c.pages,
                if c.positive { c.found.to_string() } else { "-".into() },
                fmt_opt(c.recall),
                fmt_opt(c.recall_novel),
                fmt_opt(c.recall_news),
                c.detections,
                fmt_opt(c.precision),
                c.pages_with_false_detection,
                fmt_opt(c.attribution),
                fmt_opt(c.evidence_coverage),
            )?;
        }
        let o = &self.overall;
        writeln!(f)?;
        writeln!(f, "| overall | value |")?;
        writeln!(f, "|---|---:|")?;
        writeln!(
            f,
            "| precision (right section) | {} ({} of {} detections) |",
            fmt_opt(o.precision),
            o.correct,
            o.detections
        )?;
        writeln!(f, "| precision (right work) | {} |", fmt_opt(o.work_precision))?;
        writeln!(f, "| recall | {} ({} of {} positive pages) |", fmt_opt(o.recall), o.found, o.positive_pages)?;
        writeln!(f, "| lowest class recall | {} |", fmt_opt(o.min_class_recall))?;
        writeln!(f, "| attribution (right work and section, of found) | {} |", fmt_opt(o.attribution))?;
        writeln!(f, "| evidence coverage of copied characters | {} |", fmt_opt(o.evidence_coverage))?;
        writeln!(f, "| negative pages with a detection | {} of {} |", o.false_positive_pages, o.negative_pages)?;
        writeln!(f, "| pages the detector failed on | {} |", o.failures)?;
        writeln!(f, "| largest copied passage on a negative page (chars) | {} |", o.max_negative_copied_chars)?;
        if !self.families.is_empty() {
            writeln!(f)?;
            let classes: Vec<&str> = self.classes.iter().filter(|c| c.positive).map(|c| c.class.as_str()).collect();
            write!(f, "| family | all |")?;
            for c in &classes {
                write!(f, " {c} |")?;
            }
            let negs: Vec<&str> = self.classes.iter().filter(|c| !c.positive).map(|c| c.class.as_str()).collect();
            write!(f, " negatives flagged |")?;
            for c in &negs {
                write!(f, " {c} (neg) |")?;
            }
            writeln!(f)?;
            write!(f, "|---|---:|")?;
            for _ in 0..classes.len() + 1 + negs.len() {
                write!(f, "---:|")?;
            }
            writeln!(f)?;
            for fam in &self.families {
                write!(f, "| {} | {:.3} |", fam.family, fam.recall)?;
                for c in &classes {
                    write!(f, " {} |", fmt_opt(fam.recall_by_class.get(*c).copied()))?;
                }
                write!(f, " {:.3} |", fam.negative_flag_rate)?;
                for c in &negs {
                    write!(f, " {} |", fmt_opt(fam.negative_flag_by_class.get(*c).copied()))?;
                }
                writeln!(f)?;
            }
        }
        Ok(())
    }
}
