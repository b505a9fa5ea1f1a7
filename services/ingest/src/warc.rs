//! WARC framing that survives corrupt records, and gzip that survives corrupt members.
//!
//! A WARC file is a sequence of records: a `WARC/1.x` version line, header lines, a blank
//! line, `Content-Length` bytes of block, and a blank line pair. One record with a corrupt
//! header or a `Content-Length` that does not end at a record boundary must not drop every
//! record after it: the reader checks that each block is followed by the next `WARC/1.`
//! header (or the end of the file) and, when it is not, resynchronises on the next line
//! that starts with `WARC/1.` (scanning forward from the start of the bad block, in bounded
//! memory), reporting the bytes it skipped. The `warc` crate reads a record's header and
//! block without a bound and stops at the first error, hence this reader.
//!
//! [`GzMembers`] decompresses concatenated gzip members (Common Crawl writes one per
//! record) and, when a member is corrupt, skips to the next gzip header instead of ending
//! the file; [`RatioRead`] bounds how far a compressed stream may inflate.

use std::cell::Cell;
use std::io::{self, BufRead, Read};
use std::rc::Rc;

use memchr::memchr;

/// A record header block longer than this is corrupt (real ones are under 2 KiB).
const MAX_HEADER_BYTES: usize = 64 << 10;
const RECORD_START: &[u8] = b"WARC/1.";

/// A WARC record as framed: its header fields (names lower-cased) and its block.
#[derive(Debug)]
pub(crate) struct RawRecord {
    pub headers: Vec<(String, String)>,
    pub block: Vec<u8>,
}

impl RawRecord {
    /// A header's value (lossy UTF-8, trimmed), by lower-case name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
    }
}

/// What the framing found next.
#[derive(Debug)]
pub(crate) enum Framed {
    /// A well-framed record.
    Record(RawRecord),
    /// A record that was not read: corrupt or over the size bound. `skipped` bytes were
    /// passed over to reach the next record header (or the end of the file).
    Corrupt { reason: String, skipped: u64 },
}

/// A `BufRead` that can be given bytes back (read ahead, then un-read).
pub(crate) struct Rewind<R> {
    pending: Vec<u8>,
    pos: usize,
    inner: R,
}

impl<R: BufRead> Rewind<R> {
    pub fn new(inner: R) -> Self {
        Rewind { pending: Vec::new(), pos: 0, inner }
    }

    /// Put `bytes` back in front of what is still to be read.
    fn unread(&mut self, bytes: &[u8]) {
        if bytes.is_empty() {
            return;
        }
        let mut next = Vec::with_capacity(bytes.len() + self.pending.len() - self.pos);
        next.extend_from_slice(bytes);
        next.extend_from_slice(&self.pending[self.pos..]);
        self.pending = next;
        self.pos = 0;
    }

    /// Up to `n` bytes ahead, without consuming them (fewer only at the end of input).
    fn peek(&mut self, n: usize) -> io::Result<Vec<u8>> {
        let mut ahead = Vec::with_capacity(n);
        (&mut *self).take(n as u64).read_to_end(&mut ahead)?;
        self.unread(&ahead);
        Ok(ahead)
    }
}

impl<R: BufRead> Read for Rewind<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let available = self.fill_buf()?;
        let n = available.len().min(buf.len());
        buf[..n].copy_from_slice(&available[..n]);
        self.consume(n);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for Rewind<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.pos < self.pending.len() {
            return Ok(&self.pending[self.pos..]);
        }
        self.inner.fill_buf()
    }

    fn consume(&mut self, amt: usize) {
        if self.pos < self.pending.len() {
            self.pos += amt;
            if self.pos >= self.pending.len() {
                self.pending = Vec::new();
                self.pos = 0;
            }
        } else {
            self.inner.consume(amt);
        }
    }
}

/// The records of a WARC stream, resynchronising after corrupt ones.
pub(crate) struct Records<R> {
    src: Rewind<R>,
    max_block: u64,
}

impl<R: BufRead> Records<R> {
    /// Records of `reader`; a block larger than `max_block` is not read (reported corrupt
    /// and skipped, like a block whose length is wrong).
    pub fn new(reader: R, max_block: u64) -> Self {
        Records { src: Rewind::new(reader), max_block }
    }

