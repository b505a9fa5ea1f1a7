//! The pinyin-initial DNA fingerprint: invariances, the point of content-defined
//! segments, code layout, robustness, the shipped reference frame and a snapshot.

use proptest::prelude::*;
use zhiwen_core::dna::{
    dna_containment, dna_containment_with, dna_fingerprint, dna_fingerprint_digits, render_code, DnaDigits, DnaMatch,
    DnaSegment, ReferenceFrame, DIGIT_LETTERS,
};
use zhiwen_core::hash::mix64;
use zhiwen_core::initials::{initial_letters, INITIAL_LETTERS};
use zhiwen_core::params::{DnaParams, DnaSegmentation};

const SEGMENTATIONS: [DnaSegmentation; 2] = [DnaSegmentation::Fixed, DnaSegmentation::ContentDefined];

/// Opening of 三国演义 (public domain), simplified.
const SANGUO: &str = "话说天下大势，分久必合，合久必分。周末七国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。\
汉朝自高祖斩白蛇而起义，一统天下，后来光武中兴，传至献帝，遂分为三国。推其致乱之由，殆始于桓、灵二帝。\
桓帝禁锢善类，崇信宦官。及桓帝崩，灵帝即位，大将军窦武、太傅陈蕃共相辅佐。时有宦官曹节等弄权，窦武、陈蕃谋诛之，\
机事不密，反为所害，中涓自此愈横。";

/// The same passage in traditional script, written by hand.
const SANGUO_TRADITIONAL: &str =
    "話說天下大勢，分久必合，合久必分。周末七國分爭，併入於秦。及秦滅之後，楚、漢分爭，又併入於漢。\
漢朝自高祖斬白蛇而起義，一統天下，後來光武中興，傳至獻帝，遂分為三國。推其致亂之由，殆始於桓、靈二帝。\
桓帝禁錮善類，崇信宦官。及桓帝崩，靈帝即位，大將軍竇武、太傅陳蕃共相輔佐。時有宦官曹節等弄權，竇武、陳蕃謀誅之，\
機事不密，反為所害，中涓自此愈橫。";

/// The same passage with homophones substituted (天夏, 分酒, 必和, 期国, 汗朝, 高组, 起意, 光舞,
/// 宦观, 弄全, 谋猪), as pirate sites do to dodge exact matching.
const SANGUO_HOMOPHONES: &str =
    "话说天夏大势，分酒必和，合久必分。周末期国分争，并入于秦。及秦灭之后，楚、汉分争，又并入于汉。\
汗朝自高组斩白蛇而起意，一统天下，后来光舞中兴，传至献帝，遂分为三国。推其致乱之由，殆始于桓、灵二帝。\
桓帝禁锢善类，崇信宦观。及桓帝崩，灵帝即位，大将军窦武、太傅陈蕃共相辅佐。时有宦官曹节等弄全，窦武、陈蕃谋猪之，\
机事不密，反为所害，中涓自此愈横。";

fn params(segmentation: DnaSegmentation, granularity: usize, radix: u8) -> DnaParams {
    DnaParams { granularity, radix, segmentation, ..DnaParams::default() }
}

/// A deterministic pseudo-text: letters drawn with the shipped frame's probabilities.
fn letters(len: usize, seed: u64) -> Vec<u8> {
    let frame = ReferenceFrame::builtin();
    (0..len as u64)
        .map(|i| {
            let u =
                (mix64(i.wrapping_add(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15))) >> 11) as f64 / (1u64 << 53) as f64;
            let mut acc = 0.0;
            for (l, p) in INITIAL_LETTERS.iter().zip(&frame.probabilities) {
                acc += p;
                if u < acc {
                    return *l;
                }
            }
            b'z'
        })
        .collect()
}

/// Random insertions, deletions and replacements of `rate` of the letters.
fn edit(stream: &[u8], rate: f64, seed: u64) -> Vec<u8> {
    let mut out = stream.to_vec();
    let ops = (stream.len() as f64 * rate) as usize;
    let filler = letters(ops, seed ^ 0xabcd);
    for (k, &fill) in filler.iter().enumerate() {
        let r = mix64(seed.wrapping_add(k as u64));
        let at = (r >> 8) as usize % (out.len() + 1);
        match r % 3 {
            0 => out.insert(at, fill),
            1 if at < out.len() => {
                out.remove(at);
            }
            _ if at < out.len() => out[at] = fill,
            _ => {}
        }
    }
    out
}

#[test]
fn identical_streams_contain_each_other_fully() {
    let frame = ReferenceFrame::builtin();
    let stream = letters(5_000, 1);
    for segmentation in SEGMENTATIONS {
        for radix in [2, 4, 8, 10] {
            let p = params(segmentation, 64, radix);
            let a = dna_fingerprint(&stream, &p, frame);
            let b = dna_fingerprint(&stream, &p, frame);
            assert!(!a.is_empty());
            assert_eq!(a, b);
            assert_eq!(dna_containment(&a, &b), 1.0);
            assert_eq!(dna_containment_with(&a, &b, DnaMatch::Near { radix }), 1.0);
        }
    }
    assert_eq!(dna_containment(&[], &[]), 0.0);
}

