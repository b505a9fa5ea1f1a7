//! The stored form of [`Fingerprints`]: a versioned little-endian binary layout.
//!
//! Fingerprints are mostly random 64-bit hashes, which deflate hardly shrinks: the
//! earlier compressed-JSON form cost a sixth of a re-matching task's CPU time (`deflate`
//! and integer formatting on the writer). The layout is written by hand (no
//! serialisation crate) so that the bytes on disk depend only on this file: a crate
//! upgrade can never change them, and the version byte says how to read every blob ever
//! written. Blobs of the older form (deflated JSON) are still read: the store's decoder
//! tells them apart by the magic.
//!
//! ```text
//! "ZWFP" version(1) | tag_len u16 | tag | char_count u32 | han_count u32 | token_count u32
//! | content_hash u64 | simhash u64 | dna: n u32, (start u32, end u32, code u64)*
//! | shingles, minhash, super_shingles, mega_shingles, lsh_bands: n u32, u64*
//! | winnow_initials, winnow_chars: n u32, (hash u64, pos u32)*
//! ```

use zhiwen_core::dna::DnaSegment;
use zhiwen_core::winnow::WinnowFp;
use zhiwen_core::Fingerprints;

/// First bytes of every binary blob. A legacy blob (a raw deflate stream) starting with
/// them would still be read: the caller falls back to the legacy form when a blob with
/// the magic does not decode.
const MAGIC: &[u8; 4] = b"ZWFP";
const VERSION: u8 = 1;

/// Is this blob in the binary form (as opposed to the legacy deflated JSON)?
pub(crate) fn is_binary(bytes: &[u8]) -> bool {
    bytes.starts_with(MAGIC)
}

/// Encode; `None` when the parameter tag is longer than 64 KiB (it is a short hash).
pub(crate) fn encode(fp: &Fingerprints) -> Option<Vec<u8>> {
    let tag = fp.params_tag.as_bytes();
    let tag_len = u16::try_from(tag.len()).ok()?;
    let u64s =
        fp.shingles.len() + fp.minhash.len() + fp.super_shingles.len() + fp.mega_shingles.len() + fp.lsh_bands.len();
    let size = 5
        + 2
        + tag.len()
        + 28
        + 4
        + fp.dna.len() * 16
        + 5 * 4
        + u64s * 8
        + 2 * 4
        + (fp.winnow_initials.len() + fp.winnow_chars.len()) * 12;
    let mut out = Vec::with_capacity(size);
    out.extend_from_slice(MAGIC);
    out.push(VERSION);
    out.extend_from_slice(&tag_len.to_le_bytes());
    out.extend_from_slice(tag);
    for v in [fp.char_count, fp.han_count, fp.token_count] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&fp.content_hash.to_le_bytes());
    out.extend_from_slice(&fp.simhash.to_le_bytes());
    put_len(&mut out, fp.dna.len())?;
    for d in &fp.dna {
        out.extend_from_slice(&d.start.to_le_bytes());
        out.extend_from_slice(&d.end.to_le_bytes());
        out.extend_from_slice(&d.code.to_le_bytes());
    }
    for list in [&fp.shingles, &fp.minhash, &fp.super_shingles, &fp.mega_shingles, &fp.lsh_bands] {
        put_len(&mut out, list.len())?;
        list.iter().for_each(|v| out.extend_from_slice(&v.to_le_bytes()));
    }
    for list in [&fp.winnow_initials, &fp.winnow_chars] {
        put_len(&mut out, list.len())?;
        for w in list {
            out.extend_from_slice(&w.hash.to_le_bytes());
            out.extend_from_slice(&w.pos.to_le_bytes());
        }
    }
    Some(out)
}

fn put_len(out: &mut Vec<u8>, n: usize) -> Option<()> {
    out.extend_from_slice(&u32::try_from(n).ok()?.to_le_bytes());
    Some(())
}

