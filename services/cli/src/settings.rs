//! Where zhiwen keeps its data, resolved from the settings file, the environment and
//! the flags, in that order of precedence (file < environment < flags).
//!
//! The file (`--config FILE` / `ZHIWEN_CONFIG`, TOML) may set any of:
//!
//! ```toml
//! [store]
//! backend = "embedded"          # or "mongodb"
//! data_dir = ".zhiwen-data"
//! sqlite_readers = 8            # embedded store: read-only connections (0: none)
//! mongo_uri = "mongodb://127.0.0.1:27017"
//! mongo_database = "zhiwen"
//!
//! [index]
//! backend = "embedded"          # or "redis"
//! redis_url = "redis://127.0.0.1:6379"
//! redis_prefix = "zw"
//! redis_cluster = false
//! redis_bucket_bits = 20        # buckets per namespace 2^N: about log2(entries / 32)
//! big_bucket_cap = 2000
//! query_key_budget = 768
//!
//! [params]                      # fingerprint parameters (docs/parameters.md)
//!
//! [evidence]                    # captures of matched pages (docs/evidence.md)
//! refetch = true                # capture a crawled page by fetching it again
//! retention_days = 0            # keep captured files this long (0: forever; never
//!                               # removed while they back a confirmed match or a notice)
//! tsa_url = "https://tsa.example/tsr"  # RFC 3161 time-stamp authority (可信时间戳) asked to
//!                               # stamp every new signed tree head (http or https; none by default)
//! tsa_timeout_secs = 10         # longest wait for it; a TSA that fails is logged and the
//!                               # head kept without a token
//!
//! [recheck]                     # removal re-check of noticed pages (`zhiwen recheck`)
//! enabled = true                # run it from the capture worker
//! every_hours = 24              # hours between two scheduled re-checks
//! escalate_after_days = 7       # flag a page still up this long after its notice
//! concurrency = 4               # hosts checked at once
//! per_host_delay_ms = 1000      # pause between two requests to one host
//! timeout_secs = 30             # longest wait for one page ("cannot tell" after)
//!
//! [watch]                       # watched sites (`zhiwen watch`, docs/operations.md)
//! enabled = true                # visit them from `zhiwen serve` too (beside its task loop)
//! min_interval_secs = 15        # shortest interval between two visits of an entry point
//! max_interval_secs = 21600     # longest (6 h): the interval doubles up to it when
//!                               # nothing is new, halves down to the shortest when it is
//! politeness_secs = 1           # seconds between two requests to a host, for a site
//!                               # that sets none (robots.txt Crawl-delay may raise it)
//! max_new_per_visit = 200       # new chapter links fetched per visit (the rest next time)
//! concurrency = 32              # sites visited at once (one request at a time per host)
//!
//! [mail]                        # the SMTP relay takedown notices are sent through
//! url = "smtp://127.0.0.1:25"   # smtp://user:pass@host:587?tls=required, smtps://host:465;
//!                               # ZHIWEN_SMTP_URL overrides it (keep passwords out of the file)
//! from = "zhiwen@localhost"     # the sender
//! reply_to = "legal@holder.example"  # where replies go (default: the sender)
//! timeout_secs = 30             # each network step; a whole send at most 10x this
//!
//! [import]                      # bounds of `import works|pages` and of uploads
//! max_file_mb = 256
//! max_page_kb = 4096
//! max_archive_mb = 256
//! max_entry_mb = 64
//! max_archive_entries = 10000
//! max_ratio = 100
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::{Context, Result};
use clap::{Args, ValueEnum};
use serde::Deserialize;
use zhiwen_core::Params;
use zhiwen_index::{CandidateIndex, EmbeddedIndex, IndexConfig, RedisConfig, RedisIndex, RetryPolicy, RetryingIndex};
use zhiwen_store::{StoreConfig, Stores};

/// Store backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum StoreBackend {
    /// SQLite in the data directory (no server; the default).
    Embedded,
    /// MongoDB 6+.
    Mongodb,
}

/// Index backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IndexBackend {
    /// In memory, persisted in the data directory (no server; the default).
    Embedded,
    /// Redis (standalone or Cluster).
    Redis,
}

