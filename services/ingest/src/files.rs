//! Shared machinery of the importers: walking the given paths, reading files off the
//! async runtime, batching, and storing with retries.

use std::cell::RefCell;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use tokio::sync::mpsc;

use crate::report::{ImportSummary, Progress};

/// One input file, with the folder it was found under (for relative ids and URLs).
#[derive(Debug, Clone)]
pub(crate) struct InputFile {
    pub path: PathBuf,
    /// The folder given on the command line (the file itself when a file was given).
    pub root: Option<PathBuf>,
    pub size: u64,
}

impl InputFile {
    /// Path relative to the folder it was found in, with `/` separators.
    pub fn relative(&self) -> String {
        let rel = match &self.root {
            Some(r) => self.path.strip_prefix(r).unwrap_or(&self.path),
            None => self.path.file_name().map(Path::new).unwrap_or(&self.path),
        };
        rel.components().map(|c| c.as_os_str().to_string_lossy()).collect::<Vec<_>>().join("/")
    }

    pub fn display(&self) -> String {
        self.path.display().to_string()
    }

    pub fn extension(&self) -> String {
        let name = self.path.file_name().map(|n| n.to_string_lossy().to_lowercase()).unwrap_or_default();
        if name.ends_with(".warc.gz") {
            return "warc.gz".to_owned();
        }
        self.path.extension().map(|e| e.to_string_lossy().to_lowercase()).unwrap_or_default()
    }
}

/// Expand the given paths: files as they are, folders recursively (sorted, hidden files
/// skipped) keeping only files whose extension `accept`s. Missing paths are rejections.
pub(crate) fn collect(paths: &[PathBuf], accept: &dyn Fn(&str) -> bool, summary: &mut ImportSummary) -> Vec<InputFile> {
    let mut out = Vec::new();
    for p in paths {
        let meta = match std::fs::metadata(p) {
            Ok(m) => m,
            Err(e) => {
                summary.reject(p.display().to_string(), format!("cannot read: {e}"));
                continue;
            }
        };
        if meta.is_file() {
            out.push(InputFile { path: p.clone(), root: None, size: meta.len() });
            continue;
        }
        let walker = walkdir::WalkDir::new(p)
            .sort_by_file_name()
            .into_iter()
            .filter_entry(|e| e.depth() == 0 || !e.file_name().to_string_lossy().starts_with('.'));
        for entry in walker {
            match entry {
                Ok(e) if e.file_type().is_file() => {
                    let f = InputFile {
                        path: e.path().to_path_buf(),
                        root: Some(p.clone()),
                        size: e.metadata().map(|m| m.len()).unwrap_or(0),
                    };
                    if accept(&f.extension()) {
                        out.push(f);
                    } else {
                        summary.skipped += 1;
                    }
                }
                Ok(_) => {}
                Err(e) => {
                    let what = e.path().map(|p| p.display().to_string()).unwrap_or_else(|| p.display().to_string());
                    summary.reject(what, format!("cannot read: {e}"));
                }
            }
        }
    }
    out
}

/// What a reader thread sends to the storing loop.
pub(crate) enum Item<T> {
    /// A record to store, named for reports.
    Record(String, T),
    /// An item that could not be read.
    Reject(String, String),
    /// A remark on an item that was read (bytes replaced, text cut).
    Note(String, String),
    /// Bytes of input replaced by U+FFFD while decoding.
    Replaced(u64),
    /// Bytes of input skipped to find the next record after a corrupt one.
    SkippedBytes(u64),
    /// Not content, skipped on purpose.
    Skip,
    /// Progress in bytes of input.
    Advance(u64),
    /// Now reading this file.
    File(String),
}

