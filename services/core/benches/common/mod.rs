//! Benchmark input shared by the pipeline bench and the `pipeline_cpu` example.

use std::path::PathBuf;

/// About 1 MB of UTF-8 novel text (classic chapters joined by blank lines).
pub fn novel_text() -> String {
    let dir = std::env::var_os("ZHIWEN_CORPUS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../.test-corpus"));
    let mut text = String::new();
    if let Ok(jsonl) = std::fs::read_to_string(dir.join("novels_classics.jsonl")) {
        for line in jsonl.lines() {
            if let Some(t) =
                serde_json::from_str::<serde_json::Value>(line).ok().and_then(|v| v["text"].as_str().map(str::to_owned))
            {
                text.push_str(&t);
                text.push_str("\n\n");
            }
            if text.len() >= 1 << 20 {
                break;
            }
        }
    }
    if text.is_empty() {
        let sample =
            std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../samples/hongloumeng-01.txt"))
                .expect("bundled sample");
        while text.len() < 1 << 20 {
            text.push_str(&sample);
        }
    }
    text
}
