//! The document lexer: runs of text with their source offsets, a small stack of open
//! elements with the implied end tags that matter for paragraphs and links, paragraphs
//! at block boundaries, and the boilerplate containers and hidden elements that
//! main-content selection needs.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;

use memchr::{memchr, memchr2};

use super::classify::{classify_names, is_hidden, is_separator, weigh, Attrs};
use super::elements::*;
use super::entities::{char_ref, decode_collapsed};
use super::select::select;
use super::tokens::{markup, raw_text_end, Markup};
use super::{Container, Document, Para, Run, RunKind};
use crate::canon::t2s::IntHasher;

/// Deepest element stack kept; deeper elements are treated as empty.
const MAX_DEPTH: usize = 4096;
/// Hidden elements with at most this weight (thirds) are dropped; larger ones are kept,
/// since sites hide whole article halves behind a "read more" button.
const HIDDEN_MAX_WEIGHT: u32 = 60;
const HIDDEN_MAX_RUNS: usize = 64;

#[derive(Debug, Clone, Copy)]
struct Open {
    hash: u64,
    flags: u16,
    container: u32,
    // Marks taken when a hidden element opened.
    mark_runs: u32,
    mark_paras: u32,
    mark_weight: u32,
    mark_link: u32,
}

struct Lexer<'a> {
    b: &'a [u8],
    extract: bool,
    runs: Vec<Run>,
    paras: Vec<Para>,
    containers: Vec<Container>,
    title: Option<String>,
    stack: Vec<Open>,
    open: HashMap<u64, u32, BuildHasherDefault<IntHasher>>,
    link_depth: u32,
    skip_depth: u32,
    pre_depth: u32,
    heading_depth: u32,
    sectioning_depth: u32,
    // The paragraph being built.
    para_first_run: u32,
    para_weight: u32,
    para_link: u32,
    para_links: u32,
    para_separators: u32,
    para_heading: bool,
    total_weight: u32,
    total_link: u32,
}