/// Flags (and environment variables) that choose where data lives. Global: they may
/// follow any subcommand.
#[derive(Debug, Args, Default, Clone)]
pub struct DataArgs {
    /// Settings file (TOML); environment variables and flags override it.
    #[arg(long, env = "ZHIWEN_CONFIG", global = true)]
    pub config: Option<PathBuf>,
    /// Store backend [default: embedded].
    #[arg(long, env = "ZHIWEN_STORE", value_enum, global = true)]
    pub store: Option<StoreBackend>,
    /// Directory of the embedded store and index [default: .zhiwen-data].
    #[arg(long, env = "ZHIWEN_DATA_DIR", global = true)]
    pub data_dir: Option<PathBuf>,
    /// Read-only connections of the embedded store, 0 to 256; 0 sends reads through the
    /// writer connection [default: two per core, 4 to 16].
    #[arg(long, env = "ZHIWEN_SQLITE_READERS", global = true)]
    pub sqlite_readers: Option<usize>,
    /// MongoDB connection string [default: mongodb://127.0.0.1:27017].
    #[arg(long, env = "ZHIWEN_MONGO_URI", global = true)]
    pub mongo_uri: Option<String>,
    /// MongoDB database [default: zhiwen].
    #[arg(long, env = "ZHIWEN_MONGO_DATABASE", global = true)]
    pub mongo_database: Option<String>,
    /// Index backend [default: embedded].
    #[arg(long, env = "ZHIWEN_INDEX", value_enum, global = true)]
    pub index: Option<IndexBackend>,
    /// Redis URL [default: redis://127.0.0.1:6379].
    #[arg(long, env = "ZHIWEN_REDIS_URL", global = true)]
    pub redis_url: Option<String>,
    /// Prefix of every Redis key [default: zw].
    #[arg(long, env = "ZHIWEN_REDIS_PREFIX", global = true)]
    pub redis_prefix: Option<String>,
}

/// Bounds on what one import input may cost (`zhiwen import works|pages`, uploads to
/// `zhiwen serve`): flags and environment variables here, over `[import]` in the settings
/// file, over the defaults. Inputs over a bound are rejected (pages: cut) with the bound
/// in the reason; see docs/operations.md.
#[derive(Debug, Args, Default, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ImportLimitArgs {
    /// Largest input file, and largest single record (JSONL line, WARC record), in MiB
    /// [default: 256].
    #[arg(long, env = "ZHIWEN_IMPORT_MAX_FILE_MB")]
    pub max_file_mb: Option<u64>,
    /// Bytes of one page's body decoded and stored, in KiB; a longer page is cut there
    /// (its text and body stored cut, noted in the summary) [default: 4096].
    #[arg(long, env = "ZHIWEN_IMPORT_MAX_PAGE_KB")]
    pub max_page_kb: Option<u64>,
    /// Uncompressed MiB read from one archive (an EPUB's documents together) [default: 256].
    #[arg(long, env = "ZHIWEN_IMPORT_MAX_ARCHIVE_MB")]
    pub max_archive_mb: Option<u64>,
    /// Uncompressed MiB of one archive entry or one compressed HTTP body in a WARC
    /// [default: 64].
    #[arg(long, env = "ZHIWEN_IMPORT_MAX_ENTRY_MB")]
    pub max_entry_mb: Option<u64>,
    /// Entries one archive (EPUB) may list [default: 10000].
    #[arg(long, env = "ZHIWEN_IMPORT_MAX_ARCHIVE_ENTRIES")]
    pub max_archive_entries: Option<usize>,
    /// Largest ratio of uncompressed to compressed bytes (EPUB entries and the whole EPUB,
    /// WARC.gz files, compressed HTTP bodies; the first MiB is exempt) [default: 100].
    #[arg(long, env = "ZHIWEN_IMPORT_MAX_RATIO")]
    pub max_ratio: Option<u64>,
}

