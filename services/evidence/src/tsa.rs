//! Trusted time (可信时间戳): RFC 3161 time-stamp requests for a signed tree head, and the
//! reading of a time-stamp authority's (TSA's) response and token.
//!
//! What is time-stamped is the head's exact signed text ([`TreeHead::signed_text`]): the
//! request carries its SHA-256 (the *message imprint*), a random nonce and `certReq`
//! TRUE (so the token carries the TSA's certificate and `openssl ts -verify` needs only
//! the TSA's CA). The token kept is the TSA's `TimeStampToken`, a CMS `ContentInfo`
//! (DER) whose signed content, the `TSTInfo`, says the imprint, the nonce, the time
//! (`genTime`), a serial number and the TSA's policy.
//!
//! zhiwen checks the token's *content* (the imprint is SHA-256 of the head's text, the
//! nonce is the one it sent), not the TSA's CMS signature: that needs the TSA's
//! certificate chain and trust in its CA, which is the verifier's to choose, and OpenSSL
//! does it (`openssl ts -verify -data tree-head.txt -in tree-head.tsr -token_in -CAfile
//! <the TSA's CA>`).
//!
//! The DER is read and written by hand, in this module, rather than with RustCrypto's
//! `x509-tsp`/`cms`/`der`: the released `x509-tsp` (0.1) decodes `genTime` as an RFC 5280
//! `GeneralizedTime`, which refuses fractional seconds, and RFC 3161 TSAs send them
//! (`20261126093000.123Z`); the fix exists only in the release candidates of the next
//! generation. The released crates would also bring a second generation of the RustCrypto
//! formats stack (`der` 0.7, `const-oid` 0.9, `spki`, `x509-cert`, `cms` 0.2) beside the
//! workspace's, for the few fields read here. The reader knows SEQUENCE, SET, INTEGER,
//! OBJECT IDENTIFIER, OCTET STRING, BOOLEAN, NULL, BIT STRING, GeneralizedTime and
//! context tags, DER definite lengths only; every length is checked against the bytes
//! left (a TSA's answer is outside data): a malformed answer is an error, never a panic.
//!
//! [`TreeHead::signed_text`]: crate::TreeHead::signed_text

use sha2::Digest;

/// `id-sha256`, 2.16.840.1.101.3.4.2.1 (the content bytes of its OBJECT IDENTIFIER).
const OID_SHA256: &[u8] = &[0x60, 0x86, 0x48, 0x01, 0x65, 0x03, 0x04, 0x02, 0x01];
/// `id-signedData`, 1.2.840.113549.1.7.2.
const OID_SIGNED_DATA: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x07, 0x02];
/// `id-ct-TSTInfo`, 1.2.840.113549.1.9.16.1.4.
const OID_TST_INFO: &[u8] = &[0x2a, 0x86, 0x48, 0x86, 0xf7, 0x0d, 0x01, 0x09, 0x10, 0x01, 0x04];

/// The media type of a request (the body of the HTTP POST to the TSA, RFC 3161 section 3.4).
pub const QUERY_MEDIA_TYPE: &str = "application/timestamp-query";
/// The media type of a response.
pub const REPLY_MEDIA_TYPE: &str = "application/timestamp-reply";

/// DER tags used here.
mod tag {
    pub const BOOLEAN: u8 = 0x01;
    pub const INTEGER: u8 = 0x02;
    pub const BIT_STRING: u8 = 0x03;
    pub const OCTET_STRING: u8 = 0x04;
    pub const NULL: u8 = 0x05;
    pub const OID: u8 = 0x06;
    pub const UTF8_STRING: u8 = 0x0c;
    pub const GENERALIZED_TIME: u8 = 0x18;
    pub const SEQUENCE: u8 = 0x30;
    pub const SET: u8 = 0x31;
    /// `[0]` constructed (EXPLICIT, or IMPLICIT of a constructed type).
    pub const CONTEXT_0: u8 = 0xa0;
}