    /// The next record, `None` at the end; an error when the input itself fails.
    pub fn next_record(&mut self) -> io::Result<Option<Framed>> {
        self.skip_blank()?;
        if self.src.fill_buf()?.is_empty() {
            return Ok(None);
        }
        let mut header = Vec::new();
        let complete = self.read_header(&mut header)?;
        let first_line_end = memchr(b'\n', &header).map_or(header.len(), |i| i + 1);
        if !header.starts_with(RECORD_START) {
            let skipped = first_line_end as u64 + self.resync(&header[first_line_end..])?;
            let start = String::from_utf8_lossy(&header[..first_line_end.min(40)]).trim().to_owned();
            return Ok(Some(Framed::Corrupt { reason: format!("not a WARC record header ({start:?})"), skipped }));
        }
        if !complete {
            let skipped = first_line_end as u64 + self.resync(&header[first_line_end..])?;
            let why = if header.len() >= MAX_HEADER_BYTES {
                format!("a record header longer than {MAX_HEADER_BYTES} bytes")
            } else {
                "the file ends inside a record header".to_owned()
            };
            return Ok(Some(Framed::Corrupt { reason: why, skipped }));
        }
        let headers = parse_fields(&header[first_line_end..]);
        let length = headers.iter().find(|(k, _)| k == "content-length").map(|(_, v)| v.as_str());
        let length = match length.map(|v| (v, v.parse::<u64>())) {
            Some((_, Ok(n))) => n,
            Some((v, Err(_))) => {
                let skipped = first_line_end as u64 + self.resync(&header[first_line_end..])?;
                let v: String = v.chars().take(40).collect();
                return Ok(Some(Framed::Corrupt { reason: format!("bad Content-Length {v:?}"), skipped }));
            }
            None => {
                let skipped = first_line_end as u64 + self.resync(&header[first_line_end..])?;
                return Ok(Some(Framed::Corrupt { reason: "no Content-Length".into(), skipped }));
            }
        };
        let header_len = header.len() as u64;
        if length > self.max_block {
            // Too large to hold, or a corrupt length: never trusted to skip by; the next
            // record header is searched for instead (in bounded memory).
            let skipped = header_len + self.resync(&[])?;
            return Ok(Some(Framed::Corrupt {
                reason: format!("record larger than {} bytes (Content-Length {length})", self.max_block),
                skipped,
            }));
        }
        let mut block = Vec::with_capacity(length.min(1 << 20) as usize);
        (&mut self.src).take(length).read_to_end(&mut block)?;
        let full = block.len() as u64 == length;
        if full {
            // The block ends with the record's CRLF CRLF, or at least where the next record
            // (or the end of the input) begins after some line ends.
            if self.src.peek(4)? == b"\r\n\r\n" {
                self.src.consume(4);
                return Ok(Some(Framed::Record(RawRecord { headers, block })));
            }
            let trailer = self.skip_blank()?;
            let ahead = self.src.peek(RECORD_START.len())?;
            if ahead.is_empty() || ahead.starts_with(b"WARC/") {
                return Ok(Some(Framed::Record(RawRecord { headers, block })));
            }
            // Not at a record boundary: read again from the start of the block.
            self.src.unread(&vec![b'\n'; trailer]);
        }
        let present = block.len();
        let skipped = header_len + self.resync(&block)?;
        let reason = if self.src.fill_buf()?.is_empty() && !full {
            format!("the file ends inside the record ({present} of its {length} bytes)")
        } else {
            format!("Content-Length {length} does not end at a record boundary")
        };
        Ok(Some(Framed::Corrupt { reason, skipped }))
    }

    /// Skip CR and LF bytes; how many.
    fn skip_blank(&mut self) -> io::Result<usize> {
        let mut n = 0;
        loop {
            let buf = self.src.fill_buf()?;
            let blank = buf.iter().take_while(|&&b| b == b'\r' || b == b'\n').count();
            if blank == 0 {
                return Ok(n);
            }
            self.src.consume(blank);
            n += blank;
        }
    }

    /// Read header lines up to and including the blank line; `false` when the input ends
    /// first or the header grows past [`MAX_HEADER_BYTES`].
    fn read_header(&mut self, out: &mut Vec<u8>) -> io::Result<bool> {
        let mut line_start = 0;
        loop {
            let buf = self.src.fill_buf()?;
            if buf.is_empty() {
                return Ok(false);
            }
            let room = MAX_HEADER_BYTES.saturating_sub(out.len());
            if room == 0 {
                return Ok(false);
            }
            let buf = &buf[..buf.len().min(room)];
            let (take, end) = match memchr(b'\n', buf) {
                Some(i) => (i + 1, true),
                None => (buf.len(), false),
            };
            out.extend_from_slice(&buf[..take]);
            self.src.consume(take);
            if end {
                let line = &out[line_start..];
                if line == b"\r\n" || line == b"\n" {
                    return Ok(true);
                }
                line_start = out.len();
            }
        }
    }