/// Import options resolved from the flags and environment over `[import]` over defaults.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportBounds {
    /// Largest file and single record, in bytes.
    pub max_file_bytes: u64,
    /// Archive, ratio and page bounds.
    pub limits: zhiwen_ingest::ImportLimits,
}

impl ImportBounds {
    /// `over` (flags and environment) over `file` over the defaults; every bound must be
    /// at least 1.
    fn resolve(over: &ImportLimitArgs, file: &ImportLimitArgs) -> Result<ImportBounds> {
        let defaults = zhiwen_ingest::ImportOptions::default();
        let d = defaults.limits;
        let pick = |name: &str, a: Option<u64>, b: Option<u64>, default: u64, unit: u64| -> Result<u64> {
            match a.or(b) {
                None => Ok(default),
                Some(0) => anyhow::bail!("import bound {name} must be at least 1"),
                Some(v) => v.checked_mul(unit).with_context(|| format!("import bound {name} is too large")),
            }
        };
        let entries = over.max_archive_entries.or(file.max_archive_entries).map(|v| v as u64);
        Ok(ImportBounds {
            max_file_bytes: pick("max_file_mb", over.max_file_mb, file.max_file_mb, defaults.max_file_bytes, 1 << 20)?,
            limits: zhiwen_ingest::ImportLimits {
                max_page_bytes: pick("max_page_kb", over.max_page_kb, file.max_page_kb, d.max_page_bytes, 1 << 10)?,
                max_archive_bytes: pick(
                    "max_archive_mb",
                    over.max_archive_mb,
                    file.max_archive_mb,
                    d.max_archive_bytes,
                    1 << 20,
                )?,
                max_entry_bytes: pick(
                    "max_entry_mb",
                    over.max_entry_mb,
                    file.max_entry_mb,
                    d.max_entry_bytes,
                    1 << 20,
                )?,
                max_archive_entries: pick("max_archive_entries", entries, None, d.max_archive_entries as u64, 1)?
                    as usize,
                max_ratio: pick("max_ratio", over.max_ratio, file.max_ratio, d.max_ratio, 1)?,
            },
        })
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileConfig {
    store: FileStore,
    index: FileIndex,
    params: Option<Params>,
    matcher: Option<zhiwen_matcher::MatcherConfig>,
    import: ImportLimitArgs,
    evidence: EvidenceSettings,
    mail: zhiwen_takedown::MailConfig,
    alerts: zhiwen_takedown::AlertConfig,
    recheck: zhiwen_capture::RecheckConfig,
    watch: WatchSettings,
}

/// `[watch]` of the settings file: the schedule of the watched sites.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct WatchSettings {
    /// Run watch passes in `zhiwen serve`'s task loop.
    pub enabled: bool,
    /// Shortest interval between two visits of one entry point, in seconds.
    pub min_interval_secs: u64,
    /// Longest interval, in seconds.
    pub max_interval_secs: u64,
    /// Politeness budget of a site that sets none, in seconds.
    pub politeness_secs: u64,
    /// New chapter links fetched per visit of an entry point.
    pub max_new_per_visit: usize,
    /// Sites visited at once.
    pub concurrency: usize,
}

impl Default for WatchSettings {
    fn default() -> Self {
        let d = zhiwen_ingest::WatchConfig::default();
        WatchSettings {
            enabled: true,
            min_interval_secs: d.min_interval.as_secs(),
            max_interval_secs: d.max_interval.as_secs(),
            politeness_secs: 1,
            max_new_per_visit: d.max_new_per_visit,
            concurrency: d.concurrency,
        }
    }
}

impl WatchSettings {
    fn validate(&self) -> Result<()> {
        if self.min_interval_secs == 0 || self.max_interval_secs < self.min_interval_secs {
            anyhow::bail!("[watch] min_interval_secs must be at least 1 and at most max_interval_secs");
        }
        if self.max_new_per_visit == 0 || self.concurrency == 0 {
            anyhow::bail!("[watch] max_new_per_visit and concurrency must be at least 1");
        }
        Ok(())
    }