/// What can be wrong with a TSA's answer or a token.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TsaError {
    /// The TSA refused: its `PKIStatus` is not granted (0) or grantedWithMods (1).
    #[error("the TSA refused the request: status {status}{}{}", fail_info.map(|f| format!(", failInfo bits {f:#x}")).unwrap_or_default(), status_text.as_deref().map(|t| format!(" ({t})")).unwrap_or_default())]
    Rejected {
        /// `PKIStatus`: 2 rejection, 3 waiting, 4 revocationWarning, 5 revocationNotification.
        status: i64,
        /// `PKIFailureInfo` bits, bit 0 (badAlg) as the lowest bit of the number.
        fail_info: Option<u32>,
        /// `statusString`, joined.
        status_text: Option<String>,
    },
    /// The bytes are not the DER structure RFC 3161 says.
    #[error("malformed time-stamp {what}: {reason}")]
    Malformed { what: &'static str, reason: String },
    /// Well formed, but not a stamp of what was asked (imprint, algorithm or nonce differ).
    #[error("the time-stamp token does not match: {0}")]
    Mismatch(String),
}

fn malformed(what: &'static str, reason: impl Into<String>) -> TsaError {
    TsaError::Malformed { what, reason: reason.into() }
}

/// A time-stamp request, and what its answer must repeat.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeStampRequest {
    /// The `TimeStampReq`, DER: the body of the POST.
    pub der: Vec<u8>,
    /// SHA-256 of the time-stamped bytes.
    pub imprint: [u8; 32],
    /// The nonce, as the content bytes of its DER INTEGER.
    pub nonce: Vec<u8>,
}

impl TimeStampRequest {
    /// A request for `data` (a head's signed text) with a random 63-bit nonce.
    pub fn new(data: &[u8]) -> Self {
        Self::with_nonce(data, rand::random::<u64>() >> 1 | 1)
    }

    /// A request for `data` with the given nonce (tests; [`TimeStampRequest::new`] draws one).
    pub fn with_nonce(data: &[u8], nonce: u64) -> Self {
        let imprint: [u8; 32] = sha2::Sha256::digest(data).into();
        let nonce = integer_content(nonce);
        let der = tlv(
            tag::SEQUENCE,
            &[
                tlv(tag::INTEGER, &[1]),
                message_imprint(&imprint),
                tlv(tag::INTEGER, &nonce),
                tlv(tag::BOOLEAN, &[0xff]),
            ]
            .concat(),
        );
        TimeStampRequest { der, imprint, nonce }
    }

    /// Reads the TSA's `TimeStampResp` to this request: the status must be granted, the
    /// token well formed, and its imprint and nonce those of this request.
    pub fn read_response(&self, der: &[u8]) -> Result<TimeStampToken, TsaError> {
        let token_der = response_token(der)?;
        let token = read_token(token_der)?;
        token.check_imprint(&self.imprint)?;
        match &token.nonce {
            Some(n) if *n == self.nonce => Ok(token),
            Some(n) => {
                Err(TsaError::Mismatch(format!("nonce {} where {} was sent", hex::encode(n), hex::encode(&self.nonce))))
            }
            None => Err(TsaError::Mismatch("the token has no nonce; one was sent".into())),
        }
    }
}

/// A time-stamp token, as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeStampToken {
    /// The token: the CMS `ContentInfo`, DER (what `openssl ts -verify -token_in` reads).
    pub der: Vec<u8>,
    /// The OID of the imprint's hash algorithm, dotted.
    pub hash_algorithm: String,
    /// The message imprint (the hash of what was stamped).
    pub imprint: Vec<u8>,
    /// `genTime` as RFC 3339 UTC, with the fraction of a second the TSA gave.
    pub gen_time: String,
    /// The serial number, hex (big-endian, as in the token).
    pub serial: String,
    /// The TSA's policy OID, dotted.
    pub policy: String,
    /// The nonce, as the content bytes of its INTEGER, when the token has one.
    pub nonce: Option<Vec<u8>>,
}