    /// Put `back` in front of the input, then consume up to the next record start: a line
    /// that starts with `WARC/1.` (`back` starts at a line start), or a version line
    /// (`WARC/1.0` and a line end) that follows damaged bytes on the same line (a corrupt
    /// gzip member's output seldom ends with a line end). Returns the bytes consumed.
    fn resync(&mut self, back: &[u8]) -> io::Result<u64> {
        self.src.unread(back);
        let mut skipped = 0u64;
        let mut at_line_start = true;
        loop {
            if self.src.fill_buf()?.len() < 16 {
                // A record start split between two reads is looked at whole.
                self.src.peek(16)?;
            }
            let buf = self.src.fill_buf()?;
            if buf.is_empty() || (at_line_start && buf.starts_with(RECORD_START)) {
                return Ok(skipped);
            }
            let line_end = memchr(b'\n', buf).map(|i| i + 1);
            let chunk = line_end.unwrap_or(buf.len());
            let mut take = chunk;
            for p in memchr::memmem::find_iter(&buf[..chunk], RECORD_START) {
                let rest = &buf[p..];
                if p > 0 && rest.len() < 10 {
                    // Too close to the end of what is buffered to tell: look again.
                    take = p;
                    break;
                }
                if is_version_line(rest) {
                    self.src.consume(p);
                    return Ok(skipped + p as u64);
                }
            }
            self.src.consume(take);
            skipped += take as u64;
            at_line_start = take == chunk && line_end.is_some();
        }
    }
}

/// `WARC/1.<digit>` and a line end.
fn is_version_line(b: &[u8]) -> bool {
    b.len() >= 9
        && b.starts_with(RECORD_START)
        && b[7].is_ascii_digit()
        && (b[8] == b'\n' || (b[8] == b'\r' && b.get(9) == Some(&b'\n')))
}

/// `Name: value` lines (with folded continuation lines), names lower-cased.
fn parse_fields(block: &[u8]) -> Vec<(String, String)> {
    let mut fields: Vec<(String, String)> = Vec::new();
    for line in block.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.is_empty() {
            continue;
        }
        if matches!(line[0], b' ' | b'\t') {
            if let Some((_, v)) = fields.last_mut() {
                v.push(' ');
                v.push_str(String::from_utf8_lossy(line).trim());
            }
            continue;
        }
        let Some(colon) = memchr(b':', line) else { continue };
        let name = String::from_utf8_lossy(&line[..colon]).trim().to_ascii_lowercase();
        let value = String::from_utf8_lossy(&line[colon + 1..]).trim().to_owned();
        fields.push((name, value));
    }
    fields
}

/// Counts the bytes consumed from a `BufRead` (the compressed side of a stream).
pub(crate) struct CountConsumed<R> {
    inner: R,
    count: Rc<Cell<u64>>,
}

impl<R> CountConsumed<R> {
    pub fn new(inner: R, count: Rc<Cell<u64>>) -> Self {
        CountConsumed { inner, count }
    }
}

impl<R: BufRead> Read for CountConsumed<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.count.set(self.count.get() + n as u64);
        Ok(n)
    }
}

impl<R: BufRead> BufRead for CountConsumed<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        self.inner.fill_buf()
    }
    fn consume(&mut self, amt: usize) {
        self.count.set(self.count.get() + amt as u64);
        self.inner.consume(amt);
    }
}

/// What the gzip layer of a WARC.gz file passed over.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct GzDamage {
    /// Members that were cut short or damaged (decoding went on at the next member).
    pub corrupt_members: u64,
    /// Compressed bytes skipped to reach the next gzip header.
    pub skipped_bytes: u64,
}

enum GzState<R: BufRead> {
    /// Inside a member; `out` bytes decompressed from it so far.
    Member(Box<flate2::bufread::GzDecoder<R>>, u64),
    /// Between members; `stuck`: the last member failed without any output, so at least
    /// one byte is skipped before a gzip header is looked for again.
    Between(R, bool),
    Done,
}

