//! Every knob of the matcher, in one serialisable struct with defaults.
//!
//! The CLI and the server deserialise it from the `[matcher]` table of the configuration
//! file (unknown fields are refused, so a typo is an error, not a silent default).

use serde::{Deserialize, Serialize};
use zhiwen_core::compare::Thresholds;

/// Configuration of [`crate::Matcher`] and everything built on it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct MatcherConfig {
    /// Decision thresholds of the verification (the core's defaults, chosen on the
    /// evaluation set: containment 0.5, near duplicate 0.8, at least 50 copied
    /// characters, excerpts from 100 characters and 15% of a text, or from 500).
    pub thresholds: Thresholds,
    /// At most this many candidates (most shared index keys first) are verified per
    /// document.
    pub candidate_limit: usize,
    /// A candidate must share at least this many index keys (all families) to be
    /// verified. A copy of `min_copied_chars` (50) characters shares about 9 winnowed
    /// character keys, so 3 drops chance hits without losing real copies. Divided by
    /// `m` (rounded up) when the winnowed keys were sampled 1 in `m`, as below.
    pub min_candidate_hits: u32,
    /// A candidate must also share at least this many winnowed keys (characters and
    /// pinyin initials together) to be verified: a copy of `min_copied_chars` (50)
    /// characters shares several, while the simhash, DNA and LSH families also hit
    /// unrelated Chinese text by chance. When the index sampled the query's winnowed
    /// keys (1 in `m`), the minimum is divided by `m` (rounded up). 5 (was 2): on every
    /// evaluation set (default seeds 1-3 and 11-13, large seeds 1-4) it records exactly
    /// the matches 2 records, while at 100k sections it leaves 1.8 candidates per page to
    /// verify instead of 11.6 (`docs/bench-matcher.md`).
    pub min_winnow_hits: u32,
    /// Section analyses kept in memory (sections are verified again and again), at most
    /// this many ...
    pub section_cache: usize,
    /// ... and at most this many MiB of them together (an analysis is about 36 bytes per
    /// character of its section: 145 KB for a 4,000-character chapter). The bound that
    /// keeps a matching process's memory independent of the catalogue's size; a section
    /// dropped from the cache is read and analysed again when it is next a candidate
    /// (0 keeps none).
    pub section_cache_mb: usize,
    /// Add every matched page to the page namespace of the index (needed by the reverse
    /// direction, work -> stored pages). Nothing else of a page's analysis is stored: a
    /// page is analysed again from its text whenever it is needed (verification in either
    /// direction, `zhiwen reindex`), which costs less than writing and keeping a record for
    /// every page crawled.
    pub index_pages: bool,
    /// The page namespace keeps 1 in this many winnowed keys of a page (a power of two;
    /// 1 keeps all) and no coarse keys, chosen by value as
    /// [`zhiwen_index::sample_winnowed_keys_only`] does, and a work looked up against it
    /// is sampled the same way. Only the reverse direction reads them: with 8, a 10 KB
    /// page adds ~140 keys instead of ~1,300 and the candidate minimums are divided by
    /// 8. 8 (was 4): the same recall on every evaluation set in the reverse direction,
    /// one accused negative page fewer, no slower reverse lookups, and Redis spends a
    /// quarter less per new page (`docs/evaluation.md`). An index built with a smaller
    /// value still answers: its pages keep every key a larger value looks up. After
    /// lowering it, `zhiwen reindex --only pages` gives the stored pages their other keys.
    pub page_index_sampling: u64,
    /// The section namespace keeps 1 in this many winnowed keys of a section (a power of
    /// two, chosen by value as for pages) and no coarse keys; a page is looked up with
    /// its winnowed keys sampled at least as coarsely, and the candidate minimums are
    /// divided accordingly. 8 (was 1, every key of every family): ~70 entries for a
    /// 1,500-character section instead of ~640 (1.6 bytes of Redis per registered
    /// character at 1M sections instead of ~15), with every row of the evaluation
    /// unchanged (default seeds 1-10, large seeds 1-4, both directions; 16 loses short
    /// excerpts and edited copies). A page shares a single sampled key with many sections
    /// by chance; those candidates are confirmed against each section's compact winnowed
    /// keys in the store (at least `min_winnow_hits` shared) before any text is read, so
    /// matching is faster than with every key; and the catalogue-common text, known from
    /// a sample of its keys, is read as a sample ([`crate::catalogue`]). The coarsest
    /// value an index was written with is recorded in the store, and lookups never sample
    /// more finely than that: an index written with every key keeps answering (its
    /// sections hold the sampled keys too), and `zhiwen reindex --only sections` frees
    /// the memory of the keys no longer looked up; after lowering the value, the same
    /// command gives the sections their other keys.
    pub section_index_sampling: u64,
    /// Pages matched concurrently by a task (each on a blocking thread). Four per core by
    /// default (4-64): a page waiting on the index or the store leaves its core to another.
    /// On two cores, 4 matched 16-22% more pages per second than 2 at 100k and 10k
    /// sections; 8 matched 513-529 new pages/s against 473-495 with 4 at a million
    /// sections on Redis (the cores 70% busy with 4), and the same as 4 where nothing waits
    /// long (100k sections in the embedded index; the evaluation job, whose CPU time and
    /// peak memory did not change).
    pub concurrency: usize,
    /// Pages per task batch; a checkpoint is written after each batch.
    pub batch_size: usize,
    /// Shared-boilerplate suppression.
    pub boilerplate: BoilerplateConfig,
    /// Text common to many registered sections is no evidence of an excerpt.
    pub catalogue: CatalogueConfig,
    /// Text many stored pages hold too (a formula) is no evidence of an excerpt.
    pub seen_text: SeenTextConfig,
    /// The daily schedule.
    pub schedule: ScheduleConfig,
    /// Notification of new high-confidence matches.
    pub webhook: WebhookConfig,
    /// A running task whose worker has not written progress for this many seconds is
    /// taken over by another worker (a worker on the same host is checked directly).
    pub lease_seconds: u64,
    /// Scale-out workers sharing tasks through Redis Streams.
    pub workers: WorkersConfig,
    /// Queue an evidence capture of the page when a match is first recorded (a task of
    /// kind [`crate::task::CAPTURE_TASK_KIND`], run beside matching by the capture worker,
    /// never inside the matching task).
    pub capture_new_matches: bool,
}

