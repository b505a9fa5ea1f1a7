//! Bytes -> text: BOM, strict UTF-8, the caller's or the page's declared charset, then
//! detection (`chardetng`) among the legacy charsets, GB18030/GBK and Big5 first of all.
//! Binary data (images, archives, NUL-heavy bytes) is refused rather than decoded into
//! garbage that would be fingerprinted like text.
//!
//! A few bad bytes must not make a copy invisible: bytes that are mostly valid UTF-8 are
//! decoded as UTF-8, and bytes mostly valid in a declared or detectable multi-byte
//! charset (GBK/GB18030, Big5, ...) in that charset, with U+FFFD for the malformed
//! sequences, rather than as a single-byte charset that "decodes" anything into mojibake.

use chardetng::{EncodingDetector, Iso2022JpDetection, Utf8Detection};
use encoding_rs::{DecoderResult, Encoding, BIG5, EUC_JP, EUC_KR, GB18030, GBK, SHIFT_JIS, UTF_16BE, UTF_16LE, UTF_8};
use memchr::{memchr, memmem};

use super::Decoded;
use crate::CoreError;

/// How many leading bytes are searched for `<meta charset>` (WHATWG prescan uses 1024;
/// Chinese sites often put long comments or scripts first).
const META_SCAN_BYTES: usize = 4096;
/// How many bytes the detector reads: tens of kilobytes settle GBK vs Big5 vs the rest,
/// and the detector is the slowest part of decoding.
const DETECT_BYTES: usize = 64 << 10;
/// Bytes are "mostly UTF-8" when at most one in this many of their non-ASCII bytes is
/// malformed. UTF-8 with one byte in 30 overwritten has 10% malformed non-ASCII bytes;
/// GBK, GB18030 and EUC-JP text read as UTF-8 has about 65%, Big5, Shift_JIS and EUC-KR
/// over 80%.
const MOSTLY_UTF8_DENOMINATOR: usize = 5;
/// Text decoded in a multi-byte legacy charset is "mostly valid" when at most one in this
/// many of its non-ASCII characters is a replacement. A wrong multi-byte charset fails by
/// far; a right one with a few broken sequences (a cut download, a stray byte) passes.
const MOSTLY_VALID_DENOMINATOR: usize = 20;
/// The multi-byte legacy charsets tried when the detector, misled by malformed
/// sequences, falls back to a single-byte guess.
const LEGACY_MULTIBYTE: [&Encoding; 5] = [GBK, BIG5, SHIFT_JIS, EUC_KR, EUC_JP];

