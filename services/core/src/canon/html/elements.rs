//! What the lexer knows about elements: one set of property flags per tag name, and the
//! name hashes the element stack is keyed by.

// Element properties.
pub(super) const VOID: u16 = 1;
pub(super) const BLOCK: u16 = 1 << 1;
/// Raw text: the content up to the end tag is not markup and not shown.
pub(super) const RAW: u16 = 1 << 2;
/// Content parsed but not shown (template, svg ...).
pub(super) const SKIP: u16 = 1 << 3;
pub(super) const LINK: u16 = 1 << 4;
pub(super) const HEADING: u16 = 1 << 5;
pub(super) const PRE: u16 = 1 << 6;
/// Navigation, page header and footer, forms: boilerplate under main-content extraction.
pub(super) const BOILER: u16 = 1 << 7;
/// article / main: a header or footer inside belongs to the content.
pub(super) const SECTIONING: u16 = 1 << 8;
/// Closes an open `<p>` when it starts.
pub(super) const CLOSES_P: u16 = 1 << 9;
pub(super) const TITLE: u16 = 1 << 10;
pub(super) const TEXTAREA: u16 = 1 << 11;
pub(super) const PLAINTEXT: u16 = 1 << 12;
// Flags that only open elements carry.
pub(super) const CONTAINER: u16 = 1 << 13;
pub(super) const HIDDEN: u16 = 1 << 14;
/// header / footer: boilerplate only outside article and main.
pub(super) const HEADER_FOOTER: u16 = 1 << 15;

pub(super) fn tag_info(name: &[u8]) -> u16 {
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

pub(super) fn name_hash(name: &[u8]) -> u64 {
    // FNV-1a over the lower-cased name.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in name {
        h ^= u64::from(b.to_ascii_lowercase());
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Properties of an element from its name as written (ASCII case-insensitive); names
/// longer than any known element have none.
pub(super) fn element_info(raw_name: &[u8]) -> u16 {
    let mut lower = [0u8; 16];
    if raw_name.len() <= lower.len() {
        for (d, s) in lower.iter_mut().zip(raw_name) {
            *d = s.to_ascii_lowercase();
        }
        tag_info(&lower[..raw_name.len()])
    } else {
        0
    }
}

pub(super) const H_P: u64 = name_hash_const(b"p");
pub(super) const H_A: u64 = name_hash_const(b"a");
pub(super) const H_LI: u64 = name_hash_const(b"li");
pub(super) const H_DD: u64 = name_hash_const(b"dd");
pub(super) const H_DT: u64 = name_hash_const(b"dt");
pub(super) const H_TR: u64 = name_hash_const(b"tr");
pub(super) const H_TD: u64 = name_hash_const(b"td");
pub(super) const H_TH: u64 = name_hash_const(b"th");
pub(super) const H_OPTION: u64 = name_hash_const(b"option");
pub(super) const H_BR: u64 = name_hash_const(b"br");

pub(super) const fn name_hash_const(name: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    let mut i = 0;
    while i < name.len() {
        h ^= name[i].to_ascii_lowercase() as u64;
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
        i += 1;
    }
    h
}