    /// The watch pass's configuration: these settings with `policy`, the fingerprint
    /// parameters' canonicalisation and the page bound of `bounds`.
    pub fn config(
        &self,
        policy: zhiwen_ingest::AddressPolicy,
        params: &Params,
        bounds: &ImportBounds,
    ) -> zhiwen_ingest::WatchConfig {
        let d = zhiwen_ingest::WatchConfig::default();
        zhiwen_ingest::WatchConfig {
            crawl: zhiwen_ingest::CrawlConfig {
                address_policy: policy,
                per_host_delay: std::time::Duration::from_secs(self.politeness_secs),
                canon: params.canon.clone(),
                max_page_bytes: bounds.limits.max_page_bytes,
                ..d.crawl
            },
            min_interval: std::time::Duration::from_secs(self.min_interval_secs),
            max_interval: std::time::Duration::from_secs(self.max_interval_secs),
            max_new_per_visit: self.max_new_per_visit,
            concurrency: self.concurrency,
            ..d
        }
    }
}

/// `[evidence]` of the settings file: how captures are made and kept.
#[derive(Debug, Clone, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct EvidenceSettings {
    /// Re-fetch a crawled page when capturing it (else its stored record is captured).
    pub refetch: bool,
    /// Keep the files of captures for this many days (0: forever). Captures backing a
    /// confirmed match or a sent takedown notice are never removed; the log's leaves
    /// always stay.
    pub retention_days: u32,
    /// An RFC 3161 time-stamp authority asked to stamp every new signed tree head
    /// (http or https; checked when the settings are read). None: no trusted time.
    pub tsa_url: Option<String>,
    /// Longest wait for the time-stamp authority, seconds (1 to 300).
    pub tsa_timeout_secs: u64,
}

impl Default for EvidenceSettings {
    fn default() -> Self {
        EvidenceSettings { refetch: true, retention_days: 0, tsa_url: None, tsa_timeout_secs: 10 }
    }
}

impl EvidenceSettings {
    /// The time-stamp authority's URL, checked (http or https).
    pub fn tsa_url(&self) -> Result<Option<zhiwen_capture::Url>> {
        self.tsa_url
            .as_deref()
            .map(zhiwen_capture::parse_tsa_url)
            .transpose()
            .context("invalid [evidence] tsa_url in the settings file")
    }