pub(super) fn decode(bytes: &[u8], hint: Option<&str>) -> Result<Decoded, CoreError> {
    if bytes.is_empty() {
        return Err(CoreError::EmptyInput);
    }
    if let Some(kind) = binary_signature(bytes) {
        return Err(CoreError::Undecodable { reason: format!("the bytes are a {kind} file, not text") });
    }
    if let Some((encoding, bom_len)) = Encoding::for_bom(bytes) {
        let (text, replacements, replaced_bytes) = decode_counting(encoding, &bytes[bom_len..]);
        check_decoded_text(&text, encoding)?;
        return Ok(Decoded { text, charset: encoding.name(), replacements, replaced_bytes });
    }

    let controls = count_control_bytes(bytes);
    if is_binary_ratio(controls, bytes.len()) {
        // UTF-16 without a BOM looks like binary to a byte scan; try it before refusing.
        if let Some(decoded) = utf16_without_bom(bytes) {
            return Ok(decoded);
        }
        return Err(CoreError::Undecodable {
            reason: format!(
                "{controls} of {} bytes are NUL or other control bytes: binary data, not text",
                bytes.len()
            ),
        });
    }

    // Most pages are valid UTF-8: `simdutf8` says so several times faster than the
    // standard library, and its `compat` error says where it failed as the standard one does.
    match simdutf8::compat::from_utf8(bytes) {
        Ok(s) => return Ok(Decoded { text: s.to_owned(), charset: UTF_8.name(), replacements: 0, replaced_bytes: 0 }),
        Err(e) if e.error_len().is_none() && e.valid_up_to() > 0 => {
            // Valid UTF-8 cut short inside the last character (a truncated download).
            return Ok(decoded_in(UTF_8, bytes));
        }
        Err(_) => {}
    }
    if mostly_utf8(bytes) {
        return Ok(decoded_in(UTF_8, bytes));
    }

    let declared = hint.and_then(label_to_encoding).into_iter().chain(sniff_meta_charset(bytes));
    for encoding in declared {
        let (text, replacements, replaced_bytes) = decode_counting(encoding, bytes);
        if replacements > 0 {
            if !encoding.is_single_byte() && mostly_valid(&text, replacements) {
                // The declared multi-byte charset with a few broken sequences.
                return Ok(Decoded { text, charset: charset_name(encoding, bytes), replacements, replaced_bytes });
            }
            continue;
        }
        if encoding.is_single_byte() {
            // A single-byte charset decodes any bytes "cleanly"; servers that default to
            // ISO-8859-1 label GBK pages so. Prefer a multi-byte guess that decodes cleanly.
            let guess = detect(bytes);
            if !guess.is_single_byte() {
                let (guessed, guessed_replacements, _) = decode_counting(guess, bytes);
                if guessed_replacements == 0 {
                    return Ok(Decoded {
                        text: guessed,
                        charset: charset_name(guess, bytes),
                        replacements: 0,
                        replaced_bytes: 0,
                    });
                }
            }
            if let Some(decoded) = multibyte_with_errors(bytes) {
                return Ok(decoded);
            }
        }
        return Ok(Decoded { text, charset: charset_name(encoding, bytes), replacements, replaced_bytes });
    }

    let encoding = detect(bytes);
    let (text, replacements, replaced_bytes) = decode_counting(encoding, bytes);
    if encoding.is_single_byte() || replacements > 0 {
        // The detector disqualifies a multi-byte charset at its first malformed sequence,
        // so a few broken bytes in GBK or Big5 text make it fall back to a single-byte
        // guess (mojibake) or a wrong multi-byte one.
        if let Some(decoded) = multibyte_with_errors(bytes) {
            if decoded.replacements < replacements || encoding.is_single_byte() {
                return Ok(decoded);
            }
        }
    }
    let chars = text.chars().count().max(1);
    if replacements * 5 > chars {
        return Err(CoreError::Undecodable {
            reason: format!(
                "{replacements} of {chars} characters are malformed even in the best guess ({}): not text",
                encoding.name()
            ),
        });
    }
    Ok(Decoded { text, charset: charset_name(encoding, bytes), replacements, replaced_bytes })
}

/// `bytes` decoded in `encoding` with replacements.
fn decoded_in(encoding: &'static Encoding, bytes: &[u8]) -> Decoded {
    let (text, replacements, replaced_bytes) = decode_counting(encoding, bytes);
    Decoded { text, charset: charset_name(encoding, bytes), replacements, replaced_bytes }
}

/// Is `text` (decoded with `replacements` U+FFFD) mostly valid: at most one replacement in
/// [`MOSTLY_VALID_DENOMINATOR`] non-ASCII characters?
fn mostly_valid(text: &str, replacements: usize) -> bool {
    let non_ascii = text.chars().filter(|&c| !c.is_ascii() && c != '\u{FFFD}').count();
    replacements.saturating_mul(MOSTLY_VALID_DENOMINATOR) <= non_ascii
}

/// The multi-byte legacy charset the bytes are mostly valid in, decoded with
/// replacements; `None` if there is none. A candidate must decode the detector's sample
/// with few malformed sequences AND be the detector's own guess for that sample once its
/// malformed sequences are removed (so that GBK text is not taken for Big5 or Shift_JIS,
/// which decode much of it without errors too).
fn multibyte_with_errors(bytes: &[u8]) -> Option<Decoded> {
    let sample = &bytes[..bytes.len().min(DETECT_BYTES)];
    let mut best: Option<(&'static Encoding, usize)> = None;
    for encoding in LEGACY_MULTIBYTE {
        let (text, replacements, _) = decode_counting(encoding, sample);
        if !mostly_valid(&text, replacements) || best.is_some_and(|(_, r)| r <= replacements) {
            continue;
        }
        let repaired: String = text.chars().filter(|&c| c != '\u{FFFD}').collect();
        let (repaired, _, _) = encoding.encode(&repaired);
        let mut detector = EncodingDetector::new(Iso2022JpDetection::Deny);
        detector.feed(&repaired, sample.len() == bytes.len());
        if detector.guess(None, Utf8Detection::Deny) == encoding {
            best = Some((encoding, replacements));
        }
    }
    let (encoding, _) = best?;
    let decoded = decoded_in(encoding, bytes);
    mostly_valid(&decoded.text, decoded.replacements).then_some(decoded)
}

/// The detector's guess from the first [`DETECT_BYTES`] bytes (never UTF-8: the caller
/// has ruled it out).
fn detect(bytes: &[u8]) -> &'static Encoding {
    // No scripts run here, so ISO-2022-JP is as safe to detect as any other charset.
    let mut detector = EncodingDetector::new(Iso2022JpDetection::Allow);
    let sample = &bytes[..bytes.len().min(DETECT_BYTES)];
    detector.feed(sample, sample.len() == bytes.len());
    detector.guess(None, Utf8Detection::Deny)
}