/// Decode a binary blob; `Err` says what is wrong with it.
pub(crate) fn decode(bytes: &[u8]) -> Result<Fingerprints, String> {
    let mut r = Reader { bytes, at: 0 };
    if r.take(4)? != MAGIC {
        return Err("not a binary fingerprint blob".into());
    }
    let version = r.take(1)?[0];
    if version != VERSION {
        return Err(format!("fingerprint blob version {version}; this build reads version {VERSION}"));
    }
    let tag_len = u16::from_le_bytes(r.array()?) as usize;
    let params_tag = String::from_utf8(r.take(tag_len)?.to_vec()).map_err(|e| format!("parameter tag: {e}"))?;
    let char_count = r.u32()?;
    let han_count = r.u32()?;
    let token_count = r.u32()?;
    let content_hash = r.u64()?;
    let simhash = r.u64()?;
    let n = r.count(16)?;
    let mut dna = Vec::with_capacity(n);
    for _ in 0..n {
        dna.push(DnaSegment { start: r.u32()?, end: r.u32()?, code: r.u64()? });
    }
    let mut u64_list = || -> Result<Vec<u64>, String> {
        let n = r.count(8)?;
        (0..n).map(|_| r.u64()).collect()
    };
    let shingles = u64_list()?;
    let minhash = u64_list()?;
    let super_shingles = u64_list()?;
    let mega_shingles = u64_list()?;
    let lsh_bands = u64_list()?;
    let mut winnow_list = || -> Result<Vec<WinnowFp>, String> {
        let n = r.count(12)?;
        (0..n).map(|_| Ok(WinnowFp { hash: r.u64()?, pos: r.u32()? })).collect()
    };
    let winnow_initials = winnow_list()?;
    let winnow_chars = winnow_list()?;
    if r.at != bytes.len() {
        return Err(format!("{} bytes after the end of the fingerprints", bytes.len() - r.at));
    }
    Ok(Fingerprints {
        params_tag,
        char_count,
        han_count,
        token_count,
        content_hash,
        simhash,
        dna,
        shingles,
        minhash,
        super_shingles,
        mega_shingles,
        lsh_bands,
        winnow_initials,
        winnow_chars,
    })
}

struct Reader<'a> {
    bytes: &'a [u8],
    at: usize,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        let end = self.at.checked_add(n).filter(|&e| e <= self.bytes.len());
        let end = end.ok_or_else(|| format!("truncated at byte {} (wanted {n} more)", self.at))?;
        let s = &self.bytes[self.at..end];
        self.at = end;
        Ok(s)
    }

    fn array<const N: usize>(&mut self) -> Result<[u8; N], String> {
        let s = self.take(N)?;
        s.try_into().map_err(|_| "internal: slice length".to_owned())
    }

    fn u32(&mut self) -> Result<u32, String> {
        Ok(u32::from_le_bytes(self.array()?))
    }

    fn u64(&mut self) -> Result<u64, String> {
        Ok(u64::from_le_bytes(self.array()?))
    }

    /// A list length, checked against the bytes left (so a corrupt length cannot make
    /// the decoder allocate gigabytes).
    fn count(&mut self, item_bytes: usize) -> Result<usize, String> {
        let n = self.u32()? as usize;
        let left = self.bytes.len() - self.at;
        if n.saturating_mul(item_bytes) > left {
            return Err(format!("list of {n} items longer than the {left} bytes left"));
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use zhiwen_core::{Fingerprinter, Params};

    fn sample() -> Fingerprints {
        let fp = Fingerprinter::new(Params::default()).unwrap();
        let text = "滚滚长江东逝水，浪花淘尽英雄。是非成败转头空，青山依旧在，几度夕阳红。".repeat(20);
        fp.analyze_text(&text, Default::default()).unwrap().fingerprints
    }

    #[test]
    fn round_trips_exactly() {
        let fp = sample();
        assert!(!fp.shingles.is_empty() && !fp.winnow_chars.is_empty() && !fp.dna.is_empty());
        let blob = encode(&fp).unwrap();
        assert!(is_binary(&blob));
        assert_eq!(decode(&blob).unwrap(), fp);
        let empty = Fingerprints { dna: vec![], shingles: vec![], winnow_chars: vec![], ..fp };
        assert_eq!(decode(&encode(&empty).unwrap()).unwrap(), empty);
    }

    #[test]
    fn stores_read_both_forms() {
        use crate::codec::{decode_fingerprints, encode_fingerprints};
        use crate::model::Subject;
        let fp = sample();
        let legacy = crate::codec::deflate(&serde_json::to_vec(&fp).unwrap());
        assert!(!is_binary(&legacy));
        assert_eq!(decode_fingerprints(&legacy, Subject::page(1)).unwrap(), fp);
        let binary = encode_fingerprints(&fp).unwrap();
        assert_eq!(decode_fingerprints(&binary, Subject::page(1)).unwrap(), fp);
        let err = decode_fingerprints(&binary[..binary.len() - 3], Subject::page(1)).unwrap_err();
        assert!(err.to_string().contains("fingerprints of page:1"), "{err}");
    }

    #[test]
    fn damaged_blobs_are_errors_not_panics() {
        let blob = encode(&sample()).unwrap();
        for cut in [0, 3, 5, 7, 20, blob.len() / 2, blob.len() - 1] {
            assert!(decode(&blob[..cut]).is_err(), "cut at {cut}");
        }
        let mut longer = blob.clone();
        longer.push(0);
        assert!(decode(&longer).unwrap_err().contains("after the end"));
        let mut newer = blob.clone();
        newer[4] = VERSION + 1;
        assert!(decode(&newer).unwrap_err().contains("version"));
        // A huge list length is refused before anything is allocated.
        let mut huge = blob;
        let dna_len_at = 5 + 2 + sample().params_tag.len() + 28;
        huge[dna_len_at..dna_len_at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(decode(&huge).unwrap_err().contains("longer than"));
    }
}
