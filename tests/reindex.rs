//! `zhiwen reindex` on the real binary: a Redis index that lost its data is refused by
//! matching (never trusted: it would miss copies and report success), rebuilt from the
//! store (pages analysed again from their stored texts), and then matching finds exactly
//! what an index never lost finds, in both directions.

use std::path::Path;

use crate::common::*;
use zhiwen_testkit::redis::RedisServer;

fn redis_command(data: &Path, redis: &str, prefix: &str, args: &[&str]) -> std::process::Command {
    let mut c = zhiwen(data);
    c.args(["--index", "redis", "--redis-url", redis, "--redis-prefix", prefix]).args(args);
    c
}

fn on_redis(data: &Path, redis: &str, prefix: &str, args: &[&str]) -> String {
    run_ok(redis_command(data, redis, prefix, args))
}

/// `zhiwen match` refused: exit status 1, one line on stderr saying to reindex.
fn refused_match(data: &Path, redis: &str, prefix: &str) {
    let o = redis_command(data, redis, prefix, &["match"]).output().expect("zhiwen runs");
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("zhiwen reindex") && err.contains("not the one this store was indexed into"), "{err}");
    assert!(!String::from_utf8_lossy(&o.stdout).contains("Succeeded"), "reported success");
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
    if reindex || then_prefix == name {
        on_redis(&data, redis, then_prefix, &["match"]);
    } else {
        refused_match(&data, redis, then_prefix);
    }
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

    // Without a rebuild, matching against the emptied index is refused and records nothing.
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

/// The index loses its data in the middle of a task (the process dies, Redis restarts
/// without persistence): the next `zhiwen match` is refused instead of matching the rest
/// of the pages against an empty index and reporting success; after `zhiwen reindex`, the
/// resumed task ends with exactly the matches of a run that lost nothing.
#[test]
fn an_index_that_comes_back_empty_is_refused_until_rebuilt() {
    let Some(redis) = RedisServer::start() else { return };
    let url = redis.url();
    let root = tempfile::tempdir().expect("tempdir");
    let (works, pages) = write_inputs(root.path());
    let kept = prepared(root.path(), "kept", &works, &pages);
    on_redis(&kept, &url, "kept", &["match"]);
    let expected = match_set(&kept);
    assert!(expected.len() >= 15, "{} matches", expected.len());

    let lost = prepared(root.path(), "lost", &works, &pages);
    let mut c = redis_command(&lost, &url, "lost", &["match"]);
    c.env(zhiwen_matcher::task::ABORT_ENV, "6");
    let o = c.output().expect("zhiwen runs");
    assert!(!o.status.success(), "the task was to abort after 6 pages");
    let partial = match_set(&lost);
    assert!(partial.len() < expected.len(), "the task stopped half way ({} matches)", partial.len());
    assert_eq!(redis.command(&["FLUSHALL"]).as_deref(), Ok("OK"));

    refused_match(&lost, &url, "lost");
    refused_match(&lost, &url, "lost");
    assert_eq!(match_set(&lost), partial, "a refused run records nothing");
    // One namespace cannot be rebuilt into an index that lost the other.
    let o = redis_command(&lost, &url, "lost", &["reindex", "--only", "pages"]).output().expect("zhiwen runs");
    assert_eq!(o.status.code(), Some(1), "{}", String::from_utf8_lossy(&o.stderr));
    refused_match(&lost, &url, "lost");

    on_redis(&lost, &url, "lost", &["reindex"]);
    let out = on_redis(&lost, &url, "lost", &["match"]);
    assert!(out.contains("Succeeded"), "{out}");
    let got = match_set(&lost);
    assert_eq!(got.keys().collect::<Vec<_>>(), expected.keys().collect::<Vec<_>>(), "same (section, page) pairs");
    assert!(got == expected, "the same copies, with different scores or evidence");
}

/// The `section: N documents, K keys indexed` line of `zhiwen reindex`: K.
fn section_keys(out: &str) -> u64 {
    let line = out.lines().find(|l| l.starts_with("section: ")).unwrap_or_else(|| panic!("no section line: {out}"));
    let keys = line.split(", ").nth(1).and_then(|k| k.split(' ').next()).and_then(|k| k.parse().ok());
    keys.unwrap_or_else(|| panic!("no key count: {line}"))
}

