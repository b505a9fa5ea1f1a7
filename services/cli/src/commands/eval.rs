//! `zhiwen eval`: the real pipeline (store, index, matching task) on the labelled set of
//! `zhiwen-eval`, in a fresh temporary data directory, with the metrics per class.

use std::collections::{BTreeSet, HashMap};
use std::path::Path;
use std::sync::Arc;

use anyhow::{Context, Result};
use zhiwen_core::canon::InputFormat;
use zhiwen_core::compare::Comparison;
use zhiwen_core::{Analysis, Fingerprinter, IndexFamily, Params};
use zhiwen_eval::dataset::{Page, Work};
use zhiwen_eval::{evaluate, Detection, Detector, DetectorOutput, EvalError, EvalOptions, Family, FamilyHit};
use zhiwen_index::{CandidateIndex, EmbeddedIndex, Namespace};
use zhiwen_matcher::catalogue::CatalogueProfile;
use zhiwen_matcher::task::{run_match_task, NoProgress, Scope, TaskControl, TaskSpec};
use zhiwen_matcher::{Matcher, MatcherConfig};
use zhiwen_store::{MatchQuery, NewPage, NewSection, NewWork, PageSource, StoreConfig, Timestamp};

use crate::cli::{EvalArgs, EvalDirection, EvalSize};
use crate::output::outln;
use crate::settings::{DataArgs, Settings};

/// The pipeline as a detector: works and pages go through the embedded store, the
/// embedded index (with the settings' `[index]` values) and matching tasks (`Matcher`,
/// with the settings' `[matcher]` values), exactly as `zhiwen import` and
/// `zhiwen match` run them. Forward: the works first, then one task over the pages.
/// Reverse: the pages first (one task stores and indexes their fingerprints), then the
/// works, matched against the stored pages by a task scoped to what changed since.
pub struct PipelineDetector {
    params: Params,
    config: MatcherConfig,
    index: zhiwen_index::IndexConfig,
    direction: EvalDirection,
    dir: tempfile::TempDir,
    /// The catalogue profile of the last run (for `--explain`).
    catalogue: Option<Arc<CatalogueProfile>>,
}

impl PipelineDetector {
    fn new(settings: &Settings, direction: EvalDirection) -> Result<Self> {
        Ok(PipelineDetector {
            params: settings.params.clone(),
            config: settings.matcher.clone(),
            index: settings.index,
            direction,
            dir: tempfile::tempdir().context("cannot create a temporary directory")?,
            catalogue: None,
        })
    }

