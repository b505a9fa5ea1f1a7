//! Crash safety of `zhiwen match`, proven on the real binary: the matching task is killed
//! (SIGKILL, and the process abort of `ZHIWEN_MATCH_ABORT_AFTER_PAGES`) at several points,
//! restarted each time, and must end with exactly the matches of an uninterrupted run in
//! a fresh data directory: same (section, page) pairs, same kinds, same scores and
//! evidence; nothing lost, nothing twice.

mod common;
use common::*;

#[test]
fn killed_match_tasks_resume_to_exactly_the_uninterrupted_matches() {
    let root = tempfile::tempdir().expect("tempdir");
    let (works, pages) = write_inputs(root.path());

    let reference = prepared(root.path(), "reference", &works, &pages);
    let out = run_ok({
        let mut c = zhiwen(&reference);
        c.arg("match");
        c
    });
    assert!(out.contains("Succeeded"), "{out}");
    let expected = match_set(&reference);
    // The copies are found (12 novel chapters + 3 news stories), the innocent pages are not.
    assert!(expected.len() >= 15, "{} matches: {:?}", expected.len(), expected.keys().collect::<Vec<_>>());
    assert!(expected.keys().all(|(_, _, url)| {
        let n: usize =
            url.rsplit('/').next().and_then(|f| f.strip_suffix(".html")).and_then(|s| s.parse().ok()).unwrap_or(0);
        n <= 12 || (25..=27).contains(&n)
    }));

    let crashed = prepared(root.path(), "crashed", &works, &pages);
    // 1. SIGKILL while the works are being indexed.
    assert!(match_killed_after(&crashed, "work indexed", 3), "killed in the works phase");
    // 2.-3. Process aborts after a few pages, mid-batch and past a checkpoint.
    match_aborted_after(&crashed, 3);
    match_aborted_after(&crashed, 6);
    // 4. SIGKILL right after a match was recorded.
    assert!(match_killed_after(&crashed, "matcher: match ", 2), "killed after a recorded match");
    let partial = match_set(&crashed);
    assert!(partial.len() < expected.len(), "the kills left the task unfinished ({} matches)", partial.len());
    // 5. The restart finishes the task.
    let out = run_ok({
        let mut c = zhiwen(&crashed);
        c.arg("match");
        c
    });
    assert!(out.contains("Succeeded"), "{out}");
    let got = match_set(&crashed);
    assert_eq!(got.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>(), "same (section, page) pairs");
    for (key, value) in &expected {
        assert_eq!(&got[key], value, "{key:?}: same kind, scores and evidence");
    }
    // Nothing is left running, and a further run changes nothing.
    let out = run_ok({
        let mut c = zhiwen(&crashed);
        c.args(["match", "--all"]);
        c
    });
    assert!(out.contains("0 new"), "{out}");
    assert_eq!(match_set(&crashed).len(), expected.len());
}
