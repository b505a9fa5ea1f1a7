//! Generation: the registered works drawn from the corpus, the pools of negatives and
//! filler (near duplicates of registered sections refused), the set phrases and the
//! portal's chrome, then every page class in turn (the pages themselves: `pages.rs`).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::path::Path;

use super::site::PortalChrome;
use super::transform::Tools;
use super::{Dataset, DatasetConfig, DatasetNotes, NearDupIndex, PageClass, Section, Work, WorkKind};
use crate::corpus::{self, CorpusDoc, S2t};
use crate::rng::Rng;
use crate::EvalError;

const NOVELS: [(&str, &str, &str); 4] = [
    ("sanguo", "三国演义", "罗贯中"),
    ("shuihu", "水浒传", "施耐庵"),
    ("hongloumeng", "红楼梦", "曹雪芹"),
    ("xiyouji", "西游记", "吴承恩"),
];

/// News stories used as works are between these lengths (characters).
const NEWS_WORK_CHARS: (usize, usize) = (400, 3000);
/// Unrelated texts (filler, negatives) are between these lengths.
const FILLER_CHARS: (usize, usize) = (250, 2500);

/// Draws texts from a shuffled candidate list, refusing near duplicates of registered sections.
pub(super) struct Pool {
    docs: Vec<CorpusDoc>,
    next: usize,
    /// Start over when the list runs out: only for filler, so that the classes generated
    /// last still get their pages on the large set (one unrelated story then wraps
    /// several pages, as a syndicated story does). A negative's own text never repeats.
    wraps: bool,
    /// Times the list was started over.
    round: usize,
    /// Texts handed out again after the list ran out.
    pub(super) drawn_again: usize,
}

impl Pool {
    fn new(mut docs: Vec<CorpusDoc>, rng: &mut Rng) -> Self {
        rng.shuffle(&mut docs);
        Pool { docs, next: 0, wraps: false, round: 0, drawn_again: 0 }
    }

    /// A pool that starts over when it runs out (see `wraps`).
    fn wrapping(docs: Vec<CorpusDoc>, rng: &mut Rng) -> Self {
        Pool { wraps: true, ..Pool::new(docs, rng) }
    }

    /// The next candidate that is not a near duplicate of a registered section.
    pub(super) fn draw(&mut self, registered: &NearDupIndex, excluded: &mut usize) -> Option<CorpusDoc> {
        // A whole list looked at without a text to hand out is the end, wrapping or not.
        for _ in 0..self.docs.len() {
            if self.next == self.docs.len() {
                if !self.wraps {
                    return None;
                }
                (self.next, self.round) = (0, self.round + 1);
            }
            let d = &self.docs[self.next];
            self.next += 1;
            let s = registered.shingles(&d.text);
            if s.is_empty() {
                continue;
            }
            if registered.is_near_duplicate(&s) {
                if self.round == 0 {
                    *excluded += 1;
                }
                continue;
            }
            if self.round > 0 {
                self.drawn_again += 1;
            }
            return Some(d.clone());
        }
        None
    }
}

pub(super) struct Generator<'a> {
    pub(super) config: &'a DatasetConfig,
    pub(super) rng: Rng,
    pub(super) tools: Tools,
    pub(super) works: Vec<Work>,
    pub(super) registered: NearDupIndex,
    pub(super) other_chapters: Pool,
    pub(super) same_day: Pool,
    pub(super) filler: Pool,
    pub(super) notes: DatasetNotes,
    pub(super) phrases_of: HashMap<String, Vec<String>>,
    pub(super) common: Vec<String>,
    pub(super) portal: PortalChrome,
    /// URLs of registered stories (or of the corpus's link-list pages), one list a story.
    pub(super) link_sources: Vec<Vec<String>>,
    /// Stock clauses of registered stories (`formulae::stock_clauses`), for the stories
    /// whose stock clauses hold at least `winnow.min_passage_chars` characters together.
    pub(super) stock_of: Vec<(String, Vec<String>)>,
}

