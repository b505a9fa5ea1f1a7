//! The core's integration tests, in one test binary (one link instead of six): the
//! canonicalisation (`canon/`), the comparison and its verdicts (`compare`,
//! `excerpt_decision`, `formulaic`), the DNA fingerprint (`dna`) and the pinned digests of
//! everything the pipeline returns (`golden`). Run one part with its module path, e.g.
//! `cargo test -p zhiwen-core --test core golden::`.

mod canon;
mod compare;
mod dna;
mod excerpt_decision;
mod formulaic;
mod golden;
mod support;
