//! `zhiwen dna-frame CORPUS...`: measure the DNA reference frame (expected share of each
//! pinyin initial) from a corpus, the command that produced the shipped frame.

use std::io::{BufRead, Write};

use anyhow::{Context, Result};
use zhiwen_core::dna::ReferenceFrame;

use crate::cli::DnaFrameArgs;

pub fn run(args: &DnaFrameArgs) -> Result<()> {
    let mut counts = [0u64; 23];
    let mut documents = 0usize;
    for path in &args.corpus {
        let file = std::fs::File::open(path).with_context(|| format!("cannot open {}", path.display()))?;
        let is_jsonl = path.extension().is_some_and(|e| e == "jsonl");
        let mut add = |text: &str| {
            let c = ReferenceFrame::letter_counts_of_texts([text]);
            for (t, n) in counts.iter_mut().zip(c) {
                *t += n;
            }
            documents += 1;
        };
        if is_jsonl {
            for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
                let line = line.with_context(|| format!("{}:{}", path.display(), n + 1))?;
                if line.trim().is_empty() {
                    continue;
                }
                let v: serde_json::Value = serde_json::from_str(&line)
                    .with_context(|| format!("{}:{}: invalid JSON", path.display(), n + 1))?;
                if let Some(t) = v.get("text").and_then(|t| t.as_str()) {
                    add(t);
                }
            }
        } else {
            let text =
                std::fs::read_to_string(path).with_context(|| format!("{} is not UTF-8 text", path.display()))?;
            add(&text);
        }
    }
    let total: u64 = counts.iter().sum();
    anyhow::ensure!(total > 0, "the corpus has no Han characters");
    let frame = ReferenceFrame::from_counts(&counts);
    let names: Vec<String> =
        args.corpus.iter().filter_map(|p| p.file_name()).map(|n| n.to_string_lossy().into_owned()).collect();
    let description = format!(
        "measured by `zhiwen dna-frame` over {documents} documents ({total} Han characters) of: {}",
        names.join(", ")
    );
    let data = frame.to_data_file(&description);
    match &args.out {
        Some(out) => std::fs::write(out, &data).with_context(|| format!("cannot write {}", out.display()))?,
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(data.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(())
}