/// The reader thread's end of the channel: sends items to the storing loop and tells the
/// reader when nobody listens any more (the import future was dropped: an API request
/// that timed out or whose client went away). Readers check it between items and, through
/// [`CancelRead`], while inflating, so that dropped work stops instead of running on.
///
/// Items go over the channel [`FEED_CHUNK`] at a time: one hand-off (a wake-up of the
/// storing loop, or of the reader when the channel was full) per chunk instead of per
/// item, which was ~7% of the samples of `zhiwen import pages` (docs/benchmarks.md). The
/// channel holds [`FEED_CHUNKS`] chunks: at most 80 items are read ahead (65 before).
pub(crate) struct Feed<T> {
    tx: mpsc::Sender<Vec<Item<T>>>,
    chunk: RefCell<Vec<Item<T>>>,
}

/// Items per hand-off from the reader to the storing loop.
const FEED_CHUNK: usize = 16;
/// Chunks the channel holds: with a chunk being filled, at most
/// `(FEED_CHUNKS + 1) * FEED_CHUNK` items are read ahead of the storing loop.
const FEED_CHUNKS: usize = 4;

impl<T> Feed<T> {
    /// Send one item; `false` when the import was dropped (stop reading). Sent with the
    /// chunk it completes, or by [`Feed::flush`].
    pub fn send(&self, item: Item<T>) -> bool {
        let full = {
            let mut chunk = self.chunk.borrow_mut();
            chunk.push(item);
            chunk.len() >= FEED_CHUNK
        };
        if full {
            self.flush()
        } else {
            !self.is_cancelled()
        }
    }

    /// Send the items not sent yet; `false` when the import was dropped.
    pub fn flush(&self) -> bool {
        let chunk = std::mem::take(&mut *self.chunk.borrow_mut());
        chunk.is_empty() || self.tx.blocking_send(chunk).is_ok()
    }

    /// Has the import been dropped?
    pub fn is_cancelled(&self) -> bool {
        self.tx.is_closed()
    }
}

/// A reader that fails with "cancelled" once `cancelled()` says so (checked every 64 KiB),
/// so that a long inflate of a dropped import stops within milliseconds.
pub(crate) struct CancelRead<'a, R> {
    inner: R,
    cancelled: &'a dyn Fn() -> bool,
    since_check: usize,
}

impl<'a, R> CancelRead<'a, R> {
    pub fn new(inner: R, cancelled: &'a dyn Fn() -> bool) -> Self {
        CancelRead { inner, cancelled, since_check: 0 }
    }
}

/// The error [`CancelRead`] fails with.
pub(crate) const CANCELLED: &str = "the import was cancelled";

impl<R: std::io::Read> std::io::Read for CancelRead<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.since_check >= 64 << 10 {
            self.since_check = 0;
            if (self.cancelled)() {
                return Err(std::io::Error::other(CANCELLED));
            }
        }
        let n = self.inner.read(buf)?;
        self.since_check += n;
        Ok(n)
    }
}

/// A record read from one JSONL line, with the items to send after it (notes).
pub(crate) type LineRecord<T> = (T, Vec<Item<T>>);

/// Read a JSONL file line by line (lines longer than `max_line_bytes` are rejected and
/// skipped), turning each line into a record with `parse(line, item_name)`; bad lines
/// become rejections, blank lines (`Ok(None)`) nothing. Stops early when the import is
/// dropped.
pub(crate) fn read_jsonl<T>(
    f: &InputFile,
    max_line_bytes: u64,
    feed: &Feed<T>,
    parse: impl Fn(&[u8], &str) -> Result<Option<LineRecord<T>>, String>,
) {
    use std::io::{BufRead, Read};
    let name = f.display();
    let file = match std::fs::File::open(&f.path) {
        Ok(file) => file,
        Err(e) => {
            feed.send(Item::Reject(name, format!("cannot open: {e}")));
            return;
        }
    };
    let mut reader = std::io::BufReader::new(file);
    let mut line = Vec::new();
    let mut n = 0u64;
    loop {
        line.clear();
        n += 1;
        let read = match (&mut reader).take(max_line_bytes + 1).read_until(b'\n', &mut line) {
            Ok(0) => break,
            Ok(r) => r,
            Err(e) => {
                feed.send(Item::Reject(format!("{name}:{n}"), format!("cannot read: {e}")));
                break;
            }
        };
        let item = format!("{name}:{n}");
        if line.len() as u64 > max_line_bytes {
            // Skip the rest of the over-long line without holding it in memory.
            let mut skipped = read as u64;
            loop {
                let buf = match reader.fill_buf() {
                    Ok(b) if !b.is_empty() => b,
                    _ => break,
                };
                let (used, end) = match memchr_newline(buf) {
                    Some(i) => (i + 1, true),
                    None => (buf.len(), false),
                };
                reader.consume(used);
                skipped += used as u64;
                if end || feed.is_cancelled() {
                    break;
                }
            }
            feed.send(Item::Reject(item, format!("line longer than {max_line_bytes} bytes")));
            if !feed.send(Item::Advance(skipped)) {
                break;
            }
            continue;
        }
        let keep_going = match parse(&line, &item) {
            Ok(None) => true,
            Ok(Some((record, extra))) => {
                let sent = feed.send(Item::Record(item, record));
                extra.into_iter().fold(sent, |ok, x| feed.send(x) && ok)
            }
            Err(e) => feed.send(Item::Reject(item, e)),
        };
        if !feed.send(Item::Advance(read as u64)) || !keep_going {
            break;
        }
    }
}

