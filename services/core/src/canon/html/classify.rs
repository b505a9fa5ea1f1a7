//! What an element's attributes and a run's text say: hidden elements, boilerplate class
//! and id names, and the text weight that paragraph classification counts.

use std::ops::Range;

use memchr::memmem;

use super::tokens::is_space;

/// The attributes of a start tag that classification reads.
#[derive(Default)]
pub(super) struct Attrs {
    pub(super) class: Option<Range<usize>>,
    pub(super) id: Option<Range<usize>>,
    pub(super) style: Option<Range<usize>>,
    pub(super) role: Option<Range<usize>>,
    pub(super) hidden: bool,
}

impl Attrs {
    /// Record attribute `name` (bytes of `b`) with its value, if it is one classification reads.
    pub(super) fn set(&mut self, b: &[u8], name: Range<usize>, value: Option<Range<usize>>) {
        let name = &b[name];
        if name.eq_ignore_ascii_case(b"class") {
            self.class = value;
        } else if name.eq_ignore_ascii_case(b"id") {
            self.id = value;
        } else if name.eq_ignore_ascii_case(b"style") {
            self.style = value;
        } else if name.eq_ignore_ascii_case(b"role") {
            self.role = value;
        } else if name.eq_ignore_ascii_case(b"hidden") {
            self.hidden = true;
        }
    }
}

/// Path separators of more than one byte: » › → ＞ ／ ｜.
const WIDE_SEPARATORS: [&[u8]; 6] =
    [b"\xC2\xBB", b"\xE2\x80\xBA", b"\xE2\x86\x92", b"\xEF\xBC\x9E", b"\xEF\xBC\x8F", b"\xEF\xBD\x9C"];

/// Weight of a text in thirds (see `Para::weight`) and its number of path separators:
/// a character of more than one byte weighs 3 (but U+3000 and U+00A0, white space), an
/// ASCII letter or digit 1; `>`, `/`, `|`, `»`, `›`, `→`, `＞`, `／` and `｜` are separators.
///
/// Counted in two passes: one over every byte with comparisons only, which the compiler
/// turns into vector instructions (a byte at a time with a branch per byte, it was 5% of
/// `zhiwen import pages`' samples in `perf record`), and one over the few lead bytes that
/// the multi-byte exceptions start with, found with `memchr`.
#[inline]
pub(super) fn weigh(text: &[u8]) -> (u32, u32) {
    let (mut leads, mut alnum, mut separators) = (0u64, 0u64, 0u32);
    // Byte counters, each chunk short enough that they cannot overflow.
    for chunk in text.chunks(255) {
        let (mut l, mut a, mut s) = (0u8, 0u8, 0u8);
        for &x in chunk {
            l += u8::from(x >= 0xC0);
            a += u8::from(x.is_ascii_alphanumeric());
            s += u8::from(matches!(x, b'>' | b'/' | b'|'));
        }
        leads += u64::from(l);
        alnum += u64::from(a);
        separators += u32::from(s);
    }
    let mut spaces = 0u64;
    let mut special = |at: usize| {
        let rest = &text[at..];
        if rest.starts_with(b"\xE3\x80\x80") || rest.starts_with(b"\xC2\xA0") {
            spaces += 1;
        } else if WIDE_SEPARATORS.iter().any(|sep| rest.starts_with(sep)) {
            separators += 1;
        }
    };
    memchr::memchr3_iter(0xC2, 0xE2, 0xE3, text).for_each(&mut special);
    memchr::memchr_iter(0xEF, text).for_each(&mut special);
    let w = (leads - spaces) * 3 + alnum;
    (u32::try_from(w).unwrap_or(u32::MAX), separators)
}

pub(super) fn is_separator(c: char) -> bool {
    matches!(c, '>' | '/' | '|' | '»' | '›' | '→' | '＞' | '／' | '｜')
}

pub(super) fn is_hidden(b: &[u8], attrs: &Attrs) -> bool {
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
pub(super) struct Names {
    /// Certainly boilerplate: navigation, footers, sidebars, comments, ads ...
    pub(super) strong: bool,
    /// Probably boilerplate (header, menu, top ...) unless also named like content.
    pub(super) weak: bool,
    /// Named like content (`article`, `content`, `chapter`, `zhengwen` ...).
    pub(super) positive: bool,
}

/// Class and id names of navigation, footers, sidebars, comments, ads ... (English and
/// the pinyin names Chinese sites use). A content name (`article`, `content` ...) on the
/// same element overrides the weak ones only (`article-header` is content,
/// `comment-content` is not).
pub(super) fn classify_names(class: &[u8], id: &[u8]) -> Names {
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

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The weight as first written, a byte at a time: the reference for [`weigh`].
    fn weigh_bytewise(text: &[u8]) -> (u32, u32) {
        let mut w = 0u32;
        let mut separators = 0u32;
        for (i, &x) in text.iter().enumerate() {
            if x >= 0xC0 {
                let rest = &text[i..];
                let space =
                    (x == 0xE3 && rest.starts_with(b"\xE3\x80\x80")) || (x == 0xC2 && rest.starts_with(b"\xC2\xA0"));
                if !space {
                    w = w.saturating_add(3);
                }
                if matches!(x, 0xC2 | 0xE2 | 0xEF) && WIDE_SEPARATORS.iter().any(|sep| rest.starts_with(sep)) {
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

    #[test]
    fn weights_of_known_texts() {
        // » is a character of two bytes as well as a separator.
        assert_eq!(weigh("首页 > 小说 » 第一章".as_bytes()), (3 * 8, 2));
        assert_eq!(weigh("\u{3000}\u{3000}天下大势\u{a0}ab1".as_bytes()), (3 * 4 + 3, 0));
        assert_eq!(weigh("a/b|c＞d／e｜f›g→h".as_bytes()), (8 + 3 * 5, 7));
        assert_eq!(weigh(b""), (0, 0));
    }

    proptest! {
        /// Text made of the characters the weight treats apart (the exceptions, their lead
        /// bytes' neighbours, separators) and ordinary text: the same as a byte at a time.
        #[test]
        fn the_weight_is_the_bytewise_one(parts in proptest::collection::vec(prop_oneof![
            "[a-zA-Z0-9 ]{0,12}",
            "[一-龥，。、「」]{0,12}",
            "[\u{3000}\u{3001}\u{a0}\u{a9}\u{bb}\u{203a}\u{2192}\u{2190}\u{ff1e}\u{ff0f}\u{ff5c}\u{ff0c}>/|<]{0,8}",
            "[é€😀\u{0}-\u{7f}]{0,8}",
        ], 0..16)) {
            let text: String = parts.concat();
            prop_assert_eq!(weigh(text.as_bytes()), weigh_bytewise(text.as_bytes()));
        }
    }
}
