use super::*;

/// Deterministic pseudo-random bytes (xorshift).
fn noise(len: usize, mut seed: u64) -> Vec<u8> {
    (0..len)
        .map(|_| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed >> 24) as u8
        })
        .collect()
}

fn undecodable(bytes: &[u8]) -> String {
    match canonicalize(bytes, InputFormat::Auto, &params()) {
        Err(CoreError::Undecodable { reason }) => reason,
        other => panic!("expected Undecodable, got {other:?}"),
    }
}

#[test]
fn binary_junk_is_undecodable() {
    let mut png = b"\x89PNG\r\n\x1a\n".to_vec();
    png.extend(noise(4096, 1));
    assert!(undecodable(&png).contains("PNG"));
    let mut zip = b"PK\x03\x04".to_vec();
    zip.extend(noise(1000, 2));
    assert!(undecodable(&zip).contains("ZIP"));
    assert!(undecodable(b"%PDF-1.7\n%\xE2\xE3\xCF\xD3\n1 0 obj").contains("PDF"));
    // No signature: random bytes, NUL-heavy bytes.
    assert!(undecodable(&noise(10_000, 3)).contains("control bytes"));
    let mut nul_heavy = vec![0u8; 500];
    nul_heavy.extend(b"some text between zeros");
    nul_heavy.extend(vec![0u8; 500]);
    assert!(undecodable(&nul_heavy).contains("control bytes"));
    assert!(undecodable(&[0u8; 64]).contains("control bytes"));
    // A UTF-16 BOM in front of binary.
    let mut bom_junk = b"\xFF\xFE".to_vec();
    bom_junk.extend(std::iter::repeat_n([1u8, 0], 100).flatten());
    assert!(undecodable(&bom_junk).contains("control characters"));
}

#[test]
fn empty_input() {
    assert_eq!(canonicalize(b"", InputFormat::Auto, &params()).unwrap_err(), CoreError::EmptyInput);
    assert_eq!(decode(b"", None).unwrap_err(), CoreError::EmptyInput);
}

#[test]
fn nothing_alphanumeric_is_no_text() {
    for input in [" \n\t\u{3000} ", "，。！？……——", "<p> &nbsp; </p><script>var a = 1;</script>", "\u{200B}\u{FEFF}"]
    {
        assert_eq!(
            canonicalize(input.as_bytes(), InputFormat::Auto, &params()).unwrap_err(),
            CoreError::NoText,
            "{input:?}"
        );
    }
}

#[test]
fn too_large() {
    let p = CanonParams { max_input_bytes: 10, ..CanonParams::default() };
    assert_eq!(
        canonicalize("滚滚长江东逝水".as_bytes(), InputFormat::Text, &p).unwrap_err(),
        CoreError::TooLarge { size: 21, limit: 10 }
    );
    assert!(matches!(
        canonicalize_decoded("滚滚长江东逝水".to_owned(), "UTF-8", InputFormat::Text, &p),
        Err(CoreError::TooLarge { .. })
    ));
}
