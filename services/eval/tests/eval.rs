//! Tests of the evaluation crate: one binary, a module per part.
//!
//! They read the test corpus (`.test-corpus/`, assembled by `scripts/setup-corpus.sh`)
//! and build one tiny set, shared by every test.

use std::sync::OnceLock;

use zhiwen_eval::corpus;
use zhiwen_eval::dataset::{paragraphs, Dataset, DatasetConfig, Page, PageClass, WorkKind};

/// The tiny set with every class, `templated_report` and `link_spam` included (the
/// pipeline's smoke tests use it without: see `DatasetConfig::templated_reports`), and
/// `official_formulae` when its eight news stories have stock text (see [`formulae`]).
fn tiny_config(seed: u64) -> DatasetConfig {
    DatasetConfig { templated_reports: 4, link_spam_pages: 4, official_formulae_pages: 4, ..DatasetConfig::tiny(seed) }
}

/// A set with 60 news stories, enough for some to have stock text: the
/// `official_formulae` pages (the tiny set's eight stories may have none).
fn formulae() -> &'static Dataset {
    static SET: OnceLock<Dataset> = OnceLock::new();
    SET.get_or_init(|| {
        let dir = corpus::locate().unwrap_or_else(|e| panic!("{e}"));
        let config = DatasetConfig { xwlb_works: 30, inews_works: 30, ..tiny_config(7) };
        Dataset::generate(&dir, &config).unwrap_or_else(|e| panic!("generating the set: {e}"))
    })
}

fn tiny() -> &'static Dataset {
    static SET: OnceLock<Dataset> = OnceLock::new();
    SET.get_or_init(|| {
        let dir = corpus::locate().unwrap_or_else(|e| panic!("{e}"));
        Dataset::generate(&dir, &tiny_config(7)).unwrap_or_else(|e| panic!("generating the tiny set: {e}"))
    })
}

/// The copied text of a page, ranges concatenated.
fn copied_text(page: &Page) -> String {
    let chars: Vec<char> = page.html.chars().collect();
    page.label
        .as_ref()
        .map_or_else(String::new, |l| l.copied.iter().map(|&(s, e)| chars[s..e].iter().collect::<String>()).collect())
}

/// The section text the way pages hold it: paragraphs run together, markup characters full-width.
fn section_plain(set: &Dataset, page: &Page) -> String {
    let label = page.label.as_ref().expect("positive page");
    let (_, section) = set.section(&label.section_id).expect("labelled section is registered");
    paragraphs(&section.text)
        .concat()
        .chars()
        .filter(|c| !c.is_whitespace())
        .map(|c| match c {
            '<' => '＜',
            '>' => '＞',
            '&' => '＆',
            c => c,
        })
        .collect()
}

fn pages(set: &Dataset, class: PageClass) -> Vec<&Page> {
    let v: Vec<&Page> = set.pages.iter().filter(|p| p.class == class).collect();
    assert!(!v.is_empty(), "no {} pages", class.as_str());
    v
}

fn strip_ws(s: &str) -> String {
    s.chars().filter(|c| !c.is_whitespace()).collect()
}

mod generator {
    use super::*;
    use zhiwen_core::initials::initial_letters;

    #[test]
    fn is_deterministic() {
        let dir = corpus::locate().unwrap_or_else(|e| panic!("{e}"));
        let again = Dataset::generate(&dir, &tiny_config(7)).expect("set");
        let first = tiny();
        assert_eq!(first.works.len(), again.works.len());
        for (a, b) in first.works.iter().zip(&again.works) {
            assert_eq!(a.id, b.id);
            let ids = |w: &zhiwen_eval::dataset::Work| w.sections.iter().map(|s| s.id.clone()).collect::<Vec<_>>();
            assert_eq!(ids(a), ids(b));
        }
        assert_eq!(first.pages.len(), again.pages.len());
        for (a, b) in first.pages.iter().zip(&again.pages) {
            assert_eq!(a.id, b.id);
            assert_eq!(a.bytes, b.bytes, "{}", a.id);
            assert_eq!(a.label.as_ref().map(|l| l.copied.clone()), b.label.as_ref().map(|l| l.copied.clone()));
        }
        let other = Dataset::generate(&dir, &tiny_config(8)).expect("set");
        assert_ne!(
            first.pages.iter().map(|p| p.source.clone()).collect::<Vec<_>>(),
            other.pages.iter().map(|p| p.source.clone()).collect::<Vec<_>>(),
            "another seed draws other texts"
        );
    }

