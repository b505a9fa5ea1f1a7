use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use zhiwen_matcher::task::{run_match_task, NoProgress, ProgressSink, Scope, TaskControl, TaskProgress, TaskSpec};
use zhiwen_matcher::{MatcherConfig, MatcherError};
use zhiwen_store::TaskState;

use crate::support::*;

/// A fresh store holding the four chapters and the 20 pages (a third with a copy).
async fn populated(c: &std::collections::HashMap<String, (String, String)>) -> Env {
    let e = registered(c).await;
    for i in 0..20 {
        e.stores.pages.upsert_page(&numbered_page(c, i)).await.unwrap();
    }
    e
}

/// A fresh store holding the four chapters only.
async fn registered(c: &std::collections::HashMap<String, (String, String)>) -> Env {
    let e = env(config()).await;
    let sections: Vec<(String, String)> =
        (1..=4).map(|i| (format!("第{i}回"), c[&format!("novel-shuihu-{i:03}")].1.clone())).collect();
    let refs: Vec<(&str, &str)> = sections.iter().map(|(t, s)| (t.as_str(), s.as_str())).collect();
    e.stores.works.upsert_work(&work("SH", "水浒传", &refs)).await.unwrap();
    e
}

/// Page `i` of the 20 (every third a copy), fetched long before any task runs.
fn numbered_page(c: &std::collections::HashMap<String, (String, String)>, i: usize) -> zhiwen_store::NewPage {
    let text = if i.is_multiple_of(3) {
        // A copy: an excerpt of one registered chapter inside other text.
        let src = &c[&format!("novel-shuihu-{:03}", i % 4 + 1)].1;
        format!("{}{}", chars(&c[&format!("novel-xiyouji-{:03}", i + 30)].1, 0, 1500), chars(src, 500, 1200))
    } else {
        chars(&c[&format!("novel-xiyouji-{:03}", i + 30)].1, 0, 2500)
    };
    text_page(&format!("http://s{}.example/{i}", i % 3), &text)
}

fn config() -> MatcherConfig {
    MatcherConfig { batch_size: 4, concurrency: 2, ..Default::default() }
}

/// The matches of one uninterrupted task over the populated pages (the reference the
/// interrupted runs must end with).
async fn uninterrupted_matches(
    c: &std::collections::HashMap<String, (String, String)>,
) -> Vec<(i64, i64, String, u64, usize)> {
    let whole = populated(c).await;
    let s = run_match_task(&whole.matcher, TaskSpec::new(Scope::All), &TaskControl::default(), &NoProgress)
        .await
        .expect("uninterrupted");
    assert_eq!(s.state, TaskState::Succeeded);
    assert_eq!(s.pages, 20);
    let expected = all_matches(&whole.stores).await;
    assert!(expected.len() >= 5, "copies found: {expected:?}");
    expected
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resumed_after_interruptions_ends_with_the_matches_of_an_uninterrupted_run() {
    let c = classics();
    let expected = uninterrupted_matches(&c).await;

    let broken = populated(&c).await;
    for stop in [3u64, 6, 1] {
        let control = TaskControl { stop_after_pages: Some(stop), ..Default::default() };
        match run_match_task(&broken.matcher, TaskSpec::new(Scope::All), &control, &NoProgress).await {
            Err(MatcherError::Interrupted { .. }) => {}
            other => panic!("expected an interruption, got {other:?}"),
        }
    }
    let s = run_match_task(&broken.matcher, TaskSpec::new(Scope::All), &TaskControl::default(), &NoProgress)
        .await
        .expect("resumed");
    assert_eq!(s.state, TaskState::Succeeded);
    assert_eq!(all_matches(&broken.stores).await, expected);
    // Every task ended; nothing is left running.
    let running = broken.stores.tasks.list_tasks(Some(TaskState::Running), None, 0, 10).await.unwrap();
    assert!(running.is_empty(), "{running:?}");

    // A second run "new since the last run" finds no new pages and changes nothing.
    let s =
        run_match_task(&broken.matcher, TaskSpec::new(Scope::NewSinceLastRun), &TaskControl::default(), &NoProgress)
            .await
            .expect("incremental");
    assert_eq!(s.pages, 0);
    assert_eq!(all_matches(&broken.stores).await, expected);
}

/// Cancels its run once `after` of the 20 pages are done (counting earlier runs).
struct CancelAfter {
    cancel: Arc<AtomicBool>,
    after: u64,
}

impl ProgressSink for CancelAfter {
    fn update(&self, p: &TaskProgress) {
        // `total` counts the works too, which come first.
        if p.done >= p.total.saturating_sub(20) + self.after {
            self.cancel.store(true, Ordering::SeqCst);
        }
    }
}

/// Without a page limit a task records one batch while it verifies the next (whose
/// page keys are then already written): a run cancelled there, and
/// resumed, still ends with the matches of an uninterrupted run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn cancelled_between_verifying_and_recording_and_resumed_gives_the_same_matches() {
    let c = classics();
    let expected = uninterrupted_matches(&c).await;

    let broken = populated(&c).await;
    // Mid-batch, at a batch's end, and in the last batch (batches of 4 pages).
    for after in [6u64, 12, 17] {
        let control = TaskControl::default();
        let sink = CancelAfter { cancel: control.cancel.clone(), after };
        match run_match_task(&broken.matcher, TaskSpec::new(Scope::All), &control, &sink).await {
            Err(MatcherError::Interrupted { .. }) => {}
            other => panic!("expected an interruption after {after} pages, got {other:?}"),
        }
        let task = broken.stores.tasks.list_tasks(Some(TaskState::Running), None, 0, 10).await.unwrap();
        let progress = task.first().map(|t| t.progress).expect("the interrupted task");
        let pages_checkpointed = progress.done - (progress.total - 20);
        assert!(pages_checkpointed < 20, "interrupted after {after}: {task:?}");
        if after == 6 {
            // The batch after the interrupted one was verified: its pages are in the
            // page namespace, beyond the checkpoint.
            let stats = broken.matcher.index().stats().await.unwrap();
            let indexed = stats.namespace(zhiwen_index::Namespace::Pages).documents;
            assert!(indexed > pages_checkpointed + 4, "{indexed} pages indexed, {progress:?}");
        }
    }
    let s = run_match_task(&broken.matcher, TaskSpec::new(Scope::All), &TaskControl::default(), &NoProgress)
        .await
        .expect("resumed");
    assert_eq!(s.state, TaskState::Succeeded);
    assert_eq!(all_matches(&broken.stores).await, expected);
}

