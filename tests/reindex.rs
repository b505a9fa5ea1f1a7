//! `zhiwen reindex` on the real binary: a Redis index that lost its data is rebuilt from
//! the store (pages analysed again from their stored texts), and a work registered afterwards finds the pages
//! matched before the loss (the reverse direction reads the page namespace only) exactly
//! as if nothing had been lost.

mod common;

use std::path::Path;

use common::*;
use zhiwen_testkit::redis::RedisServer;

fn on_redis(data: &Path, redis: &str, prefix: &str, args: &[&str]) -> String {
    let mut c = zhiwen(data);
    c.args(["--index", "redis", "--redis-url", redis, "--redis-prefix", prefix]).args(args);
    run_ok(c)
}

/// Pages first (matched against no work: they are fingerprinted and enter the page
/// namespace under `prefix`), then the index is read under `then_prefix` (another prefix
/// is an index that lost everything), optionally rebuilt, and the works are registered
/// and matched: the reverse direction.
fn pages_then_works(root: &Path, name: &str, redis: &str, then_prefix: &str, reindex: bool) -> String {
    let (works, pages) = write_inputs(&root.join(name));
    let data = root.join(name).join("data");
    std::fs::write(data.with_extension("toml"), "[matcher]\nbatch_size = 4\nconcurrency = 2\n").expect("config");
    on_redis(&data, redis, name, &["import", "pages", pages.to_str().expect("utf-8")]);
    on_redis(&data, redis, name, &["match"]);
    let rebuilt = if reindex { on_redis(&data, redis, then_prefix, &["reindex"]) } else { String::new() };
    on_redis(&data, redis, then_prefix, &["import", "works", works.to_str().expect("utf-8"), "--owner", "reindex"]);
    on_redis(&data, redis, then_prefix, &["match"]);
    rebuilt
}

#[test]
fn reindex_after_the_index_is_lost_gives_the_matches_of_an_index_never_lost() {
    let Some(redis) = RedisServer::start() else { return };
    let url = redis.url();
    let root = tempfile::tempdir().expect("tempdir");
    for name in ["kept", "lost", "rebuilt"] {
        std::fs::create_dir_all(root.path().join(name)).expect("dir");
    }

    pages_then_works(root.path(), "kept", &url, "kept", false);
    let expected = match_set(&root.path().join("kept").join("data"));
    assert!(expected.len() >= 15, "the reverse direction found {} copies", expected.len());

    // The control: without a rebuild, the pages matched before the loss are not found.
    pages_then_works(root.path(), "lost", &url, "lost-empty", false);
    assert!(match_set(&root.path().join("lost").join("data")).is_empty());

    let out = pages_then_works(root.path(), "rebuilt", &url, "rebuilt-empty", true);
    let pages =
        std::fs::read_to_string(root.path().join("rebuilt").join("pages.jsonl")).expect("pages").lines().count();
    assert!(out.contains(&format!("page: {pages} documents")), "{out}");
    let rebuilt = match_set(&root.path().join("rebuilt").join("data"));
    assert_eq!(rebuilt.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>());
    assert!(rebuilt == expected, "the same copies, with different scores or evidence");
}
