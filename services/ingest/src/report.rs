//! What an import or a crawl tells its caller: counts, every rejection with its reason,
//! the ids that need (re)fingerprinting, and a progress callback.

use std::fmt;

use zhiwen_store::Outcome;

/// One item that was not stored, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Rejection {
    /// The item: a file, `file:line`, `file#record`, or a URL.
    pub item: String,
    /// Why it was refused, in words a user can act on.
    pub reason: String,
}

/// Something worth knowing about an item that was imported: bytes replaced while
/// decoding, a page cut at the page size bound.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Note {
    /// The item: a file, `file:line`, `file#record`, or a URL.
    pub item: String,
    /// What happened to it.
    pub note: String,
}

/// Ids of stored records that are new or whose content changed: the caller schedules
/// fingerprinting for exactly these (ingest never fingerprints).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Changed {
    /// Works inserted or updated.
    pub works: Vec<i64>,
    /// Sections of those works (every section of an updated work: their old
    /// fingerprints were deleted).
    pub sections: Vec<i64>,
    /// Pages inserted or whose text changed.
    pub pages: Vec<i64>,
}

impl Changed {
    /// Nothing to fingerprint.
    pub fn is_empty(&self) -> bool {
        self.works.is_empty() && self.sections.is_empty() && self.pages.is_empty()
    }
}

/// The result of `import works` or `import pages`. One bad item never stops a run: it
/// lands in `rejected`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ImportSummary {
    /// New records.
    pub imported: u64,
    /// Existing records whose content changed.
    pub updated: u64,
    /// Existing records with the same content.
    pub unchanged: u64,
    /// Records that are not content and were skipped on purpose (WARC request and
    /// metadata records, non-HTML responses, files of other types in folders).
    pub skipped: u64,
    /// Items refused, with reasons.
    pub rejected: Vec<Rejection>,
    /// Bytes of input that were malformed in their charset and replaced by U+FFFD in the
    /// texts read (a text mostly valid in its charset is kept, its bad bytes replaced).
    #[serde(default)]
    pub replaced_bytes: u64,
    /// Bytes of input skipped to find the next record after a corrupt one (WARC files
    /// resynchronise on the next `WARC/1.x` record header; each skip is also a rejection).
    #[serde(default)]
    pub skipped_bytes: u64,
    /// Items imported with a remark (bytes replaced, page cut at the size bound).
    #[serde(default)]
    pub notes: Vec<Note>,
    /// What the caller should fingerprint.
    pub changed: Changed,
}

impl ImportSummary {
    pub(crate) fn count(&mut self, outcome: Outcome) {
        match outcome {
            Outcome::Inserted => self.imported += 1,
            Outcome::Updated => self.updated += 1,
            Outcome::Unchanged => self.unchanged += 1,
        }
    }

    pub(crate) fn reject(&mut self, item: impl Into<String>, reason: impl fmt::Display) {
        let item = item.into();
        let mut reason = reason.to_string();
        // Errors name their subject; the item already does.
        if let Some(rest) = reason.strip_prefix(&format!("{item}: ")) {
            reason = rest.to_owned();
        }
        tracing::info!(%item, %reason, "rejected");
        self.rejected.push(Rejection { item, reason });
    }

    pub(crate) fn note(&mut self, item: impl Into<String>, note: impl Into<String>) {
        let (item, note) = (item.into(), note.into());
        tracing::info!(%item, %note, "imported with a note");
        self.notes.push(Note { item, note });
    }

    /// Items looked at that were content: stored, unchanged or rejected.
    pub fn total(&self) -> u64 {
        self.imported + self.updated + self.unchanged + self.rejected.len() as u64
    }
}

impl fmt::Display for ImportSummary {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "imported {}, updated {}, unchanged {}, skipped {}, rejected {}",
            self.imported,
            self.updated,
            self.unchanged,
            self.skipped,
            self.rejected.len()
        )?;
        if self.replaced_bytes > 0 {
            write!(f, ", malformed bytes replaced {}", self.replaced_bytes)?;
        }
        if self.skipped_bytes > 0 {
            write!(f, ", corrupt bytes skipped {}", self.skipped_bytes)?;
        }
        for n in &self.notes {
            write!(f, "\n  note: {}: {}", n.item, n.note)?;
        }
        write_rejections(f, &self.rejected)
    }
}

pub(crate) fn write_rejections(f: &mut fmt::Formatter<'_>, rejected: &[Rejection]) -> fmt::Result {
    for r in rejected {
        write!(f, "\n  rejected: {}: {}", r.item, r.reason)?;
    }
    Ok(())
}

/// Progress of a long import or crawl, for a progress bar. Every method has an empty
/// default, so a caller implements only what it shows. Called from worker tasks:
/// implementations must be cheap and thread-safe.
pub trait Progress: Send + Sync {
    /// A phase starts; `total` units (bytes of input for imports, `None` when unknown).
    fn start(&self, _phase: &str, _total: Option<u64>) {}
    /// The total grew or became known (the crawler's frontier grows as it discovers links).
    fn set_total(&self, _total: u64) {}
    /// `units` more are done.
    fn advance(&self, _units: u64) {}
    /// What is being worked on now (a file, a URL).
    fn message(&self, _msg: &str) {}
    /// The phase is over.
    fn finish(&self) {}
}

/// A [`Progress`] that shows nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {}
