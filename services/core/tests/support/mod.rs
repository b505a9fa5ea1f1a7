//! What the core's comparison tests share: the bundled samples and a default analysis.

use std::path::PathBuf;

use zhiwen_core::canon::InputFormat;
use zhiwen_core::{Analysis, Fingerprinter, Params};

/// The characters of the bundled 第一回 of 红楼梦.
pub fn chapter() -> Vec<char> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples/hongloumeng-01.txt");
    std::fs::read_to_string(p).expect("bundled sample").chars().collect()
}

/// The two halves of an unrelated text (a page to hide a passage in).
pub fn unrelated() -> (String, String) {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples/other-chapter-gbk.html");
    let bytes = std::fs::read(p).expect("bundled sample");
    let a = fp().analyze_bytes(&bytes, InputFormat::Html, None).expect("sample decodes");
    let c: Vec<char> = a.canonical.text().chars().collect();
    (c[..c.len() / 2].iter().collect(), c[c.len() / 2..].iter().collect())
}

pub fn fp() -> Fingerprinter {
    Fingerprinter::new(Params::default()).expect("default params")
}

pub fn analyze(text: &str) -> Analysis {
    fp().analyze_text(text, InputFormat::Text).expect("analysable")
}