#[test]
fn traditional_script_and_homophones_give_the_same_fingerprint() {
    let simplified = initial_letters(SANGUO);
    assert_eq!(initial_letters(SANGUO_TRADITIONAL), simplified);
    assert_eq!(initial_letters(SANGUO_HOMOPHONES), simplified);
    let frame = ReferenceFrame::builtin();
    for segmentation in SEGMENTATIONS {
        let p = params(segmentation, 24, 4);
        let original = dna_fingerprint(&simplified, &p, frame);
        assert!(original.len() >= 4, "{segmentation:?}: {} segments", original.len());
        assert_eq!(dna_fingerprint(&initial_letters(SANGUO_TRADITIONAL), &p, frame), original);
        assert_eq!(dna_fingerprint(&initial_letters(SANGUO_HOMOPHONES), &p, frame), original);
    }
}

#[test]
fn light_random_edits_keep_containment_far_above_unrelated_text() {
    let frame = ReferenceFrame::builtin();
    let p = DnaParams::default();
    let original = dna_fingerprint(&letters(40_000, 2), &p, frame);
    let unrelated: Vec<f64> =
        (10..20).map(|seed| dna_containment(&dna_fingerprint(&letters(40_000, seed), &p, frame), &original)).collect();
    let worst_unrelated = unrelated.iter().copied().fold(0.0, f64::max);
    for (rate, floor) in [(0.01, 0.30), (0.05, 0.02)] {
        let copy = dna_fingerprint(&edit(&letters(40_000, 2), rate, 3), &p, frame);
        let exact = dna_containment(&copy, &original);
        let near = dna_containment_with(&copy, &original, DnaMatch::Near { radix: p.radix });
        assert!(exact > floor, "{rate}: exact {exact}");
        assert!(near >= exact, "{rate}: near {near} < exact {exact}");
        assert!(exact > 5.0 * worst_unrelated, "{rate}: {exact} vs unrelated {worst_unrelated}");
    }
}

#[test]
fn content_defined_segments_survive_an_insertion_at_the_start_fixed_ones_do_not() {
    let frame = ReferenceFrame::builtin();
    let original = letters(6_000, 4);
    let mut shifted = b"zhiwen".to_vec();
    shifted.push(b'x');
    shifted.extend_from_slice(&original);
    for radix in [2, 4, 8, 10] {
        let cdc = params(DnaSegmentation::ContentDefined, 64, radix);
        let a = dna_fingerprint(&original, &cdc, frame);
        let b = dna_fingerprint(&shifted, &cdc, frame);
        let kept = dna_containment(&b, &a);
        assert!(kept > 0.95, "radix {radix}: content-defined kept {kept}");
        // Boundaries resynchronise at once: at most the first two segments of the copy
        // start at a letter where no segment of the original starts (shifted by 7).
        let starts: std::collections::HashSet<u32> = a.iter().map(|s| s.start + 7).collect();
        let moved = b.iter().filter(|s| !starts.contains(&s.start)).count();
        assert!(moved <= 2, "radix {radix}: {moved} segments moved");

        let fixed = params(DnaSegmentation::Fixed, 64, radix);
        let a = dna_fingerprint(&original, &fixed, frame);
        let b = dna_fingerprint(&shifted, &fixed, frame);
        let kept = dna_containment(&b, &a);
        let ceiling = if radix == 2 { 0.5 } else { 0.2 };
        assert!(kept < ceiling, "radix {radix}: fixed kept {kept}");
    }
}

#[test]
fn codes_fit_their_radix_and_coarser_radixes_are_coarsenings() {
    let frame = ReferenceFrame::builtin();
    let stream = letters(3_000, 5);
    let digits_of =
        |radix: u8| dna_fingerprint_digits(&stream, &params(DnaSegmentation::ContentDefined, 64, radix), frame);
    let (r2, r4, r8, r10) = (digits_of(2), digits_of(4), digits_of(8), digits_of(10));
    assert_eq!(r2.len(), r10.len());
    for (radix, fp, bits) in [(2u8, &r2, 20u32), (4, &r4, 40), (8, &r8, 60)] {
        for (segment, digits) in fp.iter() {
            assert!(segment.code < 1u64 << bits);
            assert!(digits.0.iter().all(|&d| d < radix));
            assert_eq!(segment.code, digits.pack(radix));
            assert_eq!(DnaDigits::unpack(segment.code, radix), Some(*digits));
            assert_eq!(render_code(segment.code, radix), Some(digits.to_string()));
        }
    }
    for (segment, digits) in &r10 {
        assert!(digits.0.iter().all(|&d| d < 10));
        assert_eq!(segment.code, digits.pack(10));
        assert_eq!(render_code(segment.code, 10), None);
    }
    // The cut points of radix 2 (the mean) are among those of 4, 8 and 10; those of 4
    // are among those of 8: each coarser digit is a function of the finer one.
    for i in 0..r2.len() {
        for j in 0..DIGIT_LETTERS.len() {
            let (d2, d4, d8, d10) = (r2[i].1 .0[j], r4[i].1 .0[j], r8[i].1 .0[j], r10[i].1 .0[j]);
            assert_eq!(d2, u8::from(d4 >= 2));
            assert_eq!(d4, d8 / 2);
            assert_eq!(d2, u8::from(d10 >= 5));
        }
    }
    // Finer radixes tell more segments apart.
    let distinct =
        |fp: &[(DnaSegment, DnaDigits)]| fp.iter().map(|s| s.0.code).collect::<std::collections::HashSet<_>>().len();
    assert!(distinct(&r2) <= distinct(&r4) && distinct(&r4) <= distinct(&r8));
}