fn chars_in(text: &str, (lo, hi): (usize, usize)) -> bool {
    let n = text.chars().count();
    (lo..=hi).contains(&n)
}

/// The day of a broadcast story: `YYYYMMDD` of `xwlb-YYYYMMDD-NN`, or the day number of
/// a made-up one, `bcast-DDDDDDDD-NN`.
fn xwlb_day(id: &str) -> Option<&str> {
    id.strip_prefix("xwlb-").or_else(|| id.strip_prefix("bcast-")).and_then(|r| r.get(..8))
}

/// The fixed opening every story of a broadcast has (新闻联播's own).
pub const BROADCAST_OPENING: &str = "央视网消息（新闻联播）：";
/// Stories per made-up day of broadcast (新闻联播 has 10-15).
const STORIES_PER_DAY: usize = 12;

/// For a corpus without broadcast transcripts: set a third of the web news stories apart
/// as broadcasts. Each gets the fixed opening and an id naming a made-up day
/// (`bcast-DDDDDDDD-NN`, twelve stories a day). Returns (broadcasts, the other web news).
/// This keeps the same-day trap (stories that share a broadcast's opening and nothing
/// else); it does not reproduce the real transcripts' shared formulae.
pub fn made_up_broadcasts(mut docs: Vec<CorpusDoc>, r: &mut Rng) -> (Vec<CorpusDoc>, Vec<CorpusDoc>) {
    r.shuffle(&mut docs);
    let rest = docs.split_off(docs.len() / 3);
    let broadcasts = docs
        .into_iter()
        .enumerate()
        .map(|(i, d)| CorpusDoc {
            id: format!("bcast-{:08}-{:02}", i / STORIES_PER_DAY + 1, i % STORIES_PER_DAY + 1),
            title: d.title,
            text: format!("{BROADCAST_OPENING}{}", d.text),
        })
        .collect();
    (broadcasts, rest)
}

