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