/// Concatenated gzip members, decompressed one after the other. A corrupt member ends
/// where the decoder fails; decoding goes on at the next gzip header in the compressed
/// bytes (Common Crawl's one member per record makes that the next record). Errors of the
/// input itself (and cancellation) end the stream.
pub(crate) struct GzMembers<R: BufRead> {
    state: GzState<R>,
    damage: Rc<Cell<GzDamage>>,
}

impl<R: BufRead> GzMembers<R> {
    pub fn new(inner: R, damage: Rc<Cell<GzDamage>>) -> Self {
        GzMembers { state: GzState::Between(inner, false), damage }
    }

    fn hurt(&self, skipped: u64, corrupt: bool) {
        let mut d = self.damage.get();
        d.skipped_bytes += skipped;
        d.corrupt_members += u64::from(corrupt);
        self.damage.set(d);
    }
}

/// The first bytes of a gzip member (deflate method).
pub(crate) const GZIP_MAGIC: &[u8] = b"\x1f\x8b\x08";

impl<R: BufRead> Read for GzMembers<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if buf.is_empty() {
            return Ok(0);
        }
        loop {
            match std::mem::replace(&mut self.state, GzState::Done) {
                GzState::Done => return Ok(0),
                GzState::Member(mut decoder, out) => match decoder.read(buf) {
                    Ok(0) => self.state = GzState::Between(decoder.into_inner(), false),
                    Ok(n) => {
                        self.state = GzState::Member(decoder, out + n as u64);
                        return Ok(n);
                    }
                    Err(e) => {
                        tracing::info!(error = %e, "corrupt gzip member; looking for the next one");
                        self.hurt(0, true);
                        self.state = GzState::Between(decoder.into_inner(), out == 0);
                    }
                },
                GzState::Between(mut inner, stuck) => {
                    let available = inner.fill_buf()?;
                    if available.is_empty() {
                        return Ok(0);
                    }
                    if !stuck && (available.starts_with(GZIP_MAGIC) || GZIP_MAGIC.starts_with(available)) {
                        self.state = GzState::Member(Box::new(flate2::bufread::GzDecoder::new(inner)), 0);
                        continue;
                    }
                    // Garbage between members: skip to the next gzip header.
                    let from = usize::from(stuck);
                    let skip = match memchr::memmem::find(&available[from..], GZIP_MAGIC) {
                        Some(i) => from + i,
                        None => available.len().saturating_sub(GZIP_MAGIC.len() - 1).max(1),
                    };
                    inner.consume(skip);
                    self.hurt(skip as u64, false);
                    self.state = GzState::Between(inner, false);
                }
            }
        }
    }
}

/// Fails once the bytes read from it pass `max_ratio` times the compressed bytes consumed
/// so far (after a grace of [`crate::options::RATIO_GRACE_BYTES`]): a decompression bomb
/// stops within a bounded amount of output.
pub(crate) struct RatioRead<R> {
    inner: R,
    compressed: Rc<Cell<u64>>,
    out: u64,
    limits: crate::ImportLimits,
}

impl<R> RatioRead<R> {
    pub fn new(inner: R, compressed: Rc<Cell<u64>>, limits: crate::ImportLimits) -> Self {
        RatioRead { inner, compressed, out: 0, limits }
    }
}