impl<'a> Generator<'a> {
    pub(super) fn new(dir: &Path, config: &'a DatasetConfig) -> Result<Self, EvalError> {
        let rng = Rng::new(config.seed);
        let classics = corpus::read_jsonl(dir, corpus::CLASSICS)?;
        let inews = corpus::read_jsonl(dir, corpus::NEWS_INEWS)?;
        let (xwlb, inews) = if corpus::has(dir, corpus::NEWS_XWLB) {
            (corpus::read_jsonl(dir, corpus::NEWS_XWLB)?, inews)
        } else {
            made_up_broadcasts(inews, &mut rng.fork("broadcasts"))
        };
        let ad_lines = corpus::read_ad_lines(dir)?;
        let s2t = S2t::load(dir)?;
        let mut notes = DatasetNotes::default();
        let mut registered = NearDupIndex::new()?;

        // Novels: a random subset of each novel's chapters is registered.
        let mut works = Vec::new();
        let mut unregistered_chapters = Vec::new();
        let mut r = rng.fork("novels");
        for (key, title, author) in NOVELS {
            let prefix = format!("novel-{key}-");
            let mut chapters: Vec<&CorpusDoc> = classics.iter().filter(|d| d.id.starts_with(&prefix)).collect();
            if chapters.len() < config.chapters_per_novel + 1 {
                return Err(EvalError::NotEnoughData(format!("{title}: {} chapters", chapters.len())));
            }
            let mut order: Vec<usize> = (0..chapters.len()).collect();
            r.shuffle(&mut order);
            let chosen: BTreeSet<usize> = order[..config.chapters_per_novel].iter().copied().collect();
            let mut sections = Vec::new();
            for (i, d) in chapters.drain(..).enumerate() {
                if chosen.contains(&i) {
                    let heading = d.title.split_once(' ').map_or(d.title.as_str(), |(_, h)| h).to_owned();
                    sections.push(Section {
                        id: d.id.clone(),
                        ordinal: sections.len() as u32,
                        title: heading,
                        text: d.text.clone(),
                    });
                    let s = registered.shingles(&d.text);
                    registered.add(&s);
                } else {
                    unregistered_chapters.push(d.clone());
                }
            }
            works.push(Work {
                id: format!("novel-{key}"),
                owner: "public-domain-classics".into(),
                title: title.into(),
                author: author.into(),
                kind: WorkKind::Novel,
                sections,
            });
        }

        // News: stories of the right length, none a near duplicate of another work.
        let mut r = rng.fork("news-works");
        let mut news_work = |docs: &[CorpusDoc], n: usize, owner: &str, r: &mut Rng, notes: &mut DatasetNotes| {
            let mut cands: Vec<&CorpusDoc> = docs.iter().filter(|d| chars_in(&d.text, NEWS_WORK_CHARS)).collect();
            r.shuffle(&mut cands);
            let mut out = Vec::new();
            for d in cands {
                if out.len() == n {
                    break;
                }
                if registered.add_if_new(&d.text) {
                    out.push(Work {
                        id: d.id.clone(),
                        owner: owner.into(),
                        title: d.title.clone(),
                        author: owner.into(),
                        kind: WorkKind::News,
                        sections: vec![Section {
                            id: d.id.clone(),
                            ordinal: 0,
                            title: d.title.clone(),
                            text: d.text.clone(),
                        }],
                    });
                } else {
                    notes.near_duplicates_excluded += 1;
                }
            }
            out
        };
        let xw = news_work(&xwlb, config.xwlb_works, "cctv", &mut r, &mut notes);
        let iw = news_work(&inews, config.inews_works, "inews", &mut r, &mut notes);
        if xw.len() < config.xwlb_works || iw.len() < config.inews_works {
            return Err(EvalError::NotEnoughData("distinct news stories".into()));
        }
        let days: HashSet<String> = xw.iter().filter_map(|w| xwlb_day(&w.id)).map(str::to_owned).collect();
        let registered_ids: HashSet<String> = xw.iter().chain(&iw).map(|w| w.id.clone()).collect();
        works.extend(xw);
        works.extend(iw);

        let same_day_docs: Vec<CorpusDoc> = xwlb
            .iter()
            .filter(|d| !registered_ids.contains(&d.id) && xwlb_day(&d.id).is_some_and(|day| days.contains(day)))
            .filter(|d| chars_in(&d.text, FILLER_CHARS))
            .cloned()
            .collect();
        let filler_docs: Vec<CorpusDoc> = xwlb
            .iter()
            .chain(&inews)
            .filter(|d| !registered_ids.contains(&d.id) && !d.title.is_empty())
            .filter(|d| xwlb_day(&d.id).is_none_or(|day| !days.contains(day)))
            .filter(|d| chars_in(&d.text, FILLER_CHARS))
            .cloned()
            .collect();
        let mut r = rng.fork("pools");
        let other_chapters = Pool::new(unregistered_chapters, &mut r);
        let same_day = Pool::new(same_day_docs, &mut r);
        let filler = Pool::wrapping(filler_docs, &mut r);

        let news_corpus: Vec<&CorpusDoc> = xwlb.iter().chain(&inews).collect();
        let link_sources = super::formulae::link_sources(&works, &news_corpus);
        let min_passage = zhiwen_core::Params::default().winnow.min_passage_chars;
        let stock_of: Vec<(String, Vec<String>)> = super::formulae::stock_clauses(&works, &news_corpus, &registered)
            .into_iter()
            .filter(|(_, c)| c.iter().map(|s| s.chars().count()).sum::<usize>() >= min_passage)
            .collect();
        let texts = works.iter().flat_map(|w| w.sections.iter().map(|s| s.text.as_str()));
        let tools = Tools::new(s2t, ad_lines, texts, 5);
        notes.homophone_chars = tools.homophones.len();

        let mut g = Generator {
            config,
            rng,
            tools,
            works,
            registered,
            other_chapters,
            same_day,
            filler,
            notes,
            phrases_of: HashMap::new(),
            common: Vec::new(),
            portal: PortalChrome::default(),
            link_sources,
            stock_of,
        };
        g.find_common_phrases();
        g.build_portal()?;
        Ok(g)
    }