    /// The detector's output and the catalogue profile its matcher decided with.
    async fn run(&self, works: &[Work], pages: &[Page]) -> Result<(DetectorOutput, Arc<CatalogueProfile>)> {
        let data = self.dir.path().join("data");
        let stores = zhiwen_store::open(&StoreConfig::embedded(&data)).await?;
        let index: Arc<dyn CandidateIndex> = Arc::new(EmbeddedIndex::open(data.join("index.sqlite"), self.index)?);
        let fp = Fingerprinter::new(self.params.clone())?;
        let matcher = Matcher::new(stores.clone(), index.clone(), fp, self.config.clone());

        let task = |scope: Scope| {
            let matcher = matcher.clone();
            async move {
                let summary =
                    run_match_task(&matcher, TaskSpec::new(scope), &TaskControl::default(), &NoProgress).await?;
                tracing::info!(?summary, "evaluation task done");
                anyhow::Ok(())
            }
        };
        let section_of = match self.direction {
            EvalDirection::Forward => {
                let section_of = register_works(&stores, works).await?;
                self.store_pages(&stores, pages).await?;
                task(Scope::All).await?;
                section_of
            }
            EvalDirection::Reverse => {
                self.store_pages(&stores, pages).await?;
                task(Scope::All).await?;
                // The works change after this instant and no page does: the second task
                // indexes the works and matches them against the stored pages only.
                let since = Timestamp::now();
                let section_of = register_works(&stores, works).await?;
                task(Scope::Since(since)).await?;
                section_of
            }
        };

        let mut out = DetectorOutput::default();
        let mut page_of: HashMap<i64, String> = HashMap::new();
        let by_url: HashMap<String, &Page> = pages
            .iter()
            .map(|p| (zhiwen_store::normalize_url(&p.url).map(|(u, _)| u).unwrap_or_else(|_| p.url.clone()), p))
            .collect();
        let mut after = 0;
        loop {
            let refs = stores.pages.list_pages(None, after, 1000).await?;
            let Some(last) = refs.last() else { break };
            after = last.id;
            for r in refs {
                if let Some(p) = by_url.get(&r.url) {
                    page_of.insert(r.id, p.id.clone());
                }
            }
        }
        // Families: index families that nominated the section for the page, plus the
        // verification's own flags on recorded matches.
        let mut families: HashMap<(String, String, String), (BTreeSet<Family>, usize)> = HashMap::new();
        for (&page_id, dpage) in &page_of {
            let keys = match matcher.page_lookup_keys(page_id).await {
                Ok(Some(keys)) => keys,
                Ok(None) => continue,
                Err(e) => {
                    if let Some(p) = pages.iter().find(|p| &p.id == dpage) {
                        out.failures.push((p.id.clone(), format!("not fingerprinted: {e}")));
                    }
                    continue;
                }
            };
            let found = index.lookup(Namespace::Sections, &keys, self.config.candidate_limit).await?;
            for c in found.candidates {
                let Some((work, section)) = section_of.get(&(c.doc as i64)) else { continue };
                let e = families.entry((dpage.clone(), work.clone(), section.clone())).or_default();
                for (f, _) in c.hits.iter() {
                    e.0.insert(match f {
                        IndexFamily::SimhashBlock => Family::Simhash,
                        IndexFamily::Dna => Family::Dna,
                        IndexFamily::MegaShingle => Family::MegaShingle,
                        IndexFamily::LshBand => Family::LshBand,
                        IndexFamily::WinnowInitials => Family::WinnowInitials,
                        IndexFamily::WinnowChars => Family::WinnowChars,
                    });
                }
            }
        }
        let mut after = 0;
        loop {
            let ms = stores.matches.list_matches(&MatchQuery::default(), after, 500).await?;
            let Some(last) = ms.last() else { break };
            after = last.id;
            for m in ms {
                let (Some(page), Some((work, section))) = (page_of.get(&m.page_id), section_of.get(&m.section_id))
                else {
                    continue;
                };
                let e = families.entry((page.clone(), work.clone(), section.clone())).or_default();
                e.0.extend(zhiwen_eval::family_flags(&m.comparison, &self.params, &self.config.thresholds));
                e.1 = m.comparison.copied_chars;
                out.detections.push(Detection {
                    page_id: page.clone(),
                    work_id: work.clone(),
                    section_id: section.clone(),
                    kind: m.comparison.verdict.kind,
                    score: m.comparison.verdict.score,
                    evidence: m.comparison.evidence.iter().map(|e| (e.b_start, e.b_end)).collect(),
                });
            }
        }
        for ((page_id, work_id, section_id), (f, copied_chars)) in families {
            out.family_hits.push(FamilyHit {
                page_id,
                work_id,
                section_id,
                families: f.into_iter().collect(),
                copied_chars,
            });
        }
        Ok((out, matcher.catalogue().await?))
    }