impl MatcherConfig {
    /// The winnowed-key sampling modulus of the page namespace: `page_index_sampling`
    /// rounded up to a power of two, at most 64.
    pub fn page_sampling_modulus(&self) -> u64 {
        self.page_index_sampling.clamp(1, 64).next_power_of_two()
    }

    /// The winnowed-key sampling modulus of the section namespace:
    /// `section_index_sampling` rounded up to a power of two, at most 64.
    pub fn section_sampling_modulus(&self) -> u64 {
        self.section_index_sampling.clamp(1, 64).next_power_of_two()
    }

    /// The keys a section has in the section namespace: every index key when
    /// `section_index_sampling` is 1, otherwise 1 in `section_sampling_modulus` of its
    /// winnowed keys and nothing else (the page namespace's layout, see
    /// [`MatcherConfig::page_index_keys`]).
    pub fn section_index_keys(&self, fingerprints: &zhiwen_core::Fingerprints) -> Vec<zhiwen_core::IndexKey> {
        match self.section_sampling_modulus() {
            1 => fingerprints.index_keys(),
            m => zhiwen_index::sample_winnowed_keys_only(
                fingerprints.index_keys_of(zhiwen_core::IndexFamily::is_winnowed),
                m,
            ),
        }
    }

    /// The keys a page (or a work looked up against the pages) has in the page namespace:
    /// 1 in `page_sampling_modulus` of its winnowed keys and no coarse keys (a reverse
    /// candidate must share a winnowed key anyway; see
    /// [`zhiwen_index::sample_winnowed_keys_only`]). A page namespace written with coarse
    /// keys still answers: the coarse entries are never looked up, and go when the page is
    /// indexed again.
    pub fn page_index_keys(&self, fingerprints: &zhiwen_core::Fingerprints) -> Vec<zhiwen_core::IndexKey> {
        zhiwen_index::sample_winnowed_keys_only(
            fingerprints.index_keys_of(zhiwen_core::IndexFamily::is_winnowed),
            self.page_sampling_modulus(),
        )
    }
}

