//! The transformations a pirate applies to a text, on paragraphs of pieces so that the
//! copied characters stay labelled through every step.

use std::collections::HashMap;

use pinyin::ToPinyin;
use zhiwen_core::initials::initial_of;

use super::site::{copied, other, Para, Piece};
use crate::corpus::S2t;
use crate::rng::Rng;

/// Everything the transformations draw from.
#[derive(Debug, Clone)]
pub struct Tools {
    /// Simplified -> traditional.
    pub s2t: S2t,
    /// For a common character, the other common characters of the same full reading
    /// (first reading, tone ignored).
    pub homophones: HashMap<char, Vec<char>>,
    /// Han characters with their corpus frequency (a random element is a frequent character).
    pub han_pool: Vec<char>,
    /// Real pirate ad lines.
    pub ad_lines: Vec<String>,
}

/// The plain first reading of a character (e.g. `zhong`), if it has one.
pub fn reading(c: char) -> Option<&'static str> {
    c.to_pinyin().map(|p| p.plain())
}

impl Tools {
    /// Build the homophone table from characters that occur at least `min_count` times
    /// in `texts` (rare characters would make the substitution unnatural).
    pub fn new<'a>(s2t: S2t, ad_lines: Vec<String>, texts: impl Iterator<Item = &'a str>, min_count: usize) -> Self {
        let mut freq: HashMap<char, usize> = HashMap::new();
        let mut han_pool = Vec::new();
        for t in texts {
            for c in t.chars().filter(|&c| initial_of(c).is_some()) {
                *freq.entry(c).or_default() += 1;
                han_pool.push(c);
            }
        }
        // Keep the pool a manageable size without losing the frequency distribution.
        if han_pool.len() > 400_000 {
            let step = han_pool.len() / 400_000 + 1;
            han_pool = han_pool.into_iter().step_by(step).collect();
        }
        let mut common: Vec<char> = freq.iter().filter(|(_, &n)| n >= min_count).map(|(&c, _)| c).collect();
        common.sort_unstable();
        let mut by_reading: HashMap<&str, Vec<char>> = HashMap::new();
        for &c in &common {
            if let Some(r) = reading(c) {
                by_reading.entry(r).or_default().push(c);
            }
        }
        let mut homophones = HashMap::new();
        for group in by_reading.values().filter(|g| g.len() > 1) {
            for &c in group {
                homophones.insert(c, group.iter().copied().filter(|&o| o != c).collect());
            }
        }
        Tools { s2t, homophones, han_pool, ad_lines }
    }

    fn random_han(&self, rng: &mut Rng) -> char {
        *rng.pick(&self.han_pool).unwrap_or(&'的')
    }
}

