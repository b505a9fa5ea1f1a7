//! Starts Debian's redis-server for tests.
