//! HTML -> runs of text with their source offsets, grouped into paragraphs, and the
//! choice of the paragraphs that make up the main content.
//!
//! The lexer is hand-written because no maintained HTML parser exposes the source
//! offsets of text nodes, and every canonical character must map back into the raw page.
//! It follows the WHATWG tokenizer where text depends on it (comments, raw-text
//! elements, character references, quoted attributes), keeps a small stack of open
//! elements with the implied end tags that matter for paragraphs and links, and never
//! fails: malformed markup degrades to text or is skipped, unterminated constructs run to
//! the end of the input, and nothing it reads can make it panic.

use std::collections::HashMap;
use std::hash::BuildHasherDefault;
use std::ops::Range;

use memchr::{memchr, memchr2, memmem};

use super::t2s::IntHasher;

/// A piece of the page's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RunKind {
    /// Ordinary text: line breaks are white space.
    Text,
    /// Preformatted text: line breaks end paragraphs.
    Pre,
    /// A character reference, decoded to one or two characters.
    Chars(char, Option<char>),
    /// Removed after the fact (small hidden elements).
    Deleted,
}

/// A run of text: bytes `start..end` of the decoded page.
#[derive(Debug, Clone, Copy)]
pub(super) struct Run {
    pub start: u32,
    pub end: u32,
    pub kind: RunKind,
}

/// A paragraph: the runs between two block boundaries.
#[derive(Debug, Clone)]
pub(super) struct Para {
    pub runs: Range<u32>,
    /// Text weight in thirds: a non-ASCII character counts 3, an ASCII letter or digit 1.
    weight: u32,
    /// The part of `weight` inside links.
    link: u32,
    /// Number of links that start in the paragraph.
    links: u32,
    /// Path separators outside links (`>`, `»`, `/`, `|` ...): breadcrumbs.
    separators: u32,
    heading: bool,
}

/// An element whose content is boilerplate unless it holds most of the page.
#[derive(Debug, Clone, Copy)]
struct Container {
    first_para: u32,
    end_para: u32,
}

/// The lexed page.
#[derive(Debug)]
pub(super) struct Document {
    pub runs: Vec<Run>,
    pub paras: Vec<Para>,
    /// One flag per paragraph: part of the text (main content when extraction is on).
    pub keep: Vec<bool>,
    /// The first `<title>`, entities decoded and white space collapsed.
    pub title: Option<String>,
}

// Element properties.
const VOID: u16 = 1;
const BLOCK: u16 = 1 << 1;
/// Raw text: the content up to the end tag is not markup and not shown.
const RAW: u16 = 1 << 2;
/// Content parsed but not shown (template, svg ...).
const SKIP: u16 = 1 << 3;
const LINK: u16 = 1 << 4;
const HEADING: u16 = 1 << 5;
const PRE: u16 = 1 << 6;
/// Navigation, page header and footer, forms: boilerplate under main-content extraction.
const BOILER: u16 = 1 << 7;
/// article / main: a header or footer inside belongs to the content.
const SECTIONING: u16 = 1 << 8;
/// Closes an open `<p>` when it starts.
const CLOSES_P: u16 = 1 << 9;
const TITLE: u16 = 1 << 10;
const TEXTAREA: u16 = 1 << 11;
const PLAINTEXT: u16 = 1 << 12;
// Flags that only open elements carry.
const CONTAINER: u16 = 1 << 13;
const HIDDEN: u16 = 1 << 14;
/// header / footer: boilerplate only outside article and main.
const HEADER_FOOTER: u16 = 1 << 15;

/// Deepest element stack kept; deeper elements are treated as empty.
const MAX_DEPTH: usize = 4096;
/// Hidden elements with at most this weight (thirds) are dropped; larger ones are kept,
/// since sites hide whole article halves behind a "read more" button.
const HIDDEN_MAX_WEIGHT: u32 = 60;
const HIDDEN_MAX_RUNS: usize = 64;

