//! The pure fingerprint core of zhiwen.
//!
//! It owns everything that turns bytes into comparable fingerprints and compares them:
//! charset detection and canonicalisation with an offset map back to the original
//! ([`canon`], whose HTML lexer is the workspace's only one: it also gives the start
//! tags of a page with their attributes, [`canon::start_tags`], and decodes character
//! references, [`canon::decode_char_refs`], for ingest's links, saved-page URLs and
//! EPUB package files), one jieba segmentation per document ([`segment`]), the pinyin-initial
//! stream and the DNA fingerprint ([`initials`], [`dna`]), simhash ([`simhash`]),
//! shingles and their samples ([`shingle`]), MinHash with super-/mega-shingles and LSH
//! bands ([`minhash`]), winnowing and passage evidence ([`winnow`]), and the pairwise
//! comparison with its verdict ([`compare`]). [`Fingerprinter`] runs the whole pipeline.
//!
//! It must not touch I/O: no files, no network, no database, no async runtime, no
//! global mutable state beyond lazily built read-only tables. Everything above it
//! (stores, index, matcher, API) depends on it; it depends on none of them, so the
//! algorithms stay testable and benchmarkable on their own.
#![deny(missing_docs)]

pub mod canon;
pub mod compare;
pub mod dna;
mod error;
mod fingerprinter;
pub mod formulaic;
pub mod hash;
pub mod initials;
pub mod minhash;
pub mod params;
pub mod segment;
pub mod shingle;
pub mod simhash;
pub mod winnow;

pub use error::CoreError;
pub use fingerprinter::{Analysis, CharStream, Fingerprinter, Fingerprints, IndexFamily, IndexKey};
pub use params::Params;

/// Version of the algorithms themselves; part of every fingerprint's parameter tag, so
/// that a code change that alters fingerprints is detected like a parameter change.
/// Version 2: MinHash functions `a * x + b` over the shingle hashes (was a mixer of
/// `x ^ salt`), so version-1 signatures, super-/mega-shingles and LSH bands differ.
pub const ALGORITHM_VERSION: u32 = 2;
