-- zhiwen embedded store, schema version 1.
-- Applied by `zhiwen migrate` (and automatically when the embedded store is opened),
-- inside one transaction, and recorded in schema_migrations.
-- Times are Unix milliseconds; 64-bit hashes are stored as signed integers;
-- texts and bodies are raw-deflate-compressed BLOBs.

CREATE TABLE works (
    id            INTEGER PRIMARY KEY,
    owner         TEXT    NOT NULL,
    external_id   TEXT    NOT NULL,
    title         TEXT    NOT NULL,
    author        TEXT    NOT NULL,
    source_file   TEXT,
    charset       TEXT,
    text_z        BLOB    NOT NULL,
    section_count INTEGER NOT NULL,
    content_hash  INTEGER NOT NULL,
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL,
    UNIQUE (owner, external_id)
);

CREATE TABLE sections (
    id         INTEGER PRIMARY KEY,
    work_id    INTEGER NOT NULL REFERENCES works(id) ON DELETE CASCADE,
    ordinal    INTEGER NOT NULL CHECK (ordinal >= 0),
    title      TEXT    NOT NULL,
    text_z     BLOB    NOT NULL,
    char_start INTEGER NOT NULL,
    char_end   INTEGER NOT NULL,
    UNIQUE (work_id, ordinal)
);

CREATE TABLE sites (
    host       TEXT PRIMARY KEY,
    page_count INTEGER NOT NULL DEFAULT 0,
    first_seen INTEGER NOT NULL,
    last_seen  INTEGER NOT NULL,
    notes      TEXT
) WITHOUT ROWID;

CREATE TABLE pages (
    id               INTEGER PRIMARY KEY,
    url              TEXT    NOT NULL UNIQUE,
    site             TEXT    NOT NULL REFERENCES sites(host),
    first_fetched_at INTEGER NOT NULL,
    last_fetched_at  INTEGER NOT NULL,
    http_status      INTEGER,
    charset          TEXT,
    body_z           BLOB    NOT NULL,
    text_z           BLOB    NOT NULL,
    content_hash     INTEGER NOT NULL,
    source           TEXT    NOT NULL
);
CREATE INDEX pages_site ON pages(site, id);

CREATE TABLE fingerprints (
    kind         TEXT    NOT NULL CHECK (kind IN ('section', 'page')),
    subject_id   INTEGER NOT NULL,
    params_tag   TEXT    NOT NULL,
    data         BLOB    NOT NULL,
    updated_at   INTEGER NOT NULL,
    PRIMARY KEY (kind, subject_id)
) WITHOUT ROWID;
CREATE INDEX fingerprints_tag ON fingerprints(kind, params_tag, subject_id);

CREATE TABLE matches (
    id            INTEGER PRIMARY KEY,
    section_id    INTEGER NOT NULL REFERENCES sections(id) ON DELETE CASCADE,
    work_id       INTEGER NOT NULL,
    page_id       INTEGER NOT NULL REFERENCES pages(id) ON DELETE CASCADE,
    site          TEXT    NOT NULL,
    kind          TEXT    NOT NULL,
    score         REAL    NOT NULL,
    duplicate     INTEGER NOT NULL,
    comparison    TEXT    NOT NULL,
    comparison_hash INTEGER NOT NULL,
    first_seen    INTEGER NOT NULL,
    first_day     TEXT    NOT NULL,
    last_seen     INTEGER NOT NULL,
    status        TEXT    NOT NULL CHECK (status IN ('new', 'confirmed', 'dismissed', 'takedown_sent')),
    UNIQUE (section_id, page_id)
);
CREATE INDEX matches_page ON matches(page_id);
CREATE INDEX matches_work ON matches(work_id, id);
CREATE INDEX matches_site ON matches(site, id);
CREATE INDEX matches_status ON matches(status, id);

CREATE TABLE match_reviews (
    match_id INTEGER NOT NULL REFERENCES matches(id) ON DELETE CASCADE,
    seq      INTEGER NOT NULL,
    by_whom  TEXT    NOT NULL,
    at       INTEGER NOT NULL,
    from_status TEXT NOT NULL,
    to_status   TEXT NOT NULL,
    note     TEXT,
    PRIMARY KEY (match_id, seq)
) WITHOUT ROWID;

CREATE TABLE tasks (
    id          INTEGER PRIMARY KEY,
    key         TEXT    NOT NULL UNIQUE,
    kind        TEXT    NOT NULL,
    params      TEXT    NOT NULL,
    state       TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'succeeded', 'failed', 'cancelled')),
    done        INTEGER NOT NULL DEFAULT 0,
    total       INTEGER NOT NULL DEFAULT 0,
    failed      INTEGER NOT NULL DEFAULT 0,
    checkpoint  TEXT,
    worker      TEXT,
    error       TEXT,
    created_at  INTEGER NOT NULL,
    started_at  INTEGER,
    finished_at INTEGER,
    updated_at  INTEGER NOT NULL
);
CREATE INDEX tasks_state ON tasks(state, kind, id);
