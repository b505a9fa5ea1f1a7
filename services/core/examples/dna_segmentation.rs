//! Measure the DNA fingerprint on the evaluation corpus (the reference frame itself is
//! rebuilt by `zhiwen dna-frame`).
//!
//! ```text
//! cargo run --release -p zhiwen-core --example dna_segmentation                 # full evaluation
//! cargo run --release -p zhiwen-core --example dna_segmentation -- --quick      # default n and radix only
//! ```
//!
//! The corpus directory is `$ZHIWEN_CORPUS_DIR`, or `../../.test-corpus` (the test corpus) relative to
//! this crate. The evaluation builds, for every chapter of `novels_classics.jsonl`,
//! transformed copies (the classes below) and scores them against the original; the
//! negatives are the other chapters of the same novel and every news story of both news
//! sets, each scored against every chapter. It prints markdown tables (`docs/dna.md`).

use std::collections::HashMap;
use std::env;
use std::fs;
use std::path::PathBuf;
use std::time::Instant;

use pinyin::ToPinyin;
use serde::Deserialize;
use zhiwen_core::dna::{dna_fingerprint, for_each_near_code, DnaCodeSet, DnaMatch, DnaSegment, ReferenceFrame};
use zhiwen_core::initials::{initial_letters, initial_of};
use zhiwen_core::params::{DnaParams, DnaSegmentation};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error>>;

#[derive(Deserialize)]
struct Doc {
    id: String,
    text: String,
}

fn corpus_dir() -> PathBuf {
    match env::var_os("ZHIWEN_CORPUS_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.test-corpus"),
    }
}

fn read_jsonl(name: &str) -> Result<Vec<Doc>> {
    let path = corpus_dir().join(name);
    let text = fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut docs = Vec::new();
    for (i, line) in text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty()) {
        docs.push(serde_json::from_str(line).map_err(|e| format!("{}:{}: {e}", path.display(), i + 1))?);
    }
    Ok(docs)
}

/// SplitMix64: a small deterministic generator, so every run builds the same pairs.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        zhiwen_core::hash::mix64(self.0)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
}

fn main() -> Result<()> {
    let args: Vec<String> = env::args().skip(1).collect();
    evaluate(args.iter().any(|a| a == "--quick"))
}

// ---------------------------------------------------------------------------------
// Transformations of a chapter (what pirate sites do)

const CLASSES: [&str; 10] =
    ["exact", "traditional", "homophone", "edits1", "edits", "ads", "prefix", "truncated", "excerpt", "reordered"];

struct Tools {
    /// Simplified -> traditional, first OpenCC candidate per character.
    to_traditional: HashMap<char, char>,
    /// Common characters grouped by their full first reading (true homophones).
    homophones: HashMap<char, Vec<char>>,
    /// Han characters of the corpus in text order: a random element is a character
    /// drawn with its corpus frequency.
    han_pool: Vec<char>,
    ad_lines: Vec<String>,
    news: Vec<String>,
}

impl Tools {
    fn load(chapters: &[Doc], news: &[String]) -> Result<Tools> {
        let st = fs::read_to_string(corpus_dir().join("opencc/STCharacters.txt"))?;
        let to_traditional = st
            .lines()
            .filter(|l| !l.starts_with('#'))
            .filter_map(|l| {
                let (s, t) = l.split_once('\t')?;
                Some((s.chars().next()?, t.split(' ').next()?.chars().next()?))
            })
            .collect();
        let han_pool: Vec<char> =
            chapters.iter().take(120).flat_map(|d| d.text.chars().filter(|&c| initial_of(c).is_some())).collect();
        let mut freq: HashMap<char, usize> = HashMap::new();
        for &c in &han_pool {
            *freq.entry(c).or_default() += 1;
        }
        let mut by_reading: HashMap<&str, Vec<char>> = HashMap::new();
        let mut common: Vec<char> = freq.iter().filter(|(_, &n)| n >= 5).map(|(&c, _)| c).collect();
        common.sort_unstable();
        for &c in &common {
            if let Some(p) = c.to_pinyin() {
                by_reading.entry(p.plain()).or_default().push(c);
            }
        }
        let mut homophones = HashMap::new();
        for group in by_reading.values().filter(|g| g.len() > 1) {
            for &c in group {
                homophones.insert(c, group.iter().copied().filter(|&o| o != c).collect());
            }
        }
        let tsv = fs::read_to_string(corpus_dir().join("pirate_site_ad_lines.tsv"))?;
        let ad_lines = tsv.lines().skip(1).filter_map(|l| l.splitn(3, '\t').nth(2)).map(str::to_owned).collect();
        Ok(Tools { to_traditional, homophones, han_pool, ad_lines, news: news.to_vec() })
    }

