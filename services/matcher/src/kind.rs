//! What a match is, in the words of the issue: identical, near duplicate, an excerpt of
//! the work, or the work embedded in a larger page.

use serde::{Deserialize, Serialize};
use zhiwen_core::compare::{Comparison, Thresholds, VerdictKind};

/// The kind of a match between a work section (A) and a page (B).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum MatchKind {
    /// The canonical texts are equal.
    Identical,
    /// Most of each text is in the other.
    NearDuplicate,
    /// Part of the section appears on the page: the page is (mostly) inside the section,
    /// or the two share a long passage.
    Excerpt,
    /// (Most of) the whole section appears inside a larger page.
    Embedded,
}

impl MatchKind {
    /// Every kind.
    pub const ALL: [MatchKind; 4] =
        [MatchKind::Identical, MatchKind::NearDuplicate, MatchKind::Excerpt, MatchKind::Embedded];

    /// Stable snake_case name (reports, JSON, webhook).
    pub fn as_str(self) -> &'static str {
        match self {
            MatchKind::Identical => "identical",
            MatchKind::NearDuplicate => "near_duplicate",
            MatchKind::Excerpt => "excerpt",
            MatchKind::Embedded => "embedded",
        }
    }

    /// Parse [`MatchKind::as_str`].
    pub fn parse(s: &str) -> Option<Self> {
        MatchKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// The kind of a comparison of section A with page B, `None` when it is no copy.
    ///
    /// `a_within_b` is `Embedded` only when most of the section is on the page (its
    /// containment reaches `thresholds.containment`); a long shared passage that is a small
    /// part of the section is an `Excerpt`, as is every `b_within_a`.
    pub fn of(c: &Comparison, thresholds: &Thresholds) -> Option<Self> {
        if !c.verdict.duplicate {
            return None;
        }
        Some(match c.verdict.kind {
            VerdictKind::Identical => MatchKind::Identical,
            VerdictKind::NearDuplicate => MatchKind::NearDuplicate,
            VerdictKind::AWithinB => {
                let section_inside = c.a_inside_b();
                if section_inside >= thresholds.containment {
                    MatchKind::Embedded
                } else {
                    MatchKind::Excerpt
                }
            }
            VerdictKind::BWithinA => MatchKind::Excerpt,
            VerdictKind::Unrelated => return None,
        })
    }
}

impl std::fmt::Display for MatchKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
