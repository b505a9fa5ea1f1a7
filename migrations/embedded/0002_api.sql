-- zhiwen embedded store, schema version 2: the admin API.
-- API keys (only the SHA-256 of each secret is stored) and the indexes behind the
-- dashboard's sorted match listings, work lists per owner and page searches by date.

CREATE TABLE api_keys (
    id         INTEGER PRIMARY KEY,
    hash       TEXT    NOT NULL UNIQUE,
    prefix     TEXT    NOT NULL,
    name       TEXT    NOT NULL,
    role       TEXT    NOT NULL CHECK (role IN ('admin', 'analyst', 'holder')),
    owner      TEXT,
    created_at INTEGER NOT NULL,
    expires_at INTEGER,
    revoked_at INTEGER
);

CREATE INDEX matches_last_seen ON matches(last_seen, id);
CREATE INDEX matches_first_seen ON matches(first_seen, id);
CREATE INDEX matches_score ON matches(score, id);
CREATE INDEX matches_first_day ON matches(first_day);
CREATE INDEX pages_fetched ON pages(last_fetched_at, id);