#[test]
fn digit_values_are_spread_over_the_radix() {
    // On text drawn from the frame, every digit value occurs and none dominates.
    let frame = ReferenceFrame::builtin();
    let stream = letters(100_000, 6);
    for radix in [2u8, 4, 8, 10] {
        let fp = dna_fingerprint_digits(&stream, &params(DnaSegmentation::Fixed, 128, radix), frame);
        let mut histogram = vec![0usize; usize::from(radix)];
        for (_, digits) in &fp {
            for &d in &digits.0 {
                histogram[usize::from(d)] += 1;
            }
        }
        let total: usize = histogram.iter().sum();
        let largest = *histogram.iter().max().unwrap_or(&0) as f64 / total as f64;
        assert!(histogram.iter().all(|&h| h > 0), "radix {radix}: {histogram:?}");
        assert!(largest < 2.5 / f64::from(radix), "radix {radix}: {histogram:?}");
    }
}

#[test]
fn the_shipped_frame_parses_and_sums_to_one() {
    let frame = ReferenceFrame::builtin();
    let sum: f64 = frame.probabilities.iter().sum();
    assert!((sum - 1.0).abs() < 1e-6, "sum {sum}");
    assert!(frame.probabilities.iter().all(|&p| p > 0.0 && p < 0.2));
    assert_ne!(frame, &ReferenceFrame::uniform(), "the shipped file failed to parse");
    // Zero initials are rare, z/y/s/d/j are the most common initials of Chinese text.
    assert!(frame.probability(b'o') < 0.01 && frame.probability(b'z') > 0.05);
    let reparsed = ReferenceFrame::parse(&frame.to_data_file("round trip")).expect("round trip");
    assert_eq!(&reparsed, frame);
    // The frame measured on a real passage is close to the shipped one for frequent letters.
    let local = ReferenceFrame::measure_texts([SANGUO]);
    assert!((local.probability(b'z') - frame.probability(b'z')).abs() < 0.1);
}

#[test]
fn snapshot_of_a_fixed_input() {
    // Catches any silent change of the algorithm, the frame or the defaults: if this
    // fails on purpose, bump ALGORITHM_VERSION and update the snapshot.
    let stream = initial_letters(&SANGUO.repeat(3));
    let rendered: Vec<String> = dna_fingerprint_digits(&stream, &DnaParams::default(), ReferenceFrame::builtin())
        .iter()
        .map(|(s, d)| format!("{}..{} {} {:x}", s.start, s.end, d, s.code))
        .collect();
    let expected = [
        "0..224 32032300010031021003 e3b010d243",
        "82..366 23132310010020022002 b7b4108282",
        "224..426 23232330020010013002 bbbc2041c2",
    ];
    assert_eq!(rendered, expected);
}

proptest! {
    #[test]
    fn never_panics_and_segments_lie_within_the_stream(
        stream in prop::collection::vec(prop_oneof![
            3 => prop::sample::select(INITIAL_LETTERS.to_vec()),
            1 => any::<u8>(),
        ], 0..600),
        granularity in 0usize..300,
        overlap in -0.5f64..1.5,
        radix in any::<u8>(),
        content_defined in any::<bool>(),
    ) {
        let segmentation = if content_defined { DnaSegmentation::ContentDefined } else { DnaSegmentation::Fixed };
        let p = DnaParams { granularity, overlap, radix, segmentation };
        let fp = dna_fingerprint(&stream, &p, ReferenceFrame::builtin());
        let len = stream.len() as u32;
        for s in &fp {
            prop_assert!(s.start < s.end && s.end <= len, "{s:?} in {len}");
        }
        for w in fp.windows(2) {
            prop_assert!(w[0].start <= w[1].start && w[0].end <= w[1].end);
        }
        let other = dna_fingerprint(&stream[stream.len() / 3..], &p, ReferenceFrame::builtin());
        for mode in [DnaMatch::Exact, DnaMatch::Near { radix }] {
            let c = dna_containment_with(&other, &fp, mode);
            prop_assert!((0.0..=1.0).contains(&c));
        }
    }

    #[test]
    fn any_frame_data_is_refused_or_parsed_without_panic(data in ".{0,400}") {
        let _ = ReferenceFrame::parse(&data);
    }
}
