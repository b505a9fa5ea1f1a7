//! `zhiwen fingerprint FILE [--json]`: every fingerprint of one document.

use std::io::Write;

use anyhow::Result;
use serde::Serialize;
use zhiwen_core::{simhash, Fingerprints};

use crate::cli::FingerprintArgs;
use crate::input;

#[derive(Serialize)]
struct Output<'a> {
    file: String,
    charset: &'a str,
    format: zhiwen_core::canon::InputFormat,
    title: Option<&'a str>,
    params_tag: &'a str,
    simhash_hex: String,
    simhash_block_keys: [u64; 4],
    simhash_two_block_keys: [u64; 10],
    fingerprints: &'a Fingerprints,
}

pub fn run(args: &FingerprintArgs) -> Result<()> {
    let fp = input::fingerprinter(&args.pipeline)?;
    let analysis = input::analyze_file(&fp, &args.file, &args.pipeline)?;
    let f = &analysis.fingerprints;
    let out = Output {
        file: args.file.display().to_string(),
        charset: analysis.canonical.charset(),
        format: analysis.canonical.format(),
        title: analysis.canonical.title(),
        params_tag: &f.params_tag,
        simhash_hex: format!("{:016x}", f.simhash),
        simhash_block_keys: simhash::block_keys_4x16(f.simhash),
        simhash_two_block_keys: simhash::block_keys_5x2(f.simhash),
        fingerprints: f,
    };
    let mut stdout = std::io::stdout().lock();
    if args.json {
        serde_json::to_writer_pretty(&mut stdout, &out)?;
        writeln!(stdout)?;
    } else {
        print_human(&mut stdout, &out, fp.params().dna.radix)?;
    }
    Ok(())
}

fn print_human(w: &mut impl Write, o: &Output<'_>, radix: u8) -> Result<()> {
    let f = o.fingerprints;
    let hex = |v: &[u64], n: usize| {
        let shown: Vec<String> = v.iter().take(n).map(|x| format!("{x:016x}")).collect();
        let more = if v.len() > n { format!(" … (+{})", v.len() - n) } else { String::new() };
        format!("{}{more}", shown.join(" "))
    };
    writeln!(w, "file            {}", o.file)?;
    writeln!(w, "charset         {}   format {:?}", o.charset, o.format)?;
    if let Some(t) = o.title {
        writeln!(w, "title           {t}")?;
    }
    writeln!(w, "params          {}", o.params_tag)?;
    writeln!(w, "characters      {} canonical, {} Han, {} content words", f.char_count, f.han_count, f.token_count)?;
    writeln!(w, "content hash    {:016x}", f.content_hash)?;
    writeln!(w, "simhash         {}  blocks {}", o.simhash_hex, hex(&o.simhash_block_keys, 4))?;
    let dna: Vec<String> = f
        .dna
        .iter()
        .take(6)
        .map(|s| {
            format!(
                "[{}..{}) {}",
                s.start,
                s.end,
                zhiwen_core::dna::render_code(s.code, radix).unwrap_or_else(|| format!("{:x}", s.code))
            )
        })
        .collect();
    writeln!(w, "dna segments    {}  {}", f.dna.len(), dna.join("  "))?;
    writeln!(w, "shingles        {}  {}", f.shingles.len(), hex(&f.shingles, 3))?;
    writeln!(w, "minhash         {}  {}", f.minhash.len(), hex(&f.minhash, 3))?;
    writeln!(w, "super-shingles  {}", hex(&f.super_shingles, 6))?;
    writeln!(w, "mega-shingles   {}  {}", f.mega_shingles.len(), hex(&f.mega_shingles, 3))?;
    writeln!(w, "lsh bands       {}  {}", f.lsh_bands.len(), hex(&f.lsh_bands, 3))?;
    writeln!(w, "winnow initials {} fingerprints", f.winnow_initials.len())?;
    writeln!(w, "winnow chars    {} fingerprints", f.winnow_chars.len())?;
    writeln!(w, "(--json prints every value)")?;
    Ok(())
}
