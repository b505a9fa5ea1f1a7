//! Command-line definition. Every option has a long flag, a `ZHIWEN_*` environment
//! variable where it makes sense, a default, and a doc comment that becomes `--help`.
//! Precedence: config file < environment < flags.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// zhiwen (指纹): find where copyrighted Chinese text has been copied.
#[derive(Debug, Parser)]
#[command(name = "zhiwen", version, about, long_about = None)]
pub struct Cli {
    /// More log output on stderr (-v info, -vv debug). ZHIWEN_LOG overrides.
    #[arg(short, long, action = clap::ArgAction::Count, global = true)]
    pub verbose: u8,

    /// Where data lives (store, index); global, may follow any subcommand.
    #[command(flatten)]
    pub data: crate::settings::DataArgs,

    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Print every fingerprint of one document.
    Fingerprint(FingerprintArgs),
    /// Compare two documents: every measure, a verdict, and the copied passages.
    Compare(CompareArgs),
    /// Rebuild the DNA reference frame (letter frequencies) from a corpus.
    DnaFrame(DnaFrameArgs),
    /// Import protected works or collected pages.
    ///
    /// Every input that can be read is stored; each rejected one (a missing path, an empty
    /// or binary file, a file that is not WARC, a bad JSONL line) is listed with its reason
    /// in the summary on standard output. When any input was rejected the command ends
    /// with one line on standard error and exit status 1, also when the others were stored.
    #[command(subcommand)]
    Import(ImportCommand),
    /// Crawl the web from a seed list (polite, resumable, refuses internal addresses), or
    /// with `--watch` visit the watched sites until stopped.
    Crawl(CrawlArgs),
    /// Run one matching task now: fingerprint, index and match new and changed works and
    /// pages (resumes an interrupted task first).
    ///
    /// A run that is killed leaves its task to the next run of the same scope, which
    /// resumes it rather than queueing another pass. Refused, with nothing queued, while a
    /// live worker (`zhiwen serve`, another `zhiwen match`) runs a matching task.
    Match(MatchArgs),
    /// Run the daily matching schedule (cron in the settings file; default 02:00 Asia/Shanghai).
    Scheduler(SchedulerArgs),
    /// Reports for analysts.
    #[command(subcommand)]
    Report(ReportCommand),
    /// Create or upgrade the store's schema (collections, validators, indexes). Safe to run twice.
    Migrate,
    /// Rebuild the candidate index from the fingerprint store (e.g. after wiping Redis).
    Reindex(ReindexArgs),
    /// Share matching tasks with other workers through Redis Streams (consumer group
    /// `matchers`); needs the Redis index.
    Worker(WorkerArgs),
    /// Manage the API keys of `zhiwen serve` (roles admin, analyst, holder).
    #[command(subcommand)]
    Keys(crate::commands::keys::KeysCommand),
    /// Run the admin API and the dashboard, with the task worker and the daily scheduler.
    Serve(crate::commands::serve::ServeArgs),
    /// Evaluate the real pipeline (store, index, matching task) on the labelled set built
    /// from the corpus: precision and recall per transformation, attribution, evidence.
    Eval(EvalArgs),
    /// Evidence a court can trust: the key that signs the evidence log, and the offline
    /// check of an evidence package.
    #[command(subcommand)]
    Evidence(crate::commands::evidence::EvidenceCommand),
    /// Check again now whether pages with a confirmed match or a sent notice are still
    /// up, changed or removed (as the capture worker does every `[recheck] every_hours`),
    /// and flag those still up long after their notice. Prints a summary, or `--json`.
    Recheck(crate::commands::recheck::RecheckArgs),
    /// Takedown notices: draft one from a holder's confirmed matches on a site, send it
    /// (at most once) or export it as .eml, list them, suggest where they go.
    #[command(subcommand)]
    Notice(crate::commands::notice::NoticeCommand),
    /// Watched sites: entry points (index pages, sitemaps, RSS/Atom feeds) re-visited on
    /// an adaptive schedule by `zhiwen serve` and `zhiwen crawl --watch`; new chapter
    /// pages are fetched at once and matched.
    #[command(subcommand)]
    Watch(crate::commands::watch::WatchCommand),
}