    #[test]
    fn every_class_is_present_with_labels_only_on_positives() {
        let set = tiny();
        for class in PageClass::ALL {
            let set = if class == PageClass::OfficialFormulae { formulae() } else { set };
            for p in pages(set, class) {
                assert_eq!(p.label.is_some(), class.is_positive(), "{}", p.id);
            }
        }
        assert_eq!(set.section_count(), 3 * 4 + 4 + 4);
    }

    #[test]
    fn a_templated_report_refills_the_figures_of_a_registered_paragraph() {
        use zhiwen_core::formulaic::is_figure;
        let set = tiny();
        let no_figures = |s: &str| strip_ws(s).chars().filter(|&c| !is_figure(c)).collect::<String>();
        let registered: Vec<String> = set
            .works
            .iter()
            .flat_map(|w| &w.sections)
            .flat_map(|s| {
                let whole = s.text.chars().count();
                paragraphs(&s.text).into_iter().filter(move |p| p.chars().count() * 3 <= whole)
            })
            .filter(|p| p.chars().count() >= 100 && p.chars().filter(|&c| is_figure(c)).count() >= 3)
            .collect();
        let templated = pages(set, PageClass::TemplatedReport);
        assert!(!templated.is_empty(), "the tiny set has templated reports");
        for page in templated {
            assert!(page.label.is_none(), "{}", page.id);
            let html = strip_ws(&page.html);
            let html_no_figures = no_figures(&page.html);
            let refilled =
                registered.iter().any(|p| html_no_figures.contains(&no_figures(p)) && !html.contains(&strip_ws(p)));
            assert!(refilled, "{}: no registered paragraph with other figures", page.id);
        }
    }

    #[test]
    fn a_link_spam_page_lists_other_links_of_registered_hosts() {
        use zhiwen_eval::dataset::urls;
        let set = tiny();
        let registered: Vec<String> = set.works.iter().flat_map(|w| &w.sections).flat_map(|s| urls(&s.text)).collect();
        let host = |u: &str| u.split_once("://").map_or(u, |(_, r)| r).split('/').next().unwrap_or("").to_owned();
        let hosts: std::collections::BTreeSet<String> = registered.iter().map(|u| host(u)).collect();
        for page in pages(set, PageClass::LinkSpam) {
            let listed = urls(&page.html);
            let links: Vec<&String> = listed.iter().filter(|u| !u.contains(".example")).collect();
            for u in &links {
                assert!(!registered.contains(u), "{}: {u} is a registered link", page.id);
            }
            // The host story may hold links of its own; the list is of registered hosts.
            let of_hosts = links.iter().filter(|u| hosts.is_empty() || hosts.contains(&host(u))).count();
            assert!(of_hosts >= 6, "{}: {of_hosts} links of registered hosts", page.id);
        }
    }

    #[test]
    fn an_official_formulae_page_holds_stock_clauses_of_a_registered_story_and_no_paragraph() {
        use zhiwen_eval::dataset::clauses;
        let set = formulae();
        let sections: Vec<&zhiwen_eval::dataset::Section> =
            set.works.iter().filter(|w| w.kind == WorkKind::News).flat_map(|w| &w.sections).collect();
        for page in pages(set, PageClass::OfficialFormulae) {
            let html = strip_ws(&page.html);
            let shared = sections.iter().any(|s| clauses(&s.text).iter().any(|c| html.contains(c)));
            assert!(shared, "{}: no clause of a registered story", page.id);
            for s in &sections {
                for p in paragraphs(&s.text).iter().filter(|p| p.chars().count() >= 60) {
                    assert!(!html.contains(&strip_ws(p)), "{}: holds a paragraph of {}", page.id, s.id);
                }
            }
        }
    }

    #[test]
    fn bytes_decode_to_the_labelled_text() {
        for p in &tiny().pages {
            let enc = encoding_rs::Encoding::for_label(p.charset.as_bytes()).expect("known charset");
            let (text, _, errors) = enc.decode(&p.bytes);
            assert!(!errors, "{}: malformed bytes", p.id);
            assert_eq!(text, p.html, "{}", p.id);
        }
        let charsets: std::collections::BTreeSet<&str> = tiny().pages.iter().map(|p| p.charset.as_str()).collect();
        assert!(charsets.contains("GBK") && charsets.contains("UTF-8"), "{charsets:?}");
    }

