//! Lays out jieba's IDF table (`data/jieba_idf.txt.gz`) at compile time, as the lookup
//! table `segment.rs` probes in place: no decompression, parsing or hashing of 280,000
//! words at the start of every process (0.15-0.2 s of CPU in a release build, several
//! seconds in a test build), and no copy of the table on the heap.
//!
//! Written by hand rather than with a perfect-hash crate (`phf`): the keys are already
//! 64-bit hashes of the words (`xxh3_64`, the hash every token computes anyway), so an
//! open-addressed table indexed by their top bits is all a lookup needs, and a probe
//! compares one integer instead of hashing and comparing the word again.
//!
//! Output, in `OUT_DIR`:
//! - `idf_table.bin`: `1 << IDF_SLOTS_LOG2` slots of 12 bytes, each the word's hash (u64,
//!   little-endian; 0 for an empty slot) and its IDF (f32, little-endian). A word's slot
//!   is the first of `hash >> (64 - IDF_SLOTS_LOG2)`, then the next ones, wrapping, that
//!   holds its hash or is empty (linear probing).
//! - `idf_table.rs`: the constants (`IDF_SLOTS_LOG2`, `IDF_WORDS`, `IDF_MEDIAN_BITS`).
//!
//! And the normaliser's tables of the BMP (`src/canon/char_classes.rs`, included here by
//! path, so that the rules are written once): `canon_class.bin`, the class of each of the
//! 65,536 characters (one byte), and `canon_map.bin`, the character each one maps to
//! (`u32`, little-endian; 0 for none).

use std::io::Read;
use std::path::PathBuf;

#[allow(dead_code)]
#[path = "src/canon/char_classes.rs"]
mod char_classes;

const SOURCE: &str = "data/jieba_idf.txt.gz";
/// 2^19 slots for ~280,000 words: about half full, so a probe reads one or two slots.
const SLOTS_LOG2: u32 = 19;
const SLOT_BYTES: usize = 12;

fn main() {
    println!("cargo:rerun-if-changed={SOURCE}");
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=src/canon/char_classes.rs");
    write_char_tables();
    let compressed = std::fs::read(SOURCE).unwrap_or_else(|e| panic!("reading {SOURCE}: {e}"));
    let mut text = String::new();
    flate2::read::GzDecoder::new(&compressed[..])
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("decompressing {SOURCE}: {e}"));

    // Later lines win, as a map filled in order would have it; the median is that of
    // every value read (the weight of a word the table does not know).
    let mut entries: Vec<(u64, f32)> = Vec::with_capacity(300_000);
    let mut values: Vec<f32> = Vec::with_capacity(300_000);
    for line in text.lines() {
        let mut parts = line.split_whitespace();
        if let (Some(word), Some(value)) = (parts.next(), parts.next()) {
            if let Ok(v) = value.parse::<f32>() {
                let hash = xxhash_rust::xxh3::xxh3_64(word.as_bytes());
                assert_ne!(hash, 0, "{SOURCE}: the word {word:?} hashes to 0, the empty slot's mark");
                entries.push((hash, v));
                values.push(v);
            }
        }
    }
    assert!(entries.len() > 200_000, "{SOURCE}: only {} words read", entries.len());
    values.sort_by(|a, b| a.total_cmp(b));
    let median = values[values.len() / 2];

    let slots = 1usize << SLOTS_LOG2;
    assert!(entries.len() * 10 < slots * 7, "{SOURCE}: {} words overfill {slots} slots", entries.len());
    let mut keys = vec![0u64; slots];
    let mut weights = vec![median; slots];
    let mut words = 0usize;
    for (hash, v) in entries {
        let mut i = (hash >> (64 - SLOTS_LOG2)) as usize;
        while keys[i] != 0 && keys[i] != hash {
            i = (i + 1) & (slots - 1);
        }
        if keys[i] == 0 {
            words += 1;
        }
        keys[i] = hash;
        weights[i] = v;
    }
    let mut table = Vec::with_capacity(slots * SLOT_BYTES);
    for (k, w) in keys.iter().zip(&weights) {
        table.extend_from_slice(&k.to_le_bytes());
        table.extend_from_slice(&w.to_le_bytes());
    }

    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(out.join("idf_table.bin"), &table).expect("writing idf_table.bin");
    let constants = format!(
        "/// log2 of the number of slots of the IDF table.\n\
         const IDF_SLOTS_LOG2: u32 = {SLOTS_LOG2};\n\
         /// Distinct words (hashes) in the IDF table.\n\
         #[allow(dead_code)]\n\
         const IDF_WORDS: usize = {words};\n\
         /// The median IDF of the table, as `f32::to_bits`.\n\
         const IDF_MEDIAN_BITS: u32 = {:#010x};\n",
        median.to_bits()
    );
    std::fs::write(out.join("idf_table.rs"), constants).expect("writing idf_table.rs");
}

/// The normaliser's tables of the BMP, as `src/canon/normalize.rs` reads them.
fn write_char_tables() {
    let (class, map) = char_classes::bmp_tables();
    assert_eq!((class.len(), map.len()), (0x1_0000, 0x1_0000), "one entry per BMP character");
    let map: Vec<u8> = map.iter().flat_map(|&c| u32::from(c).to_le_bytes()).collect();
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for (name, bytes) in [("canon_class.bin", &class), ("canon_map.bin", &map)] {
        std::fs::write(out.join(name), bytes).unwrap_or_else(|e| panic!("writing {name}: {e}"));
    }
}