fn to_u32(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

/// Lex `src` (at most `u32::MAX` bytes: the caller checks) and choose the paragraphs to keep.
pub(in crate::canon) fn parse(src: &str, extract_main_content: bool) -> Document {
    let mut lx = Lexer {
        b: src.as_bytes(),
        extract: extract_main_content,
        runs: Vec::with_capacity(src.len() / 64 + 16),
        paras: Vec::with_capacity(src.len() / 256 + 16),
        containers: Vec::new(),
        title: None,
        stack: Vec::with_capacity(64),
        open: HashMap::default(),
        link_depth: 0,
        skip_depth: 0,
        pre_depth: 0,
        heading_depth: 0,
        sectioning_depth: 0,
        para_first_run: 0,
        para_weight: 0,
        para_link: 0,
        para_links: 0,
        para_separators: 0,
        para_heading: false,
        total_weight: 0,
        total_link: 0,
    };
    lx.run();
    while !lx.stack.is_empty() {
        lx.pop();
    }
    lx.break_para();
    let keep = if lx.extract { select(&lx.paras, &lx.containers) } else { vec![true; lx.paras.len()] };
    Document { runs: lx.runs, paras: lx.paras, keep, title: lx.title }
}

impl Lexer<'_> {
    fn run(&mut self) {
        let b = self.b;
        let n = b.len();
        let mut i = 0;
        let mut text_start = 0;
        while i < n {
            let Some(off) = memchr2(b'<', b'&', &b[i..]) else {
                break;
            };
            let p = i + off;
            if b[p] == b'&' {
                if let Some((end, c1, c2)) = char_ref(b, p) {
                    self.text(text_start, p);
                    self.chars(p, end, c1, c2);
                    text_start = end;
                    i = end;
                } else {
                    i = p + 1;
                }
                continue;
            }
            let mut attrs = Attrs::default();
            let end = match markup(b, p, &mut |name, value| attrs.set(b, name, value)) {
                Markup::Text => None,
                Markup::Skip(end) => {
                    self.text(text_start, p);
                    Some(end)
                }
                Markup::Tag { end_tag, name, self_closing, end } => {
                    self.text(text_start, p);
                    Some(self.tag(end_tag, &b[name], &attrs, self_closing, end))
                }
            };
            match end {
                Some(e) => {
                    i = e.min(n);
                    text_start = i;
                }
                None => i = p + 1,
            }
        }
        self.text(text_start, n);
    }

    /// A start or end tag ending before `after`; returns the offset after it (and after
    /// raw-text content).
    fn tag(&mut self, end_tag: bool, raw_name: &[u8], attrs: &Attrs, self_closing: bool, after: usize) -> usize {
        let info = element_info(raw_name);
        let hash = name_hash(raw_name);
        if end_tag {
            self.end_tag(hash, info);
            return after;
        }
        self.start_tag(hash, info, raw_name, attrs, self_closing, after)
    }

    fn end_tag(&mut self, hash: u64, info: u16) {
        if self.open.get(&hash).copied().unwrap_or(0) > 0 {
            while let Some(top) = self.stack.last() {
                let done = top.hash == hash;
                self.pop();
                if done {
                    break;
                }
            }
        } else if info & BLOCK != 0 || hash == H_BR {
            // `</br>` is a line break; a stray `</p>` ends a paragraph.
            self.break_para();
        }
    }

    fn start_tag(
        &mut self,
        hash: u64,
        info: u16,
        name: &[u8],
        attrs: &Attrs,
        self_closing: bool,
        after: usize,
    ) -> usize {
        let b = self.b;
        if info & RAW != 0 {
            let (content_end, resume) = raw_text_end(b, after, name);
            if info & TITLE != 0 {
                if self.title.is_none() && self.skip_depth == 0 {
                    let t = decode_collapsed(&b[after..content_end]);
                    if !t.is_empty() {
                        self.title = Some(t);
                    }
                }
            } else if info & TEXTAREA != 0 && !self.extract {
                self.break_para();
                self.rcdata(after, content_end);
                self.break_para();
            } else if info & BLOCK != 0 {
                self.break_para();
            }
            return resume;
        }
        if info & PLAINTEXT != 0 {
            self.break_para();
            self.pre_depth += 1;
            self.text(after, b.len());
            return b.len();
        }
        if info & CLOSES_P != 0 && self.stack.last().is_some_and(|o| o.hash == H_P) {
            self.pop();
        }
        if info & HEADING != 0 && self.stack.last().is_some_and(|o| o.flags & HEADING != 0) {
            self.pop();
        }
        match hash {
            H_LI => {
                self.close_open(&[H_LI], &[name_hash_const(b"ul"), name_hash_const(b"ol"), name_hash_const(b"menu")])
            }
            H_DD | H_DT => self.close_open(&[H_DD, H_DT], &[name_hash_const(b"dl")]),
            H_TR => self.close_open(&[H_TR], &[name_hash_const(b"table")]),
            H_TD | H_TH => self.close_open(&[H_TD, H_TH], &[H_TR, name_hash_const(b"table")]),
            H_OPTION if self.stack.last().is_some_and(|o| o.hash == H_OPTION) => self.pop(),
            H_A => self.close_open(&[H_A], &[]),
            _ => {}
        }
        if info & VOID != 0 || self_closing {
            // Void elements, and XHTML-style `<div/>`, hold nothing.
            if info & BLOCK != 0 {
                self.break_para();
            }
            return after;
        }
        if self.stack.len() >= MAX_DEPTH {
            if info & BLOCK != 0 {
                self.break_para();
            }
            return after;
        }

        let mut flags = info;
        if self.extract && self.is_boilerplate(info, attrs) {
            flags |= CONTAINER | BLOCK;
        }
        if is_hidden(b, attrs) {
            flags |= HIDDEN;
        }
        if flags & (BLOCK | CONTAINER) != 0 {
            self.break_para();
        }
        let mut open = Open {
            hash,
            flags,
            container: u32::MAX,
            mark_runs: to_u32(self.runs.len()),
            mark_paras: to_u32(self.paras.len()),
            mark_weight: self.total_weight,
            mark_link: self.total_link,
        };
        if flags & CONTAINER != 0 {
            open.container = to_u32(self.containers.len());
            let first = to_u32(self.paras.len());
            self.containers.push(Container { first_para: first, end_para: u32::MAX });
        }
        if flags & LINK != 0 {
            self.link_depth += 1;
            self.para_links += 1;
        }
        if flags & SKIP != 0 {
            self.skip_depth += 1;
        }
        if flags & PRE != 0 {
            self.pre_depth += 1;
        }
        if flags & HEADING != 0 {
            self.heading_depth += 1;
        }
        if flags & SECTIONING != 0 {
            self.sectioning_depth += 1;
        }
        *self.open.entry(hash).or_insert(0) += 1;
        self.stack.push(open);
        after
    }

    /// Pop to the nearest open element in `targets`, unless a `boundary` element is nearer.
    /// Only the top of the stack is searched, so malformed pages stay linear.
    fn close_open(&mut self, targets: &[u64], boundaries: &[u64]) {
        if targets.iter().all(|t| self.open.get(t).copied().unwrap_or(0) == 0) {
            return;
        }
        let depth =
            self.stack.iter().rev().take(32).position(|o| targets.contains(&o.hash) || boundaries.contains(&o.hash));
        if let Some(d) = depth {
            let idx = self.stack.len() - 1 - d;
            if targets.contains(&self.stack[idx].hash) {
                while self.stack.len() > idx {
                    self.pop();
                }
            }
        }
    }

    fn is_boilerplate(&self, info: u16, attrs: &Attrs) -> bool {
        let b = self.b;
        let class = attrs.class.clone().map(|r| &b[r]).unwrap_or(b"");
        let id = attrs.id.clone().map(|r| &b[r]).unwrap_or(b"");
        let names = classify_names(class, id);
        if info & BOILER != 0 {
            // A header or footer inside an article (or named like content) introduces or
            // closes the article itself.
            let content_header = self.sectioning_depth > 0 || (names.positive && !names.strong);
            return !(info & HEADER_FOOTER != 0 && content_header);
        }
        if let Some(r) = &attrs.role {
            let role = &b[r.clone()];
            for boiler in
                [&b"navigation"[..], b"banner", b"contentinfo", b"complementary", b"menu", b"menubar", b"search"]
            {
                if role.eq_ignore_ascii_case(boiler) {
                    return true;
                }
            }
        }
        names.strong || (names.weak && !names.positive)
    }

    fn pop(&mut self) {
        let Some(o) = self.stack.pop() else { return };
        if let Some(c) = self.open.get_mut(&o.hash) {
            *c = c.saturating_sub(1);
        }
        if o.flags & LINK != 0 {
            self.link_depth = self.link_depth.saturating_sub(1);
        }
        if o.flags & SKIP != 0 {
            self.skip_depth = self.skip_depth.saturating_sub(1);
        }
        if o.flags & PRE != 0 {
            self.pre_depth = self.pre_depth.saturating_sub(1);
        }
        if o.flags & HEADING != 0 {
            self.heading_depth = self.heading_depth.saturating_sub(1);
        }
        if o.flags & SECTIONING != 0 {
            self.sectioning_depth = self.sectioning_depth.saturating_sub(1);
        }
        if o.flags & HIDDEN != 0 {
            self.end_hidden(&o);
        }
        if o.flags & (BLOCK | CONTAINER) != 0 {
            self.break_para();
        }
        if o.flags & CONTAINER != 0 {
            let end = to_u32(self.paras.len());
            if let Some(c) = self.containers.get_mut(o.container as usize) {
                c.end_para = end;
            }
        }
    }

    /// Drop a small hidden element's text (watermarks hidden between the characters of a
    /// sentence); keep a large one (content revealed by a script).
    fn end_hidden(&mut self, o: &Open) {
        let weight = self.total_weight.saturating_sub(o.mark_weight);
        let link = self.total_link.saturating_sub(o.mark_link);
        let same_para = to_u32(self.paras.len()) == o.mark_paras;
        let runs = self.runs.len().saturating_sub(o.mark_runs as usize);
        // The run limit keeps nested hidden elements from re-walking the same runs.
        if weight > HIDDEN_MAX_WEIGHT || !same_para || runs > HIDDEN_MAX_RUNS {
            return;
        }
        for run in self.runs.iter_mut().skip(o.mark_runs as usize) {
            run.kind = RunKind::Deleted;
        }
        self.para_weight = self.para_weight.saturating_sub(weight);
        self.para_link = self.para_link.saturating_sub(link);
        self.total_weight = self.total_weight.saturating_sub(weight);
        self.total_link = self.total_link.saturating_sub(link);
    }

    fn break_para(&mut self) {
        let end = to_u32(self.runs.len());
        if end > self.para_first_run {
            self.paras.push(Para {
                runs: self.para_first_run..end,
                weight: self.para_weight,
                link: self.para_link,
                links: self.para_links,
                separators: self.para_separators,
                heading: self.para_heading,
            });
        }
        self.para_first_run = end;
        self.para_weight = 0;
        self.para_link = 0;
        self.para_links = 0;
        self.para_separators = 0;
        self.para_heading = false;
    }

    fn add_weight(&mut self, w: u32, separators: u32) {
        if self.link_depth == 0 {
            self.para_separators = self.para_separators.saturating_add(separators);
        }
        self.para_weight = self.para_weight.saturating_add(w);
        self.total_weight = self.total_weight.saturating_add(w);
        if self.link_depth > 0 {
            self.para_link = self.para_link.saturating_add(w);
            self.total_link = self.total_link.saturating_add(w);
        }
        if self.heading_depth > 0 && w > 0 {
            self.para_heading = true;
        }
    }

    fn text(&mut self, start: usize, end: usize) {
        if start >= end || self.skip_depth > 0 {
            return;
        }
        let kind = if self.pre_depth > 0 { RunKind::Pre } else { RunKind::Text };
        self.runs.push(Run { start: to_u32(start), end: to_u32(end), kind });
        let (w, separators) = weigh(&self.b[start..end]);
        self.add_weight(w, separators);
    }

    fn chars(&mut self, start: usize, end: usize, c1: char, c2: Option<char>) {
        if self.skip_depth > 0 {
            return;
        }
        self.runs.push(Run { start: to_u32(start), end: to_u32(end), kind: RunKind::Chars(c1, c2) });
        let w = |c: char| {
            if !c.is_ascii() && !c.is_whitespace() {
                3
            } else if c.is_ascii_alphanumeric() {
                1
            } else {
                0
            }
        };
        let weight = w(c1) + c2.map_or(0, w);
        let separators = u32::from(is_separator(c1)) + u32::from(c2.is_some_and(is_separator));
        self.add_weight(weight, separators);
    }

    /// Text with character references but no markup (textarea content).
    fn rcdata(&mut self, start: usize, end: usize) {
        let b = self.b;
        let mut i = start;
        let mut text_start = start;
        while let Some(off) = memchr(b'&', &b[i..end]) {
            let p = i + off;
            match char_ref(&b[..end], p) {
                Some((e, c1, c2)) => {
                    self.text(text_start, p);
                    self.chars(p, e, c1, c2);
                    text_start = e;
                    i = e;
                }
                None => i = p + 1,
            }
        }
        self.text(text_start, end);
    }
}