    #[test]
    fn labels_point_at_the_copied_text() {
        let set = tiny();
        for p in pages(set, PageClass::Exact) {
            assert_eq!(strip_ws(&copied_text(p)), section_plain(set, p), "{}", p.id);
        }
        for p in set.pages.iter().filter(|p| p.label.is_some()) {
            let label = p.label.as_ref().expect("label");
            let n = p.html.chars().count();
            assert!(label.copied.iter().all(|&(s, e)| s < e && e <= n), "{}", p.id);
            assert!(label.copied.windows(2).all(|w| w[0].1 <= w[1].0), "{}: ranges sorted and disjoint", p.id);
            assert!(label.copied_chars > 0);
            // Copied text never contains markup.
            assert!(!copied_text(p).contains('<'), "{}", p.id);
        }
    }

    #[test]
    fn negatives_are_not_registered_texts() {
        let set = tiny();
        for p in set.pages.iter().filter(|p| !p.class.is_positive()) {
            assert!(set.section(&p.source).is_none(), "{} uses registered {}", p.id, p.source);
        }
        for p in pages(set, PageClass::OtherChapter) {
            let novel = p.source.rsplit_once('-').map(|(n, _)| n).expect("chapter id");
            assert!(set.works.iter().any(|w| w.id == novel), "{}: a chapter of a registered novel", p.id);
        }
    }

    #[test]
    fn truncation_keeps_30_to_60_percent_and_excerpts_20_to_40() {
        let set = tiny();
        for p in pages(set, PageClass::Truncated) {
            let share = p.label.as_ref().expect("label").section_share;
            assert!((0.3..=0.6).contains(&share), "{}: {share}", p.id);
            let copied = strip_ws(&copied_text(p));
            assert!(section_plain(set, p).starts_with(&copied), "{}: a prefix", p.id);
        }
        for p in pages(set, PageClass::Excerpt) {
            let share = p.label.as_ref().expect("label").section_share;
            assert!((0.19..=0.41).contains(&share), "{}: {share}", p.id);
            assert!(section_plain(set, p).contains(&strip_ws(&copied_text(p))), "{}: contiguous", p.id);
        }
    }

    #[test]
    fn homophones_keep_the_initial_stream() {
        let set = tiny();
        for p in pages(set, PageClass::Homophone) {
            let (copied, original) = (strip_ws(&copied_text(p)), section_plain(set, p));
            assert_ne!(copied, original, "{}", p.id);
            assert_eq!(initial_letters(&copied), initial_letters(&original), "{}", p.id);
            let share = p.label.as_ref().and_then(|l| l.homophone_share).expect("share");
            assert!((0.04..=0.16).contains(&share), "{}: {share}", p.id);
        }
    }

    #[test]
    fn traditional_pages_hold_traditional_script() {
        let set = tiny();
        for p in pages(set, PageClass::Traditional) {
            let (copied, original) = (strip_ws(&copied_text(p)), section_plain(set, p));
            // At least one character in a hundred is written differently (everyday Chinese
            // text has far more characters that traditional script writes otherwise).
            let changed = copied.chars().zip(original.chars()).filter(|(a, b)| a != b).count();
            assert!(changed * 100 >= original.chars().count(), "{}: {changed} characters converted", p.id);
            // Back to simplified, almost every character is the original one ('?' marks
            // characters Big5 cannot encode; OpenCC's round trip is not exact).
            let back: Vec<char> = zhiwen_core::canon::to_simplified(&copied).chars().collect();
            let orig: Vec<char> = original.chars().collect();
            assert_eq!(back.len(), orig.len(), "{}", p.id);
            let same = back.iter().zip(&orig).filter(|(a, b)| a == b).count();
            assert!(same as f64 >= 0.97 * orig.len() as f64, "{}: {same}/{}", p.id, orig.len());
        }
    }

    #[test]
    fn ads_are_real_lines_outside_the_copied_ranges() {
        let set = tiny();
        let dir = corpus::locate().expect("corpus");
        let ads = corpus::read_ad_lines(&dir).expect("ads");
        for p in pages(set, PageClass::Ads) {
            let label = p.label.as_ref().expect("label");
            assert!(label.copied.len() >= 2, "{}: ads split the copy", p.id);
            let copied = copied_text(p);
            let outside: String = {
                let chars: Vec<char> = p.html.chars().collect();
                let mut keep = vec![true; chars.len()];
                for &(s, e) in &label.copied {
                    keep[s..e].iter_mut().for_each(|k| *k = false);
                }
                chars.iter().zip(keep).filter(|(_, k)| *k).map(|(c, _)| *c).collect()
            };
            let found = ads.iter().filter(|a| a.chars().count() >= 6).any(|a| {
                let a: String = a
                    .chars()
                    .map(|c| {
                        if c == '<' {
                            '＜'
                        } else if c == '>' {
                            '＞'
                        } else if c == '&' {
                            '＆'
                        } else {
                            c
                        }
                    })
                    .collect();
                outside.contains(&a) && !copied.contains(&a)
            });
            assert!(found, "{}: an ad line outside the copied ranges", p.id);
            assert!(strip_ws(&copied) == section_plain(set, p), "{}: the copy itself is complete", p.id);
        }
    }