    fn random_han(&self, rng: &mut Rng) -> char {
        self.han_pool[rng.below(self.han_pool.len())]
    }

    /// (page text, query text): the score is the containment of the query in the page
    /// for `excerpt`, of the page in the original chapter for every other class.
    fn transform(&self, class: &str, text: &str, rng: &mut Rng) -> String {
        let chars: Vec<char> = text.chars().collect();
        match class {
            "exact" => text.to_owned(),
            "traditional" => chars.iter().map(|c| *self.to_traditional.get(c).unwrap_or(c)).collect(),
            "homophone" => {
                let rate = rng.uniform(0.05, 0.15);
                chars
                    .iter()
                    .map(|&c| match self.homophones.get(&c) {
                        Some(alts) if rng.uniform(0.0, 1.0) < rate => alts[rng.below(alts.len())],
                        _ => c,
                    })
                    .collect()
            }
            "edits1" | "edits" => {
                let rate = if class == "edits" { rng.uniform(0.05, 0.10) } else { rng.uniform(0.01, 0.02) };
                let mut out = chars;
                let ops = (out.len() as f64 * rate) as usize;
                for _ in 0..ops {
                    let at = rng.below(out.len() + 1);
                    match rng.below(3) {
                        0 => out.insert(at, self.random_han(rng)),
                        1 if at < out.len() => {
                            out.remove(at);
                        }
                        _ if at < out.len() => out[at] = self.random_han(rng),
                        _ => {}
                    }
                }
                out.into_iter().collect()
            }
            "ads" => {
                let mut out = Vec::new();
                let mut next_ad = 2 + rng.below(4);
                for (i, para) in paragraphs(text).into_iter().enumerate() {
                    out.push(para.to_owned());
                    if i + 1 == next_ad {
                        out.push(self.ad_lines[rng.below(self.ad_lines.len())].clone());
                        next_ad += 3 + rng.below(4);
                    }
                }
                out.join("\n")
            }
            "prefix" => {
                let head: String = (0..10).map(|_| self.random_han(rng)).collect();
                format!("{head}\n{text}")
            }
            "truncated" => {
                let keep = (chars.len() as f64 * rng.uniform(0.3, 0.6)) as usize;
                chars[..keep].iter().collect()
            }
            "reordered" => {
                let mut paras = paragraphs(text);
                for i in (1..paras.len()).rev() {
                    paras.swap(i, rng.below(i + 1));
                }
                paras.join("\n")
            }
            _ => text.to_owned(),
        }
    }

    /// An excerpt of 20-40% of `text` embedded between unrelated news stories.
    fn excerpt_page(&self, text: &str, rng: &mut Rng) -> (String, String) {
        let chars: Vec<char> = text.chars().collect();
        let len = (chars.len() as f64 * rng.uniform(0.2, 0.4)) as usize;
        let at = rng.below(chars.len() - len + 1);
        let excerpt: String = chars[at..at + len].iter().collect();
        let mut page = String::new();
        for _ in 0..1 + rng.below(3) {
            page.push_str(&self.news[rng.below(self.news.len())]);
            page.push('\n');
        }
        page.push_str(&excerpt);
        for _ in 0..1 + rng.below(3) {
            page.push('\n');
            page.push_str(&self.news[rng.below(self.news.len())]);
        }
        (page, excerpt)
    }
}

fn paragraphs(text: &str) -> Vec<&str> {
    text.lines().map(str::trim).filter(|l| !l.is_empty()).collect()
}