impl<R: Read> Read for RatioRead<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.out += n as u64;
        if self.limits.ratio_exceeded(self.out, self.compressed.get()) {
            return Err(io::Error::other(format!(
                "it decompresses to more than {} times its size ({} bytes from {}): a decompression bomb",
                self.limits.max_ratio,
                self.out,
                self.compressed.get()
            )));
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    fn record(kind: &str, block: &[u8]) -> Vec<u8> {
        let mut r = format!("WARC/1.0\r\nWARC-Type: {kind}\r\nContent-Length: {}\r\n\r\n", block.len()).into_bytes();
        r.extend_from_slice(block);
        r.extend_from_slice(b"\r\n\r\n");
        r
    }

    fn frame(bytes: &[u8], max: u64) -> Vec<Result<String, (String, u64)>> {
        let mut records = Records::new(io::BufReader::with_capacity(7, bytes), max);
        let mut out = Vec::new();
        while let Some(f) = records.next_record().unwrap() {
            out.push(match f {
                Framed::Record(r) => Ok(String::from_utf8_lossy(&r.block).into_owned()),
                Framed::Corrupt { reason, skipped } => Err((reason, skipped)),
            });
        }
        out
    }

    #[test]
    fn good_records_around_bad_ones_are_all_found() {
        let a = record("resource", b"first");
        let b = record("resource", b"second");
        // Content-Length too long (swallows the next record), too short, not a number,
        // missing; a header line that is not WARC; a header that never ends.
        let long = b"WARC/1.0\r\nWARC-Type: resource\r\nContent-Length: 400\r\n\r\nshort\r\n\r\n".to_vec();
        let short = b"WARC/1.0\r\nWARC-Type: resource\r\nContent-Length: 2\r\n\r\nlonger body\r\n\r\n".to_vec();
        let nan = b"WARC/1.0\r\nContent-Length: 12x\r\n\r\nbody\r\n\r\n".to_vec();
        let none = b"WARC/1.0\r\nWARC-Type: resource\r\n\r\nbody\r\n\r\n".to_vec();
        let garbage = b"\x00\xffgarbage line\nmore\n".to_vec();
        for bad in [long, short, nan, none, garbage] {
            let bytes = [a.clone(), bad.clone(), b.clone()].concat();
            let found = frame(&bytes, 1 << 20);
            let ok: Vec<&String> = found.iter().filter_map(|r| r.as_ref().ok()).collect();
            assert_eq!(ok, ["first", "second"], "{:?}: {found:?}", String::from_utf8_lossy(&bad));
            let corrupt: Vec<_> = found.iter().filter_map(|r| r.as_ref().err()).collect();
            assert_eq!(corrupt.len(), 1, "{found:?}");
            assert_eq!(corrupt[0].1, bad.len() as u64, "{found:?}");
        }
    }

    #[test]
    fn oversized_and_truncated_records_are_skipped_in_bounded_memory() {
        let a = record("resource", b"first");
        let big = record("resource", &vec![b'x'; 5000]);
        let b = record("resource", b"second");
        let found = frame(&[a.clone(), big.clone(), b.clone()].concat(), 1000);
        assert_eq!(found.len(), 3);
        assert!(matches!(&found[1], Err((r, n)) if r.contains("larger than 1000") && *n == big.len() as u64));
        // A huge declared length is never allocated.
        let huge = b"WARC/1.0\r\nContent-Length: 18446744073709551615\r\n\r\nx\r\n\r\n".to_vec();
        let found = frame(&[a.clone(), huge, b.clone()].concat(), 1 << 20);
        assert_eq!(found.iter().filter(|r| r.is_ok()).count(), 2, "{found:?}");
        // Cut in the middle of the last record.
        let mut cut = [a, b].concat();
        cut.truncate(cut.len() - 8);
        let found = frame(&cut, 1 << 20);
        assert!(matches!(&found[1], Err((r, _)) if r.contains("ends inside")), "{found:?}");
    }

    #[test]
    fn corrupt_gzip_members_are_skipped() {
        let gz = |b: &[u8]| {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            e.write_all(b).unwrap();
            e.finish().unwrap()
        };
        let mut bad = gz(b"this member will be damaged in its compressed data");
        let mid = bad.len() / 2;
        bad[mid..].iter_mut().for_each(|b| *b ^= 0x5a);
        let bytes = [gz(b"one "), bad, b"junk".to_vec(), gz(b"two")].concat();
        let damage = Rc::new(Cell::new(GzDamage::default()));
        let mut out = Vec::new();
        GzMembers::new(&bytes[..], damage.clone()).read_to_end(&mut out).unwrap();
        let text = String::from_utf8_lossy(&out);
        assert!(text.starts_with("one ") && text.ends_with("two"), "{text:?}");
        assert!(damage.get().corrupt_members >= 1, "{:?}", damage.get());
    }

    #[test]
    fn a_gzip_bomb_stops_at_the_ratio() {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
        e.write_all(&vec![0u8; 64 << 20]).unwrap();
        let bomb = e.finish().unwrap();
        let compressed = Rc::new(Cell::new(0));
        let limits = crate::ImportLimits { max_ratio: 100, ..crate::ImportLimits::default() };
        let damage = Rc::new(Cell::new(GzDamage::default()));
        let reader = GzMembers::new(CountConsumed::new(&bomb[..], compressed.clone()), damage);
        let mut r = RatioRead::new(reader, compressed, limits);
        let mut sink = [0u8; 8192];
        let mut total = 0u64;
        let err = loop {
            match r.read(&mut sink) {
                Ok(0) => panic!("the bomb inflated whole: {total} bytes"),
                Ok(n) => total += n as u64,
                Err(e) => break e,
            }
        };
        assert!(err.to_string().contains("decompression bomb"), "{err}");
        assert!(total < 4 << 20, "{total}");
    }
}