fn tag_info(name: &[u8]) -> u16 {
    match name {
        b"br" | b"hr" => VOID | BLOCK | if name == b"hr" { CLOSES_P } else { 0 },
        b"area" | b"base" | b"col" | b"embed" | b"img" | b"input" | b"link" | b"meta" | b"param" | b"source"
        | b"track" | b"wbr" | b"keygen" | b"basefont" | b"bgsound" | b"frame" | b"image" => VOID,
        b"a" => LINK,
        b"p" | b"div" | b"blockquote" | b"center" | b"dl" | b"dir" | b"fieldset" | b"figure" | b"figcaption"
        | b"hgroup" | b"ol" | b"ul" | b"details" | b"summary" | b"dialog" | b"address" | b"section" => BLOCK | CLOSES_P,
        b"li" | b"dd" | b"dt" => BLOCK | CLOSES_P,
        b"article" | b"main" => BLOCK | CLOSES_P | SECTIONING,
        b"nav" | b"aside" | b"menu" => BLOCK | CLOSES_P | BOILER,
        b"header" | b"footer" => BLOCK | CLOSES_P | BOILER | HEADER_FOOTER,
        b"form" => BLOCK | CLOSES_P | BOILER,
        b"select" | b"button" | b"datalist" => BLOCK | BOILER,
        b"h1" | b"h2" | b"h3" | b"h4" | b"h5" | b"h6" => BLOCK | CLOSES_P | HEADING,
        b"pre" | b"listing" => BLOCK | CLOSES_P | PRE,
        b"table" | b"caption" | b"thead" | b"tbody" | b"tfoot" | b"tr" | b"td" | b"th" | b"option" | b"optgroup"
        | b"legend" | b"html" | b"body" | b"frameset" | b"marquee" => BLOCK,
        b"script" | b"style" | b"noscript" | b"iframe" | b"noembed" | b"noframes" | b"xmp" => RAW | BLOCK,
        b"title" => RAW | TITLE,
        b"textarea" => RAW | TEXTAREA | BLOCK,
        b"plaintext" => PLAINTEXT | BLOCK,
        b"template" | b"svg" | b"math" | b"object" | b"canvas" | b"video" | b"audio" | b"head" => {
            // `head` holds no visible text besides the title, which RAW handles; skipping
            // it only matters for junk after a missing </head>, so treat it as a block.
            if name == b"head" {
                BLOCK
            } else {
                SKIP | BLOCK
            }
        }
        _ => 0,
    }
}