/// Characters whose traditional form (OpenCC, first candidate) has another initial:
/// `initials` is meant to see canonical (simplified) text, this shows what happens
/// when it does not.
fn report_traditional_initials(tools: &Tools, docs: &[Doc]) {
    let mut differing: HashMap<(char, char), usize> = HashMap::new();
    let mut total = 0usize;
    for c in docs.iter().flat_map(|d| d.text.chars()) {
        let Some(a) = initial_of(c) else { continue };
        total += 1;
        let t = tools.to_traditional.get(&c).copied().unwrap_or(c);
        if initial_of(t) != Some(a) {
            *differing.entry((c, t)).or_default() += 1;
        }
    }
    let mut list: Vec<_> = differing.into_iter().collect();
    list.sort_by_key(|x| std::cmp::Reverse(x.1));
    let n: usize = list.iter().map(|x| x.1).sum();
    let top: Vec<String> = list
        .iter()
        .take(12)
        .map(|((s, t), k)| {
            let show = |c: char| initial_of(c).map(|l| (l as char).to_string()).unwrap_or_else(|| "-".into());
            format!("{s}->{t} ({}->{}) x{k}", show(*s), show(*t))
        })
        .collect();
    println!(
        "Traditional script: {n} of {total} Han characters ({:.2}%) get another initial; most frequent: {}\n",
        100.0 * n as f64 / total.max(1) as f64,
        top.join(", ")
    );
}

// ---------------------------------------------------------------------------------
// Evaluation

struct Chapter {
    novel: String,
    letters: Vec<u8>,
    /// Per class: (page letters, query letters when the query is not the page).
    copies: Vec<(Vec<u8>, Option<Vec<u8>>)>,
}

#[derive(Clone)]
struct Config {
    params: DnaParams,
    near: bool,
}

impl Config {
    fn mode(&self) -> DnaMatch {
        if self.near {
            DnaMatch::Near { radix: self.params.radix }
        } else {
            DnaMatch::Exact
        }
    }
    fn label(&self) -> String {
        let seg = match self.params.segmentation {
            DnaSegmentation::Fixed => "fixed",
            DnaSegmentation::ContentDefined => "cdc",
        };
        format!(
            "{seg} | {} | {} | {}",
            self.params.granularity,
            self.params.radix,
            if self.near { "near" } else { "exact" }
        )
    }
}

/// Scores of one family of negative pairs: all pairs counted, only non-zero scores kept.
#[derive(Default)]
struct Negatives {
    pairs: u64,
    nonzero: Vec<f64>,
}

impl Negatives {
    fn percentile(&mut self, q: f64) -> f64 {
        self.nonzero.sort_by(f64::total_cmp);
        let rank = ((q * self.pairs as f64).ceil() as u64).clamp(1, self.pairs.max(1)) - 1;
        let zeros = self.pairs - self.nonzero.len() as u64;
        if rank < zeros {
            0.0
        } else {
            self.nonzero.get((rank - zeros) as usize).copied().unwrap_or(0.0)
        }
    }
    fn max(&self) -> f64 {
        self.nonzero.iter().copied().fold(0.0, f64::max)
    }
}

/// Inverted index of the chapters' codes, to score one page against every chapter.
struct Library {
    postings: HashMap<u64, Vec<u32>>,
    works: usize,
}

impl Library {
    fn new(fingerprints: &[Vec<DnaSegment>]) -> Library {
        let mut postings: HashMap<u64, Vec<u32>> = HashMap::new();
        for (w, fp) in fingerprints.iter().enumerate() {
            for s in fp {
                let list = postings.entry(s.code).or_default();
                if list.last() != Some(&(w as u32)) {
                    list.push(w as u32);
                }
            }
        }
        Library { postings, works: fingerprints.len() }
    }

    /// hits[w] = number of `page` segments matching a code of work `w`.
    fn hits(&self, page: &[DnaSegment], mode: DnaMatch, hits: &mut [u32], seen: &mut [u32]) {
        hits.iter_mut().for_each(|h| *h = 0);
        seen.iter_mut().for_each(|s| *s = u32::MAX);
        for (i, s) in page.iter().enumerate() {
            let mut visit = |code: u64| {
                if let Some(list) = self.postings.get(&code) {
                    for &w in list {
                        if seen[w as usize] != i as u32 {
                            seen[w as usize] = i as u32;
                            hits[w as usize] += 1;
                        }
                    }
                }
            };
            visit(s.code);
            if let DnaMatch::Near { radix } = mode {
                for_each_near_code(s.code, radix, &mut visit);
            }
        }
    }
}

