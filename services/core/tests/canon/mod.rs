//! Canonicalisation: charsets with real encoded bytes, HTML extraction, traditional ->
//! simplified, offsets back into the original, refusals, and property tests.
//!
//! The fixtures under `tests/fixtures/canon/` are public-domain classics (三国演义) from
//! the test corpus, encoded by `regenerate_fixtures` (run it with `--ignored`; it reads
//! the test corpus and its OpenCC simplified -> traditional tables).

use std::path::{Path, PathBuf};

use encoding_rs::{BIG5, GB18030, GBK};
use proptest::prelude::*;
use zhiwen_core::canon::{
    canonicalize, canonicalize_decoded, canonicalize_with_hint, decode, decode_char_refs, slice_chars, sniff_format,
    start_tags, to_simplified, visible_text, CanonicalText, InputFormat,
};
use zhiwen_core::params::CanonParams;
use zhiwen_core::CoreError;

mod charsets;
mod fixtures;
mod html;
mod normalisation;
mod properties;
mod refusals;
mod traditional;

use fixtures::{read_chapters, S2t};

fn fixture_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/canon")
}

fn fixture(name: &str) -> Vec<u8> {
    let path = fixture_dir().join(name);
    std::fs::read(&path).unwrap_or_else(|e| panic!("fixture {}: {e}", path.display()))
}

fn fixture_text(name: &str) -> String {
    String::from_utf8(fixture(name)).expect("UTF-8 fixture")
}

/// The test corpus (`scripts/setup-corpus.sh` assembles it).
fn corpus_dir() -> PathBuf {
    zhiwen_testkit::corpus::file(zhiwen_testkit::corpus::CLASSICS);
    zhiwen_testkit::corpus::dir()
}

fn params() -> CanonParams {
    CanonParams::default()
}

fn canon_text(s: &str) -> String {
    canonicalize(s.as_bytes(), InputFormat::Text, &params()).expect("canonical text").text().to_owned()
}

/// Every canonical character's span lies inside the original and starts never decrease.
fn check_spans(c: &CanonicalText) {
    let original_chars = c.original().chars().count() as u32;
    assert_eq!(c.char_len(), c.text().chars().count());
    let mut last_start = 0;
    for (i, span) in c.source_spans().iter().enumerate() {
        assert!(span.start <= span.end && span.end <= original_chars, "span {i} {span:?} of {original_chars}");
        assert!(span.start >= last_start, "span {i} {span:?} starts before {last_start}");
        last_start = span.start;
    }
}

/// Share of characters of `b` matched in order by `a` (longest common subsequence).
fn agreement(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    if b.is_empty() {
        return if a.is_empty() { 1.0 } else { 0.0 };
    }
    if a.len() == b.len() {
        // Conversions keep the length almost always: compare position by position.
        return a.iter().zip(&b).filter(|(x, y)| x == y).count() as f64 / a.len() as f64;
    }
    lcs_agreement(&a, &b)
}

/// [`agreement`] by the longest common subsequence always (for texts that lost and gained
/// characters, whose lengths may agree by chance).
fn lcs_agreement(a: &[char], b: &[char]) -> f64 {
    let mut prev = vec![0u32; b.len() + 1];
    let mut cur = vec![0u32; b.len() + 1];
    for &x in a {
        for j in 0..b.len() {
            cur[j + 1] = if x == b[j] { prev[j] + 1 } else { prev[j + 1].max(cur[j]) };
        }
        std::mem::swap(&mut prev, &mut cur);
    }
    f64::from(prev[b.len()]) / a.len().max(b.len()) as f64
}