/// An encoding for a label, ignoring UTF-16 labels: without a BOM they are almost always
/// wrong (WHATWG maps a `<meta>` UTF-16 to UTF-8), and UTF-16 never decodes with errors.
fn label_to_encoding(label: &str) -> Option<&'static Encoding> {
    let encoding = Encoding::for_label(label.trim().as_bytes())?;
    if encoding == UTF_16LE
        || encoding == UTF_16BE
        || encoding == encoding_rs::REPLACEMENT
        || encoding == encoding_rs::X_USER_DEFINED
    {
        return None;
    }
    Some(encoding)
}

/// encoding_rs decodes GB18030's four-byte sequences under the GBK label too; report
/// `gb18030` when the bytes use them, since GBK proper cannot encode those characters.
fn charset_name(encoding: &'static Encoding, bytes: &[u8]) -> &'static str {
    if encoding == GBK && has_gb18030_four_byte(bytes) {
        GB18030.name()
    } else {
        encoding.name()
    }
}

fn has_gb18030_four_byte(bytes: &[u8]) -> bool {
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b < 0x80 {
            i += 1;
            continue;
        }
        match bytes.get(i + 1) {
            Some(0x30..=0x39) if (0x81..=0xFE).contains(&b) => {
                if matches!(bytes.get(i + 2), Some(0x81..=0xFE)) && matches!(bytes.get(i + 3), Some(0x30..=0x39)) {
                    return true;
                }
                i += 1;
            }
            _ => i += 2,
        }
    }
    false
}

/// Decode without BOM handling, counting the malformed sequences replaced by U+FFFD and
/// the bytes they held: `(text, replacements, replaced bytes)`.
fn decode_counting(encoding: &'static Encoding, bytes: &[u8]) -> (String, usize, usize) {
    let mut decoder = encoding.new_decoder_without_bom_handling();
    let mut out = String::with_capacity(
        decoder.max_utf8_buffer_length_without_replacement(bytes.len()).unwrap_or(bytes.len().saturating_mul(3)),
    );
    let mut replacements = 0;
    let mut replaced_bytes = 0;
    let mut src = bytes;
    loop {
        let (result, read) = decoder.decode_to_string_without_replacement(src, &mut out, true);
        src = &src[read..];
        match result {
            DecoderResult::InputEmpty => break,
            DecoderResult::Malformed(bad, _) => {
                replacements += 1;
                replaced_bytes += usize::from(bad);
                out.push('\u{FFFD}');
            }
            DecoderResult::OutputFull => {
                out.reserve(src.len().saturating_mul(3).max(16));
            }
        }
    }
    (out, replacements, replaced_bytes)
}