struct Outcome {
    label: String,
    mean: Vec<f64>,
    recall: Vec<f64>,
    same_novel: (f64, f64),
    news: (f64, f64),
    news_min8: f64,
    threshold: f64,
    letters_per_sec: f64,
    mean_segments: f64,
}

fn evaluate(quick: bool) -> Result<()> {
    let frame = ReferenceFrame::builtin();
    let docs = read_jsonl("novels_classics.jsonl")?;
    let mut news_texts: Vec<String> = read_jsonl("news_xwlb_cctv.jsonl")?.into_iter().map(|d| d.text).collect();
    news_texts.extend(read_jsonl("news_inews_ccf2019.jsonl")?.into_iter().map(|d| d.text));
    let tools = Tools::load(&docs, &news_texts)?;
    let mut rng = Rng(2024);
    let t0 = Instant::now();
    let chapters: Vec<Chapter> = docs
        .iter()
        .map(|d| {
            let copies = CLASSES
                .iter()
                .map(|class| {
                    if *class == "excerpt" {
                        let (page, excerpt) = tools.excerpt_page(&d.text, &mut rng);
                        (initial_letters(&page), Some(initial_letters(&excerpt)))
                    } else {
                        (initial_letters(&tools.transform(class, &d.text, &mut rng)), None)
                    }
                })
                .collect();
            let novel = d.id.rsplit_once('-').map(|(n, _)| n.to_owned()).unwrap_or_default();
            Chapter { novel, letters: initial_letters(&d.text), copies }
        })
        .collect();
    let news: Vec<Vec<u8>> = news_texts.iter().map(|t| initial_letters(t)).collect();
    let letters_total: usize = chapters.iter().map(|c| c.letters.len()).sum();
    eprintln!(
        "{} chapters ({letters_total} letters), {} news stories; pairs built in {:.1?}",
        chapters.len(),
        news.len(),
        t0.elapsed()
    );
    report_traditional_initials(&tools, &docs);
    let same_initials = |class: usize| chapters.iter().filter(|c| c.copies[class].0 == c.letters).count();
    println!(
        "Copies whose initial stream equals the original's: traditional {}/{}, homophone {}/{}\n",
        same_initials(1),
        chapters.len(),
        same_initials(2),
        chapters.len()
    );

    let mut configs = Vec::new();
    let defaults = DnaParams::default();
    let grains: &[usize] = if quick { &[defaults.granularity] } else { &[32, 48, 64, 96, 128] };
    let radixes: &[u8] = if quick { &[defaults.radix] } else { &[2, 4, 8, 10] };
    for segmentation in [DnaSegmentation::Fixed, DnaSegmentation::ContentDefined] {
        for &granularity in grains {
            for &radix in radixes {
                for near in [false, true] {
                    let params = DnaParams { granularity, radix, segmentation, ..DnaParams::default() };
                    configs.push(Config { params, near });
                }
            }
        }
    }
    let mut outcomes = Vec::new();
    for config in &configs {
        outcomes.push(run(config, &chapters, &news, frame));
        let o = outcomes.last().expect("just pushed");
        eprintln!("{}: threshold {:.3}, recall {:?}", o.label, o.threshold, o.recall);
    }
    print_tables(&outcomes);
    Ok(())
}