impl Default for MatcherConfig {
    fn default() -> Self {
        MatcherConfig {
            thresholds: Thresholds::default(),
            candidate_limit: 50,
            min_candidate_hits: 3,
            min_winnow_hits: 5,
            section_cache: 20_000,
            section_cache_mb: 128,
            index_pages: true,
            page_index_sampling: 8,
            section_index_sampling: 8,
            concurrency: std::thread::available_parallelism().map_or(8, |n| n.get() * 4).clamp(4, 64),
            batch_size: 64,
            boilerplate: BoilerplateConfig::default(),
            catalogue: CatalogueConfig::default(),
            seen_text: SeenTextConfig::default(),
            schedule: ScheduleConfig::default(),
            webhook: WebhookConfig::default(),
            lease_seconds: 600,
            workers: WorkersConfig::default(),
            capture_new_matches: true,
        }
    }
}

/// How shared boilerplate (a site's header on every page, a news agency's prefix on
/// every story) is measured and suppressed before verification.
///
/// A site's profile is the set of character k-grams (the winnowing `chars_k`) that occur
/// on at least `min_share` of its first `sample_pages` pages (and on at least
/// `min_pages` of them). Those k-grams are blanked on every page of the site before the
/// page is looked up and compared, so boilerplate neither produces candidates nor counts
/// as copied text. Texts copied from a work differ from page to page of one site, so
/// they are never in a profile.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct BoilerplateConfig {
    /// Suppress boilerplate at all.
    pub enabled: bool,
    /// Pages sampled per site (the first ones by id, so the profile is reproducible).
    pub sample_pages: u32,
    /// Sites with fewer stored pages than this get no profile.
    pub min_pages: u32,
    /// Share of the sampled pages a k-gram must occur on (pages with the same text count
    /// once: a template is what different pages share).
    pub min_share: f64,
    /// A site's profile is rebuilt after this many seconds (new pages change it).
    pub profile_ttl_seconds: u64,
}

impl Default for BoilerplateConfig {
    fn default() -> Self {
        BoilerplateConfig { enabled: true, sample_pages: 64, min_pages: 8, min_share: 0.5, profile_ttl_seconds: 3_600 }
    }
}

/// Text common to many registered sections (catalogue-common text): a slogan every
/// story of a programme carries in one season, the programme's fixed prefix and link
/// trailer, a set phrase of officialese, a list of names a novel repeats from chapter to
/// chapter.
///
/// Sharing such text with a page is no evidence that the page copies one of those
/// sections, so its characters do not count towards an excerpt (the verdict for a
/// passage that is a small part of both texts: `min_excerpt_chars`,
/// `min_excerpt_share`, `long_excerpt_chars`). It is measured on the catalogue itself:
/// the winnowed character keys (the keys the index holds) found in at least
/// `min_sections` registered sections. Verdicts by containment (most of a section inside
/// the page, or the page inside it) are not affected, and the evidence passages stay
/// as they are.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CatalogueConfig {
    /// Discount catalogue-common text at all.
    pub enabled: bool,
    /// A winnowed character key found in at least this many registered sections is
    /// catalogue-common (at least 2).
    pub min_sections: u32,
}

impl Default for CatalogueConfig {
    /// Chosen on the evaluation (tuning seeds; `docs/parameters.md`).
    fn default() -> Self {
        CatalogueConfig { enabled: true, min_sections: 3 }
    }
}

/// Text seen elsewhere ([`crate::seen`]): a passage of an excerpt that other stored
/// pages hold too, pages that share nothing else of the section (a stock clause of the
/// law, a portal's disclaimer, an official formula), is no evidence that the page copies
/// the section. Weighed through the page namespace of the index (so only with
/// `index_pages`), for verdicts that rest on an excerpt only: verdicts by containment are
/// never weighed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct SeenTextConfig {
    /// Weigh passages by the pages that hold them at all.
    pub enabled: bool,
    /// A passage held by at least this many documents (the registered section and the
    /// stored pages that witness it, the page judged not counted) does not count
    /// (at least 2).
    pub min_documents: u32,
}

impl Default for SeenTextConfig {
    /// 3, as the catalogue's `min_sections`: the section and two pages besides the one
    /// judged.
    fn default() -> Self {
        SeenTextConfig { enabled: true, min_documents: 3 }
    }
}