    #[test]
    fn reordered_pages_keep_the_text_in_another_order() {
        let set = tiny();
        for p in pages(set, PageClass::Reordered) {
            let (copied, original) = (strip_ws(&copied_text(p)), section_plain(set, p));
            assert_ne!(copied, original, "{}", p.id);
            let mut a: Vec<char> = copied.chars().collect();
            let mut b: Vec<char> = original.chars().collect();
            a.sort_unstable();
            b.sort_unstable();
            assert!(a == b, "{}: same characters", p.id);
        }
    }

    #[test]
    fn edits_change_a_few_percent() {
        let set = tiny();
        for p in pages(set, PageClass::Edits) {
            let (copied, original) = (strip_ws(&copied_text(p)), section_plain(set, p));
            assert!(copied != original, "{}", p.id);
            let ratio = copied.chars().count() as f64 / original.chars().count() as f64;
            assert!((0.9..=1.1).contains(&ratio), "{}: {ratio}", p.id);
            // At most ~10% of the characters changed: the multisets overlap by at least 85%.
            let mut counts: std::collections::HashMap<char, i64> = std::collections::HashMap::new();
            for c in original.chars() {
                *counts.entry(c).or_default() += 1;
            }
            let mut common = 0;
            for c in copied.chars() {
                if let Some(n) = counts.get_mut(&c).filter(|n| **n > 0) {
                    *n -= 1;
                    common += 1;
                }
            }
            let share = common as f64 / original.chars().count() as f64;
            assert!((0.85..0.99).contains(&share), "{}: {share}", p.id);
        }
    }
}

mod near_duplicates {
    use zhiwen_eval::dataset::NearDupIndex;

    #[test]
    fn a_reaired_story_is_refused_and_an_unrelated_one_kept() {
        let set = super::tiny();
        let news: Vec<&str> = set
            .works
            .iter()
            .filter(|w| w.kind == zhiwen_eval::dataset::WorkKind::News)
            .map(|w| w.sections[0].text.as_str())
            .collect();
        let mut index = NearDupIndex::new().expect("index");
        assert!(index.add_if_new(news[0]));
        // The same story with a new opening sentence: a re-aired copy.
        let reaired = format!("本台记者报道。{}", news[0]);
        assert!(!index.add_if_new(&reaired));
        assert!(index.add_if_new(news[1]), "another registered story is distinct");
    }
}

mod converter {
    use zhiwen_eval::corpus::S2t;

    #[test]
    fn phrases_first_then_characters() {
        let chars = "发\t發 髮\n头\t頭\n展\t展\n干\t幹 乾\n";
        let phrases = "头发\t頭髮\n干杯\t乾杯\n";
        let s2t = S2t::from_tables(chars, phrases);
        assert_eq!(s2t.convert("头发发展"), "頭髮發展");
        assert_eq!(s2t.convert("干杯干"), "乾杯幹");
        assert_eq!(s2t.convert("abc"), "abc");
    }

    #[test]
    fn the_opencc_tables_convert_common_text() {
        let dir = zhiwen_eval::corpus::locate().expect("corpus");
        let s2t = S2t::load(&dir).expect("tables");
        assert_eq!(s2t.convert("这里的头发很长，国家发展"), "這裏的頭髮很長，國家發展");
    }
}

mod metrics {
    use zhiwen_core::compare::VerdictKind;
    use zhiwen_eval::dataset::{
        CopyLabel, Dataset, DatasetConfig, DatasetNotes, Page, PageClass, Section, Work, WorkKind,
    };
    use zhiwen_eval::metrics::compute;
    use zhiwen_eval::{Detection, DetectorOutput, Family, FamilyHit};

    /// (work, section, copied ranges).
    type Truth<'a> = (&'a str, &'a str, Vec<(usize, usize)>);

