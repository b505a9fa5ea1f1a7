//! Crash safety of `zhiwen match`, proven on the real binary: the matching task is killed
//! (SIGKILL, and the process abort of `ZHIWEN_MATCH_ABORT_AFTER_PAGES`) at several points,
//! restarted each time, and must end with exactly the matches of an uninterrupted run in
//! a fresh data directory: same (section, page) pairs, same kinds, same scores and
//! evidence; nothing lost, nothing twice.

use crate::common::*;

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

/// Works and pages from the bundled samples only: the four registered chapters, and 24
/// pages: a whole copy, a cut copy and an excerpt inside a news story of each chapter,
/// and innocent pages (unregistered chapters in parts, news stories).
fn write_sample_inputs(dir: &std::path::Path) -> (std::path::PathBuf, std::path::PathBuf) {
    let read = |name: &str| -> Vec<serde_json::Value> {
        let text = std::fs::read_to_string(repo().join("samples").join(name)).expect("bundled sample");
        text.lines().map(|l| serde_json::from_str(l).expect("JSONL")).collect()
    };
    let (works, others, news) =
        (read("works/classics.jsonl"), read("site/unregistered.jsonl"), read("site/filler.jsonl"));
    let chars = |s: &str, from: usize, len: usize| -> String { s.chars().skip(from).take(len).collect() };
    let mut pages = Vec::new();
    let mut push = |body: String| {
        let n = pages.len() + 1;
        let html = format!(
            "<html><head><title>{n}</title></head><body><div class=\"nav\">首页 排行榜 书架</div>\
             <div id=\"content\">{}</div></body></html>",
            body.lines().map(|p| format!("<p>{p}</p>")).collect::<String>()
        );
        pages.push(serde_json::json!({"url": format!("http://site{}.example/p/{n}.html", n % 3), "html": html}));
    };
    for (i, w) in works.iter().enumerate() {
        let text = field(w, "text");
        push(text.clone());
        push(chars(&text, 0, text.chars().count() * 55 / 100));
        push(format!("{}\n{}\n{}", field(&news[i], "text"), chars(&text, 1500, 1200), field(&news[i + 1], "text")));
    }
    for o in &others {
        let text = field(o, "text");
        for part in 0..3 {
            push(chars(&text, part * 1800, 1800));
        }
    }
    for n in &news {
        push(field(n, "text"));
    }
    let (works_path, pages_path) = (dir.join("sample-works.jsonl"), dir.join("sample-pages.jsonl"));
    let works_jsonl: String = works.iter().map(|w| format!("{w}\n")).collect();
    std::fs::write(&works_path, works_jsonl).expect("write works");
    std::fs::write(&pages_path, pages.iter().map(|p| format!("{p}\n")).collect::<String>()).expect("write pages");
    (works_path, pages_path)
}

/// The matching tasks of the embedded store in `data`: (state, key).
fn match_tasks(data: &std::path::Path) -> Vec<(zhiwen_store::TaskState, String)> {
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
    rt.block_on(async {
        let stores = zhiwen_store::open(&zhiwen_store::StoreConfig::embedded(data)).await.expect("store opens");
        let tasks = stores.tasks.list_tasks(None, None, 0, 100).await.expect("tasks");
        tasks.into_iter().filter(|t| t.kind == "match").map(|t| (t.state, t.key)).collect()
    })
}

/// Every killed `zhiwen match` used to leave a task behind, and the next run ran all of
/// them: a full pass per kill. Now a run resumes the interrupted task of its request and
/// queues no other: after four kills there is one task, finished by the last run, with
/// the matches of an uninterrupted run.
#[test]
fn killed_match_runs_leave_one_task_which_the_next_run_finishes() {
    let root = tempfile::tempdir().expect("tempdir");
    let (works, pages) = write_sample_inputs(root.path());

    let reference = prepared(root.path(), "reference", &works, &pages);
    let out = run_ok({
        let mut c = zhiwen(&reference);
        c.arg("match");
        c
    });
    assert!(out.contains("Succeeded"), "{out}");
    let expected = match_set(&reference);
    assert!(expected.len() >= 12, "the copies are found: {:?}", expected.keys().collect::<Vec<_>>());

    let crashed = prepared(root.path(), "crashed", &works, &pages);
    // Killed while the works are indexed, then aborted three times after some pages
    // (batches of 4: each abort leaves a checkpoint further on).
    assert!(match_killed_after(&crashed, "work indexed", 2), "killed in the works phase");
    for pages in [6, 5, 7] {
        match_aborted_after(&crashed, pages);
        let tasks = match_tasks(&crashed);
        assert_eq!(tasks.len(), 1, "one task for the repeated request: {tasks:?}");
        assert_eq!(tasks[0].0, zhiwen_store::TaskState::Running, "{tasks:?}");
    }
    let out = run_ok({
        let mut c = zhiwen(&crashed);
        c.arg("match");
        c
    });
    assert!(out.contains("Succeeded, resumed"), "{out}");
    let tasks = match_tasks(&crashed);
    assert_eq!(tasks.len(), 1, "no other pass ran: {tasks:?}");
    assert_eq!(tasks[0].0, zhiwen_store::TaskState::Succeeded);
    let got = match_set(&crashed);
    assert_eq!(got.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>(), "same (section, page) pairs");
    for (key, value) in &expected {
        assert_eq!(&got[key], value, "{key:?}: same kind, scores and evidence");
    }
}