impl TimeStampToken {
    /// Checks that the token stamps SHA-256 `imprint`.
    pub fn check_imprint(&self, imprint: &[u8]) -> Result<(), TsaError> {
        if self.hash_algorithm != "2.16.840.1.101.3.4.2.1" {
            return Err(TsaError::Mismatch(format!("hash algorithm {}, not SHA-256", self.hash_algorithm)));
        }
        if self.imprint != imprint {
            return Err(TsaError::Mismatch(format!(
                "imprint {} where SHA-256 of the data is {}",
                hex::encode(&self.imprint),
                hex::encode(imprint)
            )));
        }
        Ok(())
    }

    /// Checks that the token stamps exactly `data` (SHA-256).
    pub fn check_data(&self, data: &[u8]) -> Result<(), TsaError> {
        self.check_imprint(&sha2::Sha256::digest(data))
    }
}

/// The token of a `TimeStampResp` (its DER bytes), or why there is none.
fn response_token(der: &[u8]) -> Result<&[u8], TsaError> {
    const W: &str = "response";
    let mut top = Reader::new(der);
    let resp = top.expect(tag::SEQUENCE, W)?;
    top.end(W)?;
    let mut resp = Reader::new(resp);
    let mut status_info = Reader::new(resp.expect(tag::SEQUENCE, W)?);
    let status = small_integer(status_info.expect(tag::INTEGER, W)?, W)?;
    let mut status_text = None;
    let mut fail_info = None;
    if status_info.peek() == Some(tag::SEQUENCE) {
        let mut texts = Reader::new(status_info.expect(tag::SEQUENCE, W)?);
        let mut parts = Vec::new();
        while !texts.is_empty() {
            parts.push(String::from_utf8_lossy(texts.expect(tag::UTF8_STRING, W)?).into_owned());
        }
        status_text = Some(parts.join("; "));
    }
    if status_info.peek() == Some(tag::BIT_STRING) {
        fail_info = Some(fail_bits(status_info.expect(tag::BIT_STRING, W)?)?);
    }
    status_info.end(W)?;
    if status != 0 && status != 1 {
        return Err(TsaError::Rejected { status, fail_info, status_text });
    }
    if resp.is_empty() {
        return Err(malformed(W, "granted, but no token"));
    }
    let (t, _, whole) = resp.next(W)?;
    if t != tag::SEQUENCE {
        return Err(malformed(W, format!("the token is tag {t:#04x}, not a SEQUENCE")));
    }
    resp.end(W)?;
    Ok(whole)
}

/// `PKIFailureInfo` (a named BIT STRING) as a number, bit 0 lowest.
fn fail_bits(content: &[u8]) -> Result<u32, TsaError> {
    let (&unused, bits) = content.split_first().ok_or_else(|| malformed("response", "empty failInfo"))?;
    if unused > 7 || bits.len() > 4 {
        return Err(malformed("response", "failInfo out of range"));
    }
    let mut n = 0u32;
    for (i, byte) in bits.iter().enumerate() {
        for b in 0..8 {
            if byte & (0x80 >> b) != 0 {
                n |= 1 << (i * 8 + b);
            }
        }
    }
    Ok(n)
}