    fn validate(&self) -> Result<()> {
        self.tsa_url()?;
        if !(1..=300).contains(&self.tsa_timeout_secs) {
            anyhow::bail!("invalid [evidence] tsa_timeout_secs {}: expected 1 to 300", self.tsa_timeout_secs);
        }
        Ok(())
    }
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileStore {
    backend: Option<StoreBackend>,
    data_dir: Option<PathBuf>,
    sqlite_readers: Option<usize>,
    mongo_uri: Option<String>,
    mongo_database: Option<String>,
    retry: Option<zhiwen_store::StoreRetry>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
struct FileIndex {
    backend: Option<IndexBackend>,
    redis_url: Option<String>,
    redis_prefix: Option<String>,
    redis_cluster: Option<bool>,
    redis_section_filter_mb: Option<u32>,
    redis_bucket_bits: Option<u8>,
    big_bucket_cap: Option<usize>,
    query_key_budget: Option<usize>,
}

/// Resolved settings.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Which store, where.
    pub store: StoreConfig,
    /// How the stores retry transient failures (`[store.retry]`).
    pub store_retry: zhiwen_store::StoreRetry,
    /// The embedded data directory (also home of the embedded index).
    pub data_dir: PathBuf,
    /// Index backend.
    pub index_backend: IndexBackend,
    /// Redis settings (used when the index backend is Redis).
    pub redis: RedisConfig,
    /// Shared index settings.
    pub index: IndexConfig,
    /// Fingerprint parameters.
    pub params: Params,
    /// Matching thresholds, schedule, webhook.
    pub matcher: zhiwen_matcher::MatcherConfig,
    /// `[import]` of the settings file (flags and environment go over it: [`Settings::import_bounds`]).
    import_file: ImportLimitArgs,
    /// `[evidence]`.
    pub evidence: EvidenceSettings,
    /// `[mail]`: the SMTP relay notices are sent through (`ZHIWEN_SMTP_URL` over its
    /// `url`, so a password need not be in the file).
    pub mail: zhiwen_takedown::MailConfig,
    /// `[alerts]`: the holders' e-mail alerts of new matches (sent through `[mail]`).
    pub alerts: zhiwen_takedown::AlertConfig,
    /// `[recheck]`: the removal re-check of noticed pages.
    pub recheck: zhiwen_capture::RecheckConfig,
    /// `[watch]`: the schedule of the watched sites.
    pub watch: WatchSettings,
}

impl Settings {
    /// Resolve from flags/environment (already merged by clap) over the settings file.
    pub fn resolve(args: &DataArgs) -> Result<Settings> {
        let file = match &args.config {
            Some(path) => read_file(path)?,
            None => FileConfig::default(),
        };
        let data_dir = args
            .data_dir
            .clone()
            .or(file.store.data_dir)
            .unwrap_or_else(|| PathBuf::from(zhiwen_store::DEFAULT_DATA_DIR));
        let store = match args.store.or(file.store.backend).unwrap_or(StoreBackend::Embedded) {
            StoreBackend::Embedded => match args.sqlite_readers.or(file.store.sqlite_readers) {
                Some(n) => StoreConfig::embedded(&data_dir).with_readers(n),
                None => StoreConfig::embedded(&data_dir),
            },
            StoreBackend::Mongodb => StoreConfig::mongo(
                args.mongo_uri.clone().or(file.store.mongo_uri).unwrap_or_else(|| "mongodb://127.0.0.1:27017".into()),
                args.mongo_database
                    .clone()
                    .or(file.store.mongo_database)
                    .unwrap_or_else(|| zhiwen_store::DEFAULT_MONGO_DATABASE.into()),
            ),
        };
        let defaults = IndexConfig::default();
        let index = IndexConfig {
            big_bucket_cap: file.index.big_bucket_cap.unwrap_or(defaults.big_bucket_cap),
            query_key_budget: file.index.query_key_budget.unwrap_or(defaults.query_key_budget),
        };
        let mut redis = RedisConfig::with_url(
            args.redis_url.clone().or(file.index.redis_url).unwrap_or_else(|| "redis://127.0.0.1:6379".into()),
        );
        if let Some(prefix) = args.redis_prefix.clone().or(file.index.redis_prefix) {
            redis.prefix = prefix;
        }
        redis.cluster = file.index.redis_cluster.unwrap_or(false);
        redis.section_filter_mb = file.index.redis_section_filter_mb.unwrap_or(redis.section_filter_mb);
        redis.bucket_bits = file.index.redis_bucket_bits.unwrap_or(redis.bucket_bits);
        redis.index = index;
        let params = file.params.unwrap_or_default();
        params.validate().context("invalid [params] in the settings file")?;
        file.evidence.validate()?;
        file.recheck.validate().context("invalid [recheck] in the settings file")?;
        file.watch.validate()?;
        Ok(Settings {
            store,
            store_retry: file.store.retry.unwrap_or_default(),
            data_dir,
            index_backend: args.index.or(file.index.backend).unwrap_or(IndexBackend::Embedded),
            redis,
            index,
            params,
            matcher: file.matcher.unwrap_or_default(),
            import_file: file.import,
            evidence: file.evidence,
            mail: zhiwen_takedown::MailConfig {
                url: std::env::var("ZHIWEN_SMTP_URL").ok().filter(|u| !u.is_empty()).unwrap_or(file.mail.url),
                ..file.mail
            },
            alerts: file.alerts,
            recheck: file.recheck,
            watch: file.watch,
        })
    }

    /// The import bounds: `args` (flags and environment) over `[import]` over defaults.
    pub fn import_bounds(&self, args: &ImportLimitArgs) -> Result<ImportBounds> {
        ImportBounds::resolve(args, &self.import_file).context("invalid import bounds")
    }

    /// Open the stores (the embedded store migrates itself; MongoDB needs `zhiwen migrate`),
    /// retrying transient failures as `[store.retry]` says.
    pub async fn open_stores(&self) -> Result<Stores> {
        let stores = zhiwen_store::open(&self.store)
            .await
            .with_context(|| format!("cannot open the {} store", self.store.backend_name()))?;
        Ok(stores.with_retries(self.store_retry))
    }