    /// Store the pages as served (bytes and the header's charset) as ingest stores a
    /// fetched HTML page ([`zhiwen_ingest::pages::build_page`]: its canonical text and the
    /// tag of its making, which the matcher analyses it from). A page ingest refuses is
    /// stored with its body and no text, as an import of its bytes would leave it.
    async fn store_pages(&self, stores: &zhiwen_store::Stores, pages: &[Page]) -> Result<()> {
        let limits = zhiwen_ingest::ImportLimits::default();
        let mut new_pages = Vec::new();
        for p in pages {
            let raw = zhiwen_ingest::pages::RawPage {
                url: &p.url,
                body: p.bytes.clone(),
                format: InputFormat::Html,
                charset_hint: p.http_charset.as_deref(),
                fetched_at: Timestamp::now(),
                http_status: Some(200),
                source: PageSource::Import("eval".into()),
            };
            new_pages.push(match zhiwen_ingest::pages::build_page(raw, &self.params.canon, &limits) {
                Ok(built) => built.page,
                Err(_) => NewPage {
                    url: p.url.clone(),
                    fetched_at: Timestamp::now(),
                    http_status: Some(200),
                    charset: p.http_charset.clone(),
                    body: p.bytes.clone(),
                    text: String::new(),
                    format: None,
                    canon_tag: None,
                    source: PageSource::Import("eval".into()),
                },
            });
        }
        for chunk in new_pages.chunks(200) {
            stores.pages.upsert_pages(chunk).await?;
        }
        Ok(())
    }
}

/// Register the works with their sections as the dataset divides them; the dataset's
/// (work, section) ids of every stored section id.
async fn register_works(stores: &zhiwen_store::Stores, works: &[Work]) -> Result<HashMap<i64, (String, String)>> {
    let mut new_works = Vec::new();
    for w in works {
        let mut sections = Vec::new();
        let mut at = 0u64;
        for s in &w.sections {
            let n = s.text.chars().count() as u64;
            sections.push(NewSection {
                ordinal: s.ordinal,
                title: s.title.clone(),
                text: s.text.clone(),
                char_start: at,
                char_end: at + n,
            });
            at += n + 2;
        }
        new_works.push(NewWork {
            owner: w.owner.clone(),
            external_id: w.id.clone(),
            title: w.title.clone(),
            author: w.author.clone(),
            source_file: None,
            charset: Some("UTF-8".into()),
            text: w.text(),
            sections,
        });
    }
    let mut section_of: HashMap<i64, (String, String)> = HashMap::new();
    for chunk in new_works.chunks(100) {
        for (w, up) in chunk.iter().zip(stores.works.upsert_works(chunk).await?) {
            let dw = works.iter().find(|d| d.id == w.external_id).context("registered work")?;
            for (ordinal, sid) in up.sections {
                if let Some(ds) = dw.sections.iter().find(|s| s.ordinal == ordinal) {
                    section_of.insert(sid, (dw.id.clone(), ds.id.clone()));
                }
            }
        }
    }
    Ok(section_of)
}

impl Detector for PipelineDetector {
    fn name(&self) -> String {
        let order = match self.direction {
            EvalDirection::Forward => "works, then pages",
            EvalDirection::Reverse => "pages, then works (reverse direction)",
        };
        format!("pipeline: embedded store + embedded index + matching tasks (zhiwen match), {order}")
    }

    fn detect(&mut self, works: &[Work], pages: &[Page]) -> Result<DetectorOutput, EvalError> {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| EvalError::Detector(format!("runtime: {e}")))?;
        let (output, catalogue) =
            rt.block_on(self.run(works, pages)).map_err(|e| EvalError::Detector(format!("{e:#}")))?;
        self.catalogue = Some(catalogue);
        Ok(output)
    }
}

pub fn run(data: &DataArgs, args: &EvalArgs) -> Result<()> {
    let settings = Settings::resolve(data)?;
    let mut opts = match args.size {
        EvalSize::Tiny => {
            EvalOptions { corpus_dir: None, dataset: zhiwen_eval::dataset::DatasetConfig::tiny(args.seed) }
        }
        EvalSize::Default => EvalOptions::default_set(args.seed),
        EvalSize::Large => EvalOptions::large(args.seed),
    };
    if let Some(dir) = &args.corpus {
        opts.corpus_dir = Some(dir.clone());
    }
    let t = std::time::Instant::now();
    let dataset = opts.build_dataset().context("cannot build the evaluation set")?;
    let generation_secs = t.elapsed().as_secs_f64();
    if let Some(dir) = &args.write_set {
        write_set(&dataset, dir)?;
        outln!(
            "wrote {} works ({} sections) and {} pages to {}",
            dataset.works.len(),
            dataset.section_count(),
            dataset.pages.len(),
            dir.display()
        )?;
        return Ok(());
    }
    let mut detector = PipelineDetector::new(&settings, args.direction)?;
    let (mut report, output) = evaluate(&dataset, &mut detector)?;
    report.generation_secs = generation_secs;
    outln!("{report}")?;
    if args.explain {
        let profile = detector.catalogue.clone().unwrap_or_default();
        let (k, t) = (settings.params.winnow.chars_k, &settings.matcher.thresholds);
        let rule = |c: &mut Comparison, a: &Analysis, b: &Analysis| profile.discount(c, a, b, k, t);
        outln!("{}", zhiwen_eval::explain(&dataset, &output, &settings.params, t, &rule)?)?;
    }
    if let Some(path) = &args.out {
        write_json(path, &report)?;
    }
    Ok(())
}

