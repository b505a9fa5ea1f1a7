-- zhiwen embedded store, schema version 12: evidence of captured pages. Each capture is
-- a leaf of an append-only Merkle log (computed by zhiwen-evidence): its record is kept
-- byte for byte under a dense leaf index (0, 1, 2, ...), with the files it lists and the
-- log's signed tree heads. The files' bytes are not in the database: they live under
-- the data directory, evidence/files/<first 2 hex>/<sha256>, written once. Captures stay
-- forever; retention deletes their files and sets pruned_at.

CREATE TABLE IF NOT EXISTS captures (
    id          INTEGER PRIMARY KEY,
    key         TEXT    NOT NULL UNIQUE,
    leaf_index  INTEGER NOT NULL UNIQUE CHECK (leaf_index >= 0),
    match_id    INTEGER NOT NULL,
    page_id     INTEGER NOT NULL,
    url         TEXT    NOT NULL,
    captured_at INTEGER NOT NULL,
    reason      TEXT    NOT NULL,
    record      BLOB    NOT NULL,
    pruned_at   INTEGER
);
CREATE INDEX IF NOT EXISTS captures_match ON captures(match_id, leaf_index);
CREATE INDEX IF NOT EXISTS captures_unpruned ON captures(captured_at) WHERE pruned_at IS NULL;

CREATE TABLE IF NOT EXISTS capture_files (
    capture_id INTEGER NOT NULL REFERENCES captures(id),
    ordinal    INTEGER NOT NULL,
    name       TEXT    NOT NULL,
    media_type TEXT    NOT NULL,
    size       INTEGER NOT NULL,
    sha256     TEXT    NOT NULL,
    PRIMARY KEY (capture_id, ordinal)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS capture_files_sha256 ON capture_files(sha256);

CREATE TABLE IF NOT EXISTS tree_heads (
    size         INTEGER PRIMARY KEY,
    timestamp_ms INTEGER NOT NULL,
    head         TEXT    NOT NULL
);
CREATE INDEX IF NOT EXISTS tree_heads_time ON tree_heads(timestamp_ms, size);
