//! Starts a MongoDB-wire-compatible server (SecantusDB) for tests.