/// Files of a set written by `--write-set`.
pub const SET_WORKS: &str = "works.jsonl";
pub const SET_PAGES: &str = "pages.warc";
pub const SET_LABELS: &str = "labels.jsonl";

/// Write the set to `dir` in the formats `zhiwen import works` and `zhiwen import pages`
/// read: the works as JSONL (each section under a heading line the chapter splitter
/// recognises, so that the import divides each work as the set does), the pages as
/// WARC response records (the bytes as served, the header's charset when the set's
/// server sends one), and the labels as one JSON page (without its bytes) a line.
pub fn write_set(dataset: &zhiwen_eval::dataset::Dataset, dir: &Path) -> Result<()> {
    use std::io::{BufWriter, Write};
    std::fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let create = |name: &str| -> Result<BufWriter<std::fs::File>> {
        let path = dir.join(name);
        let f = std::fs::File::create(&path).with_context(|| format!("cannot create {}", path.display()))?;
        Ok(BufWriter::new(f))
    };
    let mut works = create(SET_WORKS)?;
    for w in &dataset.works {
        let text = if w.sections.len() > 1 {
            let parts: Vec<String> =
                w.sections.iter().map(|s| format!("第{}回 {}\n\n{}", s.ordinal + 1, s.title, s.text)).collect();
            parts.join("\n\n")
        } else {
            w.text()
        };
        let line = serde_json::json!({
            "id": w.id, "owner": w.owner, "title": w.title, "author": w.author, "text": text,
        });
        serde_json::to_writer(&mut works, &line)?;
        works.write_all(b"\n")?;
    }
    works.flush().with_context(|| format!("cannot write {SET_WORKS}"))?;

    let mut warc = create(SET_PAGES)?;
    for p in &dataset.pages {
        let ctype = match &p.http_charset {
            Some(c) => format!("text/html; charset={c}"),
            None => "text/html".to_owned(),
        };
        // The WARC writer of the evidence captures (request and response records): the
        // importer reads the response as it reads a capture.
        let response_head =
            format!("HTTP/1.1 200 OK\r\nContent-Type: {ctype}\r\nContent-Length: {}\r\n\r\n", p.bytes.len());
        let request_head = format!("GET {} HTTP/1.1\r\n\r\n", p.url);
        warc.write_all(&zhiwen_evidence::exchange_records(&zhiwen_evidence::HttpExchange {
            target_uri: &p.url,
            ip: None,
            date: "2024-01-01T00:00:00Z",
            request_head: request_head.as_bytes(),
            response_head: response_head.as_bytes(),
            body: &p.bytes,
        }))?;
    }
    warc.flush().with_context(|| format!("cannot write {SET_PAGES}"))?;

    let mut labels = create(SET_LABELS)?;
    for p in &dataset.pages {
        serde_json::to_writer(&mut labels, p)?;
        labels.write_all(b"\n")?;
    }
    labels.flush().with_context(|| format!("cannot write {SET_LABELS}"))?;
    Ok(())
}

fn write_json(path: &Path, report: &zhiwen_eval::EvalReport) -> Result<()> {
    let json = serde_json::to_string_pretty(report)?;
    std::fs::write(path, json).with_context(|| format!("cannot write {}", path.display()))
}
