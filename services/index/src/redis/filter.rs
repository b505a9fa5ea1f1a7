//! The section filter: a Bloom filter of the keys stored in the sections namespace, kept
//! in Redis by every writer and read whole by each process that looks up, so that a
//! lookup reads only the posting lists that may exist.
//!
//! Why: a page's lookup reads ~650 posting lists, one `HMGET` each (the keys are
//! uniform hashes, so they share no bucket), and 83% of them are empty (measured with
//! the matcher bench at 10k sections). Redis' per-command cost makes those empty reads
//! about half of its CPU per page.
//!
//! # Consistency
//!
//! The filter must hold every key whose posting list a lookup could read. Writers set a
//! key's bits *before* adding its postings, then bump the version; a process reads the
//! version *before* the bits. So a snapshot holds the bits of every write whose version
//! bump it saw. Each filtered lookup reads the version in the same pipeline as the
//! postings: a different version means some write finished since the snapshot, and the
//! lookup then also reads the keys the snapshot skipped (so it misses nothing) and marks
//! the snapshot stale; the next lookup loads a new one (at most once per
//! [`refresh_interval`]; lookups meanwhile read every key).
//!
//! Bits are never cleared (a removed document's keys stay set: a superset is still
//! correct); `clear` (the start of a rebuild) drops the filter and starts a new version.
//!
//! # Geometry
//!
//! The filter has `bits` bits in [`SHARDS`] string keys (each in its own cluster slot)
//! and two probes per key. Its size is fixed when the namespace is cleared (or first
//! written) and stored in Redis, so every writer maintains the same filter whatever its
//! own configuration; a process reads it only when its configuration asks for one.
//! With `n` keys the false-positive rate is about `(1 - e^(-2n/bits))^2`: 12 bits per
//! key give 2.4%.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// String keys of one filter.
pub(crate) const SHARDS: u32 = 64;

/// How often a stale snapshot may be replaced (lookups meanwhile read every key): once a
/// second, plus 20 ms per MB of filter, so that a process matching while the catalogue
/// is being indexed (every write makes its snapshot stale) spends at most about a
/// tenth of its time reading the filter again (~50 MB/s).
pub(crate) fn refresh_interval(mb: u32) -> Duration {
    Duration::from_millis(1_000 + 20 * u64::from(mb))
}

/// The largest filter: one shard is one Redis string, at most 512 MB.
pub(crate) const MAX_MB: u32 = 32_768;

/// Size of a filter.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Geometry {
    /// Total bits, a positive multiple of `8 * SHARDS`.
    pub bits: u64,
}

impl Geometry {
    /// `mb` megabytes of bits (0 = none; `RedisConfig` validation keeps it at most [`MAX_MB`]).
    pub fn from_mb(mb: u32) -> Option<Self> {
        (mb > 0).then(|| Geometry { bits: u64::from(mb) << 23 })
    }

    /// Read back from the stored size; `None` for anything not a valid size.
    pub fn from_bits(bits: u64) -> Option<Self> {
        let unit = 8 * u64::from(SHARDS);
        (bits > 0 && bits % unit == 0 && bits <= u64::from(MAX_MB) << 23).then_some(Geometry { bits })
    }

    fn shard_bits(self) -> u64 {
        self.bits / u64::from(SHARDS)
    }

    /// The two bits of a key, as `(shard, bit within the shard)`, from the key's 64-bit
    /// mixed hash (the one that also chooses its bucket).
    pub fn probes(self, hash: u64) -> [(u32, u64); 2] {
        // A second, independent mix: the bucket already used the hash's top bits.
        let g = super::mix(hash ^ 0xA076_1D64_78BD_642F);
        let scale = |x: u64| ((u128::from(x) * u128::from(self.bits)) >> 32) as u64;
        let per_shard = self.shard_bits();
        let (a, b) = (scale(g & 0xFFFF_FFFF), scale(g >> 32));
        [((a / per_shard) as u32, a % per_shard), ((b / per_shard) as u32, b % per_shard)]
    }
}

/// One process's copy of the filter.
pub(crate) struct Snapshot {
    /// The version read before the bits.
    pub version: i64,
    geometry: Geometry,
    /// Shard contents as `GET` returned them (Redis bit order: bit 0 is the high bit
    /// of byte 0; bits past the end are zero).
    shards: Vec<Vec<u8>>,
    /// A lookup saw another version: replace this snapshot.
    stale: AtomicBool,
}

