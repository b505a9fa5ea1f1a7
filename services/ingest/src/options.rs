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
            base_url: None,
            invalidate_fingerprints: true,
            owner_from_lines: false,
        }
    }
}