/// Magic numbers of common binary formats that crawlers meet instead of pages.
fn binary_signature(b: &[u8]) -> Option<&'static str> {
    let starts = |sig: &[u8]| b.starts_with(sig);
    let kind = if starts(b"\x89PNG\r\n\x1a\n") {
        "PNG image"
    } else if starts(b"GIF87a") || starts(b"GIF89a") {
        "GIF image"
    } else if starts(b"\xFF\xD8\xFF") {
        "JPEG image"
    } else if starts(b"%PDF-") {
        "PDF"
    } else if starts(b"PK\x03\x04") || starts(b"PK\x05\x06") || starts(b"PK\x07\x08") {
        "ZIP (or Office/EPUB/JAR)"
    } else if starts(b"\x1F\x8B") {
        "gzip"
    } else if starts(b"BZh") && b.get(4..10) == Some(b"1AY&SY") {
        "bzip2"
    } else if starts(b"\xFD7zXZ\x00") {
        "xz"
    } else if starts(b"\x28\xB5\x2F\xFD") {
        "zstd"
    } else if starts(b"7z\xBC\xAF\x27\x1C") {
        "7-Zip"
    } else if starts(b"Rar!\x1A\x07") {
        "RAR"
    } else if starts(b"\x7FELF") {
        "ELF executable"
    } else if starts(b"\0asm") {
        "WebAssembly"
    } else if starts(b"\xD0\xCF\x11\xE0\xA1\xB1\x1A\xE1") {
        "OLE (old Office)"
    } else if starts(b"SQLite format 3\0") {
        "SQLite database"
    } else if starts(b"wOFF") || starts(b"wOF2") {
        "WOFF font"
    } else if starts(b"RIFF") && b.len() >= 12 {
        "RIFF (WebP/WAV/AVI)"
    } else if starts(b"OggS") {
        "Ogg"
    } else if starts(b"fLaC") {
        "FLAC"
    } else if starts(b"ID3") && b.get(3).is_some_and(|&v| (2..=4).contains(&v)) {
        "MP3"
    } else if b.get(4..8) == Some(b"ftyp") {
        "MP4/ISO media"
    } else if starts(b"\x1A\x45\xDF\xA3") {
        "Matroska/WebM"
    } else if starts(b"\xCA\xFE\xBA\xBE") {
        "Java class or Mach-O"
    } else if starts(b"II*\0") || starts(b"MM\0*") {
        "TIFF image"
    } else if starts(b"8BPS") {
        "Photoshop image"
    } else if starts(b"FLV\x01") {
        "Flash video"
    } else {
        return None;
    };
    Some(kind)
}

/// Bytes that never occur in text: C0 controls other than tab, line feed, vertical tab,
/// form feed, carriage return and escape (ISO-2022 uses it), and DEL.
fn count_control_bytes(bytes: &[u8]) -> usize {
    // Branch-free so that it vectorises: this runs over every input.
    bytes
        .chunks(255)
        .map(|chunk| {
            let n: u8 = chunk.iter().fold(0u8, |n, &b| {
                let control = (b < 0x20) & !matches!(b, 0x09..=0x0D | 0x1B) | (b == 0x7F);
                n + u8::from(control)
            });
            usize::from(n)
        })
        .sum()
}

/// More than 2% control bytes: binary.
fn is_binary_ratio(controls: usize, len: usize) -> bool {
    controls.saturating_mul(50) > len
}

/// Refuse decoded text that is mostly control characters (a UTF-16 BOM on binary data).
fn check_decoded_text(text: &str, encoding: &'static Encoding) -> Result<(), CoreError> {
    let mut chars = 0usize;
    let mut controls = 0usize;
    for c in text.chars() {
        chars += 1;
        if c.is_control() && !matches!(c, '\t' | '\n' | '\r' | '\u{0B}' | '\u{0C}' | '\u{1B}') {
            controls += 1;
        }
    }
    if is_binary_ratio(controls, chars) {
        return Err(CoreError::Undecodable {
            reason: format!(
                "{controls} of {chars} characters decoded as {} are control characters: binary data, not text",
                encoding.name()
            ),
        });
    }
    Ok(())
}

/// UTF-16 without a BOM: accepted only if every code unit pair is well formed and at
/// least 95% of the characters are what text is made of (ASCII, CJK, Latin, kana, Hangul,
/// punctuation). Random binary read as UTF-16 spreads over the whole range and fails.
fn utf16_without_bom(bytes: &[u8]) -> Option<Decoded> {
    if bytes.len() < 4 || !bytes.len().is_multiple_of(2) {
        return None;
    }
    let looks_like_text = |big_endian: bool| -> bool {
        let units = bytes.chunks_exact(2).map(|p| {
            let pair = [p[0], p[1]];
            if big_endian {
                u16::from_be_bytes(pair)
            } else {
                u16::from_le_bytes(pair)
            }
        });
        let (mut chars, mut texty) = (0usize, 0usize);
        for c in char::decode_utf16(units) {
            let Ok(c) = c else { return false };
            chars += 1;
            let u = c as u32;
            let plausible = matches!(c, '\t' | '\n' | '\r')
                || matches!(u, 0x20..=0x7E | 0xA0..=0x24F | 0x2000..=0x206F | 0x3000..=0x30FF
                    | 0x3400..=0x4DBF | 0x4E00..=0x9FFF | 0xAC00..=0xD7AF | 0xFF00..=0xFFEF);
            if plausible {
                texty += 1;
            } else if (chars - texty) * 20 > chars.max(200) {
                // Already more than 5% implausible: stop reading.
                return false;
            }
        }
        chars > 0 && texty * 100 >= chars * 95
    };
    let encoding = if looks_like_text(false) {
        UTF_16LE
    } else if looks_like_text(true) {
        UTF_16BE
    } else {
        return None;
    };
    Some(decoded_in(encoding, bytes))
}

