//! zhiwen-ingest (being built).