/// Reads a time-stamp token (a CMS `ContentInfo` of `SignedData` whose content is a
/// `TSTInfo`): its imprint, time, serial, policy and nonce. The TSA's signature is not
/// checked (see the module's documentation).
pub fn read_token(der: &[u8]) -> Result<TimeStampToken, TsaError> {
    const W: &str = "token";
    let mut top = Reader::new(der);
    let content_info = top.expect(tag::SEQUENCE, W)?;
    top.end(W)?;
    let mut ci = Reader::new(content_info);
    if ci.expect(tag::OID, W)? != OID_SIGNED_DATA {
        return Err(malformed(W, "not a CMS SignedData"));
    }
    let mut explicit = Reader::new(ci.expect(tag::CONTEXT_0, W)?);
    let mut signed_data = Reader::new(explicit.expect(tag::SEQUENCE, W)?);
    explicit.end(W)?;
    signed_data.expect(tag::INTEGER, W)?; // version
    signed_data.expect(tag::SET, W)?; // digestAlgorithms
    let mut encap = Reader::new(signed_data.expect(tag::SEQUENCE, W)?);
    if encap.expect(tag::OID, W)? != OID_TST_INFO {
        return Err(malformed(W, "the signed content is not a TSTInfo"));
    }
    let mut econtent = Reader::new(encap.expect(tag::CONTEXT_0, W)?);
    let tst_info = econtent.expect(tag::OCTET_STRING, W)?;
    econtent.end(W)?;
    encap.end(W)?;
    // certificates [0], crls [1] and signerInfos follow: the TSA's signature, not read here.
    read_tst_info(der, tst_info)
}

fn read_tst_info(token: &[u8], tst_info: &[u8]) -> Result<TimeStampToken, TsaError> {
    const W: &str = "TSTInfo";
    let mut top = Reader::new(tst_info);
    let mut info = Reader::new(top.expect(tag::SEQUENCE, W)?);
    top.end(W)?;
    if small_integer(info.expect(tag::INTEGER, W)?, W)? != 1 {
        return Err(malformed(W, "version is not 1"));
    }
    let policy = oid_text(info.expect(tag::OID, W)?, W)?;
    let mut imprint = Reader::new(info.expect(tag::SEQUENCE, W)?);
    let mut algorithm = Reader::new(imprint.expect(tag::SEQUENCE, W)?);
    let hash_algorithm = oid_text(algorithm.expect(tag::OID, W)?, W)?;
    if algorithm.peek() == Some(tag::NULL) {
        algorithm.expect(tag::NULL, W)?;
    }
    algorithm.end(W)?;
    let hashed = imprint.expect(tag::OCTET_STRING, W)?.to_vec();
    imprint.end(W)?;
    let serial = hex::encode(integer(info.expect(tag::INTEGER, W)?, W)?);
    let gen_time = generalized_time(info.expect(tag::GENERALIZED_TIME, W)?)?;
    let mut nonce = None;
    // accuracy (SEQUENCE), ordering (BOOLEAN), nonce (INTEGER), tsa [0], extensions [1], in that order.
    while !info.is_empty() {
        let (t, content, _) = info.next(W)?;
        if t == tag::INTEGER {
            if nonce.is_some() {
                return Err(malformed(W, "two nonces"));
            }
            nonce = Some(integer(content, W)?.to_vec());
        }
    }
    Ok(TimeStampToken { der: token.to_vec(), hash_algorithm, imprint: hashed, gen_time, serial, policy, nonce })
}

/// `YYYYMMDDHHMMSS[.f]Z` as RFC 3339 (`YYYY-MM-DDTHH:MM:SS[.f]Z`).
fn generalized_time(content: &[u8]) -> Result<String, TsaError> {
    const W: &str = "genTime";
    let text = std::str::from_utf8(content).map_err(|_| malformed(W, "not ASCII"))?;
    let bad = || malformed(W, format!("{text:?} is not YYYYMMDDHHMMSS[.fff]Z"));
    let body = text.strip_suffix('Z').ok_or_else(bad)?;
    let (whole, fraction) = match body.split_once('.') {
        Some((w, f)) if !f.is_empty() && f.bytes().all(|b| b.is_ascii_digit()) => (w, Some(f)),
        Some(_) => return Err(bad()),
        None => (body, None),
    };
    if whole.len() != 14 || !whole.bytes().all(|b| b.is_ascii_digit()) {
        return Err(bad());
    }
    let field = |r: std::ops::Range<usize>| whole.get(r).and_then(|s| s.parse::<u32>().ok()).ok_or_else(bad);
    let (month, day, hour, minute, second) =
        (field(4..6)?, field(6..8)?, field(8..10)?, field(10..12)?, field(12..14)?);
    if !(1..=12).contains(&month) || !(1..=31).contains(&day) || hour > 23 || minute > 59 || second > 60 {
        return Err(bad());
    }
    Ok(format!(
        "{}-{}-{}T{}:{}:{}{}Z",
        &whole[0..4],
        &whole[4..6],
        &whole[6..8],
        &whole[8..10],
        &whole[10..12],
        &whole[12..14],
        fraction.map(|f| format!(".{f}")).unwrap_or_default()
    ))
}