/// A store and index written with every key of every section (the default
/// `section_index_sampling = 1`) keep finding the same copies when the sampled layout is
/// switched on (`8`), before and after `zhiwen reindex` moves the sections to it (an
/// eighth of their winnowed keys, nothing else); the lowered setting afterwards still
/// reads the sampled index right (the store records its layout).
#[test]
fn sections_move_to_the_sampled_layout_with_reindex_and_find_the_same_copies() {
    let Some(redis) = RedisServer::start() else { return };
    let url = redis.url();
    let root = tempfile::tempdir().expect("tempdir");
    let (works, pages) = write_inputs(root.path());
    let every = "section_index_sampling = 1\n";

    let old = prepared_with(root.path(), "old", &works, &pages, every);
    on_redis(&old, &url, "old", &["match"]);
    let expected = match_set(&old);
    assert!(expected.len() >= 15, "{} matches", expected.len());
    let all_keys = section_keys(&on_redis(&old, &url, "old", &["reindex", "--only", "sections"]));

    // Sampled lookups on the full index: pages matched again find the same copies.
    let config = old.with_extension("toml");
    let sampled = "[matcher]\nbatch_size = 4\nconcurrency = 2\nsection_index_sampling = 8\n";
    std::fs::write(&config, sampled).expect("config");
    on_redis(&old, &url, "old", &["match", "--all"]);
    assert!(match_set(&old) == expected, "the full layout looked up sampled");

    let sampled_keys = section_keys(&on_redis(&old, &url, "old", &["reindex", "--only", "sections"]));
    assert!(sampled_keys * 6 < all_keys, "{sampled_keys} keys sampled of {all_keys}");
    on_redis(&old, &url, "old", &["match", "--all"]);
    assert!(match_set(&old) == expected, "the sampled layout");

    // Lowered again without a rebuild: lookups still sample as the index was written.
    std::fs::write(&config, format!("[matcher]\nbatch_size = 4\nconcurrency = 2\n{every}")).expect("config");
    on_redis(&old, &url, "old", &["match", "--all"]);
    assert!(match_set(&old) == expected, "the sampled layout read with the setting lowered");
}

/// The files of the embedded index of `data` (the database and its WAL, when there is one).
fn index_files(data: &Path) -> Vec<std::path::PathBuf> {
    ["index.sqlite", "index.sqlite-wal", "index.sqlite-shm"].iter().map(|f| data.join(f)).collect()
}

/// An index restored from an earlier copy (of the embedded index's file here; a Redis
/// restarted from an earlier snapshot is the same case) keeps its identity but lacks what
/// was written since: matching is refused instead of missing the copies of the works
/// indexed since, and after `zhiwen reindex` it finds what an index never restored finds.
#[test]
fn an_index_restored_from_an_earlier_copy_is_refused_until_rebuilt() {
    let root = tempfile::tempdir().expect("tempdir");
    let (works, pages) = write_inputs(root.path());
    let text = std::fs::read_to_string(&works).expect("works");
    let lines: Vec<&str> = text.lines().collect();
    let (first, second) = (root.path().join("first.jsonl"), root.path().join("second.jsonl"));
    std::fs::write(&first, lines[..9].join("\n") + "\n").expect("first works");
    std::fs::write(&second, lines[9..].join("\n") + "\n").expect("second works");
    let run = |data: &Path, args: &[&str]| {
        let mut c = zhiwen(data);
        c.args(args);
        run_ok(c)
    };
    let path = |p: &Path| p.to_str().expect("utf-8").to_owned();
    let [kept, restored] = ["kept", "restored"].map(|name| root.path().join(name));
    let saved = root.path().join("saved");
    std::fs::create_dir_all(&saved).expect("dir");
    for data in [&kept, &restored] {
        std::fs::write(data.with_extension("toml"), "[matcher]\nbatch_size = 4\nconcurrency = 2\n").expect("config");
        run(data, &["import", "works", &path(&first), "--owner", "restore"]);
        run(data, &["match"]);
        if data == &restored {
            // A copy of the index as it is now (the process closed it).
            for (from, to) in index_files(data).iter().zip(index_files(&saved)) {
                if from.exists() {
                    std::fs::copy(from, to).expect("copy the index");
                }
            }
        }
        run(data, &["import", "works", &path(&second), "--owner", "restore"]);
        run(data, &["import", "pages", &path(&pages)]);
        run(data, &["match"]);
    }
    let expected = match_set(&kept);
    assert!(expected.len() >= 10, "{} matches", expected.len());
    assert_eq!(match_set(&restored), expected);

    // The earlier copy put back: its identity is the store's, its generation is not.
    for (from, to) in index_files(&saved).iter().zip(index_files(&restored)) {
        let _ = std::fs::remove_file(&to);
        if from.exists() {
            std::fs::copy(from, &to).expect("restore the index");
        }
    }
    let o = {
        let mut c = zhiwen(&restored);
        c.args(["match", "--all"]);
        c.output().expect("zhiwen runs")
    };
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("older than this store's record") && err.contains("zhiwen reindex"), "{err}");
    assert!(!String::from_utf8_lossy(&o.stdout).contains("Succeeded"), "reported success");

    run(&restored, &["reindex"]);
    run(&restored, &["match", "--all"]);
    assert_eq!(match_set(&restored), expected);
}