    /// The matcher over the configured stores and index.
    pub async fn open_matcher(&self) -> Result<zhiwen_matcher::Matcher> {
        let stores = self.open_stores().await?;
        let index = self.open_index().await?;
        let fingerprinter = zhiwen_core::Fingerprinter::new(self.params.clone())?;
        Ok(zhiwen_matcher::Matcher::new(stores, index, fingerprinter, self.matcher.clone()))
    }

    /// The evidence service over `matcher`'s stores (whose verification its removal
    /// re-check uses): the log key of the data directory (made on first use), captures
    /// re-fetching through the crawler's client under
    /// `policy`, screenshots by `chromium` when there is one.
    pub async fn open_evidence(
        &self,
        matcher: &zhiwen_matcher::Matcher,
        policy: zhiwen_ingest::AddressPolicy,
        chromium: Option<PathBuf>,
    ) -> Result<zhiwen_capture::EvidenceService> {
        let key = zhiwen_capture::load_or_create_key(&zhiwen_capture::key_path(&self.data_dir))?;
        let crawl = zhiwen_ingest::CrawlConfig { address_policy: policy, ..zhiwen_ingest::CrawlConfig::default() };
        let config = zhiwen_capture::CaptureConfig {
            crawl,
            chromium,
            refetch: self.evidence.refetch,
            retention_days: self.evidence.retention_days,
            tsa_url: self.evidence.tsa_url()?,
            tsa_timeout: std::time::Duration::from_secs(self.evidence.tsa_timeout_secs),
            recheck: self.recheck.clone(),
            ..zhiwen_capture::CaptureConfig::default()
        };
        let service = zhiwen_capture::EvidenceService::open(matcher.stores().clone(), key, config)
            .await
            .context("cannot open the evidence log")?;
        Ok(service.with_matcher(matcher.clone()))
    }

    /// The notice service over `stores`, citing `evidence`'s captures, fetching a site's
    /// `security.txt` under `policy`, printing with `chromium`, sending through `[mail]`.
    pub fn notices(
        &self,
        stores: &zhiwen_store::Stores,
        evidence: Option<Arc<zhiwen_capture::EvidenceService>>,
        policy: zhiwen_ingest::AddressPolicy,
        chromium: Option<PathBuf>,
    ) -> Result<zhiwen_takedown::Notices> {
        let config = zhiwen_takedown::NoticeConfig {
            mail: self.mail.clone(),
            chromium,
            crawl: zhiwen_ingest::CrawlConfig { address_policy: policy, ..zhiwen_ingest::CrawlConfig::default() },
        };
        zhiwen_takedown::Notices::new(stores.clone(), evidence, config).context("cannot set up takedown notices")
    }

    /// The holders' e-mail alerts over `stores`, sent through `[mail]`, linking to the
    /// dashboard of `[alerts]`.
    pub fn alerts(&self, stores: &zhiwen_store::Stores) -> zhiwen_takedown::Alerts {
        zhiwen_takedown::Alerts::new(stores.clone(), self.mail.clone(), self.alerts.clone())
    }

    /// The host leases of the watched sites: in the Redis of the index when the index is
    /// there (every process that watches with the same Redis and prefix shares the
    /// sites), `None` otherwise (the embedded default: one process watches, its leases
    /// are in its memory).
    pub async fn host_leases(&self) -> Result<Option<Arc<dyn zhiwen_ingest::HostLeases>>> {
        if self.index_backend != IndexBackend::Redis {
            return Ok(None);
        }
        let leases = zhiwen_ingest::RedisLeases::connect(
            &self.redis.url,
            &self.redis.prefix,
            self.redis.cluster,
            LEASE_COMMAND_TIMEOUT,
        )
        .await
        .with_context(|| format!("cannot connect to Redis at {} for the watched hosts' leases", self.redis.url))?;
        Ok(Some(Arc::new(leases)))
    }

