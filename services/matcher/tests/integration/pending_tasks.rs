use zhiwen_matcher::task::{run_match_task, NoProgress, Scope, TaskControl, TaskSpec};
use zhiwen_matcher::{MatcherConfig, MatcherError};
use zhiwen_store::{NewTask, TaskState};

use crate::support::*;

/// The four bundled chapters registered, and 16 pages: excerpts of them inside news
/// stories, and innocent pages (unregistered chapters, news).
async fn populated() -> Env {
    let e = env(MatcherConfig { batch_size: 4, concurrency: 2, ..Default::default() }).await;
    let works = bundled("works/classics.jsonl");
    let sections: Vec<(&str, &str)> = works.iter().map(|(id, t)| (id.as_str(), t.as_str())).collect();
    e.stores.works.upsert_work(&work("CLASSICS", "四大名著 第一回", &sections)).await.expect("work");
    let others: Vec<String> = bundled("site/unregistered.jsonl").into_iter().map(|(_, t)| t).collect();
    let news: Vec<String> = bundled("site/filler.jsonl").into_iter().map(|(_, t)| t).collect();
    for i in 0..16usize {
        let text = if i % 3 == 0 {
            let (_, chapter) = &works[i / 3 % works.len()];
            format!("{}{}{}", news[i % news.len()], chars(chapter, 300, 1200), news[(i + 1) % news.len()])
        } else {
            chars(&others[i % others.len()], (i / 3 % 4) * 1400, 1500)
        };
        e.stores.pages.upsert_page(&text_page(&format!("http://s{}.example/{i}", i % 2), &text)).await.expect("page");
    }
    e
}

/// The matching tasks in the store: (state, key).
async fn match_tasks(e: &Env) -> Vec<(TaskState, String)> {
    let all = e.stores.tasks.list_tasks(None, None, 0, 100).await.expect("tasks");
    all.into_iter().filter(|t| t.kind == "match").map(|t| (t.state, t.key)).collect()
}

/// A run stopped mid-task leaves its task to the next run of the same request, which
/// resumes it instead of queueing another: after three interrupted runs the fourth
/// finishes the one task, and no other pass runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn interrupted_runs_leave_one_task_which_the_next_run_finishes() {
    let whole = populated().await;
    let s = run_match_task(&whole.matcher, TaskSpec::new(Scope::NewSinceLastRun), &TaskControl::default(), &NoProgress)
        .await
        .expect("uninterrupted");
    let expected = all_matches(&whole.stores).await;
    assert!(expected.len() >= 4, "{s:?} {expected:?}");

    let e = populated().await;
    for stop in [3u64, 6, 2] {
        let control = TaskControl { stop_after_pages: Some(stop), ..Default::default() };
        match run_match_task(&e.matcher, TaskSpec::new(Scope::NewSinceLastRun), &control, &NoProgress).await {
            Err(MatcherError::Interrupted { .. }) => {}
            other => panic!("expected an interruption, got {other:?}"),
        }
        assert_eq!(match_tasks(&e).await.len(), 1, "one task for the one request: {:?}", match_tasks(&e).await);
    }
    let s = run_match_task(&e.matcher, TaskSpec::new(Scope::NewSinceLastRun), &TaskControl::default(), &NoProgress)
        .await
        .expect("resumed");
    assert!(s.resumed, "{s:?}");
    let tasks = match_tasks(&e).await;
    assert_eq!(tasks.len(), 1, "{tasks:?}");
    assert_eq!(tasks[0].0, TaskState::Succeeded);
    assert_eq!(all_matches(&e.stores).await, expected);
}

/// A run refused because a live worker (a server, another host) is running a matching
/// task leaves nothing queued behind, whatever its scope.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_refused_by_a_live_worker_leaves_nothing_queued() {
    let e = populated().await;
    let params = serde_json::json!({"scope": {"scope": "all"}, "since": null});
    let (task, _) = e
        .stores
        .tasks
        .create_task(&NewTask { key: "match:server".into(), kind: "match".into(), params })
        .await
        .expect("task");
    let claimed = e.stores.tasks.claim_task(Some("match"), "a-server-host/4242/1").await.expect("claim");
    assert_eq!(claimed.map(|t| t.id), Some(task.id));
    for scope in [Scope::NewSinceLastRun, Scope::All] {
        match run_match_task(&e.matcher, TaskSpec::new(scope), &TaskControl::default(), &NoProgress).await {
            Err(MatcherError::AlreadyRunning { task_id, .. }) => assert_eq!(task_id, task.id),
            other => panic!("expected a refusal, got {other:?}"),
        }
    }
    assert_eq!(match_tasks(&e).await, vec![(TaskState::Running, "match:server".to_owned())]);
}

/// A task "new since the last run" queued before the one ahead of it ran (as an arrival
/// queued while a task runs is) takes only what that one left: its scope is resolved
/// when it starts, not when it was queued, and kept for a resumed run.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_queued_behind_another_takes_only_what_that_one_left() {
    use zhiwen_matcher::task::{enqueue, run_next_task};
    let e = populated().await;
    let spec = |k: &str| TaskSpec { scope: Scope::NewSinceLastRun, key: Some(k.into()) };
    let first = enqueue(&e.matcher, &spec("match:arrival:1")).await.expect("queued");
    let second = enqueue(&e.matcher, &spec("match:arrival:2")).await.expect("queued");
    assert_ne!(first.id, second.id);
    let a = run_next_task(&e.matcher, "w", &TaskControl::default(), &NoProgress).await.expect("runs").expect("a task");
    assert_eq!((a.task_id, a.pages), (first.id, 16), "{a:?}");
    // One page arrives after the first task started.
    let (_, news) = bundled("site/filler.jsonl").swap_remove(0);
    e.stores.pages.upsert_page(&text_page("http://s9.example/late", &news)).await.expect("page");
    let b = run_next_task(&e.matcher, "w", &TaskControl::default(), &NoProgress).await.expect("runs").expect("a task");
    assert_eq!((b.task_id, b.pages), (second.id, 1), "only the page stored after the first task began: {b:?}");
    assert!(run_next_task(&e.matcher, "w", &TaskControl::default(), &NoProgress).await.expect("runs").is_none());
}
