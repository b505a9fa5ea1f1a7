//! Charset detection and decoding (interim: UTF-8 only).
use super::Decoded;
use crate::CoreError;

pub(super) fn decode(bytes: &[u8], _hint: Option<&str>) -> Result<Decoded, CoreError> {
    match std::str::from_utf8(bytes) {
        Ok(s) => Ok(Decoded { text: s.to_string(), charset: "UTF-8", replacements: 0 }),
        Err(e) => Err(CoreError::Undecodable { reason: e.to_string() }),
    }
}