    fn page(id: &str, class: PageClass, html: &str, label: Option<Truth>) -> Page {
        Page {
            id: id.into(),
            class,
            transforms: Vec::new(),
            url: String::new(),
            site: String::new(),
            charset: "UTF-8".into(),
            http_charset: None,
            bytes: html.as_bytes().to_vec(),
            html: html.into(),
            kind: WorkKind::News,
            source: id.into(),
            label: label.map(|(w, s, copied)| CopyLabel {
                work_id: w.into(),
                section_id: s.into(),
                copied_chars: zhiwen_eval::dataset::content_chars(html, &copied),
                copied,
                section_share: 1.0,
                homophone_share: None,
            }),
        }
    }

    fn det(page: &str, work: &str, section: &str, score: f64, evidence: Vec<(usize, usize)>) -> Detection {
        Detection {
            page_id: page.into(),
            work_id: work.into(),
            section_id: section.into(),
            kind: VerdictKind::AWithinB,
            score,
            evidence,
        }
    }

    fn set() -> Dataset {
        let section = |id: &str| Section { id: id.into(), ordinal: 0, title: String::new(), text: "x".into() };
        let works = vec![
            Work {
                id: "w1".into(),
                owner: "o".into(),
                title: "t".into(),
                author: "a".into(),
                kind: WorkKind::News,
                sections: vec![section("w1s0"), section("w1s1")],
            },
            Work {
                id: "w2".into(),
                owner: "o".into(),
                title: "t".into(),
                author: "a".into(),
                kind: WorkKind::News,
                sections: vec![section("w2s0")],
            },
        ];
        // "<p>" + 10 copied characters + "</p>": copied range 3..13.
        let html = "<p>一二三四五六七八九十</p>";
        let pages = vec![
            page("e1", PageClass::Exact, html, Some(("w1", "w1s0", vec![(3, 13)]))),
            page("e2", PageClass::Exact, html, Some(("w1", "w1s1", vec![(3, 13)]))),
            page("e3", PageClass::Exact, html, Some(("w2", "w2s0", vec![(3, 13)]))),
            page("t1", PageClass::Truncated, html, Some(("w2", "w2s0", vec![(3, 13)]))),
            page("n1", PageClass::OtherChapter, html, None),
            page("n2", PageClass::OtherChapter, html, None),
        ];
        Dataset { config: DatasetConfig::tiny(0), works, pages, notes: DatasetNotes::default() }
    }

    #[test]
    fn precision_recall_attribution_and_evidence() {
        let out = DetectorOutput {
            detections: vec![
                // e1: right section, evidence covers 5 of 10 copied characters.
                det("e1", "w1", "w1s0", 0.9, vec![(3, 8)]),
                // e1 again (duplicate of the same pair): counted once.
                det("e1", "w1", "w1s0", 0.5, vec![(3, 8)]),
                // e2: right work, wrong section scores higher than the right one.
                det("e2", "w1", "w1s0", 0.9, vec![(0, 20)]),
                det("e2", "w1", "w1s1", 0.6, vec![(0, 20)]),
                // e3: missed. t1: wrong work only.
                det("t1", "w1", "w1s0", 0.7, vec![(3, 13)]),
                // n1: a false positive.
                det("n1", "w2", "w2s0", 0.8, vec![(3, 13)]),
            ],
            family_hits: vec![
                FamilyHit {
                    page_id: "e1".into(),
                    work_id: "w1".into(),
                    section_id: "w1s0".into(),
                    families: vec![Family::Dna, Family::Passages],
                    copied_chars: 0,
                },
                FamilyHit {
                    page_id: "e2".into(),
                    work_id: "w1".into(),
                    section_id: "w1s1".into(),
                    families: vec![Family::Dna],
                    copied_chars: 0,
                },
                FamilyHit {
                    page_id: "n2".into(),
                    work_id: "w1".into(),
                    section_id: "w1s0".into(),
                    families: vec![Family::Passages],
                    copied_chars: 0,
                },
            ],
            failures: Vec::new(),
        };
        let m = compute(&set(), &out);
        let exact = m.classes.iter().find(|c| c.class == "exact").expect("exact");
        assert_eq!((exact.pages, exact.found, exact.detections, exact.correct), (3, 2, 3, 2));
        assert_eq!(exact.recall, Some(2.0 / 3.0));
        assert_eq!(exact.attribution, Some(0.5), "e1 right, e2's best is the wrong section");
        // e1: 5 of 10 covered; e2: 10 of 10 (right-section evidence covers everything).
        assert_eq!((exact.copied_chars, exact.covered_chars), (20, 15));
        let trunc = m.classes.iter().find(|c| c.class == "truncated").expect("truncated");
        assert_eq!((trunc.found, trunc.correct, trunc.pages_with_false_detection), (0, 0, 1));
        let neg = m.classes.iter().find(|c| c.class == "other_chapter").expect("neg");
        assert_eq!((neg.detections, neg.pages_with_false_detection), (1, 1));
        let o = &m.overall;
        assert_eq!((o.detections, o.correct), (5, 2));
        assert_eq!(o.precision, Some(0.4));
        assert_eq!(o.work_precision, Some(0.6), "e1, e2 x2 name the right work");
        assert_eq!(o.recall, Some(0.5));
        assert_eq!((o.false_positive_pages, o.negative_pages), (1, 2));
        assert_eq!(o.evidence_coverage, Some(0.75));
        let dna = m.families.iter().find(|f| f.family == "dna").expect("dna");
        assert_eq!(dna.recall, 0.5);
        assert_eq!(dna.recall_by_class.get("exact"), Some(&(2.0 / 3.0)));
        let passages = m.families.iter().find(|f| f.family == "passages").expect("passages");
        assert_eq!(passages.negative_flag_rate, 0.5);
        // The text form has every table.
        let text = m.to_string();
        assert!(text.contains("| exact |") && text.contains("| dna |") && text.contains("precision (right section)"));
    }
}

