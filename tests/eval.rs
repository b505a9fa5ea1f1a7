//! `zhiwen eval` in both directions: a work registered after its copies were crawled
//! is matched against the stored pages (whose winnowed keys the page namespace keeps
//! only 1 in 8 of, by default) and must find what the daily task finds.

use crate::common::{run_ok, zhiwen};

fn eval(direction: &str, dir: &std::path::Path) -> serde_json::Value {
    let out = dir.join(format!("{direction}.json"));
    // The defaults: an empty settings file.
    std::fs::write(dir.join("data.toml"), "").expect("settings file");
    let mut c = zhiwen(&dir.join("data"));
    c.args([
        "eval",
        "--size",
        "tiny",
        "--seed",
        "3",
        "--direction",
        direction,
        "--out",
        out.to_str().expect("UTF-8 path"),
    ]);
    let stdout = run_ok(c);
    assert!(stdout.contains("| overall | value |"), "no report table: {stdout}");
    let text = std::fs::read_to_string(&out).expect("the JSON report");
    serde_json::from_str(&text).expect("JSON report")
}

#[test]
fn the_reverse_direction_finds_what_the_daily_task_finds() {
    let dir = tempfile::tempdir().expect("temp dir");
    let forward = eval("forward", dir.path());
    let reverse = eval("reverse", dir.path());
    let overall = |r: &serde_json::Value, k: &str| r["metrics"]["overall"][k].clone();
    assert!(reverse["detector"].as_str().is_some_and(|d| d.contains("reverse")), "{}", reverse["detector"]);
    let positives = overall(&reverse, "positive_pages").as_u64().expect("positive pages");
    assert!(positives >= 20, "only {positives} positive pages in the tiny set");
    // The same copies found, all attributed to the right section, no innocent page.
    assert_eq!(overall(&reverse, "found"), overall(&forward, "found"));
    assert!(
        overall(&reverse, "found").as_u64().expect("found") * 10 >= positives * 9,
        "reverse found {} of {positives}",
        overall(&reverse, "found")
    );
    assert_eq!(overall(&reverse, "correct"), overall(&reverse, "detections"));
    assert_eq!(overall(&reverse, "false_positive_pages"), 0);
}

/// `zhiwen eval --write-set` writes the labelled set in the importers' formats (what
/// `scripts/bench-vs-peer.sh` runs): imported and matched as a user does, every labelled
/// copy is found on its URL and no innocent page is accused.
#[test]
fn the_written_set_imports_and_matches_as_labelled() {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(dir.path().join("data.toml"), "").expect("settings file");
    let set = dir.path().join("set");
    let mut c = zhiwen(&dir.path().join("data"));
    c.args(["eval", "--size", "tiny", "--seed", "3", "--write-set", set.to_str().expect("UTF-8 path")]);
    run_ok(c);
    let labels: Vec<serde_json::Value> = std::fs::read_to_string(set.join("labels.jsonl"))
        .expect("labels")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a label line"))
        .collect();
    let data = dir.path().join("data");
    let path = |name: &str| set.join(name).to_str().expect("UTF-8 path").to_owned();
    let mut c = zhiwen(&data);
    c.args(["import", "works", "--owner", "bench", &path("works.jsonl")]);
    run_ok(c);
    let mut c = zhiwen(&data);
    c.args(["import", "pages", &path("pages.warc")]);
    run_ok(c);
    let mut c = zhiwen(&data);
    c.args(["match", "--all", "--no-capture"]);
    run_ok(c);
    let out = dir.path().join("matches.jsonl");
    let mut c = zhiwen(&data);
    c.args(["report", "export", "--format", "json", "--out", out.to_str().expect("UTF-8 path")]);
    run_ok(c);
    let matched: std::collections::BTreeSet<String> = std::fs::read_to_string(&out)
        .expect("the export")
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).expect("a match line")["url"].as_str().unwrap_or("").to_owned()
        })
        .collect();
    let (copies, innocent): (Vec<_>, Vec<_>) = labels.iter().partition(|p| !p["label"].is_null());
    assert!(copies.len() >= 20 && !innocent.is_empty(), "{} copies, {} innocent pages", copies.len(), innocent.len());
    let url = |p: &serde_json::Value| p["url"].as_str().expect("a URL").to_owned();
    let found = copies.iter().filter(|p| matched.contains(&url(p))).count();
    assert!(found * 10 >= copies.len() * 9, "found {found} of {} copies", copies.len());
    let accused: Vec<String> = innocent.iter().map(|p| url(p)).filter(|u| matched.contains(u)).collect();
    assert!(accused.is_empty(), "innocent pages accused: {accused:?}");
}