fn name_hash(name: &[u8]) -> u64 {
    // FNV-1a over the lower-cased name.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in name {
        h ^= u64::from(b.to_ascii_lowercase());
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

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

#[derive(Default)]
struct Attrs {
    class: Option<Range<usize>>,
    id: Option<Range<usize>>,
    style: Option<Range<usize>>,
    role: Option<Range<usize>>,
    hidden: bool,
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

const H_P: u64 = name_hash_const(b"p");
const H_A: u64 = name_hash_const(b"a");
const H_LI: u64 = name_hash_const(b"li");
const H_DD: u64 = name_hash_const(b"dd");
const H_DT: u64 = name_hash_const(b"dt");
const H_TR: u64 = name_hash_const(b"tr");
const H_TD: u64 = name_hash_const(b"td");
const H_TH: u64 = name_hash_const(b"th");
const H_OPTION: u64 = name_hash_const(b"option");
const H_BR: u64 = name_hash_const(b"br");

const fn name_hash_const(name: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < name.len() {
        h ^= name[i].to_ascii_lowercase() as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    h
}

#[inline]
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r' | b'\x0C')
}

/// Weight of a text in thirds (see [`Para::weight`]) and its number of path separators.
#[inline]
fn weigh(text: &[u8]) -> (u32, u32) {
    let mut w = 0u32;
    let mut separators = 0u32;
    for (i, &x) in text.iter().enumerate() {
        if x >= 0xC0 {
            let rest = &text[i..];
            // U+3000 (indentation) and U+00A0 are white space, not text.
            let space =
                (x == 0xE3 && rest.starts_with(b"\xE3\x80\x80")) || (x == 0xC2 && rest.starts_with(b"\xC2\xA0"));
            if !space {
                w = w.saturating_add(3);
            }
            // » › → ＞ ／ ｜
            if matches!(x, 0xC2 | 0xE2 | 0xEF)
                && [
                    &b"\xC2\xBB"[..],
                    b"\xE2\x80\xBA",
                    b"\xE2\x86\x92",
                    b"\xEF\xBC\x9E",
                    b"\xEF\xBC\x8F",
                    b"\xEF\xBD\x9C",
                ]
                .iter()
                .any(|sep| rest.starts_with(sep))
            {
                separators += 1;
            }
        } else if x.is_ascii_alphanumeric() {
            w = w.saturating_add(1);
        } else if matches!(x, b'>' | b'/' | b'|') {
            separators += 1;
        }
    }
    (w, separators)
}

fn is_separator(c: char) -> bool {
    matches!(c, '>' | '/' | '|' | '»' | '›' | '→' | '＞' | '／' | '｜')
}

fn to_u32(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

/// Lex `src` (at most `u32::MAX` bytes: the caller checks) and choose the paragraphs to keep.
pub(super) fn parse(src: &str, extract_main_content: bool) -> Document {
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
            let next = b.get(p + 1).copied();
            let end = match next {
                Some(b'!') => {
                    self.text(text_start, p);
                    Some(self.bang(p))
                }
                Some(b'?') => {
                    self.text(text_start, p);
                    Some(bogus_comment(b, p + 2))
                }
                Some(b'/') => match b.get(p + 2).copied() {
                    Some(c) if c.is_ascii_alphabetic() => {
                        self.text(text_start, p);
                        Some(self.tag(p, true))
                    }
                    Some(b'>') => {
                        self.text(text_start, p);
                        Some(p + 3)
                    }
                    Some(_) => {
                        self.text(text_start, p);
                        Some(bogus_comment(b, p + 2))
                    }
                    None => None,
                },
                Some(c) if c.is_ascii_alphabetic() => {
                    self.text(text_start, p);
                    Some(self.tag(p, false))
                }
                _ => None,
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

    /// `<!`: comment, doctype, CDATA: nothing visible.
    fn bang(&self, p: usize) -> usize {
        let b = self.b;
        if b[p..].starts_with(b"<!--") {
            let body = p + 4;
            if b.get(body) == Some(&b'>') {
                return body + 1;
            }
            if b[body..].starts_with(b"->") {
                return body + 2;
            }
            return match memmem::find(&b[body..], b"-->") {
                Some(o) => body + o + 3,
                None => b.len(),
            };
        }
        bogus_comment(b, p + 2)
    }

    /// A start or end tag at `p`; returns the offset after it (and after raw-text content).
    fn tag(&mut self, p: usize, end_tag: bool) -> usize {
        let b = self.b;
        let n = b.len();
        let mut j = p + 1 + usize::from(end_tag);
        let name_start = j;
        while j < n && !matches!(b[j], b' ' | b'\t' | b'\n' | b'\r' | b'\x0C' | b'/' | b'>') {
            j += 1;
        }
        let name_end = j;
        let mut attrs = Attrs::default();
        let mut self_closing = false;
        loop {
            while j < n && is_space(b[j]) {
                j += 1;
            }
            if j >= n {
                // End of input inside a tag: the tag and the rest are dropped.
                return n;
            }
            match b[j] {
                b'>' => {
                    j += 1;
                    break;
                }
                b'/' => {
                    j += 1;
                    if b.get(j) == Some(&b'>') {
                        self_closing = true;
                        j += 1;
                        break;
                    }
                    continue;
                }
                _ => {}
            }
            let an = j;
            j += 1;
            while j < n && !matches!(b[j], b' ' | b'\t' | b'\n' | b'\r' | b'\x0C' | b'/' | b'>' | b'=') {
                j += 1;
            }
            let attr_name = an..j;
            while j < n && is_space(b[j]) {
                j += 1;
            }
            let mut value = None;
            if j < n && b[j] == b'=' {
                j += 1;
                while j < n && is_space(b[j]) {
                    j += 1;
                }
                if j >= n {
                    return n;
                }
                match b[j] {
                    q @ (b'"' | b'\'') => {
                        let vs = j + 1;
                        match memchr(q, &b[vs..]) {
                            Some(o) => {
                                value = Some(vs..vs + o);
                                j = vs + o + 1;
                            }
                            None => return n,
                        }
                    }
                    b'>' => {}
                    _ => {
                        let vs = j;
                        while j < n && !is_space(b[j]) && b[j] != b'>' {
                            j += 1;
                        }
                        value = Some(vs..j);
                    }
                }
            }
            if !end_tag {
                let name = &b[attr_name];
                if name.eq_ignore_ascii_case(b"class") {
                    attrs.class = value;
                } else if name.eq_ignore_ascii_case(b"id") {
                    attrs.id = value;
                } else if name.eq_ignore_ascii_case(b"style") {
                    attrs.style = value;
                } else if name.eq_ignore_ascii_case(b"role") {
                    attrs.role = value;
                } else if name.eq_ignore_ascii_case(b"hidden") {
                    attrs.hidden = true;
                }
            }
        }

        let raw_name = &b[name_start..name_end];
        let mut lower = [0u8; 16];
        let info = if raw_name.len() <= lower.len() {
            for (d, s) in lower.iter_mut().zip(raw_name) {
                *d = s.to_ascii_lowercase();
            }
            tag_info(&lower[..raw_name.len()])
        } else {
            0
        };
        let hash = name_hash(raw_name);
        if end_tag {
            self.end_tag(hash, info);
            return j;
        }
        self.start_tag(hash, info, raw_name, &attrs, self_closing, j)
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

/// `<?...>`, `</ ...>`, `<!...>`: skipped up to the next `>`.
fn bogus_comment(b: &[u8], from: usize) -> usize {
    match b.get(from..).and_then(|rest| memchr(b'>', rest)) {
        Some(o) => from + o + 1,
        None => b.len(),
    }
}

/// End of a raw-text element's content: the offset of its end tag and the offset after it.
fn raw_text_end(b: &[u8], from: usize, name: &[u8]) -> (usize, usize) {
    let n = b.len();
    let mut k = from;
    while k < n {
        let Some(o) = memchr(b'<', &b[k..]) else {
            break;
        };
        let q = k + o;
        let name_at = q + 2;
        if b.get(q + 1) == Some(&b'/')
            && b.get(name_at..name_at + name.len()).is_some_and(|s| s.eq_ignore_ascii_case(name))
            && b.get(name_at + name.len()).is_none_or(|&c| is_space(c) || c == b'/' || c == b'>')
        {
            let after = memchr(b'>', &b[q..]).map_or(n, |o| q + o + 1);
            return (q, after);
        }
        k = q + 1;
    }
    (n, n)
}

fn is_hidden(b: &[u8], attrs: &Attrs) -> bool {
    if attrs.hidden {
        return true;
    }
    let Some(r) = &attrs.style else { return false };
    let mut compact = [0u8; 256];
    let mut len = 0;
    for &c in b[r.clone()].iter() {
        if !is_space(c) && len < compact.len() {
            compact[len] = c.to_ascii_lowercase();
            len += 1;
        }
    }
    let s = &compact[..len];
    memmem::find(s, b"display:none").is_some() || memmem::find(s, b"visibility:hidden").is_some()
}

/// What the class and id names of an element say.
struct Names {
    /// Certainly boilerplate: navigation, footers, sidebars, comments, ads ...
    strong: bool,
    /// Probably boilerplate (header, menu, top ...) unless also named like content.
    weak: bool,
    /// Named like content (`article`, `content`, `chapter`, `zhengwen` ...).
    positive: bool,
}

/// Class and id names of navigation, footers, sidebars, comments, ads ... (English and
/// the pinyin names Chinese sites use). A content name (`article`, `content` ...) on the
/// same element overrides the weak ones only (`article-header` is content,
/// `comment-content` is not).
fn classify_names(class: &[u8], id: &[u8]) -> Names {
    const STRONG: &[&[u8]] = &[
        b"nav",
        b"navbar",
        b"navigation",
        b"footer",
        b"foot",
        b"sidebar",
        b"comment",
        b"comments",
        b"ad",
        b"ads",
        b"adv",
        b"advert",
        b"adverts",
        b"advertisement",
        b"banner",
        b"breadcrumb",
        b"breadcrumbs",
        b"crumb",
        b"crumbs",
        b"copyright",
        b"share",
        b"sharing",
        b"social",
        b"recommend",
        b"recommended",
        b"related",
        b"popup",
        b"cookie",
        b"cookies",
        b"login",
        b"friendlink",
        b"friendlinks",
        b"gg",
        b"daohang",
        b"guanggao",
        b"tuijian",
        b"pinglun",
        b"fenxiang",
        b"banquan",
        b"xiangguan",
        b"youlian",
        b"dibu",
        b"weibu",
    ];
    const STRONG_PREFIX: &[&[u8]] = &[
        b"nav",
        b"footer",
        b"sidebar",
        b"breadcrumb",
        b"copyright",
        b"comment",
        b"advert",
        b"banner",
        b"recommend",
        b"social",
        b"share",
        b"related",
        b"popup",
        b"cookie",
        b"friendlink",
        b"daohang",
        b"guanggao",
        b"tuijian",
        b"pinglun",
        b"fenxiang",
        b"banquan",
        b"xiangguan",
        b"youlian",
    ];
    const WEAK: &[&[u8]] = &[
        b"header",
        b"toubu",
        b"top",
        b"topbar",
        b"side",
        b"aside",
        b"menu",
        b"menus",
        b"mainmenu",
        b"submenu",
        b"links",
        b"toolbar",
        b"pager",
        b"pagination",
        b"sitemap",
        b"modal",
        b"subscribe",
        b"position",
        b"location",
        b"path",
        b"weizhi",
        b"dangqian",
    ];
    const POSITIVE: &[&[u8]] = &[b"main", b"body", b"post", b"entry", b"story", b"text", b"txt", b"read"];
    const POSITIVE_PREFIX: &[&[u8]] =
        &[b"article", b"content", b"chapter", b"zhengwen", b"neirong", b"booktext", b"reader"];
    let (mut strong, mut weak, mut positive) = (false, false, false);
    for value in [class, id] {
        for token in value.split(|c| !c.is_ascii_alphanumeric()) {
            if token.is_empty() || token.len() > 32 {
                continue;
            }
            let mut buf = [0u8; 32];
            for (d, s) in buf.iter_mut().zip(token) {
                *d = s.to_ascii_lowercase();
            }
            let t = &buf[..token.len()];
            let ad_numbered = t.len() > 2 && t.starts_with(b"ad") && t[2..].iter().all(u8::is_ascii_digit);
            strong |= STRONG.contains(&t) || STRONG_PREFIX.iter().any(|p| t.starts_with(p)) || ad_numbered;
            weak |= WEAK.contains(&t);
            positive |= POSITIVE.contains(&t) || POSITIVE_PREFIX.iter().any(|p| t.starts_with(p));
        }
    }
    Names { strong, weak, positive }
}

/// Windows-1252 meanings of the C1 range in numeric references (WHATWG).
const C1_REMAP: [u32; 32] = [
    0x20AC, 0x81, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160, 0x2039, 0x0152, 0x8D, 0x017D,
    0x8F, 0x90, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022, 0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x9D,
    0x017E, 0x0178,
];

/// A character reference at `p` (which holds `&`): its end and the characters it stands for.
/// Named references come from the WHATWG table (`htmlize`), including the legacy ones
/// without a semicolon.
pub(super) fn char_ref(b: &[u8], p: usize) -> Option<(usize, char, Option<char>)> {
    let n = b.len();
    let mut j = p + 1;
    if b.get(j) == Some(&b'#') {
        j += 1;
        let hex = matches!(b.get(j), Some(b'x' | b'X'));
        if hex {
            j += 1;
        }
        let digits_start = j;
        let mut value: u32 = 0;
        while j < n {
            let d = match (hex, b[j]) {
                (_, c @ b'0'..=b'9') => u32::from(c - b'0'),
                (true, c @ b'a'..=b'f') => u32::from(c - b'a' + 10),
                (true, c @ b'A'..=b'F') => u32::from(c - b'A' + 10),
                _ => break,
            };
            value = value.saturating_mul(if hex { 16 } else { 10 }).saturating_add(d).min(0x11_0000);
            j += 1;
        }
        if j == digits_start {
            return None;
        }
        if b.get(j) == Some(&b';') {
            j += 1;
        }
        let c = match value {
            0x80..=0x9F => char::from_u32(C1_REMAP[(value - 0x80) as usize]),
            0 => None,
            v => char::from_u32(v),
        }
        .unwrap_or('\u{FFFD}');
        return Some((j, c, None));
    }
    let name_start = j;
    while j < n && j - name_start < htmlize::ENTITY_MAX_LENGTH && b[j].is_ascii_alphanumeric() {
        j += 1;
    }
    let name_len = j - name_start;
    if name_len == 0 {
        return None;
    }
    let mut key = [0u8; 64];
    key[0] = b'&';
    let lookup = |key: &[u8]| htmlize::ENTITIES.get(key).and_then(|v| std::str::from_utf8(v).ok());
    if b.get(j) == Some(&b';') && name_len + 2 <= key.len() {
        key[1..=name_len].copy_from_slice(&b[name_start..j]);
        key[name_len + 1] = b';';
        if let Some(s) = lookup(&key[..name_len + 2]) {
            let mut cs = s.chars();
            return cs.next().map(|c1| (j + 1, c1, cs.next()));
        }
    }
    // Legacy references without a semicolon (`&nbsp`, `&copy` ...): longest prefix.
    let max = name_len.min(htmlize::BARE_ENTITY_MAX_LENGTH.saturating_sub(1));
    for len in (2..=max).rev() {
        key[1..=len].copy_from_slice(&b[name_start..name_start + len]);
        if let Some(s) = lookup(&key[..=len]) {
            let mut cs = s.chars();
            return cs.next().map(|c1| (name_start + len, c1, cs.next()));
        }
    }
    None
}

/// Decode character references and collapse white space (for the title).
fn decode_collapsed(b: &[u8]) -> String {
    let mut out = String::new();
    let mut i = 0;
    let mut text_start = 0;
    let push = |out: &mut String, s: &[u8]| out.push_str(&String::from_utf8_lossy(s));
    while let Some(off) = memchr(b'&', &b[i..]) {
        let p = i + off;
        match char_ref(b, p) {
            Some((e, c1, c2)) => {
                push(&mut out, &b[text_start..p]);
                out.push(c1);
                out.extend(c2);
                text_start = e;
                i = e;
            }
            None => i = p + 1,
        }
    }
    push(&mut out, &b[text_start..]);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Paragraph classes for main-content selection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Class {
    Good,
    Bad,
    Near,
    Short,
}

/// Weights in thirds of a character (see [`Para::weight`]).
const GOOD_WEIGHT: u32 = 20 * 3;
const SHORT_WEIGHT: u32 = 8 * 3;
const LONG_WEIGHT: u32 = 200 * 3;
const HEADING_DISTANCE: u32 = 200 * 3;
const HEADING_MAX_PARAS: usize = 64;

/// Main-content selection, after jusText (Pomikálek 2011) reduced to what Chinese pages
/// need: boilerplate containers are dropped unless they hold half the page's text; the
/// rest is classified by length and link density, and short or medium paragraphs take
/// the class of their neighbours, so dialogue lines between chapter paragraphs stay and
/// labels between link lists go.
fn select(paras: &[Para], containers: &[Container]) -> Vec<bool> {
    let n = paras.len();
    let total: u64 = paras.iter().map(|p| u64::from(p.weight)).sum();
    let mut prefix = Vec::with_capacity(n + 1);
    prefix.push(0u64);
    for p in paras {
        let last = prefix.last().copied().unwrap_or(0);
        prefix.push(last + u64::from(p.weight));
    }
    // Difference array over paragraph ranges of dropped containers.
    let mut diff = vec![0i64; n + 1];
    for c in containers {
        let first = (c.first_para as usize).min(n);
        let end = (c.end_para as usize).clamp(first, n);
        let w = prefix[end] - prefix[first];
        if w * 2 < total {
            diff[first] += 1;
            diff[end] -= 1;
        }
    }
    let mut dropped = vec![false; n];
    let mut depth = 0i64;
    for i in 0..n {
        depth += diff[i];
        dropped[i] = depth > 0;
    }

    let mut class: Vec<Class> = paras
        .iter()
        .map(|p| {
            let (w, l) = (u64::from(p.weight), u64::from(p.link));
            let breadcrumb = p.links >= 2 && p.separators >= 1 && p.separators + 1 >= p.links;
            if w > 0 && ((l * 2 > w || breadcrumb) && w < u64::from(LONG_WEIGHT) || l * 5 > w * 4) {
                Class::Bad
            } else if w >= u64::from(GOOD_WEIGHT) && l * 10 <= w * 3 {
                Class::Good
            } else if w < u64::from(SHORT_WEIGHT) {
                Class::Short
            } else {
                Class::Near
            }
        })
        .collect();
    let live: Vec<usize> = (0..n).filter(|&i| !dropped[i]).collect();

    // Headings that open good content within a short distance belong to it.
    for (k, &i) in live.iter().enumerate() {
        if !paras[i].heading || !matches!(class[i], Class::Short | Class::Near) {
            continue;
        }
        let mut distance = 0u32;
        for &j in live[k + 1..].iter().take(HEADING_MAX_PARAS) {
            if class[j] == Class::Good {
                class[i] = Class::Good;
                break;
            }
            distance = distance.saturating_add(paras[j].weight);
            if distance > HEADING_DISTANCE {
                break;
            }
        }
    }
    resolve(&live, &mut class, Class::Near, &[Class::Near, Class::Short]);
    resolve(&live, &mut class, Class::Short, &[Class::Short]);

    let mut keep: Vec<bool> = (0..n).map(|i| !dropped[i] && class[i] == Class::Good).collect();
    let kept_weight = |keep: &[bool]| -> u64 { (0..n).filter(|&i| keep[i]).map(|i| u64::from(paras[i].weight)).sum() };
    if kept_weight(&keep) == 0 {
        // No main content stands out (a short page, a bare fragment): keep what is not
        // boilerplate, then everything, rather than lose the page.
        keep = (0..n).map(|i| !dropped[i] && class[i] != Class::Bad).collect();
        if kept_weight(&keep) == 0 {
            keep = (0..n).map(|i| !dropped[i]).collect();
        }
        if kept_weight(&keep) == 0 {
            keep = vec![true; n];
        }
    }
    keep
}

/// Give each paragraph of class `which` the class Good if a neighbour (the nearest
/// paragraph on each side whose class is not in `skip`) is Good, else Bad.
fn resolve(live: &[usize], class: &mut [Class], which: Class, skip: &[Class]) {
    let m = live.len();
    // Nearest decided class before and after each live position.
    let mut before = vec![None; m];
    let mut last = None;
    for k in 0..m {
        before[k] = last;
        let c = class[live[k]];
        if !skip.contains(&c) {
            last = Some(c);
        }
    }
    let mut after = vec![None; m];
    last = None;
    for k in (0..m).rev() {
        after[k] = last;
        let c = class[live[k]];
        if !skip.contains(&c) {
            last = Some(c);
        }
    }
    for k in 0..m {
        let i = live[k];
        if class[i] == which {
            let good = before[k] == Some(Class::Good) || after[k] == Some(Class::Good);
            class[i] = if good { Class::Good } else { Class::Bad };
        }
    }
}

/// Does this text look like HTML? Used for [`super::InputFormat::Auto`].
pub(super) fn looks_like_html(text: &str) -> bool {
    let head = text.as_bytes();
    let head = &head[..head.len().min(4096)];
    let start = head.iter().position(|&c| !is_space(c) && c != 0xEF && c != 0xBB && c != 0xBF).unwrap_or(head.len());
    let rest = &head[start..];
    if rest.first() == Some(&b'<') && rest.get(1).is_some_and(|&c| c.is_ascii_alphabetic() || c == b'!' || c == b'?') {
        return true;
    }
    const STRONG: &[&[u8]] = &[b"<!doctype html", b"<html", b"<head", b"<body"];
    const WEAK: &[&[u8]] = &[
        b"<p>", b"<p ", b"</p>", b"<div", b"</div>", b"<br>", b"<br/>", b"<br />", b"<span", b"<a href", b"<table",
        b"<meta", b"<title", b"<li>", b"<h1", b"<h2", b"<script", b"<style",
    ];
    let mut weak = 0;
    let mut i = 0;
    while let Some(o) = memchr(b'<', &head[i..]) {
        let p = i + o;
        let at = &head[p..];
        let starts = |pat: &[u8]| at.len() >= pat.len() && at[..pat.len()].eq_ignore_ascii_case(pat);
        if STRONG.iter().any(|s| starts(s)) {
            return true;
        }
        if WEAK.iter().any(|s| starts(s)) {
            weak += 1;
            if weak >= 2 {
                return true;
            }
        }
        i = p + 1;
    }
    false
}