/// Paragraphs of a corpus text: split on line breaks, indentation and blanks trimmed.
pub fn paragraphs(text: &str) -> Vec<String> {
    text.split('\n')
        .map(|p| p.trim_matches(|c: char| c.is_whitespace() || c == '\u{3000}'))
        .filter(|p| !p.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Sentences of a paragraph, each with its closing punctuation (and closing quote).
pub fn sentences(para: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = para.chars().peekable();
    while let Some(c) = chars.next() {
        cur.push(c);
        if matches!(c, '。' | '！' | '？' | '；' | '!' | '?') {
            while let Some(&n) = chars.peek() {
                if matches!(n, '”' | '’' | '」' | '』' | '）' | '"') {
                    cur.push(n);
                    chars.next();
                } else {
                    break;
                }
            }
            out.push(std::mem::take(&mut cur));
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// At least `min` paragraphs: long paragraphs are split at sentence ends (news
/// transcripts often have only a few paragraphs, too few to insert ads between or reorder).
pub fn at_least_paragraphs(paras: Vec<String>, min: usize) -> Vec<String> {
    if paras.len() >= min {
        return paras;
    }
    let sents: Vec<String> = paras.iter().flat_map(|p| sentences(p)).collect();
    if sents.len() < min {
        return if sents.len() > paras.len() { sents } else { paras };
    }
    let per = sents.len().div_ceil(min);
    sents.chunks(per).map(|c| c.concat()).collect()
}

/// Content (copied paragraphs) of a text.
pub fn as_copied(paras: &[String]) -> Vec<Para> {
    paras.iter().map(|p| copied(p.clone())).collect()
}

/// Apply `f` to the copied text of every piece.
fn map_copied(paras: &mut [Para], mut f: impl FnMut(&str) -> String) {
    for para in paras.iter_mut() {
        for piece in para.iter_mut().filter(|p| p.copied) {
            piece.text = f(&piece.text);
        }
    }
}

/// Total characters of copied text.
pub fn copied_len(paras: &[Para]) -> usize {
    paras.iter().flatten().filter(|p| p.copied).map(|p| p.text.chars().count()).sum()
}

/// Traditional script (OpenCC S->T, phrases first).
pub fn traditional(paras: &mut [Para], tools: &Tools) {
    map_copied(paras, |t| tools.s2t.convert(t));
}

/// Replace `rate` of the Han characters by another common character of the same reading.
/// Returns (replaced, Han characters).
pub fn homophones(paras: &mut [Para], tools: &Tools, rate: f64, rng: &mut Rng) -> (usize, usize) {
    let (mut han, mut eligible) = (0usize, 0usize);
    for piece in paras.iter().flatten().filter(|p| p.copied) {
        for c in piece.text.chars().filter(|&c| initial_of(c).is_some()) {
            han += 1;
            eligible += usize::from(tools.homophones.contains_key(&c));
        }
    }
    // Only characters with a homophone can change: raise their probability so that the
    // share of all Han characters that change is `rate`.
    let p = if eligible == 0 { 0.0 } else { (rate * han as f64 / eligible as f64).min(1.0) };
    let mut replaced = 0;
    map_copied(paras, |t| {
        t.chars()
            .map(|c| match tools.homophones.get(&c) {
                Some(alts) if rng.chance(p) => {
                    replaced += 1;
                    *rng.pick(alts).unwrap_or(&c)
                }
                _ => c,
            })
            .collect()
    });
    (replaced, han)
}

/// Insert, delete or replace `rate` of the characters (random frequent Han characters).
pub fn edits(paras: &mut [Para], tools: &Tools, rate: f64, rng: &mut Rng) {
    map_copied(paras, |t| {
        let mut out = String::with_capacity(t.len() + t.len() / 8);
        for c in t.chars() {
            if rng.chance(rate) {
                match rng.below(3) {
                    0 => {
                        out.push(tools.random_han(rng));
                        out.push(c);
                    }
                    1 => {}
                    _ => out.push(tools.random_han(rng)),
                }
            } else {
                out.push(c);
            }
        }
        if out.is_empty() {
            out.push(tools.random_han(rng));
        }
        out
    });
}

/// Punctuation changed (full-width <-> ASCII, quotes to corner brackets) and the line
/// breaks moved: either hard-wrapped lines of 20-40 characters or everything run together.
pub fn reformat(paras: Vec<Para>, rng: &mut Rng) -> Vec<Para> {
    let style = rng.below(3);
    let mut paras = paras;
    map_copied(&mut paras, |t| {
        t.chars()
            .map(|c| match (style, c) {
                (0, '，') => ',',
                (0, '。') => '.',
                (0, '：') => ':',
                (0, '；') => ';',
                (0, '！') => '!',
                (0, '？') => '?',
                (1, '“') => '「',
                (1, '”') => '」',
                (1, '‘') => '『',
                (1, '’') => '』',
                (1, '、') => '，',
                (_, '“') | (_, '”') => '"',
                (_, '，') => '，',
                (_, c) => c,
            })
            .collect()
    });
    if rng.chance(0.5) {
        // Hard wrap: one paragraph per line of 20-40 characters.
        let width = rng.range(20, 40);
        let mut out = Vec::new();
        for para in paras {
            for piece in para {
                let chars: Vec<char> = piece.text.chars().collect();
                for line in chars.chunks(width) {
                    out.push(vec![Piece { text: line.iter().collect(), copied: piece.copied }]);
                }
            }
        }
        out
    } else {
        // Run together: two or three source paragraphs per page paragraph.
        let per = rng.range(2, 3);
        paras.chunks(per).map(|c| c.concat()).collect()
    }
}

/// Real ad lines every 2-4 paragraphs; some pasted into the middle of a paragraph.
pub fn ads(paras: Vec<Para>, tools: &Tools, rng: &mut Rng) -> Vec<Para> {
    let mut out = Vec::new();
    let mut next = rng.range(1, 3);
    for (i, para) in paras.into_iter().enumerate() {
        if i == next {
            let line = rng.pick(&tools.ad_lines).cloned().unwrap_or_default();
            if rng.chance(0.3) && para.len() == 1 && para[0].copied {
                // Inside the paragraph, at a sentence end.
                let sents = sentences(&para[0].text);
                let cut = rng.range(1, sents.len().max(1));
                let (a, b) = sents.split_at(cut.min(sents.len()));
                let mut p = vec![Piece { text: a.concat(), copied: true }, Piece { text: line, copied: false }];
                if !b.is_empty() {
                    p.push(Piece { text: b.concat(), copied: true });
                }
                out.push(p);
                next = i + rng.range(2, 4);
                continue;
            }
            out.push(other(line));
            next = i + rng.range(2, 4);
        }
        out.push(para);
    }
    out.push(other(rng.pick(&tools.ad_lines).cloned().unwrap_or_default()));
    out
}

/// Keep the first `share` of the characters (cut at a sentence end when one is close).
pub fn truncate(paras: &[String], lo: f64, hi: f64, rng: &mut Rng) -> Vec<String> {
    let total: usize = paras.iter().map(|p| p.chars().count()).sum();
    let target = (total as f64 * rng.uniform(lo, hi)).round() as usize;
    let (min, max) = ((total as f64 * lo).ceil() as usize, (total as f64 * hi).floor() as usize);
    let mut out = Vec::new();
    let mut len = 0;
    for para in paras {
        let n = para.chars().count();
        if len + n <= target {
            out.push(para.clone());
            len += n;
            continue;
        }
        // Cut inside this paragraph: the sentence end nearest the target within bounds.
        let mut best = None;
        let mut acc = len;
        let mut text = String::new();
        for s in sentences(para) {
            acc += s.chars().count();
            text.push_str(&s);
            if acc >= min && acc <= max {
                let d = acc.abs_diff(target);
                if best.as_ref().is_none_or(|(bd, _)| d < *bd) {
                    best = Some((d, text.clone()));
                }
            }
        }
        match best {
            Some((_, t)) => out.push(t),
            None => out.push(para.chars().take(target.saturating_sub(len).max(1)).collect()),
        }
        break;
    }
    out
}

/// A contiguous excerpt of `lo..hi` of the characters, starting at a sentence start
/// where possible. Returns the excerpt's paragraphs.
pub fn excerpt(paras: &[String], lo: f64, hi: f64, rng: &mut Rng) -> Vec<String> {
    let text: Vec<char> = paras.join("\n").chars().collect();
    let content = text.iter().filter(|&&c| c != '\n').count();
    let want = (content as f64 * rng.uniform(lo, hi)).round() as usize;
    let latest = content.saturating_sub(want);
    // Start positions in content characters at sentence starts.
    let mut starts = vec![0usize];
    let mut k = 0;
    for (i, &c) in text.iter().enumerate() {
        if c == '\n' {
            continue;
        }
        k += 1;
        if matches!(c, '。' | '！' | '？') && text.get(i + 1).is_some_and(|&n| !matches!(n, '”' | '’')) && k <= latest
        {
            starts.push(k);
        }
    }
    let start = *rng.pick(&starts).unwrap_or(&0);
    let mut out = vec![String::new()];
    let mut k = 0;
    for &c in &text {
        if c == '\n' {
            if k > start && !out.last().is_some_and(String::is_empty) {
                out.push(String::new());
            }
            continue;
        }
        if k >= start && k < start + want {
            if let Some(last) = out.last_mut() {
                last.push(c);
            }
        }
        k += 1;
    }
    out.retain(|p| !p.is_empty());
    out
}

/// Paragraphs in another order (never the original one when there are at least two).
pub fn reorder(paras: Vec<String>, rng: &mut Rng) -> Vec<String> {
    let paras = at_least_paragraphs(paras, 4);
    if paras.len() < 2 {
        return paras;
    }
    let mut order: Vec<usize> = (0..paras.len()).collect();
    while order.iter().enumerate().all(|(i, &j)| i == j) {
        rng.shuffle(&mut order);
    }
    order.into_iter().map(|i| paras[i].clone()).collect()
}
