//! Options of the importers.

use zhiwen_core::params::CanonParams;

use crate::chapters::ChapterOptions;

/// How `import works` and `import pages` read and store their input.
#[derive(Debug, Clone)]
pub struct ImportOptions {
    /// Canonicalisation of pages (the page text stored is the canonical text).
    pub canon: CanonParams,
    /// Chapter splitting of works.
    pub chapters: ChapterOptions,
    /// Records stored per store call.
    pub batch_size: usize,
    /// Files (and single records) above this size are refused.
    pub max_file_bytes: u64,
    /// Bounds on archives, compressed streams and pages (decompression and size bombs).
    pub limits: ImportLimits,
    /// For saved `.html` files without their own URL (no "saved from" mark, canonical
    /// link or `og:url`): the URL is this prefix joined with the file's path relative to
    /// the folder given. Without it such files are rejected.
    pub base_url: Option<String>,
    /// Delete the stored fingerprints of the sections of updated works, so that stale
    /// fingerprints are never matched until the caller rebuilds them (pages have no stored
    /// fingerprints: a page is analysed from its text whenever it is matched).
    pub invalidate_fingerprints: bool,
    /// May a JSONL line of works name its own rights holder in an `"owner"` field? `true`
    /// for an operator's import (the line's owner wins; the owner given is the default).
    /// `false`, the default, for anything a rights holder sends: every work belongs to the
    /// owner given, and a line naming any other owner is rejected, with the same reason
    /// whether or not that owner or its work exists.
    pub owner_from_lines: bool,
}

impl Default for ImportOptions {
    fn default() -> Self {
        ImportOptions {
            canon: CanonParams::default(),
            chapters: ChapterOptions::default(),
            batch_size: 64,
            max_file_bytes: 256 << 20,
            limits: ImportLimits::default(),
            base_url: None,
            invalidate_fingerprints: true,
            owner_from_lines: false,
        }
    }
}

/// Bounds on what one input may cost, checked before inflating where the input declares
/// its sizes (zip headers) and enforced again while reading (headers lie). An input over
/// a bound is rejected with the bound in its reason; the import goes on with the next one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ImportLimits {
    /// Entries an archive (EPUB) may list in its central directory.
    pub max_archive_entries: usize,
    /// Uncompressed bytes read from one archive (an EPUB's container, package and spine
    /// documents together; an entry read twice counts twice).
    pub max_archive_bytes: u64,
    /// Uncompressed bytes of one archive entry, and of one compressed HTTP body inside a
    /// WARC record.
    pub max_entry_bytes: u64,
    /// Largest ratio of uncompressed to compressed bytes, for one archive entry, one
    /// archive as a whole and one compressed stream (a WARC.gz file, an HTTP body). The
    /// first [`RATIO_GRACE_BYTES`] of output are exempt (tiny inputs compress well).
    pub max_ratio: u64,
    /// Bytes of one page's body that are decoded, canonicalised and stored. A longer body
    /// is cut at this many bytes (at a character boundary) before decoding: its text and
    /// body are stored cut, and the import summary notes it. The matcher then never
    /// analyses more than this of one page.
    pub max_page_bytes: u64,
}

/// Output of a compressed input below which [`ImportLimits::max_ratio`] is not checked.
pub const RATIO_GRACE_BYTES: u64 = 1 << 20;

impl Default for ImportLimits {
    fn default() -> Self {
        ImportLimits {
            max_archive_entries: 10_000,
            max_archive_bytes: 256 << 20,
            max_entry_bytes: 64 << 20,
            max_ratio: 100,
            max_page_bytes: 4 << 20,
        }
    }
}

impl ImportLimits {
    /// Is `out` bytes of output from `compressed` bytes of input over the ratio bound?
    pub fn ratio_exceeded(&self, out: u64, compressed: u64) -> bool {
        out > RATIO_GRACE_BYTES && out > compressed.max(1).saturating_mul(self.max_ratio.max(1))
    }
}