/// An OBJECT IDENTIFIER's content as dotted text.
fn oid_text(content: &[u8], what: &'static str) -> Result<String, TsaError> {
    if content.is_empty() || content.last().is_some_and(|b| b & 0x80 != 0) {
        return Err(malformed(what, "bad OBJECT IDENTIFIER"));
    }
    let mut arcs: Vec<u64> = Vec::new();
    let mut n: u64 = 0;
    for &b in content {
        if n > (u64::MAX >> 7) {
            return Err(malformed(what, "OBJECT IDENTIFIER arc too large"));
        }
        n = (n << 7) | u64::from(b & 0x7f);
        if b & 0x80 == 0 {
            arcs.push(n);
            n = 0;
        }
    }
    let first = arcs[0];
    let (a, b) = if first < 40 {
        (0, first)
    } else if first < 80 {
        (1, first - 40)
    } else {
        (2, first - 80)
    };
    let mut text = format!("{a}.{b}");
    for arc in &arcs[1..] {
        text.push_str(&format!(".{arc}"));
    }
    Ok(text)
}

/// An INTEGER's content bytes, checked non-empty.
fn integer<'a>(content: &'a [u8], what: &'static str) -> Result<&'a [u8], TsaError> {
    if content.is_empty() {
        return Err(malformed(what, "empty INTEGER"));
    }
    Ok(content)
}

/// A small INTEGER (a version, a status).
fn small_integer(content: &[u8], what: &'static str) -> Result<i64, TsaError> {
    let content = integer(content, what)?;
    if content.len() > 8 {
        return Err(malformed(what, "INTEGER too large"));
    }
    let negative = content[0] & 0x80 != 0;
    let mut n: i64 = if negative { -1 } else { 0 };
    for &b in content {
        n = (n << 8) | i64::from(b);
    }
    Ok(n)
}

/// A non-negative number's minimal DER INTEGER content.
fn integer_content(n: u64) -> Vec<u8> {
    let bytes = n.to_be_bytes();
    let start = bytes.iter().position(|&b| b != 0).unwrap_or(7);
    let mut out = Vec::with_capacity(9);
    if bytes[start] & 0x80 != 0 {
        out.push(0);
    }
    out.extend_from_slice(&bytes[start..]);
    out
}

/// `MessageImprint ::= SEQUENCE { AlgorithmIdentifier (sha256, NULL), OCTET STRING }`.
fn message_imprint(imprint: &[u8]) -> Vec<u8> {
    let algorithm = tlv(tag::SEQUENCE, &[tlv(tag::OID, OID_SHA256), tlv(tag::NULL, &[])].concat());
    tlv(tag::SEQUENCE, &[algorithm, tlv(tag::OCTET_STRING, imprint)].concat())
}

/// One DER element: tag, definite length, content.
fn tlv(tag: u8, content: &[u8]) -> Vec<u8> {
    let mut out = vec![tag];
    let len = content.len();
    if len < 0x80 {
        out.push(len as u8);
    } else {
        let bytes = (len as u64).to_be_bytes();
        let start = bytes.iter().position(|&b| b != 0).unwrap_or(7);
        out.push(0x80 | (8 - start) as u8);
        out.extend_from_slice(&bytes[start..]);
    }
    out.extend_from_slice(content);
    out
}

/// A DER reader over a slice: every length is checked against what is left.
struct Reader<'a> {
    rest: &'a [u8],
}

impl<'a> Reader<'a> {
    fn new(bytes: &'a [u8]) -> Self {
        Reader { rest: bytes }
    }

