//! Normalisation with offsets (interim: NFKC + lower-case + whitespace, no HTML).
use unicode_normalization::UnicodeNormalization;

use super::{CanonicalText, InputFormat, SourceSpan};
use crate::params::CanonParams;
use crate::CoreError;

pub(super) fn canonicalize_decoded(
    original: String,
    charset: &'static str,
    _format: InputFormat,
    _params: &CanonParams,
) -> Result<CanonicalText, CoreError> {
    let mut text = String::with_capacity(original.len());
    let mut source = Vec::with_capacity(original.len() / 3);
    let mut pending_space = false;
    for (i, c) in original.chars().enumerate() {
        let span = SourceSpan { start: i as u32, end: i as u32 + 1 };
        for n in std::iter::once(c).nfkc() {
            if n.is_whitespace() {
                pending_space = !text.is_empty();
                continue;
            }
            if pending_space {
                text.push(' ');
                source.push(SourceSpan { start: span.start, end: span.start });
                pending_space = false;
            }
            for l in n.to_lowercase() {
                text.push(l);
                source.push(span);
            }
        }
    }
    if !text.chars().any(|c| c.is_alphanumeric()) {
        return Err(CoreError::NoText);
    }
    Ok(CanonicalText::from_parts(original, charset, InputFormat::Text, text, source, None))
}