/// Holds its run in its first progress report until released.
struct HoldAtFirstReport {
    started: std::sync::mpsc::Sender<()>,
    release: Arc<AtomicBool>,
}

impl ProgressSink for HoldAtFirstReport {
    fn update(&self, _: &TaskProgress) {
        if self.started.send(()).is_ok() {
            while !self.release.load(Ordering::SeqCst) {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
        }
    }
}

/// One process may run the tasks of several stores, whose task ids overlap: a task
/// running for one store neither stops an interrupted task of another store (with the
/// same id) from being resumed, nor is taken over itself.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_running_for_another_store_with_the_same_id_does_not_block_resuming() {
    let c = classics();
    let here = populated(&c).await;
    let control = TaskControl { stop_after_pages: Some(3), ..Default::default() };
    let interrupted = run_match_task(&here.matcher, TaskSpec::new(Scope::All), &control, &NoProgress).await;
    let Err(MatcherError::Interrupted { task_id }) = interrupted else { panic!("{interrupted:?}") };

    // The other store's task runs on a runtime of its own, as another worker loop of
    // the process would, and is held mid-task (a blocked thread of this runtime could
    // hold up tasks queued behind it).
    let (started, started_rx) = std::sync::mpsc::channel();
    let release = Arc::new(AtomicBool::new(false));
    let sink = HoldAtFirstReport { started, release: release.clone() };
    let other_corpus = c.clone();
    let held = std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("runtime");
        rt.block_on(async move {
            let elsewhere = populated(&other_corpus).await;
            let s = run_match_task(&elsewhere.matcher, TaskSpec::new(Scope::All), &TaskControl::default(), &sink).await;
            (s, all_matches(&elsewhere.stores).await)
        })
    });
    tokio::task::spawn_blocking(move || started_rx.recv()).await.unwrap().expect("the other task started");

    let resumed = run_match_task(&here.matcher, TaskSpec::new(Scope::All), &TaskControl::default(), &NoProgress)
        .await
        .expect("resumed while the other store's task runs");
    assert_eq!(resumed.state, TaskState::Succeeded);
    let interrupted = here.stores.tasks.get_task(task_id).await.unwrap().expect("the interrupted task");
    assert_eq!(interrupted.state, TaskState::Succeeded, "resumed first: {interrupted:?}");

    release.store(true, Ordering::SeqCst);
    let (other, other_matches) = tokio::task::spawn_blocking(move || held.join()).await.unwrap().unwrap();
    let other = other.expect("the other store's task");
    assert_eq!((other.task_id, other.state, other.resumed), (task_id, TaskState::Succeeded, false), "same id");
    assert_eq!(all_matches(&here.stores).await, other_matches);
}

/// The arrival path: pages stored after the last run, here imported with fetch times long
/// past (an archive), are matched by the next task "new since the last run" (what a
/// stored page or an imported archive queues), and the arrivals end with exactly the
/// matches of one task over everything.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pages_stored_after_the_last_run_are_new_whatever_their_fetch_time() {
    let c = classics();
    let expected = uninterrupted_matches(&c).await;

    let e = registered(&c).await;
    let worker = zhiwen_matcher::task::worker_name();
    let mut next = 0;
    for burst in [0usize, 7, 6, 7] {
        for i in next..next + burst {
            e.stores.pages.upsert_page(&numbered_page(&c, i)).await.unwrap();
        }
        next += burst;
        let queued = zhiwen_matcher::task::enqueue_arrival(&e.matcher).await.expect("queued");
        let s = zhiwen_matcher::task::run_next_task(&e.matcher, &worker, &TaskControl::default(), &NoProgress)
            .await
            .expect("run")
            .expect("the queued task");
        assert_eq!((s.task_id, s.state), (queued.id, TaskState::Succeeded));
        assert_eq!(s.pages, burst as u64, "each arrival matches its own pages, not every page again");
    }
    assert_eq!(all_matches(&e.stores).await, expected);
}
