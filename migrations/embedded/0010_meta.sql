-- zhiwen embedded store, schema version 10: small named values kept beside the data.
-- The first is the identity of the candidate index the store was indexed into, so that
-- an index that comes back empty (or another deployment's) is noticed, never trusted.

CREATE TABLE IF NOT EXISTS meta (
    name       TEXT PRIMARY KEY,
    value      TEXT NOT NULL,
    updated_at INTEGER NOT NULL
);
