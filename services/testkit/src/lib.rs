//! Test support for zhiwen's integration tests: starts REAL servers (a MongoDB-wire
//! server, Debian's `redis-server` and an SMTP server) as child processes on free
//! loopback ports and stops them when dropped. Never used by production code; never
//! mocks a store or a relay.
//!
//! Servers are found through environment variables set by `scripts/test.sh`
//! (`ZHIWEN_SECANTUSD`, `ZHIWEN_REDIS_SERVER`, `ZHIWEN_SMTPD_PYTHON`), falling back to
//! `PATH` or the repository's `.test-servers/venv`. When a server is missing,
//! [`require_servers`] decides: with `ZHIWEN_REQUIRE_SERVERS=1` (as in CI and the
//! README's test command) the test fails; otherwise it is skipped with a message.

use std::net::TcpListener;

pub mod corpus;
pub mod mongo;
pub mod redis;
pub mod site;
pub mod smtp;

/// A free TCP port on 127.0.0.1 (bound and released; the server binds it next).
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").and_then(|l| l.local_addr()).map(|a| a.port()).expect("no free loopback port")
}

/// Must tests that need a server fail (rather than skip) when it is unavailable?
pub fn require_servers() -> bool {
    std::env::var("ZHIWEN_REQUIRE_SERVERS").is_ok_and(|v| v == "1" || v.eq_ignore_ascii_case("true"))
}

/// Handle an unavailable server: panic when servers are required, else print and
/// return `None` so the caller can skip.
pub fn unavailable<T>(what: &str, why: &str) -> Option<T> {
    if require_servers() {
        panic!("{what} is required (ZHIWEN_REQUIRE_SERVERS=1) but unavailable: {why}");
    }
    eprintln!("skipping: {what} unavailable ({why}); run scripts/test.sh to install it");
    None
}