/// Size of the evaluation set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EvalSize {
    /// A handful of pages (a smoke test).
    Tiny,
    /// 200 sections, 20 pages per positive class, 1,750 negatives.
    Default,
    /// 600 sections, 60 pages per positive class, 5,250 negatives.
    Large,
}

/// Which direction of matching `zhiwen eval` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EvalDirection {
    /// Works registered first, then the pages matched by one task (the daily task).
    Forward,
    /// Pages stored and indexed first, then the works registered and matched against
    /// them (a work registered after its copies were crawled).
    Reverse,
}

/// `zhiwen eval`.
#[derive(Debug, Args)]
pub struct EvalArgs {
    /// Seed of the generated set (tune on one seed, report on another).
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Size of the set.
    #[arg(long, value_enum, default_value_t = EvalSize::Default)]
    pub size: EvalSize,
    /// Which direction of matching to run.
    #[arg(long, value_enum, default_value_t = EvalDirection::Forward)]
    pub direction: EvalDirection,
    /// Corpus directory [default: the test corpus, `.test-corpus/`, made by scripts/setup-corpus.sh].
    #[arg(long)]
    pub corpus: Option<PathBuf>,
    /// Also write the report as JSON here.
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Also list every missed copy and every false detection, with the core's comparison
    /// of the pair (copied characters, containment both ways) and the nominating families.
    #[arg(long)]
    pub explain: bool,
    /// Only write the set to this directory, in the formats `zhiwen import` reads, and
    /// exit without evaluating: `works.jsonl` (for `zhiwen import works`, one work a line,
    /// each section under its own heading), `pages.warc` (for `zhiwen import pages`, the
    /// bytes as served with the header's charset) and `labels.jsonl` (one page a line: id,
    /// URL, class, and for a copy the work and section it copies).
    #[arg(long, value_name = "DIR", conflicts_with_all = ["out", "explain"])]
    pub write_set: Option<PathBuf>,
}

/// `zhiwen worker`.
#[derive(Debug, Args)]
pub struct WorkerArgs {
    /// Only enqueue a matching task for the workers (scope: --all, --since, or new and
    /// changed pages) and exit.
    #[arg(long)]
    pub submit: bool,
    /// With --submit: every stored page.
    #[arg(long, requires = "submit", conflicts_with = "since")]
    pub all: bool,
    /// With --submit: pages fetched on or after this day (YYYY-MM-DD, UTC).
    #[arg(long, requires = "submit", value_parser = parse_day)]
    pub since: Option<time::Date>,
    /// Exit when no matching task is queued or running (default: run until Ctrl-C).
    #[arg(long, conflicts_with = "submit")]
    pub until_idle: bool,
}

/// `zhiwen reindex`.
#[derive(Debug, Args)]
pub struct ReindexArgs {
    /// Only this namespace (default: both).
    #[arg(long, value_enum)]
    pub only: Option<NamespaceArg>,
}

/// An index namespace.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum NamespaceArg {
    /// Protected work sections.
    Sections,
    /// Stored pages.
    Pages,
}

/// How a file is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum FormatArg {
    /// Decide from the content.
    #[default]
    Auto,
    /// HTML.
    Html,
    /// Plain text.
    Text,
}

/// Options shared by the commands that fingerprint documents.
#[derive(Debug, Args)]
pub struct PipelineArgs {
    /// Input format.
    #[arg(long, value_enum, default_value_t = FormatArg::Auto)]
    pub format: FormatArg,
    /// Charset of the input when known (e.g. gbk, big5); detected otherwise.
    #[arg(long)]
    pub charset: Option<String>,
    /// Fingerprint parameters as a JSON file (any subset of the defaults; see `docs/parameters.md`).
    #[arg(long, env = "ZHIWEN_PARAMS")]
    pub params: Option<PathBuf>,
}

