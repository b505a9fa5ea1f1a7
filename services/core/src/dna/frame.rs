//! The reference frame: the expected share of each pinyin initial letter in general
//! Chinese text, which a segment's letter counts are compared against.
//!
//! The shipped frame is data (`data/dna_reference_frame.txt`), embedded at compile time
//! and parsed once. [`ReferenceFrame::measure_texts`] and [`ReferenceFrame::to_data_file`]
//! rebuild that file from a corpus; the core itself never reads files.

use std::sync::LazyLock;

use crate::initials::{initial_of, INITIAL_LETTERS};
use crate::CoreError;

use super::letter_slot;

/// The shipped frame's text, in the format of [`ReferenceFrame::to_data_file`].
const BUILTIN_DATA: &str = include_str!("../../data/dna_reference_frame.txt");

/// Parsed once; the shipped file is checked by a test, so the uniform fallback only
/// guards against a broken build, it is never the intended frame.
static BUILTIN: LazyLock<ReferenceFrame> =
    LazyLock::new(|| ReferenceFrame::parse(BUILTIN_DATA).unwrap_or_else(|_| ReferenceFrame::uniform()));

/// First line of every frame file: names the format so a wrong file is refused.
const MAGIC: &str = "# zhiwen dna reference frame v1";

/// Expected share of each initial letter in general text.
#[derive(Debug, Clone, PartialEq)]
pub struct ReferenceFrame {
    /// Probability of each letter of [`INITIAL_LETTERS`] (same order); they sum to 1.
    pub probabilities: [f64; 23],
}

impl ReferenceFrame {
    /// The frame shipped with zhiwen (`data/dna_reference_frame.txt`; its header says
    /// from which corpus and how it was measured).
    pub fn builtin() -> &'static ReferenceFrame {
        &BUILTIN
    }

    /// Every letter equally likely: a neutral frame for tests, never a good default
    /// (initials are far from uniform: `y`, `s`, `z`, `j` dominate Chinese text).
    pub fn uniform() -> ReferenceFrame {
        ReferenceFrame { probabilities: [1.0 / 23.0; 23] }
    }

    /// Count the initial letters of texts (Han characters only, see [`initial_of`]).
    pub fn letter_counts_of_texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> [u64; 23] {
        let mut counts = [0u64; 23];
        for text in texts {
            for l in text.chars().filter_map(initial_of) {
                add_letter(&mut counts, l);
            }
        }
        counts
    }

    /// Count the letters of initial-letter streams; bytes that are not initial letters
    /// are ignored.
    pub fn letter_counts_of_streams<'a>(streams: impl IntoIterator<Item = &'a [u8]>) -> [u64; 23] {
        let mut counts = [0u64; 23];
        for stream in streams {
            for &l in stream {
                add_letter(&mut counts, l);
            }
        }
        counts
    }

    /// The frame of measured letter counts, add-one smoothed so that no letter has
    /// probability 0 (a zero would make its residual undefined).
    pub fn from_counts(counts: &[u64; 23]) -> ReferenceFrame {
        let total: f64 = counts.iter().map(|&c| c as f64 + 1.0).sum();
        let mut probabilities = [0.0; 23];
        for (p, &c) in probabilities.iter_mut().zip(counts) {
            *p = (c as f64 + 1.0) / total;
        }
        ReferenceFrame { probabilities }
    }

    /// Measure the frame of a corpus of texts (pure: the caller reads the files).
    pub fn measure_texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> ReferenceFrame {
        Self::from_counts(&Self::letter_counts_of_texts(texts))
    }

    /// Measure the frame of initial-letter streams (see [`crate::initials::initial_letters`]).
    pub fn measure_letters<'a>(streams: impl IntoIterator<Item = &'a [u8]>) -> ReferenceFrame {
        Self::from_counts(&Self::letter_counts_of_streams(streams))
    }

    /// The probability of one letter of [`INITIAL_LETTERS`] (0 for any other byte).
    pub fn probability(&self, letter: u8) -> f64 {
        letter_slot(letter).and_then(|i| self.probabilities.get(i)).copied().unwrap_or(0.0)
    }

    /// Serialise to the data-file format: a `#` header (the format line, then
    /// `description`, one `# ` line per line of it), then one `letter<TAB>probability`
    /// line per letter in alphabetical order, probabilities with 10 decimals. Parsing
    /// the output gives the frame rounded to those 10 decimals.
    pub fn to_data_file(&self, description: &str) -> String {
        let mut out = String::new();
        out.push_str(MAGIC);
        out.push('\n');
        out.push_str("# Expected share of each pinyin initial letter (first letter of the most common\n");
        out.push_str("# reading of each Han character) in general Chinese text. Used by the DNA\n");
        out.push_str("# fingerprint (services/core/src/dna) as the expected letter counts of a segment.\n");
        for line in description.lines() {
            out.push_str("# ");
            out.push_str(line.trim_end());
            out.push('\n');
        }
        for (letter, p) in INITIAL_LETTERS.iter().zip(&self.probabilities) {
            out.push_str(&format!("{}\t{:.10}\n", *letter as char, p));
        }
        out
    }

    /// Parse the data-file format of [`ReferenceFrame::to_data_file`]: comment lines
    /// start with `#`, blank lines are ignored, every one of the 23 letters must appear
    /// exactly once with a probability in (0, 1), and the probabilities must sum to 1
    /// within 1e-6.
    pub fn parse(data: &str) -> Result<ReferenceFrame, CoreError> {
        let invalid = |reason: String| CoreError::InvalidParams { name: "dna.reference_frame", reason };
        if data.lines().next().map(str::trim) != Some(MAGIC) {
            return Err(invalid(format!("the first line must be `{MAGIC}`")));
        }
        let mut probabilities = [f64::NAN; 23];
        for (number, line) in data.lines().enumerate().map(|(i, l)| (i + 1, l.trim())) {
            if line.is_empty() || line.starts_with('#') {
                continue;
            }
            let mut fields = line.split_whitespace();
            let (Some(letter), Some(value), None) = (fields.next(), fields.next(), fields.next()) else {
                return Err(invalid(format!("line {number}: expected `letter probability`, got `{line}`")));
            };
            let slot = match letter.as_bytes() {
                [l] => letter_slot(*l),
                _ => None,
            };
            let Some(slot) = slot else {
                return Err(invalid(format!("line {number}: `{letter}` is not a pinyin initial letter")));
            };
            let p: f64 = value.parse().map_err(|_| invalid(format!("line {number}: `{value}` is not a number")))?;
            if !(p > 0.0 && p < 1.0) {
                return Err(invalid(format!("line {number}: probability {p} is outside (0, 1)")));
            }
            if !probabilities[slot].is_nan() {
                return Err(invalid(format!("line {number}: letter `{letter}` appears twice")));
            }
            probabilities[slot] = p;
        }
        if let Some(i) = probabilities.iter().position(|p| p.is_nan()) {
            return Err(invalid(format!("letter `{}` is missing", INITIAL_LETTERS[i] as char)));
        }
        let sum: f64 = probabilities.iter().sum();
        if (sum - 1.0).abs() > 1e-6 {
            return Err(invalid(format!("the probabilities sum to {sum}, not 1")));
        }
        Ok(ReferenceFrame { probabilities })
    }
}

