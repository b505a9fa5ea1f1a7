//! HTML -> runs of text with their source offsets, grouped into paragraphs, and the
//! choice of the paragraphs that make up the main content; and, from the same lexer, the
//! start tags of a page with their attributes ([`start_tags`]).
//!
//! The lexer is hand-written because no maintained HTML parser exposes the source
//! offsets of text nodes, and every canonical character must map back into the raw page.
//! It follows the WHATWG tokenizer where text depends on it (comments, raw-text
//! elements, character references, quoted attributes), keeps a small stack of open
//! elements with the implied end tags that matter for paragraphs and links, and never
//! fails: malformed markup degrades to text or is skipped, unterminated constructs run to
//! the end of the input, and nothing it reads can make it panic.
//!
//! The parts, each in its own file:
//! - `tokens`: what a `<` opens (comments, tags and their attributes, raw-text content);
//! - `entities`: character references, the one decoder for text, title and attributes;
//! - `elements`: the properties of each element name (block, void, raw text, boilerplate ...);
//! - `lexer`: runs, paragraphs, the stack of open elements, hidden elements;
//! - `classify`: text weight, hidden styles, boilerplate class and id names;
//! - `select`: main-content selection over the paragraphs;
//! - `tags`: the public start-tag iterator;
//! - `visible`: the visible text of a piece of source, as evidence quotes it.

use std::ops::Range;

use memchr::memchr;

mod classify;
mod elements;
mod entities;
mod lexer;
mod select;
mod tags;
mod tokens;
mod visible;

pub use entities::decode_char_refs;
pub(super) use lexer::parse;
pub use tags::{start_tags, StartTag, StartTags};
use tokens::is_space;
pub use visible::visible_text;

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

impl Document {
    /// The runs of each paragraph that is part of the text, in order.
    pub(super) fn kept_paragraphs(&self) -> impl Iterator<Item = &[Run]> + '_ {
        self.paras
            .iter()
            .zip(&self.keep)
            .filter(|(_, &keep)| keep)
            .map(|(para, _)| self.runs.get(para.runs.start as usize..para.runs.end as usize).unwrap_or(&[]))
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
