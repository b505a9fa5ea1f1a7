//! Where each canonical character came from, stored as runs.
//!
//! Most canonical characters come from one original character each, the one after the
//! previous character's: a plain-text chapter is a few runs a paragraph, a page a few runs
//! a text node. One span a character (8 bytes) was a fifth of a section's cached analysis
//! and of a page's in flight; a run (12 bytes) stands for a whole stretch of them.

use super::SourceSpan;

/// The spans of a canonical text's characters, one per character, in order.
///
/// Run `r` covers the characters from its `at` to the next run's (or the end). A run of
/// one character holds that character's span as it is; a longer run is of characters
/// each one original character wide, one after the other: character `at + j` spans
/// `start + j .. start + j + 1` (so `end == start + length`).
#[derive(Debug, Clone)]
pub struct SpanMap {
    runs: Vec<Run>,
    len: u32,
    /// Where the next character must start to grow the last run (the run's end, when it
    /// is of characters one original character wide); anything else when it cannot grow.
    grow_at: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Run {
    at: u32,
    start: u32,
    end: u32,
}

impl Default for SpanMap {
    fn default() -> Self {
        SpanMap::with_capacity(0)
    }
}

/// Two maps are equal when they give the same spans (how much room they hold aside).
impl PartialEq for SpanMap {
    fn eq(&self, other: &Self) -> bool {
        self.len == other.len && self.runs == other.runs
    }
}

impl Eq for SpanMap {}

impl SpanMap {
    /// An empty map with room for `runs` runs.
    pub(crate) fn with_capacity(runs: usize) -> Self {
        SpanMap { runs: Vec::with_capacity(runs), len: 0, grow_at: u32::MAX }
    }

    /// Append the span of the next character.
    #[inline]
    pub(crate) fn push(&mut self, span: SourceSpan) {
        let len = self.len;
        self.len += 1;
        let unit = span.end == span.start.wrapping_add(1);
        if unit && span.start == self.grow_at {
            if let Some(last) = self.runs.last_mut() {
                last.end += 1;
                self.grow_at += 1;
                return;
            }
        }
        self.runs.push(Run { at: len, start: span.start, end: span.end });
        self.grow_at = if unit { span.end } else { u32::MAX };
    }

    /// The map of `n` characters each mapped to itself (one run, however long).
    pub(crate) fn identity(n: u32) -> Self {
        let runs = if n == 0 { Vec::new() } else { vec![Run { at: 0, start: 0, end: n }] };
        SpanMap { runs, len: n, grow_at: n }
    }

    /// Release the capacity the runs do not use.
    pub(crate) fn shrink_to_fit(&mut self) {
        self.runs.shrink_to_fit();
    }

    /// Number of characters.
    pub fn len(&self) -> usize {
        self.len as usize
    }

    /// No characters.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Bytes held on the heap (capacity, not length).
    pub fn heap_bytes(&self) -> usize {
        self.runs.capacity() * std::mem::size_of::<Run>()
    }

    /// Characters covered by run `r`.
    #[inline]
    fn run_len(&self, r: usize) -> u32 {
        let end = self.runs.get(r + 1).map_or(self.len, |n| n.at);
        end - self.runs[r].at
    }

    /// The span of character `i` of run `r` (which covers it).
    #[inline]
    fn span_in(&self, r: usize, i: u32) -> SourceSpan {
        span_of(self.runs[r], self.run_len(r), i)
    }

    /// The run covering character `i` (`i < len`).
    #[inline]
    fn run_of(&self, i: u32) -> usize {
        self.runs.partition_point(|r| r.at <= i) - 1
    }

    /// The span of character `i`; `None` past the end.
    pub fn get(&self, i: usize) -> Option<SourceSpan> {
        let i = u32::try_from(i).ok().filter(|&i| i < self.len)?;
        Some(self.span_in(self.run_of(i), i))
    }

    /// The span of character `i`; past the end, an empty span where the last character's
    /// ends (at 0 when there is none).
    pub fn at(&self, i: usize) -> SourceSpan {
        self.get(i).unwrap_or_else(|| self.end())
    }

    /// The empty span where the last character's ends: what [`SpanMap::at`] gives past the end.
    fn end(&self) -> SourceSpan {
        let end = self.last().map_or(0, |s| s.end);
        SourceSpan { start: end, end }
    }

    /// The span of the last character.
    pub fn last(&self) -> Option<SourceSpan> {
        self.len.checked_sub(1).and_then(|i| self.get(i as usize))
    }