/// When the daily matching task runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ScheduleConfig {
    /// Cron expression with seconds: `sec min hour day-of-month month day-of-week [year]`.
    pub cron: String,
    /// IANA time zone the expression is read in.
    pub time_zone: String,
}

impl Default for ScheduleConfig {
    fn default() -> Self {
        ScheduleConfig { cron: "0 0 2 * * *".into(), time_zone: "Asia/Shanghai".into() }
    }
}

/// Where new high-confidence matches are pushed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WebhookConfig {
    /// Target URL (`None`: no webhook).
    pub url: Option<String>,
    /// Only new matches with at least this score are sent.
    pub min_score: f64,
    /// Attempts per delivery (1 = no retry).
    pub max_attempts: u32,
    /// Delay before the first retry, in milliseconds; doubles each time.
    pub base_delay_ms: u64,
    /// Timeout of one attempt, in milliseconds.
    pub timeout_ms: u64,
}

impl Default for WebhookConfig {
    fn default() -> Self {
        WebhookConfig { url: None, min_score: 0.8, max_attempts: 5, base_delay_ms: 500, timeout_ms: 10_000 }
    }
}

/// Knobs of the scale-out workers (`[matcher.workers]`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WorkersConfig {
    /// An entry delivered to a worker and not acknowledged for this long is taken over
    /// by another worker (XAUTOCLAIM). Longer than the slowest batch, so live workers
    /// rarely lose entries (if they do, the repeated work is harmless).
    pub claim_idle_ms: u64,
    /// How long one XREADGROUP waits for new entries.
    pub block_ms: u64,
}

impl Default for WorkersConfig {
    fn default() -> Self {
        WorkersConfig { claim_idle_ms: 60_000, block_ms: 1_000 }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bundled first chapter of 红楼梦, analysed with the default parameters.
    fn sample_analysis() -> zhiwen_core::Analysis {
        let fp = zhiwen_core::Fingerprinter::new(zhiwen_core::Params::default()).expect("default parameters");
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../samples/hongloumeng-01.txt");
        let text = std::fs::read_to_string(path).expect("bundled sample");
        fp.analyze_text(&text, zhiwen_core::canon::InputFormat::Text).expect("analysis")
    }

    #[test]
    fn the_page_sampling_is_a_power_of_two_from_1_to_64() {
        let m = |n| MatcherConfig { page_index_sampling: n, ..MatcherConfig::default() }.page_sampling_modulus();
        assert_eq!((m(0), m(1), m(3), m(4), m(5), m(1000)), (1, 1, 4, 4, 8, 64));
    }

    #[test]
    fn sections_keep_an_eighth_of_their_winnowed_keys_by_default_and_every_key_with_1() {
        let a = sample_analysis();
        let every = MatcherConfig { section_index_sampling: 1, ..MatcherConfig::default() };
        assert_eq!(every.section_index_keys(&a.fingerprints), a.fingerprints.index_keys());
        let config = MatcherConfig::default();
        assert_eq!(config.section_sampling_modulus(), 8);
        assert_eq!(config.section_index_keys(&a.fingerprints), config.page_index_keys(&a.fingerprints));
        let m = |n| MatcherConfig { section_index_sampling: n, ..MatcherConfig::default() }.section_sampling_modulus();
        assert_eq!((m(0), m(1), m(6), m(8), m(100)), (1, 1, 8, 8, 64));
    }

    #[test]
    fn pages_keep_an_eighth_of_their_winnowed_keys_and_nothing_else_by_default() {
        let a = sample_analysis();
        let all = a.fingerprints.index_keys();
        let kept = MatcherConfig::default().page_index_keys(&a.fingerprints);
        let winnowed = |keys: &[zhiwen_core::IndexKey]| {
            use zhiwen_core::IndexFamily::{WinnowChars, WinnowInitials};
            keys.iter().filter(|k| matches!(k.family, WinnowChars | WinnowInitials)).count() as f64
        };
        let share = winnowed(&kept) / winnowed(&all);
        assert!((0.09..0.16).contains(&share), "{share}");
        assert_eq!(winnowed(&kept) as usize, kept.len(), "no coarse key in the page namespace");
        assert!(kept.iter().all(|k| all.contains(k)));
    }
}