fn run(config: &Config, chapters: &[Chapter], news: &[Vec<u8>], frame: &ReferenceFrame) -> Outcome {
    let params = &config.params;
    let mode = config.mode();
    let t = Instant::now();
    let works: Vec<Vec<DnaSegment>> = chapters.iter().map(|c| dna_fingerprint(&c.letters, params, frame)).collect();
    let elapsed = t.elapsed().as_secs_f64();
    let letters: usize = chapters.iter().map(|c| c.letters.len()).sum();
    let segments: usize = works.iter().map(Vec::len).sum();

    // Positives.
    let mut scores = vec![Vec::new(); CLASSES.len()];
    for (c, work) in chapters.iter().zip(&works) {
        let work_set = DnaCodeSet::new(work);
        for (k, (page, query)) in c.copies.iter().enumerate() {
            let page_fp = dna_fingerprint(page, params, frame);
            let score = match query {
                Some(q) => DnaCodeSet::new(&page_fp).containment_of(&dna_fingerprint(q, params, frame), mode),
                None => work_set.containment_of(&page_fp, mode),
            };
            scores[k].push(score);
        }
    }

    // Negatives: each chapter (as a page) against the other chapters of its novel; each
    // news story against every chapter.
    let library = Library::new(&works);
    let mut hits = vec![0u32; library.works];
    let mut seen = vec![u32::MAX; library.works];
    let mut same_novel = Negatives::default();
    for (i, (c, page)) in chapters.iter().zip(&works).enumerate() {
        if page.is_empty() {
            continue;
        }
        library.hits(page, mode, &mut hits, &mut seen);
        for (w, other) in chapters.iter().enumerate() {
            if w != i && other.novel == c.novel {
                same_novel.pairs += 1;
                if hits[w] > 0 {
                    same_novel.nonzero.push(f64::from(hits[w]) / page.len() as f64);
                }
            }
        }
    }
    let mut news_neg = Negatives::default();
    let mut news_neg_min8 = Negatives::default();
    for story in news {
        let page = dna_fingerprint(story, params, frame);
        if page.is_empty() {
            continue;
        }
        library.hits(&page, mode, &mut hits, &mut seen);
        news_neg.pairs += library.works as u64;
        if page.len() >= 8 {
            news_neg_min8.pairs += library.works as u64;
        }
        for &h in hits.iter().filter(|&&h| h > 0) {
            let score = f64::from(h) / page.len() as f64;
            news_neg.nonzero.push(score);
            if page.len() >= 8 {
                news_neg_min8.nonzero.push(score);
            }
        }
    }
    let threshold = same_novel.max().max(news_neg_min8.max());
    let mean = scores.iter().map(|s| s.iter().sum::<f64>() / s.len().max(1) as f64).collect();
    let recall =
        scores.iter().map(|s| s.iter().filter(|&&x| x > threshold).count() as f64 / s.len().max(1) as f64).collect();
    Outcome {
        label: config.label(),
        mean,
        recall,
        same_novel: (same_novel.percentile(0.999), same_novel.max()),
        news: (news_neg.percentile(0.999), news_neg.max()),
        news_min8: news_neg_min8.max(),
        threshold,
        letters_per_sec: letters as f64 / elapsed,
        mean_segments: segments as f64 / chapters.len() as f64,
    }
}

fn print_tables(outcomes: &[Outcome]) {
    let classes = CLASSES.join(" | ");
    println!("### Mean containment of positives\n");
    println!("| seg | n | radix | match | {classes} |");
    println!("|---|---|---|---|{}", "---|".repeat(CLASSES.len()));
    for o in outcomes {
        let cells: Vec<String> = o.mean.iter().map(|m| format!("{m:.3}")).collect();
        println!("| {} | {} |", o.label, cells.join(" | "));
    }
    println!("\n### Negatives and recall at the threshold that keeps every negative below it\n");
    println!(
        "| seg | n | radix | match | same novel p99.9 | same novel max | news p99.9 | news max | news max (>= 8 segs) | threshold | {classes} |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|{}", "---|".repeat(CLASSES.len()));
    for o in outcomes {
        let cells: Vec<String> = o.recall.iter().map(|m| format!("{m:.3}")).collect();
        println!(
            "| {} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {:.3} | {} |",
            o.label,
            o.same_novel.0,
            o.same_novel.1,
            o.news.0,
            o.news.1,
            o.news_min8,
            o.threshold,
            cells.join(" | ")
        );
    }
    println!("\n### Cost\n");
    println!("| seg | n | radix | match | segments per chapter | fingerprint Mletters/s |");
    println!("|---|---|---|---|---|---|");
    for o in outcomes {
        println!("| {} | {:.0} | {:.0} |", o.label, o.mean_segments, o.letters_per_sec / 1e6);
    }
}
