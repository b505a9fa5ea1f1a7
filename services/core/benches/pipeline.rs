//! Throughput of each pipeline stage and of the whole pipeline on real novel text.
//!
//! Reads chapters from the test corpus (`ZHIWEN_CORPUS_DIR`, default
//! the test corpus, `.test-corpus/`); falls back to the bundled sample.
//! Run: `cargo bench -p zhiwen-core --bench pipeline`. Results: docs/benchmarks.md.

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use zhiwen_core::canon::{self, InputFormat};
use zhiwen_core::initials::{initial_letters, InitialStream};
use zhiwen_core::minhash::{self, MinHasher};
use zhiwen_core::params::Params;
use zhiwen_core::{dna, segment, shingle, simhash, winnow, Fingerprinter};

mod common;
use common::novel_text;

fn stages(c: &mut Criterion) {
    let text = novel_text();
    let bytes = text.as_bytes();
    let params = Params::default();
    segment::warm_up();
    let fp = Fingerprinter::new(params.clone()).expect("default params");
    let analysis = fp.analyze_text(&text, InputFormat::Text).expect("analysable");
    let canonical = analysis.canonical.text().to_owned();
    let tokens = segment::segment(&canonical, &params.segment);
    let letters = analysis.initials.letters.clone();
    let shingles = analysis.fingerprints.shingles.clone();
    let units: Vec<u32> = letters.iter().map(|&l| l as u32).collect();
    let hasher = MinHasher::new(params.minhash.functions);

    let mut g = c.benchmark_group("pipeline");
    g.sample_size(10);
    g.throughput(Throughput::Bytes(bytes.len() as u64));
    g.bench_function("canonicalize", |b| {
        b.iter(|| canon::canonicalize(black_box(bytes), InputFormat::Text, &params.canon))
    });
    let jieba = jieba_rs::Jieba::new();
    g.bench_function("jieba cut alone (reference)", |b| b.iter(|| jieba.cut(black_box(&canonical), false).len()));
    g.bench_function("segment (jieba, once)", |b| b.iter(|| segment::segment(black_box(&canonical), &params.segment)));
    g.bench_function("initial letters", |b| b.iter(|| initial_letters(black_box(&canonical))));
    g.bench_function("initial stream with positions", |b| b.iter(|| InitialStream::of(black_box(&canonical))));
    g.bench_function("dna", |b| {
        b.iter(|| dna::dna_fingerprint(black_box(&letters), &params.dna, dna::ReferenceFrame::builtin()))
    });
    g.bench_function("simhash", |b| b.iter(|| simhash::simhash(black_box(&tokens))));
    g.bench_function("shingles", |b| b.iter(|| shingle::shingles(black_box(&tokens), params.shingle.width)));
    g.bench_function("minhash + super/mega + lsh", |b| {
        b.iter(|| {
            let sig = hasher.signature(black_box(&shingles));
            let supers = minhash::super_shingles(&sig, params.minhash.super_shingles);
            (minhash::mega_shingles(&supers), minhash::lsh_bands(&sig, params.minhash.bands, params.minhash.rows))
        })
    });
    g.bench_function("winnow initials", |b| {
        b.iter(|| winnow::winnow(black_box(&units), params.winnow.initials_k, params.winnow.initials_window))
    });
    g.bench_function("full pipeline", |b| b.iter(|| fp.analyze_bytes(black_box(bytes), InputFormat::Text, None)));
    g.finish();

    // Pages of typical size (5-10 KB) through the whole pipeline.
    let page: String = text.chars().take(2500).collect();
    let mut g = c.benchmark_group("page");
    g.throughput(Throughput::Bytes(page.len() as u64));
    g.bench_function("full pipeline, 7 KB page", |b| {
        b.iter(|| fp.analyze_bytes(black_box(page.as_bytes()), InputFormat::Text, None))
    });
    g.finish();
}

criterion_group!(benches, stages);
criterion_main!(benches);