    /// Every character's span, in order.
    pub fn iter(&self) -> SpanIter<'_> {
        self.iter_from(0)
    }

    /// The spans of characters `from..`, in order.
    pub fn iter_from(&self, from: usize) -> SpanIter<'_> {
        let i = u32::try_from(from).unwrap_or(u32::MAX).min(self.len);
        SpanIter { cursor: self.cursor(), i }
    }

    /// A reader of spans for characters asked in increasing order, which finds each one
    /// by moving on from the run of the one before instead of searching every run.
    pub fn cursor(&self) -> SpanCursor<'_> {
        SpanCursor { map: self, run: 0, from: 0, to: 0 }
    }

    /// The first character (as [`slice::partition_point`]) for which `pred` is false,
    /// given that it is true of every character before that one and false after.
    pub fn partition_point(&self, mut pred: impl FnMut(SourceSpan) -> bool) -> usize {
        let (mut lo, mut hi) = (0u32, self.len);
        while lo < hi {
            let mid = lo + (hi - lo) / 2;
            if pred(self.span_in(self.run_of(mid), mid)) {
                lo = mid + 1;
            } else {
                hi = mid;
            }
        }
        lo as usize
    }

    /// The least start and the greatest end of the spans of characters `start..end`
    /// (`start < end <= len`).
    pub(crate) fn bounds(&self, start: usize, end: usize) -> (u32, u32) {
        let (start, end) = (start as u32, end as u32);
        let (mut lo, mut hi) = (u32::MAX, 0);
        let mut r = self.run_of(start);
        while r < self.runs.len() && self.runs[r].at < end {
            let run = self.runs[r];
            let first = start.max(run.at);
            let last = (end.min(run.at + self.run_len(r))) - 1;
            let (a, b) = (self.span_in(r, first), self.span_in(r, last));
            lo = lo.min(a.start).min(b.start);
            hi = hi.max(a.end).max(b.end);
            r += 1;
        }
        (lo, hi)
    }
}

/// The span of character `i` of `run`, which covers `n` characters, `i` among them.
#[inline]
fn span_of(run: Run, n: u32, i: u32) -> SourceSpan {
    if n == 1 {
        SourceSpan { start: run.start, end: run.end }
    } else {
        let start = run.start + (i - run.at);
        SourceSpan { start, end: start + 1 }
    }
}

impl<'a> IntoIterator for &'a SpanMap {
    type Item = SourceSpan;
    type IntoIter = SpanIter<'a>;

    fn into_iter(self) -> SpanIter<'a> {
        self.iter()
    }
}

/// The spans of a [`SpanMap`], in order ([`SpanMap::iter`]): its cursor, moved on a
/// character at a time.
#[derive(Debug, Clone)]
pub struct SpanIter<'a> {
    cursor: SpanCursor<'a>,
    i: u32,
}

impl Iterator for SpanIter<'_> {
    type Item = SourceSpan;

    #[inline]
    fn next(&mut self) -> Option<SourceSpan> {
        let span = self.cursor.get(self.i as usize)?;
        self.i += 1;
        Some(span)
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let left = (self.cursor.map.len - self.i.min(self.cursor.map.len)) as usize;
        (left, Some(left))
    }
}

impl ExactSizeIterator for SpanIter<'_> {}

/// Spans read in increasing order of character ([`SpanMap::cursor`]).
#[derive(Debug, Clone)]
pub struct SpanCursor<'a> {
    map: &'a SpanMap,
    /// The run of the last character asked for, and the characters it covers.
    run: usize,
    from: u32,
    to: u32,
}