fn add_letter(counts: &mut [u64; 23], letter: u8) {
    if let Some(c) = letter_slot(letter).and_then(|i| counts.get_mut(i)) {
        *c += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_file_round_trips() {
        let frame = ReferenceFrame::measure_texts(["中华人民共和国", "天下大势，分久必合"]);
        let text = frame.to_data_file("test corpus\nsecond line");
        assert!(text.contains("# test corpus\n# second line\n"));
        let parsed = ReferenceFrame::parse(&text).expect("parses");
        for (a, b) in parsed.probabilities.iter().zip(&frame.probabilities) {
            assert!((a - b).abs() < 1e-9);
        }
        // A parsed frame is a fixed point of the format.
        assert_eq!(ReferenceFrame::parse(&parsed.to_data_file("x")), Ok(parsed));
    }

    #[test]
    fn malformed_files_are_refused() {
        let good = ReferenceFrame::uniform().to_data_file("uniform");
        assert!(ReferenceFrame::parse(&good).is_ok());
        assert!(ReferenceFrame::parse("").is_err());
        assert!(ReferenceFrame::parse(&good.replace("z\t", "v\t")).is_err());
        assert!(ReferenceFrame::parse(&good.replace("z\t", "y\t")).is_err());
        assert!(ReferenceFrame::parse(&good.replace("a\t0.04", "a\t0.14")).is_err());
        assert!(ReferenceFrame::parse(&good.replace("a\t0.04", "a\tx0.04")).is_err());
        assert!(ReferenceFrame::parse(&good.replace("a\t0.04", "a\t-0.04")).is_err());
    }

    #[test]
    fn smoothing_keeps_every_letter_possible() {
        let frame = ReferenceFrame::measure_letters([b"zzzz".as_slice()]);
        assert!(frame.probabilities.iter().all(|&p| p > 0.0));
        assert!(frame.probability(b'z') > frame.probability(b'a'));
        assert_eq!(frame.probability(b'v'), 0.0);
    }
}
