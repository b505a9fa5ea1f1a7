//! Character references: the one decoder of `&amp;`, `&#20013;`, `&nbsp` ... for the
//! lexer's text, the title, and attribute values.

use std::borrow::Cow;

use memchr::memchr;

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
pub(super) fn decode_collapsed(b: &[u8]) -> String {
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

/// Decode the character references of `text` (WHATWG rules: named references from the
/// full table, legacy ones without a semicolon, numeric ones with the Windows-1252 remap
/// of the C1 range); everything else is kept as it is.
pub fn decode_char_refs(text: &str) -> Cow<'_, str> {
    let b = text.as_bytes();
    let mut out = String::new();
    let mut i = 0;
    let mut text_start = 0;
    while let Some(off) = memchr(b'&', &b[i..]) {
        let p = i + off;
        match char_ref(b, p) {
            Some((e, c1, c2)) => {
                out.push_str(text.get(text_start..p).unwrap_or(""));
                out.push(c1);
                out.extend(c2);
                text_start = e;
                i = e;
            }
            None => i = p + 1,
        }
    }
    if text_start == 0 {
        return Cow::Borrowed(text);
    }
    out.push_str(text.get(text_start..).unwrap_or(""));
    Cow::Owned(out)
}
