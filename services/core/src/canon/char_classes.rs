//! The class of every character for the normaliser, and the character NFKC and lower
//! casing make of those mapped one to one: the rules, and the tables of the BMP built from
//! them.
//!
//! Shared by the crate and its build script (`build.rs`, which includes this file by
//! path): the tables of the BMP are built once, at compile time, into `OUT_DIR`, instead
//! of classifying 65,536 characters through the Unicode normalisation tables at the start
//! of every process that canonicalises (39 million instructions, by `valgrind
//! --tool=callgrind`); characters above the BMP are classified as they come. So this file
//! uses nothing of the crate.

use unicode_normalization::char::canonical_combining_class;
use unicode_normalization::{is_nfkc_quick, IsNormalized, UnicodeNormalization};

/// Unchanged by NFKC, not white space, not upper case, visible.
pub const PASS: u8 = 0;
/// Unchanged by NFKC but upper case.
pub const LOWER: u8 = 1;
pub const SPACE: u8 = 2;
pub const NEWLINE: u8 = 3;
/// Control and format characters (zero-width space, BOM, bidi marks, soft hyphen ...).
pub const DROP: u8 = 4;
/// Changed by NFKC, or may combine with its neighbours.
pub const SLOW: u8 = 5;
/// Changed by NFKC into one stable character that cannot combine with what precedes it
/// (full-width forms, compatibility ideographs ...): mapped through the map of [`bmp_tables`].
pub const MAP: u8 = 6;

/// The tables of the BMP: the class of each character and, for [`MAP`] characters, the
/// (lower-cased) character NFKC makes of it (`'\0'` for the others). Called by the build
/// script, and by the crate's test that checks what it wrote.
#[cfg_attr(not(test), allow(dead_code))]
pub fn bmp_tables() -> (Vec<u8>, Vec<char>) {
    let mut class: Vec<u8> = Vec::with_capacity(0x1_0000);
    let mut map: Vec<char> = vec!['\0'; 0x1_0000];
    for u in 0..0x1_0000u32 {
        let Some(c) = char::from_u32(u) else {
            class.push(DROP);
            continue;
        };
        let mut k = classify(c);
        if k == LOWER {
            // Upper case with a one-character lower case: a plain table lookup.
            let mut lower = c.to_lowercase();
            if let (Some(l), None) = (lower.next(), lower.next()) {
                k = MAP;
                map[u as usize] = l;
            }
        } else if k == SLOW {
            if let Some(d) = single_stable_mapping(c) {
                match classify(d) {
                    PASS => {
                        k = MAP;
                        map[u as usize] = d;
                    }
                    LOWER => {
                        let mut lower = d.to_lowercase();
                        if let (Some(l), None) = (lower.next(), lower.next()) {
                            k = MAP;
                            map[u as usize] = l;
                        }
                    }
                    SPACE => k = SPACE,
                    _ => {}
                }
            }
        }
        class.push(k);
    }
    (class, map)
}

/// `NFKC(c)` when it is one character `d` such that `NFKC(x + c) == NFKC(x) + d` for any
/// `x`: `c` is a starter and `d`'s decomposition starts with a character that never
/// composes with a preceding one.
#[cfg_attr(not(test), allow(dead_code))]
fn single_stable_mapping(c: char) -> Option<char> {
    if canonical_combining_class(c) != 0 {
        return None;
    }
    let mut n = std::iter::once(c).nfkc();
    let (Some(d), None) = (n.next(), n.next()) else { return None };
    let first = std::iter::once(d).nfkd().next()?;
    let stable = |x: char| canonical_combining_class(x) == 0 && is_nfkc_quick(std::iter::once(x)) == IsNormalized::Yes;
    (stable(d) && stable(first)).then_some(d)
}

/// The class of `c`: one of the constants above (never [`MAP`], which the tables give).
pub fn classify(c: char) -> u8 {
    if matches!(c, '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{85}' | '\u{2028}' | '\u{2029}') {
        return NEWLINE;
    }
    if c.is_whitespace() {
        return SPACE;
    }
    if is_invisible(c) {
        return DROP;
    }
    if canonical_combining_class(c) != 0 || is_nfkc_quick(std::iter::once(c)) != IsNormalized::Yes {
        return SLOW;
    }
    if c.to_lowercase().eq(std::iter::once(c)) {
        PASS
    } else {
        LOWER
    }
}

/// Characters that render as nothing: pirate sites sprinkle them between the
/// characters of a sentence to defeat matching.
fn is_invisible(c: char) -> bool {
    c.is_control()
        || matches!(c as u32,
            0x00AD | 0x034F | 0x061C | 0x115F | 0x1160 | 0x17B4 | 0x17B5 | 0x180B..=0x180F
            | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x206F | 0x3164 | 0xFE00..=0xFE0F
            | 0xFEFF | 0xFFA0 | 0xFFF9..=0xFFFB | 0x1BCA0..=0x1BCA3 | 0x1D173..=0x1D17A
            | 0xE0000..=0xE0FFF)
}