/// `zhiwen fingerprint`.
#[derive(Debug, Args)]
pub struct FingerprintArgs {
    /// The document (any supported charset; HTML or text). `-` reads stdin.
    pub file: PathBuf,
    /// Print JSON instead of a readable summary.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
}

/// `zhiwen compare`.
#[derive(Debug, Args)]
pub struct CompareArgs {
    /// Document A (e.g. the protected work).
    pub a: PathBuf,
    /// Document B (e.g. the suspect page).
    pub b: PathBuf,
    /// Print the stable JSON contract (docs/compare-json.md) instead of a table.
    #[arg(long)]
    pub json: bool,
    /// At most this many passages in the readable output (JSON has all).
    #[arg(long, default_value_t = 10)]
    pub max_passages: usize,
    #[command(flatten)]
    pub pipeline: PipelineArgs,
}

/// `zhiwen dna-frame`.
#[derive(Debug, Args)]
pub struct DnaFrameArgs {
    /// Corpus files: JSONL with a "text" field per line, or plain text files.
    #[arg(required = true)]
    pub corpus: Vec<PathBuf>,
    /// Write the frame here (the shipped one is services/core/data/dna_reference_frame.txt).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// `zhiwen import ...`.
#[derive(Debug, Subcommand)]
pub enum ImportCommand {
    /// Works of a rights holder: .txt .md .html .epub files, folders of them, or JSONL
    /// (`{"id", "title", "author"?, "owner"?, "text" or "html"}` per line). Novels are
    /// split into chapters.
    Works(ImportWorksArgs),
    /// Pages collected elsewhere: JSONL (`{"url", "html" or "text", "fetched_at"?,
    /// "status"?}`), folders of saved .html files, WARC / WARC.gz.
    Pages(ImportPagesArgs),
}

/// `zhiwen import works`.
#[derive(Debug, Args)]
pub struct ImportWorksArgs {
    /// Files or folders.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// The rights holder the works belong to (JSONL lines may name their own).
    #[arg(long)]
    pub owner: String,
    /// Bounds on what one input may cost.
    #[command(flatten)]
    pub limits: crate::settings::ImportLimitArgs,
}

/// `zhiwen import pages`.
#[derive(Debug, Args)]
pub struct ImportPagesArgs {
    /// Files or folders.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// URL prefix for saved .html files that do not carry their own URL.
    #[arg(long)]
    pub base_url: Option<String>,
    /// Bounds on what one input may cost.
    #[command(flatten)]
    pub limits: crate::settings::ImportLimitArgs,
}

/// `zhiwen crawl`.
#[derive(Debug, Args)]
pub struct CrawlArgs {
    /// Seed URLs, one per line (`#` comments allowed).
    #[arg(long, required_unless_present = "watch")]
    pub seeds: Option<PathBuf>,
    /// Instead of a crawl from seeds, run watch passes over the watched sites
    /// (`zhiwen watch`) until Ctrl-C or SIGTERM, queueing the matching of the pages they
    /// store. `--allow-loopback`, `--allow-private` and `--max-page-kb` apply; the
    /// schedule is `[watch]` of the settings file.
    #[arg(long, conflicts_with_all = ["seeds", "job", "domains", "depth", "max_pages", "delay_ms", "concurrency"])]
    pub watch: bool,
    /// Crawl job name; running the same job again resumes its frontier.
    #[arg(long, default_value = "default")]
    pub job: String,
    /// Domains to follow links into (default: the seeds' hosts).
    #[arg(long = "domain")]
    pub domains: Vec<String>,
    /// Link depth from the seeds.
    #[arg(long, default_value_t = 3)]
    pub depth: u32,
    /// Stop after this many fetches.
    #[arg(long)]
    pub max_pages: Option<u64>,
    /// Milliseconds between two requests to one host.
    #[arg(long, default_value_t = 1000)]
    pub delay_ms: u64,
    /// Requests in flight overall.
    #[arg(long, default_value_t = 8)]
    pub concurrency: usize,
    /// Allow loopback addresses (for local test sites only; refused by default).
    #[arg(long)]
    pub allow_loopback: bool,
    /// Allow private network addresses (refused by default).
    #[arg(long)]
    pub allow_private: bool,
    /// Bytes of one page's body decoded and stored, in KiB; a longer page is cut there
    /// (as by `zhiwen import pages`) [default: 4096, or `[import] max_page_kb`].
    #[arg(long, env = "ZHIWEN_IMPORT_MAX_PAGE_KB")]
    pub max_page_kb: Option<u64>,
}

/// `zhiwen scheduler`.
#[derive(Debug, Args)]
pub struct SchedulerArgs {
    /// Only enqueue the daily task; `zhiwen worker` processes run it (Redis Streams).
    #[arg(long, env = "ZHIWEN_SCHEDULER_ENQUEUE_ONLY")]
    pub enqueue_only: bool,
    /// Run no capture worker beside the schedule (captures stay queued for another
    /// process; the evidence log's daily head is then not published by this one).
    #[arg(long)]
    pub no_capture: bool,
    /// How the captures fetch and render.
    #[command(flatten)]
    pub capture: crate::commands::evidence::CaptureOptions,
}

/// `zhiwen match`.
#[derive(Debug, Args)]
pub struct MatchArgs {
    /// Match every stored page, not only those new or changed since the last successful run.
    #[arg(long, conflicts_with = "since")]
    pub all: bool,
    /// Match pages fetched on or after this day (YYYY-MM-DD, UTC).
    #[arg(long, value_parser = parse_day)]
    pub since: Option<time::Date>,
    /// Do not run the queued evidence captures after the task (they wait for the next
    /// run, `zhiwen evidence capture --queued` or a server).
    #[arg(long)]
    pub no_capture: bool,
    /// How the captures fetch and render.
    #[command(flatten)]
    pub capture: crate::commands::evidence::CaptureOptions,
}

/// `zhiwen report ...`.
#[derive(Debug, Subcommand)]
pub enum ReportCommand {
    /// Write the match list, with the columns of the API's export: match, work (id,
    /// owner, external id, title), chapter, page (id, URL, site), kind, score, verdict,
    /// copied characters, first/last seen (RFC 3339 UTC), review status, top evidence
    /// passage (both sides).
    Export(ExportArgs),
}

/// Export formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ExportFormatArg {
    /// CSV, UTF-8 with BOM (opens correctly in spreadsheet programs).
    Csv,
    /// Excel workbook.
    Xlsx,
    /// JSON Lines.
    Json,
}

