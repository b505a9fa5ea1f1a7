//! Chapter splitting: a long novel becomes sections at its headings, so each chapter is
//! matched on its own and reported with its title.
//!
//! Headings are whole short lines. Strong headings: `第N章/回/节/卷/部/集/篇/话`, `卷N`,
//! `卷之N`, `Chapter N`, and the named parts 楔子, 序章, 引子, 尾声, 后记, 番外 (N in Arabic,
//! full-width or Chinese numerals, 〇 and 两 included). Weak headings, used only when a text has
//! no strong heading and at least two weak ones: numbered lines (`1.`, `一、`, `（三）`) and
//! Markdown `#` lines. Text before the first heading becomes the section `序`; a heading
//! followed directly by another (a volume heading before its first chapter) is merged into
//! it; a text without headings is one section; sections longer than
//! [`ChapterOptions::max_section_chars`] are split at paragraph boundaries.

use zhiwen_store::NewSection;

/// How texts are split.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChapterOptions {
    /// Sections longer than this many characters are split at paragraph boundaries
    /// (0 = never split).
    pub max_section_chars: usize,
    /// Longest line (in characters) that can be a heading.
    pub max_heading_chars: usize,
}

impl Default for ChapterOptions {
    fn default() -> Self {
        ChapterOptions { max_section_chars: 20_000, max_heading_chars: 40 }
    }
}

/// Title given to the text before the first heading.
pub const PREFACE_TITLE: &str = "序";

/// One section of a text: its heading and its character range (`[start, end)`, in
/// characters of the whole text; the heading line is part of the range).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chapter {
    /// The heading line (trimmed), `序` for a preface, empty for a text without headings.
    pub title: String,
    /// First character.
    pub start: usize,
    /// End character (exclusive).
    pub end: usize,
    byte_start: usize,
    byte_end: usize,
}

impl Chapter {
    /// The chapter's text within the `text` it was split from.
    pub fn text<'a>(&self, text: &'a str) -> &'a str {
        text.get(self.byte_start..self.byte_end).unwrap_or("")
    }
}