impl SpanCursor<'_> {
    /// The span of character `i`, as [`SpanMap::at`] gives it (an empty span at the end
    /// past the end).
    #[inline]
    pub fn at(&mut self, i: usize) -> SourceSpan {
        self.get(i).unwrap_or_else(|| self.map.end())
    }

    /// The span of character `i`, as [`SpanMap::get`]: found from the run of the last
    /// character asked for when `i` is not before it.
    #[inline]
    pub fn get(&mut self, i: usize) -> Option<SourceSpan> {
        let map = self.map;
        let i = u32::try_from(i).ok().filter(|&i| i < map.len)?;
        if i < self.from || i >= self.to {
            self.seek(i);
        }
        Some(span_of(map.runs[self.run], self.to - self.from, i))
    }

    /// Move to the run of character `i` (`i < len`): a few runs on, else searched for.
    fn seek(&mut self, i: u32) {
        let runs = &self.map.runs;
        let mut r = self.run;
        if i >= self.to {
            for _ in 0..4 {
                if runs.get(r + 1).is_none_or(|n| n.at > i) {
                    break;
                }
                r += 1;
            }
        }
        if i < self.to || runs.get(r + 1).is_some_and(|n| n.at <= i) {
            r = self.map.run_of(i);
        }
        self.run = r;
        self.from = runs[r].at;
        self.to = self.from + self.map.run_len(r);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn map_of(spans: &[SourceSpan]) -> SpanMap {
        let mut map = SpanMap::default();
        spans.iter().for_each(|&s| map.push(s));
        map
    }

    #[test]
    fn maps_of_the_same_spans_are_equal_whatever_their_room() {
        let spans = [SourceSpan { start: 0, end: 1 }, SourceSpan { start: 1, end: 1 }, SourceSpan { start: 1, end: 2 }];
        let mut roomy = SpanMap::with_capacity(64);
        spans.iter().for_each(|&s| roomy.push(s));
        assert_eq!(map_of(&spans), roomy);
        assert_eq!(SpanMap::default(), SpanMap::with_capacity(8));
        assert_ne!(map_of(&spans), map_of(&spans[..2]));
    }

    /// Spans as canonicalisation makes them: starts never decrease; mostly one character
    /// wide and one after the other, with gaps (markup), separators (empty spans), merged
    /// characters (wide spans) and phrases converted as a whole (one span repeated).
    fn spans() -> impl Strategy<Value = Vec<SourceSpan>> {
        proptest::collection::vec((0u8..8, 1u32..5), 0..200).prop_map(|steps| {
            let mut at = 0;
            let mut out: Vec<SourceSpan> = Vec::new();
            for (kind, n) in steps {
                let span = match kind {
                    // A gap, then one character.
                    0 => {
                        at += n;
                        SourceSpan { start: at, end: at + 1 }
                    }
                    1 => SourceSpan { start: at, end: at },
                    2 => SourceSpan { start: at, end: at + n },
                    3 => match out.last() {
                        Some(&last) => last,
                        None => SourceSpan { start: at, end: at + 1 },
                    },
                    _ => SourceSpan { start: at, end: at + 1 },
                };
                at = at.max(span.end);
                out.push(span);
            }
            out
        })
    }

    #[test]
    fn a_plain_text_is_one_run() {
        let spans: Vec<SourceSpan> = (0..1000).map(|i| SourceSpan { start: i, end: i + 1 }).collect();
        let map = map_of(&spans);
        assert_eq!(map.runs.len(), 1);
        assert_eq!(map.iter().collect::<Vec<_>>(), spans);
    }

    proptest! {
        #[test]
        fn the_runs_give_back_every_span(spans in spans(), probes in proptest::collection::vec(0usize..220, 0..40)) {
            let map = map_of(&spans);
            prop_assert_eq!(map.len(), spans.len());
            prop_assert_eq!(map.iter().collect::<Vec<_>>(), spans.clone());
            prop_assert_eq!(map.iter().len(), spans.len());
            for &i in &probes {
                prop_assert_eq!(map.iter_from(i).collect::<Vec<_>>(), spans.get(i..).unwrap_or(&[]).to_vec());
            }
            prop_assert_eq!(map.last(), spans.last().copied());
            let end = spans.last().map_or(SourceSpan::default(), |s| SourceSpan { start: s.end, end: s.end });
            for &i in &probes {
                prop_assert_eq!(map.get(i), spans.get(i).copied());
                prop_assert_eq!(map.at(i), spans.get(i).copied().unwrap_or(end));
            }
            let mut sorted = probes.clone();
            sorted.sort_unstable();
            let mut cursor = map.cursor();
            for &i in sorted.iter().chain(&probes) {
                prop_assert_eq!(cursor.get(i), spans.get(i).copied());
                prop_assert_eq!(cursor.at(i), spans.get(i).copied().unwrap_or(end));
            }
            for &i in &probes {
                let at = i.min(spans.len()) as u32;
                prop_assert_eq!(map.partition_point(|s| s.start < at), spans.partition_point(|s| s.start < at));
                if spans.is_empty() {
                    continue;
                }
                let (a, b) = (i % spans.len(), (i * 7 + 1) % (spans.len() + 1));
                let (a, b) = (a.min(b), a.max(b));
                if a < b {
                    let lo = spans[a..b].iter().map(|s| s.start).min().unwrap_or(0);
                    let hi = spans[a..b].iter().map(|s| s.end).max().unwrap_or(0);
                    prop_assert_eq!(map.bounds(a, b), (lo, hi));
                }
            }
        }
    }
}