    pub(super) fn sections(&self, kind: WorkKind) -> Vec<(&Work, &Section)> {
        self.works.iter().filter(|w| w.kind == kind).flat_map(|w| w.sections.iter().map(move |s| (w, s))).collect()
    }

    /// Idioms (4-character OpenCC phrases) in each section, and 6-grams of Han
    /// characters that occur in at least 3 sections.
    fn find_common_phrases(&mut self) {
        let idioms: HashSet<Vec<char>> = self.tools.s2t.phrase_keys(4).map(<[char]>::to_vec).collect();
        let mut df: HashMap<[char; 6], (u32, u32)> = HashMap::new();
        let mut n = 0u32;
        for w in &self.works {
            for s in &w.sections {
                n += 1;
                let chars: Vec<char> = s.text.chars().collect();
                let mut found = BTreeSet::new();
                for win in chars.windows(4) {
                    if idioms.contains(win) {
                        found.insert(win.iter().collect::<String>());
                    }
                }
                self.phrases_of.insert(s.id.clone(), found.into_iter().collect());
                for win in chars.windows(6) {
                    if win.iter().all(|&c| zhiwen_core::initials::initial_of(c).is_some()) {
                        let key = [win[0], win[1], win[2], win[3], win[4], win[5]];
                        let e = df.entry(key).or_insert((0, 0));
                        if e.1 != n {
                            *e = (e.0 + 1, n);
                        }
                    }
                }
            }
        }
        let mut common: Vec<String> =
            df.into_iter().filter(|(_, (d, _))| *d >= 3).map(|(k, _)| k.iter().collect()).collect();
        common.sort_unstable();
        self.notes.common_phrases = common.len() + self.phrases_of.values().map(Vec::len).sum::<usize>();
        self.common = common;
    }

    /// The portal's site-wide chrome: hot headlines of unrelated stories and teasers
    /// (headline and opening words, at most 40 characters) of registered news stories.
    fn build_portal(&mut self) -> Result<(), EvalError> {
        let mut r = self.rng.fork("portal");
        let mut hot = Vec::new();
        for _ in 0..15 {
            if let Some(d) = self.filler.draw(&self.registered, &mut self.notes.near_duplicates_excluded) {
                hot.push(d.title);
            }
        }
        let news = self.sections(WorkKind::News);
        let mut teasers = Vec::new();
        for _ in 0..8 {
            if let Some((_, s)) = r.pick(&news) {
                let opening: String = s.text.chars().take(40).collect();
                teasers.push((s.title.clone(), format!("{opening}……")));
            }
        }
        self.portal = PortalChrome { hot_titles: hot, teasers };
        Ok(())
    }

    pub(super) fn run(mut self) -> Result<Dataset, EvalError> {
        let mut pages = Vec::new();
        for class in PageClass::ALL {
            let mut r = self.rng.fork(class.as_str());
            let n = match class {
                c if c.is_positive() => self.config.pages_per_class,
                PageClass::TemplatedReport => self.config.templated_reports,
                PageClass::LinkSpam => self.config.link_spam_pages,
                PageClass::OfficialFormulae => self.config.official_formulae_pages,
                _ => self.config.negatives_per_class,
            };
            for i in 0..n {
                let page = if class.is_positive() {
                    self.positive(class, i, &mut r)?
                } else {
                    match self.negative(class, i, &mut r)? {
                        Some(p) => p,
                        None => break,
                    }
                };
                pages.push(page);
            }
        }
        self.notes.filler_drawn_again = self.filler.drawn_again;
        Ok(Dataset { config: self.config.clone(), works: self.works, pages, notes: self.notes })
    }

    pub(super) fn draw_filler(&mut self) -> Result<CorpusDoc, EvalError> {
        self.filler
            .draw(&self.registered, &mut self.notes.near_duplicates_excluded)
            .ok_or_else(|| EvalError::NotEnoughData("unrelated news stories for filler".into()))
    }
}