/// UTF-8 with a few corrupt bytes: at most one in [`MOSTLY_UTF8_DENOMINATOR`] of the
/// non-ASCII bytes is malformed (one byte in 300 overwritten with 0xFF malforms about 1% of
/// a Chinese text's non-ASCII bytes; legacy CJK text read as UTF-8, 65% or more).
fn mostly_utf8(bytes: &[u8]) -> bool {
    // Malformed sequences are never ASCII, so the non-ASCII bytes counted below add up to
    // the input's, counted here first (one pass that vectorises): the answer is no as soon
    // as the malformed bytes are too many for all of them, not only once they are too many
    // for every byte still to come.
    let all_non_ascii = bytes.iter().filter(|b| !b.is_ascii()).count();
    let mut invalid = 0usize;
    let mut non_ascii = 0usize;
    let mut seen = 0usize;
    for chunk in bytes.utf8_chunks() {
        let valid = chunk.valid();
        non_ascii += valid.len() - valid.bytes().filter(u8::is_ascii).count();
        // Malformed sequences are never ASCII.
        invalid += chunk.invalid().len();
        non_ascii += chunk.invalid().len();
        seen += valid.len() + chunk.invalid().len();
        let bad = invalid.saturating_mul(MOSTLY_UTF8_DENOMINATOR);
        // Even with every non-ASCII byte still to come well formed, there would be too few
        // of them: the answer is already no.
        if bad > all_non_ascii {
            return false;
        }
        if seen >= DETECT_BYTES && bad > non_ascii {
            // Legacy text: give up after the detector's sample instead of walking it all
            // byte by byte (a UTF-8 page may start with a legacy-encoded ad or two).
            return false;
        }
    }
    invalid > 0 && invalid.saturating_mul(MOSTLY_UTF8_DENOMINATOR) <= non_ascii
}

/// The charset declared by `<meta charset=...>`, `<meta http-equiv=... content="...;
/// charset=...">` or an XML declaration near the start of the bytes.
pub(super) fn sniff_meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(META_SCAN_BYTES)];
    let mut i = 0;
    while let Some(o) = memchr(b'<', &head[i..]) {
        let p = i + o;
        let rest = &head[p..];
        let is_meta = rest.len() > 5 && rest[1..5].eq_ignore_ascii_case(b"meta");
        let is_xml = rest.starts_with(b"<?xml");
        if is_meta || is_xml {
            let end = memchr(b'>', rest).unwrap_or(rest.len());
            let tag = &rest[..end];
            let key: &[u8] = if is_meta { b"charset" } else { b"encoding" };
            if let Some(label) = attribute_label(tag, key) {
                if let Some(encoding) = std::str::from_utf8(label).ok().and_then(label_to_encoding) {
                    return Some(encoding);
                }
            }
        }
        i = p + 1;
    }
    None
}

/// `key` then optional spaces, `=`, optional spaces and quotes, then the label.
fn attribute_label<'t>(tag: &'t [u8], key: &[u8]) -> Option<&'t [u8]> {
    let lower: Vec<u8> = tag.to_ascii_lowercase();
    let mut from = 0;
    while let Some(o) = memmem::find(&lower[from..], key) {
        let mut j = from + o + key.len();
        while j < tag.len() && tag[j].is_ascii_whitespace() {
            j += 1;
        }
        if tag.get(j) == Some(&b'=') {
            j += 1;
            while j < tag.len() && (tag[j].is_ascii_whitespace() || tag[j] == b'"' || tag[j] == b'\'') {
                j += 1;
            }
            let start = j;
            while j < tag.len() && (tag[j].is_ascii_alphanumeric() || matches!(tag[j], b'-' | b'_' | b':' | b'.')) {
                j += 1;
            }
            if j > start {
                return Some(&tag[start..j]);
            }
        }
        from += o + key.len();
    }
    None
}