mod baseline {
    use super::*;
    use zhiwen_eval::{Detector, PairwiseDetector};

    #[test]
    fn finds_an_exact_copy_and_passes_a_negative() {
        let set = tiny();
        let chosen: Vec<Page> = [PageClass::Exact, PageClass::SameDayNews]
            .iter()
            .filter_map(|c| set.pages.iter().find(|p| p.class == *c && p.kind == zhiwen_eval::dataset::WorkKind::News))
            .cloned()
            .collect();
        let news: Vec<_> =
            set.works.iter().filter(|w| w.kind == zhiwen_eval::dataset::WorkKind::News).cloned().collect();
        let out = PairwiseDetector::default().detect(&news, &chosen).expect("detect");
        let exact = &chosen[0];
        let label = exact.label.as_ref().expect("label");
        assert!(out.detections.iter().any(|d| d.page_id == exact.id && d.section_id == label.section_id));
        assert!(out.detections.iter().all(|d| d.page_id == exact.id), "{:?}", out.detections);
        let m = zhiwen_eval::metrics::compute(&Dataset { pages: chosen.clone(), ..set.clone() }, &out);
        assert!(m.overall.evidence_coverage.is_some_and(|c| c > 0.9), "{:?}", m.overall);
    }
}

mod explain {
    use super::*;
    use std::cell::Cell;
    use zhiwen_core::compare::{Comparison, Thresholds};
    use zhiwen_core::{Analysis, Params};
    use zhiwen_eval::{explain, DetectorOutput};

    /// A copy the detector missed is explained as the detector decides it: with the
    /// catalogue rule it was given, which is named when it changed the verdict.
    #[test]
    fn a_missed_copy_is_explained_with_the_detectors_catalogue_rule() {
        let set = tiny();
        let exact = set.pages.iter().find(|p| p.class == PageClass::Exact).expect("an exact copy");
        let one = Dataset { pages: vec![exact.clone()], ..set.clone() };
        let nothing_found = DetectorOutput::default();
        let (params, thresholds) = (Params::default(), Thresholds::default());

        let calls = Cell::new(0);
        let keep = |_: &mut Comparison, a: &Analysis, b: &Analysis| {
            calls.set(calls.get() + 1);
            // Section first, page second: the page is the longer text.
            assert!(a.chars.units.len() <= b.chars.units.len());
            false
        };
        let text = explain(&one, &nothing_found, &params, &thresholds, &keep).expect("explain");
        assert_eq!(calls.get(), 1);
        assert!(text.contains(&exact.id) && text.contains("verdict"), "{text}");
        assert!(!text.contains("catalogue rule"), "{text}");

        let discount = |c: &mut Comparison, _: &Analysis, _: &Analysis| {
            c.verdict.duplicate = false;
            c.verdict.score = 0.0;
            true
        };
        let text = explain(&one, &nothing_found, &params, &thresholds, &discount).expect("explain");
        let line = text.lines().find(|l| l.contains(&exact.id)).expect("the missed copy");
        assert!(line.contains("after the catalogue rule") && line.contains("(score 0.000)"), "{line}");
    }
}