    fn is_empty(&self) -> bool {
        self.rest.is_empty()
    }

    fn peek(&self) -> Option<u8> {
        self.rest.first().copied()
    }

    /// The next element: its tag, its content, and the whole element.
    fn next(&mut self, what: &'static str) -> Result<(u8, &'a [u8], &'a [u8]), TsaError> {
        let all = self.rest;
        let (&t, after_tag) = all.split_first().ok_or_else(|| malformed(what, "truncated: an element expected"))?;
        if t & 0x1f == 0x1f {
            return Err(malformed(what, "multi-byte tags are not used by RFC 3161"));
        }
        let (&first, after_len) = after_tag.split_first().ok_or_else(|| malformed(what, "truncated length"))?;
        let (len, header_rest) = if first < 0x80 {
            (first as usize, after_len)
        } else {
            let n = usize::from(first & 0x7f);
            if n == 0 {
                return Err(malformed(what, "indefinite length (BER, not DER)"));
            }
            if n > 4 {
                return Err(malformed(what, "length too large"));
            }
            let bytes = after_len.get(..n).ok_or_else(|| malformed(what, "truncated length"))?;
            let len = bytes.iter().fold(0usize, |acc, &b| (acc << 8) | usize::from(b));
            (len, &after_len[n..])
        };
        if len > header_rest.len() {
            return Err(malformed(what, format!("an element of {len} bytes where {} are left", header_rest.len())));
        }
        let header = all.len() - header_rest.len();
        let whole = &all[..header + len];
        let content = &header_rest[..len];
        self.rest = &header_rest[len..];
        Ok((t, content, whole))
    }