    /// Open the index, wrapped in the retrying decorator.
    pub async fn open_index(&self) -> Result<Arc<dyn CandidateIndex>> {
        let inner: Arc<dyn CandidateIndex> = match self.index_backend {
            IndexBackend::Embedded => {
                std::fs::create_dir_all(&self.data_dir)
                    .with_context(|| format!("cannot create data directory {}", self.data_dir.display()))?;
                let path = self.data_dir.join("index.sqlite");
                Arc::new(
                    EmbeddedIndex::open(&path, self.index)
                        .with_context(|| format!("cannot open the embedded index {}", path.display()))?,
                )
            }
            IndexBackend::Redis => Arc::new(
                RedisIndex::connect(self.redis.clone())
                    .await
                    .with_context(|| format!("cannot connect to Redis at {}", self.redis.url))?,
            ),
        };
        Ok(Arc::new(RetryingIndex::new(inner, RetryPolicy::default())))
    }
}

/// How long one lease command may take before the host is skipped for the pass.
const LEASE_COMMAND_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(5);

fn read_file(path: &Path) -> Result<FileConfig> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read settings {}", path.display()))?;
    toml::from_str(&text).with_context(|| format!("invalid settings in {}", path.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flags_override_the_file_and_defaults_fill_the_rest() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("zhiwen.toml");
        std::fs::write(
            &file,
            "[store]\nbackend = \"mongodb\"\nmongo_database = \"fromfile\"\n[index]\nredis_prefix = \"filepfx\"\nredis_section_filter_mb = 64\nredis_bucket_bits = 18\n",
        )
        .expect("write");
        let args = DataArgs { config: Some(file.clone()), ..DataArgs::default() };
        let s = Settings::resolve(&args).expect("resolves");
        assert_eq!(s.store, StoreConfig::mongo("mongodb://127.0.0.1:27017", "fromfile"));
        assert_eq!(s.redis.prefix, "filepfx");
        assert_eq!(s.redis.section_filter_mb, 64);
        assert_eq!(s.redis.bucket_bits, 18);
        let args = DataArgs {
            config: Some(file),
            store: Some(StoreBackend::Embedded),
            data_dir: Some(PathBuf::from("elsewhere")),
            ..DataArgs::default()
        };
        let s = Settings::resolve(&args).expect("resolves");
        assert_eq!(s.store, StoreConfig::embedded("elsewhere"));
    }

    #[test]
    fn sqlite_readers_come_from_the_flag_the_environment_or_the_file() {
        let command = DataArgs::augment_args(clap::Command::new("zhiwen"));
        let arg = command.get_arguments().find(|a| a.get_id() == "sqlite_readers").expect("the flag");
        assert_eq!(arg.get_env(), Some(std::ffi::OsStr::new("ZHIWEN_SQLITE_READERS")));
        assert_eq!(arg.get_long(), Some("sqlite-readers"));

        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("zhiwen.toml");
        std::fs::write(&file, "[store]\ndata_dir = \"d\"\nsqlite_readers = 2\n").expect("write");
        let args = DataArgs { config: Some(file.clone()), ..DataArgs::default() };
        assert_eq!(Settings::resolve(&args).expect("resolves").store, StoreConfig::embedded("d").with_readers(2));
        let args = DataArgs { config: Some(file), sqlite_readers: Some(0), ..DataArgs::default() };
        assert_eq!(Settings::resolve(&args).expect("resolves").store, StoreConfig::embedded("d").with_readers(0));
        let args = DataArgs { data_dir: Some(PathBuf::from("d")), ..DataArgs::default() };
        assert_eq!(Settings::resolve(&args).expect("resolves").store, StoreConfig::embedded("d"));
    }

    #[test]
    fn import_bounds_flags_over_the_file_over_defaults() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("zhiwen.toml");
        std::fs::write(&file, "[import]\nmax_page_kb = 512\nmax_ratio = 50\nmax_archive_entries = 300\n")
            .expect("write");
        let s = Settings::resolve(&DataArgs { config: Some(file), ..DataArgs::default() }).expect("resolves");
        let b = s.import_bounds(&ImportLimitArgs::default()).expect("bounds");
        assert_eq!((b.limits.max_page_bytes, b.limits.max_ratio, b.limits.max_archive_entries), (512 << 10, 50, 300));
        assert_eq!(b.max_file_bytes, zhiwen_ingest::ImportOptions::default().max_file_bytes);
        let flags = ImportLimitArgs { max_ratio: Some(20), max_archive_mb: Some(8), ..ImportLimitArgs::default() };
        let b = s.import_bounds(&flags).expect("bounds");
        assert_eq!((b.limits.max_ratio, b.limits.max_archive_bytes, b.limits.max_page_bytes), (20, 8 << 20, 512 << 10));
        let zero = ImportLimitArgs { max_entry_mb: Some(0), ..ImportLimitArgs::default() };
        assert!(format!("{:#}", s.import_bounds(&zero).expect_err("refused")).contains("max_entry_mb"));
    }

