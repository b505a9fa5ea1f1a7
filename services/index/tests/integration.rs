//! The one integration-test binary of zhiwen-index (one binary links once; modules per
//! resource). The conformance suite runs against the embedded index always and against
//! real redis-server instances started by zhiwen-testkit (standalone and one-node
//! cluster); those are skipped when redis-server is missing, unless
//! `ZHIWEN_REQUIRE_SERVERS=1`, which makes them fail instead.

#[path = "integration/common.rs"]
mod common;
#[path = "integration/conformance.rs"]
mod conformance;
#[path = "integration/embedded.rs"]
mod embedded;
#[path = "integration/faults.rs"]
mod faults;
#[path = "integration/rebuild.rs"]
mod rebuild;
#[path = "integration/redis.rs"]
mod redis;