#[derive(Debug, Clone, Copy)]
struct Line {
    byte_start: usize,
    byte_end: usize,
    char_start: usize,
    char_end: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Heading {
    Strong,
    Weak,
}

const NUMERALS: &str = "0123456789０１２３４５６７８９〇零一二两三四五六七八九十百千万壹贰叁肆伍陆柒捌玖拾佰仟廿卅";
const UNITS: &str = "章回节卷部集篇话幕";
const NAMED: &[&str] = &["楔子", "序章", "序幕", "引子", "尾声", "后记", "番外", "终章", "序言", "前言"];

fn is_numeral(c: char) -> bool {
    NUMERALS.contains(c)
}

fn is_space(c: char) -> bool {
    c.is_whitespace() || c == '\u{3000}' || c == '\u{feff}'
}

/// After a heading marker, the rest must look like a title, not a sentence.
fn title_rest_ok(rest: &str) -> bool {
    match rest.chars().next() {
        None => true,
        Some(c) => is_space(c) || "：:·.．、-—_（(【[《「".contains(c) || !c.is_alphanumeric() || is_cjk(c),
    }
}

fn is_cjk(c: char) -> bool {
    matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{3400}'..='\u{4dbf}' | '\u{f900}'..='\u{faff}')
}

fn classify(line: &str, max_chars: usize) -> Option<Heading> {
    let t = line.trim_matches(is_space);
    if t.is_empty() || t.chars().count() > max_chars {
        return None;
    }
    // Sentences are not headings, even when they start like one ("第二天，他...").
    if t.contains('。') || t.ends_with('，') || t.ends_with(',') || t.contains('！') && t.chars().count() > 20 {
        return None;
    }
    let md = t.starts_with('#');
    let t = t.trim_start_matches('#').trim_start_matches(is_space);
    let t = t.strip_prefix("正文").map(|r| r.trim_start_matches(is_space)).unwrap_or(t);
    if t.is_empty() {
        return None;
    }
    // 第N章 / 第N回 ...
    if let Some(rest) = t.strip_prefix('第') {
        let digits: String = rest.chars().take_while(|&c| is_numeral(c) || is_space(c)).collect();
        if digits.chars().any(is_numeral) {
            let after = &rest[digits.len()..];
            if let Some(u) = after.chars().next() {
                if UNITS.contains(u) && title_rest_ok(&after[u.len_utf8()..]) {
                    return Some(Heading::Strong);
                }
            }
        }
    }
    // 卷N, 卷之N, 卷N 标题
    if let Some(rest) = t.strip_prefix('卷') {
        let rest = rest.strip_prefix('之').unwrap_or(rest);
        let n = rest.chars().take_while(|&c| is_numeral(c)).count();
        if n > 0 {
            let after: String = rest.chars().skip(n).collect();
            if title_rest_ok(&after) {
                return Some(Heading::Strong);
            }
        }
    }
    // Chapter 12 / CHAPTER XII
    let lower = t.to_ascii_lowercase();
    if let Some(rest) = lower.strip_prefix("chapter") {
        let rest = rest.trim_start();
        let first = rest.split(|c: char| !c.is_alphanumeric()).next().unwrap_or("");
        if !first.is_empty()
            && (first.chars().all(|c| c.is_ascii_digit())
                || first.chars().all(|c| "ivxlcdm".contains(c))
                || first.chars().all(is_numeral))
        {
            return Some(Heading::Strong);
        }
    }
    for name in NAMED {
        if let Some(rest) = t.strip_prefix(name) {
            if rest.is_empty() || rest.starts_with(is_space) || rest.starts_with(['：', ':', '·']) {
                return Some(Heading::Strong);
            }
        }
    }
    // Weak: "1. 标题", "一、标题", "（三）标题", "12 标题" (short lines only).
    let short = t.chars().count() <= 25;
    if short {
        let inner = t.strip_prefix(['（', '(']).unwrap_or(t);
        let n = inner.chars().take_while(|&c| is_numeral(c)).count();
        if n > 0 && n <= 6 {
            let after: String = inner.chars().skip(n).collect();
            let mut cs = after.chars();
            match cs.next() {
                Some('、' | '.' | '．' | '）' | ')') => {
                    let title: String = cs.collect();
                    let title = title.trim_matches(is_space);
                    // "1.5" is a number, not a heading.
                    if !title.starts_with(|c: char| c.is_ascii_digit()) {
                        return Some(Heading::Weak);
                    }
                }
                Some(c) if is_space(c) && t.chars().next().is_some_and(|c| !c.is_ascii_digit()) => {
                    return Some(Heading::Weak)
                }
                _ => {}
            }
        }
    }
    if md {
        return Some(Heading::Weak);
    }
    None
}

fn lines(text: &str) -> Vec<Line> {
    let mut out = Vec::new();
    let mut byte_start = 0;
    let mut char_start = 0;
    let mut chars = 0;
    for (i, c) in text.char_indices() {
        chars += 1;
        if c == '\n' {
            out.push(Line { byte_start, byte_end: i + 1, char_start, char_end: chars });
            byte_start = i + 1;
            char_start = chars;
        }
    }
    if byte_start < text.len() {
        out.push(Line { byte_start, byte_end: text.len(), char_start, char_end: chars });
    }
    out
}

fn is_blank(s: &str) -> bool {
    s.chars().all(is_space)
}

/// Split `text` into chapters. The chapters cover the whole text, in order, without gaps.
pub fn split(text: &str, opts: &ChapterOptions) -> Vec<Chapter> {
    let lines = lines(text);
    if lines.is_empty() {
        return Vec::new();
    }
    let kinds: Vec<Option<Heading>> = lines
        .iter()
        .map(|l| classify(text.get(l.byte_start..l.byte_end).unwrap_or(""), opts.max_heading_chars))
        .collect();
    let strong = kinds.iter().filter(|k| **k == Some(Heading::Strong)).count();
    let weak = kinds.iter().filter(|k| **k == Some(Heading::Weak)).count();
    let wanted = if strong > 0 {
        Some(Heading::Strong)
    } else if weak >= 2 {
        Some(Heading::Weak)
    } else {
        None
    };
    let heads: Vec<usize> = match wanted {
        Some(w) => (0..lines.len()).filter(|&i| kinds[i] == Some(w)).collect(),
        None => Vec::new(),
    };
    let total_chars = lines.last().map_or(0, |l| l.char_end);
    let mut raw: Vec<Chapter> = Vec::new();
    let first = heads.first().map_or(lines.len(), |&i| i);
    if first > 0 {
        let end_line = if first < lines.len() { lines[first].byte_start } else { text.len() };
        let pre = &text[..end_line];
        let (end_char, title) =
            if first < lines.len() { (lines[first].char_start, PREFACE_TITLE) } else { (total_chars, "") };
        if !is_blank(pre) || heads.is_empty() {
            raw.push(Chapter { title: title.to_owned(), start: 0, end: end_char, byte_start: 0, byte_end: end_line });
        }
    }
    for (k, &h) in heads.iter().enumerate() {
        let line = lines[h];
        let (end, byte_end) = match heads.get(k + 1) {
            Some(&n) => (lines[n].char_start, lines[n].byte_start),
            None => (total_chars, text.len()),
        };
        let title = text[line.byte_start..line.byte_end].trim_matches(is_space).trim_start_matches('#');
        let title = title.trim_matches(is_space).to_owned();
        let start = if raw.is_empty() { 0 } else { line.char_start };
        let byte_start = if raw.is_empty() { 0 } else { line.byte_start };
        raw.push(Chapter { title, start, end, byte_start, byte_end });
        let _ = line.char_end;
    }
    // Merge heading-only sections into the next one ("卷一" directly followed by "第一章").
    let mut merged: Vec<Chapter> = Vec::with_capacity(raw.len());
    let mut pending: Option<Chapter> = None;
    let n = raw.len();
    for (i, mut ch) in raw.into_iter().enumerate() {
        if let Some(p) = pending.take() {
            ch.title = format!("{} {}", p.title, ch.title).trim().to_owned();
            ch.start = p.start;
            ch.byte_start = p.byte_start;
        }
        let body = body_after_heading(ch.text(text), !ch.title.is_empty() && ch.title != PREFACE_TITLE);
        if is_blank(body) && i + 1 < n {
            pending = Some(ch);
        } else {
            merged.push(ch);
        }
    }
    if opts.max_section_chars == 0 {
        return merged;
    }
    let mut out = Vec::with_capacity(merged.len());
    for ch in merged {
        split_long(text, ch, opts.max_section_chars, &mut out);
    }
    out
}

fn body_after_heading(section: &str, has_heading: bool) -> &str {
    if !has_heading {
        return section;
    }
    let trimmed = section.trim_start_matches(is_space);
    match trimmed.find('\n') {
        Some(i) => &trimmed[i + 1..],
        None => "",
    }
}

/// Cut a long chapter at line starts (paragraph boundaries) every ~`max` characters; a
/// single line longer than `max` is cut after a sentence end or, failing that, anywhere.
fn split_long(text: &str, ch: Chapter, max: usize, out: &mut Vec<Chapter>) {
    if ch.end - ch.start <= max {
        out.push(ch);
        return;
    }
    let body = ch.text(text);
    let mut cuts: Vec<(usize, usize)> = Vec::new(); // (char offset, byte offset) within body
    let mut last_cut = 0usize;
    let mut last_para: Option<(usize, usize)> = None;
    let mut last_sentence: Option<(usize, usize)> = None;
    for (ci, (bi, c)) in body.char_indices().enumerate() {
        let here = ci + 1;
        let next_byte = bi + c.len_utf8();
        if c == '\n' {
            last_para = Some((here, next_byte));
        } else if "。！？!?；".contains(c) {
            last_sentence = Some((here, next_byte));
        }
        if here - last_cut >= max {
            let cut = match (last_para, last_sentence) {
                (Some(p), _) if p.0 > last_cut + max / 2 => p,
                (_, Some(s)) if s.0 > last_cut + max / 2 => s,
                _ => (here, next_byte),
            };
            if cut.0 < ch.end - ch.start {
                cuts.push(cut);
            }
            last_cut = cut.0;
            last_para = None;
            last_sentence = None;
        }
    }
    let mut prev = (0usize, 0usize);
    let total = (ch.end - ch.start, ch.byte_end - ch.byte_start);
    let parts: Vec<(usize, usize, usize, usize)> = cuts
        .iter()
        .chain(std::iter::once(&total))
        .map(|&c| {
            let r = (prev.0, c.0, prev.1, c.1);
            prev = c;
            r
        })
        .filter(|r| r.1 > r.0)
        .collect();
    for (k, (a, b, ba, bb)) in parts.into_iter().enumerate() {
        let title = if k == 0 {
            ch.title.clone()
        } else if ch.title.is_empty() {
            format!("({})", k + 1)
        } else {
            format!("{} ({})", ch.title, k + 1)
        };
        out.push(Chapter {
            title,
            start: ch.start + a,
            end: ch.start + b,
            byte_start: ch.byte_start + ba,
            byte_end: ch.byte_start + bb,
        });
    }
}

/// The sections of a work's text, as the store wants them. Sections whose text is blank
/// are dropped (the store refuses them); ordinals stay consecutive.
pub fn sections(text: &str, opts: &ChapterOptions) -> Vec<NewSection> {
    split(text, opts)
        .into_iter()
        .filter(|c| !is_blank(c.text(text)))
        .enumerate()
        .map(|(i, c)| NewSection {
            ordinal: i as u32,
            text: c.text(text).to_owned(),
            title: c.title,
            char_start: c.start as u64,
            char_end: c.end as u64,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn titles(text: &str) -> Vec<String> {
        split(text, &ChapterOptions::default()).into_iter().map(|c| c.title).collect()
    }

    fn check_cover(text: &str, opts: &ChapterOptions) {
        let chs = split(text, opts);
        let total = text.chars().count();
        let mut at = 0;
        for c in &chs {
            assert_eq!(c.start, at, "{chs:?}");
            assert!(c.end >= c.start);
            assert_eq!(c.text(text).chars().count(), c.end - c.start);
            at = c.end;
        }
        assert_eq!(at, if chs.is_empty() { 0 } else { total });
    }

    #[test]
    fn splits_at_chinese_headings_with_preface() {
        let t = "前言的话。\n第一章 开端\n正文一。\n第二章　风起\n正文二。\n第十二章\n正文三。\n";
        assert_eq!(titles(t), vec!["序", "第一章 开端", "第二章　风起", "第十二章"]);
        check_cover(t, &ChapterOptions::default());
        let t = "第一回 宴桃园豪杰三结义\n话说天下大势。\n第一百零一回 出陇上\n却说。";
        assert_eq!(titles(t), vec!["第一回 宴桃园豪杰三结义", "第一百零一回 出陇上"]);
        let t = "第１２章 全角\n内容。\n第〇章 零\n内容。";
        assert_eq!(titles(t), vec!["第１２章 全角", "第〇章 零"]);
    }

    #[test]
    fn sentences_are_not_headings() {
        let t = "第二天，他去了学校。\n第三个人来了。\n没有标题的文字。";
        assert_eq!(titles(t), vec![""]);
    }

    #[test]
    fn volume_heading_merges_into_first_chapter() {
        let t = "卷一 潜龙\n第一章 起\n内容。\n第二章 承\n内容。";
        assert_eq!(titles(t), vec!["卷一 潜龙 第一章 起", "第二章 承"]);
        check_cover(t, &ChapterOptions::default());
    }

    #[test]
    fn weak_headings_need_two() {
        let t = "一、缘起\n内容。\n二、经过\n内容。";
        assert_eq!(titles(t), vec!["一、缘起", "二、经过"]);
        let t = "1. 只有一个\n内容。";
        assert_eq!(titles(t), vec![""]);
        let t = "# Title\ntext\n## Second\nmore";
        assert_eq!(titles(t), vec!["Title", "Second"]);
        let t = "Chapter 1\nIt was.\nCHAPTER XII\nEnd.";
        assert_eq!(titles(t), vec!["Chapter 1", "CHAPTER XII"]);
    }

    #[test]
    fn long_text_without_headings_is_cut_at_paragraphs() {
        let para = "这是一个段落。".repeat(100) + "\n";
        let t = para.repeat(40); // 28k chars
        let opts = ChapterOptions { max_section_chars: 10_000, ..Default::default() };
        let chs = split(&t, &opts);
        assert!(chs.len() >= 3, "{}", chs.len());
        for c in &chs[..chs.len() - 1] {
            assert!(c.text(&t).ends_with('\n'));
            assert!(c.end - c.start <= 10_000);
        }
        check_cover(&t, &opts);
        let one_line = "字".repeat(25_000);
        check_cover(&one_line, &opts);
    }

    #[test]
    fn sections_have_consecutive_ordinals_and_ranges() {
        let t = "\n\n第一章 a\n甲\n第二章 b\n乙";
        let s = sections(t, &ChapterOptions::default());
        assert_eq!(s.len(), 2);
        assert_eq!(s[0].ordinal, 0);
        assert_eq!(s[1].title, "第二章 b");
        assert_eq!(s[1].char_end as usize, t.chars().count());
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(512))]
        /// Any text, built from heading-like pieces: never panics, chapters tile it.
        #[test]
        fn chapters_tile_any_text(parts in proptest::collection::vec(
            proptest::prop_oneof![
                proptest::strategy::Just("第一章 开端\n".to_owned()),
                proptest::strategy::Just("卷二\n".to_owned()),
                proptest::strategy::Just("一、\n".to_owned()),
                proptest::strategy::Just("# \n".to_owned()),
                proptest::strategy::Just("\u{3000}\r\n".to_owned()),
                "[第章回卷〇一十百0-9０-９#、.（）\\n 。a-z]{0,12}",
                "\\PC{0,30}",
            ],
            0..30,
        ), max in 0usize..50) {
            let text: String = parts.concat();
            let opts = ChapterOptions { max_section_chars: max, ..Default::default() };
            check_cover(&text, &opts);
            for (i, s) in sections(&text, &opts).iter().enumerate() {
                proptest::prop_assert_eq!(s.ordinal as usize, i);
                proptest::prop_assert!(!s.text.trim().is_empty());
            }
        }
    }
}