    /// The next element's content, which must have tag `t`.
    fn expect(&mut self, t: u8, what: &'static str) -> Result<&'a [u8], TsaError> {
        let (got, content, _) = self.next(what)?;
        if got != t {
            return Err(malformed(what, format!("tag {got:#04x} where {t:#04x} was expected")));
        }
        Ok(content)
    }

    /// Nothing may follow.
    fn end(&self, what: &'static str) -> Result<(), TsaError> {
        if self.rest.is_empty() {
            Ok(())
        } else {
            Err(malformed(what, format!("{} bytes after the end", self.rest.len())))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// A structurally valid (unsigned) token for `imprint` and `nonce`: what a TSA sends,
    /// without certificates and signer infos.
    fn token(imprint: &[u8], nonce: &[u8], gen_time: &str) -> Vec<u8> {
        let tst_info = tlv(
            tag::SEQUENCE,
            &[
                tlv(tag::INTEGER, &[1]),
                tlv(tag::OID, &[0x2a, 0x03, 0x04, 0x01]), // policy 1.2.3.4.1
                message_imprint(imprint),
                tlv(tag::INTEGER, &[0x01, 0x02]),
                tlv(tag::GENERALIZED_TIME, gen_time.as_bytes()),
                tlv(tag::SEQUENCE, &tlv(tag::INTEGER, &[1])), // accuracy
                tlv(tag::INTEGER, nonce),
            ]
            .concat(),
        );
        let encap = tlv(
            tag::SEQUENCE,
            &[tlv(tag::OID, OID_TST_INFO), tlv(tag::CONTEXT_0, &tlv(tag::OCTET_STRING, &tst_info))].concat(),
        );
        let signed_data =
            tlv(tag::SEQUENCE, &[tlv(tag::INTEGER, &[3]), tlv(tag::SET, &[]), encap, tlv(tag::SET, &[])].concat());
        tlv(tag::SEQUENCE, &[tlv(tag::OID, OID_SIGNED_DATA), tlv(tag::CONTEXT_0, &signed_data)].concat())
    }

    fn response(status: &[u8], token: Option<&[u8]>) -> Vec<u8> {
        let mut content = tlv(tag::SEQUENCE, status);
        if let Some(t) = token {
            content.extend_from_slice(t);
        }
        tlv(tag::SEQUENCE, &content)
    }

    #[test]
    fn request_is_der_of_rfc3161() {
        let req = TimeStampRequest::with_nonce(b"abc", 0x80);
        // SHA-256("abc")
        let abc = "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";
        assert_eq!(hex::encode(req.imprint), abc);
        assert_eq!(req.nonce, vec![0x00, 0x80]);
        let expected = format!("303d0201013031300d060960864801650304020105000420{abc}020200800101ff");
        assert_eq!(hex::encode(&req.der), expected);
        assert_eq!(integer_content(1), vec![1]);
        assert_eq!(integer_content(0), vec![0]);
        assert_eq!(integer_content(0x0100), vec![1, 0]);
        assert_eq!(tlv(4, &[0u8; 200])[..3], [4, 0x81, 200]);
        assert_eq!(tlv(4, &[0u8; 300])[..4], [4, 0x82, 1, 44]);
    }

    #[test]
    fn granted_response_gives_its_token() {
        let req = TimeStampRequest::with_nonce(b"head", 42);
        let t = token(&req.imprint, &req.nonce, "20261126093000.25Z");
        for status in [&[2, 1, 0][..], &[2, 1, 1]] {
            let read = req.read_response(&response(status, Some(&t))).unwrap();
            assert_eq!(read.der, t);
            assert_eq!(read.gen_time, "2026-11-26T09:30:00.25Z");
            assert_eq!(read.serial, "0102");
            assert_eq!(read.policy, "1.2.3.4.1");
            assert_eq!(read.hash_algorithm, "2.16.840.1.101.3.4.2.1");
            read.check_data(b"head").unwrap();
            assert!(matches!(read.check_data(b"other"), Err(TsaError::Mismatch(_))));
        }
        assert_eq!(read_token(&t).unwrap().gen_time, "2026-11-26T09:30:00.25Z");
        let whole = read_token(&token(&req.imprint, &req.nonce, "20261126093000Z")).unwrap();
        assert_eq!(whole.gen_time, "2026-11-26T09:30:00Z");
    }

    #[test]
    fn refusals_and_mismatches_are_typed() {
        let req = TimeStampRequest::with_nonce(b"head", 42);
        // rejection, statusString "no", failInfo badAlg (bit 0) and badDataFormat (bit 5)
        let status =
            [tlv(tag::INTEGER, &[2]), tlv(tag::SEQUENCE, &tlv(tag::UTF8_STRING, b"no")), tlv(3, &[2, 0x84])].concat();
        assert_eq!(
            req.read_response(&response(&status, None)),
            Err(TsaError::Rejected { status: 2, fail_info: Some(0b100001), status_text: Some("no".into()) })
        );
        assert!(matches!(req.read_response(&response(&[2, 1, 0], None)), Err(TsaError::Malformed { .. })));
        let other_nonce = token(&req.imprint, &[43], "20261126093000Z");
        assert!(matches!(req.read_response(&response(&[2, 1, 0], Some(&other_nonce))), Err(TsaError::Mismatch(_))));
        let other_imprint = token(&[0; 32], &req.nonce, "20261126093000Z");
        assert!(matches!(req.read_response(&response(&[2, 1, 0], Some(&other_imprint))), Err(TsaError::Mismatch(_))));
        for time in ["20261326093000Z", "2026112609300Z", "20261126093000.Z", "20261126093000"] {
            let t = token(&req.imprint, &req.nonce, time);
            assert!(matches!(read_token(&t), Err(TsaError::Malformed { .. })), "{time}");
        }
        // every truncation of a valid response is an error, not a panic
        let good = response(&[2, 1, 0], Some(&token(&req.imprint, &req.nonce, "20261126093000Z")));
        for n in 0..good.len() {
            assert!(req.read_response(&good[..n]).is_err());
        }
        // trailing bytes
        assert!(req.read_response(&[good.as_slice(), &[0]].concat()).is_err());
    }

    /// A one-capture package whose head carries `token` (hex), and the package read back.
    fn package_with(token: Option<String>) -> (Vec<u8>, crate::Package) {
        use crate::package::{PackageFile, ProofFile};
        let key = crate::LogKey::generate();
        let leaf = leaf();
        let log = crate::EvidenceLog::from_leaves([leaf.clone()]);
        let proof = ProofFile { leaf_index: 0, tree_size: 1, inclusion_proof: log.inclusion_proof(0, 1).unwrap() };
        let mut head = key.sign(crate::TreeHead::new(&log.root(), 1_764_072_000_000));
        head.timestamp_token = token;
        let files = [PackageFile { name: "capture/page.warc".into(), bytes: b"WARC/1.1".to_vec() }];
        let zip = crate::write_package(
            std::io::Cursor::new(Vec::new()),
            &key,
            &files,
            &leaf,
            &proof,
            &head,
            &[],
            serde_json::json!({}),
        )
        .unwrap()
        .into_inner();
        let package = crate::read_package(std::io::Cursor::new(zip.clone()), Default::default()).unwrap();
        (zip, package)
    }

    fn leaf() -> Vec<u8> {
        crate::CaptureRecord {
            format: crate::CaptureRecord::FORMAT.into(),
            capture_id: "c-1".into(),
            files: vec![crate::FileEntry::of("capture/page.warc", b"WARC/1.1")],
            ..Default::default()
        }
        .to_leaf()
    }

    fn head_text() -> Vec<u8> {
        let log = crate::EvidenceLog::from_leaves([leaf()]);
        crate::TreeHead::new(&log.root(), 1_764_072_000_000).signed_text().into_bytes()
    }

    #[test]
    fn a_time_stamped_head_travels_in_the_package_and_is_checked() {
        let imprint: [u8; 32] = sha2::Sha256::digest(head_text()).into();
        let t = token(&imprint, &[7], "20261126093000.5Z");
        let (zip, package) = package_with(Some(hex::encode(&t)));
        assert_eq!(package.timestamp_token.as_deref(), Some(t.as_slice()));
        assert_eq!(package.head_text.as_deref(), Some(head_text().as_slice()));
        assert!(package.manifest.files.iter().any(|f| f.name == "tree-head.tsr"));
        assert!(package.manifest.files.iter().any(|f| f.name == "tree-head.txt"));
        let v = package.verify(None, None);
        assert!(v.ok(), "{}", v.summary());
        let check = v.checks.iter().find(|c| c.what == "timestamp").unwrap();
        assert!(check.detail.contains("2026-11-26T09:30:00.5Z"), "{}", check.detail);
        assert!(check.detail.contains("openssl ts -verify"), "{}", check.detail);
        assert!(!zip.is_empty());

        // a token over something else
        let (_, other) = package_with(Some(hex::encode(token(&[1; 32], &[7], "20261126093000Z"))));
        let v = other.verify(None, None);
        assert!(!v.ok());
        assert!(v.checks.iter().any(|c| c.what == "timestamp" && !c.ok), "{}", v.summary());

        // a head without a token: no timestamp check, no extra files, no new JSON key
        let (_, plain) = package_with(None);
        assert!(plain.timestamp_token.is_none() && plain.head_text.is_none());
        assert!(plain.verify(None, None).checks.iter().all(|c| c.what != "timestamp"));
        assert!(!serde_json::to_string(&plain.head).unwrap().contains("timestamp_token"));
    }

    proptest! {
        #[test]
        fn random_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..512)) {
            let req = TimeStampRequest::with_nonce(b"head", 42);
            let _ = req.read_response(&bytes);
            let _ = read_token(&bytes);
        }

        #[test]
        fn mutated_responses_never_panic(changes in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..8)) {
            let req = TimeStampRequest::with_nonce(b"head", 42);
            let mut bytes = response(&[2, 1, 0], Some(&token(&req.imprint, &req.nonce, "20261126093000.5Z")));
            for (at, b) in changes {
                let i = at % bytes.len();
                bytes[i] = b;
            }
            let _ = req.read_response(&bytes);
        }
    }
}