fn memchr_newline(buf: &[u8]) -> Option<usize> {
    buf.iter().position(|&b| b == b'\n')
}

/// Reader threads running now (also those of dropped imports still winding down).
static READERS: AtomicUsize = AtomicUsize::new(0);

/// How many import reader threads are running in this process. An import whose future is
/// dropped (an API request that timed out or lost its client) stops its reader at the next
/// item or within 64 KiB of inflating; this count shows it (`zhiwen serve` exports it).
pub fn running_import_readers() -> usize {
    READERS.load(Ordering::SeqCst)
}

struct ReaderGuard;

impl ReaderGuard {
    fn enter() -> Self {
        READERS.fetch_add(1, Ordering::SeqCst);
        ReaderGuard
    }
}

impl Drop for ReaderGuard {
    fn drop(&mut self) {
        READERS.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Run `read` on a blocking thread, feeding the returned channel (in chunks of items).
/// Dropping the receiver (the import future) makes [`Feed::send`] fail and
/// [`Feed::is_cancelled`] true.
pub(crate) fn spawn_reader<T, F>(read: F) -> (mpsc::Receiver<Vec<Item<T>>>, tokio::task::JoinHandle<()>)
where
    T: Send + 'static,
    F: FnOnce(&Feed<T>) + Send + 'static,
{
    let (tx, rx) = mpsc::channel::<Vec<Item<T>>>(FEED_CHUNKS);
    let guard = ReaderGuard::enter();
    let handle = tokio::task::spawn_blocking(move || {
        let _guard = guard;
        let feed = Feed { tx, chunk: RefCell::new(Vec::with_capacity(FEED_CHUNK)) };
        read(&feed);
        feed.flush();
    });
    (rx, handle)
}

/// Forward the non-record items to the summary and progress; return the records.
pub(crate) fn route<T>(item: Item<T>, summary: &mut ImportSummary, progress: &dyn Progress) -> Option<(String, T)> {
    match item {
        Item::Record(name, t) => return Some((name, t)),
        Item::Reject(what, why) => summary.reject(what, why),
        Item::Note(what, note) => summary.note(what, note),
        Item::Replaced(n) => summary.replaced_bytes += n,
        Item::SkippedBytes(n) => summary.skipped_bytes += n,
        Item::Skip => summary.skipped += 1,
        Item::Advance(n) => progress.advance(n),
        Item::File(name) => progress.message(&name),
    }
    None
}

/// Read at most `limit` bytes of a file; larger files are refused rather than truncated.
pub(crate) fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let f = std::fs::File::open(path).map_err(|e| format!("cannot open: {e}"))?;
    let mut buf = Vec::new();
    f.take(limit + 1).read_to_end(&mut buf).map_err(|e| format!("cannot read: {e}"))?;
    if buf.len() as u64 > limit {
        return Err(format!("larger than the limit of {limit} bytes"));
    }
    Ok(buf)
}