impl Snapshot {
    pub fn new(version: i64, geometry: Geometry, shards: Vec<Vec<u8>>) -> Self {
        Snapshot { version, geometry, shards, stale: AtomicBool::new(false) }
    }

    /// Can the namespace hold the key with this mixed hash? (No false negatives.)
    pub fn may_contain(&self, hash: u64) -> bool {
        self.geometry.probes(hash).iter().all(|&(shard, bit)| {
            self.shards
                .get(shard as usize)
                .and_then(|bytes| bytes.get((bit >> 3) as usize))
                .is_some_and(|byte| byte & (0x80 >> (bit & 7)) != 0)
        })
    }

    /// Share of the bits set (a full filter skips little).
    pub fn fill(&self) -> f64 {
        let set: u64 = self.shards.iter().flatten().map(|b| u64::from(b.count_ones())).sum();
        set as f64 / self.geometry.bits as f64
    }

    pub fn is_stale(&self) -> bool {
        self.stale.load(Ordering::Relaxed)
    }

    pub fn mark_stale(&self) {
        self.stale.store(true, Ordering::Relaxed);
    }
}

/// What a process keeps of the filter between lookups.
#[derive(Default)]
pub(crate) struct Reader {
    /// The snapshot lookups use (none before the first load, or when the index has no
    /// filter).
    pub current: RwLock<Option<Arc<Snapshot>>>,
    /// Held while loading; the time of the last load attempt.
    pub loading: tokio::sync::Mutex<Option<Instant>>,
    /// The "index built without a filter" warning was logged.
    pub warned: AtomicBool,
}

impl Reader {
    /// The current snapshot when it is fresh.
    pub fn fresh(&self) -> Option<Arc<Snapshot>> {
        let current = self.current.read().unwrap_or_else(|p| p.into_inner());
        current.as_ref().filter(|s| !s.is_stale()).cloned()
    }

    pub fn replace(&self, snapshot: Option<Arc<Snapshot>>) {
        *self.current.write().unwrap_or_else(|p| p.into_inner()) = snapshot;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_round_trip_and_bad_sizes_are_refused() {
        let g = Geometry::from_mb(3).expect("3 MB");
        assert_eq!(g.bits, 3 * 8 * 1024 * 1024);
        assert_eq!(Geometry::from_bits(g.bits), Some(g));
        assert_eq!(Geometry::from_mb(0), None);
        assert_eq!(Geometry::from_bits(0), None);
        assert_eq!(Geometry::from_bits(1000), None);
    }

    #[test]
    fn probes_stay_inside_and_spread_over_every_shard() {
        let g = Geometry::from_mb(1).expect("1 MB");
        let mut seen = [false; SHARDS as usize];
        for i in 0..10_000u64 {
            for (shard, bit) in g.probes(super::super::mix(i)) {
                assert!(shard < SHARDS && bit < g.shard_bits());
                seen[shard as usize] = true;
            }
        }
        assert!(seen.iter().all(|&s| s));
    }

    #[test]
    fn set_bits_are_found_and_most_others_are_not() {
        let g = Geometry::from_mb(1).expect("1 MB");
        let mut shards = vec![Vec::new(); SHARDS as usize];
        let stored: Vec<u64> = (0..50_000u64).map(|i| super::super::mix(i * 2)).collect();
        for &h in &stored {
            for (shard, bit) in g.probes(h) {
                let bytes: &mut Vec<u8> = &mut shards[shard as usize];
                let at = (bit >> 3) as usize;
                if bytes.len() <= at {
                    bytes.resize(at + 1, 0);
                }
                bytes[at] |= 0x80 >> (bit & 7);
            }
        }
        let snap = Snapshot::new(1, g, shards);
        assert!(stored.iter().all(|&h| snap.may_contain(h)));
        // 50k keys in 8M bits: about 0.014% false positives.
        let false_hits = (0..50_000u64).filter(|&i| snap.may_contain(super::super::mix(i * 2 + 1))).count();
        assert!(false_hits < 50, "{false_hits} false positives of 50,000");
        assert!(snap.fill() > 0.005 && snap.fill() < 0.02, "{}", snap.fill());
    }
}