    #[test]
    fn the_time_stamp_authority_must_be_http_or_https() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("zhiwen.toml");
        let resolve = |text: &str| {
            std::fs::write(&file, text).expect("write");
            Settings::resolve(&DataArgs { config: Some(file.clone()), ..DataArgs::default() })
        };
        let s =
            resolve("[evidence]\ntsa_url = \"http://127.0.0.1:3180/tsr\"\ntsa_timeout_secs = 5\n").expect("resolves");
        assert_eq!(
            s.evidence.tsa_url().expect("valid").map(|u| u.to_string()).as_deref(),
            Some("http://127.0.0.1:3180/tsr")
        );
        assert_eq!(s.evidence.tsa_timeout_secs, 5);
        assert!(resolve("").expect("resolves").evidence.tsa_url().expect("valid").is_none());
        for bad in ["tsa_url = \"ftp://tsa.example/\"", "tsa_url = \"not a url\"", "tsa_timeout_secs = 0"] {
            let err = resolve(&format!("[evidence]\n{bad}\n")).expect_err("refused");
            assert!(format!("{err:#}").contains("tsa_"), "{err:#}");
        }
        // `[recheck]`: defaults, a value read, an unusable or unknown one refused.
        assert_eq!(resolve("").expect("resolves").recheck, zhiwen_capture::RecheckConfig::default());
        let s = resolve("[recheck]\nevery_hours = 6\nescalate_after_days = 3\n").expect("resolves");
        assert_eq!((s.recheck.every_hours, s.recheck.escalate_after_days, s.recheck.enabled), (6, 3, true));
        let err = resolve("[recheck]\nevery_hours = 0\n").expect_err("refused");
        assert!(format!("{err:#}").contains("every_hours"), "{err:#}");
        assert!(resolve("[recheck]\nevery_day = 1\n").is_err());
        // `[watch]`: defaults, values read, bad ones refused.
        assert_eq!(resolve("").expect("resolves").watch, WatchSettings::default());
        let s = resolve("[watch]\nmin_interval_secs = 30\npoliteness_secs = 3\n").expect("resolves");
        let bounds = s.import_bounds(&ImportLimitArgs::default()).expect("bounds");
        let c = s.watch.config(zhiwen_ingest::AddressPolicy::default(), &s.params, &bounds);
        assert_eq!((c.min_interval.as_secs(), c.crawl.per_host_delay.as_secs()), (30, 3));
        assert_eq!(c.max_interval.as_secs(), 6 * 3600);
        let err = resolve("[watch]\nmin_interval_secs = 0\n").expect_err("refused");
        assert!(format!("{err:#}").contains("min_interval_secs"), "{err:#}");
        assert!(resolve("[watch]\nevery = 1\n").is_err());
    }

    #[test]
    fn unknown_keys_in_the_file_are_refused_with_the_file_name() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("bad.toml");
        std::fs::write(&file, "[store]\nbakend = \"embedded\"\n").expect("write");
        let err = Settings::resolve(&DataArgs { config: Some(file), ..DataArgs::default() }).expect_err("refused");
        assert!(format!("{err:#}").contains("bad.toml"), "{err:#}");
    }
}