/// `zhiwen report export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = ExportFormatArg::Csv)]
    pub format: ExportFormatArg,
    /// Only matches last seen on or after this day (YYYY-MM-DD, UTC).
    #[arg(long, value_parser = parse_day)]
    pub since: Option<time::Date>,
    /// Only matches of this work (its numeric id).
    #[arg(long)]
    pub work: Option<i64>,
    /// Only matches of this rights holder's works.
    #[arg(long)]
    pub owner: Option<String>,
    /// Only matches in this review status (new, confirmed, dismissed, takedown_sent, licensed).
    #[arg(long, value_parser = parse_status)]
    pub status: Option<zhiwen_store::ReviewStatus>,
    /// Write here instead of standard output (required for xlsx).
    #[arg(long)]
    pub out: Option<PathBuf>,
}

/// Parse a review status by its name.
pub fn parse_status(s: &str) -> Result<zhiwen_store::ReviewStatus, String> {
    zhiwen_store::ReviewStatus::parse(s).ok_or_else(|| {
        let names: Vec<&str> = zhiwen_store::ReviewStatus::ALL.iter().map(|r| r.as_str()).collect();
        format!("{s:?} is not a review status (one of {})", names.join(", "))
    })
}

/// Parse `YYYY-MM-DD`.
pub fn parse_day(s: &str) -> Result<time::Date, String> {
    let format = time::macros::format_description!("[year]-[month]-[day]");
    time::Date::parse(s, &format).map_err(|e| format!("{s:?} is not a day as YYYY-MM-DD: {e}"))
}
